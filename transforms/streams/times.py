"""A table's times: ISO 8601 datetimes (with or without a UTC offset, in a named zone), a
strftime pattern, or numbers in a unit; read as seconds since the epoch, and each time that
cannot be read named with why (a day and a month that could be either, an hour the clocks
skip or repeat, a time after the year 9999)."""

from __future__ import annotations

import datetime as dt
import difflib
import math
import re
from typing import NamedTuple

import numpy as np
import pandas as pd

from transforms.errors import InputError, shown_briefly
from transforms.streams.delays import TIME_UNITS
from transforms.streams.table_files import numbers_of

# The last second of the year 9999: a later time names no date (a number of milliseconds
# read as seconds is one).
LAST_SECOND = 253402300799.0


# The UTC offset written after a clock: 10:00Z, 10:00:00+02:00, 10:00 -0500
_OFFSET = r"\d:\d{2}(?::\d{2}(?:[.,]\d+)?)?\s*(?:[Zz]|[+-]\d{2}(?::?\d{2})?)\s*$"


def read_datetimes(values, time_format: str | None = None, time_zone: str | None = None):
    """Text (a Series, or one value) as UTC datetimes, NaT where it is not one: ISO 8601, or
    written as the strftime pattern `time_format` says. A datetime without a UTC offset is in
    the IANA zone `time_zone` (UTC by default; in the hour its clocks go back it names two
    moments, in the hour they skip none: NaT). No other spelling is guessed: in 01/11/2026 the
    order of day and month is not known.

    >>> read_datetimes("2026-11-01T10:00+02:00"), read_datetimes("01/11/2026")
    (Timestamp('2026-11-01 08:00:00+0000', tz='UTC'), NaT)
    >>> read_datetimes("01/11/2026", "%d/%m/%Y")
    Timestamp('2026-11-01 00:00:00+0000', tz='UTC')
    >>> read_datetimes(pd.Series(["2026-07-01 12:00", "2026-07-01T12:00Z", "2026-10-25 02:30"]),
    ...                time_zone="Europe/Berlin").dt.strftime("%H:%M").tolist()
    ['10:00', '12:00', nan]
    """
    if time_zone is None or not isinstance(values, pd.Series):
        if time_zone is not None:
            return read_datetimes(pd.Series([values]), time_format, time_zone).iloc[0]
        return pd.to_datetime(values, utc=True, errors="coerce",
                              format=time_format or "ISO8601")
    parsed = read_datetimes(values, time_format)
    if time_format is not None:
        naive = pd.Series("%z" not in time_format and "%Z" not in time_format,
                          index=values.index)
    else:
        naive = ~values.astype(str).str.contains(_OFFSET, regex=True)
    naive &= parsed.notna()
    if naive.any():
        parsed = parsed.copy()
        parsed[naive] = in_zone(parsed[naive].dt.tz_localize(None), time_zone)
    return parsed


def with_offsets(values: pd.Series, time_format: str | None = None) -> bool | None:
    """Whether a column's dates carry their UTC offset (True), carry none (False: they are read
    as UTC, or in the zone a `time_zone` option names), or neither holds for all of them, or
    it holds no dates (None: numbers, a mix).

    >>> with_offsets(pd.Series(["2026-11-01T10:00Z", "2026-11-01 11:00+01:00"]))
    True
    >>> with_offsets(pd.Series(["2026-11-01 10:00", None])), with_offsets(pd.Series([10, 20]))
    (False, None)
    >>> with_offsets(pd.Series(pd.to_datetime(["2026-11-01"]).tz_localize("Europe/Berlin")))
    True
    """
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        return True
    if pd.api.types.is_datetime64_dtype(values.dtype):
        return False
    written = values.dropna()
    written = written[numbers_of(written).isna()].astype(str)  # (numbers are no dates)
    if written.empty or read_datetimes(written, time_format).isna().any():
        return None
    if time_format is not None:
        return "%z" in time_format
    offset = written.str.contains(_OFFSET, regex=True)
    return bool(offset.iloc[0]) if offset.nunique() == 1 else None


