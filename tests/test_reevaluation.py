"""Continuous re-evaluation: re-predictions while labels are pending, and their bins."""

import json
import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.naive_reevaluation import naive_replay, reference_bins
from metrics import binning
from metrics.binning import bin_of, prioritised
from pipelines.cli import main
from pipelines.report import write_report
from tests.helpers import FAST_LINEAR_REGRESSION, FAST_NB_LEAVES, needs, repredictions
from transforms.models.specs import ModelSpec
from transforms.records import (INSTANCE, LABEL, PRETRAIN, RANK_INSTANCE, RANK_LABEL, UPDATE,
                                event)
from transforms.replay.engine import ReplayEngine
from transforms.replay.repredict import RepredictPolicy, bin_start


def worked_example(k=1, policy=None):
    """DESIGN's worked example: No-Change, a warm-up labelled `a`, A arrives at 0, other
    labels b@10, a@20, a@30, b@40, b@45, a@80, A's own label (b) at 100."""
    events = [event(-10, RANK_INSTANCE, 0, INSTANCE, "W", {}),
              event(-5, RANK_LABEL, 1, LABEL, "W", None, "a"),
              event(0, RANK_INSTANCE, 2, INSTANCE, "A", {})]
    for i in range(6):
        events.append(event(1 + i, RANK_INSTANCE, 3 + i, INSTANCE, f"I{i}", {}))
    for i, (t, y) in enumerate([(10, "b"), (20, "a"), (30, "a"), (40, "b"), (45, "b"),
                                (80, "a")]):
        events.append(event(t, RANK_LABEL, 10 + i, LABEL, f"I{i}", None, y))
    events.append(event(100, RANK_LABEL, 20, LABEL, "A", None, "b"))
    engine = ReplayEngine(ModelSpec.parse("no-change"), "s", ["a", "b"],
                          repredict=policy or RepredictPolicy("every_k_labels", k))
    return [o for o in engine.drain(events).outcomes if o.id == "A"][0]


def binned_predictions(t0, t_label, initial, pairs, final, bins, classification=True):
    """The vectorised mapping, called with (t, prediction) pairs and None for "no prediction"."""
    missing = -1 if classification else math.nan
    times = [t for t, _ in pairs]
    values = [missing if y is None else y for _, y in pairs]
    out = binning.binned_predictions(t0, t_label, initial, times, values, final, bins,
                                     classification).tolist()
    return [None if (v == -1 if classification else math.isnan(v)) else v for v in out]


@st.composite
def latency_periods(draw, classification):
    t0 = draw(st.floats(-1e3, 1e3, allow_nan=False))
    delta = draw(st.sampled_from([0.0, 1.0, 7.0, 100.0, 0.3, 12345.678]))
    bins = draw(st.integers(1, 12))
    value = st.integers(0, 3) if classification else st.floats(-50, 50, allow_nan=False)
    maybe = st.one_of(st.none(), value)
    fracs = sorted(draw(st.lists(st.floats(0, 1), max_size=25)))
    # Times on a coarse grid, so several re-predictions often share a time or a bin edge.
    grid = draw(st.sampled_from([None, 4, 10]))
    if grid:
        fracs = [round(f * grid) / grid for f in fracs]
    pairs = [(t0 + f * delta, draw(maybe)) for f in fracs]
    return t0, t0 + delta, draw(maybe), pairs, draw(maybe), bins


@settings(max_examples=400, deadline=None)
@given(latency_periods(classification=True))
def test_vectorised_bins_equal_the_item_by_item_rule(case):
    assert binned_predictions(*case) == reference_bins(*case)


@settings(max_examples=400, deadline=None)
@given(latency_periods(classification=False))
def test_vectorised_regression_bins_equal_the_item_by_item_rule(case):
    got, want = binned_predictions(*case, False), reference_bins(*case, False)
    assert [None if v is None else float(v) for v in got] == \
        [None if v is None else float(v) for v in want]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12).flatmap(lambda bins: st.lists(
    latency_periods(classification=True).map(lambda case: case[:5] + (bins,)),
    min_size=1, max_size=6)))
def test_bins_of_many_instances_at_once_equal_one_at_a_time(cases):
    """The engine maps a batch of labelled instances at once: the same rows, bit for bit."""
    bins = cases[0][5]
    columns = list(zip(*[case[:5] for case in cases]))
    times = [[t for t, _ in pairs] if pairs else None for pairs in columns[3]]
    values = [[-1 if y is None else y for _, y in pairs] if pairs else None
              for pairs in columns[3]]
    many = binning.binned_many(columns[0], columns[1], columns[2], times, values, columns[4],
                               bins)
    for row, case in zip(many.tolist(), cases):
        assert [None if v == -1 else v for v in row] == binned_predictions(*case)


def test_worked_example_repredictions_and_bins():
    a = worked_example()
    # The label at 10 is the first since A arrived: no re-prediction there.
    assert repredictions(a) == [(20, 1), (30, 0), (40, 0), (45, 1), (80, 1)]
    assert (a.initial, a.final, a.y) == (0, 0, 1)
    bins = binned_predictions(a.t_arrival, a.t_label, a.initial, repredictions(a), a.final, 4)
    assert bins == [0, 1, 0, 1, 1, 0]
    assert [int(p == a.y) for p in bins] == [0, 1, 0, 1, 1, 0]


def test_every_k_labels_with_k_2():
    # Due at the 3rd and 5th labels after arrival: 20 -> (K+1)th = 3rd label is at 30.
    assert [t for t, _ in repredictions(worked_example(k=2))] == [30, 45]


def test_label_before_any_reprediction_copies_the_initial_prediction():
    assert binned_predictions(0, 10, 1, (), 0, bins=5) == [1, 1, 1, 1, 1, 1, 0]


