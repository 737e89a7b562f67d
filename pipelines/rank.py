"""`delayed-eval rank DIR...`: models compared over the streams of finished runs (Demšar 2006):
average ranks of one measure, the Friedman test, Nemenyi's critical difference and its diagram,
and for two models the Wilcoxon signed-rank test."""

from __future__ import annotations

import contextlib
import json
import os

import numpy as np
import pandas as pd
from scipy import stats

from metrics.ranking import LOWER_IS_BETTER, cliques, critical_difference, friedman, ranks
from pipelines.files import folder_here, local_copy
from pipelines.results import (MEASURE_NAME, default_metric, json_text, load_results, made_folder,
                               not_a_folder, read_manifest, whole_streams)
from pipelines.tables import format_value
from transforms.errors import ConfigError, listed_briefly
from transforms.replay.protocols import model_and_fold



def _summary(d: str) -> pd.DataFrame:
    if os.path.isdir(d):
        try:
            return whole_streams(load_results(d))
        except FileNotFoundError:
            what = "no summary.csv"
    else:
        what = not_a_folder(d)
    raise ConfigError(f"{d}: {what}; give the output folders of finished runs")


def _manifest(d: str) -> dict | None:
    """The manifest of the run in folder `d` (None: a summary alone, written by hand)."""
    try:
        return read_manifest(d)
    except FileNotFoundError:
        return None


def _check_once(d: str, manifest: dict | None, runs: dict) -> None:
    """A ConfigError when the run in folder `d` was given already (`runs`: the run's id and
    start, or a folder's real path where it has no manifest -> folder, added to), by another
    path or as a copy: its streams would count twice in the tests."""
    run = (manifest.get("run_id"), manifest.get("started")) if manifest is not None else \
        os.path.realpath(d)
    if run in runs:
        if runs[run] == d:
            raise ConfigError(f"{d} is given twice; give each run once")
        raise ConfigError(f"{runs[run]} and {d} hold the same run" + (
            f" (run_id {run[0]}, started {run[1]})" if isinstance(run, tuple) else "") +
            ": its streams would count twice; give each run once")
    runs[run] = d


# What makes one run's stream the same as another run's: the manifest's record of the stream
# (its source and options, delay, order, classes, the events read, the files' fingerprint)
# and the run's options that choose or split its events. A file's path and its label table's
# are left out: its fingerprint tells the same input wherever it was copied.
_SAME_STREAM = ("spec", "delay", "ordering", "seed", "declared_classes", "read", "input")
_SAME_RUN_OPTIONS = ("start", "end", "holdout", "cv")


def same_input(manifest: dict | None, stream: str) -> str | None:
    """What `stream` of the run whose manifest is `manifest` evaluated, as text equal for the
    same stream in another run (None: not known, a summary without its manifest or a file
    whose fingerprint it lacks, never the same as another).

    >>> manifest = {"config": {"start": None}, "streams": {"s": {
    ...     "spec": {"source": "runs/a/s.csv", "options": {"labels": "runs/a/l.csv"}},
    ...     "delay": "10", "input": {"files": 2, "bytes": 90, "crc": "0a1b2c3d"}}}}
    >>> moved = {"config": {"start": None}, "streams": {"s": {
    ...     "spec": {"source": "copy/s.csv", "options": {"labels": "copy/l.csv"}},
    ...     "delay": "10", "input": {"files": 2, "bytes": 90, "crc": "0a1b2c3d"}}}}
    >>> same_input(manifest, "s") == same_input(moved, "s")
    True
    >>> moved["streams"]["s"]["delay"] = "20"
    >>> same_input(manifest, "s") == same_input(moved, "s")
    False
    """
    entry = (manifest or {}).get("streams", {}).get(stream)
    if entry is None:
        return None
    entry = {k: entry.get(k) for k in _SAME_STREAM}
    # (a count a later version added is 0 where an earlier one had none)
    entry["read"] = {k: v for k, v in (entry["read"] or {}).items() if v}
    spec = dict(entry["spec"] or {})
    if not str(spec.get("source", "")).startswith(("synth:", "dataset:")):
        if entry["input"] is None:
            return None
        spec.pop("source", None)
        spec["options"] = {k: v for k, v in (spec.get("options") or {}).items()
                           if k != "labels"}
    config = manifest.get("config") or {}
    return json.dumps({**entry, "spec": spec, **{k: config.get(k) for k in _SAME_RUN_OPTIONS}},
                      sort_keys=True, default=str)


