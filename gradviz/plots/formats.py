"""The figure file formats, by suffix, with the name a save dialog shows: the one list the
command line's --plot check, the window's dialogs and the exporters read (no Qt). A format's
writer is gradviz/qt/export/<suffix>.py (SUFFIX, write(...)): a new format is its row here and
that module."""

from __future__ import annotations

FIGURE_FORMATS = {".png": "PNG image", ".svg": "SVG vector image", ".pdf": "PDF document"}


def suffixes_in_words() -> str:
    """'.png, .svg or .pdf'"""
    *rest, last = FIGURE_FORMATS
    return f"{', '.join(rest)} or {last}" if rest else last


def dialog_filter(suffix: str) -> str:
    """'PNG image (*.png)'"""
    return f"{FIGURE_FORMATS[suffix]} (*{suffix})"
