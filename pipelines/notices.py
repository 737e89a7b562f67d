"""The notices a run prints after its table (the report shows them too): what the numbers
alone would not tell — classes written two ways, predictions set aside, a log's unmatched
rows, diverged regressors, a time window holding the whole stream, a hash seed left
unfixed."""

from __future__ import annotations

import math

import pandas as pd

from pipelines.results import whole_streams
from transforms.errors import shown_briefly
from transforms.replay.protocols import Holdout, comparable_pairs
from transforms.streams.rows import na_values_option, number_in
from transforms.vocabulary import pair_name


def _alike_for_streams(lines: list[tuple[str, str]]) -> str:
    """(stream, what) pairs as lines, one per distinct `what` naming its streams in the order
    they came: a run of many streams says a thing once, not once per stream.

    >>> print(_alike_for_streams([("s1", "x"), ("s2", "y"), ("s3", "x"), ("s4", "x")]))
    s1, s3 and s4: x
    s2: y
    """
    streams: dict = {}
    for stream, what in lines:
        streams.setdefault(what, []).append(stream)
    return "\n".join(
        (f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else names[0]) +
        f": {what}" for what, names in streams.items())


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
    the model most likely diverged, as river's linear models do (alone, or in a tree's leaves)
    on features of large or mixed scale: put 'standard-scaler |' before it, or lower its
    learning rate
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
                         f"deviation): the model most likely diverged, as river's linear "
                         f"models do (alone, or in a tree's leaves) on features of large or "
                         f"mixed scale: put 'standard-scaler |' before it, or lower its "
                         f"learning rate")
    return "\n".join(lines)


def format_one_time_window(summary: pd.DataFrame) -> str:
    """A line per `--time-window` naming the streams whose last such window holds every label
    each model scored: its rows only repeat the cumulative ones (a stream without event times
    has its instances one second apart, so an hour is 3 600 instances); or ''.

    >>> summary = pd.DataFrame({"stream": "sea", "segment": None, "category": "initial",
    ...     "class": None, "metric": "accuracy", "model": "nb", "value": 0.9,
    ...     "window": ["cumulative", "time=1h", "time=10min"], "n": [2900, 2900, 580]})
    >>> print(format_one_time_window(summary))  # doctest: +NORMALIZE_WHITESPACE
    sea: every label falls in the last --time-window 1h, so the rows (window time=1h) repeat
    the cumulative ones; give a shorter window (without event times a stream's instances
    are one second apart: 1h is 3 600 of them)
    """
    whole = whole_streams(summary)
    scored = whole[(whole["category"] == "initial") & whole["metric"].isin(["accuracy", "mae"])]
    lines = []
    for stream, rows in scored.groupby("stream", sort=False):
        whole_n = rows[rows["window"] == "cumulative"].set_index("model")["n"]
        for window, part in rows[rows["window"].str.startswith("time=")].groupby(
                "window", sort=False):
            n = part.set_index("model")["n"]
            if (n > 0).all() and n.eq(whole_n.reindex(n.index)).all():
                size = window.removeprefix("time=").split("/")[0]
                lines.append((stream, f"every label falls in the last --time-window "
                                      f"{size}, so the rows (window {window}) repeat the "
                                      f"cumulative ones; give a shorter window (without event "
                                      f"times a stream's instances are one second apart: 1h "
                                      f"is 3 600 of them)"))
    return _alike_for_streams(lines)


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


def format_odd_classes(summary: pd.DataFrame) -> str:
    """A line per stream whose classes are numbers but for text classes of a few labels (at
    most 1 in 100; '#VALUE!', '?': a gap as a spreadsheet or an export writes it): each is
    counted as a class of its own, which the measures do not show; or ''.

    >>> summary = pd.DataFrame({"stream": "s", "segment": None, "category": "initial",
    ...                         "window": "cumulative", "metric": "confusion", "model": "m",
    ...                         "class": ["0", "0", "1", "#VALUE!"],
    ...                         "predicted": ["0", "1", "1", "1"],
    ...                         "value": [1500.0, 20.0, 1478.0, 2.0]})
    >>> print(format_odd_classes(summary))  # doctest: +NORMALIZE_WHITESPACE
    s: class '#VALUE!' (2 of its 3,000 labels) is text among classes that are numbers ('0',
    '1'): it is counted as a class of its own; if it means no label, name it with the
    stream option {"na_values": ["#VALUE!"]}
    """
    whole = whole_streams(summary)
    cells = whole[(whole["metric"] == "confusion") & (whole["category"] == "initial")
                  & (whole["window"] == "cumulative")]
    lines = []
    for stream, rows in cells.groupby("stream", sort=False):
        rows = rows[rows["model"] == rows["model"].iloc[0]]  # (every model has the labels)
        labels = rows.groupby(rows["class"].astype(str), sort=False)["value"].sum()
        numbers = [c for c in labels.index if number_in(c) is not None]
        odd = [c for c in labels.index if number_in(c) is None]
        few = labels[odd].sum() if odd else 0
        if len(numbers) >= 2 and odd and few <= labels.sum() / 100:
            one = len(odd) == 1
            option = na_values_option(odd)
            fix = f"name {'it' if one else 'them'} with the stream option {option}" if option \
                else f"empty {'its' if one else 'their'} cells"
            lines.append(f"{stream}: class{'' if one else 'es'} {_some(odd)} ({int(few):,} of "
                         f"its {int(labels.sum()):,} labels) {'is' if one else 'are'} text "
                         f"among classes that are numbers ({_some(numbers)}): "
                         f"{'it is' if one else 'each is'} counted as a class of its own; if "
                         f"{'it means' if one else 'they mean'} no label, {fix}")
    return "\n".join(lines)