@contextlib.contextmanager
def _here(dirs: list[str]):
    """`dirs`, each folder on another filesystem (gs://, s3://) replaced by a temporary copy
    here of the files a ranking reads (`files.local_copy`)."""
    with contextlib.ExitStack() as copies:
        yield [copies.enter_context(local_copy(d, ["summary.csv", "manifest.json"]))
               if "://" in d else d for d in dirs]


def measure_table(dirs: list[str], metric: str = "accuracy", category: str = "initial",
                  window: str = "cumulative", psi: float | None = None) -> pd.DataFrame:
    """Streams × models: one measure's end-of-stream value in each run's summary (every run's
    streams; a stream that runs evaluated on the same input counts once, on others once per
    run, named `DIR:stream`; a model that two runs evaluated on one stream is one model per
    run, `DIR:model`; a `--cv` run's models by their mean over the folds); for the
    `intermediate` category, Ψα with α = `psi`.

    Example
    -------

    >>> import tempfile
    >>> from pipelines import evaluate
    >>> out = tempfile.mkdtemp()
    >>> _ = evaluate(['a=synth:SEA{"n": 300, "seed": 1}', 'b=synth:SEA{"n": 300, "seed": 2}'],
    ...              ["majority", "no-change"], delay="10", out=out, repredict="none")
    >>> measure_table([out]).shape
    (2, 2)
    """
    with _here(dirs) as here:
        return _measure_table(here, dirs, metric, category, window, psi)


def _measure_table(dirs: list[str], names: list[str], metric: str | None, category: str,
                   window: str, psi: float | None) -> pd.DataFrame:
    """`measure_table` of `dirs`, read here, each named in the table as in `names`; the
    measure `metric`, else `default_metric`'s of the runs (`attrs["metric"]`). Each summary
    is read once."""
    views, reported, windows, metrics, runs, manifests = [], set(), set(), set(), {}, {}
    for d, name in zip(dirs, names):
        summary = _summary(d)
        manifests[name] = _manifest(d)
        _check_once(d, manifests[name], runs)
        if "predicted" not in summary:  # (a summary of no confusion cell: a regressor's)
            summary = summary.assign(predicted=None)
        viewed = summary[(summary["category"] == category) & (summary["window"] == window)]
        views.append(viewed)
        reported |= set(viewed["metric"].unique())
        windows |= set(summary["window"].dropna().unique())
        metrics |= set(summary["metric"].unique())
    metric = metric or default_metric(metrics)
    metric, label_class = _metric_and_class(full := metric)
    parts, classes = [], {}
    for d, viewed in zip(dirs, views):
        named = viewed[(viewed["metric"] == metric) & viewed["class"].notna()
                       & viewed["predicted"].isna()]  # (not a confusion matrix's cells)
        classes.update(dict.fromkeys(named["class"]))
        rows = viewed[(viewed["metric"] == metric) & viewed["bin"].isna()
                      & viewed["predicted"].isna()
                      & (viewed["class"].isna() if label_class is None
                         else viewed["class"] == label_class)]
        rows = rows[[model_and_fold(m)[1] is None for m in rows["model"]]]
        if psi is not None and not rows.empty:
            alphas = sorted(set(rows["alpha"].dropna()))
            if psi not in alphas:
                raise ConfigError(f"--psi {psi:g}: {d} has " + (
                    f"{category} {metric} for α in {', '.join(f'{a:g}' for a in alphas)}, not "
                    f"{psi:g}; choose one of them" if alphas else
                    f"no Ψα of {category} {metric}; --psi goes with --category intermediate"))
            rows = rows[rows["alpha"] == psi]
        elif rows.duplicated(["stream", "model"]).any():
            raise ConfigError(f"{d}: {category} {metric} has one value per α "
                              f"({sorted(set(rows['alpha']))}); choose one with --psi")
        parts.append(rows.assign(source=names[len(parts)]))
    without = [d for d, part in zip(names, parts) if part.empty]
    rows = pd.concat(parts)
    if rows.empty and classes:
        shown = ", ".join(map(str, list(classes)[:5])) + (", ..." if len(classes) > 5 else "")
        averaged = f", or rank its average over the classes, --metric macro_{metric}" \
            if f"macro_{metric}" in reported else ""
        raise ConfigError(
            (f"{metric} is a measure of each class" if label_class is None else
             f"the runs' {category} {metric} ({window}) is of no class {label_class!r}") +
            f" (the runs have it for {shown}): name the class, e.g. --metric "
            f"'{metric} ({next(iter(classes))})'" + ("" if label_class else averaged))
    if rows.empty:
        metric = metric if label_class is None else f"{metric} ({label_class})"
        some = ", ".join(sorted(reported)[:12]) + (", ..." if len(reported) > 12 else "")
        raise ConfigError(f"no {category} {metric} ({window}) in {', '.join(dirs)}; name a "
                          f"measure the runs report with --metric, --category and --window"
                          + (f" ({category} {window}: {some})" if reported else
                             f" (windows: {', '.join(sorted(windows))})"))
    rows = _named_once(rows, manifests)
    models = list(dict.fromkeys(rows["model"]))
    table = rows.pivot_table(index="stream", columns="model", values="value", sort=False,
                             aggfunc="first")
    table = table.reindex(columns=models)  # (a model with no value anywhere: a column of NaN)
    table.attrs["runs_without"] = without  # (runs with none of it: of another task, say)
    table.attrs["metric"] = full
    return table


