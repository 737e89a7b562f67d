"""Logged streams in tables (CSV, JSON Lines, Parquet): event logs, instance + label tables,
and labelled rows."""

from __future__ import annotations

import copy
import heapq
import itertools
import math
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from transforms.errors import InputError
from transforms.records import (EVENT_KINDS, INSTANCE, LABEL, RANK_INSTANCE, RANK_LABEL,
                                RANK_LABEL_AFTER_INSTANCE, dead_letter, fields_record,
                                is_missing, readable_time, with_record)
from transforms.streams.rows import Checks, labelled_rows, number_text
from transforms.streams.table_files import (CHUNK_ROWS, columns_of, csv_options, fmt_of, numbers_of,
                                            table_chunks, table_files, text_facts)
from transforms.streams.times import TimeReading, event_seconds, time_problem


def _feature_frame(df: pd.DataFrame, columns: list[str], numeric: dict) -> tuple[pd.DataFrame,
                                                                               dict]:
    """Coerce mostly-numeric text columns to numbers; report cells that did not parse.

    `numeric` remembers per column whether its text is read as numbers, for the rest of the
    table: yes once a chunk had it as numbers, else decided on the first chunk with text. A
    column the chunk lacks (a key no line of it has, a column its file lacks) is all missing,
    and decides nothing."""
    bad: dict[str, np.ndarray] = {}
    out = df.reindex(columns=columns)
    for c in columns:
        s = out[c]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            if c in df.columns:
                numeric.setdefault(c, True)
        elif s.dtype == object or pd.api.types.is_string_dtype(s):
            num = numbers_of(s)
            present = s.notna()
            parsed = num.notna() & present
            if c not in numeric and present.sum():
                numeric[c] = parsed.sum() > 0.5 * present.sum()
            if numeric.get(c):
                bad[c] = (present & ~parsed).to_numpy()
                out[c] = num
    return out, bad


