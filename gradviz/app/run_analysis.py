"""The analyses of one window run, made as the engine's typed pass events come (engine.passes):
one lane per framework, a thread taking that framework's events in their order. Both
frameworks' partial results of an op arrive together and are analysed together (numpy lets go
of the GIL); an op's events stay in the engine's order (partial, final, checks) since they are
all in its framework's lane, and a final result reuses what its partial's analysis worked out.
The lane that brings a pair's last final result of the run makes the pair's parity.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from gradviz.model import OpKey

_END = object()  # a lane's last item


class RunAnalysis:
    """`put` each ResultArrived / ChecksArrived (from any thread); `on_result(Analysis)`,
    `on_checks(RunResult)` and `on_parity(pair, [Analysis])` are called from the lanes, an op's
    in its events' order; `close()` returns once every event put is through. `pairs`: {OpKey:
    (pair name, final analyses of the pair's ops not in this run)}; `cancelled()`: no parity is
    made once it says True (the run is being stopped)."""

    def __init__(
        self,
        on_result: Callable,
        on_checks: Callable,
        on_parity: Callable | None = None,
        pairs: dict | None = None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> None:
        self.on_result, self.on_checks, self.on_parity = on_result, on_checks, on_parity
        self.cancelled = cancelled
        self.pairs = pairs or {}
        self.expected: dict[str, int] = {}
        for pair, _ in self.pairs.values():
            self.expected[pair] = self.expected.get(pair, 0) + 1
        self._finals: dict[str, list] = {}
        self._lanes: dict[str, tuple[queue.SimpleQueue, threading.Thread]] = {}
        self._lock = threading.Lock()

    def put(self, event) -> None:
        fw = event.result.request.framework
        with self._lock:
            lane = self._lanes.get(fw)
            if lane is None:
                q: queue.SimpleQueue = queue.SimpleQueue()
                t = threading.Thread(
                    target=self._lane, args=(q,), name=f"gradviz-analyze-{fw}", daemon=True
                )
                lane = self._lanes[fw] = (q, t)
                t.start()
        lane[0].put(event)

    def close(self) -> None:
        with self._lock:
            lanes = list(self._lanes.values())
        for q, _ in lanes:
            q.put(_END)
        for _, t in lanes:
            t.join()

    def pending(self, pair: str) -> bool:
        """Whether this run has ops of `pair` (so its parity may still come)."""
        return pair in self.expected

    def _lane(self, q: queue.SimpleQueue) -> None:
        from gradviz.engine.passes import ResultArrived

        partials: dict[OpKey, object] = {}  # op -> its partial analysis, till its final
        while (event := q.get()) is not _END:
            if not isinstance(event, ResultArrived):  # ChecksArrived: after its result
                self.on_checks(event.result)
                continue
            key = OpKey.of_request(event.result.request)
            ready = _analyze(event.result, partials.pop(key, None))
            if ready.result.partial:
                partials[key] = ready
            self.on_result(ready)
            if not ready.result.partial:
                try:
                    self._paired(ready)
                except Exception:  # noqa: BLE001 - the lane goes on; asked for, the pair's
                    pass  # parity is made again (qt/parity_worker.py), its error in its row

    def _paired(self, ready) -> None:
        entry = self.pairs.get(OpKey.of_request(ready.result.request))
        if entry is None or self.on_parity is None:
            return
        pair, partners = entry
        with self._lock:
            got = self._finals.setdefault(pair, [])
            got.append(ready)
            if len(got) != self.expected[pair]:
                return
            members = [*got, *partners]
        if not self.cancelled():
            from gradviz.app.parity_rows import pair_parity

            self.on_parity(pair, pair_parity(pair, members))


def _analyze(result, partial):
    """The final result of an op shares its partial's custom and default arrays
    (engine.numeric_pass): what the partial's analysis worked out from them is reused."""
    from gradviz.app.analysis import Analysis, analyze

    try:
        return analyze(result, earlier=partial)
    except Exception as exc:  # noqa: BLE001 - the result must still reach the window
        return Analysis(result, None, {}, f"{type(exc).__name__}: {exc}")
