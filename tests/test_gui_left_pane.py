"""The left pane at 1000x700 (issue 13): the run settings wrap and scroll instead of holding the
pane at their own width (~440 of 1000 px, which left the Diagnostics messages ~15 characters),
and every setting is still reachable; at 1500x950 they show whole, as before."""

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint  # noqa: E402

from gradviz.app.settings_file import SettingsFile  # noqa: E402

pytestmark = pytest.mark.gui


def _window(qtbot, engine, tmp_path, size):
    from gradviz.qt.main_window import MainWindow

    qs = SettingsFile(str(tmp_path / "gradviz.ini"))
    win = MainWindow([], engine=engine, qsettings=qs)  # not started: no worker needed
    qtbot.addWidget(win)
    win.resize(*size)
    win.show()
    qtbot.waitExposed(win)
    return win


def _inside(scroll, widget) -> bool:
    """Whether `widget` lies wholly inside the scroll area's viewport now."""
    vp = scroll.viewport()
    top_left = widget.mapTo(vp, QPoint(0, 0))
    return (
        top_left.x() >= 0
        and top_left.y() >= 0
        and top_left.x() + widget.width() <= vp.width()
        and top_left.y() + widget.height() <= vp.height()
    )


def test_settings_wrap_and_scroll_so_the_right_side_gets_the_room(qtbot, engine, tmp_path):
    win = _window(qtbot, engine, tmp_path, (1000, 700))
    main, scroll, sp = win.centralWidget(), win.settings_scroll, win.settings_panel
    # laid out (a scroll area settles over a few posted events): nothing sideways, the fields
    # under their labels and the checks in one column; they scroll up and down instead
    qtbot.waitUntil(
        lambda: (
            scroll.horizontalScrollBar().maximum() == 0 and sp.width() <= scroll.viewport().width()
        )
    )
    assert sp._checks_columns == 1 and scroll.verticalScrollBar().maximum() > 0
    left, middle = main.sizes()
    assert left <= 280, main.sizes()
    assert middle >= 700, main.sizes()  # it was 555 beside a 441 px pane
    panel = win.diagnostics
    win.tabs.setCurrentWidget(panel)
    panel.add(
        "error",
        "trap_variable_without_variables_arg (tf) · custom",
        "TypeError: "
        "@tf.custom_gradient grad_fn must accept keyword argument 'variables', since "
        "function uses variables",
        "/some/where/traps_tf.py:51",
    )
    lst = panel.list
    # the message column reads 25 characters and more (~15 beside the 441 px pane)
    chars = lst.fontMetrics().averageCharWidth()
    qtbot.waitUntil(lambda: lst.columnWidth(2) >= 25 * chars)
    # every setting reachable: scrolled to, it is in sight whole
    fields = [
        *sp.device.values(),
        sp.graph,
        sp.depth,
        sp.shape,
        sp.dtype,
        sp.range,
        sp.seed,
        sp.upstream,
        *sp.modes.values(),
        *sp.checks.values(),
        sp.timeout,
    ]
    assert not _inside(scroll, sp.timeout)  # below the fold at 700 px...
    for f in fields:  # ...and a scroll away, like the rest
        # the whole field (ensureWidgetVisible only brings a text field's cursor into view)
        centre = f.mapTo(sp, f.rect().center())
        scroll.ensureVisible(centre.x(), centre.y(), f.width() // 2 + 1, f.height() // 2 + 1)
        assert _inside(scroll, f), f
    # the op list keeps its share of the height: the settings take half the window at most
    assert win.tree.height() >= 200


def test_settings_show_whole_at_1500x950(qtbot, engine, tmp_path):
    win = _window(qtbot, engine, tmp_path, (1500, 950))
    main, scroll, sp = win.centralWidget(), win.settings_scroll, win.settings_panel
    # laid out: every setting in sight, the checks in two columns, no scroll bar
    qtbot.waitUntil(
        lambda: (
            _inside(scroll, sp.timeout) and all(_inside(scroll, cb) for cb in sp.checks.values())
        )
    )
    assert sp._checks_columns == 2 and main.sizes()[0] >= 380
    assert scroll.verticalScrollBar().maximum() == 0 and scroll.horizontalScrollBar().maximum() == 0
    # made narrower later, the left pane gives way too (with only the middle stretching it kept
    # its 400 px)
    win.resize(1000, 700)
    qtbot.waitUntil(lambda: main.sizes()[0] <= 280 and sp._checks_columns == 1)
    assert main.sizes()[1] >= 700
