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

import functools
import math
from collections.abc import Sequence

import numpy as np

from metrics.probabilistic import padded_proba, proba_matrix

NO_CLASS = -1  # a missing class prediction
# The most bins B a run takes: each label is scored in B + 2 bins (and a bin_boundaries
# schedule re-predicts each pending instance B times), so B is what memory and time scale with.
MOST_BINS = 10_000


def bin_of(t: float, t0: float, delta: float, bins: int) -> int:
    """The bin of a re-prediction at `t`: 1 + floor(((t − t0)/Δ)·B), capped at B.

    >>> [bin_of(t, 0, 100, 4) for t in (20, 25, 30, 80, 100)]
    [1, 2, 2, 4, 4]

    References
    ----------
    Grzenda, M., Gomes, H. M., Bifet, A. (2020). Performance measures for evolving
    predictions under delayed labelling classification. International Joint Conference on
    Neural Networks (IJCNN).
    """
    if delta <= 0:
        return bins
    return min(bins, 1 + int(math.floor((t - t0) / delta * bins)))


def _bins_of(times: np.ndarray, t0, delta, bins: int) -> np.ndarray:
    """`bin_of` over arrays (the same float operations, so the same bins); `t0` and `delta`
    are scalars or one per time. In place where it can: with K=1 there are millions."""
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.subtract(times, t0, dtype=np.float64)
        scaled /= delta
        scaled *= bins
        np.floor(scaled, out=scaled)
        np.nan_to_num(scaled, copy=False, nan=0.0)  # 0/0 (Δ = 0: set below)
        np.clip(scaled, 0, bins - 1, out=scaled)
        b = scaled.astype(np.int64)
    b += 1
    empty = np.asarray(delta) <= 0  # a latency period of length 0: the last bin
    if empty.any():
        b = np.where(empty, bins, b)
    return b


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
    return binned_many([t0], [t_label], [initial], [times], [values], [final], bins,
                       classification)[0]


def binned_many(t0, t_label, initial, times, values, final, bins: int,
                classification: bool = True) -> np.ndarray:
    """`binned_predictions` for many instances at once: one row of bins 0..B+1 per instance.

    `t0`, `t_label`, `initial`, `final` have one entry per instance (None: no prediction);
    `times`/`values` one array (or None) of re-predictions each. The same float operations
    as for one instance, so the same bins, with a fixed number of numpy calls per batch.

    >>> binned_many([0, 0], [100, 10], [0, 1], [[20, 30, 40, 45, 80], None],
    ...             [[1, 0, 0, 1, 1], None], [0, 0], bins=4).tolist()
    [[0, 1, 0, 1, 1, 0], [1, 1, 1, 1, 1, 0]]
    """
    missing = NO_CLASS if classification else math.nan
    dtype = np.int64 if classification else np.float64
    initial = np.array([missing if v is None else v for v in initial], dtype=dtype)
    final = np.array([missing if v is None else v for v in final], dtype=dtype)
    sizes = np.array([0 if t is None else len(t) for t in times], dtype=np.int64)
    present = [i for i, ts in enumerate(times) if ts is not None]
    t = np.concatenate([np.asarray(times[i], dtype=np.float64) for i in present]
                       or [np.empty(0)])
    v = np.concatenate([np.asarray(values[i], dtype=dtype) for i in present]
                       or [np.empty(0, dtype)])
    return binned_flat(t0, t_label, initial, final, sizes, t, v, bins, classification)


