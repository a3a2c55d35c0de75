"""The loop inside a worker process: import one framework once, then serve requests.

Runs only in a spawned child (engine.launch). Requests are (kind, payload) tuples: "load",
"run", "run:background", "run:keep", "run:numeric", "devices" (backends.runner.Backend.handle).
The first message is ("ready", info), or ("fail", why) when the framework cannot be imported;
then each request gets ("ok", value), or ("bug", traceback) for a bug in gradviz itself. The
user's failures are not bugs: the backends turn them into results (an error at the user's
file:line).
"""

from __future__ import annotations

import os
import sys
import threading
import time

_real_exit = os._exit
_serving = False  # a request is being handled: a cancel signal interrupts it


class RequestCancelled(BaseException):
    """Raised in the worker's main thread when the parent cancels the request in flight
    (SIGUSR2). A BaseException, as KeyboardInterrupt: the backends turn the user's Exceptions
    into results (user_code.USER_FAILURES), and this must reach the request loop instead."""


def _watch_parent(parent_pid: int, folder: str) -> None:
    # A hung op keeps the main thread busy, so EOF on the pipe is not enough to notice a dead parent
    # (where PR_SET_PDEATHSIG is missing; with it this thread rarely gets the chance).
    while True:
        time.sleep(0.5)
        if os.getppid() != parent_pid:
            _remove_folder(folder)  # the parent that would read and remove it is gone
            _real_exit(0)


def _remove_folder(folder: str) -> None:
    if folder:
        from gradviz.engine import scratch

        scratch.remove(folder)


def _install_crash_reporting(crash_file) -> None:
    """Leave the Python stack in the crash log whenever the process ends abnormally or is asked.

    faulthandler covers fatal signals (SIGSEGV, SIGABRT, ...); SIGUSR1 is how the parent asks for
    the stack of a hung or memory-hungry op just before killing it; os._exit in user code leaves
    its stack too, so the parent can point at the user's line."""
    import faulthandler
    import signal

    faulthandler.enable(file=crash_file, all_threads=False)
    faulthandler.register(signal.SIGUSR1, file=crash_file, all_threads=True, chain=False)

    def exit_with_stack(code):
        try:
            crash_file.write(f"gradviz: os._exit({code!r}) called\n")
            crash_file.flush()
            faulthandler.dump_traceback(file=crash_file, all_threads=False)
        except Exception:  # noqa: BLE001 - exiting matters more than the report
            pass
        _real_exit(code)

    os._exit = exit_with_stack

    def cancel_request(signum, frame):
        # the parent cancelled the request: unwind it (its `finally` blocks restore what the
        # run patched) and keep the process, warm, for the next one. The stack goes to the
        # log first: the parent points the cancel at the user's line, as for a hang.
        if _serving:
            try:
                faulthandler.dump_traceback(file=crash_file, all_threads=False)
            except Exception:  # noqa: BLE001 - the cancel matters more than the report
                pass
            raise RequestCancelled()

    signal.signal(signal.SIGUSR2, cancel_request)


def child_main() -> None:
    """Entry point of the isolated interpreter engine.launch starts: argv = fd framework parent
    folder (its private scratch folder: engine.scratch)."""
    from multiprocessing.connection import Connection

    fd, framework, parent_pid, folder = sys.argv[1:5]
    from gradviz.engine import process_tree, transport

    process_tree.die_with_parent(int(parent_pid))
    # No __pycache__ written into users' folders; a stale one could be trusted (user_code).
    # gradviz's own modules keep theirs (own_bytecode), as the parent's do.
    sys.dont_write_bytecode = True
    import gradviz
    from gradviz.engine import own_bytecode

    own_bytecode.install(os.path.dirname(os.path.abspath(gradviz.__file__)))
    transport.use_folder(folder)
    crash_log = os.path.join(folder, "crash.log")
    import signal

    # Ctrl-C in a terminal reaches the whole process group: the parent decides, the worker carries on
    # until the parent stops or kills it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A segfault in user code leaves its Python stack here, for the parent to point at file:line.
    crash_file = open(crash_log, "w")
    _install_crash_reporting(crash_file)
    main(Connection(int(fd)), framework, int(parent_pid), folder)
    # A clean end (stop, or the parent gone): no crash to report, so no log or array to keep.
    _remove_folder(folder)
    # Now, not after the user's non-daemon threads (a worker kept alive by them never ends) nor
    # their atexit handlers.
    _real_exit(0)


def main(conn, framework: str, parent_pid: int, folder: str = "") -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    threading.Thread(target=_watch_parent, args=(parent_pid, folder), daemon=True).start()
    t0 = time.perf_counter()
    import gc

    from gradviz.engine import import_gc, process_tree
    from gradviz.engine.memory import keep_freed_memory, memory_limit_from_env
    from gradviz.engine.transport import send

    limit = memory_limit_from_env()
    keep_freed_memory(limit)

    try:
        from gradviz.backends import load_backend

        # imported with the collector paused (engine.import_gc: a quarter of TensorFlow's import)
        with import_gc.paused():
            backend = load_backend(framework, limit)
            # The framework's import-time objects (~200k torch, ~700k TF) live as long as the
            # worker: frozen, a full collection never walks them (70 / 160 ms of CPU each, one
            # of which fell into the first op's run). Before any user file: frozen later, a
            # reloaded module's garbage would be kept for good.
            gc.freeze()
    except BaseException as exc:  # noqa: BLE001 - tell the parent why the framework is missing
        send(conn, ("fail", f"{type(exc).__name__}: {exc}"))
        return
    import_gc.install()  # the other frameworks a user's file imports, paused alike
    # torch.__version__ is a TorchVersion (a str subclass): unpickling it would import torch in the
    # parent, so the backends report a plain str; keep this guard for the ready message too.
    version = str(backend.version())
    send(
        conn,
        ("ready", {"version": version, "import_s": time.perf_counter() - t0, "pid": os.getpid()}),
    )
    while True:
        try:
            kind, payload = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):  # the parent closed the pipe or is gone
            return
        reply = _serve(backend, kind, payload)
        process_tree.kill_descendants()  # what the user's code started ends with the request
        try:
            send(conn, reply)
        except (BrokenPipeError, OSError):
            return
        except Exception as exc:  # noqa: BLE001 - pickling failed before anything was written
            send(conn, ("bug", f"the result could not be sent back: {type(exc).__name__}: {exc}"))
        try:
            sys.stdout.flush()
        except (AttributeError, ValueError, OSError):  # the user's code closed or replaced it
            pass


def _serve(backend, kind: str, payload) -> tuple:
    """One request's reply: ("ok", value), ("cancelled", "") when the parent cancelled it
    (what the backend kept for a later numeric pass is dropped: that run did not finish), or
    ("bug", traceback) for a bug in gradviz itself."""
    global _serving
    try:
        try:
            _serving = True
            return ("ok", backend.handle(kind, payload))
        finally:
            _serving = False  # a cancel from here on is for a request that has ended
    except RequestCancelled:
        forget = getattr(backend, "forget_kept", None)
        if forget is not None:
            forget()
        return ("cancelled", "")
    except BaseException as exc:  # noqa: BLE001 - a bug in gradviz itself; keep serving
        import traceback

        return ("bug", "".join(traceback.format_exception(exc)))
