"""Vectorised predictions equal `predict_one` exactly, at every stage of learning."""

import itertools

import numpy as np
import pytest
from river import ensemble, forest, linear_model, naive_bayes, rules, tree
from river.datasets import synth

from tests.helpers import FAST_KNN, FAST_LINEAR_REGRESSION, FAST_NB_LEAVES, needs
from transforms.models.batch import NONE, batch_predictor
from transforms.models.specs import ModelSpec

STREAMS = {
    "agrawal": lambda: synth.Agrawal(classification_function=2, seed=3),
    "sea": lambda: synth.SEA(seed=5, noise=0.2),
    "hyperplane": lambda: synth.Hyperplane(seed=7, n_features=6),
    "led": lambda: synth.LEDDrift(seed=1, noise_percentage=0.1, n_drift_features=4),
    # A table's true / false column: river's models take a bool as the number 1 or 0.
    "sea-with-a-bool": lambda: (({"a": x[0], "high": x[1] > 5.0, "c": x[2]}, y)
                                for x, y in synth.SEA(seed=5, noise=0.2)),
}
MODELS = {
    "gaussian-nb": naive_bayes.GaussianNB,
    "ht-nba": lambda: tree.HoeffdingTreeClassifier(grace_period=50),
    "ht-nb": lambda: tree.HoeffdingTreeClassifier(grace_period=50, leaf_prediction="nb",
                                                  nb_threshold=20),
    "ht-mc": lambda: tree.HoeffdingTreeClassifier(grace_period=50, leaf_prediction="mc"),
    "majority": lambda: ModelSpec.parse("majority").build(None),
    "no-change": lambda: ModelSpec.parse("no-change").build(None),
    "logistic-regression": linear_model.LogisticRegression,
    "knn": lambda: ModelSpec.parse('knn{"window_size": 200}').build(None),
    "arf": lambda: ModelSpec.parse('adaptive-random-forest{"n_models": 4, "grace_period": 50}'
                                   ).build(None),
    "hat-nba": lambda: tree.HoeffdingAdaptiveTreeClassifier(grace_period=50, seed=1),
    "hat-nb": lambda: tree.HoeffdingAdaptiveTreeClassifier(grace_period=50, seed=1,
                                                           leaf_prediction="nb",
                                                           nb_threshold=20),
    "hat-mc": lambda: tree.HoeffdingAdaptiveTreeClassifier(grace_period=50, seed=1,
                                                           leaf_prediction="mc"),
}


def answers(predictor, model, xs, all_dense=True):
    """The predictor's answers for xs, split as the engine splits them: rows it could encode
    as dense rows, and the others (`all_dense`: there must be none)."""
    if not predictor.dense:
        codes, labels = predictor.predict(model, None, xs)
        return [None if c == NONE else labels[c] for c in codes]
    encoded = [predictor.encode(x) for x in xs]
    dense = [i for i, r in enumerate(encoded) if r is not None]
    assert not all_dense or len(dense) == len(xs)
    out = [None] * len(xs)
    other = [i for i, r in enumerate(encoded) if r is None]
    # (a row encoded before another brought a feature lacks it: NaN, as the engine pads it)
    width = max((len(r) for r in encoded if r is not None), default=0)
    padded = [np.pad(encoded[i], (0, width - len(encoded[i])), constant_values=np.nan)
              for i in dense]
    for at, rows in ((dense, np.vstack(padded) if dense else None), (other, None)):
        if at:
            codes, labels = predictor.predict(model, rows, [xs[i] for i in at])
            for i, c in zip(at, codes):
                out[i] = None if c == NONE else labels[c]
    return out


def drifting_agrawal(n: int, position: int) -> list:
    """n rows of Agrawal function 0, then function 4 from `position` on (width 50)."""
    stream = synth.ConceptDriftStream(synth.Agrawal(classification_function=0, seed=1),
                                      synth.Agrawal(classification_function=4, seed=2),
                                      position=position, width=50, seed=3)
    return list(itertools.islice(stream, n))


def drifting_friedman(n: int, position: int) -> list:
    """n rows of Friedman's function, then its global recurring abrupt drift (river's
    `FriedmanDrift`, drift type "gra") from `position` on (width 50)."""
    stream = synth.ConceptDriftStream(
        synth.Friedman(seed=1), synth.FriedmanDrift(drift_type="gra", seed=2, position=(10, 20)),
        position=position, width=50, seed=3)
    return list(itertools.islice(stream, n))


def learn_checking(predictor, model, data, probe, every, at_check=None) -> int:
    """Learn `data` row by row; before rows 0, 1, 3 and every `every`-th row, the predictor's
    answers for `probe` must be predict_one's (then `at_check()` runs). The checks made."""
    checks = 0
    for i, (x, y) in enumerate(data):
        if i in (0, 1, 3) or i % every == 0:  # untrained, barely trained, ... grown
            assert answers(predictor, model, probe) == [model.predict_one(x) for x in probe]
            checks += 1
            if at_check is not None:
                at_check()
        model.learn_one(x, y)
    return checks


def left_to_predict_one(predictor, model, probe) -> list:
    """The probe rows the predictor leaves to the model's own predict_one (its answers for all
    of them checked against predict_one)."""
    asked = []
    own = model.predict_one
    model.predict_one = lambda x, **kw: asked.append(x) or own(x, **kw)
    try:
        assert answers(predictor, model, probe) == [own(x) for x in probe]
    finally:
        del model.predict_one
    return asked


class Stamped:
    """Rows kept across labels as the engine keeps them: a row is answered anew only where the
    predictor says its answer may have changed (`predict_changed`)."""

    def __init__(self, predictor, probe):
        self.predictor, self.probe = predictor, probe
        self.rows = np.array([predictor.encode(x) for x in probe])
        self.stamps = np.zeros(len(probe), dtype=np.int64)
        self.kept = [None] * len(probe)

    def answers(self, model) -> list:
        codes, labels, self.stamps, changed, _ = self.predictor.predict_changed(
            model, self.rows, self.probe, self.stamps)
        self.kept = [(None if c == NONE else labels[c]) if now else was
                     for c, now, was in zip(codes.tolist(), changed.tolist(), self.kept)]
        return self.kept


def stamped_through_a_drift(predictor, model, data, probe) -> int:
    """Learn `data` row by row, the probe kept as the engine keeps pending rows (`Stamped`):
    every 7th row its answers must be predict_one's. How many of those checks found an
    alternate tree in an adaptive tree."""
    stamped = Stamped(predictor, probe)
    with_alternates = 0
    for i, (x, y) in enumerate(data):
        if i % 7 == 0:
            assert stamped.answers(model) == [model.predict_one(x) for x in probe]
            with_alternates += bool(predictor._alternates)
        model.learn_one(x, y)
    return with_alternates


