"""The verdicts as one vocabulary (issue 27, item 1): one order, one notion of passing, one glyph
and one label per verdict, read by compare, the op tree, the terminal and gradviz.testing."""

import json

import numpy as np

from gradviz.compare import VERDICTS, verdict
from gradviz.compare.verdicts import PASSING, compare_tensor
from gradviz.model import TensorResult
from gradviz.qt.theme import OP_MARKS
from gradviz.verdict import NAMES, Verdict, worst


def test_one_order_least_severe_first_and_worst_by_it():
    assert (
        VERDICTS
        == NAMES
        == (
            "no-gradient",
            "match",
            "surrogate",
            "unchecked",
            "differs",
            "non-finite",
            "broken",
            "error",
        )
    )
    assert [Verdict(v).rank for v in VERDICTS] == list(range(len(VERDICTS)))
    assert worst(["match", "non-finite", "differs"]) is Verdict.NON_FINITE
    assert worst(["no-gradient", "match"]) is Verdict.MATCH  # no-gradient hides nothing
    assert worst([]) is None


def test_passing_glyphs_and_labels():
    assert PASSING == ("match", "surrogate")
    assert [v for v in Verdict if v.passes] == [Verdict.MATCH, Verdict.SURROGATE]
    marks = {v: OP_MARKS[v][0] for v in Verdict if v.glyph}
    assert marks == {
        "match": "✓",
        "surrogate": "≈",
        "unchecked": "?",
        "differs": "≠",
        "non-finite": "∞",
        "broken": "⚠",
        "error": "✗",
    }
    assert [
        Verdict(v).label for v in ("differs", "non-finite", "error", "no-gradient", "match")
    ] == ["DIFFERS", "NON-FINITE", "ERROR", "no gradient", "match"]


def test_a_comparison_carries_a_verdict_that_reads_as_its_name():
    t = TensorResult(
        "x",
        "input",
        (3,),
        "float32",
        np.ones(3),
        {"custom": np.ones(3, np.float32), "numeric": np.ones(3)},
    )
    tc = compare_tensor(t)
    assert tc.verdict is Verdict.MATCH and tc.verdict == "match" and f"{tc.verdict}" == "match"
    assert json.dumps({"verdict": tc.verdict}) == '{"verdict": "match"}'
    assert verdict(t)[0] == "match"
