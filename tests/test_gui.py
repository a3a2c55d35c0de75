"""The real window, offscreen, over the shared warm Engine: load, run, grid, table, cancel,
crash, user errors, reload on change, settings, and no torch/tensorflow in the GUI process."""

import os
import sys

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from gui_helpers import RUN_TIMEOUT_MS, keys_of, run_keys  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

pytestmark = pytest.mark.gui

SCALE_SRC = """
import torch

class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * {factor}
"""

BAD_SRC = """
import os
import time
import torch

class Hangs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        time.sleep(3600)
        return x

    @staticmethod
    def backward(ctx, g):
        return g

class Crashes(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        os._exit(7)

    @staticmethod
    def backward(ctx, g):
        return g

class Raises(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        raise ValueError("my backward is broken")

class NanGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        out = g.clone()
        out[:3] = float("nan")
        out[5] = float("inf")
        return out
"""


def test_tutorials_run_fill_grid_and_table(qtbot, make_window, examples_dir):
    files = [str(examples_dir / "tutorial_torch.py"), str(examples_dir / "tutorial_tf.py")]
    win = make_window(files)
    names = {win.state.loaded.pair_name(k) for k in win.state.loaded.ops}
    assert {"mul_weights", "mul_layer", "round_ste"} <= names
    pairs = win.state.loaded.pairs()
    assert set(pairs["mul_weights"]) == {"torch", "tf"}

    results = run_keys(qtbot, win, keys_of(win, "mul_weights"))
    assert [r.status for r in results] == ["ok", "ok"]
    win.tree.select_pair("mul_weights")
    win.show_pair("mul_weights")
    grid = win.grid
    # rows: the graph's tensors (inputs x, weights and the output); columns: 2 frameworks x 2 modes
    assert set(grid.rows) == {"x", "weights", "out"}
    for row in grid.rows.values():
        assert [(c.framework, c.mode) for c in row.cells] == [
            ("torch", "default"),
            ("torch", "custom"),
            ("tf", "default"),
            ("tf", "custom"),
        ]
    assert grid.plot_count() == 12
    # d loss / d x = weights: the custom curve is the weights' forward value, element by element
    r_torch = next(r for r in results if r.framework == "torch")
    weights = r_torch.tensor("weights").value.ravel()
    cell = next(c for c in grid.rows["x"].cells if (c.framework, c.mode) == ("torch", "custom"))
    np.testing.assert_allclose(cell.data["y"], weights, rtol=1e-6)
    # the table shows the engine's verdicts and stats: upstream ones -> d loss / d out == 1
    table = win.numbers
    for fw in ("torch", "tf"):
        assert table.value("out", fw, "verdict") == "match"
        assert table.value("out", fw, "custom min") == 1.0
        assert table.value("out", fw, "custom max") == 1.0
        assert table.value("x", fw, "custom max") == pytest.approx(float(weights.max()), rel=1e-6)
    assert table.parity.rowCount() > 0
    # selecting a table row highlights that tensor's plots
    table.select("weights", "tf")
    assert grid.rows["weights"].highlighted and not grid.rows["x"].highlighted


def test_views_ste_shape_histogram_heatmap_scatter(qtbot, make_window, examples_dir):
    win = make_window([str(examples_dir / "tutorial_torch.py")])
    run_keys(qtbot, win, keys_of(win, "round_ste"))
    win.tree.select_pair("round_ste")
    grid = win.grid
    grid.set_view("x", "vs_input")
    cells = {c.mode: c for c in grid.rows["x"].cells}
    # straight-through: custom gradient is 1 for every input value, round's own is 0
    assert np.all(cells["custom"].data["y"] == 1.0)
    assert np.all(cells["default"].data["y"] == 0.0)
    assert np.all(np.diff(cells["custom"].data["x"]) >= 0)
    grid.set_view("x", "histogram")
    cells = {c.mode: c for c in grid.rows["x"].cells}
    assert cells["custom"].data["counts"].sum() == 200
    np.testing.assert_array_equal(cells["custom"].data["edges"], cells["default"].data["edges"])
    grid.set_view("x", "scatter")
    scatter = grid.rows["x"].cells[0]  # custom vs default, then custom vs numeric
    assert scatter.mode == "custom~default" and scatter.data["n"] == 200
    assert "heatmap" not in [
        grid.rows["x"].view_box.itemData(i) for i in range(grid.rows["x"].view_box.count())
    ]

    win.settings_panel.shape.setText("4x50")
    run_keys(qtbot, win, keys_of(win, "round_ste"))
    win.grid.set_view("x", "heatmap")
    cell = next(c for c in win.grid.rows["x"].cells if c.mode == "custom")
    assert cell.data["image"].shape == (4, 50)
    assert np.all(cell.data["image"] == 1.0)


