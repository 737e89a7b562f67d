"""Reading results back, and the terminal table in the layout of Table II (Grzenda et al. 2020)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import uuid
import zlib

import pandas as pd
import pyarrow as pa

from metrics.classification import named_positive_class
from metrics.temporal import REPEATS_LEVEL
from transforms.errors import InputError, OutputError, one_line
from transforms.replay.protocols import comparable_pairs, model_and_fold
from transforms.specs import plain_value
from transforms.streams.table_files import EXACT_FLOATS, numbers_of
from transforms.vocabulary import SUMMARY_COLUMNS, pair_name

TABLE_METRICS = ("accuracy", "precision", "recall", "f1", "roc_auc", "average_precision",
                 "kappa", "kappa_m", "kappa_t", "kappa_plus", "mae", "rmse")
# The summary's columns of names and words: text, whatever they look like (a stream named after
# `inf.csv`, a model `1.0`, a class `NA`, a run id of digits).
SUMMARY_TEXT_COLUMNS = ("run_id", "stream", "segment", "model", "protocol", "category", "window",
                        "metric", "class", "predicted")
# Of the per-class measures, the table shows a binary task's positive class's.
POSITIVE_CLASS_METRICS = ("precision", "recall", "f1", "average_precision")
# A measure as trend and rank name it: `[initial|final] METRIC [(CLASS)]` ('recall (fraud)').
MEASURE_NAME = re.compile(r"^\s*(?:(initial|final)\s+)?(\w+)\s*(?:\((.+)\))?\s*$")


def load_results(path: str, kind: str = "summary") -> pd.DataFrame:
    """Read a finished run: `summary` (default), `curves` or `predictions` as a DataFrame.

    Parameters
    ----------
    path
        A finished run's output directory.
    kind
        `summary`, `curves`, `predictions` or `manifest`.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "summary.csv"), "w") as f:
    ...     _ = f.write("stream,model,class,category,window,metric,value,n\\n"
    ...                 "inf,1.0,NA,initial,cumulative,recall,0.5,2\\n")
    >>> load_results(d)[["stream", "model", "class", "value", "bin"]].to_dict("records")
    [{'stream': 'inf', 'model': '1.0', 'class': 'NA', 'value': 0.5, 'bin': nan}]
    """
    if kind == "summary":  # (an empty cell is missing: to_csv writes NaN and None so)
        file = os.path.join(path, "summary.csv")
        with written_by_us(file):
            summary = pd.read_csv(file, keep_default_na=False, na_values=[""],
                                  dtype=dict.fromkeys(SUMMARY_TEXT_COLUMNS, str),
                                  **EXACT_FLOATS)
        if "run_id" in summary and not set(summary["run_id"].dropna()) <= {
                (manifest_of(path) or {}).get("run_id")}:
            check_one_run(path, ["summary.csv"])  # another run's rows: that is what is wrong
        with written_by_us(file):
            _check_summary(summary, _summary_rows(path))
        check_one_run(path, ["summary.csv"])
        return summary
    if kind in ("curves", "predictions"):
        file = os.path.join(path, f"{kind}.parquet")
        with written_by_us(file):
            frame = pd.read_parquet(file)
        check_one_run(path, [f"{kind}.parquet"])
        return frame
    if kind == "manifest":
        return pd.json_normalize(read_manifest(path))
    raise ValueError(f"kind must be summary, curves, predictions or manifest, not {kind!r}")


def text_gaps_as_nan(summary: pd.DataFrame) -> pd.DataFrame:
    """`summary` with every empty cell of its text columns NaN, as `load_results` reads them
    (pandas 2 keeps the None a row gave, which its frame comparisons tell apart from NaN).

    >>> frame = pd.DataFrame({"class": ["a", None], "value": [1.0, 2.0]})
    >>> text_gaps_as_nan(frame)["class"].tolist()
    ['a', nan]
    """
    for column in summary.columns.intersection(SUMMARY_TEXT_COLUMNS):
        if summary[column].dtype == object:
            summary[column] = summary[column].where(summary[column].notna(), math.nan)
    return summary


def _summary_rows(path: str) -> int | None:
    """How many rows the run wrote to summary.csv, as its manifest says (None without one)."""
    rows = (manifest_of(path) or {}).get("summary_rows")  # (a damaged one: read_manifest says so)
    return rows if isinstance(rows, int) else None


def _check_summary(summary: pd.DataFrame, rows: int | None) -> None:
    """summary.csv as the run wrote it: its columns, a name in every row's naming cells, a
    number in every number cell, and as many rows as the manifest says (a copy cut short reads
    as fewer rows, or a last row with empty cells), each measure once. A column that names
    a part of the measures (`segment`, `bin`, `alpha`, `class`, `predicted`; `run_id`,
    `protocol`, `t`) and is not there is added, empty in each row.

    >>> summary = pd.DataFrame({"stream": ["s"], "model": ["m"], "category": ["initial"],
    ...                         "window": ["cumulative"], "metric": ["accuracy"],
    ...                         "value": ["0.5x"], "n": [10]})
    >>> _check_summary(summary, rows=1)
    Traceback (most recent call last):
    ...
    ValueError: line 2, column value: '0.5x' is not a number
    >>> _check_summary(summary.assign(value=0.5), rows=7)
    Traceback (most recent call last):
    ...
    ValueError: 1 rows where the manifest says 7 (cut short?)
    """
    names = ("stream", "model", "category", "metric")
    missing = [c for c in (*names, "window", "value", "n") if c not in summary]
    if missing:
        raise KeyError(f"no column {missing[0]!r}")
    for column in SUMMARY_COLUMNS:  # (the others: empty in each row, as where a run has none)
        if column not in summary:
            summary[column] = math.nan
    # Each measure once (a drift's alarms are a row each): a column that tells rows apart is
    # not missing, no rows were copied.
    key = ["stream", "segment", "model", "protocol", "category", "bin", "alpha", "window",
           "metric", "class", "predicted"]
    repeated = (summary.duplicated(key) & (summary["metric"] != "alarm")).to_numpy()
    if repeated.any():
        raise ValueError(f"line {int(repeated.argmax()) + 2} repeats the measure of an earlier "
                         f"line")
    for column in summary.columns.difference(SUMMARY_TEXT_COLUMNS, sort=False):
        numbers = numbers_of(summary[column])
        wrong = numbers.isna() & summary[column].notna()
        if wrong.any():
            row = int(wrong.to_numpy().argmax())
            raise ValueError(f"line {row + 2}, column {column}: {summary[column].iloc[row]!r} "
                             f"is not a number")
        summary[column] = numbers
    unnamed = summary[list(names)].isna().any(axis=1).to_numpy()
    if unnamed.any():
        row = int(unnamed.argmax())
        column = next(c for c in names if pd.isna(summary[c].iloc[row]))
        raise ValueError(f"line {row + 2}, column {column}: empty")
    if rows is not None and len(summary) != rows:
        raise ValueError(f"{len(summary)} rows where the manifest says {rows} (cut short?)")


def read_manifest(path: str, keys: tuple = ()) -> dict:
    """A finished run's manifest.json (the folder `path`'s), a JSON object with these `keys`.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "manifest.json"), "w") as f:
    ...     _ = f.write('{"streams": {}, "models": {}')  # (cut short)
    >>> read_manifest(d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: .../manifest.json: damaged, or not written by delayed-eval \
(JSONDecodeError: Expecting ',' delimiter: ...); write it again: rerun what wrote it
    """
    file = os.path.join(path, "manifest.json")
    with written_by_us(file), open(file, encoding="utf-8") as f:
        manifest = json.load(f)
        if not isinstance(manifest, dict) or not set(keys) <= set(manifest):
            raise KeyError(f"not an object with {', '.join(keys) or 'members'}")
        _check_entries(manifest)
    return manifest


def _check_entries(manifest: dict) -> None:
    """A KeyError naming the first entry of the manifest's streams, models or counts that lacks
    what the readers of a run take from it (a hand-edited or cut manifest).

    >>> _check_entries({"models": {"nb": {"task": "classification"}},
    ...                 "counts": [{"stream": "s", "labelled": 3}]})
    Traceback (most recent call last):
    ...
    KeyError: "counts[0] has no 'model'"
    """
    streams, models, counts = (manifest.get(part, empty) for part, empty in (
        ("streams", {}), ("models", {}), ("counts", [])))
    if not (isinstance(streams, dict) and isinstance(models, dict) and isinstance(counts, list)):
        raise KeyError("streams, models or counts of another kind than a run writes")
    entries = [(f"streams.{k}", e, ()) for k, e in streams.items()] + \
        [(f"models.{k}", e, ("task",)) for k, e in models.items()] + \
        [(f"counts[{i}]", e, ("stream", "model")) for i, e in enumerate(counts)]
    for where, entry, fields in entries:
        if not isinstance(entry, dict):
            raise KeyError(f"{where} is not an object")
        missing = [f for f in fields if f not in entry]
        if missing:
            raise KeyError(f"{where} has no {missing[0]!r}")


def json_text(value, indent: int | None = 1) -> str:
    """`value` as strict JSON, which jq, JavaScript and every JSON library read: a NaN or
    infinite number is `null` (a 0/0 statistic, a test with nothing to test), NumPy numbers are
    numbers, other objects their text.

    Example
    -------

    >>> import numpy as np
    >>> json_text({"p": float("nan"), "n": np.int64(3), "x": [np.float32(0.5), -math.inf]},
    ...           indent=None)
    '{"p": null, "n": 3, "x": [0.5, null]}'

    """
    return json.dumps(_finite(plain_value(value)), indent=indent, default=str, allow_nan=False)


def _finite(value):
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return None if isinstance(value, float) and not math.isfinite(value) else value


def numbers_from_json(text: str | bytes):
    """A profile's JSON read back: its nulls, `json_text`'s NaN, are NaN again.

    Example
    -------

    >>> numbers_from_json('{"s": {"labels": 9, "repeats_by_chance": null}}')
    {'s': {'labels': 9, 'repeats_by_chance': nan}}

    """
    return json.loads(text, object_hook=lambda d: {k: math.nan if v is None else v
                                                   for k, v in d.items()})


def read_json(file: str):
    """A finished run's profile.json (`numbers_from_json`), damage named as `written_by_us`."""
    with written_by_us(file), open(file, encoding="utf-8") as f:
        return numbers_from_json(f.read())


@contextlib.contextmanager
def written_by_us(file: str):
    """A result file that cannot be read back, damaged or written by something else, as one
    InputError naming it (a missing one stays a FileNotFoundError: its callers name that)."""
    try:
        yield
    except FileNotFoundError:
        raise
    except (ValueError, KeyError, TypeError, OSError, pa.ArrowException) as e:
        raise InputError(f"{file}: damaged, or not written by delayed-eval ({type(e).__name__}: "
                         f"{one_line(e)}); write it again: rerun what wrote it"
                         ) from None


def not_a_folder(path: str) -> str:
    """What `path`, which is no folder, is instead, for a message: a file, or nothing.

    >>> not_a_folder(__file__), not_a_folder(__file__ + ".missing")
    ('a file, not a folder', 'no such folder')
    """
    return "a file, not a folder" if os.path.exists(path) else "no such folder"


def made_folder(out: str) -> str:
    """`out` as a folder to write into (made with its parents), or an OutputError saying why it
    cannot be one.

    >>> import os, tempfile
    >>> made_folder(os.path.join(tempfile.mkdtemp(), "trend")).endswith("trend")
    True
    >>> made_folder(__file__)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    transforms.errors.OutputError: --out ...results.py: a file, not a folder; choose a folder
    """
    if os.path.exists(out) and not os.path.isdir(out):
        raise OutputError(f"--out {out}: {not_a_folder(out)}; choose a folder")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise OutputError(f"--out {out}: cannot make it ({e.strerror}); choose a folder you "
                          f"can write") from None
    return out


def format_unfixed_hash_seed(seeds, classes: list) -> str:
    """A line naming the streams of classes named by text when a replay ran in a Python
    without a fixed hash seed (the manifest's `python_hash_seed` holds 'random'), or ''.
    `classes`: [[(stream, model), classes], ...].

    >>> print(format_unfixed_hash_seed(["0", "random"], [[["s", "m"], ["no", "yes"]],
    ...                                                  [["t", "m"], [0, 1]]]))
    ... # doctest: +NORMALIZE_WHITESPACE
    s: classes named by text, and models run in a Python without a fixed hash seed
    (PYTHONHASHSEED): a river model that breaks a tie between such classes in a set's order
    (the adaptive tree, kNN) may break it otherwise in another run; give the workers
    PYTHONHASHSEED=0, as the delayed-eval command runs (docs/runners.md)
    >>> format_unfixed_hash_seed("0", [[["s", "m"], ["no", "yes"]]])
    ''
    """
    if "random" not in ([seeds] if isinstance(seeds, str) else seeds):
        return ""
    streams = sorted({stream for (stream, _), values in classes
                      if any(isinstance(v, str) for v in values)})
    if not streams:
        return ""
    return (f"{', '.join(streams)}: classes named by text, and models run in a Python without a "
            f"fixed hash seed (PYTHONHASHSEED): a river model that breaks a tie between such "
            f"classes in a set's order (the adaptive tree, kNN) may break it otherwise in "
            f"another run; give the workers PYTHONHASHSEED=0, as the delayed-eval command runs "
            f"(docs/runners.md)")


def format_alike_classes(alike: dict, backfill: bool) -> str:
    """Lines naming each stream's classes that differ only in case, spaces or type (the
    manifest's `alike_classes`), or ''.

    >>> print(format_alike_classes({"s": [["pos", "pos ", "Pos"], [True, "True"]]},
    ...                            backfill=False))  # doctest: +NORMALIZE_WHITESPACE
    s: classes 'pos', 'pos ' and 'Pos' differ only in case or spaces, and each is counted as a
    class of its own; if they are one class, write it one way in the labels
    s: classes True and 'True' differ only in type, and each is counted as a class of its own;
    if they are one class, write it one way in the labels and the models' predictions
    """
    lines = []
    for stream, groups in alike.items():
        for group in groups:
            typed = len({type(c) for c in group}) > 1
            how = ("type" if len({str(c) for c in group}) == 1 else "type, case or spaces") \
                if typed else "case or spaces"
            where = "the labels and the log" if backfill else \
                "the labels and the models' predictions" if typed else "the labels"
            lines.append(f"{stream}: classes {', '.join(map(repr, group[:-1]))} and "
                         f"{group[-1]!r} differ only in {how}, and each is counted as a class "
                         f"of its own; if they are one class, write it one way in {where}")
    return "\n".join(lines)


def format_uncompared(summary: pd.DataFrame, tasks: dict) -> str:
    """A line per stream naming its pairs of models of one task that have no comparison rows
    because they scored no instance in common (a backfill's model versions that served other
    requests), or ''.

    >>> summary = pd.DataFrame({"stream": "s", "segment": None, "category": "initial",
    ...                         "model": ["v1", "v2", "v3"]})
    >>> summary.loc[3] = ["s", None, "comparison", "v2 vs v3"]
    >>> print(format_uncompared(summary, dict.fromkeys(["v1", "v2", "v3"], "classification")))
    ... # doctest: +NORMALIZE_WHITESPACE
    s: v1 and v2, v1 and v3 scored no instance in common, so they are not compared (a pair is
    compared on the instances both predicted)
    >>> folds = pd.DataFrame({"stream": "s", "segment": None, "model": ["a#1", "b#1", "a", "b",
    ...                       "a#1 vs b#1"], "category": ["initial"] * 4 + ["comparison"]})
    >>> format_uncompared(folds, dict.fromkeys(["a#1", "b#1"], "classification"))  # --cv
    ''
    """
    whole = whole_streams(summary)
    pairs = whole[whole["category"] == "comparison"]
    compared = set(zip(pairs["stream"], pairs["model"]))
    lines = []
    for stream, rows in whole[whole["category"] == "initial"].groupby("stream", sort=False):
        models = [m for m in rows["model"].unique() if m in tasks]  # (not --cv's fold means)
        apart = [f"{a} and {b}" for a, b in comparable_pairs(models, tasks)
                 if (stream, pair_name(a, b)) not in compared]
        if apart:
            shown = ", ".join(apart[:3]) + (f", … ({len(apart)} pairs)" if len(apart) > 3 else "")
            lines.append(f"{stream}: {shown} scored no instance in common, so they are not "
                         f"compared (a pair is compared on the instances both predicted)")
    return "\n".join(lines)


SIGNIFICANCE = 0.01  # the level the comparison table names a model that errs less at
COMPARISON_CAPTION = ("Comparisons, initial predictions: Q = log(S_A / S_B) (< 0: A errs less), "
                      "McNemar or Diebold-Mariano (> 0: A errs more)")
COMPARISON_TESTS = {"mcnemar": ("McNemar", ("mcnemar_exact_p", "mcnemar_p")),
                    "diebold_mariano": ("Diebold-Mariano", ("diebold_mariano_p",))}


def comparison_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Each pair of models compared on its initial predictions over the whole stream (with
    --cv, each fold's pair): Q = log(S_A / S_B), the test that suits the pair —
    McNemar for classifiers (its exact p-value), Diebold-Mariano for regressors — its
    statistic (> 0: A errs more) and p-value, and the model that errs less at the 0.01 level
    ("neither" above it; "undefined" where the test is, e.g. for two models that never
    disagree). Empty without comparisons.

    >>> rows = pd.DataFrame({"stream": "s", "model": ["a", "b"] + ["a vs b"] * 4,
    ...     "category": ["initial"] * 2 + ["comparison"] * 4, "window": "cumulative", "bin": 0,
    ...     "metric": ["accuracy", "accuracy", "q_statistic", "mcnemar", "mcnemar_exact_p",
    ...                "diebold_mariano"], "value": [0.9, 0.7, -1.1, -20.0, 1e-5, -4.5]})
    >>> print(comparison_table(rows).to_string(index=False))
    stream   pair       Q    test  statistic       p errs less (p < 0.01)
         s a vs b -1.1000 McNemar     -20.00 1.0e-05                    a
    """
    whole = whole_streams(summary)
    pairs = whole[(whole["category"] == "comparison") & (whole["window"] == "cumulative")
                  & (whole["bin"] == 0)]
    values = {(r.stream, r.model, r.metric): r.value for r in pairs.itertuples()}
    table = []
    for stream, rows in whole[whole["category"] == "initial"].groupby("stream", sort=False):
        models = rows["model"].unique()
        for i, a in enumerate(models):
            for b in models[i + 1:]:
                pair = pair_name(a, b)
                if (stream, pair, "q_statistic") not in values:
                    continue
                test = next((t for t in COMPARISON_TESTS
                             if not math.isnan(values.get((stream, pair, t), math.nan))), None)
                name, p_values = COMPARISON_TESTS[test] if test else ("undefined", ())
                statistic = values[stream, pair, test] if test else math.nan
                p = next((values[stream, pair, m] for m in p_values
                          if not math.isnan(values.get((stream, pair, m), math.nan))), math.nan)
                # (a p of 0 underflowed: an exact binomial tail over millions of labels)
                table.append({"stream": stream, "pair": pair,
                              "Q": f"{values[stream, pair, 'q_statistic']:.4f}", "test": name,
                              "statistic": "" if math.isnan(statistic) else f"{statistic:.2f}",
                              "p": "" if math.isnan(p) else f"{p:.1e}" if p else "< 1e-300",
                              f"errs less (p < {SIGNIFICANCE:g})":
                                  (b if statistic > 0 else a) if p < SIGNIFICANCE else "neither"})
    return pd.DataFrame(table)


DIVERGED_R2 = -100.0  # errors 10× the labels' standard deviation: no model that learned does that


def format_diverged(summary: pd.DataFrame) -> str:
    """A line per regressor whose cumulative R² (final, else initial) is below -100, its root
    mean squared error over ten times the labels' standard deviation: it most likely diverged,
    as river's linear models do on features of large or mixed scale; or ''.

    >>> summary = pd.DataFrame({"stream": "trips", "segment": None, "category": "final",
    ...                         "window": "cumulative", "class": None, "metric": "r2",
    ...                         "model": ["lr", "scaled"], "value": [-1.1e29, 0.94]})
    >>> print(format_diverged(summary))  # doctest: +NORMALIZE_WHITESPACE
    trips / lr: final R² -1.1e+29 (its errors 3.3e+14 times the labels' standard deviation):
    the model most likely diverged; a river linear model does on features of large or mixed
    scale: put 'standard-scaler |' before it, or lower its learning rate
    """
    whole = whole_streams(summary)
    r2 = whole[(whole["metric"] == "r2") & (whole["window"] == "cumulative")
               & whole["category"].isin(["initial", "final"])]
    lines = []
    for (stream, model), rows in r2.groupby(["stream", "model"], sort=False):
        row = rows[rows["category"] == "final"] if "final" in set(rows["category"]) else rows
        value = float(row["value"].iloc[0])
        if value < DIVERGED_R2:
            lines.append(f"{stream} / {model}: {row['category'].iloc[0]} R² {value:.2g} (its "
                         f"errors {math.sqrt(1 - value):.2g} times the labels' standard "
                         f"deviation): the model most likely diverged; a river linear model "
                         f"does on features of large or mixed scale: put 'standard-scaler |' "
                         f"before it, or lower its learning rate")
    return "\n".join(lines)


def format_unknown_positive(summary: pd.DataFrame, streams: dict) -> str:
    """A line per stream whose `positive` option names none of the classes its labels had
    (`streams`: stream -> {"positive": its option, ...}): its precision, recall and F1 are
    then shown for no class; or ''.

    >>> summary = pd.DataFrame({"stream": "tx", "segment": None, "category": "initial",
    ...                         "window": "cumulative", "metric": "confusion",
    ...                         "class": ["ok", "ok", "fraud", "fraud"], "value": 1.0})
    >>> print(format_unknown_positive(summary, {"tx": {"positive": "frau"}}))
    ... # doctest: +NORMALIZE_WHITESPACE
    tx: the positive class 'frau' is none of its classes ('ok', 'fraud'), so no class's
    precision, recall and F1 are shown: name one of them with the stream option
    {"positive": ...}
    >>> format_unknown_positive(summary, {"tx": {"positive": "fraud"}})
    ''
    """
    whole = whole_streams(summary)
    cells = whole[whole["metric"] == "confusion"]
    lines = []
    for stream, options in streams.items():
        positive = options.get("positive")
        classes = list(dict.fromkeys(cells.loc[cells["stream"] == stream, "class"].astype(str)))
        if positive is not None and classes and str(positive) not in classes:
            lines.append(f"{stream}: the positive class {positive!r} is none of its classes "
                         f"({_some(classes)}), so no class's precision, recall and F1 are "
                         f"shown: name one of them with the stream option {{\"positive\": ...}}")
    return "\n".join(lines)


def format_foreign_predictions(summary: pd.DataFrame, backfill: bool) -> str:
    """A line per classifier none of whose initial (else final) predictions is a class its
    stream's labels have — `yes`/`no` for labels True/False, codes for names —: each is
    scored wrong, which looks like a bad model rather than a mistake; or ''.

    >>> summary = pd.DataFrame({"stream": "tx", "segment": None, "category": "initial",
    ...                         "window": "cumulative", "metric": "confusion",
    ...                         "model": ["m"] * 4 + ["nb"] * 2,
    ...                         "class": ["False", "False", "True", "True", "False", "True"],
    ...                         "predicted": ["False", "no", "True", "yes", "False", "True"],
    ...                         "value": [0.0, 30.0, 0.0, 20.0, 28.0, 19.0]})
    >>> print(format_foreign_predictions(summary, backfill=False))
    ... # doctest: +NORMALIZE_WHITESPACE
    tx / m: none of its 50 initial predictions ('no', 'yes') is a class its labels have
    ('False', 'True'), so each is scored wrong: make the model predict the labels' classes,
    written as the labels write them
    """
    whole = whole_streams(summary)
    cells = whole[(whole["metric"] == "confusion") & (whole["value"] > 0)
                  & whole["category"].isin(["initial", "final"])]
    lines = []
    for (stream, model), rows in cells.groupby(["stream", "model"], sort=False):
        category = "initial" if (rows["category"] == "initial").any() else "final"
        rows = rows[rows["category"] == category]
        labels = list(dict.fromkeys(rows["class"].astype(str)))
        predicted = list(dict.fromkeys(rows["predicted"].astype(str)))
        if set(predicted) & set(labels):
            continue
        fix = "the log's predictions must name" if backfill else "make the model predict"
        lines.append(f"{stream} / {model}: none of its {int(rows['value'].sum()):,} {category} "
                     f"predictions ({_some(predicted)}) is a class its labels have "
                     f"({_some(labels)}), so each is scored wrong: {fix} the labels' "
                     f"classes, written as the labels write them")
    return "\n".join(lines)


def _some(classes: list[str]) -> str:
    """Up to five classes, quoted.

    >>> _some(["a", "b"]), _some(list("abcdefg"))
    ("'a', 'b'", "'a', 'b', 'c', 'd', 'e', …")
    """
    return ", ".join(map(repr, classes[:5])) + (", …" if len(classes) > 5 else "")


def default_metric(reported: set[str]) -> str:
    """The measure `rank` and `trend` read when none is named: accuracy, or MAE when the runs
    report no accuracy (regression runs only).

    >>> default_metric({"accuracy", "kappa"}), default_metric({"mae", "rmse"})
    ('accuracy', 'mae')
    """
    return "accuracy" if "accuracy" in reported or "mae" not in reported else "mae"


def whole_streams(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of whole streams: without the rows of --segment slices.

    >>> frame = pd.DataFrame({"stream": "s", "segment": [None, "country=DE"], "value": [1, 2]})
    >>> whole_streams(frame)["value"].tolist()
    [1]
    """
    return frame[frame["segment"].isna()] if "segment" in frame else frame


def previous_outputs(out: str) -> list[str]:
    """The files (relative to `out`) that the run in `out` wrote, as its manifest lists them;
    none if there is no such manifest (then nothing there is ours to replace).

    >>> import json, os, tempfile
    >>> out = tempfile.mkdtemp()
    >>> previous_outputs(out)
    []
    >>> with open(os.path.join(out, "manifest.json"), "w") as f:
    ...     json.dump({"outputs": ["summary.csv", "../x", "/etc/hosts", "gs://b/x"]}, f)
    >>> previous_outputs(out)
    ['summary.csv']
    """
    outputs = (manifest_of(out) or {}).get("outputs")
    return [n for n in outputs if _in_folder(n)] if isinstance(outputs, list) else []


def manifest_of(out: str) -> dict | None:
    """The manifest in `out` (any Beam filesystem) as a dict, or None: there is none, or it is
    no JSON object (its readers say so).

    >>> import tempfile
    >>> manifest_of(tempfile.mkdtemp()) is None
    True
    """
    from apache_beam.io.filesystems import FileSystems

    try:
        with FileSystems.open(FileSystems.join(out, "manifest.json")) as f:
            manifest = json.loads(f.read())
    except Exception:  # no manifest, or not ours
        return None
    return manifest if isinstance(manifest, dict) else None


def _in_folder(name) -> bool:
    """Whether a manifest's output `name` is a file in its folder (not a path out of it)."""
    return isinstance(name, str) and bool(name) and ".." not in name.split("/") and \
        not os.path.isabs(name) and ":" not in name and "\\" not in name


# The manifest's record of each file the run wrote (`fingerprint`), by which a reader tells one
# run's files from a mix of two runs' (written into one folder at once, or a publish cut short).
FINGERPRINTS = "output_fingerprints"
FINGERPRINT_SPAN = 1 << 20  # the bytes read from each end of a larger file


def fingerprint(path: str) -> str:
    """A file's size and the CRC-32 of its bytes (of its first and last MiB, for a larger one):
    the same for a copy on any filesystem, another for another run's file.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "summary.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("run_id,value\\nr1,0.5\\n")
    >>> fingerprint(path)
    '20:a187bbce'
    >>> import zlib
    >>> data = bytes(range(256)) * (3 * 4096)  # 3 MiB: its first and last MiB are read
    >>> with open(path, "wb") as f:
    ...     _ = f.write(data)
    >>> mib = FINGERPRINT_SPAN
    >>> fingerprint(path) == f"{len(data)}:{zlib.crc32(data[:mib] + data[-mib:]):08x}"
    True
    """
    from apache_beam.io.filesystem import CompressionTypes
    from apache_beam.io.filesystems import FileSystems

    size = FileSystems.match([path])[0].metadata_list[0].size_in_bytes
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        data = f.read(min(size, 2 * FINGERPRINT_SPAN))
        if size > 2 * FINGERPRINT_SPAN:
            data = data[:FINGERPRINT_SPAN]
            f.seek(size - FINGERPRINT_SPAN)
            data += f.read(FINGERPRINT_SPAN)
    return f"{size}:{zlib.crc32(data):08x}"


def _made_by_report(name: str) -> bool:
    """Whether a run's output is the report's (`pipelines.report.write_report`)."""
    return name == "report.html" or name.startswith("figures/")


def check_one_run(out: str, names=None) -> None:
    """An InputError naming the files of `out` (of `names`; by default those the manifest
    records but the report's, which `report` makes again from the others) that are not as its
    manifest records them: files of two runs. A file that is not there is its reader's to name;
    a manifest that records none (a hand-made one) is taken as it is.

    >>> import json, os, tempfile
    >>> out = tempfile.mkdtemp()
    >>> with open(os.path.join(out, "summary.csv"), "w") as f:
    ...     _ = f.write("run_id,value\\nr1,0.5\\n")
    >>> with open(os.path.join(out, "manifest.json"), "w") as f:
    ...     json.dump({"output_fingerprints": {"summary.csv": "20:a187bbce"}}, f)
    >>> check_one_run(out)
    >>> with open(os.path.join(out, "summary.csv"), "w") as f:
    ...     _ = f.write("run_id,value\\nr2,0.7\\n")
    >>> check_one_run(out)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    transforms.errors.InputError: ...: summary.csv is not as its manifest.json records it: ...
    """
    recorded = (manifest_of(out) or {}).get(FINGERPRINTS)
    if not isinstance(recorded, dict):
        return
    changed = [n for n, mark in sorted(recorded.items())
               if (n in names if names is not None else not _made_by_report(n))
               and _in_folder(n)
               and os.path.isfile(os.path.join(out, n))
               and fingerprint(os.path.join(out, n)) != mark]
    if changed:
        one = len(changed) == 1
        raise InputError(
            f"{out}: {', '.join(changed)} {'is' if one else 'are'} not as its manifest.json "
            f"records {'it' if one else 'them'}: two runs wrote into the folder at once, or one "
            f"was stopped while moving its files in, or {'it was' if one else 'they were'} "
            f"changed since; run again what wrote the folder")


def unlisted_files(out: str, names) -> list[str]:
    """Those of `names` (paths relative to `out`) that are files in `out` which no run's
    manifest there lists: a user's own, which writing ours would replace.

    >>> import os, tempfile
    >>> out = tempfile.mkdtemp()
    >>> open(os.path.join(out, "summary.csv"), "w").close()
    >>> unlisted_files(out, ["summary.csv", "curves.parquet"])
    ['summary.csv']
    """
    from apache_beam.io.filesystems import FileSystems

    listed = set(previous_outputs(out))
    return [n for n in names if n not in listed and FileSystems.exists(FileSystems.join(out, n))]


def refuse_unlisted(out: str, names) -> None:
    """An OutputError naming the files of `names` in `out` that no run wrote (`unlisted_files`),
    if any: nothing of the user's is replaced."""
    theirs = unlisted_files(out, names)
    if theirs:
        them = "it" if len(theirs) == 1 else "them"
        raise OutputError(f"--out {out}: {', '.join(theirs)} there, which no run's manifest.json "
                          f"lists, would be replaced; choose another --out, or move {them} away")


def record_outputs(out: str, names, claim: bool = False) -> None:
    """Add `names`, files in `out`, to its manifest's outputs (one is made if there is none),
    each with its fingerprint — or, to `claim` them before they are written, with none that a
    file has: until they are recorded, a reader is told the folder is being written, and a
    rerun may replace them. The manifest is replaced in one rename.

    Example
    -------

    >>> import json, os, tempfile
    >>> out = tempfile.mkdtemp()
    >>> with open(os.path.join(out, "manifest.json"), "w") as f:
    ...     json.dump({"outputs": ["summary.csv"]}, f)
    >>> record_outputs(out, ["report.html"], claim=True)
    >>> manifest = json.load(open(os.path.join(out, "manifest.json")))
    >>> manifest["outputs"], manifest["output_fingerprints"]
    (['report.html', 'summary.csv'], {'report.html': ''})
    >>> with open(os.path.join(out, "report.html"), "w") as f:
    ...     _ = f.write("<html></html>")
    >>> record_outputs(out, ["report.html"])
    >>> json.load(open(os.path.join(out, "manifest.json")))["output_fingerprints"]
    {'report.html': '13:601b871f'}

    """
    from apache_beam.io.filesystems import FileSystems

    manifest = manifest_of(out) or {}
    outputs = manifest.get("outputs")
    manifest["outputs"] = sorted(set(outputs if isinstance(outputs, list) else []) | set(names))
    marks = manifest.get(FINGERPRINTS)
    marks = dict(marks) if isinstance(marks, dict) else {}
    marks.update({n: "" if claim else fingerprint(FileSystems.join(out, n))
                  for n in names if n != "manifest.json"})  # (which cannot record itself)
    manifest[FINGERPRINTS] = dict(sorted(marks.items()))
    path = FileSystems.join(out, "manifest.json")
    written = FileSystems.join(out, f".manifest-{uuid.uuid4().hex}.json")
    with FileSystems.create(written) as f:
        f.write(json_text(manifest).encode())
    FileSystems.rename([written], [path])


def positive_class(classes: list[str], label_counts: list[int], option=None,
                   declared: list | None = None) -> str | None:
    """The positive class of a binary task, as the summary names classes (text): the one the
    stream names (`metrics.classification.named_positive_class`), else the rarer class among
    the labels (ties: the second). None unless there are two classes.

    >>> positive_class(["ok", "fraud"], [990, 10]), positive_class(["1", "0"], [10, 990])
    ('fraud', '1')
    >>> positive_class(["a", "b"], [5, 5], declared=["b", "a"])
    'a'
    """
    if len(classes) != 2:
        return None
    named = named_positive_class(classes, option, declared)
    if named is not None:
        return str(named)
    return classes[0] if label_counts[0] < label_counts[1] else classes[1]


def positive_class_rows(summary: pd.DataFrame, streams: dict) -> pd.DataFrame:
    """Each binary classifier's per-class rows of its positive class (`positive_class`, from
    the cumulative initial confusion matrix's classes and label counts).

    >>> cells = [("ok", "ok", 90), ("ok", "fraud", 5), ("fraud", "ok", 3), ("fraud", "fraud", 2)]
    >>> summary = pd.DataFrame(
    ...     [{"stream": "s", "model": "m", "category": "initial", "window": "cumulative",
    ...       "metric": "confusion", "class": t, "predicted": p, "value": v} for t, p, v in cells]
    ...     + [{"stream": "s", "model": "m", "category": "initial", "window": "cumulative",
    ...         "metric": "recall", "class": c, "value": r}
    ...        for c, r in (("ok", 0.9), ("fraud", 0.4))])
    >>> positive_class_rows(summary, {})[["class", "metric", "value"]].values.tolist()
    [['fraud', 'recall', 0.4]]
    """
    cells = summary[(summary["metric"] == "confusion") & (summary["category"] == "initial")
                    & (summary["window"] == "cumulative")]
    keep = []
    for (stream, model), part in cells.groupby(["stream", "model"], sort=False):
        classes = list(dict.fromkeys(part["class"]))
        counts = [part.loc[part["class"] == c, "value"].sum() for c in classes]
        options = streams.get(stream, {})
        positive = positive_class(classes, counts, options.get("positive"),
                                  options.get("declared"))
        if positive is not None:
            keep.append((stream, model, positive))
    if not keep:
        return summary.iloc[:0]
    wanted = pd.DataFrame(keep, columns=["stream", "model", "class"])
    rows = summary[summary["metric"].isin(POSITIVE_CLASS_METRICS)]
    return rows.merge(wanted, on=["stream", "model", "class"])


def summary_table(summary: pd.DataFrame, streams: dict | None = None) -> pd.DataFrame:
    """Rows: stream × measure, streams in run order; columns: models, in run order (Table II of
    Grzenda et al. 2020).

    Measures per metric: initial, the middle bin Λ(T, B/2), final and Ψα for each α; for a
    binary task also precision, recall, F1 and (with class probabilities) the average
    precision of its positive class (`positive_class`; `streams`: stream -> {"positive": its
    option, "declared": its declared classes}), and ROC-AUC. A measure that scored nothing
    for any model (`n` 0: a log without final predictions) is left out.

    Example
    -------

    >>> summary = pd.DataFrame({"stream": "s", "model": ["nb", "nb", "ht", "ht"],
    ...                         "category": ["initial", "final"] * 2, "bin": None, "alpha": None,
    ...                         "metric": "accuracy", "value": [0.7, 0.8, 0.75, 0.9]})
    >>> summary_table(summary)  # doctest: +NORMALIZE_WHITESPACE
    model                      nb    ht
    stream measure
    s      initial accuracy   0.7  0.75
           final accuracy     0.8  0.90

    """
    summary = whole_streams(summary)
    folds = [model_and_fold(m)[1] is not None for m in summary["model"]]
    if any(folds):  # --cv: the means over the folds (each fold's rows are in summary.csv)
        summary = summary[[not f for f in folds]]
    df = summary[summary["metric"].isin(TABLE_METRICS)]
    if "class" in summary:  # of the per-class rows, the positive class's
        df = pd.concat([df[df["class"].isna()], positive_class_rows(summary, streams or {})])
    df = df.copy()
    if df.empty:
        return pd.DataFrame()
    binned = df["category"] == "binned"
    if binned.any():
        middle = (int(df.loc[binned, "bin"].max()) - 1) // 2 or 1
        df = df[~binned | (df["bin"] == middle)]
    if "n" in df:
        scored = df.groupby(["stream", "category", "bin", "alpha", "metric"], dropna=False)[
            "n"].transform(lambda n: (n.fillna(0) > 0).any())
        df = df[scored.astype(bool)]

    def label(r):
        if r.category == "binned":
            return f"bin {int(r.bin)}"
        if r.category == "intermediate":
            return f"Ψ{r.alpha:g}"
        return r.category

    classes = df["class"] if "class" in df else [None] * len(df)
    df["measure"] = [f"{label(r)} {r.metric}" + (f" ({c})" if isinstance(c, str) else "")
                     for r, c in zip(df.itertuples(), classes)]
    order = {"initial": 0, "binned": 1, "final": 2, "intermediate": 3}
    df["_m"] = df["metric"].map({m: i for i, m in enumerate(TABLE_METRICS)})
    df["_c"] = df["category"].map(order).fillna(4)
    df["_s"] = df["stream"].map({s: i for i, s in enumerate(dict.fromkeys(summary["stream"]))})
    df = df.sort_values(["_s", "_m", "_c", "alpha"], na_position="first")
    models = list(dict.fromkeys(df["model"]))
    table = df.pivot_table(index=["stream", "measure"], columns="model", values="value",
                           sort=False, dropna=False, aggfunc="first")
    return table[models]


def segment_table(summary: pd.DataFrame, streams: dict | None = None) -> pd.DataFrame:
    """One row per --segment slice and model: its scored labels, the initial and final
    accuracy (a regressor: MAE) with its Wilson 95 % interval, and for a binary task the
    initial precision and recall of the positive class (`positive_class`, from the whole
    stream) with theirs. Empty without slices.

    Example
    -------

    >>> rows = [("initial", "accuracy", None, 0.8, 50), ("initial", "accuracy_wilson_low",
    ...          None, 0.67, 50), ("initial", "accuracy_wilson_high", None, 0.89, 50)]
    >>> summary = pd.DataFrame([{"stream": "s", "segment": "country=DE", "model": "nb",
    ...     "window": "cumulative", "category": c, "metric": m, "class": k, "value": v, "n": n}
    ...     for c, m, k, v, n in rows])
    >>> print(segment_table(summary).to_string(index=False))
    stream    segment model  scored labels     initial accuracy
         s country=DE    nb             50 0.800 [0.670, 0.890]
    """
    whole = whole_streams(summary)
    sliced = summary.drop(whole.index)
    sliced = sliced[(sliced["window"] == "cumulative")
                    & sliced["category"].isin(["initial", "final"])]
    positive = positive_class_rows(whole, streams or {})
    positives = {(s, m): c for s, m, c in zip(positive["stream"], positive["model"],
                                               positive["class"])}
    records = []
    for (stream, segment, model), part in sliced.groupby(["stream", "segment", "model"],
                                                         sort=False):
        def measure(category, metric, label_class=None, part=part):
            mine = part[(part["category"] == category) & (part["metric"] == metric)
                        & (part["class"].isna() if label_class is None
                           else part["class"] == label_class)]
            return (float(mine["value"].iloc[0]), int(mine["n"].iloc[0])) if len(mine) \
                else (math.nan, 0)

        primary = "accuracy" if measure("initial", "accuracy")[1] or \
            not measure("initial", "mae")[1] else "mae"
        record = {"stream": stream, "segment": segment, "model": model,
                  "scored labels": measure("initial", primary)[1]}
        wanted = [(c, primary, None) for c in ("initial", "final")]
        if primary == "accuracy" and (stream, model) in positives:
            wanted += [("initial", m, positives[stream, model]) for m in ("precision", "recall")]
        for category, metric, label_class in wanted:
            value = measure(category, metric, label_class)[0]
            if math.isnan(value):
                continue
            low, high = (measure(category, f"{metric}_wilson_{end}", label_class)[0]
                         for end in ("low", "high"))
            name = f"{category} {metric}" + (f" ({label_class})" if label_class else "")
            record[name] = f"{value:.3f}" + ("" if math.isnan(low) else
                                             f" [{low:.3f}, {high:.3f}]")
        records.append(record)
    return pd.DataFrame(records)


def format_value(value: float) -> str:
    """A measure as tables show it: four decimals, or scientific notation from a billion on
    (a diverged regressor's MAE).

    >>> format_value(0.71234), format_value(4.02e16)
    ('0.7123', '4.0200e+16')
    """
    return f"{value:.4f}" if abs(value) < 1e9 else f"{value:.4e}"


def format_table(summary: pd.DataFrame, streams: dict | None = None) -> str:
    """The summary as the terminal prints it: `summary_table` with four decimals (a value of a
    billion or more in scientific notation, as a diverged regressor's MAE).

    Example
    -------

    >>> summary = pd.DataFrame({"stream": "s", "model": "nb", "category": ["initial", "final"],
    ...                         "bin": None, "alpha": None, "metric": "accuracy",
    ...                         "value": [0.7, 0.8]})
    >>> print(format_table(summary))  # doctest: +NORMALIZE_WHITESPACE
    model                         nb
    stream measure
    s      initial accuracy   0.7000
           final accuracy     0.8000
    >>> print(format_table(summary.assign(metric="mae", value=[4.02e16, 21.1])))
    ... # doctest: +NORMALIZE_WHITESPACE
    model                   nb
    stream measure
    s      initial mae  4.0200e+16
           final mae    2.1100e+01

    """
    table = summary_table(summary, streams)
    if table.empty:
        return "(no results)"
    return table.to_string(float_format=format_value)


def format_profiles(profiles: dict) -> str:
    """One line per classification stream: its temporal-dependence profile (Žliobaitė et al.
    2015).

    Example
    -------

    >>> print(format_profiles({"s": {"labels": 100, "p_majority": 0.5, "p_same": 0.9,
    ...                               "repeats_by_chance": 1e-15}}))
    ... # doctest: +ELLIPSIS
    s: P(M) = 0.5000, P(T) = 0.9000 over 100 labels; temporal dependence: Persistent beats ...

    """
    lines = []
    for stream, p in profiles.items():
        if not p.get("labels"):
            continue
        chance = p.get("repeats_by_chance", math.nan)  # (a profile of an older run: none)
        fewer = p.get("fewer_repeats_by_chance", math.nan)
        beyond = chance < REPEATS_LEVEL  # False for NaN (one class)
        if p["p_same"] > p["p_majority"]:
            verdict = ("temporal dependence: Persistent beats Majority, read κ_per next to κ"
                       if beyond or math.isnan(chance) else
                       f"Persistent beats Majority, but independent labels repeat this often "
                       f"with probability {chance:.2g}: no sign of temporal dependence")
        elif beyond:
            verdict = (f"labels repeat more often than independent ones would (probability "
                       f"{chance:.2g}), but Persistent does not beat Majority")
        elif fewer < REPEATS_LEVEL:
            verdict = (f"labels repeat less often than independent ones would (probability "
                       f"{fewer:.2g}): they alternate, and Persistent does not beat Majority")
        else:
            verdict = "no sign of temporal dependence"
        lines.append(f"{stream}: P(M) = {p['p_majority']:.4f}, P(T) = {p['p_same']:.4f} "
                     f"over {p['labels']} labels; {verdict}")
    return "\n".join(lines)


def where_and_why(dead_letter: dict) -> str:
    """A dead letter's place and reason, as one line names it.

    >>> where_and_why({"stream": "s", "file": "l.csv", "row": 2, "field": "time",
    ...                "reason": "label at 18 is earlier than its instance at 20"})
    'l.csv, row 2, field time: label at 18 is earlier than its instance at 20'
    >>> where_and_why({"stream": "s", "file": None, "row": None, "field": None, "reason": "x"})
    's: x'
    """
    place = [dead_letter.get("file") or dead_letter["stream"]]
    for name in ("row", "field"):
        if dead_letter.get(name) is not None:
            place.append(f"{name} {dead_letter[name]}")
    return f"{', '.join(map(str, place))}: {dead_letter['reason']}"


def format_set_aside(dead: list[dict], path: str, keys=(), backfill: bool = False) -> str:
    """Per stream, what no score shows: its dead letters (`dead`: how many, where they are
    written, the first) and, for a run, the instances whose label never came; "" when there
    are none. A backfill's prediction log has its own line (its dead letters have no stream).

    Example
    -------

    >>> letter = {"stream": "s", "file": "l.csv", "row": 2, "field": "time",
    ...           "reason": "label at 18 is earlier than its instance at 20"}
    >>> print(format_set_aside([letter] * 2, "out/dead_letters.jsonl",
    ...                        [(("s", "nb"), {"instances": 4, "pending": 2})]))
    ... # doctest: +NORMALIZE_WHITESPACE
    s: 2 dead letters in out/dead_letters.jsonl, the first l.csv, row 2, field time: label at
    18 is earlier than its instance at 20; 2 of 4 instances still wait for their label at the
    end of the input (not scored)
    """
    pending = {} if backfill else {  # (the job's raw counts: `pending` at the end)
        stream: (c.get("pending", 0), c.get("instances", 0))
        for (stream, _), c in keys if c.get("pending")}
    lines = []
    for stream in dict.fromkeys([*(d["stream"] for d in dead), *pending]):
        mine = [d for d in dead if d["stream"] == stream]
        parts = [f"{len(mine):,} dead letter{'s' * (len(mine) != 1)} in {path}, the first "
                 f"{where_and_why(mine[0])}"] if mine else []
        if stream in pending:
            waiting, instances = pending[stream]
            parts.append(f"{waiting:,} of {instances:,} instances still wait for their label "
                         f"at the end of the input (not scored)")
        lines.append(f"{'prediction log' if stream is None else stream}: " + "; ".join(parts))
    return "\n".join(lines)


def format_log_notices(keys) -> str:
    """One line per (stream, model) of a backfill whose log has predictions timed outside
    their instance's latency period, which no output shows otherwise (often a log kept by
    another clock than the stream), with every reason a prediction found no instance (the
    manifest's `unmatched_*` counts), or none made in --from/--to (a model version deployed
    before or after the range), or none in the partitions read (one retired before it), one
    for its predictions that repeat an instance's initial or final one, and one for those
    whose class probabilities do not sum to 1; "" when there are none such.

    Example
    -------

    >>> print(format_log_notices([(("s", "v3"), {
    ...     "logged_predictions": 10, "unmatched_predictions": 3, "unmatched_outside_range": 0,
    ...     "unmatched_no_instance": 1, "unmatched_before_arrival": 2,
    ...     "unmatched_after_label": 0, "unmatched_unreadable_time": 0})]))
    ... # doctest: +ELLIPSIS
    s / v3: 3 of 10 logged predictions belong to no labelled instance: 2 made before their
    instance arrived, 1 naming no instance that had arrived (it waits for its label, was set
    aside, or the id is unknown)

    """
    lines = []
    for (stream, model), c in keys:
        if c.get("logged_predictions") == 0:  # (its predictions lie in partitions before --from)
            lines.append(f"{stream} / {model}: no logged prediction in the log's files from "
                         f"--from on: nothing of it to score")
        elif c.get("logged_predictions") and \
                c.get("unmatched_outside_range") == c["logged_predictions"]:
            lines.append(f"{stream} / {model}: none of its {c['logged_predictions']:,} logged "
                         f"predictions was made for an instance arriving in --from/--to: "
                         f"nothing of it to score")
        elif c.get("unmatched_before_arrival") or c.get("unmatched_after_label") or \
                c.get("unmatched_unreadable_time"):
            lines.append(f"{stream} / {model}: {c['unmatched_predictions']:,} of "
                         f"{c['logged_predictions']:,} logged predictions belong to no "
                         f"labelled instance: {unmatched_reasons(c)}")
        if c.get("repeated_predictions"):
            lines.append(f"{stream} / {model}: {c['repeated_predictions']:,} of "
                         f"{c['logged_predictions']:,} logged predictions repeat their "
                         f"instance's initial or final prediction (logged twice?): the first "
                         f"initial and the last final one count")
        if c.get("probabilities_not_summing_to_1"):
            lines.append(f"{stream} / {model}: the class probabilities of "
                         f"{c['probabilities_not_summing_to_1']:,} scored initial and final "
                         f"predictions do not sum to 1 (scores, one-vs-rest probabilities, or "
                         f"classes left out?): log-loss, Brier and calibration take them as "
                         f"given")
    return "\n".join(lines)


def format_delay_changes(recorded: dict, configured: dict) -> str:
    """One line per stream whose label delay (as the protocol names it) differs from the one
    `recorded` in the log by the run that wrote it: its logged predictions are then matched
    to other label times than the run's (final predictions fall after the label, the
    re-predictions into other bins), which the matching counts show only as numbers; "" when
    there are none such.

    >>> print(format_delay_changes({"sea": "100"}, {"sea": "0"}))
    sea: the run that wrote the prediction log had delay=100, this backfill delay=0: its
    predictions are matched to other label times than the run's; give --delay 100 to score them
    as the run did

    """
    lines = []
    for stream, delay in configured.items():
        was = recorded.get(stream)
        if was is None or was == delay:
            continue
        advice = "give the stream with the label times the run read" if was == "input" else \
            f"give --delay {was}"
        lines.append(f"{stream}: the run that wrote the prediction log had delay={was}, this "
                     f"backfill delay={delay}: its predictions are matched to other label times "
                     f"than the run's; {advice} to score them as the run did")
    return "\n".join(lines)


def format_set_asides_of_run(recorded: dict) -> str:
    """One line per (stream, model) of a backfill whose instances the run that wrote the log
    set aside because the model failed on them, and the backfill could not set aside again
    (`recorded`: {stream: {model: instances}}, the manifest's `set_aside_by_the_logs_run`): its
    log holds what the model predicted before it failed, which the backfill scores, so that
    model's numbers differ from the run's; "" when there are none such.

    >>> print(format_set_asides_of_run({"sea": {"nb": 3}}))
    sea / nb: the run that wrote the prediction log set aside 3 instances nb failed on
    (--on-model-error dead-letter) that the backfill cannot set aside again (the log does not
    record which, or the stream read here is not the run's): it scores what nb predicted before
    it failed, so its numbers differ from the run's (docs/backfill.md)
    """
    lines = []
    for stream, per_model in sorted(recorded.items()):
        for model, n in sorted(per_model.items() if isinstance(per_model, dict) else []):
            if n:
                lines.append(f"{stream} / {model}: the run that wrote the prediction log set "
                             f"aside {n:,} instance{'s' if n != 1 else ''} {model} failed on "
                             f"(--on-model-error dead-letter) that the backfill cannot set "
                             f"aside again (the log does not record which, or the stream read "
                             f"here is not the run's): it scores what {model} predicted before "
                             f"it failed, so its numbers differ from the run's (docs/backfill.md)")
    return "\n".join(lines)


def format_unpredicted(counts: list[dict]) -> str:
    """One line per (stream, model) of the manifest's `counts` that labelled instances but
    scored none of them: each prediction it made (or logged) was none — None, NaN, {} or an
    empty log cell —, which its column of NaN in the table does not say; "" when there are
    none such.

    Example
    -------

    >>> print(format_unpredicted([
    ...     {"stream": "s", "model": "silent", "labelled": 200, "scored_initial": 0,
    ...      "scored_final": 0},
    ...     {"stream": "s", "model": "nb", "labelled": 200, "scored_initial": 198,
    ...      "scored_final": 200}]))  # doctest: +NORMALIZE_WHITESPACE
    s / silent: no prediction to score: each of its predictions of the 200 labelled instances
    was none (None, NaN or {}; in a log, empty)

    """
    return "\n".join(
        f"{c['stream']} / {c['model']}: no prediction to score: each of its predictions of the "
        f"{c['labelled']:,} labelled instances was none (None, NaN or {{}}; in a log, empty)"
        for c in counts
        if c.get("labelled") and not c.get("scored_initial") and not c.get("scored_final"))


def format_unrepredicted(counts: list[dict], repredict: str) -> str:
    """One line per stream of a run with re-evaluation on whose labelled instances none was
    re-predicted while it waited (a label comes before the policy's first re-prediction: K ≥
    the labels that arrive while an instance waits): its binned measures and Ψα only repeat
    the initial ones; "" otherwise.

    Example
    -------

    >>> print(format_unrepredicted([{"stream": "s", "model": "nb", "labelled": 200,
    ...                              "repredicted": 0}], "every_k_labels:10"))
    ... # doctest: +NORMALIZE_WHITESPACE
    s: no instance was re-predicted while it waited for its label (--repredict
    every_k_labels:10: each label came first), so its binned measures and Ψα repeat the
    initial ones; re-predict more often than labels arrive during a wait (a smaller K), or
    at bin_boundaries
    """
    streams = {}
    for c in counts:
        if c.get("labelled", 0) > 1:
            streams[c["stream"]] = streams.get(c["stream"], 0) + c.get("repredicted", 0)
    return "\n".join(
        f"{stream}: no instance was re-predicted while it waited for its label (--repredict "
        f"{repredict}: each label came first), so its binned measures and Ψα repeat the "
        f"initial ones; re-predict more often than labels arrive during a wait (a smaller K), "
        f"or at bin_boundaries"
        for stream, repredicted in streams.items() if not repredicted)


# Why a logged prediction belongs to no labelled instance, by the manifest's `unmatched_*` count.
UNMATCHED_WHYS = {
    "before_arrival": "made before their instance arrived",
    "after_label": "after its label (do the log and the stream keep the same clock?)",
    "unreadable_time": "with no readable time (seconds, or an ISO datetime)",
    "no_instance": "naming no instance that had arrived (it waits for its label, was set "
                   "aside, or the id is unknown)",
    "outside_range": "made outside --from/--to"}


def unmatched_reasons(counts: dict) -> str:
    """The manifest's `unmatched_*` counts of one (stream, model) in words.

    >>> unmatched_reasons({"unmatched_before_arrival": 2, "unmatched_after_label": 0})
    '2 made before their instance arrived'
    """
    return ", ".join(f"{counts[f'unmatched_{k}']:,} {why}" for k, why in UNMATCHED_WHYS.items()
                     if counts.get(f"unmatched_{k}"))


DELAY = "detection delay (instances)"
FALSE_ALARMS = "false alarms"
FADING_COLUMN = "fading 1 − α"


def drift_delay_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Detection delays of known drifts (Table 2 of Gama et al. 2009): a row per (stream,
    model, drift, Page-Hinkley fading factor, as 1 − α; 0 = no fading) with the detection
    delay in instances ("missed" when no alarm detected it) and the false alarms before the
    next drift. Empty when no stream has known drift points.

    >>> rows = pd.DataFrame({"stream": "s", "model": "nb", "category": "drift",
    ...     "window": ["cumulative"] * 2 + ["fading=0.999"] * 2,
    ...     "metric": ["drift_1_delay", "drift_1_false_alarms"] * 2, "value": [120.0, 0, 80.0, 2]})
    >>> print(drift_delay_table(rows).to_string(index=False))
    stream model  drift fading 1 − α  detection delay (instances)  false alarms
         s    nb      1        0.001                           80             2
         s    nb      1            0                          120             0
    """
    rows = summary[summary["category"] == "drift"]
    delays = rows[rows["metric"].str.match(r"drift_\d+_delay")]
    if delays.empty:
        return pd.DataFrame()

    def one_minus_alpha(window: str) -> str:
        return "0" if window == "cumulative" else f"{1 - float(window.split('=')[1]):g}"

    false = {(r.stream, r.model, r.window, r.metric): int(r.value) for r in rows.itertuples()
             if r.metric.endswith("_false_alarms")}
    table = []
    for r in delays.itertuples():
        k = int(r.metric.split("_")[1])
        table.append({"stream": r.stream, "model": r.model, "drift": k,
                      FADING_COLUMN: one_minus_alpha(r.window),
                      DELAY: "missed" if r.value != r.value else int(r.value),
                      FALSE_ALARMS: false[(r.stream, r.model, r.window,
                                           f"drift_{k}_false_alarms")]})
    order = {(s, m): i for i, (s, m) in enumerate(dict.fromkeys(
        (t["stream"], t["model"]) for t in table))}
    table.sort(key=lambda t: (order[t["stream"], t["model"]], t["drift"],
                              -float(t[FADING_COLUMN])))
    return pd.DataFrame(table)
