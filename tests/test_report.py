"""JSON / NPZ / CSV reports: DESIGN.md's shape, strict JSON, exact round trips, atomic writes."""

import json
import os
import re

import numpy as np
import pytest

import gradviz
from gradviz.compare import ParityRow, compare_result
from gradviz.diagnostics import Finding
from gradviz.model import (
    ErrorInfo,
    NumericInfo,
    OpInfo,
    RunRequest,
    RunResult,
    RunSettings,
    TensorResult,
)
from gradviz.report import (
    ReportError,
    read_csv,
    read_json,
    read_npz,
    write_csv,
    write_json,
    write_npz,
)


def make_results():
    x = np.array([0.2, 1.7, -0.6], dtype=np.float32)
    t_x = TensorResult(
        "x",
        "input",
        (3,),
        "float32",
        x,
        {
            "custom": np.ones(3, np.float32),
            "default": np.zeros(3, np.float32),
            "numeric": np.array([0.0, np.nan, 0.0]),
        },
        {},
    )
    t_out = TensorResult(
        "out",
        "output",
        (3,),
        "float32",
        np.round(x),
        {"custom": np.ones(3, np.float32), "default": np.ones(3, np.float32)},
        {},
    )
    tf_x = TensorResult(
        "x", "input", (3,), "float32", x, {"custom": np.ones(3, np.float32)}, {"default": "None"}
    )
    big = TensorResult(
        "w",
        "param",
        (2, 2),
        "float64",
        np.eye(2),
        {"custom": np.eye(2)},
        {},
        NumericInfo(
            "projection", 1e-6, 2, {"numeric": np.array([1.0, 2.0]), "custom": np.array([1.0, 2.0])}
        ),
    )

    def res(fw, tensors, status="ok", error=None, name="round_ste"):
        req = RunRequest("/u/ops.py", "RoundSTE", fw, RunSettings(seed=3))
        return RunResult(
            req,
            OpInfo(name, fw, "function", "RoundSTE", "/u/ops.py", 7),
            "cpu",
            status,
            error,
            tuple(tensors),
            log="hello\n",
        )

    return [
        res("torch", [t_x, t_out, big]),
        res("tf", [tf_x, t_out]),
        res(
            "tf",
            [],
            "error",
            ErrorInfo("ZeroDivisionError", "division by zero", "/u/ops.py:30"),
            name="crashy",
        ),
    ]


# --- JSON ----------------------------------------------------------------------------------------
def test_json_has_design_shape_and_is_strict(tmp_path):
    results = make_results()
    path = tmp_path / "r.json"
    check = Finding(
        "GV000-diagnostic-failed",
        "error",
        "A diagnostic check could not run",
        "check line 30",
        "report it",
        "/u/ops.py:30",
        "tf",
        "crashy",
    )
    write_json(path, results, RunSettings(seed=3), diagnostics=[[], [], [check]])
    text = path.read_text()
    # no bare NaN/Infinity constants (explanations may say "NaN/Inf" in words)
    assert not re.search(r"[:\[,]\s*-?(NaN|Infinity)\b", text)
    data = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    assert data["gradviz"] == gradviz.__version__
    assert data["settings"]["seed"] == 3 and data["settings"]["shape"] == [200]
    assert [(o["name"], o["framework"], o["status"]) for o in data["ops"]] == [
        ("round_ste", "torch", "ok"),
        ("round_ste", "tf", "ok"),
        ("crashy", "tf", "error"),
    ]
    op = data["ops"][0]
    assert set(op) >= {"name", "framework", "device", "status", "error", "tensors", "diagnostics"}
    assert op["error"] is None and op["device"] == "cpu" and op["diagnostics"] == []
    x = op["tensors"][0]
    assert set(x) >= {"name", "shape", "verdict", "stats"}
    assert (x["name"], x["shape"], x["verdict"]) == ("x", [3], "surrogate")
    assert x["stats"]["custom"]["l2"] == pytest.approx(3**0.5)
    assert x["stats"]["numeric"]["nan"] == 1
    assert x["metrics"]["custom~numeric"]["max_abs_err"] == 1.0
    assert x["tolerance"] == {
        "rtol": 1e-4,
        "atol": 1e-5,
        "vs_numeric": {"rtol": 2e-3, "atol": 1e-3},
    }
    assert op["tensors"][2]["stats"]["numeric"]["method"] == "projection"
    assert data["ops"][1]["tensors"][0]["stats"]["default"] == {"absent": True, "reason": "None"}
    crash = data["ops"][2]
    assert (
        crash["error"]["type"] == "ZeroDivisionError" and crash["error"]["where"] == "/u/ops.py:30"
    )
    assert crash["diagnostics"] == [
        {
            "code": "GV000-diagnostic-failed",
            "severity": "error",
            "title": "A diagnostic check could not run",
            "message": "check line 30",
            "fix": "report it",
            "where": "/u/ops.py:30",
            "framework": "tf",
            "op": "crashy",
            "tensor": "",
        }
    ]
    assert {
        "op": "round_ste",
        "tensor": "x",
        "mode": "default",
        "verdict": "differs",
        "max_abs_err": None,
        "note": "tf: no gradient (None), torch: zeros (absent is not zero)",
    } in data["parity"]
    assert (
        op["settings"] == RunSettings(seed=3).as_dict() and "varies_by_op" not in data["settings"]
    )
    assert data["summary"]["error"] == 1
    assert data["summary"]["numeric_unchecked"] == 0
    assert read_json(path) == data


