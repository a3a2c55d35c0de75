"""Dark mode of the whole window (real window offscreen, real workers): the application's palette
and style switch live and come back, every panel's own colours (tree marks, table tints, entries,
checks, row headers, cell notes, the hover readout, the flow chart) read at WCAG's 4.5:1 on what
they are drawn on, and exports stay light."""

import re
import xml.etree.ElementTree as ET

import pytest

pytest.importorskip("pytestqt")

import pyqtgraph as pg  # noqa: E402
from gui_helpers import FakeDialogs, keys_of, run_keys  # noqa: E402
from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QColor, QPalette  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from gradviz.model import CheckResult  # noqa: E402
from gradviz.plots.palette import MODE_COLORS, PLOT_SCHEMES, VERDICT_TINT, contrast_ratio  # noqa: E402
from gradviz.qt import export_actions as EA  # noqa: E402
from gradviz.qt.export import render_flow_image  # noqa: E402
from gradviz.qt.theme import SURFACES, figure_ink, framework_color  # noqa: E402

pytestmark = pytest.mark.gui
SVG_NS = "{http://www.w3.org/2000/svg}"
ROLES = (
    "Window",
    "WindowText",
    "Base",
    "AlternateBase",
    "Text",
    "Button",
    "ButtonText",
    "Highlight",
    "HighlightedText",
    "ToolTipBase",
    "ToolTipText",
)
READABLE = 4.5  # WCAG AA for text


def role(pal, name: str) -> str:
    return pal.color(getattr(QPalette.ColorRole, name)).name()


def app_colors() -> dict:
    pal = QApplication.instance().palette()
    return {r: role(pal, r) for r in ROLES}


def is_dark(color: str) -> bool:
    """Near black: under 2:1 against black (#333333 is 1.7, the light scheme's #efefef 18)."""
    return contrast_ratio(color, "#000000") < 2.0


def css_color(css: str) -> str:
    return re.search(r"(?<![-\w])color:\s*(#[0-9a-fA-F]{6})", css).group(1).lower()


def light_share(image) -> float:
    """The share of an image's pixels (sampled on a grid) that are light."""
    image = image.convertToFormat(image.Format.Format_RGB32)
    light = total = 0
    for y in range(0, image.height(), 7):
        for x in range(0, image.width(), 7):
            total += 1
            light += image.pixelColor(x, y).lightnessF() > 0.6
    return light / total


@pytest.fixture
def shown(qtbot, make_window, settings, examples_dir):
    """round_ste in both frameworks, all modes: TF's default has no gradient (a note in its
    cells), the verdicts differ (surrogate, broken), so there are tints and marks to read."""
    settings.setValue("run/modes", "default,custom,numeric")
    win = make_window(
        [str(examples_dir / "tutorial_torch.py"), str(examples_dir / "tutorial_tf.py")]
    )
    results = run_keys(qtbot, win, keys_of(win, "round_ste"))
    assert sorted(r.status for r in results) == ["ok", "ok"]
    win.tree.select_pair("round_ste")
    win.show_pair("round_ste")
    qtbot.waitUntil(lambda: any(c.has_data for r in win.grid.rows.values() for c in r.cells))
    yield win
    win.set_theme("follow desktop")  # the palette and pyqtgraph's defaults are global
    win.set_color_scheme(Qt.ColorScheme.Light)


