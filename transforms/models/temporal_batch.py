"""The temporal wrappers (`temporal.py`), many rows at once, through the batch of the model
they wrap (`batch.batch_predictor`).

- `TemporalCorrectionBatch`: the wrapped model's class probabilities for the rows, from its
  batch, each multiplied by the correction P(c | latest label) / P(c) — the same for every row
  at one moment — and the most probable class taken, as `TemporalCorrection.predict_one`
  does. The batch's probabilities may differ from river's in the last units, so a row whose
  best two are within the tie margin gets the wrapper's own `predict_one`.
- `TemporallyAugmentedNaiveBayesBatch`: `TemporallyAugmented` around a naive Bayes, the same
  way, with each class's likelihood of the lags known now as its weight.
- `TemporallyAugmentedBatch`: around any other model, the rows with the lagged labels' one-hot
  columns appended (the same for every row at one moment), decided by the wrapped model's
  batch: exactly its `predict_one` of the augmented row.
"""

from __future__ import annotations

import numpy as np

from transforms.models.batch import DenseBatch, argmax_with_margin, finish_unsure


class _WeightedBatch(DenseBatch):
    """The wrapped model's batch probabilities, each class's multiplied by a weight the same
    for every row at one moment (`weights`), renormalised, and the most probable class taken.
    The batch's probabilities may differ from river's in the last units, so a row whose best
    two are within the tie margin gets the wrapper's own `predict_one`."""

    def __init__(self, model):
        from transforms.models.batch import batch_predictor

        super().__init__()
        self.inner = batch_predictor(model._model)

    def encode(self, x: dict):
        return super().encode(x) if self.inner.dense else None

    @property
    def absent_features(self) -> bool:
        return getattr(self.inner, "absent_features", False)

    def weights(self, model, labels: list) -> np.ndarray | None:
        """Each class's weight now (None: the probabilities as they are)."""
        raise NotImplementedError

    def predict(self, model, rows, xs):
        from transforms.models.naive_bayes_batch import predict_with_proba

        scored = predict_with_proba(model._model)
        if rows is None or scored is None:
            return super(DenseBatch, self).predict(model, rows, xs)
        self.inner.names = self.names
        _, labels, proba = self.inner.predict_scored(model._model, rows, xs, scored)
        if not len(labels):  # (no class yet)
            return super(DenseBatch, self).predict(model, rows, xs)
        weights = self.weights(model, labels)
        if weights is not None:
            weighted = proba * weights
            total = weighted.sum(axis=1)
            # (nothing survives the weights: the classifier's view, as the wrapper keeps it)
            proba = np.where((total > 0)[:, None], weighted / np.where(
                total > 0, total, 1.0)[:, None], proba)
        best, unsure = argmax_with_margin(proba, np.zeros_like(proba))
        none = np.isnan(proba).any(axis=1).nonzero()[0]  # (no probabilities: its own None)
        return finish_unsure(model, xs, best, labels, np.union1d(unsure, none), None)


class TemporalCorrectionBatch(_WeightedBatch):
    """`TemporalCorrection`: the wrapped model's batch probabilities, corrected.

    Example
    -------

    >>> import itertools
    >>> from river.datasets import synth
    >>> from transforms.models.temporal import TemporalCorrection
    >>> model = TemporalCorrection("gaussian-nb")
    >>> data = list(itertools.islice(synth.Agrawal(seed=1), 400))
    >>> for x, y in data[:300]:
    ...     model.learn_one(x, y)
    >>> batch = TemporalCorrectionBatch(model)
    >>> xs = [x for x, _ in data[300:]]
    >>> codes, labels = batch.predict(model, np.array([batch.encode(x) for x in xs]), xs)
    >>> [labels[c] for c in codes] == [model.predict_one(x) for x in xs]
    True
    """

    def weights(self, model, labels):
        if model._last is None or not model._pairs.get(model._last) or not model.uses_labels:
            return None
        # P(c | latest) / P(c); 0 for a class no label has had (the wrapper leaves it out)
        return np.array([model.transition(model._last, c) / model.prior(c)
                         if model.prior(c) > 0 else 0.0 for c in labels])


