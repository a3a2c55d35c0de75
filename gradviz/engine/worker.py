"""The loop inside a worker process: import one framework once, then serve requests.

Runs only in a spawned child. Messages are (kind, payload) tuples; every reply is ("ok", value)
or ("fail", ErrorInfo). User code runs under capture.run_captured, so its failures are results.
"""
from __future__ import annotations

import os
import sys
import threading
import time


def _watch_parent(parent_pid: int) -> None:
    # A hung op keeps the main thread busy, so EOF on the pipe is not enough to notice a dead parent.
    while True:
        time.sleep(0.5)
        if os.getppid() != parent_pid:
            os._exit(0)


def child_main() -> None:
    """Entry point of `python -c ...` started by engine.pool: argv = fd framework parent log."""
    from multiprocessing.connection import Connection
    fd, framework, parent_pid, crash_log = sys.argv[1:5]
    import faulthandler
    # A segfault in user code leaves its Python stack here, for the parent to point at file:line.
    crash_file = open(crash_log, "w")
    faulthandler.enable(file=crash_file, all_threads=False)
    main(Connection(int(fd)), framework, int(parent_pid))


def main(conn, framework: str, parent_pid: int) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()
    t0 = time.perf_counter()
    try:
        from gradviz.backends import load_backend
        backend = load_backend(framework)
    except BaseException as exc:  # noqa: BLE001 - tell the parent why the framework is missing
        conn.send(("fail", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", {"version": backend.version(), "import_s": time.perf_counter() - t0,
                         "pid": os.getpid()}))
    while True:
        try:
            kind, payload = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if kind == "stop":
            return
        try:
            reply = ("ok", backend.handle(kind, payload))
        except BaseException as exc:  # noqa: BLE001 - a bug in gradviz itself; keep serving
            import traceback
            reply = ("bug", "".join(traceback.format_exception(exc)))
        try:
            conn.send(reply)
        except (BrokenPipeError, OSError):
            return
        sys.stdout.flush()