def test_dark_theme_darkens_every_panel_and_light_restores_the_start(qtbot, shown):
    app = QApplication.instance()
    start, start_style = app_colors(), app.style().name()
    shown.theme_actions["dark"].trigger()  # View > Theme: dark
    colors = app_colors()
    for r in ("Window", "Base", "AlternateBase", "Button", "ToolTipBase"):
        assert is_dark(colors[r]), (r, colors[r])
    for fg, bg in (
        ("WindowText", "Window"),
        ("Text", "Base"),
        ("Text", "AlternateBase"),
        ("ButtonText", "Button"),
        ("HighlightedText", "Highlight"),
        ("ToolTipText", "ToolTipBase"),
    ):
        assert contrast_ratio(colors[fg], colors[bg]) >= READABLE, (fg, bg)
    assert contrast_ratio(colors["Text"], colors["Base"]) >= 7
    assert app.style().name().lower() == "fusion"
    # the panels themselves inherit it (Qt posts the change to each widget): op tree, settings,
    # tables, entries, detail, log, bars, menus, the grid's scroll area and a row's view combo
    row = next(iter(shown.grid.rows.values()))
    parts = [
        shown.tree,
        shown.settings_panel.shape,
        shown.numbers.table,
        shown.numbers.parity,
        shown.diagnostics.list,
        shown.diagnostics.detail,
        shown.checks_matrix.table,
        shown.log,
        shown.statusBar(),
        shown.menuBar(),
        shown.view_menu,
        shown.grid.viewport(),
        row.view_box,
        shown.op_filter,
        shown.tabs,
        shown.pair_label,
        shown.grid.header,
    ]
    qtbot.waitUntil(
        lambda: all(is_dark(w.palette().color(w.backgroundRole()).name()) for w in parts)
    )
    for w in parts:
        bg = w.palette().color(w.backgroundRole()).name()
        fg = w.palette().color(w.foregroundRole()).name()
        assert is_dark(bg) and contrast_ratio(fg, bg) >= 7, (type(w).__name__, bg, fg)
    # every label too, style sheet or not (one with padding kept the light palette)
    from PySide6.QtWidgets import QLabel

    labels = [w for w in shown.findChildren(QLabel) if w.isVisible()]
    light = [
        (w.objectName() or type(w).__name__, w.text()[:30])
        for w in labels
        if not is_dark(w.palette().color(w.backgroundRole()).name())
    ]
    assert labels and not light, light
    # and so does what the screen shows: the window grabbed is mostly dark pixels
    assert light_share(shown.grab().toImage()) < 0.1

    shown.theme_actions["light"].trigger()
    assert app_colors() == start and app.style().name() == start_style
    qtbot.waitUntil(
        lambda: not any(is_dark(w.palette().color(w.backgroundRole()).name()) for w in parts)
    )
    assert light_share(shown.grab().toImage()) > 0.5


def test_dark_mode_follows_the_desktop_and_the_choice_beats_it(qtbot, shown):
    start = app_colors()
    shown.set_color_scheme(Qt.ColorScheme.Dark)  # the desktop turned dark
    assert is_dark(app_colors()["Window"]) and shown.plot_scheme == "dark"
    shown.set_color_scheme(Qt.ColorScheme.Light)  # and light again
    assert app_colors() == start
    shown.set_color_scheme(Qt.ColorScheme.Dark)
    shown.theme_actions["light"].trigger()  # light chosen on a dark desktop: its own
    colors = app_colors()  # light palette, not the desktop's
    assert not is_dark(colors["Window"]) and colors["Base"] == "#ffffff"
    assert contrast_ratio(colors["Text"], colors["Base"]) >= 7
    shown.theme_actions["follow desktop"].trigger()
    assert is_dark(app_colors()["Window"])
    shown.set_color_scheme(Qt.ColorScheme.Light)
    assert app_colors() == start


def _items(tree_or_table):
    if hasattr(tree_or_table, "topLevelItemCount"):
        out, todo = (
            [],
            [tree_or_table.topLevelItem(i) for i in range(tree_or_table.topLevelItemCount())],
        )
        while todo:
            item = todo.pop()
            out.append(item)
            todo += [item.child(i) for i in range(item.childCount())]
        return out
    return [
        tree_or_table.item(r, c)
        for r in range(tree_or_table.rowCount())
        for c in range(tree_or_table.columnCount())
        if tree_or_table.item(r, c) is not None
    ]


def _readable_items(widget, columns=None) -> int:
    """Asserts every item's text reads on its background (its own, else the view's base and
    alternate base); returns how many coloured texts were looked at."""
    pal, seen = widget.palette(), 0
    bases = [role(pal, "Base"), role(pal, "AlternateBase")]
    for item in _items(widget):
        for c in columns if columns is not None else [None]:
            fg_brush = item.foreground(c) if c is not None else item.foreground()
            bg_brush = item.background(c) if c is not None else item.background()
            fg = fg_brush.color().name() if fg_brush.style() != Qt.NoBrush else role(pal, "Text")
            backs = [bg_brush.color().name()] if bg_brush.style() != Qt.NoBrush else bases
            for bg in backs:
                assert contrast_ratio(fg, bg) >= READABLE, (
                    item.text(c) if c is not None else item.text(),
                    fg,
                    bg,
                )
            seen += fg_brush.style() != Qt.NoBrush or bg_brush.style() != Qt.NoBrush
    return seen


