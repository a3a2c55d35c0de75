"""checks/float64_witness.py on its own: when a float32 comparison of two gradient evaluations is
asked again in float64, and what each answer makes of the float32 failure. The real runs are in
tests/test_checks_tf.py and test_checks_torch.py (square_cancel, SquareCancelFolded...)."""

from types import SimpleNamespace

from gradviz.backends.checks.float64_witness import unless_rounding
from gradviz.model import CheckResult

F32 = CheckResult(
    "compiled",
    "fail",
    "tf.function gives another gradient for x than eager: max "
    "abs difference 0.00779 at 5 of 200 elements (rtol 0.002, atol 0.001)",
    "ops.py:7",
    "the fix",
    "differs",
)


def ctx(dtype="float32", unfit=""):
    return SimpleNamespace(settings=SimpleNamespace(dtype=dtype), float64_unfit=unfit)


def answers(**by_dtype):
    asked = []

    def run(dtype):
        asked.append(dtype)
        got = by_dtype[dtype]
        if isinstance(got, Exception):
            raise got
        return got

    return run, asked


def test_a_difference_float64_does_not_show_is_rounding_a_pass_with_the_float32_numbers():
    run, asked = answers(
        float32=F32,
        float64=CheckResult("compiled", "pass", "tf.function gives the eager custom gradient"),
    )
    got = unless_rounding(ctx(), run)
    assert asked == ["float32", "float64"]
    assert (got.name, got.status, got.where, got.fix, got.kind) == ("compiled", "pass", "", "", "")
    assert got.message == (
        "in float64 tf.function gives the eager custom gradient; in float32 tf.function gives "
        "another gradient for x than eager: max abs difference 0.00779 at 5 of 200 elements "
        "(rtol 0.002, atol 0.001), a difference float64 does not show: float32 rounding of the "
        "op's own arithmetic, not a fault (the precision check measures that rounding against "
        "numeric)"
    )


def test_a_difference_that_stays_in_float64_fails_with_both_numbers():
    again = CheckResult(
        "compiled",
        "fail",
        "tf.function gives another gradient for x than eager: "
        "max abs difference 0.0595 at 200 of 200 elements (rtol 1e-05, atol "
        "1e-06)",
        "ops.py:7",
        "the fix",
        "differs",
    )
    got = unless_rounding(ctx(), answers(float32=F32, float64=again)[0])
    assert (got.status, got.where, got.fix, got.kind) == ("fail", "ops.py:7", "the fix", "differs")
    assert got.message == F32.message + (
        "; in float64 too: max abs difference 0.0595 at 200 of 200 elements (rtol 1e-05, atol "
        "1e-06), so it is not float32 rounding"
    )
    # another failure in float64 (another tensor, another sample) is quoted whole
    other = CheckResult(
        "compiled",
        "fail",
        "under torch.compile the gradient of w is missing, unlike eager",
        "ops.py:7",
        "the fix",
        "differs",
    )
    got = unless_rounding(ctx(), answers(float32=F32, float64=other)[0])
    assert got.message.endswith(
        "; in float64 too: under torch.compile the gradient of w is "
        "missing, unlike eager, so it is not float32 rounding"
    )


def test_no_witness_leaves_the_float32_failure_as_it_is():
    raised = CheckResult("compiled", "fail", "raised", "ops.py:7", "fix", "raised")
    passed = CheckResult("compiled", "pass", "gives the eager custom gradient")
    cases = [
        (ctx("float64"), {"float64": F32}, ["float64"]),  # no precision above it
        (ctx(unfit="another function in float64"), {"float32": F32}, ["float32"]),
        (ctx(), {"float32": raised}, ["float32"]),  # not a difference
        (ctx(), {"float32": passed}, ["float32"]),
        (ctx(), {"float32": F32, "float64": TypeError("float64 refused")}, ["float32", "float64"]),
        (
            ctx(),
            {"float32": F32, "float64": CheckResult("compiled", "skip", "no")},
            ["float32", "float64"],
        ),
    ]
    for c, by_dtype, expect_asked in cases:
        run, asked = answers(**by_dtype)
        got = unless_rounding(c, run)
        assert asked == expect_asked
        assert got == by_dtype[expect_asked[0]]
