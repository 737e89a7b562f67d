"""A batch of outcomes as arrays, and its partial scores per label block (`block_scores`) and
over the last labels (`tail_scores`). Plain Python: numpy, no Beam."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from metrics.binning import NO_CLASS, binned_many, binned_proba_many
from metrics.bootstrap import poisson_weights
from metrics.classification import ClassificationScore
from metrics.probabilistic import ProbabilityScore, proba_matrix
from metrics.regression import RegressionScore
from metrics.blocks import BlockScore, FadingCurve, LabelBlock, new_score
from metrics.windows import block_ends
from transforms.scoring.plan import LABEL_AXIS, ScoringPlan
from transforms.vocabulary import BINNED, FINAL, INITIAL


def prediction_losses(outcomes, task: str, kind: str, squared: bool = False) -> dict:
    """Per outcome whose `kind` (initial or final) prediction was made: id, n, arrival and label
    time, and its loss — 0-1 for classifiers; absolute, or with `squared` squared, error for
    regressors — as arrays (ids as objects).

    >>> from transforms.records import Outcome
    >>> out = [Outcome(1, "a", 0.0, 5.0, 2.0, None, None, 1.5, None)]
    >>> prediction_losses(out, "regression", INITIAL, squared=True)["loss"].tolist()
    [0.25]
    """
    rows = []
    for o in outcomes:
        p = o.initial if kind == INITIAL else o.final
        if p is None:
            continue
        if task == "classification":
            loss = float(p != o.y)
        else:
            e = o.y - p  # (e·e, not e ** 2: a square beyond the floats is ∞, not an error)
            loss = float(e * e) if squared else abs(e)
        rows.append((o.id, o.n, o.t_arrival, o.t_label, loss))
    ids, n, t_arrival, t_label, loss = zip(*rows) if rows else ((),) * 5
    id_column = np.empty(len(ids), dtype=object)
    id_column[:] = ids
    return {"ids": id_column, "n": np.array(n, dtype=np.int64),
            "t_arrival": np.array(t_arrival, dtype=np.float64),
            "t_label": np.array(t_label, dtype=np.float64),
            "loss": np.array(loss, dtype=np.float64)}


def _bin_matrix(outcomes, bins: int, classification: bool) -> np.ndarray:
    """Each outcome's prediction for bins 0..B+1, one row per outcome (−1 / NaN: none)."""
    dtype = np.int64 if classification else np.float64
    unmapped = [i for i, o in enumerate(outcomes) if o.bins is None]
    if not unmapped and outcomes:  # all mapped by the replay
        return np.stack([o.bins for o in outcomes]).astype(dtype, copy=False)
    out = np.empty((len(outcomes), bins + 2), dtype=dtype)
    for i, o in enumerate(outcomes):
        if o.bins is not None:
            out[i] = o.bins
    if unmapped:  # labelled before any re-prediction (rep_times None): all carry the initial
        todo = [outcomes[i] for i in unmapped]
        out[unmapped] = binned_many(
            [o.t_arrival for o in todo], [o.t_label for o in todo], [o.initial for o in todo],
            [o.rep_times for o in todo], [o.rep_values for o in todo],
            [o.final for o in todo], bins, classification)
    return out


def _bins_proba_matrix(outcomes, bins: int) -> np.ndarray | None:
    """Each outcome's class probabilities for bins 0..B+1 (outcomes × bins × classes, NaN
    where none), or None when no outcome has any."""
    if not any(o.bins_proba is not None or o.initial_proba is not None
               or o.final_proba is not None for o in outcomes):
        return None
    unmapped = [i for i, o in enumerate(outcomes) if o.bins_proba is None]
    computed = binned_proba_many(
        *([getattr(outcomes[i], name) for i in unmapped] for name in (
            "t_arrival", "t_label", "initial_proba", "rep_times", "rep_proba", "final_proba")),
        bins) if unmapped else None
    width = max([o.bins_proba.shape[1] for o in outcomes if o.bins_proba is not None]
                + [computed.shape[2] if computed is not None else 0])
    out = np.full((len(outcomes), bins + 2, width), math.nan)

    def put(rows, vectors):  # a class seen after the vectors were made: probability 0
        made = ~np.isnan(vectors).any(axis=-1) & (vectors.shape[-1] > 0)
        out[rows] = np.where(made[..., None], 0.0, math.nan)
        out[rows, ..., :vectors.shape[-1]] = vectors

    mapped = [i for i, o in enumerate(outcomes) if o.bins_proba is not None]
    if mapped and len({outcomes[i].bins_proba.shape for i in mapped}) == 1:  # one stack
        put(mapped, np.stack([outcomes[i].bins_proba for i in mapped]))
    else:
        for i in mapped:
            put(i, outcomes[i].bins_proba)
    if unmapped:
        put(unmapped, computed)
    return out


