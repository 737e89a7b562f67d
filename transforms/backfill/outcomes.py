"""Backfill: score a deployed model's logged predictions, no model replayed.

    stream (instances + labels) -> label pass: the replay engine with a model that predicts
        nothing, so label numbers n, baselines, orphans, dead letters and pending instances are
        exactly the replay's; a stream is read in time order and drained as it is read
        (`PerKeyReplay`: memory bounded by what is pending; a table out of time order is read
        whole and sorted first), or grouped and sorted (`--replay grouped`)
    prediction log (Arrow record batches)
    both keyed by (stream, id bucket; the log's rows spilled to files, their paths keyed)
        -> GroupByKey -> per bucket and model one vectorised join (pandas/numpy) -> outcome
        columns with their bins, keyed by ranges of label numbers -> GroupByKey -> Outcomes in
        label order, as a replay gives them -> the same scoring as `run`

A logged prediction belongs to the labelled instance with its id whose latency period
[t_arrival, t_label] holds its time (ids may be reused once labelled). Kinds come from the
log's `kind` column (initial | re-prediction | final); without one they are inferred from
times: an instance's earliest prediction is its initial one, one at or after its label time
is its final one, the rest are re-predictions. Predictions that belong to no labelled
instance (of one still pending at the end, an unknown id, outside the latency period) are
counted as `unmatched_predictions` per (stream, model), and by why
(`transforms.backfill.logs.LOG_COUNTERS`): the label pass hands on its pending instances'
ids and arrival times for that.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid

import apache_beam as beam
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from apache_beam.io.filesystems import FileSystems
from river import base

from metrics.probabilistic import PROBABILITY_SLACK
from transforms.backfill.join import (check_shared_classes, class_aliases, id_bucket,
                                      join_columns, kind_codes, label_columns, lookup,
                                      model_classes, outcomes_of, spelled_kinds)
from transforms.backfill.log_text import TypesChanged
from transforms.backfill.logs import PredictionLogSpec
from transforms.errors import InputError, reports_errors
from transforms.records import dead_letter, is_missing
from transforms.replay.engine import is_model_failure
from transforms.replay.keyed import GroupedReplay
from transforms.replay.per_key import PerKeyReplay
from transforms.scoring.columns import concat_rows, split_by, take_rows
from transforms.streams.read import ReadStreams
from transforms.streams.table_files import as_pandas, delete_paths, numbers_of
from transforms.streams.times import event_seconds
from transforms.vocabulary import (CLASSES, COUNTS, DEAD_LETTERS, ERRORS, NOT_SCORED, PENDING,
                                   PREDICTION_KINDS, PREDICTION_SCHEMA, READ_COUNTS)

# The label pass's model key: one engine per stream, whatever the models.
LABELS = "<labels>"

# The folder (in the run's staging folder) of the log's rows spilled by id bucket.
LOG_PARTS = "_log_parts"


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


def _of_label_passes(dead_letter: dict):
    """The label passes' dead letters: the shared pass's belong to no model (the reading's have
    no model field); a model's own pass (`BackfillOutcomes`' set_aside) gives only the events
    the logged run set aside for it, and their labels: the rest are the shared pass's."""
    model = dead_letter.get("model")
    if model == LABELS:
        yield {**dead_letter, "model": None}
    elif model is None or is_model_failure(dead_letter):
        yield dead_letter


# -- Beam ----------------------------------------------------------------------------------------
def _prediction_column(batch: pa.RecordBatch, classification: bool):
    """Predictions: floats for regression; classes as an Arrow string array (none: null; of
    numbers, NaN too, as Python's json writes a float column's missing value).

    >>> _prediction_column(pa.record_batch({"prediction": ["a", "", None]}), True).to_pylist()
    ['a', None, None]
    >>> _prediction_column(pa.record_batch({"prediction": [1.0, math.nan]}), True).to_pylist()
    ['1.0', None]
    """
    col = batch.column(batch.schema.get_field_index("prediction"))
    if not classification:  # a value that is no finite number is no prediction (NaN)
        values = numbers_of(pd.Series(col.to_pylist(), dtype=object)).to_numpy(dtype=np.float64)
        return np.where(np.isfinite(values), values, np.nan)
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        col = col.cast(pa.string())  # an empty text is no class: no prediction (a CSV cell)
        return pc.if_else(pc.equal(col, ""), pa.scalar(None, pa.string()), col)
    # Not strings: the class as `run` logs it, str(value) (True, not Arrow's "true").
    return pa.array([None if is_missing(v) else str(v)
                     for v in col.to_pylist()], pa.string())


