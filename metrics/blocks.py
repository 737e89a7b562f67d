"""Partial scores over blocks of labels, and what is made of them: merged blocks, windows as
exact differences of cumulative scores, fading factors folded in label order.

A block is a run of consecutive labels of one key (cut at the curve points and where a sliding
window starts, or a period of label time); its `BlockScore`s merge in any order with the same
bits, so blocks can be scored wherever the labels are and merged later."""

from __future__ import annotations

import bisect
import copy

import numpy as np

from metrics.classification import ClassificationScore
from metrics.comparison import PairScore
from metrics.probabilistic import FadedProbability, label_terms
from metrics.regression import RegressionScore
from metrics.windows import FadingScore


def new_score(task: str):
    """An empty score for a model's task, or for a comparison of two models.

    Example
    -------

    >>> type(new_score("classification")).__name__, type(new_score("comparison")).__name__
    ('ClassificationScore', 'PairScore')

    """
    return {"classification": ClassificationScore, "regression": RegressionScore,
            "comparison": PairScore}[task]()


class BlockScore:
    """A score over some labels, with the last label number and time it covers.

    Example
    -------

    >>> from metrics import ClassificationScore
    >>> a, b = ClassificationScore(), ClassificationScore()
    >>> a.update(1, 1, 1, 1); b.update(0, 1, 0, 0)
    >>> merged = BlockScore(a, last_n=1, last_t=5.0).merge(BlockScore(b, last_n=2, last_t=7.0))
    >>> merged.score.n, merged.score.accuracy, merged.last_n, merged.last_t
    (2, 0.5, 2, 7.0)

    """

    __slots__ = ("score", "last_n", "last_t")

    def __init__(self, score, last_n: int = 0, last_t: float = float("-inf")):
        self.score = score
        self.last_n = last_n
        self.last_t = last_t

    def __deepcopy__(self, memo) -> BlockScore:
        return BlockScore(copy.deepcopy(self.score, memo), self.last_n, self.last_t)

    def merge(self, other: BlockScore) -> BlockScore:
        self.score.merge(other.score)
        self.last_n = max(self.last_n, other.last_n)
        self.last_t = max(self.last_t, other.last_t)
        return self


def merge_bins(mine: dict, other: dict) -> dict:
    """Merge {bin: BlockScore} maps (bin None for initial / final).

    Example
    -------

    >>> from metrics import ClassificationScore
    >>> def block(y, p):
    ...     s = ClassificationScore(); s.update(y, p, y, y)
    ...     return BlockScore(s)
    >>> merged = merge_bins({0: block(1, 1)}, {0: block(1, 0), 1: block(0, 0)})
    >>> {b: s.score.accuracy for b, s in merged.items()}
    {0: 0.5, 1: 1.0}

    """
    for b, acc in other.items():
        if b in mine:
            mine[b].merge(acc)
        else:
            mine[b] = copy.deepcopy(acc)
    return mine


class LabelBlock:
    """One block's partial: {bin: BlockScore}, and for fading factors its labels' rows
    (`fading`: (label numbers, rows), see `FadingCurve`), which `BlocksByCurve` sends to the
    label-order fold before the blocks merge.

    Example
    -------

    >>> from metrics import ClassificationScore
    >>> s = ClassificationScore(); s.update(1, 1, 1, 1)
    >>> block = LabelBlock({None: BlockScore(s, 1)}).merge(LabelBlock({None: BlockScore(s, 2)}))
    >>> block.scores[None].score.n
    2

    """

    __slots__ = ("scores", "fading")

    def __init__(self, scores: dict, fading: tuple | None = None):
        self.scores = scores
        self.fading = fading

    def merge(self, other: LabelBlock) -> LabelBlock:
        merge_bins(self.scores, other.scores)
        return self