def rows_in_time_order(spec) -> bool:
    """Whether a table stream is in time order, told from its time columns alone: a table of
    labelled rows by its row numbers (no time column; an ARFF file's rows but MOA-style
    delayed ones) or its time column read by itself, an event log by its time column, an
    instance table with a label table by each table's time column (they are merged in time).
    A labelled row's label then comes after its instance (a delay is never negative, and a
    label time before its instance's is a dead letter), so no event is read after a later one
    was due, and the per-stream replay can take it. False means "not told this cheaply" —
    times out of order, a table of events without times, a file that cannot be read — and
    the caller reads the whole stream to find out. A planned stream's answer was found once,
    by the plan (`StreamSpec.rows_ordered`), and is not read again.

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
    if spec.rows_ordered is not None:
        return spec.rows_ordered
    o = spec.options
    time_col = o.get("time", "time")
    try:
        if spec.format == "arff":  # its rows' times are their numbers, unless MOA-style delayed
            return not o.get("delayed")
        files = table_files(spec.source)
        formats = [o.get("format") or fmt_of(path, "csv") for path in files]
        columns = [columns_of(path, fmt, csv_options(o)) for path, fmt in zip(files, formats)]
        timed = [time_col in c for c in columns]
        if not files:
            return False
        if not any(timed):
            return "labels" not in o  # row numbers (a label table's would follow them all)
        if not all(timed):
            return False
        if "labels" in o:
            label_files = table_files(o["labels"])
            return (bool(label_files) and _times_in_order(files, o.get("format"), time_col, o)
                    and _times_in_order(label_files, None, spec.label_table_time, o,
                                        spec.format))
        return _times_in_order(files, o.get("format"), time_col, o)
    except (OSError, ValueError):  # (InputError too) the whole read reports it
        return False


def read_in_time_order(spec) -> bool:
    """Whether a table stream's events are read in time order, without reading them: a
    table out of time order is read whole and sorted (`table_events`), unless its order is
    the file's (`{"order": "input"}`, MOA's delayed ARFF files), then told by
    `rows_in_time_order`.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.parquet")
    >>> pd.DataFrame({"time": [2.0, 1.0], "a": [0.1] * 2}).to_parquet(path)
    >>> from transforms.streams.sources import StreamSpec
    >>> read_in_time_order(StreamSpec.parse(path))
    True
    >>> read_in_time_order(StreamSpec.parse(path + '{"order": "input"}'))
    False
    """
    return spec.format != "arff" and spec.ordering == "time" or rows_in_time_order(spec)


def _times_in_order(files: list[str], fmt: str | None, time_col: str, options: dict,
                    default: str = "csv") -> bool:
    """Whether a table's time column is in order, file after file (its times that parse);
    False also when a file lacks the column, or a column holds numbers and text alike (left
    to the whole read). `fmt` and `default` as `table_chunks` takes them."""
    csv, reading = csv_options(options), TimeReading.of(options)
    formats = [fmt or fmt_of(path, default) for path in files]
    if not all(time_col in columns_of(path, f, csv) for path, f in zip(files, formats)):
        return False
    # Told by each file's one pass before (which reads times as ISO 8601 in UTC)
    if reading.format is reading.zone is None and all(f in ("csv", "jsonl") for f in formats):
        told = _told_times_in_order(files, formats, time_col, csv)
        if told is not None:
            return told
    last = -math.inf
    for item in table_chunks(files, fmt, default, columns=[time_col], csv=csv):
        if isinstance(item, dict):
            return False  # a line that is no row: left to the whole read
        frame = item[2]
        column = frame[time_col]
        if column.dtype == object and not all(isinstance(v, str) for v in column.dropna()):
            return False  # numbers and text in one column: left to the whole read
        t, bad = event_seconds(frame, time_col, reading=reading,
                               bounded=False)  # (order: in any unit)
        t = t[~bad]
        if len(t) and (t[0] < last or np.count_nonzero(t[1:] < t[:-1])):
            return False
        last = t[-1] if len(t) else last
    return True


def id_texts(column: pd.Series) -> list:
    """An id column's values as text, however its file typed them, so that a CSV instance
    table's ids (read as text: `000123` keeps its zeros) meet a Parquet label table's 7 and a
    log's "7": a whole number 7 or 7.0 (a column of numbers with a gap) is "7"; a missing id
    stays missing (None).

    >>> id_texts(pd.Series([7, 8])), id_texts(pd.Series([7.0, np.nan, 2.5]))
    (['7', '8'], ['7', None, '2.5'])
    >>> id_texts(pd.Series(["000123", 9, None], dtype=object))
    ['000123', '9', None]
    """
    if pd.api.types.is_integer_dtype(column):
        return column.astype(str).tolist()
    return [v if isinstance(v, str) else None if v is None or v != v else number_text(v)
            for v in column.tolist()]


class TableRow(NamedTuple):
    """One row of a logged table as the readers hand it on: its place in the stream (`seq`)
    and in its file (`row`), id, time, features (None: none), label, label time, own delay
    (a delay column's value) and event kind.

    Example
    -------

    >>> row = TableRow(0, 2, "a", 1.5, {"x": 1.0}, "yes", None, None, "instance")
    >>> row.id, row.t, row.kind
    ('a', 1.5, 'instance')

    """

    seq: int
    row: int
    id: Any
    t: float
    x: dict | None
    y: Any
    label_t: float | None
    own_delay: Any
    kind: str


def kind_words(column: pd.Series) -> pd.Series:
    """An event log's kind column as our words spell it: a log's `Instance` or ` LABEL` is one.

    >>> kind_words(pd.Series([" Instance", "LABEL", "update"])).tolist()
    ['instance', 'label', 'update']

    """
    if pd.api.types.is_numeric_dtype(column):
        return column
    return column.map(lambda v: v.strip().lower() if isinstance(v, str) else v)


class _TableColumns:
    """Which column holds what in a table stream (its options), and the rows of a chunk as
    `TableRow`s or dead letters."""

    def __init__(self, spec, delay, columns: list[str]):
        o = spec.options
        self.stream = spec.name
        self.id, self.time, self.kind = o.get("id", "id"), o.get("time", "time"), \
            o.get("kind", "kind")
        self.label, self.label_time = o.get("label", "label"), o.get("label_time", "label_time")
        self.delay = delay.column if delay.kind == "column" else None
        self.missing = o.get("missing", "dead-letter")
        self.reading = TimeReading.of(o)
        self.features = spec.feature_columns(columns, delay)
        # x's keys: a feature named by a whole number is that integer with `integer_keys`
        # (data from Python whose keys were integers, as `iter_array` and `DataFrame(X)` name
        # them, written as a table, whose columns are texts).
        self.keys = [int(c) if WHOLE_NUMBER.fullmatch(c) else c for c in self.features] \
            if o.get("integer_keys") else None
        self.segment_only = spec.segment_only  # read as they are, missing or not
        self.label_table = False  # a label table's rows are labels, whatever their features
        self.numeric: dict = {}  # text feature columns read as numbers (decided on first chunk)

    def for_label_table(self, spec) -> _TableColumns:
        """The same columns, with times and ids read from the label table's own columns."""
        other = copy.copy(self)
        other.time, other.id = spec.label_table_time, spec.label_table_id
        other.segment_only = ()  # (an instance's, not its label's)
        other.label_table = True
        return other

    def _column(self, frame: pd.DataFrame, name: str | None, a: int, b: int, default) -> list:
        return frame[name].iloc[a:b].tolist() if name in frame.columns else default

    def _ids(self, frame: pd.DataFrame, at) -> list:
        """The ids of rows `at` (a slice or positions) as text (`id_texts`)."""
        column = frame[self.id]
        return id_texts(column.iloc[at] if isinstance(at, slice) else column.take(at))

    def _checked(self, frame: pd.DataFrame, seq0: int) -> tuple:
        """A chunk's times (and the rows unplaced: a time that did not parse, no id), its
        feature columns and values, the cells that are no number in a column read as numbers,
        and the rows of finite numbers only (the usual case: clean as pandas gives them, no
        row-by-row check)."""
        t, unplaced = event_seconds(frame, self.time, seq0, self.reading)
        if self.id in frame.columns:  # an id that is missing stands for no instance
            unplaced = unplaced | frame[self.id].isna().to_numpy()
        feats = self.features
        fx, bad_cells = _feature_frame(frame, feats, self.numeric)
        finite = np.zeros(len(frame), dtype=bool)
        if feats and all(d.kind in "iuf" for d in fx.dtypes):  # ints and floats
            finite = np.isfinite(fx.to_numpy(dtype=float, na_value=np.nan)).all(axis=1)
        return t, unplaced, feats, fx, bad_cells, finite

    def instances(self, frame: pd.DataFrame,
                  seq0: int) -> tuple[list, np.ndarray, np.ndarray, list]:
        """The ids, times and places in the stream (`seq`) of a chunk's instance rows that
        `rows` keeps (not a dead letter), and the ids of those it sets aside, without making
        its rows Python objects: only a row with a value that is not a finite number is looked
        at alone."""
        t, unplaced, feats, fx, bad_cells, finite = self._checked(frame, seq0)
        keep = ~unplaced
        for bad in bad_cells.values():
            keep &= ~bad
        instance = (kind_words(frame[self.kind]) == INSTANCE).to_numpy() \
            if self.kind in frame.columns else np.ones(len(frame), dtype=bool)
        keep &= instance
        if feats:
            for j in np.flatnonzero(keep & ~finite).tolist():
                x, problem = _features(fx.iloc[j].to_dict(), self.missing)
                keep[j] = problem is None and x is not None
        at = np.flatnonzero(keep)
        if self.id not in frame.columns:  # (no label can name an instance by its row)
            return (seq0 + at).tolist(), t[at], seq0 + at, []
        aside = np.flatnonzero(instance & ~keep & frame[self.id].notna().to_numpy())
        return self._ids(frame, at), t[at], seq0 + at, self._ids(frame, aside)

    def rows(self, frame: pd.DataFrame, path: str, seq0: int,
             row_numbers: np.ndarray) -> Iterator:
        """`TableRow`s or dead letters; `seq0` is the frame's first row in the stream,
        `row_numbers` its rows' numbers in their file. Rows become Python objects
        `CHUNK_ROWS` at a time."""
        t, unplaced, feats, fx, bad_cells, finite = self._checked(frame, seq0)
        lt = event_seconds(frame, self.label_time, reading=self.reading)[0] \
            if self.label_time in frame.columns else None
        # Labelled rows with a label time column: each label's time is its row's.
        own_label_times = lt is not None and not self.label_table and \
            self.kind not in frame.columns
        new_row = tuple.__new__  # TableRow(...) costs 2.5 times as much per row
        stream, missing = self.stream, self.missing  # locals: read per row
        # Rows without any feature (an event log's label rows, a label table's) have x None,
        # and are no dicts first.
        empty = fx.isna().to_numpy().all(axis=1) if feats else np.ones(len(frame), dtype=bool)
        spelled = kind_words(frame[self.kind]) if self.kind in frame.columns else None
        as_read = RowsAsRead(frame)  # (a dead letter's record)
        keyed = fx.set_axis(self.keys, axis=1) if self.keys else fx
        for a in range(0, len(frame), CHUNK_ROWS):
            b = min(a + CHUNK_ROWS, len(frame))
            n = b - a
            records = _records(keyed, a, b, empty)
            ids = self._ids(frame, slice(a, b)) if self.id in frame.columns else \
                list(range(seq0 + a, seq0 + b))
            ys = self._column(frame, self.label, a, b, [None] * n)
            own = self._column(frame, self.delay, a, b, [None] * n)
            kinds = spelled.iloc[a:b].tolist() if spelled is not None else [INSTANCE] * n
            segments = [(c, self._column(frame, c, a, b, [None] * n))
                        for c in self.segment_only]
            for j in range(a, b):  # j: the row in `frame`, i: in this slice's lists
                i = j - a
                row = int(row_numbers[j])
                if unplaced[j]:  # no time or no id
                    yield self._bad_id_or_time(frame, j, path, row, as_read[j])
                    continue
                bad_field = next((c for c, m in bad_cells.items() if m[j]), None)
                if bad_field is not None:
                    yield dead_letter(stream, f"value {frame[bad_field].iloc[j]!r} is not a "
                                      f"number", file=path, row=row, field=bad_field,
                                      record=as_read[j])
                    continue
                x, problem = (records[i], None) if finite[j] else (None, None) if empty[j] \
                    else _features(records[i], missing)
                if empty[j] and feats and kinds[i] != LABEL and not self.label_table:
                    yield dead_letter(stream, "every feature is empty", file=path, row=row,
                                      record=as_read[j])
                    continue  # an instance with nothing to predict from
                if problem:
                    yield dead_letter(stream, MISSING_FEATURE if is_missing(problem[1]) else
                                      f"feature is {problem[1]}", file=path, row=row,
                                      field=problem[0], record=as_read[j])
                    continue
                if segments and (x is not None or not feats and kinds[i] != LABEL):
                    x = {} if x is None else x  # a table of no features: its segments
                    x.update((c, values[i]) for c, values in segments)
                y = ys[i]
                # An empty text label is a missing one, as an empty CSV cell is (and as an
                # empty logged prediction is no prediction): not a class named "".
                if isinstance(y, float) and math.isnan(y) or isinstance(y, str) and not y.strip():
                    y = None
                elif isinstance(y, np.generic):
                    y = y.item()
                label_t = None
                if lt is not None and y is not None:
                    if math.isfinite(lt[j]):
                        label_t = float(lt[j])
                    elif own_label_times:  # no delay model to place the label instead
                        yield self._bad_label_time(frame, j, path, row, as_read[j])
                        y = None
                key = ids[i].item() if isinstance(ids[i], np.generic) else ids[i]
                yield new_row(TableRow, (seq0 + j, row, key, float(t[j]), x, y, label_t,
                                         own[i], kinds[i]))

    def _bad_id_or_time(self, frame: pd.DataFrame, j: int, path: str, row: int,
                        record: dict) -> dict:
        if self.id in frame.columns and _missing(frame[self.id].iloc[j]):
            return dead_letter(self.stream, "the id is missing (an empty cell, NaN or null)",
                               file=path, row=row, field=self.id, record=record)
        value = frame[self.time].iloc[j]
        what = "the time is missing (an empty cell, NaN or null)" if _missing(value) \
            else time_problem(value, self.reading)
        return dead_letter(self.stream, what, file=path, row=row, field=self.time,
                           record=record)

    def _bad_label_time(self, frame: pd.DataFrame, j: int, path: str, row: int,
                        record: dict) -> dict:
        value = frame[self.label_time].iloc[j]
        what = "the label time is missing (an empty cell, NaN or null)" if _missing(value) \
            else "label " + time_problem(value, self.reading)
        return dead_letter(self.stream, f"{what}; the label is set aside, its instance waits",
                           file=path, row=row, field=self.label_time, record=record)

    def numbered(self, chunks, seq0: int = 0) -> Iterator:
        """(file, `TableRow` or dead letter) over chunks, each chunk's first row numbered in
        the stream from `seq0`."""
        for chunk in chunks:
            if isinstance(chunk, dict):  # a line that is no row
                yield chunk["file"], chunk
                continue
            path, row_numbers, frame = chunk
            yield from ((path, item) for item in self.rows(frame, path, seq0, row_numbers))
            seq0 += len(frame)


def _told_times_in_order(files: list[str], formats: list[str], time_col: str,
                         csv: dict) -> bool | None:
    """Whether CSV and JSON Lines files' times are in order, file after file, from the one pass
    over each before its rows are read (`TextFacts`); None when a file's time column was not
    told (no time in its first rows, or numbers and text in it)."""
    last = -math.inf
    for path, fmt in zip(files, formats):
        told = text_facts(path, fmt, csv).times.get(time_col)
        if told is None:
            return None
        in_order, first, final = told
        if not in_order or first < last:
            return False
        last = final
    return True


def table_columns(spec) -> list[str]:
    """A table stream's columns: those of all its (instance) files, in order of appearance —
    a JSON Lines file's are every key of any line.

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> for name, text in (("a.csv", "time,x,label\\n0,1,a\\n"),
    ...                    ("b.csv", "time,x,y,label\\n1,2,3,b\\n")):
    ...     with open(os.path.join(folder, name), "w") as f:
    ...         _ = f.write(text)
    >>> from transforms.streams.sources import StreamSpec
    >>> table_columns(StreamSpec.parse(os.path.join(folder, "*.csv")))
    ['time', 'x', 'label', 'y']
    """
    o = spec.options
    return list(dict.fromkeys(itertools.chain.from_iterable(
        columns_of(path, o.get("format") or fmt_of(path, spec.format), csv_options(o))
        for path in table_files(spec.source))))


def table_events(spec, delay, checks: Checks) -> Iterator:
    """Events of a logged table stream (see `transforms.streams.sources` for the shapes), in
    time order: a table whose times are out of order is read whole and sorted (ties in file
    order), so that of two instances with one id, or of an instance's two labels, the first
    in time counts (unless the stream's order is the file's, `{"order": "input"}`).

    Example
    -------

    >>> import os, tempfile
    >>> from transforms.streams.delays import DelaySpec
    >>> from transforms.streams.sources import StreamSpec
    >>> path = os.path.join(tempfile.mkdtemp(), "log.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("id,time,kind,x,label\\n7,0,instance,1.5,\\n7,4,label,,yes\\n")
    >>> spec = StreamSpec.parse(path)
    >>> [(e[0], e[3], e[4], e[6]) for e in table_events(spec, DelaySpec.parse("0"), Checks(spec))]
    [(0.0, 'instance', '7', None), (4.0, 'label', '7', 'yes')]

    """
    o = spec.options
    csv = csv_options(o)
    chunks = table_chunks(table_files(spec.source), o.get("format"), csv=csv, stream=spec.name,
                          text=(o.get("id", "id"),))
    leading = []  # dead letters (bad lines) before the first chunk
    first = next(chunks, None)
    while isinstance(first, dict):
        leading.append(first)
        first = next(chunks, None)
    if first is None:
        raise InputError(f"{spec.source}: the stream is empty (no rows)")
    # A feature is one whether or not the first chunk has it.
    columns = list(table_columns(spec) if spec.table_columns is None else spec.table_columns)
    columns += [c for c in first[2].columns if c not in columns]
    table = _TableColumns(spec, delay, columns)
    chunks = itertools.chain(leading, [first], chunks)
    if table.kind in columns or "labels" in o:
        yield from _logged_events(spec, table, chunks, checks)
        return
    if table.id not in columns:
        checks.numbered_ids()
    # A table without feature columns (for baselines) gives each row no features ({}), which
    # is not a row whose every feature is empty (None: a dead letter in `labelled_rows`).
    labelled = (item if isinstance(item, dict) else
                (path, item.row, item.id, item.t,
                 item.x if table.features or table.segment_only else {}, item.y,
                 item.label_t, item.own_delay)
                for path, item in table.numbered(chunks))
    if _sorted_as_read(spec):
        labelled = _in_time_order(labelled)  # (the replay sorts such a stream whole anyway)
    yield from labelled_rows(spec, labelled, delay, checks)


def _sorted_as_read(spec) -> bool:
    """Whether a table is read whole and sorted by time (`table_events`): its rows are out of
    time order and its order is not the file's."""
    return spec.ordering == "time" and not rows_in_time_order(spec)


def _in_time_order(rows) -> Iterator:
    """Labelled rows sorted by time, ties in file order (dead letters first, as they are): a
    delay in events counts the instances in the order they arrive, not as the file lists
    them (the label of the row at 5 s due at the next row of the file, at 3 s, came before
    its own instance, and was an orphan); and of two rows with one id the first in time is
    the instance, the other the duplicate.

    >>> rows = [("f", 1, "a", 5.0), {"reason": "bad"}, ("f", 3, "c", 1.0), ("f", 4, "d", 5.0)]
    >>> [r[2] if isinstance(r, tuple) else r["reason"] for r in _in_time_order(rows)]
    ['bad', 'c', 'a', 'd']
    """
    items = list(rows)
    dead = [i for i in items if isinstance(i, dict)]
    items = sorted((i for i in items if not isinstance(i, dict)), key=lambda row: row[3])
    yield from dead
    yield from _draining(items)


def _draining(items: list) -> Iterator:
    """The items of a list in order, each let go as it is given (the list is emptied)."""
    items.reverse()
    while items:
        yield items.pop()


def _logged_events(spec, table: _TableColumns, chunks, checks: Checks) -> Iterator:
    """An event log (a kind column) or an instance table with a label table. Two passes over
    the instance table: the first notes each instance's time (a label is checked against its
    instance, wherever that is in the table), the second streams the rows, merged in time with
    the label table's, so a log in time order can be replayed per stream, holding what is
    pending rather than the whole table."""
    ordered = not _sorted_as_read(spec)
    instance_t, repeated, set_aside, n_rows = _instance_times(table, chunks, ordered)
    o, csv = spec.options, csv_options(spec.options)
    instances = table.numbered(table_chunks(table_files(spec.source), o.get("format"), csv=csv,
                                            stream=spec.name, text=(table.id,)))
    label_files = table_files(o["labels"]) if "labels" in o else []
    labels = table.for_label_table(spec).numbered(
        table_chunks(label_files, None, default=spec.format, csv=csv, stream=spec.name,
                     text=(spec.label_table_id,)), n_rows)
    rows = _merged_in_time(instances, labels if label_files else None, ordered)
    yield from _event_log(spec, rows, instance_t, repeated, set_aside, table.kind, checks)


def _instance_times(table: _TableColumns, chunks, ordered: bool = True
                    ) -> tuple[dict, set, set, int]:
    """The first pass over an instance table: each instance id's first time, the rows (seq)
    of its other instances (the first wins, so the second pass keeps no set of ids), the ids
    of instances only ever set aside as dead letters, and the table's number of rows (the
    label table's are numbered after them). The first is the earliest, ties in file order;
    in a table in time order (`ordered`), the first in the file.

    >>> import pandas as pd
    >>> from transforms.streams.delays import DelaySpec
    >>> from transforms.streams.sources import StreamSpec
    >>> frame = pd.DataFrame({"id": ["a", "b", "a", "a"], "time": [5.0, 6.0, 2.0, 2.0],
    ...                       "kind": "instance"})
    >>> table = _TableColumns(StreamSpec.parse("log.csv"), DelaySpec.parse("0"), list(frame))
    >>> times, others, _, _ = _instance_times(table, [(None, None, frame)], ordered=False)
    >>> times, sorted(others)  # (seq: read order from 0; a's first is seq 2, at 2 s)
    ({'a': 2.0, 'b': 6.0}, [0, 3])
    """
    instance_t: dict = {}
    first_seq: dict = {}  # (only for a table out of time order)
    repeated: set = set()
    set_aside: set = set()
    n_rows = 0
    for chunk in chunks:
        if isinstance(chunk, dict):
            continue  # the second pass reports it
        frame = chunk[2]
        ids, times, seqs, aside = table.instances(frame, n_rows)
        for key, t, seq in zip(ids, times.tolist(), seqs.tolist()):
            if key not in instance_t:
                instance_t[key] = t
                if not ordered:
                    first_seq[key] = seq
            elif ordered or t >= instance_t[key]:
                repeated.add(seq)
            else:  # an earlier instance with this id, further down the table
                repeated.add(first_seq[key])
                instance_t[key], first_seq[key] = t, seq
        set_aside.update(aside)
        n_rows += len(frame)
    return instance_t, repeated, set_aside - instance_t.keys(), n_rows


# A column name that is a whole number's text, as `str(int)` writes it.
WHOLE_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)")


