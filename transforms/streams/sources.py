"""Streams by spec: river datasets and generators, logged tables (CSV, JSON Lines, Parquet) and
ARFF / MOA-style delayed ARFF. Plain Python: `StreamSpec.events()` yields event tuples (see
`transforms.records`) and dead-letter dicts; the Beam transforms in `transforms.streams.read` chunk
them.

A stream spec is `[NAME=]SOURCE[{JSON options}]`:

    synth:Agrawal{"n": 100000, "seed": 7, "classification_function": 2,
                  "drift": [{"at": 50000, "width": 1000, "classification_function": 4}]}
    dataset:Phishing                 a dataset bundled with river
    logs/trips.csv{"time": "pickup", "delay": "column:duration"}
    logs/instances.parquet{"labels": "logs/labels.parquet"}
    elec.arff{"target": "class"}     delayed.arff{"delayed": true}

File options (all optional): `format` (csv | jsonl | parquet | arff, else from the extension),
`id`, `time`, `kind`, `label`, `label_time` (column names; defaults id, time, kind, label,
label_time; a label table's time and id columns are `label_time` and `label_id` if given,
else named as the instance table's), `labels` (a second table of labels joined by id),
`classes` (the class list, in index order), `features` (columns to use; `[]`: none),
`missing` ("dead-letter" | "drop": what to do with a NaN feature), `delay` (this stream's
delay, overriding `--delay`), `order` ("time" | "input").

A table's SOURCE may be a file, a glob or a directory of files (e.g. daily partitions
`logs/labels/date=2026-11-01/part-0.parquet`), read in path order through Beam's FileSystems.

Shapes of a table: with a `kind` column it is an event log (instance | update | label rows); with
`labels` it is an instance table plus a label table; otherwise each row is an instance with its
label, whose time comes from `label_time` or from the delay model. Without a `time` column the
row index is the time in seconds; without an `id` column the row index is the id.
"""

from __future__ import annotations

import datetime
import difflib
import itertools
import json
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from transforms.errors import InputError, check_options
from transforms.records import INSTANCE, LABEL, UPDATE, column_value
from transforms.specs import split_options
from transforms.streams import arff
from transforms.streams.delays import DelaySpec
from transforms.streams.rows import COLLECTIONS, Checks, labelled_rows, whole_as_int, written_as
from transforms.streams.table_files import (CSV_OPTIONS, FORMATS, WHOLE_TABLE_JSON,
                                            check_encoding, columns_of, csv_options,
                                            excel_separator_line, extension, first_bad_line,
                                            fmt_of, guess_column, has_rows, head_of,
                                            is_whole_json_document, numbers_of, other_separator,
                                            row_count, source_name, table_files, unnamed_fields)
from transforms.streams.times import (TIME_OPTIONS, TimeReading, event_seconds, formats_of_dates,
                                      spelled_dates, time_problem, with_offsets)
from transforms.streams.tables import kind_words, table_columns, table_events

# Text that reads as a date: ISO 2026-11-01[T10:00[:00]], 2026/11/01, or 01/11/2026, 1.11.26.
DATE_LIKE = r"\s*(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[/.]\d{1,2}[/.]\d{2,4})([ T]\d{1,2}:\d{2})?"
# A number as written with a decimal comma (61,19, 1.234,5 or 7), which a CSV reader takes for
# text when a cell of its column has a comma.
DECIMAL_COMMA = r"\s*[-+]?(\d{1,3}(\.\d{3})+|\d+)(,\d+)?\s*"
FILE_OPTIONS = {"format", "id", "time", "kind", "label", "label_time", "label_id", "labels",
                "classes", "positive", "features", "missing", "delay", "order", "delayed",
                "target", "unique_ids", "pretrain", "integer_keys", *TIME_OPTIONS, *CSV_OPTIONS}


# What each file option's value is — a text (most name a column), one character, a class, a list
# — with an example of it; `_check_option_types` says which is wrong before anything reads it.
_TEXT, _CHARACTER, _CLASS, _CLASSES, _TEXTS, _FLAG, _DELAY = (
    "a text", "one character", "a class (a text or a number)", "a list of classes",
    "a list of texts", "true or false", "a delay (a text or a number)")
OPTION_KINDS = {
    "format": (_TEXT, "csv"), "id": (_TEXT, "request_id"), "time": (_TEXT, "event_time"),
    "kind": (_TEXT, "event"), "label": (_TEXT, "is_fraud"), "label_time": (_TEXT, "labelled_at"),
    "label_id": (_TEXT, "request_id"), "labels": (_TEXT, "labels.parquet"),
    "missing": (_TEXT, "drop"), "order": (_TEXT, "input"), "target": (_TEXT, "class"),
    "unique_ids": (_TEXT, "pending"), "time_unit": (_TEXT, "ms"),
    "time_format": (_TEXT, "%d/%m/%Y %H:%M"), "time_zone": (_TEXT, "Europe/Berlin"),
    "encoding": (_TEXT, "latin-1"), "sep": (_CHARACTER, ";"), "decimal": (_CHARACTER, ","),
    "thousands": (_CHARACTER, "."), "positive": (_CLASS, "fraud"),
    "classes": (_CLASSES, ["no", "yes"]), "features": (_TEXTS, ["x1", "x2"]),
    "na_values": (_TEXTS, ["NA", "?"]), "delayed": (_FLAG, True), "delay": (_DELAY, "30s"),
    "integer_keys": (_FLAG, True)}


# The column roles an option may set to null, naming no column: a labelled table whose `time`
# (or `id`, `kind`, `label_time`) column is a feature, its rows' order their times.
NO_COLUMN_ROLES = ("id", "time", "kind", "label_time")


def _check_option_types(stream: str, options: dict) -> None:
    """An InputError for a file option whose value is of the wrong kind (a list where a column
    name goes, a number for a separator, an encoding Python does not know).

    >>> _check_option_types("s", {"label": ["y"]})
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: stream s: option label must be a text, not ['y']; e.g. \
{"label": "is_fraud"}
    >>> _check_option_types("s", {"sep": 59})
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: stream s: option sep must be one character, not 59; e.g. \
{"sep": ";"}
    >>> _check_option_types("s", {"time": None, "kind": None})  # (no such columns)
    """
    def texts(value) -> bool:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)

    def is_class(value) -> bool:
        return isinstance(value, (str, int, float, bool))

    for option, value in options.items():
        if value is None and option in NO_COLUMN_ROLES:
            continue  # (no such column: `{"time": null}`)
        kind, example = OPTION_KINDS.get(option, (None, None))
        fits = {_TEXT: isinstance(value, str),
                _CHARACTER: isinstance(value, str) and len(value) == 1,
                _CLASS: is_class(value),
                _CLASSES: isinstance(value, list) and all(is_class(v) for v in value),
                _TEXTS: texts(value) or option == "features" and value is None,
                _FLAG: isinstance(value, bool),
                _DELAY: isinstance(value, (str, int, float)) and not isinstance(value, bool),
                None: True}[kind]
        if not fits:
            raise InputError(f"stream {stream}: option {option} must be {kind}, not "
                             f"{value!r}; e.g. {json.dumps({option: example})}")
    if "encoding" in options:
        check_encoding(options["encoding"], f"stream {stream}", "the stream option")