def _some(classes: list[str]) -> str:
    """Up to five classes, quoted.

    >>> _some(["a", "b"]), _some(list("abcdefg"))
    ("'a', 'b'", "'a', 'b', 'c', 'd', 'e', …")
    """
    return ", ".join(map(shown_briefly, classes[:5])) + (", …" if len(classes) > 5 else "")


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
    before or after the range), or none in the partitions read (one retired before it), or
    none belonging to a labelled instance yet (each made outside the range or for an
    instance still waiting: one deployed late in it), one
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
    instance arrived, 1 naming no instance that had arrived (set aside, or the id is unknown)

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
        elif c.get("logged_predictions") and \
                c.get("unmatched_predictions") == c["logged_predictions"]:
            lines.append(f"{stream} / {model}: none of its {c['logged_predictions']:,} logged "
                         f"predictions belongs to a labelled instance ({unmatched_reasons(c)}): "
                         f"nothing of it to score yet")
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
    scored none of them: each prediction it made (or logged for them) was none — None, NaN, {}
    or an empty log cell —, which its column of NaN in the table does not say; "" when there
    are none such. A backfill's model none of whose logged predictions belongs to a labelled
    instance is not one: `format_log_notices` names it.

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
        if c.get("labelled") and not c.get("scored_initial") and not c.get("scored_final")
        and c.get("unmatched_predictions") != c.get("logged_predictions", -1))


def format_unanswered(keys: list, final: bool = True) -> str:
    """One line per (stream, model) of a run (`keys`: the replay's counters per key) whose
    model answered none — None, NaN or {} — for some instances after it had learned a label,
    and answered for others: its measures rest on fewer instances than were labelled, which
    the table does not say (the summary's `n`, the manifest's `unscored_initial` and
    `unscored_final` do); "" when there are none such. An instance that arrives before any
    label is learned has no prediction to score with most models, and is none of these; a
    model none of whose predictions could be scored is `format_unpredicted`'s.

    Example
    -------

    >>> print(format_unanswered([
    ...     [["sea", "half"], {"labelled": 300, "unscored_initial": 145, "unscored_final": 150,
    ...                        "unanswered_after_learning": 140}],
    ...     [["sea", "nb"], {"labelled": 300, "unscored_initial": 10, "unscored_final": 1}]]))
    ... # doctest: +NORMALIZE_WHITESPACE
    sea / half: answered none (None, NaN or {}) at the arrival of 140 instances after it had
    learned a label: its initial measures rest on 155 of its 300 labelled instances, its final
    measures on 150 (the summary's n)

    """
    lines = []
    for (stream, model), c in keys:
        labelled, unanswered = c.get("labelled", 0), c.get("unanswered_after_learning", 0)
        initial = labelled - c.get("unscored_initial", 0)
        last = labelled - c.get("unscored_final", 0) if final else 0
        if not unanswered or not (initial or last):
            continue
        lines.append(
            f"{stream} / {model}: answered none (None, NaN or {{}}) at the arrival of "
            f"{unanswered:,} instance{'s' if unanswered != 1 else ''} after it had learned a "
            f"label: its initial measures rest on {initial:,} of its {labelled:,} labelled "
            f"instances" + (f", its final measures on {last:,}" if final else "") +
            " (the summary's n)")
    return "\n".join(lines)


