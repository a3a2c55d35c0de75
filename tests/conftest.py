"""Shared fixtures: one warm Engine (torch + tf workers) for the whole session, offscreen Qt."""
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "resources" / "examples"
CORPUS = Path(__file__).resolve().parent / "corpus"


def pytest_collection_modifyitems(config, items):
    try:
        import subprocess
        has_gpu = subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=5).returncode == 0
    except (OSError, subprocess.SubprocessError):
        has_gpu = False
    if not has_gpu:
        skip = pytest.mark.skip(reason="no CUDA GPU on this machine")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def engine():
    """A started Engine shared by all tests: workers import torch and tensorflow once."""
    from gradviz.engine import Engine
    eng = Engine()
    for w in eng.workers.values():
        w.wait_ready(120)
    yield eng
    eng.close()


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    return EXAMPLES


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    return CORPUS


@pytest.fixture
def write_module(tmp_path):
    """Write a user op module into a fresh folder and return its path."""
    def write(name: str, source: str) -> str:
        import textwrap
        path = tmp_path / name
        path.write_text(textwrap.dedent(source))
        return str(path)
    return write
