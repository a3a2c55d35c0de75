"""Two files with an op of the same name: both run, told apart by file (DESIGN.md)."""

import numpy as np

from gradviz.catalog import label_results, pair_ops, requests_for, select
from gradviz.compare import compare_result
from gradviz.model import RunSettings

CLIP = """\
    import torch


    class Clip(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clamp(-1, 1)

        @staticmethod
        def backward(ctx, g):
            return g * {factor}
"""


def test_both_files_run_and_are_told_apart(engine, tmp_path, write_module):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    good = write_module("a/clip_ops.py", CLIP.format(factor="1.0"))
    bad = write_module("b/other_ops.py", CLIP.format(factor="5.0"))
    paired = pair_ops(engine.load([good, bad]))
    assert sorted(p.name for p in paired) == ["Clip", "Clip (other_ops.py)"]
    chosen, missing = select(paired, ["Clip"])
    assert missing == [] and len(chosen) == 2  # --op Clip selects both
    settings = RunSettings(modes=("custom", "default"))
    results = label_results(paired, engine.run(requests_for(chosen, ("torch",), settings)))
    by_name = {r.name: r for r in results}
    assert set(by_name) == {"Clip", "Clip (other_ops.py)"}
    assert by_name["Clip"].op.file == good and by_name["Clip (other_ops.py)"].op.file == bad
    np.testing.assert_array_equal(
        by_name["Clip (other_ops.py)"].tensor("x").grads["custom"], np.full(200, 5.0)
    )
    verdict = {t.name: t.verdict for t in compare_result(by_name["Clip (other_ops.py)"]).tensors}
    assert verdict["x"] == "differs"
