"""Predicting many pending instances at once, with exactly the answers of `predict_one`.

Continuous re-evaluation asks the model about every pending instance again and again (with
K=1, once per label per pending instance). river predicts one dict at a time, so for the models
the benchmarks and papers use most we compute the same decision for a whole matrix of stored
feature rows with numpy:

- `GaussianNBBatch`: river's `naive_bayes.GaussianNB` joint log-likelihoods, column by column.
- `HoeffdingTreeBatch`: river's `tree.HoeffdingTreeClassifier`; rows are routed down numeric
  splits as arrays, a leaf predicting its majority class answers once for all its rows, a naive
  Bayes leaf scores its rows like GaussianNB.
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
        return _codes([model.predict_one(x) for x in xs])

    stamps_rows = False  # whether `predict_changed` can skip rows whose answer is unchanged

    def predict_changed(self, model, rows, xs, before: np.ndarray):
        """Like `predict`, for models that can tell a row's answer is unchanged since its last
        prediction although the model learned: returns `(codes, labels, stamps, changed)`,
        where stamps (positive; 0 = unknown) change whenever a row's answer may have changed,
        `before` holds the rows' stamps at their last prediction, and codes are meaningful
        only where `changed`."""
        raise NotImplementedError


def _codes(predictions) -> tuple[np.ndarray, list]:
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
    """Models whose prediction ignores x: one call answers for every row."""

    def predict(self, model, rows, xs):
        if not len(xs):
            return np.empty(0, dtype=np.int64), []
        codes, labels = _codes([model.predict_one(xs[0])])
        return np.full(len(xs), codes[0]), labels


class _DenseBatch(BatchPredictor):
    """Rows of plain numbers, in the key order of the first instance encoded."""

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
            if not isinstance(v, Real) or isinstance(v, bool) or not math.isfinite(v):
                return None
        return np.array(values, dtype=np.float64)

    def predict(self, model, rows, xs):
        if rows is None:
            return super().predict(model, rows, xs)
        return _finish(model, xs, *self.decide(model, rows))

    def decide(self, model, rows):
        """(codes, labels, rows left to `predict_one`, leader): a row's answer is its leader's
        (leader None: every row answers for itself)."""
        raise NotImplementedError


def _finish(model, xs, codes, labels, unsure, leader):
    """Rows left unsure (near ties, unmodelled cases) get the model's own answer, exactly;
    rows with a leader take its answer."""
    if len(unsure):
        exact, exact_labels = _codes([model.predict_one(xs[i]) for i in unsure])
        codes, labels = _merge_codes(codes, labels, unsure, exact, exact_labels)
    if leader is not None:
        codes = codes[leader]
    return codes, labels


def _merge_codes(codes, labels, at, other_codes, other_labels):
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


def _argmax_with_margin(scores: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column of the best score per row, and the rows where the best two are too close to
    trust (float error of the vectorised sums is far below TIE_MARGIN·scale)."""
    best = np.argmax(scores, axis=1)
    if scores.shape[1] < 2:
        return best, np.empty(0, dtype=np.int64)
    if scores.shape[1] == 2:
        gap = np.abs(scores[:, 0] - scores[:, 1])
    else:
        top2 = np.partition(scores, -2, axis=1)[:, -2:]
        gap = top2[:, 1] - top2[:, 0]
    unsure = ~(gap > TIE_MARGIN * (1.0 + scale.max(axis=1)))
    return best, np.flatnonzero(unsure)


# -- river.naive_bayes.GaussianNB ------------------------------------------------------------
_PDF_EPS = 10e-10  # river.naive_bayes.gaussian._PDF_EPS
_SQRT_TAU = math.sqrt(2.0 * math.pi)


def _gaussian_parameters(gaussian):
    """(mu, variance) of a river `proba.Gaussian`, or None where river's pdf is 0."""
    if gaussian is None:
        return None
    var = gaussian._var
    n = var.mean.n
    if n > var.ddof:
        variance = var._S / (n - var.ddof)
        if variance > 0.0:
            return var.mean._mean, variance
    return None


