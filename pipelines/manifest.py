"""After the pipeline: the summary completed (a row for every expected measure, in a fixed
order), the check that something was evaluated, and the manifest."""

from __future__ import annotations

import datetime as dt
import itertools
import math
import platform
import re
import sys
from importlib import metadata

import pandas as pd

from metrics import CONFUSION, NOT_PRIORITISED, PER_CLASS_METRICS
from metrics.bootstrap import BOOTSTRAP_METRICS
from metrics.classification import CLASSIFICATION_METRICS
from metrics.probabilistic import (AUC_BOOTSTRAP_METRICS, CURVE_METRICS,
                                   PER_CLASS_PROBABILITY_METRICS,
                                   PROBABILITY_METRICS, RANK_METRICS, RELIABILITY_METRICS)
from metrics.regression import QUANTILE_METRICS, REGRESSION_METRICS
from pipelines.plan import Plan
from pipelines.notices import unmatched_reasons, where_and_why
from pipelines.results import input_fingerprint, text_gaps_as_nan
from transforms.backfill.logs import LOG_COUNTERS, nothing_to_score_yet
from transforms.errors import InputError
from transforms.models.randomness import HASH_SEED_COUNT, hash_seed
from transforms.replay.protocols import model_and_fold
from transforms.records import SEGMENT_SEPARATOR, is_missing
from transforms.replay.engine import SET_ASIDE_NOT_FOUND, key_counts, none_scored_initially
from transforms.streams.times import time_format_hint
from transforms.vocabulary import (BINNED, CATEGORIES, COMPARISON, DRIFT, FINAL, HOLDOUT, INITIAL,
                                   INTERMEDIATE, RESOURCE_METRICS, RESOURCES, SUMMARY_COLUMNS,
                                   pair_name)


