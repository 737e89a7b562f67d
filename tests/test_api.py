"""The public entries: `EvaluateDelayed` inside a pipeline of one's own and `evaluate_locally`
(no Beam) give the numbers `run` writes."""

import json
import math
import re

import apache_beam as beam
import pandas as pd
import pytest
from apache_beam.testing.util import assert_that, equal_to

from pipelines import EvaluateDelayed, RunConfig, evaluate, evaluate_locally
from pipelines.job import run
from runners import make_runner

STREAM = 'sea=synth:SEA{"n": 1200, "seed": 4, "noise": 0.1}'
OPTIONS = dict(delay="50", repredict="every_k_labels:5", bins=10, windows=[200],
               fadings=[0.99], time_windows=["300/100"], curve_every=250)
KEY = ["category", "bin", "alpha", "window", "metric", "class", "predicted"]


def _rows(frame: pd.DataFrame) -> dict:
    """{measure: (value, n)}, NaN as None so that equal NaNs compare equal."""
    out = {}
    for r in frame.to_dict("records"):
        key = tuple(None if v is None or isinstance(v, float) and math.isnan(v) else v
                    for v in (r[k] for k in KEY))
        value = None if isinstance(r["value"], float) and math.isnan(r["value"]) else r["value"]
        out[key] = (value, int(r["n"]))
    return out


def test_evaluate_locally_gives_the_numbers_of_run(tmp_path):
    summary = run(RunConfig(streams=[STREAM], models=["gaussian-nb"], out=str(tmp_path),
                            runner="direct", drift_on="none", quiet=True,
                            log_predictions="none", **OPTIONS))
    local = evaluate_locally(STREAM, "gaussian-nb", OPTIONS["delay"],
                             repredict=OPTIONS["repredict"], bins=OPTIONS["bins"],
                             windows=OPTIONS["windows"], fadings=OPTIONS["fadings"],
                             time_windows=OPTIONS["time_windows"],
                             curve_every=OPTIONS["curve_every"])
    ours, theirs = _rows(local.summary), _rows(summary)
    assert len(theirs) > 300 and ours == theirs  # every measure, bit for bit
    curves = pd.read_parquet(tmp_path / "curves.parquet")
    assert len(local.curves) == len(curves)
    assert sorted(local.curves["value"].fillna(-1).tolist()) == \
        sorted(curves["value"].fillna(-1).tolist())
    assert local.counts["labelled"] == 1200 and not local.dead_letters
    # The counts are the manifest's, named as there (no internal counter).
    (counted,) = json.loads((tmp_path / "manifest.json").read_text())["counts"]
    assert local.counts == {k: v for k, v in counted.items() if k not in ("stream", "model")}
    # A river estimator itself, as from a notebook: the same numbers.
    from river import naive_bayes

    again = evaluate_locally(STREAM, naive_bayes.GaussianNB(), OPTIONS["delay"], bins=10)
    plain = evaluate_locally(STREAM, "gaussian-nb", OPTIONS["delay"], bins=10)
    assert _rows(again.summary) == _rows(plain.summary)


def test_evaluate_delayed_composes_with_a_sink_of_ones_own(tmp_path):
    config = RunConfig(streams=[STREAM], models=["no-change", "gaussian-nb"],
                       out=str(tmp_path), runner="direct", quiet=True, **OPTIONS)
    expected = run(config)
    expected = expected[expected["category"].isin(["initial", "final"])
                        & (expected["window"] == "cumulative")]
    want = sorted((r["model"], r["category"], r["metric"], r["value"], r["n"])
                  for r in expected.to_dict("records") if not math.isnan(r["value"]))

    def check(rows):
        got = sorted((r["model"], r["category"], r["metric"], r["value"], r["n"]) for r in rows
                     if r["category"] in ("initial", "final") and r["window"] == "cumulative"
                     and not math.isnan(r["value"]))
        assert got == want

    with beam.Pipeline(runner=make_runner("direct")) as p:
        results = p | EvaluateDelayed(config)
        assert_that(results["summary"], check)
        assert_that(results["counts"] | beam.Map(lambda kv: kv[1]["labelled"])
                    | beam.CombineGlobally(sum), equal_to([2400]), label="AllLabelled")


def test_a_backfill_in_a_pipeline_of_ones_own_shuffles_the_log_as_data(tmp_path):
    """Without a spill folder (`run` gives one) the log's rows travel as data: the same
    per-class rows and counts as the backfill `run` makes."""
    run(RunConfig(streams=[STREAM], models=["nb=gaussian-nb"], out=str(tmp_path / "run"),
                  runner="direct", quiet=True, **OPTIONS))
    backfill = RunConfig(streams=[STREAM], models=[], out=str(tmp_path / "backfill"),
                         runner="direct", quiet=True,
                         predictions=str(tmp_path / "run" / "predictions.parquet"), **OPTIONS)
    expected = run(backfill)
    def key(r):  # a missing predicted class is None in rows, NaN in a DataFrame
        predicted = r["predicted"] if isinstance(r["predicted"], str) else ""
        bin_ = -1 if r["bin"] is None or pd.isna(r["bin"]) else int(r["bin"])
        return r["category"], r["window"], bin_, r["metric"], r["class"], predicted, r["value"]

    per_class = expected[expected["class"].notna()]
    want = sorted(key(r) for r in per_class.to_dict("records") if not math.isnan(r["value"]))

    def check(rows):
        got = sorted(key(r) for r in rows
                     if r["class"] is not None and not math.isnan(r["value"]))
        assert len(got) > 50 and got == want

    with beam.Pipeline(runner=make_runner("direct")) as p:
        results = p | EvaluateDelayed(backfill)  # no spill folder
        assert_that(results["summary"], check)



def _params(model):
    """river's own account of a model's parameters (nested models as (class, params))."""
    return model._get_params()


