"""Where modules keep bound `Fn.apply` aliases (`revgrad = RevGrad.apply`), for the default mode's
swap (torch_overrides). Worker-only.

Reading every attribute of every module took ~80% of a small default run (~20,000 attributes
once torch is in), so what was found is kept per module and a module is read again only where
it may have changed: new in sys.modules (or another object under its name), its namespace grown
or shrunk, an alias found in it no longer in place, or one of the users' own modules (read every
time: their globals are what the op's own code reassigns). What this cannot see, a library's
existing global rebound to an alias with the namespace the same size, still shows in the default
graph (overrides_in_graph); `missed` then reads everything afresh, and the runner builds the
mode again when that finds an alias the swap did not have (introspect.OverrideKept.again).
"""
from __future__ import annotations

import operator
import sys
import types
from typing import Callable

from gradviz.user_frames import is_user_frame


class _Module:
    """One module as last read: its namespace's size then, and the aliases in it."""
    __slots__ = ("module", "namespace", "fixed", "size", "found", "users")

    def __init__(self, module, namespace: dict):
        self.module, self.namespace = module, namespace
        # a module's namespace is its own for life; another object in sys.modules may get a new one
        self.fixed = isinstance(module, types.ModuleType)
        self.size = -1                          # never read
        self.found: list[tuple[str, object]] = []
        f = getattr(module, "__file__", None)
        self.users = isinstance(f, str) and is_user_frame(f)


class AliasIndex:
    """`find()`: every (module, attribute, alias) in sys.modules' modules whose name does not
    start with one of `skip`, where `is_alias(value)` holds."""

    def __init__(self, is_alias: Callable[[object], bool], skip: tuple[str, ...]):
        self._is_alias = is_alias
        self._skip = skip
        self._modules: list[_Module] = []   # the modules to read, in sys.modules' order
        self._listed: list = []             # sys.modules' values when _modules was made
        self.last: list[tuple] = []         # what the last find() returned

    def find(self) -> list[tuple]:
        if len(sys.modules) != len(self._listed) or \
                not all(map(operator.is_, sys.modules.values(), self._listed)):
            self._list()
        out = []
        for m in self._modules:
            if not m.fixed:
                try:
                    m.namespace = vars(m.module)
                except TypeError:
                    m.namespace, m.size = {}, -1
            ns = m.namespace
            if m.users or len(ns) != m.size or (m.found and not all(
                    ns.get(attr) is obj for attr, obj in m.found)):
                self._read(m)
            if m.found:
                out += [(m.module, attr, obj) for attr, obj in m.found]
        self.last = out
        return out

    def missed(self) -> bool:
        """Read every module afresh: is there an alias now that the last find() did not return?"""
        before = {(id(mod), attr, id(obj)) for mod, attr, obj in self.last}
        for m in self._modules:
            m.size = -1
        self._listed = []
        return any((id(mod), attr, id(obj)) not in before for mod, attr, obj in self.find())

    def _list(self) -> None:
        known = {id(m.module): m for m in self._modules}
        modules, taken = [], set()
        items = list(sys.modules.items())
        for name, mod in items:
            if mod is None or id(mod) in taken or name.partition(".")[0] in self._skip:
                continue
            m = known.get(id(mod))
            if m is None or m.module is not mod:
                try:
                    m = _Module(mod, vars(mod))
                except TypeError:   # no namespace to hold an alias
                    continue
            taken.add(id(mod))
            modules.append(m)
        self._modules, self._listed = modules, [mod for _, mod in items]

    def _read(self, m: _Module) -> None:
        items = list(m.namespace.items())
        m.size = len(items)
        m.found = [(attr, obj) for attr, obj in items if self._is_alias(obj)]