def spill_part(columns: dict, folder: str) -> str:
    """Write a bucket's part of the log (numpy and Arrow columns) as an Arrow file in `folder`
    -> its path. A retried bundle writes a new file; only the paths the committed outputs carry
    are read.

    >>> import tempfile
    >>> path = spill_part({"id": pa.array(["a"]), "t": np.array([1.5])}, tempfile.mkdtemp())
    >>> part = read_part(path)
    >>> part["id"].to_pylist(), part["t"].tolist()
    (['a'], [1.5])
    """
    path = FileSystems.join(folder, f"{uuid.uuid4().hex}.arrow")
    table = pa.table(columns)
    with FileSystems.create(path) as f, pa.ipc.new_file(f, table.schema) as writer:
        writer.write_table(table)
    return path


def read_part(path: str) -> dict:
    """A part written by `spill_part`: text and map columns as Arrow arrays, the others as
    numpy.

    >>> import tempfile
    >>> part = read_part(spill_part({"id": pa.array(["a", "b"]), "n": np.array([1, 2])},
    ...                             tempfile.mkdtemp()))
    >>> type(part["id"]).__name__, type(part["n"]).__name__
    ('StringArray', 'ndarray')
    """
    with FileSystems.open(path) as f:
        table = pa.ipc.open_file(pa.BufferReader(f.read())).read_all()
    return {name: column.combine_chunks() if pa.types.is_string(column.type)
            or pa.types.is_map(column.type) else column.to_numpy()
            for name, column in zip(table.column_names, table.columns)}


def _proba_column(batch: pa.RecordBatch, path: str) -> pa.MapArray:
    """A log batch's class probabilities as maps {class: probability} (all null without; a map
    with a NaN, or of no class: null).

    >>> maps = pa.array([[("a", 0.2), ("b", 0.8)], [("a", math.nan), ("b", 0.5)], []],
    ...                 pa.map_(pa.string(), pa.float64()))
    >>> _proba_column(pa.record_batch({"id": ["1", "2", "3"], "proba": maps}), "p").to_pylist()
    [[('a', 0.2), ('b', 0.8)], None, None]
    """
    kind = PREDICTION_SCHEMA.field("proba").type
    if "proba" not in batch.schema.names:
        return pa.nulls(batch.num_rows, kind)
    column = batch.column(batch.schema.get_field_index("proba"))
    try:
        maps = column.cast(kind)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise InputError(f"{path}: column proba is {column.type}, not a map from class to "
                         f"probability; name per-class probability columns with "
                         f'{{"proba_columns": {{...}}}} or a score with {{"score": ...}}') \
            from None
    offsets = maps.offsets.to_numpy()  # (into the whole of `items`, also of a slice)
    values = maps.items.to_numpy(zero_copy_only=False)[offsets[0]:offsets[-1]]
    outside = (values < -PROBABILITY_SLACK) | (values > 1 + PROBABILITY_SLACK)
    if outside.any():  # (a score or a logit logged as a probability: every measure of it wrong)
        at = int(np.argmax(outside))
        row = int(np.searchsorted(offsets, offsets[0] + at, side="right")) - 1
        ids = batch.column(batch.schema.get_field_index("id"))
        raise InputError(
            f"{path}: the prediction of id {ids[row].as_py()!r} gives class "
            f"{maps.keys[offsets[0] + at].as_py()!r} the probability {float(values[at])!r}, "
            f"not one in [0, 1]; log probabilities (a score, margin or logit is none), or leave "
            f"them out with --no-probabilities")
    # A map with a NaN (Python's json writes a missing value so) or with no class at all (a
    # JSON object of NaN) is no probabilities, as a NaN score is (`PredictionLogSpec._proba_map`).
    empty = (np.diff(offsets) == 0) & ~maps.is_null().to_numpy(zero_copy_only=False)
    if not np.isnan(values).any() and not empty.any():
        return maps
    rows = np.searchsorted(offsets, offsets[0] + np.flatnonzero(np.isnan(values)), "right") - 1
    missing = maps.is_null().to_numpy(zero_copy_only=False) | empty
    missing[rows] = True
    return pa.MapArray.from_arrays(pa.array(offsets - offsets[0], pa.int32()),
                                   maps.keys[offsets[0]:offsets[-1]], pa.array(values),
                                   mask=pa.array(missing))


