"""Backfill: score a deployed model's logged predictions, no model replayed.

    stream (instances + labels) -> label pass: the replay engine with a model that predicts
        nothing, so label numbers n, baselines, orphans, dead letters and pending instances are
        exactly the replay's
    prediction log (Arrow record batches)
    both keyed by (stream, id bucket) -> CoGroupByKey -> per bucket and model one vectorised
        join (pandas/numpy) -> Outcomes with their bins -> the same scoring as `run`

A logged prediction belongs to the labelled instance with its id whose latency period
[t_arrival, t_label] holds its time (ids may be reused once labelled). Kinds come from the
log's `kind` column (initial | re-prediction | final); without one they are inferred from
times: an instance's earliest prediction is its initial one, one at or after its label time
is its final one, the rest are re-predictions. Predictions that belong to no labelled
instance (still pending at the end, unknown id, outside the latency period) are counted as
`unmatched_predictions` per (stream, model).
"""

from __future__ import annotations

import itertools
import json
import math
import os

import apache_beam as beam
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from apache_beam.io.filesystems import FileSystems
from river import base

from metrics.binning import NO_CLASS, binned_flat
from transforms.errors import InputError, reports_errors
from transforms.records import Outcome
from transforms.replay.keyed import GroupedReplay
from transforms.scoring.columns import concat_rows, group_rows, take_rows
from transforms.specs import split_options
from transforms.streams.read import ReadStreams
from transforms.streams.tables import event_seconds, table_files
from transforms.vocabulary import (CLASSES, COUNTS, DEAD_LETTERS, ERRORS, PREDICTION_KINDS,
                                   READ_COUNTS)

# The label pass's model key: one engine per stream, whatever the models.
LABELS = "<labels>"
# Defaults: the columns of `run`'s own predictions.parquet.
LOG_COLUMNS = {"stream": "stream", "model": "model", "id": "id", "kind": "kind", "time": "t",
               "prediction": "y_pred"}
# Per (stream, model): prediction rows read, and those that belong to no labelled instance.
LOG_COUNTERS = ("logged_predictions", "unmatched_predictions")
# (instance, bin) cells binned at once by the join.
BIN_CELLS = 1 << 16
LOG_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}


class LabelsOnly(base.Classifier):
    """A model that predicts nothing and learns nothing: the label pass's engine keeps only
    the bookkeeping of labels (numbers, baselines, orphans, pending).

    >>> LabelsOnly().predict_one({"x": 1}) is None
    True
    """

    def learn_one(self, x, y):
        pass

    def predict_proba_one(self, x):
        return {}

    def predict_one(self, x):
        return None


# A run's prediction log records its models' order here (Parquet metadata): a backfill of it
# without --model orders models, and so names comparison pairs, as the run did.
MODEL_ORDER_KEY = b"delayed-eval.models"


