"""equinox.filter_custom_vjp ops (issue 31): listed as custom_vjp, custom through the rule,
default through the primal with the rule (and equinox's wrapper) gone, exact gradients; a rule
the swap cannot reach makes default absent (OVERRIDE_KEPT), a right swap never does."""

from pathlib import Path

import numpy as np
import pytest

from gradviz.model import OVERRIDE_KEPT, RunRequest, RunSettings
from gradviz.vocab import Framework
from tests.op_runs import run, verdicts

pytestmark = pytest.mark.skipif(not Framework.JAX.installed, reason="jax is not installed")

OPS = Path(__file__).resolve().parent / "corpus" / "jax" / "filter_vjp_jax.py"


def _grad(res, tensor, mode):
    return np.asarray(res.tensor(tensor).grads[mode], dtype=np.float64)


def test_listed_as_custom_vjp_at_the_def_line(engine):
    [cat] = engine.load([str(OPS)])
    assert cat.error is None
    kinds = {op.qualname: op.kind for op in cat.ops}
    assert kinds == dict.fromkeys(
        ["eqx_round_ste", "eqx_wrong_factor", "eqx_scaled", "eqx_ahead", "eqx_two_arrays"],
        "custom_vjp",
    )
    src = OPS.read_text().splitlines()
    for op in cat.ops:
        assert src[op.line - 1].startswith(f"def {op.qualname}("), op
        assert op.defined_at == ""


def test_straight_through_round_custom_ones_default_zeros(engine):
    res = run(engine, OPS, "eqx_round_ste", "jax")
    np.testing.assert_array_equal(_grad(res, "x", "custom"), np.ones(200))
    np.testing.assert_array_equal(_grad(res, "x", "default"), np.zeros(200))
    assert "default" not in res.tensor("x").absent  # a right swap: no OVERRIDE_KEPT
    assert verdicts(res)["x"] == "surrogate"


def test_wrong_factor_differs(engine):
    res = run(engine, OPS, "eqx_wrong_factor", "jax")
    x = np.asarray(res.tensor("x").value, dtype=np.float64)
    np.testing.assert_allclose(_grad(res, "x", "custom"), 3.0 * x, rtol=1e-6)
    np.testing.assert_allclose(_grad(res, "x", "default"), 2.0 * x, rtol=1e-6)
    assert verdicts(res)["x"] == "differs"


def test_a_constant_after_vjp_arg_by_keyword(engine):
    res = run(engine, OPS, "eqx_scaled", "jax")
    assert [t.name for t in res.tensors] == ["x", "out"]
    for mode in ("custom", "default"):
        np.testing.assert_array_equal(_grad(res, "x", mode), np.full(200, 3.0))
    assert verdicts(res)["x"] == "match"


def test_a_rule_the_swap_cannot_reach_is_reported_kept(engine):
    """The primal runs a jaxpr made at import, with eqx_round_ste's rule inside it."""
    res = run(engine, OPS, "eqx_ahead", "jax")
    np.testing.assert_array_equal(_grad(res, "x", "custom"), np.full(200, 2.0))
    x = res.tensor("x")
    assert "default" not in x.grads
    assert (
        x.absent["default"].startswith(OVERRIDE_KEPT) and "custom_vjp_call" in x.absent["default"]
    )


def test_a_float_array_after_vjp_arg_is_refused_at_the_line(engine):
    [bad] = engine.run([RunRequest(str(OPS), "eqx_two_arrays", "jax", RunSettings())])
    line = OPS.read_text().splitlines().index("def eqx_two_arrays(x, y):") + 1
    assert bad.status == "error" and bad.error.where == f"{OPS}:{line}"
    assert "argument 'y'" in bad.error.message and "consts=" in bad.error.message


def test_an_imported_one_is_where_its_file_defines_it(engine, write_module):
    user = write_module("uses_eqx.py", "from eqx_helpers import eqx_round_ste  # noqa: F401\n")
    helper = Path(user).with_name("eqx_helpers.py")
    helper.write_text(OPS.read_text())
    [cat] = engine.load([user])
    [op] = cat.ops
    line = helper.read_text().splitlines().index("def eqx_round_ste(x):") + 1
    assert op.qualname == "eqx_round_ste" and op.defined_at == f"{helper}:{line}"
    res = run(engine, user, "eqx_round_ste", "jax")
    np.testing.assert_array_equal(_grad(res, "x", "default"), np.zeros(200))
