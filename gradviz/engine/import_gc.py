"""Inside a worker: a framework's import runs with the cyclic garbage collector paused.

Importing TensorFlow makes ~700k objects and torch ~200k; with the collector on, Python walks
the growing heap again and again while they are made (a quarter of TensorFlow's import, ~0.55 s
of its ~2.7 s here; ~0.1 s of torch's), and finds almost nothing to free (~4k objects). The
worker's own framework is imported paused and then frozen (child.py); `install` does the same
while a user's file imports another framework (a file holding a torch op and its TF twin makes
each worker import both). Only the framework's own import is paused: the user's code around it
runs with the collector as it was, and it is never left off.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Iterator
from importlib.abc import Loader, MetaPathFinder

from gradviz.vocab import Framework


@contextlib.contextmanager
def paused() -> Iterator[None]:
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


class _PausedLoader(Loader):
    """The framework's own loader, run with the collector paused; the module sees only that
    loader (its `__loader__` and `__spec__.loader` are put back before it runs)."""

    def __init__(self, inner: Loader):
        self._inner = inner

    def __getattr__(self, name):  # is_package, get_resource_reader, ... for find_spec's callers
        return getattr(self._inner, name)

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module) -> None:
        module.__loader__ = module.__spec__.loader = self._inner
        with paused():
            self._inner.exec_module(module)
            # frozen, as the worker's own framework: left young, its objects cost a collection
            # of each generation right after (~0.3 s for TensorFlow's). A framework is imported
            # once per worker, so what this also keeps of the file importing it is bounded.
            gc.freeze()


class _FrameworkImports(MetaPathFinder):
    """First in sys.meta_path: for a framework's top-level package, the spec the finders after it
    give, its loader wrapped in _PausedLoader; None for every other name (Python goes on)."""

    def __init__(self, roots: frozenset[str]):
        self._roots = roots

    def find_spec(self, name, path=None, target=None):
        if name not in self._roots:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _PausedLoader(spec.loader)
        return spec


def install() -> None:
    """From now on, every framework package gradviz knows (vocab.Framework's import roots:
    torch, tensorflow, keras, jax, ...) is first imported with the collector paused."""
    if not any(isinstance(f, _FrameworkImports) for f in sys.meta_path):
        roots = frozenset(root for fw in Framework for root in fw.import_roots)
        sys.meta_path.insert(0, _FrameworkImports(roots))
