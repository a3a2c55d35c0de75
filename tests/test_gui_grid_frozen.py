"""The grid's row headers as a frozen first column (issue 28, in the real window offscreen with
real workers): three frameworks' nine columns of `cube` are wider than the grid at 1500x950;
scrolled right to the end, each row's header (name, shape, verdicts, view and fit) and the grid's
own header stay at the viewport's left edge, on top, while JAX's plots come into view beside
them; scrolling up and down moves headers and rows together; the row's y sync still holds and
the SVG export of the grid draws every column, scrolled or not."""

import re
import xml.etree.ElementTree as ET

import pytest

pytest.importorskip("pytestqt")

from gui_helpers import FakeDialogs, keys_of, run_keys, scroll_right_until  # noqa: E402
from PySide6.QtCore import QPoint, QRect  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from gradviz.qt import export_actions as EA  # noqa: E402
from gradviz.vocab import Framework  # noqa: E402

pytestmark = [
    pytest.mark.gui,
    pytest.mark.skipif(not Framework.JAX.installed, reason="jax is not installed"),
]


def _in_port(grid, widget) -> QRect:
    """The widget's rect in the grid viewport's coordinates."""
    return QRect(widget.mapTo(grid.viewport(), QPoint(0, 0)), widget.size())


def _plot_rect(grid, row, cell) -> QRect:
    area = cell.slot.item.sceneBoundingRect().toRect()
    left = row.canvas.mapTo(grid.viewport(), row.canvas.mapFromScene(area.topLeft()))
    right = row.canvas.mapTo(grid.viewport(), row.canvas.mapFromScene(area.bottomRight()))
    return QRect(left, right)


def _svg_titles(path) -> list[str]:
    root = ET.parse(path).getroot()
    words = [
        " ".join((t.text or "").split()) for t in root.iter("{http://www.w3.org/2000/svg}text")
    ]
    return [w for w in words if re.fullmatch(r"· \w+", w)]


@pytest.fixture
def three(qtbot, make_window, corpus_dir):
    files = [str(corpus_dir / "jax" / f"twins_{fw}.py") for fw in ("torch", "tf", "jax")]
    win = make_window(files, {"run/modes": "default,custom,numeric"})
    win.resize(1500, 950)
    results = run_keys(qtbot, win, keys_of(win, "cube"))
    assert results and all(r.status == "ok" for r in results), [r.error for r in results]
    win.tree.select_pair("cube")
    win.show_pair("cube")
    row = win.grid.rows["x"]
    qtbot.waitUntil(lambda: len(row.cells) == 9 and all(c.slot.vb.width() > 50 for c in row.cells))
    return win


def test_row_headers_stay_at_the_left_while_the_plots_scroll(qtbot, three, tmp_path):
    grid = three.grid
    bar = grid.horizontalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    dlg = FakeDialogs()
    before = EA.grid_image(three.exports, path=str(tmp_path / "before.svg"), dialogs=dlg)
    at_rest = {name: _in_port(grid, row.head) for name, row in grid.rows.items()}
    titles_at_rest = {name: _in_port(grid, row.title) for name, row in grid.rows.items()}
    header_at_rest = _in_port(grid, grid.header)

    port = QRect(QPoint(0, 0), grid.viewport().size())
    jax_cells = grid.rows["x"].cells[6:]
    scroll_right_until(
        qtbot,
        grid,
        lambda: all(port.contains(_plot_rect(grid, grid.rows["x"], c)) for c in jax_cells),
    )
    assert grid.rows
    for name, row in grid.rows.items():
        rect = _in_port(grid, row.head)
        # its panel reaches the viewport's left edge (no strip of plots left of it), its right
        # edge and its contents where they were before scrolling, and it is drawn on top
        rest = at_rest[name]
        assert rect.left() == 0 and rect.right() == rest.right(), (name, rect, rest)
        assert (rect.top(), rect.height()) == (rest.top(), rest.height()), (name, rect, rest)
        assert _in_port(grid, row.title) == titles_at_rest[name], name
        centre = row.mapFromGlobal(row.head.mapToGlobal(row.head.rect().center()))
        on_top = row.childAt(centre)
        assert on_top is row.head or row.head.isAncestorOf(on_top), on_top
        for w in (row.title, row.verdicts, row.view_box, row.fit_button):
            assert port.contains(_in_port(grid, w)), (name, w)
        assert "jax: match" in row.verdicts.text()
    head_right = at_rest["x"].right()
    row = grid.rows["x"]
    for cell in row.cells[6:]:  # JAX's plots: in view, beside the header, not under it
        rect = _plot_rect(grid, row, cell)
        assert cell.framework == "jax" and port.contains(rect), (cell.mode, port, rect)
        assert rect.left() > head_right, (cell.mode, rect, head_right)
    # torch's first plot is what went under the header
    assert _plot_rect(grid, row, row.cells[0]).right() < head_right
    header = _in_port(grid, grid.header)
    assert header == header_at_rest and header.right() <= port.right(), header
    assert "cube" in grid.header.text()

    # up and down: headers and rows move together
    vbar = grid.verticalScrollBar()
    if vbar.maximum() > 0:
        vbar.setValue(vbar.maximum())
        QApplication.processEvents()
    for row in grid.rows.values():
        assert row.head.geometry().top() <= 4 and row.head.height() >= row.height() - 12
        assert _in_port(grid, row.head).top() == _in_port(grid, row).top() + row.head.y()

    # y sync: a zoom of JAX's custom plot, scrolled, sets the row's y range everywhere
    jax_custom = row.cells[7]
    jax_custom.plot.setYRange(-1.0, 5.0, padding=0)
    for cell in row.cells:
        lo, hi = cell.slot.vb.viewRange()[1]
        assert (lo, hi) == pytest.approx((-1.0, 5.0)), (cell.framework, cell.mode)
    jax_custom.plot.setYRange(*row.cells[0].panel.y_range, padding=0)

    # the export draws every column, as it did before scrolling
    after = EA.grid_image(three.exports, path=str(tmp_path / "after.svg"), dialogs=dlg)
    assert before and after and not dlg.errors
    titles = _svg_titles(after)
    assert titles == _svg_titles(before) and len(titles) == sum(
        len(r.cells) for r in grid.rows.values()
    )

    bar.setValue(0)  # back at the left: the header where it was, torch's first plot beside it
    QApplication.processEvents()
    assert _in_port(grid, grid.rows["x"].head) == at_rest["x"]
    assert _plot_rect(grid, row, row.cells[0]).left() > head_right
