"""The data model: events in, predictions and label outcomes out, and result keys.

Events are plain tuples, because Beam's coders encode tuples of primitives without pickling and
sorting them needs no key function:

    (t, rank, seq, kind, id, x, y)

`t` is the event time in seconds, `rank` orders events of equal `t` (a label due at t is
processed before an instance arriving at t; labelled rows keep their order, `instance_of_row`),
`seq` is the input order and is unique within a
stream, so `sorted(events)` is the DESIGN order `(t, rank, seq)` and never compares features.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any, NamedTuple

from transforms.specs import plain_value

INSTANCE = "instance"
UPDATE = "update"  # new features for a pending instance (evolving instance data)
LABEL = "label"
EVENT_KINDS = (INSTANCE, UPDATE, LABEL)  # (what a log's `kind` column may say)
# One of a stream's first rows, which a model learns with its label as it arrives and never
# predicts (`--pretrain N`, MOA's `-p N -m`): an event of the replay, never of a file.
PRETRAIN = "pretrain"
REPLAY_KINDS = (*EVENT_KINDS, PRETRAIN)

# Ranks for the default ordering rule. A label whose time equals its own instance's time must
# still come after that instance: in a log or tables, it gets the rank after instances.
RANK_LABEL = 0
RANK_INSTANCE = 1
RANK_LABEL_AFTER_INSTANCE = 2


def instance_of_row(i: int) -> int:
    """The rank of the instance of a stream of labelled rows' i-th row (from 0). Rows keep
    their order at equal times, so a label can come between two of them (`label_before_row`),
    as river's `progressive_val_score(delay=k)` reveals a label just before instance i + k
    whatever the times.

    >>> sorted([(5.0, instance_of_row(3), 6), (5.0, label_before_row(3), 3),
    ...         (5.0, instance_of_row(2), 4), (5.0, RANK_LABEL, 1)])
    [(5.0, 0, 1), (5.0, 3, 4), (5.0, 3.5, 3), (5.0, 4, 6)]
    """
    return RANK_INSTANCE + i


def label_before_row(i: int) -> float:
    """The rank of a label processed just before the i-th row's instance of a stream of
    labelled rows, after every earlier row's (`instance_of_row`).

    >>> instance_of_row(2) < label_before_row(3) < instance_of_row(3)
    True
    """
    return RANK_INSTANCE + i - 0.5

T, RANK, SEQ, KIND, ID, X, Y = range(7)


def event(t: float, rank: int, seq: int, kind: str, id: Any, x: dict | None = None,
          y: Any = None) -> tuple:
    """Build an event tuple.

    >>> sorted([event(5.0, RANK_INSTANCE, 1, INSTANCE, "b", {}),
    ...         event(5.0, RANK_LABEL, 7, LABEL, "a", None, 1)])[0][KIND]
    'label'
    """
    return (float(t), rank, seq, kind, id, x, y)


class Outcome(NamedTuple):
    """What the replay knows about one labelled instance once its label has arrived.

    `n` is the label's number in label-arrival order (1-based). For classification, `y`,
    `y_prev` (Persistent baseline: previous true label), `y_majority` (Majority baseline,
    counted including this label), `initial` and `final` are class indices; for regression they
    are floats (`y_prev`/`y_majority` unused). A prediction the model could not make (an
    untrained river model) is None and is not scored. `rep_times`/`rep_values` are the
    continuous re-evaluation's predictions while the label was pending, in time order (numpy
    arrays of times and of class indices with −1 for none / floats with NaN for none), or None.
    A replay that knows the number of bins B maps them at once and keeps only `bins`, the
    predictions for bins 0..B+1 (`metrics.binning.binned_predictions`): far smaller to ship.
    `initial_proba`/`final_proba` are a classifier's class probabilities for its initial and
    final predictions (tuples over class indices, shorter when classes came later), or None.
    `segments` places the instance in each `--segment` slice, one `SegmentPlace` per segment
    column (`segment_batches`), or None. `rep_proba` holds the re-predictions' class
    probabilities (a matrix, a row per re-prediction) until the replay bins them into
    `bins_proba` (bins 0..B+1 × classes, `metrics.binning.binned_proba`); None without.

    Example
    -------

    >>> o = Outcome(n=1, id="a", t_arrival=0.0, t_label=5.0, y=1, y_prev=0, y_majority=1,
    ...             initial=0, final=1)
    >>> o.initial == o.y, o.final == o.y, o.rep_times is None
    (False, True, True)

    """

    n: int
    id: Any
    t_arrival: float
    t_label: float
    y: Any
    y_prev: Any
    y_majority: Any
    initial: Any
    final: Any
    rep_times: Any = None
    rep_values: Any = None
    bins: Any = None
    initial_proba: Any = None
    final_proba: Any = None
    segments: Any = None
    rep_proba: Any = None
    bins_proba: Any = None


class SegmentPlace(NamedTuple):
    """Where a labelled instance stands in one segment (`country=DE`): a segment is scored as
    a stream of its own, so its labels have their own numbers `n` and their own Persistent and
    Majority baselines (`y_prev`, `y_majority`, as `Outcome`'s).

    >>> place = SegmentPlace("country=DE", n=2, y_prev=1, y_majority=0)  # (class indices)
    >>> stream_and_segment("sea" + SEGMENT_SEPARATOR + place.segment)
    ('sea', 'country=DE')
    """

    segment: str
    n: int
    y_prev: Any
    y_majority: Any


# A segment's outcomes are scored under the stream key `stream + SEGMENT_SEPARATOR + segment`,
# so every keyed step treats a segment as a stream of its own; rows are split back into
# `stream` and `segment` when they are written (`stream_and_segment`).
SEGMENT_SEPARATOR = "\x1f"
MISSING_SEGMENT = "(missing)"


def segment_name(column: str, value: Any) -> str:
    """The segment of an instance whose `column` holds `value`: `column=value` (whole floats
    without their `.0`; a missing value is `(missing)`).

    >>> segment_name("country", "DE"), segment_name("version", 2.0), segment_name("x", None)
    ('country=DE', 'version=2', 'x=(missing)')
    """
    if value is None or (isinstance(value, float) and value != value):
        value = MISSING_SEGMENT
    elif isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{column}={value}"


def column_value(x: dict | None, column: str) -> Any:
    """The value of `column` in the instance `x`, or None. A generator's features are named by
    numbers (river's SEA: 0, 1, 2), which a column named on the command line finds too.

    >>> column_value({0: "a", "b": 1}, "0"), column_value({"b": 1}, "b"), column_value(None, "b")
    ('a', 1, None)
    """
    if not x:
        return None
    if column in x or not column.isdigit():
        return x.get(column)
    return x.get(int(column))


def stream_and_segment(key: str) -> tuple[str, str | None]:
    """A scoring key's stream and segment (None: the whole stream).

    >>> stream_and_segment("sea" + SEGMENT_SEPARATOR + "country=DE"), stream_and_segment("sea")
    (('sea', 'country=DE'), ('sea', None))
    """
    stream, _, segment = key.partition(SEGMENT_SEPARATOR)
    return stream, segment or None


def segment_batches(key: tuple, outcomes: list):
    """A `((stream, model), [Outcome])` batch, then one batch per segment its outcomes are in,
    keyed `((stream + SEGMENT_SEPARATOR + segment, model)` and renumbered in the segment.

    >>> o = Outcome(7, "a", 0.0, 1.0, 1, 0, 1, 1, 1,
    ...             segments=(SegmentPlace("country=DE", 2, 1, 1),))
    >>> [(k[0].replace(SEGMENT_SEPARATOR, "|"), [(x.n, x.y_prev) for x in batch])
    ...  for k, batch in segment_batches(("sea", "nb"), [o])]
    [('sea', [(7, 0)]), ('sea|country=DE', [(2, 1)])]
    """
    yield key, outcomes
    if not outcomes or outcomes[0].segments is None:
        return
    stream, model = key
    slices: dict = {}
    for o in outcomes:
        for place in o.segments:
            slices.setdefault(place.segment, []).append(
                o._replace(n=place.n, y_prev=place.y_prev, y_majority=place.y_majority,
                           segments=None))
    for segment, batch in slices.items():
        yield (stream + SEGMENT_SEPARATOR + segment, model), batch


class MeasureKey(NamedTuple):
    """Names one reported number (TFMA's MetricKey, in the papers' vocabulary). (A named tuple:
    a run makes one per row of its summary and curves, hundreds of thousands, and with its row
    it takes about two thirds of a frozen dataclass's time.)

    >>> MeasureKey("sea", "GaussianNB", "initial", "accuracy").row(0.9, 10)["window"]
    'cumulative'
    """

    stream: str
    model: str
    category: str  # initial | binned | final | intermediate | prequential | comparison | drift
    metric: str
    bin: int | None = None
    alpha: float | None = None
    window: str = "cumulative"
    label_class: str | None = None  # a per-class measure's class; a confusion cell's true class
    predicted: str | None = None  # a confusion cell's predicted class

    def row(self, value: float, n: int, t: float | None = None) -> dict:
        return {"stream": self.stream, "model": self.model, "category": self.category,
                "bin": self.bin, "alpha": self.alpha, "window": self.window,
                "metric": self.metric, "class": self.label_class, "predicted": self.predicted,
                "value": value, "n": n, "t": t}


# Event times from 2001-09-09 to 2100 are read as dates; smaller ones (seconds from a stream's
# own start) stay numbers.
_DATED = (1e9, 4102444800.0)


def readable_time(t: float) -> str:
    """An event time as a message shows it: a UTC datetime for a date, else its seconds.

    >>> readable_time(1793487600.0), readable_time(1793487600.25), readable_time(12.5)
    ('2026-10-31 23:00:00 UTC', '2026-10-31 23:00:00.250 UTC', '12.5')
    """
    if not (isinstance(t, (int, float)) and math.isfinite(t) and _DATED[0] <= t < _DATED[1]):
        return f"{t:g}" if isinstance(t, (int, float)) else str(t)
    when = dt.datetime.fromtimestamp(t, dt.timezone.utc)
    return when.isoformat(" ", "milliseconds" if when.microsecond else "seconds")[:-6] + " UTC"


def event_record(ev: tuple) -> dict:
    """An event's fields by name, as a dead letter shows it.

    >>> event_record(event(1793487600.0, RANK_LABEL, 7, LABEL, "tx5", None, "ok"))
    {'time': '2026-10-31 23:00:00 UTC', 'kind': 'label', 'id': 'tx5', 'label': 'ok'}
    """
    return fields_record(ev[T], ev[KIND], ev[ID], ev[X], ev[Y])


def fields_record(t: float, kind: str | None, key, x: dict | None, y,
                  label_t: float | None = None) -> dict:
    """A row's fields by name, as a dead letter shows them (no kind: a labelled row; no
    features or label: left out).

    >>> fields_record(12.0, None, "a", {"f": 1.5}, "yes", label_t=20.0)
    {'time': '12', 'id': 'a', 'features': {'f': 1.5}, 'label': 'yes', 'label time': '20'}
    """
    fields = {"time": readable_time(t)}
    if kind is not None:
        fields["kind"] = kind
    fields["id"] = key
    if x:
        fields["features"] = x
    if y is not None:
        fields["label"] = y
    if label_t is not None:
        fields["label time"] = readable_time(label_t)
    return fields


def dead_letter(stream: str, reason: str, *, file: str | None = None, row: int | None = None,
                field: str | None = None, record: Any = None) -> dict:
    """A record that could not be used, with where it came from and why.

    >>> dead_letter("s", "time is not a number", file="a.csv", row=3, field="time")["reason"]
    'time is not a number'
    """
    return with_record({"stream": stream, "file": file, "row": row, "field": field,
                        "reason": reason}, record)


RECORD_CHARACTERS = 500  # about how much of what was read a dead letter keeps


def with_record(letter: dict, record: Any) -> dict:
    """A dead letter with what was read, as JSON holds it (`readable_record`); a check that
    finds the problem need not build the record of every row it passes.

    >>> with_record(dead_letter("s", "duplicate instance id 'a'"), {"id": "a"})["record"]
    {'id': 'a'}
    """
    return letter | {"record": None if record is None else readable_record(record)}


def readable_record(value: Any, budget: int = RECORD_CHARACTERS) -> Any:
    """What was read, in values JSON holds and about `budget` characters: a row's columns as
    an object (a missing cell null, an infinite number as its text), a line as its text, a
    time as its text; what does not fit is counted under "…", so a row of 10 000 columns
    does not make a dead letter of 10 000 fields.

    >>> readable_record({"id": "a", "f": math.nan, "g": math.inf, "when": dt.date(2026, 1, 2)})
    {'id': 'a', 'f': None, 'g': 'inf', 'when': '2026-01-02'}
    >>> readable_record({f"f{i}": 0.5 for i in range(1000)}, budget=30)
    {'f0': 0.5, 'f1': 0.5, 'f2': 0.5, 'f3': 0.5, '…': '996 more'}
    >>> import numpy as np
    >>> readable_record("1,2,3,4,5,6,7,8", budget=6), readable_record(np.array([1.5, 2.0]))
    ('1,2,3,…', [1.5, 2.0])
    """
    return _readable(value, budget)[0]


def _readable(value: Any, budget: int) -> tuple[Any, int]:
    """(`value` as `readable_record` gives it, about the characters its JSON takes)."""
    if not isinstance(value, (dict, list, tuple)):
        value = plain_value(value)  # (a NumPy number as Python's, an array as a list)
    if isinstance(value, (dict, list, tuple)):
        items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
        kept, used = [], 2
        for key, item in items:
            if used >= budget:
                break
            item, size = _readable(item, budget - used)
            kept.append((str(key), item))
            used += size + len(str(key)) + 4
        rest = len(items) - len(kept)
        if isinstance(value, dict):
            return dict(kept) | ({"…": f"{rest} more"} if rest else {}), used
        return [item for _, item in kept] + ([f"… {rest} more"] if rest else []), used
    if isinstance(value, float) and not math.isfinite(value):
        value = None if math.isnan(value) else repr(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value, len(repr(value))
    text = value if isinstance(value, str) else str(value)
    if len(text) > budget:
        text = text[:budget] + "…"
    return text, len(text) + 2


def field_count_reason(expected: int, saw: int) -> str:
    """Why a CSV line with another number of fields than its header is a dead letter.

    >>> field_count_reason(4, 5)
    'expected 4 fields, saw 5 (more fields than the header)'
    >>> field_count_reason(4, 1)
    'the line is cut short: 1 of 4 fields'
    """
    if saw > expected:
        return f"expected {expected} fields, saw {saw} (more fields than the header)"
    return f"the line is cut short: {saw} of {expected} fields"


def is_missing(value) -> bool:
    """Whether a value is a gap (a missing feature, delay or text): None or NaN (not an infinity).

    >>> [is_missing(v) for v in (None, float("nan"), float("inf"), 0.0, "")]
    [True, True, False, False, False]
    """
    return value is None or isinstance(value, float) and math.isnan(value)
