"""The light parts stay light at run time: no torch, tensorflow, jax or Qt in the calling process.
Which module may import what is checked statically by `lint-imports` (pyproject.toml)."""

import subprocess
import sys

HEAVY = ("torch", "tensorflow", "keras", "jax", "flax", "equinox", "PySide6", "pyqtgraph")


def test_op_decorator_needs_no_framework():
    import gradviz

    @gradviz.op(name="x", inputs={"x": (3,)}, consts={"bits": 4})
    class Thing:
        pass

    from gradviz.api import meta_of

    assert meta_of(Thing)["name"] == "x" and meta_of(Thing)["consts"] == {"bits": 4}


def test_running_ops_imports_no_framework_in_the_caller():
    """Results (versions included) unpickle without torch or tensorflow in the calling process."""
    code = (
        "import sys\n"
        "from gradviz.engine import Engine\n"
        "from gradviz.catalog import builtin_examples, pair_ops, requests_for\n"
        "from gradviz.model import RunSettings\n"
        "with Engine() as e:\n"
        "    reqs = requests_for(pair_ops(e.load(builtin_examples())), ('torch', 'tf'),\n"
        "                        RunSettings(modes=('custom', 'default')))\n"
        "    results = e.run(reqs)\n"
        "    print(len(results), all(r.status == 'ok' for r in results), e.devices() and 'dev')\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules) or 'clean')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["6", "True", "dev", "clean"]
