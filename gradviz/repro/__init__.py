"""Reproduction scripts (`gradviz run --repro DIR`, File > Export > Reproduction script): per op
and framework a standalone Python file that needs only that framework and numpy. It holds the
run's inputs, the graph's seeded tensors and the loss's weights (inline when small, an .npz
beside it when not), imports the op from the user's file, computes the custom, default and
finite-difference gradients the same way, and prints the comparison gradviz's table printed.
numpy only here; the arrays: arrays.py; the script's text: script_*.py.

Every graph (op, seed, mlp, stack); autograd.Function, nn.Module and torch.library.custom_op
(torch), @tf.custom_gradient and Keras Layer (tf), custom_vjp / custom_jvp (equinox's
filter_custom_vjp too) and flax / equinox Module (jax) ops, their reference= too. An op whose
constant has no literal form, or whose parameter is renamed away from a graph tensor's name,
gets no script and a note saying why.
"""

from __future__ import annotations

import ast
import os

import numpy as np

from gradviz.atomic_file import atomic_path
from gradviz.compare.numbers import max_abs_text
from gradviz.model import RunResult
from gradviz.module_files import package_module
from gradviz.repro.arrays import arrays as arrays_of
from gradviz.repro.script_head import COMMON, HEAD
from gradviz.repro.script_jax import JAX
from gradviz.repro.script_keras import KERAS
from gradviz.repro.script_numeric import NUMERIC, TAIL
from gradviz.repro.script_tf import TF
from gradviz.repro.script_torch import TORCH
from gradviz.run_settings import fixed_dtype

SUPPORTED = {
    "torch": ("function", "module", "custom_op"),
    "tf": ("custom_gradient", "layer"),
    "jax": ("custom_vjp", "custom_jvp", "module"),
}
INLINE_MAX = 64  # elements of one array written into the script itself
BODIES = {"torch": TORCH, "tf": TF, "jax": JAX}
WHY_NOT: dict = {}  # (framework, kind) -> why such an op gets no script
PACKAGES = {"torch": "torch", "tf": "tensorflow", "jax": "jax"}


def unsupported(result: RunResult) -> str:
    """Why `result` gets no script ("" when it gets one)."""
    if result.status != "ok" or result.op is None:
        return "it did not run"
    if result.op.kind not in SUPPORTED.get(result.framework, ()):
        return WHY_NOT.get((result.framework, result.op.kind)) or (
            f"a {result.op.kind} (scripts reproduce autograd.Function, nn.Module, "
            "torch.library.custom_op, @tf.custom_gradient, Keras Layer, custom_vjp, custom_jvp "
            "and flax / equinox Module ops)"
        )
    renamed = [t.name for t in result.tensors if t.role == "param" and t.name.startswith("self.")]
    if renamed:
        return f"its parameter {renamed[0]} is named as a tensor of the graph"
    for name, kind, _, text in result.call:
        if kind == "const":
            try:
                ast.literal_eval(text)
            except (ValueError, SyntaxError):
                return f"its constant {name} = {text} has no literal form"
    return ""


def script_name(result: RunResult) -> str:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in result.name)
    return f"repro_{safe}_{result.framework}.py"


def write_repro(folder: str, results, comparisons=None) -> tuple[list[str], list[str]]:
    """Write each result's script (and .npz) into `folder` (made if missing). Returns (paths
    written, "name (framework): why not" for each result left out)."""
    os.makedirs(folder, exist_ok=True)
    results = list(results)
    if comparisons is None:
        from gradviz.compare import compare_result

        comparisons = [compare_result(r) if r.status == "ok" else None for r in results]
    written, left = [], []
    for r, c in zip(results, comparisons):
        why = unsupported(r)
        if why:
            left.append(f"{r.name} ({r.framework}): no reproduction script: {why}")
            continue
        path = os.path.join(folder, script_name(r))
        arrays = arrays_of(r)
        big = {k: a for k, a in arrays.items() if a.size > INLINE_MAX}
        data_file = os.path.splitext(path)[0] + ".npz" if big else None
        if data_file is not None:
            with atomic_path(data_file, ".npz") as tmp:
                np.savez(tmp, **big)
            written.append(data_file)
        text = script_text(r, c, arrays, os.path.basename(data_file) if data_file else None)
        with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        written.append(path)
    return written, left


GRAPH_TEXT = {
    "op": "inputs -> op -> loss = sum(upstream * out)",
    "seed": "parameter a -> op -> c = b * 23 -> loss = sum(c)",
    "mlp": "x -> dense (w1, b1) -> h -> op -> out -> dense (w2, b2) -> y -> mean((y - target)^2)",
    "stack": "x -> [dense (w_i, b_i) -> h_i -> op -> o_i] for i = 1..{depth} -> "
    "loss = sum(upstream * o_{depth})",
}


