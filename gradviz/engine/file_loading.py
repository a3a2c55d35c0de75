"""Loading op files: each file to the workers of the frameworks it imports, the frameworks at
once, and a file whose import kills its worker blamed alone."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import replace

from gradviz.engine.errors import Cancelled, WorkerFailure, WorkerUnavailable
from gradviz.engine.failures import failure_info
from gradviz.engine.per_framework import in_parallel
from gradviz.import_scan import frameworks_used
from gradviz.model import FileCatalog
from gradviz.vocab import ErrorKind

LOAD_TIMEOUT = 60.0


def load_files(
    workers: dict,
    frameworks: tuple[str, ...],
    files: Iterable[str],
    timeout: float,
    closed: Callable[[], bool],
    on_loaded: Callable[[str, list[FileCatalog]], None] | None = None,
) -> list[FileCatalog]:
    """Ops of each file, per framework it uses. A file that fails to load gives a catalog with
    `error` set. Files are sent only to the workers of the frameworks they import.
    `timeout` bounds importing the files of one framework (a module may hang at import);
    `closed()`: the engine is closing, so a failed call is not tried again. `on_loaded(fw,
    catalogs)`, from fw's loading thread: fw's files are all in (its ops may start meanwhile)."""
    files = [os.path.abspath(f) for f in files]
    jobs: dict[str, list[str]] = {fw: [] for fw in frameworks}
    out: list[FileCatalog] = []
    for f in files:
        used, err = frameworks_used(f)
        if err is not None:
            out.append(FileCatalog(f, "", (), err))
            continue
        for fw in used:
            if fw in jobs:
                jobs[fw].append(f)
    results: dict[str, list[FileCatalog]] = {}
    order = {f: i for i, f in enumerate(files)}

    def work(fw: str) -> None:
        results[fw] = _load_in(workers[fw], fw, jobs[fw], timeout, closed) if jobs[fw] else []
        results[fw].sort(key=lambda c: order.get(c.file, 0))  # a blamed file came first
        if on_loaded is not None:
            on_loaded(fw, results[fw])

    in_parallel(work, frameworks)
    for fw in frameworks:
        out.extend(results.get(fw, []))
    out.sort(key=lambda c: (order.get(c.file, 0), c.framework))
    return out


def _load_in(worker, fw: str, files: list[str], timeout: float, closed) -> list[FileCatalog]:
    """Import `files` in one call; when that kills the worker, blame the file the stack dump
    points at and load the others again (one at a time if the dump names none of them)."""
    try:
        return worker.call("load", files, timeout)
    except (WorkerFailure, RuntimeError) as exc:  # RuntimeError: a bug in the worker
        err = replace(failure_info(exc, "loading the file", fw, timeout), kind=ErrorKind.LOAD)
        if len(files) == 1 or isinstance(exc, (WorkerUnavailable, Cancelled)) or closed():
            return [FileCatalog(f, fw, (), err) for f in files]
        blamed = [f for f in files if err.where.startswith(f + ":")]
        if blamed:
            rest = [f for f in files if f not in blamed]
            return [FileCatalog(f, fw, (), err) for f in blamed] + _load_in(
                worker, fw, rest, timeout, closed
            )
        return [c for f in files for c in _load_in(worker, fw, [f], timeout, closed)]
