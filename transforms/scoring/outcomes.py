"""Scoring label outcomes: order-free, so it parallelises however Beam splits the work.

Each outcome carries its label number `n` and label time, so every reported number is a merge of
per-pane partial scores:

    outcomes -> partial scores keyed by (stream, model, category, axis, pane) -> CombinePerKey
             -> per (stream, model, category, axis) one pass over the sorted panes -> rows
    outcomes -> each key's last max(w) outcomes (CombinePerKey) -> windows at the last label ⤴
    panes' rows -> fading factors folded in label order (CombinePerKey, InLabelOrder)        ⤴

Axis `n` cuts the label sequence at the curve points (every `curve_every` labels) and where a
sliding window of the last w labels starts (`metrics.windows.pane_ends`); the pass keeps the
cumulative score and takes windows as exact differences of cumulative scores; the fading
factors are folded over each curve's labels in label order as they come (`FadingCurve`), with
their state kept at every curve point. Nothing waits for the end of the stream: all three
branches are combines that Beam pre-aggregates where the outcomes are made, so the outcomes
themselves are never held (constant memory for a long replay). Each event-time window size D
with period P has its own axis of panes [kP, (k+1)P) of label time, and the window ending at
(k+1)P is the difference of cumulative scores D/P panes apart — Beam's `SlidingWindows(D, P)`
on label time.

Categories: `initial` and `final` (one score each), `binned` (one per bin b = 0..B+1, Λ(T,b)) and,
derived from the binned scores of every view, `intermediate` (Ψα for each α).
"""

from __future__ import annotations

import bisect
import copy
import math
from collections.abc import Iterator
from dataclasses import dataclass

import apache_beam as beam
import numpy as np
import pyarrow as pa

from metrics import NOT_PRIORITISED, ClassificationScore, RegressionScore
from metrics.baselines import BaselineViews
from metrics.binning import NO_CLASS, binned_many, prioritised
from metrics.comparison import PairScore
from metrics.windows import FadingScore, pane_ends
from transforms.records import MeasureKey
from transforms.scoring.label_order import InLabelOrder
from transforms.streams.delays import duration
from transforms.vocabulary import (BINNED, CUMULATIVE, CURVE_SCHEMA, CURVES, FINAL, INITIAL,
                                   INTERMEDIATE, window_of_fading)

FADING = "fading"
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
        raise ValueError(f"time window {text!r}: the period must divide the size")
    return f"time={text}", size, period


@dataclass(frozen=True)
class ScoringPlan:
    """What to score: the final category or not, B bins (0: no binned measures), the α list
    for Ψα, curve points every `curve_every` labels, and the views besides the cumulative one:
    sliding windows of the last w labels, fading factors, event-time windows (label, size,
    period)."""

    final: bool = True
    bins: int = 0
    alphas: tuple = (1.0, 2.0, 10.0)
    curve_every: int = 1000
    windows: tuple = ()
    fadings: tuple = ()
    time_windows: tuple = ()

    @property
    def categories(self) -> tuple:
        return (*(INITIAL, FINAL)[:1 + self.final], *((BINNED,) if self.bins else ()))

    @property
    def views(self) -> list[str]:
        """The window column's values, in report order."""
        return [CUMULATIVE, *(f"w={w}" for w in self.windows),
                *(window_of_fading(a) for a in self.fadings), *(t[0] for t in self.time_windows)]

    @property
    def baseline_views(self) -> BaselineViews:
        """The views besides the cumulative one, as the replay's Majority baselines need them
        (one Majority prediction per view, in `views` order)."""
        return BaselineViews(self.windows, self.fadings,
                             tuple(size for _, size, _ in self.time_windows))

    def bins_of(self, category: str) -> list:
        return list(range(self.bins + 2)) if category == BINNED else [None]


def new_score(task: str):
    """An empty score for a model's task, or for a comparison of two models."""
    return {"classification": ClassificationScore, "regression": RegressionScore,
            "comparison": PairScore}[task]()


class BlockScore:
    """A score over some labels, with the last label number and time it covers."""

    __slots__ = ("score", "last_n", "last_t")

    def __init__(self, score, last_n: int = 0, last_t: float = float("-inf")):
        self.score = score
        self.last_n = last_n
        self.last_t = last_t

    def merge(self, other: BlockScore) -> BlockScore:
        self.score.merge(other.score)
        self.last_n = max(self.last_n, other.last_n)
        self.last_t = max(self.last_t, other.last_t)
        return self


