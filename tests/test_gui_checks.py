"""The checks matrix in the real window: checks run after the plain results and fill in per op;
a cell shows status by colour and icon, and a click gives the message, the fix and file:line."""

from pathlib import Path

import pytest
from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402

from gradviz.app.settings_file import SettingsFile

OPS = Path(__file__).resolve().parent / "corpus" / "checks" / "torch_ops.py"


@pytest.fixture
def window(make_window):
    return make_window([str(OPS)], {"run/modes": "default,custom,numeric"})


def key(name):
    return ("torch", str(OPS), name)


def test_no_checks_by_default_and_the_setting_persists(window, tmp_path):
    panel = window.settings_panel
    assert window.settings_panel.settings("torch").checks == ()
    assert "No contract checks chosen" in window.checks_matrix.detail.text()
    panel.checks["vmap"].setChecked(True)
    panel.checks["double_backward"].setChecked(True)
    assert panel.settings("torch").checks == ("double_backward", "vmap")
    again = SettingsFile(str(tmp_path / "gradviz.ini"))
    assert str(again.value("run/checks")) == "double_backward,vmap"


def test_matrix_fills_after_the_plain_results_and_explains_a_cell(qtbot, window):
    panel = window.settings_panel
    for name in ("double_backward", "precision"):
        panel.checks[name].setChecked(True)
    events = []
    window.bridge.resultReady.connect(
        lambda a: a.result.partial or events.append(("result", a.result.name))
    )
    window.bridge.checksReady.connect(
        lambda r: events.append(
            ("checks", r.name, window.grid.isVisible() and bool(window.grid.rows))
        )
    )
    keys = [key("Cube"), key("CubeOnce")]
    with qtbot.waitSignal(window.runDone, timeout=RUN_TIMEOUT_MS) as done:
        assert window.run(keys)
        # pending cells while the run goes on, for the chosen checks only
        assert window.checks_matrix.cell_text(key("Cube"), "double_backward").startswith("…")
        assert window.checks_matrix.cell_text(key("Cube"), "vmap") == ""
    kinds = [e[0] for e in events]
    assert kinds.count("result") == 2 and kinds.count("checks") == 2
    assert kinds.index("checks") > max(i for i, k in enumerate(kinds) if k == "result")
    assert all(e[2] for e in events if e[0] == "checks")  # the grid was drawn before

    m = window.checks_matrix
    assert m.cell_text(key("Cube"), "double_backward") == "✓ pass"
    assert m.cell_text(key("CubeOnce"), "double_backward") == "✗ fail"
    assert m.cell_text(key("CubeOnce"), "precision") == "✓ pass"
    assert m.cell_color(key("CubeOnce"), "double_backward") != m.cell_color(
        key("Cube"), "double_backward"
    )
    assert window.tabs.tabText(window.tabs.indexOf(m)) == "Checks (1 failed)"
    m.choose(key("CubeOnce"), "double_backward")
    text = m.detail.text()
    assert "once_differentiable" in text and "fix:" in text
    line = next(i for i, ln in enumerate(OPS.read_text().splitlines(), 1) if "class CubeOnce" in ln)
    assert f"torch_ops.py:{line + 9}" in text  # its `def backward`
    # the results the window keeps (and exports) carry the checks too
    assert [c.status for c in window.state.results.result(key("CubeOnce")).checks] == [
        "fail",
        "pass",
    ]
    assert any(c.status == "fail" for r in done.args[0] for c in r.checks)
