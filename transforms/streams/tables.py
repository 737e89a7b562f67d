"""Logged streams in tables (CSV, JSON Lines, Parquet): event logs, instance + label tables,
and labelled rows."""

from __future__ import annotations

import contextlib
import functools
import heapq
import itertools
import math
import os
import re
import warnings
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa

from transforms.errors import InputError
from transforms.records import (EVENT_KINDS, INSTANCE, LABEL, RANK_INSTANCE, RANK_LABEL,
                                RANK_LABEL_AFTER_INSTANCE, dead_letter)
from transforms.streams.rows import Checks, labelled_rows

FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl",
           ".parquet": "parquet", ".pq": "parquet", ".arff": "arff"}


TABLE_FORMATS = tuple(ext for ext, fmt in FORMATS.items() if fmt != "arff")


def table_files(pattern: str, extensions: tuple = TABLE_FORMATS) -> list[str]:
    """A table's files, sorted: a file, a glob, or a directory (every file below it with one of
    the `extensions`, e.g. hive partitions `date=2026-11-01/part-0.parquet`), found through
    Beam's FileSystems (the way `gs://` and `s3://` paths are found too).

    >>> import tempfile, os
    >>> root = tempfile.mkdtemp()
    >>> for day in ("2026-11-02", "2026-11-01"):
    ...     os.makedirs(f"{root}/date={day}")
    ...     open(f"{root}/date={day}/part-0.csv", "w").close()
    >>> [os.path.relpath(f, root) for f in table_files(root)]
    ['date=2026-11-01/part-0.csv', 'date=2026-11-02/part-0.csv']
    """
    if os.path.isfile(pattern):
        return [pattern]
    from apache_beam.io.filesystems import FileSystems  # here: reading a local file needs no Beam

    if FileSystems.exists(pattern) and not pattern.lower().endswith(extensions):
        pattern = FileSystems.join(pattern, "**")
    found = [m.path for m in FileSystems.match([pattern])[0].metadata_list]
    return sorted(f for f in found if os.path.splitext(f)[1].lower() in extensions)


@contextlib.contextmanager
def opened(path: str):
    """A local path as it is (pandas and Arrow read it themselves), else the file opened with
    Beam's FileSystems."""
    if "://" not in path:
        yield path
        return
    from apache_beam.io.filesystem import CompressionTypes
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        yield f


CSV_OPTIONS = ("sep", "encoding")  # stream options handed to pandas' CSV reader


def csv_options(options: dict) -> dict:
    """The stream options that say how to read its CSV files (`sep`, `encoding`).

    >>> csv_options({"sep": ";", "time": "ts"})
    {'sep': ';'}
    """
    return {k: options[k] for k in CSV_OPTIONS if k in options}


def read_table(path: str, fmt: str, csv: dict | None = None) -> pd.DataFrame:
    try:
        with opened(path) as source:
            if fmt == "csv":
                return pd.read_csv(source, **(csv or {}))
            if fmt == "jsonl":  # its broken lines are dead letters of the stream's read
                frames = [c[2] for c in _jsonl_chunks(path, None, csv, None)
                          if not isinstance(c, dict)]
                return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
            return pd.read_parquet(source)
    except UnicodeDecodeError as e:
        raise _undecodable(path, e, csv) from None
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: cannot read as {fmt}: {e}") from None
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def _undecodable(path: str, error: UnicodeDecodeError, csv: dict | None) -> InputError:
    """The error of a file that is not in its encoding, naming the first line that is not."""
    encoding = (csv or {}).get("encoding", "utf-8")
    where = path
    if "://" not in path:
        with open(path, "rb") as f:
            for number, line in enumerate(f, 1):
                try:
                    line.decode(encoding)
                except UnicodeDecodeError:
                    where = f"{path}, line {number}"
                    break
    return InputError(f"{where}: not {encoding} text ({error.reason}); give the file's "
                      f'encoding with the stream option {{"encoding": "latin-1"}} (or '
                      f"cp1252, utf-16, ...)")