def script_text(r: RunResult, comparison, arrays: dict, data_file: str | None) -> str:
    import gradviz

    s = r.request.settings
    consts = ", ".join(f"{name!r}: {text}" for name, kind, _, text in r.call if kind == "const")
    default_text = (
        "your reference= function, as @gradviz.op gave it"
        if r.has_reference
        else "the framework's own autodiff of the same forward"
    )
    head = HEAD.format(
        name=r.name,
        framework=r.framework,
        framework_package=_packages(r),
        where=r.op.where,
        script=script_name(r),
        version=gradviz.__version__,
        settings=f"graph {s.graph}, {s.dtype}, seed {s.seed}, upstream {s.upstream}, "
        f"range {s.input_range[0]:g},{s.input_range[1]:g}, device {r.device}",
        graph_text=GRAPH_TEXT[s.graph].format(depth=int(s.depth)),
        default_text=default_text,
        reported=_reported(comparison),
        op_file=r.request.file,
        package=package_module(r.request.file),
        qualname=r.request.qualname,
        dtype=s.dtype,
        device=r.device or "cpu",
        graph=s.graph,
        depth=int(s.depth),
        uses_reference=bool(r.has_reference),
        call=tuple((n, k, kw) for n, k, kw, _ in r.call),
        consts=consts,
        data=_data(arrays, data_file),
        kind=r.op.kind,
        seed=s.seed,
        rows=[
            (t.name, "x".join(str(n) for n in t.shape) or "scalar")
            for t in r.tensors
            if not fixed_dtype(t.dtype)
        ],
        no_numeric=_no_numeric(r),
        modes=tuple(str(getattr(m, "value", m)) for m in s.modes),
    )
    keras = KERAS if r.op.kind == "layer" else ""
    return head + COMMON + BODIES[r.framework] + keras + NUMERIC + TAIL


def _packages(r: RunResult) -> str:
    if r.framework == "jax" and r.op.kind == "module":
        return "jax (with the flax or equinox its Module comes from)"
    return PACKAGES[r.framework]


def _no_numeric(r: RunResult) -> dict:
    """Tensors gradviz took no numeric reference of, and why (not the projected ones: their
    reason says how it was taken); every one where the run took none or its numeric pass failed
    (the script would print numbers the report does not have)."""
    failed = r.mode_errors.get("numeric")
    why = ""
    if "numeric" not in r.request.settings.modes:
        why = "the run took no numeric reference (its modes left it out)"
    elif failed is not None:
        first = (failed.message.strip().splitlines() or [""])[0]
        why = f"the numeric reference failed in gradviz's run: {failed.type}: {first}"
    return {
        t.name: t.absent.get("numeric") or why
        for t in r.tensors
        if (
            "numeric" in t.absent or (why and not fixed_dtype(t.dtype) and "numeric" not in t.grads)
        )
        and not (t.numeric is not None and t.numeric.method == "projection")
    }


def _reported(comparison) -> str:
    """The rows of gradviz's table for this op, as the script prints them."""
    if comparison is None:
        return "(not compared)"
    rows = [("tensor", "shape", "|custom-default|", "|custom-numeric|", "verdict")]
    for t in comparison.tensors:
        if t.verdict == "no-gradient":
            continue
        rows.append(
            (
                t.name,
                "x".join(str(n) for n in t.shape) or "scalar",
                _err(t.metrics, "custom~default"),
                _err(t.metrics, "custom~numeric"),
                t.verdict,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return "\n".join(
        "    " + "  ".join(x.ljust(w) for x, w in zip(row, widths)).rstrip() for row in rows
    )


def _err(metrics: dict, key: str) -> str:
    """As `gradviz run`'s table writes it."""
    return max_abs_text(metrics.get(key))


def _data(arrays: dict, data_file: str | None) -> str:
    lines = []
    if data_file is not None:
        lines.append(
            f"_DATA = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "
            f"{data_file!r}))"
        )
    for group, var, what in (
        ("leaf", "LEAVES", "the graph's inputs and own parameters, as the run fed them"),
        ("leaf64", "LEAVES64", "the float64 values behind them, where numeric perturbs"),
        ("param", "PARAMS", "the op's trainable parameters, as seeded"),
        ("param64", "PARAMS64", "their float64 values"),
        ("frozen", "FROZEN", "frozen parameters, as the op built them"),
        ("upstream", "UPSTREAM", "the loss's weight of each output it weighs"),
        ("target", "TARGET", "the mlp graph's regression target of y"),
        ("value", "VALUES", "each recorded tensor's value in the run (sizes numeric steps)"),
    ):
        items = []
        for key, a in arrays.items():
            if not key.startswith(group + "/"):
                continue
            name = key.split("/", 1)[1]
            if a.size > INLINE_MAX:
                items.append(f"    {name!r}: _DATA[{key!r}],")
            else:
                items.append(f"    {name!r}: np.array({a.tolist()!r}, dtype={a.dtype.name!r}),")
        lines.append(f"# {what}\n{var} = {{\n" + "\n".join(items) + "\n}")
    return "\n".join(lines)
