"""river's `linear_model.LogisticRegression`, many rows at once (`LogisticRegressionBatch`).

river predicts True when p > 1 − p, p = sigmoid(w·x + b): that is when w·x + b > 0, except
within rounding of 0, where exp(−z) rounds to 1 and p to 1/2, a tie river gives to False. river
sums w·x in its own order (a Rust `VectorDict`), numpy in another; the two differ by far less
than the margin (1e-9 of Σ|w_i·x_i| + |b| + 1) inside which a row is left to `predict_one`.
"""

from __future__ import annotations

import numpy as np

from transforms.models.batch import TIE_MARGIN, DenseBatch, loaded


def fits_batch(model) -> bool:
    """Whether `LogisticRegressionBatch` decides as the model does: its loss is river's log
    loss (whose mean function is the sigmoid) and it predicts as river's classifiers do.

    >>> from river import linear_model, optim
    >>> fits_batch(linear_model.LogisticRegression())
    True
    >>> fits_batch(linear_model.LogisticRegression(loss=optim.losses.Hinge()))
    False
    """
    from river import base, linear_model, optim

    kind = type(model)
    return type(model.loss) is optim.losses.Log \
        and kind.predict_one is base.Classifier.predict_one \
        and kind.predict_proba_one is linear_model.LogisticRegression.predict_proba_one


def weights_over(model, names) -> tuple:
    """A river linear model's (weights over the features `names`, 0 for a feature it has not
    learned; intercept).

    >>> from river import linear_model
    >>> model = linear_model.LinearRegression()
    >>> model.learn_one({"a": 1.0}, 2.0)
    >>> weights, intercept = weights_over(model, ("a", "b"))
    >>> weights.tolist(), intercept
    ([0.04, 0.0], 0.04)
    """
    weights = model._weights.to_dict()
    return np.array([float(weights.get(name, 0.0)) for name in names]), float(model.intercept)


class _LinearBatch(DenseBatch):
    """A river linear model's rows: its state is its weights over the rows' features."""

    in_pipeline = True
    # Its predict_one is one dot product (in Rust): a transformed row costs more to encode.
    group_transformed = False

    def state(self, model, names):
        return weights_over(model, names)


class LogisticRegressionBatch(_LinearBatch):
    """river `LogisticRegression`: True where w·x + b > 0, by a clear margin.

    Example
    -------

    >>> from river import linear_model
    >>> model = linear_model.LogisticRegression()
    >>> for a, y in [(-2.0, False), (-1.0, False), (1.5, True), (2.5, True)] * 10:
    ...     model.learn_one({"a": a, "b": 1.0}, y)
    >>> batch = LogisticRegressionBatch()
    >>> xs = [{"a": a, "b": 1.0} for a in (-3.0, -0.1, 0.4, 3.0)]
    >>> rows = np.array([batch.encode(x) for x in xs])
    >>> codes, labels = batch.predict(model, rows, xs)
    >>> [labels[c] for c in codes] == [model.predict_one(x) for x in xs]
    True

    """

    absent_features = True  # river's w·x sums over the row's own features

    def decide_with(self, rows, state):
        weights, intercept = state
        absent = np.isnan(rows)  # (`encode`: a feature the row lacks, which adds nothing)
        if absent.any():
            rows = np.where(absent, 0.0, rows)
        z = rows @ weights + intercept
        scale = np.abs(rows) @ np.abs(weights) + (abs(intercept) + 1.0)
        # NaN (diverged weights) is unsure too: river decides it.
        unsure = (~(np.abs(z) > TIE_MARGIN * scale)).nonzero()[0]
        return (z > 0).astype(np.int64), [False, True], unsure, None


def fits_regression_batch(model) -> bool:
    """Whether `LinearRegressionBatch` predicts as the model does: river's `LinearRegression`
    with a loss whose mean function is the identity (squared, absolute, Huber, ...), summing
    w·x in the row's key order (`VectorDict.dot`; river 0.22, for Python 3.10, sums over the
    smaller of weights and row: no fast path there).

    >>> from river import linear_model, optim
    >>> fits_regression_batch(linear_model.LinearRegression())
    True
    >>> fits_regression_batch(linear_model.LinearRegression(loss=optim.losses.Poisson()))
    False
    """
    if type(model) is not loaded("river.linear_model.LinearRegression"):
        return False
    from river import optim, utils

    return type(model.loss).mean_func is optim.losses.RegressionLoss.mean_func \
        and hasattr(utils.VectorDict, "dot")


class LinearRegressionBatch(_LinearBatch):
    """river `LinearRegression`: w·x + b for a matrix of rows, bit for bit. river's weights sum
    w_f·x_f feature by feature in the row's key order, from 0, then add the intercept; here the
    same additions are made along each row.

    Example
    -------

    >>> from river import linear_model
    >>> model = linear_model.LinearRegression()
    >>> for a, y in [(0.1, 1.0), (0.7, 2.1), (0.4, 1.3)] * 20:
    ...     model.learn_one({"a": a, "b": 1.0 - a}, y)
    >>> batch = LinearRegressionBatch()
    >>> xs = [{"a": a, "b": 1.0 - a} for a in (0.0, 0.33, 0.9)]
    >>> codes, values = batch.predict(model, np.array([batch.encode(x) for x in xs]), xs)
    >>> [values[c] for c in codes] == [model.predict_one(x) for x in xs]
    True

    """

    absent_features = True  # river's w·x sums over the row's own features,
    key_order = True  # in the row's key order

    def decide_with(self, rows, state):
        values = key_order_sums(rows, state, self.key_columns)
        return np.arange(len(rows)), values.tolist(), np.empty(0, dtype=np.int64), None


def key_order_sums(rows: np.ndarray, state: tuple, key_columns: list | None) -> np.ndarray:
    """w·x + b of each row, bit for bit as river's `LinearRegression` sums it: w_f·x_f feature
    by feature in the row's key order (the columns in `key_columns`' order; None: theirs),
    from 0, then b. A feature a row lacks (NaN) adds nothing; weights shorter than the rows
    (features named since they were read) are 0 for the rest.

    >>> rows = np.array([[1e16, 1.0, -1e16], [1e16, np.nan, -1e16]])
    >>> state = (np.array([1.0, 1.0, 1.0]), 0.5)
    >>> key_order_sums(rows, state, None).tolist(), key_order_sums(rows, state, [0, 2, 1]).tolist()
    ([0.5, 0.5], [1.5, 0.5])
    """
    weights, intercept = state
    if len(weights) < rows.shape[1]:
        weights = np.pad(weights, (0, rows.shape[1] - len(weights)))
    products = rows * weights
    absent = np.isnan(rows)
    if absent.any():
        products[absent] = 0.0
    if key_columns is not None:
        products = products[:, key_columns]
    if rows.shape[1]:
        products[:, 0] += 0.0  # (river's sum starts from 0: −0.0 + 0 is 0.0)
    # Feature by feature, as river sums them: a running sum along each row is exactly that
    # sequence of additions (numpy's pairwise summation is not).
    values = np.cumsum(products, axis=1)[:, -1] if rows.shape[1] else np.zeros(len(rows))
    values += intercept
    return values
