"""Who the app is: its icon, and Help ▸ About with the versions of what it runs on.

The framework versions are the ones the workers reported when they imported torch and tensorflow;
the GUI process never imports a framework to learn them.
"""

from __future__ import annotations

import platform

from PySide6.QtCore import Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QMessageBox, QWidget

import gradviz
from gradviz.bundled import ICON_PNG, ICON_SVG
from gradviz.qt.theme import FRAMEWORK_LABELS


def app_icon() -> QIcon:
    icon = QIcon(str(ICON_SVG))
    icon.addFile(str(ICON_PNG))  # where Qt's SVG plugin is missing
    return icon


def _framework_line(framework: str, state) -> str:
    name = FRAMEWORK_LABELS.get(framework, framework)
    if state is None:
        return f"{name}: not started"
    if state.version:  # kept across restarts: the same installation
        return f"{name} {state.version}"
    if state.state == "failed":
        return f"{name}: not available ({state.detail})"
    return f"{name}: loading…"


def about_text(frameworks, states: dict) -> str:
    """`states`: {framework: WorkerState} from the engine, {} before it starts."""
    import numpy
    import pyqtgraph
    from PySide6 import __version__ as pyside_version
    from PySide6.QtCore import qVersion

    lines = [
        f"gradviz {gradviz.__version__}",
        "",
        (
            "See every gradient of your custom backward beside the framework's default and a "
            "numeric reference."
        ),
        "",
    ]
    lines += [_framework_line(fw, states.get(fw)) for fw in frameworks]
    lines += [
        f"Qt {qVersion()} (PySide6 {pyside_version})",
        f"pyqtgraph {pyqtgraph.__version__}",
        f"NumPy {numpy.__version__}",
        f"Python {platform.python_version()}",
    ]
    return "\n".join(lines)


def show_about(parent: QWidget, frameworks, states: dict) -> QMessageBox:
    """Window-modal but not blocking: the app keeps running (and tests can read it)."""
    box = QMessageBox(
        QMessageBox.Information,
        "About gradviz",
        about_text(frameworks, states),
        QMessageBox.Ok,
        parent,
    )
    box.setObjectName("aboutBox")
    box.setIconPixmap(app_icon().pixmap(96, 96))
    box.setAttribute(Qt.WA_DeleteOnClose)
    box.open()
    return box
