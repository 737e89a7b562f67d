"""Continuous re-evaluation inside the replay: when pending instances are predicted again, and
what is kept of those predictions (Grzenda, Gomes, Bifet 2019).

With K=1 every label re-predicts every pending instance, so a straightforward replay does
O(pending) Python work per label. Here the pending instances are rows of numpy columns
(`PendingRows`): the instances due at a label are found by their arrival residue modulo K
(O(due), not a scan of the buffer), predicted in one batch (`transforms.models.batch`), not
predicted at all when the model has not changed since their last prediction (the last one is
reused), and stored run-length encoded: only the re-predictions that change the answer cost a
Python operation. The times of the scheduled re-predictions are not stored: they are the times
of known labels (every_k_labels) or a fixed schedule (every, bin_boundaries). A classifier's
class probabilities change at nearly every re-prediction, so they are stored whole, in chunks
of `PROBA_CHUNK` per row: one numpy assignment per round, a Python operation per row only
when its chunk is full.

A Hoeffding tree's classes are re-predicted later, a window of rounds at once: a round only
notes that it happened, the predictor keeps a snapshot of the leaf that learned after each label
(`transforms.models.tree_batch.LeafSnapshots`), and `resolve` predicts each row with its leaf's
snapshot over each stretch of its rounds between that leaf's learns (matrix products per leaf),
before anything reads the values.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, replace

import numpy as np

from metrics.binning import MOST_BINS, NO_CLASS, bin_of
from metrics.probabilistic import padded_proba
from transforms.models.batch import batch_predictor
from transforms.specs import LARGEST_COUNT
from transforms.streams.delays import duration

PROBA_CHUNK = 32  # re-predictions' probability vectors per row held before a chunk is set aside
_SLOT = PROBA_CHUNK - 1  # (a power of two: n & _SLOT is n mod PROBA_CHUNK)
# A window of deferred re-predictions is made once (labels in it) × (pending rows) × (classes)
# reaches this, and no sooner than 4·K labels (making one costs a pass over every pending row);
# a leaf's rows are scored in chunks of about WINDOW_CELLS (row, snapshot) cells, so the
# temporary arrays stay at a few tens of MB.
WINDOW_WORK = 1 << 19
WINDOW_CELLS = 1 << 18
_OPEN = np.iinfo(np.int64).max  # a row's last label while it is pending


@dataclass(frozen=True)
class RepredictPolicy:
    """When a pending instance is predicted again, with its stored features.

    - `none`: never (initial and final predictions only).
    - `every_k_labels:K` (K defaults to 10): at the (K+1)th, (2K+1)th, ... label the model
      learns after the instance arrived, before it learns that label (the reference
      implementation; K=1 is Algorithm 1 of the paper).
    - `bin_boundaries[:B]`: once at the start of each bin 2..B of the instance's latency period
      (bin 1 starts with the initial prediction); B defaults to the run's `--bins`. Needs the
      label time when the instance arrives, which a replay of logged or generated streams has.
    - `every:DURATION` (`30s`, `5min`, or seconds as a number): every DURATION of event time
      while the label is pending, for live-like schedules.

    >>> RepredictPolicy.parse("every_k_labels:5")
    RepredictPolicy(kind='every_k_labels', k=5, bins=None, every=None)
    >>> str(RepredictPolicy.parse("every:5min")), str(RepredictPolicy.parse("bin_boundaries"))
    ('every:300s', 'bin_boundaries')

    References
    ----------
    Grzenda, M., Gomes, H. M., Bifet, A. (2020). Performance measures for evolving
    predictions under delayed labelling classification. International Joint Conference on
    Neural Networks (IJCNN).
    """

    kind: str = "none"
    k: int = 10
    bins: int | None = None
    every: float | None = None

    @classmethod
    def parse(cls, text: str) -> RepredictPolicy:
        name, _, arg = str(text).strip().partition(":")
        if name == "none" and not arg:
            return cls("none")
        if name in ("every_k_labels", "bin_boundaries"):
            try:
                n = int(arg) if arg else None
            except ValueError:
                n = 0
            most = MOST_BINS if name == "bin_boundaries" else LARGEST_COUNT
            if n is not None and not 1 <= n <= most:
                raise ValueError(f"re-prediction policy {text!r}: the argument must be a "
                                 f"whole number from 1 to {most:,}")
            if name == "every_k_labels":
                return cls(name, k=n or 10)
            return cls(name, bins=n)
        if name == "every":
            every = duration(arg)
            if every is None:
                raise ValueError(f"re-prediction policy {text!r}: every needs a positive "
                                 f"duration, e.g. every:30s, every:5min or every:10")
            return cls(name, every=every)
        raise ValueError(f"unknown re-prediction policy {text!r}; use none, every_k_labels:K, "
                         f"bin_boundaries[:B] or every:DURATION")

    def with_bins(self, bins: int) -> RepredictPolicy:
        """bin_boundaries without its own B takes the run's number of bins."""
        return replace(self, bins=bins) if self.kind == "bin_boundaries" and not self.bins \
            else self

    @property
    def timed(self) -> bool:
        """Scheduled in event time (a heap of due times), not by label count."""
        return self.kind in ("bin_boundaries", "every")

    def __str__(self) -> str:
        if self.kind == "every_k_labels":
            return f"every_k_labels:{self.k}"
        if self.kind == "bin_boundaries":
            return "bin_boundaries" + (f":{self.bins}" if self.bins else "")
        if self.kind == "every":
            return f"every:{self.every:g}s"
        return self.kind


