"""The ordered per-key replay as Beam transforms, both around the same `ReplayEngine`.

- `GroupedReplay` (bounded input): GroupByKey -> sort -> one drain per key. Simple and fast.
- `StatefulReplay` (bounded or unbounded): a stateful DoFn with a BagState buffer of chunks,
  the engine in ReadModifyWriteState and one event-time timer. A timer firing at T is read only
  as "the watermark has passed T" (Beam does not fire timers in timestamp order): the firing
  drains every buffered event with t < T, in `(t, rank, seq)` order, and re-arms the timer at
  the bucket of the earliest event still buffered.

Both emit the same tagged outputs: `outcomes` (main) as `((stream, model), [Outcome])` batches,
`predictions` as `((stream, model), classes, columns)` (see `PredictionLog.columns`; `classes`
maps class indices to labels; a drain's rows come in slices, each with the drain's ids),
`dead_letters`, `counts` `((stream, model), dict)`, `classes` `((stream, model), [class
values in index order])` and `errors` (a `DelayedEvalError` as a record, `transforms.errors`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import apache_beam as beam
from apache_beam import typehints
from apache_beam.coders import PickleCoder, VarIntCoder
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.userstate import (BagStateSpec, ReadModifyWriteStateSpec, TimerSpec,
                                              on_timer)
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MAX_TIMESTAMP, Timestamp

from metrics.baselines import BaselineViews
from transforms.errors import reports_errors
from transforms.models.specs import ModelSpec
from transforms.replay.engine import ReplayEngine
from transforms.replay.progress import ProgressLines, report_progress
from transforms.replay.protocols import CrossValidation, Holdout, model_and_fold
from transforms.replay.repredict import RepredictPolicy
from transforms.vocabulary import (CLASSES, COUNTS, DEAD_LETTERS, HOLDOUT_POINTS, PENDING,
                                   PREDICTIONS, REPLAY_OUTPUTS, RESOURCE_POINTS)

# Keys are (stream, model) strings: a deterministic key coder, as stateful DoFns and
# GroupByKey on distributed runners require.
KEYED_CHUNKS = typehints.KV[typehints.Tuple[str, str], typehints.List[typehints.Any]]



@dataclass(frozen=True)
class EngineFactory:
    """Builds a key's engine on the worker from serialisable specs (never a live model).

    Example
    -------

    >>> from transforms.models.specs import ModelSpec
    >>> factory = EngineFactory({"nb": ModelSpec.parse("nb=gaussian-nb")}, {"s": None},
    ...                         {"nb": "classification"}, final=False)
    >>> engine = factory.new(("s", "nb"))
    >>> engine.stream, engine.model_name, engine.final
    ('s', 'nb', False)

    """

    models: dict[str, ModelSpec]
    classes: dict[str, list | None]
    tasks: dict[str, str]
    final: bool = True
    repredict: RepredictPolicy | None = None
    bins: int = 0  # > 0: outcomes carry their bin predictions
    log_predictions: str = "all"
    progress: float | None = None  # seconds between progress lines on stderr; None: none
    baselines: BaselineViews | None = None  # the views whose Majority baseline labels carry
    on_model_error: str = "fail"  # or dead-letter (`ReplayEngine`)
    probabilities: bool = True  # keep class probabilities (`ReplayEngine`)
    resources_every: int = 0  # > 0: measure the models' cost every N labels (`ReplayEngine`)
    segments: tuple = ()  # the --segment columns (`ReplayEngine`)
    hidden: dict | None = None  # per stream, the columns read only to segment by
    maturity: bool = False  # count per arrival day (`ReplayEngine`)
    cv: CrossValidation | None = None  # a model `name#i` is fold i of it (`ReplayEngine`)
    holdout: Holdout | None = None  # a periodic holdout (`ReplayEngine`)
    repredicted_probabilities: bool = False  # re-predictions keep them too (`ReplayEngine`)
    binary: dict | None = None  # per stream, its binary classifiers' classes (`ReplayEngine`)
    fails_at: dict | None = None  # per (stream, model), a backfill's `ReplayEngine` fails_at
    pending_ids: bool = False  # at a key's end, output its pending instances (`emit_pending`)
    curve_steps: dict | None = None  # per stream, its own curve step: its measurements' N


    def new(self, key) -> ReplayEngine:
        stream, model = key
        return ReplayEngine(self.models[model], stream, self.classes.get(stream),
                            self.tasks[model], self.final, self.repredict, self.bins,
                            self.log_predictions, self.baselines, self.on_model_error,
                            self.probabilities, self.resources_every and (
                                self.curve_steps or {}).get(stream, self.resources_every),
                            self.segments,
                            (self.hidden or {}).get(stream, ()), self.maturity,
                            self._fold(model), self.holdout, self.repredicted_probabilities,
                            (self.binary or {}).get(stream), (self.fails_at or {}).get(key))

    def _fold(self, model: str) -> tuple | None:
        fold = model_and_fold(model)[1] if self.cv is not None else None
        return None if fold is None else (self.cv, fold - 1)


def _emit(key, engine: ReplayEngine, result, pending_before: int,
          lines: ProgressLines | None, batch_size: int):
    """Yield a drain's results as batched, tagged outputs (and count its progress)."""
    stream, model = key
    for i in range(0, len(result.outcomes), batch_size):
        yield key, result.outcomes[i:i + batch_size]
    columns = result.predictions.columns()
    classes = list(engine.classes) if engine.classification else None
    step = 100 * batch_size  # rows of predictions per element: columns, cheap to carry
    for i in range(0, len(columns["row_id"]), step):
        # Its place in the log: the drain's last event (drains follow each other), then the
        # part of the drain: every replay path writes the rows in the order of their events.
        yield beam.pvalue.TaggedOutput(PREDICTIONS, (key, classes, (*engine.last_key, i), {
            name: values if name == "ids" else values[i:i + step]
            for name, values in columns.items()}))
    for d in result.dead_letters:
        yield beam.pvalue.TaggedOutput(DEAD_LETTERS, {**d, "model": model})
    counts = dict(result.counts)
    counts["pending"] = len(engine.pending) - pending_before
    report_progress(key, counts, lines)
    yield beam.pvalue.TaggedOutput(COUNTS, (key, counts))
    yield beam.pvalue.TaggedOutput(CLASSES, (key, list(engine.outcome_classes)))
    if result.resources:
        yield beam.pvalue.TaggedOutput(RESOURCE_POINTS, (key, result.resources))
    if result.holdout:
        yield beam.pvalue.TaggedOutput(HOLDOUT_POINTS, (key, result.holdout))


