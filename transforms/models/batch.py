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
- `PipelineBatch`: a river pipeline ending in one of these; rows through `one-hot-text` and
  standard scalers as arrays, through other transformers one by one.
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
- `TemporalCorrectionBatch`, `TemporallyAugmentedNaiveBayesBatch`,
  `TemporallyAugmentedBatch` (`temporal_batch`): the temporal wrappers, through the batch of
  the model they wrap.
- `ConstantBatch`: models whose prediction does not depend on x (Majority, No-Change).

numpy's `exp`/`log` may differ from libm's in the last bit, so a vectorised decision is kept
only when the best class wins by a clear margin; rows within 1e-9 (relative) of a tie, rows whose
features are not plain numbers with the first instance's keys (or, for a model that leaves out
a feature a row lacks, `DenseBatch.absent_features`, any keys — in the key order of the rows
before, for a model whose sums follow it, `DenseBatch.key_order`), and anything a fast path
does not know, are predicted with `predict_one`. A test compares every path with `predict_one`.

`batch_predictor(model)` picks the fast path for a model, or `BatchPredictor` (one `predict_one`
per row).
"""
from __future__ import annotations

import math
import sys
from numbers import Real

import numpy as np

NONE = -1  # code of "no prediction" (an untrained river model returns None)
TIE_MARGIN = 1e-9


def loaded(path: str):
    """The class `path` names (`package.Class`) if its package has been imported, else None.
    No model is an instance of a class whose package was never imported, so asking whether one
    is need not import it: river's `naive_bayes`, `tree` and `linear_model` import scipy.stats,
    ~0.5 s of a backfill (whose logged models are none of them) or of a run of baselines.

    >>> loaded("numbers.Real") is Real, loaded("river.no_such_package.Model")
    (True, None)
    """
    package, name = path.rsplit(".", 1)
    module = sys.modules.get(package)
    return None if module is None else getattr(module, name)


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
    `predict_one` — unless the model's decision leaves out a feature a row lacks, as its
    `predict_one` does (`absent_features`): then `names` gain each new key as rows bring it,
    and a row holds NaN for a feature it lacks (no value is NaN: those rows are left out).

    >>> batch = DenseBatch()
    >>> batch.absent_features = True
    >>> [batch.encode(x).tolist() for x in ({"a": 1.0}, {"b": 2.0, "a": 3.0}, {"b": 4.0})]
    [[1.0], [3.0, 2.0], [nan, 4.0]]
    >>> batch.names
    ('a', 'b')

    A model that sums over a row's features in the row's key order, bit for bit (`key_order`),
    takes a row only if its keys come in the order of every row taken before
    (`key_columns`: the columns in that order, None while it is the names' own):

    >>> batch = DenseBatch()
    >>> batch.absent_features = batch.key_order = True
    >>> [batch.encode(x).tolist() for x in ({"a": 1.0, "c": 3.0}, {"a": 1.0, "b": 2.0, "c": 3.0})]
    [[1.0, 3.0], [1.0, 3.0, 2.0]]
    >>> batch.names, batch.key_columns, batch.encode({"c": 3.0, "a": 1.0})
    (('a', 'c', 'b'), [0, 2, 1], None)

    """

    dense = True
    absent_features = False
    key_order = False
    key_columns: list | None = None

    def __init__(self):
        self.names: tuple | None = None

    def encode(self, x: dict):
        names = tuple(x)
        if self.names is None:
            self.names = names
        values = tuple(x.values())
        if names != self.names or self.key_columns is not None:
            if not self.absent_features or not plain_numbers(values):
                return None
            columns = self._columns_of(x)
            if self.key_order and not self._in_key_order(columns):
                return None
            row = np.full(len(self.names), math.nan)
            row[columns] = values
            return row
        return np.array(values, dtype=np.float64) if plain_numbers(values) else None

    def _in_key_order(self, columns: list) -> bool:
        """Whether a row's features (at `columns`, in its key order) come in `key_columns`'
        order."""
        if self.key_columns is not None:
            if getattr(self, "_ranked", None) is not self.key_columns:
                self._ranked, self._rank = self.key_columns, [0] * len(self.key_columns)
                for rank, j in enumerate(self.key_columns):
                    self._rank[j] = rank
            columns = [self._rank[j] for j in columns]
        return all(a < b for a, b in zip(columns, columns[1:]))

    def _column_index(self) -> dict:
        """{feature: column} of `names` (made again when they are set anew: a wrapper may)."""
        if getattr(self, "_indexed_names", None) is not self.names:
            self._indexed_names = self.names
            self._feature_column = {name: j for j, name in enumerate(self.names or ())}
        return self._feature_column

    def _columns_of(self, x: dict) -> list:
        """The column of each of x's keys; a key no row had before gets the next one (`names`
        grow: `absent_features`)."""
        column = self._column_index()
        new = [name for name in x if name not in column]
        if new:
            for name in new:
                column[name] = len(column)
                self._new_column(x[name])
            self.names = self._indexed_names = self.names + tuple(new)
            if self.key_order:  # each new feature right after the one before it in x
                order = list(self.key_columns or range(len(column) - len(new)))
                before = None
                for name in x:
                    if name in new:
                        order.insert(0 if before is None else order.index(column[before]) + 1,
                                     column[name])
                    before = name
                self.key_columns = None if order == sorted(order) else order
        return [column[name] for name in x]

    def _new_column(self, value) -> None:
        """A feature no row had before, first seen with `value`."""

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


