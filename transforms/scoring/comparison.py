"""Model comparisons: every pair of models on a stream, on the labels both predicted, in label
order, on A's label axis (A's label numbers: a model that set labels aside numbers them
otherwise than B).

    outcomes -> per (stream, label time bucket) each model's losses of each prediction kind
             -> GroupByKey -> per pair and kind, joined by (id, label time), keyed by A's block
    outcomes -> each model's label numbers per block ⤵
             -> GroupByKey -> per pair: blocks
    blocks -> merged per block, fading rows folded in label order (`BlocksByCurve`)
          -> the scoring pass (cumulative, windows, fading) -> rows
    outcomes -> each model's last 2·max(w) outcomes -> per pair the windows at A's last label ⤴

The per-stream replay has every model's outcomes for the same labels at each drain, so it
joins them right there and scores the pairs' blocks in label order (`PairBlocks`,
`transforms.scoring.in_stream`): no GroupByKey.

Rows: category `comparison`, model `A vs B`, bin 0 for the initial predictions and B+1 for the
final ones (the binned measures' convention), metrics q_statistic, mcnemar, mcnemar_p,
mcnemar_exact_p, mcnemar_significant, diebold_mariano, diebold_mariano_p
(`metrics.comparison.PairScore`). A label counts when both models made a
prediction for it. Comparisons use the label axis: cumulative, windows of the last w labels,
fading factors.
"""

from __future__ import annotations

from dataclasses import dataclass

import apache_beam as beam
import numpy as np
import pandas as pd

from metrics.blocks import BlockScore, FadingCurve, LabelBlock, new_score
from metrics.comparison import PairScore
from metrics.windows import block_ends
from transforms.replay.protocols import comparable_pairs
from transforms.scoring.columns import (concat_rows, group_rows, prediction_losses, split_by,
                                        take_rows)
from transforms.scoring.curves import curve_rows
from transforms.scoring.outcomes import (BlocksByCurve, LastOutcomes, OutcomeTransform, first_of,
                                         route_rows)
from transforms.scoring.plan import LABEL_AXIS, ScoringPlan
from transforms.vocabulary import COMPARISON, CURVES, FINAL, INITIAL, pair_name


def _loss_columns(outcomes, task: str, kind: str) -> dict:
    """`prediction_losses` (squared error for regressors), and `wrong`: the 0-1 loss of
    classifiers, zeros for regressors (no McNemar counts)."""
    cols = prediction_losses(outcomes, task, kind, squared=True)
    cols["wrong"] = cols["loss"] if task == "classification" else np.zeros(len(cols["loss"]))
    return cols


def _joined_losses(a: dict, b: dict) -> dict:
    """A's and B's loss columns joined by label — its instance's id and its time, the same for
    every model (an id is used again after its label, and not every model numbers the labels
    alike) —, in A's row order: A's label number n, label time, each loss and whether only A
    (only B) was wrong.

    >>> a = {"ids": np.array(["x", "y", "x"], dtype=object), "n": np.array([1, 2, 3]),
    ...      "t_label": np.array([1.0, 2.0, 3.0]), "loss": np.array([0.0, 1.0, 1.0]),
    ...      "wrong": np.array([0.0, 1.0, 1.0])}
    >>> b = {**a, "ids": a["ids"][[0, 2]], "n": np.array([1, 2]), "t_label": a["t_label"][[0, 2]],
    ...      "loss": np.array([1.0, 1.0]), "wrong": np.array([1.0, 1.0])}
    >>> joined = _joined_losses(a, b)  # x's second label is B's second
    >>> joined["n"].tolist(), joined["b_only"].tolist()
    ([1, 3], [True, False])
    """
    def labels(cols):
        return pd.MultiIndex.from_arrays([pd.Index(cols["ids"], dtype=object), cols["t_label"]])

    b_labels = labels(b)
    b_rows = np.flatnonzero(~b_labels.duplicated(keep="last"))  # (a label twice: its last)
    found = b_labels[b_rows].get_indexer(labels(a))
    ia = np.flatnonzero(found >= 0)
    ib = b_rows[found[ia]]
    return {"n": a["n"][ia], "t_label": a["t_label"][ia], "a": a["loss"][ia], "b": b["loss"][ib],
            "a_only": (a["wrong"][ia] > 0) & (b["wrong"][ib] == 0),
            "b_only": (b["wrong"][ib] > 0) & (a["wrong"][ia] == 0)}


