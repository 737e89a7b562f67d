"""The ordered replay of one (stream, model) key, in plain Python (no Beam).

`ReplayEngine.drain(events, T)` takes buffered events with time ≤ T, processes them in the
DESIGN order `(t, rank, seq)` and returns what happened: a prediction at each instance's
arrival (initial), a prediction just before the model learns each label (final, test-then-train)
and an `Outcome` per label. Both Beam replay paths (stateful DoFn, and GroupByKey → sort) call
this same engine, so they cannot disagree.
"""

from __future__ import annotations

import heapq
import math
import pickle
from dataclasses import dataclass, field

from transforms.models import ModelSpec
from transforms.records import (FINAL, ID, INITIAL, INSTANCE, KIND, LABEL, REPREDICTION, SEQ,
                                UPDATE, X, Y, Outcome, dead_letter)
from transforms.records import T as TIME

# instances/updates/labels: events seen; labelled: labels that met their pending instance (one
# Outcome each); orphan_labels: labels whose instance was never seen (learned_orphans of them
# carried features and were learned from); unscored_*: labelled instances whose model made no
# prediction (an untrained river model), not scored, as river does.
COUNTERS = ("instances", "updates", "labels", "labelled", "orphan_labels", "learned_orphans",
            "dead_letters", "unscored_initial", "unscored_final")


@dataclass
class DrainResult:
    """Everything one drain produced. `counts` are deltas, summed across drains."""

    predictions: list = field(default_factory=list)  # (id, kind, t, y_pred)
    outcomes: list = field(default_factory=list)  # Outcome
    dead_letters: list = field(default_factory=list)
    counts: dict = field(default_factory=lambda: dict.fromkeys(COUNTERS, 0))


@dataclass(frozen=True)
class RepredictPolicy:
    """When a pending instance is predicted again, with its stored features.

    - `none`: never (initial and final predictions only).
    - `every_k_labels:K` (K defaults to 10): at the (K+1)th, (2K+1)th, ... label the model
      learns after the instance arrived, before it learns that label (Grzenda et al.'s reference
      implementation; K=1 is Algorithm 1 of the paper).

    >>> RepredictPolicy.parse("every_k_labels:5")
    RepredictPolicy(kind='every_k_labels', k=5)
    >>> RepredictPolicy.parse("none").kind
    'none'
    """

    kind: str = "none"
    k: int = 10

    @classmethod
    def parse(cls, text: str) -> RepredictPolicy:
        name, _, arg = str(text).strip().partition(":")
        if name == "none" and not arg:
            return cls("none")
        if name == "every_k_labels":
            try:
                k = int(arg) if arg else 10
            except ValueError:
                k = 0
            if k < 1:
                raise ValueError(f"re-prediction policy {text!r}: K must be a positive integer")
            return cls("every_k_labels", k)
        raise ValueError(f"unknown re-prediction policy {text!r}; use none or every_k_labels:K")

    def __str__(self) -> str:
        return "none" if self.kind == "none" else f"{self.kind}:{self.k}"


class LateEventError(RuntimeError):
    """An event older than what the engine has already processed: the caller broke the
    watermark contract (drain only what the watermark has passed)."""


