"""Render resources/gradviz.svg to resources/gradviz.png (256x256), the icon's bitmap twin for
launchers and Qt builds without the SVG plugin. Run after editing the SVG:
QT_QPA_PLATFORM=offscreen python scripts/render_icon.py"""

import os
import sys

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

RESOURCES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "resources")
SIZE = 256


def main() -> int:
    app = QGuiApplication(sys.argv[:1])  # noqa: F841 - QPainter needs one
    renderer = QSvgRenderer(os.path.join(RESOURCES, "gradviz.svg"))
    if not renderer.isValid():
        print("render_icon: resources/gradviz.svg is not a valid SVG", file=sys.stderr)
        return 1
    image = QImage(SIZE, SIZE, QImage.Format_ARGB32)
    image.fill(Qt.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.Antialiasing)
    renderer.render(painter)
    painter.end()
    return 0 if image.save(os.path.join(RESOURCES, "gradviz.png")) else 1


if __name__ == "__main__":
    sys.exit(main())
