"""river's naive Bayes classifiers, faster and with `predict_one`'s answers: `GaussianNB` many rows
at once, the joint log-likelihoods of every class for a matrix of feature rows
(`GaussianNBBatch`, on the model's state as arrays, `GaussianNBArrays`), and one row at a time
from those arrays once it has many classes (`ManyClassesGaussianNB`); any of them one row at a
time without river's normalisation (`naive_bayes_predict_one`, `naive_bayes_predict_with_proba`)."""

from __future__ import annotations

import functools
import math

import numpy as np

from transforms.models.batch import (NONE, TIE_MARGIN, DenseBatch, argmax_with_margin,
                                     learns_while_predicting, loaded, plain_numbers)

_PDF_EPS = 10e-10  # river.naive_bayes.gaussian._PDF_EPS


_SQRT_TAU = math.sqrt(2.0 * math.pi)


def gaussian_parameters(gaussian):
    """(mu, variance) of a river `proba.Gaussian`, or None where river's pdf is 0.

    Example
    -------

    >>> from river import proba
    >>> g = proba.Gaussian()
    >>> for x in (1.0, 2.0, 3.0):
    ...     g.update(x)
    >>> gaussian_parameters(g), gaussian_parameters(proba.Gaussian())
    ((2.0, 1.0), None)

    """
    if gaussian is None:
        return None
    var = gaussian._var
    n = var.mean.n
    if n > var.ddof:
        variance = var._S / (n - var.ddof)
        if variance > 0.0:
            return var.mean._mean, variance
    return None


class GaussianNBBatch(DenseBatch):
    """river `GaussianNB`: log P(c) + Σ_f log(ε + pdf_cf(x_f)), the best class wins.

    Example
    -------

    >>> from river import naive_bayes
    >>> model = naive_bayes.GaussianNB()
    >>> for x, y in [({"a": 0.0}, "u"), ({"a": 0.2}, "u"), ({"a": 5.0}, "v"), ({"a": 5.3}, "v")]:
    ...     model.learn_one(x, y)
    >>> batch = GaussianNBBatch()
    >>> xs = [{"a": 0.1}, {"a": 4.9}]
    >>> rows = np.array([batch.encode(x) for x in xs])
    >>> codes, labels = batch.predict(model, rows, xs)
    >>> [labels[c] for c in codes] == [model.predict_one(x) for x in xs]
    True

    """

    in_pipeline = True
    absent_features = True  # river sums over the row's own features

    def __getstate__(self):
        return self.__dict__ | {"_arrays": None}  # (a cache: read again)

    def state(self, model, names):
        if getattr(self, "_arrays", None) is None:
            self._arrays = GaussianNBArrays()
        return self._arrays.read(model, names)

    def select(self, params, columns: list):
        classes, prior, mu, sigma, known = params
        return classes, prior, mu[:, columns], sigma[:, columns], known[:, columns]

    def decide_with(self, rows, params):
        if params is None:
            return np.full(len(rows), NONE), [], np.empty(0, dtype=np.int64), None
        classes, prior, mu, sigma, known = params
        z = (rows[:, None, :] - mu) / sigma  # rows x classes x features
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            terms = np.log(_PDF_EPS + np.exp(-0.5 * z * z) / _SQRT_TAU / sigma)
        terms[:, ~known] = math.log(_PDF_EPS)  # river's pdf is 0 there
        absent = np.isnan(rows)  # (`encode`: a feature the row lacks, which adds nothing)
        if absent.any():
            terms[np.broadcast_to(absent[:, None, :], terms.shape)] = 0.0
        jll = prior + terms.sum(axis=2)
        scale = np.abs(prior) + np.abs(terms).sum(axis=2)
        best, unsure = argmax_with_margin(jll, scale)
        self._jll = jll  # for proba_of
        return best, classes, unsure, None

    def proba_of(self, model, rows, xs, labels: list, scored) -> np.ndarray:
        """river's `predict_proba_one` from the joint log-likelihoods `decide` computed:
        exp(ll − max) / Σ exp(ll − max), equal to river's within a few units in the last
        place (NaN rows before the model has seen a class)."""
        if not model.class_counts:
            return np.full((len(rows), len(labels)), math.nan)
        jll = self._jll
        if jll.shape[1] == 2:  # as `naive_bayes_predict_with_proba` computes them: one exp
            gap = jll[:, 0] - jll[:, 1]
            low = np.exp(-np.abs(gap))
            top, low = 1.0 / (1.0 + low), low / (1.0 + low)
            first = gap >= 0
            proba = np.column_stack([np.where(first, top, low), np.where(first, low, top)])
        else:
            proba = jll - jll.max(axis=1, keepdims=True)
            np.exp(proba, out=proba)
            proba /= proba.sum(axis=1, keepdims=True)
        if proba.shape[1] == len(labels):
            return proba
        out = np.zeros((len(rows), len(labels)))
        out[:, :proba.shape[1]] = proba  # `labels` start with decide's classes
        return out


