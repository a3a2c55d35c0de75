"""What you see is what you export: one real result (both frameworks, real workers) drawn in the
real window's grid and exported to SVG from the window; the two are compared as drawn (the
pyqtgraph items of the window, the text and strokes of the SVG file): same rows, same panels in
the same order, same titles in the same colours, same axis labels, notes and legend."""

import html
import re
import xml.etree.ElementTree as ET

import pytest

pytest.importorskip("pytestqt")


from gui_helpers import FakeDialogs, keys_of, run_keys  # noqa: E402

from gradviz.plots.palette import MODE_COLORS
from gradviz.qt import export_actions as EA

pytestmark = pytest.mark.gui
SVG_NS = "{http://www.w3.org/2000/svg}"


def _plain(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup)).replace("\xa0", " ").strip()


def _window_panel(cell):
    """(title, its coloured parts [(text, colour)], x label, y label, note) as the window's plot
    shows them: the title's framework in the framework's colour, the rest in the mode's."""
    plot = cell.plot
    markup = plot.titleLabel.text
    parts = [
        (" ".join(_plain(text).split()), color.lower())
        for color, text in re.findall(r"color:\s*(#[0-9a-fA-F]{6})[^>]*>([^<]+)<", markup)
    ]
    note = ""
    if not cell.has_data:
        note = cell.slot.message_item.textItem.toPlainText()
    axes = [plot.getAxis(a) for a in ("bottom", "left")]
    labels = tuple(a.labelText if a.isVisible() else "" for a in axes)
    return _plain(markup), parts, *labels, " ".join(note.split())


def _svg(path):
    root = ET.parse(path).getroot()
    texts = [
        (" ".join((t.text or "").split()), (t.get("fill") or "").lower())
        for t in root.iter(SVG_NS + "text")
    ]
    strokes = {(g.get("stroke") or "").lower() for g in root.iter(SVG_NS + "g")}
    return texts, strokes


def _in_order(needles, haystack) -> bool:
    it = iter(haystack)
    return all(any(n == h for h in it) for n in needles)


@pytest.fixture
def shown(qtbot, make_window, settings, examples_dir):
    settings.setValue("run/modes", "default,custom,numeric")
    win = make_window(
        [str(examples_dir / "tutorial_torch.py"), str(examples_dir / "tutorial_tf.py")]
    )
    results = run_keys(qtbot, win, keys_of(win, "round_ste"))
    assert sorted(r.framework for r in results) == ["tf", "torch"]
    assert all(r.status == "ok" for r in results)
    win.tree.select_pair("round_ste")
    win.show_pair("round_ste")
    return win


@pytest.mark.parametrize("view", ["values", "histogram", "scatter", "vs_input"])
def test_window_grid_and_svg_export_draw_the_same_figure(shown, tmp_path, view):
    grid = shown.grid
    for name in grid.rows:
        grid.set_view(name, view)
    dlg = FakeDialogs()
    path = EA.grid_image(shown.exports, path=str(tmp_path / f"{view}.svg"), dialogs=dlg)
    assert path and not dlg.errors
    texts, strokes = _svg(path)
    fills = {}
    for text, fill in texts:
        fills.setdefault(text, set()).add(fill)
    words = [t for t, _ in texts]

    assert list(grid.rows) == ["x", "out"]
    # row labels, in the window's order
    labels = [f"{n} · {grid.rows[n].info.text()}" for n in grid.rows]
    assert _in_order(labels, words), (labels, words[:20])
    n_panels = 0
    for row in grid.rows.values():
        panels = [_window_panel(c) for c in row.cells]
        n_panels += len(panels)
        # every window panel's title is in the file, each part in the same colour, row by row
        # in order
        assert _in_order([text for p in panels for text, _c in p[1]], words)
        for _title, parts, xlabel, ylabel, note in panels:
            assert [t for t, _c in parts][0] == cell_fw(_title)
            for text, color in parts:
                assert color in fills[text], (text, color, fills[text])
            if note:  # an empty panel: its note is the file's note
                assert note[:25] in " ".join(words), (note, words)
            else:  # a drawn panel: its axis labels are the file's
                assert xlabel in words and ylabel in words, (xlabel, ylabel)
        if view == "scatter":  # two panels per framework: custom vs default and vs numeric
            assert [p[0] for p in panels] == [
                "torch · custom vs default",
                "torch · custom vs numeric",
                "tf · custom vs default",
                "tf · custom vs numeric",
            ]
        else:
            assert [p[0] for p in panels] == [
                f"{fw} · {m}" for fw in ("torch", "tf") for m in ("default", "custom", "numeric")
            ]
    # the file has exactly the window's panels: one title per panel
    titles = [w for w in words if re.fullmatch(r"· \w+( vs \w+)?", w)]
    assert len(titles) == n_panels
    assert len([w for w in words if w in ("torch", "tf")]) >= n_panels
    # the window's title and legend are the file's
    header = _plain(grid.header.text())
    fig = grid.figure()
    assert fig.title in header and fig.title in words
    for entry in fig.legend:
        assert entry.label in header and entry.label in words
    # the curves/dots are drawn in the mode colours in both
    drawn = [c for c in grid.rows["x"].cells if c.has_data]
    assert len(drawn) >= 3
    for c in drawn:
        items = [i for i in c.plot.listDataItems() if i.xData is not None and len(i.xData) > 2]
        colours = {
            (
                i.opts["pen"].color().name()
                if i.opts["pen"] is not None and not isinstance(i.opts["pen"], (str, tuple))
                else None
            )
            for i in items
        }
        colours |= {pg_brush(i) for i in items}
        want = MODE_COLORS[c.mode.split("~")[0]]
        assert want in colours, (c.framework, c.mode, colours)
        assert want in strokes


def cell_fw(title: str) -> str:
    return title.split(" · ")[0]


def pg_brush(item):
    import pyqtgraph as pg

    brush = item.opts.get("symbolBrush")
    return pg.mkBrush(brush).color().name() if brush is not None else None
