"""Inputs real ops need (DESIGN.md "Op modules"): the inputs= dict with shape, range and dtype,
constants from annotations, and --range for a whole run."""

import numpy as np
from op_runs import run

from gradviz.compare import compare_result
from gradviz.model import RunRequest, RunSettings


def test_inputs_dict_gives_shape_and_range(engine, write_module):
    path = write_module(
        "hardsig_dict.py",
        """\
        import gradviz
        import torch


        @gradviz.op(inputs={"x": {"shape": (4, 50), "range": (-6.0, 6.0)}})
        class HardSigmoid(torch.nn.Module):
            def forward(self, x):
                return torch.nn.functional.hardsigmoid(x)
    """,
    )
    res = run(engine, path, "HardSigmoid", "torch")
    x = res.tensor("x")
    assert x.shape == (4, 50)
    v = x.value.astype(np.float64)
    assert v.min() < -3 and v.max() > 3 and np.abs(v).max() <= 6  # both kinks inside
    np.testing.assert_allclose(x.grads["custom"], (np.abs(v) < 3) / 6.0, rtol=1e-6)
    assert {t.name: t.verdict for t in compare_result(res).tensors}["x"] == "match"


def test_annotated_arguments_are_constants(engine, write_module):
    path = write_module(
        "annotated.py",
        """\
        import gradviz
        import torch


        @gradviz.op(consts={"min_val": -0.5})
        class ClipLow(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, min_val: float, scale: float = 2.0):
                ctx.save_for_backward(x)
                ctx.min_val = min_val
                return x.clamp(min=min_val) * scale

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 2.0 * (x > ctx.min_val), None, None
    """,
    )
    res = run(engine, path, "ClipLow", "torch")
    assert [t.name for t in res.tensors if t.role == "input"] == ["x"]
    x = res.tensor("x")
    np.testing.assert_array_equal(x.grads["custom"], 2.0 * (x.value > -0.5))


def test_range_setting_reaches_the_kinks(engine, write_module):
    path = write_module(
        "hardswish.py",
        """\
        import torch


        class HardSigmoid(torch.nn.Module):
            def forward(self, x):
                return torch.nn.functional.hardsigmoid(x)
    """,
    )
    wide = run(
        engine,
        path,
        "HardSigmoid",
        "torch",
        RunSettings(modes=("custom",), input_range=(-6.0, 6.0)),
    )
    v = wide.tensor("x").value
    assert v.min() < -3 and v.max() > 3 and np.abs(v).max() <= 6
    assert RunSettings(input_range=(-6.0, 6.0)).as_dict()["range"] == [-6.0, 6.0]


def test_range_on_the_command_line():
    import pytest

    from gradviz.cli.commands import UsageError, _run_parser, joined_range, settings_from

    def settings(*argv):
        return settings_from(_run_parser().parse_args(joined_range(["x.py", *argv])))

    assert settings("--range", "-6,6").input_range == (-6.0, 6.0)
    assert settings("--range=-1.5,2").input_range == (-1.5, 2.0)
    assert settings().input_range == (-3.0, 3.0)
    for bad in ("6,-6", "a,b", "1"):
        with pytest.raises(UsageError, match="range"):
            settings("--range", bad)


def test_annotated_constant_without_a_value_is_a_clear_error(engine, write_module):
    path = write_module(
        "needs_const.py",
        """\
        import torch


        class Scaled(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, min_val: float):
                return x * min_val

            @staticmethod
            def backward(ctx, g):
                return g, None
    """,
    )
    [res] = engine.run([RunRequest(str(path), "Scaled", "torch", RunSettings())])
    assert res.status == "error"
    assert "consts={'min_val': ...}" in res.error.message


def test_kept_input_draws_are_the_seeded_numbers_and_each_callers_own():
    from gradviz.backends import graphs

    fresh = graphs.rng_for(7, "input:x").uniform(-2.0, 2.0, size=(3, 50))
    first = graphs.input_values(7, "x", (3, 50), (-2.0, 2.0))
    first[:] = 99.0  # a caller writing into its array
    again = graphs.input_values(7, "x", (3, 50), (-2.0, 2.0))
    np.testing.assert_array_equal(again, fresh)
    assert again is not graphs.input_values(7, "x", (3, 50), (-2.0, 2.0))
    other = graphs.input_values(7, "x", (3, 50), (-3.0, 3.0))  # another range: another draw
    np.testing.assert_array_equal(other, graphs.rng_for(7, "input:x").uniform(-3, 3, (3, 50)))
    big = (graphs._DRAWN_BYTES // 8 + 1,)  # too big to keep: drawn each time
    graphs.input_values(1, "y", big)
    assert not [k for k in graphs._drawn if k[2] == big]
