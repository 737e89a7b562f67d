"""The same evaluation on every local runner arrangement gives the same files."""

import json
import os

import pandas as pd
import pytest

from pipelines.config import RunConfig
from pipelines.job import run
from transforms.errors import InputError

STREAMS = ['sea=synth:SEA{"n": 1200, "seed": 3, "noise": 0.1}',
           'agrawal=synth:Agrawal{"n": 1200, "seed": 4}']
MODELS = ["no-change", "gaussian-nb", "hoeffding-tree"]


def _results(tmp_path, runner, beam_args=()):
    """The summary, and the prediction log's bytes (its parts, written by the workers, are
    gathered in one order whatever the runner)."""
    out = tmp_path / runner
    run(RunConfig(streams=STREAMS, models=MODELS, delay="100", bins=5, windows=[200],
                  repredict="every_k_labels:2", out=str(out), runner=runner, run_id="same",
                  beam_args=list(beam_args), quiet=True))
    return (out / "summary.csv").read_text(), (out / "predictions.parquet").read_bytes()


@pytest.fixture(scope="session")  # (computed once per test process)
def in_memory(tmp_path_factory):
    return _results(tmp_path_factory.mktemp("direct"), "direct")


@pytest.mark.parametrize("runner,beam_args", [
    ("direct-mp", ["--direct_num_workers=2"]),    # FnApiRunner, worker subprocesses
    ("portable", []),                              # PortableRunner, local job service, LOOPBACK
    ("portable-pool", ["--sdk_worker_parallelism=2"]),  # ... and an EXTERNAL worker pool
])
def test_every_runner_gives_the_identical_summary(tmp_path, in_memory, runner, beam_args):
    summary, predictions = _results(tmp_path, runner, beam_args)
    assert "comparison" in in_memory[0] and "binned" in in_memory[0]
    assert summary == in_memory[0]
    assert predictions == in_memory[1]


def test_the_command_gives_the_same_numbers_in_every_process(tmp_path):
    """Python salts the hashes of text anew in each process, and river's adaptive tree and kNN
    break a tie between classes in the order of a set of them: on classes named by text, two
    runs of the command (a process each, the second with worker processes) give the same
    predictions, with the hash seed the manifest names."""
    import itertools
    import subprocess
    import sys

    from river.datasets import synth

    data = itertools.islice(synth.LED(seed=4, noise_percentage=0.2), 600)
    pd.DataFrame([{"time": i, **{f"f{k}": v for k, v in x.items()}, "label": f"d{y}"}
                  for i, (x, y) in enumerate(data)]).to_csv(tmp_path / "led.csv", index=False)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    logs = []
    for i, runner in enumerate(["direct", "direct-mp"]):
        out = tmp_path / f"out{i}"
        subprocess.run([sys.executable, "-m", "pipelines.cli", "run",
                        "--stream", str(tmp_path / "led.csv"), "--model", "knn",
                        "--model", "hoeffding-adaptive-tree", "--delay", "20",
                        "--runner", runner, "--out", str(out)], env=env, check=True,
                       capture_output=True)
        assert json.loads((out / "manifest.json").read_text())["python_hash_seed"] == "0"
        logs.append(pd.read_parquet(out / "predictions.parquet"))
    assert len(logs[0]) > 2000
    pd.testing.assert_frame_equal(logs[0], logs[1])


def _text_classes(path) -> None:
    """A small labelled-rows stream whose classes are text."""
    pd.DataFrame({"time": range(60), "x": [i % 5 for i in range(60)],
                  "label": ["no", "yes", "yes"] * 20}).to_csv(path, index=False)


