"""Scoring label outcomes: order-free, so it parallelises however Beam splits the work.

Each outcome carries its label number `n` and label time, so every reported number is a merge of
per-block partial scores:

    outcomes -> partial scores keyed by (stream, model, category, axis, block) -> CombinePerKey
             -> per (stream, model, category, axis) one pass over the sorted blocks -> rows
    outcomes -> each key's last max(w) outcomes (CombinePerKey) -> windows at the last label ⤴
    blocks' rows -> fading factors folded in label order (CombinePerKey, InLabelOrder)        ⤴

Axis `n` cuts the label sequence at the curve points (every `curve_every` labels) and where a
sliding window of the last w labels starts (`metrics.windows.block_ends`); the pass keeps the
cumulative score and takes windows as exact differences of cumulative scores; the fading
factors are folded over each curve's labels in label order as they come (`FadingCurve`), with
their state kept at every curve point. Nothing waits for the end of the stream: all three
branches are combines that Beam pre-aggregates where the outcomes are made, so the outcomes
themselves are never held (constant memory for a long replay). Each event-time window size D
with period P has its own axis of blocks [kP, (k+1)P) of label time, and the window ending at
(k+1)P is the difference of cumulative scores D/P blocks apart — Beam's `SlidingWindows(D, P)`
on label time.

Categories: `initial` and `final` (one score each), `binned` (one per bin b = 0..B+1, Λ(T,b)) and,
derived from the binned scores of every view, `intermediate` (Ψα for each α).
"""

from __future__ import annotations

import copy
import dataclasses

import apache_beam as beam
import pyarrow as pa

from metrics.blocks import FadingCurve, LabelBlock
from transforms.scoring.columns import block_scores, tail_scores
from transforms.scoring.curves import curve_rows, in_curves, keep_last, named_rows
from transforms.scoring.label_order import InLabelOrder
from transforms.records import stream_and_segment
from transforms.scoring.plan import LABEL_AXIS, ScoringPlan
from transforms.vocabulary import CURVE_SCHEMA, CURVES

FADING = "fading"


class LastOutcomes(beam.CombineFn):
    """A key's `size` outcomes with the highest label numbers (memory: `size` outcomes).

    Example
    -------

    >>> from transforms.records import Outcome
    >>> last = LastOutcomes(2)
    >>> acc = last.add_input(last.create_accumulator(),
    ...                      [Outcome(n, n, 0.0, n, 1, 1, 1, 1, 1) for n in (3, 1, 2)])
    >>> [o.n for o in last.extract_output(acc)]
    [2, 3]

    """

    def __init__(self, size: int):
        self.size = size

    def create_accumulator(self):
        return []

    def add_input(self, acc, outcomes):
        return keep_last(acc + list(outcomes), self.size)

    def merge_accumulators(self, accs):
        return keep_last([o for acc in accs for o in acc], self.size)

    def extract_output(self, acc):
        return acc


class _MergeBlocks(beam.CombineFn):
    """Merge the partial `LabelBlock`s of one block key."""

    def create_accumulator(self):
        return None

    def add_input(self, acc, block):
        # Never mutate the input element: runners may reuse it.
        return copy.deepcopy(block) if acc is None else acc.merge(block)

    def merge_accumulators(self, accs):
        merged = None
        for a in accs:
            if a is not None:
                merged = copy.deepcopy(a) if merged is None else merged.merge(a)
        return merged

    def extract_output(self, acc):
        return acc


class RowRouter:
    """(is_last, row) pairs -> Beam outputs: the end-of-stream rows (without their `labels`) to
    the main output (or to `summary_tag`), and curve rows to `curves` as Arrow tables of at
    least `chunk` rows of one (stream, model). Rows turn into Arrow `chunk` at a time, and at the
    end of each `route` call (a curve point every 1000 labels of a long stream is many rows: as
    dicts they weigh ~1 KB a row). `flush` emits the tables still filling.

    Example
    -------

    >>> from transforms.scoring.plan import ScoringPlan
    >>> row = {"stream": "s", "model": "m", "category": "initial", "bin": None, "alpha": None,
    ...        "window": "cumulative", "metric": "accuracy", "value": 1.0, "n": 3, "t": 3.0,
    ...        "labels": 3}
    >>> router = RowRouter(ScoringPlan(), chunk=2)
    >>> [type(o).__name__ for o in router.route([(False, row)])]  # one curve row: held
    []
    >>> [o.value.num_rows for o in router.flush()]
    [1]
    >>> points = ((False, {**row, "labels": k}) for k in range(5))  # a generator's rows
    >>> [o.value.num_rows for o in router.route(points)], router.curves[("s", "m")][0].num_rows
    ([2, 2], 1)

    """

    def __init__(self, plan: ScoringPlan, summary_tag: str | None = None, chunk: int = 10_000):
        self.plan, self.summary_tag, self.chunk = plan, summary_tag, chunk
        self.curves: dict = {}  # (stream, model) -> Arrow tables not yet emitted

    def route(self, rows):
        new: dict = {}
        for last, row in rows:
            stream, segment = stream_and_segment(row["stream"])
            row = {**row, "stream": stream, "segment": segment}
            if in_curves(row, self.plan):
                key = (row["stream"], row["model"])
                curve = new.setdefault(key, [])
                curve.append(row)
                if len(curve) >= self.chunk:  # (rows may come from a generator: a key's
                    yield from self._add(key, new.pop(key))  # whole curves)
            if last:
                row = {k: v for k, v in row.items() if k != "labels"}
                yield row if self.summary_tag is None else \
                    beam.pvalue.TaggedOutput(self.summary_tag, row)
        for key, curve in new.items():
            yield from self._add(key, curve)

    def _add(self, key, curve: list):
        tables = self.curves.setdefault(key, [])
        tables.append(pa.Table.from_pylist(curve, CURVE_SCHEMA))
        if sum(t.num_rows for t in tables) >= self.chunk:
            yield from self._emit(key)

    def flush(self):
        for key in list(self.curves):
            yield from self._emit(key)

    def _emit(self, key):
        tables = self.curves.pop(key)
        if tables:
            yield beam.pvalue.TaggedOutput(CURVES, pa.concat_tables(tables).combine_chunks())


