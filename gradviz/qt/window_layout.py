"""Where the main window's parts sit: op list (filter box, tree) over the run settings on the
left; the pair header, flow chart and grid in the middle over the Numbers / Worst tensors /
Diagnostics / Checks / Log tabs."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QSplitter, QTabWidget, QVBoxLayout, QWidget

from gradviz.qt.checks_matrix import ChecksMatrix
from gradviz.qt.diagnostics_panel import DiagnosticsPanel
from gradviz.qt.field_escape import FieldEscape
from gradviz.qt.filter_box import FilterBox
from gradviz.qt.flow_view import FlowView
from gradviz.qt.grid import GridView
from gradviz.qt.log_panel import LogPanel
from gradviz.qt.numbers_table import NumbersTable
from gradviz.qt.op_tree import OpTree
from gradviz.qt.pair_header import PairHeader
from gradviz.qt.pair_numbers import PairNumbers
from gradviz.qt.run_picker import EarlierRunPicker
from gradviz.qt.settings_panel import SettingsPanel, SettingsScroll


def build_layout(win) -> None:
    """Create the widgets of MainWindow `win` (win.tree, win.grid, win.tabs, ...) and lay them out."""
    win.tree = OpTree(win.state)
    win.op_filter = FilterBox(next_focus=win.tree)
    ops = QWidget()
    ol = QVBoxLayout(ops)
    ol.setContentsMargins(0, 0, 0, 0)
    ol.addWidget(win.op_filter)
    ol.addWidget(win.tree, 1)
    win.settings_panel = SettingsPanel(win.qs, win.bridge.frameworks)
    win.field_escape = FieldEscape(win.settings_panel.text_fields(), win.tree, win)
    # the settings wrap and scroll rather than hold the left pane at their width (~440 px, the
    # checks' two columns beside the labels): at 1000x700 the grid and Diagnostics need the room
    win.settings_scroll = SettingsScroll(win.settings_panel)
    left = QSplitter(Qt.Vertical)
    left.addWidget(ops)
    left.addWidget(win.settings_scroll)
    left.setSizes([520, 380])
    win.grid = GridView()
    win.numbers = NumbersTable(win.qs, own_filter_line=False)
    win.worst = NumbersTable(win.qs, scope="run", own_filter_line=False)  # every op's tensors
    win.pair_numbers = PairNumbers(win.numbers, win)
    win.diagnostics = DiagnosticsPanel()
    win.log = LogPanel()
    win.checks_matrix = ChecksMatrix()
    win.tabs = QTabWidget()
    for widget, title in (
        (win.numbers, "Numbers"),
        (win.worst, "Worst tensors"),
        (win.diagnostics, "Diagnostics"),
        (win.checks_matrix, "Checks"),
        (win.log, "Log"),
    ):
        win.tabs.addTab(widget, title)
    _table_filters(win)
    win.pair_label = PairHeader(win.state)
    center = QWidget()
    cl = QVBoxLayout(center)
    cl.setContentsMargins(0, 0, 0, 0)
    cl.setSpacing(0)
    # the pair's name, and the earlier run its difference view may subtract (before and after)
    head = QHBoxLayout()
    head.setContentsMargins(0, 0, 4, 0)
    head.addWidget(win.pair_label, 1)
    win.run_picker = EarlierRunPicker()
    head.addWidget(win.run_picker)
    cl.addLayout(head)
    # a stack run shows its flow chart above the per-tensor grid
    win.flow_view = FlowView()
    win.flow_view.hide()
    win.flow_split = QSplitter(Qt.Vertical)
    win.flow_split.addWidget(win.flow_view)
    win.flow_split.addWidget(win.grid)
    win.flow_split.setStretchFactor(0, 0)  # a taller window gives the rows the room
    win.flow_split.setStretchFactor(1, 1)
    cl.addWidget(win.flow_split, 1)
    middle = QSplitter(Qt.Vertical)
    middle.addWidget(center)
    middle.addWidget(win.tabs)
    middle.setSizes([640, 260])
    middle.setCollapsible(1, False)
    win.tabs.setMinimumHeight(win.tabs.tabBar().sizeHint().height())  # GridRoom may take the rest
    from gradviz.qt.grid_room import GridRoom

    win.grid_room = GridRoom(middle, center, win.tabs, win.grid, win.flow_view, win.pair_label)
    main = QSplitter(Qt.Horizontal)
    main.addWidget(left)
    main.addWidget(middle)
    main.setSizes([400, 1100])
    # both stretch, so a narrower window, at the start or later, scales the two (left 266 of
    # 1000 px); with only the middle stretching the left kept its 400 (and before, the settings'
    # minimum width held it at 440)
    main.setStretchFactor(0, 1)
    main.setStretchFactor(1, 4)
    win.setCentralWidget(main)


def _table_filters(win) -> None:
    """The Numbers / Worst tensors filter boxes beside the tabs, the shown tab's one: a line of
    their own took 24 px of the grid's height, and at 1000x700 it had none to spare."""
    from PySide6.QtWidgets import QStackedWidget

    stack = QStackedWidget()
    blank = QWidget()
    for w in (win.numbers.filter, win.worst.filter, blank):
        stack.addWidget(w)
    stack.setFixedWidth(260)
    # in a layout, so the corner's size hint is that width: the tab widget places a corner by
    # its hint, and the bare stack (a line edit's ~140 px hint) ran past the window's edge
    corner = QWidget()
    QHBoxLayout(corner).setContentsMargins(0, 0, 2, 0)
    corner.layout().addWidget(stack)
    win.tabs.setCornerWidget(corner, Qt.Corner.TopRightCorner)

    def follow(_i: int) -> None:
        shown = win.tabs.currentWidget()
        stack.setCurrentWidget(shown.filter if shown in (win.numbers, win.worst) else blank)

    win.tabs.currentChanged.connect(follow)
    follow(0)
