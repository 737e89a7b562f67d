"""Classifiers that use the temporal dependence of the labels (Žliobaitė et al. 2015, §3).

Both wrap any river classifier, named by a model spec string so that a run's configuration stays
serialisable: `temporal-correction{"model": "gaussian-nb"}`,
`temporally-augmented{"model": "hoeffding-tree", "lags": 2}`.

"Previous label" in the delayed setting: the latest label that has *arrived* (been learned), not
the label of the previous instance, which may still be pending. That is the only label a deployed
model can know when it predicts; with delay d it is y_{t−d} or older.

Paper 003 assumes labels arrive at once, so the wrappers' training pairs and their prediction
inputs agree: (y_{t−1}, y_t). Under a delay they must agree too, so a wrapper learns from what it
saw when it predicted: the replay tells it when an instance arrives (`instance_arrived(id)`: it
keeps the labels it knows then) and whose label it learns next (`label_arrived(id)`), and it
learns (those labels, the new label). With delay 1 that is (y_{t−1}, y_t), as in the paper; with
delay d, (y_{t−d} or older, y_t) — the relation it will use. A label without a kept context (an
orphan, or a wrapper driven by a plain river loop) is learned with the labels known now.

Where the label known at arrival says little (a long delay, a weak dependence), estimating that
relation from the labels seen so far can cost more than it brings. With `guard` z, a wrapper
uses the labels only while that has paid: before learning each label it predicts the instance
both ways, with the labels known at its arrival and by the wrapped model alone, and counts the
labels where only the first was right (`gained`) and where only the second was (`lost`); it uses
the labels while gained − lost > z·√(gained + lost) (McNemar's test on the labels where the two
disagree, one-sided), and answers as the wrapped model alone otherwise — from the start, too.
"""

from __future__ import annotations

import math
from collections import Counter, deque

from river import base


def _build(model):
    if isinstance(model, str):
        from transforms.models.specs import ModelSpec

        return ModelSpec.parse(model).build()
    return model.clone()


def delay_aware(model):
    """The part of `model` (itself, or a pipeline's last step) that wants to be told of
    arrivals and labels (`instance_arrived`, `label_arrived`), or None.

    >>> delay_aware(TemporalCorrection()) is not None, delay_aware(object())
    (True, None)
    """
    from river import compose

    if isinstance(model, compose.Pipeline):
        model = list(model.steps.values())[-1]
    return model if hasattr(model, "instance_arrived") else None


_NOW = object()  # no kept context: learn with the labels known now


def _best(proba: dict):
    """The most probable class; ties go to the first in the dict's order (river's max)."""
    return max(proba, key=proba.get) if proba else None


class _LabelAware(base.Wrapper, base.Classifier):
    """A classifier around another one, built from its spec, that learns each label with the
    label context it had when it predicted that instance at arrival (see the module doc)."""

    def __init__(self, model, guard: float | None = None):
        if guard is not None and (isinstance(guard, bool) or not isinstance(guard, (int, float))
                                  or not guard >= 0 or math.isinf(guard)):
            raise ValueError(f"guard must be a number of standard errors, 0 or more (3 is "
                             f"usual), or null for none, not {guard!r}")
        self.model = model
        self.guard = guard
        self._model = _build(model)
        self._contexts: dict = {}  # pending instance id -> its context at arrival
        self._learning = _NOW  # the context for the next learn_one
        self.gained = self.lost = 0  # (the guard's: labels only one of its two predictions hit)

    @property
    def uses_labels(self) -> bool:
        """Whether predictions use the labels now: always without a guard; with guard z, while
        gained − lost > z·√(gained + lost) (see the module doc)."""
        if self.guard is None:
            return True
        return self.gained - self.lost > self.guard * math.sqrt(self.gained + self.lost)

    def _tally(self, with_labels, alone, y) -> None:
        """Count a label for the guard: the two predictions of its instance, made before
        learning it."""
        self.gained += with_labels == y and alone != y
        self.lost += alone == y and with_labels != y

    def _context(self):
        raise NotImplementedError

    def class_and_proba(self, x) -> tuple:
        """(`predict_one(x)`, `predict_proba_one(x)`) from one prediction of the wrapped model
        (a replay asks for both at each arrival).

        >>> m = TemporalCorrection("gaussian-nb")
        >>> for x, y in [({"a": 0.0}, "u"), ({"a": 1.0}, "v"), ({"a": 0.9}, "v")]:
        ...     m.learn_one(x, y)
        >>> m.class_and_proba({"a": 0.2}) == (m.predict_one({"a": 0.2}),
        ...                                   m.predict_proba_one({"a": 0.2}))
        True
        """
        proba = self.predict_proba_one(x)
        return _best(proba), proba

    def instance_arrived(self, key) -> None:
        self._contexts[key] = self._context()

    def label_arrived(self, key) -> None:
        self._learning = self._contexts.pop(key, _NOW)

    def _learning_context(self):
        context, self._learning = self._learning, _NOW
        return self._context() if context is _NOW else context

    @property
    def _wrapped_model(self):
        return self._model

    @property
    def _multiclass(self):
        return True


