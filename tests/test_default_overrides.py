"""The `default` mode is the framework's own autodiff wherever the override lives (DESIGN.md,
"Verdicts, per tensor"): a subclass of an imported Function, a custom_gradient nested in `call`,
one in another module the op calls; and where gradviz cannot remove it, the column is absent."""

import textwrap
import uuid

import numpy as np
from op_runs import verdicts

from gradviz.compare import compare_result
from gradviz.diagnostics import diagnose
from gradviz.model import RunRequest, RunSettings

SETTINGS = RunSettings()  # custom, default and numeric


def run(engine, path, qualname, framework, settings=SETTINGS):
    [res] = engine.run([RunRequest(str(path), qualname, framework, settings)])
    assert res.status == "ok", res.error
    return res


def write_package(root, files: dict) -> str:
    """A package with a unique name under `root` (test runs share one worker's sys.modules)."""
    name = f"pkg_{uuid.uuid4().hex[:10]}"
    (root / name).mkdir()
    (root / name / "__init__.py").write_text("")
    for fname, src in files.items():
        (root / name / fname).write_text(textwrap.dedent(src))
    return name


REVGRAD = """\
    import torch
    from torch.autograd import Function


    class RevGrad(Function):
        # as pytorch-revgrad ships it: the forward returns its input unchanged
        @staticmethod
        def forward(ctx, input_, alpha_):
            ctx.save_for_backward(input_, alpha_)
            return input_

        @staticmethod
        def backward(ctx, grad_output):
            _, alpha_ = ctx.saved_tensors
            return -grad_output * alpha_, None


    revgrad = RevGrad.apply
"""


def test_subclass_of_an_imported_function_gets_the_real_default(engine, tmp_path):
    pkg = write_package(tmp_path, {"functional.py": REVGRAD})
    path = tmp_path / "ops_sub.py"
    path.write_text(f"from {pkg}.functional import RevGrad\n\n\nclass G(RevGrad):\n    pass\n")
    res = run(engine, path, "G", "torch")
    x = res.tensor("input_")
    np.testing.assert_allclose(x.grads["custom"], -res.tensor("alpha_").value, rtol=1e-6)
    np.testing.assert_allclose(x.grads["default"], np.ones(200))
    np.testing.assert_allclose(x.grads["numeric"], np.ones(200), atol=1e-4)
    assert verdicts(res)["input_"] == "differs"


def test_module_calling_an_alias_in_another_module_gets_the_real_default(engine, tmp_path):
    pkg = write_package(tmp_path, {"functional.py": REVGRAD})
    path = tmp_path / "ops_alias.py"
    path.write_text(
        textwrap.dedent(f"""\
        import torch
        from {pkg} import functional


        class Reverse(torch.nn.Module):
            def forward(self, x):
                return functional.revgrad(x, torch.tensor(2.0))
    """)
    )
    res = run(engine, path, "Reverse", "torch")
    x = res.tensor("x")
    np.testing.assert_allclose(x.grads["custom"], -2 * np.ones(200))
    np.testing.assert_allclose(x.grads["default"], np.ones(200))
    assert verdicts(res)["x"] == "differs"
    # and the library is left as it was: the next custom run reverses again
    again = run(engine, path, "Reverse", "torch", RunSettings(modes=("custom",)))
    np.testing.assert_allclose(again.tensor("x").grads["custom"], -2 * np.ones(200))


def test_override_out_of_reach_leaves_default_absent_with_the_reason(engine, tmp_path):
    pkg = write_package(tmp_path, {"functional.py": REVGRAD})
    path = tmp_path / "ops_hidden.py"
    path.write_text(
        textwrap.dedent(f"""\
        import torch
        from {pkg} import functional


        class Hidden(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fns = [functional.RevGrad.apply]   # a bound method gradviz cannot reach

            def forward(self, x):
                return self.fns[0](x, torch.tensor(1.0))
    """)
    )
    res = run(engine, path, "Hidden", "torch")
    x = res.tensor("x")
    assert "default" not in x.grads
    assert "RevGrad" in x.absent["default"] and "override" in x.absent["default"]
    comp = {t.name: t for t in compare_result(res).tensors}["x"]
    assert comp.verdict == "differs"  # custom -1 against numeric +1
    assert "numeric" in comp.explanation


