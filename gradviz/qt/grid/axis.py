"""The grid's axes and fonts: tick labels written as the exports write them, spaced so they
never run into each other, and the small fonts of the plots' notes and readout."""

from __future__ import annotations

import pyqtgraph as pg

from gradviz.plots.ticks import fmt, nice_ticks

_FONTS: dict = {}


class CompactAxis(pg.AxisItem):
    """Tick labels written as the exports write them ("2e5", not "200000" running into
    "400000"), and whole-number ticks where the axis counts cells (heatmaps)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.integer = False
        # pyqtgraph rescales a unitless axis whose values are below 1 ("400" titled "(x0.001)",
        # a log10 |g| of 0.4 read as 400); the exports write the value itself ("4e-4")
        self.enableAutoSIPrefix(False)

    def tickStrings(self, values, scale, spacing):
        strings = [fmt(v * scale) for v in values]
        fit = getattr(self, "_fit", None)  # (major step, pixels per unit): horizontal axes
        if fit is not None and strings and spacing < fit[0]:
            # a minor level's labels only where they all fit (pyqtgraph's own test is the share
            # of the axis its labels fill, which let "100150" through)
            if spacing * fit[1] < max(map(self._label_width, strings)) + LABEL_GAP:
                return []
        return strings

    def tickSpacing(self, minVal, maxVal, size):
        if self.integer:
            self._fit = None  # a reused plot's values view set it
            # a label per ~25 px: a 110 px heatmap of 30 columns showed one tick ("20")
            ticks = nice_ticks(minVal, maxVal, target=max(2, int(size // 25)), integer=True)
            return [(ticks[1] - ticks[0] if len(ticks) > 1 else 1.0, 0.0)]
        levels = super().tickSpacing(minVal, maxVal, size)
        if not levels or self.orientation not in ("bottom", "top") or not maxVal > minVal:
            self._fit = None
            return levels
        # pyqtgraph draws every major label, fitting or not: a narrow zoomed plot read
        # "60 80 100120140". Widen the major step (1, 2, 5 × 10^k) until its labels fit.
        major = levels[0][0]
        wide = major_step_for_labels(major, minVal, maxVal, size, self._label_width)
        self._fit = (wide, size / (maxVal - minVal))
        if wide == major:
            return levels
        return [(wide, 0.0), (wide / (2.5 if _mantissa(wide) == 5 else 2), 0.0)][: len(levels)]

    def _label_width(self, text: str) -> float:
        from PySide6.QtGui import QFontMetricsF

        return QFontMetricsF(self.style.get("tickFont") or small_font()).horizontalAdvance(text)


LABEL_GAP = 6.0  # pixels at least between two tick labels of a horizontal axis


def _mantissa(step: float) -> int:
    import math

    return int(round(step / 10 ** math.floor(math.log10(step) + 1e-9)))


def major_step_for_labels(step: float, lo: float, hi: float, size: float, width) -> float:
    """The smallest of step, then the next 1-2-5 steps, whose tick labels (`width(text)` pixels
    wide, written as fmt writes them) fit between their ticks on an axis of `size` pixels."""
    import math

    per_unit = size / (hi - lo)
    for _ in range(8):
        first = math.ceil(lo / step) * step
        values = [first + i * step for i in range(int((hi - first) / step) + 1)][:40]
        widest = max((width(fmt(v)) for v in values), default=0.0)
        if step * per_unit >= widest + LABEL_GAP or len(values) <= 1:
            return step
        m = _mantissa(step)
        step = step * (2.5 if m == 2 else 2.0)  # 1 -> 2 -> 5 -> 10
    return step


def small_font(size: int = 7):
    if size not in _FONTS:
        from PySide6.QtGui import QFont

        _FONTS[size] = QFont()
        _FONTS[size].setPointSize(size)
    return _FONTS[size]
