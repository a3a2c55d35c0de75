"""The seed tutorial's trap (GV607): an nn.Module or Keras Layer with a `backward()` (`grad`,
`custom_grad`, `get_gradient`...) method that nothing calls. The worker saw which such methods
nothing called during the custom run (RunResult.uncalled_backward) and whether any custom
gradient of the user's ran instead (RunResult.no_own_gradient); the finding points at the
method's line and says how to write the gradient so that it is used."""

from __future__ import annotations

import re

from gradviz.diagnostics.context import Context
from gradviz.vocab import Framework

_WHERE = re.compile(r"^(?P<name>\S+) at (?P<where>.+:\d+)$")

_HOW = {
    "torch": (
        "Move the gradient into a torch.autograd.Function: class {Fn}(torch.autograd."
        "Function) with @staticmethod forward(ctx, x) (ctx.save_for_backward what the "
        "gradient needs) and @staticmethod backward(ctx, grad_output) returning one "
        "gradient per input, and call {Fn}.apply(x) from {cls}.forward."
    ),
    "tf": (
        "Move the gradient into a @tf.custom_gradient function: def f(x): ... return y, "
        "grad, where the nested def grad(upstream) returns the gradient, and call f(x) "
        "inside {cls}.call."
    ),
}


def check(ctx: Context) -> list:
    out = []
    for entry in ctx.result.uncalled_backward:
        m = _WHERE.match(entry)
        name, where = (m["name"], m["where"]) if m else (entry, ctx.op_where())
        cls, _, method = name.rpartition(".")
        caller = "Keras" if ctx.framework == Framework.TF else "autograd"
        entry_point = "call" if ctx.framework == Framework.TF else "forward"
        said = (
            f"{name} is never called: {caller} differentiates {cls}.{entry_point} itself and "
            f"never calls a method named {method} (gradviz ran the forward and the backward "
            "and nothing called it), so the gradient it computes is never applied"
        )
        if ctx.result.no_own_gradient:
            said += (
                "; nothing else in the op overrides the gradient either, so training gets "
                "the framework's own autodiff and the verdict is broken: custom gradient "
                "not found"
            )
        else:
            said += "; the op's gradient comes from the custom gradient its forward applies"
        if ctx.result.no_own_gradient:
            fix = _HOW.get(ctx.framework, _HOW["torch"]).format(Fn=f"{cls}Fn", cls=cls)
        else:
            fix = f"Remove {name}, or put what it computes into the gradient that runs: the " + (
                "backward of the autograd.Function that forward applies."
                if ctx.framework == Framework.TORCH
                else "grad function of the @tf.custom_gradient that call uses."
            )
        out.append(ctx.finding("GV607-backward-never-called", "error", said + ".", fix, where))
    return out
