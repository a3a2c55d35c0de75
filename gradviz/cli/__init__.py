"""`gradviz` command line: `commands` parses and dispatches, `output` prints and writes, `limits`
refuses numeric flags that cannot work. The entry point is gradviz.cli:main."""

import os
import sys


def _no_relative_pythonpath() -> None:
    """An empty or relative PYTHONPATH entry ("", ".", "lib") puts the current folder (or one
    below it) on the path, where a `numpy.py` lying there would be imported by gradviz itself
    (issue 26, minor). gradviz imports no user code in this process, so those entries go before
    anything else is imported; the workers start isolated (`python -I`) anyway."""
    raw = os.environ.get("PYTHONPATH")
    if not raw:
        return
    relative = {
        os.path.abspath(e or os.curdir) for e in raw.split(os.pathsep) if not os.path.isabs(e)
    }
    absolute = {os.path.abspath(e) for e in raw.split(os.pathsep) if os.path.isabs(e)}
    drop = relative - absolute  # named absolutely as well: meant, kept
    if drop:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) not in drop]


_no_relative_pythonpath()


def main(argv: list[str] | None = None) -> int:
    """The `gradviz` command (argv: sys.argv[1:] when None). `gradviz run` starts its workers
    before the rest of the command line is imported (cli/early_start.py)."""
    from gradviz.cli import early_start

    early_start.start(sys.argv[1:] if argv is None else list(argv))
    try:
        from gradviz.cli.commands import main as command

        return command(argv)
    finally:
        early_start.discard()


__all__ = ["main"]
