"""Row-level pieces shared by every source: the input error, row checks (duplicate ids,
undeclared classes), labelled rows -> events, and time values."""

from __future__ import annotations

import datetime
import json
import math
import warnings
from collections.abc import Iterator

import numpy as np
import pandas as pd

from transforms.errors import shown_briefly
from transforms.records import dead_letter, fields_record, is_missing, readable_time, with_record
from transforms.streams.delays import DelaySpec, LabelTimeAssigner, in_column_unit
from transforms.streams.times import read_datetimes

# What a cell holds that is one value of many (a JSON list, a Parquet list column's array):
# never one class or one number.
COLLECTIONS = (list, tuple, dict, set, np.ndarray)


def number_text(value) -> str:
    """A number as the text a table's ids and labels meet on: a whole float as an integer's
    (7.0 is "7": a column of integers with a gap is read as floats).

    >>> number_text(7.0), number_text(2.5), number_text(7), number_text(True)
    ('7', '2.5', '7', 'True')
    """
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def written_as(value, text: bool):
    """`value` written as text (`text`: a number's text, `number_text`) or as a number (text's
    number, or boolean, if it reads as one; else the text).

    >>> written_as(2.0, True), written_as(" 2 ", False), written_as("1.5", False)
    ('2', 2, 1.5)
    >>> written_as("True", False), written_as("x", False), written_as("nan", False)
    (True, 'x', 'nan')
    """
    if isinstance(value, str) == text:
        return value
    if text:
        return number_text(value)
    if value.strip().lower() in ("true", "false"):  # (as a CSV reader reads them)
        return value.strip().lower() == "true"
    try:
        return int(value)
    except ValueError:
        pass
    try:
        number = float(value)
    except ValueError:
        return value
    return number if math.isfinite(number) else value


def number_in(value) -> float | None:
    """The number `value` is, or its text spells (as `float` reads it), else None.

    >>> number_in("1.5"), number_in(" 2 "), number_in(3), number_in("#VALUE!"), number_in(None)
    (1.5, 2.0, 3.0, None, None)
    """
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def na_values_option(texts: list[str]) -> str | None:
    """The stream option that reads `texts` as missing values, as JSON: those short enough to
    be a marker a spreadsheet or an export writes for a gap ('?', '#VALUE!', 'n/a'), not a
    pasted blob; None when none is.

    >>> na_values_option(["#VALUE!", "x" * 300, "?"])
    '{"na_values": ["#VALUE!", "?"]}'
    >>> na_values_option(["x" * 300]) is None
    True
    """
    markers = [t for t in texts if len(t) <= 20]
    return json.dumps({"na_values": markers}) if markers else None


def whole_as_int(value):
    """A whole float as the integer it is (a column of integers with a gap is read as floats:
    its classes are 1 and 0, as the file writes them, not 1.0 and 0.0); anything else as it is.

    >>> whole_as_int(1.0), whole_as_int(2.5), whole_as_int(-0.0), whole_as_int("1.0")
    (1, 2.5, 0, '1.0')
    """
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    return value


