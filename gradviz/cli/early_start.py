"""`gradviz run` starts its workers before it imports the rest of itself.

A cold run waits on its slowest worker's framework import (TensorFlow's, ~2 s), and the command
line's own imports (numpy, the model, the engine's facade, the reports: ~0.1 s) used to come
before the workers were started. `start(argv)` runs first, on the few modules it needs (argv
read for the files and --framework, import_scan, the worker handles: no numpy); cmd_run's
Engine then adopts the workers it started (`taken`). Only where argv plainly names op files to
run: anything else (no files, i.e. the built-in examples; --verbose, which changes the workers'
environment first; an option or a file it cannot read) leaves the start to cmd_run, as before.
Workers nobody adopted (a usage error found later) are stopped when the command ends
(`discard`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gradviz.engine.worker import Worker

# `gradviz run`'s options that take no value, and those that take one (--verbose is neither:
# with it the start waits for cmd_run); tests/test_cli_early_start.py holds them to run_parser
FLAGS = frozenset({"--log-scale", "--strict", "--quiet"})
VALUED = frozenset(
    {
        "--op",
        "--framework",
        "--device",
        "--graph",
        "--depth",
        "--shape",
        "--dtype",
        "--seed",
        "--upstream",
        "--range",
        "--modes",
        "--checks",
        "--json",
        "--npz",
        "--repro",
        "--plot",
        "--timeout",
    }
)

_started: dict[str, Worker] = {}


def start(argv: list[str]) -> None:
    if argv[:1] != ["run"]:
        return
    read = read_run_args(argv[1:])
    if read is None:
        return
    names, choice = read
    from gradviz.errors import GradvizError
    from gradviz.module_files import check_op_file, op_file
    from gradviz.vocab import Framework, installed_frameworks

    try:
        files = [op_file(name) for name in names]
        for f in files:
            if os.path.lexists(f):
                check_op_file(f)
        if choice == "all":
            frameworks = tuple(installed_frameworks())
        elif Framework(choice).installed:
            frameworks = (Framework(choice),)
        else:
            return
    except (GradvizError, ValueError, OSError):  # cmd_run says what is wrong
        return
    from gradviz.engine.worker import Worker

    try:
        for fw in used_by(files, frameworks):
            _started[fw] = worker = Worker(fw)
            worker.start()
    except Exception:  # noqa: BLE001 - no /dev/shm, no process: cmd_run meets it and says so
        discard()


def read_run_args(args: list[str]) -> tuple[list[str], str] | None:
    """(the positional arguments, --framework's value) of `gradviz run ARGS`, or None where
    ARGS hold anything this does not read as run_parser does."""
    files: list[str] = []
    choice = "all"
    it = iter(args)
    for arg in it:
        if arg == "--":
            files.extend(it)
            break
        if not arg.startswith("-") or arg == "-":
            files.append(arg)
            continue
        name, eq, value = arg.partition("=")
        if name in FLAGS and not eq:
            continue
        if name not in VALUED:
            return None  # -h, --verbose, an abbreviation, a typo: cmd_run's parser answers
        if not eq:
            value = next(it, None)
            if value is None:
                return None
        if name == "--framework":
            choice = value
    return (files, choice) if files else None


def used_by(files: list[str], frameworks) -> list[str]:
    """The frameworks of `frameworks` that some file imports (engine.load sends a file only to
    those; a file it cannot tell about goes to every one)."""
    from gradviz.import_scan import frameworks_used

    used = {fw for f in files for fw in frameworks_used(os.path.abspath(f))[0]}
    return [str(fw) for fw in frameworks if fw in used]


def taken(frameworks) -> dict[str, Worker]:
    """The workers started here for `frameworks`, handed over to the caller's Engine."""
    return {fw: _started.pop(fw) for fw in frameworks if fw in _started}


def discard() -> None:
    """Stop the workers nobody took."""
    while _started:
        _started.popitem()[1].stop()
