"""`delayed-eval trend ROOT`: the trend across nightly runs — chosen measures of every run below
ROOT (e.g. `results/fraud/date=2026-11-01/`), one point per run, with their intervals and the
share of instances still pending when the run was made."""

from __future__ import annotations

import difflib
import os
import posixpath
import re
import shutil

import numpy as np
import pandas as pd

from pipelines.files import folder_here, local_copy, names_below
from pipelines.manifest import natural_order
from pipelines.maturity import proportion_bounds
from pipelines.results import (MEASURE_NAME, default_metric, load_results, made_folder,
                               not_a_folder, read_manifest, whole_streams)
from transforms.errors import ConfigError

# A run's files: a folder with some of them but not summary.csv and manifest.json is damaged.
_RUN_FILES = {"summary.csv", "summary.parquet", "curves.parquet", "manifest.json"}
# The columns of names (a stream, a slice, a model): sorted with numbers by value.
_NAMES = ("stream", "segment", "model")
_DATE = re.compile(r"(?:^|[/\\])date=([^/\\]+)")
# Interval rows of a measure: the Wilson interval of a proportion, or the bootstrap's.
_INTERVALS = {m: (f"{m}_wilson_low", f"{m}_wilson_high")
              for m in ("accuracy", "precision", "recall")}


def _measure(text: str, category: str) -> tuple[str, str, str | None]:
    """`[initial|final] METRIC [(CLASS)]` (as --fail-if names a measure; the category
    defaults to `category`) -> (category, metric, class or None).

    >>> _measure("recall (fraud)", "initial"), _measure("final accuracy", "initial")
    (('initial', 'recall', 'fraud'), ('final', 'accuracy', None))
    """
    match = MEASURE_NAME.match(text)
    if not match:
        raise ConfigError(f"--metric {text!r}: not [initial|final] METRIC [(CLASS)]; name a "
                          f"measure as 'accuracy', 'recall (fraud)' or 'final kappa'")
    return match[1] or category, match[2], match[3].strip() if match[3] else None


def _full_name(text: str, category: str) -> str:
    """A --metric as named with its category: 'initial recall (fraud)'."""
    return text if MEASURE_NAME.match(text)[1] else f"{category} {text}"


def _runs(root: str) -> list[str]:
    """Every folder at or below `root` that holds a finished run (summary.csv and
    manifest.json), sorted by path; a run linked in (date=… -> where it was written) is read
    too, once, at its own path if it also has one below `root`."""
    direct = _run_folders(root, follow_links=False)
    found = {os.path.realpath(f): f for f in direct}
    for folder in _run_folders(root, follow_links=True):
        found.setdefault(os.path.realpath(folder), folder)
    if not found:
        what = "no finished run below it (a folder with summary.csv and manifest.json)" \
            if os.path.isdir(root) else not_a_folder(root)
        raise ConfigError(f"{root}: {what}; give the folder the nightly runs write into")
    return sorted(found.values())


def _run_folders(root: str, follow_links: bool) -> list[str]:
    found, seen = [], set()
    for folder, subfolders, files in os.walk(root, followlinks=follow_links):
        real = os.path.realpath(folder)
        if real in seen:  # reached again through a link (one back up is no loop)
            subfolders.clear()
            continue
        seen.add(real)
        # (a run's staging folder: it is being written now)
        subfolders[:] = sorted(s for s in subfolders if not s.startswith(".staging-"))
        if _holds_run(folder, files, root):
            found.append(folder)
    return found


def _remote_run_folders(root: str) -> list[str]:
    """`_run_folders` of a folder on another filesystem (gs://, s3://), from its listing:
    paths relative to `root` ("" for `root` itself), sorted."""
    files: dict = {}
    for name in names_below(root):
        folder, _, file = name.rpartition("/")
        if not any(part.startswith(".staging-") for part in folder.split("/")):
            files.setdefault(folder, set()).add(file)
    return sorted(folder for folder, names in files.items()
                  if _holds_run(posixpath.join(root, folder) if folder else root, names, root))