def test_every_coloured_entry_reads_in_dark(qtbot, shown):
    win = shown
    key = keys_of(win, "round_ste")[0]
    win.checks_matrix.set_checks(
        key,
        "round_ste (torch)",
        [
            CheckResult("double_backward", "pass", "agrees"),
            CheckResult("autocast", "fail", "differs"),
            CheckResult("vmap", "skip", "not applicable"),
        ],
    )
    win.checks_matrix.set_pending([(keys_of(win, "round_ste")[1], "round_ste (tf)")], {"vmap"})
    for sev in ("error", "warning", "info"):
        win.diagnostics.add(sev, "round_ste", f"a {sev} entry")
    verdict_cell = win.numbers.table.item(0, 2)
    light_tint = verdict_cell.background().color().name()
    assert light_tint == VERDICT_TINT[win.numbers.verdicts[0]]

    win.set_theme("dark")
    qtbot.waitUntil(
        lambda: all(
            is_dark(w.palette().color(QPalette.ColorRole.Base).name())
            for w in (
                win.tree,
                win.numbers.table,
                win.numbers.parity,
                win.diagnostics.list,
                win.checks_matrix.table,
            )
        )
    )
    assert _readable_items(win.tree, columns=range(4)) >= 4  # frameworks and marks
    assert _readable_items(win.numbers.table) >= 10  # tinted by verdict
    assert _readable_items(win.numbers.parity) >= 1
    assert _readable_items(win.diagnostics.list, columns=range(4)) >= 3
    assert _readable_items(win.checks_matrix.table) >= 4
    tint = win.numbers.table.item(0, 2).background().color().name()
    assert is_dark(tint) and tint != light_tint
    window_bg = SURFACES["dark"]["window"]
    # row headers: verdict labels on their tints, a title in the worst verdict's colour
    for row in win.grid.rows.values():
        spans = re.findall(r"background:(#\w{6}); color:(#\w{6})", row.verdicts.text())
        assert len(spans) == 2, row.verdicts.text()
        for bg, fg in spans:
            assert is_dark(bg) and contrast_ratio(fg, bg) >= READABLE, (row.name, fg, bg)
        if row.title.styleSheet():
            assert contrast_ratio(css_color(row.title.styleSheet()), window_bg) >= READABLE
        assert contrast_ratio(css_color(row.info.styleSheet()), window_bg) >= READABLE
    for label in list(win.workers.labels.values()) + [
        win.settings_panel.graph_help,
        win.settings_panel.problem,
    ]:
        assert contrast_ratio(css_color(label.styleSheet()), window_bg) >= READABLE
    marks = 0
    for color, text in re.findall(
        r"color:\s*(#\w{6})'>([^<]*)<", win.grid.header.text() + win.pair_label.text()
    ):
        if text in ("●", "╌╌", "━━", "┈┈"):  # legend marks: lines and dots, 3:1
            assert contrast_ratio(color, window_bg) >= 3, (text, color)
            marks += 1
        else:
            assert contrast_ratio(color, window_bg) >= READABLE, (text, color)
    assert marks >= 3
    # the plots: titles, notes of empty cells (TF's default: no gradient), corner notes
    plot_bg, empty_bg = PLOT_SCHEMES["dark"]["background"], SURFACES["dark"]["empty"]
    notes = 0
    for row in win.grid.rows.values():
        for cell in row.cells:
            title = re.search(r"color:(#\w{6})", cell.plot.titleLabel.text).group(1)
            assert contrast_ratio(title, plot_bg) >= READABLE, (row.name, cell.mode, title)
            message = cell.slot.message_item
            if message is not None:
                assert cell.slot.vb.background.brush().color().name() == empty_bg
                assert contrast_ratio(message.color.name(), empty_bg) >= READABLE, (
                    message.textItem.toPlainText()
                )
                notes += 1
            for role, (text, color) in cell.slot.note_line.texts.items():
                shown = cell.slot.note_line.items[role].brush().color().name()
                assert shown == QColor(color).name()
                assert contrast_ratio(shown, plot_bg) >= READABLE, (text, shown)
                notes += 1
    assert notes >= 2, "no note drawn in any cell"

    win.set_theme("light")  # and back, live
    assert win.numbers.table.item(0, 2).background().color().name() == light_tint
    for row in win.grid.rows.values():
        backs = re.findall(r"background:(#\w{6})", row.verdicts.text())
        assert backs and set(backs) <= set(VERDICT_TINT.values()), backs


