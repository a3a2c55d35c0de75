"""What a worker process writes to its own stdout/stderr, outside the user's calls.

The user's prints during a call are captured per op (backends.user_code); everything else a worker
says (TensorFlow's absl, oneDNN and CUDA-registration lines at import, warnings from C++ later)
is start-up noise for the user's terminal. It goes to a pipe instead: kept here (the last lines),
handed to listeners (the app's log panel, `gradviz run --verbose`), and quoted when a worker
fails to start.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable

KEEP_LINES = 500
LINE_HEAD, LINE_TAIL = 6_000, 2_000  # bytes kept of one line: output without newlines (1.7 GB
# in 18 s grew the GUI process, issue 26 item 4) is cut

Listener = Callable[[str, str], None]  # (framework, line without its newline)


class WorkerOutput:
    """Lines of one framework's workers (all its processes, one after another)."""

    def __init__(self, framework: str):
        self.framework = framework
        self.lines: deque[str] = deque(maxlen=KEEP_LINES)
        self.listeners: list[Listener] = []
        self.count = 0  # lines ever added: a mark for what one process said (since())
        self._lock = threading.Lock()

    def follow(self, stream) -> threading.Thread:
        """Read `stream` (a worker's pipe, binary) to its end in a daemon thread. The pipe must
        always be drained: a full one would block the worker at its next write."""
        thread = threading.Thread(
            target=self._pump, args=(stream,), daemon=True, name=f"gradviz-{self.framework}-output"
        )
        thread.start()
        return thread

    def _pump(self, stream) -> None:
        line = _Line()
        try:
            while chunk := _read_some(stream):
                *done, rest = chunk.split(b"\n")
                for piece in done:
                    line.add(piece)
                    self.add(line.text())
                    line = _Line()
                line.add(rest)
            if line.total:
                self.add(line.text())
        except (OSError, ValueError):
            pass
        finally:
            try:
                stream.close()
            except OSError:
                pass

    def listen(self, listener: Listener, replay: bool = False) -> None:
        """Hand `listener` every new line; with `replay`, the kept ones first."""
        with self._lock:
            self.listeners.append(listener)
            kept = list(self.lines) if replay else []
        for line in kept:
            listener(self.framework, line)

    def unlisten(self, listener: Listener) -> None:
        with self._lock:
            if listener in self.listeners:
                self.listeners.remove(listener)

    def add(self, line: str) -> None:
        with self._lock:
            self.lines.append(line)
            self.count += 1
            listeners = list(self.listeners)
        for listener in listeners:
            try:
                listener(self.framework, line)
            except Exception:  # noqa: BLE001 - a listener must not stop the pipe being drained
                pass

    def since(self, mark: int, n: int = 20) -> list[str]:
        """The last `n` lines added after `count` was `mark`."""
        with self._lock:
            new = min(self.count - mark, len(self.lines), n)
            return list(self.lines)[len(self.lines) - new :] if new > 0 else []


class _Line:
    """One line as it arrives: its first LINE_HEAD and last LINE_TAIL bytes, and its length."""

    def __init__(self) -> None:
        self.head, self.tail, self.total = bytearray(), bytearray(), 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = LINE_HEAD - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > LINE_TAIL:
                del self.tail[: len(self.tail) - LINE_TAIL]

    def text(self) -> str:
        dropped = self.total - len(self.head) - len(self.tail)
        cut = f" [... {dropped} bytes of this line left out ...] " if dropped > 0 else ""
        return (
            self.head.decode("utf-8", errors="replace")
            + cut
            + self.tail.decode("utf-8", errors="replace")
        ).rstrip("\r")


def _read_some(stream) -> bytes:
    """What the pipe holds now (at most 64 KiB), b"" at its end."""
    read1 = getattr(stream, "read1", None)
    return read1(1 << 16) if read1 is not None else stream.read(1 << 16)


def describe_failure(reason: str, lines: Iterable[str]) -> str:
    """A start-up failure with the worker's last words (a traceback in its bootstrap, say)."""
    said = "\n".join(line for line in lines if line.strip())
    return f"{reason}\n{said}" if said else reason
