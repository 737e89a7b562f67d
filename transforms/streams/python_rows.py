"""Streams given from Python as data rather than as a spec: (x, y) pairs, as river's
`stream.iter_pandas(X, y)` yields them or in a list, pandas DataFrames with a `label`
column, and a pair (X, y) of a DataFrame (or 2-D array) and its labels, as scikit-learn
takes them. Each is written once to a Parquet file (one row per instance: its features and its
label; ids and times are the row numbers, as for a generator, unless a DataFrame with a label
column has a `time` column, or a DataFrame a DatetimeIndex), whose path is then the spec, so
every runner's workers read it as any other table. Every key of a pair's x, and every column
of X, is a feature, whatever its name, as river gives them to a model."""

from __future__ import annotations

import collections.abc
import contextlib
import json
import numbers
import os
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from transforms.errors import ConfigError, DelayedEvalError, one_line, shown_briefly
from transforms.specs import checked_name
from transforms.streams.rows import written_as
from transforms.streams.sources import NO_COLUMN_ROLES, UNNAMED
from transforms.streams.tables import WHOLE_NUMBER

# The label column's name: the first of these that no feature has.
LABEL_NAMES = ("label", "y", "target", "_label")

# Where `evaluate` writes a prediction log given as a DataFrame, below its inputs folder (apart
# from the streams' files, whatever their names).
LOG_PATH = "logs/predictions.parquet"

# Marks a table written here in its Parquet metadata: the only file at its path that a later
# call may write over (a user's own file of that name is kept).
WRITTEN_KEY = b"delayed-eval.written-from-python"


@dataclass(frozen=True)
class RowsWithOptions:
    """Data given from Python with its stream options (`{"positive": "fraud"}`, `classes`,
    ...), as `stream_spec_of(data, **options)` gives it: written as any data, read with the
    options.

    >>> import tempfile
    >>> data = RowsWithOptions([({"a": 1.0}, "ok"), ({"a": 2.0}, "fraud")], {"positive": "fraud"})
    >>> written_streams({"tx": data}, tempfile.mkdtemp())["tx"].endswith(
    ...     'tx.parquet{"positive": "fraud"}')
    True
    """

    rows: object
    options: dict = field(default_factory=dict)


def is_rows(stream) -> bool:
    """Whether `stream` is data to write (a DataFrame, an iterator of (x, y) pairs, a list
    of them, or a DataFrame X with its labels y), not a spec or a river dataset.

    >>> is_rows([({"a": 1.0}, True)]), is_rows(iter([])), is_rows("synth:SEA")
    (True, True, False)
    >>> from river import datasets
    >>> is_rows(datasets.Phishing()), is_rows(["synth:SEA", "dataset:Phishing"])
    (False, False)
    >>> is_rows((pd.DataFrame({"a": [1.0, 2.0]}), ["x", "y"])), is_rows((np.eye(2), [0, 1]))
    (True, True)
    """
    if isinstance(stream, (pd.DataFrame, RowsWithOptions)) or _is_features_and_labels(stream):
        return True
    if isinstance(stream, list):  # (x, y) pairs, not streams (specs, or (X, y) of frames)
        return bool(stream) and all(isinstance(p, tuple) and len(p) == 2 and not isinstance(
            p[0], (str, pd.DataFrame)) for p in stream)
    return isinstance(stream, collections.abc.Iterator) and not isinstance(stream, str)


def _is_features_and_labels(stream) -> bool:
    """A pair (X, y) as scikit-learn takes it: a DataFrame or a two-dimensional NumPy array of
    features and one label per row (a Series, a one-dimensional array or a list), not two
    streams."""
    if not (isinstance(stream, tuple) and len(stream) == 2 and (
            isinstance(stream[0], pd.DataFrame)
            or isinstance(stream[0], np.ndarray) and stream[0].ndim == 2)):
        return False
    labels = stream[1]
    return isinstance(labels, (pd.Series, list)) or getattr(labels, "ndim", None) == 1


