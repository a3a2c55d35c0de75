"""The cause of a wrong gradient, read off its numbers (issue 25, 4), on real runs in both
frameworks: transposed / permuted (GV306), swapped or mixed-up inputs (GV307), a broadcast
gradient summed over the wrong axes (GV308), the sign flipped (GV305) beside an intended
reversal (GV302), a bfloat16 / float16 / float64 gradient (GV103, TensorResult.grad_dtypes) or
one rounded and cast back (GV110); GV703 only where the numbers show a graph cut."""

import numpy as np
import pytest

from gradviz.compare import compare_result
from gradviz.diagnostics import diagnose
from gradviz.model import RunSettings
from tests.op_runs import run, verdicts

CAUSE_CODES = {
    "GV110-grad-rounded",
    "GV305-grad-sign-flipped",
    "GV306-grad-transposed",
    "GV307-grads-swapped",
    "GV308-grad-wrong-axis",
}


def _findings(res, tensor=None):
    found = diagnose(res, compare_result(res))
    return [f for f in found if tensor is None or f.tensor == tensor]


def _one(res, code, tensor):
    hits = [f for f in _findings(res, tensor) if f.code == code]
    assert len(hits) == 1, [f.one_line() for f in _findings(res)]
    return hits[0]


def _line(path, text):
    return next(i for i, s in enumerate(open(path).read().splitlines(), 1) if text in s)


TORCH_MATMUL = """\
    import torch
    import gradviz

    @gradviz.op(inputs={"x": (3, 4), "w": (4, 4)})
    class SquareMatmul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x @ w

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g @ w.T, (x.T @ g).T   # WRONG
"""
TF_MATMUL = """\
    import tensorflow as tf
    import gradviz

    @gradviz.op(inputs={"x": (3, 4), "w": (4, 4)})
    @tf.custom_gradient
    def square_matmul(x, w):
        def grad(g):
            return g @ tf.transpose(w), tf.transpose(tf.transpose(x) @ g)   # WRONG
        return x @ w, grad
"""


@pytest.mark.parametrize(
    "fw,src,qual", [("torch", TORCH_MATMUL, "SquareMatmul"), ("tf", TF_MATMUL, "square_matmul")]
)
def test_square_gradient_transposed_is_named(engine, write_module, fw, src, qual):
    path = write_module(f"matmul_{fw}.py", src)
    res = run(engine, path, qual, fw)
    w = res.tensor("w")
    np.testing.assert_allclose(w.grads["custom"], w.grads["default"].T, rtol=1e-6)
    f = _one(res, "GV306-grad-transposed", "w")
    assert f.severity == "error" and f.where == f"{path}:{_line(path, '# WRONG')}"
    assert "is the right gradient transposed" in f.message and "(4, 4) moved to (4, 4)" in f.message
    assert "default and numeric agree" in f.message and ".T" in f.fix
    assert not {g.code for g in _findings(res, "w")} & {"GV301-grad-wrong"}
    assert _findings(res, "x") == []  # x's gradient is right: nothing on it


PERMUTE = {
    "torch": """\
        import torch
        import gradviz

        @gradviz.op(inputs={"x": (3, 3, 3)})
        class Rotate(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.permute(1, 2, 0) * 2

            @staticmethod
            def backward(ctx, g):
                return g.permute(1, 2, 0) * 2   # WRONG: the inverse is (2, 0, 1)
    """,
    "tf": """\
        import tensorflow as tf
        import gradviz

        @gradviz.op(inputs={"x": (3, 3, 3)})
        @tf.custom_gradient
        def rotate(x):
            def grad(g):
                return tf.transpose(g, (1, 2, 0)) * 2   # WRONG: the inverse is (2, 0, 1)
            return tf.transpose(x, (1, 2, 0)) * 2, grad
    """,
}


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_permute_in_the_wrong_order_is_named(engine, write_module, fw):
    path = write_module(f"rotate_{fw}.py", PERMUTE[fw])
    res = run(
        engine, path, "Rotate" if fw == "torch" else "rotate", fw, RunSettings(upstream="random")
    )
    x = res.tensor("x")
    f = _one(res, "GV306-grad-transposed", "x")
    order = f.message.split("axes in the order ")[1].split(")")[0] + ")"
    p = tuple(int(a) for a in order.strip("()").split(","))
    assert p != (0, 1, 2)
    # what the message says holds: custom, read in order, is the truth with its axes moved by p
    np.testing.assert_allclose(
        x.grads["custom"].reshape(-1), x.grads["default"].transpose(p).reshape(-1), rtol=1e-6
    )
    assert "inverse order" in f.fix


