"""Thresholds on a run's results (`--fail-if`): a scheduled job fails, with exit status 3 and a
line per threshold crossed, when a measure crosses one — after the results are written."""

from __future__ import annotations

import difflib
import math
import operator
import re
from dataclasses import dataclass

import pandas as pd

from metrics import CLASSIFICATION_METRICS, PER_CLASS_METRICS, REGRESSION_METRICS
from metrics.bootstrap import BOOTSTRAP_METRICS
from metrics.probabilistic import (AUC_BOOTSTRAP_METRICS, PER_CLASS_PROBABILITY_METRICS,
                                   PROBABILITY_METRICS, RANK_METRICS)
from transforms.backfill.logs import nothing_to_score_yet
from transforms.errors import ConfigError
from transforms.vocabulary import CUMULATIVE

# The exit status of a run whose results crossed a threshold.
THRESHOLD_FAILED = 3

_OPERATORS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
# MODEL: a model's name as the results show it, spaces and colons too ("one-hot-text |
# gaussian-nb", 'HoeffdingTreeClassifier{"grace_period": 50}'), up to the colon before the
# category.
_PATTERN = re.compile(r"""^\s*(?:(?P<model>\S.*?)\s*:\s*)?(?P<category>initial|final)\s+
                          (?P<metric>\w+)\s*(?:\((?P<cls>[^)]*)\))?\s*
                          (?:\[(?P<segment>[^\]]+)\])?\s*(?P<window>\S+=\S+)?\s*
                          (?P<op><=|>=|<|>)\s*(?P<value>\S+)\s*$""", re.VERBOSE)
_METRICS = {*CLASSIFICATION_METRICS, *REGRESSION_METRICS, *PER_CLASS_METRICS,
            *PROBABILITY_METRICS, *PER_CLASS_PROBABILITY_METRICS, *BOOTSTRAP_METRICS,
            *AUC_BOOTSTRAP_METRICS}


