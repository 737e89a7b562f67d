"""Comparing models (Gama et al. 2009, section 3.3): Q statistic and signed McNemar,
cumulative, over a sliding window and with a fading factor, equal a straightforward loop over
the joined losses; the Diebold-Mariano test equals scipy's paired t-test of those losses."""

import math

import pandas as pd
import pytest
from scipy.stats import chi2, ttest_rel

from metrics.comparison import PairScore
from pipelines.config import RunConfig
from pipelines.job import run
from transforms.models.specs import ModelSpec
from transforms.replay.engine import ReplayEngine
from transforms.streams.delays import DelaySpec
from transforms.streams.sources import StreamSpec

STREAM = 'sea=synth:SEA{"n": 3000, "seed": 8, "drift": [{"at": 1500, "variant": 2}]}'


def replayed(model, stream=STREAM):
    """{id: Outcome} of one model replayed alone at delay 50."""
    spec = StreamSpec.parse(stream)
    engine = ReplayEngine(ModelSpec.parse(model), spec.name)
    result = engine.drain(list(spec.events(DelaySpec.parse("50"))))
    return {o.id: o for o in result.outcomes}


def joined_losses(a, b, kind, loss):
    """(A's loss, B's loss) per label both predicted, in label order."""
    joined = sorted((oa.n, oa, b[i]) for i, oa in a.items() if i in b)
    return [(loss(getattr(oa, kind), oa.y), loss(getattr(ob, kind), ob.y)) for _, oa, ob in joined
            if getattr(oa, kind) is not None and getattr(ob, kind) is not None]


def diebold_mariano(rows):
    """scipy's paired t-test of A's and B's losses: (statistic, p-value)."""
    test = ttest_rel([la for la, _ in rows], [lb for _, lb in rows])
    return test.statistic, test.pvalue


def expected(a, b, kind, window=None, alpha=None):
    """Q and M over the joined labels in label order, the plain way."""
    rows = joined_losses(a, b, kind, lambda p, y: float(p != y))
    if window:
        rows = rows[-window:]
    sa = sb = n01 = n10 = 0.0
    for la, lb in rows:
        w = 1.0
        if alpha is not None:
            sa, sb = la + alpha * sa, lb + alpha * sb
            n01 = float(la == 1 and lb == 0) + alpha * n01
            n10 = float(lb == 1 and la == 0) + alpha * n10
            continue
        sa, sb = sa + w * la, sb + w * lb
        n01 += la == 1 and lb == 0
        n10 += lb == 1 and la == 0
    d = n01 - n10
    m = math.copysign(1.0, d) * d * d / (n01 + n10)
    exact = math.nan
    if alpha is None:  # twice the smaller tail of Bin(n01 + n10, 1/2), summed term by term
        n, k = int(n01 + n10), int(min(n01, n10))
        exact = min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n)
    dm = (math.nan, math.nan) if alpha is not None else diebold_mariano(rows)
    return {"q_statistic": math.log(sa / sb), "mcnemar": m, "mcnemar_exact_p": exact,
            "diebold_mariano": dm[0], "diebold_mariano_p": dm[1]}


# per-stream compares the models as it drains them; grouped joins their losses by id.
@pytest.mark.parametrize("replay", ["per-stream", "grouped"])
def test_q_and_mcnemar_equal_the_plain_loop(tmp_path, replay):
    summary = run(RunConfig(streams=[STREAM], models=["nb=gaussian-nb", "mc=majority"],
                            delay="50", out=str(tmp_path), runner="direct", repredict="none",
                            curve_every=500, windows=[300], fadings=[0.99], quiet=True,
                            replay=replay))
    a, b = replayed("gaussian-nb"), replayed("majority")
    rows = summary[(summary["category"] == "comparison")]
    assert set(rows["model"]) == {"nb vs mc"}
    checked = 0
    for kind, bin_ in (("initial", 0), ("final", 1)):
        for view, args in (("cumulative", {}), ("w=300", {"window": 300}),
                           ("fading=0.99", {"alpha": 0.99})):
            want = expected(a, b, kind, **args)
            got = rows[(rows["bin"] == bin_) & (rows["window"] == view)]
            got = dict(zip(got["metric"], got["value"]))
            assert got["q_statistic"] == pytest.approx(want["q_statistic"], rel=1e-12, abs=0)
            assert got["mcnemar"] == want["mcnemar"] if view != "fading=0.99" else \
                got["mcnemar"] == pytest.approx(want["mcnemar"], rel=1e-12)
            assert got["mcnemar_p"] == pytest.approx(chi2.sf(abs(got["mcnemar"]), 1), rel=1e-9)
            assert got["mcnemar_significant"] == float(abs(got["mcnemar"]) > 6.635)
            assert got["mcnemar_exact_p"] == pytest.approx(want["mcnemar_exact_p"], rel=1e-9,
                                                           abs=1e-300, nan_ok=True)
            for name in ("diebold_mariano", "diebold_mariano_p"):  # (no count under fading)
                assert got[name] == pytest.approx(want[name], rel=1e-9, abs=1e-300,
                                                  nan_ok=True), (name, kind, view)
            checked += 1
    assert checked == 6
    # GaussianNB beats the majority class on SEA: Q < 0 and M < 0, significantly.
    cum = rows[(rows["bin"] == 0) & (rows["window"] == "cumulative")]
    cum = dict(zip(cum["metric"], cum["value"]))
    assert cum["q_statistic"] < 0 and cum["mcnemar"] < -6.635 and cum["mcnemar_significant"]
    assert cum["diebold_mariano"] < 0 and cum["diebold_mariano_p"] < 0.01


