"""`delayed-eval report DIR`: the figures of the papers (PNG, SVG, PDF) and one self-contained
HTML page (figures embedded as data URIs, no external assets), from a finished run's files.

Each figure is drawn from `summary.csv`, `curves.parquet`, `profile.json` and `manifest.json`
only, so a report can be made again at any time, on any machine, without re-running.
Figures that need something the run did not compute (re-evaluation, a second model, windows)
are left out with a note saying which option adds them.
"""

from __future__ import annotations

import base64
import html
import itertools
import json
import math
import os

import pandas as pd
from apache_beam.io.filesystems import FileSystems

from pipelines.figures import Figure, figures, processes_for, save_figure
from pipelines.files import local_copy, names_below
from pipelines.maturity import format_maturity
from pipelines.notices import (format_alike_classes, format_diverged, format_foreign_predictions,
                               format_log_notices, format_odd_classes, format_one_time_window,
                               format_set_asides_of_run, format_unheld,
                               format_unrepredicted)
from pipelines.rank import format_test, left_out, rank_runs
from pipelines.results import record_outputs, refuse_unlisted
from pipelines.run_files import RunFiles
from pipelines.tables import (COMPARISON_CAPTION, RESOURCES_CAPTION, comparison_table,
                              drift_delay_table, format_value, resources_table, segment_table,
                              summary_table)
from transforms.errors import ConfigError

FIGURES = "figures"
DEAD_LETTERS_SHOWN = 20  # the first of them, as dead_letters.jsonl has them


def _table_html(df: pd.DataFrame, float_format=format_value) -> str:
    """A table for the page; a plain row count is no column of it."""
    plain = isinstance(df.index, pd.RangeIndex)
    return df.to_html(float_format=float_format, na_rep="–", border=0,
                      classes="results", index=not plain)


# The counts of a stream × model that the page always shows, then those shown where any is
# not 0: together they add up (docs/semantics.md): instances = labelled + pending at the end
# + refused + model errors + held out; labels = labelled + orphans + refused + held out; a
# labelled instance's initial (and final) prediction is scored or unscored; the rows to
# pretrain on were pretrained on or set aside.
_COUNTS = ["instances", "labels", "labelled", "pending_at_end", "scored_initial",
           "unscored_initial", "scored_final", "unscored_final"]
_COUNTS_IF_ANY = ["refused_instances", "model_errors", "held_out", "orphan_labels",
                  "refused_labels", "held_out_labels", "dead_letters", "pretrained",
                  "pretrain_set_aside"]
_READ_COUNTS = ["instance_events", "update_events", "label_events", "dead_letters",
                "outside_range"]
_READ_COUNTS_IF_ANY = ["pretrain_events"]


def _counts_table(manifest: dict) -> pd.DataFrame:
    """Per stream × model, the counts that add up (`_COUNTS`, and `_COUNTS_IF_ANY` where one
    is not 0).

    >>> _counts_table({"counts": [{"stream": "s", "model": "m", "instances": 5, "labels": 4,
    ...     "labelled": 4, "pending_at_end": 0, "scored_initial": 3, "unscored_initial": 1,
    ...     "scored_final": 4, "unscored_final": 0, "refused_instances": 1,
    ...     "model_errors": 0}]}).columns.tolist()[-2:]
    ['unscored_final', 'refused_instances']
    """
    counts = pd.DataFrame(manifest.get("counts", []),
                          columns=["stream", "model", *_COUNTS, *_COUNTS_IF_ANY])
    shown = [c for c in _COUNTS_IF_ANY if counts[c].fillna(0).ne(0).any()]
    return counts[["stream", "model", *_COUNTS, *shown]]


def _read_table(manifest: dict) -> pd.DataFrame:
    """Per stream, what its rows were read as: events (the rows to pretrain on where there
    are any), or dead letters set aside as read.

    >>> _read_table({"streams": {"s": {"read": {"instance_events": 9, "pretrain_events": 1}}}}
    ...             ).columns.tolist()[-2:]
    ['outside_range', 'pretrain_events']
    """
    read = pd.DataFrame([{"stream": name, **{c: s.get("read", {}).get(c, 0)
                                            for c in (*_READ_COUNTS, *_READ_COUNTS_IF_ANY)}}
                         for name, s in manifest.get("streams", {}).items()],
                        columns=["stream", *_READ_COUNTS, *_READ_COUNTS_IF_ANY])
    return read[["stream", *_READ_COUNTS, *(c for c in _READ_COUNTS_IF_ANY
                                            if read[c].fillna(0).ne(0).any())]]


