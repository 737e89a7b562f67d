"""The random generators a model holds, so that the predictions an evaluation adds draw nothing
from them (`RandomStates`).

A model may draw random numbers while it predicts: river's SWINN, the default search of its kNN
models, picks where each search starts at random. The final predictions and re-predictions an
evaluation adds would then change what the model learns and predicts afterwards, its initial
predictions among them, which river's and MOA's delayed evaluations make alone: the initial
scores would move with `--repredict` and `--no-final`. Made inside `RandomStates.kept()`, they
leave every generator as it was.
"""

from __future__ import annotations

import os
import random
import sys
import types
from collections import deque

import numpy as np

# A replay's count key naming the hash seed of the process it ran in (`hash_seed`).
HASH_SEED_COUNT = "hash_seed="

# What holds no generator, and is not walked into.
_LEAVES = (str, bytes, int, float, complex, type(None), np.ndarray, np.generic, type,
           types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


class RandomStates:
    """The generators (`random.Random`, NumPy's `Generator` and `RandomState`) reachable from a
    model's attributes when it is built; `kept()` is a context that restores their states on
    leaving it, and costs next to nothing unless the model draws inside it.

    A generator of exactly `random.Random`, as river's models all hold, is made to save its
    state at its first draw inside the context (`_WatchedRandom`); the others' states are saved
    on entering it.

    Example
    -------

    >>> class Dice:
    ...     def __init__(self):
    ...         self.rng = random.Random(1)
    ...     def predict_one(self, x):
    ...         return self.rng.random()
    >>> model = Dice()
    >>> states = RandomStates(model)
    >>> with states.kept():
    ...     asked_aside = model.predict_one({})
    >>> model.predict_one({}) == asked_aside
    True
    >>> RandomStates(object()).kept() is RandomStates(object()).kept()  # (none: no work)
    True
    """

    def __init__(self, model):
        self.watched, self.others = [], []
        for g in generators_in(model):
            if type(g) is random.Random:
                g.__class__ = _WatchedRandom  # (the same object and numbers, watched)
            (self.watched if type(g) is _WatchedRandom else self.others).append(g)

    def kept(self):
        return _Kept(self.watched, self.others) if self.watched or self.others \
            else _NOTHING_KEPT


def generators_in(model) -> list:
    """The random generators reachable from `model` through attributes and containers, each
    once, in a fixed order.

    >>> from river import naive_bayes, neighbors
    >>> model = neighbors.KNNClassifier(engine=neighbors.SWINN(seed=1))
    >>> [type(g).__name__ for g in generators_in(model)]  # (the engine given, and its copy used)
    ['Random', 'Random']
    >>> generators_in(naive_bayes.GaussianNB())
    []
    """
    found, seen, todo = [], set(), deque([model])
    while todo:
        obj = todo.popleft()
        if isinstance(obj, _LEAVES) or id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, (random.Random, np.random.Generator, np.random.RandomState)):
            found.append(obj)
        elif isinstance(obj, dict):
            todo.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset, deque)):
            todo.extend(obj)
        else:
            todo.extend(getattr(obj, "__dict__", {}).values())
            for cls in type(obj).__mro__:
                for name in getattr(cls, "__slots__", ()):
                    if hasattr(obj, name):
                        todo.append(getattr(obj, name))
    return found


class _WatchedRandom(random.Random):
    """A `random.Random` that, set aside (`aside`), saves its state before it first draws."""

    aside = False
    saved = None

    def _save(self) -> None:
        if self.saved is None:
            self.saved = random.Random.getstate(self)

    def random(self):
        if self.aside:
            self._save()
        return super().random()

    def getrandbits(self, k):
        if self.aside:
            self._save()
        return super().getrandbits(k)

    def gauss(self, mu=0.0, sigma=1.0):  # (may use its kept second value, drawing nothing)
        if self.aside:
            self._save()
        return super().gauss(mu, sigma)

    def restore(self) -> None:
        self.aside = False
        if self.saved is not None:
            random.Random.setstate(self, self.saved)
            self.saved = None


class _Kept:
    """Sets the watched generators aside and saves the others' states on entering; restores
    every one on leaving."""

    __slots__ = ("watched", "others", "states")

    def __init__(self, watched: list, others: list):
        self.watched, self.others = watched, others

    def __enter__(self):
        for g in self.watched:
            g.aside = True
        self.states = [_state(g) for g in self.others]

    def __exit__(self, *exc):
        for g in self.watched:
            g.restore()
        for g, state in zip(self.others, self.states):
            _restore(g, state)
        return False


class _NothingKept:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


_NOTHING_KEPT = _NothingKept()


def _state(g):
    if isinstance(g, random.Random):
        return g.getstate()
    if isinstance(g, np.random.Generator):
        return g.bit_generator.state
    return g.get_state()


def _restore(g, state) -> None:
    if isinstance(g, random.Random):
        g.setstate(state)
    elif isinstance(g, np.random.Generator):
        g.bit_generator.state = state
    else:
        g.set_state(state)


def hash_seed() -> str:
    """This Python's seed for hashing text, which orders the sets of text a model walks:
    PYTHONHASHSEED as it started, 'random' when unset (the `delayed-eval` command sets 0).

    >>> hash_seed() in ("random", os.environ.get("PYTHONHASHSEED"))
    True
    """
    if not sys.flags.hash_randomization:
        return "0"
    seed = os.environ.get("PYTHONHASHSEED", "random")
    return "random" if seed in ("", "0") else seed  # (0 set after it started: not in force)
