"""Binary classifiers on any two classes.

river's binary classifiers (`LogisticRegression`, `Perceptron`, `PAClassifier`, `ALMAClassifier`,
the factorization machines, `SGTClassifier`: `_multiclass` is False) learn True/False (or 1/0)
and predict True or False. On a stream whose two classes are `fraud` and `ok`, river's
`LogisticRegression` fails (`int('fraud')`); on classes −1/1 or 1/2 it learns, but its False is
never a label, so it is scored wrong whenever it says "not positive"; on ten classes it learns
every class but 0 as positive. So a binary model on such a stream learns `label == positive`
and its True/False are reported as the positive class and the other one (`BinaryLabels`); on
more than two classes it is refused, with the way out (`binary_targets`). Labels that are
True/False are left as river takes them; labels 1/0 are learned as river takes them (1 as
True), and its True/False are reported as the label's own 1 and 0, so that every model's
classes are named as the labels (not `True` beside `1`).
"""

from __future__ import annotations

import functools
import json

import numpy as np
from river import base

from metrics.classification import named_positive_class
from transforms.errors import ConfigError
from transforms.models.batch import NONE, BatchPredictor

_RIVER_LABELS = (False, True)  # 0 and 1 equal these: river's binary models take them as they are
_MULTICLASS_HINT = ("wrap the model, e.g. river.multiclass.OneVsRestClassifier{\"classifier\": "
                    "{\"logistic-regression\": {}}}, or use a multiclass model (gaussian-nb, "
                    "hoeffding-tree)")


class LabelsError(ValueError):
    """A label that a binary classifier cannot learn; the message says what to do.

    >>> isinstance(LabelsError("a third class"), ValueError)  # (a model's error to its callers)
    True
    """


def binary_only(model) -> bool:
    """Whether `model` is one of river's classifiers that take two classes only: its
    `_multiclass` is False (a pipeline's and a wrapper's are their model's) and the estimator
    that says so is river's. A classifier of one's own that does not set `_multiclass` is
    taken as it is.

    >>> from river import linear_model, multiclass, naive_bayes
    >>> binary_only(linear_model.LogisticRegression()), binary_only(naive_bayes.GaussianNB())
    (True, False)
    >>> binary_only(multiclass.OneVsRestClassifier(linear_model.LogisticRegression()))
    False
    """
    from river import compose

    if isinstance(model, compose.Pipeline):  # (river 0.22's pipeline is no Classifier)
        model = list(model.steps.values())[-1]
    if not isinstance(model, base.Classifier) or getattr(model, "_multiclass", True):
        return False
    while isinstance(model, (compose.Pipeline, base.Wrapper)):
        model = list(model.steps.values())[-1] if isinstance(model, compose.Pipeline) \
            else model._wrapped_model
    return type(model).__module__.startswith("river.")


def _binary_inside(model):
    """The temporal wrapper (itself, or a pipeline's last step) whose own model is one of
    river's binary classifiers, or None: the wrapper takes any labels, its model does not."""
    from transforms.models.temporal import delay_aware

    wrapper = delay_aware(model)
    return wrapper if wrapper is not None and binary_only(wrapper._model) else None


def learns_two_classes(model) -> bool:
    """Whether `model`, or the model a temporal wrapper holds, is a binary classifier
    (`binary_only`): on other labels than True/False it must learn `label == positive`.

    >>> from transforms.models.temporal import TemporalCorrection
    >>> learns_two_classes(TemporalCorrection("logistic-regression"))
    True
    >>> learns_two_classes(TemporalCorrection("gaussian-nb"))
    False
    """
    return binary_only(model) or _binary_inside(model) is not None


def with_binary_labels(model, positive=None, negative=None):
    """`model` with its binary classifier wrapped in `BinaryLabels`: the model itself, or the
    one inside a temporal wrapper, which then keeps its transitions and lagged labels in the
    stream's own classes.

    >>> from river import linear_model
    >>> from transforms.models.temporal import TemporalCorrection
    >>> type(with_binary_labels(linear_model.LogisticRegression(), "fraud", "ok")).__name__
    'BinaryLabels'
    >>> m = with_binary_labels(TemporalCorrection("logistic-regression"), "fraud", "ok")
    >>> type(m).__name__, type(m._model).__name__
    ('TemporalCorrection', 'BinaryLabels')
    """
    if binary_only(model):
        return BinaryLabels(model, positive, negative)
    wrapper = _binary_inside(model)
    if wrapper is not None:
        wrapper._model = BinaryLabels(wrapper._model, positive, negative)
    return model


def _river_labels(classes) -> bool:
    return all(type(c) in (bool, int) or hasattr(c, "dtype") for c in classes) and \
        all(c in _RIVER_LABELS for c in classes)


def _as_labels(classes) -> tuple | None:
    """(one, zero) in the type of labels that are 1/0 (one of them may not have come yet), so
    that the model's True/False read as they do; None for True/False themselves."""
    if not classes or all(isinstance(c, (bool, np.bool_)) for c in classes):
        return None
    kind = type(classes[0])
    return tuple(next((c for c in classes if c == v), kind(v)) for v in (1, 0))


