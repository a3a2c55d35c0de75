"""`gradviz` command line: the desktop app, and the headless `run`, `list`, `devices` commands.

Exit codes: 0 done; 2 bad usage or a file that cannot be loaded; 3 some run failed (error, crash,
timeout); with --strict, 1 when any verdict is `differs` or `non-finite` (unless the op's
@gradviz.op(expect=...) names it), or a contract check (--checks) failed.
"""

from __future__ import annotations

import os
import sys

from gradviz.cli.run_command import cmd_run
from gradviz.cli.run_command import exit_code as _exit_code  # noqa: F401 - imported from here
from gradviz.cli.run_flags import joined_range, settings_from  # noqa: F401 - imported from here
from gradviz.cli.run_flags import run_parser as _run_parser  # noqa: F401 - imported from here
from gradviz.cli.usage import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    FRAMEWORK_CHOICES,
    Parser,
    UsageError,
    chosen_frameworks,
    files_or_examples,
    op_files,
)
from gradviz.vocab import Framework


def cmd_list(argv: list[str]) -> int:
    p = Parser(prog="gradviz list", description="List the ops found in op modules.")
    p.add_argument("files", nargs="*", help="op files or module names")
    p.add_argument("--framework", default="all", choices=FRAMEWORK_CHOICES)
    args = p.parse_args(argv)
    from gradviz.cli.output import print_load_errors, print_op_list
    from gradviz.engine import Engine

    with Engine(chosen_frameworks(args.framework)) as engine:
        catalogs = engine.load(files_or_examples(args.files))
    failed = print_load_errors(catalogs)
    print_op_list(catalogs, sys.stdout)  # the stdout of now (tests swap it)
    if not any(cat.ops for cat in catalogs):  # as `run` would: nothing to run is an error
        from gradviz.cli.output import print_left_out

        print_left_out(
            files_or_examples(args.files), catalogs, chosen_frameworks(args.framework), sys.stderr
        )
        print("gradviz: no ops found", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_USAGE if failed else EXIT_OK


def cmd_devices(argv: list[str]) -> int:
    p = Parser(prog="gradviz devices", description="Devices per framework.")
    p.add_argument("--framework", default="all", choices=FRAMEWORK_CHOICES)
    args = p.parse_args(argv)
    from gradviz.cli.output import print_devices
    from gradviz.engine import Engine

    missing = [fw for fw in Framework if not fw.installed] if args.framework == "all" else []
    with Engine(chosen_frameworks(args.framework)) as engine:
        print_devices(engine.devices(), missing=missing)
    return EXIT_OK


def cmd_app(argv: list[str]) -> int:
    p = Parser(
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
    files = op_files(args.files)
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
