"""Predicting many pending instances at once, with exactly the answers of `predict_one`.

Continuous re-evaluation asks the model about every pending instance again and again (with
K=1, once per label per pending instance). river predicts one dict at a time, so for the models
the benchmarks and papers use most we compute the same decision for a whole matrix of stored
feature rows with numpy:

- `GaussianNBBatch` (`naive_bayes_batch`): river's `naive_bayes.GaussianNB` joint
  log-likelihoods, column by column.
- `HoeffdingTreeBatch` (`tree_batch`): river's `tree.HoeffdingTreeClassifier`; rows are routed
  down numeric splits as arrays, a leaf predicting its majority class answers once for all its
  rows, a naive Bayes leaf scores its rows like GaussianNB. `HoeffdingAdaptiveTreeBatch`: the
  same for `tree.HoeffdingAdaptiveTreeClassifier`, a row that passes an alternate tree asking
  `predict_one`. `HoeffdingTreeRegressorBatch`: `tree.HoeffdingTreeRegressor`, its leaves'
  means or linear models' w·x + b; `HoeffdingAdaptiveTreeRegressorBatch` the same for
  `tree.HoeffdingAdaptiveTreeRegressor`.
- `LogisticRegressionBatch`, `LinearRegressionBatch` (`linear_batch`): river's
  `linear_model.LogisticRegression` and `LinearRegression`: w·x + b for a matrix of rows.
- `PipelineBatch`: a river pipeline ending in one of these; rows through standard scalers as
  arrays, through other transformers one by one.
- `BinaryLabelsBatch` (`binary`): a binary model on two other classes, its answers mapped.
- `KNNBatch`, `KNNRegressorBatch` (`knn_batch`): river's `neighbors.KNNClassifier` and
  `KNNRegressor` over a window (`knn`, `knn-regressor`): distances to the window's points as
  river sums them, bit for bit.
- `TreeEnsembleBatch` (`forest_batch`): river's `forest.ARFClassifier`, `SRPClassifier` and
  bagging ensembles of Hoeffding (adaptive) trees: the trees' probabilities as their tree
  batches give them, weighted (the forest, SRP) and summed as river sums them.
  `TreeRegressorEnsembleBatch`: their regressors of Hoeffding tree regressors, the trees'
  values aggregated as river aggregates them.
- `AMRulesBatch` (`rules_batch`): river's `rules.AMRules`: the rules' literals tested on all
  rows at once, their means or linear models' w·x + b summed as river sums them.
- `TemporalCorrectionBatch`, `TemporallyAugmentedBatch` (`temporal_batch`): the temporal
  wrappers, through the batch of the model they wrap.
- `ConstantBatch`: models whose prediction does not depend on x (Majority, No-Change).

numpy's `exp`/`log` may differ from libm's in the last bit, so a vectorised decision is kept
only when the best class wins by a clear margin; rows within 1e-9 (relative) of a tie, rows whose
features are not plain numbers with the first instance's keys, and anything a fast path does not
know, are predicted with `predict_one`. A test compares every path with `predict_one`.

`batch_predictor(model)` picks the fast path for a model, or `BatchPredictor` (one `predict_one`
per row).
"""
from __future__ import annotations

import math
from numbers import Real

import numpy as np

NONE = -1  # code of "no prediction" (an untrained river model returns None)
TIE_MARGIN = 1e-9


class BatchPredictor:
    """One `predict_one` per row; the fallback for models without a fast path.

    `predict(model, rows, xs)` returns `(codes, labels)`: prediction i is `labels[codes[i]]`,
    or None when `codes[i] == NONE`. `rows` are the dense rows `encode` made (None when it made
    none), `xs` the feature dicts.

    >>> from river import naive_bayes
    >>> model = naive_bayes.GaussianNB()
    >>> for a, y in [(1.0, "x"), (1.2, "x"), (3.0, "y"), (3.3, "y")]:
    ...     model.learn_one({"a": a}, y)
    >>> codes, labels = BatchPredictor().predict(model, None, [{"a": 1.1}, {"a": 2.9}])
    >>> [labels[c] for c in codes]
    ['x', 'y']
    """

    dense = False  # whether `predict` uses dense rows

    def encode(self, x: dict):
        """A dense row of `x` for the vectorised path, or None if it cannot take part."""
        return None

    def predict(self, model, rows, xs) -> tuple[np.ndarray, list]:
        return as_codes([model.predict_one(x) for x in xs])

    def predict_scored(self, model, rows, xs, scored) -> tuple[np.ndarray, list, np.ndarray]:
        """`predict` with class probabilities: `(codes, labels, proba)`, proba a matrix (rows ×
        labels, NaN rows where the model gave none); `scored(x)` gives one row's (class,
        {class: probability}) in one call. Labels named only by probabilities are appended
        to `labels` (no code points at them)."""
        pairs = [scored(x) for x in xs]
        codes, labels = as_codes([c for c, _ in pairs])
        return codes, labels, proba_rows([p for _, p in pairs], labels)

    stamps_rows = False  # whether `predict_changed` can skip rows whose answer is unchanged

    def predict_changed(self, model, rows, xs, before: np.ndarray, at=None, scored=None):
        """Like `predict`, for models that can tell a row's answer is unchanged since its last
        prediction although the model learned: returns `(codes, labels, stamps, changed,
        proba)`, where stamps (positive; 0 = unknown) change whenever a row's answer may have
        changed, `before` holds the rows' stamps at their last prediction, and codes (and, with
        `scored`, the class probabilities as `predict_scored` gives them; else None) are
        meaningful only where `changed`. With `at`, the rows are `rows[at]` (only those that
        need scoring are gathered)."""
        raise NotImplementedError