SWAPPED = {
    "torch": """\
        import torch

        class Mul(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                ctx.save_for_backward(x, w)
                return x * w

            @staticmethod
            def backward(ctx, g):
                x, w = ctx.saved_tensors
                return g * x, g * w   # WRONG

        class MulSameTwice(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                ctx.save_for_backward(x, w)
                return x * w

            @staticmethod
            def backward(ctx, g):
                x, w = ctx.saved_tensors
                return g * x, g * x   # WRONG: x's is g * w
    """,
    "tf": """\
        import tensorflow as tf

        @tf.custom_gradient
        def mul(x, w):
            def grad(g):
                return g * x, g * w   # WRONG
            return x * w, grad

        @tf.custom_gradient
        def mul_same_twice(x, w):
            def grad(g):
                return g * x, g * x   # WRONG: x's is g * w
            return x * w, grad
    """,
}


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_swapped_and_mixed_up_input_gradients_are_named(engine, write_module, fw):
    path = write_module(f"mul_{fw}.py", SWAPPED[fw])
    names = ("Mul", "MulSameTwice") if fw == "torch" else ("mul", "mul_same_twice")
    res = run(engine, path, names[0], fw)
    x, w = res.tensor("x"), res.tensor("w")
    np.testing.assert_array_equal(x.grads["custom"], x.value)  # upstream ones: g * x = x
    np.testing.assert_array_equal(w.grads["custom"], w.value)
    for name, other in (("x", "w"), ("w", "x")):
        f = _one(res, "GV307-grads-swapped", name)
        assert f.severity == "error" and "are swapped" in f.message
        assert f"the custom gradient of '{name}' equals the true gradient of '{other}'" in f.message
        assert "differs from its own at 200 of 200" in f.message and "order" in f.fix
    res = run(engine, path, names[1], fw)
    f = _one(res, "GV307-grads-swapped", "x")
    assert "is the gradient of 'w'" in f.message and "swapped" not in f.message
    assert [g for g in _findings(res, "w") if g.severity == "error"] == []  # w's is right
    assert verdicts(res)["w"] == "match"


WRONG_AXIS = {
    "torch": """\
        import torch
        import gradviz

        @gradviz.op(inputs={"x": (4, 4), "b": (4,)})
        class BiasTanh(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, b):
                y = torch.tanh(x + b)
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, g):
                (y,) = ctx.saved_tensors
                d = g * (1 - y * y)
                return d, d.sum(1)   # WRONG: b is broadcast along axis 0

        @gradviz.op(inputs={"x": (3, 4), "b": (4,)})
        class BiasTanhUnreduced(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, b):
                y = torch.tanh(x + b)
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, g):
                (y,) = ctx.saved_tensors
                d = g * (1 - y * y)
                return d, d   # autograd sums it to b's shape: right
    """,
    "tf": """\
        import tensorflow as tf
        import gradviz

        @gradviz.op(inputs={"x": (3, 4), "b": (4,)})
        @tf.custom_gradient
        def bias_tanh(x, b):
            y = tf.tanh(x + b)
            def grad(g):
                d = g * (1 - y * y)
                return d, tf.reduce_sum(d, axis=1)   # WRONG: b is broadcast along axis 0
            return y, grad

        @gradviz.op(inputs={"x": (3, 4), "b": (4,)})
        @tf.custom_gradient
        def bias_tanh_unreduced(x, b):
            y = tf.tanh(x + b)
            def grad(g):
                d = g * (1 - y * y)
                return d, d   # WRONG: TF passes the (3, 4) gradient on for b (4,)
            return y, grad
    """,
}


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_bias_summed_over_the_wrong_axis_is_named(engine, write_module, fw):
    path = write_module(f"bias_{fw}.py", WRONG_AXIS[fw])
    names = (
        ("BiasTanh", "BiasTanhUnreduced") if fw == "torch" else ("bias_tanh", "bias_tanh_unreduced")
    )
    res = run(engine, path, names[0], fw)
    f = _one(res, "GV308-grad-wrong-axis", "b")
    assert f.severity == "error" and f.where == f"{path}:{_line(path, 'WRONG')}"
    assert "summed over axes (1,)" in f.message and "summed over axes (0,)" in f.message
    assert "dim=(0,)" in f.fix and "axis=[0]" in f.fix
    b, x = res.tensor("b"), res.tensor("x")
    np.testing.assert_allclose(b.grads["custom"].reshape(-1), x.grads["default"].sum(1), rtol=1e-5)
    codes = {g.code for g in _findings(res, "b")}
    assert ("GV102-grad-shape" in codes) == (fw == "tf")  # TF: (3,) for b (4,)
    res = run(engine, path, names[1], fw)
    if fw == "torch":  # the engine reduces a broadcast-shaped gradient itself: correct
        assert verdicts(res)["b"] == "match"
        assert not {g.code for g in _findings(res)} & CAUSE_CODES
    else:
        f = _one(res, "GV308-grad-wrong-axis", "b")
        assert "is not summed over its broadcast axes" in f.message and "(3, 4)" in f.message


