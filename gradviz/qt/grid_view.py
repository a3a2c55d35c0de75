"""The gradient grid: one row per tensor of the graph, one column per (framework, mode).

Each row has its own view (values by index, histogram with shared bins, custom-vs-default
scatter, heatmap for 2-D, gradient against the input value) and links the axes of its cells so
equal gradients look equal. Absent gradients and failed modes get a cell that says so; NaN/Inf
are marked and counted. Plot data comes from gradviz.plots.series (decimated, Qt-free).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QFrame, QHBoxLayout, QLabel, QScrollArea, QSizePolicy,
                               QVBoxLayout, QWidget)

from gradviz.model import FIXED_DTYPES, FRAMEWORKS, MODES, ROLES, RunResult, TensorResult
from gradviz.plots import series as ps
from gradviz.qt.theme import (FRAMEWORK_LABELS, INF_COLOR, MODE_COLORS, NAN_COLOR, VERDICT_TEXT,
                              verdict_color)

pg.setConfigOptions(antialias=False, background="w", foreground="#333")

VIEWS = {"values": "values by index", "histogram": "histogram", "scatter": "custom vs default",
         "heatmap": "heatmap (2-D)", "vs_input": "gradient vs input"}
ROW_HEIGHT = 190
MARKER_LIMIT = 2000
COMPUTING = "numeric: computing…"


@dataclass
class Cell:
    """One plot of the grid; `data` is what was drawn (tests and exporters read it)."""
    framework: str
    mode: str                      # "default" | "custom" | "numeric" | "scatter"
    plot: pg.PlotItem
    has_data: bool
    message: str = ""              # why there is no data
    data: dict = field(default_factory=dict)


def columns_for(results: dict[str, RunResult], modes) -> list[tuple[str, str]]:
    """(framework, mode) in display order: per framework default, custom, then numeric."""
    return [(fw, m) for fw in FRAMEWORKS if fw in results for m in MODES if m in modes]


def tensor_names(results: dict[str, RunResult]) -> list[tuple[str, str]]:
    """(name, role) of every tensor of either framework, ordered by role then first appearance."""
    seen: dict[str, tuple[int, int, str]] = {}
    n = 0
    for fw in FRAMEWORKS:
        r = results.get(fw)
        for t in (r.tensors if r else ()):
            if t.name not in seen:
                seen[t.name] = (ROLES.index(t.role) if t.role in ROLES else len(ROLES), n, t.role)
                n += 1
    return [(name, v[2]) for name, v in sorted(seen.items(), key=lambda kv: kv[1][:2])]


def views_for(tensors: list[Optional[TensorResult]]) -> list[str]:
    ok = [t for t in tensors if t is not None]
    out = ["values", "histogram", "scatter"]
    if any(len(t.shape) >= 2 for t in ok):
        out.append("heatmap")
    out.append("vs_input")
    return out


class TensorRow(QFrame):
    viewChanged = Signal(str, str)      # tensor, view
    clicked = Signal(str)

    def __init__(self, name: str, role: str, parent=None):
        super().__init__(parent)
        self.name, self.role = name, role
        self.cells: list[Cell] = []
        self.plots: list[pg.PlotItem] = []      # kept across redraws: creating one costs ~30 ms
        # plots taken out of the layout when a view needs fewer columns: kept for the next wider
        # view, never deleted while the row lives (deleting one crashed the window, see _retire)
        self.spare: list[pg.PlotItem] = []
        self.setFrameShape(QFrame.StyledPanel)
        self.setObjectName("tensorRow")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        head = QWidget()
        head.setFixedWidth(150)
        hl = QVBoxLayout(head)
        hl.setContentsMargins(2, 2, 2, 2)
        self.title = QLabel(f"<b>{name}</b>")
        self.title.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.info = QLabel("")
        self.info.setStyleSheet("color: #555; font-size: 11px")
        self.info.setWordWrap(True)
        self.verdicts = QLabel("")
        self.verdicts.setWordWrap(True)
        self.verdicts.setTextFormat(Qt.RichText)
        self.view_box = QComboBox()
        self.view_box.setToolTip("how this tensor's gradients are drawn")
        hl.addWidget(self.title)
        hl.addWidget(self.info)
        hl.addWidget(self.verdicts)
        hl.addStretch(1)
        hl.addWidget(self.view_box)
        lay.addWidget(head)
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.canvas.ci.setSpacing(2)
        self.canvas.ci.setContentsMargins(1, 1, 1, 1)
        lay.addWidget(self.canvas, 1)
        self.setMinimumHeight(ROW_HEIGHT)
        self.view_box.currentIndexChanged.connect(
            lambda _i: self.viewChanged.emit(self.name, self.view_box.currentData() or "values"))
        self.set_highlight(False)

    def mousePressEvent(self, ev):
        self.clicked.emit(self.name)
        super().mousePressEvent(ev)

    def set_views(self, views: list[str], current: str) -> None:
        self.view_box.blockSignals(True)
        self.view_box.clear()
        for v in views:
            self.view_box.addItem(VIEWS[v], v)
        i = self.view_box.findData(current)
        self.view_box.setCurrentIndex(i if i >= 0 else 0)
        self.view_box.blockSignals(False)

    def view(self) -> str:
        return self.view_box.currentData() or "values"

    def set_highlight(self, on: bool) -> None:
        self.highlighted = on
        self.setStyleSheet("#tensorRow { border: 3px solid #1f6fd0; background: #eef4ff; }" if on
                           else "#tensorRow { border: 1px solid #d0d0d0; }")


class GridView(QScrollArea):
    """set_data(pair name, {framework: RunResult}, modes, {framework: OpComparison})."""
    tensorClicked = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWidgetResizable(True)
        self._body = QWidget()
        self._lay = QVBoxLayout(self._body)
        self._lay.setContentsMargins(2, 2, 2, 2)
        self._lay.setSpacing(4)
        self.setWidget(self._body)
        self.rows: dict[str, TensorRow] = {}
        self.results: dict[str, RunResult] = {}
        self.comparisons: dict = {}
        self.series: dict = {}                  # fw -> {(tensor, mode): Series} made off-thread
        self.modes: tuple = MODES
        self.pair = ""
        self.view_choice: dict[str, str] = {}   # tensor name -> view, kept across runs
        # hook(menu, tensor, framework, mode) adds entries to each plot's context menu (exports)
        self.plot_menu_hook = None
        self._placeholder = QLabel()
        self._placeholder.setAlignment(Qt.AlignCenter)
        self._placeholder.setStyleSheet("color: #777; font-size: 15px")
        self.show_message("Load op files and press Run: every gradient of the selected op appears here.")

    # --- public --------------------------------------------------------------------------------
    def show_message(self, text: str) -> None:
        self._clear()
        self._placeholder.setText(text)
        self._placeholder.show()
        self._lay.addWidget(self._placeholder, 1)

    def set_data(self, pair: str, results: dict[str, RunResult], modes=MODES, comparisons=None,
                 series=None) -> bool:
        """Show `results`; `series` ({fw: {(tensor, mode): Series}}) are values curves already
        decimated (gradviz.plots.prepared). Rows and plots of tensors shown before are reused, and
        the very same results as shown now are not drawn again: returns False then."""
        comparisons = dict(comparisons or {})
        if self._same(pair, results, modes, comparisons):
            return False
        self.pair, self.results, self.modes = pair, dict(results), tuple(modes)
        self.comparisons = comparisons
        self.series = {fw: dict(v or {}) for fw, v in (series or {}).items()}
        if not results:
            self.show_message(f"{pair}: not run yet. Press Run.")
            return True
        names = tensor_names(results)
        if not names:
            errs = [f"{FRAMEWORK_LABELS.get(fw, fw)}: {r.error.one_line()}" for fw, r in results.items()
                    if r.error is not None]
            self.show_message(f"{pair}: no tensors.\n" + "\n".join(errs))
            return True
        self._placeholder.hide()
        keep = {name: row for name, row in self.rows.items()
                if any(name == n and row.role == r for n, r in names)}
        for name, row in self.rows.items():
            if name not in keep:
                row.setParent(None)
                row.deleteLater()
        self.rows = {}
        while self._lay.count():                # widgets stay alive; only the order is redone
            item = self._lay.takeAt(0)
            w = item.widget()
            if w is not None and w is not self._placeholder and w not in keep.values():
                w.deleteLater()
        for name, role in names:
            row = keep.get(name)
            if row is None:
                row = TensorRow(name, role)
                row.viewChanged.connect(self._view_changed)
                row.clicked.connect(self.tensorClicked)
            tensors = [r.tensor(name) for r in results.values()]
            row.set_views(views_for(tensors), self.view_choice.get(name, "values"))
            self.rows[name] = row
            self._lay.addWidget(row)
            self._fill(row)
        self._lay.addStretch(1)
        return True

    def _same(self, pair, results, modes, comparisons) -> bool:
        """The same pair with the very same result and comparison objects as drawn now."""
        if not self.rows or pair != self.pair or tuple(modes) != self.modes:
            return False
        if list(results) != list(self.results) or list(comparisons) != list(self.comparisons):
            return False
        return all(results[k] is self.results[k] for k in results) and \
            all(comparisons[k] is self.comparisons[k] for k in comparisons)

    def set_view(self, tensor: str, view: str) -> None:
        row = self.rows[tensor]
        i = row.view_box.findData(view)
        if i < 0:
            raise ValueError(f"view {view!r} is not offered for {tensor}")
        row.view_box.setCurrentIndex(i)     # emits viewChanged -> redraw

    def highlight(self, tensor: Optional[str]) -> None:
        for name, row in self.rows.items():
            row.set_highlight(name == tensor)
        if tensor in self.rows:
            self.ensureWidgetVisible(self.rows[tensor], 10, 10)

    def cells(self) -> list[Cell]:
        return [c for row in self.rows.values() for c in row.cells]

    def plot_count(self) -> int:
        return sum(1 for c in self.cells() if c.has_data)

    # --- building ------------------------------------------------------------------------------
    def _clear(self) -> None:
        for row in self.rows.values():
            row.setParent(None)
            row.deleteLater()
        self.rows.clear()
        while self._lay.count():
            item = self._lay.takeAt(0)
            w = item.widget()
            if w is not None and w is not self._placeholder:
                w.deleteLater()

    def _view_changed(self, tensor: str, view: str) -> None:
        self.view_choice[tensor] = view
        row = self.rows.get(tensor)
        if row is not None:
            self._fill(row)

    def _fill(self, row: TensorRow) -> None:
        row.cells = []
        row.used = 0                           # plots of row.plots taken by this fill
        ts = {fw: r.tensor(row.name) for fw, r in self.results.items()}
        any_t = next((t for t in ts.values() if t is not None), None)
        if any_t is not None:
            shape = "×".join(map(str, any_t.shape)) or "scalar"
            row.info.setText(f"{row.role} · {shape} · {any_t.dtype}")
        row.verdicts.setText(self._verdict_html(row.name))
        verdicts = [self._verdict(fw, row.name) for fw in self.results]
        worst = next((v for v in ("error", "non-finite", "broken", "differs") if v in verdicts), None)
        row.setToolTip(self._explanations(row.name))
        view = row.view()
        if view == "scatter":
            self._fill_scatter(row, ts)
        else:
            self._fill_per_mode(row, ts, view)
        for plot in row.plots[row.used:]:       # fewer columns than last time
            _retire(row, plot)
        del row.plots[row.used:]
        _link(row.cells)
        if self.plot_menu_hook is not None:
            for c in row.cells:
                menu = c.plot.vb.menu
                _drop_menu_actions(c.plot)
                if menu is not None:
                    before = set(menu.actions())
                    menu.addSeparator()
                    self.plot_menu_hook(menu, row.name, c.framework, c.mode)
                    # removed again when the plot is reused for another tensor or mode
                    c.plot._gv_actions = [a for a in menu.actions() if a not in before]
        row.title.setStyleSheet(f"color: {VERDICT_TEXT.get(worst, '#000')}" if worst else "")

    def _plot(self, row: TensorRow, col: int, kind=None) -> pg.PlotItem:
        """The plot of column `col`: the one drawn there last time (kept as it is when it showed
        the same `kind` of drawing, which then only gets new data; else emptied), or a new one."""
        row.used = col + 1
        if col < len(row.plots):
            plot = row.plots[col]
            if kind is None or getattr(plot, "_gv_kind", None) != kind:
                _reset(plot)
            else:
                _wait(plot, False)
        elif row.spare:
            plot = row.spare.pop()
            row.canvas.addItem(plot, row=0, col=col)
            row.plots.append(plot)
        else:
            plot = row.canvas.addPlot(row=0, col=col)
            row.plots.append(plot)
        plot._gv_kind = kind
        return plot

    def _verdict(self, fw: str, tensor: str) -> Optional[str]:
        comp = self.comparisons.get(fw)
        for t in (comp.tensors if comp else ()):
            if t.name == tensor:
                return t.verdict
        return None

    def _verdict_html(self, tensor: str) -> str:
        parts = []
        for fw in self.results:
            v = self._verdict(fw, tensor)
            if v:
                parts.append(f"<span style='background:{verdict_color(v)}; color:{VERDICT_TEXT.get(v, '#000')}'>"
                             f"&nbsp;{fw}: {v}&nbsp;</span>")
        return "<br>".join(parts)

    def _explanations(self, tensor: str) -> str:
        out = []
        for fw, comp in self.comparisons.items():
            for t in (comp.tensors if comp else ()):
                if t.name == tensor and t.explanation:
                    out.append(f"{fw}: {t.verdict} — {t.explanation}")
        return "\n".join(out)

    def _columns(self, row: TensorRow) -> list[tuple[str, str]]:
        return columns_for(self.results, self.modes)

    def _fill_per_mode(self, row: TensorRow, ts: dict, view: str) -> None:
        cols = self._columns(row)
        grads = {}
        for fw, mode in cols:
            t = ts.get(fw)
            grads[(fw, mode)] = t.grad(mode) if t is not None else None
        edges = ps.shared_edges(list(grads.values())) if view == "histogram" else None
        levels = None
        if view == "heatmap":
            rng = ps.finite_range(list(grads.values()))
            m = max(abs(rng[0]), abs(rng[1])) if rng else 1.0
            levels = (-(m or 1.0), m or 1.0)
        for col, (fw, mode) in enumerate(cols):
            g = grads[(fw, mode)]
            missing = self._missing(fw, ts.get(fw), mode)
            curve, kind = None, None
            if view == "values" and g is not None:
                curve = self._prepared(fw, row.name, mode) or ps.minmax_decimate(g)
                if not curve.nonfinite.total:
                    # what the plot looks like apart from its data: same kind -> only setData
                    kind = ("values", mode, curve.n <= 60, curve.n if curve.decimated else 0)
            if missing == COMPUTING and _waitable(row, col, view, mode):
                # last run's numeric curve stays in place, hidden under one reusable note: a
                # re-run then only sets data, with no reset, axes or layout change (~90 ms less)
                plot = row.plots[col]
                row.used = col + 1
                _wait(plot, True)
                row.cells.append(Cell(fw, mode, plot, False, missing))
                continue
            plot = self._plot(row, col, kind)
            _style(plot, f"{FRAMEWORK_LABELS.get(fw, fw)} · {mode}", MODE_COLORS[mode])
            if g is None and missing:
                if mode == "numeric" and ts.get(fw) is not None and ts[fw].numeric is not None \
                        and ts[fw].numeric.method == "projection":
                    row.cells.append(self._projection_cell(plot, fw, ts[fw]))
                    continue
                _message(plot, missing)
                row.cells.append(Cell(fw, mode, plot, False, missing))
                continue
            cell = Cell(fw, mode, plot, True)
            if view == "histogram":
                self._draw_hist(cell, g, edges)
            elif view == "heatmap":
                self._draw_heatmap(cell, g, levels)
            elif view == "vs_input":
                x = self._input_values(ts.get(fw))
                if x is None or np.size(x) != np.size(g):
                    _message(plot, "no input of the same shape:\nnot an elementwise view")
                    cell.has_data, cell.message = False, "no matching input"
                else:
                    self._draw_vs_input(cell, x, g)
            else:
                self._draw_values(cell, g, curve)
            row.cells.append(cell)

    def _missing(self, fw: str, t: Optional[TensorResult], mode: str) -> str:
        """Why (fw, mode) has no gradient for this tensor, or '' when it has one."""
        r = self.results.get(fw)
        if r is None:
            return "not run"
        if r.status != "ok" and r.error is not None:
            return f"run failed\n{r.error.type}: {_short(r.error.message)}"
        if t is not None and t.dtype in FIXED_DTYPES:
            return f"{t.dtype} input: no gradient"
        if getattr(r, "partial", False) and mode == "numeric" and (t is None or t.grad(mode) is None):
            return COMPUTING
        if mode in r.mode_errors:
            e = r.mode_errors[mode]
            return f"{mode} raised {e.type}\n{_short(e.message)}" + (f"\n{_short_where(e.where)}" if e.where else "")
        if t is None:
            return f"no tensor '{self._row_name(t)}' in {fw}"
        if t.grad(mode) is not None:
            return ""
        if mode in t.absent:
            why = _short(t.absent[mode])
            return why if why.lower().startswith("no gradient") else f"no gradient\n{why}"
        return "not computed"

    @staticmethod
    def _row_name(t) -> str:
        return t.name if t is not None else "?"

    # --- drawing -------------------------------------------------------------------------------
    def _prepared(self, fw: str, tensor: str, mode: str):
        return self.series.get(fw, {}).get((tensor, mode))

    def _draw_values(self, cell: Cell, g, s=None) -> None:
        s = s if s is not None else ps.minmax_decimate(g)
        curve = getattr(cell.plot, "_gv_curve", None)
        if curve is not None:                   # the same kind of plot as before: new data only
            curve.setData(s.x, s.y)
            cell.data = {"x": s.x, "y": s.y, "n": s.n, "decimated": s.decimated}
            return
        pen = pg.mkPen(MODE_COLORS.get(cell.mode, "#333"), width=1)
        cell.plot.addLine(y=0, pen=pg.mkPen("#bbbbbb", width=1))
        item = cell.plot.plot(s.x, s.y, pen=pen, symbol="o" if s.n <= 60 else None, symbolSize=4,
                              symbolBrush=MODE_COLORS.get(cell.mode), symbolPen=None)
        if getattr(cell.plot, "_gv_kind", None) is not None:
            cell.plot._gv_curve = item          # reusable: no markers or notes that may change
        cell.data = {"x": s.x, "y": s.y, "n": s.n, "decimated": s.decimated}
        self._mark_nonfinite(cell, s.nonfinite)
        if s.decimated:
            _note(cell.plot, f"{s.n:,} values, min/max per bucket")

    def _mark_nonfinite(self, cell: Cell, nf) -> None:
        if not nf.total:
            return
        for xs, symbol, color in ((nf.nan_x, "x", NAN_COLOR), (nf.posinf_x, "t1", INF_COLOR),
                                  (nf.neginf_x, "t", INF_COLOR)):
            if len(xs):
                xs = xs[:MARKER_LIMIT]
                cell.plot.plot(xs, np.zeros(len(xs)), pen=None, symbol=symbol, symbolSize=9,
                               symbolBrush=color, symbolPen=pg.mkPen(color))
        cell.data["nonfinite"] = nf
        _warn(cell.plot, "⚠ " + nf.text())

    def _draw_hist(self, cell: Cell, g, edges) -> None:
        h = ps.histogram(g, edges)
        cell.plot.plot(h.edges, h.counts, stepMode="center", fillLevel=0,
                       brush=pg.mkBrush(MODE_COLORS.get(cell.mode) + "80"),
                       pen=pg.mkPen(MODE_COLORS.get(cell.mode)))
        cell.data = {"edges": h.edges, "counts": h.counts, "n": h.n}
        if h.nonfinite.total:
            cell.data["nonfinite"] = h.nonfinite
            _warn(cell.plot, "⚠ " + h.nonfinite.text() + " (not binned)")

    def _draw_heatmap(self, cell: Cell, g, levels) -> None:
        hm = ps.heatmap(g)
        if hm is None:
            _message(cell.plot, "1-D tensor: no heatmap")
            cell.has_data, cell.message = False, "1-D"
            return
        img = np.where(np.isfinite(hm.data), hm.data, 0.0)
        item = pg.ImageItem(img.T)
        item.setLookupTable(pg.colormap.get("CET-D1").getLookupTable(nPts=256))
        item.setLevels(levels)
        cell.plot.addItem(item)
        cell.plot.invertY(True)
        cell.plot.setAspectLocked(False)
        bad = np.argwhere(~np.isfinite(hm.data))[:MARKER_LIMIT]
        if len(bad):
            cell.plot.plot(bad[:, 1] + 0.5, bad[:, 0] + 0.5, pen=None, symbol="x", symbolSize=8,
                           symbolBrush=NAN_COLOR, symbolPen=pg.mkPen(NAN_COLOR))
        cell.data = {"image": hm.data, "block": hm.block, "levels": levels}
        if hm.nonfinite.total:
            cell.data["nonfinite"] = hm.nonfinite
            _warn(cell.plot, "⚠ " + hm.nonfinite.text())
        if hm.block != (1, 1):
            _note(cell.plot, f"{hm.block[0]}×{hm.block[1]} blocks, largest |value|")

    def _input_values(self, t: Optional[TensorResult]):
        """The x axis of 'gradient vs input': the tensor's own value for inputs and params, else
        the first input of the same size (the op's argument for an elementwise op)."""
        if t is None:
            return None
        if t.role in ("input", "param") and t.value is not None:
            return t.value
        r = next((r for r in self.results.values() if r.tensor(t.name) is t), None)
        for other in (r.tensors if r else ()):
            if other.role == "input" and other.value is not None and np.size(other.value) == np.size(t.value):
                return other.value
        return None

    def _draw_vs_input(self, cell: Cell, x, g) -> None:
        s = ps.vs_input(x, g)
        color = MODE_COLORS.get(cell.mode, "#333")
        cell.plot.addLine(y=0, pen=pg.mkPen("#bbbbbb", width=1))
        cell.plot.plot(s.x, s.y, pen=pg.mkPen(color, width=1), symbol="o", symbolSize=3,
                       symbolBrush=color, symbolPen=None)
        cell.plot.setLabel("bottom", "input value")
        cell.data = {"x": s.x, "y": s.y, "n": s.n}
        self._mark_nonfinite(cell, s.nonfinite)
        if s.dropped:
            _note(cell.plot, f"{s.dropped} inputs not finite: not placed")

    def _fill_scatter(self, row: TensorRow, ts: dict) -> None:
        col = 0
        for fw in FRAMEWORKS:
            if fw not in self.results:
                continue
            t = ts.get(fw)
            plot = self._plot(row, col)
            col += 1
            _style(plot, f"{FRAMEWORK_LABELS.get(fw, fw)} · custom vs default", MODE_COLORS["custom"])
            why = self._missing(fw, t, "custom") or self._missing(fw, t, "default")
            if why:
                _message(plot, why)
                row.cells.append(Cell(fw, "scatter", plot, False, why))
                continue
            sc = ps.scatter(t.grad("default"), t.grad("custom"))
            rng = ps.finite_range([sc.x, sc.y]) or (-1.0, 1.0)
            lo, hi = ps.padded_range(*rng)
            plot.plot([lo, hi], [lo, hi], pen=pg.mkPen("#999999", width=1, style=Qt.DashLine))
            plot.plot(sc.x, sc.y, pen=None, symbol="o", symbolSize=4,
                      symbolBrush=MODE_COLORS["custom"], symbolPen=None)
            plot.setLabel("bottom", "default")
            plot.setLabel("left", "custom")
            cell = Cell(fw, "scatter", plot, True, data={"x": sc.x, "y": sc.y, "n": sc.n})
            if sc.shown < sc.n - sc.nonfinite:
                _note(plot, f"{sc.shown:,} of {sc.n:,} points")
            if sc.nonfinite:
                _warn(plot, f"⚠ {sc.nonfinite:,} pairs with NaN/Inf not drawn")
            row.cells.append(cell)

    def _projection_cell(self, plot, fw: str, t: TensorResult) -> Cell:
        """Large tensors get a numeric check on random directions: numeric g·v against each
        analytic mode's g·v; points on the diagonal agree."""
        info = t.numeric
        num = info.projections.get("numeric")
        drawn = {}
        for mode, vals in info.projections.items():
            if mode == "numeric" or num is None:
                continue
            plot.plot(num, vals, pen=None, symbol="o", symbolSize=6,
                      symbolBrush=MODE_COLORS.get(mode, "#333"), symbolPen=None, name=mode)
            drawn[mode] = vals
        rng = ps.finite_range([num] + list(drawn.values())) if num is not None else None
        if rng:
            lo, hi = ps.padded_range(*rng)
            plot.plot([lo, hi], [lo, hi], pen=pg.mkPen("#999999", style=Qt.DashLine))
        plot.setLabel("bottom", "numeric g·v")
        _note(plot, f"{info.directions} random directions")
        return Cell(fw, "numeric", plot, bool(drawn), "" if drawn else "no projections",
                    data={"projections": info.projections})


def _style(plot: pg.PlotItem, title: str, color: str) -> None:
    html = f"<span style='color:{color}; font-size:9pt'>{title}</span>"
    if getattr(plot, "_gv_title", None) != html:      # setTitle lays out HTML: not for nothing
        plot.setTitle(html)
        plot._gv_title = html
    if getattr(plot, "_gv_styled", False):
        return
    plot._gv_styled = True
    plot.showGrid(x=True, y=True, alpha=0.15)
    for ax in ("left", "bottom"):
        # no third tick level: its grid lines are invisible at this size yet double the paint time
        plot.getAxis(ax).setStyle(tickFont=_small_font(), maxTickLevel=1)
    plot.setMenuEnabled(True)


_FONTS: dict = {}


def _small_font(size: int = 7):
    if size not in _FONTS:
        from PySide6.QtGui import QFont
        _FONTS[size] = QFont()
        _FONTS[size].setPointSize(size)
    return _FONTS[size]


def _message(plot: pg.PlotItem, text: str) -> None:
    plot.hideAxis("left")
    plot.hideAxis("bottom")
    plot.setMouseEnabled(False, False)
    plot.vb.setBackgroundColor("#f3f3f3")
    import textwrap
    text = "\n".join(textwrap.fill(line, 24) for line in text.splitlines())
    item = pg.TextItem(text, color="#555", anchor=(0.5, 0.5))
    item.setFont(_small_font(8))
    plot.addItem(item)
    item.setPos(0.5, 0.5)
    plot.setXRange(0, 1, padding=0)
    plot.setYRange(0, 1, padding=0)


def _corner(plot: pg.PlotItem, text: str, color: str, top: bool) -> None:
    label = pg.TextItem(text, color=color, anchor=(0, 0) if top else (0, 1))
    label.setParentItem(plot.vb)
    label.setPos(2, 0 if top else plot.vb.height())

    def follow(vb):
        label.setPos(2, 0 if top else vb.height())
    plot.vb.sigResized.connect(follow)
    if not hasattr(plot, "_gv_corners"):
        plot._gv_corners = []
    plot._gv_corners.append((label, follow))


def _drop_menu_actions(plot: pg.PlotItem) -> None:
    menu = plot.vb.menu
    for a in getattr(plot, "_gv_actions", ()):
        if menu is not None:
            menu.removeAction(a)
    plot._gv_actions = []


def _reset(plot: pg.PlotItem) -> None:
    """Undo everything a previous fill did to a plot, so it can be drawn again like a new one."""
    plot.setXLink(None)
    _unsync_y(plot)
    plot.clear()
    plot._gv_curve = None
    plot._gv_kind = None
    for label, follow in getattr(plot, "_gv_corners", ()):
        try:
            plot.vb.sigResized.disconnect(follow)
        except (RuntimeError, TypeError):
            pass
        label.setParentItem(None)
        if label.scene() is not None:
            label.scene().removeItem(label)
    plot._gv_corners = []
    _wait(plot, False)
    _drop_menu_actions(plot)
    for ax in ("left", "bottom"):
        axis = plot.getAxis(ax)
        if axis.labelText or axis.labelUnits:
            axis.setLabel(None)
            axis.showLabel(False)
        plot.showAxis(ax)
    plot.setMouseEnabled(True, True)
    plot.vb.setBackgroundColor(None)
    plot.invertY(False)
    plot.enableAutoRange()


def _retire(row: TensorRow, plot: pg.PlotItem) -> None:
    """Take a plot out of the row's layout and keep it in row.spare for reuse. Freeing a removed
    PlotItem (at once, or one event-loop pass later) made Qt crash while painting the row's
    scene (QGraphicsScene drawSubtreeRecursive via GraphicsView.paintEvent, issue 11 item 15);
    kept alive it never did. Plots are freed only with their row, by Qt, all at once."""
    _reset(plot)
    row.canvas.removeItem(plot)
    row.spare.append(plot)


def _waitable(row, col: int, view: str, mode: str) -> bool:
    """Whether column `col` still shows last run's curve of `mode` (a reused values plot)."""
    if view != "values" or col >= len(row.plots):
        return False
    plot = row.plots[col]
    kind = getattr(plot, "_gv_kind", None)
    return kind is not None and kind[:2] == ("values", mode) and getattr(plot, "_gv_curve", None) is not None


def _wait(plot: pg.PlotItem, on: bool) -> None:
    """Show or hide the "computing…" note over a plot whose curve is kept for the next data."""
    note = getattr(plot, "_gv_wait", None)
    curve = getattr(plot, "_gv_curve", None)
    if not on:
        if note is None:
            return
        if curve is None:                       # the plot was reset: the note goes with it
            note, follow = note, plot._gv_wait_follow
            try:
                plot.vb.sigResized.disconnect(follow)
            except (RuntimeError, TypeError):
                pass
            note.setParentItem(None)
            if note.scene() is not None:
                note.scene().removeItem(note)
            plot._gv_wait = None
        elif note.isVisible():
            note.hide()
            curve.show()
            for label, _f in getattr(plot, "_gv_corners", ()):
                label.show()
        return
    if note is None:
        note = pg.TextItem(COMPUTING, color="#555", anchor=(0.5, 0.5), fill=pg.mkBrush("#f3f3f3"))
        note.setFont(_small_font(8))
        note.setParentItem(plot.vb)
        note.setZValue(1000)

        def follow(vb):
            note.setPos(vb.width() / 2, vb.height() / 2)
        plot.vb.sigResized.connect(follow)
        follow(plot.vb)
        plot._gv_wait, plot._gv_wait_follow = note, follow
    note.show()
    curve.hide()
    for label, _f in getattr(plot, "_gv_corners", ()):
        label.hide()


def _warn(plot: pg.PlotItem, text: str) -> None:
    _corner(plot, text, NAN_COLOR, top=True)


def _note(plot: pg.PlotItem, text: str) -> None:
    _corner(plot, text, "#777777", top=False)


def _link(cells: list[Cell]) -> None:
    """Same axes for every cell of a row: the union of what each cell drew, then linked so a
    zoom in one zooms all (a linked view follows the first one's range, not the union)."""
    # numeric projections have their own axes (g·v per direction): never linked to index plots
    data = [c for c in cells if c.has_data and "projections" not in c.data]
    if not data:
        return
    # a cell waiting for its numeric curve stays linked (its curve comes back in a moment)
    linked = [c.plot for c in cells if c in data or getattr(c.plot, "_gv_wait", None) is not None
              and c.plot._gv_wait.isVisible()]
    xs, ys = [], []
    for c in data:
        d = c.data
        if "counts" in d:
            xs.append(d["edges"])
            ys += [d["counts"], np.zeros(1)]
        elif "x" in d:
            xs.append(d["x"])
            ys.append(d["y"])
            if "nonfinite" in d:
                ys.append(np.zeros(1))
    first = data[0].plot
    xr, yr = ps.finite_range(xs), ps.finite_range(ys)
    xr = ps.padded_range(*xr, pad=0.02) if xr is not None else None
    yr = ps.padded_range(*yr) if yr is not None else None
    same_links = getattr(first, "_gv_linked", None) == [id(p) for p in linked] and \
        all(getattr(p, "_gv_ysync", None) is not None for p in linked) and \
        all(p.vb.linkedView(0) is (None if p is first else first.vb) for p in linked)
    if not same_links:
        # links are two-way: a cell still auto-ranging on its own data would push its range onto
        # the others, so auto range goes off everywhere before linking and the union is set last
        for p in linked:
            p.enableAutoRange(x=False, y=False)
        for p in linked:                        # a reused plot may still be linked as it was
            to = None if p is first else first.vb
            if p.vb.linkedView(0) is not to:
                p.setXLink(to)                  # side by side: pyqtgraph replicates the x range
        _sync_y(linked)
        first._gv_linked = [id(p) for p in linked]
        first._gv_ranges = None
    if getattr(first, "_gv_ranges", None) == (xr, yr) and _shows(first, xr, yr):
        return                                  # the same row as drawn: no re-ranging
    if xr is not None:
        first.setXRange(*xr, padding=0)
    if yr is not None:
        first.setYRange(*yr, padding=0)
    first._gv_ranges = (xr, yr)


def _shows(plot, xr, yr) -> bool:
    """Whether the plot's view is still the range set last (the user may have zoomed since)."""
    (x0, x1), (y0, y1) = plot.vb.viewRange()
    return (xr is None or (x0, x1) == tuple(map(float, xr))) and \
        (yr is None or (y0, y1) == tuple(map(float, yr)))


def _sync_y(plots: list) -> None:
    """One y range for a row, in data coordinates. pyqtgraph's own y link lines views up by
    screen position, which shifts the range of a cell whose plot area sits a few pixels lower."""
    for p in plots:
        _unsync_y(p)
    busy = [False]

    def follow(source):
        def apply(_vb, y_range):
            if busy[0]:
                return
            busy[0] = True
            try:
                for p in plots:
                    if p is not source:
                        p.setYRange(*y_range, padding=0)
            finally:
                busy[0] = False
        return apply

    for p in plots:
        p._gv_ysync = follow(p)
        p.vb.sigYRangeChanged.connect(p._gv_ysync)


def _unsync_y(plot) -> None:
    handler = getattr(plot, "_gv_ysync", None)
    if handler is not None:
        try:
            plot.vb.sigYRangeChanged.disconnect(handler)
        except (RuntimeError, TypeError):
            pass
        plot._gv_ysync = None


def _short(text: str, n: int = 90) -> str:
    text = (text or "").strip().splitlines()[0] if text else ""
    return text if len(text) <= n else text[: n - 1] + "…"


def _short_where(where: str) -> str:
    import os
    path, _, line = where.rpartition(":")
    return f"{os.path.basename(path)}:{line}" if path else where
