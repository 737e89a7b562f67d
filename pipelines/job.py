"""The `run` job: streams × models -> delayed-prequential evaluation, as one Beam pipeline.

    read -> validate (dead letters) -> label times -> key by (stream, model) -> ordered replay
         -> score (initial, final; cumulative; curves every N labels) -> write

The pipeline writes into a staging folder inside the output directory; when it has finished,
the driver completes the summary, writes the manifest and moves the files into place, so a
re-run replaces a previous run's files only once it has succeeded.
"""

from __future__ import annotations

import datetime as dt
import functools
import io
import itertools
import json
import math
import os
import platform
import sys
import tempfile
import uuid
from dataclasses import dataclass
from importlib import metadata

import apache_beam as beam
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from apache_beam.io.filesystem import BeamIOError
from apache_beam.io.filesystems import FileSystems

from metrics import CLASSIFICATION_METRICS, NOT_PRIORITISED, REGRESSION_METRICS
from pipelines.config import LOGGED, ConfigError, RunConfig
from pipelines.results import drift_delay_table, format_profiles, format_table, previous_outputs
from runners import check_runner, runner_session
from transforms.backfill.join import (LABELS, LOG_COUNTERS, MODEL_ORDER_KEY, BackfillOutcomes,
                                      LabelsOnly, PredictionLogSpec)
from transforms.errors import DelayedEvalError, InputError, OutputError
from transforms.models.specs import ModelSpec, Step
from transforms.replay.engine import COUNTERS
from transforms.replay.keyed import EngineFactory, GroupedReplay, StatefulReplay
from transforms.replay.per_key import PerKeyReplay, in_time_order
from transforms.replay.progress import job_counters
from transforms.replay.repredict import RepredictPolicy
from transforms.scoring.comparison import CompareModels, pair_name
from transforms.scoring.drift import DetectDrift, DriftPlan
from transforms.scoring.in_stream import StreamScores
from transforms.scoring.outcomes import ScoreOutcomes
from transforms.scoring.plan import ScoringPlan, time_window
from transforms.scoring.profile import ProfileStreams
from transforms.streams.delays import DelaySpec
from transforms.streams.read import ReadStreams, TimeRange
from transforms.streams.sources import StreamSpec
from transforms.vocabulary import (BINNED, CLASSES, COMPARISON, COUNTS, CURVE_SCHEMA, CURVES,
                                   DEAD_LETTERS, DRIFT, ERRORS, FINAL, INITIAL, INTERMEDIATE,
                                   PREDICTION_KINDS, PREDICTION_SCHEMA, PREDICTIONS, READ_COUNTS,
                                   SUMMARY, SUMMARY_COLUMNS)


@dataclass
class Plan:
    """A checked configuration: parsed specs, each model's task, each stream's classes."""

    config: RunConfig
    streams: list[StreamSpec]
    models: dict[str, ModelSpec]
    tasks: dict[str, str]
    classes: dict[str, list | None]
    delay: DelaySpec
    repredict: RepredictPolicy | str  # backfill: how the logged predictions were made
    scoring: ScoringPlan
    drift: DriftPlan | None
    log: PredictionLogSpec | None = None  # backfill: the prediction log scored
    time_range: TimeRange = TimeRange()

    @property
    def backfill(self) -> bool:
        return self.log is not None

    @functools.cached_property
    def replay(self) -> str:
        """`auto`: per-stream when every stream is in time order (memory bounded by what is
        pending, scores and comparisons made as it drains), else grouped, which sorts each
        stream and so takes files in any order. Generated streams are in time order; files
        are read once here to find out, unless their times alone tell (`in_time_order`)."""
        if self.config.replay != "auto":
            return self.config.replay
        ordered = all(s.kind in ("synth", "dataset") or in_time_order(
            s, self.delay, self.time_range, self.config.chunk_size) for s in self.streams)
        return "per-stream" if ordered else "grouped"


