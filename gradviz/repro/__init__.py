"""Reproduction scripts (`gradviz run --repro DIR`, File > Export > Reproduction script): per op
and framework a standalone Python file that needs only that framework and numpy. It holds the
run's inputs and upstream (inline when small, an .npz beside it when not), imports the op from
the user's file, computes the custom, default and finite-difference gradients the same way, and
prints the comparison gradviz's table printed. numpy only here; the script's text: templates.py.

For now: autograd.Function and nn.Module (torch) and @tf.custom_gradient ops on the op graph.
Others get no script and a note saying why (a Keras Layer's default needs gradviz's removal of
the custom_gradient inside its call, which a standalone file cannot carry).
"""
from __future__ import annotations

import ast
import os
from typing import Optional

import numpy as np

from gradviz.atomic_file import atomic_path
from gradviz.model import FIXED_DTYPES, RunResult
from gradviz.module_files import package_module
from gradviz.repro.templates import HEAD, NUMERIC, TAIL, TF, TORCH
from gradviz.seeds import input_draw, param_draw, upstream_values

SUPPORTED = {"torch": ("function", "module"), "tf": ("custom_gradient",)}
INLINE_MAX = 64                 # elements of one array written into the script itself
BODIES = {"torch": TORCH, "tf": TF}
PACKAGES = {"torch": "torch", "tf": "tensorflow"}


def unsupported(result: RunResult) -> str:
    """Why `result` gets no script ("" when it gets one)."""
    if result.status != "ok" or result.op is None:
        return "it did not run"
    if result.request.settings.graph != "op":
        return f"the {result.request.settings.graph} graph (scripts reproduce the op graph)"
    if result.op.kind not in SUPPORTED.get(result.framework, ()):
        return (f"a {result.op.kind} (scripts reproduce autograd.Function, nn.Module and "
                "@tf.custom_gradient ops for now)")
    if result.has_reference:
        return "its default mode is its reference= function"
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
        arrays = _arrays(r)
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


def _arrays(r: RunResult) -> dict[str, np.ndarray]:
    """"input/NAME": the run's input values (its dtype); "upstream/NAME": each output's weight;
    "output/NAME": each output's value in the run; "input64/NAME": the float64 values behind a
    float32 input, where they are the seeded draw (numeric perturbs those, not their rounding)."""
    s = r.request.settings
    out = {}
    for t in r.tensors:
        if t.role == "input":
            value = out[f"input/{t.name}"] = np.asarray(t.value)
            drawn = input_draw(s.seed, t.name, value.shape, s.input_range)
        elif t.role == "param" and not t.frozen:
            value = out[f"param/{t.name}"] = np.asarray(t.value)
            drawn = param_draw(s.seed, t.name, value.shape)
        else:
            continue
        # float64 values the numeric pass perturbs: the seeded draw where its rounding is the
        # run's value, else the run's value itself
        exact = value.dtype == np.float32 and np.array_equal(drawn.astype(np.float32), value)
        if value.dtype.kind == "f":
            out[f"{t.role}64/{t.name}"] = drawn if exact else value.astype(np.float64)
    for t in r.tensors:
        if t.role == "output":
            out[f"upstream/{t.name}"] = upstream_values(r.request.settings, t.name, t.shape)
            # the run's value of the output: numeric's steps there are sized by it
            out[f"output/{t.name}"] = np.asarray(t.value)
    return out


def script_text(r: RunResult, comparison, arrays: dict, data_file: Optional[str]) -> str:
    import gradviz
    s = r.request.settings
    consts = ", ".join(f"{name!r}: {text}" for name, kind, _, text in r.call if kind == "const")
    head = HEAD.format(
        name=r.name, framework=r.framework, framework_package=PACKAGES[r.framework],
        where=r.op.where, script=script_name(r), version=gradviz.__version__,
        settings=f"graph {s.graph}, {s.dtype}, seed {s.seed}, upstream {s.upstream}, "
                 f"range {s.input_range[0]:g},{s.input_range[1]:g}, device {r.device}",
        reported=_reported(comparison), op_file=r.request.file,
        package=package_module(r.request.file), qualname=r.request.qualname, dtype=s.dtype,
        device=r.device or "cpu", call=tuple((n, k, kw) for n, k, kw, _ in r.call),
        consts=consts, data=_data(arrays, data_file), kind=r.op.kind, seed=s.seed,
        rows=[(t.name, "x".join(str(n) for n in t.shape) or "scalar") for t in r.tensors
              if t.dtype not in FIXED_DTYPES],
        no_numeric={t.name: t.absent["numeric"] for t in r.tensors if "numeric" in t.absent})
    return head + BODIES[r.framework].format() + NUMERIC.format() + TAIL.format()


def _reported(comparison) -> str:
    """The rows of gradviz's table for this op, as the script prints them."""
    if comparison is None:
        return "(not compared)"
    rows = [("tensor", "shape", "|custom-default|", "|custom-numeric|", "verdict")]
    for t in comparison.tensors:
        if t.verdict == "no-gradient":
            continue
        rows.append((t.name, "x".join(str(n) for n in t.shape) or "scalar",
                     _err(t.metrics, "custom~default"), _err(t.metrics, "custom~numeric"),
                     t.verdict))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return "\n".join("    " + "  ".join(x.ljust(w) for x, w in zip(row, widths)).rstrip()
                     for row in rows)


def _err(metrics: dict, key: str) -> str:
    """As `gradviz run`'s table writes it (cli.output._err_num)."""
    m = metrics.get(key)
    return "-" if not m or m.get("max_abs_err") is None else f"{m['max_abs_err']:.3g}"


def _data(arrays: dict, data_file: Optional[str]) -> str:
    lines = []
    if data_file is not None:
        lines.append(f"_DATA = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "
                     f"{data_file!r}))")
    for group, var in (("input", "INPUTS"), ("input64", "INPUTS64"), ("param", "PARAMS"),
                       ("param64", "PARAMS64"), ("upstream", "UPSTREAM"), ("output", "OUTPUTS")):
        items = []
        for key, a in arrays.items():
            if not key.startswith(group + "/"):
                continue
            name = key.split("/", 1)[1]
            if a.size > INLINE_MAX:
                items.append(f"    {name!r}: _DATA[{key!r}],")
            else:
                items.append(f"    {name!r}: np.array({a.tolist()!r}, dtype={a.dtype.name!r}),")
        lines.append(f"{var} = {{\n" + "\n".join(items) + "\n}")
    return "\n".join(lines)
