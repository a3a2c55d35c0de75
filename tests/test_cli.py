"""`gradviz run / list / devices` as a user runs them: real subprocesses, files read back."""

import json
from pathlib import Path

import numpy as np
import pytest
from cli_runs import gradviz

from gradviz.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    """One cold `gradviz run` of the built-in examples, with every report file."""
    out = tmp_path_factory.mktemp("run")
    proc = gradviz("run", "--json", out / "r.json", "--npz", out / "r.npz")
    return proc, out


def test_run_examples_prints_table_and_exits_0(example_run):
    proc, _ = example_run
    assert proc.returncode == 0, proc.stderr
    assert "round_ste" in proc.stdout and "surrogate" in proc.stdout
    assert "parity torch vs tf" in proc.stdout


def test_json_report_has_design_shape(example_run):
    _, out = example_run
    report = json.loads((out / "r.json").read_text())
    assert report["gradviz"] and report["settings"]["graph"] == "op"
    ops = {(o["framework"], o["name"]): o for o in report["ops"]}
    ste = ops[("torch", "round_ste")]
    assert ste["status"] == "ok" and ste["error"] is None and ste["device"] == "cpu"
    x = next(t for t in ste["tensors"] if t["name"] == "x")
    assert x["verdict"] == "surrogate" and x["shape"] == [200]
    assert set(x["stats"]) >= {"default", "custom", "numeric"}
    assert report["parity"]


def test_npz_keys_and_values(example_run):
    _, out = example_run
    with np.load(out / "r.npz") as npz:
        data = dict(npz)
    np.testing.assert_array_equal(data["torch/round_ste/custom/x"], np.ones(200))
    np.testing.assert_array_equal(data["torch/round_ste/default/x"], np.zeros(200))
    assert "tf/round_ste/default/x" not in data  # TF: no gradient at all
    np.testing.assert_array_equal(data["tf/round_ste/custom/x"], np.ones(200))
    np.testing.assert_array_equal(data["torch/round_ste/value/x"], data["tf/round_ste/value/x"])
    assert "tf/mul_layer/value/weights" in data


def test_strict_exits_1_on_differs_and_list(tmp_path):
    bug = tmp_path / "bug.py"
    bug.write_text(
        "import torch\n"
        "class Square(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        ctx.save_for_backward(x)\n"
        "        return x * x\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        (x,) = ctx.saved_tensors\n"
        "        return g * x  # off by a factor 2\n"
    )
    proc = gradviz("run", bug, "--strict", "--modes", "custom,default")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "DIFFERS" in proc.stdout
    listed = gradviz("list", bug)
    assert listed.returncode == 0
    assert "Square" in listed.stdout and "bug.py:2" in listed.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--shape", "0x3"],
        ["run", "--upstream", "half"],
        ["run", "--graph", "tree"],
        ["run", "--modes", "custom,magic"],
        ["run", "--plot", "out.gif"],
        ["run", "--timeout", "-1"],
        ["no-such-file.py"],
        ["run", "--log-scale"],
    ],
)
def test_bad_usage_exits_2_without_starting_workers(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.strip() and "Traceback" not in err


def test_unloadable_file_exits_2_and_names_its_line(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\n\ndef broken(:\n    pass\n")
    proc = gradviz("run", bad)
    assert proc.returncode == 2
    assert f"{bad}:3" in proc.stderr or "bad.py:3" in proc.stderr


def test_diagnostics_in_terminal_summary_and_json(tmp_path):
    traps = ROOT / "resources" / "examples" / "traps_torch.py"
    out = tmp_path / "traps.json"
    proc = gradviz("run", traps, "--modes", "custom,default", "--json", out)
    assert proc.returncode == 3  # TooManyGrads fails: a failed run
    assert "GV101-grad-count" in proc.stdout and "fix:" in proc.stdout
    report = json.loads(out.read_text())
    op = next(o for o in report["ops"] if o["name"] == "trap_too_many_grads")
    [finding] = [d for d in op["diagnostics"] if d["code"] == "GV101-grad-count"]
    assert finding["severity"] == "error" and finding["fix"]
    assert finding["where"].startswith(str(traps)) and finding["where"].rpartition(":")[2].isdigit()


def test_plot_log_scale_draws_log10_of_the_gradient(tmp_path):
    """`--plot --log-scale` draws the app's log scale: decades of |g| sit equally spaced, the
    axis says log10, the zero left out is counted; without the flag the file is linear."""
    import xml.etree.ElementTree as ET

    from samples import DECADES_SRC, SVG_NS

    from gradviz.plots.palette import MODE_COLORS

    op = tmp_path / "decades.py"
    op.write_text(DECADES_SRC)

    def plot(*flags):
        svg = tmp_path / f"grid{len(flags)}.svg"
        proc = gradviz(
            "run", op, "--framework", "torch", "--modes", "default,custom", "--plot", svg, *flags
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        root = ET.parse(svg).getroot()
        texts = [" ".join((t.text or "").split()) for t in root.iter(SVG_NS + "text")]
        cys = sorted(
            {
                round(float(c.get("cy")), 1)
                for g in root.iter(SVG_NS + "g")
                if (g.get("stroke") or "").lower() == MODE_COLORS["custom"]
                for c in g.findall(SVG_NS + "circle")
            }
        )
        return texts, cys

    texts, cys = plot("--log-scale")
    assert texts.count("log10 |∂loss/∂x|") == 2 and texts.count("log10 |∂loss/∂out|") == 2
    assert "6 elements · log10 |g|; 1 zero point not drawn" in texts
    # row x: |g| = 0.01 .. 100, one dot per decade, equally spaced; row out: ones, one height
    assert len(cys) == 6
    np.testing.assert_allclose(np.diff(cys[:5]), np.diff(cys[:5])[0], atol=0.2)
    texts, cys = plot()
    assert not [t for t in texts if "log" in t.lower()]
    gaps = np.diff(cys[:4])  # 100, 10, 1 and 0.1 from the top: linear
    assert gaps[0] > 5 * gaps[1]


def test_a_syntax_error_in_the_only_file_still_writes_the_report(tmp_path):
    """A report is complete on its own (issue 26, minor): with nothing to run, --json still
    holds the settings and the file that could not load, at its line."""
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\n\ndef broken(:\n    pass\n")
    out = tmp_path / "r.json"
    proc = gradviz("run", bad, "--json", out, "--seed", "4")
    assert proc.returncode == 2
    data = json.loads(out.read_text())
    assert data["ops"] == [] and data["settings"]["seed"] == 4
    [err] = data["load_errors"]
    assert err["file"] == str(bad) and err["error"]["type"] == "SyntaxError"
    assert err["error"]["where"].endswith("bad.py:3")


def test_a_file_of_the_other_framework_says_why_it_gave_no_ops(tmp_path):
    """A TF-only file with --framework torch read just 'no ops found' (issue 26, minor)."""
    tf_only = tmp_path / "tf_ops.py"
    tf_only.write_text(
        "import tensorflow as tf\n\n@tf.custom_gradient\ndef f(x):\n    return x, lambda g: g\n"
    )
    for cmd in ("run", "list"):
        proc = gradviz(cmd, tf_only, "--framework", "torch")
        assert proc.returncode == 2
        assert (
            f"gradviz: {tf_only} imports tensorflow, which --framework torch leaves out: "
            "give --framework tf"
        ) in proc.stderr, proc.stderr
