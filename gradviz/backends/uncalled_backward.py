"""The seed tutorial's trap: an nn.Module or Keras Layer with a `backward()` (or `grad`,
`custom_grad`, `get_gradient`...) method. Autograd and Keras differentiate forward / call
themselves and never call such a method, so the gradient it computes is never applied, and a
run of the op finds custom = default = numeric: `match`, while the intended gradient is lost.
Worker-only.

Told by watching, not guessed from names alone: for the custom run, each backward-shaped method
the op's classes define (not the framework's) is wrapped at class level and records its calls,
and every custom gradient of the user's that runs is recorded (torch: a Function's backward or a
custom op's registered formula; TF: a custom_gradient). A method nothing called during forward
and backward is reported (RunResult.uncalled_backward); where no custom gradient ran at all
either (RunResult.no_own_gradient), the custom mode was the framework's own autodiff and the
verdict says the custom gradient was not found. A class that registers hooks (register_hook,
register_full_backward_hook) may change gradients that way: no_own_gradient is not claimed.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import os
import textwrap

from gradviz.backends.introspect import where_of
from gradviz.user_frames import is_user_frame

# words of a method name that say it computes a gradient (split at "_", lowercase)
_GRAD_WORDS = {
    "backward",
    "backwards",
    "grad",
    "grads",
    "gradient",
    "gradients",
    "vjp",
    "bwd",
    "backprop",
}
# a word that makes it a utility about gradients, not a gradient formula (zero_grad,
# clip_grad_norm, gradient_checkpointing_enable, register_backward_hook, enable_input_require_grads)
_UTILITY_WORDS = {
    "zero",
    "requires",
    "require",
    "no",
    "enable",
    "enabled",
    "disable",
    "disabled",
    "set",
    "clip",
    "clipping",
    "register",
    "hook",
    "hooks",
    "retain",
    "accumulate",
    "apply",
    "reset",
    "clear",
    "freeze",
    "unfreeze",
    "toggle",
    "checkpointing",
    "checkpoint",
    "compat",
    "compatibility",
    "is",
    "has",
    "supports",
    "norm",
    "norms",
    "scale",
    "scaler",
    "penalty",
    "stats",
    "log",
    "logging",
    "plot",
}
_FRAMEWORKS = ("torch", "tensorflow", "keras", "tf_keras", "builtins", "functorch", "abc", "typing")
# calls that run a framework's autodiff: a method making them uses gradients, it is not one
_AUTODIFF_CALLS = {"GradientTape", "gradient", "grad", "backward", "vjp", "jacobian"}
_WATCHED_KINDS = ("module", "layer")


def backward_shaped(name: str) -> bool:
    words = [w for w in name.lower().strip("_").split("_") if w]
    if not words or any(w in _UTILITY_WORDS for w in words):
        return False
    return any(w in _GRAD_WORDS or "backward" in w for w in words)


def _own_classes(cls) -> list:
    """cls and its bases written by the user: not the framework's, not an installed package's
    (whose methods are that package's business, not the tutorial's trap)."""
    out = []
    for klass in inspect.getmro(cls):
        if klass.__module__.split(".")[0] in _FRAMEWORKS:
            continue
        try:
            path = inspect.getsourcefile(klass) or ""
        except TypeError:
            continue
        if is_user_frame(os.path.abspath(path)):
            out.append(klass)
    return out


def _function_of(raw):
    if isinstance(raw, (staticmethod, classmethod)):
        return raw.__func__
    return raw if inspect.isfunction(raw) else None


def _parsed(fn) -> ast.AST | None:
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return None


def _takes_an_argument(fn, raw) -> bool:
    params = list(inspect.signature(fn).parameters.values())
    if not isinstance(raw, staticmethod):
        params = params[1:]  # self / cls
    return bool(params)


def _runs_autodiff(node) -> bool:
    """tape.gradient(...), torch.autograd.grad(...), loss.backward(), tf.GradientTape(): not
    a call of the class's own methods (self.grad(g) inside backward is a formula's helper)."""
    for n in ast.walk(node):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        if isinstance(f, ast.Name) and f.id in _AUTODIFF_CALLS:
            return True
        if (
            isinstance(f, ast.Attribute)
            and f.attr in _AUTODIFF_CALLS
            and not (isinstance(f.value, ast.Name) and f.value.id in ("self", "cls"))
        ):
            return True
    return False


def candidates(cls) -> list[tuple[type, str, object]]:
    """(defining class, name, raw attribute) of each backward-shaped method of the op's own
    classes: a plain, static or class method taking an argument besides self, that does not run
    the framework's autodiff itself (a helper computing gradients with a tape is not a backward).
    The first definition in the MRO wins, as attribute lookup does."""
    out, taken = [], set()
    for klass in _own_classes(cls):
        for name, raw in vars(klass).items():
            if name in taken or not backward_shaped(name):
                continue
            fn = _function_of(raw)
            if fn is None:
                continue
            taken.add(name)
            node = _parsed(fn)
            if not _takes_an_argument(fn, raw) or (node is not None and _runs_autodiff(node)):
                continue
            out.append((klass, name, raw))
    return out


def _registers_hooks(cls) -> bool:
    for klass in _own_classes(cls):
        for raw in vars(klass).values():
            node = _parsed(_function_of(raw)) if _function_of(raw) is not None else None
            if node is not None and any(
                isinstance(n, ast.Attribute) and "hook" in n.attr for n in ast.walk(node)
            ):
                return True
    return False


def _recording(raw, name: str, called: set):
    fn = _function_of(raw)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        called.add(name)
        return fn(*args, **kwargs)

    if isinstance(raw, staticmethod):
        return staticmethod(wrapper)
    if isinstance(raw, classmethod):
        return classmethod(wrapper)
    return wrapper


def _where(klass, name: str, raw) -> str:
    at = where_of(_function_of(raw))
    return f"{klass.__qualname__}.{name}" + (f" at {at}" if at else "")


class Watch:
    """What the custom run showed: uncalled (list of "Class.name at file:line") and whether no
    custom gradient of the user's ran (None: not known)."""

    def __init__(self):
        self.uncalled: tuple[str, ...] = ()
        self.no_own_gradient = False


def _gradients_seen(framework: str):
    if framework == "jax":  # a JAX Module's gradient is its rule's: nothing to count here
        return contextlib.nullcontext(None)
    if framework == "torch":
        from gradviz.backends.torch_overrides import custom_backwards_seen

        return custom_backwards_seen()
    from gradviz.backends.tf_overrides import custom_gradients_seen

    return custom_gradients_seen()


@contextlib.contextmanager
def watching(obj, kind: str, framework: str):
    """Around the custom run of op `obj`: yields a Watch, filled in when the run completes (a
    run that raised tells nothing: the backward may not have been reached)."""
    watch = Watch()
    found = candidates(obj) if kind in _WATCHED_KINDS and inspect.isclass(obj) else []
    if not found:
        yield watch
        return
    called: set = set()
    for klass, name, raw in found:
        setattr(klass, name, _recording(raw, name, called))
    try:
        with _gradients_seen(framework) as seen:
            yield watch
    finally:
        for klass, name, raw in found:
            setattr(klass, name, raw)
    watch.uncalled = tuple(_where(k, n, raw) for k, n, raw in found if n not in called)
    watch.no_own_gradient = (
        bool(watch.uncalled) and seen is not None and not seen and not _registers_hooks(obj)
    )