def emit_pending(key, engine: ReplayEngine, factory: EngineFactory):
    """At the end of a key's stream, its instances still waiting for their label: (key, ids,
    arrival times), when the `factory` asks for them (a backfill's label pass: a logged
    prediction of such an instance is not yet scored, and is counted so).

    >>> from transforms.records import RANK_INSTANCE, event
    >>> factory = EngineFactory({"nc": ModelSpec.parse("nc=no-change")}, {"s": None},
    ...                         {"nc": "classification"}, pending_ids=True)
    >>> engine = factory.new(("s", "nc"))
    >>> _ = engine.drain([event(0.0, RANK_INSTANCE, 0, "instance", "a", {}),
    ...                   event(2.5, RANK_INSTANCE, 1, "instance", "b", {})])
    >>> [(out.tag, out.value) for out in emit_pending(("s", "nc"), engine, factory)]
    [('pending', (('s', 'nc'), ['a', 'b'], [0.0, 2.5]))]
    """
    if factory.pending_ids and engine.pending:
        yield beam.pvalue.TaggedOutput(PENDING, (key, list(engine.pending), [
            state[0] for state in engine.pending.values()]))


class _ReplayDoFn(beam.DoFn):
    """What both replay DoFns share: the engine factory and this instance's progress lines."""

    def __init__(self, factory: EngineFactory, batch_size: int):
        self.factory = factory
        self.batch_size = batch_size
        self.lines = None

    def setup(self):
        if self.factory.progress is not None:
            self.lines = ProgressLines(self.factory.progress)

    def heartbeat(self, key, engine: ReplayEngine):
        """What `engine`'s next drain calls with its counts so far, for progress lines during
        a long drain (None: no lines)."""
        if self.lines is None:
            return None
        before = len(engine.pending)
        return lambda counts: self.lines.during(
            key, {**counts, "pending": len(engine.pending) - before})


