"""Custom rules shipped by real JAX packages (the `jax` extra installs them, pinned): gradients
against closed forms, and the verdicts: an exact rule reads match, a rule that is not the
derivative (a gradient scaling) differs.

optax: the unit-simplex projection (a custom_jvp; sparsemax's Jacobian), weighted_logsoftmax (a
custom_jvp with two differentiable inputs) and scale_gradient's rule (a custom_vjp).
jax itself: jax.nn.relu, a custom_jvp of JAX's own, run when the file names it. Their contract
checks: none fails but scale_gradient's precision (a scaling is not the derivative, in float64
too, as for any framework's)."""

import numpy as np
import pytest

from gradviz.model import RunSettings
from gradviz.vocab import Framework
from tests.op_runs import run, verdicts

pytestmark = pytest.mark.skipif(not Framework.JAX.installed, reason="jax is not installed")
RANDOM = RunSettings(upstream="random")


def _f64(a):
    return np.asarray(a, dtype=np.float64)


def test_optax_simplex_projection_is_sparsemax_and_matches(engine, write_module):
    pytest.importorskip("optax")
    path = write_module(
        "optax_simplex.py",
        """\
        from optax.projections._projections import _projection_unit_simplex
    """,
    )
    res = run(engine, path, "_projection_unit_simplex", "jax", RANDOM)
    assert res.op.kind == "custom_jvp" and "optax" in res.op.defined_at
    p, g = _f64(res.outputs["custom"]), _f64(res.tensor("out").grads["custom"])
    support = p > 0
    assert 0 < support.sum() < p.size and p.sum() == pytest.approx(1.0, abs=1e-5)
    np.testing.assert_allclose(
        res.tensor("values").grads["custom"],
        np.where(support, g - g[support].mean(), 0.0),
        atol=1e-6,
    )
    assert verdicts(res) == {"values": "match", "out": "match"}


def test_optax_weighted_logsoftmax_matches_in_both_inputs(engine, write_module):
    pytest.importorskip("optax")
    path = write_module(
        "optax_wls.py",
        """\
        from optax.losses._classification import weighted_logsoftmax
    """,
    )
    res = run(engine, path, "weighted_logsoftmax", "jax", RANDOM)
    x, w = _f64(res.tensor("x").value), _f64(res.tensor("weights").value)
    g = _f64(res.tensor("out").grads["custom"])
    soft = np.exp(x - x.max()) / np.exp(x - x.max()).sum()
    np.testing.assert_allclose(
        res.tensor("x").grads["custom"], w * g - soft * np.sum(w * g), rtol=1e-4, atol=1e-5
    )
    np.testing.assert_allclose(
        res.tensor("weights").grads["custom"], g * np.log(soft), rtol=1e-4, atol=1e-5
    )
    assert verdicts(res) == {"x": "match", "weights": "match", "out": "match"}


def test_optax_scale_gradient_differs_by_its_factor(engine, write_module):
    pytest.importorskip("optax")
    path = write_module(
        "optax_scale.py",
        """\
        import gradviz
        from optax._src.utils import _scale_gradient

        gradviz.op(name="scale_gradient", consts={"scale": 0.5})(_scale_gradient)
    """,
    )
    res = run(engine, path, "_scale_gradient", "jax", RANDOM)
    up = _f64(res.tensor("out").grads["custom"])
    np.testing.assert_allclose(res.tensor("inputs").grads["custom"], 0.5 * up, rtol=1e-6)
    np.testing.assert_allclose(res.tensor("inputs").grads["default"], up, rtol=1e-6)
    assert verdicts(res)["inputs"] == "differs"  # a scaling is not the derivative


def test_jax_nn_relu_is_run_when_named_and_matches(engine, write_module):
    path = write_module(
        "jax_relu.py",
        """\
        import gradviz
        import jax

        gradviz.op(name="relu")(jax.nn.relu)
    """,
    )
    [cat] = engine.load([path])
    assert [(op.name, op.kind) for op in cat.ops] == [("relu", "custom_jvp")]
    res = run(engine, path, "relu", "jax")
    x = _f64(res.tensor("x").value)
    np.testing.assert_array_equal(res.tensor("x").grads["custom"], (x > 0).astype(np.float64))
    np.testing.assert_array_equal(res.tensor("x").grads["default"], (x > 0).astype(np.float64))
    assert verdicts(res)["x"] == "match"


PACKAGE_OPS = {
    "_projection_unit_simplex": "from optax.projections._projections import "
    "_projection_unit_simplex\n",
    "weighted_logsoftmax": "from optax.losses._classification import weighted_logsoftmax\n",
    "_scale_gradient": "import gradviz\nfrom optax._src.utils import _scale_gradient\n\n"
    'gradviz.op(name="scale_gradient", consts={"scale": 0.5})(_scale_gradient)\n',
    "relu": 'import gradviz\nimport jax\n\ngradviz.op(name="relu")(jax.nn.relu)\n',
}


def test_the_packages_rules_pass_their_contract_checks(engine, write_module):
    pytest.importorskip("optax")
    from gradviz.model import CHECKS, RunRequest

    reqs = [
        RunRequest(write_module(f"{q.strip('_')}.py", src), q, "jax", RunSettings(checks=CHECKS))
        for q, src in PACKAGE_OPS.items()
    ]
    for res in engine.run(reqs):
        assert res.status == "ok", res.error
        by = {c.name: (c.status, c.message) for c in res.checks}
        assert by.pop("noncontiguous_upstream")[0] == by.pop("autocast")[0] == "skip"
        if res.request.qualname == "_scale_gradient":
            status, message = by.pop("precision")
            assert status == "fail" and "max abs difference 0.5" in message  # 0.5 g for g
            assert "differs from the default's (a surrogate?)" in by["double_backward"][1]
        assert {n: s for n, (s, _) in by.items()} == dict.fromkeys(by, "pass"), by
