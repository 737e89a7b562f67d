"""Comparing models over many streams (Demšar 2006): average ranks, the Friedman test, the
Nemenyi critical difference, and the Wilcoxon signed-rank test for two models. The tests are
scipy's, with Friedman's exact p counted here; the ranks and the critical difference are the
paper's formulas."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

# Measures where a lower value is the better one (the rest: higher is better).
LOWER_IS_BETTER = frozenset({
    "log_loss", "brier", "ece", "mae", "rmse", "mape", "abs_error_p50", "abs_error_p90",
    "abs_error_p99", "accuracy_ci_hoeffding", "accuracy_ci_chernoff", "kappa_se"})


def ranks(table, lower_is_better: bool = False) -> np.ndarray:
    """Each model's rank on each stream (streams × models), 1 the best, ties sharing the mean
    of their ranks.

    >>> ranks([[0.9, 0.8, 0.8], [0.7, 0.75, 0.6]]).tolist()
    [[1.0, 2.5, 2.5], [2.0, 1.0, 3.0]]
    """
    values = np.asarray(table, dtype=np.float64)
    return stats.rankdata(values if lower_is_better else -values, axis=1)


def critical_difference(models: int, streams: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference q_α·sqrt(k(k+1)/(6N)): two models whose average ranks
    differ by more are significantly different at level α. q_α is the studentized range
    quantile divided by √2 (Demšar's Table 5: 2.569 for k = 4 at 0.05).

    >>> round(critical_difference(4, 14), 3)  # Demšar 2006, section 3.2.2
    1.254
    """
    q = stats.studentized_range.ppf(1 - alpha, models, math.inf) / math.sqrt(2)
    return float(q * math.sqrt(models * (models + 1) / (6 * streams)))


def friedman(table) -> dict:
    """The Friedman test over streams × models: scipy's χ²_F (with its tie correction) and
    p-value, and Iman and Davenport's F_F = (N − 1)χ²_F / (N(k − 1) − χ²_F) with (k − 1,
    (k − 1)(N − 1)) degrees of freedom, which Demšar recommends.

    Models tied on every stream differ in nothing: χ²_F = F_F = 0 and p = 1, as the statistic
    without the tie correction gives (with it, 0/0), and as `rank` says of two such models.
    Models ranked alike on every stream agree perfectly: χ²_F = N(k − 1), so F_F = ∞ (not the
    1e16 of a denominator rounded to 1e-15), where the F approximation says nothing; its p is
    then the exact one, the chance under the null hypothesis that N streams rank the models
    alike, (Π t! / k!)^(N − 1) for ties of sizes t (1/6 for 3 models on 2 streams, where
    "p = 0" read as significant).

    Where it takes little time (few streams and models: `friedman_exact_p`), `p_exact` is the
    permutation test's exact p, which the χ² approximation misses on few streams.

    >>> round(friedman([[1, 2, 3], [1, 3, 2], [1, 2, 3], [2, 1, 3]])["chi2"], 4)
    4.5
    >>> friedman([[0.9, 0.9, 0.9], [0.7, 0.7, 0.7]])
    {'chi2': 0.0, 'p_chi2': 1.0, 'f': 0.0, 'p_f': 1.0, 'df': [2, 2], 'p_exact': 1.0}
    >>> friedman([[0.9, 0.9, 0.8, 0.7]] * 4)["f"]
    inf
    >>> round(friedman([[0.9, 0.7, 0.6], [0.8, 0.6, 0.5]])["p_f"], 4)
    0.1667
    """
    values = np.asarray(table, dtype=np.float64)
    n, k = values.shape
    if np.all(values == values[:, :1]):
        return {"chi2": 0.0, "p_chi2": 1.0, "f": 0.0, "p_f": 1.0, "df": [k - 1, (k - 1) * (n - 1)],
                "p_exact": 1.0}
    chi2, p = stats.friedmanchisquare(*values.T)
    r = ranks(values)
    denominator = n * (k - 1) - chi2
    f = (n - 1) * chi2 / denominator if denominator > 0 and np.any(r != r[:1]) else math.inf
    df1, df2 = k - 1, (k - 1) * (n - 1)
    if math.isfinite(f):
        p_f = float(stats.f.sf(f, df1, df2))
    else:  # (every row ranks alike: the same ties in each)
        ways = math.factorial(k) / math.prod(math.factorial(t) for t in
                                             np.unique(r[0], return_counts=True)[1])
        p_f = float(ways ** -(n - 1))
    result = {"chi2": float(chi2), "p_chi2": float(p), "f": float(f), "p_f": p_f,
              "df": [df1, df2]}
    exact = friedman_exact_p(r)
    return result if exact is None else {**result, "p_exact": exact}


