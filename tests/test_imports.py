"""The light parts stay light: no torch, tensorflow or Qt on the way to a window or a report."""
import subprocess
import sys

import pytest

HEAVY = ("torch", "tensorflow", "keras", "PySide6", "pyqtgraph")


@pytest.mark.parametrize("module", ["gradviz", "gradviz.cli", "gradviz.engine", "gradviz.compare",
                                    "gradviz.report", "gradviz.catalog", "gradviz.discover",
                                    "gradviz.plots"])
def test_import_loads_no_framework_or_qt(module):
    code = (f"import sys, {module}\n"
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_op_decorator_needs_no_framework():
    import gradviz

    @gradviz.op(name="x", inputs={"x": (3,)}, consts={"bits": 4})
    class Thing:
        pass

    from gradviz.api import meta_of
    assert meta_of(Thing)["name"] == "x" and meta_of(Thing)["consts"] == {"bits": 4}