class TemporalCorrection(_LabelAware):
    """P(y_t=i | x_t, y_{t−1}) ∝ P(y_t=i | x_t) · P(y_t=i | y_{t−1}) / P(y_t=i), the last two
    estimated from the labels learned so far (Žliobaitė et al. 2015, §3.1).

    Parameters
    ----------
    model
        The classifier wrapped: a model spec (`gaussian-nb`, an import path, ...) or a river
        classifier, cloned.
    guard
        None (the paper's method), or z: correct only while correcting has paid, by z
        standard errors (see the module doc).

    >>> m = TemporalCorrection("gaussian-nb")
    >>> for x, y in [({"a": 0.0}, "u"), ({"a": 0.1}, "u"), ({"a": 0.2}, "v"), ({"a": 0.3}, "v"),
    ...              ({"a": 0.2}, "v")]:
    ...     m.learn_one(x, y)
    >>> m.transition("v", "v"), m.prior("v")  # P(v|v) = 2/2, P(v) = 3/5
    (1.0, 0.6)

    Under a delay it learns the pair (latest label known at the instance's arrival, its label):

    >>> m = TemporalCorrection("gaussian-nb")
    >>> m.learn_one({"a": 0.0}, "u")
    >>> m.instance_arrived(1); m.instance_arrived(2)  # both predicted knowing u
    >>> m.label_arrived(1); m.learn_one({"a": 0.5}, "v")
    >>> m.label_arrived(2); m.learn_one({"a": 0.9}, "v")
    >>> m.transition("u", "v"), m.transition("v", "v")  # (u, v) twice, never (v, v)
    (1.0, 0.0)

    Guarded, it starts as the wrapped model alone and corrects once correcting has paid:

    >>> m = TemporalCorrection("gaussian-nb", guard=1)
    >>> for y in "uvuvuvuv":
    ...     m.learn_one({"a": 0.0}, y)
    >>> m.gained, m.lost, m.uses_labels  # the model alone says u; the correction hit 3 v's
    (3, 0, True)

    References
    ----------
    Žliobaitė, I., Bifet, A., Read, J., Pfahringer, B., Holmes, G. (2015). Evaluation
    methods and decision theory for classification of streaming data with temporal dependence.
    Machine Learning 98(3), 455–482.
    """

    def __init__(self, model: str | base.Classifier = "gaussian-nb",
                 guard: float | None = None):
        super().__init__(model, guard)
        self._counts: Counter = Counter()
        self._pairs: dict = {}
        self._last = None

    def prior(self, c) -> float:
        n = sum(self._counts.values())
        return self._counts[c] / n if n else 0.0

    def transition(self, previous, c) -> float:
        row = self._pairs.get(previous, Counter())
        n = sum(row.values())
        return row[c] / n if n else 0.0

    def _context(self):
        return self._last

    def learn_one(self, x, y):
        previous = self._learning_context()
        if self.guard is not None:
            proba = self._model.predict_proba_one(x)
            self._tally(_best(self._corrected(proba, previous)), _best(proba), y)
        self._model.learn_one(x, y)
        if previous is not None:
            self._pairs.setdefault(previous, Counter())[y] += 1
        self._counts[y] += 1
        self._last = y

    def _corrected(self, proba: dict, previous) -> dict:
        if previous is None or not self._pairs.get(previous):
            return proba
        corrected = {c: p * self.transition(previous, c) / self.prior(c)
                     for c, p in proba.items() if self.prior(c) > 0}
        total = sum(corrected.values())
        if not total > 0:  # nothing survives the correction: keep the classifier's view
            return proba
        return {c: p / total for c, p in corrected.items()}

    def predict_proba_one(self, x):
        proba = self._model.predict_proba_one(x)
        return self._corrected(proba, self._last) if self.uses_labels else proba

    def predict_one(self, x):
        return _best(self.predict_proba_one(x))


