"""Accuracy and the kappa family over class indices (Žliobaitė et al.; MOA conventions).

Classes are integers 0..k-1 in the stream's declared order; sums run in that order so results
match MOA number for number. The order-dependent baselines (the previous true label for κ_per,
the majority class for κ_m, `metrics.baselines`) are supplied per label by the ordered replay,
which keeps this accumulator order-free and mergeable. The Majority baseline differs per view
(cumulative, a sliding window's, a fading factor's), so a label may carry one Majority
prediction per view and the score one hit count per view; `for_view(j)` reads view j.
"""

from __future__ import annotations

import copy
import math
import statistics

import numpy as np

from metrics.exact import ratio, ratios
from metrics.bootstrap import BootstrapCounts, percentile_interval
from metrics.probabilistic import ProbabilityScore

CONFIDENCE_DELTA = 0.05  # the bounds hold with probability 1 − δ
# Confidence statistics: reported next to the measures, never aggregated into Ψα.
CONFIDENCE_METRICS = ("accuracy_ci_hoeffding", "accuracy_ci_chernoff", "accuracy_wilson_low",
                      "accuracy_wilson_high", "kappa_se", "kappa_z")
# The normal quantile of the two-sided 1 − δ intervals.
Z = statistics.NormalDist().inv_cdf(1 - CONFIDENCE_DELTA / 2)
# From the confusion counts, whatever the class order (scikit-learn's definitions, a class
# counted when it occurs as a label or as a prediction; a ratio with a zero denominator is 0).
PER_CLASS_AVERAGES = ("balanced_accuracy", "gmean", "mcc", "macro_precision", "macro_recall",
                      "macro_f1", "weighted_precision", "weighted_recall", "weighted_f1",
                      "micro_f1")
CLASSIFICATION_METRICS = ("accuracy", "kappa", "kappa_m", "kappa_t", "kappa_plus",
                          *PER_CLASS_AVERAGES, *CONFIDENCE_METRICS)
# Reported once per class (`ClassificationScore.per_class`), and the confusion matrix's cells.
PER_CLASS_METRICS = ("precision", "recall", "f1", "precision_wilson_low",
                     "precision_wilson_high", "recall_wilson_low", "recall_wilson_high")
CONFUSION = "confusion"


def _grow(counts: list[int], index: int) -> None:
    if index >= len(counts):
        counts.extend([0] * (index + 1 - len(counts)))


def _add_cells(mine: dict, theirs: dict, sign: int = 1) -> None:
    """mine += sign · theirs, cell by cell (a cell left at 0 stays, as a count of 0)."""
    for cell, count in theirs.items():
        mine[cell] = mine.get(cell, 0) + sign * count


def _add(mine: list, theirs, sign: int = 1) -> None:
    """mine += sign · theirs, element by element (mine grows to fit)."""
    if len(theirs):
        _grow(mine, len(theirs) - 1)
    for i, c in enumerate(theirs):
        mine[i] += sign * c


def _geometric_mean(values: list) -> float:
    """(Π v)^(1/k) of k values in [0, 1], as exp of the mean log (a product of many recalls
    would underflow); 0 when one is 0, NaN when there are none.

    >>> _geometric_mean([0.5, 0.5]), _geometric_mean([0.9, 0.0]), _geometric_mean([])
    (0.5, 0.0, nan)
    """
    if not values:
        return math.nan
    if min(values) == 0:
        return 0.0
    return math.exp(math.fsum(math.log(v) for v in values) / len(values))


def _mcc_of(n, hits, sum_tp, sum_pp, sum_tt) -> float:
    """The K-class MCC of n labels from the sums over classes of hits, t_c·p_c, p_c², t_c²
    (0 where a covariance is 0).

    >>> _mcc_of(4, 4, 8, 8, 8)  # two classes of two labels, every one right
    1.0
    """
    cov_tp = hits * n - sum_tp
    cov_pp = n * n - sum_pp
    cov_tt = n * n - sum_tt
    return cov_tp / math.sqrt(cov_tt * cov_pp) if cov_tt * cov_pp else 0.0


def kappa_plus_of(kappa: float, kappa_per: float) -> float:
    """κ+ = sqrt(max(0, κ)·max(0, κ_per)): 0 as soon as either factor is ≤ 0, whatever the
    other is; NaN only when a factor that could decide it is undefined.

    >>> kappa_plus_of(0.25, 0.64), kappa_plus_of(-0.2, math.nan), kappa_plus_of(0.5, math.nan)
    (0.4, 0.0, nan)
    """
    if kappa <= 0 or kappa_per <= 0:
        return 0.0
    if math.isnan(kappa) or math.isnan(kappa_per):
        return math.nan
    return math.sqrt(kappa * kappa_per)


