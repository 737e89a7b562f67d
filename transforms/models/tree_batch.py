"""river's `tree.HoeffdingTreeClassifier`, many rows at once (`HoeffdingTreeBatch`): rows routed
down numeric splits as arrays, a majority-class leaf answering once for all its rows, a naive
Bayes leaf scoring its rows like GaussianNB, with the decisions `predict_one` makes; and the
same over a window of labels from snapshots of the leaves as they learned (`LeafSnapshots`),
a near tie decided by river's own arithmetic on the snapshot (`river_leaf_answer`)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from transforms.models.batch import (NONE, TIE_MARGIN, BatchPredictor, DenseBatch,
                                     argmax_with_margin, finish_unsure, proba_rows)
from transforms.models.naive_bayes_batch import gaussian_parameters

# How a leaf answers (`HoeffdingTreeBatch._mode`): naive Bayes over Gaussian splitters (scored
# with numpy), x-free (majority class: one row's predict_one answers for the leaf), or
# anything else (predict_one per row).
_NB, _X_FREE, _OTHER = 0, 1, 2


@dataclass(slots=True)
class LeafEntry:
    """What the batch predictor keeps of a leaf in the tree: the leaf, the splitters and total
    weight it had when last read, its token (serial << SERIAL_SHIFT | state number), its slot
    in the stacked arrays, the per-class (weight, Σ const, Σ |const|) as last read (None: not
    a naive Bayes leaf), and (number of splitters, whether all are Gaussian on our columns).

    Example
    -------

    >>> entry = LeafEntry(leaf=None, splitters=None, weight=None, token=3 << 40, slot=0)
    >>> entry.token >> HoeffdingTreeBatch.SERIAL_SHIFT, entry.known is None
    (3, True)

    """

    leaf: object
    splitters: object
    weight: float | None
    token: int
    slot: int
    known: dict | None = None
    gaussian: tuple | None = None
    exact: dict | None = None  # class -> ((feature, μ, σ²), ...) in splitter order, as river reads
    value: tuple | None = None  # a regression leaf's answer (`_regression_answer`)


class HoeffdingTreeBatch(DenseBatch):
    """river `HoeffdingTreeClassifier` (leaf prediction mc, nb or nba; any split).

    A label changes one leaf. Each leaf in the tree has a slot in stacked arrays of what
    river's naive Bayes reads from it (per class: μ and 1/(−2σ²) per feature, log prior plus
    the log-pdf constants; a class it has not seen cannot win), refreshed when the leaf's
    state changes (only the class that learned), so the rows of all leaves are scored in one
    numpy pass. A row's stamp is its leaf's token, which also names the leaf: while that leaf
    is in the tree the row still reaches it (this tree only ever grows, by replacing a leaf
    with a branch), so rows are routed again only after their leaf was split.

    Example
    -------

    >>> import itertools
    >>> from river import datasets, tree
    >>> model = tree.HoeffdingTreeClassifier(grace_period=50, leaf_prediction="nb")
    >>> data = list(itertools.islice(datasets.synth.Agrawal(seed=1), 600))
    >>> for x, y in data[:500]:
    ...     model.learn_one(x, y)
    >>> xs = [x for x, _ in data[500:]]
    >>> batch = HoeffdingTreeBatch()
    >>> rows = np.array([batch.encode(x) for x in xs])
    >>> codes, labels = batch.predict(model, rows, xs)
    >>> [labels[c] for c in codes] == [model.predict_one(x) for x in xs]
    True

    """

    SERIAL_SHIFT = 40  # token = leaf serial << 40 | state number
    ROUTE_ONE_BY_ONE = 32  # fewer rows to route: river's own traversal of each row's dict
    # river's naive Bayes leaves sum over the row's own features; a row without a split's
    # feature takes the branch's most traversed path (`_reach`: the model answers it).
    absent_features = True

    def __init__(self):
        super().__init__()
        self._entries: dict = {}  # id(leaf) -> its LeafEntry, for the leaves in the tree
        self._in_tree: dict = {}  # leaf serial -> its entry
        self._next_token = 1
        self._next_serial = 1
        self._shape = None  # the tree's shape when _in_tree was built
        self._class_index: dict = {}  # the tree's class -> column of the stacked arrays
        self._classes: list = []
        self._slot_of_serial = np.zeros(64, dtype=np.int64)
        self._free: list = []
        self._window: LeafSnapshots | None = None
        # id(branch) -> (branch, the child it calls most traversed) for the branches where a
        # row of the window lacked the split's feature and was routed down that child.
        self._guesses: dict = {}
        self._sorted: tuple = ()  # sorted(model.classes), as predict_proba_one orders them

    def __getstate__(self):
        # Caches, not state; the counters stay, so no token is ever issued twice. A window of
        # snapshots is closed (its re-predictions made) before an engine's state is saved.
        return {key: value for key, value in self.__dict__.items()
                if key not in ("_entries", "_in_tree", "_shape", "_free", "_window",
                               "_guesses", *_ABSENT)} | \
            {"_entries": {}, "_in_tree": {}, "_shape": None, "_free": [], "_window": None,
             "_guesses": {}}

    def _alloc(self, slots: int, classes: int) -> None:
        """Stacked arrays for `slots` leaves, `classes` classes and the features named so far,
        keeping what is there."""
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

    def _entry(self, leaf, model) -> LeafEntry:
        """The leaf's entry with its current token: a number for the leaf's state. A leaf's
        answer depends only on its own statistics (they grow with every label it learns, so its
        weight changes) and on its splitters (replaced when it is deactivated or activated);
        the entry holds both objects, so their ids cannot be reused while it stands."""
        entry = self._entries.get(id(leaf))
        if entry is None or entry.leaf is not leaf:
            if entry is not None:  # another leaf had this id: its slot is free
                self._free.append(entry.slot)
                self._in_tree.pop(entry.token >> self.SERIAL_SHIFT, None)
            serial = self._next_serial
            self._next_serial += 1
            if not self._free:
                self._alloc(max(64, 2 * len(self._mode)) if hasattr(self, "_mode") else 64,
                            len(self._classes))
            if serial >= len(self._slot_of_serial):
                self._slot_of_serial = np.concatenate(
                    [self._slot_of_serial, np.zeros(len(self._slot_of_serial), np.int64)])
            slot = self._slot_of_serial[serial] = self._free.pop()
            entry = self._entries[id(leaf)] = LeafEntry(leaf, None, None,
                                                        serial << self.SERIAL_SHIFT, slot)
            self._in_tree[serial] = entry
            return self._refresh(entry, model)
        if entry.splitters is leaf.splitters and entry.weight == leaf.total_weight:
            return entry
        return self._refresh(entry, model)

    def _refresh(self, entry: LeafEntry, model) -> LeafEntry:
        """A new token for the leaf's state, and its slot's arrays as river reads them: only
        the classes whose weight changed (a leaf learns one class per label, and river updates
        only that class's Gaussians), unless the leaf is new or its splitters were replaced."""
        leaf, slot = entry.leaf, entry.slot
        whole = entry.splitters is not leaf.splitters
        entry.splitters, entry.weight = leaf.splitters, leaf.total_weight
        entry.token = entry.token >> self.SERIAL_SHIFT << self.SERIAL_SHIFT | self._next_token
        self._next_token += 1
        mode = _leaf_mode(leaf, model)
        splitters = leaf.splitters or {}
        # A feature seen anew, by the leaf or in the rows:
        seen = (len(splitters), len(self.names))
        if whole or entry.gaussian is None or entry.gaussian[0] != seen:
            entry.gaussian = (seen, _gaussian_leaf(splitters, self._columns))
        if mode != "nb" or not entry.gaussian[1]:
            self._mode[slot] = _X_FREE if mode == "mc" else _OTHER
            entry.known = entry.exact = None
            if mode == "mc":  # its answer: the shares of its classes, as river normalises them
                stats = leaf.stats
                total = sum(stats.values())
                columns = [self._class_column(c) for c in stats]
                self._base[slot] = 0.0
                if total:
                    self._base[slot, columns] = [w / total for w in stats.values()]
            return entry
        stats = leaf.stats
        rebuild = whole or entry.known is None
        # (weight, Σ const, Σ |const|) per class, as last read
        known = {} if rebuild else entry.known
        columns = self._columns
        total = sum(stats.values())
        exact = {} if rebuild else entry.exact
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
            terms = []
            if w > 0:
                for att, obs in leaf.splitters.items():
                    params = gaussian_parameters(obs._att_dist_per_class.get(c))
                    if params is not None:  # else log p = -inf: skipped, as river does
                        f = columns[att]
                        mu[f], inv[f] = params[0], -0.5 / params[1]
                        const = -_HALF_LOG_TAU - 0.5 * math.log(params[1])
                        const_sum += const
                        const_abs += abs(const)
                        terms.append((att, *params))
            known[c] = (w, const_sum, const_abs)
            exact[c] = tuple(terms)
        for c, (w, const_sum, const_abs) in known.items():
            # A class of weight 0 votes 0.0 in river: no prior, no terms.
            prior = math.log(w / total) if w > 0 else 0.0
            j = self._class_index[c]
            self._base[slot, j] = prior + const_sum
            self._abs[slot, j] = abs(prior) + const_abs
        entry.known, entry.exact = known, exact
        self._mode[slot] = _NB if total > 0 else _OTHER
        return entry

    @staticmethod
    def _shape_of(model) -> tuple:
        """What changes when leaves leave the tree: this tree only grows, a leaf replaced by a
        branch."""
        return id(model._root), model._n_active_leaves, model._n_inactive_leaves

    def _follow_shape(self, model) -> None:
        """After a split, forget the leaves that left the tree (their rows are routed again)."""
        self._follow_names()
        shape = self._shape_of(model)
        if shape == self._shape:
            return
        self._shape = shape
        leaves = {id(leaf): leaf for leaf in model._root.iter_leaves()}
        for key, entry in list(self._entries.items()):
            if leaves.get(key) is not entry.leaf:
                del self._entries[key]
                self._free.append(entry.slot)
        self._in_tree = {entry.token >> self.SERIAL_SHIFT: entry
                         for entry in self._entries.values()}

    stamps_rows = True

    def predict_changed(self, model, rows, xs, before, at=None, scored=None):
        n = len(before)
        at = np.arange(n) if at is None else at
        if model._root is None:
            return (np.full(n, NONE), [], np.zeros(n, dtype=np.int64),
                    np.ones(n, dtype=bool), None if scored is None else np.full((n, 0), math.nan))
        stamps, changed, whole = self._restamp(model, rows, xs, before, at)
        unsure: list = [] if whole is None else whole.tolist()
        todo = (changed & (stamps != 0)).nonzero()[0]
        # Class probabilities: a naive Bayes leaf's rows from their votes, the rest below.
        proba = None if scored is None else np.zeros((n, len(self._classes)))
        codes, leader = self._score(rows, at, todo, stamps, unsure, proba)
        if not unsure:
            return codes, self._classes, stamps, changed, proba
        unsure = np.array(sorted(unsure), dtype=np.int64)
        codes, labels = finish_unsure(model, xs, codes, self._classes, unsure, leader)
        if proba is not None:  # river's own probabilities for the rows predict_one answered
            labels = list(labels)
            exact = proba_rows([scored(xs[i])[1] for i in unsure.tolist()], labels)
            proba = np.hstack([proba, np.zeros((n, len(labels) - proba.shape[1]))])
            proba[unsure] = exact
            if leader is not None:
                proba = proba[leader]
        return codes, labels, stamps, changed, proba

    def _restamp(self, model, rows, xs, before, at) -> tuple:
        """(stamps, changed, whole) for rows `rows[at]` last stamped `before`: each row's stamp
        is its leaf's current token, changed where it differs; `whole` (None: none) the rows
        the model itself answers, every time (stamp 0, changed)."""
        self._follow_shape(model)
        # Rows whose leaf is still in the tree take its current token (0: route the row again).
        # Serials are small numbers: bincount finds the few present without sorting.
        serials = before >> self.SERIAL_SHIFT
        now = np.zeros(int(serials.max()) + 1, dtype=np.int64)
        in_tree = self._in_tree
        for serial in np.bincount(serials).nonzero()[0].tolist():
            entry = in_tree.get(serial)
            if entry is not None:
                now[serial] = self._entry(entry.leaf, model).token
        stamps = now[serials]
        lost = (stamps == 0).nonzero()[0]
        whole = self._locate(model, rows, at, xs, lost, stamps) if len(lost) else None
        changed = stamps != before
        if whole is not None:
            changed[whole] = True
            stamps[whole] = 0
        return stamps, changed, whole

    def _locate(self, model, rows, at, xs, idx, stamps, took=None) -> np.ndarray | None:
        """Stamp rows `idx` (of `rows[at]`) with the tokens of the leaves they reach now;
        returns the rows that only the model itself answers (None: none). `took` (a list): a
        row without a value for a branch follows its most traversed path, and is listed
        there (`_reach`)."""
        root = model._root
        if not isinstance(root, _branch_class()):
            stamps[idx] = self._entry(root, model).token
            return None
        whole = []
        if len(idx) <= self.ROUTE_ONE_BY_ONE:
            reached = ((self._reach(root, xs[i], took, i), np.array([i])) for i in idx.tolist())
        else:
            reached = self._route(root, rows, xs, idx, at, took)
        for leaf, at_leaf in reached:
            if leaf is None:
                whole.extend(at_leaf.tolist())
            else:
                stamps[at_leaf] = self._entry(leaf, model).token
        return np.array(whole, dtype=np.int64) if whole else None

    def _reach(self, node, x, took=None, i=-1):
        """The leaf `x` reaches from `node`, or None where the model itself must answer: below
        a branch that has no child for x's value (a category or slot it has not seen, a
        feature x lacks) river takes the branch's most traversed path, which changes as the
        tree learns, so no stamp holds the row's answer. With `took` (a list), that path is
        taken, the row's number `i` listed there and the branch noted in `_guesses` (a window
        of snapshots closes when the path changes: `window_learned`)."""
        while isinstance(node, _branch_class()):
            if self._asks(node):
                return None
            try:
                node = node.next(x)
            except KeyError:
                if took is None:
                    return None
                took.append(i)
                node = self._most_traversed(node)
        return node

    def _most_traversed(self, branch):
        """The child river sends a row without a value for `branch` to, noted."""
        choice, child = branch.most_common_path()
        self._guesses[id(branch)] = (branch, choice)
        return child

    def _asks(self, branch) -> bool:
        """Whether the rows that reach `branch` are the model's own to answer."""
        return False

    def _route(self, node, rows, xs, idx, at=None, took=None):
        """(leaf, row indices) for the rows `idx` (of `rows[at]`, or of `rows`) reaching each
        leaf: down numeric splits as arrays, under any other kind of split by the tree's own
        traversal, row by row (`_reach`, `took` as there)."""
        from river.tree.nodes.branch import NumericBinaryBranch

        if not len(idx):
            return
        if not isinstance(node, _branch_class()):
            yield node, idx
        elif self._asks(node):
            yield None, idx
        elif isinstance(node, NumericBinaryBranch) and node.feature in self._columns:
            values = rows[idx if at is None else at[idx], self._columns[node.feature]]
            go_left, go_right = values <= node.threshold, values > node.threshold
            yield from self._route(node.children[0], rows, xs, idx[go_left], at, took)
            yield from self._route(node.children[1], rows, xs, idx[go_right], at, took)
            lacking = idx[~(go_left | go_right)]  # (NaN: rows without the feature)
            if len(lacking) and took is not None:
                took.extend(lacking.tolist())
                yield from self._route(self._most_traversed(node), rows, xs, lacking, at, took)
            elif len(lacking):
                yield None, lacking
        else:
            for i in idx.tolist():
                yield self._reach(node, xs[i], took, i), np.array([i])

    @property
    def _columns(self) -> dict:
        """{feature: column} of the names so far."""
        self._follow_names()
        return self._column_index()

    def _follow_names(self) -> None:
        """Room in the stacked arrays for the features rows brought since
        (`absent_features`)."""
        if hasattr(self, "_mode") and self._mu.shape[2] < len(self.names):
            self._alloc(len(self._mode), len(self._classes))

    def predict(self, model, rows, xs):
        if rows is None:
            return BatchPredictor.predict(self, model, rows, xs)
        codes, labels, _, _, _ = self.predict_changed(model, rows, xs,
                                                      np.zeros(len(rows), dtype=np.int64))
        return codes, labels

    def predict_scored(self, model, rows, xs, scored):
        if rows is None:
            return BatchPredictor.predict_scored(self, model, rows, xs, scored)
        codes, labels, _, _, proba = self.predict_changed(
            model, rows, xs, np.zeros(len(rows), dtype=np.int64), scored=scored)
        return codes, labels, proba

    def _score(self, rows, at, todo, stamps, unsure: list, proba=None):
        """Codes (into `self._classes`) of rows `todo` (of `rows[at]`) from their leaves'
        slots, all leaves in one pass; a majority-class leaf's rows take its most common class,
        unless two tie (then they follow a leader, which goes to `unsure` with the rest). With
        `proba` (rows × classes), a naive Bayes leaf's rows get river's probabilities from their
        votes, exp(vote − lse) (within a few units in the last place), a majority-class leaf's
        the shares of its classes."""
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
            lacking = np.isnan(votes[:, 0]).nonzero()[0]  # rows that lack a feature (NaN)
            if len(lacking):
                votes[lacking] = self._lacking_votes(x[lacking], s if np.ndim(s) == 0 else
                                                     s[lacking])
            best, near = argmax_with_margin(votes, self._abs[s] + (base - votes))
            codes[idx] = best
            if proba is not None:
                p = np.exp(votes - votes.max(axis=1, keepdims=True))
                proba[idx] = p / p.sum(axis=1, keepdims=True)
            unsure.extend(idx[near].tolist())
        if n_nb < len(nb):
            x_free = modes == _X_FREE
            if x_free.any():
                idx, s = todo[x_free], slots[x_free]
                shares = self._base[s]
                best, near = argmax_with_margin(shares, np.zeros_like(shares)) \
                    if shares.shape[1] else (None, np.arange(len(idx)))
                if best is not None:
                    codes[idx] = best
                if proba is not None:
                    proba[idx] = shares
                idx, s = idx[near], s[near]
            if x_free.any() and len(idx):  # a tie: the leaf's first row answers for all
                first = np.unique(s, return_index=True)[1]
                leader = np.arange(len(at))
                leader[idx] = idx[first[np.searchsorted(s[first], s)]]
                unsure.extend(idx[first].tolist())
            unsure.extend(todo[modes == _OTHER].tolist())
        return codes, leader

    def _lacking_votes(self, x: np.ndarray, s) -> np.ndarray:
        """Naive-Bayes votes of rows `x` that lack features (NaN) in the leaf slots `s` (one,
        or one per row)."""
        return lacking_votes(x[:, None, :], self._mu[s], self._inv[s], self._base[s])

    # -- re-predictions made later, from snapshots of the leaves --------------------------------
    defers = True  # a window of labels' re-predictions can be made at once (`window_block`)

    @property
    def window_open(self) -> bool:
        return self._window is not None

    @property
    def classes(self) -> list:
        """The classes the stacked arrays have a column for, in column order."""
        return self._classes

    def open_window(self, model, serials: np.ndarray) -> np.ndarray | None:
        """Begin a window of labels whose re-predictions are made later: a snapshot of every
        leaf as it is now. Returns which of the leaf `serials` (rows' leaves; 0: none yet) are
        not in the tree (those rows are to be routed again), or None (no window) if a leaf
        answers in a way a snapshot cannot hold."""
        self._window = None
        self._guesses = {}
        self._follow_shape(model)
        # Every leaf's entry first: a leaf seen for the first time gets a new serial, which
        # may grow the serials the window is sized by.
        entries = [(leaf, self._entry(leaf, model)) for leaf in model._root.iter_leaves()]
        window = LeafSnapshots(len(self._slot_of_serial))
        for leaf, entry in entries:
            snap = self._snapshot(window, entry, leaf, model)
            if snap is None:
                return None
            window.start[entry.token >> self.SERIAL_SHIFT] = snap
        self._window = window
        known = np.zeros(len(window.start), dtype=bool)
        known[list(self._in_tree)] = True
        return ~known[np.minimum(serials, len(known) - 1)] | (serials == 0)

    def window_route(self, model, rows, xs, at) -> tuple | None:
        """(serials of the leaves rows `at` (of `rows`) reach, whether each took a most
        traversed path: `xs[i]`, row at[i]'s dict, lacks a split's feature); None if a row
        reaches no leaf a snapshot can stand for (`_reach`). The window holds while those
        paths do; the rows that took one are to be routed again in the next window."""
        stamps, took = np.zeros(len(at), dtype=np.int64), []
        if self._locate(model, rows, at, xs, np.arange(len(at)), stamps, took) is not None:
            return None
        guessed = np.zeros(len(at), dtype=bool)
        guessed[took] = True
        return stamps >> self.SERIAL_SHIFT, guessed

    def window_learned(self, model, x, label_number: int) -> bool:
        """After the model learned `x` (label `label_number`): a snapshot of the leaf that
        learned. False (the window is closed): the tree changed otherwise (a split, leaves
        deactivated, a leaf no snapshot can hold); the caller makes the window's
        re-predictions first."""
        window = self._window
        shape = self._shape_of(model)
        if shape != self._shape \
                or model._train_weight_seen_by_model % model.memory_estimate_period == 0:
            return False
        for branch, choice in self._guesses.values():
            if branch.most_common_path()[0] != choice:
                return False  # a row that lacks the branch's feature now goes elsewhere
        root = model._root
        leaf = root.traverse(x, until_leaf=True) if isinstance(root, _branch_class()) else root
        entry = self._entries.get(id(leaf))
        if entry is None or entry.leaf is not leaf or entry.weight == leaf.total_weight:
            return False  # another leaf learned: leave it to a new window
        snap = self._snapshot(window, self._refresh(entry, model), leaf, model)
        if snap is None:
            return False
        serial = entry.token >> self.SERIAL_SHIFT
        learns, snaps = window.events.setdefault(serial, ([], []))
        learns.append(label_number)
        snaps.append(snap)
        return True

    def window_segments(self, serial: int, first: int, last: int) -> tuple:
        """(lo, hi, snapshot) arrays: the snapshot a row of leaf `serial` is predicted with at
        labels lo..hi (before learning them), for labels first..last of the window."""
        window = self._window
        learns, snaps = window.events.get(serial, ((), ()))
        learns = np.array(learns, dtype=np.int64)
        lo = np.concatenate([[first], learns + 1])
        hi = np.concatenate([learns, [last]])
        return lo, hi, np.array([window.start[serial], *snaps], dtype=np.int64)

    def window_block(self, x: np.ndarray, snaps: np.ndarray, need: np.ndarray, xs) -> np.ndarray:
        """Codes (into `self._classes`) of rows `x` (rows × features; `xs[i]` is row i's dict)
        predicted with each leaf snapshot of `snaps`, where `need` (rows × snapshots) asks.

        A naive-Bayes snapshot's votes for all rows at once are matrix products of the expanded
        square, Σ_f inv·x² − 2·inv·μ·x + inv·μ² (inv = −1/2σ²); that sum can lose more than the
        direct one, so a decision is trusted only when the best class wins by more than the
        tie margin plus a bound on that rounding (a few ε times the sum of the terms' sizes);
        the rest, and near ties, are computed as river computes them (`river_leaf_answer`);
        rows that lack a feature (NaN) by the direct sum (`lacking_votes`). A majority-class
        snapshot's answer was kept with it."""
        window = self._window
        n, m = need.shape
        codes = np.empty((n, m), dtype=np.int64)
        modes = window.mode[snaps]
        nb = (modes == _NB).nonzero()[0]
        if len(nb):
            s = snaps[nb]
            inv, mu, base = window.inv[s], window.mu[s], window.base[s]  # (S, C, F), (S, C)
            k, classes, features = inv.shape
            if x.shape[1] > features:  # features rows brought since: no snapshot reads them
                x = x[:, :features]
            lin = -2.0 * inv * mu
            const = (inv * mu * mu).sum(axis=2) + base
            x2 = x * x
            votes = (x2 @ inv.reshape(-1, features).T + x @ lin.reshape(-1, features).T
                     + const.reshape(-1)).reshape(n, k, classes)
            size = (x2 @ -inv.reshape(-1, features).T + np.abs(x) @ np.abs(lin).reshape(
                -1, features).T - (inv * mu * mu).sum(axis=2).reshape(-1)).reshape(n, k, classes)
            # The tie margin (as for the direct sum) plus the expanded sum's rounding.
            scale = window.abs[s] + (base - votes) + (2 * features + 8) * _EPS_OVER_MARGIN * size
            lacking = np.isnan(votes[:, 0, 0]).nonzero()[0]  # rows that lack a feature (NaN)
            if len(lacking):  # (their direct sums: the margin of `_score`)
                votes[lacking] = lacking_votes(x[lacking][:, None, None, :], mu, inv, base)
                scale[lacking] = window.abs[s] + (base - votes[lacking])
            best, near = argmax_with_margin(votes.reshape(-1, classes),
                                            scale.reshape(-1, classes))
            codes[:, nb] = best.reshape(n, k)
            cells = near[need[:, nb].reshape(-1)[near]]
            for cell in cells.tolist():
                i, j = divmod(cell, k)
                answer = river_leaf_answer(xs[i], window.records[s[j]])
                codes[i, nb[j]] = NONE if answer is None else self._class_column(answer)
        rest = (modes != _NB).nonzero()[0]
        codes[:, rest] = window.code[snaps[rest]]
        return codes

    def close_window(self, keep: bool) -> None:
        """The window's re-predictions are made: its last snapshots start the next one
        (`keep`), or there is none."""
        window = self._window
        if window is None:
            return
        if not keep:
            self._window = None
            return
        for serial, (_, snaps) in window.events.items():
            window.start[serial] = snaps[-1]
        window.events.clear()
        if window.n > 4 * len(self._in_tree) + 256:
            window.compact([entry.token >> self.SERIAL_SHIFT for entry in self._in_tree.values()])

    def _snapshot(self, window, entry: LeafEntry, leaf, model) -> int | None:
        """The leaf's state kept in the window (its number there), or None if it answers in a
        way no snapshot holds."""
        slot = entry.slot
        mode = int(self._mode[slot])
        if mode == _OTHER:
            return None
        if len(model.classes) != len(self._sorted):
            self._sorted = tuple(sorted(model.classes))
        n = window.reserve(self._mu.shape[1:])
        window.mu[n], window.inv[n] = self._mu[slot], self._inv[slot]
        window.base[n], window.abs[n], window.mode[n] = self._base[slot], self._abs[slot], mode
        if mode == _X_FREE:  # predict_one's answer, without the traversal
            window.code[n] = self._x_free_code(slot, leaf, model)
            window.records.append(None)
        else:
            window.records.append((tuple(leaf.stats.items()), dict(entry.exact), self._sorted))
        return n

    def _x_free_code(self, slot: int, leaf, model) -> int:
        """A majority-class leaf's answer: its most common class, from the shares its slot
        keeps; a tie (or no weight yet) as river breaks it, over the tree's classes sorted."""
        shares = self._base[slot]
        if len(shares) and shares.max() > 0.0:
            best, near = argmax_with_margin(shares[None, :], np.zeros((1, len(shares))))
            if not len(near):
                return int(best[0])
        proba = dict.fromkeys(self._sorted, 0.0)
        proba.update(leaf.prediction({}, tree=model))
        answer = max(proba, key=proba.get) if proba else None
        return NONE if answer is None else self._class_column(answer)


def lacking_votes(x: np.ndarray, mu: np.ndarray, inv: np.ndarray,
                  base: np.ndarray) -> np.ndarray:
    """Naive-Bayes votes of rows that lack features (NaN in `x`), from leaf arrays (classes ×
    features, broadcast against `x`'s): base_c + Σ_f (x_f − μ_cf)² · inv_cf over the features
    a row has, less the log-pdf constant −½ log(2πσ²) = −½ log 2π + ½ log(−2·inv) of each it
    lacks, which `base` holds — river's leaves skip a feature the row does not have.

    >>> mu, inv = np.array([[0.0, 0.0]]), np.array([[-0.5, -0.5]])  # σ² = 1
    >>> base = np.array([-2 * _HALF_LOG_TAU])
    >>> votes = lacking_votes(np.array([[[1.0, 2.0]], [[1.0, np.nan]]]), mu, inv, base)
    >>> np.allclose(votes[:, 0], [-2.5 - 2 * _HALF_LOG_TAU, -0.5 - _HALF_LOG_TAU])
    True
    """
    absent = np.isnan(x)
    d = np.where(absent, 0.0, x - mu)
    with np.errstate(divide="ignore"):  # (inv 0: no Gaussian, no constant)
        constants = np.where(inv < 0.0, 0.5 * np.log(-2.0 * inv) - _HALF_LOG_TAU, 0.0)
    return (d * d * inv).sum(axis=-1) + base - (absent * constants).sum(axis=-1)


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


def _slots_of(slots: int, classes: int, features: int, names=tuple(_ABSENT)) -> dict:
    shapes = {"_mu": (slots, classes, features), "_inv": (slots, classes, features),
              "_base": (slots, classes), "_abs": (slots, classes), "_mode": (slots,)}
    return {name: np.full(shapes[name], _ABSENT[name], dtype=np.int8 if name == "_mode" else float)
            for name in names}


@functools.cache
def _leaf_classes() -> tuple:
    """river's HTC leaf types by how they predict: (majority class, naive Bayes, adaptive).
    A random-subspace leaf of a forest's tree learns from some features only and predicts as
    its base type."""
    from river.tree.nodes.arf_htc_nodes import (RandomLeafMajorityClass, RandomLeafNaiveBayes,
                                                RandomLeafNaiveBayesAdaptive)
    from river.tree.nodes.htc_nodes import LeafMajorityClass, LeafNaiveBayes, LeafNaiveBayesAdaptive

    return ((LeafMajorityClass, RandomLeafMajorityClass), (LeafNaiveBayes, RandomLeafNaiveBayes),
            (LeafNaiveBayesAdaptive, RandomLeafNaiveBayesAdaptive))


@functools.cache
def _hat_leaf_class():
    from river.tree.nodes.hatc_nodes import AdaLeafClassifier

    return AdaLeafClassifier


def _leaf_mode(leaf, tree) -> str:
    """How a river HTC leaf predicts now: "mc" (majority class, x-free), "nb", or "other"."""
    majority, naive_bayes, adaptive = _leaf_classes()
    kind = type(leaf)
    if kind in majority:
        return "mc"
    if kind is _hat_leaf_class():  # one leaf type, predicting as the tree's option says
        option = tree.leaf_prediction
        if not leaf.is_active() or option == tree._MAJORITY_CLASS:
            return "mc"
        if option == tree._NAIVE_BAYES:
            return "nb" if leaf.total_weight >= tree.nb_threshold else "mc"
        return "nb" if leaf._nb_correct_weight >= leaf._mc_correct_weight else "mc"
    if kind in adaptive:
        nb = leaf.is_active() and leaf._nb_correct_weight >= leaf._mc_correct_weight
        return "nb" if nb else "mc"
    if kind in naive_bayes:
        nb = leaf.is_active() and leaf.total_weight >= tree.nb_threshold
        return "nb" if nb else "mc"
    return "other"


def tree_class_and_proba(model, x: dict) -> tuple:
    """(`predict_one(x)`, `predict_proba_one(x)`) of river's `HoeffdingTreeClassifier`, with
    its own arithmetic: a leaf answering with its majority class divides its class weights by
    their sum as river does, without river's deep copy of them first; any other leaf (naive
    Bayes) answers for itself.

    Example
    -------

    >>> import itertools
    >>> from river import datasets, tree
    >>> model = tree.HoeffdingTreeClassifier(grace_period=50)
    >>> answers, expected = [], []
    >>> for x, y in itertools.islice(datasets.synth.Agrawal(seed=3), 1000):
    ...     answers.append(tree_class_and_proba(model, x))
    ...     expected.append((model.predict_one(x), model.predict_proba_one(x)))
    ...     model.learn_one(x, y)
    >>> answers == expected, model.n_leaves > 1
    (True, True)
    """
    proba = {c: 0.0 for c in sorted(model.classes)}
    leaf = model._root
    if leaf is not None:
        if isinstance(leaf, _branch_class()):
            leaf = leaf.traverse(x, until_leaf=True)
        if _leaf_mode(leaf, model) == "mc":
            weights = leaf.stats
            total = sum(weights.values())
            scale = None if total == 0 or math.isnan(total) else 1 / total
            proba.update(weights if scale is None else
                         {c: w * scale for c, w in weights.items()})
        else:
            proba.update(leaf.prediction(x, tree=model))
    return (max(proba, key=proba.get) if proba else None), proba


def tree_predict_one(model, x: dict):
    """`predict_one(x)` of river's `HoeffdingTreeClassifier`: `tree_class_and_proba`'s class.

    >>> from river import tree
    >>> model = tree.HoeffdingTreeClassifier()
    >>> tree_predict_one(model, {"a": 1.0}) is None
    True
    >>> model.learn_one({"a": 1.0}, "yes")
    >>> tree_predict_one(model, {"a": 2.0})
    'yes'
    """
    return tree_class_and_proba(model, x)[0]


@functools.cache
def leaves_add_log_densities() -> bool:
    """Whether river's naive Bayes leaves add their Gaussians' log-densities, as the arrays
    here do (river 0.22, for Python 3.10, takes the log of each density: other roundings, so
    there its naive Bayes leaves answer for themselves).

    >>> leaves_add_log_densities()
    True
    """
    from river.tree.splitter import GaussianSplitter

    return hasattr(GaussianSplitter, "cond_log_proba")


def _gaussian_leaf(splitters: dict, columns: dict) -> bool:
    """Whether river's naive Bayes of a leaf with these splitters reads only Gaussian
    splitters of our columns (by their log-densities)."""
    from river.tree.splitter import GaussianSplitter

    return leaves_add_log_densities() and all(att in columns and type(obs) is GaussianSplitter
                                              for att, obs in splitters.items())


# The expanded sum of a naive-Bayes vote (2F + 2 terms, each computed in a few roundings) may
# lose up to about (2F + 8)·ε of its terms' summed sizes: counted twice over, and divided by
# TIE_MARGIN, which argmax_with_margin multiplies the scale by.
_EPS_OVER_MARGIN = 2.0 ** -51 / TIE_MARGIN


class LeafSnapshots:
    """Leaf states over a window of labels: per snapshot the stacked naive-Bayes arrays of
    `HoeffdingTreeBatch`, the mode, the majority-class answer (x-free leaves) and what river's
    own computation reads (naive Bayes leaves: `river_leaf_answer`); per leaf serial the
    snapshot at the window's start and the labels it learned in the window.

    Example
    -------

    >>> window = LeafSnapshots(serials=4)
    >>> n = window.reserve((2, 3)); window.records.append(None)
    >>> n, window.mu.shape[1:], window.n
    (0, (2, 3), 1)

    """

    def __init__(self, serials: int):
        self.n = 0
        self.start = np.zeros(serials, dtype=np.int64)
        self.events: dict = {}  # serial -> ([label numbers], [snapshots]) in the window
        self.records: list = []
        self.mu = np.zeros((0, 0, 0))
        self.inv = self.mu.copy()
        self.base = np.zeros((0, 0))
        self.abs = self.base.copy()
        self.mode = np.zeros(0, dtype=np.int8)
        self.code = np.zeros(0, dtype=np.int64)

    def reserve(self, shape: tuple) -> int:
        """The number of a new snapshot (classes × features `shape`); grows the arrays
        (classes seen since get the values of a class the leaf has not seen)."""
        classes, features = shape
        n = self.n
        if n == len(self.mode) or classes > self.mu.shape[1] or features != self.mu.shape[2]:
            cap = max(64, 2 * len(self.mode)) if n == len(self.mode) else len(self.mode)
            old = {"_mu": self.mu, "_inv": self.inv, "_base": self.base, "_abs": self.abs}
            fresh = _slots_of(cap, classes, features, old)
            for name, array in old.items():
                if array.size:
                    fresh[name][tuple(slice(0, size) for size in array.shape)] = array
            self.mu, self.inv, self.base, self.abs = (fresh[name] for name in old)
            self.mode = np.resize(self.mode, cap)
            self.code = np.resize(self.code, cap)
        self.n += 1
        return n

    def compact(self, serials: list) -> None:
        """Keep only the start snapshots of leaves `serials` (the window is empty)."""
        keep = np.unique(self.start[serials])
        new = np.zeros(max(self.n, 1), dtype=np.int64)
        new[keep] = np.arange(len(keep))
        for name in ("mu", "inv", "base", "abs", "mode", "code"):
            array = getattr(self, name)
            setattr(self, name, array[keep].copy())
        self.records = [self.records[i] for i in keep.tolist()]
        self.start[serials] = new[self.start[serials]]
        self.n = len(keep)


def river_leaf_answer(x: dict, record: tuple):
    """`predict_one` of a Hoeffding tree for `x`, whose leaf predicts by naive Bayes in the
    state `record` = (class weights as (class, weight) pairs, {class: ((feature, μ, σ²), ...)}
    in splitter order, the tree's classes sorted): river's own arithmetic, operation for
    operation (`do_naive_bayes_prediction`, then `predict_proba_one`'s dict and max).

    >>> record = ((0, 2.0), (1, 2.0)), {0: (("a", 0.0, 1.0),), 1: (("a", 1.0, 1.0),)}, (0, 1)
    >>> river_leaf_answer({"a": 0.2}, record), river_leaf_answer({"a": 0.5}, record)
    (0, 0)
    """
    stats, terms, classes = record
    total = sum(w for _, w in stats)
    votes = {}
    for c, w in stats:
        if not w > 0:
            votes[c] = 0.0
            continue
        vote = math.log(w / total)
        for att, mu, variance in terms.get(c, ()):
            if att not in x:
                continue
            log_p = (x[att] - mu) ** 2 / (-2.0 * variance) - _HALF_LOG_TAU \
                - 0.5 * math.log(variance)
            if log_p > -math.inf:
                vote += log_p
        votes[c] = vote
    max_ll = max(votes.values())
    lse = max_ll + math.log(sum(math.exp(v - max_ll) for v in votes.values()))
    proba = dict.fromkeys(classes, 0.0)
    for c, v in votes.items():
        proba[c] = math.exp(v - lse)
    return max(proba, key=proba.get) if proba else None


class HoeffdingAdaptiveTreeBatch(HoeffdingTreeBatch):
    """river `HoeffdingAdaptiveTreeClassifier`: a row whose path passes no alternate tree gets
    its one leaf's answer, as `HoeffdingTreeBatch` gives it (the tree's leaf prediction option
    read per leaf; the leaf's scaling by its error changes no decision, and a near tie is
    `predict_one`'s); a row that passes one (after a drift, while the alternate grows) is
    answered by `predict_one`, which adds the leaves' votes. When an alternate appears every row
    is routed again; re-predictions are made as labels come (no window of snapshots).

    Example
    -------

    >>> import itertools
    >>> from river import datasets, tree
    >>> model = tree.HoeffdingAdaptiveTreeClassifier(grace_period=50, seed=1)
    >>> data = list(itertools.islice(datasets.synth.Agrawal(seed=1), 800))
    >>> for x, y in data[:700]:
    ...     model.learn_one(x, y)
    >>> xs = [x for x, _ in data[700:]]
    >>> batch = HoeffdingAdaptiveTreeBatch()
    >>> codes, labels = batch.predict(model, np.array([batch.encode(x) for x in xs]), xs)
    >>> [labels[c] for c in codes] == [model.predict_one(x) for x in xs]
    True
    """

    defers = False

    def __init__(self):
        super().__init__()
        self._counts = None  # the tree's alternate-tree counters when last read
        self._alternates: frozenset = frozenset()  # ids of branches holding an alternate

    def __getstate__(self):
        # (ids of this process's objects)
        return super().__getstate__() | {"_counts": None, "_alternates": frozenset()}

    @staticmethod
    def _shape_of(model) -> tuple:
        # A switch replaces a subtree, maybe by one with as many leaves.
        return (id(model._root), model._n_active_leaves, model._n_inactive_leaves,
                model._n_alternate_trees, model._n_switch_alternate_trees,
                model._n_pruned_alternate_trees)

    def predict_changed(self, model, rows, xs, before, at=None, scored=None):
        counts = self._shape_of(model)
        if counts != self._counts:
            self._counts = counts
            alternates = frozenset(id(node) for node in _branches(model._root)
                                   if node._alternate_tree is not None)
            if alternates - self._alternates:
                # A row may pass a new one, whether due now or later: every row stamped so
                # far is routed again (its leaf is forgotten, its slot freed).
                self._free.extend(entry.slot for entry in self._entries.values())
                self._entries, self._in_tree = {}, {}
            self._alternates = alternates
        return super().predict_changed(model, rows, xs, before, at, scored)

    def _asks(self, branch) -> bool:
        return id(branch) in self._alternates  # (river adds the alternate tree's votes)


def _branches(node):
    """The branches of a tree under `node`, alternate trees' included."""
    if isinstance(node, _branch_class()):
        yield node
        for child in node.children:
            yield from _branches(child)
        if node._alternate_tree is not None:
            yield from _branches(node._alternate_tree)


class HoeffdingTreeRegressorBatch(HoeffdingTreeBatch):
    """river `HoeffdingTreeRegressor` (leaf prediction mean, model or adaptive): rows routed
    and stamped as `HoeffdingTreeBatch` does, so a row is predicted again only when its leaf
    learned; a leaf answers with its mean, for all its rows at once, or with its linear
    model's w·x + b (`LinearRegressionBatch`, bit for bit), whichever it predicts with now.
    Another leaf model answers each row with the tree's `predict_one`.

    Example
    -------

    >>> import itertools
    >>> from river import datasets, tree
    >>> model = tree.HoeffdingTreeRegressor(grace_period=50)
    >>> data = list(itertools.islice(datasets.synth.Friedman(seed=1), 800))
    >>> for x, y in data[:700]:
    ...     model.learn_one(x, y)
    >>> xs = [x for x, _ in data[700:]]
    >>> batch = HoeffdingTreeRegressorBatch()
    >>> codes, values = batch.predict(model, np.array([batch.encode(x) for x in xs]), xs)
    >>> [values[c] for c in codes] == [model.predict_one(x) for x in xs]
    True
    """

    defers = False
    key_order = True  # a model leaf sums w·x over the row's own features in their key order

    def _refresh(self, entry: LeafEntry, model) -> LeafEntry:
        leaf = entry.leaf
        entry.splitters, entry.weight = leaf.splitters, leaf.total_weight
        entry.token = entry.token >> self.SERIAL_SHIFT << self.SERIAL_SHIFT | self._next_token
        self._next_token += 1
        entry.value = _regression_answer(leaf, self.names)
        return entry

    def predict_changed(self, model, rows, xs, before, at=None, scored=None):
        from transforms.models.linear_batch import key_order_sums

        n = len(before)
        at = np.arange(n) if at is None else at
        values = np.zeros(n)
        if model._root is None:  # (river's 0.0)
            return np.arange(n), values.tolist(), np.zeros(n, dtype=np.int64), \
                np.ones(n, dtype=bool), None
        stamps, changed, whole = self._restamp(model, rows, xs, before, at)
        ask = [] if whole is None else whole.tolist()
        todo = (changed & (stamps != 0)).nonzero()[0]
        serials = stamps[todo] >> self.SERIAL_SHIFT
        order = np.argsort(serials, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(serials[order]) != 0])
        for idx in np.split(todo[order], starts[1:]) if len(todo) else ():
            kind, answer = self._in_tree[int(stamps[idx[0]] >> self.SERIAL_SHIFT)].value
            if kind == "mean":
                values[idx] = answer
            elif kind == "model":
                values[idx] = key_order_sums(rows[at[idx]], answer, self.key_columns)
            else:
                ask.extend(idx.tolist())
        for i in ask:
            values[i] = model.predict_one(xs[i])
        return np.arange(n), values.tolist(), stamps, changed, None


