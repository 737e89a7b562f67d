"""Temporal dependence of a label sequence (Žliobaitė, Bifet, Read, Pfahringer, Holmes; paper 003).

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
    y = np.asarray(labels, dtype=np.int64)
    n = len(y)
    out: dict = {"labels": n}
    if n == 0:
        return {**out, "p_majority": float("nan"), "p_same": float("nan"),
                "majority_accuracy": float("nan"), "persistent_accuracy": float("nan"),
                "delta": {}}
    counts = np.bincount(y)
    same = y[1:] == y[:-1]
    out["classes"] = len(counts)
    out["p_majority"] = float(counts.max() / n)
    out["p_same"] = ratio(int(same.sum()), n - 1)
    out["majority_accuracy"] = out["p_majority"]
    out["persistent_accuracy"] = out["p_same"]
    # run[t]: how many labels equal to y[t-1] end at t-1 (the length of the run before t).
    run = np.zeros(n, dtype=np.int64)
    for t in range(1, n):
        run[t] = run[t - 1] + 1 if t > 1 and y[t - 1] == y[t - 2] else 1
    prev, nxt, run = y[:-1], y[1:], run[1:]

    def conditional(lag: int, i: int) -> float:
        """P(y_t = i | the previous `lag` labels are all i)."""
        given = (run >= lag) & (prev == i)
        return ratio(int((given & (nxt == i)).sum()), int(given.sum()))

    out["delta"] = {str(lag): {str(i): conditional(lag, i) - conditional(lag + 1, i)
                               for i in range(len(counts))}
                    for lag in range(1, max_lag + 1)}
    return out