class ClassificationScore:
    """Counts behind accuracy, Cohen's κ, κ_m, κ_per (kappa-temporal), κ+ and the measures of
    the per-class confusion counts (precision, recall, F1 averages, balanced accuracy, G-mean,
    MCC).

    Each update takes the true class, the predicted class, the Persistent baseline's prediction
    (the previous true label in label-arrival order) and the Majority baseline's prediction
    (the majority class counted including the current label): one class, or one per view
    (cumulative first), whose hit counts are kept apart (`majority_correct[j]`).

    - accuracy p = correct / n
    - κ = (p − p_ran) / (1 − p_ran), p_ran = Σ_i P(true=i)·P(pred=i)
    - κ_m = (p − p_maj) / (1 − p_maj); κ_per = (p − p_per) / (1 − p_per)
    - κ+ = sqrt(max(0, κ)·max(0, κ_per))
    - per class c (hits h_c, labels t_c, predictions p_c): precision h_c/p_c, recall h_c/t_c,
      F1 2h_c/(t_c + p_c); macro = their mean over the classes that occur, weighted = their
      mean weighted by t_c, micro F1 = accuracy; balanced accuracy = mean recall and G-mean
      = geometric mean recall over the classes that occur as labels;
      MCC = (hits·n − Σ t_c p_c) / sqrt((n² − Σ p_c²)(n² − Σ t_c²))

    >>> s = ClassificationScore()
    >>> for y, p, prev, maj in [(0, 0, 0, 0), (1, 0, 0, 0), (1, 1, 1, 1), (0, 0, 1, 0)]:
    ...     s.update(y, p, prev, maj)
    >>> s.get()["accuracy"]
    0.75
    >>> round(s.get()["kappa"], 4)  # p_ran = (2/4)(3/4) + (2/4)(1/4) = 0.5
    0.5
    >>> s.get()["kappa_t"]  # p_per = 2/4
    0.5

    References
    ----------
    Žliobaitė, I., Bifet, A., Read, J., Pfahringer, B., Holmes, G. (2015). Evaluation
    methods and decision theory for classification of streaming data with temporal dependence.
    Machine Learning 98(3), 455–482.

    Barandela, R., Sánchez, J. S., García, V., Rangel, E. (2003). Strategies for learning in
    class imbalance problems. Pattern Recognition 36(3), 849–851 (G-mean).

    Gorodkin, J. (2004). Comparing two K-category assignments by a K-category correlation
    coefficient. Computational Biology and Chemistry 28(5–6), 367–374 (MCC for K classes).
    """

    __slots__ = ("n", "correct", "true_counts", "pred_counts", "persistent_correct",
                 "majority_correct", "confusion", "proba", "boot")

    def __init__(self):
        self.n = 0
        self.correct = 0
        self.true_counts: list[int] = []
        self.pred_counts: list[int] = []
        self.persistent_correct = 0
        self.majority_correct: list = []  # per view (one entry: every view alike)
        self.confusion: dict = {}  # (true class, predicted class) -> labels
        self.proba: ProbabilityScore | None = None  # the labels' class probabilities, if any
        self.boot: BootstrapCounts | None = None  # Poisson bootstrap replicates, if asked

    def __copy__(self) -> ClassificationScore:
        # (slot by slot: the generic copy of a class with slots goes through __reduce_ex__,
        # and a curve point takes one per bin and view, `for_view`)
        out = ClassificationScore.__new__(ClassificationScore)
        for name in self.__slots__:
            setattr(out, name, getattr(self, name))
        return out

    def __deepcopy__(self, memo) -> ClassificationScore:
        # The counts are numbers: copying the containers is a deep copy (curves take one
        # snapshot per block, and the generic deep copy cost more than the scoring).
        out = ClassificationScore.__new__(ClassificationScore)
        out.n, out.correct = self.n, self.correct
        out.persistent_correct = self.persistent_correct
        out.true_counts, out.pred_counts = self.true_counts.copy(), self.pred_counts.copy()
        out.majority_correct, out.confusion = self.majority_correct.copy(), self.confusion.copy()
        out.proba = copy.deepcopy(self.proba, memo)
        out.boot = copy.deepcopy(self.boot, memo)
        return out

    def update(self, y_true: int, y_pred: int, y_prev: int, y_majority) -> None:
        self.n += 1
        self.correct += y_true == y_pred
        self.persistent_correct += y_true == y_prev
        majority = y_majority if isinstance(y_majority, (tuple, list)) else (y_majority,)
        _add(self.majority_correct, [int(y_true == m) for m in majority])
        if y_true >= len(self.true_counts):
            _grow(self.true_counts, y_true)
        self.true_counts[y_true] += 1
        cell = (y_true, y_pred)
        self.confusion[cell] = self.confusion.get(cell, 0) + 1
        if y_pred >= len(self.pred_counts):
            _grow(self.pred_counts, y_pred)
        self.pred_counts[y_pred] += 1

    def update_many(self, y_true, y_pred, y_prev, y_majority, proba=None,
                    weights=None, auc: bool = False) -> None:
        """`update` for arrays of class indices: the same counts, without a Python loop.
        `y_majority` is one column, or one column per view (labels × views); `proba`, the
        predictions' class probabilities (labels × classes, NaN rows for none), feeds the
        probability measures (`metrics.probabilistic.ProbabilityScore`; with `auc`, ranked:
        ROC-AUC and PR-AUC too); `weights`, the labels' Poisson bootstrap weights (labels ×
        replicates, `metrics.bootstrap`).

        >>> s = ClassificationScore()
        >>> s.update_many([0, 1, 1, 0], [0, 0, 1, 0], [0, 0, 1, 1], [0, 0, 1, 0])
        >>> s.get()["accuracy"], s.true_counts, s.pred_counts
        (0.75, [2, 2], [3, 1])
        >>> s = ClassificationScore()  # two views: cumulative and a window's
        >>> s.update_many([1, 1], [1, 1], [1, 1], [[0, 1], [1, 1]])
        >>> s.majority_correct
        [1, 2]
        """
        y_true, y_pred = np.asarray(y_true, dtype=np.int64), np.asarray(y_pred, dtype=np.int64)
        if proba is not None:
            if self.proba is None:
                self.proba = ProbabilityScore(ranked=auc)
            self.proba.update_many(y_true, proba, weights if auc else None)
        if weights is not None:
            if self.boot is None:
                self.boot = BootstrapCounts()
            self.boot.update_many(y_true, y_pred, weights)
        # (the counts as those of a single prediction column)
        ClassificationScore.update_columns([self], y_true, y_pred[:, None], y_prev, y_majority,
                                           np.ones((len(y_true), 1), dtype=bool))

    @staticmethod
    def update_columns(scores: list, y_true, predictions, y_prev, y_majority, made) -> None:
        """The counts of `update_many` for one score per prediction column (the bins) at once:
        `predictions` is labels × columns, `made` (labels × columns) marks the labels each
        column scores (no probabilities, no bootstrap weights: those go through
        `update_many`). Class and cell counts come from a table of (column, code) counts while
        it is small, else from the codes that occur: many classes cost no k² table.

        >>> a, b = ClassificationScore(), ClassificationScore()
        >>> ClassificationScore.update_columns([a, b], [1, 0], [[1, 0], [0, 1]], [0, 0],
        ...                                    [0, 0], [[True, True], [True, False]])
        >>> a.n, a.correct, a.persistent_correct, a.true_counts, a.confusion
        (2, 2, 1, [1, 1], {(0, 0): 1, (1, 1): 1})
        >>> b.n, b.correct, b.majority_correct, b.true_counts, b.pred_counts, b.confusion
        (1, 0, [0], [0, 1], [1], {(1, 0): 1})
        """
        y = np.asarray(y_true, dtype=np.int64)
        made = np.asarray(made, dtype=bool)
        predictions = np.asarray(predictions, dtype=np.int64)
        if not made.any():
            return
        columns = len(scores)

        def per_column(hits) -> list:  # labels × columns
            return np.count_nonzero(made & hits, axis=0).tolist()

        n, correct = per_column(True), per_column(predictions == y[:, None])
        persistent = per_column((y == np.asarray(y_prev))[:, None])
        majority = np.asarray(y_majority).reshape(len(y), -1)
        majority_hits = [per_column((majority[:, v] == y)[:, None])
                         for v in range(majority.shape[1])]
        k = int(max(y.max(), predictions.max())) + 1
        true = np.arange(columns) * k + y[:, None]  # (column, class) codes, labels × columns
        true_codes, pred_codes, cell_codes = (
            codes[made] if not made.all() else codes.ravel()
            for codes in (true, true - y[:, None] + predictions, true * k + predictions))

        def by_column(codes, size) -> dict:  # {column: [(code within it, count), ...]}
            groups: dict = {}
            if columns * size <= 1 << 20:  # (a sort costs more than a count of this size)
                counts = np.bincount(codes, minlength=columns * size)
                values = np.flatnonzero(counts)
                counts = counts[values]
            else:  # many classes: the codes that occur
                values, counts = np.unique(codes, return_counts=True)
            for c, code, count in zip(*np.divmod(values, size), counts):
                groups.setdefault(int(c), []).append((int(code), int(count)))
            return groups

        true_counts, pred_counts = by_column(true_codes, k), by_column(pred_codes, k)
        cells = by_column(cell_codes, k * k)
        for j, score in enumerate(scores):
            if not n[j]:
                continue
            score.n += n[j]
            score.correct += correct[j]
            score.persistent_correct += persistent[j]
            _add(score.majority_correct, [hits[j] for hits in majority_hits])
            for counts, added in ((score.true_counts, true_counts[j]),
                                  (score.pred_counts, pred_counts[j])):
                _grow(counts, added[-1][0])
                for i, count in added:
                    counts[i] += count
            for code, count in cells[j]:
                cell = divmod(code, k)
                score.confusion[cell] = score.confusion.get(cell, 0) + count

    def merge(self, other: ClassificationScore) -> ClassificationScore:
        self.n += other.n
        self.correct += other.correct
        self.persistent_correct += other.persistent_correct
        for mine, theirs in ((self.majority_correct, other.majority_correct),
                             (self.true_counts, other.true_counts),
                             (self.pred_counts, other.pred_counts)):
            _add(mine, theirs)
        _add_cells(self.confusion, other.confusion)
        if other.proba is not None:
            self.proba = copy.deepcopy(other.proba) if self.proba is None else \
                self.proba.merge(other.proba)
        if other.boot is not None:
            self.boot = copy.deepcopy(other.boot) if self.boot is None else \
                self.boot.merge(other.boot)
        return self

    def subtract(self, other: ClassificationScore) -> ClassificationScore:
        """Remove the counts of `other`, a score over a subset of the same labels (what a
        sliding window drops); exact, since the counts are integers.

        >>> a, b = ClassificationScore(), ClassificationScore()
        >>> a.update_many([0, 1, 1], [0, 0, 1], [0, 0, 1], [0, 0, 1])
        >>> b.update(0, 0, 0, 0)
        >>> a.subtract(b).accuracy, a.true_counts
        (0.5, [0, 2])
        """
        self.n -= other.n
        self.correct -= other.correct
        self.persistent_correct -= other.persistent_correct
        for mine, theirs in ((self.majority_correct, other.majority_correct),
                             (self.true_counts, other.true_counts),
                             (self.pred_counts, other.pred_counts)):
            _add(mine, theirs, -1)
        _add_cells(self.confusion, other.confusion, -1)
        if other.proba is not None:
            self.proba.subtract(other.proba)
        if other.boot is not None:
            self.boot.subtract(other.boot)
        return self

    def for_view(self, j: int) -> ClassificationScore:
        """This score as view j reports it: the Majority hit count of view j (of the only one,
        when every view shared one Majority column).

        >>> s = ClassificationScore()
        >>> s.update(1, 1, 0, (0, 1))
        >>> s.kappa_m, s.for_view(1).kappa_m
        (1.0, nan)
        """
        view = copy.copy(self)
        counts = self.majority_correct
        view.majority_correct = counts[j if len(counts) > 1 else 0:][:1]
        return view

    # -- fading factors (metrics.windows.FadingScore) ---------------------------------------
    @staticmethod
    def faded_stats(columns: dict) -> np.ndarray:
        """Per label and prediction column, the increments of the counts: [n, correct,
        persistent_correct, majority_correct, true_counts[C], pred_counts[C], hits[C]] (hits:
        the confusion matrix's diagonal, all the per-class measures need; the matrix itself
        is reported cumulative only, and C² columns per label and bin would weigh on many
        classes). Labels without a prediction add nothing. Columns: y, preds (labels ×
        columns), prev, majority (one column: the view's)."""
        y = np.asarray(columns["y"], dtype=np.int64)
        preds = np.asarray(columns["preds"], dtype=np.int64)
        if not len(y):
            return np.zeros((0, 0, 0))
        classes = np.arange(max(int(y.max()), int(preds.max())) + 1)
        scored = preds != -1
        parts = [scored, scored & (preds == y[:, None]),
                 scored & (np.asarray(columns["prev"]) == y)[:, None],
                 scored & (np.asarray(columns["majority"]) == y)[:, None]]
        true = scored[..., None] & (y[:, None, None] == classes)
        predicted = preds[..., None] == classes
        return np.concatenate([np.stack(parts, axis=-1), true, predicted, true & predicted],
                              axis=-1).astype(np.float64)

    @staticmethod
    def pad_faded(stats: np.ndarray, width: int) -> np.ndarray:
        """Widen faded statistics to `width` (more classes), zeros for the new classes."""
        k, extra = (stats.shape[-1] - 4) // 3, (width - stats.shape[-1]) // 3
        pad = np.zeros((*stats.shape[:-1], extra))
        return np.concatenate([stats[..., :4 + k], pad, stats[..., 4 + k:4 + 2 * k], pad,
                               stats[..., 4 + 2 * k:], pad], axis=-1)

    @classmethod
    def from_faded(cls, row: list) -> ClassificationScore:
        s = cls()
        k = (len(row) - 4) // 3
        s.n, s.correct, s.persistent_correct, majority_correct = row[:4]
        s.majority_correct = [majority_correct]
        s.true_counts, s.pred_counts = row[4:4 + k], row[4 + k:4 + 2 * k]
        s.confusion = {(c, c): h for c, h in enumerate(row[4 + 2 * k:]) if h}  # the diagonal
        return s

    # -- statistics -------------------------------------------------------------------------
    @property
    def accuracy(self) -> float:
        return ratio(self.correct, self.n)

    @property
    def p_random(self) -> float:
        """Accuracy of the Random classifier, Σ_i P(true=i)·P(pred=i), in class-index order."""
        if self.n == 0:
            return math.nan
        n = self.n
        k = min(len(self.true_counts), len(self.pred_counts))
        # The float expression MOA (and river) use, term by term, so κ matches them bit for bit.
        p_ran = 0.0
        for i in range(k):
            p_ran += (self.true_counts[i] / n) * (self.pred_counts[i] / n)
        return p_ran

    @property
    def kappa(self) -> float:
        """Cohen's κ = (p − p_ran) / (1 − p_ran): against the Random classifier."""
        return self._statistics()["kappa"]

    @property
    def kappa_m(self) -> float:
        """κ_m: against the Majority classifier (its hit count of view 0, `for_view`)."""
        return self._statistics()["kappa_m"]

    @property
    def kappa_t(self) -> float:
        """κ_per: against the Persistent classifier (the previous label)."""
        return self._statistics()["kappa_t"]

    @property
    def kappa_plus(self) -> float:
        """κ+ of κ and κ_per (`kappa_plus_of`).

        >>> s = ClassificationScore()
        >>> s.update_many([0, 1, 0, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 0, 0])
        >>> s.kappa, s.kappa_t, s.kappa_plus  # Persistent is always right: κ_per = −0.5/0
        (0.0, -inf, 0.0)
        """
        return self._statistics()["kappa_plus"]

    def _statistics(self) -> dict:
        """Accuracy, the κ family and the confidence statistics, each intermediate (p, p_ran,
        κ) computed once: `get` asks for all of them at each curve point of each bin."""
        n, p, p_ran = self.n, self.accuracy, self.p_random
        hits = self.majority_correct[0] if self.majority_correct else 0
        kappa, kappa_m, kappa_t = (ratio(p - base, 1 - base) for base in (
            p_ran, ratio(hits, n), ratio(self.persistent_correct, n)))
        out = {"accuracy": p, "kappa": kappa, "kappa_m": kappa_m, "kappa_t": kappa_t,
               "kappa_plus": kappa_plus_of(kappa, kappa_t)}
        out["accuracy_wilson_low"], out["accuracy_wilson_high"] = wilson_interval(self.correct, n)
        if not n:
            return out | dict.fromkeys(("accuracy_ci_hoeffding", "accuracy_ci_chernoff",
                                        "kappa_se", "kappa_z"), math.nan)
        log_term = math.log(2 / CONFIDENCE_DELTA)
        out["accuracy_ci_hoeffding"] = math.sqrt(ratio(log_term, 2 * n))
        out["accuracy_ci_chernoff"] = math.sqrt(3 * (1 - p) / n * log_term)
        out["kappa_se"] = math.sqrt(ratio(p * (1 - p), n * (1 - p_ran) ** 2))
        out["kappa_z"] = ratio(kappa, math.sqrt(ratio(p_ran, n * (1 - p_ran))))  # κ / δ0
        return out

    # -- from the per-class confusion counts (scikit-learn's definitions) ---------------------
    def _class_counts(self) -> dict:
        """{class: (hits, labels, predictions)} of each class that occurs as a label or a
        prediction, in class-index order."""
        k = max(len(self.true_counts), len(self.pred_counts))

        def padded(counts):
            return list(counts) + [0] * (k - len(counts))

        hits = [self.confusion.get((c, c), 0) for c in range(k)]
        return {c: counts for c, counts in enumerate(zip(hits, padded(self.true_counts),
                                                         padded(self.pred_counts)))
                if counts[1] or counts[2]}

    def _class_averages(self) -> dict:
        """Every measure of `PER_CLASS_AVERAGES`, from one pass over the class counts (`get`
        asks for all of them at each curve point of each bin)."""
        classes = list(self._class_counts().values())
        recalls = [h / t for h, t, _ in classes if t]
        out = {"balanced_accuracy": sum(recalls) / len(recalls) if recalls else math.nan,
               "gmean": _geometric_mean(recalls), "mcc": self._mcc(classes),
               "micro_f1": self.accuracy}
        labels = [t for _, t, _ in classes]
        support = sum(labels)
        for name, measure in (("precision", self._precision), ("recall", self._recall),
                              ("f1", self._f1)):
            values = [measure(h, t, p) for h, t, p in classes]
            macro = weighted = math.nan
            if values:
                macro = sum(values) / len(values)
                weighted = sum([v * t for v, t in zip(values, labels)]) / support if support \
                    else 0.0
            out[f"macro_{name}"], out[f"weighted_{name}"] = macro, weighted
        return out

    def _mcc(self, classes: list) -> float:
        if not self.n:
            return math.nan
        return _mcc_of(self.n, sum(h for h, _, _ in classes), sum(t * p for _, t, p in classes),
                       sum(p * p for _, _, p in classes), sum(t * t for _, t, _ in classes))

    def per_class(self, first: int | None = None) -> dict:
        """{(metric, class): value}: each class's precision, recall and F1, and the Wilson
        intervals of its precision (h_c of p_c) and recall (h_c of t_c), for the classes that
        occur as a label or a prediction (of them, those of index below `first`, if given: a
        curve point keeps no more); with probabilities, each label class's one-vs-rest
        ROC-AUC and average precision too.

        >>> s = ClassificationScore()
        >>> s.update_many([0, 0, 1, 2], [0, 1, 1, 1], [0] * 4, [0] * 4)
        >>> s.per_class()[("precision", 1)], s.per_class()[("recall", 0)]
        (0.3333333333333333, 0.5)
        >>> round(s.per_class()[("recall_wilson_low", 0)], 4)  # 1 of 2
        0.0945
        >>> sorted({c for _, c in s.per_class(first=2)})
        [0, 1]
        """
        out = {}
        for c, (h, t, p) in self._class_counts().items():
            if first is not None and c >= first:
                break  # (classes come in index order)
            precision_ci, recall_ci = wilson_interval(h, p), wilson_interval(h, t)
            values = (self._precision(h, t, p), self._recall(h, t, p), self._f1(h, t, p),
                      *precision_ci, *recall_ci)
            out.update({(metric, c): v for metric, v in zip(PER_CLASS_METRICS, values)})
        if self.proba is not None:
            out.update({key: value for key, value in self.proba.class_measures().items()
                        if first is None or key[1] < first})
        return out

    def confusion_matrix(self, first: int | None = None) -> dict:
        """{(true class, predicted class): labels}, in class-index order: the diagonal cell of
        every class that occurs (a zero too, so each class has a row and a column) and each
        other cell with a count (of them, those of classes of index below `first`, if given).
        Cells left out are zeros; k classes need not make k² cells (1 000 classes: a million).

        >>> s = ClassificationScore()
        >>> s.update_many([0, 0, 1, 2], [0, 1, 1, 0], [0] * 4, [0] * 4)
        >>> s.confusion_matrix()
        {(0, 0): 1, (0, 1): 1, (1, 1): 1, (2, 0): 1, (2, 2): 0}
        >>> s.confusion_matrix(first=2)
        {(0, 0): 1, (0, 1): 1, (1, 1): 1}
        """
        classes = [c for c in self._class_counts() if first is None or c < first]
        cells = {(c, c): 0 for c in classes}
        cells.update((cell, count) for cell, count in self.confusion.items()
                     if count and (first is None or max(cell) < first))
        return dict(sorted(cells.items()))

    @staticmethod
    def _precision(h, t, p):
        return h / p if p else 0.0

    @staticmethod
    def _recall(h, t, p):
        return h / t if t else 0.0

    @staticmethod
    def _f1(h, t, p):
        return 2 * h / (t + p) if t + p else 0.0

    @property
    def macro_precision(self) -> float:
        """The mean of the classes' precisions h_c/p_c (0 for a class never predicted).

        >>> s = ClassificationScore()
        >>> s.update_many([0, 0, 1, 2], [0, 1, 1, 1], [0] * 4, [0] * 4)
        >>> s.macro_precision  # (1/1 + 1/3 + 0) / 3
        0.4444444444444444
        """
        return self._class_averages()["macro_precision"]

    @property
    def macro_recall(self) -> float:
        return self._class_averages()["macro_recall"]

    @property
    def macro_f1(self) -> float:
        """The mean of the classes' F1 = 2h_c / (t_c + p_c).

        >>> s = ClassificationScore()
        >>> s.update_many([0, 0, 1, 2], [0, 1, 1, 1], [0] * 4, [0] * 4)
        >>> round(s.macro_f1, 4)  # (2/3 + 2/4 + 0) / 3
        0.3889
        """
        return self._class_averages()["macro_f1"]

    @property
    def weighted_precision(self) -> float:
        return self._class_averages()["weighted_precision"]

    @property
    def weighted_recall(self) -> float:
        return self._class_averages()["weighted_recall"]

    @property
    def weighted_f1(self) -> float:
        return self._class_averages()["weighted_f1"]

    @property
    def micro_f1(self) -> float:
        """F1 over all classes' counts pooled: the accuracy, when every label gets one class."""
        return self.accuracy

    @property
    def balanced_accuracy(self) -> float:
        """The mean recall over the classes that occur as labels.

        >>> s = ClassificationScore()
        >>> s.update_many([0, 0, 0, 1], [0, 0, 0, 0], [0] * 4, [0] * 4)
        >>> s.accuracy, s.balanced_accuracy
        (0.75, 0.5)
        """
        return self._class_averages()["balanced_accuracy"]

    @property
    def gmean(self) -> float:
        """The geometric mean of the recalls of the classes that occur as labels (Barandela et
        al. 2003): 0 as soon as one of them is never predicted right. A class that is only
        ever predicted has no recall and does not count (river's `GeometricMean` counts it as
        a recall of 0).

        >>> s = ClassificationScore()
        >>> s.update_many([0, 0, 0, 1], [0, 0, 1, 1], [0] * 4, [0] * 4)
        >>> round(s.gmean, 4)  # sqrt(2/3 · 1/1)
        0.8165
        >>> s.update_many([2], [0], [0], [0])  # class 2's recall is 0
        >>> s.gmean
        0.0
        >>> s = ClassificationScore()
        >>> s.update_many([0, 0, 1], [0, 2, 1], [0] * 3, [0] * 3)  # 2 is never a label
        >>> round(s.gmean, 4)  # sqrt(1/2 · 1/1)
        0.7071
        """
        return self._class_averages()["gmean"]

    @property
    def mcc(self) -> float:
        """Matthews correlation for K classes (Gorodkin 2004), 0 when a side has one class.

        >>> s = ClassificationScore()
        >>> s.update_many([0, 0, 1, 1], [0, 1, 1, 1], [0] * 4, [0] * 4)
        >>> round(s.mcc, 4)  # (3·4 − (2·1 + 2·3)) / sqrt((16 − 10)(16 − 8))
        0.5774
        """
        return self._class_averages()["mcc"]

    # -- confidence (Gama et al. 2009, section 2; Žliobaitė et al. 2015, eqs. 11-12) ----------
    @property
    def accuracy_ci_hoeffding(self) -> float:
        """Half-width ε_h = sqrt(R/(2n)·ln(2/δ)) of the interval around the error rate (and so
        the accuracy), R = 1 for the 0-1 loss, δ = 0.05.

        >>> s = ClassificationScore()
        >>> s.update_many([0] * 100, [0] * 90 + [1] * 10, [0] * 100, [0] * 100)
        >>> round(s.accuracy_ci_hoeffding, 4)
        0.1358
        """
        return self._statistics()["accuracy_ci_hoeffding"]

    @property
    def accuracy_ci_chernoff(self) -> float:
        """Half-width ε_c = sqrt(3·μ/n·ln(2/δ)), μ the error rate, δ = 0.05."""
        return self._statistics()["accuracy_ci_chernoff"]

    @property
    def accuracy_wilson_low(self) -> float:
        """The lower end of the Wilson score interval of the accuracy (1 − δ = 95 %):
        (p + z²/2n − z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n). Unlike p ± a half-width it stays
        in [0, 1] and keeps its coverage for a few labels or p near 0 or 1 (a faded view's n is
        its faded weight).

        >>> s = ClassificationScore()
        >>> s.update_many([0] * 10, [0] * 10, [0] * 10, [0] * 10)  # 10 of 10 right
        >>> round(s.accuracy_wilson_low, 4), s.accuracy_wilson_high
        (0.7225, 1.0)
        """
        return self._statistics()["accuracy_wilson_low"]

    @property
    def accuracy_wilson_high(self) -> float:
        return self._statistics()["accuracy_wilson_high"]

    @property
    def kappa_se(self) -> float:
        """Cohen's approximate standard error of κ: sqrt(p(1−p) / (N(1−p_ran)²)) (eq. 11)."""
        return self._statistics()["kappa_se"]

    @property
    def kappa_z(self) -> float:
        """z = κ/δ0, δ0 = sqrt(p_ran / (N(1−p_ran))): κ > 0 beyond chance when z > 1.65 at 5 %
        (eq. 12).

        >>> s = ClassificationScore()
        >>> s.update_many([0, 1] * 50, [0, 1] * 45 + [1, 0] * 5, [0] * 100, [0] * 100)
        >>> round(s.kappa, 2), round(s.kappa_z, 2)  # p = .9, p_ran = .5: δ0 = .1
        (0.8, 8.0)
        """
        return self._statistics()["kappa_z"]

    def get(self) -> dict[str, float]:
        """Every statistic by its metric name."""
        statistics = self._statistics() | self._class_averages()
        out = {name: statistics[name] for name in CLASSIFICATION_METRICS}
        if self.proba is not None and self.proba.n:
            # (only where a label had probabilities: a score made by subtraction, or merged
            # from blocks whose labels had none, holds an empty ProbabilityScore)
            out.update(self.proba.get())
        if self.boot is not None:
            for name, values in self.boot.replicates().items():
                out[f"{name}_bootstrap_low"], out[f"{name}_bootstrap_high"] = \
                    percentile_interval(values)
        return out

    def replicates(self) -> dict:
        """{statistic: its value in each bootstrap replicate} ({} without a bootstrap)."""
        return {} if self.boot is None else self.boot.replicates()

    # -- state ------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        d = {name: (type(v)(v) if isinstance(v, (list, dict)) else v)
             for name in self.__slots__ for v in [getattr(self, name)]}
        d["proba"] = None if self.proba is None else self.proba.to_dict()
        d["boot"] = None if self.boot is None else self.boot.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> ClassificationScore:
        s = cls()
        for name in cls.__slots__:
            v = d.get(name)
            setattr(s, name, type(v)(v) if isinstance(v, (list, dict)) else v)
        s.proba = None if d.get("proba") is None else ProbabilityScore.from_dict(d["proba"])
        s.boot = None if d.get("boot") is None else BootstrapCounts.from_dict(d["boot"])
        return s

    def __eq__(self, other) -> bool:
        return isinstance(other, ClassificationScore) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"ClassificationScore(n={self.n}, accuracy={self.accuracy:.4f})"


