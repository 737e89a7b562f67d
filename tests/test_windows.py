"""Forgetting: sliding windows, fading factors and event-time windows equal a straightforward
sequential computation exactly, whatever the bundle split (Gama et al. 2009, section 3)."""

import copy
import itertools
import math
import random

import numpy as np
import pandas as pd
import pytest

from metrics import ClassificationScore, RegressionScore
from metrics.blocks import FadingCurve
from pipelines.config import ConfigError, RunConfig
from pipelines.job import run
from transforms.records import Outcome
from transforms.scoring.columns import block_scores, tail_scores
from transforms.scoring.curves import InOrderScores, curve_rows, score_locally
from transforms.scoring.label_order import InLabelOrder
from transforms.scoring.outcomes import LastOutcomes
from transforms.scoring.plan import LABEL_AXIS, ScoringPlan, time_window
from transforms.streams.delays import DelaySpec
from transforms.streams.sources import StreamSpec
from transforms.vocabulary import window_of_fading
from tests.helpers import read_csv

B = 2  # bins 0..3 for the binned category


def outcomes(n=257, classes=3, seed=0, regression=False):
    """Random labelled outcomes in label order, some predictions missing, with binned
    predictions already mapped (as the replay ships them) and irregular label times."""
    rng = random.Random(seed)
    out, t = [], 0.0
    for i in range(1, n + 1):
        t += rng.choice([0.0, 0.5, 1.0, 7.0])
        if regression:
            y = rng.uniform(-5, 5)
            preds = [None if rng.random() < 0.05 else y + rng.gauss(0, 1) for _ in range(B + 2)]
            bins = np.array([math.nan if p is None else p for p in preds])
            out.append(Outcome(i, i, t - 1, t, y, None, None, preds[0], preds[-1], bins=bins))
            continue
        y = rng.randrange(classes)
        preds = [None if rng.random() < 0.05 else rng.choice([y, rng.randrange(classes)])
                 for _ in range(B + 2)]
        bins = np.array([-1 if p is None else p for p in preds])
        out.append(Outcome(i, i, t - 1, t, y, rng.randrange(classes), rng.randrange(classes),
                           preds[0], preds[-1], bins=bins))
    return out


def prediction(o, category, b):
    if category == "initial":
        return o.initial
    if category == "final":
        return o.final
    v = o.bins[b].item()
    return None if v == -1 or (isinstance(v, float) and math.isnan(v)) else v


def sequential(chosen, category, b, regression=False):
    """A score over `chosen` outcomes, one update at a time."""
    s = RegressionScore() if regression else ClassificationScore()
    for o in chosen:
        p = prediction(o, category, b)
        if p is None:
            continue
        if regression:
            s.update(o.y, p)
        else:
            s.update(o.y, p, o.y_prev, o.y_majority)
    return s.get()