def columns_of(path: str, fmt: str, csv: dict | None = None) -> list[str]:
    try:
        with opened(path) as source:
            if fmt == "parquet":
                import pyarrow.parquet as pq

                return list(pq.read_schema(source).names)
            if fmt == "csv":
                try:
                    return list(pd.read_csv(source, nrows=0, **(csv or {})).columns)
                except pd.errors.EmptyDataError:
                    return []
    except UnicodeDecodeError as e:
        raise _undecodable(path, e, csv) from None
    except (OSError, ValueError, pa.ArrowException) as e:  # a truncated or corrupt file
        raise InputError(f"{path}: not a readable {fmt} file ({e}); is it complete?") from None
    return list(read_table(path, fmt, csv).columns)


def head_of(path: str, fmt: str, csv: dict | None = None, rows: int = 1000) -> pd.DataFrame:
    """The first `rows` rows of a table file (a JSON Lines file is read whole)."""
    with opened(path) as source:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            batch = next(pq.ParquetFile(source).iter_batches(batch_size=rows), None)
            return batch.to_pandas() if batch is not None else pd.DataFrame()
        if fmt == "csv":
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", pd.errors.ParserWarning)
                    return pd.read_csv(source, nrows=rows, on_bad_lines="warn",
                                       **(csv or {}))
            except pd.errors.EmptyDataError:
                return pd.DataFrame()
    return read_table(path, fmt, csv).head(rows)


def n_rows(path: str, fmt: str, csv: dict | None = None) -> int:
    with opened(path) as source:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return pq.ParquetFile(source).metadata.num_rows
        if fmt == "csv":
            try:
                return len(pd.read_csv(source, nrows=1, **(csv or {})))
            except pd.errors.EmptyDataError:
                return 0
    return len(read_table(path, fmt, csv))


def event_seconds(df: pd.DataFrame, col: str | None, first: int = 0) -> tuple[np.ndarray,
                                                                               np.ndarray]:
    """Seconds as floats and a mask of rows whose time did not parse; without the column, the
    row's index in the stream (`first` for the frame's first row)."""
    if col is None or col not in df.columns:
        t = np.arange(first, first + len(df), dtype=float)
        return t, np.zeros(len(df), dtype=bool)
    s = df[col]
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
        t = s.to_numpy(dtype=float)
    elif pd.api.types.is_datetime64_any_dtype(s):
        dt = pd.to_datetime(s, utc=True)
        t = (dt - pd.Timestamp(0, tz="UTC")).dt.total_seconds().to_numpy(dtype=float, copy=True)
        t[dt.isna().to_numpy()] = np.nan
    else:
        num = pd.to_numeric(s, errors="coerce")
        dt = pd.to_datetime(s.where(num.isna()), utc=True, errors="coerce", format="ISO8601")
        secs = (dt - pd.Timestamp(0, tz="UTC")).dt.total_seconds()
        t = num.fillna(secs).to_numpy(dtype=float)
    return t, ~np.isfinite(t)


def _feature_frame(df: pd.DataFrame, columns: list[str], numeric: dict) -> tuple[pd.DataFrame,
                                                                               dict]:
    """Coerce mostly-numeric text columns to numbers; report cells that did not parse.

    `numeric` remembers per column whether its text is read as numbers, for the rest of the
    table: yes once a chunk had it as numbers, else decided on the first chunk with text."""
    bad: dict[str, np.ndarray] = {}
    out = df[columns].copy()
    for c in columns:
        s = out[c]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            numeric.setdefault(c, True)
        elif s.dtype == object or pd.api.types.is_string_dtype(s):
            num = pd.to_numeric(s, errors="coerce")
            present = s.notna()
            parsed = num.notna() & present
            if c not in numeric and present.sum():
                numeric[c] = parsed.sum() > 0.5 * present.sum()
            if numeric.get(c):
                bad[c] = (present & ~parsed).to_numpy()
                out[c] = num
    return out, bad


