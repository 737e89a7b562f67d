"""The replay engine, without Beam: order, protocol, baselines, state."""

import math
import pickle

import pytest

from tests.helpers import outcome_rows, repredictions
from transforms.models.specs import Majority, ModelSpec, NoChange
from transforms.records import (INSTANCE, LABEL, RANK_INSTANCE, RANK_LABEL,
                                RANK_LABEL_AFTER_INSTANCE, UPDATE, event)
from transforms.replay.engine import LateEventError, ReplayEngine
from transforms.replay.repredict import RepredictPolicy


def inst(t, seq, key, x=None):
    return event(t, RANK_INSTANCE, seq, INSTANCE, key, x or {"v": float(seq)})


def lab(t, seq, key, y, x=None, rank=RANK_LABEL):
    return event(t, rank, seq, LABEL, key, x, y)


def engine(model="no-change", classes=("a", "b"), repredict="none"):
    return ReplayEngine(ModelSpec.parse(model), "s", list(classes) if classes else None,
                        repredict=RepredictPolicy.parse(repredict))


def predictions(out, e):
    return out.predictions.tuples(e.classes)


def test_label_due_at_t_is_processed_before_instance_at_t():
    e = engine()
    out = e.drain([inst(1, 2, "B"), lab(1, 1, "A", "b"), inst(0, 0, "A")], T=1)
    # No-Change predicts 'a' (the first class) for A, learns 'b', then predicts 'b' for B.
    assert [(p[0], p[1], p[3]) for p in predictions(out, e)] == [
        ("A", "initial", "a"), ("A", "final", "a"), ("B", "initial", "b")]


def test_label_never_before_its_own_instance():
    e = engine()
    out = e.drain([lab(0, 1, "A", "b", rank=RANK_LABEL_AFTER_INSTANCE), inst(0, 0, "A")])
    assert out.counts["orphan_labels"] == 0 and len(out.outcomes) == 1


def test_outcome_carries_baselines_in_label_order():
    e = engine(classes=None)
    events = [inst(i, 2 * i, i) for i in range(4)]
    events += [lab(10 + i, 2 * i + 1, i, y) for i, y in enumerate(["x", "y", "y", "x"])]
    out = e.drain(events)
    assert [(o.n, o.y, o.y_prev, o.y_majority) for o in out.outcomes] == [
        # classes by first appearance: x=0, y=1; prev starts at the first class (0);
        # majority is counted including the current label, ties to the lowest index.
        (1, 0, 0, 0), (2, 1, 0, 0), (3, 1, 1, 1), (4, 0, 1, 0)]
    # Undeclared classes: No-Change has nothing to predict before the first label.
    assert [o.initial for o in out.outcomes] == [None] * 4
    assert out.counts["unscored_initial"] == 4


def test_baselines_follow_moa_conventions():
    m = Majority(classes=["a", "b", "c"])
    assert m.predict_one({}) == "a"
    for y in "cbbc":
        m.learn_one({}, y)
    assert m.predict_one({}) == "b"  # tie between b and c: lowest index
    n = NoChange(classes=["a", "b"])
    assert n.predict_one({}) == "a"
    n.learn_one({}, "b")
    assert n.predict_one({}) == "b"


def test_update_replaces_features_and_label_features_win():
    e = engine('river.neighbors.KNNClassifier{"n_neighbors": 1}', classes=None,
               repredict="every_k_labels:100")
    warm = [inst(0, 0, "w", {"v": 0.0}), lab(0.5, 1, "w", "a"),
            inst(0.6, 2, "w2", {"v": 10.0}), lab(0.7, 3, "w2", "b")]
    e.drain(warm, T=0.7)
    out = e.drain([inst(1, 4, "A", {"v": 0.1}),
                   event(2, RANK_INSTANCE, 5, UPDATE, "A", {"v": 9.9}),
                   lab(3, 6, "A", "b", x={"v": 0.2})], T=3)
    assert [(p[1], p[3]) for p in predictions(out, e)] == [
        ("initial", "a"), ("re-prediction", "b"), ("final", "a")]
    # The update's prediction is one of the instance's re-predictions (Algorithm 1), so it is
    # binned: classes by first appearance a=0, b=1.
    assert repredictions(out.outcomes[0]) == [(2.0, 1)]


def test_orphans_learned_with_features_dead_lettered_without():
    e = engine("majority")
    out = e.drain([lab(0, 0, "ghost", "b", x={"v": 1.0}), lab(1, 1, "nobody", "b"),
                   inst(2, 2, "A")])
    assert out.counts["orphan_labels"] == 2 and out.counts["learned_orphans"] == 1
    assert [d["reason"] for d in out.dead_letters] == [
        "label for id 'nobody', which is not pending (no instance had it, or its instance was "
        "labelled already)"]
    assert predictions(out, e)[-1][3] == "b"  # learned from the orphan with features


