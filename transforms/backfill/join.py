"""The vectorised join of logged predictions with labelled instances, one id bucket at a time.

A logged prediction belongs to the labelled instance with its id whose latency period
[t_arrival, t_label] holds its time (ids may be reused once labelled). Kinds come from the
log's `kind` column (initial | re-prediction | final); without one they are inferred from
times: an instance's earliest prediction is its initial one, one at its label time (the end of
its latency period) its final one, the rest re-predictions. Plain Python (numpy, pandas, Arrow)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from metrics.binning import NO_CLASS, binned_flat, binned_proba
from metrics.probabilistic import PROBABILITY_SUM_SLACK
from transforms.errors import InputError
from transforms.records import Outcome
from transforms.streams.table_files import numbers_of
from transforms.vocabulary import PREDICTION_KINDS

# (instance, bin) cells binned at once by the join.
BIN_CELLS = 1 << 16


def id_bucket(ids: np.ndarray, buckets: int) -> np.ndarray:
    """A stable bucket per id string: the same on every worker and run (ids of the label pass
    are turned into strings first, as the log's are).

    >>> ids = np.array(["a", "b", "a"], dtype=object)
    >>> b = id_bucket(ids, 8)
    >>> b[0] == b[2] and b.tolist() == id_bucket(ids.copy(), 8).tolist()
    True
    """
    if isinstance(ids, pa.Array):
        ids = ids.to_numpy(zero_copy_only=False)
    return (pd.util.hash_array(np.asarray(ids, dtype=object)) % np.uint64(buckets)) \
        .astype(np.int64)


def label_columns(outcomes) -> dict:
    """The label pass's outcomes as columns: ids kept as objects, and as strings in `key` (how
    the log names them).

    Example
    -------

    >>> from transforms.records import Outcome
    >>> cols = label_columns([Outcome(1, 7, 0.0, 5.0, 1, 0, 1, None, None)])
    >>> cols["id"].tolist(), cols["key"].tolist(), cols["t_label"].tolist()
    ([7], ['7'], [5.0])

    """
    ids = np.empty(len(outcomes), dtype=object)
    ids[:] = [o.id for o in outcomes]
    cols = {"id": ids, "key": np.array([str(i) for i in ids], dtype=object)}
    for name in ("n", "t_arrival", "t_label", "y", "y_prev", "y_majority"):
        cols[name] = np.array([getattr(o, name) for o in outcomes], dtype=object)
    if outcomes and outcomes[0].segments is not None:  # one tuple of places per label
        cols["segments"] = np.empty(len(outcomes), dtype=object)
        for i, o in enumerate(outcomes):
            cols["segments"][i] = o.segments
    return cols


def lookup(values, table) -> np.ndarray:
    """Each value's position in `table` (strings), −1 where absent or missing — a hash lookup
    in Arrow, not a Python call per value.

    >>> lookup(np.array(["b", None, "z", "a"], dtype=object), ["a", "b"]).tolist()
    [1, -1, -1, 0]
    """
    if not isinstance(values, pa.Array):
        values = pa.array(values, type=pa.string(), from_pandas=True)
    found = pc.index_in(values, value_set=pa.array(list(table), type=pa.string()))
    return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def spelled_kinds(column: pa.Array) -> pa.Array:
    """A log's kind column as our words spell them: in any case and spacing, and a
    re-prediction with any separator or none (`re_prediction`, as snake_case logs write it).

    >>> spelled_kinds(pa.array(["Initial", " FINAL", "RE_PREDICTION", "reprediction", None])
    ...               ).to_pylist()
    ['initial', 'final', 're-prediction', 're-prediction', None]
    """
    kinds = pc.utf8_lower(pc.utf8_trim_whitespace(column.cast(pa.string())))
    return pc.replace_substring_regex(kinds, pattern=r"^re[\s_-]*prediction$",
                                      replacement="re-prediction")


def kind_codes(kinds) -> np.ndarray:
    """Prediction kinds as codes into `PREDICTION_KINDS` (codes pass through).

    >>> kind_codes(np.array(["final", "initial"], dtype=object)).tolist()
    [2, 0]
    """
    kinds = np.asarray(kinds)
    codes = kinds.astype(np.int64) if kinds.dtype.kind in "iu" else \
        lookup(kinds, PREDICTION_KINDS)
    bad = (codes < 0) | (codes >= len(PREDICTION_KINDS))
    if bad.any():
        raise InputError(f"prediction log: kind {kinds[bad][0]!r} is not one of "
                         f"{list(PREDICTION_KINDS)}")
    return codes


def _owners(label_keys: np.ndarray, t0: np.ndarray, pred_keys: np.ndarray,
            t: np.ndarray) -> np.ndarray:
    """Each prediction's labelled instance (its row), or −1: the instance with its id that
    arrived last at or before the prediction's time (ids may be reused once labelled)."""
    if len(set(label_keys)) == len(label_keys):
        return lookup(pred_keys, label_keys)
    if isinstance(pred_keys, pa.Array):
        pred_keys = pred_keys.to_numpy(zero_copy_only=False)
    left = pd.DataFrame({"key": pd.Series(pred_keys, dtype=object), "t": t,
                         "pos": np.arange(len(t))}).sort_values(["t", "pos"], kind="stable")
    right = pd.DataFrame({"key": pd.Series(label_keys, dtype=object), "t_arrival": t0,
                          "row": np.arange(len(t0))}).sort_values("t_arrival", kind="stable")
    joined = pd.merge_asof(left, right, left_on="t", right_on="t_arrival", by="key",
                           direction="backward").sort_values("pos")
    return joined["row"].fillna(-1).to_numpy(dtype=np.int64)


