"""The user's source, read with ast (never imported here): find an op's definition and the lines
that matter (the backward's return, a graph cut in forward, an assignment)."""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator

_cache: dict[str, tuple[float, ast.Module | None]] = {}

FuncDef = (ast.FunctionDef, ast.AsyncFunctionDef)


def parse(path: str) -> ast.Module | None:
    """The module's ast, or None if the file cannot be read or parsed. Cached by mtime."""
    try:
        mtime = os.path.getmtime(path)
    except OSError:
        return None
    hit = _cache.get(path)
    if hit and hit[0] == mtime:
        return hit[1]
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        tree = None
    _cache[path] = (mtime, tree)
    return tree


def top_level(tree: ast.Module | None, name: str):
    """The class or function defined at module level as `name` (last definition wins)."""
    found = None
    for node in tree.body if tree else ():
        if isinstance(node, (ast.ClassDef, *FuncDef)) and node.name == name:
            found = node
    return found


def method(cls, name: str):
    if not isinstance(cls, ast.ClassDef):
        return None
    for node in cls.body:
        if isinstance(node, FuncDef) and node.name == name:
            return node
    return None


def own_nodes(fn) -> Iterator[ast.AST]:
    """Nodes of a function's body, not descending into nested functions, lambdas or classes."""
    stack = list(reversed(fn.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (*FuncDef, ast.Lambda, ast.ClassDef)):
            continue  # a def in the body is the function's own node; its body is not
        for child in reversed(list(ast.iter_child_nodes(node))):
            if not isinstance(child, (*FuncDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)


def returns(fn) -> list[ast.Return]:
    return [n for n in own_nodes(fn) if isinstance(n, ast.Return)] if fn is not None else []


def params(fn, skip: int = 0) -> list[ast.arg]:
    a = fn.args
    return (a.posonlyargs + a.args)[skip:]


def param_defaults(fn) -> dict[str, ast.AST]:
    a = fn.args
    pos = a.posonlyargs + a.args
    out = {p.arg: d for p, d in zip(pos[len(pos) - len(a.defaults) :], a.defaults)}
    out.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    return out


def dotted(node) -> str:
    """'tf.custom_gradient' for an Attribute chain, '' for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def decorator_names(fn) -> list[str]:
    out = []
    for d in getattr(fn, "decorator_list", ()):
        out.append(dotted(d.func if isinstance(d, ast.Call) else d))
    return out


def is_classmethod(fn) -> bool:
    """A method decorated @classmethod (entmax's Functions: forward(cls, ctx, ...))."""
    return "classmethod" in decorator_names(fn)


def is_custom_gradient(fn) -> bool:
    return isinstance(fn, FuncDef) and any(
        n.split(".")[-1] == "custom_gradient" for n in decorator_names(fn)
    )


def grad_fn_of(fn):
    """The nested gradient function of a @tf.custom_gradient function: the def named in the
    last element of its returned tuple, else the last nested def."""
    nested = {n.name: n for n in fn.body if isinstance(n, FuncDef)}
    for ret in reversed(returns(fn)):
        if isinstance(ret.value, ast.Tuple) and ret.value.elts:
            last = ret.value.elts[-1]
            if isinstance(last, ast.Name) and last.id in nested:
                return nested[last.id]
    return list(nested.values())[-1] if nested else None


def line_of(path: str, node) -> str:
    return f"{path}:{node.lineno}" if node is not None and getattr(node, "lineno", 0) else ""


def backward_of(tree, qualname: str, _seen: set | None = None, module: bool = False):
    """The function holding the user's gradient for op `qualname`: a Function's backward, a
    custom_gradient's grad, or (for a Module / Layer) that of the first such op it calls.
    `module`: the op is a Module / Layer, whose own `backward` method autograd never calls (the
    seed tutorial's trap, GV607): it is not the op's gradient."""
    node = top_level(tree, qualname)
    if node is None:
        return None
    if isinstance(node, ast.ClassDef):
        bw = None if module else method(node, "backward")
        if bw is not None:
            return bw
        seen = (_seen or set()) | {qualname}
        fwd = method(node, "forward") or method(node, "call")
        for name in referenced_ops(tree, fwd):
            if name not in seen:
                found = backward_of(tree, name, seen)
                if found is not None:
                    return found
        return None
    return grad_fn_of(node) if is_custom_gradient(node) else None


def referenced_ops(tree, fn) -> list[str]:
    """Module-level names used in fn that are Function classes (X.apply) or custom_gradient defs."""
    if fn is None:
        return []
    out = []
    for n in ast.walk(fn):
        name = None
        if isinstance(n, ast.Attribute) and n.attr == "apply" and isinstance(n.value, ast.Name):
            name = n.value.id
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            name = n.func.id
        if name and name not in out:
            target = top_level(tree, name)
            if target is not None and (
                method(target, "backward") is not None or is_custom_gradient(target)
            ):
                out.append(name)
    return out


def last_return_line(path: str, fn) -> str:
    rets = returns(fn)
    return line_of(path, rets[-1] if rets else fn)


def forward_of(node):
    """The forward computation of an op definition."""
    if isinstance(node, ast.ClassDef):
        return method(node, "forward") or method(node, "call") or method(node, "__call__")
    return node


def where_line(where: str) -> int:
    try:
        return int(where.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        return 0


def enclosing_def(tree, line: int):
    """The innermost def containing `line`."""
    best = None
    for n in ast.walk(tree) if tree else ():
        if isinstance(n, FuncDef) and n.lineno <= line <= (n.end_lineno or n.lineno):
            if best is None or n.lineno >= best.lineno:
                best = n
    return best
