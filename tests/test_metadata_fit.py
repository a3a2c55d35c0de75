"""`@gradviz.op` metadata that does not fit the op's forward is an error at the line that gives it,
listing what the forward has; metadata that fits is used, also where the forward takes it by
keyword only or through **kwargs, and a Keras call's `training` (issue 24, item 6)."""

import textwrap

import numpy as np
import pytest
from op_runs import run

from gradviz.model import RunRequest, RunSettings

CUSTOM = RunSettings(modes=("custom",))

TORCH_OPS = """\
    import torch

    import gradviz


    @gradviz.op(consts={"bitz": 4})  # QUANT META
    class Quant(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, bits: int = 8):
            return torch.round(x * bits) / bits

        @staticmethod
        def backward(ctx, g):
            return g, None


    @gradviz.op(inputs={"y": (3,)})  # SCALE META
    class Scale(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(3))

        def forward(self, x):
            return x * self.w


    @gradviz.op(inputs={"w": [2.0, 2.0, 2.0], "x": (3,)})
    class ScaleFits(Scale):
        pass


    class Times(torch.autograd.Function):
        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None


    gradviz.op(consts={"ctx": 2.0})(Times)  # TIMES META


    @gradviz.op(consts={"k": 3.0})
    class KeywordOnly(torch.nn.Module):
        def forward(self, x, *, k):
            return Times.apply(x, k)


    @gradviz.op(consts={"k": 5.0}, inputs={"anything": (4,)})
    class TakesKwargs(torch.nn.Module):
        def forward(self, x, **kw):
            return Times.apply(x, kw["k"])
"""

TF_OPS = """\
    import tensorflow as tf

    import gradviz


    @gradviz.op(inputs={"xx": (5,)})  # SQ META
    @tf.custom_gradient
    def sq(x):
        def grad(dy):
            return dy * 2 * x
        return x * x, grad


    @gradviz.op(consts={"training": True})
    class Doubles(tf.keras.layers.Layer):
        def call(self, inputs, training=None):
            return inputs * (2.0 if training else 1.0)


    @gradviz.op(consts={"trainng": True})  # TYPO META
    class DoublesTypo(Doubles):
        pass


    @gradviz.op(inputs={"kernel": [3.0, 3.0], "inputs": (2,)})
    class Lin(tf.keras.layers.Layer):
        def build(self, shape):
            self.kernel = self.add_weight(name="kernel", shape=(shape[-1],), initializer="ones")

        def call(self, inputs):
            return inputs * self.kernel


    @gradviz.op(inputs={"kernl": [3.0, 3.0], "inputs": (2,)})  # LIN META
    class LinTypo(Lin):
        pass
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("meta")
    out = {}
    for name, src in (("torch_meta.py", TORCH_OPS), ("tf_meta.py", TF_OPS)):
        (root / name).write_text(textwrap.dedent(src))
        out[name] = str(root / name)
    return out


def _line(path: str, marker: str) -> str:
    with open(path) as fh:
        return f"{path}:{next(i for i, ln in enumerate(fh, 1) if marker in ln)}"


def _error(engine, path, qualname, fw):
    [res] = engine.run([RunRequest(path, qualname, fw, RunSettings())])
    assert res.status == "error" and res.error.type == "MetadataError", res.error
    return res.error


def test_torch_metadata_naming_no_argument_stops_at_its_line(engine, files):
    path = files["torch_meta.py"]
    err = _error(engine, path, "Quant", "torch")
    assert err.where == _line(path, "# QUANT META")
    assert "consts= names 'bitz'" in err.message and "its forward takes x, bits)" in err.message
    # a Function's ctx is no argument, in the setup_context style neither is anything else
    err = _error(engine, path, "Times", "torch")
    assert err.where == _line(path, "# TIMES META")  # the file's own gradviz.op(...)(Times)
    assert "consts= names 'ctx'" in err.message and "its forward takes x, k)" in err.message
    # a Module: inputs= may name a parameter, so the message lists those too
    err = _error(engine, path, "Scale", "torch")
    assert err.where == _line(path, "# SCALE META")
    assert "inputs= names 'y'" in err.message
    assert "its forward takes x, and its parameters are w" in err.message


def test_torch_load_lists_what_it_can_tell_without_running(engine, files):
    [cat] = [c for c in engine.load([files["torch_meta.py"]]) if c.framework == "torch"]
    assert cat.error is None
    unfit = sorted(n.split(" ")[0] for n in cat.notes)
    assert unfit == ["Quant", "Times"]  # Scale's 'y' might be a parameter: the run decides
    assert len(cat.ops) == 6  # every op is still listed


def test_torch_metadata_that_fits_is_used(engine, files):
    path = files["torch_meta.py"]
    res = run(engine, path, "ScaleFits", "torch", CUSTOM)
    np.testing.assert_array_equal(res.tensor("x").grads["custom"], [2.0, 2.0, 2.0])
    res = run(engine, path, "KeywordOnly", "torch", CUSTOM)  # k=3.0 passed by keyword
    np.testing.assert_array_equal(res.tensor("x").grads["custom"], np.full(200, 3.0))
    res = run(engine, path, "TakesKwargs", "torch", CUSTOM)  # through **kw: any name fits
    np.testing.assert_array_equal(res.tensor("x").grads["custom"], np.full(200, 5.0))


def test_tf_metadata_naming_no_argument_stops_at_its_line(engine, files):
    path = files["tf_meta.py"]
    err = _error(engine, path, "sq", "tf")
    assert err.where == _line(path, "# SQ META")
    assert "inputs= names 'xx'" in err.message and "its forward takes x)" in err.message
    err = _error(engine, path, "DoublesTypo", "tf")
    assert err.where == _line(path, "# TYPO META")
    assert "consts= names 'trainng'" in err.message
    assert "its forward takes inputs, training)" in err.message
    err = _error(engine, path, "LinTypo", "tf")
    assert err.where == _line(path, "# LIN META")
    assert "its forward takes inputs, and its parameters are kernel" in err.message
    [cat] = [c for c in engine.load([path]) if c.framework == "tf"]
    assert sorted(n.split(" ")[0] for n in cat.notes) == ["DoublesTypo", "sq"]


def test_tf_metadata_that_fits_is_used(engine, files):
    path = files["tf_meta.py"]
    res = run(engine, path, "Doubles", "tf", CUSTOM)  # training=True reaches call
    np.testing.assert_array_equal(res.tensor("inputs").grads["custom"], np.full(200, 2.0))
    res = run(engine, path, "Lin", "tf", CUSTOM)
    np.testing.assert_array_equal(res.tensor("inputs").grads["custom"], [3.0, 3.0])


def test_reference_that_cannot_take_the_arguments_is_an_error(engine, tmp_path):
    path = tmp_path / "ref_meta.py"
    path.write_text(
        textwrap.dedent("""\
        import torch

        import gradviz


        def ref(x, y):
            return x * 2


        @gradviz.op(reference=ref)  # REF META
        class Twice(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        """)
    )
    err = _error(engine, str(path), "Twice", "torch")
    assert err.where == _line(str(path), "# REF META")
    assert "reference=ref" in err.message and "missing a required argument: 'y'" in err.message
    bad = tmp_path / "ref_not_callable.py"
    bad.write_text(
        "import torch\nimport gradviz\n\n\n@gradviz.op(reference=3)\n"
        "class T(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
    )
    [cat] = [c for c in engine.load([str(bad)]) if c.framework == "torch"]
    assert cat.error.type == "TypeError" and cat.error.where == f"{bad}:5"
    assert "reference=...) takes a function, not int" in cat.error.message
