"""The replays that read their own stream: one element per (stream, model) (`per-key`) or per
stream with all its models (`per-stream`), read and drained by one worker.

No events cross a shuffle: each worker reads its element's stream itself and drains it in time
order as it reads (a heap holds only the events not yet due), so

- the elements of a grid spread over the workers as plain elements (a runner splits a stage's
  input elements among its workers; a GroupByKey replay is one stage input per key group);
- the replay holds the pending instances and waiting labels, not the stream.

`per-stream` drains all models of a stream over the same events, one after another: the stream
is read (or generated) once, and each drain's outcomes of every model cover the same labels in
label order, so they are scored and compared right there (`transforms.scoring.in_stream`): the
summary and curve rows are outputs of the replay, and nothing waits for the end of the stream.
`per-key` spreads a stream's models over workers.

It needs the stream's instances in time order (generated streams are; logs usually are). An
instance earlier than one already drained stops the replay with an `InputError` naming it;
`--replay grouped` sorts the whole stream first, and `auto` checks the order before choosing
(`in_time_order`).
"""

from __future__ import annotations

import heapq
from collections import deque

import apache_beam as beam

from transforms.errors import InputError, reports_errors
from transforms.records import INSTANCE, KIND, SEQ, T
from transforms.replay.engine import LateEventError
from transforms.replay.keyed import EngineFactory, _emit, _ReplayDoFn, emit_pending
from transforms.scoring.in_stream import StreamScores
from transforms.scoring.curves import named_rows
from transforms.scoring.outcomes import RowRouter
from transforms.streams.delays import DelaySpec
from transforms.streams.read import TimeRange, new_read_counts, stream_items
from transforms.streams.sources import StreamSpec
from transforms.streams.tables import read_in_time_order
from transforms.vocabulary import CURVES, DEAD_LETTERS, READ_COUNTS, REPLAY_OUTPUTS, SUMMARY


def _due_batches(items, step: int, lookahead: int = 0):
    """A stream's events (and dead-letter dicts, passed on) -> (due, waiting): batches of the
    events due, in time order, each with the events read but not yet due. Events wait in a
    heap; when `step` of them wait, those earlier than the latest instance read are due (no
    event read later can be earlier, if the stream is in time order) — with `lookahead` k, up
    to the first instance read fewer than k instances ago: the bin_boundaries policy needs an
    instance's label time when the instance arrives, and a delay of k events gives the label
    when the k-th next instance is read. So which instances get their schedule depends
    neither on `step` (the batch size) nor on the replay path.

    >>> events = [(float(t), 1, t, "instance", t, {}, None) for t in range(6)]
    >>> [[e[0] for e in due] for due, _ in _due_batches(events, step=2)]
    [[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]]
    >>> [[e[0] for e in due] for due, _ in _due_batches(events, step=2, lookahead=3)]
    [[0.0], [1.0, 2.0], [3.0, 4.0, 5.0]]

    Read order, not time, counts the instances read since: the instance at t = 1, read third,
    waits for two more.

    >>> events = [(float(t), 1, i, "instance", i, {}, None) for i, t in enumerate([0, 2, 1, 3, 4])]
    >>> [[e[0] for e in due] for due, _ in _due_batches(events, step=1, lookahead=2)]
    [[0.0], [1.0, 2.0], [3.0, 4.0]]
    """
    waiting: list = []  # a heap of events, in (t, rank, seq) order
    newest = float("-inf")  # the latest instance time read
    # The seqs (read order) of the last instances read: one read k instances ago is due.
    recent: deque = deque(maxlen=lookahead + 1)
    read = 0  # events read since the last batch: with a look-ahead, the heap always holds
    # more than `step`, so a batch waits for `step` new events (not one batch per event)
    for item in items:
        if isinstance(item, dict):
            yield item
            continue
        heapq.heappush(waiting, item)
        read += 1
        if item[KIND] == INSTANCE:
            newest = max(newest, item[T])
            recent.append(item[SEQ])
        if (read if lookahead else len(waiting)) >= step and waiting[0][T] < newest:
            due = []
            while waiting and waiting[0][T] < newest and (
                    not lookahead or waiting[0][KIND] != INSTANCE
                    or len(recent) > lookahead and waiting[0][SEQ] <= recent[0]):
                due.append(heapq.heappop(waiting))
            if due:
                read = 0
                yield due, waiting
    yield sorted(waiting), []


def in_time_order(spec: StreamSpec, delay: DelaySpec, time_range: TimeRange = TimeRange(),
                  batch_size: int = 1000) -> bool:
    """Whether the per-key replay can drain this stream: no event comes after a batch later
    than it was due (what makes the replay stop with a `LateEventError`). A table is (in
    time order, or read whole and sorted: `tables.read_in_time_order`), unless its order is
    the file's and its times, read alone, are out of order; any other stream is read once,
    stopping at the first such event.

    >>> from transforms.streams.sources import StreamSpec
    >>> in_time_order(StreamSpec.parse('synth:SEA{"n": 50}'), DelaySpec.parse("5"))
    True
    """
    if spec.kind == "file" and read_in_time_order(spec):
        return True
    last = None
    for item in _due_batches(stream_items(spec, delay, new_read_counts(), time_range),
                            20 * batch_size):
        if isinstance(item, dict) or not item[0]:
            continue
        due = item[0]
        if last is not None and due[0][:3] <= last:
            return False
        last = due[-1][:3]
    return True


def _classes_of(stream: str, engines: dict) -> dict:
    """(stream, model) -> the classes its engine has indexed so far (rows scored now name
    no class it has not seen)."""
    return {(stream, model): engine.outcome_classes for model, engine in engines.items()}