@dataclass(frozen=True)
class Threshold:
    """`[MODEL:] initial|final METRIC [(CLASS)] [[SEGMENT]] [WINDOW] OP VALUE`: crossed when
    a (stream, model)'s end-of-stream measure satisfies `OP VALUE` (`<`, `<=`, `>`, `>=`), or is
    undefined (NaN: nothing scored), or does not exist (a class that never occurred). Without
    MODEL it holds for every model; WINDOW is `cumulative` (default), `w=W`, `fading=A` or
    `time=…`. Without SEGMENT it holds for the whole stream; `[country=DE]` for that --segment
    slice, `[country]` for every slice of the column.

    >>> t = Threshold.parse("initial precision (fraud) < 0.8")
    >>> t.metric, t.label_class, t.window, t.crossed(0.75), t.crossed(0.85)
    ('precision', 'fraud', 'cumulative', True, False)
    >>> Threshold.parse("nb: final accuracy w=1000 <= 0.9").model
    'nb'
    >>> Threshold.parse("one-hot-text | gaussian-nb: initial accuracy < 0.9").model
    'one-hot-text | gaussian-nb'
    >>> Threshold.parse("initial recall (fraud) [country=DE] w=500 < 0.5").segment
    'country=DE'
    """

    text: str
    category: str
    metric: str
    op: str
    value: float
    label_class: str | None = None
    window: str = CUMULATIVE
    model: str | None = None
    segment: str | None = None

    @classmethod
    def parse(cls, text: str) -> Threshold:
        match = _PATTERN.match(text)
        if not match:
            raise ConfigError(f"--fail-if {text!r}: not [MODEL:] initial|final METRIC [(CLASS)] "
                              f"[[SEGMENT]] [WINDOW] OP VALUE; e.g. \"initial precision (fraud) "
                              f"< 0.8\"")
        if match["metric"] not in _METRICS:
            close = difflib.get_close_matches(match["metric"], sorted(_METRICS), n=1)
            raise ConfigError(f"--fail-if {text!r}: unknown measure {match['metric']!r}; " + (
                f"did you mean {close[0]!r}?" if close else
                f"known: {', '.join(sorted(_METRICS))}"))
        try:
            value = float(match["value"])
        except ValueError:
            value = math.nan
        if not math.isfinite(value):  # (`< nan` is never crossed, `< inf` always)
            raise ConfigError(f"--fail-if {text!r}: {match['value']!r} is not a finite "
                              f"number; e.g. 0.8") from None
        return cls(text.strip(), match["category"], match["metric"], match["op"], value,
                   match["cls"].strip() if match["cls"] else None,
                   match["window"] or CUMULATIVE, match["model"],
                   match["segment"].strip() if match["segment"] else None)

    @property
    def task(self) -> str:
        """The task whose models report the measure: `regression` or `classification`."""
        return "regression" if self.metric in REGRESSION_METRICS else "classification"

    def crossed(self, value: float) -> bool:
        return math.isnan(value) or _OPERATORS[self.op](value, self.value)

    def failures(self, summary: pd.DataFrame, models: list[str], pending: dict | None = None,
                 pending_segments: dict | None = None, idle: tuple = ()) -> list[str]:
        """A line for each (stream, model) whose measure crossed the threshold; with a stream's
        instances still `pending` ({stream: how many}, a backfill's; of its segments in
        `pending_segments`, {stream: {segment: how many}}), how far a cumulative proportion,
        of the stream or a segment, may still move (`_provisional`). The (stream, model) pairs
        `idle` are not checked (`idle_models`)."""
        rows = summary[(summary["category"] == self.category)
                       & (summary["metric"] == self.metric)
                       & (summary["window"] == self.window)]
        if self.label_class is None:
            rows = rows[rows["class"].isna()]
        else:
            rows = rows[rows["class"] == self.label_class]
        segments = summary["segment"] if "segment" in summary else \
            pd.Series(None, index=summary.index, dtype=object)
        lines = []
        for model in [self.model] if self.model else models:
            for stream in dict.fromkeys(summary.loc[summary["model"] == model, "stream"]):
                if (stream, model) in idle:
                    continue
                for segment in self._segments(segments[summary["stream"] == stream]):
                    mine = rows[(rows["stream"] == stream) & (rows["model"] == model)
                                & (segments[rows.index] == segment if segment else
                                   segments[rows.index].isna())]
                    value = float(mine["value"].iloc[0]) if len(mine) else math.nan
                    if self.crossed(value):
                        what = self._missing(summary[
                            (summary["stream"] == stream) & (summary["model"] == model)
                            & (segments == segment if segment else segments.isna())]) \
                            if mine.empty else "it is undefined: nothing scored" \
                            if math.isnan(value) else f"it is {value:.4g}"
                        where = " / ".join(filter(None, (stream, model, segment)))
                        what += self._provisional(summary, stream, model, segment, pending,
                                                  pending_segments)
                        lines.append(f"{where}: {self.text} ({what})")
        return lines

    def _provisional(self, summary, stream, model, segment, pending: dict | None,
                     pending_segments: dict | None) -> str:
        """What a crossing's line adds while the stream's (or the segment's) instances wait
        for their labels: how far the measure may still move, or "" (none pending, not a
        cumulative proportion). Without the segment's own count, its bound takes every waiting
        instance of the stream as the segment's."""
        by_segment = (pending_segments or {}).get(stream) if segment else None
        waiting = by_segment.get(segment, 0) if by_segment is not None else \
            (pending or {}).get(stream, 0)
        if not waiting or self.window != CUMULATIVE:
            return ""
        from pipelines.maturity import proportion_bounds

        name = self.metric if self.label_class is None else f"{self.metric} ({self.label_class})"
        bound = proportion_bounds(summary[(summary["stream"] == stream)
                                          & (summary["model"] == model)], waiting, segment).get(
            (model, self.category, name))
        of_stream = "" if not segment else " of this segment" if by_segment is not None \
            else " of the stream (some may be this segment's)"
        return "" if bound is None else \
            f"; {waiting:,} instances{of_stream} still wait for their label: it may still move " \
            f"by up to {bound:.4f}"

    def _missing(self, results: pd.DataFrame) -> str:
        """Why one (stream, model, slice)'s `results` have no row of this measure: the slice,
        the window or the class it names is not among theirs.

        >>> rows = pd.DataFrame({"category": "initial", "metric": "recall", "class": ["a", "b"],
        ...                      "window": "cumulative"})
        >>> Threshold.parse("initial recall (c) < 0.5")._missing(rows)
        "the results have no such measure: no class 'c'; classes: a, b"
        >>> Threshold.parse("initial recall (a) w=50 < 0.5")._missing(rows)
        "the results have no such measure: no window 'w=50'; windows: cumulative"
        >>> Threshold.parse("initial recall < 0.5")._missing(rows)
        'the results have no such measure: recall is one per class; name one, e.g. (a)'
        """
        why = "the results have no such measure"
        if results.empty:
            return f"{why}: no slice {self.segment}" if self.segment else why
        measure = results[(results["category"] == self.category)
                          & (results["metric"] == self.metric)]
        windows = list(dict.fromkeys(measure["window"]))
        if windows and self.window not in windows:
            return f"{why}: no window {self.window!r}; windows: {', '.join(windows)}"
        classes = list(dict.fromkeys(measure["class"].dropna().astype(str)))
        if classes and self.label_class is None:
            return f"{why}: {self.metric} is one per class; name one, e.g. ({classes[0]})"
        if classes and self.label_class not in classes:
            return f"{why}: no class {self.label_class!r}; classes: {', '.join(classes)}"
        return why

    def _segments(self, present: pd.Series) -> list:
        """The slices this threshold holds for among a stream's `present` segments: the whole
        stream (None), one named slice, or every slice of a column (none reported: the
        column itself, which then has no such measure)."""
        if self.segment is None or "=" in self.segment:
            return [self.segment]
        mine = sorted(s for s in present.dropna().unique()
                      if s.split("=", 1)[0] == self.segment)
        return mine or [f"{self.segment}=*"]


