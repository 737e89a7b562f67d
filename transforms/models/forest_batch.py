"""river's ensembles of Hoeffding trees, many rows at once: `TreeEnsembleBatch`, for the
adaptive random forest (`forest.ARFClassifier`, `adaptive-random-forest`), streaming random
patches (`ensemble.SRPClassifier`) and the bagging ensembles (`ensemble.BaggingClassifier`,
`ADWINBaggingClassifier`, `LeveragingBaggingClassifier`) of Hoeffding trees or Hoeffding
adaptive trees; `TreeRegressorEnsembleBatch`, for their regressors of Hoeffding tree
regressors (`ARFRegressor`, `SRPRegressor`, `BaggingRegressor`).

river's ensemble adds its trees' class probabilities (the forest and SRP weigh each by the
tree's own accuracy, when above 0) and predicts the most probable class of the normalised sums.
Each tree's probabilities for many rows come from its tree batch (`tree_batch`); the sums are
made here in the same way, and a row whose best two classes are within the tie margin (or whose
sums are 0) gets the ensemble's own `predict_one`. An SRP tree sees only its subspace's
features, so only those reach its splits and its leaves' splitters: given the whole row, its
batch reads the same features.
"""

from __future__ import annotations

import numpy as np

from transforms.models.batch import DenseBatch, argmax_with_margin, finish_unsure, loaded


def fits_batch(model) -> bool:
    """Whether `TreeEnsembleBatch` decides as the model does: river's `ARFClassifier`, or an
    SRP or bagging classifier of Hoeffding (adaptive) trees, as they predict (`predict_one` the
    most probable class of river's `predict_proba_one`).

    >>> from river import ensemble, naive_bayes, tree
    >>> from transforms.models.specs import ModelSpec
    >>> fits_batch(ModelSpec.parse("adaptive-random-forest").build())
    True
    >>> fits_batch(ensemble.LeveragingBaggingClassifier(tree.HoeffdingTreeClassifier()))
    True
    >>> fits_batch(ensemble.SRPClassifier(n_models=3, seed=1))
    True
    >>> fits_batch(ensemble.BaggingClassifier(naive_bayes.GaussianNB()))
    False
    >>> fits_batch(ensemble.SRPClassifier(naive_bayes.GaussianNB()))
    False
    """
    if not loaded("river.forest.ARFClassifier") and not loaded("river.ensemble.SRPClassifier"):
        return False  # (neither river.forest nor river.ensemble, whose bagging it is, imported)
    from river import base, ensemble, forest, tree
    from river.ensemble.streaming_random_patches import BaseSRPClassifier

    kind = type(model)
    if kind.predict_one is not base.Classifier.predict_one:
        return False
    if kind is forest.ARFClassifier:
        return kind.predict_proba_one is forest.ARFClassifier.predict_proba_one
    trees = (tree.HoeffdingTreeClassifier, tree.HoeffdingAdaptiveTreeClassifier)
    if issubclass(kind, ensemble.SRPClassifier):
        return kind.predict_proba_one is ensemble.SRPClassifier.predict_proba_one \
            and type(model.model) in trees and all(
                type(member.model) in trees and
                type(member).predict_proba_one is BaseSRPClassifier.predict_proba_one
                for member in model)
    return issubclass(kind, ensemble.BaggingClassifier) \
        and kind.predict_proba_one is ensemble.BaggingClassifier.predict_proba_one \
        and type(model.model) in trees and all(type(member) in trees for member in model)