def route_rows(rows, plan: ScoringPlan):
    """All of `rows` through a `RowRouter`.

    Example
    -------

    >>> from transforms.scoring.plan import ScoringPlan
    >>> row = {"stream": "s", "model": "m", "category": "initial", "bin": None, "alpha": None,
    ...        "window": "cumulative", "metric": "accuracy", "value": 1.0, "n": 3, "t": 3.0,
    ...        "labels": 3}
    >>> out = list(route_rows([(True, row)], ScoringPlan()))
    >>> [type(o).__name__ for o in out], out[1].tag, out[1].value.num_rows
    (['dict', 'TaggedOutput'], 'curves', 1)

    """
    router = RowRouter(plan)
    yield from router.route(rows)
    yield from router.flush()


def first_of(grouped: dict) -> tuple:
    """A curve's `tail` and `fading` from its CoGroupByKey result (None where absent).

    Example
    -------

    >>> first_of({"blocks": [], "tails": ["tail"]})
    ('tail', None)

    """
    return tuple(grouped[tag][0] if grouped.get(tag) else None for tag in ("tails", FADING))


class _FadeInLabelOrder(beam.PTransform):
    """`(curve key, (label numbers, rows))` batches -> `(curve key, FadingCurve's result)`,
    each curve folded in label order as its batches come (`InLabelOrder`; one combine per task
    and curve step, `task_of(curve key)` and the stream's plan say which)."""

    def __init__(self, task_of, tasks, plan: ScoringPlan):
        super().__init__()
        self.task_of, self.tasks, self.plan = task_of, sorted(tasks), plan

    def expand(self, batches):
        tasks, task_of, plan = self.tasks, self.task_of, self.plan
        steps = sorted({plan.curve_every, *(step for _, step in plan.curve_steps)})

        def part_of(element, _):
            step = plan.for_stream(element[0][0]).curve_every
            return tasks.index(task_of(element[0])) * len(steps) + steps.index(step)

        parts = batches | "ByTask" >> beam.Partition(part_of, len(tasks) * len(steps))
        folds = [(task, step) for task in tasks for step in steps]
        return ([part | (f"Fold_{task}" if len(steps) == 1 else f"Fold_{task}_{step}")
                 >> beam.CombinePerKey(InLabelOrder(FadingCurve(
                     task, dataclasses.replace(plan, curve_every=step, curve_steps=()))))
                 for (task, step), part in zip(folds, parts)]
                | "AllCurves" >> beam.Flatten())


class BlocksByCurve(beam.PTransform):
    """`((stream, model, category, axis, block), LabelBlock)` partials -> per curve key
    `(stream, model, category, axis)`: `blocks` `(block, merged LabelBlock)` and `fading` (the
    blocks' rows folded in label order, `_FadeInLabelOrder`). The rows are split off before the
    blocks merge, so what is shuffled per block is its scores.

    Example
    -------

    >>> from transforms.records import Outcome
    >>> from runners import make_runner
    >>> from transforms.scoring.columns import block_scores
    >>> from transforms.scoring.plan import ScoringPlan
    >>> plan = ScoringPlan(final=False, curve_every=2)
    >>> partials = [(("s", "m", *key), block) for key, block in block_scores(
    ...     [Outcome(n, n, 0.0, n, 1, 1, 1, 1, None) for n in (1, 2, 3)], "classification",
    ...     plan).items()]
    >>> with beam.Pipeline(runner=make_runner("direct")) as p:
    ...     by_curve = p | beam.Create(partials) | BlocksByCurve(lambda key: "classification",
    ...                                                          {"classification"}, plan)
    ...     _ = (by_curve["blocks"] | beam.GroupByKey()
    ...          | beam.Map(lambda kv: print(kv[0], sorted(b for b, _ in kv[1]))))
    ('s', 'm', 'initial', 'n') [2, 4]

    """

    def __init__(self, task_of, tasks, plan: ScoringPlan):
        super().__init__()
        self.task_of, self.tasks, self.plan = task_of, tasks, plan

    @staticmethod
    def _split(element):
        key, block = element
        if block.fading is not None:
            yield beam.pvalue.TaggedOutput(FADING, (key[:-1], block.fading))
            block = LabelBlock(block.scores)
        yield key, block

    def expand(self, partials):
        split = partials | "SplitFading" >> beam.FlatMap(self._split).with_output_types(
            beam.typehints.KV[beam.typehints.Any, LabelBlock]).with_outputs(FADING, main="blocks")
        return {"blocks": split.blocks
                | "_MergeBlocks" >> beam.CombinePerKey(_MergeBlocks())
                | "ByCurve" >> beam.Map(lambda e: (e[0][:-1], (e[0][-1], e[1]))),
                FADING: split[FADING]
                | "Fading" >> _FadeInLabelOrder(self.task_of, self.tasks, self.plan)}