def _fading_rows(joined: dict, labels: np.ndarray) -> np.ndarray:
    """The fading fold's rows of a block: one per label number of A's in it (`labels`), so a
    label not both predicted ages the others, adding nothing — a missing prediction's rule in
    every faded measure, and the axis the windows count.

    >>> joined = {"n": np.array([3]), "a": np.array([1.0]), "b": np.array([0.0]),
    ...           "a_only": np.array([True]), "b_only": np.array([False])}
    >>> _fading_rows(joined, np.array([2, 3])).tolist()  # n, both, a, b, a_only, b_only
    [[2.0, 0.0, 0.0, 0.0, 0.0, 0.0], [3.0, 1.0, 1.0, 0.0, 1.0, 0.0]]
    """
    labels = np.unique(labels)
    at = np.searchsorted(labels, joined["n"])
    columns = {}
    for name in PairScore.FADED_COLUMNS:
        columns[name] = np.zeros(len(labels))
        columns[name][at] = 1.0 if name == "both" else joined[name]
    return FadingCurve.rows(COMPARISON, labels, columns)


def _axis(outcomes) -> dict:
    """A model's label axis: its label numbers and their times, for every outcome (predicted
    or not)."""
    return {"n": np.array([o.n for o in outcomes], dtype=np.int64),
            "t_label": np.array([o.t_label for o in outcomes], dtype=np.float64)}


def _pair_block(joined: dict, axis: dict | None = None,
                fading: bool = False) -> LabelBlock | None:
    """One block's `PairScore` of joined losses; with `axis` (A's labels in the block, joined
    or not, `_axis`) it ends at A's last label, as A's own curve does, and with `fading` it
    carries its rows for the fading fold. None for no labels at all."""
    over = joined if axis is None else axis
    if not len(over["n"]):
        return None
    score = new_score(COMPARISON)
    score.update_many(joined["a"], joined["b"], joined["a_only"], joined["b_only"])
    acc = BlockScore(score, int(over["n"].max()), float(over["t_label"].max()))
    return LabelBlock({None: acc}, (axis["n"], _fading_rows(joined, axis["n"])) if fading
                      else None)


@dataclass(frozen=True)
class PairBlocks:
    """The comparison blocks of labels that every model of a stream has seen: given each model's
    outcomes for the same labels (a replay that drains all models of a stream together), every
    pair's joined losses cut into blocks -> `((stream, pair, kind, axis, block end), LabelBlock)`.
    No label's losses wait for another model's: comparisons in constant memory.

    Example
    -------

    >>> from transforms.records import Outcome
    >>> def outcomes(predictions):  # true class 1 throughout
    ...     return [Outcome(n, n, 0.0, n, 1, 1, 1, p, None) for n, p in enumerate(predictions, 1)]
    >>> pairs = PairBlocks({"a": "classification", "b": "classification"},
    ...                    ScoringPlan(final=False))
    >>> blocks = dict(pairs("s", {"a": outcomes([1, 1, 0]), "b": outcomes([0, 1, 0])}))
    >>> [(key[1], block.scores[None].score.get()["mcnemar"]) for key, block in blocks.items()]
    [('a vs b', -1.0)]

    """

    tasks: dict
    plan: ScoringPlan

    def pairs(self, models) -> list[tuple[str, str]]:
        return comparable_pairs(models, self.tasks)

    @property
    def keep(self) -> int:
        """The last outcomes each model keeps for the windows at the stream's last label: B's
        must hold A's last w labels, which reach further back where A set labels aside."""
        return 2 * max(self.plan.windows, default=0)

    @property
    def kinds(self) -> tuple:
        return (INITIAL, FINAL) if self.plan.final else (INITIAL,)

    def __call__(self, stream: str, outcomes: dict):
        axes = {model: _axis(outs) for model, outs in outcomes.items()}
        for kind in self.kinds:
            cols = {m: _loss_columns(o, self.tasks[m], kind) for m, o in outcomes.items()}
            for a, b in self.pairs(cols):
                yield from self.blocks(stream, a, b, kind, _joined_losses(cols[a], cols[b]),
                                       axes[a])

    def tails(self, stream: str, lasts):
        """The windows at the stream's last label, each pair over A's last w labels, from each
        model's last outcomes (`lasts`: (model, outcomes) pairs) -> `((stream, pair, kind,
        axis), {w: {None: PairScore}})`."""
        lasts = dict(lasts)
        totals = {model: max((o.n for o in outs), default=0) for model, outs in lasts.items()}
        for kind in self.kinds:
            cols = {model: _loss_columns(outcomes, self.tasks[model], kind)
                    for model, outcomes in lasts.items()}
            for a, b in self.pairs(cols):
                joined, total = _joined_losses(cols[a], cols[b]), totals[a]
                tail = {}
                for w in self.plan.windows:
                    block = _pair_block(take_rows(joined, np.flatnonzero(joined["n"] > total - w)))
                    whole = self._holds(lasts[b], [o for o in lasts[a] if o.n > total - w])
                    tail[w] = {None: new_score(COMPARISON) if block is None or not whole
                               else block.scores[None].score}
                yield (stream, pair_name(a, b), kind, LABEL_AXIS), tail

    def _holds(self, kept: list, window: list) -> bool:
        """Whether B's `kept` outcomes hold each of A's `window` labels B has: they do unless B
        kept `keep` and left out one as old as the oldest it kept (the window is then not
        known: no number)."""
        if len(kept) < self.keep:
            return True
        oldest = min(o.t_label for o in kept)
        labels = {(o.id, o.t_label) for o in kept}
        return all(o.t_label > oldest or (o.id, o.t_label) in labels for o in window)

    def blocks(self, stream: str, a: str, b: str, kind: str, joined: dict, axis: dict):
        """The blocks of joined losses; `axis`: every label of A's they cover (`_axis`), each
        block's end, and the fading fold's place for each label, both predicted or not."""
        plan = self.plan.for_stream(stream)
        joined_ends = block_ends(joined["n"], plan.curve_every, plan.windows)
        for end, rows in group_rows(block_ends(axis["n"], plan.curve_every, plan.windows)):
            block = _pair_block(take_rows(joined, np.flatnonzero(joined_ends == end)),
                                take_rows(axis, rows), bool(plan.fadings))
            yield (stream, pair_name(a, b), kind, LABEL_AXIS, int(end)), block


