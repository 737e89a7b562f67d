"""The replays that read their own stream: one element per (stream, model) (`per-key`) or per
stream with all its models (`per-stream`), read and drained by one worker.

No events cross a shuffle: each worker reads its element's stream itself and drains it in time
order as it reads (a heap holds only the events not yet due), so

- the elements of a grid spread over the workers as plain elements (a runner splits a stage's
  input elements among its workers; a GroupByKey replay is one stage input per key group);
- the replay holds the pending instances and waiting labels, not the stream.

`per-stream` drains all models of a stream over the same events, one after another: the stream
is read (or generated) once, and each drain's outcomes of every model cover the same labels, so
the model comparisons are made right there (`transforms.comparison.PairPanes`) instead of
joining every label's losses after a shuffle. `per-key` spreads a stream's models over workers.

It needs the stream's instances in time order (generated streams are; logs usually are). An
instance earlier than one already drained stops the replay with a `LateEventError` naming it;
`--replay grouped` sorts the whole stream first.
"""

from __future__ import annotations

import heapq

import apache_beam as beam

from transforms.comparison import PairPanes
from transforms.delays import DelaySpec
from transforms.read import READ_COUNTS, TimeRange, new_read_counts, stream_items
from transforms.records import INSTANCE, KIND, T
from transforms.replay import DEAD_LETTERS, OUTPUT_TAGS, EngineFactory, _emit, _ReplayDoFn
from transforms.sources import StreamSpec

PAIR_PANES = "pair_panes"


class _DrainPerKey(_ReplayDoFn):

    def __init__(self, factory: EngineFactory, batch_size: int, delay: DelaySpec,
                 time_range: TimeRange, pair_panes: PairPanes | None):
        super().__init__(factory, batch_size)
        self.delay = delay
        self.time_range = time_range
        self.pair_panes = pair_panes

    def process(self, element):
        spec, models, reports_stream = element  # the stream's first element reports its reading
        engines = {model: self.factory.new((spec.name, model)) for model in models}
        counts = new_read_counts()
        waiting: list = []  # a heap of events, in (t, rank, seq) order
        newest = float("-inf")  # the latest instance time: no event read later is earlier
        step = 20 * self.batch_size
        for item in stream_items(spec, self.delay, counts, self.time_range):
            if isinstance(item, dict):
                if reports_stream:
                    yield beam.pvalue.TaggedOutput(DEAD_LETTERS, item)
                continue
            heapq.heappush(waiting, item)
            if item[KIND] == INSTANCE and item[T] > newest:
                newest = item[T]
            if len(waiting) >= step and waiting[0][T] < newest:
                due = []
                while waiting and waiting[0][T] < newest:
                    due.append(heapq.heappop(waiting))
                yield from self._drain(spec.name, engines, due, waiting)
        yield from self._drain(spec.name, engines, sorted(waiting), [])
        if reports_stream:
            yield beam.pvalue.TaggedOutput(READ_COUNTS, (spec.name, counts))

    def _drain(self, stream: str, engines: dict, due: list, waiting: list):
        outcomes = {}
        for model, engine in engines.items():
            engine.expect_labels(waiting)  # label times known ahead (bin_boundaries schedules)
            pending_before = len(engine.pending)
            result = engine.drain(due)
            outcomes[model] = result.outcomes
            yield from _emit((stream, model), engine, result, pending_before, self.lines,
                             self.batch_size)
        if self.pair_panes is not None and len(engines) > 1:
            for key, pane in self.pair_panes(stream, outcomes):
                yield beam.pvalue.TaggedOutput(PAIR_PANES, (key, pane))


class PerKeyReplay(beam.PTransform):
    """Streams × models -> the replay's outputs (as `GroupedReplay`'s, plus `dead_letters` and
    `read_counts` of the reading), one element per (stream, model); with `pair_panes`
    (`PairPanes`) one element per stream, which also outputs its comparison panes
    (`pair_panes`)."""

    def __init__(self, streams: list[StreamSpec], models: list[str], factory: EngineFactory,
                 delay: DelaySpec, batch_size: int = 1000, time_range: TimeRange = TimeRange(),
                 pair_panes: PairPanes | None = None):
        super().__init__()
        self.streams, self.models, self.factory = streams, models, factory
        self.delay, self.batch_size, self.time_range = delay, batch_size, time_range
        self.pair_panes = pair_panes

    def expand(self, pbegin):
        if self.pair_panes is None:
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
                                 self.pair_panes))
                .with_outputs(*OUTPUT_TAGS, READ_COUNTS, PAIR_PANES, main="outcomes"))