def _regression_answer(leaf, names) -> tuple:
    """How a river HTR leaf predicts now: ("mean", its mean), ("model", its linear model's
    weights over `names` and intercept), or ("other", None). The leaves of the forest's trees
    and of the adaptive tree predict as the tree regressor's (they learn otherwise)."""
    from river.tree.nodes.htr_nodes import LeafAdaptive, LeafMean, LeafModel

    from transforms.models.linear_batch import fits_regression_batch, weights_over

    how = type(leaf).prediction
    if how is LeafMean.prediction or (
            how is LeafAdaptive.prediction and leaf._fmse_mean < leaf._fmse_model):
        return "mean", leaf.stats.mean.get()
    if how in (LeafModel.prediction, LeafAdaptive.prediction) and \
            fits_regression_batch(leaf._leaf_model):
        return "model", weights_over(leaf._leaf_model, names)
    return "other", None


class HoeffdingAdaptiveTreeRegressorBatch(HoeffdingAdaptiveTreeBatch, HoeffdingTreeRegressorBatch):
    """river `HoeffdingAdaptiveTreeRegressor`: a row whose path passes no alternate tree gets
    its one leaf's value, as `HoeffdingTreeRegressorBatch` gives it (river's mean over the
    leaves reached is that value); a row that passes one is answered by `predict_one`, which
    averages the leaves' values, as `HoeffdingAdaptiveTreeBatch` does for the classifier.

    Example
    -------

    >>> import itertools
    >>> from river import datasets, tree
    >>> model = tree.HoeffdingAdaptiveTreeRegressor(grace_period=50, seed=1)
    >>> data = list(itertools.islice(datasets.synth.Friedman(seed=1), 800))
    >>> for x, y in data[:700]:
    ...     model.learn_one(x, y)
    >>> xs = [x for x, _ in data[700:]]
    >>> batch = HoeffdingAdaptiveTreeRegressorBatch()
    >>> codes, values = batch.predict(model, np.array([batch.encode(x) for x in xs]), xs)
    >>> [values[c] for c in codes] == [model.predict_one(x) for x in xs]
    True
    """
