"""river's datasets and synthetic generators as streams, with seed, size and drift chains."""

from __future__ import annotations

import difflib
import inspect
import itertools
import json
import math
import os
import random

from river.datasets import synth

from transforms.errors import ConfigError, InputError, check_options, shown_briefly
from transforms.specs import named_specs, plain_value

_SYNTH_RESERVED = {"n", "seed", "drift", "delay", "classes", "positive", "order", "pretrain"}


def drift_probability(position: int, centre: float, width: float) -> float:
    """MOA's sigmoid: the probability that instance `position` comes from the new concept.

    >>> drift_probability(500, 500, 100), drift_probability(0, 15000, 1)
    (0.5, 0.0)
    """
    v = -4.0 * float(position - centre) / float(width)
    # river's own ConceptDriftStream lets math.exp overflow (an abrupt drift, width 1, far
    # from its centre); the limit is 0.
    return 0.0 if v > 700 else 1.0 / (1.0 + math.exp(v))


class ConceptDriftStream(synth.ConceptDriftStream):
    """river's ConceptDriftStream: the same draws, without the overflow.

    Example
    -------

    >>> from river.datasets import synth
    >>> stream = ConceptDriftStream(synth.SEA(variant=0, seed=1), synth.SEA(variant=3, seed=1),
    ...                             seed=1, position=5, width=1)
    >>> len(list(stream.take(10)))
    10

    """

    def __iter__(self):
        rng = random.Random(self.seed)
        old, new = iter(self.stream), iter(self.drift_stream)
        position = 0
        while True:
            position += 1
            p = drift_probability(position, self.position, self.width)
            try:
                x, y = next(old if rng.random() > p else new)
            except StopIteration:
                return
            yield x, y


def dataset_label_kind(spec) -> str | None:
    """What river says a `dataset:` stream's labels are: 'numbers' for a regression dataset
    (ChickWeights' weights are whole numbers, yet no classes), 'classes' for a classification
    one (of a multi-output dataset, its targets' kind), None for unknown names.

    >>> from transforms.streams.sources import StreamSpec
    >>> [dataset_label_kind(StreamSpec.parse(f"dataset:{name}"))
    ...  for name in ("ChickWeights", "Phishing", "SolarFlare")]
    ['numbers', 'classes', 'numbers']
    """
    from river import datasets
    from river.datasets import base

    cls = getattr(datasets, spec.source.split(":", 1)[1], None)
    task = getattr(cls(), "task", None) if isinstance(cls, type) else None
    return {base.REG: "numbers", base.MO_REG: "numbers", base.BINARY_CLF: "classes",
            base.MULTI_CLF: "classes", base.MO_BINARY_CLF: "classes"}.get(task)


def _one_target(spec, name: str, ds, label):
    """The (x, y) rows of river dataset `ds` with one label each: a multi-output dataset's
    target named by the stream option `label` (a dict of targets is no one label to score).

    >>> from river import datasets
    >>> from transforms.streams.sources import StreamSpec
    >>> spec = StreamSpec.parse('dataset:SolarFlare{"label": "m-class-flares"}')
    >>> next(iter(_one_target(spec, "SolarFlare", datasets.SolarFlare(), "m-class-flares")))[1]
    0
    """
    from river.datasets import base

    if getattr(ds, "task", None) not in (base.MO_REG, base.MO_BINARY_CLF):
        if label is not None:
            raise InputError(f"stream {spec.name}: river dataset {name} has one target, its "
                             f"label; the option label names one of a multi-output dataset's "
                             f"targets: leave it out")
        return ds
    targets = list(next(iter(ds))[1])
    if label not in targets:
        given = f"has no target {label!r}" if label is not None else "gives no one label"
        raise InputError(f"stream {spec.name}: river dataset {name} {given}: each instance "
                         f"has {len(targets)} targets ({ds.task.lower()}: "
                         f"{', '.join(map(repr, targets))}); name the one to score with the "
                         f"stream option {{\"label\": \"{targets[0]}\"}}")
    return ((x, y[label]) for x, y in ds)


def _did_you_mean(name: str, module) -> str:
    """' (did you mean 'X'?)' for the class of `module` whose name is closest to `name`.

    >>> _did_you_mean("SEAA", synth)
    " (did you mean 'SEA'?)"
    """
    names = [n for n, v in vars(module).items() if isinstance(v, type)]
    close = difflib.get_close_matches(name, names, n=1) or \
        [n for n in names if n.lower() == name.lower()]
    return f" (did you mean {close[0]!r}?)" if close else ""


