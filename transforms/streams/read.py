"""Reading streams into Beam: chunks of events, fanned out to one key per (stream, model)."""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass

import apache_beam as beam
from apache_beam.transforms.window import TimestampedValue

from transforms.errors import InputError, reports_errors
from transforms.records import ID, INSTANCE, KIND, REPLAY_KINDS, UPDATE, T, readable_time
from transforms.replay.keyed import KEYED_CHUNKS
from transforms.streams.delays import DelaySpec
from transforms.streams.rows import parse_time_value
from transforms.streams.sources import StreamSpec
from transforms.vocabulary import DEAD_LETTERS, ERRORS, READ_COUNTS


@dataclass(frozen=True)
class TimeRange:
    """The instances a run evaluates: those arriving in [start, end) (seconds of event time).
    Their updates and labels are kept whenever they come (a label may arrive after the range);
    events of instances outside it are counted as `outside_range`, not dead-lettered.

    >>> r = TimeRange.parse("2026-11-01", "2026-11-02")
    >>> r.end - r.start, r.first_day
    (172800.0, '2026-11-01')
    >>> TimeRange.parse(None, "100").end
    100.0
    >>> TimeRange.parse("yesterday", None)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    ValueError: --from 'yesterday': not an ISO date or datetime (2026-11-01,
    2026-11-01T06:00:00+02:00) nor seconds; write it so
    >>> TimeRange.parse(None, "nan")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --to 'nan': not an ISO date or datetime ...
    """

    start: float = -math.inf
    end: float = math.inf
    first_day: str | None = None  # partitions date=DAY before it hold no event of the range

    @classmethod
    def parse(cls, start: str | None, end: str | None) -> TimeRange:
        """ISO dates (`--to` DAY includes that whole day), ISO datetimes or seconds."""
        def day(text):
            return text is not None and re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(text))

        def seconds(text, flag):
            try:
                value = parse_time_value(text)
                if not math.isfinite(value):  # (nan and inf read as numbers)
                    raise ValueError(text)
                return value
            except ValueError:
                raise ValueError(f"{flag} {text!r}: not an ISO date or datetime (2026-11-01, "
                                 f"2026-11-01T06:00:00+02:00) nor seconds; write it so") from None

        lo = -math.inf if start is None else seconds(start, "--from")
        hi = math.inf if end is None else seconds(end, "--to") + (86400.0 if day(end) else 0)
        if hi <= lo:
            raise ValueError(f"the range from {start} to {end} is empty; give a --to after "
                             f"--from")
        first = str(start) if day(start) else None
        if first is None and math.isfinite(lo):
            first = dt.datetime.fromtimestamp(lo, dt.timezone.utc).date().isoformat()
        return cls(lo, hi, first)

    def describe(self) -> str:
        """The range in words, its bounds as messages show event times (`readable_time`).

        >>> TimeRange.parse("2026-11-01", None).describe()
        'from 2026-11-01 00:00:00 UTC'
        >>> TimeRange.parse("0", "2026-11-01").describe()
        'from 0 to 2026-11-02 00:00:00 UTC'
        >>> TimeRange.parse(None, "2026-11-01").describe()
        'before 2026-11-02 00:00:00 UTC'
        """
        if not math.isfinite(self.start):
            return f"before {readable_time(self.end)}"
        return f"from {readable_time(self.start)}" + (
            f" to {readable_time(self.end)}" if math.isfinite(self.end) else "")

    @property
    def everything(self) -> bool:
        return self.start == -math.inf and self.end == math.inf

    def keeps_partition(self, path: str) -> bool:
        """False for a file under a `date=DAY` partition before the range's first day."""
        found = re.search(r"date=(\d{4}-\d{2}-\d{2})", path)
        return found is None or self.first_day is None or found.group(1) >= self.first_day


def _in_range(items, time_range: TimeRange, counts: dict):
    kept, skipped = set(), set()
    for item in items:
        if isinstance(item, dict):
            yield item
            continue
        kind, key = item[KIND], item[ID]
        if kind == INSTANCE:
            inside = time_range.start <= item[T] < time_range.end
            (kept if inside else skipped).add(key)
            (skipped if inside else kept).discard(key)
        elif key not in kept and (key in skipped or kind == UPDATE):
            inside = False
        else:
            inside = True  # its instance's, or an orphan label: the replay decides
        if inside:
            yield item
        else:
            counts["outside_range"] += 1


def stream_items(spec: StreamSpec, delay: DelaySpec, counts: dict,
                 time_range: TimeRange = TimeRange()):
    """The stream's events (of instances in `time_range`) and dead-letter dicts, counting
    each kind in `counts`; a reader failing deep inside says where, in one line.

    Example
    -------

    >>> from transforms.streams.delays import DelaySpec
    >>> from transforms.streams.sources import StreamSpec
    >>> counts = new_read_counts()
    >>> items = list(stream_items(StreamSpec.parse('synth:SEA{"n": 4}'), DelaySpec.parse("1"),
    ...                           counts))
    >>> len(items), counts["instance_events"], counts["label_events"]
    (8, 4, 4)

    """
    items = _read(spec, delay, counts)
    yield from items if time_range.everything else _in_range(items, time_range, counts)


