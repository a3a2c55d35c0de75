"""The application's widget style for a colour scheme: Fusion with a dark QPalette for "dark", and
the style and palette the application started with for "light", switched live.

Why explicit palettes: Qt 6.8's QStyleHints.setColorScheme only asks the platform theme, and the
offscreen and xcb-without-desktop platforms ignore it (colorScheme stays Unknown); a palette set
on the QApplication works on every platform and every widget inherits it at once. When the
desktop itself is dark and the user chooses light, the start palette would be the desktop's dark
one, so light is then Fusion's own light palette.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from gradviz.qt.theme import SURFACES

_D = SURFACES["dark"]  # the surfaces widgets paint themselves on, the same colours
# Roles of the dark palette (active and inactive); the disabled group dims the text roles.
_DARK_ROLES = {
    "Window": _D["window"],
    "WindowText": _D["text"],
    "Base": _D["base"],
    "AlternateBase": _D["alternate"],
    "ToolTipBase": "#333333",
    "ToolTipText": _D["text"],
    "PlaceholderText": "#8c8c8c",
    "Text": _D["text"],
    "Button": "#333333",
    "ButtonText": _D["text"],
    "BrightText": "#ff8a80",
    "Light": "#4a4a4a",
    "Midlight": "#3c3c3c",
    "Mid": "#303030",
    "Dark": "#1a1a1a",
    "Shadow": "#0d0d0d",
    "Highlight": "#2f65ca",
    "HighlightedText": "#ffffff",
    "Link": "#8ab4f8",
    "LinkVisited": "#c58af9",
}
_DISABLED = {
    "WindowText": "#7a7a7a",
    "Text": "#7a7a7a",
    "ButtonText": "#7a7a7a",
    "Highlight": "#3a3a3a",
    "HighlightedText": "#9a9a9a",
}

_start: dict = {}  # the style name and palette the application had before any switch


def dark_palette() -> QPalette:
    pal = QPalette()
    for role, color in _DARK_ROLES.items():
        pal.setColor(getattr(QPalette.ColorRole, role), QColor(color))
    for role, color in _DISABLED.items():
        pal.setColor(QPalette.ColorGroup.Disabled, getattr(QPalette.ColorRole, role), QColor(color))
    return pal


def light_palette() -> QPalette:
    """Fusion's light look, spelled out: Fusion's standard palette follows a dark desktop."""
    pal = QPalette(QColor(SURFACES["light"]["window"]))
    for role, color in (
        ("Base", "#ffffff"),
        ("AlternateBase", "#f7f7f7"),
        ("Text", "#000000"),
        ("WindowText", "#000000"),
        ("ButtonText", "#000000"),
        ("Highlight", "#308cc6"),
        ("HighlightedText", "#ffffff"),
        ("ToolTipBase", "#ffffdc"),
        ("ToolTipText", "#000000"),
        ("PlaceholderText", "#808080"),
    ):
        pal.setColor(getattr(QPalette.ColorRole, role), QColor(color))
    return pal


def _remember_start(app) -> None:
    if not _start:
        _start["style"] = app.style().name()
        _start["palette"] = QPalette(app.palette())
        _start["explicit"] = app.testAttribute(Qt.ApplicationAttribute.AA_SetPalette)


def apply_app_scheme(scheme: str, desktop_dark: bool = False) -> None:
    """Give the application's widgets the scheme's style and palette (live: every open window
    repaints). `desktop_dark`: the desktop's own palette is dark, so light needs its own."""
    app = QApplication.instance()
    if app is None:
        return
    _remember_start(app)
    if scheme == "dark":
        _set_style(app, "fusion")
        app.setPalette(dark_palette())
    elif desktop_dark:
        _set_style(app, "fusion")
        app.setPalette(light_palette())
    else:
        _set_style(app, _start["style"])
        # an application that had set no palette gets the platform's again (and follows it)
        app.setPalette(_start["palette"] if _start["explicit"] else QPalette())


def _set_style(app, name: str) -> None:
    if app.style().name().lower() != name.lower():
        app.setStyle(name)
