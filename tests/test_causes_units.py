"""The cause of a wrong gradient on arrays (diagnostics/cause_arrays.py, compare/rounding.py,
cause_reference.py) and on hand-built results: each claim holds element for element, and none
is made of a right gradient or of numbers too plain to tell."""

import textwrap

import numpy as np

from gradviz.compare.metrics import tolerances
from gradviz.compare.numbers import PairMetrics
from gradviz.compare.rounding import exact_in, looks_rounded, narrowest
from gradviz.diagnostics import cause_arrays as A
from gradviz.diagnostics import diagnose
from gradviz.diagnostics.cause_reference import reference_of
from gradviz.model import OpInfo, RunRequest, RunResult, TensorResult

TOL = tolerances("float32")
RNG = np.random.default_rng(5)


def test_factor_is_k_only_when_every_element_says_so():
    d = RNG.standard_normal(50)
    assert A.factor(-d, d, TOL) == -1.0
    assert abs(A.factor(-0.3 * d, d, TOL) + 0.3) < 1e-9
    assert A.factor(d, d, TOL) is None  # k = 1: right
    wrong = -d
    wrong[7] = d[7]
    assert A.factor(wrong, d, TOL) is None  # one element breaks it
    assert A.factor(-d[:10], d, TOL) is None  # sizes differ


def test_transposed_square_reshaped_and_permuted():
    t = RNG.standard_normal((4, 4))
    assert A.permuted(t.T, t, TOL) == (1, 0)
    assert A.permuted(t, t, TOL) is None  # right: nothing to say
    assert A.permuted(t.T + 0.5, t, TOL) is None
    r = RNG.standard_normal((4, 5))
    assert A.permuted(r.T.reshape(4, 5), r, TOL) == (1, 0)  # reshaped back: same numbers
    assert A.permuted(r.T, r, TOL) == (1, 0)  # TF's (5, 4), GV102 beside it
    cube = RNG.standard_normal((3, 3, 3))
    p = A.permuted(cube.transpose(1, 2, 0), cube, TOL)
    assert p is not None and np.array_equal(cube.transpose(p), cube.transpose(1, 2, 0))


def test_no_reordering_is_seen_in_numbers_that_do_not_vary():
    flat = np.full((3, 3), 2.0)
    assert A.permuted(flat.T * 1.0, flat, TOL) is None
    one_row = RNG.standard_normal((1, 6))
    assert A.permuted(one_row.T, one_row, TOL) is None  # the same flat order: right


def test_belongs_to_another_input_needs_the_same_shape():
    a, b = RNG.standard_normal(20), RNG.standard_normal(20)
    assert A.belongs_to(b, a, b, TOL)
    assert not A.belongs_to(a, a, b, TOL)  # its own
    assert not A.belongs_to(b, a, a.copy(), TOL)  # both truths equal: no telling
    big = RNG.standard_normal((4, 5))
    assert not A.belongs_to(big, RNG.standard_normal(5), big, TOL)


def test_reduced_over_the_wrong_axes_or_not_at_all():
    full = RNG.standard_normal((3, 4))
    truth = full.sum(0)  # b (4,) broadcast along axis 0
    assert A.reduced_wrong(full.sum(1), truth, full, TOL) == ((1,), (0,))
    assert A.reduced_wrong(full, truth, full, TOL) == ((), (0,))
    assert A.reduced_wrong(truth, truth, full, TOL) is None  # right
    assert A.reduced_wrong(full.sum(1), truth, RNG.standard_normal((3, 4)), TOL) is None
    ones = np.ones((4, 4))  # upstream ones, square: the two
    assert A.reduced_wrong(ones.sum(1), ones.sum(0), ones, TOL) is None  # sums are equal


def test_rounding_formats_read_off_the_bits():
    x = RNG.standard_normal(64).astype(np.float32).astype(np.float64)
    assert narrowest(x) is None and narrowest(x, "float64") == "float32"
    bf = (x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
    assert narrowest(bf) == "bfloat16" and exact_in(bf, "bfloat16").all()
    assert narrowest(x.astype(np.float16)) == "float16"
    assert looks_rounded(bf, x, "bfloat16")
    assert not looks_rounded(np.full(64, 3.0), x + 1e-7, "bfloat16")  # plain numbers
    assert not looks_rounded(bf, bf, "bfloat16")  # the truth itself fits


def _tensor(name, grads, shape=(20,), value=None):
    value = RNG.standard_normal(shape).astype(np.float32) if value is None else value
    return TensorResult(name, "input", shape, "float32", value, grads=grads)


def test_reference_is_numeric_or_default_and_says_which():
    d = RNG.standard_normal(20).astype(np.float32)
    n = d.astype(np.float64) + 1e-6
    both = reference_of(
        _tensor("x", {"default": d, "numeric": n}), {"default~numeric": PairMetrics(20, 0, True)}
    )
    assert both.mode == "default+numeric" and np.array_equal(both.values, d)
    assert reference_of(_tensor("x", {"default": d, "numeric": n}), {}).mode == "numeric"
    only = reference_of(_tensor("x", {"default": d}))
    assert only.mode == "default" and "there is no numeric one" in only.words()
    assert reference_of(_tensor("x", {"custom": d})) is None


SRC = """\
    import torch

    class {name}(torch.autograd.Function):
        \"\"\"{doc}\"\"\"
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return -g
    """


def _sign_findings(tmp_path, name, doc=""):
    p = tmp_path / f"{name}.py"
    p.write_text(textwrap.dedent(SRC.format(name=name, doc=doc or "An op.")))
    d = RNG.standard_normal(30).astype(np.float32)
    t = _tensor("x", {"custom": -d, "default": d, "numeric": d.astype(np.float64)}, (30,))
    op = OpInfo(name, "torch", "function", name, str(p), 3, ("x",))
    return diagnose(RunResult(request=RunRequest(str(p), name, "torch"), op=op, tensors=(t,)))


def test_negated_gradient_is_intended_or_a_bug_never_both(tmp_path):
    found = _sign_findings(tmp_path, "Negate")
    assert [f.code for f in found] == ["GV305-grad-sign-flipped"]
    assert found[0].severity == "error" and found[0].where.endswith(":11")
    for name, doc in (("GradReverse", ""), ("RevGrad", ""), ("Head", "Gradient reversal layer.")):
        found = _sign_findings(tmp_path, name, doc)
        assert [f.code for f in found] == ["GV302-grad-surrogate"], (name, found)
        assert found[0].severity == "info" and "intended gradient reversal" in found[0].message