def _records(fx: pd.DataFrame, a: int, b: int, empty: np.ndarray) -> list:
    """Rows a..b of `fx` as dicts, None for an `empty` row (no dict built for it).

    >>> fx = pd.DataFrame({"x": [1.0, np.nan, 3.0]})
    >>> _records(fx, 0, 3, fx.isna().to_numpy().all(axis=1))
    [{'x': 1.0}, None, {'x': 3.0}]
    """
    full = np.flatnonzero(~empty[a:b])
    if len(full) == b - a:
        return fx.iloc[a:b].to_dict("records")
    records = [None] * (b - a)
    for k, record in zip(full.tolist(), fx.iloc[a:b].take(full).to_dict("records")):
        records[k] = record
    return records


MISSING_FEATURE = ('feature is missing (an empty cell, NaN, null, a CSV cell NA, N/A or None, or '
                   'an absent key); the stream option {"missing": "drop"} keeps such rows '
                   'without it, {"na_values": []} reads only an empty CSV cell as missing')


def _features(x: dict | None, missing: str) -> tuple[dict | None, tuple | None]:
    """A row's features without its missing values (None: the row has none — a label row of an
    event log), or the (field, value) of the first value that is not a finite number."""
    if x is None or all(is_missing(v) for v in x.values()):
        return None, None
    clean = {}
    for k, v in x.items():
        # None: a JSON null, or a gap in a column of text (or text and numbers)
        if v is None or isinstance(v, float) and not math.isfinite(v):
            if is_missing(v) and missing == "drop":
                continue
            return None, (k, v)
        clean[k] = v.item() if isinstance(v, np.generic) else v
    return clean, None


