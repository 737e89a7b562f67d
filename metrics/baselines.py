"""The Persistent and Majority baselines behind κ_per and κ_m, label by label.

Both baselines depend on the order of the labels, so the ordered replay feeds them each label in
label-arrival order and stores their predictions with the label; everything after the replay
stays order-free (DESIGN, "Data flow").

Definitions (MOA's BasicClassificationPerformanceEvaluator with its basic, Window and
FadingFactor estimators; Žliobaitė et al. 2015 for the baselines themselves):

- Persistent predicts the previous true label. Before the first label it predicts the first
  class: declared class 0 (MOA's `lastSeenClass = 0`), or, with undeclared classes, the first
  label's own class. It is never windowed or faded: under a window or a fading factor only its
  hit count is.
- Majority predicts the most frequent class of the class counts *including the current label*,
  ties to the class that comes first. Under a view the counts are the view's own: cumulative;
  the last w labels (sliding window); faded by α per label (fading factor: c ← α·c + [y = i]);
  the labels of the last D seconds of label time, (t − D, t] (an event-time window).

"Comes first" is the class order of the labels alone: the declared order, or first appearance
as a label. A class that a model predicts but that never is a label changes no baseline.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


def _first_max(counts: list) -> int:
    """Position of the largest count, the first one on ties.

    >>> _first_max([1, 3, 3])
    1
    """
    return max(range(len(counts)), key=counts.__getitem__)


class LabelBaselines:
    """Persistent and Majority predictions for each label, fed in label-arrival order.

    Classes are any hashable codes (the replay's class indices); `declared` lists the classes
    known before the stream starts, in their declared order. `update(y, t)` returns the
    Persistent prediction and the Majority prediction of every view, in the order
    cumulative, each window w, each fading factor α, each event-time window of D seconds.

    Parameters
    ----------
    windows
        Sizes w of sliding windows, in labels.
    fadings
        Fading factors α.
    time_windows
        Sizes D of event-time windows, in seconds of label time.
    declared
        The declared classes in their order (then Persistent starts from the first).

    Example
    -------
    >>> b = LabelBaselines(windows=(2,), fadings=(0.5,))
    >>> [b.update(y, t) for t, y in enumerate("abbaa")]
    [('a', ('a', 'a', 'a')), ('a', ('a', 'a', 'b')), ('b', ('b', 'b', 'b')), \
('b', ('a', 'a', 'a')), ('a', ('a', 'a', 'a'))]

    At the third label the cumulative counts are a:1, b:2; at the fourth a tie 2:2 goes to
    `a`, the first label's class; the window of the last two labels holds b, a (a tie: `a`);
    the faded counts at the second label are a: 0.5, b: 1.

    References
    ----------
    Žliobaitė, I., Bifet, A., Read, J., Pfahringer, B., Holmes, G. (2015). Evaluation methods
    and decision theory for classification of streaming data with temporal dependence.
    Machine Learning 98, 455–482.

    """

    def __init__(self, windows=(), fadings=(), time_windows=(), declared=()):
        self.windows = tuple(int(w) for w in windows)
        self.fadings = tuple(float(a) for a in fadings)
        self.time_windows = tuple(float(d) for d in time_windows)
        self.classes: list = []  # label order: a class's position is its rank in ties
        self._rank: dict = {}
        self.prev = None  # None: the first label's own class
        # Counts indexed by rank: cumulative, then one list per extra view.
        self.counts: list[int] = []
        self._best = 0
        self._window_counts = [[] for _ in self.windows]
        self._window_labels = [deque() for _ in self.windows]
        self._faded = [[] for _ in self.fadings]
        self._time_counts = [[] for _ in self.time_windows]
        self._time_labels = [deque() for _ in self.time_windows]
        for c in declared:
            self._rank_of(c)
        if self.classes:
            self.prev = self.classes[0]

    @property
    def views(self) -> int:
        """How many Majority predictions `update` returns (1: a bare class, not a tuple)."""
        return 1 + len(self.windows) + len(self.fadings) + len(self.time_windows)

    def _rank_of(self, y) -> int:
        r = self._rank.get(y)
        if r is None:
            r = self._rank[y] = len(self.classes)
            self.classes.append(y)
            for counts in (self.counts, *self._window_counts, *self._faded, *self._time_counts):
                counts.append(0)
        return r

    def update(self, y, t: float = 0.0):
        """The baselines' predictions for label `y` at label time `t`: (Persistent, Majority);
        Majority is one class when there are no windows, fading factors or event-time windows,
        else a tuple with one class per view (cumulative first)."""
        r = self._rank_of(y)
        prev = y if self.prev is None else self.prev
        self.prev = y
        counts = self.counts
        counts[r] += 1
        best = self._best
        if counts[r] > counts[best] or (counts[r] == counts[best] and r < best):
            self._best = best = r
        if self.views == 1:
            return prev, self.classes[best]
        majority = [best]
        for w, window, labels in zip(self.windows, self._window_counts, self._window_labels):
            window[r] += 1
            labels.append(r)
            if len(labels) > w:
                window[labels.popleft()] -= 1
            majority.append(_first_max(window))
        for i, alpha in enumerate(self.fadings):
            faded = [alpha * c for c in self._faded[i]]
            faded[r] += 1.0
            self._faded[i] = faded
            majority.append(_first_max(faded))
        for d, window, labels in zip(self.time_windows, self._time_counts, self._time_labels):
            window[r] += 1
            labels.append((t, r))
            while labels[0][0] <= t - d:
                window[labels.popleft()[1]] -= 1
            majority.append(_first_max(window))
        return prev, tuple(self.classes[m] for m in majority)


@dataclass(frozen=True)
class BaselineViews:
    """The views whose Majority baseline each label carries (see `LabelBaselines`): what a
    replay needs to know of the scoring plan.

    Parameters
    ----------
    windows
        Sizes w of sliding windows, in labels.
    fadings
        Fading factors α.
    time_windows
        Sizes D of event-time windows, in seconds of label time.

    >>> BaselineViews(windows=(100,)).start(declared=[0, 1]).update(1)
    (0, (1, 1))

    References
    ----------
    Žliobaitė, I., Bifet, A., Read, J., Pfahringer, B., Holmes, G. (2015). Evaluation
    methods and decision theory for classification of streaming data with temporal dependence.
    Machine Learning 98(3), 455–482.
    """

    windows: tuple = ()
    fadings: tuple = ()
    time_windows: tuple = ()  # sizes D in seconds

    def start(self, declared=()) -> LabelBaselines:
        return LabelBaselines(self.windows, self.fadings, self.time_windows, declared)