CHUNK_ROWS = 65_536  # rows turned into Python objects at a time
# Parquet read through a 1 MiB buffer, without pre-buffering: by default Arrow pre-buffers whole
# column chunks and the peak grew with the file (a probe iterating batches of 1M / 2M / 4M rows:
# 181 / 215 / 273 MiB; with these options 157 / 185 / 165).
PARQUET_STREAMING = {"pre_buffer": False, "buffer_size": 1 << 20}


def table_chunks(files: list[str], fmt: str | None, default: str = "csv",
                 columns: list[str] | None = None, csv: dict | None = None,
                 stream: str | None = None) -> Iterator:
    """(file, row numbers, chunk) for a table's files, in order, in chunks of `CHUNK_ROWS`
    rows, so memory does not grow with the table's length: Parquet batch by batch (its column
    types are the file's); CSV with one type per column for the whole file (`csv_dtypes`); JSON
    Lines line by line. `fmt`, if given, overrides the files' extensions;
    `default` is the format of a file without a known one; `columns`, if given, are the only
    columns read (with the values the whole read gives them); `csv`: `csv_options`.

    The row numbers are each chunk row's 1-based data row in its file. A CSV line with more or
    fewer fields than the header, or a JSON Lines line that is no JSON object, is a dead letter
    of `stream` (a dict, in its place), and the rest of the file is read.
    """
    for path in files:
        file_fmt = fmt or fmt_of(path, default)
        row0 = 0
        try:
            if file_fmt == "parquet":
                import pyarrow.parquet as pq

                with opened(path) as source:
                    parquet = pq.ParquetFile(source, **PARQUET_STREAMING)
                    for batch in parquet.iter_batches(batch_size=CHUNK_ROWS, columns=columns):
                        yield path, np.arange(row0 + 1, row0 + batch.num_rows + 1), \
                            batch.to_pandas()
                        row0 += batch.num_rows
            elif file_fmt == "csv":
                dtypes = csv_dtypes(path, columns, csv)  # a first pass
                with opened(path) as source:
                    for item in _csv_chunks(source, path, dtypes, columns, csv, stream):
                        if not isinstance(item, dict):
                            row0 = item[1][-1] if len(item[1]) else row0
                        yield item
            elif file_fmt == "jsonl":
                yield from _jsonl_chunks(path, columns, csv, stream)
            else:
                table = read_table(path, file_fmt, csv)
                yield path, np.arange(1, len(table) + 1), \
                    table if columns is None else table[columns]
        except pd.errors.EmptyDataError:
            continue
        except UnicodeDecodeError as e:
            raise _undecodable(path, e, csv) from None
        except (OSError, ValueError, pa.ArrowException) as e:  # truncated, corrupt, unreadable
            raise InputError(f"{path}: cannot read as {file_fmt} after {row0} rows: {e}") \
                from None


def _jsonl_chunks(path: str, columns, csv: dict | None, stream: str | None) -> Iterator:
    """A JSON Lines file's chunks with their line numbers, and a dead letter for each line
    that is not a JSON object (blank lines are skipped)."""
    import json

    encoding = (csv or {}).get("encoding", "utf-8")
    records, numbers = [], []

    def chunk():
        frame = pd.DataFrame.from_records(records)
        if columns is not None:
            frame = frame.reindex(columns=columns)
        return path, np.array(numbers), frame

    with opened(path) as source:
        lines = open(source, "rb") if isinstance(source, str) else source
        with lines:
            for number, raw in enumerate(lines, 1):
                text = raw.decode(encoding).strip()
                if not text:
                    continue
                try:
                    record = json.loads(text)
                except ValueError as e:
                    record, reason = None, f"not JSON: {e}"
                else:
                    reason = "not a JSON object" if not isinstance(record, dict) else None
                if reason:
                    yield dead_letter(stream, reason, file=path, row=number)
                    continue
                records.append(record)
                numbers.append(number)
                if len(records) >= CHUNK_ROWS:
                    yield chunk()
                    records, numbers = [], []
    if records:
        yield chunk()


