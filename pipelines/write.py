"""`WriteResults`: the evaluation's outputs into a run's staging folder — the raw summary,
`curves.parquet` (merged from parts written where the rows were made), `predictions.parquet`,
`profile.json`, `dead_letters.jsonl`, the counts and the workers' errors."""

from __future__ import annotations

import collections
import json
import math
import os
import pickle
import tempfile

import apache_beam as beam
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from pipelines.evaluation import PROFILES
from pipelines.files import (ERRORS_FILE, delete_folder, read_arrow, read_bytes, write_json,
                             write_jsonl, write_part)
from transforms.backfill.logs import (DELAYS_KEY, HOLDOUT_KEY, LOG_LEVEL_KEY, MODEL_ORDER_KEY,
                                      PRETRAIN_KEY, REPREDICT_KEY, SET_ASIDE_KEY)
from transforms.replay.engine import FAILED_ON
from transforms.streams.table_files import delete_paths, size_of
from transforms.vocabulary import (CLASSES, COUNTS, CURVE_SCHEMA, CURVES, DEAD_LETTERS, ERRORS,
                                   NOT_SCORED, PREDICTION_KINDS, PREDICTION_SCHEMA, PREDICTIONS,
                                   READ_COUNTS, SUMMARY_TEXT_COLUMNS)


def _prediction_table(element) -> pa.Table:
    """A replay's prediction columns as an Arrow table (class indices become their labels)."""
    (stream, model), classes, _, cols = element
    n = len(cols["row_id"])
    try:
        ids = pa.array(cols["ids"])
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed id types
        ids = pa.array([str(i) for i in cols["ids"]])
    ids = ids.cast(pa.string()).take(pa.array(cols["row_id"]))
    values = cols["value"]
    if classes is not None:
        labels = pa.DictionaryArray.from_arrays(
            pa.array(values, mask=values < 0), pa.array([str(c) for c in classes]))
        y_pred = labels.cast(pa.string())
    else:
        y_pred = pa.array([None if math.isnan(v) else repr(v) for v in values.tolist()],
                          pa.string())
    return pa.table({
        "stream": pa.repeat(stream, n).cast(pa.string()),
        "model": pa.repeat(model, n).cast(pa.string()),
        "id": ids,
        "kind": pa.DictionaryArray.from_arrays(pa.array(cols["kind"], pa.int8()),
                                               pa.array(PREDICTION_KINDS)).cast(pa.string()),
        "t": pa.array(cols["t"], pa.float64()), "y_pred": y_pred,
        "proba": _proba_column(cols.get("proba"), cols.get("proba_width"), classes, n)},
        schema=PREDICTION_SCHEMA)


PREDICTION_PARTS = "_prediction_parts"
SUMMARY_ROWS = "summary"  # the summary rows' tag in `WriteResults`' shuffle


def _write_prediction_part(element, folder: str) -> tuple[tuple, str]:
    """Write a replay's prediction columns where they were made, as an Arrow file (a long
    stream's re-predictions are tens of millions of rows: shuffled to one writer, the runner
    would hold them all) -> (its place in the file, its path): the key, then the place the
    replay gave it (its drain's last event, its part of the drain), so the file's row order
    depends on neither the runner nor the replay path."""
    path = write_part(_prediction_table(element), folder)
    return (*element[0], *element[2]), path


def _model_failure(dead_letter: dict):
    """A dead letter of a model's failure -> ((stream, model), [seq, kind, id's text, time]): the
    event the run set aside for that model, as the log's metadata records it."""
    if FAILED_ON in dead_letter:
        yield ((dead_letter["stream"], dead_letter["model"]),
               [dead_letter["seq"], *dead_letter[FAILED_ON]])


# The set-aside events a log records in all (a model's that would go beyond: their count): each
# is ~40 bytes of the Parquet footer, and a reader refuses a footer string over 100 MB.
RECORDED_FAILURES = 200_000


