"""Plain data that flows between the parts: settings, requests, results (numpy only, picklable).

file -> load in a worker (OpInfo) -> RunRequest -> worker -> RunResult -> compare -> plots / report.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

# the settings' names, importable from here as they always were (run_settings holds them)
from gradviz.run_settings import (  # noqa: F401
    CHECKS,
    DEPTH_RANGE,
    DTYPES,
    FIXED_DTYPES,
    GRAPHS,
    MODES,
    RunSettings,
    fixed_dtype,
    parse_checks,
    parse_range,
    parse_shape,
    parse_upstream,
    settings_texts,
)
from gradviz.vocab import WORKER_CHECK_STATUSES, ErrorKind, Mode, installed_frameworks

# the frameworks runs go to: torch, tf, and jax where it is installed (vocab.Framework has all)
FRAMEWORKS = installed_frameworks()
CHECK_STATUSES = WORKER_CHECK_STATUSES
# the message of a check skipped because the run was cancelled before it ran (engine); the
# window shows such a skip as "cancelled"
CHECK_CANCELLED = "cancelled before it ran"

# Tensor roles, in the order the grid shows them.
ROLES = ("input", "param", "intermediate", "output")


class OpKey(NamedTuple):
    """One op in one framework, the key results, progress and the op tree share: (framework,
    file, qualname). Made only here: the file is made absolute once, so a key from a request
    with a relative path and one from the worker's OpInfo are the same key. A tuple: it equals,
    hashes and unpacks as the plain (framework, file, qualname) of an absolute path."""

    framework: str
    file: str
    qualname: str

    @classmethod
    def of(cls, framework: str, file: str, qualname: str) -> OpKey:
        return cls(framework, os.path.abspath(file), qualname)

    @classmethod
    def of_op(cls, op: OpInfo) -> OpKey:
        return cls.of(op.framework, op.file, op.qualname)

    @classmethod
    def of_request(cls, req: RunRequest) -> OpKey:
        return cls.of(req.framework, req.file, req.qualname)


@dataclass(frozen=True)
class OpInfo:
    """One op found in a user file, in one framework."""

    name: str  # pairing name (@gradviz.op(name=) or the Python name)
    framework: str  # a vocab.Framework
    kind: str  # "function" | "custom_op" | "custom_gradient" | "module" | "layer"
    qualname: str  # the Python name in the file
    file: str  # absolute path
    line: int  # line of the definition
    args: tuple[str, ...] = ()  # forward argument names (without ctx/self)
    doc: str = ""
    defined_at: str = ""  # "file:line" of an op imported into `file` from elsewhere
    # the verdicts the op is meant to get (@gradviz.op(expect=...)): a gradient reversal reads
    # `differs` on purpose; the pytest plugin and gradviz.testing pass it (api.op)
    expect: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return self.defined_at or f"{self.file}:{self.line}"


@dataclass(frozen=True)
class ErrorInfo:
    """A failure of user code or of its worker, pointing at the user's own file and line."""

    type: str  # exception class name, or "Timeout" / "Crashed" / "SystemExit"
    message: str
    where: str = ""  # "file:line" of the innermost frame in the user's file, "" if unknown
    traceback: str = ""  # the user's own frames only
    kind: str = ErrorKind.ERROR  # see vocab.ErrorKind

    def one_line(self) -> str:
        at = f" at {self.where}" if self.where else ""
        return f"{self.type}{at}: {self.message}"


# The start of a default mode's absence reason when gradviz could not remove a custom backward:
# that column is then absent (never a copy of custom), and verdicts rest on custom vs numeric.
OVERRIDE_KEPT = "gradviz could not remove the override"
# The start of every mode's absence reason for a frozen parameter (torch requires_grad=False,
# a Keras weight of a layer set trainable=False): kept at the value the module built, never
# seeded, differentiated or perturbed (TensorResult.frozen; DESIGN.md "Parameters").
FROZEN = "no gradient: frozen"