class _DrainGrouped(_ReplayDoFn):

    @reports_errors
    def process(self, element):
        key, chunks = element
        engine = self.factory.new(key)
        events = sorted(e for chunk in chunks for e in chunk)
        engine.expect_labels(events)
        # Drained in slices, so a key's outputs stream out instead of piling up in memory.
        step = 20 * self.batch_size
        for i in range(0, max(len(events), 1), step):
            pending_before = len(engine.pending)
            result = engine.drain(events[i:i + step], math.inf, self.heartbeat(key, engine))
            yield from _emit(key, engine, result, pending_before, self.lines,
                             self.batch_size)
        yield from emit_pending(key, engine, self.factory)


class GroupedReplay(beam.PTransform):
    """Bounded input: `((stream, model), chunk)` -> GroupByKey -> sorted drain per key.

    Parameters
    ----------
    factory
        Builds each key's `ReplayEngine` on the worker (`EngineFactory`).
    batch_size
        Outcomes per output element.

    Example
    -------

    >>> import apache_beam as beam
    >>> from runners import make_runner
    >>> from transforms.models.specs import ModelSpec
    >>> from transforms.records import RANK_INSTANCE, RANK_LABEL, event
    >>> events = [event(0, RANK_INSTANCE, 0, "instance", 1, {}),
    ...           event(1, RANK_LABEL, 1, "label", 1, None, "b"),
    ...           event(1, RANK_INSTANCE, 2, "instance", 2, {})]
    >>> factory = EngineFactory({"nc": ModelSpec.parse("nc=no-change")}, {"s": ["a", "b"]},
    ...                         {"nc": "classification"})
    >>> with beam.Pipeline(runner=make_runner("direct")) as p:
    ...     replay = p | beam.Create([(("s", "nc"), events)]) | GroupedReplay(factory)
    ...     _ = replay.outcomes | beam.Map(lambda kv: print(kv[0], [(o.id, o.initial, o.y)
    ...                                                            for o in kv[1]]))
    ('s', 'nc') [(1, 0, 1)]

    References
    ----------
    Grzenda, M., Gomes, H. M., Bifet, A. (2020). Performance measures for evolving
    predictions under delayed labelling classification. International Joint Conference on
    Neural Networks (IJCNN).
    """

    def __init__(self, factory: EngineFactory, batch_size: int = 1000):
        super().__init__()
        self.factory = factory
        self.batch_size = batch_size

    def expand(self, chunks):
        return (chunks
                | "GroupByKey" >> beam.GroupByKey().with_input_types(KEYED_CHUNKS)
                | "Drain" >> beam.ParDo(_DrainGrouped(self.factory, self.batch_size))
                .with_outputs(*REPLAY_OUTPUTS, main="outcomes"))