def in_zone(wall_times: pd.Series, time_zone: str) -> pd.Series:
    """Datetimes without a zone, as the clocks of `time_zone` show them, in UTC (NaT in the
    hour the clocks go back, or skip).

    >>> wall = pd.Series(pd.to_datetime(["2026-03-29 01:30", "2026-03-29 02:30",
    ...                                  "2026-07-01 12:00"]))
    >>> [str(t) for t in in_zone(wall, "Europe/Berlin")]  # (02:30 was skipped that night)
    ['2026-03-29 00:30:00+00:00', 'NaT', '2026-07-01 10:00:00+00:00']
    """
    return wall_times.dt.tz_localize(time_zone, ambiguous="NaT",
                                     nonexistent="NaT").dt.tz_convert("UTC")


TIME_OPTIONS = ("time_unit", "time_format", "time_zone")  # how a table's times are read


class TimeReading(NamedTuple):
    """How a table's times become seconds: numbers in `unit` (`TIME_UNITS`), text as ISO 8601
    or as the strftime pattern `format` says (that first), a datetime without a UTC offset in
    the IANA zone `zone` (UTC by default) — a stream's or prediction log's options
    `time_unit`, `time_format`, `time_zone`.

    >>> TimeReading.of({"time_unit": "ms", "time_zone": "Europe/Berlin"}, "stream s")
    TimeReading(unit='ms', format=None, zone='Europe/Berlin')
    >>> TimeReading.of({"time_zone": "Europe/Berln"}, "stream s")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: stream s: no time zone 'Europe/Berln' (did you mean ...
    """

    unit: str = "s"
    format: str | None = None
    zone: str | None = None

    @classmethod
    def of(cls, options: dict, where: str = "time options") -> TimeReading:
        """The reading the options give; raises InputError naming `where` for a bad one."""
        unit = options.get("time_unit", "s")
        if not isinstance(unit, str) or unit not in TIME_UNITS:
            raise InputError(f"{where}: time_unit must be one of {', '.join(TIME_UNITS)} (the "
                             f"unit of times given as numbers)")
        time_format, zone = options.get("time_format"), options.get("time_zone")
        check_time_format(time_format, where)
        if zone is not None:
            import zoneinfo

            try:
                zoneinfo.ZoneInfo(zone)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError, TypeError):
                near = difflib.get_close_matches(str(zone), sorted(
                    zoneinfo.available_timezones()), n=1)
                raise InputError(
                    f"{where}: no time zone {zone!r}" + (f" (did you mean {near[0]!r}?)" if near
                                                         else "")
                    + '; name an IANA zone, e.g. {"time_zone": "Europe/Berlin"}') from None
        return cls(unit, time_format, zone)

    def seconds(self, s: pd.Series) -> np.ndarray:
        """Seconds of a column's cells; NaN where one is no time. A duration (Arrow's, a
        pandas timedelta: the time elapsed since a recording began) is its seconds, as a
        number is. (A Parquet column of pandas periods is read as dates: `as_pandas`.)

        >>> TimeReading().seconds(pd.Series(pd.to_timedelta([1.5, None], unit="s")))
        array([1.5, nan])
        """
        if pd.api.types.is_timedelta64_dtype(s):
            return s.dt.total_seconds().to_numpy(dtype=float, na_value=np.nan)
        if self.format is not None and not pd.api.types.is_datetime64_any_dtype(s):
            t = self._formatted(s)
            rest = np.isnan(t)
            if rest.any():
                t[rest] = self._unformatted(s[rest])
            return t
        return self._unformatted(s)

    def _formatted(self, s: pd.Series) -> np.ndarray:
        """Seconds of the cells written as `format` says, NaN elsewhere. Whole numbers are
        read as their digits (20261101 as "%Y%m%d" says), also in a column of floats."""
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            whole = s.notna() & (s == s.round())
            text = pd.Series(None, index=s.index, dtype=object)
            text[whole] = s[whole].astype("int64").astype(str)
        else:
            text = s.astype(object).where(s.notna())
        return _seconds_of(read_datetimes(text, self.format, self.zone))

    def _unformatted(self, s: pd.Series) -> np.ndarray:
        """Seconds of numbers in `unit`, typed datetimes and ISO datetimes; NaN elsewhere."""
        per_second = TIME_UNITS[self.unit]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            return in_seconds(s.to_numpy(), per_second)
        if pd.api.types.is_datetime64_any_dtype(s):
            if self.zone is not None and s.dt.tz is None:
                return _seconds_of(in_zone(s, self.zone))
            return _seconds_of(pd.to_datetime(s, utc=True))
        num = numbers_of(s)
        secs = pd.Series(_seconds_of(read_datetimes(s.where(num.isna()), None, self.zone)),
                         index=s.index)
        return pd.Series(in_seconds(num.to_numpy(), per_second), index=s.index).fillna(
            secs).to_numpy(dtype=float)


