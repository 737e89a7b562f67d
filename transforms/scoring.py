"""Scoring label outcomes: order-free, so it parallelises however Beam splits the work.

Each outcome carries its label number `n`, so the curve point every `curve_every` labels is a
merge of per-block accumulators: outcomes -> partial scores keyed by (stream, model, category,
block), one per bin -> CombinePerKey -> per (stream, model, category) a running merge over the
sorted blocks, whose last point is the end-of-stream summary. Categories: `initial` and `final`
(one score each), `binned` (one score per bin b = 0..B+1, Λ(T,b)) and, derived from the binned
scores at each point, `intermediate` (Ψα for each α).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import apache_beam as beam
import numpy as np

from metrics import ClassificationScore, RegressionScore
from metrics.binning import NO_CLASS, binned_predictions, prioritised
from transforms.records import FINAL, INITIAL, MeasureKey

CATEGORIES = (INITIAL, FINAL)
BINNED = "binned"
INTERMEDIATE = "intermediate"
CURVES = "curves"


@dataclass(frozen=True)
class ScoringPlan:
    """What to score: the final category or not, B bins (0: no binned measures), the α list."""

    final: bool = True
    bins: int = 0
    alphas: tuple = (1.0, 2.0, 10.0)
    curve_every: int = 1000

    @property
    def categories(self) -> tuple:
        return (*CATEGORIES[:1 + self.final], *((BINNED,) if self.bins else ()))


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


def merge_bins(mine: dict, other: dict) -> dict:
    """Merge {bin: BlockScore} maps (bin None for initial / final)."""
    for b, acc in other.items():
        if b in mine:
            mine[b].merge(acc)
        else:
            mine[b] = copy.deepcopy(acc)
    return mine


def bin_matrix(outcomes, bins: int, classification: bool) -> np.ndarray:
    """Each outcome's prediction for bins 0..B+1, one row per outcome (−1 / NaN: none)."""
    missing = NO_CLASS if classification else math.nan
    out = np.empty((len(outcomes), bins + 2), dtype=np.int64 if classification else np.float64)
    for i, o in enumerate(outcomes):
        if o.bins is not None:  # mapped by the replay
            out[i] = o.bins
        elif o.rep_times is None:  # labelled before any re-prediction: all carry the initial
            out[i, :-1] = missing if o.initial is None else o.initial
            out[i, -1] = missing if o.final is None else o.final
        else:
            out[i] = binned_predictions(o.t_arrival, o.t_label, o.initial, o.rep_times,
                                        o.rep_values, o.final, bins, classification)
    return out