def test_several_repredictions_in_one_bin_vote_ties_to_lowest_index():
    # Bin 1 of [0, 10) with B=1: [initial 2 over 0-4, 1 over 4-7, 0 over 7-10]: 4 vs 3 vs 3.
    assert binned_predictions(0, 10, 2, ((4, 1), (7, 0)), 2, bins=1) == [2, 2, 2]
    # 2 over 0-3, 1 over 3-6, 0 over 6-10 -> 0 has 4: wins.
    assert binned_predictions(0, 10, 2, ((3, 1), (6, 0)), 2, bins=1) == [2, 0, 2]
    # 1 over 0-3 and 5-7, 0 over 3-5 and 7-10: 5 each, a tie, to the lowest index 0.
    assert binned_predictions(0, 10, 1, ((3, 0), (5, 1), (7, 0)), 1, bins=1) == [1, 0, 1]


def test_regression_time_weighted_mean():
    # [1.0 over 0-2, 3.0 over 2-5, 5.0 over 5-10] -> (2 + 9 + 25) / 10
    assert binned_predictions(0, 10, 1.0, ((2, 3.0), (5, 5.0)), 6.0, bins=1,
                              classification=False) == [1.0, 3.6, 6.0]


def test_delay_zero_latency_period():
    # The label arrives at the instance's own time: every bin carries the initial prediction.
    assert binned_predictions(5, 5, 1, (), 1, bins=3) == [1, 1, 1, 1, 1]


def test_prioritised_by_hand():
    values = [0.5, 1.0, 0.0]  # Λ(0), Λ(1), Λ(2) with B=2
    assert prioritised(values, 1) == 0.5
    w = [1, 0.5 ** 0.5, 0.5]  # α=2: (1/2)^(b/2)
    assert prioritised(values, 2) == (0.5 * w[0] + 1.0 * w[1]) / sum(w)


def test_missing_predictions_take_no_part_in_the_vote():
    # An untrained model's None over 0-6, then 1 over 6-8 and 0 over 8-10: a 2-2 tie -> 0.
    assert binned_predictions(0, 10, None, ((6, 1), (8, 0)), 1, bins=1) == [None, 0, 1]
    assert binned_predictions(0, 10, None, ((6, None), (8, None)), 1, bins=1) == [None, None, 1]


def random_stream(n=600, delay_lo=5, delay_hi=60, seed=3, updates=True, orphans=True,
                  data=None):
    """Agrawal rows (or `data`'s) with random label delays (in seconds), some feature updates
    while pending and some orphan labels with features: every path of the engine at once."""
    import random

    from river.datasets import synth

    from transforms.records import RANK_LABEL_AFTER_INSTANCE

    rng = random.Random(seed)
    events, seq = [], 0
    for i, (x, y) in enumerate((data or synth.Agrawal(seed=seed)).take(n)):
        t = float(i)
        events.append(event(t, RANK_INSTANCE, seq, INSTANCE, i, x))
        t_label = t + rng.uniform(delay_lo, delay_hi)
        if updates and i % 7 == 0:
            x2 = dict(x, salary=x["salary"] * 1.5)
            events.append(event(rng.uniform(t + 0.1, t_label), RANK_INSTANCE, seq + 1, UPDATE,
                                i, x2))
        events.append(event(t_label, RANK_LABEL, seq + 2, LABEL, i, None, y))
        if orphans and i % 50 == 0:
            events.append(event(t + 0.5, RANK_LABEL_AFTER_INSTANCE, seq + 3, LABEL,
                                f"orphan{i}", x, 1 - y))
        seq += 4
    return events


@pytest.mark.parametrize("model", ["river.naive_bayes.GaussianNB",
                                   'river.tree.HoeffdingTreeClassifier{"grace_period": 50}',
                                   "knn", "standard-scaler | gaussian-nb",
                                   "standard-scaler | logistic-regression",
                                   'adaptive-random-forest{"n_models": 3, "grace_period": 30}'])
@pytest.mark.parametrize("k", [1, 3])
def test_engine_equals_the_straightforward_algorithm_1(model, k):
    """Every initial, re-prediction (time and value) and final equals a per-label scan of the
    buffer with one predict_one per pending instance."""
    events = random_stream()
    spec = ModelSpec.parse(model)
    engine = ReplayEngine(spec, "s", [0, 1], repredict=RepredictPolicy("every_k_labels", k))
    ours = engine.drain(events).outcomes
    naive = naive_replay(events, spec.build([0, 1]), k)
    assert len(ours) == len(naive) > 500
    def label(index):
        return None if index is None or index == -1 else engine.classes[index]

    n_reps = 0
    for o, (key, t0, t_label, y, initial, reps, final) in zip(ours, naive):
        assert (o.id, o.t_arrival, o.t_label, label(o.y)) == (key, t0, t_label, y)
        assert (label(o.initial), label(o.final)) == (initial, final)
        assert [(t, label(v)) for t, v in repredictions(o)] == reps
        n_reps += len(reps)
    assert n_reps > 5000 // k


def rounds_of_a_loop(events, model, k: int) -> dict:
    """{id: [(t, re-prediction), ...]} of every instance the model learned the label of, by a
    loop over the events: the round before label number L (L − 1 labels learned) is made at
    the first label the model tries to learn as L, re-predicting each pending instance that
    arrived when v labels were learned with L − 1 − v a positive multiple of k; a label it
    fails to learn leaves with its instance, and the next label takes its number (no round);
    an update is re-predicted at once."""
    pending, reps, learned, rounds = {}, {}, 0, 0
    for t, _, _, kind, key, x, y in sorted(events):
        if kind == INSTANCE:
            pending[key], reps[key] = (learned, x), []
            continue
        if kind == UPDATE:  # predicted at once with its new features, kept for later rounds
            pending[key] = (pending[key][0], x)
            reps[key].append((t, model.predict_one(x)))
            continue
        _, own = pending.pop(key)
        if learned + 1 > rounds:
            rounds = learned + 1
            for other, (arrived, features) in pending.items():
                if rounds - 1 - arrived >= k and (rounds - 1 - arrived) % k == 0:
                    reps[other].append((t, model.predict_one(features)))
        try:
            model.learn_one(x if x is not None else own, y)
        except TypeError:
            del reps[key]
            continue
        learned += 1
    return reps


