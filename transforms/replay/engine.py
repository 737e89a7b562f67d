"""The ordered replay of one (stream, model) key, in plain Python (no Beam).

`ReplayEngine.drain(events, T)` takes buffered events with time ≤ T, processes them in the
DESIGN order `(t, rank, seq)` and returns what happened: a prediction at each instance's
arrival (initial), a prediction just before the model learns each label (final, test-then-train)
and an `Outcome` per label. Both Beam replay paths (stateful DoFn, and GroupByKey → sort) call
this same engine, so they cannot disagree.
"""
from __future__ import annotations

import copy
import datetime
import itertools
import math
import pickle
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from metrics.baselines import BaselineViews
from metrics.binning import binned_many, binned_proba_many
from metrics.probabilistic import PROBABILITY_SLACK, PROBABILITY_SUM_SLACK
from transforms.errors import InputError, ModelError, shown_briefly
from transforms.models.binary import LabelsError, with_binary_labels
from transforms.models.naive_bayes_batch import fast_predict_one, predict_with_proba
from transforms.models.randomness import HASH_SEED_COUNT, RandomStates, hash_seed
from transforms.models.specs import ModelSpec
from transforms.models.temporal import delay_aware
from transforms.records import (ID, INSTANCE, KIND, LABEL, PRETRAIN, SEQ, UPDATE, Outcome,
                                SegmentPlace, X, Y, column_value, dead_letter, event_record,
                                segment_name)
from transforms.records import T as TIME
from transforms.replay.predictions import PredictionLog
from transforms.replay.protocols import Holdout
from transforms.replay.repredict import PendingRows, RepredictPolicy
from transforms.streams.rows import written_as
from transforms.vocabulary import FINAL, INITIAL, REPREDICTION

# instances/updates/labels: events seen; labelled: labels that met their pending instance (one
# Outcome each); orphan_labels: labels whose instance was never seen (learned_orphans of them
# carried features and were learned from); unscored_*: labelled instances whose model made no
# prediction (an untrained river model), not scored, as river does; model_errors: instances
# dead-lettered because the model failed on them (--on-model-error dead-letter); refused_*:
# instances whose id was pending, and labels dead-lettered besides orphans (an undeclared class,
# the label of a refused or failed instance); unscheduled: instances the bin_boundaries policy
# could not schedule (label time unknown on arrival). So instances = labelled + pending +
# model_errors + refused_instances + held_out, and labels = labelled + orphan_labels +
# refused_labels + held_out_labels. probabilities_not_summing_to_1: scored initial and final
# predictions whose class probabilities sum to 1 ± more than PROBABILITY_SUM_SLACK;
# repredicted: labelled instances re-predicted at least once while they waited.
# pretrained: of the stream's first rows (--pretrain), those learned; pretrain_set_aside: those
# not (no label, or the model failed on it: a dead letter says which); neither is an instance.
COUNTERS = ("instances", "updates", "labels", "labelled", "orphan_labels", "learned_orphans",
            "refused_instances", "refused_labels", "dead_letters", "model_errors",
            "unscored_initial", "unscored_final", "unscheduled", "held_out", "held_out_labels",
            "probabilities_not_summing_to_1", "repredicted", "pretrained", "pretrain_set_aside")

# A model failure's dead letter carries the event's kind, id's text and time under this key
# until it is written (with `seq`, what the prediction log records of it: `ReplayEngine.fails_at`).
FAILED_ON = "failed_on"
# A backfill's count of the events its log's run set aside whose place in the stream read holds
# another event (`ReplayEngine.fails_at`): they cannot be set aside again.
SET_ASIDE_NOT_FOUND = "set_aside_not_found"
# The reason of the label of an instance set aside because the model failed on it.
LEFT_WITH_ITS_INSTANCE = "dead-lettered because the model failed on it"


def _number_labelled(ev: tuple) -> tuple:
    """A regressor's label event with its label text as the number it reads as: a column of
    numbers that holds one text ('#VALUE!' in a CSV file) is read as text throughout. Text
    that reads as no number stays, for `_label_refused` to set aside.

    >>> _number_labelled((1.0, 2, 3, "label", "a", None, " 2.5"))[-1]
    2.5
    """
    return (*ev[:Y], written_as(ev[Y], False), *ev[Y + 1:])


def is_model_failure(dead_letter: dict) -> bool:
    """Whether a dead letter is of a model's failure (`--on-model-error dead-letter`): the
    event the model failed on, or the label of an instance it failed on.

    >>> is_model_failure({"field": "model", "reason": "model m, stream s, instance 7: ..."})
    True
    >>> is_model_failure({"field": "id", "reason": "label for id 7, which is not pending"})
    False
    """
    return dead_letter.get("field") == "model" or \
        dead_letter.get("reason", "").endswith(LEFT_WITH_ITS_INSTANCE)


def key_counts(raw: dict, final: bool = True) -> dict:
    """A (stream, model) key's counts as the manifest (and `evaluate_locally`) gives them, from
    the replay's counters (`DrainResult.counts`, `pending` added): every counter, the scored
    predictions and those pending at the end, which add up as docs/semantics.md says.

    >>> c = key_counts({"instances": 5, "labels": 4, "labelled": 4, "unscored_initial": 1,
    ...                 "pending": 1})
    >>> c["scored_initial"], c["scored_final"], c["pending_at_end"]
    (3, 4, 1)
    """
    c = {k: int(raw.get(k, 0)) for k in (*COUNTERS, "pending")}
    return {**{k: c[k] for k in COUNTERS},
            "scored_initial": c["labelled"] - c["unscored_initial"],
            "scored_final": c["labelled"] - c["unscored_final"] if final else 0,  # (--no-final)
            "pending_at_end": c["pending"]}


