"""Diagnostics on hand-built RunResults (no engine): cases the CPU machine cannot produce, load
errors, JSON shape, and that the package stays framework-free."""

import textwrap

import numpy as np

from gradviz.diagnostics import diagnose, diagnose_load
from gradviz.model import ErrorInfo, OpInfo, RunRequest, RunResult, TensorResult


def _result(path, qualname, fw="torch", kind="function", **kw):
    op = OpInfo(qualname, fw, kind, qualname, str(path), 1, ("x",))
    return RunResult(request=RunRequest(str(path), qualname, fw), op=op, **kw)


def _write(tmp_path, text, name="m.py"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


FN = """\
    import torch
    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return torch.ones(200, device="cuda") * g
    """


def test_device_mismatch_message_becomes_finding_at_backward_return(tmp_path):
    p = _write(tmp_path, FN)
    err = ErrorInfo(
        "RuntimeError",
        "Function FnBackward returned an invalid gradient at index 0 - "
        "expected device cpu but got cuda:0",
        str(p) + ":7",
    )
    [f] = diagnose(_result(p, "Fn", status="error", error=err, mode_errors={"custom": err}))
    assert (f.code, f.severity, f.where, f.tensor) == ("GV104-grad-device", "error", f"{p}:9", "x")
    assert "is on cuda:0 but the input is on cpu" in f.message


def test_torch_dtype_mismatch_message_names_both_dtypes_in_order(tmp_path):
    p = _write(tmp_path, FN)
    err = ErrorInfo(
        "RuntimeError",
        "Function FnBackward returned an invalid gradient at index 0 - "
        "expected dtype float but got double",
        str(p) + ":7",
    )
    [f] = diagnose(_result(p, "Fn", status="error", error=err, mode_errors={"custom": err}))
    assert (f.code, f.tensor) == ("GV103-grad-dtype", "x")
    assert "has dtype double but the input has float" in f.message


def test_nan_forward_output_is_reported_with_input_values(tmp_path):
    p = _write(tmp_path, FN)
    x = np.array([1.0, 0.0, 2.0], np.float32)
    out = np.array([1.0, np.inf, 0.5], np.float32)
    tensors = (
        TensorResult("x", "input", (3,), "float32", x, grads={"custom": np.ones(3, np.float32)}),
        TensorResult(
            "out", "output", (3,), "float32", out, grads={"custom": np.ones(3, np.float32)}
        ),
    )
    found = diagnose(_result(p, "Fn", tensors=tensors, outputs={"custom": out}))
    [f] = [f for f in found if f.code == "GV402-non-finite-output"]
    assert "1 Inf of 3 elements" in f.message and "x = 0" in f.message


def test_mark_dirty_and_out_of_place_forwards_are_clean(tmp_path):
    p = _write(
        tmp_path,
        """\
        import torch
        class Marked(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class Dirty(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x[0] = 1.0
                return x

            @staticmethod
            def backward(ctx, g):
                return g
        """,
    )
    assert diagnose(_result(p, "Marked")) == []
    [f] = diagnose(_result(p, "Dirty"))
    assert f.code == "GV605-inplace-no-mark-dirty" and f.where == f"{p}:16"


def test_load_error_of_keras_weights_assignment(tmp_path):
    p = _write(
        tmp_path,
        """\
        import keras
        class L(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.weights = self.add_weight(shape=(3,))
        L()
        """,
    )
    err = ErrorInfo(
        "AttributeError", "property 'weights' of 'L' object has no setter", f"{p}:6", kind="load"
    )
    [f] = diagnose_load(err, str(p), "tf")
    assert (f.code, f.where, f.framework) == ("GV601-keras-weights-assign", f"{p}:5", "tf")
    assert "self.w = self.add_weight" in f.fix
    assert diagnose_load(ErrorInfo("ImportError", "no module named foo", f"{p}:1")) == []


def test_finding_as_dict_is_plain_json(tmp_path):
    import json

    p = _write(tmp_path, FN)
    err = ErrorInfo(
        "RuntimeError",
        "function FnBackward returned an incorrect number of gradients (expected 1, got 2)",
        "",
    )
    [f] = diagnose(_result(p, "Fn", status="error", error=err))
    d = json.loads(json.dumps(f.as_dict()))
    assert set(d) == {
        "code",
        "severity",
        "title",
        "message",
        "fix",
        "where",
        "framework",
        "op",
        "tensor",
    }
    assert d["code"] == "GV101-grad-count" and d["where"] == f"{p}:9"


def test_unreadable_source_still_gives_findings(tmp_path):
    err = ErrorInfo(
        "ValueError",
        "custom_gradient function expected to return 1 gradients, but returned 2 instead.",
        "/nonexistent/m.py:3",
    )
    [f] = diagnose(
        _result(
            tmp_path / "gone.py", "f", fw="tf", kind="custom_gradient", status="error", error=err
        )
    )
    assert f.code == "GV101-grad-count" and f.where == "/nonexistent/m.py:3"  # the error's line


CLASSMETHOD_FN = """\
    import torch
    class Sparse(torch.autograd.Function):
        @classmethod
        def forward(cls, ctx, X, dim=-1, k=None):
            ctx.dim = dim
            ctx.k = k
            ctx.X = X
            return X * 2

        @classmethod
        def backward(cls, ctx, g):
            return g * 2, None, None
    """


def test_ctx_attribute_warning_only_for_tensors_in_a_classmethod_forward(tmp_path):
    """entmax's style: classmethod forward(cls, ctx, X, dim=-1, k=None). `dim` (a negative
    literal) is no tensor; `k=None` is not fed a tensor by this run; X is."""
    p = _write(tmp_path, CLASSMETHOD_FN)
    x = np.ones(3, np.float32)
    tensors = (TensorResult("X", "input", (3,), "float32", x, grads={"custom": 2 * x}),)
    found = [
        f
        for f in diagnose(_result(p, "Sparse", tensors=tensors))
        if f.code == "GV604-save-for-backward"
    ]
    assert [(f.tensor, f.where) for f in found] == [("X", f"{p}:7")]


UPSTREAM_OPS = """\
    import tensorflow as tf
    import torch


    class IgnoresG(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return torch.ones_like(g) * 2 + 0 * g.shape[0]


    class UsesOneOfTwo(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return 3 * g2


    class NoGradient(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return None


    @tf.custom_gradient
    def ignores_dy(x):
        def grad(dy, variables=None):
            return tf.ones_like(dy) * 2.0
        return x * 2.0, grad


    @tf.custom_gradient
    def uses_dy(x):
        def grad(dy):
            return dy * 2.0
        return x * 2.0, grad
    """


def test_a_backward_that_never_reads_its_upstream_is_flagged_from_the_source(tmp_path):
    """With upstream ones, `ones_like(g) * 2` equals the true gradient of x * 2: the run reads
    match, so only the source tells (GV108, an error at the backward)."""
    p = _write(tmp_path, UPSTREAM_OPS)
    x = np.ones(3, np.float32)
    tensors = (
        TensorResult("x", "input", (3,), "float32", x, grads={"custom": 2 * x, "default": 2 * x}),
    )
    found = {}
    for qualname, fw in [
        ("IgnoresG", "torch"),
        ("UsesOneOfTwo", "torch"),
        ("NoGradient", "torch"),
        ("ignores_dy", "tf"),
        ("uses_dy", "tf"),
    ]:
        hits = [
            f
            for f in diagnose(_result(p, qualname, fw, tensors=tensors))
            if f.code == "GV108-upstream-unused"
        ]
        found[qualname] = [(f.severity, f.where) for f in hits]
    assert found == {
        "IgnoresG": [("error", f"{p}:11")],
        "UsesOneOfTwo": [],
        "NoGradient": [],
        "ignores_dy": [("error", f"{p}:37")],
        "uses_dy": [],
    }