def test_river_estimators_built_in_python_are_the_models_their_specs_build():
    from river import (compose, ensemble, forest, linear_model, multiclass, optim,
                       preprocessing, tree)

    from transforms.models.specs import ModelSpec, ModelSpecError

    models = {
        "tree": tree.HoeffdingTreeClassifier(grace_period=50, leaf_prediction="mc"),
        "bag": ensemble.BaggingClassifier(tree.HoeffdingTreeClassifier(delta=1e-5),
                                          n_models=3, seed=7),
        "lr": preprocessing.StandardScaler() | linear_model.LogisticRegression(
            optimizer=optim.Adam(0.05), l2=0.1),
        "arf": forest.ARFClassifier(n_models=4, seed=3),
    }
    config = RunConfig(streams=[STREAM], models=models, out="unused")
    assert [m.split("=")[0] for m in config.models] == list(models)
    for spec, model in zip(config.models, models.values()):
        built = ModelSpec.parse(spec).build()
        if isinstance(model, compose.Pipeline):
            assert [_params(s) for s in built.steps.values()] == \
                [_params(s) for s in model.steps.values()]
        else:
            assert _params(built) == _params(model)
    # The nested form by hand, as a command line gives it.
    bag = ModelSpec.parse('river.ensemble.BaggingClassifier{"model": {"river.tree.'
                          'HoeffdingTreeClassifier": {"grace_period": 30}}}').build()
    assert bag.model.grace_period == 30 and bag.seed == 42  # (seeded, as every spec)
    # What JSON cannot hold is one clear error; a function's says what to do instead.
    with pytest.raises(ModelSpecError, match="model FuncTransformer, parameter func: the "
                                             "function 'len' cannot be written as a spec, "
                                             ".*; compute what it gives into the stream's "
                                             "features before evaluating, or make it a "
                                             "transformer class"):
        RunConfig(streams=[STREAM], models=[compose.FuncTransformer(len)], out="unused")
    inner = preprocessing.StandardScaler() | linear_model.LogisticRegression(l2=0.1)
    spec, = RunConfig(streams=[STREAM], models=[multiclass.OneVsRestClassifier(inner)],
                      out="unused").models
    assert [_params(s) for s in ModelSpec.parse(spec).build().classifier.steps.values()] == \
        [_params(s) for s in inner.steps.values()]
    # A class given unbuilt, or an object of a class of one's own that is no river estimator,
    # is told what to give instead.
    with pytest.raises(ModelSpecError, match=r"model HoeffdingTreeClassifier is a class, not a "
                                             r"model: give it built, HoeffdingTreeClassifier\(\)"):
        RunConfig(streams=[STREAM], models={"tree": tree.HoeffdingTreeClassifier}, out="unused")

    class Mine:
        def learn_one(self, x, y):
            pass

        def predict_one(self, x):
            return True

    with pytest.raises(ModelSpecError, match="make its class a river.base.Classifier or "
                                             "river.base.Regressor"):
        RunConfig(streams=[STREAM], models={"mine": Mine()}, out="unused")


def test_models_built_from_positional_arguments_score_as_river_does():
    """river's feature selection and unions (compose.Select(0, 1), Discard(2), a + b) take
    their parts as positional arguments, which a spec holds under "*": each was refused
    ("takes positional arguments, which a spec cannot hold", or a union built wrong)."""
    from river import compose, naive_bayes, preprocessing
    from river import linear_model as lm

    from transforms.models.specs import ModelSpec, spec_of

    models = {"select": compose.Select(0, 1) | naive_bayes.GaussianNB(),
              "discard": compose.Discard(2) | preprocessing.StandardScaler()
              | lm.LogisticRegression(),
              "union": (preprocessing.StandardScaler() + preprocessing.MinMaxScaler())
              | lm.LogisticRegression()}
    assert spec_of(models["select"]) == \
        'river.compose.Select{"*": [0, 1]} | river.naive_bayes.GaussianNB'
    assert spec_of(models["union"]).startswith(
        'river.compose.TransformerUnion{"*": [{"river.preprocessing.StandardScaler": {}}, '
        '{"river.preprocessing.MinMaxScaler": {}}]}')
    union = ModelSpec.parse(spec_of(models["union"])).build()
    assert [type(t).__name__ for t in list(union.steps.values())[0].transformers.values()] == \
        ["StandardScaler", "MinMaxScaler"]
    for name, model in models.items():
        _initial_accuracy_is_rivers(model, name, n=300, seed=2, delay=5)


def _initial_accuracy_is_rivers(model, name: str, n: int, seed: int, delay: int) -> None:
    """`model`'s initial accuracy on SEA equals river's `progressive_val_score`."""
    from river import datasets, metrics
    from river import evaluate as river_evaluate

    result = evaluate_locally(f'synth:SEA{{"n": {n}, "seed": {seed}}}', model, delay)
    ours = result.summary.query("category == 'initial' and metric == 'accuracy' "
                                "and window == 'cumulative'")["value"].item()
    theirs = river_evaluate.progressive_val_score(
        datasets.synth.SEA(seed=seed).take(n), model.clone(), metrics.Accuracy(), delay=delay)
    assert ours == theirs.get(), name


def test_pipelines_and_dicts_keyed_by_class_inside_parameters_score_as_river_does():
    """A pipeline as a model's parameter (bagging over a scaled logistic regression, a vote
    with a pipeline among its models, a union of pipelines), and a dict keyed by classes that
    are no text (RandomUnderSampler's desired_dist, {False: 0.5, True: 0.5}), were refused: river
    gives a pipeline parameter as its steps' parameters without their classes ("a pipeline
    inside a parameter cannot be written as a spec"), and JSON's keys are text."""
    from river import compose, ensemble, imblearn, linear_model, naive_bayes, preprocessing

    from transforms.models.specs import ModelSpec, spec_of

    def scaled():
        return preprocessing.StandardScaler() | linear_model.LogisticRegression()

    models = {"bagging": ensemble.BaggingClassifier(scaled(), n_models=3, seed=1),
              "voting": ensemble.VotingClassifier([naive_bayes.GaussianNB(), scaled()]),
              "union": compose.TransformerUnion(compose.Select(0) | preprocessing.StandardScaler(),
                                                compose.Select(1) | preprocessing.MinMaxScaler())
              | linear_model.LogisticRegression(),
              "under": imblearn.RandomUnderSampler(naive_bayes.GaussianNB(), seed=3,
                                                   desired_dist={False: 0.5, True: 0.5})}
    for name, model in models.items():
        _initial_accuracy_is_rivers(model, name, n=300, seed=2, delay=5)
    under = ModelSpec.parse(spec_of(models["under"])).build()
    assert under.desired_dist == {False: 0.5, True: 0.5}


