"""A diagnostic finding: one mistake (or notable fact) about one op run, in plain words."""

from __future__ import annotations

from dataclasses import asdict, dataclass

SEVERITIES = ("error", "warning", "info")

# code -> title. Codes are stable: reports, tests and users refer to them.
CODES = {
    "GV000-diagnostic-failed": "A diagnostic check could not run",
    "GV101-grad-count": "Backward returns the wrong number of gradients",
    "GV102-grad-shape": "Gradient shape does not match its input",
    "GV103-grad-dtype": "Gradient dtype does not match its input",
    "GV104-grad-device": "Gradient is on another device than its input",
    "GV105-grad-missing": "No gradient for an input that needs one",
    "GV106-grad-for-non-tensor": "Gradient returned for a non-tensor argument",
    "GV107-input-shape": "The op needs inputs of other shapes than it was given",
    "GV108-upstream-unused": "Backward never uses the incoming gradient",
    "GV109-input-range": "An integer input indexes past the op's table",
    "GV110-grad-rounded": "Gradient rounded to bfloat16 / float16 and cast back",
    "GV201-forward-changed": "Custom forward differs from the reference forward",
    "GV301-grad-wrong": "Custom gradient disagrees with numeric while default agrees",
    "GV302-grad-surrogate": "Custom gradient is a deliberate-looking surrogate",
    "GV303-numeric-float64": "Forward pins float32: no numeric reference in float64",
    "GV304-upstream-blind": "Every gradient is 0 under this upstream: the match checks nothing",
    # GV305-GV308: the cause of a wrong gradient, read off its numbers (diagnostics/causes.py)
    "GV305-grad-sign-flipped": "Custom gradient has its sign flipped",
    "GV306-grad-transposed": "Custom gradient is the right one transposed or permuted",
    "GV307-grads-swapped": "Custom gradient is another input's gradient (swapped)",
    "GV308-grad-wrong-axis": "Broadcast gradient summed over the wrong axes",
    "GV309-surrogate-against-step": "Surrogate gradient points against the forward's step",
    "GV401-non-finite": "NaN or Inf in a gradient",
    "GV402-non-finite-output": "NaN or Inf in the forward output",
    "GV501-no-default-path": "The forward cuts the graph: no default gradient",
    "GV601-keras-weights-assign": "Layer assigns self.weights (read-only in Keras 3)",
    "GV602-tf-missing-variables": "custom_gradient reads a variable but grad has no variables=",
    "GV603-call-returns-grad-fn": "call/forward returns a gradient function that nobody registers",
    "GV604-save-for-backward": "save_for_backward misused",
    "GV605-inplace-no-mark-dirty": "In-place forward without ctx.mark_dirty",
    "GV606-one-argument-unpacked": "call/forward unpacks one argument into several tensors",
    "GV607-backward-never-called": "Module / Layer backward method that nothing calls",
    # GV608-GV611: JAX rules (diagnostics/jax_traps.py, jax_tangent_traps.py)
    "GV608-vjp-residuals": "custom_vjp fwd's residuals do not fit what bwd unpacks",
    "GV609-jvp-nonlinear": "custom_jvp tangent rule is not linear in the tangents",
    "GV610-nondiff-array": "An array given to a nondiff_argnums argument",
    "GV611-jvp-pair": "custom_jvp tangent rule returns no (primal_out, tangent_out) pair",
    # GV7xx: failed contract checks (see diagnostics/contract_checks.py)
    "GV701-double-backward-once": "Backward is once_differentiable: double backward raises",
    "GV702-double-backward-cut": "Custom gradient is not differentiable: double backward is zero",
    "GV703-double-backward-wrong": "Double backward disagrees with the backward's derivative",
    "GV704-double-backward-raises": "Double backward raises",
    "GV711-upstream-view": ".view on a non-contiguous upstream gradient",
    "GV712-upstream-inplace": "Backward writes into its upstream gradient in place",
    "GV713-upstream-layout": "Gradient depends on the upstream's memory layout",
    "GV721-autocast-dtype-mix": "Op mixes bfloat16 and float32 under mixed precision",
    "GV722-autocast-inaccurate": "Mixed-precision gradient beyond bfloat16 tolerance",
    "GV731-vmap-setup-context": "Function without setup_context: torch.func cannot transform it "
    "(a note: vmap skipped)",
    "GV732-vmap-no-rule": "Function without a vmap rule (a note: vmap skipped)",
    "GV733-vmap-data-dependent": "Op reads tensor values in Python: it cannot be batched",
    "GV734-vmap-differs": "Batched per-sample gradients differ from unbatched ones",
    "GV741-compiled-raises": "Gradient does not compile",
    "GV742-compiled-differs": "Compiled gradient differs from eager",
    "GV751-precision-bug": "Gradient differs from numeric in float64 too: not rounding",
}


@dataclass(frozen=True)
class Finding:
    code: str  # e.g. "GV102-grad-shape" (see CODES)
    severity: str  # "error" | "warning" | "info"
    title: str
    message: str  # one sentence, plain words, with numbers
    fix: str  # one sentence: what to do
    where: str = ""  # "file:line" in the user's file, or ""
    framework: str = ""  # "torch" | "tf" | "jax"
    op: str = ""
    tensor: str = ""

    def as_dict(self) -> dict:
        return asdict(self)

    def one_line(self) -> str:
        at = f" at {self.where}" if self.where else ""
        return f"{self.severity} {self.code}{at}: {self.message} Fix: {self.fix}"


SEVERITY_ORDER = {s: i for i, s in enumerate(SEVERITIES)}
