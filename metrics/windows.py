"""Forgetting (Gama et al.): sliding windows over the last w labels, and fading factors.

Scoring stays order-free by cutting the label sequence into blocks at fixed label numbers: every
label knows its number n, so each block's counts can be assembled from any bundles in any order,
and a window over the last w labels ending at a curve point P is `cumulative(P) −
cumulative(P − w)` — exact, because the counts are integers (and the regression sums exact).
`block_ends` puts a block boundary wherever such a difference needs one.

A fading factor weighs the label k steps back by α^k: E = S/B with S = L + α·S and B = 1 + α·B
(Gama's corrected estimator; Gama et al. 2009, eq. for the fading prequential error). `FadingScore`
applies that recurrence to every statistic behind a score (the counts of accuracy and the κ
family, the error sums of MAE and RMSE), so every measure has its faded version. Fed block by block
in label order, it performs exactly the floating-point operations of the plain sequential loop,
so its numbers equal it bit for bit whatever the bundle split; `merge` combines accumulators of
consecutive label ranges (rescaling by α to the later reference), equal up to rounding.
"""

from __future__ import annotations

import numpy as np


def block_ends(n, every: int, windows=()) -> np.ndarray:
    """The block each label number falls in, named by the first boundary at or after it.

    LabelBlock boundaries: every curve point k·every and, for each window size w, the points
    k·every − w where a window's difference starts. They depend on nothing but the label
    number, so a label's block is known when the label arrives (the windows at the stream's
    last label are taken from its last labels instead: `transforms.scoring.outcomes.tail_scores`).

    >>> block_ends([1, 3, 4, 5, 7], every=4).tolist()
    [4, 4, 4, 8, 8]
    >>> block_ends([1, 2, 3, 4, 5, 6, 7], every=4, windows=[3]).tolist()
    [1, 4, 4, 4, 5, 8, 8]
    """
    n = np.asarray(n, dtype=np.int64)
    end = -(-n // every) * every
    for w in windows:
        end = np.minimum(end, -(-(n + w) // every) * every - w)
    return end


class FadingScore:
    """Faded versions of a score's statistics for several prediction columns at once (e.g. the
    B+2 bins), fed with labels in label order.

    Each label is one step of the recurrence S = L + α·S for every statistic; a label whose
    prediction is missing in a column contributes 0 there (it still ages the others). The
    score class says which statistics (`faded_stats`) and how to read them back (`from_faded`).

    Parameters
    ----------
    alpha
        The fading factor α, 0 < α < 1.
    score_class
        The score faded (`ClassificationScore`, `RegressionScore` or `PairScore`).

    >>> from metrics import ClassificationScore
    >>> f = FadingScore(0.5, ClassificationScore)
    >>> f.update({"y": [0, 1, 1], "preds": [[0], [0], [1]], "prev": [0, 0, 1],
    ...           "majority": [0, 0, 1]})
    >>> f.scores()[0].accuracy  # S = 1 + .5(0 + .5·1) = 1.25; B = 1 + .5(1 + .5) = 1.75
    0.7142857142857143

    References
    ----------
    Gama, J., Sebastião, R., Rodrigues, P. P. (2009). Issues in evaluation of stream
    learning algorithms. Proceedings of the 15th ACM SIGKDD International Conference on
    Knowledge Discovery and Data Mining, 329–338.
    """

    def __init__(self, alpha: float, score_class):
        self.alpha = float(alpha)
        self.score_class = score_class
        self.state: np.ndarray | None = None  # (columns, statistics)
        self.labels = 0  # labels folded in: the state's reference point
        self.origin: float | None = None  # where the statistics are taken from (a centre)

    def __deepcopy__(self, memo) -> FadingScore:
        # (curves keep a copy at every curve point the fold passes)
        out = FadingScore(self.alpha, self.score_class)
        out.state = None if self.state is None else self.state.copy()
        out.labels, out.origin = self.labels, self.origin
        return out

    def update(self, columns: dict) -> None:
        """One block's labels in label order, as the score class's `faded_stats` reads them
        (taken from the first block's `faded_centre`, for a score class that has one)."""
        centre = getattr(self.score_class, "faded_centre", None)
        if centre is not None and len(columns["y"]):
            if self.origin is None:
                self.origin = centre(columns)
            columns = {**columns, "origin": self.origin}
        self._fold(self.score_class.faded_stats(columns))

    def age(self, labels: int) -> None:
        """`labels` labels that add nothing here (none has a prediction in any column) but age
        the rest: the recurrence's own steps with zero terms.

        >>> from metrics import RegressionScore
        >>> f = FadingScore(0.5, RegressionScore)
        >>> f.update({"y": [1.0], "preds": [[0.0]]})
        >>> f.age(2)
        >>> f.state[0, :2].tolist(), f.labels  # n, Σ|e|: 1 · 0.5²
        ([0.25, 0.25], 3)
        """
        if self.state is not None and labels:
            self._fold(np.zeros((labels, *self.state.shape)))

    def _fold(self, stats: np.ndarray) -> None:
        if not len(stats):
            return
        if self.state is None:
            self.state = np.zeros(stats.shape[1:])
        elif stats.shape[-1] > self.state.shape[-1]:  # more classes seen: pad the counts
            self.state = self.score_class.pad_faded(self.state, stats.shape[-1])
        elif stats.shape[-1] < self.state.shape[-1]:
            stats = self.score_class.pad_faded(stats, self.state.shape[-1])
        # lfilter([1], [1, -α]) runs y[i] = x[i] + α·y[i-1] in C: the sequential loop's own
        # operations, started from the state carried over from the previous block. (Imported
        # here: scipy.signal alone takes ~0.7 s to import, and few runs fade.)
        from scipy.signal import lfilter

        finite, special = np.isfinite(stats), None
        if not finite.all():
            # An infinite term (an error whose square overflowed) is summed apart, as
            # `ExactSum` keeps it: lfilter's other tap multiplies it by 0, making a NaN of it,
            # where α^k·∞ stays ∞ (and ∞ − ∞ is NaN).
            special = np.cumsum(np.where(finite, 0.0, stats), axis=0)
            stats = np.where(finite, stats, 0.0)
        out, _ = lfilter([1.0, 0.0], [1.0, -self.alpha], stats, axis=0,
                         zi=(self.alpha * self.state)[None])
        if special is not None:
            out = np.where(np.isfinite(special), out, out + special)
        self.state = out[-1]
        self.labels += len(stats)

    def merge(self, later: FadingScore) -> FadingScore:
        """Fold in the accumulator of the labels that directly follow these: rescale this
        state to the later one's reference, S = α^m·S + S_later (m = its label count). The
        same estimate as one pass, up to rounding; the pipeline continues one accumulator block
        by block instead, which is the one pass exactly.

        >>> from metrics import RegressionScore
        >>> one, a, b = (FadingScore(0.5, RegressionScore) for _ in range(3))
        >>> cols = {"y": [1.0, 2.0, 0.0], "preds": [[0.0], [0.0], [0.0]]}
        >>> one.update(cols)
        >>> a.update({k: v[:1] for k, v in cols.items()})
        >>> b.update({k: v[1:] for k, v in cols.items()})
        >>> a.merge(b).scores()[0].mae == one.scores()[0].mae  # (0 + .5(2 + .5·1)) / 1.75
        True
        """
        if later.state is None:
            return self
        if self.state is None:
            self.state, self.labels = later.state.copy(), later.labels
            self.origin = later.origin
            return self
        width = max(self.state.shape[-1], later.state.shape[-1])
        mine, theirs = (self.score_class.pad_faded(s, width) if s.shape[-1] < width else s
                        for s in (self.state, later.state))
        if later.origin != self.origin:  # from this one's centre
            theirs = self.score_class.shift_faded(theirs, later.origin - self.origin)
        self.state = self.alpha ** later.labels * mine + theirs
        self.labels += later.labels
        return self

    def scores(self) -> list:
        """One score per column, whose counts (or sums) are the faded ones; a column whose
        faded weight (its first statistic, the labels it scored) has fallen below the normal
        floats holds none: there α·S rounds back to S, so its sums have stopped fading and
        tend to one value (a model that has not answered for ~7 000 labels at α = 0.9).

        >>> from metrics import RegressionScore
        >>> f = FadingScore(0.9, RegressionScore)
        >>> f.update({"y": [1.0, 2.0], "preds": [[0.0], [0.0]]})
        >>> f.age(7000)
        >>> f.scores()[0].mae
        nan
        """
        if self.state is None:
            return []
        state = self.state.copy()
        state[state[:, 0] < np.finfo(np.float64).tiny] = 0.0
        return [self.score_class.from_faded(row) for row in state.tolist()]
