"""Reproduction scripts of every graph (seed, mlp, stack), of ops whose default is their
reference=, and of tensors big enough for the numeric reference's random directions (issue 30):
each op is run by the session's workers, its script written and run in a fresh interpreter where
gradviz cannot be imported, and every number it prints equals the run's, to the table's digit."""

from pathlib import Path

import pytest
from repro_scripts import printed_rows, reported, run_script, same_number

from gradviz.compare import compare_result
from gradviz.model import RunRequest, RunSettings
from gradviz.repro import write_repro

CORPUS = Path(__file__).resolve().parent / "corpus" / "repro"
TORCH, TF = str(CORPUS / "ops_torch.py"), str(CORPUS / "ops_tf.py")


def _script_prints_the_runs_numbers(engine, tmp_path, file, qualname, framework, **settings):
    """Run the op, write its script, run that without gradviz; returns (result, printed)."""
    result = engine.run_one(
        RunRequest(file, qualname, framework, RunSettings(upstream="random", **settings))
    )
    assert result.status == "ok", result.error
    comparison = compare_result(result)
    written, left = write_repro(str(tmp_path / "repro"), [result], [comparison])
    assert left == [] and written, left
    printed = run_script(Path(written[-1]))
    rows = printed_rows(printed)
    tensors = [t for t in comparison.tensors if t.verdict != "no-gradient"]
    assert set(rows) == {t.name for t in tensors}, printed
    for t in tensors:
        want = (reported(t.metrics, "custom~default"), reported(t.metrics, "custom~numeric"))
        assert rows[t.name][0] == want[0] and same_number(rows[t.name][1], want[1]), (
            t.name,
            want,
            printed,
        )
    return result, comparison, printed


@pytest.mark.parametrize("graph", ["seed", "mlp", "stack"])
@pytest.mark.parametrize(
    "qualname,framework",
    [("HalfTanh", "torch"), ("Scaled", "torch"), ("half_tanh", "tf"), ("HalfScale", "tf")],
)
def test_every_graph(engine, tmp_path, graph, qualname, framework):
    file = TORCH if framework == "torch" else TF
    result, comparison, printed = _script_prints_the_runs_numbers(
        engine, tmp_path, file, qualname, framework, graph=graph, shape=(6,), depth=3
    )
    names = {t.name for t in comparison.tensors}
    assert {
        "seed": {"a", "b", "c"},
        "mlp": {"x", "w1", "h", "out", "y", "w2"},
        "stack": {"x", "w1", "h1", "o3", "b3"},
    }[graph] <= names, names
    if qualname not in ("Scaled", "HalfScale"):  # half the true gradient: shown by the script
        verdicts = {t.name: t.verdict for t in comparison.tensors}
        assert verdicts[{"seed": "a", "mlp": "x", "stack": "x"}[graph]] == "differs"
    assert f"{graph} graph" in printed


@pytest.mark.parametrize(
    "qualname,framework",
    [
        ("CubeWithReference", "torch"),
        ("Scaled", "torch"),
        ("cube_with_reference", "tf"),
        ("ScaledLayer", "tf"),
    ],
)
def test_a_reference_is_the_default(engine, tmp_path, qualname, framework):
    """The default mode runs the op's reference= (a Module's takes the module first), which here
    is not the forward: custom and default differ, and the script prints the same difference."""
    result, comparison, printed = _script_prints_the_runs_numbers(
        engine, tmp_path, TORCH if framework == "torch" else TF, qualname, framework, shape=(6,)
    )
    assert result.has_reference
    first = next(t for t in comparison.tensors if t.name == "x")
    assert first.metrics["custom~default"].max_abs_err > 0.1
    assert (
        "your reference= function"
        in (tmp_path / "repro" / f"repro_{result.name}_{framework}.py").read_text()
    )


def test_a_nested_custom_gradient_is_removed_from_the_default(engine, tmp_path):
    """TF's default removes every user custom_gradient the op calls, as gradviz does: here the
    helper's wrong gradient, so custom (right) and default (true) agree."""
    _, comparison, _ = _script_prints_the_runs_numbers(
        engine, tmp_path, TF, "through_a_helper", "tf", shape=(6,)
    )
    assert {t.name: t.verdict for t in comparison.tensors}["x"] == "match"


