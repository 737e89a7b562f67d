"""Reading streams into Beam: chunks of events, fanned out to one key per (stream, model)."""

from __future__ import annotations

import apache_beam as beam
from apache_beam.transforms.window import TimestampedValue

from transforms.delays import DelaySpec
from transforms.records import EVENT_KINDS
from transforms.replay import DEAD_LETTERS, KEYED_CHUNKS
from transforms.sources import InputError, StreamSpec

READ_COUNTS = "read_counts"


def stream_items(spec: StreamSpec, delay: DelaySpec, counts: dict):
    """The stream's events and dead-letter dicts, counting each kind in `counts`; a reader
    failing deep inside says where, in one line."""
    items = spec.events(delay)
    while True:
        try:
            item = next(items, None)
        except InputError:
            raise
        except Exception as e:  # a generator or parser failing: say where, in one line
            raise InputError(f"stream {spec.name}: reading failed after "
                             f"{sum(counts.values())} records: {type(e).__name__}: {e}") \
                from e
        if item is None:
            return
        counts["dead_letters" if isinstance(item, dict) else f"{item[3]}_events"] += 1
        yield item


def new_read_counts() -> dict:
    return {f"{k}_events": 0 for k in EVENT_KINDS} | {"dead_letters": 0}


class _ReadChunks(beam.DoFn):
    """One stream spec -> chunks (lists) of events, each timestamped with its earliest event
    time (so a watermark past T means every event before T has arrived); dead letters and the
    per-stream read counts go to tagged outputs."""

    def __init__(self, delay: DelaySpec, chunk_size: int):
        self.delay = delay
        self.chunk_size = chunk_size

    def process(self, spec: StreamSpec):
        counts = new_read_counts()
        chunk: list = []
        for item in stream_items(spec, self.delay, counts):
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
    Outputs a dict with `chunks`, `dead_letters` and `read_counts`.
    """

    def __init__(self, streams: list[StreamSpec], model_names: list[str], delay: DelaySpec,
                 chunk_size: int = 1000):
        super().__init__()
        self.streams = streams
        self.model_names = model_names
        self.delay = delay
        self.chunk_size = chunk_size

    def expand(self, pbegin):
        read = (pbegin
                | "Specs" >> beam.Create(self.streams)
                # A stream is read by one worker; streams are read in parallel.
                | "Reshuffle" >> beam.Reshuffle()
                | "ReadChunks" >> beam.ParDo(_ReadChunks(self.delay, self.chunk_size))
                .with_outputs(DEAD_LETTERS, READ_COUNTS, main="chunks"))
        models = self.model_names
        chunks = read.chunks | "FanOut" >> beam.FlatMap(
            lambda sc: [((sc[0], m), sc[1]) for m in models]).with_output_types(KEYED_CHUNKS)
        return {"chunks": chunks, DEAD_LETTERS: read[DEAD_LETTERS],
                READ_COUNTS: read[READ_COUNTS]}