@pytest.mark.parametrize("model", ["river.naive_bayes.GaussianNB",
                                   'river.tree.HoeffdingTreeClassifier{"grace_period": 50}'])
@pytest.mark.parametrize("k", [1, 3])
def test_a_round_before_a_label_the_model_fails_to_learn_is_at_that_labels_time(model, k):
    """A round of re-predictions is made before the model learns a label; when learning it
    fails (--on-model-error dead-letter), the round was still made then, at that label's
    time, not at the next label's (which takes its number without a round): every
    re-prediction's time and value equal a loop over the events."""
    events = []
    for e in random_stream(orphans=False):
        if e[3] == LABEL and e[4] % 23 == 11:  # its features at label time: text, unlearnable
            e = event(e[0], e[1], e[2], LABEL, e[4], {"salary": "n/a"}, e[6])
        events.append(e)
    engine = ReplayEngine(ModelSpec.parse(model), "s", [0, 1], final=False,
                          on_model_error="dead-letter",
                          repredict=RepredictPolicy("every_k_labels", k))
    drained = engine.drain(events)
    loop = rounds_of_a_loop(events, ModelSpec.parse(model).build([0, 1]), k)
    failed_at = {e[0] for e in events if e[3] == LABEL and e[5] is not None}
    assert drained.counts["refused_labels"] == len(failed_at) > 20
    assert len(drained.outcomes) == len(loop) > 500
    at_failures = 0
    for o in drained.outcomes:
        assert [(t, None if v == -1 else engine.classes[v])
                for t, v in repredictions(o)] == loop[o.id]
        at_failures += sum(t in failed_at for t, _ in loop[o.id])
    assert at_failures > 20 // k



def count_rows_sent_as_arrays(monkeypatch) -> tuple[list, list]:
    """(rows sent as arrays, rows due) of each round of re-predictions, as they come."""
    from transforms.replay import repredict

    as_arrays, in_all = [], []
    own = repredict.PendingRows._predict_values

    def counted(rows, due, model):
        as_arrays.append(int(rows.dense[due].sum()))
        in_all.append(len(due))
        return own(rows, due, model)

    monkeypatch.setattr(repredict.PendingRows, "_predict_values", counted)
    return as_arrays, in_all


@pytest.mark.parametrize("model", ["gaussian-nb", 'temporal-correction{"model": "gaussian-nb"}',
                                   "logistic-regression",
                                   'hoeffding-tree{"grace_period": 50, "delta": 0.01}',
                                   'temporally-augmented{"model": "hoeffding-tree"}'])
def test_rows_that_lack_features_are_re_predicted_by_the_batch_as_predict_one(model,
                                                                              monkeypatch):
    """A table's missing cells kept as absent features: rows that lack some (the first row
    too) are re-predicted as arrays, with the others, and each re-prediction equals the one
    the model's own predict_one gives in the same replay. A tree's windows of snapshots
    hold throughout: a row without a split's feature takes the most traversed path, and the
    window closes when that path changes."""
    import random

    from river.datasets import synth

    from transforms.models import batch, tree_batch
    from transforms.replay import repredict

    class Lacking:  # Agrawal rows, features absent one time in ten (salary, which the
        def take(self, n):  # stream's updates change, never), the first's commission
            rng = random.Random(2)
            for i, (x, y) in enumerate(synth.Agrawal(seed=3).take(n)):
                yield {k: v for k, v in x.items() if k == "salary" or not (
                    rng.random() < 0.1 or i == 0 and k == "commission")}, y

    def replay():
        engine = ReplayEngine(ModelSpec.parse(model), "s", [0, 1],
                              repredict=RepredictPolicy("every_k_labels", 3))
        return [(o.id, o.initial, o.final, repredictions(o))
                for o in engine.drain(random_stream(n=800, data=Lacking())).outcomes]

    as_arrays, in_all = count_rows_sent_as_arrays(monkeypatch)
    stopped, guessed = [], []
    stop = repredict.PendingRows.stop_deferring
    monkeypatch.setattr(repredict.PendingRows, "stop_deferring",
                        lambda rows: stopped.append(rows.deferred) or stop(rows))
    route = tree_batch.HoeffdingTreeBatch.window_route

    def routed(*args):
        out = route(*args)
        guessed.append(0 if out is None else int(out[1].sum()))
        return out

    monkeypatch.setattr(tree_batch.HoeffdingTreeBatch, "window_route", routed)
    ours = replay()
    windowed = model.startswith("hoeffding-tree") and FAST_NB_LEAVES
    if windowed:  # re-predicted in windows, from leaf snapshots, to the end
        assert not any(stopped) and len(guessed) > 50 and sum(guessed) > 20
    else:
        assert sum(in_all) > 3000 and sum(as_arrays) == sum(in_all)
    monkeypatch.undo()
    monkeypatch.setattr(repredict, "batch_predictor", lambda m: batch.BatchPredictor())
    theirs = replay()
    assert ours == theirs and len(ours) > 500


