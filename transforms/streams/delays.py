"""Label times: from the input, or assigned by a delay model.

A delay spec is one of

    1000              constant, in events: the label of instance i arrives just before
                      instance i+1000 (delay 0 behaves as 1, as in river and MOA)
    30s, 5min, 2h, 1d constant, in seconds of event time
    random:100:1000:7 uniform integer delay in events in [100, 1000], seed 7
    random:10s:60s:7  uniform delay in seconds in [10, 60), seed 7
    column:duration   the row's own delay in seconds (e.g. a trip's duration);
                      column:lag:events for a delay in events, column:took:ms for one in
                      milliseconds (or us, ns; min, h, d for minutes, hours, days)

With a delay in events, labels whose turn would come after the last instance arrive at the end
of the stream, in instance order: river's `progressive_val_score` does the same.
"""

from __future__ import annotations

import datetime as dt
import heapq
import math
import random
from dataclasses import dataclass

from transforms.errors import ConfigError
from transforms.records import (INSTANCE, LABEL, PRETRAIN, RANK_LABEL, instance_of_row,
                                label_before_row)
from transforms.specs import plain_value

# The units of times given as numbers (a stream's `time_unit`, a delay column's): how many make
# a second (numbers are divided by it: exact for whole numbers, where × 0.001 is not).
TIME_UNITS = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}

_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def duration_text(secs: float) -> str:
    """Seconds in the largest unit of `_UNITS` that counts them whole, as --delay reads them,
    every digit kept.

    >>> duration_text(7200), duration_text(90), duration_text(1.5), duration_text(0)
    ('2h', '90s', '1.5s', '0s')
    >>> duration_text(1234567), duration_text(1234567.25)
    ('1234567s', '1234567.25s')
    """
    for unit, size in sorted(_UNITS.items(), key=lambda u: -u[1]):
        if secs >= size and secs % size == 0:
            return f"{_exact(secs / size)}{unit}"
    return seconds_text(secs)


def seconds_text(secs: float) -> str:
    """Seconds as --delay reads them, every digit kept (`:g` keeps 6).

    >>> seconds_text(7200), seconds_text(1234567.25)
    ('7200s', '1234567.25s')
    """
    return f"{_exact(secs)}s"


