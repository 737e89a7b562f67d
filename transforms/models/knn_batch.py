"""river's `neighbors.KNNClassifier` over a `LazySearch` window (the `knn` model, MOA's kNN), many
rows at once, with exactly `predict_one`'s answers (`KNNBatch`).

river's search measures each distance as √(Σ (x_f − w_f)²), summed feature by feature in the
row's key order, and takes the k smallest by (distance, place in the window): the oldest of equal
distances first. Here the window is a matrix kept in step with river's, the same sums are made
column by column for many rows at once (the same additions in the same order: bit for bit),
and the same order picks the neighbours. Their votes (1/distance, added in neighbour order),
the normalisation and the choice of the first best class in the order of the model's class set
are river's too. A row within a distance of 0 of a window point takes that point's class, as
river's does.
"""

from __future__ import annotations

import functools
import itertools
import statistics

import numpy as np

from transforms.models.batch import NONE, DenseBatch, loaded

_BLOCK = 1 << 20  # distances computed per block of rows: rows × window ≤ this


def _lazy_euclidean(engine) -> bool:
    from river import neighbors
    from river.utils import vectordict

    # river 0.22 (Python 3.10) measures with `minkowski_distance` (other sums): no fast path.
    euclidean = getattr(vectordict, "euclidean_distance_tuple", None)
    return type(engine) is neighbors.LazySearch and euclidean is not None \
        and engine.dist_func is euclidean


def fits_regressor_batch(model) -> bool:
    """Whether `KNNRegressorBatch` predicts as the model does: river's `KNNRegressor` over a
    `LazySearch` window with its Euclidean distance.

    >>> from transforms.models.specs import exact_knn_regressor
    >>> fits_regressor_batch(exact_knn_regressor())
    True
    """
    return type(model) is loaded("river.neighbors.KNNRegressor") and \
        _lazy_euclidean(getattr(model, "_nn", None))


def fits_batch(model) -> bool:
    """Whether `KNNBatch` decides as the model does: river's `KNNClassifier` with inverse
    distance votes, no softmax and no class clean-up, over a `LazySearch` window with its
    Euclidean distance.

    >>> from transforms.models.specs import exact_knn
    >>> fits_batch(exact_knn()), fits_batch(exact_knn(weighted=False))
    (True, False)
    """
    return type(model) is loaded("river.neighbors.KNNClassifier") and \
        _lazy_euclidean(getattr(model, "_nn", None)) and model.weighted and \
        not model.softmax and not model.cleanup_every