def river_stream(spec):
    """The (x, y) iterator of a `synth:` or `dataset:` stream spec.

    Example
    -------

    >>> from transforms.streams.sources import StreamSpec
    >>> stream = river_stream(StreamSpec.parse('synth:SEA{"n": 3, "seed": 1}'))
    >>> [y for _, y in stream]  # river's SEA(seed=1), as it gives them
    [True, False, True]

    """
    from river import datasets

    name = spec.source.split(":", 1)[1]
    opts = dict(spec.options)
    if spec.kind == "dataset":
        cls = getattr(datasets, name, None)
        if cls is None or not isinstance(cls, type):
            raise InputError(f"stream {spec.name}: river has no dataset {name!r}"
                             + _did_you_mean(name, datasets))
        # (A dataset is its rows, as river gives them: no seed, no drift.)
        check_options(f"stream {spec.name}: dataset {name}", opts,
                      _SYNTH_RESERVED - {"seed", "drift"} | {"label"})
        try:
            ds = cls()
        except Exception as e:
            raise InputError(f"stream {spec.name}: cannot load river dataset {name}: {e}") \
                from None
        if not getattr(ds, "is_downloaded", True):
            raise InputError(f"stream {spec.name}: river dataset {name} must be downloaded "
                             f"first (this machine may be offline); bundled ones such as "
                             f"Phishing, Bananas, TrumpApproval work anywhere")
        rows = _one_target(spec, name, ds, opts.get("label"))
        n = opts.get("n")
        return itertools.islice(rows, n) if n else rows
    cls = getattr(synth, name, None)
    if cls is None or not isinstance(cls, type):
        raise InputError(f"stream {spec.name}: river has no generator {name!r}"
                         f"{_did_you_mean(name, synth)}; see river.datasets.synth")
    params = {k: v for k, v in opts.items() if k not in _SYNTH_RESERVED}
    seed = opts.get("seed", 42)
    n = opts.get("n", 10_000)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"stream {spec.name}: n must be a whole number of instances, at "
                         f"least 1, not {n!r}")

    def build(p, s):
        kw = dict(p)
        sig = inspect.signature(cls).parameters
        if not any(v.kind == v.VAR_KEYWORD for v in sig.values()):
            check_options(f"stream {spec.name}: {name}", kw, {*sig, *_SYNTH_RESERVED} - {"order"})
        if "seed" in sig:
            kw.setdefault("seed", s)
        else:  # RandomRBF and RandomTree take two seeds
            for k in sig:
                if k.startswith("seed_"):
                    kw.setdefault(k, s)
        try:
            return cls(**kw)
        except Exception as e:  # the user's parameters, reported with the stream
            raise InputError(f"stream {spec.name}: {name}({kw}): {type(e).__name__}: {e}") \
                from None

    stream = build(params, seed)
    drifts = sorted(opts.get("drift", []), key=lambda d: d["at"])
    # A chain of abrupt or gradual drifts: each drift switches to a generator with the given
    # parameters, centred on position `at` with a sigmoid of width `width` (MOA's convention).
    if drifts:
        tail = None
        for k in range(len(drifts) - 1, -1, -1):
            d = drifts[k]
            new = build({**params, **{a: b for a, b in d.items() if a not in ("at", "width")}},
                        seed + k + 1)
            if tail is not None:
                nxt = drifts[k + 1]
                new = ConceptDriftStream(new, tail, position=nxt["at"] - d["at"],
                                               width=nxt.get("width", 1), seed=seed + k + 1)
            tail = new
        stream = ConceptDriftStream(stream, tail, position=drifts[0]["at"],
                                          width=drifts[0].get("width", 1), seed=seed)
    return itertools.islice(stream, n)


