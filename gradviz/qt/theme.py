"""The window's names for the palette (gradviz/plots/palette.py, shared with every export), and
the marks only widgets use (worker states, op marks in the tree, the checks matrix)."""
from __future__ import annotations

from gradviz.plots.palette import (
    FRAMEWORK_COLORS,
    INF_COLOR,
    MODE_COLORS,
    NAN_COLOR,
    PLOT_SCHEMES,
    VERDICT_TEXT,
    VERDICT_TINT,
)
from gradviz.plots.palette import FRAMEWORK_LABEL as FRAMEWORK_LABELS

VERDICT_COLORS = VERDICT_TINT        # background tints for tables and row headers

__all__ = ["FRAMEWORK_COLORS", "FRAMEWORK_LABELS", "INF_COLOR", "MODE_COLORS", "NAN_COLOR",
           "VERDICT_COLORS", "VERDICT_TEXT", "STATE_COLORS", "OP_MARKS", "CHECK_STYLES",
           "verdict_color", "THEME_CHOICES", "scheme_of", "apply_plot_scheme"]

STATE_COLORS = {"starting": "#8a6d00", "ready": "#1b6e1b", "busy": "#1f4fa3",
                "failed": "#9a0d0d", "stopped": "#666666"}

# Progress of one op in one framework, then its worst verdict, as the op tree shows it
# (gradviz.app.state.AppState.op_mark): a glyph and its colour.
OP_MARKS = {"queued": ("…", "#666666"), "running": ("▶", "#1f4fa3"), "cancelled": ("⊘", "#666666"),
            "ok": ("✓", "#1b6e1b"), "match": ("✓", VERDICT_TEXT["match"]),
            "surrogate": ("≈", VERDICT_TEXT["surrogate"]), "differs": ("≠", VERDICT_TEXT["differs"]),
            "non-finite": ("∞", VERDICT_TEXT["non-finite"]), "broken": ("⚠", VERDICT_TEXT["broken"]),
            "error": ("✗", VERDICT_TEXT["error"])}

# Contract checks (--checks), as the checks matrix shows them: (icon, text colour, background).
CHECK_STYLES = {"pass": ("✓", "#1b6e1b", "#d8f0d8"), "fail": ("✗", "#9a0d0d", "#f7d0d0"),
                "skip": ("–", "#666666", "#eeeeee"), "pending": ("…", "#8a6d00", "#fff6d6")}


def verdict_color(verdict: str) -> str:
    return VERDICT_TINT.get(verdict, "#ffffff")


THEME_CHOICES = ("follow desktop", "light", "dark")   # View > Theme, saved as view/theme


def scheme_of(desktop_scheme, choice: str = "follow desktop") -> str:
    """"light" or "dark": the user's choice, else the desktop's (a Qt.ColorScheme; Unknown, as
    under the offscreen platform, reads as light)."""
    if choice in ("light", "dark"):
        return choice
    from PySide6.QtCore import Qt
    return "dark" if desktop_scheme == Qt.ColorScheme.Dark else "light"


def apply_plot_scheme(root, scheme: str) -> None:
    """Plots under `root` (and those made later) on the scheme's background, with axes and
    labels in its foreground. Exports do not read this: they stay on white."""
    import pyqtgraph as pg
    colors = PLOT_SCHEMES[scheme]
    pg.setConfigOptions(background=colors["background"], foreground=colors["foreground"])
    for view in root.findChildren(pg.GraphicsView):
        view.setBackground(colors["background"])
        for item in view.scene().items():
            if isinstance(item, pg.AxisItem):
                item.setPen(colors["foreground"])
                item.setTextPen(colors["foreground"])
