"""Whether a checked op passes: its worst verdict is a passing one (compare.verdicts.PASSING),
or one the op declares it is meant to get (`expect=`); no contract check failed; it ran.

no-gradient (an int64 / bool input) says nothing about the op and never fails it; unchecked
does (nothing vouched for that gradient), as in the app's marks.
"""

from __future__ import annotations

from gradviz.compare.verdicts import PASSING
from gradviz.verdict import Verdict, worst
from gradviz.vocab import CheckStatus

NEUTRAL = ("no-gradient",)


def verdicts_of(analysis) -> dict[str, str]:
    """{tensor name: verdict} of a checked op (every tensor `error` when the op raised)."""
    comp = analysis.comparison
    return {t.name: t.verdict for t in comp.tensors} if comp is not None else {}


def worst_verdict(analysis) -> str:
    """The op's worst verdict, `error` when it did not run."""
    if analysis.result.status != "ok":
        return "error"
    found = worst(verdicts_of(analysis).values())
    return found if found is not None else Verdict.UNCHECKED


def judgement(analysis, expect: tuple[str, ...] = ()) -> tuple[bool, str]:
    """(passed, the one line saying why not: "" when it passed)."""
    worst = worst_verdict(analysis)
    failed = [c.name for c in analysis.result.checks if c.status == CheckStatus.FAIL]
    if expect:
        if worst not in expect:
            return False, f"expected {' or '.join(expect)}, got {worst}"
    elif worst not in PASSING + NEUTRAL:
        return False, f"{worst} (passing: {', '.join(PASSING)})"
    if failed:
        return False, f"contract check failed: {', '.join(failed)}"
    return True, ""