def proba_rows(dicts, labels: list) -> np.ndarray:
    """{class: probability} dicts (None or empty: none) as rows over `labels`, which gains the
    classes it did not name (0 where a dict does not name a class, NaN rows for none).

    >>> labels = ["a"]
    >>> proba_rows([{"a": 0.25, "b": 0.75}, None], labels).tolist(), labels
    ([[0.25, 0.75], [nan, nan]], ['a', 'b'])
    """
    column = {c: j for j, c in enumerate(labels)}
    for d in dicts:
        for c in d or ():
            if c not in column:
                column[c] = len(labels)
                labels.append(c)
    out = np.zeros((len(dicts), len(labels)))
    for i, d in enumerate(dicts):
        if not d:
            out[i] = math.nan
            continue
        for c, p in d.items():
            out[i, column[c]] = p
    return out


def as_codes(predictions) -> tuple[np.ndarray, list]:
    """Predictions as (codes, labels): prediction i is `labels[codes[i]]` (`NONE`: None).

    >>> codes, labels = as_codes(["b", None, "a", "b"])
    >>> codes.tolist(), labels
    ([0, -1, 1, 0], ['b', 'a'])
    """
    labels: list = []
    index: dict = {}
    codes = np.empty(len(predictions), dtype=np.int64)
    for i, p in enumerate(predictions):
        if p is None:
            codes[i] = NONE
            continue
        c = index.get(p)
        if c is None:
            c = index[p] = len(labels)
            labels.append(p)
        codes[i] = c
    return codes, labels


class ConstantBatch(BatchPredictor):
    """Models whose prediction ignores x: one call answers for every row.

    Example
    -------

    >>> from transforms.models.specs import Majority
    >>> model = Majority(classes=["a", "b"]); model.learn_one({}, "b")
    >>> codes, labels = ConstantBatch().predict(model, None, [{}, {}])
    >>> [labels[c] for c in codes]
    ['b', 'b']

    """

    def predict(self, model, rows, xs):
        if not len(xs):
            return np.empty(0, dtype=np.int64), []
        codes, labels = as_codes([model.predict_one(xs[0])])
        return np.full(len(xs), codes[0]), labels

    def predict_scored(self, model, rows, xs, scored):
        if not len(xs):
            return np.empty(0, dtype=np.int64), [], np.empty((0, 0))
        codes, labels, proba = super().predict_scored(model, rows, [xs[0]], scored)
        return np.full(len(xs), codes[0]), labels, np.repeat(proba, len(xs), axis=0)