def bin_start(t0: float, t_label: float, bins: int, b: int) -> float:
    """The first time that `bin_of` puts in bin b (the float nearest t0 + Δ·(b−1)/B from
    above), so a re-prediction scheduled there is counted in bin b by any reader of its time.

    >>> bin_start(0.0, 100.0, 4, 2), bin_of(bin_start(0.0, 0.3, 3, 2), 0.0, 0.3, 3)
    (25.0, 2)
    """
    delta = t_label - t0
    t = t0 + delta * (b - 1) / bins
    while bin_of(t, t0, delta, bins) < b:
        t = math.nextafter(t, math.inf)
    return t


class _Buckets:
    """Pending rows grouped by arrival residue modulo K; rows leave lazily (a row is still the
    same instance if its arrival number is unchanged). Only residues with rows are held, so
    memory follows the pending rows whatever K is (K may exceed the stream's length).

    >>> buckets = _Buckets(1000)
    >>> for n in range(3):
    ...     buckets.add(version=n, row=n, arrival=n)
    >>> buckets.due(1, np.arange(3)).tolist(), buckets.due(1001, np.arange(3)).tolist()
    ([], [0])
    >>> len(buckets.rows) + len(buckets.new)  # residues held: 3 rows, not K = 1 000 buckets
    3
    """

    def __init__(self, k: int):
        self.k = k
        self.rows: dict[int, np.ndarray] = {}
        self.arrivals: dict[int, np.ndarray] = {}
        self.new: dict[int, list] = {}

    def add(self, version: int, row: int, arrival: int) -> None:
        self.new.setdefault(version % self.k, []).append((row, arrival, version))

    def due(self, label_number: int, arrival_of: np.ndarray):
        """Rows due before the model learns label `label_number` (every label number is
        visited once, in order): arrived at a version ≡ label_number − 1 (mod K), at least K
        labels ago. Those are the rows of residue r already in the bucket; the rows added
        since r's last visit (K labels ago) arrived at version label_number − 1 and join it
        after this visit, unless learning the label of that visit failed (the version stayed
        behind): then they are due already."""
        r = (label_number - 1) % self.k
        rows, arrivals = self.rows.pop(r, _NO_ROWS), self.arrivals.pop(r, _NO_ROWS)
        alive = arrival_of[rows] == arrivals
        if np.count_nonzero(alive) < len(alive):
            rows, arrivals = rows[alive], arrivals[alive]
        due = rows
        new = self.new.pop(r, None)
        if new:
            added = np.array(new, dtype=np.int64).reshape(-1, 3)
            late = added[:, 2] <= label_number - 1 - self.k
            if late.any():
                late_rows, late_arrivals = added[late, 0], added[late, 1]
                due = np.concatenate([due, late_rows[arrival_of[late_rows] == late_arrivals]])
            rows = np.concatenate([rows, added[:, 0]])
            arrivals = np.concatenate([arrivals, added[:, 1]])
        if len(rows):
            self.rows[r], self.arrivals[r] = rows, arrivals
        return due

    def rebuild(self, rows: np.ndarray, versions: np.ndarray, arrivals: np.ndarray,
                next_label: int) -> None:
        """The buckets as `due` would have left them had it visited every label number
        before `next_label`, for the pending `rows` (arrived at `versions`)."""
        k = self.k
        residue = versions % k
        self.rows, self.arrivals, self.new = {}, {}, {}
        for r in np.unique(residue).tolist():
            at = (residue == r).nonzero()[0]
            # The next visit of residue r is label L with L − 1 ≡ r (mod K), L ≥ next_label;
            # a row that arrived at version L − 1 joins then, the others are due then.
            fresh = versions[at] == next_label - 1 + (r - (next_label - 1)) % k
            if not fresh.all():
                self.rows[r], self.arrivals[r] = rows[at[~fresh]], arrivals[at[~fresh]]
            if fresh.any():
                self.new[r] = list(zip(rows[at[fresh]].tolist(), arrivals[at[fresh]].tolist(),
                                       versions[at[fresh]].tolist()))


