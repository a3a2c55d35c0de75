"""gradviz.testing inside a plain pytest test: check() and assert_gradients() on ops a test
imports, with the test's own tensors, through the session's warm workers (issue 30)."""

import importlib.util
import subprocess
import sys
import uuid

import numpy as np
import pytest

from gradviz.testing import OpNotFound, assert_gradients, check, verdicts_of

TORCH_OPS = """
import torch
import gradviz

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x

class HalfSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x          # the bug: half the true gradient

class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, g):
        return g

@gradviz.op(expect="differs")
class Reversal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale: float):
        ctx.scale = scale
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return -ctx.scale * g, None
"""

TF_OPS = """
import tensorflow as tf

@tf.custom_gradient
def cube(x):
    def grad(g):
        return 3.0 * g * x * x
    return x * x * x, grad

@tf.custom_gradient
def cube_wrong(x):
    def grad(g):
        return 3.0 * g * x
    return x * x * x, grad
"""


def _import(path: str):
    """The op file as the user's test imports it (a module with a file)."""
    name = f"user_ops_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def torch_ops(write_module):
    return _import(write_module("torch_ops.py", TORCH_OPS))


@pytest.fixture
def tf_ops(write_module):
    return _import(write_module("tf_ops.py", TF_OPS))


def test_check_uses_the_tests_tensor_as_it_is(engine, torch_ops):
    import torch

    x = torch.tensor([[1.0, -2.0, 0.5], [3.0, 0.25, -1.5]], dtype=torch.float64)
    a = check(torch_ops.Square, inputs={"x": x}, upstream="ones", engine=engine)
    s = a.result.request.settings
    assert (s.dtype, s.shape, s.device) == ("float64", (2, 3), "cpu")
    t = a.result.tensor("x")
    np.testing.assert_array_equal(t.value, x.numpy())
    np.testing.assert_array_equal(t.grads["custom"], 2 * x.numpy())
    np.testing.assert_array_equal(t.grads["default"], 2 * x.numpy())
    np.testing.assert_allclose(t.grads["numeric"], 2 * x.numpy(), rtol=1e-6)
    assert verdicts_of(a) == {"x": "match", "out": "match"}
    assert assert_gradients(torch_ops.Square, inputs={"x": x}, engine=engine).result.status == "ok"


def test_float32_values_survive_exactly(engine, torch_ops):
    import torch

    x = torch.tensor([0.1, 1.0 / 3.0, -7.77], dtype=torch.float32)
    a = check(torch_ops.Square, inputs={"x": x}, upstream="ones", engine=engine)
    assert a.result.request.settings.dtype == "float32"
    t = a.result.tensor("x")
    assert t.value.dtype == np.float32
    np.testing.assert_array_equal(t.value, x.numpy())
    np.testing.assert_array_equal(t.grads["custom"], (2 * x).numpy())


def test_assert_gradients_fails_with_the_report(engine, torch_ops, tmp_path):
    import torch

    x = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=torch.float64)
    with pytest.raises(AssertionError) as info:
        assert_gradients(torch_ops.HalfSquare, inputs={"x": x}, upstream="ones", engine=engine)
    text = str(info.value)
    first = text.splitlines()[0]
    assert first.startswith("gradviz: HalfSquare (torch) at ") and "torch_ops.py:" in first
    assert first.endswith(": differs (passing: match, surrogate)")
    assert "inputs given by the test" in text
    # custom g*x = x against 2x: the worst element is where |x| is largest, x[3] = 3
    assert "worst element x[3]: custom 3, default 6, numeric 6" in text
    assert "GV301" in text and "fix: " in text
    # repro=: the given tensor is the script's input, and the script says what the report says
    from repro_scripts import printed_rows, run_script

    with pytest.raises(AssertionError) as info:
        assert_gradients(
            torch_ops.HalfSquare,
            inputs={"x": x},
            upstream="ones",
            engine=engine,
            repro=tmp_path / "scripts",
        )
    script = tmp_path / "scripts" / "repro_HalfSquare_torch.py"
    assert str(info.value).endswith(f"needs only torch and numpy): python {script}")
    assert "'x': np.array([1.0, -2.0, 0.5, 3.0], dtype='float64')" in script.read_text()
    assert printed_rows(run_script(script))["x"] == ("3", "3")


def test_surrogate_passes_and_expect_is_honoured(engine, torch_ops):
    import torch

    x = torch.linspace(-2.2, 2.2, 12, dtype=torch.float64)
    a = assert_gradients(torch_ops.RoundSTE, inputs={"x": x}, engine=engine)
    assert verdicts_of(a)["x"] == "surrogate"
    assert_gradients(torch_ops.RoundSTE, inputs={"x": x}, expect="surrogate", engine=engine)
    with pytest.raises(AssertionError, match="expected match, got surrogate"):
        assert_gradients(torch_ops.RoundSTE, inputs={"x": x}, expect="match", engine=engine)