class DenseBatch(BatchPredictor):
    """Rows of plain numbers, in the key order of the first instance encoded.

    Example
    -------

    >>> batch = DenseBatch()
    >>> batch.encode({"a": 1.0, "b": 2}).tolist(), batch.encode({"b": 2.0, "a": 1.0})
    ([1.0, 2.0], None)

    A row with other keys (or in another order), or a value that is no finite number, is left to
    `predict_one`.

    """

    dense = True

    def __init__(self):
        self.names: tuple | None = None

    def encode(self, x: dict):
        names = tuple(x)
        if self.names is None:
            self.names = names
        if names != self.names:
            return None
        values = tuple(x.values())
        for v in values:
            kind = type(v)
            if kind is float:  # the usual case, checked first: finite (inf − inf is NaN)
                if v - v != 0.0:
                    return None
            elif kind is not int and (not isinstance(v, Real) or isinstance(v, bool)
                                      or not math.isfinite(v)):
                return None
        return np.array(values, dtype=np.float64)

    def predict(self, model, rows, xs):
        if rows is None:
            return super().predict(model, rows, xs)
        return finish_unsure(model, xs, *self.decide(model, rows))

    def predict_scored(self, model, rows, xs, scored):
        if rows is None:
            return super().predict_scored(model, rows, xs, scored)
        codes, labels = self.predict(model, rows, xs)
        return codes, labels, self.proba_of(model, rows, xs, labels, scored)

    # Whether it decides rows a pipeline's standard scalers made (`state`, `decide_with`), and
    # rows its other transformers made one by one, grouped by their features (`select` too),
    # rather than asking its own `predict_one` for each (`PipelineBatch`).
    in_pipeline = False
    group_transformed = True

    def decide(self, model, rows):
        """(codes, labels, rows left to `predict_one`, leader): a row's answer is its leader's
        (leader None: every row answers for itself)."""
        return self.decide_with(rows, self.state(model, self.names))

    def state(self, model, names):
        """What the model's decision needs, over the features `names` (None: it has learned
        nothing to decide with)."""
        raise NotImplementedError

    def select(self, state, columns: list):
        """`state` over some of its features, by position."""
        raise NotImplementedError

    def decide_with(self, rows, state):
        """`decide` with the model's `state` over the rows' features."""
        raise NotImplementedError

    def proba_of(self, model, rows, xs, labels: list, scored) -> np.ndarray:
        """The class probabilities of the rows `decide` was last given (rows × labels, the
        labels `predict` returned): one `scored` call per row unless a subclass knows
        better."""
        return proba_rows([scored(x)[1] for x in xs], labels)


def finish_unsure(model, xs, codes, labels, unsure, leader):
    """Rows left unsure (near ties, unmodelled cases) get the model's own answer, exactly;
    rows with a leader take its answer.

    Example
    -------

    >>> from transforms.models.specs import Majority
    >>> model = Majority(classes=["a", "b"]); model.learn_one({}, "b")
    >>> codes, labels = finish_unsure(model, [{}, {}], np.array([0, 0]), ["a"], [1], None)
    >>> [labels[c] for c in codes]  # row 1 was unsure: the model's own answer
    ['a', 'b']

    """
    if len(unsure):
        exact, exact_labels = as_codes([model.predict_one(xs[i]) for i in unsure])
        codes, labels = merge_codes(codes, labels, unsure, exact, exact_labels)
    if leader is not None:
        codes = codes[leader]
    return codes, labels


def merge_codes(codes, labels, at, other_codes, other_labels):
    """`codes` with rows `at` given `other_codes` (into `other_labels`), and the labels both
    use.

    >>> codes, labels = merge_codes(np.array([0, 0]), ["a"], [1], np.array([0]), ["b"])
    >>> codes.tolist(), labels
    ([0, 1], ['a', 'b'])
    """
    labels = list(labels)
    lut = np.empty(len(other_labels) + 1, dtype=np.int64)
    lut[-1] = NONE
    for j, label in enumerate(other_labels):
        if label not in labels:
            labels.append(label)
        lut[j] = labels.index(label)
    codes = codes.copy()
    codes[at] = lut[other_codes]
    return codes, labels


