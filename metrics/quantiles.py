"""Quantiles of non-negative values (absolute errors) in constant memory, mergeable and
subtractable: a DDSketch of integer counts over log-spaced buckets, so merge order never changes
a result and a window's sketch is the difference of two cumulative ones."""

from __future__ import annotations

import math
import sys

import numpy as np

# A reported quantile is within this relative distance of a value at the exact rank.
RELATIVE_ACCURACY = 0.005
_GAMMA = (1 + RELATIVE_ACCURACY) / (1 - RELATIVE_ACCURACY)
_LOG_GAMMA = math.log(_GAMMA)
# Values below this are counted as 0 (they would need buckets far below any error in use).
_SMALLEST = 1e-300
# The bucket of infinite values (an error beyond the floats), above every finite one's.
_INFINITE = 1 << 40


class QuantileSketch:
    """Counts of values in buckets (γ^(i−1), γ^i], γ = (1 + a)/(1 − a), a = 0.5 %; zeros apart.
    The q-quantile is the value of rank ⌊q·(n − 1)⌋ (0-based, ascending; numpy's "lower"
    method), reported as 2γ^i/(γ + 1), within a relative 0.5 % of it. Memory: one count per
    occupied bucket, at most ~460 per factor 10¹⁰ of range, whatever the number of values.

    >>> s = QuantileSketch()
    >>> s.add_many(np.arange(1.0, 101.0))
    >>> [round(s.quantile(q), 1) for q in (0.5, 0.9, 0.99)]  # exact: 50, 90, 99
    [50.2, 89.6, 99.0]

    References
    ----------
    Masson, C., Rim, J. E., Lee, H. K. (2019). DDSketch: a fast and fully-mergeable quantile
    sketch with relative-error guarantees. Proceedings of the VLDB Endowment 12(12),
    2195–2205.
    """

    __slots__ = ("n", "zeros", "counts")

    def __init__(self):
        self.n = 0
        self.zeros = 0
        self.counts: dict = {}  # bucket index -> values in it

    def add_many(self, values) -> None:
        """Add non-negative values (NaN left out; +inf in a bucket above every other).

        >>> s = QuantileSketch()
        >>> s.add_many([1.0, 1.7e308, 1.79e308, np.inf])
        >>> [f"{s.quantile(q):.4g}" for q in (0.4, 0.7, 1.0)]  # to 0.5 %; the largest float
        ['1.707e+308', '1.798e+308', 'inf']
        """
        x = np.asarray(values, dtype=np.float64).ravel()
        x = x[~np.isnan(x)]
        if not len(x):
            return
        self.n += len(x)
        small = x < _SMALLEST
        self.zeros += int(small.sum())
        infinite = np.isinf(x)
        if infinite.any():
            self.counts[_INFINITE] = self.counts.get(_INFINITE, 0) + int(infinite.sum())
            small |= infinite
        buckets = np.ceil(np.log(x[~small]) / _LOG_GAMMA).astype(np.int64)
        distinct, counts = np.unique(buckets, return_counts=True)
        for i, c in zip(distinct.tolist(), counts.tolist()):
            self.counts[i] = self.counts.get(i, 0) + c

    def _combine(self, other: QuantileSketch, sign: int) -> QuantileSketch:
        self.n += sign * other.n
        self.zeros += sign * other.zeros
        for i, c in other.counts.items():
            total = self.counts.get(i, 0) + sign * c
            if total:
                self.counts[i] = total
            else:
                self.counts.pop(i, None)
        return self

    def merge(self, other: QuantileSketch) -> QuantileSketch:
        return self._combine(other, 1)

    def subtract(self, other: QuantileSketch) -> QuantileSketch:
        """Remove `other`, a sketch of a subset of the same values.

        >>> a, b = QuantileSketch(), QuantileSketch()
        >>> a.add_many([1.0, 2.0, 3.0, 400.0]); b.add_many([400.0])
        >>> round(a.subtract(b).quantile(1.0), 2)  # 3, to 0.5 %
        2.99
        """
        return self._combine(other, -1)

    def quantile(self, q: float) -> float:
        """The q-quantile (NaN for no values)."""
        if not self.n:
            return math.nan
        rank = math.floor(q * (self.n - 1))
        if rank < self.zeros:
            return 0.0
        seen = self.zeros
        for i in sorted(self.counts):
            seen += self.counts[i]
            if seen > rank:
                if i == _INFINITE:
                    return math.inf
                try:
                    top = _GAMMA ** i
                except OverflowError:  # a bucket at the floats' end: the largest float
                    return sys.float_info.max
                value = 2 * top / (_GAMMA + 1)
                return value if value != math.inf else top * (2 / (_GAMMA + 1))
        return math.nan  # unreachable: the counts add up to n

    def to_dict(self) -> dict:
        return {"n": self.n, "zeros": self.zeros, "counts": dict(self.counts)}

    @classmethod
    def from_dict(cls, d: dict) -> QuantileSketch:
        s = cls()
        s.n, s.zeros = d["n"], d["zeros"]
        s.counts = {int(i): c for i, c in d["counts"].items()}
        return s
