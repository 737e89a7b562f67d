"""river's binary classifiers (LogisticRegression, ...) on streams whose two classes are not
True/False: they learn label == positive, and score as river scores them on those booleans."""

import itertools
import json

import pandas as pd
import pytest
from river import datasets, evaluate, linear_model, metrics, preprocessing

from pipelines.cli import main
from pipelines.local import evaluate_locally
from transforms.errors import ModelError
from tests.helpers import read_csv

N, DELAY = 2000, 50


def sea_rows(n=N):
    return list(itertools.islice(datasets.synth.SEA(seed=3, noise=0.1), n))


def write_rows(tmp_path, rows, label_of, name="tx.csv") -> str:
    path = tmp_path / name
    pd.DataFrame([{**x, "label": label_of(y)} for x, y in rows]).to_csv(path, index=False)
    return str(path)


def initial(summary: pd.DataFrame) -> dict:
    rows = summary[(summary["category"] == "initial") & (summary["window"] == "cumulative")
                   & summary["class"].isna()]
    return dict(zip(rows["metric"], rows["value"])) | {"n": int(rows["n"].iloc[0])}


def river_on_booleans(rows, is_positive, model):
    """river's delayed progressive validation on the same rows, labelled True/False."""
    accuracy, log_loss = metrics.Accuracy(), metrics.LogLoss()
    evaluate.progressive_val_score([(x, is_positive(y)) for x, y in rows], model,
                                   accuracy, delay=DELAY)
    model = model.clone()
    evaluate.progressive_val_score([(x, is_positive(y)) for x, y in rows], model,
                                   log_loss, delay=DELAY)
    return accuracy.cm.total_weight, accuracy.get(), log_loss.get()


@pytest.mark.parametrize("labels, options, positive", [
    ({True: "fraud", False: "ok"}, {"positive": "fraud"}, "fraud"),
    ({True: "fraud", False: "ok"}, {"classes": ["ok", "fraud"]}, "fraud"),  # river's second
    ({True: "ok", False: "fraud"}, {"positive": "fraud"}, "fraud"),
    ({True: 2, False: 1}, {}, 1),  # 1 is positive, as it is in the summary
])
def test_text_and_other_labels_score_as_river_does_on_booleans(tmp_path, labels, options,
                                                               positive):
    rows = sea_rows()
    path = write_rows(tmp_path, rows, labels.get)
    summary = evaluate_locally(path + json.dumps(options), "logistic-regression",
                               str(DELAY), final=False).summary
    ours = initial(summary)
    n, accuracy, log_loss = river_on_booleans(
        [(x, labels[y]) for x, y in rows], lambda y: y == positive,
        linear_model.LogisticRegression())
    assert ours["n"] == n == N
    assert ours["accuracy"] == accuracy
    assert ours["log_loss"] == pytest.approx(log_loss, rel=1e-12)


def test_a_pipeline_ending_in_a_binary_model_learns_the_positive_class(tmp_path):
    rows = sea_rows()
    path = write_rows(tmp_path, rows, {True: "yes", False: "no"}.get)
    ours = initial(evaluate_locally(path + '{"positive": "yes"}',
                                    "standard-scaler | logistic-regression", str(DELAY),
                                    final=False).summary)
    _, accuracy, _ = river_on_booleans(
        [(x, "yes" if y else "no") for x, y in rows], lambda y: y == "yes",
        preprocessing.StandardScaler() | linear_model.LogisticRegression())
    assert ours["accuracy"] == accuracy > 0.8


def test_river_labels_pass_through_unchanged():
    rows = sea_rows()
    ours = initial(evaluate_locally('synth:SEA{"n": 2000, "seed": 3, "noise": 0.1}',
                                    "logistic-regression", str(DELAY), final=False).summary)
    _, accuracy, _ = river_on_booleans(rows, bool, linear_model.LogisticRegression())
    assert ours["accuracy"] == accuracy