def _holds_run(folder: str, files, root: str) -> bool:
    """Whether `folder` (whose files are named `files`) holds a finished run: summary.csv and
    manifest.json; a ConfigError for a folder with only some of a run's files."""
    if "summary.csv" in files and "manifest.json" in files:
        return True
    if _RUN_FILES & set(files):  # a night that would be missing from the trend unsaid
        missing = " and ".join(f for f in ("summary.csv", "manifest.json") if f not in files)
        raise ConfigError(f"{folder}: part of a run, without its {missing}; run what wrote "
                          f"it again, or move the folder out of {root}")
    return False


def _remote_trend(root: str, *options) -> pd.DataFrame:
    """`trend_table` of a folder on another filesystem: its runs' summary.csv and manifest.json
    copied to a temporary folder here (`files.local_copy`), each run named as it is there."""
    names = [posixpath.join(folder, name) for folder in _remote_run_folders(root)
             for name in ("summary.csv", "manifest.json")]
    with local_copy(root, names) as here:
        table = trend_table(here, *options)

        def there(folder: str) -> str:
            below = os.path.relpath(folder, here).replace(os.sep, "/")
            return root if below == "." else posixpath.join(root, below)

        table["run"] = [there(folder) for folder in table["run"]]
        table.attrs["runs_without"] = [there(folder) for folder in table.attrs["runs_without"]]
    return table


def _date_of(folder: str, manifest: dict) -> str:
    """A run's date: its `date=…` partition, else its `--from`, else when it finished."""
    match = _DATE.findall(folder)
    if match:
        return match[-1]
    start = (manifest.get("config") or {}).get("start")
    return str(start or manifest.get("finished", ""))[:10]