def written_streams(streams, folder: str):
    """`streams` as given to `evaluate` (one, a list, or a dict {name: stream}), with each one
    that is data (`is_rows`) written to `folder`/NAME.parquet and named by its spec.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> spec = written_streams([({"a": 1.0}, "x"), ({"a": 2.0}, "y")], folder)
    >>> spec == f"data={folder}/data.parquet"
    True
    >>> pd.read_parquet(f"{folder}/data.parquet").to_dict("list")
    {'a': [1.0, 2.0], 'label': ['x', 'y']}
    >>> written_streams({"web": "dataset:Phishing", "xy": [({"a": 1.0}, "x")]}, folder
    ...                 ) == {"web": "dataset:Phishing", "xy": f"{folder}/xy.parquet"}
    True
    """
    names: list = []

    def written(stream, name):
        if not is_rows(stream):  # (a spec, a path, a river object: `stream_spec_of`'s)
            return stream
        if name is None:
            name = "data" if "data" not in names else f"data{len(names) + 1}"
        names.append(name)
        table, options = _table(stream, name)
        options = {**_integer_keys(table.columns), **options}
        table = _labels_of_one_kind(_intervals_and_periods_as_text(table),
                                    options.get("label", "label"))
        path = f"{folder.rstrip('/')}/{name}.parquet"
        _write_table(table, path, f"stream {name}", "each feature and the label",
                     index=False)
        return path + (json.dumps(options) if options else "")

    def named(stream):  # (a dict's streams are named by its keys)
        spec = written(stream, None)
        return spec if spec is stream else f"{names[-1]}={spec}"

    if isinstance(streams, dict):
        for name in streams:  # (they name files: all checked before one is written)
            checked_name(name, "stream")
        return {name: written(s, name) for name, s in streams.items()}
    if isinstance(streams, (list, tuple)) and not is_rows(streams):
        return [named(s) for s in streams]
    return named(streams)


def written_log(log, folder: str):
    """A prediction log given to `evaluate` as a DataFrame (its columns named as a log file's:
    `id`, `t`, `y_pred`, ...; or `stream_spec_of(frame, **log_options)`, `time="scored_at"`),
    written to `folder`/`LOG_PATH` (a named index is a column, as in any Parquet file pandas
    writes); returns the spec that reads it. A path is returned as it is.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> frame = pd.DataFrame({"id": ["a"], "t": [1.0], "decision": ["ok"]})
    >>> spec = written_log(RowsWithOptions(frame, {"prediction": "decision"}), folder)
    >>> spec == f'{folder}/{LOG_PATH}{{"prediction": "decision"}}'
    True
    >>> written_log("logs/p.parquet", folder)
    'logs/p.parquet'
    """
    frame, options = (log.rows, log.options) if isinstance(log, RowsWithOptions) else (log, {})
    if not isinstance(frame, pd.DataFrame):
        if log is None or isinstance(log, (str, os.PathLike)):
            return log
        raise ConfigError(f"predictions: a {type(frame).__name__} given; give the log's path "
                          f"(a file, a glob or a folder) or a pandas DataFrame of its rows")
    path = f"{folder.rstrip('/')}/{LOG_PATH}"
    _write_table(_intervals_and_periods_as_text(frame), path, "the prediction log given",
                 "each column", index=None)
    return path + (json.dumps(options) if options else "")


def _write_table(table: pd.DataFrame, path: str, what: str, columns: str, index) -> None:
    """`table` as the Parquet file `path`, marked as written here (`WRITTEN_KEY`); `index` as
    pyarrow's `preserve_index`; `what` names the data in an error. A file at `path` not so
    marked (a user's own) is kept, and the call refused."""
    _refuse_a_file_not_ours(path)
    try:
        arrow = pa.Table.from_pandas(table, preserve_index=index)
        arrow = arrow.replace_schema_metadata({**arrow.schema.metadata, WRITTEN_KEY: b"1"})
        with _created(path) as f:
            pq.write_table(arrow, f)
    except (ValueError, TypeError, OverflowError, NotImplementedError,
            pa.ArrowException) as e:  # (Arrow's)
        where, mixed = _first_collection(table), _numbers_and_text(table)
        if where is None and mixed is not None:
            column, (number_row, number), (text_row, text) = mixed
            number = getattr(number, "item", lambda: number)()  # (a NumPy scalar's value)
            raise ConfigError(
                f"{what}: column {column!r} holds numbers (row {number_row + 1}: {number!r}) "
                f"and text (row {text_row + 1}: {shown_briefly(text)}); give it one kind: "
                f"numbers, NaN where there is none (pd.to_numeric(column, "
                f"errors='coerce')), or text (column.astype(str))") from None
        raise ConfigError(f"{what}: its rows cannot be written as a table (" + (
            f"row {where[1] + 1}'s {where[0]} is {where[2]!r}" if where else
            one_line(e)[:200]) + f"); give {columns} numbers (of 64 bits at most) or text, "
            "one kind per column") from None