@pytest.mark.parametrize("gaps", [None, "csv", "arff"])
def test_labels_1_and_0_keep_their_names_in_a_binary_models_results(tmp_path, gaps):
    """river's LogisticRegression predicts True/False; on labels 1/0 its classes are the labels'
    1 and 0 (as GaussianNB's are), not True and False beside them, and it scores as river. Also
    where some labels are missing (`gaps`: a CSV column of 1, 0 and empty cells, which pandas
    reads as floats; an ARFF file's numeric class with `?`), not 1.0 and 0.0 beside
    GaussianNB's 1 and 0."""
    rows = sea_rows()
    path = write_rows(tmp_path, rows, int)
    if gaps:  # every 100th label missing; the rest as written
        frame = pd.read_csv(path)
        frame["label"] = frame["label"].astype("Int64").mask(frame.index % 100 == 99)
        frame.to_csv(path, index=False)
    if gaps == "arff":
        path = str(tmp_path / "tx.arff")
        with open(path, "w") as f:
            f.write("@relation tx\n" + "".join(f"@attribute {name} numeric\n"
                                               for name in frame.columns[:-1])
                    + "@attribute class numeric\n@data\n")
            f.write(frame.astype(object).where(frame.notna(), "?").to_csv(index=False,
                                                                          header=False))
    out = tmp_path / "out"
    assert main(["run", "--stream", path, "--model", "gaussian-nb", "--model",
                 "logistic-regression", "--delay", str(DELAY), "--repredict", "none",
                 "--out", str(out), "--runner", "direct", "--quiet"]) == 0
    summary = read_csv(out / "summary.csv", dtype={"class": str, "predicted": str})
    confusion = summary[summary["metric"] == "confusion"]
    for model in ("gaussian-nb", "logistic-regression"):
        cells = confusion[confusion["model"] == model]
        assert set(cells["class"]) == set(cells["predicted"]) == {"0", "1"}, model
    log = pd.read_parquet(out / "predictions.parquet")
    assert set(log["y_pred"].dropna()) == {"0", "1"}
    if not gaps:
        ours = initial(summary[summary["model"] == "logistic-regression"])
        _, accuracy, _ = river_on_booleans(rows, bool, linear_model.LogisticRegression())
        assert ours["accuracy"] == accuracy


@pytest.mark.parametrize("zeros_first", [False, True])
def test_labels_1_and_0_written_as_text_take_1_as_positive(tmp_path, zeros_first):
    """A JSON Lines file whose labels are "1" and "0": text, but the positive class is "1", as
    the summary's positive class is, also when the first labels read are all "0" (a rare
    positive class's); each was refused, asking to name the positive class."""
    rows = sea_rows()
    if zeros_first:  # the first 1 000 rows read hold no positive label
        rows = sea_rows(3 * N)
        zeros = [i for i, (_, y) in enumerate(rows) if not y][:1000]
        zeros = dict.fromkeys(zeros)  # (in order, and a set)
        rows = [rows[i] for i in zeros] + [r for i, r in enumerate(rows) if i not in zeros]
        rows = rows[:N]
    path = tmp_path / "tx.jsonl"
    pd.DataFrame([{**x, "label": str(int(y))} for x, y in rows]).to_json(path, orient="records",
                                                                          lines=True)
    ours = initial(evaluate_locally(str(path), "logistic-regression", str(DELAY),
                                    final=False).summary)
    _, accuracy, _ = river_on_booleans([(x, str(int(y))) for x, y in rows],
                                       lambda y: y == "1", linear_model.LogisticRegression())
    assert ours["accuracy"] == accuracy