# pandas' name for a CSV column whose header cell is empty: the index `DataFrame.to_csv()`
# writes first, or the field after a separator that ends the header. No feature unless named.
UNNAMED = re.compile(r"Unnamed: \d+")


def thousands_marks(text: pd.Series) -> tuple[dict, str]:
    """The CSV options that read a text column of numbers written with thousands separators
    (`1,234.50`, `1 234,50` with a space or a no-break space, `1'234.50`), 9 in 10 of its
    values being numbers so, and one value that needs them; ({}, "") if none does.

    >>> thousands_marks(pd.Series(["1,234.50", "999.10", "12,000"]))
    ({'thousands': ','}, '1,234.50')
    >>> thousands_marks(pd.Series(["1 234,5", "87,25"]))
    ({'thousands': ' ', 'decimal': ','}, '1 234,5')
    >>> thousands_marks(pd.Series(["1,234", "New York"]))
    ({}, '')
    >>> thousands_marks(pd.Series(["1\u00a0234,5", "87,25"]))[0]
    {'thousands': '\xa0', 'decimal': ','}
    """
    for sep in (",", " ", "'", "\u00a0", "\u202f"):
        marked = text[text.str.contains(rf"\d{re.escape(sep)}\d{{3}}(?!\d)")]
        if not len(marked):
            continue
        decimal = "," if sep != "," and text.str.contains(r"\d,\d").any() else "."
        number = (rf"\s*[-+]?(?:[1-9]\d{{0,2}}(?:{re.escape(sep)}\d{{3}})+|\d+)"
                  rf"(?:{re.escape(decimal)}\d+)?\s*")
        if text.str.fullmatch(number).mean() >= 0.9:
            return {"thousands": sep, **({"decimal": ","} if decimal == "," else {})}, \
                marked.iloc[0]
    return {}, ""


def _untaken(values: pd.Series) -> tuple[str, str]:
    """What a feature column's values are when no model takes them as they are, and how to
    write them so: ("", "") when a model takes them.

    >>> _untaken(pd.Series(pd.to_timedelta([1, 2], unit="s")))
    ('durations', 'write them as numbers (seconds), or ')
    >>> _untaken(pd.Series([[1.0, 2.0], [3.0]]))
    ('lists or objects', 'flatten them into columns of their own, or ')
    >>> _untaken(pd.Series([b"\\x01", b"\\x02"]))  # (a Parquet binary column)
    ('bytes', 'decode them as text, or ')
    >>> _untaken(pd.Series([1.5, 2.0]))
    ('', '')
    """
    if pd.api.types.is_datetime64_any_dtype(values):
        return "dates", ""
    if pd.api.types.is_timedelta64_dtype(values):
        return "durations", "write them as numbers (seconds), or "
    if values.dtype != object:
        return "", ""
    # (Arrow's date32, time64 and binary columns are objects to pandas.)
    kinds = ((COLLECTIONS, "lists or objects", "flatten them into columns of their own, or "),
             ((bytes, bytearray), "bytes", "decode them as text, or "),
             (datetime.date, "dates", ""),
             (datetime.time, "times of day", "write them as numbers (seconds since "
                                             "midnight), or "))
    for types, kind, hint in kinds:
        if any(isinstance(v, types) for v in values):
            return kind, hint
    return "", ""


def _check_not_an_empty_directory(pattern: str, files: list) -> None:
    """A directory without one table file below it says what it holds instead."""
    if files or not os.path.isdir(pattern):
        return
    held = sorted(os.path.relpath(os.path.join(d, f), pattern)
                  for d, _, names in os.walk(pattern) for f in names)
    more = f" and {len(held) - 10} more" if len(held) > 10 else ""
    raise InputError(f"{pattern}: a directory with no table file (.csv, .jsonl, .parquet) "
                     f"below it; it holds {held[:10] or 'nothing'}{more}")


def kind_of_labels(labels: list) -> str | None:
    """'classes', 'numbers' or None (see `StreamSpec.label_kind`).

    Text that all reads as numbers with fractions is numbers (a Parquet or JSON Lines column
    of them written as text):

    >>> kind_of_labels(["a", "b"]), kind_of_labels([1.5, 2.0]), kind_of_labels([0, 1])
    ('classes', 'numbers', None)
    >>> kind_of_labels(["2.25", "-1"]), kind_of_labels(["2.25", "n/a"]), kind_of_labels(["1"])
    ('numbers', 'classes', 'classes')
    """
    if not labels:
        return None
    if all(isinstance(y, str) for y in labels):
        numbers = [written_as(y, False) for y in labels]
        return "numbers" if all(type(y) in (int, float) for y in numbers) and any(
            isinstance(y, float) and not y.is_integer() for y in numbers) else "classes"
    if all(isinstance(y, (str, bool, np.bool_)) for y in labels):
        return "classes"
    numbers = [float(y) for y in labels if isinstance(y, (int, float, np.number))
               and not isinstance(y, (bool, np.bool_))]
    if len(numbers) == len(labels) and any(not y.is_integer() for y in numbers if
                                           np.isfinite(y)):
        return "numbers"
    return None


def _split_spec(text: str) -> tuple[str | None, str, dict]:
    """(name, source, options) of `[NAME=]SOURCE[{json}]`; a NAME holds no / or \\, which
    tell a path's `date=DAY` part.

    >>> _split_spec('sea=synth:SEA{"n": 5}'), _split_spec("logs/date=2026-11-01")
    (('sea', 'synth:SEA', {'n': 5}), (None, 'logs/date=2026-11-01', {}))
    >>> _split_spec("=synth:SEA")
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: stream =synth:SEA: the name before '=' is empty; give \
NAME=SOURCE, or leave out the '='
    >>> _split_spec("fraud/eu=synth:SEA")
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: stream fraud/eu=synth:SEA: a stream's name holds no / or \\ \
(they tell a path); name it otherwise, e.g. fraud-eu=synth:SEA
    """
    head, options = split_options(text)
    name = None
    eq = head.find("=")
    if eq >= 0 and not head[:eq].strip() and not os.path.exists(head):
        raise InputError(f"stream {text}: the name before '=' is empty; give NAME=SOURCE, or "
                         f"leave out the '='")
    if eq > 0 and not any(c in head[:eq] for c in "/\\"):  # (not a path's date=DAY part)
        name, head = head[:eq].strip(), head[eq + 1:]
    elif eq > 0 and head[eq + 1:].startswith(("synth:", "dataset:")):
        named = re.sub(r"[/\\]", "-", head[:eq])
        raise InputError(f"stream {head}: a stream's name holds no / or \\ (they tell a "
                         f"path); name it otherwise, e.g. {named}={head[eq + 1:]}")
    return name, head.strip(), options


