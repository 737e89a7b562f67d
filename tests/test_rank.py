"""Ranking models over streams: average ranks by a plain loop, the Friedman statistic and
p-value as scipy computes them, Iman-Davenport's F and Nemenyi's critical difference by
Demšar's formulas, Wilcoxon for two models, and the command's files and errors."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metrics.ranking import cliques, critical_difference, friedman, friedman_exact_p, ranks
from pipelines.cli import main
from pipelines.config import RunConfig
from pipelines.job import run
from tests.helpers import read_csv, without_notices

# Accuracies of 4 models on 6 streams (hand-made, with ties).
TABLE = np.array([[0.80, 0.75, 0.75, 0.60],
                  [0.70, 0.72, 0.65, 0.61],
                  [0.90, 0.85, 0.80, 0.80],
                  [0.66, 0.70, 0.64, 0.50],
                  [0.81, 0.79, 0.78, 0.77],
                  [0.55, 0.57, 0.50, 0.52]])


def _plain_ranks(row, lower=False):
    """Rank 1 the best; tied values share the mean of the positions they occupy."""
    order = sorted(range(len(row)), key=lambda j: row[j] if lower else -row[j])
    out = [0.0] * len(row)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and row[order[j + 1]] == row[order[i]]:
            j += 1
        for m in order[i:j + 1]:
            out[m] = (i + j) / 2 + 1
        i = j + 1
    return out


def test_ranks_friedman_and_critical_difference():
    r = ranks(TABLE)
    assert r.tolist() == [_plain_ranks(row) for row in TABLE.tolist()]
    assert ranks(TABLE, lower_is_better=True).tolist() == \
        [_plain_ranks(row, lower=True) for row in TABLE.tolist()]
    result = friedman(TABLE)
    chi2, p = stats.friedmanchisquare(*TABLE.T)
    assert (result["chi2"], result["p_chi2"]) == (pytest.approx(chi2), pytest.approx(p))
    n, k = TABLE.shape
    f = (n - 1) * chi2 / (n * (k - 1) - chi2)
    assert result["f"] == pytest.approx(f)
    assert result["p_f"] == pytest.approx(stats.f.sf(f, k - 1, (k - 1) * (n - 1)))
    # Demšar 2006, 3.2.2: q_0.05 = 2.569 for k = 4, and CD = 1.25 for 14 data sets.
    assert critical_difference(4, 14) == pytest.approx(2.569 * math.sqrt(20 / 84), abs=1e-3)
    assert critical_difference(4, 14) == pytest.approx(1.25, abs=0.01)
    average = dict(zip("abcd", r.mean(axis=0)))
    for group in cliques(average, 1.0):  # within a bar, ranks differ by less than CD
        assert average[group[-1]] - average[group[0]] < 1.0


def test_models_tied_on_every_stream_differ_in_nothing():
    """All ranks tied: without the tie correction (which is 0/0 here) Friedman's statistic is
    12n / (k(k + 1)) · Σ_j (R̄_j − (k + 1)/2)² = 0 (Demšar 2006, 3.2.2), so p = 1 — not scipy's
    NaN with an infinite F "significant at p = 0"."""
    table = np.array([[0.9, 0.9, 0.9, 0.9], [0.6, 0.6, 0.6, 0.6], [0.7, 0.7, 0.7, 0.7]])
    n, k = table.shape
    mean_ranks = np.mean([_plain_ranks(row) for row in table.tolist()], axis=0)
    chi2 = 12 * n / (k * (k + 1)) * sum((r - (k + 1) / 2) ** 2 for r in mean_ranks)
    f = (n - 1) * chi2 / (n * (k - 1) - chi2)
    assert friedman(table) == {"chi2": chi2, "p_chi2": stats.chi2.sf(chi2, k - 1), "f": f,
                               "p_f": stats.f.sf(f, k - 1, (k - 1) * (n - 1)),
                               "df": [k - 1, (k - 1) * (n - 1)], "p_exact": 1.0}
    assert friedman(table)["p_f"] == 1.0


def _exact_friedman_p(table) -> float:
    """The permutation test's p of Friedman's statistic, by enumeration: every way of
    arranging each stream's values among the models, equally likely under the null
    hypothesis; χ²_F (the ties in a row fixed) grows with Σ_j R_j², so p is the share of
    arrangements whose Σ_j R_j² is at least the table's."""
    import itertools

    def spread(rows):
        sums = [sum(r[j] for r in rows) for j in range(len(rows[0]))]
        return sum(v * v for v in sums)

    rows = [_plain_ranks(row) for row in table]
    observed = spread(rows)
    arrangements = [list(itertools.permutations(row)) for row in rows]
    hits = total = 0
    for chosen in itertools.product(*arrangements):
        total += 1
        hits += spread(chosen) >= observed - 1e-9
    return hits / total


