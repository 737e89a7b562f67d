"""A run's plan: its configuration parsed and checked before any pipeline starts (`plan`), and
what follows from it (each model's task, each stream's classes, the replay arrangement)."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import os
from dataclasses import dataclass

from apache_beam.io.filesystems import FileSystems

from metrics.classification import named_positive_class
from pipelines.config import DEFAULT_REPREDICT, LOGGED, RunConfig
from pipelines.files import check_reachable
from pipelines.thresholds import check_thresholds, parse_thresholds
from runners import check_runner, pipeline_options
from transforms.backfill.logs import PredictionLogSpec
from transforms.errors import ConfigError, DelayedEvalError, InputError
from transforms.models.binary import binary_classes
from transforms.models.specs import ModelSpec, check_tasks
from transforms.replay.per_key import in_time_order
from transforms.replay.protocols import (FOLD_SEPARATOR, CrossValidation, Holdout,
                                         model_and_fold)
from transforms.replay.repredict import RepredictPolicy
from transforms.scoring.drift import DriftPlan
from transforms.scoring.plan import ScoringPlan, curve_step
from transforms.streams import arff
from transforms.streams.delays import DelaySpec
from transforms.streams.read import TimeRange
from transforms.streams.sources import StreamSpec, kind_of_labels
from transforms.streams.tables import rows_in_time_order


@dataclass
class Plan:
    """A checked configuration: parsed specs, each model's task, each stream's classes.

    Example
    -------

    >>> from pipelines.config import RunConfig
    >>> pl = plan(RunConfig(streams=['s=synth:SEA{"n": 100}'], models=["nb=gaussian-nb"],
    ...                     delay="10", out="unused", repredict="none"))
    >>> [s.name for s in pl.streams], list(pl.models), pl.backfill, pl.scoring.bins
    (['s'], ['nb'], False, 0)

    """

    config: RunConfig
    streams: list[StreamSpec]
    models: dict[str, ModelSpec]
    tasks: dict[str, str]
    classes: dict[str, list | None]
    delay: DelaySpec
    repredict: RepredictPolicy | str  # backfill: how the logged predictions were made
    scoring: ScoringPlan
    drift: DriftPlan | None
    log: PredictionLogSpec | None = None  # backfill: the prediction log scored
    time_range: TimeRange = TimeRange()
    holdout: Holdout | None = None
    cv: CrossValidation | None = None  # `models` then holds each model's folds, MODEL#1..K
    # Per stream, the (positive, negative) classes its binary classifiers learn as True and
    # False (`binary_targets`); None: labels that are True/False.
    binary: dict = dataclasses.field(default_factory=dict)

    @property
    def backfill(self) -> bool:
        return self.log is not None

    @property
    def hidden(self) -> dict:
        """Per stream, the --segment columns read only to segment by (no model sees them)."""
        return {s.name: frozenset(s.segment_only) for s in self.streams if s.segment_only}

    def label_delay(self, stream: StreamSpec) -> str:
        """How a stream's labels are delayed, as the summary's protocol and the manifest name
        it: its delay spec, or `input` when the input gives every label time.

        >>> from pipelines.config import RunConfig
        >>> pl = plan(RunConfig(streams=['synth:SEA{"n": 100}'], models=["majority"],
        ...                     delay="10", out="unused"))
        >>> pl.label_delay(pl.streams[0])
        '10'
        """
        return "input" if stream.label_times_given() else str(stream.delay(self.delay))

    @functools.cached_property
    def replay(self) -> str:
        """`auto`: per-stream when every stream is read in time order (memory bounded by what
        is pending, scores and comparisons made as it drains), else grouped, which sorts each
        stream. Generated streams and tables are (a table out of time order is read whole and
        sorted); a file read in its own order (`{"order": "input"}`) is read once here to find
        out, unless its times alone tell (`in_time_order`). A --timer-bucket asks for the
        streaming replay, stateful."""
        if self.config.replay != "auto":
            return self.config.replay
        if self.config.timer_bucket is not None:
            return "stateful"
        if self.labels_anywhere_later:
            return "grouped"
        ordered = all(s.kind in ("synth", "dataset") or in_time_order(
            s, self.delay, self.time_range, self.config.chunk_size) for s in self.streams)
        return "per-stream" if ordered else "grouped"

    @property
    def labels_anywhere_later(self) -> list[str]:
        """The streams whose re-predictions at bin boundaries need label times that the
        per-stream and per-key replays cannot know when an instance arrives: a run's
        `bin_boundaries` policy on an event log, a label table or delayed ARFF, whose label
        rows may come anywhere later (the grouped replay sees them all first)."""
        if self.backfill or not isinstance(self.repredict, RepredictPolicy) \
                or self.repredict.kind != "bin_boundaries":
            return []
        return [s.name for s in self.streams if s.label_lookahead(self.delay) is None]


def _pretraining(stream: StreamSpec, n) -> StreamSpec:
    """`stream` with --pretrain N as its option `pretrain`, unless it has its own.

    >>> _pretraining(StreamSpec.parse('synth:SEA{"n": 100}'), 10).pretrain
    10
    >>> _pretraining(StreamSpec.parse('synth:SEA'), -1)
    Traceback (most recent call last):
    ...
    transforms.errors.ConfigError: --pretrain -1: a number of rows, 0 or more; e.g. --pretrain 1000
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ConfigError(f"--pretrain {n}: a number of rows, 0 or more; e.g. --pretrain 1000")
    if not n or "pretrain" in stream.options:
        return stream
    return dataclasses.replace(stream, options={**stream.options, "pretrain": n})