def merge_bins(mine: dict, other: dict) -> dict:
    """Merge {bin: BlockScore} maps (bin None for initial / final)."""
    for b, acc in other.items():
        if b in mine:
            mine[b].merge(acc)
        else:
            mine[b] = copy.deepcopy(acc)
    return mine


class Pane:
    """One pane's partial: {bin: BlockScore}, and for fading factors its labels' rows
    (`fading`: (label numbers, rows), see `FadingCurve`), which `PanesByCurve` sends to the
    label-order fold before the panes merge."""

    __slots__ = ("scores", "fading")

    def __init__(self, scores: dict, fading: tuple | None = None):
        self.scores = scores
        self.fading = fading

    def merge(self, other: Pane) -> Pane:
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
    view, and each α reads its own view's."""

    def __init__(self, task: str, plan: ScoringPlan):
        self.task = task
        self.alphas = plan.fadings
        self.every = plan.curve_every
        self.views = len(plan.views)
        self.majority_of = {a: plan.views.index(window_of_fading(a)) for a in plan.fadings}

    @staticmethod
    def rows(task: str, n: np.ndarray, columns: dict) -> np.ndarray:
        """One row per label: n and the columns the score's `faded_stats` reads."""
        if task == "comparison":
            parts = [columns[k] for k in ("a", "b", "a_only", "b_only")]
        else:
            parts = [columns["y"], *columns.get("baselines", ()), columns["preds"]]
        return np.column_stack([n, *parts]).astype(np.float64)

    def columns(self, rows: np.ndarray) -> dict:
        if self.task == "comparison":
            return dict(zip(("a", "b", "a_only", "b_only"), rows[:, 1:5].T))
        if self.task == "classification":
            return {"y": rows[:, 1], "prev": rows[:, 2], "majority": rows[:, 3:3 + self.views],
                    "preds": rows[:, 3 + self.views:]}
        return {"y": rows[:, 1], "preds": rows[:, 2:]}

    def start(self):
        score_class = type(new_score(self.task))
        return {"faded": {a: FadingScore(a, score_class) for a in self.alphas},
                "points": {}, "folded": 0}

    def _update(self, state, rows: np.ndarray) -> None:
        if len(rows):
            columns = self.columns(rows)
            majority = columns.get("majority")
            for alpha, f in state["faded"].items():
                if majority is not None:  # this α's own Majority baseline
                    columns["majority"] = majority[:, self.majority_of[alpha]]
                f.update(columns)

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
            state["points"][b] = copy.deepcopy(state["faded"])
        self._update(state, rows[start:])
        state["folded"] = int(n[-1])
        return state

    def result(self, state):
        return state

    @staticmethod
    def at(folded: dict, point: int) -> dict:
        """{α: FadingScore} at curve point `point`."""
        return folded["points"].get(point, folded["faded"])


def prediction_losses(outcomes, task: str, kind: str, squared: bool = False) -> dict:
    """Per outcome whose `kind` (initial or final) prediction was made: id, n, arrival and label
    time, and its loss — 0-1 for classifiers; absolute, or with `squared` squared, error for
    regressors — as arrays (ids as objects).

    >>> from transforms.records import Outcome
    >>> out = [Outcome(1, "a", 0.0, 5.0, 2.0, None, None, 1.5, None)]
    >>> prediction_losses(out, "regression", INITIAL, squared=True)["loss"].tolist()
    [0.25]
    """
    rows = []
    for o in outcomes:
        p = o.initial if kind == INITIAL else o.final
        if p is None:
            continue
        if task == "classification":
            loss = float(p != o.y)
        else:
            loss = float((o.y - p) ** 2) if squared else abs(o.y - p)
        rows.append((o.id, o.n, o.t_arrival, o.t_label, loss))
    ids, n, t_arrival, t_label, loss = zip(*rows) if rows else ((),) * 5
    id_column = np.empty(len(ids), dtype=object)
    id_column[:] = ids
    return {"ids": id_column, "n": np.array(n, dtype=np.int64),
            "t_arrival": np.array(t_arrival, dtype=np.float64),
            "t_label": np.array(t_label, dtype=np.float64),
            "loss": np.array(loss, dtype=np.float64)}