def parse_thresholds(texts: list[str], models: list[str],
                     segments: list[str] | None = None) -> list[Threshold]:
    """Each `--fail-if` parsed, before the run; a model it names must be one of `models`, a
    segment one of the `segments` columns' (when given).

    >>> [t.op for t in parse_thresholds(["initial accuracy < 0.9", "final mae > 2"], ["m"])]
    ['<', '>']
    """
    thresholds = [Threshold.parse(text) for text in texts]
    for t in thresholds:
        if t.model is not None and t.model not in models:
            raise ConfigError(f"--fail-if {t.text!r}: no model {t.model!r}; models: {models}")
        column = t.segment.split("=", 1)[0] if t.segment else None
        if column is not None and segments is not None and column not in segments:
            raise ConfigError(f"--fail-if {t.text!r}: {column!r} is not a --segment column "
                              f"(segments: {segments}); add --segment {column}")
    return thresholds


def check_thresholds(thresholds: list[Threshold], tasks: dict[str, str], views: list[str],
                     final: str | None, probabilities: bool, auc: bool,
                     bootstrap: int) -> None:
    """A ConfigError, before the run, for a threshold on a measure the run will not report
    (it would be crossed at the end of every run): a model or every model of another task,
    a window (`views`) or the final predictions (`final`: why there are none, or None) it
    does not score, class probabilities it does not keep, AUCs or bootstrap intervals it was
    not asked for. `tasks`: each model's, by name (a `--cv` fold's too).

    >>> t = parse_thresholds(["initial accuracy w=100 < 0.8"], ["nb"])
    >>> check_thresholds(t, {"nb": "classification"}, ["cumulative", "w=500"], None, True,
    ...                  False, 0)
    Traceback (most recent call last):
    ...
    transforms.errors.ConfigError: --fail-if 'initial accuracy w=100 < 0.8': the run \
reports no window w=100 (windows: cumulative, w=500); add --window 100
    """
    flags = {"w": "--window", "fading": "--fading", "time": "--time-window"}
    for t in thresholds:
        where = f"--fail-if {t.text!r}"
        if t.model and tasks.get(t.model) != t.task:
            raise ConfigError(f"{where}: {t.metric} is a measure of {t.task} models, and "
                              f"{t.model} is a {tasks.get(t.model)} model; name one of its "
                              f"measures")
        if t.task not in tasks.values():
            raise ConfigError(f"{where}: {t.metric} is a measure of {t.task} models, and the "
                              f"run has none; name a measure of its models' task")
        if t.window not in views:
            kind, _, size = t.window.partition("=")
            raise ConfigError(f"{where}: the run reports no window {t.window} (windows: "
                              f"{', '.join(views)})" + (f"; add {flags[kind]} {size}"
                                                        if kind in flags else ""))
        if t.category == "final" and final is not None:
            raise ConfigError(f"{where}: the run scores no final prediction ({final}); "
                              f"set it on the initial ones")
        if t.metric in {*PROBABILITY_METRICS, *PER_CLASS_PROBABILITY_METRICS,
                        *AUC_BOOTSTRAP_METRICS} and not probabilities:
            raise ConfigError(f"{where}: {t.metric} is a measure of class probabilities, "
                              f"which --no-probabilities leaves out; leave one of them out")
        if t.metric in {*RANK_METRICS, *PER_CLASS_PROBABILITY_METRICS,
                        *AUC_BOOTSTRAP_METRICS} and not auc:
            raise ConfigError(f"{where}: {t.metric} comes with --auc; add it")
        if t.metric in {*BOOTSTRAP_METRICS, *AUC_BOOTSTRAP_METRICS} and not bootstrap:
            raise ConfigError(f"{where}: {t.metric} comes with --bootstrap R; add it, e.g. "
                              f"--bootstrap 200")


