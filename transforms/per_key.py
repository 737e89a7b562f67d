"""The per-key replay: one element per (stream, model), read and drained by one worker.

No events cross a shuffle: each worker reads its key's stream itself and drains it in time
order as it reads (a heap holds only the events not yet due), so

- the keys of a grid spread over the workers as plain elements (a runner splits a stage's
  input elements among its workers; a GroupByKey replay is one stage input per key group);
- the replay holds the pending instances and waiting labels, not the stream (what grows in a
  whole job is downstream of it: see the README's memory measurement).

It needs the stream's instances in time order (generated streams are; logs usually are). An
instance earlier than one already drained stops the replay with a `LateEventError` naming it;
`--replay grouped` sorts the whole stream first.
"""

from __future__ import annotations

import heapq

import apache_beam as beam

from transforms.delays import DelaySpec
from transforms.read import READ_COUNTS, TimeRange, new_read_counts, stream_items
from transforms.records import INSTANCE, KIND, T
from transforms.replay import DEAD_LETTERS, OUTPUT_TAGS, EngineFactory, _emit, _ReplayDoFn
from transforms.sources import StreamSpec


class _DrainPerKey(_ReplayDoFn):

    def __init__(self, factory: EngineFactory, batch_size: int, delay: DelaySpec,
                 time_range: TimeRange):
        super().__init__(factory, batch_size)
        self.delay = delay
        self.time_range = time_range

    def process(self, element):
        spec, model, reports_stream = element  # the stream's first model reports its reading
        key = (spec.name, model)
        engine = self.factory.new(key)
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
                yield from self._drain(key, engine, due, waiting)
        yield from self._drain(key, engine, sorted(waiting), [])
        if reports_stream:
            yield beam.pvalue.TaggedOutput(READ_COUNTS, (spec.name, counts))

    def _drain(self, key, engine, due: list, waiting: list):
        engine.expect_labels(waiting)  # label times known ahead (bin_boundaries schedules)
        pending_before = len(engine.pending)
        result = engine.drain(due)
        yield from _emit(key, engine, result, pending_before, self.lines, self.batch_size)


class PerKeyReplay(beam.PTransform):
    """Streams × models -> the replay's outputs (as `GroupedReplay`'s, plus `dead_letters` and
    `read_counts` of the reading), one element per (stream, model)."""

    def __init__(self, streams: list[StreamSpec], models: list[str], factory: EngineFactory,
                 delay: DelaySpec, batch_size: int = 1000, time_range: TimeRange = TimeRange()):
        super().__init__()
        self.streams, self.models, self.factory = streams, models, factory
        self.delay, self.batch_size, self.time_range = delay, batch_size, time_range

    def expand(self, pbegin):
        keys = [(s, m, i == 0) for s in self.streams for i, m in enumerate(self.models)]
        return (pbegin
                | "Keys" >> beam.Create(keys)
                # Spread the keys over the workers (Create's elements stay in one bundle).
                | "SpreadKeys" >> beam.Reshuffle()
                | "ReadAndDrain" >> beam.ParDo(
                    _DrainPerKey(self.factory, self.batch_size, self.delay, self.time_range))
                .with_outputs(*OUTPUT_TAGS, READ_COUNTS, main="outcomes"))