def trend_table(root: str, metrics: list[str] | None = None, category: str = "initial",
                window: str = "cumulative", segment: str | None = None) -> pd.DataFrame:
    """One row per (run, stream, model, metric): `date`, `run` (its folder), the value, the
    interval (`low`, `high`: Wilson for accuracy, precision and recall, the bootstrap's where
    the run made one, else empty), `n`, and from the manifest the instances, those still
    pending and their share. A metric `recall (fraud)` is a per-class measure's class; one
    named `final kappa` is of that category, whatever `category` says. With
    `segment` (a --segment column of the runs), one row per slice of that column instead of
    the whole stream (`segment` = `country=DE`; the pending share stays the stream's).
    `may_move_by`: how far a proportion (accuracy, a class's precision or recall) may still
    move once the stream's pending instances are labelled (`pipelines.maturity.
    proportion_bounds`; 0 with none pending; a slice's once its own are, as a backfill's
    manifest counts them, else taking every one as the slice's), else empty.
    Without `metrics`, `results.default_metric`'s.

    Example
    -------

    >>> import os, tempfile
    >>> from pipelines import evaluate
    >>> root = tempfile.mkdtemp()
    >>> for day, seed in (("2026-11-01", 1), ("2026-11-02", 2)):
    ...     _ = evaluate([f's=synth:SEA{{"n": 300, "seed": {seed}}}'], ["gaussian-nb"],
    ...                  delay="10", repredict="none", out=os.path.join(root, f"date={day}"))
    >>> table = trend_table(root, ["accuracy"])
    >>> table["date"].tolist(), bool((table["low"] < table["value"]).all())
    (['2026-11-01', '2026-11-02'], True)
    """
    if "://" in root:
        return _remote_trend(root, metrics, category, window, segment)
    if not metrics:
        metrics = [default_metric({m for folder in _runs(root)
                                   for m in load_results(folder)["metric"]})]
    parts, reported = [], set()  # the trend's rows; every measure the runs report (a hint)
    without = []  # runs with none of the measures (of another task, say): named, not dropped
    wanted = {_measure(m, category): m for m in metrics}
    for folder in _runs(root):
        before = len(parts)
        manifest = read_manifest(folder)
        summary = load_results(folder)
        if segment is None:
            summary = whole_streams(summary)
        else:
            summary = summary[summary["segment"].str.startswith(f"{segment}=", na=False)] \
                if "segment" in summary else summary.iloc[:0]
        rows = summary[summary["category"].isin({c for c, _, _ in wanted})
                       & (summary["window"] == window) & summary["bin"].isna()]
        slices = rows["segment"] if "segment" in rows else [None] * len(rows)
        values = {(s, g, m, kind, metric, None if pd.isna(c) else c): (v, n)
                  for s, g, m, kind, metric, c, v, n in zip(
                      rows["stream"], slices, rows["model"], rows["category"], rows["metric"],
                      rows["class"], rows["value"], rows["n"])}
        counts = {(c["stream"], c["model"]): c for c in manifest.get("counts", [])}
        bounds: dict = {}  # (stream, model, slice) -> its proportions' `proportion_bounds`
        for (stream, piece, model, kind, metric, label_class), (value, n) in values.items():
            reported.add(metric if label_class is None else f"{metric} ({label_class})")
            if (kind, metric, label_class) not in wanted:
                continue
            low, high = (values.get((stream, piece, model, kind, name, label_class),
                                    (np.nan,))[0]
                         for name in _INTERVALS.get(metric, (f"{metric}_bootstrap_low",
                                                             f"{metric}_bootstrap_high")))
            c = counts.get((stream, model), {})
            instances, pending = c.get("instances", 0), c.get("pending_at_end", 0)
            piece = None if pd.isna(piece) else piece
            if (stream, model, piece) not in bounds:
                by_segment = ((manifest.get("maturity") or {}).get(stream) or {}).get(
                    "pending_by_segment")
                waiting = by_segment.get(piece, 0) if piece and by_segment is not None \
                    else pending
                bounds[stream, model, piece] = proportion_bounds(summary[
                    (summary["stream"] == stream) & (summary["model"] == model)], waiting,
                    piece) if window == "cumulative" else {}
            name = metric if label_class is None else f"{metric} ({label_class})"
            parts.append({
                "date": _date_of(os.path.relpath(folder, root), manifest), "run": folder,
                "stream": stream, "segment": piece, "model": model,
                "category": kind, "window": window,
                "metric": wanted[kind, metric, label_class], "value": value, "low": low,
                "high": high, "n": n, "instances": instances, "pending": pending,
                "pending_share": pending / instances if instances else np.nan,
                "may_move_by": bounds[stream, model, piece].get((model, kind, name), np.nan)})
        if len(parts) == before:
            without.append(folder)
    found = {p["metric"] for p in parts}  # (as --metric names them)
    missing = [m for m in metrics if wanted[_measure(m, category)] not in found]
    if missing:
        sliced = f" per {segment} (run them with --segment {segment})" if segment else ""
        close = difflib.get_close_matches(missing[0], sorted(reported), n=1, cutoff=0.6)
        some = ", ".join(sorted(reported)[:12]) + (", ..." if len(reported) > 12 else "")
        hint = f" (did you mean {close[0]!r}?)" if close else \
            f" (they report {some})" if reported else ""
        named = ", ".join(_full_name(m, category) for m in missing)
        raise ConfigError(f"{root}: the runs report no {named} "
                          f"({window}){sliced}{hint}; name measures they report with --metric")
    scored = {p["metric"] for p in parts if p["n"] > 0}
    unscored = [_full_name(m, category) for m in metrics
                if wanted[_measure(m, category)] not in scored]
    if unscored:
        raise ConfigError(f"{root}: no run scored {', '.join(unscored)} ({window}): it counts "
                          f"no label in any of them (runs without final predictions have no "
                          f"final measure); name measures they scored with --metric")
    table = pd.DataFrame(parts).sort_values(
        ["stream", "segment", "model", "metric", "date", "run"], kind="stable",
        ignore_index=True, na_position="first",
        key=lambda c: c.map(lambda name: tuple(natural_order(str(name))), na_action="ignore")
        if c.name in _NAMES else c)
    table.attrs["runs_without"] = without
    return table


def write_trend(root: str, out: str, metrics: list[str] | None = None, category: str = "initial",
                window: str = "cumulative", segment: str | None = None) -> pd.DataFrame:
    """`trend_table`, written to `out` as `trend.parquet` (for dashboards) and `trend.csv`,
    and drawn (`trend.png`, `.svg`, `.pdf`): per stream and measure, a line per model with
    its interval, and the pending share of each run as bars beneath.

    >>> import os, tempfile
    >>> from pipelines import evaluate
    >>> root = tempfile.mkdtemp()
    >>> for day in ("2026-11-01", "2026-11-02"):
    ...     _ = evaluate(['s=synth:SEA{"n": 200, "seed": 1}'], ["gaussian-nb"], delay="10",
    ...                  repredict="none", out=os.path.join(root, f"date={day}"))
    >>> table = write_trend(root, os.path.join(root, "trend"), ["accuracy"])
    >>> sorted(os.listdir(os.path.join(root, "trend"))), len(table)
    (['trend.csv', 'trend.parquet', 'trend.pdf', 'trend.png', 'trend.svg'], 2)
    """
    table = trend_table(root, metrics, category, window, segment)
    with folder_here(out) as here:  # (pandas and matplotlib write files on this machine)
        _write_trend(table, here, window)
    return table