@dataclass(frozen=True)
class CheckResult:
    """One contract check of one op run: did the backward hold up the way training calls it?"""

    name: str  # see CHECKS
    status: str  # a vocab.CheckStatus: pass, fail or skip
    message: str  # what was tried and what happened (for skip: why not)
    where: str = ""  # "file:line" in the user's file, "" if none applies
    fix: str = ""  # for a failure: what to change
    kind: str = ""  # for a failure: which way it failed (diagnostics map it to a code)
    # the tensors a failure is about; for precision's pass, those it cleared as float32 rounding
    tensors: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        """The JSON form of DESIGN.md: name, status, message, where."""
        return {
            "name": self.name,
            "status": self.status,
            "message": self.message,
            "where": self.where,
        }


@dataclass(frozen=True, eq=False)
class GivenArgs:
    """Inputs and constants a caller gives an op (gradviz.testing.check): they take the place
    of the op's `@gradviz.op(inputs=, consts=)` per name, values used as they are. Requests are
    dict keys (kept runs, the engine's passes): equal and hashed by a digest of the contents,
    since numpy arrays are neither."""

    inputs: tuple[tuple[str, np.ndarray], ...] = ()
    consts: tuple[tuple[str, Any], ...] = ()
    digest: str = ""

    @classmethod
    def of(cls, inputs: dict, consts: dict) -> GivenArgs:
        """Raises ValueError when a constant cannot travel to a worker (it is pickled)."""
        h = hashlib.sha1()
        arrays = []
        for name, arr in inputs.items():
            arr = np.ascontiguousarray(arr)
            h.update(f"{name}|{arr.dtype.str}|{arr.shape}|".encode())
            h.update(arr.tobytes())
            arrays.append((name, arr))
        try:
            h.update(pickle.dumps(sorted(consts.items()), protocol=4))
        except Exception as exc:  # noqa: BLE001 - any pickling failure means the same thing
            raise ValueError(
                f"consts= must be picklable to reach the worker process: {exc}"
            ) from None
        return cls(tuple(arrays), tuple(consts.items()), h.hexdigest())

    def __eq__(self, other) -> bool:
        return isinstance(other, GivenArgs) and other.digest == self.digest

    def __hash__(self) -> int:
        return hash(self.digest)


@dataclass(frozen=True)
class RunRequest:
    """Run one op of one file in one framework."""

    file: str
    qualname: str
    framework: str
    settings: RunSettings = RunSettings()
    given: GivenArgs | None = None  # gradviz.testing's own inputs and constants


@dataclass(frozen=True)
class NumericInfo:
    """How the numeric reference of one tensor was obtained."""

    method: str  # "full" (every element) | "projection" (random directions) | "skipped"
    eps: float = 0.0
    directions: int = 0
    # For "projection": per direction, the numeric directional derivative and each mode's g . v
    projections: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class TensorResult:
    """One named tensor of the graph: its forward value and its gradient per mode.

    A gradient that does not exist (TF None, a graph cut by .detach()) has no key in `grads`;
    `absent` says why, per mode.
    """

    name: str
    role: str  # see ROLES
    shape: tuple[int, ...]
    dtype: str
    value: np.ndarray | None
    grads: dict[str, np.ndarray] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)
    numeric: NumericInfo | None = None
    # custom vs default once more under a second, random upstream (compare.pair_metrics), worked
    # out in the worker; None where not taken (backends.runner: upstream ones on the op graph)
    probe: dict | None = None
    # a frozen parameter: no gradient in any mode by design, its value the module's own (FROZEN)
    frozen: bool = False
    # mode -> the dtype the framework's gradient had where it is not the tensor's own: torch's
    # autograd casts what a custom backward returns to the input's dtype, and numpy has no
    # bfloat16, so `grads` alone cannot show a bfloat16 or float64 gradient (GV103)
    grad_dtypes: dict[str, str] = field(default_factory=dict)

    def grad(self, mode: str) -> np.ndarray | None:
        return self.grads.get(mode)


