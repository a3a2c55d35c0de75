"""This run against an earlier one (issue 28 item 5): the difference view's columns become each
mode now minus the same mode of an earlier run of the op ("custom − custom (run 2)"), so a fix
shows where it changed the gradient. The earlier gradients travel in the results' tensors under
modes of their own ("custom (run 2)"); the figure's columns keep to the modes asked for (the
grid passes them), so only the difference view's columns name them (numpy only, no Qt).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from gradviz.model import MODES, RunResult
from gradviz.vocab import Mode


def earlier_mode(mode: str, label: str) -> str:
    """The mode under which `label`'s run's gradient of `mode` travels: "custom (run 2)"."""
    return f"{mode} ({label})"


def with_earlier(
    results: Sequence[RunResult], earlier: Mapping[str, RunResult], label: str
) -> list[RunResult]:
    """`results` with each tensor also holding the earlier run's gradients of its framework
    (same tensor name and shape; another shape cannot be subtracted and is left out)."""
    out = []
    for r in results:
        before = earlier.get(r.framework)
        if before is None:
            out.append(r)
            continue
        tensors = []
        for t in r.tensors:
            old = before.tensor(t.name)
            extra = (
                {}
                if old is None or tuple(old.shape) != tuple(t.shape)
                else {earlier_mode(m, label): g for m, g in old.grads.items() if m in MODES}
            )
            tensors.append(replace(t, grads={**t.grads, **extra}) if extra else t)
        out.append(replace(r, tensors=tuple(tensors)))
    return out


def against_pairs(
    have: Sequence[str], results: Sequence[RunResult], framework: str, label: str
) -> list[tuple[str, str]]:
    """(mode, earlier mode) of each mode in `have` an earlier gradient came with, custom first
    (the gradient a fix changes; default and numeric move only with the settings)."""
    present = {m for r in results if r.framework == framework for t in r.tensors for m in t.grads}
    ordered = sorted(have, key=lambda m: m != Mode.CUSTOM)
    return [(m, earlier_mode(m, label)) for m in ordered if earlier_mode(m, label) in present]