def format_partly_scored(counts: list[dict]) -> str:
    """One line per (stream, model) and kind of a backfill whose log holds an initial or a
    final prediction for some of its labelled instances but not for all: the table's initial
    or final measures then rest on fewer instances than were labelled, which the table does
    not say (the summary's `n`, the manifest's `unscored_initial` and `unscored_final` do); ""
    when there are none such. A model with no prediction to score is `format_unpredicted`'s;
    a log with no final prediction at all has no final measures.

    Example
    -------

    >>> print(format_partly_scored([
    ...     {"stream": "fraud", "model": "v3", "labelled": 1940, "scored_initial": 1900,
    ...      "scored_final": 2},
    ...     {"stream": "fraud", "model": "v4", "labelled": 1940, "scored_initial": 1940,
    ...      "scored_final": 0}]))  # doctest: +NORMALIZE_WHITESPACE
    fraud / v3: the initial measures rest on 1,900 of its 1,940 labelled instances: for the
    other 40 the log holds no initial prediction (the first in the latency period, or of kind
    initial), or an empty one
    fraud / v3: the final measures rest on 2 of its 1,940 labelled instances: for the other
    1,938 the log holds no final prediction (at the label's time, or of kind final), or an
    empty one

    """
    what = {"initial": "the first in the latency period, or of kind initial",
            "final": "at the label's time, or of kind final"}
    return "\n".join(
        f"{c['stream']} / {c['model']}: the {kind} measures rest on {scored:,} of its "
        f"{c['labelled']:,} labelled instances: for the other {c['labelled'] - scored:,} the "
        f"log holds no {kind} prediction ({what[kind]}), or an empty one"
        for c in counts for kind in what
        if 0 < (scored := c.get(f"scored_{kind}") or 0) < (c.get("labelled") or 0))


def format_unrepredicted(counts: list[dict], repredict: str) -> str:
    """A line naming the streams of a run with re-evaluation on whose labelled instances none
    was re-predicted while it waited (a label comes before the policy's first re-prediction: K
    ≥ the labels that arrive while an instance waits): their binned measures and Ψα only
    repeat the initial ones; "" otherwise.

    Example
    -------

    >>> print(format_unrepredicted([
    ...     {"stream": s, "model": "nb", "labelled": 200, "repredicted": r}
    ...     for s, r in [("s1", 0), ("s2", 40), ("s3", 0)]], "every_k_labels:10"))
    ... # doctest: +NORMALIZE_WHITESPACE
    s1 and s3: no instance was re-predicted while it waited for its label (--repredict
    every_k_labels:10: each label came first), so the binned measures and Ψα repeat the
    initial ones; re-predict more often than labels arrive during a wait (a smaller K), or
    at bin_boundaries
    """
    streams = {}
    for c in counts:
        if c.get("labelled", 0) > 1:
            streams[c["stream"]] = streams.get(c["stream"], 0) + c.get("repredicted", 0)
    return _alike_for_streams([
        (stream, f"no instance was re-predicted while it waited for its label (--repredict "
                 f"{repredict}: each label came first), so the binned measures and Ψα repeat "
                 f"the initial ones; re-predict more often than labels arrive during a wait (a "
                 f"smaller K), or at bin_boundaries")
        for stream, repredicted in streams.items() if not repredicted])


def format_unheld(counts: list[dict], holdout: str) -> str:
    """A line naming the streams of a run with a periodic holdout that scored no holdout set
    for one reason: none was taken (no instance arrived after the model had learned EVERY
    labels), or none of the instances taken had its label arrive before the stream ended; ""
    otherwise.

    Example
    -------

    >>> print(format_unheld([{"stream": "s", "model": "nb", "held_out": 0,
    ...                       "held_out_labels": 0}], "7:3"))  # doctest: +NORMALIZE_WHITESPACE
    s: --holdout 7:3 scored no holdout set: no instance arrived after the model had learned 7
    labels (label number 7 came after the last instance); give a smaller EVERY, or a shorter
    delay
    """
    every = Holdout.parse(holdout).every
    streams: dict = {}
    for c in counts:
        held, labels = streams.get(c["stream"], (0, 0))
        streams[c["stream"]] = (held + c.get("held_out", 0), labels + c.get("held_out_labels", 0))
    return _alike_for_streams([
        (stream, f"--holdout {holdout} scored no holdout set: " + (
            f"no instance arrived after the model had learned {every} "
            f"label{'s' if every != 1 else ''} (label number {every} came after the last "
            f"instance); give a smaller EVERY, or a shorter delay"
            if not held else f"the labels of the {held:,} instances held out did not arrive "
            f"before the stream ended; give a smaller EVERY, or a longer stream"))
        for stream, (held, labels) in streams.items() if not labels])


# Why a logged prediction belongs to no labelled instance, by the manifest's `unmatched_*` count.
UNMATCHED_WHYS = {
    "before_arrival": "made before their instance arrived",
    "after_label": "after its label (do the log and the stream keep the same clock?)",
    "unreadable_time": "with no readable time (seconds, or an ISO datetime)",
    "no_instance": "naming no instance that had arrived (set aside, or the id is unknown)",
    "pending": "of an instance still waiting for its label",
    "outside_range": "made outside --from/--to"}


def unmatched_reasons(counts: dict) -> str:
    """The manifest's `unmatched_*` counts of one (stream, model) in words.

    >>> unmatched_reasons({"unmatched_before_arrival": 2, "unmatched_after_label": 0})
    '2 made before their instance arrived'
    """
    return ", ".join(f"{counts[f'unmatched_{k}']:,} {why}" for k, why in UNMATCHED_WHYS.items()
                     if counts.get(f"unmatched_{k}"))