SIGNS = {
    "torch": """\
        import torch

        class CosGrad(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return torch.cos(x)

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * torch.sin(x)   # WRONG

        class HalfNegated(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 3

            @staticmethod
            def backward(ctx, g):
                return g * -1.5   # WRONG

        class DomainHead(torch.autograd.Function):
            \"\"\"Domain classifier input: reverses the gradient, scaled by 0.5.\"\"\"
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g * -0.5
    """,
    "tf": """\
        import tensorflow as tf

        @tf.custom_gradient
        def cos_grad(x):
            def grad(g):
                return g * tf.sin(x)   # WRONG
            return tf.cos(x), grad

        @tf.custom_gradient
        def half_negated(x):
            def grad(g):
                return g * -1.5   # WRONG
            return x * 3, grad

        @tf.custom_gradient
        def domain_head(x):
            \"\"\"Domain classifier input: reverses the gradient, scaled by 0.5.\"\"\"
            def grad(g):
                return g * -0.5
            return tf.identity(x), grad
    """,
}


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_sign_flip_is_a_bug_and_a_documented_reversal_is_intended(engine, write_module, fw):
    path = write_module(f"signs_{fw}.py", SIGNS[fw])
    names = (
        ("CosGrad", "HalfNegated", "DomainHead")
        if fw == "torch"
        else ("cos_grad", "half_negated", "domain_head")
    )
    res = run(engine, path, names[0], fw)
    f = _one(res, "GV305-grad-sign-flipped", "x")
    assert f.severity == "error" and "has its sign flipped: it equals -1 times" in f.message
    assert "at all 200 elements" in f.message and f.where == f"{path}:{_line(path, 'WRONG')}"
    assert {g.code for g in _findings(res, "x")} == {"GV305-grad-sign-flipped"}
    res = run(engine, path, names[1], fw)
    f = _one(res, "GV305-grad-sign-flipped", "x")
    assert "flipped, and scaled by 0.5: it equals -0.5 times" in f.message
    res = run(engine, path, names[2], fw, RunSettings(checks=("precision",)))
    found = _findings(res)
    [f] = [g for g in found if g.code == "GV302-grad-surrogate"]
    assert "-0.5 times" in f.message and "intended gradient reversal" in f.message
    assert "reverses the gradient" in f.message
    assert [g.one_line() for g in found if g.severity == "error"] == []  # never both


