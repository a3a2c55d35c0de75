"""JAX custom_vjp mistakes that JAX reports with an error, in plain words at the user's line: a
bwd that returns the wrong number of cotangents or no tuple (GV101), a cotangent of another shape
or dtype than its argument (GV102 / GV103), and fwd's residuals that do not fit what bwd
unpacks, or a fwd that returns no (output, residuals) pair (GV608). The tangent-rule and
nondiff_argnums traps are in jax_tangent_traps.py."""

from __future__ import annotations

import ast
import re

from gradviz.diagnostics import jax_source, jax_tangent_traps, jax_words, source
from gradviz.diagnostics.context import Context
from gradviz.vocab import Framework, Mode

_STRUCTURE = re.compile(
    r"(?:bwd|VJP) output structure (PyTreeDef\(.*\)) for primal input structure "
    r"(PyTreeDef\(.*\))"
)
_TYPE = re.compile(
    r"bwd rule produced an output of (?:type|shape/dtype) (\w+)\[([^\]]*)\] corresponding to "
    r"an input of (?:type|shape/dtype) (\w+)\[([^\]]*)\]"
)
_AT = re.compile(r"at output\[(\d+)\]")
# equinox.filter_custom_vjp's words for a bwd whose cotangent is not its first argument's structure
_EQX_STRUCTURE = "custom_vjp gradients must have the same structure as `equinox.filter(vjp_arg"
_FWD_PAIR = "must produce a pair (list or tuple of length two) where the first"
_FWD_OUT = "fwd rule output's first element had container/pytree structure"
# what Python says when bwd takes its residuals apart as another structure than fwd gave
_READ_FAILED = re.compile(
    r"values to unpack|cannot unpack non-iterable|is not subscriptable|index out of range|"
    r"has no attribute|not iterable"
)
_READ_TYPES = ("ValueError", "TypeError", "IndexError", "KeyError", "AttributeError")


def check(ctx: Context) -> list:
    return findings(ctx)


def findings(ctx: Context) -> list:
    """Every JAX trap of the op's errors (kept for keras_traps: GV606 is not a JAX bwd's)."""
    if ctx.framework != Framework.JAX:
        return []
    if "jax_traps" not in ctx.cache:
        out = []
        for mode, err in ctx.errors():
            if mode == Mode.DEFAULT:
                continue  # JAX's own derivative of the primal: no rule of the user's in it
            out += _of_error(ctx, err)
        ctx.cache["jax_traps"] = out
    return ctx.cache["jax_traps"]


def _of_error(ctx: Context, err) -> list:
    out = [fn(ctx, err) for fn in (_count, _eqx_count, _cotangent_type, _fwd_pair, _residuals)]
    return [f for f in out if f is not None] + jax_tangent_traps.found(ctx, err)


def rule_line(ctx: Context, err) -> str:
    """The rule's line a JAX trap finding names for `err` ("" where none does): where JAX's
    error, raised after the rule returned, names no line of the user's (backends.rule_errors)."""
    if ctx.framework != Framework.JAX:
        return ""
    return next((f.where for f in _of_error(ctx, err) if f.where), "")


def _rule(ctx: Context):
    """The op's custom_vjp: its own, or the one custom_vjp a Module or function calls (with
    several, JAX's structure errors do not say whose: none)."""
    own = jax_source.rule_of(ctx.tree, ctx.qualname) if ctx.tree is not None else None
    if own is not None:
        return own if own.kind == "custom_vjp" else None
    node = source.top_level(ctx.tree, ctx.qualname)
    called = jax_source.rules_called(ctx.tree, node) if node is not None else []
    vjps = [r for r in called if r.kind == "custom_vjp"]
    return vjps[0] if len(vjps) == 1 else None


def _kind(rule) -> str:
    return "equinox.filter_custom_vjp" if rule.equinox else "custom_vjp"


def _label(ctx: Context, rule) -> str:
    """ "custom_vjp f": the rule the finding is about, by its kind and name."""
    if rule is None:
        return f"{jax_words.rule_name(ctx)} {ctx.qualname}"
    return f"{_kind(rule)} {rule.primal.name}"


def _fn(ctx: Context, rule) -> str:
    return rule.primal.name if rule is not None else ctx.qualname


def _name(fn) -> str:
    return "a lambda" if isinstance(fn, ast.Lambda) else f"`{fn.name}`"


def _args(rule) -> list[str]:
    """The decorated function's differentiable arguments: those bwd gives a cotangent each."""
    names = jax_source.params(rule.primal)
    return [n for i, n in enumerate(names) if i not in rule.nondiff]


def _top(tree: str) -> tuple[str, int]:
    """(container, number of children) of a PyTreeDef's outermost node: ("tuple", 2) for
    PyTreeDef((*, *)), ("leaf", 1) for PyTreeDef(*), ("None", 0) for PyTreeDef(None)."""
    inner = tree[len("PyTreeDef(") : -1].strip()
    if inner in ("*", "None"):
        return ("leaf", 1) if inner == "*" else ("None", 0)
    kind = {"(": "tuple", "[": "list", "{": "dict"}.get(inner[:1], "pytree")
    body = inner[1:-1].strip() if kind != "pytree" else inner
    depth, parts, cur = 0, [], ""
    for ch in body:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return kind, len([p for p in parts if p.strip()])