class GaussianNBBatch(_DenseBatch):
    """river `GaussianNB`: log P(c) + Σ_f log(ε + pdf_cf(x_f)), the best class wins."""

    def decide(self, model, rows):
        classes = list(model.class_counts)
        if not classes:
            return np.full(len(rows), NONE), [], np.empty(0, dtype=np.int64), None
        total = sum(model.class_counts.values())
        shape = (len(classes), len(self.names))
        mu, sigma, known = np.zeros(shape), np.ones(shape), np.zeros(shape, dtype=bool)
        for j, c in enumerate(classes):
            gaussians = model.gaussians.get(c, {})
            for f, name in enumerate(self.names):
                params = _gaussian_parameters(gaussians.get(name))
                if params is not None:
                    mu[j, f], sigma[j, f], known[j, f] = params[0], math.sqrt(params[1]), True
        z = (rows[:, None, :] - mu) / sigma  # rows x classes x features
        with np.errstate(over="ignore", under="ignore"):
            terms = np.log(_PDF_EPS + np.exp(-0.5 * z * z) / _SQRT_TAU / sigma)
        terms[:, ~known] = math.log(_PDF_EPS)  # river's pdf is 0 there
        prior = np.array([math.log(model.class_counts[c] / total) for c in classes])
        jll = prior + terms.sum(axis=2)
        scale = np.abs(prior) + np.abs(terms).sum(axis=2)
        best, unsure = _argmax_with_margin(jll, scale)
        return best, classes, unsure, None


