"""Importing users' files in a worker, each afresh when it or a module of its own changed.

A plain file is imported under a unique name, with its folder on its own sys.path (the helpers
beside it import as top-level modules). A file inside a package (module_files.package_module) is
imported as that package's module, `pkg.sub.mod`, with the folder holding `pkg` on its own
sys.path and nothing else, so its relative imports work and its helpers are imported once, under
their package names; the parent packages' `__init__.py` run first, as in any import.

A package whose `__init__.py` fails to import (an optional dependency of the package missing)
does not stop a file of it that has no relative imports: that file is imported as a plain file,
as it was before package files were imported as package modules, and load_note says so. With a
relative import it cannot stand alone: PackageInitError names the __init__'s failing line.

The file itself is compiled from the bytes just hashed, never from __pycache__: a .pyc is trusted
by the source's mtime and size, which an edit within the same second can leave unchanged.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.abc
import importlib.util
import os
import re
import sys
import traceback
from dataclasses import dataclass

from gradviz.errors import GradvizError
from gradviz.module_files import package_module, read_op_source
from gradviz.user_frames import is_user_frame

_loaded: dict[str, tuple[str, object, _Scope, tuple]] = {}  # path -> (content hash, module,
# its scope, files watched beside the scope's)
_own_stamps: dict[str, dict[str, float]] = {}  # path -> mtimes of the modules of its own
_notes: dict[str, str] = {}  # path -> how it was loaded, when not as asked


class PackageInitError(GradvizError, ImportError):
    """A package file with relative imports whose package's `__init__.py` failed to import.
    `original`: the __init__'s exception; `user_frames`: its frames in the user's files."""

    def __init__(self, message: str, original: BaseException, user_frames: list):
        super().__init__(message)
        self.original, self.user_frames = original, user_frames


@dataclass(frozen=True)
class _Scope:
    """The modules that reload with a file: for a plain file, those beside it; for a package
    file, every module of its top package."""

    folder: str  # the plain file's folder, or the top package's folder
    package: str = ""  # the top package's name ("" for a plain file)

    def holds(self, name: str, module) -> bool:
        if self.package and (name == self.package or name.startswith(self.package + ".")):
            return True
        f = getattr(module, "__file__", None)
        return isinstance(f, str) and self.holds_file(f)

    def holds_file(self, path: str) -> bool:
        path = os.path.abspath(path)
        return (
            path.startswith(self.folder + os.sep)
            if self.package
            else os.path.dirname(path) == self.folder
        )


def load_module(path: str):
    """The user's file `path` as a module; the same object while neither the file nor a module
    of its scope changed, else imported again (with every module of its scope)."""
    path = os.path.abspath(path)
    source = read_op_source(path)  # a regular file, read with a bound
    digest = hashlib.sha1(source).hexdigest()
    package = package_module(path)
    scope = (
        _Scope(os.path.dirname(path))
        if package is None
        else _Scope(os.path.join(package[0], package[1].split(".")[0]), package[1].split(".")[0])
    )
    cached = _loaded.get(path)
    if cached and cached[0] == digest and _stamps(*cached[2:]) == _own_stamps.get(path):
        return cached[1]
    _forget(scope)
    _notes.pop(path, None)
    watched: tuple = ()
    if package is None:
        module = _import_plain(path, source, digest)
    elif is_user_frame(path):
        module, note = _import_in_package(path, source, digest, *package)
        if note:  # loaded as a plain file: its package's __init__ is watched for a fix
            _notes[path], scope = note, _Scope(os.path.dirname(path))
            watched = _package_inits(path, package[0])
    else:  # a library's own file (site-packages): imported as the library imports it
        module = _import_library(path, *package)
    _loaded[path] = (digest, module, scope, watched)
    _own_stamps[path] = _stamps(scope, watched)
    from gradviz.backends.user_state import undo_patches_of

    undo_patches_of(path)  # a patch of framework internals at import never reaches its ops
    return module


def load_note(path: str) -> str:
    """How the last load_module of `path` loaded it, when not as asked ("" when as asked)."""
    return _notes.get(os.path.abspath(path), "")


def _import_plain(path: str, source: bytes, digest: str):
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    name = f"gradviz_user_{stem}_{hashlib.sha1(path.encode()).hexdigest()[:8]}_{digest[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        exec(compile(source, path, "exec", dont_inherit=True), module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _import_in_package(
    path: str, source: bytes, digest: str, root: str, dotted: str
) -> tuple[object, str]:
    """(the module, "") imported as `dotted`; or (the file as a plain module, a note saying so)
    when a parent package's __init__ failed and the file has no relative imports."""
    top = dotted.split(".")[0]
    taken = sys.modules.get(top)
    if taken is not None:  # the scope was forgotten: this is a library's module of that name
        where = getattr(taken, "__file__", None) or getattr(taken, "__path__", None) or "built in"
        raise ImportError(
            f"{path} is module {dotted!r}, but the name {top!r} is taken by the "
            f"already imported {top!r} ({where}); rename the package folder"
        )
    if root in sys.path:
        sys.path.remove(root)
    sys.path.insert(0, root)  # before any installed package of the same name
    finder = _ThisFile(dotted, path, source)
    sys.meta_path.insert(0, finder)
    try:
        return importlib.import_module(dotted), ""
    except Exception as exc:
        if finder.state == "failed":  # the file itself (or what it imports) raised
            raise
        failure = exc  # a parent package's __init__ raised
    finally:
        sys.meta_path.remove(finder)
    _forget(_Scope(os.path.join(root, top), top))  # what the failed import left half-made
    return _as_plain_file(path, source, digest, dotted, failure)