class TreeEnsembleBatch(DenseBatch):
    """A river ensemble of trees (`fits_batch`): its trees' probabilities for the rows, weighted
    (the forest) and summed as river sums them, the best class by a clear margin.

    Example
    -------

    >>> import itertools
    >>> from river.datasets import synth
    >>> from transforms.models.specs import ModelSpec
    >>> model = ModelSpec.parse('adaptive-random-forest{"n_models": 3}').build()
    >>> data = list(itertools.islice(synth.SEA(seed=1), 600))
    >>> for x, y in data[:500]:
    ...     model.learn_one(x, y)
    >>> batch = TreeEnsembleBatch()
    >>> xs = [x for x, _ in data[500:]]
    >>> codes, labels = batch.predict(model, np.array([batch.encode(x) for x in xs]), xs)
    >>> [labels[c] for c in codes] == [model.predict_one(x) for x in xs]
    True
    """

    absent_features = True  # as its trees' batches

    def __init__(self):
        super().__init__()
        # id(tree) -> (tree, its tree batch, its rows' stamps and probabilities)
        self._trees: dict = {}
        self._columns: dict = {}  # class -> column of the sums, in the order classes came
        self._round = 0

    def __getstate__(self):
        # Caches of the model's trees: a saved engine makes them again.
        return self.__dict__ | {"_trees": {}}

    def _tree(self, tree) -> tuple:
        from river.tree import HoeffdingAdaptiveTreeClassifier

        from transforms.models.tree_batch import HoeffdingAdaptiveTreeBatch, HoeffdingTreeBatch

        kept = self._trees.get(id(tree))
        if kept is None or kept[0] is not tree:
            # (a forest's trees are a subclass of the Hoeffding tree, predicting as it does)
            batch = HoeffdingAdaptiveTreeBatch() \
                if isinstance(tree, HoeffdingAdaptiveTreeClassifier) else HoeffdingTreeBatch()
            kept = self._trees[id(tree)] = (tree, batch, _TreeRows())
        kept[1].names = self.names  # (they grow as rows bring features: `absent_features`)
        return kept

    def _column(self, label) -> int:
        j = self._columns.get(label)
        if j is None:
            j = self._columns[label] = len(self._columns)
        return j

    def predict(self, model, rows, xs):
        from transforms.models.naive_bayes_batch import predict_with_proba

        if rows is None or not len(model):  # (the first prediction builds the forest)
            return super(DenseBatch, self).predict(model, rows, xs)

        def tree_proba(tree):
            _, labels, proba = self._tree(tree)[1].predict_scored(tree, rows, xs,
                                                                  predict_with_proba(tree))
            values, columns = self._in_columns(labels, proba)
            matrix = np.zeros((len(xs), len(self._columns)))
            matrix[:, columns] = values
            return matrix

        return self._vote(model, xs, tree_proba)

    stamps_rows = True

    def predict_changed(self, model, rows, xs, before, at=None, scored=None):
        """`predict` for pending rows `rows[at]`: each tree's probabilities of a row are kept
        with the stamp of its leaf (`HoeffdingTreeBatch.predict_changed`), so a row is routed
        down a tree again only after a split, and scored again only when its leaf learned.
        The sums are all made anew (the forest's weights change with every label)."""
        from transforms.models.naive_bayes_batch import predict_with_proba

        n = len(before)
        at = np.arange(n) if at is None else at
        self._round += 1
        stamps, changed = np.full(n, self._round, dtype=np.int64), np.ones(n, dtype=bool)
        if scored is not None or not len(model):  # (river's own probabilities, row by row)
            if scored is None:
                return (*super(DenseBatch, self).predict(model, None, xs), stamps, changed,
                        None)
            codes, labels, proba = super(DenseBatch, self).predict_scored(model, None, xs,
                                                                          scored)
            return codes, labels, stamps, changed, proba
        fresh = at[before == 0]  # rows new since their last prediction: no tree stamps yet

        def tree_proba(tree):
            _, batch, kept = self._tree(tree)
            kept.reserve(int(at.max()) + 1, fresh)
            _, labels, leaf_stamps, moved, proba = batch.predict_changed(
                tree, rows, xs, kept.stamps[at], at=at, scored=predict_with_proba(tree))
            kept.stamps[at] = leaf_stamps
            if moved.any():
                kept.store(at[moved], *self._in_columns(labels, proba[moved]))
            return kept.proba_of(at, len(self._columns))

        return (*self._vote(model, xs, tree_proba), stamps, changed, None)

    def _in_columns(self, labels: list, proba: np.ndarray) -> tuple:
        """A tree's probabilities (no numbers: 0) and the columns of its labels."""
        return np.nan_to_num(proba, nan=0.0), [self._column(c) for c in labels]

    def _vote(self, model, xs, tree_proba) -> tuple:
        """The ensemble's classes for the rows from its trees' probabilities (`tree_proba(tree)`:
        rows × the columns so far), weighted and summed as river does."""
        sums = np.zeros((len(xs), 0))
        trees = []
        for tree, weight in _weighted_trees(model):
            trees.append(tree)
            proba = tree_proba(tree)
            if weight > 0.0 and not model.disable_weighted_vote:  # (the forest's, SRP's)
                proba = proba * weight
            if proba.shape[1] > sums.shape[1]:
                sums = np.hstack([sums, np.zeros((len(xs), proba.shape[1] - sums.shape[1]))])
            sums[:, :proba.shape[1]] += proba
        alive = {id(tree) for tree in trees}
        self._trees = {k: v for k, v in self._trees.items() if k in alive}
        total = sums.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            shares = sums / total[:, None]
        best, unsure = argmax_with_margin(shares, np.ones_like(shares))
        odd = ~(total > 0.0)  # (no probabilities at all: river's own answer)
        unsure = np.union1d(unsure, odd.nonzero()[0]).astype(np.int64)
        return finish_unsure(model, xs, best, list(self._columns), unsure, None)