class TemporallyAugmentedNaiveBayesBatch(_WeightedBatch):
    """`TemporallyAugmented` around a naive Bayes: the wrapped model's batch probabilities
    times each class's likelihood of the lags known now (`lag_likelihood`).

    Example
    -------

    >>> import itertools
    >>> from river.datasets import synth
    >>> from transforms.models.temporal import TemporallyAugmented
    >>> model = TemporallyAugmented("gaussian-nb", lags=2)
    >>> data = list(itertools.islice(synth.Agrawal(seed=1), 400))
    >>> for x, y in data[:300]:
    ...     model.learn_one(x, y)
    >>> batch = TemporallyAugmentedNaiveBayesBatch(model)
    >>> xs = [x for x, _ in data[300:]]
    >>> codes, labels = batch.predict(model, np.array([batch.encode(x) for x in xs]), xs)
    >>> [labels[c] for c in codes] == [model.predict_one(x) for x in xs]
    True
    """

    def weights(self, model, labels):
        if not model.uses_labels:
            return None
        return np.array([model.lag_likelihood(c) for c in labels])


class TemporallyAugmentedBatch(DenseBatch):
    """`TemporallyAugmented`: the rows with the lagged labels' columns, decided by the wrapped
    model's batch (a new one when the columns change: a class seen anew adds some).

    Example
    -------

    >>> import itertools
    >>> from river.datasets import synth
    >>> from transforms.models.temporal import TemporallyAugmented
    >>> model = TemporallyAugmented("hoeffding-tree", lags=2)
    >>> data = list(itertools.islice(synth.Agrawal(seed=1), 400))
    >>> for x, y in data[:300]:
    ...     model.learn_one(x, y)
    >>> batch = TemporallyAugmentedBatch()
    >>> xs = [x for x, _ in data[300:]]
    >>> codes, labels = batch.predict(model, np.array([batch.encode(x) for x in xs]), xs)
    >>> [labels[c] for c in codes] == [model.predict_one(x) for x in xs]
    True
    """

    def __init__(self, absent_features: bool = False):
        super().__init__()
        # Whether the wrapped model's batch takes rows that lack features (the lags' columns
        # add none): so does this one.
        self.absent_features = absent_features
        self._inner = None  # the wrapped model's batch, for the columns it was made for
        self._alone = None  # a guarded wrapper's model without the lags: its batch

    def __getstate__(self):
        return self.__dict__ | {"_inner": None, "_alone": None}  # (caches: made again)

    def predict(self, model, rows, xs):
        from transforms.models.batch import batch_predictor

        if rows is None or not rows.shape[1] == len(self.names or ()):
            return super(DenseBatch, self).predict(model, rows, xs)
        if not model.uses_labels:  # (guarded: the model without the lags answers)
            if self._alone is None or self._alone.names != self.names:
                self._alone = batch_predictor(model._alone)
                self._alone.names = self.names
            if not self._alone.dense:
                return super(DenseBatch, self).predict(model, rows, xs)
            return self._alone.predict(model._alone, rows, xs)
        lagged = model.augment({})  # the lagged labels' columns, as the wrapper adds them
        names = (*self.names, *lagged)
        if len(set(names)) < len(names):  # (a feature named like a lag column)
            return super(DenseBatch, self).predict(model, rows, xs)
        if self._inner is None or self._inner.names != names:
            self._inner = batch_predictor(model._model)
            self._inner.names = names
        if not self._inner.dense:
            return super(DenseBatch, self).predict(model, rows, xs)
        augmented = np.hstack([rows, np.tile(np.array(list(lagged.values())), (len(rows), 1))])
        return self._inner.predict(model._model, augmented, [model.augment(x) for x in xs])
