"""Gradients the way training takes them (torch), then the upstream probe. Worker-only.

The run's own gradient is `loss.backward()` and each leaf's `.grad` (inputs and parameters,
zeroed before), with the graph's named intermediates and outputs read by hooks as their
gradient arrives: a backward that writes a gradient into a leaf's `.grad` itself (a nested
`torch.autograd.backward` on a recomputed graph, reversible blocks, checkpointing) counts, as
it does in training; `torch.autograd.grad(loss, inputs)` returned None there.

The probe (runner's upstream_probe: the same VJP under a second, random upstream) is a second
backward, taken after the run's own gradient is read and copied, from zeroed `.grad`s, so
neither can change the other. A backward that can run only once (it frees its saved state)
raises there: the probe is skipped and why is kept; the op and its gradients stand.
"""

from __future__ import annotations

import torch

from gradviz.backends.upstream_probe import probe_skipped_reason


def training_grads(loss, targets: list, probe=None) -> tuple[dict, dict, str]:
    """({name: gradient tensor or None}, {name: probe gradient tensor}, why the probe was
    skipped or ""), for `targets` [(name, tensor, role)]; role "output" tensors are what the
    probe weighs, "input" / "param" what it reads."""
    live = [(n, t) for n, t, _ in targets if t.requires_grad]
    leaves = {id(t): t for _, t in live if t.is_leaf}
    arrived: list[dict] = [{}]  # the gradients of non-leaf tensors in the current backward
    handles = [t.register_hook(_keeper(arrived, n)) for n, t in live if not t.is_leaf]
    outs = [
        (n, t)
        for n, t, role in targets
        if role == "output" and t.requires_grad and t.is_floating_point()
    ]
    wrt = [
        (n, t)
        for n, t, role in targets
        if role in ("input", "param") and t.requires_grad and t.is_leaf
    ]
    probing = probe is not None and bool(outs) and bool(wrt) and loss.requires_grad
    try:
        grads = {n: None for n, _, _ in targets}
        if not loss.requires_grad:
            return grads, {}, ""
        _zero(leaves)
        loss.backward(retain_graph=probing)
        # copies: the probe's backward below must not reach what the run reports
        for n, t in live:
            g = t.grad if t.is_leaf else arrived[0].get(n)
            grads[n] = None if g is None else g.detach().clone()
        if not probing:
            return grads, {}, ""
        return grads, *_probe_backward(outs, wrt, leaves, arrived, probe)
    finally:
        for h in handles:
            h.remove()


def _probe_backward(outs, wrt, leaves, arrived, probe) -> tuple[dict, str]:
    ups = [
        torch.as_tensor(probe(n, tuple(t.shape)), dtype=t.dtype, device=t.device) for n, t in outs
    ]
    _zero(leaves)
    arrived[0] = {}
    try:
        torch.autograd.backward([t for _, t in outs], grad_tensors=ups)
    except Exception as exc:  # noqa: BLE001 - a backward that runs once: the probe alone goes
        return {}, probe_skipped_reason(exc)
    finally:
        arrived[0] = {}
    return {n: t.grad.detach().clone() for n, t in wrt if t.grad is not None}, ""


def first_backward() -> None:
    """One tiny backward as the probe takes it (an explicit upstream), when the worker imports
    torch: the first such call imports torch.fx's symbolic shapes and sympy (~0.2 s), which
    then belong to the framework's import (collector paused, then frozen: engine.import_gc)
    instead of the user's first op."""
    x = torch.ones(1, requires_grad=True)
    torch.autograd.backward([x * 2], grad_tensors=[torch.ones(1)])


def _keeper(arrived: list, name: str):
    """A hook that keeps a copy of the gradient as it arrives (a backward that writes into its
    upstream in place would change the very buffer autograd hands it), summed over the
    backwards one call runs (a nested backward through the same tensor)."""

    def keep(g):
        got = arrived[0].get(name)
        arrived[0][name] = g.detach().clone() if got is None else got + g.detach()

    return keep


def _zero(leaves: dict) -> None:
    for t in leaves.values():
        t.grad = None
