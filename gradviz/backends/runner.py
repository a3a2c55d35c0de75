"""One op run inside a worker, the same for both frameworks: modes, tensors, numeric reference.

The framework adapter (torch_backend / tf_backend) supplies finding ops, building the op per mode,
differentiation and plain evaluation; this module assembles the RunResult.
"""

from __future__ import annotations

import contextlib
import os
import time

from gradviz.api import meta_of
from gradviz.backends import numeric
from gradviz.backends.adapter import Adapter
from gradviz.backends.checks import random_backward, run_checks, skipped_all, unfit
from gradviz.backends.checks.context import CheckContext
from gradviz.backends.graph_kinds import build_graph
from gradviz.backends.graphs import differentiable, plan_args
from gradviz.backends.kept import KeptRuns, QuickRun, keep_bound, quick_request
from gradviz.backends.mode_runs import ModeRuns, run_modes
from gradviz.backends.op_metadata import (
    LAYER_KINDS,
    MetadataMismatch,
    check_reference,
    takes_any_keyword,
    unfit_at_load,
    unknown_names,
    with_given,
)
from gradviz.backends.param_seeding import seed_params
from gradviz.backends.priority import background_priority as _background_priority
from gradviz.backends.rule_errors import at_rule_line
from gradviz.backends.run_results import (
    error_result,
    metadata_error,
    numeric_part,
    probe_skipped,
    tensor_results,
)
from gradviz.backends.upstream_probe import compare_probes, probe_upstream
from gradviz.backends.user_code import USER_FAILURES, capture_output, error_info, load_error
from gradviz.backends.user_modules import load_module, load_note
from gradviz.backends.user_state import own_state, patch_note
from gradviz.model import ErrorInfo, FileCatalog, NumericReply, RunRequest, RunResult
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
        tensors = tensor_results(q.tensors, infos, req.settings.dtype)
        return RunResult(
            request=req,
            op=q.info,
            device=q.device,
            status="ok",
            tensors=tuple(numeric_part(t) for t in tensors),
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
            seed_params(built, s.seed, meta, graph)
            with _background_priority() if background else contextlib.nullcontext():
                return numeric.compute(ad, graph, built, device, tensors)
        except USER_FAILURES as exc:  # noqa: BLE001 - the numeric pass failed: the other modes still stand
            mode_errors["numeric"] = error_info(exc, ErrorKind.ERROR, info.where)
            return {}

    def _prepared(self, req: RunRequest) -> RunResult | tuple:
        """The op the request names, its device, metadata, argument plans and graph; a
        request that cannot run (its file, its name, its device, its metadata) as its error."""
        ad, s = self.adapter, req.settings
        path = os.path.abspath(req.file)
        try:
            module = load_module(path)
            found = self._found(module, path)
        except USER_FAILURES as exc:  # noqa: BLE001 - the user's file failed to import: a run error
            return error_result(req, None, load_error(exc, path))
        if req.qualname not in found:
            names = ", ".join(sorted(found)) or "none"
            return error_result(
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
            return error_result(
                req, info, ErrorInfo("DeviceUnavailable", str(exc), kind=ErrorKind.DEVICE)
            )
        meta = with_given(meta_of(obj, module), req.given)
        try:
            declared = ad.declared_params(obj, info)
            unfit_meta = unknown_names(meta, declared, info.kind)
            plans = [] if unfit_meta else plan_args(ad.forward_params(obj, info), meta, s, declared)
            unfit_meta = unfit_meta or check_reference(meta, plans, info.kind)
            if unfit_meta:
                return error_result(req, info, metadata_error(unfit_meta, meta, info))
            graph = build_graph(s, plans)
            graph.args = tuple(p.name for p in plans)  # what inputs= may name besides parameters
            graph.check_params = info.kind in LAYER_KINDS and not takes_any_keyword(declared)
        except USER_FAILURES as exc:  # noqa: BLE001 - the op's arguments or graph failed: a run error
            return error_result(req, info, error_info(exc, ErrorKind.ERROR, info.where))
        return obj, info, module, meta, plans, graph, device

    def _run(self, req: RunRequest, background: bool = False, keep: bool = False) -> RunResult:
        ad, s = self.adapter, req.settings
        prepared = self._prepared(req)
        if isinstance(prepared, RunResult):
            return prepared
        obj, info, module, meta, plans, graph, device = prepared
        try:
            runs = run_modes(
                ad, obj, info, s, device, module, meta, plans, graph, probe_upstream(s, plans)
            )
        except MetadataMismatch as exc:  # inputs= naming no argument nor parameter
            return error_result(req, info, metadata_error(str(exc), meta, info))
        tensors, mode_errors = runs.tensors, runs.mode_errors
        # the casts the modes shared (tf_arrays) are not kept with a quick pass: the arrays the
        # results use stay alive through them, the rest (an upstream gradient's) goes now
        graph.prepared.clear()
        compare_probes(tensors, s.dtype)
        run_facts = _run_facts(runs, plans, meta)
        runs.mark_kept()
        if "custom" in mode_errors:
            return at_rule_line(
                error_result(
                    req,
                    info,
                    mode_errors["custom"],
                    device=device,
                    mode_errors=mode_errors,
                    tensors=tensor_results(tensors, {}, s.dtype),
                    inplace_inputs=tuple(runs.inplace),
                    **run_facts,
                    checks=skipped_all(s.checks, "the custom mode raised (see the error)"),
                )
            )
        numeric_infos = {}
        if "numeric" in s.modes and tensors:
            numeric_infos = self._numeric(
                s, obj, info, module, meta, plans, graph, device, tensors, background, mode_errors
            )
        elif keep and not s.checks:
            self.kept.put(req, QuickRun(module, info, obj, meta, plans, graph, device, tensors))
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
            lambda built: seed_params(built, s.seed, meta, graph),
            tensors,
            numeric_infos,
        )
        return RunResult(
            request=req,
            op=info,
            device=device,
            status="ok",
            tensors=tensor_results(tensors, numeric_infos, s.dtype),
            mode_errors=mode_errors,
            outputs=runs.outputs,
            inplace_inputs=tuple(runs.inplace),
            checks=_checks(ctx, mode_errors),
            **run_facts,
        )


def _run_facts(runs: ModeRuns, plans, meta: dict) -> dict:
    """What the RunResult tells of the run besides gradients, for the diagnostics."""
    return {
        "probe_skipped": probe_skipped(runs.skipped),
        "seeded_params": tuple(runs.seeded),
        "uncalled_backward": runs.watch.uncalled,
        "no_own_gradient": runs.watch.no_own_gradient,
        "call": tuple(
            (p.name, p.kind, p.keyword, repr(p.const) if p.kind == "const" else "") for p in plans
        ),
        "has_reference": meta.get("reference") is not None,
    }


def _checks(ctx: CheckContext, mode_errors: dict) -> tuple:
    """The contract checks the settings ask for. The plain gradients reach the caller first (the
    app's quick pass); checks come after and reuse them, so only what a check adds is paid for."""
    s = ctx.settings
    if not s.checks:
        return ()
    fixed = [p.name for p in ctx.plans if p.kind == "tensor" and not differentiable(p.values)]
    if fixed:
        return skipped_all(
            s.checks,
            f"the op takes int64 / bool inputs ({', '.join(fixed)}); "
            "the contract checks feed float inputs only",
        )
    return run_checks(
        ctx, s.checks, unfit(mode_errors.get("numeric")) or random_backward.unfit(ctx)
    )
