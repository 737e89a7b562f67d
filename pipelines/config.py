"""Run configuration: the same fields from the CLI, a YAML file or Python."""

from __future__ import annotations

import datetime as dt
import dataclasses
import difflib
import math
import os
import uuid
from dataclasses import dataclass, field

import yaml

from metrics.binning import MOST_BINS
from metrics.bootstrap import MOST_REPLICATES
from transforms.errors import ConfigError
from transforms.specs import LARGEST_COUNT, plain_value
from transforms.streams.delays import seconds_text

LOG_LEVELS = ("all", "initial-final", "none")
DRIFT_ON = ("initial", "final", "none")
REPLAYS = ("auto", "grouped", "stateful", "per-key", "per-stream")
TASKS = ("classification", "regression")
MODEL_ERRORS = ("fail", "dead-letter")  # what a model failing on an instance does
BACKFILL_FIELDS = ("predictions", "task", "buckets")  # the fields only a backfill reads
LOGGED = "logged"  # backfill's default description of how its predictions were made
DEFAULT_REPREDICT = "every_k_labels:10"  # a run's re-prediction policy when none is given


# The command line's long options whose field has another name (the rest: dashes as _).
OPTION_FIELDS = {"stream": "streams", "model": "models", "alpha": "alphas", "window": "windows",
                 "fading": "fadings", "time-window": "time_windows", "ph-alpha": "ph_alphas",
                 "from": "start", "to": "end", "no-final": "final",
                 "no-probabilities": "probabilities", "segment": "segments", "config": None}


def field_of(key: str) -> str | None:
    """The RunConfig field a YAML key (or long option) names.

    >>> field_of("time-window"), field_of("chunk-size"), field_of("streams")
    ('time_windows', 'chunk_size', 'streams')
    """
    key = key.lstrip("-")
    return OPTION_FIELDS.get(key, key.replace("-", "_"))


def option_of(name: str) -> str:
    """The command line's long option of a RunConfig field, by which its errors name it.

    >>> option_of("time_windows"), option_of("ph_delta"), option_of("start")
    ('--time-window', '--ph-delta', '--from')
    """
    options = {field: option for option, field in OPTION_FIELDS.items() if field}
    return "--" + options.get(name, name.replace("_", "-"))


# What a whole-number option's error suggests.
_COUNT_EXAMPLES = {"chunk_size": 1000, "curve_every": 100, "bins": 100, "buckets": 16,
                   "min_segment_size": 30}


_KINDS = {"int": "a whole number", "float": "a number", "bool": "true or false",
          "str": "a text"}


def _typed(name: str, value, annotation: str):
    """`value` as the field's type (`annotation`, e.g. 'list[float]', 'str | None'), or a
    ConfigError naming the field: ints are numbers, numbers are text, one value is a list.

    >>> _typed("bins", 10.0, "int"), _typed("windows", 500, "list[int]")
    (10, [500])
    >>> _typed("start", dt.date(2026, 11, 1), "str | None")
    '2026-11-01'
    >>> _typed("delay", dt.timedelta(hours=2), "str"), _typed("delay", dt.timedelta(days=15), "str")
    ('7200s', '1296000s')
    >>> import numpy as np, pathlib
    >>> _typed("bins", np.int64(10), "int"), _typed("windows", np.array([50]), "list[int]")
    (10, [50])
    >>> _typed("bins", np.array(10), "int")
    10
    >>> _typed("delay", 5.0, "str"), _typed("delay", np.timedelta64(90, "s"), "str")
    ('5', '90s')
    >>> _typed("fadings", np.float32(0.99), "list[float]")
    [0.99]
    >>> _typed("out", pathlib.Path("results"), "str | None")
    'results'
    >>> _typed("bins", "12", "int"), _typed("fadings", ["0.99"], "list[float]")  # YAML's '12'
    (12, [0.99])
    >>> _typed("bins", "many", "int")
    Traceback (most recent call last):
    ...
    transforms.errors.ConfigError: --bins 'many': not a whole number
    >>> _typed("ph_threshold", float("inf"), "float")
    Traceback (most recent call last):
    ...
    transforms.errors.ConfigError: --ph-threshold inf: not a finite number; give a number
    """
    kind = annotation.replace(" | None", "")
    if isinstance(value, (range, set, frozenset)):
        value = sorted(value) if isinstance(value, (set, frozenset)) else list(value)
    elif isinstance(value, os.PathLike):
        value = os.fspath(value)
    else:  # NumPy numbers, bools, timedelta64 and arrays: Python's own
        value = plain_value(value)
    if value is None and annotation.endswith("| None"):
        return None
    if kind.startswith("list["):
        items = value if isinstance(value, (list, tuple)) else [value]
        return [_typed(name, v, kind[5:-1]) for v in items]
    if kind in ("int", "float") and isinstance(value, str):  # (quoted: read as the CLI reads it)
        for read in (int, float):
            try:
                value = read(value.strip())
                break
            except ValueError:
                continue
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "bool" and isinstance(value, bool) or kind == "str" and isinstance(value, str):
        return value
    if kind == "str" and number:  # (a whole float is its integer: delay 5.0 is 5 events)
        return str(int(value) if isinstance(value, float) and value.is_integer() else value)
    if kind == "str" and isinstance(value, (dt.date, dt.datetime)):  # YAML's `from: 2026-11-01`
        return value.isoformat()
    if kind == "str" and isinstance(value, dt.timedelta):  # a delay or window from Python
        return seconds_text(value.total_seconds())
    if kind == "float" and number:
        if not math.isfinite(value):  # (no threshold, factor or period is NaN or infinite)
            raise ConfigError(f"{option_of(name)} {value!r}: not a finite number; give a "
                              f"number")
        return float(value)
    if kind == "int" and number and float(value).is_integer():
        return int(value)
    quote = "; quote a value that holds ': '" if isinstance(value, dict) else ""
    raise ConfigError(f"{option_of(name)} {value!r}: not {_KINDS.get(kind, kind)}{quote}")


