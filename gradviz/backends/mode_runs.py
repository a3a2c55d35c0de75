"""An op's custom and default modes, each built, seeded and differentiated, merged into the
runner's working dict of tensors. A mode that fails is an error of that mode, never of the run:
the other mode still runs and is shown."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from gradviz.backends.graphs import GraphMismatch, differentiable
from gradviz.backends.introspect import OpOutputError, OverrideKept, where_of
from gradviz.backends.op_metadata import MetadataMismatch
from gradviz.backends.param_seeding import seed_params
from gradviz.backends.uncalled_backward import Watch, watching
from gradviz.backends.user_code import USER_FAILURES, error_info
from gradviz.model import ErrorInfo, OpInfo
from gradviz.vocab import ErrorKind


@dataclass
class ModeRuns:
    """What the modes made, before the numeric reference and the checks."""

    tensors: dict = field(default_factory=dict)  # name -> {"role", "value", "grads", "absent"}
    outputs: dict = field(default_factory=dict)  # mode -> the op's output value
    mode_errors: dict = field(default_factory=dict)  # mode -> ErrorInfo
    kept: str = ""  # why there is no true default (OverrideKept): absent, never custom's copy
    inplace: list = field(default_factory=list)  # inputs the op changed in place
    skipped: dict = field(default_factory=dict)  # mode -> why its upstream probe was skipped
    seeded: tuple = ()  # the parameters seeded (custom's names, else default's)
    watch: Watch = field(default_factory=Watch)  # the custom mode's backward calls

    def mark_kept(self) -> None:
        """Every differentiable tensor's default is absent with the reason, when it was kept."""
        if self.kept:
            for entry in self.tensors.values():
                if differentiable(entry["value"]):
                    entry["absent"]["default"] = self.kept


def run_modes(ad, obj, info, s, device, module, meta, plans, graph, probe) -> ModeRuns:
    """The modes of `s` that are custom or default, custom first. Raises MetadataMismatch
    (inputs= naming no argument nor parameter): that is the run's error, not a mode's."""
    runs = ModeRuns()
    for mode in ("custom", "default"):
        if mode in s.modes:
            _run_mode(runs, ad, obj, info, mode, s, device, module, meta, plans, graph, probe)
    return runs


def _run_mode(runs: ModeRuns, ad, obj, info, mode, s, device, module, meta, plans, graph, probe):
    try:
        with (
            watching(obj, info.kind, ad.name)
            if mode == "custom"
            else contextlib.nullcontext(runs.watch) as watch
        ):
            runs.watch = watch
            got, names = differentiated(
                ad, obj, info, mode, s, device, module, meta, plans, graph, probe
            )
    except MetadataMismatch:
        raise
    except GraphMismatch as exc:  # gradviz's graph, not the user's code: no user line
        runs.mode_errors[mode] = ErrorInfo(
            "GraphMismatch", str(exc), info.where, kind=ErrorKind.ERROR
        )
        return
    except OpOutputError as exc:
        runs.mode_errors[mode] = error_info(exc, ErrorKind.ERROR, _forward_where(obj, info))
        return
    except OverrideKept as exc:  # no true default: absent, never a copy of custom
        runs.kept = str(exc)
        return
    except USER_FAILURES as exc:  # noqa: BLE001 - the op failed in this mode: the other modes still run
        runs.mode_errors[mode] = error_info(exc, ErrorKind.ERROR, _backward_where(obj, info))
        return
    _merge(runs, mode, got, names)


def _merge(runs: ModeRuns, mode: str, got: dict, names: tuple) -> None:
    runs.inplace += [n for n, t in got.items() if t.get("inplace") and n not in runs.inplace]
    if mode == "custom" or not runs.seeded:
        runs.seeded = names
    why = next((t["probe_skipped"] for t in got.values() if t.get("probe_skipped")), "")
    if why:
        runs.skipped[mode] = why
    for name, t in got.items():
        _merge_tensor(runs, mode, name, t)


def _merge_tensor(runs: ModeRuns, mode: str, name: str, t: dict) -> None:
    entry = runs.tensors.setdefault(
        name, {"role": t["role"], "value": t["value"], "grads": {}, "absent": {}}
    )
    if t.get("frozen"):
        entry["frozen"] = True
    if mode == "custom" or entry["value"] is None:
        entry["value"] = t["value"]
    if not differentiable(entry["value"]):
        return  # int64 / bool input: a value, no gradient columns at all
    if t["grad"] is not None:
        entry["grads"][mode] = t["grad"]
        if t.get("grad_dtype"):
            entry.setdefault("grad_dtypes", {})[mode] = t["grad_dtype"]
    else:
        entry["absent"][mode] = t["why"]
    if t.get("probe") is not None:
        entry.setdefault("probes", {})[mode] = t["probe"]
    if name == "out" or name == "b":
        runs.outputs[mode] = t["value"]


def differentiated(
    ad, obj, info, mode, s, device, module, meta, plans, graph, probe=None
) -> tuple[dict, tuple]:
    """One mode built, seeded and differentiated, and the names of the parameters seeded;
    once more, from a fresh build, when the default mode kept a custom backward through an
    alias its swap missed (OverrideKept.again: bound since the module was last read), as a
    run would that read every module anew."""

    def once() -> tuple[dict, tuple]:
        ad.seed_random(s.seed)  # before the build: a layer may draw its seeds there
        built = ad.build(obj, info, mode, s.dtype, device, module, meta, plans)
        seed_params(built, s.seed, meta, graph)
        got = ad.differentiate(graph, built, s.dtype, device, probe=probe)
        return got, tuple(built.param_names())

    try:
        return once()
    except OverrideKept as exc:
        if not exc.again:
            raise
    return once()


def _forward_where(obj, info: OpInfo) -> str:
    fn = (
        getattr(obj, "forward", None)
        or getattr(obj, "call", None)
        or getattr(obj, "__wrapped__", None)
    )
    return where_of(fn, info.where) if fn is not None else info.where


def _backward_where(obj, info: OpInfo) -> str:
    """Where to point when the framework raises without a user frame (e.g. wrong gradient count).
    A Module / Layer's own `backward` method is no gradient of it (GV607): its definition."""
    fn = getattr(obj, "backward", None) if info.kind != "module" else None
    return where_of(fn, info.where) if fn is not None else info.where
