"""Export from the app (pytest-qt, a real grid and run state): menu actions, dialogs answered
by a stand-in, overwrite question, failures reported with the reason and no file left behind."""

import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from gui_helpers import FakeDialogs
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QMainWindow, QMenu
from samples import broken_tf_result, ste_result

from gradviz import report
from gradviz.compare import compare_result
from gradviz.qt import export_actions as EA
from gradviz.qt import export_dialogs as ED
from gradviz.qt import export_files as EF


def shown_exports(qtbot, big=False) -> EA.WindowExports:
    """The exports over real parts: a window holding a real grid that shows a torch and a TF
    result (row `out` as a histogram, selected), and a real, empty run state (no op files open,
    no results held: the whole-run exports take what the grid shows)."""
    from gradviz.app.state import AppState
    from gradviz.model import MODES
    from gradviz.qt.grid import GridView

    n = 1_000_000 if big else 300
    rs = {
        "torch": ste_result("torch", n=n, spike_at=50, nan_at=(120,)),
        "tf": broken_tf_result(300),
    }
    comps = {fw: compare_result(r) for fw, r in rs.items()}
    parent, grid = QMainWindow(), GridView()
    parent.setCentralWidget(grid)
    qtbot.addWidget(parent)
    grid.set_data("round_ste", rs, MODES, comps)
    grid.set_view("out", "histogram")
    grid.highlight("out")
    return EA.WindowExports(parent, grid, AppState())


@pytest.fixture
def exports(qtbot):
    return shown_exports(qtbot)


@pytest.fixture
def fake(monkeypatch):
    d = FakeDialogs()
    monkeypatch.setattr(ED, "dialogs", d)
    return d


def _menu_actions(exports):
    menu = QMenu(exports.parent)
    EA.install(exports, menu)
    return {a.text(): a for a in menu.actions() if a.text()}


def test_menu_exports_grid_in_each_format(exports, fake, tmp_path):
    acts = _menu_actions(exports)
    assert set(acts) == {
        "Grid as image (PNG, SVG, PDF)…",
        "Selected row as image…",
        "Flow chart (stack graph) as image…",
        "Selected tensor as CSV…",
        "Whole run as NPZ…",
        "Whole run as JSON report…",
        "Reproduction script (this op)…",
    }
    fake.paths = [str(tmp_path / f"grid{e}") for e in (".png", ".svg", ".pdf")]
    for _ in range(3):
        acts["Grid as image (PNG, SVG, PDF)…"].trigger()
    assert not fake.errors
    assert fake.asked[0] == ("Export grid as image", "round_ste.png", ED.IMAGE_FILTERS)
    img = QImage(str(tmp_path / "grid.png"))
    assert img.width() > 2000 and img.height() > 800  # two rows, five plots wide
    root = ET.parse(tmp_path / "grid.svg").getroot()
    texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "non-finite" in texts and "count" in texts  # verdict badge; histogram row kept
    assert (tmp_path / "grid.pdf").read_bytes().startswith(b"%PDF-")
    assert fake.done_msgs[-1] == f"saved {tmp_path / 'grid.pdf'}"


def test_row_and_plot_images(exports, fake, tmp_path, qapp):
    fake.paths = [str(tmp_path / "row.png")]
    _menu_actions(exports)["Selected row as image…"].trigger()  # the highlighted row: out
    assert fake.asked[0][1] == "round_ste_out.png"
    row = QImage(str(tmp_path / "row.png"))
    menu = QMenu(exports.parent)
    EA.add_plot_actions(menu, exports, "x", "torch", "custom")
    acts = {a.text(): a for a in menu.actions()}
    assert list(acts) == ["Export this plot…", "Export row x…", "Export grid…", "Export x as CSV…"]
    fake.paths = [str(tmp_path / "plot.png")]
    acts["Export this plot…"].trigger()
    plot = QImage(str(tmp_path / "plot.png"))
    assert not fake.errors
    assert row.height() < 700 and row.width() > 2000
    assert plot.width() < 1400 and plot.height() < 1000