def _count(ctx: Context, err):
    m = _STRUCTURE.search(err.message)
    if not m:
        return None
    rule = _rule(ctx)
    got, want = _top(m.group(1)), _top(m.group(2))
    n = want[1]
    args = _args(rule) if rule is not None else []
    names = f" ({', '.join(args)})" if len(args) == n else ""
    if got[0] in ("tuple", "list"):
        what = f"a {got[0]} of {got[1]} cotangent{'s' if got[1] != 1 else ''}"
    elif got[0] == "leaf":
        what = "a single value, not a tuple,"
    else:
        what = f"a {got[0]} (structure {m.group(1)})"
    bwd = rule.bwd if rule is not None else None
    who = f" ({_name(bwd)})" if bwd is not None else ""
    message = (
        f"The bwd{who} of {_label(ctx, rule)} returns {what} where {_fn(ctx, rule)} takes "
        f"{n} differentiable argument{'s' if n != 1 else ''}{names}; JAX needs bwd to return "
        "a tuple with exactly one cotangent per argument of the decorated function, in order "
        "(nondiff_argnums arguments have none)."
    )
    one = "`return (g * ...,)` for one argument (the trailing comma makes the tuple)"
    fix = (
        f"Return a tuple of {n} cotangent{'s' if n != 1 else ''}, one per argument in order: "
        f"{one if n == 1 else 'return (g * ..., g * ...)'}; None for an argument that gets none."
    )
    return ctx.finding("GV101-grad-count", "error", message, fix, _bwd_where(ctx, err))


def _eqx_count(ctx: Context, err):
    if _EQX_STRUCTURE not in err.message:
        return None
    rule = _rule(ctx)
    bwd = rule.bwd if rule is not None else None
    first = jax_source.params(rule.primal)[:1] if rule is not None else []
    arg = f" '{first[0]}'" if first else ""
    exprs = jax_source.returned(bwd) if bwd is not None else []
    what = (
        f"a tuple of {len(exprs[0].elts)}"
        if len(exprs) == 1 and isinstance(exprs[0], ast.Tuple)
        else "another structure"
    )
    message = (
        f"The bwd{f' ({_name(bwd)})' if bwd is not None else ''} of equinox.filter_custom_vjp "
        f"{_fn(ctx, rule)} returns {what} where equinox needs the cotangent of the first "
        f"argument{arg} alone, in its structure (equinox differentiates no other argument)."
    )
    fix = (
        f"Return the cotangent of{arg or ' the first argument'} only, shaped as it is (for one "
        "array: return g * ..., not a tuple); the other arguments get none."
    )
    return ctx.finding("GV101-grad-count", "error", message, fix, _bwd_where(ctx, err))


def _bwd_where(ctx: Context, err) -> str:
    rule = _rule(ctx)
    if rule is not None and rule.bwd is not None:
        return jax_source.return_line(ctx.file, rule.bwd)
    return err.where or ctx.op_where()


def _shape(dims: str) -> tuple:
    return tuple(int(d) for d in dims.split(",") if d.strip())


def _cotangent_type(ctx: Context, err):
    m = _TYPE.search(err.message)
    if not m:
        return None
    at = _AT.search(err.message)
    i = int(at.group(1)) if at else 0
    rule = _rule(ctx)
    args = _args(rule) if rule is not None else []
    name = args[i] if i < len(args) else f"number {i + 1}"
    got_dtype, got, want_dtype, want = (
        m.group(1),
        _shape(m.group(2)),
        m.group(3),
        _shape(m.group(4)),
    )
    if got != want:
        code = "GV102-grad-shape"
        message = (
            f"The cotangent bwd returns for argument '{name}' (position {i}) has shape {got} "
            f"but '{name}' has shape {want}; JAX needs each cotangent in its argument's shape."
        )
        fix = (
            "Return a cotangent of exactly the argument's shape (for a forward that broadcasts, "
            "sum g over the broadcast axes: jnp.sum(g, axis=...).reshape(x.shape))."
        )
    else:
        code = "GV103-grad-dtype"
        message = (
            f"The cotangent bwd returns for argument '{name}' (position {i}) has dtype "
            f"{got_dtype} but '{name}' has {want_dtype}."
        )
        fix = "Compute the cotangent in the argument's dtype (g.astype(x.dtype))."
    return ctx.finding(code, "error", message, fix, _bwd_where(ctx, err), tensor=name)