def test_user_error_nan_and_absent_gradients(qtbot, make_window, write_module):
    path = write_module("bad_ops.py", BAD_SRC)
    line = next(
        i for i, text in enumerate(BAD_SRC.splitlines(), 1) if "my backward is broken" in text
    )
    win = make_window([path])
    results = run_keys(qtbot, win, [("torch", path, "Raises"), ("torch", path, "NanGrad")])
    raises = next(r for r in results if r.request.qualname == "Raises")
    # the custom mode raised: listed in diagnostics with the user's own file:line
    msgs = win.diagnostics.messages()
    assert any("my backward is broken" in m for m in msgs), msgs
    wheres = [
        win.diagnostics.list.topLevelItem(i).data(3, 0x0100)
        for i in range(win.diagnostics.list.topLevelItemCount())
    ]
    assert f"{path}:{line}" in wheres
    win.tree.select_pair("Raises")
    custom = next(c for c in win.grid.rows["x"].cells if c.mode == "custom")
    assert not custom.has_data and "ValueError" in custom.message
    assert raises.mode_errors or raises.error
    # clicking a diagnostic copies its location
    item = next(
        win.diagnostics.list.topLevelItem(i)
        for i in range(win.diagnostics.list.topLevelItemCount())
        if win.diagnostics.list.topLevelItem(i).data(3, 0x0100) == f"{path}:{line}"
    )
    win.tabs.setCurrentWidget(win.diagnostics)
    lst = win.diagnostics.list
    lst.scrollToItem(item)
    qtbot.mouseClick(lst.viewport(), Qt.LeftButton, pos=lst.visualItemRect(item).center())
    from PySide6.QtGui import QGuiApplication

    assert QGuiApplication.clipboard().text() == f"{path}:{line}"

    win.tree.select_pair("NanGrad")
    custom = next(c for c in win.grid.rows["x"].cells if c.mode == "custom")
    nf = custom.data["nonfinite"]
    assert (nf.nan, nf.posinf, nf.neginf) == (3, 1, 0)
    assert win.numbers.value("x", "torch", "verdict") == "non-finite"


def test_cancel_hanging_then_crash_then_run_again(qtbot, make_window, write_module):
    path = write_module("bad_ops.py", BAD_SRC)
    good = write_module("good_ops.py", SCALE_SRC.format(factor=2.0))
    win = make_window([path, good])
    hang = ("torch", path, "Hangs")
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS) as blocker:
        assert win.run([hang])
        qtbot.waitUntil(
            lambda: win.state.progress.states.get(hang) == "running", timeout=RUN_TIMEOUT_MS
        )
        assert win.act_cancel.isEnabled() and not win.act_run.isEnabled()
        win.cancel()
    (res,) = blocker.args[0]
    assert res.status == "error" and res.error.kind == "cancelled"
    assert win.state.progress.states[hang] == "cancelled"
    assert win.act_run.isEnabled()

    (crash,) = run_keys(qtbot, win, [("torch", path, "Crashes")])
    assert crash.status == "error" and crash.error.kind == "crashed"
    assert any("crashed" in m.lower() for m in win.diagnostics.messages())

    (ok,) = run_keys(qtbot, win, [("torch", good, "Scale")])
    assert ok.status == "ok"
    win.tree.select_pair("Scale")
    assert win.numbers.value("x", "torch", "custom max") == 2.0


