"""The advice of the framework-neutral checks in JAX's words: a custom_vjp's gradient is its bwd
(a cotangent per argument, residuals from fwd), a custom_jvp's is its tangent rule; never
ctx.save_for_backward, .detach() or tf.cast. A check asks `say(ctx, key, its own words)`."""

from __future__ import annotations

from gradviz.vocab import Framework

_BWD = {
    "part": "bwd",
    "chain_rule": (
        "Check the chain rule in bwd: multiply the cotangent g by the derivative of the forward "
        "at the residuals fwd saved, and return one cotangent per argument, in order, as a tuple."
    ),
    "factor": "Fix the constant factor in bwd unless the scaling is intended.",
    "sign": (
        "Fix the sign in bwd (a derivative such as d/dx cos(x) = -sin(x), or the operand order "
        "of a subtraction); if a gradient reversal is intended, name the op so (grad_reverse, "
        "GRL) or say 'gradient reversal' in its docstring."
    ),
    "order": (
        "Return one cotangent per argument in the order of the decorated function's arguments "
        "(bwd returns (g_x, g_w) for f(x, w)), each the derivative with respect to that argument."
    ),
    "step": (
        "Pass the cotangent on with the step's sign (g, or g times a non-negative mask such as "
        "jnp.abs(x) <= 1), unless pushing against the step is intended."
    ),
    "guard": (
        "Guard bwd where it divides by zero or takes log/sqrt of 0 (e.g. jnp.where with a safe "
        "denominator)."
    ),
    "finite": (
        "If those inputs can occur, define a finite gradient there in bwd (e.g. with jnp.where)."
    ),
    "cast": "Cast the cotangent to the argument's dtype (g.astype(x.dtype)).",
    "narrow": (
        "Compute the cotangent in the argument's dtype: drop the cast to {fmt} in bwd (a cast "
        "back afterwards keeps the rounding), or cast its operands to x.dtype first "
        "(g.astype(x.dtype))."
    ),
    "forward": (
        "Make fwd return exactly what the decorated function returns as the first element of "
        "its pair (under jax.grad JAX runs fwd, not the function); change only bwd."
    ),
    "axis": (
        "Sum the cotangent over exactly the axes '{name}' was broadcast along "
        "(jnp.sum(g, axis=({axes},))), then reshape it to the shape of '{name}'."
    ),
    "permute": (
        "Put the axes back in the argument's order: jnp.transpose(g, {inverse}) (or undo the "
        "forward's transpose with its inverse)."
    ),
}
_JVP = {
    **_BWD,
    "part": "the tangent rule",
    "chain_rule": (
        "Check the tangent rule: its tangent output must be the derivative of the primal output "
        "times the tangents (for y = jnp.sin(x): jnp.cos(x) * t)."
    ),
    "factor": "Fix the constant factor in the tangent rule unless the scaling is intended.",
    "sign": (
        "Fix the sign in the tangent rule (a derivative such as d/dx cos(x) = -sin(x)); a "
        "gradient reversal belongs in a custom_vjp named so (grad_reverse, GRL)."
    ),
    "order": (
        "Make the tangent output the sum of each argument's derivative times that argument's "
        "own tangent (for f(x, w): dfdx * t_x + dfdw * t_w)."
    ),
    "step": (
        "Give the tangent the step's sign (t, or t times a non-negative mask such as "
        "jnp.abs(x) <= 1), unless pushing against the step is intended."
    ),
    "guard": (
        "Guard the tangent rule where it divides by zero or takes log/sqrt of 0 (e.g. jnp.where "
        "with a safe denominator)."
    ),
    "finite": (
        "If those inputs can occur, define a finite derivative there in the tangent rule (e.g. "
        "with jnp.where)."
    ),
    "forward": (
        "Make the tangent rule's primal output exactly what the function returns (under "
        "jax.grad JAX runs the rule, not the function); change only the tangent output."
    ),
}
# equinox.filter_custom_vjp: bwd returns the first argument's cotangent alone, not a tuple
_EQX = {
    **_BWD,
    "chain_rule": (
        "Check the chain rule in bwd: multiply the cotangent g by the derivative of the forward "
        "at the residuals fwd saved, and return the first argument's cotangent alone."
    ),
    "order": (
        "Return the cotangent of the first argument (equinox's vjp_arg), the derivative with "
        "respect to it; equinox differentiates no other argument."
    ),
    "upstream_fix": (
        "Multiply by the cotangent: return {g} * (the derivative of the forward), the first "
        "argument's cotangent alone."
    ),
}
_BWD["upstream_fix"] = (
    "Multiply by the cotangent: return ({g} * (the derivative of the forward),), one cotangent "
    "per argument."
)
_JVP["upstream_fix"] = _BWD["upstream_fix"]
# the same for either rule
_BOTH = {
    "same": (
        "the default gives the same gradient: it comes from the forward itself (a "
        "jax.lax.stop_gradient trick such as x + jax.lax.stop_gradient(q - x)), not from a "
        "rule of its own"
    ),
    "dtype_after": "; JAX passes it on as {own}",
    # flax / equinox convolutions take channels last
    "input_shape": (
        'Give the op inputs of the shapes it expects: @gradviz.op(inputs={{"x": (1, 8, 8, 3)}}) '
        "on the op (a flax conv takes channels last), or the shape setting (--shape 4x50 "
        "instead of {given})."
    ),
}


def rule_kind(ctx) -> str:
    """ "custom_vjp" / "custom_jvp" for a JAX op (its own rule or the one it calls; a JAX op whose
    rule the source does not show reads as a custom_vjp's), "" for another framework's."""
    if ctx.framework != Framework.JAX:
        return ""
    rule = ctx.jax_rule()
    return rule.kind if rule is not None else "custom_vjp"


def rule_name(ctx) -> str:
    """How a finding names the op's kind of rule: "custom_vjp", "equinox.filter_custom_vjp"."""
    rule = ctx.jax_rule()
    if rule is not None and rule.equinox:
        return "equinox.filter_custom_vjp"
    return rule_kind(ctx) or "custom_vjp"


def say(ctx, key: str, default: str, **kw) -> str:
    """The JAX words for `key` (formatted with kw) where the op is JAX's, else `default` (the
    caller's own words, as they are)."""
    kind = rule_kind(ctx)
    if not kind:
        return default
    rule = ctx.jax_rule()
    table = _JVP if kind == "custom_jvp" else _EQX if getattr(rule, "equinox", False) else _BWD
    words = _BOTH.get(key) or table[key]
    return words.format(**kw) if kw else words


def forward_where(ctx) -> str:
    """Where a JAX op's forward, as jax.grad runs it, gives its output: fwd's or the tangent
    rule's return; "" where the source shows no rule."""
    from gradviz.diagnostics import jax_source

    rule = ctx.jax_rule() if ctx.framework == Framework.JAX else None
    part = None if rule is None else (rule.fwd if rule.kind == "custom_vjp" else rule.jvp)
    return jax_source.return_line(ctx.file, part) if part is not None else ""
