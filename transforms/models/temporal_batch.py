"""The temporal wrappers (`temporal.py`), many rows at once, through the batch of the model
they wrap (`batch.batch_predictor`).

- `TemporalCorrectionBatch`: the wrapped model's class probabilities for the rows, from its
  batch, each multiplied by the correction P(c | latest label) / P(c) — the same for every row
  at one moment — and the most probable class taken, as `TemporalCorrection.predict_one`
  does. The batch's probabilities may differ from river's in the last units, so a row whose
  best two are within the tie margin gets the wrapper's own `predict_one`.
- `TemporallyAugmentedBatch`: the rows with the lagged labels' one-hot columns appended (the
  same for every row at one moment), decided by the wrapped model's batch: exactly its
  `predict_one` of the augmented row.
"""

from __future__ import annotations

import numpy as np

from transforms.models.batch import DenseBatch, argmax_with_margin, finish_unsure


class TemporalCorrectionBatch(DenseBatch):
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

    def __init__(self, model):
        from transforms.models.batch import batch_predictor

        super().__init__()
        self.inner = batch_predictor(model._model)

    def encode(self, x: dict):
        return super().encode(x) if self.inner.dense else None

    def predict(self, model, rows, xs):
        from transforms.models.naive_bayes_batch import predict_with_proba

        scored = predict_with_proba(model._model)
        if rows is None or scored is None:
            return super(DenseBatch, self).predict(model, rows, xs)
        self.inner.names = self.names
        _, labels, proba = self.inner.predict_scored(model._model, rows, xs, scored)
        if not len(labels):  # (no class yet)
            return super(DenseBatch, self).predict(model, rows, xs)
        if model._last is not None and model._pairs.get(model._last):
            # P(c | latest) / P(c); 0 for a class no label has had (the wrapper leaves it out)
            factors = np.array([model.transition(model._last, c) / model.prior(c)
                                if model.prior(c) > 0 else 0.0 for c in labels])
            corrected = proba * factors
            total = corrected.sum(axis=1)
            # (nothing survives the correction: the classifier's view, as the wrapper keeps it)
            proba = np.where((total > 0)[:, None], corrected / np.where(
                total > 0, total, 1.0)[:, None], proba)
        best, unsure = argmax_with_margin(proba, np.zeros_like(proba))
        none = np.isnan(proba).any(axis=1).nonzero()[0]  # (no probabilities: its own None)
        return finish_unsure(model, xs, best, labels, np.union1d(unsure, none), None)


class TemporallyAugmentedBatch(DenseBatch):
    """`TemporallyAugmented`: the rows with the lagged labels' columns, decided by the wrapped
    model's batch (a new one when the columns change: a class seen anew adds some).

    Example
    -------

    >>> import itertools
    >>> from river.datasets import synth
    >>> from transforms.models.temporal import TemporallyAugmented
    >>> model = TemporallyAugmented("gaussian-nb", lags=2)
    >>> data = list(itertools.islice(synth.Agrawal(seed=1), 400))
    >>> for x, y in data[:300]:
    ...     model.learn_one(x, y)
    >>> batch = TemporallyAugmentedBatch()
    >>> xs = [x for x, _ in data[300:]]
    >>> codes, labels = batch.predict(model, np.array([batch.encode(x) for x in xs]), xs)
    >>> [labels[c] for c in codes] == [model.predict_one(x) for x in xs]
    True
    """

    def __init__(self):
        super().__init__()
        self._inner = None  # the wrapped model's batch, for the columns it was made for

    def __getstate__(self):
        return self.__dict__ | {"_inner": None}  # (a cache: made again)

    def predict(self, model, rows, xs):
        from transforms.models.batch import batch_predictor

        if rows is None or not rows.shape[1] == len(self.names or ()):
            return super(DenseBatch, self).predict(model, rows, xs)
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