def test_models_ranked_alike_on_every_stream_agree_perfectly():
    """Two runs' copies of one model tie above the others on every stream: χ²_F with the tie
    correction (Demšar 2006, 3.2.2, in exact fractions here) is N(k − 1), so Iman and
    Davenport's F_F divides by 0: ∞ (it was 1e16 from scipy's χ² rounded below 12). The F
    approximation says nothing there: its p is the permutation test's, by enumeration
    (`_exact_friedman_p`) — on 2 streams 1/6, not the "p = 0" that read as significant."""
    from fractions import Fraction

    table = np.array([[0.9, 0.9, 0.8, 0.7], [0.8, 0.8, 0.6, 0.5], [0.7, 0.7, 0.65, 0.6],
                      [0.95, 0.95, 0.9, 0.85]])
    n, k = table.shape
    rows = [[Fraction(r * 2).limit_denominator() / 2 for r in _plain_ranks(row)]
            for row in table.tolist()]
    column_sums = [sum(row[j] for row in rows) for j in range(k)]
    uncorrected = Fraction(12, n * k * (k + 1)) * sum(r * r for r in column_sums) \
        - 3 * n * (k + 1)
    ties = sum(t ** 3 - t for row in rows for t in (row.count(v) for v in set(row)))
    chi2 = uncorrected / (1 - Fraction(ties, n * (k ** 3 - k)))
    assert chi2 == n * (k - 1)
    result = friedman(table)
    assert result["chi2"] == pytest.approx(float(chi2))
    assert result["f"] == math.inf
    three = table[:3].tolist()  # (24^3 arrangements to enumerate)
    assert friedman(three)["p_f"] == pytest.approx(_exact_friedman_p(three), rel=1e-12)
    two = [[0.9, 0.7, 0.6], [0.8, 0.6, 0.5]]
    assert friedman(two)["p_f"] == pytest.approx(_exact_friedman_p(two)) == 1 / 6


def test_the_exact_p_is_the_permutation_tests_where_it_is_quick_to_count():
    """On few streams, the exact p of Friedman's test beside the χ² approximation's: the share
    of every arrangement of each stream's values (`_exact_friedman_p`, by enumeration), with
    and without ties; none on many streams and models, where counting would take long."""
    rng = np.random.default_rng(11)
    tables = [TABLE[:3].tolist(), TABLE[2:5, :3].tolist(), [[1, 2, 3], [1, 3, 2], [1, 2, 3]]]
    tables += [rng.integers(0, 3, size=(n, k)).tolist() for n, k in ((2, 5), (4, 3), (3, 4))]
    for table in tables:
        assert friedman(table)["p_exact"] == pytest.approx(_exact_friedman_p(table),
                                                           rel=1e-12), table
    assert friedman([[1, 2, 3], [1, 3, 2], [1, 2, 3], [2, 1, 3]])["p_exact"] == 0.125
    assert "p_exact" not in friedman(rng.random((40, 6)))
    # Two models on 3 000 streams (2^3000 arrangements, beyond the floats): the sign test's p.
    two = rng.random((3000, 2)) + [0.03, 0]
    wins = int((two[:, 0] > two[:, 1]).sum())
    assert friedman_exact_p(ranks(two)) == pytest.approx(stats.binomtest(wins, 3000).pvalue,
                                                         rel=1e-9)


