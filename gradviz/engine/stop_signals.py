"""Every way gradviz is asked to stop cleans up as Ctrl+C does (issue 26, item 6). SIGTERM (what
`timeout`, CI cancellation and `kill` send) and SIGHUP (a closed terminal) ended the process at
once, leaving its scratch folders in /dev/shm and a hidden partial `.tmp` report beside its
target. In the command line they now raise `Stopped`, a KeyboardInterrupt, in the main thread:
the same `with` blocks and `except` clauses that clean up after Ctrl+C (the Engine's workers and
folders, the atomic writer's temp file) run. The app closes its window instead (qt/app.py)."""

from __future__ import annotations

import signal

STOP_SIGNALS = tuple(
    getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)
)


class Stopped(KeyboardInterrupt):
    """gradviz was asked to stop by a signal; exit with 128 + its number, as a shell reports."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


def _stop(signum, _frame) -> None:
    for sig in STOP_SIGNALS:  # cleaning up is not interrupted by a second signal
        signal.signal(sig, signal.SIG_IGN)
    raise Stopped(signum)


def raise_on_stop() -> dict:
    """SIGINT, SIGTERM and SIGHUP raise Stopped in the main thread (a signal ignored already,
    as under nohup, stays ignored). Returns the handlers it replaced, for restore(); nothing
    changes when called from another thread (only the main thread may set handlers)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}
    before = {}
    for sig in STOP_SIGNALS:
        old = signal.getsignal(sig)
        if old is not signal.SIG_IGN or sig == signal.SIGINT:
            before[sig] = old
            signal.signal(sig, _stop)
    return before


def restore(before: dict) -> None:
    for sig, handler in before.items():
        signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
