"""Every kind of bad input gets a clear error or a dead-letter record, counted in the manifest."""

import datetime
import html
import json
import os
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import pipelines.files
from pipelines.cli import main
from pipelines.config import ConfigError, RunConfig
from pipelines.job import run
from pipelines.notices import format_odd_classes
from pipelines.plan import plan
from pipelines.results import load_results
from tests.helpers import data, read, read_csv, without_notices
from transforms.backfill.logs import PredictionLogSpec
from transforms.errors import DelayedEvalError, InputError, OutputError
from transforms.streams.sources import StreamSpec

BAD = data("bad.csv") + '{"classes": ["yes", "no"]}'


def reasons():
    _, dead = read(BAD)
    return {(d["row"], d["field"]): d["reason"] for d in dead}


def test_unparsable_time_names_row_and_field():
    assert "neither a number nor an ISO datetime" in reasons()[(3, "time")]


def test_unparsable_value_names_row_and_field():
    assert "'abc' is not a number" in reasons()[(4, "f1")]


def test_nan_and_inf_features_are_dead_lettered():
    r = reasons()
    assert r[(5, "f1")] == "feature is inf"
    assert (10, "f1") in r  # the literal nan


def test_missing_drop_keeps_nan_rows_without_the_feature(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("time,f1,f2,label\n0,1.0,,a\n1,2.0,3.0,b\n")
    events, dead = read(f'{path}{{"missing": "drop"}}')
    assert dead == [] and events[0][5] == {"f1": 1.0}
    _, dead = read(str(path))
    assert dead[0]["field"] == "f2" and dead[0]["row"] == 1


def test_label_earlier_than_its_instance():
    assert "earlier than its instance" in reasons()[(7, "time")]


def test_unknown_kind():
    assert "kind 'explode'" in reasons()[(12, "kind")]


def test_duplicate_instance_id():
    _, dead = read(BAD)
    assert any(d["reason"] == "duplicate instance id 'a'" for d in dead)


def test_a_row_without_an_id_is_a_dead_letter_in_every_kind_of_table(tmp_path):
    # An empty id cell, NaN or null stood for an instance `nan` (two such rows: two instances
    # with one printed id, never equal to each other), or a label no instance could meet.
    labelled = _write(tmp_path, "labelled.csv", "id,time,x,label\na,0,1.0,p\n,1,2.0,q\n"
                      "c,2,3.0,p\n,3,4.0,q\n")
    log = _write(tmp_path, "log.jsonl", "\n".join(json.dumps(r) for r in [
        {"id": "a", "time": 0, "kind": "instance", "x": 1.0},
        {"time": 1, "kind": "instance", "x": 2.0},
        {"id": None, "time": 2, "kind": "label", "label": "p"},
        {"id": "a", "time": 3, "kind": "label", "label": "q"}]) + "\n")
    instances = _write(tmp_path, "instances.csv", "id,time,x\na,0,1.0\nb,1,2.0\n")
    labels = _write(tmp_path, "labels.csv", "id,time,label\n,2,p\nb,3,q\na,4,p\n")
    for spec, rows, events in ((labelled, {"labelled.csv": [2, 4]}, 4),
                               (log, {"log.jsonl": [2, 3]}, 2),
                               (instances + json.dumps({"labels": labels}),
                                {"labels.csv": [1]}, 4)):
        got, dead = read(spec, delay="1")
        where = {}
        for d in dead:
            assert (d["field"], d["reason"]) == ("id", "the id is missing (an empty cell, NaN "
                                                       "or null)")
            where.setdefault(d["file"].rsplit("/", 1)[-1], []).append(d["row"])
        assert where == rows and len(got) == events
        assert all(isinstance(e[4], str) for e in got)


def test_an_infinite_label_is_a_dead_letter_and_its_instance_stays_unlabelled(tmp_path):
    # It was a target (an infinite MAE) or a class named inf.
    path = _write(tmp_path, "targets.csv", "time,x,label\n0,1.0,2.5\n1,2.0,inf\n2,3.0,-inf\n"
                  "3,4.0,1.5\n")
    events, dead = read(path, delay="1")
    assert [(d["row"], d["field"], d["reason"]) for d in dead] == [
        (2, "label", "label inf is not a finite number"),
        (3, "label", "label -inf is not a finite number")]
    assert sorted(e[6] for e in events if e[3] == "label") == [1.5, 2.5]
    assert len([e for e in events if e[3] == "instance"]) == 4


def test_unseen_class():
    _, dead = read(BAD)
    assert any("'maybe' is not one of the declared classes" in d["reason"] for d in dead)


def test_misnamed_column_is_an_error_naming_file_and_column():
    with pytest.raises(InputError, match=r"instances\.csv: column 'ts' \(option 'time'\) not "
                                         r"found; columns are \['id', 'time', 'f1', 'f2'\]"):
        StreamSpec.parse(data("instances.csv") + '{"time": "ts"}').check()
    with pytest.raises(InputError, match="column 'label'"):
        StreamSpec.parse(data("instances.csv") + '{"labels": "' + data("instances.csv")
                         + '"}').check()


def test_empty_stream_is_an_error(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("id,time,f1,label\n")
    with pytest.raises(InputError, match="empty.csv: the stream is empty"):
        StreamSpec.parse(str(empty)).check()
    nothing = tmp_path / "nothing.csv"
    nothing.write_text("")
    with pytest.raises(InputError, match="empty"):
        StreamSpec.parse(str(nothing)).check()


@pytest.mark.parametrize("options, delay, told", [
    ({"features": ["x", "x"]}, "10",
     "feature 'x' is listed twice in the option features; list each column once"),
    ({"features": ["x", "label"]}, "10", "feature 'label' is the label column, which a model "
     "must not see before the label arrives; leave it out of the option features"),
    ({"features": ["x", "at"], "label_time": "at", "time": "t"}, "0",
     "feature 'at' is the label times, which a model must not see"),
    ({"features": ["x", "wait"], "delay": "column:wait"}, "0", "feature 'wait' is the delays"),
    ({"features": ["x", "wait"]}, "column:wait", "feature 'wait' is the delays"),
])
def test_features_listed_twice_or_known_only_with_the_label_are_refused(tmp_path, options,
                                                                        delay, told):
    """A repeated feature was an internal AttributeError; the label, its time or its delay as
    a feature ran, the model learning the answer."""
    path = _write(tmp_path, "rows.csv", "t,x,wait,at,label\n" + "".join(
        f"{i},{i % 7},{5 + i % 3},{i + 5 + i % 3},{'ab'[i % 2]}\n" for i in range(40)))
    with pytest.raises(InputError, match=re.escape(f"stream rows: {told}")):
        plan(RunConfig(streams=[path + json.dumps(options)], models=["gaussian-nb"],
                       delay=delay, out=str(tmp_path / "o")))


@pytest.mark.parametrize("runner", ["direct", "direct-mp"])
def test_a_model_of_the_users_own_imports_from_the_folder_the_command_runs_in(tmp_path,
                                                                               runner):
    """The console script (unlike `python -m`) did not look there: 'No module named
    mymodels'. Its worker processes find it too."""
    (tmp_path / "mymodels.py").write_text(
        "from river import naive_bayes\n\n\nclass MyNB(naive_bayes.GaussianNB):\n    pass\n")
    script = os.path.join(os.path.dirname(sys.executable), "delayed-eval")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([script, "run", "--stream", 'synth:SEA{"n": 200}', "--model",
                           "mine=mymodels.MyNB", "--model", "gaussian-nb", "--delay", "10",
                           "--repredict", "none", "--out", "o", "--runner", runner, "--quiet"],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    summary = read_csv(tmp_path / "o" / "summary.csv")
    accuracy = summary[(summary["metric"] == "accuracy") & (summary["category"] == "initial")
                       & (summary["window"] == "cumulative")].set_index("model")["value"]
    assert accuracy["mine"] == accuracy["gaussian-nb"]


def test_a_model_class_of_a_script_missing_in_a_worker_says_where_to_define_it():
    """A class defined in a notebook or script is `__main__.Mine`, which a worker process of
    `direct-mp` cannot import: the error said only "module '__main__' has no attribute"."""
    from transforms.models.specs import ModelSpec, ModelSpecError

    with pytest.raises(ModelSpecError, match=r"cannot import model '__main__\.Mine': .*; a "
                       r"class defined in a script or notebook is not in the runner's worker "
                       r"processes: define it in a module of your own .* or run on the "
                       r"'direct' runner"):
        ModelSpec.parse("__main__.Mine").build()


def test_positional_arguments_given_by_name_say_how_to_give_them():
    """river's Pipeline(*steps) given {"steps": [...]}, as its docs name them: the error said
    only "unexpected keyword argument 'steps'"; the spec it suggests builds the pipeline."""
    from river import compose, linear_model, preprocessing

    from transforms.models.specs import ModelSpec, ModelSpecError

    steps = ["river.preprocessing.StandardScaler", "river.linear_model.LinearRegression"]
    with pytest.raises(ModelSpecError) as told:
        ModelSpec.parse("river.compose.Pipeline" + json.dumps({"steps": steps})).build()
    suggested = re.search(r"'steps' are its positional arguments, given as (\{.*\}) \(or the "
                          r"steps joined by \|", str(told.value)).group(1)
    built = ModelSpec.parse("river.compose.Pipeline" + suggested).build()
    assert isinstance(built, compose.Pipeline) and repr(built) == repr(
        preprocessing.StandardScaler() | linear_model.LinearRegression())


def test_unknown_model_and_generator_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="cannot import model 'river.tree.NoSuchTree'"):
        plan(RunConfig(streams=['synth:SEA{"n": 10}'], models=["river.tree.NoSuchTree"],
                       out=str(tmp_path)))
    with pytest.raises(ConfigError, match="unknown model 'nonsense'"):
        plan(RunConfig(streams=['synth:SEA{"n": 10}'], models=["nonsense"], out=str(tmp_path)))
    with pytest.raises(DelayedEvalError, match="river has no generator 'NoSuch'"):
        plan(RunConfig(streams=["synth:NoSuch"], models=["majority"], out=str(tmp_path)))
    with pytest.raises(ConfigError, match="not valid JSON"):
        plan(RunConfig(streams=['synth:SEA{"n": 10}'], models=['gaussian-nb{"a": }'],
                       out=str(tmp_path)))
    # A typo is named with what was meant.
    for streams, models, meant in (
            (['synth:SEA{"n": 10}'], ["gausian-nb"], "unknown model 'gausian-nb' (did you "
                                                     "mean 'gaussian-nb'?)"),
            (['synth:SEA{"n": 10}'], ['hoeffding-tree{"grace_periode": 50}'],
             "(did you mean 'grace_period' for 'grace_periode'?)"),
            (["synth:sea"], ["majority"], "river has no generator 'sea' (did you mean 'SEA'?)"),
            # A module misspelt, in a package or at the top.
            (['synth:SEA{"n": 10}'], ["river.naive_bayse.GaussianNB"],
             "No module named 'river.naive_bayse' (did you mean river.naive_bayes.GaussianNB?)"),
            (['synth:SEA{"n": 10}'], ["rivr.naive_bayes.GaussianNB"],
             "No module named 'rivr' (did you mean river.naive_bayes.GaussianNB?)"),
            (['synth:SEA{"n": 10}'], ["nowhere_at_all.Model"],
             "No module named 'nowhere_at_all'; a module of your own is found in the folder "
             "the command runs in, or in a folder on PYTHONPATH"),
            # A parameter nothing is close to: the model's parameters are listed, and a short
            # name is named as the user wrote it, with what it stands for.
            (['synth:SEA{"n": 10}'], ['gaussian-nb{"seed": 1}'],
             "cannot build gaussian-nb (river.naive_bayes.GaussianNB) with {'seed': 1}: "
             "GaussianNB.__init__() got an unexpected keyword argument 'seed' (it takes no "
             "parameters)"),
            (['synth:SEA{"n": 10}'], ['river.linear_model.LogisticRegression{"lr": 1}'],
             "(its parameters are optimizer, loss, l2, l1, intercept_init, intercept_lr, "
             "clip_gradient, initializer)"),
            # A wrapper's guard that is no number of standard errors.
            (['synth:SEA{"n": 10}'], ['temporal-correction{"guard": "yes"}'],
             "guard must be a number of standard errors, 0 or more (3 is usual), or null for "
             "none, not 'yes'"),
            (['synth:SEA{"n": 10}'], ['temporally-augmented{"guard": -1}'],
             "guard must be a number of standard errors, 0 or more"),
            # A baseline given parameters (was a TypeError from its constructor).
            (['synth:SEA{"n": 10}'], ['no-change{"window": 5}'],
             "model no-change takes no parameters (it learns only the labels' classes)"),
            # A name with a slash, which a path's date=DAY part has: read as a path.
            (["fraud/eu=synth:SEA"], ["majority"],
             "stream fraud/eu=synth:SEA: a stream's name holds no / or \\ (they tell a path); "
             "name it otherwise, e.g. fraud-eu=synth:SEA"),
            (["dataset:Phising"], ["majority"], "river has no dataset 'Phising' (did you mean "
                                                "'Phishing'?)"),
            # An object's import path given as text, where the object was meant.
            (["synth:Friedman"], ['river.dummy.StatisticRegressor{"statistic": '
                                  '"river.stats.Mean"}'],
             "parameter 'statistic' is the text 'river.stats.Mean'; an object is written as "
             'its path with its parameters: {"statistic": {"river.stats.Mean": {}}}'),
            # ... in a list of models (it failed at the first prediction: 'str' object has no
            # attribute 'predict_proba_one').
            (['synth:SEA{"n": 10}'], ['river.ensemble.VotingClassifier{"models": '
                                      '["river.naive_bayes.GaussianNB", "hoeffding-tree"]}'],
             "parameter 'models' holds the text 'river.naive_bayes.GaussianNB'; an object is "
             'written as its path with its parameters: {"models": [{"river.naive_bayes.'
             'GaussianNB": {}}, {"hoeffding-tree": {}}]}'),
            # A parameter without a default, not given.
            (["synth:Friedman"], ["river.dummy.StatisticRegressor"],
             "missing 1 required positional argument: 'statistic' (give 'statistic': "
             'river.dummy.StatisticRegressor{"statistic": ...}; an object is its import path '
             'with its parameters, {"river.module.Class": {...}})'),
            (['synth:SEA{"n": 10}'], ["river.tree.HoeffdingTreeClassifer"],
             "(did you mean river.tree.HoeffdingTreeClassifier?)"),
            # A number in quotes (a YAML config's "100"), where river compares numbers.
            (['synth:SEA{"n": 10}'], ['hoeffding-tree{"grace_period": "100", '
                                      '"split_criterion": "gini"}'],
             "parameter 'grace_period' is the text '100', where a number is expected (its "
             'default is 200); write it without quotes: {"grace_period": 100}'),
            # A wrapped model named by its short name as text.
            (['synth:SEA{"n": 10}'], ['river.ensemble.BaggingClassifier{"model": '
                                      '"hoeffding-tree"}'],
             '(a model is written as its name with its parameters: {"model": '
             '{"hoeffding-tree": {}}})'),
            # A pipeline's steps in the wrong order, and a pipeline of none.
            (['synth:SEA{"n": 10}'], ["river.linear_model.LogisticRegression | "
                                      "river.preprocessing.StandardScaler"],
             "a pipeline's estimator comes last, after its transformers; this one ends with "
             "river.preprocessing.scale.StandardScaler, which has no predict_one: reorder "
             "its steps"),
            (['synth:SEA{"n": 10}'], ["river.compose.Pipeline"],
             "model Pipeline: a pipeline without steps"),
            (['synth:SEA{"n": 10}'], ["river.preprocessing.StandardScaler | "
                                      "river.cluster.KMeans"],
             "KMeans learns without labels (its learn_one takes no y: a clusterer?)")):
        with pytest.raises(DelayedEvalError, match=re.escape(meant)):
            plan(RunConfig(streams=streams, models=models, out=str(tmp_path)))


def test_option_values_no_stream_can_mean_are_refused_before_the_run(tmp_path):
    """Python's JSON reads NaN and Infinity: a seed of NaN drew another stream each run (NaN's
    hash is its object's), a drift at NaN was an internal error, a noise of NaN none. A class
    declared twice (as labels read it) made a binary stream one of three classes: its table
    showed no positive class."""
    path = tmp_path / "rows.csv"
    pd.DataFrame({"time": range(20), "x": range(20), "label": [0, 1] * 10}).to_csv(path,
                                                                                  index=False)
    for stream, model, meant in (
            ('synth:SEA{"n": 50, "seed": NaN}', "majority", "options of stream 'synth:SEA{\"n\""
             ': 50, "seed": NaN}\' hold NaN, which is no value; write a number'),
            ('synth:SEA{"n": 50, "drift": [{"at": NaN, "variant": 2}]}', "majority",
             "hold NaN, which is no value"),
            (f'{path}{{"classes": [0, 1, Infinity]}}', "majority", "hold Infinity"),
            ('synth:SEA{"n": 50}', 'gaussian-nb{"var": NaN}', "parameters of model "
             "'gaussian-nb{\"var\": NaN}' hold NaN"),
            (f'{path}{{"classes": [0, 0, 1]}}', "majority", "the declared classes [0, 0, 1] "
             "name 0 twice (its labels are read as the first class is written); name each "
             "class once"),
            (f'{path}{{"classes": ["0", 1, 1.0]}}', "majority", "name 1.0 twice")):
        with pytest.raises(DelayedEvalError, match=re.escape(meant)):
            plan(RunConfig(streams=[stream], models=[model], out=str(tmp_path / "out")))


def test_a_spec_the_shell_took_apart_is_named_with_the_quoting_that_keeps_it(tmp_path, capsys):
    """bash turns an unquoted synth:SEA{"n":300,"seed":3} into two words without quotes
    (synth:SEAn:300 synth:SEAseed:3), and synth:SEA{"n":300} into synth:SEA{n:300}."""
    for argv in (["--stream", "synth:SEAn:300", "synth:SEAseed:3", "--model", "majority"],
                 ["--stream", "synth:SEA{n:300}", "--model", "majority"],
                 ["--stream", "synth:SEA", "--model", "hoeffding-tree{grace_period:50}"]):
        code = main(["run", *argv, "--out", str(tmp_path), "--runner", "direct"])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1
        assert "in a shell, put the whole spec in single quotes" in err


def test_a_delay_column_the_stream_lacks_is_refused_before_the_run(tmp_path):
    """Each row would be a dead letter ('delay is empty'): the plan names the columns."""
    path = tmp_path / "rows.csv"
    path.write_text("x,label,wait_s\n1.0,a,5\n2.0,b,3\n")
    with pytest.raises(InputError, match=re.escape(
            "stream rows: delay column 'wait' not found; columns are ['x', 'label', "
            "'wait_s'] (did you mean column:wait_s?)")):
        plan(RunConfig(streams=[str(path)], models=["majority"], delay="column:wait",
                       out=str(tmp_path / "o")))
    with pytest.raises(InputError, match="a generated stream or a river dataset has none"):
        plan(RunConfig(streams=['synth:SEA{"n": 10, "delay": "column:wait"}'],
                       models=["majority"], out=str(tmp_path / "o")))
    plan(RunConfig(streams=[str(path)], models=["majority"], delay="column:wait_s",
                   out=str(tmp_path / "o")))


def test_cli_reports_errors_without_a_traceback(tmp_path, capsys):
    code = main(["run", "--stream", data("instances.csv") + '{"time": "ts"}', "--model",
                 "majority", "--out", str(tmp_path), "--runner", "direct"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("delayed-eval: error: ") and "Traceback" not in err
    assert "instances.csv: column 'ts'" in err


def test_pipeline_counts_every_dead_letter_and_orphan(tmp_path):
    # bad.csv, plus one good instance and its label (a run that labels nothing is an error).
    path = tmp_path / "bad.csv"
    path.write_text(open(data("bad.csv")).read() + "instance,h,10,1.0,0.5,\nlabel,h,11,,,yes\n")
    out = tmp_path / "out"
    run(RunConfig(streams=[f'bad={path}{{"classes": ["yes", "no"]}}'],
                  models=["majority", "no-change"], out=str(out), runner="direct", quiet=True))
    dead = [json.loads(line) for line in open(out / "dead_letters.jsonl")]
    manifest = json.load(open(out / "manifest.json"))
    read = manifest["streams"]["bad"]["read"]
    assert read["dead_letters"] == 8  # rows 2, 3, 4, 5, 7, 9, 10 and 12
    per_key = {c["model"]: c for c in manifest["counts"]}
    for model in ("majority", "no-change"):
        c = per_key[model]
        # The label for 'zz' has no instance and no features: an orphan, dead-lettered per model.
        assert c["orphan_labels"] == 1 and c["dead_letters"] == 1
        # a, e, g, h remain: e's label was dead-lettered (too early), so e and g stay pending.
        assert c["instances"] == 4 and c["labelled"] == 1 and c["pending_at_end"] == 3
        # The identities of docs/semantics.md: every row, instance and label counted.
        assert read["instance_events"] + read["label_events"] + read["dead_letters"] == 14
        assert c["instances"] == c["labelled"] + c["pending_at_end"] + c["model_errors"] + \
            c["refused_instances"]
        assert c["labels"] == c["labelled"] + c["orphan_labels"] + c["refused_labels"]
    assert manifest["dead_letters"] == len(dead) == read["dead_letters"] + 2
    assert {d.get("model") for d in dead if "which is not pending" in d["reason"]} == \
        {"majority", "no-change"}
    # In the file's row order, the reader's and the replay's alike (row 8 is the replay's).
    assert [(d["row"], d.get("model")) for d in dead] == [
        (2, None), (3, None), (4, None), (5, None), (7, None), (8, "majority"),
        (8, "no-change"), (9, None), (10, None), (12, None)]
    # The orphan's record names its fields (bad.csv's row 8), not the replay's event tuple.
    assert [d["record"] for d in dead if d["row"] == 8] == \
        [{"time": "6", "kind": "label", "id": "zz", "label": "no"}] * 2  # (each model's)


def test_the_label_of_an_instance_set_aside_says_so(tmp_path):
    # b's feature is missing, c's time does not parse: both instances are dead letters, and so
    # are their labels, naming why (not as labels for an unknown id, an orphan per model).
    path = _write(tmp_path, "log.csv", "kind,id,time,f,label\ninstance,a,0,1.0,\n"
                  "instance,b,1,,\ninstance,c,soon,2.0,\nlabel,b,3,,x\nlabel,c,4,,y\n"
                  "label,a,5,,x\nlabel,d,6,,y\n")
    events, dead = read(str(path))
    assert [(d["row"], d["field"], d["reason"][:31]) for d in dead] == [
        (2, None, "every feature is empty"), (3, "time", "time 'soon' is neither a number"),
        (4, "id", "label of instance 'b', which wa"), (5, "id", "label of instance 'c', which wa")]
    assert dead[2]["reason"] == "label of instance 'b', which was set aside as a dead letter " \
        "when it was read"
    # a's label is read; d's (no instance at all) is left to the replay, an orphan.
    assert [(e[3], e[4]) for e in events] == [("instance", "a"), ("label", "a"), ("label", "d")]


def test_an_instances_second_label_is_a_dead_letter_the_first_counts(tmp_path):
    path = _write(tmp_path, "log.csv", "kind,id,time,f,label\ninstance,a,0,1.0,\n"
                  "label,a,1,,x\ninstance,b,2,2.0,\nlabel,a,3,,y\nlabel,b,4,,y\n")
    events, dead = read(str(path))
    assert [(d["row"], d["field"], d["reason"]) for d in dead] == [
        (4, "label", "a second label for instance 'a' (the first in time counts)")]
    assert [(e[3], e[4], e[6]) for e in events] == [
        ("instance", "a", None), ("label", "a", "x"), ("instance", "b", None), ("label", "b", "y")]


SHUFFLED = {  # (a, b and c's rows out of time order: c twice, a labelled twice)
    "tables": {"inst.csv": "id,time,f\na,10,1.0\nc,30,3.0\nb,11,2.0\nc,12,4.0\n",
               "lab.csv": "id,time,label\na,50,x\nb,30,y\na,20,y\nc,40,x\n"},
    "event log": {"log.csv": "kind,id,time,f,label\ninstance,a,10,1.0,\nlabel,a,50,,x\n"
                             "instance,c,30,3.0,\ninstance,b,11,2.0,\nlabel,b,30,,y\n"
                             "label,a,20,,y\ninstance,c,12,4.0,\nlabel,c,40,,x\n"},
    "labelled rows": {"rows.csv": "id,time,f,label,label_time\nc,30,3.0,x,45\na,10,1.0,y,20\n"
                                  "c,12,4.0,x,40\nb,11,2.0,y,30\n"}}


@pytest.mark.parametrize("shape", SHUFFLED)
def test_of_an_ids_instances_and_labels_out_of_time_order_the_first_in_time_counts(tmp_path,
                                                                                   shape):
    """The instance at 12 s is c's, not the one at 30 s the file gives first; a's label is the
    one at 20 s, not the one at 50 s (as they would have come)."""
    paths = {name: _write(tmp_path, name, text) for name, text in SHUFFLED[shape].items()}
    spec = paths["inst.csv"] + f'{{"labels": "{paths["lab.csv"]}"}}' if shape == "tables" \
        else next(iter(paths.values()))
    events, dead = read(spec, "1s")  # (a delay the label times override; not in events)
    assert [(e[0], e[3], e[4], e[5], e[6]) for e in events] == [
        (10.0, "instance", "a", {"f": 1.0}, None), (11.0, "instance", "b", {"f": 2.0}, None),
        (12.0, "instance", "c", {"f": 4.0}, None), (20.0, "label", "a", None, "y"),
        (30.0, "label", "b", None, "y"), (40.0, "label", "c", None, "x")]
    second = "a second label for instance 'a' (the first in time counts)"
    assert sorted((os.path.basename(d["file"]), d["row"], d["field"], d["reason"])
                  for d in dead) == {
        "tables": [("inst.csv", 2, "id", "duplicate instance id 'c'"),
                   ("lab.csv", 1, "label", second)],
        "event log": [("log.csv", 2, "label", second),
                      ("log.csv", 3, "id", "duplicate instance id 'c'")],
        "labelled rows": [("rows.csv", 1, "id", "duplicate instance id 'c'")]}[shape]


def test_dead_letters_name_dated_times_as_datetimes(tmp_path):
    (tmp_path / "i.csv").write_text("id,time,f\na,2026-11-01T10:00:00Z,1\n")
    (tmp_path / "l.csv").write_text("id,time,label\na,2026-11-01T09:59:59.5Z,x\n")
    _, dead = read(f'{tmp_path / "i.csv"}{{"labels": "{tmp_path / "l.csv"}"}}')
    assert [d["reason"] for d in dead] == ["label at 2026-11-01 09:59:59.500 UTC is earlier "
                                           "than its instance at 2026-11-01 10:00:00 UTC"]


def test_labelled_rows_time_each_label_by_their_own_column_or_set_it_aside(tmp_path):
    """With a label time column every label's time is its row's: an empty or unreadable one
    is a dead letter (the instance waits), not a label placed by a delay model."""
    path = _write(tmp_path, "rows.csv", "id,time,f,label,done\na,0,1.0,x,5\nb,1,2.0,y,\n"
                  "c,2,3.0,x,soon\nd,3,4.0,y,2\ne,4,5.0,,\nf,6,6.0,x,7\n")
    spec = path + '{"label_time": "done"}'
    events, dead = read(spec)
    assert [(d["row"], d["field"], d["reason"]) for d in dead] == [
        (2, "done", "the label time is missing (an empty cell, NaN or null); the label is set "
                    "aside, its instance waits"),
        (3, "done", "label time 'soon' is neither a number nor an ISO datetime; the label is "
                    "set aside, its instance waits"),
        (4, "done", "label time 2 is earlier than the instance time 3")]
    assert [(e[0], e[3], e[4]) for e in events if e[3] == "label"] == [
        (5.0, "label", "a"), (7.0, "label", "f")]
    code = main(["run", "--stream", spec, "--model", "majority", "--out",
                 str(tmp_path / "out"), "--runner", "direct", "--quiet"])
    assert code == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    counts = manifest["counts"][0]
    assert (counts["instances"], counts["labelled"], counts["pending_at_end"]) == (6, 2, 4)
    assert manifest["streams"]["rows"]["delay"] == "input"
    assert main(["run", "--stream", spec, "--model", "majority", "--delay", "5", "--out",
                 str(tmp_path / "out2"), "--runner", "direct", "--quiet"]) == 2


def test_malformed_arff_is_an_error_with_file_and_line(tmp_path):
    bad = tmp_path / "bad.arff"
    bad.write_text("@relation r\n@attribute a numeric\n@attribute c blob\n@data\n1,2\n")
    with pytest.raises(InputError, match=r"bad.arff, line 3: attribute 'c' has an "
                                          r"unsupported type 'blob'"):
        plan(RunConfig(streams=[str(bad)], models=["majority"], out=str(tmp_path)))
    rows = tmp_path / "rows.arff"
    rows.write_text("@relation r\n@attribute a numeric\n@attribute c {x,y}\n@data\n"
                    "1,x\nfoo,y\n2,z\n3\n")
    _, dead = read(str(rows))
    assert [(d["row"], d["field"], d["reason"]) for d in dead] == [
        (6, "a", "'foo' is not a number"), (7, "c", "'z' is not one of ['x', 'y']"),
        (8, None, "1 values for 2 attributes")]


def test_a_generator_failing_mid_stream_is_one_clear_error(tmp_path, monkeypatch, capsys):
    from river.datasets import synth

    def broken(self):
        yield {"a": 1.0}, True
        raise OverflowError("math range error")

    monkeypatch.setattr(synth.SEA, "__iter__", broken)
    code = main(["run", "--stream", "sea=synth:SEA", "--model", "no-change", "--out",
                 str(tmp_path), "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == ("delayed-eval: error: stream sea: reading failed after 1 records: "
                   "OverflowError: math range error")


def test_abrupt_drift_far_from_its_centre_reads():
    # river's ConceptDriftStream overflows math.exp here (width 1, 15 000 instances away).
    events, dead = read('synth:LEDDrift{"n": 50, "drift": [{"at": 15000, '
                        '"n_drift_features": 7}]}')
    assert len(events) == 100 and dead == []


def _dead_and_counts(out, spec: str, delay: str):
    run(RunConfig(streams=["s=" + spec], models=["majority"], delay=delay, out=str(out),
                  runner="direct", quiet=True))
    dead = [json.loads(line) for line in open(out / "dead_letters.jsonl")]
    counts = json.load(open(out / "manifest.json"))["counts"][0]
    return [(d["row"], d["field"], d["reason"]) for d in dead], counts


def test_unique_ids_pending_lets_an_id_come_back_after_its_label(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("id,time,f,label\na,0,1.0,x\nb,1,2.0,y\na,2,3.0,x\nc,3,4.0,y\n")
    # By default ids are unique over the stream: the second 'a' is refused where it was read.
    dead, counts = _dead_and_counts(tmp_path / "default", str(path), "1")
    assert dead == [(3, "id", "duplicate instance id 'a'")]
    assert counts["instances"] == 3 and counts["labelled"] == 3
    # unique_ids 'pending': 'a' was labelled (delay 1) before it came back, so both are scored.
    pending = f'{path}{{"unique_ids": "pending"}}'
    dead, counts = _dead_and_counts(tmp_path / "pending", pending, "1")
    assert dead == [] and counts["instances"] == 4 and counts["labelled"] == 4
    # With a delay of 3 events the first 'a' is still pending: the replay refuses the second,
    # and its label leaves with it.
    dead, counts = _dead_and_counts(tmp_path / "still", pending, "3")
    assert dead == [  # the refused row, data row 3, with its label
        (3, "id", "instance id 'a' is already pending"),
        (3, "id", "label of an instance refused because id 'a' was pending")]
    assert counts["instances"] == 4 and counts["labelled"] == 3 and counts["dead_letters"] == 2
    assert counts["orphan_labels"] == 0 and counts["refused_instances"] == 1
    assert counts["labels"] == counts["labelled"] + counts["refused_labels"]


@pytest.mark.parametrize("replay", ["per-stream", "grouped", "per-key"])
def test_the_replays_dead_letters_name_the_file_and_row_of_their_event(tmp_path, replay):
    # Found by the replay, not the read: an update or a label for an id that is not pending
    # (an unknown id) and a model error set aside, with the label of the
    # instance set aside. Rows counted by hand.
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "a.csv").write_text(
        "id,time,kind,x,bad,label\n"
        "a,0,instance,1.0,0,\n"    # a.csv row 1
        "zz,1,update,5.0,0,\n"     # row 2: no such instance
        "a,2,label,,,p\n")         # row 3
    (tmp_path / "parts" / "b.csv").write_text(
        "id,time,kind,x,bad,label\n"
        "b,3,instance,2.0,0,\n"    # b.csv row 1
        "c,4,instance,3.0,1,\n"    # row 2: the model cannot predict it
        "b,5,label,,,q\n"          # row 3
        "yy,6,label,,,q\n"         # row 4: no such instance
        "c,7,label,,,p\n")         # row 5: its instance was set aside
    out = tmp_path / "out"
    run(RunConfig(streams=[f"s={tmp_path / 'parts'}"], models=["m=tests.helpers.FailsOn"],
                  out=str(out), runner="direct", quiet=True, replay=replay,
                  on_model_error="dead-letter"))
    dead = [json.loads(line) for line in open(out / "dead_letters.jsonl")]
    assert sorted((os.path.basename(d["file"]), d["row"], d["reason"][:22]) for d in dead) == [
        ("a.csv", 2, "update for id 'zz', wh"), ("b.csv", 2, "model m, stream s, ins"),
        ("b.csv", 4, "label for id 'yy', whi"), ("b.csv", 5, "label of instance 'c',")]
    assert all("seq" not in d for d in dead)


def test_a_refused_rows_label_never_meets_the_pending_instance(tmp_path):
    """unique_ids 'pending', delays from a column: the second 'a' (refused, 'a' is pending)
    has a label due before the first a's. The first 'a' is scored against its own label, over
    its own latency period [0, 10]; the refused row's label is a dead letter, not an orphan."""
    path = tmp_path / "rows.csv"
    # (c, after b's label, gives the run an initial prediction to score.)
    path.write_text("id,time,f,label,wait\na,0,1.0,x,10\na,1,2.0,y,2\nb,2,3.0,y,1\n"
                    "c,4,4.0,x,1\n")
    out = tmp_path / "out"
    run(RunConfig(streams=[f's={path}{{"unique_ids": "pending"}}'], models=["majority"],
                  delay="column:wait", out=str(out), runner="direct", quiet=True,
                  repredict="none", log_predictions="initial-final"))
    dead = [json.loads(line)["reason"] for line in open(out / "dead_letters.jsonl")]
    assert dead == ["instance id 'a' is already pending",
                    "label of an instance refused because id 'a' was pending"]
    finals = pd.read_parquet(out / "predictions.parquet").query("kind == 'final'")
    assert dict(zip(finals["id"], finals["t"])) == {"a": 10.0, "b": 3.0, "c": 5.0}
    counts = json.load(open(out / "manifest.json"))["counts"][0]
    assert (counts["instances"], counts["labelled"], counts["orphan_labels"],
            counts["dead_letters"], counts["pending_at_end"]) == (4, 3, 0, 2, 0)
    # Final predictions: b's comes before any label (none made); c's at t=5, after b's label
    # y: Majority says y; a's at t=10, after y and x: the tie goes to y, the first class.
    # Neither is a's or c's own label, x.
    summary = read_csv(out / "summary.csv")
    final = summary.query("category == 'final' and metric == 'accuracy' and "
                          "window == 'cumulative'")
    assert (final["n"].item(), final["value"].item()) == (2, 0.0)


def test_unique_ids_pending_is_only_for_labelled_rows(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("id,time,kind,f,label\na,0,instance,1.0,\na,1,label,,x\n")
    with pytest.raises(InputError, match="unique_ids 'pending' is for labelled rows"):
        StreamSpec.parse(f'{log}{{"unique_ids": "pending"}}').check()
    with pytest.raises(InputError, match="unique_ids must be 'stream' or 'pending'"):
        StreamSpec.parse(f'{log}{{"unique_ids": "never"}}').check()


# -- models that fail on the data --------------------------------------------------------------
def _model_rows(tmp_path):
    """30 rows; the model (tests.helpers.FailsOn) cannot predict row 7 and cannot learn row 12."""
    path = tmp_path / "s.csv"
    pd.DataFrame({"time": range(30), "f": [i % 5 for i in range(30)],
                  "bad": [1 if i == 7 else 2 if i == 12 else 0 for i in range(30)],
                  "label": ["ab"[i % 2] for i in range(30)]}).to_csv(path, index=False)
    return str(path)


@pytest.mark.parametrize("replay", ["per-stream", "grouped", "stateful"])
def test_a_model_that_raises_is_one_line_naming_model_stream_and_instance(tmp_path, capsys,
                                                                          replay):
    out = tmp_path / "out"
    code = main(["run", "--stream", "s=" + _model_rows(tmp_path), "--model",
                 "m=tests.helpers.FailsOn", "--delay", "3", "--out", str(out), "--runner",
                 "direct", "--replay", replay, "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1
    assert err.startswith("delayed-eval: error: model m, stream s, instance 7: predict_one "
                          "raised ValueError: cannot take bad=1; ")
    assert "--on-model-error dead-letter" in err
    assert not out.exists() or not any(out.iterdir())  # nothing published


def test_a_model_broken_by_a_parameter_of_the_wrong_kind_names_the_parameter(tmp_path, capsys):
    """Text or a list for a parameter whose default is a number breaks the model on its first
    instance: the line names the parameter, not the instance's features, and does not advise
    setting instances aside (every one would be)."""
    out = tmp_path / "out"
    code = main(["run", "--stream", 's=synth:SEA{"n": 100}', "--model",
                 't=river.tree.HoeffdingTreeClassifier{"grace_period": "fifty", '
                 '"leaf_prediction": "mc"}', "--delay", "5", "--out", str(out),
                 "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("delayed-eval: error: model t, stream s, instance 0: learn_one raised "
                          "TypeError: ")
    assert err.endswith("; parameter 'grace_period' of river.tree.HoeffdingTreeClassifier is "
                        "'fifty', where a number is expected (its default is 200): fix the "
                        "model's spec\n")


def test_model_errors_are_dead_letters_on_request_and_the_run_goes_on(tmp_path):
    out = tmp_path / "out"
    run(RunConfig(streams=["s=" + _model_rows(tmp_path)], models=["m=tests.helpers.FailsOn"],
                  delay="3", out=str(out), runner="direct", quiet=True,
                  on_model_error="dead-letter", repredict="none"))
    dead = sorted(json.loads(line)["reason"] for line in open(out / "dead_letters.jsonl"))
    assert dead == ["label of instance 7, dead-lettered because the model failed on it",
                    "model m, stream s, instance 12: learn_one raised ValueError: cannot take "
                    "bad=2",
                    "model m, stream s, instance 7: predict_one raised ValueError: cannot take "
                    "bad=1"]
    c = json.load(open(out / "manifest.json"))["counts"][0]
    assert (c["instances"], c["labels"], c["labelled"], c["model_errors"],
            c["pending_at_end"], c["dead_letters"], c["refused_labels"]) == (30, 30, 28, 2, 0, 3, 2)
    assert c["instances"] == c["labelled"] + c["pending_at_end"] + c["model_errors"] + \
        c["refused_instances"]
    assert c["labels"] == c["labelled"] + c["orphan_labels"] + c["refused_labels"]


@pytest.mark.parametrize("replay,repredict", [("grouped", "none"), ("per-stream", "every:2"),
                                              ("stateful", "every:2")])
def test_a_backfill_of_a_log_whose_run_set_instances_aside_sets_them_aside_too(tmp_path, capsys,
                                                                               replay, repredict):
    """A run with --on-model-error dead-letter leaves out, for that model, the instances it
    failed on (label and all); its log holds what the model predicted before it failed. A
    backfill of the log scored that and numbered the labels as the other models', so that
    model's numbers (and its comparisons) differed from the run's. The log now records which
    events the run set aside per model, and the backfill's label pass of that model sets them
    aside too: its summary, curves and counts are the run's."""
    rows, run_out, out = _model_rows(tmp_path), tmp_path / "run", tmp_path / "backfill"
    argv = ["--stream", "s=" + rows, "--delay", "3", "--runner", "direct", "--repredict",
            repredict, "--run-id", "same", "--quiet"]
    assert main(["run", *argv, "--model", "m=tests.helpers.FailsOn", "--model", "majority",
                 "--on-model-error", "dead-letter", "--replay", replay,
                 "--out", str(run_out)]) == 0
    assert main(["backfill", *argv, "--predictions", str(run_out / "predictions.parquet"),
                 "--out", str(out)]) == 0
    assert (out / "summary.csv").read_bytes() == (run_out / "summary.csv").read_bytes()
    curves = [pd.read_parquet(f / "curves.parquet") for f in (run_out, out)]
    pd.testing.assert_frame_equal(*curves)
    ran, backfilled = ({c["model"]: c for c in json.load(open(f / "manifest.json"))["counts"]}
                       for f in (run_out, out))
    for model in ("m", "majority"):
        assert {k: backfilled[model][k] for k in ran[model]} == ran[model]
    assert (ran["m"]["model_errors"], ran["m"]["refused_labels"]) == (2, 2)
    # Its dead letters say why, for model m, with file and row: instance 7 (predict_one at
    # arrival), 12 (learn_one at its label) and 7's label.
    dead = [json.loads(line) for line in open(out / "dead_letters.jsonl")]
    assert sorted((d["model"], d["row"], d["reason"].split(": ")[-1]) for d in dead) == [
        ("m", 8, "label of instance 7, dead-lettered because the model failed on it"),
        ("m", 8, "the run that wrote the prediction log set this instance aside (the model "
                 "failed on it)"),
        ("m", 13, "the run that wrote the prediction log set this instance aside at its label "
                  "(the model failed on it)")]
    assert "set aside" not in capsys.readouterr().out
    assert json.load(open(out / "manifest.json"))["set_aside_by_the_logs_run"] == {}


def test_a_log_that_records_only_how_many_instances_its_run_set_aside_says_so(tmp_path,
                                                                              capsys):
    """A log whose metadata records how many instances a model failed on, not which: the
    backfill cannot set them aside, and says so in one line per model, in its manifest and
    its report."""
    import pyarrow.parquet as pq

    from transforms.backfill.logs import SET_ASIDE_KEY

    rows, run_out = _model_rows(tmp_path), tmp_path / "run"
    argv = ["--stream", "s=" + rows, "--delay", "3", "--runner", "direct", "--repredict",
            "none"]
    assert main(["run", *argv, "--model", "m=tests.helpers.FailsOn", "--model", "majority",
                 "--on-model-error", "dead-letter", "--out", str(run_out), "--quiet"]) == 0
    log = pq.read_table(run_out / "predictions.parquet")
    recorded = json.loads(log.schema.metadata[SET_ASIDE_KEY])
    assert {m: len(events) for m, events in recorded["s"].items()} == {"m": 2}
    pq.write_table(log.replace_schema_metadata({**log.schema.metadata,
                                                SET_ASIDE_KEY: b'{"s": {"m": 2}}'}),
                   tmp_path / "counted.parquet")
    out = tmp_path / "backfill"
    assert main(["backfill", *argv, "--predictions", str(tmp_path / "counted.parquet"),
                 "--out", str(out), "--report"]) == 0
    line = ("s / m: the run that wrote the prediction log set aside 2 instances m failed on "
            "(--on-model-error dead-letter) that the backfill cannot set aside again (the log "
            "does not record which, or the stream read here is not the run's): it scores what m "
            "predicted before it failed, so its numbers differ from the run's (docs/backfill.md)")
    assert line in capsys.readouterr().out.splitlines()
    assert json.load(open(out / "manifest.json"))["set_aside_by_the_logs_run"] == {"s": {"m": 2}}
    assert html.escape(line) in (out / "report.html").read_text(encoding="utf-8")
    # A record that cannot be read stops the backfill, naming the file, rather than scoring
    # what m predicted before it failed.
    for record, why in ((b'{"s": {"m": [[3, "instance"]]}}',
                         "s / m is not a count or a list of [seq, kind, id, time]"),
                        (b'{"s": 2', "not JSON")):
        pq.write_table(log.replace_schema_metadata({**log.schema.metadata,
                                                    SET_ASIDE_KEY: record}),
                       tmp_path / "broken.parquet")
        assert main(["backfill", *argv, "--predictions", str(tmp_path / "broken.parquet"),
                     "--out", str(tmp_path / "broken")]) == 2
        error = capsys.readouterr().err
        assert error.startswith(f"delayed-eval: error: {tmp_path / 'broken.parquet'}: the "
                                f"record of the instances its run set aside (Parquet metadata "
                                f"delayed-eval.set-aside) cannot be read: {why}")
        assert error.count("\n") == 1 and "Traceback" not in error
    # A log that records which, backfilled with another stream (a row more at its start: every
    # event's place moved), cannot either, and says so.
    moved = tmp_path / "moved.csv"
    text = open(rows).read().splitlines()
    moved.write_text("\n".join([text[0], "-1,0,0,a", *text[1:]]) + "\n")
    assert main(["backfill", *argv[2:], "--stream", f"s={moved}", "--predictions",
                 str(run_out / "predictions.parquet"), "--out", str(out)]) == 0
    assert line in capsys.readouterr().out.splitlines()
    assert json.load(open(out / "manifest.json"))["set_aside_by_the_logs_run"] == {"s": {"m": 2}}
    # Of a run where no model failed, nothing is recorded or said.
    assert main(["run", *argv, "--model", "majority", "--on-model-error", "dead-letter",
                 "--out", str(run_out), "--quiet"]) == 0
    assert SET_ASIDE_KEY not in pq.read_schema(run_out / "predictions.parquet").metadata
    assert main(["backfill", *argv, "--predictions", str(run_out / "predictions.parquet"),
                 "--out", str(out)]) == 0
    assert "set aside" not in capsys.readouterr().out
    assert json.load(open(out / "manifest.json"))["set_aside_by_the_logs_run"] == {}


def test_a_log_of_several_runs_that_set_instances_aside_says_so(tmp_path, capsys):
    """A log of two nightly runs (a file each) that each set two instances aside: the places
    each recorded are in its own night's stream, so the backfill of both nights cannot set
    them aside again, and says so, with the four of them; before, it read the first file's
    record alone."""
    nights = []
    for night, start in (("2026-11-01", 0), ("2026-11-02", 100)):
        path = tmp_path / f"{night}.csv"
        pd.DataFrame({"id": [f"{night}/{i}" for i in range(30)], "time": range(start, start + 30),
                      "f": [i % 5 for i in range(30)],
                      "bad": [1 if i == 7 else 2 if i == 12 else 0 for i in range(30)],
                      "label": ["ab"[i % 2] for i in range(30)]}).to_csv(path, index=False)
        nights.append(pd.read_csv(path))
        out = tmp_path / "log" / f"date={night}"
        assert main(["run", "--stream", f"s={path}", "--delay", "3", "--runner", "direct",
                     "--repredict", "none", "--model", "m=tests.helpers.FailsOn",
                     "--on-model-error", "dead-letter", "--out", str(out), "--quiet"]) == 0
        for name in os.listdir(out):
            if name != "predictions.parquet":
                os.remove(out / name)
    both = tmp_path / "both.csv"
    pd.concat(nights).to_csv(both, index=False)
    out = tmp_path / "backfill"
    assert main(["backfill", "--stream", f"s={both}", "--delay", "3", "--runner", "direct",
                 "--predictions", str(tmp_path / "log"), "--out", str(out)]) == 0
    assert ("s / m: the run that wrote the prediction log set aside 4 instances m failed on "
            "(--on-model-error dead-letter) that the backfill cannot set aside again") \
        in capsys.readouterr().out
    assert json.load(open(out / "manifest.json"))["set_aside_by_the_logs_run"] == {"s": {"m": 4}}


def test_a_prediction_that_is_not_one_value_is_one_line(tmp_path, capsys):
    code = main(["run", "--stream", "s=" + _model_rows(tmp_path), "--model",
                 "m=tests.helpers.PredictsADict", "--delay", "3", "--out",
                 str(tmp_path / "out"), "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "instance 3: predict_one returned {" in err and "not a single class" in err


def test_ctrl_c_exits_130_and_leaves_the_previous_results(tmp_path, capsys):
    rows, out = _model_rows(tmp_path), tmp_path / "out"
    args = ["run", "--stream", "s=" + rows, "--delay", "3", "--out", str(out), "--runner",
            "direct", "--quiet"]
    assert main([*args, "--model", "m=gaussian-nb"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    code = main([*args, "--model", 'm=tests.helpers.FailsOn{"interrupt": true}'])
    err = without_notices(capsys.readouterr().err)
    assert code == 130
    assert err == f"delayed-eval: interrupted; the previous results in {out} are untouched\n"
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_sigterm_ends_the_command_as_ctrl_c_does(tmp_path):
    """A scheduler stopping the task (Airflow's timeout, `kill`) sends SIGTERM: the command
    died at once, without a word, leaving its staging folder in --out. It now ends as Ctrl-C
    does: the staging folder removed, the previous results untouched, one line, exit 143."""
    import signal
    import time

    out = tmp_path / "out"
    command = [sys.executable, "-c", "from pipelines.command import console_main; "
               "console_main()", "run", "--model", "hoeffding-tree", "--delay", "100",
               "--out", str(out), "--runner", "direct", "--progress-every", "0.5"]
    subprocess.run([*command, "--stream", 'synth:SEA{"n": 500}', "--quiet"], check=True,
                   cwd=os.getcwd())
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    long = subprocess.Popen([*command, "--stream", 'synth:SEA{"n": 3000000}'], text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert long.stderr.readline().startswith("progress: ")  # replaying
    assert any(p.name.startswith(".staging-") for p in out.iterdir())
    long.send_signal(signal.SIGTERM)
    started = time.monotonic()
    err = long.communicate(timeout=60)[1]
    assert long.returncode == 143 and time.monotonic() - started < 30
    assert err.splitlines()[-1] == (f"delayed-eval: terminated (SIGTERM); the previous results "
                                    f"in {out} are untouched")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # (no staging folder)


def test_a_sigterm_that_lands_in_a_finalizer_still_ends_the_command(tmp_path):
    """The handler raises where the main thread is. Inside a finalizer (an object's __del__,
    a generator closed as it is freed) Python prints that exception and drops it, and the run
    went on to its end (a killed run's test timed out once in CI). Here a model's object
    sends the signal from its own __del__: the command ends as for any SIGTERM."""
    (tmp_path / "trapmodels.py").write_text(
        "import os, signal\nfrom river import naive_bayes\n\n\nclass Trap:\n"
        "    def __del__(self):\n"
        "        os.kill(os.getpid(), signal.SIGTERM)  # (its handler runs in here)\n\n\n"
        "class TrapNB(naive_bayes.GaussianNB):\n"
        "    def learn_one(self, x, y):\n"
        "        super().learn_one(x, y)\n"
        "        self.learned = getattr(self, 'learned', 0) + 1\n"
        "        if self.learned == 100:\n"
        "            Trap()  # freed at once\n")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", "from pipelines.command import console_main; "
                           "console_main()", "run", "--model", "trapmodels.TrapNB", "--delay",
                           "10", "--stream", 'synth:SEA{"n": 20000}', "--repredict", "none",
                           "--out", str(out), "--runner", "direct", "--quiet"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 143, done.stderr
    assert done.stderr.splitlines() == [f"delayed-eval: terminated (SIGTERM); the previous "
                                        f"results in {out} are untouched"]
    assert not out.exists() or not list(out.iterdir())


def test_a_staging_folder_a_killed_run_left_is_removed_by_the_next_run(tmp_path):
    """SIGKILL (the OOM killer, a scheduler's last resort) leaves no run a way out: its staging
    folder stayed in --out for good, with what it had written (a backfill's spilled log: the
    size of a night's log), one more each time. The next run into that --out on the machine
    now removes it: its process is gone. A staging folder whose run still runs stays."""
    import signal

    out = tmp_path / "out"
    command = [sys.executable, "-c", "from pipelines.command import console_main; "
               "console_main()", "run", "--model", "hoeffding-tree", "--delay", "100",
               "--out", str(out), "--runner", "direct", "--progress-every", "0.5"]
    running = []
    for _ in range(2):
        process = subprocess.Popen([*command, "--stream", 'synth:SEA{"n": 3000000}'],
                                   text=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert process.stderr.readline().startswith("progress: ")  # replaying
        running.append(process)
    running[0].send_signal(signal.SIGKILL)
    running[0].communicate(timeout=60)
    stagings = sorted(p.name for p in out.iterdir() if p.name.startswith(".staging-"))
    assert len(stagings) == 2
    subprocess.run([*command, "--stream", 'synth:SEA{"n": 300}', "--quiet"], check=True)
    left = [p.name for p in out.iterdir() if p.name.startswith(".staging-")]
    running[1].send_signal(signal.SIGTERM)
    running[1].communicate(timeout=60)
    assert len(left) == 1 and left[0] in stagings  # the killed run's went, the running one's not
    assert not [p for p in out.iterdir() if p.name.startswith(".staging-")]
    assert (out / "summary.csv").exists()


def test_an_internal_error_is_one_line_unless_debug(tmp_path, capsys, monkeypatch):
    import pipelines.job

    def broken(config):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(pipelines.job, "run", broken)
    args = ["run", "--stream", "s=" + _model_rows(tmp_path), "--model", "majority", "--out",
            str(tmp_path / "out")]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err == ("delayed-eval: error: internal error: ZeroDivisionError: a bug; rerun with "
                   "--debug for the traceback, and please report it\n")
    with pytest.raises(ZeroDivisionError):
        main([*args, "--debug"])


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith("delayed-eval ")


# -- users' files --------------------------------------------------------------------------------
def _write(tmp_path, name, text, mode="w"):
    path = tmp_path / name
    path.write_bytes(text) if mode == "wb" else path.write_text(text)
    return str(path)


def test_lines_with_extra_fields_and_empty_rows_are_dead_letters_the_rest_is_read(tmp_path):
    path = _write(tmp_path, "rows.csv", "time,f,g,label\n0,1.0,2.0,a\n1,1.5,2.5,b,EXTRA\n"
                                        "2,,,a\n3,2.0,1.0,b\n4,1.0,2.0,a,x,y\n5,3.0,0.5,b\n")
    events, dead = read(path, delay="1")
    assert sorted((d["row"], d["field"], d["reason"]) for d in dead) == [
        (2, None, "expected 4 fields, saw 5 (more fields than the header)"),
        (3, None, "every feature is empty"),
        (5, None, "expected 4 fields, saw 6 (more fields than the header)")]
    instances = [e for e in events if e[3] == "instance"]
    assert [e[5] for e in instances] == [{"f": 1.0, "g": 2.0}, {"f": 2.0, "g": 1.0},
                                         {"f": 3.0, "g": 0.5}]


RECORDS = {  # file, its text, stream options: each dead letter's row and what was read
    "event log": ("log.csv", "kind,id,time,f,label\ninstance,a,0,1.0,\ninstance,b,1,,\n"
                  "instance,c,soon,2.0,\nlabel,c,4,,y\nboom,e,7,1.0,\nlabel,a,8,,x\n"
                  "label,a,9,,z\ninstance,a,9,1.0,\n", "", [
                      (2, {"kind": "instance", "id": "b", "time": "1", "f": None, "label": None}),
                      (3, {"kind": "instance", "id": "c", "time": "soon", "f": 2.0,
                           "label": None}),
                      (4, {"time": "4", "kind": "label", "id": "c", "label": "y"}),
                      (5, {"time": "7", "kind": "boom", "id": "e", "features": {"f": 1.0}}),
                      (7, {"time": "9", "kind": "label", "id": "a", "label": "z"}),
                      (8, {"time": "9", "kind": "instance", "id": "a",
                           "features": {"f": 1.0}})]),
    "labelled rows": ("rows.csv", "id,time,f,label,done\na,0,1.0,x,5\nb,1,2.0,y,soon\n"
                      "d,3,4.0,y,2\nd,4,5.0,x,6\n", '{"label_time": "done"}', [
                          (2, {"id": "b", "time": 1, "f": 2.0, "label": "y", "done": "soon"}),
                          (3, {"time": "3", "id": "d", "features": {"f": 4.0}, "label": "y",
                               "label time": "2"}),
                          (4, {"time": "4", "id": "d", "features": {"f": 5.0}, "label": "x",
                               "label time": "6"})]),
    "lines": ("lines.csv", "time,f,label\n0,1.0,a\n1,1.5,b,EXTRA\n2,3\n3,,a\n", "", [
        (2, "1,1.5,b,EXTRA"), (3, "2,3"), (4, {"time": 3, "f": None, "label": "a"})]),
    "a delay column": ("d.csv", "time,f,label,wait\n0,1.0,a,2\n1,2.0,b,x\n",
                       '{"delay": "column:wait"}', [
                           (2, {"time": "1", "id": 1, "features": {"f": 2.0}, "label": "b",
                                "wait": "x"})]),
    "JSON Lines": ("j.jsonl", '{"time": 0, "f": 1.0, "label": "a"}\n[1, 2]\n'
                   '{"time": 1, "f": null, "label": "b"}\n', "", [
                       (2, "[1, 2]"), (3, {"time": 1, "f": None, "label": "b"})])}


@pytest.mark.parametrize("shape", RECORDS)
def test_each_dead_letter_shows_its_row_as_it_was_read(tmp_path, shape):
    """A row the reader sets aside shows its columns as read (a cut or overlong line, or a line
    that is not JSON, its text); one set aside once read, its event's fields by name."""
    name, text, options, expected = RECORDS[shape]
    _, dead = read(_write(tmp_path, name, text) + options, delay="1")
    assert sorted((d["row"], d["record"]) for d in dead) == expected


def test_dead_letters_jsonl_holds_each_record_as_json_a_wide_row_cut_short(tmp_path):
    """pandas reads the file's records as objects (a missing cell null), and a row of 3 000
    columns keeps its first columns and counts the rest, so the file stays small."""
    names = [f"f{i}" for i in range(3000)]
    rows = [",".join(["time", *names, "label"])]
    rows += [",".join([str(t), *("1.5" for _ in names), "ab"[t % 2]]) for t in range(30)]
    rows[5] = rows[5].replace(",1.5,", ",,", 1)  # t = 4: f0 missing
    (tmp_path / "wide.csv").write_text("\n".join(rows) + "\n")
    out = tmp_path / "out"
    assert main(["run", "--stream", str(tmp_path / "wide.csv"), "--model", "majority",
                 "--delay", "2", "--out", str(out), "--runner", "direct", "--quiet"]) == 0
    dead = pd.read_json(out / "dead_letters.jsonl", lines=True)
    record = dead["record"].item()
    shown = [k for k in record if k != "…"]
    assert shown == ["time", *names[:len(shown) - 1]] and 10 < len(shown) < 100
    assert record["time"] == 4 and record["f0"] is None and record["f1"] == 1.5
    assert record["…"] == f"{3002 - len(shown)} more"
    assert len(json.dumps(record)) < 700


def test_a_dead_letters_row_counts_records_as_the_outputs_doc_says(tmp_path):
    """`row` counts from 1: a CSV file's records after its header (a blank line is none, a
    quoted value may span lines), a JSON Lines or ARFF file's lines, a Parquet file's rows, and
    a DataFrame's rows in order, whatever its index. Each file has one bad row: its expected
    number is counted here from the text (the records) as written."""
    from transforms.streams.python_rows import written_streams

    records = [("0", "0.1", '"two\nlines"'), ("1", "0.2", "a"), ("2", "inf", "b"),
               ("3", "0.3", "a")]
    csv_text = "time,x,label\n" + "\n".join(",".join(r) for r in records[:2]) + "\n\n" + \
        "\n".join(",".join(r) for r in records[2:]) + "\n"
    jsonl_lines = ['{"time": 0, "x": 0.1, "label": "a"}', "", '{"time": 1, "x": 0.2, "label": "b"}',
                   '{"time": 2, "x": "inf", "label": "a"}', '{"time": 3, "x": 0.3, "label": "b"}']
    arff_lines = ["@relation r", "@attribute x numeric", "@attribute label {a,b}", "", "@data",
                  "0.1,a", "0.2,b", "0.3,c", "0.4,a"]
    frame = pd.DataFrame({"time": [0, 1, 2, 3], "x": [0.1, 0.2, 0.3, np.inf],
                          "label": ["a", "b", "a", "b"]}, index=[70, 50, 60, 40])
    frame.to_parquet(tmp_path / "s.parquet")
    expected = {
        _write(tmp_path, "s.csv", csv_text): 1 + [r[1] for r in records].index("inf"),
        _write(tmp_path, "s.jsonl", "\n".join(jsonl_lines) + "\n"):
            1 + next(i for i, line in enumerate(jsonl_lines) if '"inf"' in line),
        _write(tmp_path, "s.arff", "\n".join(arff_lines) + "\n"): 1 + arff_lines.index("0.3,c"),
        str(tmp_path / "s.parquet"): 4,
        written_streams(frame, str(tmp_path / "inputs")).split("=", 1)[1]: 4,
    }
    for spec, row in expected.items():
        _, dead = read(spec, delay="1")
        assert [d["row"] for d in dead] == [row], spec


def test_a_delay_column_with_a_few_bad_values_dead_letters_only_those_rows(tmp_path):
    path = _write(tmp_path, "d.csv", "time,f,label,wait\n0,1.0,a,2\n1,2.0,b,x\n2,3.0,a,3\n"
                                     "3,1.0,b,-1\n4,2.0,a,\n5,3.0,b,1\n")
    events, dead = read(path + '{"delay": "column:wait"}')
    assert [(d["row"], d["field"], d["reason"]) for d in dead] == [
        (2, "wait", "delay 'x' is neither a non-negative number nor a duration (5min, PT5M, "
                    "00:05:00)"),
        (4, "wait", "delay '-1' is not a non-negative number"), (5, "wait", "delay is empty")]
    # Rows 1, 3 and 6 keep their labels, at 0 + 2, 2 + 3 and 5 + 1.
    assert sorted((e[4], e[0]) for e in events if e[3] == "label") == [(0, 2.0), (2, 5.0),
                                                                       (5, 6.0)]


def test_non_utf8_text_names_the_line_and_the_encoding_option_reads_it(tmp_path):
    path = _write(tmp_path, "latin.csv", "time,city,f,label\n0,Paris,1.0,a\n1,Z\xfcrich,2.0,b\n"
                                         .encode("latin-1"), mode="wb")
    with pytest.raises(InputError, match=r"latin\.csv, line 3: not utf-8 text .*"
                                         r'\{"encoding": "latin-1"\}'):
        read(path, delay="1")
    events, dead = read(path + '{"encoding": "latin-1"}', delay="1")
    assert dead == [] and [e[5]["city"] for e in events if e[3] == "instance"] == \
        ["Paris", "Z\xfcrich"]


def test_an_arff_file_in_another_encoding_is_named_so_and_read_with_the_option(tmp_path):
    """Weka's older ARFF files are often Latin-1: the same line and option as a table gets."""
    path = _write(tmp_path, "latin.arff", "@relation r\n@attribute city {Paris,Z\xfcrich}\n"
                  "@attribute f numeric\n@attribute class {a,b}\n@data\nParis,1.0,a\n"
                  "Z\xfcrich,2.0,b\n".encode("latin-1"), mode="wb")
    with pytest.raises(InputError, match=r"latin\.arff, line 2: not utf-8 text .*"
                                         r'\{"encoding": "latin-1"\}'):
        StreamSpec.parse(path).check()
    spec = path + '{"encoding": "latin-1"}'
    StreamSpec.parse(spec).check()
    assert StreamSpec.parse(spec).declared_classes() == ["a", "b"]
    events, dead = read(spec, delay="1")
    assert dead == [] and [e[5]["city"] for e in events if e[3] == "instance"] == \
        ["Paris", "Z\xfcrich"]


@pytest.mark.parametrize("name, text", [
    ("s.csv", "time,f,c,label\n0,1.5,u,a\n1,2.5,v,b\n2,0.5,u,a\n"),
    ("s.jsonl", '{"time": 0, "f": 1.5, "c": "u", "label": "a"}\n{"time": 1, "f": 2.5, "c": "v", '
                '"label": "b"}\n{"time": 2, "f": 0.5, "c": "u", "label": "a"}\n'),
    ("s.arff", "@relation s\n@attribute f numeric\n@attribute c {u,v}\n@attribute label {a,b}"
               "\n@data\n1.5,u,a\n2.5,v,b\n0.5,u,a\n")])
def test_a_byte_order_mark_and_windows_line_ends_read_as_the_plain_file(tmp_path, name, text):
    """Windows tools write both; a JSON Lines file's first line was a dead letter ("not
    JSON") and an ARFF file's @relation an "unexpected header line"."""
    plain = read(_write(tmp_path, name, text.encode(), mode="wb"), delay="1")
    assert plain[1] == [] and len(plain[0]) == 6
    (tmp_path / "bom").mkdir()
    (tmp_path / "crlf").mkdir()
    bom = _write(tmp_path / "bom", name, b"\xef\xbb\xbf" + text.encode(), mode="wb")
    crlf = _write(tmp_path / "crlf", name, text.replace("\n", "\r\n").encode(), mode="wb")

    def strip(events):  # (all but the read sequence numbers)
        return [e[:2] + e[3:] for e in events]

    for path in (bom, crlf):
        StreamSpec.parse(path).check()
        events, dead = read(path, delay="1")
        assert dead == [] and strip(events) == strip(plain[0]), path


@pytest.mark.parametrize("options, told", [
    ({"label_time": -1}, 'option label_time must be a text, not -1; e.g. {"label_time": '),
    ({"time": ["t", "u"]}, "option time must be a text, not ['t', 'u']"),
    ({"sep": [";"]}, "option sep must be one character, not [';']"),
    ({"decimal": None}, "option decimal must be one character, not None"),
    ({"classes": 0}, "option classes must be a list of classes, not 0"),
    ({"format": {"a": 1}}, "option format must be a text, not {'a': 1}"),
    ({"encoding": "ms"}, "unknown encoding 'ms'; give one Python knows with the stream option")])
def test_a_stream_option_of_the_wrong_kind_is_one_line(tmp_path, capsys, options, told):
    """Found by fuzzing the options: each was an internal error (TypeError, AttributeError,
    LookupError) somewhere in the reading."""
    path = _write(tmp_path, "s.csv", "time,f,label\n0,1.0,a\n1,2.0,b\n2,1.5,a\n")
    code = main(["run", "--stream", f"s={path}{json.dumps(options)}", "--model", "majority",
                 "--delay", "1", "--out", str(tmp_path / "out"), "--runner", "direct",
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"delayed-eval: error: stream s: {told}"), err


def test_a_json_lines_file_without_one_json_object_says_why_not_that_it_is_empty(tmp_path):
    path = _write(tmp_path, "pipes.jsonl", '{"time": 0|"x": 1.5|"label": "a"}\n' * 3)
    with pytest.raises(InputError, match=r"pipes\.jsonl: no line is a JSON object \(line 1: "
                                         r"not JSON: .*\); write one object per line"):
        StreamSpec.parse(path).check()


@pytest.mark.parametrize("row", [1, 5000])  # in the rows the checks read first, or after
def test_non_utf8_text_is_named_before_the_run_wherever_it_is(tmp_path, row):
    lines = [f"{i},{i % 7}.5,{'a' if i % 2 else 'b'}" for i in range(6000)]
    lines[row - 1] = lines[row - 1][:-1] + "\xe9"
    path = _write(tmp_path, "late.csv", ("time,f,label\n" + "\n".join(lines) + "\n")
                  .encode("latin-1"), mode="wb")
    with pytest.raises(DelayedEvalError, match=rf"late\.csv, line {row + 1}: not utf-8 text .*"
                                         r'\{"encoding": "latin-1"\}'):
        plan(RunConfig(streams=[path], models=["majority"], out=str(tmp_path / "out")))


def test_another_delimiter_is_named_and_the_sep_option_reads_it(tmp_path):
    path = _write(tmp_path, "semi.csv", "time;f;label\n0;1.0;a\n1;2.0;b\n")
    with pytest.raises(InputError, match=r'seems separated by \';\'; give the stream option '
                                         r'\{"sep": ";"\}'):
        StreamSpec.parse(path).check()
    spec = path + '{"sep": ";"}'
    StreamSpec.parse(spec).check()
    events, dead = read(spec, delay="1")
    assert dead == [] and [e[6] for e in events if e[3] == "label"] == ["a", "b"]
    # A sep the file is not separated by: the one it seems to be.
    commas = _write(tmp_path, "commas.csv", "time,f,label\n0,1.0,a\n1,2.0,b\n")
    with pytest.raises(InputError, match=r"one column, 'time,f,label': the file seems separated "
                                         r"by ',', not by ';'; give the stream option "
                                         r'\{"sep": ","\}'):
        StreamSpec.parse(commas + '{"sep": ";"}').check()
    # Excel's 'sep=;' line before the header (read as the header: one column 'sep=;', or,
    # with the separator it declares, 'sep=' and a blank), in a stream or a prediction log.
    excel = _write(tmp_path, "excel.csv", "sep=;\ntime;f;label\n0;1.0;a\n1;2.0;b\n")
    told = "excel.csv: its first line, 'sep=;', is the separator line Excel writes before " \
        "the header; delete that line and give {} {{\"sep\": \";\"}}"
    for spec in (excel, excel + '{"sep": ";"}'):
        with pytest.raises(InputError, match=re.escape(told.format("the stream option"))):
            StreamSpec.parse(spec).check()
    from transforms.backfill.logs import PredictionLogSpec

    with pytest.raises(InputError, match=re.escape(told.format("the option"))):
        PredictionLogSpec.parse(excel)._checked_header(excel)


def test_numbers_with_decimal_commas_are_named_and_the_decimal_option_reads_them(tmp_path):
    text = "time;f;label;wait\n0;1,5;a;2,5\n1;1.234,25;b;0,5\n2;-0,75;a;1\n"
    path = _write(tmp_path, "comma.csv", text)
    with pytest.raises(InputError, match=r"comma\.csv: column 'f' holds numbers written with a "
                                         r"decimal comma \('1,5'\), which would be read as "
                                         r'text; give the stream option \{"decimal": ",", '
                                         r'"thousands": "."\}'):
        StreamSpec.parse(path + '{"sep": ";"}').check()
    # A delay column too, when the features are named.
    with pytest.raises(InputError, match=r"column 'wait' holds numbers written with a decimal"):
        StreamSpec.parse(path + '{"sep": ";", "features": [], "delay": "column:wait"}').check()
    # A label (it would be read as classes), and before the check for id-like text columns:
    # 20 rows of distinct decimal-comma numbers are neither an id nor classes.
    rows = "".join(f"{i};{i},{i + 1};{i},25\n" for i in range(20))
    many = _write(tmp_path, "many.csv", "time;f;price\n" + rows)
    for options, column in (('{"label": "price"}', "f"), ('{"label": "price", "features": []}',
                                                          "price")):
        with pytest.raises(InputError, match=rf"many\.csv: column '{column}' holds numbers "
                                             rf"written with a decimal comma"):
            StreamSpec.parse(many + options[:-1] + ', "sep": ";"}').check()
    spec = path + '{"sep": ";", "decimal": ",", "thousands": ".", "delay": "column:wait"}'
    StreamSpec.parse(spec).check()
    events, dead = read(spec)
    assert dead == [] and [e[5]["f"] for e in events if e[3] == "instance"] == \
        [1.5, 1234.25, -0.75]
    assert sorted(e[0] for e in events if e[3] == "label") == [1.5, 2.5, 3.0]


@pytest.mark.parametrize("written, marks, numbers", [
    (['"1,234.50"', '"12,000"', "999.10"], {"thousands": ","}, [1234.5, 12000.0, 999.1]),
    (['"1 234,50"', '"12 000"', '"999,10"'], {"thousands": " ", "decimal": ","},
     [1234.5, 12000.0, 999.1]),
    (["1'234.50", "-12'000", "3.25"], {"thousands": "'"}, [1234.5, -12000.0, 3.25]),
    # A no-break space (French and Nordic exports), which pandas' C reader cannot take.
    (['"1\u00a0234,50"', '"12\u00a0000"', '"999,10"'], {"thousands": "\u00a0", "decimal": ","},
     [1234.5, 12000.0, 999.1]),
    (["1\u202f234.50", "-12\u202f000", "3.25"], {"thousands": "\u202f"},
     [1234.5, -12000.0, 3.25])])
def test_numbers_with_thousands_separators_are_named_and_the_option_reads_them(
        tmp_path, written, marks, numbers):
    """An amount exported as 1,234.50 (or 1 234,50, 1'234.50) is text to pandas: a model
    would fail on it ("hold text ... one-hot"), or take it for a class. One line names the
    options that read it; with them, the numbers as written."""
    path = _write(tmp_path, "amounts.csv", "time,amount,label\n" + "".join(
        f"{i},{w},{'ab'[i % 2]}\n" for i, w in enumerate(written)))
    with pytest.raises(InputError, match=re.escape(
            f"amounts.csv: column 'amount' holds numbers written with thousands separators "
            f"({written[0].strip(chr(34))!r}), which would be read as text; give the stream "
            f"option {json.dumps(marks)}")):
        StreamSpec.parse(path).check()
    spec = path + json.dumps(marks)
    StreamSpec.parse(spec).check()
    events, dead = read(spec, delay="1")
    assert dead == [] and [e[5]["amount"] for e in events if e[3] == "instance"] == numbers


def test_the_terminal_says_what_was_set_aside_and_what_still_waits(tmp_path, capsys):
    """Labels timed before their instances (a clock off by seconds) are dead letters, and
    their instances wait to the end: no score shows either, so the terminal says both."""
    inst = _write(tmp_path, "inst.csv", "id,time,x\n1,10,1.0\n2,20,2.0\n3,30,0.5\n4,40,1.5\n")
    lab = _write(tmp_path, "lab.csv", "id,time,label\n1,15,a\n2,18,b\n3,25,a\n4,41,b\n")
    out = tmp_path / "out"
    assert main(["run", "--stream", f'{inst}{{"labels": "{lab}"}}', "--model", "majority",
                 "--out", str(out), "--runner", "direct"]) == 0
    assert f"inst: 2 dead letters in {out}/dead_letters.jsonl, the first {lab}, row 2, field " \
        f"time: label at 18 is earlier than its instance at 20; 2 of 4 instances still wait " \
        f"for their label at the end of the input (not scored)\n" in capsys.readouterr().out


def test_a_stream_whose_every_label_is_a_dead_letter_says_why(tmp_path):
    path = _write(tmp_path, "soon.csv", "time,f,label,wait\n0,1.0,a,soon\n1,2.0,b,later\n")
    with pytest.raises(InputError, match=r"stream s: no label among 2 instances; 2 dead "
                                         r"letters; the first: .*soon\.csv, row 1, field wait: "
                                         r"delay 'soon' is neither a non-negative number "
                                         r"nor a duration"):
        run(RunConfig(streams=[f"s={path}"], models=["majority"], delay="column:wait",
                      out=str(tmp_path / "out"), runner="direct", quiet=True))


def test_an_empty_text_label_is_a_missing_label_not_a_class(tmp_path):
    # Parquet and JSON keep "" as text where a CSV reader sees an empty cell: in an event log
    # the label row has no label (a dead letter), in a table of labelled rows the instance has
    # none (it waits). A class named "" would be learned, predicted and logged as "", which the
    # backfill of that log reads as no prediction.
    log = tmp_path / "events.parquet"
    pd.DataFrame({"id": ["a", "a", "b", "b"], "time": [0.0, 1.0, 2.0, 3.0],
                  "kind": ["instance", "label", "instance", "label"],
                  "f": [1.0, None, 2.0, None], "label": ["", " ", "", "x"]}).to_parquet(log)
    events, dead = read(str(log))
    assert [(e[3], e[4], e[6]) for e in events] == [
        ("instance", "a", None), ("instance", "b", None), ("label", "b", "x")]
    assert [(d["row"], d["field"], d["reason"]) for d in dead] == [
        (2, "label", "label row without a label")]
    table = tmp_path / "rows.parquet"
    pd.DataFrame({"time": [0.0, 1.0, 2.0], "f": [1.0, 2.0, 3.0],
                  "label": ["x", "", "y"]}).to_parquet(table)
    events, dead = read(str(table), delay="1")
    assert [(e[3], e[4], e[6]) for e in events if e[3] == "label"] == [
        ("label", 0, "x"), ("label", 2, "y")] and dead == []


def test_an_event_log_without_its_label_column_is_refused_with_a_hint(tmp_path):
    """Its label rows would all be dead letters ('label row without a label') and the column
    holding the labels a feature of the instances, missing on every instance row."""
    log = _write(tmp_path, "log.csv", "id,time,kind,f,target\na,0,instance,1.0,\n"
                                      "b,1,instance,2.0,\na,2,label,,x\nb,3,label,,y\n")
    with pytest.raises(InputError, match=re.escape(
            "log.csv: column 'label' (option 'label') not found; columns are ['id', 'time', "
            "'kind', 'f', 'target']; name it with the stream option {\"label\": \"target\"}")):
        StreamSpec.parse(log).check()
    StreamSpec.parse(log + '{"label": "target"}').check()
    # A day's partition of instances alone may lack the column another day's has.
    days = tmp_path / "days"
    days.mkdir()
    (days / "d1.jsonl").write_text('{"id": "a", "time": 0, "kind": "instance", "f": 1.0}\n')
    (days / "d2.jsonl").write_text('{"id": "a", "time": 2, "kind": "label", "label": "x"}\n')
    StreamSpec.parse(str(days)).check()
    (days / "d2.jsonl").write_text('{"id": "a", "time": 2, "kind": "label", "y": "x"}\n')
    with pytest.raises(InputError, match=r"days: column 'label' \(option 'label'\) not found; "
                                         r"columns are \['id', 'time', 'kind', 'f', 'y'\]; name "
                                         r'it with the stream option \{"label": "y"\}'):
        StreamSpec.parse(str(days)).check()


def test_an_event_log_whose_kind_column_has_another_name_is_refused_with_a_hint(tmp_path):
    """Read as labelled rows, each label row would be an instance and each instance
    unlabelled."""
    text = "id,time,{},f,label\na,0,Instance,1.0,\na,1,label ,,x\nb,2,update,2.0,\n"
    log = _write(tmp_path, "log.csv", text.format("event"))
    with pytest.raises(InputError, match=re.escape(
            "log.csv: column 'event' holds the kinds of an event log's rows (instance, label), "
            "and the stream's kind column is 'kind'; name it with the stream option "
            '{"kind": "event"}')):
        StreamSpec.parse(log).check()
    StreamSpec.parse(log + '{"kind": "event"}').check()
    # A feature of other words too, or of one kind word alone, is no event log's kinds.
    for words in (("instance", "label", "other"), ("instance", "instance")):
        rows = _write(tmp_path, "rows.csv", "time,status,f,label\n" + "".join(
            f"{t},{word},1.0,x\n" for t, word in enumerate(words)))
        StreamSpec.parse(rows).check()


def test_a_table_without_its_label_column_is_refused_with_a_hint(tmp_path):
    cased = _write(tmp_path, "cased.csv", "time,f,Label\n0,1.0,a\n")
    with pytest.raises(InputError, match=r"column 'label' \(option 'label'\) not found; columns "
                                         r"are \['time', 'f', 'Label'\]; name it with the "
                                         r'stream option \{"label": "Label"\}'):
        StreamSpec.parse(cased).check()
    none = _write(tmp_path, "none.csv", "time,f,g\n0,1.0,2.0\n")
    with pytest.raises(InputError, match=r'name yours with the stream option \{"label": '):
        StreamSpec.parse(none).check()
    # A label column named as labels often are (scikit-learn's y, Kaggle's target).
    for name in ("y", "target", "Class"):
        named = _write(tmp_path, f"{name}.csv", f"time,f,{name}\n0,1.0,a\n")
        with pytest.raises(InputError, match=r'name it with the stream option '
                                             r'\{"label": "' + name + r'"\}'):
            StreamSpec.parse(named).check()
    two = _write(tmp_path, "two.csv", "time,y,target\n0,1.0,a\n")  # which one: not guessed
    with pytest.raises(InputError, match=r'name yours with the stream option \{"label": '):
        StreamSpec.parse(two).check()
    # A typo in the option: the column it most likely meant.
    labels = _write(tmp_path, "labels.csv", "id,labelled_at,label\n0,5.0,a\n")
    with pytest.raises(InputError, match=r"labels\.csv: column 'labeled_at' \(option "
                                         r"'label_time'\).*\{\"label_time\": \"labelled_at\"\}"):
        StreamSpec.parse(_write(tmp_path, "inst.csv", "id,time,f\n0,0,1.0\n") +
                         f'{{"labels": "{labels}", "label_time": "labeled_at"}}').check()
    # A label table without rows: no label has come yet.
    empty = _write(tmp_path, "none_yet.csv", "id,time,label\n")
    with pytest.raises(InputError, match=r"none_yet\.csv: the label table has no rows, so no "
                                         r"instance of stream inst can be scored; evaluate it "
                                         r"once labels have arrived"):
        StreamSpec.parse(str(tmp_path / "inst.csv") + f'{{"labels": "{empty}"}}').check()
    # A label table's time column named as its option (whose default is `time`).
    labels = _write(tmp_path, "labels.csv", "id,label_time,label\n0,5.0,a\n")
    with pytest.raises(InputError, match=r"labels\.csv: column 'time' \(option 'label_time'\)"
                                         r'.*\{"label_time": "label_time"\}'):
        StreamSpec.parse(str(tmp_path / "inst.csv") + f'{{"labels": "{labels}"}}').check()
    # Spaces around a header's names ("id, time, x"): " time" would be a feature, row numbers
    # the times.
    spaced = _write(tmp_path, "spaced.csv", "id, time, f, label\n0,0,1.0,a\n")
    with pytest.raises(InputError, match=r"spaced\.csv: column ' time' has spaces around its "
                                         r"name, so it is not the time column 'time'; name it "
                                         r'with the stream option \{"time": " time"\}'):
        StreamSpec.parse(spaced).check()
    StreamSpec.parse(spaced + '{"id": "id", "time": " time", "label": " label"}').check()


def test_two_columns_with_one_name_are_refused(tmp_path):
    # pandas would read the second `x` as `x.1`, a feature the user never named.
    dup = _write(tmp_path, "dup.csv", "time,x,x,label\n0,1.0,2.0,a\n")
    with pytest.raises(InputError, match=r"dup\.csv: two columns are named 'x'; rename one"):
        StreamSpec.parse(dup).check()
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table([[0], [1.0], [2.0], ["a"]], names=["time", "x", "x", "label"]),
                   tmp_path / "dup.parquet")
    with pytest.raises(InputError, match=r"dup\.parquet: two columns are named 'x'"):
        StreamSpec.parse(str(tmp_path / "dup.parquet")).check()
    # Header cells left empty are pandas' `Unnamed: i`, not one name twice.
    StreamSpec.parse(_write(tmp_path, "blank.csv", "time,,,label\n0,1.0,2.0,a\n")).check()


def test_a_corrupt_parquet_file_is_named(tmp_path):
    good = tmp_path / "good.parquet"
    pd.DataFrame({"time": range(100), "f": 1.0, "label": "a"}).to_parquet(good)
    cut = _write(tmp_path, "cut.parquet", good.read_bytes()[:300], mode="wb")
    with pytest.raises(InputError, match=r"cut\.parquet: not a readable parquet file .*is it "
                                         r"complete\?"):
        StreamSpec.parse(cut).check()


@pytest.mark.parametrize("rows", [100, 70_000])  # in the rows the checks read, or only after
def test_a_parquet_file_corrupt_inside_is_one_line_wherever_it_is(tmp_path, capsys, rows):
    """Its footer whole, its data not: a data page's bytes overwritten, or text that is not
    UTF-8 (which Arrow writes and reads back unchecked, and pandas fails on later)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    labels = pa.array(["a", "b"] * (rows // 2 - 1) + ["a", "b\xff".encode("latin-1")],
                      pa.binary()).view(pa.string())
    table = pa.table({"time": np.arange(rows, dtype=float), "f": np.arange(rows) % 7 * 1.0,
                      "label": labels})
    pq.write_table(table, tmp_path / "text.parquet", compression="none")
    pq.write_table(table.drop_columns("label").append_column(
        "label", pa.array(["a", "b"] * (rows // 2))), tmp_path / "pages.parquet",
        compression="snappy")
    data = bytearray((tmp_path / "pages.parquet").read_bytes())
    data[len(data) // 3:len(data) // 3 + 64] = b"\xff" * 64  # in a column's compressed pages
    (tmp_path / "pages.parquet").write_bytes(bytes(data))
    for name in ("text", "pages"):
        code = main(["run", "--stream", str(tmp_path / f"{name}.parquet"), "--model", "majority",
                     "--delay", "3", "--out", str(tmp_path / name), "--runner", "direct",
                     "--quiet"])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith(f"delayed-eval: error: {tmp_path / name}.parquet") \
            and err.count("\n") == 1, err


# -- a run that evaluates nothing is an error --------------------------------------------------
def test_a_run_that_evaluates_nothing_is_an_error_and_publishes_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    # Every label empty: instances, but no label; the label column is there, but empty.
    unlabelled = _write(tmp_path, "unlabelled.csv", "time,f,label\n0,1.0,\n1,2.0,\n")
    code = main(["run", "--stream", "u=" + unlabelled, "--model", "majority", "--out",
                 str(out), "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err == (
        "delayed-eval: error: stream u: no label among 2 instances: its label column 'label' "
        "is empty in every row; fill it in, or name the column that holds the labels "
        '({"label": ...}) in the stream options\n')
    # No label column at all: the columns there are named.
    nameless = _write(tmp_path, "nameless.csv", "time,f,target\n0,1.0,a\n1,2.0,b\n")
    code = main(["run", "--stream", "n=" + nameless + '{"label_time": "time"}', "--model",
                 "majority", "--out", str(out), "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "columns are ['time', 'f', 'target']" in err, err
    assert not out.exists() or not any(out.iterdir())
    # Every row a dead letter: no instance, and the first dead letter says why.
    dead = _write(tmp_path, "dead.csv", "time,f,label\nx,1.0,a\ny,2.0,b\n")
    code = main(["run", "--stream", "d=" + dead, "--model", "majority", "--out", str(out),
                 "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "stream d: no instance to evaluate: 2 rows were dead letters; the " \
        "first: " in err and "row 1, field time: time 'x' is neither a number" in err
    # Labels whose ids never meet an instance.
    inst = _write(tmp_path, "inst.csv", "id,time,f\na,0,1.0\nb,1,2.0\n")
    labels = _write(tmp_path, "labels.csv", "id,time,label\nA,5,x\nB,6,y\n")
    code = main(["run", "--stream", f'l={inst}{{"labels": "{labels}"}}', "--model",
                 "majority", "--out", str(out), "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "stream l: none of its 2 labels met a pending instance (2 " \
        "instances); check that instances and labels share ids" in err
    # A delay as long as the stream: the first label comes after the last instance, so no
    # classifier had learned anything when an instance arrived (only final scores).
    code = main(["run", "--stream", 's=synth:SEA{"n": 30}', "--model", "majority", "--model",
                 "gaussian-nb", "--delay", "30", "--out", str(out), "--runner", "direct",
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "stream s: no initial prediction could be scored: every labelled " \
        "instance arrived before any model had learned a label (delay 30: the first label " \
        "comes after the last of the 30 instances evaluated); give a shorter --delay, or a " \
        "longer stream" in err
    # The same when --to leaves 2 instances of 300: the range is what to widen.
    code = main(["run", "--stream", 's=synth:SEA{"n": 300}', "--model", "majority", "--delay",
                 "20", "--to", "1.5", "--out", str(out), "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "the last of the 2 instances evaluated); give a shorter --delay, or " \
        "a wider range than before 1.5 (--from/--to)" in err
    assert main(["run", "--stream", 's=synth:SEA{"n": 30}', "--model", "majority", "--delay",
                 "29", "--out", str(out), "--runner", "direct", "--quiet"]) == 0
    # A duration on a table without times: its rows are one second apart, and it says so.
    untimed = _write(tmp_path, "untimed.csv", "f,label\n" + "1.0,a\n" * 40)
    code = main(["run", "--stream", "u=" + untimed, "--model", "majority", "--delay", "1min",
                 "--out", str(out), "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "(delay 1min: the first label comes after the last of the 40 " \
        "instances evaluated, which arrive one a second: the stream has no event times); give " \
        "a shorter --delay, or a longer stream" in err
    # With no delay at all, a shorter one is no way out: one instance is too short a stream.
    code = main(["run", "--stream", 's=synth:SEA{"n": 1}', "--model", "majority", "--delay",
                 "0", "--out", str(out), "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.endswith("(delay 0: the first label comes after the only "
                                      "instance evaluated); give a longer stream\n")
    # A log whose one label comes before its last instance, which is never labelled: a model
    # had learned when that instance arrived, but no labelled instance arrived after a label.
    log = _write(tmp_path, "log.csv", "id,time,kind,x,label\na,0,instance,1.0,\n"
                 "a,2,label,,u\nb,2,instance,2.0,\n")
    code = main(["run", "--stream", f"g={log}", "--model", "majority", "--out", str(out),
                 "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "stream g: no initial prediction could be scored: every labelled " \
        "instance arrived before any model had learned a label (the label times of the " \
        "input); check the label times" in err


def test_a_date_range_that_holds_no_instance_says_so(tmp_path, capsys):
    """A range outside the stream's times is named as the cause, not unmatched ids."""
    path = _write(tmp_path, "s.csv", "time,f,label\n2026-11-01T00:00:00Z,1.0,a\n"
                  "2026-11-01T00:00:10Z,2.0,b\n2026-11-01T00:00:20Z,1.0,a\n")
    for argv, what in [(["--stream", "s=" + path, "--from", "2027-01-01"],
                        "none of its 3 instances arrives in the range from "
                        "2027-01-01 00:00:00 UTC (--from/--to); check the range against the "
                        "stream's times"),
                       (["--stream", "s=" + path, "--to", "2026-10-31"],
                        "in the range before 2026-11-01 00:00:00 UTC (--from/--to)"),
                       (["--stream", 's=synth:SEA{"n": 30}', "--from", "2026-11-01"],
                        "none of its 30 instances arrives in the range from 2026-11-01 "
                        "00:00:00 UTC (--from/--to); check the range against the stream's "
                        "times; the instances of synth: and dataset: streams arrive one a "
                        "second from 1970-01-01 00:00:00 UTC")]:
        code = main(["run", *argv, "--model", "majority", "--delay", "1", "--out",
                     str(tmp_path / "out"), "--runner", "direct", "--quiet"])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1
        assert err.startswith("delayed-eval: error: stream s: no instance to evaluate: ")
        assert what in err
    # Half the stream in the range: evaluated.
    assert main(["run", "--stream", "s=" + path, "--from", "2026-11-01T00:00:05Z", "--model",
                 "majority", "--delay", "1", "--out", str(tmp_path / "out"), "--runner",
                 "direct", "--quiet"]) == 0


def test_a_backfill_whose_predictions_match_nothing_is_an_error(tmp_path, capsys):
    stream = 'synth:SEA{"n": 50, "seed": 1}'
    log = tmp_path / "log.csv"
    pd.DataFrame({"id": [f"x{i}" for i in range(50)], "t": range(50), "model": "m",
                  "y_pred": True}).to_csv(log, index=False)
    code = main(["backfill", "--stream", stream, "--predictions", str(log), "--delay", "5",
                 "--out", str(tmp_path / "out"), "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert f"prediction log {log}: 0 of 50 predictions of model 'm' matched a labelled " \
        "instance of stream 'sea' (50 naming no instance that had arrived" in err
    assert err.endswith("check that the log's ids are the stream's (compared as text: 007 is "
                        "not 7)\n")


def test_id_and_time_columns_named_as_logs_name_them_are_offered(tmp_path, capsys):
    """A service's logs name their ids and times `request_id`, `scored_at`, `labelled_at`: the
    line offers the one column of each such name, in the option to give."""
    pd.DataFrame({"request_id": ["a", "b"], "created_at": ["2026-11-01T00:00Z"] * 2,
                  "amount": [1.0, 2.0]}).to_csv(tmp_path / "instances.csv", index=False)
    pd.DataFrame({"request_id": ["a", "b"], "labelled_at": ["2026-11-02T00:00Z"] * 2,
                  "label": ["ok", "fraud"]}).to_csv(tmp_path / "labels.csv", index=False)
    pd.DataFrame({"request_id": ["a", "b"], "scored_at": ["2026-11-01T00:01Z"] * 2,
                  "decision": ["ok", "ok"]}).to_csv(tmp_path / "log.csv", index=False)
    labels = f'"labels": "{tmp_path / "labels.csv"}"'
    argv = ["backfill", "--out", str(tmp_path / "out"), "--runner", "direct", "--quiet"]
    said = []
    for stream in ["{" + labels + "}", '{"id": "request_id", "time": "created_at", ' + labels
                   + "}"]:
        assert main([*argv, "--stream", f"s={tmp_path / 'instances.csv'}{stream}",
                     "--predictions", f'{tmp_path / "log.csv"}{{"prediction": "decision"}}'
                     ]) == 2
        said.append(capsys.readouterr().err.split("; ")[-1].strip())
    assert said == ['name it with the stream option {"id": "request_id"}',
                    'name it with the stream option {"label_time": "labelled_at"}']
    log = f'{tmp_path / "log.csv"}{{"prediction": "decision"}}'
    stream = f's={tmp_path / "instances.csv"}{{"id": "request_id", "time": "created_at", ' \
        f'"label_time": "labelled_at", {labels}}}'
    assert main([*argv, "--stream", stream, "--predictions", log]) == 2
    assert capsys.readouterr().err.endswith(
        'name them with the --predictions option {"id": "request_id", "time": "scored_at"}\n')


def test_a_backfill_whose_log_keeps_another_time_zone_says_so(tmp_path, capsys):
    """Instances logged in local time (UTC+2) without an offset, predictions a second later in
    UTC: every prediction is two hours before its instance, as the stream's times are read."""
    utc = pd.date_range("2026-11-01", periods=20, freq="1min")
    local = (utc + pd.Timedelta("2h")).strftime("%Y-%m-%dT%H:%M:%S")
    pd.DataFrame({"id": range(20), "time": local, "label": [0, 1] * 10}).to_csv(
        tmp_path / "rows.csv", index=False)
    pd.DataFrame({"id": range(20), "time": (utc + pd.Timedelta("1s")).strftime(
        "%Y-%m-%dT%H:%M:%SZ"), "prediction": 1}).to_csv(tmp_path / "log.csv", index=False)
    argv = ["backfill", "--delay", "5min", "--out", str(tmp_path / "out"), "--runner",
            "direct", "--quiet", "--predictions"]
    stream = ["--stream", f"s={tmp_path / 'rows.csv'}"]
    code = main([*argv, f'{tmp_path / "log.csv"}{{"time": "time"}}', *stream])
    err = capsys.readouterr().err
    assert code == 2 and err == (
        f"delayed-eval: error: {tmp_path / 'log.csv'}: column 'y_pred' (option \"prediction\") "
        f"not found; columns are ['id', 'time', 'prediction']; name it with the --predictions "
        f'option {{"prediction": "prediction"}}\n')
    log = f'{tmp_path / "log.csv"}{{"time": "time", "prediction": "prediction"}}'
    code = main([*argv, log, *stream])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "0 of 20 predictions of model 'log' matched a labelled instance of stream 's' (20 " \
        "made before their instance arrived); check that the log's times and the stream's " \
        "are kept alike: numbers in the same unit (the time_unit options), ISO datetimes in " \
        "the same time zone (one without a UTC offset is read as UTC, or in the zone the " \
        "time_zone options name)" in err
    # The stream's times read in the zone they were kept in (UTC+2: Etc/GMT-2), or written
    # with their offset: every prediction matches.
    zoned = ["--stream", f's={tmp_path / "rows.csv"}{{"time_zone": "Etc/GMT-2"}}']
    assert main([*argv, log, *zoned]) == 0
    pd.DataFrame({"id": range(20), "time": [t + "+02:00" for t in local],
                  "label": [0, 1] * 10}).to_csv(tmp_path / "rows.csv", index=False)
    assert main([*argv, log, *stream]) == 0
    counts = json.loads((tmp_path / "out" / "manifest.json").read_text())["counts"][0]
    assert counts["logged_predictions"] == 20 and counts["unmatched_predictions"] == 0


def test_a_model_that_answers_no_prediction_is_named_not_the_delay(tmp_path, capsys):
    """Alone, the run stopped blaming the delay ("the first label comes after the last of the
    200 instances", at delay 10), with --no-final too; beside another model, its column of NaN
    said nothing. And --no-final makes no final prediction: none is counted scored."""
    argv = ["run", "--stream", 'synth:SEA{"n": 200, "seed": 1}', "--delay", "10", "--runner",
            "direct", "--model", "silent=tests.helpers.AnswersNothing"]
    assert main([*argv, "--out", str(tmp_path / "alone"), "--quiet"]) == 2
    assert capsys.readouterr().err == (
        "delayed-eval: error: stream sea: no model made a prediction: silent answered none "
        "(None, NaN or {}) for each of the 200 labelled instances, before and after learning "
        "their labels; check that predict_one (or predict_proba_one) returns a class or a "
        "number\n")
    # With --no-final only the initial predictions tell: made after learning, still none.
    assert main([*argv, "--out", str(tmp_path / "alone"), "--quiet", "--no-final"]) == 2
    assert "no model made a prediction: silent answered none" in capsys.readouterr().err
    out = tmp_path / "beside"
    assert main([*argv, "--model", "no-change", "--out", str(out), "--no-final"]) == 0
    assert "sea / silent: no prediction to score: each of its predictions of the 200 labelled " \
        "instances was none (None, NaN or {}; in a log, empty)" in capsys.readouterr().out
    counts = {c["model"]: (c["scored_initial"], c["scored_final"], c["unscored_initial"])
              for c in json.loads((out / "manifest.json").read_text())["counts"]}
    assert counts == {"silent": (0, 0, 200), "no-change": (190, 0, 10)}


def test_a_model_that_answers_none_some_of_the_time_is_named_with_what_its_measures_rest_on(
        tmp_path, capsys):
    """A model that answers none after an odd number of labels: its columns were numbers over
    fewer instances than were labelled, which only the manifest said. Counted here by a loop:
    at delay 10 instance t arrives after max(0, t − 9) labels were learned, and label s's
    final prediction is made after s were; with none learned, GaussianNB answers none too."""
    n = 200
    learned_at_arrival = [max(0, t - 9) for t in range(n)]
    unanswered = sum(k % 2 == 1 for k in learned_at_arrival)
    initial = sum(k > 0 and k % 2 == 0 for k in learned_at_arrival)
    final = sum(s > 0 and s % 2 == 0 for s in range(n))
    argv = ["run", "--stream", f'synth:SEA{{"n": {n}, "seed": 1}}', "--delay", "10",
            "--runner", "direct", "--model", "half=tests.helpers.AnswersEveryOther",
            "--model", "no-change", "--out", str(tmp_path / "out"), "--repredict", "none"]
    assert main(argv) == 0
    said = capsys.readouterr().out
    assert f"sea / half: answered none (None, NaN or {{}}) at the arrival of {unanswered} " \
        f"instances after it had learned a label: its initial measures rest on {initial} of " \
        f"its {n} labelled instances, its final measures on {final} (the summary's n)" in said
    assert "sea / no-change: answered" not in said  # (no answer before any label: not one)
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    n_of = summary.query("model == 'half' and metric == 'accuracy' and window == 'cumulative'"
                         ).set_index("category")["n"]
    assert (n_of["initial"], n_of["final"]) == (initial, final)
    assert main([*argv, "--no-final"]) == 0
    assert f"rest on {initial} of its {n} labelled instances (the summary's n)" in \
        capsys.readouterr().out


def test_a_wrapped_estimator_without_probabilities_is_told_to_run_without_them(tmp_path, capsys):
    """scikit-learn's SGDClassifier (hinge loss) in river's wrapper: predict_one works,
    predict_proba_one raises. The hint was "fix the model or its input"."""
    pd.DataFrame({"time": range(60), "x": [i % 7 for i in range(60)],
                  "label": [i % 7 > 3 for i in range(60)]}).to_csv(tmp_path / "rows.csv",
                                                                 index=False)
    model = ('sgd=river.compat.SKL2RiverClassifier{"estimator": {"sklearn.linear_model.'
             'SGDClassifier": {"random_state": 0}}, "classes": [false, true]}')
    argv = ["run", "--stream", f"s={tmp_path / 'rows.csv'}", "--model", model, "--delay", "3",
            "--runner", "direct", "--quiet", "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "delayed-eval: error: model sgd, stream s, instance 0: predict_proba_one raised "
        "AttributeError: This 'SGDClassifier' has no attribute 'predict_proba'; its "
        "predict_one works: run with --no-probabilities (no log-loss, Brier, AUC or "
        "calibration), or use a model that gives class probabilities\n")
    assert main([*argv, "--no-probabilities"]) == 0


def test_a_backfill_whose_matched_predictions_are_all_empty_evaluated_nothing(tmp_path, capsys):
    """A log whose prediction column is empty where its ids and times match (a model that
    logged None, a column named wrong): nothing is scored, so it is a mistake (exit 2), not a
    success with "(no results)". A model of two that logged nothing leaves the other scored."""
    pd.DataFrame({"id": range(20), "time": range(20), "x": range(20),
                  "label": ["a", "b"] * 10}).to_csv(tmp_path / "rows.csv", index=False)
    log = pd.DataFrame({"model": "m", "id": range(20), "t": [i + 0.5 for i in range(20)],
                        "y_pred": [None] * 20, "decision": ["a"] * 20})
    log.to_csv(tmp_path / "log.csv", index=False)
    argv = ["backfill", "--stream", f"s={tmp_path / 'rows.csv'}", "--delay", "3", "--out",
            str(tmp_path / "out"), "--runner", "direct", "--quiet", "--predictions"]
    assert main([*argv, str(tmp_path / "log.csv")]) == 2
    assert capsys.readouterr().err == (
        f"delayed-eval: error: prediction log {tmp_path / 'log.csv'}: every prediction that "
        f"matched a labelled instance of stream 's' (19 of them) is empty: its 'y_pred' is "
        f"empty, null or NaN; name the column that holds the predictions with the option "
        f'{{"prediction": ...}}\n')
    assert main([*argv, f'{tmp_path / "log.csv"}{{"prediction": "decision"}}']) == 0
    pd.concat([log, log.assign(model="n", y_pred="a")]).to_csv(tmp_path / "two.csv",
                                                              index=False)
    assert main([*argv, str(tmp_path / "two.csv")]) == 0
    counts = {c["model"]: (c["scored_initial"], c["unscored_initial"]) for c in json.loads(
        (tmp_path / "out" / "manifest.json").read_text())["counts"]}
    # (The last instance's label comes at its own time, the stream's end: its prediction, half
    # a second later, matches none.)
    assert counts == {"m": (0, 20), "n": (19, 1)}


def test_text_columns_that_look_like_ids_or_dates_are_refused_with_a_hint(tmp_path, capsys):
    path = _write(tmp_path, "tx.csv", "tx_id,ts,amount,merchant,label\n"
                  "t1,2026-01-01T00:00:00,10.5,shop,0\nt2,2026-01-01T00:01:00,99.0,bar,1\n"
                  "t3,2026-01-01T00:02:00,5.0,shop,0\nt4,2026-01-01T00:03:00,12.0,cafe,0\n")
    with pytest.raises(InputError, match=r"column 'tx_id' has a different text value in every "
                                         r'row, like an id.*give \{"id": "tx_id"\}.*leave it '
                                         r'out with \{"features": \["ts", "amount", '
                                         r'"merchant"\]\}'):
        StreamSpec.parse(path).check()
    with pytest.raises(InputError, match=r"column 'ts' holds dates.*give \{\"time\": \"ts\"\}"):
        StreamSpec.parse(path + '{"id": "tx_id"}').check()
    year_first = _write(tmp_path, "ymd.csv", (tmp_path / "tx.csv").read_text().replace("-", "/"))
    with pytest.raises(InputError, match=r"column 'ts' holds dates"):  # (2026/01/01 00:00:00)
        StreamSpec.parse(year_first + '{"id": "tx_id"}').check()
    # Named as id and time, the categorical text column is a feature as river takes it (text).
    spec = path + '{"id": "tx_id", "time": "ts"}'
    StreamSpec.parse(spec).check()
    events, dead = read(spec, delay="1")
    assert dead == [] and events[0][5] == {"amount": 10.5, "merchant": "shop"}
    # A model that cannot take text says which column, in one line.
    code = main(["run", "--stream", spec, "--model", "gaussian-nb", "--delay", "1", "--out",
                 str(tmp_path / "out"), "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "features 'merchant' hold text" in err
    assert "'one-hot-text | MODEL'" in err
    # ... which then learns from the text feature and the number alike.
    assert main(["run", "--stream", spec, "--model", "one-hot-text | gaussian-nb", "--delay",
                 "1", "--out", str(tmp_path / "out"), "--runner", "direct", "--quiet"]) == 0


def test_a_column_of_free_text_is_a_feature_for_a_text_model_as_in_river(tmp_path):
    """A column of reviews, different in every row, is free text (words between spaces) for
    a model that reads text (river's BagOfWords), not an id to refuse: the run's initial
    accuracy is river's on the file. A column of one word per row, different in each, is
    still refused as an id."""
    from river import evaluate as river_evaluate
    from river import feature_extraction, metrics, naive_bayes, stream

    from pipelines import evaluate_locally

    rng = np.random.default_rng(5)
    rows = []
    for i in range(300):
        positive = bool(rng.integers(2))
        words = [*rng.choice(["the", "film", "was", "plot", "actor"], 4),
                 *rng.choice(["great", "loved"] if positive else ["awful", "dull"], 2), str(i)]
        rows.append({"review": " ".join(rng.permutation(words)),
                     "label": "pos" if positive else "neg"})
    path = tmp_path / "reviews.csv"
    pd.DataFrame(rows).to_csv(path, index=False)

    def bag_of_words():
        return feature_extraction.BagOfWords(on="review") | naive_bayes.MultinomialNB()

    StreamSpec.parse(str(path)).check()
    local = evaluate_locally(str(path), bag_of_words(), "20", final=False)
    ours = local.summary.query("category == 'initial' and metric == 'accuracy' and "
                               "`class`.isna()")["value"].iloc[0]
    assert ours == river_evaluate.progressive_val_score(
        stream.iter_csv(path, target="label"), bag_of_words(), metrics.Accuracy(),
        delay=20).get()
    pd.DataFrame({"code": [f"c{i}" for i in range(300)], "label": "a"}).to_csv(
        tmp_path / "codes.csv", index=False)
    with pytest.raises(InputError, match="column 'code' has a different text value in every"):
        StreamSpec.parse(str(tmp_path / "codes.csv")).check()


def test_a_model_failing_first_on_a_batch_of_re_predictions_names_the_text_features(tmp_path,
                                                                                    capsys):
    """kNN answers nothing while it has learned nothing, so with every label after the last
    instance its first distance is computed re-predicting the pending instances together:
    the one line still names the text column and what to do about it."""
    path = tmp_path / "rows.csv"
    path.write_text("x,colour,label\n" + "".join(
        f"{i / 10},{('red', 'blue')[i % 2]},{'ab'[i % 3 == 0]}\n" for i in range(20)))
    code = main(["run", "--stream", f"s={path}", "--model", "knn", "--delay", "50",
                 "--no-final", "--out", str(tmp_path / "out"), "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "re-predicting pending instances raised TypeError" in err
    assert "features 'colour' hold text" in err and "'one-hot-text | MODEL'" in err


def test_a_table_whose_only_feature_is_refused_can_be_read_with_none(tmp_path):
    """`{"features": []}`, what the hint gives when nothing else is left, means no features
    (the baselines still run), not every column."""
    path = _write(tmp_path, "days.csv", "time,day,label\n" + "".join(
        f"{i},2026-01-0{1 + i % 9},{'ab'[i % 3 == 0]}\n" for i in range(30)))
    with pytest.raises(InputError, match=r'column \'day\' holds dates.*\{"features": \[\]\}'):
        StreamSpec.parse(path).check()
    events, dead = read(path + '{"features": []}', delay="2")
    assert dead == [] and [e[5] for e in events if e[3] == "instance"] == [{}] * 30
    summary = run(RunConfig(streams=[path + '{"features": []}'], models=["no-change"],
                            delay="2", out=str(tmp_path / "out"), runner="direct", quiet=True,
                            repredict="none"))
    initial = summary.query("category == 'initial' and metric == 'accuracy'")
    y = ["ab"[i % 3 == 0] for i in range(30)]
    # No-change at delay 2: the latest label known at arrival i is y[i - 2]; instances 0 and 1
    # have no prediction (unscored).
    assert initial[["value", "n"]].values.tolist() == [
        [sum(y[i] == y[i - 2] for i in range(2, 30)) / 28, 28]]


def test_a_json_list_as_a_feature_is_named_in_one_line(tmp_path, capsys):
    path = _write(tmp_path, "listed.jsonl", "".join(
        json.dumps({"time": i, "x": i / 10, "meta": [i, i + 1], "label": i % 2}) + "\n"
        for i in range(20)))

    def error(spec):
        code = main(["run", "--stream", spec, "--model", "gaussian-nb", "--delay", "1",
                     "--out", str(tmp_path / "out"), "--runner", "direct", "--quiet"])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1
        return err

    assert "column 'meta' holds lists or objects, which a model cannot take as a feature; " \
        'flatten them into columns of their own, or leave it out with {"features": ["x"]}' \
        in error(path)
    # Chosen as a feature, it is named when the model fails on it.
    err = error(path + '{"features": ["x", "meta"]}')
    assert "features 'meta' hold JSON objects or lists" in err and '{"features": [...]}' in err


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_nested_objects_are_columns_named_by_their_path(tmp_path, fmt):
    """A JSON Lines line's nested objects (a Parquet file's struct columns) are read as the
    columns `features.amount`, `features.geo.country`, ...: as features, as a --segment column
    and by the `features` option. Oracle: the same rows flattened by pandas' json_normalize
    into a CSV file, run alike: the same summary."""
    rng = np.random.default_rng(4)
    records = [{"id": i, "time": i, "features": {"amount": float(rng.normal(i % 2)),
                                                  "geo": {"country": ["DE", "FR"][i % 3 == 0]},
                                                  "age": int(rng.integers(18, 80))},
                "label": ["ok", "fraud"][i % 2]} for i in range(400)]
    records[57]["features"] = None  # (its features missing: a dead letter, no column `features`)
    if fmt == "jsonl":
        nested = _write(tmp_path, "nested.jsonl", "".join(json.dumps(r) + "\n"
                                                           for r in records))
    else:
        nested = str(tmp_path / "nested.parquet")
        pd.DataFrame(records).to_parquet(nested)
    flat = str(tmp_path / "flat.csv")
    pd.json_normalize(records).to_csv(flat, index=False)
    summaries = []
    for path in (nested, flat):
        out = tmp_path / ("out-" + os.path.basename(path))
        options = '{"features": ["features.amount", "features.age"]}'
        assert main(["run", "--stream", f"s={path}{options}", "--model", "gaussian-nb",
                     "--delay", "10", "--segment", "features.geo.country", "--out", str(out),
                     "--runner", "direct", "--quiet"]) == 0
        summaries.append(read_csv(out / "summary.csv").drop(columns="run_id"))
    assert set(summaries[0]["segment"].dropna()) == {"features.geo.country=DE",
                                                      "features.geo.country=FR"}
    pd.testing.assert_frame_equal(summaries[0], summaries[1])
    # Every column a feature: the null object's line alone is a dead letter.
    out = tmp_path / "every-column"
    assert main(["run", "--stream", nested, "--model", "majority", "--delay", "10",
                 "--out", str(out), "--runner", "direct", "--quiet"]) == 0
    dead = pd.read_json(out / "dead_letters.jsonl", lines=True)
    assert dead[["row", "reason"]].values.tolist() == [[58, "every feature is empty"]]


@pytest.mark.parametrize("column, values, kind", [
    ("v", [[1.0, 2.0]] * 20, "lists or objects"),
    ("seen", pd.date_range("2026-01-01", periods=20, freq="min"), "dates"),
    ("waited", pd.to_timedelta(range(20), unit="s"), "durations"),
    # Arrow's date32, time64 and binary columns, which pandas reads as objects:
    ("day", [datetime.date(2026, 1, 1 + i) for i in range(20)], "dates"),
    ("at", [datetime.time(9, i) for i in range(20)], "times of day"),
    ("digest", [bytes([i, 255]) for i in range(20)], "bytes")])
def test_a_parquet_column_of_lists_dates_times_durations_or_bytes_is_refused_as_a_feature(
        tmp_path, capsys, column, values, kind):
    path = tmp_path / "typed.parquet"
    pd.DataFrame({"time": range(20), "x": np.arange(20) / 10, column: values,
                  "label": [i % 2 for i in range(20)]}).to_parquet(path)
    with pytest.raises(InputError, match=rf"column '{column}' holds {kind}, which a model "
                                         r'cannot take as a feature; .*\{"features": \["x"\]\}'):
        StreamSpec.parse(str(path)).check()
    # Chosen as a feature, it is named when the model fails on it.
    code = main(["run", "--stream", f'{path}{{"features": ["x", "{column}"]}}', "--model",
                 "gaussian-nb", "--delay", "1", "--out", str(tmp_path / "out"),
                 "--runner", "direct", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and f"features '{column}' hold " + {
        "lists or objects": "JSON objects or lists", "bytes": "bytes"}.get(
        kind, "dates, times or durations") in err


def test_classes_that_differ_only_in_case_or_spaces_are_named(tmp_path, capsys):
    """'fraud', 'fraud ' and 'Fraud' are three classes to every measure: the run says so (the
    labels are the user's to clean), in its output and its manifest."""
    labels = ["fraud" if i % 3 else "ok" for i in range(60)]
    labels[7], labels[20], labels[33] = "fraud ", "Fraud", " ok"
    path = _write(tmp_path, "cased.csv", "x,label\n" + "".join(
        f"{i % 5},{y}\n" for i, y in enumerate(labels)))
    out = tmp_path / "out"
    assert main(["run", "--stream", path, "--model", "majority", "--delay", "2", "--out",
                 str(out), "--runner", "direct"]) == 0
    printed = capsys.readouterr().out
    assert "cased: classes 'fraud', 'fraud ' and 'Fraud' differ only in case or spaces, and " \
        "each is counted as a class of its own; if they are one class, write it one way in " \
        "the labels" in printed and "cased: classes 'ok' and ' ok' differ only" in printed
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["alike_classes"] == {"cased": [["ok", " ok"], ["fraud", "fraud ", "Fraud"]]}
    from pipelines.report import write_report

    page = open(write_report(str(out)), encoding="utf-8").read()
    assert "<b>classes alike</b>: cased: classes &#x27;ok&#x27; and &#x27; ok&#x27;" in page


def test_a_model_predicting_its_labels_classes_as_text_is_named(tmp_path, capsys):
    """Labels True/False, predictions 'True'/'False': an accuracy of 0 without a word."""
    assert main(["run", "--stream", 'synth:SEA{"n": 200}', "--model",
                 "text=tests.helpers.PredictsText", "--delay", "5", "--repredict", "none",
                 "--out", str(tmp_path), "--runner", "direct"]) == 0
    printed = capsys.readouterr().out
    for c in ("False", "True"):
        assert f"sea: classes {c} and '{c}' differ only in type, and each is counted as a " \
            f"class of its own; if they are one class, write it one way in the labels and the " \
            f"models' predictions" in printed
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["alike_classes"] == {"sea": [[False, "False"], [True, "True"]]}


def test_a_model_predicting_no_class_its_labels_have_is_named(tmp_path, capsys):
    """Labels True/False, predictions 'yes'/'no': every prediction scored wrong, which reads
    as a bad model; the run names the model, its classes and the labels', here and in the
    report. A model that predicts the labels' classes beside it is not named."""
    n, delay = 200, 5
    assert main(["run", "--stream", f'synth:SEA{{"n": {n}}}', "--model",
                 "codes=tests.helpers.PredictsCodes", "--model", "gaussian-nb", "--delay",
                 str(delay), "--repredict", "none", "--out", str(tmp_path), "--report",
                 "--runner", "direct"]) == 0
    printed = capsys.readouterr().out
    line = (f"sea / codes: none of its {n - delay:,} initial predictions ('no', 'yes') is a "
            f"class its labels have ('False', 'True'), so each is scored wrong: make the model "
            f"predict the labels' classes, written as the labels write them")
    assert line in printed.splitlines() and "sea / gaussian-nb: none" not in printed
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<b>no label&#x27;s class</b>: sea / codes: none of its" in page


# -- the output directory ------------------------------------------------------------------------
@pytest.mark.parametrize("inside", ["logs", "logs/eval", "logs/date=2026-11-01/eval"])
def test_an_out_inside_a_folder_the_run_reads_is_refused(tmp_path, capsys, monkeypatch,
                                                          inside):
    """`--stream logs --out logs/eval` ran once; the next run read its results as part of
    the stream ("column 'time' not found" in curves.parquet). A backfill's log folder too."""
    for day in ("2026-11-01", "2026-11-02"):
        (tmp_path / "logs" / f"date={day}").mkdir(parents=True)
        (tmp_path / "logs" / f"date={day}" / "part-0.csv").write_text(
            "time,x,label\n" + "".join(f"{i},{i % 3},{'ab'[i % 2]}\n" for i in range(20)))
    (tmp_path / "rows.csv").write_text("time,x,label\n0,1,a\n1,2,b\n")
    monkeypatch.chdir(tmp_path)
    for command in (["run", "--stream", "logs", "--model", "majority"],
                    ["backfill", "--stream", "rows.csv", "--predictions", "logs"]):
        assert main([*command, "--delay", "2", "--out", inside, "--runner", "direct",
                     "--quiet"]) == 2
        what = "stream logs" if command[0] == "run" else "the prediction log"
        assert capsys.readouterr().err == (
            f"delayed-eval: error: --out {inside} is inside logs, the folder {what} is read "
            f"from: its next run would read this run's files as input; choose an --out "
            f"outside it\n")
    assert sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "logs").rglob("*")
                  if p.is_file()) == [f"logs/date={day}/part-0.csv"
                                      for day in ("2026-11-01", "2026-11-02")]


def test_an_out_that_cannot_be_written_is_one_line(tmp_path, capsys):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    args = ["run", "--stream", 'synth:SEA{"n": 60}', "--model", "majority", "--quiet",
            "--runner", "direct"]
    assert main([*args, "--out", str(a_file)]) == 2
    assert capsys.readouterr().err == (f"delayed-eval: error: --out {a_file}: a file, not a "
                                       f"folder; choose a folder\n")
    assert main([*args, "--out", str(a_file / "sub")]) == 2
    assert capsys.readouterr().err == (f"delayed-eval: error: --out {a_file / 'sub'}: cannot "
                                       f"write there (Not a directory); choose a directory you "
                                       f"can write\n")
    assert a_file.read_text() == "mine"


def test_a_full_disk_leaves_the_previous_results(tmp_path, monkeypatch):
    import pipelines.job

    out = tmp_path / "out"
    config = dict(streams=['synth:SEA{"n": 60}'], models=["majority"], out=str(out),
                  runner="direct", quiet=True)
    run(RunConfig(**config))
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def full(path, frame):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pipelines.job, "write_parquet", full)
    with pytest.raises(OutputError, match=r"writing the results failed \(No space left on "
                                          r"device\); the previous results there are "
                                          r"untouched"):
        run(RunConfig(**config))
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_rerun_replaces_only_the_files_the_previous_run_wrote(tmp_path):
    out = tmp_path / "out"
    config = dict(streams=['synth:SEA{"n": 300, "seed": 2}'], models=["majority"], delay="10",
                  out=str(out), runner="direct", quiet=True, curve_every=100)
    (out / "figures").mkdir(parents=True)
    (out / "figures" / "mine.png").write_bytes(b"my own figure")
    (out / "notes.md").write_text("my notes")
    run(RunConfig(**config, report=True))
    ours = json.load(open(out / "manifest.json"))["outputs"]
    assert "report.html" in ours and "figures/binned.png" in ours
    run(RunConfig(**config))  # no report this time
    assert not (out / "report.html").exists() and not (out / "figures" / "binned.png").exists()
    assert (out / "figures" / "mine.png").read_bytes() == b"my own figure"
    assert (out / "notes.md").read_text() == "my notes"


def test_a_file_of_a_results_name_that_no_run_wrote_stops_the_run_before_it_starts(tmp_path,
                                                                                   capsys):
    """A user's own summary.csv, or another tool's manifest.json, in --out was replaced by the
    run's (and a report.html or figure by the report's): files no run wrote. Now the run (the
    report) stops first, naming them, and they stay."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.csv").write_text("quarter,revenue\n")
    (out / "manifest.json").write_text('{"project": "not ours"}')
    argv = ["run", "--stream", 'synth:SEA{"n": 60}', "--model", "majority", "--delay", "5",
            "--out", str(out), "--runner", "direct", "--quiet"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"delayed-eval: error: --out {out}: summary.csv, manifest.json there, which no run's "
        f"manifest.json lists, would be replaced; choose another --out, or move them away\n")
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "summary.csv"]
    assert (out / "summary.csv").read_text() == "quarter,revenue\n"
    # A run's own files (its manifest lists them) are replaced by the next run, as before.
    (out / "summary.csv").unlink()
    (out / "manifest.json").unlink()
    assert main(argv) == 0 and main(argv) == 0
    # The same for the report a finished run gets: a report.html or a figure of the user's.
    for theirs in ("report.html", "figures/binned.png"):
        (out / theirs).parent.mkdir(exist_ok=True)
        (out / theirs).write_text("mine")
        assert main(["report", str(out)]) == 2
        assert without_notices(capsys.readouterr().err) == (
            f"delayed-eval: error: --out {out}: {theirs} there, which no run's manifest.json "
            f"lists, would be replaced; choose another --out, or move it away\n")
        assert (out / theirs).read_text() == "mine"
        (out / theirs).unlink()
    assert main(["report", str(out)]) == 0 and main(["report", str(out)]) == 0


def test_a_folder_of_ours_that_a_rerun_empties_goes_with_its_files(tmp_path):
    """The previous run's report wrote figures/; a rerun without --report removes its files
    and, when nothing else is in it, the folder (a user's file in it keeps it)."""
    from pipelines.files import new_staging, publish, write_bytes

    for mine in (False, True):
        out = tmp_path / f"out{mine}"
        (out / "figures").mkdir(parents=True)
        (out / "figures" / "binned.png").write_bytes(b"ours")
        if mine:
            (out / "figures" / "mine.png").write_bytes(b"the user's")
        (out / "manifest.json").write_text(json.dumps(
            {"outputs": ["figures/binned.png", "manifest.json"]}))
        staging = new_staging(str(out), "rerun")
        write_bytes(os.path.join(staging, "manifest.json"), b"{}")
        publish(staging, str(out))
        assert not (out / "figures" / "binned.png").exists()
        assert (out / "figures").exists() == mine


def test_a_folder_holding_files_of_two_runs_is_refused_by_its_readers(tmp_path, capsys,
                                                                     monkeypatch):
    """Two runs publishing into one --out at once, or one stopped while moving its files in,
    left files of both, and the report, `trend`, `rank` and `load_results` read them as one run
    (one run's summary with the other's curves). Each file is now read against what its run's
    manifest records of it; a publishing stopped part-way is refused too, and a rerun replaces
    it."""
    import shutil

    from apache_beam.io.filesystems import FileSystems

    from pipelines.results import load_results

    def argv(out, seed):
        return ["run", "--stream", f's=synth:SEA{{"n": 400, "seed": {seed}}}', "--model",
                "gaussian-nb", "--delay", "10", "--out", str(out), "--runner", "direct",
                "--quiet", "--curve-every", "100"]

    a, b = tmp_path / "a", tmp_path / "b"
    assert main(argv(a, 1)) == 0 and main(argv(b, 2)) == 0
    two_runs = ("is not as its manifest.json records it: two runs wrote into the folder at "
                "once, or one was stopped while moving its files in, or it was changed since; "
                "run again what wrote the folder")
    for name in ("summary.csv", "curves.parquet", "profile.json", "summary.parquet"):
        mixed = tmp_path / "nights" / f"date={name}"
        shutil.copytree(a, mixed)
        shutil.copy(b / name, mixed / name)
        assert main(["report", str(mixed)]) == 2
        assert without_notices(capsys.readouterr().err) == \
            f"delayed-eval: error: {mixed}: {name} {two_runs}\n"
        if name == "curves.parquet":
            with pytest.raises(InputError, match="curves.parquet is not as"):
                load_results(str(mixed), "curves")
    assert main(["trend", str(tmp_path / "nights")]) == 2
    assert capsys.readouterr().err.endswith(f"summary.csv {two_runs}\n")
    assert main(["report", str(a)]) == 0 and main(["report", str(b)]) == 0  # each its own

    # A publishing stopped after the data files moved in, before the manifest did.
    rename = FileSystems.rename

    def stopped(sources, destinations):
        if any(".staging-" in s and s.endswith("manifest.json") for s in sources):
            raise OSError(5, "Input/output error")
        rename(sources, destinations)

    fresh = tmp_path / "fresh"  # (and the first run into a folder)
    monkeypatch.setattr(FileSystems, "rename", stopped)
    for out in (a, fresh):
        assert main(argv(out, 3)) == 2
        assert capsys.readouterr().err == (
            f"delayed-eval: error: --out {out}: moving the results into place failed part-way "
            f"(Input/output error); run again: until then the folder holds files of two runs, "
            f"which its readers refuse\n")
        with pytest.raises(InputError, match="summary.csv is not as"):
            load_results(str(out))
        assert main(["report", str(out)]) == 2
        capsys.readouterr()

    def interrupted(sources, destinations):
        if any(".staging-" in s and s.endswith("manifest.json") for s in sources):
            raise KeyboardInterrupt
        rename(sources, destinations)

    monkeypatch.setattr(FileSystems, "rename", interrupted)  # (Ctrl-C there)
    assert main(argv(a, 4)) == 130
    assert capsys.readouterr().err == (
        f"delayed-eval: interrupted while moving the results into {a}; run again: until then "
        f"the folder holds files of two runs, which its readers refuse\n")
    monkeypatch.setattr(FileSystems, "rename", rename)
    for out in (a, fresh):
        assert main(argv(out, 3)) == 0  # the rerun replaces the files its stopped self claimed
        assert main(["report", str(out)]) == 0
        assert load_results(str(out))["run_id"].nunique() == 1


# -- models and generators that cannot fit -----------------------------------------------------
@pytest.mark.parametrize("stream, model, message", [
    ('synth:SEA{"n": 0}', "majority",
     "stream sea: n must be a whole number of instances, at least 1, not 0"),
    ('synth:SEA{"n": 10, "variant": 9}', "majority",
     "stream sea: SEA({'variant': 9, 'seed': 42}): ValueError: Unknown variant"),
    ('synth:SEA{"n": 10}', "m=river.stats.Mean",
     "model m: river.stats.mean.Mean is not an online model (it has no learn_one and "
     "predict_one)"),
    ('synth:SEA{"n": 10}', "m=standard-scaler",
     "model m: river.preprocessing.scale.StandardScaler is not an online model (it has no "
     "predict_one)"),
    ('synth:SEA{"n": 10}', "linear-regression",
     "model linear-regression is a regressor, but stream sea has class labels"),
    ('synth:Friedman{"n": 10}', "gaussian-nb",
     "model gaussian-nb is a classifier, but stream friedman's labels are numbers (with "
     "fractions); use a regressor (the baselines: no-change-regressor, mean-regressor)"),
    # Whole numbers (chick weights in grams), which river calls a regression target.
    ("dataset:ChickWeights", "gaussian-nb",
     "model gaussian-nb is a classifier, but stream chickweights's labels are numbers "
     "(river's regression dataset)"),
    # A multi-output dataset gives a dict of targets per instance (each was a dead letter).
    ("dataset:SolarFlare", "mean-regressor",
     "stream solarflare: river dataset SolarFlare gives no one label: each instance has 3 "
     "targets (multi-output regression: 'c-class-flares', 'm-class-flares', "
     "'x-class-flares'); name the one to score with the stream option "
     '{"label": "c-class-flares"}'),
    ('dataset:SolarFlare{"label": "y-class-flares"}', "mean-regressor",
     "stream solarflare: river dataset SolarFlare has no target 'y-class-flares': each "
     "instance has 3 targets (multi-output regression: 'c-class-flares',"),
    ('dataset:Phishing{"label": "is_phishing"}', "majority",
     "stream phishing: river dataset Phishing has one target, its label; the option label "
     "names one of a multi-output dataset's targets: leave it out"),
])
def test_models_and_generators_that_cannot_fit_are_refused_before_the_run(
        tmp_path, capsys, stream, model, message):
    out = tmp_path / "out"
    assert main(["run", "--stream", stream, "--model", model, "--out", str(out),
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"delayed-eval: error: {message}") and err.count("\n") == 1
    assert not out.exists()  # refused before anything was made


@pytest.mark.parametrize("model, message", [
    ('os.system{"command": "touch {ran}"}', "cannot build os.system: it is part of Python's "
     "standard library, not a model or a model's parameter"),
    ('subprocess.Popen{"args": "touch {ran}", "shell": true}', "cannot build "
     "subprocess.Popen: it is part of Python's standard library"),
    ('river.ensemble.BaggingClassifier{"model": {"os.system": {"command": "touch {ran}"}}}',
     "cannot build os.system: it is part of Python's standard library"),
    ('numpy.save{"file": "{ran}", "arr": 1}', "cannot build numpy.save: it is not a class "
     "(a function?); a spec names the class of a model or of a model's parameter"),
    ('m=river.tree.HoeffdingTreeClassifier | os.system{"command": "touch {ran}"}',
     "cannot build os.system: it is part of Python's standard library"),
])
def test_a_model_spec_builds_classes_and_calls_nothing_else(tmp_path, capsys, model, message):
    """A spec in a shared config is data: a path that names a command, a function or a class
    of the standard library is refused before anything is called (each would create `ran`)."""
    ran = tmp_path / "ran"
    out = tmp_path / "out"
    assert main(["run", "--stream", 'synth:SEA{"n": 10}', "--model",
                 model.replace("{ran}", str(ran)), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"delayed-eval: error: {message}") and err.count("\n") == 1
    assert not ran.exists() and not out.exists()


@pytest.mark.parametrize("many", [False, True], ids=["a few", "one in four"])
def test_a_regression_label_column_with_odd_texts_says_which(tmp_path, capsys, many):
    """Numbers written with 3 decimals (2.480, 0.125) and odd cells: not taken for a file of
    decimal commas (2.480 is no thousands group where 0.125 is a number), and not a
    classification stream: the odd texts are named, and na_values makes them missing. So
    with one label in four no number ('?', '-'): more than a few, so a classifier could take
    them for class labels, but no regressor takes class labels (not "has class labels")."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=300)
    y = np.array([f"{v:.3f}" for v in 2 * x + rng.normal(size=300)], dtype=object)
    if many:
        odd, rows = ["?", "-"], np.arange(0, 300, 4)
    else:
        odd, rows = ["?", "-", "1,5"], np.array([50, 100, 150])
    y[rows] = np.resize(np.array(odd, dtype=object), len(rows))
    pd.DataFrame({"x": x, "label": y}).to_csv(tmp_path / "reg.csv", index=False)
    args = ["--model", "linear-regression", "--delay", "20", "--out", str(tmp_path / "o"),
            "--runner", "direct", "--quiet"]
    assert main(["run", "--stream", str(tmp_path / "reg.csv"), *args]) == 2
    shown = ", ".join(f"'{text}'" for text in odd)
    assert "stream reg's labels are read as text: most of its first labels are numbers, some " \
        f"are not ({shown}); give those that mean no label with the stream option " \
        f'{{"na_values": {json.dumps(odd)}}}' in capsys.readouterr().err
    assert main(["run", "--stream", f'{tmp_path / "reg.csv"}{{"na_values": {json.dumps(odd)}}}',
                 *args]) == 0
    counts = json.loads((tmp_path / "o" / "manifest.json").read_text())["counts"][0]
    assert (counts["labelled"], counts["pending_at_end"]) == (300 - len(rows), len(rows))


def test_a_long_odd_cell_is_named_cut_short(tmp_path, capsys):
    """A cell of 300 characters (a pasted blob) where a regression's label or a time belongs:
    the line and each dead letter name it cut to 60 characters, not whole, and no such cell
    is offered as an na_values marker."""
    blob = "x" * 300
    shown = "'" + "x" * 56 + "..."  # (its repr, cut to 60 characters)
    lines = [f"{i},{i % 5}.5,{i % 7}.25" for i in range(2000)]
    early, late = list(lines), list(lines)
    early[9] = f"9,1.5,{blob}"  # among the first labels: the run stops before it starts
    late[1500], late[1600] = f"1500,1.5,{blob}", f"{blob},1.5,2.25"  # dead letters
    for name, rows in (("early", early), ("late", late)):
        (tmp_path / f"{name}.csv").write_text("time,f,label\n" + "\n".join(rows) + "\n")
    args = ["--model", "linear-regression", "--delay", "2", "--runner", "direct", "--quiet"]
    assert main(["run", "--stream", str(tmp_path / "early.csv"), "--out", str(tmp_path / "o1"),
                 *args]) == 2
    assert capsys.readouterr().err.endswith(f"some are not ({shown}); fix them\n")
    assert main(["run", "--stream", str(tmp_path / "late.csv"), "--out", str(tmp_path / "o2"),
                 *args]) == 0
    dead = [json.loads(line) for line in open(tmp_path / "o2" / "dead_letters.jsonl")]
    assert {d["field"]: d["reason"] for d in dead} == {
        "time": f"time {shown} is neither a number nor an ISO datetime",
        "label": f"label {shown} is not a number: a regression's labels are numbers"}
    # Such a class among classes that are numbers: named cut short, no marker offered.
    summary = pd.DataFrame({"stream": "s", "segment": None, "category": "initial",
                            "window": "cumulative", "metric": "confusion", "model": "m",
                            "class": ["0", "1", blob], "predicted": ["0", "1", "1"],
                            "value": [1500.0, 1498.0, 2.0]})
    assert format_odd_classes(summary) == f"s: class {shown} (2 of its 3,000 labels) is text " \
        f"among classes that are numbers ('0', '1'): it is counted as a class of its own; if " \
        f"it means no label, empty its cells"


def test_a_classifier_on_numbers_with_a_few_odd_texts_says_which(tmp_path, capsys):
    """A regression file with one '#VALUE!' cell (a spreadsheet's) is read as class labels:
    a classifier, or a backfill of its log, ran with each number a class of its own without
    a word, where the cell alone made it so. Whole numbers with an odd text are class codes
    and stay a classification stream."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=300)
    y = np.array([f"{v:.3f}" for v in 2 * x + rng.normal(size=300)], dtype=object)
    y[40] = "#VALUE!"
    pd.DataFrame({"id": range(300), "time": range(300), "x": x, "label": y}).to_csv(
        tmp_path / "reg.csv", index=False)
    pd.DataFrame({"id": range(300), "t": np.arange(300) + 0.5, "y_pred": 2 * x}).to_csv(
        tmp_path / "log.csv", index=False)
    out = ["--out", str(tmp_path / "o"), "--runner", "direct", "--quiet"]
    told = "stream reg's labels are read as text: most of its first labels are numbers with " \
        "fractions, some are not ('#VALUE!'); give those that mean no label with the stream " \
        'option {"na_values": ["#VALUE!"]}, or fix them\n'
    assert main(["run", "--stream", str(tmp_path / "reg.csv"), "--model", "gaussian-nb",
                 "--delay", "20", *out]) == 2
    assert capsys.readouterr().err == f"delayed-eval: error: model gaussian-nb is a " \
        f"classifier, but {told}"
    assert main(["backfill", "--stream", str(tmp_path / "reg.csv"), "--predictions",
                 str(tmp_path / "log.csv"), "--delay", "3s", *out]) == 2
    assert capsys.readouterr().err == f"delayed-eval: error: model log is a classifier, but " \
        f"{told}"
    codes = y.copy()
    codes[:] = [str(i % 3) for i in range(300)]
    codes[40] = "?"
    pd.DataFrame({"x": x, "label": codes}).to_csv(tmp_path / "codes.csv", index=False)
    assert main(["run", "--stream", str(tmp_path / "codes.csv"), "--model", "gaussian-nb",
                 "--delay", "20", *out]) == 0


def test_a_text_class_of_a_few_labels_among_number_classes_is_named(tmp_path, capsys):
    """Class codes 0 and 1 with one '#VALUE!' past the first rows: the column is text, and
    '#VALUE!' a third class (the binary measures of class 1 gone from the table) without a
    word. A notice names it and the option that makes it missing; with that option the run
    has the classes 0 and 1 and no notice. Text classes of a rare label are no such case."""
    rng = np.random.default_rng(6)
    n = 3000
    x = rng.normal(size=n)
    codes = (x + rng.normal(scale=0.5, size=n) > 0).astype(int).astype(object)
    codes[2000] = "#VALUE!"
    pd.DataFrame({"x": x, "label": codes}).to_csv(tmp_path / "codes.csv", index=False)
    words = np.where(codes == 1, "fraud", "ok").astype(object)
    words[2000] = "chargeback"
    pd.DataFrame({"x": x, "label": words}).to_csv(tmp_path / "words.csv", index=False)

    def notices(spec):
        assert main(["run", "--stream", spec, "--model", "gaussian-nb", "--delay", "20",
                     "--out", str(tmp_path / "o"), "--runner", "direct", "--quiet"]) == 0
        manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
        return ([line for line in capsys.readouterr().err.splitlines() if "text among" in line],
                next(iter(manifest["classes"].values())))

    assert notices(str(tmp_path / "codes.csv")) == (
        ["delayed-eval: notice: codes: class '#VALUE!' (1 of its 2,980 labels) is text among "
         "classes that are numbers ('1', '0'): it is counted as a class of its own; if it "
         'means no label, name it with the stream option {"na_values": ["#VALUE!"]}'],
        ["1", "0", "#VALUE!"])
    assert notices(f'{tmp_path / "codes.csv"}{{"na_values": ["#VALUE!"]}}') == ([], [1, 0])
    assert notices(str(tmp_path / "words.csv"))[0] == []


def test_a_regression_label_column_with_an_odd_text_past_its_first_rows(tmp_path):
    """One '#VALUE!' at row 1 500 of a CSV file makes the whole column text, so every label
    reached the regressor as text: the run stopped at the first instance ('learn_one raised
    TypeError'); in JSON Lines, at that instance. Now the labels are their numbers and the
    odd one is a dead letter (file, row, field, reason), its instance waiting, as with the
    cell empty. Oracles: the run of the file with that cell empty; a backfill's MAE by a
    plain loop."""
    rng = np.random.default_rng(4)
    n, odd = 2000, 1500
    x = rng.normal(size=n)
    y = np.round(2 * x + rng.normal(scale=0.3, size=n), 3)
    frame = pd.DataFrame({"id": range(n), "time": range(n), "x": x, "label": y.astype(object)})
    frame.loc[odd, "label"] = "#VALUE!"
    frame.to_csv(tmp_path / "odd.csv", index=False)
    frame.assign(label=lambda f: f["label"].where(f.index != odd)).to_csv(
        tmp_path / "empty.csv", index=False)
    (tmp_path / "odd.jsonl").write_text("".join(
        json.dumps(r) + "\n" for r in frame.to_dict("records")))
    summaries = {}
    for name in ("odd.csv", "odd.jsonl", "empty.csv"):
        out = tmp_path / name.replace(".", "_")
        assert main(["run", "--stream", f"s={tmp_path / name}", "--model", "linear-regression",
                     "--delay", "20", "--out", str(out), "--runner", "direct", "--quiet"]) == 0
        summaries[name] = load_results(str(out)).drop(columns="run_id")
        dead = [json.loads(line) for line in open(out / "dead_letters.jsonl")]
        if name != "empty.csv":
            assert [(d["file"], d["row"], d["field"], d["reason"]) for d in dead] == [
                (str(tmp_path / name), odd + 1, "label", "label '#VALUE!' is not a number: a "
                 "regression's labels are numbers")]
    pd.testing.assert_frame_equal(summaries["odd.csv"], summaries["empty.csv"])
    pd.testing.assert_frame_equal(summaries["odd.jsonl"], summaries["empty.csv"])
    prediction = np.round(2 * x, 3)
    pd.DataFrame({"id": range(n), "t": np.arange(n) + 0.5, "y_pred": prediction}).to_csv(
        tmp_path / "log.csv", index=False)
    assert main(["backfill", "--stream", f"s={tmp_path / 'odd.csv'}", "--predictions",
                 str(tmp_path / "log.csv"), "--delay", "3s", "--out", str(tmp_path / "b"),
                 "--runner", "direct", "--quiet"]) == 0
    mae = load_results(str(tmp_path / "b")).query(
        "category == 'initial' and metric == 'mae' and window == 'cumulative'").iloc[0]
    scored = np.arange(n) != odd
    assert mae["n"] == n - 1
    assert mae["value"] == pytest.approx(np.mean(np.abs(y - prediction)[scored]), rel=1e-12)


@pytest.mark.parametrize("suffix", ["parquet", "jsonl"])
def test_regression_labels_written_as_text_are_their_numbers(tmp_path, suffix):
    """A Parquet or JSON Lines file whose targets are text ('2.189', and '' for none: a frame
    of strings, as a database export gives it) was taken for class labels: a regressor was
    refused ("stream s has class labels"), and a '' among the first labels was named as an odd
    label. It scores as the file of the numbers (None for none) does."""
    rng = np.random.default_rng(5)
    n = 300
    x = rng.normal(size=n)
    y = np.round(2 * x + rng.normal(scale=0.3, size=n), 3).tolist()
    y[7] = None
    numbers = pd.DataFrame({"id": range(n), "time": range(n), "x": x, "label": y})
    text = numbers.assign(label=["" if v is None else str(v) for v in y])
    for name, frame in (("numbers", numbers), ("text", text)):
        path = tmp_path / f"{name}.{suffix}"
        if suffix == "parquet":
            frame.to_parquet(path)
        else:
            path.write_text("".join(json.dumps(r) + "\n" for r in frame.to_dict("records")))
        assert main(["run", "--stream", f"s={path}", "--model", "linear-regression",
                     "--delay", "20", "--out", str(tmp_path / name), "--runner", "direct",
                     "--quiet"]) == 0
    pd.testing.assert_frame_equal(load_results(str(tmp_path / "text")).drop(columns="run_id"),
                                  load_results(str(tmp_path / "numbers")).drop(
                                      columns="run_id"))


def test_backfill_of_class_predictions_as_regression_is_refused(tmp_path, capsys):
    log = tmp_path / "log.csv"
    pd.DataFrame({"id": range(10), "t": range(10), "model": "m", "y_pred": True}) \
        .to_csv(log, index=False)
    assert main(["backfill", "--stream", 'synth:SEA{"n": 10}', "--predictions", str(log),
                 "--task", "regression", "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert "model m is a regressor, but stream sea has class labels" in \
        capsys.readouterr().err


def test_broken_json_lines_are_dead_letters_with_their_line(tmp_path):
    path = _write(tmp_path, "j.jsonl", '{"time": 0, "f": 1.0, "label": "a"}\n'
                                       '{"time": 1, "f": 2.0, "label": "b"\n\n[1, 2]\n'
                                       '{"time": 3, "f": 3.0, "label": "a"}\n')
    events, dead = read(path, delay="1")
    assert [(d["row"], d["reason"].split(":")[0]) for d in dead] == [(2, "not JSON"),
                                                                    (4, "not a JSON object")]
    assert [e[5] for e in events if e[3] == "instance"] == [{"f": 1.0}, {"f": 3.0}]


def test_a_directory_without_tables_says_what_it_holds(tmp_path):
    (tmp_path / "logs" / "sub").mkdir(parents=True)
    (tmp_path / "logs" / "a.txt").write_text("x")
    (tmp_path / "logs" / "sub" / "b.xlsx").write_text("x")
    with pytest.raises(InputError, match=r"logs: a directory with no table file \(\.csv, "
                                         r"\.jsonl, \.parquet\) below it; it holds \['a\.txt', "
                                         r"'sub/b\.xlsx'\]"):
        StreamSpec.parse(str(tmp_path / "logs")).check()


def test_backfill_options_that_mean_nothing_are_refused_or_absent(tmp_path, capsys):
    log = tmp_path / "log.csv"
    pd.DataFrame({"id": range(10), "t": range(10), "model": "m", "y_pred": True}) \
        .to_csv(log, index=False)
    args = ["backfill", "--stream", 'synth:SEA{"n": 10}', "--predictions", str(log), "--out",
            str(tmp_path / "out"), "--quiet"]
    assert main([*args, "--model", "nb"]) == 2
    assert f"prediction log {log}: no predictions of model(s) ['nb']; the models in it are " \
        "['m']" in capsys.readouterr().err
    assert main([*args, "--no-final"]) == 2  # a run's option: no model, no final prediction
    assert "backfill: --no-final is an option of run" in capsys.readouterr().err
    # Label times from an event log: a delay would be silently unused.
    events = _write(tmp_path, "events.csv", "kind,id,time,f,label\ninstance,a,0,1.0,\n"
                                            "label,a,5,,x\n")
    assert main(["run", "--stream", events, "--model", "majority", "--delay", "100", "--out",
                 str(tmp_path / "run"), "--quiet"]) == 2
    assert "--delay 100 means nothing here: every stream's label times come from its input" \
        in capsys.readouterr().err
    # ... also when only a later partition of the log has the kind column.
    (tmp_path / "log").mkdir()
    _write(tmp_path / "log", "1.csv", "id,time,f,label\na,0,1.0,\n")
    _write(tmp_path / "log", "2.csv", "kind,id,time,f,label\nlabel,a,5,,x\n")
    assert main(["run", "--stream", str(tmp_path / "log"), "--model", "majority", "--delay",
                 "100", "--out", str(tmp_path / "run2"), "--runner", "direct", "--quiet"]) == 2
    assert "--delay 100 means nothing here" in capsys.readouterr().err


def test_lines_with_too_few_fields_are_dead_letters(tmp_path):
    # A file cut mid-line, and a short line inside one (pandas would fill both with NaN); an
    # empty field in a whole line is a missing value, not a short line.
    path = _write(tmp_path, "cut.csv", "time,f,g,label\n0,1.0,2.0,a\n1,1.5,2.5,b\n2,3.0")
    events, dead = read(path, delay="1")
    assert [(d["row"], d["reason"]) for d in dead] == [
        (3, "the line is cut short: 2 of 4 fields (the file ends mid-line)")]
    assert [e[4] for e in events if e[3] == "instance"] == [0, 1]
    path = _write(tmp_path, "short.csv", "time,f,g,label\n0,1.0,2.0,a\n1,1.5\n2,3.0,1.0,b\n"
                                         "3,2.0,,a\n")
    events, dead = read(path, delay="1")
    assert [(d["row"], d["field"], d["reason"]) for d in dead] == [
        (2, None, "the line is cut short: 2 of 4 fields"),
        (4, "g", 'feature is missing (an empty cell, NaN, null, a CSV cell NA, N/A or None, or '
                 'an absent key); the stream option {"missing": "drop"} keeps such rows '
                 'without it, {"na_values": []} reads only an empty CSV cell as missing')]
    assert [e[5] for e in events if e[3] == "instance"] == [{"f": 1.0, "g": 2.0},
                                                            {"f": 3.0, "g": 1.0}]


def test_a_disk_that_fills_while_workers_write_is_an_out_error(tmp_path, monkeypatch, capsys):
    """A worker's full disk (writing a curve part) is the output's trouble: one line naming
    --out, exit status 2, the previous results untouched — not an internal error."""
    import errno

    import pipelines.write

    out = tmp_path / "out"
    argv = ["run", "--stream", 'synth:SEA{"n": 300, "seed": 4}', "--model", "majority",
            "--delay", "10", "--out", str(out), "--runner", "direct", "--quiet"]
    assert main(argv) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def full(table, folder):
        raise OSError(errno.ENOSPC, "No space left on device", f"{folder}/part.arrow")

    monkeypatch.setattr(pipelines.write, "_write_curve_part", full)
    assert main(argv) == 2
    err = without_notices(capsys.readouterr().err).strip()
    assert err.count("\n") == 0 and err.startswith(f"delayed-eval: error: --out {out}: ")
    assert "No space left on device" in err and "free space there" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_staging_folder_removed_while_the_run_goes_on_is_one_line(tmp_path, monkeypatch,
                                                                     capsys):
    """Something else deletes --out while the run writes it: one line naming the missing file
    and what to do, exit status 2 — not an internal error asking for a bug report."""
    import shutil

    import pipelines.write

    out = tmp_path / "out"
    read_arrow = pipelines.write.read_arrow

    def after_a_cleaner(path):
        shutil.rmtree(out)
        return read_arrow(path)

    monkeypatch.setattr(pipelines.write, "read_arrow", after_a_cleaner)
    assert main(["run", "--stream", 'synth:SEA{"n": 300, "seed": 4}', "--model", "majority",
                 "--delay", "10", "--out", str(out), "--runner", "direct", "--quiet"]) == 2
    err = without_notices(capsys.readouterr().err).strip()
    assert err.count("\n") == 0 and err.startswith(f"delayed-eval: error: --out {out}: {out}/"
                                                    ".staging-")
    assert err.endswith(".arrow, a file this run wrote there, is gone (the folder removed or "
                        "cleaned while the run went on?); run again and leave --out alone "
                        "until the run ends")


def test_an_instance_set_aside_does_not_stand_for_its_id(tmp_path):
    """The pass that notes each instance id's time skips the rows the read sets aside (a bad
    time, a value that is no number, a NaN feature), so a later valid row with that id is its
    instance, not a duplicate, and labels are judged against that row's time. Expected events
    and dead letters written by hand."""
    (tmp_path / "log.csv").write_text(
        "id,time,kind,f1,f2,label\n"
        "a,soon,instance,1,2,\n"      # row 1: bad time
        "b,1,instance,oops,2,\n"      # row 2: no number
        "c,2,instance,nan,2,\n"       # row 3: NaN feature
        "a,3,instance,1,1,\n"         # row 4: a's instance
        "b,4,instance,2,2,\n"         # row 5: b's instance
        "c,5,instance,3,3,\n"         # row 6: c's instance
        "a,6,instance,5,5,\n"         # row 7: a again: a duplicate
        "c,4.5,label,,,yes\n"         # row 8: earlier than c's instance at 5
        "a,7,label,,,no\n"            # row 9
        "b,8,label,,,yes\n")          # row 10
    events, dead = read(str(tmp_path / "log.csv"))
    assert [(e[0], e[3], e[4]) for e in events] == [
        (3.0, "instance", "a"), (4.0, "instance", "b"), (5.0, "instance", "c"),
        (7.0, "label", "a"), (8.0, "label", "b")]
    assert sorted((d["row"], " ".join(d["reason"].split(" ")[:3])) for d in dead) == [
        (1, "time 'soon' is"), (2, "value 'oops' is"), (3, "feature is missing"),
        (7, "duplicate instance id"), (8, "label at 4.5")]
    # With missing values dropped, c's NaN row is its instance and "oops" still is no number.
    events, dead = read(str(tmp_path / "log.csv") + '{"missing": "drop"}')
    assert [(e[0], e[3], e[4]) for e in events] == [
        (2.0, "instance", "c"), (3.0, "instance", "a"), (4.0, "instance", "b"),
        (4.5, "label", "c"), (7.0, "label", "a"), (8.0, "label", "b")]
    assert sorted((d["row"], d["reason"]) for d in dead) == [
        (1, "time 'soon' is neither a number nor an ISO datetime"),
        (2, "value 'oops' is not a number"), (6, "duplicate instance id 'c'"),
        (7, "duplicate instance id 'a'")]


@pytest.mark.parametrize("written, day_first, iso", [
    ("01/11/2026 11:00", "%d/%m/%Y %H:%M", "2026-11-01 11:00"),
    ("1.11.2026", "%d.%m.%Y", "2026-11-01"),
    ("11-01-26 8:00", "%d-%m-%y %H:%M", "2026-01-11 08:00")])
def test_a_date_written_day_or_month_first_gets_the_time_format_that_reads_it(
        tmp_path, capsys, written, day_first, iso):
    """Such a date has no one reading (is 01/11 the 1st of November or the 11th of January?):
    one line before the run gives both formats, or the one that reads every time of the first
    rows once one of them says (30/11). With it given, the run reads the times; without the
    line, every row was a dead letter. Oracle: the formats written by hand."""
    month_first = day_first.replace("%d", "%D").replace("%m", "%d").replace("%D", "%m")
    path = tmp_path / "d.csv"
    path.write_text("time,x,label\n" + "".join(f"{written},{i},{i % 2}\n" for i in range(20)))
    args = ["run", "--model", "no-change", "--delay", "2", "--out", str(tmp_path / "o"),
            "--runner", "direct", "--quiet"]
    code = main([*args, "--stream", str(path)])
    assert code == 2 and capsys.readouterr().err == (
        f"delayed-eval: error: {path}, column time: time '{written}' is neither a number nor "
        f'an ISO datetime; give the stream option {{"time_format": "{day_first}"}} if the day '
        f'comes first, {{"time_format": "{month_first}"}} if the month does (or write dates '
        f"year first, as ISO 8601 does: {iso})\n")
    later = re.sub(r"^\d+", "30", written)  # the 30th: the day comes first
    path.write_text("time,x,label\n" + "".join(f"{written},{i},{i % 2}\n" for i in range(10))
                    + "".join(f"{later},{i},{i % 2}\n" for i in range(10)))
    assert main([*args, "--stream", str(path)]) == 2
    assert capsys.readouterr().err.endswith(f'give the stream option {{"time_format": '
                                            f'"{day_first}"}}\n')
    assert main([*args, "--stream", f'{path}{{"time_format": "{day_first}"}}']) == 0


@pytest.mark.parametrize("pattern", [
    "%a, %d %b %Y %H:%M:%S %z",  # RFC 2822: e-mail, HTTP
    "%a, %d %b %Y %H:%M:%S %Z",  # ... with GMT
    "%d/%b/%Y:%H:%M:%S %z",  # Apache's access log
    "%b %d, %Y %I:%M %p",  # US, with AM and PM
    "%A, %B %d, %Y %H:%M",
    "%d-%b-%Y",  # Oracle
    "%d %b %Y %H:%M"])
def test_a_date_whose_month_is_a_word_gets_the_time_format_that_reads_it(
        tmp_path, capsys, pattern):
    """A log's dates written with the month as a word, which ISO 8601 does not read: as the
    time column, one line names the time_format that reads them (before, every row was a dead
    letter); with it, the times are read; as a feature, the column is dates, not free text
    (before, the model failed on text and the line offered one-hot encoding), and the line
    names the options that make it the event time. Oracle: the times written by Python's
    strftime from known UTC datetimes, 5 h 7 min apart, so days and the AM/PM change."""
    import datetime as dt

    start = dt.datetime(2026, 11, 29, 1, 0, tzinfo=dt.timezone.utc)
    times = [start + dt.timedelta(minutes=307 * i) for i in range(30)]
    if "%H" not in pattern and "%I" not in pattern:
        times = [start.replace(hour=0) + dt.timedelta(days=i) for i in range(30)]
    written = [t.strftime(pattern).replace("UTC", "GMT") for t in times]
    path = tmp_path / "log.csv"
    pd.DataFrame({"created": written, "x": range(30), "label": [i % 2 for i in range(30)]}
                 ).to_csv(path, index=False)
    out = tmp_path / "o"
    args = ["run", "--model", "no-change", "--delay", "2", "--out", str(out), "--runner",
            "direct", "--quiet", "--repredict", "none"]
    option = json.dumps({"time_format": pattern})
    assert main([*args, "--stream", f'{path}{{"time": "created"}}']) == 2
    assert capsys.readouterr().err == (
        f"delayed-eval: error: {path}, column created: time {written[0]!r} is neither a number "
        f"nor an ISO datetime; give the stream option {option}\n")
    assert main([*args, "--stream", f'{path}{{"time": "created", "time_format": "{pattern}"}}'
                 ]) == 0
    log = pd.read_parquet(out / "predictions.parquet")
    assert log.query("kind == 'initial'")["t"].tolist() == [t.timestamp() for t in times]
    if "%z" in pattern or "%Z" in pattern:  # the zone written wins over the time_zone option
        zoned = json.dumps({"time": "created", "time_format": pattern,
                            "time_zone": "Europe/Berlin"})
        assert main([*args, "--stream", f"{path}{zoned}"]) == 0
        log = pd.read_parquet(out / "predictions.parquet")
        assert log.query("kind == 'initial'")["t"].tolist() == [t.timestamp() for t in times]
    assert main([*args, "--stream", str(path)]) == 2
    both = json.dumps({"time": "created", "time_format": pattern})
    assert capsys.readouterr().err.startswith(
        f"delayed-eval: error: {path}: column 'created' holds dates, which a model cannot take "
        f"as a feature; give {both} if it is the event time, or leave it out with ")


def test_a_time_format_that_is_no_strftime_pattern_is_one_line(tmp_path, capsys):
    """Weka's dd/MM/yyyy, or a pattern pandas refuses, in a stream and in a prediction log."""
    path = tmp_path / "d.csv"
    path.write_text("time,x,label\n01/11/2026,1,a\n")
    for options, what in (('{"time_format": "dd/MM/yyyy"}', "'dd/MM/yyyy' is no strftime "
                           "pattern;"),
                          ('{"time_format": "%d/%m/%Q"}', "'%d/%m/%Q' is no strftime pattern "
                           "('Q' is a bad directive in format '%d/%m/%Q');")):
        assert main(["run", "--stream", f"{path}{options}", "--model", "no-change", "--out",
                     str(tmp_path / "o"), "--runner", "direct", "--quiet"]) == 2
        assert capsys.readouterr().err == (
            f"delayed-eval: error: stream d: time_format {what} write it with % codes, e.g. "
            f'{{"time_format": "%d/%m/%Y %H:%M"}} for 01/11/2026 08:30\n')
    with pytest.raises(InputError, match=r"prediction log p.csv: time_format 'dd/MM/yyyy' is"):
        PredictionLogSpec.parse('p.csv{"time_format": "dd/MM/yyyy"}')


def test_times_in_milliseconds_are_named_and_read_with_their_unit(tmp_path, capsys):
    """Epoch milliseconds read as seconds are after the year 9999: one line before the run
    (the first rows), a dead letter for a later row; `time_unit` reads them, in a stream and
    in a prediction log. Oracle: the times as written, divided by 1000 by hand; 1.7e9 s is
    2023-11-14 (UTC)."""
    t0 = 1_700_000_000_000
    rows = [(i, t0 + 1000 * i, i % 3 / 2) for i in range(30)] + [(30, t0 * 1000, 0.5)]
    _write(tmp_path, "inst.csv", "id,time,x\n" + "".join(f"{i},{t},{x}\n" for i, t, x in rows))
    _write(tmp_path, "lab.csv", "id,time,label\n" + "".join(
        f"{i},{t + 5000},{'ab'[i % 2]}\n" for i, t, _ in rows))
    _write(tmp_path, "preds.csv", "id,t,model,y_pred\n" + "".join(
        f"{i},{t},m,a\n" for i, t, _ in rows))
    stream = f'{tmp_path}/inst.csv{{"labels": "{tmp_path}/lab.csv"'
    args = ["backfill", "--out", str(tmp_path / "bf"), "--runner", "direct", "--quiet"]
    assert main([*args, "--stream", stream + "}", "--predictions", f"{tmp_path}/preds.csv"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"delayed-eval: error: {tmp_path}/inst.csv, column time: time 1700000000000 is after "
        'the year 9999 in seconds; are the times in milliseconds? give the stream option '
        '{"time_unit": "ms"} (or us, ns)')
    events, dead = read(stream + ', "time_unit": "ms"}')
    assert sorted((e[4], e[0]) for e in events if e[3] == "instance") == sorted(
        (str(i), t / 1000) for i, t, _ in rows[:30])
    hint = ' is after the year 9999 in milliseconds; are the times in microseconds? give ' \
        'the stream option {"time_unit": "us"} (or ns)'
    assert [(os.path.basename(d["file"]), d["row"], d["field"], d["reason"]) for d in dead] == [
        ("inst.csv", 31, "time", f"time {t0 * 1000}{hint}"),
        ("lab.csv", 31, "time", f"time {t0 * 1000 + 5000}{hint}")]
    assert main([*args, "--stream", stream + ', "time_unit": "ms"}', "--predictions",
                 f'{tmp_path}/preds.csv{{"time_unit": "ms"}}']) == 0
    maturity = read_csv(tmp_path / "bf" / "maturity.csv")
    assert maturity[["date", "instances", "labelled"]].values.tolist() == [["2023-11-14", 30, 30]]


def test_a_quote_never_closed_names_its_row(tmp_path, capsys):
    """A quote opened in a field and never closed makes pandas read the rest of the file as
    that field: in the first rows, or after the first chunk (70 000 rows)."""
    for rows, bad in ((5, 2), (70_010, 70_000)):
        lines = [f"{i},{i % 7 / 7},{'ab'[i % 2]}" for i in range(1, rows + 1)]
        lines[bad - 1] = lines[bad - 1][:-1] + '"' + lines[bad - 1][-1]
        path = tmp_path / "q.csv"
        path.write_text("time,x,label\n" + "\n".join(lines) + "\n")
        code = main(["run", "--stream", str(path), "--model", "majority", "--delay", "1",
                     "--out", str(tmp_path / "o"), "--runner", "direct", "--quiet"])
        assert code == 2 and capsys.readouterr().err == (
            f"delayed-eval: error: {path}, row {bad}: a quote opened in the row is not closed "
            f"before the end of the file, so the rest of the file would be one field; close it "
            f'(a quote inside a quoted field is written twice, "")\n')


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_log_whose_rows_name_no_model_is_refused_unless_models_are_named(tmp_path, capsys,
                                                                           fmt):
    """A model column with gaps: as a CSV's empty text those rows were a model named '', as
    Parquet nulls they were left out unsaid."""
    pd.DataFrame({"id": range(20), "time": range(20), "label": [0, 1] * 10}).to_csv(
        tmp_path / "rows.csv", index=False)
    log = pd.DataFrame({"id": range(20), "t": [i + 0.5 for i in range(20)], "y_pred": 1,
                        "model": [None] * 5 + ["v1"] * 15})
    path = tmp_path / f"log.{fmt}"
    log.to_csv(path, index=False) if fmt == "csv" else log.to_parquet(path)
    argv = ["backfill", "--stream", f"s={tmp_path / 'rows.csv'}", "--predictions", str(path),
            "--delay", "3", "--out", str(tmp_path / "o"), "--runner", "direct", "--quiet"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"delayed-eval: error: prediction log {path}: some of its rows name no model (their "
        f"'model' is empty or missing); name their model in the log, or score the named ones "
        f"alone with --model NAME\n")
    assert main([*argv, "--model", "v1"]) == 0
    counts = json.loads((tmp_path / "o" / "manifest.json").read_text())["counts"]
    assert [(c["model"], c["logged_predictions"]) for c in counts] == [("v1", 15)]


def test_a_label_that_is_a_list_is_no_class(tmp_path, capsys):
    """A JSON Lines label written as a list (`[1]`) is neither the class `1` nor the text
    `"[1]"`: a column of them stops the run in one line, a stray one is a dead letter (its
    instance waits for a label), and the counts add up."""
    lines = [{"time": i, "x": i / 10, "label": "a" if i % 3 else "b"} for i in range(40)]
    lines[7]["label"] = [1]
    stray = tmp_path / "stray.jsonl"
    stray.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "out"
    assert main(["run", "--stream", f"s={stray}", "--model", "majority", "--delay", "2",
                 "--repredict", "none", "--out", str(out), "--runner", "direct",
                 "--quiet"]) == 0
    dead = [json.loads(line) for line in (out / "dead_letters.jsonl").read_text().splitlines()]
    assert [(d["row"], d["field"], d["reason"]) for d in dead] == [
        (8, "label", "label [1] is a list, not one class or one number")]
    manifest = json.loads((out / "manifest.json").read_text())
    counts = manifest["counts"][0]
    assert (counts["instances"], counts["labels"], counts["pending_at_end"]) == (40, 39, 1)
    assert manifest["dead_letters"] == 1
    summary = read_csv(out / "summary.csv")
    assert set(summary["class"].dropna()) == {"a", "b"}  # no class "[1]"
    # A column of lists: one line before the run.
    listed = tmp_path / "listed.parquet"
    pd.DataFrame({"x": [0.5] * 20, "label": [[i % 2] for i in range(20)]}).to_parquet(listed)
    capsys.readouterr()
    assert main(["run", "--stream", f"s={listed}", "--model", "gaussian-nb", "--delay", "2",
                 "--out", str(tmp_path / "out2"), "--runner", "direct", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"delayed-eval: error: {listed}: column 'label' holds lists, and a label is "
                   f"one class or one number; write one label per row, or name the label "
                   f'column with the stream option {{"label": "..."}}')


def test_a_stream_spec_with_an_empty_name_says_so(tmp_path, capsys):
    """`=synth:SEA{...}` is not a file called `=synth:SEA` with unknown options."""
    assert main(["run", "--stream", '=synth:SEA{"n": 100}', "--model", "majority",
                 "--out", str(tmp_path), "--runner", "direct", "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        "delayed-eval: error: stream =synth:SEA{\"n\": 100}: the name before '=' is empty; "
        "give NAME=SOURCE, or leave out the '='")


def test_a_misspelled_option_names_the_one_it_was_likely_meant_to_be(tmp_path, capsys):
    path = tmp_path / "rows.csv"
    pd.DataFrame({"t": [1, 2], "x": [0.0, 1.0], "y": ["a", "b"]}).to_csv(path, index=False)
    assert main(["run", "--stream", f'{path}{{"time": "t", "lable": "y"}}', "--model",
                 "majority", "--out", str(tmp_path / "o"), "--runner", "direct"]) == 2
    assert "stream rows: unknown option(s) ['lable'] (did you mean 'label'?); known: [" in \
        capsys.readouterr().err
    assert main(["backfill", "--stream", f'{path}{{"time": "t", "label": "y"}}',
                 "--predictions", f'{path}{{"predicton": "y", "timezone": "UTC"}}', "--out",
                 str(tmp_path / "o"), "--runner", "direct"]) == 2
    assert f"prediction log {path}: unknown option(s) ['predicton', 'timezone'] (did you " \
        f"mean 'prediction' for 'predicton', 'time_zone' for 'timezone'?); known: [" in \
        capsys.readouterr().err
    assert main(["run", "--stream", 'synth:SEA{"n": 50, "nosie": 0.1}', "--model", "majority",
                 "--out", str(tmp_path / "o"), "--runner", "direct"]) == 2
    assert "stream sea: SEA: unknown option(s) ['nosie'] (did you mean 'noise'?); known: [" \
        in capsys.readouterr().err
    assert main(["run", "--stream", 'dataset:Phishing{"nn": 50}', "--model", "majority",
                 "--out", str(tmp_path / "o"), "--runner", "direct"]) == 2  # (was ignored)
    assert "stream phishing: dataset Phishing: unknown option(s) ['nn'] (did you mean 'n'?)" \
        in capsys.readouterr().err


def test_a_missing_time_or_a_list_of_times_is_a_dead_letter_that_says_which(tmp_path):
    """An empty time cell is missing, not "time nan is neither a number ..."; a JSON list
    as a time, a label time or an id is a dead letter of its row (it stopped the read: "the
    truth value of an array ... is ambiguous")."""
    path = tmp_path / "times.jsonl"
    path.write_text(
        '{"time": 1, "x": 1, "label": "a", "label_time": 2}\n'
        '{"time": [2, 3], "x": 2, "label": "b", "label_time": 3}\n'
        '{"time": 3, "x": 3, "label": "a", "label_time": [4, 5]}\n'
        '{"time": null, "x": 4, "label": "b", "label_time": 5}\n'
        '{"time": 5, "x": 5, "label": "b", "label_time": 6}\n')
    events, dead = read(str(path))
    assert [(e[3], e[0]) for e in events] == [("instance", 1.0), ("label", 2.0),
                                              ("instance", 3.0), ("instance", 5.0),
                                              ("label", 6.0)]
    assert [(d["row"], d["field"], d["reason"]) for d in dead] == [
        (2, "time", "time [2, 3] is neither a number nor an ISO datetime"),
        (3, "label_time", "label time [4, 5] is neither a number nor an ISO datetime; the "
                          "label is set aside, its instance waits"),
        (4, "time", "the time is missing (an empty cell, NaN or null)")]


@pytest.mark.parametrize("argv, where", [
    (["run", "--stream", 'synth:SEA{"n": 50}', "--model", "majority", "--delay", "5", "--out",
      "gs://bucket/eval", "--runner", "direct"], "--out gs://bucket/eval"),
    (["run", "--stream", "gs://bucket/trips.csv", "--model", "majority", "--delay", "5",
      "--out", "OUT", "--runner", "direct"], "stream trips: gs://bucket/trips.csv"),
    (["backfill", "--stream", "trips.csv", "--predictions", "gs://bucket/log", "--out", "OUT",
      "--runner", "direct"], "--predictions gs://bucket/log"),
    (["report", "gs://bucket/eval"], "report gs://bucket/eval"),
    (["trend", "gs://bucket/fraud"], "trend gs://bucket/fraud"),
    (["rank", "RUN", "--out", "gs://bucket/ranks"], "--out gs://bucket/ranks"),
])
def test_an_object_store_whose_client_is_not_installed_is_one_line(tmp_path, monkeypatch,
                                                                    capsys, argv, where):
    """gs:// without Beam's gcp extra: one line naming the path and the extra to install,
    exit status 2, nothing written — not an internal error from deep inside Beam."""
    monkeypatch.setitem(pipelines.files.FILESYSTEM_PACKAGES, "gs",
                        ("a_package_not_installed", "gcp"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "trips.csv").write_text("time,f,label\n0,1.0,a\n")
    (tmp_path / "RUN").mkdir()
    argv = [str(tmp_path / "OUT") if a == "OUT" else a for a in argv]
    assert main(argv) == 2
    assert without_notices(capsys.readouterr().err) == (
        f"delayed-eval: error: {where}: gs:// paths need Beam's gcp extra, which is not "
        f"installed here; install it (pip install 'apache-beam[gcp]') or give a local path\n")
    assert sorted(os.listdir(tmp_path)) == ["RUN", "trips.csv"]


def test_a_path_of_no_known_filesystem_is_one_line(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["run", "--stream", "ftp://host/trips.csv", "--model", "majority", "--delay",
                 "5", "--out", str(out), "--runner", "direct"]) == 2
    assert without_notices(capsys.readouterr().err) == (
        "delayed-eval: error: stream trips: ftp://host/trips.csv: no filesystem here reads or "
        "writes ftp:// paths; give a local path, or one on gs://, s3://, azfs:// or hdfs://\n")
    assert not out.exists()


@pytest.mark.parametrize("orient", ["records", "columns", "index", "values", "split", "table",
                                    "records-indented"])
def test_a_json_file_of_a_whole_table_is_named_so(tmp_path, orient):
    """pandas' to_json without lines=True writes one JSON document of the whole table: it
    was 'no line is a JSON object' or 'column label not found; columns are ['time.0',
    'time.1', ...]'. One line names it and the call that writes JSON Lines; that file runs."""
    frame = pd.DataFrame({"time": range(40), "x": np.linspace(-1, 1, 40),
                          "label": ["a", "b"] * 20})
    path = str(tmp_path / "frame.json")
    frame.to_json(path, orient=orient.split("-")[0], indent=2 if "indented" in orient else None)
    with pytest.raises(InputError, match=re.escape(
            f"{path}: one JSON document holding a whole table (as pandas' to_json writes it "
            f"without lines=True), not JSON Lines, one object per row; write it with "
            f'df.to_json(path, orient="records", lines=True)')):
        StreamSpec.parse(path).check()
    frame.to_json(path, orient="records", lines=True)
    StreamSpec.parse(path).check()


@pytest.mark.parametrize("orient", ["records", "columns"])
def test_a_json_prediction_log_of_a_whole_table_is_named_so(tmp_path, capsys, orient):
    """The same for a prediction log, whose .json file named itself is read as JSON Lines
    (in a folder a .json file is a run's manifest or such, and left out)."""
    stream = _write(tmp_path, "s.csv", "id,time,x,label\n1,1,0.5,a\n2,2,0.7,b\n")
    log = pd.DataFrame({"id": ["1", "2"], "t": [1.5, 2.5], "y_pred": ["a", "b"]})
    path = str(tmp_path / "log.json")
    log.to_json(path, orient=orient)
    args = ["backfill", "--stream", stream, "--predictions", path, "--delay", "1", "--out",
            str(tmp_path / "out"), "--runner", "direct", "--quiet"]
    assert main(args) == 2
    assert capsys.readouterr().err == f"delayed-eval: error: {path}: one JSON document " \
        f"holding a whole table (as pandas' to_json writes it without lines=True), not JSON " \
        f'Lines, one object per row; write it with df.to_json(path, orient="records", ' \
        f'lines=True)\n'
    log.to_json(path, orient="records", lines=True)
    assert main(args) == 0


def test_a_workbook_or_a_file_of_no_known_format_says_what_to_give(tmp_path):
    """A .xlsx file was 'unknown format; give one of [...] with {"format": ...}', none of
    which reads a workbook."""
    book = _write(tmp_path, "sales.xlsx", "PK")
    with pytest.raises(InputError, match=re.escape(
            f"{book}: a spreadsheet workbook, which is not read; save its sheet as CSV, or "
            f"give it from Python as data, evaluate(pd.read_excel(path), ...)")):
        StreamSpec.parse(book).check()
    text = _write(tmp_path, "rows.txt", "time,x,label\n0,1.0,a\n")
    with pytest.raises(InputError, match=re.escape(
            f"{text}: unknown format; give one of ['arff', 'csv', 'jsonl', 'parquet'] with "
            f'{{"format": ...}}')):
        StreamSpec.parse(text).check()
    StreamSpec.parse(text + '{"format": "csv"}').check()


def test_a_header_line_repeated_in_a_csv_file_is_named_so(tmp_path):
    """Two exports joined (`cat day1.csv day2.csv`) keep the second's header line as a row:
    its dead letter said "time 'time' is neither a number nor an ISO datetime"."""
    def export(times):
        return "time,x,label\n" + "".join(f"{t},{t / 10},{'ab'[t % 2]}\n" for t in times)

    path = _write(tmp_path, "joined.csv", export(range(10)) + export(range(10, 20)))
    events, dead = read(path, delay="1")
    assert [(d["row"], d["field"], d["reason"]) for d in dead] == [
        (11, None, "the header line again (files joined with their headers?)")]
    assert dead[0]["record"] == {"time": "time", "x": "x", "label": "label"}
    assert len([e for e in events if e[3] == "instance"]) == 20