def test_rank_json_is_strict_json(tmp_path):
    """Three copies of one model on two streams: every test statistic is a number jq and
    JavaScript read (no NaN, no Infinity)."""
    streams = [f's{i}=synth:SEA{{"n": 200, "seed": {i}}}' for i in range(2)]
    run(RunConfig(streams=streams, models=["a=majority", "b=majority", "c=majority"],
                  delay="20", repredict="none", out=str(tmp_path), quiet=True, runner="direct"))
    assert main(["rank", str(tmp_path), "--metric", "accuracy"]) == 0

    def refuse(constant):
        raise ValueError(f"not strict JSON: {constant}")

    result = json.loads((tmp_path / "rank" / "rank.json").read_text(), parse_constant=refuse)
    assert result["friedman"]["p_f"] == 1.0 and result["groups"] == [["a", "b", "c"]]


@pytest.fixture(scope="session")  # (computed once per test process)
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("rank")
    streams = [f's{i}=synth:SEA{{"n": 600, "seed": {i}, "noise": 0.1}}' for i in range(5)]
    run(RunConfig(streams=streams, models=["gaussian-nb", "majority", "no-change"],
                  delay="20", repredict="none", out=str(out / "three"), quiet=True,
                  runner="direct"))
    run(RunConfig(streams=streams[:4], models=["gaussian-nb", "majority"], delay="20",
                  repredict="none", out=str(out / "two"), quiet=True, runner="direct"))
    return out


def test_rank_command_writes_ranks_tests_and_the_diagram(runs, capsys):
    assert main(["rank", str(runs / "three"), "--metric", "kappa"]) == 0
    printed = capsys.readouterr().out
    assert "Friedman" in printed and "Nemenyi CD" in printed
    folder = runs / "three" / "rank"
    result = json.loads((folder / "rank.json").read_text())
    summary = read_csv(runs / "three" / "summary.csv")
    rows = summary[(summary["category"] == "initial") & (summary["metric"] == "kappa")
                   & (summary["window"] == "cumulative") & summary["class"].isna()]
    table = rows.pivot(index="stream", columns="model", values="value")
    expected = np.mean([_plain_ranks(row) for row in table.to_numpy().tolist()], axis=0)
    assert result["average_ranks"] == pytest.approx(dict(zip(table.columns, expected)))
    assert result["friedman"]["chi2"] == pytest.approx(
        stats.friedmanchisquare(*table.to_numpy().T)[0])
    assert {p.name for p in folder.iterdir()} == {"ranks.csv", "rank.json", "cd_diagram.png",
                                                   "cd_diagram.svg", "cd_diagram.pdf"}


