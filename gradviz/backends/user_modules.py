"""Importing users' files in a worker, each afresh when it or a module of its own changed.

A plain file is imported under a unique name, with its folder on its own sys.path (the helpers
beside it import as top-level modules). A file inside a package (module_files.package_module) is
imported as that package's module, `pkg.sub.mod`, with the folder holding `pkg` on its own
sys.path and nothing else, so its relative imports work and its helpers are imported once, under
their package names; the parent packages' `__init__.py` run first, as in any import.

The file itself is compiled from the bytes just hashed, never from __pycache__: a .pyc is trusted
by the source's mtime and size, which an edit within the same second can leave unchanged.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.util
import os
import re
import sys
from dataclasses import dataclass

from gradviz.module_files import package_module
from gradviz.user_frames import is_user_frame

_loaded: dict[str, tuple[str, object]] = {}     # path -> (content hash, module)
_own_stamps: dict[str, dict[str, float]] = {}   # path -> mtimes of the modules of its own


@dataclass(frozen=True)
class _Scope:
    """The modules that reload with a file: for a plain file, those beside it; for a package
    file, every module of its top package."""
    folder: str        # the plain file's folder, or the top package's folder
    package: str = ""  # the top package's name ("" for a plain file)

    def holds(self, name: str, module) -> bool:
        if self.package and (name == self.package or name.startswith(self.package + ".")):
            return True
        f = getattr(module, "__file__", None)
        return isinstance(f, str) and self.holds_file(f)

    def holds_file(self, path: str) -> bool:
        path = os.path.abspath(path)
        return path.startswith(self.folder + os.sep) if self.package else \
            os.path.dirname(path) == self.folder


def load_module(path: str):
    """The user's file `path` as a module; the same object while neither the file nor a module
    of its scope changed, else imported again (with every module of its scope)."""
    path = os.path.abspath(path)
    with open(path, "rb") as fh:
        source = fh.read()
    digest = hashlib.sha1(source).hexdigest()
    package = package_module(path)
    scope = _Scope(os.path.dirname(path)) if package is None else \
        _Scope(os.path.join(package[0], package[1].split(".")[0]), package[1].split(".")[0])
    cached = _loaded.get(path)
    if cached and cached[0] == digest and _stamps(scope) == _own_stamps.get(path):
        return cached[1]
    _forget(scope)
    if package is None:
        module = _import_plain(path, source, digest)
    elif is_user_frame(path):
        module = _import_in_package(path, source, *package)
    else:  # a library's own file (site-packages): imported as the library imports it
        module = _import_library(path, *package)
    _loaded[path] = (digest, module)
    _own_stamps[path] = _stamps(scope)
    return module


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


def _import_in_package(path: str, source: bytes, root: str, dotted: str):
    top = dotted.split(".")[0]
    taken = sys.modules.get(top)
    if taken is not None:   # the scope was forgotten: this is a library's module of that name
        where = getattr(taken, "__file__", None) or getattr(taken, "__path__", None) or "built in"
        raise ImportError(f"{path} is module {dotted!r}, but the name {top!r} is taken by the "
                          f"already imported {top!r} ({where}); rename the package folder")
    if root in sys.path:
        sys.path.remove(root)
    sys.path.insert(0, root)    # before any installed package of the same name
    finder = _ThisFile(dotted, path, source)
    sys.meta_path.insert(0, finder)
    try:
        return importlib.import_module(dotted)
    finally:
        sys.meta_path.remove(finder)


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

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        is_package = os.path.basename(self.path) == "__init__.py"
        return importlib.util.spec_from_file_location(
            fullname, self.path, loader=self,
            submodule_search_locations=[os.path.dirname(self.path)] if is_package else None)

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        exec(compile(self.source, self.path, "exec", dont_inherit=True), module.__dict__)


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


def _stamps(scope: _Scope) -> dict[str, float]:
    return {f: os.path.getmtime(f) for f in _files_of(scope) if os.path.exists(f)}


def _files_of(scope: _Scope) -> list[str]:
    """Files of the imported modules of the scope. Scanning sys.modules (thousands of entries
    once TensorFlow is in) took most of a small run's time, so the list is kept until a module is
    imported or dropped (new modules go to the end of sys.modules)."""
    key = (len(sys.modules), next(reversed(sys.modules), None))
    hit = _scope_files.get(scope)
    if hit is not None and hit[0] == key:
        return hit[1]
    files = [f for name, mod in list(sys.modules.items())
             if scope.holds(name, mod) and isinstance(f := getattr(mod, "__file__", None), str)]
    _scope_files[scope] = (key, files)
    return files