class _StatefulDrain(_ReplayDoFn):
    BUFFER = BagStateSpec("buffer", PickleCoder())
    ENGINE = ReadModifyWriteStateSpec("engine", PickleCoder())
    ARMED_AT = ReadModifyWriteStateSpec("armed_at", VarIntCoder())
    FLUSH = TimerSpec("flush", TimeDomain.WATERMARK)

    def __init__(self, factory: EngineFactory, batch_size: int, bucket: float | None):
        super().__init__(factory, batch_size)
        self.bucket = bucket  # None: bounded input, drain once at the end of the window

    def _fire_time(self, t: float) -> Timestamp:
        if self.bucket is None:
            return GlobalWindow().max_timestamp()
        # Drain events with t < fire time: the end of t's bucket.
        return Timestamp.of((math.floor(t / self.bucket) + 1) * self.bucket)

    def _arm(self, timer, armed_at, fire: Timestamp) -> None:
        current = armed_at.read()
        if current is None or fire.micros < current:
            timer.set(fire)
            armed_at.write(fire.micros)

    def process(self, element, buffer=beam.DoFn.StateParam(BUFFER),
                armed_at=beam.DoFn.StateParam(ARMED_AT), timer=beam.DoFn.TimerParam(FLUSH)):
        _, chunk = element
        buffer.add(chunk)
        self._arm(timer, armed_at, self._fire_time(min(e[0] for e in chunk)))

    @on_timer(FLUSH)
    @reports_errors
    def flush(self, key=beam.DoFn.KeyParam, fire=beam.DoFn.TimestampParam,
              buffer=beam.DoFn.StateParam(BUFFER), engine_state=beam.DoFn.StateParam(ENGINE),
              armed_at=beam.DoFn.StateParam(ARMED_AT), timer=beam.DoFn.TimerParam(FLUSH)):
        armed_at.clear()
        end = fire >= MAX_TIMESTAMP or fire >= GlobalWindow().max_timestamp()
        T = math.inf if end else fire.micros / 1e6
        due, rest = [], []
        for chunk in buffer.read():
            for e in chunk:
                (due if e[0] < T else rest).append(e)
        buffer.clear()
        engine = engine_state.read() or self.factory.new(key)
        pending_before = len(engine.pending)
        engine.expect_labels(rest)
        result = engine.drain(due, T, self.heartbeat(key, engine))
        engine_state.write(engine)
        if rest:
            buffer.add(rest)
            self._arm(timer, armed_at, self._fire_time(min(e[0] for e in rest)))
        yield from _emit(key, engine, result, pending_before, self.lines, self.batch_size)
        if end:
            yield from emit_pending(key, engine, self.factory)


class StatefulReplay(beam.PTransform):
    """Bounded or unbounded input: a stateful DoFn keyed by (stream, model), watermark-driven.

    `bucket` (seconds of event time) sets how coarsely the looping timer drains in streaming;
    None drains once at the end of the global window (bounded input).

    Parameters
    ----------
    factory
        Builds each key's `ReplayEngine` on the worker (`EngineFactory`).
    batch_size
        Outcomes per output element.
    bucket
        Seconds of event time per drain of the looping timer (None: one drain at the end of
        bounded input).

    Example
    -------

    >>> import apache_beam as beam
    >>> from runners import make_runner
    >>> from transforms.models.specs import ModelSpec
    >>> from transforms.records import RANK_INSTANCE, RANK_LABEL, event
    >>> events = [event(0, RANK_INSTANCE, 0, "instance", 1, {}),
    ...           event(1, RANK_LABEL, 1, "label", 1, None, "b"),
    ...           event(1, RANK_INSTANCE, 2, "instance", 2, {})]
    >>> factory = EngineFactory({"nc": ModelSpec.parse("nc=no-change")}, {"s": ["a", "b"]},
    ...                         {"nc": "classification"})
    >>> with beam.Pipeline(runner=make_runner("direct")) as p:
    ...     replay = p | beam.Create([(("s", "nc"), events)]) | StatefulReplay(factory)
    ...     _ = replay.outcomes | beam.Map(lambda kv: print(kv[0], [(o.id, o.initial, o.y)
    ...                                                            for o in kv[1]]))
    ('s', 'nc') [(1, 0, 1)]

    References
    ----------
    Grzenda, M., Gomes, H. M., Bifet, A. (2020). Performance measures for evolving
    predictions under delayed labelling classification. International Joint Conference on
    Neural Networks (IJCNN).
    """

    def __init__(self, factory: EngineFactory, batch_size: int = 1000,
                 bucket: float | None = None):
        super().__init__()
        self.factory = factory
        self.batch_size = batch_size
        self.bucket = bucket

    def expand(self, chunks):
        return chunks | "StatefulDrain" >> beam.ParDo(
            _StatefulDrain(self.factory, self.batch_size, self.bucket)).with_input_types(
            KEYED_CHUNKS).with_outputs(*REPLAY_OUTPUTS, main="outcomes")