class _KeyLogBatches(beam.DoFn):
    """A prediction log file -> ((stream, bucket), ("predictions", columns, or the path of a
    file holding them, (file, block): their place in the log)), each (stream, model)'s
    predicted values (for classes never seen in a label) and the count of its rows of each
    (stream, model) not configured (`NOT_SCORED`; "" for a row that names none). With a
    `spill` folder, a bucket's rows go to files there and only their paths are shuffled: a
    night's log is not held in the runner's memory."""

    VALUES = "values"

    def __init__(self, log: PredictionLogSpec, streams: list[str], models: list[str],
                 classification: bool, buckets: int, spill: str | None = None,
                 probabilities: bool = True):
        self.log, self.streams, self.models = log, streams, models
        self.classification, self.buckets, self.spill = classification, buckets, spill
        self.probabilities = probabilities and classification

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
        bad: list = []  # (data row, reason, text) of the lines that cannot be read
        if self.spill is None:
            yield from self._keyed(self.log.read(path, bad_rows=bad), path)
        else:
            # Read block by block; the parts are let out when the file is done, so that if a
            # column's type changes part-way, they are deleted and the file read again whole.
            made = []
            try:
                for out in self._keyed(self.log.read(path, streamed=True, bad_rows=bad), path):
                    made.append(out)
            except TypesChanged:
                delete_paths([out[1][1] for out in made if isinstance(out, tuple)])
                bad.clear()
                made = list(self._keyed(self.log.read(path, bad_rows=bad), path))
            yield from made
        for row, reason, text in bad:  # (no stream or model: the line names none readably)
            yield beam.pvalue.TaggedOutput(DEAD_LETTERS, dead_letter(
                None, reason, file=path, row=row, record=text))

    def _keyed(self, batches, path: str):
        for block, batch in enumerate(batches):
            names = batch.schema.names
            stream = self._names(batch, "stream", self.streams, path)
            model = self._names(batch, "model", self.models, path)
            keep = np.isin(stream, self.streams) & np.isin(model, self.models)
            if not keep.all():
                others = pd.DataFrame({"s": stream[~keep], "m": model[~keep]}).fillna("")
                for (s, m), n in others.value_counts(sort=False).items():
                    yield beam.pvalue.TaggedOutput(NOT_SCORED, ((s, m), int(n)))
            cols = {"stream": stream, "model": model,
                    "id": batch.column(names.index("id")).cast(pa.string()),
                    # Seconds, or ISO datetimes / timestamps (unreadable: NaN, unmatched).
                    "t": event_seconds(as_pandas(batch.select(["time"])), "time",
                                       reading=self.log.reading)[0],
                    "y_pred": _prediction_column(batch, self.classification)}
            if self.probabilities:  # every part has the column: parts concatenate
                cols["proba"] = _proba_column(batch, path)
            if "kind" in names:
                kinds = spelled_kinds(batch.column(names.index("kind")))
                try:
                    cols["kind"] = kind_codes(kinds.to_numpy(zero_copy_only=False))
                except InputError:
                    raise self._unknown_kind(batch, kinds, path) from None
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
            # The key names the stream; the model travels as its position in `models`.
            cols["model"] = lookup(cols.pop("model"), self.models).astype(np.int16)
            del cols["stream"]
            for key, part in split_by(cols, keys):  # (with its place in the log: `_Join`)
                yield (self.streams[key // self.buckets], int(key % self.buckets)), (
                    "predictions", part if self.spill is None else spill_part(part, self.spill),
                    (path, block))

    def _unknown_kind(self, batch, kinds: pa.Array, path: str) -> InputError:
        """The error of a log whose kind column holds a word that is no prediction kind,
        naming the first such prediction by its id and time."""
        first = pc.index(pc.is_in(kinds, pa.array(PREDICTION_KINDS)), False).as_py()
        row = batch.slice(first, 1).to_pylist()[0]
        given = self.log.columns["kind"]
        kind = f"kind {row['kind']!r}" if str(row["kind"] or "").strip() else "no kind"
        time = row["time"]  # (a datetime as written, not as Python names its type)
        shown = str(time) if isinstance(time, (dt.datetime, pd.Timestamp)) else repr(time)
        return InputError(
            f"{path}: the prediction of id {row['id']!r} at {self.log.columns['time']} = "
            f"{shown} has {kind}; write each prediction's kind in column {given!r} as "
            f"{', '.join(PREDICTION_KINDS[:-1])} or {PREDICTION_KINDS[-1]} (in any case)")


def _in_label_order(element, classification: bool, batch_size: int):
    """A range of label numbers' outcome columns, from every id bucket -> `Outcome` batches of
    consecutive labels, in label order: the scoring's label blocks and in-label-order folds
    then take each batch whole."""
    (stream, model, _), parts = element
    columns = concat_rows(parts)
    columns = take_rows(columns, np.argsort(columns["n"], kind="stable"))
    for i in range(0, len(columns["n"]), batch_size):
        yield (stream, model), outcomes_of(take_rows(columns, np.arange(
            i, min(i + batch_size, len(columns["n"])))), classification)


def _key_labels(element, buckets: int):
    """A label pass's outcomes -> by id bucket, tagged with the pass (`LABELS`, or the model
    of its own pass)."""
    (stream, label_pass), outcomes = element
    cols = label_columns(outcomes)
    for b, part in split_by(cols, id_bucket(cols["key"], buckets)):
        yield (stream, int(b)), ("labels", part, label_pass)


def _key_pending(element, buckets: int):
    """A label pass's instances still waiting at the end -> by id bucket, tagged as
    `_key_labels` tags its labels.

    >>> [(key, tag, part["key"].tolist()) for key, (tag, part, _) in _key_pending(
    ...     (("s", LABELS), [7, 8], [1.0, 2.0]), buckets=1)]
    [(('s', 0), 'pending', ['7', '8'])]
    """
    (stream, label_pass), ids, arrivals = element
    cols = {"key": np.array([str(i) for i in ids], dtype=object),
            "t_arrival": np.asarray(arrivals, dtype=np.float64)}
    for b, part in split_by(cols, id_bucket(cols["key"], buckets)):
        yield (stream, int(b)), ("pending", part, label_pass)


class _Join(beam.DoFn):
    """An id bucket's labels and logged predictions -> per model, the joined outcomes as
    columns, keyed by (stream, model, range of `span` label numbers): a bucket holds labels
    from all over the stream, its ranges are gathered from every bucket (`_in_label_order`)."""

    COUNTS = "counts"

    def __init__(self, models: list[str], classification: bool, bins: int, final: bool,
                 span: int, binned_probabilities: bool = False,
                 evaluated: tuple = (-math.inf, math.inf), set_aside: tuple = ()):
        self.models, self.classification = models, classification
        self.set_aside = set_aside  # the models with a label pass of their own
        self.bins, self.final, self.span = bins, final, span
        self.binned_probabilities = binned_probabilities
        self.evaluated = evaluated  # the arrival times evaluated (--from, --to)

    @reports_errors
    def process(self, element, label_classes, predicted):
        (stream, _), parts = element
        passes: dict = {}
        waiting: dict = {}  # per label pass, its instances pending at the end
        for tag, part, label_pass in parts:
            if tag in ("labels", "pending"):
                (passes if tag == "labels" else waiting).setdefault(label_pass, []).append(part)
        # In log order (the grouping's order is the runner's): predictions at equal times are
        # then taken in the order of files by path and of rows in a file, on every runner.
        logged = sorted((part for part in parts if part[0] == "predictions"),
                        key=lambda part: part[2])
        preds = concat_rows([read_part(p) if isinstance(p, str) else p for _, p, _ in logged])
        labels_of = {label_pass: concat_rows(p) for label_pass, p in passes.items()}
        for code, model in enumerate(self.models):
            label_pass = model if model in self.set_aside else LABELS
            labels = labels_of.get(label_pass) or label_columns([])
            rows = np.flatnonzero(preds["model"] == code) if preds else None
            mine = take_rows(preds, rows) if preds else \
                {"id": np.empty(0, object), "t": np.empty(0), "y_pred": np.empty(0, object)}
            classes, aliases = None, {}
            if self.classification:
                names = [str(c) for c in label_classes.get((stream, label_pass), [])]
                values = predicted.get((stream, model), set())
                aliases = class_aliases(names, values)
                check_shared_classes(names, {aliases.get(v, v) for v in values},
                                     f"prediction log, model {model}, stream {stream}")
                classes = model_classes(names, values)
            pending = concat_rows(waiting.get(label_pass, [])) or None
            columns, counts = join_columns(labels, mine, classes, self.bins, self.final,
                                           self.binned_probabilities, self.evaluated, aliases,
                                           pending)
            for r, part in split_by(columns, columns["n"] // self.span):
                yield (stream, model, int(r)), part
            yield beam.pvalue.TaggedOutput(self.COUNTS, ((stream, model), counts))


class BackfillOutcomes(beam.PTransform):
    """Streams + a prediction log -> the outputs a replay gives (outcomes, dead letters,
    counts, classes, read counts), with the log's predictions in place of a model's.

    `label_engines` is the `EngineFactory` of the label pass (model `LABELS`).

    Parameters
    ----------
    read
        Reads the streams' instances and labels (`ReadStreams`).
    label_engines
        Builds the label pass's engine (a model that predicts nothing).
    log
        The prediction log (`PredictionLogSpec`).
    models
        The logged models to score.
    classification
        Whether the predictions are classes.
    bins
        B: the bins the re-predictions are mapped to (0: none).
    final
        Whether final predictions are scored.
    buckets
        Id buckets the join is split into: the backfill's parallelism.
    batch_size
        Events per element of the label pass.
    label_pass
        How the label pass replays a stream: `per-key` reads and drains it in time order (memory
        bounded by the instances pending), `grouped` sorts the whole stream first (any order).
    spill
        A folder for the log's rows, spilled by id bucket (`spill_part`; the run's staging
        folder), or None: they are shuffled as data.
    probabilities
        Whether the log's class probabilities (`PredictionLogSpec`) are read and scored.
    binned_probabilities
        Whether the logged re-predictions' probabilities are binned too (each outcome's
        `bins_proba`).
    set_aside
        The models whose logged run set events aside because they failed on them (the log
        records which: `PredictionLogSpec.recorded_failures`): each has a label pass of its
        own, in which it fails on them again (`label_engines` builds its engine, `read` keys
        the events for it), so its labels are numbered and its baselines kept as that run's.

    Example
    -------

    >>> import os, tempfile
    >>> from pipelines.config import RunConfig
    >>> from pipelines.job import run
    >>> stream = 's=synth:SEA{"n": 300, "seed": 1}'
    >>> out = tempfile.mkdtemp()
    >>> replayed = run(RunConfig(streams=[stream], models=["nb=gaussian-nb"], delay="20",
    ...                          out=out, repredict="none", quiet=True))
    >>> backfilled = run(RunConfig(streams=[stream], models=[], delay="20", repredict="none",
    ...                            quiet=True, predictions=os.path.join(out, "predictions.parquet"),
    ...                            out=tempfile.mkdtemp()))  # run's own log, scored again
    >>> replayed["value"].equals(backfilled["value"])
    True

    References
    ----------
    Grzenda, M., Gomes, H. M., Bifet, A. (2020). Performance measures for evolving
    predictions under delayed labelling classification. International Joint Conference on
    Neural Networks (IJCNN).
    """

    def __init__(self, read: ReadStreams, label_engines, log: PredictionLogSpec,
                 models: list[str],
                 classification: bool, bins: int, final: bool, buckets: int = 16,
                 batch_size: int = 1000, label_pass: str = "grouped",
                 spill: str | None = None, probabilities: bool = True,
                 binned_probabilities: bool = False, set_aside: tuple = ()):
        super().__init__()
        self.set_aside = tuple(set_aside)
        self.binned_probabilities = binned_probabilities and probabilities
        self.read, self.label_engines, self.log = read, label_engines, log
        self.models, self.classification = models, classification
        self.bins, self.final, self.buckets, self.batch_size = bins, final, buckets, batch_size
        self.label_pass, self.spill, self.probabilities = label_pass, spill, probabilities

    def _label_pass(self, pbegin):
        """The replay of the labels, its and the reading's dead letters, the read counts and the
        errors."""
        if self.label_pass == "per-key":
            replay = pbegin | "LabelPass" >> PerKeyReplay(
                self.read.streams, [LABELS, *self.set_aside], self.label_engines,
                self.read.delay,
                self.batch_size, self.read.time_range)
            return replay, replay[DEAD_LETTERS], replay[READ_COUNTS], replay[ERRORS]
        read = pbegin | "ReadStreams" >> self.read
        replay = read["chunks"] | "LabelPass" >> GroupedReplay(self.label_engines,
                                                               self.batch_size)
        dead = (read[DEAD_LETTERS], replay[DEAD_LETTERS]) | "AllDead" >> beam.Flatten()
        errors = (read[ERRORS], replay[ERRORS]) | "ReplayErrors" >> beam.Flatten()
        return replay, dead, read[READ_COUNTS], errors

    def expand(self, pbegin):
        replay, dead, read_counts, errors = self._label_pass(pbegin)
        streams = [s.name for s in self.read.streams]
        logged = (pbegin | "LogFiles" >> beam.Create(self.log.files(self.read.time_range))
                  | "SpreadFiles" >> beam.Reshuffle()
                  | "ReadLog" >> beam.ParDo(_KeyLogBatches(
                      self.log, streams, self.models, self.classification, self.buckets,
                      self.spill, self.probabilities))
                  .with_outputs(_KeyLogBatches.VALUES, DEAD_LETTERS, ERRORS, NOT_SCORED,
                                main="predictions"))
        predicted = (logged[_KeyLogBatches.VALUES]
                     | "PredictedClasses" >> beam.CombinePerKey(
                         lambda sets: set().union(*sets)))
        label_classes = (replay[CLASSES] | "LabelClasses" >> beam.CombinePerKey(
            lambda lists: max(lists, key=len, default=[])))
        buckets = self.buckets
        labels = replay.outcomes | "KeyLabels" >> beam.FlatMap(_key_labels, buckets)
        pending = replay[PENDING] | "KeyPending" >> beam.FlatMap(_key_pending, buckets)
        joined = ((labels, pending, logged.predictions) | "Both" >> beam.Flatten()
                  | "ByBucket" >> beam.GroupByKey()
                  | "Join" >> beam.ParDo(
                      # Ranges of 20 batches: few per key, each whole labels from all buckets.
                      _Join(self.models, self.classification, self.bins, self.final,
                            20 * self.batch_size, self.binned_probabilities,
                            (self.read.time_range.start, self.read.time_range.end),
                            self.set_aside),
                      beam.pvalue.AsDict(label_classes), beam.pvalue.AsDict(predicted))
                  .with_outputs(_Join.COUNTS, ERRORS, main="outcomes"))
        # The models each label pass numbers the labels of: its own, or every other.
        shared = [m for m in self.models if m not in self.set_aside]

        def scored_by(label_pass: str) -> list[str]:
            return shared if label_pass == LABELS else [label_pass]

        def per_model(element):
            (stream, label_pass), counts = element
            counts = {k: v for k, v in counts.items() if not k.startswith("unscored")}
            for m in scored_by(label_pass):
                yield (stream, m), counts

        def model_class_list(element, predicted):
            (stream, label_pass), classes = element
            for m in scored_by(label_pass):
                names = model_classes(classes, predicted.get((stream, m), set()))
                yield (stream, m), list(classes) + names[len(classes):]

        counts = ((replay[COUNTS] | "LabelCounts" >> beam.FlatMap(per_model),
                   joined[_Join.COUNTS]) | "AllCounts" >> beam.Flatten())
        in_order = (joined.outcomes | "GatherRange" >> beam.GroupByKey()
                    | "InLabelOrder" >> beam.FlatMap(_in_label_order, self.classification,
                                                     self.batch_size))
        return {"outcomes": in_order,
                DEAD_LETTERS: (dead | "OfLabelPasses" >> beam.FlatMap(_of_label_passes),
                               logged[DEAD_LETTERS]) | "WithLogs" >> beam.Flatten(),
                COUNTS: counts,
                CLASSES: label_classes | "ModelClasses" >> beam.FlatMap(
                    model_class_list, beam.pvalue.AsDict(predicted)),
                READ_COUNTS: read_counts,
                NOT_SCORED: logged[NOT_SCORED] | "SumNotScored" >> beam.CombinePerKey(sum),
                ERRORS: (errors, logged[ERRORS], joined[ERRORS]) | "AllErrors" >> beam.Flatten()}
