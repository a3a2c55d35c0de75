"""Which module a file is, and which file a module name is, read from the disk alone.

Nothing here imports the user's code: finding a module with importlib (`find_spec`) imports its
parent packages, which would run the user's `__init__.py` files in the process that asks (the
GUI). So the search path is walked here the way Python's path finder walks it.
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
from collections.abc import Iterable

from gradviz.errors import GradvizError


class ModuleNameError(GradvizError, LookupError):
    """A module name that names no Python source file."""


def is_module_name(text: str) -> bool:
    """`pkg.sub.mod`: identifiers joined by dots. `ops.py` is a file name, never a module name."""
    if not text or text.endswith(".py") or os.sep in text:
        return False
    return all(part.isidentifier() for part in text.split("."))


def package_module(path: str) -> tuple[str, str] | None:
    """For a file inside a package (its folder has `__init__.py`, maybe several levels up):
    (the folder holding the top package, the dotted module name). None for a file that is not in
    a package. A package's own `__init__.py` is the package module itself (`pkg.sub`).
    Folders whose names are not identifiers cannot be imported, so the package stops below them."""
    path = os.path.abspath(path)
    folder, filename = os.path.split(path)
    stem = os.path.splitext(filename)[0]
    if not filename.endswith(".py") or not (stem.isidentifier() or stem == "__init__"):
        return None
    parts = [] if stem == "__init__" else [stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        name = os.path.basename(folder)
        if not name.isidentifier():
            break
        parts.insert(0, name)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    if len(parts) < (1 if stem == "__init__" else 2):
        return None
    return folder, ".".join(parts)


def resolve(name: str, search_path: Iterable[str] | None = None) -> str:
    """The source file of module `name`, found as `python -m` finds it: the current folder
    first, then `sys.path` (or `search_path`); regular and namespace packages. A package names
    its `__init__.py`. Raises ModuleNameError saying what was found instead."""
    if not is_module_name(name):
        raise ModuleNameError(f"{name!r} is not a module name (identifiers joined by dots)")
    locations = _search_path(search_path)
    parts = name.split(".")
    for i, part in enumerate(parts):
        here, last = ".".join(parts[: i + 1]), i == len(parts) - 1
        kind, where = _find(part, locations)
        if kind is None:
            inside = (
                "the current folder or sys.path"
                if i == 0
                else f"package {'.'.join(parts[:i])} ({', '.join(locations)})"
            )
            raise ModuleNameError(f"no module named {here!r} in {inside}")
        if kind == "extension":
            raise ModuleNameError(f"{here!r} is a compiled module ({where[0]}), not Python source")
        if kind == "module":
            if not last:
                raise ModuleNameError(
                    f"{here!r} is a module ({where[0]}), not a package, so it "
                    f"has no {parts[i + 1]!r}"
                )
            return where[0]
        if last:
            if kind == "package":
                return os.path.join(where[0], "__init__.py")
            raise ModuleNameError(
                f"{here!r} is a namespace package (folders without "
                f"__init__.py: {', '.join(where)}); name a module inside it"
            )
        locations = where
    raise AssertionError("unreachable")


def _search_path(search_path: Iterable[str] | None) -> list[str]:
    entries = [os.getcwd()] + list(sys.path if search_path is None else search_path)
    out: list[str] = []
    for entry in entries:
        folder = os.path.abspath(entry or os.curdir)  # '' is the current folder
        if folder not in out and os.path.isdir(folder):
            out.append(folder)
    return out


def _find(part: str, locations: list[str]) -> tuple[str | None, list[str]]:
    """(kind, paths) of `part` in the first location that has it, in the path finder's order
    within one folder: a regular package, a compiled extension, a source module. Folders without
    `__init__.py` are namespace portions, used only if no location has anything else."""
    portions = []
    for loc in locations:
        folder = os.path.join(loc, part)
        if os.path.isfile(os.path.join(folder, "__init__.py")):
            return "package", [folder]
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            if os.path.isfile(folder + suffix):
                return "extension", [folder + suffix]
        if os.path.isfile(folder + ".py"):
            return "module", [folder + ".py"]
        if os.path.isdir(folder):
            portions.append(folder)
    return ("namespace", portions) if portions else (None, [])


def op_file(arg: str) -> str:
    """The file a command-line argument names: a path as given (an existing path wins over a
    module of the same name), else the file of a dotted module name."""
    if os.path.exists(arg) or not is_module_name(arg):
        return os.path.abspath(arg)
    try:
        return resolve(arg)
    except ModuleNameError as exc:
        raise ModuleNameError(f"no such file or module: {arg} ({exc})") from None


OP_FILE_MAX = 16 << 20  # bytes: an op file is Python source; 16 MiB is far past any


class OpFileError(GradvizError, OSError):
    """A path that cannot be an op file (not there, a folder, a device, a FIFO, too large); the
    message says which, in words."""


def _kind(mode: int) -> str:
    import stat

    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def check_op_file(path: str) -> None:
    """Raise OpFileError unless `path` is a regular file of at most OP_FILE_MAX bytes (links
    followed). Nothing is opened: a FIFO would block, a device never end."""
    import errno
    import stat

    try:
        st = os.stat(path)
    except OSError as exc:
        why = {
            errno.ENOENT: "no such file",
            errno.ELOOP: "a loop of symbolic links",
            errno.EACCES: "permission denied",
            errno.ENOTDIR: "no such file (a part of the path is not a folder)",
        }.get(exc.errno, exc.strerror or str(exc))
        raise OpFileError(f"{path}: {why}") from None
    if not stat.S_ISREG(st.st_mode):
        raise OpFileError(f"{path}: {_kind(st.st_mode)}, not an op file (a Python source file)")
    if st.st_size > OP_FILE_MAX:
        raise OpFileError(
            f"{path}: {st.st_size:,} bytes, more than an op file may hold ({OP_FILE_MAX >> 20} MiB)"
        )


def read_op_source(path: str) -> bytes:
    """The bytes of the op file `path`, read only when it is a regular file and at most
    OP_FILE_MAX of them (a file that grows past the bound while read is refused too)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        check_op_file(path)  # says why in words
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OpFileError(f"{path}: {_kind(st.st_mode)}, not an op file (a Python source file)")
        chunks, total = [], 0
        while chunk := os.read(fd, 1 << 20):
            total += len(chunk)
            if total > OP_FILE_MAX:
                raise OpFileError(
                    f"{path}: more than {OP_FILE_MAX >> 20} MiB, more than an op file may hold"
                )
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
