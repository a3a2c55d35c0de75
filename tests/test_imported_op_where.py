"""Errors and findings of an op imported from another file name that file's own lines, never
the importing file's name with the other file's line numbers (issue 24, item 7)."""

import textwrap
import uuid

import pytest

from gradviz.diagnostics import diagnose
from gradviz.model import RunRequest, RunSettings

LIB = """\
    import tensorflow as tf
    import torch


    class TwoGrads(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, g  # TWO GRADS


    class IgnoresUpstream(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):  # IGNORES G
            return torch.full_like(g, 2.0)


    @tf.custom_gradient
    def two_grads_tf(x):
        def grad(dy):
            return dy * 2, dy  # TWO GRADS TF
        return x * 2, grad
"""


def _line(marker: str) -> int:
    return next(i for i, ln in enumerate(textwrap.dedent(LIB).splitlines(), 1) if marker in ln)


def _setup(tmp_path):
    name = f"wherelib_{uuid.uuid4().hex[:8]}"
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text("")
    lib = tmp_path / name / "ops.py"
    lib.write_text(textwrap.dedent(LIB))
    # the importing file is longer than the library, so a library line joined to its name
    # would still be a line of it
    user = tmp_path / "uses_where.py"
    user.write_text(f"from {name}.ops import TwoGrads, IgnoresUpstream, two_grads_tf\n" + "\n" * 60)
    return str(lib), str(user)


def test_torch_error_and_finding_of_an_imported_function_name_its_file(engine, tmp_path):
    lib, user = _setup(tmp_path)
    [res] = engine.run([RunRequest(user, "TwoGrads", "torch", RunSettings())])
    assert res.status == "error"
    assert "incorrect number of gradients" in res.error.message
    assert res.error.where == f"{lib}:{_line('# TWO GRADS')}"
    [f] = [f for f in diagnose(res) if f.code == "GV101-grad-count"]
    assert f.where == f"{lib}:{_line('# TWO GRADS')}"

    [res] = engine.run(
        [RunRequest(user, "IgnoresUpstream", "torch", RunSettings(modes=("custom", "default")))]
    )
    assert res.status == "ok", res.error
    [f] = [f for f in diagnose(res) if f.code == "GV108-upstream-unused"]
    assert f.where == f"{lib}:{_line('# IGNORES G')}"


def test_tf_error_of_an_imported_custom_gradient_names_its_file(engine, tmp_path):
    lib, user = _setup(tmp_path)
    [res] = engine.run([RunRequest(user, "two_grads_tf", "tf", RunSettings())])
    assert res.status == "error"
    assert res.error.where.startswith(f"{lib}:"), res.error
    [f] = [f for f in diagnose(res) if f.code == "GV101-grad-count"]
    assert f.where == f"{lib}:{_line('# TWO GRADS TF')}"  # the library's own return line


def test_tree_shows_an_imported_op_at_its_own_file_and_line(make_window, tmp_path):
    """The window's op tree: an op of the file itself by its line, an imported one by its own
    file's name and line (the line alone read as a line of the importing file)."""
    pytest.importorskip("pytestqt")
    from gradviz.qt.op_tree import COL_WHERE

    lib, user = _setup(tmp_path)
    with open(user, "a") as f:
        f.write(
            "class Own(torch.autograd.Function):\n"
            "    @staticmethod\n    def forward(ctx, x):\n        return x * 3\n\n"
            "    @staticmethod\n    def backward(ctx, g):\n        return g * 3\n"
        )
    with open(user, "r+") as f:
        body = f.read()
        f.seek(0)
        f.write("import torch\n" + body)
    win = make_window([user])
    tree = win.tree
    items = {
        tree.topLevelItem(i).child(j).text(0): tree.topLevelItem(i).child(j)
        for i in range(tree.topLevelItemCount())
        for j in range(tree.topLevelItem(i).childCount())
    }
    assert items["TwoGrads"].text(COL_WHERE) == f"ops.py:{_line('class TwoGrads')}"
    own_line = next(
        i for i, ln in enumerate(open(user).read().splitlines(), 1) if ln.startswith("class Own")
    )
    assert items["Own"].text(COL_WHERE) == str(own_line)
