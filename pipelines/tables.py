"""The tables the terminal and the report show: the summary in the layout of Table II
(Grzenda et al. 2020), the slices, the comparisons, Page-Hinkley's detection delays, the
models' costs and the streams' temporal dependence."""

from __future__ import annotations

import math

import pandas as pd

from metrics.classification import named_positive_class
from metrics.temporal import REPEATS_LEVEL
from pipelines.results import whole_streams
from transforms.replay.protocols import model_and_fold
from transforms.vocabulary import pair_name

TABLE_METRICS = ("accuracy", "precision", "recall", "f1", "roc_auc", "average_precision",
                 "kappa", "kappa_m", "kappa_t", "kappa_plus", "mae", "rmse", "r2")
# Of the per-class measures, the table shows a binary task's positive class's.
POSITIVE_CLASS_METRICS = ("precision", "recall", "f1", "average_precision")

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
    # dropna=False keeps a measure no model could compute, but also pairs every stream with
    # every other stream's measures (another positive class): keep each stream's own.
    own = pd.MultiIndex.from_frame(df[["stream", "measure"]].drop_duplicates())
    return table.reindex(own)[models]


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
                       f"with probability {chance:.2g}, not below {REPEATS_LEVEL:g}: not shown "
                       f"to be temporal dependence")
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


RESOURCES_CAPTION = ("Resources (--resources): per model, the CPU seconds its thread spent "
                     "learning and predicting (re-predictions included), its size at the end "
                     "and MOA's RAM-hours (GiB × hours of CPU time); they vary from run to run")
RESOURCE_COLUMNS = {"learn_cpu_seconds": "learn CPU s", "predict_cpu_seconds": "predict CPU s",
                    "model_bytes": "size (KiB)", "ram_hours": "RAM-hours"}


def resources_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Each model's cost per stream (`--resources`, as MOA's evaluators report it): CPU
    seconds learning and predicting, size in KiB at the end, RAM-hours. Empty without
    --resources.

    >>> rows = pd.DataFrame({"stream": "s", "model": "nb", "category": "resources",
    ...     "metric": ["learn_cpu_seconds", "predict_cpu_seconds", "model_bytes", "ram_hours"],
    ...     "value": [0.105, 1.336, 62560.0, 2.3e-08]})
    >>> print(resources_table(rows).to_string(index=False))
    stream model  learn CPU s  predict CPU s  size (KiB)  RAM-hours
         s    nb        0.105          1.336        61.1    2.3e-08
    """
    rows = whole_streams(summary)
    rows = rows[rows["category"] == "resources"]
    if rows.empty:
        return pd.DataFrame()
    table = rows.pivot_table(index=["stream", "model"], columns="metric", values="value",
                             sort=False, aggfunc="first").reindex(columns=list(RESOURCE_COLUMNS))
    table["model_bytes"] = table["model_bytes"] / 1024
    table = table.rename(columns=RESOURCE_COLUMNS).reset_index()
    table.columns.name = None
    for column, digits in (("learn CPU s", "{:.3f}"), ("predict CPU s", "{:.3f}"),
                           ("size (KiB)", "{:.1f}"), ("RAM-hours", "{:.2g}")):
        table[column] = [digits.format(v) if v == v else "" for v in table[column]]
    return table
