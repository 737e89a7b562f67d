"""Logged streams in tables (CSV, JSON Lines, Parquet): event logs, instance + label tables,
and labelled rows."""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterator

import numpy as np
import pandas as pd

from transforms.records import (EVENT_KINDS, INSTANCE, LABEL, RANK_INSTANCE, RANK_LABEL,
                                RANK_LABEL_AFTER_INSTANCE, dead_letter)
from transforms.rows import Checks, InputError, labelled_rows

FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl",
           ".parquet": "parquet", ".pq": "parquet", ".arff": "arff"}


def read_table(path: str, fmt: str) -> pd.DataFrame:
    try:
        if fmt == "csv":
            return pd.read_csv(path)
        if fmt == "jsonl":
            return pd.read_json(path, lines=True)
        return pd.read_parquet(path)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: cannot read as {fmt}: {e}") from None
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def columns_of(path: str, fmt: str) -> list[str]:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    if fmt == "csv":
        try:
            return list(pd.read_csv(path, nrows=0).columns)
        except pd.errors.EmptyDataError:
            return []
    return list(read_table(path, fmt).columns)


def n_rows(path: str, fmt: str) -> int:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).metadata.num_rows
    if fmt == "csv":
        return len(pd.read_csv(path, nrows=1))
    return len(read_table(path, fmt))