def test_hover_readout_reads_in_dark(qtbot, shown):
    shown.set_theme("dark")
    row = shown.grid.rows["x"]
    cell = next(c for c in row.cells if (c.framework, c.mode) == ("torch", "custom"))
    # the switch drew the plots again: hover once their ranges are laid out
    qtbot.waitUntil(
        lambda: cell.slot.vb.width() > 50 and cell.slot.vb.viewRange()[0][1] >= cell.data["n"] - 1
    )
    scene = cell.slot.vb.mapViewToScene(QPointF(7.3, 0.5))
    pos = row.canvas.mapFromScene(scene)
    qtbot.mouseMove(row.canvas.viewport(), QPoint(pos.x(), pos.y()))
    # about x[7]: at ~0.6 px per element the pixel may land on a neighbour
    qtbot.waitUntil(
        lambda: re.match(r"x\[\d\] \(#\d\): default 0 · custom 1", row.readout.text) is not None
    )
    label = row.readout.label
    fill = label.fill.color()
    assert fill.alpha() >= 220 and is_dark(fill.name())
    assert contrast_ratio(label.color.name(), fill.name()) >= READABLE
    assert contrast_ratio(label.color.name(), PLOT_SCHEMES["dark"]["background"]) >= READABLE


def test_dark_window_exports_a_light_figure(qtbot, shown, tmp_path):
    shown.set_theme("dark")
    dlg = FakeDialogs()
    path = EA.grid_image(shown.exports, path=str(tmp_path / "dark.svg"), dialogs=dlg)
    assert path and not dlg.errors
    root = ET.parse(path).getroot()
    text_fills = {(t.get("fill") or "").lower() for t in root.iter(SVG_NS + "text")}
    assert text_fills and all(
        not f
        or is_dark(f)
        or f in {c.lower() for c in MODE_COLORS.values()}
        or contrast_ratio(f, "#ffffff") >= 3
        for f in text_fills
    ), text_fills
    fills = {(e.get("fill") or "").lower() for e in root.iter() if e.get("fill")}
    dark_surfaces = {
        PLOT_SCHEMES["dark"]["background"],
        SURFACES["dark"]["empty"],
        SURFACES["dark"]["base"],
        SURFACES["dark"]["window"],
    }
    assert "#ffffff" in fills and not fills & dark_surfaces, fills
    # the titles are drawn in the light scheme's mode and framework colours, whatever the
    # window shows
    titles = {
        (t.text or "").strip(): (t.get("fill") or "").lower() for t in root.iter(SVG_NS + "text")
    }
    assert titles["· default"] == MODE_COLORS["default"]
    assert titles["torch"] == framework_color("torch", "light")


def test_flow_chart_is_dark_in_the_window_and_light_in_files(qtbot, make_window, corpus_dir):
    win = make_window([str(corpus_dir / "flow" / "flow_torch.py")])
    panel = win.settings_panel
    panel.graph.setCurrentIndex(panel.graph.findData("stack"))
    panel.depth.setValue(3)
    panel.shape.setText("16")
    run_keys(qtbot, win, keys_of(win, "sign_ste"))
    win.tree.select_pair("sign_ste")
    win.show_pair("sign_ste")
    view = win.flow_view
    qtbot.waitUntil(lambda: view.isVisible() and view.figure is not None)
    try:
        win.set_theme("dark")
        shown = view.grab().toImage()
        assert light_share(shown) < 0.05
        assert is_dark(shown.pixelColor(3, 3).name())
        exported = render_flow_image(view.figure, view.width(), view.height())
        assert light_share(exported) > 0.8 and exported.pixelColor(3, 3).name() == "#ffffff"
        # the chart's texts are painted on the dark background at a readable contrast
        ink = figure_ink()
        for key in ("text", "subtitle", "label", "note", "ticks", "empty"):
            assert contrast_ratio(ink[key], ink["background"]) >= READABLE, key
    finally:
        win.set_theme("follow desktop")
        win.set_color_scheme(Qt.ColorScheme.Light)
    assert pg.getConfigOption("background") == PLOT_SCHEMES["light"]["background"]