def plan(config: RunConfig) -> Plan:
    """Parse and check everything that can be checked before a pipeline starts.

    Example
    -------

    >>> from pipelines.config import RunConfig
    >>> pl = plan(RunConfig(streams=['synth:SEA{"n": 100}'], models=["no-change", "gaussian-nb"],
    ...                     delay="10", out="unused"))
    >>> pl.tasks, pl.replay, pl.scoring.bins
    ({'no-change': 'classification', 'gaussian-nb': 'classification'}, 'per-stream', 100)

    """
    check_runner(config.runner)
    # The checks below read the inputs through Beam's FileSystems: with the run's options (an
    # object store's credentials), as the pipeline will.
    FileSystems.set_options(pipeline_options(config.runner, config.beam_args))
    check_reachable(config.out, "--out")
    try:
        streams = [StreamSpec.parse(s) for s in config.streams]
        log = None if config.predictions is None else PredictionLogSpec.parse(config.predictions)
        for s in streams:
            for path in (s.source, s.options.get("labels")):
                if s.kind == "file" and isinstance(path, str):
                    check_reachable(path, f"stream {s.name}:")
        if log is not None:
            check_reachable(log.pattern, "--predictions")
        streams = [s.with_label_table_time() for s in streams]
        time_range = TimeRange.parse(config.start, config.end)
        # A backfill of a run's own log: the rows the run pretrained on, unless told (or
        # scoring a range: the first rows came before it).
        pretrain = {} if log is None or config.pretrain is not None \
            or not time_range.everything else log.recorded_pretrain(time_range)
        streams = [_pretraining(s, pretrain.get(s.name, 0) if config.pretrain is None
                                else config.pretrain) for s in streams]
        if not time_range.everything and any(s.pretrain for s in streams):
            raise ConfigError("--pretrain and --from/--to: pretraining takes a stream's first "
                              "rows, the range its instances from a time on; give one of them")
        delay = DelaySpec.parse(config.delay if config.delay is not None else
                                _recorded_delay(log, time_range, streams))
        run_policy = None if log is None else log.recorded_repredict(time_range)  # a run's log
        if log is not None and not run_policy:
            # A backfill: no model reads the features. Those of a run's own log are read as
            # the run read them, so rows it set aside for a feature are set aside again.
            streams = [dataclasses.replace(s, reads_features=False) for s in streams]
        for s in streams:
            s.check()
            s.check_delay(s.delay(delay))
            s.check_pretrain()
        if config.delay not in (None, "0") and streams and all(s.label_times_given()
                                                                for s in streams):
            raise ConfigError(f"--delay {config.delay} means nothing here: every stream's label "
                              f"times come from its input (a label table, an event log, a "
                              f"label time column or delayed ARFF); leave it out")
        models = {}  # a backfill's: model names, no specs
        _check_out_apart(config.out, streams, log)
        if log is not None:
            if log.needs_score_class():
                log = log.with_score_class(_positive_of_labels(streams))
            if log.decides_by_score():
                log = log.deciding_by_score(_other_class(streams, log.proba["positive"])
                                            if "positive" in log.proba else None)
            log.check_columns(time_range)
            names = _logged_models(log, config.models, time_range)
            if not names:
                raise ConfigError(f"prediction log {log.pattern}: " + (
                    "no model names in its model column" if log.has_rows(time_range) else
                    "no prediction in it (its files have no rows; a run with "
                    "--log-predictions none writes such files)"))
            _check_logged_streams(log, [s.name for s in streams], time_range)
            folds = [m for m in names if model_and_fold(m)[1] is not None]
            if folds and not config.models:
                raise ConfigError(f"prediction log {log.pattern}: model {folds[0]!r} is a fold "
                                  f"of a --cv run (its name ends in {FOLD_SEPARATOR}N); "
                                  f"a backfill scores logged models, not --cv folds: score "
                                  f"them with run --cv")
            for name in names:
                if name in models:
                    raise ConfigError(f"model {name!r} is given twice")
                models[name] = None
            tasks = dict.fromkeys(models, config.task or _logged_task(streams, log))
            # (a log of no final prediction, --no-final's, gives no final rows of n 0)
            final = config.final and log.has_finals(time_range)
            repredict = config.repredict or LOGGED
            repredict = repredict if repredict == LOGGED else \
                RepredictPolicy.parse(repredict).with_bins(config.bins)
            if repredict == LOGGED and (log.has_repredictions(time_range) or run_policy and
                                        log.recorded_log_level(time_range) == "all"):
                # (a run's own log says how it re-predicted: its protocol, as the run's, also
                # when it logged every re-prediction and there were none)
                repredict = run_policy or LOGGED
            elif repredict == LOGGED:
                # (binned and Ψα rows would each repeat the initial one)
                repredict = RepredictPolicy.parse("none")
                if config.repredicted_probabilities:
                    raise ConfigError(f"--repredicted-probabilities means nothing here: the "
                                      f"prediction log {log.pattern} has no re-predictions "
                                      f"(its kind column names none, or without one, no "
                                      f"instance was predicted at two times); leave it out")
            if config.repredicted_probabilities and str(repredict) != "none" and \
                    not log.has_repredicted_probabilities(time_range) and \
                    log.has_repredictions(time_range):
                # (none made, none missing: a delay shorter than the policy's first round)
                raise ConfigError(f"--repredicted-probabilities: the re-predictions in the "
                                  f"prediction log {log.pattern} carry no class probabilities "
                                  f"(a run logs them only when run with it); leave it out")
        else:
            for text in config.models:
                spec = ModelSpec.parse(text)
                if spec.name in models:
                    raise ConfigError(f"two models are named {spec.name!r}; name them with "
                                      f"NAME=SPEC")
                models[spec.name] = spec
            tasks = {name: spec.task() for name, spec in models.items()}
            repredict = RepredictPolicy.parse(config.repredict or DEFAULT_REPREDICT).with_bins(
                config.bins)
            final = config.final
        holdout, cv, models, tasks = _protocols(config, models, tasks)
        run_holdout = None if log is None else log.recorded_holdout(time_range)
        if run_holdout:  # (its held-out instances leave the label pass, as they left the run's)
            holdout = Holdout.parse(run_holdout)
        classes = {s.name: s.declared_classes() for s in streams}
        check_tasks(streams, tasks)
        binary = binary_classes(streams, models, tasks)
    except DelayedEvalError:
        raise
    except ValueError as e:
        raise ConfigError(str(e)) from None
    if config.repredicted_probabilities and (not config.probabilities
                                             or str(repredict) == "none"):
        raise ConfigError("--repredicted-probabilities means nothing with " + (
            "--no-probabilities" if not config.probabilities else "--repredict none") +
            ": leave one of them out")
    if config.auc and not config.probabilities:
        raise ConfigError("--auc means nothing with --no-probabilities (the AUCs rank class "
                          "probabilities): leave one of them out")
    if config.auc and "classification" not in tasks.values():
        raise ConfigError("--auc means nothing here: every model is a regressor (the AUCs "
                          "rank a classifier's class probabilities); leave it out")
    streams = _segmented(streams, config.segments, delay)
    # A table's columns, found here (the checks have read them), so a worker reads no file for
    # them: for JSON Lines that would be a whole pass; and whether its rows are in time order
    # (a table that is not is sorted as it is read).
    streams = [dataclasses.replace(s, table_columns=tuple(s.columns()),
                                   rows_ordered=rows_in_time_order(s))
               if s.kind == "file" and s.format != "arff" else s for s in streams]
    names = [s.name for s in streams]
    if len(set(names)) != len(names):
        raise ConfigError(f"stream names must be unique, got {names}; name them with NAME=SOURCE")
    try:
        # Each stream's own step (at least 25 points on it), unless --curve-every sets one
        steps = {} if config.curve_every else {
            s.name: curve_step(s.approximate_length()) for s in streams}
        curve_every = config.curve_every or min(steps.values(), default=curve_step(None))
        scoring = ScoringPlan.of(repredict, final=final, bins=config.bins,
                                 alphas=config.alphas, curve_every=curve_every,
                                 curve_steps=tuple((name, step) for name, step in steps.items()
                                                   if step != curve_every),
                                 windows=config.windows, fadings=config.fadings,
                                 time_windows=config.time_windows,
                                 bootstrap=config.bootstrap, auc=config.auc,
                                 binned_probabilities=config.repredicted_probabilities)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    drift = None if config.drift_on == "none" else DriftPlan(
        config.drift_on, config.ph_delta, config.ph_threshold, config.ph_min_instances,
        tuple(config.ph_alphas), {s.name: s.drift_points() for s in streams if s.drift_points()})
    # A mistake in a threshold is one before the run.
    check_thresholds(
        parse_thresholds(config.fail_if, list(dict.fromkeys(
            [*models, *(model_and_fold(m)[0] for m in models)])), config.segments),
        {**{model_and_fold(m)[0]: task for m, task in tasks.items()}, **tasks}, scoring.views,
        None if scoring.final else "the prediction log holds none" if log is not None else
        "--no-final", config.probabilities, config.auc, config.bootstrap)
    pl = Plan(config, streams, models, tasks, classes, delay, repredict, scoring, drift, log,
              time_range, holdout, cv, binary)
    if config.replay in ("per-stream", "per-key") and pl.labels_anywhere_later:
        raise ConfigError(f"stream {pl.labels_anywhere_later[0]}: --repredict "
                          f"{repredict} needs each label time when its instance "
                          f"arrives, and this stream's label rows may come anywhere later, "
                          f"beyond what --replay {config.replay} reads ahead; use --replay "
                          f"grouped (or auto, which chooses it)")
    return pl


