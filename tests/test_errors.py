"""One base for gradviz's own exceptions (issue 27, item 4): every exception class gradviz
defines derives from gradviz.errors.GradvizError (keeping the built-in base it had), and the
worker failures the engine catches share WorkerFailure."""

import ast
import builtins
import os

import pytest

import gradviz
from gradviz.engine.errors import (
    Cancelled,
    WorkerCrashed,
    WorkerFailure,
    WorkerOutOfMemory,
    WorkerTimeout,
    WorkerUnavailable,
)
from gradviz.errors import GradvizError
from gradviz.module_files import OpFileError, read_op_source

PACKAGE = os.path.dirname(os.path.abspath(gradviz.__file__))
BUILTIN_EXCEPTIONS = {
    n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)
}
# BaseExceptions on purpose: a user's `except Exception` must swallow neither a cancel in a
# worker nor a stop signal in the command line (a KeyboardInterrupt)
NOT_UNDER_THE_BASE = {"RequestCancelled", "Stopped"}


def _exception_classes():
    """(module path, class name, base names) of every class in gradviz's source whose bases
    include a built-in exception or another such class (read with ast: nothing imported)."""
    classes = {}
    for folder, _dirs, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
                    if isinstance(node, ast.ClassDef):
                        bases = [
                            b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")
                            for b in node.bases
                        ]
                        classes[node.name] = (os.path.relpath(path, PACKAGE), bases)
    found, grew = {}, True
    while grew:
        grew = False
        for cls, (path, bases) in classes.items():
            if cls not in found and any(
                b in BUILTIN_EXCEPTIONS or b in found or b == "GradvizError" for b in bases
            ):
                found[cls] = (path, bases)
                grew = True
    return found


def test_every_gradviz_exception_derives_from_the_one_base():
    found = _exception_classes()
    assert len(found) >= 25, sorted(found)
    under = {"GradvizError"}
    grew = True
    while grew:
        grew = False
        for cls, (_path, bases) in found.items():
            if cls not in under and any(b in under for b in bases):
                under.add(cls)
                grew = True
    outside = {
        f"{path}:{cls}"
        for cls, (path, _b) in found.items()
        if cls not in under and cls not in NOT_UNDER_THE_BASE
    }
    assert outside == set()


def test_a_refused_op_file_is_a_gradviz_error_and_still_an_os_error(tmp_path):
    with pytest.raises(GradvizError) as caught:
        read_op_source(str(tmp_path))  # a folder, not an op file
    assert isinstance(caught.value, OpFileError) and isinstance(caught.value, OSError)
    assert "not an op file" in str(caught.value)


def test_the_worker_failures_share_one_base():
    failures = [
        WorkerTimeout("late"),
        WorkerCrashed("died", -11),
        WorkerOutOfMemory("big", 1),
        Cancelled(),
        WorkerUnavailable("no torch"),
    ]
    assert all(isinstance(e, WorkerFailure) and isinstance(e, GradvizError) for e in failures)
    assert not isinstance(RuntimeError("bug"), GradvizError)