def _named_once(rows: pd.DataFrame, manifests: dict) -> pd.DataFrame:
    """`rows` (stream, model, source: the run's folder as given) with each stream and model
    named once: a stream that several runs evaluated on the same input (`same_input`) keeps
    its name, and one they evaluated on different inputs, or on one not known to be the
    same, is one stream per run, `DIR:stream`; a model that two runs evaluated on the same
    stream is one model per run, `DIR:model`, on every stream."""
    inputs = {(src, st): same_input(manifests[src], st)
              for src, st in set(zip(rows["source"], rows["stream"]))}
    kinds = pd.Series([inputs[(src, st)] for src, st in zip(rows["source"], rows["stream"])],
                      index=rows.index)
    alike = rows.groupby("stream")["source"].transform("nunique").eq(1) | (
        kinds.notna() & kinds.groupby(rows["stream"]).transform(
            lambda k: k.nunique(dropna=False) == 1))
    rows = rows.assign(stream=np.where(alike, rows["stream"],
                                       rows["source"] + ":" + rows["stream"]))
    twice = set(rows.loc[rows.duplicated(["stream", "model"], keep=False), "model"])
    return rows.assign(model=[f"{src}:{m}" if m in twice else m
                              for src, m in zip(rows["source"], rows["model"])])


def _metric_and_class(text: str) -> tuple[str, str | None]:
    """`METRIC [(CLASS)]`, as --fail-if and trend name a measure of one class -> (metric,
    class or None).

    >>> _metric_and_class("recall (fraud)"), _metric_and_class("kappa")
    (('recall', 'fraud'), ('kappa', None))
    """
    match = MEASURE_NAME.match(text)
    if match is None or match[1]:  # (a category is --category's to give)
        return text.strip(), None
    return match[2], match[3].strip() if match[3] else None