def test_data_exports_read_back(exports, fake, tmp_path):
    acts = _menu_actions(exports)
    fake.paths = [str(tmp_path / "x.csv"), str(tmp_path / "run.npz"), str(tmp_path / "run.json")]
    exports.grid.rows["out"].highlighted = False
    exports.grid.rows["x"].highlighted = True
    acts["Selected tensor as CSV…"].trigger()
    acts["Whole run as NPZ…"].trigger()
    acts["Whole run as JSON report…"].trigger()
    assert not fake.errors
    cols = report.read_csv(str(tmp_path / "x.csv"))
    custom = exports.grid.results["torch"].tensor("x").grads["custom"]
    assert np.array_equal(cols["custom"], custom.astype(np.float64), equal_nan=True)
    arrays = report.read_npz(str(tmp_path / "run.npz"))
    assert "torch/round_ste/custom/x" in arrays and "tf/round_ste/default/x" not in arrays
    data = report.read_json(str(tmp_path / "run.json"))
    assert {o["framework"] for o in data["ops"]} == {"torch", "tf"}


def test_overwrite_is_asked_and_no_keeps_the_file(exports, tmp_path):
    target = tmp_path / "grid.png"
    target.write_bytes(b"old")
    no = FakeDialogs([str(target)], overwrite=False)
    assert EA.grid_image(exports, dialogs=no) is None
    assert no.confirms == [str(target)] and target.read_bytes() == b"old"
    yes = FakeDialogs([str(target)], overwrite=True)
    assert EA.grid_image(exports, dialogs=yes) == str(target)
    assert not QImage(str(target)).isNull()


def test_cancelled_dialog_writes_nothing(exports, tmp_path):
    d = FakeDialogs([])
    assert EA.grid_image(exports, dialogs=d) is None
    assert d.asked and not d.errors and not os.listdir(tmp_path)


def test_failure_says_why_and_leaves_nothing(exports, tmp_path, monkeypatch):
    from gradviz.qt.export import pdf

    d = FakeDialogs(
        [
            str(tmp_path / "grid.pdf"),
            str(tmp_path / "missing" / "grid.png"),
            str(tmp_path / "grid.gif"),
        ]
    )

    def broken(path, *args):
        open(path, "wb").write(b"%PDF-1.4 half")
        raise OSError("no space left on device")

    with monkeypatch.context() as m:
        m.setattr(pdf, "write_pages", broken)  # every PDF, one page or many
        assert EA.grid_image(exports, dialogs=d) is None
    assert EA.grid_image(exports, dialogs=d) is None
    assert EA.grid_image(exports, dialogs=d) is None
    titles = {t for t, _ in d.errors}
    texts = [t for _, t in d.errors]
    assert titles == {"Export failed"} and len(texts) == 3
    assert "no space left on device" in texts[0]
    assert "does not exist" in texts[1]
    assert ".png, .svg, .pdf" in texts[2]
    assert os.listdir(tmp_path) == []


def test_big_tensor_svg_from_the_app(qtbot, tmp_path):
    w = shown_exports(qtbot, big=True)
    d = FakeDialogs([str(tmp_path / "big.svg")])
    assert EA.grid_image(w, dialogs=d) == str(tmp_path / "big.svg")
    assert not d.errors
    assert (tmp_path / "big.svg").stat().st_size <= 2 * 1024 * 1024
    ET.parse(tmp_path / "big.svg")


def test_an_export_never_overwrites_an_op_file(exports, tmp_path):
    """The app's exports refuse a path that is an op file of the exported run or of the window
    (issue 26, item 2: `--json ops.py` overwrote the op file; so could File > Export)."""
    import dataclasses

    op = tmp_path / "ops.py"
    op.write_text("OPS = 1\n")
    r = ste_result("torch")
    r = dataclasses.replace(r, request=dataclasses.replace(r.request, file=str(op)))
    link = tmp_path / "link.json"
    link.symlink_to(op)
    for target in (op, link):
        d = FakeDialogs([str(target)])
        assert EF.export_json(exports.parent, [r], dialogs=d) is None
        [(title, text)] = d.errors
        assert title == "Export refused" and f"is the op file {op}" in text
    from gradviz.app.state import AppState

    exports.state = AppState([str(op)])
    d = FakeDialogs([str(op)])  # an op file the window has open
    assert (
        EF.export_csv(exports.parent, r.tensor("x"), dialogs=d, op_files=exports.op_files()) is None
        and d.errors
    )
    assert op.read_text() == "OPS = 1\n"
