"""Prediction logs: which files (`PredictionLogSpec`), which columns, which models, read as
Arrow record batches. A log is a Parquet, CSV or JSON Lines file, a glob or a folder of partitions,
read through Beam's FileSystems; `run`'s own `predictions.parquet` is one, and records its
models' order in its metadata (`MODEL_ORDER_KEY`)."""

from __future__ import annotations

import copy
import csv
import json
import os
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from apache_beam.io.filesystems import FileSystems

from transforms.backfill import log_text
from transforms.backfill.join import spelled_kinds
from transforms.backfill.log_text import (OPTION, ArrowReadable, TypesChanged,
                                          json_text_as_lists, json_text_as_map, read_jsonl,
                                          released, stream_jsonl, struct_as_map,
                                          undecodable_rows)
from transforms.errors import InputError, check_options
from transforms.records import field_count_reason
from transforms.specs import split_options
from transforms.streams.table_files import (WHOLE_TABLE_JSON, check_encoding,
                                            excel_separator_line, extension, flat_names,
                                            flat_table, guess_column, is_utf8,
                                            is_whole_json_document, other_separator,
                                            parquet_batches, parquet_errors, source_name,
                                            table_files, undecodable, without_bom)
from transforms.streams.times import TIME_OPTIONS, TimeReading
from transforms.vocabulary import FINAL, REPREDICTION

# Defaults: the columns of `run`'s own predictions.parquet.
LOG_COLUMNS = {"stream": "stream", "model": "model", "id": "id", "kind": "kind", "time": "t",
               "prediction": "y_pred", "proba": "proba"}
# Class probabilities from other columns: a binary task's positive-class probability
# (`score`, with the class it belongs to, `positive`), one column per class (`proba_columns`:
# {class: column}), or two list columns of each prediction's classes and their scores
# (`score_classes`, `scores`: `{"classes": [...], "scores": [...]}` as TensorFlow Serving and
# Vertex AI answer; `score_classes` may instead list the classes, the order of every row's
# scores, as scikit-learn's `predict_proba` gives them in `classes_` order). Each becomes the
# `proba` map column {class: probability}.
PROBA_OPTIONS = ("score", "positive", "proba_columns", "score_classes", "scores")
LISTED = ("score_classes", "scores")
# A score's decision: the positive class where the score is at least this (`threshold`), else
# the other class; for a log without a prediction column, or to score another threshold.
DEFAULT_THRESHOLD = 0.5
# The name given to the empty field after a CSV log line's last separator (left out).
_AFTER_LAST_SEPARATOR = "\0after the last separator"
# How a CSV log is read: its delimiter and its numbers' decimal mark.
CSV_LOG_OPTIONS = {"sep": ",", "decimal": "."}


# Per (stream, model): prediction rows read, those that belong to no labelled instance, and
# why, in six counts that add up to them: of an instance still waiting for its label at the
# end; made outside --from/--to with no labelled instance of its id; no instance with the id
# had arrived by then (it was set aside, or the id is unknown); the time is before the
# instance's arrival, or after its label; the time is missing or not a time. And of the
# matched ones, those that repeat their instance's initial or final prediction (the first
# initial and last final count).
# Apart: the initial and final predictions scored whose class probabilities do not sum to 1.
LOG_COUNTERS = ("logged_predictions", "unmatched_predictions", "unmatched_pending",
                "unmatched_outside_range", "unmatched_no_instance", "unmatched_before_arrival",
                "unmatched_after_label", "unmatched_unreadable_time", "repeated_predictions",
                "probabilities_not_summing_to_1")


def nothing_to_score_yet(counts: dict) -> bool:
    """Whether a (stream, model)'s `LOG_COUNTERS` hold no prediction of a labelled instance of
    the range, each being made outside --from/--to or for an instance still waiting (or there
    being none): a version deployed after the range, retired before it, or deployed late in it
    — no mistake, unlike ids that are not the stream's.

    >>> nothing_to_score_yet({"logged_predictions": 5, "unmatched_outside_range": 4,
    ...                       "unmatched_pending": 1})
    True
    """
    return counts["logged_predictions"] == counts.get("unmatched_outside_range", 0) + \
        counts.get("unmatched_pending", 0)


LOG_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "csv",
               ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}


# A run's prediction log records its models' order here (Parquet metadata): a backfill of it
# without --model orders models, and so names comparison pairs, as the run did.
MODEL_ORDER_KEY = b"delayed-eval.models"
# And how it re-predicted (`RepredictPolicy`), which a backfill of it names in its protocol.
REPREDICT_KEY = b"delayed-eval.repredict"
# And each stream's label delay ({stream: delay, "input" for label times given}): a backfill
# under another delay matches its predictions to other label times.
DELAYS_KEY = b"delayed-eval.delays"
# And the rows of each stream it pretrained on ({stream: N}, `--pretrain`): they are no
# instances of the run, so none of the backfill's either.
PRETRAIN_KEY = b"delayed-eval.pretrain"
# And which predictions it logged (`--log-predictions`): one of `all` holds every re-prediction
# the run made, so a log of `all` without any says the run re-predicted none (its binned
# measures repeat the initial ones), where one of `initial-final` says nothing about them.
LOG_LEVEL_KEY = b"delayed-eval.log-predictions"
# And its periodic holdout (`--holdout EVERY:SIZE`), if any: the instances it held out left the
# run's prequential stream (no prediction of them is logged), and leave the backfill's too.
HOLDOUT_KEY = b"delayed-eval.holdout"
# And the events it set aside because a model failed on them (`--on-model-error
# dead-letter`), {stream: {model: [[seq, kind, id's text, time], ...]}}: the log holds what the
# model predicted before it failed, not that the run left the instance out, so the backfill's
# label pass of that model sets them aside too. (A count in place of the list: which ones is not
# known, and the backfill tells its user.)
SET_ASIDE_KEY = b"delayed-eval.set-aside"


