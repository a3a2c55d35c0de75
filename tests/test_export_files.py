"""Headless image export: PNG / SVG / PDF written, read back and checked, including a 1M-element
gradient with a spike and NaNs; atomic writing."""

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from samples import broken_tf_result, ste_result

from gradviz.plots import figure as F
from gradviz.plots.palette import NAN_COLOR
from gradviz.qt.export import FORMATS, save_figure, save_grid
from gradviz.qt.export.layout import layout, value_to_px

SVG_NS = "{http://www.w3.org/2000/svg}"
SPIKE_AT, NAN_AT = 123_457, (10, 500_000)


@pytest.fixture(scope="module")
def small():
    return [ste_result("torch", n=300, spike_at=50, nan_at=(120,)), broken_tf_result(300)]


@pytest.fixture(scope="module")
def big():
    return [
        ste_result("torch", n=1_000_000, spike_at=SPIKE_AT, spike=50.0, nan_at=NAN_AT),
        ste_result("tf", n=1_000_000, numeric=False),
    ]


def _points(el) -> np.ndarray:
    nums = [float(v) for v in re.split(r"[ ,]+", el.get("points", "").strip()) if v]
    return np.array(nums).reshape(-1, 2)


def _svg_shapes(path):
    root = ET.parse(path).getroot()
    # every group we draw in has an identity transform: coordinates are layout units
    for g in root.iter(SVG_NS + "g"):
        t = g.get("transform")
        assert t in (None, "matrix(1,0,0,1,0,0)") or "rotate" in t or t.startswith("matrix(0,-1")
    return root


def test_png_dimensions_and_pixels(small, tmp_path, qapp):
    from PySide6.QtGui import QImage

    fig = F.build_figure(small, "values")
    lay = layout(fig)
    out = save_figure(fig, str(tmp_path / "grid.png"))
    img = QImage(out)
    assert not img.isNull()
    assert (img.width(), img.height()) == (2 * lay.width, 2 * lay.height)
    assert img.width() > 2000 and 400 < img.height() < 2000
    # the custom curve's colour is drawn inside the torch-custom plot area
    r = lay.plot[0][1]
    orange = 0
    for y in range(int(r.y * 2), int(r.bottom * 2), 3):
        for x in range(int(r.x * 2), int(r.right * 2), 3):
            c = img.pixelColor(x, y)
            orange += c.red() > 200 and 90 < c.green() < 150 and c.blue() < 60
    assert orange > 20


def test_png_holds_the_rendered_pixels_exactly(small, tmp_path, qapp):
    """The PNG (rows deflated in pieces on threads, png_encode) decodes, in Qt and in Pillow, to
    exactly the image the grid was painted into, with its pixel density; a 1-row and an odd-width
    image too."""
    from PIL import Image
    from PySide6.QtGui import QImage

    from gradviz.qt.export.grid import render_image
    from gradviz.qt.export.png import rgb_view
    from gradviz.qt.export.png_encode import png_bytes

    fig = F.build_figure(small, "values")
    painted = render_image(fig)
    out = save_figure(fig, str(tmp_path / "grid.png"))
    back = QImage(out).convertToFormat(QImage.Format.Format_RGB32)
    assert back == painted
    assert back.dotsPerMeterX() == painted.dotsPerMeterX() == round(96 * 2 / 0.0254)
    with Image.open(out) as im:
        assert im.mode == "RGB"
        assert np.array_equal(np.asarray(im), rgb_view(painted))
        assert round(im.info["dpi"][0]) == 192
    rng = np.random.default_rng(0)
    for shape in ((1, 5, 3), (7, 333, 3), (900, 1001, 3)):  # the last in several pieces
        rgb = rng.integers(0, 256, shape, dtype=np.uint8)
        path = tmp_path / f"r{shape[0]}.png"
        path.write_bytes(png_bytes(rgb[:, ::-1], 3780))  # any strides
        with Image.open(path) as im:
            assert np.array_equal(np.asarray(im), rgb[:, ::-1])