def plan(config: RunConfig) -> Plan:
    """Parse and check everything that can be checked before a pipeline starts."""
    check_runner(config.runner)
    try:
        delay = DelaySpec.parse(config.delay)
        streams = [StreamSpec.parse(s) for s in config.streams]
        for s in streams:
            s.check()
            s.delay(delay)
        if config.delay != "0" and streams and all(s.label_times_given() for s in streams):
            raise ConfigError(f"--delay {config.delay} means nothing here: every stream's label "
                              f"times come from its input (a label table, an event log or "
                              f"delayed ARFF); leave it out")
        log, models = None, {}
        if config.predictions is not None:  # backfill: model names, no specs
            log = PredictionLogSpec.parse(config.predictions)
            names = _logged_models(log, config.models)
            if not names:
                raise ConfigError(f"prediction log {log.pattern}: no model names in it")
            for name in names:
                if name in models:
                    raise ConfigError(f"model {name!r} is given twice")
                models[name] = None
            tasks = dict.fromkeys(models, config.task)
            repredict = config.repredict if config.repredict == LOGGED else \
                RepredictPolicy.parse(config.repredict).with_bins(config.bins)
        else:
            for text in config.models:
                spec = ModelSpec.parse(text)
                if spec.name in models:
                    raise ConfigError(f"two models are named {spec.name!r}; name them with "
                                      f"NAME=SPEC")
                models[spec.name] = spec
            tasks = {name: spec.task() for name, spec in models.items()}
            repredict = RepredictPolicy.parse(config.repredict).with_bins(config.bins)
        classes = {s.name: s.declared_classes() for s in streams}
        _check_tasks(streams, tasks)
        time_range = TimeRange.parse(config.start, config.end)
    except DelayedEvalError:
        raise
    except ValueError as e:
        raise ConfigError(str(e)) from None
    names = [s.name for s in streams]
    if len(set(names)) != len(names):
        raise ConfigError(f"stream names must be unique, got {names}; name them with NAME=SOURCE")
    try:
        time_windows = tuple(time_window(t) for t in config.time_windows)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    scoring = ScoringPlan(final=config.final,
                          bins=0 if str(repredict) == "none" else config.bins,
                          alphas=tuple(config.alphas), curve_every=config.curve_every,
                          windows=tuple(config.windows), fadings=tuple(config.fadings),
                          time_windows=time_windows)
    drift = None if config.drift_on == "none" else DriftPlan(
        config.drift_on, config.ph_delta, config.ph_threshold, config.ph_min_instances,
        tuple(config.ph_alphas), {s.name: s.drift_points() for s in streams if s.drift_points()})
    return Plan(config, streams, models, tasks, classes, delay, repredict, scoring, drift, log,
                time_range)


# -- files: through Beam's FileSystems, so OUT may be gs://, s3:// or a shared mount, and
# what workers write on a cluster lands where the driver reads it ------------------------------
ERRORS_FILE = "_errors.json"  # the workers' errors (`transforms.errors`), read after the run


def _write_bytes(path: str, data: bytes) -> None:
    with FileSystems.create(path) as f:
        f.write(data)


def _read_bytes(path: str) -> bytes:
    with FileSystems.open(path) as f:
        return f.read()


def _write_json(path: str, value) -> None:
    _write_bytes(path, json.dumps(value, indent=1, default=str, allow_nan=True).encode())


def _write_parquet(path: str, frame: pd.DataFrame) -> None:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    _write_bytes(path, buffer.getvalue())


def _staged_names(staging: str) -> dict:
    """{file name: path} of what a run has written into `staging`."""
    return {FileSystems.split(m.path)[1]: m.path
            for m in FileSystems.match([FileSystems.join(staging, "*")])[0].metadata_list}


def _publish(staging: str, out: str) -> None:
    """Move a finished run's files from `staging` into `out`, each replacing its old self in
    one rename. The files an earlier run listed in its manifest (`outputs`) that this run did
    not make are removed, so `out` never mixes two runs' results; anything else in `out` (a
    user's own notes or figures) is left alone."""
    made = _staged_names(staging)
    stale = [FileSystems.join(out, n) for n in previous_outputs(out) if n not in made]
    FileSystems.delete([p for p in stale if FileSystems.exists(p)])
    names = sorted(made)
    FileSystems.rename([made[n] for n in names], [FileSystems.join(out, n) for n in names])


def _prediction_table(element) -> pa.Table:
    """A replay's prediction columns as an Arrow table (class indices become their labels)."""
    (stream, model), classes, cols = element
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
        "t": pa.array(cols["t"], pa.float64()), "y_pred": y_pred}, schema=PREDICTION_SCHEMA)


