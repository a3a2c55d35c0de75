"""Issue 31 in the window (offscreen, real workers): JAX's column group in the grid, built like
torch's and TF's: its columns (default, custom, numeric) titled with the framework in its colour,
drawn in the modes' colours with JAX's dotted line (the legend says so), the groups of two or
three frameworks apart by a wider gap, the last group reachable whole by scrolling sideways, and
the parity table pairing each two frameworks."""

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from gui_helpers import RUN_TIMEOUT_MS, keys_of, run_keys, scroll_right_until  # noqa: E402
from PySide6.QtCore import QPoint, QRect, Qt  # noqa: E402

from gradviz.plots.palette import MODE_COLORS  # noqa: E402
from gradviz.qt.grid.row import GROUP_GAP, PLOT_GAP  # noqa: E402
from gradviz.qt.theme import framework_color, plot_text  # noqa: E402
from gradviz.vocab import Framework  # noqa: E402

pytestmark = [
    pytest.mark.gui,
    pytest.mark.skipif(not Framework.JAX.installed, reason="jax is not installed"),
]
MODES3 = ("default", "custom", "numeric")


@pytest.fixture
def jax_dir(corpus_dir):
    return corpus_dir / "jax"


def _shown(qtbot, win, pair: str):
    results = run_keys(qtbot, win, keys_of(win, pair))
    assert results and all(r.status == "ok" for r in results), [r.error for r in results]
    win.tree.select_pair(pair)
    win.show_pair(pair)
    return results


def _grad(results, fw, mode):
    [r] = [r for r in results if r.framework == fw]
    return np.asarray(r.tensor("x").grads[mode], dtype=np.float64), np.asarray(
        r.tensor("x").value, dtype=np.float64
    )


def _gaps(row) -> list[float]:
    """The pixels between each two neighbouring plots of the row."""
    rects = [c.slot.item.sceneBoundingRect() for c in row.cells]
    return [b.left() - a.right() for a, b in zip(rects, rects[1:])]


def _assert_jax_group(row, results) -> None:
    jax = [c for c in row.cells if c.framework == "jax"]
    assert [c.mode for c in jax] == list(MODES3) and all(c.has_data for c in jax)
    for cell in jax:
        html = cell.plot.titleLabel.text
        # "jax" in JAX's colour, then " · custom" in the mode's
        assert f"color:{plot_text(framework_color('jax'))}'>jax</span>" in html, html
        assert f"color:{plot_text(MODE_COLORS[cell.mode])}'> · {cell.mode}</span>" in html, html
        [curve] = [i for i in cell.plot.listDataItems() if i.opts.get("pen") is not None]
        pen = curve.opts["pen"]
        assert pen.style() == Qt.PenStyle.DotLine  # JAX's line, as the legend draws it
        assert pen.color().name() == MODE_COLORS[cell.mode]
        # the gradient drawn is the run's: cube's d/dx x^3 = 3 x^2 (upstream ones)
        grad, x = _grad(results, "jax", cell.mode)
        np.testing.assert_allclose(cell.data["y"], grad)
        rtol = 1e-3 if cell.mode == "numeric" else 1e-5
        np.testing.assert_allclose(grad, 3.0 * x**2, rtol=rtol, atol=1e-4)


def test_a_jax_only_op_has_its_own_column_group(qtbot, make_window, jax_dir):
    win = make_window([str(jax_dir / "twins_jax.py")], {"run/modes": "default,custom,numeric"})
    results = _shown(qtbot, win, "cube")
    row = win.grid.rows["x"]
    assert [c.framework for c in row.cells] == ["jax"] * 3
    _assert_jax_group(row, results)
    assert row.desc.verdicts == {"jax": "match"}
    assert max(_gaps(row)) <= PLOT_GAP + 1  # one framework: no group gap
    header = win.grid.header.text()
    assert "┈┈" in header  # JAX's dotted line in the legend
    assert "JAX" in header or "jax" in header