def bin_matrix(outcomes, bins: int, classification: bool) -> np.ndarray:
    """Each outcome's prediction for bins 0..B+1, one row per outcome (−1 / NaN: none)."""
    dtype = np.int64 if classification else np.float64
    unmapped = [i for i, o in enumerate(outcomes) if o.bins is None]
    if not unmapped and outcomes:  # all mapped by the replay
        return np.stack([o.bins for o in outcomes]).astype(dtype, copy=False)
    out = np.empty((len(outcomes), bins + 2), dtype=dtype)
    for i, o in enumerate(outcomes):
        if o.bins is not None:
            out[i] = o.bins
    if unmapped:  # labelled before any re-prediction (rep_times None): all carry the initial
        todo = [outcomes[i] for i in unmapped]
        out[unmapped] = binned_many(
            [o.t_arrival for o in todo], [o.t_label for o in todo], [o.initial for o in todo],
            [o.rep_times for o in todo], [o.rep_values for o in todo],
            [o.final for o in todo], bins, classification)
    return out


def take_rows(columns: dict, rows: np.ndarray) -> dict:
    """The rows at `rows` of every column: numpy arrays, or Arrow arrays (a log's strings stay
    in Arrow, no Python object per value).

    >>> rows = take_rows({"n": np.array([5, 6, 7]), "id": pa.array(["a", "b", "c"])},
    ...                  np.array([2, 0]))
    >>> rows["n"].tolist(), rows["id"].to_pylist()
    ([7, 5], ['c', 'a'])
    """
    return {k: v.take(pa.array(rows, pa.int64())) if isinstance(v, pa.Array) else v[rows]
            for k, v in columns.items()}


def concat_rows(parts: list[dict]) -> dict:
    """The columns of several parts, one part after another ({} for none)."""
    if not parts:
        return {}
    return {k: pa.concat_arrays([p[k] for p in parts]) if isinstance(parts[0][k], pa.Array)
            else np.concatenate([p[k] for p in parts]) for k in parts[0]}


def group_rows(keys: np.ndarray):
    """(key, row indices) for each distinct key, keys ascending, rows in input order.

    >>> [(int(k), r.tolist()) for k, r in group_rows(np.array([3, 1, 3]))]
    [(1, [1]), (3, [0, 2])]
    """
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]) \
        if len(keys) else np.empty(0, dtype=np.int64)
    for start, rows in zip(starts, np.split(order, starts[1:])):
        yield sorted_keys[start], rows


def _columns(outcomes, task: str, plan: ScoringPlan) -> dict:
    """A batch of outcomes as arrays: label number n, label time t, y, the baselines (Persistent,
    Majority; classification) and each category's predictions (one column per bin)."""
    classification = task == "classification"
    missing = NO_CLASS if classification else math.nan
    dtype = np.int64 if classification else np.float64

    def column(values):
        return np.array([missing if v is None else v for v in values], dtype=dtype)

    predicted = {INITIAL: column(o.initial for o in outcomes)[:, None]}
    if plan.final:
        predicted[FINAL] = column(o.final for o in outcomes)[:, None]
    if plan.bins:
        predicted[BINNED] = bin_matrix(outcomes, plan.bins, classification)
    return {"n": np.array([o.n for o in outcomes], dtype=np.int64),
            "t": np.array([o.t_label for o in outcomes], dtype=np.float64),
            "y": column(o.y for o in outcomes),
            "baselines": (column(o.y_prev for o in outcomes),
                          _majority_matrix(outcomes, len(plan.views))) if classification else (),
            "predicted": predicted}


def _majority_matrix(outcomes, views: int) -> np.ndarray:
    """The Majority baseline of each outcome for each view (labels × views): an outcome carries
    one class per view, or one class that every view shares."""
    matrix = np.array([o.y_majority for o in outcomes], dtype=np.int64)
    matrix = matrix.reshape(len(outcomes), -1) if len(outcomes) else np.empty((0, views), np.int64)
    if matrix.shape[1] == views:
        return matrix
    if matrix.shape[1] == 1:
        return np.repeat(matrix, views, axis=1)
    raise ValueError(f"outcomes carry {matrix.shape[1]} Majority baselines for {views} views")


