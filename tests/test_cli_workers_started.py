"""`gradviz run` starts only the workers of frameworks its files import (cli/run_command.py):
an unused framework's import took a core from the others in a cold run."""

from gradviz.cli.early_start import used_by as _used_by
from gradviz.model import FRAMEWORKS

TORCH = "import torch\n\nx = 1\n"
TF = "import tensorflow as tf\n"
BOTH = "import tensorflow as tf\nimport torch\n"
NEITHER = "import math\n"  # imports no framework gradviz can tell: every one looks


def test_only_the_frameworks_the_files_import(write_module):
    torch_file = write_module("t.py", TORCH)
    tf_file = write_module("f.py", TF)
    both = write_module("b.py", BOTH)
    assert _used_by([torch_file], FRAMEWORKS) == ["torch"]
    assert _used_by([tf_file], FRAMEWORKS) == ["tf"]
    assert _used_by([torch_file, tf_file], FRAMEWORKS) == ["torch", "tf"]
    assert _used_by([both], FRAMEWORKS) == ["torch", "tf"]
    assert _used_by([both], ("tf",)) == ["tf"]  # --framework tf: the choice still holds


def test_a_file_it_cannot_tell_about_gets_every_worker_and_a_missing_one_none(
    write_module, tmp_path
):
    assert _used_by([write_module("n.py", NEITHER)], FRAMEWORKS) == list(FRAMEWORKS)
    assert _used_by([str(tmp_path / "missing.py")], FRAMEWORKS) == []