def test_regressors_are_compared_by_the_diebold_mariano_test_of_their_squared_errors(tmp_path):
    """A pair of regressors has no McNemar counts; Diebold-Mariano tests their squared errors,
    cumulative and over a window, as scipy's paired t-test of the same errors does."""
    stream = 'friedman=synth:Friedman{"n": 1500, "seed": 3}'
    summary = run(RunConfig(streams=[stream], models=["lr=linear-regression",
                                                      "mean=mean-regressor"],
                            delay="50", out=str(tmp_path), runner="direct", repredict="none",
                            windows=[200], fadings=[0.99], quiet=True))
    outcomes = {model: replayed(model, stream) for model in ("linear-regression",
                                                             "mean-regressor")}
    rows = summary[summary["category"] == "comparison"]
    assert set(rows["model"]) == {"lr vs mean"}
    for kind, bin_ in (("initial", 0), ("final", 1)):
        losses = joined_losses(outcomes["linear-regression"], outcomes["mean-regressor"], kind,
                               lambda p, y: (p - y) ** 2)
        for view, part in (("cumulative", losses), ("w=200", losses[-200:])):
            got = rows[(rows["bin"] == bin_) & (rows["window"] == view)]
            got = dict(zip(got["metric"], got["value"]))
            statistic, p = diebold_mariano(part)
            assert got["diebold_mariano"] == pytest.approx(statistic, rel=1e-9)
            assert got["diebold_mariano_p"] == pytest.approx(p, rel=1e-9, abs=1e-300)
            assert math.isnan(got["mcnemar"])
        faded = rows[(rows["bin"] == bin_) & (rows["window"] == "fading=0.99")]
        assert faded.loc[faded["metric"] == "diebold_mariano", "value"].isna().all()
    cum = rows[(rows["bin"] == 0) & (rows["window"] == "cumulative")]
    cum = dict(zip(cum["metric"], cum["value"]))
    assert cum["diebold_mariano"] < 0 and cum["diebold_mariano_p"] < 0.01  # lr beats the mean


@pytest.mark.parametrize("replay", ["per-stream", "grouped"])
def test_labels_one_model_did_not_predict_age_the_faded_pair_and_end_its_curve(tmp_path, replay):
    """B answers none once it has learned 300 labels (a model version out of service): the
    pair's later labels are not compared, but on A's label axis they still come — the faded
    counts age by them and the windows count them (the plain loop over A's labels at every curve
    point), and the curve's points are A's, the last at A's last label."""
    stream = 'sea=synth:SEA{"n": 600, "seed": 3}'
    model_b = 'tests.helpers.StopsAnswering{"after": 300}'
    run(RunConfig(streams=[stream], models=["mc=majority", f"stops={model_b}"], delay="50",
                  out=str(tmp_path), runner="direct", repredict="none", final=False,
                  curve_every=100, windows=[150], fadings=[0.9], quiet=True, replay=replay))
    a = sorted(replayed("majority", stream).values(), key=lambda o: o.n)
    b = {(o.id, o.t_label): o for o in replayed(model_b, stream).values()}
    answered = [o.n for o in a if b[(o.id, o.t_label)].initial is not None]
    assert 300 < answered[-1] < 400  # (B's last answer)
    curves = pd.read_parquet(tmp_path / "curves.parquet")
    rows = curves[(curves["category"] == "comparison") & curves["metric"].isin(
        ["q_statistic", "mcnemar"])]
    for view, args in (("cumulative", {}), ("w=150", {"window": 150}),
                       ("fading=0.9", {"alpha": 0.9})):
        for metric in ("q_statistic", "mcnemar"):
            curve = rows[(rows["window"] == view) & (rows["metric"] == metric)]
            assert curve["labels"].tolist() == [100, 200, 300, 400, 500, 600]
            assert curve["t"].iloc[-1] == a[-1].t_label
            for end, value in zip(curve["labels"], curve["value"]):
                want = _fading_and_window_oracle([o for o in a if o.n <= end], b, "initial",
                                                 **args)
                assert value == pytest.approx(want[metric], rel=1e-12, nan_ok=True), \
                    (view, metric, end)