def same_as_the_scan(ours, naive) -> int:
    """Assert each outcome's initial, final and re-predictions (times and values, as the model
    gave them) equal the per-label scan's; returns how many re-predictions."""
    n_reps = 0
    for o, (key, _, _, _, initial, reps, final) in zip(ours, naive):
        assert (o.id, o.initial, o.final) == (key, initial, final)
        assert [(t, v) for t, v in repredictions(o)] == reps
        n_reps += len(reps)
    return n_reps


def drifting_events(n, position, function, **options):
    """Agrawal function 0, then `function` from `position` on, as `random_stream` events."""
    from river.datasets import synth

    drifting = synth.ConceptDriftStream(synth.Agrawal(classification_function=0, seed=1),
                                        synth.Agrawal(classification_function=function, seed=2),
                                        position=position, width=50, seed=3)
    return random_stream(n=n, delay_lo=20, delay_hi=120, data=drifting, **options)


@pytest.mark.parametrize("model, stream", [
    # ARF keeps each tree's answer for a pending row until the row's leaf learns or splits;
    # across the drift its trees are replaced while rows are pending.
    ('adaptive-random-forest{"n_models": 4, "grace_period": 40}', (1500, 600, 4, {})),
    # Leveraging bagging resets its worst tree at a drift.
    ('river.ensemble.LeveragingBaggingClassifier{"model": {"hoeffding-tree": {"grace_period": '
     '40}}, "n_models": 3, "seed": 1}', (1500, 600, 4, {})),
    # SRP's trees each see a subspace of the features, and are reset on a new one at a drift.
    ('river.ensemble.SRPClassifier{"model": {"hoeffding-tree": {"grace_period": 40}}, '
     '"n_models": 3, "seed": 1}', (1500, 600, 4, {})),
    # A multiway branch on a category sends a value it has not seen down its most traversed
    # path: such rows ask predict_one (the leaves' category splitters keep re-predictions out
    # of windows of snapshots: they are made at once).
    ('river.tree.HoeffdingTreeClassifier{"grace_period": 40, "nominal_attributes": ["elevel", '
     '"car", "zipcode"]}', (1500, 600, 4, {})),
    # HAT grows an alternate tree and switches to it; rows that pass it ask predict_one.
    ('hoeffding-adaptive-tree{"grace_period": 50, "seed": 1}',
     (2500, 1000, 4, {"updates": False, "orphans": False}))])
def test_repredictions_follow_the_trees_through_a_drift(model, stream):
    """Every re-prediction of a model whose trees change shape under a drift equals the
    per-label scan's predict_one."""
    n, position, function, options = stream
    events = drifting_events(n, position, function, **options)
    spec = ModelSpec.parse(model)
    engine = ReplayEngine(spec, "s", [0, 1], repredict=RepredictPolicy("every_k_labels", 2))
    ours = engine.drain(events).outcomes
    naive = naive_replay(events, spec.build([0, 1]), 2)
    assert len(ours) == len(naive) >= 1500
    m = engine.model
    if hasattr(m, "n_drifts_detected"):
        assert m.n_drifts_detected() > 0
    elif hasattr(m, "n_detected_changes"):
        assert m.n_detected_changes > 0
    elif hasattr(m, "n_switch_alternate_trees"):
        assert m.n_switch_alternate_trees > 0
    else:
        assert not engine.rows.deferred
    assert same_as_the_scan(ours, naive) > 20_000


@needs(FAST_NB_LEAVES)
def test_a_row_no_leaf_snapshot_stands_for_ends_the_window_of_rounds(monkeypatch):
    """When the tree batch cannot name the leaf a pending row reaches (`window_route` None: it
    would go down a most traversed path), the rounds held so far are made and re-predictions
    are made at once from then on: still the per-label scan's."""
    from transforms.models.tree_batch import HoeffdingTreeBatch

    calls = []
    route = HoeffdingTreeBatch.window_route

    def refusing(self, *args):
        calls.append(len(calls))
        return None if len(calls) == 6 else route(self, *args)

    monkeypatch.setattr(HoeffdingTreeBatch, "window_route", refusing)
    events = random_stream(n=800, updates=False, orphans=False)
    spec = ModelSpec.parse('river.tree.HoeffdingTreeClassifier{"grace_period": 50}')
    engine = ReplayEngine(spec, "s", [0, 1], repredict=RepredictPolicy("every_k_labels", 3))
    ours = engine.drain(events).outcomes
    assert len(calls) == 6 and not engine.rows.deferred
    naive = naive_replay(events, spec.build([0, 1]), 3)
    assert [[(t, v) for t, v in repredictions(o)] for o in ours] == \
        [reps for *_, reps, _ in naive]


@pytest.mark.parametrize("model", ['knn-regressor{"window_size": 100}',
                                   'knn-regressor{"window_size": 100, "aggregation_method": '
                                   '"weighted_mean"}',
                                   "standard-scaler | linear-regression",
                                   'hoeffding-tree-regressor{"grace_period": 40}',
                                   'river.tree.HoeffdingAdaptiveTreeRegressor{"grace_period": '
                                   '40, "seed": 1}',
                                   'river.forest.ARFRegressor{"n_models": 3, "grace_period": 40}',
                                   'river.ensemble.SRPRegressor{"model": '
                                   '{"hoeffding-tree-regressor": {"grace_period": 40}}, '
                                   '"n_models": 3}'])
def test_regressor_repredictions_equal_the_straightforward_algorithm_1(model):
    """A regressor's re-predictions are values: each equals predict_one's, bit for bit."""
    events = random_stream(n=400)
    spec = ModelSpec.parse(model)
    engine = ReplayEngine(spec, "s", None, repredict=RepredictPolicy("every_k_labels", 2))
    assert engine.task == "regression"
    ours = engine.drain(events).outcomes
    naive = naive_replay(events, spec.build(None), 2)
    assert len(ours) == len(naive) > 350
    assert same_as_the_scan(ours, naive) > 2000