def _sum_counts(dicts) -> dict:
    total: dict = {}
    for d in dicts:
        for k, v in d.items():
            total[k] = total.get(k, 0) + v
    return total


def _outcomes(p: beam.Pipeline, pl: Plan) -> dict:
    """The label outcomes and their bookkeeping (dead letters, counts, classes, read counts;
    and the replay's predictions): from replaying models, or from a prediction log."""
    cfg = pl.config
    reader = ReadStreams(pl.streams, [LABELS] if pl.backfill else list(pl.models), pl.delay,
                         cfg.chunk_size, pl.time_range)
    progress = None if cfg.quiet else cfg.progress_every
    if pl.backfill:
        label_engines = EngineFactory(
            {LABELS: ModelSpec(LABELS, (Step(f"{LabelsOnly.__module__}.LabelsOnly"),))},
            pl.classes, {LABELS: cfg.task}, final=False, log_predictions="none",
            progress=progress, baselines=pl.scoring.baseline_views)
        return p | "Backfill" >> BackfillOutcomes(
            reader, label_engines, pl.log, list(pl.models), cfg.task == "classification",
            pl.scoring.bins, cfg.final, cfg.buckets, cfg.chunk_size)
    engines = EngineFactory(pl.models, pl.classes, pl.tasks, cfg.final, pl.repredict,
                            pl.scoring.bins, cfg.log_predictions, progress,
                            pl.scoring.baseline_views, cfg.on_model_error)
    if pl.replay in ("per-key", "per-stream"):
        scores = StreamScores(pl.tasks, pl.scoring) if pl.replay == "per-stream" else None
        replay = p | "Replay" >> PerKeyReplay(pl.streams, list(pl.models), engines, pl.delay,
                                              cfg.chunk_size, pl.time_range, scores)
        return {"outcomes": replay.outcomes, **{tag: replay[tag] for tag in (
            PREDICTIONS, DEAD_LETTERS, COUNTS, CLASSES, READ_COUNTS, ERRORS)},
            **({SUMMARY: replay[SUMMARY], CURVES: replay[CURVES]} if scores else {})}
    read = p | "Read" >> reader
    if pl.replay == "grouped":
        replay = read["chunks"] | "Replay" >> GroupedReplay(engines, cfg.chunk_size)
    else:
        replay = read["chunks"] | "Replay" >> StatefulReplay(engines, cfg.chunk_size,
                                                             cfg.timer_bucket)
    return {"outcomes": replay.outcomes, PREDICTIONS: replay[PREDICTIONS],
            DEAD_LETTERS: (read[DEAD_LETTERS], replay[DEAD_LETTERS])
            | "AllDeadLetters" >> beam.Flatten(),
            COUNTS: replay[COUNTS], CLASSES: replay[CLASSES], READ_COUNTS: read[READ_COUNTS],
            ERRORS: (read[ERRORS], replay[ERRORS]) | "AllErrors" >> beam.Flatten()}