def sequential_fading(chosen, category, b, alpha, regression=False):
    """Gama's fading estimator, the plain loop S = L + α·S, B = 1 + α·B, for every statistic
    behind the metrics (a label without a prediction contributes 0 and ages the rest; a
    regressor's target sums are of y − c, c the first target, which R² does not depend on)."""
    if regression:
        n = a = sq = sy = sy2 = pct = nonzero = 0.0
        c = chosen[0].y
        for o in chosen:
            p = prediction(o, category, b)
            e = 0.0 if p is None else o.y - p
            y = 0.0 if p is None else o.y
            n = (p is not None) + alpha * n
            a = abs(e) + alpha * a
            sq = e * e + alpha * sq
            sy = (0.0 if p is None else o.y - c) + alpha * sy
            sy2 = (0.0 if p is None else (o.y - c) ** 2) + alpha * sy2
            pct = (abs(e) / abs(y) if y else 0.0) + alpha * pct
            nonzero = (y != 0) + alpha * nonzero
        s = RegressionScore()
        s.n = n
        for sums, value in ((s.abs_error, a), (s.squared_error, sq), (s.sum_y, sy),
                            (s.sum_y2, sy2), (s.abs_pct_error, pct), (s.nonzero, nonzero)):
            sums.partials = [value]
        s.abs_errors = None  # no faded quantiles (docs/semantics.md)
        return s.get()
    k = 1 + max(max(o.y for o in chosen), max(
        prediction(o, c, j) or 0 for o in chosen for c, j in [(category, b)]))
    n = correct = per = maj = 0.0
    true, pred = [0.0] * k, [0.0] * k
    cells = {(i, j): 0.0 for i in range(k) for j in range(k)}
    for o in chosen:
        p = prediction(o, category, b)
        ok = p is not None
        n = ok + alpha * n
        correct = (ok and p == o.y) + alpha * correct
        per = (ok and o.y_prev == o.y) + alpha * per
        maj = (ok and o.y_majority == o.y) + alpha * maj
        for c in range(k):
            true[c] = (ok and o.y == c) + alpha * true[c]
            pred[c] = (ok and p == c) + alpha * pred[c]
        for i, j in cells:
            cells[i, j] = (ok and (o.y, p) == (i, j)) + alpha * cells[i, j]
    s = ClassificationScore()
    s.n, s.correct, s.persistent_correct, s.majority_correct = n, correct, per, [maj]
    s.true_counts, s.pred_counts = true, pred
    s.confusion = {cell: c for cell, c in cells.items() if c}
    return s.get()


def rows_by(rows):
    """{(category, bin, window, metric, labels or t): value} from curve rows."""
    return {(r["category"], r["bin"], r["window"], r["metric"], r["labels"], r["t"]): r["value"]
            for r in rows}


PLAN = ScoringPlan(bins=B, alphas=(2.0,), curve_every=20, windows=(7, 50),
                   fadings=(0.9, 0.999), time_windows=(time_window("60/20"),))


def check_against_sequential(outs, plan, regression=False):
    summary, curves = score_locally(("s", "m"), outs, "regression" if regression
                                    else "classification", plan)
    got = rows_by(curves)
    checked = 0
    total = len(outs)
    points = sorted({*range(plan.curve_every, total + 1, plan.curve_every), total})
    for category in ("initial", "final", "binned"):
        for b in (plan.bins_of(category) if category == "binned" else [None]):
            bb = b if b is not None else 0
            if category == "binned" and b not in (0, plan.bins + 1):
                continue  # curves keep the first and last bin
            for p in points:
                upto = outs[:p]
                t = upto[-1].t_label
                views = {"cumulative": sequential(upto, category, bb, regression)}
                for w in plan.windows:
                    views[f"w={w}"] = sequential(upto[-w:], category, bb, regression)
                for a in plan.fadings:
                    views[window_of_fading(a)] = sequential_fading(upto, category, bb, a,
                                                                   regression)
                for view, expected in views.items():
                    for metric, value in expected.items():
                        have = got[(category, b, view, metric, p, t)]
                        assert have == value or (math.isnan(have) and math.isnan(value)), \
                            (category, b, view, metric, p, have, value)
                        checked += 1
            for label, size, period in plan.time_windows:
                last_block = math.floor(outs[-1].t_label / period)
                for j in range(last_block + 1):
                    start, end = (j + 1) * period - size, (j + 1) * period
                    inside = [o for o in outs if start <= o.t_label < end]
                    if not inside:
                        continue
                    labels = max(o.n for o in outs if o.t_label < end)
                    for metric, value in sequential(inside, category, bb, regression).items():
                        have = got[(category, b, label, metric, labels, end)]
                        assert have == value or (math.isnan(have) and math.isnan(value))
                        checked += 1
    return summary, checked


def test_classification_windows_and_fading_equal_the_sequential_loop_exactly():
    summary, checked = check_against_sequential(outcomes(), PLAN)
    assert checked > 1500
    # The summary is the curve's last point of each view (every bin, plus Ψα).
    windows = {r["window"] for r in summary}
    assert windows == {"cumulative", "w=7", "w=50", "fading=0.9", "fading=0.999", "time=60/20"}


