"""gradviz as users install it: resources found through importlib.resources."""
import importlib.resources
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_resources_are_the_package_gradviz_resources(examples_dir):
    """The checkout's resources/ is installed (editable here) as gradviz.resources, which is where
    catalog finds the examples; no path guessed from the package's folder."""
    from gradviz.bundled import EXAMPLES_DIR
    from gradviz.catalog import builtin_examples, trap_examples
    found = Path(str(importlib.resources.files("gradviz.resources")))
    assert found.resolve() == (ROOT / "resources").resolve()
    assert EXAMPLES_DIR.resolve() == examples_dir.resolve()
    assert [Path(p).name for p in builtin_examples()] == ["tutorial_tf.py", "tutorial_torch.py"]
    assert [Path(p).name for p in trap_examples()] == ["traps_tf.py", "traps_torch.py"]