def complete_summary(pl: Plan, raw: pd.DataFrame,
                     classes: dict | None = None) -> pd.DataFrame:
    """Every expected (stream, model, category, bin, alpha, window, metric) gets a row, NaN with
    n=0 if nothing was scored, in a fixed order: streams and models as configured; then each
    key's per-class and confusion rows (category, window, bin, metric, then the classes in
    index order: `classes`, (stream, model) -> class names), its drift rows (as many as there
    were alarms) and each stream's comparisons.

    Example
    -------

    >>> from pipelines.config import RunConfig
    >>> from pipelines.plan import plan
    >>> pl = plan(RunConfig(streams=['s=synth:SEA{"n": 100}'], models=["nb=gaussian-nb"],
    ...                     delay="10", out="unused", repredict="none", drift_on="none"))
    >>> summary = complete_summary(pl, pd.DataFrame())  # nothing scored: every row NaN, n 0
    >>> len(summary) == 2 * len(CLASSIFICATION_METRICS), int(summary["n"].sum())  # 2 categories
    (True, 0)

    """
    raw = _keyed_by_segment(raw)
    per_class = raw["class"].notna() if "class" in raw else pd.Series(False, index=raw.index)
    if not raw.empty:  # the reliability diagram's points: per confidence bin, no class
        per_class |= raw["metric"].isin(RELIABILITY_METRICS)
    # Keys whose predictions kept class probabilities: their initial and final predictions
    # (and with --repredicted-probabilities every bin and Ψα) have the probability measures
    # too, in every view but the fading factors' for the ranks.
    scored = set() if raw.empty else set(zip(*(
        raw.loc[raw["metric"] == PROBABILITY_METRICS[0], ["stream", "model"]].T.values)))
    booted = set() if raw.empty else set(zip(*(
        raw.loc[raw["metric"] == BOOTSTRAP_METRICS[0], ["stream", "model"]].T.values)))
    plain = raw[~per_class]
    # {(stream, model, category, bin, alpha, window, metric): (value, n, t)}
    have = {} if raw.empty else dict(zip(
        zip(*(plain[c].tolist() for c in ("stream", "model", "category")),
            _options(plain["bin"]), _options(plain["alpha"]),
            *(plain[c].tolist() for c in ("window", "metric"))),
        zip(*(plain[c].tolist() for c in ("value", "n", "t")))))
    # Each key's per-class rows, and its rows of each category that adds rows as they came
    # (grouped once: a scan of all rows per key is quadratic in keys)
    own_classes = {} if raw.empty else dict(list(raw[per_class].groupby(["stream", "model"],
                                                                         sort=False)))
    added = {} if raw.empty else {key: records(rows) for key, rows in raw[raw["category"].isin(
        (DRIFT, HOLDOUT, RESOURCES, COMPARISON))].groupby(["stream", "model", "category"],
                                                          sort=False)}
    sc = pl.scoring
    slots = [(c, None, None) for c in (INITIAL, FINAL)[:1 + sc.final]]
    if sc.bins:
        slots += [(BINNED, b, None) for b in range(sc.bins + 2)]
        slots += [(INTERMEDIATE, None, a) for a in sc.alphas]
    rows = []  # tuples of the SUMMARY_COLUMNS (a million dicts take seconds to make a frame)

    def add(extra: list[dict], **fixed) -> None:
        rows.extend(tuple(fixed[c] if c in fixed else r.get(c, math.nan)
                          for c in SUMMARY_COLUMNS) for r in extra)

    for s, key, segment in _stream_keys(pl, raw):
        place = {"run_id": pl.config.run_id, "stream": s.name, "segment": segment}
        stream_protocol = f"delayed-prequential delay={pl.label_delay(s)} " \
                          f"repredict={pl.repredict}"
        for m in pl.models:
            fold = model_and_fold(m)[1] if pl.cv is not None else None
            protocol = stream_protocol + ("" if fold is None else f" cv={pl.cv} fold={fold}")
            metrics = CLASSIFICATION_METRICS if pl.tasks[m] == "classification" \
                else REGRESSION_METRICS
            if (key, m) in scored:
                metrics = (*metrics, *(p for p in PROBABILITY_METRICS
                                       if sc.auc or p not in RANK_METRICS))
            if (key, m) in booted:
                metrics = (*metrics, *BOOTSTRAP_METRICS)
                if sc.auc and (key, m) in scored:
                    metrics = (*metrics, *AUC_BOOTSTRAP_METRICS)
            for window, (category, b, alpha), metric in itertools.product(
                    sc.views, slots, metrics):
                if category == INTERMEDIATE and metric in NOT_PRIORITISED and \
                        metric not in BOOTSTRAP_METRICS:  # Ψα's own intervals
                    continue
                if metric in BOOTSTRAP_METRICS and window.startswith("fading"):
                    continue  # no faded replicates
                if metric in (*PROBABILITY_METRICS, *AUC_BOOTSTRAP_METRICS) and (
                        category not in (INITIAL, FINAL) and not sc.binned_probabilities
                        or window.startswith("fading") and
                        metric in (*RANK_METRICS, *AUC_BOOTSTRAP_METRICS)):
                    continue  # no probabilities of re-predictions; no faded ranks
                if metric in QUANTILE_METRICS and window.startswith("fading"):
                    continue  # no faded quantiles
                value, n, t = have.get((key, m, category, b, alpha, window, metric),
                                       (math.nan, 0, None))
                rows.append((place["run_id"], s.name, segment, m, protocol, category, b, alpha,
                             window, metric, math.nan, math.nan, value, int(n), t))
            if (key, m) in own_classes:
                add(_class_rows(own_classes[key, m], pl, (classes or {}).get((s.name, m), [])),
                    **place, protocol=protocol, alpha=None)
            if pl.drift is not None:
                d = pl.drift
                drift_protocol = (f"{protocol} page-hinkley on={d.on} delta={d.delta:g} "
                                  f"threshold={d.threshold:g} min_instances={d.min_instances}")
                add(added.get((key, m, DRIFT), []), **place, protocol=drift_protocol,
                    bin=None, alpha=None)
            if pl.holdout is not None:
                add(added.get((key, m, HOLDOUT), []), **place, bin=None, alpha=None,
                    protocol=protocol.replace(stream_protocol, f"periodic-holdout {pl.holdout}"))
            # --resources: the model's cost, in a fixed order
            add(sorted(added.get((key, m, RESOURCES), []),
                       key=lambda r: RESOURCE_METRICS.index(r["metric"])),
                **place, protocol=protocol, bin=None, alpha=None)
        # comparisons, pairs in configuration order
        add([r for a, b in itertools.combinations(pl.models, 2)
             for r in added.get((key, pair_name(a, b), COMPARISON), [])],
            **place, protocol=stream_protocol + ("" if pl.cv is None else f" cv={pl.cv}"),
            alpha=None)
    summary = pd.DataFrame.from_records(rows, columns=SUMMARY_COLUMNS).astype({"bin": "Int64"})
    return text_gaps_as_nan(summary if pl.cv is None else with_fold_means(summary, pl.cv))