def rank_runs(dirs: list[str], out: str | None = None, metric: str | None = None,
              category: str = "initial", window: str = "cumulative",
              alpha: float = 0.05, psi: float | None = None) -> dict:
    """Rank the models of `dirs`' runs on one measure; with `out`, write `ranks.csv` (each
    stream's values and ranks, and the average ranks), `rank.json` (the tests) and the
    critical-difference diagram (PNG, SVG, PDF). Returns what `rank.json` holds. The measure
    is `metric`, else `default_metric`'s.

    Example
    -------

    >>> import tempfile
    >>> from pipelines import evaluate
    >>> out = tempfile.mkdtemp()
    >>> _ = evaluate([f's{i}=synth:SEA{{"n": 300, "seed": {i}}}' for i in range(4)],
    ...              ["majority", "no-change", "gaussian-nb"], delay="10", out=out,
    ...              repredict="none")
    >>> result = rank_runs([out])
    >>> result["streams"], min(result["average_ranks"], key=result["average_ranks"].get)
    (4, 'gaussian-nb')
    """
    if not 0 < alpha < 1:  # (NaN too)
        raise ConfigError(f"alpha is the critical difference's significance level, between 0 "
                          f"and 1 (exclusive), not {alpha:g}; e.g. --alpha 0.05")
    with _here(dirs) as here:
        table = _measure_table(here, dirs, metric, category, window, psi)
    metric = table.attrs["metric"]
    bare, _ = _metric_and_class(metric)
    kept = complete_block(table)
    complete = table[kept].dropna()
    left_out = sorted(set(table.index) - set(complete.index))
    if len(complete.columns) < 2 or len(complete) < 2:
        gaps = [f"{m} has none on {listed_briefly(table.index[table[m].isna()])}"
                for m in table.columns if table[m].isna().any()]
        raise ConfigError(f"ranking needs at least 2 models, each with its {category} "
                          f"{metric} on the same 2 or more streams; found "
                          f"{len(table.columns)} model(s) on {len(table)} stream(s)"
                          + (f" ({listed_briefly(gaps, separator='; ')})" if gaps else "")
                          + "; give the folders of runs of the same models over several "
                            "streams")
    lower = bare in LOWER_IS_BETTER
    r = ranks(complete.to_numpy(), lower)
    average = dict(zip(complete.columns, r.mean(axis=0).tolist()))
    k, n = len(complete.columns), len(complete)
    result = {"metric": metric if psi is None else f"{metric} (Ψ{psi:g})",
              "category": category, "window": window,
              "better": "lower" if lower else "higher", "streams": n, "models": k,
              "left_out_streams": left_out,
              "left_out_models": [m for m in table.columns if m not in kept],
              "left_out_runs": table.attrs["runs_without"],
              "average_ranks": average,
              "means": dict(zip(complete.columns, complete.mean(axis=0).tolist()))}
    if k >= 3:
        cd = critical_difference(k, n, alpha)
        result.update(friedman=friedman(complete.to_numpy()), alpha=alpha,
                      critical_difference=cd, groups=cliques(average, cd))
    else:
        a, b = complete.to_numpy().T
        test = stats.wilcoxon(a, b) if np.any(a != b) else None
        result["wilcoxon"] = {"statistic": float(test.statistic) if test else 0.0,
                              "p": float(test.pvalue) if test else 1.0}
    if out is not None:
        with folder_here(out) as here:  # (pandas and matplotlib write files on this machine)
            _write(here, complete, r, result)
    return result