@needs(FAST_LINEAR_REGRESSION)
@pytest.mark.parametrize("model", ["linear-regression", "standard-scaler | linear-regression",
                                   'hoeffding-tree-regressor{"grace_period": 40}',
                                   'river.rules.AMRules{"n_min": 30, "delta": 0.05, "tau": 0.1}'])
def test_regressor_rows_that_lack_features_are_re_predicted_as_arrays_bit_for_bit(
        model, monkeypatch):
    """A table's missing cells kept as absent features, the first row lacking x5: river's
    linear models sum w·x over a row's own features in its key order, which the batch's names
    (x5 last) do not follow. Each re-prediction equals the per-label predict_one scan's, bit
    for bit, and the rows are sent as arrays."""
    import random

    from river.datasets import synth

    class Lacking:  # Friedman rows named as a table's columns, a cell absent one time in ten
        def take(self, n):
            rng = random.Random(3)
            for i, (x, y) in enumerate(synth.Friedman(seed=1).take(n)):
                yield {f"x{k}": v for k, v in x.items()
                       if not (rng.random() < 0.1 or i == 0 and k == 5)}, y

    as_arrays, in_all = count_rows_sent_as_arrays(monkeypatch)
    events = random_stream(n=1000, data=Lacking(), updates=False)
    spec = ModelSpec.parse(model)
    engine = ReplayEngine(spec, "s", None, repredict=RepredictPolicy("every_k_labels", 2))
    ours = engine.drain(events).outcomes
    assert list(engine.rows.predictor.names) != sorted(engine.rows.predictor.names)
    naive = naive_replay(events, spec.build(None), 2)
    assert len(ours) == len(naive) > 900
    assert same_as_the_scan(ours, naive) > 5000
    assert sum(as_arrays) >= 0.99 * sum(in_all)


def test_amrules_repredictions_equal_the_straightforward_algorithm_1():
    """AMRules on Friedman's targets (rules grow while instances wait; orphan labels among the
    events): each re-prediction equals predict_one's, bit for bit."""
    from river.datasets import synth

    events = random_stream(n=1500, data=synth.Friedman(seed=1), updates=False)
    spec = ModelSpec.parse('river.rules.AMRules{"n_min": 30, "delta": 0.05, "tau": 0.1}')
    engine = ReplayEngine(spec, "s", None, repredict=RepredictPolicy("every_k_labels", 2))
    assert type(engine.rows.predictor).__name__ == "AMRulesBatch"
    ours = engine.drain(events).outcomes
    naive = naive_replay(events, spec.build(None), 2)
    assert len(ours) == len(naive) > 1400
    assert same_as_the_scan(ours, naive) > 10000
    assert len(engine.model._rules) > 3


def _equals_algorithm_1(engine, outcomes, events, spec, k, classes=(0, 1)) -> int:
    """How many outcomes' re-predictions differ from the per-label predict_one scan's (the
    model built with `classes`, None: undeclared)."""
    naive = naive_replay(events, spec.build(classes and list(classes)), k)
    assert len(outcomes) == len(naive) > 500

    def label(index):
        return None if index is None or index == -1 else engine.classes[index]

    return sum([(t, label(v)) for t, v in repredictions(o)] != reps
               for o, (_, _, _, _, _, reps, _) in zip(outcomes, naive))


TREES = [pytest.param('{"grace_period": 50}', marks=needs(FAST_NB_LEAVES)),
         pytest.param('{"grace_period": 30, "leaf_prediction": "nb"}',
                      marks=needs(FAST_NB_LEAVES)),
         '{"grace_period": 40, "leaf_prediction": "mc"}']


@pytest.mark.parametrize("options", TREES)
@pytest.mark.parametrize("k", [1, 4])
def test_deferred_tree_repredictions_equal_algorithm_1_with_every_decision_exact(
        options, k, monkeypatch):
    """A tree's re-predictions are made window by window from leaf snapshots; with the tie
    margin so wide that every naive-Bayes decision is left to river's own arithmetic on the
    snapshot, they still equal a per-label scan with predict_one."""
    import transforms.models.batch as batch
    from transforms.models import tree_batch

    exact_calls = []
    answer = tree_batch.river_leaf_answer
    monkeypatch.setattr(tree_batch, "river_leaf_answer",
                        lambda x, record: exact_calls.append(1) or answer(x, record))
    monkeypatch.setattr(tree_batch, "TIE_MARGIN", 1e200)
    monkeypatch.setattr(batch, "TIE_MARGIN", 1e200)
    events = random_stream(seed=5)
    spec = ModelSpec.parse("river.tree.HoeffdingTreeClassifier" + options)
    engine = ReplayEngine(spec, "s", [0, 1], repredict=RepredictPolicy("every_k_labels", k))
    outcomes = engine.drain(events).outcomes
    assert engine.rows.deferred
    assert _equals_algorithm_1(engine, outcomes, events, spec, k) == 0
    # (a majority-class leaf's answer is kept with its snapshot: no naive Bayes to decide)
    assert len(exact_calls) == 0 if "mc" in options else len(exact_calls) > 1000 // k



