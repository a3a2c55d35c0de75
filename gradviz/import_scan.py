"""Which frameworks a user file needs, read from its source without running it.

The authoritative list of ops comes from the workers (they import the file); this static pass
only decides which workers get the file, and reports files that cannot even be parsed.
"""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING

from gradviz.errors import GradvizError
from gradviz.module_files import OpFileError, package_module, read_op_source
from gradviz.vocab import ErrorKind, Framework, framework_of_import

if TYPE_CHECKING:
    from gradviz.model import ErrorInfo


def frameworks_used(path: str) -> tuple[tuple[str, ...], ErrorInfo | None]:
    """('torch', 'tf') as imported by the file (directly or through a helper module it imports:
    a sibling, or a module of its own package)."""
    try:
        tree = _parse(path)
    except _LoadError as exc:
        return (), exc.info
    found = _imports(tree)
    if not found:
        # A file importing only its own helpers: look one level into the modules it imports.
        for helper in _helper_files(tree, path):
            try:
                found |= _imports(_parse(helper))
            except _LoadError:
                pass
    if not found:
        found = set(Framework)  # unknown: let every framework look
    return tuple(fw for fw in Framework if fw in found), None


class _LoadError(GradvizError):
    """A file that cannot be scanned; its ErrorInfo made when asked (the model imports numpy,
    which `gradviz run` imports only after it started its workers: cli/early_start.py)."""

    def __init__(self, type_: str, message: str, where: str = ""):
        self._fields = (type_, message, where)

    @property
    def info(self) -> ErrorInfo:
        from gradviz.model import ErrorInfo

        return ErrorInfo(*self._fields, kind=ErrorKind.LOAD)


def _parse(path: str) -> ast.AST:
    if not os.path.exists(path) and not os.path.islink(path):
        raise _LoadError("FileNotFoundError", f"no such file: {path}")
    if os.path.isdir(path):
        raise _LoadError("IsADirectoryError", f"{path} is a folder, not a Python file")
    try:
        source = read_op_source(path)  # a regular file, read with a bound
        return ast.parse(source, filename=path)
    except SyntaxError as exc:
        where = f"{exc.filename or path}:{exc.lineno or 0}"
        text = (exc.text or "").rstrip("\n")
        detail = f"{exc.msg}" + (f"\n    {text.strip()}" if text.strip() else "")
        raise _LoadError("SyntaxError", detail, where) from None
    except OpFileError as exc:
        raise _LoadError("OpFileError", str(exc)) from None
    except (OSError, ValueError) as exc:
        raise _LoadError(type(exc).__name__, str(exc)) from None


def _imported_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _helper_files(tree: ast.AST, path: str) -> list[str]:
    """Existing files of the user's modules the file imports: siblings by their top-level name,
    and (for a file inside a package) its package's modules, by relative or absolute name."""
    folder = os.path.dirname(os.path.abspath(path))
    package = package_module(path)
    here = package[1].split(".")[:-1] if package else []
    if package and os.path.basename(path) == "__init__.py":
        here = package[1].split(".")
    candidates = [os.path.join(folder, n.split(".")[0] + ".py") for n in _imported_names(tree)]
    for node in ast.walk(tree):
        if package is None or not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.ImportFrom) and node.level:
            if node.level - 1 > len(here) - 1:
                continue
            base = here[: len(here) - node.level + 1]
            names = [base + (node.module.split(".") if node.module else [])]
            if not node.module:
                names = [base + [a.name] for a in node.names]
        else:
            mods = (
                [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            )
            names = [m.split(".") for m in mods if m and m.split(".")[0] == here[0]]
        for parts in names:
            stem = os.path.join(package[0], *parts)
            candidates += [stem + ".py", os.path.join(stem, "__init__.py")]
    me = os.path.abspath(path)
    return [c for c in dict.fromkeys(candidates) if os.path.isfile(c) and os.path.abspath(c) != me]


def _imports(tree: ast.AST) -> set[str]:
    found = {framework_of_import(n.split(".")[0]) for n in _imported_names(tree)}
    return found - {None}