class Checks:
    """Row-level checks shared by every source: duplicate instance ids, undeclared classes.

    Ids read from the data are remembered to find duplicates (memory grows with the number of
    ids); numbered rows (`generated_ids` for synthetic streams and datasets, `numbered_ids()`
    for a table without an id column) skip that, and so does a stream whose ids need only be
    unique while pending (option `unique_ids: pending`: the replay refuses an instance whose id
    is pending, and an id may come back once its label has).

    >>> from transforms.streams.sources import StreamSpec
    >>> checks = Checks(StreamSpec.parse("logs.csv"))
    >>> checks.instance("tx-1", "logs.csv", 2), checks.instance("tx-1", "logs.csv", 3)["reason"]
    (None, "duplicate instance id 'tx-1'")
    >>> checks = Checks(StreamSpec.parse('logs.csv{"unique_ids": "pending"}'))
    >>> checks.instance("tx-1", "logs.csv", 2), checks.instance("tx-1", "logs.csv", 3)
    (None, None)
    """

    def __init__(self, spec, generated_ids: bool = False, where: dict | None = None):
        self.spec = spec
        # seq -> (file, row) of the events asked about (`StreamSpec.locate`), filled as read.
        self.where = where
        classes = spec.declared_classes()
        self.classes = classes
        self.known = set(classes) if classes is not None else None
        remember = not generated_ids and spec.options.get("unique_ids", "stream") == "stream"
        self.seen: set | None = set() if remember else None
        # Whether the stream's labels are text (its declared classes', else its first label's).
        self.text_labels: bool | None = isinstance(classes[0], str) if classes else None
        # A file's whole-number labels are integers, however its reader typed them (river's
        # streams give their values as they are).
        self.whole_floats = not generated_ids

    def found(self, seq: int, file, row) -> None:
        """The event `seq` came from this file and row, if it was asked about."""
        if seq in self.where:
            self.where[seq] = (file, row)

    def numbered_ids(self) -> None:
        """The ids are row numbers (a table without an id column): unique, nothing to remember."""
        self.seen = None

    def instance(self, key, file, row, field="id"):
        """A dead letter if `key` was already used by an instance of this stream, else None."""
        if self.seen is None:
            return None
        if key in self.seen:
            return self.duplicate(key, file, row, field)
        self.seen.add(key)
        return None

    def duplicate(self, key, file, row, field="id"):
        """The dead letter of an instance whose id an earlier instance of the stream had."""
        return dead_letter(self.spec.name, f"duplicate instance id {key!r}", file=file, row=row,
                           field=field)

    def as_stream_label(self, y):
        """`y` written as the stream's labels are (text or numbers, as its first label or its
        declared classes): a file of a partitioned table, or a line of a JSON Lines file, that
        writes `1` where the others write `"1"` names the same class.

        >>> from transforms.streams.sources import StreamSpec
        >>> checks = Checks(StreamSpec.parse("logs.jsonl"))
        >>> [checks.as_stream_label(y) for y in ("1", 0, 2.0, 1.5, "x")]
        ['1', '0', '2', '1.5', 'x']
        >>> checks = Checks(StreamSpec.parse("logs.jsonl"))
        >>> [checks.as_stream_label(y) for y in (1, "0", " 2 ", "1.5", "x", "nan", "True")]
        [1, 0, 2, 1.5, 'x', 'nan', True]

        A whole number is an integer, as a file writes it (a CSV column of 1 and 0 with empty
        cells is read as floats):

        >>> [Checks(StreamSpec.parse("logs.csv")).as_stream_label(y) for y in (1.0, 2.5, -0.0)]
        [1, 2.5, 0]
        """
        if isinstance(y, COLLECTIONS):  # (`label` sets it aside as it is)
            return y
        if self.text_labels is None:
            self.text_labels = isinstance(y, str)
        y = written_as(y, self.text_labels)
        return whole_as_int(y) if self.whole_floats else y

    def label(self, y, file, row, field="label"):
        """A dead letter if `y` is a list (or another collection) or an infinite number (no
        class, no target), or classes are declared and `y` is not one of them, else None.

        >>> from transforms.streams.sources import StreamSpec
        >>> Checks(StreamSpec.parse("logs.jsonl")).label([1, 2], "logs.jsonl", 4)["reason"]
        'label [1, 2] is a list, not one class or one number'
        """
        if isinstance(y, COLLECTIONS):
            kind = "list" if isinstance(y, (list, tuple, np.ndarray)) else type(y).__name__
            shown = shown_briefly(y.tolist() if isinstance(y, np.ndarray) else y)
            return dead_letter(self.spec.name, f"label {shown} is a {kind}, not one "
                               f"class or one number", file=file, row=row, field=field)
        if isinstance(y, float) and math.isinf(y):
            return dead_letter(self.spec.name, f"label {y} is not a finite number", file=file,
                               row=row, field=field)
        if self.known is not None and y not in self.known:
            return dead_letter(self.spec.name, f"label {shown_briefly(y)} is not one of the "
                               f"declared classes {self.classes}", file=file, row=row,
                               field=field)
        return None


def labelled_rows(spec, rows, delay: DelaySpec, checks: Checks) -> Iterator:
    """(file, row, id, t, x, y, label_t, own_delay) rows -> events, label times by the delay
    model (`file` names the row's file in dead letters; None for generated rows). Dead letters
    found while parsing rows (dicts) flow through in place.

    Example
    -------

    >>> from transforms.streams.sources import StreamSpec
    >>> spec = StreamSpec.parse("rows.csv")
    >>> rows = [(None, 1, "a", 0.0, {"x": 1.0}, "yes", None, None),
    ...         (None, 2, "b", 1.0, {"x": 2.0}, "no", None, None)]
    >>> [(e[0], e[3], e[4]) for e in labelled_rows(spec, rows, DelaySpec.parse("1"),
    ...                                            Checks(spec))]
    [(0.0, 'instance', 'a'), (1.0, 'label', 'a'), (1.0, 'instance', 'b'), (1.0, 'label', 'b')]

    """
    assigner = LabelTimeAssigner(delay, spec.pretrain)
    i = -1
    for item in rows:
        if isinstance(item, dict):
            yield item
            continue
        i += 1
        file, row, key, t, x, y, label_t, own_delay = item
        problem = checks.instance(key, file, row)
        if problem:
            yield with_record(problem, fields_record(t, None, key, x, y, label_t))
            continue
        if y is not None:
            y = checks.as_stream_label(y)
        if y is not None and (problem := checks.label(y, file, row,
                                                      spec.options.get("label", "label"))):
            yield with_record(problem, fields_record(t, None, key, x, y, label_t))
            y = None
        if label_t is not None and label_t < t:
            yield dead_letter(spec.name, f"label time {readable_time(label_t)} is earlier than "
                              f"the instance time {readable_time(t)}", file=file, row=row,
                              field=spec.options.get("label_time", "label_time"),
                              record=fields_record(t, None, key, x, y, label_t))
            label_t, y = None, None
        if x is None:  # a row whose every feature is empty: nothing to predict from
            yield dead_letter(spec.name, "every feature is empty", file=file, row=row,
                              record=fields_record(t, None, key, x, y, label_t))
            continue
        if y is not None and delay.kind == "column" and label_t is None:
            own_delay_as_read = own_delay
            own_delay, problem = _delay_value(own_delay, delay.unit)
            if problem:
                yield dead_letter(spec.name, problem, file=file, row=row, field=delay.column,
                                  record=fields_record(t, None, key, x, y) |
                                  {delay.column: own_delay_as_read})
                y = None
        yield from assigner.row(key, t, x, y, 2 * i, label_t, own_delay)
        if checks.where is not None:  # the row's instance and label events
            checks.found(2 * i, file, row)
            checks.found(2 * i + 1, file, row)
    yield from assigner.finish()