class ReplayEngine:
    """Delayed prequential replay of one model over one stream.

    >>> from transforms.records import event, RANK_INSTANCE, RANK_LABEL
    >>> engine = ReplayEngine(ModelSpec.parse("no-change"), stream="s", classes=["a", "b"])
    >>> out = engine.drain([event(0, RANK_INSTANCE, 0, "instance", 1, {}),
    ...                     event(1, RANK_LABEL, 1, "label", 1, None, "b"),
    ...                     event(1, RANK_INSTANCE, 2, "instance", 2, {})], T=1)
    >>> [(p[0], p[1], p[3]) for p in out.predictions]
    [(1, 'initial', 'a'), (1, 'final', 'a'), (2, 'initial', 'b')]
    >>> out.outcomes[0].initial, out.outcomes[0].y
    (0, 1)
    """

    def __init__(self, model: ModelSpec, stream: str, classes: list | None = None,
                 task: str | None = None, final: bool = True,
                 repredict: RepredictPolicy | None = None):
        self.stream = stream
        self.repredict = repredict or RepredictPolicy()
        # final=False skips the test-then-train prediction: half the predict calls, for users
        # who only need the delayed-prequential (initial) scores, as river reports them.
        self.final = final
        self.task = task or model.task()
        self.declared_classes = classes is not None
        self.classes: list = list(classes) if classes else []
        self._class_index = {c: i for i, c in enumerate(self.classes)}
        self.model = model.build(list(classes) if classes else None)
        # id -> [t_arrival, x, initial prediction, [(t, re-prediction)], model version, last]
        self.pending: dict = {}
        self.n_labels = 0
        # Labels the model has learned (including orphans with features): its version. A
        # re-prediction with an unchanged model would repeat the last one, so it is reused.
        self.version = 0
        self._due: list = []  # heap of (label number at which due, arrival order, id)
        self._arrivals = 0
        self.prev_label = 0 if self.task == "classification" else math.nan
        self._label_counts: list[int] = [0] * len(self.classes)
        self._majority = 0
        self.last_key: tuple = (-math.inf, -1, -1)

    # -- class indices -------------------------------------------------------------------------
    def _index(self, value, extend: bool):
        i = self._class_index.get(value)
        if i is None and extend:
            i = self._class_index[value] = len(self.classes)
            self.classes.append(value)
            self._label_counts.append(0)
        return i

    def _label_baselines(self, y_index: int) -> tuple[int, int]:
        """Persistent (previous label) and Majority (counted including this label)."""
        prev = self.prev_label
        counts = self._label_counts
        counts[y_index] += 1
        best = self._majority
        if counts[y_index] > counts[best] or (counts[y_index] == counts[best] and y_index < best):
            self._majority = best = y_index
        self.prev_label = y_index
        return prev, best

    # -- the replay ----------------------------------------------------------------------------
    def drain(self, events, T: float = math.inf) -> DrainResult:
        """Process `events` (all with t ≤ T, in any order) in `(t, rank, seq)` order."""
        out = DrainResult()
        batch = sorted(events)
        if batch:
            if batch[-1][TIME] > T:
                raise ValueError(f"drain({T}) was given an event at t={batch[-1][TIME]}")
            if batch[0][:3] <= self.last_key:
                raise LateEventError(
                    f"stream {self.stream!r}: event at t={batch[0][TIME]} (seq {batch[0][SEQ]}) "
                    f"arrived after the replay had passed t={self.last_key[0]}")
            self.last_key = batch[-1][:3]
        handlers = {INSTANCE: self._on_instance, UPDATE: self._on_update, LABEL: self._on_label}
        for ev in batch:
            handlers[ev[KIND]](ev, out)
        return out

    def _reject(self, out: DrainResult, reason: str, field: str, ev) -> None:
        out.counts["dead_letters"] += 1
        out.dead_letters.append(dead_letter(self.stream, reason, field=field, record=ev))

    def _on_instance(self, ev, out: DrainResult) -> None:
        key, t, x = ev[ID], ev[TIME], ev[X]
        out.counts["instances"] += 1
        if key in self.pending:
            self._reject(out, f"instance id {key!r} is already pending", "id", ev)
            return
        y_pred = self.model.predict_one(x)
        self.pending[key] = [t, x, y_pred, [], self.version, y_pred]
        out.predictions.append((key, INITIAL, t, y_pred))
        if self.repredict.kind == "every_k_labels":
            self._arrivals += 1
            heapq.heappush(self._due, (self.version + self.repredict.k + 1, self._arrivals, key))

    def _on_update(self, ev, out: DrainResult) -> None:
        key = ev[ID]
        state = self.pending.get(key)
        out.counts["updates"] += 1
        if state is None:
            self._reject(out, f"update for id {key!r}, which is not pending", "id", ev)
            return
        state[1] = ev[X]
        self._predict_again(key, state, ev[TIME], out)

    def _on_label(self, ev, out: DrainResult) -> None:
        key, t, y = ev[ID], ev[TIME], ev[Y]
        out.counts["labels"] += 1
        classification = self.task == "classification"
        if classification and self.declared_classes and y not in self._class_index:
            self._reject(out, f"label {y!r} is not one of the declared classes {self.classes}",
                         "label", ev)
            return
        state = self.pending.pop(key, None)
        if state is None:
            # An orphan: its instance was never seen. With features it is still learned from,
            # as the reference implementation does; without, nothing can use it.
            out.counts["orphan_labels"] += 1
            if ev[X] is not None:
                out.counts["learned_orphans"] += 1
                self._repredict_due(t, out)
                self.model.learn_one(ev[X], y)
                self.version += 1
                if classification:
                    self._label_baselines(self._index(y, extend=True))
            else:
                self._reject(out, f"label for unknown instance id {key!r}", "id", ev)
            return
        t_arrival, x, initial, repredictions = state[:4]
        if ev[X] is not None:
            x = ev[X]
        final = None
        if self.final:
            final = self.model.predict_one(x)
            out.predictions.append((key, FINAL, t, final))
            if final is None:
                out.counts["unscored_final"] += 1
        self._repredict_due(t, out)
        self.model.learn_one(x, y)
        self.version += 1
        self.n_labels += 1
        out.counts["labelled"] += 1
        if initial is None:
            out.counts["unscored_initial"] += 1
        if classification:
            y_index = self._index(y, extend=True)
            prev, majority = self._label_baselines(y_index)
            index = self._index
            out.outcomes.append(Outcome(
                self.n_labels, key, t_arrival, t, y_index, prev, majority,
                None if initial is None else index(initial, extend=True),
                None if final is None else index(final, extend=True),
                tuple((tr, None if yr is None else index(yr, extend=True))
                      for tr, yr in repredictions)))
        else:
            prev, self.prev_label = self.prev_label, y
            out.outcomes.append(Outcome(self.n_labels, key, t_arrival, t, y, prev, None,
                                        initial, final, tuple(repredictions)))

    def _predict_again(self, key, state, t: float, out: DrainResult) -> None:
        """Predict a pending instance again, with its current features."""
        y_pred = self.model.predict_one(state[1])
        state[3].append((t, y_pred))
        state[4], state[5] = self.version, y_pred
        out.predictions.append((key, REPREDICTION, t, y_pred))

    def _repredict_due(self, t: float, out: DrainResult) -> None:
        """Before the model learns label number `version + 1`, re-predict the instances due
        then: O(log pending) per label plus the re-predictions themselves."""
        due, label_number, k = self._due, self.version + 1, self.repredict.k
        while due and due[0][0] <= label_number:
            _, order, key = heapq.heappop(due)
            state = self.pending.get(key)
            if state is None:  # labelled since: dropped lazily
                continue
            if state[4] == self.version:  # model unchanged since its last prediction: reuse
                state[3].append((t, state[5]))
                out.predictions.append((key, REPREDICTION, t, state[5]))
            else:
                self._predict_again(key, state, t, out)
            heapq.heappush(due, (label_number + k, order, key))

    # -- state ---------------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """Deterministic serialisation of the whole engine (model, pending, counters)."""
        return pickle.dumps(self, protocol=5)

    @staticmethod
    def from_bytes(data: bytes) -> ReplayEngine:
        # Only ever our own state bytes, written by to_bytes on another worker.
        return pickle.loads(data)