def _set_aside_record(failures: list, most: int = RECORDED_FAILURES) -> dict:
    """The log's `SET_ASIDE_KEY` record of the events each model failed on (`_model_failure`):
    {stream: {model: [[seq, kind, id's text, time], ...]}}, in (stream, model) order while at
    most `most` events in all, then a model's count.

    >>> failures = [(("s", "b"), [3, "label", "7", 9.0]), (("s", "a"), [1, "instance", "4", 1.0]),
    ...             (("s", "b"), [5, "instance", "8", 8.0])]
    >>> _set_aside_record(failures)["s"]["b"]
    [[3, 'label', '7', 9.0], [5, 'instance', '8', 8.0]]
    >>> _set_aside_record(failures, most=2)
    {'s': {'a': [[1, 'instance', '4', 1.0]], 'b': 2}}
    """
    by_key: dict = {}
    for key, event in sorted(failures):
        by_key.setdefault(key, []).append(event)
    record: dict = {}
    for (stream, model), events in by_key.items():
        most -= len(events)
        record.setdefault(stream, {})[model] = events if most >= 0 else len(events)
    return record


def _merge_prediction_parts(parts: list, folder: str, path: str, schema: pa.Schema,
                            failures: list = (), row_group: int = 1 << 17,
                            row_group_bytes: int = 1 << 26) -> None:
    """predictions.parquet from the parts, in the order of their places, in row groups of at
    least `row_group` rows or `row_group_bytes` bytes in memory (the last one less); memory
    holds about one row group. (The bytes bound the rows of many classes' probabilities:
    131 072 predictions of 300 classes are 39 million map entries.) The events each model
    failed on go into its metadata (`_set_aside_record`), so a backfill of the log sets them
    aside as the run did.

    >>> import os, tempfile
    >>> folder, parts_folder = tempfile.mkdtemp(), tempfile.mkdtemp()
    >>> schema = pa.schema([("t", pa.float64()), ("proba", pa.list_(pa.float64()))])
    >>> def part(t, width):
    ...     table = pa.table({"t": [t], "proba": [[0.5] * width]}, schema=schema)
    ...     return (("s", "m", t), write_part(table, parts_folder))
    >>> path = os.path.join(folder, "p.parquet")
    >>> parts = [part(3.0, 1), part(1.0, 300), part(2.0, 300)]
    >>> _merge_prediction_parts(parts, parts_folder, path, schema, row_group_bytes=2400)
    >>> written = pq.ParquetFile(path)
    >>> written.read()["t"].to_pylist(), written.num_row_groups  # 300 doubles: 2 400 bytes
    ([1.0, 2.0, 3.0], 3)
    """
    set_aside = _set_aside_record(failures)
    if set_aside:
        schema = schema.with_metadata({**(schema.metadata or {}),
                                       SET_ASIDE_KEY: json.dumps(set_aside).encode()})
    with FileSystems.create(path) as f, pq.ParquetWriter(f, schema) as writer:
        held: list = []
        rows = size = 0  # of the tables held
        for _, part in sorted(parts):
            table = read_arrow(part)
            held.append(table)
            rows, size = rows + table.num_rows, size + table.nbytes
            if rows >= row_group or size >= row_group_bytes:
                writer.write_table(pa.concat_tables(held))
                held.clear()
                rows = size = 0
        if held or not parts:
            writer.write_table(pa.concat_tables(held) if held else schema.empty_table())
    delete_folder(folder)


