"""Folding a key's outcomes in label order as they come: for the statistics that are truly
sequential (Page-Hinkley, the stream profile's runs), without gathering every label first.

A replay emits each key's outcome batches in label order, and Beam pre-combines them where they
are made, so each batch is folded as it arrives and memory is the fold's state. A batch that
comes early (another bundle, another worker, a backfill's id bucket) waits in the accumulator
until the labels before it have been folded; merging accumulators does the same. The fold thus
sees every label once and in label order, whatever the bundling: the same numbers as sorting
all labels first.
"""

from __future__ import annotations

import heapq
from typing import Protocol

import apache_beam as beam
import numpy as np


class Fold(Protocol):
    """A sequential statistic: `start()` -> state; `step(state, rows)` -> state, for the rows of
    consecutive labels (first column: the label number n); `result(state)`.

    Example
    -------

    >>> class Total:
    ...     def start(self): return 0.0
    ...     def step(self, total, rows): return total + float(rows[:, 1].sum())
    ...     def result(self, total): return total
    >>> fold = InLabelOrder(Total())
    >>> acc = fold.add_input(fold.create_accumulator(), ([2], np.array([[2, 5.0]])))
    >>> fold.extract_output(fold.add_input(acc, ([1], np.array([[1, 1.0]]))))
    6.0

    """

    def start(self): ...

    def step(self, state, rows: np.ndarray): ...

    def result(self, state): ...


def label_runs(labels, rows: np.ndarray) -> list[tuple[int, int, np.ndarray]]:
    """Split a batch into runs of consecutive label numbers: (first n, last n, its rows).

    `labels` are the batch's label numbers (every outcome's); `rows` the fold's rows, first
    column n (perhaps fewer: a label without a prediction has no loss).

    >>> rows = np.array([[5, 0.], [2, 1.], [3, 0.]])
    >>> [(a, b, r[:, 0].tolist()) for a, b, r in label_runs([5, 3, 2, 9], rows)]
    [(2, 3, [2.0, 3.0]), (5, 5, [5.0]), (9, 9, [])]
    """
    n = np.unique(np.asarray(labels, dtype=np.int64))
    if not len(n):
        return []
    rows = rows[np.argsort(rows[:, 0], kind="stable")]
    breaks = np.flatnonzero(np.diff(n) != 1) + 1
    firsts, lasts = n[np.r_[0, breaks]], n[np.r_[breaks - 1, len(n) - 1]]
    cut = np.searchsorted(rows[:, 0], lasts, side="right")
    return [(int(a), int(b), part) for a, b, part in zip(firsts, lasts, np.split(rows, cut[:-1]))]


class _Folding:
    __slots__ = ("state", "next", "held", "arrived")

    def __init__(self, state):
        self.state = state
        self.next = 1  # the next label number the fold takes
        # Runs that came early, as a heap of (first n, arrival, last n, rows): the next run to
        # fold is taken in O(log runs), so a key fed in any order folds in O(runs · log runs).
        self.held: list = []
        self.arrived = 0  # runs held so far: ties on first n keep their arrival order

    def hold(self, runs) -> None:
        for first, last, rows in runs:
            heapq.heappush(self.held, (first, self.arrived, last, rows))
            self.arrived += 1


class InLabelOrder(beam.CombineFn):
    """Combine `(labels, rows)` batches of one key by folding them in label order (`Fold`).

    >>> class Count:
    ...     def start(self): return []
    ...     def step(self, seen, rows): return seen + rows[:, 0].astype(int).tolist()
    ...     def result(self, seen): return seen
    >>> fold = InLabelOrder(Count())
    >>> acc = fold.add_input(fold.create_accumulator(), ([3, 4], np.array([[3], [4]])))
    >>> acc.held != [], acc.next  # 3..4 waits for 1..2
    (True, 1)
    >>> fold.extract_output(fold.add_input(acc, ([1, 2], np.array([[1], [2]]))))
    [1, 2, 3, 4]
    """

    def __init__(self, fold: Fold):
        self.fold = fold

    def create_accumulator(self):
        return _Folding(self.fold.start())

    def _advance(self, acc: _Folding, drain: bool = False) -> _Folding:
        while acc.held and (drain or acc.held[0][0] <= acc.next):
            _, _, last, rows = heapq.heappop(acc.held)
            acc.state = self.fold.step(acc.state, rows)
            acc.next = max(acc.next, last + 1)
        return acc

    def add_input(self, acc, batch):
        labels, rows = batch
        acc.hold(label_runs(labels, rows))
        return self._advance(acc)

    def merge_accumulators(self, accs):
        accs = list(accs)
        # Only the accumulator holding label 1 has folded anything; the others only hold runs.
        folded = max(accs, key=lambda a: a.next)
        merged = _Folding(folded.state)
        merged.next = folded.next
        merged.hold((first, last, rows) for a in accs
                    for first, _, last, rows in sorted(a.held, key=lambda run: run[:2]))
        return self._advance(merged)

    def extract_output(self, acc):
        # Runs still held follow a gap (labels that never came): folded in order all the same.
        return self.fold.result(self._advance(acc, drain=True).state)