def build(p: beam.Pipeline, pl: Plan, staging: str) -> None:
    """Add the whole evaluation to pipeline `p`, writing into `staging`."""
    source = _outcomes(p, pl)
    outcomes = source["outcomes"]
    if SUMMARY in source:  # scored (and compared) by the replay as it drained
        summaries, curves = [source[SUMMARY]], [source[CURVES]]
    else:
        scored = outcomes | "Score" >> ScoreOutcomes(pl.tasks, pl.scoring)
        summaries, curves = [scored.summary], [scored[CURVES]]
        if len(pl.models) > 1:
            compared = outcomes | "Compare" >> CompareModels(pl.tasks, pl.scoring)
            summaries.append(compared.summary)
            curves.append(compared[CURVES])

    def write_summary(rows):
        table = pa.Table.from_pandas(pd.DataFrame(rows).infer_objects(), preserve_index=False)
        with FileSystems.create(FileSystems.join(staging, "_summary.parquet")) as f:
            pq.write_table(in_row_order(table), f)

    if pl.drift is not None:
        summaries.append(outcomes | "Drift" >> DetectDrift(pl.tasks, pl.drift))
    summary = summaries | "AllSummaries" >> beam.Flatten()
    classifiers = [m for m in pl.models if pl.tasks[m] == "classification"]
    first_classifier = {s.name: classifiers[0] for s in pl.streams} if classifiers else {}
    (outcomes | "StreamProfiles" >> ProfileStreams(first_classifier)
     | "ProfileList" >> beam.combiners.ToList()
     | "WriteProfiles" >> beam.Map(lambda items: _write_json(
         FileSystems.join(staging, "profile.json"), dict(sorted(items)))))
    (summary | "SummaryList" >> beam.combiners.ToList()
     | "WriteSummary" >> beam.Map(write_summary))
    parts = FileSystems.join(staging, CURVE_PARTS)
    ([c | f"WriteCurveParts{i}" >> beam.Map(write_curve_part, parts)
      for i, c in enumerate(curves)]
     | "AllCurveParts" >> beam.Flatten()
     | "CurvePartList" >> beam.combiners.ToList()
     | "WriteCurves" >> beam.Map(merge_curve_parts, parts,
                                 FileSystems.join(staging, "curves.parquet")))
    if PREDICTIONS in source:
        # The models' order goes with the log, so a backfill of it names pairs as this run.
        schema = PREDICTION_SCHEMA.with_metadata(
            {MODEL_ORDER_KEY: json.dumps(list(pl.models)).encode()})
        (source[PREDICTIONS] | "PredictionTables" >> beam.Map(_prediction_table)
         | "WritePredictions" >> beam.io.WriteToParquetBatched(
             FileSystems.join(staging, "predictions.parquet"), schema=schema,
             num_shards=1, shard_name_template=""))
    (source[ERRORS] | "ErrorList" >> beam.combiners.ToList()
     | "WriteErrors" >> beam.Map(lambda rows: _write_json(FileSystems.join(staging, ERRORS_FILE),
                                                          rows)))
    (source[DEAD_LETTERS] | "DeadList" >> beam.combiners.ToList()
     | "WriteDead" >> beam.Map(lambda rows: _write_jsonl(FileSystems.join(staging,
                                                                      "dead_letters.jsonl"), rows)))
    key_counts = (source[COUNTS] | "SumCounts" >> beam.CombinePerKey(_sum_counts))
    classes = (source[CLASSES] | "Classes" >> beam.CombinePerKey(
        lambda lists: max(lists, key=len, default=[])))
    read_counts = source[READ_COUNTS] | "SumReadCounts" >> beam.CombinePerKey(_sum_counts)

    def write_counts(per_key, per_key_classes, per_stream):
        _write_json(FileSystems.join(staging, "_counts.json"), {
            "keys": [[list(k), v] for k, v in per_key],
            "classes": [[list(k), v] for k, v in per_key_classes],
            "streams": dict(per_stream)})

    (p | "CountsTrigger" >> beam.Create([None])
     | "WriteCounts" >> beam.Map(
         lambda _, a, b, c: write_counts(a, b, c),
         beam.pvalue.AsList(key_counts), beam.pvalue.AsList(classes),
         beam.pvalue.AsList(read_counts)))


def in_row_order(table: pa.Table) -> pa.Table:
    """Result rows in a fixed order, whatever order the runner delivered them in: stream,
    model, category, window, metric, bin, α, labels, t (a missing bin, α or label count sorts
    as 0, a missing t first).

    >>> t = pa.table({"stream": ["s", "s"], "model": ["m", "m"], "category": ["c", "c"],
    ...               "window": ["w", "w"], "metric": ["x", "x"], "bin": [None, 2],
    ...               "labels": [3, 1]})
    >>> in_row_order(t)["labels"].to_pylist()
    [3, 1]
    """
    return table.take(row_order(table)) if table.num_rows else table


def row_order(table: pa.Table) -> pa.Array:
    """The indices that put `table`'s rows `in_row_order`."""
    keys = {c: table[c] for c in ("stream", "model", "category", "window", "metric")}
    for c, missing in (("bin", 0.0), ("alpha", 0.0), ("labels", 0.0), ("t", -math.inf)):
        if c not in table.column_names:
            continue
        values = pc.cast(table[c], pa.float64())
        keys[c] = pc.fill_null(pc.if_else(pc.is_nan(values), missing, values), missing)
    return pc.sort_indices(pa.table(keys), sort_keys=[(c, "ascending") for c in keys])


