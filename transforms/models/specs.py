"""Models named by a serialisable spec and built on the worker (Beam ModelHandler style).

A spec is an import path optionally followed by a JSON object of parameters, a short registry
name, or a pipeline of those joined by `|`:

    river.tree.HoeffdingTreeClassifier{"grace_period": 50}
    gaussian-nb
    river.preprocessing.StandardScaler | river.neighbors.KNNClassifier
    knn=river.neighbors.KNNClassifier{"n_neighbors": 5}      (an explicit display name)
    river.ensemble.BaggingClassifier{"model": {"river.tree.HoeffdingTreeClassifier": {}}}

A parameter that is itself an object (a meta-model's model, an optimizer) is a JSON object
with one key, its import path, whose value is its parameters. `spec_of` writes a river
estimator built in Python as such a spec. Nothing is ever `eval`-ed: paths are imported with
importlib and parameters parsed as JSON.
"""

from __future__ import annotations

import collections
import difflib
import importlib
import inspect
import json
import math
import pkgutil
import random
import sys
from dataclasses import dataclass, field

import numpy as np
from river import base

from metrics.exact import ExactSum
from transforms.errors import ConfigError, shown_briefly
from transforms.specs import named_specs, plain_value, split_options
from transforms.streams.rows import na_values_option, number_in


class ModelSpecError(ConfigError):
    """A model spec that cannot be parsed, imported or built.

    Example
    -------

    >>> try:
    ...     ModelSpec.parse("river.nothing.Here").build()
    ... except ModelSpecError as e:
    ...     print(type(e).__name__, isinstance(e, ConfigError))
    ModelSpecError True

    """


class _Baseline(base.Classifier):
    """MOA-convention baselines: before any label they predict the first class, ties go to the
    lowest class index. Class order is the declared one, else first appearance while learning
    (which is label-arrival order, the same order the replay indexes classes in)."""

    def __init__(self, classes: list | None = None):
        self.classes = classes
        self._order = list(classes) if classes else []
        self._index = {c: i for i, c in enumerate(self._order)}

    def _see(self, y) -> int:
        i = self._index.get(y)
        if i is None:
            i = self._index[y] = len(self._order)
            self._order.append(y)
        return i

    def predict_proba_one(self, x):
        y = self.predict_one(x)
        return {} if y is None else {y: 1.0}


class Majority(_Baseline):
    """Majority Class: the class seen most often so far.

    Parameters
    ----------
    classes
        The declared classes in index order (ties go to the first), or None.

    >>> m = Majority(classes=["a", "b"])
    >>> m.predict_one({})
    'a'
    >>> for y in ["b", "a", "b"]:
    ...     m.learn_one({}, y)
    >>> m.predict_one({})
    'b'

    References
    ----------
    Žliobaitė, I., Bifet, A., Read, J., Pfahringer, B., Holmes, G. (2015). Evaluation
    methods and decision theory for classification of streaming data with temporal dependence.
    Machine Learning 98(3), 455–482.
    """

    def __init__(self, classes: list | None = None):
        super().__init__(classes)
        self._counts: list[int] = [0] * len(self._order)
        self._best = 0

    def learn_one(self, x, y):
        i = self._see(y)
        if i >= len(self._counts):
            self._counts.append(0)
        self._counts[i] += 1
        best = self._best
        if self._counts[i] > self._counts[best] or (self._counts[i] == self._counts[best]
                                                     and i < best):
            self._best = i

    def predict_one(self, x):
        return self._order[self._best] if self._order else None

    def predict_proba_one(self, x):
        """Each class's share of the labels learned so far, as MOA's `MajorityClass` votes
        (its class counts) and river's `dummy.PriorClassifier` give them: the prior, whose
        log-loss is the labels' entropy, the yardstick of a model's log-loss and Brier score.
        Before any label, the declared classes alike.

        >>> m = Majority(classes=["a", "b", "c"])
        >>> m.predict_proba_one({})
        {'a': 0.3333333333333333, 'b': 0.3333333333333333, 'c': 0.3333333333333333}
        >>> for y in ["b", "a", "b", "d"]:
        ...     m.learn_one({}, y)
        >>> m.predict_proba_one({})
        {'a': 0.25, 'b': 0.5, 'c': 0.0, 'd': 0.25}
        """
        seen = sum(self._counts)
        if not seen:
            return dict.fromkeys(self._order, 1 / len(self._order)) if self._order else {}
        return {c: n / seen for c, n in zip(self._order, self._counts)}


class NoChange(_Baseline):
    """No-Change (Persistent): the last true label seen.

    Parameters
    ----------
    classes
        The declared classes in index order (before any label it predicts the first), or None.

    >>> m = NoChange(classes=[0, 1])
    >>> m.predict_one({}), m.learn_one({}, 1), m.predict_one({})
    (0, None, 1)

    References
    ----------
    Žliobaitė, I., Bifet, A., Read, J., Pfahringer, B., Holmes, G. (2015). Evaluation
    methods and decision theory for classification of streaming data with temporal dependence.
    Machine Learning 98(3), 455–482.
    """

    def __init__(self, classes: list | None = None):
        super().__init__(classes)
        self._last = self._order[0] if self._order else None

    def learn_one(self, x, y):
        self._see(y)
        self._last = y

    def predict_one(self, x):
        return self._last


class NoChangeRegressor(base.Regressor):
    """No-Change (persistence) for a numeric target: the last true value learned, which under a
    delay is the latest that has arrived. Nothing before the first label (unscored).

    >>> m = NoChangeRegressor()
    >>> m.predict_one({}), m.learn_one({}, 2.5), m.predict_one({})
    (None, None, 2.5)
    """

    def __init__(self):
        self._last = None

    def learn_one(self, x, y):
        self._last = y

    def predict_one(self, x):
        return self._last