@dataclass(frozen=True)
class RunResult:
    """Everything one op run in one framework produced."""

    request: RunRequest
    op: OpInfo | None
    device: str = ""
    status: str = "ok"  # "ok" | "error"
    error: ErrorInfo | None = None
    tensors: tuple[TensorResult, ...] = ()
    mode_errors: dict[str, ErrorInfo] = field(default_factory=dict)  # a mode that raised
    outputs: dict[str, np.ndarray] = field(default_factory=dict)  # forward output per mode
    log: str = ""  # captured stdout/stderr of user code
    warnings: tuple[str, ...] = ()
    elapsed: float = 0.0
    framework_version: str = ""
    partial: bool = False  # an early result: the numeric mode is still running
    inplace_inputs: tuple[str, ...] = ()  # tensors the op wrote in place (torch version counter)
    checks: tuple[CheckResult, ...] = ()  # contract checks, when the settings asked for any
    # why the upstream probe (TensorResult.probe) was not taken although the run asked for it:
    # the op's backward raised when run a second time (it frees its saved state); "" otherwise
    probe_skipped: str = ""
    # the trainable parameters gradviz seeded (param_values or inputs=), by name; frozen ones
    # and buffers keep the values the module built (TensorResult.frozen)
    seeded_params: tuple[str, ...] = ()
    # a Module / Layer's backward-shaped methods that nothing called in the custom run, as
    # "Class.backward at file:line" (autograd and Keras never call them: backends/uncalled_backward)
    uncalled_backward: tuple[str, ...] = ()
    # ... and no custom gradient of the user's ran either: the custom mode was the framework's
    # own autodiff, and the verdicts say the custom gradient was not found
    no_own_gradient: bool = False
    # how the graph called the op, argument by argument: (name, "tensor" | "const" | "default",
    # passed by keyword, repr() of a const's value); a reproduction script calls it the same way
    call: tuple[tuple[str, str, bool, str], ...] = ()
    has_reference: bool = False  # its default mode ran @gradviz.op(reference=)

    @property
    def name(self) -> str:
        return self.op.name if self.op else self.request.qualname

    @property
    def framework(self) -> str:
        return self.request.framework

    @property
    def numeric_cancelled(self) -> bool:
        """Its numeric pass was cancelled (Cancel all, Skip this op) after the quick pass came
        back: custom and default are kept, numeric is missing (the app's two-pass runs)."""
        err = self.mode_errors.get(Mode.NUMERIC)
        return err is not None and err.kind == ErrorKind.CANCELLED

    @property
    def numeric_failed(self) -> bool:
        """Its numeric mode failed (it raised; in the app's second pass also a timeout, crash or
        memory kill there, after the quick pass came back): custom and default stand, numeric
        is missing, and the run counts as failed in the app (custom was not checked)."""
        err = self.mode_errors.get(Mode.NUMERIC)
        return err is not None and err.kind != ErrorKind.CANCELLED

    def tensor(self, name: str) -> TensorResult | None:
        for t in self.tensors:
            if t.name == name:
                return t
        return None


@dataclass(frozen=True)
class NumericReply:
    """A worker's one reply to "run:numeric": `result` holds only the numeric mode when the
    worker kept the quick pass (`whole` False: the engine joins it to that pass), else the whole
    run (`whole` True: it had no quick pass to add to, or the op's file changed)."""

    result: RunResult
    whole: bool


@dataclass(frozen=True)
class FileCatalog:
    """What one framework's worker found in one user file."""

    file: str
    framework: str
    ops: tuple[OpInfo, ...] = ()
    error: ErrorInfo | None = None  # the file could not be loaded
    skipped: tuple[str, ...] = ()  # "Name: why it is not an op", for `gradviz list`
    notes: tuple[str, ...] = ()  # how the file was loaded, when not as asked