def join_predictions(labels: dict, preds: dict, classes: list | None, bins: int,
                     final: bool = True) -> tuple[list, dict]:
    """Outcomes of one model's logged predictions for labelled instances (`join_columns`, as
    `Outcome`s).

    `labels`: columns of labelled instances (`label_columns`); `preds`: columns `id` (str),
    `kind` (str, codes of `kind_codes`, or absent: inferred), `t`, `y_pred` (str, or float for
    regression; None: no prediction), strings as numpy object or Arrow arrays; `classes`:
    the class values in index order as strings (None: regression).
    Returns the outcomes, one per labelled instance in `labels` order, and counts.

    >>> from transforms.records import Outcome
    >>> labels = label_columns([Outcome(1, 7, 0.0, 100.0, 1, 0, 1, None, None)])
    >>> preds = {"id": np.array(["7"] * 7, dtype=object),
    ...          "kind": np.array(["initial"] + ["re-prediction"] * 5 + ["final"], dtype=object),
    ...          "t": np.array([0.0, 20, 30, 40, 45, 80, 100]),
    ...          "y_pred": np.array(list("abaabba"), dtype=object)}
    >>> outcomes, counts = join_predictions(labels, preds, ["a", "b"], bins=4)
    >>> outcomes[0].bins.tolist(), outcomes[0].initial, counts["unmatched_predictions"]
    ([0, 1, 0, 1, 1, 0], 0, 0)
    """
    columns, counts = join_columns(labels, preds, classes, bins, final)
    return outcomes_of(columns, classes is not None), counts