class MeanRegressor(base.Regressor):
    """The mean of the true values learned so far: their exact sum (one rounding, whatever the
    values) divided by their count. Nothing before the first label (unscored).

    >>> m = MeanRegressor()
    >>> for y in (1e16, 1.0, -1e16, 2.0):
    ...     m.learn_one({}, y)
    >>> m.predict_one({})  # (a running float sum would give 0.5)
    0.75
    """

    def __init__(self):
        self._sum, self._n = ExactSum(), 0

    def learn_one(self, x, y):
        self._sum.add(float(y))
        self._n += 1

    def predict_one(self, x):
        return self._sum.value / self._n if self._n else None


BASELINES = {"majority": Majority, "no-change": NoChange}

# Models with a random component get this seed unless the spec gives one: the same spec gives
# the same numbers on every run and runner.
DEFAULT_SEED = 42


def exact_knn(n_neighbors: int = 5, window_size: int = 1000, **params):
    """river's KNNClassifier with an exact search over the last `window_size` instances (as
    MOA's kNN). river's default engine (SWINN) is approximate and unseeded, so its predictions
    can change from one run to the next.

    >>> type(exact_knn().engine).__name__
    'LazySearch'
    """
    from river import neighbors

    return neighbors.KNNClassifier(n_neighbors=n_neighbors,
                                   engine=neighbors.LazySearch(window_size=window_size),
                                   **params)


def exact_knn_regressor(n_neighbors: int = 5, window_size: int = 1000, **params):
    """river's KNNRegressor with the exact search of `exact_knn`.

    >>> type(exact_knn_regressor().engine).__name__
    'LazySearch'
    """
    from river import neighbors

    return neighbors.KNNRegressor(n_neighbors=n_neighbors,
                                  engine=neighbors.LazySearch(window_size=window_size),
                                  **params)


# Short names for the models users reach for most; anything else by import path.
REGISTRY = {
    "gaussian-nb": "river.naive_bayes.GaussianNB",
    "hoeffding-tree": "river.tree.HoeffdingTreeClassifier",
    "hoeffding-adaptive-tree": "river.tree.HoeffdingAdaptiveTreeClassifier",
    "adaptive-random-forest": "river.forest.ARFClassifier",
    "knn": "transforms.models.specs.exact_knn",
    "knn-regressor": "transforms.models.specs.exact_knn_regressor",
    "logistic-regression": "river.linear_model.LogisticRegression",
    "linear-regression": "river.linear_model.LinearRegression",
    "hoeffding-tree-regressor": "river.tree.HoeffdingTreeRegressor",
    "no-change-regressor": "transforms.models.specs.NoChangeRegressor",
    "mean-regressor": "transforms.models.specs.MeanRegressor",
    "one-hot-text": "transforms.models.encoding.OneHotText",
    "standard-scaler": "river.preprocessing.StandardScaler",
    "temporal-correction": "transforms.models.temporal.TemporalCorrection",
    "temporally-augmented": "transforms.models.temporal.TemporallyAugmented",
}


def _modules_of(package: str) -> list[str]:
    """The names of a package's modules ('' for the top-level ones), or [] when it cannot be
    imported."""
    try:
        return [m.name for m in pkgutil.iter_modules(
            importlib.import_module(package).__path__ if package else None)]
    except (ImportError, AttributeError):
        return []