def _proba_column(proba, widths, classes, n: int) -> pa.Array:
    """Each prediction's class probabilities (a matrix over class indices, the first
    `widths` of each row named) as a map {class: probability} (null for width 0), the
    classes named as in `y_pred`."""
    kind = PREDICTION_SCHEMA.field("proba").type
    if proba is None or classes is None:
        return pa.nulls(n, kind)
    made = widths > 0
    lengths = widths.astype(np.int32)
    offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int32)])
    width = proba.shape[1]
    names = pa.array([str(c) for c in classes][:width], pa.string())
    if (lengths == width).all():  # every row names every class
        columns, items = np.tile(np.arange(width, dtype=np.int32), len(proba)), proba.ravel()
    else:  # row i names its first lengths[i] classes
        columns = np.arange(offsets[-1], dtype=np.int32) - np.repeat(offsets[:-1], lengths)
        items = proba.ravel().take(np.repeat(np.arange(0, proba.size, width), lengths)
                                   + columns)
    return pa.MapArray.from_arrays(pa.array(offsets, pa.int32()), names.take(pa.array(columns)),
                                   pa.array(items, pa.float64()), type=kind,
                                   mask=None if made.all() else pa.array(~made))


def sum_counts(dicts) -> dict:
    """The sum of count dicts, key by key.

    >>> sum_counts([{"a": 1}, {"a": 2, "b": 1}])
    {'a': 3, 'b': 1}
    """
    total: dict = {}
    for d in dicts:
        for k, v in d.items():
            total[k] = total.get(k, 0) + v
    return total


