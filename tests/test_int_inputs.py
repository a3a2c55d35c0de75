"""Integer and bool inputs (issue 10 item 4; DESIGN.md "Op modules", inputs= dtype): seeded alike in
torch and TF, passed as they are, never differentiated nor perturbed, recorded as values."""

from pathlib import Path

import numpy as np
import pytest
from op_runs import run, verdicts

from gradviz.compare import compare_result, parity, summary_counts
from gradviz.model import RunRequest, RunSettings
from gradviz.report import npz_arrays, read_npz, write_npz
from gradviz.seeds import upstream_values

ROWS, CLASSES = 20, 10  # 200 elements of x: the numeric reference takes every element
INPUTS = f"""{{"x": ({ROWS}, {CLASSES}), "target": {{"shape": ({ROWS},), "dtype": "int64",
                                                     "range": (0, {CLASSES - 1})}},
           "mask": {{"shape": ({ROWS},), "dtype": "bool"}}}}"""

TORCH_NLL = f"""\
import gradviz
import torch


@gradviz.op(name="masked_nll", inputs={INPUTS})
class MaskedNLL(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, target, mask):
        ctx.save_for_backward(target, mask)
        ctx.classes = x.shape[1]
        return -x.gather(1, target[:, None])[:, 0] * mask

    @staticmethod
    def backward(ctx, g):
        target, mask = ctx.saved_tensors
        onehot = torch.nn.functional.one_hot(target, ctx.classes).to(g.dtype)
        return -(g * mask)[:, None] * onehot, None, None
"""

TF_NLL = f"""\
import gradviz
import tensorflow as tf


@gradviz.op(name="masked_nll", inputs={INPUTS})
@tf.custom_gradient
def masked_nll(x, target, mask):
    m = tf.cast(mask, x.dtype)

    def grad(g):
        onehot = tf.one_hot(target, tf.shape(x)[1], dtype=g.dtype)
        return -(g * m)[:, None] * onehot, None, None
    return -tf.gather(x, target, batch_dims=1) * m, grad
"""

SETTINGS = RunSettings(upstream="random", seed=3)


def _expected_dx(target, mask):
    up = upstream_values(SETTINGS, "out", (ROWS,))
    onehot = np.eye(CLASSES)[target]
    return -(up * mask)[:, None] * onehot


@pytest.fixture(scope="module")
def nll_results(engine, tmp_path_factory):
    folder = tmp_path_factory.mktemp("int_inputs")
    (folder / "nll_torch.py").write_text(TORCH_NLL)
    (folder / "nll_tf.py").write_text(TF_NLL)
    return {
        "torch": run(engine, folder / "nll_torch.py", "MaskedNLL", "torch", SETTINGS),
        "tf": run(engine, folder / "nll_tf.py", "masked_nll", "tf", SETTINGS),
    }


