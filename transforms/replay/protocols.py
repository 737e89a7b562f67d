"""Evaluation protocols beside the delayed prequential one: the periodic holdout (Gama et al.
2009) and delayed cross-validation (MOA's EvaluatePrequentialDelayedCV).

Both are rules the replay engine follows as it drains a stream, so every replay path gives the
same numbers: which instances a holdout set takes, and which labels each fold's model learns.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from metrics.bootstrap import poisson_weights
from transforms.errors import ConfigError

CV_METHODS = ("k-fold", "bootstrap", "split")
# A fold's model is named `model#fold` (1-based) in the results; `#` is refused in model names.
FOLD_SEPARATOR = "#"
CV_SEED = 0x5EED_CF
MOST_FOLDS = 1_000  # K: each fold is a copy of each model


@dataclass(frozen=True)
class Holdout:
    """`--holdout EVERY:SIZE`: after every EVERY labels the current model (a copy, frozen there)
    predicts the next SIZE instances to arrive; they are never learned from and leave the
    delayed prequential stream, and their labels, as they arrive, score that holdout point.

    >>> Holdout.parse("1000:200")
    Holdout(every=1000, size=200)
    """

    every: int
    size: int

    @classmethod
    def parse(cls, text: str) -> Holdout:
        try:
            every, size = (int(v) for v in text.split(":"))
        except ValueError:
            raise ConfigError(f"--holdout {text!r}: not EVERY:SIZE (labels between holdout "
                              f"sets : instances in each), e.g. 1000:200") from None
        if every < 1 or size < 1:
            raise ConfigError(f"--holdout {text!r}: EVERY and SIZE must be at least 1")
        return cls(every, size)

    def __str__(self) -> str:
        return f"{self.every}:{self.size}"


@dataclass(frozen=True)
class CrossValidation:
    """`--cv METHOD:K`: K copies of each model, each predicting every instance and learning the
    labels of its fold's training instances — instance number m (1, 2, … in arrival order) is
    learned by fold i (0-based) when

    - `k-fold`: m mod K ≠ i (each instance is left out of one fold's training);
    - `split`: m mod K = i (each instance trains one fold only);
    - `bootstrap`: its Poisson(1) weight for (m, i) is above 0 (a seeded hash, the same on every
      runner; MOA draws from one random sequence).

    As in MOA's EvaluatePrequentialDelayedCV, a weight above 0 means the label is learned
    once: river's models take no instance weight. A fold learns a label when it arrives (MOA
    queues each fold's own instances and counts the delay in that queue: docs/semantics.md).

    >>> cv = CrossValidation.parse("k-fold:3")
    >>> [[cv.learns(i, m) for m in range(1, 7)] for i in range(3)]
    [[True, True, False, True, True, False], [False, True, True, False, True, True], \
[True, False, True, True, False, True]]
    >>> cv.names("nb")
    ['nb#1', 'nb#2', 'nb#3']
    """

    method: str
    folds: int

    @classmethod
    def parse(cls, text: str) -> CrossValidation:
        method, _, folds = text.partition(":")
        if method not in CV_METHODS or not folds.isdigit() or int(folds) < 2:
            raise ConfigError(f"--cv {text!r}: not METHOD:K with METHOD one of "
                              f"{', '.join(CV_METHODS)} and K ≥ 2 folds, e.g. k-fold:10")
        if int(folds) > MOST_FOLDS:
            raise ConfigError(f"--cv {text!r}: at most {MOST_FOLDS:,} folds (each fold is a "
                              f"copy of each model, with results of its own)")
        return cls(method, int(folds))

    def learns(self, fold: int, m: int) -> bool:
        """Whether fold `fold` (0-based) learns instance number `m` (1-based)."""
        if self.method == "k-fold":
            return m % self.folds != fold
        if self.method == "split":
            return m % self.folds == fold
        return bool(poisson_weights([m], self.folds, CV_SEED)[0, fold] > 0)

    def names(self, model: str) -> list[str]:
        """The fold models' names of `model`, fold 1 to K."""
        return [f"{model}{FOLD_SEPARATOR}{i}" for i in range(1, self.folds + 1)]

    def __str__(self) -> str:
        return f"{self.method}:{self.folds}"


def model_and_fold(name: str) -> tuple[str, int | None]:
    """A result's model name -> (the model, its fold number, None for a model without folds).

    >>> model_and_fold("nb#3"), model_and_fold("nb")
    (('nb', 3), ('nb', None))
    """
    model, sep, fold = name.rpartition(FOLD_SEPARATOR)
    if sep and fold.isdigit():
        return model, int(fold)
    return name, None


def comparable_pairs(models, tasks: dict) -> list[tuple[str, str]]:
    """Pairs of models of the same task, in configuration order (the order of `tasks`); with
    --cv, the same fold of two models (they learned the same labels).

    >>> tasks = {"nb": "classification", "lr": "regression", "ht": "classification"}
    >>> comparable_pairs(["ht", "lr", "nb"], tasks)
    [('nb', 'ht')]
    """
    order = {m: i for i, m in enumerate(tasks)}
    models = sorted(models, key=order.get)
    return [(a, b) for a, b in itertools.combinations(models, 2)
            if tasks[a] == tasks[b] and model_and_fold(a)[1] == model_and_fold(b)[1]]
