"""The built-in examples of an optional framework (tutorial_jax.py, traps_jax.py) are offered
only where it is installed (model.FRAMEWORKS); without it the lists are what they always were,
and every file listed loads in the engine without an error."""

from pathlib import Path

import pytest

from gradviz import catalog
from gradviz.vocab import Framework


@pytest.fixture
def checkout_examples(monkeypatch, examples_dir):
    # this checkout's examples (an editable install elsewhere may point gradviz.resources there)
    monkeypatch.setattr(catalog, "EXAMPLES_DIR", examples_dir)


def _names(files) -> list[str]:
    return [Path(f).name for f in files]


def test_without_jax_the_examples_are_torch_and_tf_alone(monkeypatch, checkout_examples):
    monkeypatch.setattr(catalog, "FRAMEWORKS", (Framework.TORCH, Framework.TF))
    assert _names(catalog.builtin_examples()) == ["tutorial_tf.py", "tutorial_torch.py"]
    assert _names(catalog.trap_examples()) == ["traps_tf.py", "traps_torch.py"]


def test_with_jax_its_tutorial_and_traps_are_offered(monkeypatch, checkout_examples):
    monkeypatch.setattr(catalog, "FRAMEWORKS", tuple(Framework))
    assert _names(catalog.builtin_examples()) == [
        "tutorial_jax.py",
        "tutorial_tf.py",
        "tutorial_torch.py",
    ]
    assert _names(catalog.trap_examples()) == ["traps_jax.py", "traps_tf.py", "traps_torch.py"]


def test_every_listed_example_loads_in_its_framework(engine, checkout_examples):
    files = catalog.builtin_examples() + catalog.trap_examples()
    cats = engine.load(files)
    assert sorted(c.file for c in cats) == sorted(files)
    for cat in cats:
        assert cat.error is None and cat.ops, cat.file
        assert Path(cat.file).stem.rpartition("_")[2] == cat.framework
    want = {"torch", "tf"} | ({"jax"} if Framework.JAX.installed else set())
    assert {c.framework for c in cats} == want