def test_regression_windows_and_fading_equal_the_sequential_loop_exactly():
    _, checked = check_against_sequential(outcomes(regression=True), PLAN, regression=True)
    assert checked > 600


def test_window_larger_than_the_stream_is_the_cumulative_score():
    plan = ScoringPlan(curve_every=10, windows=(1000,))
    summary, _ = score_locally(("s", "m"), outcomes(45), "classification", plan)
    by = {(r["category"], r["window"], r["metric"]): r["value"] for r in summary}
    assert by[("initial", "w=1000", "kappa")] == by[("initial", "cumulative", "kappa")]


def test_psi_alpha_counts_the_labels_of_the_bins_it_weighs():
    """Ψα weighs bins 0..B: its n is bin B's (labels with a prediction standing before their
    label came), also when no final prediction was made (a log of initial predictions)."""
    chosen = [o._replace(final=None, bins=np.append(o.bins[:-1], -1)) for o in outcomes(60)]
    summary, _ = score_locally(("s", "m"), chosen, "classification", ScoringPlan(bins=B))
    n = {(r["category"], r["alpha"]): r["n"] for r in summary
         if r["metric"] == "accuracy" and r["window"] == "cumulative"}
    in_bin_b = sum(prediction(o, "binned", B) is not None for o in chosen)
    assert n[("final", None)] == 0 and 0 < in_bin_b < 60
    assert {n[k] for k in n if k[0] == "intermediate"} == {in_bin_b}


@pytest.mark.parametrize("seed", range(3))
def test_any_bundle_split_and_merge_order_gives_the_same_rows(seed):
    outs = outcomes(300, seed=seed)
    rng = random.Random(seed)
    total = len(outs)
    expected = sorted(map(repr, score_locally(("s", "m"), outs, "classification", PLAN)[1]))
    cuts = sorted(rng.sample(range(1, total), 9))
    shuffled = outs[:]
    rng.shuffle(shuffled)  # bundles arrive in any order, holding any labels
    parts = [shuffled[a:b] for a, b in zip([0, *cuts], [*cuts, total])]
    merged: dict = {}
    partials = [block_scores(part, "classification", PLAN) for part in parts]
    rng.shuffle(partials)
    # The fading factors: each curve's batches folded in label order as they come, from
    # accumulators of shuffled bundles merged in any order.
    fold = InLabelOrder(FadingCurve("classification", PLAN))
    faded: dict = {}
    for partial in partials:
        for key, block in partial.items():
            if block.fading is not None:
                acc = fold.add_input(fold.create_accumulator(), block.fading)
                faded.setdefault(("s", "m", *key[:2]), []).append(acc)
            merged[key] = copy.deepcopy(block) if key not in merged else merged[key].merge(block)
    for accs in faded.values():
        rng.shuffle(accs)
    # The end-of-stream windows: each bundle keeps its last outcomes, merged in any order.
    last = LastOutcomes(max(PLAN.windows))
    kept = [last.add_input(last.create_accumulator(), part) for part in parts]
    rng.shuffle(kept)
    tails = tail_scores(last.merge_accumulators(kept), "classification", PLAN)
    by_curve: dict = {}
    for (category, axis, block), partial in merged.items():
        by_curve.setdefault(("s", "m", category, axis), []).append((block, partial))
    got = [r for key, blocks in by_curve.items()
           for _, r in curve_rows(key, blocks, "classification", PLAN, tails[key[2]],
                                  fold.extract_output(fold.merge_accumulators(faded[key]))
                                  if key in faded else None)
           if r["category"] != "binned" or r["bin"] in (0, B + 1)]
    assert sorted(map(repr, got)) == expected


