"""The numbers of one tensor, typed: a gradient's statistics (ModeStats) and how close two
gradients are (PairMetrics). Read by attribute everywhere after compare/metrics.py makes them;
`as_dict()` is their JSON form in the report, key for key and in the order DESIGN.md's reports
have always had (report.py writes nothing else).

Plain Python values only (int / float / bool / None / str): a float may be NaN/Inf, which
report.py writes as strings.
"""

from __future__ import annotations

from dataclasses import dataclass

_SUMMARY = ("min", "max", "mean", "std", "l2", "abs_max")


@dataclass(frozen=True)
class ModeStats:
    """Summary of one mode's gradient; NaN/Inf are counted and left out of min..abs_max (None
    where nothing is finite). An absent gradient (`absent`) says why in `reason`, and whether
    its mode was cancelled or raised; a numeric mode that checked along random directions only
    has `method` "projection" and its number of `directions`."""

    n: int | None = None
    nan: int | None = None
    inf: int | None = None
    zeros: int | None = None
    min: float | None = None
    max: float | None = None
    mean: float | None = None
    std: float | None = None
    l2: float | None = None
    abs_max: float | None = None
    absent: bool = False
    reason: str = ""
    cancelled: bool = False  # the mode was not run to its end
    raised: bool = False  # no gradient because the mode raised: an error, not absent
    method: str | None = None  # "projection" (numeric only)
    directions: int | None = None

    @classmethod
    def missing(cls, reason: str = "", cancelled: bool = False, raised: bool = False) -> ModeStats:
        return cls(absent=True, reason=reason or "no gradient", cancelled=cancelled, raised=raised)

    @classmethod
    def projection(cls, directions: int) -> ModeStats:
        return cls(
            absent=True,
            method="projection",
            directions=directions,
            reason=f"checked along {directions} random directions only",
        )

    def as_dict(self) -> dict:
        if self.method is not None:
            return {
                "absent": True,
                "method": self.method,
                "directions": self.directions,
                "reason": self.reason,
            }
        if self.absent:
            out: dict = {"absent": True, "reason": self.reason}
            if self.cancelled:
                out["cancelled"] = True
            if self.raised:
                out["raised"] = True
            return out
        return {
            "n": self.n,
            "nan": self.nan,
            "inf": self.inf,
            "zeros": self.zeros,
            **{k: getattr(self, k) for k in _SUMMARY},
        }


_PAIR = (
    "n",
    "n_differ",
    "allclose",
    "max_abs_err",
    "max_rel_err",
    "cosine",
    "norm_ratio",
    "worst_index",
    "atol",
    "rtol",
)
_PAIR_OPTIONAL = ("shape_mismatch", "method", "numeric_undefined")


@dataclass(frozen=True)
class PairMetrics:
    """How close gradient a is to the reference b (compare/metrics.pair_metrics says how each
    number is taken). `shape_mismatch`: "(3,) vs (4,)" where the shapes differ (nothing else was
    compared); `method` ("full" | "projection") and `numeric_undefined` (elements left out where
    numeric is NaN/Inf) against numeric; `as_numeric`: the upstream probe's same pair at the
    tolerance against numeric."""

    n: int
    n_differ: int
    allclose: bool
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    cosine: float | None = None
    norm_ratio: float | None = None
    worst_index: int | None = None
    atol: float | None = None
    rtol: float | None = None
    shape_mismatch: str | None = None
    method: str | None = None
    numeric_undefined: int | None = None
    as_numeric: PairMetrics | None = None

    def as_dict(self) -> dict:
        out = {k: getattr(self, k) for k in _PAIR}
        out.update({k: getattr(self, k) for k in _PAIR_OPTIONAL if getattr(self, k) is not None})
        if self.as_numeric is not None:
            out["as_numeric"] = self.as_numeric.as_dict()
        return out

    @classmethod
    def from_dict(cls, d: dict) -> PairMetrics:
        """The metrics a worker sent as plain data (TensorResult.probe)."""
        sub = d.get("as_numeric")
        return cls(
            **{k: d[k] for k in (*_PAIR, *_PAIR_OPTIONAL) if k in d},
            as_numeric=cls.from_dict(sub) if sub is not None else None,
        )


def max_abs_text(m: PairMetrics | None) -> str:
    """A pair's max abs error as the tables of `gradviz run`, gradviz.testing and a repro
    script write it: 3 significant digits, "-" where there is none."""
    return "-" if m is None or m.max_abs_err is None else f"{m.max_abs_err:.3g}"
