"""What every command shares: exit codes, usage errors, and the framework and file arguments."""

from __future__ import annotations

import argparse
import os

from gradviz.errors import GradvizError
from gradviz.model import FRAMEWORKS
from gradviz.vocab import Framework

EXIT_OK, EXIT_STRICT, EXIT_USAGE, EXIT_FAILED = 0, 1, 2, 3

# plain strings: argparse names the choices with repr() when one is wrong
FRAMEWORK_CHOICES = (*(fw.value for fw in Framework), "all")


class UsageError(GradvizError):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits with 2 by itself; keep one path for messages
        raise UsageError(f"{self.prog}: {message}")


def chosen_frameworks(choice: str) -> tuple[str, ...]:
    if choice == "all":
        return FRAMEWORKS
    if not Framework(choice).installed:
        fw = Framework(choice)
        raise UsageError(
            f"--framework {choice}: {fw.label} is not installed; add it with "
            f"pip install 'gradviz[{fw.extra}]'"
        )
    return (choice,)


def files_or_examples(files: list[str]) -> list[str]:
    from gradviz.catalog import builtin_examples

    return op_files(files) if files else builtin_examples()


def op_files(args: list[str]) -> list[str]:
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
