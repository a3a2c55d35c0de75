"""The window's widgets are attributes it makes in its own __init__ (issue 27): window_layout,
window_menus and window_theme build and hand back what they build, none sets an attribute on
the window from outside."""

import ast
from dataclasses import fields
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

import gradviz  # noqa: E402

QT = Path(gradviz.__file__).parent / "qt"


def test_no_module_but_the_window_sets_the_windows_attributes():
    outside = {}
    for path in sorted(QT.rglob("*.py")):
        if path.name == "main_window.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, (ast.AugAssign, ast.AnnAssign))
                else []
            )
            for t in targets:
                for sub in ast.walk(t):
                    if (
                        isinstance(sub, ast.Attribute)
                        and isinstance(sub.value, ast.Name)
                        and sub.value.id in ("win", "window", "main_window")
                    ):
                        outside[f"{path.relative_to(QT)}:{sub.lineno}"] = ast.unparse(sub)
    assert outside == {}


def test_the_window_keeps_each_part_its_builders_hand_back(make_window):
    from PySide6.QtCore import QObject
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QMenu

    from gradviz.app.settings_schema import Key
    from gradviz.qt.window_layout import WindowLayout
    from gradviz.qt.window_menus import WindowMenus

    win = make_window()
    kept = [f.name for f in fields(WindowLayout) if f.name != "central"]
    assert [n for n in kept if not isinstance(vars(win).get(n), QObject)] == ["grid_room"]
    assert win.centralWidget().isAncestorOf(win.grid)
    assert win.flow_split.widget(0) is win.flow_view and win.flow_split.widget(1) is win.grid
    assert [win.tabs.widget(i) for i in range(5)] == [
        win.numbers,
        win.worst,
        win.diagnostics,
        win.checks_matrix,
        win.log,
    ]
    assert win.settings_scroll.widget() is win.settings_panel
    assert win.runs.settings_panel is win.settings_panel  # the controllers got the same parts
    bar = win.menuBar().actions()
    menus = {a.text(): a.menu() for a in bar}
    for f in fields(WindowMenus):
        part = vars(win)[f.name]
        assert isinstance(part, QMenu if f.name.endswith("_menu") else QAction), f.name
    assert win.act_run in menus["&Run"].actions() and win.act_watch in menus["&Run"].actions()
    assert win.recent_menu.menuAction() in menus["&File"].actions()
    assert win.export_menu.menuAction() in menus["&File"].actions()
    assert win.view_menu is menus["&View"] and win.act_log_scale in win.view_menu.actions()
    assert set(win.theme_actions) == {"follow desktop", "light", "dark"}
    assert win.theme_actions[win.theme_choice].isChecked()
    # and they work as built: Log scale reaches the grid and the settings file
    win.act_log_scale.setChecked(True)
    assert win.grid.log_scale is True and win.qs.value(Key.LOG_SCALE) is True
