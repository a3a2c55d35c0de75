"""One op run inside a worker, the same for both frameworks: modes, tensors, numeric reference.

The framework adapter (torch_backend / tf_backend) supplies finding ops, building the op per mode,
differentiation and plain evaluation; this module assembles the RunResult.
"""

from __future__ import annotations

import contextlib
import os
import time

import numpy as np

from gradviz.api import meta_of
from gradviz.backends import numeric
from gradviz.backends.adapter import Adapter
from gradviz.backends.checks import random_backward, run_checks, skipped_all, unfit
from gradviz.backends.checks.context import CheckContext
from gradviz.backends.graph_kinds import build_graph
from gradviz.backends.graphs import GraphMismatch, differentiable, param_values, plan_args
from gradviz.backends.introspect import OpOutputError, OverrideKept, where_of
from gradviz.backends.kept import KeptRuns, QuickRun, keep_bound, quick_request
from gradviz.backends.op_metadata import (
    LAYER_KINDS,
    MetadataMismatch,
    check_reference,
    meta_where,
    takes_any_keyword,
    unfit_at_load,
    unfit_parameters,
    unknown_names,
    with_given,
)
from gradviz.backends.priority import background_priority as _background_priority
from gradviz.backends.uncalled_backward import Watch, watching
from gradviz.backends.upstream_probe import compare_probes, probe_upstream
from gradviz.backends.user_code import USER_FAILURES, capture_output, error_info, load_error
from gradviz.backends.user_modules import load_module, load_note
from gradviz.backends.user_state import own_state, patch_note
from gradviz.model import (
    ErrorInfo,
    FileCatalog,
    NumericReply,
    OpInfo,
    RunRequest,
    RunResult,
    TensorResult,
)
from gradviz.vocab import ErrorKind


