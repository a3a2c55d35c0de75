"""Ops across files and frameworks: pairing by name, and turning a selection into RunRequests."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from gradviz.bundled import EXAMPLES_DIR
from gradviz.model import FRAMEWORKS, FileCatalog, OpInfo, RunRequest, RunSettings
from gradviz.vocab import Framework


def builtin_examples() -> list[str]:
    """The example op modules gradviz opens when given no file (traps excluded: they fail on
    purpose), of the frameworks installed."""
    return [
        str(p)
        for p in sorted(EXAMPLES_DIR.glob("*.py"))
        if not p.name.startswith(("_", "traps")) and _installed(p.stem)
    ]


def trap_examples() -> list[str]:
    """Example ops that fail on purpose, one per diagnostic gradviz gives, of the frameworks
    installed."""
    return [str(p) for p in sorted(EXAMPLES_DIR.glob("traps*.py")) if _installed(p.stem)]


def _installed(stem: str) -> bool:
    """An example file is named for its framework (tutorial_jax.py): one of an optional framework
    that is not installed (JAX) is not offered, as it could not load."""
    fw = stem.rpartition("_")[2]
    return fw not in tuple(Framework) or fw in FRAMEWORKS


@dataclass
class PairedOp:
    """One op name with its implementation per framework (parity when both are present)."""

    name: str
    impls: dict[str, OpInfo] = field(default_factory=dict)


def pair_ops(catalogs: list[FileCatalog]) -> list[PairedOp]:
    """Ops by pairing name. A second op of one framework under a name already taken by another
    file is kept under a file-qualified name, `name (file.py)`: both run, nothing is dropped."""
    paired: dict[str, PairedOp] = {}
    for cat in catalogs:
        for op in cat.ops:
            name = op.name
            for qualified in (f"{op.name} ({os.path.basename(op.file)})", f"{op.name} ({op.file})"):
                taken = paired.get(name, PairedOp(name)).impls.get(op.framework)
                if taken is None or taken.file == op.file:
                    break
                name = qualified
            if name != op.name:
                op = replace(op, name=name)
            paired.setdefault(name, PairedOp(name)).impls.setdefault(op.framework, op)
    return list(paired.values())


def label_results(paired: list[PairedOp], results: list) -> list:
    """Results named as their pair (a file-qualified name where two files share an op name)."""
    names = {(op.file, op.qualname, fw): p.name for p in paired for fw, op in p.impls.items()}
    out = []
    for r in results:
        name = names.get((r.request.file, r.request.qualname, r.framework))
        if r.op is not None and name is not None and name != r.op.name:
            r = replace(r, op=replace(r.op, name=name))
        out.append(r)
    return out


def select(paired: list[PairedOp], names: list[str]) -> tuple[list[PairedOp], list[str]]:
    """Ops whose pairing name or Python name is in `names` (all when empty); and names not found."""
    if not names:
        return paired, []
    wanted, chosen = set(names), []
    seen: set[str] = set()
    for p in paired:
        hits = {p.name, p.name.split(" (")[0]} | {op.qualname for op in p.impls.values()}
        if hits & wanted:
            chosen.append(p)
            seen |= hits & wanted
    return chosen, sorted(wanted - seen)


def requests_for(
    paired: list[PairedOp], frameworks: tuple[str, ...], settings: RunSettings
) -> list[RunRequest]:
    return [
        RunRequest(p.impls[fw].file, p.impls[fw].qualname, fw, settings)
        for p in paired
        for fw in frameworks
        if fw in p.impls
    ]
