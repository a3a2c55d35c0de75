"""Ops imported into a file (DESIGN.md "Where ops come from"): imported Functions and
custom_gradient functions are ops at their defining file:line; an imported Module / Layer runs
when the file names it with gradviz.op(...)(Cls), without the library's class being modified."""

import textwrap
import uuid

import numpy as np

from gradviz.model import RunRequest, RunSettings


def write_package(root, files: dict) -> str:
    name = f"lib_{uuid.uuid4().hex[:10]}"
    (root / name).mkdir()
    (root / name / "__init__.py").write_text("")
    for fname, src in files.items():
        (root / name / fname).write_text(textwrap.dedent(src))
    return name


LIB = """\
    import tensorflow as tf
    import torch


    class SwishFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * torch.sigmoid(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            s = torch.sigmoid(x)
            return g * (s + x * s * (1 - s))


    class Swish(torch.nn.Module):
        def forward(self, x):
            return SwishFn.apply(x)


    @tf.custom_gradient
    def swish_tf(x):
        s = tf.sigmoid(x)
        def grad(dy):
            return dy * (s + x * s * (1 - s))
        return x * s, grad
"""


def test_imported_function_is_an_op_at_its_defining_line(engine, tmp_path):
    pkg = write_package(tmp_path, {"layers.py": LIB})
    path = tmp_path / "uses_lib.py"
    path.write_text(f"from {pkg}.layers import SwishFn, swish_tf, Swish\n")
    # the file imports neither framework itself: every worker looks (jax's finds nothing)
    cats = {c.framework: c for c in engine.load([str(path)])}
    torch_cat, tf_cat = cats.pop("torch"), cats.pop("tf")
    assert all(not c.ops for c in cats.values())
    ops = {op.qualname: op for op in torch_cat.ops + tf_cat.ops}
    assert set(ops) == {"SwishFn", "swish_tf"}
    lib_file = str(tmp_path / pkg / "layers.py")
    lines = textwrap.dedent(LIB).splitlines()
    assert (
        ops["SwishFn"].where
        == f"{lib_file}:{lines.index('class SwishFn(torch.autograd.Function):') + 1}"
    )
    assert ops["swish_tf"].where == f"{lib_file}:{lines.index('def swish_tf(x):') + 1}"
    assert any(s.startswith("Swish: an imported nn.Module") for s in torch_cat.skipped)
    [res] = engine.run([RunRequest(str(path), "SwishFn", "torch", RunSettings())])
    x = res.tensor("x")
    s = 1 / (1 + np.exp(-x.value.astype(np.float64)))
    np.testing.assert_allclose(x.grads["custom"], s + x.value * s * (1 - s), rtol=1e-5)
    np.testing.assert_allclose(x.grads["default"], x.grads["custom"], rtol=1e-5)


def test_gradviz_op_on_an_imported_module_registers_without_modifying_it(engine, tmp_path):
    pkg = write_package(tmp_path, {"layers.py": LIB})
    path = tmp_path / "names_lib.py"
    path.write_text(
        textwrap.dedent(f"""\
        import gradviz
        from {pkg}.layers import Swish

        gradviz.op(name="swish", inputs={{"x": (8,)}})(Swish)
        assert "__gradviz_op__" not in vars(Swish)      # the library's class is left alone
    """)
    )
    [cat] = [c for c in engine.load([str(path)]) if c.framework == "torch"]
    assert cat.error is None, cat.error
    [op] = [op for op in cat.ops if op.qualname == "Swish"]
    assert op.name == "swish" and op.kind == "module"
    [res] = engine.run([RunRequest(str(path), "Swish", "torch", RunSettings())])
    assert res.status == "ok", res.error
    assert res.tensor("x").shape == (8,)


def test_list_and_run_agree_on_a_file_with_nothing_to_run(tmp_path, capsys):
    from gradviz.cli import main

    pkg = write_package(
        tmp_path,
        {
            "mods.py": """\
        import torch


        class Plain(torch.nn.Module):
            def forward(self, x):
                return x * 2
    """
        },
    )
    path = tmp_path / "only_imports.py"
    path.write_text(f"import torch\nfrom {pkg}.mods import Plain\n")
    assert main(["list", str(path), "--framework", "torch"]) == 2
    listed = capsys.readouterr()
    assert "Plain: an imported nn.Module" in listed.out + listed.err
    assert main(["run", str(path), "--framework", "torch"]) == 2
    ran = capsys.readouterr()
    assert "Plain: an imported nn.Module" in ran.err
