"""noncontiguous_upstream (torch; TF and JAX arrays have no strides: a skip there): real training
hands a backward upstream gradients that are transposed, sliced or expanded (the gradient of a
sum is a zero-stride expand). The backward must run on each and give the gradient it gives for a
contiguous upstream, without writing into it."""

from __future__ import annotations

from gradviz.backends.checks import draws
from gradviz.backends.checks.float64_witness import unless_rounding
from gradviz.backends.checks.outcome import brief, compare, failed, passed, skipped
from gradviz.backends.user_code import error_info
from gradviz.compare.metrics import tolerances
from gradviz.vocab import ErrorKind

NAME = "noncontiguous_upstream"
EXPAND_VALUE = 0.75
_FIX_VIEW = (
    "Use .reshape(...) (or .contiguous().view(...)) on the upstream gradient: .view "
    "needs contiguous memory, and upstreams are often transposed, sliced or expanded."
)
_FIX_INPLACE = (
    "Do not write into grad_output in place (mul_, add_, copy_, [...] = ); compute "
    "a new tensor (grad_output * k) or clone() it first."
)
_FIX_LAYOUT = (
    "Compute the gradient with shape-based tensor ops; do not rely on strides, "
    "data_ptr, as_strided or .storage() of the upstream (or call .contiguous() first)."
)


def tf_check(ctx):
    return skipped(
        NAME,
        "TensorFlow tensors have no strides: an upstream gradient is always dense and contiguous",
    )


def jax_check(ctx):
    return skipped(
        NAME,
        "JAX arrays have no strides or views: a rule is handed its cotangent as a dense array, "
        "and XLA chooses the memory layout",
    )


def torch_check(ctx):
    return unless_rounding(ctx, lambda dtype: _torch(ctx, dtype))


# what each layout of the upstream is called in a finding
_WHAT = {
    "transposed": "a transposed (column-major) upstream",
    "sliced": "a sliced (strided) upstream",
    "expanded": "an expanded (zero-stride) upstream",
}


def _torch(ctx, dtype: str):
    import torch

    from gradviz.backends.checks import torch_ops as T

    built = ctx.build("custom", dtype)

    def run(make):
        xs = T.leaves(ctx, dtype)
        outs = T.call(ctx, built, xs)
        ups = [make(i, o) for i, o in enumerate(outs)]
        before = [u.clone() for u in ups]
        grads = T.training_grads(outs, list(xs.values()), ups)
        written = any(not torch.equal(b, u) for b, u in zip(before, ups))
        return [T.numpy(g) for g in grads], written, len(outs)

    base, written, n_outs = run(_random_up)
    if not n_outs:
        return skipped(NAME, T.no_outputs(ctx))
    if written:
        return _inplace(ctx, "a contiguous upstream")
    flat, _, _ = run(
        lambda i, o: torch.full(tuple(o.shape), EXPAND_VALUE, dtype=o.dtype, device=o.device)
    )
    shapes = [tuple(o.shape) for o in T.call(ctx, built, T.leaves(ctx, dtype))]
    layouts = ["sliced", "expanded"] + (["transposed"] if any(len(s) >= 2 for s in shapes) else [])
    if not any(len(s) >= 1 for s in shapes):
        return skipped(NAME, "every output is a scalar: its upstream has no layout to vary")
    tol = tolerances(dtype)
    for layout in layouts:
        what = _WHAT[layout]
        try:
            got, written, _ = run(lambda i, o, layout=layout: _laid_out(layout, _random_up(i, o)))
        except Exception as exc:  # noqa: BLE001 - the framework's refusal is the finding
            return _refused(ctx, exc, what)
        if written:
            return _inplace(ctx, what)
        found = _unlike(ctx, what, got, flat if layout == "expanded" else base, tol)
        if found is not None:
            return found
    return passed(
        NAME,
        f"{', '.join(layouts)} upstreams give the contiguous upstream's "
        "gradient and are left unchanged",
    )


def _random_up(i, o):
    import torch

    return torch.as_tensor(
        draws.normal((5, i), tuple(o.shape)),
        dtype=o.dtype,
        device=o.device,
    )


def _laid_out(layout: str, u):
    """`u`'s values with the layout `layout` (an expanded upstream: EXPAND_VALUE everywhere)."""
    import torch

    if u.dim() == 0:
        return u  # a scalar has no layout to vary
    if layout == "transposed":
        return u.transpose(-1, -2).contiguous().transpose(-1, -2) if u.dim() >= 2 else u
    if layout == "sliced":
        wide = torch.zeros(tuple(u.shape[:-1]) + (2 * u.shape[-1],), dtype=u.dtype, device=u.device)
        view = wide[..., ::2] if u.dim() == 1 else wide[..., : u.shape[-1]]
        view.copy_(u)
        return view
    return torch.full((1,) * u.dim(), EXPAND_VALUE, dtype=u.dtype, device=u.device).expand(u.shape)


def _refused(ctx, exc: Exception, what: str):
    """The failure of a backward that raised on `what`: a .view, an in-place write, or else."""
    err = error_info(exc, ErrorKind.ERROR, ctx.backward_where())
    text = err.message
    if "view size is not compatible" in text or ".view" in text:
        return failed(
            NAME,
            "view",
            f"the backward calls .view on {what} and torch refuses: {_first(text)}",
            err.where,
            _FIX_VIEW,
        )
    if "more than one element of the written-to tensor" in text or "in-place" in text:
        return _inplace(ctx, what, err.where, _first(text))
    return failed(
        NAME,
        "raised",
        f"the backward raised {err.type} on {what}: {_first(text)}",
        err.where,
        _FIX_LAYOUT,
    )


def _unlike(ctx, what: str, got: list, ref: list, tol):
    """The failure where a gradient under `what` is not the contiguous upstream's; else None."""
    for k, (a, b) in enumerate(zip(got, ref)):
        if (a is None) != (b is None):
            return failed(
                NAME,
                "differs",
                f"with {what} the gradient of argument {k} is "
                f"{'missing' if a is None else 'present'} unlike with a "
                "contiguous one",
                ctx.backward_where(),
                _FIX_LAYOUT,
            )
        if a is None:
            continue
        ok, detail = compare(a, b, tol)
        if not ok:
            return failed(
                NAME,
                "differs",
                f"with {what} the gradient differs from the one "
                f"a contiguous upstream gives: {detail}",
                ctx.backward_where(),
                _FIX_LAYOUT,
            )
    return None


def _inplace(ctx, what: str, where: str = "", detail: str = ""):
    extra = f" ({detail})" if detail else ""
    return failed(
        NAME,
        "inplace",
        f"the backward writes into {what} in place{extra}: the "
        "caller's gradient buffer is corrupted (another branch of the graph, or "
        "gradient accumulation, sees the changed values)",
        where or ctx.backward_where(),
        _FIX_INPLACE,
    )


def _first(text: str) -> str:
    return brief(text)
