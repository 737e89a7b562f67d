"""Temporal dependence of a label sequence (Žliobaitė, Bifet, Read, Pfahringer & Holmes 2015).

With strong temporal dependence the Persistent classifier (predict the previous label) beats the
Majority class, κ looks good while κ_per is negative, and a learner that ignores the past labels
can lose to a baseline. The profile says how much dependence there is before any model runs.
"""

from __future__ import annotations

import numpy as np

from metrics.exact import ratio


def stream_profile(labels, max_lag: int = 5) -> dict:
    """Profile of class indices in label-arrival order.

    - `p_majority` P(M): the prior of the most frequent class (ties: lowest index);
    - `p_same` P(T) = Σ_i P(i,i): how often a label repeats the previous one (Proposition 7:
      Persistent beats Majority when P(T) > P(M));
    - `majority_accuracy`, `persistent_accuracy`: the two baselines with hindsight (the majority
      class of the whole sequence; the previous label, first label excluded);
    - `delta[ℓ][i]` for ℓ = 1..L: Δ(ℓ) = P(y_t=i | y_{t−1..t−ℓ}=i) − P(y_t=i | y_{t−1..t−ℓ−1}=i),
      evidence of dependence of order ℓ+1 (NaN where a run of that length never occurs).

    >>> p = stream_profile([0, 0, 0, 1, 1, 0, 0, 0, 1, 1], max_lag=1)
    >>> p["p_majority"], round(p["p_same"], 4), p["persistent_accuracy"]
    (0.6, 0.6667, 0.6666666666666666)
    >>> p["delta"]["1"]  # P(0|0) − P(0|00) = 4/6 − 2/4; P(1|1) − P(1|11) = 2/3 − 0/1
    {'0': 0.16666666666666663, '1': 0.6666666666666666}
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
                    "majority_accuracy": float("nan"), "persistent_accuracy": float("nan"),
                    "delta": {}}
        out["classes"] = len(self.counts)
        out["p_majority"] = float(self.counts.max() / n)
        out["p_same"] = ratio(self.same, n - 1)
        out["majority_accuracy"] = out["p_majority"]
        out["persistent_accuracy"] = out["p_same"]

        def conditional(lag: int, i: int) -> float:
            """P(y_t = i | the previous `lag` labels are all i)."""
            return ratio(int(self.stayed[lag, i]), int(self.given[lag, i]))

        out["delta"] = {str(lag): {str(i): conditional(lag, i) - conditional(lag + 1, i)
                                   for i in range(len(self.counts))}
                        for lag in range(1, self.max_lag + 1)}
        return out