def none_scored_initially(s, delay, evaluated: int, range_text: str | None = None):
    """The error of stream `s` none of whose labelled instances could be scored at arrival:
    every one came before the first label was learned, under `delay` (a `DelaySpec`, None when
    the input gives the label times) with `evaluated` instances (in the range `range_text`).

    >>> from transforms.streams.delays import DelaySpec
    >>> from transforms.streams.sources import StreamSpec
    >>> print(none_scored_initially(StreamSpec.parse('synth:SEA{"n": 200}'),
    ...                             DelaySpec.parse("1h"), 200))  # doctest: +NORMALIZE_WHITESPACE
    stream sea: no initial prediction could be scored: every labelled instance arrived before
    any model had learned a label (delay 1h: the first label comes after the last of the 200
    instances evaluated, which arrive one a second: the stream has no event times); give a
    shorter --delay, or a longer stream
    """
    what = f"stream {s.name}: no initial prediction could be scored: every labelled instance " \
        f"arrived before any model had learned a label ("
    if delay is None:
        return InputError(what + "the label times of the input); check the label times")
    last = "the only instance" if evaluated == 1 else f"the last of the {evaluated} instances"
    untimed = ", which arrive one a second: the stream has no event times" if \
        delay.unit != "events" and s.times_are_row_numbers() else ""
    none_shorter = delay.kind == "constant" and delay.value == 0
    return InputError(
        what + f"delay {delay}: the first label comes after {last} evaluated{untimed}); "
        + ("give " if none_shorter else "give a shorter --delay, or ")
        + (f"a wider range than {range_text} (--from/--to)" if range_text else "a longer stream"))


# With `maturity`, counts per arrival day (UTC) also go into the counts, as flat keys that add
# up like the others: `day:2026-11-01:instances` (arrived and waiting for a label),
# `day:…:labelled`, `day:…:left` (set aside unlabelled: the model failed on it) and
# `day:…:latency=D` (labelled within D days of arrival and after D − 1: D = ⌈latency / 1 day⌉).
DAY_PREFIX = "day:"
DAY_SECONDS = 86_400
# And per segment: `segment:country=DE:instances` (arrived) and `segment:…:settled` (labelled or
# left), so that a segment's pending instances are known.
SEGMENT_PREFIX = "segment:"
# Re-predictions mapped to bins in one go: large enough to amortise numpy's per-call cost,
# small enough to keep the temporary arrays of a K=1 run at a few tens of MB.
BIN_BATCH = 1 << 18
# Events between a drain's heartbeats (`ReplayEngine.drain`).
HEARTBEAT = 1000


@dataclass
class DrainResult:
    """Everything one drain produced. `counts` are deltas, summed across drains.

    Example
    -------

    >>> from transforms.records import RANK_INSTANCE, RANK_LABEL, event
    >>> engine = ReplayEngine(ModelSpec.parse("no-change"), "s", classes=["a", "b"])
    >>> out = engine.drain([event(0, RANK_INSTANCE, 0, "instance", 1, {}),
    ...                     event(1, RANK_LABEL, 1, "label", 1, None, "b")])
    >>> len(out.outcomes), out.counts["instances"], out.counts["labelled"], out.dead_letters
    (1, 1, 1, [])

    """

    predictions: PredictionLog = field(default_factory=PredictionLog)
    outcomes: list = field(default_factory=list)  # Outcome
    dead_letters: list = field(default_factory=list)
    counts: dict = field(default_factory=lambda: Counter(dict.fromkeys(COUNTERS, 0)))
    # Outcomes (indices) whose re-predictions are still to be mapped to bins, and their number.
    unbinned: list = field(default_factory=list)
    unbinned_size: int = 0
    # With resources measured: (labels, t, learn CPU s, predict CPU s, model bytes, RAM-hours)
    # at every `resources_every` labels and at the drain's end.
    resources: list = field(default_factory=list)
    # With a periodic holdout: (holdout point: labels when its set began, label time, true
    # value, prediction) for each held-out instance whose label arrived.
    holdout: list = field(default_factory=list)


class LateEventError(RuntimeError):
    """An event older than what the engine has already processed: the caller broke the
    watermark contract (drain only what the watermark has passed).

    Example
    -------

    >>> from transforms.records import RANK_INSTANCE, event
    >>> engine = ReplayEngine(ModelSpec.parse("no-change"), "s", classes=["a"])
    >>> _ = engine.drain([event(5, RANK_INSTANCE, 0, "instance", 1, {})])
    >>> try:
    ...     engine.drain([event(2, RANK_INSTANCE, 1, "instance", 2, {})])
    ... except LateEventError as e:
    ...     print(e)
    stream 's': event at t=2.0 (seq 1) arrived after the replay had passed t=5.0

    """