class GaussianNBArrays:
    """river `GaussianNB`'s state over the features `names`: (classes, log priors, μ and σ
    (classes × features), whether each class has a Gaussian with a variance for each
    feature). Kept between calls: a label changes one class's Gaussians (and count), so only
    the classes whose count changed are read again — a stream of hundreds of classes is not
    read whole at every prediction.

    Example
    -------

    >>> from river import naive_bayes
    >>> model, arrays = naive_bayes.GaussianNB(), GaussianNBArrays()
    >>> for a, y in [(1.0, "x"), (3.0, "x"), (5.0, "y")]:
    ...     model.learn_one({"a": a}, y)
    >>> classes, prior, mu, sigma, known = arrays.read(model, ("a",))
    >>> classes, mu.tolist(), known.tolist()  # one value of y: no variance yet
    (['x', 'y'], [[2.0], [0.0]], [[True], [False]])
    >>> model.learn_one({"a": 6.0}, "y")  # y read again, x kept
    >>> classes, prior, mu, sigma, known = arrays.read(model, ("a",))
    >>> mu.tolist(), sigma.tolist() == [[model.gaussians[c]["a"].sigma] for c in "xy"]
    ([[2.0], [5.5]], True)
    >>> prior.tolist() == [math.log(0.5), math.log(0.5)]
    True

    """

    def __init__(self):
        self._reset(None, None)

    def _reset(self, model, names) -> None:
        self._model, self._names = model, names
        self._read_at: dict = {}  # class -> its count when its row was read
        self._row: dict = {}  # class -> its row
        self._classes: list = []  # in the model's order (`class_counts`, first seen first)
        self._mu = self._sigma = self._known = self._count = None

    def read(self, model, names) -> tuple | None:
        """(classes, log priors, μ, σ, known); None before the model has seen a class."""
        counts = model.class_counts
        if not counts:
            return None
        if model is not self._model or names != self._names:
            self._reset(model, names)
        read_at = self._read_at
        for c, n in counts.items():
            if read_at.get(c) != n:
                self._read_class(model, c, n)
        k = len(self._classes)
        prior = np.log(self._count[:k] / sum(counts.values()))
        return list(self._classes), prior, self._mu[:k], self._sigma[:k], self._known[:k]

    def _read_class(self, model, c, n) -> None:
        j = self._row.get(c)
        if j is None:
            j = self._row[c] = len(self._classes)
            self._classes.append(c)
            if self._count is None or j == len(self._count):
                self._grow(max(8, 2 * j))
        gaussians = model.gaussians.get(c, {})
        for f, name in enumerate(self._names):
            params = gaussian_parameters(gaussians.get(name))
            if params is None:
                self._mu[j, f], self._sigma[j, f], self._known[j, f] = 0.0, 1.0, False
            else:
                self._mu[j, f], self._sigma[j, f] = params[0], math.sqrt(params[1])
                self._known[j, f] = True
        self._count[j] = self._read_at[c] = n

    def _grow(self, rows: int) -> None:
        shape, k = (rows, len(self._names)), len(self._classes) - 1
        old = (self._mu, self._sigma, self._known, self._count)
        self._mu, self._sigma = np.zeros(shape), np.ones(shape)
        self._known, self._count = np.zeros(shape, dtype=bool), np.zeros(rows)
        if old[0] is not None:
            for new, was in zip((self._mu, self._sigma, self._known, self._count), old):
                new[:k] = was[:k]