@pytest.mark.parametrize("seed", range(3))
def test_in_order_scores_fed_batch_by_batch_give_the_same_rows_in_constant_state(seed):
    """The per-stream replay scores as it drains: batches cut anywhere, fed in label order,
    give the rows of one pass over all labels, while the scorer holds a few blocks only."""
    outs = outcomes(300, seed=seed)
    rng = random.Random(seed)
    expected = score_locally(("s", "m"), outs, "classification", PLAN)
    cuts = [0, *sorted(rng.sample(range(1, len(outs)), 12)), len(outs)]
    scores = InOrderScores(("s", "m"), "classification", PLAN)
    rows, held = [], []
    for a, b in zip(cuts, cuts[1:]):
        rows += scores.add(outs[a:b])
        held.append((len(scores.curves.open),
                     max(len(f["points"]) for f in scores.curves.faded.values())))
    rows += scores.finish()
    summary = [{k: v for k, v in r.items() if k != "labels"} for last, r in rows if last]
    curves = [r for _, r in rows if r["category"] != "binned" or r["bin"] in (0, B + 1)]
    assert sorted(map(repr, summary)) == sorted(map(repr, expected[0]))
    assert sorted(map(repr, curves)) == sorted(map(repr, expected[1]))
    # Open: each (category, axis)'s newest block; fading: at most the one point not emitted.
    assert max(o for o, _ in held) == 3 * 2 and max(p for _, p in held) == 1


def test_fading_by_hand():
    # α = 0.5, losses of the initial predictions 1, 0, 1 (accuracy: correct 0, 1, 0):
    # S = 0 + .5(1 + .5·0) = .5, B = 1 + .5(1 + .5) = 1.75.
    outs = [Outcome(i, i, 0.0, float(i), y, 0, 0, p, p) for i, (y, p) in
            enumerate([(1, 0), (0, 0), (1, 0)], 1)]
    summary, _ = score_locally(("s", "m"), outs, "classification",
                               ScoringPlan(curve_every=10, fadings=(0.5,)))
    by = {(r["category"], r["window"], r["metric"]): r for r in summary}
    assert by[("initial", "fading=0.5", "accuracy")]["value"] == 0.5 / 1.75
    assert by[("initial", "fading=0.5", "accuracy")]["n"] == 3


def test_time_window_parsing():
    assert time_window("1h/15min") == ("time=1h/15min", 3600.0, 900.0)
    with pytest.raises(ValueError, match="must divide"):
        time_window("1h/7min")
    with pytest.raises(ValueError, match="SIZE or SIZE/PERIOD"):
        time_window("soon")


def test_fading_fold_takes_curve_points_wherever_the_batches_are_cut():
    # Labels 1..9 (label 5 not joined: it adds nothing, ages the rest), a curve point every 3
    # labels. Batches cut anywhere and folded in any order give the states of one pass at 3 and
    # 6 and at the end.
    plan = ScoringPlan(curve_every=3, fadings=(0.5,))
    n = np.arange(1, 10)
    both = (n != 5).astype(float)
    a = np.array([1.0, 0, 1, 1, 0, 0, 0, 1, 1]) * both
    rows = FadingCurve.rows("comparison", n, {"both": both, "a": a, "b": both - a, "a_only": a,
                                              "b_only": both - a})
    fold = InLabelOrder(FadingCurve("comparison", plan))

    def loss_a(state):  # S = L + α·S over A's losses
        return state.scores()[0].loss_a.value

    for cuts in ([], [2], [3, 4], [4, 5], [1, 4, 6]):  # batches of labels (a, b]
        bounds = [0, *cuts, 9]
        batches = [(np.arange(i + 1, j + 1), rows[(n > i) & (n <= j)])
                   for i, j in zip(bounds, bounds[1:])]
        accs = [fold.add_input(fold.create_accumulator(), b) for b in batches[::-1]]
        folded = fold.extract_output(fold.merge_accumulators(accs))
        # S after labels 1, 2, 3: 1, .5, 1.25; after 4, 5 and 6: 1.625, .8125, .40625.
        assert loss_a(FadingCurve.at(folded, 3)[0.5]) == 1.25
        assert loss_a(FadingCurve.at(folded, 6)[0.5]) == 0.40625
        assert FadingCurve.at(folded, 9) is folded["faded"]