def binary_targets(labels, declared: list | None = None, positive=None) -> tuple | None:
    """(positive, negative) classes a binary classifier maps True and False to on a stream,
    from its declared classes or its first labels and its `positive` option (else its second
    declared class, as river, else True or 1); negative is None when no other class has come
    yet. For labels 1/0, (1, 0) in their type whatever the positive class (the model learns as
    river's does); None for True/False, or no labels yet. A `LabelsError` saying what to do when
    there are more than two classes or the positive class cannot be told.

    >>> binary_targets(["ok", "fraud", "ok"], positive="fraud")
    ('fraud', 'ok')
    >>> binary_targets([], declared=["ok", "fraud"])
    ('fraud', 'ok')
    >>> binary_targets([1, 2, 2]), binary_targets([True, False]), binary_targets([0, 1, 0])
    ((1, 2), None, (1, 0))
    >>> binary_targets(["0", "1"])  # as a JSON Lines file may write them
    ('1', '0')
    >>> binary_targets(["a", "b", "c"])
    Traceback (most recent call last):
    ...
    transforms.models.binary.LabelsError: has 3 classes ('a', 'b', 'c'): wrap the model, e.g. ...
    """
    classes = list(dict.fromkeys(declared if declared is not None else labels))
    if len(classes) > 2:
        shown = ", ".join(map(repr, classes[:5])) + (", ..." if len(classes) > 5 else "")
        raise LabelsError(f"has {len(classes)} classes ({shown}): " + _MULTICLASS_HINT)
    if _river_labels(classes):
        return _as_labels(classes)
    positive = named_positive_class(classes, positive, declared)
    shown = " and ".join(map(repr, classes))
    if positive is None:
        rarest = min(classes, key=list(labels).count) if labels else classes[-1]
        example = json.dumps(rarest if isinstance(rarest, (str, int, float)) else "...")
        raise LabelsError(f"has the labels {shown}, not True/False or 1/0: name the positive "
                          f"class with the stream option {{\"positive\": {example}}} (the "
                          f"model learns label == positive)")
    if len(classes) == 2 and positive not in classes:
        raise LabelsError(f"has the labels {shown}, and not the positive class {positive!r}: "
                          f"name one of them")
    negative = next((c for c in classes if c != positive), None)
    return positive, negative


def binary_classes(streams: list, models: dict, tasks: dict) -> dict:
    """Per stream, the classes its binary classifiers learn as True and False
    (`binary_targets`, from its declared classes or first labels); a ConfigError where there
    are more than two classes or no way to tell the positive one.

    >>> from transforms.models.specs import ModelSpec
    >>> models = {"lr": ModelSpec.parse("logistic-regression")}
    >>> from transforms.streams.sources import StreamSpec
    >>> sea = StreamSpec.parse('synth:SEA{"n": 10}')
    >>> binary_classes([sea], models, {"lr": "classification"})  # True/False already
    {'sea': None}
    >>> led = StreamSpec.parse('synth:LED{"n": 100}')
    >>> binary_classes([led], models, {"lr": "classification"})
    Traceback (most recent call last):
    ...
    transforms.errors.ConfigError: model lr is a binary classifier (it predicts True or ...
    """
    built = {name: spec.build() for name, spec in models.items()
             if spec is not None and tasks[name] == "classification"}
    binary = [name for name, model in built.items() if learns_two_classes(model)]
    targets = {}
    for s in streams if binary else ():
        try:
            targets[s.name] = binary_targets(s.first_values(), s.declared_classes(),
                                             s.options.get("positive"))
        except LabelsError as e:
            what = "is" if binary_only(built[binary[0]]) else "holds"
            # (the wrapped pipeline is for more than two classes; two need their positive)
            hint = _wrapped_hint(models[binary[0]]) if what == "is" and \
                _MULTICLASS_HINT in str(e) else ""
            raise ConfigError(f"model {binary[0]} {what} a binary classifier (it predicts True "
                              f"or False), and stream {s.name} {e}{hint}") from None
    return targets


def _wrapped_hint(spec) -> str:
    """For a pipeline ending in a binary classifier, the pipeline with that step wrapped."""
    if len(spec.steps) < 2:
        return ""
    *first, last = spec.steps
    steps = [step.path + (json.dumps(step.params) if step.params else "") for step in first]
    wrapped = json.dumps({"classifier": {last.path: last.params}})
    return f"; here: '{' | '.join(steps)} | river.multiclass.OneVsRestClassifier{wrapped}'"