CURVE_PARTS = "_curve_parts"


def write_curve_part(table: pa.Table, folder: str) -> tuple[list, str]:
    """Write a table of curve rows where it was made (curves of a long stream are many rows;
    shuffled to one worker they would be held several times over) -> (its (stream, model)
    pairs, its path). A retried bundle writes a new part; only the parts listed by the
    committed outputs are read, and the folder goes when the file is made."""
    path = FileSystems.join(folder, f"{uuid.uuid4().hex}.arrow")
    with FileSystems.create(path) as f, pa.ipc.new_file(f, table.schema) as writer:
        writer.write_table(table)
    keys = pa.table({"stream": table["stream"], "model": table["model"]})
    return sorted(set(zip(*keys.group_by(["stream", "model"]).aggregate([]).to_pydict()
                          .values()))), path


def merge_curve_parts(parts: list, folder: str, path: str, row_group: int = 16_384) -> None:
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
        for (stream, model), paths in sorted(by_key.items()):
            groups = _spill_by_group(paths, stream, model, spill)
            for group in sorted(groups):
                with pa.OSFile(groups[group]) as source:
                    table = pa.ipc.open_stream(source).read_all()
                order = row_order(table)
                for start in range(0, len(order), row_group):
                    writer.write_table(table.take(order[start:start + row_group]))
                    pa.default_memory_pool().release_unused()  # mimalloc would keep the pages
    # Every part, also those of a failed attempt (object stores have no folder to delete).
    FileSystems.delete([m.path for m in FileSystems.match(
        [FileSystems.join(folder, "*")])[0].metadata_list])
    if FileSystems.exists(folder):
        FileSystems.delete([folder])


# A key's curve rows are merged a group at a time: the columns after (stream, model) that
# `in_row_order` sorts by first.
SERIES_GROUP = ("category", "window", "metric")


def _spill_by_group(paths: list, stream: str, model: str, spill: str) -> dict:
    """A key's rows from its parts, one part at a time, appended to one local Arrow stream file
    per `SERIES_GROUP` -> {group: file}."""
    writers: dict = {}
    files: dict = {}
    sinks: list = []
    try:
        for part, mixed in paths:
            table = _read_arrow(part)
            if mixed:
                table = table.filter(pc.and_(pc.equal(table["stream"], stream),
                                             pc.equal(table["model"], model)))
            for group in table.group_by(SERIES_GROUP).aggregate([]).to_pylist():
                group = tuple(group[c] for c in SERIES_GROUP)
                if group not in writers:
                    files[group] = os.path.join(spill, f"{len(files)}.arrows")
                    sinks.append(pa.OSFile(files[group], "wb"))
                    writers[group] = pa.ipc.new_stream(sinks[-1], CURVE_SCHEMA)
                writers[group].write_table(table.filter(functools.reduce(pc.and_, (
                    pc.equal(table[c], v) for c, v in zip(SERIES_GROUP, group)))))
    finally:
        for w in writers.values():
            w.close()
        for sink in sinks:
            sink.close()
    return files


def _read_arrow(path: str) -> pa.Table:
    with FileSystems.open(path) as f:
        return pa.ipc.open_file(pa.BufferReader(f.read())).read_all()


def _write_jsonl(path: str, rows) -> None:
    rows = sorted(rows, key=lambda r: (str(r.get("stream")), str(r.get("model")),
                                       str(r.get("file")), r.get("row") or 0, r["reason"]))
    _write_bytes(path, "".join(json.dumps(r, default=str) + "\n" for r in rows).encode())


