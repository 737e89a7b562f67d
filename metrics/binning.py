"""Binned and prioritised measures of continuous re-evaluation (Grzenda, Gomes, Bifet).

Each labelled instance contributes one prediction to each of the bins b = 0..B+1 of its latency
period Δ = t_label − t_arrival: bin 0 is the initial prediction, bin B+1 the final one, and bins
1..B split the latency period into equal parts that the re-predictions fall into.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def bin_of(t: float, t0: float, delta: float, bins: int) -> int:
    """The bin of a re-prediction at `t`: 1 + floor(((t − t0)/Δ)·B), capped at B.

    >>> [bin_of(t, 0, 100, 4) for t in (20, 25, 30, 80, 100)]
    [1, 2, 2, 4, 4]
    """
    if delta <= 0:
        return bins
    return min(bins, 1 + int(math.floor((t - t0) / delta * bins)))


def _vote(items: list[tuple[float, object]], classification: bool):
    """Time-weighted vote (ties -> lowest class index) or mean of (weight, prediction).
    Missing predictions (None: the model could not predict yet) take no part."""
    items = [(w, y) for w, y in items if y is not None]
    if not items:
        return None
    if classification:
        weights: dict = {}
        for w, y in items:
            weights[y] = weights.get(y, 0.0) + w
        best = max(weights.values())
        return min(y for y, w in weights.items() if w == best)
    total = sum(w for w, _ in items)
    if total == 0:
        return items[-1][1]
    return sum(w * y for w, y in items) / total


def binned_predictions(t0: float, t_label: float, initial, repredictions: Sequence,
                       final, bins: int, classification: bool = True) -> list:
    """The prediction each bin 0..B+1 gets for one labelled instance.

    `repredictions` are (t, prediction) pairs in time order; class predictions are class
    indices. A bin without re-predictions carries forward the last prediction made; a bin with
    one takes it; a bin with several takes the time-weighted vote (or mean) of the prediction
    standing at the bin's start and its re-predictions, each weighted by the time until the next
    item or the bin's end.

    The worked example of the design (B=4, No-Change, classes a=0, b=1):

    >>> r = [(20, 1), (30, 0), (40, 0), (45, 1), (80, 1)]
    >>> binned_predictions(0, 100, 0, r, 0, bins=4)
    [0, 1, 0, 1, 1, 0]
    """
    delta = t_label - t0
    out = [initial]
    current = initial  # the last prediction made so far
    i, n = 0, len(repredictions)
    for b in range(1, bins + 1):
        start = t0 + delta * (b - 1) / bins
        end = t0 + delta * b / bins
        in_bin = []
        while i < n and bin_of(repredictions[i][0], t0, delta, bins) == b:
            in_bin.append(repredictions[i])
            i += 1
        if not in_bin:
            out.append(current)
        elif len(in_bin) == 1:
            current = in_bin[0][1]
            out.append(current)
        else:
            times = [start] + [t for t, _ in in_bin] + [end]
            preds = [current] + [y for _, y in in_bin]
            items = [(times[k + 1] - times[k], preds[k]) for k in range(len(preds))]
            out.append(_vote(items, classification))
            current = in_bin[-1][1]
    out.append(final)
    return out


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