def _best_class(jll: dict):
    """The class of the highest joint log-likelihood (the first of equals, as river's `max`),
    or `_UNSURE` when the best two are within `TIE_MARGIN` (relative): rounding could have
    changed their order, so `predict_one` itself must answer."""
    best = second = -math.inf
    best_class = None
    for c, ll in jll.items():  # dict order: the first of equals stays best, as in river's max
        if ll > best:
            best, second, best_class = ll, best, c
        elif ll > second:
            second = ll
    if best - second > TIE_MARGIN * (1.0 + abs(best) + abs(second)):
        return best_class
    return _UNSURE


_UNSURE = object()


def naive_bayes_predict_one(model, x: dict):
    """river's naive Bayes `predict_one(x)`, without normalising the probabilities: the class
    of the highest joint log-likelihood. river's `predict_proba_one` maps the log-likelihoods
    through `exp(ll − logsumexp)`, which keeps their order, and `predict_one` takes the first
    highest; the normalisation (scipy's `logsumexp`, ~50 µs a call) is most of its time. When
    the best two log-likelihoods are within `TIE_MARGIN` (relative) of each other, rounding
    could have changed the order or made a tie, so `predict_one` itself answers.

    Example
    -------

    >>> from river import naive_bayes
    >>> model = naive_bayes.GaussianNB()
    >>> naive_bayes_predict_one(model, {"a": 1.0}) is None  # untrained, as predict_one
    True
    >>> for x, y in [({"a": 0.0}, "u"), ({"a": 0.2}, "u"), ({"a": 5.0}, "v"), ({"a": 5.3}, "v")]:
    ...     model.learn_one(x, y)
    >>> [naive_bayes_predict_one(model, {"a": a}) for a in (0.1, 2.6, 4.9)]
    ['u', 'u', 'v']
    >>> [model.predict_one({"a": a}) for a in (0.1, 2.6, 4.9)]
    ['u', 'u', 'v']
    """
    jll = model.joint_log_likelihood(x)
    if not jll:
        return None
    best = _best_class(jll)
    return model.predict_one(x) if best is _UNSURE else best


def naive_bayes_predict_with_proba(model, x: dict) -> tuple:
    """(`predict_one(x)`, `predict_proba_one(x)`) of river's naive Bayes from one computation
    of the joint log-likelihoods: the class as `naive_bayes_predict_one` decides it, the
    probabilities exp(ll − max) / Σ exp(ll − max), river's normalisation without scipy (equal to
    its values within a few units in the last place).

    Example
    -------

    >>> from river import naive_bayes
    >>> model = naive_bayes.GaussianNB()
    >>> for x, y in [({"a": 0.0}, "u"), ({"a": 0.2}, "u"), ({"a": 5.0}, "v"), ({"a": 5.3}, "v")]:
    ...     model.learn_one(x, y)
    >>> label, proba = naive_bayes_predict_with_proba(model, {"a": 2.0})
    >>> river_proba = model.predict_proba_one({"a": 2.0})
    >>> label, all(abs(proba[c] - river_proba[c]) < 1e-12 for c in river_proba)
    ('u', True)
    """
    jll = model.joint_log_likelihood(x)
    if not jll:
        return None, None
    if len(jll) == 2:  # most streams: one exp, no lists
        (a, la), (b, lb) = jll.items()
        low_over_top = math.exp(-abs(la - lb))
        top, low = 1.0 / (1.0 + low_over_top), low_over_top / (1.0 + low_over_top)
        if abs(la - lb) > TIE_MARGIN * (1.0 + abs(la) + abs(lb)):
            best = a if la > lb else b
        else:
            best = model.predict_one(x)
        return best, ({a: top, b: low} if la >= lb else {a: low, b: top})
    top = max(jll.values())
    exps = [math.exp(ll - top) for ll in jll.values()]
    total = sum(exps)
    best = _best_class(jll)
    return (model.predict_one(x) if best is _UNSURE else best,
            dict(zip(jll, [e / total for e in exps])))


