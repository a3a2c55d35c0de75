"""A failed contract check's finding (GV7xx) in the real window (issue 27): it joins the op's
analysis when the checks come back, so Diagnostics lists it once, the op tree's tooltip names
it, and the window's whole-run JSON export holds it as `gradviz run --checks ... --json` does."""

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from gui_helpers import FakeDialogs, run_keys  # noqa: E402

from gradviz import report  # noqa: E402
from gradviz.qt import export_actions as EA  # noqa: E402
from gradviz.qt import export_dialogs as ED  # noqa: E402

pytestmark = pytest.mark.gui

OPS = Path(__file__).resolve().parent / "corpus" / "checks" / "torch_ops.py"
ONCE = "GV701-double-backward-once"


def test_a_failed_checks_finding_reaches_the_analysis_the_tree_and_the_export(
    qtbot, make_window, tmp_path, monkeypatch
):
    from gradviz.cli import main

    win = make_window([str(OPS)], {"run/modes": "default,custom,numeric"})
    win.settings_panel.checks["double_backward"].setChecked(True)
    key = ("torch", str(OPS), "CubeOnce")
    run_keys(qtbot, win, [key])
    assert win.checks_matrix.cell_text(key, "double_backward") == "✗ fail"

    held = win.state.results.get(key)
    assert [c.name for c in held.result.checks] == ["double_backward"]
    assert [f.code for f in held.findings].count(ONCE) == 1
    assert [p.code for p in win.diagnostics.entries()].count(ONCE) == 1
    assert ONCE in win.tree._op_tip(key)

    fake = FakeDialogs([str(tmp_path / "window.json")])
    monkeypatch.setattr(ED, "dialogs", fake)
    menu_action = next(
        a for a in _export_menu(win).actions() if a.text() == "Whole run as JSON report…"
    )
    menu_action.trigger()
    assert not fake.errors
    window = report.read_json(str(tmp_path / "window.json"))
    main(
        [
            "run",
            str(OPS),
            "--op",
            "CubeOnce",
            "--framework",
            "torch",
            "--checks",
            "double_backward",
            "--json",
            str(tmp_path / "cli.json"),
            "--quiet",
        ]
    )
    cli = report.read_json(str(tmp_path / "cli.json"))
    [w_op] = [op for op in window["ops"] if op["qualname"] == "CubeOnce"]
    [c_op] = [op for op in cli["ops"] if op["qualname"] == "CubeOnce"]
    assert ONCE in [d["code"] for d in w_op["diagnostics"]]
    assert w_op["diagnostics"] == c_op["diagnostics"]


def _export_menu(win):
    from PySide6.QtWidgets import QMenu

    menu = QMenu(win)
    EA.install(win.exports, menu)
    return menu