class WriteResults(beam.PTransform):
    """`EvaluateDelayed`'s outputs -> a run's files in `folder`: `_summary.parquet` (the rows as
    they came, in a fixed order; the job completes it into `summary.csv`), `curves.parquet`,
    `predictions.parquet`, `profile.json`, `dead_letters.jsonl`, `_counts.json` and the
    workers' errors (`ERRORS_FILE`).

    Parameters
    ----------
    plan
        The run's `Plan` (its models' order goes into `predictions.parquet`'s metadata).
    folder
        Where to write: a run's staging folder (`pipelines.files.new_staging`), local or on
        an object store.

    Example
    -------

    >>> import os, tempfile
    >>> import apache_beam as beam
    >>> from pipelines import EvaluateDelayed, RunConfig
    >>> from pipelines.plan import plan
    >>> from runners import make_runner
    >>> pl = plan(RunConfig(streams=['synth:SEA{"n": 200, "seed": 1}'], models=["majority"],
    ...                     delay="10", out="unused", repredict="none"))
    >>> folder = tempfile.mkdtemp()
    >>> with beam.Pipeline(runner=make_runner("direct")) as p:
    ...     _ = p | EvaluateDelayed(pl) | WriteResults(pl, folder)
    >>> sorted(os.listdir(folder))  # doctest: +NORMALIZE_WHITESPACE
    ['_counts.json', '_errors.json', '_summary.parquet', 'curves.parquet', 'dead_letters.jsonl',
     'predictions.parquet', 'profile.json']
    """

    def __init__(self, plan, folder: str):
        super().__init__()
        self.plan, self.folder = plan, folder

    def _path(self, name: str) -> str:
        return FileSystems.join(self.folder, name)

    def expand(self, results: dict):
        # Every output goes to its writer through one shuffle, keyed by the file it makes: a
        # combine per output (a stage each, ~8 transforms each) was a fifth of a small run.
        tagged = [
            results["summary"] | "SummaryBatches" >> _PackedBatches(SUMMARY_ROWS, rows_table),
            results[CURVES] | "WriteCurveParts" >> beam.Map(
                lambda table, parts: (CURVE_PARTS, _write_curve_part(table, parts)),
                self._path(CURVE_PARTS)),
            results[PROFILES] | "TagProfiles" >> beam.Map(lambda item: (PROFILES, item)),
            results[ERRORS] | "TagErrors" >> beam.Map(lambda error: (ERRORS, error)),
            results[DEAD_LETTERS] | "DeadBatches" >> _PackedBatches(DEAD_LETTERS),
            *(results[name] | f"Tag{name.title()}" >> beam.Map(
                lambda item, part: (COUNTS, (part, item)), name)
              for name in (COUNTS, CLASSES, READ_COUNTS, NOT_SCORED) if name in results)]
        if PREDICTIONS in results:
            parts = self._path(PREDICTION_PARTS)
            tagged += [
                results[PREDICTIONS] | "WritePredictionParts" >> beam.Map(
                    lambda element, parts: (PREDICTION_PARTS, (
                        "part", _write_prediction_part(element, parts))), parts),
                results[DEAD_LETTERS] | "ModelFailures" >> beam.FlatMap(
                    lambda dead: ((PREDICTION_PARTS, ("failure", f))
                                  for f in _model_failure(dead)))]
        written = [SUMMARY_ROWS, CURVE_PARTS, PROFILES, ERRORS, DEAD_LETTERS, COUNTS,
                   *([PREDICTION_PARTS] if PREDICTIONS in results else [])]
        # (each output once, so that an empty one is written too)
        tagged.append(results[COUNTS].pipeline
                      | "EveryOutput" >> beam.Create([(name, None) for name in written],
                                                       reshuffle=False))
        return (tagged | "Outputs" >> beam.Flatten() | "ByOutput" >> beam.GroupByKey()
                | "WriteOutputs" >> beam.MapTuple(self._write))

    def _write(self, name: str, values) -> None:
        """Write output `name` (`SUMMARY_ROWS`, ...) from the values tagged with it."""
        values = [v for v in values if v is not None]
        if name == SUMMARY_ROWS:
            table = pa.concat_tables(values, promote_options="permissive") if values \
                else pa.table({})
            with FileSystems.create(self._path("_summary.parquet")) as f:
                pq.write_table(in_row_order(table), f)
        elif name == CURVE_PARTS:
            _merge_curve_parts(values, self._path(CURVE_PARTS), self._path("curves.parquet"))
        elif name == PROFILES:
            write_json(self._path("profile.json"), dict(sorted(values, key=lambda item: (
                self._stream_order(item[0]), item[0]))))
        elif name == ERRORS:
            write_json(self._path(ERRORS_FILE), values)
        elif name == DEAD_LETTERS:
            write_jsonl(self._path("dead_letters.jsonl"), _unpickled(values))
        elif name == COUNTS:
            write_json(self._path("_counts.json"), self._counts(values))
        elif name == PREDICTION_PARTS:
            _merge_prediction_parts([v for kind, v in values if kind == "part"],
                                    self._path(PREDICTION_PARTS),
                                    self._path("predictions.parquet"), self._log_schema(),
                                    [v for kind, v in values if kind == "failure"])

    def _stream_order(self, stream: str) -> int:
        order = [s.name for s in self.plan.streams]
        return order.index(stream) if stream in order else len(order)

    def _key_order(self, key) -> tuple:
        """(stream, model) in the run's order of streams and models, then by name."""
        models = list(self.plan.models)
        return (self._stream_order(key[0]),
                models.index(key[1]) if key[1] in models else len(models), tuple(key))

    def _counts(self, values) -> dict:
        """`_counts.json`: per (stream, model) its counts and classes, per stream what was read,
        and a backfill's log rows not scored, from the parts the workers counted."""
        per_key: dict = {}
        classes: dict = {}
        per_stream: dict = {}
        not_scored = []
        for part, (key, value) in values:
            if part == COUNTS:
                per_key[key] = sum_counts([per_key.get(key, {}), value])
            elif part == CLASSES:  # (each worker's list of a key's classes: the longest)
                classes[key] = max(classes.get(key, []), value, key=len)
            elif part == READ_COUNTS:
                per_stream[key] = sum_counts([per_stream.get(key, {}), value])
            else:
                not_scored.append([list(key), value])
        return {"keys": [[list(k), per_key[k]] for k in sorted(per_key, key=self._key_order)],
                "classes": [[list(k), classes[k]] for k in sorted(classes, key=self._key_order)],
                "streams": {s: per_stream[s] for s in sorted(per_stream, key=lambda s: (
                    self._stream_order(s), s))},
                "not_scored": sorted(not_scored)}

    def _log_schema(self) -> pa.Schema:
        """predictions.parquet's schema, with what a backfill of it needs in its metadata: the
        models' order (so it names pairs as this run), the re-prediction policy, the log level,
        the delays, the holdout and the rows pretrained on."""
        pl = self.plan
        return PREDICTION_SCHEMA.with_metadata(
            {MODEL_ORDER_KEY: json.dumps(list(pl.models)).encode(),
             REPREDICT_KEY: str(pl.repredict).encode(),
             LOG_LEVEL_KEY: pl.config.log_predictions.encode(),
             DELAYS_KEY: json.dumps({s.name: pl.label_delay(s) for s in pl.streams}).encode(),
             **({HOLDOUT_KEY: str(pl.holdout).encode()} if pl.holdout else {}),
             **({PRETRAIN_KEY: json.dumps(pretrain).encode()} if (pretrain := {
                 s.name: s.pretrain for s in pl.streams if s.pretrain}) else {})})



