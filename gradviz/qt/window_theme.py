"""View > Theme and the window's colour scheme: follow the desktop (switching live when it
changes), or light, or dark (saved as view/theme). A switch gives the application its style and
palette (gradviz/qt/app_palette.py), the plots their background (theme.apply_plot_scheme), and
asks every part of the window that paints its own colours to repaint them (`restyle()`)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QActionGroup, QGuiApplication

from gradviz.app.settings_schema import Key
from gradviz.qt.app_palette import apply_app_scheme
from gradviz.qt.theme import (
    THEME_CHOICES,
    apply_plot_scheme,
    current_scheme,
    scheme_of,
    set_current_scheme,
)


def build_theme_menu(win, view_menu, qs) -> tuple[str, dict]:
    """View > Theme in `view_menu` of `win` (each item calls win.set_theme): the saved choice
    and the action of each choice."""
    saved = str(qs.value(Key.THEME, THEME_CHOICES[0]))
    chosen = saved if saved in THEME_CHOICES else THEME_CHOICES[0]
    menu, group = view_menu.addMenu("Theme"), QActionGroup(win)
    actions = {}
    for choice in THEME_CHOICES:
        act = menu.addAction(f"Theme: {choice}", lambda c=choice: win.set_theme(c))
        act.setCheckable(True)
        act.setChecked(choice == chosen)
        group.addAction(act)
        actions[choice] = act
    return chosen, actions


def follow_desktop(set_color_scheme) -> None:
    """`set_color_scheme` called with the desktop's scheme now and whenever it changes."""
    hints = QGuiApplication.styleHints()
    hints.colorSchemeChanged.connect(set_color_scheme)
    set_color_scheme(hints.colorScheme())


def show_scheme(win, choice: str, desktop_scheme, restyled) -> str:
    """Put `win` (and the application) on the scheme the user's `choice` and the desktop's
    scheme (a Qt.ColorScheme) give; returns it ("light" or "dark"). `restyled`: the window's
    parts that paint colours of their own (verdict tints, marks, notes), each with restyle()."""
    scheme = scheme_of(desktop_scheme, choice)
    # the parts read the scheme as they were built: only a change needs them repainted (a new
    # window on the scheme the application already shows, the usual start, repaints nothing)
    changed = scheme != current_scheme()
    set_current_scheme(scheme)
    apply_app_scheme(scheme, desktop_dark=desktop_scheme == Qt.ColorScheme.Dark)
    apply_plot_scheme(win, scheme)
    if changed:
        for part in restyled:
            part.restyle()
    return scheme
