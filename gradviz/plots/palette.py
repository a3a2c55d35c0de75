"""The one palette: every colour the window, the exports and the CLI's figures use (no Qt).

The window's grid, tables and tree read these through gradviz/qt/theme.py; the exporters read the
figure description, which takes its colours from here. A colour changed here changes everywhere.
"""

from __future__ import annotations

import numpy as np

from gradviz.verdict import Verdict
from gradviz.vocab import Framework, Mode

# Plot colours per mode (readable in print and by most colour-blind readers).
MODE_COLORS: dict[str, str] = {
    Mode.DEFAULT: "#3467b0",
    Mode.CUSTOM: "#e07b00",
    Mode.NUMERIC: "#2a9d4b",
}
OTHER_COLOR = "#444444"  # a series of no known mode
FRAMEWORK_DASH = {"torch": "solid", "tf": "dash", "jax": "dot"}
FRAMEWORK_LABEL: dict[str, str] = {fw: fw.label for fw in Framework}
FRAMEWORK_COLORS = {"torch": "#ee4c2c", "tf": "#ff8f00", "jax": "#5e35b1"}

# the verdicts' colours are theirs (gradviz/verdict.py), keyed here by name for the plots
VERDICT_TEXT = {v.value: v.text_colour for v in Verdict}
VERDICT_TINT = {v.value: v.tint for v in Verdict}

NAN_COLOR = "#c62828"  # NaN markers and non-finite counts
INF_COLOR = "#8000c0"  # +Inf / -Inf markers
ZERO_LINE = "#bbbbbb"
DIAGONAL = "#8a8a8a"  # y = x in scatter panels
NOTE_TEXT = "#666666"  # notes and info lines under a plot
EMPTY_BACKGROUND = "#f3f3f3"  # a panel with nothing to draw


def mode_color(mode: str) -> str:
    """The colour of a mode; of a "custom~default" scatter pair, its first mode (the dots are
    custom's values); of a "custom−default" difference, the mode it is measured against."""
    if "−" in mode:  # against an earlier run: "custom (run 2)" has custom's colour
        return MODE_COLORS.get(mode.split("−")[1].split(" (")[0], OTHER_COLOR)
    return MODE_COLORS.get(mode.split("~")[0], OTHER_COLOR)


# Heatmaps: blue (negative), white (zero), red (positive); NaN black, +Inf/-Inf saturated.
_NEG, _ZERO, _POS = (
    np.array([33, 102, 172.0]),
    np.array([247, 247, 247.0]),
    np.array([178, 24, 43.0]),
)


def diverging_rgb(data, top: float) -> np.ndarray:
    """uint8 RGB of `data` on the diverging map, |value| = top at full colour."""
    d = np.asarray(data, dtype=np.float64)
    t = np.clip(np.nan_to_num(d / (top or 1.0), nan=0.0, posinf=1.0, neginf=-1.0), -1, 1)
    a = np.abs(t)[..., None]
    col = np.where(t[..., None] >= 0, _ZERO + (_POS - _ZERO) * a, _ZERO + (_NEG - _ZERO) * a)
    col[np.isnan(d)] = (0, 0, 0)
    return col.round().astype(np.uint8)


def diverging_lut(points: int = 256) -> np.ndarray:
    """The same map as a lookup table from -top (index 0) to +top (last), for image items."""
    return diverging_rgb(np.linspace(-1.0, 1.0, points), 1.0)


# The window's plot surfaces per colour scheme. Exports always use "light": a figure file goes
# into papers and slides, printed on white whatever the desktop looked like when it was made.
# The mode colours stay the same in both (a colour means one mode everywhere); on "dark" they
# keep at least 3:1 contrast, the WCAG minimum for lines and marks.
PLOT_SCHEMES = {
    "light": {"background": "#ffffff", "foreground": "#333333"},
    "dark": {"background": "#161616", "foreground": "#d8d8d8"},
}

# The ink of a figure painted with QPainter (gradviz/qt/export/flow.py): exports use "light"; the
# window's flow chart paints with its scheme's (text at >= 4.5:1 on its background).
FIGURE_INK = {
    "light": {
        "background": "#ffffff",
        "text": "#222222",
        "subtitle": "#555555",
        "label": "#333333",
        "note": "#6a6a6a",
        "frame": "#9a9a9a",
        "grid": "#e3e3e3",
        "ticks": "#444444",
        "empty": "#777777",
        "mark": "#555555",
    },
    "dark": {
        "background": PLOT_SCHEMES["dark"]["background"],
        "text": "#e0e0e0",
        "subtitle": "#ababab",
        "label": "#cccccc",
        "note": "#a6a6a6",
        "frame": "#5e5e5e",
        "grid": "#2e2e2e",
        "ticks": "#bbbbbb",
        "empty": "#a6a6a6",
        "mark": "#ababab",
    },
}


def contrast_ratio(a: str, b: str) -> float:
    """WCAG contrast of two "#rrggbb" colours: 1 (same) to 21 (black on white)."""

    def lum(c: str) -> float:
        rgb = [int(c[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        lin = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