def test_a_replay_without_a_fixed_hash_seed_is_named_where_classes_are_text(
        tmp_path, monkeypatch, capsys):
    """A process the models ran in without a fixed hash seed (Python started without
    PYTHONHASHSEED: a notebook, a cluster's worker) is in the manifest, and a line says what
    it may change where classes are text; none where they are numbers or the seed is fixed."""
    import transforms.replay.engine

    _text_classes(tmp_path / "rows.csv")
    for seed, stream, told in [("random", str(tmp_path / "rows.csv"), True),
                               ("random", STREAMS[0], False),
                               ("0", str(tmp_path / "rows.csv"), False)]:
        monkeypatch.setattr(transforms.replay.engine, "hash_seed", lambda seed=seed: seed)
        out = tmp_path / f"out-{seed}-{told}"
        run(RunConfig(streams=[stream], models=["no-change"], delay="5", out=str(out),
                      runner="direct", repredict="none", quiet=False))
        assert json.loads((out / "manifest.json").read_text())["python_hash_seed"] == seed
        assert ("rows: classes named by text, and models run in a Python without a fixed hash "
                "seed (PYTHONHASHSEED)" in capsys.readouterr().out) == told
    # A backfill runs no model: nothing of it depends on the seed.
    monkeypatch.setattr(transforms.replay.engine, "hash_seed", lambda: "random")
    run(RunConfig(streams=[str(tmp_path / "rows.csv")], models=[], delay="5", runner="direct",
                  predictions=str(tmp_path / "out-random-True" / "predictions.parquet"),
                  out=str(tmp_path / "backfilled"), quiet=False))
    assert "PYTHONHASHSEED" not in capsys.readouterr().out


def test_worker_processes_started_from_python_hash_text_as_the_command_does(tmp_path,
                                                                           monkeypatch):
    """From a Python started without PYTHONHASHSEED (a notebook), the worker processes a run
    starts get seed 0, as the command's do; the Python's own environment is left as it was."""
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    _text_classes(tmp_path / "rows.csv")
    run(RunConfig(streams=[str(tmp_path / "rows.csv")], models=["knn"], delay="5",
                  out=str(tmp_path / "out"), runner="direct-mp", repredict="none", quiet=True))
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["python_hash_seed"] \
        == "0"
    assert "PYTHONHASHSEED" not in os.environ


def test_a_worker_side_error_is_one_line_on_a_portable_runner(tmp_path):
    # The prediction log is read on a worker: its InputError crosses the Fn API as data and is
    # raised again, by type, on the driver.
    log = tmp_path / "p.parquet"
    pd.DataFrame({"id": ["1"], "when": [0.0], "y_pred": ["a"]}).to_parquet(log)
    with pytest.raises(InputError) as e:
        run(RunConfig(streams=['synth:SEA{"n": 20}'], models=["m"], predictions=str(log),
                      out=str(tmp_path / "o"), runner="portable", quiet=True))
    assert str(log) in str(e.value) and "'t'" in str(e.value) and "\n" not in str(e.value)


