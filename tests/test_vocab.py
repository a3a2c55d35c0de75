"""The shared words (issue 27, item 1): frameworks, modes, error kinds and check statuses as
StrEnums (gradviz/vocab.py) that read as the strings they replaced, and the op key made in one
place (model.OpKey), a relative and an absolute path giving the same key."""

import json
import os
import subprocess
import sys

import pytest

from gradviz.app.loaded import op_key
from gradviz.app.results import request_key
from gradviz.engine.errors import (
    Cancelled,
    WorkerCrashed,
    WorkerOutOfMemory,
    WorkerTimeout,
    WorkerUnavailable,
)
from gradviz.engine.failures import failure_info
from gradviz.import_scan import frameworks_used
from gradviz.model import CHECK_STATUSES, FRAMEWORKS, MODES, OpInfo, OpKey, RunRequest, RunSettings
from gradviz.qt.theme import CHECK_STYLES
from gradviz.vocab import CheckStatus, ErrorKind, Framework, Mode, framework_of_import


def test_op_key_of_a_relative_and_an_absolute_path_is_one_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ops.py").write_text("import torch\n")
    relative = OpKey.of("torch", "ops.py", "Round")
    absolute = OpKey.of("torch", str(tmp_path / "ops.py"), "Round")
    assert relative == absolute == ("torch", str(tmp_path / "ops.py"), "Round")
    assert hash(relative) == hash(absolute)
    framework, file, qualname = relative
    assert (framework, file, qualname) == (relative.framework, relative.file, relative.qualname)
    # the app's keys of a request with a relative path and of the worker's OpInfo meet
    req = RunRequest("ops.py", "Round", "torch")
    info = OpInfo("Round", "torch", "function", "Round", str(tmp_path / "ops.py"), 1)
    assert request_key(req) == op_key(info) == OpKey.of_request(req) == OpKey.of_op(info)
    assert {request_key(req): "result"}[op_key(info)] == "result"
    # a path with ".." in it is normalised too
    (tmp_path / "sub").mkdir()
    assert OpKey.of("tf", os.path.join("sub", "..", "ops.py"), "f") == OpKey.of("tf", "ops.py", "f")


def test_enums_read_as_the_strings_they_replaced():
    # jax only where it is installed (an optional extra)
    assert FRAMEWORKS == (("torch", "tf", "jax") if Framework.JAX.installed else ("torch", "tf"))
    assert MODES == ("default", "custom", "numeric")
    assert CHECK_STATUSES == ("pass", "fail", "skip")
    assert [m.rank for m in Mode] == [0, 1, 2]
    assert {"numeric": 1}[Mode.NUMERIC] == 1 and f"{CheckStatus.NOT_RUN}" == "not run"
    # the settings' JSON is the same bytes as with plain strings
    assert json.dumps(RunSettings().as_dict()) == json.dumps(
        {
            "graph": "op",
            "shape": [200],
            "dtype": "float32",
            "seed": 0,
            "upstream": "ones",
            "device": "auto",
            "modes": ["default", "custom", "numeric"],
            "timeout": 120.0,
            "depth": 4,
            "checks": [],
            "range": [-3.0, 3.0],
        }
    )


def test_a_framework_carries_its_label_package_imports_and_backend(tmp_path):
    assert [(fw.label, fw.package, fw.extra) for fw in Framework] == [
        ("PyTorch", "torch", ""),
        ("TensorFlow", "tensorflow", ""),
        ("JAX", "jax", "jax"),
    ]
    assert framework_of_import("flax") is framework_of_import("equinox") is Framework.JAX
    assert framework_of_import("keras") is Framework.TF
    assert framework_of_import("tf_keras") is Framework.TF
    assert framework_of_import("numpy") is None
    for fw in Framework:  # the backend module a worker of it loads is there (not imported)
        path = (
            os.path.join(
                os.path.dirname(os.path.dirname(os.path.abspath(__file__))), *fw.backend.split(".")
            )
            + ".py"
        )
        assert os.path.isfile(path), path
    keras_file = tmp_path / "k.py"
    keras_file.write_text("import keras\n")
    both = tmp_path / "both.py"
    both.write_text("import torch\nfrom tensorflow import keras\n")
    assert frameworks_used(str(keras_file)) == (("tf",), None)
    assert frameworks_used(str(both)) == (("torch", "tf"), None)


def test_a_wrong_framework_is_named_with_plain_choices():
    out = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", "--framework", "mxnet"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode != 0
    assert "(choose from 'torch', 'tf', 'jax', 'all')" in out.stderr


@pytest.mark.parametrize(
    "exc, kind",
    [
        (WorkerTimeout("no answer"), "timeout"),
        (Cancelled(), "cancelled"),
        (WorkerOutOfMemory("used 2 GB", 1 << 30), "crashed"),
        (WorkerCrashed("died", -11), "crashed"),
        (WorkerUnavailable("No module named 'torch'"), "unavailable"),
        (RuntimeError("bug"), "internal"),
    ],
)
def test_a_worker_failure_has_its_error_kind(exc, kind):
    info = failure_info(exc, "running Round", "torch", 5.0)
    assert info.kind == kind and info.kind is ErrorKind(kind)
    assert not info.kind.raised


def test_check_statuses_keep_the_matrix_icons_and_count_only_fail():
    assert {s: CHECK_STYLES[s][0] for s in CheckStatus} == {
        "pass": "✓",
        "fail": "✗",
        "skip": "–",
        "pending": "…",
        "not run": "○",
        "cancelled": "⊘",
    }
    assert [s for s in CheckStatus if s.fails] == ["fail"]
    assert [s for s in CheckStatus if s.passes] == ["pass"]