@pytest.mark.parametrize("framework", ["torch", "tf"])
def test_masked_nll_gradients_are_exact(nll_results, framework):
    res = nll_results[framework]
    target, mask = res.tensor("target").value, res.tensor("mask").value
    assert target.dtype == np.int64 and mask.dtype == np.bool_
    assert target.min() >= 0 and target.max() <= CLASSES - 1 and len(set(target)) > 3
    assert 0 < mask.sum() < ROWS
    want = _expected_dx(target, mask)
    x = res.tensor("x")
    for mode in ("custom", "default"):
        np.testing.assert_allclose(x.grads[mode], want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(x.grads["numeric"], want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(
        res.tensor("out").value, -x.value[np.arange(ROWS), target] * mask, rtol=1e-6
    )
    assert verdicts(res) == {
        "x": "match",
        "target": "no-gradient",
        "mask": "no-gradient",
        "out": "match",
    }


@pytest.mark.parametrize("framework", ["torch", "tf"])
def test_integer_inputs_have_no_gradient_anywhere(nll_results, framework):
    res = nll_results[framework]
    for name, dtype in (("target", "int64"), ("mask", "bool")):
        t = res.tensor(name)
        assert t.grads == {} and t.absent == {} and t.dtype == dtype and t.numeric is None
    comp = {t.name: t for t in compare_result(res).tensors}
    assert comp["target"].explanation.startswith("integer input: no gradient")
    assert comp["mask"].explanation.startswith("bool input: no gradient")
    assert comp["target"].stats == {} and comp["target"].metrics == {}
    assert summary_counts([compare_result(res)])["no-gradient"] == 2


def test_values_identical_in_both_frameworks_and_parity(nll_results, tmp_path):
    a, b = nll_results["torch"], nll_results["tf"]
    for name in ("target", "mask"):
        np.testing.assert_array_equal(a.tensor(name).value, b.tensor(name).value)
    np.testing.assert_array_equal(a.tensor("x").value, b.tensor("x").value)
    rows = {(r.tensor, r.mode): r.verdict for r in parity([a, b])}
    for mode in ("value", "custom", "default", "numeric"):
        assert rows[("x", mode)] == "match"
    assert rows[("target", "value")] == rows[("mask", "value")] == "match"
    assert not [k for k in rows if k[0] in ("target", "mask") and k[1] != "value"]
    path = tmp_path / "nll.npz"
    write_npz(path, [a, b])
    back = read_npz(path)
    assert back.keys() == npz_arrays([a, b]).keys()
    for fw in ("torch", "tf"):
        for name, dtype in (("target", np.int64), ("mask", np.bool_)):
            assert back[f"{fw}/masked_nll/value/{name}"].dtype == dtype
            assert not [
                k
                for k in back
                if k.startswith(f"{fw}/masked_nll/")
                and k.endswith("/" + name)
                and "/value/" not in k
            ]
        assert f"{fw}/masked_nll/numeric/x" in back


def test_explicit_integer_and_bool_arrays_keep_their_dtype(engine, write_module):
    path = write_module(
        "explicit_idx.py",
        """\
        import gradviz
        import numpy as np
        import torch


        @gradviz.op(inputs={"x": (6,), "idx": np.array([5, 0, 2]), "keep": [True, False, True]})
        class Pick(torch.nn.Module):
            def forward(self, x, idx, keep):
                return x[idx] * keep
    """,
    )
    res = run(engine, path, "Pick", "torch", RunSettings(checks=("double_backward", "vmap")))
    assert [(c.name, c.status) for c in res.checks] == [
        ("double_backward", "skip"),
        ("vmap", "skip"),
    ]
    assert "int64 / bool inputs (idx, keep)" in res.checks[0].message
    assert res.tensor("idx").value.tolist() == [5, 0, 2]
    assert res.tensor("keep").value.tolist() == [True, False, True]
    want = np.zeros(6)
    want[5], want[2] = 1.0, 1.0
    np.testing.assert_array_equal(res.tensor("x").grads["custom"], want)
    np.testing.assert_allclose(res.tensor("x").grads["numeric"], want, atol=1e-8)


BAD_SPECS = [
    ('{"dtype": "int32", "range": (0, 3)}', "unknown dtype 'int32'"),
    ('{"dtype": "int64"}', "int64 input needs a range"),
    ('{"dtype": "int64", "range": (0.5, 3)}', "two integers"),
    ('{"dtype": "bool", "range": (0, 1)}', "bool input takes no range"),
]


@pytest.mark.parametrize("spec, message", BAD_SPECS)
def test_bad_dtype_specs_name_the_op_line(engine, write_module, spec, message):
    path = write_module(
        "bad_dtype.py",
        f"""\
        import gradviz
        import torch


        @gradviz.op(inputs={{"k": {spec}}})
        class Shift(torch.nn.Module):
            def forward(self, x, k):
                return x + k
    """,
    )
    [res] = engine.run([RunRequest(path, "Shift", "torch", RunSettings())])
    assert res.status == "error"
    assert message in res.error.message and "inputs['k']" in res.error.message
    assert res.error.where == f"{path}:6"


@pytest.mark.parametrize("graph", ["seed", "mlp", "stack"])
def test_graphs_that_feed_the_first_argument_refuse_an_integer_one(engine, write_module, graph):
    path = write_module(
        "int_first.py",
        """\
        import gradviz
        import torch


        @gradviz.op(inputs={"idx": {"dtype": "int64", "range": (0, 3)}})
        class Lookup(torch.nn.Module):
            def forward(self, idx, x):
                return x * idx
    """,
    )
    [res] = engine.run([RunRequest(path, "Lookup", "torch", RunSettings(graph=graph))])
    assert res.status == "error"
    assert f"the {graph} graph feeds its own float tensor" in res.error.message
    assert "'idx' has dtype int64" in res.error.message


@pytest.mark.parametrize("graph", ["mlp", "stack"])
def test_integer_inputs_pass_through_the_other_graphs(engine, write_module, graph):
    path = write_module(
        "gate.py",
        """\
        import gradviz
        import torch


        @gradviz.op(inputs={"gate": {"shape": (200,), "dtype": "bool"}})
        class Gate(torch.nn.Module):
            def forward(self, x, gate):
                return x * gate
    """,
    )
    res = run(engine, path, "Gate", "torch", RunSettings(graph=graph, depth=2))
    gate = res.tensor("gate").value
    v = verdicts(res)
    assert v.pop("gate") == "no-gradient"
    assert set(v.values()) == {"match"}
    h = "h" if graph == "mlp" else "h2"
    out = "out" if graph == "mlp" else "o2"
    np.testing.assert_allclose(
        res.tensor(h).grads["custom"], res.tensor(out).grads["custom"] * gate, rtol=1e-6
    )


EMBED_INPUTS = '{"x": (30,), "idx": {"shape": (30,), "dtype": "int64", "range": (0, 4)}}'
EMBED_TORCH = f"""\
import gradviz
import torch


@gradviz.op(name="embed_scale", inputs={EMBED_INPUTS})
class EmbedScale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.table = torch.nn.Parameter(torch.ones(5))

    def forward(self, x, idx):
        return x * self.table[idx]
"""
EMBED_TF = f"""\
import gradviz
import keras
import tensorflow as tf


@gradviz.op(name="embed_scale", inputs={EMBED_INPUTS})
class EmbedScale(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.table = self.add_weight(shape=(5,), initializer="ones")

    def call(self, x, idx):
        return x * tf.gather(self.table, idx)
"""


def test_layer_parameter_gathered_by_an_integer_input(engine, write_module):
    """A Module / Keras Layer whose weight is indexed by an int64 input: the weight's gradient
    is a scatter-add over the indices, the same in both frameworks (TF's IndexedSlices too)."""
    results = {
        "torch": run(engine, write_module("embed_torch.py", EMBED_TORCH), "EmbedScale", "torch"),
        "tf": run(engine, write_module("embed_tf.py", EMBED_TF), "EmbedScale", "tf"),
    }
    for fw, res in results.items():
        idx, x = res.tensor("idx").value, res.tensor("x").value.astype(np.float64)
        table = res.tensor("table").value.astype(np.float64)
        assert idx.dtype == np.int64 and set(idx) <= set(range(5))
        want_table = np.bincount(idx, weights=x, minlength=5)
        for mode in ("custom", "default", "numeric"):
            np.testing.assert_allclose(
                res.tensor("x").grads[mode], table[idx], rtol=1e-5, err_msg=f"{fw} {mode}"
            )
            np.testing.assert_allclose(
                res.tensor("table").grads[mode],
                want_table,
                rtol=1e-5,
                atol=1e-6,
                err_msg=f"{fw} {mode}",
            )
        assert verdicts(res) == {
            "x": "match",
            "idx": "no-gradient",
            "table": "match",
            "out": "match",
        }, fw
    rows = {(r.tensor, r.mode): r.verdict for r in parity(results.values())}
    assert rows[("table", "custom")] == rows[("x", "custom")] == rows[("idx", "value")] == "match"


@pytest.mark.parametrize("framework", ["torch", "tf"])
def test_no_gradient_inputs_never_hide_the_ops_worst_verdict(nll_results, framework):
    """The op tree shows an op's worst verdict: an int input's no-gradient says nothing about
    the op, so a matching op reads match and a differing one differs (not no-gradient)."""
    from dataclasses import replace

    from gradviz.app.analysis import analyze
    from gradviz.app.state import AppState
    from gradviz.model import FileCatalog

    res = nll_results[framework]
    key = (framework, res.op.file, res.op.qualname)
    state = AppState([res.op.file])
    state.catalogs_arrived([FileCatalog(res.op.file, framework, (res.op,))], [res.op.file])
    state.run_started([res.request])
    state.arrived(analyze(res))
    assert state.op_mark(key) == "match"
    x = res.tensor("x")
    wrong = replace(x, grads={**x.grads, "custom": x.grads["custom"] * 2})
    state.arrived(
        analyze(replace(res, tensors=tuple(wrong if t.name == "x" else t for t in res.tensors)))
    )
    assert state.op_mark(key) == "differs"


def test_a_jax_integer_input_has_no_gradient_as_torch_and_tf_do(engine):
    """JAX without x64 runs the int64 target as int32: it read `unchecked` ("neither custom
    nor default was run") where torch's and TF's twins read no-gradient; any integer dtype is
    an input no mode differentiates."""
    path = Path(__file__).resolve().parent / "corpus" / "jax" / "int_inputs_jax.py"
    res = run(engine, path, "masked_nll", "jax", SETTINGS)
    target, mask = res.tensor("target").value, res.tensor("mask").value
    assert res.tensor("target").dtype == "int32" and mask.dtype == np.bool_
    np.testing.assert_allclose(
        res.tensor("x").grads["custom"], _expected_dx(target, mask), rtol=1e-6, atol=1e-7
    )
    assert verdicts(res) == {
        "x": "match",
        "target": "no-gradient",
        "mask": "no-gradient",
        "out": "match",
    }
    comp = {t.name: t for t in compare_result(res).tensors}
    assert comp["target"].explanation.startswith("integer input: no gradient (int32 inputs")
    assert summary_counts([compare_result(res)])["no-gradient"] == 2