class PredictionLogSpec:
    """Where logged predictions are and what their columns are called.

    `PATTERN[{json}]`: a file, a glob or a directory (every .parquet / .csv / .jsonl file under it,
    e.g. hive partitions `date=2026-11-01/part-0.parquet`), read with Beam's FileSystems so
    gs:// and s3:// work too. Options rename the columns (defaults: those of `run`'s
    predictions.parquet): `stream`, `model`, `id`, `kind`, `time`, `prediction`. A log without
    a stream (model) column belongs to the only configured stream (model; with none
    configured, one named after the log: `own_model_name`). `time_unit`, `time_format` and
    `time_zone` say how its times are read, as a stream's (`TimeReading`); `sep` and
    `decimal` say how a CSV file is written (`{"sep": ";", "decimal": ","}`), `encoding` how a
    CSV or JSON Lines file's text is (UTF-8 by default; `{"encoding": "latin-1"}`).

    Class probabilities (for log-loss, Brier, AUC and calibration) come from a map column
    {class: probability} (`proba`, as `run` writes it; a JSON object in a JSON Lines log), from
    the positive class's probability in a binary task (`{"score": "p_fraud", "positive":
    "fraud"}`: the other class has 1 − score), or from one column per class
    (`{"proba_columns": {"fraud": "p_fraud", "ok": "p_ok"}}`), or from two list columns, each
    prediction's classes and their scores (`{"score_classes": "output.classes", "scores":
    "output.scores"}`). A log with a score and no prediction column, or with a `threshold`
    (`{"score": "p_fraud", "threshold": 0.3}`), predicts the positive class where the score is
    at least the threshold (0.5 by default), else the other class; one with listed scores and
    no prediction column, the class of the highest score, the first listed of equals
    (`deciding_by_score`).

    >>> spec = PredictionLogSpec.parse('logs/preds{"time": "ts", "prediction": "decision"}')
    >>> spec.pattern, spec.columns["time"], spec.columns["id"]
    ('logs/preds', 'ts', 'id')
    """

    def __init__(self, pattern: str, columns: dict, proba: dict | None = None,
                 reading: TimeReading = TimeReading(), csv: dict | None = None,
                 encoding: str = "utf-8"):
        self.pattern = pattern
        self.columns = columns
        self.proba = proba or {}  # the options of `PROBA_OPTIONS` given
        self.reading = reading  # how its times become seconds
        self.csv = {**CSV_LOG_OPTIONS, **(csv or {})}
        self.sep_given = "sep" in (csv or {})  # (else a .tsv file's is a tab)
        self.encoding = encoding
        self.threshold: float | None = None  # the `threshold` option's
        # `deciding_by_score`: (positive, other, threshold), or ("highest",) of listed scores
        self.decision: tuple | None = None
        self._twice: dict = {}  # files without a kind column -> `_predicted_twice`'s answer
        self._listed: dict = {}  # time range -> `files`' answer
        self._run_records: dict = {}  # time range -> `_run_record`'s answer
        self._set_asides: dict = {}  # time range -> `_set_aside`'s answer

    @classmethod
    def parse(cls, text: str) -> PredictionLogSpec:
        pattern, options = split_options(text, "prediction log")
        known = [*LOG_COLUMNS, *PROBA_OPTIONS, "threshold", *CSV_LOG_OPTIONS, *TIME_OPTIONS,
                 "encoding"]
        check_options(f"prediction log {pattern}", options, known)
        proba = {k: options.pop(k) for k in PROBA_OPTIONS if k in options}
        csv = {k: options.pop(k) for k in CSV_LOG_OPTIONS if k in options}
        where = f"prediction log {pattern}"
        named = {k: v for k, v in {**options, **proba}.items()
                 if k in (*LOG_COLUMNS, "score", *LISTED)
                 and not (k == "score_classes" and isinstance(v, list))}
        for option, column in named.items():
            if not isinstance(column, str):
                example = json.dumps({option: LOG_COLUMNS.get(option, "p_fraud")})
                raise InputError(f"{where}: option {option} names a column, so it is a text, "
                                 f"not {column!r}; e.g. {example}")
        if not isinstance(proba.get("positive", ""), (str, int, float, bool)):
            raise InputError(f"{where}: option positive is a class (a text or a number), not "
                             f"{proba['positive']!r}; e.g. {{\"positive\": \"fraud\"}}")
        if any(not isinstance(v, str) or len(v) != 1 for v in csv.values()):
            raise InputError(f'{where}: sep and decimal are one character each, e.g. '
                             f'{{"sep": ";", "decimal": ","}}')
        encoding = options.pop("encoding", "utf-8")
        check_encoding(encoding, where, OPTION)
        reading = TimeReading.of({k: options.pop(k) for k in TIME_OPTIONS if k in options},
                                 where)
        threshold = options.pop("threshold", None)
        if threshold is not None and ("score" not in proba or isinstance(threshold, bool) or
                                      not isinstance(threshold, (int, float))
                                      or not 0 <= threshold <= 1):
            raise InputError(f"{where}: threshold is a number in [0, 1] that decides the "
                             f'positive class from a score column, e.g. {{"score": "p_fraud", '
                             f'"positive": "fraud", "threshold": 0.3}}')
        given = [k for k in ("score", "proba_columns", "scores") if k in proba]
        if len(given) > 1:
            raise InputError(f"{where}: give {' or '.join(given)}, not " + (
                "both" if len(given) == 2 else "all three"))
        if ("scores" in proba) != ("score_classes" in proba):
            raise InputError(f'{where}: score_classes and scores name two list columns, each '
                             f'prediction\'s classes and their scores: give both, e.g. '
                             f'{{"score_classes": "output.classes", "scores": "output.scores"}}')
        listed = proba.get("score_classes")
        if isinstance(listed, list) and (not listed or len(set(map(str, listed))) < len(listed)
                                         or not all(isinstance(c, (str, int, float, bool))
                                                    for c in listed)):
            raise InputError(f"{where}: score_classes names the column of each prediction's "
                             f"classes, or lists the classes, each once, in the order of every "
                             f'row\'s scores, e.g. {{"score_classes": ["ok", "fraud"], "scores": '
                             f'"probabilities"}}')
        if "positive" in proba and "score" not in proba:
            raise InputError(f"{where}: positive names the class of a score column: give "
                             f'both, e.g. {{"score": "p_fraud", "positive": "fraud"}}')
        columns = proba.get("proba_columns")
        if columns is not None and (not isinstance(columns, dict) or not columns or not all(
                isinstance(c, str) for c in columns.values())):
            raise InputError(f'{where}: proba_columns must map each class to its column, e.g. '
                             f'{{"proba_columns": {{"fraud": "p_fraud", "ok": "p_ok"}}}}')
        spec = cls(pattern, {**LOG_COLUMNS, **options}, proba, reading, csv, encoding)
        spec.threshold = None if threshold is None else float(threshold)
        return spec

    def needs_score_class(self) -> bool:
        """Whether its `score` column's class is still to be told (`with_score_class`)."""
        return "score" in self.proba and "positive" not in self.proba

    def with_score_class(self, positive) -> PredictionLogSpec:
        """This log with its `score` column the probability of class `positive` (the streams'
        positive class when the option does not name it); an InputError when it is None.

        >>> spec = PredictionLogSpec.parse('preds.csv{"score": "p"}')
        >>> spec.needs_score_class(), spec.with_score_class("1").proba
        (True, {'score': 'p', 'positive': '1'})
        """
        if positive is None:
            raise InputError(f"prediction log {self.pattern}: score {self.proba['score']!r} "
                             f"needs the class whose probability it is (told by itself only "
                             f"where a class is 1 or True, or by a stream's positive or two "
                             f'declared classes): give it, e.g. {{"score": '
                             f'"{self.proba["score"]}", "positive": "fraud"}}')
        told = copy.copy(self)
        told.proba = {**self.proba, "positive": positive}
        return told

    def decides_by_score(self) -> bool:
        """Whether its predictions are to be decided from its score: it has a `threshold`, or
        a score or listed scores and no prediction column (in its first file)."""
        if "score" not in self.proba and "scores" not in self.proba:
            return False
        return self.threshold is not None or self._first_values("prediction") is None

    def deciding_by_score(self, other) -> PredictionLogSpec:
        """This log with each prediction decided from its score: the positive class where the
        score is at least the threshold, else `other` (a score is no prediction when missing).

        >>> spec = PredictionLogSpec.parse('p.csv{"score": "p", "positive": "fraud"}')
        >>> spec.deciding_by_score("ok").decision
        ('fraud', 'ok', 0.5)

        Listed scores decide alone: the class of the highest.

        >>> PredictionLogSpec.parse('p.jsonl{"score_classes": "c", "scores": "s"}'
        ...                         ).deciding_by_score(None).decision
        ('highest',)
        """
        decided = copy.copy(self)
        if "scores" in self.proba:
            decided.decision = ("highest",)
            return decided
        positive = self.proba["positive"]
        if other is None:
            raise InputError(f"prediction log {self.pattern}: its predictions are decided from "
                             f"the score {self.proba['score']!r}, the probability of "
                             f"{positive!r}, or else the other class, which the labels do not "
                             f"name as the only one: declare the two classes with the stream "
                             f'option {{"classes": [{json.dumps(positive)}, "..."]}}, or log '
                             f"the predictions (the option prediction)")
        decided.decision = (positive, other, DEFAULT_THRESHOLD if self.threshold is None
                            else self.threshold)
        return decided

    def _source_columns(self) -> list[str]:
        """The columns the class probabilities are read from (renamed into `proba`)."""
        if "score" in self.proba:
            return [self.proba["score"]]
        if "scores" in self.proba:
            return [self.proba[k] for k in LISTED if isinstance(self.proba[k], str)]
        return list(self.proba.get("proba_columns", {}).values())

    def files(self, time_range=None) -> list[str]:
        """The log's files, sorted (a directory: every log file below it, `LOG_FORMATS`, but of
        a run's results, those beside a manifest.json, its log predictions.parquet alone); with
        a `TimeRange`, partitions `date=DAY` before its first day are skipped. Listed once per
        time range: planning asks many times, and each listing is a round trip on `gs://`.

        >>> import os, tempfile
        >>> out = tempfile.mkdtemp()
        >>> for name in ("manifest.json", "summary.parquet", "predictions.parquet"):
        ...     open(os.path.join(out, name), "w").close()
        >>> [os.path.basename(f) for f in PredictionLogSpec.parse(out).files()]
        ['predictions.parquet']
        """
        if time_range not in self._listed:
            self._listed[time_range] = self._list(time_range)
        return list(self._listed[time_range])

    def _list(self, time_range) -> list[str]:
        found = table_files(self.pattern, tuple(LOG_FORMATS))
        runs = {os.path.dirname(f) for f in found if os.path.basename(f) == "manifest.json"}
        # (a .json file is JSON Lines when named itself; in a folder, a run's manifest or such)
        files = [f for f in found if (extension(f) != ".json" or f == self.pattern)
                 and (os.path.dirname(f) not in runs
                      or os.path.basename(f) == "predictions.parquet")
                 and (time_range is None or time_range.keeps_partition(f))]
        if not files:
            named = any(extension(f) == ".json" for f in found)
            raise InputError(f"prediction log {self.pattern}: no .parquet, .csv, .tsv or "
                             f".jsonl file found" + ("; a .json file is read only when named "
                                                     "itself" if named else ""))
        return files

    def predicts_numbers(self, rows: int = 1000) -> bool:
        """Whether the log's first predictions (of its first file) are numbers, some with a
        fraction, however written (a run's log writes them as text): a regressor's.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "p.csv")
        >>> with open(path, "w") as f:
        ...     _ = f.write("id,time,y_pred\\n1,0,2.5\\n2,1,3\\n")
        >>> PredictionLogSpec.parse(path).predicts_numbers()
        True
        """
        predictions = self._first_values("prediction")
        if predictions is None:
            return False
        import pyarrow.csv as pcsv

        missing = set(pcsv.ConvertOptions().null_values)  # (a CSV log's cells come as text)
        values = [v for v in predictions.slice(0, rows).to_pylist()
                  if v is not None and v not in missing]
        if self.csv["decimal"] != ".":  # (a CSV log's text, written with its decimal mark)
            values = [v.replace(self.csv["decimal"], ".") if isinstance(v, str) else v
                      for v in values]
        try:
            numbers = [float(v) for v in values if not isinstance(v, bool)]
        except (TypeError, ValueError):
            return False
        return len(numbers) == len(values) and any(
            np.isfinite(v) and not v.is_integer() for v in numbers)

    def written_times(self, rows: int = 20) -> list:
        """The first times of the log (of its first file) as written.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "p.csv")
        >>> with open(path, "w") as f:
        ...     _ = f.write("id,t,y_pred\\n1,01/11/2026 08:00,a\\n")
        >>> PredictionLogSpec.parse(path).written_times()
        ['01/11/2026 08:00']
        """
        times = self._first_values("time")
        return [] if times is None else [v for v in times.slice(0, rows).to_pylist()
                                         if v is not None]

    def _first_values(self, column: str) -> pa.Array | None:
        """The first block of one of the log's columns (`LOG_COLUMNS`; a prediction decided
        from the score, `decision`), in its first file; None without rows or the column."""
        files = self.files()
        batch = next(self.read(files[0], columns=[column]), None) if files else None
        if batch is None or column not in batch.schema.names:
            return None
        return batch.column(batch.schema.get_field_index(column))

    def own_model_name(self) -> str:
        """The name of the one model of a log without a model column, when no --model names
        it: the log's file or folder name, without its extension (`source_name`).

        >>> [PredictionLogSpec.parse(p).own_model_name() for p in (
        ...     "logs/fraud_v3.csv", "gs://b/scores/", "logs/scores/*.parquet", "*.csv")]
        ['fraud_v3', 'scores', 'scores', 'model']
        """
        return source_name(self.pattern) or "model"

    def model_names(self, time_range=None) -> list[str]:
        """The distinct model names in the log's files (`files(time_range)`; reads only that
        column), in the order the run that wrote it configured them (`MODEL_ORDER_KEY` in a
        Parquet file's metadata), then any others sorted by name; "" stands for rows that
        name none (an empty or missing value)."""
        recorded: list = []
        for path in self.files(time_range):
            recorded = recorded or self._recorded_order(path)
        names = self.names_in("model", time_range)
        return [n for n in recorded if n in names] + sorted(names - set(recorded))

    def names_in(self, column: str, time_range=None) -> set[str]:
        """The distinct values of the log's `model` or `stream` column as text, "" for a row
        that names none (an empty or missing value); an InputError if the log has no such
        column."""
        names: set = set()
        for path in self.files(time_range):
            for batch in self.read(path, columns=[column]):
                if column not in batch.schema.names:
                    raise InputError(f"{path}: no {column} column {self.columns[column]!r}; "
                                     f"name the {column}s with --{column} or the column with "
                                     f'{{"{column}": "..."}}')
                names.update(pc.unique(batch.column(0).cast(pa.string())).to_pylist())
        return (names - {None}) | {""} if None in names else names

    def check_columns(self, time_range=None) -> None:
        """The first of the log's files (`files(time_range)`) has the columns a log needs
        (`_check_named`), told from its first block: a log whose columns are named otherwise
        stops the backfill before its stream is read, not after.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "p.csv")
        >>> with open(path, "w") as f:
        ...     _ = f.write("id,time,prediction\\n1,0,a\\n")
        >>> PredictionLogSpec.parse(path).check_columns()
        Traceback (most recent call last):
        ...
        transforms.errors.InputError: ...p.csv: column 't' (option "time") and column 'y_pred' \
(option "prediction") not found; ...
        >>> PredictionLogSpec.parse(path + '{"time": "time", "prediction": "prediction"}'
        ...                         ).check_columns()
        """
        batches = self.read(self.files(time_range)[0], streamed=True)
        next(batches, None)
        batches.close()

    def has_rows(self, time_range=None) -> bool:
        """Whether any of the log's files (`files(time_range)`) has a row. A log of CSV lines
        none of which can be read (each has another number of fields than its header) is
        refused, with the first.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "p.csv")
        >>> with open(path, "w") as f:
        ...     _ = f.write("id,t,y_pred\\n")
        >>> PredictionLogSpec.parse(path).has_rows()
        False
        """
        first_bad = None
        for path in self.files(time_range):
            bad: list = []
            if any(batch.num_rows for batch in self.read(path, columns=["id"], bad_rows=bad)):
                return True
            first_bad = first_bad or (bad and (path, *bad[0][:2]))
        if first_bad:
            path, row, reason = first_bad
            if LOG_FORMATS[extension(path)] == "jsonl" and is_whole_json_document(path, []):
                raise InputError(f"{path}: {WHOLE_TABLE_JSON}")
            raise InputError(f"{path}, row {row}: {reason}; no line of the log can be read "
                             f"(check its separator and quotes)")
        return False

    def has_repredictions(self, time_range=None) -> bool:
        """Whether the log's files (`files(time_range)`) may hold re-predictions: its `kind`
        column names one (read until one is found), or, in files without a kind column (whose
        kinds the join tells by time), a model predicted an instance at two times or more. A
        log of one prediction per instance (repeats at the same time aside), or of initial and
        final predictions only, has no binned measures to give.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "p.csv")
        >>> with open(path, "w") as f:
        ...     _ = f.write("id,t,y_pred,model\\n1,0,a,v1\\n2,1,b,v1\\n1,2,a,v2\\n")
        >>> PredictionLogSpec.parse(path).has_repredictions()
        False
        >>> with open(path, "a") as f:
        ...     _ = f.write("1,0,a,v1\\n")  # logged twice: no re-prediction
        >>> PredictionLogSpec.parse(path).has_repredictions()
        False
        """
        return self._may_hold(REPREDICTION, time_range)

    def has_finals(self, time_range=None) -> bool:
        """Whether the log's files (`files(time_range)`) may hold final predictions: its
        `kind` column names one (read until one is found), or, in files without a kind column
        (whose kinds the join tells by time: an instance's first prediction is its initial
        one), a model predicted an instance at two times or more. A log of a run with
        --no-final, or of a service that logs each decision once, has no final measures to
        give.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "p.csv")
        >>> with open(path, "w") as f:
        ...     _ = f.write("id,t,y_pred,kind\\n1,0,a,initial\\n2,1,b,Initial\\n")
        >>> PredictionLogSpec.parse(path).has_finals()
        False
        >>> with open(path, "a") as f:
        ...     _ = f.write("1,5,a,FINAL\\n")
        >>> PredictionLogSpec.parse(path).has_finals()
        True
        >>> with open(path, "w") as f:
        ...     _ = f.write("id,t,y_pred\\n1,0,a\\n2,1,b\\n")  # one decision each
        >>> PredictionLogSpec.parse(path).has_finals()
        False
        """
        return self._may_hold(FINAL, time_range)

    def _may_hold(self, kind: str, time_range=None) -> bool:
        """Whether a kind column of the log's files names `kind`, or, in its files without one,
        a model predicted an instance at two times or more (the one thing the join tells a
        re-prediction and a final prediction by; read once for both)."""
        named, kindless = self._names_kind(kind, time_range)
        return named or self._predicted_twice(kindless)

    def _names_kind(self, kind: str, time_range=None) -> tuple[bool, list[str]]:
        """(whether a kind column of the log's files names `kind`, read until one does; the
        files without a kind column, as far as they were read)."""
        kindless = []
        for path in self.files(time_range):
            for batch in self.read(path, columns=["kind"]):
                if "kind" not in batch.schema.names:
                    kindless.append(path)
                    break
                if kind in spelled_kinds(batch.column(0)).unique().to_pylist():
                    return True, kindless
        return False, kindless

    def has_repredicted_probabilities(self, time_range=None) -> bool:
        """Whether some re-prediction in the log's files carries class probabilities (read
        until one is found); True for files without a kind column, whose re-predictions only
        the join tells.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "p.jsonl")
        >>> with open(path, "w") as f:
        ...     _ = f.write('{"id": 1, "t": 0, "kind": "initial", "y_pred": "a", '
        ...                 '"proba": {"a": 1}}\\n'
        ...                 '{"id": 1, "t": 1, "kind": "re-prediction", "y_pred": "a"}\\n')
        >>> PredictionLogSpec.parse(path).has_repredicted_probabilities()
        False
        """
        for path in self.files(time_range):
            for batch in self.read(path, columns=["kind", "proba"]):
                names = batch.schema.names
                if "kind" not in names:
                    return True
                if "proba" in names and pc.any(pc.and_kleene(
                        pc.equal(spelled_kinds(batch.column(names.index("kind"))),
                                 REPREDICTION),
                        pc.is_valid(batch.column(names.index("proba"))))).as_py():
                    return True
        return False

    def _predicted_twice(self, paths: list) -> bool:
        """Whether a (stream, model, id) has rows at two times or more in these files (read by
        column: each batch's distinct keys, with and without the time, are kept as Arrow
        text, not Python objects); each set of files is read once."""
        if tuple(paths) not in self._twice:
            self._twice[tuple(paths)] = self._read_predicted_twice(paths)
        return self._twice[tuple(paths)]

    def _read_predicted_twice(self, paths: list) -> bool:
        keys, timed = [], []
        for path in paths:
            for batch in self.read(path, columns=["id", "model", "stream", "time"]):
                names = batch.schema.names
                if "time" not in names:
                    return True  # (the join names the missing column)
                parts = [pc.cast(batch.column(i), pa.string()) for i, name in enumerate(names)
                         if name != "time"]
                joined = [pc.binary_join_element_wise(*columns, "\x1f", null_handling="replace",
                                                      null_replacement="")
                          for columns in (parts, [*parts, pc.cast(batch.column("time"),
                                                                  pa.string())])]
                keys.append(pc.unique(joined[0]))
                timed.append(pc.unique(joined[1]))
                if len(timed[-1]) > len(keys[-1]):
                    return True
        return pc.count_distinct(pa.chunked_array(timed, pa.string())).as_py() > \
            pc.count_distinct(pa.chunked_array(keys, pa.string())).as_py()

    @staticmethod
    def _recorded_order(path: str) -> list:
        try:
            return list(json.loads(PredictionLogSpec._metadata(path).get(MODEL_ORDER_KEY,
                                                                         b"[]")))
        except ValueError:
            return []

    @staticmethod
    def _metadata(path: str) -> dict:
        """A Parquet log file's key-value metadata ({} for other formats)."""
        if LOG_FORMATS[extension(path)] != "parquet":
            return {}
        import pyarrow.parquet as pq

        with FileSystems.open(path) as f, parquet_errors(path):
            return pq.ParquetFile(f).schema_arrow.metadata or {}

    def recorded_repredict(self, time_range=None) -> str | None:
        """How the run that wrote the log re-predicted (its `REPREDICT_KEY`, as the run's
        protocol names it), from the first of its files (`files(time_range)`); None for a log
        a run did not write."""
        return self._recorded(REPREDICT_KEY, time_range)

    def recorded_log_level(self, time_range=None) -> str | None:
        """Which predictions the run that wrote the log logged (its `LOG_LEVEL_KEY`: `all`,
        `initial-final`); None for a log a run did not write."""
        return self._recorded(LOG_LEVEL_KEY, time_range)

    def recorded_holdout(self, time_range=None) -> str | None:
        """The periodic holdout (`EVERY:SIZE`) of the run that wrote the log (its
        `HOLDOUT_KEY`); None for a run without one, or a log a run did not write."""
        return self._recorded(HOLDOUT_KEY, time_range)

    def _recorded(self, key: bytes, time_range) -> str | None:
        recorded = self._run_record(time_range).get(key)
        return recorded.decode() if recorded else None

    def recorded_set_asides(self, time_range=None) -> dict:
        """{stream: {model: instances}} the run that wrote the log set aside because the model
        failed on them, where it recorded how many but not which (its `SET_ASIDE_KEY`); {} for
        none, or a log a run did not write."""
        return {stream: mine for stream, per_model in self._set_aside(time_range).items()
                if (mine := {m: n for m, n in per_model.items() if isinstance(n, int)})}

    def recorded_failures(self, time_range=None) -> dict:
        """{(stream, model): {seq: (kind, id's text, time)}}: the events the run that wrote the log
        set aside because the model failed on them, where it recorded which (`ReplayEngine`'s
        fails_at, for the backfill's label pass of that model)."""
        return {(stream, m): {seq: (kind, key, t) for seq, kind, key, t in events}
                for stream, per_model in self._set_aside(time_range).items()
                for m, events in per_model.items() if isinstance(events, list)}

    def _set_aside(self, time_range) -> dict:
        """The `SET_ASIDE_KEY` record: per stream and model a list of events or a count. A
        log of several runs (a file each) gives each one's count: the places of one run's
        events are in that run's stream alone."""
        if time_range not in self._set_asides:
            files = self.files(time_range)
            first = self._run_record(time_range)
            records = [(files[0], first), *((path, self._metadata(path)) for path in files[1:]
                                            if MODEL_ORDER_KEY in first)]  # (a run's: one file)
            recorded = [_well_formed_set_aside(r[SET_ASIDE_KEY], path) for path, r in records
                        if SET_ASIDE_KEY in r]
            if len(recorded) > 1:
                counted: dict = {}
                for record in recorded:
                    for stream, per_model in record.items():
                        for m, events in per_model.items():
                            mine = counted.setdefault(stream, {})
                            mine[m] = mine.get(m, 0) + (len(events) if isinstance(events, list)
                                                        else events)
                recorded = [counted]
            self._set_asides[time_range] = recorded[0] if recorded else {}
        return self._set_asides[time_range]

    def recorded_delays(self, time_range=None) -> dict[str, str]:
        """Each stream's label delay in the run that wrote the log (its `DELAYS_KEY`), from the
        first of its files (`files(time_range)`); {} for a log a run did not write."""
        try:
            return dict(json.loads(self._run_record(time_range).get(DELAYS_KEY, b"{}")))
        except ValueError:
            return {}

    def recorded_pretrain(self, time_range=None) -> dict[str, int]:
        """The rows of each stream the run that wrote the log pretrained on (its
        `PRETRAIN_KEY`); {} for none, or a log a run did not write."""
        try:
            return dict(json.loads(self._run_record(time_range).get(PRETRAIN_KEY, b"{}")))
        except ValueError:
            return {}

    def _run_record(self, time_range) -> dict:
        """The Parquet metadata of the log's first file (`files(time_range)`), where a run
        records how it ran; read once, however many of its items are asked for."""
        if time_range not in self._run_records:  # (`files` has one, or raises)
            self._run_records[time_range] = self._metadata(self.files(time_range)[0])
        return self._run_records[time_range]

    def read(self, path: str, columns: list[str] | None = None, streamed: bool = False,
             bad_rows: list | None = None):
        """The file's rows as Arrow record batches, columns renamed to the defaults.

        `streamed`: a CSV or JSON Lines file is read block by block, each column's type fixed
        by the first block that has a value in it; a later block that does not fit raises
        `TypesChanged` (read the file again without `streamed`: parsed whole, a column's type
        is then the one all its values fit, which is the fixed one whenever every block fits
        it). Named `columns` are read block by block too: a CSV file's as text, a JSON Lines
        file's each block's types its own.

        A line that cannot be read is left out and, as it is met, appended to `bad_rows` (if
        given) as (row, reason, the line's text): a CSV line with more or fewer fields than the
        header (row: the data row), a JSON Lines line that is no JSON object (row: the line).

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "p.csv")
        >>> with open(path, "w") as f:
        ...     _ = f.write("id,t,y_pred\\na,1,x\\nb,2,y,extra\\nc,3,z\\n")
        >>> bad = []
        >>> [b.num_rows for b in PredictionLogSpec.parse(path).read(path, bad_rows=bad)], bad
        ([2], [(2, 'expected 3 fields, saw 4 (more fields than the header)', 'b,2,y,extra')])
        """
        fmt = LOG_FORMATS[extension(path)]
        wanted = None if columns is None else [self.columns[c] for c in columns]
        if wanted is not None and ("proba" in columns or self.decision and
                                   "prediction" in columns):
            wanted += self._source_columns()
        header, trailing = self._checked_header(path) if fmt == "csv" else (None, None)
        keep = (self.columns["proba"],)  # (its objects are maps of probabilities)
        with FileSystems.open(path) as f:
            if fmt == "parquet":
                import pyarrow.parquet as pq

                with parquet_errors(path):
                    file = pq.ParquetFile(f)
                if wanted is not None:
                    wanted = [c for c in wanted if c in flat_names(file.schema_arrow, keep)]
                batches = (flat_table(batch, keep) for batch in
                           parquet_batches(file, path, batch_size=1 << 16, columns=wanted))
            elif fmt == "csv" and wanted is not None and wanted == [
                    self.columns[c] for c in columns]:
                # Named columns only, as text: read block by block, whatever the others hold.
                batches = self._stream_csv(f, path, wanted, bad_rows, header, trailing)
            elif fmt == "csv" and streamed and columns is None:
                batches = self._stream_csv(f, path, bad_rows=bad_rows, trailing=trailing)
            elif fmt == "jsonl" and (streamed or wanted is not None):
                batches = stream_jsonl(f, path, wanted, bad_rows, self.encoding, keep)
            else:
                # Parsed whole, so that a column's type holds for the whole file (a streaming
                # reader fixes it from the first block).
                table = self._read_csv(ArrowReadable(f), path, bad_rows, trailing) \
                    if fmt == "csv" \
                    else flat_table(read_jsonl(f, path, bad_rows, self.encoding, keep), keep)
                if wanted is not None:
                    table = table.select([c for c in wanted if c in table.column_names])
                batches = released(table.to_batches(max_chunksize=1 << 16))
                del table
            if fmt == "csv":
                batches = self._all_text(batches, path)
            yield from self._renamed(batches, columns, path)

    def _renamed(self, batches, columns: list[str] | None, path: str):
        rename = {v: k for k, v in self.columns.items()}
        for batch in batches:
            sources = self._source_columns() if columns is None or "proba" in columns or (
                self.decision and "prediction" in columns) else []
            self._check_named(batch.schema.names, columns is None, sources, path)
            names = [rename.get(n, n) for n in batch.schema.names]
            if "proba" in names:  # JSON objects (a struct) or JSON text: as maps
                i = names.index("proba")
                proba, kind = batch.column(i), batch.column(i).type
                ids = batch.column(names.index("id")) if "id" in names else None
                maps = struct_as_map(proba) if pa.types.is_struct(kind) else \
                    json_text_as_map(proba, ids, path) if pa.types.is_string(kind) \
                    or pa.types.is_large_string(kind) else None
                if maps is not None:
                    batch = batch.set_column(i, batch.schema.names[i], maps)
            if sources:
                maps = self._proba_map(batch, path)
                batch = pa.RecordBatch.from_arrays(
                    [*batch.columns, maps], schema=batch.schema.append(pa.field("proba",
                                                                                maps.type)))
                names = [*names, "proba"]
            # (each field keeps its metadata: a column of pandas periods is marked so)
            batch = pa.RecordBatch.from_arrays(batch.columns, schema=pa.schema(
                [f.with_name(name) for f, name in zip(batch.schema, names)]))
            if "prediction" in names and _is_list(batch.column(names.index("prediction"))):
                raise InputError(
                    f"{path}: column {self.columns['prediction']!r} (option prediction) holds "
                    f"lists, not one class per prediction; name a list of classes and one of "
                    f'their scores with {OPTION} {{"score_classes": ..., "scores": ...}} '
                    f"(the prediction: the class of the highest score)")
            if self.decision and (columns is None or "prediction" in columns):
                batch = self._decided(batch, path)
            yield batch

    def _decided(self, batch: pa.RecordBatch, path: str) -> pa.RecordBatch:
        """The batch with its prediction column decided from its score (`decision`): the
        positive class at the threshold, or the class of the highest listed score."""
        if self.decision == ("highest",):
            column = _highest_class(batch.column(batch.schema.get_field_index("proba")))
        else:
            positive, other, threshold = self.decision
            score = self._numbers(batch, self.proba["score"], path)
            decided = np.where(score >= threshold, str(positive), str(other)).astype(object)
            decided[np.isnan(score)] = None  # (no score: no prediction)
            column = pa.array(decided, pa.string())
        if "prediction" in batch.schema.names:
            return batch.set_column(batch.schema.get_field_index("prediction"), "prediction",
                                    column)
        return batch.append_column("prediction", column)

    def _check_named(self, names: list[str], whole: bool, sources: list[str],
                     path: str) -> None:
        """The columns a log must have (id, time and prediction, when it is read `whole`, and
        the probabilities' `sources`) are among its `names`; else one line names each missing
        one with its option and the column it most likely is (`guess_column`).

        >>> spec = PredictionLogSpec.parse("p.csv")
        >>> spec._check_named(["id", "time", "prediction"], True, [], "p.csv")
        Traceback (most recent call last):
        ...
        transforms.errors.InputError: p.csv: column 't' (option "time") and column 'y_pred' \
(option "prediction") not found; columns are ['id', 'time', 'prediction']; name them with the \
--predictions option {"time": "time", "prediction": "prediction"}
        """
        options = [k for k in ("id", "time", "prediction") if whole
                   and not (k == "prediction" and self.decision)]
        missing = {k: self.columns[k] for k in options if self.columns[k] not in names}
        for column in sources:
            if column not in names:
                option = next((k for k in ("score", *LISTED) if self.proba.get(k) == column),
                              f"proba_columns: {column}")
                missing[option] = column
        if not missing:
            return
        if LOG_FORMATS[extension(path)] == "jsonl" and is_whole_json_document(path, names):
            raise InputError(f"{path}: {WHOLE_TABLE_JSON}")
        what = " and ".join(f'column {c!r} (option "{k.split(":")[0]}")'
                            for k, c in missing.items())
        names_them = {k: guess_column(k, c, names) or "..." for k, c in missing.items()
                      if ":" not in k}
        them = "them" if len(names_them) > 1 else "it"
        hint = f"name {them} with {OPTION} {json.dumps(names_them)}" if names_them else \
            "name each class's column in the proba_columns option"
        scores = [n for n in names if re.search(r"^p_|prob|score", str(n).lower())]
        if names_them.get("prediction") == "..." and len(scores) == 1 and not self.proba:
            hint += (f'; or, a log of scores, {{"score": "{scores[0]}", "positive": "..."}} '
                     f"(the class it is the probability of: decided at 0.5)")
        raise InputError(f"{path}: {what} not found; columns are {names}; {hint}")

    def _sep(self, path: str) -> str:
        """A CSV log file's separator: the `sep` option's, else a tab for a .tsv file, else a
        comma.

        >>> [PredictionLogSpec.parse(p)._sep(p) for p in ("a.csv", "a.tsv", 'a.tsv{"sep": ";"}')]
        [',', '\\t', ';']
        """
        return "\t" if extension(path) == ".tsv" and not self.sep_given else self.csv["sep"]

    def _csv_options(self, path: str, text: list[str], bad_rows: list | None,
                     trailing: list[str] | None = None):
        """How a CSV log is parsed: its separator and decimal mark; ids, model and stream
        names and kinds as text (`000017` keeps its 0s; a model named `1.0` stays `1.0`), and
        the `text` columns too; lines with another number of fields than the header skipped
        (into `bad_rows`, see `read`); the header's columns `trailing`, for a log whose lines
        end with the separator (an empty field after them, left out). One thread, so that
        Arrow knows each line's number."""
        import pyarrow.csv as pcsv

        def skipped(line) -> str:
            if bad_rows is not None:  # (Arrow counts the header as row 1, blank lines not)
                reason = "the line does not end with the separator, as the log's first " \
                    "line does" if trailing and \
                    line.actual_columns == line.expected_columns - 1 else \
                    field_count_reason(line.expected_columns, line.actual_columns)
                try:
                    text = line.text
                except UnicodeDecodeError:  # (Arrow decodes it as UTF-8 whatever the file)
                    text = None
                    reason += "; not UTF-8 text either"
                spans = 1 if text is None else text.count("\n") + 1
                if spans > 1:
                    reason += f" (a quote opened in it is not closed on its line: it runs " \
                              f"over {spans:,} lines)"
                bad_rows.append((line.number - 1, reason, text and text[:500]))
            return "skip"

        as_text = {self.columns[c]: pa.string() for c in ("id", "model", "stream", "kind")}
        as_text.update({c: pa.string() for c in text})
        named = {} if trailing is None else {"column_names": [*trailing, _AFTER_LAST_SEPARATOR],
                                             "skip_rows": 1}
        return (pcsv.ParseOptions(delimiter=self._sep(path), invalid_row_handler=skipped),
                pcsv.ConvertOptions(decimal_point=self.csv["decimal"], column_types=as_text,
                                    **({} if trailing is None else
                                       {"include_columns": trailing})),
                pcsv.ReadOptions(block_size=log_text.LOG_BLOCK, use_threads=False,
                                 encoding="utf8" if is_utf8(self.encoding) else self.encoding,
                                 **named))

    def _read_csv(self, f, path: str, bad_rows: list | None,
                  trailing: list[str] | None = None) -> pa.Table:
        import pyarrow.csv as pcsv

        parse, convert, read = self._csv_options(path, [], bad_rows, trailing)
        with undecodable_rows() as undecoded:
            try:
                return pcsv.read_csv(f, parse_options=parse, convert_options=convert,
                                     read_options=read)
            except pa.ArrowInvalid as e:
                raise self._unreadable_csv(path, e, undecoded()) from None

    def _stream_csv(self, f, path: str, wanted: list[str] | None = None,
                    bad_rows: list | None = None, header: str = "",
                    trailing: list[str] | None = None):
        """The file's `wanted` columns that it has (among those its `header` line names), as
        text (a file without any of them: one batch of no columns), or all its columns
        (`read(streamed=True)`), block by block."""
        import pyarrow.csv as pcsv

        parse, convert, read = self._csv_options(path, wanted or [], bad_rows, trailing)
        if wanted is not None:
            try:
                names = next(csv.reader([header], delimiter=self._sep(path)), [])
            except csv.Error as e:
                raise InputError(f"{path}: not a readable CSV file (its header: {e})") from None
            convert.include_columns = [c for c in wanted if c in names]
            if not convert.include_columns:  # (Arrow would read every column)
                yield pa.RecordBatch.from_pylist([])
                return
        with undecodable_rows() as undecoded:  # (Arrow reads ahead: for the whole read)
            try:
                reader = pcsv.open_csv(ArrowReadable(f), parse_options=parse,
                                       convert_options=convert, read_options=read)
            except pa.ArrowInvalid as e:
                raise self._unreadable_csv(path, e, undecoded()) from None
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    return
                except pa.ArrowInvalid as e:
                    if wanted is None and not undecoded():  # (a type that no longer fits: the
                        raise TypesChanged(path) from e  # whole file's read gives the type
                    raise self._unreadable_csv(path, e, undecoded()) from None  # all values fit)
                yield batch

    def _checked_header(self, path: str) -> tuple[str, list[str] | None]:
        """A CSV log's header line, and its column names when its lines end with the
        separator, as some exports write them (its first line after the header has one field
        more, empty); a header that seems split by another separator than the configured one
        is refused: each of the file's lines would otherwise be a dead letter.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "p.csv")
        >>> with open(path, "w") as f:
        ...     _ = f.write("id,t,y_pred\\na,1,x,\\n")
        >>> PredictionLogSpec.parse(path)._checked_header(path)
        ('id,t,y_pred', ['id', 't', 'y_pred'])
        """
        sep = self._sep(path)
        with FileSystems.open(path) as f:
            header, first = (f.readline().decode(without_bom(self.encoding), "replace")
                             .rstrip("\r\n") for _ in range(2))
        if (excel := excel_separator_line(path, header, "the option")) is not None:
            raise excel
        other = other_separator(header, sep)
        if other:
            raise InputError(f"{path}: not a readable CSV file (its header {header[:80]!r} has "
                             f"no {sep!r}); the file seems separated by {other!r}: "
                             f'give the option {json.dumps({"sep": other})}')
        try:
            names, fields = (next(csv.reader([line], delimiter=sep), [])
                             for line in (header, first))
        except csv.Error:  # (a quote over lines: Arrow's parse says what is wrong)
            return header, None
        return header, names if len(fields) == len(names) + 1 and fields[-1] == "" else None

    def _unreadable_csv(self, path: str, error: Exception, undecoded: bool) -> InputError:
        if undecoded or "invalid UTF8" in str(error):  # (in a column read as text)
            return undecodable(path, self.encoding, "invalid UTF-8", OPTION)
        return InputError(f"{path}: not a readable CSV file ({str(error).strip()})")

    def _all_text(self, batches, path: str):
        """The batches of a CSV log, each checked for a column Arrow could not read as UTF-8
        text (it reads such a column as bytes)."""
        for batch in batches:
            if any(pa.types.is_binary(t) or pa.types.is_large_binary(t)
                   for t in batch.schema.types):
                raise undecodable(path, self.encoding, "invalid UTF-8", OPTION)
            yield batch

    def _proba_map(self, batch: pa.RecordBatch, path: str) -> pa.MapArray:
        """The `score`, `proba_columns` or listed-score columns as one map column {class:
        probability} (null where a row has no number)."""
        if "scores" in self.proba:
            return self._listed_proba(batch, path)
        if "score" in self.proba:
            by_class = {str(self.proba["positive"]): self.proba["score"]}
        else:
            by_class = {str(c): column for c, column in self.proba["proba_columns"].items()}
        matrix = np.column_stack([self._numbers(batch, column, path)
                                  for column in by_class.values()])
        made = ~np.isnan(matrix).any(axis=1)
        k = len(by_class)
        keys = np.tile(np.array(list(by_class), dtype=object), int(made.sum()))
        offsets = np.concatenate([[0], np.cumsum(made * k)]).astype(np.int32)
        return pa.MapArray.from_arrays(pa.array(offsets), pa.array(keys, pa.string()),
                                       pa.array(matrix[made].ravel(), pa.float64()),
                                       mask=pa.array(~made))

    def _listed_proba(self, batch: pa.RecordBatch, path: str) -> pa.MapArray:
        """The `score_classes` and `scores` list columns as one map column {class: score}: a
        row with no lists, empty ones or a missing score has none; lists of two lengths stop
        the backfill, naming the prediction's id.

        >>> batch = pa.RecordBatch.from_pydict({"id": ["a", "b", "c"], "c": [["x", "y"], None,
        ...     ["x", "y"]], "s": [[0.25, 0.75], None, [0.5, None]]})
        >>> spec = PredictionLogSpec.parse('p.jsonl{"score_classes": "c", "scores": "s"}')
        >>> spec._listed_proba(batch, "p.jsonl").to_pylist()
        [[('x', 0.25), ('y', 0.75)], None, None]

        Classes listed in the option are every row's, in the order of its scores:

        >>> spec = PredictionLogSpec.parse('p.jsonl{"score_classes": ["y", "x"], "scores": "s"}')
        >>> spec._listed_proba(batch, "p.jsonl").to_pylist()[0]
        [('y', 0.25), ('x', 0.75)]
        """
        fixed = self.proba["score_classes"] if isinstance(self.proba["score_classes"], list) \
            else None
        lists = {}
        for option in LISTED[fixed is not None:]:
            name = self.proba[option]
            column = batch.column(batch.schema.get_field_index(name))
            if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
                ids = batch.column(batch.schema.get_field_index("id")) \
                    if "id" in batch.schema.names else None
                column = json_text_as_lists(column, ids, path, name, option, "classes"
                                            if option == LISTED[0] else "scores")
            if not _is_list(column):
                raise InputError(f"{path}: column {name!r} (option {option}) holds "
                                 f"{column.type}, not lists: {option} names a column of each "
                                 f"prediction's list of " + ("classes" if option == LISTED[0]
                                                             else "scores"))
            lists[option] = column
        scores = lists["scores"]
        lengths = pc.fill_null(pc.list_value_length(scores), 0).to_numpy()
        unscored = scores.is_null().to_numpy(zero_copy_only=False)  # (its classes: no matter)
        if fixed is None:
            classes = lists["score_classes"]
            listed = pc.fill_null(pc.list_value_length(classes), 0).to_numpy()
            expected = np.where(unscored, 0, listed)
        else:
            expected = np.where(unscored, 0, len(fixed))
        twice = np.flatnonzero(lengths != expected)
        if len(twice):
            row = int(twice[0])
            ids = batch.column(batch.schema.get_field_index("id")).to_pylist() \
                if "id" in batch.schema.names else [None] * batch.num_rows
            column = f"{self.proba['score_classes']!r}" if fixed is None else "score_classes"
            raise InputError(f"{path}: the prediction of id {ids[row]!r} lists "
                             f"{expected[row]} classes ({column}) and {lengths[row]} scores "
                             f"({self.proba['scores']!r}); each class has its score")
        name = self.proba["scores"]  # (its flattened values, named as the log names them)
        values = self._numbers(pa.RecordBatch.from_arrays([pc.list_flatten(scores)], [name]),
                               name, path)
        row_of = np.repeat(np.arange(batch.num_rows), lengths)
        missing = np.zeros(batch.num_rows, dtype=bool)
        missing[row_of[np.isnan(values)]] = True
        made = (lengths > 0) & ~missing
        keep = made[row_of]
        offsets = np.concatenate([[0], np.cumsum(np.where(made, lengths, 0))]).astype(np.int32)
        keys = pc.cast(pc.list_flatten(classes), pa.string()).filter(
            pa.array(made[np.repeat(np.arange(batch.num_rows), listed)])) \
            if fixed is None else pa.array(np.tile(np.array([str(c) for c in fixed],
                                                            dtype=object), int(made.sum())),
                                           pa.string())
        return pa.MapArray.from_arrays(pa.array(offsets), keys,
                                       pa.array(values[keep], pa.float64()),
                                       mask=pa.array(~made))

    def _numbers(self, batch: pa.RecordBatch, column: str, path: str) -> np.ndarray:
        """A probability column's values as floats (NaN: none)."""
        try:
            return pc.cast(batch.column(batch.schema.get_field_index(column)),
                           pa.float64()).to_numpy(zero_copy_only=False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            cells = batch.column(batch.schema.get_field_index(column))
            first = next((v for v in cells.to_pylist() if v is not None), None)
            if isinstance(first, str) and "," in first and self.csv["decimal"] != ",":
                raise InputError(f"{path}: column {column!r} holds numbers written with a "
                                 f"decimal comma ({first!r}); give the option "
                                 f'{{"decimal": ","}}') from None
            raise InputError(f"{path}: column {column!r} holds something other than "
                             f"probabilities (numbers); name the probability column(s) with "
                             f"score, proba_columns or scores") from None


def _is_list(column: pa.Array) -> bool:
    """Whether an Arrow column holds lists.

    >>> _is_list(pa.array([["a"]])), _is_list(pa.array(["a"]))
    (True, False)
    """
    return pa.types.is_list(column.type) or pa.types.is_large_list(column.type)


def _highest_class(maps: pa.MapArray) -> pa.Array:
    """Each map's class of the highest probability, the first of equals in the map's order
    (None for no map).

    >>> maps = pa.array([[("x", 0.25), ("y", 0.75)], None, [("x", 0.5), ("y", 0.5)]],
    ...                 pa.map_(pa.string(), pa.float64()))
    >>> _highest_class(maps).to_pylist()
    ['y', None, 'x']
    """
    offsets = maps.offsets.to_numpy()  # (into the whole children: a slice's too)
    lengths = np.where(maps.is_valid().to_numpy(zero_copy_only=False), np.diff(offsets), 0)
    rows = np.flatnonzero(lengths > 0)
    lengths = lengths[rows]
    within = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    at = np.repeat(offsets[:-1][rows], lengths) + within  # each row's entries, in order
    values = maps.items.to_numpy(zero_copy_only=False)[at]
    row_of = np.repeat(np.arange(len(rows)), lengths)
    highest = np.maximum.reduceat(values, np.cumsum(lengths) - lengths) if len(rows) else values
    at_highest = np.flatnonzero(values == highest[row_of])
    first = at[at_highest[np.unique(row_of[at_highest], return_index=True)[1]]]
    decided = np.full(len(maps), None, dtype=object)
    decided[rows] = np.array(maps.keys.to_pylist(), dtype=object)[first]
    return pa.array(decided, pa.string())


def _well_formed_set_aside(text: bytes, path: str) -> dict:
    """A log file's `SET_ASIDE_KEY` record: per stream and model, a list of events [seq, kind,
    id's text, time] or a count; one that cannot be read stops the backfill (`InputError`), which
    would otherwise score what those models predicted before they failed, unlike the run.

    >>> _well_formed_set_aside(b'{"s": {"m": [[14, "instance", "7", 7.0]], "n": 2}}', "p")
    {'s': {'m': [[14, 'instance', '7', 7.0]], 'n': 2}}
    >>> _well_formed_set_aside(b'{"s": {"m": [[14, "instance"]]}}', "p")
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: p: the record of the instances its run set aside (Parquet \
metadata delayed-eval.set-aside) cannot be read: s / m is not a count or a list of [seq, kind, \
id, time]; write the log again with delayed-eval run, or remove that key from the file's \
metadata
    """
    def well_formed(events) -> bool:
        return isinstance(events, int) or isinstance(events, list) and all(
            isinstance(e, list) and len(e) == 4 and isinstance(e[0], int) for e in events)

    try:
        recorded = json.loads(text)
        why = "" if isinstance(recorded, dict) else "not an object of streams"
    except ValueError as error:
        recorded, why = {}, f"not JSON ({error})"
    for stream, per_model in recorded.items():
        if not isinstance(per_model, dict):
            why = why or f"{stream} is not an object of models"
        for model, events in per_model.items() if isinstance(per_model, dict) else ():
            why = why or ("" if well_formed(events) else
                          f"{stream} / {model} is not a count or a list of [seq, kind, id, time]")
    if why:
        raise InputError(f"{path}: the record of the instances its run set aside (Parquet "
                         f"metadata {SET_ASIDE_KEY.decode()}) cannot be read: {why}; write the "
                         f"log again with delayed-eval run, or remove that key from the file's "
                         f"metadata")
    return recorded