def test_ensembles_of_a_list_of_models_score_as_river_does():
    """river keeps a list of models (VotingClassifier's, StackingClassifier's) as the objects
    themselves, not as (class, parameters): such an ensemble built in Python was refused
    ("GaussianNB () cannot be written as JSON")."""
    from river import ensemble, linear_model, naive_bayes, tree

    models = {"voting": ensemble.VotingClassifier([naive_bayes.GaussianNB(),
                                                   tree.HoeffdingTreeClassifier(grace_period=40),
                                                   linear_model.LogisticRegression()]),
              "stacking": ensemble.StackingClassifier(
                  [naive_bayes.GaussianNB(), tree.HoeffdingTreeClassifier()],
                  meta_classifier=linear_model.LogisticRegression())}
    for name, model in models.items():
        _initial_accuracy_is_rivers(model, name, n=400, seed=5, delay=7)


def test_a_random_engine_a_model_makes_for_itself_is_seeded():
    """river's kNN left without an engine makes an unseeded approximate one (SWINN): built from
    one spec, two models that learn the same stream predict alike, as they would with the
    engine seeded by hand."""
    import itertools

    from river import datasets, neighbors

    from transforms.models.specs import ModelSpec

    data = list(itertools.islice(datasets.synth.Friedman(seed=2), 700))

    def predictions(model):
        out = []
        for x, y in data:
            out.append(model.predict_one(x))
            model.learn_one(x, y)
        return out

    spec = ModelSpec.parse("river.neighbors.KNNRegressor")
    by_hand = predictions(neighbors.KNNRegressor(engine=neighbors.SWINN(
        dist_func=neighbors.KNNRegressor().engine.dist_func, seed=42)))
    assert predictions(spec.build()) == predictions(spec.build()) == by_hand


def test_amrules_learns_the_same_rules_wherever_its_new_rules_land_in_memory(monkeypatch):
    """river's AMRules keyed a new rule by its address: one made where a replaced rule had been
    took that rule's key and replaced a live rule. Here every new rule is made to share one
    address-key (RegRule.__hash__ = 0); built from its spec, the model still learns what river's
    AMRules learns when no address is ever reused (every rule it made kept alive)."""
    import itertools

    from river.datasets import synth
    from river.rules import amrules

    from transforms.models.specs import ModelSpec

    data = list(itertools.islice(synth.Friedman(seed=1), 1500))

    def predictions(model):
        out = []
        for x, y in data:
            out.append(model.predict_one(x))
            model.learn_one(x, y)
        return out, len(model._rules)

    class KeepsEveryRule(dict):  # (a freed rule's address can then never be reused)
        made = []

        def __setitem__(self, key, rule):
            self.made.append(rule)
            super().__setitem__(key, rule)

    spec = ModelSpec.parse('river.rules.AMRules{"n_min": 30, "delta": 0.05, "tau": 0.1}')
    built = spec.build()
    with monkeypatch.context() as m:
        oracle = spec.build()
        m.setattr(amrules, "hash", hash, raising=False)  # (river's own keys)
        oracle._rules = KeepsEveryRule()
        expected = predictions(oracle)
    monkeypatch.setattr(amrules.RegRule, "__hash__", lambda rule: 0)
    assert predictions(built) == expected and expected[1] > 3


def test_river_datasets_and_generators_built_in_python_are_the_streams_their_specs_give():
    """Each object's spec yields the (x, y) pairs the object itself yields; the generator's
    size is its own or `n`; what no spec can say is one clear error."""
    import itertools

    from river import datasets
    from river.datasets import synth

    from transforms.errors import ConfigError
    from transforms.streams.generators import river_stream, stream_spec_of
    from transforms.streams.sources import StreamSpec

    objects = {"sea": (synth.SEA(variant=2, noise=0.1, seed=7), 300),
               "agrawal": (synth.Agrawal(classification_function=4, seed=3), 300),
               "rbf": (synth.RandomRBF(seed_model=1, seed_sample=2, n_classes=3), 300),
               "led": (synth.LED(seed=5, noise_percentage=0.2, irrelevant_features=True), 300),
               "phishing": (datasets.Phishing(), None)}
    config = RunConfig(streams={name: obj for name, (obj, _) in objects.items()},
                       models=["majority"], out="unused")
    assert [s.split("=")[0] for s in config.streams] == list(objects)
    for text, (name, (obj, n)) in zip(config.streams, objects.items()):
        spec = StreamSpec.parse(text)
        assert spec.name == name
        given = list(itertools.islice(river_stream(spec), n))
        assert given == list(itertools.islice(obj, n)), name
    assert len(list(river_stream(StreamSpec.parse(stream_spec_of(datasets.Phishing()))))) == 1250
    sized = StreamSpec.parse(stream_spec_of(synth.SEA(seed=1), n=40, positive=True))
    assert len(list(river_stream(sized))) == 40 and sized.options["positive"] is True
    assert len(list(river_stream(StreamSpec.parse(stream_spec_of(synth.SEA()))))) == 10_000
    longer = synth.AnomalySine(n_samples=12_000, seed=1)  # a finite generator's own size
    assert len(list(river_stream(StreamSpec.parse(stream_spec_of(longer))))) == 12_000
    for wrong in (datasets.Phishing().take(10), [({"a": 1.0}, True)],
                  synth.ConceptDriftStream()):
        with pytest.raises(ConfigError, match="stream"):
            RunConfig(streams=wrong, models=["majority"], out="unused")
    with pytest.raises(ConfigError, match=r"^stream 5 \(int\): a stream is a spec"):
        RunConfig(streams=[5], models=["majority"], out="unused")
    # The class where one of its streams was meant.
    for cls, made in ((datasets.Phishing, "datasets.Phishing()"), (synth.SEA, "synth.SEA()")):
        with pytest.raises(ConfigError) as error:
            RunConfig(streams=[cls], models=["majority"], out="unused")
        assert str(error.value) == f"stream {cls.__name__} is a class; give one of its " \
            f"streams, {made}"


def test_a_river_generator_evaluated_from_python_scores_as_river_does(tmp_path):
    """`evaluate` with river objects for stream and model: the initial accuracy is river's
    `progressive_val_score` on the same generator and delay."""
    from river import evaluate as river_evaluate
    from river import metrics, naive_bayes
    from river.datasets import synth

    from pipelines import evaluate

    summary = evaluate({"sea": synth.SEA(seed=7, noise=0.1)}, [naive_bayes.GaussianNB()],
                       delay=25, repredict="none", out=str(tmp_path), runner="direct")
    row = summary.query("category == 'initial' and metric == 'accuracy' "
                        "and window == 'cumulative'")
    river_accuracy = river_evaluate.progressive_val_score(
        synth.SEA(seed=7, noise=0.1).take(10_000), naive_bayes.GaussianNB(),
        metrics.Accuracy(), delay=25)
    assert row["value"].iloc[0] == river_accuracy.get()


