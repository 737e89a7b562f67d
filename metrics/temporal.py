"""Temporal dependence of a label sequence (Žliobaitė, Bifet, Read, Pfahringer & Holmes 2015).

With strong temporal dependence the Persistent classifier (predict the previous label) beats the
Majority class, κ looks good while κ_per is negative, and a learner that ignores the past labels
can lose to a baseline. The profile says how much dependence there is before any model runs.
"""

from __future__ import annotations

import math

import numpy as np

from metrics.exact import ratio

# A stream's labels repeat beyond chance when so many repeats have at most this probability
# for independent labels with the stream's class frequencies.
REPEATS_LEVEL = 0.01


def repeat_moments(counts) -> tuple[float, float]:
    """Mean and variance of the number of repeats (a label equal to the one before it) when
    labels with class counts `counts` come in a random order: what independent labels with
    these class frequencies give, taking the counts as they are (the k-class runs test of
    Wald and Wolfowitz: repeats = labels − runs).

    For N labels, m = N − 1 pairs: a pair repeats with probability a = Σ c(c−1) / N(N−1); two
    pairs sharing a label both do with b = Σ c(c−1)(c−2) / N(N−1)(N−2); two disjoint pairs with
    d = (Σ c(c−1)(c−2)(c−3) + Σ_{i≠j} c_i(c_i−1)c_j(c_j−1)) / N(N−1)(N−2)(N−3). Then
    Var = m·a(1 − a) + 2(m − 1)(b − a²) + (m − 1)(m − 2)(d − a²).

    >>> repeat_moments([2, 2])  # 0011, 0101, 0110, 1001, 1010, 1100: 2, 0, 1, 1, 0, 2
    (1.0, 0.6666666666666667)

    References
    ----------
    Wald, A., Wolfowitz, J. (1940). On a test whether two samples are from the same
    population. The Annals of Mathematical Statistics 11(2), 147–162.
    """
    c = np.asarray(counts, dtype=np.float64)
    n = float(c.sum())
    m = n - 1
    pairs = c * (c - 1)  # (each falling factorial: 1 where too few labels make it 0)
    a = pairs.sum() / max(n * (n - 1), 1.0)
    b = (pairs * (c - 2)).sum() / max(n * (n - 1) * (n - 2), 1.0)
    d = ((pairs * (c - 2) * (c - 3)).sum() + pairs.sum() ** 2 - (pairs * pairs).sum()) / \
        max(n * (n - 1) * (n - 2) * (n - 3), 1.0)
    var = m * a * (1 - a) + 2 * (m - 1) * (b - a * a) + (m - 1) * (m - 2) * (d - a * a)
    return float(m * a), float(max(var, 0.0))


def repeats_by_chance(counts, repeats: int, fewer: bool = False) -> float:
    """How likely labels with class counts `counts`, in a random order, repeat the previous
    label at least `repeats` times (`fewer`: at most), one-sided, a normal approximation with
    `repeat_moments`: small values say the labels depend on the ones before them (`fewer`:
    they alternate). NaN for one class or fewer than 3 labels.

    >>> round(repeats_by_chance([50, 50], 49), 2)  # 99 pairs, 49 repeats expected
    0.54
    >>> repeats_by_chance([50, 50], 90) < 1e-15, repeats_by_chance([50, 50], 5, fewer=True) < 1e-15
    (True, True)
    """
    mean, var = repeat_moments(counts)
    if sum(counts) < 3 or var <= 0:
        return math.nan
    # Continuity correction: repeats are counts.
    above = (mean - repeats - 0.5) if fewer else (repeats - 0.5 - mean)
    return 0.5 * math.erfc(above / math.sqrt(2.0 * var))


def stream_profile(labels, max_lag: int = 5) -> dict:
    """Profile of class indices in label-arrival order.

    - `p_majority` P(M): the prior of the most frequent class (ties: lowest index);
    - `p_same` P(T) = Σ_i P(i,i): how often a label repeats the previous one (Proposition 7:
      Persistent beats Majority when P(T) > P(M));
    - `repeats_by_chance`: how likely labels independent of each other (with these class
      frequencies) repeat at least that often (`repeats_by_chance`); below `REPEATS_LEVEL`
      the dependence is more than sampling noise; `fewer_repeats_by_chance`: at most that
      often (small: the labels alternate);
    - `majority_accuracy`, `persistent_accuracy`: the two baselines with hindsight (the majority
      class of the whole sequence; the previous label, first label excluded);
    - `delta[ℓ][i]` for ℓ = 1..L: Δ(ℓ) = P(y_t=i | y_{t−1..t−ℓ}=i) − P(y_t=i | y_{t−1..t−ℓ−1}=i),
      evidence of dependence of order ℓ+1 (NaN where a run of that length never occurs);
    - `delta_runs[ℓ][i]`: how often the ℓ+1 labels before one were all i, the rarer of the
      two conditions Δ(ℓ) compares: a Δ from a handful of runs is mostly noise.

    >>> p = stream_profile([0, 0, 0, 1, 1, 0, 0, 0, 1, 1], max_lag=1)
    >>> p["p_majority"], round(p["p_same"], 4), p["persistent_accuracy"]
    (0.6, 0.6667, 0.6666666666666666)
    >>> p["delta"]["1"]  # P(0|0) − P(0|00) = 4/6 − 2/4; P(1|1) − P(1|11) = 2/3 − 0/1
    {'0': 0.16666666666666663, '1': 0.6666666666666666}
    >>> p["delta_runs"]["1"]  # 00 before a label: 4 times; 11: once
    {'0': 4, '1': 1}
    """
    return TemporalProfile(max_lag).update(labels).result()