class LagColumn(str):
    """The name of a lagged label's column: text that sorts after every name that is not text.
    River's forests sort a row's names, and a generator's features are named 0, 1, 2, ...

    >>> sorted([2, LagColumn("y_lag1=a"), 0])
    [0, 2, 'y_lag1=a']
    """

    __slots__ = ()

    def __lt__(self, other):
        return str.__lt__(self, other) if isinstance(other, str) else False

    def __gt__(self, other):
        return str.__gt__(self, other) if isinstance(other, str) else True

    def __le__(self, other):
        return str.__le__(self, other) if isinstance(other, str) else False

    def __ge__(self, other):
        return str.__ge__(self, other) if isinstance(other, str) else True


def _naive_bayes(model) -> bool:
    """Whether `model` (itself, or a pipeline's last step) is one of river's naive Bayes.

    >>> from river import naive_bayes, preprocessing, tree
    >>> _naive_bayes(preprocessing.StandardScaler() | naive_bayes.GaussianNB())
    True
    >>> _naive_bayes(tree.HoeffdingTreeClassifier())
    False
    """
    from river import compose, naive_bayes
    from river.naive_bayes.base import BaseNB

    if isinstance(model, compose.Pipeline):
        model = list(model.steps.values())[-1]
    # (river 0.22's GaussianNB is no BaseNB)
    return isinstance(model, (BaseNB, naive_bayes.GaussianNB))


