"""--pretrain N (MOA's `EvaluatePrequentialDelayed -p N -m`, scikit-multiflow's `pretrain_size`):
the first N rows of a stream are learned with their labels as they arrive, none predicted or
scored; the evaluation starts after them. MOA itself is the oracle in test_moa_parity.py; here
a plain loop of river's model, the counts, the backfill and the mistakes."""

import itertools
import json

import pandas as pd
import pytest
from river import naive_bayes
from river.datasets import synth

from pipelines.cli import main
from pipelines.config import RunConfig
from pipelines.job import run
from tests.helpers import without_notices

N, PRETRAIN, DELAY = 400, 150, 25
SEA = f'sea=synth:SEA{{"n": {N}, "seed": 3, "noise": 0.1}}'


def plain_loop() -> tuple[dict, dict]:
    """river's GaussianNB: learn rows 0..P−1 as they come; then predict row i at its arrival
    (initial), and before row i + D arrives predict row i once more (final) and learn it."""
    model = naive_bayes.GaussianNB()
    rows = list(itertools.islice(synth.SEA(seed=3, noise=0.1), N))
    initial, final = {}, {}
    for i, (x, y) in enumerate(rows):
        if i < PRETRAIN:
            model.learn_one(x, y)
            continue
        due = i - DELAY  # the label of row i − D comes just before row i
        if due >= PRETRAIN:
            final[due] = model.predict_one(rows[due][0])
            model.learn_one(*rows[due])
        initial[i] = model.predict_one(x)
    for due in range(max(PRETRAIN, N - DELAY), N):  # the labels after the last row
        final[due] = model.predict_one(rows[due][0])
        model.learn_one(*rows[due])
    return initial, final


def test_the_first_rows_are_learned_at_once_and_the_others_evaluated_as_a_plain_loop(tmp_path):
    run(RunConfig(streams=[SEA], models=["gaussian-nb", "majority"], delay=str(DELAY),
                  pretrain=PRETRAIN, repredict="none", out=str(tmp_path), quiet=True,
                  runner="direct"))
    log = pd.read_parquet(tmp_path / "predictions.parquet")
    log = log[log["model"] == "gaussian-nb"]
    initial, final = plain_loop()
    for kind, expected in (("initial", initial), ("final", final)):
        got = log[log["kind"] == kind].set_index("id")["y_pred"]  # (the log's text)
        assert {int(i): v for i, v in got.items()} == {i: str(v) for i, v in expected.items()}
    summary = pd.read_csv(tmp_path / "summary.csv")
    accuracy = summary[(summary["model"] == "gaussian-nb") & (summary["metric"] == "accuracy")
                       & (summary["category"] == "initial") & (summary["window"] == "cumulative")
                       & summary["bin"].isna() & summary["segment"].isna()]
    rows = list(itertools.islice(synth.SEA(seed=3, noise=0.1), N))
    hits = sum(initial[i] == rows[i][1] for i in initial)
    assert accuracy[["value", "n"]].values.tolist() == [[hits / (N - PRETRAIN), N - PRETRAIN]]
    # The counts add up: the pretraining rows are no instances, each model learned them all.
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    read = manifest["streams"]["sea"]["read"]
    assert (read["pretrain_events"], read["instance_events"], read["label_events"]) == \
        (PRETRAIN, N - PRETRAIN, N - PRETRAIN)
    for c in manifest["counts"]:
        assert (c["pretrained"], c["pretrain_set_aside"], c["instances"], c["labelled"]) == \
            (PRETRAIN, 0, N - PRETRAIN, N - PRETRAIN)
    assert manifest["streams"]["sea"]["spec"]["options"]["pretrain"] == PRETRAIN


def test_a_pretraining_row_without_a_label_is_set_aside_as_a_dead_letter(tmp_path):
    """Nothing to learn from it: counted (`pretrain_set_aside`) and written as a dead letter
    naming its file and row; the other pretraining rows are learned."""
    lines = ["time,x,label"] + [f"{i},{i % 7},{'' if i == 2 else 'ab'[i % 2]}"
                                for i in range(40)]
    path = tmp_path / "gap.csv"
    path.write_text("\n".join(lines) + "\n")
    run(RunConfig(streams=[f'{path}{{"pretrain": 5}}'], models=["majority"], delay="3",
                  repredict="none", out=str(tmp_path / "out"), quiet=True, runner="direct"))
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    (counts,) = manifest["counts"]
    assert (counts["pretrained"], counts["pretrain_set_aside"], counts["instances"]) == \
        (4, 1, 35)
    (dead,) = [json.loads(line) for line in
               (tmp_path / "out" / "dead_letters.jsonl").read_text().splitlines()]
    assert (dead["row"], dead["field"]) == (3, "label") and "pretrain" in dead["reason"]