def test_bad_window_options_are_config_errors(tmp_path):
    base = dict(streams=['synth:SEA{"n": 10}'], models=["no-change"], out=str(tmp_path))
    for bad, message in [({"windows": [0]}, "from 1 to"), ({"fadings": [1.0]}, "between 0"),
                         ({"windows": [5, 5]}, "--window 5: given twice; give each value once"),
                         ({"bootstrap": -1}, "--bootstrap -1: not 0 .off. or more replicates; "
                                             "e.g. --bootstrap 1000"),
                         ({"ph_delta": -0.1}, "--ph-delta -0.1: not 0 or more; e.g. "),
                         ({"ph_min_instances": -3}, "--ph-min-instances -3: not 0 or more"),
                         ({"ph_threshold": 0}, "--ph-threshold 0: not a positive number"),
                         ({"timer_bucket": 0}, "--timer-bucket 0: not a positive number of "
                                               "seconds; e.g. --timer-bucket 60"),
                         ({"drift_on": "none", "ph_alphas": [0.99]},
                          "--ph-alpha means nothing with --drift-on none"),
                         ({"repredict": "none", "bins": 5},
                          "--bins means nothing with --repredict none"),
                         ({"min_segment_size": 30}, "--min-segment-size 30 means nothing "
                                                     "without --segment"),
                         ({"timer_bucket": 5, "replay": "per-stream"},
                          "--timer-bucket 5: it drains the streaming replay, and --replay "
                          "per-stream drains otherwise; give --replay stateful")]:
        with pytest.raises(ConfigError, match=message):
            RunConfig(**base, **bad)
    with pytest.raises(ConfigError, match="must divide"):
        run(RunConfig(**base, time_windows=["10/3"], runner="direct", quiet=True))


def test_prequential_with_forgetting_approaches_the_holdout_error(tmp_path):
    """Paper 004, Fig. 2: on a stationary stream, the prequential error with a sliding window
    or a fading factor converges towards the holdout error of the current model."""
    from river import naive_bayes
    from river.datasets import synth

    n = 6000
    summary = run(RunConfig(streams=[f'sea=synth:SEA{{"n": {n}, "seed": 5, "noise": 0.1}}'],
                            models=["gaussian-nb"], delay="1", out=str(tmp_path),
                            runner="direct", repredict="none", windows=[1000],
                            fadings=[0.999], quiet=True))
    model = naive_bayes.GaussianNB()
    for x, y in itertools.islice(synth.SEA(seed=5, noise=0.1), n):
        model.learn_one(x, y)
    holdout = list(itertools.islice(synth.SEA(seed=99, noise=0.1), 5000))
    holdout_error = sum(model.predict_one(x) != y for x, y in holdout) / len(holdout)
    acc = summary[(summary["category"] == "final") & (summary["metric"] == "accuracy")]
    errors = dict(zip(acc["window"], 1 - acc["value"]))
    for view in ("w=1000", "fading=0.999"):
        assert abs(errors[view] - holdout_error) < 0.03, (view, errors, holdout_error)
    table = read_csv(tmp_path / "summary.csv")
    assert {"w=1000", "fading=0.999"} <= set(table["window"])
    curves = pd.read_parquet(tmp_path / "curves.parquet")
    assert set(curves["window"]) == {"cumulative", "w=1000", "fading=0.999"}
    assert LABEL_AXIS == "n"