KERAS_NESTED_STE = """\
    import tensorflow as tf
    from tensorflow import keras


    class RoundLayer(keras.layers.Layer):
        def call(self, x):
            def grad(dy):
                return dy

            @tf.custom_gradient
            def ste_round(v):
                return tf.round(v), grad
            return ste_round(x)
"""


def test_custom_gradient_nested_in_call_is_removed_for_default(engine, write_module):
    path = write_module("nested_ste.py", KERAS_NESTED_STE)
    res = run(engine, path, "RoundLayer", "tf")
    x = res.tensor("x")
    np.testing.assert_array_equal(x.grads["custom"], np.ones(200))
    assert "default" not in x.grads  # tf.round has no gradient: None, as TF says
    v = verdicts(res)["x"]
    assert v != "match" and v == "surrogate"
    codes = {f.code for f in diagnose(res, compare_result(res))}
    assert "GV603-call-returns-grad-fn" not in codes


def test_custom_gradient_in_another_module_is_swapped_where_it_lives(engine, tmp_path):
    pkg = write_package(
        tmp_path,
        {
            "quant.py": """\
        import tensorflow as tf


        @tf.custom_gradient
        def double_grad(x):
            def grad(dy):
                return 2.0 * dy
            return tf.identity(x), grad
    """
        },
    )
    path = tmp_path / "uses_helper.py"
    path.write_text(
        textwrap.dedent(f"""\
        import tensorflow as tf
        from tensorflow import keras
        from {pkg} import quant


        class Doubler(keras.layers.Layer):
            def call(self, x):
                return quant.double_grad(x) * 3.0
    """)
    )
    res = run(engine, path, "Doubler", "tf")
    x = res.tensor("x")
    np.testing.assert_allclose(x.grads["custom"], 6 * np.ones(200))
    np.testing.assert_allclose(x.grads["default"], 3 * np.ones(200))
    assert verdicts(res)["x"] == "differs"
    again = run(engine, path, "Doubler", "tf", RunSettings(modes=("custom",)))
    np.testing.assert_allclose(again.tensor("x").grads["custom"], 6 * np.ones(200))


def _tensor(custom, default, numeric, n=50):
    from gradviz.model import TensorResult

    grads = {"custom": custom, "default": default, "numeric": numeric}
    return TensorResult(
        "x",
        "input",
        (n,),
        "float32",
        np.zeros(n),
        grads={k: v for k, v in grads.items() if v is not None},
    )


def test_custom_and_default_agreeing_against_numeric_are_judged_by_numeric():
    from gradviz.compare import verdict

    ones, zeros = np.ones(50), np.zeros(50)
    # both 1 where the true derivative is 0: a straight-through trick written with .detach()
    # reads as the same estimator written as a Function would (DESIGN.md "same numbers")
    v, why = verdict(_tensor(ones, ones, zeros))
    assert v == "surrogate" and "all 50 where numeric is exactly 0" in why
    v, why = verdict(_tensor(ones, ones, ones * 2))
    assert v == "differs" and "50 of them where the derivative is defined and not 0" in why
    assert verdict(_tensor(ones, ones, ones))[0] == "match"


def test_match_tolerates_a_kink_but_not_a_wrong_gradient():
    from gradviz.compare import verdict

    ones = np.ones(200)
    kink = ones.copy()
    kink[7] = 0.5  # the finite difference straddled a kink at one element
    assert verdict(_tensor(ones, ones, kink, 200))[0] == "match"
    wrong = ones.copy()
    wrong[:20] = -1.0
    assert verdict(_tensor(ones, ones, wrong, 200))[0] == "differs"
