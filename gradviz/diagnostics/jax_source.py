"""JAX rules in the user's source, read with ast (never imported): a custom_vjp's fwd and bwd, a
custom_jvp's jvp, and its nondiff_argnums. The rule is attached after the def, by
`f.defvjp(fwd, bwd)`, `f.defjvp(jvp)` / `@f.defjvp` or `f.defjvps(...)`; each part is a def at
module level or a lambda. An equinox.filter_custom_vjp (kind custom_vjp) has `@f.def_fwd` /
`@f.def_bwd`, and its bwd(residuals, grad_obj, perturbed, *args) returns the first argument's
cotangent alone."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from gradviz.diagnostics import source

KINDS = ("custom_vjp", "custom_jvp")


@dataclass(frozen=True)
class Rule:
    kind: str  # "custom_vjp" | "custom_jvp"
    primal: ast.FunctionDef
    fwd: ast.AST | None = None  # a def or a lambda
    bwd: ast.AST | None = None
    jvp: ast.AST | None = None
    nondiff: tuple[int, ...] = ()
    equinox: bool = False  # an equinox.filter_custom_vjp

    @property
    def residual_index(self) -> int:
        """bwd's parameter that receives fwd's residuals: after the nondiff arguments."""
        return 0 if self.equinox else len(self.nondiff)

    def upstream(self, params: list[str]) -> list[str]:
        """bwd's parameter that receives the cotangent of the output."""
        return params[1:2] if self.equinox else params[-1:]

    @property
    def gradient(self):
        """The function that holds the user's gradient: bwd, or the tangent rule."""
        return self.bwd if self.kind == "custom_vjp" else self.jvp


def kind_of(fn) -> tuple[str, tuple[int, ...]] | None:
    """(kind, nondiff_argnums) of a def decorated with jax.custom_vjp / custom_jvp, directly or
    through functools.partial(jax.custom_vjp, nondiff_argnums=...); ("filter_custom_vjp", ())
    for equinox's."""
    for d in getattr(fn, "decorator_list", ()):
        target, call = d, None
        if isinstance(d, ast.Call):
            call = d
            target = d.func
            if source.dotted(target).split(".")[-1] == "partial" and d.args:
                target = d.args[0]
        kind = source.dotted(target).split(".")[-1]
        if kind in (*KINDS, "filter_custom_vjp"):
            return kind, _nondiff(call)
    return None


def _nondiff(call) -> tuple[int, ...]:
    for kw in getattr(call, "keywords", ()):
        if kw.arg == "nondiff_argnums":
            try:
                value = ast.literal_eval(kw.value)
            except (ValueError, SyntaxError, TypeError):
                return ()
            return tuple(value) if isinstance(value, (tuple, list)) else (int(value),)
    return ()


def rule_of(tree, name: str) -> Rule | None:
    """The rule of the module-level custom_vjp / custom_jvp def `name`, with the parts the file
    attaches to it; None for any other name."""
    fn = source.top_level(tree, name)
    found = kind_of(fn) if isinstance(fn, source.FuncDef) else None
    if found is None:
        return None
    kind, nondiff = found
    equinox = kind == "filter_custom_vjp"
    parts: dict[str, ast.AST | None] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            parts.update(_attached(tree, stmt.value, name))
        if isinstance(stmt, source.FuncDef):
            for d in stmt.decorator_list:  # @f.defjvp, @f.def_fwd, @f.def_bwd
                part = _DECORATORS.get(source.dotted(d).removeprefix(f"{name}."))
                if part is not None and source.dotted(d).startswith(f"{name}."):
                    parts[part] = stmt
    return Rule(
        "custom_vjp" if equinox else kind,
        fn,
        parts.get("fwd"),
        parts.get("bwd"),
        parts.get("jvp"),
        nondiff,
        equinox,
    )


_DECORATORS = {"defjvp": "jvp", "defjvps": "jvp", "def_fwd": "fwd", "def_bwd": "bwd"}


def _attached(tree, call: ast.Call, name: str) -> dict:
    what = source.dotted(call.func)
    args = {**dict(enumerate(call.args)), **{kw.arg: kw.value for kw in call.keywords}}
    if what == f"{name}.defvjp":
        return {
            "fwd": _resolve(tree, args.get(0, args.get("fwd"))),
            "bwd": _resolve(tree, args.get(1, args.get("bwd"))),
        }
    if what in (f"{name}.defjvp", f"{name}.defjvps"):
        return {"jvp": _resolve(tree, args.get(0, args.get("jvp")))}
    part = _DECORATORS.get(what.removeprefix(f"{name}.")) if what.startswith(f"{name}.") else None
    if part in ("fwd", "bwd"):  # equinox's f.def_fwd(fn) written as a call
        return {part: _resolve(tree, args.get(0))}
    return {}


def _resolve(tree, node):
    if isinstance(node, ast.Lambda):
        return node
    if isinstance(node, ast.Name):
        fn = source.top_level(tree, node.id)
        return fn if isinstance(fn, source.FuncDef) else None
    return None


def all_rules(tree) -> list[Rule]:
    """Every module-level rule of the file."""
    found = (
        rule_of(tree, n.name) for n in (tree.body if tree else ()) if isinstance(n, source.FuncDef)
    )
    return [r for r in found if r is not None]


def rule_holding(tree, line: int) -> Rule | None:
    """The rule whose fwd, bwd or tangent rule holds `line`: whose code raised there."""
    for rule in all_rules(tree):
        if line and any(contains(fn, line) for fn in (rule.fwd, rule.bwd, rule.jvp)):
            return rule
    return None


def rules_called(tree, node) -> list[Rule]:
    """The rules a class's __call__ / forward (or a def's body) calls by their module-level
    name, in order: those of a flax / equinox Module that uses one."""
    fn = node
    if isinstance(node, ast.ClassDef):
        fn = source.method(node, "__call__") or source.forward_of(node)
    out: list[Rule] = []
    for n in ast.walk(fn) if fn is not None else ():
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            rule = rule_of(tree, n.func.id)
            if rule is not None and rule not in out:
                out.append(rule)
    return out


def op_rule(tree, qualname: str) -> Rule | None:
    """The op's own rule, or the first one it calls (a Module, a plain function)."""
    rule = rule_of(tree, qualname)
    if rule is not None:
        return rule
    node = source.top_level(tree, qualname)
    called = rules_called(tree, node) if node is not None else []
    return called[0] if called else None


def params(fn) -> list[str]:
    """A def's or a lambda's positional parameter names."""
    a = fn.args
    return [p.arg for p in a.posonlyargs + a.args]


def returned(fn) -> list[ast.AST]:
    """The expressions a def or a lambda returns."""
    if isinstance(fn, ast.Lambda):
        return [fn.body]
    return [r.value for r in source.returns(fn) if r.value is not None]


def return_line(path: str, fn) -> str:
    """Where a rule part gives its value: a lambda's line, a def's last return."""
    if isinstance(fn, ast.Lambda):
        return source.line_of(path, fn)
    return source.last_return_line(path, fn)


def contains(fn, line: int) -> bool:
    return fn is not None and fn.lineno <= line <= (fn.end_lineno or fn.lineno)
