"""`gradviz` command line: the desktop app, and the headless `run`, `list`, `devices` commands.

Exit codes: 0 done; 2 bad usage or a file that cannot be loaded; 3 some run failed (error, crash,
timeout); with --strict, 1 when any verdict is `differs` or `non-finite` (unless the op's
@gradviz.op(expect=...) names it), or a contract check (--checks) failed.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading

from gradviz.errors import GradvizError
from gradviz.model import (
    CHECKS,
    DEPTH_RANGE,
    DTYPES,
    FRAMEWORKS,
    GRAPHS,
    MODES,
    RunSettings,
    parse_checks,
    parse_range,
    parse_shape,
    parse_upstream,
    settings_texts,
)
from gradviz.plots.formats import FIGURE_FORMATS, suffixes_in_words
from gradviz.vocab import CheckStatus, Framework

EXIT_OK, EXIT_STRICT, EXIT_USAGE, EXIT_FAILED = 0, 1, 2, 3


# plain strings: argparse names the choices with repr() when one is wrong
FRAMEWORK_CHOICES = (*(fw.value for fw in Framework), "all")
# the flags' defaults are RunSettings' (model), written out as the flags take them
DEFAULT = settings_texts(RunSettings())


class UsageError(GradvizError):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits with 2 by itself; keep one path for messages
        raise UsageError(f"{self.prog}: {message}")


def _run_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="gradviz run", description="Run ops headless and report their gradients.")
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
    try:
        shape = parse_shape(args.shape)
        parse_upstream(args.upstream)  # refused here as a bad shape or range is
        input_range = parse_range(args.range)
        checks = parse_checks(args.checks)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise UsageError(
            f"--modes {args.modes!r}: use a comma-separated subset of " + ",".join(MODES)
        )
    lo, hi = DEPTH_RANGE
    if not lo <= args.depth <= hi:
        raise UsageError(f"--depth {args.depth}: the stack graph takes {lo} to {hi} layers")
    from gradviz.cli.limits import problems
    from gradviz.engine.memory import memory_setting_problem

    wrong = problems(shape, args.dtype, args.seed, args.timeout)
    wrong += [p for p in [memory_setting_problem()] if p]
    if wrong:
        raise UsageError("gradviz run: " + "\n".join(wrong))
    if args.plot and os.path.splitext(args.plot)[1].lower() not in FIGURE_FORMATS:
        raise UsageError(f"--plot {args.plot}: the file must end in {suffixes_in_words()}")
    if args.log_scale and not args.plot:
        raise UsageError("--log-scale draws the --plot file: give --plot PATH too")
    return RunSettings(
        graph=args.graph,
        shape=shape,
        dtype=args.dtype,
        seed=args.seed,
        upstream=args.upstream,
        device=args.device,
        modes=modes,
        timeout=args.timeout,
        depth=args.depth,
        checks=checks,
        input_range=input_range,
    )


def _frameworks(choice: str) -> tuple[str, ...]:
    if choice == "all":
        return FRAMEWORKS
    if not Framework(choice).installed:
        fw = Framework(choice)
        raise UsageError(
            f"--framework {choice}: {fw.label} is not installed; add it with "
            f"pip install 'gradviz[{fw.extra}]'"
        )
    return (choice,)


def _files_or_examples(files: list[str]) -> list[str]:
    from gradviz.catalog import builtin_examples

    return _op_files(files) if files else builtin_examples()


def _op_files(args: list[str]) -> list[str]:
    """Paths, and dotted module names resolved to their files without importing anything."""
    from gradviz.module_files import ModuleNameError, OpFileError, check_op_file, op_file

    try:
        files = [op_file(a) for a in args]
        for f in files:  # a FIFO, /dev/zero, a huge file, a link loop: refused,
            if os.path.lexists(f):  # unread (a missing file is a load error, as before)
                check_op_file(f)
        return files
    except (ModuleNameError, OpFileError) as exc:
        raise UsageError(f"gradviz: {exc}") from None


def joined_range(argv: list[str]) -> list[str]:
    """`--range -6,6` as `--range=-6,6`: argparse takes a value starting with '-' for an option."""
    out, it = [], iter(argv)
    for a in it:
        out.append(f"--range={next(it, '')}" if a == "--range" else a)
    return out


def cmd_run(argv: list[str]) -> int:
    from gradviz.cli.output import print_load_errors, print_load_notes, print_results

    args = _run_parser().parse_args(joined_range(argv))
    settings = settings_from(args)
    frameworks = _frameworks(args.framework)
    files = _files_or_examples(args.files)
    from gradviz.cli.outputs import output_problems

    wrong = output_problems(
        [("--json", args.json), ("--npz", args.npz), ("--plot", args.plot)], files
    )
    if wrong:
        raise UsageError("gradviz run: " + "\n".join(wrong))

    from gradviz.catalog import label_results, pair_ops, requests_for, select
    from gradviz.cli.warm_up import WarmUp
    from gradviz.engine import Engine

    if args.verbose:  # TensorFlow's informational lines too, unless the user chose a level
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "0")
    with (
        WarmUp(plot=bool(args.plot)) as warm_up,
        Engine(frameworks, start=False, on_state=warm_up.on_state) as engine,
    ):
        if args.verbose:
            engine.follow_output(_echo_worker_line)
        engine.start()
        catalogs = engine.load(files, timeout=settings.timeout)
        load_failed = print_load_errors(catalogs)
        print_load_notes(catalogs)
        paired = pair_ops(catalogs)
        chosen, missing = select(paired, args.op)
        for name in missing:
            print(f"gradviz: no op named {name!r} in the given files", file=sys.stderr)
        requests = requests_for(chosen, frameworks, settings)
        if not requests:
            from gradviz.cli.output import print_left_out, print_skipped, write_load_report

            print_skipped(catalogs, sys.stderr)
            print_left_out(files, catalogs, frameworks, sys.stderr)
            # a report is complete on its own: the files that could not load are in it
            write_load_report(args, settings, [cat for cat in catalogs if cat.error is not None])
            print(
                "gradviz: nothing to run: no ops found"
                + (" (see the errors above)" if load_failed else ""),
                file=sys.stderr,
            )
            return EXIT_USAGE
        progress = None if args.quiet else _progress(len(requests))
        from gradviz.engine.passes import plan

        # one FULL pass: each op as asked, its checks inside it
        results = label_results(
            paired, engine.run_passes(requests, plan(requests, False, False), progress)
        )
        # the workers are killed and reaped (~0.1 s: TensorFlow's takes a while to go) while the
        # results are compared and written; leaving the block then finds them stopped
        closing = threading.Thread(target=engine.close, name="gradviz-close")
        closing.start()
        warm_up.join()  # its imports are done before this thread imports
        # the app's analysis: the verdicts and diagnostics the window shows for the same results
        from gradviz.app.analysis import analyze

        analyses = [analyze(r, curves=False) for r in results]
        for a in analyses:
            if a.problem:  # a bug in gradviz's comparison: say so, loudly
                raise RuntimeError(f"comparing {a.result.name} ({a.result.framework}): {a.problem}")
        comparisons = [a.comparison for a in analyses]
        failed_files = [cat for cat in catalogs if cat.error is not None]
        written = print_results(
            results,
            comparisons,
            settings,
            args,
            load_errors=failed_files,
            diagnostics=[list(a.findings) for a in analyses],
        )
    closing.join()
    if written != EXIT_OK:  # a report file could not be written
        return written
    if load_failed or missing:
        return EXIT_USAGE
    return _exit_code(results, comparisons, args.strict)


def _echo_worker_line(framework: str, line: str) -> None:
    print(f"[{framework} worker] {line}", file=sys.stderr, flush=True)


def _progress(total: int):
    """The run's events to stderr: a line per op's final result."""
    from gradviz.engine.passes import ResultArrived

    done = [0]

    def report(event) -> None:
        if not isinstance(event, ResultArrived) or event.partial:
            return
        result = event.result
        done[0] += 1
        mark = "ok" if result.status == "ok" else result.error.kind if result.error else "error"
        print(
            f"[{done[0]}/{total}] {result.framework:5} {result.name} ({mark}, "
            f"{result.elapsed:.1f} s)",
            file=sys.stderr,
            flush=True,
        )

    return report


def _exit_code(results, comparisons, strict: bool) -> int:
    if any(r.status != "ok" for r in results):
        return EXIT_FAILED
    # a verdict the op declares it is meant to get (@gradviz.op(expect=...): a gradient
    # reversal's differs) is not a failure
    if strict and any(
        t.verdict in ("differs", "non-finite")
        and t.verdict not in (r.op.expect if r.op is not None else ())
        for r, c in zip(results, comparisons)
        for t in c.tensors
    ):
        return EXIT_STRICT
    if strict and any(c.status == CheckStatus.FAIL for r in results for c in r.checks):
        return EXIT_STRICT
    return EXIT_OK


def cmd_list(argv: list[str]) -> int:
    p = _Parser(prog="gradviz list", description="List the ops found in op modules.")
    p.add_argument("files", nargs="*", help="op files or module names")
    p.add_argument("--framework", default="all", choices=FRAMEWORK_CHOICES)
    args = p.parse_args(argv)
    from gradviz.cli.output import print_load_errors, print_op_list
    from gradviz.engine import Engine

    with Engine(_frameworks(args.framework)) as engine:
        catalogs = engine.load(_files_or_examples(args.files))
    failed = print_load_errors(catalogs)
    print_op_list(catalogs, sys.stdout)  # the stdout of now (tests swap it)
    if not any(cat.ops for cat in catalogs):  # as `run` would: nothing to run is an error
        from gradviz.cli.output import print_left_out

        print_left_out(
            _files_or_examples(args.files), catalogs, _frameworks(args.framework), sys.stderr
        )
        print("gradviz: no ops found", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_USAGE if failed else EXIT_OK


def cmd_devices(argv: list[str]) -> int:
    p = _Parser(prog="gradviz devices", description="Devices per framework.")
    p.add_argument("--framework", default="all", choices=FRAMEWORK_CHOICES)
    args = p.parse_args(argv)
    from gradviz.cli.output import print_devices
    from gradviz.engine import Engine

    missing = [fw for fw in Framework if not fw.installed] if args.framework == "all" else []
    with Engine(_frameworks(args.framework)) as engine:
        print_devices(engine.devices(), missing=missing)
    return EXIT_OK


def cmd_app(argv: list[str]) -> int:
    p = _Parser(
        prog="gradviz",
        description="Desktop gradient-flow inspector. Subcommands: "
        "run, list, devices (gradviz run --help).",
    )
    p.add_argument(
        "files",
        nargs="*",
        help="op files or module names, e.g. ops.py mypkg.quant_ops (built-in examples when none)",
    )
    p.add_argument("--run", action="store_true", help="run all ops once loaded")
    p.add_argument("--screenshot", metavar="PNG", help="save the window image and exit")
    once = p.add_mutually_exclusive_group()  # each answers and exits, no window
    once.add_argument("--version", action="store_true", help="print gradviz's version and exit")
    once.add_argument(
        "--install-desktop-entry",
        action="store_true",
        help="add gradviz and its icon to the desktop's launcher (Linux, per user)",
    )
    once.add_argument(
        "--uninstall-desktop-entry",
        action="store_true",
        help="remove what --install-desktop-entry added",
    )
    args = p.parse_args(argv)
    if args.version or args.install_desktop_entry or args.uninstall_desktop_entry:
        return _no_window(args)
    files = _op_files(args.files)
    missing = [a for a, f in zip(args.files, files) if not os.path.exists(f)]
    if missing:
        raise UsageError("no such file: " + ", ".join(missing))
    if args.screenshot and not os.environ.get("DISPLAY") and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from gradviz.qt.app import main as app_main

    return app_main(files, run=args.run, screenshot=args.screenshot)


def _printable_anywhere() -> None:
    """A terminal that cannot show a character (PYTHONIOENCODING=ascii, a C locale) gets '?'
    for it instead of a UnicodeEncodeError that would end the run."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError, OSError):
            pass  # not a text file of our own (a test's capture)


