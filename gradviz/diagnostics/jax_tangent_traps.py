"""A custom_jvp whose tangent rule is not linear in the tangents (GV609): jax.grad / jax.vjp
transpose the tangent computation, which JAX can do only for a linear one, and it fails with
"Transpose rule ... not implemented" or a bare AssertionError far from the user's line. A tangent
rule that returns no (primal_out, tangent_out) pair, or one whose two parts are not of one
structure (GV611). And an array (a traced value) given to a nondiff_argnums argument (GV610)."""

from __future__ import annotations

import ast
import re

from gradviz.diagnostics import jax_source, source
from gradviz.diagnostics.context import Context

_TRANSPOSE = re.compile(r"Transpose rule \(for reverse-mode differentiation\) for '(\w+)'")
_NONLINEAR = re.compile(r"can't be transposed")  # "nonlinear div can't be transposed"
_NONDIFF_TRACER = "position indicated by nondiff_argnums as non-differentiable"
_NONDIFF_INPUT = "is in nondiff_argnums, so JAX takes it as a constant"
# JAX's primitive -> the call that makes it (the source names these)
_CALLS = {"integer_pow": "**", "pow": "**", "max": "maximum", "min": "minimum", "mul": "*"}


_TANGENT_TYPE = re.compile(
    r"Custom JVP rule must produce primal and tangent outputs with corresponding shapes and "
    r"dtypes\. Expected (\w+)\[([^\]]*)\] \(tangent type of [^)]*\) but got (\w+)\[([^\]]*)\]"
)


# JAX's words for a tangent rule's return that is no pair, or a pair of two structures
_JVP_PAIR = re.compile(
    r"Custom JVP rule (\S+) for function (\w+) must produce a pair \(list or tuple of length "
    r"two\) representing primal and tangent outputs"
)
_JVP_TREES = re.compile(
    r"Custom JVP rule (\S+) for function (\w+) must produce primal and tangent outputs with "
    r"equal container \(pytree\) structures, but got (PyTreeDef\(.*\)) and (PyTreeDef\(.*\)) "
    r"respectively"
)


def found(ctx: Context, err) -> list:
    checks = (_nonlinear, _tangent_type, _pair, _nondiff)
    return [f for f in (check(ctx, err) for check in checks) if f is not None]


def _dims(text: str) -> tuple:
    return tuple(int(d) for d in text.split(",") if d.strip())


def _tangent_type(ctx: Context, err):
    """The tangent output of another shape / dtype than the primal output (GV102 / GV103)."""
    m = _TANGENT_TYPE.search(err.message)
    rule = _jvp_rule(ctx)
    if m is None or rule is None or rule.jvp is None:
        return None
    want_dtype, want, got_dtype, got = m.groups()
    where = jax_source.return_line(ctx.file, rule.jvp)
    name = "a lambda" if isinstance(rule.jvp, ast.Lambda) else f"`{rule.jvp.name}`"
    head = f"The tangent output of the tangent rule ({name}) of custom_jvp {rule.primal.name}"
    if _dims(got) != _dims(want):
        return ctx.finding(
            "GV102-grad-shape",
            "error",
            f"{head} has shape {_dims(got)} where the primal output has {_dims(want)}; JAX needs "
            "the tangent output in the primal output's shape.",
            "Return a tangent of the primal output's shape (jnp.cos(x) * t, not a sum of it).",
            where,
        )
    return ctx.finding(
        "GV103-grad-dtype",
        "error",
        f"{head} is {got_dtype} where the primal output is {want_dtype}.",
        "Compute the tangent in the primal output's dtype (t.astype(y.dtype)).",
        where,
    )


