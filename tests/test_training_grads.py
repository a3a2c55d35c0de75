"""Custom mode takes gradients the way training does (issue 24, 3-5), in real workers:
- a backward that writes a parameter's gradient into its .grad itself (a nested
  torch.autograd.backward on a recomputed graph; TF: tf.recompute_grad, variables=) counts;
- a backward that can run only once is never crashed by the upstream probe: the op and its
  gradients stand, the probe is skipped with the reason;
- an output other outputs are computed from gets autograd's gradient (through them), and
  numeric does not contradict it;
- frozen parameters and buffers keep the values the module built, read "no gradient: frozen",
  and the report says which parameters were seeded.
Ops: tests/corpus/ok/training_grads_{torch,tf}.py (expected gradients in their docstrings)."""

import json

import numpy as np
import pytest

from gradviz.model import FROZEN, RunSettings
from gradviz.report import write_json
from tests.conftest import CORPUS
from tests.op_runs import run

FILES = {fw: CORPUS / "ok" / f"training_grads_{fw}.py" for fw in ("torch", "tf")}
F32 = {"rtol": 1e-5, "atol": 1e-5}  # float32 arithmetic of a closed form
NUMERIC = {"rtol": 2e-3, "atol": 1e-3}  # central differences of a float32 forward


def _grads(res, name):
    t = res.tensor(name)
    return {m: np.asarray(g, dtype=np.float64) for m, g in t.grads.items()}, t


def _value(res, name):
    return np.asarray(res.tensor(name).value, dtype=np.float64)


@pytest.mark.parametrize(
    "fw,qualname,w",
    [
        ("torch", "Checkpointed", "inner.w"),
        ("torch", "CheckpointedWithGraph", "inner.w"),
        ("tf", "Recomputed", "w"),
        ("tf", "VarGrad", "w"),
    ],
)
def test_a_gradient_a_backward_writes_into_grad_itself_counts(engine, fw, qualname, w):
    res = run(engine, FILES[fw], qualname, fw)
    x, wv = _value(res, "x"), float(_value(res, w))
    gx, _ = _grads(res, "x")
    gw, tw = _grads(res, w)
    np.testing.assert_allclose(gx["custom"], 2 * wv * x, **F32)
    np.testing.assert_allclose(gw["custom"], np.sum(x * x), **F32)
    np.testing.assert_allclose(gw["numeric"], np.sum(x * x), **NUMERIC)
    np.testing.assert_allclose(gx["numeric"], 2 * wv * x, **NUMERIC)
    assert res.seeded_params == (w,)
    if "default" in gw:
        # the probe's second backward started from zeroed .grad: custom and default agree
        # under the random upstream too (no gradient counted twice), and the run's own
        # gradient above is the one backward's
        assert tw.probe is not None and tw.probe["allclose"], tw.probe
        assert res.tensor("x").probe["allclose"]
        assert res.probe_skipped == ""


