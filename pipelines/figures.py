"""The report's figures: the papers' figures drawn from a finished run's files, each as PNG
(200 dpi), SVG (text kept as text) and PDF. `figures(run)` draws every figure the run's files
allow and says which option adds the others."""

from __future__ import annotations

import io
import math
import os
import subprocess
import sys
import tempfile
import textwrap
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np

from metrics.comparison import CHI2_1_99
from metrics.temporal import REPEATS_LEVEL
from pipelines.tables import positive_class_rows
from pipelines.run_files import PRIMARY, RunFiles

DIEBOLD_MARIANO_CRITICAL = 2.576  # |t| at 0.99 two-sided, for the many labels of a curve


LOSS_NAME = {"classification": "error rate (1 − accuracy)", "regression": "MAE"}


FORMATS = ("png", "svg", "pdf")  # every figure is written in each; the page embeds the PNG


PNG_DPI = 200


@dataclass
class Figure:
    """One figure of the report: its file name, heading, how to read it, and its files' bytes
    by format (`FORMATS`).

    Example
    -------

    >>> Figure("binned", "Binned performance", "How to read it.").files
    {}

    """

    name: str
    title: str
    reading: str
    files: dict = field(repr=False, default_factory=dict)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on servers and CI
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 100, "font.size": 10, "axes.grid": True,
                         "grid.alpha": 0.3,
                         "svg.fonttype": "none",  # SVG text stays text: editable, searchable
                         "svg.hashsalt": "delayed-eval"})  # fixed ids: the same file each time
    return plt


def _grid(plt, n_panels: int, title: str, width: float = 6.0, height: float = 3.6):
    if n_panels == 1:
        width *= 1.5  # room for the title and a legend beside the plot
    cols = min(n_panels, 2)
    rows = math.ceil(n_panels / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    for ax in axes.flat[n_panels:]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=12)
    return fig, list(axes.flat[:n_panels])


def _below_the_title(fig, gap: float = 0.15) -> None:
    """Lower the panels until their tops are `gap` inches below the figure's title:
    tight_layout leaves it a share of the height, so a tall grid's top panels ran into it."""
    title = fig._suptitle
    if title is None or not fig.axes:
        return
    renderer = fig.canvas.get_renderer()
    top = max(ax.get_tightbbox(renderer).y1 for ax in fig.axes if ax.get_visible())
    overlap = top - title.get_window_extent(renderer).y0 + gap * fig.dpi
    lowered = fig.subplotpars.top - overlap / fig.dpi / fig.get_figheight()
    if overlap > 0 and lowered > fig.subplotpars.bottom:  # (else a legend taller than the figure)
        fig.subplots_adjust(top=lowered)


def _png(plt, fig) -> dict:
    """The figure in every format of `FORMATS` ({format: bytes}); legends outside the axes are
    kept in the picture."""
    fig.tight_layout()
    _below_the_title(fig)
    # The tight box once for every format: with bbox_inches="tight" (or a layout engine left
    # in place) savefig lays the figure out once more in each format.
    fig.set_layout_engine(None)
    fig.set_dpi(PNG_DPI)  # (measured at the PNG's resolution: text extents are not linear in it)
    box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(
        plt.rcParams["savefig.pad_inches"])
    files = {}
    for fmt in FORMATS:
        buf = io.BytesIO()
        # Fixed metadata: the same run gives the same files.
        metadata = {"png": {"Software": None}, "svg": {"Date": None},
                    "pdf": {"CreationDate": None}}[fmt]
        fig.savefig(buf, format=fmt, dpi=PNG_DPI, bbox_inches=box, metadata=metadata)
        files[fmt] = buf.getvalue()
    plt.close(fig)
    return files


def save_figure(files: dict, folder: str, name: str) -> None:
    """Write a figure's files ({format: bytes}, as `_png` makes them) as `folder`/NAME.FORMAT.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> save_figure({"svg": b"<svg/>"}, folder, "x")
    >>> os.listdir(folder)
    ['x.svg']
    """
    for fmt, data in files.items():
        with open(os.path.join(folder, f"{name}.{fmt}"), "wb") as f:
            f.write(data)


