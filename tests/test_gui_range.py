"""The settings panel's range field (issue 10 item 4): `--range` in the app, validated and saved
as a plain value, and it reaches the run."""

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402

from gradviz.app.settings_file import SettingsFile  # noqa: E402
from gradviz.qt.main_window import MainWindow  # noqa: E402

pytestmark = pytest.mark.gui

SRC = """\
import torch


class HardSigmoid(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.hardsigmoid(x)
"""


def _window(qtbot, engine, ini, files=(), start=True):
    qs = SettingsFile(str(ini))
    win = MainWindow(list(files), engine=engine, qsettings=qs)
    qtbot.addWidget(win)
    win.show()
    if start:
        with qtbot.waitSignal(win.catalogsLoaded, timeout=RUN_TIMEOUT_MS):
            win.start(run=False)
    return win


def test_range_field_reaches_the_run(qtbot, engine, tmp_path, write_module):
    path = write_module("hardsig.py", SRC)
    ini = tmp_path / "gradviz.ini"
    win = _window(qtbot, engine, ini, [path])
    panel = win.settings_panel
    assert panel.range.text() == "-3,3" and panel.settings("torch").input_range == (-3.0, 3.0)
    panel.modes["numeric"].setChecked(False)
    panel.range.setText("5,7")
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as blocker:
        assert win.run()
    [res] = [r for r in blocker.args[0] if r.framework == "torch" and r.status == "ok"]
    x = res.tensor("x").value
    assert res.request.settings.input_range == (5.0, 7.0)
    assert x.min() >= 5.0 and x.max() < 7.0 and x.max() - x.min() > 1.5
    np.testing.assert_array_equal(res.tensor("x").grads["custom"], np.zeros_like(x))  # flat above 3


def test_bad_range_is_refused_and_saved_one_falls_back(qtbot, engine, tmp_path, write_module):
    ini = tmp_path / "gradviz.ini"
    win = _window(qtbot, engine, ini, [write_module("hardsig.py", SRC)])
    panel = win.settings_panel
    for bad in ("6,-6", "a,b", "1", "nan,2"):
        panel.range.setText(bad)
        assert "range" in panel.validate(), bad
        assert "f7d0d0" in panel.range.styleSheet()
        assert not win.run()
    panel.range.setText("-6, 6")
    assert panel.validate() == "" and panel.range.styleSheet() == ""
    assert panel.settings("tf").input_range == (-6.0, 6.0)
    win.close()
    again = _window(qtbot, engine, ini, start=False)
    assert again.settings_panel.settings("torch").input_range == (-6.0, 6.0)  # saved

    # a file written by hand (fresh paths: Qt caches a settings file per process)
    bad = tmp_path / "bad.ini"
    bad.write_text("[run]\nrange=banana\n")
    third = _window(qtbot, engine, bad, start=False)
    assert third.settings_panel.range.text() == "-3,3"
    assert "run/range='banana'" in third.summary.text()
    listed = tmp_path / "listed.ini"
    listed.write_text("[run]\nrange=-1.5,2\n")  # unquoted: Qt reads a list of two
    fourth = _window(qtbot, engine, listed, start=False)
    assert fourth.settings_panel.settings("torch").input_range == (-1.5, 2.0)


NLL = """\
import gradviz
import torch


@gradviz.op(inputs={"x": (20, 10), "target": {"shape": (20,), "dtype": "int64", "range": (0, 9)},
                    "mask": {"shape": (20,), "dtype": "bool"}})
class MaskedNLL(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, target, mask):
        ctx.save_for_backward(target, mask)
        return -x.gather(1, target[:, None])[:, 0] * mask

    @staticmethod
    def backward(ctx, g):
        target, mask = ctx.saved_tensors
        onehot = torch.nn.functional.one_hot(target, 10).to(g.dtype)
        return -(g * mask)[:, None] * onehot, None, None
"""


def test_integer_inputs_in_the_window(qtbot, engine, tmp_path, write_module):
    """int64 / bool inputs reach the window as values without gradient columns, said plainly."""
    win = _window(qtbot, engine, tmp_path / "gradviz.ini", [write_module("nll.py", NLL)])
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as blocker:
        assert win.run()
    [res] = [r for r in blocker.args[0] if r.status == "ok"]
    assert res.tensor("target").value.dtype == np.int64
    table = win.numbers.table
    headers = [c[0] for c in win.numbers._cols]  # drawn on two lines: "custom\nNaN/Inf"
    rows = {table.item(r, 0).text(): r for r in range(table.rowCount())}
    target = rows["target"]
    assert table.item(target, headers.index("verdict")).text() == "no-gradient"
    assert table.item(target, headers.index("custom NaN/Inf")).text() == "—"  # nothing ran
    assert (
        table.item(target, headers.index("explanation"))
        .text()
        .startswith("integer input: no gradient")
    )
    assert table.item(rows["x"], headers.index("verdict")).text() == "match"


def test_the_window_refuses_a_non_finite_upstream_as_the_cli_does(qtbot, engine, tmp_path):
    """The window took `const:inf`, which the CLI refused (issue 27): one parse_upstream for both."""
    win = _window(qtbot, engine, tmp_path / "up.ini", start=False)
    panel = win.settings_panel
    for bad in ("const:inf", "const:nan", "const:-inf"):
        panel.upstream.setCurrentText(bad)
        assert "the constant must be a finite number" in panel.validate(), bad
    panel.upstream.setCurrentText("const:0.5")
    assert panel.validate() == "" and panel.settings("torch").upstream == "const:0.5"
