"""`gradviz run` imports what it needs after the run while the workers still start.

Once the results are in, the command line compares them (app.analysis: compare, diagnostics,
plots), writes the reports and, with --plot, starts Qt and the exporters: ~0.2-0.4 s of imports
(more where no bytecode is cached) that used to come after the last result. They run on a thread
of their own from the moment the first worker is ready: a core is free then, while the other
framework is still importing (TensorFlow takes about twice torch's time). The main thread waits
for them (`join`, also on leaving the `with` block) before it imports anything itself, so the two
never import at once.
"""

from __future__ import annotations

import threading


def _imports(plot: bool) -> None:
    import gradviz.app.analysis  # noqa: F401
    import gradviz.report  # noqa: F401

    if plot:
        import gradviz.qt.export  # noqa: F401
        from gradviz.qt.export.app import import_qt

        import_qt()


class WarmUp:
    def __init__(self, plot: bool):
        self.plot = plot
        self._thread: threading.Thread | None = None
        self._joined = False
        self._lock = threading.Lock()

    def on_state(self, state) -> None:
        """Engine(on_state=...): the first worker ready starts the imports."""
        if state.state != "ready":
            return
        with self._lock:
            if self._thread is None and not self._joined:
                self._thread = threading.Thread(
                    target=self._run, name="gradviz-warm-up", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        try:
            _imports(self.plot)
        except Exception:  # noqa: BLE001 - the step that needs the module reports its failure
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.join()

    def join(self) -> None:
        """Wait for the imports, if they started; none start after this."""
        with self._lock:
            self._joined = True
            thread = self._thread
        if thread is not None:
            thread.join()