def _pair(ctx: Context, err):
    """The tangent rule returns no (primal_out, tangent_out) pair (GV611), in JAX's words only:
    JAX checks it after the rule returned, so its error names no line of the user's."""
    not_pair, trees = _JVP_PAIR.search(err.message), _JVP_TREES.search(err.message)
    m = not_pair or trees
    if m is None:
        return None
    named = jax_source.rule_of(ctx.tree, m.group(2)) if ctx.tree is not None else None
    rule = named if named is not None and named.kind == "custom_jvp" else _jvp_rule(ctx)
    if rule is None or rule.jvp is None:
        return None
    jvp = rule.jvp
    name = "a lambda" if isinstance(jvp, ast.Lambda) else f"`{jvp.name}`"
    head = f"The tangent rule ({name}) of custom_jvp {rule.primal.name} returns"
    if not_pair:
        message = (
            f"{head} {_given(jvp)} where JAX needs a pair (primal_out, tangent_out): "
            f"{rule.primal.name}'s output at the primals, and its tangent."
        )
    else:
        primal, tangent = trees.group(3), trees.group(4)
        out = _tangent_out(jvp)
        said = f" `{ast.unparse(out)}`" if out is not None and len(ast.unparse(out)) <= 60 else ""
        message = (
            f"{head} a pair whose tangent output{said} is structured as {tangent} where its primal "
            f"output is {primal}; JAX needs the tangent output in the primal output's "
            "structure, one tangent per output array."
        )
    fix = (
        "Return the pair `primal_out, tangent_out` from the tangent rule, the tangent shaped "
        f"as the output: e.g. return jnp.sin(x), jnp.cos(x) * t for {rule.primal.name}(x) = "
        "jnp.sin(x) (for a dict output, a dict of tangents with its keys)."
    )
    where = jax_source.return_line(ctx.file, jvp)
    return ctx.finding("GV611-jvp-pair", "error", message, fix, where)


def _given(jvp) -> str:
    exprs = jax_source.returned(jvp)
    if len(exprs) != 1:
        return "no (primal_out, tangent_out) pair"
    e = exprs[0]
    if isinstance(e, (ast.Tuple, ast.List)):
        return f"a {'tuple' if isinstance(e, ast.Tuple) else 'list'} of {len(e.elts)}"
    if isinstance(e, ast.Constant) and e.value is None:
        return "None"
    if isinstance(e, ast.Dict):
        return "a dict"
    text = ast.unparse(e)
    return f"one value (`{text if len(text) <= 60 else text[:57] + '...'}`)"


def _jvp_rule(ctx: Context):
    rule = ctx.jax_rule()
    if rule is not None and rule.kind == "custom_jvp":
        return rule
    node = source.top_level(ctx.tree, ctx.qualname)
    called = jax_source.rules_called(ctx.tree, node) if node is not None else []
    return next((r for r in called if r.kind == "custom_jvp" and r.jvp is not None), None)


def _nonlinear(ctx: Context, err):
    rule = _jvp_rule(ctx)
    if rule is None or rule.jvp is None:
        return None
    m = _TRANSPOSE.search(err.message)
    # JAX transposes after the user's code returned: its error has no user frame and points at
    # the op or its rule's def line; one raised by the user's own code is at that code's line
    bare = {0, source.where_line(ctx.op_where()), rule.primal.lineno, rule.jvp.lineno}
    # no user frame: the worker put such an error at the line this finding names
    if err.traceback and source.where_line(err.where) not in bare:
        return None
    if m is None and not _NONLINEAR.search(err.message) and err.type != "AssertionError":
        return None  # JAX's transposition also asserts with no words of its own
    jvp = rule.jvp
    prim = m.group(1) if m else ""
    culprit = _culprit(jvp, prim)
    what = (
        f": `{ast.unparse(culprit)}`"
        + (" multiplies a tangent by a tangent" if _both_sides(culprit, jvp) else " is not")
        if culprit is not None
        else (f": it applies `{prim}` to a tangent" if prim else "")
    )
    said = " ".join(err.message.split())[:100] or "no message"
    name = "a lambda" if isinstance(jvp, ast.Lambda) else f"`{jvp.name}`"
    message = (
        f"The tangent rule ({name}) of custom_jvp {rule.primal.name} is not linear in the "
        f"tangents{what}. jax.grad and jax.vjp differentiate a custom_jvp by transposing its "
        "tangent output, which JAX can do only when that output is a linear function of the "
        f"tangents ({err.type}: {said})."
    )
    fix = (
        "Make the tangent output linear in the tangents: compute every factor from the primals "
        "and multiply the tangents by it (return y, jnp.cos(x) * t); a gradient that is not the "
        "derivative (a surrogate) belongs in a custom_vjp, whose bwd JAX calls as it is."
    )
    where = jax_source.return_line(ctx.file, jvp)
    return ctx.finding("GV609-jvp-nonlinear", "error", message, fix, where)