def as_comparison(rows, plan: ScoringPlan):
    """A pair's (is_last, row) pairs as comparison rows: category `comparison`, bin 0 for the
    initial predictions and B+1 for the final ones.

    Example
    -------

    >>> from transforms.scoring.plan import ScoringPlan
    >>> rows = [(True, {"category": "initial"}), (True, {"category": "final"})]
    >>> [(r["category"], r["bin"]) for _, r in as_comparison(rows, ScoringPlan(bins=10))]
    [('comparison', 0), ('comparison', 11)]

    """
    for last, row in rows:
        row["bin"] = 0 if row["category"] == INITIAL else plan.bins + 1
        row["category"] = COMPARISON
        yield last, row


class CompareModels(OutcomeTransform):
    """`((stream, model), [Outcome])` batches -> comparison summary rows (main) and curve rows
    (`curves`) for every pair of models of the same task, in configuration order: each model's
    losses joined by id per block after a GroupByKey, which holds every label's losses until the
    slowest model's have come (the per-stream replay compares as it drains instead:
    `transforms.scoring.in_stream`).

    Parameters
    ----------
    tasks
        Each model's task (`classification` or `regression`), by model name.
    plan
        What to score (`ScoringPlan`).

    Example
    -------

    >>> import apache_beam as beam
    >>> from runners import make_runner
    >>> from transforms.records import Outcome
    >>> from transforms.scoring.plan import ScoringPlan
    >>> def outcomes(predictions):  # true class 1 throughout
    ...     return [Outcome(n, n, 0.0, n, 1, 1, 1, p, p) for n, p in enumerate(predictions, 1)]
    >>> batches = [(("s", "a"), outcomes([1, 1, 0, 1])), (("s", "b"), outcomes([0, 1, 0, 0]))]
    >>> with beam.Pipeline(runner=make_runner("direct")) as p:
    ...     compared = (p | beam.Create(batches)
    ...                 | CompareModels({"a": "classification", "b": "classification"},
    ...                                 ScoringPlan(final=False)))
    ...     _ = (compared.summary | beam.Filter(lambda r: r["metric"] == "mcnemar")
    ...          | beam.Map(lambda r: print(r["model"], r["value"])))
    a vs b -2.0

    A is right where B is wrong twice (n10 = 2, n01 = 0): M = −(0 − 2)²/2 = −2, A is better.

    References
    ----------
    Gama, J., Sebastião, R., Rodrigues, P. P. (2009). Issues in evaluation of stream
    learning algorithms. Proceedings of the 15th ACM SIGKDD International Conference on
    Knowledge Discovery and Data Mining, 329–338.
    """

    # The buckets the losses are joined in: each holds its share of a stream's labels (few:
    # a batch of consecutive labels is cut into one part per bucket).
    BUCKETS = 4

    def expand(self, outcome_batches):
        tasks, plan, buckets = self.tasks, self.plan, self.BUCKETS
        panes_of = PairBlocks(tasks, plan)

        def model_losses(element):
            (stream, model), outcomes = element
            axis = _axis(outcomes)
            every = plan.for_stream(stream).curve_every
            for end, rows in group_rows(block_ends(axis["n"], every, plan.windows)):
                yield (stream, int(end)), ("labels", model, take_rows(axis, rows))
            parts: dict = {}
            for kind in panes_of.kinds:
                cols = _loss_columns(outcomes, tasks[model], kind)
                # By label time, which every model's outcome of a label has.
                bucket_of = pd.util.hash_array(cols["t_label"]) % np.uint64(buckets)
                for bucket, part in split_by(cols, bucket_of.astype(np.int64)):
                    parts.setdefault(int(bucket), {})[kind] = part
            for bucket, by_kind in parts.items():
                yield (stream, bucket), ("losses", model, by_kind)

        def joined(element):
            (stream, _), parts = element
            for kind in panes_of.kinds:
                by_model: dict = {}
                for _, model, by_kind in parts:
                    if kind in by_kind:
                        by_model.setdefault(model, []).append(by_kind[kind])
                for a, b in panes_of.pairs(by_model):
                    pair = _joined_losses(*(concat_rows(by_model[m]) for m in (a, b)))
                    ends = block_ends(pair["n"], plan.for_stream(stream).curve_every,
                                      plan.windows)
                    for end, rows in group_rows(ends):
                        yield (stream, int(end)), ("pair", (a, b, kind), take_rows(pair, rows))

        def pairs(element):
            (stream, _), parts = element
            labels: dict = {}
            pair_parts: dict = {}
            for tag, who, part in parts:
                (labels if tag == "labels" else pair_parts).setdefault(who, []).append(part)
            # Every pair whose A has labels in the block: B may number none of them here.
            for a, b in (pair for pair in panes_of.pairs(tasks) if pair[0] in labels):
                axis = concat_rows(labels[a])
                for kind in panes_of.kinds:
                    none = _loss_columns([], tasks[a], kind)  # (no label both predicted)
                    pair = concat_rows(pair_parts.get((a, b, kind), [])) or \
                        _joined_losses(none, none)
                    yield from panes_of.blocks(
                        stream, a, b, kind, take_rows(pair, np.argsort(pair["n"], kind="stable")),
                        axis)

        def summarise(element):
            key, grouped = element
            yield from route_rows(as_comparison(curve_rows(
                key, grouped["blocks"], COMPARISON, plan.for_stream(key[0]),
                *first_of(grouped)), plan), plan)

        keyed = outcome_batches | "ModelLosses" >> beam.FlatMap(model_losses)
        losses, labels = keyed | "LossesOrLabels" >> beam.Partition(
            lambda element, _: int(element[1][0] == "labels"), 2)
        pair_blocks = (((losses | "ByLabelTime" >> beam.GroupByKey()
                         | "Joined" >> beam.FlatMap(joined)), labels)
                       | "PairsAndLabels" >> beam.Flatten()
                       | "ByBlock" >> beam.GroupByKey()
                       | "Pairs" >> beam.FlatMap(pairs))
        last = (outcome_batches
                | "LastOutcomes" >> beam.CombinePerKey(LastOutcomes(panes_of.keep))
                | "ByStream" >> beam.Map(lambda e: (e[0][0], (e[0][1], e[1])))
                | "LastPerStream" >> beam.GroupByKey()
                | "TailScores" >> beam.FlatMap(lambda e: panes_of.tails(*e)))
        curves = pair_blocks | "ByCurve" >> BlocksByCurve(lambda key: COMPARISON, [COMPARISON],
                                                        plan)
        return ({**curves, "tails": last}
                | "ByPair" >> beam.CoGroupByKey()
                | "Summarise" >> beam.FlatMap(summarise).with_outputs(CURVES, main="summary"))