class TemporallyAugmented(_LabelAware):
    """The classifier sees the last `lags` arrived labels as extra attributes (Žliobaitė et
    al. 2015, §3.2), each a nominal attribute whose values are the classes, as in MOA's
    `TemporallyAugmentedClassifier`.

    How a river model takes a nominal attribute depends on the model:

    - a naive Bayes (`gaussian-nb`, or a pipeline ending in one) counts its values per class,
      as a naive Bayes does with a nominal attribute: P(y | x, lags) ∝ P(y | x) · Π_k
      P(lag_k | y), with P(lag_k = v | y) = (n(v, y) + 1) / (n(y) + V) (a Laplace correction
      as MOA's nominal attributes have; V: the classes seen and "no label yet", where MOA's
      is per class and starts its lags at the first class: docs/semantics.md). One-hot columns
      would be counted once per class by its independence assumption;
    - any other classifier gets one-hot columns `y_lag{k}={class}`.

    Parameters
    ----------
    model
        The classifier wrapped: a model spec or a river classifier, cloned.
    lags
        How many of the latest arrived labels are added as features.
    guard
        None (the paper's method), or z: use the lags only while that has paid, by z standard
        errors (see the module doc); around a model that is not a naive Bayes, a copy of it
        learns without the lags, to answer alone.

    >>> m = TemporallyAugmented("hoeffding-tree", lags=2)
    >>> m.learn_one({"a": 1.0}, "u"); m.learn_one({"a": 2.0}, "v")
    >>> sorted(m.augment({"a": 3.0}).items())
    [('a', 3.0), ('y_lag1=u', 0.0), ('y_lag1=v', 1.0), ('y_lag2=u', 1.0), ('y_lag2=v', 0.0)]
    >>> m.augment({"a": 3.0}, recent=("u",))["y_lag1=u"]  # the labels known at some arrival
    1.0

    Around a naive Bayes, the lags' counts: v was learned once, after u (lag 1 = u), and u
    knowing no label yet; with classes u, v and "none", P(lag1 = u | v) = (1 + 1) / (1 + 3):

    >>> m = TemporallyAugmented("gaussian-nb")
    >>> m.learn_one({"a": 1.0}, "u"); m.learn_one({"a": 2.0}, "v")
    >>> m.lag_likelihood("v", recent=("u",)), m.lag_likelihood("u", recent=("u",))
    (0.5, 0.25)

    References
    ----------
    Žliobaitė, I., Bifet, A., Read, J., Pfahringer, B., Holmes, G. (2015). Evaluation
    methods and decision theory for classification of streaming data with temporal dependence.
    Machine Learning 98(3), 455–482.
    """

    def __init__(self, model: str | base.Classifier = "gaussian-nb", lags: int = 1,
                 guard: float | None = None):
        if lags < 1:
            raise ValueError("lags must be at least 1")
        super().__init__(model, guard)
        self.lags = lags
        self._recent: deque = deque(maxlen=lags)
        self._classes: list = []
        self.nominal = _naive_bayes(self._model)  # lags counted, not one-hot columns
        self._lag_counts: dict = {}  # (lag k, class) -> Counter of the lag's values
        # (one-hot lags and a guard: the model without them, to answer alone)
        self._alone = _build(model) if guard is not None and not self.nominal else None

    def _context(self):
        return tuple(self._recent)

    def _lag(self, k: int, recent: tuple):
        return recent[-k] if k <= len(recent) else None

    def augment(self, x: dict, recent: tuple | None = None) -> dict:
        """x with the one-hot lagged labels: `recent` (oldest first), or the labels known now."""
        recent = self._recent if recent is None else recent
        out = dict(x)
        for k in range(1, self.lags + 1):
            label = self._lag(k, recent)
            for c in self._classes:
                out[LagColumn(f"y_lag{k}={c}")] = 1.0 if label == c else 0.0
        return out

    def lag_likelihood(self, c, recent: tuple | None = None) -> float:
        """Π_k P(lag_k | c) of the lags `recent` (oldest first; by default those known now),
        Laplace-corrected (a naive Bayes' nominal attributes)."""
        recent = tuple(self._recent) if recent is None else recent
        values = len(self._classes) + 1
        likelihood = 1.0
        for k in range(1, self.lags + 1):
            counts = self._lag_counts.get((k, c), Counter())
            likelihood *= (counts[self._lag(k, recent)] + 1) / (counts.total() + values)
        return likelihood

    def learn_one(self, x, y):
        context = self._learning_context()
        if self.guard is not None and self.nominal:  # (one call of the model for both)
            proba = self._model.predict_proba_one(x)
            self._tally(_best(self._weighted(proba, context)), _best(proba), y)
        elif self.guard is not None:
            self._tally(self._model.predict_one(self.augment(x, context)),
                        self._alone.predict_one(x), y)
        if self._alone is not None:
            self._alone.learn_one(x, y)
        if self.nominal:
            self._model.learn_one(x, y)
            for k in range(1, self.lags + 1):
                self._lag_counts.setdefault((k, y), Counter())[self._lag(k, context)] += 1
        else:
            self._model.learn_one(self.augment(x, context), y)
        if y not in self._classes:
            self._classes.append(y)
        self._recent.append(y)

    def _weighted(self, proba: dict, recent: tuple | None = None) -> dict:
        weighted = {c: p * self.lag_likelihood(c, recent) for c, p in proba.items()}
        total = sum(weighted.values())
        return {c: p / total for c, p in weighted.items()} if total > 0 else proba

    def _predict(self, x):
        """The class predicted with the lags known now."""
        if self.nominal:
            return _best(self._weighted(self._model.predict_proba_one(x)))
        return self._model.predict_one(self.augment(x))

    def _predict_alone(self, x):
        if self.nominal:
            return _best(self._model.predict_proba_one(x))
        return self._alone.predict_one(x)

    def predict_proba_one(self, x):
        if not self.uses_labels:
            return (self._model if self.nominal else self._alone).predict_proba_one(x)
        if not self.nominal:
            return self._model.predict_proba_one(self.augment(x))
        return self._weighted(self._model.predict_proba_one(x))

    def predict_one(self, x):
        return self._predict(x) if self.uses_labels else self._predict_alone(x)

    def class_and_proba(self, x) -> tuple:
        if self.nominal:  # (the class is the most probable one)
            return super().class_and_proba(x)
        return self.predict_one(x), self.predict_proba_one(x)