def _as_plain_file(
    path: str, source: bytes, digest: str, dotted: str, failure: Exception
) -> tuple[object, str]:
    frames = [f for f in traceback.extract_tb(failure.__traceback__) if is_user_frame(f.filename)]
    inits = [f for f in frames if os.path.basename(f.filename) == "__init__.py"]
    package = dotted.rsplit(".", 1)[0] if not path.endswith("__init__.py") else dotted
    init = inits[0] if inits else (frames[0] if frames else None)
    failed = f"importing its package {package!r} failed"
    if init is not None:  # the import that started it, and where it ended when elsewhere
        failed += f" at {init.filename}:{init.lineno} ({(init.line or '').strip()})"
        if frames[-1] is not init:
            failed += f", in {frames[-1].filename}:{frames[-1].lineno}"
    failed += f": {type(failure).__name__}: {_first_line(failure)}"
    relative = _relative_import(source)
    if relative is not None:
        raise PackageInitError(
            f"{path} is module {dotted!r}, and {failed}. The file has a relative import "
            f"(line {relative}), so it cannot be loaded as a plain file either: install what the "
            "package needs, or make its __init__.py import it optionally",
            failure,
            frames,
        ) from failure
    note = (
        f"loaded as a plain file, not as module {dotted!r}: {failed}; the file has no "
        "relative imports, so it was imported on its own (its folder on sys.path)"
    )
    return _import_plain(path, source, digest), note


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _relative_import(source: bytes):
    """The line of the file's first relative import (`from . import x`), else None (also for a
    file that does not parse: importing it then reports the syntax error at its line)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    lines = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]
    return min(lines) if lines else None


def _package_inits(path: str, root: str) -> tuple[str, ...]:
    """The `__init__.py` of each package above `path`, up to the folder `root` holding the top."""
    found, folder = [], os.path.dirname(path)
    while folder.startswith(root + os.sep):
        init = os.path.join(folder, "__init__.py")
        if init != path and os.path.isfile(init):
            found.append(init)
        folder = os.path.dirname(folder)
    return tuple(found)


def _import_library(path: str, root: str, dotted: str):
    if root not in sys.path:
        sys.path.append(root)
    module = importlib.import_module(dotted)
    found = os.path.abspath(getattr(module, "__file__", None) or "?")
    if found != path:
        raise ImportError(f"{path} is module {dotted!r}, but that name imports {found}")
    return module


class _ThisFile(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds module `name` at `path` and runs the hashed `source`, whoever imports it first (the
    package's `__init__.py` may import it before gradviz asks for it)."""

    def __init__(self, name: str, path: str, source: bytes):
        self.name, self.path, self.source = name, path, source
        self.state = ""  # "running", "done" or "failed" once the file's code has started

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        is_package = os.path.basename(self.path) == "__init__.py"
        return importlib.util.spec_from_file_location(
            fullname,
            self.path,
            loader=self,
            submodule_search_locations=[os.path.dirname(self.path)] if is_package else None,
        )

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        self.state = "running"
        try:
            exec(compile(self.source, self.path, "exec", dont_inherit=True), module.__dict__)
        except BaseException:
            self.state = "failed"
            raise
        self.state = "done"


def _forget(scope: _Scope) -> None:
    """Drop the users' modules of the scope, so the helpers they import reload too."""
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if scope.holds(name, mod) and (not isinstance(f, str) or is_user_frame(f)):
            del sys.modules[name]
    for p in list(_loaded):
        if scope.holds_file(p):
            del _loaded[p]


_scope_files: dict[_Scope, tuple[tuple, list[str]]] = {}


def _stamps(scope: _Scope, watched: tuple = ()) -> dict[str, float]:
    files = _files_of(scope)
    files = files + [f for f in watched if f not in files]
    return {f: os.path.getmtime(f) for f in files if os.path.exists(f)}


def _files_of(scope: _Scope) -> list[str]:
    """Files of the imported modules of the scope. Scanning sys.modules (thousands of entries
    once TensorFlow is in) took most of a small run's time, so the list is kept until a module is
    imported or dropped (new modules go to the end of sys.modules)."""
    key = (len(sys.modules), next(reversed(sys.modules), None))
    hit = _scope_files.get(scope)
    if hit is not None and hit[0] == key:
        return hit[1]
    files = [
        f
        for name, mod in list(sys.modules.items())
        if scope.holds(name, mod) and isinstance(f := getattr(mod, "__file__", None), str)
    ]
    _scope_files[scope] = (key, files)
    return files