class _PackedBatches(beam.PTransform):
    """A PCollection's elements as batches of `BATCH`, each packed by `pack` (pickled, or made
    an Arrow table: `rows_table`) and tagged `(name, packed)` for `WriteResults`' shuffle,
    which then encodes one object per batch, not per row (a run with 40 segments has 148 000
    summary rows).

    >>> from runners import make_runner
    >>> with beam.Pipeline(runner=make_runner("direct")) as p:
    ...     _ = (p | beam.Create(range(5)) | _PackedBatches("x")
    ...          | beam.MapTuple(lambda name, blob: print(name, sorted(pickle.loads(blob)))))
    x [0, 1, 2, 3, 4]
    """

    BATCH = 4096

    def __init__(self, name: str, pack=pickle.dumps):
        super().__init__()
        self.name, self.pack = name, pack

    def expand(self, pcoll):
        return (pcoll
                | "Batches" >> beam.BatchElements(min_batch_size=self.BATCH,
                                                  max_batch_size=self.BATCH)
                | "Packed" >> beam.Map(lambda batch, name, pack: (name, pack(batch)),
                                       self.name, self.pack))


def rows_table(rows: list[dict]) -> pa.Table:
    """Result rows (dicts) as an Arrow table, each column of the type pandas infers for its
    values (a column of no value: null) but the columns of names (`SUMMARY_TEXT_COLUMNS`),
    which are text in every batch, as the writer then joins them (`pa.concat_tables`, types
    promoted: a batch's whole bins and another's with gaps are floats, as in one frame).
    A table crosses the shuffle as a few buffers, where a million dicts took seconds to
    unpickle, and the writer holds no dict.

    >>> whole, gaps = rows_table([{"bin": 2}]), rows_table([{"bin": None}, {"bin": 3}])
    >>> pa.concat_tables([whole, gaps], promote_options="permissive")["bin"].to_pylist()
    [2.0, None, 3.0]

    A batch whose rows have no segment, some rows not even the key (pandas: NaN, a float),
    joins one with segments:

    >>> whole = rows_table([{"metric": "accuracy", "segment": None}, {"metric": "alarms"}])
    >>> sliced = rows_table([{"metric": "accuracy", "segment": "country=DE"}])
    >>> pa.concat_tables([whole, sliced], promote_options="permissive")["segment"].to_pylist()
    [None, None, 'country=DE']
    """
    table = pa.Table.from_pandas(pd.DataFrame(rows).infer_objects(), preserve_index=False)
    for i, name in enumerate(table.column_names):
        if name in SUMMARY_TEXT_COLUMNS:
            table = table.set_column(i, name, table[name].cast(pa.large_string()))
    return table


def _unpickled(blobs) -> list:
    """The elements of `_PackedBatches`' pickled blobs, in one list."""
    return [element for blob in blobs for element in pickle.loads(blob)]


