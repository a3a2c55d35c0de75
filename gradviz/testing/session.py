"""One Engine for every check of a process: its workers start on the first check of their
framework and stay warm for the rest of the test session (a pytest run imports torch and
TensorFlow once, not once per test). Closed at exit, or by the pytest plugin at the session's end.
"""

from __future__ import annotations

import atexit
import threading

from gradviz.engine import Engine
from gradviz.model import FRAMEWORKS

_lock = threading.Lock()
_engine: Engine | None = None


def shared_engine() -> Engine:
    """The process's engine; a worker starts when a check first needs its framework."""
    global _engine
    with _lock:
        if _engine is None:
            _engine = Engine(FRAMEWORKS, start=False)
            atexit.register(close)
        return _engine


def close() -> None:
    """Stop the shared workers (a later check starts a fresh engine)."""
    global _engine
    with _lock:
        engine, _engine = _engine, None
    if engine is not None:
        engine.close()
