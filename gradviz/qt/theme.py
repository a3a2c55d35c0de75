"""Every colour the window's widgets use, for the colour scheme it shows now (light or dark).

The light colours are the palette's (gradviz/plots/palette.py, shared with every export); the
dark ones are derived from them here, so a verdict keeps its hue in both schemes: text colours
are lightened until they read at WCAG's 4.5:1 on the dark surfaces, and table tints become the
verdict's colour mixed into the dark base. Widgets ask `verdict_text`, `verdict_tint`, `ink`, ...
when they fill, and repaint from them when the window switches scheme (gradviz/qt/window_theme.py).
Exports never read the scheme: they stay light.
"""

from __future__ import annotations

import sys
from functools import lru_cache

from gradviz.app.settings_schema import THEMES
from gradviz.plots.palette import (
    EMPTY_BACKGROUND,
    FIGURE_INK,
    FRAMEWORK_COLORS,
    INF_COLOR,
    MODE_COLORS,
    NAN_COLOR,
    NOTE_TEXT,
    PLOT_SCHEMES,
    VERDICT_TEXT,
    VERDICT_TINT,
    ZERO_LINE,
    contrast_ratio,
)
from gradviz.plots.palette import FRAMEWORK_LABEL as FRAMEWORK_LABELS
from gradviz.verdict import Verdict
from gradviz.vocab import CheckStatus

__all__ = [
    "FRAMEWORK_COLORS",
    "FRAMEWORK_LABELS",
    "INF_COLOR",
    "MODE_COLORS",
    "NAN_COLOR",
    "VERDICT_TEXT",
    "STATE_COLORS",
    "OP_MARKS",
    "CHECK_STYLES",
    "THEME_CHOICES",
    "SURFACES",
    "scheme_of",
    "current_scheme",
    "set_current_scheme",
    "surface",
    "ink",
    "verdict_text",
    "verdict_tint",
    "op_mark",
    "check_style",
    "state_color",
    "severity_color",
    "framework_color",
    "plot_text",
    "figure_ink",
    "mark_color",
    "mix",
    "legible",
]

STATE_COLORS = {
    "starting": "#8a6d00",
    "ready": "#1b6e1b",
    "busy": "#1f4fa3",
    "failed": "#9a0d0d",
    "stopped": "#666666",
}

# Progress of one op in one framework, then its worst verdict, as the op tree shows it
# (gradviz.app.state.AppState.op_mark): a glyph and its colour (light scheme; op_mark() for now).
OP_MARKS = {
    "queued": ("…", "#666666"),
    "running": ("▶", "#1f4fa3"),
    "cancelled": ("⊘", "#666666"),
    "ok": ("✓", "#1b6e1b"),
    **{v.value: (v.glyph, VERDICT_TEXT[v]) for v in Verdict if v.glyph},
}

# Contract checks (--checks), as the checks matrix shows them: (icon, text colour, background).
# The icons are the statuses' own glyphs (gradviz/vocab.py).
_CHECK_COLORS = {
    CheckStatus.PASS: ("#1b6e1b", "#d8f0d8"),
    CheckStatus.FAIL: ("#9a0d0d", "#f7d0d0"),
    CheckStatus.SKIP: ("#666666", "#eeeeee"),
    CheckStatus.PENDING: ("#8a6d00", "#fff6d6"),
    # chosen, but the run ended without it: the op's plain run failed, or a cancel
    CheckStatus.NOT_RUN: ("#666666", "#f2f2f2"),
    CheckStatus.CANCELLED: ("#666666", "#f2f2f2"),
}
CHECK_STYLES = {s: (s.glyph, *_CHECK_COLORS[s]) for s in CheckStatus}

SEVERITY_COLORS = {"error": "#9a0d0d", "warning": "#a3560d", "info": "#1f4fa3"}

THEME_CHOICES = THEMES  # View > Theme, saved as view/theme (the settings schema's choices)

