"""A file inside a package whose `__init__.py` fails to import (a missing optional dependency of
the package): with no relative imports it loads as a plain file and says so; with one it is a
clear error at the __init__'s failing import. Import errors name the chain of imports in the
user's files, not line 1 of the file given (issue 24, item 7)."""

import os
import textwrap

import numpy as np
from op_runs import run

from gradviz.model import RunRequest, RunSettings

INIT = """\
    \"\"\"A package whose __init__ needs an optional dependency that is not installed.\"\"\"
    from . import helpers
    import gradviz_missing_optional_dep  # noqa: F401
"""
INIT_LINE = 3

TORCH_OP = """\
    import torch


    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2
"""

TF_OP = """\
    import tensorflow as tf


    @tf.custom_gradient
    def cube(x):
        def grad(dy):
            return dy * 3 * x ** 2
        return x ** 3, grad
"""


def write_tree(root, files: dict) -> None:
    for rel, src in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(src))


def _by_fw(cats):
    return {c.framework: c for c in cats}


def test_package_whose_init_fails_loads_its_plain_files_and_says_so(engine, tmp_path):
    write_tree(
        tmp_path,
        {
            "optpkg/__init__.py": INIT,
            "optpkg/helpers.py": "X = 1\n",
            "optpkg/ops_torch.py": TORCH_OP,
            "optpkg/ops_tf.py": TF_OP,
        },
    )
    init = str(tmp_path / "optpkg" / "__init__.py")
    for name, qualname, fw in (("ops_torch.py", "Cube", "torch"), ("ops_tf.py", "cube", "tf")):
        path = str(tmp_path / "optpkg" / name)
        cat = _by_fw(engine.load([path]))[fw]
        assert cat.error is None, cat.error
        assert [op.qualname for op in cat.ops] == [qualname]
        assert cat.ops[0].where == f"{path}:{4 if fw == 'torch' else 5}"
        [note] = cat.notes
        assert note.startswith(f"loaded as a plain file, not as module 'optpkg.{name[:-3]}'")
        assert f"{init}:{INIT_LINE} (import gradviz_missing_optional_dep" in note
        assert "No module named 'gradviz_missing_optional_dep'" in note
        res = run(engine, path, qualname, fw)
        x = res.tensor("x").value.astype(np.float64)
        np.testing.assert_allclose(res.tensor("x").grads["custom"], 3 * x**2, rtol=1e-5)
        np.testing.assert_allclose(res.tensor("x").grads["numeric"], 3 * x**2, rtol=1e-3)
        assert res.warnings[0] == note  # the run says it too (JSON, the window)


def test_package_file_with_relative_imports_names_the_init_line(engine, tmp_path):
    op = "from .helpers import X\n" + textwrap.dedent(TORCH_OP)
    write_tree(
        tmp_path, {"relpkg/__init__.py": INIT, "relpkg/helpers.py": "X = 1\n", "relpkg/ops.py": op}
    )
    path, init = str(tmp_path / "relpkg" / "ops.py"), str(tmp_path / "relpkg" / "__init__.py")
    for cat in engine.load([path]):
        err = cat.error
        assert err is not None and err.kind == "load"
        assert err.type == "ModuleNotFoundError"
        assert err.where == f"{init}:{INIT_LINE}"
        assert "has a relative import (line 1)" in err.message
        assert "No module named 'gradviz_missing_optional_dep'" in err.message
        assert f'File "{init}", line {INIT_LINE}' in err.traceback
    [res] = engine.run([RunRequest(path, "Cube", "torch", RunSettings())])
    assert res.status == "error" and res.error.where == f"{init}:{INIT_LINE}"


def test_fixed_init_loads_the_file_as_its_package_module_again(engine, tmp_path):
    write_tree(
        tmp_path,
        {"fixpkg/__init__.py": INIT, "fixpkg/helpers.py": "X = 1\n", "fixpkg/ops.py": TORCH_OP},
    )
    path = str(tmp_path / "fixpkg" / "ops.py")
    [cat] = [c for c in engine.load([path]) if c.framework == "torch"]
    assert cat.notes and cat.error is None
    init = tmp_path / "fixpkg" / "__init__.py"
    init.write_text("from . import helpers\n")
    later = os.stat(init).st_mtime + 10
    os.utime(init, (later, later))
    [cat] = [c for c in engine.load([path]) if c.framework == "torch"]
    assert cat.error is None and cat.notes == ()
    res = run(engine, path, "Cube", "torch", RunSettings(modes=("custom",)))
    assert res.warnings == ()


def test_import_error_shows_the_chain_of_the_users_imports(engine, tmp_path):
    write_tree(
        tmp_path,
        {
            "chain_helper.py": "import os\nimport gradviz_missing_dep_two\n",
            "chain_ops.py": "import torch\n\nimport chain_helper  # noqa\n",
        },
    )
    path, helper = str(tmp_path / "chain_ops.py"), str(tmp_path / "chain_helper.py")
    [cat] = [c for c in engine.load([path]) if c.framework == "torch"]
    assert cat.error.where == f"{helper}:2"
    tb = cat.error.traceback
    assert tb.index(f'File "{path}", line 3') < tb.index(f'File "{helper}", line 2')


def test_list_and_run_say_the_file_loaded_as_a_plain_file(tmp_path, capsys):
    from gradviz.cli import main

    write_tree(
        tmp_path,
        {"clipkg/__init__.py": INIT, "clipkg/helpers.py": "X = 1\n", "clipkg/ops.py": TORCH_OP},
    )
    path = str(tmp_path / "clipkg" / "ops.py")
    assert main(["list", path, "--framework", "torch"]) == 0
    listed = capsys.readouterr().out
    assert "Cube" in listed and "loaded as a plain file, not as module 'clipkg.ops'" in listed
    report = tmp_path / "r.json"
    assert main(["run", path, "--framework", "torch", "--quiet", "--json", str(report)]) == 0
    assert "loaded as a plain file" in capsys.readouterr().err
    import json

    [op] = json.loads(report.read_text())["ops"]
    assert op["status"] == "ok" and op["warnings"][0].startswith("loaded as a plain file")


def test_import_error_of_a_library_module_shows_the_librarys_chain(engine, tmp_path):
    """A library's own module (under site-packages: not the user's code) was reported at its
    line 1 with no traceback: now at the library's failing import, with its chain."""
    lib = tmp_path / "site-packages" / "gvfakelib"
    write_tree(
        lib,
        {
            "__init__.py": "import os\nfrom . import util\n",
            "util.py": "import json\nimport gradviz_missing_dep_three\n",
            "mod.py": "import torch\n",
        },
    )
    [cat] = [c for c in engine.load([str(lib / "mod.py")]) if c.framework == "torch"]
    assert cat.error.where == f"{lib / 'util.py'}:2"
    tb = cat.error.traceback
    assert tb.index(f'File "{lib / "__init__.py"}", line 2') < tb.index(f'File "{lib / "util.py"}"')