def with_fold_means(summary: pd.DataFrame, cv) -> pd.DataFrame:
    """The summary with, after each stream's (and segment's) rows, each cross-validated
    model's mean over its folds (model = the model's name, value = the mean, n = the folds'
    mean n) and their sample standard deviation (metric `METRIC_sd`), for every measure but
    comparisons and drift alarms.

    Example
    -------

    >>> from transforms.replay.protocols import CrossValidation
    >>> rows = pd.DataFrame({"stream": "s", "segment": None, "model": ["nb#1", "nb#2"],
    ...     "protocol": "p", "category": "initial", "bin": None, "alpha": None,
    ...     "window": "cumulative", "metric": "accuracy", "class": None, "predicted": None,
    ...     "value": [0.8, 0.9], "n": [10, 12], "t": 5.0, "run_id": "r"})
    >>> out = with_fold_means(rows, CrossValidation("k-fold", 2))
    >>> [(m, k, round(v, 4), n) for m, k, v, n in out[["model", "metric", "value", "n"]].values][2:]
    [('nb', 'accuracy', 0.85, 11), ('nb', 'accuracy_sd', 0.0707, 11)]
    """
    keys = ["category", "bin", "alpha", "window", "metric", "class", "predicted"]
    parts = []
    for (_, _), part in summary.groupby(["stream", "segment"], sort=False, dropna=False):
        parts.append(part)
        folds = part[~part["category"].isin([COMPARISON, DRIFT])].copy()
        folds["_model"] = [model_and_fold(m)[0] for m in folds["model"]]
        folds = folds[folds["model"] != folds["_model"]]
        if folds.empty:
            continue
        grouped = folds.groupby(["_model", *keys], sort=False, dropna=False)
        first = grouped.first().reset_index()
        protocol = first["protocol"].str.replace(r" fold=\d+$", "", regex=True)
        mean = first.assign(model=first["_model"], value=grouped["value"].mean().values,
                            n=grouped["n"].mean().round().astype(int).values,
                            protocol=protocol + " mean over the folds")
        sd = mean.assign(metric=mean["metric"] + "_sd",
                         value=grouped["value"].std(ddof=1).values,
                         protocol=protocol + " standard deviation over the folds")
        parts.append(pd.concat([mean, sd])[SUMMARY_COLUMNS])
    return pd.concat(parts, ignore_index=True).astype({"bin": "Int64"})


def _keyed_by_segment(raw: pd.DataFrame) -> pd.DataFrame:
    """Rows whose `stream` is the scoring key again (`stream`, or `stream` + the separator +
    `segment` for a segment's rows)."""
    if raw.empty or "segment" not in raw or raw["segment"].isna().all():
        return raw
    segment = raw["segment"].fillna("")
    return raw.assign(stream=raw["stream"].where(segment == "", raw["stream"]
                                                 + SEGMENT_SEPARATOR + segment))


