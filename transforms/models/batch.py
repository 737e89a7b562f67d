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

import functools
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

    def predict_changed(self, model, rows, xs, before: np.ndarray, at=None):
        """Like `predict`, for models that can tell a row's answer is unchanged since its last
        prediction although the model learned: returns `(codes, labels, stamps, changed)`,
        where stamps (positive; 0 = unknown) change whenever a row's answer may have changed,
        `before` holds the rows' stamps at their last prediction, and codes are meaningful
        only where `changed`. With `at`, the rows are `rows[at]` (only those that need
        scoring are gathered)."""
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
    trust (float error of the vectorised sums is far below TIE_MARGIN·scale).

    >>> best, unsure = _argmax_with_margin(np.array([[1.0, 2.0], [3.0, 3.0 + 1e-12]]),
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
# How a leaf answers (`HoeffdingTreeBatch._mode`): naive Bayes over Gaussian splitters (scored
# with numpy), x-free (majority class: one row's predict_one answers for the leaf), or
# anything else (predict_one per row).
_NB, _X_FREE, _OTHER = 0, 1, 2


class HoeffdingTreeBatch(_DenseBatch):
    """river `HoeffdingTreeClassifier` (leaf prediction mc, nb or nba; any split).

    A label changes one leaf. Each leaf in the tree has a slot in stacked arrays of what
    river's naive Bayes reads from it (per class: μ and 1/(−2σ²) per feature, log prior plus
    the log-pdf constants; a class it has not seen cannot win), refreshed when the leaf's
    state changes (only the class that learned), so the rows of all leaves are scored in one
    numpy pass. A row's stamp is its leaf's token, which also names the leaf: while that leaf
    is in the tree the row still reaches it (this tree only ever grows, by replacing a leaf
    with a branch), so rows are routed again only after their leaf was split.
    """

    SERIAL_SHIFT = 40  # token = leaf serial << 40 | state number
    ROUTE_ONE_BY_ONE = 32  # fewer rows to route: river's own traversal of each row's dict

    def __init__(self):
        super().__init__()
        # id(leaf) -> [leaf, splitters, total weight, token, slot, per-class sums as last read
        # (None: not a naive Bayes leaf), (number of splitters, all Gaussian on our columns)]
        # for the leaves in the tree
        self._entries: dict = {}
        self._in_tree: dict = {}  # leaf serial -> its entry
        self._next_token = 1
        self._next_serial = 1
        self._shape = None  # the tree's shape when _in_tree was built
        self._column_of: dict | None = None  # feature name -> column, once names are known
        self._class_index: dict = {}  # the tree's class -> column of the stacked arrays
        self._classes: list = []
        self._slot_of_serial = np.zeros(64, dtype=np.int64)
        self._free: list = []

    def __getstate__(self):
        # Caches, not state; the counters stay, so no token is ever issued twice.
        return {key: value for key, value in self.__dict__.items()
                if key not in ("_entries", "_in_tree", "_shape", "_free", *_ABSENT)} | \
            {"_entries": {}, "_in_tree": {}, "_shape": None, "_free": []}

    def _alloc(self, slots: int, classes: int) -> None:
        """Stacked arrays for `slots` leaves and `classes` classes, keeping what is there."""
        old = {name: getattr(self, name) for name in _ABSENT} if hasattr(self, "_mode") \
            else {}
        n = len(old["_mode"]) if old else 0
        fresh = _slots_of(slots, classes, len(self.names or ()))
        for name, array in old.items():
            fresh[name][tuple(slice(0, size) for size in array.shape)] = array
        self.__dict__.update(fresh)
        self._free.extend(range(slots - 1, n - 1, -1))

    def _class_column(self, c) -> int:
        j = self._class_index.get(c)
        if j is None:
            j = self._class_index[c] = len(self._classes)
            self._alloc(len(self._mode), j + 1)  # a leaf has a slot before it has classes
            self._classes.append(c)
        return j

    def _entry(self, leaf, model) -> list:
        """The leaf's entry with its current token: a number for the leaf's state. A leaf's
        answer depends only on its own statistics (they grow with every label it learns, so its
        weight changes) and on its splitters (replaced when it is deactivated or activated);
        the entry holds both objects, so their ids cannot be reused while it stands."""
        entry = self._entries.get(id(leaf))
        if entry is None or entry[0] is not leaf:
            if entry is not None:  # another leaf had this id: its slot is free
                self._free.append(entry[4])
                self._in_tree.pop(entry[3] >> self.SERIAL_SHIFT, None)
            serial = self._next_serial
            self._next_serial += 1
            if not self._free:
                self._alloc(max(64, 2 * len(self._mode)) if hasattr(self, "_mode") else 64,
                            len(self._classes))
            if serial >= len(self._slot_of_serial):
                self._slot_of_serial = np.concatenate(
                    [self._slot_of_serial, np.zeros(len(self._slot_of_serial), np.int64)])
            slot = self._slot_of_serial[serial] = self._free.pop()
            entry = self._entries[id(leaf)] = [leaf, None, None, serial << self.SERIAL_SHIFT,
                                               slot, None, None]
            self._in_tree[serial] = entry
            return self._refresh(entry, model)
        if entry[1] is leaf.splitters and entry[2] == leaf.total_weight:
            return entry
        return self._refresh(entry, model)

    def _refresh(self, entry, model) -> list:
        """A new token for the leaf's state, and its slot's arrays as river reads them: only
        the classes whose weight changed (a leaf learns one class per label, and river updates
        only that class's Gaussians), unless the leaf is new or its splitters were replaced."""
        leaf, slot = entry[0], entry[4]
        whole = entry[1] is not leaf.splitters
        entry[1], entry[2] = leaf.splitters, leaf.total_weight
        entry[3] = entry[3] >> self.SERIAL_SHIFT << self.SERIAL_SHIFT | self._next_token
        self._next_token += 1
        mode = _leaf_mode(leaf, model)
        splitters = leaf.splitters or {}
        if whole or entry[6] is None or entry[6][0] != len(splitters):  # a feature seen anew
            entry[6] = (len(splitters), _gaussian_leaf(splitters, self._columns))
        if mode != "nb" or not entry[6][1]:
            self._mode[slot] = _X_FREE if mode == "mc" else _OTHER
            entry[5] = None
            return entry
        stats = leaf.stats
        rebuild = whole or entry[5] is None
        # (weight, Σ const, Σ |const|) per class, as last read
        known = {} if rebuild else entry[5]
        columns = self._columns
        total = sum(stats.values())
        if rebuild:
            self._mu[slot], self._inv[slot] = 0.0, 0.0
            self._base[slot], self._abs[slot] = _ABSENT_VOTE, 0.0
        for c, w in stats.items():
            if c in known and known[c][0] == w:
                continue
            j = self._class_column(c)
            mu, inv = self._mu[slot, j], self._inv[slot, j]
            mu[:], inv[:] = 0.0, 0.0
            const_sum = const_abs = 0.0
            if w > 0:
                for att, obs in leaf.splitters.items():
                    params = _gaussian_parameters(obs._att_dist_per_class.get(c))
                    if params is not None:  # else log p = -inf: skipped, as river does
                        f = columns[att]
                        mu[f], inv[f] = params[0], -0.5 / params[1]
                        const = -_HALF_LOG_TAU - 0.5 * math.log(params[1])
                        const_sum += const
                        const_abs += abs(const)
            known[c] = (w, const_sum, const_abs)
        for c, (w, const_sum, const_abs) in known.items():
            # A class of weight 0 votes 0.0 in river: no prior, no terms.
            prior = math.log(w / total) if w > 0 else 0.0
            j = self._class_index[c]
            self._base[slot, j] = prior + const_sum
            self._abs[slot, j] = abs(prior) + const_abs
        entry[5] = known
        self._mode[slot] = _NB if total > 0 else _OTHER
        return entry

    def _follow_shape(self, model) -> None:
        """After a split, forget the leaves that left the tree (their rows are routed again)."""
        shape = (id(model._root), model._n_active_leaves, model._n_inactive_leaves)
        if shape == self._shape:
            return
        self._shape = shape
        leaves = {id(leaf): leaf for leaf in model._root.iter_leaves()}
        for key, entry in list(self._entries.items()):
            if leaves.get(key) is not entry[0]:
                del self._entries[key]
                self._free.append(entry[4])
        self._in_tree = {entry[3] >> self.SERIAL_SHIFT: entry
                         for entry in self._entries.values()}

    stamps_rows = True

    def predict_changed(self, model, rows, xs, before, at=None):
        n = len(before)
        at = np.arange(n) if at is None else at
        if model._root is None:
            return (np.full(n, NONE), [], np.zeros(n, dtype=np.int64),
                    np.ones(n, dtype=bool))
        self._follow_shape(model)
        # Rows whose leaf is still in the tree take its current token (0: route the row again).
        # Serials are small numbers: bincount finds the few present without sorting.
        serials = before >> self.SERIAL_SHIFT
        now = np.zeros(int(serials.max()) + 1, dtype=np.int64)
        in_tree = self._in_tree
        for serial in np.bincount(serials).nonzero()[0].tolist():
            entry = in_tree.get(serial)
            if entry is not None:
                now[serial] = self._entry(entry[0], model)[3]
        stamps = now[serials]
        unsure: list = []
        lost = (stamps == 0).nonzero()[0]
        if len(lost):
            self._locate(model, rows, at, xs, lost, stamps)
        changed = stamps != before
        todo = changed.nonzero()[0]
        codes, leader = self._score(rows, at, todo, stamps, unsure)
        if not unsure:
            return codes, self._classes, stamps, changed
        codes, labels = _finish(model, xs, codes, self._classes, np.array(sorted(unsure),
                                dtype=np.int64), leader)
        return codes, labels, stamps, changed

    def _locate(self, model, rows, at, xs, idx, stamps) -> None:
        """Stamp rows `idx` (of `rows[at]`) with the tokens of the leaves they reach now."""
        root = model._root
        if not isinstance(root, _branch_class()):
            stamps[idx] = self._entry(root, model)[3]
        elif len(idx) <= self.ROUTE_ONE_BY_ONE:
            for i in idx.tolist():
                stamps[i] = self._entry(root.traverse(xs[i], until_leaf=True), model)[3]
        else:
            for leaf, reached in self._route(root, rows, xs, idx, at):
                stamps[reached] = self._entry(leaf, model)[3]

    def _route(self, node, rows, xs, idx, at=None):
        """(leaf, row indices) for the rows `idx` (of `rows[at]`, or of `rows`) reaching each
        leaf: down numeric splits as arrays, under any other kind of split by the tree's own
        traversal, row by row."""
        from river.tree.nodes.branch import NumericBinaryBranch

        if not len(idx):
            return
        if not isinstance(node, _branch_class()):
            yield node, idx
        elif isinstance(node, NumericBinaryBranch) and node.feature in self._columns:
            column = self._columns[node.feature]
            go_left = rows[idx if at is None else at[idx], column] <= node.threshold
            yield from self._route(node.children[0], rows, xs, idx[go_left], at)
            yield from self._route(node.children[1], rows, xs, idx[~go_left], at)
        else:
            for i in idx.tolist():
                yield node.traverse(xs[i], until_leaf=True), np.array([i])

    @property
    def _columns(self) -> dict:
        if self._column_of is None or len(self._column_of) != len(self.names):
            self._column_of = {name: f for f, name in enumerate(self.names)}
        return self._column_of

    def predict(self, model, rows, xs):
        if rows is None:
            return BatchPredictor.predict(self, model, rows, xs)
        codes, labels, _, _ = self.predict_changed(model, rows, xs,
                                                   np.zeros(len(rows), dtype=np.int64))
        return codes, labels

    def _score(self, rows, at, todo, stamps, unsure: list):
        """Codes (into `self._classes`) of rows `todo` (of `rows[at]`) from their leaves'
        slots, all leaves in one pass; rows of x-free leaves follow a leader, the rest go to
        `unsure`."""
        codes = np.full(len(at), NONE)
        leader = None
        if not len(todo):
            return codes, leader
        slots = self._slot_of_serial[stamps[todo] >> self.SERIAL_SHIFT]
        modes = self._mode[slots]
        nb = modes == _NB
        n_nb = np.count_nonzero(nb)  # (cheaper than nb.any() and nb.all(), every label)
        if n_nb:
            idx, s = (todo, slots) if n_nb == len(nb) else (todo[nb], slots[nb])
            # river's vote: log prior + Σ_f (x − μ)² / (−2σ²) − log √(2πσ²), the constants
            # summed ahead (base). The margin's scale bounds |log prior| + Σ_f |term_f|.
            x = rows[at[idx]]
            if s[0] == s[-1] and np.count_nonzero(s != s[0]) == 0:  # K=1: the leaf that learned
                s = s[0]
                base = self._base[s]
                votes = _leaf_votes(x, self._mu[s], self._inv[s], base)
            else:
                base = self._base[s]
                d = x[:, None, :] - self._mu[s]
                votes = np.einsum("ncf,ncf,ncf->nc", d, d, self._inv[s]) + base
            best, near = _argmax_with_margin(votes, self._abs[s] + (base - votes))
            codes[idx] = best
            unsure.extend(idx[near].tolist())
        if n_nb < len(nb):
            x_free = modes == _X_FREE
            if x_free.any():  # the leaf's first row answers for all of its rows
                idx, s = todo[x_free], slots[x_free]
                first = np.unique(s, return_index=True)[1]
                leader = np.arange(len(at))
                leader[idx] = idx[first[np.searchsorted(s[first], s)]]
                unsure.extend(idx[first].tolist())
            unsure.extend(todo[modes == _OTHER].tolist())
        return codes, leader


def _leaf_votes(x: np.ndarray, mu: np.ndarray, inv: np.ndarray, base: np.ndarray) -> np.ndarray:
    """One leaf's naive-Bayes votes for rows `x`: base_c + Σ_f (x_f − μ_cf)² · inv_cf, a class
    at a time (a contiguous matrix-vector product; faster here than broadcasting the classes).

    >>> _leaf_votes(np.array([[1.0, 2.0]]), np.array([[0.0, 0.0], [1.0, 1.0]]),
    ...             np.full((2, 2), -0.5), np.array([0.0, -1.0])).tolist()
    [[-2.5, -1.5]]
    """
    votes = np.empty((len(base), len(x)))
    for c in range(len(base)):
        d = x - mu[c]
        d *= d
        np.dot(d, inv[c], out=votes[c])
    votes += base[:, None]
    return votes.T


@functools.cache
def _branch_class():
    """river's tree branch class (river is imported when a tree is first scored)."""
    from river.tree.base import Branch

    return Branch


# Stacked leaf arrays, per slot, class (and feature): μ and 1 / (−2σ²) (0 where a class has no
# Gaussian for a feature: it adds nothing), base = log prior + Σ log-pdf constants, abs =
# |log prior| + Σ |constants|. A class a leaf has not seen gets the lowest vote: it cannot win.
_ABSENT_VOTE = -np.finfo(float).max
_HALF_LOG_TAU = 0.5 * math.log(math.tau)
_ABSENT = {"_mu": 0.0, "_inv": 0.0, "_base": _ABSENT_VOTE, "_abs": 0.0, "_mode": _OTHER}


def _slots_of(slots: int, classes: int, features: int) -> dict:
    shapes = {"_mu": (slots, classes, features), "_inv": (slots, classes, features),
              "_base": (slots, classes), "_abs": (slots, classes), "_mode": (slots,)}
    return {name: np.full(shape, _ABSENT[name], dtype=np.int8 if name == "_mode" else float)
            for name, shape in shapes.items()}


@functools.cache
def _leaf_classes() -> tuple:
    from river.tree.nodes.htc_nodes import LeafMajorityClass, LeafNaiveBayes, LeafNaiveBayesAdaptive

    return LeafMajorityClass, LeafNaiveBayes, LeafNaiveBayesAdaptive


def _leaf_mode(leaf, tree) -> str:
    """How a river HTC leaf predicts now: "mc" (majority class, x-free), "nb", or "other"."""
    LeafMajorityClass, LeafNaiveBayes, LeafNaiveBayesAdaptive = _leaf_classes()
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


def _gaussian_leaf(splitters: dict, columns: dict) -> bool:
    """Whether river's naive Bayes of a leaf with these splitters reads only Gaussian
    splitters of our columns."""
    from river.tree.splitter import GaussianSplitter

    return all(att in columns and type(obs) is GaussianSplitter
               for att, obs in splitters.items())


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

    from transforms.models.specs import Majority, NoChange

    kind = type(model)
    if kind is GaussianNB:
        return GaussianNBBatch()
    if kind is HoeffdingTreeClassifier:
        return HoeffdingTreeBatch()
    if kind in (Majority, NoChange):
        return ConstantBatch()
    return BatchPredictor()
