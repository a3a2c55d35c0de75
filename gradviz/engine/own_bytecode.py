"""Inside a worker: gradviz's own modules keep their bytecode cache, users' files get none.

A worker turns `sys.dont_write_bytecode` on before it imports anything of the user's (child.py),
so no `__pycache__` appears in users' folders. Without this module that also left gradviz's own
modules imported after it (the backends, the model, ~4k lines) compiled from source at every
worker start. Files under gradviz's package folder are loaded by `OwnLoader`, which writes their
`.pyc` where and as Python would (mtime-checked), unless this interpreter runs with `-B`: the
parent wrote no bytecode (`-B`, PYTHONDONTWRITEBYTECODE), and launch.py passes that on.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
import tempfile
from importlib.machinery import (
    BYTECODE_SUFFIXES,
    EXTENSION_SUFFIXES,
    SOURCE_SUFFIXES,
    ExtensionFileLoader,
    FileFinder,
    SourceFileLoader,
    SourcelessFileLoader,
)
from importlib.util import MAGIC_NUMBER, cache_from_source


class OwnLoader(SourceFileLoader):
    """Python's loader for source files, writing the bytecode it compiled even though
    sys.dont_write_bytecode is on (it is for the users' files, not for gradviz's)."""

    def source_to_code(self, data, path, *, _optimize=-1):
        code = super().source_to_code(data, path, _optimize=_optimize)
        if not sys.dont_write_bytecode:  # Python writes it itself
            return code
        try:
            _write_pyc(path, self.path_stats(path), code)
        except OSError:  # a read-only install: compiled again next time
            pass
        return code


def _write_pyc(source: str, stats: dict, code) -> None:
    """The timestamp-checked .pyc of PEP 552 (as Python writes it), replaced atomically: both
    workers may write the same file at once."""
    target = cache_from_source(source)
    folder = os.path.dirname(target)
    os.makedirs(folder, exist_ok=True)
    data = b"".join(
        [
            MAGIC_NUMBER,
            (0).to_bytes(4, "little"),
            (int(stats["mtime"]) & 0xFFFFFFFF).to_bytes(4, "little"),
            (int(stats["size"]) & 0xFFFFFFFF).to_bytes(4, "little"),
            marshal.dumps(code),
        ]
    )
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=os.path.basename(target) + ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, os.stat(source).st_mode & 0o666)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def install(package_dir: str) -> None:
    """Load gradviz's modules (files under `package_dir`) with OwnLoader from now on."""
    if sys.flags.dont_write_bytecode:
        return
    package_dir = os.path.abspath(package_dir)
    finder = FileFinder.path_hook(
        (ExtensionFileLoader, EXTENSION_SUFFIXES),
        (OwnLoader, SOURCE_SUFFIXES),
        (SourcelessFileLoader, BYTECODE_SUFFIXES),
    )

    def inside(path: str) -> bool:
        path = os.path.abspath(path or ".")
        return path == package_dir or path.startswith(package_dir + os.sep)

    def hook(path: str):
        if not inside(path):
            raise ImportError("not a folder of gradviz")  # the next hook takes it
        return finder(path)

    sys.path_hooks.insert(0, hook)
    for path in [p for p in sys.path_importer_cache if inside(p)]:
        del sys.path_importer_cache[path]  # found again through the hook