def binned_flat(t0, t_label, initial: np.ndarray, final: np.ndarray, sizes: np.ndarray,
                t: np.ndarray, v: np.ndarray, bins: int,
                classification: bool = True) -> np.ndarray:
    """`binned_many` on flat arrays: `initial`/`final` per instance (−1 / NaN: none), the
    re-predictions of all instances concatenated (`t`, `v`), instance by instance in time
    order, `sizes` of them per instance. What a backfill reading a prediction log calls.
    Floats may be vectors (`v` re-predictions × k, `initial`/`final` instances × k; a NaN
    row is none): each of the k columns is binned as floats, the result is instances ×
    bins × k.

    >>> binned_flat([0, 0], [100, 10], np.array([0, 1]), np.array([0, 0]), np.array([5, 0]),
    ...             np.array([20., 30, 40, 45, 80]), np.array([1, 0, 0, 1, 1]), bins=4).tolist()
    [[0, 1, 0, 1, 1, 0], [1, 1, 1, 1, 1, 0]]
    """
    dtype = np.int64 if classification else np.float64
    n = len(t0)
    tail = np.shape(v)[1:]  # (k,) for vectors

    def per_cell(mask):  # a mask over cells, against values that may be vectors
        return mask[:, None] if tail else mask

    out = np.empty((n, bins + 2, *tail), dtype=dtype)
    out[:, 0] = initial
    out[:, -1] = final
    if not sizes.any():
        out[:, 1:-1] = initial[:, None]
        return out
    seg = np.repeat(np.arange(n), sizes)  # the instance of each re-prediction
    t0 = np.asarray(t0, dtype=np.float64)
    delta = np.asarray(t_label, dtype=np.float64) - t0
    t0_i, delta_i = np.repeat(t0, sizes), np.repeat(delta, sizes)
    b = _bins_of(t, t0_i, delta_i, bins)
    key = seg * bins + (b - 1)  # nondecreasing: instances in order, times in order
    counts = np.bincount(key, minlength=n * bins)
    # The last re-prediction before each cell (instance, bin): keys are sorted, so the items
    # before cell c are the counts of the cells before it.
    last_before = np.cumsum(counts) - counts - 1
    start = np.repeat(np.cumsum(sizes) - sizes, bins)  # each cell's instance's first item
    # The prediction standing at each cell's start: its last re-prediction before, else the
    # initial one. (Indices out of range are clipped: those cells take the other branch.)
    standing = np.where(per_cell(last_before >= start), v.take(last_before, 0, mode="clip"),
                        np.repeat(initial, bins, axis=0))
    # A cell without re-predictions keeps the standing one; with some, its first (a vote
    # below where they differ).
    out[:, 1:-1] = np.where(per_cell(counts == 0), standing,
                            v.take(last_before + 1, 0, mode="clip")).reshape(n, bins, *tail)
    vote = counts >= 2  # cells that need a vote ...
    if classification:
        # ... unless all its predictions are one class (a vote of equals is that class, which
        # the cell already has): only cells where the prediction changes are weighed.
        before = np.empty_like(v)
        before[1:] = v[:-1]
        some = sizes > 0
        before[(np.cumsum(sizes) - sizes)[some]] = initial[some]
        changes = np.zeros(n * bins, dtype=bool)
        changes[key[v != before]] = True
        vote &= changes
    cells = np.flatnonzero(vote)
    if len(cells):
        out[cells // bins, 1 + cells % bins] = _votes(
            t, v, key, vote[key], t0_i, delta_i, b, bins, cells, standing[cells], classification)
    return out


def binned_proba_many(t0, t_label, initial, times, vectors, final, bins: int) -> np.ndarray:
    """`binned_proba` for many instances given as lists, as `binned_many` takes them: per
    instance the initial and final vectors (None: none; shorter vectors, from before a class
    was seen, are padded with 0: `padded_proba`), and the re-predictions' times and vectors (a
    matrix, one row each; None: none).

    >>> binned_proba_many([0, 0], [10, 10], [(1.0, 0.0), None], [[2.0, 5.0], None],
    ...                   [[[0.6, 0.4], [0.2, 0.8]], None], [(0.5, 0.5), (1.0,)],
    ...                   bins=1)[:, 1].round(6).tolist()
    [[0.48, 0.52], [nan, nan]]
    """
    width = max([len(v) for v in (*initial, *final) if v is not None]
                + [np.shape(v)[1] for v in vectors if v is not None and len(v)] + [0])

    present = [i for i, ts in enumerate(times) if ts is not None]
    sizes = np.array([0 if ts is None else len(ts) for ts in times], dtype=np.int64)
    t = np.concatenate([np.asarray(times[i], dtype=np.float64) for i in present]
                       or [np.empty(0)])
    given = [vectors[i] for i in present]
    if all(g is not None and np.ndim(g) == 2 and np.shape(g)[1] == width for g in given):
        v = np.concatenate(given) if given else np.empty((0, width))
    else:
        v = np.full((len(t), width), math.nan)
        at = 0
        for i, g in zip(present, given):
            if g is not None:
                rows = np.asarray(g, dtype=np.float64).reshape(len(times[i]), -1)
                v[at:at + len(rows)] = padded_proba(rows, width)
            at += len(times[i])
    return binned_proba(t0, t_label, proba_matrix(initial, width), proba_matrix(final, width),
                        sizes, t, v, bins)


def binned_proba(t0, t_label, initial: np.ndarray, final: np.ndarray, sizes: np.ndarray,
                 t: np.ndarray, v: np.ndarray, bins: int) -> np.ndarray:
    """Each instance's class probabilities for bins 0..B+1 (instances × bins × classes): the
    binning rule of `binned_predictions` for floats, class by class — bin 0 the initial
    vector, bin B+1 the final one, a bin of 1..B without re-predictions keeps the standing
    vector, with one takes it, with several takes the time-weighted mean of [standing,
    r1..rn] with the weights of the class vote. `initial`/`final` are instances × classes,
    `v` the re-predictions' vectors (rows as `t`, instance by instance in time order, `sizes`
    of them per instance); a NaN row is no probabilities and takes no part in a mean.

    One bin (B = 1) over [0, 10], the initial vector standing for 2, then two re-predictions
    for 3 and 5: class 0 gets (1·2 + 0.6·3 + 0.2·5) / 10 = 0.48.

    >>> binned_proba([0], [10], np.array([[1.0, 0.0]]), np.array([[0.5, 0.5]]), np.array([2]),
    ...              np.array([2.0, 5.0]), np.array([[0.6, 0.4], [0.2, 0.8]]),
    ...              bins=1)[0, 1].round(6).tolist()
    [0.48, 0.52]
    """
    initial, final = np.asarray(initial, np.float64), np.asarray(final, np.float64)
    v = np.asarray(v, np.float64).reshape(len(t), initial.shape[1])
    return binned_flat(t0, t_label, initial, final, np.asarray(sizes, dtype=np.int64),
                       np.asarray(t, np.float64), v, bins, classification=False)