class FadingCurve:
    """The fading factors of one curve, folded over its labels in label order (a
    `transforms.scoring.label_order.Fold`): a `FadingScore` per α, and their states at every curve
    point, taken when the fold passes it (a point it never passed is at the end: the final
    state). Feeding labels one run at a time performs the sequential loop's own operations,
    so the numbers equal one pass over all labels bit for bit.

    Rows: label number n, then the columns of the task's `faded_stats`, as `rows` lays them
    out (classes as float indices, exact); a classifier's Majority baseline has a column per
    view, and each α reads its own view's; with class probabilities, each label's terms of
    the probability measures follow (`metrics.probabilistic.label_terms`), faded alike
    (`proba_at`).

    Example
    -------

    >>> from transforms.scoring.plan import ScoringPlan
    >>> fold = FadingCurve("regression", ScoringPlan(fadings=(0.5,), curve_every=10))
    >>> rows = FadingCurve.rows("regression", np.array([1, 2]),
    ...                         {"y": np.array([1.0, 3.0]), "preds": np.array([[0.0], [3.0]])})
    >>> state = fold.step(fold.start(), rows)
    >>> [s.get()["mae"] for s in FadingCurve.at(state, 10)[0.5].scores()]
    [0.3333333333333333]

    Faded losses 1 then 0 with α = 0.5: S = 0 + 0.5·1, B = 1 + 0.5, MAE = S/B = 1/3.

    """

    def __init__(self, task: str, plan):  # plan: a `transforms.scoring.ScoringPlan`
        self.task = task
        self.alphas = plan.fadings
        self.every = plan.curve_every
        self.views = len(plan.views)
        self.majority_of = plan.fading_views

    @staticmethod
    def rows(task: str, n: np.ndarray, columns: dict) -> np.ndarray:
        """One row per label: n and the columns the score's `faded_stats` reads (a
        classifier's: y, its baselines, the number of prediction columns, the predictions,
        and with `proba` its probability measures' terms)."""
        if task == "comparison":
            parts = [columns[k] for k in PairScore.FADED_COLUMNS]
        elif task == "classification":
            preds = np.asarray(columns["preds"]).reshape(len(n), -1)
            parts = [columns["y"], *columns.get("baselines", ()),
                     np.full(len(n), preds.shape[1]), preds]
            proba = columns.get("proba")
            if proba is not None:  # labels × classes, or labels × bins × classes
                proba = np.asarray(proba).reshape(len(n), -1, np.shape(proba)[-1])
                parts += [label_terms(columns["y"], proba[:, j]) for j in range(proba.shape[1])]
        else:
            parts = [columns["y"], columns["preds"]]
        return np.column_stack([n, *parts]).astype(np.float64)

    def columns(self, rows: np.ndarray) -> dict:
        if self.task == "comparison":
            return dict(zip(PairScore.FADED_COLUMNS, rows[:, 1:].T))
        if self.task == "classification":
            at = 3 + self.views
            width = int(rows[0, at])
            terms = rows[:, at + 1 + width:]
            return {"y": rows[:, 1], "prev": rows[:, 2], "majority": rows[:, 3:at],
                    "preds": rows[:, at + 1:at + 1 + width],
                    "terms": terms if terms.shape[1] else None}
        return {"y": rows[:, 1], "preds": rows[:, 2:]}

    def start(self):
        score_class = type(new_score(self.task))
        return {"faded": {a: FadingScore(a, score_class) for a in self.alphas},
                "proba": {a: FadingScore(a, FadedProbability) for a in self.alphas},
                "points": {}, "folded": 0}

    def _update(self, state, rows: np.ndarray) -> None:
        if len(rows):
            columns = self.columns(rows)
            majority = columns.get("majority")
            for alpha, f in state["faded"].items():
                if majority is not None:  # this α's own Majority baseline
                    columns["majority"] = majority[:, self.majority_of[alpha]]
                f.update(columns)
            for f in state["proba"].values():
                if columns.get("terms") is not None:
                    f.update(columns)
                else:  # (no probabilities in these labels: they age the others all the same)
                    f.age(len(rows))

    def step(self, state, rows: np.ndarray):
        if not len(rows):
            return state
        n, start = rows[:, 0], 0
        # Curve points b the fold now passes (labels after b follow): their state first.
        first = max(self.every, -(-state["folded"] // self.every) * self.every)
        for b in range(first, int(n[-1]), self.every):
            cut = int(np.searchsorted(n, b, side="right"))
            self._update(state, rows[start:cut])
            start = cut
            state["points"][b] = copy.deepcopy((state["faded"], state["proba"]))
        self._update(state, rows[start:])
        state["folded"] = int(n[-1])
        return state

    def result(self, state):
        return state

    @staticmethod
    def at(folded: dict, point: int) -> dict:
        """{α: FadingScore} at curve point `point`."""
        return folded["points"].get(point, (folded["faded"],))[0]

    @staticmethod
    def proba_at(folded: dict, point: int) -> dict:
        """{α: FadingScore of `FadedProbability`} at curve point `point` (empty states
        without class probabilities)."""
        return folded["points"].get(point, (None, folded["proba"]))[1]


def difference(later: dict, earlier: dict | None) -> dict:
    """{bin: score} of the labels in `later` but not in `earlier` (cumulative snapshots).

    Example
    -------

    >>> from metrics import ClassificationScore
    >>> def cumulative(pairs):
    ...     s = ClassificationScore()
    ...     for y, p in pairs:
    ...         s.update(y, p, y, y)
    ...     return {None: BlockScore(s)}
    >>> labels = [(1, 1), (1, 0), (0, 0), (0, 0)]
    >>> window = difference(cumulative(labels), cumulative(labels[:2]))  # the last two labels
    >>> window[None].n, window[None].accuracy
    (2, 1.0)

    """
    out = {}
    for b, acc in later.items():
        score = copy.deepcopy(acc.score)
        if earlier is not None and b in earlier:
            score.subtract(earlier[b].score)
        out[b] = score
    return out


def snapshot_at(history: list, bound) -> dict | None:
    """The last cumulative snapshot at or before `bound` (history sorted by block key).

    Example
    -------

    >>> history = [(10, "after 10 labels"), (20, "after 20"), (30, "after 30")]
    >>> snapshot_at(history, 25), snapshot_at(history, 5)
    ('after 20', None)

    """
    i = bisect.bisect_right(history, bound, key=lambda h: h[0])
    return history[i - 1][1] if i else None