@dataclass(frozen=True)
class Step:
    """One step of a model pipeline: an import path (or short name) and its JSON parameters.

    Example
    -------

    >>> Step("river.tree.HoeffdingTreeClassifier", {"grace_period": 50}).path
    'river.tree.HoeffdingTreeClassifier'

    """

    path: str
    params: dict = field(default_factory=dict)

    def resolve(self):
        """The class this step names (or the function of a short name such as `knn`), imported
        but not called. Nothing but a class is ever built from a spec, and nothing of Python's
        standard library: a spec from a shared config cannot run a command.

        >>> Step("gaussian-nb").resolve().__name__
        'GaussianNB'
        >>> Step("os.system", {"command": "ls"}).resolve()
        Traceback (most recent call last):
        ...
        transforms.models.specs.ModelSpecError: cannot build os.system: it is part of Python's \
standard library, not a model or a model's parameter; give a river estimator (e.g. \
river.naive_bayes.GaussianNB) or a class of a module of your own
        """
        if self.path in BASELINES:
            return BASELINES[self.path]
        target = REGISTRY.get(self.path, self.path)
        module_name, _, attr = target.rpartition(".")
        if module_name.split(".")[0] in sys.stdlib_module_names:  # (before it is imported)
            raise ModelSpecError(
                f"cannot build {target}: it is part of Python's standard library, not a model "
                f"or a model's parameter; give a river estimator (e.g. "
                f"river.naive_bayes.GaussianNB) or a class of a module of your own")
        if not module_name:
            names = sorted({**BASELINES, **REGISTRY})
            close = difflib.get_close_matches(self.path, names, n=1)
            raise ModelSpecError(
                f"unknown model {self.path!r}" + (f" (did you mean {close[0]!r}?)" if close
                                                   else "") +
                f": give an import path such as river.naive_bayes.GaussianNB, or one of {names}")
        try:
            module = importlib.import_module(module_name)
            cls = getattr(module, attr)
        except (ImportError, AttributeError) as e:
            close = [] if isinstance(e, ImportError) else difflib.get_close_matches(
                attr, [n for n in dir(module) if not n.startswith("_")], n=1)
            missing = getattr(e, "name", None) if isinstance(e, ModuleNotFoundError) else None
            if missing and target.startswith(missing):  # misspelt: rivr, river.naive_bayse
                parent, _, name = missing.rpartition(".")
                close = [f"{parent}.{c}".lstrip(".") + target[len(missing):]
                         for c in difflib.get_close_matches(name, _modules_of(parent), n=1,
                                                            cutoff=0.8)]
            else:
                close = [f"{module_name}.{c}" for c in close]
            yours = missing == target.split(".")[0]
            raise ModelSpecError(f"cannot import model {target!r}: {e}" + (
                "; a class defined in a script or notebook is not in the runner's worker "
                "processes: define it in a module of your own (a .py file in the folder you "
                "run in, or on PYTHONPATH), or run on the 'direct' runner"
                if module_name == "__main__" else
                f" (did you mean {close[0]}?)" if close else
                "; a module of your own is found in the folder the command runs in, or in "
                "a folder on PYTHONPATH" if yours else "")) from None
        if not inspect.isclass(cls) and target not in REGISTRY.values():
            raise ModelSpecError(
                f"cannot build {target}: it is not a class (a function?); a spec "
                f"names the class of a model or of a model's parameter, which is built with "
                f"the parameters given, and calls nothing else")
        return cls

    def build(self, classes: list | None):
        """The model this step names, built with its parameters (and the stream's `classes`,
        which a baseline is given).

        >>> Step("majority", {"window": 5}).build(None)
        Traceback (most recent call last):
        ...
        transforms.models.specs.ModelSpecError: model majority takes no parameters (it learns \
only the labels' classes); give it as majority
        """
        if self.path in BASELINES:
            if self.params:
                raise ModelSpecError(f"model {self.path} takes no parameters (it learns only "
                                     f"the labels' classes); give it as {self.path}")
            return BASELINES[self.path](classes=classes)
        cls = self.resolve()
        target = REGISTRY.get(self.path, self.path)
        defaults = _defaults(cls)
        for name, value in self.params.items():
            if _names_a_class(value):
                raise ModelSpecError(
                    f"cannot build {target}: parameter {name!r} is the text {value!r}; an "
                    f"object is written as its path with its parameters: "
                    f"{json.dumps({name: {value: {}}})}")
            texts = [v for v in value if _names_a_model(v)] \
                if isinstance(value, list) and name in _keywords(cls) else []
            if texts:  # (a list of models, river's VotingClassifier's)
                raise ModelSpecError(
                    f"cannot build {target}: parameter {name!r} holds the text {texts[0]!r}; "
                    f"an object is written as its path with its parameters: "
                    f"{json.dumps({name: _as_objects(value)})}")
            number = _number_in_text(value)
            if number is not None and _is_number(defaults.get(name)):
                raise ModelSpecError(
                    f"cannot build {target}: parameter {name!r} is the text {value!r}, where "
                    f"a number is expected (its default is {defaults[name]!r}); write it "
                    f"without quotes: {json.dumps({name: number})}")
        params = {k: _built(v, classes) for k, v in self.params.items()}
        args = params.pop(POSITIONAL, [])  # (compose.Select{"*": ["a", "b"]}: Select("a", "b"))
        if not isinstance(args, list):
            raise ModelSpecError(f"cannot build {target}: its positional arguments {POSITIONAL!r} "
                                 f"are a list, e.g. {json.dumps({POSITIONAL: ['a', 'b']})}")
        if "seed" not in params and _takes_seed(cls):
            params["seed"] = DEFAULT_SEED
        _key_new_rules_apart()
        try:
            model = cls(*args, **params)
            seeded = _seeded_defaults(model, params)
            return cls(*args, **params, **seeded) if seeded else model
        except Exception as e:  # the user's parameters, reported with the spec
            known = list(inspect.signature(cls).parameters)
            typos = {k: difflib.get_close_matches(k, known, n=1) for k in self.params
                     if k not in known}
            hints = [f"did you mean {m[0]!r} for {k!r}?" for k, m in typos.items() if m]
            kinds = {n: p.kind for n, p in inspect.signature(cls).parameters.items()}
            if any(not m for m in typos.values()) and inspect.Parameter.VAR_KEYWORD not in \
                    kinds.values():  # (a factory passing more on names only some)
                named = [n for n, k in kinds.items() if k != inspect.Parameter.VAR_POSITIONAL]
                hints.append(f"its parameters are {', '.join(named)}" if named else
                             "it takes no parameters")
            hints += [f"{k!r} are its positional arguments, given as "
                      f"{json.dumps({POSITIONAL: _as_objects(v)})}"
                      + (" (or the steps joined by |: 'a | b')"
                         if target == "river.compose.Pipeline" else "")
                      for k, v in self.params.items()
                      if kinds.get(k) == inspect.Parameter.VAR_POSITIONAL]
            hints += [f"a model is written as its name with its parameters: "
                      f"{json.dumps({k: {v: {}}})}" for k, v in self.params.items()
                      if isinstance(v, str) and (v in REGISTRY or v in BASELINES)]
            required = [n for n, p in inspect.signature(cls).parameters.items()
                        if p.default is inspect.Parameter.empty and n not in params
                        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
            if required:
                hints.append(f"give {' and '.join(map(repr, required))}: "
                             f"{target}{{\"{required[0]}\": ...}}; an object is its import "
                             f"path with its parameters, {{\"river.module.Class\": {{...}}}}")
            hint = "; ".join(hints)
            shown = self.path if target.startswith("transforms.") else target if \
                self.path == target else f"{self.path} ({target})"
            raise ModelSpecError(f"cannot build {shown} with {self.params}: {e}"
                                 + (f" ({hint})" if hint else "")) from None


def _names_an_object(value) -> bool:
    """A parameter value {PATH: {params}} that names an object to build."""
    if not (isinstance(value, dict) and len(value) == 1):
        return False
    (path, params), = value.items()
    return isinstance(params, dict) and isinstance(path, str) and (
        path in BASELINES or path in REGISTRY or "." in path and " " not in path)


def _as_objects(values) -> list:
    """Positional arguments as a spec writes them: a class's import path as that object.

    >>> _as_objects(["river.preprocessing.StandardScaler", "a"])
    [{'river.preprocessing.StandardScaler': {}}, 'a']
    """
    values = values if isinstance(values, list) else [values]
    return [{v: {}} if _names_a_model(v) else v for v in values]


def _names_a_model(value) -> bool:
    """A text parameter that names a model (a short name) or a class (an import path).

    >>> _names_a_model("gaussian-nb"), _names_a_model("river.stats.Mean"), _names_a_model("x")
    (True, True, False)
    """
    return isinstance(value, str) and (value in REGISTRY or value in BASELINES
                                       or _names_a_class(value))


def _names_a_class(value) -> bool:
    """A text parameter that is the import path of a class (meant as the object).

    >>> _names_a_class("river.stats.Mean"), _names_a_class("info_gain"), _names_a_class("a.b")
    (True, False, False)
    """
    if not isinstance(value, str) or "." not in value or " " in value:
        return False
    module_name, _, attr = value.rpartition(".")
    if module_name.split(".")[0] not in sys.modules:  # (a text such as "model.pkl" imports
        return False  # no module of that name)
    try:
        return inspect.isclass(getattr(importlib.import_module(module_name), attr, None))
    except (ImportError, ValueError, TypeError):
        return False


def _learns_labels(model) -> bool:
    """Whether a model's learn_one takes a label (learn_one(x, y)), as river's supervised
    models do and its clusterers do not.

    >>> from river import cluster, linear_model
    >>> _learns_labels(linear_model.LinearRegression()), _learns_labels(cluster.KMeans())
    (True, False)
    """
    try:
        parameters = list(inspect.signature(model.learn_one).parameters.values())
    except (TypeError, ValueError):
        return True
    return len(parameters) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in parameters)


