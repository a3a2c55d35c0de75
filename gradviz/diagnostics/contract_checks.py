"""Failed contract checks (GV7xx): each way a check can fail has its own stable code; the
message, the fix and the user's line come from the check itself (backends/checks/). A finding
tells the story the check and the other findings tell: a check's skip that says how to make it
apply is a note, and "not rounding" (GV751) on a tensor that the verdict passes or that GV302
calls an intended surrogate says so, as a note, never as a bug beside it; an autocast difference
on an op the precision check cleared as float32 rounding is bfloat16 rounding of a right formula:
a warning."""

from __future__ import annotations

from gradviz.compare.verdicts import PASSING
from gradviz.diagnostics import versus_numeric
from gradviz.diagnostics.context import Context
from gradviz.vocab import CheckStatus

# (check name, failure kind) -> (code, severity). "warning": the framework refuses loudly;
# "error": a gradient that is silently wrong where training calls it this way.
CODE_OF = {
    ("double_backward", "once_differentiable"): ("GV701-double-backward-once", "warning"),
    ("double_backward", "not_differentiable"): ("GV702-double-backward-cut", "error"),
    ("double_backward", "wrong_second"): ("GV703-double-backward-wrong", "error"),
    ("double_backward", "differs_default"): ("GV703-double-backward-wrong", "error"),
    ("double_backward", "raised"): ("GV704-double-backward-raises", "warning"),
    ("noncontiguous_upstream", "view"): ("GV711-upstream-view", "warning"),
    ("noncontiguous_upstream", "inplace"): ("GV712-upstream-inplace", "error"),
    ("noncontiguous_upstream", "differs"): ("GV713-upstream-layout", "error"),
    ("noncontiguous_upstream", "raised"): ("GV713-upstream-layout", "warning"),
    ("autocast", "raised"): ("GV721-autocast-dtype-mix", "warning"),
    ("autocast", "dtype"): ("GV721-autocast-dtype-mix", "warning"),
    ("autocast", "differs"): ("GV722-autocast-inaccurate", "error"),
    ("autocast", "missing"): ("GV722-autocast-inaccurate", "error"),
    ("vmap", "data_dependent"): ("GV733-vmap-data-dependent", "warning"),
    ("vmap", "differs"): ("GV734-vmap-differs", "error"),
    ("vmap", "raised"): ("GV734-vmap-differs", "warning"),
    ("compiled", "raised"): ("GV741-compiled-raises", "warning"),
    ("compiled", "differs"): ("GV742-compiled-differs", "error"),
    ("precision", "stays"): ("GV751-precision-bug", "error"),
    ("precision", "raised"): ("GV751-precision-bug", "warning"),
}
# A skip that says how to make the check apply (the op is right for plain training): a note.
NOTE_OF = {
    ("vmap", "setup_context"): "GV731-vmap-setup-context",
    ("vmap", "vmap_rule"): "GV732-vmap-no-rule",
}
# A check's own name, for a failure kind the table does not list (a check that raised).
FALLBACK = {
    "double_backward": "GV704-double-backward-raises",
    "noncontiguous_upstream": "GV713-upstream-layout",
    "autocast": "GV721-autocast-dtype-mix",
    "vmap": "GV734-vmap-differs",
    "compiled": "GV741-compiled-raises",
    "precision": "GV751-precision-bug",
}


# every code a contract check's finding can have
CHECK_CODES = frozenset([*(c for c, _ in CODE_OF.values()), *NOTE_OF.values(), *FALLBACK.values()])


def code_for(name: str, kind: str) -> tuple[str, str]:
    return CODE_OF.get((name, kind), (FALLBACK.get(name, "GV000-diagnostic-failed"), "warning"))


def check(ctx: Context) -> list:
    out = []
    rounding = ctx.cleared_as_rounding()
    for c in getattr(ctx.result, "checks", ()):
        if c.status == CheckStatus.SKIP and (c.name, c.kind) in NOTE_OF:
            code, severity = NOTE_OF[(c.name, c.kind)], "info"
        elif c.status == CheckStatus.FAIL:
            code, severity = code_for(c.name, c.kind)
        else:
            continue
        message = c.message[0].upper() + c.message[1:] if c.message else c.name
        if not message.endswith("."):
            message += "."
        if c.name == "precision" and c.status == CheckStatus.FAIL and c.tensors:
            cleared = _cleared(ctx, c.tensors)
            if cleared:
                severity, message = "info", f"{message[:-1]}; {cleared}."
        fix = c.fix
        if (c.name, c.status, c.kind) == ("autocast", CheckStatus.FAIL, "differs") and rounding:
            severity, message = "warning", f"{message[:-1]}; {_bfloat16_rounding(rounding)}."
            fix = _FIX_BFLOAT16
        out.append(ctx.finding(code, severity, f"{c.name}: {message}", fix, c.where))
    return out


def _cleared(ctx: Context, tensors) -> str:
    """Why the precision check's "not rounding" is no bug for every one of `tensors`: the
    verdict passes it, or GV302 finds the difference an intended surrogate ("" otherwise)."""
    intended = {f.tensor: f for f in versus_numeric.check(ctx) if f.code == "GV302-grad-surrogate"}
    why = []
    for name in tensors:
        comp = ctx.comparison_of(name)
        if comp is not None and comp.verdict in PASSING:
            why.append(f"{name} reads {comp.verdict}")
        elif name in intended:
            why.append(f"{name} looks intended (GV302)")
        else:
            return ""
    return ", ".join(why) + ": this says only that the difference is not float32 rounding"


def _bfloat16_rounding(cleared) -> str:
    """Why an autocast difference on an op the precision check cleared is no bug: the op's
    formula is right (float64 agrees with numeric) and loses bits to rounding already in float32,
    so bfloat16's 8 keep less of it: a warning for mixed-precision training, not an error."""
    return (
        f"the precision check finds the float32 difference of {', '.join(sorted(cleared))} "
        "from numeric float32 rounding (float64 agrees), so the formula is right and loses "
        "more bits than bfloat16 keeps"
    )


_FIX_BFLOAT16 = (
    "Under mixed precision keep this op in float32 (torch: "
    "@torch.amp.custom_fwd(cast_inputs=torch.float32); TF: cast its inputs to "
    "float32 and its outputs back), or rewrite the gradient so it does not subtract "
    "nearly equal numbers ((x + c) - c loses the bits of x below c's spacing)."
)
