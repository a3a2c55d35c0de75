"""Op files inside packages (DESIGN.md "Where ops come from"): imported as their package's module,
so relative imports at any depth work; by path or by dotted module name; reloaded when changed."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from op_packages import write_package
from op_runs import run, verdicts

from gradviz.model import RunSettings

ROOT = Path(__file__).resolve().parent.parent


def _grads(res, mode):
    return {t.name: t.grads.get(mode) for t in res.tensors}


def test_package_file_by_path_runs_with_relative_imports(engine, tmp_path):
    """Failed before: `attempted relative import with no known parent package`."""
    pkg = write_package(tmp_path)
    torch_file, tf_file = pkg / "layers" / "quant_torch.py", pkg / "layers" / "quant_tf.py"
    cats = engine.load([str(torch_file), str(tf_file)])
    assert [c.error for c in cats] == [None, None]
    ops = {(op.framework, op.qualname): op for c in cats for op in c.ops}
    assert set(ops) == {("torch", "RoundSTE"), ("tf", "round_ste")}
    assert ops["torch", "RoundSTE"].where == f"{torch_file}:8"
    assert ops["tf", "round_ste"].where == f"{tf_file}:10"

    res = run(engine, torch_file, "RoundSTE", "torch")
    x = next(t for t in res.tensors if t.name == "x")
    assert np.all((x.value > 0.6) & (x.value < 1.4))
    np.testing.assert_array_equal(_grads(res, "custom")["x"], np.ones(200))
    np.testing.assert_array_equal(_grads(res, "default")["x"], np.zeros(200))
    np.testing.assert_allclose(_grads(res, "numeric")["x"], np.zeros(200), atol=1e-6)
    assert verdicts(res)["x"] == "surrogate"

    res = run(engine, tf_file, "round_ste", "tf")
    np.testing.assert_array_equal(_grads(res, "custom")["x"], np.ones(200))
    np.testing.assert_allclose(_grads(res, "numeric")["x"], np.zeros(200), atol=1e-6)
    assert verdicts(res)["x"] == "surrogate"


def test_same_package_name_in_two_folders_each_runs_its_own(engine, tmp_path):
    one = write_package(tmp_path / "one", scale=2.0) / "layers" / "quant_torch.py"
    two = write_package(tmp_path / "two", scale=5.0) / "layers" / "quant_torch.py"
    for path, scale in ((one, 2.0), (two, 5.0), (one, 2.0)):
        res = run(engine, path, "RoundSTE", "torch", RunSettings(modes=("custom",)))
        np.testing.assert_array_equal(_grads(res, "custom")["x"], np.full(200, scale))


def test_changed_module_of_the_package_reloads(engine, tmp_path):
    pkg = write_package(tmp_path)
    op_file = pkg / "layers" / "quant_torch.py"
    res = run(engine, op_file, "RoundSTE", "torch", RunSettings(modes=("custom",)))
    np.testing.assert_array_equal(_grads(res, "custom")["x"], np.ones(200))
    util = pkg / "util.py"  # two levels away from the op file, imported through helpers
    util.write_text("def scale():\n    return 3.0\n")
    later = os.stat(util).st_mtime + 10
    os.utime(util, (later, later))
    res = run(engine, op_file, "RoundSTE", "torch", RunSettings(modes=("custom",)))
    np.testing.assert_array_equal(_grads(res, "custom")["x"], np.full(200, 3.0))


def test_package_named_like_an_imported_library_is_a_clear_error(engine, tmp_path):
    (tmp_path / "json").mkdir()
    (tmp_path / "json" / "__init__.py").write_text("")
    op_file = tmp_path / "json" / "ops.py"
    op_file.write_text("import torch\n")
    [cat] = engine.load([str(op_file)])
    assert cat.error is not None and cat.error.kind == "load"
    assert "name 'json' is taken" in cat.error.message and str(op_file) in cat.error.message


def test_library_module_by_name_runs_as_the_library_imports_it(engine):
    """A file of an installed package (site-packages) is imported under its own name, once."""
    from gradviz.module_files import ModuleNameError, resolve

    try:
        path = resolve("pytorch_revgrad.functional")
    except ModuleNameError:
        pytest.skip("pytorch-revgrad is not installed (the thirdparty extra)")
    [cat] = engine.load([path])
    assert [(op.qualname, op.where) for op in cat.ops] == [("RevGrad", f"{path}:4")]
    res = run(engine, path, "RevGrad", "torch")
    alpha = res.tensor("alpha_").value
    np.testing.assert_allclose(res.tensor("input_").grads["custom"], -alpha, rtol=1e-6)
    np.testing.assert_array_equal(res.tensor("input_").grads["default"], np.ones(200))
    assert verdicts(res)["input_"] == "differs"


def gradviz_in(cwd, *args, timeout=400):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "gradviz", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.timeout(900)
def test_dotted_module_names_on_the_command_line(tmp_path):
    pkg = write_package(tmp_path)
    report = tmp_path / "r.json"
    names = ["qpkg.layers.quant_torch", "qpkg.layers.quant_tf"]
    ran = gradviz_in(tmp_path, "run", *names, "--json", report, "--quiet")
    assert ran.returncode == 0, ran.stderr
    ops = {o["framework"]: o for o in json.loads(report.read_text())["ops"]}
    assert ops["torch"]["file"] == str(pkg / "layers" / "quant_torch.py")
    assert ops["tf"]["file"] == str(pkg / "layers" / "quant_tf.py")
    for o in ops.values():
        assert o["status"] == "ok" and o["name"] == "pkg_round"
        assert {t["name"]: t["verdict"] for t in o["tensors"]}["x"] == "surrogate"

    listed = gradviz_in(tmp_path, "list", *names)
    assert listed.returncode == 0, listed.stderr
    rows = [ln.split() for ln in listed.stdout.splitlines()[2:] if ln.strip()]
    assert sorted((r[0], r[1]) for r in rows) == [("pkg_round", "tf"), ("pkg_round", "torch")]
    assert "qpkg/layers/quant_torch.py:8" in listed.stdout


@pytest.mark.parametrize("command", ["run", "list"])
def test_unknown_module_name_exits_2_with_message(command, tmp_path, monkeypatch, capsys):
    from gradviz.cli import main

    write_package(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main([command, "qpkg.layers.nothere"]) == 2
    err = capsys.readouterr().err
    assert "no such file or module: qpkg.layers.nothere" in err
    assert "no module named 'qpkg.layers.nothere' in package qpkg.layers" in err


def test_app_command_line_takes_module_names(tmp_path, monkeypatch, capsys):
    """`gradviz mypkg.mod` opens the module's file (the window itself: test_gui_open_module)."""
    import gradviz.qt.app
    from gradviz.cli import main

    pkg = write_package(tmp_path)
    monkeypatch.chdir(tmp_path)
    opened = []
    monkeypatch.setattr(gradviz.qt.app, "main", lambda files, **kw: opened.append(files) or 0)
    assert main(["qpkg.layers.quant_torch", "qpkg/util.py"]) == 0
    assert opened == [[str(pkg / "layers" / "quant_torch.py"), str(pkg / "util.py")]]
    assert main(["qpkg.nothere"]) == 2 and not opened[1:]
    assert "no such file or module: qpkg.nothere" in capsys.readouterr().err
