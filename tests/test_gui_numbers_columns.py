"""The Numbers table's columns (issue 13): ~27 of them, a default set in sight at 1500x950 (the
verdict, how far custom is from default and numeric, each mode's range), the others a right-click
on the header away, the choice remembered in the settings file as a plain string; the JSON export keeps
every number whatever the table shows."""

import pytest

pytest.importorskip("pytestqt")

from gui_helpers import RUN_TIMEOUT_MS, FakeDialogs  # noqa: E402
from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QMenu  # noqa: E402

from gradviz import report  # noqa: E402
from gradviz.app.settings_file import SettingsFile  # noqa: E402
from gradviz.qt import export_actions as EA  # noqa: E402
from gradviz.qt import export_dialogs as ED  # noqa: E402

pytestmark = pytest.mark.gui


DEFAULT_SHOWN = [
    "tensor",
    "fw",
    "verdict",
    "shape",
    "custom~default max abs err",
    "custom~default differ",
    "custom~numeric max abs err",
    "custom~numeric differ",
    "default min",
    "default max",
    "custom min",
    "custom max",
    "numeric min",
    "numeric max",
    "explanation",
]


def _header_menu_pick(qtbot, numbers, text):
    """Right-click the table's header and pick `text` in the menu that opens; returns the
    menu's entries and which were ticked."""
    header = numbers.table.horizontalHeader()
    seen = []

    def pick():
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(20, pick)
            return
        seen.extend((a.text(), a.isChecked()) for a in menu.actions() if a.text())
        next(a for a in menu.actions() if a.text() == text).trigger()
        menu.close()

    QTimer.singleShot(0, pick)
    with qtbot.waitSignal(header.customContextMenuRequested):
        header.customContextMenuRequested.emit(header.rect().center())
    qtbot.waitUntil(lambda: bool(seen))
    return seen


def _visible(numbers):
    t = numbers.table
    return [numbers._cols[c][0] for c in range(t.columnCount()) if not t.isColumnHidden(c)]


def _run_round_ste(qtbot, win):
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
        assert win.run(win.state.loaded.keys_of("round_ste"))
    win.tree.select_pair("round_ste")
    win.show_pair("round_ste")
    win.tabs.setCurrentWidget(win.numbers)
    qtbot.waitUntil(lambda: ("x", "torch") in win.numbers.rows, timeout=RUN_TIMEOUT_MS)


def test_default_columns_fit_and_the_header_menu_chooses_and_remembers(
    qtbot, make_window, examples_dir, settings, tmp_path, monkeypatch
):
    ex = str(examples_dir / "tutorial_torch.py")
    win = make_window([ex], {"run/modes": "default,custom,numeric"})
    win.resize(1500, 950)
    _run_round_ste(qtbot, win)
    numbers, t = win.numbers, win.numbers.table
    assert len(numbers._cols) == 27 and _visible(numbers) == DEFAULT_SHOWN
    QApplication.processEvents()
    # every default column but the explanation (it has a tooltip) is in sight without scrolling
    assert t.horizontalScrollBar().value() == 0
    for head in DEFAULT_SHOWN[:-1]:
        c = [h for h, _s, _k in numbers._cols].index(head)
        assert 0 <= t.columnViewportPosition(c), head
        assert t.columnViewportPosition(c) + t.columnWidth(c) <= t.viewport().width(), head
    # a hidden column still holds its number (the STE's gap, relative where numeric is 0)
    assert numbers.text("x", "torch", "custom~numeric max rel err") == "1"
    # the header's menu: every column, ticked as shown; untick one, tick another
    seen = _header_menu_pick(qtbot, numbers, "custom~default differ")
    assert [s[0] for s in seen] == ["Show all", "Default columns"] + [c[0] for c in numbers._cols]
    assert dict(seen)["custom~default differ"] is True and dict(seen)["tolerance"] is False
    assert "custom~default differ" not in _visible(numbers)
    _header_menu_pick(qtbot, numbers, "tolerance")
    assert "tolerance" in _visible(numbers)
    assert settings.value("numbers/hidden_columns") is not None
    saved = settings.value("numbers/hidden_columns")
    assert isinstance(saved, str) and "custom~default differ" in saved.split(",")
    # a new window on the same settings file shows the same columns
    settings.sync()
    again = SettingsFile(settings.fileName())
    from gradviz.qt.main_window import MainWindow

    win2 = MainWindow([ex], engine=win.bridge.engine, qsettings=again)
    qtbot.addWidget(win2)
    win2.numbers.set_data(win.grid.comparisons, modes=win.grid.modes)
    assert _visible(win2.numbers) == _visible(numbers)
    # Show all: all 27; Default columns: back to the first set
    _header_menu_pick(qtbot, numbers, "Show all")
    assert _visible(numbers) == [c[0] for c in numbers._cols]
    assert settings.value("numbers/hidden_columns") == ""
    _header_menu_pick(qtbot, numbers, "Default columns")
    assert _visible(numbers) == DEFAULT_SHOWN and settings.value("numbers/hidden_columns") is None
    # the JSON export keeps every number, whatever the table shows
    _header_menu_pick(qtbot, numbers, "custom~numeric max abs err")
    fake = FakeDialogs([str(tmp_path / "run.json")])
    monkeypatch.setattr(ED, "dialogs", fake)
    menu = QMenu(win)
    EA.install(win.exports, menu)
    next(a for a in menu.actions() if a.text() == "Whole run as JSON report…").trigger()
    (op,) = report.read_json(str(tmp_path / "run.json"))["ops"]
    x = next(tt for tt in op["tensors"] if tt["name"] == "x")
    assert x["metrics"]["custom~numeric"]["max_abs_err"] == pytest.approx(1.0)
    assert set(x["metrics"]["custom~default"]) >= {"max_abs_err", "max_rel_err", "n_differ"}
    assert {"min", "max", "mean", "nan", "inf"} <= set(x["stats"]["custom"])