def test_an_arff_streams_binary_model_learns_its_second_declared_class(tmp_path):
    """An ARFF file's nominal class {ok,fraud}: a binary model learns label == fraud (river's
    second class) and scores as river on those booleans; the run stopped with an internal
    error reading the file's first labels."""
    rows = sea_rows()
    path = tmp_path / "tx.arff"
    with open(path, "w") as f:
        f.write("@relation tx\n" + "".join(f"@attribute {name} numeric\n" for name in rows[0][0])
                + "@attribute class {ok,fraud}\n@data\n")
        f.writelines(",".join(map(repr, x.values())) + f",{'fraud' if y else 'ok'}\n"
                     for x, y in rows)
    ours = initial(evaluate_locally(str(path), "logistic-regression", str(DELAY),
                                    final=False).summary)
    _, accuracy, log_loss = river_on_booleans(rows, bool, linear_model.LogisticRegression())
    assert (ours["accuracy"], ours["log_loss"]) == (accuracy, pytest.approx(log_loss, rel=1e-12))
    out = tmp_path / "out"
    assert main(["run", "--stream", str(path), "--model", "logistic-regression", "--delay",
                 str(DELAY), "--out", str(out), "--runner", "direct", "--quiet"]) == 0


def test_a_third_class_after_the_first_rows_stops_the_model(tmp_path):
    rows = sea_rows(1500)
    labels = ["fraud" if y else "ok" for _, y in rows]
    labels[1400] = "chargeback"
    path = tmp_path / "tx.csv"
    pd.DataFrame([{**x, "label": y} for (x, _), y in zip(rows, labels)]).to_csv(path,
                                                                                  index=False)
    with pytest.raises(ModelError, match="label 'chargeback' is a third class"):
        evaluate_locally(str(path) + '{"positive": "fraud"}', "logistic-regression", "10")
    out = tmp_path / "out"
    code = main(["run", "--stream", str(path) + '{"positive": "fraud"}', "--model",
                 "logistic-regression", "--delay", "10", "--on-model-error", "dead-letter",
                 "--out", str(out), "--runner", "direct", "--quiet"])
    assert code == 0
    letters = [json.loads(line) for line in open(out / "dead_letters.jsonl")]
    assert len(letters) == 1 and "third class" in letters[0]["reason"]
    counts, = json.load(open(out / "manifest.json"))["counts"]
    assert (counts["labelled"], counts["dead_letters"], counts["model_errors"]) == (1499, 1, 1)