def _recorded_delay(log, time_range, streams: list) -> str:
    """The delay when none is given: in a backfill of a run's own log, the delay the run
    recorded for the streams it applies to (those without label times or a delay option of
    their own), when it was one; else 0. So the predictions meet the label times they were
    made under."""
    recorded = {} if log is None else log.recorded_delays(time_range)
    delays = {recorded.get(s.name) for s in streams
              if not s.label_times_given() and "delay" not in s.options}
    delays -= {None, "input"}  # ("input": the run read label times this stream lacks)
    return delays.pop() if len(delays) == 1 else "0"


def _protocols(config: RunConfig, models: dict, tasks: dict) -> tuple:
    """The periodic holdout and the delayed cross-validation (None: not asked for), and the
    models and tasks with each model's folds in its place."""
    if config.predictions is not None and (config.holdout or config.cv):
        raise ConfigError("--holdout and --cv replay models; a backfill scores logged "
                          "predictions (use them with run)")
    holdout = Holdout.parse(config.holdout) if config.holdout else None
    cv = CrossValidation.parse(config.cv) if config.cv else None
    named = [m for m in models if model_and_fold(m)[1] is not None]
    if named:
        raise ConfigError(f"model {named[0]!r}: names ending in {FOLD_SEPARATOR}N are the "
                          f"folds of --cv; name it otherwise")
    if cv is None:
        return holdout, cv, models, tasks
    folds = {fold: dataclasses.replace(spec, name=fold)
             for name, spec in models.items() for fold in cv.names(name)}
    return holdout, cv, folds, {f: tasks[model_and_fold(f)[0]] for f in folds}


