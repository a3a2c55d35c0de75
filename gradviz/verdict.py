"""The verdicts, as one vocabulary (DESIGN.md "Verdicts"): each name with its rank, whether it
passes, its glyph in the op tree, its label in the terminal and its colours (plots/palette.py and
the window's theme read them). No imports beyond the standard
library: `import gradviz` reads it (gradviz.op(expect=...)) and loads nothing else.

A Verdict is a str: JSON, comparisons with the names ("match") and dict keys work as before."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Verdict(StrEnum):
    # least severe first (rank): no-gradient says nothing about the op, so it never hides
    # another; unchecked outranks the passing verdicts (an op with one has not passed)
    NO_GRADIENT = "no-gradient"
    MATCH = "match"
    SURROGATE = "surrogate"
    UNCHECKED = "unchecked"
    DIFFERS = "differs"
    NON_FINITE = "non-finite"
    BROKEN = "broken"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return _ORDER.index(self)

    @property
    def passes(self) -> bool:
        """The custom gradient passed: it agrees with the truth, or differs from it only where
        the true derivative is zero or undefined (DESIGN.md)."""
        return self in (Verdict.MATCH, Verdict.SURROGATE)

    @property
    def glyph(self) -> str:
        """The op tree's mark (no-gradient has none: it marks no op)."""
        return _GLYPHS[self]

    @property
    def label(self) -> str:
        """How the terminal writes it: the failing ones in capitals, to be seen in a table."""
        return _LABELS.get(self, self.value)

    @property
    def text_colour(self) -> str:
        """Its words' colour on a light background (plots, the grid's headers, the op tree)."""
        return _COLOURS[self][0]

    @property
    def tint(self) -> str:
        """A light background that carries it (a grid row's header)."""
        return _COLOURS[self][1]


_ORDER = tuple(Verdict)
_GLYPHS = {
    Verdict.NO_GRADIENT: "",
    Verdict.MATCH: "✓",
    Verdict.SURROGATE: "≈",
    Verdict.UNCHECKED: "?",
    Verdict.DIFFERS: "≠",
    Verdict.NON_FINITE: "∞",
    Verdict.BROKEN: "⚠",
    Verdict.ERROR: "✗",
}
_LABELS = {
    Verdict.DIFFERS: "DIFFERS",
    Verdict.NON_FINITE: "NON-FINITE",
    Verdict.ERROR: "ERROR",
    Verdict.NO_GRADIENT: "no gradient",
}

# (text, tint): no-gradient and unchecked are grey, nothing compared, nothing to alarm, no pass
_COLOURS = {
    Verdict.MATCH: ("#1b6e1b", "#d8f0d8"),
    Verdict.SURROGATE: ("#1f4fa3", "#dde8fb"),
    Verdict.DIFFERS: ("#a3560d", "#fbe3c8"),
    Verdict.NON_FINITE: ("#b01c1c", "#f7d0d0"),
    Verdict.BROKEN: ("#6b3fa0", "#e4d9f2"),
    Verdict.ERROR: ("#9a0d0d", "#f4b6b6"),
    Verdict.NO_GRADIENT: ("#555555", "#eeeeee"),
    Verdict.UNCHECKED: ("#555555", "#eeeeee"),
}

NAMES = tuple(v.value for v in Verdict)
PASSING = tuple(v for v in Verdict if v.passes)


def worst(verdicts: Iterable[str]) -> Verdict | None:
    """The most severe of `verdicts` (names or Verdicts); None for none. Unknown names raise."""
    found = [Verdict(v) for v in verdicts]
    return max(found, key=lambda v: v.rank) if found else None