@needs(FAST_NB_LEAVES)
def test_deferred_tree_repredictions_of_a_tree_of_more_than_64_leaves():
    """A tree that grows past 64 leaves (the batch's first allocation of leaf serials): a
    window opened when its new leaves are first seen still holds a snapshot of each (it
    raised IndexError at 'index 64 is out of bounds'), and every re-prediction equals the
    per-label scan's."""
    import random

    from river.datasets import synth

    rng = random.Random(3)
    events = []
    for i, (x, y) in enumerate(synth.Agrawal(classification_function=5, seed=1).take(8000)):
        events.append(event(float(i), RANK_INSTANCE, 2 * i, INSTANCE, i, x))
        events.append(event(i + rng.uniform(1, 30), RANK_LABEL, 2 * i + 1, LABEL, i, None, y))
    spec = ModelSpec.parse('river.tree.HoeffdingTreeClassifier{"grace_period": 10, '
                           '"delta": 0.5}')
    engine = ReplayEngine(spec, "s", [0, 1], repredict=RepredictPolicy("every_k_labels", 4))
    outcomes = engine.drain(events).outcomes
    assert engine.rows.deferred and engine.model._n_active_leaves > 64
    assert _equals_algorithm_1(engine, outcomes, events, spec, 4) == 0


@needs(FAST_NB_LEAVES)
@pytest.mark.parametrize("k", [10, 20])
def test_deferred_tree_repredictions_with_labels_sooner_than_k_labels(k):
    """Labels that often come before an instance's first round (its row is taken before it
    was ever routed to a leaf, and its slot goes to a newer instance)."""
    events = random_stream(seed=1, delay_lo=1, delay_hi=40, updates=False, orphans=False)
    spec = ModelSpec.parse('river.tree.HoeffdingTreeClassifier{"grace_period": 40}')
    engine = ReplayEngine(spec, "s", [0, 1], repredict=RepredictPolicy("every_k_labels", k))
    outcomes = engine.drain(events).outcomes
    assert engine.rows.deferred
    assert _equals_algorithm_1(engine, outcomes, events, spec, k) == 0



@needs(FAST_NB_LEAVES)
@pytest.mark.parametrize("first", [LABEL, PRETRAIN])
@pytest.mark.parametrize("k", [1, 4])
def test_deferred_tree_repredictions_after_labels_learned_before_any_instance(first, k):
    """A stream that starts with labels the tree learns while nothing is pending (orphan
    labels with features, or the rows of --pretrain): the first deferred round had no row to
    read the leaves for, and failed ('NoneType' object is not iterable)."""
    from river.datasets import synth

    head = [event(-200.0 + i, RANK_INSTANCE if first == PRETRAIN else RANK_LABEL, -1000 + i,
                  first, f"head{i}", x, y)
            for i, (x, y) in enumerate(synth.Agrawal(seed=9).take(150))]
    events = head + random_stream(seed=5, updates=False)
    spec = ModelSpec.parse('river.tree.HoeffdingTreeClassifier{"grace_period": 20, '
                           '"delta": 0.01}')
    engine = ReplayEngine(spec, "s", [0, 1], repredict=RepredictPolicy("every_k_labels", k))
    outcomes = engine.drain(events).outcomes
    assert engine.rows.deferred and engine.model.n_leaves > 2
    assert _equals_algorithm_1(engine, outcomes, events, spec, k) == 0


@needs(FAST_NB_LEAVES)
def test_deferred_tree_repredictions_made_in_short_windows_and_small_chunks(monkeypatch):
    """Windows closed every 4·K labels and a leaf's rows scored 16 (row, snapshot) cells at a
    time: the same re-predictions as the per-label scan."""
    from transforms.replay import repredict

    monkeypatch.setattr(repredict, "WINDOW_WORK", 1)
    monkeypatch.setattr(repredict, "WINDOW_CELLS", 16)
    events = random_stream(seed=4)
    spec = ModelSpec.parse('river.tree.HoeffdingTreeClassifier{"grace_period": 40}')
    engine = ReplayEngine(spec, "s", [0, 1], repredict=RepredictPolicy("every_k_labels", 3))
    outcomes = engine.drain(events).outcomes
    assert engine.rows.deferred
    assert _equals_algorithm_1(engine, outcomes, events, spec, 3) == 0


@needs(FAST_NB_LEAVES)
def test_deferred_tree_repredictions_with_ten_classes_seen_as_they_come():
    """river's LED stream (10 classes, undeclared: each gets a column of the snapshots when
    first seen, mid-window): equal to the per-label scan."""
    import random

    from river.datasets import synth

    rng, events = random.Random(2), []
    for i, (x, y) in enumerate(synth.LED(seed=2, noise_percentage=0.1).take(600)):
        events.append(event(float(i), RANK_INSTANCE, 2 * i, INSTANCE, i, x))
        events.append(event(i + rng.uniform(3, 80), RANK_LABEL, 2 * i + 1, LABEL, i, None, y))
    spec = ModelSpec.parse('river.tree.HoeffdingTreeClassifier{"grace_period": 30}')
    engine = ReplayEngine(spec, "s", None, repredict=RepredictPolicy("every_k_labels", 3))
    outcomes = engine.drain(events).outcomes
    assert engine.rows.deferred and len(engine.classes) == 10
    assert _equals_algorithm_1(engine, outcomes, events, spec, 3, classes=None) == 0

@needs(FAST_NB_LEAVES)
def test_deferred_tree_repredictions_survive_saved_state_and_a_row_of_other_keys():
    """Drained in parts with the engine saved and restored between them (the snapshots are
    not saved: the next window starts anew), then a row with a text feature (re-predicted at
    once from then on): still equal to the per-label scan."""
    events = sorted(random_stream(seed=7, updates=False))
    spec = ModelSpec.parse('river.tree.HoeffdingTreeClassifier{"grace_period": 40}')
    engine = ReplayEngine(spec, "s", [0, 1], repredict=RepredictPolicy("every_k_labels", 2))
    # A later instance with a text feature: not a dense row.
    at = next(i for i, ev in enumerate(events) if ev[0] > 400 and ev[3] == INSTANCE)
    events[at] = events[at][:5] + (dict(events[at][5], colour="red"),) + events[at][6:]
    outcomes, deferred = [], []
    for part in range(4):
        chunk = [ev for ev in events if 150 * part <= ev[0] < 150 * (part + 1)] \
            if part < 3 else [ev for ev in events if ev[0] >= 450]
        outcomes += engine.drain(chunk).outcomes
        deferred.append(engine.rows.deferred)
        engine = ReplayEngine.from_bytes(engine.to_bytes())
    assert deferred == [True, True, False, False]
    assert _equals_algorithm_1(engine, outcomes, events, spec, 2) == 0



