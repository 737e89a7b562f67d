"""Scoring label outcomes: order-free, so it parallelises however Beam splits the work.

Each outcome carries its label number `n`, so the curve point every `curve_every` labels is a
merge of per-block accumulators: outcomes -> partial scores keyed by (stream, model, category,
block) -> CombinePerKey -> per (stream, model, category) a running merge over the sorted blocks,
whose last point is the end-of-stream summary.
"""

from __future__ import annotations

import copy

import apache_beam as beam

from metrics import ClassificationScore, RegressionScore
from transforms.records import FINAL, INITIAL, MeasureKey

CATEGORIES = (INITIAL, FINAL)
CURVES = "curves"


def new_score(task: str):
    return ClassificationScore() if task == "classification" else RegressionScore()


class BlockScore:
    """A score over one block of labels, with the last label number and time it covers."""

    __slots__ = ("score", "last_n", "last_t")

    def __init__(self, score, last_n: int = 0, last_t: float = float("-inf")):
        self.score = score
        self.last_n = last_n
        self.last_t = last_t

    def merge(self, other: BlockScore) -> BlockScore:
        self.score.merge(other.score)
        self.last_n = max(self.last_n, other.last_n)
        self.last_t = max(self.last_t, other.last_t)
        return self


def block_scores(outcomes, task: str, curve_every: int, categories=CATEGORIES) -> dict:
    """Partial scores of a batch of outcomes, by (category, block).

    >>> from transforms.records import Outcome
    >>> out = [Outcome(1, "a", 0.0, 1.0, 1, 0, 1, 1, 1),
    ...        Outcome(2, "b", 1.0, 2.0, 0, 1, 0, None, 1)]
    >>> s = block_scores(out, "classification", curve_every=10)
    >>> s[("initial", 0)].score.n, s[("final", 0)].score.accuracy
    (1, 0.5)
    """
    blocks: dict = {}
    classification = task == "classification"
    with_final = FINAL in categories
    for o in outcomes:
        block = (o.n - 1) // curve_every
        for category, pred in ((INITIAL, o.initial), (FINAL, o.final))[:1 + with_final]:
            acc = blocks.get((category, block))
            if acc is None:
                acc = blocks[(category, block)] = BlockScore(new_score(task))
            if o.n > acc.last_n:
                acc.last_n = o.n
            if o.t_label > acc.last_t:
                acc.last_t = o.t_label
            if pred is None:  # an untrained model made no prediction: not scored, as in river
                continue
            if classification:
                acc.score.update(o.y, pred, o.y_prev, o.y_majority)
            else:
                acc.score.update(o.y, pred)
    return blocks


class _MergeBlocks(beam.CombineFn):
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


def curve_rows(key, blocks) -> list[dict]:
    """Running merge over sorted blocks -> one row per metric per curve point."""
    stream, model, category = key
    running = None
    rows = []
    for _, acc in sorted(blocks, key=lambda b: b[0]):
        running = copy.deepcopy(acc) if running is None else running.merge(acc)
        for metric, value in running.score.get().items():
            row = MeasureKey(stream, model, category, metric).row(value, running.score.n,
                                                                  running.last_t)
            row["labels"] = running.last_n
            rows.append(row)
    return rows


def _by_curve(element):
    (stream, model, category, block), acc = element
    return (stream, model, category), (block, acc)


class ScoreOutcomes(beam.PTransform):
    """`((stream, model), [Outcome])` batches -> summary rows (main) and curve rows (`curves`).

    Guarantees: the same rows whatever the bundling or merge order (integer counts and exactly
    rounded sums); an outcome whose prediction is None counts toward no score.
    """

    def __init__(self, tasks: dict[str, str], curve_every: int = 1000,
                 categories: tuple = CATEGORIES):
        super().__init__()
        self.tasks = tasks
        self.curve_every = curve_every
        self.categories = categories

    def expand(self, outcome_batches):
        tasks, every, categories = self.tasks, self.curve_every, self.categories

        def partials(element):
            (stream, model), outcomes = element
            for (category, block), acc in block_scores(outcomes, tasks[model], every,
                                                       categories).items():
                yield (stream, model, category, block), acc

        def summarise(element):
            key, blocks = element
            rows = curve_rows(key, blocks)
            for row in rows:
                yield beam.pvalue.TaggedOutput(CURVES, row)
            last = rows[-1]["labels"] if rows else None
            for row in rows:
                if row["labels"] == last:
                    yield {k: v for k, v in row.items() if k != "labels"}

        return (outcome_batches
                | "BlockScores" >> beam.FlatMap(partials)
                | "MergeBlocks" >> beam.CombinePerKey(_MergeBlocks())
                | "ByCurve" >> beam.Map(_by_curve)
                | "GroupCurve" >> beam.GroupByKey()
                | "Summarise" >> beam.FlatMap(summarise).with_outputs(CURVES, main="summary"))