def test_a_window_opened_in_dark_is_dark_from_its_first_paint(qtbot, engine, tmp_path):
    from gradviz.app.settings_file import SettingsFile
    from gradviz.qt.main_window import MainWindow

    qs = SettingsFile(str(tmp_path / "gradviz.ini"))
    qs.setValue("view/theme", "dark")  # saved by the last session
    win = MainWindow([], engine=engine, qsettings=qs)
    qtbot.addWidget(win)
    try:
        assert is_dark(app_colors()["Window"]) and win.plot_scheme == "dark"
        muted = SURFACES["dark"]["muted"]
        assert css_color(win.settings_panel.graph_help.styleSheet()) == muted
        assert css_color(win.grid._placeholder.styleSheet()) == muted
        assert {css_color(lab.styleSheet()) for lab in win.workers.labels.values()} == {muted}
        assert pg.getConfigOption("background") == PLOT_SCHEMES["dark"]["background"]
        # the pair's header above the grid (a style sheet with padding kept the light palette)
        header = win.pair_label.palette()
        assert is_dark(header.color(win.pair_label.backgroundRole()).name())
        assert (
            contrast_ratio(
                header.color(win.pair_label.foregroundRole()).name(),
                header.color(win.pair_label.backgroundRole()).name(),
            )
            >= 7
        )
        win.set_theme("light")  # and the same parts come back light
        assert css_color(win.settings_panel.graph_help.styleSheet()) == SURFACES["light"]["muted"]
        assert css_color(win.grid._placeholder.styleSheet()) == SURFACES["light"]["muted"]
    finally:
        win.set_theme("follow desktop")
        win.set_color_scheme(Qt.ColorScheme.Light)
        win.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_table_colour_reads_in_both_schemes(scheme):
    """All of them, not only those a run happens to show: verdicts on their tints and on the
    window, check cells, marks, severities and worker states on the base and window."""
    from gradviz.plots.palette import VERDICT_TEXT
    from gradviz.qt import theme as T

    s = SURFACES[scheme]
    for v in VERDICT_TEXT:
        fg, tint = T.verdict_text(v, scheme), T.verdict_tint(v, scheme)
        assert contrast_ratio(fg, tint) >= READABLE, (v, fg, tint)
        assert contrast_ratio(s["text"], tint) >= READABLE, (v, tint)  # the other cells
        assert contrast_ratio(fg, s["window"]) >= READABLE, (v, fg)  # a row's title
    for status in T.CHECK_STYLES:  # (a check not chosen has no text)
        _icon, fg, bg = T.check_style(status, scheme)
        assert contrast_ratio(fg, bg) >= READABLE, (status, fg, bg)
    colours = (
        [T.op_mark(m, scheme)[1] for m in T.OP_MARKS]
        + [T.severity_color(x, scheme) for x in T.SEVERITY_COLORS]
        + [T.state_color(x, scheme) for x in T.STATE_COLORS]
        + [T.framework_color(fw, scheme) for fw in T.FRAMEWORK_COLORS]
        + [s["error"], s["muted"]]
    )
    for c in colours:
        for bg in (s["base"], s["alternate"], s["window"]):
            assert contrast_ratio(c, bg) >= READABLE, (c, bg)
    for text in ("note", "message"):
        for bg in ("plot", "empty", "readout_fill"):
            assert contrast_ratio(s[text], s[bg]) >= READABLE, (text, bg)
    if scheme == "dark":
        assert all(
            is_dark(s[k]) for k in ("window", "base", "plot", "empty", "invalid", "row_focus_fill")
        )
        assert contrast_ratio(s["text"], s["invalid"]) >= 7
