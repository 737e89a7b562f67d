"""Classifiers that use the temporal dependence of the labels (Žliobaitė et al., paper 003, §3).

Both wrap any river classifier, named by a model spec string so that a run's configuration stays
serialisable: `temporal-correction{"model": "gaussian-nb"}`,
`temporally-augmented{"model": "hoeffding-tree", "lags": 2}`.

"Previous label" in the delayed setting: the latest label that has *arrived* (been learned), not
the label of the previous instance, which may still be pending. That is the only label a deployed
model can know when it predicts; with delay d it is y_{t−d} or older.
"""

from __future__ import annotations

from collections import Counter, deque

from river import base


def _build(model):
    if isinstance(model, str):
        from transforms.models import ModelSpec

        return ModelSpec.parse(model).build()
    return model.clone()


def _best(proba: dict):
    """The most probable class; ties go to the first in the dict's order (river's max)."""
    return max(proba, key=proba.get) if proba else None


class _LabelAware(base.Wrapper, base.Classifier):
    """A classifier around another one, built from its spec."""

    def __init__(self, model):
        self.model = model
        self._model = _build(model)

    @property
    def _wrapped_model(self):
        return self._model

    @property
    def _multiclass(self):
        return True


class TemporalCorrection(_LabelAware):
    """P(y_t=i | x_t, y_{t−1}) ∝ P(y_t=i | x_t) · P(y_t=i | y_{t−1}) / P(y_t=i), the last two
    estimated from the labels learned so far (paper 003, §3.1).

    >>> m = TemporalCorrection("gaussian-nb")
    >>> for x, y in [({"a": 0.0}, "u"), ({"a": 0.1}, "u"), ({"a": 0.2}, "v"), ({"a": 0.3}, "v"),
    ...              ({"a": 0.2}, "v")]:
    ...     m.learn_one(x, y)
    >>> m.transition("v", "v"), m.prior("v")  # P(v|v) = 2/2, P(v) = 3/5
    (1.0, 0.6)
    """

    def __init__(self, model: str | base.Classifier = "gaussian-nb"):
        super().__init__(model)
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

    def learn_one(self, x, y):
        self._model.learn_one(x, y)
        if self._last is not None:
            self._pairs.setdefault(self._last, Counter())[y] += 1
        self._counts[y] += 1
        self._last = y

    def predict_proba_one(self, x):
        proba = self._model.predict_proba_one(x)
        if self._last is None or not self._pairs.get(self._last):
            return proba
        corrected = {c: p * self.transition(self._last, c) / self.prior(c)
                     for c, p in proba.items() if self.prior(c) > 0}
        total = sum(corrected.values())
        if not total > 0:  # nothing survives the correction: keep the classifier's view
            return proba
        return {c: p / total for c, p in corrected.items()}

    def predict_one(self, x):
        return _best(self.predict_proba_one(x))


class TemporallyAugmented(_LabelAware):
    """The classifier sees the last `lags` arrived labels as extra one-hot features
    `y_lag{k}={class}` (paper 003, §3.2).

    >>> m = TemporallyAugmented("gaussian-nb", lags=2)
    >>> m.learn_one({"a": 1.0}, "u"); m.learn_one({"a": 2.0}, "v")
    >>> sorted(m.augment({"a": 3.0}).items())
    [('a', 3.0), ('y_lag1=u', 0.0), ('y_lag1=v', 1.0), ('y_lag2=u', 1.0), ('y_lag2=v', 0.0)]
    """

    def __init__(self, model: str | base.Classifier = "gaussian-nb", lags: int = 1):
        if lags < 1:
            raise ValueError("lags must be at least 1")
        super().__init__(model)
        self.lags = lags
        self._recent: deque = deque(maxlen=lags)
        self._classes: list = []

    def augment(self, x: dict) -> dict:
        out = dict(x)
        for k in range(1, self.lags + 1):
            label = self._recent[-k] if k <= len(self._recent) else None
            for c in self._classes:
                out[f"y_lag{k}={c}"] = 1.0 if label == c else 0.0
        return out

    def learn_one(self, x, y):
        self._model.learn_one(self.augment(x), y)
        if y not in self._classes:
            self._classes.append(y)
        self._recent.append(y)

    def predict_proba_one(self, x):
        return self._model.predict_proba_one(self.augment(x))

    def predict_one(self, x):
        return self._model.predict_one(self.augment(x))