def _bin_scores(cols: dict, rows: np.ndarray, category: str, task: str,
                plan: ScoringPlan) -> dict:
    """{bin: BlockScore} of the labels at `rows` for one category."""
    matrix, y, baselines = cols["predicted"][category], cols["y"], cols["baselines"]
    last_n = int(cols["n"][rows].max()) if len(rows) else 0
    last_t = float(cols["t"][rows].max()) if len(rows) else -math.inf
    matrix, y, baselines = matrix[rows], y[rows], [base[rows] for base in baselines]
    # An untrained model made no prediction: not scored, as in river.
    made = matrix != NO_CLASS if task == "classification" else ~np.isnan(matrix)
    scores = {}
    for j, b in enumerate(plan.bins_of(category)):
        acc = BlockScore(new_score(task), last_n, last_t)
        if made[:, j].all():
            acc.score.update_many(y, matrix[:, j], *baselines)
        else:
            ok = made[:, j]
            acc.score.update_many(y[ok], matrix[ok, j], *(base[ok] for base in baselines))
        scores[b] = acc
    return scores


def pane_scores(outcomes, task: str, plan: ScoringPlan) -> dict:
    """Partial scores of a batch of outcomes: {(category, axis, pane): Pane}. The panes depend on
    the label numbers and times alone, not on how long the stream is, so scoring needs nothing
    from the end of the stream and runs as the outcomes come.

    >>> from transforms.records import Outcome
    >>> out = [Outcome(1, "a", 0.0, 1.0, 1, 0, 1, 1, 1),
    ...        Outcome(2, "b", 1.0, 2.0, 0, 1, 0, None, 1)]
    >>> s = pane_scores(out, "classification", ScoringPlan(curve_every=10))
    >>> initial, final = s[("initial", "n", 10)], s[("final", "n", 10)]
    >>> initial.scores[None].score.n, final.scores[None].score.accuracy
    (1, 0.5)
    """
    cols = _columns(outcomes, task, plan)
    n, t = cols["n"], cols["t"]
    axes = [(LABEL_AXIS, pane_ends(n, plan.curve_every, plan.windows))]
    axes += [(label, np.floor(t / period).astype(np.int64))
             for label, _, period in plan.time_windows]
    panes: dict = {}
    for axis, keys in axes:
        for pane_key, rows in group_rows(keys):
            for category, matrix in cols["predicted"].items():
                fading = None
                if axis == LABEL_AXIS and plan.fadings:
                    fading = (n[rows], FadingCurve.rows(task, n[rows], {
                        "y": cols["y"][rows], "preds": matrix[rows],
                        "baselines": [base[rows] for base in cols["baselines"]]}))
                panes[(category, axis, int(pane_key))] = Pane(
                    _bin_scores(cols, rows, category, task, plan), fading)
    return panes


def tail_scores(outcomes, task: str, plan: ScoringPlan) -> dict:
    """{category: {w: {bin: score}}}: for each window size w the score of the key's last w labels,
    from (at least) its last max(w) outcomes — the windows at the end of the stream, whose
    start no pane boundary can know in advance.

    >>> from transforms.records import Outcome
    >>> out = [Outcome(n, n, 0.0, n, 1, 1, 1, p, p) for n, p in [(7, 0), (8, 1), (9, 1)]]
    >>> tail = tail_scores(out, "classification", ScoringPlan(windows=(2, 3)))
    >>> tail["initial"][2][None].accuracy, tail["initial"][3][None].accuracy
    (1.0, 0.6666666666666666)
    """
    cols = _columns(outcomes, task, plan)
    total = int(cols["n"].max(initial=0))
    return {category: {w: {b: acc.score for b, acc in _bin_scores(
                cols, np.flatnonzero(cols["n"] > total - w), category, task, plan).items()}
                       for w in plan.windows}
            for category in cols["predicted"]}


class LastOutcomes(beam.CombineFn):
    """A key's `size` outcomes with the highest label numbers (memory: `size` outcomes)."""

    def __init__(self, size: int):
        self.size = size

    def create_accumulator(self):
        return []

    def _keep(self, outcomes: list) -> list:
        if len(outcomes) > self.size:
            outcomes.sort(key=lambda o: o.n)  # nearly sorted: linear
            del outcomes[:len(outcomes) - self.size]
        return outcomes

    def add_input(self, acc, outcomes):
        return self._keep(acc + list(outcomes))

    def merge_accumulators(self, accs):
        return self._keep([o for acc in accs for o in acc])

    def extract_output(self, acc):
        return acc