def test_data_given_from_python_scores_as_river_does_on_it(tmp_path):
    """(x, y) pairs as river's `iter_pandas` yields them, the same as a list, a DataFrame
    with a label column, and sparse rows (a feature missing from some x): each `evaluate`d,
    the initial score is river's `progressive_val_score` on the same pairs and delay."""
    import numpy as np
    from river import evaluate as river_evaluate
    from river import linear_model, metrics, naive_bayes, stream

    from pipelines import evaluate
    from transforms.errors import ConfigError

    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=400), "b": rng.normal(size=400)})
    y = pd.Series(np.where(X["a"] + rng.normal(scale=0.5, size=400) > 0, "up", "down"))

    def accuracy(data, delay):
        summary = evaluate(data, naive_bayes.GaussianNB(), delay=delay, repredict="none",
                           out=str(tmp_path / "o"), runner="direct")
        return summary.query("category == 'initial' and metric == 'accuracy' and "
                             "window == 'cumulative' and `class`.isna()")["value"].iloc[0]

    def river_accuracy(data, delay):
        return river_evaluate.progressive_val_score(data, naive_bayes.GaussianNB(),
                                                    metrics.Accuracy(), delay=delay).get()

    expected = river_accuracy(stream.iter_pandas(X, y), 15)
    assert accuracy(stream.iter_pandas(X, y), 15) == expected
    assert accuracy(list(stream.iter_pandas(X, y)), 15) == expected
    assert accuracy(X.assign(label=y), 15) == expected
    assert (tmp_path / "o" / "inputs" / "data.parquet").exists()
    assert accuracy({"moves": stream.iter_pandas(X, y)}, 15) == expected  # named by its key
    assert (tmp_path / "o" / "inputs" / "moves.parquet").exists()
    sparse = [({k: v for k, v in x.items() if not (k == "b" and i % 3 == 0)}, label)
              for i, (x, label) in enumerate(stream.iter_pandas(X, y))]
    assert accuracy(sparse, 7) == river_accuracy(sparse, 7)
    # evaluate_locally takes them too; a regression's MAE is river's within its running mean.
    target = X["a"] * 2 + X["b"]
    local = evaluate_locally(stream.iter_pandas(X, target), "linear-regression", "10")
    mae = river_evaluate.progressive_val_score(stream.iter_pandas(X, target),
                                               linear_model.LinearRegression(), metrics.MAE(),
                                               delay=10).get()
    ours = local.summary.query("category == 'initial' and metric == 'mae'")["value"].iloc[0]
    assert math.isclose(ours, mae, rel_tol=1e-12)
    with pytest.raises(ConfigError, match="a DataFrame stream needs a 'label' column"):
        evaluate(X, "gaussian-nb", out=str(tmp_path / "o"), runner="direct")
    with pytest.raises(ConfigError, match="^stream data: the DataFrame has no rows$"):
        evaluate_locally(X.assign(label=y).head(0), "gaussian-nb", "10")
    # Labels 1 and "1" in one list (from two sources' serialisers) are one class, as in a file.
    codes = (y == "up").astype(int)
    mixed = [(x, str(label) if i % 2 else label)
             for i, (x, label) in enumerate(stream.iter_pandas(X, codes))]
    assert accuracy(mixed, 15) == river_accuracy(stream.iter_pandas(X, codes), 15)
    with pytest.raises(ConfigError, match="row 2 is list, not an"):
        evaluate(iter([({"a": 1.0}, "x"), [1.0, "y"]]), "gaussian-nb", out=str(tmp_path / "o"),
                 runner="direct")


def test_features_and_labels_given_as_scikit_learn_takes_them_score_as_river_does(tmp_path):
    """(X, y) — a DataFrame and its labels as a Series (of another index: paired by
    position, as river's `iter_pandas` pairs them), an array or a list — is a stream: the
    initial score is river's on `iter_pandas(X, y)`, also when X has a feature named `label`.
    A tuple of streams is still streams; arrays as x, a Series alone and X and y of other
    lengths are each one line naming what to give."""
    import numpy as np
    from river import evaluate as river_evaluate
    from river import metrics, naive_bayes, stream

    from pipelines import evaluate
    from transforms.errors import ConfigError

    rng = np.random.default_rng(8)
    X = pd.DataFrame({"a": rng.normal(size=300), "label": rng.normal(size=300)},
                     index=rng.permutation(300))
    y = pd.Series(np.where(X["a"] + X["label"] > 0, "up", "down"), index=range(300))

    def accuracy(summary):
        return summary.query("category == 'initial' and metric == 'accuracy' and "
                             "window == 'cumulative' and `class`.isna()")["value"].iloc[0]

    expected = river_evaluate.progressive_val_score(stream.iter_pandas(X, y),
                                                    naive_bayes.GaussianNB(),
                                                    metrics.Accuracy(), delay=12).get()
    for labels in (y, y.to_numpy(), y.tolist()):
        local = evaluate_locally((X, labels), "gaussian-nb", "12")
        assert accuracy(local.summary) == expected
    summary = evaluate({"moves": (X, y), "sea": 'synth:SEA{"n": 300, "seed": 1}'},
                       "gaussian-nb", delay=12, out=str(tmp_path / "o"), runner="direct")
    assert accuracy(summary.query("stream == 'moves'")) == expected
    both = evaluate(((X, y), 'synth:SEA{"n": 300, "seed": 1}'), "gaussian-nb", delay=12,
                    out=str(tmp_path / "o"), runner="direct")
    assert sorted(both["stream"].unique()) == ["data", "sea"]
    assert accuracy(both.query("stream == 'data'")) == expected
    with pytest.raises(ConfigError, match=r"^stream data: X has 300 rows and y 299 labels; "):
        evaluate_locally((X, y.head(299)), "gaussian-nb", "12")
    with pytest.raises(ConfigError, match=r"^stream data: row 1's x is ndarray, not a dict of "
                                          r"features; give river.stream.iter_array\(X, y\)"):
        evaluate_locally(list(zip(X.to_numpy(), y)), "gaussian-nb", "12")
    with pytest.raises(ConfigError, match=r"^stream 0 down 1 down .* \(Series\): a stream is a "):
        evaluate_locally(y, "gaussian-nb", "12")