def _parameters(cls) -> list[inspect.Parameter]:
    """A class's parameters ([] where Python cannot tell them)."""
    try:
        return list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return []


def _defaults(cls) -> dict:
    """A class's parameters' default values (those it has)."""
    return {p.name: p.default for p in _parameters(cls)
            if p.default is not inspect.Parameter.empty}


def _keywords(cls) -> set[str]:
    """The parameters a class takes by name (not its `*args`)."""
    return {p.name for p in _parameters(cls)
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number_in_text(value) -> int | float | None:
    """The number a text parameter spells (JSON's reading of it), else None.

    >>> _number_in_text("100"), _number_in_text("1e-7"), _number_in_text("auto"), _number_in_text(5)
    (100, 1e-07, None, None)
    """
    if not isinstance(value, str):
        return None
    try:
        number = json.loads(value.strip())
    except ValueError:
        return None
    return number if _is_number(number) else None


# The parameter of a spec that holds a model's positional arguments, as a list.
POSITIONAL = "*"


# A dict whose keys are no text, written as its items: {DICT_OF_ITEMS: {"*": [[[k, v], ...]]}}
# (`dict(items)`; JSON's keys are text, and river's desired_dist is keyed by the classes).
DICT_OF_ITEMS = "builtins.dict"


def _built(value, classes: list | None):
    """A parameter value with every object it names ({PATH: {params}}) built.

    >>> _built({DICT_OF_ITEMS: {"*": [[[False, 0.8], [True, 0.2]]]}}, None)
    {False: 0.8, True: 0.2}
    """
    if isinstance(value, dict) and list(value) == [DICT_OF_ITEMS]:  # (no class to import)
        items = value[DICT_OF_ITEMS].get(POSITIONAL, [[]]) if isinstance(
            value[DICT_OF_ITEMS], dict) else None
        if not (isinstance(items, list) and len(items) == 1 and all(
                isinstance(i, list) and len(i) == 2 for i in items[0])):
            raise ModelSpecError(f"{DICT_OF_ITEMS} is written with its items, "
                                 f'{{"{DICT_OF_ITEMS}": {{"*": [[[0, 0.9], [1, 0.1]]]}}}}')
        return {k: _built(v, classes) for k, v in items[0]}
    if _names_an_object(value):
        (path, params), = value.items()
        return Step(path, params).build(classes)
    if isinstance(value, list):
        return [_built(v, classes) for v in value]
    return value


def _public_path(cls) -> str:
    """The shortest import path that gives `cls` (river.tree.HoeffdingTreeClassifier, not the
    module it is defined in).

    >>> from river import tree
    >>> _public_path(tree.HoeffdingTreeClassifier)
    'river.tree.HoeffdingTreeClassifier'
    """
    parts = cls.__module__.split(".")
    for i in range(1, len(parts) + 1):
        module = ".".join(parts[:i])
        try:
            if getattr(importlib.import_module(module), cls.__qualname__, None) is cls:
                return f"{module}.{cls.__qualname__}"
        except ImportError:
            continue
    return f"{cls.__module__}.{cls.__qualname__}"


def _as_json(value, where: str):
    """A parameter value as JSON: river objects as {PATH: {changed params}}; a pipeline or a
    union as its class with its parts as positional arguments; a dict whose keys are classes
    that are no text (True, 0) as `dict` built from its items.

    >>> from river import linear_model, preprocessing
    >>> _as_json(preprocessing.StandardScaler() | linear_model.LinearRegression(), "p")
    ... # doctest: +NORMALIZE_WHITESPACE
    {'river.compose.Pipeline': {'*': [{'river.preprocessing.StandardScaler': {}},
                                      {'river.linear_model.LinearRegression': {}}]}}
    >>> _as_json({False: 0.8, True: 0.2}, "p")
    {'builtins.dict': {'*': [[[False, 0.8], [True, 0.2]]]}}
    """
    from river import compose

    if type(value).__module__ == "numpy":  # (a NumPy number or array: Python's)
        value = plain_value(value)
    parts = {compose.Pipeline: "steps", compose.TransformerUnion: "transformers"}
    if type(value) in parts:  # (their parts are no parameters: Pipeline(*steps))
        return {_public_path(type(value)): {POSITIONAL: [
            _as_json(part, where) for part in getattr(value, parts[type(value)]).values()]}}
    if isinstance(value, base.Base):  # (river gives estimators in a list as they are)
        value = type(value), _params_of(value)
    if isinstance(value, tuple) and len(value) == 2 and inspect.isclass(value[0]):
        cls, params = value
        return {_public_path(cls): changed_params(cls, params, where)}
    if isinstance(value, (list, tuple)):
        return [_as_json(v, where) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _as_json(v, where) for k, v in value.items()}
    if isinstance(value, dict) and all(k is None or isinstance(k, (bool, int, float))
                                       for k in value):  # (river's desired_dist: {0: .5})
        return {DICT_OF_ITEMS: {POSITIONAL: [[[k, _as_json(v, where)]
                                               for k, v in value.items()]]}}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    # A function (a FuncTransformer's): a spec builds classes and calls nothing.
    if callable(value) and not inspect.isclass(value):
        raise ModelSpecError(
            f"{where}: the function {getattr(value, '__qualname__', value)!r} cannot be written "
            f"as a spec, which names classes and their JSON parameters; compute what it gives "
            f"into the stream's features before evaluating, or make it a transformer class of "
            f"a module of your own (a river.base.Transformer whose transform_one does it)")
    raise ModelSpecError(f"{where}: {value!r} cannot be written as JSON; give it as a spec "
                         f"(a name and JSON parameters)")


def _params_of(model) -> dict:
    """river's `_get_params()`, but a pipeline or a union given as a parameter as it is: river
    gives it as its steps' parameters, without their classes.

    >>> from river import ensemble, linear_model, preprocessing
    >>> bagging = ensemble.BaggingClassifier(preprocessing.StandardScaler()
    ...                                      | linear_model.LogisticRegression())
    >>> type(_params_of(bagging)["model"]).__name__
    'Pipeline'
    """
    from river import compose

    params = model._get_params()
    for name in params:
        live = getattr(model, name, None)
        if isinstance(live, (compose.Pipeline, compose.TransformerUnion)):
            params[name] = live
    return params


def changed_params(cls, params: dict, where: str) -> dict:
    """The parameters (river's `_get_params()`) that differ from a default-built object's.

    >>> from river import tree
    >>> model = tree.HoeffdingTreeClassifier(grace_period=50)
    >>> changed_params(type(model), model._get_params(), "a model")
    {'grace_period': 50}
    """
    try:
        defaults = cls()._get_params()
    except Exception:  # a required parameter: then its signature's defaults
        defaults = {name: p.default for name, p in inspect.signature(cls).parameters.items()
                    if p.default is not inspect.Parameter.empty}
    if "_POSITIONAL_ARGS" in params:  # (river's name for them: compose.Select's keys, a set)
        args = params.pop("_POSITIONAL_ARGS")
        args = sorted(args, key=str) if isinstance(args, (set, frozenset)) else list(args)
        return {POSITIONAL: _as_json(args, f"{where}, its positional arguments"),
                **changed_params(cls, params, where)}
    return {name: _as_json(value, f"{where}, parameter {name}")
            for name, value in params.items()
            if name not in defaults or not _same(defaults[name], value)}


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:  # (arrays and the like)
        return False


def spec_of(model) -> str:
    """A model spec (text) for a river estimator built in Python (a pipeline too), with the
    parameters that differ from its defaults; a spec as it is.

    Example
    -------

    >>> from river import ensemble, linear_model, optim, preprocessing, tree
    >>> spec_of(tree.HoeffdingTreeClassifier(grace_period=50))
    'river.tree.HoeffdingTreeClassifier{"grace_period": 50}'
    >>> spec_of(preprocessing.StandardScaler() | linear_model.LogisticRegression(
    ...     optimizer=optim.SGD(0.1)))  # doctest: +NORMALIZE_WHITESPACE
    'river.preprocessing.StandardScaler | river.linear_model.LogisticRegression{"optimizer":
     {"river.optim.SGD": {"lr": {"river.optim.schedulers.Constant": {"learning_rate": 0.1}}}}}'
    >>> spec = spec_of(ensemble.BaggingClassifier(tree.HoeffdingTreeClassifier(), n_models=3))
    >>> print(spec.replace(", ", ",\\n"))
    river.ensemble.BaggingClassifier{"model": {"river.tree.HoeffdingTreeClassifier": {}},
    "n_models": 3}
    >>> type(ModelSpec.parse(spec).build().model).__name__
    'HoeffdingTreeClassifier'
    >>> spec_of(ensemble.VotingClassifier([tree.HoeffdingTreeClassifier(grace_period=50),
    ...                                    linear_model.LogisticRegression()]))
    ... # doctest: +NORMALIZE_WHITESPACE
    'river.ensemble.VotingClassifier{"models": [{"river.tree.HoeffdingTreeClassifier":
     {"grace_period": 50}}, {"river.linear_model.LogisticRegression": {}}]}'
    """
    if isinstance(model, str):
        return model
    from river import compose

    if isinstance(model, compose.Pipeline):
        return " | ".join(spec_of(step) for step in model.steps.values())
    if not isinstance(model, base.Base):
        if inspect.isclass(model) and issubclass(model, base.Base):  # (the class, not built)
            raise ModelSpecError(f"model {model.__qualname__} is a class, not a model: give "
                                 f"it built, {model.__qualname__}()")
        raise ModelSpecError(f"model {model!r} is neither a spec nor a river estimator; make "
                             f"its class a river.base.Classifier or river.base.Regressor "
                             f"(learn_one, predict_one), or give a spec such as 'gaussian-nb'")
    where = f"model {type(model).__qualname__}"
    if not _same_state(model, _new(model)):
        raise ModelSpecError(
            f"{where} has learned already, or predicted (river's progressive_val_score, for "
            f"one, trains the model it is given): a run builds each model new from its "
            f"parameters, so what it learned would be lost in silence; give it new "
            f"({type(model).__qualname__}() or model.clone()), and to start from learned rows, "
            f"pretrain on the stream's first ones (pretrain=N)")
    if isinstance(model, compose.TransformerUnion):  # (a + b: its transformers, in order)
        params = _as_json(model, where)[_public_path(type(model))]
    else:
        params = changed_params(type(model), _params_of(model), where)
    return _public_path(type(model)) + (json.dumps(params) if params else "")


def _new(model):
    """A new model of `model`'s parameters (river's `clone`), or `model` itself where they
    cannot build one (a class of the user's whose parameters are not its attributes: the
    spec written of it fails as clearly)."""
    try:
        return model.clone()
    except Exception:
        return model


_RANDOM_STATES = (random.Random, np.random.RandomState, np.random.Generator)


def _same_state(a, b, depth: int = 0) -> bool:
    """Whether two models hold the same learned state, attribute by attribute: a model given
    from Python against its `clone()`, a new one of the same parameters. Random generators
    are not compared (a model without a seed draws its own), nor functions or what keeps its
    state out of reach (a C object): those tell nothing of learning.

    >>> from river import naive_bayes
    >>> model = naive_bayes.GaussianNB()
    >>> _same_state(model, model.clone())
    True
    >>> model.learn_one({"a": 1.0}, True)
    >>> _same_state(model, model.clone())
    False

    A key a prediction read from a defaultdict, and so wrote with its default, is no learning:

    >>> from river import preprocessing
    >>> scaler = preprocessing.StandardScaler()
    >>> _ = scaler.transform_one({"a": 1.0})
    >>> _same_state(scaler, scaler.clone())
    True

    Nor is a pipeline's plan, which river keeps once it has been used:

    >>> from river import linear_model
    >>> pipeline = preprocessing.StandardScaler() | linear_model.LogisticRegression()
    >>> _ = pipeline.predict_proba_one({"a": 1.0})
    >>> _same_state(pipeline, pipeline.clone())
    True
    """
    if isinstance(a, _RANDOM_STATES) and isinstance(b, _RANDOM_STATES) or depth > 50:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or a != a and b != b  # (NaN)
    if isinstance(a, (int, str, bytes, complex, type(None), set, frozenset)):
        return a == b
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, collections.defaultdict) and a.default_factory is not None and \
            a.default_factory == b.default_factory:  # (a key read, not written: its default)
        new = a.default_factory
        return all(_same_state(a[k] if k in a else new(), b[k] if k in b else new(),
                               depth + 1) for k in {**a, **b})
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_state(a[k], b[k], depth + 1) for k in a)
    if isinstance(a, (list, tuple, collections.deque)):
        return len(a) == len(b) and all(_same_state(x, y, depth + 1) for x, y in zip(a, b))
    if callable(a) and not isinstance(a, base.Base):  # (a function, a class, a partial)
        return True
    from river import compose

    if isinstance(a, (compose.Pipeline, compose.TransformerUnion)):  # (beside caches: steps)
        parts = "steps" if isinstance(a, compose.Pipeline) else "transformers"
        return _same_state(dict(getattr(a, parts)), dict(getattr(b, parts)), depth + 1)
    if hasattr(a, "__dict__"):
        return _same_state(vars(a), vars(b), depth + 1)
    slots = [s for k in type(a).__mro__ for s in getattr(k, "__slots__", ())]
    return all(_same_state(getattr(a, s, None), getattr(b, s, None), depth + 1) for s in slots)


