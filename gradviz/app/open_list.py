"""The open files a plain `gradviz` launch brings back, as an editor restores its tabs (issue 13
item 11.1). The list is kept as plain strings in the settings (`files/open`): an absolute path,
or the dotted module name a file was opened by (File > Open module…), found again at launch as
`python -m` would find it. Qt-free: the window hands in the setting's value and writes back
what `entries_of` returns.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gradviz.app.loaded import LoadedFiles
from gradviz.module_files import ModuleNameError, is_module_name, resolve


@dataclass(frozen=True)
class Restored:
    """What a launch opens from the saved list."""

    files: tuple[str, ...] = ()
    module_names: Mapping[str, str] = field(default_factory=dict)  # file -> the name it came by
    missing: tuple[tuple[str, str], ...] = ()  # entries left out: (entry, why; "" when gone)

    def missing_lines(self) -> list[str]:
        """ "missing: /home/me/ops.py", "missing: mypkg.ops (no module named 'mypkg' ...)"."""
        return [f"missing: {e}" + (f" ({why})" if why else "") for e, why in self.missing]


def saved_entries(value) -> list[str] | None:
    """The setting's value as a list of entries; None when there is none (never saved, or not
    a list of strings). Qt's INI format reads a one-item list back as a plain string."""
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return [v for v in value if v]
    return None


def restore(entries: Sequence[str]) -> Restored:
    """The files of the saved entries that are still there, in order; the others are named in
    `missing` (never silently dropped)."""
    files: list[str] = []
    names: dict[str, str] = {}
    missing: list[tuple[str, str]] = []
    for entry in entries:
        if os.path.isabs(entry):
            if not os.path.isfile(entry):
                missing.append((entry, ""))
                continue
            path, why = entry, ""
        elif is_module_name(entry):
            try:
                path, why = resolve(entry), ""
            except ModuleNameError as exc:
                path, why = "", str(exc)
        else:
            path, why = "", "neither an absolute path nor a module name"
        if why:
            missing.append((entry, why))
        elif path not in files:
            files.append(path)
            if not os.path.isabs(entry):
                names[path] = entry
    return Restored(tuple(files), names, tuple(missing))


def entries_of(loaded: LoadedFiles) -> list[str]:
    """The entries to save for the files open now: each file's module name where it was opened
    by name, else its absolute path."""
    return [loaded.module_names.get(f, f) for f in loaded.files]