class ManyClassesGaussianNB:
    """(`predict_one(x)`, `predict_proba_one(x)`) of river's `GaussianNB` (or `predict_one(x)`
    alone, `with_proba=False`) from its state as arrays (`GaussianNBArrays`), once its classes
    times the row's features reach `MANY`: river reads every class's Gaussians and sums the
    class counts again for each class (~1 µs per class and feature, and milliseconds a
    prediction at hundreds of classes), where the arrays cost ~40 µs a row whatever their
    size. The row is one of `GaussianNBBatch`, so a near tie is `predict_one`'s and the
    probabilities equal river's within a few units in the last place; below `MANY`, or for a
    row that is not all numbers, `naive_bayes_predict_with_proba` (`naive_bayes_predict_one`)
    answers.

    Example
    -------

    >>> import random
    >>> from river import naive_bayes
    >>> model, rng = naive_bayes.GaussianNB(), random.Random(1)
    >>> for _ in range(400):
    ...     c = rng.randrange(40)
    ...     model.learn_one({"a": c + rng.gauss(0, 1), "b": rng.random()}, f"c{c}")
    >>> predict = ManyClassesGaussianNB(model)
    >>> xs = [{"a": rng.uniform(0, 40), "b": rng.random()} for _ in range(200)]
    >>> answers = [predict(x) for x in xs]
    >>> [label for label, _ in answers] == [model.predict_one(x) for x in xs]
    True
    >>> max(abs(proba[c] - p) for (_, proba), x in zip(answers, xs)
    ...     for c, p in model.predict_proba_one(x).items()) < 1e-12
    True

    """

    MANY = 48  # classes × features: where the two took the same time on this machine

    def __init__(self, model, with_proba: bool = True):
        self.model, self.with_proba = model, with_proba
        self._batch = GaussianNBBatch()

    def __getstate__(self):
        return self.__dict__ | {"_batch": GaussianNBBatch()}  # (a cache: read again)

    def __call__(self, x: dict):
        model, batch = self.model, self._batch
        if len(model.class_counts) * len(x) < self.MANY or not plain_numbers(x.values()):
            return naive_bayes_predict_with_proba(model, x) if self.with_proba else \
                naive_bayes_predict_one(model, x)
        batch.names = tuple(x)
        rows = np.fromiter(x.values(), dtype=np.float64, count=len(x))[None, :]
        if not self.with_proba:
            codes, labels = batch.predict(model, rows, [x])
            return labels[codes[0]]
        codes, labels, proba = batch.predict_scored(model, rows, [x], None)
        return labels[codes[0]], dict(zip(labels, proba[0].tolist()))


def predict_with_proba(model):
    """x -> (`predict_one(x)`, `predict_proba_one(x)`) for a classifier that gives class
    probabilities, with one model call where its `predict_one` is its base class's (the most
    probable class, the first of equals; for river's Hoeffding tree, `tree_class_and_proba`);
    None for a model without `predict_proba_one`.

    Example
    -------

    >>> from river import linear_model, naive_bayes, tree
    >>> type(predict_with_proba(naive_bayes.GaussianNB())).__name__
    'ManyClassesGaussianNB'
    >>> predict_with_proba(naive_bayes.BernoulliNB()).func.__name__
    'naive_bayes_predict_with_proba'
    >>> model = tree.HoeffdingTreeClassifier()
    >>> model.learn_one({"a": 1.0}, True)
    >>> predict_with_proba(model)({"a": 1.0})
    (True, {True: 1.0})
    >>> predict_with_proba(linear_model.LinearRegression()) is None
    True
    """
    from river.base import Classifier

    from transforms.models.binary import BinaryLabels
    from transforms.models.tree_batch import tree_class_and_proba

    kind = type(model)
    if kind is BinaryLabels:
        inner = predict_with_proba(model.model)
        return None if inner is None else model.mapped(inner)
    if kind is loaded("river.compose.Pipeline"):
        last = predict_with_proba(list(model.steps.values())[-1])
        return None if last is None else functools.partial(
            _transformed_first, model, last, functools.partial(_class_and_proba, model))
    if not isinstance(model, Classifier) or not hasattr(model, "predict_proba_one") or \
            kind.predict_proba_one is Classifier.predict_proba_one:
        return None
    if hasattr(model, "class_and_proba"):  # (the temporal wrappers)
        return model.class_and_proba
    if kind is loaded("river.naive_bayes.GaussianNB"):
        return ManyClassesGaussianNB(model)
    if _predicts_as_base_nb(model):
        return functools.partial(naive_bayes_predict_with_proba, model)
    if kind is loaded("river.tree.HoeffdingTreeClassifier"):
        return functools.partial(tree_class_and_proba, model)
    if kind.predict_one is Classifier.predict_one:
        return functools.partial(_class_of_proba, model)
    return functools.partial(_class_and_proba, model)


