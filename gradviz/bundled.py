"""Files that ship inside the package (the repository's resources/ folder, installed as
`gradviz.resources`): the built-in examples and the application icon.

They are found through importlib.resources, so a wheel, an sdist install and an editable
checkout all work. pip installs wheels unzipped, so these are plain files that workers can
import by path.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path


def _resources_dir() -> Path:
    try:
        return Path(str(importlib.resources.files("gradviz.resources")))
    except ModuleNotFoundError:
        # a checkout used without installing it (PYTHONPATH=.), or an editable install made
        # before resources/ became gradviz.resources: the folder beside the package
        return Path(__file__).resolve().parent.parent / "resources"


RESOURCES_DIR = _resources_dir()
EXAMPLES_DIR = RESOURCES_DIR / "examples"
ICON_SVG = RESOURCES_DIR / "gradviz.svg"
ICON_PNG = RESOURCES_DIR / "gradviz.png"  # 256x256, rendered from the SVG