def event_seconds(df: pd.DataFrame, col: str | None) -> tuple[np.ndarray, np.ndarray]:
    """Seconds as floats and a mask of rows whose time did not parse."""
    if col is None or col not in df.columns:
        t = np.arange(len(df), dtype=float)
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

    `numeric` remembers per column whether its text is read as numbers: decided on the first
    chunk where the column holds text, kept for the rest of the table."""
    bad: dict[str, np.ndarray] = {}
    out = df[columns].copy()
    for c in columns:
        s = out[c]
        if s.dtype == object or pd.api.types.is_string_dtype(s):
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


def table_chunks(path: str, fmt: str) -> Iterator[tuple[int, pd.DataFrame]]:
    """(rows before it, chunk) for a table, in file order, in chunks of `CHUNK_ROWS` rows, so
    memory does not grow with the table's length: Parquet batch by batch (its column types are
    the file's); CSV with one type per column for the whole file (`csv_dtypes`). JSON Lines is
    one chunk, read whole.
    """
    row0 = 0
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            for batch in pq.ParquetFile(path).iter_batches(batch_size=CHUNK_ROWS):
                yield row0, batch.to_pandas()
                row0 += batch.num_rows
        elif fmt == "csv":
            for chunk in pd.read_csv(path, chunksize=CHUNK_ROWS, dtype=csv_dtypes(path)):
                yield row0, chunk
                row0 += len(chunk)
        else:
            yield 0, read_table(path, fmt)
    except pd.errors.EmptyDataError:
        return
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: cannot read as {fmt} after {row0} rows: {e}") from None


def csv_dtypes(path: str) -> dict:
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
    for chunk in pd.read_csv(path, chunksize=CHUNK_ROWS):
        for column, dtype in chunk.dtypes.items():
            kinds.setdefault(column, set()).add(dtype)
    return {column: "float64" if all(pd.api.types.is_numeric_dtype(d)
                                     and not pd.api.types.is_bool_dtype(d) for d in dtypes)
            else object for column, dtypes in kinds.items() if len(dtypes) > 1}


def table_events(spec, delay, checks: Checks) -> Iterator:
    """Events of a logged table stream (see `transforms.sources` for the shapes)."""
    o = spec.options
    fmt = spec.format
    id_col, time_col, kind_col = o.get("id", "id"), o.get("time", "time"), o.get("kind", "kind")
    label_col, label_time_col = o.get("label", "label"), o.get("label_time", "label_time")
    missing = o.get("missing", "dead-letter")
    chunks = table_chunks(spec.source, fmt)
    _, first = next(chunks, (0, None))
    if first is None or first.empty:
        raise InputError(f"{spec.source}: the stream is empty (no rows)")
    labels_df = read_table(o["labels"], fmt_of(o["labels"], fmt)) if "labels" in o else None
    reserved = {id_col, time_col, kind_col, label_col, label_time_col}
    if delay.kind == "column":
        reserved.add(delay.column)
    features = o.get("features") or [c for c in first.columns if c not in reserved]
    numeric: dict = {}  # text feature columns read as numbers (decided on their first chunk)

    def rows_of(frame: pd.DataFrame, path: str, seq0: int, row0: int = 0):
        """Per row: (seq, row number, id, t, x or None, y, label_t, own_delay) or a dead letter.
        Rows become Python objects `CHUNK_ROWS` at a time."""
        t, bad_t = event_seconds(frame, time_col)
        lt = event_seconds(frame, label_time_col)[0] if label_time_col in frame.columns else None
        feats = [c for c in features if c in frame.columns]
        fx, bad_cells = _feature_frame(frame, feats, numeric)
        for a in range(0, len(frame), CHUNK_ROWS):
            b = min(a + CHUNK_ROWS, len(frame))
            n = b - a
            records = fx.iloc[a:b].to_dict("records") if feats else [None] * n
            ids = frame[id_col].iloc[a:b].tolist() if id_col in frame.columns else \
                list(range(row0 + a, row0 + b))
            ys = frame[label_col].iloc[a:b].tolist() if label_col in frame.columns else \
                [None] * n
            own = frame[delay.column].iloc[a:b].tolist() if delay.kind == "column" and \
                delay.column in frame.columns else [None] * n
            for j in range(a, b):  # j: the row in `frame`, i: in this slice's lists
                i = j - a
                row = row0 + j + 1
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
                x, problem = _features(records[i], missing)
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
                yield (seq0 + row0 + j, row, key, float(t[j]), x, y, label_t, own[i])

    if kind_col in first.columns or labels_df is not None:
        rest = [chunk for _, chunk in chunks]  # an event log is read whole (see _event_log)
        df = pd.concat([first, *rest], ignore_index=True) if rest else first
        yield from _event_log(spec, df, labels_df, rows_of, kind_col, checks)
        return

    if id_col not in first.columns:
        checks.numbered_ids()
    labelled = (item if isinstance(item, dict) else item[1:]
                for row0, chunk in itertools.chain([(0, first)], chunks)
                for item in rows_of(chunk, spec.source, 0, row0))
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


def _event_log(spec, df, labels_df, rows_of, kind_col, checks: Checks) -> Iterator:
    """Event logs (kind column) and instance + label tables: times come from the input."""
    o = spec.options
    items = []
    kinds = df[kind_col].tolist() if kind_col in df.columns else [INSTANCE] * len(df)
    for item in rows_of(df, spec.source, 0):
        if isinstance(item, dict):
            items.append(item)
            continue
        seq, row, key, t, x, y, _, _ = item
        kind = kinds[row - 1]
        if kind not in EVENT_KINDS:
            items.append(dead_letter(spec.name, f"kind {kind!r} is not one of {EVENT_KINDS}",
                                     file=spec.source, row=row, field=kind_col))
            continue
        items.append((seq, row, spec.source, kind, key, t, x, y))
    if labels_df is not None:
        for item in rows_of(labels_df, o["labels"], len(df)):
            if isinstance(item, dict):
                items.append(item)
                continue
            seq, row, key, t, x, y, _, _ = item
            items.append((seq, row, o["labels"], LABEL, key, t, x, y))
    instance_t = {}
    for it in items:
        if not isinstance(it, dict) and it[3] == INSTANCE:
            instance_t.setdefault(it[4], it[5])
    for it in items:
        if isinstance(it, dict):
            yield it
            continue
        seq, row, path, kind, key, t, x, y = it
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
        elif kind == INSTANCE and (problem := checks.instance(key, path, row,
                                                               o.get("id", "id"))):
            yield problem
        else:
            yield (t, RANK_INSTANCE, seq, kind, key, x or {}, None)