def plain_numbers(values) -> bool:
    """Whether every value is a finite number: an int, a float, or a bool (a table's true /
    false column), which river's models take as the number 1 or 0 (a tree splits it as a
    number, a Gaussian counts it as one) — not text.

    >>> plain_numbers((1, 2.5)), plain_numbers((1.0, float("nan"))), plain_numbers((True,))
    (True, False, True)
    """
    for v in values:
        kind = type(v)
        if kind is float:  # the usual case, checked first: finite (inf − inf is NaN)
            if v - v != 0.0:
                return False
        elif kind is not int and kind is not bool and (not isinstance(v, Real)
                                                       or not math.isfinite(v)):
            return False
    return True


class TextCodedRows(DenseBatch):
    """Rows of numbers and texts, in the key order of the first instance encoded; a column
    whose first value is text holds texts, each stored as its code: the order in which this
    object first met it in that column (`words[j][code]` is the text). What `one_hot_rows`
    turns into the rows `one-hot-text` makes.

    Example
    -------

    >>> batch = TextCodedRows()
    >>> [batch.encode(x).tolist() for x in ({"a": 1.5, "c": "red"}, {"a": 2.0, "c": "blue"},
    ...                                      {"a": 0.5, "c": "red"})]
    [[1.5, 0.0], [2.0, 1.0], [0.5, 0.0]]
    >>> batch.words, batch.encode({"a": 1.0, "c": 3.0}), batch.encode({"a": "x", "c": "red"})
    ([[], ['red', 'blue']], None, None)

    With `absent_features`, a row may lack features (NaN) or bring new ones, a column holding
    what its first value holds:

    >>> batch.absent_features = True
    >>> batch.encode({"c": "blue", "d": "x"}).tolist(), batch.names, batch.text
    ([nan, 1.0, 0.0], ('a', 'c', 'd'), (False, True, True))

    """

    def __init__(self):
        super().__init__()
        self.text: tuple = ()  # per column, whether it holds text
        self.words: list = []  # per column, its texts in the order of their codes
        self._codes: list = []  # per column, {text: code}

    def encode(self, x: dict):
        if self.names is None:
            self.names = ()
            self._columns_of(x)
        same = tuple(x) == self.names
        if same and not any(self.text) or len(self.text) != len(self.names):
            return super().encode(x)  # (numbers only; or names a wrapper set: numbers)
        if not same and not self.absent_features:
            return None
        columns = range(len(x)) if same else self._columns_of(x)
        values, numbers = [math.nan] * len(self.names), []
        for j, v in zip(columns, x.values()):
            if not self.text[j]:
                numbers.append(v)
            elif type(v) is not str:
                return None
            else:
                code = self._codes[j].get(v)
                if code is None:
                    code = self._codes[j][v] = len(self.words[j])
                    self.words[j].append(v)
                v = code
            values[j] = v
        return np.array(values, dtype=np.float64) if plain_numbers(numbers) else None

    def _new_column(self, value) -> None:
        self.text += (type(value) is str,)
        self.words.append([])
        self._codes.append({})