def _exact(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else repr(float(number))


class DelaySpecError(ConfigError):
    """A delay spec that cannot be parsed.

    Example
    -------

    >>> try:
    ...     DelaySpec.parse("soon")
    ... except DelaySpecError as e:
    ...     print(isinstance(e, ConfigError))
    True

    """


def seconds(text: str) -> float | None:
    """Seconds in a duration with a unit (`30s`, `5min`, `2h`, `1d`); None without one.

    Example
    -------

    >>> seconds("90s"), seconds("5min"), seconds("2h"), seconds("1000")
    (90.0, 300.0, 7200.0, None)

    """
    for unit in sorted(_UNITS, key=len, reverse=True):
        if text.endswith(unit):
            try:
                return float(text[: -len(unit)]) * _UNITS[unit]
            except ValueError:
                return None
    return None


def duration(text: str) -> float | None:
    """A positive, finite duration in seconds: with a unit, or a plain number of seconds.

    >>> duration("5min"), duration("90"), duration("-1"), duration("soon")
    (300.0, 90.0, None, None)
    """
    value = seconds(text)
    if value is None:
        try:
            value = float(text)
        except ValueError:
            return None
    return value if 0 < value < math.inf else None


@dataclass(frozen=True)
class DelaySpec:
    """A parsed delay model.

    >>> DelaySpec.parse("1000")
    DelaySpec(kind='constant', unit='events', value=1000.0, high=None, seed=None, column=None)
    >>> DelaySpec.parse("5min").value
    300.0
    >>> DelaySpec.parse("random:10:20:3").unit
    'events'
    >>> DelaySpec.parse("column:took:ms").unit, str(DelaySpec.parse("column:took:s"))
    ('ms', 'column:took:seconds')
    >>> DelaySpec.parse("column:wait:h").unit
    'h'
    >>> DelaySpec.parse(dt.timedelta(minutes=5)) == DelaySpec.parse("5min")  # as river takes it
    True
    >>> DelaySpec.parse(dt.timedelta(days=14, seconds=25367)) == DelaySpec.parse("1234967s")
    True
    >>> DelaySpec.parse(None) == DelaySpec.parse("0")  # river's delay=None: no delay
    True
    >>> import numpy as np
    >>> DelaySpec.parse(np.int64(5)) == DelaySpec.parse(5.0) == DelaySpec.parse("5")
    True
    >>> DelaySpec.parse(np.timedelta64(90, "s")) == DelaySpec.parse("90s")
    True

    References
    ----------
    Halford, M. (2020). The correct way to evaluate online machine learning models.
    (Delayed progressive validation; river's `evaluate.progressive_val_score`.)
    """

    kind: str  # constant | random | column
    unit: str  # events | seconds (a column's: or one of TIME_UNITS, min, h, d)
    value: float = 0.0
    high: float | None = None
    seed: int | None = None
    column: str | None = None

    @classmethod
    def parse(cls, text: str | int | float | dt.timedelta | None) -> DelaySpec:
        if text is None:
            text = "0"
        text = plain_value(text)  # (a NumPy number; a timedelta64 is a timedelta)
        if isinstance(text, dt.timedelta):
            text = seconds_text(text.total_seconds())
        if isinstance(text, float) and text.is_integer():  # 5.0 events, as 5
            text = int(text)
        text = str(text).strip()
        parts = text.split(":")
        try:
            if parts[0] == "random":
                if len(parts) not in (3, 4):
                    raise DelaySpecError("random delay is random:LOW:HIGH[:SEED]")
                lo, hi = seconds(parts[1]), seconds(parts[2])
                seed = int(parts[3]) if len(parts) == 4 else 0
                if lo is not None and hi is not None:
                    spec = cls("random", "seconds", lo, hi, seed)
                else:
                    spec = cls("random", "events", float(int(parts[1])), float(int(parts[2])),
                               seed)
                if spec.high < spec.value:
                    raise DelaySpecError("random delay needs LOW <= HIGH")
            elif parts[0] == "column":
                units = ("events", "seconds", *TIME_UNITS, *(u for u in _UNITS if u != "s"))
                if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] not in units):
                    raise DelaySpecError(f"column delay is column:NAME[:{'|'.join(units)}]")
                unit = parts[2] if len(parts) == 3 else "seconds"
                spec = cls("column", "seconds" if unit == "s" else unit, column=parts[1])
            elif (secs := seconds(text)) is not None:
                spec = cls("constant", "seconds", secs)
            else:
                spec = cls("constant", "events", float(int(text)))
        except ValueError as e:
            if isinstance(e, DelaySpecError):
                raise DelaySpecError(f"delay {text!r}: {e}") from None
            raise DelaySpecError(
                f"delay {text!r} is not a whole number of events (1000), a duration (30s, "
                f"5min, 2h, 1d), random:LOW:HIGH[:SEED] or column:NAME") from None
        if spec.kind != "column" and spec.value < 0:
            raise DelaySpecError(f"delay {text!r} is negative: a label never comes before its "
                                 f"instance; give 0 or more events, or a duration (30s, 5min)")
        return spec

    def __str__(self) -> str:
        if self.kind == "column":
            return f"column:{self.column}:{self.unit}"
        fmt = duration_text if self.unit == "seconds" else (lambda v: f"{int(v)}")
        if self.kind == "random":
            return f"random:{fmt(self.value)}:{fmt(self.high)}:{self.seed}"
        return fmt(self.value)


def in_column_unit(seconds: float, unit: str) -> float:
    """`seconds` in a delay column's `unit` (`LabelTimeAssigner` reads a row's own delay back).

    >>> in_column_unit(300, "min"), in_column_unit(2, "ms"), in_column_unit(5, "seconds")
    (5.0, 2000, 5)
    """
    if unit in _UNITS:
        return seconds / _UNITS[unit]
    return seconds * TIME_UNITS.get(unit, 1)