BF16 = {
    "torch": """\
        import torch

        class SinBf16(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return torch.sin(x)

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return (g * torch.cos(x)).to(torch.bfloat16)   # WRONG

        class SinBf16Back(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return torch.sin(x)

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return (g * torch.cos(x)).to(torch.bfloat16).float()   # WRONG

        class SinF64(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return torch.sin(x)

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return (g * torch.cos(x)).double()
    """,
    "tf": """\
        import tensorflow as tf

        @tf.custom_gradient
        def sin_bf16(x):
            def grad(g):
                return tf.cast(g * tf.cos(x), tf.bfloat16)   # WRONG
            return tf.sin(x), grad

        @tf.custom_gradient
        def sin_bf16_back(x):
            def grad(g):
                return tf.cast(tf.cast(g * tf.cos(x), tf.bfloat16), tf.float32)   # WRONG
            return tf.sin(x), grad

        @tf.custom_gradient
        def sin_f64(x):
            def grad(g):
                return tf.cast(g * tf.cos(x), tf.float64)
            return tf.sin(x), grad
    """,
}


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_gradient_dtype_is_recorded_and_named(engine, write_module, fw):
    path = write_module(f"bf16_{fw}.py", BF16[fw])
    names = (
        ("SinBf16", "SinBf16Back", "SinF64")
        if fw == "torch"
        else ("sin_bf16", "sin_bf16_back", "sin_f64")
    )
    res = run(engine, path, names[0], fw, RunSettings(checks=("double_backward",)))
    x = res.tensor("x")
    assert x.grad_dtypes == {"custom": "bfloat16"} and x.grads["custom"].dtype == np.float32
    f = _one(res, "GV103-grad-dtype", "x")
    # 8 significant bits still agree with numeric within its tolerance: the verdict passes the
    # gradient, so the rounding is a warning, not a bug (issue 24: custom judged against numeric)
    assert {t.name: t.verdict for t in compare_result(res).tensors}["x"] == "match"
    assert f.severity == "warning" and "returns the gradient of 'x' in bfloat16" in f.message
    assert "keeps 8 significant bits: it rounds by up to 0.39 %" in f.message
    err = np.abs(x.grads["custom"] - x.grads["default"]).max()
    assert err > 0 and f.where == f"{path}:{_line(path, 'WRONG')}"
    # double backward: finite differences of a rounded backward measure steps: no GV703
    [c] = res.checks
    assert c.status == "skip" and "rounds a gradient to bfloat16" in c.message
    assert "GV703-double-backward-wrong" not in {g.code for g in _findings(res)}
    res = run(engine, path, names[1], fw)
    assert res.tensor("x").grad_dtypes == {}
    f = _one(res, "GV110-grad-rounded", "x")
    assert "every one of its 200 values is exactly a bfloat16 number" in f.message
    res = run(engine, path, names[2], fw)
    assert res.tensor("x").grad_dtypes == {"custom": "float64"}
    f = _one(res, "GV103-grad-dtype", "x")
    assert f.severity == ("info" if fw == "torch" else "warning")
    assert verdicts(res)["x"] == "match"
    assert not {g.code for g in _findings(res)} & CAUSE_CODES


OUTSIDE = {
    "torch": """\
        import torch

        class CubeDetached(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 3 * x * x.detach()

        class UpstreamSquared(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return torch.sin(x)

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * g * torch.cos(x)

        class OnesLike(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return torch.sin(x)

            @staticmethod
            def backward(ctx, g):
                return torch.ones_like(g)
    """,
    "tf": """\
        import tensorflow as tf

        @tf.custom_gradient
        def cube_detached(x):
            def grad(g):
                return g * 3 * x * tf.stop_gradient(x)
            return x ** 3, grad

        @tf.custom_gradient
        def upstream_squared(x):
            def grad(g):
                return g * g * tf.cos(x)
            return tf.sin(x), grad

        @tf.custom_gradient
        def ones_like(x):
            def grad(g):
                return tf.ones_like(g)
            return tf.sin(x), grad
    """,
}


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_outside_the_graph_only_where_a_graph_cut_shows(engine, write_module, fw):
    path = write_module(f"outside_{fw}.py", OUTSIDE[fw])
    names = (
        ("CubeDetached", "UpstreamSquared", "OnesLike")
        if fw == "torch"
        else ("cube_detached", "upstream_squared", "ones_like")
    )
    settings = RunSettings(checks=("double_backward",))
    res = run(engine, path, names[0], fw, settings)
    [f] = [g for g in _findings(res) if g.code == "GV703-double-backward-wrong"]
    assert "outside the graph" in f.message
    for name in names[1:]:
        res = run(engine, path, name, fw, settings)
        [c] = res.checks
        assert c.status == "pass", c.message
        assert "GV703-double-backward-wrong" not in {g.code for g in _findings(res)}


CORRECT = [
    "corpus/ok/*.py",
    "corpus/diag/clean_*.py",
    "corpus/flow/*.py",
    "../resources/examples/tutorial_*.py",
]


def test_no_cause_on_a_correct_gradient(engine):
    """Every op of the correct corpus, the tutorials and the flow ops (a named gradient
    reversal among them) in both frameworks: none of these findings, and no narrowing GV103."""
    from pathlib import Path

    from gradviz.model import RunRequest

    here = Path(__file__).resolve().parent
    files = sorted({str(p) for pattern in CORRECT for p in here.glob(pattern)})
    reqs = []
    for cat in engine.load(files):
        reqs += [RunRequest(cat.file, op.qualname, cat.framework) for op in cat.ops]
    assert len(reqs) >= 20
    ran = 0
    for res in engine.run(reqs):
        if res.status != "ok":
            continue
        ran += 1
        found = _findings(res)
        assert not {f.code for f in found} & CAUSE_CODES, [f.one_line() for f in found]
        assert [f.one_line() for f in found if f.code == "GV103-grad-dtype"] == []
        assert all(t.grad_dtypes == {} for t in res.tensors), res.name
    assert ran >= 20
