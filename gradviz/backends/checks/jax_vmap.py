"""vmap for JAX (run_one finds jax_check here; vmap.py holds torch's and TF's): jax.vmap of
jax.grad over a batch of the op's inputs must give each sample's own gradient, and upstream x
jax.jacrev's Jacobian the custom gradient. jacrev batches the cotangent, so it reaches a rule's
batching that vmap over the inputs may not (a host callback that sums over its whole array).
Worker-only."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradviz.backends.checks import jax_ops as J
from gradviz.backends.checks.float64_witness import unless_rounding
from gradviz.backends.checks.outcome import brief, compare, failed, first_line, passed, skipped
from gradviz.backends.checks.vmap import JACOBIAN_MAX, NAME, SAMPLES
from gradviz.backends.user_code import error_info
from gradviz.compare.metrics import tolerances
from gradviz.vocab import ErrorKind

_FIX_DIFFERS = (
    "A batched call must treat each sample alone: a host callback (jax.pure_callback) must "
    "handle the leading batch axis its vmap_method hands it, or say vmap_method='sequential'; "
    "a jax.custom_batching.custom_vmap rule must batch what it returns; no reduction over the "
    "whole array where the rule means one sample."
)
_WHY_CONCRETE = "the rule needs concrete values (numpy, float(), a Python branch on an array)"


def jax_check(ctx):
    if not ctx.tensor_plans():
        return skipped(NAME, f"{ctx.info.name} takes no tensor argument to batch")
    return unless_rounding(ctx, lambda dtype: _run(ctx, dtype))


def _raised(ctx, exc, during: str):
    err = error_info(exc, ErrorKind.ERROR, ctx.backward_where())
    concrete = J.needs_concrete(exc)
    return failed(
        NAME,
        "data_dependent" if concrete else "raised",
        f"{during} raised{': ' + _WHY_CONCRETE if concrete else ''} "
        f"({err.type}: {brief(first_line(err.message))})",
        err.where,
        J.FIX_TRACED,
    )


def _differs(ctx, what: str, detail: str):
    return failed(NAME, "differs", f"{what}: {detail}", ctx.backward_where(), _FIX_DIFFERS)


def _run(ctx, dtype: str):
    built = ctx.build("custom", dtype)
    with J.scope(ctx, dtype):
        samples = [J.arrays(ctx, dtype, variant=k) for k in range(SAMPLES)]
        names = list(samples[0])
        probe = J.outputs(ctx, built, samples[0])
        if not probe:
            return skipped(NAME, f"{ctx.info.name} returns no float output: nothing to batch")
        ups = J.upstreams(ctx, probe)
        grad = J.grad_fn(ctx, built, names, ups)
        alone = [[J.numpy(g) for g in grad(*s.values())] for s in samples]
        stacked = [jnp.stack([s[n] for s in samples]) for n in names]
        try:
            batched = jax.vmap(grad)(*stacked)
        except Exception as exc:  # noqa: BLE001 - JAX's refusal is the finding
            return _raised(ctx, exc, "jax.vmap(jax.grad(op))")
        tol = tolerances(dtype, numeric=True)  # batched kernels reorder float arithmetic
        for k, name in enumerate(names):
            for b in range(SAMPLES):
                ok, detail = compare(J.numpy(batched[k][b]), alone[b][k], tol)
                if not ok:
                    what = f"jax.vmap's per-sample gradient of {name} (sample {b}) differs from "
                    return _differs(ctx, what + "the sample run alone", detail)
        jac = _jacrev(ctx, built, samples[0], names, probe, ups, alone[0], tol)
    if jac.status == "fail":
        return jac
    return passed(
        NAME,
        f"jax.vmap of jax.grad over {SAMPLES} samples gives each sample's own gradient; "
        f"{jac.message}",
    )


def _jacrev(ctx, built, sample, names, probe, ups, alone, tol):
    xs = list(sample.values())
    size = sum(int(o.size) for o in probe) * sum(int(x.size) for x in xs)
    if size > JACOBIAN_MAX:
        return passed(NAME, "jax.jacrev skipped (Jacobian too large)")

    def outs(*a):
        return tuple(J.outputs(ctx, built, dict(zip(names, a))))

    try:
        jac = jax.jacrev(outs, argnums=tuple(range(len(xs))))(*xs)
    except Exception as exc:  # noqa: BLE001
        return _raised(ctx, exc, "jax.jacrev(op)")
    for k, name in enumerate(names):
        # jac[i][k]: output i's Jacobian for argument k, of shape out_i.shape + x_k.shape
        vjp = sum(jnp.tensordot(u, jac[i][k], axes=u.ndim) for i, u in enumerate(ups))
        ok, detail = compare(J.numpy(vjp), np.asarray(alone[k]), tol)
        if not ok:
            what = f"upstream x jax.jacrev's Jacobian for {name} differs from the custom gradient"
            return _differs(ctx, what, detail)
    return passed(NAME, "upstream x jax.jacrev's Jacobian equals the custom gradient")