def _loader_of(path: str):
    """YAML's safe loader, but a key given twice in a mapping is a ConfigError (PyYAML keeps
    the last in silence: of two `model:` lines, one model would run)."""

    class UniqueKeys(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if not isinstance(key, (str, int, float, bool)):
                    continue  # (an odd key: the fields' check names it)
                if key in seen:
                    raise ConfigError(
                        f"{path}, line {key_node.start_mark.line + 1}: {key!r} is given twice "
                        f"in one mapping, of which YAML keeps the last alone; name it once "
                        f"(an option's several values go in one list: model: [a, b])")
                seen.add(key)
            return super().construct_mapping(node, deep)

    return UniqueKeys


def _check_quoted_specs(path: str, what: str, value) -> None:
    """A spec with JSON options left unquoted in a YAML file is read as a mapping, split at its
    first ': ' (`synth:SEA{"n": 500}` -> {'synth:SEA{"n"': '500}'}): one line that says to quote
    it, rather than a stream named `synth:SEA{"n"`.

    >>> _check_quoted_specs("c.yaml", "stream", [{'synth:SEA{"n"': "500}"}])
    Traceback (most recent call last):
    ...
    transforms.errors.ConfigError: c.yaml: stream 'synth:SEA{"n": 500}' is read by YAML as a \
mapping (': ' outside quotes); quote it: - 'synth:SEA{"n": 500}'
    """
    for item in value if isinstance(value, list) else [value]:
        for key, rest in item.items() if isinstance(item, dict) else ():
            if isinstance(key, str) and key.count("{") > key.count("}"):
                text = f"{key}: {rest}"
                raise ConfigError(f"{path}: {what} {text!r} is read by YAML as a mapping (': ' "
                                  f"outside quotes); quote it: - '{text}'")


def _check_relative_paths(path: str, config: RunConfig) -> None:
    """A config's file paths are relative to the current folder, as on the command line; one
    that names nothing there but a file next to the config is refused with the path to
    write."""
    import glob

    from transforms.streams.sources import StreamSpec

    here = os.path.dirname(os.path.abspath(path))
    if here == os.getcwd():
        return
    try:
        sources = [StreamSpec.parse(s) for s in config.streams]
    except ConfigError:  # (the plan says what is wrong with it)
        return
    given = [(f"stream {s.name}", s.source) for s in sources if s.kind == "file"] + [
        (f"stream {s.name}, option {key}", s.options[key]) for s in sources
        for key in ("labels",) if isinstance(s.options.get(key), str)] + (
        [("predictions", config.predictions.split("{")[0])] if config.predictions else [])
    for what, source in given:
        if "://" in source or os.path.isabs(source) or glob.glob(source):
            continue
        beside = os.path.relpath(os.path.join(here, source))
        if glob.glob(beside):
            raise ConfigError(f"{path}: {what}: {source!r} is not in the current folder "
                              f"({os.getcwd()}) but next to the config; its paths are "
                              f"relative to the current folder, as on the command line: "
                              f"write {beside!r}")


@dataclass
class RunConfig:
    """What to evaluate and where to write it.

    >>> cfg = RunConfig(streams=['synth:SEA{"n": 100}'], models=["no-change"], out="/tmp/x")
    >>> cfg.delay, cfg.runner, cfg.replay
    (None, 'direct', 'auto')
    """

    streams: list[str]
    models: list[str]  # backfill: model names in the prediction log ([]: all of them)
    out: str
    # Label delay for streams without label times; None (not given): 0, or in a backfill of a
    # run's own log the delay that run recorded
    delay: str | None = None
    runner: str = "direct"
    replay: str = "auto"  # auto | grouped | stateful | per-key | per-stream
    final: bool = True  # also make and score the test-then-train (final) prediction
    # keep a classifier's class probabilities with its initial and final predictions
    probabilities: bool = True
    # ... and with its re-predictions: probability measures per bin and Ψα (run: kept; backfill:
    # read from the log), their probabilities in predictions.parquet
    repredicted_probabilities: bool = False
    # Other protocols (`transforms.replay.protocols`): a periodic holdout EVERY:SIZE; delayed
    # cross-validation METHOD:K (k-fold, bootstrap or split), K copies of each model.
    holdout: str | None = None
    cv: str | None = None
    # The first N rows of each stream, learned with their labels as they arrive and never
    # predicted (MOA's -p N -m); a stream's own option `pretrain` overrides it. None (not
    # given): 0, or in a backfill of a run's own log the run's.
    pretrain: int | None = None
    bootstrap: int = 0  # R > 0: Poisson bootstrap intervals of accuracy, κ, macro F1 (and Ψα)
    resources: bool = False  # CPU seconds, model size and RAM-hours per model (not repeatable)
    auc: bool = False  # exact ROC-AUC and PR-AUC (cost and memory grow with the labels)
    bins: int = 100  # B: bins of the latency period for the binned measures Λ(T,b)
    # Re-prediction policy (`DEFAULT_REPREDICT` when None; a backfill's, `LOGGED`); "none" turns
    # re-evaluation off.
    repredict: str | None = None
    alphas: list[float] = field(default_factory=lambda: [1.0, 2.0, 10.0])  # Ψα
    windows: list[int] = field(default_factory=list)  # sliding windows of the last w labels
    fadings: list[float] = field(default_factory=list)  # fading factors, 0 < α < 1
    time_windows: list[str] = field(default_factory=list)  # event-time windows SIZE[/PERIOD]
    # Page-Hinkley over each model's losses of the initial (or final) predictions; none: off
    drift_on: str = "initial"
    ph_delta: float = 0.005
    ph_threshold: float = 50.0
    ph_min_instances: int = 30
    ph_alphas: list[float] = field(default_factory=lambda: [1.0])  # 1: no fading
    # predictions.parquet: all (initial, every re-prediction, final) | initial-final | none
    log_predictions: str = "all"
    on_model_error: str = "fail"  # fail | dead-letter (`transforms.replay.engine.ReplayEngine`)
    chunk_size: int = 1000
    curve_every: int | None = None  # None: each stream's own `curve_step` of its length
    timer_bucket: float | None = None  # seconds of event time per streaming drain
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    beam_args: list[str] = field(default_factory=list)
    quiet: bool = False  # no progress lines, no tables: errors and notices only
    progress_every: float = 5.0  # seconds between progress lines on stderr
    report: bool = False  # also write report.html and figures/ (pipelines.report)
    # Thresholds on the results (`pipelines.thresholds`): exit status 3 when one is crossed
    fail_if: list[str] = field(default_factory=list)
    # Every measure also per value of these instance columns (`country=DE`), as a stream of
    # its own; slices with fewer labels than min_segment_size are not reported.
    segments: list[str] = field(default_factory=list)
    min_segment_size: int = 1
    # Backfill (`delayed-eval backfill`): score this prediction log instead of replaying
    # models; `models` are then model names in the log (none: every model in it).
    predictions: str | None = None
    task: str | None = None  # backfill: what the logged predictions are (None: plan tells)
    buckets: int = 16  # backfill: instances are joined with their predictions in id buckets
    # Evaluate only instances arriving in [start, end): ISO dates (end: that whole day),
    # datetimes or seconds; their labels count whenever they arrive.
    start: str | None = None
    end: str | None = None

    def __post_init__(self):
        if not (isinstance(self.models, list) and all(isinstance(m, str) for m in self.models)):
            from transforms.models.specs import model_specs  # (river: only when needed)

            self.models = model_specs(self.models)  # river estimators built in Python too
        if not (isinstance(self.streams, list) and all(isinstance(s, str) for s in self.streams)):
            from transforms.streams.generators import stream_specs

            self.streams = stream_specs(self.streams)  # river datasets and generators too
        for f in dataclasses.fields(self):
            setattr(self, f.name, _typed(f.name, getattr(self, f.name), f.type))
        if not self.streams:
            raise ConfigError("no stream given (--stream)")
        if not self.models and self.predictions is None:
            raise ConfigError("no model given (--model)")
        for name, choices in (("task", TASKS), ("replay", REPLAYS), ("drift_on", DRIFT_ON),
                              ("on_model_error", MODEL_ERRORS),
                              ("log_predictions", LOG_LEVELS)):
            if getattr(self, name) not in choices and not (name == "task" and self.task is None):
                raise ConfigError(f"{option_of(name)} {getattr(self, name)!r}: not one of "
                                  f"{', '.join(choices)}; e.g. {option_of(name)} {choices[0]}")
        if self.progress_every < 0:
            raise ConfigError(f"--progress-every {self.progress_every:g}: seconds between "
                              f"progress lines, 0 (a line at each step) or more; e.g. "
                              f"--progress-every 5")
        # It names the run's staging folder in --out, .staging-ID: so it stays in --out, and
        # Beam's FileSystems, which match paths as globs, find that folder and no other.
        if not self.run_id or self.run_id in (".", "..") or len(self.run_id) > 200 or any(
                c in "/\\*?[]" or not c.isprintable() for c in self.run_id):
            raise ConfigError(f"--run-id {self.run_id!r}: a run id names a folder in --out, so "
                              f"it is 1 to 200 printable characters, none of / \\ * ? [ ] "
                              f"(a path's separators, a pattern's marks), nor '.' or '..'; "
                              f"e.g. --run-id nightly-2026-11-01")
        for name in ("chunk_size", "curve_every", "bins", "buckets", "min_segment_size"):
            most = MOST_BINS if name == "bins" else LARGEST_COUNT
            if getattr(self, name) is not None and not 1 <= getattr(self, name) <= most:
                raise ConfigError(f"{option_of(name)} {getattr(self, name)}: not a whole number "
                                  f"from 1 to {most:,}; e.g. {option_of(name)} "
                                  f"{_COUNT_EXAMPLES[name]}")
        for bad in (a for a in self.alphas if not a > 0):
            raise ConfigError(f"alpha {bad:g}: Ψα's α must be positive; e.g. --alpha 2")
        for bad in (w for w in self.windows if not 1 <= w <= LARGEST_COUNT):
            raise ConfigError(f"window {bad}: a window must be from 1 to {LARGEST_COUNT:,} "
                              f"labels; e.g. --window 1000")
        for bad in (a for a in self.fadings if not 0 < a < 1):
            raise ConfigError(f"fading factor {bad:g}: it must be between 0 and 1 (exclusive); "
                              f"e.g. --fading 0.999")
        for name, least, example in (("bootstrap", "0 (off) or more replicates", 1000),
                                     ("ph_delta", "0 or more", 0.005),
                                     ("ph_min_instances", "0 or more", 30)):
            if getattr(self, name) < 0:
                raise ConfigError(f"{option_of(name)} {getattr(self, name):g}: not {least}; "
                                  f"e.g. {option_of(name)} {example}")
        if self.bootstrap > MOST_REPLICATES:
            raise ConfigError(f"--bootstrap {self.bootstrap}: more than {MOST_REPLICATES:,} "
                              f"replicates (each keeps its own counts); e.g. --bootstrap 1000")
        if self.ph_threshold <= 0:
            raise ConfigError(f"--ph-threshold {self.ph_threshold:g}: not a positive number; "
                              f"e.g. --ph-threshold 50")
        if self.timer_bucket is not None and self.timer_bucket <= 0:
            raise ConfigError(f"--timer-bucket {self.timer_bucket:g}: not a positive number of "
                              f"seconds; e.g. --timer-bucket 60")
        if self.drift_on == "none" and (given := self._changed(
                "ph_delta", "ph_threshold", "ph_min_instances", "ph_alphas")):
            raise ConfigError(f"{given[0]} means nothing with --drift-on none (no Page-Hinkley "
                              f"test runs): leave one of them out")
        # (No re-prediction: no bins, no binned measure, no Ψα.)
        if self.repredict == "none" and (given := self._changed("bins", "alphas")):
            raise ConfigError(f"{given[0]} means nothing with --repredict none (no "
                              f"re-predictions: no binned measures, no Ψα): leave one of them "
                              f"out")
        if self.min_segment_size != 1 and not self.segments:
            raise ConfigError(f"--min-segment-size {self.min_segment_size} means nothing "
                              f"without --segment (it leaves out small slices): give --segment "
                              f"COLUMN, or leave it out")
        if self.timer_bucket is not None and self.replay not in ("auto", "stateful"):
            raise ConfigError(f"--timer-bucket {self.timer_bucket:g}: it drains the streaming "
                              f"replay, and --replay {self.replay} drains otherwise; give "
                              f"--replay stateful, or leave out --timer-bucket")
        for bad in (a for a in self.ph_alphas if not 0 < a <= 1):
            raise ConfigError(f"Page-Hinkley fading factor {bad:g}: it must be in (0, 1] (1: no "
                              f"fading); e.g. --ph-alpha 0.999")
        for name in ("windows", "fadings", "time_windows", "ph_alphas", "segments"):
            values = getattr(self, name)
            twice = next((v for i, v in enumerate(values) if v in values[:i]), None)
            if twice is not None:
                raise ConfigError(f"{option_of(name)} {twice}: given twice; give each value "
                                  f"once")

    def _changed(self, *names: str) -> list[str]:
        """The options among the fields `names` that hold other than their defaults."""
        return [option_of(f.name) for f in dataclasses.fields(self) if f.name in names
                and getattr(self, f.name) != (f.default if f.default is not dataclasses.MISSING
                                              else f.default_factory())]

    @classmethod
    def from_yaml(cls, path: str, refused: dict | None = None, **overrides) -> RunConfig:
        """Read a YAML config; CLI values given in `overrides` win.

        Keys are the command line's long options (`stream`, `window`, `time-window`, `from`,
        `no-final`, ...) or the field names (`streams`, `windows`, `time_windows`, `start`,
        `final`, ...); a list option takes one value or a list. `refused` maps the fields the
        command does not take to why (another command's options: `run` given `predictions`
        would silently score a log).
        """
        from apache_beam.io.filesystem import BeamIOError

        from pipelines.files import io_reason, read_bytes

        try:
            raw = read_bytes(path)  # (from any Beam filesystem: gs://, s3://, ...)
            data = yaml.load(raw.decode("utf-8"), Loader=_loader_of(path)) or {}
        except (OSError, BeamIOError) as e:
            raise ConfigError(f"{path}: {io_reason(e)}; give the path of a YAML config "
                              f"file (see examples/run.yaml)") from None
        except UnicodeDecodeError as e:
            line = raw.count(b"\n", 0, e.start) + 1
            raise ConfigError(f"{path}, line {line}: not UTF-8 text (byte 0x{raw[e.start]:02x}); "
                              f"save the file as UTF-8") from None
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f"{path}, line {mark.line + 1}" if mark is not None else path
            problem = getattr(e, "problem", None) or str(e).splitlines()[0]
            raise ConfigError(f"{where}: not valid YAML ({problem}); quote values that hold "
                              f"': ' or braces, e.g. '{{\"n\": 100}}'") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: the config must be a mapping of field: value")
        known = {f.name for f in dataclasses.fields(cls)}
        fields = {}
        for key, value in data.items():
            name = field_of(str(key))
            if name not in known:
                options = {*known, *(n.replace("_", "-") for n in known),
                           *(k for k, v in OPTION_FIELDS.items() if v)}
                close = difflib.get_close_matches(str(key), sorted(options), n=1)
                raise ConfigError(f"{path}: unknown field {key!r}; " + (
                    f"did you mean {close[0]!r}?" if close else
                    f"known: {sorted(known)} (or the command line's long options)"))
            if name in (refused or {}):
                raise ConfigError(f"{path}: {key} {refused[name]}")
            if name in fields:
                raise ConfigError(f"{path}: {name} is given twice")
            if name in ("streams", "models"):
                _check_quoted_specs(path, name[:-1], value)
            fields[name] = (not value) if key in ("no-final", "no-probabilities") else value
        fields.update({k: v for k, v in overrides.items() if v not in (None, [], ())})
        if "out" not in fields:
            raise ConfigError(f"{path}: no out given (out: DIR in the file, or --out DIR)")
        data = {"streams": [], "models": [], **fields}
        try:
            config = cls(**data)
        except ConfigError as e:
            raise ConfigError(f"{path}: {e}") from None
        except TypeError as e:
            raise ConfigError(f"{path}: {e}") from None
        _check_relative_paths(path, config)
        return config

    def to_dict(self) -> dict:
        """The fields as the manifest records them; a run's leave out the backfill's own.

        >>> sorted(set(RunConfig(["synth:SEA"], ["majority"], "out").to_dict())
        ...        & {"predictions", "task", "buckets", "models"})
        ['models']
        """
        fields = dataclasses.asdict(self)
        if self.predictions is None:  # (a regression run's manifest said task: classification)
            for name in BACKFILL_FIELDS:
                del fields[name]
        return fields