class LabelTimeAssigner:
    """Turns labelled rows into instance and label events, with label times from the row or
    from the delay model. Rows arrive in stream order; `row(...)` returns the events that
    are due, `finish()` the labels still waiting for a later row.

    >>> a = LabelTimeAssigner(DelaySpec.parse("1"))
    >>> [e[3] + str(e[4]) for i in range(2) for e in a.row(i, float(i), {}, "y", 2 * i)]
    ['instance0', 'label0', 'instance1']
    >>> [(e[0], e[1], e[3] + str(e[4])) for e in a.finish()]
    [(1.0, 2.5, 'label1')]

    Rows that share a time keep their order (`rank`): the label of row i, due with a delay of
    k events, comes just before row i + k's instance, and a label due at its own instance's
    time (a delay of 0 s) just after that instance, before the next row's:

    >>> a = LabelTimeAssigner(DelaySpec.parse("1"))
    >>> [e[3] + str(e[4]) for e in sorted(e for i in range(3)
    ...                                   for e in a.row(i, 0.0, {}, "y", 2 * i))]
    ['instance0', 'label0', 'instance1', 'label1', 'instance2']
    >>> a = LabelTimeAssigner(DelaySpec.parse("0s"))
    >>> [e[3] + str(e[4]) for e in sorted(e for i in range(2)
    ...                                   for e in a.row(i, 0.0, {}, "y", 2 * i))]
    ['instance0', 'label0', 'instance1', 'label1']

    The first `pretrain` rows are each one event, the row learned with its label at once:

    >>> a = LabelTimeAssigner(DelaySpec.parse("1"), pretrain=1)
    >>> [e[3] + str(e[4]) for i in range(3) for e in a.row(i, float(i), {}, "y", 2 * i)]
    ['pretrain0', 'instance1', 'label1', 'instance2']
    """

    def __init__(self, delay: DelaySpec, pretrain: int = 0):
        self.delay = delay
        self.pretrain = pretrain  # the first rows, learned at arrival (PRETRAIN events)
        self._rng = random.Random(delay.seed)
        self._waiting: list = []  # heap of (due row index, seq, id, y)
        self._index = 0
        self._last_t = -math.inf

    def _draw(self, own_delay) -> float:
        d = self.delay
        if d.kind == "constant":
            return d.value
        if d.kind == "random":
            if d.unit == "events":
                return float(self._rng.randint(int(d.value), int(d.high)))
            return self._rng.uniform(d.value, d.high)
        if d.unit in _UNITS:  # min, h, d
            return float(own_delay) * _UNITS[d.unit]
        return float(own_delay) / TIME_UNITS.get(d.unit, 1)  # (events, seconds: as is)

    def row(self, id, t: float, x: dict, y, seq: int, label_t: float | None = None,
            own_delay=None) -> list[tuple]:
        """Events due with this row. `seq` is the row's; its label gets `seq + 1`."""
        out = []
        i = self._index
        self._index += 1
        self._last_t = t
        waiting = self._waiting
        while waiting and waiting[0][0] <= i:
            _, lseq, lid, ly = heapq.heappop(waiting)
            out.append((t, label_before_row(i), lseq, LABEL, lid, None, ly))
        if i < self.pretrain:  # (learned with its label now: none waits for a later row)
            out.append((t, instance_of_row(i), seq, PRETRAIN, id, x, y))
            return out
        out.append((t, instance_of_row(i), seq, INSTANCE, id, x, None))
        if y is None:
            return out
        if label_t is None:
            d = self._draw(own_delay)
            if self.delay.unit == "events":
                heapq.heappush(waiting, (i + max(1, int(d)), seq + 1, id, y))
                return out
            label_t = t + d
        rank = RANK_LABEL if label_t > t else label_before_row(i + 1)
        out.append((label_t, rank, seq + 1, LABEL, id, None, y))
        return out

    def finish(self) -> list[tuple]:
        out = [(self._last_t, label_before_row(self._index), lseq, LABEL, lid, None, ly)
               for _, lseq, lid, ly in sorted(self._waiting)]
        self._waiting = []
        return out