class TemporalProfile:
    """`stream_profile` built batch by batch, labels in arrival order, in memory that does not
    grow with the stream: class counts, repeats, and per (lag, class) how often the previous
    `lag` labels were all that class and how often the next label stayed in it.

    Parameters
    ----------
    max_lag
        The longest run length ℓ for which Δ(ℓ) is reported.

    >>> p = TemporalProfile(max_lag=1)
    >>> for batch in ([0, 0, 0, 1], [1, 0], [0, 0, 1, 1]):
    ...     p = p.update(batch)
    >>> p.result() == stream_profile([0, 0, 0, 1, 1, 0, 0, 0, 1, 1], max_lag=1)
    True

    References
    ----------
    Žliobaitė, I., Bifet, A., Read, J., Pfahringer, B., Holmes, G. (2015). Evaluation
    methods and decision theory for classification of streaming data with temporal dependence.
    Machine Learning 98(3), 455–482.
    """

    def __init__(self, max_lag: int = 5):
        self.max_lag = max_lag
        self.counts = np.zeros(0, dtype=np.int64)
        self.same = 0
        self.last: int | None = None  # the last label seen
        self.run = 0  # how many equal labels end with it
        # [lag, class]: labels whose `lag` predecessors were all `class`, and those that stayed
        self.given = np.zeros((max_lag + 2, 0), dtype=np.int64)
        self.stayed = np.zeros((max_lag + 2, 0), dtype=np.int64)

    def update(self, labels) -> TemporalProfile:
        """Add the next labels (class indices, in arrival order)."""
        y = np.asarray(labels, dtype=np.int64)
        if not len(y):
            return self
        classes = max(len(self.counts), int(y.max()) + 1)
        self.counts = np.pad(self.counts, (0, classes - len(self.counts)))
        self.given, self.stayed = (np.pad(a, ((0, 0), (0, classes - a.shape[1])))
                                   for a in (self.given, self.stayed))
        self.counts += np.bincount(y, minlength=classes)
        seq = y if self.last is None else np.r_[self.last, y]
        at = np.arange(len(seq))
        start = np.maximum.accumulate(np.where(np.r_[True, seq[1:] != seq[:-1]], at, 0))
        # The run of equal labels ending at each position (the first run continues the last).
        run = at - start + 1 + np.where(start == 0, max(self.run - 1, 0), 0)
        prev, nxt, before = seq[:-1], seq[1:], run[:-1]
        self.same += int((prev == nxt).sum())
        for lag in range(1, self.max_lag + 2):
            given = before >= lag
            self.given[lag] += np.bincount(prev[given], minlength=classes)
            self.stayed[lag] += np.bincount(prev[given & (nxt == prev)], minlength=classes)
        self.last, self.run = int(seq[-1]), int(run[-1])
        return self

    def result(self) -> dict:
        n = int(self.counts.sum())
        out: dict = {"labels": n}
        if n == 0:
            return {**out, "p_majority": float("nan"), "p_same": float("nan"),
                    "repeats_by_chance": float("nan"),
                    "fewer_repeats_by_chance": float("nan"), "majority_accuracy": float("nan"),
                    "persistent_accuracy": float("nan"), "delta": {}, "delta_runs": {}}
        out["classes"] = len(self.counts)
        out["p_majority"] = float(self.counts.max() / n)
        out["p_same"] = ratio(self.same, n - 1)
        out["repeats_by_chance"] = repeats_by_chance(self.counts, self.same)
        out["fewer_repeats_by_chance"] = repeats_by_chance(self.counts, self.same, fewer=True)
        out["majority_accuracy"] = out["p_majority"]
        out["persistent_accuracy"] = out["p_same"]

        def conditional(lag: int, i: int) -> float:
            """P(y_t = i | the previous `lag` labels are all i)."""
            return ratio(int(self.stayed[lag, i]), int(self.given[lag, i]))

        out["delta"] = {str(lag): {str(i): conditional(lag, i) - conditional(lag + 1, i)
                                   for i in range(len(self.counts))}
                        for lag in range(1, self.max_lag + 1)}
        out["delta_runs"] = {str(lag): {str(i): int(self.given[lag + 1, i])
                                        for i in range(len(self.counts))}
                             for lag in range(1, self.max_lag + 1)}
        return out
