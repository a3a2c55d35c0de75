"""Run settings: devices per framework, graph, shape, dtype, range, seed, upstream, modes,
contract checks, timeout.
Persisted in the settings file by qt/settings_saved.py (app/settings_file.py, checked by its
schema); invalid text is shown in red, never silently replaced.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSpinBox,
    QWidget,
)

from gradviz.app.settings_schema import (
    SEED_RANGE,
    TIMEOUT_DECIMALS,
    TIMEOUT_RANGE,
    device_key,
    run_settings,
)
from gradviz.model import (
    CHECKS,
    DEPTH_RANGE,
    DTYPES,
    FRAMEWORKS,
    GRAPHS,
    MODES,
    RunSettings,
)
from gradviz.qt import settings_saved
from gradviz.qt.settings_saved import DEFAULT_RANGE, default
from gradviz.qt.theme import FRAMEWORK_LABELS, surface

GRAPH_HELP = {
    "op": "inputs → op → loss = sum(upstream · out)",
    "seed": "parameter a → layer → c = b·23 → loss = sum(c)",
    "mlp": "x → dense → op → dense → mean-squared loss",
    "stack": "x → [dense_i → op] × depth → loss = sum(upstream · o_N): gradient flow through depth",
}


CHECK_HELP = {
    "double_backward": "differentiate the custom gradient again (gradgradcheck, nested tapes)",
    "noncontiguous_upstream": "torch: transposed, sliced and expanded upstream gradients",
    "autocast": "bfloat16 mixed precision: torch.autocast, Keras mixed_bfloat16",
    "vmap": "per-sample gradients: torch.func.vmap / jacrev, tf.vectorized_map",
    "compiled": "torch.compile (aot_eager) / tf.function against eager (slow: compiles)",
    "precision": "float32 vs numeric disagreement: rounding or a bug? (re-run in float64)",
}


class SettingsPanel(QWidget):
    changed = Signal()  # the user changed a setting (the window marks older runs stale)

    def __init__(self, qsettings, frameworks=FRAMEWORKS, parent=None):
        super().__init__(parent)
        self.qs = qsettings
        self.frameworks = tuple(frameworks)
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        # a narrow left pane (the window at 1000 px) puts a field under its label, not past the edge
        form.setRowWrapPolicy(QFormLayout.WrapLongRows)
        self.device: dict[str, QComboBox] = {}
        # three frameworks (jax installed) take two rows, two boxes each: a row each pushed the
        # settings past the height they show whole in at 1500x950
        shared = QGridLayout() if len(self.frameworks) > 2 else None
        for i, fw in enumerate(self.frameworks):
            box = QComboBox()
            box.addItem("auto", "auto")
            box.setToolTip(
                "devices are listed once the worker has loaded " + FRAMEWORK_LABELS.get(fw, fw)
            )
            box.currentIndexChanged.connect(self._changed)
            self.device[fw] = box
            if shared is None:
                form.addRow(f"{FRAMEWORK_LABELS.get(fw, fw)} device", box)
            else:
                shared.addWidget(QLabel(fw), i // 2, 2 * (i % 2))
                shared.addWidget(box, i // 2, 2 * (i % 2) + 1)
        if shared is not None:
            shared.setContentsMargins(0, 0, 0, 0)
            shared.setColumnStretch(1, 1)
            shared.setColumnStretch(3, 1)
            devices = QWidget()
            devices.setLayout(shared)
            form.addRow("devices", devices)
        self.graph = QComboBox()
        for g in GRAPHS:
            self.graph.addItem(g, g)
            self.graph.setItemData(self.graph.count() - 1, GRAPH_HELP[g], Qt.ToolTipRole)
        self.graph.currentIndexChanged.connect(self._changed)
        form.addRow("graph", self.graph)
        self.graph_help = QLabel()
        self.graph_help.setWordWrap(True)
        form.addRow("", self.graph_help)
        self.depth = QSpinBox()
        self.depth.setRange(*DEPTH_RANGE)
        self.depth.setValue(default("depth"))
        self.depth.setToolTip("layers of the stack graph: dense → op, repeated")
        self.depth.valueChanged.connect(self._changed)
        form.addRow("depth", self.depth)
        self.shape = QLineEdit(default("shape"))
        self.shape.setToolTip("sizes separated by x: 200 or 4x50")
        self.shape.textChanged.connect(self._changed)
        form.addRow("shape", self.shape)
        self.dtype = QComboBox()
        self.dtype.addItems(list(DTYPES))
        self.dtype.currentIndexChanged.connect(self._changed)
        form.addRow("dtype", self.dtype)
        self.range = QLineEdit(DEFAULT_RANGE)
        self.range.setToolTip(
            "float inputs are drawn from LO,HI (as --range): -6,6 reaches "
            "hard-sigmoid's kinks at ±3; an inputs= range in the op wins"
        )
        self.range.textChanged.connect(self._changed)
        form.addRow("range", self.range)
        self.seed = QDoubleSpinBox()  # a QSpinBox stops at 2**31-1; seeds go on to SEED_RANGE's
        self.seed.setDecimals(0)
        self.seed.setRange(*SEED_RANGE)
        self.seed.valueChanged.connect(self._changed)
        form.addRow("seed", self.seed)
        self.upstream = QComboBox()
        self.upstream.setEditable(True)
        self.upstream.addItems(["ones", "random", "const:0.5"])
        self.upstream.setToolTip(
            "gradient fed into the op's output: ones, random (from the seed) or const:K"
        )
        self.upstream.currentTextChanged.connect(self._changed)
        form.addRow("upstream", self.upstream)
        modes = QWidget()
        row = QHBoxLayout(modes)
        row.setContentsMargins(0, 0, 0, 0)
        self.modes: dict[str, QCheckBox] = {}
        for m in MODES:
            cb = QCheckBox(m)
            cb.setChecked(True)
            cb.toggled.connect(self._changed)
            self.modes[m] = cb
            row.addWidget(cb)
        form.addRow("modes", modes)
        self.checks = self._checks_row()
        form.addRow("checks", self.checks_box)
        self.timeout = QDoubleSpinBox()
        self.timeout.setDecimals(TIMEOUT_DECIMALS)
        self.timeout.setRange(*TIMEOUT_RANGE)
        self.timeout.setSuffix(" s")
        self.timeout.setValue(default("timeout"))
        self.timeout.valueChanged.connect(self._changed)
        form.addRow("timeout", self.timeout)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        form.addRow(self.problem)
        self._loading = False
        self.load()
        self._changed()

    # --- values --------------------------------------------------------------------------------
    def settings(self, framework: str | None = None) -> RunSettings:
        """The RunSettings for one framework's requests, by the schema's rule (the CLI's).
        Raises SettingsError (a ValueError) naming every field that cannot run."""
        device = self.device[framework].currentData() if framework in self.device else "auto"
        return run_settings(
            {
                "graph": self.graph.currentData(),
                "shape": self.shape.text(),
                "dtype": self.dtype.currentText(),
                "seed": int(self.seed.value()),
                "upstream": self.upstream.currentText(),
                "device": device or "auto",
                "modes": tuple(m for m in MODES if self.modes[m].isChecked()),
                "timeout": self.timeout.value(),
                "depth": self.depth.value(),
                "range": self.range.text(),
                "checks": tuple(c for c in CHECKS if self.checks[c].isChecked()),
            }
        )

    def text_fields(self) -> list[QWidget]:
        """The fields typed into (Esc there undoes the edit, never cancels a run: qt/field_escape)."""
        return [self.depth, self.shape, self.range, self.seed, self.upstream, self.timeout]

    def validate(self) -> str:
        try:
            self.settings()
        except ValueError as exc:
            return str(exc)
        return ""

    def set_devices(self, info: dict) -> None:
        """info: Engine.devices(). Unavailable devices are listed, disabled, with the reason."""
        for fw, box in self.device.items():
            entry = info.get(fw) or {}
            wanted = self.qs.value(device_key(fw), box.currentData() or "auto")
            self._loading = True
            box.clear()
            box.addItem("auto", "auto")
            model: QStandardItemModel = box.model()
            for d in entry.get("devices", []):
                label = (
                    d["name"]
                    if d.get("available", True)
                    else f"{d['name']} — {d.get('reason', 'unavailable')}"
                )
                box.addItem(label, d["name"])
                item = model.item(box.count() - 1)
                if not d.get("available", True):
                    item.setEnabled(False)
                    item.setToolTip(d.get("reason", ""))
            if entry.get("error"):
                box.setToolTip(f"devices unknown: {entry['error']}")
            else:
                box.setToolTip(", ".join(d["name"] for d in entry.get("devices", [])))
            i = box.findData(wanted)
            box.setCurrentIndex(i if i >= 0 and model.item(i).isEnabled() else 0)
            self._loading = False
        self._changed()

    # --- persistence (qt/settings_saved) ---------------------------------------------------------
    def load(self) -> None:
        self._loading = True
        self.fallbacks = settings_saved.load(self, self.qs)  # unusable saved values: defaults used
        self._loading = False

    def reset_to_defaults(self) -> None:
        """Every run setting back to its default (what a fresh install starts with): a float64,
        random-upstream or numeric-off choice persists across launches unnoticed otherwise."""
        settings_saved.forget(self.qs)
        self.load()
        self._changed()

    def save(self) -> None:
        settings_saved.save(self, self.qs)

    def _checks_row(self) -> dict[str, QCheckBox]:
        """Contract checks, run after the plain results (none by default, as on the command
        line: compiled and vmap cost seconds per op)."""
        self.checks_box = QWidget()
        self._checks_grid = QGridLayout(self.checks_box)
        self._checks_grid.setContentsMargins(0, 0, 0, 0)
        boxes = {}
        for name in CHECKS:
            cb = QCheckBox(name.replace("_", " "))
            cb.setToolTip(CHECK_HELP[name])
            cb.toggled.connect(self._changed)
            boxes[name] = cb
        self._checks_columns = 0
        self._lay_checks(boxes.values(), 2)
        return boxes

    def _lay_checks(self, boxes, columns: int) -> None:
        if columns == self._checks_columns:
            return
        self._checks_columns = columns
        for cb in boxes:
            self._checks_grid.removeWidget(cb)
        for i, cb in enumerate(boxes):
            self._checks_grid.addWidget(cb, i // columns, i % columns)

    def fit_width(self, width: int) -> None:
        """The checks in two columns where `width` (what the panel is shown in) has room for
        them, else in one: two held the panel, and the window's left pane, at ~440 px."""
        grid, boxes = self._checks_grid, list(self.checks.values())
        pair = (
            max(b.sizeHint().width() for b in boxes[0::2])
            + max(b.sizeHint().width() for b in boxes[1::2])
            + grid.horizontalSpacing()
        )
        m = self.layout().contentsMargins()
        self._lay_checks(boxes, 2 if width - m.left() - m.right() >= pair else 1)

    def _changed(self, *_):
        self.graph_help.setText(GRAPH_HELP.get(self.graph.currentData(), ""))
        self.depth.setEnabled(self.graph.currentData() == "stack")
        self.problem.setText(self.validate())
        self.restyle()
        if not self._loading:
            self.save()
            self.changed.emit()

    def restyle(self) -> None:
        """Colours for the scheme the window shows: the help, the problem and the fields it names."""
        self.graph_help.setStyleSheet(f"color: {surface('muted')}; font-size: 11px")
        self.problem.setStyleSheet(f"color: {surface('error')}")
        problem = self.problem.text()
        bad = f"background: {surface('invalid')}"
        self.shape.setStyleSheet(bad if "shape" in problem else "")
        self.range.setStyleSheet(bad if "range" in problem else "")


class SettingsScroll(QScrollArea):
    """The settings panel as the window shows it: scrolled (vertically, and sideways only below
    its narrowest layout) rather than holding the left pane at its own width; its fields wrap
    under their labels and its checks go to one column when the pane is narrow."""

    def __init__(self, panel: SettingsPanel, parent=None):
        super().__init__(parent)
        self.setWidget(panel)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)

    def minimumSizeHint(self) -> QSize:
        """As tall as the panel wants, up to half the window: the op list keeps the rest (a
        scroll area's own minimum let the splitter squeeze the settings to a third, with the
        checks and timeout scrolled away at 1500x950)."""
        panel = self.widget()
        width = self.viewport().width()
        want = (
            panel.heightForWidth(width)
            if panel.hasHeightForWidth() and width > 0
            else panel.sizeHint().height()
        ) + 2 * self.frameWidth()
        room = self.window().height() // 2 if self.window() is not self else want
        return QSize(super().minimumSizeHint().width(), min(want, room))

    def resizeEvent(self, ev):
        self.widget().fit_width(self.viewport().width())
        super().resizeEvent(ev)