def test_whole_run_settings_claim_only_what_every_op_ran_with(tmp_path):
    """Issue 13 item 10: an app export mixes runs; the top level must not claim one op's shape."""
    x = TensorResult(
        "x",
        "input",
        (3,),
        "float32",
        np.zeros(3, np.float32),
        {"custom": np.ones(3, np.float32)},
        {},
    )

    def res(name, settings):
        return RunResult(
            RunRequest("/u/ops.py", name, "torch", settings),
            OpInfo(name, "torch", "function", name, "/u/ops.py", 7),
            "cpu",
            "ok",
            None,
            (x,),
        )

    big = RunSettings(shape=(1000000,), seed=1)
    results = [
        res("a", big),
        res("b", RunSettings(graph="mlp", seed=1)),
        res("c", RunSettings(graph="stack", depth=8, seed=1)),
    ]
    data = write_json(tmp_path / "r.json", results, big)  # the app passed the first op's
    top = data["settings"]
    assert top["varies_by_op"] == ["graph", "shape", "depth"]
    assert "graph" not in top and "shape" not in top and "depth" not in top
    assert top["seed"] == 1 and top["dtype"] == "float32" and top["range"] == [-3.0, 3.0]
    assert [o["settings"]["shape"] for o in data["ops"]] == [[1000000], [200], [200]]
    assert [o["settings"]["graph"] for o in data["ops"]] == ["op", "mlp", "stack"]
    assert data["ops"][2]["settings"]["depth"] == 8
    # a value the caller passed that no op ran with is replaced by theirs
    same = write_json(tmp_path / "s.json", results[1:2], big)["settings"]
    assert same == RunSettings(graph="mlp", seed=1).as_dict()


def test_json_nonfinite_numbers_become_strings(tmp_path):
    rows = [ParityRow("op", "x", "custom", "differs", float("inf"), "")]
    data = write_json(tmp_path / "r.json", [], {"a": float("nan"), "b": -np.inf}, parity_rows=rows)
    assert data["settings"] == {"a": "nan", "b": "-inf"}
    assert read_json(tmp_path / "r.json")["parity"][0]["max_abs_err"] == "inf"


def test_json_unserialisable_value_leaves_no_file(tmp_path):
    path = tmp_path / "r.json"
    with pytest.raises(ReportError, match="r.json"):
        write_json(path, [], {"bad": object()})
    assert os.listdir(tmp_path) == []


def test_json_failed_write_keeps_the_previous_report(tmp_path):
    path = tmp_path / "r.json"
    write_json(path, [], {"run": 1})
    with pytest.raises(ReportError):
        write_json(path, [], {"bad": {1, 2}})
    assert read_json(path)["settings"] == {"run": 1}
    assert os.listdir(tmp_path) == ["r.json"]


def test_write_into_missing_folder_says_why(tmp_path):
    path = tmp_path / "nope" / "r.json"
    with pytest.raises(ReportError, match="does not exist") as info:
        write_json(path, [], {})
    assert str(path) in str(info.value)
    assert not (tmp_path / "nope").exists()


def test_comparisons_passed_in_are_used(tmp_path):
    results = make_results()[:1]
    comps = [compare_result(results[0])]
    data = write_json(tmp_path / "r.json", results, {}, comparisons=comps, parity_rows=[])
    assert data["parity"] == [] and data["ops"][0]["tensors"][0]["verdict"] == "surrogate"


