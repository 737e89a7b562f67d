"""Summary and curve rows from merged label blocks: each curve point of every view
(`CurvePoints`), a key's curves fed in label order (`InOrderCurves`, `InOrderScores`), and
`score_locally` for one key without Beam. Plain Python."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import numpy as np

from metrics import CONFUSION, NOT_PRIORITISED, ClassificationScore
from metrics.binning import prioritised
from metrics.bootstrap import percentile_interval
from metrics.classification import prioritised_measures
from metrics.probabilistic import (AUC_BOOTSTRAP_METRICS, CURVE_METRICS,
                                   PER_CLASS_PROBABILITY_METRICS, PROBABILITY_METRICS,
                                   RELIABILITY_METRICS)
from metrics.blocks import FadingCurve, LabelBlock, difference, merge_bins, snapshot_at
from transforms.records import MeasureKey, stream_and_segment
from transforms.scoring.columns import block_scores, tail_scores
from transforms.scoring.plan import LABEL_AXIS, ScoringPlan
from transforms.vocabulary import (BINNED, COMPARISON, CUMULATIVE, FINAL, INITIAL, INTERMEDIATE,
                                   window_of_fading, window_of_sliding)


# The classes whose per-class rows and confusion cells the curves keep, by class index: with
# k classes those are ~7k rows and k² cells at every curve point of every view (300 classes,
# 2 000 labels: 5.6 M curve rows, 4.8 GB). The summary keeps every class.
CURVE_CLASSES = 20


def keep_last(outcomes: list, size: int) -> list:
    """The `size` outcomes with the highest label numbers, in label order (`outcomes` is
    reordered and cut in place).

    >>> from transforms.records import Outcome
    >>> [o.n for o in keep_last([Outcome(n, n, 0.0, n, 1, 1, 1, 1, 1) for n in (3, 1, 2)], 2)]
    [2, 3]
    """
    if len(outcomes) > size:
        outcomes.sort(key=lambda o: o.n)  # nearly sorted: linear
        del outcomes[:len(outcomes) - size]
    return outcomes


_PROBABILITY_ROWS = frozenset((*PROBABILITY_METRICS, *AUC_BOOTSTRAP_METRICS))


def _proba_counts(scores: dict) -> dict:
    """{bin: labels whose prediction had class probabilities} of scores that have any."""
    return {b: s.proba.n for b, s in scores.items() if getattr(s, "proba", None) is not None}


def _score_rows(stream, model, category, view, scores: dict, labels: int, t, plan,
                counts: dict | None = None, last: bool = True,
                proba_counts: dict | None = None) -> list[dict]:
    """Rows for one view at one curve point: each bin's metrics (a classifier's per-class
    measures too, and for initial and final predictions, cumulative, the confusion matrix's
    cells; classes as indices, `with_class_names` names them) and, for the binned category, Ψα
    for each α over bins 0..B (Ψ rows carry bin B's n: the labels with a prediction standing
    before their label came; it is every earlier bin's at least). `counts` and `proba_counts`
    override each bin's n and its probability measures' n (a faded score's own are weights,
    not counts). A point before the `last` one has only the rows that curves keep
    (`in_curves`): no bin between 0 and B+1, no ROC curve's points, no per-class row or
    confusion cell of a class beyond the first `CURVE_CLASSES`; the last point's such rows
    have no `labels` (None): they are the summary's alone.

    >>> from transforms.records import Outcome
    >>> from transforms.scoring.columns import block_scores
    >>> plan = ScoringPlan(bins=10)
    >>> block = block_scores([Outcome(n, n, 0.0, n, 1, 1, 1, 1, 1) for n in (1, 2)],
    ...                      "classification", plan)[("binned", "n", 1000)]
    >>> scores = {b: acc.score for b, acc in block.scores.items()}
    >>> sorted({r["bin"] for r in _score_rows("s", "m", "binned", "cumulative", scores, 2,
    ...                                        2.0, plan, last=False)}, key=str)
    [0, 11, None]
    """
    counts = counts or {b: s.n for b, s in scores.items()}
    # A probability measure's n: the labels whose prediction had probabilities.
    proba_counts = _proba_counts(scores) if proba_counts is None else proba_counts
    rows = []

    def add(metric, value, b, label_class=None, predicted=None, n=None, curves=True):
        row = MeasureKey(stream, model, category, metric, bin=b, window=view,
                         label_class=label_class, predicted=predicted).row(
            value, counts[b] if n is None else n, t)
        row["labels"] = labels if curves else None
        rows.append(row)

    bins = plan.bins_of(category)
    if not last and category == BINNED:
        bins = [b for b in bins if b in (0, plan.bins + 1)]
    statistics = {}  # each bin's, once (Ψα reads them again)
    for b in bins:
        if b not in scores:
            continue
        score = scores[b]
        proba_n = proba_counts.get(b)
        statistics[b] = score.get()
        for metric, value in statistics[b].items():
            add(metric, value, b, n=proba_n if metric in _PROBABILITY_ROWS else None)
        if not hasattr(score, "per_class"):  # a regression score
            continue
        first = None if last else CURVE_CLASSES
        for (metric, c), value in score.per_class(first).items():
            add(metric, value, b, str(c), curves=c < CURVE_CLASSES,
                n=proba_n if metric in PER_CLASS_PROBABILITY_METRICS else None)
        if category in (INITIAL, FINAL) and view == CUMULATIVE:
            for (i, j), cell in score.confusion_matrix(first).items():
                add(CONFUSION, cell, b, str(i), str(j),
                    curves=i < CURVE_CLASSES and j < CURVE_CLASSES)
            # The reliability diagram: `bin` is the confidence bin, n its labels.
            for m, (confidence, accuracy, count) in (score.proba.reliability().items()
                                                     if score.proba is not None else ()):
                add(RELIABILITY_METRICS[0], confidence, m, n=count)
                add(RELIABILITY_METRICS[1], accuracy, m, n=count)
            # ROC and precision-recall curves (--auc): `bin` is the point's number.
            for c, points in (score.proba.curves().items()
                              if score.proba is not None and last else ()):
                for k, values in enumerate(points):
                    for metric, value in zip(CURVE_METRICS, values):
                        add(metric, value, k, str(c), n=counts[b] if proba_n is None
                            else proba_n)
    if category == BINNED and all(b in scores for b in plan.bins_of(category)):
        prioritised_bins = range(plan.bins + 1)
        # Every bin's measures at once where they are counts alone (a point before the last
        # asks B + 1 bins for them, and shows only two).
        measures = None if all(b in statistics for b in prioritised_bins) or \
            not isinstance(scores[0], ClassificationScore) else \
            prioritised_measures([scores[b] for b in prioritised_bins])
        values = None if measures is not None else [
            statistics[b] if b in statistics else scores[b].get() for b in prioritised_bins]
        for metric in (measures or values[0]):
            if metric in NOT_PRIORITISED:
                continue
            # (a backfill's log may give some bins' re-predictions no probabilities)
            per_bin = measures[metric] if measures is not None else \
                [v.get(metric, np.nan) for v in values]
            n = proba_counts.get(plan.bins, 0) if metric in _PROBABILITY_ROWS and \
                proba_counts else counts[plan.bins]
            for alpha in plan.alphas:
                row = MeasureKey(stream, model, INTERMEDIATE, metric, alpha=alpha,
                                 window=view).row(prioritised(per_bin, alpha), n, t)
                row["labels"] = labels
                rows.append(row)
        rows += _prioritised_intervals(stream, model, view, [
            scores[b] for b in range(plan.bins + 1)], labels, t, plan, counts[plan.bins])
    return rows


def _prioritised_intervals(stream, model, view, scores: list, labels: int, t, plan,
                           n: int) -> list[dict]:
    """Ψα's bootstrap intervals: Ψα of each replicate's per-bin values, then their percentile
    interval (`metrics.bootstrap`); none without bootstrap replicates."""
    replicates = [s.replicates() if hasattr(s, "replicates") else {} for s in scores]
    rows = []
    for statistic in replicates[0]:
        if len({len(r.get(statistic, ())) for r in replicates}) != 1:
            continue  # a bin without labels has no replicates: no Ψα of them
        per_bin = np.array([r[statistic] for r in replicates])  # bins × replicates
        for alpha in plan.alphas:
            values = [prioritised(per_bin[:, i].tolist(), alpha) for i in range(per_bin.shape[1])]
            for end, value in zip(("low", "high"), percentile_interval(values)):
                row = MeasureKey(stream, model, INTERMEDIATE, f"{statistic}_bootstrap_{end}",
                                 alpha=alpha, window=view).row(value, n, t)
                row["labels"] = labels
                rows.append(row)
    return rows


class CurvePoints:
    """One (stream, model, category, axis)'s curve, fed its merged blocks in block order: `add`
    returns the rows of the curve points that the block shows are not the stream's last,
    `finish` the rest — (is_last, row) pairs; is_last marks the end-of-stream summary rows, the
    last label's. Holds the running cumulative score, the snapshots the windows' differences
    still need and one block's point (it is the last one until a later block comes), so a curve
    can be made as its labels come, in constant memory.

    On the label axis the windows at the last label come from `finish`'s `tail` ({w: {bin:
    score}}, `tail_scores`), and the fading factors from `fading` (`FadingCurve`'s state; at a
    point the fold has passed, or at the end).

    Example
    -------

    >>> from transforms.records import Outcome
    >>> from transforms.scoring.columns import block_scores
    >>> from transforms.scoring.plan import ScoringPlan
    >>> plan = ScoringPlan(final=False, curve_every=2)
    >>> blocks = block_scores([Outcome(n, n, 0.0, n, 1, 1, 1, 1, None) for n in (1, 2, 3)],
    ...                       "classification", plan)
    >>> curve = CurvePoints(("s", "m", "initial", "n"), "classification", plan)
    >>> rows = [r for (c, axis, b), block in sorted(blocks.items())
    ...         for r in curve.add(b, block)] + curve.finish({})
    >>> sorted({(last, r["labels"]) for last, r in rows})
    [(False, 2), (True, 3)]

    """

    def __init__(self, key, task: str, plan: ScoringPlan):
        self.key, self.task, self.plan = key, task, plan
        self.running: dict = {}
        self.history: list = []  # (block key, cumulative snapshot) for the windows' differences
        self.held = None  # the latest block key: its point is emitted once it is known not last
        if key[3] != LABEL_AXIS:
            _, size, period = next(tw for tw in plan.time_windows if tw[0] == key[3])
            self.span, self.period = round(size / period), period
            self.ends: set = set()  # window ends j not yet emitted

    def add(self, block_key: int, block: LabelBlock, fading: dict | None = None) -> list:
        if self.key[3] == LABEL_AXIS:
            rows = [] if self.held is None else self._label_point(self.held, False, None, fading)
            merge_bins(self.running, block.scores)
            if self.plan.windows:
                keep = max(self.plan.windows)
                self.history.append((block_key, copy.deepcopy(self.running)))
                while len(self.history) > 1 and self.history[1][0] <= block_key - keep:
                    self.history.pop(0)
        else:  # windows [(j − span + 1)·P, (j + 1)·P) ending before this block: complete
            rows = [r for j in sorted(j for j in self.ends if j < block_key)
                    for r in self._time_window(j, False)]
            merge_bins(self.running, block.scores)
            self.history.append((block_key, copy.deepcopy(self.running)))
            self.ends.update(range(block_key, block_key + self.span))
        self.held = block_key
        return rows

    def finish(self, tail: dict | None = None, fading: dict | None = None) -> list:
        if self.held is None:
            return []
        if self.key[3] == LABEL_AXIS:
            return self._label_point(self.held, True, tail, fading)
        return [r for j in sorted(j for j in self.ends if j <= self.held)
                for r in self._time_window(j, j == self.held)]

    def _emit(self, view, scores, labels, t, last, counted=None) -> list:
        """Rows of one view; `counted`: the scores whose n they report (a faded view's)."""
        stream, model, category, _ = self.key
        if self.task == "classification":  # each view reports its own Majority baseline
            j = self.plan.views.index(view)
            scores = {b: s.for_view(j) for b, s in scores.items()}
        counts, proba_counts = (None, None) if counted is None else (
            {b: s.n for b, s in counted.items()}, _proba_counts(counted))
        return [(last, r) for r in _score_rows(stream, model, category, view, scores, labels, t,
                                               self.plan, counts, last, proba_counts)]

    def _label_point(self, end: int, last: bool, tail, fading) -> list:
        plan, running = self.plan, self.running
        if end % plan.curve_every and not last or not running or \
                self.task == COMPARISON and not any(acc.score.n for acc in running.values()):
            return []  # a window's start, not a curve point; or nothing scored (compared) yet
        # The last block ends at the next boundary; its labels end at the last label.
        labels = max(acc.last_n for acc in running.values()) if last else end
        t = max(acc.last_t for acc in running.values())
        cumulative = {b: acc.score for b, acc in running.items()}
        rows = self._emit(CUMULATIVE, cumulative, labels, t, last)
        for w in plan.windows:
            rows += self._emit(window_of_sliding(w), tail[w] if last else
                               difference(running, snapshot_at(self.history, end - w)),
                               labels, t, last)
        for alpha, f in (FadingCurve.at(fading, end).items() if plan.fadings else ()):
            scores = dict(zip(plan.bins_of(self.key[2]), f.scores()))
            proba = FadingCurve.proba_at(fading, end)[alpha].scores()
            if len(proba) == len(scores):  # each bin's probabilities, faded
                for score, faded in zip(scores.values(), proba):
                    score.proba = faded
            rows += self._emit(window_of_fading(alpha), scores, labels, t, last, cumulative)
        return rows

    def _time_window(self, j: int, last: bool) -> list:
        self.ends.discard(j)
        history = self.history
        while len(history) > 1 and history[1][0] <= j - self.span:
            history.pop(0)
        window = difference(snapshot_at(history, j), snapshot_at(history, j - self.span))
        labels = max(acc.last_n for acc in self.running.values())
        return self._emit(self.key[3], window, labels, (j + 1) * self.period, last)


def curve_rows(key, blocks, task: str, plan: ScoringPlan, tail: dict | None = None,
               fading: dict | None = None) -> Iterator[tuple[bool, dict]]:
    """A (stream, model, category, axis)'s blocks, in any order -> (is_last, row) for every
    curve point of every view on that axis (`CurvePoints`).

    Example
    -------

    >>> from transforms.records import Outcome
    >>> from transforms.scoring.columns import block_scores
    >>> from transforms.scoring.plan import ScoringPlan
    >>> plan = ScoringPlan(final=False, curve_every=2)
    >>> blocks = block_scores([Outcome(n, n, 0.0, n, 1, 1, 1, p, None)
    ...                        for n, p in [(1, 1), (2, 0), (3, 1)]], "classification", plan)
    >>> curve = [(b, block) for (c, axis, b), block in blocks.items()]
    >>> [(last, r["labels"], r["value"]) for last, r in curve_rows(
    ...     ("s", "m", "initial", "n"), curve, "classification", plan) if r["metric"] == "accuracy"]
    [(False, 2, 0.5), (True, 3, 0.6666666666666666)]

    """
    curve = CurvePoints(key, task, plan)
    for block_key, block in sorted(blocks, key=lambda p: p[0]):
        yield from curve.add(block_key, block, fading)
    yield from curve.finish(tail, fading)


class InOrderCurves:
    """The curves of one key (a (stream, model), or a pair of models) from its partial blocks
    fed in label order ({(category, axis, block): LabelBlock}, as `block_scores` makes them): each
    curve point's rows as soon as later labels pass it (`CurvePoints`), the fading factors
    folded as the rows come (`FadingCurve`). Memory: the blocks not yet complete, one block per
    curve and the fading state — not the stream's blocks.

    A block is complete when a later block of its curve has begun (labels come in label order,
    and so in label-time order).

    Example
    -------

    >>> from transforms.records import Outcome
    >>> from transforms.scoring.columns import block_scores
    >>> from transforms.scoring.plan import ScoringPlan
    >>> plan = ScoringPlan(final=False, curve_every=2)
    >>> curves = InOrderCurves(("s", "m"), "classification", plan)
    >>> def batch(pairs):
    ...     return block_scores([Outcome(n, n, 0.0, n, 1, 1, 1, p, None) for n, p in pairs],
    ...                         "classification", plan)
    >>> rows = curves.add(batch([(1, 1), (2, 0)])) + curves.add(batch([(3, 1)]))
    >>> [(r["labels"], r["value"]) for _, r in rows + curves.finish({})
    ...  if r["metric"] == "accuracy"]
    [(2, 0.5), (3, 0.6666666666666666)]

    """

    def __init__(self, key: tuple, task: str, plan: ScoringPlan):
        self.key, self.task, self.plan = key, task, plan
        self.open: dict = {}  # (category, axis, block) -> LabelBlock
        self.curves: dict = {}  # (category, axis) -> CurvePoints
        self.newest: dict = {}  # (category, axis) -> the latest block key begun
        self.fold = FadingCurve(task, plan)
        self.faded: dict = {}  # category -> FadingCurve state

    def add(self, partials: dict) -> list:
        for key, partial in sorted(partials.items()):
            if partial.fading is not None:
                state = self.faded.get(key[0]) or self.fold.start()
                self.faded[key[0]] = self.fold.step(state, partial.fading[1])
                partial = LabelBlock(partial.scores)
            self.open[key] = self.open[key].merge(partial) if key in self.open else partial
            self.newest[key[:2]] = max(self.newest.get(key[:2], key[2]), key[2])
        return self._complete(lambda key: key[2] < self.newest[key[:2]])

    def finish(self, tails: dict) -> list:
        """The remaining rows; `tails`: {category: {w: {bin: score}}} (`tail_scores`)."""
        rows = self._complete(lambda key: True)
        for (category, axis), curve in self.curves.items():
            rows += curve.finish(tails.get(category) if axis == LABEL_AXIS else None,
                                 self.faded.get(category))
        return rows

    def _complete(self, done) -> list:
        rows = []
        for key in sorted(k for k in self.open if done(k)):
            category, axis, block_key = key
            curve = self.curves.get((category, axis))
            if curve is None:
                curve = self.curves[(category, axis)] = CurvePoints(
                    (*self.key, category, axis), self.task, self.plan)
            rows += curve.add(block_key, self.open.pop(key), self.faded.get(category))
            if axis == LABEL_AXIS and category in self.faded:  # points emitted: not needed
                points = self.faded[category]["points"]
                for b in [b for b in points if b < block_key]:
                    del points[b]
        return rows


class InOrderScores:
    """One (stream, model)'s summary and curve rows from its outcome batches fed in label order
    (a replay that drains the stream in one place): `add(outcomes)` and `finish()` return
    (is_last, row) pairs, the same rows as the block pipeline (`ScoreOutcomes`), in constant
    memory (`InOrderCurves`, and the last max(w) outcomes for the windows at the end, or the
    last `keep`: a comparison's windows read more).

    >>> from transforms.records import Outcome
    >>> scores = InOrderScores(("s", "m"), "classification", ScoringPlan(curve_every=2))
    >>> rows = scores.add([Outcome(n, n, 0.0, n, 1, 1, 1, 1, 1) for n in (1, 2, 3)])
    >>> rows += scores.add([Outcome(4, 4, 0.0, 4, 1, 1, 1, 0, 0)])
    >>> [(r["labels"], r["value"]) for _, r in rows + scores.finish()
    ...  if r["metric"] == "accuracy" and r["category"] == "initial"]
    [(2, 1.0), (4, 0.75)]
    """

    def __init__(self, key: tuple, task: str, plan: ScoringPlan, keep: int = 0):
        self.task, self.plan = task, plan
        self.curves = InOrderCurves(key, task, plan)
        self.keep = max((keep, *plan.windows))
        self.last: list = []

    def add(self, outcomes) -> list:
        if not outcomes:
            return []
        outcomes = sorted(outcomes, key=lambda o: o.n)  # as a replay makes them: linear
        self.last = keep_last(self.last + outcomes, self.keep)
        return self.curves.add(block_scores(outcomes, self.task, self.plan))

    def finish(self) -> list:
        return self.curves.finish(tail_scores(self.last, self.task, self.plan))


def score_locally(key, outcomes, task: str, plan: ScoringPlan) -> tuple[list, list]:
    """Summary and curve rows of one (stream, model)'s outcomes without Beam (tests, small
    jobs), scored in label order (`InOrderScores`).

    Example
    -------

    >>> from transforms.records import Outcome
    >>> from transforms.scoring.plan import ScoringPlan
    >>> out = [Outcome(n, n, 0.0, n, 1, 1, 1, p, 1) for n, p in [(1, 1), (2, 0)]]
    >>> summary, curves = score_locally(("s", "m"), out, "classification", ScoringPlan())
    >>> sorted((r["category"], r["value"]) for r in summary if r["metric"] == "accuracy")
    [('final', 1.0), ('initial', 0.5)]

    """
    scores = InOrderScores(key, task, plan)
    summary, curves = [], []
    for last, row in scores.add(outcomes) + scores.finish():
        if in_curves(row, plan):
            curves.append(row)
        if last:
            summary.append({k: v for k, v in row.items() if k != "labels"})
    return summary, curves


def with_class_names(row: dict, classes: list) -> dict:
    """A row whose `class` and `predicted` hold class indices, with the classes as the
    prediction log writes them (`str` of the class values); other rows as they are.

    >>> row = {"metric": "confusion", "class": "1", "predicted": "0"}
    >>> with_class_names(row, ["ok", "fraud"])
    {'metric': 'confusion', 'class': 'fraud', 'predicted': 'ok'}
    """
    if row.get("class") is None:
        return row
    return {**row, "class": str(classes[int(row["class"])]),
            "predicted": None if row["predicted"] is None else
            str(classes[int(row["predicted"])])}


def named_rows(rows, classes_of: dict):
    """(is_last, row) pairs with their classes named (`with_class_names`); `classes_of`:
    (stream, model) -> its classes in index order, as they stand (a replay's growing list); a
    key without classes keeps the indices.

    >>> rows = [(True, {"stream": "s", "model": "m", "class": "0", "predicted": None})]
    >>> [row["class"] for _, row in named_rows(rows, {("s", "m"): ["fraud"]})]
    ['fraud']
    """
    for last, row in rows:
        classes = classes_of.get((stream_and_segment(row["stream"])[0], row["model"]))
        if row.get("class") is not None and classes is not None:
            row = with_class_names(row, classes)
        yield last, row


def in_curves(row: dict, plan: ScoringPlan) -> bool:
    """Curves keep Λ(T,0) and Λ(T,B+1) of the binned measures (with Ψα), not every bin, and
    not the ROC and precision-recall curves' points, nor the rows of classes beyond the first
    `CURVE_CLASSES` (`labels` None): the summary has them at the end.

    Example
    -------

    >>> from transforms.scoring.plan import ScoringPlan
    >>> plan = ScoringPlan(bins=10)
    >>> [in_curves({"category": "binned", "bin": b}, plan) for b in (0, 5, 11)]
    [True, False, True]

    """
    if row.get("metric") in CURVE_METRICS or row.get("labels", 0) is None:  # the summary's only
        return False
    return row["category"] != BINNED or row["bin"] in (0, plan.bins + 1)
