"""The app's quick pass kept in the worker for the numeric pass of the same request.

The app runs an op twice (engine.passes: QUICK, then NUMERIC): custom and default first, then in
full with the numeric reference. The second pass used to differentiate the op again and send
every gradient back a second time; now the worker keeps what the first pass made (the op as
built, its graph, the tensors and their gradients) and the second pass only adds the numeric
reference. What is kept is bounded (the oldest goes first) and taken once; a request the store
no longer holds, or whose file changed since, runs in full as before.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np

from gradviz.model import RunRequest

KEEP_MAX_BYTES = 512 << 20  # a batch of big ops keeps what fits; the rest runs again in full


@dataclass
class QuickRun:
    """What the quick pass of one request made, as the numeric pass needs it."""

    module: object
    info: object
    obj: object
    meta: dict
    plans: list
    graph: object
    device: str
    tensors: dict  # runner's working dict: name -> {"role", "value", "grads", "absent"}
    nbytes: int = 0


def tensor_bytes(tensors: dict) -> int:
    n = 0
    for t in tensors.values():
        n += np.asarray(t["value"]).nbytes if t["value"] is not None else 0
        n += sum(np.asarray(g).nbytes for g in t["grads"].values())
    return n


def keep_bound(memory_limit: int) -> int:
    """What a worker may keep: a quarter of its memory limit (GRADVIZ_WORKER_MEMORY, which the
    parent enforces by killing it), at most KEEP_MAX_BYTES; with a low limit it keeps less and
    runs the rest again in full rather than being killed for what it kept."""
    return min(KEEP_MAX_BYTES, memory_limit // 4) if memory_limit > 0 else KEEP_MAX_BYTES


class KeptRuns:
    def __init__(self, max_bytes: int = KEEP_MAX_BYTES):
        self.max_bytes = max_bytes
        self._runs: OrderedDict[RunRequest, QuickRun] = OrderedDict()

    def put(self, req: RunRequest, run: QuickRun) -> bool:
        """Keep `run` under its (quick) request, dropping the oldest to stay under the bound."""
        self._runs.pop(req, None)
        run.nbytes = tensor_bytes(run.tensors)
        if run.nbytes > self.max_bytes:
            return False
        while self._runs and self.bytes() + run.nbytes > self.max_bytes:
            self._runs.popitem(last=False)
        self._runs[req] = run
        return True

    def take(self, req: RunRequest) -> QuickRun | None:
        return self._runs.pop(req, None)

    def clear(self) -> None:
        self._runs.clear()

    def bytes(self) -> int:
        return sum(r.nbytes for r in self._runs.values())

    def __len__(self) -> int:
        return len(self._runs)


def quick_request(req: RunRequest) -> RunRequest:
    """The quick pass of `req` as the engine asks for it: the same request without numeric."""
    modes = tuple(m for m in req.settings.modes if m != "numeric")
    return replace(req, settings=req.settings.with_(modes=modes))
