"""What to score (`ScoringPlan`): categories, bins, Ψα, curve points and the views that
forget (sliding windows, fading factors, event-time windows). Plain Python."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from metrics.baselines import BaselineViews
from transforms.records import stream_and_segment
from transforms.streams.delays import duration
from transforms.vocabulary import (BINNED, CUMULATIVE, FINAL, INITIAL, window_of_fading,
                                   window_of_sliding)

LABEL_AXIS = "n"


def time_window(text: str) -> tuple[str, float, float]:
    """Parse an event-time window `SIZE[/PERIOD]` -> (label, size s, period s); the period
    defaults to the size (tumbling windows) and must divide it.

    >>> time_window("1h/15min")
    ('time=1h/15min', 3600.0, 900.0)
    >>> time_window("600")
    ('time=600', 600.0, 600.0)
    """
    size_text, _, period_text = str(text).partition("/")
    size = duration(size_text)
    period = duration(period_text) if period_text else size
    if size is None or period is None:
        raise ValueError(f"time window {text!r}: give SIZE or SIZE/PERIOD as durations, e.g. "
                         f"1h, 1h/15min or 3600/900 (seconds)")
    ratio = size / period
    if abs(ratio - round(ratio)) > 1e-9 or round(ratio) < 1:
        raise ValueError(f"time window {text!r}: the period must divide the size (and be no "
                         f"longer); e.g. 1h/15min, or 1h for windows that do not overlap")
    return f"time={text}", size, period


# At most this many labels between curve points, and at least this many points on a shorter
# stream.
CURVE_EVERY, CURVE_MIN_POINTS = 1000, 25


def curve_step(labels: int | None) -> int:
    """Labels between curve points for a stream of about `labels` labels: the largest step of
    1, 2, 5 × 10^k that gives `CURVE_MIN_POINTS` points or more, at most `CURVE_EVERY` (also when
    the length is not known).

    >>> curve_step(1250), curve_step(20_000), curve_step(10**6), curve_step(None), curve_step(30)
    (50, 500, 1000, 1000, 1)
    """
    if not labels:
        return CURVE_EVERY
    steps = [m * 10 ** k for k in range(4) for m in (1, 2, 5) if m * 10 ** k <= CURVE_EVERY]
    return max([s for s in steps if s * CURVE_MIN_POINTS <= labels], default=1)


@dataclass(frozen=True)
class ScoringPlan:
    """What to score: the final category or not, B bins (0: no binned measures), the α list
    for Ψα, curve points every `curve_every` labels, and the views besides the cumulative one:
    sliding windows of the last w labels, fading factors, event-time windows (label, size,
    period); `bootstrap` R > 0: Poisson bootstrap replicates of the confusion counts (intervals
    of accuracy, κ, macro F1 and their Ψα); `auc`: the exact ROC-AUC and PR-AUC of class
    probabilities (their cost grows with the labels); `binned_probabilities`: the probability
    measures per bin and their Ψα too (from the re-predictions' class probabilities).

    Example
    -------

    >>> plan = ScoringPlan(bins=10, windows=(500,), fadings=(0.999,))
    >>> plan.categories, plan.views
    (('initial', 'final', 'binned'), ['cumulative', 'w=500', 'fading=0.999'])

    """

    final: bool = True
    bins: int = 0
    alphas: tuple = (1.0, 2.0, 10.0)
    curve_every: int = 1000
    windows: tuple = ()
    fadings: tuple = ()
    time_windows: tuple = ()
    bootstrap: int = 0
    auc: bool = False
    binned_probabilities: bool = False
    # ((stream, its own curve step), ...): where a stream's differs from `curve_every`
    curve_steps: tuple = ()

    def for_stream(self, key: str) -> ScoringPlan:
        """The plan of one stream (a scoring key: a segment's is its stream's), with its own
        curve step (`curve_steps`): a short stream beside long ones does not make their
        curves as fine as its own.

        >>> plan = ScoringPlan(curve_every=500, curve_steps=(("short", 10),))
        >>> plan.for_stream("short").curve_every, plan.for_stream("long").curve_every
        (10, 500)
        """
        step = dict(self.curve_steps).get(stream_and_segment(key)[0])
        return self if step is None else dataclasses.replace(self, curve_every=step,
                                                             curve_steps=())

    @property
    def categories(self) -> tuple:
        return (*(INITIAL, FINAL)[:1 + self.final], *((BINNED,) if self.bins else ()))

    @property
    def views(self) -> list[str]:
        """The window column's values, in report order."""
        return [CUMULATIVE, *(window_of_sliding(w) for w in self.windows),
                *(window_of_fading(a) for a in self.fadings), *(t[0] for t in self.time_windows)]

    @property
    def baseline_views(self) -> BaselineViews:
        """The views besides the cumulative one, as the replay's Majority baselines need them
        (one Majority prediction per view, in `views` order)."""
        return BaselineViews(self.windows, self.fadings,
                             tuple(size for _, size, _ in self.time_windows))

    @classmethod
    def of(cls, repredict, *, final: bool = True, bins: int = 100, alphas=(1.0, 2.0, 10.0),
           curve_every: int = 1000, windows=(), fadings=(), time_windows=(),
           bootstrap: int = 0, auc: bool = False,
           binned_probabilities: bool = False, curve_steps=()) -> ScoringPlan:
        """The plan of a run's options: `time_windows` as texts (`time_window`), and no bins
        when the re-prediction policy `repredict` is `none` (a ValueError names a bad window).

        >>> ScoringPlan.of("none", bins=10).bins, ScoringPlan.of("every_k_labels:5", bins=10).bins
        (0, 10)
        """
        return cls(final=final, bins=0 if str(repredict) == "none" else bins,
                   alphas=tuple(alphas), curve_every=curve_every, windows=tuple(windows),
                   fadings=tuple(fadings),
                   time_windows=tuple(time_window(t) for t in time_windows),
                   bootstrap=bootstrap, auc=auc,
                   binned_probabilities=binned_probabilities and str(repredict) != "none",
                   curve_steps=tuple(curve_steps))

    @property
    def fading_views(self) -> dict:
        """{α: the index of its view in `views`}."""
        return {a: self.views.index(window_of_fading(a)) for a in self.fadings}

    def bins_of(self, category: str) -> list:
        return list(range(self.bins + 2)) if category == BINNED else [None]