def test_every_key_of_x_is_a_feature_whatever_its_name_as_in_river(tmp_path):
    """An x whose keys are named as a table's columns (`time`, `id`, `kind`, `label_time`, as
    pandas names a column without a header) gives the model every key, as river's
    `progressive_val_score` does: none is taken for the event time (here out of order), the
    instance id or an event log's kinds, nor left out — as pairs, as (X, y), and with an
    option of `stream_spec_of`; the times are then the rows' order. Keys that are integers
    stay integers (a table's columns are texts)."""
    import numpy as np
    from river import compose, linear_model, metrics, stream
    from river import evaluate as river_evaluate

    from pipelines import stream_spec_of
    from transforms.errors import InputError

    rng = np.random.default_rng(11)
    names = ["time", "id", "kind", "label_time", "Unnamed: 0"]
    X = pd.DataFrame(rng.normal(size=(400, 5)), columns=names)
    y = pd.Series(X.to_numpy() @ [1.0, -1.0, 0.5, 1.0, -0.5] > 0)

    def accuracy(data, model="logistic-regression"):
        local = evaluate_locally(data, model, "10", final=False)
        return local.summary.query("category == 'initial' and metric == 'accuracy' and "
                                   "`class`.isna()")["value"].iloc[0]

    expected = river_evaluate.progressive_val_score(
        stream.iter_pandas(X, y), linear_model.LogisticRegression(), metrics.Accuracy(),
        delay=10).get()
    assert expected > 0.9  # (every key counts: without any one, it is lower)
    assert accuracy(list(stream.iter_pandas(X, y))) == expected
    assert accuracy((X, y)) == expected
    assert accuracy(stream_spec_of(stream.iter_pandas(X, y), positive=True)) == expected
    # Keys that are integers, as `iter_array` and `pd.DataFrame(array)` name them, stay so.
    def select_first_two():
        return compose.Select(0, 1) | linear_model.LogisticRegression()

    array = X.to_numpy()
    expected = river_evaluate.progressive_val_score(
        stream.iter_array(array, y), select_first_two(), metrics.Accuracy(), delay=10).get()
    for data in (list(stream.iter_array(array, y)), (pd.DataFrame(array), y),
                 pd.DataFrame(array).assign(label=y)):
        assert accuracy(data, select_first_two()) == expected
    # Dates as a feature: refused (most models cannot take them), with the options that keep
    # them for a model that reads them itself (here it discards them) or make them the time.
    dated = X.drop(columns="Unnamed: 0").assign(
        time=pd.Timestamp("2026-11-01", tz="UTC") + pd.to_timedelta(rng.permutation(400),
                                                                    unit="min"))

    def discarding():
        return compose.Discard("time") | linear_model.LogisticRegression()

    with pytest.raises(InputError, match=r"column 'time' holds dates, .*give \{\"time\": "
                                         r"\"time\"\} if it is the event time, .* or keep it "
                                         r"for a model that reads dates itself"):
        evaluate_locally(list(stream.iter_pandas(dated, y)), discarding(), "10")
    kept = stream_spec_of(stream.iter_pandas(dated, y), features=list(dated.columns))
    assert accuracy(kept, discarding()) == river_evaluate.progressive_val_score(
        stream.iter_pandas(dated, y), discarding(), metrics.Accuracy(), delay=10).get()
    # A key the options name for a role is that role, as in a table (here the event time).
    timed = X.assign(time=np.arange(400.0))
    assert accuracy(stream_spec_of(stream.iter_pandas(timed, y), time="time")) == \
        river_evaluate.progressive_val_score(
            stream.iter_pandas(timed.drop(columns="time"), y),
            linear_model.LogisticRegression(), metrics.Accuracy(), delay=10).get()


def test_data_from_python_takes_stream_options_through_stream_spec_of(tmp_path):
    """A DataFrame whose labels are text, for a binary model: its positive class is a stream
    option, given from Python with `stream_spec_of(data, positive=...)` (there was no way to
    give it but writing a file); the score is river's on the booleans label == positive."""
    import numpy as np
    from river import evaluate as river_evaluate
    from river import linear_model, metrics, stream

    from pipelines import evaluate, stream_spec_of

    rng = np.random.default_rng(4)
    X = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    y = pd.Series(np.where(X["a"] - X["b"] > 0.5, "fraud", "ok"))
    expected = river_evaluate.progressive_val_score(
        stream.iter_pandas(X, y == "fraud"), linear_model.LogisticRegression(),
        metrics.Accuracy(), delay=10).get()
    for data in (X.assign(label=y), stream.iter_pandas(X, y)):
        summary = evaluate({"tx": stream_spec_of(data, positive="fraud")}, "logistic-regression",
                           delay=10, repredict="none", out=str(tmp_path / "o"), runner="direct")
        got = summary.query("category == 'initial' and metric == 'accuracy' and "
                            "window == 'cumulative' and `class`.isna()")["value"].iloc[0]
        assert got == expected
        assert "recall" in set(summary.query("`class` == 'fraud'")["metric"])
    local = evaluate_locally(stream_spec_of(X.assign(label=y), positive="fraud"),
                             "logistic-regression", "10", final=False)
    assert local.summary.query("category == 'initial' and metric == 'accuracy' and "
                               "`class`.isna()")["value"].iloc[0] == expected


def test_a_mistake_in_data_from_python_names_the_data_and_stream_spec_of(tmp_path):
    """Checked as the Parquet copy it is written to, a DataFrame's mistakes named that file
    (`out/inputs/data.parquet`, which evaluate_locally removes) and the stream option that
    mends them as JSON, which no Python call takes."""
    from pipelines import stream_spec_of
    from transforms.errors import InputError

    frame = pd.DataFrame({"when": pd.date_range("2026-11-01", periods=60, freq="min"),
                          "x": [float(i % 7) for i in range(60)], "label": ["a", "b"] * 30})
    told = re.escape("stream data (the data given): column 'when' holds dates, which a model "
                     'cannot take as a feature; give {"time": "when"} if it is the event '
                     'time, or leave it out with {"features": ["x"]}, or keep it for a '
                     'model that reads dates itself (a river transformer of its own) with '
                     '{"features": ["when", "x"]} (from Python: stream_spec_of(data, '
                     'time="when"))')
    with pytest.raises(InputError, match=f"^{told}$"):
        evaluate(frame, "gaussian-nb", delay="5", out=str(tmp_path / "o"), runner="direct")
    with pytest.raises(InputError, match=f"^{told}$"):
        evaluate_locally(frame, "gaussian-nb", "5")
    with pytest.raises(InputError, match=r"^stream tx \(the data given\): column 'when'"):
        evaluate({"tx": frame}, "gaussian-nb", delay="5", out=str(tmp_path / "o"),
                 runner="direct")
    local = evaluate_locally(stream_spec_of(frame, time="when"), "gaussian-nb", "5min")
    assert local.counts["labelled"] == 60