# -- after the pipeline ------------------------------------------------------------------------
def _complete_summary(pl: Plan, raw: pd.DataFrame) -> pd.DataFrame:
    """Every expected (stream, model, category, bin, alpha, window, metric) gets a row, NaN with
    n=0 if nothing was scored, in a fixed order: streams and models as configured; then each
    key's drift rows (as many as there were alarms) and each stream's comparisons."""
    have = {} if raw.empty else {
        (r.stream, r.model, r.category, _opt(r.bin), _opt(r.alpha), r.window, r.metric): r
        for r in raw.itertuples()}
    sc = pl.scoring
    slots = [(c, None, None) for c in (INITIAL, FINAL)[:1 + sc.final]]
    if sc.bins:
        slots += [(BINNED, b, None) for b in range(sc.bins + 2)]
        slots += [(INTERMEDIATE, None, a) for a in sc.alphas]
    rows = []
    for s in pl.streams:
        protocol = f"delayed-prequential delay={s.delay(pl.delay)} repredict={pl.repredict}"
        for m in pl.models:
            metrics = CLASSIFICATION_METRICS if pl.tasks[m] == "classification" \
                else REGRESSION_METRICS
            for window, (category, b, alpha), metric in itertools.product(
                    sc.views, slots, metrics):
                if category == INTERMEDIATE and metric in NOT_PRIORITISED:
                    continue
                r = have.get((s.name, m, category, b, alpha, window, metric))
                rows.append({
                    "run_id": pl.config.run_id, "stream": s.name, "model": m,
                    "protocol": protocol, "category": category, "bin": b, "alpha": alpha,
                    "window": window, "metric": metric,
                    "value": math.nan if r is None else r.value,
                    "n": 0 if r is None else int(r.n), "t": None if r is None else r.t})
            if pl.drift is not None and not raw.empty:
                d = pl.drift
                drift_protocol = (f"{protocol} page-hinkley on={d.on} delta={d.delta:g} "
                                  f"threshold={d.threshold:g} min_instances={d.min_instances}")
                extra = raw[(raw["stream"] == s.name) & (raw["model"] == m)
                            & (raw["category"] == DRIFT)]
                rows += [{**r, "run_id": pl.config.run_id, "protocol": drift_protocol,
                          "bin": None, "alpha": None} for r in extra.to_dict("records")]
        if not raw.empty:  # comparisons, pairs in configuration order
            order = {pair_name(a, b): i for i, (a, b) in
                     enumerate(itertools.combinations(pl.models, 2))}
            pairs = raw[(raw["stream"] == s.name) & (raw["category"] == COMPARISON)]
            pairs = sorted(pairs.to_dict("records"), key=lambda r: order[r["model"]])
            rows += [{**r, "run_id": pl.config.run_id, "protocol": protocol, "alpha": None}
                     for r in pairs]
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS).astype({"bin": "Int64"})


def _logged_models(log: PredictionLogSpec, models: list) -> list:
    """The models a backfill scores: those named (each must be in the log, when the log names
    models), else every model in the log."""
    try:
        logged = log.model_names()
    except InputError:  # no model column: the log is the one named model's
        if not models:
            raise
        return list(models)
    missing = [m for m in models if m not in logged]
    if missing:
        raise ConfigError(f"prediction log {log.pattern}: no predictions of model(s) "
                          f"{missing}; the models in it are {logged}")
    return list(models) or logged


def _check_tasks(streams: list, tasks: dict) -> None:
    """A regressor on class labels, or a classifier on numbers with fractions, is refused
    before any pipeline runs (the stream's first labels tell)."""
    for s in streams:
        kind = s.label_kind()
        for model, task in tasks.items():
            if kind == "classes" and task == "regression":
                raise ConfigError(f"model {model} is a regressor, but stream {s.name} has class "
                                  f"labels; use a classifier (or --task classification to "
                                  f"backfill class predictions)")
            if kind == "numbers" and task == "classification":
                raise ConfigError(f"model {model} is a classifier, but stream {s.name}'s labels "
                                  f"are numbers with fractions; use a regressor (or --task "
                                  f"regression to backfill numeric predictions)")


def _reason(error: BaseException) -> str:
    """An I/O error's cause in a few words: the first OSError with a reason among the error,
    what it wraps (Beam wraps the OSError it met) and what it was raised from."""
    todo, seen = [error], set()
    while todo:
        e = todo.pop(0)
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, OSError) and e.strerror:
            return e.strerror
        details = getattr(e, "exception_details", None)
        todo += [a for a in (*e.args, *(details.values() if isinstance(details, dict) else ()),
                             e.__cause__, e.__context__) if isinstance(a, BaseException)]
    return str(error).splitlines()[0]