def located(pl, path: str) -> bytes:
    """The dead letters written at `path` (JSON Lines), those of the replay (a label whose
    instance is not pending, a refused instance, a model error: they carry their event's
    place in the stream, `seq`) with the file and row of their event, found by reading their
    stream again (only a file stream with such dead letters is read); rewritten in the fixed
    order of `write_jsonl`, without `seq` and `FAILED_ON`. Returns the file's bytes.

    Example
    -------

    >>> import os, tempfile
    >>> from pipelines.config import RunConfig
    >>> from pipelines.plan import plan
    >>> folder = tempfile.mkdtemp()
    >>> log = os.path.join(folder, "log.csv")
    >>> with open(log, "w") as f:
    ...     _ = f.write("id,time,kind,x,label\\na,0,instance,1.0,\\na,1,label,,p\\n"
    ...                 "b,2,label,,q\\n")
    >>> pl = plan(RunConfig(streams=[log], models=["no-change"], out=folder))
    >>> path = os.path.join(folder, "dead.jsonl")
    >>> write_jsonl(path, [{"stream": "log", "file": None, "row": None, "field": "id",
    ...                     "reason": "label for id 'b', which is not pending", "seq": 2}])
    >>> dead = json.loads(located(pl, path))
    >>> os.path.basename(dead["file"]), dead["row"], "seq" in dead
    ('log.csv', 3, False)
    """
    rows = [json.loads(line) for line in read_bytes(path).splitlines()]
    if not any("seq" in r for r in rows):
        return read_bytes(path)
    wanted: dict = {}
    for r in rows:
        if r.get("seq") is not None and r.get("file") is None:
            wanted.setdefault(r["stream"], set()).add(r["seq"])
    where = {s.name: s.locate(pl.delay, wanted[s.name]) for s in pl.streams
             if s.name in wanted and s.kind == "file"}
    out = []
    for r in rows:
        seq = r.pop("seq", None)
        r.pop(FAILED_ON, None)
        found = where.get(r["stream"], {}).get(seq)
        out.append({**r, "file": found[0], "row": found[1]} if found else r)
    write_jsonl(path, out)
    return read_bytes(path)


def in_row_order(table: pa.Table) -> pa.Table:
    """Result rows in a fixed order, whatever order the runner delivered them in: stream,
    model, category, window, metric, segment, class, predicted class, bin, α, labels, t (a missing
    class first; a missing bin, α or label count sorts as 0, a missing t first).

    >>> t = pa.table({"stream": ["s", "s"], "model": ["m", "m"], "category": ["c", "c"],
    ...               "window": ["w", "w"], "metric": ["x", "x"], "bin": [None, 2],
    ...               "labels": [3, 1]})
    >>> in_row_order(t)["labels"].to_pylist()
    [3, 1]
    """
    return table.take(_row_order(table)) if table.num_rows else table


def _row_order(table: pa.Table) -> pa.Array:
    """The indices that put `table`'s rows `in_row_order`."""
    keys = {c: table[c] for c in ("stream", "model", "category", "window", "metric")}
    for c in ("segment", "class", "predicted"):
        if c in table.column_names:
            keys[c] = pc.fill_null(pc.cast(table[c], pa.large_string()), "")
    for c, missing in (("bin", 0.0), ("alpha", 0.0), ("labels", 0.0), ("t", -math.inf)):
        if c not in table.column_names:
            continue
        values = pc.cast(table[c], pa.float64())
        keys[c] = pc.fill_null(pc.if_else(pc.is_nan(values), missing, values), missing)
    return pc.sort_indices(pa.table(keys), sort_keys=[(c, "ascending") for c in keys])


CURVE_PARTS = "_curve_parts"


def _write_curve_part(table: pa.Table, folder: str) -> tuple[list, str]:
    """Write a table of curve rows where it was made (curves of a long stream are many rows;
    shuffled to one worker they would be held several times over) -> (its (stream, model)
    pairs, its path). A retried bundle writes a new part; only the parts listed by the
    committed outputs are read, and the folder goes when the file is made."""
    path = write_part(table, folder)
    keys = pa.table({"stream": table["stream"], "model": table["model"]})
    return sorted(set(zip(*keys.group_by(["stream", "model"]).aggregate([]).to_pydict()
                          .values()))), path