def _csv_chunks(source, path: str, dtypes: dict, columns, csv: dict | None,
                stream: str | None) -> Iterator:
    """A CSV file's chunks with their data row numbers, and a dead letter for each line with
    more fields than the header (pandas skips it with a warning, which names its line) or
    fewer (pandas would fill the missing fields: `_short_rows` finds them)."""
    reader = pd.read_csv(source, chunksize=CHUNK_ROWS, dtype=dtypes, usecols=columns,
                         on_bad_lines="warn", **(csv or {}))
    row = 0  # data rows of the file so far, kept or skipped
    short_rows = None  # {data row: reason}, found once if needed
    while True:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            chunk = next(reader, None)
        skipped = []
        for w in caught:
            for line, why in re.findall(r"Skipping line (\d+): (.+)", str(w.message)):
                skipped.append(int(line) - 1)  # the header is line 1
                yield dead_letter(stream, f"{why.strip()} (more fields than the header)",
                                  file=path, row=int(line) - 1)
        if chunk is None:
            return
        numbers = np.setdiff1d(np.arange(row + 1, row + len(chunk) + len(skipped) + 1),
                               skipped)[:len(chunk)]
        row += len(chunk) + len(skipped)
        if columns is None and len(chunk.columns) and chunk.iloc[:, -1].isna().any():
            if short_rows is None:
                short_rows = _short_rows(path, csv)
            bad = np.isin(numbers, list(short_rows))
            for number in numbers[bad].tolist():
                yield dead_letter(stream, short_rows[number], file=path, row=number)
            numbers, chunk = numbers[~bad], chunk[~bad]
        yield path, numbers, chunk


def _short_rows(path: str, csv: dict | None) -> dict:
    """{data row number: reason} of the lines of a local CSV file with fewer fields than its
    header (one pass with Python's csv module; blank lines are skipped, as pandas skips them).
    The last line, without a newline, is a file cut mid-line. Found once per file version:
    an event log (whose label column is empty on instance rows) is read twice."""
    if "://" in path:
        return {}
    options = csv or {}
    stat = os.stat(path)
    return _short_rows_of(path, stat.st_size, stat.st_mtime_ns, options.get("sep", ","),
                          options.get("encoding", "utf-8"))


