"""Mean absolute error, root mean squared error, R² and the mean absolute percentage error,
exactly mergeable."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from metrics.exact import ExactSum, exact_squares, ratio
from metrics.quantiles import QuantileSketch

# No confidence bound for regression: the Chernoff and Hoeffding bounds of Gama et al. 2009 hold for
# losses in [0, 1] (or a known range); on absolute errors in the target's units their width would
# change with the unit of measurement.
REGRESSION_CONFIDENCE_METRICS: tuple = ()
# Quantiles of the absolute error (`QuantileSketch`: within 0.5 % relative); not in fading views.
QUANTILE_METRICS = {"abs_error_p50": 0.5, "abs_error_p90": 0.9, "abs_error_p99": 0.99}
REGRESSION_METRICS = ("mae", "rmse", "r2", "mape", *QUANTILE_METRICS,
                      *REGRESSION_CONFIDENCE_METRICS)
# The exact sums, in the order of `faded_stats`' columns after n (a faded view's target sums
# are taken from its first target, `faded_centre`).
_SUMS = ("abs_error", "squared_error", "sum_y", "sum_y2", "abs_pct_error", "nonzero")


class RegressionScore:
    """Sums behind MAE, RMSE, R² and MAPE; merge order never changes the result.

    - R² = 1 − Σe² / Σ(y − ȳ)², Σ(y − ȳ)² = Σy² − (Σy)²/n from the exact sums, without rounding
      until the end (1 for a perfect prediction of a constant target, else 0 there, as
      scikit-learn);
    - MAPE = mean of |e| / |y| over the labels whose target is not 0 (a zero target has no
      percentage error; `nonzero` counts the others);
    - the 50th, 90th and 99th percentiles of |e| (`QuantileSketch`, within 0.5 %).

    >>> s = RegressionScore()
    >>> for y, p in [(3.0, 2.5), (-0.5, 0.0), (2.0, 2.0), (7.0, 8.0)]:
    ...     s.update(y, p)
    >>> {k: round(v, 4) for k, v in s.get().items()}  # doctest: +NORMALIZE_WHITESPACE
    {'mae': 0.5, 'rmse': 0.6124, 'r2': 0.9486, 'mape': 0.3274, 'abs_error_p50': 0.4991,
     'abs_error_p90': 0.4991, 'abs_error_p99': 0.4991}
    """

    __slots__ = ("n", *_SUMS, "abs_errors")

    def __init__(self):
        self.n = 0
        for name in _SUMS:
            setattr(self, name, ExactSum())
        self.abs_errors: QuantileSketch | None = QuantileSketch()  # None: a faded view's

    def update(self, y_true: float, y_pred: float) -> None:
        e = y_true - y_pred
        self.n += 1
        self.abs_error.add(abs(e))
        self.abs_errors.add_many([abs(e)])
        self.squared_error.add(e * e)
        self.sum_y.add(y_true)
        for part in exact_squares(y_true):  # Σy² exact: R²'s denominator is a difference
            self.sum_y2.add(float(part))
        if y_true:
            self.abs_pct_error.add(abs(e) / abs(y_true))
            self.nonzero.add(1.0)

    def update_many(self, y_true, y_pred) -> None:
        """`update` for arrays, without a Python step per label (`ExactSum.add_many`): the
        sums stay exact, so the result is the same."""
        y = np.asarray(y_true, dtype=np.float64)
        self.n += len(y)
        nonzero = y != 0
        with np.errstate(over="ignore"):  # a term beyond the floats is ±inf (`ExactSum`)
            e = y - np.asarray(y_pred, dtype=np.float64)
            self.abs_error.add_many(np.abs(e))
            self.abs_errors.add_many(np.abs(e))
            self.squared_error.add_many(e * e)
            self.abs_pct_error.add_many(np.abs(e[nonzero]) / np.abs(y[nonzero]))
            self._update_target(y)

    @staticmethod
    def update_columns(scores: list, y_true, predictions, made) -> None:
        """`update_many` of one score per prediction column (the bins) at once: `predictions`
        is labels × columns, `made` (labels × columns) marks the labels each column scores.
        Each sum takes all columns' terms in one `ExactSum.add_grouped`, so every score gets
        exactly what its own `update_many` would give it.

        >>> a, b = RegressionScore(), RegressionScore()
        >>> RegressionScore.update_columns([a, b], [3.0, -0.5], [[2.5, 3.0], [0.0, 9.0]],
        ...                                [[True, True], [True, False]])
        >>> (a.n, a.get()["mae"]), (b.n, b.get()["mae"])
        ((2, 0.5), (1, 0.0))
        """
        y = np.asarray(y_true, dtype=np.float64)
        made = np.asarray(made, dtype=bool)
        label, column = np.nonzero(made)  # cells in label order
        if not len(label):
            return
        order = np.argsort(column, kind="stable")
        label, column = label[order], column[order]  # column by column, labels in order
        target = y[label]
        nonzero = target != 0
        with np.errstate(over="ignore"):  # a term beyond the floats is ±inf (`ExactSum`)
            e = target - np.asarray(predictions, dtype=np.float64)[label, column]
            abs_e = np.abs(e)

            def add(name, values, groups=column):
                ExactSum.add_grouped([getattr(score, name) for score in scores], values, groups)

            add("abs_error", abs_e)
            add("squared_error", e * e)
            add("abs_pct_error", abs_e[nonzero] / np.abs(target[nonzero]), column[nonzero])
            if made.all():  # every column scores every label: the target's sums once
                shared = RegressionScore()
                shared._update_target(y)
                for score in scores:
                    for name in ("sum_y", "sum_y2", "nonzero"):
                        getattr(score, name).merge(getattr(shared, name))
            else:
                add("sum_y", target)
                add("sum_y2", np.concatenate(exact_squares(target)), np.tile(column, 2))
                add("nonzero", nonzero.astype(np.float64))
        counts = np.bincount(column, minlength=len(scores))
        for j, part in enumerate(np.split(abs_e, np.cumsum(counts)[:-1])):
            scores[j].n += int(counts[j])
            scores[j].abs_errors.add_many(part)

    def _update_target(self, y) -> None:
        """The sums of the targets alone (Σy, Σy² exactly, how many are not 0)."""
        self.sum_y.add_many(y)
        self.sum_y2.add_many(np.concatenate(exact_squares(y)))
        self.nonzero.add_many((y != 0).astype(np.float64))

    def merge(self, other: RegressionScore) -> RegressionScore:
        self.n += other.n
        for name in _SUMS:
            getattr(self, name).merge(getattr(other, name))
        if self.abs_errors is not None and other.abs_errors is not None:
            self.abs_errors.merge(other.abs_errors)
        return self

    def subtract(self, other: RegressionScore) -> RegressionScore:
        """Remove `other`'s errors (a subset of the same labels); the sums stay exact."""
        self.n -= other.n
        for name in _SUMS:
            getattr(self, name).merge(getattr(other, name).negated())
        if self.abs_errors is not None and other.abs_errors is not None:
            self.abs_errors.subtract(other.abs_errors)
        return self

    @staticmethod
    def faded_centre(columns: dict) -> float:
        """Where a faded view's target sums are taken from: its first target c. Faded sums
        are floats, not exact, so Σ(y − ȳ)² = Σy² − (Σy)²/n would cancel to rounding noise
        where the spread is small beside the targets (one label, a constant target, prices
        near 10⁹); Σ(y − c) and Σ(y − c)² give the same spread without that cancellation."""
        return float(columns["y"][0])

    @staticmethod
    def faded_stats(columns: dict) -> np.ndarray:
        """Per label and prediction column: [n, |e|, e², y − c, (y − c)², |e|/|y|, [y ≠ 0]]
        (zeros without a prediction; the last two zero for a zero target; c the column
        `origin`, a `faded_centre`, else 0)."""
        y = np.asarray(columns["y"], dtype=np.float64)
        preds = np.asarray(columns["preds"], dtype=np.float64)
        scored = ~np.isnan(preds)
        with np.errstate(over="ignore"):  # a term beyond the floats is ±inf (`FadingScore`)
            e = np.where(scored, y[:, None] - preds, 0.0)
            ys = np.where(scored, y[:, None], 0.0)
            centred = np.where(scored, y[:, None] - columns.get("origin", 0.0), 0.0)
            nonzero = ys != 0
            pct = np.divide(np.abs(e), np.abs(ys), out=np.zeros_like(e), where=nonzero)
            return np.stack([scored.astype(np.float64), np.abs(e), e * e, centred,
                             centred * centred, pct, nonzero.astype(np.float64)], axis=-1)

    @staticmethod
    def shift_faded(state: np.ndarray, delta: float) -> np.ndarray:
        """Faded statistics taken from c, taken from c − delta instead (y − c + delta).

        >>> RegressionScore.shift_faded(np.array([[2.0, 0, 0, 1.0, 1.0, 0, 0]]), 3.0).tolist()
        [[2.0, 0.0, 0.0, 7.0, 25.0, 0.0, 0.0]]
        """
        out = state.copy()
        n, s1 = state[..., 0], state[..., 3]
        out[..., 3] = s1 + delta * n
        out[..., 4] = state[..., 4] + 2 * delta * s1 + delta * delta * n
        return out

    @staticmethod
    def pad_faded(stats: np.ndarray, width: int) -> np.ndarray:
        return stats  # always the same columns

    @classmethod
    def from_faded(cls, row: list) -> RegressionScore:
        s = cls()
        s.n = row[0]
        for name, value in zip(_SUMS, row[1:]):
            setattr(s, name, ExactSum.of(value))
        s.abs_errors = None  # no faded quantiles
        return s

    @property
    def mae(self) -> float:
        return ratio(self.abs_error.value, self.n)

    @property
    def rmse(self) -> float:
        mse = ratio(self.squared_error.value, self.n)
        return math.sqrt(mse) if not math.isnan(mse) else math.nan

    @property
    def r2(self) -> float:
        """1 − Σe² / Σ(y − ȳ)², the denominator computed exactly from Σy and Σy².

        >>> s = RegressionScore()
        >>> s.update_many([1e9 + 1, 1e9 + 2, 1e9 + 3], [1e9 + 1, 1e9 + 2, 1e9 + 2])
        >>> s.r2  # 1 − 1/2, though Σy² − (Σy)²/n cancels 18 digits away
        0.5
        """
        if not self.n:
            return math.nan
        if self.squared_error.special or self.sum_y2.special:  # an error or y² overflowed
            return -math.inf if self.squared_error.special == math.inf \
                and not self.sum_y2.special else math.nan
        total = self.sum_y2.exact - self.sum_y.exact ** 2 / Fraction(self.n)
        residual = self.squared_error.exact
        # A spread below 2^-100 of Σy² is a constant target (y² below ~1e-290 loses its low
        # bits to underflow, so a true 0 may come out a hair above): scikit-learn's convention.
        if total <= self.sum_y2.exact / 2 ** 100:
            return 1.0 if residual == 0 else 0.0
        try:
            return float(1 - residual / total)
        except OverflowError:  # errors beyond 10^308 times the spread
            return -math.inf

    @property
    def mape(self) -> float:
        return ratio(self.abs_pct_error.value, self.nonzero.value)

    def get(self) -> dict[str, float]:
        out = {name: getattr(self, name) for name in REGRESSION_METRICS
               if name not in QUANTILE_METRICS}
        if self.abs_errors is not None:
            out.update({name: self.abs_errors.quantile(q)
                        for name, q in QUANTILE_METRICS.items()})
        return out

    def to_dict(self) -> dict:
        return {"n": self.n, **{name: getattr(self, name).to_dict() for name in _SUMS},
                "abs_errors": None if self.abs_errors is None else self.abs_errors.to_dict()}

    @classmethod
    def from_dict(cls, d: dict) -> RegressionScore:
        s = cls()
        s.n = d["n"]
        for name in _SUMS:
            setattr(s, name, ExactSum.from_dict(d[name]))
        s.abs_errors = None if d.get("abs_errors") is None else \
            QuantileSketch.from_dict(d["abs_errors"])
        return s

    def __eq__(self, other) -> bool:
        """Equal sums (their exact values; partials may hold them differently, and a sum
        with an infinite or NaN term is that term, whatever its finite ones)."""
        def exact(s):
            return [s.n, s.abs_errors and s.abs_errors.to_dict()] + [
                (None if getattr(s, name).special else getattr(s, name).exact,
                 repr(getattr(s, name).special)) for name in _SUMS]

        return isinstance(other, RegressionScore) and exact(self) == exact(other)

    def __repr__(self) -> str:
        return f"RegressionScore(n={self.n}, mae={self.mae:.4f})"
