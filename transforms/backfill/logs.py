"""Prediction logs: which files (`PredictionLogSpec`), which columns, which models, read as
Arrow record batches. A log is a `.parquet` or `.csv` file, a glob or a folder of partitions,
read through Beam's FileSystems; `run`'s own `predictions.parquet` is one, and records its
models' order in its metadata (`MODEL_ORDER_KEY`)."""

from __future__ import annotations

import json
import os

import pyarrow as pa
from apache_beam.io.filesystems import FileSystems

from transforms.errors import InputError
from transforms.specs import split_options
from transforms.streams.table_files import table_files

# Defaults: the columns of `run`'s own predictions.parquet.
LOG_COLUMNS = {"stream": "stream", "model": "model", "id": "id", "kind": "kind", "time": "t",
               "prediction": "y_pred"}


# Per (stream, model): prediction rows read, and those that belong to no labelled instance.
LOG_COUNTERS = ("logged_predictions", "unmatched_predictions")


LOG_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}


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