def _stream_keys(pl: Plan, raw: pd.DataFrame):
    """(stream spec, scoring key, segment) in the summary's order: each stream, then its
    segments with at least --min-segment-size labels, by --segment column, then by name
    (`natural_order`)."""
    sizes: dict = {}
    if not raw.empty:
        counted = raw[raw["category"].isin((INITIAL, FINAL)) & (raw["window"] == "cumulative")]
        sizes = counted.groupby("stream")["n"].max().to_dict()
    columns = list(pl.config.segments)
    for s in pl.streams:
        yield s, s.name, None
        prefix = s.name + SEGMENT_SEPARATOR
        segments = [k[len(prefix):] for k in sizes if k.startswith(prefix)
                    and sizes[k] >= pl.config.min_segment_size]
        for segment in sorted(segments, key=lambda g: (columns.index(g.split("=", 1)[0]),
                                                       natural_order(g))):
            yield s, prefix + segment, segment


def natural_order(name: str) -> list:
    """A sort key that orders the numbers in names by value: hour=2 before hour=10.

    >>> sorted(["hour=10", "hour=2", "hour=(missing)", "hour=1"], key=natural_order)
    ['hour=1', 'hour=2', 'hour=10', 'hour=(missing)']
    """
    return [(0, int(part), part) if part.isdigit() else (1, 0, part)
            for part in re.split(r"(\d+)", name)]


def _class_rows(raw: pd.DataFrame, pl: Plan, classes: list) -> list[dict]:
    """One key's per-class and confusion rows in a fixed order: category, window, bin, metric,
    class and predicted class (in class-index order)."""
    views = {w: i for i, w in enumerate(pl.scoring.views)}
    metrics = {m: i for i, m in enumerate((*PER_CLASS_METRICS, *PER_CLASS_PROBABILITY_METRICS,
                                           CONFUSION, *RELIABILITY_METRICS, *CURVE_METRICS))}
    position = {c: i for i, c in enumerate(classes)}
    categories = {c: i for i, c in enumerate(CATEGORIES)}

    def order(r):
        return (categories[r["category"]], views.get(r["window"], len(views)),
                _opt(r["bin"]) or 0, metrics[r["metric"]], position.get(r["class"], -1),
                position.get(r["predicted"], -1))

    return sorted(records(raw), key=order)


def records(frame: pd.DataFrame) -> list[dict]:
    """`frame.to_dict("records")`, a column at a time: pandas' own goes value by value
    through each text column's Arrow array, ~4× slower (300 000 per-class rows of a stream of
    300 classes: 4.2 s, against 1.1 s). A missing value of a nullable integer column is None,
    as there.

    >>> frame = pd.DataFrame({"metric": ["f1", "f1"], "bin": pd.array([None, 3], "Int64")})
    >>> records(frame) == frame.to_dict("records")
    True
    """
    names = list(frame.columns)
    columns = []
    for name in names:
        values = frame[name].tolist()
        if isinstance(frame[name].dtype, pd.api.extensions.ExtensionDtype):
            values = [None if v is pd.NA else v for v in values]
        columns.append(values)
    return [dict(zip(names, row)) for row in zip(*columns)]


