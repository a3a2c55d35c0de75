"""Reproduction scripts (issue 30): `gradviz run --repro DIR` writes one per op and framework;
each, run in a fresh interpreter where gradviz cannot be imported, prints the numbers gradviz's
report holds, every one to the digit the table prints (the app's export: test_gui_repro.py)."""

import json
import re
from pathlib import Path

import pytest
from repro_scripts import printed_rows, reported, run_script

from gradviz.cli import main

CORPUS = Path(__file__).resolve().parent / "corpus" / "pytest_plugin"


@pytest.mark.parametrize("shape", ["200", "6"])  # an .npz beside the script; inline values
def test_scripts_print_the_reports_numbers(tmp_path, shape, capsys):
    out, report = tmp_path / "repro", tmp_path / "run.json"
    code = main(
        [
            "run",
            str(CORPUS / "ops_torch.py"),
            str(CORPUS / "ops_tf.py"),
            "--shape",
            shape,
            "--upstream",
            "random",
            "--repro",
            str(out),
            "--json",
            str(report),
        ]
    )
    assert code == 0, capsys.readouterr().err[-3000:]
    ops = json.loads(report.read_text())["ops"]
    scripts = sorted(out.glob("*.py"))
    assert [p.name for p in scripts] == sorted(
        f"repro_{o['name']}_{o['framework']}.py" for o in ops
    )
    assert bool(list(out.glob("*.npz"))) == (shape == "200")
    _same_numbers(out, ops)


def _same_numbers(out: Path, ops: list) -> None:
    """Each op's script prints the report's numbers, every one (an int input aside)."""
    for o in ops:
        path = out / f"repro_{o['name']}_{o['framework']}.py"
        printed = run_script(path)
        rows = printed_rows(printed)
        tensors = [t for t in o["tensors"] if t["verdict"] != "no-gradient"]
        assert set(rows) == {t["name"] for t in tensors}, printed
        for t in tensors:
            assert rows[t["name"]] == (
                reported(t["metrics"], "custom~default"),
                reported(t["metrics"], "custom~numeric"),
            ), (o["name"], o["framework"], t["name"], printed)


def test_modules_with_parameters(tmp_path, examples_dir, corpus_dir, capsys):
    """An nn.Module's script builds it as gradviz did (seeded, its trainable parameters set,
    frozen ones and buffers as built) and runs its Functions' forwards for the default; a Keras
    Layer's builds it with its weights seeded by attribute path."""
    out, report = tmp_path / "repro", tmp_path / "run.json"
    files = [
        examples_dir / "tutorial_torch.py",
        examples_dir / "tutorial_tf.py",
        corpus_dir / "ok" / "layer_with_params_torch.py",
    ]
    code = main(
        [
            "run",
            *map(str, files),
            "--upstream",
            "random",
            "--repro",
            str(out),
            "--json",
            str(report),
        ]
    )
    err = capsys.readouterr().err
    assert code == 0, err[-3000:]
    assert "no reproduction script" not in err
    ops = [
        o
        for o in json.loads(report.read_text())["ops"]
        if (out / f"repro_{o['name']}_{o['framework']}.py").exists()
    ]
    modules = {o["name"] for o in ops if o["framework"] == "torch"} - {"mul_weights", "round_ste"}
    assert "mul_layer" in modules and len(modules) >= 2, modules
    assert any(t["role"] == "param" for o in ops for t in o["tensors"])
    _same_numbers(out, ops)


def test_a_script_is_standalone_and_says_what_it_is(tmp_path):
    out = tmp_path / "repro"
    assert (
        main(
            [
                "run",
                str(CORPUS / "ops_torch.py"),
                "--op",
                "HalfSquare",
                "--shape",
                "3",
                "--repro",
                str(out),
            ]
        )
        == 0
    )
    text = (out / "repro_HalfSquare_torch.py").read_text()
    imports = set(re.findall(r"^(?:import|from) (\w+)", text, re.M))
    assert imports == {"contextlib", "importlib", "os", "sys", "types", "zlib", "numpy", "torch"}
    assert f"OP_FILE = {str(CORPUS / 'ops_torch.py')!r}" in text
    assert "OP_NAME = 'HalfSquare'" in text and "differs" in text  # the reported table


def test_ops_without_a_script_are_named(tmp_path, write_module, capsys):
    """A constant without a literal form (a torch dtype) cannot be written into a script: the
    note says so, and with nothing written the run fails as a bad output would."""
    path = write_module(
        "cast_ops.py",
        """
        import torch
        import gradviz

        @gradviz.op(consts={"dtype": torch.float64})
        class Through64(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, dtype):
                return x.to(dtype).to(x.dtype)

            @staticmethod
            def backward(ctx, g):
                return g, None
    """,
    )
    out = tmp_path / "repro"
    code = main(["run", path, "--modes", "custom,default", "--repro", str(out)])
    err = capsys.readouterr().err
    assert (
        "Through64 (torch): no reproduction script: its constant dtype = torch.float64 "
        "has no literal form" in err
    ), err[-2000:]
    assert "could not write reproduction scripts" in err
    assert code == 2 and list(out.iterdir()) == []