def _merged_in_time(instances, labels, ordered: bool = True) -> Iterator:
    """(file, row item, from the label table) for an instance table's rows and a label table's
    (None: an event log, one table), in time order — at equal times the instance table's first,
    then in file order; a dead letter keeps its place after its table's previous row. Tables
    in time order (`ordered`) are merged as they are read; others are read whole and sorted.

    >>> from types import SimpleNamespace
    >>> rows = lambda *ts: [("f", SimpleNamespace(t=t)) for t in ts]
    >>> [(item.t, from_labels) for _, item, from_labels in _merged_in_time(
    ...     rows(3.0, 1.0), rows(1.0, 0.5), ordered=False)]
    [(0.5, True), (1.0, False), (1.0, True), (3.0, False)]
    """
    def timed(rows, from_labels: bool):
        t = -math.inf
        for path, item in rows:
            if not isinstance(item, dict):
                t = item.t
            yield (t, from_labels), path, item, from_labels

    if labels is None and ordered:  # (an event log in time order: as it is read)
        yield from ((path, item, False) for path, item in instances)
        return
    tables = [timed(instances, False)] + ([] if labels is None else [timed(labels, True)])
    if ordered:
        merged = heapq.merge(*tables, key=lambda r: r[0])
    else:
        merged = _draining(sorted(itertools.chain(*tables), key=lambda r: r[0]))
    for _, path, item, from_labels in merged:
        yield path, item, from_labels