def model_specs(models) -> list:
    """`--model` specs from what a Python caller (or a YAML config) gives: a spec, a river
    estimator, a dict {display name: spec or estimator}, or a list of any of them.

    >>> from river import naive_bayes
    >>> model_specs({"nb": naive_bayes.GaussianNB(), "base": "majority"})
    ['nb=river.naive_bayes.GaussianNB', 'base=majority']
    >>> model_specs(["majority", {"nb": "gaussian-nb"}])
    ['majority', 'nb=gaussian-nb']

    A model written as a mapping of its class and parameters (as a YAML config may) is refused
    with the spec that says it.

    >>> model_specs([{"name": "tree", "class": "hoeffding-tree", "grace_period": 50}])
    ... # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    transforms.models.specs.ModelSpecError: model {'name': 'tree', 'class': 'hoeffding-tree',
    'grace_period': 50}: a model is one spec, its parameters in JSON after its class:
    'tree=hoeffding-tree{"grace_period": 50}'
    """
    for item in models if isinstance(models, (list, tuple)) else [models]:
        spec = _spec_of_mapping(item) if isinstance(item, dict) else None
        if spec:
            raise ModelSpecError(f"model {item}: a model is one spec, its parameters in JSON "
                                 f"after its class: '{spec}'")
    return named_specs(models, spec_of)