def test_exact_mcnemar_equals_scipys_binomial_test_for_few_disagreements():
    """With n01 + n10 < 25 the exact p-value is the one to read; scipy's binomial test (a
    different algorithm: the outcomes no likelier than the observed one) agrees."""
    from scipy.stats import binomtest

    for n01, n10 in [(1, 6), (0, 3), (5, 5), (2, 9), (12, 3), (0, 24)]:
        s = PairScore()
        s.n01, s.n10 = n01, n10
        assert s.mcnemar_exact_p == pytest.approx(binomtest(n01, n01 + n10).pvalue, rel=1e-12)
    for weights in ([1.5, 2.25], [1.0, 0.0]):  # a fading factor's: no binomial count,
        faded = PairScore.from_faded([2.0, 1.0, 0.0, *weights])  # (even where whole numbers)
        assert math.isnan(faded.mcnemar_exact_p)


def test_undefined_statistics_are_nan():
    s = PairScore()
    assert math.isnan(s.q_statistic) and math.isnan(s.mcnemar) and math.isnan(s.mcnemar_p)
    assert math.isnan(s.diebold_mariano) and math.isnan(s.diebold_mariano_p)
    s.update_many([1, 0], [1, 0], [0, 0], [0, 0])  # always the same answer: M = 0/0
    assert s.q_statistic == 0.0 and math.isnan(s.mcnemar) and math.isnan(s.diebold_mariano)
    s.update_many([0], [1], [0], [1])
    assert s.q_statistic == math.log(1 / 2) and s.mcnemar == -1.0  # B wrong once more


def test_windows_subtract_exactly():
    a, b = PairScore(), PairScore()
    a.update_many([1, 1, 0, 1], [0, 1, 1, 0], [1, 0, 0, 1], [0, 0, 1, 0])
    b.update_many([1, 1], [0, 1], [1, 0], [0, 0])
    a.subtract(b)
    assert (a.n, a.n01, a.n10, a.loss_a.value, a.loss_b.value) == (2, 1, 1, 1.0, 1.0)
    assert a.squared_differences.value == 2.0  # (0 − 1)² + (1 − 0)²


def test_the_terminal_names_the_model_that_errs_less_with_the_test_that_suits_the_pair(
        tmp_path, capsys):
    """GaussianNB errs less than the majority class on SEA (McNemar), linear regression less
    than the mean on Friedman (Diebold-Mariano): the table after the run names each, with the
    summary's own statistic and p-value."""
    from pipelines.cli import main

    for stream, models, test, better in (
            ('synth:SEA{"n": 2000, "seed": 3}', ["majority", "gaussian-nb"], "McNemar",
             "gaussian-nb"),
            ('synth:Friedman{"n": 2000, "seed": 3}', ["linear-regression", "mean-regressor"],
             "Diebold-Mariano", "linear-regression")):
        out = tmp_path / test
        args = ["run", "--stream", stream, "--delay", "50", "--repredict", "none", "--out",
                str(out), "--runner", "direct", "--progress-every", "1000"]
        for model in models:
            args += ["--model", model]
        capsys.readouterr()
        assert main(args) == 0
        printed = capsys.readouterr().out
        # stream, A, "vs", B, Q, test, statistic, p, the model that errs less
        cells = printed.split("Comparisons, initial predictions")[1].splitlines()[2].split()
        pair = f"{models[0]} vs {models[1]}"
        summary = pd.read_csv(out / "summary.csv")
        rows = summary[(summary["model"] == pair) & (summary["bin"] == 0)
                       & (summary["window"] == "cumulative")].set_index("metric")["value"]
        statistic = rows["mcnemar" if test == "McNemar" else "diebold_mariano"]
        p = rows["mcnemar_exact_p" if test == "McNemar" else "diebold_mariano_p"]
        assert cells[1:4] == pair.split() and cells[5:] == [test, f"{statistic:.2f}",
                                                            f"{p:.1e}", better]
        assert p < 0.01 and (statistic > 0) == (better == models[1])