def _class_of_proba(model, x: dict) -> tuple:
    """(the most probable class, the first of equals, as river's `predict_one`; the
    probabilities)."""
    proba = model.predict_proba_one(x)
    return (max(proba, key=proba.get) if proba else None), proba


def _class_and_proba(model, x: dict) -> tuple:
    return model.predict_one(x), model.predict_proba_one(x)


def fast_predict_one(model):
    """`model.predict_one`, or an exact faster stand-in for it (`naive_bayes_predict_one` for
    river's naive Bayes classifiers that predict as their base class does, `tree_predict_one`
    for its Hoeffding tree).

    Example
    -------

    >>> from river import linear_model, naive_bayes
    >>> fast_predict_one(naive_bayes.BernoulliNB()).func.__name__
    'naive_bayes_predict_one'
    >>> fast_predict_one(linear_model.LogisticRegression()).__name__
    'predict_one'
    """
    from transforms.models.binary import BinaryLabels
    from transforms.models.tree_batch import tree_predict_one

    kind = type(model)
    if kind is BinaryLabels:
        return model.mapped(fast_predict_one(model.model))
    if kind is loaded("river.compose.Pipeline"):
        # a pipeline's last step, once the transformers have done their part
        step = list(model.steps.values())[-1]
        last = fast_predict_one(step)
        return model.predict_one if last == step.predict_one else \
            functools.partial(_transformed_first, model, last, model.predict_one)
    if kind is loaded("river.naive_bayes.GaussianNB"):
        return ManyClassesGaussianNB(model, with_proba=False)
    if _predicts_as_base_nb(model):
        return functools.partial(naive_bayes_predict_one, model)
    if kind is loaded("river.tree.HoeffdingTreeClassifier"):
        return functools.partial(tree_predict_one, model)
    return model.predict_one


def _predicts_as_base_nb(model) -> bool:
    """Whether `model` is one of river's naive Bayes classifiers that predicts as their base
    class does (the class of the highest joint log-likelihood, normalised)."""
    from river.base import Classifier

    base = loaded("river.naive_bayes.base.BaseNB")
    kind = type(model)
    return base is not None and isinstance(model, base) and \
        kind.predict_proba_one is base.predict_proba_one and \
        kind.predict_one is Classifier.predict_one


def _transformed_first(pipeline, predict, otherwise, x: dict):
    """`predict` (a stand-in for the pipeline's last step) on `x` as the pipeline's
    predict-time methods hand it to that step, through its transformers; `otherwise(x)` while
    its steps learn as they predict (river's `learn_during_predict`).

    >>> from transforms.models.specs import ModelSpec
    >>> model = ModelSpec.parse("standard-scaler | gaussian-nb").build()
    >>> for a, y in [(0.0, "u"), (0.2, "u"), (5.0, "v"), (5.3, "v")]:
    ...     model.learn_one({"a": a}, y)
    >>> xs = [{"a": a} for a in (0.1, 2.6, 4.9)]
    >>> [fast_predict_one(model)(x) for x in xs] == [model.predict_one(x) for x in xs]
    True
    """
    if learns_while_predicting(pipeline):
        return otherwise(x)
    return predict(pipeline._transform_one(x)[0])
