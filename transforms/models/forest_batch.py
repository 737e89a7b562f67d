"""river's `forest.ARFClassifier` (`adaptive-random-forest`), many rows at once (`ARFBatch`).

river's forest adds its trees' class probabilities, each weighted by the tree's own accuracy
(when above 0), and predicts the most probable class of the normalised sums. Each tree is a
Hoeffding tree, whose probabilities `HoeffdingTreeBatch` gives for many rows; the sums are made
here in the same way, and a row whose best two classes are within the tie margin (or whose
sums are 0) gets the forest's own `predict_one`.
"""

from __future__ import annotations

import numpy as np

from transforms.models.batch import DenseBatch, argmax_with_margin, finish_unsure


def fits_batch(model) -> bool:
    """Whether `ARFBatch` decides as the model does: river's `ARFClassifier` as it predicts
    (its trees Hoeffding trees; `predict_one` the most probable class of `predict_proba_one`).

    >>> from transforms.models.specs import ModelSpec
    >>> fits_batch(ModelSpec.parse("adaptive-random-forest").build())
    True
    """
    from river import base, forest

    kind = type(model)
    return kind is forest.ARFClassifier and kind.predict_one is base.Classifier.predict_one \
        and kind.predict_proba_one is forest.ARFClassifier.predict_proba_one


class ARFBatch(DenseBatch):
    """river `ARFClassifier` (`fits_batch`): its trees' probabilities for the rows, weighted and
    summed as river sums them, the best class by a clear margin.

    Example
    -------

    >>> import itertools
    >>> from river.datasets import synth
    >>> from transforms.models.specs import ModelSpec
    >>> model = ModelSpec.parse('adaptive-random-forest{"n_models": 3}').build()
    >>> data = list(itertools.islice(synth.SEA(seed=1), 600))
    >>> for x, y in data[:500]:
    ...     model.learn_one(x, y)
    >>> batch = ARFBatch()
    >>> xs = [x for x, _ in data[500:]]
    >>> codes, labels = batch.predict(model, np.array([batch.encode(x) for x in xs]), xs)
    >>> [labels[c] for c in codes] == [model.predict_one(x) for x in xs]
    True
    """

    def __init__(self):
        super().__init__()
        self._trees: dict = {}  # id(tree) -> (tree, its HoeffdingTreeBatch)

    def __getstate__(self):
        # Caches of the model's trees: a saved engine makes them again.
        return self.__dict__ | {"_trees": {}}

    def _tree_batch(self, tree):
        from transforms.models.tree_batch import HoeffdingTreeBatch

        kept = self._trees.get(id(tree))
        if kept is None or kept[0] is not tree:
            batch = HoeffdingTreeBatch()
            batch.names = self.names
            kept = self._trees[id(tree)] = (tree, batch)
        return kept[1]

    def predict(self, model, rows, xs):
        from transforms.models.naive_bayes_batch import predict_with_proba

        if rows is None or not len(model):  # (the first prediction builds the forest)
            return super(DenseBatch, self).predict(model, rows, xs)
        columns: dict = {}  # class -> column of `sums`
        sums = np.zeros((len(rows), 0))
        for i, tree in enumerate(model):
            _, labels, proba = self._tree_batch(tree).predict_scored(
                tree, rows, xs, predict_with_proba(tree))
            proba = np.nan_to_num(proba, nan=0.0)  # (a tree with no probabilities adds none)
            weight = model._metrics[i].get()
            if not model.disable_weighted_vote and weight > 0.0:
                proba = proba * weight
            for j, label in enumerate(labels):
                if label not in columns:
                    columns[label] = len(columns)
                    sums = np.column_stack([sums, np.zeros(len(rows))])
                sums[:, columns[label]] += proba[:, j]
        alive = {id(tree) for tree in model}
        self._trees = {k: v for k, v in self._trees.items() if k in alive}
        total = sums.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            shares = sums / total[:, None]
        best, unsure = argmax_with_margin(shares, np.ones_like(shares))
        odd = ~(total > 0.0)  # (no probabilities at all: river's own answer)
        unsure = np.union1d(unsure, odd.nonzero()[0]).astype(np.int64)
        return finish_unsure(model, xs, best, list(columns), unsure, None)