def _tangent_names(jvp) -> set[str]:
    """The tangents parameter and what it is unpacked into (t, = tangents; t = tangents[0])."""
    params = jax_source.params(jvp)
    if len(params) < 2:
        return set()
    names = {params[-1]}
    for n in ast.walk(jvp):
        if isinstance(n, ast.Assign) and _mentions(n.value, names):
            for t in n.targets:
                names |= {x.id for x in ast.walk(t) if isinstance(x, ast.Name)}
    return names


def _mentions(node, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _tangent_out(jvp):
    for e in jax_source.returned(jvp):
        if isinstance(e, ast.Tuple) and len(e.elts) == 2:
            return e.elts[1]
    return None


def _culprit(jvp, prim: str):
    """The smallest part of the returned tangent that is not linear in the tangents, where the
    source shows it: a product or quotient of two tangent terms, a power of one, or a call of
    the primitive JAX named on one."""
    out, names = _tangent_out(jvp), _tangent_names(jvp)
    if out is None or not names:
        return None
    call = _CALLS.get(prim, prim)
    hits = []
    for n in ast.walk(out):
        if isinstance(n, ast.BinOp):
            left, right = _mentions(n.left, names), _mentions(n.right, names)
            if (
                (isinstance(n.op, (ast.Mult, ast.MatMult)) and left and right)
                or (isinstance(n.op, ast.Div) and right)
                or (isinstance(n.op, ast.Pow) and left)
            ):
                hits.append(n)
        elif isinstance(n, ast.Call) and call and _mentions(n, names):
            fname = source.dotted(n.func).split(".")[-1]
            if fname == call:
                hits.append(n)
    # the innermost: the one no other hit lies inside
    inner = [h for h in hits if not any(o is not h and _inside(o, h) for o in hits)]
    return inner[0] if inner else None


def _inside(node, outer) -> bool:
    return any(n is node for n in ast.walk(outer))


def _both_sides(node, jvp) -> bool:
    names = _tangent_names(jvp)
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Mult)
        and _mentions(node.left, names)
        and _mentions(node.right, names)
    )


def _nondiff(ctx: Context, err):
    tracer, given = _NONDIFF_TRACER in err.message, _NONDIFF_INPUT in err.message
    if not (tracer or given):
        return None
    rule, arg = _nondiff_call(ctx, source.where_line(err.where))
    rule = rule or ctx.jax_rule()
    names = jax_source.params(rule.primal) if rule is not None else []
    nondiff = [names[i] for i in (rule.nondiff if rule else ()) if i < len(names)]
    if given:
        m = re.search(r"argument '(\w+)' is in nondiff_argnums", err.message)
        name = m.group(1) if m else (nondiff[0] if nondiff else "")
        how = "@gradviz.op(inputs=...) feeds it as an array input"
    else:
        name = arg[0] if arg else (nondiff[0] if len(nondiff) == 1 else "")
        how = f"it is given a traced array (`{arg[1]}`)" if arg else "it is given a traced array"
    fn = rule.primal.name if rule is not None else ctx.qualname
    label = f"'{name}'" if name else "a nondiff_argnums argument"
    message = (
        f"Argument {label} of custom_vjp {fn} is in nondiff_argnums, but {how}; JAX takes "
        "a nondiff argument as a constant it never differentiates and refuses a traced value "
        "there (what jax.grad, jax.jit or a Module's parameters pass)."
    )
    fix = (
        f"Take {label} out of nondiff_argnums and pass it as an ordinary argument (bwd then "
        "returns a cotangent for it, or None); keep nondiff_argnums for Python values such as "
        "functions, ints and flags (give gradviz such a value with consts=)."
    )
    return ctx.finding(
        "GV610-nondiff-array", "error", message, fix, err.where or ctx.op_where(), tensor=name
    )


def _nondiff_call(ctx: Context, line: int):
    """(rule, (argument name, the expression passed)) of a call at `line` that passes something
    in a nondiff_argnums position; (None, None) when no such call is there."""
    for n in ast.walk(ctx.tree) if ctx.tree is not None and line else ():
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.lineno <= line <= (n.end_lineno or n.lineno)
        ):
            rule = jax_source.rule_of(ctx.tree, n.func.id)
            if rule is None or not rule.nondiff:
                continue
            names = jax_source.params(rule.primal)
            for i in rule.nondiff:
                if i < len(n.args) and i < len(names):
                    return rule, (names[i], ast.unparse(n.args[i]))
            return rule, None
    return None, None