@pytest.mark.parametrize("k", [2, 3])
def test_a_label_whose_learning_failed_leaves_one_round_per_label_number(k):
    """The model cannot learn instance 12's label (a dead letter, on request): the round made
    before that attempt is label number 13's, made once; the instances that arrive before
    label 13 is learned are due from its number as any other. Expected times: a loop over the
    learning attempts (a round at the first attempt of each label number, at its time)."""
    events = []
    for i in range(40):
        x = {"f": float(i % 5), "bad": 2 if i == 12 else 0}
        events.append(event(float(i), RANK_INSTANCE, 2 * i, INSTANCE, i, x))
        events.append(event(i + 3.5, RANK_LABEL, 2 * i + 1, LABEL, i, None, "ab"[i % 2]))
    engine = ReplayEngine(ModelSpec.parse("tests.helpers.FailsOn"), "s", None,
                          repredict=RepredictPolicy("every_k_labels", k),
                          on_model_error="dead-letter")
    outcomes = engine.drain(events).outcomes
    # Attempts in time order: (time, label number, learned?); arrivals: learned labels before.
    attempts, learned = [], 0
    for i in range(40):
        attempts.append((i + 3.5, learned + 1, i != 12))
        learned += i != 12
    first_attempt = {}
    for t, number, _ in attempts:
        first_attempt.setdefault(number, t)
    assert len(outcomes) == 39
    for o in outcomes:
        version = sum(ok for t, _, ok in attempts if t < o.t_arrival)
        expected = [first_attempt[number] for number in range(version + 1 + k, learned + 1, k)
                    if first_attempt[number] < o.t_label]
        assert [t for t, _ in repredictions(o)] == expected, o.id

def test_bin_boundaries_policy_by_hand():
    # B=4 over A's latency period [0, 100): re-predictions at 25, 50, 75 with the model of
    # that time (No-Change: the last label seen: a@20, b@45, b@45).
    a = worked_example(policy=RepredictPolicy.parse("bin_boundaries:4"))
    assert repredictions(a) == [(25.0, 0), (50.0, 1), (75.0, 1)]
    bins = binned_predictions(a.t_arrival, a.t_label, a.initial, repredictions(a), a.final, 4)
    assert bins == [0, 0, 0, 1, 1, 0]


def test_every_duration_policy_by_hand():
    # Every 30 s while pending: at 30 (before the label a@30 is learned: a@20), 60 (b@45),
    # 90 (a@80). Bins of [0, 100) with B=4: 30 -> 2, 60 -> 3, 90 -> 4.
    a = worked_example(policy=RepredictPolicy.parse("every:30s"))
    assert repredictions(a) == [(30.0, 0), (60.0, 1), (90.0, 0)]
    bins = binned_predictions(a.t_arrival, a.t_label, a.initial, repredictions(a), a.final, 4)
    assert bins == [0, 0, 0, 1, 0, 0]


def test_bin_start_lands_in_its_bin():
    for t0, t_label, bins in [(0.1, 0.7, 3), (1e9, 1e9 + 0.3, 7), (-5.0, 17.3, 100)]:
        for b in range(2, bins + 1):
            assert bin_of(bin_start(t0, t_label, bins, b), t0, t_label - t0, bins) == b


@pytest.mark.parametrize("model", [
    "river.naive_bayes.GaussianNB", 'river.tree.HoeffdingTreeClassifier{"grace_period": 30}',
    'river.tree.HoeffdingAdaptiveTreeClassifier{"grace_period": 30, "seed": 1}',
    'adaptive-random-forest{"n_models": 3, "grace_period": 30}'])
@pytest.mark.parametrize("policy", ["every:7", "bin_boundaries:5", "bin_boundaries:40"])
def test_timed_policies_equal_a_straightforward_schedule(policy, model):
    events = random_stream(n=300)
    parsed = RepredictPolicy.parse(policy)

    def timed(t0, t_label, j):
        """The j-th timed re-prediction: every D seconds, or at the start of bin j + 1 (the
        first float t whose bin 1 + floor((t − t0)/Δ·B) is j + 1; bin 1 starts with the
        initial prediction)."""
        if parsed.kind == "every":
            return t0 + j * parsed.every
        b, delta = j + 1, t_label - t0
        if b > parsed.bins:
            return None
        t = t0 + delta * (b - 1) / parsed.bins
        while 1 + math.floor((t - t0) / delta * parsed.bins) < b:
            t = math.nextafter(t, math.inf)
        return t

    spec = ModelSpec.parse(model)
    engine = ReplayEngine(spec, "s", [0, 1], repredict=parsed)
    ours = engine.drain(events).outcomes
    naive = naive_replay(events, spec.build([0, 1]), k=None, timed=timed)
    assert len(ours) == len(naive) > 250
    got = [[(t, None if v == -1 else engine.classes[v]) for t, v in repredictions(o)]
           for o in ours]
    assert got == [reps for *_, reps, _ in naive]
    assert sum(map(len, got)) > 1000