def _event_log(spec, rows, instance_t: dict, repeated: set, set_aside: set, kind_col,
               checks: Checks) -> Iterator:
    """Event logs (kind column) and instance + label tables: times come from the input. `rows`:
    (file, row or dead letter, whether it is the label table's: all its rows are labels);
    `instance_t`: each instance id's first time in the instance table; `repeated`: the rows
    (seq) of its other instances (`_instance_times`); `set_aside`: the ids of instances that
    were only dead letters (their labels are too, saying so). An instance's second label is a
    dead letter: the first of `rows`, in time order, counts."""
    o = spec.options
    labelled: set = set()  # (their ids leave `instance_t`)
    for path, item, from_labels in rows:
        if isinstance(item, dict):
            yield item
            continue
        seq, row, key, t, x, y, _, _, kind = item
        if checks.where is not None:
            checks.found(seq, path, row)
        if from_labels:
            kind = LABEL
        elif kind not in EVENT_KINDS:
            yield dead_letter(spec.name, f"kind {kind!r} is not one of {EVENT_KINDS}",
                              file=path, row=row, field=kind_col,
                              record=fields_record(t, kind, key, x, y))
            continue
        if kind == LABEL:
            if y is None:
                yield dead_letter(spec.name, "label row without a label", file=path, row=row,
                                  field=o.get("label", "label"),
                                  record=fields_record(t, kind, key, x, y))
                continue
            y = checks.as_stream_label(y)
            if problem := checks.label(y, path, row, o.get("label", "label")):
                yield with_record(problem, fields_record(t, kind, key, x, y))
                continue
            t0 = instance_t.get(key)
            if t0 is None and key in labelled:
                yield dead_letter(spec.name, f"a second label for instance {key!r} (the first "
                                  f"in time counts)", file=path, row=row,
                                  field=o.get("label", "label"),
                                  record=fields_record(t, kind, key, x, y))
                continue
            if t0 is None and key in set_aside:
                yield dead_letter(spec.name, f"label of instance {key!r}, which was set aside "
                                  f"as a dead letter when it was read", file=path, row=row,
                                  field=o.get("id", "id") if not from_labels
                                  else spec.label_table_id,
                                  record=fields_record(t, kind, key, x, y))
                continue
            if t0 is not None and t < t0:
                yield dead_letter(spec.name, f"label at {readable_time(t)} is earlier than its "
                                  f"instance at {readable_time(t0)}", file=path, row=row,
                                  field=spec.label_table_time if from_labels
                                  else o.get("time", "time"),
                                  record=fields_record(t, kind, key, x, y))
                continue
            if t0 is not None:
                del instance_t[key]
                labelled.add(key)
            rank = RANK_LABEL if t0 is None or t > t0 else RANK_LABEL_AFTER_INSTANCE
            yield (t, rank, seq, LABEL, key, x or None, y)
        elif kind == INSTANCE and seq in repeated:
            yield with_record(checks.duplicate(key, path, row, o.get("id", "id")),
                              fields_record(t, kind, key, x, y))
        else:
            yield (t, RANK_INSTANCE, seq, kind, key, x or {}, None)


