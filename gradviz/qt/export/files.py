"""Writing a painted figure to a file: the format from the suffix (one module per format), the
file written atomically by gradviz.atomic_file, the one writer of reports and figures."""

from __future__ import annotations

import importlib
import os

from gradviz.atomic_file import atomic_path
from gradviz.plots.formats import FIGURE_FORMATS

# each format's writer is the module named by its suffix (gradviz/qt/export/png.py for .png)
WRITERS = {ext: importlib.import_module(f"gradviz.qt.export.{ext[1:]}") for ext in FIGURE_FORMATS}
FORMATS = tuple(WRITERS)


def format_of(path: str) -> str:
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in WRITERS:
        raise ValueError(
            f"{path}: unknown image format {ext or '(no suffix)'!r}; "
            f"use one of {', '.join(FORMATS)}"
        )
    return ext


def write_painted(
    path: str, width: int, height: int, paint, title: str, description: str, scale: float = 2.0
) -> str:
    """paint(painter, raster) draws the figure in layout units; the file replaces `path` only
    when complete. Returns the absolute path."""
    ext = format_of(path)
    with atomic_path(str(path), suffix=".part" + ext) as tmp:
        WRITERS[ext].write(tmp, width, height, paint, title, description, scale)
        if os.path.getsize(tmp) == 0:
            raise OSError(f"nothing was written to {path}")
    return os.path.abspath(path)


def write_pages(path: str, pages, title: str) -> str:
    """A PDF of several pages, (width, height, paint(painter, raster)) each, written atomically."""
    if format_of(path) != ".pdf":
        raise ValueError(f"{path}: pages are written to a PDF only")
    with atomic_path(str(path), suffix=".part.pdf") as tmp:
        WRITERS[".pdf"].write_pages(tmp, pages, title)
        if os.path.getsize(tmp) == 0:
            raise OSError(f"nothing was written to {path}")
    return os.path.abspath(path)