def complete_block(table: pd.DataFrame) -> list:
    """The models to rank: of a table of values (streams × models, NaN where a model has
    none), those whose streams with a value of each give the most values (models × streams)
    — a model evaluated on a few streams only is left out rather than every stream it lacks
    — taking out one model at a time (the one whose going adds the most, of equals the one
    with the fewest values, then the first by name) while that adds values.

    >>> nan = float("nan")
    >>> table = pd.DataFrame({"a": [0.9, 0.7, 0.6, 0.5], "b": [0.8, 0.6, 0.7, nan],
    ...                       "knn": [nan, nan, nan, 0.9]}, index=["s1", "s2", "s3", "s4"])
    >>> complete_block(table)  # (a and b over s1..s3, 6 values; with knn, none)
    ['a', 'b']
    >>> complete_block(table.drop(columns="knn"))  # (s4 is left out, not b)
    ['a', 'b']
    """
    def values(models: list) -> int:
        rows = int(table[models].notna().all(axis=1).sum())
        return len(models) * rows if len(models) >= 2 and rows >= 2 else 0

    def without(out) -> tuple:  # (its order: the values left, then its own values, its name)
        rest = [m for m in kept if m != out]
        return -values(rest), int(table[out].notna().sum()), str(out), rest

    kept = list(table.columns)
    while len(kept) > 2:
        fewer = min(map(without, kept), key=lambda w: w[:3])[3]
        if values(fewer) <= values(kept):
            return kept
        kept = fewer
    return kept


def _write(out: str, table: pd.DataFrame, r: np.ndarray, result: dict) -> None:
    made_folder(out)
    ranked = table.join(pd.DataFrame(r, index=table.index,
                                     columns=[f"rank {m}" for m in table.columns]))
    ranked.loc["average rank"] = [np.nan] * len(table.columns) + list(r.mean(axis=0))
    ranked.to_csv(os.path.join(out, "ranks.csv"))
    with open(os.path.join(out, "rank.json"), "w", encoding="utf-8") as f:
        f.write(json_text(result, indent=2))
    if "critical_difference" in result:
        from pipelines.figures import _png, _pyplot, save_figure

        plt = _pyplot()
        save_figure(_png(plt, cd_diagram(plt, result)), out, "cd_diagram")


def cd_diagram(plt, result: dict):
    """Demšar's critical-difference diagram: the rank axis (1, the best, on the left), each
    model at its average rank, the CD interval above, and a bar joining each group of models
    that are not significantly different.

    >>> from pipelines.figures import _pyplot
    >>> plt = _pyplot()
    >>> fig = cd_diagram(plt, {"metric": "accuracy", "category": "initial", "streams": 8,
    ...                        "alpha": 0.05, "average_ranks": {"a": 1.5, "b": 1.9, "c": 2.6},
    ...                        "critical_difference": 1.17, "groups": [["a", "b", "c"]]})
    >>> sorted(t.get_text() for t in fig.axes[0].texts if "(" in t.get_text())
    ['a (1.50)', 'b (1.90)', 'c (2.60)']
    >>> plt.close(fig)
    """
    average, cd = result["average_ranks"], result["critical_difference"]
    order = sorted(average, key=average.get)
    k = len(order)
    half = (k + 1) // 2
    labels = [f"{model} ({average[model]:.2f})" for model in order]
    # Room for the names on each side (~0.07 in a character at 9 points): a run's folder
    # before a model's name (`DIR:model`) can be longer than the rank axis.
    sides = sum(0.07 * max(map(len, part), default=0) + 0.2
                for part in (labels[:half], labels[half:]))
    fig, ax = plt.subplots(figsize=(max(7.5, 4.5 + sides),
                                    1.6 + 0.3 * half + 0.2 * len(result["groups"])))
    ax.set_xlim(0.5, k + 0.5)
    ax.set_ylim(-(half + len(result["groups"])) * 0.3 - 0.4, 1.2)
    ax.axis("off")
    ax.hlines(0, 1, k, color="black", linewidth=1)
    for tick in range(1, k + 1):
        ax.vlines(tick, 0, 0.1, color="black", linewidth=1)
        ax.text(tick, 0.18, str(tick), ha="center", va="bottom", fontsize=9)
    ax.hlines(0.8, 1, 1 + cd, color="black", linewidth=1.5)
    ax.text(1 + cd / 2, 0.88, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=9)
    for i, model in enumerate(order):
        left = i < half
        depth = -0.3 * ((i if left else k - 1 - i) + 1) - 0.3 * len(result["groups"])
        end = 0.5 if left else k + 0.5
        ax.plot([average[model], average[model], end], [0, depth, depth], color="0.3",
                linewidth=0.8)
        ax.text(end, depth, labels[i], ha="left" if not left else "right", va="center",
                fontsize=9, clip_on=False)
    for j, group in enumerate(result["groups"]):
        y = -0.15 - 0.3 * j * 0.6
        ax.hlines(y, average[group[0]] - 0.03, average[group[-1]] + 0.03, color="black",
                  linewidth=3)
    ax.set_title(f"{result['category']} {result['metric']}: average ranks over "
                 f"{result['streams']} streams (Nemenyi, α = {result['alpha']})", fontsize=10)
    return fig