def join_columns(labels: dict, preds: dict, classes: list | None, bins: int,
                 final: bool = True, binned_probabilities: bool = False,
                 evaluated: tuple = (-math.inf, math.inf),
                 aliases: dict | None = None, pending: dict | None = None) -> tuple[dict, dict]:
    """`join_predictions`'s outcomes as columns (`labels`' columns `n`, `id`, `y`, `y_prev`,
    `y_majority`; `t_arrival`, `t_label`, `initial`, and `final` and `bins` unless absent;
    with class probabilities `initial_proba`, `final_proba` and, with
    `binned_probabilities`, the re-predictions' binned: `bins_proba`),
    one row per labelled instance: compact to ship (no Python object per prediction), made
    into `Outcome`s by `outcomes_of`. A prediction of no labelled instance made outside the
    `evaluated` arrival times [start, end) is counted as outside the range (its instance
    arrived outside it: it is no initial prediction of one inside). `aliases`: predicted
    classes spelled otherwise than their class (`class_aliases`). `pending`: the instances
    still waiting for their label at the end (columns `key`, `t_arrival`): a prediction of
    one, made after it arrived, is counted as waiting (`unmatched_pending`), not as naming
    no instance.

    >>> labels = label_columns([Outcome(1, 7, 0.0, 100.0, 1, 0, 1, None, None)])
    >>> preds = {"id": np.array(["7", "7"], dtype=object), "t": np.array([0.0, 100.0]),
    ...          "y_pred": np.array(["b", "a"], dtype=object)}
    >>> columns, _ = join_columns(labels, preds, ["a", "b"], bins=0)
    >>> columns["initial"].tolist(), columns["final"].tolist(), "bins" in columns
    ([1], [0], False)
    >>> waiting = {"key": np.array(["8"], dtype=object), "t_arrival": np.array([0.0])}
    >>> _, counts = join_columns(labels, {**preds, "id": np.array(["8", "9"], dtype=object)},
    ...                          ["a", "b"], bins=0, pending=waiting)
    >>> counts["unmatched_pending"], counts["unmatched_no_instance"]
    (1, 1)
    """
    classification = classes is not None
    missing = NO_CLASS if classification else math.nan
    n = len(labels.get("id", ()))
    t0 = labels["t_arrival"].astype(np.float64) if n else np.empty(0)
    t_label = labels["t_label"].astype(np.float64) if n else np.empty(0)
    label_keys = labels["key"]
    t_all = np.asarray(preds["t"], dtype=np.float64)
    timed = ~np.isnan(t_all)  # (a time the log's reader could not read: no place to match)
    row = np.where(timed, _owners(label_keys, t0, preds["id"], t_all), -1)
    known = row >= 0
    early = late = np.zeros(len(t_all), dtype=bool)
    if n:
        safe = np.where(known, row, 0)
        early, late = known & (t_all < t0[safe]), known & (t_all > t_label[safe])
    pos = np.flatnonzero(known & ~early & ~late)
    row, t = row[pos], t_all[pos]
    waits = np.zeros(len(t_all), dtype=bool)
    if pending is not None and len(pending["key"]):  # (looked up for the unmatched alone)
        unmatched = np.flatnonzero(~known & timed)
        ids = preds["id"]
        ids = ids.take(pa.array(unmatched)) if isinstance(ids, pa.Array) else \
            np.asarray(ids, dtype=object)[unmatched]
        at = lookup(ids, pending["key"])  # (an id is pending once at a time)
        hit = at >= 0
        waits[unmatched[hit]] = t_all[unmatched[hit]] >= pending["t_arrival"][at[hit]]
    outside = ~known & ~waits & ((t_all < evaluated[0]) | (t_all >= evaluated[1]))
    counts = {"logged_predictions": len(t_all), "unmatched_predictions": len(t_all) - len(pos),
              "probabilities_not_summing_to_1": 0,
              "unmatched_pending": int(np.count_nonzero(waits)),
              "unmatched_outside_range": int(np.count_nonzero(outside)),
              "unmatched_no_instance": int(np.count_nonzero(~known & ~waits & ~outside & timed)),
              "unmatched_unreadable_time": int(np.count_nonzero(~timed)),
              "unmatched_before_arrival": int(np.count_nonzero(early)),
              "unmatched_after_label": int(np.count_nonzero(late))}

    values = preds["y_pred"]
    if classification:  # a class's index, −1 for none (None / NaN are no class)
        values = lookup(with_aliases(values, aliases or {}), classes)[pos]
    else:
        values = numbers_of(pd.Series(np.asarray(values)[pos], dtype=object)).to_numpy(
            dtype=np.float64)
    # An instance's predictions in time order (log order among equal times: lexsort is
    # stable and `pos` increases).
    order = np.lexsort((t, row))
    row, t, values = row[order], t[order], values[order]
    if preds.get("kind") is not None:
        kind = kind_codes(preds["kind"])[pos[order]]
    else:  # the first is the initial one, and so is one at its time (a repeat: counted)
        first = np.r_[True, row[1:] != row[:-1]][:len(row)]
        t_first = t[np.flatnonzero(first)][np.cumsum(first) - 1]
        kind = np.where(first, 0, np.where(t >= t_label[row], 2, np.where(t == t_first, 0, 1)))
    is_initial, rep, is_final = (kind == k for k in range(len(PREDICTION_KINDS)))

    dtype = np.int64 if classification else np.float64
    initial = np.full(n, missing, dtype=dtype)
    final_values = np.full(n, missing, dtype=dtype)
    # The first initial prediction of each instance, and its last final one (chosen here: an
    # assignment to a repeated index keeps no value numpy promises).
    first_initial = _ends(np.flatnonzero(is_initial), row, first=True)
    last_final = _ends(np.flatnonzero(is_final), row, first=False)
    initial[row[first_initial]] = values[first_initial]
    if final:
        final_values[row[last_final]] = values[last_final]
    columns = {name: labels[name] for name in ("id", "y", "y_prev", "y_majority", "segments")
               if name in labels}
    columns.update(n=labels["n"].astype(np.int64), t_arrival=t0, t_label=t_label,
                   initial=initial)
    if final:
        columns["final"] = final_values
    if classification and preds.get("proba") is not None and preds["proba"].null_count < \
            len(preds["proba"]):
        vectors = proba_vectors(preds["proba"].take(pa.array(pos[order])), classes,
                                aliases or {})
        for name, rows, wanted in (("initial_proba", first_initial, True),
                                   ("final_proba", last_final, final)):
            if wanted:
                columns[name] = np.full((n, len(classes)), math.nan)
                columns[name][row[rows]] = vectors[rows]
                counts["probabilities_not_summing_to_1"] += int(np.count_nonzero(
                    np.abs(vectors[rows].sum(axis=1) - 1) > PROBABILITY_SUM_SLACK))
        if bins and binned_probabilities:
            columns["bins_proba"] = _binned_proba(
                t0, t_label, columns["initial_proba"],
                columns.get("final_proba", np.full((n, len(classes)), math.nan)), row[rep],
                t[rep], vectors[rep], bins)
    if bins:
        columns["bins"] = _binned(t0, t_label, initial, final_values, row[rep], t[rep],
                                  values[rep], bins, classification,
                                  len(classes) if classification else 0)
    counts["repeated_predictions"] = int(is_initial.sum()) - len(first_initial) + (
        int(is_final.sum()) - len(last_final) if final else 0)
    counts["repredicted"] = len(np.unique(row[rep]))  # (labelled instances re-predicted)
    unscored = (lambda a: a == NO_CLASS) if classification else np.isnan
    counts["unscored_initial"] = int(unscored(initial).sum())
    counts["unscored_final"] = int(unscored(final_values).sum()) if final else 0
    return columns, counts


