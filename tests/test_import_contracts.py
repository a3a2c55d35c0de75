"""The import contracts in pyproject.toml (run by `lint-imports`) name the parts they guard one by
one: a new top-level module of gradviz that none of them names would slip past every check."""

import pkgutil
from pathlib import Path

import pytest

import gradviz

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")

ROOT = Path(__file__).resolve().parent.parent


def _contracts() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        config = tomllib.load(fh)["tool"]["importlinter"]
    return {c["name"]: c for c in config["contracts"]}


def _top_level() -> set[str]:
    return {f"gradviz.{m.name}" for m in pkgutil.iter_modules(gradviz.__path__)} - {
        "gradviz.__main__"
    }


def test_every_part_but_qt_is_kept_off_qt_and_every_part_but_the_backends_off_the_frameworks():
    contracts = _contracts()
    qt = contracts["Qt (PySide6, pyqtgraph) is imported only under gradviz.qt"]
    frameworks = contracts[
        "torch, tensorflow, keras and jax are imported only under gradviz.backends"
    ]
    assert {"torch", "tensorflow", "jax", "flax", "equinox"} <= set(frameworks["forbidden_modules"])
    workers = contracts["The backends are imported only inside worker processes"]
    parts = _top_level()
    assert {"gradviz.qt", "gradviz.backends", "gradviz.engine", "gradviz.compare"} <= parts
    # the CLI opens the window, and gradviz.testing prints the CLI's text: their own contract
    # forbids them only direct Qt imports
    through_qt = contracts["The command line and gradviz.testing reach Qt only through gradviz.qt"]
    assert set(through_qt["source_modules"]) == {"gradviz.cli", "gradviz.testing"}
    assert set(qt["source_modules"]) == parts - {"gradviz.qt", "gradviz.cli", "gradviz.testing"}
    assert set(frameworks["source_modules"]) == parts - {"gradviz.backends"}
    assert set(workers["source_modules"]) == parts - {"gradviz.backends"}


def test_layers_name_existing_parts():
    layers = _contracts()["One-way layers"]["layers"]
    named = {f"gradviz.{p.strip()}" for layer in layers for p in layer.split("|")}
    assert named <= _top_level()
