"""Where modules keep bound `Fn.apply` aliases (`revgrad = RevGrad.apply`), for the default mode's
swap (torch_overrides). Worker-only.

Reading every attribute of every module took ~80% of a small default run (~20,000 attributes
once torch is in), so what was found is kept per module and a module is read again only where
it may have changed: new in sys.modules, its namespace grown or shrunk, an alias found in it no
longer in place, or one of the users' own modules (read every time: their globals are what the
op's own code reassigns). Looking at each of sys.modules' ~1200 entries and each kept module in
Python still took ~0.5 ms in a warm worker (other processes empty its caches between requests),
so a change to sys.modules is told by its length and its last entry (imports add at the end),
and the namespaces' sizes are compared in one C-level pass. What this cannot see (a library's
existing global rebound to an alias with the namespace the same size; a module put in place of
another with sys.modules' length and last entry unchanged) still shows in the default graph
(overrides_in_graph); `missed` then reads everything afresh, and the runner builds the mode
again when that finds an alias the swap did not have (introspect.OverrideKept.again).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable

from gradviz.user_frames import is_user_frame


class _Module:
    """One module as last read: the aliases in it."""

    __slots__ = ("module", "namespace", "always", "found")

    def __init__(self, module, namespace: dict):
        self.module, self.namespace = module, namespace
        f = getattr(module, "__file__", None)
        # a user's module, or another kind of object (it may get another namespace)
        self.always = type(module) is not types.ModuleType or (
            isinstance(f, str) and is_user_frame(f)
        )
        self.found: list[tuple[str, object]] = []


class AliasIndex:
    """`find()`: every (module, attribute, alias) in sys.modules' modules whose name does not
    start with one of `skip`, where `is_alias(value)` holds."""

    def __init__(self, is_alias: Callable[[object], bool], skip: tuple[str, ...]):
        self._is_alias = is_alias
        self._skip = skip
        self._key: tuple = ()
        self._modules: list[_Module] = []  # the modules kept, in sys.modules' order
        self._namespaces: list[dict] = []  # theirs, for the one-pass size comparison
        self._sizes: list[int] = []  # their sizes when last read (-1: never)
        self._always: list[_Module] = []  # read every time: the users' and other objects
        self._holding: dict[int, _Module] = {}  # id -> module with aliases found in it
        self.last: list[tuple] = []  # what the last find() returned

    def find(self) -> list[tuple]:
        if _modules_key() != self._key:
            self._list()
        sizes = list(map(len, self._namespaces))
        if sizes != self._sizes:
            for i, (m, size) in enumerate(zip(self._modules, sizes)):
                if size != self._sizes[i]:
                    self._read(m)
            self._sizes = sizes
        for m in self._always:
            if type(m.module) is not types.ModuleType:
                m.namespace = _namespace(m.module) or {}
            self._read(m)
        for m in list(self._holding.values()):
            if not all(m.namespace.get(attr) is obj for attr, obj in m.found):
                self._read(m)
        self.last = [(m.module, attr, obj) for m in self._holding.values() for attr, obj in m.found]
        return self.last

    def missed(self) -> bool:
        """Read every module afresh: is there an alias now that the last find() did not return?"""
        before = {(id(mod), attr, id(obj)) for mod, attr, obj in self.last}
        self._key, self._modules, self._always = (), [], []
        return any((id(mod), attr, id(obj)) not in before for mod, attr, obj in self.find())

    def _list(self) -> None:
        known = {id(m.module): m for m in self._modules + self._always}
        old_sizes = {id(m.module): size for m, size in zip(self._modules, self._sizes)}
        modules, sizes, always, taken = [], [], [], set()
        for name, mod in list(sys.modules.items()):
            if mod is None or id(mod) in taken or name.partition(".")[0] in self._skip:
                continue
            namespace = _namespace(mod)
            if namespace is None:  # nothing to hold an alias
                continue
            taken.add(id(mod))
            m = known.get(id(mod))
            kept = m is not None and m.module is mod
            if not kept:
                m = _Module(mod, namespace)
            if m.always:
                always.append(m)
            else:
                modules.append(m)
                sizes.append(old_sizes.get(id(mod), -1) if kept else -1)
        self._modules, self._sizes, self._always = modules, sizes, always
        self._namespaces = [m.namespace for m in modules]
        self._holding = {id(m): m for m in modules + always if m.found}
        self._key = _modules_key()

    def _read(self, m: _Module) -> None:
        m.found = [(attr, obj) for attr, obj in list(m.namespace.items()) if self._is_alias(obj)]
        if m.found:
            self._holding[id(m)] = m
        else:
            self._holding.pop(id(m), None)


def _modules_key() -> tuple:
    last = next(reversed(sys.modules), None)
    return len(sys.modules), last, id(sys.modules.get(last))


def _namespace(obj):
    try:
        return vars(obj)
    except TypeError:
        return None