@pytest.mark.parametrize("stream, meant", [
    ('synth:LED{"n": 300}', "stream led has 10 classes (1, 6, 2, 0, 5, ...): wrap the model, "
                            "e.g. river.multiclass.OneVsRestClassifier"),
    ("TX", 'stream tx has the labels \'fraud\' and \'ok\', not True/False or 1/0: name the '
           'positive class with the stream option {"positive": "fraud"}'),
])
def test_a_binary_model_on_classes_it_cannot_tell_is_one_clear_error(tmp_path, capsys,
                                                                     stream, meant):
    if stream == "TX":  # ok three times as often as fraud: the example names the rarer
        stream = write_rows(tmp_path, [({"a": i}, i % 4 == 0) for i in range(100)],
                            {True: "fraud", False: "ok"}.get)
    code = main(["run", "--stream", stream, "--model", "lr=logistic-regression", "--delay",
                 "10", "--out", str(tmp_path / "out"), "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("delayed-eval: error: model lr is a binary classifier (it predicts "
                          "True or False), and " + meant)
    assert not (tmp_path / "out").exists()


def test_a_pipeline_ending_in_a_binary_model_is_shown_wrapped(tmp_path, capsys):
    """On more than two classes, the line shows the user's own pipeline with its last step
    wrapped; that spec runs, and scores as river's same pipeline does."""
    from river import multiclass, preprocessing

    code = main(["run", "--stream", 'synth:LED{"n": 300, "seed": 5}', "--model",
                 'standard-scaler | logistic-regression{"l2": 0.01}', "--delay", "10",
                 "--out", str(tmp_path / "out"), "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    suggested = ('standard-scaler | river.multiclass.OneVsRestClassifier{"classifier": '
                 '{"logistic-regression": {"l2": 0.01}}}')
    assert code == 2 and err.count("\n") == 1 and err.endswith(f"; here: '{suggested}'\n")
    summary = evaluate_locally('synth:LED{"n": 300, "seed": 5}', suggested, "10").summary
    accuracy = metrics.Accuracy()
    evaluate.progressive_val_score(
        datasets.synth.LED(seed=5).take(300), preprocessing.StandardScaler()
        | multiclass.OneVsRestClassifier(linear_model.LogisticRegression(l2=0.01)),
        accuracy, delay=10)
    assert initial(summary)["accuracy"] == accuracy.get()
    # Two classes need no wrapper, their positive class named: the line says only that.
    pd.DataFrame({"x": [0.5, 1.5, 2.5], "label": ["no", "yes", "no"]}).to_csv(
        tmp_path / "two.csv", index=False)
    code = main(["run", "--stream", str(tmp_path / "two.csv"), "--model",
                 "standard-scaler | logistic-regression", "--out", str(tmp_path / "two"),
                 "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "OneVsRest" not in err
    assert err.rstrip().endswith('(the model learns label == positive)')


def test_a_multiclass_wrapper_of_a_binary_model_is_not_refused():
    from river import multiclass

    summary = evaluate_locally('synth:LED{"n": 500, "seed": 5}',
                               'river.multiclass.OneVsRestClassifier'
                               '{"classifier": {"logistic-regression": {}}}', "10").summary
    accuracy = metrics.Accuracy()
    evaluate.progressive_val_score(
        datasets.synth.LED(seed=5).take(500),
        multiclass.OneVsRestClassifier(linear_model.LogisticRegression()), accuracy, delay=10)
    assert initial(summary)["accuracy"] == accuracy.get()


@pytest.mark.parametrize("wrapper", ['temporal-correction{"model": "logistic-regression"}',
                                     'temporally-augmented{"model": "logistic-regression", '
                                     '"lags": 2}'])
def test_a_temporal_wrapper_of_a_binary_model_learns_the_positive_class(tmp_path, wrapper):
    """The wrapper keeps its transitions or lagged labels in the stream's classes; its
    model learns label == positive. Oracle: river's LogisticRegression in the same wrapper
    on the True/False labels, a plain predict-then-learn loop (delay 1), its answers named."""
    from transforms.models.specs import ModelSpec

    rows = sea_rows(600)
    name = {True: "fraud", False: "ok"}
    path = write_rows(tmp_path, rows, name.get)
    ours = initial(evaluate_locally(path + '{"classes": ["ok", "fraud"]}', wrapper, "1",
                                    final=False).summary)
    loop = ModelSpec.parse(wrapper).build()
    hits = 0
    for x, y in rows:
        hits += name[loop.predict_one(x)] == name[y]
        loop.learn_one(x, y)
    assert ours["n"] == len(rows)
    assert ours["accuracy"] == hits / len(rows) > 0.6


@pytest.mark.parametrize("positive, said", [("frau", True), ("fraud", False)])
def test_a_positive_class_none_of_the_labels_is_named_after_the_run(tmp_path, capsys,
                                                                     positive, said):
    """A multiclass model does not need the positive class, so a misspelt one would only leave
    the terminal's table without any class's precision, recall and F1; a line says why."""
    stream = write_rows(tmp_path, [({"a": i % 7}, i % 4 == 0) for i in range(200)],
                        {True: "fraud", False: "ok"}.get)
    code = main(["run", "--stream", stream + json.dumps({"positive": positive}), "--model",
                 "gaussian-nb", "--delay", "10", "--out", str(tmp_path / "out"),
                 "--runner", "direct", "--repredict", "none"])
    out = capsys.readouterr().out
    line = (f"tx: the positive class '{positive}' is none of its classes ('fraud', 'ok'), so "
            f"no class's precision, recall and F1 are shown")
    assert code == 0 and (line in out) == said
    assert ("initial precision (fraud)" in out) != said