def _ends(at: np.ndarray, row: np.ndarray, first: bool) -> np.ndarray:
    """Of the positions `at` (ascending), the first (or last) of each `row[at]`, rows sorted.

    >>> row = np.array([0, 0, 1, 1, 1])
    >>> _ends(np.array([0, 1, 2, 4]), row, True).tolist(), _ends(np.array([0, 1, 2, 4]), row,
    ...                                                          False).tolist()
    ([0, 2], [1, 4])
    """
    rows = row[at]
    edge = np.r_[True, rows[1:] != rows[:-1]] if first else np.r_[rows[1:] != rows[:-1], True]
    return at[edge] if len(at) else at


def proba_vectors(maps: pa.MapArray, classes: list, aliases: dict | None = None) -> np.ndarray:
    """Maps {class: probability} as rows over `classes` (strings, in index order): 0 for a
    class a map does not name, NaN rows for a null map; a class not in `classes` is left out
    (a key among `aliases` is its class). In a binary task a map that names one class gives
    the other 1 − its probability (a logged score).

    >>> maps = pa.array([[("b", 0.8)], None, [("a", 0.3), ("b", 0.7)]],
    ...                 pa.map_(pa.string(), pa.float64()))
    >>> proba_vectors(maps, ["a", "b"]).round(6).tolist()
    [[0.2, 0.8], [nan, nan], [0.3, 0.7]]
    """
    n, k = len(maps), len(classes)
    out = np.zeros((n, k))
    offsets = maps.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    lengths = np.diff(offsets)
    start = offsets[0]
    keys = maps.keys.slice(start, offsets[-1] - start)
    items = maps.items.slice(start, offsets[-1] - start).to_numpy(zero_copy_only=False)
    column = lookup(with_aliases(keys, aliases or {}), classes)
    row = np.repeat(np.arange(n), lengths)
    known = column >= 0
    out[row[known], column[known]] = items[known]
    if k == 2:
        single = np.flatnonzero(np.bincount(row[known], minlength=n) == 1)
        named = np.full(n, -1)
        named[row[known]] = column[known]
        c = named[single]
        out[single, 1 - c] = 1.0 - out[single, c]
    out[~maps.is_valid().to_numpy(zero_copy_only=False)] = math.nan
    return out


