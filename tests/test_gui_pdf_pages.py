"""Issue 28 item 7 on the real window (offscreen, real workers): File ▸ Export ▸ Grid as a PDF of
a stack run's many rows comes in pages of whole rows, each no taller than A4's ratio to its
width and titled "page k of n" (it was one page ~9000 units tall); a PNG stays one image."""

import re

import pytest

pytest.importorskip("pytestqt")

from gui_helpers import FakeDialogs, keys_of, run_keys  # noqa: E402

from gradviz.qt import export_actions as EA  # noqa: E402
from gradviz.qt.export.grid import PAGE_RATIO, pdf_pages  # noqa: E402
from gradviz.qt.export.layout import layout  # noqa: E402

pytestmark = pytest.mark.gui


def _media_boxes(path):
    """The [width, height] of each page of a PDF Qt wrote (its page objects are not compressed)."""
    raw = open(path, "rb").read()
    return [
        (float(w), float(h)) for w, h in re.findall(rb"/MediaBox \[0 0 ([0-9.]+) ([0-9.]+)\]", raw)
    ]


def test_a_long_grid_exports_to_pages_of_whole_rows(qtbot, make_window, corpus_dir, tmp_path):
    win = make_window([str(corpus_dir / "flow" / "flow_torch.py")])
    panel = win.settings_panel
    panel.graph.setCurrentIndex(panel.graph.findData("stack"))
    panel.depth.setValue(4)
    panel.shape.setText("16")
    run_keys(qtbot, win, keys_of(win, "sign_ste"))
    win.tree.select_pair("sign_ste")
    win.show_pair("sign_ste")
    fig = win.grid.figure()
    assert len(fig.rows) >= 12
    pages = pdf_pages(fig)
    assert len(pages) > 1
    assert [r for p in pages for r in p.rows] == list(fig.rows)  # every row, once, whole
    width = layout(fig).width
    for k, page in enumerate(pages, 1):
        assert layout(page).height <= width * PAGE_RATIO or len(page.rows) == 1
        assert page.title == f"{fig.title} (page {k} of {len(pages)})"
    dlg = FakeDialogs([str(tmp_path / "grid.pdf"), str(tmp_path / "grid.png")])
    assert EA.grid_image(win.exports, dialogs=dlg) and not dlg.errors
    boxes = _media_boxes(tmp_path / "grid.pdf")
    assert len(boxes) == len(pages)
    for (w, h), page in zip(boxes, pages):  # points: 0.75 per layout unit (Qt rounds)
        lay = layout(page)
        assert abs(w / 0.75 - lay.width) <= 1.5 and abs(h / 0.75 - lay.height) <= 1.5
    assert EA.grid_image(win.exports, dialogs=dlg) and not dlg.errors
    assert (tmp_path / "grid.png").stat().st_size > 1000