def _fwd_pair(ctx: Context, err):
    pair, out = _FWD_PAIR in err.message, _FWD_OUT in err.message
    if not pair:
        return None
    named = re.search(r"for function (\w+)", err.message)  # JAX names the decorated function
    rule = (jax_source.rule_of(ctx.tree, named.group(1)) if named and ctx.tree else None) or _rule(
        ctx
    )
    fwd = rule.fwd if rule is not None else None
    where = jax_source.return_line(ctx.file, fwd) if fwd is not None else err.where
    who = f" ({_name(fwd)})" if fwd is not None else ""
    if out:
        message = (
            f"The first element of the pair the fwd{who} of {_label(ctx, rule)} returns "
            f"is not structured as {_fn(ctx, rule)}'s own output; JAX takes it as the op's output "
            "and needs it to be exactly what the decorated function returns."
        )
        fix = (
            "Return `out, residuals` from fwd with `out` what the decorated function returns "
            "(e.g. return f(x), (x,)); everything else bwd needs goes in the residuals."
        )
    else:
        given = _given(fwd)
        message = (
            f"The fwd{who} of {_label(ctx, rule)} returns {given} where JAX needs a pair "
            "(output, residuals): the op's output, and the residuals bwd receives as its first "
            "argument."
        )
        fix = (
            "Return `out, residuals` from fwd, e.g. return jnp.sin(x), (jnp.cos(x),), and unpack "
            "the same structure in bwd (c, = res); return out, None when bwd needs nothing."
        )
    return ctx.finding("GV608-vjp-residuals", "error", message, fix, where)


def _given(fwd) -> str:
    exprs = jax_source.returned(fwd) if fwd is not None else []
    if len(exprs) == 1 and isinstance(exprs[0], ast.Tuple):
        return f"a tuple of {len(exprs[0].elts)}"
    if len(exprs) == 1:
        return f"one value (`{_short(exprs[0])}`)"
    return "no (output, residuals) pair"


def _short(node, limit: int = 60) -> str:
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _residuals(ctx: Context, err):
    """bwd failed taking its residuals apart at a line that reads them (the rule whose bwd holds
    the line: a Module may call several)."""
    if err.type not in _READ_TYPES:
        return None
    if err.type != "KeyError" and not _READ_FAILED.search(err.message):
        return None
    line = source.where_line(err.where)
    rule = jax_source.rule_holding(ctx.tree, line)
    if rule is None or rule.kind != "custom_vjp" or rule.bwd is None:
        return None
    bwd = rule.bwd
    names = jax_source.params(bwd)
    if not jax_source.contains(bwd, line) or len(names) <= rule.residual_index:
        return None
    res = names[rule.residual_index]
    stmt = _statement_at(bwd, line)
    if stmt is None or not any(isinstance(n, ast.Name) and n.id == res for n in ast.walk(stmt)):
        return None  # the failing line does not read the residuals: another mistake
    said = " ".join(err.message.split())[:120]
    message = (
        f"The bwd ({_name(bwd)}) of {_kind(rule)} {rule.primal.name} reads its residuals "
        f"'{res}' as another structure than fwd gives ({err.type}: {said}): `{_short(stmt)}`, where fwd "
        f"returns {_residual_given(rule)} as residuals. bwd receives exactly the second "
        "element of fwd's pair."
    )
    fix = (
        "Give fwd's residuals and bwd's unpacking one structure: return y, (a, b) from fwd and "
        "a, b = res in bwd; a single residual is return y, (c,) with c, = res (or use res as "
        "it is)."
    )
    return ctx.finding("GV608-vjp-residuals", "error", message, fix, err.where, tensor="")


def _statement_at(fn, line: int):
    if isinstance(fn, ast.Lambda):
        return fn.body
    best = None
    for n in source.own_nodes(fn):
        if isinstance(n, ast.stmt) and n.lineno <= line <= (n.end_lineno or n.lineno):
            best = n  # the innermost statement holding the line
    return best


def _residual_given(rule) -> str:
    exprs = jax_source.returned(rule.fwd) if rule.fwd is not None else []
    pairs = [e for e in exprs if isinstance(e, ast.Tuple) and len(e.elts) == 2]
    if len(pairs) != 1:
        return "its second value"
    r = pairs[0].elts[1]
    if isinstance(r, ast.Tuple):
        return f"a tuple of {len(r.elts)} (`{_short(r)}`)"
    if isinstance(r, ast.Dict):
        keys = ", ".join(_short(k) for k in r.keys if k is not None)
        return f"a dict with keys {keys}"
    if isinstance(r, ast.Constant) and r.value is None:
        return "None"
    return f"one value (`{_short(r)}`)"


def in_rule(ctx: Context, where: str) -> bool:
    """The line is in a fwd, bwd or tangent rule of the file: an error there is a JAX rule's."""
    if ctx.framework != Framework.JAX:
        return False
    return jax_source.rule_holding(ctx.tree, source.where_line(where)) is not None


def explains(ctx: Context, err) -> bool:
    """A JAX trap finding stands at the error's own line: no other check's story for it."""
    return bool(err.where) and any(f.where == err.where for f in findings(ctx))