def _river_stream(spec):
    """`generators.river_stream`, imported when a stream needs it: river's datasets import
    river.stream, and with it scikit-learn where it is installed (~0.7 s of a run's start)."""
    from transforms.streams.generators import river_stream

    return river_stream(spec)


@dataclass(frozen=True)
class StreamSpec:
    """One input stream.

    Parameters
    ----------
    name
        The stream's name in the results.
    source
        `synth:NAME`, `dataset:NAME`, or a table's or ARFF file's path, glob or folder.
    options
        The `{json}` options: the generator's parameters, or a table's columns and checks (see
        docs/inputs.md).
    table_columns
        A table's columns, those of all its files (`tables.table_columns`), when the plan has
        found them (None: found where the table is read). A worker then reads no file for them.
    rows_ordered
        Whether a table's rows are in time order (`tables.rows_in_time_order`), when the plan
        has found out (None: found where the table is read, which sorts a table that is not).
    segment_only
        A table's columns read only to segment by (`--segment` columns its `features` option
        leaves out): each instance carries their values (None where missing) for its slices,
        whatever they hold; no model sees them.

    >>> s = StreamSpec.parse('synth:SEA{"n": 5, "seed": 1}')
    >>> s.name, s.kind
    ('sea', 'synth')
    >>> [e[3] for e in s.events(DelaySpec.parse("2"))][:4]
    ['instance', 'instance', 'label', 'instance']
    """

    name: str
    source: str
    options: dict = field(default_factory=dict)
    table_columns: tuple | None = field(default=None, compare=False, repr=False)
    rows_ordered: bool | None = field(default=None, compare=False, repr=False)
    segment_only: tuple = field(default=(), repr=False)
    # False: no model sees a table's features (a backfill scores logged predictions), so none
    # is read, checked or dead-lettered; only `segment_only` columns are, as they are.
    reads_features: bool = field(default=True, repr=False)

    @classmethod
    def parse(cls, text: str) -> StreamSpec:
        name, source, options = _split_spec(text.strip())
        if not source:
            raise InputError(f"stream spec {text!r} names no source")
        if name is None:
            base = source.split(":", 1)[1] if source.startswith(("synth:", "dataset:")) else \
                source_name(source) or "stream"
            name = base.lower()
        if extension(source) == ".tsv" and "sep" not in options:  # (tab-separated values)
            options = {**options, "sep": "\t"}
        if not source.startswith(("synth:", "dataset:")):
            _check_option_types(name, options)
            # (as the file's labels are read: 1.0 is the class 1)
            if "positive" in options:
                options = {**options, "positive": whole_as_int(options["positive"])}
        return cls(name, source, options)

    # -- what kind of source -------------------------------------------------------------------
    @property
    def kind(self) -> str:
        if self.source.startswith("synth:"):
            return "synth"
        if self.source.startswith("dataset:"):
            return "dataset"
        return "file"

    @property
    def _named_format(self) -> str | None:
        """The format the options or the file's extension name (None: a folder's, a glob's)."""
        return self.options.get("format") or FORMATS.get(extension(self.source))

    @property
    def format(self) -> str | None:
        if self.kind != "file":
            return None
        fmt = self._named_format
        if fmt is None:  # a directory or a glob: the format of its files
            files = table_files(self.source)
            fmt = FORMATS.get(extension(files[0])) if files else None
        if fmt is None and extension(self.source) in (".xlsx", ".xls", ".xlsm", ".ods"):
            raise InputError(f"{self.source}: a spreadsheet workbook, which is not read; save "
                             f"its sheet as CSV, or give it from Python as data, "
                             f"evaluate(pd.read_excel(path), ...)")
        if fmt not in set(FORMATS.values()):
            raise InputError(f"{self.source}: unknown format; give one of "
                             f"{sorted(set(FORMATS.values()))} with {{\"format\": ...}}")
        return fmt

    def input_files(self) -> list[str]:
        """The files the stream reads: its table's or ARFF file's, then its label table's
        (none for a generator or a dataset).

        >>> import os, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> for name in ("i.csv", "l.csv"):
        ...     with open(os.path.join(folder, name), "w") as f:
        ...         _ = f.write("id,time\\n1,5\\n")
        >>> spec = StreamSpec.parse(f'{folder}/i.csv{{"labels": "{folder}/l.csv"}}')
        >>> [os.path.basename(f) for f in spec.input_files()]
        ['i.csv', 'l.csv']
        >>> StreamSpec.parse('synth:SEA').input_files()
        []
        """
        if self.kind != "file":
            return []
        labels = self.options.get("labels")
        return table_files(self.source, tuple(FORMATS)) + (
            table_files(labels) if isinstance(labels, str) else [])

    def with_label_table_time(self) -> StreamSpec:
        """This stream, its label table's time column named by the `label_time` option when
        none is given and the table (its first file) has a column `label_time` but none named
        as the instance table's time column: that one is the label time, as it is in a table
        of labelled rows.

        >>> import os, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> with open(os.path.join(folder, "l.csv"), "w") as f:
        ...     _ = f.write("id,label_time,label\\n1,5,a\\n")
        >>> StreamSpec.parse(f'i.csv{{"labels": "{folder}/l.csv"}}').with_label_table_time(
        ...     ).label_table_time
        'label_time'
        """
        o = self.options
        if self.kind != "file" or "label_time" in o or not isinstance(o.get("labels"), str):
            return self
        files = table_files(o["labels"])
        try:
            columns = columns_of(files[0], fmt_of(files[0], "csv"), csv_options(o)) \
                if files else []
        except InputError:  # (the checks say what is wrong with the file)
            return self
        if "label_time" in columns and o.get("time", "time") not in columns:
            return replace(self, options={**o, "label_time": "label_time"})
        return self

    @property
    def label_table_time(self) -> str:
        """The label table's time column: the `label_time` option, else the name of the
        instance table's time column (`time`); `with_label_table_time` gives the option when
        the table's own column is `label_time`.

        >>> StreamSpec.parse('i.csv{"labels": "l.csv", "time": "created_at"}').label_table_time
        'created_at'
        >>> StreamSpec.parse('i.csv{"labels": "l.csv", "label_time": "labelled_at"}'
        ...                  ).label_table_time
        'labelled_at'
        """
        o = self.options
        return o.get("label_time", o.get("time", "time"))

    @property
    def label_table_id(self) -> str:
        """The label table's id column: the `label_id` option, else the name of the instance
        table's id column (`id`).

        >>> StreamSpec.parse('i.csv{"labels": "l.csv", "id": "txn", "label_id": "tx"}'
        ...                  ).label_table_id
        'tx'
        """
        return self.options.get("label_id", self.options.get("id", "id"))

    @property
    def ordering(self) -> str:
        """'time': (t, rank, seq), labels first at equal t. 'input': (t, seq), file order."""
        default = "input" if self.options.get("delayed") else "time"
        order = self.options.get("order", default)
        if order not in ("time", "input"):
            raise InputError(f"stream {self.name}: order must be 'time' or 'input'")
        return order

    def delay(self, default: DelaySpec) -> DelaySpec:
        d = self.options.get("delay")
        return default if d is None else DelaySpec.parse(d)

    @property
    def pretrain(self) -> int:
        """How many of the stream's first rows each model learns with their labels as they
        arrive, never predicting them (the `pretrain` option; 0: none).

        >>> StreamSpec.parse('synth:SEA{"n": 10, "pretrain": 3}').pretrain
        3
        >>> StreamSpec.parse('synth:SEA{"pretrain": 2.5}').pretrain
        Traceback (most recent call last):
        ...
        transforms.errors.InputError: stream sea: pretrain is a number of rows, a whole \
number 0 or more, not 2.5; e.g. {"pretrain": 1000}
        """
        n = self.options.get("pretrain", 0)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise InputError(f"stream {self.name}: pretrain is a number of rows, a whole "
                             f"number 0 or more, not {n!r}; e.g. {{\"pretrain\": 1000}}")
        return n

    def check_pretrain(self) -> None:
        """Pretraining learns a row with its label as it arrives: a stream whose labels are
        rows of their own (an event log, an instance + label table, delayed ARFF) has none
        there.

        >>> StreamSpec.parse('s.arff{"delayed": true, "pretrain": 10}').check_pretrain()
        Traceback (most recent call last):
        ...
        transforms.errors.InputError: stream s: pretrain learns each of the first rows with \
the label in its row, and this stream's labels are rows of their own; leave pretrain out, \
or start the evaluation later with --from
        """
        if self.pretrain and self.labels_in_rows_of_their_own():
            raise InputError(f"stream {self.name}: pretrain learns each of the first rows with "
                             f"the label in its row, and this stream's labels are rows of "
                             f"their own; leave pretrain out, or start the evaluation later "
                             f"with --from")

    def check_delay(self, delay: DelaySpec) -> None:
        """A delay read from a column (`column:NAME`) names a column of the stream's rows.

        >>> StreamSpec.parse('synth:SEA{"n": 10}').check_delay(DelaySpec.parse("column:wait"))
        Traceback (most recent call last):
        ...
        transforms.errors.InputError: stream sea: delay column:wait reads each row's delay ...
        """
        if delay.kind != "column" or self.label_times_given():
            return
        if self.kind != "file":
            raise InputError(f"stream {self.name}: delay column:{delay.column} reads each "
                             f"row's delay from a column of a file; a generated stream or a "
                             f"river dataset has none: give a number of events or a duration")
        if self.format == "arff":
            attrs = arff.header_of(self)
            columns = [attrs[i].name for i in arff.instance_attributes(self, attrs)]
        else:
            columns = self.columns()
        if columns and delay.column not in columns:
            close = difflib.get_close_matches(delay.column, columns, n=1)
            raise InputError(f"stream {self.name}: delay column {delay.column!r} not found; "
                             f"{'attributes' if self.format == 'arff' else 'columns'} are "
                             f"{columns}" + (f" (did you mean column:{close[0]}?)"
                                             if close else ""))
        if delay.column in (self.options.get("features") or []):
            self._refuse_leak(delay.column, "the delays")

    def _refuse_leak(self, feature: str, what: str) -> None:
        """A feature known only when the label comes: a model learning from it would cheat."""
        raise InputError(f"stream {self.name}: feature {feature!r} is {what}, which a model "
                         f"must not see before the label arrives; leave it out of the option "
                         f"features")

    def feature_columns(self, columns, delay: DelaySpec | None = None) -> list[str]:
        """The columns a model sees: the `features` option's, else every column but the id,
        time, kind, label, label time and delay (`delay`, else the stream's own) columns and
        those without a name (`UNNAMED`); none when no model reads them (a backfill).

        >>> spec = StreamSpec.parse('t.csv{"delay": "column:wait"}')
        >>> spec.feature_columns(["Unnamed: 0", "time", "x", "label", "wait"])
        ['x']
        """
        o = self.options
        if not self.reads_features:
            return []
        if "features" in o:
            return list(o["features"] or [])
        delay = delay if delay is not None else self.delay(DelaySpec.parse("0"))
        reserved = {o.get(k, k) for k in ("id", "time", "kind", "label", "label_time")}
        if delay.kind == "column":
            reserved.add(delay.column)
        return [c for c in columns if c not in reserved and not UNNAMED.fullmatch(str(c))]

    def approximate_length(self) -> int | None:
        """About how many instances the stream has, read cheaply: a generator's `n`, a river
        dataset's size, a table's rows (an event log's count its labels too); None for ARFF.

        >>> StreamSpec.parse('synth:SEA{"n": 500}').approximate_length()
        500
        >>> StreamSpec.parse("dataset:Phishing").approximate_length()
        1250
        """
        o = self.options
        if self.kind == "synth":
            return int(o.get("n", 10_000))
        if self.kind == "dataset":
            from river import datasets

            size = getattr(getattr(datasets, self.source.split(":", 1)[1])(), "n_samples", None)
            return min(size, o["n"]) if size and o.get("n") else size or o.get("n")
        if self.format == "arff":
            return None
        return sum(row_count(f, fmt_of(f, self.format), csv_options(o))
                   for f in table_files(self.source))

    def drift_points(self) -> list[int]:
        """Known drift positions (1-based instance positions) of a generated stream.

        >>> StreamSpec.parse('synth:SEA{"drift": [{"at": 500, "variant": 1}]}').drift_points()
        [500]
        """
        if self.kind != "synth":
            return []
        return sorted(int(d["at"]) for d in self.options.get("drift", []))

    def declared_classes(self) -> list | None:
        if "classes" in self.options:  # (as a file's labels are read: 1.0 is the class 1)
            return [whole_as_int(c) if self.kind == "file" else c
                    for c in self.options["classes"]]
        if self.format == "arff":
            attrs = arff.header_of(self)
            cls_attr = attrs[arff.arff_class_index(self, attrs)]
            return list(cls_attr.values) if cls_attr.type == "nominal" else None
        return None

    def label_times_given(self) -> bool:
        """Whether every label time comes from the input itself (a label table, an event log,
        labelled rows with a label time column, MOA-style delayed ARFF), so no delay model is
        used."""
        if self.kind != "file":
            return False
        if self.format == "arff":
            return bool(self.options.get("delayed"))
        return "labels" in self.options or bool({self.options.get(k, k) for k in (
            "kind", "label_time")} & set(self.columns()))

    def times_are_row_numbers(self) -> bool:
        """Whether the stream has no event times, so its instances arrive one a second, the
        first at 0 (a generator, a river dataset, an ARFF file but a MOA-style delayed one, a
        table without a time column).

        >>> StreamSpec.parse('synth:SEA{"n": 10}').times_are_row_numbers()
        True
        """
        if self.kind != "file":
            return True
        if self.format == "arff":
            return not self.options.get("delayed")
        return self.options.get("time", "time") not in self.columns() and not \
            self.labels_in_rows_of_their_own()

    def labels_in_rows_of_their_own(self) -> bool:
        """Whether the stream's labels are rows of their own, matched to instances by id (an
        event log, an instance + label table, MOA-style delayed ARFF), not a column of each
        instance's row.

        >>> StreamSpec.parse('synth:SEA{"n": 10}').labels_in_rows_of_their_own()
        False
        """
        return self.kind == "file" and bool(
            "labels" in self.options or self.options.get("delayed")
            or self.options.get("kind", "kind") in self.columns())

    def label_lookahead(self, delay: DelaySpec) -> int | None:
        """How many instances after its own an instance's label is read, at most (when its
        label time is known): 0 when the label comes with its row (a delay in seconds or from
        a column, a label time column), k for a delay of k events (a random one: its largest),
        None when the input's own label rows give it, anywhere later (an event log, a label
        table, a MOA-style delayed ARFF file).

        >>> spec = StreamSpec.parse('synth:SEA{"n": 10}')
        >>> [spec.label_lookahead(DelaySpec.parse(d)) for d in ("100", "random:5:20:1", "30s")]
        [100, 20, 0]
        """
        if self.labels_in_rows_of_their_own():
            return None
        if self.label_times_given():  # labelled rows with a label time column
            return 0
        d = self.delay(delay)
        if d.unit != "events":
            return 0
        return math.ceil(d.high if d.high is not None else d.value)

    def label_kind(self, first: list | None = None) -> str | None:
        """What the stream's first labels are: 'classes' (text or true/false, or declared
        classes), 'numbers' (numbers with a fraction), or None when they cannot tell (whole
        numbers are class codes or counts alike; no label among the first rows). A river
        dataset's are what river says (`generators.dataset_label_kind`). `first`: its
        `first_values()`, if they were read already.

        >>> StreamSpec.parse('synth:Friedman{"n": 50}').label_kind()
        'numbers'
        >>> StreamSpec.parse('synth:SEA{"n": 50}').label_kind()
        'classes'
        """
        if self.declared_classes() is not None:
            return "classes"
        if self.kind == "dataset":
            from transforms.streams.generators import dataset_label_kind

            return dataset_label_kind(self) or kind_of_labels(self.first_values())
        return kind_of_labels(self.first_values() if first is None else first)

    def first_values(self, feature: str | None = None, rows: int = 1000) -> list:
        """The values of the first `rows` rows' label, as the replay reads them (or of an
        instance column, `feature`), missing ones left out.

        >>> StreamSpec.parse('synth:SEA{"n": 3, "seed": 1}').first_values(rows=2)
        [True, False]
        """
        if self.kind in ("synth", "dataset"):
            values = []
            try:
                for x, y in itertools.islice(_river_stream(self), rows):
                    values.append(y if feature is None else column_value(x, feature))
            except Exception:  # a generator failing as it draws: the read says where
                pass
            return [v for v in values if v is not None]
        if self.format == "arff":
            attrs, data = arff.load_arff(self.source, rows, arff.encoding_of(self))
            names = [a.name for a in attrs]
            at = arff.arff_class_index(self, attrs) if feature is None else \
                names.index(feature) if feature in names else len(names)
            values = [arff.typed_or_text(attrs[at], v[at]) for _, v in data[:rows]
                      if len(v) > at and not arff.is_missing(v[at])]
        else:
            o = self.options
            labels = feature is None and "labels" in o
            files = table_files(o["labels"] if labels else self.source)
            column = o.get("label", "label") if feature is None else feature
            head = head_of(files[0], fmt_of(files[0], self.format), csv_options(o), rows) \
                if files else pd.DataFrame()
            values = head[column].dropna().tolist() if column in head.columns else []
            # (a collection is a dead letter; an empty text label a missing one, as read)
            values = [v for v in values if not isinstance(v, COLLECTIONS)
                      and not (isinstance(v, str) and not v.strip())]
        if feature is None:  # as the replay reads them: 1, not 1.0 (a column with a gap, ARFF)
            checks = Checks(self)
            values = [checks.as_stream_label(v) for v in values]
        return values

    # -- driver-side checks ----------------------------------------------------------------------
    def check(self) -> None:
        """Fail fast, before any pipeline runs, on what can be seen without reading every row:
        unknown generators or datasets, missing files, misnamed columns, empty files."""
        if self.kind == "file":
            check_options(f"stream {self.name}", self.options, FILE_OPTIONS)
        TimeReading.of(self.options, f"stream {self.name}")
        positive, declared = self.options.get("positive"), self.options.get("classes")
        if declared:  # (labels are read as the first class is written: 1 and "1" are one)
            written = [written_as(c, isinstance(declared[0], str)) for c in declared]
            twice = [c for i, c in enumerate(declared) if written[i] in written[:i]]
            if twice:
                raise InputError(f"stream {self.name}: the declared classes {declared} name "
                                 f"{twice[0]!r} twice (its labels are read as the first class "
                                 f"is written); name each class once")
        if positive is not None and declared is not None and positive not in declared:
            raise InputError(f"stream {self.name}: the positive class {positive!r} is not one "
                             f"of the declared classes {declared}; name one of them")
        if self.kind in ("synth", "dataset"):
            try:  # a generator may check its parameters only when it draws
                next(iter(_river_stream(self)), None)
            except InputError:
                raise
            except Exception as e:
                raise InputError(f"stream {self.name}: {self.source} cannot draw: "
                                 f"{type(e).__name__}: {e}") from None
            return
        if "://" in self.source and self._named_format == "arff":  # (read with Python's open)
            raise InputError(f"stream {self.name}: an ARFF file is read from this machine, not "
                             f"from another filesystem ({self.source}); copy it here, or write "
                             f"it as CSV or Parquet, which are read from gs:// and s3:// too")
        if not os.path.exists(self.source) and not table_files(self.source):
            raise InputError(f"stream {self.name}: no such file or folder {self.source!r}; "
                             f"give a CSV, Parquet, JSON Lines or ARFF file (or a folder of "
                             f"them), synth:NAME or dataset:NAME")
        if "format" not in self.options and not self.source.lower().endswith(".arff"):
            _check_not_an_empty_directory(self.source, table_files(self.source))
        _ = self.ordering  # raises on an unknown order
        self._check_unique_ids()
        if self.format == "arff":
            given = sorted({*TIME_OPTIONS, "missing", *CSV_OPTIONS} - {"encoding"}
                           & set(self.options))
            if given:
                raise InputError(f"{self.source}: {', '.join(given)} is for table files (an "
                                 f"ARFF file's values and timestamps are read as written, its "
                                 f"dates as their attribute's format says, a ? value leaves "
                                 f"its attribute out); leave it out")
            attrs, rows = arff.load_arff(self.source, 1, arff.encoding_of(self))
            arff.arff_class_index(self, attrs)
            arff.check_arff_options(self, attrs)
            if not rows:
                raise InputError(f"{self.source}: the stream is empty (no @data rows)")
            return
        arff_only = sorted({"target", "delayed"} & set(self.options))
        if arff_only:  # river's iter_csv calls the label column target
            label = self.options.get("target", "...")
            raise InputError(f"{self.source}: {', '.join(arff_only)} is for ARFF files; a "
                             f"table's label column is named by the option "
                             f"{json.dumps({'label': label})}")
        offsets = []  # (whether the dates carry their UTC offset, file, column)
        for pattern, role in self._tables():
            files = table_files(pattern)
            _check_not_an_empty_directory(pattern, files)
            if not files:
                raise InputError(f"{pattern}: no such file (the {role} of stream {self.name})")
            in_any_file: dict = {}  # (the columns of every file, in order of appearance)
            for path in files:
                if "na_values" in self.options and fmt_of(path, self.format) != "csv":
                    raise InputError(f"{path}: na_values is for CSV files (in JSON Lines null "
                                     f"is missing, in Parquet a null); leave it out")
                columns = self._check_columns(path, role)
                in_any_file.update(dict.fromkeys(columns))
                if path == files[0]:
                    first_columns = columns
            # A partition may lack a feature column (a day of label rows only): its rows lack
            # the value, as where a cell is empty.
            absent = [c for c in self.options.get("features") or [] if c not in in_any_file]
            if role == "instances" and absent:
                raise InputError(f"{pattern}: feature column {absent[0]!r} not found; columns "
                                 f"are {list(in_any_file)}")
            if role == "instances" and "labels" not in self.options:
                self._check_event_log_labels(pattern, first_columns)
                self._check_kinds_named(files[0], first_columns)
            if role == ("labels" if "labels" in self.options else "instances"):
                self._check_label_column(files[0])
            if role == "instances":  # (first: such numbers are text to the next check too)
                self._check_number_marks(files[0])
            if role == "instances" and "features" not in self.options and self.reads_features:
                self._check_feature_columns(files[0])  # the first rows of the first file
            offsets += self._check_times(files[0], role)
            if not any(has_rows(path, fmt_of(path, self.format), csv_options(self.options))
                   for path in files):
                raise InputError(f"{pattern}: the stream is empty (no rows)" if role != "labels"
                                 else f"{pattern}: the label table has no rows, so no instance "
                                 f"of stream {self.name} can be scored; evaluate it once labels "
                                 f"have arrived")
        if self.options.get("missing", "dead-letter") not in ("dead-letter", "drop"):
            raise InputError(f"stream {self.name}: missing must be 'dead-letter' or 'drop'")
        self._check_one_clock(offsets)

    def _check_one_clock(self, offsets: list) -> None:
        """Dates with their UTC offset in one column and without in another (local times next
        to UTC ones, say) would be compared as if both were UTC, shifting every latency by the
        zone's offset: one line, unless a `time_zone` option says where the latter were kept."""
        given = [(path, column) for has, path, column in offsets if has]
        local = [(path, column) for has, path, column in offsets if has is False]
        if given and local and "time_zone" not in self.options:
            (path, column), (other, other_column) = given[0], local[0]
            raise InputError(
                f"stream {self.name}: the times in {other}, column {other_column}, name no "
                f"UTC offset and those in {path}, column {column}, do, so the two are compared "
                f"as if the first were UTC; name the zone they were kept in with the stream "
                f'option {{"time_zone": "Europe/Berlin"}} (for times without an offset), or '
                f'{{"time_zone": "UTC"}} if they are UTC')

    def _check_unique_ids(self) -> None:
        unique = self.options.get("unique_ids", "stream")
        if unique not in ("stream", "pending"):
            raise InputError(f"stream {self.name}: unique_ids must be 'stream' or 'pending'")
        if unique == "pending" and self.labels_in_rows_of_their_own():
            raise InputError(f"stream {self.name}: unique_ids 'pending' is for labelled rows; "
                             f"an event log or an instance + label table matches labels to "
                             f"instances by id over the whole table, so its ids must be unique")

    def columns(self) -> list[str]:
        """The columns of the stream's files, of all of them (an event log's first partition
        may lack a column a later one has); an ARFF file's are attributes, not these."""
        if self.format == "arff":
            return []
        if self.table_columns is not None:
            return list(self.table_columns)
        return table_columns(self)

    def _check_columns(self, path: str, role: str) -> list[str]:
        """The columns the options name are in the file (every file of a partitioned table);
        returns the file's columns."""
        o = self.options
        split = "labels" in o
        columns = columns_of(path, fmt_of(path, self.format), csv_options(self.options))
        if fmt_of(path, self.format) == "jsonl" and is_whole_json_document(path, columns):
            raise InputError(f"{path}: {WHOLE_TABLE_JSON}")
        if not columns:
            bad = first_bad_line(path, csv_options(o)) if fmt_of(path, self.format) == "jsonl" \
                else None
            raise InputError(f"{path}: the stream is empty (no columns)" if bad is None else
                             f"{path}: no line is a JSON object ({bad}); write one object "
                             f"per line, e.g. {{\"time\": 0, \"x\": 1.5, \"label\": \"a\"}}")
        # The label table's id and time columns have options of their own.
        own = {"label_id": self.label_table_id, "label_time": self.label_table_time} \
            if role == "labels" else {}
        if role == "labels":  # joined by id, and a label without a time means nothing
            required, optional = ("label_id", "label_time", "label"), ()
        elif split:  # the label options belong to the label table
            required, optional = ("id",), ("time", "kind")
        else:
            required, optional = (), ("id", "time", "kind", "label", "label_time")
        if columns[0].startswith("sep=") and len(columns) <= 2 and self.format == "csv":
            # (a header 'sep=;' read with the separator it declares: 'sep=' and a blank)
            excel = excel_separator_line(path, columns[0] if len(columns) == 1 else
                                         f"sep={o.get('sep', ',')}")
            if excel is not None:
                raise excel
        if len(columns) == 1 and self.format == "csv":
            sep = other_separator(columns[0], o.get("sep", ","))
            if sep is not None:
                given = f", not by {o['sep']!r}" if "sep" in o else ""
                raise InputError(f"{path}: one column, {columns[0][:60]!r}: the file seems "
                                 f"separated by {sep!r}{given}; give the stream option "
                                 f"{json.dumps({'sep': sep})}")
        extra = unnamed_fields(path, csv_options(o)) \
            if fmt_of(path, self.format) == "csv" else None
        if extra is not None:
            row, fields, header = extra
            raise InputError(f"{path}, row {row}: {len(fields)} fields where the header names "
                             f"{len(header)} columns, and {fields[len(header):]} has no "
                             f"column; name every column in the header")
        named = required + tuple(k for k in optional if k in o)
        if role == "instances" and not split and o.get("kind", "kind") not in columns:
            named += ("label",)  # a table of rows: without labels nothing could be evaluated
        for opt in optional:  # a header "id, time, x": " time" would be a feature
            col = o.get(opt, opt)
            spaced = [c for c in columns if c != c.strip() and c.strip() == col]
            if col not in columns and spaced:
                raise InputError(f"{path}: column {spaced[0]!r} has spaces around its name, so "
                                 f"it is not the {opt} column {col!r}; name it with the stream "
                                 f"option {json.dumps({opt: spaced[0]})}, or write the header "
                                 f"without them")
        for opt in dict.fromkeys(named):
            col = own.get(opt) or o.get(opt, opt)
            if col is None and opt not in required + ("time",) * split:
                continue  # (null: no such column; a label table's labels need the times)
            if col is None:
                raise InputError(f"{path}: the stream option {opt} is null, but a stream with "
                                 f"a label table needs its {opt} column; name that column")
            if col not in columns:
                _column_not_found(path, opt, col, columns)
        if role == "instances":
            features = list(o.get("features") or [])
            for col in features:
                if features.count(col) > 1:
                    raise InputError(f"stream {self.name}: feature {col!r} is listed twice in "
                                     f"the option features; list each column once")
            answers = {} if split else {o.get("label", "label"): "the label column",
                                        o.get("label_time", "label_time"): "the label times"}
            leak = next((c for c in features if c in answers), None)
            if leak is not None:
                self._refuse_leak(leak, answers[leak])
        return columns

    def _check_feature_columns(self, path: str) -> None:
        """Columns that would become features but hold what no model takes (dates, durations,
        lists or objects), or text that looks like event times or ids (read from the file's
        first rows): a model would learn from them, or fail on them."""
        o = self.options
        head = head_of(path, fmt_of(path, self.format), csv_options(o))
        others = self.feature_columns(list(head.columns))
        for col in others:
            values = head[col].dropna()
            keep = [c for c in others if c != col]
            leave_out = f'leave it out with {json.dumps({"features": keep})}'
            kind, hint = _untaken(values)
            if kind == "dates" and o.get("time") is None:  # (null: the column is no time)
                hint = f'give {json.dumps({"time": col})} if it is the event time, or '
            if kind:
                raise InputError(
                    f"{path}: column {col!r} holds {kind}, which a model cannot take as a "
                    f"feature; {hint}{leave_out}" + (
                        f", or keep it for a model that reads {kind} itself (a river "
                        f"transformer of its own) with {json.dumps({'features': others})}"
                        if kind in ("dates", "durations") else ""))
            if pd.api.types.is_numeric_dtype(values) or not len(values) or \
                    not all(isinstance(v, str) for v in values) or \
                    numbers_of(values).notna().mean() >= 0.9:
                continue  # numbers (a few bad cells make them text: dead letters per row)
            dated = values.str.match(DATE_LIKE).mean() >= 0.9
            spelled = [] if dated else spelled_dates(values)  # (Sun, 01 Nov 2026 08:30)
            if dated or spelled:
                time = {"time": col, **({"time_format": spelled[0]} if spelled else {})}
                hint = f'give {json.dumps(time)} if it is the event time, or ' \
                    if o.get("time") is None else ""
                raise InputError(f"{path}: column {col!r} holds dates, which a model cannot "
                                 f"take as a feature; {hint}{leave_out}")
            named_like_id = col.lower() in ("id", "key", "uuid") or \
                col.lower().endswith(("_id", "id", "_key", "uuid"))
            # Words with spaces between them are free text (a review, a message), which a text
            # model reads (river's BagOfWords, TFIDF), each row's different: no id.
            words = values.str.strip().str.contains(r"\s").mean() >= 0.9
            if values.is_unique and (named_like_id or len(values) >= 20 and not words):
                hint = f'give {json.dumps({"id": col})} if it names the instance, or ' \
                    if o.get("id") is None else ""
                raise InputError(f"{path}: column {col!r} has a different text value in every "
                                 f"row, like an id, which a model cannot learn from; {hint}"
                                 f"{leave_out}")

    def _check_event_log_labels(self, pattern: str, first_columns: list[str]) -> None:
        """An event log's label rows carry their label in the label column, which one of its
        files must have (a day's partition of instances alone may lack it): without it every
        label row would be a dead letter, and the column holding the labels a feature."""
        label = self.options.get("label", "label")
        if label in first_columns:
            return  # (the usual case: no other file is read for it)
        columns = self.columns()
        if self.options.get("kind", "kind") in columns and label not in columns:
            _column_not_found(pattern, "label", label, columns)

    def _check_kinds_named(self, path: str, columns: list[str]) -> None:
        """An event log whose kind column has another name (`event`, `type`) would be read as
        labelled rows: each label row an instance, each instance unlabelled. A text column
        whose first rows (the file has `columns`) are instance and label rows says so."""
        kind = self.options.get("kind", "kind")
        if kind in columns:
            return  # (the usual case: no row is read for it)
        head = head_of(path, fmt_of(path, self.format), csv_options(self.options))
        for col in head.columns:
            values = head[col].dropna()
            if not len(values) or not all(isinstance(v, str) for v in values):
                continue
            words = set(kind_words(values))
            if {INSTANCE, LABEL} <= words <= {INSTANCE, UPDATE, LABEL}:
                raise InputError(f"{path}: column {col!r} holds the kinds of an event log's "
                                 f"rows ({INSTANCE}, {LABEL}), and the stream's kind column "
                                 f"is {kind!r}; name it with the stream option "
                                 f"{json.dumps({'kind': col})}")

    def _check_label_column(self, path: str) -> None:
        """A label column whose first rows hold lists (JSON lists, a Parquet list column): no
        class and no number, so one line now rather than a dead letter per row (a stray row's
        list is one, `Checks.label`)."""
        column = self.options.get("label", "label")
        head = head_of(path, fmt_of(path, self.format), csv_options(self.options))
        labels = head[column].dropna() if column in head.columns else pd.Series([])
        if len(labels) and np.mean([isinstance(y, COLLECTIONS) for y in labels]) >= 0.9:
            raise InputError(f"{path}: column {column!r} holds lists, and a label is one class "
                             f"or one number; write one label per row, or name the label "
                             f'column with the stream option {{"label": "..."}}')

    def _check_number_marks(self, path: str) -> None:
        """Features, labels and a delay column written with decimal commas or thousands
        separators (read from the file's first rows) would be text to a model, classes and no
        delay: one line that says how to read them."""
        o = self.options
        if fmt_of(path, self.format) != "csv" or "decimal" in o or "thousands" in o:
            return
        head = head_of(path, "csv", csv_options(o))
        numbers = self.feature_columns(list(head.columns))
        delay = self.delay(DelaySpec.parse("0"))
        if delay.kind == "column":
            numbers.append(delay.column)
        if "labels" not in o:  # (a label table's labels are in another file)
            numbers.append(o.get("label", "label"))
        for col in numbers:
            values = head[col].dropna() if col in head.columns else pd.Series([], dtype=object)
            if not len(values) or pd.api.types.is_numeric_dtype(values):
                continue
            text = values.astype(str)
            commas = text[text.str.contains(",")]
            # A "." followed by other than 3 digits, or after a lone 0, is a decimal point
            # (1.5, 0.250), not a thousands mark: a comma there is a typo, not the decimal mark.
            points = text.str.contains(r"\.(?:\d{1,2}|\d{4,})(?!\d)|(?<!\d)0\.\d").any()
            if len(commas) and not points and text.str.fullmatch(DECIMAL_COMMA).mean() >= 0.9:
                marks = {"decimal": ","}
                if text.str.contains(r"\d\.\d{3}(?:,|$)").any():
                    marks["thousands"] = "."
                raise InputError(f"{path}: column {col!r} holds numbers written with a decimal "
                                 f"comma ({commas.iloc[0]!r}), which would be read as text; "
                                 f"give the stream option {json.dumps(marks)}")
            marks, example = thousands_marks(text)
            if marks:
                raise InputError(f"{path}: column {col!r} holds numbers written with thousands "
                                 f"separators ({example!r}), which would be read as text; "
                                 f"give the stream option {json.dumps(marks)}")

    def _check_times(self, path: str, role: str) -> list:
        """The first rows' times name dates in the stream's time unit (epoch milliseconds read
        as seconds would be after the year 9999): one line now, not a dead letter per row.
        Returns (whether its dates carry their UTC offset, `with_offsets`; file; column) per
        time column."""
        o = self.options
        if role == "labels":
            columns = [self.label_table_time]
        else:
            columns = [o.get(name, name) for name in (("time",) if "labels" in o
                                                      else ("time", "label_time"))]
        head = head_of(path, fmt_of(path, self.format), csv_options(o), 20)
        reading = TimeReading.of(o)
        offsets = []
        for column in columns:
            if column not in head.columns:
                continue
            offsets.append((with_offsets(head[column], reading.format), path, column))
            t, bad = event_seconds(head, column, reading=reading)
            late = np.isfinite(t) & bad
            if late.any():
                value = head[column][late].iloc[0]
                raise InputError(f"{path}, column {column}: {time_problem(value, reading)}")
            written = head[column].dropna()
            if reading.format is None and len(written) and bad.all() and \
                    formats_of_dates(written):  # a column of such dates: one line, not a
                raise InputError(f"{path}, column {column}: "  # dead letter per row
                                 f"{time_problem(written.iloc[0], seen=written)}")
        return offsets

    def _tables(self) -> list[tuple[str, str]]:
        tables = [(self.source, "instances")]
        if "labels" in self.options:
            tables.append((self.options["labels"], "labels"))
        return tables

    # -- reading -------------------------------------------------------------------------------
    def locate(self, delay: DelaySpec, seqs) -> dict:
        """{seq: (file, row)} of the events `seqs` (their place in the stream, `SEQ`), by
        reading the stream again: what a dead letter of the replay names (a label whose
        instance is not pending, a model error) is found in its file. A generated stream's
        events have no file: (None, row number).

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "rows.csv")
        >>> with open(path, "w") as f:
        ...     _ = f.write("time,x,label\\n0,1.0,a\\n1,oops,b\\n2,3.0,a\\n")
        >>> where = StreamSpec.parse(path).locate(DelaySpec.parse("1"), {2, 3})
        >>> {seq: (os.path.basename(f), row) for seq, (f, row) in where.items()}
        {2: ('rows.csv', 3), 3: ('rows.csv', 3)}
        """
        where = dict.fromkeys(seqs)
        for _ in self.events(delay, where):
            pass
        return {seq: found for seq, found in where.items() if found is not None}

    def events(self, delay: DelaySpec, where: dict | None = None) -> Iterator:
        """Event tuples and dead-letter dicts, for the whole stream; `where`: see `locate`."""
        delay = self.delay(delay)
        checks = Checks(self, generated_ids=self.kind in ("synth", "dataset"), where=where)
        if self.kind in ("synth", "dataset"):
            rows = ((None, i + 1, i, float(i), x, y, None, None)
                    for i, (x, y) in enumerate(_river_stream(self)))
            items = labelled_rows(self, rows, delay, checks)
        elif self.format == "arff":
            items = arff.arff_events(self, delay, checks)
        else:
            items = table_events(self, delay, checks)
        if self.ordering == "input":  # file order alone breaks ties of t
            items = (i if isinstance(i, dict) else (i[0], 0, *i[2:]) for i in items)
        yield from items


def _column_not_found(where: str, option: str, column: str, columns: list[str]) -> None:
    """One line for a column an option names that the table lacks, with the likeliest one.

    >>> _column_not_found("log.csv", "label", "label", ["id", "time", "kind", "target"])
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: log.csv: column 'label' (option 'label') not found; columns \
are ['id', 'time', 'kind', 'target']; name it with the stream option {"label": "target"}
    """
    guess = guess_column(option, column, columns)
    hint = (f"name it with the stream option {json.dumps({option: guess})}"
            if guess else f'name yours with the stream option {{"{option}": "..."}}')
    raise InputError(f"{where}: column {column!r} (option {option!r}) not found; columns are "
                     f"{columns}; {hint}")