def _profile_table(profiles: dict) -> pd.DataFrame:
    rows = [{"stream": s, "labels": p["labels"], "classes": p["classes"],
             "P(M) majority": p["p_majority"], "P(T) same as previous": p["p_same"],
             "repeats by chance": p.get("repeats_by_chance", math.nan)}  # (older runs: none)
            for s, p in profiles.items() if p.get("labels")]
    return pd.DataFrame(rows)


def _delays(manifest: dict) -> str:
    """Each stream's delay (one, when they share it), as the manifest records them.

    >>> _delays({"streams": {"a": {"delay": "1000"}, "b": {"delay": "input"}}})
    'a: 1000; b: input'
    """
    delays = {name: s.get("delay") for name, s in manifest.get("streams", {}).items()}
    if len(set(delays.values())) == 1:
        return str(next(iter(delays.values())))
    return "; ".join(f"{name}: {d}" for name, d in delays.items())


def _dead_letters_html(out: str, total: int) -> list[str]:
    """The first `DEAD_LETTERS_SHOWN` dead letters, each with where it was, why, and what was
    read, so the page shows what was set aside, not only how much."""
    path = os.path.join(out, "dead_letters.jsonl")
    if not total or not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        first = [json.loads(line) for line in itertools.islice(f, DEAD_LETTERS_SHOWN)]
    table = pd.DataFrame(first).astype(object)
    if "record" in table:
        table["record"] = [None if r is None else json.dumps(r, ensure_ascii=False)
                           for r in table["record"]]
    table = table[[c for c in ("stream", "model", "file", "row", "field", "reason", "record")
                   if c in table and table[c].notna().any()]]
    return [f"<p>The first {len(first)} of {total:,} dead letters (<code>dead_letters.jsonl"
            f"</code> has them all):</p>", _table_html(table)]


def _maturity_html(out: str, maturity: dict) -> list[str]:
    """A backfill's label maturity, where instances still wait for their labels: per stream
    what the command printed, how far each proportion may still move, and maturity.csv."""
    waiting = {stream: m for stream, m in maturity.items() if m.get("pending")}
    if not waiting:
        return []
    bounds = pd.DataFrame([(stream, measure, bound) for stream, m in waiting.items()
                           for measure, bound in (m.get("may_move_by") or {}).items()],
                          columns=["stream", "measure", "may move by at most"])
    parts = ["<h2>Label maturity</h2>",
             *[f"<p>{html.escape(format_maturity(s, m))}.</p>" for s, m in waiting.items()]]
    if not bounds.empty:
        parts += ["<p>The most each proportion can still move, whatever the labels still to "
                  "come (over the models, initial and final):</p>", _table_html(bounds)]
    days = os.path.join(out, "maturity.csv")
    if os.path.exists(days):
        parts += ["<p>Per arrival day (<code>maturity.csv</code>):</p>",
                  _table_html(pd.read_csv(days, dtype={"stream": str, "date": str}),
                              "{:g}".format)]
    return parts


def _across_streams_html(run: RunFiles) -> list[str]:
    """For a run of 2 streams or more and 2 models or more: each model's mean and average rank
    over the streams of its initial and final primary measure (`rank_runs` of the run), and
    the test's verdict."""
    if len(run.streams) < 2 or len(run.models) < 2:
        return []
    columns, lines = {}, []
    for category in ("initial", "final") if run.has_final else ("initial",):
        try:
            result = rank_runs([run.out], category=category)
        except ConfigError:  # (a classifier and a regressor on streams of their own)
            lines.append(f"The {category} measures are not ranked: fewer than 2 models have "
                         f"the same one on 2 streams or more.")
            continue
        measure = f"{category} {result['metric']}"
        columns[f"{measure}: mean"] = result["means"]
        columns[f"{measure}: average rank"] = {model: f"{rank:.2f}" for model, rank in
                                                result["average_ranks"].items()}
        lines.append("; ".join([f"{measure.capitalize()} over {result['streams']} streams: "
                                f"{format_test(result)}", *left_out(result)]))
    table = pd.DataFrame(columns)
    table = table.reindex(sorted(table.index, key=lambda m: (
        run.models.index(m) if m in run.models else len(run.models), m))).rename_axis("model")
    esc = html.escape
    return ["<h2>Across streams</h2>",
            "<p>Each model's mean over the streams and its average rank (on each stream the "
            "best is 1, ties share their ranks; Demšar 2006). <code>delayed-eval rank "
            "DIR</code> writes each stream's ranks and, for three models or more, the "
            "critical-difference diagram.</p>",
            *([_table_html(table)] if columns else []),
            "<ul>", *[f"<li>{esc(line)}</li>" for line in lines], "</ul>"]