# The most cell updates `friedman_exact_p` makes (~0.5 s): beyond, the χ² approximation.
EXACT_WORK = 2 * 10 ** 8


def friedman_exact_p(r) -> float | None:
    """The exact p of Friedman's test on ranks `r` (streams × models, ties sharing the mean of
    their ranks): under the null hypothesis each stream's ranks fall among the models in any
    order alike, and χ²_F (the ties in a row fixed) grows with Σ_j R_j², the models' rank sums
    squared, so p is the chance of a Σ_j R_j² at least the observed one. Counted over the
    distribution of the rank sums, built stream by stream (each of its orders shifts the
    counts so far); None where that would take over `EXACT_WORK` cell updates (many streams
    and models, where the χ² approximation serves).

    >>> friedman_exact_p(ranks([[0.9, 0.7, 0.6], [0.8, 0.6, 0.5]]))  # (1/6: ranked alike)
    0.16666666666666666
    >>> friedman_exact_p(ranks([[1, 2, 3], [1, 3, 2], [1, 2, 3], [2, 1, 3]]))  # (χ²'s: 0.105)
    0.125
    """
    import itertools

    twice = np.rint(2 * np.asarray(r, dtype=np.float64)).astype(np.int64)  # (2, 3, 4, ...)
    n, k = twice.shape
    step = max(1, int(np.gcd.reduce((twice - 2).ravel())))  # (2 without ties: no odd cells)
    steps = (twice - 2) // step
    orders = [sorted(set(itertools.permutations(row))) for row in steps.tolist()]
    largest = int(steps.max(axis=1).sum())
    cells = (largest + 1) ** (k - 1)
    if cells * sum(map(len, orders)) > EXACT_WORK:
        return None
    counts = np.zeros((largest + 1,) * (k - 1))
    counts[(0,) * (k - 1)] = 1.0
    for block in orders:
        shifted = np.zeros_like(counts)
        for order in block:  # (the last model's sum follows from the others')
            shifted[tuple(slice(o, None) for o in order[:-1])] += \
                counts[tuple(slice(0, largest + 1 - o) for o in order[:-1])]
        counts = shifted
        if counts.max() > 2.0 ** 900:  # (counts of many streams: scaled by a power of 2, exact)
            counts *= 2.0 ** -600
    sums = np.ogrid[tuple(slice(0, largest + 1) for _ in range(k - 1))]
    last = int(steps.sum()) - sum(sums)
    spread = sum((step * s + 2 * n) ** 2 for s in [*sums, last])  # (Σ_j (2 R_j)²)
    observed = int((twice.sum(axis=0) ** 2).sum())
    return float(counts[spread >= observed].sum() / counts.sum())


def cliques(average: dict, cd: float) -> list[list[str]]:
    """The maximal groups of models whose average ranks lie within `cd` of each other (the
    bars of a critical-difference diagram), best first; a model alone is no group.

    >>> cliques({"a": 1.2, "b": 1.9, "c": 2.8, "d": 3.0}, cd=1.0)
    [['a', 'b'], ['b', 'c'], ['c', 'd']]
    """
    order = sorted(average, key=average.get)
    groups: list = []
    for i, first in enumerate(order):
        last = i
        while last + 1 < len(order) and average[order[last + 1]] - average[first] < cd:
            last += 1
        group = order[i:last + 1]
        if len(group) > 1 and not (groups and set(group) <= set(groups[-1])):
            groups.append(group)
    return groups
