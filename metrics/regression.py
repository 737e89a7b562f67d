"""Mean absolute error and root mean squared error, exactly mergeable."""

from __future__ import annotations

import math

import numpy as np

from metrics.exact import ExactSum, ratio

# No confidence bound for regression: the Chernoff and Hoeffding bounds of Gama et al. 2009 hold for
# losses in [0, 1] (or a known range); on absolute errors in the target's units their width would
# change with the unit of measurement.
REGRESSION_CONFIDENCE_METRICS: tuple = ()
REGRESSION_METRICS = ("mae", "rmse", *REGRESSION_CONFIDENCE_METRICS)


class RegressionScore:
    """Sums behind MAE and RMSE; merge order never changes the result.

    >>> s = RegressionScore()
    >>> for y, p in [(3.0, 2.5), (-0.5, 0.0), (2.0, 2.0), (7.0, 8.0)]:
    ...     s.update(y, p)
    >>> s.get()
    {'mae': 0.5, 'rmse': 0.612...}
    """

    __slots__ = ("n", "abs_error", "squared_error")

    def __init__(self):
        self.n = 0
        self.abs_error = ExactSum()
        self.squared_error = ExactSum()

    def update(self, y_true: float, y_pred: float) -> None:
        e = y_true - y_pred
        self.n += 1
        self.abs_error.add(abs(e))
        self.squared_error.add(e * e)

    def update_many(self, y_true, y_pred) -> None:
        """`update` for arrays (the sums stay exact, so the result is the same)."""
        for y, p in zip(list(y_true), list(y_pred)):
            self.update(float(y), float(p))

    def merge(self, other: RegressionScore) -> RegressionScore:
        self.n += other.n
        self.abs_error.merge(other.abs_error)
        self.squared_error.merge(other.squared_error)
        return self

    def subtract(self, other: RegressionScore) -> RegressionScore:
        """Remove `other`'s errors (a subset of the same labels); the sums stay exact."""
        self.n -= other.n
        for mine, theirs in ((self.abs_error, other.abs_error),
                             (self.squared_error, other.squared_error)):
            mine.merge(ExactSum([-p for p in theirs.partials]))
        return self

    @staticmethod
    def faded_stats(columns: dict) -> np.ndarray:
        """Per label and prediction column: [n, |e|, e²] (zeros without a prediction)."""
        y = np.asarray(columns["y"], dtype=np.float64)
        preds = np.asarray(columns["preds"], dtype=np.float64)
        scored = ~np.isnan(preds)
        e = np.where(scored, y[:, None] - preds, 0.0)
        return np.stack([scored.astype(np.float64), np.abs(e), e * e], axis=-1)

    @staticmethod
    def pad_faded(stats: np.ndarray, width: int) -> np.ndarray:
        return stats  # always [n, |e|, e²]

    @classmethod
    def from_faded(cls, row: list) -> RegressionScore:
        s = cls()
        s.n = row[0]
        s.abs_error, s.squared_error = ExactSum([row[1]]), ExactSum([row[2]])
        return s

    @property
    def mae(self) -> float:
        return ratio(self.abs_error.value, self.n)

    @property
    def rmse(self) -> float:
        mse = ratio(self.squared_error.value, self.n)
        return math.sqrt(mse) if not math.isnan(mse) else math.nan

    def get(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in REGRESSION_METRICS}

    def to_dict(self) -> dict:
        return {"n": self.n, "abs_error": self.abs_error.to_dict(),
                "squared_error": self.squared_error.to_dict()}

    @classmethod
    def from_dict(cls, d: dict) -> RegressionScore:
        s = cls()
        s.n = d["n"]
        s.abs_error = ExactSum.from_dict(d["abs_error"])
        s.squared_error = ExactSum.from_dict(d["squared_error"])
        return s

    def __eq__(self, other) -> bool:
        return isinstance(other, RegressionScore) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"RegressionScore(n={self.n}, mae={self.mae:.4f})"