def test_the_terminal_counts_the_pretrained_rows(tmp_path, capsys):
    """The job counters named instances and labels only, so 2 × 150 rows each model learned
    were in no line; a run without pretraining shows no such count."""
    for argv, tail in ((["--pretrain", str(PRETRAIN)], f", pretrained {2 * PRETRAIN}"),
                       ([], "")):
        assert main(["run", "--stream", SEA, "--model", "majority", "--model", "no-change",
                     "--delay", str(DELAY), "--repredict", "none", "--runner", "direct",
                     "--out", str(tmp_path / "out"), *argv]) == 0
        instances = 2 * (N - (PRETRAIN if argv else 0))
        assert (f"job counters (summed over the replays, one per stream × model): instances "
                f"{instances}, updates 0, labels {instances}, dead_letters 0, pending 0{tail}\n"
                ) in capsys.readouterr().err


def test_the_backfill_of_a_pretrained_runs_log_gives_its_summary_byte_for_byte(tmp_path):
    kw = dict(streams=[SEA], quiet=True, run_id="same", runner="direct", delay=str(DELAY),
              pretrain=PRETRAIN, repredict="every_k_labels:5", bins=5, windows=[50])
    run(RunConfig(models=["gaussian-nb", "no-change"], out=str(tmp_path / "run"), **kw))
    log = str(tmp_path / "run" / "predictions.parquet")
    run(RunConfig(models=[], out=str(tmp_path / "backfill"), predictions=log, **kw))
    # Without --pretrain, the run's, which its log records.
    run(RunConfig(models=[], out=str(tmp_path / "recorded"), predictions=log,
                  **{**kw, "pretrain": None}))
    replayed, backfilled, recorded = [(tmp_path / d / "summary.csv").read_text()
                                      for d in ("run", "backfill", "recorded")]
    assert backfilled == replayed and recorded == replayed
    counts = [{c["model"]: {k: c[k] for k in ("instances", "labelled", "pretrained")}
               for c in json.loads((tmp_path / d / "manifest.json").read_text())["counts"]}
              for d in ("run", "recorded")]
    assert counts[0] == counts[1] and counts[0]["no-change"]["pretrained"] == PRETRAIN


@pytest.mark.parametrize("argv, message", [
    (["--pretrain=-1"], "--pretrain -1: a number of rows, 0 or more; e.g. --pretrain 1000"),
    (["--pretrain", "1.5"], "--pretrain '1.5': not a whole number"),
    (["--stream", 'synth:SEA{"n": 50, "pretrain": "all"}'],
     "stream sea: pretrain is a number of rows, a whole number 0 or more, not 'all'"),
    (["--stream", 'synth:SEA{"n": 50}', "--pretrain", "50"],
     "stream sea: no instance to evaluate: its 50 rows are all among the first 50 to "
     "pretrain on; give a smaller pretrain"),
    (["--pretrain", "10", "--from", "20"],
     "--pretrain and --from/--to: pretraining takes a stream's first rows, the range its "
     "instances from a time on; give one of them"),
    (["--stream", '{log}{"pretrain": 1}'],
     "this stream's labels are rows of their own; leave pretrain out, or start the "
     "evaluation later with --from"),
])
def test_pretrain_mistakes_are_one_line(tmp_path, capsys, argv, message):
    log = tmp_path / "log.csv"
    log.write_text("id,time,kind,x,label\n1,0,instance,0.5,\n1,3,label,,a\n")
    argv = [a.replace("{log}", str(log)) for a in argv]
    if "--stream" not in argv:
        argv += ["--stream", 'synth:SEA{"n": 50}']
    try:
        status = main(["run", *argv, "--model", "majority", "--out", str(tmp_path / "out"),
                       "--runner", "direct", "--quiet"])
    except SystemExit as stop:  # (argparse's, for a value that is not a number)
        status = stop.code
    assert status == 2
    err = without_notices(capsys.readouterr().err)
    assert err.count("\n") == 1 and err.startswith("delayed-eval: error: ") and message in err


def test_every_replay_path_pretrains_alike(tmp_path):
    """The grouped, stateful, per-key and per-stream replays of one pretrained run (two
    streams, a tree and naive Bayes, re-evaluation on): the same predictions, summary and
    counts."""
    from tests.test_replay_paths import _outputs

    results = []
    for replay in ("grouped", "stateful", "per-key", "per-stream"):
        run(RunConfig(streams=[SEA, 'agrawal=synth:Agrawal{"n": 300, "seed": 4}'],
                      models=["gaussian-nb", "hoeffding-tree"], delay="20", pretrain=100,
                      repredict="every_k_labels:3", bins=5, replay=replay, chunk_size=64,
                      out=str(tmp_path / replay), quiet=True, runner="direct"))
        results.append(_outputs(tmp_path / replay))
    first = results[0]
    assert first[3][1]["agrawal"]["pretrain_events"] == 100
    for other in results[1:]:
        for got, expected in zip(other[:3], first[:3]):
            pd.testing.assert_frame_equal(got, expected)
        assert other[3] == first[3]
