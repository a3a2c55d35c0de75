"""What gradviz relies on to build, differentiate and read back gradients, bound before any
user code runs (issue 26, item 5). A file that replaced `torch.Tensor.numpy` at import made
another file's wrong backward read `match` (exit 0 with --strict): every later read of every
gradient went through the patch.

At a worker's first user import (user_state.own_state) the attributes below are recorded as
their owners hold them: the conversions (`Tensor.numpy`, `__array__`, `detach`, `cpu`, `to`, the
dtype casts), autodiff (`torch.autograd.grad` / `backward`, `Tensor.backward`, `GradientTape`
and its methods), the constructors (`torch.tensor`, `from_numpy`, `tf.constant`,
`convert_to_tensor`, `cast`) and numpy's (`asarray`, `array`). Each class of a tensor type's
MRO is watched, so a patch on any of them counts. After every import of and call into a user's
file, whatever differs from the record is put back and named, for that file's result to say so:
no file's patch reaches another file's run, nor its own later ones."""

from __future__ import annotations

import sys

_MISSING = object()

_TENSOR_ATTRS = (
    "numpy",
    "__array__",
    "detach",
    "cpu",
    "to",
    "double",
    "float",
    "clone",
    "backward",
    "grad",
    "requires_grad_",
    "tolist",
    "item",
    "__float__",
    "contiguous",
)
_TORCH = {
    "": (
        "tensor",
        "as_tensor",
        "from_numpy",
        "zeros_like",
        "ones_like",
        "enable_grad",
        "no_grad",
        "set_grad_enabled",
        "is_grad_enabled",
    ),
    "autograd": ("grad", "backward"),
}
_TF = {
    "": (
        "GradientTape",
        "constant",
        "convert_to_tensor",
        "cast",
        "Variable",
        "stop_gradient",
        "identity",
        "zeros_like",
        "ones_like",
    )
}
_TAPE_ATTRS = ("gradient", "watch", "__enter__", "__exit__", "jacobian")
_NUMPY = ("asarray", "array", "ascontiguousarray", "copy", "allclose", "isfinite")

_record: dict[tuple[int, str], tuple[object, str, object]] | None = None


def _owners() -> list[tuple[object, tuple[str, ...]]]:
    """(object, attribute names) for the frameworks loaded now."""
    found: list[tuple[object, tuple[str, ...]]] = []
    np = sys.modules.get("numpy")
    if np is not None:
        found.append((np, _NUMPY))
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "Tensor"):
        found += [(c, _TENSOR_ATTRS) for c in torch.Tensor.__mro__ if c is not object]
        for sub, names in _TORCH.items():
            found.append((getattr(torch, sub) if sub else torch, names))
    tf = sys.modules.get("tensorflow")
    if tf is not None and hasattr(tf, "constant"):
        try:
            eager = type(tf.constant(0.0))
        except Exception:  # noqa: BLE001 - a TF that cannot make a tensor: watch the rest
            eager = object
        classes = {c for c in (*eager.__mro__, *tf.Variable.__mro__) if c is not object}
        found += [(c, _TENSOR_ATTRS) for c in classes]
        found.append((tf, _TF[""]))
        found += [(c, _TAPE_ATTRS) for c in tf.GradientTape.__mro__ if c is not object]
    return found


def _held(owner, name: str):
    return vars(owner).get(name, _MISSING)


def _label(owner, name: str) -> str:
    if isinstance(owner, type):  # torch._tensor.Tensor -> torch.Tensor, as users name it
        parts = owner.__module__.split(".")
        public = [
            p for i, p in enumerate(parts) if not any(q.startswith("_") for q in parts[: i + 1])
        ]
        return f"{'.'.join(public or parts)}.{owner.__qualname__}.{name}"
    return f"{owner.__name__}.{name}"


def bind() -> None:
    """Record the watched attributes as they are now (once: before any user code runs)."""
    global _record
    if _record is None:
        _record = {(id(o), n): (o, n, _held(o, n)) for o, names in _owners() for n in names}


def undo_patches() -> list[str]:
    """Put back every watched attribute a user's code changed; returns what it changed
    ("torch.Tensor.numpy"), in a stable order."""
    if _record is None:
        return []
    changed = []
    for owner, name, kept in _record.values():
        if _held(owner, name) is kept:
            continue
        try:
            if kept is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, kept)
        except (AttributeError, TypeError):
            continue
        changed.append(_label(owner, name))
    return sorted(changed)