def check_evaluated(pl: Plan, counts: dict, dead: list[dict],
                    summary: pd.DataFrame | None = None) -> None:
    """A run that evaluated nothing is a mistake, not a success: say which stream (or logged
    model) and what would fix it (`dead`: the run's dead letters; `summary`: its rows, whose
    `n` tell whether a backfill's matched predictions scored anything).

    Example
    -------

    >>> from pipelines.config import RunConfig
    >>> from pipelines.plan import plan
    >>> pl = plan(RunConfig(streams=['s=synth:SEA{"n": 100}'], models=["nb=gaussian-nb"],
    ...                     delay="10", out="unused", repredict="none", drift_on="none"))
    >>> counts = {"keys": [[["s", "nb"], {"labelled": 0}]],
    ...           "streams": {"s": {"instance_events": 100, "label_events": 0}}}
    >>> check_evaluated(pl, counts, [])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: stream s: no label among 100 instances...

    """
    keys = {tuple(k): v for k, v in counts["keys"]}
    for s in pl.streams:
        read = counts["streams"].get(s.name, {})
        mine = [c for (stream, _), c in keys.items() if stream == s.name]
        names = s.columns() if s.kind == "file" and s.format != "arff" else None
        columns = "" if names is None else f"; its columns are {names}"
        first = next((d for d in dead if d["stream"] == s.name), None)
        example = "" if first is None else f"; the first: {where_and_why(first)}"
        instances, labels = read.get("instance_events", 0), read.get("label_events", 0)
        if not instances:
            outside, pretrained = read.get("outside_range", 0), read.get("pretrain_events", 0)
            raise InputError(
                f"stream {s.name}: no instance to evaluate: " + (
                    f"all {outside} fall outside --from/--to" if outside else
                    f"its {pretrained} rows are all among the first {s.pretrain} to pretrain "
                    f"on; give a smaller pretrain" if pretrained else
                    f"{read.get('dead_letters', 0)} rows were dead letters{example}") + columns)
        if mine and read.get("outside_range") and not any(c.get("instances") for c in mine):
            generated = "; the instances of synth: and dataset: streams arrive one a second " \
                "from 1970-01-01 00:00:00 UTC" if s.kind in ("synth", "dataset") else ""
            raise InputError(
                f"stream {s.name}: no instance to evaluate: none of its {instances} instances "
                f"arrives in the range {pl.time_range.describe()} (--from/--to); check the "
                f"range against the stream's times{generated}")
        if not labels and read.get("dead_letters"):
            raise InputError(
                f"stream {s.name}: no label among {instances} instances; "
                f"{read['dead_letters']} dead letters{example}")
        label, kind = s.options.get("label", "label"), s.options.get("kind", "kind")
        if not labels and names and "labels" not in s.options and \
                label in names and kind not in names:  # (not an event log)
            raise InputError(
                f"stream {s.name}: no label among {instances} instances: its label column "
                f"{label!r} is empty in every row; fill it in, or name the column that holds "
                f'the labels ({{"label": ...}}) in the stream options')
        if not labels:
            raise InputError(
                f"stream {s.name}: no label among {instances} instances{columns}; name the "
                f'label column ({{"label": ...}}), label times ({{"label_time": ...}}) or a '
                f'label table ({{"labels": ...}}) in the stream options')
        if mine and not any(c.get("labelled") for c in mine):
            failed = sum(c.get("model_errors", 0) for c in mine)
            if read.get("outside_range") and not failed:  # (a night whose labels are late)
                waiting = max(c.get("instances", 0) for c in mine)
                raise InputError(
                    f"stream {s.name}: none of the {waiting:,} instances arriving "
                    f"{pl.time_range.describe()} (--from/--to) has its label in the labels "
                    f"read ({labels:,}, of instances outside the range or of unknown ids); "
                    f"evaluate the range once its labels have come (a label table that "
                    f"reaches past it), or check that instances and labels share ids (option "
                    f"id){example}")
            raise InputError(
                f"stream {s.name}: none of its {labels} labels met a pending instance "
                f"({instances} instances" + (f", {failed} set aside by model errors"
                                             if failed else "") +
                f"); check that instances and labels share ids (option id){example}")
        if not pl.backfill and mine and all(
                c.get("labelled") and c["labelled"] == c.get("unscored_initial") for c in mine):
            # (A first label's final prediction comes before any label is learned: from the
            # second on, a model that answers none has learned and still answers none.)
            if all(c.get("unanswered_after_learning") for c in mine) or \
                    pl.scoring.final and all(c["labelled"] > 1 and c["labelled"] == c.get(
                        "unscored_final") for c in mine):
                models = [m for (stream, m) in keys if stream == s.name]
                raise InputError(
                    f"stream {s.name}: no model made a prediction: {', '.join(models)} "
                    f"answered none (None, NaN or {{}}) for each of the {mine[0]['labelled']:,} "
                    f"labelled instances, before and after learning their labels; check that "
                    f"predict_one (or predict_proba_one) returns a class or a number")
            raise none_scored_initially(
                s, None if s.label_times_given() else s.delay(pl.delay),
                max(c.get("instances", 0) for c in mine),
                pl.time_range.describe() if read.get("outside_range") else None)
    logged_keys = {k: c for k, c in keys.items() if c.get("logged_predictions") is not None}
    unread = next((d for d in dead if d["stream"] is None), None)
    if logged_keys and unread and not any(c["logged_predictions"] for c in logged_keys.values()):
        raise InputError(f"{where_and_why(unread)}; no line of the prediction log can be read "
                         f"(check its separator and quotes)")
    # A model deployed before or after the range (a new version) has nothing in it: the other
    # models are still scored, unless none has anything either.
    if logged_keys and all(c["unmatched_outside_range"] == c["logged_predictions"]
                           for c in logged_keys.values()):
        raise InputError(f"prediction log {pl.log.pattern}: none of its predictions was made "
                         f"for an instance arriving in --from/--to; give the range the log "
                         f"covers")
    for (stream, model), c in logged_keys.items():
        logged = c["logged_predictions"]
        if not logged and pl.time_range.everything:  # (with a range: in unopened partitions)
            raise InputError(f"prediction log {pl.log.pattern}: no prediction of model "
                             f"{model!r} for stream {stream!r}")
        if c["unmatched_predictions"] == logged and not nothing_to_score_yet(c):
            raise InputError(
                f"prediction log {pl.log.pattern}: 0 of {logged:,} predictions of model "
                f"{model!r} matched a labelled instance of stream {stream!r} "
                f"({unmatched_reasons(c)}); {_matching_advice(c, pl.log.written_times())}")
    if not logged_keys or summary is None:
        return
    for s in pl.streams:
        matched = sum(c["logged_predictions"] - c["unmatched_predictions"]
                      for (stream, _), c in logged_keys.items() if stream == s.name)
        scored = summary[(summary["stream"] == s.name) & (summary["n"] > 0) &
                         summary["category"].isin(["initial", "final", "binned"])]
        if matched and scored.empty:
            raise InputError(
                f"prediction log {pl.log.pattern}: every prediction that matched a labelled "
                f"instance of stream {s.name!r} ({matched:,} of them) is empty: its "
                f"{pl.log.columns['prediction']!r} is empty, null or NaN; name the column "
                f'that holds the predictions with the option {{"prediction": ...}}')


