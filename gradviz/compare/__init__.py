"""Gradients compared: metrics and tolerances, verdicts per tensor and op, torch-vs-tf parity.

numpy only (no framework, no Qt). `metrics` holds the numbers, `verdicts` what they mean,
`torch_vs_tf` the cross-framework rows; the names callers use are re-exported here.
"""

from gradviz.compare.metrics import Tol, mode_stats, pair_metrics, tolerances
from gradviz.compare.numbers import ModeStats, PairMetrics
from gradviz.compare.torch_vs_tf import ParityRow, parity
from gradviz.compare.verdicts import (
    VERDICTS,
    OpComparison,
    TensorComparison,
    compare_result,
    independent_of_output,
    summary_counts,
    tensor_metrics,
    verdict,
)

__all__ = [
    "VERDICTS",
    "Tol",
    "tolerances",
    "mode_stats",
    "pair_metrics",
    "verdict",
    "compare_result",
    "parity",
    "summary_counts",
    "TensorComparison",
    "OpComparison",
    "ParityRow",
    "tensor_metrics",
    "independent_of_output",
    "ModeStats",
    "PairMetrics",
]
