"""The Qt application an export needs for fonts, made when there is none: the CLI writes
figures without a window, and without a display (offscreen) when none is set."""

from __future__ import annotations

import os

_app = None


def import_qt() -> None:
    """Import the Qt modules an export draws with, making nothing (any thread may call it: the
    application itself is made on the main thread, by ensure_app)."""
    from PySide6 import QtCore, QtGui  # noqa: F401


def ensure_app():
    global _app
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance()
    if app is None:
        if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        _app = app = QGuiApplication(["gradviz-export"])
    return app