def _matching_advice(counts: dict, written_times=()) -> str:
    """What to check when no logged prediction of a model matched, for its commonest reason;
    `written_times`: the log's first times as written (dates written day or month first get
    the option that reads them).

    >>> _matching_advice({"unmatched_no_instance": 3, "unmatched_before_arrival": 1})
    "check that the log's ids are the stream's (compared as text: 007 is not 7)"
    """
    reason = max(("no_instance", "before_arrival", "after_label", "unreadable_time"),
                 key=lambda k: counts.get(f"unmatched_{k}", 0))
    if reason == "no_instance":
        return "check that the log's ids are the stream's (compared as text: 007 is not 7)"
    if reason == "unreadable_time":
        return time_format_hint(written_times, "log") or (
            'name the log\'s time column with {"time": ...}; its values must be seconds (or '
            'the log\'s time_unit), ISO datetimes or written as its time_format says '
            '({"time_format": "%d/%m/%Y %H:%M"} for 01/11/2026 08:30)')
    return ("check that the log's times and the stream's are kept alike: numbers in the same "
            "unit (the time_unit options), ISO datetimes in the same time zone (one without a "
            "UTC offset is read as UTC, or in the zone the time_zone options name)")


def _options(column: pd.Series) -> list:
    """A bin or alpha column's values, each missing one None (`_opt`), as a list.

    >>> _options(pd.Series([2.0, float("nan")]))
    [2.0, None]
    """
    return column.astype(object).where(column.notna(), None).tolist()


