"""Ops across files and frameworks: pairing by name, and turning a selection into RunRequests."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gradviz.model import FileCatalog, OpInfo, RunRequest, RunSettings

EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "resources" / "examples"


def builtin_examples() -> list[str]:
    """The example op modules gradviz opens when given no file (traps excluded: they fail on
    purpose)."""
    return [str(p) for p in sorted(EXAMPLES_DIR.glob("*.py"))
            if not p.name.startswith(("_", "traps"))]


def trap_examples() -> list[str]:
    """Example ops that fail on purpose, one per diagnostic gradviz gives."""
    return [str(p) for p in sorted(EXAMPLES_DIR.glob("traps*.py"))]


@dataclass
class PairedOp:
    """One op name with its implementation per framework (parity when both are present)."""
    name: str
    impls: dict[str, OpInfo] = field(default_factory=dict)


def pair_ops(catalogs: list[FileCatalog]) -> list[PairedOp]:
    paired: dict[str, PairedOp] = {}
    for cat in catalogs:
        for op in cat.ops:
            entry = paired.setdefault(op.name, PairedOp(op.name))
            entry.impls.setdefault(op.framework, op)
    return list(paired.values())


def select(paired: list[PairedOp], names: list[str]) -> tuple[list[PairedOp], list[str]]:
    """Ops whose pairing name or Python name is in `names` (all when empty); and names not found."""
    if not names:
        return paired, []
    wanted, chosen = set(names), []
    seen: set[str] = set()
    for p in paired:
        hits = {p.name} | {op.qualname for op in p.impls.values()}
        if hits & wanted:
            chosen.append(p)
            seen |= hits & wanted
    return chosen, sorted(wanted - seen)


def requests_for(paired: list[PairedOp], frameworks: tuple[str, ...],
                 settings: RunSettings) -> list[RunRequest]:
    return [RunRequest(p.impls[fw].file, p.impls[fw].qualname, fw, settings)
            for p in paired for fw in frameworks if fw in p.impls]