def test_changed_file_is_reloaded_and_rerun(qtbot, make_window, write_module):
    path = write_module("scale.py", SCALE_SRC.format(factor=2.0))
    win = make_window([path])
    run_keys(qtbot, win, [("torch", path, "Scale")])
    win.tree.select_pair("Scale")
    assert win.numbers.value("x", "torch", "custom max") == 2.0
    assert win.numbers.value("x", "torch", "verdict") == "match"
    with qtbot.waitSignal(win.runDone, timeout=RUN_TIMEOUT_MS):
        with open(path, "w") as fh:
            fh.write(SCALE_SRC.format(factor=3.0))
    assert win.numbers.value("x", "torch", "custom max") == 3.0
    assert win.numbers.value("x", "torch", "verdict") == "differs"


def test_settings_persist_and_devices_listed(qtbot, make_window, settings, examples_dir, engine):
    win = make_window([str(examples_dir / "tutorial_torch.py")])
    panel = win.settings_panel
    panel.shape.setText("3x7")
    panel.seed.setValue(42)
    panel.modes["numeric"].setChecked(True)
    assert panel.settings("torch").shape == (3, 7)
    panel.shape.setText("3x")
    assert "shape" not in panel.validate()  # "3x" parses as (3,)
    panel.shape.setText("a")
    assert "shape" in panel.validate()
    assert not win.run()
    panel.shape.setText("3x7")
    from gradviz.qt.settings_panel import SettingsPanel

    again = SettingsPanel(settings)
    qtbot.addWidget(again)
    s = again.settings("torch")
    assert (s.shape, s.seed, s.modes) == ((3, 7), 42, ("default", "custom", "numeric"))

    info = engine.devices()
    with qtbot.waitSignal(win.bridge.devicesReady, timeout=RUN_TIMEOUT_MS):
        win.bridge.refresh_devices()
    for fw, box in panel.device.items():
        for d in info[fw]["devices"]:
            i = box.findData(d["name"])
            assert i >= 0
            assert box.model().item(i).isEnabled() == bool(d["available"])


def test_manual_pairing_and_gui_imports_no_framework(
    qtbot, make_window, examples_dir, write_module
):
    # Other tests of this session may import a framework in-process; the window must not add one.
    imported_before = {m for m in ("torch", "tensorflow", "jax") if m in sys.modules}
    tf_file = str(examples_dir / "tutorial_tf.py")
    torch_file = write_module("scale.py", SCALE_SRC.format(factor=2.0))
    win = make_window([torch_file, tf_file])
    a, b = ("torch", torch_file, "Scale"), ("tf", tf_file, "mul_weights")
    win.tree.pair_with(b, a)
    assert set(win.state.loaded.pairs()["mul_weights"]) == {"torch", "tf"}
    win.tree.unpair(a)
    assert set(win.state.loaded.pairs()["mul_weights"]) == {"tf"}
    # (the decisive check runs in a fresh process: test_scripted_run_writes_screenshot)
    for name in ("torch", "tensorflow", "jax"):
        assert name not in sys.modules or name in imported_before