def test_a_time_series_frame_keeps_its_times_and_mixed_features_are_refused(tmp_path):
    """A DataFrame indexed by time is evaluated with those times (a 5-minute delay means
    what it means for the same rows in a CSV file with a time column); a feature holding
    numbers in some rows and text in others is one clear error."""
    import numpy as np

    from transforms.errors import ConfigError

    rng = np.random.default_rng(5)
    times = pd.Timestamp("2026-11-01", tz="UTC") + pd.to_timedelta(
        np.cumsum(rng.integers(1, 120, size=300)), unit="s")
    frame = pd.DataFrame({"x": rng.normal(size=300)}, index=pd.DatetimeIndex(times))
    frame["label"] = np.where(frame["x"] > 0, "a", "b")
    frame.reset_index(names="time").to_csv(tmp_path / "s.csv", index=False)
    from_file = evaluate_locally(f"data={tmp_path / 's.csv'}", "gaussian-nb", "5min")
    from_frame = evaluate_locally(frame, "gaussian-nb", "5min")
    assert _rows(from_frame.summary) == _rows(from_file.summary)
    assert _rows(evaluate_locally(tmp_path / "s.csv", "gaussian-nb", "5min").summary) == \
        _rows(from_file.summary)  # a pathlib.Path is the file's path
    assert from_frame.counts["unscored_initial"] > 1  # (the delay is time, not one row)
    # A column of numbers and text (a spreadsheet's '#VALUE!' among amounts) names both.
    with pytest.raises(ConfigError, match=re.escape(
            "stream data: column 'x' holds numbers (row 1: 1.0) and text (row 3: 'high'); "
            "give it one kind: numbers, NaN where there is none (pd.to_numeric(column, "
            "errors='coerce')), or text (column.astype(str))")):
        evaluate_locally([({"x": np.float64(1.0)}, "a"), ({"x": None}, "b"),
                          ({"x": "high"}, "b")], "gaussian-nb", "1")


def test_a_delay_given_as_a_timedelta_is_that_much_event_time(tmp_path):
    """river takes `delay=dt.timedelta(...)`; so do `evaluate_locally` and `RunConfig`: the
    numbers of the same delay written as text."""
    import datetime as dt

    path = tmp_path / "s.csv"
    rows = [f"{i * 7},{(i * 37) % 11},{int((i * 37) % 11 > 4)}" for i in range(300)]
    path.write_text("time,x,y\n" + "\n".join(rows) + "\n")
    stream = f'{path}{{"time": "time", "label": "y"}}'
    by_text = evaluate_locally(stream, "gaussian-nb", "2min")
    by_timedelta = evaluate_locally(stream, "gaussian-nb", dt.timedelta(minutes=2))
    assert _rows(by_timedelta.summary) == _rows(by_text.summary)
    assert RunConfig(streams=[stream], models=["majority"], out="unused",
                     delay=dt.timedelta(minutes=2), time_windows=[dt.timedelta(hours=1)]
                     ).delay == "120s"


