"""One user file cannot break another: the interpreter state each file sees is its own.

A worker imports many users' files into one interpreter. A file may rewrite `sys.path`, change
the current folder or the environment at import, or import a `utils.py` that another file's
`import utils` would then silently get. So each file gets its own copy of that state: the worker's
own state before its first import, then whatever the file left itself (its own calls may rely on
it), swapped in around each import of and call into that file and swapped out afterwards. Entries
a file removes from `sys.path` stay behind its own: the worker's code must still import.

What is swapped: `sys.path`, the current folder, `os.environ`, the modules that came from
users' files (`sys.modules` entries whose file is the user's own; libraries a file imports stay
loaded for everyone, as they would in any process), and the framework's process-wide settings the
adapter names (`settings()` / `apply_settings()`: torch's default dtype and grad mode, Keras'
floatx and dtype policy, TF's eager switch).
"""

from __future__ import annotations

import contextlib
import os
import sys
import types
from dataclasses import dataclass, field

from gradviz.user_frames import is_user_frame


@dataclass
class _State:
    path: list[str]
    cwd: str
    environ: dict[str, str]
    modules: dict[str, object] = field(default_factory=dict)  # users' modules, by name
    framework: object = None  # the adapter's settings()
    raw_environ: dict | None = None  # os.environ's undecoded dict then (_environ_unchanged)


_base: _State | None = None
_base_modules: frozenset = frozenset()  # loaded before any user file: never swapped
_files: dict[str, _State] = {}


@contextlib.contextmanager
def own_state(path: str, adapter=None):
    """Run the body (an import of, or a call into, the file `path`) with that file's state.
    `adapter`: the framework adapter whose settings() are swapped too."""
    global _base, _base_modules
    if not (hasattr(adapter, "settings") and hasattr(adapter, "apply_settings")):
        adapter = None
    if _base is None:
        from gradviz.backends.bound_internals import bind

        bind()  # what gradviz reads gradients with, before any user code runs
        _base, _base_modules = _capture(adapter), frozenset(sys.modules)
    state = _files.get(path) or _State(
        list(_base.path),
        _base.cwd,
        dict(_base.environ),
        framework=_base.framework,
        raw_environ=_base.raw_environ,
    )
    # What the file added to sys.path comes first; what it removed stays importable behind it
    # (gradviz itself and the standard library import lazily while the file's op runs).
    state.path += [p for p in _base.path if p not in state.path]
    _apply(state, adapter)
    try:
        yield
    finally:
        undo_patches_of(path)  # framework internals the file changed: put back, named
        _files[path] = _capture(adapter, take_user_modules=True)
        _apply(_base, adapter)


_patches: dict[str, set[str]] = {}  # file -> the internals it patched (bound_internals)


def undo_patches_of(path: str) -> None:
    """Put back what the file `path` changed of the framework internals gradviz relies on (also
    right after its import, before its ops run), and remember it for the file's results."""
    from gradviz.backends.bound_internals import undo_patches

    patched = undo_patches()
    if patched:
        _patches.setdefault(path, set()).update(patched)


def patch_note(path: str) -> str:
    """What to say in the results of a file that patched framework internals ("" if none)."""
    names = sorted(_patches.get(path, ()))
    if not names:
        return ""
    return (
        f"{os.path.basename(path)} patches framework internals gradviz reads gradients with "
        f"({', '.join(names)}); gradviz put them back after the file's import and each of "
        "its calls, so neither this file's results nor another file's went through the patch"
    )


def _capture(adapter=None, take_user_modules: bool = False) -> _State:
    try:
        cwd = os.getcwd()
    except OSError:  # the folder was removed: keep the one we know
        cwd = _base.cwd if _base else "/"
    environ, raw = _environ_copy()
    state = _State(list(sys.path), cwd, environ, raw_environ=raw)
    if adapter is not None:
        state.framework = adapter.settings()
    if take_user_modules:
        global _kept_names
        names = _added_names()
        for name in names:
            module = sys.modules.get(name)
            if module is not None and _is_users(module):
                state.modules[name] = sys.modules.pop(name)
        _kept_names = {name for name in names if name in sys.modules}
        sys.modules.pop(_MARK, None)
        sys.modules[_MARK] = _mark  # at the end: what comes after it is new
    return state


# `sys.modules.keys() - _base_modules` read every name (~3000 once TF is in: 0.2-0.6 ms a request
# in a worker, where they are out of the caches). A dict keeps its insertion order, so a marker
# moved to the end of sys.modules at each capture parts the names added (or added again) since
# from the others; of those, only the ones the last capture found can be other than base.
_MARK = "__gradviz_user_state_mark__"
_mark = types.ModuleType(_MARK, "Where sys.modules ended at gradviz's last look (user_state).")
_kept_names: set[str] = set()  # not in _base_modules, left in sys.modules at the last capture


def _added_names() -> set[str]:
    """sys.modules.keys() - _base_modules, the marker left out."""
    if sys.modules.get(_MARK) is not _mark:  # the first capture, or user code removed it
        return set(sys.modules.keys() - _base_modules - {_MARK})
    names = {name for name in _kept_names if name in sys.modules}
    for name in reversed(sys.modules):
        if name == _MARK:
            break
        if name not in _base_modules:
            names.add(name)
    return names


def _apply(state: _State, adapter=None) -> None:
    if sys.path != state.path:
        sys.path[:] = state.path
    try:
        if os.getcwd() != state.cwd:
            os.chdir(state.cwd)
    except OSError:
        with contextlib.suppress(OSError):
            os.chdir(state.cwd)
    if not _environ_unchanged(state) and os.environ != state.environ:
        for key in [k for k in os.environ if k not in state.environ]:
            del os.environ[key]
        for key, value in state.environ.items():
            if os.environ.get(key) != value:
                os.environ[key] = value
    for name, module in state.modules.items():
        sys.modules[name] = module
    if (
        adapter is not None
        and state.framework is not None
        and adapter.settings() != state.framework
    ):
        adapter.apply_settings(state.framework)


# Decoding os.environ (str <-> bytes per key and value) to copy and compare it was most of
# own_state's time, twice around every request; CPython's os.environ keeps the undecoded dict,
# which compares equal exactly when the decoded ones do.
_last_environ: tuple[dict, dict] | None = None  # (undecoded, decoded) at the last copy


def _raw_environ() -> dict | None:
    data = getattr(os.environ, "_data", None)  # None where os.environ is not CPython's
    return data if type(data) is dict else None


def _environ_copy() -> tuple[dict, dict | None]:
    """(os.environ as a dict, a copy of its undecoded dict or None)."""
    global _last_environ
    raw = _raw_environ()
    if raw is None:
        return dict(os.environ), None
    if _last_environ is None or raw != _last_environ[0]:
        _last_environ = (dict(raw), dict(os.environ))
    return dict(_last_environ[1]), _last_environ[0]  # the undecoded copy is never changed


def _environ_unchanged(state: _State) -> bool:
    raw = _raw_environ()
    return raw is not None and state.raw_environ is not None and raw == state.raw_environ


_verdicts: dict[int, tuple[object, bool]] = {}  # id(module) -> (module, from a user's file?)


def _is_users(module) -> bool:
    # Cached: a TF worker holds ~4000 modules, and this runs around every request.
    known = _verdicts.get(id(module))
    if known is not None and known[0] is module:
        return known[1]
    f = getattr(module, "__file__", None)
    verdict = isinstance(f, str) and is_user_frame(f)
    _verdicts[id(module)] = (module, verdict)
    return verdict