def _segmented(streams: list, segments: list, delay: DelaySpec) -> list:
    """The streams, each reading its --segment columns: a column a table's `features` option
    leaves out is read only to segment by (`StreamSpec.segment_only`), and no model sees it.
    Segmenting never changes what a model sees."""
    if not segments:
        return streams
    out = []
    for s in streams:
        columns = _instance_columns(s, delay)
        for column in segments:
            if column not in columns:
                close = difflib.get_close_matches(str(column), list(map(str, columns)), n=1)
                raise ConfigError(f"--segment {column}: stream {s.name} has no instance column "
                                  f"{column!r}" + (f" (did you mean {close[0]!r}?)" if close
                                                   else "") + f"; its columns are {columns}")
            values = s.first_values(column)
            if kind_of_labels(values) == "numbers":  # a slice per value: thousands of them
                shown = ", ".join(f"{v:g}" for v in values[:3])
                raise ConfigError(f"--segment {column}: stream {s.name}'s column {column!r} "
                                  f"holds numbers with fractions ({shown}, …), a slice per "
                                  f"value; segment by a column of categories (a country, a "
                                  f"model version), or add one that bins these numbers")
            distinct = list(dict.fromkeys(map(str, values)))
            if len(values) >= 20 and len(distinct) > len(values) / 2:  # (ids: a slice each)
                raise ConfigError(f"--segment {column}: stream {s.name}'s column {column!r} "
                                  f"has {len(distinct):,} distinct values in its first "
                                  f"{len(values):,} rows ({', '.join(distinct[:3])}, …), "
                                  f"nearly a slice per instance; segment by a column of "
                                  f"categories (a country, a model version)")
        features = s.options.get("features")
        extra = tuple(c for c in segments if not s.reads_features
                      or features is not None and c not in features)
        out.append(dataclasses.replace(s, segment_only=extra) if extra else s)
    return out