def one_hot_rows(encoder, coded: TextCodedRows, rows: np.ndarray, cache: dict):
    """Rows `coded` encoded through a `OneHotText` encoder, as its `transform_one` makes them:
    (feature names, rows over them, the rows it would give other features: a text it has not
    learned, left to the pipeline's own `predict_one`); None where two features would share a
    name. `cache` keeps the columns' places between calls, while the texts stay the same.

    >>> from transforms.models.encoding import OneHotText
    >>> encoder, coded = OneHotText(), TextCodedRows()
    >>> xs = [{"a": 1.5, "c": "red"}, {"a": 2.0, "c": "blue"}, {"a": 0.5, "c": "green"}]
    >>> for x in xs[:2]:
    ...     encoder.learn_one(x)
    >>> names, rows, own = one_hot_rows(encoder, coded, np.array([coded.encode(x) for x in xs]), {})
    >>> names, rows.tolist(), own.tolist()
    (('a', 'c_red', 'c_blue'), [[1.5, 1.0, 0.0], [2.0, 0.0, 1.0], [0.5, 0.0, 0.0]], [2])
    >>> encoder.transform_one(xs[1])
    {'a': 2.0, 'c_red': 0, 'c_blue': 1}
    """
    text = coded.text if coded.text is not None and len(coded.text) == rows.shape[1] \
        else (False,) * rows.shape[1]  # (names a wrapper set: its rows are numbers)
    learned = [encoder.values.get(name, {}) if text[j] else None  # {text: its feature}
               for j, name in enumerate(coded.names)]
    key = (coded.names, text, *((id(known), len(known), len(coded.words[j]))  # (all only grow)
                                for j, known in enumerate(learned) if known is not None))
    if cache.get("key") != key:
        cache.clear()
        cache["key"], cache["layout"] = key, _one_hot_layout(coded, learned)
    if cache["layout"] is None:
        return None
    names, source, target, blocks = cache["layout"]
    out = np.zeros((len(rows), len(names)))
    out[:, target] = rows[:, source]
    unknown = np.zeros(len(rows), dtype=bool)
    for j, start, width, position in blocks:
        codes = rows[:, j]
        lacking = np.isnan(codes)  # (`absent_features`: the row has no such feature)
        if lacking.any():  # the encoder gives it none of the block's: absent, NaN
            out[lacking, start:start + width] = math.nan
            codes = np.where(lacking, -1, codes)
        at = position[codes.astype(np.int64)]  # each row's text among the learned ones
        known = at >= 0
        unknown |= ~(known | lacking)
        out[known.nonzero()[0], start + at[known]] = 1.0
    return names, out, unknown.nonzero()[0]