def take_rows(columns: dict, rows: np.ndarray) -> dict:
    """The rows at `rows` of every column: numpy arrays, or Arrow arrays (a log's strings stay
    in Arrow, no Python object per value).

    >>> rows = take_rows({"n": np.array([5, 6, 7]), "id": pa.array(["a", "b", "c"])},
    ...                  np.array([2, 0]))
    >>> rows["n"].tolist(), rows["id"].to_pylist()
    ([7, 5], ['c', 'a'])
    """
    return {k: v.take(pa.array(rows, pa.int64())) if isinstance(v, pa.Array) else v[rows]
            for k, v in columns.items()}


def concat_rows(parts: list[dict]) -> dict:
    """The columns of several parts, one part after another ({} for none). A float column
    that some parts lack is NaN in their rows (class probabilities: a part of a log whose
    predictions there had none).

    Example
    -------

    >>> rows = concat_rows([{"n": np.array([1, 2])}, {"n": np.array([3])}])
    >>> rows["n"].tolist()
    [1, 2, 3]
    >>> rows = concat_rows([{"n": np.array([1])},
    ...                     {"n": np.array([2]), "proba": np.array([[0.3, 0.7]])}])
    >>> rows["proba"].tolist()
    [[nan, nan], [0.3, 0.7]]

    """
    if not parts:
        return {}
    def column(part, k, given):
        if k in part or given.dtype.kind != "f":
            return part[k]  # (a missing column of another kind: a KeyError, as it should)
        return np.full((len(next(iter(part.values()))),) + given.shape[1:], np.nan)

    out = {}
    for k in dict.fromkeys(k for p in parts for k in p):
        given = next(p[k] for p in parts if k in p)
        out[k] = pa.concat_arrays([p[k] for p in parts]) if isinstance(given, pa.Array) \
            else np.concatenate([column(p, k, given) for p in parts])
    return out


def group_rows(keys: np.ndarray):
    """(key, row indices) for each distinct key, keys ascending, rows in input order.

    >>> [(int(k), r.tolist()) for k, r in group_rows(np.array([3, 1, 3]))]
    [(1, [1]), (3, [0, 2])]
    """
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]) \
        if len(keys) else np.empty(0, dtype=np.int64)
    for start, rows in zip(starts, np.split(order, starts[1:])):
        yield sorted_keys[start], rows


def split_by(columns: dict, keys: np.ndarray):
    """(key, columns of its rows) for each distinct key, in key order.

    Example
    -------

    >>> cols = {"x": np.array([10, 20, 30])}
    >>> [(int(k), part["x"].tolist()) for k, part in split_by(cols, np.array([1, 0, 1]))]
    [(0, [20]), (1, [10, 30])]

    """
    for key, rows in group_rows(keys):
        yield key, take_rows(columns, rows)


def _columns(outcomes, task: str, plan: ScoringPlan) -> dict:
    """A batch of outcomes as arrays: label number n, label time t, y, the baselines (Persistent,
    Majority; classification), each category's predictions (one column per bin) and the
    initial and final predictions' class probabilities where they were kept."""
    classification = task == "classification"
    missing = NO_CLASS if classification else math.nan
    dtype = np.int64 if classification else np.float64

    def column(values):
        return np.array([missing if v is None else v for v in values], dtype=dtype)

    predicted = {INITIAL: column(o.initial for o in outcomes)[:, None]}
    proba = {INITIAL: proba_matrix([o.initial_proba for o in outcomes])} \
        if classification else {}
    if plan.final:
        predicted[FINAL] = column(o.final for o in outcomes)[:, None]
        if classification:
            proba[FINAL] = proba_matrix([o.final_proba for o in outcomes])
    if plan.bins:
        predicted[BINNED] = _bin_matrix(outcomes, plan.bins, classification)
        if classification and plan.binned_probabilities:
            proba[BINNED] = _bins_proba_matrix(outcomes, plan.bins)
    return {"n": np.array([o.n for o in outcomes], dtype=np.int64),
            "t": np.array([o.t_label for o in outcomes], dtype=np.float64),
            "y": column(o.y for o in outcomes),
            "baselines": (column(o.y_prev for o in outcomes),
                          _majority_matrix(outcomes, len(plan.views))) if classification else (),
            "predicted": predicted,
            "proba": {category: m for category, m in proba.items() if m is not None}}


def _majority_matrix(outcomes, views: int) -> np.ndarray:
    """The Majority baseline of each outcome for each view (labels × views): an outcome carries
    one class per view, or one class that every view shares."""
    matrix = np.array([o.y_majority for o in outcomes], dtype=np.int64)
    matrix = matrix.reshape(len(outcomes), -1) if len(outcomes) else np.empty((0, views), np.int64)
    if matrix.shape[1] == views:
        return matrix
    if matrix.shape[1] == 1:
        return np.repeat(matrix, views, axis=1)
    raise ValueError(f"outcomes carry {matrix.shape[1]} Majority baselines for {views} views")


