"""A package of op files for the tests of ops inside packages (by path, by dotted module name,
in the window): `write_package(where)` writes it and returns its folder."""

import textwrap
from pathlib import Path

# qpkg/layers/quant_*.py import `.helpers`, which imports `..util`: two levels of relative
# imports. A straight-through round: custom gradient = scale() * upstream; inputs in (0.6, 1.4)
# all round to 1, so the true (default, numeric) gradient is exactly 0 there.
PACKAGE = {
    "__init__.py": "",
    "util.py": """\
        def scale():
            return 1.0
        """,
    "layers/__init__.py": """\
        from .quant_torch import RoundSTE  # the package imports its op module first
        """,
    "layers/helpers.py": """\
        from ..util import scale


        def passthrough(dy):
            return dy * scale()
        """,
    "layers/quant_torch.py": """\
        import torch

        import gradviz
        from .helpers import passthrough


        @gradviz.op("pkg_round", inputs={"x": {"shape": (200,), "range": (0.6, 1.4)}})
        class RoundSTE(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return torch.round(x)

            @staticmethod
            def backward(ctx, dy):
                return passthrough(dy)
        """,
    "layers/quant_tf.py": """\
        import tensorflow as tf

        import gradviz
        from . import helpers
        from ..util import scale


        @gradviz.op("pkg_round", inputs={"x": {"shape": (200,), "range": (0.6, 1.4)}})
        @tf.custom_gradient
        def round_ste(x):
            def grad(dy):
                return helpers.passthrough(dy) * (scale() / scale())
            return tf.round(x), grad
        """,
}


def write_package(where: Path, name: str = "qpkg", scale: float = 1.0) -> Path:
    for rel, src in PACKAGE.items():
        path = where / name / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(src).replace("return 1.0", f"return {scale!r}"))
    return where / name