def test_three_frameworks_side_by_side_with_pairwise_parity(qtbot, make_window, jax_dir):
    files = [str(jax_dir / f"twins_{fw}.py") for fw in ("torch", "tf", "jax")]
    win = make_window(files, {"run/modes": "default,custom,numeric"})
    win.resize(1500, 950)
    results = _shown(qtbot, win, "cube")
    row = win.grid.rows["x"]
    assert [(c.framework, c.mode) for c in row.cells] == [
        (fw, m) for fw in ("torch", "tf", "jax") for m in MODES3
    ]
    _assert_jax_group(row, results)
    assert row.desc.verdicts == {"torch": "match", "tf": "match", "jax": "match"}
    for fw in ("torch", "tf"):  # the same gradient in each group, each in its own colour
        assert (
            f"color:{plot_text(framework_color(fw))}'>{fw}</span>"
            in row.cells[0 if fw == "torch" else 3].plot.titleLabel.text
        )
    qtbot.waitUntil(lambda: all(c.slot.vb.width() > 50 for c in row.cells))
    gaps = _gaps(row)
    # a wider gap after torch's and after TF's last column, the plot gap within a group
    assert [i for i, g in enumerate(gaps) if g >= GROUP_GAP - 1] == [2, 5], gaps
    assert max(g for i, g in enumerate(gaps) if i not in (2, 5)) <= PLOT_GAP + 1, gaps
    header = win.grid.header.text()
    assert "┈┈" in header and "╌╌" in header

    # nine columns are wider than the grid: scrolled right, JAX's group is in sight, whole
    grid = win.grid
    port = QRect(QPoint(0, 0), grid.viewport().size())

    def corners(cell):
        area = cell.slot.item.sceneBoundingRect().toRect()
        left = row.canvas.mapTo(grid.viewport(), row.canvas.mapFromScene(area.topLeft()))
        right = row.canvas.mapTo(grid.viewport(), row.canvas.mapFromScene(area.bottomRight()))
        return left, right

    def jax_in_sight():
        return all(port.contains(p) for c in row.cells[6:] for p in corners(c))

    scroll_right_until(qtbot, grid, jax_in_sight)
    for cell in row.cells[6:]:
        assert port.contains(corners(cell)[1]), (cell.mode, port, corners(cell))

    # the parity table pairs each two frameworks: cube matches in every pair
    parity = win.numbers.parity
    heads = [parity.horizontalHeaderItem(c).text() for c in range(parity.columnCount())]

    def rows():
        return [
            {h: parity.item(r, c).text() for c, h in enumerate(heads)}
            for r in range(parity.rowCount())
        ]

    qtbot.waitUntil(lambda: len(rows()) > 0, timeout=RUN_TIMEOUT_MS)
    seen = {(r["frameworks"], r["tensor"], r["mode"]): r["verdict"] for r in rows()}
    pairs = {k[0] for k in seen}
    assert len(pairs) == 3 and all("jax" in p or ("torch" in p and "tf" in p) for p in pairs)
    assert set(seen.values()) == {"match"}


def test_a_wrong_jax_rule_differs_from_its_torch_twin(qtbot, make_window, jax_dir):
    files = [str(jax_dir / f"twins_{fw}.py") for fw in ("torch", "jax")]
    win = make_window(files, {"run/modes": "default,custom,numeric"})
    results = _shown(qtbot, win, "cube_off")
    row = win.grid.rows["x"]
    assert [c.framework for c in row.cells] == ["torch"] * 3 + ["jax"] * 3
    assert row.desc.verdicts["jax"] == "differs" and row.desc.verdicts["torch"] == "match"
    custom = next(c for c in row.cells if (c.framework, c.mode) == ("jax", "custom"))
    grad, x = _grad(results, "jax", "custom")
    np.testing.assert_allclose(custom.data["y"], grad)
    np.testing.assert_allclose(grad, 2.0 * x**2, rtol=1e-5)  # the rule's wrong factor, drawn
    parity = win.numbers.parity
    heads = [parity.horizontalHeaderItem(c).text() for c in range(parity.columnCount())]

    def verdict(mode):
        for r in range(parity.rowCount()):
            cells = {h: parity.item(r, c).text() for c, h in enumerate(heads)}
            if (cells["tensor"], cells["mode"]) == ("x", mode):
                return cells["verdict"]
        return None

    qtbot.waitUntil(lambda: verdict("custom") is not None, timeout=RUN_TIMEOUT_MS)
    assert verdict("custom") == "differs"
    assert verdict("default") == verdict("numeric") == verdict("value") == "match"
