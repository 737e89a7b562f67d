"""Binned and prioritised measures of continuous re-evaluation (Grzenda, Gomes, Bifet).

Each labelled instance contributes one prediction to each of the bins b = 0..B+1 of its latency
period Δ = t_label − t_arrival: bin 0 is the initial prediction, bin B+1 the final one, and bins
1..B split the latency period into equal parts that the re-predictions fall into.

Predictions are arrays here: class indices with −1 for "no prediction" (an untrained model), or
floats with NaN for it. With one re-prediction per label (K=1) an instance collects as many
re-predictions as labels arrive while it waits, so the mapping is vectorised; it gives the same
numbers, bit for bit, as the item-by-item rule in `binned_predictions`' docstring (a test
compares the two on random inputs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

NO_CLASS = -1  # a missing class prediction


def bin_of(t: float, t0: float, delta: float, bins: int) -> int:
    """The bin of a re-prediction at `t`: 1 + floor(((t − t0)/Δ)·B), capped at B.

    >>> [bin_of(t, 0, 100, 4) for t in (20, 25, 30, 80, 100)]
    [1, 2, 2, 4, 4]
    """
    if delta <= 0:
        return bins
    return min(bins, 1 + int(math.floor((t - t0) / delta * bins)))


def _bins_of(times: np.ndarray, t0: float, delta: float, bins: int) -> np.ndarray:
    """`bin_of` over an array (the same float operations, so the same bins)."""
    if delta <= 0:
        return np.full(len(times), bins, dtype=np.int64)
    b = 1 + np.floor((times - t0) / delta * bins).astype(np.int64)
    return np.clip(b, 1, bins)


def binned_predictions(t0: float, t_label: float, initial, times, values, final, bins: int,
                       classification: bool = True) -> np.ndarray:
    """The prediction each bin 0..B+1 gets for one labelled instance.

    `times`/`values` are the re-predictions in time order (class indices, or floats). The rule:
    bin 0 takes the initial prediction and bin B+1 the final one; a bin of 1..B without
    re-predictions carries forward the last prediction made; a bin with one takes it; a bin with
    several takes the time-weighted vote (ties to the lowest class index) or time-weighted mean
    of [the prediction standing at the bin's start, r1..rn], each weighted by the time until the
    next item or the bin's end. Missing predictions take no part in a vote.

    The worked example of the design (B=4, No-Change, classes a=0, b=1):

    >>> binned_predictions(0, 100, 0, [20, 30, 40, 45, 80], [1, 0, 0, 1, 1], 0, bins=4).tolist()
    [0, 1, 0, 1, 1, 0]
    >>> binned_predictions(0, 10, 1.0, [2, 5], [3.0, 5.0], 6.0, bins=1,
    ...                    classification=False).tolist()  # (1·2 + 3·3 + 5·5) / 10
    [1.0, 3.6, 6.0]
    """
    missing = NO_CLASS if classification else math.nan
    dtype = np.int64 if classification else np.float64
    initial = missing if initial is None else initial
    out = np.empty(bins + 2, dtype=dtype)
    out[0], out[-1] = initial, missing if final is None else final
    times = np.asarray(times, dtype=np.float64)
    values = np.asarray(values, dtype=dtype)
    if len(times) == 0:
        out[1:-1] = initial
        return out
    delta = t_label - t0
    b = _bins_of(times, t0, delta, bins)
    labels = np.arange(1, bins + 1)
    counts = np.bincount(b, minlength=bins + 1)[1:]
    last_before = np.searchsorted(b, labels, "left") - 1  # last re-prediction before each bin
    standing = np.where(last_before >= 0, values[np.maximum(last_before, 0)], initial)
    first_in = np.minimum(last_before + 1, len(values) - 1)
    out[1:-1] = np.where(counts == 0, standing, values[first_in])
    multi = np.flatnonzero(counts >= 2)  # bins (0-based among 1..B) that need a vote
    if len(multi):
        out[1 + multi] = _votes(t0, delta, bins, times, values, b, multi + 1, standing[multi],
                                classification)
    return out


def _votes(t0, delta, bins, times, values, b, multi_bins, standing, classification):
    """The vote (or mean) of each bin in `multi_bins` over [standing, its re-predictions]."""
    in_multi = np.isin(b, multi_bins)
    t_in, v_in, b_in = times[in_multi], values[in_multi], b[in_multi]
    bin_end = t0 + delta * b_in / bins
    nxt = np.append(t_in[1:], np.inf)
    same_bin_next = np.append(b_in[1:] == b_in[:-1], False)
    w_in = np.where(same_bin_next, nxt, bin_end) - t_in
    first_t = t_in[np.searchsorted(b_in, multi_bins, "left")]
    w_lead = first_t - (t0 + delta * (multi_bins - 1) / bins)
    # Items in vote order: each bin's standing prediction first, then its re-predictions.
    slot = np.searchsorted(multi_bins, np.concatenate([multi_bins, b_in]))
    order = np.lexsort((np.r_[np.zeros(len(multi_bins)), np.ones(len(b_in))], slot))
    slot = slot[order]
    w = np.concatenate([w_lead, w_in])[order]
    v = np.concatenate([standing, v_in])[order]
    m = len(multi_bins)
    if classification:
        ok = v != NO_CLASS
        slot, w, v = slot[ok], w[ok], v[ok]
        if not len(v):
            return np.full(m, NO_CLASS)
        n_classes = int(v.max()) + 1
        cell = slot * n_classes + v
        weight = np.bincount(cell, weights=w, minlength=m * n_classes).reshape(m, n_classes)
        present = np.bincount(cell, minlength=m * n_classes).reshape(m, n_classes) > 0
        weight[~present] = -np.inf
        winner = np.argmax(weight, axis=1)  # the first maximum: the lowest class index
        return np.where(present.any(axis=1), winner, NO_CLASS)
    ok = ~np.isnan(v)
    slot, w, v = slot[ok], w[ok], v[ok]
    total = np.bincount(slot, weights=w, minlength=m)
    weighted = np.bincount(slot, weights=w * v, minlength=m)
    has = np.bincount(slot, minlength=m) > 0
    last = v[np.maximum(np.searchsorted(slot, np.arange(m), "right") - 1, 0)] if len(v) \
        else np.full(m, math.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = weighted / total
    return np.where(~has, math.nan, np.where(total == 0, last, mean))


def prioritised(values: Sequence[float], alpha: float) -> float:
    """Ψα = Σ_b Λ(b)·(1/α)^(b/B) / Σ_b (1/α)^(b/B) over bins b = 0..B (final bin excluded).

    `values` are Λ(T, 0..B). α = 1 weighs all bins equally; α > 1 favours early bins.

    >>> prioritised([1.0, 0.0, 0.0], alpha=1)
    0.333...
    >>> round(prioritised([1.0, 0.0, 0.0], alpha=4), 4)  # weights 1, 1/2, 1/4
    0.5714
    """
    bins = len(values) - 1
    if bins <= 0:
        return values[0] if values else math.nan
    weights = [(1 / alpha) ** (b / bins) for b in range(bins + 1)]
    if any(math.isnan(v) for v in values):
        return math.nan
    return sum(v * w for v, w in zip(values, weights)) / sum(weights)