@pytest.mark.parametrize("stream", sorted(STREAMS))
@pytest.mark.parametrize("model_name", sorted(MODELS))
def test_batch_equals_predict_one_while_learning(stream, model_name):
    data = list(itertools.islice(STREAMS[stream](), 1500))
    probe = [x for x, _ in data[-300:]]
    model = MODELS[model_name]()
    predictor = batch_predictor(model)
    assert learn_checking(predictor, model, data[:1200], probe, 97) > 10
    # ... and the fast path really answers: few rows are left to predict_one.
    asked = left_to_predict_one(predictor, model, probe)
    alone = type(predictor).__name__ == "BatchPredictor" or (
        "-nb" in model_name and not FAST_NB_LEAVES)  # (naive Bayes leaves answer for themselves)
    limit = len(probe) if alone else len(probe) // 20
    assert len(asked) <= max(limit, 1)


def test_fast_paths_are_chosen():
    names = {name: type(batch_predictor(make())).__name__ for name, make in MODELS.items()}
    assert names == {"gaussian-nb": "GaussianNBBatch", "ht-nba": "HoeffdingTreeBatch",
                     "ht-nb": "HoeffdingTreeBatch", "ht-mc": "HoeffdingTreeBatch",
                     "majority": "ConstantBatch", "no-change": "ConstantBatch",
                     "logistic-regression": "LogisticRegressionBatch",
                     "knn": "KNNBatch" if FAST_KNN else "BatchPredictor",
                     "arf": "TreeEnsembleBatch", "hat-nba": "HoeffdingAdaptiveTreeBatch",
                     "hat-nb": "HoeffdingAdaptiveTreeBatch",
                     "hat-mc": "HoeffdingAdaptiveTreeBatch"}


@needs(FAST_LINEAR_REGRESSION)
def test_rows_whose_sums_differ_from_the_batchs_are_not_encoded():
    predictor = batch_predictor(linear_model.LinearRegression())  # (its values: bit for bit)
    assert predictor.encode({"a": 1, "b": 2.5}) is not None
    assert predictor.encode({"b": 2.5, "a": 1}) is None  # another key order: another sum order
    assert np.isnan(predictor.encode({"a": 1})).tolist() == [False, True]  # (b adds nothing)
    assert predictor.encode({"a": "x", "b": 2.5}) is None
    assert predictor.encode({"a": float("nan"), "b": 2.5}) is None


def lacks_a_split_feature(model, x: dict) -> bool:
    """Whether x lacks the feature of a split on its path down the tree `model` (river then
    takes the branch's most traversed path)."""
    from river.tree.base import Branch

    node = model._root
    while isinstance(node, Branch):
        try:
            node = node.next(x)
        except KeyError:
            return True
    return False


@pytest.mark.parametrize("model_name", ["gaussian-nb", "logistic-regression", "ht-nba",
                                        "ht-nb", "ht-mc", "hat-nba", "arf"])