def _read(spec: StreamSpec, delay: DelaySpec, counts: dict):
    key = {kind: f"{kind}_events" for kind in REPLAY_KINDS}  # an event's count, by its kind
    try:
        for item in spec.events(delay):  # (an exception in the consumer is not raised here)
            counts["dead_letters" if isinstance(item, dict) else key[item[KIND]]] += 1
            yield item
    except InputError:
        raise
    except Exception as e:  # a generator or parser failing: say where, in one line
        raise InputError(f"stream {spec.name}: reading failed after "
                         f"{sum(counts.values())} records: {type(e).__name__}: {e}") from e


def new_read_counts() -> dict:
    """A stream's read counts, all zero: events of each kind (`pretrain_events`: the rows
    learned at arrival, `--pretrain`), dead letters, outside the range.

    Example
    -------

    >>> sorted(new_read_counts())  # doctest: +NORMALIZE_WHITESPACE
    ['dead_letters', 'instance_events', 'label_events', 'outside_range', 'pretrain_events',
     'update_events']

    """
    return {f"{k}_events": 0 for k in REPLAY_KINDS} | {"dead_letters": 0, "outside_range": 0}


class _ReadChunks(beam.DoFn):
    """One stream spec -> chunks (lists) of events, each timestamped with its earliest event
    time (so a watermark past T means every event before T has arrived); dead letters and the
    per-stream read counts go to tagged outputs."""

    def __init__(self, delay: DelaySpec, chunk_size: int, time_range: TimeRange):
        self.delay = delay
        self.chunk_size = chunk_size
        self.time_range = time_range

    @reports_errors
    def process(self, spec: StreamSpec):
        counts = new_read_counts()
        chunk: list = []
        for item in stream_items(spec, self.delay, counts, self.time_range):
            if isinstance(item, dict):
                yield beam.pvalue.TaggedOutput(DEAD_LETTERS, item)
                continue
            chunk.append(item)
            if len(chunk) >= self.chunk_size:
                yield TimestampedValue((spec.name, chunk), min(e[0] for e in chunk))
                chunk = []
        if chunk:
            yield TimestampedValue((spec.name, chunk), min(e[0] for e in chunk))
        yield beam.pvalue.TaggedOutput(READ_COUNTS, (spec.name, counts))


class ReadStreams(beam.PTransform):
    """Stream specs -> `((stream, model), [event, ...])` chunks, one copy per model.

    Expects: checked `StreamSpec`s and the model names to fan out to. Guarantees: every event
    of every stream reaches every model's key exactly once, in chunks of at most `chunk_size`;
    every record that could not be used is in the `dead_letters` output with its reason.
    Outputs a dict with `chunks`, `dead_letters`, `read_counts` and `errors` (a reader's
    `DelayedEvalError` as a record).

    Parameters
    ----------
    streams
        The streams to read (`StreamSpec`).
    model_names
        The models each stream's events are keyed for.
    delay
        The label delay of streams whose input has no label times (`DelaySpec`).
    chunk_size
        Events per element: Beam's per-element cost is paid once per chunk.
    time_range
        Only instances arriving in it are evaluated (`TimeRange`).

    Example
    -------

    >>> import apache_beam as beam
    >>> from runners import make_runner
    >>> from transforms.streams.delays import DelaySpec
    >>> from transforms.streams.sources import StreamSpec
    >>> read = ReadStreams([StreamSpec.parse('sea=synth:SEA{"n": 5}')], ["m"],
    ...                    DelaySpec.parse("2"))
    >>> with beam.Pipeline(runner=make_runner("direct")) as p:
    ...     chunks = (p | read)["chunks"]
    ...     _ = chunks | beam.Map(lambda kv: print(kv[0], [e[3] for e in kv[1]][:4]))
    ('sea', 'm') ['instance', 'instance', 'label', 'instance']

    """

    def __init__(self, streams: list[StreamSpec], model_names: list[str], delay: DelaySpec,
                 chunk_size: int = 1000, time_range: TimeRange = TimeRange()):
        super().__init__()
        self.time_range = time_range
        self.streams = streams
        self.model_names = model_names
        self.delay = delay
        self.chunk_size = chunk_size

    def expand(self, pbegin):
        read = (pbegin
                | "Specs" >> beam.Create(self.streams)
                # A stream is read by one worker; streams are read in parallel.
                | "Reshuffle" >> beam.Reshuffle()
                | "ReadChunks" >> beam.ParDo(_ReadChunks(self.delay, self.chunk_size,
                                                             self.time_range))
                .with_outputs(DEAD_LETTERS, READ_COUNTS, ERRORS, main="chunks"))
        models = self.model_names
        chunks = read.chunks | "FanOut" >> beam.FlatMap(
            lambda sc: [((sc[0], m), sc[1]) for m in models]).with_output_types(KEYED_CHUNKS)
        return {"chunks": chunks, DEAD_LETTERS: read[DEAD_LETTERS],
                READ_COUNTS: read[READ_COUNTS], ERRORS: read[ERRORS]}
