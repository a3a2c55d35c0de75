"""`gradviz` command line: `commands` parses and dispatches, `output` prints and writes, `limits`
refuses numeric flags that cannot work. The entry point is gradviz.cli:main."""
from gradviz.cli.commands import main

__all__ = ["main"]