class Backend:
    """What the worker loop talks to: handle(kind, payload)."""

    def __init__(self, adapter: Adapter, memory_limit: int = 0):
        self.adapter = adapter
        self._ops_by_path: dict[str, tuple] = {}  # path -> (module, {qualname: (info, obj)})
        self.kept = KeptRuns(keep_bound(memory_limit))  # the app's quick passes, for numeric

    def version(self) -> str:
        return self.adapter.version()

    def forget_kept(self) -> None:
        """A request was cancelled in the middle: nothing it half-made is kept for later."""
        self.kept.clear()

    def handle(self, kind: str, payload):
        if kind == "load":
            return [self.load(path) for path in payload]
        if kind == "run":
            self.kept.clear()  # one pass (the command line): nothing will come back for it
            return self.run(payload)
        if kind in ("run:background", "run:keep"):
            return self.run(payload, background=kind == "run:background", keep=kind == "run:keep")
        if kind == "run:numeric":
            return self.run_numeric(payload)
        if kind == "devices":
            return self.adapter.devices()
        raise ValueError(f"unknown request {kind!r}")

    # --- loading files--------------------------------------------------------------------------
    def load(self, path: str) -> FileCatalog:
        fw = self.adapter.name
        with capture_output(), own_state(os.path.abspath(path), self.adapter):
            try:
                module = load_module(path)
                found, skipped = self.adapter.find_ops(module, path)
            except USER_FAILURES as exc:  # noqa: BLE001 - the user's file failed to import: a catalog error
                return FileCatalog(path, fw, (), load_error(exc, path))
            notes = [load_note(path)] + unfit_at_load(self.adapter, found, module)
        return FileCatalog(
            path,
            fw,
            tuple(info for info, _ in found),
            skipped=tuple(skipped),
            notes=tuple(n for n in notes if n),
        )

    # --- runs ----------------------------------------------------------------------------------
    def _found(self, module, path: str) -> dict:
        """The module's ops by qualname; kept while load_module returns the same module object
        (finding them reads the source for line numbers: most of a small run's time otherwise)."""
        cached = self._ops_by_path.get(path)
        if cached is not None and cached[0] is module:
            return cached[1]
        found = dict(
            (info.qualname, (info, obj)) for info, obj in self.adapter.find_ops(module, path)[0]
        )
        self._ops_by_path[path] = (module, found)
        return found

    def run(self, req: RunRequest, background: bool = False, keep: bool = False) -> RunResult:
        """`background`: the numeric pass runs at a lower CPU priority (the app's second pass,
        while the window paints the first one's results). `keep`: the app's quick pass; what it
        made is kept for run_numeric of the same request."""
        t0 = time.perf_counter()
        with capture_output() as cap, own_state(os.path.abspath(req.file), self.adapter):
            result = self._run(req, background, keep)
        return self._finished(result, cap, t0)

    def _finished(self, result: RunResult, cap, t0: float) -> RunResult:
        note = load_note(result.request.file)  # loaded otherwise than asked: said in the run too
        patched = patch_note(os.path.abspath(result.request.file))
        notes = tuple(n for n in (note, patched) if n)
        extra = {
            "log": cap.log,
            "warnings": notes + tuple(cap.warnings),
            "elapsed": time.perf_counter() - t0,
            "framework_version": self.version(),
        }
        return RunResult(**{**vars(result), **extra})

    def run_numeric(self, req: RunRequest) -> NumericReply:
        """The app's second pass of `req`: a result holding only the numeric mode (its
        gradients, reasons and projections, its error, log and time) when this worker kept the
        quick pass of the same request and the op's file is unchanged; the engine adds it to the
        quick pass's result. Else the whole run, as `run` in the background (`whole`)."""
        quick = self.kept.take(quick_request(req))
        if quick is not None and not req.settings.checks:
            t0 = time.perf_counter()
            with capture_output() as cap, own_state(os.path.abspath(req.file), self.adapter):
                result = self._numeric_only(req, quick)
            if result is not None:
                return NumericReply(self._finished(result, cap, t0), whole=False)
        return NumericReply(self.run(req, background=True), whole=True)

    def _numeric_only(self, req: RunRequest, q: QuickRun) -> RunResult | None:
        """The numeric reference of a kept quick pass; None when the op's file changed since
        (a new module object) or no longer imports: the full run then says what happened."""
        path = os.path.abspath(req.file)
        try:
            module = load_module(path)
            found = self._found(module, path)
        except USER_FAILURES:  # noqa: BLE001 - the full run reports the user's error
            return None
        if module is not q.module or found.get(req.qualname, (None, None))[1] is not q.obj:
            return None
        mode_errors: dict = {}
        infos = self._numeric(
            req.settings,
            q.obj,
            q.info,
            q.module,
            q.meta,
            q.plans,
            q.graph,
            q.device,
            q.tensors,
            True,
            mode_errors,
        )
        tensors = _tensor_results(q.tensors, infos, req.settings.dtype)
        return RunResult(
            request=req,
            op=q.info,
            device=q.device,
            status="ok",
            tensors=tuple(_numeric_part(t) for t in tensors),
            mode_errors=mode_errors,
        )

    def _numeric(
        self,
        s,
        obj,
        info,
        module,
        meta,
        plans,
        graph,
        device,
        tensors: dict,
        background: bool,
        mode_errors: dict,
    ) -> dict:
        """numeric.compute on the op built in float64; its failure goes into `mode_errors`."""
        ad = self.adapter
        try:
            built = ad.build(obj, info, "custom", "float64", device, module, meta, plans)
            _seed_params(built, s.seed, meta, graph)
            with _background_priority() if background else contextlib.nullcontext():
                return numeric.compute(ad, graph, built, device, tensors)
        except USER_FAILURES as exc:  # noqa: BLE001 - the numeric pass failed: the other modes still stand
            mode_errors["numeric"] = error_info(exc, ErrorKind.ERROR, info.where)
            return {}

    def _run(self, req: RunRequest, background: bool = False, keep: bool = False) -> RunResult:
        ad, s = self.adapter, req.settings
        path = os.path.abspath(req.file)
        try:
            module = load_module(path)
            found = self._found(module, path)
        except USER_FAILURES as exc:  # noqa: BLE001 - the user's file failed to import: a run error
            return _error(req, None, load_error(exc, path))
        if req.qualname not in found:
            names = ", ".join(sorted(found)) or "none"
            return _error(
                req,
                None,
                ErrorInfo(
                    "OpNotFound",
                    f"no {ad.name} op named {req.qualname!r} in {path} (found: {names})",
                    f"{path}:1",
                    kind=ErrorKind.LOAD,
                ),
            )
        info, obj = found[req.qualname]
        try:
            device = ad.resolve_device(s.device)
        except ValueError as exc:
            return _error(
                req, info, ErrorInfo("DeviceUnavailable", str(exc), kind=ErrorKind.DEVICE)
            )
        meta = with_given(meta_of(obj, module), req.given)
        try:
            declared = ad.declared_params(obj, info)
            unfit_meta = unknown_names(meta, declared, info.kind)
            plans = [] if unfit_meta else plan_args(ad.forward_params(obj, info), meta, s, declared)
            unfit_meta = unfit_meta or check_reference(meta, plans, info.kind)
            if unfit_meta:
                return _error(req, info, _metadata_error(unfit_meta, meta, info))
            graph = build_graph(s, plans)
            graph.args = tuple(p.name for p in plans)  # what inputs= may name besides parameters
            graph.check_params = info.kind in LAYER_KINDS and not takes_any_keyword(declared)
        except USER_FAILURES as exc:  # noqa: BLE001 - the op's arguments or graph failed: a run error
            return _error(req, info, error_info(exc, ErrorKind.ERROR, info.where))

        tensors: dict[str, dict] = {}  # name -> {"role", "value", "grads", "absent", "dtype"}
        outputs, mode_errors, kept, inplace = {}, {}, "", []
        probe = probe_upstream(s, plans)
        skipped: dict[str, str] = {}  # mode -> why its upstream probe was skipped
        seeded: tuple = ()
        watch = Watch()
        for mode in ("custom", "default"):
            if mode not in s.modes:
                continue
            try:
                with (
                    watching(obj, info.kind, ad.name)
                    if mode == "custom"
                    else contextlib.nullcontext(watch) as watch
                ):
                    got, names = self._differentiated(
                        obj, info, mode, s, device, module, meta, plans, graph, probe
                    )
            except MetadataMismatch as exc:  # inputs= naming no argument nor parameter
                return _error(req, info, _metadata_error(str(exc), meta, info))
            except GraphMismatch as exc:  # gradviz's graph, not the user's code: no user line
                mode_errors[mode] = ErrorInfo(
                    "GraphMismatch", str(exc), info.where, kind=ErrorKind.ERROR
                )
                continue
            except OpOutputError as exc:
                mode_errors[mode] = error_info(exc, ErrorKind.ERROR, _forward_where(obj, info))
                continue
            except OverrideKept as exc:  # no true default: absent, never a copy of custom
                kept = str(exc)
                continue
            except USER_FAILURES as exc:  # noqa: BLE001 - the op failed in this mode: the other modes still run
                mode_errors[mode] = error_info(exc, ErrorKind.ERROR, _backward_where(obj, info))
                continue
            inplace += [n for n, t in got.items() if t.get("inplace") and n not in inplace]
            if mode == "custom" or not seeded:
                seeded = names
            why = next((t["probe_skipped"] for t in got.values() if t.get("probe_skipped")), "")
            if why:
                skipped[mode] = why
            for name, t in got.items():
                entry = tensors.setdefault(
                    name, {"role": t["role"], "value": t["value"], "grads": {}, "absent": {}}
                )
                if t.get("frozen"):
                    entry["frozen"] = True
                if mode == "custom" or entry["value"] is None:
                    entry["value"] = t["value"]
                if not differentiable(entry["value"]):
                    continue  # int64 / bool input: a value, no gradient columns at all
                if t["grad"] is not None:
                    entry["grads"][mode] = t["grad"]
                    if t.get("grad_dtype"):
                        entry.setdefault("grad_dtypes", {})[mode] = t["grad_dtype"]
                else:
                    entry["absent"][mode] = t["why"]
                if t.get("probe") is not None:
                    entry.setdefault("probes", {})[mode] = t["probe"]
                if name == "out" or name == "b":
                    outputs[mode] = t["value"]
        # the casts the modes shared (tf_arrays) are not kept with a quick pass: the arrays the
        # results use stay alive through them, the rest (an upstream gradient's) goes now
        graph.prepared.clear()
        compare_probes(tensors, s.dtype)
        run_facts = {
            "probe_skipped": _probe_skipped(skipped),
            "seeded_params": tuple(seeded),
            "uncalled_backward": watch.uncalled,
            "no_own_gradient": watch.no_own_gradient,
            "call": tuple(
                (p.name, p.kind, p.keyword, repr(p.const) if p.kind == "const" else "")
                for p in plans
            ),
            "has_reference": meta.get("reference") is not None,
        }

        if kept:
            for entry in tensors.values():
                if differentiable(entry["value"]):
                    entry["absent"]["default"] = kept
        if "custom" in mode_errors:
            return _error(
                req,
                info,
                mode_errors["custom"],
                device=device,
                mode_errors=mode_errors,
                tensors=_tensor_results(tensors, {}, s.dtype),
                inplace_inputs=tuple(inplace),
                **run_facts,
                checks=skipped_all(s.checks, "the custom mode raised (see the error)"),
            )
        numeric_infos = {}
        if "numeric" in s.modes and tensors:
            numeric_infos = self._numeric(
                s, obj, info, module, meta, plans, graph, device, tensors, background, mode_errors
            )
        elif keep and not s.checks:
            self.kept.put(req, QuickRun(module, info, obj, meta, plans, graph, device, tensors))
        checks = ()
        fixed = [p.name for p in plans if p.kind == "tensor" and not differentiable(p.values)]
        if s.checks and fixed:
            checks = skipped_all(
                s.checks,
                f"the op takes int64 / bool inputs ({', '.join(fixed)}); "
                "the contract checks feed float inputs only",
            )
        elif s.checks:
            # The plain gradients reach the caller first (the app's quick pass); checks come after
            # and reuse them, so only what a check adds is paid for.
            ctx = CheckContext(
                ad,
                obj,
                info,
                module,
                meta,
                plans,
                graph,
                s,
                device,
                lambda built: _seed_params(built, s.seed, meta, graph),
                tensors,
                numeric_infos,
            )
            checks = run_checks(
                ctx, s.checks, unfit(mode_errors.get("numeric")) or random_backward.unfit(ctx)
            )
        return RunResult(
            request=req,
            op=info,
            device=device,
            status="ok",
            tensors=_tensor_results(tensors, numeric_infos, s.dtype),
            mode_errors=mode_errors,
            outputs=outputs,
            inplace_inputs=tuple(inplace),
            checks=checks,
            **run_facts,
        )

    def _differentiated(
        self, obj, info, mode, s, device, module, meta, plans, graph, probe=None
    ) -> tuple[dict, tuple]:
        """One mode built, seeded and differentiated, and the names of the parameters seeded;
        once more, from a fresh build, when the default mode kept a custom backward through an
        alias its swap missed (OverrideKept.again: bound since the module was last read), as a
        run would that read every module anew."""
        ad = self.adapter

        def once() -> tuple[dict, tuple]:
            ad.seed_random(s.seed)  # before the build: a layer may draw its seeds there
            built = ad.build(obj, info, mode, s.dtype, device, module, meta, plans)
            _seed_params(built, s.seed, meta, graph)
            got = ad.differentiate(graph, built, s.dtype, device, probe=probe)
            return got, tuple(built.param_names())

        try:
            return once()
        except OverrideKept as exc:
            if not exc.again:
                raise
        return once()


