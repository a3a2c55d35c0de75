"""Where a user call's stdout / stderr go while the worker captures them: a pipe drained by a
thread of the worker that keeps the first LOG_HEAD and the last LOG_TAIL bytes and counts the
rest. Output that never ends (a print loop, a C extension's log) costs no memory or disk past
those bounds; the capture file it replaced grew without limit on disk (3 GiB seen, issue 26
item 4).

One pipe and one thread per worker, made on first use. A capture ends with an end mark the
worker writes through the pipe itself after restoring the streams: when the thread reads it,
every byte the call wrote is counted. Bytes that arrive outside a capture (a process the op
started, writing late) are dropped."""

from __future__ import annotations

import os
import threading

LOG_HEAD, LOG_TAIL = 48_000, 16_000  # bytes of captured output kept per op (the numeric reference
# may call a printing forward hundreds of times)


class _Sink:
    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_inheritable(self.write_fd, False)
        self._mark = b"\0gradviz-capture-end-" + os.urandom(8).hex().encode() + b"\0"
        self._lock = threading.Lock()
        self._ended = threading.Event()
        self._active = False
        self._reset()
        threading.Thread(target=self._drain, daemon=True, name="gradviz-capture").start()

    def _reset(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def begin(self) -> int:
        """Start collecting; returns the fd to point stdout / stderr at."""
        with self._lock:
            self._reset()
            self._active = True
            self._ended.clear()
        return self.write_fd

    def end(self) -> str:
        """Everything written since begin() (the streams already point elsewhere), capped."""
        _write_all(self.write_fd, self._mark)
        self._ended.wait()
        with self._lock:
            self._active = False
            return _text(bytes(self.head), bytes(self.tail), self.total)

    def _drain(self) -> None:
        carry = b""  # the end of the last read: a mark split in two
        keep = len(self._mark) - 1
        while True:
            try:
                chunk = os.read(self.read_fd, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            data = carry + chunk
            at = data.find(self._mark)
            if at >= 0:
                self._take(data[:at])
                carry = data[at + len(self._mark) :]
                self._ended.set()
                continue
            self._take(data[:-keep] if len(data) > keep else b"")
            carry = data[-keep:] if len(data) > keep else data

    def _take(self, data: bytes) -> None:
        if not data:
            return
        with self._lock:
            if not self._active:
                return
            self.total += len(data)
            room = LOG_HEAD - len(self.head)
            if room > 0:
                self.head += data[:room]
                data = data[room:]
            if data:
                self.tail += data
                if len(self.tail) > LOG_TAIL:
                    del self.tail[: len(self.tail) - LOG_TAIL]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _text(head: bytes, tail: bytes, total: int) -> str:
    dropped = total - len(head) - len(tail)
    text = head.decode("utf-8", "replace")
    if dropped > 0:
        text += f"\n[... {dropped} bytes of output left out ...]\n"
    return text + tail.decode("utf-8", "replace")


_sink: _Sink | None = None


def sink() -> _Sink:
    global _sink
    if _sink is None:
        _sink = _Sink()
    return _sink
