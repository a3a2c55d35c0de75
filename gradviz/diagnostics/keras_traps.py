"""Keras 3 / TensorFlow tutorial traps: `self.weights = ...` (GV601), a variable read inside a
@tf.custom_gradient without `variables=` (GV602), and a call()/forward() that returns
`(output, grad_fn)` without registering anything (GV603); a variables= list of the wrong
length (GV101); a call() that unpacks one argument into several tensors, the Keras
`call(self, inputs): a, b = inputs` (GV606)."""

from __future__ import annotations

import ast
import re

from gradviz.diagnostics import jax_traps, source
from gradviz.diagnostics.context import Context

_NO_SETTER = re.compile(
    r"property '(\w+)' of '(\w+)' object has no setter|can't set attribute"
    r"(?: '(\w+)')?"
)
_VARIABLES = "must accept keyword argument 'variables'"
_VARIABLE_COUNT = "Must return gradient for each variable from @custom_gradient grad_fn"
_VAR_NAME = re.compile(r"<tf\.Variable '([^']+)'")
# Read-only properties of every Keras 3 Layer that tutorials used to assign.
READ_ONLY = (
    "weights",
    "trainable_weights",
    "non_trainable_weights",
    "variables",
    "trainable_variables",
    "non_trainable_variables",
)


def check(ctx: Context) -> list:
    out = []
    for _, err in ctx.errors():
        out += weights_assignment(ctx.file, ctx.tree, err, ctx)
        if _VARIABLES in err.message:
            out.append(_missing_variables(ctx, err))
        if _VARIABLE_COUNT in err.message:
            out.append(_variable_grad_count(ctx, err))
    out += _call_returns_grad_fn(ctx)
    out += _unpacks_one_argument(ctx)
    return out


def _variable_grad_count(ctx: Context, err):
    """TensorFlow's words name neither count nor variables (GV101 for the variables= list)."""
    message = (
        "The grad function of a @tf.custom_gradient returns a variables= list whose length "
        'is not the number of variables the function reads (TensorFlow: "Must return '
        'gradient for each variable"); it needs exactly one gradient per entry of '
        "`variables`, in that order, None for one that gets none."
    )
    fix = (
        "Return one gradient per entry of `variables`, in its order; print([v.name for v in "
        "variables]) inside grad to see which variables TensorFlow found."
    )
    return ctx.finding("GV101-grad-count", "error", message, fix, err.where or ctx.op_where())


_UNPACK = re.compile(r"(?:too many|not enough) values to unpack")


def _unpacks_one_argument(ctx: Context) -> list:
    """Python's "too many values to unpack (expected 2)" at `a, b = inputs` does not say that
    gradviz passes one tensor per argument and a list of tensors in one argument is not fed."""
    found = ctx.error_matching(_UNPACK)
    if found is None or jax_traps.in_rule(ctx, found[1].where):
        return []  # a JAX rule's residuals (GV608), not an argument of the op
    err = found[1]
    args = list(ctx.result.op.args) if ctx.result.op is not None else []
    arg = f"'{args[0]}'" if len(args) == 1 else "an argument"
    shape = tuple(ctx.result.request.settings.shape)
    # Keras puts "Exception encountered when calling ..." before Python's words
    said = next(ln.strip() for ln in err.message.splitlines() if _UNPACK.search(ln))
    message = (
        f"The op unpacks {arg} into several tensors ({err.type}: {said[:120]}), "
        "but gradviz passes one tensor to each argument (here of shape "
        f"{shape}), never a list or tuple of tensors: a call(self, inputs) that takes "
        "several tensors in one argument cannot be fed."
    )
    fix = (
        "Give each tensor its own argument (def call(self, a, b)); for a layer you cannot "
        "change, a small wrapper Layer whose call(self, a, b) returns Inner()([a, b]) is "
        "the op."
    )
    return [
        ctx.finding(
            "GV606-one-argument-unpacked", "error", message, fix, err.where or ctx.op_where()
        )
    ]