def _score_rows(stream, model, category, view, scores: dict, labels: int, t, plan,
                counts: dict | None = None) -> list[dict]:
    """Rows for one view at one curve point: each bin's metrics and, for the binned category,
    Ψα for each α over bins 0..B (Ψ rows carry the final bin's n). `counts` overrides each
    bin's n (a faded score's own n is a weight, not a count)."""
    counts = counts or {b: s.n for b, s in scores.items()}
    rows = []
    for b in plan.bins_of(category):
        if b not in scores:
            continue
        for metric, value in scores[b].get().items():
            row = MeasureKey(stream, model, category, metric, bin=b, window=view).row(
                value, counts[b], t)
            row["labels"] = labels
            rows.append(row)
    if category == BINNED and all(b in scores for b in plan.bins_of(category)):
        values = [scores[b].get() for b in range(plan.bins + 1)]
        for metric in values[0]:
            if metric in NOT_PRIORITISED:
                continue
            per_bin = [v[metric] for v in values]
            for alpha in plan.alphas:
                row = MeasureKey(stream, model, INTERMEDIATE, metric, alpha=alpha,
                                 window=view).row(prioritised(per_bin, alpha),
                                                  counts[plan.bins + 1], t)
                row["labels"] = labels
                rows.append(row)
    return rows


def _difference(later: dict, earlier: dict | None) -> dict:
    """{bin: score} of the labels in `later` but not in `earlier` (cumulative snapshots)."""
    out = {}
    for b, acc in later.items():
        score = copy.deepcopy(acc.score)
        if earlier is not None and b in earlier:
            score.subtract(earlier[b].score)
        out[b] = score
    return out


def _at(history: list, bound) -> dict | None:
    """The last cumulative snapshot at or before `bound` (history sorted by pane key)."""
    i = bisect.bisect_right(history, bound, key=lambda h: h[0])
    return history[i - 1][1] if i else None


class CurvePoints:
    """One (stream, model, category, axis)'s curve, fed its merged panes in pane order: `add`
    returns the rows of the curve points that the pane shows are not the stream's last,
    `finish` the rest — (is_last, row) pairs; is_last marks the end-of-stream summary rows, the
    last label's. Holds the running cumulative score, the snapshots the windows' differences
    still need and one pane's point (it is the last one until a later pane comes), so a curve
    can be made as its labels come, in constant memory.

    On the label axis the windows at the last label come from `finish`'s `tail` ({w: {bin:
    score}}, `tail_scores`), and the fading factors from `fading` (`FadingCurve`'s state; at a
    point the fold has passed, or at the end)."""

    def __init__(self, key, task: str, plan: ScoringPlan):
        self.key, self.task, self.plan = key, task, plan
        self.running: dict = {}
        self.history: list = []  # (pane key, cumulative snapshot) for the windows' differences
        self.held = None  # the latest pane key: its point is emitted once it is known not last
        if key[3] != LABEL_AXIS:
            _, size, period = next(tw for tw in plan.time_windows if tw[0] == key[3])
            self.span, self.period = round(size / period), period
            self.ends: set = set()  # window ends j not yet emitted

    def add(self, pane_key: int, pane: Pane, fading: dict | None = None) -> list:
        if self.key[3] == LABEL_AXIS:
            rows = [] if self.held is None else self._label_point(self.held, False, None, fading)
            merge_bins(self.running, pane.scores)
            if self.plan.windows:
                keep = max(self.plan.windows)
                self.history.append((pane_key, copy.deepcopy(self.running)))
                while len(self.history) > 1 and self.history[1][0] <= pane_key - keep:
                    self.history.pop(0)
        else:  # windows [(j − span + 1)·P, (j + 1)·P) ending before this pane: complete
            rows = [r for j in sorted(j for j in self.ends if j < pane_key)
                    for r in self._time_window(j, False)]
            merge_bins(self.running, pane.scores)
            self.history.append((pane_key, copy.deepcopy(self.running)))
            self.ends.update(range(pane_key, pane_key + self.span))
        self.held = pane_key
        return rows

    def finish(self, tail: dict | None = None, fading: dict | None = None) -> list:
        if self.held is None:
            return []
        if self.key[3] == LABEL_AXIS:
            return self._label_point(self.held, True, tail, fading)
        return [r for j in sorted(j for j in self.ends if j <= self.held)
                for r in self._time_window(j, j == self.held)]

    def _emit(self, view, scores, labels, t, last, counts=None) -> list:
        stream, model, category, _ = self.key
        if self.task == "classification":  # each view reports its own Majority baseline
            j = self.plan.views.index(view)
            scores = {b: s.for_view(j) for b, s in scores.items()}
        return [(last, r) for r in _score_rows(stream, model, category, view, scores, labels, t,
                                               self.plan, counts)]

    def _label_point(self, end: int, last: bool, tail, fading) -> list:
        plan, running = self.plan, self.running
        if end % plan.curve_every and not last or not running:
            return []  # a window's start, not a curve point; or nothing scored yet
        # The last pane ends at the next boundary; its labels end at the last label.
        labels = max(acc.last_n for acc in running.values()) if last else end
        t = max(acc.last_t for acc in running.values())
        cumulative = {b: acc.score for b, acc in running.items()}
        rows = self._emit(CUMULATIVE, cumulative, labels, t, last)
        for w in plan.windows:
            rows += self._emit(f"w={w}", tail[w] if last else
                               _difference(running, _at(self.history, end - w)),
                               labels, t, last)
        for alpha, f in (FadingCurve.at(fading, end).items() if plan.fadings else ()):
            rows += self._emit(window_of_fading(alpha),
                               dict(zip(plan.bins_of(self.key[2]), f.scores())), labels, t,
                               last, {b: s.n for b, s in cumulative.items()})
        return rows

    def _time_window(self, j: int, last: bool) -> list:
        self.ends.discard(j)
        history = self.history
        while len(history) > 1 and history[1][0] <= j - self.span:
            history.pop(0)
        window = _difference(_at(history, j), _at(history, j - self.span))
        labels = max(acc.last_n for acc in self.running.values())
        return self._emit(self.key[3], window, labels, (j + 1) * self.period, last)