def test_evaluate_in_a_fresh_program_prints_nothing_on_stderr(tmp_path):
    """A notebook or script that calls `evaluate` sees no Beam import notices (`WARNING:root:
    apitools not found ...`)."""
    import subprocess
    import sys

    code = ("import pipelines\n"
            f"pipelines.evaluate('synth:SEA{{\"n\": 200}}', 'gaussian-nb', delay=10, "
            f"repredict='none', out={str(tmp_path / 'out')!r})\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stderr == ""


def test_evaluate_locally_keeps_no_copy_of_data_and_names_a_bad_row_by_its_place(
        tmp_path, monkeypatch):
    """Data given from Python is written to a table to be read as `run` reads it: that copy
    was left behind at every call (a notebook's loop filled the temporary folder), and its
    path was the dead letters' file."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    rows = [({"a": None if i in (3, 10) else float(i)}, "ab"[i % 2]) for i in range(40)]
    result = evaluate_locally(rows, "gaussian-nb", "5")
    assert list(tmp_path.iterdir()) == []
    assert [(d["file"], d["row"]) for d in result.dead_letters] == [(None, 4), (None, 11)]
    assert result.counts["instances"] == 38


def test_data_from_python_that_no_table_holds_is_one_clear_error(tmp_path):
    """Rows a Parquet file cannot hold (an integer beyond 64 bits, a complex number), labels
    that are lists, and names that cannot name a stream (blank, or with '/' or '=') are each
    one `DelayedEvalError` naming the stream; a bad name is found before any data is written."""
    from pipelines import evaluate
    from transforms.errors import DelayedEvalError

    def rows(feature=lambda i: i / 10, label=lambda i: i % 3 == 0):
        return [({"a": float(i), "b": feature(i)}, label(i)) for i in range(30)]

    cases = [
        (rows(feature=lambda i: 2**70 + i), r"stream data: its rows cannot be written as a "
                                            r"table \(Python int too large"),
        (rows(feature=lambda i: 1 + 2j), r"stream data: its rows cannot be written as a table"),
        (rows(label=lambda i: [i % 2]), r"stream data \(the data given\): column 'label' holds "
                                        r"lists"),
        (rows(label=lambda i: ("y", i)), r"stream data: its rows cannot be written as a table "
                                         r"\(row 1's label is \('y', 0\)\); give each"),
        ({"ok": rows(), "x/y": rows()}, r"stream name 'x/y': .*e\.g\. 'x-y'"),
        ({"ok": rows(), " ": rows()}, r"stream name ' ': a name is a text, not blank"),
        ({"a=b": rows()}, r"stream name 'a=b'"),
    ]
    for i, (stream, message) in enumerate(cases):
        out = tmp_path / str(i)
        with pytest.raises(DelayedEvalError, match=message):
            evaluate(stream, "gaussian-nb", delay="1", out=str(out), runner="direct")
        if isinstance(stream, dict):
            assert not out.exists()
    with pytest.raises(DelayedEvalError, match="model name '': a name is a text, not blank"):
        evaluate(rows(), {"": "majority"}, out=str(tmp_path / "m"), runner="direct")
    # '|' joins a pipeline's steps: a name holding it read as 'unknown model 'scaler''.
    with pytest.raises(DelayedEvalError, match=re.escape(
            "model name 'scaler|nb': a name is a text, not blank, without = |; name it "
            "otherwise, e.g. 'scaler-nb'")):
        evaluate(rows(), {"scaler|nb": "standard-scaler | gaussian-nb"},
                 out=str(tmp_path / "p"), runner="direct")


def test_a_delay_of_none_is_no_delay_as_in_river():
    """river's `progressive_val_score(delay=None)` learns each label at once: so does a delay
    of None here, in `evaluate_locally` and in `RunConfig`."""
    from river import evaluate as river_evaluate
    from river import metrics, naive_bayes
    from river.datasets import synth

    result = evaluate_locally('synth:SEA{"n": 400, "seed": 3}', "gaussian-nb", None)
    accuracy = river_evaluate.progressive_val_score(
        synth.SEA(seed=3).take(400), naive_bayes.GaussianNB(), metrics.Accuracy(), delay=None)
    summary = result.summary.query("category == 'initial' and metric == 'accuracy'")
    assert summary["value"].item() == accuracy.get()
    from pipelines.plan import plan

    pl = plan(RunConfig(streams=[STREAM], models=["majority"], out="unused", delay=None))
    assert pl.label_delay(pl.streams[0]) == "0"


def test_numpy_values_paths_and_ranges_are_the_plain_values_they_hold(tmp_path):
    """A delay of np.int64(5) or 5.0, a curve step from NumPy, windows as an array or a range, a
    float32 fading factor, a pathlib out: each was "not a text" / "not a whole number"."""

    import numpy as np

    plain = evaluate(STREAM, "gaussian-nb", delay=5, curve_every=10, windows=[50, 55],
                     fadings=[0.99], out=str(tmp_path / "plain"), repredict="none")
    numpy = evaluate(STREAM, "gaussian-nb", delay=np.int64(5), curve_every=np.int64(10),
                     windows=range(50, 60, 5), fadings=np.float32(0.99),
                     out=tmp_path / "numpy", repredict="none")
    assert _rows(numpy) == _rows(plain) and len(numpy) == len(plain)
    assert (tmp_path / "numpy" / "summary.csv").exists()
    for delay in (5.0, np.float64(5), np.array(5)):
        assert _rows(evaluate_locally(STREAM, "gaussian-nb", delay).summary) == \
            _rows(evaluate_locally(STREAM, "gaussian-nb", 5).summary)
    assert RunConfig(streams=[STREAM], models=["majority"], out="unused",
                     windows=np.array([50]), delay=np.timedelta64(90, "s")).delay == "90s"
    # Stream options and model parameters taken from NumPy (a frame's label.max(), unique()):
    # a TypeError ("Object of type int64 is not JSON serializable"), or "cannot be written".
    from river import tree

    from pipelines import stream_spec_of
    from transforms.models.specs import spec_of

    frame = pd.DataFrame({"x": range(40), "label": [0, 1, 1, 0] * 10})
    assert stream_spec_of(frame, positive=np.int64(1), classes=frame["label"].unique()
                          ).options == {"positive": 1, "classes": [0, 1]}
    assert spec_of(tree.HoeffdingTreeClassifier(grace_period=np.int64(50), delta=np.float32(
        1e-5))) == spec_of(tree.HoeffdingTreeClassifier(grace_period=50, delta=1e-5))


@pytest.mark.parametrize("data, model, delay, message", [
    # A regressor on class labels: the model's TypeError at its first label.
    ([({"x": i / 10}, "ab"[i % 2]) for i in range(30)], "linear-regression", "1",
     "model linear-regression is a regressor, but stream data has class labels; use a "
     "classifier (or, in a backfill, leave out --task regression)"),
    # A duration longer than a frame without times (its rows one second apart): a summary of
    # NaN, no initial prediction scored.
    (pd.DataFrame({"x": [i / 10 for i in range(50)], "label": ["a", "b"] * 25}), "gaussian-nb",
     "1h", "stream data: no initial prediction could be scored: every labelled instance "
     "arrived before any model had learned a label (delay 1h: the first label comes after the "
     "last of the 50 instances evaluated, which arrive one a second: the stream has no event "
     "times); give a shorter --delay, or a longer stream"),
])
def test_evaluate_locally_refuses_what_a_run_refuses_with_its_line(tmp_path, data, model,
                                                                   delay, message):
    """What `run` stops with one line, `evaluate_locally` stops with the same line."""
    from pipelines import evaluate
    from transforms.errors import DelayedEvalError

    with pytest.raises(DelayedEvalError) as run_error:
        evaluate(data, model, delay=delay, out=str(tmp_path), runner="direct")
    with pytest.raises(DelayedEvalError) as local_error:
        evaluate_locally(data, model, delay)
    assert type(local_error.value) is type(run_error.value)
    assert str(local_error.value) == str(run_error.value) == message


def test_evaluate_locally_scores_a_frame_without_times_one_row_a_second():
    frame = pd.DataFrame({"x": [i / 10 for i in range(50)], "label": ["a", "b"] * 25})
    assert evaluate_locally(frame, "gaussian-nb", "40s").counts["scored_initial"] == 10


def test_a_model_that_has_learned_is_refused_not_evaluated_new_in_silence(tmp_path):
    """A run builds each model new from its parameters: a model given after river's
    progressive_val_score trained it (or one loaded with what it learned) was evaluated as a
    new one, what it had learned dropped in silence."""
    from river import evaluate as river_evaluate
    from river import metrics, tree
    from river.datasets import synth

    from pipelines import evaluate
    from transforms.models.specs import ModelSpecError

    model = tree.HoeffdingTreeClassifier(grace_period=50)
    river_evaluate.progressive_val_score(synth.SEA(seed=1).take(300), model,
                                         metrics.Accuracy(), delay=5)
    stream = 'synth:SEA{"n": 100, "seed": 2}'
    for call in (lambda m: evaluate_locally(stream, m, "5"),
                 lambda m: evaluate(stream, [m], delay="5", out=str(tmp_path), runner="direct")):
        with pytest.raises(ModelSpecError) as error:
            call(model)
        assert str(error.value).startswith(
            "model HoeffdingTreeClassifier has learned already, or predicted (river's "
            "progressive_val_score, for one, trains the model it is given): a run builds each "
            "model new from its parameters, so what it learned would be lost in silence; give "
            "it new")
        assert not (tmp_path / "summary.csv").exists()
    assert evaluate_locally(stream, model.clone(), "5").counts["scored_initial"] == 95
    assert evaluate_locally(stream, tree.HoeffdingTreeClassifier(), "5").counts["labelled"] \
        == 100  # (a new model of the same class, and of other parameters, as before)


def test_a_frame_of_sparse_columns_scores_as_its_dense_twin(tmp_path):
    """pandas' sparse columns (which Arrow cannot write) are data as any: the numbers of the
    same frame made dense; a frame with two columns of one name is one clear error."""
    import numpy as np

    from pipelines import evaluate
    from transforms.errors import ConfigError

    x = np.where(np.arange(60) % 7 == 0, 1.0, 0.0)
    frame = pd.DataFrame({"x": pd.arrays.SparseArray(x), "label": np.where(x > 0, "a", "b")})
    sparse = evaluate(frame, "gaussian-nb", delay="2", out=str(tmp_path / "s"),
                      runner="direct", repredict="none")
    dense = evaluate(frame.astype({"x": float}), "gaussian-nb", delay="2",
                     out=str(tmp_path / "d"), runner="direct", repredict="none")
    pd.testing.assert_frame_equal(sparse.drop(columns="run_id"), dense.drop(columns="run_id"))
    with pytest.raises(ConfigError, match="stream data: two columns are named 'x'; rename one"):
        evaluate(pd.DataFrame([[1.0, 2.0, "a"]], columns=["x", "x", "label"]), "majority",
                 out=str(tmp_path / "two"), runner="direct")


def test_a_frame_of_multi_level_columns_names_them_by_their_path(tmp_path):
    """Columns ("amount", "eur") read as one feature named "('amount', 'eur')", and the label
    ("label", "") was not found; now `amount.eur`, as a nested JSON key, and `label`."""
    frame = pd.DataFrame({("amount", "eur"): [float(i % 5) for i in range(60)],
                          ("amount", "usd"): [float(i % 3) for i in range(60)],
                          ("label", ""): ["ab"[i % 2] for i in range(60)]})
    flat = frame.set_axis(["amount.eur", "amount.usd", "label"], axis=1)
    nested, plain = (evaluate(f, "gaussian-nb", delay="2", out=str(tmp_path / name),
                              runner="direct", repredict="none")
                     for name, f in (("nested", frame), ("plain", flat)))
    pd.testing.assert_frame_equal(nested.drop(columns="run_id"), plain.drop(columns="run_id"))
    assert list(pd.read_parquet(tmp_path / "nested" / "inputs" / "data.parquet").columns) == \
        ["amount.eur", "amount.usd", "label"]


@pytest.mark.parametrize("option, told", [
    ("no_final", "(give final=False)"), ("bin", "(did you mean bins?)")])
def test_an_option_evaluate_does_not_know_names_the_one_meant(option, told):
    with pytest.raises(TypeError, match=re.escape(
            f"evaluate() got an unexpected keyword argument {option!r} {told}")):
        evaluate('synth:SEA{"n": 50}', "majority", **{option: True})


def test_data_from_python_is_written_over_its_own_table_only(tmp_path):
    """`evaluate(data, out=DIR)` writes the data to DIR/inputs/NAME.parquet: a second call
    writes over the table the first wrote, while a user's own file of that name is kept, byte
    for byte, and the call refused in one line."""
    from transforms.errors import ConfigError

    data = pd.DataFrame({"a": [0.1, 0.9, 0.2, 0.8] * 10, "label": ["x", "y"] * 20})
    out = tmp_path / "o"
    for _ in range(2):
        evaluate(data, "gaussian-nb", delay="2", repredict="none", out=str(out),
                 runner="direct")
    mine = out / "inputs" / "data.parquet"
    data.head(3).to_parquet(mine)
    kept = mine.read_bytes()
    with pytest.raises(ConfigError, match=r"inputs/data.parquet exists and holds no data "
                                          r"written by delayed-eval; give another out"):
        evaluate(data, "gaussian-nb", delay="2", out=str(out), runner="direct")
    assert mine.read_bytes() == kept


def test_intervals_and_periods_from_python_are_their_text():
    """pd.cut's bins (a categorical of intervals) and periods: no Parquet column holds them,
    and such data stopped with Arrow's cast error. Each is its text, a category as
    one-hot-text takes it: the numbers of the same frame with those columns written as text
    by hand. A column of periods is then dates, refused as a feature as a file's."""
    import numpy as np

    from transforms.errors import InputError

    rng = np.random.default_rng(3)
    x = rng.normal(size=200)
    frame = pd.DataFrame({"x": x, "bin": pd.cut(x, 4)})
    labels = pd.cut(pd.Series(x + rng.normal(size=200)), 3)
    as_text = pd.DataFrame({"x": x, "bin": [str(v) for v in frame["bin"]]})
    model = "one-hot-text | gaussian-nb"
    got = evaluate_locally((frame, labels), model, "5")
    assert _rows(got.summary) == _rows(
        evaluate_locally((as_text, [str(v) for v in labels]), model, "5").summary)
    assert got.counts["labelled"] == 200
    frame["month"] = pd.period_range("2026-01", periods=200, freq="D")
    with pytest.raises(InputError, match="column 'month' holds dates"):
        evaluate_locally((frame, labels), model, "5")


def test_numpy_features_and_labels_as_scikit_learn_takes_them_score_as_river_iter_array():
    """(X, y) of NumPy arrays, as a scikit-learn user has them, was refused ('a stream is a
    spec ...'). X's columns are its features' numbers, as river's `iter_array` names them:
    the initial accuracy is river's delayed progressive validation on `iter_array(X, y)`."""
    import numpy as np
    from river import evaluate as river_evaluate
    from river import metrics, naive_bayes, stream

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + rng.normal(size=300) * 0.5 > 0).astype(int)
    summary = evaluate({"d": (X, y)}, "gaussian-nb", delay=5, runner="direct",
                       repredict="none")
    ours = summary.query("metric == 'accuracy' and category == 'initial' and "
                         "window == 'cumulative'")["value"].iloc[0]
    accuracy = river_evaluate.progressive_val_score(stream.iter_array(X, y),
                                                   naive_bayes.GaussianNB(), metrics.Accuracy(),
                                                   delay=5)
    assert ours == accuracy.get()