def weights_assignment(
    path, tree, err, ctx: Context = None, framework: str = "tf", op: str = ""
) -> list:
    m = _NO_SETTER.search(err.message)
    if not m:
        return []
    attr = m.group(1) or m.group(3) or ""
    if attr and attr not in READ_ONLY:
        return []
    node = _find_self_assign(tree, attr or None, source.where_line(err.where))
    attr = attr or (node.targets[0].attr if node is not None else "weights")
    where = source.line_of(path, node) or err.where
    message = (
        f"`self.{attr} = ...` assigns a read-only property of every Keras 3 Layer, so "
        f'constructing the layer fails with "{err.message}".'
    )
    fix = (
        f'Store the weight under another name, e.g. `self.w = self.add_weight(name="{attr}", '
        "shape=...)`, and use self.w in call()."
    )
    if ctx is not None:
        return [ctx.finding("GV601-keras-weights-assign", "error", message, fix, where)]
    from gradviz.diagnostics.finding import CODES, Finding

    return [
        Finding(
            "GV601-keras-weights-assign",
            "error",
            CODES["GV601-keras-weights-assign"],
            message,
            fix,
            where,
            framework,
            op,
        )
    ]


def _find_self_assign(tree, attr, line: int):
    best = None
    for n in ast.walk(tree) if tree else ():
        if isinstance(n, (ast.Assign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if (
                    isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "self"
                    and (t.attr == attr or (attr is None and t.attr in READ_ONLY))
                ):
                    if n.lineno == line:
                        return n
                    best = best or n
    return best


def _missing_variables(ctx: Context, err):
    names = _VAR_NAME.findall(err.message)
    var = f" (variable '{names[0]}')" if names else ""
    fn = source.top_level(ctx.tree, ctx.qualname)
    if not source.is_custom_gradient(fn):
        enclosing = source.enclosing_def(ctx.tree, source.where_line(err.where) + 2)
        fn = enclosing if source.is_custom_gradient(enclosing) else None
    if fn is None:
        fn = next(
            (n for n in (ctx.tree.body if ctx.tree else ()) if source.is_custom_gradient(n)), None
        )
    grad = source.grad_fn_of(fn) if fn is not None else None
    where = source.line_of(ctx.file, grad) or err.where
    gname = grad.name if grad is not None else "grad"
    return ctx.finding(
        "GV602-tf-missing-variables",
        "error",
        f"The @tf.custom_gradient function reads a variable{var} directly, so TensorFlow demands "
        f"that `{gname}` accept a `variables=` keyword, and it does not.",
        f"Pass the variable in as an argument converted with tf.convert_to_tensor(var), or write "
        f"`def {gname}(upstream, variables=None)` returning (input_grads, [grad per variable]).",
        where,
    )


def _call_returns_grad_fn(ctx: Context) -> list:
    if not isinstance(ctx.node, ast.ClassDef) or source.method(ctx.node, "backward") is not None:
        return []
    fwd = source.method(ctx.node, "call") or source.method(ctx.node, "forward")
    if fwd is None:
        return []
    local_defs = {n.name for n in fwd.body if isinstance(n, source.FuncDef)}
    for ret in source.returns(fwd):
        v = ret.value
        if isinstance(v, ast.Tuple) and len(v.elts) >= 2:
            last = v.elts[-1]
            if isinstance(last, ast.Lambda) or (
                isinstance(last, ast.Name) and last.id in local_defs
            ):
                name = "a lambda" if isinstance(last, ast.Lambda) else f"`{last.id}`"
                meth = fwd.name
                return [
                    ctx.finding(
                        "GV603-call-returns-grad-fn",
                        "error",
                        f"{meth}() returns (output, {name.strip('`').replace('a lambda', 'lambda')}) "
                        "as a @tf.custom_gradient function would, "
                        f"but without the decorator nothing registers {name}: it is just a second "
                        "output and gradients come from the framework's own backward.",
                        "Move the forward and its gradient into a module-level function decorated "
                        f"with @tf.custom_gradient (torch: an autograd.Function) and call that from "
                        f"{meth}(), returning only the output.",
                        source.line_of(ctx.file, ret),
                    )
                ]
    return []