def _bin_scores(cols: dict, rows: np.ndarray, category: str, task: str,
                plan: ScoringPlan) -> dict:
    """{bin: BlockScore} of the labels at `rows` for one category."""
    matrix, y, baselines = cols["predicted"][category], cols["y"], cols["baselines"]
    last_n = int(cols["n"][rows].max()) if len(rows) else 0
    last_t = float(cols["t"][rows].max()) if len(rows) else -math.inf
    matrix, y, baselines = matrix[rows], y[rows], [base[rows] for base in baselines]
    if task == "regression":  # every bin's sums at once
        scores = {b: BlockScore(new_score(task), last_n, last_t) for b in plan.bins_of(category)}
        RegressionScore.update_columns([acc.score for acc in scores.values()], y, matrix,
                                       ~np.isnan(matrix))
        return scores
    # A classifier's class probabilities (ranked for --auc; for the binned category a
    # matrix per bin), and its labels' bootstrap weights (by label number).
    extra, ranked = {}, {}
    proba = cols["proba"].get(category)
    if proba is not None:
        proba = proba[rows]
        ranked = {"auc": plan.auc}
    if plan.bootstrap:
        extra["weights"] = poisson_weights(cols["n"][rows], plan.bootstrap)
    # An untrained model made no prediction: not scored, as in river.
    made = matrix != NO_CLASS
    # The bins' unranked probability measures: all bins in one pass, after the counts.
    at_once = proba is not None and proba.ndim == 3 and not plan.auc
    scores = {b: BlockScore(new_score(task), last_n, last_t) for b in plan.bins_of(category)}
    if not extra and (proba is None or at_once):  # every bin's counts at once
        ClassificationScore.update_columns([acc.score for acc in scores.values()], y, matrix,
                                           *baselines, made)
    else:
        for j, acc in enumerate(scores.values()):
            if proba is not None and not at_once:
                extra["proba"] = proba[:, j] if proba.ndim == 3 else proba
            if made[:, j].all():
                acc.score.update_many(y, matrix[:, j], *baselines, **extra, **ranked)
            else:
                ok = made[:, j]
                acc.score.update_many(y[ok], matrix[ok, j], *(base[ok] for base in baselines),
                                      **{name: v[ok] for name, v in extra.items()}, **ranked)
    if at_once:
        for acc in scores.values():
            acc.score.proba = ProbabilityScore()
        ProbabilityScore.update_columns([acc.score.proba for acc in scores.values()], y, proba,
                                        made)
    return scores


def block_scores(outcomes, task: str, plan: ScoringPlan) -> dict:
    """Partial scores of a batch of outcomes: {(category, axis, block): LabelBlock}. The blocks
    depend on the label numbers and times alone, not on how long the stream is, so scoring needs
    nothing from the end of the stream and runs as the outcomes come.

    >>> from transforms.records import Outcome
    >>> out = [Outcome(1, "a", 0.0, 1.0, 1, 0, 1, 1, 1),
    ...        Outcome(2, "b", 1.0, 2.0, 0, 1, 0, None, 1)]
    >>> s = block_scores(out, "classification", ScoringPlan(curve_every=10))
    >>> initial, final = s[("initial", "n", 10)], s[("final", "n", 10)]
    >>> initial.scores[None].score.n, final.scores[None].score.accuracy
    (1, 0.5)
    """
    cols = _columns(outcomes, task, plan)
    n, t = cols["n"], cols["t"]
    axes = [(LABEL_AXIS, block_ends(n, plan.curve_every, plan.windows))]
    axes += [(label, np.floor(t / period).astype(np.int64))
             for label, _, period in plan.time_windows]
    blocks: dict = {}
    for axis, keys in axes:
        for block_key, rows in group_rows(keys):
            for category, matrix in cols["predicted"].items():
                fading = None
                if axis == LABEL_AXIS and plan.fadings:
                    proba = cols["proba"].get(category)
                    fading = (n[rows], FadingCurve.rows(task, n[rows], {
                        "y": cols["y"][rows], "preds": matrix[rows],
                        "baselines": [base[rows] for base in cols["baselines"]],
                        "proba": None if proba is None else proba[rows]}))
                blocks[(category, axis, int(block_key))] = LabelBlock(
                    _bin_scores(cols, rows, category, task, plan), fading)
    return blocks


def tail_scores(outcomes, task: str, plan: ScoringPlan) -> dict:
    """{category: {w: {bin: score}}}: for each window size w the score of the key's last w labels,
    from (at least) its last max(w) outcomes — the windows at the end of the stream, whose
    start no block boundary can know in advance.

    >>> from transforms.records import Outcome
    >>> out = [Outcome(n, n, 0.0, n, 1, 1, 1, p, p) for n, p in [(7, 0), (8, 1), (9, 1)]]
    >>> tail = tail_scores(out, "classification", ScoringPlan(windows=(2, 3)))
    >>> tail["initial"][2][None].accuracy, tail["initial"][3][None].accuracy
    (1.0, 0.6666666666666666)
    """
    cols = _columns(outcomes, task, plan)
    total = int(cols["n"].max(initial=0))
    return {category: {w: {b: acc.score for b, acc in _bin_scores(
                cols, np.flatnonzero(cols["n"] > total - w), category, task, plan).items()}
                       for w in plan.windows}
            for category in cols["predicted"]}