def test_a_measure_of_one_class_is_ranked_as_trend_and_fail_if_name_it(runs, capsys):
    """'recall (True)', as --fail-if and trend name a class's measure: each stream's recall of
    True ranks the models (it was "no initial recall (True)", and 'recall' alone listed recall
    among the measures the runs report while refusing it)."""
    assert main(["rank", str(runs / "three"), "--metric", "recall (True)", "--out",
                 str(runs / "recall-rank")]) == 0
    result = json.loads((runs / "recall-rank" / "rank.json").read_text())
    summary = read_csv(runs / "three" / "summary.csv", dtype={"class": str})
    rows = summary[(summary["category"] == "initial") & (summary["metric"] == "recall")
                   & (summary["window"] == "cumulative") & (summary["class"] == "True")]
    table = rows.pivot(index="stream", columns="model", values="value")
    expected = np.mean([_plain_ranks(row) for row in table.to_numpy().tolist()], axis=0)
    assert result["metric"] == "recall (True)" and result["streams"] == len(table) == 5
    assert result["average_ranks"] == pytest.approx(dict(zip(table.columns, expected)))
    for metric, line in (("recall", "recall is a measure of each class (the runs have it for "
                                    "True, False): name the class, e.g. --metric 'recall (True)'"
                                    ", or rank its average over the classes, --metric "
                                    "macro_recall"),
                         ("recall (yes)", "the runs' initial recall (cumulative) is of no class "
                                          "'yes' (the runs have it for True, False)")):
        capsys.readouterr()
        assert main(["rank", str(runs / "three"), "--metric", metric]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and line in err, metric


def test_two_models_get_the_wilcoxon_test(runs, capsys):
    out = runs / "two-rank"
    assert main(["rank", str(runs / "two"), "--metric", "log_loss", "--out", str(out)]) == 0
    result = json.loads((out / "rank.json").read_text())
    summary = read_csv(runs / "two" / "summary.csv")
    rows = summary[(summary["category"] == "initial") & (summary["metric"] == "log_loss")
                   & (summary["window"] == "cumulative")]
    table = rows.pivot(index="stream", columns="model", values="value")
    test = stats.wilcoxon(table["gaussian-nb"], table["majority"])
    assert result["wilcoxon"]["p"] == pytest.approx(test.pvalue)
    assert result["better"] == "lower" and result["average_ranks"]["gaussian-nb"] == 1.0
    assert "Wilcoxon" in capsys.readouterr().out


def test_each_models_mean_and_rank_over_the_streams_are_printed_and_in_the_report(runs,
                                                                                   capsys):
    """Beside its average rank, each model's mean over the streams, on the terminal and in
    the report's 'Across streams' table with Friedman's χ² (Demšar's formula), initial and
    final: the means by pandas, the ranks by a plain loop."""
    import re

    from pipelines.report import _across_streams_html
    from pipelines.run_files import RunFiles

    assert main(["rank", str(runs / "three"), "--out", str(runs / "means-rank")]) == 0
    printed = capsys.readouterr().out
    page = "\n".join(_across_streams_html(RunFiles.read(str(runs / "three"))))
    cells = {model: re.findall(r"<td>([^<]*)</td>", tds) for model, tds in
             re.findall(r"<tr>\s*<th>([^<]+)</th>((?:\s*<td>[^<]*</td>)+)", page)}
    summary = read_csv(runs / "three" / "summary.csv")
    for column, category in enumerate(("initial", "final")):
        rows = summary[(summary["category"] == category) & (summary["metric"] == "accuracy")
                       & (summary["window"] == "cumulative") & summary["class"].isna()]
        table = rows.pivot(index="stream", columns="model", values="value")
        average = np.mean([_plain_ranks(row) for row in table.to_numpy().tolist()], axis=0)
        for model, mean, rank in zip(table.columns, table.mean(), average):
            assert cells[model][2 * column:2 * column + 2] == [f"{mean:.4f}", f"{rank:.2f}"]
            if category == "initial":
                assert re.search(rf"\n  {model} +{rank:.2f}  {mean:.4f}\n", printed), model
        n, k = table.shape
        chi2 = 12 * n / (k * (k + 1)) * (np.sum(average ** 2) - k * (k + 1) ** 2 / 4)
        assert f"{category.capitalize()} accuracy over 5 streams: Friedman: χ² = {chi2:.3f}" \
            in page
    assert list(cells) == ["gaussian-nb", "majority", "no-change"]  # (as the run has them)


def test_a_run_of_several_streams_and_models_ends_with_their_ranks_and_means(tmp_path, capsys):
    """What `rank` prints of the run, last on the terminal: each model's average rank and
    mean initial accuracy over the streams (by a plain loop over summary.csv) and the test."""
    import re

    argv = ["run", "--model", "majority", "--model", "gaussian-nb", "--delay", "10",
            "--repredict", "none", "--runner", "direct", "--out", str(tmp_path)]
    for i in range(3):
        argv += ["--stream", f's{i}=synth:SEA{{"n": 300, "seed": {i}, "noise": 0.2}}']
    assert main(argv) == 0
    printed = capsys.readouterr().out
    summary = read_csv(tmp_path / "summary.csv")
    rows = summary[(summary["category"] == "initial") & (summary["metric"] == "accuracy")
                   & (summary["window"] == "cumulative") & summary["class"].isna()]
    table = rows.pivot(index="stream", columns="model", values="value")
    average = np.mean([_plain_ranks(row) for row in table.to_numpy().tolist()], axis=0)
    block = printed[printed.index("initial accuracy over 3 streams: average rank (1 = best), "
                                  "mean\n"):]
    for model, mean, rank in zip(table.columns, table.mean(), average):
        assert re.search(rf"\n  {model} +{rank:.2f}  {mean:.4f}\n", block), model
    assert "\nWilcoxon signed-rank: W = " in block


def test_psi_alpha_chooses_one_intermediate_measure(tmp_path, capsys):
    out = tmp_path / "binned"
    streams = [f's{i}=synth:SEA{{"n": 400, "seed": {i}}}' for i in range(3)]
    run(RunConfig(streams=streams, models=["gaussian-nb", "no-change"], delay="20", bins=4,
                  repredict="every_k_labels:5", out=str(out), quiet=True, runner="direct"))
    argv = ["rank", str(out), "--category", "intermediate"]
    assert main(argv) == 2 and "choose one with --psi" in capsys.readouterr().err
    assert main([*argv, "--psi", "2"]) == 0
    result = json.loads((out / "rank" / "rank.json").read_text())
    summary = read_csv(out / "summary.csv")
    rows = summary[(summary["category"] == "intermediate") & (summary["alpha"] == 2.0)
                   & (summary["metric"] == "accuracy") & (summary["window"] == "cumulative")]
    table = rows.pivot(index="stream", columns="model", values="value")
    expected = np.mean([_plain_ranks(row) for row in table.to_numpy().tolist()], axis=0)
    assert result["average_ranks"] == pytest.approx(dict(zip(table.columns, expected)))
    assert result["metric"] == "accuracy (Ψ2)"
    assert main([*argv, "--psi", "3"]) == 2
    assert "has intermediate accuracy for α in 1, 2, 10, not 3; choose one of them" in \
        capsys.readouterr().err
    assert main(["rank", str(out), "--psi", "2"]) == 2
    assert "has no Ψα of initial accuracy; --psi goes with --category intermediate" in \
        capsys.readouterr().err


def test_runs_sharing_a_stream_name_and_cv_folds_give_one_column_per_model(tmp_path):
    """A stream named alike in two runs is two streams (`DIR:stream`) for every model of
    either, not only for the models both ran; a --cv run's folds (`m#0`) are no models."""
    from pipelines.rank import measure_table

    def write(name, values):
        (tmp_path / name).mkdir()
        pd.DataFrame([{"stream": st, "segment": None, "model": m, "category": "initial",
                       "bin": None, "alpha": None, "window": "cumulative",
                       "metric": "accuracy", "class": None, "value": v, "n": 10}
                      for st, m, v in values]).to_csv(tmp_path / name / "summary.csv",
                                                      index=False)

    write("a", [("s", "m", 0.7), ("s", "n", 0.6), ("s", "m#0", 0.1), ("t", "m", 0.8),
                ("t", "n", 0.9)])
    write("b", [("s", "m", 0.5)])
    table = measure_table([str(tmp_path / "a"), str(tmp_path / "b")])
    assert list(table.columns) == ["m", "n"]
    assert table.fillna(-1).to_dict() == {
        "m": {f"{tmp_path / 'a'}:s": 0.7, "t": 0.8, f"{tmp_path / 'b'}:s": 0.5},
        "n": {f"{tmp_path / 'a'}:s": 0.6, "t": 0.9, f"{tmp_path / 'b'}:s": -1}}


def test_regression_runs_are_ranked_on_mae_unless_told(tmp_path, capsys):
    """Runs with no accuracy (regressors only) rank MAE, lower first; a measure they lack is
    refused with the measures they have."""
    rows = [("s", "a", "mae", 0.3), ("s", "b", "mae", 0.2), ("t", "a", "mae", 0.5),
            ("t", "b", "mae", 0.4), ("s", "a", "rmse", 0.9), ("s", "b", "rmse", 0.1),
            ("t", "a", "rmse", 0.8), ("t", "b", "rmse", 0.7)]
    pd.DataFrame([{"stream": st, "segment": None, "model": m, "category": "initial",
                   "bin": None, "alpha": None, "window": "cumulative", "metric": metric,
                   "class": None, "value": v, "n": 10} for st, m, metric, v in rows]).to_csv(
        tmp_path / "summary.csv", index=False)
    assert main(["rank", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "rank" / "rank.json").read_text())
    assert (result["metric"], result["better"]) == ("mae", "lower")
    assert result["average_ranks"] == {"a": 2.0, "b": 1.0}
    assert main(["rank", str(tmp_path), "--metric", "accuracy"]) == 2
    assert capsys.readouterr().err.strip().endswith("(initial cumulative: mae, rmse)")


def test_a_model_without_a_value_on_any_stream_is_named_and_left_out(tmp_path, capsys):
    """A model that answered no prediction has NaN on every stream: pandas' pivot left its
    column out (a KeyError); it is named as left out, and the others are ranked."""
    streams = [f's{i}=synth:SEA{{"n": 200, "seed": {i}}}' for i in range(2)]
    run(RunConfig(streams=streams, models=["silent=tests.helpers.AnswersNothing", "majority",
                                           "no-change"],
                  delay="20", repredict="none", out=str(tmp_path), quiet=True, runner="direct"))
    assert main(["rank", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "left out, as they have values on too few of the streams: models silent\n" in printed
    assert "Wilcoxon signed-rank" in printed
    assert sorted(json.loads((tmp_path / "rank" / "rank.json").read_text())[
        "average_ranks"]) == ["majority", "no-change"]
    # With two models, one of them silent, nothing can be ranked: one line names it, and
    # the first 5 streams it lacks (of hundreds, a line of thousands of characters).
    streams = [f's{i}=synth:SEA{{"n": 50, "seed": {i}}}' for i in range(7)]
    run(RunConfig(streams=streams, models=["silent=tests.helpers.AnswersNothing", "majority"],
                  delay="20", repredict="none", out=str(tmp_path / "two"), quiet=True,
                  runner="direct"))
    assert main(["rank", str(tmp_path / "two")]) == 2
    assert without_notices(capsys.readouterr().err) == (
        "delayed-eval: error: ranking needs at least 2 models, each with its initial accuracy "
        "on the same 2 or more streams; found 2 model(s) on 7 stream(s) (silent has none on "
        "s0, s1, s2, s3, s4 and 2 more); give the folders of runs of the same models over "
        "several streams\n")


@pytest.mark.parametrize("argv, message", [
    (["nowhere"], "nowhere: no such folder"),
    (["{three}/summary.csv"], "summary.csv: a file, not a folder; give the output folders"),
    (["{three}", "--metric", "no_such_measure"], "no initial no_such_measure"),
    (["{three}", "--alpha", "5"], "between 0 and 1 (exclusive), not 5; e.g. --alpha 0.05"),
    (["{three}", "--alpha", "nan"], "between 0 and 1 (exclusive), not nan"),
])
def test_rank_mistakes_are_one_line(runs, capsys, argv, message):
    argv = [a.format(three=runs / "three") for a in argv]
    assert main(["rank", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("delayed-eval: error: ") and message in err


def test_a_run_given_twice_is_refused_not_counted_twice(runs, tmp_path, capsys):
    """The same run by another path (`three/`) or copied elsewhere doubled its streams in the
    Friedman test (10 'streams' from 5); given once by name, it was silently counted once."""
    import shutil

    three = str(runs / "three")
    copy = shutil.copytree(three, tmp_path / "copy", ignore=shutil.ignore_patterns("rank"))
    for dirs, said in (([three, three + "/"], f"{three} and {three}/ hold the same run"),
                       ([three, str(copy)], f"{three} and {copy} hold the same run"),
                       ([three, three], f"{three} is given twice")):
        assert main(["rank", *dirs, "--out", str(tmp_path / "r")]) == 2
        err = capsys.readouterr().err
        assert said in err and "give each run once" in err and err.count("\n") == 1
    # Two runs of the same streams: each stream once, each model the two ran once per run
    # (two's lack s4, left out).
    two = str(runs / "two")
    assert main(["rank", three, two, "--out", str(tmp_path / "r")]) == 0
    result = json.loads((tmp_path / "r" / "rank.json").read_text())
    assert result["streams"] == 4 and set(result["average_ranks"]) == {
        f"{three}:gaussian-nb", f"{two}:gaussian-nb", f"{three}:majority", f"{two}:majority",
        "no-change"}


def test_runs_of_other_models_on_the_same_streams_are_ranked_as_one_run(runs, tmp_path):
    """A model evaluated later on the same streams joins the others on them: the table of
    `two` (gaussian-nb, majority) and a run of no-change on the same 4 streams is the table
    of `three`, which ran all three at once (its 5th stream left out). Each was two streams
    per model (`DIR:s0`, ...) with no stream where all three had a value."""
    from pipelines.rank import measure_table

    streams = [f's{i}=synth:SEA{{"n": 600, "seed": {i}, "noise": 0.1}}' for i in range(4)]
    run(RunConfig(streams=streams, models=["no-change"], delay="20", repredict="none",
                  out=str(tmp_path / "later"), quiet=True, runner="direct"))
    together = measure_table([str(runs / "two"), str(tmp_path / "later")], "kappa")
    at_once = measure_table([str(runs / "three")], "kappa").loc[[f"s{i}" for i in range(4)]]
    pd.testing.assert_frame_equal(together[at_once.columns], at_once, check_exact=True)
    assert main(["rank", str(runs / "two"), str(tmp_path / "later"), "--out",
                 str(tmp_path / "r")]) == 0
    assert json.loads((tmp_path / "r" / "rank.json").read_text())["streams"] == 4
    # Not the same streams: another delay.
    run(RunConfig(streams=streams, models=["no-change"], delay="30", repredict="none",
                  out=str(tmp_path / "other"), quiet=True, runner="direct"))
    apart = measure_table([str(runs / "two"), str(tmp_path / "other")])
    assert sorted(apart.index) == sorted(f"{tmp_path / run_}:s{i}" for i in range(4)
                                         for run_ in ("other", runs / "two"))


def test_a_file_is_the_same_stream_where_it_was_copied_not_once_written_again(tmp_path):
    """Two runs of one CSV file: copied to another folder between them, its stream is one
    stream; written again with other labels, two (`DIR:s`), though its name, its size and
    its number of rows are the same."""
    from pipelines.rank import measure_table

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"time": np.arange(200), "x": rng.normal(size=200),
                          "label": rng.choice(["a", "b"], size=200)})

    def evaluate(folder, model, labels):
        (tmp_path / folder).mkdir(exist_ok=True)
        frame.assign(label=labels).to_csv(tmp_path / folder / "s.csv", index=False)
        run(RunConfig(streams=[f"{tmp_path / folder / 's.csv'}"], models=[model], delay="5",
                      repredict="none", out=str(tmp_path / f"{folder}-{model}"), quiet=True,
                      runner="direct"))
        return str(tmp_path / f"{folder}-{model}")

    first = evaluate("here", "majority", frame["label"])
    copied = evaluate("there", "no-change", frame["label"])
    assert list(measure_table([first, copied]).index) == ["s"]
    again = evaluate("here", "no-change", frame["label"].map({"a": "b", "b": "a"}))
    assert sorted(measure_table([first, again]).index) == [f"{first}:s", f"{again}:s"]


def test_runs_on_another_filesystem_are_ranked_as_their_copies_here(runs, tmp_path,
                                                                      monkeypatch, capsys):
    """Runs written to gs:// or s3://: `rank` said to copy them here first. It reads their
    summaries there now and writes its files there: the ranks of the same runs here, each
    model of two runs on a stream named by the folder as given; the same run given twice is still
    refused; nothing is left where it started."""
    import shutil

    from tests.helpers import RemoteFileSystem

    started = tmp_path / "started-here"
    started.mkdir()
    monkeypatch.chdir(started)
    for name in ("three", "two"):
        shutil.copytree(runs / name, tmp_path / name, ignore=shutil.ignore_patterns("rank"))
    three, two = (f"{RemoteFileSystem.PREFIX}{tmp_path / name}" for name in ("three", "two"))
    assert main(["rank", str(runs / "three"), str(runs / "two"), "--out",
                 str(tmp_path / "local")]) == 0
    printed = capsys.readouterr().out
    assert main(["rank", three, two]) == 0

    def named_there(text: str) -> str:
        return text.replace(str(runs / "three"), three).replace(str(runs / "two"), two)

    def words(text: str) -> list[str]:  # (the columns are as wide as the longest name)
        return text.split()

    assert words(capsys.readouterr().out) == words(named_there(printed).replace(
        str(tmp_path / "local"), f"{three}/rank"))
    for name in ("rank.json", "ranks.csv"):
        assert (tmp_path / "three" / "rank" / name).read_text() == \
            named_there((tmp_path / "local" / name).read_text())
    assert f"{three}:gaussian-nb" in (tmp_path / "three" / "rank" / "ranks.csv").read_text()
    assert main(["rank", three, str(tmp_path / "three")]) == 2
    assert f"{three} and {tmp_path / 'three'} hold the same run" in capsys.readouterr().err
    assert main(["rank", f"{three}/none"]) == 2
    assert capsys.readouterr().err == (f"delayed-eval: error: {three}/none: no summary.csv; "
                                       f"give the output folders of finished runs\n")
    assert list(started.iterdir()) == []


def test_streams_and_runs_left_out_of_the_ranks_are_named(tmp_path, capsys):
    """A run of another task (no accuracy) and a stream where one model has no value were
    left out of the ranks without a word on the terminal."""
    rows = {"cls": [(s, m, "accuracy", v) for s, values in (("s1", (0.9, 0.8)), ("s2", (0.7, 0.6)),
                                                             ("s3", (0.5, 0.6)))
                    for m, v in zip("ab", values)][:-1],  # s3 has no value of b
            "reg": [("r1", "a", "mae", 1.0), ("r1", "b", "mae", 2.0)]}
    for name, values in rows.items():
        (tmp_path / name).mkdir()
        pd.DataFrame([{"stream": s, "segment": None, "model": m, "category": "initial",
                       "bin": None, "window": "cumulative", "metric": metric, "class": None,
                       "value": v, "n": 10} for s, m, metric, v in values]
                     ).to_csv(tmp_path / name / "summary.csv", index=False)
    assert main(["rank", str(tmp_path / "cls"), str(tmp_path / "reg"), "--metric", "accuracy",
                 "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "left out, as a model has no value there: streams s3\n" in printed
    assert f"left out, as they report no initial accuracy: runs {tmp_path / 'reg'}\n" in printed
    result = json.loads((tmp_path / "out" / "rank.json").read_text())
    assert result["left_out_runs"] == [str(tmp_path / "reg")] and result["streams"] == 2


def test_a_model_on_few_streams_is_left_out_rather_than_every_stream_it_lacks(tmp_path,
                                                                                capsys):
    """Runs of three models over three streams, and a fourth run of one of them and a model
    of its own on a stream of its own: no stream had all four models, so nothing was
    ranked. The three models are ranked over their three streams (Friedman as scipy has it
    on their values), the fourth model and the fourth stream are named as left out."""
    values = {"s1": {"a": 0.9, "b": 0.8, "c": 0.5}, "s2": {"a": 0.7, "b": 0.75, "c": 0.6},
              "s3": {"a": 0.8, "b": 0.6, "c": 0.4}, "s4": {"a": 0.7, "knn": 0.9}}
    for stream, models in values.items():
        (tmp_path / stream).mkdir()
        pd.DataFrame([{"stream": stream, "segment": None, "model": m, "category": "initial",
                       "bin": None, "window": "cumulative", "metric": "accuracy",
                       "class": None, "value": v, "n": 10} for m, v in models.items()]
                     ).to_csv(tmp_path / stream / "summary.csv", index=False)
    assert main(["rank", *(str(tmp_path / s) for s in values), "--out",
                 str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "left out, as they have values on too few of the streams: models knn\n" in printed
    assert "left out, as a model has no value there: streams s4\n" in printed
    result = json.loads((tmp_path / "out" / "rank.json").read_text())
    three = [[values[s][m] for m in "abc"] for s in ("s1", "s2", "s3")]
    assert result["average_ranks"] == {m: float(np.mean([_plain_ranks(row)[j] for row in three]))
                                       for j, m in enumerate("abc")}
    assert result["friedman"]["p_chi2"] == pytest.approx(stats.friedmanchisquare(
        *np.array(three).T).pvalue, rel=1e-12)
    assert (result["left_out_models"], result["left_out_streams"]) == (["knn"], ["s4"])


def test_the_cd_diagram_makes_room_for_long_model_names():
    """Models of several runs are named `DIR:model`; with folders longer than the rank axis,
    matplotlib could not fit the names and said so on the terminal ('Tight layout not
    applied'), squeezing the axis."""
    import warnings

    from pipelines.figures import _png, _pyplot
    from pipelines.rank import cd_diagram

    plt = _pyplot()
    folder = "/home/analyst/experiments/2026-12-05/delayed-labels/sea-and-agrawal/run"
    names = [f"{folder}{i}:{model}" for i in (1, 2) for model in ("gaussian-nb", "majority")]
    result = {"metric": "accuracy", "category": "initial", "streams": 4, "alpha": 0.05,
              "average_ranks": dict(zip(names, [1.5, 1.9, 3.1, 3.5])),
              "critical_difference": 2.35, "groups": [names]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pictures = _png(plt, cd_diagram(plt, result))
    assert set(pictures) >= {"png", "svg", "pdf"}