def curve_rows(key, panes, task: str, plan: ScoringPlan, tail: dict | None = None,
               fading: dict | None = None) -> Iterator[tuple[bool, dict]]:
    """A (stream, model, category, axis)'s panes, in any order -> (is_last, row) for every
    curve point of every view on that axis (`CurvePoints`)."""
    curve = CurvePoints(key, task, plan)
    for pane_key, pane in sorted(panes, key=lambda p: p[0]):
        yield from curve.add(pane_key, pane, fading)
    yield from curve.finish(tail, fading)


class InOrderCurves:
    """The curves of one key (a (stream, model), or a pair of models) from its partial panes
    fed in label order ({(category, axis, pane): Pane}, as `pane_scores` makes them): each
    curve point's rows as soon as later labels pass it (`CurvePoints`), the fading factors
    folded as the rows come (`FadingCurve`). Memory: the panes not yet complete, one pane per
    curve and the fading state — not the stream's panes.

    A pane is complete when a later pane of its curve has begun (labels come in label order,
    and so in label-time order)."""

    def __init__(self, key: tuple, task: str, plan: ScoringPlan):
        self.key, self.task, self.plan = key, task, plan
        self.open: dict = {}  # (category, axis, pane) -> Pane
        self.curves: dict = {}  # (category, axis) -> CurvePoints
        self.newest: dict = {}  # (category, axis) -> the latest pane key begun
        self.fold = FadingCurve(task, plan)
        self.faded: dict = {}  # category -> FadingCurve state

    def add(self, partials: dict) -> list:
        for key, partial in sorted(partials.items()):
            if partial.fading is not None:
                state = self.faded.get(key[0]) or self.fold.start()
                self.faded[key[0]] = self.fold.step(state, partial.fading[1])
                partial = Pane(partial.scores)
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
            category, axis, pane_key = key
            curve = self.curves.get((category, axis))
            if curve is None:
                curve = self.curves[(category, axis)] = CurvePoints(
                    (*self.key, category, axis), self.task, self.plan)
            rows += curve.add(pane_key, self.open.pop(key), self.faded.get(category))
            if axis == LABEL_AXIS and category in self.faded:  # points emitted: not needed
                points = self.faded[category]["points"]
                for b in [b for b in points if b < pane_key]:
                    del points[b]
        return rows