class KNNBatch(DenseBatch):
    """river `KNNClassifier` (`fits_batch`): the k nearest window points of each row, their
    inverse-distance votes.

    Example
    -------

    >>> from transforms.models.specs import exact_knn
    >>> model = exact_knn(n_neighbors=3)
    >>> for a, y in [(0.0, "u"), (0.5, "u"), (1.0, "v"), (4.0, "v"), (4.5, "w")]:
    ...     model.learn_one({"a": a}, y)
    >>> batch = KNNBatch()
    >>> xs = [{"a": a} for a in (0.2, 0.5, 2.6, 4.4)]
    >>> rows = np.array([batch.encode(x) for x in xs])
    >>> codes, labels = batch.predict(model, rows, xs)
    >>> [labels[c] for c in codes] == [model.predict_one(x) for x in xs]
    True
    """

    in_pipeline = True  # (on scaled rows: the window holds what the scalers made of its rows)
    group_transformed = False

    def __init__(self):
        super().__init__()
        self._points = np.empty((0, 0))  # the window's points, in its order
        self._targets: list = []  # their classes
        self._dense = np.empty(0, dtype=bool)  # whether each point is a row of `names`
        self._newest = None  # the window's newest entry when last seen

    def __getstate__(self):
        # The window's matrix is a cache of the model's window: a saved engine rebuilds it.
        return self.__dict__ | {"_points": np.empty((0, 0)), "_targets": [],
                                "_dense": np.empty(0, dtype=bool), "_newest": None}

    def _sync(self, window) -> bool:
        """Bring the matrix in step with river's window (its newest entries appended, the
        oldest dropped); whether every point is a row of the features' names."""
        fresh = 0
        if self._newest is not None and self._points.shape[1] == len(self.names):
            for entry in reversed(window):
                if entry is self._newest:
                    break
                fresh += 1
            else:  # (not found: a window replaced, or every entry new)
                fresh = len(window)
        else:  # (nothing seen, or other features: `one-hot-text` learned a text)
            fresh = len(window)
        if fresh == len(window):
            self._points = np.empty((0, len(self.names)))
            self._targets, self._dense = [], np.empty(0, dtype=bool)
        if fresh:
            entries = list(itertools.islice(reversed(window), fresh))[::-1]
            encoded = [self.encode(entry[0][0]) for entry in entries]
            ok = np.array([r is not None for r in encoded])
            new = np.zeros((fresh, len(self.names)))
            if ok.any():
                new[ok] = np.vstack([r for r in encoded if r is not None])
            keep = len(window) - fresh
            start = len(self._targets) - keep
            self._points = np.concatenate([self._points[start:], new])
            self._targets = self._targets[start:] + [entry[0][1] for entry in entries]
            self._dense = np.concatenate([self._dense[start:], ok])
            self._newest = window[-1]
        if not len(window):
            self._newest = None
        return bool(self._dense.all())

    def state(self, model, names):
        return model

    def decide_with(self, rows, model):
        return self.decide(model, rows)

    def decide(self, model, rows):
        window = model._nn.window
        classes = list(model.classes)  # in the order of predict_proba_one's dict
        everyone = np.arange(len(rows))
        if not len(window) or not classes or not self._sync(window):
            return np.full(len(rows), NONE), [], everyone, None
        # (No class clean-up, `fits_batch`: every point's class is in the model's set.)
        column = {c: j for j, c in enumerate(classes)}
        targets = np.array([column[y] for y in self._targets])
        codes = np.empty(len(rows), dtype=np.int64)
        unsure = []
        for lo, nearest, distances in self._neighbours(model, rows):
            votes = targets[nearest]
            scores = np.zeros((len(nearest), len(classes)))
            at = np.arange(len(nearest))
            with np.errstate(invalid="ignore", divide="ignore"):  # (distance 0: below)
                for j in range(nearest.shape[1]):  # added in neighbour order, as river adds them
                    scores[at, votes[:, j]] += 1.0 / distances[:, j]
                total = scores[:, 0].copy()
                for j in range(1, len(classes)):
                    total += scores[:, j]
                best = np.argmax(scores / total[:, None], axis=1)
            exact = distances[:, 0] == 0.0  # river answers with the first such point's class
            best[exact] = votes[exact, 0]
            odd = ~(np.isfinite(total) & (total > 0.0)) & ~exact
            unsure.extend((lo + np.nonzero(odd)[0]).tolist())
            codes[lo:lo + len(nearest)] = best
        return codes, classes, np.array(unsure, dtype=np.int64), None

    def _neighbours(self, model, rows):
        """(first row, nearest, distances) for blocks of rows: `_nearest` of the model's k
        (fewer while the window holds fewer points)."""
        k = min(model.n_neighbors, len(self._targets))
        step = max(1, _BLOCK // len(self._targets))
        for lo in range(0, len(rows), step):
            yield lo, *self._nearest(rows[lo:lo + step], k)

    def _nearest(self, block: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k nearest points of each row (window places) and their distances, by (distance,
        place): river's order."""
        points = self._points
        squares = np.zeros((len(block), len(points)))
        diff = np.empty_like(squares)
        for f in range(points.shape[1]):  # feature by feature, as river sums them
            np.subtract(block[:, f:f + 1], points[:, f], out=diff)
            diff *= diff
            squares += diff
        distances = np.sqrt(squares, out=squares)
        if k < distances.shape[1]:
            nearest = np.argpartition(distances, k - 1, axis=1)[:, :k]
            kth = np.take_along_axis(distances, nearest, axis=1).max(axis=1)
            # Where points beyond the k share the k-th distance, which of them are in is the
            # window's order: the closer ones, then the oldest of those at the k-th distance.
            tied = ((distances <= kth[:, None]).sum(axis=1) > k).nonzero()[0]
            if len(tied):
                near, at_kth = distances[tied], kth[tied, None]
                closer = near < at_kth
                equal = near == at_kth
                wanted = k - closer.sum(axis=1, keepdims=True)
                chosen = closer | equal & (np.cumsum(equal, axis=1) <= wanted)
                nearest[tied] = chosen.nonzero()[1].reshape(len(tied), k)
        else:
            nearest = np.broadcast_to(np.arange(k), (len(block), k))
        near = np.take_along_axis(distances, nearest, axis=1)
        order = np.lexsort((nearest, near))  # by distance, then place: river's order
        nearest = np.take_along_axis(nearest, order, axis=1)
        return nearest, np.take_along_axis(near, order, axis=1)


class KNNRegressorBatch(KNNBatch):
    """river `KNNRegressor` (`fits_regressor_batch`): the k nearest window points of many rows
    at once, as `KNNBatch` finds them; each row's value is then made from its neighbours' targets
    and distances by river's own formula (mean, median or inverse-distance weighted mean): the
    same value, bit for bit.

    Example
    -------

    >>> from transforms.models.specs import exact_knn_regressor
    >>> model = exact_knn_regressor(n_neighbors=2)
    >>> for a, y in [(0.0, 1.0), (1.0, 3.0), (4.0, 10.0)]:
    ...     model.learn_one({"a": a}, y)
    >>> batch = KNNRegressorBatch()
    >>> xs = [{"a": 0.2}, {"a": 1.0}, {"a": 3.0}]
    >>> codes, values = batch.predict(model, np.array([batch.encode(x) for x in xs]), xs)
    >>> [values[c] for c in codes] == [model.predict_one(x) for x in xs]
    True
    """

    def decide(self, model, rows):
        window = model._nn.window
        everyone = np.arange(len(rows))
        if not len(window):
            return np.zeros(len(rows), dtype=np.int64), [0.0], np.empty(0, np.int64), None
        if not self._sync(window):
            return np.full(len(rows), NONE), [], everyone, None
        targets, method = self._targets, model.aggregation_method
        values = []
        for _, nearest, distances in self._neighbours(model, rows):
            for places, ds in zip(nearest.tolist(), distances.tolist()):
                values.append(_aggregate(method, [targets[i] for i in places], ds))
        return np.arange(len(rows)), values, np.empty(0, dtype=np.int64), None


def _aggregate(method: str, targets: list, distances: list):
    """river `KNNRegressor.predict_one`'s value from the neighbours it found."""
    if distances[0] == 0:
        return targets[0]
    if method == "weighted_mean":
        return _weighted_mean(tuple(targets), tuple(distances))
    return _mean_or_median(method, tuple(targets))


# A pending row keeps its neighbours over many rounds: their value is remembered (the mean
# and median, exact, depend on the targets alone; statistics.mean sums them as fractions).
@functools.lru_cache(maxsize=1 << 16)
def _mean_or_median(method: str, targets: tuple):
    return statistics.median(targets) if method == "median" else statistics.mean(targets)


@functools.lru_cache(maxsize=1 << 16)
def _weighted_mean(targets: tuple, distances: tuple):
    total = sum(1 / d for d in distances)
    if total == 0.0:
        return statistics.mean(targets)
    return sum(y / d for y, d in zip(targets, distances)) / total