def _opt(v):
    """A bin or alpha read back from parquet: NaN / None -> None. (A bin read as 2.0 still
    finds the key 2: equal numbers hash alike.)"""
    return None if is_missing(v) else v


def versions() -> dict:
    """The Python version and those of delayed-eval and the packages whose numbers it depends on.

    Example
    -------

    >>> sorted(versions())[:3]
    ['apache-beam', 'delayed-eval', 'numpy']

    """
    out = {"python": platform.python_version()}
    for pkg in ("delayed-eval", "apache-beam", "river", "numpy", "pandas", "pyarrow"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def alike_classes(classes: list) -> dict[str, list[list]]:
    """Per stream, the groups of its classes (its labels' and every model's predictions') that
    differ only in case, in spaces around them or in type (a model predicting the text 'True'
    for the label True): most likely one class written two ways, which every measure counts as
    two (`classes`: [[(stream, model), classes], ...]).

    >>> alike_classes([[["s", "m"], ["pos", "neg", "pos ", "Pos"]], [["s", "n"], ["neg", "NEG"]],
    ...                [["t", "m"], [True, 1.5]], [["t", "n"], ["True", "1.5"]]])
    {'s': [['pos', 'pos ', 'Pos'], ['neg', 'NEG']], 't': [[True, 'True'], [1.5, '1.5']]}
    """
    names: dict = {}
    for (stream, _), values in classes:
        seen = names.setdefault(stream, {})
        for value in values:
            seen.setdefault((type(value).__name__, str(value)), value)
    alike = {}
    for stream, seen in names.items():
        groups: dict = {}
        for name in seen.values():
            groups.setdefault(str(name).strip().casefold(), []).append(name)
        written_twice = [g for g in groups.values() if len(g) > 1]
        if written_twice:
            alike[stream] = written_twice
    return alike


def hash_seeds(counts: dict) -> list[str]:
    """The hash seeds of text (PYTHONHASHSEED; 'random': none fixed) of the processes the
    replays ran in, or of this one when none ran (a backfill): they order the sets of text
    classes river models walk, and so how such a model breaks a tie between them.

    >>> hash_seeds({"keys": [[["s", "a"], {"hash_seed=0": 3}],
    ...                      [["s", "b"], {"hash_seed=0": 1, "hash_seed=random": 2}]]})
    ['0', 'random']
    """
    return sorted({k[len(HASH_SEED_COUNT):] for _, raw in counts["keys"] for k in raw
                   if k.startswith(HASH_SEED_COUNT)}) or [hash_seed()]


def manifest(pl: Plan, counts: dict, dead: list[dict], started: str) -> dict:
    """`manifest.json`'s content: the configuration, versions, per-stream read counts and, per
    (stream, model), the counts that add up (see docs/semantics.md); `dead`: the run's dead
    letters.

    Example
    -------

    >>> from pipelines.config import RunConfig
    >>> from pipelines.plan import plan
    >>> pl = plan(RunConfig(streams=['s=synth:SEA{"n": 100}'], models=["nb=gaussian-nb"],
    ...                     delay="10", out="unused", repredict="none", drift_on="none"))
    >>> counts = {"keys": [[["s", "nb"], {"instances": 100, "labels": 100, "labelled": 100}]],
    ...           "classes": [], "streams": {"s": {"instance_events": 100, "label_events": 100}}}
    >>> m = manifest(pl, counts, [], "2026-11-23T00:00:00+00:00")
    >>> m["counts"][0]["labelled"], m["counts"][0]["scored_initial"], m["dead_letters"]
    (100, 100, 0)

    """
    keys = [{"stream": stream, "model": model, **key_counts(raw, pl.scoring.final),
             **{k: int(raw[k]) for k in LOG_COUNTERS if k in raw}}
            for (stream, model), raw in counts["keys"]]
    order = {(s.name, m): i for i, (s, m) in enumerate(
        (s, m) for s in pl.streams for m in pl.models)}
    keys.sort(key=lambda k: order.get((k["stream"], k["model"]), 1 << 30))
    return {
        "run_id": pl.config.run_id, "started": started,
        "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv), "config": pl.config.to_dict(),
        "replay": "backfill" if pl.backfill else pl.replay, "repredict": str(pl.repredict),
        "bins": pl.scoring.bins,
        # (one step, or each stream's where they differ)
        "curve_every": {s.name: pl.scoring.for_stream(s.name).curve_every for s in pl.streams}
        if pl.scoring.curve_steps else pl.scoring.curve_every,
        "versions": versions(),
        "python_hash_seed": seeds[0] if len(seeds := hash_seeds(counts)) == 1 else seeds,
        "streams": {s.name: {"spec": {"source": s.source,
                                      "options": s.options},
                             "delay": pl.label_delay(s), "ordering": s.ordering,
                             "seed": s.options.get("seed", 42) if s.kind == "synth" else None,
                             "declared_classes": pl.classes[s.name],
                             "read": counts["streams"].get(s.name, {}),
                             **_input(s)}
                    for s in pl.streams},
        "models": {name: {**(spec.to_dict() if spec else {"name": name,
                                                           "predictions": pl.log.pattern}),
                          "task": pl.tasks[name]}
                   for name, spec in pl.models.items()},
        "classes": {f"{k[0]} / {k[1]}": v for k, v in counts["classes"]},
        **({"alike_classes": alike} if (alike := alike_classes(counts["classes"])) else {}),
        "counts": keys,
        "dead_letters": len(dead),
        # A backfill's unreadable log lines: dead letters of no stream (nor in its counts).
        **({"log_dead_letters": sum(d["stream"] is None for d in dead),
            "log_rows_not_scored": not_scored(counts),
            "set_aside_by_the_logs_run": not_set_aside_again(pl, counts)}
           if pl.backfill else {}),
    }


def _input(stream) -> dict:
    """{"input": the fingerprint of the files `stream` read} ({} for a generator's, or when
    they are gone by the end of the run: then `rank` takes it for no other run's stream)."""
    try:
        files = stream.input_files()
        return {"input": input_fingerprint(files)} if files else {}
    except OSError:
        return {}


def not_set_aside_again(pl, counts: dict) -> dict:
    """{stream: {model: instances}} a backfill's log's run set aside because the model failed
    on them, and the backfill could not set aside again: its log records how many but not
    which, or the stream read holds other events in their places (`SET_ASIDE_NOT_FOUND`).

    >>> from pipelines.config import RunConfig
    >>> from pipelines.plan import plan
    >>> pl = plan(RunConfig(streams=['s=synth:SEA{"n": 10}'], models=["nb=gaussian-nb"],
    ...                     delay="2", out="unused"))
    >>> not_set_aside_again(pl, {"keys": [[["s", "nb"], {SET_ASIDE_NOT_FOUND: 2}]]})
    {'s': {'nb': 2}}
    """
    missed: dict = {}
    if pl.backfill:
        for stream, per_model in pl.log.recorded_set_asides(pl.time_range).items():
            for model, n in per_model.items():
                if model in pl.models:
                    missed.setdefault(stream, {})[model] = n
    for (stream, model), raw in counts["keys"]:
        if raw.get(SET_ASIDE_NOT_FOUND):
            missed.setdefault(stream, {})[model] = int(raw[SET_ASIDE_NOT_FOUND])
    return missed


def not_scored(counts: dict) -> dict[str, int]:
    """A backfill's log rows of a stream or model not configured, by "stream / model" in the
    order of their names ("(none)" for rows that name none): with each model's
    `logged_predictions` and the log's dead letters, every row of the log files read.

    >>> not_scored({"not_scored": [[["sea", "v2"], 40], [["sea", ""], 2]]})
    {'sea / (none)': 2, 'sea / v2': 40}
    """
    rows = sorted((tuple(key), n) for key, n in counts.get("not_scored", []))
    return {f"{stream or '(none)'} / {model or '(none)'}": n for (stream, model), n in rows}
