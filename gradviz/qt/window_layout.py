"""Where the main window's parts sit: op list (filter box, tree) over the run settings on the
left; the pair header, flow chart and grid in the middle over the Numbers / Worst tensors /
Diagnostics / Checks / Log tabs."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QSplitter, QTabWidget, QVBoxLayout, QWidget

from gradviz.qt.checks_matrix import ChecksMatrix
from gradviz.qt.diagnostics_panel import DiagnosticsPanel
from gradviz.qt.field_escape import FieldEscape
from gradviz.qt.filter_box import FilterBox
from gradviz.qt.flow_view import FlowView
from gradviz.qt.grid import GridView
from gradviz.qt.grid_room import GridRoom
from gradviz.qt.log_panel import LogPanel
from gradviz.qt.numbers_table import NumbersTable
from gradviz.qt.op_tree import OpTree
from gradviz.qt.pair_header import PairHeader
from gradviz.qt.pair_numbers import PairNumbers
from gradviz.qt.run_picker import EarlierRunPicker
from gradviz.qt.settings_panel import SettingsPanel, SettingsScroll


@dataclass(frozen=True)
class WindowLayout:
    """What build_layout makes: the window's central widget and the parts of it the window
    keeps (MainWindow takes each as an attribute of its own)."""

    central: QWidget
    tree: OpTree
    op_filter: FilterBox
    settings_panel: SettingsPanel
    field_escape: FieldEscape
    settings_scroll: SettingsScroll
    grid: GridView
    numbers: NumbersTable
    worst: NumbersTable
    pair_numbers: PairNumbers
    diagnostics: DiagnosticsPanel
    log: LogPanel
    checks_matrix: ChecksMatrix
    tabs: QTabWidget
    pair_label: PairHeader
    run_picker: EarlierRunPicker
    flow_view: FlowView
    flow_split: QSplitter
    grid_room: GridRoom


def build_layout(state, qs, frameworks, parent) -> WindowLayout:
    """The widgets of a main window (`parent`) over its `state` and settings `qs`, laid out."""
    tree = OpTree(state)
    op_filter = FilterBox(next_focus=tree)
    ops = QWidget()
    ol = QVBoxLayout(ops)
    ol.setContentsMargins(0, 0, 0, 0)
    ol.addWidget(op_filter)
    ol.addWidget(tree, 1)
    settings_panel = SettingsPanel(qs, frameworks)
    field_escape = FieldEscape(settings_panel.text_fields(), tree, parent)
    # the settings wrap and scroll rather than hold the left pane at their width (~440 px, the
    # checks' two columns beside the labels): at 1000x700 the grid and Diagnostics need the room
    settings_scroll = SettingsScroll(settings_panel)
    left = QSplitter(Qt.Vertical)
    left.addWidget(ops)
    left.addWidget(settings_scroll)
    left.setSizes([520, 380])
    grid = GridView()
    numbers = NumbersTable(qs, own_filter_line=False)
    worst = NumbersTable(qs, scope="run", own_filter_line=False)  # every op's tensors
    pair_numbers = PairNumbers(numbers, parent)
    diagnostics = DiagnosticsPanel()
    log = LogPanel()
    checks_matrix = ChecksMatrix()
    tabs = QTabWidget()
    for widget, title in (
        (numbers, "Numbers"),
        (worst, "Worst tensors"),
        (diagnostics, "Diagnostics"),
        (checks_matrix, "Checks"),
        (log, "Log"),
    ):
        tabs.addTab(widget, title)
    _table_filters(tabs, numbers, worst)
    pair_label = PairHeader(state)
    center = QWidget()
    cl = QVBoxLayout(center)
    cl.setContentsMargins(0, 0, 0, 0)
    cl.setSpacing(0)
    # the pair's name, and the earlier run its difference view may subtract (before and after)
    head = QHBoxLayout()
    head.setContentsMargins(0, 0, 4, 0)
    head.addWidget(pair_label, 1)
    run_picker = EarlierRunPicker()
    head.addWidget(run_picker)
    cl.addLayout(head)
    # a stack run shows its flow chart above the per-tensor grid
    flow_view = FlowView()
    flow_view.hide()
    flow_split = QSplitter(Qt.Vertical)
    flow_split.addWidget(flow_view)
    flow_split.addWidget(grid)
    flow_split.setStretchFactor(0, 0)  # a taller window gives the rows the room
    flow_split.setStretchFactor(1, 1)
    cl.addWidget(flow_split, 1)
    middle = QSplitter(Qt.Vertical)
    middle.addWidget(center)
    middle.addWidget(tabs)
    middle.setSizes([640, 260])
    middle.setCollapsible(1, False)
    tabs.setMinimumHeight(tabs.tabBar().sizeHint().height())  # GridRoom may take the rest
    grid_room = GridRoom(middle, center, tabs, grid, flow_view, pair_label)
    main = QSplitter(Qt.Horizontal)
    main.addWidget(left)
    main.addWidget(middle)
    main.setSizes([400, 1100])
    # both stretch, so a narrower window, at the start or later, scales the two (left 266 of
    # 1000 px); with only the middle stretching the left kept its 400 (and before, the settings'
    # minimum width held it at 440)
    main.setStretchFactor(0, 1)
    main.setStretchFactor(1, 4)
    return WindowLayout(
        central=main,
        tree=tree,
        op_filter=op_filter,
        settings_panel=settings_panel,
        field_escape=field_escape,
        settings_scroll=settings_scroll,
        grid=grid,
        numbers=numbers,
        worst=worst,
        pair_numbers=pair_numbers,
        diagnostics=diagnostics,
        log=log,
        checks_matrix=checks_matrix,
        tabs=tabs,
        pair_label=pair_label,
        run_picker=run_picker,
        flow_view=flow_view,
        flow_split=flow_split,
        grid_room=grid_room,
    )


def _table_filters(tabs: QTabWidget, numbers: NumbersTable, worst: NumbersTable) -> None:
    """The Numbers / Worst tensors filter boxes beside the tabs, the shown tab's one: a line of
    their own took 24 px of the grid's height, and at 1000x700 it had none to spare."""
    from PySide6.QtWidgets import QStackedWidget

    stack = QStackedWidget()
    blank = QWidget()
    for w in (numbers.filter, worst.filter, blank):
        stack.addWidget(w)
    stack.setFixedWidth(260)
    # in a layout, so the corner's size hint is that width: the tab widget places a corner by
    # its hint, and the bare stack (a line edit's ~140 px hint) ran past the window's edge
    corner = QWidget()
    QHBoxLayout(corner).setContentsMargins(0, 0, 2, 0)
    corner.layout().addWidget(stack)
    tabs.setCornerWidget(corner, Qt.Corner.TopRightCorner)

    def follow(_i: int) -> None:
        shown = tabs.currentWidget()
        stack.setCurrentWidget(shown.filter if shown in (numbers, worst) else blank)

    tabs.currentChanged.connect(follow)
    follow(0)