@pytest.mark.parametrize(
    "fw,qualname,factor,error",
    [
        ("torch", "GraphOnce", None, "RuntimeError"),
        ("torch", "DropsState", 6.0, "AttributeError"),
        ("tf", "once", 6.0, "KeyError"),
    ],
)
def test_a_backward_that_runs_once_is_not_crashed_by_the_probe(engine, fw, qualname, factor, error):
    res = run(engine, FILES[fw], qualname, fw)
    assert not res.mode_errors
    x = _value(res, "x")
    g, t = _grads(res, "x")
    want = 3 * x * x if factor is None else factor * x
    np.testing.assert_allclose(g["custom"], want, **F32)
    np.testing.assert_allclose(g["numeric"], want, **NUMERIC)
    assert t.probe is None
    why = res.probe_skipped
    assert "upstream probe" in why and "skipped" in why and error in why, why
    assert f"{FILES[fw]}:" in why  # the user's line that raised the second time
    if qualname == "GraphOnce":
        assert "second time" in why


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_an_output_other_outputs_are_computed_from_gets_their_paths(engine, fw):
    res = run(engine, FILES[fw], "TwoOutputs", fw)
    x, y = _value(res, "x"), _value(res, "out")
    np.testing.assert_allclose(y, 2 * x, **F32)
    np.testing.assert_allclose(_value(res, "out1"), y * y, **F32)
    g_out, t_out = _grads(res, "out")
    for mode in ("custom", "default"):
        np.testing.assert_allclose(g_out[mode], 1 + 2 * y, **F32)  # u_y + (dz/dy)^T u_z
    # numeric cannot move out1 with a perturbation of out made after the op: no reference,
    # never one that holds out1 fixed and contradicts autograd
    assert "numeric" not in g_out
    assert "out1" in t_out.absent["numeric"] and "computed from it" in t_out.absent["numeric"]
    g1, _ = _grads(res, "out1")
    np.testing.assert_allclose(g1["custom"], np.ones_like(y), **F32)
    np.testing.assert_allclose(g1["numeric"], np.ones_like(y), **NUMERIC)
    gx, _ = _grads(res, "x")
    for mode, tol in (("custom", F32), ("default", F32), ("numeric", NUMERIC)):
        np.testing.assert_allclose(gx[mode], 2 * (1 + 2 * y), **tol)


def test_sibling_outputs_of_one_function_keep_their_numeric_reference(engine):
    """A Function's outputs are siblings to autograd, even where its forward computed one from
    the other: custom's gradient at out is its upstream, and numeric there says the same."""
    res = run(engine, FILES["torch"], "Siblings", "torch")
    g, _ = _grads(res, "out")
    np.testing.assert_allclose(g["custom"], np.ones_like(g["custom"]), **F32)
    np.testing.assert_allclose(g["numeric"], np.ones_like(g["custom"]), **NUMERIC)
    x = _value(res, "x")
    np.testing.assert_allclose(_grads(res, "x")[0]["custom"], 2 + 8 * x, **F32)


@pytest.mark.parametrize("fw,frozen", [("torch", "frozen"), ("tf", "fixed.s")])
def test_frozen_parameters_and_buffers_keep_their_values(engine, tmp_path, fw, frozen):
    res = run(engine, FILES[fw], "FrozenScale", fw)
    t = res.tensor(frozen)
    assert t.frozen and t.role == "param"
    assert float(t.value) == 5.0  # as the module built it, not seeded
    assert set(t.absent) == {"custom", "default", "numeric"} and not t.grads
    for why in t.absent.values():
        assert why.startswith(FROZEN) and "cuts the graph" not in why, why
    assert res.seeded_params == ("w",)
    x, out, w = _value(res, "x"), _value(res, "out"), float(_value(res, "w"))
    assert w != 1.0  # the trainable one was seeded
    noise = (out - 5.0 * w * x) / x  # the random buffer, as the module drew it
    np.testing.assert_allclose(noise, noise[0], rtol=1e-4, atol=1e-5)
    assert 0.0 <= noise[0] < 1.0 or fw == "tf"  # keras random_uniform: [-0.05, 0.05)
    gx, _ = _grads(res, "x")
    for mode, tol in (("custom", F32), ("default", F32), ("numeric", NUMERIC)):
        # numeric's float64 build ran the same buffer and frozen value as the modes
        np.testing.assert_allclose(gx[mode], 5.0 * w + noise[0], **tol)
    gw, _ = _grads(res, "w")
    np.testing.assert_allclose(gw["custom"], 5.0 * np.sum(x), **F32)
    # the JSON report says which were seeded and which were frozen
    path = tmp_path / "report.json"
    write_json(str(path), [res], RunSettings().as_dict())
    [op] = json.loads(path.read_text())["ops"]
    assert op["parameters"] == {"seeded": ["w"], "frozen": [frozen]}
    assert op["probe_skipped"] == ""