def test_scripted_run_writes_screenshot(tmp_path, write_module):
    import subprocess

    path = write_module("scripted.py", SCALE_SRC.format(factor=2.0))
    png = tmp_path / "grid.png"
    code = (
        "import sys; from gradviz.qt.app import main; c = main([sys.argv[1]], run=True, "
        "screenshot=sys.argv[2]); print('FRAMEWORKS', 'torch' in sys.modules, "
        "'tensorflow' in sys.modules, 'jax' in sys.modules); sys.exit(c)"
    )
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", GRADVIZ_SETTINGS=str(tmp_path / "s.ini"))
    proc = subprocess.run(
        [sys.executable, "-c", code, path, str(png)],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "FRAMEWORKS False False False" in proc.stdout
    from PySide6.QtGui import QImage

    img = QImage(str(png))
    assert not img.isNull() and img.width() > 800 and img.height() > 500


def test_row_axes_cover_every_cell(qtbot, make_window, write_module):
    # custom gradient 3 in one framework's cell must not be clipped by a linked cell holding 0..1
    path = write_module("scale3.py", SCALE_SRC.format(factor=3.0))
    win = make_window([path])
    run_keys(qtbot, win, [("torch", path, "Scale")])
    win.tree.select_pair("Scale")
    cells = [c for c in win.grid.rows["x"].cells if c.has_data]
    qtbot.waitUntil(lambda: all(c.plot.vb.viewRange()[1][1] >= 3.0 for c in cells), timeout=5000)
    for c in cells:
        lo, hi = c.plot.vb.viewRange()[1]
        assert lo <= 2.0 and hi >= 3.0


def test_open_files_adds_recent_and_reloads(qtbot, make_window, settings, write_module):
    first = write_module("one.py", SCALE_SRC.format(factor=2.0))
    win = make_window([first])
    other = write_module("two.py", SCALE_SRC.format(factor=5.0).replace("Scale", "Scale5"))
    with qtbot.waitSignal(win.catalogsLoaded, timeout=RUN_TIMEOUT_MS):
        win.open_files([other])
    assert ("torch", other, "Scale5") in win.state.loaded.ops
    assert win.state.loaded.files == [first, other]
    assert settings.value("files/recent")[0] == other
    assert win.recent_menu.actions()[0].text() == other


def _hand_made_result(n, fw="torch"):
    from gradviz.model import RunRequest, RunResult, RunSettings, TensorResult

    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    custom = np.ones(n, dtype=np.float32)
    custom[[5, n // 2]] = np.nan
    custom[-1] = np.inf
    t = TensorResult(
        "x",
        "input",
        (n,),
        "float32",
        x,
        grads={"custom": custom, "default": np.zeros(n, np.float32)},
    )
    req = RunRequest(
        "/nowhere/ops.py", "Big", fw, RunSettings(shape=(n,), modes=("default", "custom"))
    )
    return RunResult(req, None, device="cpu", tensors=(t,))


def test_grid_decimates_a_million_elements_and_marks_nonfinite(qtbot):
    from gradviz.qt.grid import GridView

    grid = GridView()
    qtbot.addWidget(grid)
    n = 1_000_000
    grid.set_data("Big", {"torch": _hand_made_result(n)}, ("default", "custom"))
    custom = next(c for c in grid.rows["x"].cells if c.mode == "custom")
    assert len(custom.data["y"]) <= 1600 and custom.data["n"] == n
    nf = custom.data["nonfinite"]
    assert (nf.nan, nf.posinf, nf.neginf) == (2, 1, 0)
    for view in ("histogram", "scatter", "vs_input"):
        grid.set_view("x", view)
        assert grid.plot_count() >= 1
    grid.set_view("x", "vs_input")
    custom = next(c for c in grid.rows["x"].cells if c.mode == "custom")
    assert len(custom.data["x"]) <= 1600


def test_diagnostics_panel_names_traps_with_fix_and_line(qtbot, make_window, examples_dir):
    path = str(examples_dir / "traps_torch.py")
    win = make_window([path])
    run_keys(qtbot, win, [("torch", path, "TooManyGrads"), ("torch", path, "InPlaceNoMarkDirty")])
    msgs = win.diagnostics.messages()
    assert any(m.startswith("[GV101-grad-count]") for m in msgs), msgs
    assert any(m.startswith("[GV605-inplace-no-mark-dirty]") for m in msgs), msgs
    src = (examples_dir / "traps_torch.py").read_text().splitlines()
    items = [
        win.diagnostics.list.topLevelItem(i)
        for i in range(win.diagnostics.list.topLevelItemCount())
    ]
    gv101 = next(i for i in items if i.text(2).startswith("[GV101"))
    line = int(gv101.data(3, 0x0100).rpartition(":")[2])
    assert "return" in src[line - 1]  # the backward's return, in the user's file
    assert "fix:" in gv101.toolTip(2)
