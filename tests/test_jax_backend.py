"""JAX as a third framework (issue 31): custom_vjp / custom_jvp ops and flax / equinox Modules
run in the JAX worker, each mode's gradient exact where the math is known; parity across the
three frameworks; without JAX installed the rest works and `gradviz devices` says how to add it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradviz.compare import compare_result, parity
from gradviz.diagnostics import diagnose
from gradviz.model import RunRequest, RunSettings
from gradviz.seeds import param_draw
from gradviz.vocab import Framework
from tests.op_runs import run, verdicts

pytestmark = pytest.mark.skipif(not Framework.JAX.installed, reason="jax is not installed")

JAX = Path(__file__).resolve().parent / "corpus" / "jax"
RULES = JAX / "rules_jax.py"
ROOT = Path(__file__).resolve().parent.parent


def _grad(res, tensor, mode):
    return np.asarray(res.tensor(tensor).grads[mode], dtype=np.float64)


def _x(res):
    return np.asarray(res.tensor("x").value, dtype=np.float64)


def test_list_names_each_rule_with_its_kind_and_leaves_jax_own_out(engine):
    [cat] = engine.load([str(RULES)])
    assert cat.framework == "jax" and cat.error is None
    kinds = {op.qualname: op.kind for op in cat.ops}
    assert kinds["round_ste"] == "custom_vjp" and kinds["log1pexp"] == "custom_jvp"
    assert "relu" not in kinds  # jax.nn.relu: JAX's own custom_jvp, imported
    src = RULES.read_text().splitlines()
    line = {op.qualname: op.line for op in cat.ops}
    assert src[line["round_ste"] - 1].startswith("def round_ste(")


def test_straight_through_round_custom_ones_default_zeros(engine):
    res = run(engine, RULES, "round_ste", "jax")
    np.testing.assert_array_equal(_grad(res, "x", "custom"), np.ones(200))
    np.testing.assert_array_equal(_grad(res, "x", "default"), np.zeros(200))
    assert verdicts(res)["x"] == "surrogate"


def test_gradient_reversal_is_minus_the_upstream(engine):
    res = run(engine, RULES, "grad_reverse", "jax", RunSettings(upstream="random"))
    up = _grad(res, "out", "custom")  # d loss / d out: the upstream itself
    assert np.ptp(up) > 0.5
    np.testing.assert_allclose(_grad(res, "x", "custom"), -up, rtol=1e-6)
    np.testing.assert_allclose(_grad(res, "x", "default"), up, rtol=1e-6)
    assert verdicts(res)["x"] == "differs"


def test_stabilised_log1pexp_custom_jvp_matches(engine):
    res = run(engine, RULES, "log1pexp", "jax")
    sigmoid = 1.0 / (1.0 + np.exp(-_x(res)))
    for mode in ("custom", "default"):
        np.testing.assert_allclose(_grad(res, "x", mode), sigmoid, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(_grad(res, "x", "numeric"), sigmoid, rtol=1e-4, atol=1e-6)
    assert verdicts(res)["x"] == "match"


def test_wrong_factor_differs_with_gv301(engine):
    res = run(engine, RULES, "wrong_factor", "jax")
    x = _x(res)
    np.testing.assert_allclose(_grad(res, "x", "custom"), 3.0 * x, rtol=1e-6)
    np.testing.assert_allclose(_grad(res, "x", "default"), 2.0 * x, rtol=1e-6)
    assert verdicts(res)["x"] == "differs"
    codes = [f.code for f in diagnose(res, compare_result(res)) if f.tensor == "x"]
    assert "GV301-grad-wrong" in codes


def test_numeric_is_float64_in_the_worker(engine):
    res = run(engine, RULES, "wrong_factor", "jax", RunSettings(dtype="float64"))
    x = _x(res)
    assert res.tensor("x").value.dtype == np.float64
    # float32 forwards would be off by ~1e-2 here (the loss sums 200 squares of up to 9)
    np.testing.assert_allclose(_grad(res, "x", "numeric"), 2.0 * x, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(_grad(res, "x", "custom"), 3.0 * x)


def test_numeric_takes_a_modules_parameters_at_their_float64_draw(engine, write_module):
    """d sum(x * scale) / dx = scale: the float64 draw, not its float32 rounding (the seeding
    ran outside the build's x64 scope, which truncated it)."""
    path = write_module(
        "linear_eqx.py",
        """
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        import gradviz

        @gradviz.op(inputs={"x": (16,)})  # a small loss: little rounding in its differences
        class Linear(eqx.Module):
            scale: jax.Array

            def __init__(self):
                self.scale = jnp.ones((16,))

            def __call__(self, x):
                return x * self.scale
        """,
    )
    res = run(engine, path, "Linear", "jax")
    draw = param_draw(RunSettings().seed, "scale", (16,))
    assert np.abs(draw - draw.astype(np.float32)).max() > 1.5e-8  # the two are told apart
    np.testing.assert_allclose(_grad(res, "x", "numeric"), draw, rtol=0, atol=3e-9)


def test_nondiff_argnums_are_constants_or_refused_at_the_line(engine):
    res = run(engine, RULES, "scaled", "jax")
    assert [t.name for t in res.tensors] == ["x", "out"]  # k is a constant, not an input
    np.testing.assert_array_equal(_grad(res, "x", "custom"), np.full(200, 3.0))
    np.testing.assert_array_equal(_grad(res, "x", "default"), np.full(200, 3.0))
    [bad] = engine.run([RunRequest(str(RULES), "needs_k", "jax", RunSettings())])
    line = RULES.read_text().splitlines().index("def needs_k(x, k):") + 1
    assert bad.status == "error" and f"rules_jax.py:{line}" in bad.error.where
    assert "nondiff_argnums" in bad.error.message and "consts={'k'" in bad.error.message


def test_pytree_outputs_and_symbolic_zeros(engine):
    res = run(engine, RULES, "two_outputs", "jax")
    x = _x(res)
    assert {t.name for t in res.tensors} == {"x", "out", "out1"}  # {"a", "b"} in key order
    np.testing.assert_allclose(_grad(res, "x", "custom"), 2.0 + np.cos(x), rtol=1e-5)
    sz = run(engine, RULES, "product_sz", "jax")
    np.testing.assert_allclose(_grad(sz, "x", "custom"), sz.tensor("y").value, rtol=1e-6)
    np.testing.assert_allclose(_grad(sz, "y", "custom"), sz.tensor("x").value, rtol=1e-6)
    assert set(verdicts(res).values()) == set(verdicts(sz).values()) == {"match"}


def test_default_has_no_trace_of_any_rule_even_under_jit(engine):
    # custom first, so jax.jit(round_ste) holds a trace with the rule when default runs
    res = run(engine, RULES, "nested_jit", "jax")
    np.testing.assert_array_equal(_grad(res, "x", "custom"), np.full(200, 2.0))
    np.testing.assert_array_equal(_grad(res, "x", "default"), np.zeros(200))
    assert verdicts(res)["x"] == "surrogate"


def test_twins_across_three_frameworks(engine, tmp_path):
    files = [str(JAX / f"twins_{fw}.py") for fw in ("torch", "tf", "jax")]
    reqs = [
        RunRequest(cat.file, op.qualname, cat.framework, RunSettings())
        for cat in engine.load(files)
        for op in cat.ops
    ]
    results = engine.run(reqs)
    assert all(r.status == "ok" for r in results)
    rows = parity(results)
    pairs = {(r.op, tuple(r.frameworks)) for r in rows}
    assert pairs == {
        ("cube", ("torch", "tf")),
        ("cube", ("torch", "jax")),
        ("cube", ("tf", "jax")),
        ("cube_off", ("torch", "jax")),
    }
    assert all(r.verdict == "match" for r in rows if r.op == "cube")
    off = {(r.tensor, r.mode): r.verdict for r in rows if r.op == "cube_off"}
    assert off.pop(("x", "custom")) == "differs" and set(off.values()) == {"match"}
    [jx] = [r for r in results if r.name == "cube_off" and r.framework == "jax"]
    [tx] = [r for r in results if r.name == "cube_off" and r.framework == "torch"]
    np.testing.assert_array_equal(_x(jx), _x(tx))  # identical seeded inputs
    np.testing.assert_allclose(_grad(jx, "x", "custom"), 2.0 * _x(tx) ** 2, rtol=1e-5)
    # the JSON: a torch-tf row as it always was, any other pair naming its two frameworks
    from gradviz.report import report_dict

    data = json.loads(json.dumps(report_dict(results, RunSettings()), default=str))
    keys = {tuple(p.get("frameworks", ("torch", "tf"))): set(p) for p in data["parity"]}
    assert keys[("torch", "tf")] == {"op", "tensor", "mode", "verdict", "max_abs_err", "note"}
    assert keys[("torch", "jax")] == keys[("torch", "tf")] | {"frameworks"}


def test_flax_and_equinox_modules_name_and_seed_their_parameters(engine):
    path = JAX / "modules_jax.py"
    params = {
        "NnxScaled": {"scale", "inner.kernel", "inner.bias"},
        "LinenScaled": {"scale", "Dense_0.kernel", "Dense_0.bias"},
        "EqxScaled": {"scale", "inner.weight", "inner.bias"},
    }
    scales = []
    for qualname, names in params.items():
        res = run(engine, path, qualname, "jax")
        assert set(res.seeded_params) == names
        x, scale = _x(res), np.asarray(res.tensor("scale").value, dtype=np.float64)
        scales.append(scale)
        # y = round(x) * scale: the straight-through dx = scale * dL/dy, dscale = round(x) * dL/dy
        assert res.tensor("x").role == "input" and res.tensor("scale").role == "param"
        v = verdicts(res)
        assert v["x"] == "surrogate" and all(v[n] == "match" for n in names), v
        r = np.round(x)
        dy = _grad(res, "scale", "custom")[r != 0] / r[r != 0]
        np.testing.assert_allclose(_grad(res, "x", "custom")[r != 0] / scale[r != 0], dy, rtol=1e-4)
        np.testing.assert_array_equal(_grad(res, "x", "default"), np.zeros(200))
    # one seeding by name and shape: every framework's `scale` of (200,) gets the same values
    np.testing.assert_array_equal(scales[0], scales[1])
    np.testing.assert_array_equal(scales[0], scales[2])


def _hidden_jax(code: str) -> subprocess.CompletedProcess:
    """`code` in a process where jax cannot be found (as where it is not installed)."""
    prelude = "import sys; sys.modules['jax'] = None\n"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-c", prelude + code],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=str(ROOT),
    )


def test_without_jax_the_rest_works_and_devices_says_how_to_add_it():
    out = _hidden_jax(
        "from gradviz.cli import main\n"
        "from gradviz.model import FRAMEWORKS\n"
        "print('FRAMEWORKS', *FRAMEWORKS)\n"
        "sys.exit(main(['devices']))"
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "FRAMEWORKS torch tf\n" in out.stdout and "torch:" in out.stdout
    assert "jax:\n  not installed: add JAX with pip install 'gradviz[jax]'" in out.stdout
    bad = _hidden_jax(
        "from gradviz.cli import main\nsys.exit(main(['run', '--framework', 'jax', 'x.py']))"
    )
    assert bad.returncode == 2 and "pip install 'gradviz[jax]'" in bad.stderr