# -- river.tree.HoeffdingTreeClassifier ------------------------------------------------------
class HoeffdingTreeBatch(_DenseBatch):
    """river `HoeffdingTreeClassifier` (leaf prediction mc, nb or nba; numeric splits).

    A label changes one leaf; the others' parameters are kept from the last batch. A row's
    stamp is its leaf's token, which also names the leaf: while that leaf is in the tree the
    row still reaches it (this tree only ever grows, by replacing a leaf with a branch), so
    rows are routed again only after their leaf was split.
    """

    SERIAL_SHIFT = 40  # token = leaf serial << 40 | state number

    def __init__(self):
        super().__init__()
        self._cache: dict = {}  # id(leaf) -> (the leaf's token, its parameters)
        self._tokens: dict = {}  # id(leaf) -> (leaf, splitters, total weight, token)
        self._next_token = 1
        self._next_serial = 1
        self._shape = None  # the tree's shape when _in_tree was built
        self._in_tree: dict = {}  # leaf serial -> leaf, for the leaves in the tree
        self._column_of: dict | None = None  # feature name -> column, once names are known

    def __getstate__(self):
        # Caches, not state; the counters stay, so no token is ever issued twice.
        return {**self.__dict__, "_cache": {}, "_tokens": {}, "_shape": None, "_in_tree": {}}

    def _token(self, leaf) -> int:
        """A number for the leaf's current state. A leaf's answer depends only on its own
        statistics (they grow with every label it learns, so its weight changes) and on its
        splitters (replaced when it is deactivated or activated); the entry holds both
        objects, so their ids cannot be reused while it stands."""
        weight, splitters = leaf.total_weight, leaf.splitters
        entry = self._tokens.get(id(leaf))
        if entry is not None and entry[0] is leaf:
            if entry[1] is splitters and entry[2] == weight:
                return entry[3]
            serial = entry[3] >> self.SERIAL_SHIFT
        else:
            serial = self._next_serial
            self._next_serial += 1
            self._in_tree[serial] = leaf
        token = serial << self.SERIAL_SHIFT | self._next_token
        self._next_token += 1
        self._tokens[id(leaf)] = (leaf, splitters, weight, token)
        return token

    def _follow_shape(self, model) -> None:
        """After a split, forget the leaves that left the tree (their rows are routed again)."""
        shape = (id(model._root), model._n_active_leaves + model._n_inactive_leaves)
        if shape == self._shape:
            return
        self._shape = shape
        leaves = {id(leaf): leaf for leaf in model._root.iter_leaves()}
        self._tokens = {key: entry for key, entry in self._tokens.items()
                        if leaves.get(key) is entry[0]}
        self._in_tree = {entry[3] >> self.SERIAL_SHIFT: entry[0]
                         for entry in self._tokens.values()}

    stamps_rows = True

    def predict_changed(self, model, rows, xs, before):
        n = len(rows)
        stamps, changed = np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool)
        if model._root is None:
            return np.full(n, NONE), [], stamps, changed
        self._follow_shape(model)
        # Rows whose leaf is still in the tree take its current token (0: route the row again).
        # Serials are small numbers: bincount finds the few present without sorting.
        serials = before >> self.SERIAL_SHIFT
        now = np.zeros(int(serials.max()) + 1, dtype=np.int64)
        for serial in np.flatnonzero(np.bincount(serials)).tolist():
            leaf = self._in_tree.get(serial)
            if leaf is not None:
                now[serial] = self._token(leaf)
        stamps = now[serials]
        unsure: list = []
        lost = np.flatnonzero(stamps == 0)
        if len(lost):
            for leaf, idx in self._route(model._root, rows, lost, unsure):
                if len(idx):
                    stamps[idx] = self._token(leaf)
        changed = stamps != before
        changed[unsure] = True  # stamp 0: predicted row by row, every time
        todo = np.flatnonzero(changed & (stamps != 0))
        groups = []
        if len(todo):  # by leaf; usually one or two (the leaf that learned, new rows')
            serials = stamps[todo] >> self.SERIAL_SHIFT
            for serial in np.flatnonzero(np.bincount(serials)).tolist():
                groups.append((self._in_tree[serial], todo[serials == serial]))
        codes, labels = _finish(model, xs, *self._decide_groups(model, rows, groups, unsure))
        return codes, labels, stamps, changed

    def _route(self, node, rows, idx, unsure: list):
        """(leaf, row indices) for rows reaching each leaf down numeric splits; rows under any
        other kind of split go to `unsure` (the tree's own routing, row by row)."""
        from river.tree.nodes.branch import DTBranch, NumericBinaryBranch

        if not len(idx):
            return
        if not isinstance(node, DTBranch):
            yield node, idx
        elif isinstance(node, NumericBinaryBranch) and node.feature in self._columns:
            go_left = rows[idx, self._columns[node.feature]] <= node.threshold
            yield from self._route(node.children[0], rows, idx[go_left], unsure)
            yield from self._route(node.children[1], rows, idx[~go_left], unsure)
        else:
            unsure.extend(idx.tolist())

    @property
    def _columns(self) -> dict:
        if self._column_of is None or len(self._column_of) != len(self.names):
            self._column_of = {name: f for f, name in enumerate(self.names)}
        return self._column_of

    def _parameters(self, leaf):
        # Keyed like the tokens: a leaf re-activated with fresh splitters has new parameters
        # at the same weight.
        token = self._token(leaf)
        hit = self._cache.get(id(leaf))
        if hit is not None and hit[0] == token:
            return hit[1]
        params = _leaf_parameters(leaf, self.names)
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[id(leaf)] = (token, params)
        return params

    def decide(self, model, rows):
        if model._root is None:
            return np.full(len(rows), NONE), [], np.arange(len(rows)), None
        unsure: list = []
        groups = list(self._route(model._root, rows, np.arange(len(rows)), unsure))
        return self._decide_groups(model, rows, groups, unsure)

    def _decide_groups(self, model, rows, groups, unsure: list):
        """Decide the rows of each (leaf, row indices) group; `unsure` rows go to predict_one."""
        codes = np.full(len(rows), NONE)
        labels: list = []
        leader = np.arange(len(rows))
        for leaf, idx in groups:
            if not len(idx):
                continue
            mode = _leaf_mode(leaf, model)
            if mode == "mc":  # x-free: the leaf's first row answers for all of them
                unsure.append(int(idx[0]))
                leader[idx] = idx[0]
                continue
            params = self._parameters(leaf) if mode == "nb" else None
            if params is None:
                unsure.extend(idx.tolist())
                continue
            leaf_codes, leaf_labels, leaf_unsure = _naive_bayes_leaf(params, rows[idx])
            codes, labels = _merge_codes(codes, labels, idx, leaf_codes, leaf_labels)
            unsure.extend(idx[leaf_unsure].tolist())
        return codes, labels, np.array(sorted(unsure), dtype=np.int64), leader