def test_moa_style_delayed_arff_feeds_re_evaluation(tmp_path):
    """tests/data/delayed.arff (a logged stream; file order breaks ties at t=2: label 1 (a),
    instance 3, label 2 (b)) re-predicted every 0.5 s, B=2, No-Change, by hand. Before t=2
    No-Change has seen no label and predicts a, the first class; from t=2 on, b.
    Per bin 0..3 (initial, two halves of the latency period, final):
    - 1 (a, [0, 2]): a at 0.5 (bin 1), 1.0, 1.5, 2.0 (bin 2)       -> a a a a: 1 1 1 1
    - 2 (b, [1, 2]): a at 1.5, 2.0 (bin 2)                          -> a a a a: 0 0 0 0
    - 3 (b, [2, 5]): b at 2.5, 3.0 (bin 1), 3.5 ... 5.0 (bin 2); bin 1 votes over
      [a 2-2.5, b 2.5-3, b 3-3.5] -> b                             -> a b b b: 0 1 1 1
    """
    from pipelines.config import RunConfig
    from pipelines.job import run
    from tests.helpers import data, read

    spec = data("delayed.arff") + '{"delayed": true}'
    engine = ReplayEngine(ModelSpec.parse("no-change"), "s", ["a", "b"],
                          repredict=RepredictPolicy.parse("every:0.5"))
    outcomes = engine.drain(read(spec)[0]).outcomes
    assert [(o.id, repredictions(o)) for o in outcomes] == [
        ("1", [(0.5, 0), (1.0, 0), (1.5, 0), (2.0, 0)]), ("2", [(1.5, 0), (2.0, 0)]),
        ("3", [(2.5, 1), (3.0, 1), (3.5, 1), (4.0, 1), (4.5, 1), (5.0, 1)])]
    summary = run(RunConfig(streams=[spec], models=["no-change"], out=str(tmp_path),
                            repredict="every:0.5", bins=2, alphas=[1], quiet=True))
    accuracy = summary.query("metric == 'accuracy'")
    binned = accuracy.query("category == 'binned'").sort_values("bin")["value"].tolist()
    assert binned == [1 / 3, 2 / 3, 2 / 3, 2 / 3]
    assert accuracy.query("category == 'intermediate'")["value"].item() == \
        (1 / 3 + 2 / 3 + 2 / 3) / 3


def test_pipeline_bins_equal_the_straightforward_replay_classes_in_order_of_appearance(
        tmp_path):
    """The whole pipeline's Λ(T, b) equals the naive replay's bins item by item. Agrawal's first
    label is 1, so class index 0 is the label 1 and a tied vote goes to 1, not to the smaller
    value 0 (No-Change at K=1 flips often: several bins end in a tie)."""
    from benchmarks.naive_reevaluation import naive_bin_accuracy
    from pipelines.config import RunConfig
    from pipelines.job import run
    from transforms.streams.delays import DelaySpec
    from transforms.streams.sources import StreamSpec

    stream = 'synth:Agrawal{"n": 600, "seed": 1}'
    summary = run(RunConfig(streams=[stream], models=["no-change"], delay="40", bins=8,
                            out=str(tmp_path), runner="direct", repredict="every_k_labels:1",
                            quiet=True))
    binned = summary.query("category == 'binned' and metric == 'accuracy'").sort_values("bin")
    events = sorted(StreamSpec.parse(stream).events(DelaySpec.parse("40")))
    assert events[[e[3] for e in events].index(LABEL)][6] == 1
    naive = naive_replay(events, ModelSpec.parse("no-change").build(None), 1)
    assert binned["value"].tolist() == naive_bin_accuracy(naive, 8)


@pytest.mark.parametrize("delay, told", [(11, True), (12, False)])
def test_a_run_whose_labels_all_come_before_a_re_prediction_says_so(tmp_path, capsys, delay,
                                                                     told):
    """With K = 10, an instance is re-predicted at the 11th label after it, so at a delay of
    11 events none is: the binned measures and Ψα repeated the initial ones without a word.
    The manifest's `repredicted` counts the instances the log has re-predictions of."""
    assert main(["run", "--stream", 'synth:SEA{"n": 300}', "--model", "gaussian-nb",
                 "--delay", str(delay), "--out", str(tmp_path), "--runner", "direct"]) == 0
    printed = capsys.readouterr().out
    assert ("sea: no instance was re-predicted while it waited for its label (--repredict "
            "every_k_labels:10: each label came first)" in printed) == told
    log = pd.read_parquet(tmp_path / "predictions.parquet")
    counts = json.loads((tmp_path / "manifest.json").read_text())["counts"][0]
    assert counts["repredicted"] == log.loc[log["kind"] == "re-prediction", "id"].nunique()
    assert (counts["repredicted"] == 0) == told
    page = open(write_report(str(tmp_path)), encoding="utf-8").read()
    assert ("<b>not re-predicted</b>: sea: no instance was re-predicted" in page) == told


def test_streams_none_of_whose_instances_was_re_predicted_are_named_in_one_line(tmp_path,
                                                                               capsys):
    """Of four streams, three wait 11 labels (K = 10: none re-predicted) and one 30: the
    notice named each of the three in a line of its own, the same words three times (30 times
    in a run of 30 such streams)."""
    streams = [f'{name}=synth:SEA{{"n": 200, "seed": {seed}, "delay": {delay}}}'
               for name, seed, delay in [("a", 1, 11), ("b", 2, 30), ("c", 3, 11), ("d", 4, 11)]]
    assert main(["run", *[a for s in streams for a in ("--stream", s)], "--model",
                 "gaussian-nb", "--out", str(tmp_path), "--runner", "direct"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines()
             if "no instance was re-predicted" in line]
    assert lines == ["a, c and d: no instance was re-predicted while it waited for its label "
                     "(--repredict every_k_labels:10: each label came first), so the binned "
                     "measures and Ψα repeat the initial ones; re-predict more often than "
                     "labels arrive during a wait (a smaller K), or at bin_boundaries"]