def test_rows_that_lack_features_are_decided_as_predict_one_while_learning(model_name):
    """A real table's missing cells, kept as absent features (`{"missing": "drop"}`): river's
    GaussianNB, logistic regression and naive-Bayes tree leaves sum over the row's own
    features. The batch decides such rows, whatever the first row lacked, and gives
    predict_one's answers, kept across labels too; a tree leaves to predict_one only the rows
    without a feature a split on their path asks for (river takes the most traversed path)."""
    import random

    rng = random.Random(4)
    data = []
    for x, y in itertools.islice(synth.Agrawal(classification_function=0, seed=3), 1500):
        for name in list(x):
            if rng.random() < 0.05 or (not data and name == "salary"):
                del x[name]
        data.append((x, y))
    assert "salary" not in data[0][0]
    probe = [x for x, _ in data[-300:]]
    model = MODELS[model_name]()
    predictor = batch_predictor(model)
    assert predictor.encode(data[0][0]) is not None  # (names from a row without salary)
    stamped = Stamped(predictor, probe)
    assert np.isnan(stamped.rows).sum() > 50

    def kept_too():  # (a tree's rows kept across labels, as the engine keeps pending rows)
        if getattr(predictor, "stamps_rows", False):
            assert stamped.answers(model) == [model.predict_one(x) for x in probe]

    assert learn_checking(predictor, model, data[:1200], probe, 97, kept_too) > 10
    asked = left_to_predict_one(predictor, model, probe)
    lacking = sum(lacks_a_split_feature(model, x) for x in probe) if "t-" in model_name else 0
    assert lacking >= 5 or "t-" not in model_name  # (the tree split on features rows lack)
    alone = "-nb" in model_name and not FAST_NB_LEAVES
    assert len(asked) <= (len(probe) if alone else lacking + len(probe) // 20)
    assert predictor.encode({"salary": float("nan")}) is None  # (a NaN value is no absence)


LACKING_REGRESSORS = {
    "linear-regression": linear_model.LinearRegression,
    "scaled-linear-regression": lambda: ModelSpec.parse("standard-scaler | linear-regression"
                                                        ).build(),
    "tree-regressor-model": lambda: tree.HoeffdingTreeRegressor(grace_period=50,
                                                                leaf_prediction="model"),
    "tree-regressor-adaptive": lambda: tree.HoeffdingTreeRegressor(grace_period=50),
    "adaptive-tree-regressor": lambda: tree.HoeffdingAdaptiveTreeRegressor(grace_period=50,
                                                                           seed=1),
    "forest-regressor": lambda: forest.ARFRegressor(n_models=3, grace_period=50, seed=1),
    "amrules": lambda: rules.AMRules(n_min=30, delta=0.05, tau=0.1),
}


@needs(FAST_LINEAR_REGRESSION)
@pytest.mark.parametrize("model_name", sorted(LACKING_REGRESSORS))
def test_regressors_take_rows_that_lack_features_in_their_key_order(model_name):
    """A table's missing cells kept as absent features, the first row lacking x5: river's
    linear models sum w·x over the row's own features in the row's key order (x0, ..., x9),
    bit for bit, while the batch's names put x5, met later, last. The batch sums each row in
    its key order and gives predict_one's values, bit for bit, at every stage (kept across
    labels too); a tree leaves to predict_one only the rows without a split's feature."""
    import random

    rng = random.Random(6)
    data = []
    for x, y in drifting_friedman(1500, position=700):
        for name in list(x):
            if rng.random() < 0.05 or (not data and name == 5):
                del x[name]
        data.append(({f"x{k}": v for k, v in x.items()}, y))
    probe = [x for x, _ in data[-300:]]
    model = LACKING_REGRESSORS[model_name]()
    predictor = batch_predictor(model)
    assert predictor.encode(data[0][0]) is not None  # (names from a row without x5)
    stamped = Stamped(predictor, probe)
    assert np.isnan(stamped.rows).sum() > 50 and predictor.names[-1] == "x5"

    def kept_too():  # (a tree's rows kept across labels, as the engine keeps pending rows)
        if getattr(predictor, "stamps_rows", False):
            assert stamped.answers(model) == [model.predict_one(x) for x in probe]

    assert learn_checking(predictor, model, data[:1200], probe, 97, kept_too) > 10
    asked = left_to_predict_one(predictor, model, probe)
    if isinstance(model, tree.HoeffdingTreeRegressor):
        lacking = sum(lacks_a_split_feature(model, x) for x in probe)
        assert 5 <= lacking and len(asked) <= lacking
    elif "forest" not in model_name:
        assert not asked
    # A row whose keys come in another order is summed otherwise: predict_one's.
    assert predictor.encode(dict(reversed(probe[0].items()))) is None


@needs(FAST_NB_LEAVES)
@pytest.mark.parametrize("model_name", ["ht-nb", "arf"])
def test_a_feature_first_seen_after_the_tree_predicted_grows_its_arrays(model_name):
    """A feature no row had while the tree's batch already predicted (salary, from row 600
    on, as a later partition's new column): the stacked leaf arrays get a column for it, and
    the answers stay predict_one's, as the tree's leaves learn it."""
    data = list(itertools.islice(synth.Agrawal(classification_function=0, seed=3), 1500))
    early = [({k: v for k, v in x.items() if k != "salary"}, y) for x, y in data[:600]]
    model = MODELS[model_name]()
    predictor = batch_predictor(model)
    assert learn_checking(predictor, model, early, [x for x, _ in early[-100:]], 97) > 5
    width = len(predictor.names)
    probe = [x for x, _ in data[-300:]]
    assert learn_checking(predictor, model, data[600:1200], probe, 97) > 5
    assert len(predictor.names) == width + 1
    assert len(left_to_predict_one(predictor, model, probe)) <= len(probe) // 20


def grown_tree(n: int, learned: int, rows_from: int):
    """A Hoeffding tree that learned `learned` Agrawal rows, its predictor, the stream's first
    `n` rows, and 400 rows from `rows_from` as (dicts, dense rows)."""
    model = tree.HoeffdingTreeClassifier(grace_period=50)
    data = list(itertools.islice(synth.Agrawal(seed=3), n))
    for x, y in data[:learned]:
        model.learn_one(x, y)
    predictor = batch_predictor(model)
    xs = [x for x, _ in data[rows_from:rows_from + 400]]
    return model, predictor, data, xs, np.array([predictor.encode(x) for x in xs])


@pytest.mark.parametrize("make", [
    lambda: tree.HoeffdingTreeClassifier(leaf_prediction="mc", grace_period=1000),
    lambda: tree.HoeffdingAdaptiveTreeClassifier(leaf_prediction="mc", grace_period=1000, seed=1)])
def test_a_majority_class_leaf_answers_its_most_common_class_and_river_breaks_its_ties(make):
    """A majority-class leaf's rows take its most common class; when classes tie, river's
    own order decides (the tree's classes sorted, or as its set holds them): "b" is learned
    first, so it is the batch's first column, while the tree answers "a" to a tie of the two."""
    model = make()
    predictor = batch_predictor(model)
    probe = [{"x": float(v)} for v in range(5)]
    counts = dict.fromkeys("abc", 0)
    ties = 0
    for y in "baabbccac":
        model.learn_one({"x": 0.0}, y)
        counts[y] += 1
        most = max(counts.values())
        ties += sum(n == most for n in counts.values()) > 1
        assert answers(predictor, model, probe) == [model.predict_one(x) for x in probe]
    assert ties >= 3


def test_tree_stamps_change_exactly_when_a_rows_leaf_changes():
    model, predictor, data, xs, rows = grown_tree(3000, 2000, 2000)

    def stamps(before):
        codes, labels, stamped, changed, _ = predictor.predict_changed(model, rows, xs, before)
        assert (changed == (stamped != before)).all()
        assert [labels[c] for c in codes[changed]] == \
            [model.predict_one(xs[i]) for i in np.flatnonzero(changed)]
        return stamped

    leaf_of = {}
    for leaf, idx in predictor._route(model._root, rows, xs, np.arange(len(rows))):
        leaf_of.update({i: leaf for i in idx.tolist()})
    assert len(set(map(id, leaf_of.values()))) > 1  # the rows sit in several leaves
    before = stamps(np.zeros(len(rows), dtype=np.int64))
    assert (before > 0).all()
    assert (stamps(before) == before).all()  # nothing learned: nothing to predict again
    x, y = data[2400]
    learner = model._root
    while hasattr(learner, "children"):
        learner = learner.next(x)
    model.learn_one(x, y)  # one leaf learns (no split at this weight)
    after = stamps(before)
    in_learner = np.array([leaf_of[i] is learner for i in range(len(rows))])
    assert in_learner.any() and not in_learner.all()
    assert ((after != before) == in_learner).all()
    other = next(leaf_of[i] for i in range(len(rows)) if not in_learner[i])
    other.deactivate()  # memory management: same object, same weight, different answers
    moved = stamps(after) != after
    assert (moved == np.array([leaf_of[i] is other for i in range(len(rows))])).all()
    other.activate()  # back, with empty splitters: river's naive Bayes now sees priors only
    codes, labels = predictor.predict(model, rows, xs)
    assert [labels[c] for c in codes] == [model.predict_one(x) for x in xs]


def test_tree_rows_are_routed_again_exactly_when_their_leaf_splits():
    """A row's stamp names its leaf; after a split only the split leaf's rows change leaf."""
    model, predictor, data, xs, rows = grown_tree(6000, 100, 5000)

    def leaves():
        return [model._root.traverse(x) if hasattr(model._root, "children") else model._root
                for x in xs]

    _, _, stamps, _, _ = predictor.predict_changed(model, rows, xs, np.zeros(len(rows), np.int64))
    splits = 0
    for x, y in data[100:5000]:
        before_leaves, n_leaves = leaves(), model.n_leaves
        model.learn_one(x, y)
        if model.n_leaves == n_leaves:
            continue
        splits += 1
        codes, labels, after, changed, _ = predictor.predict_changed(model, rows, xs, stamps)
        moved = np.array([a is not b for a, b in zip(before_leaves, leaves())])
        assert (after >> predictor.SERIAL_SHIFT != stamps >> predictor.SERIAL_SHIFT)[moved].all()
        assert changed[moved].all()
        assert [labels[c] for c in codes[changed]] == \
            [model.predict_one(xs[i]) for i in np.flatnonzero(changed)]
        stamps = after
    assert splits >= 2


@pytest.mark.parametrize("model", [naive_bayes.GaussianNB, naive_bayes.BernoulliNB,
                                   naive_bayes.MultinomialNB])
def test_naive_bayes_single_predictions_equal_predict_one_while_learning(model):
    """The engine's single-row fast path (no normalisation) answers as predict_one does, at
    every stage of learning, near ties included."""
    from transforms.models.naive_bayes_batch import fast_predict_one

    rng = np.random.default_rng(3)
    model = model()
    predict = fast_predict_one(model)
    expected, got = [], []
    for _ in range(400):
        y = int(rng.integers(3))
        x = {f"f{i}": float(rng.poisson(1 + y) if i < 2 else rng.normal(y)) for i in range(3)}
        for probe in (x, {k: 0.0 for k in x}, {k: v + 1e-12 for k, v in x.items()}):
            expected.append(model.predict_one(probe))
            got.append(predict(probe))
        model.learn_one(x, y)
    assert got == expected
    # The fast path answers itself, but for near ties: predict_one is not asked for most rows.
    asked = []
    original = type(model).predict_one
    type(model).predict_one = lambda self, x: asked.append(x) or original(self, x)
    try:
        for x in ({"f0": float(v), "f1": 1.0, "f2": 0.5} for v in range(50)):
            predict(x)
    finally:
        del type(model).predict_one
    assert len(asked) < 5


@pytest.mark.parametrize("leaf_prediction", ["mc", "nb", "nba"])
def test_a_trees_initial_and_final_predictions_are_predict_proba_ones_at_every_stage(
        leaf_prediction):
    """The replay's stand-in for a Hoeffding tree's predict_one and predict_proba_one (its
    majority-class leaves divided without river's deep copy) gives river's answers and
    probabilities bit for bit, before the first label, through its splits, on numeric and
    nominal features, and inside a pipeline."""
    from transforms.models.naive_bayes_batch import fast_predict_one, predict_with_proba
    from transforms.models.tree_batch import _leaf_mode

    rng = np.random.default_rng(5)
    model = tree.HoeffdingTreeClassifier(grace_period=40, leaf_prediction=leaf_prediction)
    pipeline = ModelSpec.parse("one-hot-text | river.tree.HoeffdingTreeClassifier"
                               f'{{"grace_period": 40, "leaf_prediction": "{leaf_prediction}"}}'
                               ).build()
    predict, predict_pipeline = predict_with_proba(model), predict_with_proba(pipeline)
    assert predict.func.__name__ == "tree_class_and_proba"
    assert fast_predict_one(model).func.__name__ == "tree_predict_one"
    seen_modes = set()
    for i in range(1500):
        y = ["a", "b", "c"][int(rng.integers(3))]
        x = {"u": float(rng.normal("abc".index(y) * (i > 600))), "v": float(rng.uniform()),
             "colour": ["red", "green"][int(rng.integers(2))] if y != "c" else "blue"}
        for m, stand_in in ((model, predict), (pipeline, predict_pipeline)):
            assert stand_in(x) == (m.predict_one(x), m.predict_proba_one(x)), (i, m)
            assert fast_predict_one(m)(x) == m.predict_one(x), (i, m)
            m.learn_one(x, y)
        if model._root is not None:  # (which way its leaf answered: both are tested)
            leaf = model._root.traverse(x, until_leaf=True) if model.n_nodes > 1 else model._root
            seen_modes.add(_leaf_mode(leaf, model))
    assert model.n_leaves >= 3
    assert seen_modes == {"mc": {"mc"}, "nb": {"nb"}, "nba": {"mc", "nb"}}[leaf_prediction]


def test_gaussian_nb_of_many_classes_predicts_one_row_as_river_at_every_stage(monkeypatch):
    """With many classes GaussianNB's initial and final predictions come from its state as
    arrays, read again only for the class that learned: at every stage of learning (40
    classes, two of them learning the same values: exact ties), the class is predict_one's
    and the probabilities predict_proba_one's, also for a row missing a feature, one with a
    feature no class has seen, and a pipeline's; predict_one itself decides only near ties."""
    from river import compose, preprocessing

    from transforms.models.naive_bayes_batch import (ManyClassesGaussianNB, fast_predict_one,
                                                     predict_with_proba)

    rng = np.random.default_rng(5)
    model = naive_bayes.GaussianNB()
    pipeline = compose.Pipeline(preprocessing.StandardScaler(), naive_bayes.GaussianNB())
    predict, scored = fast_predict_one(model), predict_with_proba(model)
    pipeline_scored = predict_with_proba(pipeline)
    assert type(predict) is type(scored) is ManyClassesGaussianNB
    checked = 0
    for i in range(1500):
        y = int(rng.integers(40))
        x = {"a": float(rng.normal(y % 7, 1.0)), "b": float(rng.normal(y // 7, 0.5)),
             "c": float(rng.integers(3))}
        if i % 5 == 0:
            probes = (x, {"a": x["a"], "c": x["c"]}, {**x, "new": 1.0}, {k: 0.0 for k in x})
            for probe in probes:
                label, proba = scored(probe)
                proba, river_proba = proba or {}, model.predict_proba_one(probe)  # (untrained)
                assert predict(probe) == label == model.predict_one(probe)
                assert list(proba) == list(river_proba)
                assert all(abs(proba[c] - river_proba[c]) < 1e-12 for c in proba)
            label, proba = pipeline_scored(x)
            proba, river_proba = proba or {}, pipeline.predict_proba_one(x)
            assert label == pipeline.predict_one(x)
            assert all(abs(proba[c] - river_proba[c]) < 1e-12 for c in proba)
            checked += len(model.class_counts) * len(x) >= ManyClassesGaussianNB.MANY
        model.learn_one(x, y)
        pipeline.learn_one(x, y)
        if y == 0:  # class 40 learns what class 0 learns: the two tie on every row
            model.learn_one(x, 40)
    assert checked > 250
    asked = []
    original = type(model).predict_one
    monkeypatch.setattr(type(model), "predict_one",
                        lambda self, x: asked.append(x) or original(self, x))
    answers = [scored({"a": float(a), "b": 0.0, "c": 1.0}) for a in range(-2, 9)]
    assert len(asked) == sum(label in (0, 40) for label, _ in answers) > 0


def test_naive_bayes_single_prediction_ties_are_left_to_predict_one(monkeypatch):
    """Two classes with the same statistics tie exactly: river keeps the first in dict order,
    and so does the fast path, by asking predict_one."""
    from transforms.models import naive_bayes_batch

    model = naive_bayes.GaussianNB()
    for x, y in [({"a": 0.0}, "u"), ({"a": 0.0}, "v"), ({"a": 1.0}, "u"), ({"a": 1.0}, "v")]:
        model.learn_one(x, y)
    asked = []
    original = type(model).predict_one
    monkeypatch.setattr(type(model), "predict_one",
                        lambda self, x: asked.append(x) or original(self, x))
    assert naive_bayes_batch.naive_bayes_predict_one(model, {"a": 0.5}) == "u"
    assert asked == [{"a": 0.5}]


def _sparse(stream):
    """Agrawal's rows without their commission where it is 0 (river's dicts leave out what a
    row lacks), so rows come with two sets of features."""
    for x, y in stream:
        yield {k: v for k, v in x.items() if k != "commission" or v}, y


def last_step_asked(pipeline) -> list:
    """The rows the pipeline's last step answers with its own predict_one, as they come."""
    last = list(pipeline.steps.values())[-1]
    asked = []
    own = last.predict_one
    last.predict_one = lambda x, **kw: asked.append(x) or own(x, **kw)
    return asked


def _with_text(stream):
    """... with two of their codes as text (a table's categorical columns)."""
    for x, y in stream:
        yield {**x, "elevel": f"level{x['elevel']}", "car": f"make{x['car']}"}, y


@pytest.mark.parametrize("spec", ["one-hot-text | gaussian-nb",
                                  "standard-scaler | gaussian-nb",
                                  "one-hot-text | standard-scaler | gaussian-nb",
                                  "standard-scaler | logistic-regression",
                                  "one-hot-text | logistic-regression",
                                  "one-hot-text | standard-scaler | logistic-regression",
                                  *(pytest.param(spec, marks=needs(FAST_KNN)) for spec in (
                                      'standard-scaler | knn{"window_size": 300}',
                                      'one-hot-text | standard-scaler | knn{"window_size": 300}',
                                      'standard-scaler | knn-regressor{"window_size": 300}')),
                                  *(pytest.param(spec, marks=needs(FAST_LINEAR_REGRESSION))
                                    for spec in ("standard-scaler | linear-regression",
                                                 "one-hot-text | standard-scaler | "
                                                 "linear-regression"))])
def test_a_pipeline_ending_in_a_vectorised_model_equals_predict_one_while_learning(spec):
    """The rows go through the transformers as they stand at each prediction (a scaler's
    means move, the encoder meets new categories) and the last step decides for them at once:
    the pipeline's own predict_one, at every stage. Rows with text are encoded as arrays too;
    only those with a text the encoder has not learned (other features) go one by one."""
    rows = synth.Agrawal(classification_function=2, seed=3)
    if "knn" not in spec:  # (kNN decides at once when its window holds one set of features)
        rows = _sparse(rows)
    data = list(itertools.islice(_with_text(rows) if "one-hot" in spec else rows, 1500))
    probe = [x for x, _ in data[-300:]]
    model = ModelSpec.parse(spec).build()
    predictor = batch_predictor(model)
    assert type(predictor).__name__ == "PipelineBatch"
    asked = last_step_asked(model)
    checked = 0
    for i, (x, y) in enumerate(data[:1200]):
        if i in (0, 1, 3) or i % 97 == 0:
            expected = [model.predict_one(x) for x in probe]
            asked.clear()
            assert answers(predictor, model, probe, all_dense=False) == expected
            # ... decided at once, not by the last step, but for rows that are not dense (other
            # features) or hold a text the encoder has not learned, when the last step
            # answers them faster one by one (LR).
            learned = model.steps[next(iter(model.steps))].values if "one-hot" in spec else {}
            one_by_one = 0 if predictor.last.group_transformed else sum(
                predictor.encode(x) is None or any(isinstance(v, str) and v not in learned.get(
                    k, ()) for k, v in x.items()) for x in probe)
            # (kNN's window holds rows the encoder gave fewer features, before it had learned
            # every text, until the window has turned over: those answers go one by one)
            settled = "knn" not in spec or "one-hot" not in spec or i > 700
            assert i < 3 or not settled or len(asked) <= len(probe) // 20 + one_by_one
            if "one-hot" in spec:  # rows are encoded, texts too; those with other features
                # only where the last step leaves out a feature a row lacks
                assert sum(predictor.encode(x) is None for x in probe) == (
                    0 if predictor.absent_features else
                    sum(tuple(x) != tuple(data[0][0]) for x in probe))
            checked += 1
        model.learn_one(x, y)
    assert checked > 10


@pytest.mark.parametrize("spec", ["one-hot-text | gaussian-nb",
                                  "one-hot-text | standard-scaler | gaussian-nb",
                                  "one-hot-text | standard-scaler | logistic-regression",
                                  "standard-scaler | gaussian-nb"])
def test_a_pipelines_rows_that_lack_features_are_decided_as_predict_one_while_learning(spec):
    """A table's missing cells kept as absent features, text ones too, the first row lacking
    a number and a text: river's encoder and scaler transform the features a row has, and
    GaussianNB and logistic regression sum over those. The rows are decided as arrays with the
    others (a text the encoder has not learned aside), with predict_one's answers."""
    import random

    rng = random.Random(5)
    rows = synth.Agrawal(classification_function=0, seed=3)
    data = []
    for x, y in itertools.islice(_with_text(rows) if "one-hot" in spec else rows, 1500):
        for name in list(x):
            if rng.random() < 0.05 or (not data and name in ("salary", "car")):
                del x[name]
        data.append((x, y))
    probe = [x for x, _ in data[-300:]]
    model = ModelSpec.parse(spec).build()
    predictor = batch_predictor(model)
    assert predictor.encode(data[0][0]) is not None  # (names from a row without two)
    asked, checks = last_step_asked(model), []

    def decided_at_once():  # (once trained: the rows, but for a text not learned)
        learned = model.steps["OneHotText"].values if "one-hot" in spec else {}
        unlearned = sum(any(isinstance(v, str) and v not in learned.get(k, ()) for k, v in
                            x.items()) for x in probe)
        by_the_batch = len(asked) - len(probe)  # (then predict_one's own, for each row)
        assert len(checks) < 3 or by_the_batch <= len(probe) // 20 + unlearned
        checks.append(by_the_batch)
        asked.clear()

    asked.clear()
    assert learn_checking(predictor, model, data[:1200], probe, 97, decided_at_once) > 10


@needs(FAST_KNN)
def test_a_text_the_encoder_has_not_learned_gives_its_row_other_features():
    """`one-hot-text` gives a row whose text it has not learned an indicator of its own, which
    a kNN's distance counts: with it, the row's squared distances are 2 + (a − a_i)², and the
    two "v" points (4 + 2 each, by hand) outvote the "u" point (2): 2/√6 > 1/√2. An array row
    with that text's block all zeros would give 1 + (a − a_i)², and "u" would win (1 > 2/√5)."""
    model = ModelSpec.parse('one-hot-text | knn{"n_neighbors": 3, "window_size": 3}').build()
    for a, y in [(0.0, "u"), (2.0, "v"), (-2.0, "v")]:
        model.learn_one({"a": a, "c": "p"}, y)
    predictor = batch_predictor(model)
    xs = [{"a": 0.0, "c": "p"}, {"a": 0.0, "c": "r"}]
    assert all(predictor.encode(x) is not None for x in xs)
    assert answers(predictor, model, xs) == ["u", "v"]


def test_a_binary_model_on_text_labels_equals_predict_one_while_learning():
    """A logistic regression on classes "yes"/"no" (`BinaryLabels`): its batch answers are its
    own predict_one's, mapped, at every stage, before the other class is known too (no
    prediction)."""
    from transforms.models.binary import BinaryLabels

    data = list(itertools.islice(synth.SEA(seed=5, noise=0.2), 1500))
    data = [(x, "yes" if y else "no") for x, y in data]
    first = [i for i, (_, y) in enumerate(data) if y == "yes"][:300]  # only "yes" at first
    data = [data[i] for i in first] + [p for i, p in enumerate(data) if i not in set(first)]
    model = BinaryLabels(ModelSpec.parse("standard-scaler | logistic-regression").build(),
                         "yes", None)
    predictor = batch_predictor(model)
    assert type(predictor).__name__ == "BinaryLabelsBatch"
    probe = [x for x, _ in data[-300:]]
    seen = set()
    learn_checking(predictor, model, data[:1200], probe, 97, lambda: seen.add(model.negative))
    assert seen == {None, "no"}


@pytest.mark.parametrize("spec", ["one-hot-text | gaussian-nb",
                                  "one-hot-text | standard-scaler | gaussian-nb"])
def test_a_pipelines_initial_and_final_predictions_are_its_own(spec):
    """A pipeline ending in GaussianNB predicts an instance through its transformers, then
    the last step's single-row fast path: the class of `predict_one` and the probabilities of
    `predict_proba_one` (within a few units in the last place), at every stage; while river's
    steps learn as they predict, the pipeline answers itself."""
    from river import compose

    from transforms.models.naive_bayes_batch import fast_predict_one, predict_with_proba

    data = list(itertools.islice(_with_text(_sparse(synth.Agrawal(classification_function=2,
                                                                   seed=3))), 900))
    model = ModelSpec.parse(spec).build()
    predict, scored = fast_predict_one(model), predict_with_proba(model)
    assert type(predict.args[1]).__name__ == "ManyClassesGaussianNB"
    for i, (x, y) in enumerate(data):
        if i % 7 == 0:
            assert predict(x) == model.predict_one(x)
            label, proba = scored(x)
            proba, river_proba = proba or {}, model.predict_proba_one(x)  # (untrained: none)
            assert label == model.predict_one(x) and proba.keys() == river_proba.keys()
            assert all(abs(proba[c] - river_proba[c]) < 1e-12 for c in proba)
        model.learn_one(x, y)
    asked = []
    own = model.predict_one
    model.predict_one = lambda x, **kw: asked.append(x) or own(x, **kw)
    with compose.learn_during_predict():
        fast_predict_one(model)(data[0][0])
    assert asked == [data[0][0]]


def test_text_features_are_one_hot_encoded_as_rivers_encoder_does_and_learned_from():
    """one-hot-text gives a row's text features the indicators river's `OneHotEncoder` gives
    them (0 for each value seen before, 1 for the row's) and leaves numbers as they are; with
    those zeros a Hoeffding tree learns a label that only a text column tells (without them
    every indicator it saw was 1 and it stayed at the majority rate)."""
    import random

    from river import preprocessing

    rng = random.Random(4)
    ours, rivers = ModelSpec.parse("one-hot-text").build(), preprocessing.OneHotEncoder()
    for _ in range(200):
        text = {"colour": rng.choice("rgbk"), "shop": rng.choice(["a", "b", "c"])}
        x = {**text, "amount": rng.random()}
        assert ours.transform_one(x) == {**rivers.transform_one(text), "amount": x["amount"]}
        ours.learn_one(x)
        rivers.learn_one(text)
    model = ModelSpec.parse("one-hot-text | hoeffding-tree").build()
    correct = 0
    for i in range(6000):  # (the tree's Hoeffding bound lets it split after ~3 500)
        x = {"colour": rng.choice("rgbk"), "amount": rng.random()}
        y = x["colour"] in "rg"
        correct += i >= 5000 and model.predict_one(x) == y
        model.learn_one(x, y)
    assert correct / 1000 > 0.99


def test_knn_keeps_its_window_in_step_with_rivers():
    """The window's matrix follows river's deque: a few new points (the oldest dropped), more
    new points than the window holds, and a copy of the model (other entries): each time the
    answers are predict_one's."""
    import copy

    data = list(itertools.islice(synth.Hyperplane(seed=2, n_features=4), 900))
    model = ModelSpec.parse('knn{"window_size": 50, "n_neighbors": 3}').build(None)
    predictor = batch_predictor(model)
    probe = [x for x, _ in data[-100:]]
    at = 0
    for step in (1, 7, 3, 49, 50, 51, 120, 2):
        for x, y in data[at:at + step]:
            model.learn_one(x, y)
        at += step
        assert answers(predictor, model, probe) == [model.predict_one(x) for x in probe]
    model = copy.deepcopy(model)
    model.learn_one(*data[at])
    assert answers(predictor, model, probe) == [model.predict_one(x) for x in probe]


@needs(FAST_KNN)
@pytest.mark.parametrize("aggregation", ["mean", "median", "weighted_mean"])
def test_knn_regressor_batch_equals_predict_one_bit_for_bit(aggregation):
    data = list(itertools.islice(synth.Friedman(seed=4), 900))
    model = ModelSpec.parse(f'knn-regressor{{"window_size": 150, "aggregation_method": '
                            f'"{aggregation}"}}').build(None)
    predictor = batch_predictor(model)
    assert type(predictor).__name__ == "KNNRegressorBatch"
    probe = [x for x, _ in data[-200:]] + [data[3][0]]  # ... and a point of the window
    learn_checking(predictor, model, data[:700], probe, 61)


@pytest.mark.parametrize("name", ["no-change-regressor", "mean-regressor"])
def test_regression_baselines_answer_every_row_with_predict_ones_value(name):
    data = list(itertools.islice(synth.Friedman(seed=4), 300))
    model = ModelSpec.parse(name).build(None)
    predictor = batch_predictor(model)
    assert type(predictor).__name__ == "ConstantBatch"
    probe = [x for x, _ in data[-50:]]
    assert answers(predictor, model, probe) == [None] * 50  # nothing before the first label
    learn_checking(predictor, model, data[:250], probe, 17)


def test_scaled_rows_are_the_scalers_own_values_bit_for_bit():
    """Rows scaled as arrays equal river's `transform_one`, double for double (kNN's distances
    on them must be river's exactly)."""
    from river import preprocessing

    from transforms.models.batch import scaled_rows

    data = [x for x, _ in itertools.islice(synth.Friedman(seed=6), 400)]
    names = tuple(data[0])
    first, second = preprocessing.StandardScaler(), preprocessing.StandardScaler()
    for x in data[:300]:
        first.learn_one(x)
        second.learn_one(first.transform_one(x))
    rows = np.array([[x[n] for n in names] for x in data[300:]])
    ours = scaled_rows([first, second], names, rows)
    theirs = [[second.transform_one(first.transform_one(x))[n] for n in names]
              for x in data[300:]]
    assert ours.tolist() == theirs


@needs(FAST_LINEAR_REGRESSION)
def test_linear_regression_batch_equals_predict_one_bit_for_bit():
    data = list(itertools.islice(synth.Friedman(seed=4), 900))
    model = linear_model.LinearRegression()
    predictor = batch_predictor(model)
    assert type(predictor).__name__ == "LinearRegressionBatch"
    learn_checking(predictor, model, data[:700], [x for x, _ in data[-200:]], 61)


NOMINAL = ["elevel", "car", "zipcode"]


@pytest.mark.parametrize("make", [
    lambda: tree.HoeffdingTreeClassifier(grace_period=50, nominal_attributes=NOMINAL),
    lambda: tree.HoeffdingAdaptiveTreeClassifier(grace_period=50, seed=1,
                                                 nominal_attributes=NOMINAL),
    lambda: tree.HoeffdingTreeRegressor(grace_period=50, nominal_attributes=NOMINAL)],
    ids=["tree", "adaptive-tree", "tree-regressor"])
def test_rows_below_a_branch_without_their_value_follow_the_most_traversed_path(make):
    """A multiway branch on a category has a child for each value it has seen; a row with
    another value goes down the branch's most traversed path, which changes as the tree
    learns, and to a child of its own once the tree sees its value. The stamped path gives
    predict_one's answer to every row at every stage."""
    data = drifting_agrawal(5000, position=1500)
    model = make()
    regression = isinstance(model, tree.HoeffdingTreeRegressor)
    probe = [x for x, _ in data[-300:]]
    stamped = Stamped(batch_predictor(model), probe)
    for i, (x, y) in enumerate(data[:4700]):
        if i % 23 == 0:
            assert stamped.answers(model) == [model.predict_one(x) for x in probe], i
        model.learn_one(x, float(y) if regression else y)


@pytest.mark.parametrize("leaf_prediction, n_rows", [("adaptive", 300), ("model", 300),
                                                     ("mean", 300), ("adaptive", 20)])
def test_tree_regressor_batch_equals_predict_one_bit_for_bit(leaf_prediction, n_rows):
    """The stamped path, the same rows kept across labels as the engine keeps them: each value
    is predict_one's at every stage of the tree's growth, and the tree answers none itself."""
    data = list(itertools.islice(synth.Friedman(seed=4), 4000))
    model = tree.HoeffdingTreeRegressor(grace_period=50, leaf_prediction=leaf_prediction)
    predictor = batch_predictor(model)
    assert type(predictor).__name__ == "HoeffdingTreeRegressorBatch"
    probe = [x for x, _ in data[-n_rows:]]
    stamped = Stamped(predictor, probe)
    for i, (x, y) in enumerate(data[:3700]):
        if i % 13 == 0 or i < 3:
            assert stamped.answers(model) == [model.predict_one(x) for x in probe]
        model.learn_one(x, y)
    assert model.n_leaves > 4
    asked = left_to_predict_one(predictor, model, probe)
    assert not asked or (leaf_prediction != "mean" and not FAST_LINEAR_REGRESSION)


ENSEMBLES = {
    "arf": lambda: ModelSpec.parse('adaptive-random-forest{"n_models": 4, "grace_period": 50}'
                                   ).build(),
    "bagging": lambda: ensemble.BaggingClassifier(tree.HoeffdingTreeClassifier(grace_period=50),
                                                  n_models=4, seed=1),
    "leveraging-bagging": lambda: ensemble.LeveragingBaggingClassifier(
        tree.HoeffdingTreeClassifier(grace_period=50), n_models=4, seed=1),
    "adwin-bagging-of-hat": lambda: ensemble.ADWINBaggingClassifier(
        tree.HoeffdingAdaptiveTreeClassifier(grace_period=50, seed=1), n_models=3, seed=1),
    # Each SRP tree learns a subspace of the features; a drift resets it on a new one.
    "srp": lambda: ensemble.SRPClassifier(tree.HoeffdingTreeClassifier(grace_period=50),
                                          n_models=4, seed=1),
    "srp-subspaces-of-hat": lambda: ensemble.SRPClassifier(
        tree.HoeffdingAdaptiveTreeClassifier(grace_period=50, seed=1), n_models=3,
        subspace_size=0.4, training_method="subspaces", seed=2),
}


def ensemble_trees(model) -> list:
    """The trees that vote: an SRP member's tree is its `model`."""
    return [member.model for member in model] if isinstance(model, ensemble.SRPClassifier) \
        else list(model)


@pytest.mark.parametrize("name", sorted(ENSEMBLES))
def test_tree_ensemble_batch_follows_trees_replaced_after_a_drift(name):
    """After a drift, ARF swaps trees for their background learners or new ones, leveraging
    bagging resets its worst, SRP a tree on a new subspace: the batch answers with the trees
    the ensemble has, each time predict_one's, with each tree's own batch, leaving few rows to
    predict_one."""
    data = drifting_agrawal(2600, position=800)
    model = ENSEMBLES[name]()
    predictor = batch_predictor(model)
    assert type(predictor).__name__ == "TreeEnsembleBatch"
    probe = [x for x, _ in data[-200:]]
    trees = set()
    learn_checking(predictor, model, data[:2400], probe, 101,
                   lambda: trees.update(id(tree) for tree in ensemble_trees(model)))
    assert {type(batch).__name__ for _, batch, _ in predictor._trees.values()} <= \
        {"HoeffdingTreeBatch", "HoeffdingAdaptiveTreeBatch"}
    if name in ("arf", "leveraging-bagging", "srp"):
        assert len(trees) > len(model)  # trees were replaced
    assert len(left_to_predict_one(predictor, model, probe)) <= len(probe) // 20


REGRESSOR_ENSEMBLES = {
    "arf-median": lambda: forest.ARFRegressor(n_models=4, seed=1, grace_period=50),
    "arf-weighted-mean": lambda: forest.ARFRegressor(n_models=4, seed=1, grace_period=50,
                                                     aggregation_method="mean",
                                                     disable_weighted_vote=False),
    "srp-mean": lambda: ensemble.SRPRegressor(tree.HoeffdingTreeRegressor(grace_period=50),
                                              n_models=4, seed=1),
    "srp-weighted": lambda: ensemble.SRPRegressor(tree.HoeffdingTreeRegressor(grace_period=50),
                                                  n_models=4, seed=1, disable_weighted_vote=False),
    "srp-median-of-means": lambda: ensemble.SRPRegressor(
        tree.HoeffdingTreeRegressor(grace_period=50, leaf_prediction="mean"), n_models=5, seed=1,
        aggregation_method="median"),
    "bagging": lambda: ensemble.BaggingRegressor(tree.HoeffdingTreeRegressor(grace_period=50),
                                                 n_models=3, seed=1),
    "bagging-of-adaptive-trees": lambda: ensemble.BaggingRegressor(
        tree.HoeffdingAdaptiveTreeRegressor(grace_period=50, seed=1), n_models=3, seed=1),
}


@pytest.mark.parametrize("name", sorted(REGRESSOR_ENSEMBLES))
def test_tree_regressor_ensemble_batch_gives_predict_ones_values_through_a_drift(name):
    """The forest's, SRP's and bagging's regressors: each tree's values from its leaves,
    aggregated (mean, weighted mean, median, `statistics.mean`) to predict_one's value bit for
    bit at every stage, trees replaced after a drift in Friedman's function, and no row left to
    predict_one."""
    data = drifting_friedman(2400, position=900)
    model = REGRESSOR_ENSEMBLES[name]()
    predictor = batch_predictor(model)
    assert type(predictor).__name__ == "TreeRegressorEnsembleBatch"
    probe = [x for x, _ in data[-200:]]
    learn_checking(predictor, model, data[:2200], probe, 101)
    assert not left_to_predict_one(predictor, model, probe)


@pytest.mark.parametrize("pred_type, ordered", [("adaptive", True), ("mean", True),
                                                 ("model", False), ("adaptive", False)])
def test_amrules_batch_gives_predict_ones_values_through_a_drift(pred_type, ordered):
    """AMRules' rules tested on all rows at once: the first covering rule's value (ordered) or
    the mean of the covering rules' values, else the default rule's, each a mean or a linear
    model's w·x + b, as predict_one gives them bit for bit at every stage, rules added and
    dropped after a drift in Friedman's function, and no row left to predict_one."""
    data = drifting_friedman(4000, position=1500)
    model = rules.AMRules(n_min=30, delta=0.05, tau=0.1, pred_type=pred_type,
                          ordered_rule_set=ordered)
    predictor = batch_predictor(model)
    assert type(predictor).__name__ == "AMRulesBatch"
    probe = [x for x, _ in data[-300:]]
    rules_seen = []
    learn_checking(predictor, model, data[:3700], probe, 61,
                   lambda: rules_seen.append(len(model._rules)))
    assert max(rules_seen) >= 3
    # Rows on a rule's thresholds (x ≤ t holds there, x > t does not), covered by the rule.
    on_edges = [{**x, **{literal.on: literal.at + 0.01 * literal.neg
                         for literal in rule.literals}}
                for rule in model._rules.values() for x in probe[:5]]
    assert sum(any(rule.covers(x) for rule in model._rules.values()) for x in on_edges) > 10
    assert answers(predictor, model, on_edges) == [model.predict_one(x) for x in on_edges]
    assert not left_to_predict_one(predictor, model, probe)


@pytest.mark.parametrize("leaf_prediction", ["mean", "model", "adaptive"])
def test_adaptive_tree_regressor_batch_follows_alternate_trees_through_a_drift(leaf_prediction):
    """After a drift in Friedman's function the adaptive tree regressor grows alternate trees
    and switches to them; a row that passes one is answered by predict_one (the mean of the
    leaves it reaches), the others with their leaf's value: predict_one's, bit for bit, at
    every stage, the same rows kept across labels as the engine keeps them."""
    data = drifting_friedman(5000, position=1500)
    model = tree.HoeffdingAdaptiveTreeRegressor(grace_period=50, seed=1,
                                                leaf_prediction=leaf_prediction)
    predictor = batch_predictor(model)
    assert type(predictor).__name__ == "HoeffdingAdaptiveTreeRegressorBatch"
    probe = [x for x, _ in data[-300:]]
    with_alternates = stamped_through_a_drift(predictor, model, data[:4700], probe)
    assert with_alternates > 10 and model.n_alternate_trees > 0


@pytest.mark.parametrize("leaf_prediction, n_rows", [("nba", 300), ("mc", 300), ("nba", 20)])
def test_hat_batch_follows_alternate_trees_through_a_drift(leaf_prediction, n_rows):
    """After a drift HAT grows alternate trees and switches to them or prunes them; a row
    that passes one is answered with both trees' votes. The stamped path gives predict_one's
    answer for every row at every stage, the same rows kept across labels as the engine keeps
    them (20 rows: each routed by river's walk, not as arrays)."""
    data = drifting_agrawal(5000, position=1500)
    model = tree.HoeffdingAdaptiveTreeClassifier(grace_period=50, seed=1,
                                                 leaf_prediction=leaf_prediction)
    predictor = batch_predictor(model)
    probe = [x for x, _ in data[-n_rows:]]
    with_alternates = stamped_through_a_drift(predictor, model, data[:4700], probe)
    assert with_alternates > 10 and model.n_switch_alternate_trees + \
        model.n_pruned_alternate_trees > 0


@pytest.mark.parametrize("spec", ['knn{"window_size": 100}', "knn-regressor",
                                  'adaptive-random-forest{"n_models": 3}',
                                  'hoeffding-adaptive-tree{"grace_period": 50}',
                                  'hoeffding-tree-regressor{"grace_period": 50}'])
def test_a_saved_predictor_keeps_no_copy_of_the_model_and_answers_after(spec):
    """An engine's saved state holds its predictor: its caches of the model (kNN's window, the
    forest's trees) are left out, and made again when it next predicts."""
    import pickle

    data = list(itertools.islice(synth.SEA(seed=5), 400))
    model = ModelSpec.parse(spec).build(None)
    predictor = batch_predictor(model)
    probe = [x for x, _ in data[-50:]]
    for x, y in data[:300]:
        model.learn_one(x, y)
    assert answers(predictor, model, probe) == [model.predict_one(x) for x in probe]
    saved = pickle.dumps(predictor)
    assert len(saved) < 2_000
    predictor = pickle.loads(saved)
    for x, y in data[300:340]:
        model.learn_one(x, y)
    assert answers(predictor, model, probe) == [model.predict_one(x) for x in probe]


def test_one_hot_text_encodes_as_a_plain_loop_does():
    """Rows of two text features (one sometimes missing) and a number, learned and encoded
    in turn: each encoding is the one a plain loop over the values seen so far gives."""
    from transforms.models.encoding import OneHotText

    rng = np.random.default_rng(4)
    encoder, seen = OneHotText(), {}
    for _ in range(300):
        x = {"amount": float(rng.normal()), "shop": f"s{rng.integers(12)}",
             "country": None if rng.random() < 0.2 else str(rng.choice(["DE", "FR", "IT"]))}
        expected = {}
        for k, v in x.items():
            if isinstance(v, str):
                for known in seen.get(k, []):
                    expected[f"{k}_{known}"] = 0
                expected[f"{k}_{v}"] = 1
            elif v is not None:
                expected[k] = v
        encoded = encoder.transform_one(x)
        assert encoded == expected and list(encoded) == list(expected)
        if rng.random() < 0.8:  # (some rows are encoded before they are learned)
            encoder.learn_one(x)
            for k, v in x.items():
                if isinstance(v, str) and v not in seen.setdefault(k, []):
                    seen[k].append(v)
