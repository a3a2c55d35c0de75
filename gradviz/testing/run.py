"""One op of a test through the engine: find it in its file (loaded in its framework's worker),
make the request from the test's arguments, run it and analyse it as `gradviz run` does."""

from __future__ import annotations

from collections.abc import Iterable

from gradviz.errors import GradvizError
from gradviz.model import GivenArgs, OpInfo, RunRequest, RunSettings
from gradviz.testing.given import as_array, run_device, run_dtype
from gradviz.testing.locate import OpNotFound, framework_of, locate


class LoadFailed(GradvizError):
    """The op's file could not be loaded in its worker (the message says where and why)."""


_D = RunSettings()  # the defaults are RunSettings' (but the upstream: random, see plugin.py)


def settings_for(
    graph: str = _D.graph,
    upstream: str = "random",
    checks: str | Iterable[str] = (),
    *,
    seed: int = _D.seed,
    shape: str | tuple | None = None,
    dtype: str = _D.dtype,
    device: str = _D.device,
    modes: Iterable[str] = _D.modes,
    timeout: float = _D.timeout,
    depth: int = _D.depth,
    input_range: tuple = _D.input_range,
) -> RunSettings:
    """RunSettings from the testing API's arguments (the plugin's options too), by the one
    settings schema's rule (gradviz run's): a SettingsError (ValueError) names what cannot run."""
    from gradviz.app.settings_schema import run_settings

    return run_settings(
        {
            "graph": graph,
            "shape": _D.shape if shape is None else shape,
            "dtype": dtype,
            "seed": seed,
            "upstream": upstream,
            "device": device,
            "modes": tuple(modes),
            "timeout": timeout,
            "depth": depth,
            "checks": checks if isinstance(checks, str) else tuple(checks),
            "range": tuple(input_range),
        }
    )


def find_op(
    engine, path: str, qualname: str, frameworks: tuple[str, ...], timeout: float = 60.0
) -> OpInfo:
    """The OpInfo of `qualname` in `path`, loaded by the workers of `frameworks`."""
    catalogs = [
        c
        for c in engine.load([path], timeout=timeout)
        if c.framework in frameworks or not c.framework
    ]
    from gradviz.cli.output import error_paragraph

    errors = [c for c in catalogs if c.error is not None]
    hits = [op for c in catalogs for op in c.ops if op.qualname == qualname]
    if not hits and errors:
        raise LoadFailed(
            "\n".join(
                error_paragraph(f"cannot load {path} ({c.framework or '?'})", c.error)
                for c in errors
            )
        )
    if len(hits) > 1:
        raise ValueError(
            f"{qualname} in {path} is an op in {' and '.join(h.framework for h in hits)}"
            ": give framework='torch' or framework='tf'"
        )
    if not hits:
        found = ", ".join(sorted({op.qualname for c in catalogs for op in c.ops})) or "none"
        why = [w for c in catalogs for w in c.skipped if w.startswith(qualname + ":")]
        raise OpNotFound(
            f"gradviz finds no {'/'.join(frameworks)} op named {qualname!r} in "
            f"{path} (found: {found})" + (f"; skipped {why[0]}" if why else "")
        )
    return hits[0]


def check_op(
    op,
    inputs: dict,
    consts: dict,
    graph,
    upstream,
    checks,
    framework,
    *,
    engine=None,
    dtype: str | None = None,
    device: str | None = None,
    shape: tuple | None = None,
    **options,
):
    from gradviz.app.analysis import analyze
    from gradviz.model import FRAMEWORKS
    from gradviz.testing.session import shared_engine

    path, qualname = locate(op)
    if framework is not None and framework not in FRAMEWORKS:
        raise ValueError(f"framework={framework!r}: use one of {', '.join(FRAMEWORKS)}")
    frameworks = (framework or framework_of(op),) if framework or framework_of(op) else FRAMEWORKS
    engine = engine or shared_engine()
    info = find_op(engine, path, qualname, frameworks)
    tensors = {n: as_array(n, v) for n, v in inputs.items()}
    if shape is None:  # the shape of the first float tensor given for an argument
        shape = next(
            (
                a.shape
                for n, a in tensors.items()
                if n in info.args and getattr(a, "dtype", None) is not None and a.dtype.kind == "f"
            ),
            None,
        )
    settings = settings_for(
        graph,
        upstream,
        checks,
        dtype=run_dtype(tensors, dtype),
        device=device or run_device(inputs) or "auto",
        shape=shape or None,
        **options,
    )
    given = GivenArgs.of(tensors, consts) if tensors or consts else None
    req = RunRequest(info.file, info.qualname, info.framework, settings, given)
    analysis = analyze(engine.run_one(req), curves=False)
    if analysis.problem:  # gradviz's own comparison failed: a bug of gradviz, said loudly
        raise RuntimeError(
            f"gradviz could not compare {qualname} ({info.framework}): {analysis.problem}"
        )
    return analysis


__all__ = ["check_op", "find_op", "settings_for", "LoadFailed"]