def test_op_expect_from_gradviz_op_and_consts(engine, torch_ops):
    import torch

    x = torch.tensor([1.0, 2.0, -3.0], dtype=torch.float64)
    a = assert_gradients(
        torch_ops.Reversal, inputs={"x": x}, consts={"scale": 0.5}, upstream="ones", engine=engine
    )
    assert a.result.op.expect == ("differs",)
    np.testing.assert_array_equal(a.result.tensor("x").grads["custom"], [-0.5, -0.5, -0.5])
    with pytest.raises(AssertionError, match="expected match, got differs"):
        assert_gradients(
            torch_ops.Reversal,
            inputs={"x": x},
            consts={"scale": 0.5},
            expect="match",
            engine=engine,
        )


def test_tensorflow_custom_gradient(engine, tf_ops):
    import tensorflow as tf

    x = tf.constant([1.0, -2.0, 0.5], dtype=tf.float64)
    a = assert_gradients(tf_ops.cube, inputs={"x": x}, upstream="ones", engine=engine)
    s = a.result.request.settings
    assert (a.result.framework, s.dtype, s.shape, s.device) == ("tf", "float64", (3,), "cpu")
    np.testing.assert_array_equal(a.result.tensor("x").grads["custom"], [3.0, 12.0, 0.75])
    with pytest.raises(AssertionError) as info:
        assert_gradients(tf_ops.cube_wrong, inputs={"x": x}, upstream="ones", engine=engine)
    assert "gradviz: cube_wrong (tf) at " in str(info.value)
    # custom 3x against 3x^2: furthest apart at x[1] = -2 (-6 against 12)
    assert "worst element x[1]: custom -6, default 12, numeric 12" in str(info.value)


def test_what_cannot_be_run_is_said(engine, torch_ops):
    import torch

    class Local(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(OpNotFound, match="defined inside a function"):
        check(Local, engine=engine)
    with pytest.raises(ValueError, match="different dtypes"):
        check(
            torch_ops.Reversal,
            inputs={"x": torch.ones(3), "scale": torch.ones(3).double()},
            engine=engine,
        )
    with pytest.raises(ValueError, match="dtype='float32', but the inputs are x float64"):
        check(
            torch_ops.Square, inputs={"x": torch.ones(3).double()}, dtype="float32", engine=engine
        )


def test_expect_names_a_verdict():
    import gradviz
    from gradviz.api import VERDICT_NAMES
    from gradviz.compare.verdicts import VERDICTS

    assert set(VERDICT_NAMES) == set(VERDICTS)
    with pytest.raises(TypeError, match="surrogat"):
        gradviz.op(expect="surrogat")


def test_importing_gradviz_testing_loads_no_qt_nor_framework():
    code = (
        "import sys, gradviz.testing, gradviz.testing.plugin; "
        "print(sorted(m for m in ('PySide6', 'pyqtgraph', 'torch', 'tensorflow', 'jax') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=str(__import__("pathlib").Path(__file__).parent.parent),
    )
    assert out.stdout.strip() == "[]"


def test_the_shared_engine_stays_warm(torch_ops):
    """Without engine=, every check of the process uses one engine and its warm worker."""
    import torch

    from gradviz.testing import session

    try:
        check(torch_ops.Square, inputs={"x": torch.ones(3)}, modes=("custom",))
        first = session.shared_engine()
        pid = first.workers["torch"].pid()
        check(torch_ops.Square, inputs={"x": torch.ones(4)}, modes=("custom",))
        assert session.shared_engine() is first
        assert pid and first.workers["torch"].pid() == pid
        assert first.workers["tf"].pid() == 0  # no TF op was checked: never started
    finally:
        session.close()


def test_an_op_that_raises_fails_with_its_line(engine, write_module):
    ops = _import(
        write_module(
            "raising_ops.py",
            """
        import torch

        class Raises(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                raise ValueError("backward broke")
        """,
        )
    )
    import torch

    a = check(ops.Raises, inputs={"x": torch.ones(3)}, engine=engine)
    assert a.result.status == "error" and verdicts_of(a) == {"x": "error", "out": "error"}
    with pytest.raises(AssertionError) as info:
        assert_gradients(ops.Raises, inputs={"x": torch.ones(3)}, engine=engine)
    text = str(info.value)
    assert text.splitlines()[0].endswith(": error (passing: match, surrogate)")
    assert "ValueError: backward broke" in text and "raising_ops.py:11" in text