def _no_window(args) -> int:
    """--version and the desktop entry: answered without Qt or workers."""
    if args.version:
        import gradviz

        print(f"gradviz {gradviz.__version__}")
        return EXIT_OK
    from gradviz import desktop_entry

    try:
        if args.install_desktop_entry:
            for path in desktop_entry.install().values():
                print(f"wrote {path}")
        else:
            removed = desktop_entry.uninstall()
            for path in removed:
                print(f"removed {path}")
            if not removed:
                print(f"no gradviz desktop entry in {desktop_entry.data_home()}")
    except desktop_entry.DesktopEntryError as exc:
        print(f"gradviz: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _printable_anywhere()
    command = {"run": cmd_run, "list": cmd_list, "devices": cmd_devices}.get(
        argv[0] if argv else "", None
    )
    from gradviz.engine.scratch import ScratchUnavailable
    from gradviz.engine.stop_signals import Stopped, raise_on_stop, restore

    before = {}
    try:
        if command is not None:
            before = raise_on_stop()  # SIGTERM and SIGHUP clean up as Ctrl+C does
            return command(argv[1:])
        return cmd_app(argv)
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    except ScratchUnavailable as exc:
        print(f"gradviz: {exc.strerror}", file=sys.stderr)
        return EXIT_FAILED
    except Stopped as exc:
        print(
            "gradviz: interrupted" if exc.name == "SIGINT" else f"gradviz: stopped by {exc.name}",
            file=sys.stderr,
        )
        return 128 + exc.signum
    except KeyboardInterrupt:
        print("gradviz: interrupted", file=sys.stderr)
        return 130
    finally:
        restore(before)


if __name__ == "__main__":
    sys.exit(main())