def format_test(result: dict) -> str:
    """The test's verdict on `rank_runs`' `result`: Friedman's (and Iman-Davenport's F) with
    Nemenyi's critical difference for three models or more, Wilcoxon's for two.

    >>> format_test({"wilcoxon": {"statistic": 38.5, "p": 0.00136824}})
    'Wilcoxon signed-rank: W = 38.5, p = 0.00137'
    >>> format_test({"friedman": {"chi2": 6.0, "p_chi2": 0.0498, "p_exact": 0.0278,
    ...                           "f": float("inf"), "p_f": 0.0278},
    ...              "critical_difference": 1.913, "alpha": 0.05}).split("; ")[0]
    'Friedman: χ² = 6.000, p = 0.0498 (exact 0.0278)'
    """
    if "friedman" in result:
        fr = result["friedman"]
        exact = f" (exact {fr['p_exact']:.3g})" if "p_exact" in fr else ""
        return (f"Friedman: χ² = {fr['chi2']:.3f}, p = {fr['p_chi2']:.3g}{exact}; Iman-Davenport "
                f"F = {fr['f']:.3f}, p = {fr['p_f']:.3g}; Nemenyi CD = "
                f"{result['critical_difference']:.3f} at α = {result['alpha']}")
    w = result["wilcoxon"]
    return f"Wilcoxon signed-rank: W = {w['statistic']:g}, p = {w['p']:.3g}"


def format_ranks(result: dict) -> str:
    """What the command prints: the average ranks and the test's verdict.

    >>> print(format_ranks({"metric": "accuracy", "category": "initial", "streams": 3,
    ...                     "average_ranks": {"a": 1.0, "b": 2.0},
    ...                     "means": {"a": 0.91234, "b": 0.85},
    ...                     "wilcoxon": {"statistic": 0.0, "p": 0.25},
    ...                     "left_out_runs": ["runs/regression"]}))
    initial accuracy over 3 streams: average rank (1 = best), mean
      a  1.00  0.9123
      b  2.00  0.8500
    Wilcoxon signed-rank: W = 0, p = 0.25
    left out, as they report no initial accuracy: runs runs/regression
    """
    lines = [f"{result['category']} {result['metric']} over {result['streams']} streams: "
             f"average rank (1 = best), mean"]
    width = max(map(len, result["average_ranks"]))
    for model, rank in sorted(result["average_ranks"].items(), key=lambda kv: kv[1]):
        lines.append(f"  {model:<{width}}  {rank:.2f}  {format_value(result['means'][model])}")
    return "\n".join([*lines, format_test(result), *left_out(result)])


def left_out(result: dict) -> list[str]:
    """What `rank_runs` left out of its `result`, and why, a line each.

    >>> left_out({"left_out_models": ["knn"], "left_out_streams": []})
    ['left out, as they have values on too few of the streams: models knn']
    """
    lines = []
    if result.get("left_out_models"):
        lines.append(f"left out, as they have values on too few of the streams: models "
                     f"{', '.join(result['left_out_models'])}")
    if result.get("left_out_streams"):
        lines.append(f"left out, as a model has no value there: streams "
                     f"{', '.join(result['left_out_streams'])}")
    if result.get("left_out_runs"):
        lines.append(f"left out, as they report no {result['category']} {result['metric']}: "
                     f"runs {', '.join(result['left_out_runs'])}")
    return lines
