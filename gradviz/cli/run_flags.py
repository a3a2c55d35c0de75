"""`gradviz run`'s flags and the RunSettings they make; a flag that cannot work is refused."""

from __future__ import annotations

import argparse
import os

from gradviz.cli.usage import FRAMEWORK_CHOICES, Parser, UsageError
from gradviz.model import (
    CHECKS,
    DEPTH_RANGE,
    DTYPES,
    GRAPHS,
    MODES,
    RunSettings,
    settings_texts,
)
from gradviz.plots.formats import FIGURE_FORMATS, suffixes_in_words

# the flags' defaults are RunSettings' (model), written out as the flags take them
DEFAULT = settings_texts(RunSettings())


def run_parser() -> argparse.ArgumentParser:
    p = Parser(prog="gradviz run", description="Run ops headless and report their gradients.")
    p.add_argument(
        "files",
        nargs="*",
        help="op files or module names, e.g. ops.py mypkg.quant_ops (built-in examples when none)",
    )
    p.add_argument(
        "--op",
        action="append",
        default=[],
        metavar="NAME",
        help="only this op (pairing name or Python name); repeatable",
    )
    p.add_argument("--framework", default="all", choices=FRAMEWORK_CHOICES)
    p.add_argument("--device", default=DEFAULT["device"], help="auto | cpu | cuda:N | /GPU:N")
    p.add_argument("--graph", default=DEFAULT["graph"], choices=GRAPHS)
    p.add_argument(
        "--depth",
        type=int,
        default=DEFAULT["depth"],
        help="layers of the stack graph (%d..%d; default %%(default)s)" % DEPTH_RANGE,
    )
    p.add_argument("--shape", default=DEFAULT["shape"], help="e.g. 200 or 4x50")
    p.add_argument("--dtype", default=DEFAULT["dtype"], choices=DTYPES)
    p.add_argument("--seed", type=int, default=DEFAULT["seed"])
    p.add_argument("--upstream", default=DEFAULT["upstream"], help="ones | random | const:K")
    p.add_argument(
        "--range",
        default=DEFAULT["range"],
        metavar="LO,HI",
        help="float inputs are drawn uniformly from [LO, HI) (default %(default)s)",
    )
    p.add_argument(
        "--modes", default=DEFAULT["modes"], help="comma-separated subset of " + ",".join(MODES)
    )
    p.add_argument(
        "--checks",
        default=DEFAULT["checks"] or "none",
        metavar="all|none|NAME,...",
        help="contract checks per op: " + ", ".join(CHECKS) + " (default: %(default)s)",
    )
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--npz", metavar="PATH")
    p.add_argument(
        "--repro",
        metavar="DIR",
        help="write a standalone reproduction script per op "
        "and framework into DIR (needs only the framework and numpy)",
    )
    p.add_argument(
        "--plot",
        metavar="PATH",
        help="PNG, SVG or PDF of the gradient grid (--graph stack: each op's flow "
        "chart too, beside it as STEM.flow-OP.EXT)",
    )
    p.add_argument(
        "--log-scale",
        action="store_true",
        help="--plot draws the values views as log10 |gradient| (zeros left out and "
        "counted), as the app's View > Log scale",
    )
    p.add_argument(
        "--timeout", type=float, default=DEFAULT["timeout"], help="seconds per op and framework"
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 on differs or non-finite, or a failed contract check",
    )
    p.add_argument("--quiet", action="store_true", help="only the summary table")
    p.add_argument(
        "--verbose",
        action="store_true",
        help="also show what the workers print themselves (framework start-up log lines)",
    )
    return p


def settings_from(args) -> RunSettings:
    """The run's settings from its flags, by the one settings schema's rule (the window's, the
    settings file's and the pytest plugin's): every flag that cannot run named at once."""
    from gradviz.app.settings_schema import RUN_FIELDS, SettingsError, run_settings
    from gradviz.engine.memory import memory_setting_problem

    wrong: list[str] = []
    try:
        settings = run_settings({name: getattr(args, name) for name in RUN_FIELDS})
    except SettingsError as exc:
        wrong = [f"--{m}" for m in exc.problems.values()]
    wrong += [p for p in [memory_setting_problem()] if p]
    if wrong:
        raise UsageError("gradviz run: " + "\n".join(wrong))
    if args.plot and os.path.splitext(args.plot)[1].lower() not in FIGURE_FORMATS:
        raise UsageError(f"--plot {args.plot}: the file must end in {suffixes_in_words()}")
    if args.log_scale and not args.plot:
        raise UsageError("--log-scale draws the --plot file: give --plot PATH too")
    return settings


def joined_range(argv: list[str]) -> list[str]:
    """`--range -6,6` as `--range=-6,6`: argparse takes a value starting with '-' for an option."""
    out, it = [], iter(argv)
    for a in it:
        out.append(f"--range={next(it, '')}" if a == "--range" else a)
    return out