def _write_trend(table: pd.DataFrame, out: str, window: str) -> None:
    made_folder(out)
    table.to_parquet(os.path.join(out, "trend.parquet"), index=False)
    table.to_csv(os.path.join(out, "trend.csv"), index=False)
    from pipelines.figures import _grid, _png, _pyplot, save_figure

    plt = _pyplot()
    if _runs_share_dates(table):  # (a point per run, as the printed table has a row per run)
        table = table.assign(date=table["date"] + " " + _below_common_folder(table["run"]))
    panels = list(dict.fromkeys(zip(table["stream"], table["metric"])))
    fig, axes = _grid(plt, len(panels), f"Measures across runs ({window})")
    for ax, (stream, metric) in zip(axes, panels):
        mine = table[(table["stream"] == stream) & (table["metric"] == metric)]
        dates = list(dict.fromkeys(sorted(mine["date"])))
        x = {d: i for i, d in enumerate(dates)}
        lines = list(dict.fromkeys(zip(mine["model"], mine["segment"])))
        for i, (model, piece) in enumerate(lines):
            part = mine[(mine["model"] == model) & ((mine["segment"] == piece) if piece
                                                    else mine["segment"].isna())]
            xs = [x[d] for d in part["date"]]
            ax.plot(xs, part["value"], "-o", color=f"C{i}", markersize=3,
                    label=f"{model} {piece}" if piece else model)
            if part["low"].notna().any():
                ax.fill_between(xs, part["low"], part["high"], color=f"C{i}", alpha=0.15,
                                linewidth=0)
                # Bars too: a night alone (a model's first, or one between gaps) has no band.
                ax.vlines(xs, part["low"], part["high"], color=f"C{i}", alpha=0.5,
                          linewidth=1, label="_interval")
        share = mine.groupby("date")["pending_share"].max()
        twin = ax.twinx()
        twin.bar([x[d] for d in share.index], share.to_numpy(), color="0.6", alpha=0.25,
                 width=0.6, label="pending share")
        twin.set_ylim(0, 1)
        twin.set_ylabel("pending share", fontsize=8)
        ax.set_zorder(twin.get_zorder() + 1)
        ax.patch.set_visible(False)
        ax.set_xticks(range(len(dates)), dates, rotation=45, ha="right", fontsize=8)
        ax.set_ylabel(_full_name(metric, mine["category"].iloc[0]))
        ax.set_title(stream)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.12, 1.0), borderaxespad=0)
    save_figure(_png(plt, fig), out, "trend")


def format_trend(table: pd.DataFrame) -> str:
    """Dates × (stream, model, metric), four decimals: what the command prints.

    >>> print(format_trend(pd.DataFrame({"date": ["d1", "d2"], "stream": "s", "model": "m",
    ...                                  "metric": "accuracy", "value": [0.9, 0.8]})))
    ... # doctest: +NORMALIZE_WHITESPACE
    stream        s
    model         m
    metric accuracy
    date
    d1       0.9000
    d2       0.8000
    """
    columns = ["stream", "segment", "model", "metric"] if "segment" in table and \
        table["segment"].notna().any() else ["stream", "model", "metric"]
    rows, index = table, ["date"]
    if _runs_share_dates(table):  # each run its own row, named below the runs' common folder
        rows, index = table.assign(run=_below_common_folder(table["run"])), ["date", "run"]
    wide = rows.pivot_table(index=index, columns=columns, values="value", aggfunc="last",
                            sort=False)  # (dates in order)
    # Columns as the table orders them; a model without a value on any date keeps its column.
    wide = wide.reindex(columns=pd.MultiIndex.from_frame(table[columns].drop_duplicates()))
    text = fitted(wide.sort_index(kind="stable"), shutil.get_terminal_size().columns)
    without = table.attrs.get("runs_without")
    return "\n".join([text, *_provisional(table)] + (
        [f"left out, as they report none of these measures: runs {', '.join(without)}"]
        if without else []))


