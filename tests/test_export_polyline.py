"""Raster exports draw long curves in pieces (fast); the picture must stay what one call draws."""

import numpy as np
import pytest

from gradviz.qt.export import painter as fp
from gradviz.qt.export.app import ensure_app


def _draw(chunked: bool, dash: str, n: int = 600):
    ensure_app()
    from PySide6 import QtGui

    img = QtGui.QImage(400, 300, QtGui.QImage.Format.Format_ARGB32)
    img.fill(QtGui.QColor("white"))
    p = QtGui.QPainter(img)
    try:
        p.scale(2, 2)
        painter = fp.Painter(p, raster=chunked)
        rng = np.random.default_rng(1)
        painter.pen("#1f77b4", 1.4, dash)
        painter.polyline(
            np.linspace(5, 195, n), 75 + 40 * np.sin(np.linspace(0, 20, n)) + rng.normal(0, 3, n)
        )
    finally:
        p.end()
    img = img.convertToFormat(QtGui.QImage.Format.Format_RGB32)
    return np.frombuffer(img.constBits(), np.uint8).reshape(300, 400, 4)[:, :, :3].astype(int)


@pytest.mark.parametrize("dash", ["solid", "dash"])
def test_chunked_polyline_looks_like_one_call(dash):
    one, pieces = _draw(False, dash), _draw(True, dash)
    inked = (one.min(axis=2) < 200).sum()
    assert inked > 5000  # the curve is really there
    differ = (np.abs(one - pieces).max(axis=2) > 60).sum()
    # only antialiasing where two pieces meet may differ; dashes continue across pieces
    assert differ < 0.02 * inked


def test_raster_painter_draws_in_pieces_and_vector_in_one(monkeypatch):
    calls = []
    ensure_app()
    from PySide6 import QtGui

    img = QtGui.QImage(100, 100, QtGui.QImage.Format.Format_ARGB32)
    for raster, expected in ((True, -(-(100 - 1) // (fp.POLY_CHUNK - 1))), (False, 1)):
        calls.clear()
        p = QtGui.QPainter(img)
        painter = fp.Painter(p, raster=raster)
        real = p.drawPolyline
        painter.p = type(
            "Spy",
            (),
            {
                "drawPolyline": lambda self, poly, real=real: (
                    calls.append(poly.size()),
                    real(poly),
                ),
                "pen": lambda self, p=p: p.pen(),
                "setPen": lambda self, x, p=p: p.setPen(x),
            },
        )()
        painter.polyline(np.arange(100.0), np.arange(100.0))
        p.end()
        assert len(calls) == expected
        # pieces overlap by one point: every segment is drawn exactly once
        assert sum(c - 1 for c in calls) == 99