def test_big_svg_is_small_fast_and_keeps_spike_and_nan(big, tmp_path, qapp):
    fig = F.build_figure(big, "values")
    path = tmp_path / "big.svg"
    save_figure(fig, str(path))
    assert path.stat().st_size <= 2 * 1024 * 1024
    root = _svg_shapes(path)
    lay = layout(fig)
    assert root.get("viewBox") == f"0 0 {lay.width} {lay.height}"
    plot = lay.plot[0][1]  # row x, torch custom
    lo, hi = fig.panels[0][1].y_range
    spike_y = float(value_to_px(50.0, lo, hi, plot.bottom, plot.y))
    spike_x = float(value_to_px(SPIKE_AT, 0, 999_999, plot.x, plot.right))
    curves = [_points(el) for el in root.iter(SVG_NS + "polyline")]
    inside = [
        p
        for p in curves
        if p.size
        and p[:, 0].min() >= plot.x - 1
        and p[:, 0].max() <= plot.right + 1
        and p[:, 1].min() >= plot.y - 1
        and p[:, 1].max() <= plot.bottom + 1
        and len(p) > 100
    ]
    assert inside, "the decimated curve is drawn as a polyline"
    top = min(inside, key=lambda p: p[:, 1].min())
    k = np.argmin(top[:, 1])
    assert top[k, 1] == pytest.approx(spike_y, abs=0.01)
    assert top[k, 0] == pytest.approx(spike_x, abs=0.01)
    assert len(top) <= 2 * 800
    # NaN markers: red crosses centred on the NaN element positions, at the plot's bottom band
    red = [
        _points(el)
        for g in root.iter(SVG_NS + "g")
        if g.get("stroke") == NAN_COLOR
        for el in g.iter(SVG_NS + "polyline")
    ]
    centres = {
        round(float(p[:, 0].mean()), 2)
        for p in red
        if len(p) == 2 and plot.y < p[:, 1].mean() < plot.bottom
    }
    for i in NAN_AT:
        assert round(float(value_to_px(i, 0, 999_999, plot.x, plot.right)), 2) in centres
    texts = "".join(t.text or "" for t in root.iter(SVG_NS + "text"))
    for s in (
        "round_ste",
        "torch · custom",
        "element index",
        "NaN 2",
        "default",
        "TensorFlow",
        "1,000,000 elements",
    ):
        assert s in texts


def test_pdf_is_a_pdf_of_the_right_page_size(small, tmp_path, qapp):
    fig = F.build_figure(small, "histogram")
    lay = layout(fig)
    path = tmp_path / "grid.pdf"
    save_figure(fig, str(path))
    data = path.read_bytes()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    box = re.search(rb"/MediaBox \[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", data)
    assert box, "a page with a MediaBox"
    w, h = float(box.group(1)), float(box.group(2))
    assert w == pytest.approx(lay.width * 0.75, abs=1) and h == pytest.approx(
        lay.height * 0.75, abs=1
    )


@pytest.mark.skipif(
    shutil.which("pdftoppm") is None, reason="pdftoppm (poppler-utils) not installed"
)
def test_pdf_renders_with_poppler(big, tmp_path, qapp):
    from PySide6.QtGui import QImage

    fig = F.build_figure(big, "values")
    path = tmp_path / "big.pdf"
    save_figure(fig, str(path))
    subprocess.run(
        ["pdftoppm", "-png", "-r", "96", "-singlefile", str(path), str(tmp_path / "page")],
        check=True,
        timeout=60,
    )
    img = QImage(str(tmp_path / "page.png"))
    lay = layout(fig)
    assert abs(img.width() - lay.width) <= 2 and abs(img.height() - lay.height) <= 2


@pytest.mark.parametrize("view", F.VIEWS)
def test_every_view_in_every_format(view, tmp_path, qapp):
    rs = [
        ste_result("torch", shape=(40, 50), spike_at=7, nan_at=(3,)),
        ste_result("tf", shape=(40, 50)),
    ]
    for ext in FORMATS:
        out = save_grid(rs, str(tmp_path / f"g{ext}"), comparisons=None, view=view)
        assert os.path.getsize(out) > 2000
    ET.parse(tmp_path / "g.svg")


def test_unknown_suffix_lists_allowed(small, tmp_path):
    with pytest.raises(ValueError, match=r"\.png, \.svg, \.pdf"):
        save_grid(small, str(tmp_path / "grid.jpg"), comparisons=None)
    assert not os.listdir(tmp_path)


def test_failed_write_leaves_old_file_and_no_temp(small, tmp_path, monkeypatch, qapp):
    target = tmp_path / "grid.svg"
    target.write_text("old")

    def broken(path, *args):
        with open(path, "w") as f:
            f.write("<svg half")
        raise RuntimeError("disk on fire")

    from gradviz.qt.export import svg

    monkeypatch.setattr(svg, "write", broken)
    with pytest.raises(RuntimeError, match="disk on fire"):
        save_grid(small, str(target), comparisons=None)
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["grid.svg"]


def test_missing_folder_is_reported(small, tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        save_grid(small, str(tmp_path / "nope" / "grid.png"), comparisons=None)


def test_headless_without_app_or_platform_variable(tmp_path):
    """The CLI path: no QApplication, no DISPLAY, QT_QPA_PLATFORM unset."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")
    }
    code = (
        "import sys; from samples import ste_result; "
        "from gradviz.qt.export import save_grid; "
        "[save_grid([ste_result('torch', n=50)], sys.argv[1] + e, comparisons=None) "
        "for e in ('.png', '.svg', '.pdf')]"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "g")],
        env=env,
        check=True,
        timeout=120,
        cwd=os.path.dirname(os.path.abspath(__file__)),
    )  # where samples.py is
    assert sorted(os.listdir(tmp_path)) == ["g.pdf", "g.png", "g.svg"]