def _render_html(run: RunFiles, made: list[Figure], notes: list[str]) -> str:
    """The report page: the run's facts, the summary, the Page-Hinkley and profile tables, the
    counts, and the figures embedded as PNG data, with the figures not drawn and why.
    """
    m = run.manifest
    esc = html.escape
    facts = [("run", m.get("run_id")), ("finished", m.get("finished")),
             ("streams", ", ".join(run.streams)), ("models", ", ".join(run.models)),
             ("delay", _delays(m)), ("re-prediction", m.get("repredict")),
             ("bins B", m.get("bins")), ("replay", m.get("replay")),
             ("dead letters", m.get("dead_letters"))]
    if m.get("log_dead_letters"):
        facts.append(("of which prediction log lines", m["log_dead_letters"]))
    if m.get("log_rows_not_scored"):
        facts.append(("log rows not scored (stream / model not configured)", ", ".join(
            f"{key} {n:,}" for key, n in m["log_rows_not_scored"].items())))
    if m.get("alike_classes"):
        facts.append(("classes alike", format_alike_classes(m["alike_classes"],
                                                            m.get("replay") == "backfill")))
    notices = "\n".join(filter(None, [
        format_set_asides_of_run(m.get("set_aside_by_the_logs_run") or {}),
        format_log_notices([((c["stream"], c["model"]), c) for c in m.get("counts", [])])]))
    facts += [("prediction log", line) for line in notices.splitlines()]
    facts += [("diverged", line) for line in format_diverged(run.summary).splitlines()]
    facts += [("time window", line) for line in format_one_time_window(run.summary).splitlines()]
    facts += [("no label's class", line) for line in format_foreign_predictions(
        run.summary, m.get("replay") == "backfill").splitlines()]
    facts += [("odd class", line) for line in format_odd_classes(run.summary).splitlines()]
    if m.get("replay") != "backfill" and m.get("repredict") not in (None, "none"):
        facts += [("not re-predicted", line) for line in format_unrepredicted(
            m.get("counts", []), m["repredict"]).splitlines()]
    if m.get("replay") != "backfill" and (m.get("config") or {}).get("holdout"):
        facts += [("no holdout", line) for line in format_unheld(
            m.get("counts", []), m["config"]["holdout"]).splitlines()]
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>delayed-eval report {esc(str(m.get('run_id')))}</title>",
        "<style>body{font-family:sans-serif;max-width:1200px;margin:2em auto;color:#222}"
        "table.results{border-collapse:collapse;font-size:0.9em}"
        "table.results td,table.results th{padding:2px 8px;border-bottom:1px solid #ddd;"
        "text-align:right}img{max-width:100%}figure{margin:1.5em 0}"
        "figcaption{color:#444;max-width:900px}</style></head><body>",
        "<h1>delayed-eval report</h1><ul>",
        *[f"<li><b>{esc(k)}</b>: {esc(str(v))}</li>" for k, v in facts],
        "</ul>",
        *_across_streams_html(run),
        "<h2>Summary (layout of Table II)</h2>",
        "<p>Per stream and measure: initial, the middle bin, final and Ψα per metric; one "
        "column per model.</p>",
        _table_html(summary_table(run.summary, run.positive_options)),
    ]
    segments = segment_table(pd.concat([run.summary, run.segments]), run.positive_options)
    if not segments.empty:
        parts += ["<h2>Segments</h2>",
                  "<p>Each --segment slice scored as a stream of its own: its scored labels, "
                  "the initial and final accuracy (regression: MAE) and, for a binary task, "
                  "the positive class's initial precision and recall, each proportion with its "
                  "Wilson 95 % interval [low, high].</p>", _table_html(segments)]
    comparisons = comparison_table(run.summary)
    if not comparisons.empty:
        parts += ["<h2>Comparisons</h2>", f"<p>{html.escape(COMPARISON_CAPTION)}.</p>",
                  _table_html(comparisons)]
    delays = drift_delay_table(run.summary)
    if not delays.empty:
        parts += ["<h2>Page-Hinkley: detection of the known drifts</h2>",
                  "<p>Per drift and fading factor of the detector (1 − α; 0: no fading): "
                  "instances from the drift to the alarm that detects it, and the false "
                  "alarms before the next drift.</p>",
                  _table_html(delays)]
    resources = resources_table(run.summary)
    if not resources.empty:
        parts += ["<h2>Resources</h2>", f"<p>{html.escape(RESOURCES_CAPTION)}.</p>",
                  _table_html(resources)]
    profile = _profile_table(run.profiles)
    if not profile.empty:
        parts += ["<h2>Stream profile</h2>", _table_html(profile)]
    parts += ["<h2>Counts</h2><p>Nothing is dropped silently. Each stream's rows are read as "
              "events or set aside as dead letters (<code>dead_letters.jsonl</code> names "
              "each one's file, row, field and reason):</p>",
              _table_html(_read_table(m), "{:g}".format),
              *_dead_letters_html(run.out, m.get("dead_letters") or 0),
              "<p>Per stream and model, instances = labelled + pending at the end (+ refused, "
              "model errors, held out), labels = labelled (+ orphans, refused, held out), "
              "and each labelled instance's initial and final prediction is scored or "
              "unscored (there was none: a model answers none before it has learned a "
              "label; a backfill's log may hold none):</p>",
              _table_html(_counts_table(m), "{:g}".format)]
    parts += _maturity_html(run.out, m.get("maturity") or {})
    parts.append("<h2>Figures</h2>")
    for f in made:
        data = base64.b64encode(f.files["png"]).decode("ascii")
        parts += [f"<figure id='{f.name}'><h3>{esc(f.title)}</h3>",
                  f"<img alt='{esc(f.title)}' src='data:image/png;base64,{data}'>",
                  f"<figcaption>{esc(f.reading)}</figcaption></figure>"]
    if notes:
        parts += ["<h3>Not drawn</h3><ul>", *[f"<li>{esc(n)}</li>" for n in notes], "</ul>"]
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(out: str) -> str:
    """Write `out/report.html` and the figures (`out/figures/NAME.png`, `.svg`, `.pdf`) for
    the finished run in `out`; returns the HTML file's path.

    Parameters
    ----------
    out
        A finished run's output directory, here or on another filesystem (gs://, s3://: the
        files the report reads are copied here, and what it writes is copied there).

    >>> import tempfile
    >>> from pipelines.config import RunConfig
    >>> from pipelines.job import run
    >>> out = tempfile.mkdtemp()
    >>> _ = run(RunConfig(streams=['synth:SEA{"n": 400, "seed": 1}'], models=["no-change"],
    ...                   delay="20", out=out, curve_every=100, quiet=True))
    >>> os.path.basename(write_report(out)), sorted(os.listdir(os.path.join(out, "figures")))[:2]
    ('report.html', ['binned.pdf', 'binned.png'])

    References
    ----------
    Grzenda, M., Gomes, H. M., Bifet, A. (2020). Performance measures for evolving
    predictions under delayed labelling classification. International Joint Conference on
    Neural Networks (IJCNN).

    Gama, J., Sebastião, R., Rodrigues, P. P. (2009). Issues in evaluation of stream
    learning algorithms. Proceedings of the 15th ACM SIGKDD International Conference on
    Knowledge Discovery and Data Mining, 329–338.
    """
    if "://" in out:
        made_before = [f"{FIGURES}/{name}" for name in names_below(FileSystems.join(out,
                                                                                FIGURES))]
        with local_copy(out, [*RunFiles.READS, "report.html", *made_before]) as here:
            write_report(here)
        return FileSystems.join(out, "report.html")
    run = RunFiles.read(out)
    made, notes = figures(run, processes_for(run))
    written = ["report.html", *(f"{FIGURES}/{f.name}.{fmt}" for f in made for fmt in f.files)]
    refuse_unlisted(out, written)
    record_outputs(out, written, claim=True)  # (a report stopped half-way is remade, not refused)
    folder = os.path.join(out, FIGURES)
    os.makedirs(folder, exist_ok=True)
    for f in made:
        save_figure(f.files, folder, f.name)
    path = os.path.join(out, "report.html")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(_render_html(run, made, notes))
    os.replace(tmp, path)
    record_outputs(out, written)
    return path