def _spec_of_mapping(item: dict) -> str | None:
    """The spec a mapping of a model's class (`class`, `model` or `spec`), parameters and
    `name` means, or of {class: {parameters}}; None for {name: spec}.

    >>> _spec_of_mapping({"river.tree.HoeffdingTreeClassifier": {"grace_period": 50}})
    'river.tree.HoeffdingTreeClassifier{"grace_period": 50}'
    >>> _spec_of_mapping({"nb": "gaussian-nb"}), _spec_of_mapping({"model": "gaussian-nb"})
    (None, None)
    """
    key = next((k for k in ("class", "model", "spec") if isinstance(item.get(k), str)), None)
    if key is not None and (len(item) > 1 or key != "model"):  # ({model: X}: one named model)
        params = {k: v for k, v in item.items() if k not in (key, "name")}
        name = f"{item['name']}=" if "name" in item else ""
        return f"{name}{item[key]}{json.dumps(params) if params else ''}"
    nested = [(k, v) for k, v in item.items() if isinstance(v, dict)]
    return f"{nested[0][0]}{json.dumps(nested[0][1])}" if nested else None


def _seeded_defaults(model, given: dict) -> dict:
    """The parameters a model filled itself with an unseeded random object, each with that
    object seeded: river's KNNClassifier left without an engine makes an unseeded SWINN.

    >>> from river import neighbors
    >>> _seeded_defaults(neighbors.KNNRegressor(), {})["engine"].seed
    42
    """
    from river.base import Base

    if not isinstance(model, Base):  # (no river model: no parameters of its making to seed)
        return {}
    seeded = {}
    for name in inspect.signature(type(model)).parameters:
        value = getattr(model, name, None)
        if (name not in given and isinstance(value, Base) and _takes_seed(type(value))
                and getattr(value, "seed", DEFAULT_SEED) is None):
            seeded[name] = value.clone({"seed": DEFAULT_SEED})
    return seeded