def _staging(out: str, run_id: str) -> str:
    """A new, empty staging folder in `out` for this run (its parents made), or an OutputError
    saying why `out` cannot take one."""
    if "://" not in out and os.path.exists(out) and not os.path.isdir(out):
        raise OutputError(f"--out {out}: is a file, not a directory; choose a directory")
    staging = FileSystems.join(out, f".staging-{run_id}")
    try:
        if FileSystems.exists(staging):
            FileSystems.delete([staging])
        FileSystems.mkdirs(staging)  # with parents; object stores have no folders to make
        _write_bytes(FileSystems.join(staging, ".probe"), b"")  # can files be written there?
        FileSystems.delete([FileSystems.join(staging, ".probe")])
    except (OSError, BeamIOError) as e:
        raise OutputError(f"--out {out}: cannot write there ({_reason(e)}); choose a directory "
                          f"you can write") from None
    return staging


def _check_evaluated(pl: Plan, counts: dict, dead_letters: bytes) -> None:
    """A run that evaluated nothing is a mistake, not a success: say which stream (or logged
    model) and what would fix it."""
    keys = {tuple(k): v for k, v in counts["keys"]}
    dead = [json.loads(line) for line in dead_letters.splitlines()]
    for s in pl.streams:
        read = counts["streams"].get(s.name, {})
        mine = [c for (stream, _), c in keys.items() if stream == s.name]
        columns = f"; its columns are {s.columns()}" if s.kind == "file" and \
            s.format != "arff" else ""
        first = next((d for d in dead if d["stream"] == s.name), None)
        example = "" if first is None else (
            f"; the first: {first['file'] or s.name}, row {first['row']}, field "
            f"{first['field']}: {first['reason']}")
        instances, labels = read.get("instance_events", 0), read.get("label_events", 0)
        if not instances:
            outside = read.get("outside_range", 0)
            raise InputError(
                f"stream {s.name}: no instance to evaluate: " + (
                    f"all {outside} fall outside --from/--to" if outside else
                    f"{read.get('dead_letters', 0)} rows were dead letters{example}") + columns)
        if not labels:
            raise InputError(
                f"stream {s.name}: no label among {instances} instances{columns}; name the "
                f'label column ({{"label": ...}}), label times ({{"label_time": ...}}) or a '
                f'label table ({{"labels": ...}}) in the stream options')
        if mine and not any(c.get("labelled") for c in mine):
            failed = sum(c.get("model_errors", 0) for c in mine)
            raise InputError(
                f"stream {s.name}: none of its {labels} labels met a pending instance "
                f"({instances} instances" + (f", {failed} set aside by model errors"
                                             if failed else "") +
                f"); check that instances and labels share ids (option id){example}")
    for (stream, model), c in keys.items():
        logged = c.get("logged_predictions")
        if logged is None:
            continue
        if not logged:
            raise InputError(f"prediction log {pl.log.pattern}: no prediction of model "
                             f"{model!r} for stream {stream!r}")
        if c["unmatched_predictions"] == logged:
            raise InputError(
                f"prediction log {pl.log.pattern}: 0 of {logged} predictions of model "
                f"{model!r} matched a labelled instance of stream {stream!r}: check that the "
                f"log's ids and times are the stream's (ids as text alike, times in seconds "
                f"or ISO datetimes, each within its instance's latency period)")