# The surfaces widgets paint themselves (the rest comes from the application palette,
# gradviz/qt/app_palette.py). "base" is what tables and trees are drawn on.
SURFACES = {
    "light": {
        "window": "#efefef",
        "base": "#ffffff",
        "alternate": "#f7f7f7",
        "text": "#000000",
        "muted": "#666666",
        "faint": "#888888",
        "error": "#9a0d0d",
        "invalid": "#f7d0d0",
        "row_border": "#d0d0d0",
        "row_focus": "#1f6fd0",
        "row_focus_fill": "#eef4ff",
        "plot": PLOT_SCHEMES["light"]["background"],
        "empty": EMPTY_BACKGROUND,
        "note": NOTE_TEXT,
        "message": "#555555",
        "zero_line": ZERO_LINE,
        "readout_fill": "#ffffff",
        "running": "#1f4fa3",
        "stale": "#a3560d",
    },
    "dark": {
        "window": "#2b2b2b",
        "base": "#1e1e1e",
        "alternate": "#262626",
        "text": "#e6e6e6",
        "muted": "#a8a8a8",
        "faint": "#9a9a9a",
        "error": "#ff8a80",
        "invalid": "#5c2323",
        "row_border": "#454545",
        "row_focus": "#5b9cf0",
        "row_focus_fill": "#1d2b42",
        "plot": PLOT_SCHEMES["dark"]["background"],
        "empty": "#242424",
        "note": "#b0b0b0",
        "message": "#c0c0c0",
        "zero_line": "#4a4a4a",
        "readout_fill": "#2a2a2a",
        "running": "#8ab4f8",
        "stale": "#f0a860",
    },
}

_now = {"scheme": "light"}


def current_scheme() -> str:
    """The scheme the window shows now: "light" or "dark"."""
    return _now["scheme"]


def set_current_scheme(scheme: str) -> None:
    _now["scheme"] = scheme if scheme in SURFACES else "light"


def scheme_of(desktop_scheme, choice: str = "follow desktop") -> str:
    """ "light" or "dark": the user's choice, else the desktop's (a Qt.ColorScheme; Unknown, as
    under the offscreen platform, reads as light)."""
    if choice in ("light", "dark"):
        return choice
    from PySide6.QtCore import Qt

    return "dark" if desktop_scheme == Qt.ColorScheme.Dark else "light"


def surface(name: str, scheme: str | None = None) -> str:
    return SURFACES[scheme or current_scheme()][name]