def _merge_curve_parts(parts: list, folder: str, path: str, row_group: int = 16_384) -> None:
    """curves.parquet from the parts, in `in_row_order`, one (stream, model) `SERIES_GROUP` at
    a time: each key's parts are read once and spilled by group to local files, then each
    group is sorted and written in row groups of `row_group` rows. Memory holds one part and
    one group's rows, not a key's whole curves (the parts come in curve-point order, the file
    wants each series together)."""
    by_key: dict = {}
    for keys, part in parts:
        for key in keys:
            by_key.setdefault(key, []).append((part, len(keys) > 1))
    with FileSystems.create(path) as f, pq.ParquetWriter(f, CURVE_SCHEMA) as writer, \
            tempfile.TemporaryDirectory(prefix="curves-") as spill:
        held: list = []  # groups in file order, written together once they fill a row group

        def write_held():
            # Sorting consecutive groups together orders them as sorting each would: the
            # groups are in the order `in_row_order` gives their keys.
            table = pa.concat_tables(held)
            order = _row_order(table)
            for start in range(0, len(order), row_group):
                writer.write_table(table.take(order[start:start + row_group]))
            held.clear()
            pa.default_memory_pool().release_unused()  # mimalloc would keep the pages

        for (stream, model), paths in sorted(by_key.items()):
            if sum(size_of(part) for part, _ in paths) <= IN_MEMORY_KEY:  # (no spill files)
                held.append(_key_rows(paths, stream, model))
                if sum(t.num_rows for t in held) >= row_group:
                    write_held()
                continue
            groups = _spill_by_group(paths, stream, model, spill)
            for group in sorted(groups, key=lambda g: tuple(v or "" for v in g)):
                held.append(read_spilled(groups[group]))
                if sum(t.num_rows for t in held) >= row_group:
                    write_held()
        if held:
            write_held()
    delete_folder(folder)  # every part, also those of a failed attempt


def keep_segments(path: str, kept: set, row_group: int = 16_384) -> None:
    """Rewrite the curves file at `path` without the rows of segments not in `kept` ((stream,
    segment) pairs; a whole stream's rows always stay), a row group at a time.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "curves.parquet")
    >>> pq.write_table(pa.Table.from_pylist([{"stream": "s", "segment": g, "value": 1.0}
    ...                                      for g in (None, "c=DE", "c=LU")]), path)
    >>> keep_segments(path, {("s", "c=DE")})
    >>> pq.read_table(path)["segment"].to_pylist()
    [None, 'c=DE']
    """
    temporary = path + ".kept"
    with FileSystems.open(path) as f:
        source = pq.ParquetFile(pa.BufferReader(f.read()))
    with FileSystems.create(temporary) as f, pq.ParquetWriter(f, source.schema_arrow) as writer:
        for batch in source.iter_batches(row_group):
            table = pa.Table.from_batches([batch])
            keep = [g is None or (s, g) in kept for s, g in
                    zip(table["stream"].to_pylist(), table["segment"].to_pylist())]
            writer.write_table(table.filter(pa.array(keep)))
    delete_paths([path])
    FileSystems.rename([temporary], [path])


# A key's curve rows are merged a group at a time: the columns after (stream, model) that
# `in_row_order` sorts by first, and the segment (None: the whole stream).
SERIES_GROUP = ("category", "window", "metric", "segment")