def _opt(v):
    """A bin or alpha read back from parquet: NaN / None -> None. (A bin read as 2.0 still
    finds the key 2: equal numbers hash alike.)"""
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def _versions() -> dict:
    out = {"python": platform.python_version()}
    for pkg in ("delayed-eval", "apache-beam", "river", "numpy", "pandas", "pyarrow"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def _manifest(pl: Plan, counts: dict, n_dead: int, started: str) -> dict:
    keys = []
    for (stream, model), raw in counts["keys"]:
        c = {k: int(raw.get(k, 0)) for k in (*COUNTERS, "pending")}
        logged = {k: int(raw[k]) for k in LOG_COUNTERS if k in raw}
        keys.append({"stream": stream, "model": model, **{k: c[k] for k in COUNTERS},
                     "scored_initial": c["labelled"] - c["unscored_initial"],
                     "scored_final": c["labelled"] - c["unscored_final"],
                     "pending_at_end": c["pending"], **logged})
    order = {(s.name, m): i for i, (s, m) in enumerate(
        (s, m) for s in pl.streams for m in pl.models)}
    keys.sort(key=lambda k: order.get((k["stream"], k["model"]), 1 << 30))
    return {
        "run_id": pl.config.run_id, "started": started,
        "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv), "config": pl.config.to_dict(),
        "replay": "backfill" if pl.backfill else pl.replay, "repredict": str(pl.repredict),
        "bins": pl.scoring.bins,
        "versions": _versions(),
        "streams": {s.name: {"spec": {"source": s.source, "options": s.options},
                             "delay": str(s.delay(pl.delay)), "ordering": s.ordering,
                             "seed": s.options.get("seed", 42) if s.kind == "synth" else None,
                             "declared_classes": pl.classes[s.name],
                             "read": counts["streams"].get(s.name, {})}
                    for s in pl.streams},
        "models": {name: {**(spec.to_dict() if spec else {"name": name,
                                                           "predictions": pl.log.pattern}),
                          "task": pl.tasks[name]}
                   for name, spec in pl.models.items()},
        "classes": {f"{k[0]} / {k[1]}": v for k, v in counts["classes"]},
        "counts": keys,
        "dead_letters": n_dead,
    }


def run(config: RunConfig) -> pd.DataFrame:
    """Run the evaluation and return the summary (also written to `config.out`).

    >>> import tempfile
    >>> cfg = RunConfig(streams=['synth:SEA{"n": 300, "seed": 1}'],
    ...                 models=["no-change", "gaussian-nb"], delay="10", out=tempfile.mkdtemp(),
    ...                 quiet=True)
    >>> summary = run(cfg)
    >>> summary.query("category == 'initial' and metric == 'accuracy'")["n"].tolist()
    [290, 290]
    """
    pl = plan(config)
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    staging = _staging(config.out, config.run_id)
    try:
        with runner_session(config.runner, config.beam_args, config.quiet) as (runner, options):
            p = beam.Pipeline(runner=runner, options=options)
            build(p, pl, staging)
            result = p.run()
            result.wait_until_finish()

        def staged(name):
            return FileSystems.join(staging, name)

        # A worker's mistake in the input or a model arrives as data, on every runner alike:
        # the run fails with the first (in a fixed order) and publishes nothing.
        errors = json.loads(_read_bytes(staged(ERRORS_FILE)))
        if errors:
            raise DelayedEvalError.from_record(min(errors, key=lambda e: (e["type"],
                                                                          e["message"])))

        summary = _complete_summary(pl, pd.read_parquet(io.BytesIO(
            _read_bytes(staged("_summary.parquet")))))
        counts = json.loads(_read_bytes(staged("_counts.json")))
        dead_letters = _read_bytes(staged("dead_letters.jsonl"))
        _check_evaluated(pl, counts, dead_letters)
        n_dead = dead_letters.count(b"\n")
        try:
            _write_bytes(staged("summary.csv"), summary.to_csv(index=False).encode())
            _write_parquet(staged("summary.parquet"), summary)
            FileSystems.delete([staged(name) for name in ("_summary.parquet", "_counts.json",
                                                          ERRORS_FILE)])
            outputs = sorted([*_staged_names(staging), "manifest.json"])
            _write_json(staged("manifest.json"), {**_manifest(pl, counts, n_dead, started),
                                                  "outputs": outputs})
            _publish(staging, config.out)
        except (OSError, BeamIOError) as e:
            raise OutputError(f"--out {config.out}: writing the results failed ({_reason(e)}); "
                              f"the previous results there are untouched") from None
    finally:
        if FileSystems.exists(staging):
            FileSystems.delete([staging])
    if config.report:
        from pipelines.report import write_report

        report = write_report(config.out)
    if not config.quiet:
        counters = job_counters(result)
        if counters:
            print("job counters: " + ", ".join(f"{k} {v:,}" for k, v in counters.items()),
                  file=sys.stderr)
        print(format_table(summary) + "\n")
        print(format_profiles(json.loads(_read_bytes(FileSystems.join(config.out,
                                                                      "profile.json")))))
        delays = drift_delay_table(summary)
        if not delays.empty:
            print("\nPage-Hinkley: detection delay (false alarms) per known drift, by 1 − α")
            print(delays.to_string(index=False))
        if config.report:
            print(f"\nreport: {report}")
    return summary