class PredictionLogSpec:
    """Where logged predictions are and what their columns are called.

    `PATTERN[{json}]`: a file, a glob or a directory (every .parquet / .csv file under it,
    e.g. hive partitions `date=2026-11-01/part-0.parquet`), read with Beam's FileSystems so
    gs:// and s3:// work too. Options rename the columns (defaults: those of `run`'s
    predictions.parquet): `stream`, `model`, `id`, `kind`, `time`, `prediction`. A log without
    a stream (model) column belongs to the only configured stream (model).

    >>> spec = PredictionLogSpec.parse('logs/preds{"time": "ts", "prediction": "score"}')
    >>> spec.pattern, spec.columns["time"], spec.columns["id"]
    ('logs/preds', 'ts', 'id')
    """

    def __init__(self, pattern: str, columns: dict):
        self.pattern = pattern
        self.columns = columns

    @classmethod
    def parse(cls, text: str) -> PredictionLogSpec:
        pattern, options = split_options(text, "prediction log")
        unknown = set(options) - set(LOG_COLUMNS)
        if unknown:
            raise InputError(f"prediction log {pattern}: unknown option(s) {sorted(unknown)}; "
                             f"known: {sorted(LOG_COLUMNS)}")
        return cls(pattern, {**LOG_COLUMNS, **options})

    def files(self, time_range=None) -> list[str]:
        """The log's files, sorted (a directory: every .parquet / .csv file below it); with a
        `TimeRange`, partitions `date=DAY` before its first day are skipped."""
        files = [f for f in table_files(self.pattern, tuple(LOG_FORMATS))
                 if os.path.splitext(f)[1].lower() in LOG_FORMATS
                 and (time_range is None or time_range.keeps_partition(f))]
        if not files:
            raise InputError(f"prediction log {self.pattern}: no .parquet or .csv file found")
        return files

    def model_names(self) -> list[str]:
        """The distinct model names in the log (reads only that column), in the order the run
        that wrote it configured them (`MODEL_ORDER_KEY` in a Parquet file's metadata), then
        any others sorted by name."""
        names: set = set()
        recorded: list = []
        for path in self.files():
            recorded = recorded or self._recorded_order(path)
            for batch in self.read(path, columns=["model"]):
                if "model" not in batch.schema.names:
                    raise InputError(f"{path}: no model column {self.columns['model']!r}; "
                                     f"name the models with --model or the column with "
                                     f'{{"model": "..."}}')
                names.update(batch.column(0).cast(pa.string()).to_pylist())
        names.discard(None)
        return [n for n in recorded if n in names] + sorted(names - set(recorded))

    @staticmethod
    def _recorded_order(path: str) -> list:
        if LOG_FORMATS[os.path.splitext(path)[1].lower()] != "parquet":
            return []
        import pyarrow.parquet as pq

        with FileSystems.open(path) as f:
            metadata = pq.ParquetFile(f).schema_arrow.metadata or {}
        try:
            return list(json.loads(metadata.get(MODEL_ORDER_KEY, b"[]")))
        except ValueError:
            return []

    def read(self, path: str, columns: list[str] | None = None):
        """The file's rows as Arrow record batches, columns renamed to the defaults."""
        fmt = LOG_FORMATS[os.path.splitext(path)[1].lower()]
        wanted = None if columns is None else [self.columns[c] for c in columns]
        with FileSystems.open(path) as f:
            if fmt == "parquet":
                import pyarrow.parquet as pq

                file = pq.ParquetFile(f)
                if wanted is not None:
                    wanted = [c for c in wanted if c in file.schema_arrow.names]
                batches = list(file.iter_batches(batch_size=1 << 16, columns=wanted))
            else:
                import pyarrow.csv as pcsv

                table = pcsv.read_csv(f)
                if wanted is not None:
                    table = table.select([c for c in wanted if c in table.column_names])
                batches = table.to_batches(max_chunksize=1 << 16)
        rename = {v: k for k, v in self.columns.items()}
        for batch in batches:
            missing = [] if columns is not None else [
                self.columns[k] for k in ("id", "time", "prediction")
                if self.columns[k] not in batch.schema.names]
            if missing:
                raise InputError(f"{path}: column(s) {missing} not found; columns are "
                                 f"{batch.schema.names} (rename with options such as "
                                 f'{{"time": "ts"}})')
            yield pa.RecordBatch.from_arrays(
                batch.columns, names=[rename.get(n, n) for n in batch.schema.names])


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
    the log names them)."""
    ids = np.empty(len(outcomes), dtype=object)
    ids[:] = [o.id for o in outcomes]
    cols = {"id": ids, "key": np.array([str(i) for i in ids], dtype=object)}
    for name in ("n", "t_arrival", "t_label", "y", "y_prev", "y_majority"):
        cols[name] = np.array([getattr(o, name) for o in outcomes], dtype=object)
    return cols


def split_by(columns: dict, keys: np.ndarray):
    """(key, columns of its rows) for each distinct key, in key order."""
    for key, rows in group_rows(keys):
        yield key, take_rows(columns, rows)


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
    """Outcomes of one model's logged predictions for labelled instances.

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
    classification = classes is not None
    missing = NO_CLASS if classification else math.nan
    n = len(labels.get("id", ()))
    t0 = labels["t_arrival"].astype(np.float64) if n else np.empty(0)
    t_label = labels["t_label"].astype(np.float64) if n else np.empty(0)
    label_keys = labels["key"]
    t_all = np.asarray(preds["t"], dtype=np.float64)
    row = _owners(label_keys, t0, preds["id"], t_all)
    ok = row >= 0
    if n:
        safe = np.where(ok, row, 0)
        ok &= (t_all >= t0[safe]) & (t_all <= t_label[safe])
    pos = np.flatnonzero(ok)
    row, t = row[pos], t_all[pos]
    counts = {"logged_predictions": len(t_all), "unmatched_predictions": len(t_all) - len(pos)}

    values = preds["y_pred"]
    if classification:  # a class's index, −1 for none (None / NaN are no class)
        values = lookup(values, classes)[pos]
    else:
        values = pd.to_numeric(pd.Series(np.asarray(values)[pos], dtype=object),
                               errors="coerce").to_numpy(dtype=np.float64)
    # An instance's predictions in time order (log order among equal times: lexsort is
    # stable and `pos` increases).
    order = np.lexsort((t, row))
    row, t, values = row[order], t[order], values[order]
    if preds.get("kind") is not None:
        kind = kind_codes(preds["kind"])[pos[order]]
    else:
        first = np.r_[True, row[1:] != row[:-1]]
        kind = np.where(first, 0, np.where(t >= t_label[row], 2, 1))
    is_initial, rep, is_final = (kind == k for k in range(len(PREDICTION_KINDS)))

    dtype = np.int64 if classification else np.float64
    initial = np.full(n, missing, dtype=dtype)
    final_values = np.full(n, missing, dtype=dtype)
    # The first initial prediction of each instance, and its last final one.
    first_initial = np.flatnonzero(is_initial)[::-1]
    initial[row[first_initial]] = values[first_initial]
    if final:
        final_values[row[is_final]] = values[is_final]
    binned = None
    if bins:
        sizes = np.bincount(row[rep], minlength=n)
        ends = np.cumsum(sizes)
        t_rep, v_rep = t[rep], values[rep]
        binned = np.empty((n, bins + 2), dtype=dtype)
        # In slices of instances: the (instance, bin) temporaries stay a few MB, not
        # n·B·8 bytes each (bench_scoring's vectorised side: median 0.23 s -> 0.19 s).
        step = max(1, BIN_CELLS // (bins + 2))
        for a in range(0, n, step):
            b = min(a + step, n)
            lo, hi = (ends[a - 1] if a else 0), ends[b - 1]
            binned[a:b] = binned_flat(t0[a:b], t_label[a:b], initial[a:b], final_values[a:b],
                                      sizes[a:b], t_rep[lo:hi], v_rep[lo:hi], bins,
                                      classification)

    def python(values):  # None for no prediction
        if classification:
            return [None if v == NO_CLASS else v for v in values.tolist()]
        return [None if math.isnan(v) else v for v in values.tolist()]

    outcomes = list(map(Outcome._make, zip(
        labels["n"].astype(np.int64).tolist(), labels["id"], t0.tolist(), t_label.tolist(),
        labels["y"], labels["y_prev"], labels["y_majority"], python(initial),
        python(final_values) if final else itertools.repeat(None, n),
        itertools.repeat(None, n), itertools.repeat(None, n),
        itertools.repeat(None, n) if binned is None else binned)))
    unscored = (lambda a: a == NO_CLASS) if classification else np.isnan
    counts["unscored_initial"] = int(unscored(initial).sum())
    counts["unscored_final"] = int(unscored(final_values).sum()) if final else 0
    return outcomes, counts


# -- Beam ----------------------------------------------------------------------------------------
def _prediction_column(batch: pa.RecordBatch, classification: bool):
    """Predictions: floats for regression; classes as an Arrow string array."""
    col = batch.column(batch.schema.get_field_index("prediction"))
    if not classification:  # a value that is no finite number is no prediction (NaN)
        values = pd.to_numeric(pd.Series(col.to_pylist(), dtype=object), errors="coerce") \
            .to_numpy(dtype=np.float64)
        return np.where(np.isfinite(values), values, np.nan)
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        return col.cast(pa.string())
    # Not strings: the class as `run` logs it, str(value) (True, not Arrow's "true").
    return pa.array([None if v is None else str(v) for v in col.to_pylist()], pa.string())


class _KeyLogBatches(beam.DoFn):
    """A prediction log file -> ((stream, bucket), ("predictions", columns)) and each
    (stream, model)'s predicted values (for classes never seen in a label)."""

    VALUES = "values"

    def __init__(self, log: PredictionLogSpec, streams: list[str], models: list[str],
                 classification: bool, buckets: int):
        self.log, self.streams, self.models = log, streams, models
        self.classification, self.buckets = classification, buckets

    def _names(self, batch, column: str, configured: list[str], path: str) -> np.ndarray:
        if column in batch.schema.names:
            return batch.column(batch.schema.get_field_index(column)).cast(pa.string()) \
                .to_numpy(zero_copy_only=False)
        if len(configured) != 1:
            raise InputError(f"{path}: no {column!r} column, and more than one {column} is "
                             f"configured ({configured}); name the column with "
                             f'{{"{column}": "..."}}')
        return np.full(batch.num_rows, configured[0], dtype=object)

    @reports_errors
    def process(self, path: str):
        for batch in self.log.read(path):
            names = batch.schema.names
            stream = self._names(batch, "stream", self.streams, path)
            model = self._names(batch, "model", self.models, path)
            keep = np.isin(stream, self.streams) & np.isin(model, self.models)
            cols = {"stream": stream, "model": model,
                    "id": batch.column(names.index("id")).cast(pa.string()),
                    # Seconds, or ISO datetimes / timestamps (unreadable: NaN, unmatched).
                    "t": event_seconds(pd.DataFrame(
                        {"t": batch.column(names.index("time")).to_pandas()}), "t")[0],
                    "y_pred": _prediction_column(batch, self.classification)}
            if "kind" in names:
                try:
                    cols["kind"] = kind_codes(batch.column(names.index("kind"))
                                              .cast(pa.string()).to_numpy(zero_copy_only=False))
                except InputError as e:
                    raise InputError(f"{path}: {e}") from None
            cols = take_rows(cols, np.flatnonzero(keep))
            if self.classification:
                encoded = pc.dictionary_encode(cols["y_pred"])
                pairs = pd.DataFrame({"s": cols["stream"], "m": cols["model"],
                                      "v": encoded.indices.fill_null(-1).to_numpy(
                                          zero_copy_only=False)}).drop_duplicates()
                values = encoded.dictionary.to_pylist()
                for (s, m), part in pairs[pairs["v"] >= 0].groupby(["s", "m"], sort=True):
                    yield beam.pvalue.TaggedOutput(self.VALUES, ((s, m),
                                                                 {values[v] for v in part["v"]}))
            keys = lookup(cols["stream"], self.streams) * self.buckets + \
                id_bucket(cols["id"], self.buckets)
            for key, part in split_by(cols, keys):
                yield (self.streams[key // self.buckets], int(key % self.buckets)), \
                    ("predictions", part)


def _key_labels(element, buckets: int):
    (stream, _), outcomes = element
    cols = label_columns(outcomes)
    for b, part in split_by(cols, id_bucket(cols["key"], buckets)):
        yield (stream, int(b)), ("labels", part)


class _Join(beam.DoFn):
    COUNTS = "counts"

    def __init__(self, models: list[str], classification: bool, bins: int, final: bool,
                 batch_size: int):
        self.models, self.classification = models, classification
        self.bins, self.final, self.batch_size = bins, final, batch_size

    @reports_errors
    def process(self, element, label_classes, predicted):
        (stream, _), parts = element
        labels = concat_rows([p for tag, p in parts if tag == "labels"])
        preds = concat_rows([p for tag, p in parts if tag == "predictions"])
        if not labels:
            labels = label_columns([])
        for model in self.models:
            rows = np.flatnonzero(preds["model"] == model) if preds else None
            mine = take_rows(preds, rows) if preds else \
                {"id": np.empty(0, object), "t": np.empty(0), "y_pred": np.empty(0, object)}
            classes = None
            if self.classification:
                classes = model_classes(label_classes.get((stream, LABELS), []),
                                        predicted.get((stream, model), set()))
            outcomes, counts = join_predictions(labels, mine, classes, self.bins, self.final)
            for i in range(0, len(outcomes), self.batch_size):
                yield (stream, model), outcomes[i:i + self.batch_size]
            yield beam.pvalue.TaggedOutput(self.COUNTS, ((stream, model), counts))


def model_classes(label_classes: list, predicted: set) -> list[str]:
    """A model's classes as strings in index order: the label pass's classes (declared, else
    first appearance in label order, as the replay indexes them), then classes only ever
    predicted, sorted.

    >>> model_classes([True, False], {"False", "maybe"})
    ['True', 'False', 'maybe']
    """
    names = [str(c) for c in label_classes]
    return names + sorted(set(predicted) - set(names))


class BackfillOutcomes(beam.PTransform):
    """Streams + a prediction log -> the outputs a replay gives (outcomes, dead letters,
    counts, classes, read counts), with the log's predictions in place of a model's.

    `label_engines` is the `EngineFactory` of the label pass (model `LABELS`).
    """

    def __init__(self, read: ReadStreams, label_engines, log: PredictionLogSpec,
                 models: list[str],
                 classification: bool, bins: int, final: bool, buckets: int = 16,
                 batch_size: int = 1000):
        super().__init__()
        self.read, self.label_engines, self.log = read, label_engines, log
        self.models, self.classification = models, classification
        self.bins, self.final, self.buckets, self.batch_size = bins, final, buckets, batch_size

    def expand(self, pbegin):
        read = pbegin | "ReadStreams" >> self.read
        replay = read["chunks"] | "LabelPass" >> GroupedReplay(self.label_engines,
                                                               self.batch_size)
        streams = [s.name for s in self.read.streams]
        logged = (pbegin | "LogFiles" >> beam.Create(self.log.files(self.read.time_range))
                  | "SpreadFiles" >> beam.Reshuffle()
                  | "ReadLog" >> beam.ParDo(_KeyLogBatches(
                      self.log, streams, self.models, self.classification, self.buckets))
                  .with_outputs(_KeyLogBatches.VALUES, ERRORS, main="predictions"))
        predicted = (logged[_KeyLogBatches.VALUES]
                     | "PredictedClasses" >> beam.CombinePerKey(
                         lambda sets: set().union(*sets)))
        label_classes = (replay[CLASSES] | "LabelClasses" >> beam.CombinePerKey(
            lambda lists: max(lists, key=len, default=[])))
        buckets = self.buckets
        labels = replay.outcomes | "KeyLabels" >> beam.FlatMap(_key_labels, buckets)
        joined = ((labels, logged.predictions) | "Both" >> beam.Flatten()
                  | "ByBucket" >> beam.GroupByKey()
                  | "Join" >> beam.ParDo(
                      _Join(self.models, self.classification, self.bins, self.final,
                            self.batch_size),
                      beam.pvalue.AsDict(label_classes), beam.pvalue.AsDict(predicted))
                  .with_outputs(_Join.COUNTS, ERRORS, main="outcomes"))
        models = self.models

        def per_model(element):
            (stream, _), counts = element
            counts = {k: v for k, v in counts.items() if not k.startswith("unscored")}
            for m in models:
                yield (stream, m), counts

        def model_class_list(element, predicted):
            (stream, _), classes = element
            for m in models:
                names = model_classes(classes, predicted.get((stream, m), set()))
                yield (stream, m), list(classes) + names[len(classes):]

        counts = ((replay[COUNTS] | "LabelCounts" >> beam.FlatMap(per_model),
                   joined[_Join.COUNTS]) | "AllCounts" >> beam.Flatten())
        dead = replay[DEAD_LETTERS] | "Unmodelled" >> beam.Map(lambda d: {**d, "model": None})
        return {"outcomes": joined.outcomes,
                DEAD_LETTERS: (read[DEAD_LETTERS], dead) | "AllDead" >> beam.Flatten(),
                COUNTS: counts,
                CLASSES: label_classes | "ModelClasses" >> beam.FlatMap(
                    model_class_list, beam.pvalue.AsDict(predicted)),
                READ_COUNTS: read[READ_COUNTS],
                ERRORS: (read[ERRORS], replay[ERRORS], logged[ERRORS], joined[ERRORS])
                | "AllErrors" >> beam.Flatten()}