def prioritised_measures(scores: list) -> dict[str, list[float]] | None:
    """The measures Ψα weighs (`get`'s, less the confidence statistics) of each of `scores`, all
    scores at once: {metric: [its value in each score]}. A curve point asks each of its B + 1
    bins for them; element by element, these are the float operations of `get` in its order, so
    each value is `get`'s bit for bit. None when a score has class probabilities or bootstrap
    replicates (their measures are `get`'s alone), or when scores × classes pass a million
    (`get` needs one score's classes in memory at a time).

    >>> a, b = ClassificationScore(), ClassificationScore()
    >>> a.update_many([0, 1, 1], [0, 1, 0], [0, 0, 1], [1, 1, 1])
    >>> b.update_many([0, 1, 1], [1, 1, 1], [0, 0, 1], [1, 1, 1])
    >>> measures = prioritised_measures([a, b])
    >>> measures["accuracy"], measures["macro_f1"] == [a.macro_f1, b.macro_f1]
    ([0.6666666666666666, 0.6666666666666666], True)
    >>> many = ClassificationScore()
    >>> many.update_many([0, 20_000], [1, 1], [0, 0], [0, 0])
    >>> prioritised_measures([many] * 101) is None  # 101 bins × 20 001 classes: each get()
    True
    """
    if any((s.proba is not None and s.proba.n) or s.boot is not None for s in scores):
        return None
    k = max(max(len(s.true_counts), len(s.pred_counts)) for s in scores)
    if len(scores) * k > 1 << 20:
        return None

    def matrix(rows):  # bins × classes, zeros where a bin has no count
        return np.array([list(r) + [0] * (k - len(r)) for r in rows]).reshape(len(scores), k)

    t, p = matrix(s.true_counts for s in scores), matrix(s.pred_counts for s in scores)
    h = matrix([s.confusion.get((c, c), 0) for c in range(k)] for s in scores)
    n = np.array([s.n for s in scores])
    hits = [s.majority_correct[0] if s.majority_correct else 0 for s in scores]
    accuracy = ratios(np.array([s.correct for s in scores]), n)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_ran = np.zeros(len(scores))
        for c in range(k):  # (classes in index order, as `p_random` sums them)
            p_ran = p_ran + (t[:, c] / n) * (p[:, c] / n)
    p_ran[n == 0] = np.nan
    kappa, kappa_m, kappa_t = (ratios(accuracy - base, 1 - base) for base in (
        p_ran, ratios(np.array(hits), n),
        ratios(np.array([s.persistent_correct for s in scores]), n)))
    with np.errstate(invalid="ignore"):
        kappa_plus = np.where((kappa <= 0) | (kappa_t <= 0), 0.0,
                              np.sqrt(np.maximum(kappa, 0) * np.maximum(kappa_t, 0)))
    out = {"accuracy": accuracy, "kappa": kappa, "kappa_m": kappa_m, "kappa_t": kappa_t,
           "kappa_plus": kappa_plus}
    # The class averages: over the classes that occur as a label or a prediction.
    occurs, labelled = (t != 0) | (p != 0), t != 0
    with np.errstate(divide="ignore", invalid="ignore"):
        recalls = np.where(labelled, h / np.where(labelled, t, 1), 0.0)
        per_class = {"precision": np.where(p != 0, h / np.where(p != 0, p, 1), 0.0),
                     "recall": recalls,
                     "f1": np.where(t + p != 0, 2 * h / np.where(t + p != 0, t + p, 1), 0.0)}
    zeros = np.zeros(len(scores))
    totals = dict.fromkeys(("recalls", *per_class), zeros)
    weighted = dict.fromkeys(per_class, zeros)
    # (in the counts' own type: integer counts sum exactly, as Python's ints do)
    sums = dict.fromkeys(("hits", "tp", "pp", "tt", "support"),
                         np.zeros(len(scores), dtype=np.result_type(t, p, h)))
    for c in range(k):  # (summed in class order, one class after another, as `get` sums)
        tc, pc = t[:, c], p[:, c]
        totals["recalls"] = totals["recalls"] + np.where(labelled[:, c], recalls[:, c], 0.0)
        for name, values in per_class.items():
            totals[name] = totals[name] + np.where(occurs[:, c], values[:, c], 0.0)
            weighted[name] = weighted[name] + values[:, c] * tc
        for name, term in (("hits", h[:, c]), ("tp", tc * pc), ("pp", pc * pc),
                           ("tt", tc * tc), ("support", tc)):
            sums[name] = sums[name] + term
    classes, support = occurs.sum(axis=1), sums["support"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["balanced_accuracy"] = np.where(labelled.any(axis=1), totals["recalls"]
                                            / labelled.sum(axis=1), np.nan)
        out["gmean"] = [_geometric_mean(row[mask].tolist())
                        for row, mask in zip(recalls, labelled)]
        rows = zip(n.tolist(), *(sums[name].tolist() for name in ("hits", "tp", "pp", "tt")))
        out["mcc"] = [math.nan if not size else _mcc_of(size, hit, tp, pp, tt)
                      for size, hit, tp, pp, tt in rows]
        out["micro_f1"] = accuracy
        for name in per_class:
            out[f"macro_{name}"] = np.where(classes > 0, totals[name] / classes, np.nan)
            out[f"weighted_{name}"] = np.where(
                classes > 0, np.where(support != 0, weighted[name] / support, 0.0), np.nan)
    return {name: np.asarray(out[name], dtype=float).tolist() for name in
            CLASSIFICATION_METRICS if name not in CONFIDENCE_METRICS}


def wilson_interval(successes: float, n: float, z: float = Z) -> tuple[float, float]:
    """The Wilson score interval of a proportion successes / n ((NaN, NaN) for n = 0).

    >>> [round(v, 4) for v in wilson_interval(8, 10)]
    [0.4902, 0.9433]
    >>> wilson_interval(1e-300, 1e-300)  # a faded count near 0: nothing is known
    (0.0, 1.0)

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
    inference. Journal of the American Statistical Association 22(158), 209–212.
    """
    if not n:
        return math.nan, math.nan
    # The usual form times n/n: a faded count decays towards 0 (a class no longer predicted),
    # and 1/n² overflowed there; this form tends to [0, 1] as n does.
    z2 = z * z
    center = (successes + z2 / 2) / (n + z2)
    half = z * math.sqrt(max(successes * (n - successes) / n, 0.0) + z2 / 4) / (n + z2)
    return max(0.0, center - half), min(1.0, center + half)


def named_positive_class(classes, positive=None, declared=None):
    """The positive class of a binary stream as the stream names it: its `positive` option;
    else its second declared class (river's convention); else the class that is 1 or True, as
    a value or as text, also when the labels seen so far hold only its partner 0 or False (a
    rare fraud's first labels). None when none of these tells, or for more than two classes:
    the caller decides then (the summary takes the rarer class, a binary model and a backfill's
    score ask for the option).

    >>> named_positive_class(["ok", "fraud"], positive="fraud")
    'fraud'
    >>> named_positive_class(["ok", "fraud"], declared=["ok", "fraud"])
    'fraud'
    >>> named_positive_class([0, 1]), named_positive_class(["True", "False"])
    (1, 'True')
    >>> named_positive_class(["0.0", "1.0"])  # 0/1 as floats (a generator may give them)
    '1.0'

    >>> named_positive_class(["0"]), named_positive_class([False])  # 0s only, so far
    ('1', True)
    >>> named_positive_class(["ok", "fraud"]), named_positive_class(["0", "1", "2"])
    (None, None)
    """
    if positive is not None:
        return positive
    if declared is not None and len(declared) == 2:
        return declared[1]
    classes = list(dict.fromkeys(classes))
    if len(classes) > 2:
        return None
    one = next((c for c in classes if _is_binary_value(c, 1)), None)
    if one is not None:
        return one
    if len(classes) == 1 and _is_binary_value(classes[0], 0):
        zero = classes[0]
        if isinstance(zero, str):
            return {"0": "1", "0.0": "1.0", "False": "True"}[zero]
        return True if isinstance(zero, (bool, np.bool_)) else type(zero)(1)
    return None


def _is_binary_value(label, value: int) -> bool:
    """Whether label is `value` (0 or 1) or its bool, as a value or as text ('1', '1.0',
    'True')."""
    if isinstance(label, str):
        return label in (str(value), str(float(value)), str(bool(value)))
    try:
        return bool(label == value)
    except (TypeError, ValueError):  # (a label whose == is not a truth value)
        return False
