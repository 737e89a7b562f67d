"""A straightforward continuous re-evaluation, written as the paper states Algorithm 1.

At every label, scan the whole buffer of pending instances and `predict_one` each one that is
due; when an instance's label arrives, map its predictions to bins item by item and score.
Nothing clever: it is the oracle the tests compare the engine with, and the baseline the
re-evaluation benchmark measures against.
"""

from __future__ import annotations

import math

from metrics.binning import bin_of
from transforms.records import INSTANCE, LABEL, PRETRAIN, UPDATE


def reference_bins(t0, t_label, initial, pairs, final, bins, classification=True):
    """The bin rule of DESIGN, item by item: carry forward, a single re-prediction, or the
    time-weighted vote (ties to the lowest class index) / mean of [standing, r1..rn]."""
    def vote(items):
        items = [(w, y) for w, y in items if y is not None]
        if not items:
            return None
        if classification:
            weights = {}
            for w, y in items:
                weights[y] = weights.get(y, 0.0) + w
            best = max(weights.values())
            return min(y for y, w in weights.items() if w == best)
        total = sum(w for w, _ in items)
        if total == 0:
            return items[-1][1]
        return sum(w * y for w, y in items) / total

    delta = t_label - t0
    out, current, i, n = [initial], initial, 0, len(pairs)
    for b in range(1, bins + 1):
        start, end = t0 + delta * (b - 1) / bins, t0 + delta * b / bins
        in_bin = []
        while i < n and bin_of(pairs[i][0], t0, delta, bins) == b:
            in_bin.append(pairs[i])
            i += 1
        if not in_bin:
            out.append(current)
        elif len(in_bin) == 1:
            current = in_bin[0][1]
            out.append(current)
        else:
            times = [start] + [t for t, _ in in_bin] + [end]
            preds = [current] + [y for _, y in in_bin]
            out.append(vote([(times[k + 1] - times[k], preds[k]) for k in range(len(preds))]))
            current = in_bin[-1][1]
    return out + [final]


def naive_replay(events, model, k: int | None = 1, timed=None):
    """Replay `events` (tuples `(t, rank, seq, kind, id, x, y)`) through `model`, re-predicting
    each pending instance at the (K+1)th, (2K+1)th, ... label after its arrival, or, with
    `timed(t0, t_label, j)` giving the time of its j-th re-prediction (None: no more), at
    those times, before the events of the same time.

    Returns one (id, t_arrival, t_label, y, initial, [(t, re-prediction), ...], final) per
    labelled instance, predictions as the model returned them.
    """
    pending: dict = {}
    results = []
    label_time = {e[4]: e[0] for e in events if e[3] == LABEL}
    for t, _, _, kind, key, x, y in sorted(events):
        if timed is not None:  # every pending instance's schedule, scanned before each event
            due = [(state["next"], state["order"], state) for state in pending.values()
                   if state["next"] is not None and state["next"] <= t]
            while due:
                due.sort(key=lambda d: d[:2])
                t_due, _, state = due.pop(0)
                state["reps"].append((t_due, model.predict_one(state["x"])))
                state["j"] += 1
                state["next"] = timed(state["t0"], state["t_label"], state["j"])
                if state["next"] is not None and state["next"] <= t:
                    due.append((state["next"], state["order"], state))
        if kind == INSTANCE:
            pending[key] = {"t0": t, "x": x, "initial": model.predict_one(x), "reps": [],
                            "seen": 0, "order": len(results) + len(pending), "j": 1,
                            "t_label": label_time.get(key)}
            pending[key]["next"] = timed(t, label_time.get(key), 1) if timed else None
        elif kind == UPDATE:
            state = pending[key]
            state["x"] = x
            state["reps"].append((t, model.predict_one(x)))
        elif kind == PRETRAIN:  # one of the first rows: learned now, never predicted
            model.learn_one(x, y)
        elif kind == LABEL:
            state = pending.pop(key, None)
            if state is None and x is None:
                continue  # an orphan without features: nothing to learn
            features = x if x is not None else state["x"]
            final = model.predict_one(features) if state is not None else None
            for other in pending.values():  # the scan of the whole buffer, every label
                other["seen"] += 1
                if k and other["seen"] > 1 and (other["seen"] - 1) % k == 0:
                    other["reps"].append((t, model.predict_one(other["x"])))
            model.learn_one(features, y)
            if state is not None:
                results.append((key, state["t0"], t, y, state["initial"], state["reps"], final))
    return results


def model_work(events, model, final: bool = True) -> None:
    """The river calls every replay of `events` makes, and nothing else: `predict_one` when an
    instance arrives or is updated and (`final`) just before its label, `learn_one` at each
    label."""
    features: dict = {}
    for _, _, _, kind, key, x, y in sorted(events):
        if kind in (INSTANCE, UPDATE):
            features[key] = x
            model.predict_one(x)
        elif kind == LABEL:
            stored = features.pop(key, None)
            x = x if x is not None else stored
            if x is None:
                continue  # an orphan without features: nothing to learn
            if stored is not None and final:
                model.predict_one(x)
            model.learn_one(x, y)


def naive_bin_accuracy(results, bins: int) -> list[float]:
    """Λ(T, b) accuracy for b = 0..B+1 over all labelled instances (None: not scored).

    Votes are taken over class indices in order of first appearance (labels in arrival order),
    as DESIGN numbers classes, so a tied vote goes to the class seen first, not to the
    smaller label value."""
    index: dict = {}
    for result in results:
        index.setdefault(result[3], len(index))

    def code(y):
        return None if y is None else index.setdefault(y, len(index))

    correct = [0] * (bins + 2)
    scored = [0] * (bins + 2)
    for _, t0, t_label, y, initial, reps, final in results:
        y, initial, final = code(y), code(initial), code(final)
        reps = [(t, code(r)) for t, r in reps]
        for b, pred in enumerate(reference_bins(t0, t_label, initial, reps, final, bins)):
            if pred is not None:
                scored[b] += 1
                correct[b] += pred == y
    return [c / s if s else math.nan for c, s in zip(correct, scored)]