def argmax_with_margin(scores: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column of the best score per row, and the rows where the best two are too close to
    trust (float error of the vectorised sums is far below TIE_MARGIN·scale).

    >>> best, unsure = argmax_with_margin(np.array([[1.0, 2.0], [3.0, 3.0 + 1e-12]]),
    ...                                    np.ones((2, 2)))
    >>> best.tolist(), unsure.tolist()
    ([1, 1], [1])
    """
    if scores.shape[1] < 2:
        return np.zeros(len(scores), dtype=np.int64), np.empty(0, dtype=np.int64)
    if scores.shape[1] == 2:  # two classes: numpy's row-wise reductions cost more than this
        first, second = scores[:, 0], scores[:, 1]
        best = (second > first).astype(np.int64)
        gap = np.abs(first - second)
        top_scale = np.maximum(scale[:, 0], scale[:, 1])
    else:
        best = np.argmax(scores, axis=1)
        top2 = np.partition(scores, -2, axis=1)[:, -2:]
        gap = top2[:, 1] - top2[:, 0]
        top_scale = scale.max(axis=1)
    top_scale += 1.0  # (a new array either way: safe to change in place)
    top_scale *= TIE_MARGIN
    return best, (~(gap > top_scale)).nonzero()[0]


class PipelineBatch(BatchPredictor):
    """A river pipeline whose last step has a vectorised decision (`DenseBatch.in_pipeline`:
    GaussianNB, logistic regression, kNN). Rows of plain numbers through
    standard scalers alone are scaled as arrays (`scaled_rows`). Otherwise each row's features
    go through the pipeline's transformers as `predict_one` sends them, when the prediction is
    made (transformers learn too), then the last step decides for the rows at once, grouped by
    their features' names (rows may differ in the features they have: `one-hot-text` adds one
    for a category it has not seen) — or, where its own `predict_one` costs less than grouping
    (`group_transformed` False), answers them one by one. Rows near a tie, or with a value that
    is no plain number, get the pipeline's own answer.

    Example
    -------

    >>> from transforms.models.naive_bayes_batch import GaussianNBBatch
    >>> from transforms.models.specs import ModelSpec
    >>> model = ModelSpec.parse("one-hot-text | gaussian-nb").build()
    >>> for a, c, y in [(0.0, "p", "u"), (0.2, "q", "u"), (5.0, "p", "v"), (5.3, "q", "v")]:
    ...     model.learn_one({"a": a, "c": c}, y)
    >>> xs = [{"a": 0.1, "c": "p"}, {"a": 4.9, "c": "q"}, {"a": 2.6, "c": "r"}]
    >>> codes, labels = PipelineBatch(GaussianNBBatch).predict(model, None, xs)
    >>> [labels[c] for c in codes] == [model.predict_one(x) for x in xs]
    True

    """

    dense = True  # rows of plain numbers (`DenseBatch.encode`) are kept: see `scaled_rows`

    def __init__(self, last: type[DenseBatch]):
        self.last = last
        self.raw = DenseBatch()  # the rows as they come, before the transformers
        self.encode = self.raw.encode
        self.scaled = last()  # the last step on scaled rows (a scaler keeps the names)

    @property
    def names(self) -> tuple | None:
        """The features of the rows, in their order (a wrapper's batch may set them)."""
        return self.raw.names

    @names.setter
    def names(self, names: tuple | None) -> None:
        self.raw.names = names

    def predict(self, model, rows, xs):
        if learns_while_predicting(model):
            return super().predict(model, rows, xs)
        *transformers, step = model.steps.values()
        scaled = None if rows is None else scaled_rows(transformers, self.raw.names, rows)
        if scaled is not None:  # every transformer a standard scaler: no row goes one by one
            self.scaled.names = self.raw.names
            state = self.scaled.state(step, self.raw.names)
            if state is not None:
                return finish_unsure(model, xs, *self.scaled.decide_with(scaled, state))
        if not self.last.group_transformed:
            return super().predict(model, rows, xs)
        transformed = []
        for x in xs:
            x, step = model._transform_one(x)
            transformed.append(x)
        groups: dict = {}
        for i, x in enumerate(transformed):
            groups.setdefault(tuple(x), []).append(i)
        union = list(dict.fromkeys(name for names in groups for name in names))
        group = self.last()
        state = group.state(step, union) if step is not None else None
        column = {name: j for j, name in enumerate(union)}
        codes, labels = np.full(len(xs), NONE, dtype=np.int64), []
        for names, at in groups.items():
            group = self.last()
            group.names = names
            encoded = [group.encode(transformed[i]) for i in at]
            xs_at = [transformed[i] for i in at]
            if state is not None and all(r is not None for r in encoded):
                decided = group.decide_with(
                    np.array(encoded).reshape(len(at), len(names)),
                    group.select(state, [column[name] for name in names]))
                got = finish_unsure(step, xs_at, *decided)
            else:  # (rare: a value that is no number; an untrained model)
                got = as_codes([step.predict_one(x) for x in xs_at])
            codes, labels = merge_codes(codes, labels, np.array(at), *got)
        return codes, labels


def scaled_rows(transformers: list, names: tuple, rows: np.ndarray):
    """Dense rows (features `names`) through river `StandardScaler`s, as their
    `transform_one` gives them — (x − mean) / var ** 0.5, 0 where the variance is 0 — bit for
    bit (the same operations on the same doubles; the roots are Python's, as river's); None
    when a transformer is anything else.

    >>> from river import preprocessing
    >>> scaler = preprocessing.StandardScaler()
    >>> for a in (1.0, 2.0, 3.0):
    ...     scaler.learn_one({"a": a, "b": 5.0})
    >>> scaled_rows([scaler], ("a", "b"), np.array([[4.0, 7.0]])).tolist()
    [[2.449489742783178, 0.0]]
    >>> scaler.transform_one({"a": 4.0, "b": 7.0})
    {'a': 2.449489742783178, 'b': 0.0}
    """
    from river.preprocessing import StandardScaler

    for scaler in transformers:
        if type(scaler) is not StandardScaler or scaler.window_size is not None:
            return None
        means = np.array([scaler.means.get(name, 0.0) for name in names])
        rows = rows - means
        if scaler.with_std:
            variances = [scaler.vars.get(name, 0.0) for name in names]
            known = np.array([v != 0.0 for v in variances], dtype=bool)
            rows[:, known] /= np.array([v ** 0.5 for v in variances if v])
            rows[:, ~known] = 0.0
    return rows


def learns_while_predicting(pipeline) -> bool:
    """Whether the pipeline's unsupervised steps learn as it predicts (river's
    `compose.learn_during_predict()`; unknown: as if they did): then only its own methods
    predict as it does.

    >>> from transforms.models.specs import ModelSpec
    >>> learns_while_predicting(ModelSpec.parse("standard-scaler | gaussian-nb").build())
    False
    """
    return getattr(pipeline, "_LEARN_UNSUPERVISED_DURING_PREDICT", True)


def batch_predictor(model) -> BatchPredictor:
    """The fastest exact way to predict many rows with `model`.

    >>> from river import naive_bayes, linear_model
    >>> type(batch_predictor(naive_bayes.GaussianNB())).__name__
    'GaussianNBBatch'
    >>> type(batch_predictor(linear_model.Perceptron())).__name__
    'BatchPredictor'
    """
    from river.compose import Pipeline
    from river.linear_model import LogisticRegression
    from river.naive_bayes import GaussianNB
    from river.tree import (HoeffdingAdaptiveTreeClassifier, HoeffdingAdaptiveTreeRegressor,
                            HoeffdingTreeClassifier, HoeffdingTreeRegressor)

    from transforms.models import forest_batch, knn_batch, rules_batch
    from transforms.models.binary import BinaryLabels, BinaryLabelsBatch
    from transforms.models import linear_batch
    from transforms.models.naive_bayes_batch import GaussianNBBatch
    from transforms.models.specs import Majority, NoChange
    from transforms.models.temporal import TemporalCorrection, TemporallyAugmented
    from transforms.models.temporal_batch import (TemporalCorrectionBatch,
                                                  TemporallyAugmentedBatch)
    from transforms.models.tree_batch import (HoeffdingAdaptiveTreeBatch,
                                              HoeffdingAdaptiveTreeRegressorBatch,
                                              HoeffdingTreeBatch, HoeffdingTreeRegressorBatch)

    kind = type(model)
    if kind is GaussianNB:
        return GaussianNBBatch()
    if kind is LogisticRegression and linear_batch.fits_batch(model):
        return linear_batch.LogisticRegressionBatch()
    if linear_batch.fits_regression_batch(model):
        return linear_batch.LinearRegressionBatch()
    if knn_batch.fits_batch(model):
        return knn_batch.KNNBatch()
    if knn_batch.fits_regressor_batch(model):
        return knn_batch.KNNRegressorBatch()
    if kind is Pipeline:
        last = batch_predictor(list(model.steps.values())[-1])
        return PipelineBatch(type(last)) if getattr(last, "in_pipeline", False) \
            else BatchPredictor()
    if kind is BinaryLabels:
        return BinaryLabelsBatch(batch_predictor(model.model))
    if kind is HoeffdingTreeClassifier:
        return HoeffdingTreeBatch()
    if kind is HoeffdingAdaptiveTreeClassifier:
        return HoeffdingAdaptiveTreeBatch()
    if kind is HoeffdingTreeRegressor:
        return HoeffdingTreeRegressorBatch()
    if kind is HoeffdingAdaptiveTreeRegressor:
        return HoeffdingAdaptiveTreeRegressorBatch()
    if forest_batch.fits_batch(model):
        return forest_batch.TreeEnsembleBatch()
    if forest_batch.fits_regressor_batch(model):
        return forest_batch.TreeRegressorEnsembleBatch()
    if rules_batch.fits_batch(model):
        return rules_batch.AMRulesBatch()
    if kind is TemporalCorrection:
        return TemporalCorrectionBatch(model)
    if kind is TemporallyAugmented:
        return TemporallyAugmentedBatch()
    if kind in (Majority, NoChange):
        return ConstantBatch()
    return BatchPredictor()