def in_seconds(numbers: np.ndarray, per_second: int) -> np.ndarray:
    """Seconds of times counted in units of which `per_second` make a second, a new array.
    Whole numbers are divided as integers, their seconds and their rest apart: epoch
    nanoseconds are beyond a double's 2**53, so as floats they would be a few hundred
    nanoseconds off before the division, and the seconds one ulp off those of the same time
    written as a date.

    >>> ns = np.array([1_800_000_002_750_000_000, -250_000_000])
    >>> in_seconds(ns, 10**9).tolist(), (ns.astype(float) / 10**9).tolist()[0]
    ([1800000002.75, -0.25], 1800000002.7500002)
    >>> in_seconds(np.array([1.5, np.nan]), 1000).tolist()
    [0.0015, nan]
    """
    if numbers.dtype.kind in "iu" and per_second != 1:
        whole, rest = np.divmod(numbers, per_second)
        return whole.astype(float) + rest / per_second
    return numbers.astype(float) / per_second


def check_time_format(time_format, where: str) -> None:
    """Raise InputError unless `time_format` (an option's value) is None or a strftime
    pattern that reads times.

    >>> check_time_format("%d/%m/%Y %H:%M", "stream s")
    >>> check_time_format("dd/MM/yyyy", "stream s")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: stream s: time_format 'dd/MM/yyyy' is no strftime pattern;
    write it with % codes, e.g. {"time_format": "%d/%m/%Y %H:%M"} for 01/11/2026 08:30
    """
    if time_format is None:
        return
    problem = None if isinstance(time_format, str) and "%" in time_format else \
        "is no strftime pattern"
    if problem is None:
        try:
            read_datetimes(pd.Series(["2026-11-01"]), time_format)
        except ValueError as e:
            problem = f"is no strftime pattern ({e})"
    if problem:
        raise InputError(f"{where}: time_format {time_format!r} {problem}; write it with % "
                         f'codes, e.g. {{"time_format": "%d/%m/%Y %H:%M"}} for 01/11/2026 08:30')


def _seconds_of(datetimes: pd.Series) -> np.ndarray:
    """Seconds since the epoch of datetimes (NaN for NaT), from their counts of their unit
    divided exactly (`in_seconds`): pandas 2 (2.3, under Python 3.10) made the seconds of
    nanoseconds as floats, an ulp off (1800000002.7500002 for 2027-01-15T08:00:02.75Z).

    >>> _seconds_of(pd.Series(pd.to_datetime(["2027-01-15T08:00:02.75Z", None]))).tolist()
    [1800000002.75, nan]
    """
    if datetimes.dt.tz is not None:
        datetimes = datetimes.dt.tz_convert("UTC").dt.tz_localize(None)
    values = datetimes.to_numpy()
    t = in_seconds(values.astype(np.int64), TIME_UNITS[np.datetime_data(values.dtype)[0]])
    t[np.isnat(values)] = np.nan
    return t