def fitted(wide: pd.DataFrame, width: int) -> str:
    """`wide` (dates × measures) with four decimals; where its lines are longer than `width`
    characters (a terminal's), turned (measures × dates) if that is narrower — many streams or
    models over a few nights —, and what is still wider wrapped into blocks of columns.

    >>> wide = pd.DataFrame([[0.91, 0.82, 0.73]], index=pd.Index(["d1"], name="date"),
    ...                     columns=pd.Index(["stream-a", "stream-b", "stream-c"], name="stream"))
    >>> print(fitted(wide, 80))  # doctest: +NORMALIZE_WHITESPACE
    stream  stream-a  stream-b  stream-c
    date
    d1        0.9100    0.8200    0.7300
    >>> print(fitted(wide, 20))
    date          d1
    stream
    stream-a  0.9100
    stream-b  0.8200
    stream-c  0.7300
    """
    def text(frame: pd.DataFrame, line_width=None) -> str:
        return frame.to_string(float_format=lambda v: f"{v:.4f}", line_width=line_width)

    def widest(printed: str) -> int:
        return max(map(len, printed.splitlines()), default=0)

    printed = text(wide)
    if widest(printed) > width:
        turned = text(wide.T)
        if widest(turned) < widest(printed):
            wide, printed = wide.T, turned
        if widest(printed) > width:
            printed = text(wide, width)
    return printed


def _provisional(table: pd.DataFrame) -> list[str]:
    """A line per night, stream, model and slice whose labels were still pending: how far each
    of its proportions may still move (`may_move_by`), so a provisional night is not read as
    settled.

    >>> for line in _provisional(pd.DataFrame({
    ...         "date": ["d1", "d2", "d2"], "stream": "s", "model": "m",
    ...         "segment": [None, None, "c=DE"], "metric": "accuracy",
    ...         "may_move_by": [0.0, 0.02, 0.1]})):
    ...     print(line)
    d2, s / m: labels still pending; accuracy may still move by up to 0.0200
    d2, s / m / c=DE: labels still pending; accuracy may still move by up to 0.1000
    """
    if "may_move_by" not in table:
        return []
    runs = _below_common_folder(table["run"]) if _runs_share_dates(table) else ""
    moving = table.assign(run_=runs)[table["may_move_by"].fillna(0) > 0]
    slices = moving["segment"].fillna("") if "segment" in moving else ""
    return [f"{date}{f' ({run})' if run else ''}, {' / '.join(filter(None, where))}: labels "
            f"still pending; " + ", ".join(
                f"{metric} may still move by up to {bound:.4f}"
                for metric, bound in zip(rows["metric"], rows["may_move_by"]))
            for (date, run, *where), rows in moving.assign(slice=slices).groupby(
                ["date", "run_", "stream", "model", "slice"], sort=False)]


def _runs_share_dates(table: pd.DataFrame) -> bool:
    """Whether two runs below the folder give one measure of one stream and model on one date
    (runs dated by the day they finished, or two folders of one partition): each run is then
    its own row, named.

    >>> runs = pd.DataFrame({"date": ["d1", "d1"], "run": ["a", "b"], "stream": "s",
    ...                      "model": ["m", "m"], "metric": "accuracy"})
    >>> _runs_share_dates(runs), _runs_share_dates(runs.assign(model=["m1", "m2"]))
    (True, False)
    """
    if "run" not in table:
        return False
    key = ["date", *[c for c in ("stream", "segment", "model", "metric") if c in table]]
    return bool(table.groupby(key, dropna=False)["run"].nunique().gt(1).any())


def _below_common_folder(runs: pd.Series) -> pd.Series:
    """Run folders named below the folder they all share (local or on an object store).

    >>> _below_common_folder(pd.Series(["gs://b/fraud/v1/d", "gs://b/fraud/v2/d"])).tolist()
    ['v1/d', 'v2/d']
    """
    common = os.path.commonprefix(list(runs.unique()))
    return runs.str.slice(common.rfind("/") + 1)
