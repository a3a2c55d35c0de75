"""Worker-to-parent messages with big arrays passed through shared memory, not the socket.

A 10^7-element run returns ~0.4 GB of gradients and values. Pickled through the socket that is
a copy into the pickle, a copy through the kernel and a copy out again; here each big array is
written once to a file in /dev/shm and the parent maps it (copy-on-write), then unlinks it.
"""
from __future__ import annotations

import glob
import io
import itertools
import os
import pickle
import tempfile

import numpy as np

BIG = 1 << 20  # bytes: smaller arrays travel inside the pickle
_SHM = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else \
    tempfile.gettempdir()
_counter = itertools.count()


def _prefix(pid: int) -> str:
    return os.path.join(_SHM, f"gradviz-{pid}-")


class _Dumper(pickle.Pickler):
    def __init__(self, file):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.written: dict[int, str] = {}   # id(array) -> path: one file per array object
        self._keep = []                     # keep arrays alive so ids stay unique

    def persistent_id(self, obj):
        if type(obj) is not np.ndarray or obj.nbytes < BIG or obj.dtype.hasobject:
            return None
        path = self.written.get(id(obj))
        if path is None:
            path = f"{_prefix(os.getpid())}{next(_counter)}.npy"
            try:
                with open(path, "wb") as fh:
                    np.save(fh, obj, allow_pickle=False)
            except OSError:  # a small /dev/shm (containers): send this one inside the pickle
                _unlink([path])
                return None
            self.written[id(obj)] = path
            self._keep.append(obj)
        return ("npy", path)


class _Loader(pickle.Unpickler):
    def __init__(self, file):
        super().__init__(file)
        self.loaded: dict[str, np.ndarray] = {}

    def persistent_load(self, pid):
        kind, path = pid
        if kind != "npy":
            raise pickle.UnpicklingError(f"unknown persistent id {kind!r}")
        if path not in self.loaded:
            # Copy-on-write mapping: callers may change their arrays without touching the file.
            self.loaded[path] = np.load(path, mmap_mode="c").view(np.ndarray)
        return self.loaded[path]


def send(conn, obj) -> None:
    buf = io.BytesIO()
    dumper = _Dumper(buf)
    try:
        dumper.dump(obj)
        conn.send_bytes(buf.getbuffer())
    except BaseException:
        _unlink(dumper.written.values())
        raise


def recv(conn):
    loader = _Loader(io.BytesIO(conn.recv_bytes()))
    try:
        return loader.load()
    finally:
        _unlink(loader.loaded)  # mapped already: the data lives until the last array goes


def discard_leftovers(pid: int) -> None:
    """Files of a worker that died between writing and the parent reading them."""
    _unlink(glob.glob(_prefix(pid) + "*.npy"))


def _unlink(paths) -> None:
    for path in list(paths):
        try:
            os.unlink(path)
        except OSError:
            pass
