"""The Poisson bootstrap of the confusion counts: every label is counted w_r times in replicate r,
w_r ~ Poisson(1) drawn from a hash of its label number and r, so a replicate's counts are sums
that merge in any order and subtract exactly (windows), and every runner draws the same
weights. From each replicate's counts come its accuracy, κ and macro F1; the 2.5th and 97.5th
percentiles of the replicates are the reported interval.

References
----------
Oza, N. C., Russell, S. (2001). Online bagging and boosting. Artificial Intelligence and
Statistics (Poisson(1) weights as the online bootstrap).

Hanley, J. A., MacGibbon, B. (2006). Creating non-parametric bootstrap samples using Poisson
frequencies. Computer Methods and Programs in Biomedicine 83(1), 57–62.
"""

from __future__ import annotations

import math

import numpy as np

# The statistics whose replicates give an interval, and the interval's ends.
BOOTSTRAP_STATISTICS = ("accuracy", "kappa", "macro_f1")
BOOTSTRAP_METRICS = tuple(f"{m}_bootstrap_{end}" for m in BOOTSTRAP_STATISTICS
                          for end in ("low", "high"))
BOOTSTRAP_LEVEL = 0.95
BOOTSTRAP_SEED = 0x5EED_DE1A
MOST_REPLICATES = 10_000  # R: each replicate keeps a full set of counts, updated at each label
# P(W ≤ k) for W ~ Poisson(1), k = 0..19 (the rest, < 1e-18, is 20).
_POISSON_CDF = np.cumsum([math.exp(-1) / math.factorial(k) for k in range(20)])
_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """Steele et al.'s SplitMix64 finaliser: a counter -> 64 well-mixed bits."""
    with np.errstate(over="ignore"):
        x = (x + np.uint64(0x9E3779B97F4A7C15)) & _MASK
        x = ((x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & _MASK
        x = ((x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & _MASK
        return x ^ (x >> np.uint64(31))


def poisson_weights(label_numbers, replicates: int, seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """Each label's weight in each replicate (labels × replicates), Poisson(1), a function of
    (seed, label number, replicate) alone: the same wherever and in whatever batches it is
    drawn.

    >>> w = poisson_weights([1, 2, 3], 4)
    >>> w.shape, (w == poisson_weights([3, 1, 2], 4)[[1, 2, 0]]).all()
    ((3, 4), np.True_)
    >>> round(float(poisson_weights(np.arange(1, 20001), 50).mean()), 2)  # E[W] = 1
    1.0
    """
    n = np.asarray(label_numbers, dtype=np.uint64).reshape(-1, 1)
    with np.errstate(over="ignore"):
        counter = (n * np.uint64(replicates) + np.arange(replicates, dtype=np.uint64)) \
            ^ np.uint64(seed)
    uniform = (_splitmix64(counter) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    return np.searchsorted(_POISSON_CDF, uniform, side="right").astype(np.int64)


class BootstrapCounts:
    """Per replicate, the confusion counts of its weighted labels: {(true, predicted): counts
    over the replicates}.

    >>> b = BootstrapCounts()
    >>> b.update_many([0, 1, 1], [0, 1, 0], np.array([[1, 0], [2, 1], [0, 1]]))
    >>> b.replicates()["accuracy"].tolist()  # replicate 0: 3 of 3; replicate 1: 1 of 2
    [1.0, 0.5]
    """

    __slots__ = ("cells",)

    def __init__(self):
        self.cells: dict = {}

    def update_many(self, y_true, y_pred, weights: np.ndarray) -> None:
        y, p = np.asarray(y_true, dtype=np.int64), np.asarray(y_pred, dtype=np.int64)
        if not len(y):
            return
        k = int(max(y.max(), p.max())) + 1
        cell = y * k + p
        order = np.argsort(cell, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(cell[order]) != 0])
        sums = np.add.reduceat(weights[order], starts, axis=0)
        for c, counts in zip(cell[order][starts].tolist(), sums):
            key = divmod(c, k)
            have = self.cells.get(key)
            self.cells[key] = counts.copy() if have is None else have + counts

    def _combine(self, other: BootstrapCounts, sign: int) -> BootstrapCounts:
        for key, counts in other.cells.items():
            have = self.cells.get(key)
            self.cells[key] = sign * counts if have is None else have + sign * counts
        return self

    def merge(self, other: BootstrapCounts) -> BootstrapCounts:
        return self._combine(other, 1)

    def subtract(self, other: BootstrapCounts) -> BootstrapCounts:
        return self._combine(other, -1)

    def replicates(self) -> dict:
        """{statistic: its value in each replicate} for `BOOTSTRAP_STATISTICS` (NaN where a
        replicate has no label), computed as `ClassificationScore` computes them."""
        if not self.cells:
            return {name: np.empty(0) for name in BOOTSTRAP_STATISTICS}
        k = max(max(i, j) for i, j in self.cells) + 1
        r = len(next(iter(self.cells.values())))
        matrix = np.zeros((k, k, r))
        for (i, j), counts in self.cells.items():
            matrix[i, j] = counts
        n = matrix.sum(axis=(0, 1))
        hits = np.trace(matrix)
        true, predicted = matrix.sum(axis=1), matrix.sum(axis=0)  # classes × replicates
        with np.errstate(invalid="ignore", divide="ignore"):
            accuracy = hits / n
            p_random = (true * predicted).sum(axis=0) / (n * n)
            kappa = (accuracy - p_random) / (1 - p_random)
            diagonal = np.diagonal(matrix).T  # classes × replicates
            present = (true + predicted) > 0
            f1 = np.where(present, 2 * diagonal / np.where(present, true + predicted, 1), 0.0)
            macro_f1 = f1.sum(axis=0) / present.sum(axis=0)
        return {"accuracy": accuracy, "kappa": kappa, "macro_f1": macro_f1}

    def to_dict(self) -> dict:
        return {f"{i},{j}": counts.tolist() for (i, j), counts in self.cells.items()}

    @classmethod
    def from_dict(cls, d: dict) -> BootstrapCounts:
        b = cls()
        b.cells = {tuple(map(int, key.split(","))): np.array(v, dtype=np.int64)
                   for key, v in d.items()}
        return b


def percentile_interval(values) -> tuple[float, float]:
    """The central `BOOTSTRAP_LEVEL` interval of replicate values (NaN ones left out).

    >>> [round(v, 9) for v in percentile_interval(np.arange(101.0))]
    [2.5, 97.5]
    """
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    if not len(values):
        return math.nan, math.nan
    tail = 100 * (1 - BOOTSTRAP_LEVEL) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)