def _key_new_rules_apart() -> None:
    """Make river's AMRules key each new rule apart from the rules it holds.

    AMRules keys a rule made from its default rule by `hash(rule)`, the rule's address. A rule
    replaced by its expansion leaves its key behind and frees its address; a rule made later at
    that address takes the key and so replaces a live rule: the rules learnt hang on memory
    layout, from run to run and worker to worker. Keyed by an object of its own, kept alive by
    the key, no new rule can take another's key. (The keys are used for nothing else; river's
    rule order, its insertion order, is kept.)

    >>> from river import rules
    >>> _key_new_rules_apart()
    >>> rules.amrules.hash(rules.AMRules()._new_rule()) is rules.amrules.hash(None)
    False
    """
    amrules = sys.modules.get("river.rules.amrules")
    if amrules is not None:  # (its module's `hash`, before the builtin, is the key it uses)
        amrules.hash = _new_rule_key


def _new_rule_key(rule) -> object:
    return object()


def _takes_seed(cls) -> bool:
    try:
        return "seed" in inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return False


def _split_pipeline(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for ch in text:
        depth += ch in "{["
        depth -= ch in "}]"
        if ch == "|" and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts]


def _parse_step(text: str) -> Step:
    return Step(*split_options(text, "model", ModelSpecError, "parameters"))


@dataclass(frozen=True)
class ModelSpec:
    """A model named by import path(s) and JSON parameters.

    Parameters
    ----------
    name
        The model's name in the results.
    steps
        The pipeline's steps, each an import path (or short name) with its JSON parameters.

    >>> spec = ModelSpec.parse('river.tree.HoeffdingTreeClassifier{"grace_period": 50}')
    >>> spec.name
    'HoeffdingTreeClassifier{"grace_period": 50}'
    >>> type(spec.build()).__name__
    'HoeffdingTreeClassifier'
    >>> ModelSpec.parse("nb=gaussian-nb").name
    'nb'
    """

    name: str
    steps: tuple[Step, ...]

    @classmethod
    def parse(cls, text: str) -> ModelSpec:
        text = text.strip()
        name = None
        eq = text.find("=")
        if 0 < eq < min(i for i in (text.find("{"), text.find("|"), len(text)) if i >= 0):
            name, text = text[:eq].strip(), text[eq + 1:].strip()
        if not text:
            raise ModelSpecError("empty model spec")
        steps = tuple(_parse_step(p) for p in _split_pipeline(text))
        if name is None:
            name = " | ".join(
                s.path.rpartition(".")[2] + (json.dumps(s.params) if s.params else "")
                for s in steps)
        return cls(name, steps)

    @property
    def is_baseline(self) -> bool:
        return len(self.steps) == 1 and self.steps[0].path in BASELINES

    def build(self, classes: list | None = None):
        """A fresh, untrained model. Baselines get the declared class list.

        >>> list(ModelSpec.parse("standard-scaler | gaussian-nb").build().steps)
        ['StandardScaler', 'GaussianNB']
        """
        built = [s.build(classes) for s in self.steps]
        model = built[0]
        for step in built[1:]:
            model = model | step
        return model

    def unlike_defaults(self) -> list[str]:
        """The parameters given as text or a list where their default is a number, as a model
        error names them (such a value breaks the model at its first learn_one or predict_one;
        one that spells a number is refused when the model is built).

        >>> ModelSpec.parse('river.tree.HoeffdingTreeClassifier{"grace_period": "fifty", '
        ...                 '"leaf_prediction": "mc"}').unlike_defaults()
        ["parameter 'grace_period' of river.tree.HoeffdingTreeClassifier is 'fifty', where a \
number is expected (its default is 200)"]
        """
        found = []
        for step in self.steps:
            if step.path in BASELINES:
                continue
            defaults = _defaults(step.resolve())
            target = REGISTRY.get(step.path, step.path)
            found += [f"parameter {name!r} of {target} is {value!r}, where a number is "
                      f"expected (its default is {defaults[name]!r})"
                      for name, value in step.params.items()
                      if isinstance(value, (str, list)) and _is_number(defaults.get(name))]
        return found

    def task(self) -> str:
        """'classification' or 'regression', from the model's river type; a ModelSpecError if
        it is no online model at all (no learn_one and predict_one).

        >>> ModelSpec.parse("river.linear_model.LinearRegression").task()
        'regression'
        >>> ModelSpec.parse("m=standard-scaler").task()
        Traceback (most recent call last):
        ...
        transforms.models.specs.ModelSpecError: model m: river.preprocessing.scale.StandardScaler \
is not an online model (it has no predict_one); give a river estimator, e.g. \
river.naive_bayes.GaussianNB
        """
        from river import compose

        model = self.build()
        steps = list(model.steps.values()) if isinstance(model, compose.Pipeline) else [model]
        if not steps:
            raise ModelSpecError(f"model {self.name}: a pipeline without steps; write its steps "
                                 f"joined by |, e.g. river.preprocessing.StandardScaler | "
                                 f"river.linear_model.LogisticRegression")
        estimator = steps[-1]  # (a river pipeline predicts with its last step)
        missing = [m for m in ("learn_one", "predict_one")
                   if not callable(getattr(estimator, m, None))]
        if missing:
            kind = f"{type(estimator).__module__}.{type(estimator).__qualname__}"
            if len(steps) > 1 and any(callable(getattr(s, "predict_one", None))
                                      for s in steps[:-1]):
                raise ModelSpecError(f"model {self.name}: a pipeline's estimator comes last, "
                                     f"after its transformers; this one ends with {kind}, "
                                     f"which has no predict_one: reorder its steps")
            raise ModelSpecError(f"model {self.name}: {kind} is not an online model (it has no "
                                 f"{' and '.join(missing)}); give a river estimator, e.g. "
                                 f"river.naive_bayes.GaussianNB")
        if not _learns_labels(estimator):
            raise ModelSpecError(f"model {self.name}: {type(estimator).__qualname__} learns "
                                 f"without labels (its learn_one takes no y: a clusterer?), so "
                                 f"nothing it predicts has a true label to meet; give a "
                                 f"classifier or a regressor")
        if isinstance(estimator, base.Regressor) and not isinstance(estimator, base.Classifier):
            return "regression"
        return "classification"

    def to_dict(self) -> dict:
        return {"name": self.name,
                "steps": [{"path": s.path, "params": s.params} for s in self.steps]}