def _leaf_mode(leaf, tree) -> str:
    """How a river HTC leaf predicts now: "mc" (majority class, x-free), "nb", or "other"."""
    from river.tree.nodes.htc_nodes import (LeafMajorityClass, LeafNaiveBayes,
                                            LeafNaiveBayesAdaptive)

    kind = type(leaf)
    if kind is LeafMajorityClass:
        return "mc"
    if kind is LeafNaiveBayesAdaptive:
        nb = leaf.is_active() and leaf._nb_correct_weight >= leaf._mc_correct_weight
        return "nb" if nb else "mc"
    if kind is LeafNaiveBayes:
        nb = leaf.is_active() and leaf.total_weight >= tree.nb_threshold
        return "nb" if nb else "mc"
    return "other"


def _leaf_parameters(leaf, names):
    """What river's `do_naive_bayes_prediction` reads from a leaf, as arrays: (classes,
    feature columns, μ, −2σ², the log-pdf constant, log prior, positive weight or None if all
    are); None if the leaf has no class weight or a splitter is not Gaussian."""
    from river.tree.splitter import GaussianSplitter

    stats = leaf.stats
    total = sum(stats.values())
    if not stats or total == 0:
        return None
    splitters = leaf.splitters or {}
    used = [(names.index(att), obs) for att, obs in splitters.items() if att in names]
    if len(used) != len(splitters) or any(type(obs) is not GaussianSplitter for _, obs in used):
        return None
    classes = list(stats)
    weights = [stats[c] for c in classes]
    shape = (len(classes), len(used))
    mu, variance, known = np.zeros(shape), np.ones(shape), np.zeros(shape, dtype=bool)
    for j, c in enumerate(classes):
        for f, (_, obs) in enumerate(used):
            params = _gaussian_parameters(obs._att_dist_per_class.get(c))
            if params is not None:  # else log p = -inf: skipped, as river does
                mu[j, f], variance[j, f], known[j, f] = params[0], params[1], True
    prior = np.array([math.log(w / total) if w > 0 else 0.0 for w in weights])
    # log pdf = (x − μ)² / (−2σ²) + const; an unknown pair contributes 0: σ² = ∞, const = 0.
    const = np.where(known, -0.5 * math.log(math.tau) - 0.5 * np.log(variance), 0.0)
    minus_two_variance = np.where(known, -2.0 * variance, -np.inf)
    columns = [column for column, _ in used]
    if columns == list(range(len(names))):
        columns = slice(None)  # all features in order: no gather
    positive = np.array(weights) > 0
    return (classes, columns, mu, minus_two_variance, const, prior,
            None if positive.all() else positive)


def _naive_bayes_leaf(params, rows):
    """river's naive Bayes leaf vote over rows: log prior + Σ Gaussian log-pdfs (the finite
    ones) per class; a class seen with weight 0 votes 0.0, as in river."""
    classes, columns, mu, minus_two_variance, const, prior, positive = params
    x = rows[:, columns][:, None, :]  # rows x 1 x features
    terms = (x - mu) ** 2 / minus_two_variance + const
    votes = prior + terms.sum(axis=2)
    scale = np.abs(prior) + np.abs(terms).sum(axis=2)
    if positive is not None:  # some class has weight 0
        votes, scale = np.where(positive, votes, 0.0), np.where(positive, scale, 0.0)
    best, unsure = _argmax_with_margin(votes, scale)
    return best, classes, unsure


def batch_predictor(model) -> BatchPredictor:
    """The fastest exact way to predict many rows with `model`.

    >>> from river import naive_bayes, linear_model
    >>> type(batch_predictor(naive_bayes.GaussianNB())).__name__
    'GaussianNBBatch'
    >>> type(batch_predictor(linear_model.LogisticRegression())).__name__
    'BatchPredictor'
    """
    from river.naive_bayes import GaussianNB
    from river.tree import HoeffdingTreeClassifier

    from transforms.models import Majority, NoChange

    kind = type(model)
    if kind is GaussianNB:
        return GaussianNBBatch()
    if kind is HoeffdingTreeClassifier:
        return HoeffdingTreeBatch()
    if kind in (Majority, NoChange):
        return ConstantBatch()
    return BatchPredictor()