# --- NPZ -----------------------------------------------------------------------------------------
def test_npz_keys_and_round_trip(tmp_path):
    results = make_results()
    path = tmp_path / "r.npz"
    write_npz(path, results)
    back = read_npz(path)
    assert sorted(back) == sorted(
        [
            "torch/round_ste/value/x",
            "torch/round_ste/custom/x",
            "torch/round_ste/default/x",
            "torch/round_ste/numeric/x",
            "torch/round_ste/value/out",
            "torch/round_ste/custom/out",
            "torch/round_ste/default/out",
            "torch/round_ste/value/w",
            "torch/round_ste/custom/w",
            "tf/round_ste/value/x",
            "tf/round_ste/custom/x",
            "tf/round_ste/value/out",
            "tf/round_ste/custom/out",
            "tf/round_ste/default/out",
        ]
    )
    t_x = results[0].tensors[0]
    np.testing.assert_array_equal(back["torch/round_ste/custom/x"], t_x.grads["custom"])
    assert back["torch/round_ste/custom/x"].dtype == np.float32
    np.testing.assert_array_equal(
        back["torch/round_ste/numeric/x"], t_x.grads["numeric"]
    )  # NaN too
    np.testing.assert_array_equal(back["torch/round_ste/value/w"], np.eye(2))
    assert back["torch/round_ste/value/w"].shape == (2, 2)
    assert "tf/round_ste/default/x" not in back  # TF None: no key


def test_npz_write_failure_leaves_no_file(tmp_path):
    with pytest.raises(ReportError, match="does not exist"):
        write_npz(tmp_path / "missing" / "r.npz", make_results())
    assert os.listdir(tmp_path) == []


def test_read_missing_files_say_which(tmp_path):
    with pytest.raises(ReportError, match="gone.npz"):
        read_npz(tmp_path / "gone.npz")
    with pytest.raises(ReportError, match="gone.json"):
        read_json(tmp_path / "gone.json")


# --- CSV -----------------------------------------------------------------------------------------
def test_csv_round_trip_with_absent_mode(tmp_path):
    tf_x = make_results()[1].tensors[0]
    path = tmp_path / "x.csv"
    assert write_csv(path, tf_x) == ["index", "value", "default", "custom"]
    lines = path.read_text().splitlines()
    assert lines[0] == "index,value,default,custom"
    assert lines[2].split(",")[2] == ""  # default absent: empty cell
    back = read_csv(path)
    np.testing.assert_array_equal(back["index"], [0, 1, 2])
    np.testing.assert_array_equal(back["value"].astype(np.float32), tf_x.value)  # exact
    np.testing.assert_array_equal(back["custom"], tf_x.grads["custom"])
    assert np.isnan(back["default"]).all()


def test_csv_2d_tensor_flat_index_and_nan(tmp_path):
    g = np.array([[1.0, np.nan], [np.inf, 1e-300]])
    t = TensorResult(
        "w", "param", (2, 2), "float64", np.arange(4.0).reshape(2, 2) / 3, {"custom": g}, {}
    )
    write_csv(tmp_path / "w.csv", t)
    back = read_csv(tmp_path / "w.csv")
    np.testing.assert_array_equal(back["index"], [0, 1, 2, 3])
    np.testing.assert_array_equal(back["value"], np.arange(4.0) / 3)
    np.testing.assert_array_equal(back["custom"], g.reshape(-1))


def test_csv_size_mismatch_leaves_no_file(tmp_path):
    t = TensorResult("w", "param", (3,), "float64", np.zeros(3), {"custom": np.zeros(4)}, {})
    with pytest.raises(ReportError, match="4 elements"):
        write_csv(tmp_path / "w.csv", t)
    assert os.listdir(tmp_path) == []


def test_failure_mid_write_removes_temp_and_keeps_old_file(tmp_path):
    from gradviz.report import _atomic_write

    path = tmp_path / "r.npz"
    path.write_bytes(b"old")

    def half(f):
        f.write(b"partial")
        raise RuntimeError("disk full")

    with pytest.raises(ReportError, match="disk full") as info:
        _atomic_write(path, half, binary=True)
    assert str(path) in str(info.value)
    assert os.listdir(tmp_path) == ["r.npz"] and path.read_bytes() == b"old"