class BinaryLabels(base.Wrapper, base.Classifier):
    """A binary classifier that learns `label == positive` and reports its True and False as
    the positive class and the other one (`binary_targets`). Without classes (river's own
    labels) it passes them through, and refuses a label that is not True/False or 1/0. The
    other class is learned from the first label that is not the positive one when it is not
    known ahead; until then the model's False is no prediction. A third class is a
    `LabelsError`.

    Example
    -------

    >>> from river import linear_model
    >>> model = BinaryLabels(linear_model.LogisticRegression(), "fraud", "ok")
    >>> for _ in range(20):
    ...     model.learn_one({"amount": 9.0}, "fraud")
    ...     model.learn_one({"amount": -9.0}, "ok")
    >>> model.predict_one({"amount": 8.0}), model.predict_one({"amount": -8.0})
    ('fraud', 'ok')
    >>> sorted(model.predict_proba_one({"amount": 8.0}))
    ['fraud', 'ok']
    >>> model.learn_one({"amount": 1.0}, "chargeback")
    Traceback (most recent call last):
    ...
    transforms.models.binary.LabelsError: label 'chargeback' is a third class (after 'ok' ...
    """

    def __init__(self, model: base.Classifier, positive=None, negative=None):
        self.model = model
        self.positive = positive
        self.negative = negative

    @property
    def _wrapped_model(self):
        return self.model

    @property
    def _multiclass(self):
        return False

    def _target(self, y) -> bool:
        if self.positive is None:
            if y not in _RIVER_LABELS:
                raise LabelsError(f"label {y!r} is not True/False or 1/0, which this binary "
                                  f"model learns: declare the stream's two classes, e.g. "
                                  f"{{\"classes\": [\"ok\", \"fraud\"]}} (the second is "
                                  f"positive), or " + _MULTICLASS_HINT)
            return y
        if y == self.positive:
            return True
        if self.negative is None:
            self.negative = y
        elif y != self.negative:
            raise LabelsError(f"label {y!r} is a third class (after {self.negative!r} and "
                              f"{self.positive!r}), and this model predicts one of two: "
                              + _MULTICLASS_HINT)
        return False

    def _class(self, prediction):
        if self.positive is None or prediction is None:
            return prediction
        return self.positive if prediction else self.negative  # (None: no other class yet)

    def _proba(self, proba: dict) -> dict:
        if self.positive is None or not proba:
            return proba
        if self.negative is None:  # no other class yet: no probabilities over the classes
            return {}
        # False first, as river's dicts: a tie goes to the other class, as river's to False.
        return {self.negative: proba.get(False, 0.0), self.positive: proba.get(True, 0.0)}

    def learn_one(self, x, y, **kwargs):
        self.model.learn_one(x, self._target(y), **kwargs)

    def predict_one(self, x, **kwargs):
        return self._class(self.model.predict_one(x, **kwargs))

    def predict_proba_one(self, x, **kwargs):
        return self._proba(self.model.predict_proba_one(x, **kwargs))

    def mapped(self, predict):
        """`predict` of the wrapped model (x -> class, or x -> (class, probabilities), as
        `fast_predict_one` and `predict_with_proba` give), answering in this one's classes.

        >>> from river import linear_model
        >>> model = BinaryLabels(linear_model.LogisticRegression(), "yes", "no")
        >>> model.mapped(lambda x: (True, {False: 0.2, True: 0.8}))({})
        ('yes', {'no': 0.2, 'yes': 0.8})
        """
        return functools.partial(_mapped, self, predict)


def _mapped(wrapper: BinaryLabels, predict, x):
    answer = predict(x)
    if isinstance(answer, tuple):
        return wrapper._class(answer[0]), wrapper._proba(answer[1])
    return wrapper._class(answer)


class BinaryLabelsBatch(BatchPredictor):
    """Many rows of a `BinaryLabels` model at once: its wrapped model's batch predictor, whose
    True and False are mapped to the classes (a False before the other class is known is no
    prediction). Class probabilities come row by row, mapped the same way.

    Example
    -------

    >>> from river import linear_model
    >>> from transforms.models.linear_batch import LogisticRegressionBatch
    >>> model = BinaryLabels(linear_model.LogisticRegression(), "fraud", "ok")
    >>> for a, y in [(-2.0, "ok"), (2.0, "fraud")] * 10:
    ...     model.learn_one({"a": a}, y)
    >>> batch = BinaryLabelsBatch(LogisticRegressionBatch())
    >>> xs = [{"a": -1.0}, {"a": 1.0}]
    >>> codes, labels = batch.predict(model, np.array([batch.encode(x) for x in xs]), xs)
    >>> [labels[c] for c in codes]
    ['ok', 'fraud']
    """

    def __init__(self, inner: BatchPredictor):
        self.inner = inner
        self.dense = inner.dense
        self.encode = inner.encode

    @property
    def names(self) -> tuple | None:
        """The features of the wrapped model's rows (a wrapper's batch may set them)."""
        return getattr(self.inner, "names", None)

    @names.setter
    def names(self, names: tuple | None) -> None:
        self.inner.names = names

    def predict(self, model, rows, xs):
        codes, labels = self.inner.predict(model.model, rows, xs)
        mapped = [model._class(label) for label in labels]
        if None not in mapped:
            return codes, mapped
        kept = [c for c in mapped if c is not None]
        lut = np.array([NONE if c is None else kept.index(c) for c in mapped] + [NONE])
        return lut[codes], kept