def _delay_value(value, unit: str = "seconds") -> tuple:
    """A row's own delay as a number in the delay column's `unit`, and the reason it cannot be
    one (else None). A column with one text value is read as text, so its numbers come as
    strings; a duration (`5min`, `PT5M`, `00:05:00`, `2 hours`, or a Parquet duration) is read
    as that much time.

    >>> _delay_value("2.5"), _delay_value("x")[1], _delay_value(float("nan"))[1]
    ((2.5, None), "delay 'x' is neither a non-negative number nor a duration (5min, PT5M, \
00:05:00)", 'delay is empty')
    >>> _delay_value("5min"), _delay_value("00:05:00", "ms"), _delay_value("PT2H", "min")
    ((300.0, None), (300000.0, None), (120.0, None))
    """
    if is_missing(value):
        return value, "delay is empty"
    number = value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            seconds = _duration_seconds(value)
            if seconds is None:
                return value, (f"delay {shown_briefly(value)} is neither a non-negative "
                               f"number nor a duration (5min, PT5M, 00:05:00)")
            return _duration_in(seconds, unit, value)
    elif isinstance(value, (datetime.timedelta, np.timedelta64)):
        return _duration_in(pd.Timedelta(value).total_seconds(), unit, value)
    if isinstance(number, (int, float)) and not isinstance(number, bool) and \
            math.isfinite(number) and number >= 0:
        return number, None
    return value, f"delay {shown_briefly(value)} is not a non-negative number"


def _duration_seconds(text: str) -> float | None:
    """The seconds a duration's text says (pandas' reading: `5min`, `1.5h`, `2 hours`,
    ISO 8601 `PT5M`, `00:05:00`, `0 days 00:05:00`), or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (pandas warns of units it will rename: 1d)
        try:
            return pd.to_timedelta(text.strip()).total_seconds()
        except ValueError:
            return None


def _duration_in(seconds: float, unit: str, value) -> tuple:
    """A duration `value` of `seconds` in the delay column's `unit`, and the reason it cannot
    be one (else None): a column of events, or a negative duration.

    >>> _duration_in(90.0, "min", "90s"), _duration_in(-60.0, "seconds", "-1min")[1]
    ((1.5, None), "delay '-1min' is a negative duration")
    """
    if unit == "events":
        return value, (f"delay {shown_briefly(value)} is a duration, where the delay column "
                       f"counts events")
    if not seconds >= 0:
        return value, f"delay {value!r} is a negative duration"
    return in_column_unit(seconds, unit), None


def parse_time_value(text, time_format: str | None = None) -> float:
    """A time as seconds: a number, or an ISO datetime (UTC unless it says otherwise), or
    text written as the strftime pattern `time_format` says (`read_datetimes`: nothing else is
    guessed, so 01/11/2026 is no time without a format).

    Example
    -------

    >>> parse_time_value("12.5"), parse_time_value("1970-01-01T00:01:00Z")
    (12.5, 60.0)
    >>> parse_time_value("'02/01/1970'", "%d/%m/%Y")
    86400.0
    >>> parse_time_value("01/11/2026")
    Traceback (most recent call last):
    ...
    ValueError: time '01/11/2026' is neither a number nor an ISO datetime

    """
    text = str(text).strip().strip("'\"")
    ts = read_datetimes(text, time_format) if time_format is not None else pd.NaT
    if pd.isna(ts):
        try:
            return float(text)
        except ValueError:
            ts = read_datetimes(text)
    if pd.isna(ts):
        written = "" if time_format is None else f", nor written as {time_format!r} says"
        raise ValueError(f"time {shown_briefly(text)} is neither a number nor an ISO "
                         f"datetime{written}")
    return ts.value / 10**9  # (integers divided exactly, then rounded: nanoseconds pass 2**53)