def idle_models(counts: list[dict]) -> list[tuple[str, str]]:
    """The (stream, model) pairs of a backfill's manifest `counts` whose log holds no
    prediction of a labelled instance of the range (`nothing_to_score_yet`). Such a model has
    nothing to check a threshold against yet: an alert on it would be a false one every night
    it is not live.

    >>> idle_models([{"stream": "s", "model": "v1", "logged_predictions": 9,
    ...               "unmatched_outside_range": 2, "unmatched_pending": 1},
    ...              {"stream": "s", "model": "v2", "logged_predictions": 5,
    ...               "unmatched_outside_range": 4, "unmatched_pending": 1},
    ...              {"stream": "s", "model": "nb"}])  # (a run's: no log)
    [('s', 'v2')]
    """
    return [(c["stream"], c["model"]) for c in counts
            if "logged_predictions" in c and nothing_to_score_yet(c)]


def crossed_thresholds(thresholds: list[Threshold], summary: pd.DataFrame,
                       models: list[str], pending: dict | None = None,
                       pending_segments: dict | None = None, idle: tuple = ()) -> list[str]:
    """Every line of every threshold crossed, in the order the thresholds were given (with
    `pending`, {stream: instances still waiting for their label}, and `pending_segments`,
    {stream: {segment: such instances}}, how far a proportion may still move); the (stream,
    model) pairs `idle` are not checked (`idle_models`).

    >>> summary = pd.DataFrame({"stream": "s", "model": "m", "category": "initial",
    ...                         "metric": "accuracy", "window": "cumulative", "class": [None],
    ...                         "value": [0.7]})
    >>> crossed_thresholds([Threshold.parse("initial accuracy < 0.8")], summary, ["m"])
    ['s / m: initial accuracy < 0.8 (it is 0.7)']
    """
    return [line for t in thresholds
            for line in t.failures(summary, models, pending, pending_segments, idle)]
