"""The words the parts share, each said once (verdicts are in gradviz/verdict.py): the frameworks,
the modes, why a run or a worker call failed (ErrorKind) and what a contract check's cell says
(CheckStatus). Each member carries what callers need (its label, its glyph, whether it passes),
so no module keeps a table of its own. Standard library only: `import gradviz` reads it.

Each is a StrEnum: it equals its name ("torch" == Framework.TORCH), hashes as it, and is written
to JSON as the plain string, so reports and dict keys are what they were."""

from __future__ import annotations

import importlib.util
from enum import StrEnum
from typing import NamedTuple


class _FrameworkSpec(NamedTuple):
    label: str  # how people name it (plots, diagnostics)
    package: str  # the package `gradviz devices` reports the version of
    import_roots: tuple[str, ...]  # top-level imports that make a file this framework's
    backend: str  # the module whose adapter() a worker of it runs (backends/)
    extra: str = ""  # an optional framework: the pip extra that installs it


class Framework(StrEnum):
    """A framework gradviz runs ops in. A new one is a member here, its row in _FRAMEWORKS and
    its backend module (gradviz/backends/NAME_backend.py with adapter())."""

    TORCH = "torch"
    TF = "tf"
    JAX = "jax"

    @property
    def label(self) -> str:
        return _FRAMEWORKS[self].label

    @property
    def package(self) -> str:
        return _FRAMEWORKS[self].package

    @property
    def import_roots(self) -> tuple[str, ...]:
        return _FRAMEWORKS[self].import_roots

    @property
    def backend(self) -> str:
        return _FRAMEWORKS[self].backend

    @property
    def extra(self) -> str:
        """The pip extra of an optional framework (`pip install gradviz[jax]`), "" for one
        gradviz always depends on."""
        return _FRAMEWORKS[self].extra

    @property
    def installed(self) -> bool:
        """An optional framework is there to import (found, not imported: `import gradviz`
        loads no framework); torch and TensorFlow are dependencies, always counted in (a worker
        that cannot import one says why)."""
        return not self.extra or importlib.util.find_spec(self.package) is not None


_FRAMEWORKS = {
    Framework.TORCH: _FrameworkSpec(
        "PyTorch", "torch", ("torch",), "gradviz.backends.torch_backend"
    ),
    Framework.TF: _FrameworkSpec(
        "TensorFlow",
        "tensorflow",
        ("tensorflow", "keras", "tf_keras"),
        "gradviz.backends.tf_backend",
    ),
    Framework.JAX: _FrameworkSpec(
        "JAX",
        "jax",
        ("jax", "flax", "equinox", "optax"),
        "gradviz.backends.jax_backend",
        extra="jax",
    ),
}


def installed_frameworks() -> tuple[Framework, ...]:
    """The frameworks gradviz runs (`--framework all`, the app's workers): every dependency,
    and an optional one where it is installed."""
    return tuple(fw for fw in Framework if fw.installed)


def framework_of_import(root: str):
    """The framework a top-level import name belongs to ("keras" -> tf), None for others."""
    for fw in Framework:
        if root in fw.import_roots:
            return fw
    return None


class Mode(StrEnum):
    """How a gradient is computed (DESIGN.md "Modes"), in the order the grid shows them."""

    DEFAULT = "default"  # the framework's own autodiff of the forward
    CUSTOM = "custom"  # the op as written: the user's backward
    NUMERIC = "numeric"  # central differences of the custom forward in float64

    @property
    def rank(self) -> int:
        return tuple(Mode).index(self)


class ErrorKind(StrEnum):
    """Why an op, a mode or a file gave no value (model.ErrorInfo.kind)."""

    ERROR = "error"  # the user's code raised (or gradviz refused what it was given)
    LOAD = "load"  # the file could not be read or imported
    DEVICE = "device"  # the device asked for is not there
    TIMEOUT = "timeout"  # the worker did not answer in time; it was replaced
    CRASHED = "crashed"  # the worker died (a signal, os._exit, out of memory, sys.exit)
    CANCELLED = "cancelled"  # the user cancelled or skipped it: nothing is wrong with the op
    UNAVAILABLE = "unavailable"  # the framework could not be imported in its worker
    INTERNAL = "internal"  # a bug in gradviz

    @property
    def raised(self) -> bool:
        """The user's code raised, rather than its worker failing around it."""
        return self is ErrorKind.ERROR


class CheckStatus(StrEnum):
    """What a contract check's cell says. A worker gives pass, fail or skip (CheckResult.status);
    the window adds the other three for a check that was chosen but has no result: pending
    (the run goes on), not run (the op's plain run failed), cancelled (a cancel came first). A
    check not chosen has no status (None), which is none of these."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    PENDING = "pending"
    NOT_RUN = "not run"
    CANCELLED = "cancelled"

    @property
    def passes(self) -> bool:
        return self is CheckStatus.PASS

    @property
    def fails(self) -> bool:
        """Counted as a failure (the matrix's count, --strict, the op tree's mark)."""
        return self is CheckStatus.FAIL

    @property
    def glyph(self) -> str:
        return _CHECK_GLYPHS[self]


_CHECK_GLYPHS = {
    CheckStatus.PASS: "✓",
    CheckStatus.FAIL: "✗",
    CheckStatus.SKIP: "–",
    CheckStatus.PENDING: "…",
    CheckStatus.NOT_RUN: "○",
    CheckStatus.CANCELLED: "⊘",
}
# the statuses a worker gives a check it ran or judged not applicable
WORKER_CHECK_STATUSES = (CheckStatus.PASS, CheckStatus.FAIL, CheckStatus.SKIP)
