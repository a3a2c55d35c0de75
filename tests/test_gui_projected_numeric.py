"""Issue 28 item 7 on the real window (offscreen, real workers): a tensor above 256 elements has
its numeric reference along 16 seeded random directions, the same in torch and TF. Its Numbers
cell said "absent" for numeric min, and its parity row "no gradient in either …" with a match
at 0, a comparison of nothing: the cell now names the directions, and the row compares the two
frameworks' numeric derivatives along them."""

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from gui_helpers import RUN_TIMEOUT_MS, keys_of, run_keys  # noqa: E402

from gradviz.plots.ticks import fmt  # noqa: E402

pytestmark = pytest.mark.gui


def test_a_projected_tensors_numeric_reads_honestly(qtbot, make_window, examples_dir):
    win = make_window(
        [str(examples_dir / f"tutorial_{fw}.py") for fw in ("torch", "tf")],
        {"run/modes": "default,custom,numeric"},
    )
    win.settings_panel.shape.setText("20x30")  # 600 elements: projected
    results = run_keys(qtbot, win, keys_of(win, "round_ste"))
    win.tree.select_pair("round_ste")
    win.show_pair("round_ste")
    numbers = win.numbers
    qtbot.waitUntil(lambda: ("x", "tf") in numbers.rows, timeout=RUN_TIMEOUT_MS)
    by_fw = {r.framework: r.tensor("x") for r in results}
    assert all(t.numeric.method == "projection" for t in by_fw.values())
    for fw in ("torch", "tf"):
        assert numbers.text("x", fw, "numeric min") == "16 directions"
    parity = numbers.parity
    heads = [parity.horizontalHeaderItem(c).text() for c in range(parity.columnCount())]

    def row(tensor, mode):
        for r in range(parity.rowCount()):
            cells = {h: parity.item(r, c).text() for c, h in enumerate(heads)}
            if (cells["tensor"], cells["mode"]) == (tensor, mode):
                return cells
        return None

    qtbot.waitUntil(lambda: row("x", "numeric") is not None, timeout=RUN_TIMEOUT_MS)
    numeric = row("x", "numeric")
    assert "no gradient in either" not in numeric["note"]
    assert numeric["note"].startswith("compared along 16 random directions")
    pt, pf = (np.float64(by_fw[fw].numeric.projections["numeric"]) for fw in ("torch", "tf"))
    assert numeric["max abs err"] == fmt(float(np.max(np.abs(pt - pf))))
