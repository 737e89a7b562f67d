"""Forgetting (Gama et al.): sliding windows over the last w labels, and fading factors.

Scoring stays order-free by cutting the label sequence into panes at fixed label numbers: every
label knows its number n, so each pane's counts can be assembled from any bundles in any order,
and a window over the last w labels ending at a curve point P is `cumulative(P) −
cumulative(P − w)` — exact, because the counts are integers (and the regression sums exact).
`pane_ends` puts a pane boundary wherever such a difference needs one.

A fading factor weighs the label k steps back by α^k: E = S/B with S = L + α·S and B = 1 + α·B
(Gama's corrected estimator; paper 004, eq. for the fading prequential error). `FadingScore`
applies that recurrence to every statistic behind a score (the counts of accuracy and the κ
family, the error sums of MAE and RMSE), so every measure has its faded version. Fed pane by pane
in label order, it performs exactly the floating-point operations of the plain sequential loop,
so its numbers equal it bit for bit whatever the bundle split.
"""

from __future__ import annotations

import numpy as np
from scipy.signal import lfilter

from metrics.classification import ClassificationScore
from metrics.exact import ExactSum
from metrics.regression import RegressionScore

NO_CLASS = -1


def pane_ends(n, every: int, windows=(), total: int | None = None) -> np.ndarray:
    """The pane each label number falls in, named by its last label number.

    Pane boundaries: every curve point k·every, the last label `total`, and for each window size
    w the points k·every − w and total − w where a window's difference starts.

    >>> pane_ends([1, 3, 4, 5, 7], every=4, total=7).tolist()
    [4, 4, 4, 7, 7]
    >>> pane_ends([1, 2, 3, 4, 5, 6, 7], every=4, windows=[3], total=7).tolist()
    [1, 4, 4, 4, 5, 7, 7]
    """
    n = np.asarray(n, dtype=np.int64)
    end = -(-n // every) * every
    if total is not None:
        end = np.minimum(end, total)
    for w in windows:
        end = np.minimum(end, -(-(n + w) // every) * every - w)
        if total is not None and total - w >= 1:
            end = np.where(n <= total - w, np.minimum(end, total - w), end)
    return end


def _class_stats(y, preds, prev, majority, n_classes: int) -> np.ndarray:
    """Per label and prediction column, the increments of ClassificationScore's counts:
    [n, correct, persistent_correct, majority_correct, true_counts[C], pred_counts[C]]."""
    scored = preds != NO_CLASS
    classes = np.arange(n_classes)
    parts = [scored, scored & (preds == y[:, None]), scored & (prev == y)[:, None],
             scored & (majority == y)[:, None]]
    stats = np.concatenate(
        [np.stack(parts, axis=-1),
         scored[..., None] & (y[:, None, None] == classes),
         preds[..., None] == classes], axis=-1)
    return stats.astype(np.float64)


def _regression_stats(y, preds) -> np.ndarray:
    """Per label and column: [n, |e|, e²] (zeros where no prediction was made)."""
    scored = ~np.isnan(preds)
    e = np.where(scored, y[:, None] - preds, 0.0)
    return np.stack([scored.astype(np.float64), np.abs(e), e * e], axis=-1)


class FadingScore:
    """Faded versions of a score's statistics for several prediction columns at once (e.g. the
    B+2 bins), fed with labels in label order.

    Each label is one step of the recurrence S = L + α·S for every statistic; a label whose
    prediction is missing in a column contributes 0 there (it still ages the others).

    >>> f = FadingScore(0.5, "classification")
    >>> f.update_many(y=[0, 1, 1], preds=[[0], [0], [1]], prev=[0, 0, 1], majority=[0, 0, 1])
    >>> f.scores()[0].accuracy  # S = 1 + .5(0 + .5·1) = 1.25; B = 1 + .5(1 + .5) = 1.75
    0.7142857142857143
    """

    def __init__(self, alpha: float, task: str):
        self.alpha = float(alpha)
        self.classification = task == "classification"
        self.state: np.ndarray | None = None  # (columns, statistics)
        self.n_classes = 0

    def update_many(self, y, preds, prev=None, majority=None) -> None:
        """Labels in label order: `y` (m,), `preds` (m, columns); for classification also the
        Persistent and Majority baselines' predictions (m,)."""
        preds = np.asarray(preds)
        if not len(preds):
            return
        if self.classification:
            y = np.asarray(y, dtype=np.int64)
            preds = preds.astype(np.int64)
            seen = max(int(y.max()), int(preds.max())) + 1
            if seen > self.n_classes:
                self._grow(seen)
            stats = _class_stats(y, preds, np.asarray(prev, dtype=np.int64),
                                 np.asarray(majority, dtype=np.int64), self.n_classes)
        else:
            stats = _regression_stats(np.asarray(y, dtype=np.float64), preds.astype(np.float64))
        if self.state is None:
            self.state = np.zeros(stats.shape[1:])
        # lfilter([1], [1, -α]) runs y[i] = x[i] + α·y[i-1] in C: the sequential loop's own
        # operations, started from the state carried over from the previous pane.
        out, _ = lfilter([1.0, 0.0], [1.0, -self.alpha], stats, axis=0,
                         zi=(self.alpha * self.state)[None])
        self.state = out[-1]

    def _grow(self, n_classes: int) -> None:
        if self.state is not None:
            k = self.n_classes
            pad = np.zeros((self.state.shape[0], n_classes - k))
            self.state = np.concatenate([self.state[:, :4 + k], pad, self.state[:, 4 + k:], pad],
                                        axis=1)
        self.n_classes = n_classes

    def scores(self) -> list:
        """One score per column, whose counts (or sums) are the faded ones."""
        if self.state is None:
            return []
        out = []
        for row in self.state.tolist():
            if self.classification:
                s = ClassificationScore()
                k = self.n_classes
                s.n, s.correct, s.persistent_correct, s.majority_correct = row[:4]
                s.true_counts, s.pred_counts = row[4:4 + k], row[4 + k:]
            else:
                s = RegressionScore()
                s.n = row[0]
                s.abs_error, s.squared_error = ExactSum([row[1]]), ExactSum([row[2]])
            out.append(s)
        return out