def test_state_round_trips_to_an_engine_that_continues_alike():
    events = [inst(i, 2 * i, i, {"v": float(i % 3)}) for i in range(40)]
    events += [lab(i + 5, 2 * i + 1, i, "ab"[i % 2]) for i in range(40)]
    one = engine("river.tree.HoeffdingTreeClassifier", repredict="every_k_labels:2")
    out_one = one.drain([e for e in events if e[0] <= 20], T=20)
    data = one.to_bytes()
    # A worker that decodes the state (or a state a worker re-encoded after decoding it)
    # continues exactly as the engine that wrote it: the same predictions and outcomes.
    two = ReplayEngine.from_bytes(data)
    three = ReplayEngine.from_bytes(ReplayEngine.from_bytes(data).to_bytes())
    rest = [e for e in events if e[0] > 20]
    a, b, c = one.drain(rest), two.drain(rest), three.drain(rest)
    assert predictions(a, one) == predictions(b, two) == predictions(c, three)
    assert outcome_rows(a.outcomes) == outcome_rows(b.outcomes) == outcome_rows(c.outcomes)
    assert any(repredictions(o) for o in a.outcomes)
    # Draining in two steps equals draining once.
    whole = engine("river.tree.HoeffdingTreeClassifier", repredict="every_k_labels:2").drain(
        events)
    assert outcome_rows(whole.outcomes) == outcome_rows(out_one.outcomes + a.outcomes)


def test_late_event_is_an_error_not_a_silent_reorder():
    e = engine()
    e.drain([inst(5, 0, "A")], T=5)
    with pytest.raises(LateEventError, match="arrived after the replay had passed t=5"):
        e.drain([inst(4, 1, "B")], T=6)
    with pytest.raises(ValueError, match="was given an event at t=9"):
        e.drain([inst(9, 2, "C")], T=8)


def test_regression_outcomes_are_values():
    e = ReplayEngine(ModelSpec.parse("river.linear_model.LinearRegression"), "s")
    assert e.task == "regression"
    out = e.drain([inst(0, 0, 1, {"v": 1.0}), lab(1, 1, 1, 2.5)])
    o = out.outcomes[0]
    assert (o.y, o.initial) == (2.5, 0.0) and math.isnan(o.y_prev)


def test_engine_pickles_without_live_globals():
    e = engine("gaussian-nb")
    e.drain([inst(0, 0, "A")])
    assert pickle.loads(pickle.dumps(e)).pending.keys() == {"A"}


def test_non_finite_regression_predictions_are_unscored_everywhere(tmp_path):
    """A NaN or infinite prediction is no prediction: counted as unscored in the manifest, and
    left out of the MAE and of every row's n, as a plain loop over the finite ones does."""
    import json

    import pandas as pd

    from pipelines.config import RunConfig
    from pipelines.job import run

    v = [1.0, 9.0, 2.0, 9.0, 9.0, 4.0, 3.5, 9.0, 0.5, 1.5]
    broken = [0, 1, 0, 2, 3, 0, 0, 1, 0, 0]  # NaN, inf, −inf predictions
    y = [1.5, 2.0, 2.0, 0.0, 1.0, 3.0, 3.5, 1.0, 0.0, 2.0]
    pd.DataFrame({"time": range(len(v)), "v": v, "broken": broken, "label": y}) \
        .to_csv(tmp_path / "r.csv", index=False)
    out = tmp_path / "out"
    summary = run(RunConfig(streams=[f"r={tmp_path / 'r.csv'}"],
                            models=["echo=tests.helpers.NonFiniteRegressor"], delay="1",
                            out=str(out), runner="direct", repredict="none", drift_on="none",
                            log_predictions="none", quiet=True))
    finite = [(a, b) for a, b, bad in zip(v, y, broken) if not bad]
    counts = json.loads((out / "manifest.json").read_text())["counts"][0]
    assert counts["labelled"] == len(v)
    assert counts["unscored_initial"] == counts["unscored_final"] == len(v) - len(finite)
    assert counts["scored_initial"] == len(finite)
    rows = summary[summary["window"] == "cumulative"]
    assert set(rows["n"]) == {len(finite)}
    mae = rows[(rows["category"] == "initial") & (rows["metric"] == "mae")]["value"].item()
    assert mae == pytest.approx(sum(abs(a - b) for a, b in finite) / len(finite))


def test_a_models_generators_draw_as_before_and_a_prediction_set_aside_draws_nothing():
    """The generators a model holds give the numbers they would give untouched (a plain
    `random.Random`, a NumPy generator of the same seed), and draws made inside `kept()` —
    a cached Gaussian value used up included — leave them as they were."""
    import pickle
    import random

    import numpy as np

    from transforms.models.randomness import RandomStates

    def draws(r, g):
        return [r.random(), r.randint(0, 10**6), r.sample(range(100), 5), r.choice("abcdef"),
                r.gauss(0, 1), r.gauss(0, 1), r.gauss(0, 1), r.getrandbits(70),
                r.choices(range(9), k=3), r.betavariate(2, 3), r.shuffle(list(range(9))),
                *g.normal(size=3), *g.integers(0, 9, size=3)]

    class Model:
        def __init__(self):
            self.rng, self.np_rng = random.Random(7), np.random.default_rng(7)

    model, untouched = Model(), Model()
    states = RandomStates(model)
    assert draws(model.rng, model.np_rng) == draws(untouched.rng, untouched.np_rng)
    assert model.rng.gauss_next is not None  # (three Gaussian values drawn: one kept)
    with states.kept():
        model.rng.gauss(0, 1)  # (uses that value up, drawing nothing)
    for _ in range(3):
        with states.kept():
            draws(model.rng, model.np_rng)
        assert draws(model.rng, model.np_rng) == draws(untouched.rng, untouched.np_rng)
    assert draws(*pickle.loads(pickle.dumps((model.rng, model.np_rng)))) == \
        draws(untouched.rng, untouched.np_rng)