def event_seconds(df: pd.DataFrame, col: str | None, first: int = 0,
                  reading: TimeReading = TimeReading(),
                  bounded: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Seconds as floats and a mask of rows whose time did not parse (or, `bounded`, is after
    the year 9999), read as `reading` says. Without the column, the row's index in the stream
    (`first` for the frame's first row).

    Example
    -------

    >>> t, bad = event_seconds(pd.DataFrame({"time": ["10", "1970-01-01T00:00:20Z", "?"]}),
    ...                        "time")
    >>> t.tolist()[:2], bad.tolist()
    ([10.0, 20.0], [False, False, True])
    >>> event_seconds(pd.DataFrame({"t": [1700000000000]}), "t")[1].tolist()  # milliseconds
    [True]
    >>> event_seconds(pd.DataFrame({"t": [1700000000000]}), "t", reading=TimeReading("ms"))[0]
    array([1.7e+09])
    >>> event_seconds(pd.DataFrame({"t": ["02/01/1970 00:00", "60"]}), "t",
    ...               reading=TimeReading(format="%d/%m/%Y %H:%M"))[0].tolist()
    [86400.0, 60.0]

    """
    if col is None or col not in df.columns:
        t = np.arange(first, first + len(df), dtype=float)
        return t, np.zeros(len(df), dtype=bool)
    t = reading.seconds(df[col])
    bad = ~np.isfinite(t)
    if bounded:
        bad |= np.abs(t) > LAST_SECOND
    return t, bad


# A date written day or month first, and the time after it: 01/11/2026 08:00, 1.11.26
_DAY_OR_MONTH_FIRST = re.compile(r"(\d{1,2})([/.\-])(\d{1,2})\2(\d{4}|\d{2})"
                                 r"(?:([ T])\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?")


def day_or_month_first(values) -> list[str]:
    """The time formats that read every one of `values`, dates written day first or month
    first (as spreadsheets export them): day first before month first; [] when a value is
    no such date, or no one format reads them all.

    >>> day_or_month_first(["01/11/2026 08:00", "13/11/2026 09:30"])
    ['%d/%m/%Y %H:%M']
    >>> day_or_month_first(["1.11.26"])
    ['%d.%m.%y', '%m.%d.%y']
    >>> day_or_month_first(["2026-11-01"])
    []
    """
    texts = [str(v).strip() for v in values]
    found = [_DAY_OR_MONTH_FIRST.fullmatch(t) for t in texts]
    if not texts or not all(found):
        return []
    first = found[0]
    year = "%Y" if len(first[4]) == 4 else "%y"
    clock = "" if not first[5] else first[5] + "%H:%M" + (
        "" if not first[6] else ":%S" + ("" if not first[7] else ".%f"))
    formats = [f"%d{first[2]}%m{first[2]}{year}{clock}", f"%m{first[2]}%d{first[2]}{year}{clock}"]
    return [f for f in formats if read_datetimes(pd.Series(texts), f).notna().all()]


# A month or weekday written as a word (Nov, November, Sun), as dates are in logs and reports.
_MONTH_OR_DAY_NAME = re.compile(r"(?i)\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|"
                                r"mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?(\b|\d)")


def _spelled_patterns(text: str):
    """strftime patterns that may read `text`, a date whose month is a word: `1 Nov 2026`,
    `Nov 1, 2026 8:30 AM`, RFC 2822 (e-mail, HTTP: `Sun, 01 Nov 2026 08:30:00 +0000`),
    Apache's access log (`01/Nov/2026:08:30:00 +0000`), Oracle's `01-NOV-2026`, C's `ctime`.
    Its weekday and zone, if any, are told from the text first: fewer patterns to try."""
    weekday = re.match(r"(?i)(mon|tue|wed|thu|fri|sat|sun)([a-z]*)\.?(,?)\s", text)
    days = (("%A" if weekday[2] else "%a") + f"{weekday[3]} ",) if weekday else ("",)
    zones = (" %z",) if re.search(r"\s[+-]\d{2}:?\d{2}$", text) else \
        ("", " %Z") if re.search(r"\s[A-Za-z]{1,5}$", text) else ("",)
    month = _MONTH_OR_DAY_NAME.search(text[weekday.end() if weekday else 0:])
    spelled = "%b" if month is None or len(month[0].rstrip(".0123456789")) <= 4 else "%B"
    dates = [d.replace("%b", spelled) for d in ("%d %b %Y", "%b %d, %Y", "%b %d %Y")] + \
        ["%d-%b-%Y", "%d-%b-%y", "%d/%b/%Y"]
    clocks = ("", " %H:%M", " %H:%M:%S", " %H:%M:%S.%f", " %I:%M %p", " %I:%M:%S %p",
              ":%H:%M:%S", ", %H:%M", ", %I:%M %p")
    for day in days:
        for date in dates:
            for clock in clocks:
                for zone in zones:
                    yield day + date + clock + zone
    if weekday:
        yield from ("%a %b %d %H:%M:%S %Y", "%a %b %d %H:%M:%S %Z %Y")


def spelled_dates(values) -> list[str]:
    """The time formats that read every one of `values`, dates whose month (or weekday) is a
    word, which ISO 8601 does not read; [] when a value is no such date. Unlike 01/11/2026,
    such a date says which number is the day, so the format is told from the values.

    >>> spelled_dates(["Sun, 01 Nov 2026 08:30:00 +0000", "Mon, 02 Nov 2026 09:00:00 +0000"])
    ['%a, %d %b %Y %H:%M:%S %z']
    >>> spelled_dates(["Nov 1, 2026 8:30 AM"]), spelled_dates(["01/Nov/2026:08:30:00 +0100"])
    (['%b %d, %Y %I:%M %p'], ['%d/%b/%Y:%H:%M:%S %z'])
    >>> spelled_dates(["2026-11-01"]), spelled_dates(["a sunny day in May"])
    ([], [])
    """
    texts = [str(v).strip() for v in values]
    if not texts or not all(_MONTH_OR_DAY_NAME.search(t) and re.search(r"\d", t) and
                            len(t) <= 40 for t in texts):
        return []
    first = _patterns_reading(texts[0])
    return [f for f in first if read_datetimes(pd.Series(texts), f).notna().all()]


_READERS_OF_SHAPE: dict = {}  # a text's digits as 9s -> (the patterns that read it, tries)
# A shape no pattern read is tried again this often: its first text may be an impossible
# date (31 Feb) of a format that reads the next.
TRIES_OF_SHAPE = 3


def _patterns_reading(text: str) -> tuple:
    """The `_spelled_patterns` that read `text`, tried once per shape of text (its digits as
    9s; `TRIES_OF_SHAPE` times where none did): a dead letter's time is told its format row
    by row, and a hundred patterns take ~50 ms to try.

    >>> _patterns_reading("31 Feb 2026"), _patterns_reading("28 Feb 2026")
    ((), ('%d %b %Y',))
    """
    shape = re.sub(r"\d", "9", text)
    found, tries = _READERS_OF_SHAPE.get(shape, ((), 0))
    if not found and tries < TRIES_OF_SHAPE:
        if len(_READERS_OF_SHAPE) > 1024:
            _READERS_OF_SHAPE.clear()
        found = []
        for pattern in _spelled_patterns(text):
            try:
                dt.datetime.strptime(text, pattern)
            except ValueError:
                continue
            found.append(pattern)
        found = tuple(found)
        _READERS_OF_SHAPE[shape] = (found, tries + 1)
    return found


def formats_of_dates(values) -> list[str]:
    """The time formats to offer for `values`, dates that ISO 8601 does not read: both orders
    of a day and a month written as numbers (`day_or_month_first`), or the one format of a
    month written as a word (`spelled_dates`); [] for other values.

    >>> formats_of_dates(["1 May 2026"]), formats_of_dates(["05/01/2026"])
    (['%d %b %Y'], ['%d/%m/%Y', '%m/%d/%Y'])
    """
    return day_or_month_first(values) or spelled_dates(values)[:1]


def time_format_hint(values, whose: str = "stream") -> str:
    """How to read `values` (a column's times) when they are dates written day or month first,
    or with the month as a word: the `time_format` option to give `whose` options ("" when
    they are no such dates).

    >>> time_format_hint(["30/11/2026"], "log")
    'give the log option {"time_format": "%d/%m/%Y"}'
    >>> print(time_format_hint(["01/11/2026 11:00"]))  # doctest: +NORMALIZE_WHITESPACE
    give the stream option {"time_format": "%d/%m/%Y %H:%M"} if the day comes first,
    {"time_format": "%m/%d/%Y %H:%M"} if the month does (or write dates year first, as ISO 8601
    does: 2026-11-01 11:00)
    >>> time_format_hint(["01 Nov 2026 11:00"])
    'give the stream option {"time_format": "%d %b %Y %H:%M"}'
    """
    values = [str(v).strip() for v in values]
    formats = formats_of_dates(values)
    if len(formats) == 1:
        return f'give the {whose} option {{"time_format": "{formats[0]}"}}'
    if not formats:
        return ""
    clock = re.split("%[Yy]", formats[0], maxsplit=1)[1]  # (as written: %H:%M, ...)
    iso = read_datetimes(values[0], formats[0]).strftime("%Y-%m-%d" + clock)
    return (f'give the {whose} option {{"time_format": "{formats[0]}"}} if the day comes '
            f'first, {{"time_format": "{formats[1]}"}} if the month does (or write dates year '
            f"first, as ISO 8601 does: {iso})")


def time_problem(value, reading: TimeReading = TimeReading(), seen=None) -> str:
    """Why a cell is no event time (`event_seconds` read with `reading` found it bad); a date
    written day or month first gets the `time_format` option that reads it (told from `seen`,
    the values of its column at hand, by default itself).

    >>> time_problem("soon")
    "time 'soon' is neither a number nor an ISO datetime"
    >>> print(time_problem("01/11/2026", seen=["01/11/2026", "30/11/2026"]))
    ... # doctest: +NORMALIZE_WHITESPACE
    time '01/11/2026' is neither a number nor an ISO datetime; give the stream option
    {"time_format": "%d/%m/%Y"}
    >>> print(time_problem("1.11.26", TimeReading(format="%d/%m/%Y")))
    ... # doctest: +NORMALIZE_WHITESPACE
    time '1.11.26' is not written as the time_format '%d/%m/%Y' says, nor a number or an ISO
    datetime
    >>> print(time_problem("2026-10-25 02:30", TimeReading(zone="Europe/Berlin")))
    ... # doctest: +NORMALIZE_WHITESPACE
    time '2026-10-25 02:30' is in the hour the clocks go back in Europe/Berlin, so it names
    two moments; write it with its UTC offset (2026-10-25T02:30+02:00, or +01:00 an hour later)
    >>> print(time_problem(1700000000000))  # doctest: +NORMALIZE_WHITESPACE
    time 1700000000000 is after the year 9999 in seconds; are the times in milliseconds?
    give the stream option {"time_unit": "ms"} (or us, ns)
    """
    value = value.item() if isinstance(value, np.generic) else value  # (as the file says it)
    if reading.zone is not None and (isinstance(value, (pd.Timestamp, dt.datetime)) or (
            isinstance(value, str) and not pd.isna(read_datetimes(value, reading.format)))):
        return _outside_the_clock(value, reading)
    number = numbers_of(pd.Series([value])).iloc[0]
    if pd.isna(number) or not math.isfinite(number):
        if reading.format is not None:
            return (f"time {shown_briefly(value)} is not written as the time_format "
                    f"{reading.format!r} says, nor a number or an ISO datetime")
        hint = time_format_hint([value] if seen is None else seen)
        hint = f"; {hint}" if hint else ""
        return f"time {shown_briefly(value)} is neither a number nor an ISO datetime{hint}"
    names = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}
    units = list(names)
    finer = units[units.index(reading.unit) + 1:]
    hint = "it names no date" if not finer else (
        f"are the times in {names[finer[0]]}? give the stream option "
        f'{{"time_unit": "{finer[0]}"}}' + (f" (or {', '.join(finer[1:])})" if finer[1:] else ""))
    return f"time {shown_briefly(value)} is after the year 9999 in {names[reading.unit]}; {hint}"


# pandas 3 says a wall time in the hour the clocks skip is a ValueError; pandas 2 raises
# pytz's NonExistentTimeError, which is not one.
try:
    from pytz import NonExistentTimeError
    _NO_SUCH_MOMENT: tuple = (ValueError, NonExistentTimeError)
except ImportError:
    _NO_SUCH_MOMENT = (ValueError,)


def _outside_the_clock(value, reading: TimeReading) -> str:
    """Why a datetime without a UTC offset (text, or typed) names no one moment in the
    reading's zone."""
    zone = reading.zone
    wall = pd.Timestamp(value) if isinstance(value, (pd.Timestamp, dt.datetime)) else \
        read_datetimes(value, reading.format).tz_localize(None)
    try:
        early, late = (wall.tz_localize(zone, ambiguous=first) for first in (True, False))
    except _NO_SUCH_MOMENT:  # (the hour the clocks skip)
        return (f"time {value!r} is in the hour the clocks skip in {zone}, so it names no "
                f"moment there; write it with its UTC offset, or give the zone it was kept in")
    iso = wall.strftime("%Y-%m-%dT%H:%M")
    return (f"time {value!r} is in the hour the clocks go back in {zone}, so it names two "
            f"moments; write it with its UTC offset ({iso}{early.strftime('%z')[:3]}:"
            f"{early.strftime('%z')[3:]}, or {late.strftime('%z')[:3]}:"
            f"{late.strftime('%z')[3:]} an hour later)")