def _legend(ax) -> None:
    """Beside the plot, never over the data; a long label (a pipeline's name, a pair of them)
    on lines of at most `LEGEND_WIDTH` characters, so that a panel's legend leaves room for
    the panel beside it."""
    handles, labels = ax.get_legend_handles_labels()
    if labels:
        ax.legend(handles, [wrapped(label, LEGEND_WIDTH) for label in labels], fontsize=8,
                  loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def _title(ax, title: str, **kw) -> None:
    """A panel's title, on lines no wider than the panel (a long model or stream name)."""
    ax.set_title(wrapped(title, TITLE_WIDTH), **kw)


LEGEND_WIDTH, TITLE_WIDTH = 36, 64  # characters: a legend's at font size 8, a panel's title


def wrapped(label: str, width: int) -> str:
    """`label` on lines of at most `width` characters, broken at spaces (a word longer than a
    line is cut), not at a model name's hyphens.

    >>> print(wrapped('one-hot-text | OneVsRestClassifier{"classifier": '
    ...               '{"logistic-regression": {}}} vs gaussian-nb', 36))
    one-hot-text |
    OneVsRestClassifier{"classifier":
    {"logistic-regression": {}}} vs
    gaussian-nb
    >>> wrapped("gaussian-nb vs hoeffding-tree", 36)
    'gaussian-nb vs hoeffding-tree'
    """
    return "\n".join(textwrap.wrap(label, width, break_on_hyphens=False)) or label


def _measure_label(run: RunFiles, models: list[str], what: str = "(cumulative)") -> str:
    """The y-axis label for `models`' primary measure: accuracy for classifiers, MAE for
    regressors, both named only when both are drawn."""
    metrics = list(dict.fromkeys(PRIMARY[run.task(m)] for m in models))
    return " / ".join(metrics) + f" {what}" if metrics else what


def _label_axis(ax, title: str, ylabel: str) -> None:
    ax.set_xlabel("T, labels received")
    ax.set_ylabel(ylabel)
    _title(ax, title)


# Errors whose typical values differ by more than this factor share a log axis.
SPREAD = 100


def errors_spread(errors: list) -> bool:
    """Whether the typical values (medians of the positive finite values) of regression
    errors, one array per line, differ by more than `SPREAD` times: on one linear axis a
    diverged model's errors (1e21) flatten every other line to zero.

    >>> errors_spread([np.array([0.7, 0.6]), np.array([2e21, 3e21])])
    True
    >>> errors_spread([np.array([0.7, 0.0]), np.array([5.5, 4.0]), np.array([np.nan])])
    False
    """
    positive = [e[np.isfinite(e) & (e > 0)] for e in (np.asarray(e, float) for e in errors)]
    typical = [float(np.median(e)) for e in positive if len(e)]
    return len(typical) > 1 and max(typical) > SPREAD * min(typical)


def _log_scale_where_spread(ax, run: RunFiles, errors: list) -> None:
    """A log y axis for a panel of errors of regressors only, where they `errors_spread`."""
    if all(run.task(model) == "regression" for model in run.models) and errors_spread(errors):
        ax.set_yscale("log", nonpositive="mask")
        ax.set_ylabel(f"{ax.get_ylabel()}, log scale")


def _fig_initial_final(plt, run: RunFiles):
    """Fig. 1 of Grzenda et al. 2020: initial (at arrival) vs final (test-then-train) over T;
    regression errors of models far apart (one diverged) on a log axis."""
    fig, axes = _grid(plt, len(run.streams), "Initial vs final performance over T"
                      if run.has_final else "Initial performance over T")
    for ax, stream in zip(axes, run.streams):
        errors = []
        for i, model in enumerate(run.models):
            metric = PRIMARY[run.task(model)]
            color = f"C{i}"
            for category, style in (("initial", "-"), ("final", "--")):
                x, y = run.curve(stream, model, category, metric)
                if np.isfinite(y).any():  # (a backfill's log may have no final predictions)
                    # Few points are marked: a straight line between two is not a trend.
                    ax.plot(x, y, style, color=color, label=f"{model} {category}",
                            marker="o" if len(x) <= 20 else None, markersize=3)
                    errors.append(y)
        _label_axis(ax, stream, _measure_label(run, run.models))
        _log_scale_where_spread(ax, run, errors)
        _legend(ax)
    return _png(plt, fig)


def _fig_binned(plt, run: RunFiles):
    """Fig. 2 of Grzenda et al. 2020: Λ(T, b) against b at the end of the stream."""
    s = run.summary
    keys = [(stream, model) for stream in run.streams for model in run.models]
    fig, axes = _grid(plt, len(keys), f"Binned performance Λ(T, b) at the end of the stream, "
                                      f"B = {run.bins} (each panel on its own scale)")
    b_all = np.arange(run.bins + 2)
    for ax, (stream, model) in zip(axes, keys):
        metric = PRIMARY[run.task(model)]
        rows = run.rows(s, stream, model, "binned", metric).sort_values("bin")
        ax.plot(rows["bin"].to_numpy(float), rows["value"].to_numpy(float), "-o",
                markersize=2, color=f"C{run.models.index(model)}")
        ticks = [0, run.bins // 2, run.bins + 1] if run.bins > 2 else list(b_all)
        names = {0: "initial", run.bins + 1: "final"}
        ax.set_xticks(ticks, [f"{t}\n{names.get(t, '')}" for t in ticks])
        ax.set_xlabel("bin b of the latency period")
        ax.set_ylabel(f"Λ(T, b), {metric}")
        _title(ax, f"{stream} / {model}")
    return _png(plt, fig)


def _fewer_at_arrival(run: RunFiles) -> str | None:
    """Where the initial scores rest on the fewest labels next to the final ones (a model
    answers none before it has learned a label; river's answer None is not scored): "S / M:
    n_initial of n_final labels", or None where they rest on as many."""
    widest = (0, None)
    for stream in run.streams:
        for model in run.models:
            metric = PRIMARY[run.task(model)]
            n = [run.rows(run.summary, stream, model, category, metric)["n"]
                 for category in ("initial", "final")]
            if all(len(counts) == 1 for counts in n):
                initial, final = (int(counts.iloc[0]) for counts in n)
                if final - initial > widest[0]:
                    widest = (final - initial, f"{stream} / {model}: {initial:,} of {final:,} "
                                               f"labels")
    return widest[1]


def _fig_weights(plt, run: RunFiles):
    """Fig. 3 of Grzenda et al. 2020: the weights (1/α)^(b/B) of Ψα against b."""
    fig, axes = _grid(plt, 1, "Weights of the prioritised measure Ψα", width=6.5)
    b = np.arange(run.bins + 1)
    for i, alpha in enumerate(run.alphas):
        axes[0].plot(b, (1 / alpha) ** (b / run.bins), color=f"C{i}", label=f"α = {alpha:g}")
    axes[0].set_xlabel("bin b (the final bin B+1 is not weighted)")
    axes[0].set_ylabel("weight (1/α)^(b/B)")
    _legend(axes[0])
    return _png(plt, fig)


def _fig_intermediate(plt, run: RunFiles):
    """Figs. 4-6 of Grzenda et al. 2020: initial, Ψα and final over T, one panel per
    (stream, model)."""
    keys = [(s, m) for s in run.streams for m in run.models]
    fig, axes = _grid(plt, len(keys), "Initial, intermediate Ψα and final performance over T")
    for ax, (stream, model) in zip(axes, keys):
        metric = PRIMARY[run.task(model)]
        x, y = run.curve(stream, model, "initial", metric)
        ax.plot(x, y, color="C0", label="initial")
        for i, alpha in enumerate(run.alphas):
            x, y = run.curve(stream, model, "intermediate", metric, alpha=alpha)
            ax.plot(x, y, color=f"C{i + 2}", label=f"Ψ{alpha:g}")
        x, y = run.curve(stream, model, "final", metric)
        ax.plot(x, y, color="C1", linestyle="--", label="final")
        _label_axis(ax, f"{stream} / {model}", f"{metric} (cumulative)")
        _legend(ax)
    return _png(plt, fig)


def _fig_forgetting(plt, run: RunFiles):
    """Fig. 3 of Gama et al. 2009: the prequential error, cumulative vs sliding windows vs fading
    factors (and the error within each curve period, which forgets everything before it), and
    with --holdout the holdout error they converge to on a stationary stream."""
    keys = [(s, m) for s in run.streams for m in run.models]
    views = sorted(set(run.curves["window"]) - {"cumulative"})
    fig, axes = _grid(plt, len(keys), "Prequential error of the initial predictions: "
                                      "cumulative vs windows vs fading factors")
    for ax, (stream, model) in zip(axes, keys):
        task = run.task(model)
        metric = PRIMARY[task]

        def loss(y, task=task):
            return 1.0 - y if task == "classification" else y

        x, y = run.curve(stream, model, "initial", metric)
        ax.plot(x, loss(y), color="black", label="cumulative")
        if len(x):
            px, py = run.period_losses(stream, model)
            ax.step(px, py, where="pre", color="grey", alpha=0.6,
                    label="within each curve period")
        for i, view in enumerate(views):
            x, y = run.curve(stream, model, "initial", metric, window=view)
            if len(x):
                ax.plot(x, loss(y), color=f"C{i}", label=view)
        x, y = run.curve(stream, model, "holdout", metric)
        if len(x):  # each set at the label count its model was frozen at
            ax.plot(x, loss(y), "o--", color="crimson", markersize=4, label="holdout")
        _label_axis(ax, f"{stream} / {model}", LOSS_NAME[task])
        _legend(ax)
    return _png(plt, fig)


def _fig_comparison(plt, run: RunFiles):
    """Figs. 5-7 of Gama et al. 2009: Q statistic and signed McNemar over T, with the threshold;
    for regressors, whose errors McNemar cannot count, the Diebold-Mariano statistic."""
    comparisons = run.curves[run.curves["category"] == "comparison"]
    # In the summary's order (the models' as configured; the curves' rows are by name).
    drawn = set(comparisons["model"])
    pairs = [p for p in dict.fromkeys(run.summary.loc[run.summary["category"] == "comparison",
                                                       "model"]) if p in drawn]
    with_mcnemar = set(comparisons.loc[(comparisons["metric"] == "mcnemar")
                                       & comparisons["value"].notna(), "stream"])
    panels = [(stream, metric) for stream in run.streams
              for metric in ("q_statistic", "mcnemar" if stream in with_mcnemar
                             else "diebold_mariano")]
    fig, axes = _grid(plt, len(panels), "Comparing models over T "
                                        "(initial predictions, cumulative)")
    for (stream, metric), ax in zip(panels, axes):
        for i, pair in enumerate(pairs):
            # bin 0: the initial predictions (B+1 would be the final ones)
            x, y = run.curve(stream, pair, "comparison", metric, bin=0)
            ax.plot(x, y, color=f"C{i}", label=pair)
        if metric == "q_statistic":
            ax.axhline(0, color="black", linewidth=0.8)
            _label_axis(ax, f"{stream}: Q = log(S_A / S_B)", "Q statistic (> 0: B better)")
            _legend(ax)
            continue
        critical, name = (CHI2_1_99, "signed McNemar") if metric == "mcnemar" else \
            (DIEBOLD_MARIANO_CRITICAL, "Diebold-Mariano")
        ax.set_yscale("symlog", linthresh=10)  # keeps the threshold visible next to large values
        ax.yaxis.set_major_formatter(_plain_ticks())  # 100, not 10^2
        for sign in (1, -1):
            ax.axhline(sign * critical, color="red", linestyle=":",
                       label=f"significance 0.99 (±{critical})" if sign == 1 else None)
        _label_axis(ax, f"{stream}: {name}", f"{name} statistic (> 0: B better)")
        _legend(ax)
    return _png(plt, fig)


def _plain_ticks():
    """Tick labels as plain numbers (symlog axes label 10^k in mathtext by default)."""
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _: f"{v:,.0f}" if abs(v) >= 1 else f"{v:g}")


def _fig_drift(plt, run: RunFiles):
    """Figs. 8-9 of Gama et al. 2009: the error rate with Page-Hinkley alarms and known drifts;
    regression errors of models far apart (one diverged) on a log axis."""
    s = run.summary
    fig, axes = _grid(plt, len(run.streams), "Error rate, Page-Hinkley alarms (▼) and "
                                             "known drifts (dashed)")
    for ax, stream in zip(axes, run.streams):
        errors = []
        for i, model in enumerate(run.models):
            task = run.task(model)
            x, y = run.period_losses(stream, model)
            if not len(x):
                continue
            ax.step(x, y, where="pre", color=f"C{i}", label=f"{model} {LOSS_NAME[task]}")
            errors.append(y)
            alarms = run.rows(s, stream, model, "drift", "alarm")
            if len(alarms):
                at = alarms["value"].to_numpy(float)
                level = np.interp(at, x, np.nan_to_num(y))
                ax.plot(at, level, "v", color=f"C{i}", markersize=9,
                        label=f"{model}: {len(at)} alarm(s)")
        for k, point in enumerate(run.drift_points(stream)):
            ax.axvline(point, color="black", linestyle="--",
                       label="known drift" if k == 0 else None)
        _label_axis(ax, stream, "loss within each curve period")
        _log_scale_where_spread(ax, run, errors)
        _legend(ax)
    return _png(plt, fig)


FEW_RUNS = 30  # a Δ(ℓ) from fewer runs of ℓ+1 labels than this is drawn hollow
NAMED_CLASSES = 10  # a legend names the first classes' lines, and stays shorter than its plot


def _fig_profile(plt, run: RunFiles):
    """Paper 003: the temporal-dependence profile Δ(ℓ) per class, and the Majority and
    Persistent baselines next to the models' initial accuracy."""
    streams = [s for s in run.streams if run.profiles.get(s, {}).get("labels")]
    fig, axes = _grid(plt, 2 * len(streams), "Temporal dependence")
    s = run.summary
    for k, stream in enumerate(streams):
        p = run.profiles[stream]
        d_ax, b_ax = axes[2 * k], axes[2 * k + 1]
        lags = sorted(p["delta"], key=int)
        indices = sorted({c for lag in lags for c in p["delta"][lag]}, key=int)
        names = run.class_names(stream)
        runs = p.get("delta_runs", {})
        for i, c in enumerate(indices):
            name = names[int(c)] if int(c) < len(names) else c
            x = np.array([int(lag) for lag in lags])
            y = np.array([_num(p["delta"][lag].get(c)) for lag in lags])
            few = np.array([runs.get(lag, {}).get(c, FEW_RUNS) < FEW_RUNS for lag in lags])
            d_ax.plot(x, y, "-", color=f"C{i}",
                      label=f"class {name}" if i < NAMED_CLASSES else None)
            d_ax.plot(x[~few], y[~few], "o", color=f"C{i}")
            d_ax.plot(x[few], y[few], "o", color=f"C{i}", markerfacecolor="white")
        d_ax.axhline(0, color="black", linewidth=0.8)
        d_ax.set_xticks([int(lag) for lag in lags])
        d_ax.set_xlabel("ℓ, labels of class i in a row")
        d_ax.set_ylabel("Δ(ℓ) = P(i | ℓ × i) − P(i | (ℓ+1) × i)")
        first = f"; the first {NAMED_CLASSES} named" if len(indices) > NAMED_CLASSES else ""
        _title(d_ax, f"{stream}: Δ(ℓ) per class (hollow: from fewer than {FEW_RUNS} "
               f"runs{first})", fontsize="medium")
        _legend(d_ax)
        names = ["Majority", "Persistent"]
        values = [p["majority_accuracy"], p["persistent_accuracy"]]
        for model in run.models:
            if run.task(model) != "classification":
                continue
            row = run.rows(s, stream, model, "initial", "accuracy")
            names.append(model)
            values.append(float(row["value"].iloc[0]) if len(row) else math.nan)
        b_ax.bar(range(len(names)), values, color=["grey", "grey"]
                 + [f"C{i}" for i in range(len(names) - 2)])
        b_ax.set_xticks(range(len(names)), names, rotation=20, ha="right")
        b_ax.set_ylabel("accuracy of the initial predictions")
        _title(b_ax, f"{stream}: baselines vs models")
    return _png(plt, fig)


# Classes up to which a confusion matrix shows each cell's count and names every class; with
# more, counts are unreadable and k² texts took minutes to draw (300 classes: 180 000).
ANNOTATED_CLASSES = 20


def _fig_confusion(plt, run: RunFiles):
    """The confusion matrix of each (stream, classifier), initial beside final; cells shaded
    by their share of the true class's labels (the class's recall on the diagonal), with their
    counts up to `ANNOTATED_CLASSES` classes (beyond, every k/20-th class is named)."""
    cells = run.summary[run.summary["metric"] == "confusion"]
    keys = list(dict.fromkeys(zip(cells["stream"], cells["model"])))
    categories = ("initial", "final") if run.has_final else ("initial",)
    fig, axes = plt.subplots(len(keys), len(categories), figsize=(4.5 * len(categories) + 1,
                                                                  3.8 * len(keys)), squeeze=False)
    fig.suptitle(f"Confusion matrices: {' vs '.join(categories)} (share of each true class)",
                 fontsize=12)
    for (stream, model), pair in zip(keys, axes):
        for ax, category in zip(pair, categories):
            part = cells[(cells["stream"] == stream) & (cells["model"] == model)
                         & (cells["category"] == category)]
            if part.empty:
                ax.set_visible(False)
                continue
            classes = list(dict.fromkeys(part["class"]))  # the summary's class order
            # Every class has its diagonal cell; a cell not written is a zero.
            counts = part.pivot(index="class", columns="predicted", values="value") \
                .loc[classes, classes].fillna(0).to_numpy()
            totals = counts.sum(axis=1, keepdims=True)
            share = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
            # Vector cells (not an embedded raster): sharp in the SVG and PDF of a paper; over
            # 100 classes, one raster rather than tens of thousands of cells.
            edges = np.arange(len(classes) + 1) - 0.5
            few = len(classes) <= ANNOTATED_CLASSES
            ax.pcolormesh(edges, edges, share, cmap="Blues", vmin=0, vmax=1,
                          rasterized=len(classes) > 5 * ANNOTATED_CLASSES)
            ax.invert_yaxis()
            ax.set_aspect("equal")
            ax.grid(False)
            if few:
                for (i, j), count in np.ndenumerate(counts):
                    ax.text(j, i, f"{int(count):,}", ha="center", va="center", fontsize=8,
                            color="white" if share[i, j] > 0.6 else "black")
            named = range(0, len(classes), -(-len(classes) // ANNOTATED_CLASSES))
            ax.set_xticks(named, [classes[i] for i in named], rotation=45 if few else 90,
                          ha="right" if few else "center")
            ax.set_yticks(named, [classes[i] for i in named])
            ax.set_xlabel("predicted class")
            ax.set_ylabel("true class")
            _title(ax, f"{stream} / {model}: {category}")
    return _png(plt, fig)


def _by_bin(rows, styles: tuple):
    """(colour, model, category, line style, its rows, their values by bin × metric) for each
    model's initial and final rows of a curve kept as summary rows (`bin` = the point)."""
    for i, model in enumerate(dict.fromkeys(rows["model"])):
        for category, style in zip(("initial", "final"), styles):
            part = rows[(rows["model"] == model) & (rows["category"] == category)]
            if not part.empty:
                yield i, model, category, style, part, part.pivot(
                    index="bin", columns="metric", values="value").sort_index()


def _positive_curves(run: RunFiles) -> dict:
    """Stream -> the ROC / precision-recall rows of its binary classifiers' positive class
    (`results.positive_class`), initial and final."""
    rows = run.summary[run.summary["metric"].isin(["roc_fpr", "roc_tpr", "pr_recall",
                                                   "pr_precision"])]
    positive = positive_class_rows(run.summary, run.positive_options)
    wanted = set(zip(positive["stream"], positive["model"], positive["class"]))
    rows = rows[np.array([(s, m, c) in wanted for s, m, c in
                          zip(rows["stream"], rows["model"], rows["class"])], dtype=bool)]
    return {stream: rows[rows["stream"] == stream] for stream in dict.fromkeys(rows["stream"])}


def _fig_roc_pr(plt, run: RunFiles):
    """Each binary stream's ROC curve and precision-recall curve of its positive class, per
    classifier, initial (solid) and final (dashed), with their areas in the legend."""
    curves = _positive_curves(run)
    fig, axes = _grid(plt, 2 * len(curves), "ROC and precision-recall curves of the positive "
                                            "class", width=5.0, height=4.6)
    for (stream, rows), (roc, pr) in zip(curves.items(), zip(axes[::2], axes[1::2])):
        for i, model, category, style, part, points in _by_bin(rows, ("-", "--")):
            area = run.summary[(run.summary["stream"] == stream)
                               & (run.summary["model"] == model)
                               & (run.summary["category"] == category)
                               & (run.summary["window"] == "cumulative")
                               & (run.summary["class"] == part["class"].iloc[0])]
            auc = area.set_index("metric")["value"]
            roc.plot(points["roc_fpr"], points["roc_tpr"], style, color=f"C{i}",
                     label=f"{model} {category} (AUC {auc.get('roc_auc', math.nan):.3f})")
            pr.plot(points["pr_recall"], points["pr_precision"], style, color=f"C{i}",
                    label=f"{model} {category} (AP {auc.get('average_precision', math.nan):.3f})")
        positive = rows["class"].iloc[0]
        roc.plot([0, 1], [0, 1], color="0.6", linewidth=0.8, linestyle=":")
        for ax, title, (xlabel, ylabel) in (
                (roc, "ROC", ("false positive rate", "true positive rate")),
                (pr, "precision-recall", ("recall", "precision"))):
            ax.set_xlim(0, 1.02)
            ax.set_ylim(0, 1.02)
            ax.set_aspect("equal")
            _title(ax, f"{stream}: {title} of {positive}")
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            _legend(ax)
    return _png(plt, fig)


def _fig_reliability(plt, run: RunFiles):
    """The reliability diagram of each stream: per classifier, the accuracy of its top class
    against its mean confidence in each confidence bin, initial (solid) and final (dashed),
    marker area by the bin's labels; the diagonal is perfect calibration."""
    rows = run.summary[run.summary["metric"].isin(["reliability_confidence",
                                                   "reliability_accuracy"])]
    streams = list(dict.fromkeys(rows["stream"]))
    fig, axes = _grid(plt, len(streams), "Reliability: accuracy vs confidence of the top class",
                      width=5.0, height=4.6)
    for ax, stream in zip(axes, streams):
        mine = rows[rows["stream"] == stream]
        ax.plot([0, 1], [0, 1], color="0.6", linewidth=0.8, linestyle=":")
        for i, model, category, style, part, points in _by_bin(mine, ("-o", "--s")):
            labels = part[part["metric"] == "reliability_accuracy"].set_index("bin")["n"]
            ax.plot(points["reliability_confidence"], points["reliability_accuracy"], style,
                    color=f"C{i}", linewidth=1.2, markersize=3, label=f"{model} {category}")
            ax.scatter(points["reliability_confidence"], points["reliability_accuracy"],
                       s=12 + 60 * labels.loc[points.index] / max(labels.max(), 1),
                       color=f"C{i}", alpha=0.35)
        ax.set_xlim(0, 1.02)
        ax.set_ylim(0, 1.02)
        ax.set_aspect("equal")
        _label_axis(ax, stream, "accuracy")
        ax.set_xlabel("mean confidence of the top class")
        _legend(ax)
    return _png(plt, fig)


def _fig_resources(plt, run: RunFiles):
    """Each model's cost over T (--resources): its size, and the CPU seconds spent learning
    (solid) and predicting (dashed), one pair of panels per stream."""
    fig, axes = plt.subplots(len(run.streams), 2, figsize=(11.0, 3.6 * len(run.streams)),
                             squeeze=False)
    fig.suptitle("Cost of each model over T", fontsize=12)
    for (size_ax, cpu_ax), stream in zip(axes, run.streams):
        for i, model in enumerate(run.models):
            x, y = run.curve(stream, model, "resources", "model_bytes")
            size_ax.plot(x, y / 1024, "-o", color=f"C{i}", markersize=3, label=model)
            for metric, style in (("learn_cpu_seconds", "-"), ("predict_cpu_seconds", "--")):
                x, y = run.curve(stream, model, "resources", metric)
                cpu_ax.plot(x, y, style, color=f"C{i}",
                            label=f"{model} {metric.split('_')[0]}")
        _label_axis(size_ax, stream, "model size (KiB)")
        _label_axis(cpu_ax, stream, "CPU seconds (cumulative)")
        _legend(cpu_ax)
    return _png(plt, fig)


def _num(v) -> float:
    return math.nan if v is None else float(v)


def _why_no_comparison(run: RunFiles) -> str:
    """Why a run has no comparison rows: fewer than two models of a task, or none of its pairs
    scored an instance in common."""
    if max(Counter(map(run.task, run.models)).values(), default=0) < 2:
        return "needs two or more models"
    return ("the models scored no instance in common (a pair is compared on the instances "
            "both predicted; a backfill's model versions may each have served other requests)")


# The largest value a figure draws: an axis scaled near the floats' end (1.8e308) overflows.
LARGEST_DRAWN = 1e300


def _drawable(run: RunFiles) -> RunFiles:
    """The run with the values no axis can scale to as NaN, which a line leaves out: ∞ (a
    regressor's error whose square is beyond the floats: an RMSE of ∞) and values near it.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"value": [1.0, math.inf, 1e308]})
    >>> _drawable(RunFiles("out", frame, frame, {}, {}, frame)).curves["value"].tolist()
    [1.0, nan, nan]
    """
    def drawn(frame):
        if "value" not in frame.columns or not (frame["value"].abs() > LARGEST_DRAWN).any():
            return frame
        return frame.assign(value=frame["value"].where(frame["value"].abs() <= LARGEST_DRAWN))

    return replace(run, summary=drawn(run.summary), curves=drawn(run.curves),
                   segments=drawn(run.segments))


def figures(run: RunFiles, processes: int = 1) -> tuple[list[Figure], list[str]]:
    """Draw every figure the run's files allow; returns (figures, notes on the missing).
    With `processes` > 1 the figures are shared out among this process and others, which read
    the run's files themselves (`drawn_in_processes`): `run` must be as `RunFiles.read(run.out)`
    reads it.

    Example
    -------

    >>> import tempfile
    >>> from pipelines.config import RunConfig
    >>> from pipelines.job import run
    >>> out = tempfile.mkdtemp()
    >>> _ = run(RunConfig(streams=['s=synth:SEA{"n": 300, "seed": 1}'], models=["no-change"],
    ...                   delay="20", out=out, curve_every=100, quiet=True))
    >>> from pipelines.run_files import RunFiles
    >>> made, notes = figures(RunFiles.read(out))
    >>> [f.name for f in made][:3], sorted(made[0].files)
    (['initial_final', 'binned', 'weights'], ['pdf', 'png', 'svg'])

    """
    plt = _pyplot()
    made, notes = [], []
    run = _drawable(run)
    classifiers = [m for m in run.models if run.task(m) == "classification"]
    has = set(run.curves["category"]) | set(run.summary["category"])

    draws = []

    def add(name, title, reading, draw, needs=True, why=""):
        if needs:
            made.append(Figure(name, title, reading))
            draws.append(draw)
        else:
            notes.append(f"{title}: {why}")

    fewer = _fewer_at_arrival(run) if run.has_final else None
    add("initial_final", "Initial vs final over T" if run.has_final else "Initial over T",
        "Each model's cumulative accuracy (MAE for regressors) of its initial predictions, "
        "made when an instance arrived (solid), and of its final ones, made just before the "
        "label arrived (dashed). The gap is what the delay costs: a test-then-train score "
        "(final) overstates what the model delivered when the prediction was needed." + (
            f" The initial scores rest on fewer labels ({fewer}): a model answers none for an "
            f"instance that arrives before it has learned a label, and answers it later."
            if fewer else "")
        if run.has_final else
        "Each model's cumulative accuracy (MAE for regressors) of its initial predictions, "
        "made when an instance arrived. No final prediction (just before the label) was "
        "scored: the run had --no-final, or the log holds none.",
        _fig_initial_final)
    add("binned", "Binned performance Λ(T, b)",
        "For every bin of the latency period (0: at arrival, B+1: just before the label), the "
        "accuracy (MAE for regressors) of the predictions standing in that bin, over the "
        "labels of the stream that have one there. A rising accuracy (a falling MAE) means "
        "re-predicting pending instances pays off while they wait." + (
            f" Later bins rest on more labels than bin 0 ({fewer}): an instance that arrived "
            f"before the model had learned a label has no initial prediction and joins the "
            f"bins from its first re-prediction on, with a model that knew little, so part of "
            f"a change along b is theirs." if fewer else ""),
        _fig_binned, run.bins > 0, "needs re-evaluation (--repredict, not none)")
    add("weights", "Weights of Ψα",
        "How Ψα weighs the bins: α = 1 weighs them all alike; a larger α favours the "
        "predictions available early in the latency period.",
        _fig_weights, run.bins > 0 and bool(run.alphas), "needs re-evaluation and --alpha")
    add("intermediate", "Initial, Ψα and final over T",
        "Ψα summarises the whole latency period in one number; it lies between the initial "
        "and the final curve when re-predictions improve on the initial ones.",
        _fig_intermediate, "intermediate" in has, "needs re-evaluation (--repredict)")
    add("forgetting", "Prequential error: cumulative vs windows vs fading",
        "The cumulative error remembers the whole stream; sliding windows (w=W) and fading "
        "factors (fading=A) forget the past and follow the current error, as a holdout "
        "estimate would; the grey steps are the error within each curve period alone. With "
        "--holdout, the red points are the holdout error of the model as it stood at each "
        "point, on instances it never learned: on a stationary stream the windowed and faded "
        "errors converge to it, the cumulative one stays above (Gama et al. 2009). Add views "
        "with --window and --fading.",
        _fig_forgetting)
    add("comparison", "Q statistic and McNemar over T",
        "For each pair A vs B: Q > 0 when B has made fewer errors (log ratio of cumulative "
        "losses); the signed McNemar statistic (classifiers: it counts errors), or for "
        "regressors the Diebold-Mariano statistic of the squared errors, is significant at "
        "0.99 outside the dotted lines.",
        _fig_comparison, "comparison" in has, _why_no_comparison(run))
    add("drift", "Error rate, Page-Hinkley alarms and known drifts",
        "The error within each curve period, the Page-Hinkley alarms (▼, at the label that "
        "raised them) and, for generated streams with a drift chain, the true drift points. "
        "An alarm soon after a dashed line is a detection; others are false alarms.",
        _fig_drift, "drift" in has, "needs drift detection (--drift-on initial or final)")
    add("confusion", "Confusion matrices, initial vs final" if run.has_final else
        "Confusion matrices, initial",
        "Rows are true classes, columns predicted ones; each cell counts the labels, shaded by "
        "its share of the row. The diagonal's shade is each class's recall: a rare class "
        "whose row sits in another column is one the model does not find, whatever the "
        "accuracy.",
        _fig_confusion, bool(classifiers) and "confusion" in set(run.summary["metric"]),
        "needs a classification model")
    add("reliability", "Calibration: reliability diagram",
        "Each point is a confidence bin of the top class's probability: its mean confidence "
        "against how often that class was right (larger points hold more labels). On the "
        "dotted diagonal the probabilities mean what they say; below it the model is "
        "over-confident. The expected calibration error (ece) is the labels-weighted gap.",
        _fig_reliability, "reliability_accuracy" in set(run.summary["metric"]),
        "needs a classifier with class probabilities (predict_proba_one)")
    add("roc_pr", "ROC and precision-recall curves",
        "For a binary task, how the positive class is found as the threshold on its probability "
        "falls: the ROC curve (true against false positive rate; the diagonal is guessing) and "
        "the precision-recall curve (what share of the flagged are positive, against the share "
        "of positives found), initial (solid) and final (dashed). With rare positives read the "
        "precision-recall curve: ROC stays flattering.",
        _fig_roc_pr, bool(_positive_curves(run)),
        "needs --auc and a binary classifier with class probabilities")
    add("resources", "Cost of each model",
        "The model's size (river's deep size of the object) and the CPU seconds its thread "
        "spent learning and predicting (re-predictions included), at every curve point. "
        "A size that keeps growing is a model that keeps growing; RAM-hours (in the summary) "
        "weigh the size by the time spent, as MOA does. These numbers vary from run to run.",
        _fig_resources, "resources" in set(run.summary["category"]),
        "needs --resources")
    add("profile", "Temporal dependence",
        "Δ(ℓ) > 0 means a class is more likely to repeat after a run of length ℓ than after "
        f"one of length ℓ+1 (hollow points rest on fewer than {FEW_RUNS} such runs: mostly "
        "noise); when Persistent (predict the previous label) beats Majority and the labels "
        f"repeat beyond chance (the profile's 'repeats by chance' below {REPEATS_LEVEL}), the "
        "stream has temporal dependence and κ_per is the fairer yardstick.",
        _fig_profile, bool(classifiers and run.profiles), "needs a classification model")
    files = drawn_in_processes(plt, run, draws, processes) if processes > 1 else \
        [draw(plt, run) for draw in draws]
    return [replace(figure, files=f) for figure, f in zip(made, files)], notes


# A run's figures are shared out among processes from this many panels (streams × models):
# another process costs ~2.5 s to start (its imports, the run's files read again), and a
# panel ~1.2 s to draw in every format; each process holds a figure's image at a time
# (~1 GB for 60 panels).
PANELS_SHARED, MOST_PROCESSES = 8, 4


def processes_for(run: RunFiles) -> int:
    """How many processes draw `run`'s figures (`figures`): one for a run of fewer than
    `PANELS_SHARED` panels, else one per core, at most `MOST_PROCESSES`.

    >>> import pandas as pd
    >>> frame = pd.DataFrame()
    >>> few = {"streams": ["s1", "s2"], "models": ["a", "b", "c"]}
    >>> processes_for(RunFiles("out", frame, frame, {}, few, frame))
    1
    """
    from runners import cores

    panels = len(run.streams) * len(run.models)
    return 1 if panels < PANELS_SHARED else max(1, min(cores(), MOST_PROCESSES))


def drawn_in_processes(plt, run: RunFiles, draws: list, processes: int) -> list[dict]:
    """Each of `draws` (the `_fig_*` functions) drawn from `run` ({format: bytes}, as `_png`
    makes them) by this process and `processes` − 1 Python processes started here (`python
    -m pipelines.figures`), each reading the run's files itself: each process takes the next
    figure no other has taken (`_claimed`) and writes its files to a temporary folder. A
    figure's drawing is the same in any process; one that another process did not finish is
    drawn here.

    >>> import tempfile
    >>> from pipelines.config import RunConfig
    >>> from pipelines.job import run
    >>> out = tempfile.mkdtemp()
    >>> _ = run(RunConfig(streams=['s=synth:SEA{"n": 300, "seed": 1}'], models=["no-change"],
    ...                   delay="20", out=out, curve_every=100, quiet=True))
    >>> files = _drawable(RunFiles.read(out))
    >>> plt = _pyplot()
    >>> drawn = drawn_in_processes(plt, files, [_fig_weights, _fig_drift], 2)
    >>> drawn == [_fig_weights(plt, files), _fig_drift(plt, files)]
    True
    """
    from pipelines.files import read_bytes  # (not in the other processes: Beam's import)

    names = [draw.__name__ for draw in draws]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [root, os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory(prefix="delayed-eval-figures-") as folder:
        others = []
        try:
            for _ in range(min(processes, len(draws)) - 1):
                try:
                    others.append(subprocess.Popen(
                        [sys.executable, "-m", "pipelines.figures", run.out, folder, *names],
                        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL))
                except OSError:  # (no Python to start: an embedded interpreter)
                    break
            files = {name: draw(plt, run) for name, draw in zip(names, draws)
                     if _claimed(folder, name)}
            for other in others:
                other.wait()
        finally:
            for other in others:
                other.kill()
                other.wait()
        for name, draw in zip(names, draws):
            if name not in files:
                paths = {fmt: os.path.join(folder, f"{name}.{fmt}") for fmt in FORMATS}
                done = os.path.exists(os.path.join(folder, f"{name}.done"))
                files[name] = {fmt: read_bytes(path) for fmt, path in paths.items()} \
                    if done else draw(plt, run)
    return [files[name] for name in names]


def _claimed(folder: str, name: str) -> bool:
    """Whether this process takes figure `name`: the first to create its claim in `folder`
    (`O_EXCL`: one process of all succeeds)."""
    try:
        os.close(os.open(os.path.join(folder, f"{name}.claim"), os.O_CREAT | os.O_EXCL))
        return True
    except FileExistsError:
        return False


def _draw_to(out: str, folder: str, names: list[str]) -> None:
    """What a process of `drawn_in_processes` does: draw each figure of `names` (`_fig_*`)
    of the run in `out` that no other process has claimed, and write it to `folder`
    (`save_figure`), then NAME.done."""
    plt = _pyplot()
    run = _drawable(RunFiles.read(out))
    for name in names:
        if not name.startswith("_fig_"):
            raise ValueError(f"no figure {name!r}")
        if _claimed(folder, name):
            save_figure(globals()[name](plt, run), folder, name)
            save_figure({"done": b""}, folder, name)


if __name__ == "__main__":
    from pipelines import figures as _figures  # (the module the report imports, not __main__)

    _figures._draw_to(sys.argv[1], sys.argv[2], sys.argv[3:])