_NO_ROWS = np.empty(0, dtype=np.int64)


def _chunks(start: int, stop: int, size: int):
    """(a, b) ranges of at most `size` covering start..stop.

    >>> list(_chunks(2, 9, 3))
    [(2, 5), (5, 8), (8, 9)]
    """
    return ((a, min(a + size, stop)) for a in range(start, stop, size))


class _Features:
    """The feature dicts of some rows, fetched only if a predictor asks for them."""

    def __init__(self, x: list, rows: np.ndarray):
        self.x, self.rows = x, rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> dict:
        return self.x[self.rows[i]]

    def __iter__(self):
        return (self.x[r] for r in self.rows.tolist())


class PendingRows:
    """The re-prediction state of pending instances, one row each.

    Columns: arrival number, model version at arrival and at the last prediction, the last
    prediction (class index or float), the dense feature row for batch prediction; per row in
    Python lists: the features, and the run-length encoded scheduled re-predictions
    [(j, value), ...] plus any update-triggered ones [(t, value, probabilities), ...]. With
    `scored` (x -> (class, {class: probability}), the replay's own), every prediction keeps its
    class probabilities: a vector over class indices (`to_proba` maps a batch's), NaN for
    none. `to_values(codes, labels)` turns a batch predictor's answers into stored values.

    Example
    -------

    >>> from transforms.models.specs import ModelSpec
    >>> model = ModelSpec.parse("majority").build(["a", "b"])
    >>> rows = PendingRows(RepredictPolicy.parse("every_k_labels:1"), True, model)
    >>> row = rows.add({"x": 1.0}, t0=0.0, version=0, value=0, t_label=None)
    >>> times, values, proba = rows.take(row)  # no re-prediction yet
    >>> times is None and values is None and proba is None
    True

    """

    def __init__(self, policy: RepredictPolicy, classification: bool, model, scored=None,
                 to_proba=None, to_values=None):
        self.policy = policy
        self.classification = classification
        self.predictor = batch_predictor(model)
        # Class probabilities: how to get one row's, and a batch's as vectors over class
        # indices (`to_proba(matrix over labels, labels)`); None: classes only.
        self.scored, self.to_proba = scored, to_proba
        self.proba_last = np.empty((0, 0))  # each row's last vector (reused with its class)
        self.proba_chunk = np.empty((0, PROBA_CHUNK, 0))  # its latest scheduled ones
        self.proba_full: list = []  # per row, its earlier chunks (arrays PROBA_CHUNK × width)
        self.missing = NO_CLASS if classification else math.nan
        self.dtype = np.int64 if classification else np.float64
        self._cap = 0
        self.arrival = np.empty(0, dtype=np.int64)
        self.version_at = np.empty(0, dtype=np.int64)
        self.predicted_at = np.empty(0, dtype=np.int64)
        # The predictor's stamp of the state behind a row's last prediction (0: none), for
        # models that can tell a row's answer is unchanged although the model learned.
        self.stamp = np.empty(0, dtype=np.int64)
        self.last = np.empty(0, dtype=self.dtype)
        self.last_scheduled = np.empty(0, dtype=self.dtype)
        self.n_scheduled = np.empty(0, dtype=np.int64)
        self.dense = np.empty(0, dtype=bool)
        self.features: np.ndarray | None = None
        self.x: list = []
        self.changes: list = []
        self.extra: list = []
        self.scheduled_times: list = []
        self._free: list[int] = []
        self._arrivals = 0
        self.buckets = _Buckets(policy.k) if policy.kind == "every_k_labels" else None
        self.timers: list = []  # heap of (due time, arrival, row, t0, t_label, j) for timed
        # Times of the rounds, by label number − 1 (every_k_labels): of the label at which
        # each was made, which is not the label learned with that number when learning the
        # former failed.
        self.round_times = np.empty(1024)
        self.n_round_times = 0
        # Deferred re-predictions (every_k_labels, classes only, a predictor with leaf
        # snapshots): a round only notes that it happened; the re-predictions of a window of
        # rounds are made at once (`resolve`), each row with the snapshot of its leaf at each
        # of its rounds. `leaf`: each row's leaf serial (0: not routed yet); `guessed`: the
        # row lacks a split's feature and took the branch's most traversed path, to be taken
        # again in the next window (`window_route`); `end`: the last
        # label round of a row taken while its re-predictions wait (`held`: its values array,
        # filled by `resolve`).
        self.deferred = policy.kind == "every_k_labels" and classification \
            and scored is None and getattr(self.predictor, "defers", False)
        self.to_values = to_values
        self.rounds = 0  # the label number of the last round (every_k_labels)
        self.resolved = 0  # the rounds whose re-predictions are made
        self.leaf = np.empty(0, dtype=np.int64)
        self.guessed = np.empty(0, dtype=bool)
        self.end = np.empty(0, dtype=np.int64)
        self._held: list = []
        self._unrouted: list = []  # rows to route (a slot may recur: taken, then reused)
        self._unrouted_since = 0  # the arrival version of the first of them (the oldest)
        self._route_all = False

    # -- rows -----------------------------------------------------------------------------------
    def _grow(self) -> None:
        cap = max(64, 2 * self._cap)

        def grown(a, fill):
            out = np.full((cap, *a.shape[1:]), fill, dtype=a.dtype)
            out[:self._cap] = a
            return out

        self.arrival = grown(self.arrival, -1)
        self.leaf = grown(self.leaf, 0)
        self.guessed = grown(self.guessed, False)
        self.end = grown(self.end, _OPEN)
        for name in ("version_at", "predicted_at", "stamp", "n_scheduled"):
            setattr(self, name, grown(getattr(self, name), 0))
        self.last = grown(self.last, self.missing)
        self.last_scheduled = grown(self.last_scheduled, self.missing)
        self.dense = grown(self.dense, False)
        if self.features is not None:
            self.features = grown(self.features, 0.0)
        if self.scored is not None:
            self.proba_last = grown(self.proba_last, math.nan)
            self.proba_chunk = grown(self.proba_chunk, math.nan)
        for name in ("x", "changes", "extra", "scheduled_times", "proba_full"):
            getattr(self, name).extend([None] * (cap - self._cap))
        self._free.extend(range(cap - 1, self._cap - 1, -1))
        self._cap = cap

    def _widen(self, width: int) -> None:
        """Room for `width` classes in the probability arrays (`padded_proba`)."""
        if width > self.proba_last.shape[1]:
            self.proba_last = padded_proba(self.proba_last, width)
            self.proba_chunk = padded_proba(self.proba_chunk, width)

    def _vector(self, proba) -> np.ndarray:
        """A vector over class indices (None: NaN) at the arrays' width."""
        if proba is None:
            return np.full(self.proba_last.shape[1], math.nan)
        self._widen(len(proba))
        out = np.zeros(self.proba_last.shape[1])
        out[:len(proba)] = proba
        return out

    def add(self, x: dict, t0: float, version: int, value, t_label: float | None,
            proba=None) -> int:
        """A new pending instance and its initial prediction (and its class probabilities:
        a vector over class indices, or None); returns its row."""
        if not self._free:
            self._grow()
        row = self._free.pop()
        self._arrivals += 1
        self.arrival[row] = self._arrivals
        self.version_at[row] = self.predicted_at[row] = version
        self.stamp[row] = 0
        self.last[row] = self.missing if value is None else value
        self.n_scheduled[row] = 0
        self.changes[row] = []
        self.extra[row] = None
        self.scheduled_times[row] = None
        self.leaf[row], self.end[row] = 0, _OPEN
        if self.scored is not None:
            self.proba_last[row] = self._vector(proba)
            self.proba_full[row] = []
        self._set_features(row, x)
        policy = self.policy
        if policy.kind == "every_k_labels":
            self.buckets.add(version, row, self._arrivals)
            if self.deferred:
                if not self._unrouted:
                    self._unrouted_since = version
                self._unrouted.append(row)
                if not self.dense[row]:
                    self.stop_deferring()
        elif policy.kind == "every":
            heapq.heappush(self.timers, (t0 + policy.every, self._arrivals, row, t0, None, 1))
        elif policy.kind == "bin_boundaries" and t_label is not None and t_label > t0 \
                and policy.bins >= 2:
            heapq.heappush(self.timers, (bin_start(t0, t_label, policy.bins, 2), self._arrivals,
                                         row, t0, t_label, 2))
        if policy.timed:
            self.scheduled_times[row] = []
        # Every scheduled re-prediction is recorded; the first one always starts a run.
        self.last_scheduled[row] = self.missing if not self.classification else -2
        return row

    def _set_features(self, row: int, x: dict) -> None:
        self.x[row] = x
        encoded = self.predictor.encode(x) if self.predictor.dense else None
        if encoded is not None and self.features is None:
            self.features = np.zeros((self._cap, len(encoded)))
        if encoded is not None and len(encoded) > self.features.shape[1]:  # a new feature:
            self.features = np.pad(self.features,  # the rows before lack it (`absent_features`)
                                   ((0, 0), (0, len(encoded) - self.features.shape[1])),
                                   constant_values=math.nan)
        ok = encoded is not None and len(encoded) == self.features.shape[1]
        self.dense[row] = ok
        if ok:
            self.features[row] = encoded

    def update(self, row: int, x: dict, t: float, value, version: int, proba=None) -> None:
        """New features (an InstanceUpdate) and the prediction made with them at t (with its
        class probabilities, or None)."""
        if self.deferred:  # the rounds so far saw the old features
            self.resolve()
            self.leaf[row] = 0
            self._unrouted.append(row)
            self._route_all = True
        self._set_features(row, x)
        if self.deferred and not self.dense[row]:
            self.stop_deferring()
        value = self.missing if value is None else value
        self.last[row] = value
        self.predicted_at[row] = version
        self.stamp[row] = 0
        if self.scored is not None:
            proba = self.proba_last[row] = self._vector(proba)
        if self.extra[row] is None:
            self.extra[row] = []
        self.extra[row].append((t, value, proba))

    # -- scheduling -----------------------------------------------------------------------------
    def round_at(self, label_number: int, t: float) -> None:
        """A label at t is about to be learned as label `label_number`: its round (made now,
        deferred or not) is at t, unless that number's round was made already, at a label
        whose learning failed (scheduled times derive from these).

        >>> from transforms.models.specs import ModelSpec
        >>> model = ModelSpec.parse("majority").build(["a", "b"])
        >>> rows = PendingRows(RepredictPolicy.parse("every_k_labels:2"), True, model)
        >>> rows.round_at(1, 5.0); rows.round_at(2, 7.0); rows.round_at(2, 9.0)
        >>> rows.round_times[:rows.n_round_times].tolist()
        [5.0, 7.0]
        """
        if self.buckets is None or label_number <= self.n_round_times:
            return
        if self.n_round_times == len(self.round_times):
            self.round_times = np.concatenate([self.round_times, np.empty(len(self.round_times))])
        self.round_times[self.n_round_times] = t
        self.n_round_times += 1

    def due_at_label(self, label_number: int) -> np.ndarray:
        """The rows due before the model learns label `label_number`. Each label number has
        one round: when learning it failed (the label left as a dead letter), the next label
        takes its number and its round is not made again."""
        if self.buckets is None or label_number <= self.rounds:
            return np.empty(0, dtype=np.int64)
        self.rounds = label_number
        return self.buckets.due(label_number, self.arrival)

    def due_until(self, t: float) -> list[np.ndarray]:
        """Rows with timed re-predictions due at or before t, in time order, as rounds in
        which no row appears twice (a row can fall due again before the next event); each
        due time is recorded with its row and the row's next one scheduled."""
        rounds: list[list] = []
        seen: dict = {}
        timers = self.timers
        policy = self.policy
        while timers and timers[0][0] <= t:
            t_due, arrival, row, t0, t_label, j = heapq.heappop(timers)
            if self.arrival[row] != arrival:
                continue  # labelled since
            k = seen[row] = seen.get(row, -1) + 1
            if k == len(rounds):
                rounds.append([])
            rounds[k].append(row)
            self.scheduled_times[row].append(t_due)
            if policy.kind == "every":
                heapq.heappush(timers, (t0 + (j + 1) * policy.every, arrival, row, t0, None,
                                        j + 1))
            elif j < policy.bins:
                heapq.heappush(timers, (bin_start(t0, t_label, policy.bins, j + 1), arrival,
                                        row, t0, t_label, j + 1))
        return [np.array(rows, dtype=np.int64) for rows in rounds]

    # -- deferred re-predictions ----------------------------------------------------------------
    def defer_round(self, label_number: int, model) -> bool:
        """The round before the model learns label `label_number`, deferred; False: the
        predictor cannot hold the model's state now, and re-predictions are made at once
        from here on (`due_at_label`, `repredict`)."""
        predictor = self.predictor
        if model._root is None:  # nothing learned yet: no row is due
            self.rounds = label_number
            return True
        if not predictor.window_open:
            self.resolve()
            rows = ((self.arrival != -1) & (self.end == _OPEN)).nonzero()[0]
            if not len(rows):  # (none pending, as before a stream's first instance: none due)
                self.rounds = label_number
                return True
            lost = predictor.open_window(model, self.leaf[rows])
            if lost is None or not self._route(model, rows[lost | self.guessed[rows]]):
                self.stop_deferring()
                return False
        elif self._unrouted and (self._route_all or
                                 self._unrouted_since + 1 + self.policy.k <= label_number):
            # Routed when first due, or before the tree changes shape (then all at once).
            rows = np.array(self._unrouted, dtype=np.int64)
            if not self._route(model, rows[(self.arrival[rows] != -1)
                                            & (self.end[rows] == _OPEN)]):
                self.stop_deferring()
                return False
        self.rounds = label_number
        labels = label_number - self.resolved
        if labels >= 4 * self.policy.k and labels * (self._cap - len(self._free)) \
                * max(2, len(predictor.classes)) >= WINDOW_WORK:
            self.resolve()
        return True

    def _route(self, model, rows: np.ndarray) -> bool:
        """The leaves `rows` reach now (the rows waiting to be routed are then all routed);
        False if a row reaches none a snapshot can stand for (re-predict at once instead)."""
        if len(rows):
            routed = self.predictor.window_route(model, self.features,
                                                 _Features(self.x, rows), rows)
            if routed is None:
                return False
            self.leaf[rows], self.guessed[rows] = routed
        self._unrouted.clear()
        self._route_all = False
        return True

    def learned(self, model, x: dict) -> None:
        """After the model learned `x` (the label of the last round), deferred; x None: its
        learning failed part-way."""
        if self.predictor.window_open and (
                x is None or not self.predictor.window_learned(model, x, self.rounds)):
            self.resolve()
            self.predictor.close_window(keep=False)

    def stop_deferring(self) -> None:
        """Make what waits and re-predict at once from here on."""
        if self.deferred:
            self.resolve()
            self.predictor.close_window(keep=False)
            self.deferred = False
            self.stamp[:] = 0
            rows = (self.arrival != -1).nonzero()[0]
            self.buckets.rebuild(rows, self.version_at[rows], self.arrival[rows],
                                 self.rounds + 1)

    def resolve(self) -> None:
        """Make the re-predictions of the rounds since the last call, each row with the
        snapshot of its leaf at each of its rounds (vectorised, leaf by leaf), and fill the
        values of the rows taken meanwhile."""
        first, last, k = self.resolved + 1, self.rounds, self.policy.k
        if not self.deferred or last < first:
            self._release_held()
            return
        rows = ((self.arrival != -1) & (self.leaf > 0)).nonzero()[0]
        serials = self.leaf[rows]
        order = np.argsort(serials, kind="stable")
        rows, serials = rows[order], serials[order]
        v = self.version_at[rows]
        end = np.minimum(self.end[rows], last)
        bounds = np.flatnonzero(np.r_[True, serials[1:] != serials[:-1], True]) \
            if len(rows) else np.zeros(1, dtype=np.int64)
        parts = []
        predictor = self.predictor
        for start, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            lo, hi, snaps = predictor.window_segments(int(serials[start]), first, last)
            for a, b in _chunks(start, stop, max(1, WINDOW_CELLS // len(snaps))):
                parts.extend(self._leaf_pairs(rows[a:b], v[a:b], end[a:b], lo, hi, snaps, k))
        if parts:
            pair_rows, m_lo, m_hi, codes = (np.concatenate(p) for p in zip(*parts))
            self._record_runs(pair_rows, m_lo, m_hi, self.to_values(codes, predictor.classes))
        self.resolved = last
        self.predictor.close_window(keep=True)
        self._release_held()

    def _leaf_pairs(self, rows, v, end, lo, hi, snaps, k) -> list:
        """[(row, m_lo, m_hi, code) arrays] of one leaf's `rows` (arrived at versions `v`,
        their last rounds `end`) over its snapshots `snaps` (in force over label numbers
        lo..hi), or [] when none of them has a round there."""
        # Rounds of row r: label numbers v + 1 + K·m (m ≥ 1) up to its end; in segment s, m
        # runs from m_lo to m_hi.
        after, last = v[:, None] + 1, end[:, None]
        m_lo = np.maximum(-((after - lo) // k), 1)
        m_hi = (np.minimum(hi, last) - after) // k
        need = m_hi >= m_lo
        i, s = need.nonzero()
        if not len(i):
            return []
        # The rows × snapshots that any pair needs.
        used_rows, used_snaps = need.any(axis=1).nonzero()[0], need.any(axis=0).nonzero()[0]
        block = need[used_rows][:, used_snaps]
        ours = rows[used_rows]
        codes = self.predictor.window_block(self.features[ours], snaps[used_snaps], block,
                                            _Features(self.x, ours))[block]
        return [(rows[i], m_lo[i, s], m_hi[i, s], codes)]

    def _record_runs(self, pair_rows, m_lo, m_hi, values) -> None:
        """Rounds m_lo..m_hi of each row (pairs grouped by row, in round order) gave `values`:
        kept run-length encoded, as `repredict` keeps them."""
        first = np.r_[True, pair_rows[1:] != pair_rows[:-1]]
        prev = np.empty_like(values)
        prev[1:] = values[:-1]
        prev[first] = self.last_scheduled[pair_rows[first]]
        changed = (values != prev).nonzero()[0]
        changes = self.changes
        for row, j, value in zip(pair_rows[changed].tolist(), (m_lo[changed] - 1).tolist(),
                                 values[changed].tolist()):
            changes[row].append((j, value))
        last = np.r_[first[1:], True]
        rows = pair_rows[last]
        self.last_scheduled[rows] = self.last[rows] = values[last]
        self.n_scheduled[rows] = m_hi[last]
        self.predicted_at[rows] = -1

    def _release_held(self) -> None:
        for row, values in self._held:
            values[:] = self._scheduled_values(row, len(values))
            self._release(row)
        self._held = []

    # -- predicting -----------------------------------------------------------------------------
    def repredict(self, rows: np.ndarray, model, version: int) -> np.ndarray:
        """Scheduled re-predictions of `rows` with the model at `version`; returns the values.
        A row whose last prediction was made with this very model reuses it, and so does one
        whose answer the predictor stamps as unchanged (its tree leaf has not learned)."""
        fresh = self.predicted_at[rows] != version
        # The usual case: the model learned since any of them was predicted. (count_nonzero:
        # cheaper than .all() and .any(), and this runs at every label.)
        if np.count_nonzero(fresh) == len(fresh):
            values = self.last[rows] = self._predict(rows, model)
            self.predicted_at[rows] = version
        else:
            values = self.last[rows]  # a copy (fancy indexing)
            if fresh.any():
                todo = rows[fresh]
                values[fresh] = self.last[todo] = self._predict(todo, model)
                self.predicted_at[todo] = version
        if self.scored is not None:
            self._keep_proba(rows)
        changed = values != self.last_scheduled[rows]
        if np.count_nonzero(changed):
            n_scheduled = self.n_scheduled
            changes = self.changes
            for row, value in zip(rows[changed].tolist(), values[changed].tolist()):
                changes[row].append((n_scheduled[row], value))
            self.last_scheduled[rows[changed]] = values[changed]
        self.n_scheduled[rows] += 1
        return values

    def _keep_proba(self, rows: np.ndarray) -> None:
        """The rows' current vectors as their next scheduled re-prediction's (before
        `n_scheduled` counts it); a full chunk is set aside."""
        slot = self.n_scheduled[rows] & _SLOT
        self.proba_chunk[rows, slot] = self.proba_last[rows]
        full = (slot == _SLOT).nonzero()[0]
        if len(full):
            for row in rows[full].tolist():
                self.proba_full[row].append(self.proba_chunk[row].copy())

    def _predict(self, rows: np.ndarray, model) -> np.ndarray:
        """The values of `rows` predicted now (and, with probabilities, their vectors into
        `proba_last`)."""
        if self.scored is None:
            return self._predict_values(rows, model)
        try:
            return self._predict_values(rows, model)
        except NotImplementedError:  # a pipeline whose last step gives no probabilities
            self.scored = None
            return self._predict_values(rows, model)

    def _set_proba(self, rows: np.ndarray, proba: np.ndarray, labels: list) -> None:
        vectors = self.to_proba(proba, labels)
        self._widen(vectors.shape[1])
        if vectors.shape[1] == self.proba_last.shape[1]:  # the usual case: one assignment
            self.proba_last[rows] = vectors
            return
        self.proba_last[rows] = padded_proba(vectors, self.proba_last.shape[1])
        self.proba_last[rows[np.isnan(vectors).any(axis=1)]] = math.nan  # (none stays none)

    def _predict_values(self, rows: np.ndarray, model) -> np.ndarray:
        predictor, scored, to_values = self.predictor, self.scored, self.to_values
        out = np.empty(len(rows), dtype=self.dtype)
        dense = self.dense[rows] if predictor.dense else np.zeros(len(rows), dtype=bool)
        every = dense.all()
        for mask, use_rows in ((dense, True), (~dense, False)) if not every else ((dense, True),):
            if not mask.any():
                continue
            part = rows[mask] if not every else rows
            xs = _Features(self.x, part)
            if use_rows and predictor.stamps_rows:
                # Rows whose stamp is unchanged keep their last prediction.
                codes, labels, stamps, changed, proba = predictor.predict_changed(
                    model, self.features, xs, self.stamp[part], at=part, scored=scored)
                self.stamp[part] = stamps
                kept = self.last[part]
                kept[changed] = to_values(codes[changed], labels)
                if proba is not None and changed.any():
                    self._set_proba(part[changed], proba[changed], labels)
                if every:
                    return kept
                out[mask] = kept
                continue
            features = self.features[part] if use_rows else None
            if scored is None:
                codes, labels = predictor.predict(model, features, xs)
            else:
                codes, labels, proba = predictor.predict_scored(model, features, xs, scored)
                self._set_proba(part, proba, labels)
            out[mask] = to_values(codes, labels)
        return out

    # -- leaving --------------------------------------------------------------------------------
    def take(self, row: int) -> tuple:
        """The row's re-predictions (times, values, class probabilities: a matrix, one row per
        re-prediction, or None) in time order; frees the row. Deferred, the values array may
        be filled later (by `resolve`, before the engine's drain ends)."""
        if self.deferred:
            n = max(0, (self.rounds - int(self.version_at[row]) - 1) // self.policy.k)
            if n > self.n_scheduled[row]:
                if self.extra[row] is None:
                    values = np.empty(n, dtype=self.dtype)
                    self.end[row] = self.rounds
                    self._held.append((row, values))
                    return self._round_times(row, n), values, None
                self.resolve()
        n = int(self.n_scheduled[row])
        times = values = None
        kept = self.scored is not None and self.proba_full[row] is not None
        proba = self._take_proba(row, n) if kept and n else None
        if n:
            values = self._scheduled_values(row, n)
            if self.buckets is not None:
                times = self._round_times(row, n)
            else:
                times = np.array(self.scheduled_times[row])
        extra = self.extra[row]
        if extra:
            t_extra = np.array([t for t, _, _ in extra])
            v_extra = np.array([v for _, v, _ in extra], dtype=self.dtype)
            width = self.proba_last.shape[1]
            p_extra = np.array([padded_proba(p, width) for _, _, p in extra]) if kept else None
            if times is None:
                times, values, proba = t_extra, v_extra, p_extra
            else:
                # At equal times the scheduled one came first (labels and timers precede
                # the update events of their instant).
                order = np.lexsort((np.r_[np.zeros(len(times)), np.ones(len(t_extra))],
                                    np.r_[times, t_extra]))
                times, values = np.r_[times, t_extra][order], np.r_[values, v_extra][order]
                if kept:
                    proba = np.concatenate([proba, p_extra])[order]
        self._release(row)
        return times, values, proba

    def _scheduled_values(self, row: int, n: int) -> np.ndarray:
        """The row's n scheduled re-predictions, from their runs."""
        changes = self.changes[row]
        if len(changes) == 1:  # the usual case: the answer never changed
            return np.full(n, changes[0][1], dtype=self.dtype)
        js = np.array([j for j, _ in changes] + [n])
        return np.repeat(np.array([v for _, v in changes], dtype=self.dtype), js[1:] - js[:-1])

    def _round_times(self, row: int, n: int) -> np.ndarray:
        """Times of the rounds before label numbers version_at + 1 + k, + 2k, ..., + nk (a
        strided view: each was recorded when its round was made)."""
        k, first = self.policy.k, int(self.version_at[row])
        return self.round_times[first + k:first + n * k + 1:k]

    def _release(self, row: int) -> None:
        kept = self.scored is not None and self.proba_full[row] is not None
        self.arrival[row] = -1
        self.x[row] = self.changes[row] = self.extra[row] = self.scheduled_times[row] = None
        if kept:
            self.proba_full[row] = None
        self._free.append(row)

    def _take_proba(self, row: int, n: int) -> np.ndarray:
        """The row's n scheduled re-predictions' vectors (n × width)."""
        width = self.proba_last.shape[1]
        parts = [chunk if chunk.shape[1] == width else padded_proba(chunk, width)
                 for chunk in self.proba_full[row]]
        parts.append(self.proba_chunk[row, :n % PROBA_CHUNK])
        return np.concatenate(parts) if len(parts) > 1 else parts[0].copy()  # (a view)