@contextlib.contextmanager
def errors_naming_the_data(folder: str):
    """A mistake found in data given from Python (a stream, a prediction log) names that data,
    not the Parquet file it was written to in `folder` (which the user never made, and
    `evaluate_locally` removes), and an option it suggests as `stream_spec_of` takes it.

    >>> with errors_naming_the_data("out/inputs"):
    ...     raise ConfigError('out/inputs/tx.parquet: column "when" holds dates; give '
    ...                       '{"time": "when"} if it is the event time')
    Traceback (most recent call last):
    ...
    transforms.errors.ConfigError: stream tx (the data given): column "when" holds dates; give \
{"time": "when"} if it is the event time (from Python: stream_spec_of(data, time="when"))
    """
    try:
        yield
    except DelayedEvalError as error:
        text = str(error)
        log = f"{folder.rstrip('/')}/{LOG_PATH}"
        copy = re.search(re.escape(folder.rstrip("/")) + r"/([^/\s]+?)\.parquet", text)
        if copy is None and log not in text:
            raise
        given = "prediction log (the DataFrame given)"
        text = text.replace(f"prediction log {log}", given).replace(log, given)
        if copy is not None:
            text = text.replace(copy.group(0), f"stream {copy.group(1)} (the data given)")
        option = re.search(r'\{"(\w+)": ([^{}]+)\}', text)
        if option is not None:
            text += f" (from Python: stream_spec_of(data, {option[1]}={option[2]}))"
        raise type(error)(text) from None


