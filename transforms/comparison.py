"""Model comparisons: every pair of models on a stream, joined by instance id, in label order.

    outcomes -> per (stream, prediction kind, pane) each model's losses -> GroupByKey
             -> per pair (A, B), joined by id: a pane of PairScore -> GroupByKey
             -> the scoring pass (cumulative, windows, fading) -> rows
    outcomes -> each model's last max(w) outcomes -> per pair the windows at the last label ⤴

Rows: category `comparison`, model `A vs B`, bin 0 for the initial predictions and B+1 for the
final ones (the binned measures' convention), metrics q_statistic, mcnemar, mcnemar_p,
mcnemar_significant (`metrics.comparison.PairScore`). A label counts when both models made a
prediction for it. Comparisons use the label axis: cumulative, windows of the last w labels,
fading factors.
"""

from __future__ import annotations

import itertools

import apache_beam as beam
import numpy as np

from metrics.windows import pane_ends
from transforms.records import FINAL, INITIAL
from transforms.scoring import (CURVES, LABEL_AXIS, BlockScore, LastOutcomes, OutcomeTransform,
                                Pane, concat_rows, curve_rows, group_rows, new_score,
                                prediction_losses, route_rows, take_rows)

COMPARISON = "comparison"


def pair_name(a: str, b: str) -> str:
    return f"{a} vs {b}"


def loss_columns(outcomes, task: str, kind: str) -> dict:
    """`prediction_losses` (squared error for regressors), and `wrong`: the 0-1 loss of
    classifiers, zeros for regressors (no McNemar counts)."""
    cols = prediction_losses(outcomes, task, kind, squared=True)
    cols["wrong"] = cols["loss"] if task == "classification" else np.zeros(len(cols["loss"]))
    return cols


def pair_pane(a: dict, b: dict, with_columns: bool) -> Pane | None:
    """One pane of A's and B's loss columns, joined by id."""
    where = {i: k for k, i in enumerate(b["ids"])}
    ia = np.array([k for k, i in enumerate(a["ids"]) if i in where], dtype=np.int64)
    if not len(ia):
        return None
    ib = np.array([where[a["ids"][k]] for k in ia], dtype=np.int64)
    cols = {"n": a["n"][ia], "a": a["loss"][ia], "b": b["loss"][ib],
            "a_only": (a["wrong"][ia] > 0) & (b["wrong"][ib] == 0),
            "b_only": (b["wrong"][ib] > 0) & (a["wrong"][ia] == 0)}
    score = new_score(COMPARISON)
    score.update_many(cols["a"], cols["b"], cols["a_only"], cols["b_only"])
    acc = BlockScore(score, int(cols["n"].max()), float(a["t_label"][ia].max()))
    return Pane({None: acc}, cols if with_columns else None)


class CompareModels(OutcomeTransform):
    """`((stream, model), [Outcome])` batches -> comparison summary rows (main) and curve rows
    (`curves`) for every pair of models of the same task, in configuration order."""

    def expand(self, outcome_batches):
        tasks, plan = self.tasks, self.plan
        order = {m: i for i, m in enumerate(tasks)}
        kinds = (INITIAL, FINAL) if plan.final else (INITIAL,)

        def pairs_of(by_model: dict):
            models = sorted(by_model, key=order.get)
            return [(a, b) for a, b in itertools.combinations(models, 2) if tasks[a] == tasks[b]]

        def model_panes(element):
            (stream, model), outcomes = element
            for kind in kinds:
                cols = loss_columns(outcomes, tasks[model], kind)
                for end, rows in group_rows(pane_ends(cols["n"], plan.curve_every,
                                                      plan.windows)):
                    yield (stream, kind, int(end)), (model, take_rows(cols, rows))

        def pairs(element):
            (stream, kind, end), parts = element
            by_model: dict = {}
            for model, part in parts:
                by_model.setdefault(model, []).append(part)
            for a, b in pairs_of(by_model):
                pane = pair_pane(concat_rows(by_model[a]), concat_rows(by_model[b]),
                                 bool(plan.fadings))
                if pane is not None:
                    yield (stream, pair_name(a, b), kind, LABEL_AXIS), (end, pane)

        def tails(element):
            # The windows at the stream's last label: each pair over its last w labels.
            stream, lasts = element
            total = max((o.n for _, outcomes in lasts for o in outcomes), default=0)
            for kind in kinds:
                cols = {model: loss_columns(outcomes, tasks[model], kind)
                        for model, outcomes in lasts}
                for a, b in pairs_of(cols):
                    tail = {}
                    for w in plan.windows:
                        last_w = [take_rows(cols[m], np.flatnonzero(cols[m]["n"] > total - w))
                                  for m in (a, b)]
                        pane = pair_pane(*last_w, False)
                        tail[w] = {None: new_score(COMPARISON) if pane is None
                                   else pane.scores[None].score}
                    yield (stream, pair_name(a, b), kind, LABEL_AXIS), tail

        def summarise(element):
            key, grouped = element
            tail = grouped["tails"][0] if grouped["tails"] else None
            def as_comparison(last, row):
                row["bin"] = 0 if row["category"] == INITIAL else plan.bins + 1
                row["category"] = COMPARISON
                return last, row

            yield from route_rows((as_comparison(*r) for r in curve_rows(
                key, grouped["panes"], COMPARISON, plan, tail)), plan)

        panes = (outcome_batches
                 | "ModelPanes" >> beam.FlatMap(model_panes)
                 | "ByPane" >> beam.GroupByKey()
                 | "Pairs" >> beam.FlatMap(pairs))
        last = (outcome_batches
                | "LastOutcomes" >> beam.CombinePerKey(LastOutcomes(max(plan.windows, default=0)))
                | "ByStream" >> beam.Map(lambda e: (e[0][0], (e[0][1], e[1])))
                | "LastPerStream" >> beam.GroupByKey()
                | "TailScores" >> beam.FlatMap(tails))
        return ({"panes": panes, "tails": last}
                | "ByPair" >> beam.CoGroupByKey()
                | "Summarise" >> beam.FlatMap(summarise).with_outputs(CURVES, main="summary"))