def test_a_runner_without_its_options_is_one_line_not_an_internal_error(tmp_path, capsys):
    """Dataflow without a project (its options are checked offline): the user's setup to fix,
    named with the runner, exit 2 — not 'internal error ... please report it'."""
    from pipelines.cli import main

    assert main(["run", "--stream", 'synth:SEA{"n": 20}', "--model", "majority", "--out",
                 str(tmp_path / "o"), "--runner", "DataflowRunner"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("delayed-eval: error: --runner DataflowRunner: the job failed or "
                          "could not start: ") and "Missing required option: project" in err
    assert "\n" not in err and err.endswith("give the runner's options after the command "
                                             "(docs/runners.md)")


# (Beam's thread that watched the worker raises as it goes: the CLI's stderr drops it)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_worker_process_that_ends_is_one_line(tmp_path, capsys):
    """A model that ends its worker process (a crash, memory): not 'internal error ...
    please report it' but where to look; nothing is published."""
    from pipelines.cli import main

    assert main(["run", "--stream", 'synth:SEA{"n": 50}', "--model",
                 "tests.helpers.EndsItsProcess", "--out", str(tmp_path / "o"), "--runner",
                 "direct-mp", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("delayed-eval: error: --runner direct-mp: a worker process ended "
                          "during the run (") and err.count("\n") == 1
    assert "--runner direct to see the failure in this process" in err
    assert not os.listdir(tmp_path / "o")


@pytest.mark.parametrize("runner", ["direct", "direct-mp"])
def test_a_model_that_exits_the_program_is_a_model_error(tmp_path, capsys, runner):
    """sys.exit(0) in learn_one: not an internal error (nor exit 0 with nothing evaluated) but
    the model's error, naming it and the instance; with --on-model-error dead-letter, the
    instance is set aside and the run goes on."""
    from pipelines.cli import main

    argv = ["run", "--stream", 's=synth:SEA{"n": 50}', "--model", "tests.helpers.ExitsTheProgram",
            "--delay", "1", "--out", str(tmp_path / "o"), "--runner", runner, "--quiet"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "delayed-eval: error: model ExitsTheProgram, stream s, instance 19: learn_one raised "
        "SystemExit: 0; a model that ends the program (sys.exit) would end the run: fix the "
        "model; or skip such instances with --on-model-error dead-letter\n")
    assert main([*argv, "--on-model-error", "dead-letter"]) == 0
    counts = json.loads((tmp_path / "o" / "manifest.json").read_text())["counts"][0]
    assert counts["model_errors"] == 1 and counts["labelled"] == 49


def test_direct_mp_workers_are_ours_and_run_their_exit_functions(tmp_path):
    """`direct-mp`'s worker processes run `runners.worker` (Beam's SDK worker ending without
    Python's teardown, which the runner waits for worker by worker); what the teardown would
    have run for a step's code, its exit functions, still runs before each worker ends."""
    import apache_beam as beam

    from runners import runner_session

    def note(_, folder=str(tmp_path)):
        import atexit  # in the worker process
        import os
        import sys

        def written():
            with open(os.path.join(folder, str(os.getpid())), "w") as f:
                f.write(sys.modules["__main__"].__spec__.name)

        if not getattr(sys, "_noted", False):
            sys._noted = True
            atexit.register(written)

    with runner_session("direct-mp", ["--direct_num_workers=2"]) as (runner, options):
        with beam.Pipeline(runner=runner, options=options) as p:
            _ = p | beam.Create(range(8)) | beam.Reshuffle() | beam.Map(note)
    workers = list(tmp_path.iterdir())
    assert workers and {path.read_text() for path in workers} == {"runners.worker"}


def _thread_variables_seen_by_the_workers(name, beam_args, folder) -> set:
    """What the numerical libraries' thread variables are in the processes running a step."""
    import apache_beam as beam

    from runners import THREAD_VARIABLES, runner_session

    def note(_):
        import os  # in the worker process

        with open(os.path.join(folder, str(os.getpid())), "w") as f:
            f.write(repr(tuple(os.environ.get(v) for v in THREAD_VARIABLES)))

    with runner_session(name, beam_args) as (runner, options):
        with beam.Pipeline(runner=runner, options=options) as p:
            _ = p | beam.Create(range(8)) | beam.Reshuffle() | beam.Map(note)
    return {eval(path.read_text()) for path in folder.iterdir()}


@pytest.mark.parametrize("runner,beam_args", [
    ("direct-mp", ["--direct_num_workers=2"]), ("portable-pool", ["--sdk_worker_parallelism=2"])])
def test_local_worker_processes_share_the_cores_between_their_thread_pools(
        tmp_path, monkeypatch, runner, beam_args):
    """Two worker processes on this machine each get cores // 2 numerical threads (at least 1),
    a variable the user set is kept, and this process's environment is as it was after."""
    import os

    cores = len(os.sched_getaffinity(0))
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")
    share = str(max(1, cores // 2))
    seen = _thread_variables_seen_by_the_workers(runner, beam_args, tmp_path)
    assert seen == {(share, share, "3")}
    assert "OPENBLAS_NUM_THREADS" not in os.environ and os.environ["MKL_NUM_THREADS"] == "3"


def test_this_processs_blas_computes_on_one_thread_during_a_run_unless_the_user_sized_it(
        monkeypatch):
    """The replay's matrix products are small: OpenBLAS's threads only spun beside it (a
    third of a tree's re-evaluation's CPU on 2 cores). During a run this process's BLAS has one
    thread, and its own number after; a thread variable the user set leaves it alone."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from runners import THREAD_VARIABLES, runner_session

    def blas_threads() -> set:
        return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}

    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with threadpool_limits(limits=2, user_api="blas"):  # (as on a machine of 2 cores or more)
        assert blas_threads() == {2}
        with runner_session("direct"):
            assert blas_threads() == {1}
        assert blas_threads() == {2}
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
        with runner_session("direct"):
            assert blas_threads() == {2}
