"""The loaded op files: their ops per framework, load errors, which ops are checked (what Run
runs), and the torch<->tf pairs, made by catalog.pair_ops (one pairing for the CLI and the app)
with the user's hand-made pairs applied first."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import replace

from gradviz.catalog import pair_ops
from gradviz.model import ErrorInfo, FileCatalog, OpInfo, OpKey


def op_key(op: OpInfo) -> OpKey:
    return OpKey.of_op(op)


class LoadedFiles:
    def __init__(
        self, files: Iterable[str] = (), module_names: Mapping[str, str] | None = None
    ) -> None:
        self.files: list[str] = []
        self.module_names: dict[str, str] = {}  # file -> the dotted name it was opened by
        self.ops: dict[OpKey, OpInfo] = {}
        self.errors: dict[str, ErrorInfo] = {}  # file -> why it could not be loaded
        self.overrides: dict[OpKey, str] = {}  # op -> pair name chosen by hand
        # ops whose tick box in the op tree is off: Run leaves them out ("checked" here is the
        # tick box, not a verdict nor a contract check)
        self._unticked: set[OpKey] = set()
        self._pairs: dict | None = None  # cache: pair name -> {framework: OpInfo}
        self._pair_of: dict[OpKey, str] = {}
        self.add(files, module_names)

    # --- files ---------------------------------------------------------------------------------
    def add(self, files: Iterable[str], module_names: Mapping[str, str] | None = None) -> list[str]:
        """Add files not loaded yet (in order); returns the ones that are new. `module_names`
        ({file: dotted name}) records the files opened by name (File > Open module…), so the
        saved list of open files names them as the user did (app.open_list)."""
        new = []
        for f in files:
            f = os.path.abspath(f)
            if f not in self.files and f not in new:
                new.append(f)
        self.files.extend(new)
        for f, name in (module_names or {}).items():
            self.module_names[os.path.abspath(f)] = name
        return new

    def remove(self, file: str) -> None:
        file = os.path.abspath(file)
        self.files = [f for f in self.files if f != file]
        self.module_names.pop(file, None)
        self.ops = {k: v for k, v in self.ops.items() if k[1] != file}
        self.errors.pop(file, None)
        self.overrides = {k: v for k, v in self.overrides.items() if k[1] != file}
        self._changed()

    def set_catalogs(self, catalogs: list[FileCatalog], files: Iterable[str] = ()) -> None:
        """Replace what is known about `files` (and the catalogs' own files): a file reloaded
        with fewer ops loses the others."""
        touched = list(
            dict.fromkeys([os.path.abspath(f) for f in files] + [c.file for c in catalogs])
        )
        self.add(touched)
        self.ops = {k: v for k, v in self.ops.items() if k[1] not in touched}
        for f in touched:
            self.errors.pop(f, None)
        for cat in catalogs:
            if cat.error is not None:
                self.errors[cat.file] = cat.error
            for op in cat.ops:
                self.ops[op_key(op)] = op
        self._changed()

    # --- pairs ---------------------------------------------------------------------------------
    def ordered_keys(self) -> list[OpKey]:
        order = {f: i for i, f in enumerate(self.files)}
        return sorted(self.ops, key=lambda k: (order.get(k[1], 1 << 30), self.ops[k].line, k[0]))

    def pairs(self) -> dict[str, dict[str, OpInfo]]:
        """pair name -> {framework: OpInfo} (the OpInfo as loaded, its own name)."""
        if self._pairs is None:
            self._pair_up()
        assert self._pairs is not None  # _pair_up fills it
        return self._pairs

    def pair_name(self, key: OpKey) -> str:
        if self._pairs is None:
            self._pair_up()
        op = self.ops.get(key)
        return self._pair_of.get(key) or (op.name if op else key[2])

    def keys_of(self, pair: str) -> list[OpKey]:
        return [op_key(op) for op in self.pairs().get(pair, {}).values()]

    def pair_with(self, a: OpKey, b: OpKey) -> str:
        """Show two ops of different frameworks as one op (their names differ in the files)."""
        name = self.pair_name(a)
        self.overrides[b] = name
        self._changed()
        return name

    def unpair(self, key: OpKey) -> None:
        self.overrides.pop(key, None)
        self._changed()

    def _pair_up(self) -> None:
        # the same pairing as the command line; a hand-made pair is a rename before it
        by_file: dict[str, list[OpInfo]] = {}
        for key in self.ordered_keys():
            op = self.ops[key]
            if key in self.overrides:
                op = replace(op, name=self.overrides[key])
            by_file.setdefault(key[1], []).append(op)
        cats = [FileCatalog(f, "", tuple(ops)) for f, ops in by_file.items()]
        self._pairs, self._pair_of = {}, {}
        for paired in pair_ops(cats):
            slot = self._pairs.setdefault(paired.name, {})
            for fw, op in paired.impls.items():
                key = op_key(op)
                slot[fw] = self.ops[key]
                self._pair_of[key] = paired.name

    # --- what Run runs -------------------------------------------------------------------------
    def checked_keys(self) -> list[OpKey]:
        return [k for k in self.ordered_keys() if k not in self._unticked]

    def is_checked(self, key: OpKey) -> bool:
        return key not in self._unticked

    def set_checked(self, keys: Iterable[OpKey]) -> None:
        keys = set(keys)
        self._unticked = {k for k in self.ops if k not in keys}

    def check(self, key: OpKey, on: bool) -> None:
        (self._unticked.discard if on else self._unticked.add)(key)

    def _changed(self) -> None:
        self._pairs = None