def fits_regressor_batch(model) -> bool:
    """Whether `TreeRegressorEnsembleBatch` predicts as the model does: river's `ARFRegressor`,
    `SRPRegressor` or `BaggingRegressor` of Hoeffding (adaptive) tree regressors, with river's
    own `predict_one`.

    >>> from river import ensemble, forest, linear_model, tree
    >>> fits_regressor_batch(forest.ARFRegressor(n_models=3, seed=1))
    True
    >>> fits_regressor_batch(ensemble.SRPRegressor(n_models=3, seed=1))
    True
    >>> fits_regressor_batch(ensemble.BaggingRegressor(tree.HoeffdingTreeRegressor()))
    True
    >>> fits_regressor_batch(ensemble.BaggingRegressor(linear_model.LinearRegression()))
    False
    """
    if not loaded("river.forest.ARFRegressor") and not loaded("river.ensemble.SRPRegressor"):
        return False  # (neither river.forest nor river.ensemble, whose bagging it is, imported)
    from river import ensemble, forest, tree
    from river.ensemble.streaming_random_patches import BaseSRPRegressor

    kind, trees = type(model), (tree.HoeffdingTreeRegressor, tree.HoeffdingAdaptiveTreeRegressor,
                                forest.adaptive_random_forest.BaseTreeRegressor)
    if kind is forest.ARFRegressor:
        return all(type(member) in trees for member in model)
    if kind is ensemble.SRPRegressor:
        return type(model.model) in trees and all(
            type(member.model) in trees and
            type(member).predict_one is BaseSRPRegressor.predict_one for member in model)
    return kind is ensemble.BaggingRegressor and type(model.model) in trees \
        and all(type(member) in trees for member in model)


class TreeRegressorEnsembleBatch(DenseBatch):
    """A river ensemble of Hoeffding tree regressors (`fits_regressor_batch`): each tree's
    values for the rows from its tree batch (`HoeffdingTreeRegressorBatch`), kept with the
    stamps of their leaves, so a row goes down a tree again only after a split and is answered
    again only when its leaf learned; then aggregated as river does — the forest's and SRP's
    mean or median (weighted as they weigh their trees), bagging's `statistics.mean` —, the
    same numbers as `predict_one`.

    Example
    -------

    >>> import itertools
    >>> from river import datasets, forest
    >>> model = forest.ARFRegressor(n_models=3, seed=1)
    >>> data = list(itertools.islice(datasets.synth.Friedman(seed=1), 600))
    >>> for x, y in data[:500]:
    ...     model.learn_one(x, y)
    >>> batch = TreeRegressorEnsembleBatch()
    >>> xs = [x for x, _ in data[500:]]
    >>> codes, values = batch.predict(model, np.array([batch.encode(x) for x in xs]), xs)
    >>> [values[c] for c in codes] == [model.predict_one(x) for x in xs]
    True
    """

    absent_features = key_order = True  # as its trees' batches

    def __init__(self):
        super().__init__()
        self._trees: dict = {}  # id(tree) -> (tree, its batch, its rows' stamps and values)
        self._round = 0

    def __getstate__(self):
        return self.__dict__ | {"_trees": {}}  # (caches of the model's trees)

    def _tree(self, tree) -> tuple:
        from river.tree import HoeffdingAdaptiveTreeRegressor

        from transforms.models.tree_batch import (HoeffdingAdaptiveTreeRegressorBatch,
                                                  HoeffdingTreeRegressorBatch)

        kept = self._trees.get(id(tree))
        if kept is None or kept[0] is not tree:
            batch = HoeffdingAdaptiveTreeRegressorBatch() \
                if isinstance(tree, HoeffdingAdaptiveTreeRegressor) else \
                HoeffdingTreeRegressorBatch()
            kept = self._trees[id(tree)] = (tree, batch, _TreeRows())
        # (they grow as rows bring features: `absent_features`)
        kept[1].names, kept[1].key_columns = self.names, self.key_columns
        return kept

    def predict(self, model, rows, xs):
        if rows is None or not len(model):  # (the first prediction builds the forest)
            return super(DenseBatch, self).predict(model, rows, xs)

        def tree_values(tree):
            codes, values = self._tree(tree)[1].predict(tree, rows, xs)
            return np.asarray(values, dtype=np.float64)[codes]

        return self._aggregate(model, len(xs), tree_values)

    stamps_rows = True

    def predict_changed(self, model, rows, xs, before, at=None, scored=None):
        """`predict` for pending rows `rows[at]`, each tree's values kept with its leaves'
        stamps (every row is given anew: the weights change with every label)."""
        n = len(before)
        at = np.arange(n) if at is None else at
        self._round += 1
        stamps, changed = np.full(n, self._round, dtype=np.int64), np.ones(n, dtype=bool)
        if not len(model):
            return (*super(DenseBatch, self).predict(model, None, xs), stamps, changed, None)
        fresh = at[before == 0]

        def tree_values(tree):
            _, batch, kept = self._tree(tree)
            kept.reserve(int(at.max()) + 1, fresh)
            codes, values, leaf_stamps, moved, _ = batch.predict_changed(
                tree, rows, xs, kept.stamps[at], at=at)
            kept.stamps[at] = leaf_stamps
            if moved.any():
                kept.store(at[moved], np.asarray(values, dtype=np.float64)[codes[moved], None],
                           [0])
            return kept.proba_of(at, 1)[:, 0]

        return (*self._aggregate(model, n, tree_values), stamps, changed, None)

    def _aggregate(self, model, n: int, tree_values) -> tuple:
        """(codes, values) of the rows: the trees' values (`tree_values(tree)`, one per row)
        as river's `predict_one` aggregates them."""
        import statistics

        from river import ensemble, forest

        trees = [member.model for member in model] \
            if isinstance(model, ensemble.SRPRegressor) else list(model)
        values = np.empty((n, len(trees)))
        for i, tree in enumerate(trees):
            values[:, i] = tree_values(tree)
        alive = {id(tree) for tree in trees}
        self._trees = {k: v for k, v in self._trees.items() if k in alive}
        if isinstance(model, forest.ARFRegressor):
            if not model.disable_weighted_vote and model.aggregation_method != model._MEDIAN:
                weights, total = np.zeros(len(trees)), 0.0
                for i in range(len(trees)):
                    weights[i] = model._metrics[i].get()
                    total += weights[i]
                if total != 0:  # (a tree of larger error weighs less)
                    weights = total - weights
                    weights /= weights.sum()
                    values *= weights
            out = values.mean(axis=1) if model.aggregation_method == model._MEAN else \
                np.median(values, axis=1)
        elif isinstance(model, ensemble.SRPRegressor):
            weights = np.ones(len(trees))
            if not model.disable_weighted_vote:
                for i, member in enumerate(model):
                    value = member.metric.get()
                    weights[i] = value if value >= 0 else 0.0  # (river's test: NaN too)
            if not model.disable_weighted_vote and not model.metric.bigger_is_better:
                weights = -(weights - max(weights))  # (a tree of larger error weighs less)
            if model.aggregation_method != model._MEAN:
                out = np.median(values, axis=1)
            elif not model.disable_weighted_vote and sum(weights) == 0:
                out = np.zeros(n)  # (river's 0.0: the average is undefined)
            else:
                out = np.average(values, axis=1, weights=weights)
        else:
            out = np.array([statistics.mean(row) for row in values.tolist()])
        return np.arange(n), out.tolist()