def _instance_columns(spec: StreamSpec, delay: DelaySpec) -> list[str]:
    """The columns an instance of `spec` can have: a table's columns (of all its files) but its
    id, time, kind, label and label time; an ARFF file's attributes but its class; a generated
    stream's features (of its first instance)."""
    if spec.format == "arff":
        attrs = arff.header_of(spec)
        return [attrs[i].name for i in arff.instance_attributes(spec, attrs)]
    if spec.kind in ("synth", "dataset"):
        first = next((e for e in spec.events(delay) if not isinstance(e, dict)), None)
        return [str(c) for c in first[5] or {}] if first is not None else []
    o = spec.options
    roles = {o.get(k, k) for k in ("id", "time", "kind", "label", "label_time")}
    return [c for c in spec.columns() if c not in roles]


def _check_out_apart(out: str | None, streams: list, log: PredictionLogSpec | None) -> None:
    """--out is no folder an input is read from: the run's files would be read with it next
    time (a table's folder is every table file below it).

    >>> import tempfile
    >>> logs = tempfile.mkdtemp()
    >>> _check_out_apart(f"{logs}/eval", [StreamSpec.parse(logs)], None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    transforms.errors.ConfigError: --out .../eval is inside ..., the folder stream ... is \
read from: its next run would read this run's files as input; choose an --out outside it
    """
    if out is None:
        return
    inputs = [(f"stream {s.name}", s.source) for s in streams if s.kind == "file"]
    inputs += [(f"the labels of stream {s.name}", s.options["labels"]) for s in streams
               if isinstance(s.options.get("labels"), str)]
    inputs += [("the prediction log", log.pattern)] if log is not None else []
    for what, source in inputs:
        if "://" in source or "://" in out:
            inside = out.rstrip("/").startswith(source.rstrip("/") + "/")
        else:
            inside = os.path.isdir(source) and os.path.commonpath(
                [os.path.realpath(source), os.path.realpath(out)]) == os.path.realpath(source)
        if inside:
            raise ConfigError(f"--out {out} is inside {source}, the folder {what} is read "
                              f"from: its next run would read this run's files as input; "
                              f"choose an --out outside it")