class ReplayEngine:
    """Delayed prequential replay of one model over one stream.

    Parameters
    ----------
    model
        The model's spec; the engine builds its own instance.
    stream
        The stream's name (in dead letters and errors).
    classes
        The declared classes in index order, or None (indices by first appearance).
    task
        `classification` or `regression` (default: the model's).
    final
        Whether to make the final (test-then-train) prediction.
    repredict
        When to re-predict pending instances (`RepredictPolicy`; default none).
    bins
        B > 0: outcomes carry their predictions for bins 0..B+1.
    log_predictions
        What the prediction log keeps: `all`, `initial-final` or `none`.
    baselines
        The views whose Majority baseline each outcome carries.
    on_model_error
        `fail` (raise `ModelError`) or `dead-letter` (set the instance aside).
    probabilities
        Whether the initial and final predictions of a classifier with `predict_proba_one`
        keep their class probabilities (vectors over class indices) in the outcomes and the
        prediction log.
    repredicted_probabilities
        Whether its re-predictions keep them too (`Outcome.bins_proba`, and the log).
    segments
        Columns whose value at an instance's arrival places it in a segment (`--segment`):
        each outcome carries its place in each segment (`Outcome.segments`): the label's
        number in the segment and the segment's own baselines.
    hidden
        Columns read only to segment by: taken out of the features before the model sees them.
    maturity
        Count instances, labels and label latencies per arrival day (`DAY_PREFIX`).
    fold
        Delayed cross-validation: (`CrossValidation`, this fold's 0-based index); the model
        learns only the labels of its fold's training instances, and predicts every instance.
    holdout
        A periodic holdout (`Holdout`): the instances it takes leave the prequential stream and
        their labels score `DrainResult.holdout`.
    resources_every
        N > 0: measure the model's cost — the CPU seconds (this thread's) spent in learning
        and in predicting, the model's size (river's `_raw_memory_usage`) and MOA's RAM-hours —
        every N labels and at the end of each drain (`DrainResult.resources`).
    binary
        For a binary classifier (river's, `_multiclass` False): the stream's (positive,
        negative) classes, which it learns as True and False (`BinaryLabels`); None: labels
        that are True/False or 1/0 already.
    fails_at
        A backfill's label pass of one logged model: the events ({seq: (kind, str(id), t)}) the run
        that wrote the log set aside because the model failed on them; here the model fails
        on them as it did there, so the pass keeps that run's label numbers and baselines.

    >>> from transforms.records import event, RANK_INSTANCE, RANK_LABEL
    >>> engine = ReplayEngine(ModelSpec.parse("no-change"), stream="s", classes=["a", "b"])
    >>> out = engine.drain([event(0, RANK_INSTANCE, 0, "instance", 1, {}),
    ...                     event(1, RANK_LABEL, 1, "label", 1, None, "b"),
    ...                     event(1, RANK_INSTANCE, 2, "instance", 2, {})], T=1)
    >>> [(p[0], p[1], p[3]) for p in out.predictions.tuples(engine.classes)]
    [(1, 'initial', 'a'), (1, 'final', 'a'), (2, 'initial', 'b')]
    >>> out.outcomes[0].initial, out.outcomes[0].y
    (0, 1)

    References
    ----------
    Grzenda, M., Gomes, H. M., Bifet, A. (2020). Performance measures for evolving
    predictions under delayed labelling classification. International Joint Conference on
    Neural Networks (IJCNN).

    Halford, M. (2020). The correct way to evaluate online machine learning models.
    (Delayed progressive validation; river's `evaluate.progressive_val_score`.)
    """

    def __init__(self, model: ModelSpec, stream: str, classes: list | None = None,
                 task: str | None = None, final: bool = True,
                 repredict: RepredictPolicy | None = None, bins: int = 0,
                 log_predictions: str = "all", baselines: BaselineViews | None = None,
                 on_model_error: str = "fail", probabilities: bool = True,
                 resources_every: int = 0, segments: tuple = (), hidden=frozenset(),
                 maturity: bool = False, fold: tuple | None = None,
                 holdout: Holdout | None = None, repredicted_probabilities: bool = False,
                 binary: tuple | None = None, fails_at: dict | None = None):
        self.stream = stream
        self.model_name = model.name
        self.spec = model  # (a model error names its parameters of the wrong kind)
        # fail: a model that raises (or returns no single value) stops the run with a
        # ModelError; dead-letter: that instance leaves as a dead letter and the run goes on.
        self.on_model_error = on_model_error
        self.bins = bins  # > 0: outcomes carry their bin predictions, not the re-predictions
        self.log_predictions = log_predictions  # what DrainResult.predictions keeps
        self.repredict = repredict or RepredictPolicy()
        # final=False skips the test-then-train prediction: half the predict calls, for users
        # who only need the delayed-prequential (initial) scores, as river reports them.
        self.final = final
        self.task = task or model.task()
        self.classification = self.task == "classification"
        self.declared_classes = classes is not None
        self.classes: list = list(classes) if classes else []
        self._class_index = {c: i for i, c in enumerate(self.classes)}
        # The outcomes' class indices (`_out_code`): `classes` also indexes a class a model
        # predicts before its first label (a binary classifier's other class), the outcomes in
        # label order, as a backfill's join does. `outcome_classes` names them.
        self.outcome_classes: list = list(self.classes)
        self._out: list = list(range(len(self.classes)))  # index -> outcome index (−1: none)
        self._out_shifted = False  # some class's outcome index is not its index
        self.model = model.build(list(classes) if classes else None)
        if self.classification:  # a binary classifier learns label == positive
            self.model = with_binary_labels(self.model, *(binary or (None, None)))
        self._predict_one = fast_predict_one(self.model)  # its exact answers, sooner
        # The predictions the evaluation adds (final, re-predictions) draw nothing from the
        # model's random generators: its initial predictions are river's and MOA's.
        self.randomness = RandomStates(self.model)
        # x -> (class, {class: probability}), or None: classes only.
        self._predict_scored = predict_with_proba(self.model) \
            if probabilities and self.classification else None
        # A model that learns each label with what it knew at the instance's arrival (the
        # temporal wrappers) is told of arrivals and of the labels it learns.
        self.label_context = delay_aware(self.model)
        # id -> [t_arrival, x, initial prediction (class index / float / None), row,
        #        the initial prediction's class probabilities (None: none)]
        self.pending: dict = {}
        self.n_labels = 0
        # Labels the model has learned (including orphans with features): its version. A
        # re-prediction with an unchanged model would repeat the last one, so it is reused.
        self.version = 0
        self.rows = None if self.repredict.kind == "none" else PendingRows(
            self.repredict, self.classification, self.model,
            self._predict_scored if repredicted_probabilities else None, self._proba_columns,
            self._values)
        # Label times known ahead (bin_boundaries schedules from them): id -> t_label.
        self.expected_labels: dict = {}
        # (id, seq) of the labels of instances refused because their id was pending: they leave
        # with their instance (a labelled row's label event has its instance's seq + 1).
        self.refused_labels: set = set()
        # Ids of instances dead-lettered because the model failed on them: their labels leave.
        self.failed_ids: set = set()
        self.fails_at = fails_at or {}  # seq -> (kind, id's text, time)
        # Persistent and Majority baselines of each label (classification; class indices).
        self.baselines = (baselines or BaselineViews()).start(range(len(self.classes)))
        self.segments, self.hidden = tuple(segments), frozenset(hidden)
        self._days: dict | None = {} if maturity else None  # day number -> its key prefix
        self.fold, self.arrived = fold, 0  # instances accepted so far: m of the fold rule
        self.holdout = holdout
        # The holdout set being filled: the model's frozen copy, the label count it began at,
        # the instances still to take; and the held-out instances: id -> (point, prediction).
        self._holdout_model, self._holdout_point, self._holdout_left = None, 0, 0
        self.held: dict = {}
        # segment -> [labels so far, its baselines (classification) or its previous label]
        self._segment_state: dict = {}
        self._baseline_views, self._declared = baselines or BaselineViews(), len(self.classes)
        self.prev_label = math.nan  # the Persistent baseline of a regression stream
        self.last_key: tuple = (-math.inf, -1, -1)
        self._lut_labels, self._lut = None, np.empty(0, dtype=np.int64)  # see _values
        self.resources_every = resources_every
        self.cpu = [0.0, 0.0]  # seconds in learn_one, in predictions (incl. re-predictions)
        self.ram_hours = 0.0
        self._measured = (0, 0.0)  # labels and CPU seconds at the last size measurement
        # `_proba_vector`: the last probability dict's classes, whether all are indexed, and
        # their indices (None: 0, 1, 2, ... in order).
        self._proba_keys, self._proba_known, self._proba_order = (), False, None

    # -- class indices -------------------------------------------------------------------------
    def _index(self, value, extend: bool):
        i = self._class_index.get(value)
        if i is None and extend:
            i = self._class_index[value] = len(self.classes)
            self.classes.append(value)
        return i

    def _out_code(self, i):
        """Class index `i` (None or −1: no prediction) as the outcomes index classes: declared,
        else in order of first appearance as a label (`_label_code`), then classes only
        predicted so far, as they first come in an outcome."""
        if i is None or i < 0:
            return i
        out = self._out
        if i < len(out) and out[i] >= 0:
            return out[i]
        out.extend([-1] * (i + 1 - len(out)))
        code = out[i] = len(self.outcome_classes)
        self.outcome_classes.append(self.classes[i])
        self._out_shifted |= code != i
        return code

    def _label_code(self, y) -> int:
        """A label's class as the outcomes index it (the first appearance fixes it)."""
        return self._out_code(self._index(y, extend=True))

    @property
    def _out_same(self) -> bool:
        """Whether every class's outcome index is its index (no translation needed)."""
        return not self._out_shifted and len(self.outcome_classes) == len(self.classes)

    def _out_proba(self, vector):
        """A probability vector over class indices as one over the outcomes' indices."""
        if vector is None:
            return vector
        codes = [self._out_code(i) for i in range(len(vector))]
        out = [0.0] * len(self.outcome_classes)
        for code, p in zip(codes, vector):
            out[code] = p
        return tuple(out)

    def _out_repredictions(self, values: np.ndarray, proba):
        """Re-predictions' class indices (−1: none) and probability rows as the outcomes'."""
        for i in np.unique(values[values >= 0]).tolist():  # (in index order)
            self._out_code(i)
        lut = np.array([*self._out, -1], dtype=np.int64)
        values = lut[values]
        if proba is not None:
            codes = [self._out_code(i) for i in range(proba.shape[1])]
            moved = np.zeros((len(proba), len(self.outcome_classes)))
            moved[:, codes] = proba
            moved[np.isnan(proba).all(axis=1)] = np.nan  # (a row without probabilities)
            proba = moved
        return values, proba

    def _value(self, prediction):
        """A prediction as it is stored: class index or float (None: no prediction — also a
        regressor's NaN or infinite value, which no error could score)."""
        if prediction is None:
            return None
        if self.classification:
            return self._index(prediction, extend=True)
        value = float(prediction)
        return value if math.isfinite(value) else None

    def _values(self, codes: np.ndarray, labels: list) -> np.ndarray:
        """Batch predictions (codes into labels, −1 for none) as stored values."""
        if self.classification:
            # A batch predictor hands the same growing list of labels label after label.
            if labels is not self._lut_labels or len(labels) + 1 != len(self._lut):
                self._lut = np.array([self._index(label, extend=True) for label in labels]
                                     + [-1], dtype=np.int64)
                self._lut_labels = labels
            return self._lut[codes]
        values = np.array([float(label) for label in labels] + [math.nan])
        values[~np.isfinite(values)] = math.nan  # no prediction, as in `_value`
        return values[codes]

    def _proba_columns(self, proba: np.ndarray, labels: list) -> np.ndarray:
        """Batch class probabilities (rows × `labels`) as vectors over class indices (rows ×
        classes; NaN rows stay NaN)."""
        columns = [self._index(label, extend=True) for label in labels]
        if len(columns) == len(self.classes) and columns == list(range(len(columns))):
            return proba  # the labels are the classes, in index order: the usual case
        out = np.zeros((len(proba), len(self.classes)))
        out[:, columns] = proba
        # A row of no class (an untrained model's) or with NaN: no probabilities.
        out[np.isnan(proba).any(axis=1) if proba.shape[1] else slice(None)] = math.nan
        return out

    # -- the replay ----------------------------------------------------------------------------
    def expect_labels(self, events) -> None:
        """Note the times of labels not yet due: the bin_boundaries policy schedules an
        instance's re-predictions from its label time."""
        if self.repredict.kind == "bin_boundaries":
            for ev in events:
                if ev[KIND] == LABEL:
                    self.expected_labels[ev[ID]] = ev[TIME]

    def drain(self, events, T: float = math.inf, heartbeat=None) -> DrainResult:
        """Process `events` (all with t ≤ T, in any order) in `(t, rank, seq)` order. Timed
        re-predictions due at t are made before the events of time t. `heartbeat`, if given,
        is called with the drain's counts so far after every `HEARTBEAT` events (a long drain
        of a slow model still shows progress)."""
        out = DrainResult(PredictionLog(self.classification, self.log_predictions))
        out.counts[HASH_SEED_COUNT + hash_seed()] += 1  # (a worker's own: docs/runners.md)
        batch = sorted(events)
        if batch:
            if batch[-1][TIME] > T:
                raise ValueError(f"drain({T}) was given an event at t={batch[-1][TIME]}")
            if batch[0][:3] <= self.last_key:
                raise LateEventError(
                    f"stream {self.stream!r}: event at t={batch[0][TIME]} (seq {batch[0][SEQ]}) "
                    f"arrived after the replay had passed t={self.last_key[0]}")
            self.last_key = batch[-1][:3]
        self.expect_labels(batch)
        handlers = {INSTANCE: self._on_instance, UPDATE: self._on_update, LABEL: self._on_label,
                    PRETRAIN: self._on_pretrain}
        timers = self.rows.timers if self.rows is not None else []
        for i, ev in enumerate(batch, start=1):
            if timers and timers[0][0] <= ev[TIME]:
                self._repredict_timed(ev[TIME], out)
            if type(ev[Y]) is str and not self.classification:
                ev = _number_labelled(ev)
            handlers[ev[KIND]](ev, out)
            if heartbeat is not None and i % HEARTBEAT == 0:
                heartbeat(out.counts)
        if self.rows is not None:
            self._repredicting(self.rows.resolve)
        self._map_bins(out)
        if batch and self.resources_every and self.n_labels != self._measured[0]:
            self._measure(batch[-1][TIME], out)  # the state at the drain's end
        return out

    def _measure(self, t: float, out: DrainResult) -> None:
        """A resources point: CPU seconds so far, the model's size now, and RAM-hours (MOA:
        Σ size in GB × the hours of CPU time spent since the previous measurement)."""
        size = getattr(self.model, "_raw_memory_usage", math.nan)
        cpu = self.cpu[0] + self.cpu[1]
        self.ram_hours += size / 2 ** 30 * (cpu - self._measured[1]) / 3600
        self._measured = (self.n_labels, cpu)
        out.resources.append((self.n_labels, t, *self.cpu, size, self.ram_hours))

    def _map_bins(self, out: DrainResult) -> None:
        """Replace the re-predictions of the outcomes waiting in `out.unbinned` by their bins
        (one vectorised mapping for many labels, not numpy calls per label)."""
        if not out.unbinned:
            return
        self._repredicting(self.rows.resolve)  # (the values of deferred re-predictions)
        waiting = [out.outcomes[i] for i in out.unbinned]
        if self.classification and not self._out_same:  # (the vote's ties: label order)
            for k, o in enumerate(waiting):
                values, proba = self._out_repredictions(o.rep_values, o.rep_proba)
                waiting[k] = o._replace(rep_values=values, rep_proba=proba)
        binned = binned_many([o.t_arrival for o in waiting], [o.t_label for o in waiting],
                             [o.initial for o in waiting], [o.rep_times for o in waiting],
                             [o.rep_values for o in waiting], [o.final for o in waiting],
                             self.bins, self.classification)
        proba = binned_proba_many(
            [o.t_arrival for o in waiting], [o.t_label for o in waiting],
            [o.initial_proba for o in waiting], [o.rep_times for o in waiting],
            [o.rep_proba for o in waiting], [o.final_proba for o in waiting], self.bins) \
            if any(o.rep_proba is not None for o in waiting) else itertools.repeat(None)
        for i, o, row, row_proba in zip(out.unbinned, waiting, binned, proba):
            out.outcomes[i] = o._replace(rep_times=None, rep_values=None, bins=row,
                                         rep_proba=None, bins_proba=row_proba)
        out.unbinned, out.unbinned_size = [], 0

    def _reject(self, out: DrainResult, reason: str, field: str, ev, **more) -> None:
        out.counts["dead_letters"] += 1
        # With its place in the stream, by which the run names its file and row at the end
        # (`pipelines.write.located`).
        out.dead_letters.append({**dead_letter(self.stream, reason, field=field,
                                             record=event_record(ev)),
                                 "seq": ev[SEQ], **more})

    # -- the model's calls: a failure names model, stream and instance -------------------------
    def _where(self, key) -> str:
        return f"model {self.model_name}, stream {self.stream}, instance {key!r}"

    def _model_error(self, key, call: str, error: BaseException, x) -> ModelError:
        failed = f"{self._where(key)}: {call} raised {type(error).__name__}: {error}; "
        wrong_kind = self.spec.unlike_defaults() if isinstance(error, (TypeError, ValueError)) \
            else []
        if wrong_kind:  # (no instance's fault: no advice to skip instances)
            return ModelError(failed + "; ".join(wrong_kind) + ": fix the model's spec")
        return ModelError(failed + f"{self._hint(error, x)}; or skip such instances with "
                                   f"--on-model-error dead-letter")

    @staticmethod
    def _hint(error: BaseException, x) -> str:
        """What to do about a model's failure on x: its features' types a model cannot take."""
        text = sorted(k for k, v in (x or {}).items() if isinstance(v, str))
        nested = sorted(k for k, v in (x or {}).items()
                        if isinstance(v, (dict, list, tuple, np.ndarray)))
        dated = sorted(k for k, v in (x or {}).items() if isinstance(
            v, (datetime.date, datetime.time, datetime.timedelta, np.datetime64,
                np.timedelta64)))
        binary = sorted(k for k, v in (x or {}).items() if isinstance(v, (bytes, bytearray)))
        typed = isinstance(error, (TypeError, ValueError))
        if isinstance(error, LabelsError):  # its message says what to do
            return "fix the stream's classes or the model"
        if isinstance(error, SystemExit):
            return "a model that ends the program (sys.exit) would end the run: fix the model"
        if nested and typed:
            return ("features " + ", ".join(map(repr, nested)) + " hold JSON objects or "
                    "lists, where a model takes one number or text: leave them out with the "
                    "stream option {\"features\": [...]}, or flatten them in the file")
        if dated and typed:
            return ("features " + ", ".join(map(repr, dated)) + " hold dates, times or "
                    "durations, where a model takes one number or text: leave them out with the "
                    "stream option {\"features\": [...]}, or write them as numbers in the file")
        if binary and typed:
            return ("features " + ", ".join(map(repr, binary)) + " hold bytes, where a model "
                    "takes one number or text: leave them out with the stream option "
                    "{\"features\": [...]}, or write them as text in the file")
        if text and typed:
            return ("features " + ", ".join(map(repr, text)) + " hold text, which this model "
                    "cannot take: leave them out with the stream option {\"features\": [...]}, "
                    "or encode them in the model: 'one-hot-text | MODEL' (one-hot for text, "
                    "numbers as they are)")
        return "fix the model or its input"

    def _predict(self, key, x) -> tuple:
        """The model's prediction for x as it is stored (`_value`), and its class probabilities
        (a vector over class indices; None without them)."""
        proba = None
        started = time.thread_time() if self.resources_every else 0.0
        try:
            if self._predict_scored is None:
                prediction = self._predict_one(x)
            else:
                prediction, proba = self._predict_scored(x)
            if self.resources_every:
                self.cpu[1] += time.thread_time() - started
        except MemoryError:  # the worker's trouble, not the model's: the runner may retry
            raise
        except NotImplementedError as e:
            if self._predict_scored is None:
                raise self._model_error(key, "predict_one", e, x) from e
            self._predict_scored = None  # a pipeline whose last step gives no probabilities
            if self.rows is not None:
                self.rows.scored = None
            return self._predict(key, x)
        except (Exception, SystemExit) as e:  # (a model's sys.exit ends no run in silence)
            if self._predict_scored is not None and isinstance(e, Exception) and \
                    self._predicts_alone(x):
                raise ModelError(  # (an sklearn estimator without predict_proba, wrapped)
                    f"{self._where(key)}: predict_proba_one raised {type(e).__name__}: {e}; "
                    f"its predict_one works: run with --no-probabilities (no log-loss, Brier, "
                    f"AUC or calibration), or use a model that gives class probabilities") \
                    from e
            raise self._model_error(key, "predict_one", e, x) from e
        try:
            value = self._value(prediction)
        except (TypeError, ValueError):
            kind = "class" if self.classification else "number"
            raise ModelError(f"{self._where(key)}: predict_one returned {prediction!r}, not a "
                             f"single {kind}; use a model whose predict_one returns one value") \
                from None
        return value, self._proba_vector(key, proba) if proba else None

    def _predicts_alone(self, x) -> bool:
        """Whether `predict_one(x)` answers where predicting with probabilities failed."""
        try:
            self._predict_one(x)
        except Exception:
            return False
        return True

    def _proba_vector(self, key, proba: dict) -> tuple:
        """{class: probability} as a vector over class indices (0 for a class not named): a
        tuple of floats, which compares and pickles as a value."""
        keys = tuple(proba)
        if keys != self._proba_keys:  # a model names its classes in the same order each time
            index = self._class_index
            order = [index[c] for c in keys] if len(keys) == len(index) and all(
                c in index for c in keys) else None
            self._proba_keys = keys if order is not None else ()
            self._proba_order = None if order == list(range(len(keys))) else order
            self._proba_known = order is not None
        try:
            if not self._proba_known:  # a class seen first here: index it
                where = [(self._index(c, extend=True), p) for c, p in proba.items()]
            elif self._proba_order is not None:
                where = zip(self._proba_order, proba.values())
            else:  # classes in index order, the common case
                where = None
                vector = tuple(map(float, proba.values()))
            if where is not None:
                vector = [0.0] * len(self.classes)
                for i, p in where:
                    vector[i] = float(p)
                vector = tuple(vector)
        except (TypeError, ValueError):
            raise ModelError(f"{self._where(key)}: predict_proba_one returned {proba!r}, not "
                             f"a dict of class probabilities; use a model whose "
                             f"predict_proba_one returns one") from None
        low, high = -PROBABILITY_SLACK, 1 + PROBABILITY_SLACK
        outside = None if not vector or low <= min(vector) and max(vector) <= high else next(
            ((c, float(p)) for c, p in proba.items() if not low <= float(p) <= high
             and float(p) == float(p)), None)  # (a NaN is no probabilities: left out)
        if outside is not None:
            c, p = outside
            raise ModelError(f"{self._where(key)}: predict_proba_one gives class {c!r} the "
                             f"probability {p!r}, not one in [0, 1] (a score, margin or "
                             f"logit is none); use a model whose predict_proba_one returns "
                             f"probabilities, or run with --no-probabilities")
        return vector

    def _learn_one(self, key, x, y) -> None:
        started = time.thread_time() if self.resources_every else 0.0
        try:
            self.model.learn_one(x, y)
            if self.resources_every:
                self.cpu[0] += time.thread_time() - started
        except MemoryError:
            raise
        except (Exception, SystemExit) as e:
            raise self._model_error(key, "learn_one", e, x) from e

    def _model_failed(self, error: ModelError, ev, out: DrainResult,
                      instance: bool = True) -> None:
        """--on-model-error dead-letter: the instance (or an orphan label) leaves as a dead
        letter (else: raise)."""
        if self.on_model_error != "dead-letter":
            raise error
        out.counts["model_errors"] += instance
        self._reject(out, str(error).split("; ")[0], "model", ev,
                     **{FAILED_ON: [ev[KIND], str(ev[ID]), ev[TIME]]})  # (for `fails_at`)

    def _fails_as_logged(self, ev, out: DrainResult) -> None:
        """Raise the `ModelError` of an event the logged run set aside (`fails_at`); one whose
        place holds another event here (the stream read is not the run's) is counted as
        `SET_ASIDE_NOT_FOUND`."""
        logged = self.fails_at.get(ev[SEQ]) if self.fails_at else None
        if logged is not None and logged != (ev[KIND], str(ev[ID]), ev[TIME]):
            out.counts[SET_ASIDE_NOT_FOUND] += 1
        elif logged is not None:
            at = {INSTANCE: "", LABEL: " at its label"}.get(ev[KIND], f" at its {ev[KIND]}")
            raise ModelError(f"{self._where(ev[ID])}: the run that wrote the prediction log set "
                             f"this instance aside{at} (the model failed on it)")

    def _on_instance(self, ev, out: DrainResult) -> None:
        key, t, x = ev[ID], ev[TIME], ev[X]
        out.counts["instances"] += 1
        if self._holdout_left and key not in self.pending and key not in self.held:
            self._hold_out(ev, out)
            return
        segments = None
        if self.segments:
            segments = tuple(segment_name(c, column_value(x, c)) for c in self.segments)
            x = self._visible(x)
        if key in self.pending:
            out.counts["refused_instances"] += 1
            self._reject(out, f"instance id {key!r} is already pending", "id", ev)
            self.refused_labels.add((key, ev[SEQ] + 1))
            return
        if self.label_context is not None:
            self.label_context.instance_arrived(key)
        try:
            self._fails_as_logged(ev, out)
            initial, proba = self._predict(key, x)
        except ModelError as e:
            self._model_failed(e, ev, out)
            self.failed_ids.add(key)
            return
        if initial is None and self.version:  # (learned, and still answers none: not the delay)
            out.counts["unanswered_after_learning"] += 1
        row = None
        if self.rows is not None:
            t_label = self.expected_labels.pop(key, None)
            if t_label is None and self.repredict.kind == "bin_boundaries":
                out.counts["unscheduled"] += 1
            row = self.rows.add(x, t, self.version, initial, t_label, proba)
        self.arrived += 1
        learns = self.fold is None or self.fold[0].learns(self.fold[1], self.arrived)
        self.pending[key] = [t, x, initial, row, proba, segments, learns]
        if self._days is not None:
            out.counts[self._day(t) + "instances"] += 1
            for segment in segments or ():
                out.counts[f"{SEGMENT_PREFIX}{segment}:instances"] += 1
        out.predictions.one(key, INITIAL, t, initial, proba)

    def _on_update(self, ev, out: DrainResult) -> None:
        key, t = ev[ID], ev[TIME]
        state = self.pending.get(key)
        out.counts["updates"] += 1
        if state is None and key in self.held:  # a held-out instance keeps its prediction
            return
        if state is None:
            self._reject(out, f"update for id {key!r}, which is not pending", "id", ev)
            return
        state[1] = x = self._visible(ev[X])
        # Algorithm 1: new features are predicted at once, and later re-predictions use them.
        try:
            self._fails_as_logged(ev, out)
            if self.rows is None:
                return
            with self.randomness.kept():
                value, proba = self._predict(key, x)
        except ModelError as e:
            self._model_failed(e, ev, out)
            self._drop(key)
            if self._days is not None:
                out.counts[self._day(state[0]) + "left"] += 1
                self._count_settled(state[5], out)
            return
        self.rows.update(state[3], x, t, value, self.version, proba)

    def _on_label(self, ev, out: DrainResult) -> None:
        out.counts["labels"] += 1
        if ev[ID] in self.held and ev[ID] not in self.pending:
            self._score_held_out(ev, out)
            return
        if self._label_refused(ev, out):
            return
        state = self.pending.pop(ev[ID], None)
        if state is None:
            self._on_orphan(ev, out)
        else:
            self._on_labelled(ev, state, out)

    def _label_refused(self, ev, out: DrainResult) -> bool:
        """Whether the label leaves as a dead letter: its instance was refused or set aside,
        its class is not a declared one, or it is text that reads as no number ('n/a' among a
        stream's numbers) for a regressor to learn."""
        key, y = ev[ID], ev[Y]
        if (key, ev[SEQ]) in self.refused_labels:
            self.refused_labels.discard((key, ev[SEQ]))
            out.counts["refused_labels"] += 1
            self._reject(out, f"label of an instance refused because id {key!r} was pending",
                         "id", ev)
            return True
        if key in self.failed_ids and key not in self.pending:
            self.failed_ids.discard(key)
            out.counts["refused_labels"] += 1
            self._reject(out, f"label of instance {key!r}, {LEFT_WITH_ITS_INSTANCE}", "id", ev)
            return True
        if self.classification and self.declared_classes and y not in self._class_index:
            out.counts["refused_labels"] += 1
            self._reject(out, f"label {shown_briefly(y)} is not one of the declared classes "
                              f"{self.classes}", "label", ev)
            return True
        if not self.classification and isinstance(y, str):
            out.counts["refused_labels"] += 1
            self._reject(out, f"label {shown_briefly(y)} is not a number: a regression's "
                              f"labels are numbers", "label", ev)
            return True
        return False

    def _on_pretrain(self, ev, out: DrainResult) -> None:
        """One of the stream's first rows (`--pretrain`, MOA's `-p N -m`): learned with its
        label as it arrives, never predicted nor scored; its class takes its index as a
        label's does, and the baselines of κ_m and κ_per start after it, as MOA's evaluator,
        which never sees it, does."""
        key, t, y = ev[ID], ev[TIME], ev[Y]
        if y is None:
            out.counts["pretrain_set_aside"] += 1
            self._reject(out, "one of the first rows to pretrain on has no label: not learned",
                         "label", ev)
            return
        try:
            self._fails_as_logged(ev, out)
            if self.classification:
                self._label_code(y)
            self._learn(key, self._visible(ev[X]), y, t)
        except ModelError as e:
            out.counts["pretrain_set_aside"] += 1
            self._model_failed(e, ev, out, instance=False)
            return
        out.counts["pretrained"] += 1

    def _on_orphan(self, ev, out: DrainResult) -> None:
        """A label whose instance is not pending (never seen, or labelled already: a second
        label). With features it is still learned from, as the reference implementation does;
        without, nothing can use it."""
        key, t, y = ev[ID], ev[TIME], ev[Y]
        out.counts["orphan_labels"] += 1
        if ev[X] is None:
            self._reject(out, f"label for id {key!r}, which is not pending (no instance had "
                              f"it, or its instance was labelled already)", "id", ev)
            return
        try:
            self._fails_as_logged(ev, out)
            self._learn(key, self._visible(ev[X]), y, t)
        except ModelError as e:
            self._model_failed(e, ev, out, instance=False)
            return
        out.counts["learned_orphans"] += 1
        if self.classification:
            self.baselines.update(self._label_code(y), t)

    def _on_labelled(self, ev, state: list, out: DrainResult) -> None:
        """A label that met its pending instance: the final prediction, learning, and the
        instance's outcome."""
        key, t, y = ev[ID], ev[TIME], ev[Y]
        t_arrival, x, initial, row, initial_proba, segments, learns = state
        if ev[X] is not None:
            x = self._visible(ev[X])
        rep_times, rep_values, rep_proba = self.rows.take(row) if row is not None \
            else (None, None, None)
        try:
            self._fails_as_logged(ev, out)
            with self.randomness.kept():
                final, final_proba = self._predict(key, x) if self.final else (None, None)
            if self.label_context is not None:
                self.label_context.label_arrived(key)
            if learns:
                self._learn(key, x, y, t)
        except ModelError as e:
            out.counts["refused_labels"] += 1  # its instance leaves with it
            if self._days is not None:
                out.counts[self._day(t_arrival) + "left"] += 1
                self._count_settled(segments, out)
            self._model_failed(e, ev, out)
            return
        if self.final and final is None:
            out.counts["unscored_final"] += 1
        if rep_times is not None:
            out.counts["repredicted"] += len(rep_times) > 0
            out.predictions.series(key, REPREDICTION, rep_times, rep_values, rep_proba)
            if self.bins:  # mapped to bins in batches (_map_bins)
                out.unbinned.append(len(out.outcomes))
                out.unbinned_size += len(rep_times)
        if self.final:
            out.predictions.one(key, FINAL, t, final, final_proba)
        self.n_labels += 1
        out.counts["labelled"] += 1
        if self._days is not None:
            day = self._day(t_arrival)
            out.counts[day + "labelled"] += 1
            out.counts[f"{day}latency={math.ceil((t - t_arrival) / DAY_SECONDS)}"] += 1
            self._count_settled(segments, out)
        if initial is None:
            out.counts["unscored_initial"] += 1
        for value, proba in ((initial, initial_proba), (final, final_proba)):
            if value is not None and proba and abs(sum(proba) - 1) > PROBABILITY_SUM_SLACK:
                out.counts["probabilities_not_summing_to_1"] += 1
        if self.classification:
            y_code = self._label_code(y)  # (first: a new label's class comes before others)
            if not self._out_same:
                initial, final = self._out_code(initial), self._out_code(final)
                initial_proba = self._out_proba(initial_proba)
                final_proba = self._out_proba(final_proba)
            prev, majority = self.baselines.update(y_code, t)
            out.outcomes.append(Outcome(self.n_labels, key, t_arrival, t, y_code, prev,
                                        majority, initial, final, rep_times, rep_values, None,
                                        initial_proba, final_proba,
                                        segments and self._places(segments, y_code, t),
                                        rep_proba))
        else:
            prev, self.prev_label = self.prev_label, y
            out.outcomes.append(Outcome(self.n_labels, key, t_arrival, t, y, prev, None,
                                        initial, final, rep_times, rep_values,
                                        segments=segments and self._places(segments, y, t)))
        if out.unbinned_size >= BIN_BATCH:
            self._map_bins(out)
        if self.resources_every and self.n_labels % self.resources_every == 0:
            self._measure(t, out)
        if self.holdout is not None and self.n_labels % self.holdout.every == 0:
            self._holdout_model = copy.deepcopy(self.model)  # frozen: it never learns
            self._holdout_point, self._holdout_left = self.n_labels, self.holdout.size

    def _hold_out(self, ev, out: DrainResult) -> None:
        """Take an arriving instance into the holdout set: the frozen model predicts it; it is
        never learned from and has no place in the prequential stream."""
        key, x = ev[ID], self._visible(ev[X])
        try:
            self._fails_as_logged(ev, out)
            prediction = self._value(self._holdout_model.predict_one(x))
        except MemoryError:
            raise
        except Exception as e:
            self._model_failed(self._model_error(key, "predict_one (holdout)", e, x), ev, out)
            self.failed_ids.add(key)  # its label leaves with it
            return
        self.held[key] = (self._holdout_point, prediction)
        self._holdout_left -= 1
        out.counts["held_out"] += 1

    def _score_held_out(self, ev, out: DrainResult) -> None:
        """A held-out instance's label: it scores the holdout point, and is not learned."""
        point, prediction = self.held.pop(ev[ID])
        if self.classification:
            y, prediction = self._label_code(ev[Y]), self._out_code(prediction)
        else:
            y = ev[Y]
        out.holdout.append((point, ev[TIME], y, prediction))
        out.counts["held_out_labels"] += 1

    @staticmethod
    def _count_settled(segments: tuple | None, out: DrainResult) -> None:
        """An instance of these segments no longer waits (`SEGMENT_PREFIX`)."""
        for segment in segments or ():
            out.counts[f"{SEGMENT_PREFIX}{segment}:settled"] += 1

    def _day(self, t: float) -> str:
        """The count keys' prefix of the UTC day holding time `t` (seconds since the epoch)."""
        number = int(t // DAY_SECONDS)
        prefix = self._days.get(number)
        if prefix is None:
            date = datetime.date(1970, 1, 1) + datetime.timedelta(days=number)
            prefix = self._days[number] = f"{DAY_PREFIX}{date.isoformat()}:"
        return prefix

    def _visible(self, x):
        """The features the model sees: without the columns read only to segment by."""
        if not self.hidden or x is None:
            return x
        return {k: v for k, v in x.items() if k not in self.hidden}

    def _places(self, segments: tuple, y, t: float) -> tuple:
        """This label's number and baselines in each of its segments (`SegmentPlace`)."""
        places = []
        for segment in segments:
            state = self._segment_state.get(segment)
            if state is None:
                state = self._segment_state[segment] = [0, self._baseline_views.start(
                    range(self._declared)) if self.classification else math.nan]
            state[0] += 1
            if self.classification:
                prev, majority = state[1].update(y, t)
            else:
                prev, majority, state[1] = state[1], None, y
            places.append(SegmentPlace(segment, state[0], prev, majority))
        return tuple(places)

    def _drop(self, key) -> None:
        """A pending instance leaves without an outcome (the model failed on it)."""
        state = self.pending.pop(key)
        if state[3] is not None:
            self.rows.take(state[3])
        self.failed_ids.add(key)

    def _learn(self, key, x, y, t: float) -> None:
        """Re-predict what is due before this label (every_k_labels), then learn it."""
        rows = self.rows
        if rows is not None:
            rows.round_at(self.version + 1, t)
        deferred = rows is not None and rows.deferred \
            and self._repredicting(rows.defer_round, self.version + 1, self.model)
        if rows is not None and rows.buckets is not None and not deferred:
            due = rows.due_at_label(self.version + 1)
            if len(due):
                self._repredict(due)
        try:
            self._learn_one(key, x, y)
        except ModelError:
            if deferred:  # the tree may have changed part-way: no snapshot holds it
                self._repredicting(rows.learned, self.model, None)
            raise
        self.version += 1
        if deferred:
            self._repredicting(rows.learned, self.model, x)

    def _repredict_timed(self, t: float, out: DrainResult) -> None:
        """Re-predictions scheduled in event time at or before t (before t's events)."""
        for due in self.rows.due_until(t):
            self._repredict(due)

    def _repredict(self, due) -> None:
        # (The trees' deferred rounds, the other steps, predict from leaf snapshots or with
        # river's trees' own predict_one, which draws nothing.)
        with self.randomness.kept():
            self._repredicting(self.rows.repredict, due, self.model, self.version)

    def _repredicting(self, step, *args):
        """A step of re-evaluation (its CPU time counted as prediction's); a failure names the
        model and stream."""
        started = time.thread_time() if self.resources_every else 0.0
        try:
            result = step(*args)
            if self.resources_every:
                self.cpu[1] += time.thread_time() - started
            return result
        except MemoryError:
            raise
        except Exception as e:  # a batch: no single instance to name, a pending one's features
            x = next(iter(self.pending.values()))[1] if self.pending else None
            raise ModelError(
                f"model {self.model_name}, stream {self.stream}: re-predicting pending "
                f"instances raised {type(e).__name__}: {e}; {self._hint(e, x)}") from e

    # -- state ---------------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The whole engine (model, pending, counters) as bytes: an engine decoded from them
        continues exactly as this one (the bytes themselves may differ between equal states)."""
        return pickle.dumps(self, protocol=5)

    @staticmethod
    def from_bytes(data: bytes) -> ReplayEngine:
        # Only ever our own state bytes, written by to_bytes on another worker.
        return pickle.loads(data)