class OutcomeTransform(beam.PTransform):
    """A transform of the replay's `((stream, model), [Outcome])` batches, given each model's
    task and a plan.

    Example
    -------

    >>> import transforms.scoring.comparison, transforms.scoring.drift  # where the others live
    >>> [cls.__name__ for cls in OutcomeTransform.__subclasses__()]
    ['ScoreOutcomes', 'CompareModels', 'DetectDrift']

    """

    def __init__(self, tasks: dict[str, str], plan):
        super().__init__()
        self.tasks = tasks
        self.plan = plan


class ScoreOutcomes(OutcomeTransform):
    """`((stream, model), [Outcome])` batches -> summary rows (main) and curve rows (`curves`).

    Guarantees: the same rows whatever the bundling or merge order (integer counts, exactly
    rounded sums, fading run in label order); an outcome whose prediction is None counts toward
    no score.

    Parameters
    ----------
    tasks
        Each model's task (`classification` or `regression`), by model name.
    plan
        What to score (`ScoringPlan`).
    classes
        The replay's `classes` output (`((stream, model), [class values in index order])`),
        which names the classes of the per-class rows; None: they keep their indices.

    Example
    -------

    >>> import apache_beam as beam
    >>> from runners import make_runner
    >>> from transforms.records import Outcome
    >>> from transforms.scoring.plan import ScoringPlan
    >>> outcomes = [Outcome(n, n, 0.0, n, 1, 1, 1, p, p) for n, p in [(1, 1), (2, 0), (3, 1)]]
    >>> with beam.Pipeline(runner=make_runner("direct")) as p:
    ...     scored = (p | beam.Create([(("s", "m"), outcomes)])
    ...               | ScoreOutcomes({"m": "classification"}, ScoringPlan(final=False)))
    ...     _ = (scored.summary | beam.Filter(lambda r: r["metric"] == "accuracy")
    ...          | beam.Map(lambda r: print(r["category"], r["window"], round(r["value"], 4))))
    initial cumulative 0.6667

    References
    ----------
    Grzenda, M., Gomes, H. M., Bifet, A. (2020). Performance measures for evolving
    predictions under delayed labelling classification. International Joint Conference on
    Neural Networks (IJCNN).

    Gama, J., Sebastião, R., Rodrigues, P. P. (2009). Issues in evaluation of stream
    learning algorithms. Proceedings of the 15th ACM SIGKDD International Conference on
    Knowledge Discovery and Data Mining, 329–338.
    """

    def __init__(self, tasks: dict[str, str], plan, classes=None):
        super().__init__(tasks, plan)
        self.classes = classes

    def expand(self, outcome_batches):
        tasks, plan = self.tasks, self.plan

        def partials(element):
            (stream, model), outcomes = element
            for (category, axis, block), partial in block_scores(
                    outcomes, tasks[model], plan.for_stream(stream)).items():
                yield (stream, model, category, axis, block), partial

        def tails(element):
            (stream, model), last = element
            for category, tail in tail_scores(last, tasks[model], plan).items():
                yield (stream, model, category, LABEL_AXIS), tail

        def summarise(element, classes_of):
            key, grouped = element
            rows = curve_rows(key, grouped["blocks"], tasks[key[1]], plan.for_stream(key[0]),
                              *first_of(grouped))
            yield from route_rows(named_rows(rows, classes_of), plan)

        curves = (outcome_batches
                  | "LabelBlockScores" >> beam.FlatMap(partials)
                  | "ByCurve" >> BlocksByCurve(lambda key: tasks[key[1]], set(tasks.values()),
                                              plan))
        last = (outcome_batches
                | "LastOutcomes" >> beam.CombinePerKey(LastOutcomes(max(plan.windows, default=0)))
                | "TailScores" >> beam.FlatMap(tails))
        # The rows are made after a GroupByKey: the classes, a side input, hold nothing back.
        classes_of = beam.pvalue.AsDict(
            (self.classes if self.classes is not None else outcome_batches.pipeline
             | "NoClasses" >> beam.Create([]))
            | "ClassLists" >> beam.CombinePerKey(lambda lists: max(lists, key=len, default=[])))
        return ({**curves, "tails": last}
                | "GroupCurve" >> beam.CoGroupByKey()
                | "Summarise" >> beam.FlatMap(summarise, classes_of)
                .with_outputs(CURVES, main="summary"))
