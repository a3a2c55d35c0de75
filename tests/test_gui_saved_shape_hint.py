"""Issue 28 item 7 on the real window (offscreen, real workers): a saved shape that breaks the
built-in examples is named. At 7x3 the trap examples' scale_by_variable
(trap_variable_without_variables_arg, a 200-element variable) raises "Incompatible shapes:
[7,3] vs. [200]"; the status bar and the log say the run used the saved shape, not the
default, and how to run at the default."""

import pytest

pytest.importorskip("pytestqt")

from gui_helpers import RUN_TIMEOUT_MS, run_keys  # noqa: E402

pytestmark = pytest.mark.gui


def test_a_saved_shape_that_breaks_the_examples_is_named(qtbot, make_window):
    win = make_window([], {"run/shape": "7x3"})  # as a launch restores it
    assert win.settings_panel.settings("tf").shape == (7, 3)
    with qtbot.waitSignal(win.catalogsLoaded, timeout=RUN_TIMEOUT_MS):
        win.open_trap_examples()
    results = run_keys(qtbot, win, list(win.state.loaded.ops))
    failed = {r.name: r.error for r in results if r.error is not None}
    assert "Incompatible shapes" in failed["trap_variable_without_variables_arg"].message
    hint = (
        "trap_variable_without_variables_arg failed on shapes at the saved shape 7x3, not the default 200: "
        "Run ▸ Reset settings to defaults runs it at that"
    )
    assert hint in win.summary.text()
    assert hint in win.log.toPlainText()
    assert (
        "trap_too_many_grads failed" not in win.summary.text()
    )  # an error of the op's own, not the shape's
