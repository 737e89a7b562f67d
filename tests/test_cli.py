"""The command line and YAML config, end to end on the DirectRunner preset."""

import io
import json
import re

import pandas as pd
import pytest

from pipelines.cli import main
from pipelines.config import RunConfig
from pipelines.results import load_results
from tests.helpers import data, read_csv, without_notices
from transforms.errors import ConfigError

OUTPUTS = {"summary.csv", "summary.parquet", "curves.parquet", "predictions.parquet",
           "manifest.json", "dead_letters.jsonl"}


def test_run_writes_every_output(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["run", "--stream", 'synth:SEA{"n": 600, "seed": 2}', "--model", "majority",
                 "--model", 'nb=river.naive_bayes.GaussianNB', "--delay", "50", "--out",
                 str(out), "--runner", "direct", "--curve-every", "100", "--repredict", "none"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "initial accuracy" in printed and "nb" in printed
    assert OUTPUTS <= {p.name for p in out.iterdir()}
    assert not [p for p in out.iterdir() if p.name.startswith(".staging")]
    summary = load_results(str(out))
    assert list(summary.columns) == ["run_id", "stream", "segment", "model", "protocol",
                                     "category", "bin",
                                     "alpha", "window", "metric", "class", "predicted", "value",
                                     "n", "t"]
    scores = summary[~summary["category"].isin(["drift", "comparison"])]
    assert set(scores["metric"]) == {
        "accuracy", "kappa", "kappa_m", "kappa_t", "kappa_plus", "balanced_accuracy", "gmean",
        "mcc",
        "macro_precision", "macro_recall", "macro_f1", "weighted_precision", "weighted_recall",
        "weighted_f1", "micro_f1", "accuracy_ci_hoeffding", "accuracy_ci_chernoff",
        "accuracy_wilson_low", "accuracy_wilson_high", "kappa_se", "kappa_z", "precision",
        "recall", "f1", "precision_wilson_low", "precision_wilson_high", "recall_wilson_low",
        "recall_wilson_high", "confusion", "log_loss", "brier", "ece", "reliability_confidence",
        "reliability_accuracy"}
    # Per-class rows name SEA's classes as the prediction log does; the others have no class.
    assert set(scores["class"].dropna()) == {"True", "False"}
    assert scores[scores["metric"] == "accuracy"]["class"].isna().all()
    assert set(summary["window"]) == {"cumulative"}
    # Page-Hinkley runs by default over the initial predictions' losses.
    assert summary.query("category == 'drift' and metric == 'alarms'")["n"].tolist() \
        == [550, 550]
    pairs = summary.query("category == 'comparison'")
    assert set(pairs["model"]) == {"majority vs nb"} and set(pairs["bin"]) == {0, 1}
    curves = load_results(str(out), "curves")
    nb = curves.query("model == 'nb' and category == 'final' and metric == 'accuracy'")
    assert nb["labels"].tolist() == list(range(100, 601, 100))
    last = summary.query("model == 'nb' and category == 'final' and metric == 'accuracy'")
    assert nb["value"].iloc[-1] == last["value"].item()
    preds = load_results(str(out), "predictions")
    assert len(preds) == 2 * 2 * 600 and set(preds["kind"]) == {"initial", "final"}
    manifest = json.load(open(out / "manifest.json"))
    assert manifest["versions"]["apache-beam"].startswith("2.77")
    assert manifest["streams"]["sea"]["seed"] == 2
    assert [c["scored_initial"] for c in manifest["counts"]] == [550, 550]


def test_yaml_config_and_cli_overrides(tmp_path):
    cfg = tmp_path / "run.yaml"
    cfg.write_text(f"""
streams:
  - rows={data("rows.csv")}
models: [{{nc: no-change}}]
delay: 1
out: {tmp_path / "from-yaml"}
runner: direct
quiet: true
""")
    assert main(["run", "--config", str(cfg)]) == 0
    summary = read_csv(tmp_path / "from-yaml" / "summary.csv")
    # rows.csv labels a, b, a, b with delay 1: No-Change predicts the previous label.
    acc = summary.query("category == 'initial' and metric == 'accuracy'")
    assert acc["value"].item() == 0.0 and acc["n"].item() == 3
    assert acc["model"].item() == "nc"  # a list item {name: spec} names its model
    assert main(["run", "--config", str(cfg), "--out", str(tmp_path / "override")]) == 0
    assert (tmp_path / "override" / "summary.csv").exists()


def test_a_yaml_date_is_the_day_it_names(tmp_path):
    """`from: 2026-11-01` unquoted is a date to YAML; it is the day, as on the command line."""
    from pipelines.config import RunConfig

    cfg = tmp_path / "nightly.yaml"
    cfg.write_text("streams: [x]\nmodels: [y]\nout: z\nfrom: 2026-11-01\n"
                   "to: 2026-11-02 10:30:00\n")
    config = RunConfig.from_yaml(str(cfg))
    assert (config.start, config.end) == ("2026-11-01", "2026-11-02T10:30:00")


def test_a_config_on_another_filesystem_is_read_as_a_local_one(tmp_path):
    """A scheduler may keep the config beside its logs, on gs://: read through Beam's
    FileSystems (it was 'No such file or directory'); a missing one is still named so."""
    from tests.helpers import RemoteFileSystem  # noqa: F401 (registers remote://)

    cfg = tmp_path / "nightly.yaml"
    cfg.write_text("streams: [x]\nmodels: [y]\nout: z\nfrom: 2026-11-01\nrun-id: n1\n")
    assert RunConfig.from_yaml(f"remote://{cfg}") == RunConfig.from_yaml(str(cfg))
    with pytest.raises(ConfigError, match=r"^remote://.*/none.yaml: No such file or directory; "
                                          r"give the path of a YAML config file"):
        RunConfig.from_yaml(f"remote://{tmp_path}/none.yaml")

def test_a_config_path_written_relative_to_the_config_says_which_path_to_write(
        tmp_path, monkeypatch, capsys):
    """A config's paths are relative to the current folder, as flags are; a file named as if
    relative to the config file is refused with the path that names it."""
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "s.csv").write_text("x,label\n1.0,a\n2.0,b\n1.5,a\n")
    (tmp_path / "conf" / "run.yaml").write_text("stream: [s.csv]\nmodel: majority\nout: o\n")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--config", "conf/run.yaml", "--runner", "direct", "--quiet"]) == 2
    assert capsys.readouterr().err == (
        f"delayed-eval: error: conf/run.yaml: stream s: 's.csv' is not in the current folder "
        f"({tmp_path}) but next to the config; its paths are relative to the current folder, "
        f"as on the command line: write 'conf/s.csv'\n")
    monkeypatch.chdir(tmp_path / "conf")
    assert main(["run", "--config", "run.yaml", "--runner", "direct", "--quiet"]) == 0


def test_a_spec_left_unquoted_in_a_config_says_to_quote_it(tmp_path, capsys):
    """YAML reads `- synth:SEA{"n": 500}` as the mapping {'synth:SEA{"n"': '500}'}: one line
    with the spec as written and its quoted form, for a stream and for a model."""
    for field, spec in (("stream", 'synth:SEA{"n": 500}'),
                        ("model", 'river.tree.HoeffdingTreeClassifier{"grace_period": 50}')):
        other = "model: majority" if field == "stream" else "stream: synth:SEA"
        config = tmp_path / f"{field}.yaml"
        config.write_text(f"{field}:\n  - {spec}\n{other}\ndelay: 10\nout: {tmp_path}/o\n")
        assert main(["run", "--config", str(config), "--runner", "direct", "--quiet"]) == 2
        assert capsys.readouterr().err == (
            f"delayed-eval: error: {config}: {field} {spec!r} is read by YAML as a mapping "
            f"(': ' outside quotes); quote it: - '{spec}'\n")
        config.write_text(f"{field}:\n  - '{spec}'\n{other}\ndelay: 10\nout: {tmp_path}/o\n")
        assert RunConfig.from_yaml(str(config)).to_dict()[f"{field}s"] == [spec]


def test_an_option_of_the_other_command_says_whose_it_is(tmp_path, capsys):
    """Not 'unknown option --cv; did you mean --auc?' (the closest Beam or own flag)."""
    for argv, said in (
            (["backfill", "--stream", 'synth:SEA{"n": 10}', "--predictions", "p.csv",
              "--cv", "k-fold:3"], "backfill: --cv is an option of run, which replays models"),
            (["run", "--stream", 'synth:SEA{"n": 10}', "--model", "majority",
              "--predictions=p.csv"], "run: --predictions is an option of backfill")):
        assert main([*argv, "--out", str(tmp_path), "--runner", "direct"]) == 2
        assert said in capsys.readouterr().err


def test_a_config_file_with_the_other_commands_options_says_whose_they_are(tmp_path, capsys):
    """`run --config` of a file naming a prediction log scored the log and not its models,
    exit 0; `backfill --config` of a file naming none said 'unknown re-prediction policy
    logged'. Each is one line naming the file and the option."""
    stream = "stream: 'synth:SEA{\"n\": 50}'\ndelay: 5\nrunner: direct\nquiet: true\n"
    for command, text, said in (
            ("run", "model: [majority]\npredictions: p.csv\n",
             "predictions is an option of backfill"),
            ("run", "model: [majority]\ntask: regression\n", "task is an option of backfill"),
            ("backfill", "predictions: p.csv\nholdout: '100:10'\n",
             "holdout is an option of run"),
            ("backfill", "predictions: p.csv\nno-final: true\n",
             "no-final is an option of run"),
            ("backfill", "model: [v1]\n", "--predictions LOG is required (or predictions: "
                                           "LOG in")):
        config = tmp_path / f"{command}.yaml"
        config.write_text(f"{stream}out: {tmp_path / 'o'}\n{text}")
        assert main([command, "--config", str(config)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("delayed-eval: error: ") and said in err, err
        assert err.count("\n") == 1
    assert not (tmp_path / "o").exists()
    assert main(["run", "--config", str(tmp_path / "none.yaml")]) == 2
    assert "none.yaml: No such file or directory; give the path of a YAML config file" in \
        capsys.readouterr().err


def test_a_quoted_number_in_a_config_is_the_number(tmp_path):
    """`bins: '12'` is read as `--bins 12` is (it was refused as "not a whole number")."""
    from pipelines.config import RunConfig

    cfg = tmp_path / "quoted.yaml"
    cfg.write_text("streams: [x]\nmodels: [y]\nout: z\nbins: '12'\nwindow: ['50', 200]\n"
                   "fading: \"0.99\"\nph_threshold: ' 20 '\n")
    config = RunConfig.from_yaml(str(cfg))
    assert (config.bins, config.windows, config.fadings, config.ph_threshold) == \
        (12, [50, 200], [0.99], 20.0)


def test_unknown_config_field_is_reported(tmp_path, capsys):
    cfg = tmp_path / "bad.yaml"

    def refused(text: str) -> str:
        cfg.write_text(text)
        assert main(["run", "--config", str(cfg)]) == 2
        return capsys.readouterr().err

    assert "unknown field 'speed'" in refused("streams: [x]\nmodels: [y]\nout: z\nspeed: fast\n")
    assert "unknown field 'dealy'; did you mean 'delay'?" in refused(
        "streams: [x]\nmodels: [y]\nout: z\ndealy: 5\n")
    assert refused("streams: [x]\nmodels: [y]\nout: z\nbins: many\n") == \
        f"delayed-eval: error: {cfg}: --bins 'many': not a whole number\n"
    # A stream as a mapping of its file and options would be streams named path and label.
    assert refused("streams:\n  - path: tx.csv\n    label: fraud\nmodels: [y]\nout: z\n") == (
        f"delayed-eval: error: {cfg}: stream {{'path': 'tx.csv', 'label': 'fraud'}}: a stream "
        f"is one spec, its options in JSON after the file: 'tx.csv{{\"label\": \"fraud\"}}' "
        f"(name it NAME=SPEC)\n")
    # ... also under its name, and a name's mapping of anything else.
    assert refused("streams:\n  sea:\n    source: synth:SEA\n    n: 300\nmodels: [y]\n"
                   "out: z\n").endswith("after the file: 'sea=synth:SEA{\"n\": 300}'\n")
    assert refused("streams:\n  trips:\n    time: pickup\nmodels: [y]\nout: z\n").endswith(
        "stream {\"time\": \"pickup\"}: a stream is one text, its options in JSON after its "
        "source, e.g. 'logs/trips.csv{\"time\": \"pickup\"}' (quoted in YAML)\n")
    # A file saved in Latin-1 (an internal UnicodeDecodeError), and a negative delay.
    cfg.write_bytes("streams: [x]\nmodels: [y]\n# café\nout: z\n".encode("latin-1"))
    assert main(["run", "--config", str(cfg)]) == 2
    assert capsys.readouterr().err == (f"delayed-eval: error: {cfg}, line 3: not UTF-8 text "
                                       f"(byte 0xe9); save the file as UTF-8\n")
    assert refused("streams: [x]\nmodels: [y]\nout: z\ndelay: -5\n").endswith(
        "delay '-5' is negative: a label never comes before its instance; give 0 or more "
        "events, or a duration (30s, 5min)\n")
    # ... and a model as a mapping of its class and parameters, a model named class.
    assert refused("streams: [x]\nmodels:\n  - class: hoeffding-tree\n    grace_period: 50\n"
                   "out: z\n").endswith(
        "a model is one spec, its parameters in JSON after its class: "
        "'hoeffding-tree{\"grace_period\": 50}'\n")
    # A key given twice: YAML kept the last in silence (one of two models ran).
    assert refused("streams: [x]\nmodel: gaussian-nb\nmodel: no-change\nout: z\n") == (
        f"delayed-eval: error: {cfg}, line 3: 'model' is given twice in one mapping, of which "
        f"YAML keeps the last alone; name it once (an option's several values go in one list: "
        f"model: [a, b])\n")


def test_the_example_yaml_runs_with_the_command_lines_option_names(tmp_path):
    """examples/run.yaml uses the long options' names; each of run's and backfill's long
    options names a RunConfig field, so any of them can be a YAML key."""
    import dataclasses
    import os

    from pipelines.arguments import our_flags
    from pipelines.config import RunConfig, field_of

    fields = {f.name for f in dataclasses.fields(RunConfig)}
    for command in ("run", "backfill"):
        for flag in our_flags(command):
            if flag.startswith("--") and flag not in ("--help", "--debug", "--config"):
                assert field_of(flag) in fields, flag
    example = os.path.join(os.path.dirname(__file__), "..", "examples", "run.yaml")
    out = tmp_path / "out"
    assert main(["run", "--config", example, "--out", str(out), "--runner", "direct",
                 "--quiet"]) == 0
    summary = read_csv(out / "summary.csv")
    assert set(summary["model"]) >= {"no-change", "nb", "tree"}
    assert {"w=500", "fading=0.999"} <= set(summary["window"])
    manifest = json.load(open(out / "manifest.json"))
    assert manifest["config"]["windows"] == [500] and manifest["config"]["bins"] == 10


def test_no_final_scores_initial_only_with_the_same_values(tmp_path):
    args = ["run", "--stream", 'synth:SEA{"n": 300, "seed": 4}', "--model", "gaussian-nb",
            "--delay", "20", "--runner", "direct", "--quiet", "--repredict", "none",
            "--drift-on", "none"]
    assert main([*args, "--out", str(tmp_path / "full")]) == 0
    assert main([*args, "--out", str(tmp_path / "initial"), "--no-final"]) == 0
    full, initial = (load_results(str(tmp_path / d)).drop(columns="run_id")
                     for d in ("full", "initial"))
    assert set(initial["category"]) == {"initial"}
    pd.testing.assert_frame_equal(
        initial, full[full["category"] == "initial"].reset_index(drop=True))
    assert set(load_results(str(tmp_path / "initial"), "predictions")["kind"]) == {"initial"}


def psi(per_bin, alpha):
    """Ψα = Σ_b Λ(T,b)·(1/α)^(b/B) / Σ_b (1/α)^(b/B) over b = 0..B (Grzenda et al. 2020, eq. 4)."""
    B = len(per_bin) - 1
    weights = [(1 / alpha) ** (b / B) for b in range(B + 1)]
    return sum(v * w for v, w in zip(per_bin, weights)) / sum(weights)


def test_reevaluation_outputs_binned_and_intermediate(tmp_path):
    out = tmp_path / "re"
    assert main(["run", "--stream", 'synth:SEA{"n": 400, "seed": 6}', "--model", "gaussian-nb",
                 "--delay", "40", "--out", str(out), "--runner", "direct", "--quiet",
                 "--bins", "4", "--repredict", "every_k_labels:3", "--alpha", "1",
                 "--alpha", "4", "--curve-every", "100"]) == 0
    s = load_results(str(out))
    acc = s[s["metric"] == "accuracy"].set_index(["category", "bin", "alpha"])["value"]
    binned = [acc[("binned", b, None)] if ("binned", b, None) in acc else
              s.query(f"category == 'binned' and bin == {b} and metric == 'accuracy'")
              ["value"].item() for b in range(6)]
    initial = s.query("category == 'initial' and metric == 'accuracy'")["value"].item()
    final = s.query("category == 'final' and metric == 'accuracy'")["value"].item()
    assert binned[0] == initial and binned[5] == final  # Λ(T,0) and Λ(T,B+1)
    for alpha in (1.0, 4.0):
        psi_value = s.query(f"category == 'intermediate' and alpha == {alpha} and "
                            f"metric == 'accuracy'")["value"].item()
        assert psi_value == pytest.approx(psi(binned[:5], alpha), rel=1e-12)
    # Re-predictions while pending: with K=3 and delay 40, every instance but the last few is
    # re-predicted before its label arrives.
    preds = load_results(str(out), "predictions")
    assert (preds["kind"] == "re-prediction").sum() > 3 * 300
    from pipelines.tables import summary_table

    table = summary_table(s)["gaussian-nb"]["sea"]
    assert table["bin 2 accuracy"] == binned[2]  # the middle bin, never an average of bins
    assert table["Ψ4 accuracy"] == pytest.approx(psi(binned[:5], 4.0), rel=1e-12)
    assert psi(binned[:5], 4.0) != pytest.approx(psi(binned[:5], 1.0), rel=1e-6)  # α matters
    curves = load_results(str(out), "curves")
    assert set(curves.query("category == 'binned'")["bin"]) == {0, 5}
    assert set(curves.query("category == 'intermediate'")["alpha"]) == {1.0, 4.0}


def test_the_table_leaves_out_a_measure_no_model_scored():
    from pipelines.tables import summary_table

    rows = [("a", "initial", "accuracy", 0.7, 10), ("b", "initial", "accuracy", 0.8, 10),
            ("a", "final", "accuracy", float("nan"), 0), ("b", "final", "accuracy", 0.9, 0),
            ("a", "final", "kappa", float("nan"), 0), ("b", "final", "kappa", 0.5, 4)]
    summary = pd.DataFrame([{"stream": "s", "model": m, "category": c, "bin": None,
                             "alpha": None, "metric": k, "value": v, "n": n}
                            for m, c, k, v, n in rows])
    table = summary_table(summary)
    assert table.index.get_level_values("measure").tolist() == [
        "initial accuracy", "final kappa"]
    assert table.loc[("s", "final kappa")].tolist()[1] == 0.5


def test_a_regressors_table_shows_its_r2_after_mae_and_rmse():
    from pipelines.tables import summary_table

    summary = pd.DataFrame([{"stream": "s", "model": "lr", "category": "initial", "bin": None,
                             "window": "cumulative",
                             "alpha": None, "metric": m, "class": None, "value": v, "n": 9}
                            for m, v in (("r2", 0.97), ("mape", 0.2), ("rmse", 3.2),
                                         ("mae", 2.5), ("abs_error_p50", 2.1))])
    assert summary_table(summary)["lr"].tolist() == [2.5, 3.2, 0.97]


def test_each_stream_shows_only_its_own_measures_in_their_order():
    """Two binary streams whose positive classes differ (1 and True): each stream's rows are
    its own measures, precision right after accuracy, none of the other stream's (no row of
    NaN)."""
    from pipelines.tables import summary_table

    rows = []
    for stream, positive, negative in (("a", "1", "0"), ("b", "True", "False")):
        for model, accuracy in (("nb", 0.8), ("ht", 0.9)):
            base = {"stream": stream, "model": model, "window": "cumulative",
                    "category": "initial", "bin": None, "alpha": None, "n": 10}
            rows.append({**base, "metric": "accuracy", "value": accuracy})
            rows += [{**base, "metric": "confusion", "class": t, "predicted": p, "value": v}
                     for t, p, v in ((negative, negative, 6), (positive, positive, 4))]
            rows += [{**base, "metric": "precision", "class": c, "value": accuracy}
                     for c in (negative, positive)]
    table = summary_table(pd.DataFrame(rows))
    assert table.index.tolist() == [
        ("a", "initial accuracy"), ("a", "initial precision (1)"),
        ("b", "initial accuracy"), ("b", "initial precision (True)")]
    assert not table.isna().any().any()


def test_docs_cli_reference_is_the_parsers():
    """docs/cli.md is generated from the parser; regenerate it when this fails:
    python -m pipelines.cli --write-reference docs/cli.md"""
    import os

    from pipelines.arguments import REFERENCE_MARKERS, cli_reference

    readme = open(os.path.join(os.path.dirname(__file__), "..", "docs", "cli.md"),
                  encoding="utf-8").read()
    start, end = REFERENCE_MARKERS
    assert readme.split(start)[1].split(end)[0] == "\n" + cli_reference()
    for flag in ("--report", "--quiet", "--progress-every", "--window", "--repredict"):
        assert f"`{flag}" in cli_reference()
    # Help as --help prints it: "95 %", not argparse's escape "95 %%"; one default each.
    assert "95 % percentile" in cli_reference() and "%%" not in cli_reference()
    assert not re.search(r"\(default[^)]*\) \(default", cli_reference())


def test_a_misspelled_flag_is_an_error_with_a_suggestion_not_a_beam_option(tmp_path, capsys):
    args = ["run", "--stream", 'synth:SEA{"n": 60}', "--model", "majority", "--out",
            str(tmp_path / "out"), "--quiet"]
    assert main([*args, "--bisn=5"]) == 2
    assert capsys.readouterr().err == ("delayed-eval: error: unknown option --bisn; did you "
                                       "mean --bins? Beam's own options pass unchecked "
                                       "after --\n")
    # Nothing close enough among our ~50 options and Beam's ~200: no guess.
    assert main([*args, "--nope", "1"]) == 2
    assert capsys.readouterr().err == ("delayed-eval: error: unknown option --nope; see --help; "
                                       "Beam's own options pass unchecked after --\n")
    # After --, anything goes to Beam unchecked (Beam itself ignores what it does not know).
    assert main([*args, "--runner", "direct", "--", "--bisn=5"]) == 0
    assert json.load(open(tmp_path / "out" / "manifest.json"))["config"]["beam_args"] == \
        ["--bisn=5"]
    assert main([*args, "--runner", "nosuch"]) == 2
    err = without_notices(capsys.readouterr().err)
    assert err.startswith("delayed-eval: error: unknown runner 'nosuch'; the presets are "
                          "direct, direct-mp") and "FlinkRunner" in err
    # Commands that run no pipeline take no Beam option: the hint is their own flags.
    assert main(["trend", str(tmp_path), "--metrik", "accuracy"]) == 2
    assert capsys.readouterr().err == ("delayed-eval: error: trend: unknown option --metrik; "
                                       "did you mean --metric? see delayed-eval trend --help\n")


def test_beam_flags_in_either_form_and_quiet_workers(tmp_path, capfd):
    """`--direct_num_workers 2` (space form) reaches Beam; direct-mp's worker processes print
    nothing (their stderr is the process's file descriptor 2) unless --debug asks for Beam's
    logs; --quiet prints nothing but what went wrong with the data, on stderr."""
    argv = ["run", "--stream", 'synth:SEA{"n": 60}', "--model", "majority", "--out",
            str(tmp_path / "out"), "--runner", "direct-mp", "--direct_num_workers", "2",
            "--repredict", "none"]
    code = main([*argv, "--quiet"])
    printed = capfd.readouterr()
    assert code == 0 and printed.out == "" and printed.err == ""
    rows = tmp_path / "rows.csv"  # row 3's feature is missing: a dead letter, said
    rows.write_text("x,z,label\n" + "".join(f"{'' if i == 2 else i % 3},{i},{i % 2}\n"
                                            for i in range(40)))
    code = main(["run", "--stream", f"s={rows}", "--model", "majority", "--delay", "3",
                 "--repredict", "none", "--runner", "direct", "--out", str(tmp_path / "bad"),
                 "--quiet"])
    printed = capfd.readouterr()
    assert code == 0 and printed.out == "" and printed.err.count("\n") == 1
    assert printed.err.startswith(
        f"delayed-eval: notice: s: 1 dead letter in {tmp_path / 'bad' / 'dead_letters.jsonl'}, "
        f"the first {rows}, row 3, field x: feature is missing")
    manifest = json.load(open(tmp_path / "out" / "manifest.json"))
    assert manifest["config"]["beam_args"] == ["--direct_num_workers", "2"]
    code = main(argv)
    printed = capfd.readouterr()
    assert code == 0 and "initial accuracy" in printed.out
    assert printed.err.startswith("job counters") and printed.err.count("\n") == 1
    code = main([*argv, "--debug"])
    assert code == 0 and "Python sdk harness starting" in capfd.readouterr().err


def test_fail_if_exits_with_status_3_after_writing_the_results(tmp_path, capsys):
    """A threshold crossed: status 3, a line naming it, the results written; one that holds:
    status 0; a threshold that cannot be read: status 2 before anything runs."""
    base = ["run", "--stream", 'synth:SEA{"n": 400, "seed": 2}', "--model", "nb=gaussian-nb",
            "--model", "majority", "--delay", "20", "--repredict", "none", "--runner", "direct",
            "--quiet"]
    out = tmp_path / "crossed"
    assert main([*base, "--out", str(out), "--fail-if", "initial accuracy < 0.99",
                 "--fail-if", "nb: final recall (True) >= 0"]) == 3
    err = capsys.readouterr().err.splitlines()
    accuracy = load_results(str(out)).query(
        "model == 'nb' and category == 'initial' and metric == 'accuracy'")["value"].iloc[0]
    assert f"delayed-eval: threshold crossed: sea / nb: initial accuracy < 0.99 (it is " \
           f"{accuracy:.4g})" in err
    assert any("sea / majority: initial accuracy < 0.99" in line for line in err)
    assert any("sea / nb: nb: final recall (True) >= 0" in line for line in err)
    assert len(err) == 3 and (out / "summary.csv").exists()
    assert main([*base, "--out", str(tmp_path / "held"), "--fail-if",
                 "initial accuracy < 0.1"]) == 0
    # The probability measures too: the prior's log-loss is the labels' entropy (0.61 here).
    assert main([*base, "--out", str(tmp_path / "loss"), "--fail-if",
                 "majority: initial log_loss > 0.5"]) == 3
    assert "sea / majority: majority: initial log_loss > 0.5" in capsys.readouterr().err
    # A measure the results do not have is crossed, and the line says which part is not theirs.
    assert main([*base, "--out", str(tmp_path / "none"), "--fail-if",
                 "nb: initial recall (Treu) < 0.5", "--fail-if", "nb: initial recall < 0.5"]) == 3
    assert capsys.readouterr().err.splitlines() == [
        "delayed-eval: threshold crossed: sea / nb: nb: initial recall (Treu) < 0.5 (the "
        "results have no such measure: no class 'Treu'; classes: True, False)",
        "delayed-eval: threshold crossed: sea / nb: nb: initial recall < 0.5 (the results have "
        "no such measure: recall is one per class; name one, e.g. (True))"]
    assert main([*base, "--out", str(tmp_path / "bad"), "--fail-if", "initial acuracy < 1"]) == 2
    assert "unknown measure 'acuracy'; did you mean 'accuracy'?" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_the_command_ends_with_its_output_whole_and_the_exit_functions_run(tmp_path):
    """The command leaves without Python's teardown of its modules (~0.6 s); what that
    teardown would have done for the user still happens: a model library's exit function runs,
    everything printed reaches a pipe, and the exit status is the command's."""
    import os
    import subprocess
    import sys

    (tmp_path / "exitmodels.py").write_text(
        "import atexit, os\nfrom river import naive_bayes\n\n"
        "atexit.register(lambda: open(os.environ['MARKER'], 'w').write('closed'))\n\n\n"
        "class NB(naive_bayes.GaussianNB):\n    pass\n")
    marker = tmp_path / "marker"
    command = [sys.executable, "-m", "pipelines.cli", "run", "--stream", 'synth:SEA{"n": 300}',
               "--model", "exitmodels.NB", "--delay", "10", "--out", str(tmp_path / "out"),
               "--runner", "direct", "--fail-if", "initial accuracy > 0.1"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # (a pipe: buffered)
    done = subprocess.run(command, cwd=tmp_path, env={**env, "MARKER": str(marker),
                                                      "PYTHONPATH": os.getcwd()},
                          capture_output=True, text=True)
    assert done.returncode == 3 and marker.read_text() == "closed"
    # (the run's last lines: the stream's profile, then its notice)
    assert "no sign of temporal dependence" in done.stdout
    assert done.stdout.rstrip().endswith("or at bin_boundaries")
    assert done.stderr.splitlines()[-1].startswith(
        "delayed-eval: threshold crossed: sea / NB: initial accuracy > 0.1 (it is 0.")


def test_a_reader_that_leaves_the_pipe_ends_the_command_quietly(tmp_path):
    """`delayed-eval run ... | head`: the reader leaves before the command prints its tables.
    Not 'internal error: BrokenPipeError ... please report it', but a quiet end as a Unix
    tool's (status 141), the results written before it printed."""
    import os
    import subprocess
    import sys

    out = tmp_path / "out"
    command = [sys.executable, "-m", "pipelines.cli", "run", "--stream", 'synth:SEA{"n": 200}',
               "--model", "majority", "--delay", "10", "--out", str(out), "--runner", "direct"]
    done = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=os.getcwd())
    done.stdout.close()  # (the reader is gone before the first line)
    err = done.stderr.read()
    assert done.wait() == 141
    assert "error" not in err and err.splitlines()[-1].startswith("job counters")
    assert json.loads((out / "manifest.json").read_text())["counts"][0]["labelled"] == 200


def test_a_reader_of_the_progress_lines_that_leaves_ends_the_run_as_a_unix_tool(tmp_path):
    """`delayed-eval run ... 2>&1 | head`: the reader leaves while the run prints its progress.
    The run ends (status 141, as a Unix tool at SIGPIPE; not 1), publishes nothing and leaves
    the previous results as they were."""
    import os
    import subprocess
    import sys

    out = tmp_path / "out"
    command = [sys.executable, "-m", "pipelines.cli", "run", "--stream", 'synth:SEA{"n": 2000}',
               "--model", "majority", "--delay", "10", "--out", str(out), "--runner", "direct",
               "--progress-every", "0"]
    subprocess.run([*command, "--quiet"], check=True, capture_output=True, cwd=os.getcwd())
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    done = subprocess.Popen([*command, "--model", "no-change"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, cwd=os.getcwd())
    done.stderr.close()  # (the reader is gone before the first progress line)
    assert done.wait() == 141
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.parametrize("threshold, options, said", [
    ("initial accuracy < nan", [], "'nan' is not a finite number; e.g. 0.8"),
    ("initial accuracy > -inf", [], "'-inf' is not a finite number"),
    ("nb: final accuracy w=50 < 0.5", ["--window", "100"],
     "the run reports no window w=50 (windows: cumulative, w=100); add --window 50"),
    ("initial kappa fading=0.99 < 0.5", [], "no window fading=0.99 (windows: cumulative); "
                                            "add --fading 0.99"),
    ("initial mae > 1", [], "mae is a measure of regression models, and the run has none"),
    ("nb: initial rmse > 1", [], "and nb is a classification model; name one of its measures"),
    ("final accuracy < 0.5", ["--no-final"], "the run scores no final prediction (--no-final)"),
    ("initial log_loss > 1", ["--no-probabilities"],
     "log_loss is a measure of class probabilities, which --no-probabilities leaves out"),
    ("initial roc_auc < 0.6", [], "roc_auc comes with --auc; add it"),
    ("initial accuracy_bootstrap_low < 0.6", [], "comes with --bootstrap R; add it"),
])
def test_a_threshold_on_a_measure_the_run_will_not_report_is_refused_before_it(
        tmp_path, capsys, threshold, options, said):
    """Each was crossed at the end of every run, however good the model (`< nan` never): a
    nightly job would alert every night, or never, for a mistake in its options."""
    argv = ["run", "--stream", 'synth:SEA{"n": 100, "seed": 2}', "--model", "nb=gaussian-nb",
            "--delay", "20", "--runner", "direct", "--quiet", "--out", str(tmp_path / "o")]
    assert main([*argv, *options, "--fail-if", threshold]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"delayed-eval: error: --fail-if {threshold!r}: ") and said in err
    assert not (tmp_path / "o").exists()


def test_fail_if_names_a_model_as_the_results_name_it(tmp_path, capsys):
    """A pipeline's or a parametrised model's default name holds spaces, `|` and `:`; --fail-if
    names it as the results do, and only that model is checked."""
    models = ["standard-scaler | gaussian-nb", 'river.tree.HoeffdingTreeClassifier'
              '{"grace_period": 50}']
    names = ["standard-scaler | gaussian-nb", 'HoeffdingTreeClassifier{"grace_period": 50}']
    argv = ["run", "--stream", 'synth:SEA{"n": 400, "seed": 2}', "--model", models[0],
            "--model", models[1], "--delay", "20", "--repredict", "none", "--runner", "direct",
            "--quiet", "--out", str(tmp_path / "out")]
    assert main([*argv, *(arg for name in names for arg in (
        "--fail-if", f"{name}: initial accuracy < 0.99"))]) == 3
    err = capsys.readouterr().err.splitlines()
    assert [line.split(" (it is")[0] for line in err] == [
        f"delayed-eval: threshold crossed: sea / {name}: {name}: initial accuracy < 0.99"
        for name in names]


def test_curve_points_are_spaced_for_each_stream(tmp_path):
    """Without --curve-every: at least 25 points on each stream (its length from a
    generator's n or a table's rows), 1, 2 or 5 × 10^k labels apart, at most 1000; with it,
    its step on every stream."""
    from pipelines.plan import plan

    path = tmp_path / "rows.csv"
    pd.DataFrame({"time": range(300), "x": 0.5, "label": "a"}).to_csv(path, index=False)

    def every(*streams, **options):
        config = RunConfig(streams=list(streams), models=["majority"], out=str(tmp_path),
                           **options)
        scoring = plan(config).scoring
        return [scoring.for_stream(s.split("=")[0]).curve_every for s in streams]

    assert every('s=synth:SEA{"n": 20000}') == [500]  # 20 000 / 25 = 800: the 1-2-5 step
    assert every('s=synth:SEA{"n": 200000}') == [1000]
    assert every('a=synth:SEA{"n": 20000}', f"b={path}") == [500, 10]  # 300 rows: 12 → 10
    assert every('a=synth:SEA{"n": 20000}', f"b={path}", curve_every=7) == [7, 7]


def test_backfill_takes_every_scoring_option_of_run():
    """What is scored is the same for a replay and a log: only the options of the replay itself
    (the models, the final prediction, holdout, cross-validation, model costs and errors, what
    predictions are logged, the replay's arrangement) are run's alone."""
    import argparse

    from pipelines.arguments import command_parser, run_config

    commands = next(a for a in command_parser()._actions
                    if isinstance(a, argparse._SubParsersAction))
    flags = {name: {f for a in sub._actions for f in a.option_strings}
             for name, sub in commands.choices.items()}
    assert flags["run"] - flags["backfill"] == {
        "--no-final", "--holdout", "--cv", "--resources", "--on-model-error",
        "--log-predictions", "--replay", "--timer-bucket"}
    args, _ = command_parser().parse_known_args(["backfill", "--stream", "s.csv",
                                                 "--predictions", "log.csv", "--auc",
                                                 "--bootstrap", "5", "--no-probabilities",
                                                 "--out", "unused"])
    config = run_config(args, [])
    assert (config.auc, config.bootstrap, config.probabilities) == (True, 5, False)


def test_streams_are_shown_in_the_order_given(tmp_path, capsys):
    """zeta before alpha, as given: in the terminal's table and profile lines, profile.json
    and the report's tables (not sorted by name)."""
    from pipelines.tables import summary_table

    out = tmp_path / "o"
    assert main(["run", "--stream", 'zeta=synth:SEA{"n": 300}', "--stream",
                 'alpha=synth:SEA{"n": 300, "seed": 3}', "--model", "gaussian-nb", "--delay",
                 "20", "--out", str(out), "--runner", "direct", "--report"]) == 0
    printed = capsys.readouterr().out.splitlines()
    firsts = [line.split()[0] for line in printed if line.startswith(("zeta", "alpha"))]
    assert firsts == ["zeta", "alpha", "zeta:", "alpha:"]  # the table's, then the profiles'
    table = summary_table(load_results(str(out)))
    assert list(dict.fromkeys(table.index.get_level_values("stream"))) == ["zeta", "alpha"]
    assert list(json.loads((out / "profile.json").read_text())) == ["zeta", "alpha"]
    report = (out / "report.html").read_text()
    profile = report[report.index("<h2>Stream profile</h2>"):]
    assert profile.index(">zeta<") < profile.index(">alpha<")


def test_rank_and_trend_given_a_file_as_out_say_so(tmp_path, capsys):
    """It was an internal error (FileExistsError)."""
    run = str(tmp_path / "run")
    assert main(["run", "--stream", 'a=synth:SEA{"n": 60}', "--stream",
                 'b=synth:SEA{"n": 60, "seed": 2}', "--model", "majority", "--model",
                 "no-change", "--delay", "5", "--out", run, "--runner", "direct",
                 "--quiet"]) == 0
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    for command in ("rank", "trend"):
        assert main([command, run, "--out", str(a_file)]) == 2
        assert without_notices(capsys.readouterr().err) == \
            f"delayed-eval: error: --out {a_file}: a file, not a folder; choose a folder\n"
    assert a_file.read_text() == "mine"


@pytest.mark.parametrize("argv, told", [
    (["report"], "give the --out folder of a run"),
    (["trend"], "give the folder the nightly runs write into"),
    (["rank", "also-missing"], "give the output folders of finished runs")])
def test_a_results_folder_that_does_not_exist_is_named_so(tmp_path, capsys, argv, told):
    missing = str(tmp_path / "no-such-run")
    assert main([argv[0], missing, *argv[1:]]) == 2
    assert capsys.readouterr().err == f"delayed-eval: error: {missing}: no such folder; {told}\n"
    a_file = tmp_path / "summary.csv"
    a_file.write_text("")
    assert main([argv[0], str(a_file), *argv[1:]]) == 2
    assert capsys.readouterr().err == \
        f"delayed-eval: error: {a_file}: a file, not a folder; {told}\n"


@pytest.mark.parametrize("argv, told", [
    (["run", "--bins", "5min"], "--bins '5min': not a whole number; see delayed-eval run --help"),
    (["backfill", "--ph-delta", "x"], "--ph-delta 'x': not a number; see delayed-eval "
                                      "backfill --help"),
    (["run", "--replay", "fast"], "--replay: invalid choice: 'fast' (choose from 'auto', "),
    (["run", "--on-model-error"], "--on-model-error: expected one argument; see "),
    (["run", "--holdout", "-1:5"], "--holdout: expected one argument; a value that begins "
                                   "with '-' reads as an option: write --holdout=-1:5; see "),
    (["rnu"], "unknown command 'rnu' (choose from 'run', "),
    (["rank"], "the following arguments are required: DIR; see delayed-eval rank --help")])
def test_a_mistake_argparse_finds_is_one_line_too(capsys, argv, told):
    """Not argparse's usage (20 lines for run) followed by its message."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.startswith(f"delayed-eval: error: {told}")
    assert err.count("\n") == 1, err


@pytest.mark.parametrize("option, told", [
    (["--bins", "10001"], "--bins 10001: not a whole number from 1 to 10,000; e.g. --bins 100"),
    (["--repredict", "bin_boundaries:10001"], "re-prediction policy 'bin_boundaries:10001': "
                                              "the argument must be a whole number from 1 to "
                                              "10,000"),
    (["--bootstrap", "10001"], "--bootstrap 10001: more than 10,000 replicates"),
    (["--cv", "k-fold:1001"], "--cv 'k-fold:1001': at most 1,000 folds"),
    (["--window", str(10**20)], f"window {10**20}: a window must be from 1 to "
                                "1,000,000,000,000,000 labels"),
    (["--curve-every", str(10**20)], f"--curve-every {10**20}: not a whole number from 1 to "
                                     "1,000,000,000,000,000; e.g. --curve-every 100")])
def test_a_count_too_large_to_run_is_refused_before_the_run(tmp_path, capsys, option, told):
    """Far larger values ran out of memory (--cv k-fold:4000000000 took the machine's 24 GiB)
    or overflowed a 64-bit integer (an internal error); the bounds are refused first."""
    assert main(["run", "--stream", 'synth:SEA{"n": 60}', "--model", "majority", "--delay",
                 "5", "--out", str(tmp_path), "--runner", "direct", "--quiet", *option]) == 2
    assert capsys.readouterr().err.startswith(f"delayed-eval: error: {told}")


@pytest.mark.parametrize("options, told", [
    (["--window", "100", "--window", "-3"], "window -3: a window must be from 1 to "
                                            "1,000,000,000,000,000 labels; e.g. --window 1000"),
    (["--fading", "0.99", "--fading", "1"], "fading factor 1: it must be between 0 and 1 "
                                            "(exclusive); e.g. --fading 0.999"),
    (["--alpha", "0"], "alpha 0: Ψα's α must be positive; e.g. --alpha 2"),
    (["--delay", "2.5"], "delay '2.5' is not a whole number of events (1000), a duration "
                         "(30s, 5min, 2h, 1d), random:LOW:HIGH[:SEED] or column:NAME"),
    (["--ph-alpha", "1", "--ph-alpha", "2"], "Page-Hinkley fading factor 2: it must be in (0, "
                                             "1] (1: no fading); e.g. --ph-alpha 0.999")])
def test_a_window_fading_factor_alpha_or_delay_out_of_range_is_named_alone(tmp_path, capsys,
                                                                           options, told):
    assert main(["run", "--stream", 'synth:SEA{"n": 60}', "--model", "majority", "--delay",
                 "5", "--out", str(tmp_path), "--runner", "direct", "--quiet", *options]) == 2
    assert capsys.readouterr().err == f"delayed-eval: error: {told}\n"


@pytest.mark.parametrize("stream, model, options, told", [
    ('synth:SEA{"n": 60}', "gaussian-nb", ["--no-probabilities"], "--auc means nothing with "
     "--no-probabilities (the AUCs rank class probabilities): leave one of them out"),
    ('synth:Friedman{"n": 60}', "mean-regressor", [], "--auc means nothing here: every model "
     "is a regressor (the AUCs rank a classifier's class probabilities); leave it out")])
def test_auc_where_no_class_probabilities_are_kept_is_refused(tmp_path, capsys, stream, model,
                                                              options, told):
    assert main(["run", "--stream", stream, "--model", model, "--delay", "5", "--auc",
                 "--out", str(tmp_path), "--runner", "direct", "--quiet", *options]) == 2
    assert capsys.readouterr().err == f"delayed-eval: error: {told}\n"


def test_paths_with_a_globs_marks_name_those_files_and_folders_alone(tmp_path, capsys):
    """Beam's FileSystems read `*`, `?` and `[` as a glob's marks: a stream file `rows[1].csv`
    ended the run in an internal error, so did an --out `res?`, and a run replacing a
    backfill's results in `bf?` would delete its `maturity.csv` as a pattern, which names the
    sibling `bfA/maturity.csv` too."""
    rows = tmp_path / "rows[1].csv"
    rows.write_text("time,x,label\n" + "".join(f"{i},{i % 7},{'ab'[i % 3 == 0]}\n"
                                                for i in range(40)))
    sibling = tmp_path / "bfA"
    sibling.mkdir()
    (sibling / "maturity.csv").write_text("not ours\n")
    run = ["run", "--stream", str(rows), "--model", "majority", "--delay", "3", "--runner",
           "direct", "--quiet", "--out"]
    assert main([*run, str(tmp_path / "res?")]) == 0, capsys.readouterr().err
    assert main(["backfill", "--stream", str(rows), "--predictions",
                 str(tmp_path / "res?" / "predictions.parquet"), "--out", str(tmp_path / "bf?"),
                 "--runner", "direct", "--quiet"]) == 0, capsys.readouterr().err
    assert read_csv(tmp_path / "bf?" / "summary.csv").drop(columns="run_id").equals(
        read_csv(tmp_path / "res?" / "summary.csv").drop(columns="run_id"))
    assert (tmp_path / "bf?" / "maturity.csv").exists()
    assert main([*run, str(tmp_path / "bf?")]) == 0, capsys.readouterr().err
    manifest = json.loads((tmp_path / "bf?" / "manifest.json").read_text())
    assert sorted(p.name for p in (tmp_path / "bf?").iterdir()) == manifest["outputs"]
    assert "maturity.csv" not in manifest["outputs"]
    assert (sibling / "maturity.csv").read_text() == "not ours\n"
    assert manifest["streams"]["rows[1]"]["input"]["files"] == 1


def test_a_run_id_that_would_name_a_folder_outside_out_is_refused(tmp_path, capsys):
    """The run id names the staging folder, `OUT/.staging-ID`, which a run with the same id
    deletes first: `x/../../kept` named a folder outside --out, made `OUT/.staging-x` on the
    first run, and deleted `kept`, which no run wrote, on the second."""
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "results.csv").write_text("not ours\n")
    for _ in range(2):
        assert main(["run", "--stream", 'synth:SEA{"n": 60}', "--model", "majority", "--delay",
                     "5", "--out", str(tmp_path / "out"), "--runner", "direct", "--quiet",
                     "--run-id", "x/../../kept"]) == 2
        assert capsys.readouterr().err.startswith(
            "delayed-eval: error: --run-id 'x/../../kept': a run id names a folder in --out")
    assert (kept / "results.csv").read_text() == "not ours\n"
    # Beam's FileSystems match paths as globs: `.staging-v[2]` is no folder to them (the run
    # ended in an internal error deleting it), and `.staging-*` would be every run's.
    for run_id in ("v[2]", "*", "night?"):
        assert main(["run", "--stream", 'synth:SEA{"n": 60}', "--model", "majority", "--delay",
                     "5", "--out", str(tmp_path / "out"), "--runner", "direct", "--quiet",
                     "--run-id", run_id]) == 2
        assert capsys.readouterr().err.startswith(
            f"delayed-eval: error: --run-id {run_id!r}: a run id names a folder in --out, so it "
            f"is 1 to 200 printable characters, none of / \\ * ? [ ]")
    # An id as a scheduler makes one (Airflow's) names the run.
    assert main(["run", "--stream", 'synth:SEA{"n": 60}', "--model", "majority", "--delay",
                 "5", "--out", str(tmp_path / "out"), "--runner", "direct", "--quiet",
                 "--run-id", "scheduled__2026-11-01T00:00:00+00:00"]) == 0
    assert set(read_csv(tmp_path / "out" / "summary.csv")["run_id"]) == {
        "scheduled__2026-11-01T00:00:00+00:00"}


@pytest.mark.parametrize("option, value", [
    ("--ph-threshold", "nan"), ("--ph-threshold", "inf"), ("--ph-delta", "nan"),
    ("--ph-delta", "inf"), ("--alpha", "nan"), ("--timer-bucket", "nan"),
    ("--timer-bucket", "inf"), ("--progress-every", "nan")])
def test_a_number_that_is_not_finite_is_refused_before_the_run(tmp_path, capsys, option, value):
    """NaN passed every `x < 0` check: a Page-Hinkley threshold of NaN ran and never raised
    an alarm, a Ψ_NaN row was written."""
    assert main(["run", "--stream", 'synth:SEA{"n": 60}', "--model", "majority", "--delay",
                 "5", "--out", str(tmp_path), "--runner", "direct", "--quiet", option,
                 value]) == 2
    assert capsys.readouterr().err == \
        f"delayed-eval: error: {option} {value}: not a finite number; give a number\n"


def test_every_k_labels_beyond_the_stream_re_predicts_nothing(tmp_path):
    """K far beyond the stream's length: no re-prediction, and no K buckets allocated (a
    MemoryError at K = 4·10⁹; `_Buckets`' doctest counts what it holds)."""
    out = tmp_path / "out"
    assert main(["run", "--stream", 'synth:SEA{"n": 60}', "--model", "gaussian-nb", "--delay",
                 "5", "--repredict", f"every_k_labels:{10**15}", "--log-predictions", "all",
                 "--out", str(out), "--runner", "direct", "--quiet"]) == 0
    log = pd.read_parquet(out / "predictions.parquet")
    assert set(log["kind"]) == {"initial", "final"}


def _lines_cut(keep: slice):
    return lambda text: b"\n".join(text.split(b"\n")[keep])


def _manifest_without(*path):
    """A manifest's text without the member at `path` (keys, and indices of lists)."""
    def damage(text):
        manifest = json.loads(text)
        entry = manifest
        for key in path[:-1]:
            entry = entry[key]
        del entry[path[-1]]
        return json.dumps(manifest).encode()
    return damage


def _column_dropped(column):
    """A summary.csv's text without one of its columns."""
    def damage(text):
        frame = pd.read_csv(io.BytesIO(text), dtype=str, keep_default_na=False)
        return frame.drop(columns=column).to_csv(index=False).encode()
    return damage


@pytest.mark.parametrize("file, damage", [
    ("summary.csv", b"\xbb\xff garbage"), ("manifest.json", b'{"streams": {'),
    ("summary.csv", _column_dropped("n")),  # (each of these was an internal KeyError)
    ("summary.csv", _column_dropped("window")),
    ("summary.csv", _column_dropped("class")),  # (its rows would be read as one measure)
    ("manifest.json", _manifest_without("models", "no-change", "task")),
    ("manifest.json", _manifest_without("counts", 0, "model")),
    ("curves.parquet", b"PAR1 not parquet PAR1"), ("profile.json", b"[1, 2"),
    ("summary.csv", b"a,b\n1,2\n"),
    ("summary.csv", lambda text: text.replace(b",accuracy,,,", b",accuracy,,,x", 1)),
    ("summary.csv", lambda text: text[:len(text) // 2]),  # cut in a line
    ("summary.csv", _lines_cut(slice(0, 40))),  # cut after a line
    ("summary.csv", _lines_cut(slice(0, 1)))])  # only its header
def test_report_rank_and_trend_name_a_damaged_result_file(tmp_path, capsys, file, damage):
    """Each was an internal error (UnicodeDecodeError, JSONDecodeError, OSError, KeyError),
    or, for a summary cut short, results read from part of it."""
    runs = tmp_path / "nightly"
    for day in ("2026-11-01", "2026-11-02"):
        assert main(["run", "--stream", 'synth:SEA{"n": 200}', "--model", "gaussian-nb",
                     "--model", "no-change", "--delay", "10", "--repredict", "none",
                     "--out", str(runs / f"date={day}"), "--runner", "direct", "--quiet"]) == 0
    damaged = runs / "date=2026-11-02"
    (damaged / file).write_bytes(damage((damaged / file).read_bytes()) if callable(damage)
                                 else damage)
    commands = {"report": ["report", str(damaged)], "trend": ["trend", str(runs)],
                "rank": ["rank", str(runs / "date=2026-11-01"), str(damaged)]}
    readers = {"summary.csv": commands, "manifest.json": ["report", "trend"]}
    for argv in (commands[c] for c in readers.get(file, ["report"])):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"delayed-eval: error: {damaged / file}: damaged, or not written "
                              f"by delayed-eval (") and err.count("\n") == 1, (argv, err)


@pytest.mark.parametrize("path", [("config",), ("streams", "sea", "spec"),
                                  ("counts", 0, "labelled")])
def test_a_report_does_without_what_it_can_do_without_in_a_manifest(tmp_path, path):
    """A manifest without a member the report can do without (an older or hand-edited one):
    it was an internal error (KeyError) for each."""
    out = tmp_path / "run"
    assert main(["run", "--stream", 'synth:SEA{"n": 200}', "--model", "gaussian-nb",
                 "--delay", "10", "--out", str(out), "--runner", "direct", "--quiet"]) == 0
    manifest = out / "manifest.json"
    manifest.write_bytes(_manifest_without(*path)(manifest.read_bytes()))
    assert main(["report", str(out)]) == 0
    assert (out / "report.html").stat().st_size > 0


def test_a_time_window_holding_the_whole_stream_is_said(tmp_path, capsys):
    """600 instances without event times span 600 s: a 1h window holds every label, so its
    rows repeat the cumulative ones and the run says so; a 5min window (300 instances) does
    not, and is not named."""
    out = tmp_path / "o"
    assert main(["run", "--stream", 'synth:SEA{"n": 600, "seed": 2}', "--model", "gaussian-nb",
                 "--delay", "20", "--time-window", "1h", "--time-window", "5min", "--out",
                 str(out), "--runner", "direct"]) == 0
    printed = capsys.readouterr().out
    summary = load_results(str(out))
    initial = summary.query("category == 'initial' and metric == 'accuracy'").set_index(
        "window")["n"]
    assert initial["time=1h"] == initial["cumulative"] > initial["time=5min"]
    lines = [line for line in printed.splitlines() if "--time-window" in line]
    assert lines == ["sea: every label falls in the last --time-window 1h, so the rows (window "
                     "time=1h) repeat the cumulative ones; give a shorter window (without event "
                     "times a stream's instances are one second apart: 1h is 3 600 of them)"]
