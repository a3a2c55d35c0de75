"""What pyproject.toml cannot say: the repository's resources/ folder (examples, icon) ships as
the package `gradviz.resources`, so an installed gradviz finds it with importlib.resources,
editable or not. Everything else is in pyproject.toml."""
from setuptools import find_packages, setup

setup(packages=find_packages(include=["gradviz", "gradviz.*"])
      + ["gradviz.resources", "gradviz.resources.examples"],
      package_dir={"gradviz.resources": "resources"})