def _weighted_trees(model) -> list:
    """The ensemble's trees in river's order, each with the weight of its vote: the forest's
    and SRP's, each tree's accuracy; bagging's, 0 (an unweighted vote)."""
    from river.ensemble import SRPClassifier

    if isinstance(model, SRPClassifier):
        return [(member.model, member.metric.get()) for member in model]
    if hasattr(model, "_metrics"):
        return [(tree, model._metrics[i].get()) for i, tree in enumerate(model)]
    return [(tree, 0.0) for tree in model]


class _TreeRows:
    """One tree's answers for the pending rows: the stamp of the leaf each row reached (0: to
    route) and the probabilities that leaf gave it, in the forest's class columns."""

    def __init__(self):
        self.stamps = np.zeros(0, dtype=np.int64)
        self.proba = np.zeros((0, 0))

    def reserve(self, rows: int, fresh: np.ndarray) -> None:
        if rows > len(self.stamps):
            size = max(rows, 2 * len(self.stamps))
            self.stamps = np.concatenate([self.stamps, np.zeros(size - len(self.stamps),
                                                                dtype=np.int64)])
            self.proba = np.vstack([self.proba, np.zeros((size - len(self.proba),
                                                          self.proba.shape[1]))])
        self.stamps[fresh] = 0

    def store(self, at: np.ndarray, values: np.ndarray, columns: list) -> None:
        if max(columns, default=-1) >= self.proba.shape[1]:
            self.proba = np.hstack([self.proba, np.zeros(
                (len(self.proba), max(columns) + 1 - self.proba.shape[1]))])
        self.proba[at] = 0.0
        self.proba[at[:, None], columns] = values

    def proba_of(self, at: np.ndarray, width: int) -> np.ndarray:
        kept = self.proba[at]
        return kept if kept.shape[1] == width else np.hstack(
            [kept, np.zeros((len(at), width - kept.shape[1]))])