def _votes(t, v, key, in_multi, t0, delta, b, bins, cells, standing, classification):
    """The vote (or mean) of each cell in `cells` over [standing, its re-predictions];
    `in_multi` marks the re-predictions in those cells; `t0`, `delta`, `b` are per
    re-prediction."""
    t_in, v_in, key_in = t[in_multi], v[in_multi], key[in_multi]
    t0_in, delta_in, b_in = t0[in_multi], delta[in_multi], b[in_multi]
    bin_end = t0_in + delta_in * b_in / bins
    nxt = np.append(t_in[1:], np.inf)
    same_bin_next = np.append(key_in[1:] == key_in[:-1], False)
    w_in = np.where(same_bin_next, nxt, bin_end) - t_in
    first = np.searchsorted(key_in, cells, "left")
    w_lead = t_in[first] - (t0_in[first] + delta_in[first] * (b_in[first] - 1) / bins)
    # Items in vote order (the order the weights are summed in): each cell's standing
    # prediction first, then its re-predictions; both already sorted by cell.
    m = len(cells)
    slot_in = np.searchsorted(cells, key_in)
    n_items = m + len(key_in)
    at_item = np.arange(len(key_in)) + slot_in + 1
    at_lead = first + np.arange(m)
    slot = np.empty(n_items, dtype=np.int64)
    w = np.empty(n_items)
    v = np.empty((n_items, *v_in.shape[1:]), dtype=v_in.dtype)
    slot[at_lead], w[at_lead], v[at_lead] = np.arange(m), w_lead, standing
    slot[at_item], w[at_item], v[at_item] = slot_in, w_in, v_in
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
    vectors = v.ndim == 2  # each column a float of its own; a NaN row is none
    ok = ~np.isnan(v).any(axis=1) if vectors else ~np.isnan(v)
    slot, w, v = slot[ok], w[ok], v[ok]
    total = np.bincount(slot, weights=w, minlength=m)
    weighted = np.stack([np.bincount(slot, weights=w * column, minlength=m) for column in v.T],
                        axis=1) if vectors else np.bincount(slot, weights=w * v, minlength=m)
    has = np.bincount(slot, minlength=m) > 0
    last = v[np.maximum(np.searchsorted(slot, np.arange(m), "right") - 1, 0)] if len(v) \
        else np.full((m, *v.shape[1:]), math.nan)
    if vectors:
        total, has = total[:, None], has[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = weighted / total
    return np.where(~has, math.nan, np.where(total == 0, last, mean))


def prioritised(values: Sequence[float], alpha: float) -> float:
    """Ψα = Σ_b Λ(b)·(1/α)^(b/B) / Σ_b (1/α)^(b/B) over bins b = 0..B (final bin excluded).

    `values` are Λ(T, 0..B). α = 1 weighs all bins equally; α > 1 favours early bins.

    Parameters
    ----------
    values
        Λ(T, b) for b = 0..B.
    alpha
        α ≥ 1: how much early bins count more.

    >>> prioritised([1.0, 0.0, 0.0], alpha=1)
    0.333...
    >>> round(prioritised([1.0, 0.0, 0.0], alpha=4), 4)  # weights 1, 1/2, 1/4
    0.5714
    >>> prioritised([1.0, float("nan"), 0.0], alpha=4)  # a bin without the measure
    nan

    References
    ----------
    Grzenda, M., Gomes, H. M., Bifet, A. (2020). Performance measures for evolving
    predictions under delayed labelling classification. International Joint Conference on
    Neural Networks (IJCNN).
    """
    bins = len(values) - 1
    if bins <= 0:
        return values[0] if values else math.nan
    weights, total = _prioritised_weights(bins, alpha)
    # (a NaN value, a bin without a measure, makes the sum NaN: the weights are finite)
    return sum([v * w for v, w in zip(values, weights)]) / total


@functools.lru_cache(maxsize=64)
def _prioritised_weights(bins: int, alpha: float) -> tuple[tuple, float]:
    """Ψα's weights (1/α)^(b/B), b = 0..B, and their sum: a curve asks for them at each point
    of each measure."""
    weights = tuple((1 / alpha) ** (b / bins) for b in range(bins + 1))
    return weights, sum(weights)