class _DrainPerKey(_ReplayDoFn):

    def __init__(self, factory: EngineFactory, batch_size: int, delay: DelaySpec,
                 time_range: TimeRange, scores: StreamScores | None):
        super().__init__(factory, batch_size)
        self.delay = delay
        self.time_range = time_range
        self.scores = scores

    def _lookahead(self, spec: StreamSpec) -> int:
        """Instances read ahead before one is due: a bin_boundaries schedule needs each label
        time when its instance arrives (`plan` sends streams whose labels can come anywhere
        later to the grouped replay)."""
        policy = self.factory.repredict
        if policy is None or policy.kind != "bin_boundaries":
            return 0
        return spec.label_lookahead(self.delay) or 0

    @reports_errors
    def process(self, element):
        spec, models, reports_stream = element  # the stream's first element reports its reading
        engines = {model: self.factory.new((spec.name, model)) for model in models}
        scoring = None if self.scores is None else self.scores.start(spec.name, models)
        router = None if self.scores is None else RowRouter(self.scores.plan, SUMMARY)
        counts = new_read_counts()
        for item in _due_batches(stream_items(spec, self.delay, counts, self.time_range),
                                20 * self.batch_size, self._lookahead(spec)):
            if isinstance(item, dict):
                if reports_stream:
                    yield beam.pvalue.TaggedOutput(DEAD_LETTERS, item)
                continue
            yield from self._drain(spec.name, engines, *item, scoring, router)
        for model, engine in engines.items():
            yield from emit_pending((spec.name, model), engine, self.factory)
        if scoring is not None:
            yield from router.route(named_rows(scoring.finish(), _classes_of(spec.name, engines)))
            yield from router.flush()
        if reports_stream:
            yield beam.pvalue.TaggedOutput(READ_COUNTS, (spec.name, counts))

    def _drain(self, stream: str, engines: dict, due: list, waiting: list, scoring, router):
        outcomes = {}
        for model, engine in engines.items():
            engine.expect_labels(waiting)  # label times known ahead (bin_boundaries schedules)
            pending_before = len(engine.pending)
            try:
                result = engine.drain(due, heartbeat=self.heartbeat((stream, model), engine))
            except LateEventError as e:
                raise InputError(f"{e}: the per-stream and per-key replays read a stream in "
                                 f"time order; sort it, or use --replay grouped (or auto, "
                                 f"which checks the order)") from None
            outcomes[model] = result.outcomes
            yield from _emit((stream, model), engine, result, pending_before, self.lines,
                             self.batch_size)
        for part in () if scoring is None else scoring.slices(outcomes):
            yield from router.route(named_rows(scoring.add(part), _classes_of(stream, engines)))


class PerKeyReplay(beam.PTransform):
    """Streams × models -> the replay's outputs (as `GroupedReplay`'s, plus `dead_letters` and
    `read_counts` of the reading), one element per (stream, model); with `scores`
    (`StreamScores`) one element per stream, which also outputs the summary rows (`summary`)
    and curve tables (`curves`) of its models and their comparisons.

    Parameters
    ----------
    streams
        The streams, each read where its element is processed.
    models
        The models replayed on each stream.
    factory
        Builds each key's `ReplayEngine` (`EngineFactory`).
    delay
        The label delay of streams whose input has no label times.
    batch_size
        Events drained at a time, and outcomes per output element.
    time_range
        Only instances arriving in it are evaluated.
    scores
        Score and compare all models of a stream where they drain (`StreamScores`; per-stream),
        or None (per-key: the outcomes are scored downstream).

    Example
    -------

    >>> import apache_beam as beam
    >>> from runners import make_runner
    >>> from transforms.models.specs import ModelSpec
    >>> from transforms.replay.keyed import EngineFactory
    >>> from transforms.streams.delays import DelaySpec
    >>> from transforms.streams.sources import StreamSpec
    >>> factory = EngineFactory({"nb": ModelSpec.parse("nb=gaussian-nb")}, {"sea": None},
    ...                         {"nb": "classification"})
    >>> replay = PerKeyReplay([StreamSpec.parse('sea=synth:SEA{"n": 100, "seed": 1}')], ["nb"],
    ...                       factory, DelaySpec.parse("10"))
    >>> with beam.Pipeline(runner=make_runner("direct")) as p:
    ...     counts = (p | replay)["counts"]
    ...     _ = counts | beam.Map(lambda kv: print(kv[0], kv[1]["labelled"]))
    ('sea', 'nb') 100

    References
    ----------
    Grzenda, M., Gomes, H. M., Bifet, A. (2020). Performance measures for evolving
    predictions under delayed labelling classification. International Joint Conference on
    Neural Networks (IJCNN).
    """

    def __init__(self, streams: list[StreamSpec], models: list[str], factory: EngineFactory,
                 delay: DelaySpec, batch_size: int = 1000, time_range: TimeRange = TimeRange(),
                 scores: StreamScores | None = None):
        super().__init__()
        self.streams, self.models, self.factory = streams, models, factory
        self.delay, self.batch_size, self.time_range = delay, batch_size, time_range
        self.scores = scores

    def expand(self, pbegin):
        if self.scores is None:
            elements = [(s, (m,), i == 0) for s in self.streams
                        for i, m in enumerate(self.models)]
        else:
            elements = [(s, tuple(self.models), True) for s in self.streams]
        return (pbegin
                | "Keys" >> beam.Create(elements)
                # Spread the elements over the workers (Create's stay in one bundle).
                | "SpreadKeys" >> beam.Reshuffle()
                | "ReadAndDrain" >> beam.ParDo(
                    _DrainPerKey(self.factory, self.batch_size, self.delay, self.time_range,
                                 self.scores))
                .with_outputs(*REPLAY_OUTPUTS, READ_COUNTS, SUMMARY, CURVES, main="outcomes"))
