"""Dark mode: the plots follow the desktop's colour scheme (given as an input: offscreen cannot
change it), a View > Theme override is saved, and exports stay on white."""

import pyqtgraph as pg
import pytest
from gui_helpers import RUN_TIMEOUT_MS, keys_of, run_keys  # noqa: E402
from PySide6.QtCore import Qt

from gradviz.app.settings_file import SettingsFile
from gradviz.plots.palette import PLOT_SCHEMES, contrast_ratio
from gradviz.qt.main_window import MainWindow


@pytest.fixture
def window(qtbot, make_window, examples_dir):
    win = make_window([str(examples_dir / "tutorial_torch.py")])
    run_keys(qtbot, win, keys_of(win, "mul_weights"))
    win.tree.select_pair("mul_weights")
    win.show_pair("mul_weights")
    qtbot.waitUntil(
        lambda: any(c.has_data for r in win.grid.rows.values() for c in r.cells),
        timeout=RUN_TIMEOUT_MS,
    )
    yield win
    win.set_theme("follow desktop")  # the pyqtgraph defaults are global: back to light
    win.set_color_scheme(Qt.ColorScheme.Light)


def hexname(color) -> str:
    return color.name()  # "#rrggbb"


def plot_colors(win):
    """(background, axis pens, curve pens) of every plot in the window, as "#rrggbb"."""
    views = win.findChildren(pg.GraphicsView)
    assert views, "no plot in the window"
    backs, axes, curves = set(), set(), set()
    for v in views:
        backs.add(hexname(v.backgroundBrush().color()))
        for item in v.scene().items():
            if isinstance(item, pg.AxisItem):
                axes.add(hexname(item.pen().color()))
                axes.add(hexname(item.textPen().color()))
            elif isinstance(item, pg.PlotDataItem) and item.opts.get("pen") is not None:
                curves.add(hexname(pg.mkPen(item.opts["pen"]).color()))
    return backs, axes, curves


def test_plots_follow_the_desktop_scheme_live(qtbot, window):
    window.set_color_scheme(Qt.ColorScheme.Dark)
    backs, axes, curves = plot_colors(window)
    assert backs == {PLOT_SCHEMES["dark"]["background"]}
    assert curves, "no curve drawn"
    for fg in axes:
        assert contrast_ratio(fg, PLOT_SCHEMES["dark"]["background"]) >= 4.5, fg
    for pen in curves:
        assert contrast_ratio(pen, PLOT_SCHEMES["dark"]["background"]) >= 3.0, pen

    # axis titles drawn after the switch (another view relabels the axes) keep the dark text
    name = next(iter(window.grid.rows))
    window.grid.set_view(name, "histogram")
    labels = [
        a
        for v in window.findChildren(pg.GraphicsView)
        for a in v.scene().items()
        if isinstance(a, pg.AxisItem) and a.label.isVisible() and a.labelText
    ]
    assert labels, "no axis title drawn"
    for axis in labels:
        color = axis.labelStyle.get("color", "#000000")
        assert contrast_ratio(color, PLOT_SCHEMES["dark"]["background"]) >= 4.5, axis.labelText

    window.set_color_scheme(Qt.ColorScheme.Light)
    backs, axes, _ = plot_colors(window)
    assert backs == {PLOT_SCHEMES["light"]["background"]}
    assert axes == {PLOT_SCHEMES["light"]["foreground"]}


def test_theme_override_is_saved_and_beats_the_desktop(qtbot, window, engine):
    window.set_color_scheme(Qt.ColorScheme.Light)
    window.theme_actions["dark"].trigger()  # View > Theme: dark
    assert window.qs.value("view/theme") == "dark"
    assert plot_colors(window)[0] == {PLOT_SCHEMES["dark"]["background"]}
    window.set_color_scheme(Qt.ColorScheme.Light)  # the desktop changes: the choice holds
    assert plot_colors(window)[0] == {PLOT_SCHEMES["dark"]["background"]}

    again = MainWindow([], engine=engine, qsettings=window.qs)  # the next launch
    qtbot.addWidget(again)
    assert again.theme_choice == "dark" and again.theme_actions["dark"].isChecked()
    assert again.plot_scheme == "dark"
    again.close()

    window.theme_actions["follow desktop"].trigger()
    window.set_color_scheme(Qt.ColorScheme.Light)
    assert plot_colors(window)[0] == {PLOT_SCHEMES["light"]["background"]}


def test_unknown_saved_theme_follows_the_desktop(qtbot, engine, tmp_path):
    qs = SettingsFile(str(tmp_path / "gradviz.ini"))
    qs.setValue("view/theme", "solarized")
    win = MainWindow([], engine=engine, qsettings=qs)
    qtbot.addWidget(win)
    assert win.theme_choice == "follow desktop"
    win.set_color_scheme(Qt.ColorScheme.Dark)
    assert win.plot_scheme == "dark"
    win.set_color_scheme(Qt.ColorScheme.Light)
    assert win.plot_scheme == "light"
    win.close()
