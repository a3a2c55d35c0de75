"""Failed contract checks (GV7xx): each way a check can fail has its own stable code; the
message, the fix and the user's line come from the check itself (backends/checks/)."""
from __future__ import annotations

from gradviz.diagnostics.context import Context

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
    ("vmap", "setup_context"): ("GV731-vmap-setup-context", "warning"),
    ("vmap", "vmap_rule"): ("GV732-vmap-no-rule", "warning"),
    ("vmap", "data_dependent"): ("GV733-vmap-data-dependent", "warning"),
    ("vmap", "differs"): ("GV734-vmap-differs", "error"),
    ("vmap", "raised"): ("GV734-vmap-differs", "warning"),
    ("compiled", "raised"): ("GV741-compiled-raises", "warning"),
    ("compiled", "differs"): ("GV742-compiled-differs", "error"),
    ("precision", "stays"): ("GV751-precision-bug", "error"),
    ("precision", "raised"): ("GV751-precision-bug", "warning"),
}
# A check's own name, for a failure kind the table does not list (a check that raised).
FALLBACK = {
    "double_backward": "GV704-double-backward-raises", "noncontiguous_upstream":
    "GV713-upstream-layout", "autocast": "GV721-autocast-dtype-mix", "vmap":
    "GV734-vmap-differs", "compiled": "GV741-compiled-raises", "precision": "GV751-precision-bug",
}


def code_for(name: str, kind: str) -> tuple[str, str]:
    return CODE_OF.get((name, kind), (FALLBACK.get(name, "GV000-diagnostic-failed"), "warning"))


def check(ctx: Context) -> list:
    out = []
    for c in getattr(ctx.result, "checks", ()):
        if c.status != "fail":
            continue
        code, severity = code_for(c.name, c.kind)
        message = c.message[0].upper() + c.message[1:] if c.message else c.name
        if not message.endswith("."):
            message += "."
        out.append(ctx.finding(code, severity, f"{c.name}: {message}", c.fix, c.where))
    return out