class InOrderScores:
    """One (stream, model)'s summary and curve rows from its outcome batches fed in label order
    (a replay that drains the stream in one place): `add(outcomes)` and `finish()` return
    (is_last, row) pairs, the same rows as the pane pipeline (`ScoreOutcomes`), in constant
    memory (`InOrderCurves`, and the last max(w) outcomes for the windows at the end).

    >>> from transforms.records import Outcome
    >>> scores = InOrderScores(("s", "m"), "classification", ScoringPlan(curve_every=2))
    >>> rows = scores.add([Outcome(n, n, 0.0, n, 1, 1, 1, 1, 1) for n in (1, 2, 3)])
    >>> rows += scores.add([Outcome(4, 4, 0.0, 4, 1, 1, 1, 0, 0)])
    >>> [(r["labels"], r["value"]) for _, r in rows + scores.finish()
    ...  if r["metric"] == "accuracy" and r["category"] == "initial"]
    [(2, 1.0), (4, 0.75)]
    """

    def __init__(self, key: tuple, task: str, plan: ScoringPlan):
        self.task, self.plan = task, plan
        self.curves = InOrderCurves(key, task, plan)
        self.keep = LastOutcomes(max(plan.windows, default=0))
        self.last = self.keep.create_accumulator()

    def add(self, outcomes) -> list:
        if not outcomes:
            return []
        outcomes = sorted(outcomes, key=lambda o: o.n)  # as a replay makes them: linear
        self.last = self.keep.add_input(self.last, outcomes)
        return self.curves.add(pane_scores(outcomes, self.task, self.plan))

    def finish(self) -> list:
        return self.curves.finish(tail_scores(self.last, self.task, self.plan))


def score_locally(key, outcomes, task: str, plan: ScoringPlan) -> tuple[list, list]:
    """Summary and curve rows of one (stream, model)'s outcomes without Beam (tests, small
    jobs), scored in label order (`InOrderScores`)."""
    scores = InOrderScores(key, task, plan)
    summary, curves = [], []
    for last, row in scores.add(outcomes) + scores.finish():
        if in_curves(row, plan):
            curves.append(row)
        if last:
            summary.append({k: v for k, v in row.items() if k != "labels"})
    return summary, curves


class MergePanes(beam.CombineFn):
    """Merge the partial `Pane`s of one pane key."""

    def create_accumulator(self):
        return None

    def add_input(self, acc, pane):
        # Never mutate the input element: runners may reuse it.
        return copy.deepcopy(pane) if acc is None else acc.merge(pane)

    def merge_accumulators(self, accs):
        merged = None
        for a in accs:
            if a is not None:
                merged = copy.deepcopy(a) if merged is None else merged.merge(a)
        return merged

    def extract_output(self, acc):
        return acc


def in_curves(row: dict, plan: ScoringPlan) -> bool:
    """Curves keep Λ(T,0) and Λ(T,B+1) of the binned measures (with Ψα), not every bin."""
    return row["category"] != BINNED or row["bin"] in (0, plan.bins + 1)


class RowRouter:
    """(is_last, row) pairs -> Beam outputs: the end-of-stream rows (without their `labels`) to
    the main output (or to `summary_tag`), and curve rows to `curves` as Arrow tables of at
    least `chunk` rows of one (stream, model). Each `route` call's rows turn into Arrow at once
    (a curve point every 1000 labels of a long stream is many rows: as dicts they weigh ~1 KB a
    row). `flush` emits the tables still filling."""

    def __init__(self, plan: ScoringPlan, summary_tag: str | None = None, chunk: int = 10_000):
        self.plan, self.summary_tag, self.chunk = plan, summary_tag, chunk
        self.curves: dict = {}  # (stream, model) -> Arrow tables not yet emitted

    def route(self, rows):
        new: dict = {}
        for last, row in rows:
            if in_curves(row, self.plan):
                new.setdefault((row["stream"], row["model"]), []).append(row)
            if last:
                row = {k: v for k, v in row.items() if k != "labels"}
                yield row if self.summary_tag is None else \
                    beam.pvalue.TaggedOutput(self.summary_tag, row)
        for key, curve in new.items():
            tables = self.curves.setdefault(key, [])
            tables.append(pa.Table.from_pylist(curve, CURVE_SCHEMA))
            if sum(t.num_rows for t in tables) >= self.chunk:
                yield from self._emit(key)

    def flush(self):
        for key in list(self.curves):
            yield from self._emit(key)

    def _emit(self, key):
        tables = self.curves.pop(key)
        if tables:
            yield beam.pvalue.TaggedOutput(CURVES, pa.concat_tables(tables).combine_chunks())


def route_rows(rows, plan: ScoringPlan):
    """All of `rows` through a `RowRouter`."""
    router = RowRouter(plan)
    yield from router.route(rows)
    yield from router.flush()