def stream_spec_of(stream, **options):
    """A stream spec (text) for a river dataset or generator built in Python, with the
    generator's parameters that differ from its defaults and any stream `options` (`n`,
    `positive`, `drift`, ...); a spec as it is. A generator gives its own `n_samples` events,
    or 10 000 as a `synth:` spec without `n`; a seed left to river is 42, as in a spec. Data
    (a DataFrame, (x, y) pairs) comes back with its options, for `evaluate` to write and read
    so (`RowsWithOptions`).

    Example
    -------

    >>> from river import datasets
    >>> stream_spec_of(datasets.synth.SEA(seed=7, noise=0.1), n=50_000)
    'synth:SEA{"noise": 0.1, "seed": 7, "n": 50000}'
    >>> stream_spec_of(datasets.Phishing())
    'dataset:Phishing'
    >>> stream_spec_of('synth:SEA{"n": 100}')
    'synth:SEA{"n": 100}'
    >>> stream_spec_of([({"a": 1.0}, "ok")], positive="fraud").options
    {'positive': 'fraud'}
    """
    from river import datasets

    from transforms.streams.python_rows import RowsWithOptions, is_rows

    options = plain_value(options)  # (positive=df["label"].max(), classes=series.unique())
    if is_rows(stream):
        if isinstance(stream, RowsWithOptions):
            return RowsWithOptions(stream.rows, {**stream.options, **options})
        return RowsWithOptions(stream, options)

    if isinstance(stream, os.PathLike):
        stream = os.fspath(stream)
    if isinstance(stream, str):
        if options:
            raise ConfigError(f"stream {stream}: give its options inside the spec, "
                              f"{stream}{json.dumps(options)}")
        return stream
    if isinstance(stream, dict):  # (a YAML mapping where one text was meant)
        raise ConfigError(f"stream {json.dumps(stream, default=str)}: a stream is one text, its "
                          f"options in JSON after its source, e.g. "
                          f"'logs/trips.csv{{\"time\": \"pickup\"}}' (quoted in YAML)")
    if isinstance(stream, type) and issubclass(stream, datasets.base.Dataset):
        module = "synth" if issubclass(stream, datasets.base.SyntheticDataset) else "datasets"
        raise ConfigError(f"stream {stream.__name__} is a class; give one of its streams, "
                          f"{module}.{stream.__name__}()")
    where = f"stream {type(stream).__name__}"
    if isinstance(stream, synth.ConceptDriftStream):
        raise ConfigError(f"{where}: a drift is given as the generator's drift option, "
                          f'e.g. stream_spec_of(SEA(seed=7), drift=[{{"at": 5000, "variant": 1}}])')
    if isinstance(stream, datasets.base.SyntheticDataset) and getattr(
            synth, type(stream).__name__, None) is type(stream):
        from transforms.models.specs import changed_params

        params = changed_params(type(stream), stream._get_params(), where)
        if stream.n_samples is not None:
            params["n"] = stream.n_samples
        kind = "synth"
    elif isinstance(stream, datasets.base.Dataset) and getattr(
            datasets, type(stream).__name__, None) is type(stream):
        if inspect.signature(type(stream)).parameters:
            raise ConfigError(f"{where} takes parameters, which a dataset: spec cannot give; "
                              f"write its rows to a CSV or Parquet file and give its path")
        params, kind = {}, "dataset"
    else:
        raise ConfigError(f"stream {shown_briefly(stream)} ({type(stream).__name__}): a stream "
                          f"is a spec (as for --stream), a file's path, a river dataset or "
                          f"generator, or (to evaluate) (x, y) pairs, a DataFrame with a "
                          f"label column, or (X, y): a DataFrame or 2-D array and its labels")
    params.update(options)
    return f"{kind}:{type(stream).__name__}" + (json.dumps(params) if params else "")


def stream_specs(streams) -> list:
    """`--stream` specs from what a Python caller gives: a spec, a river dataset or
    generator, a dict {name: any of them}, or a list of any of them.

    >>> from river import datasets
    >>> stream_specs({"sea": datasets.synth.SEA(), "web": "dataset:Phishing"})
    ['sea=synth:SEA', 'web=dataset:Phishing']

    A stream written as a mapping of its file and options (as a YAML config may) would be
    streams named `path`, `label`, ...: refused, with the spec that says it.

    >>> stream_specs([{"path": "tx.csv", "label": "fraud"}])  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    transforms.errors.ConfigError: stream {'path': 'tx.csv', 'label': 'fraud'}: a stream is one
    spec, its options in JSON after the file: 'tx.csv{"label": "fraud"}' (name it NAME=SPEC)
    """
    def place(item) -> str | None:
        return next((k for k in ("path", "source", "file") if isinstance(item, dict) and
                     k in item), None)

    for item in streams if isinstance(streams, (list, tuple)) else [streams]:
        named = item.items() if isinstance(item, dict) and not place(item) else [(None, item)]
        for name, value in named:  # (a name's stream written as a mapping too)
            source = place(value)
            if source:
                options = {k: v for k, v in value.items() if k != source}
                raise ConfigError(
                    f"stream {value}: a stream is one spec, its options in JSON after the file: "
                    f"'{f'{name}=' if name else ''}{value[source]}"
                    f"{json.dumps(options) if options else ''}'" +
                    ("" if name else " (name it NAME=SPEC)"))
    return named_specs(streams, stream_spec_of, "stream")
