"""Worker-to-parent messages with big arrays passed through shared memory, not the socket.

A 10^7-element run returns ~0.4 GB of gradients and values. Pickled through the socket that is
a copy into the pickle, a copy through the kernel and a copy out again; here each big array is
written once to a file in the worker's private scratch folder (engine.scratch, in /dev/shm) and
the parent maps it (copy-on-write), then unlinks it. The pickle names a file only by its number
inside that folder: the parent never opens a path the message chose.
"""

from __future__ import annotations

import atexit
import io
import itertools
import os
import pickle
import re
import sys
from typing import TYPE_CHECKING

from gradviz.engine import scratch

if TYPE_CHECKING:
    import numpy as np

BIG = 1 << 20  # bytes: smaller arrays travel inside the pickle
_counter = itertools.count()
_NAME = re.compile(r"\d+\.npy")
_folder: str | None = None  # where this process writes the arrays it sends


def use_folder(folder: str) -> None:
    """Set by a worker at start: the scratch folder its parent made for it."""
    global _folder
    _folder = folder


def own_folder() -> str:
    """This process's folder (a worker's given one; made on first use in any other process)."""
    global _folder
    if _folder is None:
        _folder = scratch.new_folder("self")
        atexit.register(scratch.remove, _folder)
    return _folder


class _Dumper(pickle.Pickler):
    def __init__(self, file):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.written: dict[int, str] = {}  # id(array) -> path: one file per array object
        self._keep = []  # keep arrays alive so ids stay unique

    def persistent_id(self, obj):
        # numpy is imported on first use here (`gradviz run` starts its workers before it
        # imports numpy, cli/early_start.py): a process without it sends no arrays
        numpy = sys.modules.get("numpy")
        if (
            numpy is None
            or type(obj) is not numpy.ndarray
            or obj.nbytes < BIG
            or obj.dtype.hasobject
        ):
            return None
        path = self.written.get(id(obj))
        if path is None:
            path = os.path.join(own_folder(), f"{next(_counter)}.npy")
            try:
                fd = scratch.create(path)
            except OSError:  # something is at that name already: never follow or reuse it
                return None  # (this one travels inside the pickle)
            try:
                with os.fdopen(fd, "wb") as fh:
                    numpy.save(fh, obj, allow_pickle=False)
            except OSError:  # a small /dev/shm (containers): send this one inside the pickle
                _unlink([path])
                return None
            self.written[id(obj)] = path
            self._keep.append(obj)
        return ("npy", os.path.basename(path))


class _Loader(pickle.Unpickler):
    def __init__(self, file, folder: str):
        super().__init__(file)
        self.folder = folder
        self.loaded: dict[str, np.ndarray] = {}
        self.named: set[str] = set()  # every file the message named, loaded or refused

    def persistent_load(self, pid):
        kind, name = pid
        if kind != "npy" or not _NAME.fullmatch(name):
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")
        path = os.path.join(self.folder, name)
        if path not in self.loaded:
            self.named.add(path)
            self.loaded[path] = _map(path)
        return self.loaded[path]


def _map(path: str) -> np.ndarray:
    """Copy-on-write mapping of an .npy file: callers may change their arrays without touching
    the file. Opened no-follow and owner-checked (scratch.open_owned)."""
    import numpy as np

    with os.fdopen(scratch.open_owned(path), "rb") as fh:
        version = np.lib.format.read_magic(fh)
        read_header = (
            np.lib.format.read_array_header_1_0
            if version == (1, 0)
            else np.lib.format.read_array_header_2_0
        )
        shape, fortran, dtype = read_header(fh)
        if dtype.hasobject:
            raise pickle.UnpicklingError(f"{path}: object arrays are never loaded")
        return np.memmap(
            fh, dtype=dtype, mode="c", shape=shape, offset=fh.tell(), order="F" if fortran else "C"
        ).view(np.ndarray)


def send(conn, obj) -> None:
    buf = io.BytesIO()
    dumper = _Dumper(buf)
    try:
        dumper.dump(obj)
        conn.send_bytes(buf.getbuffer())
    except BaseException:
        _unlink(dumper.written.values())
        raise


def recv(conn, folder: str | None = None):
    """The next message; its big arrays are read from `folder` (the sender's scratch folder;
    this process's own by default)."""
    loader = _Loader(io.BytesIO(conn.recv_bytes()), folder or own_folder())
    try:
        return loader.load()
    finally:
        _unlink(loader.named)  # mapped already: the data lives until the last array goes


def _unlink(paths) -> None:
    for path in list(paths):
        try:
            os.unlink(path)
        except OSError:
            pass