class RowsAsRead:
    """A chunk's rows, each column's value as read, as a dead letter shows them (a date as its
    text, a missing cell as nan): the columns are taken out of the frame once, when the first
    row is asked for, so a chunk of many dead letters costs little more than one.

    >>> frame = pd.DataFrame({"id": ["a", "b"], "t": pd.to_datetime(["2026-11-01", None]),
    ...                       "f": [1.5, np.nan]})
    >>> RowsAsRead(frame)[0], RowsAsRead(frame)[1]
    ({'id': 'a', 't': '2026-11-01 00:00:00', 'f': 1.5}, {'id': 'b', 't': 'NaT', 'f': nan})
    """

    def __init__(self, frame: pd.DataFrame):
        self._frame, self._columns = frame, None

    def __getitem__(self, j: int) -> dict:
        if self._columns is None:
            self._columns = [(str(c), self._frame[c].to_numpy()) for c in self._frame.columns]
        return {c: _as_shown(values[j]) for c, values in self._columns}


def _as_shown(value):
    if isinstance(value, (np.datetime64, pd.Timestamp, type(pd.NaT))):
        return str(pd.Timestamp(value))
    return value.item() if isinstance(value, np.generic) else value


def _missing(value) -> bool:
    """Whether a cell is missing (None, NaN, NaT); a JSON list in it never is.

    >>> _missing(float("nan")), _missing(None), _missing([2, 3]), _missing("")
    (True, True, False, False)
    """
    return pd.api.types.is_scalar(value) and pd.isna(value)
