"""The upstream probe: the op's backward once more under a second, random upstream.

A backward that ignores or misuses its incoming gradient (g.mean(), g.abs()) can equal the true
gradient under upstream ones (the default) and read match; every correct backward is linear in
it, so custom and default must agree under any upstream. The adapters take it as a second
backward after the run's own (torch_grads, tf_backend); where the op's backward cannot run a
second time the probe is skipped, with the reason (RunResult.probe_skipped). Framework-free.
"""

from __future__ import annotations

import numpy as np

from gradviz.backends.user_code import error_info
from gradviz.compare.metrics import pair_metrics, tolerances
from gradviz.seeds import upstream_values

PROBE_MAX = 1 << 17  # elements of an op's inputs and weights up to which the probe runs


def probe_upstream(s, plans):
    """`(name, shape) -> array`: the second upstream for the probe, or None when none is taken.
    Taken where it is cheap and means that: a constant upstream on the op graph (whose loss
    weights the op's outputs directly), custom and default both run, inputs of at most
    PROBE_MAX elements."""
    if s.graph != "op" or s.upstream == "random" or not {"custom", "default"} <= set(s.modes):
        return None
    if sum(int(np.size(p.values)) for p in plans if p.kind == "tensor") > PROBE_MAX:
        return None
    random = s.with_(upstream="random", seed=s.seed + 1)
    return lambda name, shape: upstream_values(random, name, tuple(shape))


def probe_skipped_reason(exc: BaseException) -> str:
    """Why the probe was skipped, when its second backward raised (the user's file:line)."""
    err = error_info(exc)
    message = err.message.splitlines()[0] if err.message else ""
    if len(message) > 200:
        message = message[:200] + "..."
    at = f" at {err.where}" if err.where else ""
    return (
        "the upstream probe (a second backward under a random upstream) was skipped: the "
        f"op's backward raised when run a second time ({err.type}{at}: {message}); a "
        "backward that frees its saved state runs once, as in training, so whether it is "
        "linear in its upstream was not checked"
    )


def compare_probes(tensors: dict, dtype: str) -> None:
    """custom vs default under the probe's upstream, per tensor, into entry["probe"]; the probe
    gradients themselves go (they are not sent, nor kept with a quick pass). "as_numeric": the
    same at the tolerance against numeric, for where default stands in for numeric under the
    probe's upstream (judge._agrees): custom then needs to agree with it as it did with numeric."""
    for entry in tensors.values():
        probes = entry.pop("probes", {})
        c, d = probes.get("custom"), probes.get("default")
        if c is not None and d is not None:
            as_numeric = pair_metrics(c, d, tolerances(dtype, numeric=True))
            entry["probe"] = {
                **pair_metrics(c, d, tolerances(dtype)).as_dict(),  # plain data
                "as_numeric": as_numeric.as_dict(),
            }