def _one_hot_layout(coded: TextCodedRows, learned: list):
    """Where `one_hot_rows` puts each column: (feature names, the number columns' places in
    the rows and in the output, per text column (its place in the rows, its block's first
    place in the output and width, each code's position among the texts learned, −1: not
    learned));
    None where two features would share a name."""
    names, source, target, blocks = [], [], [], []
    for j, name in enumerate(coded.names):
        known = learned[j]
        if known is None:
            source.append(j)
            target.append(len(names))
            names.append(name)
            continue
        position = {v: i for i, v in enumerate(known)}
        blocks.append((j, len(names), len(known), np.array(
            [position.get(w, -1) for w in coded.words[j]] + [-1], dtype=np.int64)))
        names.extend(known.values())
    if len(set(names)) < len(names):
        return None
    return tuple(names), np.array(source, dtype=np.int64), np.array(target, dtype=np.int64), \
        blocks


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
    GaussianNB, logistic regression, kNN). Rows through a first `one-hot-text` (texts kept as
    codes, `TextCodedRows`) and standard scalers are encoded and scaled as arrays
    (`one_hot_rows`, `scaled_rows`), as the transformers stand at the prediction. Rows any other
    transformer takes, or with a text the encoder has not learned (it gives them other
    features), go through the pipeline's transformers one by one as `predict_one` sends them;
    the last step then decides for them at once, grouped by their features' names — or, where
    its own `predict_one` costs less than grouping (`group_transformed` False), answers them
    one by one. Rows near a tie, or with a value that is no plain number, get the pipeline's own
    answer.

    Example
    -------

    >>> from transforms.models.naive_bayes_batch import GaussianNBBatch
    >>> from transforms.models.specs import ModelSpec
    >>> model = ModelSpec.parse("one-hot-text | gaussian-nb").build()
    >>> for a, c, y in [(0.0, "p", "u"), (0.2, "q", "u"), (5.0, "p", "v"), (5.3, "q", "v")]:
    ...     model.learn_one({"a": a, "c": c}, y)
    >>> xs = [{"a": 0.1, "c": "p"}, {"a": 4.9, "c": "q"}, {"a": 2.6, "c": "r"}]
    >>> batch = PipelineBatch(GaussianNBBatch, one_hot=True)
    >>> rows = np.array([batch.encode(x) for x in xs])  # ("r": not learned, one by one)
    >>> codes, labels = batch.predict(model, rows, xs)
    >>> [labels[c] for c in codes] == [model.predict_one(x) for x in xs]
    True

    """

    dense = True  # rows of plain numbers (`DenseBatch.encode`) are kept: see `scaled_rows`

    def __init__(self, last: type[DenseBatch], one_hot: bool = False):
        self.last = last
        # The rows as they come, before the transformers; after a first `one-hot-text`, texts
        # too (`TextCodedRows`), one-hot encoded for many rows at once (`one_hot_rows`).
        self.one_hot = one_hot
        self.raw = TextCodedRows() if one_hot else DenseBatch()
        # The transformers give a feature a row lacks to none of their outputs, so where the
        # last step leaves it out, rows may lack features. A scaler keeps the row's key order,
        # which a last step summing in that order needs (`key_order`); one-hot-text makes
        # features of its own, in an order of its own: there such rows go one by one.
        self.raw.key_order = last.key_order and not one_hot
        self.raw.absent_features = self.absent_features = last.absent_features and (
            not one_hot or not last.key_order)
        self._one_hot_cache: dict = {}
        self.encode = self.raw.encode
        self.scaled = last()  # the last step on scaled rows (a scaler keeps the names)

    def __getstate__(self):
        return self.__dict__ | {"_one_hot_cache": {}}  # (made again)

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
        decided = None if rows is None else self._decide_rows(model, rows, xs)
        if decided is None:
            return self._decide_transformed(model, xs)
        codes, labels, others = decided
        if len(others):
            codes, labels = merge_codes(codes, labels, others, *self._decide_transformed(
                model, [xs[i] for i in others]))
        return codes, labels

    def _decide_rows(self, model, rows, xs):
        """(codes, labels, the rows whose features differ from the others': a text the encoder
        has not learned) for dense rows every transformer of which works on arrays; None where
        one does not, or the last step has learned nothing."""
        *transformers, step = model.steps.values()
        names, others = self.raw.names, np.empty(0, dtype=np.int64)
        if self.one_hot:
            encoded = one_hot_rows(transformers.pop(0), self.raw, rows, self._one_hot_cache)
            if encoded is None:
                return None
            names, rows, others = encoded
        scaled = scaled_rows(transformers, names, rows)
        if scaled is None:
            return None
        self.scaled.names = names
        self.scaled.key_columns = self.raw.key_columns
        state = self.scaled.state(step, names)
        if state is None:
            return None
        return *finish_unsure(model, xs, *self.scaled.decide_with(scaled, state)), others

    def _decide_transformed(self, model, xs):
        """Each row through the transformers as `predict_one` sends it, then the last step
        decides for the rows at once, grouped by their features' names (or, where its own
        `predict_one` costs less than grouping, answers them one by one)."""
        if not self.last.group_transformed:
            return super().predict(model, None, xs)
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

    A feature a row lacks (NaN) stays absent, as river's scaler transforms the row's own:

    >>> scaled_rows([scaler], ("a", "b"), np.array([[np.nan, np.nan]])).tolist()
    [[nan, nan]]
    """
    from river.preprocessing import StandardScaler

    for scaler in transformers:
        # (river 0.22's scaler has no window)
        if type(scaler) is not StandardScaler or getattr(scaler, "window_size", None) is not None:
            return None
        means = np.array([scaler.means.get(name, 0.0) for name in names])
        rows = rows - means
        if scaler.with_std:
            variances = [scaler.vars.get(name, 0.0) for name in names]
            known = np.array([v != 0.0 for v in variances], dtype=bool)
            rows[:, known] /= np.array([v ** 0.5 for v in variances if v])
            if not known.all():  # (0, but a feature the row lacks stays absent: NaN)
                rows[:, ~known] = np.where(np.isnan(rows[:, ~known]), math.nan, 0.0)
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
    from transforms.models import forest_batch, knn_batch, rules_batch
    from transforms.models.binary import BinaryLabels, BinaryLabelsBatch
    from transforms.models.encoding import OneHotText
    from transforms.models import linear_batch
    from transforms.models.naive_bayes_batch import GaussianNBBatch
    from transforms.models.specs import Majority, MeanRegressor, NoChange, NoChangeRegressor
    from transforms.models.temporal import TemporalCorrection, TemporallyAugmented
    from transforms.models.temporal_batch import (TemporalCorrectionBatch,
                                                  TemporallyAugmentedBatch,
                                                  TemporallyAugmentedNaiveBayesBatch)
    from transforms.models.tree_batch import (HoeffdingAdaptiveTreeBatch,
                                              HoeffdingAdaptiveTreeRegressorBatch,
                                              HoeffdingTreeBatch, HoeffdingTreeRegressorBatch)

    kind = type(model)
    if kind is loaded("river.naive_bayes.GaussianNB"):
        return GaussianNBBatch()
    if kind is loaded("river.linear_model.LogisticRegression") and linear_batch.fits_batch(model):
        return linear_batch.LogisticRegressionBatch()
    if linear_batch.fits_regression_batch(model):
        return linear_batch.LinearRegressionBatch()
    if knn_batch.fits_batch(model):
        return knn_batch.KNNBatch()
    if knn_batch.fits_regressor_batch(model):
        return knn_batch.KNNRegressorBatch()
    if kind is loaded("river.compose.Pipeline"):
        last = batch_predictor(list(model.steps.values())[-1])
        first = list(model.steps.values())[0]
        return PipelineBatch(type(last), one_hot=type(first) is OneHotText) \
            if getattr(last, "in_pipeline", False) else BatchPredictor()
    if kind is BinaryLabels:
        return BinaryLabelsBatch(batch_predictor(model.model))
    trees = {"HoeffdingTreeClassifier": HoeffdingTreeBatch,
             "HoeffdingAdaptiveTreeClassifier": HoeffdingAdaptiveTreeBatch,
             "HoeffdingTreeRegressor": HoeffdingTreeRegressorBatch,
             "HoeffdingAdaptiveTreeRegressor": HoeffdingAdaptiveTreeRegressorBatch}
    for name, batch in trees.items():
        if kind is loaded(f"river.tree.{name}"):
            return batch()
    if forest_batch.fits_batch(model):
        return forest_batch.TreeEnsembleBatch()
    if forest_batch.fits_regressor_batch(model):
        return forest_batch.TreeRegressorEnsembleBatch()
    if rules_batch.fits_batch(model):
        return rules_batch.AMRulesBatch()
    if kind is TemporalCorrection:
        return TemporalCorrectionBatch(model)
    if kind is TemporallyAugmented:
        return TemporallyAugmentedNaiveBayesBatch(model) if model.nominal else \
            TemporallyAugmentedBatch(getattr(batch_predictor(model._model), "absent_features",
                                             False))
    if kind in (Majority, NoChange, NoChangeRegressor, MeanRegressor):
        return ConstantBatch()
    return BatchPredictor()