def _named_by_path(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame's multi-level columns named by their path, as a nested JSON object's are.

    >>> columns = pd.MultiIndex.from_tuples([("amount", "eur"), ("label", "")])
    >>> _named_by_path(pd.DataFrame([[9.5, "ok"]], columns=columns)).columns.tolist()
    ['amount.eur', 'label']
    """
    if not isinstance(frame.columns, pd.MultiIndex):
        return frame
    return frame.set_axis([".".join(str(p) for p in c if p != "") for c in frame.columns],
                          axis=1)


def _first_collection(table: pd.DataFrame) -> tuple | None:
    """(column, row, value) of the first list, tuple, set or dict in a table of rows (a label
    given as a pair, say), or None.

    >>> _first_collection(pd.DataFrame({"a": [1.0, 2.0], "label": ["x", ("y", 1)]}))
    ('label', 1, ('y', 1))
    """
    for column in table.select_dtypes(include="object").columns:
        for row, value in enumerate(table[column]):
            if isinstance(value, (list, tuple, set, dict)):
                return column, row, value
    return None


def _intervals_and_periods_as_text(table: pd.DataFrame) -> pd.DataFrame:
    """The table with each column of pandas intervals (`pd.cut`'s bins) or periods as their
    text, '(0.5, 1.0]' or '2026-11': no Parquet column holds them, and as text they are
    categories, as one-hot-text takes them (river's encoder names them by that text too); a
    column of periods is then dates, as a file's.

    >>> table = pd.DataFrame({"x": [0.2, 0.9], "month": pd.period_range("2026-11", periods=2,
    ...                                                                  freq="M")})
    >>> table["bin"] = pd.cut(table["x"], [0, 0.5, 1])
    >>> _intervals_and_periods_as_text(table).to_dict("list")
    {'x': [0.2, 0.9], 'month': ['2026-11', '2026-12'], 'bin': ['(0.0, 0.5]', '(0.5, 1.0]']}
    """
    kinds = (pd.Interval, pd.Period)
    table = table.copy(deep=False)
    for column in table.columns:
        values = table[column]
        dtype = values.dtype.categories.dtype if isinstance(values.dtype, pd.CategoricalDtype) \
            else values.dtype
        # (objects: told by pandas' one pass over them, a mixture then looked through)
        if isinstance(dtype, (pd.IntervalDtype, pd.PeriodDtype)) or \
                pd.api.types.is_object_dtype(dtype) and _holds_any(values, kinds):
            table[column] = values.astype(object).map(
                lambda v: str(v) if isinstance(v, kinds) else v)
    return table


def _holds_any(values: pd.Series, kinds: tuple) -> bool:
    """Whether a column of objects holds a value of one of `kinds` (pandas' intervals,
    periods): a column of text alone is told by `infer_dtype`'s pass in C, not by a Python
    loop over its rows.

    >>> _holds_any(pd.Series(["a", pd.Interval(0, 1)]), (pd.Interval,))
    True
    >>> _holds_any(pd.Series(["a", "b"], dtype=object), (pd.Interval,))
    False
    """
    inferred = pd.api.types.infer_dtype(values, skipna=True)
    if inferred in ("interval", "period"):
        return True
    return inferred.startswith("mixed") and any(isinstance(v, kinds) for v in values)


def _numbers_and_text(table: pd.DataFrame) -> tuple | None:
    """(column, (row, number), (row, text)) of the first column of objects that holds both
    numbers and text (a value a spreadsheet could not compute, 'n/a' among amounts), each
    with its first row; or None.

    >>> _numbers_and_text(pd.DataFrame({"a": ["x", "y"], "b": [1.5, None], "c": [2, "n/a"]}))
    ('c', (0, 2), (1, 'n/a'))
    """
    for column in table.select_dtypes(include="object").columns:
        number = text = None
        for row, value in enumerate(table[column]):
            if number is None and isinstance(value, numbers.Number) and \
                    not isinstance(value, bool) and value == value:
                number = (row, value)
            elif text is None and isinstance(value, str):
                text = (row, value)
            if number and text:
                return column, number, text
    return None


def _refuse_a_file_not_ours(path: str) -> None:
    """A ConfigError if `path` holds a file that no call wrote data to (`WRITTEN_KEY`): the
    data is written over what a call wrote before, never over a user's file.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "data.parquet")
    >>> with open(path, "w") as f:
    ...     _ = f.write("mine")
    >>> _refuse_a_file_not_ours(path)
    Traceback (most recent call last):
    ...
    transforms.errors.ConfigError: .../data.parquet exists and holds no data written by \
delayed-eval; give another out folder, or move the file
    """
    remote = "://" in path
    if remote:
        from apache_beam.io.filesystems import FileSystems
    if not (FileSystems.exists(path) if remote else os.path.exists(path)):
        return
    try:
        with FileSystems.open(path) if remote else open(path, "rb") as f:
            ours = WRITTEN_KEY in (pq.read_schema(f).metadata or {})
    except (OSError, pa.ArrowException):
        ours = False
    if not ours:
        raise ConfigError(f"{path} exists and holds no data written by delayed-eval; give "
                          f"another out folder, or move the file")


def _created(path: str):
    """A new file at `path`, local or (through Beam's FileSystems) on an object store."""
    if "://" in path:
        from apache_beam.io.filesystems import FileSystems

        return FileSystems.create(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return open(path, "wb")


def _labels_of_one_kind(table: pd.DataFrame, label: str) -> pd.DataFrame:
    """The table with its labels written as its first label is (text or numbers,
    `written_as`), as a file's are read: a column of 1 and "1" is one class, and can be
    written as a table.

    >>> table = pd.DataFrame({"label": pd.Series(["1", 0, 1.0, None], dtype=object)})
    >>> _labels_of_one_kind(table, "label")["label"].fillna("(missing)").tolist()
    ['1', '0', '1', '(missing)']
    """
    labels = table[label] if label in table.columns else pd.Series([], dtype=float)
    if labels.dtype != object:
        return table
    present = labels.dropna()
    text = isinstance(present.iloc[0], str) if len(present) else True
    if all(isinstance(y, str) == text for y in present):
        return table
    return table.assign(**{label: [y if y is None or y != y else written_as(y, text)
                                   for y in labels]})


def _table(stream, name: str, label: str = "label") -> tuple[pd.DataFrame, dict]:
    """The rows as a table and the stream options that read it (a DataFrame's labels are in
    its column `label`)."""
    if isinstance(stream, RowsWithOptions):
        table, options = _table(stream.rows, name)
        options = {**options, **stream.options}
        if "features" not in stream.options and "features" in options:  # (less what they name)
            named = {options.get(role, role) for role in NO_COLUMN_ROLES}
            options["features"] = [c for c in options["features"] if c not in named]
        return table, options
    if _is_features_and_labels(stream):
        # (an array's columns are its features' numbers, as river's iter_array names them)
        features, labels = pd.DataFrame(stream[0]).pipe(_named_by_path), stream[1]
        if len(features) != len(labels):
            raise ConfigError(f"stream {name}: X has {len(features)} rows and y "
                              f"{len(labels)} labels; give one label per row")
        label = next(n for n in LABEL_NAMES if n not in features.columns)
        # (by position, as river's iter_pandas pairs them; a Series keeps its dtype)
        values = (labels if isinstance(labels, pd.Series) else pd.Series(labels)).array
        table, options = _table(features.assign(**{label: values}), name, label)
        return table, {**options, **_every_key_a_feature(features.columns, label)}
    if isinstance(stream, pd.DataFrame):
        stream = _named_by_path(stream)
        if label not in stream.columns:
            raise ConfigError(f"stream {name}: a DataFrame stream needs a 'label' column (its "
                              f"columns are {list(stream.columns)[:10]}); rename the target "
                              f"column to label, or give river.stream.iter_pandas(X, y)")
        if stream.empty:
            raise ConfigError(f"stream {name}: the DataFrame has no rows")
        twice = stream.columns[stream.columns.duplicated()]
        if len(twice):
            raise ConfigError(f"stream {name}: two columns are named {twice[0]!r}; rename one "
                              f"of them")
        sparse = [c for c, dtype in stream.dtypes.items() if isinstance(dtype, pd.SparseDtype)]
        if sparse:  # (Arrow writes no sparse column)
            stream = stream.astype({c: stream[c].dtype.subtype for c in sparse})
        options = {} if label == "label" else {"label": label}
        if isinstance(stream.index, pd.DatetimeIndex) and "time" not in stream.columns:
            return stream.reset_index(names="time"), options  # (a time series: its times)
        return stream, options
    xs, ys = [], []
    for pair in stream:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise ConfigError(f"stream {name}: row {len(xs) + 1} is {type(pair).__name__}, "
                              f"not an (x, y) pair with x a dict of features")
        if not isinstance(pair[0], dict):
            raise ConfigError(f"stream {name}: row {len(xs) + 1}'s x is "
                              f"{type(pair[0]).__name__}, not a dict of features; give "
                              f"river.stream.iter_array(X, y) for arrays, or (X, y) with X a "
                              f"DataFrame")
        xs.append(pair[0])
        ys.append(pair[1])
    if not xs:
        raise ConfigError(f"stream {name}: no (x, y) pair in it")
    table = pd.DataFrame.from_records(xs)
    label = next(n for n in LABEL_NAMES if n not in table.columns)
    table[label] = ys
    options = {} if label == "label" else {"label": label}
    if any(x.keys() != xs[0].keys() for x in xs):  # a row without a feature: river's sparse x
        options["missing"] = "drop"
    return table, {**options, **_every_key_a_feature(table.columns, label)}


def _integer_keys(columns) -> dict:
    """The stream option that gives a model its features named by integers as integers
    (`{0: 1.5}`, as `river.stream.iter_array` and `pd.DataFrame(array)` name them), which
    the table names by their texts; none where a text feature is named by a whole number,
    which would become one.

    >>> _integer_keys([0, 1, "label"]), _integer_keys(["a", "label"]), _integer_keys([0, "1"])
    ({'integer_keys': True}, {}, {})
    """
    integers = [c for c in columns if isinstance(c, numbers.Integral) and not isinstance(c, bool)]
    if not integers or any(isinstance(c, str) and WHOLE_NUMBER.fullmatch(c) for c in columns):
        return {}
    return {"integer_keys": True}


def _every_key_a_feature(columns, label: str) -> dict:
    """The stream options under which each column but the label is a feature, as each key of
    an (x, y) pair's x is river's: a key named as a table's role (`time`, `id`, `kind`,
    `label_time`) names no such column, and one named as pandas names a column without a
    header (`Unnamed: 0`) is listed as a feature.

    >>> _every_key_a_feature(["time", "x", "label"], "label")
    {'time': None}
    >>> _every_key_a_feature(["Unnamed: 0", "x", "y"], "y")
    {'features': ['Unnamed: 0', 'x']}
    >>> _every_key_a_feature(["x"], "label")
    {}
    """
    options = {role: None for role in NO_COLUMN_ROLES if role in columns}
    if any(UNNAMED.fullmatch(str(c)) for c in columns):
        options["features"] = [str(c) for c in columns if c != label]
    return options