def block_scores(outcomes, task: str, plan: ScoringPlan) -> dict:
    """Partial scores of a batch of outcomes: {(category, block): {bin: BlockScore}}.

    >>> from transforms.records import Outcome
    >>> out = [Outcome(1, "a", 0.0, 1.0, 1, 0, 1, 1, 1),
    ...        Outcome(2, "b", 1.0, 2.0, 0, 1, 0, None, 1)]
    >>> s = block_scores(out, "classification", ScoringPlan(curve_every=10))
    >>> s[("initial", 0)][None].score.n, s[("final", 0)][None].score.accuracy
    (1, 0.5)
    """
    classification = task == "classification"
    missing = NO_CLASS if classification else math.nan
    dtype = np.int64 if classification else np.float64

    def column(values):
        return np.array([missing if v is None else v for v in values], dtype=dtype)

    by_block: dict = {}
    for o in outcomes:
        by_block.setdefault((o.n - 1) // plan.curve_every, []).append(o)
    blocks: dict = {}
    for block, group in by_block.items():
        last_n = max(o.n for o in group)
        last_t = max(o.t_label for o in group)
        y = column(o.y for o in group)
        baselines = (column(o.y_prev for o in group), column(o.y_majority for o in group)) \
            if classification else ()
        predicted = [(INITIAL, None, column(o.initial for o in group))]
        if plan.final:
            predicted.append((FINAL, None, column(o.final for o in group)))
        if plan.bins:
            matrix = bin_matrix(group, plan.bins, classification)
            predicted += [(BINNED, b, matrix[:, b]) for b in range(plan.bins + 2)]
        for category, b, pred in predicted:
            # An untrained model made no prediction: not scored, as in river.
            ok = pred != NO_CLASS if classification else ~np.isnan(pred)
            acc = BlockScore(new_score(task), last_n, last_t)
            acc.score.update_many(y[ok], pred[ok], *(base[ok] for base in baselines))
            blocks.setdefault((category, block), {})[b] = acc
    return blocks


class _MergeBlocks(beam.CombineFn):
    def create_accumulator(self):
        return {}

    def add_input(self, acc, bins):
        # Never mutate the input element: runners may reuse it.
        return merge_bins(acc, bins)

    def merge_accumulators(self, accs):
        merged: dict = {}
        for a in accs:
            merge_bins(merged, a)
        return merged

    def extract_output(self, acc):
        return acc


def curve_rows(key, blocks, plan: ScoringPlan) -> list[dict]:
    """Running merge over sorted blocks -> rows per metric (and bin) per curve point; for the
    binned category also Ψα rows (category `intermediate`) from bins 0..B."""
    stream, model, category = key
    running: dict = {}
    rows = []
    for _, bins in sorted(blocks, key=lambda b: b[0]):
        merge_bins(running, bins)
        point = []
        for b, acc in sorted(running.items(), key=lambda kv: -1 if kv[0] is None else kv[0]):
            for metric, value in acc.score.get().items():
                row = MeasureKey(stream, model, category, metric, bin=b).row(
                    value, acc.score.n, acc.last_t)
                row["labels"] = acc.last_n
                point.append(row)
        if category == BINNED:
            point += _intermediate_rows(stream, model, running, plan)
        rows += point
    return rows


def _intermediate_rows(stream, model, running: dict, plan: ScoringPlan) -> list[dict]:
    values = [running[b].score.get() for b in range(plan.bins + 1)]
    last = running[plan.bins + 1]
    rows = []
    for metric in values[0]:
        per_bin = [v[metric] for v in values]
        for alpha in plan.alphas:
            row = MeasureKey(stream, model, INTERMEDIATE, metric, alpha=alpha).row(
                prioritised(per_bin, alpha), last.score.n, last.last_t)
            row["labels"] = last.last_n
            rows.append(row)
    return rows


def _by_curve(element):
    (stream, model, category, block), bins = element
    return (stream, model, category), (block, bins)


def _in_curves(row: dict, plan: ScoringPlan) -> bool:
    """Curves keep Λ(T,0) and Λ(T,B+1) of the binned measures (with Ψα), not every bin."""
    return row["category"] != BINNED or row["bin"] in (0, plan.bins + 1)


class ScoreOutcomes(beam.PTransform):
    """`((stream, model), [Outcome])` batches -> summary rows (main) and curve rows (`curves`).

    Guarantees: the same rows whatever the bundling or merge order (integer counts and exactly
    rounded sums); an outcome whose prediction is None counts toward no score.
    """

    def __init__(self, tasks: dict[str, str], plan: ScoringPlan):
        super().__init__()
        self.tasks = tasks
        self.plan = plan

    def expand(self, outcome_batches):
        tasks, plan = self.tasks, self.plan

        def partials(element):
            (stream, model), outcomes = element
            for (category, block), bins in block_scores(outcomes, tasks[model], plan).items():
                yield (stream, model, category, block), bins

        def summarise(element):
            key, blocks = element
            rows = curve_rows(key, blocks, plan)
            for row in rows:
                if _in_curves(row, plan):
                    yield beam.pvalue.TaggedOutput(CURVES, row)
            last = max((r["labels"] for r in rows), default=None)
            for row in rows:
                if row["labels"] == last:
                    yield {k: v for k, v in row.items() if k != "labels"}

        return (outcome_batches
                | "BlockScores" >> beam.FlatMap(partials)
                | "MergeBlocks" >> beam.CombinePerKey(_MergeBlocks())
                | "ByCurve" >> beam.Map(_by_curve)
                | "GroupCurve" >> beam.GroupByKey()
                | "Summarise" >> beam.FlatMap(summarise).with_outputs(CURVES, main="summary"))