@pytest.mark.parametrize("qualname,framework", [("HalfTanh", "torch"), ("half_tanh", "tf")])
def test_big_tensors_along_random_directions(engine, tmp_path, qualname, framework):
    """Above 256 elements the numeric reference is taken along 16 seeded directions: the
    script draws the same ones (op graph's x of 300; the mlp's 20x20 weights)."""
    file = TORCH if framework == "torch" else TF
    for graph, shape in (("op", (300,)), ("mlp", (20,))):
        result, _, _ = _script_prints_the_runs_numbers(
            engine, tmp_path / graph, file, qualname, framework, graph=graph, shape=shape
        )
        big = "x" if graph == "op" else "w1"
        t = next(t for t in result.tensors if t.name == big)
        assert t.numeric.method == "projection"


def test_a_keras_layer(engine, tmp_path):
    """A Layer's script builds it as gradviz does (its weight seeded by attribute path) and
    removes the custom_gradient its call decorates anew for the default: the weight's half
    gradient shows against both default and numeric."""
    _, comparison, _ = _script_prints_the_runs_numbers(
        engine, tmp_path, TF, "HalfScale", "tf", shape=(6,)
    )
    scale = next(t for t in comparison.tensors if t.name == "scale")
    assert scale.verdict == "differs"
    assert scale.metrics["custom~default"].max_abs_err > 0.1


def test_a_layer_calling_a_tf_function(engine, tmp_path):
    """A tf.function keeps what it traced: the script's default runs it eagerly, so the
    helper's custom gradient is gone there too (gradviz traces a twin)."""
    _, comparison, _ = _script_prints_the_runs_numbers(
        engine, tmp_path, TF, "TracedHelper", "tf", shape=(6,)
    )
    x = next(t for t in comparison.tensors if t.name == "x")
    assert x.verdict == "differs" and x.metrics["custom~default"].max_abs_err > 0.1


def test_a_torch_library_custom_op(engine, tmp_path, write_module):
    """custom calls the op (its registered backward, here twice the true one); default
    differentiates its Python body, in the script as in gradviz."""
    import uuid

    path = write_module(
        "lib_ops.py",
        f"""
        import torch

        @torch.library.custom_op("gv{uuid.uuid4().hex[:8]}::scaled_sin", mutates_args=())
        def scaled_sin(x: torch.Tensor) -> torch.Tensor:
            return torch.sin(x)

        def _setup(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        def _backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * torch.cos(x) * 2.0

        scaled_sin.register_autograd(_backward, setup_context=_setup)
    """,
    )
    _, comparison, _ = _script_prints_the_runs_numbers(
        engine, tmp_path, path, "scaled_sin", "torch", shape=(6,)
    )
    x = next(t for t in comparison.tensors if t.name == "x")
    assert x.verdict == "differs" and x.metrics["custom~default"].max_abs_err > 0.1


def test_an_int_input(engine, tmp_path, write_module):
    """An int64 input has no gradient and no numeric reference, but the float64 loss needs it
    (the script's numeric part once had none of it: KeyError)."""
    path = write_module(
        "int_ops.py",
        """
        import torch
        import gradviz

        @gradviz.op(inputs={"k": {"dtype": "int64", "range": (1, 3)}})
        class TimesK(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.save_for_backward(k)
                return x * k

            @staticmethod
            def backward(ctx, g):
                (k,) = ctx.saved_tensors
                return g * k, None
    """,
    )
    result, comparison, _ = _script_prints_the_runs_numbers(
        engine, tmp_path, path, "TimesK", "torch", shape=(6,)
    )
    assert result.tensor("k").value.dtype.kind == "i"
    assert {t.name: t.verdict for t in comparison.tensors}["x"] == "match"


@pytest.mark.parametrize("modes", [("custom", "numeric"), ("custom", "default")])
def test_a_mode_the_run_left_out_prints_none(engine, tmp_path, modes):
    """The script takes the run's modes: where the report has no number, it prints none."""
    _, comparison, printed = _script_prints_the_runs_numbers(
        engine, tmp_path, TORCH, "HalfTanh", "torch", shape=(6,), modes=modes
    )
    left_out = ({"custom", "default", "numeric"} - set(modes)).pop()
    column = 0 if left_out == "default" else 1
    assert printed_rows(printed)["x"][column] == "-"
    assert printed_rows(printed)["x"][1 - column] not in ("-", "0")  # half the truth
    if left_out == "numeric":
        assert "no numeric reference of x: the run took no numeric reference" in printed