def first_of(grouped: dict) -> tuple:
    """A curve's `tail` and `fading` from its CoGroupByKey result (None where absent)."""
    return tuple(grouped[tag][0] if grouped.get(tag) else None for tag in ("tails", FADING))


class FadeInLabelOrder(beam.PTransform):
    """`(curve key, (label numbers, rows))` batches -> `(curve key, FadingCurve's result)`,
    each curve folded in label order as its batches come (`InLabelOrder`; one combine per task,
    `task_of(curve key)` says which)."""

    def __init__(self, task_of, tasks, plan: ScoringPlan):
        super().__init__()
        self.task_of, self.tasks, self.plan = task_of, sorted(tasks), plan

    def expand(self, batches):
        tasks, task_of = self.tasks, self.task_of
        parts = batches | "ByTask" >> beam.Partition(
            lambda element, _: tasks.index(task_of(element[0])), len(tasks))
        return ([part | f"Fold_{task}" >> beam.CombinePerKey(
                    InLabelOrder(FadingCurve(task, self.plan)))
                 for task, part in zip(tasks, parts)]
                | "AllCurves" >> beam.Flatten())


class PanesByCurve(beam.PTransform):
    """`((stream, model, category, axis, pane), Pane)` partials -> per curve key
    `(stream, model, category, axis)`: `panes` `(pane, merged Pane)` and `fading` (the panes'
    rows folded in label order, `FadeInLabelOrder`). The rows are split off before the panes
    merge, so what is shuffled per pane is its scores."""

    def __init__(self, task_of, tasks, plan: ScoringPlan):
        super().__init__()
        self.task_of, self.tasks, self.plan = task_of, tasks, plan

    @staticmethod
    def _split(element):
        key, pane = element
        if pane.fading is not None:
            yield beam.pvalue.TaggedOutput(FADING, (key[:-1], pane.fading))
            pane = Pane(pane.scores)
        yield key, pane

    def expand(self, partials):
        split = partials | "SplitFading" >> beam.FlatMap(self._split).with_output_types(
            beam.typehints.KV[beam.typehints.Any, Pane]).with_outputs(FADING, main="panes")
        return {"panes": split.panes
                | "MergePanes" >> beam.CombinePerKey(MergePanes())
                | "ByCurve" >> beam.Map(lambda e: (e[0][:-1], (e[0][-1], e[1]))),
                FADING: split[FADING]
                | "Fading" >> FadeInLabelOrder(self.task_of, self.tasks, self.plan)}


class OutcomeTransform(beam.PTransform):
    """A transform of the replay's `((stream, model), [Outcome])` batches, given each model's
    task and a plan."""

    def __init__(self, tasks: dict[str, str], plan):
        super().__init__()
        self.tasks = tasks
        self.plan = plan


class ScoreOutcomes(OutcomeTransform):
    """`((stream, model), [Outcome])` batches -> summary rows (main) and curve rows (`curves`).

    Guarantees: the same rows whatever the bundling or merge order (integer counts, exactly
    rounded sums, fading run in label order); an outcome whose prediction is None counts toward
    no score.
    """

    def expand(self, outcome_batches):
        tasks, plan = self.tasks, self.plan

        def partials(element):
            (stream, model), outcomes = element
            for (category, axis, pane), partial in pane_scores(outcomes, tasks[model],
                                                               plan).items():
                yield (stream, model, category, axis, pane), partial

        def tails(element):
            (stream, model), last = element
            for category, tail in tail_scores(last, tasks[model], plan).items():
                yield (stream, model, category, LABEL_AXIS), tail

        def summarise(element):
            key, grouped = element
            yield from route_rows(curve_rows(key, grouped["panes"], tasks[key[1]], plan,
                                             *first_of(grouped)), plan)

        curves = (outcome_batches
                  | "PaneScores" >> beam.FlatMap(partials)
                  | "ByCurve" >> PanesByCurve(lambda key: tasks[key[1]], set(tasks.values()),
                                              plan))
        last = (outcome_batches
                | "LastOutcomes" >> beam.CombinePerKey(LastOutcomes(max(plan.windows, default=0)))
                | "TailScores" >> beam.FlatMap(tails))
        return ({**curves, "tails": last}
                | "GroupCurve" >> beam.CoGroupByKey()
                | "Summarise" >> beam.FlatMap(summarise).with_outputs(CURVES, main="summary"))