def test_the_comparison_table_reads_the_sign_and_the_level():
    from pipelines.tables import comparison_table

    def rows(pair, metric_values):
        return [{"stream": "s", "model": pair, "category": "comparison",
                 "window": "cumulative", "bin": 0, "metric": m, "value": v}
                for m, v in metric_values.items()]

    models = [{"stream": "s", "model": m, "category": "initial", "window": "cumulative",
               "bin": 0, "metric": "mae", "value": 1.0} for m in ("a", "b", "c", "d")]
    summary = pd.DataFrame(models + rows("a vs b", {"q_statistic": 0.4, "mcnemar": math.nan,
                                                    "diebold_mariano": 3.1,
                                                    "diebold_mariano_p": 0.002})
                           + rows("a vs c", {"q_statistic": 0.1, "mcnemar": math.nan,
                                             "diebold_mariano": 1.2,
                                             "diebold_mariano_p": 0.23})
                           + rows("a vs d", {"q_statistic": -2.0, "mcnemar": -45.0,
                                             "mcnemar_exact_p": 0.0})
                           + rows("b vs c", {"q_statistic": 0.0, "mcnemar": math.nan,
                                             "diebold_mariano": math.nan}))
    table = comparison_table(summary)
    assert table["pair"].tolist() == ["a vs b", "a vs c", "a vs d", "b vs c"]
    assert table["test"].tolist() == ["Diebold-Mariano", "Diebold-Mariano", "McNemar",
                                      "undefined"]
    # A errs more (statistic > 0) significantly: B errs less; not significant: neither.
    assert table["errs less (p < 0.01)"].tolist() == ["b", "neither", "a", "neither"]
    # A p-value below the smallest float (an exact binomial tail over millions of labels)
    # is no p of 0; an undefined test has neither statistic nor p.
    assert table["p"].tolist() == ["2.0e-03", "2.3e-01", "< 1e-300", ""]
    assert table["statistic"].tolist() == ["3.10", "1.20", "-45.00", ""]


# -- a model that set labels aside: pairs on the first model's label axis -------------------------
def _failing_stream(tmp_path):
    """1 500 rows (a threshold concept, 10 % noise); FailsOn cannot predict the rows whose `bad`
    is 1 (every 41st) nor learn those where it is 2 (every 53rd): --on-model-error dead-letter
    sets them aside, label and all, for it alone, so it numbers the labels otherwise."""
    import numpy as np
    rng = np.random.default_rng(4)
    x = rng.uniform(0, 10, size=(1500, 2))
    y = np.where((x[:, 0] + x[:, 1] > 10) ^ (rng.uniform(size=1500) < 0.1), "p", "q")
    i = np.arange(1500)
    path = tmp_path / "s.csv"
    pd.DataFrame({"time": i, "f1": x[:, 0], "f2": x[:, 1],
                  "bad": np.where(i % 41 == 7, 1, np.where(i % 53 == 11, 2, 0)),
                  "label": y}).to_csv(path, index=False)
    return str(path)


def _fading_and_window_oracle(a: list, b: dict, kind: str, window=None, alpha=None) -> dict:
    """Q and M of the pair on A's label axis, the plain way: A's outcomes in label order,
    each joined to B's outcome of the same label ((id, label time): B may number it otherwise,
    or have set it aside); a window is A's last w labels; a fading factor ages at each of A's
    labels, compared or not."""
    last = a[-1].n
    sa = sb = n01 = n10 = 0.0
    for oa in a:
        ob = b.get((oa.id, oa.t_label))
        pa_, pb_ = getattr(oa, kind), ob and getattr(ob, kind)
        if window and oa.n <= last - window:
            continue
        if alpha is not None:
            sa, sb, n01, n10 = (alpha * v for v in (sa, sb, n01, n10))
        if pa_ is not None and pb_ is not None:
            la, lb = float(pa_ != oa.y), float(pb_ != ob.y)
            sa, sb = sa + la, sb + lb
            n01, n10 = n01 + (la == 1 and lb == 0), n10 + (lb == 1 and la == 0)
    if not sa + sb + n01 + n10:  # nothing compared (a window after B's last answer)
        return {"q_statistic": math.nan, "mcnemar": math.nan}
    d = n01 - n10
    return {"q_statistic": math.log(sa / sb),
            "mcnemar": math.copysign(1.0, d) * d * d / (n01 + n10)}