# --- colour arithmetic (no Qt) -------------------------------------------------------------------
def mix(a: str, b: str, t: float) -> str:
    """ "#rrggbb" a fraction t of the way from colour a to colour b."""
    ca = [int(a[i : i + 2], 16) for i in (1, 3, 5)]
    cb = [int(b[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(ca, cb))


# Text the dark scheme derives aims above WCAG's 4.5:1 minimum: light text on dark at the bare
# minimum looks dim next to the palette's near-white.
DARK_TEXT_RATIO = 5.5


@lru_cache(maxsize=512)
def legible(fg: str, bg: str, ratio: float = 4.5) -> str:
    """`fg` itself when it reads on `bg` at `ratio`, else `fg` moved towards white (on a dark
    background) or black (on a light one) just far enough: the same hue, readable."""
    if contrast_ratio(fg, bg) >= ratio:
        return fg
    toward = (
        "#ffffff" if contrast_ratio("#ffffff", bg) > contrast_ratio("#000000", bg) else "#000000"
    )
    for step in range(1, 21):
        c = mix(fg, toward, step / 20)
        if contrast_ratio(c, bg) >= ratio:
            return c
    return toward


# --- what widgets ask -----------------------------------------------------------------------------
def ink(color: str, scheme: str | None = None) -> str:
    """A text colour (given as its light-scheme value) that reads on the scheme's window and base
    surfaces: in light the palette's own colour, darkened only where it read under 4.5:1 (the
    TensorFlow orange); in dark lightened as needed."""
    scheme = scheme or current_scheme()
    s = SURFACES[scheme]
    ratio = DARK_TEXT_RATIO if scheme == "dark" else 4.5  # light: the palette's, where it reads
    return legible(legible(color, s["window"], ratio), s["base"], ratio)


def mark_color(color: str, scheme: str | None = None) -> str:
    """A line or dot sample beside text (legends): WCAG's 3:1 for marks on the window."""
    scheme = scheme or current_scheme()
    return color if scheme == "light" else legible(color, SURFACES[scheme]["window"], 3.0)


def verdict_tint(verdict: str, scheme: str | None = None) -> str:
    """Background of a table cell or row-header label of this verdict."""
    scheme = scheme or current_scheme()
    if scheme == "light":
        return VERDICT_TINT.get(verdict, "#eeeeee")
    return mix(SURFACES[scheme]["base"], VERDICT_TEXT.get(verdict, "#777777"), 0.3)


def verdict_text(verdict: str, scheme: str | None = None) -> str:
    """Text of this verdict: reads on its tint, the base and the window."""
    scheme = scheme or current_scheme()
    fg = VERDICT_TEXT.get(verdict, SURFACES["light"]["text"])
    ratio = DARK_TEXT_RATIO if scheme == "dark" else 4.5
    return legible(ink(fg, scheme), verdict_tint(verdict, scheme), ratio)


def op_mark(mark: str, scheme: str | None = None) -> tuple[str, str]:
    """(glyph, colour) of an op's mark in the tree ("" for no mark)."""
    glyph, color = OP_MARKS.get(mark, ("", "#666666"))
    return glyph, ink(color, scheme)


def check_style(status, scheme: str | None = None) -> tuple[str, str, str]:
    """(icon, text, background) of a check status in the matrix (None: not chosen)."""
    scheme = scheme or current_scheme()
    icon, fg, bg = CHECK_STYLES.get(status, ("", "#999999", "#ffffff"))
    if scheme == "light":
        return icon, fg, bg
    if status not in CHECK_STYLES:
        return icon, surface("faint", scheme), surface("base", scheme)
    dark_bg = mix(SURFACES[scheme]["base"], fg, 0.3)
    return icon, legible(ink(fg, scheme), dark_bg, DARK_TEXT_RATIO), dark_bg


def state_color(state: str, scheme: str | None = None) -> str:
    """A worker state's colour in the status bar."""
    return ink(STATE_COLORS.get(state, "#333333"), scheme)


def severity_color(severity: str, scheme: str | None = None) -> str:
    """A diagnostic's colour by severity (error, warning, info)."""
    return ink(SEVERITY_COLORS.get(severity, "#333333"), scheme)


def plot_text(color: str, scheme: str | None = None) -> str:
    """Text drawn on a plot (titles, notes, warnings; given as its light value) that reads on the
    scheme's plot and empty-plot backgrounds."""
    scheme = scheme or current_scheme()
    if scheme == "light":
        return color
    s = SURFACES[scheme]
    return legible(legible(color, s["plot"], DARK_TEXT_RATIO), s["empty"], DARK_TEXT_RATIO)


def framework_color(framework: str, scheme: str | None = None) -> str:
    return ink(FRAMEWORK_COLORS.get(framework, "#333333"), scheme)


def figure_ink(scheme: str | None = None) -> dict:
    """The colours the window's flow chart paints with (exports use FIGURE_INK["light"])."""
    return FIGURE_INK[scheme or current_scheme()]


def plot_options(scheme: str | None = None) -> dict:
    """pyqtgraph's default background and foreground for plots on `scheme` (default: current)."""
    colors = PLOT_SCHEMES[scheme or current_scheme()]
    return {"background": colors["background"], "foreground": colors["foreground"]}


def apply_plot_scheme(root, scheme: str) -> None:
    """Plots under `root` (and those made later) on the scheme's background, with axes and
    labels in its foreground. Exports do not read this: they stay on white."""
    pg = sys.modules.get("pyqtgraph")
    if pg is None:  # no plot yet: the grid sets plot_options() when it imports pyqtgraph
        return
    colors = PLOT_SCHEMES[scheme]
    pg.setConfigOptions(background=colors["background"], foreground=colors["foreground"])
    for view in root.findChildren(pg.GraphicsView):
        view.setBackground(colors["background"])
        for item in view.scene().items():
            if isinstance(item, pg.AxisItem):
                item.setPen(colors["foreground"])
                item.setTextPen(colors["foreground"])