def check_tasks(streams: list, tasks: dict) -> None:
    """A regressor on class labels, or a classifier on numbers with fractions (`tasks`: model
    name -> task), is a ConfigError before any pipeline runs (the streams' first labels tell).

    >>> from transforms.streams.sources import StreamSpec
    >>> check_tasks([StreamSpec.parse('synth:SEA{"n": 10}')], {"nb": "classification"})
    >>> check_tasks([StreamSpec.parse('synth:SEA{"n": 10}')], {"lr": "regression"})
    Traceback (most recent call last):
    ...
    transforms.errors.ConfigError: model lr is a regressor, but stream sea has class labels; ...
    >>> check_tasks([StreamSpec.parse('synth:SEA{"n": 10}'),
    ...              StreamSpec.parse('synth:Friedman{"n": 10}')], {"lr": "regression"})
    Traceback (most recent call last):
    ...
    transforms.errors.ConfigError: model lr is a regressor, but stream sea has class labels; \
use a classifier (or, in a backfill, leave out --task regression); this run's streams mix class \
labels and numbers: evaluate each kind in a run of its own
    """
    first = {s.name: s.first_values() for s in streams if s.kind == "file"}
    kinds = {s.name: s.label_kind(first.get(s.name)) for s in streams}
    # (every model runs on every stream of a run: streams of both kinds need a run each)
    mixed = "; this run's streams mix class labels and numbers: evaluate each kind in a " \
        "run of its own" if {"classes", "numbers"} <= set(kinds.values()) else ""
    for s in streams:
        kind = kinds[s.name]
        # A file's labels read as text for a few cells that are no numbers ('?', '#VALUE!'):
        # for a regressor, any minority of them (no regressor takes class labels).
        labels = first[s.name] if kind == "classes" and s.kind == "file" else []
        for model, task in tasks.items():
            odd = _not_numbers(labels, 0.4 if task == "regression" else 0.1)
            if odd and (task == "regression" or _with_fractions(labels)):
                option = na_values_option(odd[:3])
                fix = f"give those that mean no label with the stream option {option}, or " \
                    f"fix them" if option else "fix them"
                raise ConfigError(
                    f"model {model} is a {'regressor' if task == 'regression' else 'classifier'}"
                    f", but stream {s.name}'s labels are read as text: most of its first "
                    f"labels are numbers{'' if task == 'regression' else ' with fractions'}, "
                    f"some are not ({', '.join(map(shown_briefly, odd[:3]))}); {fix}")
            if kind == "classes" and task == "regression":
                raise ConfigError(f"model {model} is a regressor, but stream {s.name} has class "
                                  f"labels; use a classifier (or, in a backfill, leave out "
                                  f"--task regression){mixed}")
            if kind == "numbers" and task == "classification":
                why = "river's regression dataset" if s.kind == "dataset" else "with fractions"
                raise ConfigError(f"model {model} is a classifier, but stream {s.name}'s labels "
                                  f"are numbers ({why}); use a regressor (the baselines: "
                                  f"no-change-regressor, mean-regressor), or, in a backfill, "
                                  f"leave out --task classification{mixed}")


def _with_fractions(labels: list) -> bool:
    """Whether some of the labels are numbers with fractions (read as text or not).

    >>> _with_fractions(["1.5", "?"]), _with_fractions(["0", "1", "?", 2.0])
    (True, False)
    """
    numbers = [number_in(label) for label in labels]
    return any(n is not None and math.isfinite(n) and not n.is_integer() for n in numbers)


def _not_numbers(labels: list, share: float = 0.1) -> list[str]:
    """The distinct texts among labels that are numbers but for a few (at most `share` of them)
    which are not (a '?' or 'n/a' for a missing one, a typo), else [].

    >>> _not_numbers(["1.5", "2.25", "?", "3", "4", "5", "6", "7", "8", "9"])
    ['?']
    >>> _not_numbers(["fraud", "ok", "1.5"]), _not_numbers(["1.5", "?", "3", "n/a"], 0.5)
    ([], ['?', 'n/a'])
    """
    odd = [str(label) for label in labels if number_in(label) is None]
    return list(dict.fromkeys(odd)) if 0 < len(odd) <= len(labels) * share else []