@pytest.mark.parametrize("replay", ["per-stream", "grouped", "stateful", "backfill"])
def test_a_pair_whose_model_set_labels_aside_is_joined_by_label_on_every_replay(tmp_path,
                                                                                replay):
    """A model that set labels aside (--on-model-error dead-letter) numbers the labels after
    them otherwise than the others. The grouped and stateful replays (and a backfill) keyed each
    model's losses by its own label numbers and joined a pair's only within a block: their
    comparisons dropped most labels (n 4 where the per-stream replay had 25), so one run's
    numbers depended on its replay. The per-stream replay cut a drain into slices by label
    number and lost the pairs at the cuts. Every replay now joins a pair's losses by label (id
    and label time) and puts them on A's label axis."""
    path = _failing_stream(tmp_path)
    models = ["nb=gaussian-nb", "m=tests.helpers.FailsOn", "mc=majority"]
    common = dict(streams=["s=" + path], delay="50", runner="direct", repredict="none",
                  curve_every=10, windows=[300], fadings=[0.99], quiet=True)
    run_out = tmp_path / "run"
    summary = run(RunConfig(models=models, out=str(run_out), on_model_error="dead-letter",
                            replay="grouped" if replay == "backfill" else replay, **common))
    if replay == "backfill":
        summary = run(RunConfig(models=[], predictions=str(run_out / "predictions.parquet"),
                                out=str(tmp_path / "backfill"), **common))
    spec = StreamSpec.parse("s=" + path)
    outcomes = {}
    for name in models:
        engine = ReplayEngine(ModelSpec.parse(name), "s", on_model_error="dead-letter")
        outcomes[name.split("=")[0]] = sorted(
            engine.drain(list(spec.events(DelaySpec.parse("50")))).outcomes, key=lambda o: o.n)
    assert len(outcomes["m"]) < len(outcomes["nb"]) - 50  # (it set many aside)
    rows = summary[summary["category"] == "comparison"]
    assert set(rows["model"]) == {"nb vs m", "nb vs mc", "m vs mc"}
    for pair in ("nb vs m", "m vs mc"):
        a, b = pair.split(" vs ")
        by_label = {(o.id, o.t_label): o for o in outcomes[b]}
        for kind, bin_ in (("initial", 0), ("final", 1)):
            for view, args in (("cumulative", {}), ("w=300", {"window": 300}),
                               ("fading=0.99", {"alpha": 0.99})):
                want = _fading_and_window_oracle(outcomes[a], by_label, kind, **args)
                got = rows[(rows["model"] == pair) & (rows["bin"] == bin_)
                           & (rows["window"] == view)]
                got = dict(zip(got["metric"], got["value"]))
                for name in ("q_statistic", "mcnemar"):
                    assert got[name] == pytest.approx(want[name], rel=1e-12), \
                        (pair, kind, view, name)


def test_a_window_at_the_last_label_that_b_no_longer_holds_has_no_number():
    """The windows at the stream's last label come from each model's last outcomes: B keeps
    its last 2·w. Where A set aside so many labels that its last w reach further back than B
    kept, B's share of the window is not known: the window has no number (n 0, NaN), not one
    over part of it."""
    from transforms.records import Outcome
    from transforms.scoring.comparison import PairBlocks
    from transforms.scoring.plan import ScoringPlan

    def outcome(n, t, p):  # label of instance t at time t, true class 1
        return Outcome(n, t, t - 0.5, float(t), 1, 1, 1, p, None)

    pairs = PairBlocks({"a": "classification", "b": "classification"},
                       ScoringPlan(final=False, windows=(2,)))
    assert pairs.keep == 4
    b = [outcome(t, t, 0) for t in range(1, 11)]
    a = [outcome(n, t, 1) for n, t in enumerate((1, 2, 3, 4, 10), 1)]  # 5..9 set aside

    def window(a_kept, b_kept):
        (_, tail), = pairs.tails("s", [("a", a_kept), ("b", b_kept)])
        score = tail[2][None]
        return score.n, score.get()["mcnemar"]

    # B kept labels 7-10: A's last two labels are 4 and 10, and B's 4 is gone.
    n, mcnemar = window(a[-4:], b[-4:])
    assert n == 0 and math.isnan(mcnemar)
    # B kept all it had (fewer than 2·w): the window is the labels both hold, 4 and 10.
    assert window(a[-4:], b[-2:] + b[3:4]) == (2, -2.0)