def _seed_params(built, seed: int, meta: dict, graph=None) -> None:
    """The trainable parameters only (built.param_names()); frozen ones and buffers keep the
    values the module built (DESIGN.md "Parameters")."""
    explicit = meta.get("inputs") or {}
    renamed = built.avoid_names(graph.owns) if graph is not None else {}
    if explicit and graph is not None and graph.check_params:
        names = [renamed.get(n, n) for n in [*built.param_names(), *built.frozen]]
        unfit = unfit_parameters(explicit, graph.args, names)
        if unfit:
            raise MetadataMismatch(unfit, meta_where(meta, ""))
    for name in built.param_names():
        shape = built.param_shape(name)
        spec = explicit.get(renamed.get(name, name))
        if spec is not None and not isinstance(spec, tuple):
            values = np.broadcast_to(np.asarray(spec, dtype=np.float64), shape)
        else:
            values = param_values(seed, name, shape)
        built.set_param(name, values)


def _metadata_error(message: str, meta: dict, info: OpInfo) -> ErrorInfo:
    return ErrorInfo("MetadataError", message, meta_where(meta, info.where), kind=ErrorKind.ERROR)


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


def _tensor_results(tensors: dict, numeric_infos: dict, dtype: str) -> tuple[TensorResult, ...]:
    order = {"input": 0, "param": 1, "intermediate": 2, "output": 2}
    items = sorted(tensors.items(), key=lambda kv: order.get(kv[1]["role"], 3))
    out = []
    for name, t in items:
        grads = dict(t["grads"])
        absent = dict(t["absent"])
        info = numeric_infos.get(name)
        if info is not None and info.get("grad") is not None:
            grads["numeric"] = info["grad"]
        elif info is not None and info.get("why"):
            absent["numeric"] = info["why"]
        value = t["value"]
        shape = tuple(value.shape) if value is not None else ()
        own = (
            str(np.asarray(value).dtype)
            if value is not None and not differentiable(value)
            else dtype
        )  # int64 / bool inputs keep theirs
        out.append(
            TensorResult(
                name=name,
                role=t["role"],
                shape=shape,
                dtype=own,
                value=value,
                grads=grads,
                absent=absent,
                numeric=info["info"] if info is not None else None,
                probe=t.get("probe"),
                frozen=bool(t.get("frozen")),
                grad_dtypes=dict(t.get("grad_dtypes", {})),
            )
        )
    return tuple(out)


def _probe_skipped(skipped: dict) -> str:
    """RunResult.probe_skipped: the custom mode's reason (what the verdict is about), else the
    default mode's, which says so."""
    if "custom" in skipped:
        return skipped["custom"]
    return f"in the default mode, {skipped['default']}" if "default" in skipped else ""


def _numeric_part(t: TensorResult) -> TensorResult:
    """Only the numeric mode of a tensor: the quick pass already sent the value and the rest."""
    grads = {m: g for m, g in t.grads.items() if m == "numeric"}
    absent = {m: why for m, why in t.absent.items() if m == "numeric"}
    return TensorResult(
        name=t.name,
        role=t.role,
        shape=t.shape,
        dtype=t.dtype,
        value=None,
        grads=grads,
        absent=absent,
        numeric=t.numeric,
    )


def _error(req, info, err: ErrorInfo, **kw) -> RunResult:
    return RunResult(request=req, op=info, status="error", error=err, **kw)