def _binned(t0, t_label, initial, final, rep_row, t_rep, v_rep, bins: int,
            classification: bool, classes: int) -> np.ndarray:
    """Each instance's prediction for bins 0..B+1, from its re-predictions (`rep_row`: their
    instance, in instance then time order); class indices in the smallest integer type that
    holds them (B + 2 of them per outcome travel to the scoring)."""
    n = len(t0)
    sizes = np.bincount(rep_row, minlength=n)
    ends = np.cumsum(sizes)
    dtype = np.min_scalar_type(-max(classes, 1)) if classification else initial.dtype
    binned = np.empty((n, bins + 2), dtype=dtype)
    # In slices of instances: the (instance, bin) temporaries stay a few MB, not n·B·8 bytes
    # each (bench_scoring's vectorised side: median 0.23 s -> 0.19 s).
    step = max(1, BIN_CELLS // (bins + 2))
    for a in range(0, n, step):
        b = min(a + step, n)
        lo, hi = (ends[a - 1] if a else 0), ends[b - 1]
        binned[a:b] = binned_flat(t0[a:b], t_label[a:b], initial[a:b], final[a:b], sizes[a:b],
                                  t_rep[lo:hi], v_rep[lo:hi], bins, classification)
    return binned


def _binned_proba(t0, t_label, initial, final, rep_row, t_rep, v_rep, bins: int) -> np.ndarray:
    """Each instance's class probabilities for bins 0..B+1 (instances × bins × classes), in
    slices of instances like `_binned`."""
    n = len(t0)
    sizes = np.bincount(rep_row, minlength=n)
    ends = np.cumsum(sizes)
    out = np.empty((n, bins + 2, initial.shape[1]))
    step = max(1, BIN_CELLS // ((bins + 2) * max(1, initial.shape[1])))
    for a in range(0, n, step):
        b = min(a + step, n)
        lo, hi = (ends[a - 1] if a else 0), ends[b - 1]
        out[a:b] = binned_proba(t0[a:b], t_label[a:b], initial[a:b], final[a:b], sizes[a:b],
                                t_rep[lo:hi], v_rep[lo:hi], bins)
    return out


def outcomes_of(columns: dict, classification: bool) -> list:
    """One `Outcome` per row of `join_columns`' columns (no `final`: not logged; no `bins`:
    no bins).

    >>> cols = label_columns([Outcome(1, 7, 0.0, 5.0, 1, 0, 1, None, None)])
    >>> cols.update(initial=np.array([-1]))
    >>> outcomes_of(cols, classification=True)[0].initial is None
    True
    """
    n = len(columns["n"])
    final, binned, binned_proba = (columns.get(name) for name in ("final", "bins",
                                                                    "bins_proba"))

    def python(values):  # None for no prediction
        if classification:
            return [None if v == NO_CLASS else v for v in values.tolist()]
        return [None if math.isnan(v) else v for v in values.tolist()]

    none = itertools.repeat(None, n)

    def vectors(name):  # tuples of class probabilities, None for none
        matrix = columns.get(name)
        if matrix is None:
            return itertools.repeat(None, n)
        return [None if math.isnan(r[0]) else tuple(r) for r in matrix.tolist()]

    return list(map(Outcome._make, zip(
        columns["n"].astype(np.int64).tolist(), columns["id"],
        np.asarray(columns["t_arrival"], dtype=np.float64).tolist(),
        np.asarray(columns["t_label"], dtype=np.float64).tolist(), columns["y"],
        columns["y_prev"], columns["y_majority"], python(columns["initial"]),
        none if final is None else python(final), itertools.repeat(None, n),
        itertools.repeat(None, n), itertools.repeat(None, n) if binned is None else binned,
        vectors("initial_proba"), vectors("final_proba"),
        columns.get("segments", itertools.repeat(None, n)), itertools.repeat(None, n),
        itertools.repeat(None, n) if binned_proba is None else binned_proba)))


def model_classes(label_classes: list, predicted: set) -> list[str]:
    """A model's classes as strings in index order: the label pass's classes (declared, else
    first appearance in label order, as the replay indexes them), then classes only ever
    predicted, sorted (a predicted number that spells a label class otherwise is that class:
    `class_aliases`).

    >>> model_classes([True, False], {"False", "maybe"})
    ['True', 'False', 'maybe']
    >>> model_classes([0, 1], {"1.0", "2.0"})
    ['0', '1', '2.0']
    """
    names = [str(c) for c in label_classes]
    return names + sorted(set(predicted) - set(names) - set(class_aliases(names, predicted)))


def _number(name: str) -> float | None:
    if name.strip().lower() in ("true", "false"):  # (Python's True, Arrow's and JSON's true)
        return float(name.strip().lower() == "true")
    try:
        value = float(name)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def class_aliases(label_names: list[str], predicted: set) -> dict[str, str]:
    """Predicted classes that are a label class's number spelled otherwise -> that class: a
    log that went through a float column says "1.0" for the label 1 (and "1" for a label 1.0);
    a boolean is the number 1 or 0, as in Python (labels True/False, predictions 1/0).

    >>> class_aliases(["0", "1"], {"0.0", "1.0", "1", "7.0"})
    {'0.0': '0', '1.0': '1'}
    >>> class_aliases(["False", "True"], {"0", "1"}), class_aliases(["0", "1"], {"true"})
    ({'0': 'False', '1': 'True'}, {'true': '1'})
    """
    by_number = {}
    for name in label_names:
        by_number.setdefault(_number(name), []).append(name)
    by_number.pop(None, None)
    return {p: by_number[v][0] for p in sorted(set(predicted) - set(label_names))
            if len(by_number.get(v := _number(p), ())) == 1}


def with_aliases(values: pa.Array, aliases: dict[str, str]) -> pa.Array:
    """Class names (an Arrow string array) with each alias replaced by its class.

    >>> with_aliases(pa.array(["1.0", None, "0"]), {"1.0": "1"}).to_pylist()
    ['1', None, '0']
    """
    if not aliases:
        return values
    if not isinstance(values, pa.Array):
        values = pa.array(values, type=pa.string(), from_pandas=True)
    at = lookup(values, list(aliases))
    names = np.array(list(aliases.values()) + [None], dtype=object)
    return pc.if_else(pa.array(at >= 0), pa.array(names[at], pa.string()), values)


def check_shared_classes(label_names: list[str], predicted: set, where: str) -> None:
    """Refuse predictions that can never be right: two or more predicted classes, none a label
    class, while the labels have two or more (a score column read as the prediction, labels
    0/1 against predictions "fraud"/"ok").

    >>> check_shared_classes(["0", "1"], {"ok"}, "model m")
    >>> check_shared_classes(["0", "1"], {"ok", "fraud"}, "model m")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: model m: the predictions name none of the label classes \
(predicted: 'fraud', 'ok'; labels: '0', '1'); log the label's classes as predictions, or ...
    """
    if len(predicted) < 2 or len(label_names) < 2 or set(predicted) & set(label_names):
        return

    def few(names):
        names = sorted(names)
        return ", ".join(map(repr, names[:5])) + (", …" if len(names) > 5 else "")

    raise InputError(f"{where}: the predictions name none of the label classes (predicted: "
                     f"{few(predicted)}; labels: {few(label_names)}); log the label's classes "
                     f'as predictions, or choose the columns with the options {{"prediction": '
                     f'...}} (the log) and {{"label": ...}} (the stream)')