def test_fading_accumulators_of_consecutive_ranges_merge_to_the_one_pass_estimate():
    from metrics.windows import FadingScore

    outs = outcomes(200, seed=4)
    cols = {"y": np.array([o.y for o in outs]), "prev": np.array([o.y_prev for o in outs]),
            "majority": np.array([o.y_majority for o in outs]),
            "preds": np.stack([o.bins for o in outs])}
    one = FadingScore(0.97, ClassificationScore)
    one.update(cols)
    merged = FadingScore(0.97, ClassificationScore)
    for a, b in [(0, 13), (13, 90), (90, 91), (91, 200)]:
        part = FadingScore(0.97, ClassificationScore)
        part.update({k: v[a:b] for k, v in cols.items()})
        merged.merge(part)
    for s1, s2 in zip(one.scores(), merged.scores()):
        for metric, value in s1.get().items():
            assert s2.get()[metric] == pytest.approx(value, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("replay", ["per-stream", "grouped"])
def test_a_model_that_stops_answering_fades_out_without_an_error(tmp_path, replay):
    """A model that answers nothing once it has learned 100 labels (a retired version), α = 0.9:
    each later label ages its faded counts, and ~7 000 labels on their weight is below the
    normal floats, where α·S rounds back to S — the counts stopped fading, tended to one value
    and κ's standard score took the root of a negative number (an internal error). Its faded
    measures are the plain loop's S/B while B is a normal float, then none (NaN)."""
    from river import naive_bayes

    n, d, alpha = 7600, 50, 0.9
    stream = f'sea=synth:SEA{{"n": {n}, "seed": 3}}'
    run(RunConfig(streams=[stream], models=['stop=tests.helpers.StopsAnswering{"after": 100}'],
                  delay=str(d), out=str(tmp_path), runner="direct", repredict="none",
                  final=False, fadings=[alpha], curve_every=400, quiet=True, replay=replay))
    # The plain loop: instance j predicted once the labels of instances 0..j−d are learned.
    events = list(StreamSpec.parse(stream).events(DelaySpec.parse(str(d))))
    xs = [e[5] for e in events if e[3] == "instance"]
    ys = [e[6] for e in events if e[3] == "label"]
    model, correct, weight, faded = naive_bayes.GaussianNB(), 0.0, 0.0, {}
    for j in range(n):
        if j >= d:
            model.learn_one(xs[j - d], ys[j - d])
        p = model.predict_one(xs[j]) if 0 < j - d + 1 < 100 else None  # (learned so many)
        correct, weight = alpha * correct, alpha * weight
        if p is not None:
            correct, weight = correct + (p == ys[j]), weight + 1.0
        faded[j + 1] = correct / weight if weight >= np.finfo(float).tiny else math.nan
    curves = pd.read_parquet(tmp_path / "curves.parquet")
    rows = curves.query("window == 'fading=0.9' and metric == 'accuracy'")
    assert rows["labels"].tolist() == [*range(400, n, 400), n]
    for labels, value in zip(rows["labels"], rows["value"]):
        assert value == pytest.approx(faded[labels], rel=1e-12, nan_ok=True), labels
    assert math.isnan(faded[n]) and not math.isnan(faded[6400])  # (it fades out in between)
    summary = pd.read_csv(tmp_path / "summary.csv").query("window == 'fading=0.9'")
    assert summary["value"].isna().all()  # κ, its standard score, log-loss: none at the end


def test_labels_without_probabilities_age_the_faded_probability_measures_on_every_replay(
        tmp_path):
    """A block of labels none of which had class probabilities aged the faded accuracy but
    not the faded log-loss, Brier and ECE, whose ratio only rounds differently for it: where
    the replays cut blocks differently, their last digits differed."""
    common = dict(streams=['sea=synth:SEA{"n": 3000, "seed": 3}'], delay="50",
                  models=["mc=majority", 'stop=tests.helpers.StopsAnswering{"after": 700}'],
                  fadings=[0.9], curve_every=100, runner="direct", quiet=True)
    for replay in ("per-stream", "grouped"):
        run(RunConfig(**common, replay=replay, out=str(tmp_path / replay), run_id="same"))
    for name in ("summary.csv", "curves.parquet"):
        assert (tmp_path / "per-stream" / name).read_bytes() == \
            (tmp_path / "grouped" / name).read_bytes(), name
