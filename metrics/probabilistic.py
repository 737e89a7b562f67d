"""Measures of predicted class probabilities: log-loss, Brier score, ROC-AUC, average precision
(PR-AUC) and expected calibration error with its reliability diagram; exactly mergeable and,
for sliding windows, exactly subtractable.

A label's probabilities are a row of a matrix, column c the probability of class index c (a
class the model never named has probability 0). The sums are `ExactSum`s and the counts are
integers, so a window's score made as the difference of two cumulative scores equals the score
of the window's labels bit for bit, and merge order never changes a result.
"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np

from metrics.bootstrap import percentile_interval
from metrics.exact import ExactSum, ratio

# The overall measures; ROC-AUC and PR-AUC are the mean of the classes' one-vs-rest values,
# kept only by a ranked score (`ProbabilityScore(ranked=True)`).
RANK_METRICS = ("roc_auc", "pr_auc")
# Their Poisson bootstrap intervals (--auc with --bootstrap R).
AUC_BOOTSTRAP_METRICS = tuple(f"{m}_bootstrap_{end}" for m in RANK_METRICS
                              for end in ("low", "high"))
PROBABILITY_METRICS = ("log_loss", "brier", *RANK_METRICS, "ece")
# Per class (one-vs-rest), next to precision, recall and F1.
PER_CLASS_PROBABILITY_METRICS = ("roc_auc", "average_precision")
# The reliability diagram's points: per confidence bin, mean confidence and accuracy.
RELIABILITY_METRICS = ("reliability_confidence", "reliability_accuracy")
# The ROC and precision-recall curves' points (with --auc): per class, one against the rest.
CURVE_METRICS = ("roc_fpr", "roc_tpr", "pr_recall", "pr_precision")
CURVE_POINTS = 101  # at most: thresholds evenly spaced over the distinct probabilities
CALIBRATION_BINS = 10  # equal-width bins of the top-label confidence (Guo et al. 2017)
PROBA_CLAMP = 1e-15  # log-loss clamps p to [ε, 1 − ε], as river's metrics do
# How far past 0 or 1 a model's or a log's probability may be, from rounding, before it is
# refused (a score, margin or logit is no probability: every measure of it would be wrong).
PROBABILITY_SLACK = 1e-9
# How far from 1 a prediction's probabilities may sum before it is counted and named: three
# classes' probabilities rounded to two decimals may be off by 0.015 (1/3 each: 0.33).
PROBABILITY_SUM_SLACK = 0.02


def _distinct(values: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> tuple:
    """(values ascending, positives, negatives) with one row per distinct value; the counts
    are one column, or one per bootstrap replicate (values × replicates)."""
    distinct, where = np.unique(values, return_inverse=True)
    if pos.ndim == 1:
        return (distinct, np.bincount(where, pos, len(distinct)).astype(np.int64),
                np.bincount(where, neg, len(distinct)).astype(np.int64))
    order = np.argsort(where, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(where[order]) != 0])
    return (distinct, np.add.reduceat(pos[order], starts, axis=0),
            np.add.reduceat(neg[order], starts, axis=0))


def _merged_ranks(mine: tuple, values: np.ndarray, pos: np.ndarray, neg: np.ndarray,
                  distinct: bool = False) -> tuple:
    """`mine` (values ascending, distinct) with the counts of (values, pos, neg) (any order
    unless `distinct`: ascending and distinct already; counts may be negative) added: rows
    whose counts are both 0 dropped. The new values are found by binary search and inserted,
    so adding a block to a long cumulative list costs a copy of it, not a sort."""
    if not len(values):
        return mine
    if not distinct:
        values, pos, neg = _distinct(values, pos, neg)
    if not len(mine[0]):
        return values, pos, neg
    have_values, have_pos, have_neg = mine
    at = np.searchsorted(have_values, values)
    hit = at < len(have_values)
    hit[hit] = have_values[at[hit]] == values[hit]
    have_pos, have_neg = have_pos.copy(), have_neg.copy()
    have_pos[at[hit]] += pos[hit]  # distinct values: distinct rows
    have_neg[at[hit]] += neg[hit]
    new = ~hit
    merged = (np.insert(have_values, at[new], values[new]),
              np.insert(have_pos, at[new], pos[new], axis=0),
              np.insert(have_neg, at[new], neg[new], axis=0))
    empty = ((merged[1] == 0) & (merged[2] == 0)).reshape(len(merged[0]), -1).all(axis=1)
    return tuple(a[~empty] for a in merged) if empty.any() else merged


_EMPTY_RANKS = (np.empty(0), np.empty(0, np.int64), np.empty(0, np.int64))


def _empty_weighted(replicates: int) -> tuple:
    return (np.empty(0), np.empty((0, replicates), np.int64),
            np.empty((0, replicates), np.int64))


def _zero_ranks(negatives: np.ndarray) -> tuple:
    """Ranks of labels that are all negatives at probability 0: `negatives` is their count
    (one element) or their weight in each bootstrap replicate (1 × replicates)."""
    return np.zeros(1), np.zeros_like(negatives), negatives


def roc_auc(ranks: tuple) -> float:
    """The area under the ROC curve of one class against the rest from its ranks (values,
    positives, negatives): the Mann-Whitney statistic, a tie counting one half — what
    scikit-learn's `roc_auc_score` computes; NaN without positives or without negatives.

    >>> roc_auc((np.array([0.1, 0.4, 0.8]), np.array([0, 1, 1]), np.array([1, 1, 0])))
    0.875
    """
    values, pos, neg = ranks
    p, n = int(pos.sum()), int(neg.sum())
    if not p or not n:
        return math.nan
    below = np.cumsum(neg) - neg  # negatives with a lower value than each row's
    twice = int(np.dot(pos, 2 * below + neg))  # exact in integers
    return twice / (2 * p * n)


def average_precision(ranks: tuple) -> float:
    """Average precision of one class against the rest: Σ_k (R_k − R_{k−1})·P_k over the
    distinct values from the highest down (scikit-learn's `average_precision_score`, ties as
    one threshold); NaN without positives.

    >>> ranks = (np.array([0.1, 0.4, 0.8]), np.array([0, 1, 1]), np.array([1, 1, 0]))
    >>> average_precision(ranks)  # recall ½ at precision 1, then ½ more at ⅔
    0.8333333333333333
    """
    values, pos, neg = ranks
    total = int(pos.sum())
    if not total:
        return math.nan
    # Positives and negatives at or above each value (never none: the value's own row), all
    # minus those below; a value without positives adds no recall (its term is 0).
    tp = total - np.cumsum(pos) + pos
    at_or_above = tp + int(neg.sum()) - np.cumsum(neg) + neg
    return float((pos * tp / at_or_above).sum() / total)


def replicate_aucs(ranks: tuple) -> tuple[np.ndarray, np.ndarray]:
    """ROC-AUC and average precision of one class against the rest in each bootstrap
    replicate, from ranks whose counts are the replicates' weights (values × replicates):
    `roc_auc` and `average_precision` with weighted counts, as scikit-learn's with
    `sample_weight` (NaN where a replicate has no positive, or for ROC-AUC no negative).

    >>> ranks = (np.array([0.1, 0.4, 0.8]), np.array([[0, 0], [1, 2], [1, 0]]),
    ...          np.array([[1, 1], [1, 0], [0, 1]]))
    >>> [v.tolist() for v in replicate_aucs(ranks)]  # replicate 0: as `roc_auc`'s example
    [[0.875, 0.5], [0.8333333333333333, 0.6666666666666666]]
    """
    _, pos, neg = ranks
    p, n = pos.sum(axis=0), neg.sum(axis=0)
    below = np.cumsum(neg, axis=0) - neg
    twice = (pos * (2 * below + neg)).sum(axis=0)
    tp = p - np.cumsum(pos, axis=0) + pos
    at_or_above = tp + n - np.cumsum(neg, axis=0) + neg
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = np.where((p > 0) & (n > 0), twice / (2.0 * p * n), math.nan)
        terms = np.divide(pos * tp, at_or_above, out=np.zeros(pos.shape),
                          where=at_or_above > 0)
        ap = np.where(p > 0, terms.sum(axis=0) / p, math.nan)
    return auc, ap


def curve_points(ranks: tuple, points: int = CURVE_POINTS) -> list[tuple]:
    """The ROC and precision-recall curves of one class against the rest, from its ranks:
    (false positive rate, true positive rate, recall, precision) with the threshold at each
    distinct value from the highest down, after a start with nothing flagged (precision NaN),
    at most `points` of them (evenly spaced over the thresholds, both ends kept): the points
    of scikit-learn's `roc_curve` and `precision_recall_curve` (without their thinning).

    >>> ranks = (np.array([0.1, 0.4, 0.8]), np.array([0, 1, 1]), np.array([1, 1, 0]))
    >>> [tuple(round(v, 3) for v in p) for p in curve_points(ranks)][1:]
    [(0.0, 0.5, 0.5, 1.0), (0.5, 1.0, 1.0, 0.667), (1.0, 1.0, 1.0, 0.5)]
    """
    values, pos, neg = ranks
    p, n = int(pos.sum()), int(neg.sum())
    if not p or not n:
        return []
    tp = np.concatenate([[0], np.cumsum(pos[::-1])])  # flagged at or above each threshold
    fp = np.concatenate([[0], np.cumsum(neg[::-1])])
    keep = np.unique(np.linspace(0, len(tp) - 1, min(points, len(tp))).round().astype(int))
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = tp / (tp + fp)
    return [(float(fp[k] / n), float(tp[k] / p), float(tp[k] / p), float(precision[k]))
            for k in keep.tolist()]


def padded_proba(vectors: np.ndarray, width: int) -> np.ndarray:
    """Class probability vectors (the last axis) from before a class was seen, with 0 for the
    classes since; vectors of no class at all (a model's before it had learned any) are none,
    NaN, as a vector of NaN stays none.

    >>> padded_proba(np.array([[0.25, 0.75], [np.nan, np.nan]]), 3).tolist()
    [[0.25, 0.75, 0.0], [nan, nan, 0.0]]
    >>> padded_proba(np.empty((2, 0)), 2).tolist()
    [[nan, nan], [nan, nan]]
    """
    return np.pad(vectors, [(0, 0)] * (vectors.ndim - 1) + [(0, width - vectors.shape[-1])],
                  constant_values=0.0 if vectors.shape[-1] else math.nan)


def proba_matrix(vectors: list, width: int | None = None) -> np.ndarray | None:
    """Class probability vectors (None or empty: none) as a matrix, labels × classes (`width`
    of them, default the longest vector's), NaN rows for none and zeros for classes a vector
    is too short for (`padded_proba`); None when no vector and no width is given.

    >>> proba_matrix([np.array([0.3, 0.7]), None, np.array([1.0]), ()]).tolist()
    [[0.3, 0.7], [nan, nan], [1.0, 0.0], [nan, nan]]
    >>> proba_matrix([None]), proba_matrix([None], width=2).tolist()
    (None, [[nan, nan]])
    """
    try:  # every vector there and as long as the others: one matrix
        matrix = np.array(vectors, dtype=np.float64)
        if matrix.ndim == 2 and width in (None, matrix.shape[1]):
            return matrix
    except (TypeError, ValueError):
        pass
    if width is None:
        width = max((len(v) for v in vectors if v is not None), default=-1)
        if width < 0:
            return None
    out = np.zeros((len(vectors), width))
    for i, v in enumerate(vectors):
        if v is None or not len(v):
            out[i] = math.nan
        else:
            out[i, :len(v)] = v
    return out


def label_terms(y_true, proba) -> np.ndarray:
    """Each label's part of the probability measures (labels × 6): whether it has
    probabilities, its log-loss and Brier terms (as `ProbabilityScore` sums them), its top-class
    confidence, that confidence's bin (0..9) and whether the top class
    is the label — what a fading factor weighs label by label (`FadedProbability`).

    >>> label_terms([1, 0], [[0.2, 0.8], [np.nan, np.nan]]).round(4).tolist()
    [[1.0, 0.2231, 0.04, 0.8, 7.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]
    """
    y = np.asarray(y_true, dtype=np.int64)
    p = np.asarray(proba, dtype=np.float64).reshape(len(y), -1)
    out = np.zeros((len(y), 6))
    made = ~np.isnan(p).any(axis=1) if p.shape[1] else np.zeros(len(y), dtype=bool)
    if not made.any():
        return out
    y = y[made]
    _, _, log_loss, brier, top, confidence, where = _per_label(y, p[made])
    out[made] = np.column_stack([np.ones(len(y)), log_loss, brier, confidence, where, top == y])
    return out


def _per_label(y: np.ndarray, p: np.ndarray) -> tuple:
    """The probability rows padded to every class a label names, their width, and per label:
    −log p_y (p_y clamped), ½ Σ_c (p_c − [y = c])², the top class (the first of equals), its
    confidence and that confidence's calibration bin (0..9)."""
    width = max(p.shape[1], int(y.max()) + 1)
    if p.shape[1] < width:
        p = np.hstack([p, np.zeros((len(p), width - p.shape[1]))])
    rows = np.arange(len(y))
    onehot = np.zeros_like(p)
    onehot[rows, y] = 1.0
    top = p.argmax(axis=1)
    confidence = p[rows, top]
    where = np.clip(np.ceil(confidence * CALIBRATION_BINS).astype(np.int64) - 1, 0,
                    CALIBRATION_BINS - 1)
    return (p, width, -np.log(np.clip(p[rows, y], PROBA_CLAMP, 1 - PROBA_CLAMP)),
            ((p - onehot) ** 2).sum(axis=1) / 2, top, confidence, where)


class FadedProbability:
    """Log-loss, Brier score and ECE under a fading factor: each label's terms (`label_terms`)
    weighed by α^age like every other faded count (`metrics.windows.FadingScore`: E = S/B, B
    the faded number of labels with probabilities), one prediction column (bin) after another,
    6 terms each. ROC-AUC and PR-AUC have no faded version
    (their ranks have no recurrence); the reliability diagram is cumulative only.

    >>> from metrics.windows import FadingScore
    >>> f = FadingScore(0.5, FadedProbability)
    >>> f.update({"terms": label_terms([1, 1], [[0.5, 0.5], [0.2, 0.8]])})
    >>> round(f.scores()[0].get()["brier"], 4)  # (0.5·0.25 + 0.04) / (0.5 + 1)
    0.11
    """

    __slots__ = ("n", "log_loss_sum", "brier_sum", "bins")

    @staticmethod
    def faded_stats(columns: dict) -> np.ndarray:
        """Per label and prediction column the increments (labels × columns × 33): labels,
        log-loss, Brier, then per confidence bin its labels, hits and confidence."""
        given = np.asarray(columns["terms"], dtype=np.float64)
        labels = len(given)
        terms = given.reshape(-1, 6)
        made, bin_of = terms[:, 0], terms[:, 4].astype(np.int64)
        per_bin = np.zeros((len(terms), CALIBRATION_BINS, 3))
        rows = np.arange(len(terms))
        per_bin[rows, bin_of] = np.column_stack([made, made * terms[:, 5], made * terms[:, 3]])
        return np.column_stack([terms[:, :3] * made[:, None],
                                per_bin.reshape(len(terms), -1)]).reshape(labels, -1, 33)

    @staticmethod
    def pad_faded(stats: np.ndarray, width: int) -> np.ndarray:
        return stats  # a fixed width

    @classmethod
    def from_faded(cls, row: list) -> FadedProbability:
        s = cls()
        s.n, s.log_loss_sum, s.brier_sum = row[:3]
        s.bins = [row[3 + 3 * m:6 + 3 * m] for m in range(CALIBRATION_BINS)]
        return s

    def class_measures(self) -> dict:
        return {}  # no faded ranks: no per-class ROC-AUC or average precision

    def get(self) -> dict:
        if not self.n:
            return dict.fromkeys(("log_loss", "brier", "ece"), math.nan)
        return {"log_loss": self.log_loss_sum / self.n, "brier": self.brier_sum / self.n,
                "ece": sum(abs(hits - conf) for _, hits, conf in self.bins) / self.n}


class ProbabilityScore:
    """Sums and ranks behind the probability measures of some labels.

    - log-loss = mean of −log p_y, p_y clamped to [10⁻¹⁵, 1 − 10⁻¹⁵] (river's clamp);
    - Brier = mean of ½ Σ_c (p_c − [y = c])², in [0, 1] for any number of classes: with two
      classes (p_positive − y)², scikit-learn's binary `brier_score_loss`, with more its
      `scale_by_half=True`. Always halved, not only for two classes: whether a stream has two
      classes is not known while it is read (a third can come late; a segment, a bin or the
      first labels may see two of three), and the scale must not change with that;
    - with `ranked`, ROC-AUC and PR-AUC (average precision) per class, one against the rest,
      exact (every distinct probability is kept with its counts: memory grows with the
      distinct values, 24 bytes per class and value, and each result takes a pass over them);
      the overall value is their mean over the classes that occur as labels (and, for
      ROC-AUC, also as non-labels);
    - ECE = Σ_m |hits_m − Σ confidence_m| / n over 10 equal-width bins of the top-label
      confidence max_c p_c, a hit when that class (the first of equals) is the label
      (Guo et al. 2017); `reliability()` gives the diagram's points.

    >>> s = ProbabilityScore(ranked=True)
    >>> s.update_many([1, 0, 1, 1], [[0.1, 0.9], [0.8, 0.2], [0.6, 0.4], [0.3, 0.7]])
    >>> round(s.log_loss, 4), round(s.brier, 4), s.roc_auc
    (0.4004, 0.125, 1.0)

    References
    ----------
    Brier, G. W. (1950). Verification of forecasts expressed in terms of probability.
    Monthly Weather Review 78(1), 1–3.

    Hand, D. J., Till, R. J. (2001). A simple generalisation of the area under the ROC curve
    for multiple class classification problems. Machine Learning 45(2), 171–186.

    Guo, C., Pleiss, G., Sun, Y., Weinberger, K. Q. (2017). On calibration of modern neural
    networks. International Conference on Machine Learning (ICML).
    """

    __slots__ = ("n", "width", "log_loss_sum", "brier_sum", "bin_counts", "bin_hits",
                 "bin_confidence", "ranks", "boot", "_measures")

    def __init__(self, ranked: bool = False):
        self.n = 0
        self.width = 0  # classes: the widest probability row, or the highest label + 1
        self.log_loss_sum = ExactSum()
        self.brier_sum = ExactSum()
        self.bin_counts = [0] * CALIBRATION_BINS
        self.bin_hits = [0] * CALIBRATION_BINS
        self.bin_confidence = [ExactSum() for _ in range(CALIBRATION_BINS)]
        # class -> (values ascending, positives, negatives); None: not ranked (no AUC)
        self.ranks: dict | None = {} if ranked else None
        # With Poisson bootstrap weights: the ranks with each replicate's weights as counts.
        self.boot: dict | None = None
        self._measures = None  # `class_measures`, until the counts change

    def __deepcopy__(self, memo) -> ProbabilityScore:
        # Numbers, lists of numbers and exact sums: copied as such (curves copy every bin's
        # score at each block, and the generic deep copy cost more than the scoring).
        out = ProbabilityScore.__new__(ProbabilityScore)
        out.n, out.width = self.n, self.width
        out.log_loss_sum, out.brier_sum = (copy.deepcopy(s) for s in (self.log_loss_sum,
                                                                       self.brier_sum))
        out.bin_counts, out.bin_hits = self.bin_counts.copy(), self.bin_hits.copy()
        out.bin_confidence = [copy.deepcopy(s) for s in self.bin_confidence]
        out.ranks, out.boot = copy.deepcopy(self.ranks, memo), copy.deepcopy(self.boot, memo)
        out._measures = None
        return out

    def update_many(self, y_true, proba, weights=None) -> None:
        """Add labels (class indices) and their probability rows (labels × classes); rows
        holding NaN (no probabilities) are left out. A ranked score given the labels'
        bootstrap weights (labels × replicates) also ranks each replicate's, for the
        intervals of ROC-AUC and PR-AUC."""
        y = np.asarray(y_true, dtype=np.int64)
        if not len(y):
            return
        p = np.asarray(proba, dtype=np.float64).reshape(len(y), -1)
        made = ~np.isnan(p).any(axis=1)
        if not made.all():
            y, p = y[made], p[made]
            weights = None if weights is None else np.asarray(weights)[made]
        if not len(y):
            return
        self._measures = None
        p, width, log_loss, brier, top, confidence, where = _per_label(y, p)
        self._widen(width)
        if p.shape[1] < self.width:
            p = np.hstack([p, np.zeros((len(p), self.width - p.shape[1]))])
        self.n += len(y)
        self.log_loss_sum.add_many(log_loss)
        self.brier_sum.add_many(brier)
        counts = np.bincount(where, minlength=CALIBRATION_BINS)
        hits = np.bincount(where, top == y, CALIBRATION_BINS)
        for m in np.flatnonzero(counts).tolist():
            self.bin_counts[m] += int(counts[m])
            self.bin_hits[m] += int(hits[m])
            self.bin_confidence[m].add_many(confidence[where == m])
        for c in range(self.width if self.ranks is not None else 0):
            positive = (y == c).astype(np.int64)
            self.ranks[c] = _merged_ranks(self.ranks.get(c, _EMPTY_RANKS), p[:, c], positive,
                                          1 - positive)
        if self.ranks is not None and weights is not None:
            w = np.asarray(weights, dtype=np.int64)
            self.boot = {} if self.boot is None else self.boot
            for c in range(self.width):
                positive = (y == c)[:, None]
                self.boot[c] = _merged_ranks(self.boot.get(c, _empty_weighted(w.shape[1])),
                                             p[:, c], w * positive, w * ~positive)

    @staticmethod
    def update_columns(scores: list, y_true, proba, made) -> None:
        """`update_many` of unranked scores, one per prediction column (the bins), at once:
        `proba` is labels × columns × classes, `made` (labels × columns) marks the labels each
        column scores; every score gets exactly what its own `update_many` would give it.

        >>> a, b = ProbabilityScore(), ProbabilityScore()
        >>> ProbabilityScore.update_columns([a, b], [1, 0], [[[0.2, 0.8], [0.6, 0.4]],
        ...                                                  [[0.9, 0.1], [0.5, 0.5]]],
        ...                                 [[True, True], [True, False]])
        >>> (a.n, round(a.brier, 4)), (b.n, round(b.brier, 4))
        ((2, 0.025), (1, 0.36))
        """
        y = np.asarray(y_true, dtype=np.int64)
        p = np.asarray(proba, dtype=np.float64)
        if not len(y) or not p.size:
            return
        ok = np.asarray(made, dtype=bool) & ~np.isnan(p).any(axis=2)
        label, column = np.nonzero(ok)
        if not len(label):
            return
        y = y[label]
        _, width, log_loss, brier, top, confidence, where = _per_label(y, p[label, column])
        parts = 2 + CALIBRATION_BINS  # log-loss, Brier, then each calibration bin's confidence
        sums = [s for score in scores for s in (score.log_loss_sum, score.brier_sum,
                                                *score.bin_confidence)]
        ExactSum.add_grouped(sums, np.concatenate([log_loss, brier, confidence]), np.concatenate([
                column * parts, column * parts + 1, column * parts + 2 + where]))
        cell = column * CALIBRATION_BINS + where
        counts = np.bincount(cell, minlength=len(scores) * CALIBRATION_BINS).reshape(
            len(scores), CALIBRATION_BINS).tolist()
        hits = np.bincount(cell, top == y, len(scores) * CALIBRATION_BINS).reshape(
            len(scores), CALIBRATION_BINS).tolist()
        for j in np.flatnonzero(np.bincount(column)).tolist():
            score = scores[j]
            score._measures = None
            score.n += sum(counts[j])
            score.width = max(score.width, width)
            for m in range(CALIBRATION_BINS):
                score.bin_counts[m] += counts[j][m]
                score.bin_hits[m] += int(hits[j][m])

    def _widen(self, width: int) -> None:
        """Rank classes up to `width` − 1: each new class has every label ranked so far as a
        negative at probability 0 — a row gives 0 to a class it does not name, and a label of
        the class would have widened the rows — not only the labels after it was first named."""
        if self.ranks is not None and self.n:
            for c in range(self.width, width):
                self.ranks[c] = _zero_ranks(np.array([self.n]))
                if self.boot:
                    self.boot[c] = _zero_ranks(self._boot_weights())
        self.width = max(self.width, width)

    def _boot_weights(self) -> np.ndarray:
        """The labels' total weight in each bootstrap replicate (1 × replicates)."""
        _, pos, neg = next(iter(self.boot.values()))
        return (pos.sum(axis=0) + neg.sum(axis=0))[None, :]

    def _combine(self, other: ProbabilityScore, sign: int) -> ProbabilityScore:
        self._measures = None
        self._widen(other.width)
        self.n += sign * other.n
        for mine, theirs in ((self.log_loss_sum, other.log_loss_sum),
                             (self.brier_sum, other.brier_sum)):
            mine.merge(theirs if sign > 0 else theirs.negated())
        for m in range(CALIBRATION_BINS):
            self.bin_counts[m] += sign * other.bin_counts[m]
            self.bin_hits[m] += sign * other.bin_hits[m]
            theirs = other.bin_confidence[m]
            self.bin_confidence[m].merge(theirs if sign > 0 else theirs.negated())
        # The classes `other` does not rank are classes its rows did not name (`_widen`).
        if other.ranks is not None and other.n:
            for c in range(self.width):
                values, pos, neg = other.ranks.get(c) or _zero_ranks(np.array([other.n]))
                self.ranks[c] = _merged_ranks(self.ranks.get(c, _EMPTY_RANKS), values,
                                              sign * pos, sign * neg, distinct=True)
        if other.boot:
            self.boot = {} if self.boot is None else self.boot
            weights = other._boot_weights()
            for c in range(self.width):
                values, pos, neg = other.boot.get(c) or _zero_ranks(weights)
                self.boot[c] = _merged_ranks(self.boot.get(c, _empty_weighted(pos.shape[1])),
                                             values, sign * pos, sign * neg, distinct=True)
        return self

    def merge(self, other: ProbabilityScore) -> ProbabilityScore:
        return self._combine(other, 1)

    def subtract(self, other: ProbabilityScore) -> ProbabilityScore:
        """Remove `other`, a score over a subset of the same labels (a window's difference).

        >>> a, b = ProbabilityScore(ranked=True), ProbabilityScore(ranked=True)
        >>> a.update_many([1, 0, 1], [[0.2, 0.8], [0.9, 0.1], [0.95, 0.05]])
        >>> b.update_many([1], [[0.2, 0.8]])
        >>> a.subtract(b).roc_auc  # labels 2 and 3: the positive has the lower probability
        0.0
        """
        return self._combine(other, -1)

    # -- statistics -------------------------------------------------------------------------
    @property
    def log_loss(self) -> float:
        return ratio(self.log_loss_sum.value, self.n)

    @property
    def brier(self) -> float:
        return ratio(self.brier_sum.value, self.n)

    def class_measures(self) -> dict:
        """{(metric, class): value}: each class's one-vs-rest ROC-AUC and average precision,
        for the classes that occur as a label."""
        if self._measures is None:
            out = {}
            for c, ranks in sorted((self.ranks or {}).items()):
                if ranks[1].sum():
                    out[("roc_auc", c)] = roc_auc(ranks)
                    out[("average_precision", c)] = average_precision(ranks)
            self._measures = out
        return dict(self._measures)

    def curves(self) -> dict:
        """{class: `curve_points`} for the classes that occur as a label and as a non-label
        (ranked scores only)."""
        return {c: points for c, ranks in sorted((self.ranks or {}).items())
                if (points := curve_points(ranks))}

    def _macro(self, metric: str, measures: dict | None = None) -> float:
        values = [v for (m, _), v in (measures or self.class_measures()).items()
                  if m == metric and not math.isnan(v)]
        return sum(values) / len(values) if values else math.nan

    @property
    def roc_auc(self) -> float:
        return self._macro("roc_auc")

    @property
    def pr_auc(self) -> float:
        return self._macro("average_precision")

    @property
    def ece(self) -> float:
        if not self.n:
            return math.nan
        return sum(abs(hits - conf.value) for hits, conf in
                   zip(self.bin_hits, self.bin_confidence)) / self.n

    def reliability(self) -> dict:
        """{confidence bin (1..10): (mean confidence, accuracy, labels)} of the bins that
        hold labels: the reliability diagram's points.

        >>> s = ProbabilityScore()
        >>> s.update_many([0, 1, 1], [[0.95, 0.05], [0.85, 0.15], [0.3, 0.7]])
        >>> s.reliability()
        {7: (0.7, 1.0, 1), 9: (0.85, 0.0, 1), 10: (0.95, 1.0, 1)}
        """
        return {m + 1: (conf.value / count, hits / count, count) for m, (count, hits, conf)
                in enumerate(zip(self.bin_counts, self.bin_hits, self.bin_confidence)) if count}

    def replicates(self) -> dict:
        """{"roc_auc": …, "pr_auc": …}: each bootstrap replicate's macro ROC-AUC and PR-AUC
        over the classes the overall values average ({} without bootstrap weights)."""
        if not self.boot:
            return {}
        classes = [c for c, ranks in sorted((self.ranks or {}).items()) if ranks[1].sum()]
        if not classes:
            return {}
        pairs = [replicate_aucs(self.boot[c]) for c in classes if c in self.boot]
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a replicate without any value
            return {"roc_auc": np.nanmean([a for a, _ in pairs], axis=0),
                    "pr_auc": np.nanmean([b for _, b in pairs], axis=0)}

    def get(self) -> dict:
        """Every measure of `PROBABILITY_METRICS` by name (with bootstrap weights, also the
        percentile intervals of ROC-AUC and PR-AUC, `AUC_BOOTSTRAP_METRICS`)."""
        out = {"log_loss": self.log_loss, "brier": self.brier, "ece": self.ece}
        if self.ranks is not None:
            measures = self.class_measures()
            out.update(roc_auc=self._macro("roc_auc", measures),
                       pr_auc=self._macro("average_precision", measures))
        for name, values in self.replicates().items():
            out[f"{name}_bootstrap_low"], out[f"{name}_bootstrap_high"] = \
                percentile_interval(values)
        return out

    # -- state ------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"n": self.n, "width": self.width, "log_loss_sum": self.log_loss_sum.to_dict(),
                "brier_sum": self.brier_sum.to_dict(), "bin_counts": list(self.bin_counts),
                "bin_hits": list(self.bin_hits),
                "bin_confidence": [s.to_dict() for s in self.bin_confidence],
                "ranks": None if self.ranks is None else
                {c: [r.tolist() for r in ranks] for c, ranks in self.ranks.items()},
                "boot": None if self.boot is None else
                {c: [r.tolist() for r in ranks] for c, ranks in self.boot.items()}}

    @classmethod
    def from_dict(cls, d: dict) -> ProbabilityScore:
        s = cls()
        s.n, s.width = d["n"], d["width"]
        s.log_loss_sum = ExactSum.from_dict(d["log_loss_sum"])
        s.brier_sum = ExactSum.from_dict(d["brier_sum"])
        s.bin_counts, s.bin_hits = list(d["bin_counts"]), list(d["bin_hits"])
        s.bin_confidence = [ExactSum.from_dict(x) for x in d["bin_confidence"]]
        s.ranks = None if d["ranks"] is None else {
            int(c): (np.array(v, np.float64), np.array(p, np.int64), np.array(n, np.int64))
            for c, (v, p, n) in d["ranks"].items()}
        s.boot = None if d.get("boot") is None else {
            int(c): (np.array(v, np.float64), np.array(p, np.int64), np.array(n, np.int64))
            for c, (v, p, n) in d["boot"].items()}
        return s

    def __repr__(self) -> str:
        return f"ProbabilityScore(n={self.n}, log_loss={self.log_loss:.4f})"