def _logged_models(log: PredictionLogSpec, models: list, time_range: TimeRange) -> list:
    """The models a backfill scores: those named (each must be in the log, when the log names
    models), else every model in the files it reads for `time_range` (a nightly backfill
    does not read a year of partitions before its day)."""
    try:
        logged = log.model_names(time_range)
    except InputError:  # no model column: the log is one model's, named or named after it
        return list(models) or [log.own_model_name()]
    if logged == [""] and not models:
        return []  # (none of its rows names a model: the caller says so)
    if "" in logged and not models:
        raise ConfigError(f"prediction log {log.pattern}: some of its rows name no model (their "
                          f"{log.columns['model']!r} is empty or missing); name their model in "
                          f"the log, or score the named ones alone with --model NAME")
    if any(m not in logged for m in models) and not time_range.everything:
        logged = log.model_names()  # (one with no predictions in the range is fine)
    missing = [m for m in models if m not in logged]
    if missing:
        raise ConfigError(f"prediction log {log.pattern}: no predictions of model(s) "
                          f"{missing}; the models in it are {logged}")
    return list(models) or logged


def _check_logged_streams(log: PredictionLogSpec, streams: list, time_range: TimeRange) -> None:
    """Each stream has predictions in a log that names its streams (a log with no stream
    column is the one stream's): the log's rows of a stream configured under another name
    would match nothing."""
    try:
        logged = log.names_in("stream", time_range)
    except InputError:
        return
    if any(s not in logged for s in streams) and not time_range.everything:
        logged = log.names_in("stream")  # (one with no predictions in the range is fine)
    missing = [s for s in streams if s not in logged]
    if missing:
        named = sorted(logged - {""})
        raise ConfigError(f"prediction log {log.pattern}: no predictions of stream(s) "
                          f"{missing}; the streams in its {log.columns['stream']!r} column are "
                          f"{named}" + (f"; name the stream as the log does, --stream "
                                        f"'{named[0]}=...'" if named else ""))


def _positive_of_labels(streams: list) -> str | None:
    """The positive class every stream names alike (`named_positive_class`), as text; not
    guessed from rarity, as the summary's (`results.positive_class`) may be. None when they
    do not tell, or differ."""
    told = {named_positive_class([str(c) for c in s.first_values()],
                                 s.options.get("positive"), s.declared_classes())
            for s in streams}
    told = {None if c is None else str(c) for c in told}
    return told.pop() if len(told) == 1 else None


def _other_class(streams: list, positive) -> str | None:
    """The class other than `positive` that the streams' declared classes, else their first
    labels, name, as text; None unless there is exactly one.

    >>> from transforms.streams.sources import StreamSpec
    >>> _other_class([StreamSpec.parse('s.csv{"classes": ["ok", "fraud"]}')], "fraud")
    'ok'
    """
    named = set()
    for s in streams:
        named |= {str(c) for c in (s.declared_classes() or s.first_values())}
    others = named - {str(positive)}
    return others.pop() if len(others) == 1 else None


def _logged_task(streams: list, log: PredictionLogSpec) -> str:
    """What a backfill's predictions are when --task does not say: regression when a stream's
    labels are numbers with fractions, or are whole numbers and the log's predictions are
    numbers with fractions; else classification."""
    kinds = {s.label_kind() for s in streams}
    if "numbers" in kinds:
        return "regression"
    if "classes" in kinds:
        return "classification"
    return "regression" if log.predicts_numbers() else "classification"