@functools.lru_cache(maxsize=8)
def _short_rows_of(path: str, size: int, mtime_ns: int, sep: str, encoding: str) -> dict:
    import csv as csvlib

    short, row = {}, 0
    with open(path, encoding=encoding, newline="") as f:
        records = csvlib.reader(f, delimiter=sep)
        width = len(next(records, []))
        for fields in records:
            if not fields:
                continue
            row += 1
            if len(fields) < width:
                short[row] = f"the line is cut short: {len(fields)} of {width} fields"
    if row in short:
        with open(path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            if f.read(1) not in (b"\n", b"\r"):
                short[row] += " (the file ends mid-line)"
    return short


def rows_in_time_order(spec) -> bool:
    """Whether a table of labelled rows is in time order, told from its time column alone:
    its row numbers (no time column; an ARFF file's rows but MOA-style delayed ones), or its
    time column read by itself. Its labels
    then come after their instances (a delay is never negative, and a label time before its
    instance's is a dead letter), so no event is read after a later one was due, and the
    per-stream replay can take it. False means "not told this cheaply" — an event log,
    instance + label tables, times out of order, a file that cannot be read — and the caller
    reads the whole stream to find out.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.parquet")
    >>> pd.DataFrame({"time": [1.0, 2.0, 2.0, 5.0], "a": [0.1] * 4}).to_parquet(path)
    >>> from transforms.streams.sources import StreamSpec
    >>> rows_in_time_order(StreamSpec.parse(path))
    True
    >>> pd.DataFrame({"time": [2.0, 1.0], "a": [0.1] * 2}).to_parquet(path)
    >>> rows_in_time_order(StreamSpec.parse(path))
    False
    """
    o = spec.options
    time_col, kind_col = o.get("time", "time"), o.get("kind", "kind")
    try:
        if spec.format == "arff":  # its rows' times are their numbers, unless MOA-style delayed
            return not o.get("delayed")
        if "labels" in o:
            return False
        files = table_files(spec.source)
        formats = [o.get("format") or fmt_of(path, "csv") for path in files]
        columns = [columns_of(path, fmt, csv_options(o)) for path, fmt in zip(files, formats)]
        if not files or any(kind_col in c for c in columns):
            return False
        timed = [time_col in c for c in columns]
        if not any(timed):
            return True  # row numbers
        if not all(timed):
            return False
        last = -math.inf
        for item in table_chunks(files, o.get("format"), columns=[time_col],
                                 csv=csv_options(o)):
            if isinstance(item, dict):
                return False  # a line that is no row: left to the whole read
            frame = item[2]
            column = frame[time_col]
            if column.dtype == object and not all(isinstance(v, str) for v in column.dropna()):
                return False  # numbers and text in one column: left to the whole read
            t, bad = event_seconds(frame, time_col)
            t = t[~bad]
            if len(t) and (t[0] < last or np.count_nonzero(t[1:] < t[:-1])):
                return False
            last = t[-1] if len(t) else last
        return True
    except (OSError, ValueError):  # (InputError too) the whole read reports it
        return False


def csv_dtypes(path: str, columns: list[str] | None = None, csv: dict | None = None) -> dict:
    """The columns of a CSV file whose type pandas would infer differently from chunk to chunk
    (it looks at one chunk at a time), with one type for the whole file: numbers if every chunk
    has numbers (ints and floats: float), else text.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("a,b,c\\n" + "1,x,2\\n" * CHUNK_ROWS + "1.5,y,z\\n")
    >>> csv_dtypes(path)
    {'a': 'float64', 'c': <class 'object'>}
    """
    kinds: dict[str, set] = {}
    with opened(path) as source, warnings.catch_warnings():
        warnings.simplefilter("ignore", pd.errors.ParserWarning)  # the second pass tells
        for chunk in pd.read_csv(source, chunksize=CHUNK_ROWS, usecols=columns,
                                 on_bad_lines="warn", **(csv or {})):
            for column, dtype in chunk.dtypes.items():
                kinds.setdefault(column, set()).add(dtype)
    return {column: "float64" if all(pd.api.types.is_numeric_dtype(d)
                                     and not pd.api.types.is_bool_dtype(d) for d in dtypes)
            else object for column, dtypes in kinds.items() if len(dtypes) > 1}


def table_events(spec, delay, checks: Checks) -> Iterator:
    """Events of a logged table stream (see `transforms.streams.sources` for the shapes)."""
    o = spec.options
    id_col, time_col, kind_col = o.get("id", "id"), o.get("time", "time"), o.get("kind", "kind")
    label_col, label_time_col = o.get("label", "label"), o.get("label_time", "label_time")
    missing = o.get("missing", "dead-letter")
    csv = csv_options(o)
    chunks = table_chunks(table_files(spec.source), o.get("format"), csv=csv, stream=spec.name)
    leading = []  # dead letters (bad lines) before the first chunk
    first = next(chunks, None)
    while isinstance(first, dict):
        leading.append(first)
        first = next(chunks, None)
    if first is None:
        raise InputError(f"{spec.source}: the stream is empty (no rows)")
    columns = list(first[2].columns)
    reserved = {id_col, time_col, kind_col, label_col, label_time_col}
    if delay.kind == "column":
        reserved.add(delay.column)
    features = o.get("features") or [c for c in columns if c not in reserved]
    numeric: dict = {}  # text feature columns read as numbers (decided on their first chunk)

    def rows_of(frame: pd.DataFrame, path: str, seq0: int, row_numbers: np.ndarray):
        """Per row: (seq, row number, id, t, x or None, y, label_t, own_delay, kind) or a dead
        letter; `seq0` is the frame's first row in the stream, `row_numbers` its rows' numbers
        in their file. Rows become Python objects `CHUNK_ROWS` at a time."""
        t, bad_t = event_seconds(frame, time_col, seq0)
        lt = event_seconds(frame, label_time_col)[0] if label_time_col in frame.columns else None
        feats = [c for c in features if c in frame.columns]
        fx, bad_cells = _feature_frame(frame, feats, numeric)
        # Rows of finite numbers only (the usual case) are clean as pandas gives them.
        finite = np.zeros(len(frame), dtype=bool)
        if feats and all(d.kind in "iuf" for d in fx.dtypes):  # ints and floats
            finite = np.isfinite(fx.to_numpy(dtype=float, na_value=np.nan)).all(axis=1)
        for a in range(0, len(frame), CHUNK_ROWS):
            b = min(a + CHUNK_ROWS, len(frame))
            n = b - a
            records = fx.iloc[a:b].to_dict("records") if feats else [None] * n
            ids = frame[id_col].iloc[a:b].tolist() if id_col in frame.columns else \
                list(range(seq0 + a, seq0 + b))
            ys = frame[label_col].iloc[a:b].tolist() if label_col in frame.columns else \
                [None] * n
            own = frame[delay.column].iloc[a:b].tolist() if delay.kind == "column" and \
                delay.column in frame.columns else [None] * n
            kinds = frame[kind_col].iloc[a:b].tolist() if kind_col in frame.columns else \
                [INSTANCE] * n
            for j in range(a, b):  # j: the row in `frame`, i: in this slice's lists
                i = j - a
                row = int(row_numbers[j])
                if bad_t[j]:
                    yield dead_letter(spec.name, f"time {frame[time_col].iloc[j]!r} is neither a "
                                      f"number nor an ISO datetime", file=path, row=row,
                                      field=time_col)
                    continue
                bad_field = next((c for c, m in bad_cells.items() if m[j]), None)
                if bad_field is not None:
                    yield dead_letter(spec.name, f"value {frame[bad_field].iloc[j]!r} is not a "
                                      f"number", file=path, row=row, field=bad_field)
                    continue
                x, problem = (records[i], None) if finite[j] else \
                    _features(records[i], missing)
                if problem:
                    yield dead_letter(spec.name, f"feature is {problem[1]}", file=path,
                                      row=row, field=problem[0])
                    continue
                y = ys[i]
                if isinstance(y, float) and math.isnan(y):
                    y = None
                elif isinstance(y, np.generic):
                    y = y.item()
                label_t = None
                if lt is not None and y is not None and math.isfinite(lt[j]):
                    label_t = float(lt[j])
                key = ids[i].item() if isinstance(ids[i], np.generic) else ids[i]
                yield (seq0 + j, row, key, float(t[j]), x, y, label_t, own[i], kinds[i])

    def numbered(chunks, seq0: int = 0):
        """rows_of over chunks, with each chunk's first row in the stream (from `seq0`)."""
        for chunk in chunks:
            if isinstance(chunk, dict):  # a line that is no row
                yield chunk["file"], chunk
                continue
            path, row_numbers, frame = chunk
            yield from ((path, item) for item in rows_of(frame, path, seq0, row_numbers))
            seq0 += len(frame)

    chunks = itertools.chain(leading, [first], chunks)
    if kind_col in columns or "labels" in o:
        # Two passes over the instance table: the first notes each instance's time (a label is
        # checked against its instance, wherever that is in the table), the second streams the
        # rows, merged in time with the label table's, so a log in time order can be replayed
        # per stream, holding what is pending rather than the whole table.
        # The first pass also finds the repeated ids (first wins), so the second keeps no set.
        instance_t: dict = {}
        repeated: set = set()  # the rows (seq) of instances whose id an earlier one had
        n_rows = 0  # the instance table's rows: the label table's are numbered after them
        for chunk in chunks:
            if isinstance(chunk, dict):
                continue  # the second pass reports it
            path, row_numbers, frame = chunk
            for item in rows_of(frame, path, n_rows, row_numbers):
                if not isinstance(item, dict) and item[8] == INSTANCE:
                    if item[2] in instance_t:
                        repeated.add(item[0])
                    else:
                        instance_t[item[2]] = item[3]
            n_rows += len(frame)
        instances = numbered(table_chunks(table_files(spec.source), o.get("format"), csv=csv,
                                          stream=spec.name))
        label_files = table_files(o["labels"]) if "labels" in o else []
        labels = numbered(table_chunks(label_files, None, default=spec.format, csv=csv,
                                       stream=spec.name), n_rows)
        yield from _event_log(spec, _merged_in_time(instances, labels), instance_t, repeated,
                              kind_col, checks)
        return

    if id_col not in columns:
        checks.numbered_ids()
    # A table without feature columns (for baselines) gives each row no features ({}), which
    # is not a row whose every feature is empty (None: a dead letter in `labelled_rows`).
    labelled = (item if isinstance(item, dict) else
                (path, *item[1:4], item[4] if features else {}, *item[5:8])
                for path, item in numbered(chunks))
    yield from labelled_rows(spec, labelled, delay, checks)


def _features(x: dict | None, missing: str) -> tuple[dict | None, tuple | None]:
    """A row's features without its missing values (None: the row has none — a label row of an
    event log), or the (field, value) of the first value that is not a finite number."""
    if x is None or all(v is None or (isinstance(v, float) and math.isnan(v))
                        for v in x.values()):
        return None, None
    clean = {}
    for k, v in x.items():
        if isinstance(v, float) and not math.isfinite(v):
            if math.isnan(v) and missing == "drop":
                continue
            return None, (k, v)
        if v is not None:
            clean[k] = v.item() if isinstance(v, np.generic) else v
    return clean, None


def fmt_of(path: str, default: str) -> str:
    return FORMATS.get(os.path.splitext(path)[1].lower(), default)


def _merged_in_time(instances, labels) -> Iterator:
    """(file, row item, from the label table) for two tables' rows, merged by time — at equal
    times the instance table's first; a dead letter keeps its place after its table's previous
    row. Tables in time order give rows in time order; any others still give every row."""
    def timed(rows, from_labels: bool):
        t = -math.inf
        for path, item in rows:
            if not isinstance(item, dict):
                t = item[3]
            yield (t, from_labels), path, item, from_labels

    for _, path, item, from_labels in heapq.merge(timed(instances, False), timed(labels, True),
                                                  key=lambda r: r[0]):
        yield path, item, from_labels


def _event_log(spec, rows, instance_t: dict, repeated: set, kind_col,
               checks: Checks) -> Iterator:
    """Event logs (kind column) and instance + label tables: times come from the input. `rows`:
    (file, row or dead letter, whether it is the label table's: all its rows are labels);
    `instance_t`: each instance id's first time in the instance table; `repeated`: the rows
    (seq) of later instances with an id already used."""
    o = spec.options
    for path, item, from_labels in rows:
        if isinstance(item, dict):
            yield item
            continue
        seq, row, key, t, x, y, _, _, kind = item
        if from_labels:
            kind = LABEL
        elif kind not in EVENT_KINDS:
            yield dead_letter(spec.name, f"kind {kind!r} is not one of {EVENT_KINDS}",
                              file=path, row=row, field=kind_col)
            continue
        if kind == LABEL:
            if y is None:
                yield dead_letter(spec.name, "label row without a label", file=path, row=row,
                                  field=o.get("label", "label"))
                continue
            if problem := checks.label(y, path, row, o.get("label", "label")):
                yield problem
                continue
            t0 = instance_t.get(key)
            if t0 is not None and t < t0:
                yield dead_letter(spec.name, f"label at {t} is earlier than its instance at "
                                  f"{t0}", file=path, row=row, field=o.get("time", "time"))
                continue
            rank = RANK_LABEL if t0 is None or t > t0 else RANK_LABEL_AFTER_INSTANCE
            yield (t, rank, seq, LABEL, key, x or None, y)
        elif kind == INSTANCE and seq in repeated:
            yield checks.duplicate(key, path, row, o.get("id", "id"))
        else:
            yield (t, RANK_INSTANCE, seq, kind, key, x or {}, None)
