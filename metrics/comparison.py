"""Comparing two models on the same labels: the Q statistic and the signed McNemar test (Gama
et al. 2009, section 3.3), and the Diebold-Mariano test of their losses, mergeable so that
windows and fading factors apply as to any score.
"""

from __future__ import annotations

import math

import numpy as np

from metrics.exact import ExactSum, exact_squares, ratio

COMPARISON_METRICS = ("q_statistic", "mcnemar", "mcnemar_p", "mcnemar_exact_p",
                      "mcnemar_significant", "diebold_mariano", "diebold_mariano_p")
CHI2_1_99 = 6.635  # χ²(1) at 0.99


class PairScore:
    """Losses of models A and B on the same labels, and the McNemar counts.

    - Q = log(S_A / S_B), S the accumulated losses (0-1 loss, or squared error for regressors):
      negative when A is better;
    - n01: labels A got wrong and B right, n10: the reverse (0-1 losses only);
      M = sign(n01 − n10)·(n01 − n10)² / (n01 + n10) — positive when A is worse;
      p-value of |M| under χ²(1); significant at 0.99 when |M| > 6.635;
    - the exact (binomial) McNemar p-value, n01 of n01 + n10 under Bin(n01 + n10, 1/2), two-sided:
      the one to read when n01 + n10 is small (< 25), where χ²(1) is a poor approximation;
    - the Diebold-Mariano statistic of the loss differentials d = loss A − loss B, with Harvey et
      al.'s small-sample correction for one-step predictions: d̄ / (s/√n), s² the sample variance
      of d — the paired t statistic of the losses — positive when A is worse, and its two-sided
      p-value under Student's t with n − 1 degrees of freedom. It tests regressors (squared
      errors) as McNemar tests classifiers; with 0-1 losses it is close to McNemar's.

    >>> s = PairScore()
    >>> s.update_many(a=[1, 1, 1, 0, 1], b=[0, 0, 1, 0, 0], a_only=[1, 1, 0, 0, 1],
    ...               b_only=[0, 0, 0, 0, 0])
    >>> g = s.get()
    >>> round(g["q_statistic"], 4), g["mcnemar"], round(g["mcnemar_p"], 4)  # log(4/1), 9/3
    (1.3863, 3.0, 0.0833)

    References
    ----------
    Gama, J., Sebastião, R., Rodrigues, P. P. (2009). Issues in evaluation of stream
    learning algorithms. Proceedings of the 15th ACM SIGKDD International Conference on
    Knowledge Discovery and Data Mining, 329–338.

    Diebold, F. X., Mariano, R. S. (1995). Comparing predictive accuracy. Journal of Business &
    Economic Statistics 13(3), 253–263.

    Harvey, D., Leybourne, S., Newbold, P. (1997). Testing the equality of prediction mean
    squared errors. International Journal of Forecasting 13(2), 281–291.
    """

    __slots__ = ("n", "loss_a", "loss_b", "n01", "n10", "squared_differences", "weighted")

    # A faded view's columns per label: whether both models predicted it (a label one did not
    # predict adds nothing and still ages the others), the losses, who alone was wrong.
    FADED_COLUMNS = ("both", "a", "b", "a_only", "b_only")

    def __init__(self):
        self.n = 0
        self.loss_a = ExactSum()
        self.loss_b = ExactSum()
        self.n01 = 0
        self.n10 = 0
        self.squared_differences = ExactSum()  # Σ (loss A − loss B)², for Diebold-Mariano
        self.weighted = False  # counts that are a fading factor's weights, not labels

    def update_many(self, a, b, a_only, b_only) -> None:
        """Per label: A's loss, B's loss, and whether only A (only B) was wrong."""
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        self.n += len(a)
        self.loss_a.add_many(a)
        self.loss_b.add_many(b)
        self.n01 += int(np.count_nonzero(a_only))
        self.n10 += int(np.count_nonzero(b_only))
        with np.errstate(invalid="ignore"):  # ∞ − ∞ (two errors beyond the floats): NaN
            differences = a - b
        for part in exact_squares(differences):
            self.squared_differences.add_many(part)

    def merge(self, other: PairScore) -> PairScore:
        self.n += other.n
        self.loss_a.merge(other.loss_a)
        self.loss_b.merge(other.loss_b)
        self.n01 += other.n01
        self.n10 += other.n10
        self.squared_differences.merge(other.squared_differences)
        return self

    def subtract(self, other: PairScore) -> PairScore:
        self.n -= other.n
        self.loss_a.merge(other.loss_a.negated())
        self.loss_b.merge(other.loss_b.negated())
        self.n01 -= other.n01
        self.n10 -= other.n10
        self.squared_differences.merge(other.squared_differences.negated())
        return self

    @property
    def q_statistic(self) -> float:
        r = ratio(self.loss_a.value, self.loss_b.value)
        if math.isnan(r) or r < 0:
            return math.nan
        return math.log(r) if r > 0 else -math.inf

    @property
    def mcnemar(self) -> float:
        d = self.n01 - self.n10
        return math.copysign(1.0, d) * ratio(d * d, self.n01 + self.n10) if d else \
            ratio(0.0, self.n01 + self.n10)

    @property
    def mcnemar_p(self) -> float:
        m = self.mcnemar
        return math.nan if math.isnan(m) else math.erfc(math.sqrt(abs(m) / 2))

    @property
    def mcnemar_exact_p(self) -> float:
        """min(1, 2·P(X ≤ min(n01, n10))), X ~ Bin(n01 + n10, 1/2); NaN when the counts are
        not whole numbers (a fading factor's weights) or there is no disagreement.

        >>> s = PairScore()
        >>> s.n01, s.n10 = 1, 6
        >>> round(s.mcnemar_exact_p, 4)  # 2·(1 + 7) / 2⁷
        0.125
        """
        n01, n10 = self.n01, self.n10
        if self.weighted or not n01 + n10:
            return math.nan
        n, k = int(n01 + n10), int(min(n01, n10))
        # Bin(n, 1/2) is symmetric: the two-sided p is twice the smaller tail.
        from scipy.stats import binom

        return min(1.0, 2 * float(binom.cdf(k, n, 0.5)))

    @property
    def mcnemar_significant(self) -> float:
        m = self.mcnemar
        return math.nan if math.isnan(m) else float(abs(m) > CHI2_1_99)

    def _diebold_mariano(self) -> tuple[float, float]:
        """(statistic, two-sided p-value): d̄ / (s/√n) over the loss differentials (the exact Σd
        and Σd², one rounding at the end) under Student's t with n − 1 degrees of freedom; ±inf
        (p 0) when every d is the same nonzero value, NaN for fewer than two labels, no
        difference at all, or a fading factor's weights (which count no labels).

        >>> s = PairScore()
        >>> s.update_many([1.0, 4.0, 2.0], [0.0, 1.0, 1.0], [], [])  # d = 1, 3, 1
        >>> round(s.diebold_mariano, 6)  # (5/3) / (sqrt(4/3) / sqrt(3))
        2.5
        """
        n = self.n
        if n < 2 or self.loss_a.special or self.loss_b.special \
                or self.squared_differences.special:
            return math.nan, math.nan
        total = self.loss_a.exact - self.loss_b.exact
        spread = self.squared_differences.exact - total ** 2 / n  # (n − 1)·s²
        if spread <= 0:
            t = math.nan if total == 0 else math.copysign(math.inf, total)
        else:
            t = float(total) / math.sqrt(float(spread * n / (n - 1)))
        if math.isnan(t):
            return t, math.nan
        from scipy.special import stdtr  # Student's t cdf: scipy.stats.t's, without its overhead

        return t, float(2 * stdtr(n - 1, -abs(t)))

    @property
    def diebold_mariano(self) -> float:
        return self._diebold_mariano()[0]

    @property
    def diebold_mariano_p(self) -> float:
        return self._diebold_mariano()[1]

    def get(self) -> dict[str, float]:
        # (the Diebold-Mariano pair from one pass over the exact sums)
        dm = dict(zip(("diebold_mariano", "diebold_mariano_p"), self._diebold_mariano()))
        return {name: dm[name] if name in dm else getattr(self, name)
                for name in COMPARISON_METRICS}

    # -- fading factors (metrics.windows.FadingScore) ---------------------------------------
    @staticmethod
    def faded_stats(columns: dict) -> np.ndarray:
        """Per label (one column): [n, loss A, loss B, only A wrong, only B wrong], n 1 where
        both models predicted (else 0, and so are the rest); no Σd²: Diebold-Mariano counts
        labels, which faded weights are not."""
        parts = [np.asarray(columns[k], dtype=np.float64) for k in PairScore.FADED_COLUMNS]
        return np.stack(parts, axis=-1)[:, None, :]

    @classmethod
    def from_faded(cls, row: list) -> PairScore:
        s = cls()
        s.n, s.n01, s.n10 = row[0], row[3], row[4]
        s.loss_a, s.loss_b = ExactSum.of(row[1]), ExactSum.of(row[2])
        s.squared_differences = ExactSum(special=math.nan)  # (no Diebold-Mariano)
        s.weighted = True
        return s