def _open_spills() -> int:
    """Spill files open at once: a run with thousands of --segment slices has a group per slice
    and measure, more than a process may open; half of what it may (64 to 4096)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):  # (no such limit where resource is missing)
        return 64
    return 4096 if soft == resource.RLIM_INFINITY else max(64, min(4096, soft // 2))


OPEN_SPILLS = _open_spills()


class _GroupSpill:
    """One local file per `SERIES_GROUP`, at most `limit` of them open: a file closed to make
    room is appended to later as a further Arrow stream (`read_spilled` reads them all). The
    one closed is the last written to: each part visits the groups in the same order, so the
    others stay open for the next part (closing the oldest would reopen every file each time)."""

    def __init__(self, folder: str, limit: int | None = None):
        self.folder, self.limit = folder, limit or OPEN_SPILLS
        self.files: dict = {}
        self.open: collections.OrderedDict = collections.OrderedDict()  # group -> (sink, writer)

    def write(self, group: tuple, table: pa.Table) -> None:
        if group in self.open:
            self.open.move_to_end(group)
        else:
            if len(self.open) >= self.limit:
                self._close(next(reversed(self.open)))
            mode = "ab" if group in self.files else "wb"  # (the folder serves key after key)
            path = self.files.setdefault(group, os.path.join(self.folder,
                                                             f"{len(self.files)}.arrows"))
            sink = pa.OSFile(path, mode)
            self.open[group] = (sink, pa.ipc.new_stream(sink, CURVE_SCHEMA))
        self.open[group][1].write_table(table)

    def _close(self, group: tuple) -> None:
        sink, writer = self.open.pop(group)
        writer.close()
        sink.close()

    def close(self) -> None:
        for group in list(self.open):
            self._close(group)


def read_spilled(path: str) -> pa.Table:
    """Every Arrow stream written one after the other to the file at `path`, as one table.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "g.arrows")
    >>> spill = _GroupSpill(os.path.dirname(path), limit=1)
    >>> rows = pa.Table.from_pylist([{"stream": "s"}], CURVE_SCHEMA)
    >>> for group in ("a", "b", "a"):  # "a" is closed to open "b", then appended to
    ...     spill.write((group,), rows)
    >>> spill.close()
    >>> read_spilled(spill.files[("a",)]).num_rows
    2
    """
    tables = []
    with pa.OSFile(path) as source:
        while source.tell() < source.size():
            tables.append(pa.ipc.open_stream(source).read_all())
    return pa.concat_tables(tables)


# A key whose curve parts take at most this many bytes is merged in memory; a larger one is
# spilled group by group (`_spill_by_group`), so memory holds one part and one group.
IN_MEMORY_KEY = 64 << 20


def _part_rows(part: str, mixed: bool, stream: str, model: str) -> pa.Table:
    """A key's rows in one part (a part `mixed` with other keys' rows is filtered)."""
    table = read_arrow(part)
    if mixed:
        table = table.filter(pc.and_(pc.equal(table["stream"], stream),
                                     pc.equal(table["model"], model)))
    return table


def _key_rows(paths: list, stream: str, model: str) -> pa.Table:
    """A key's rows from all its parts, read at once."""
    return pa.concat_tables([_part_rows(part, mixed, stream, model) for part, mixed in paths])


def _spill_by_group(paths: list, stream: str, model: str, spill: str) -> dict:
    """A key's rows from its parts, one part at a time, appended to one local Arrow file per
    `SERIES_GROUP` -> {group: file}."""
    groups = _GroupSpill(spill)
    try:
        for part, mixed in paths:
            table = _part_rows(part, mixed, stream, model)
            # Sorted by group, each group is a slice (one pass, not a filter per group).
            keys = pa.table({c: table[c] for c in SERIES_GROUP})
            order = pc.sort_indices(keys, sort_keys=[(c, "ascending") for c in SERIES_GROUP])
            table, keys = table.take(order), keys.take(order)
            start = 0
            for run in keys.group_by(list(SERIES_GROUP), use_threads=False).aggregate(
                    [([], "count_all")]).to_pylist():
                groups.write(tuple(run[c] for c in SERIES_GROUP),
                             table.slice(start, run["count_all"]))
                start += run["count_all"]
    finally:
        groups.close()
    return groups.files
