"""--resources: each model's CPU seconds, size and RAM-hours (MOA's definition) at every curve
point and at the end; off by default (these numbers are not repeatable)."""

import itertools
import time

import pandas as pd
import pytest
from river import datasets

from pipelines.config import RunConfig
from pipelines.job import run
from transforms.models.specs import ModelSpec
from transforms.records import RANK_INSTANCE, RANK_LABEL, event
from transforms.replay.engine import ReplayEngine


def _events(n: int, delay: int) -> list:
    out = []
    for i, (x, y) in enumerate(itertools.islice(datasets.synth.Agrawal(seed=2), n)):
        out.append(event(i, RANK_INSTANCE, 2 * i, "instance", i, x))
        out.append(event(i + delay, RANK_LABEL, 2 * i + 1, "label", i, None, y))
    return out


def test_engine_measures_at_every_nth_label_and_at_the_drain_end():
    engine = ReplayEngine(ModelSpec.parse("hoeffding-tree"), "s", resources_every=300)
    started = time.thread_time()
    points = engine.drain(_events(1000, 50)).resources
    spent = time.thread_time() - started
    assert [p[0] for p in points] == [300, 600, 900, 1000]
    assert points[-1][4] == engine.model._raw_memory_usage  # the size now
    learn, predict = points[-1][2], points[-1][3]
    assert 0 < learn and 0 < predict and learn + predict <= spent
    for a, b in zip(points, points[1:]):
        assert a[2] <= b[2] and a[3] <= b[3]
    # RAM-hours (MOA): Σ size in GB × hours of CPU time since the previous measurement.
    ram_hours, cpu_before = 0.0, 0.0
    for p in points:
        ram_hours += p[4] / 2 ** 30 * (p[2] + p[3] - cpu_before) / 3600
        cpu_before = p[2] + p[3]
    assert points[-1][5] == pytest.approx(ram_hours, rel=1e-12)


def test_engine_without_resources_measures_nothing():
    engine = ReplayEngine(ModelSpec.parse("gaussian-nb"), "s")
    assert engine.drain(_events(200, 10)).resources == []


def test_run_reports_resources_only_when_asked(tmp_path):
    common = dict(streams=['synth:Agrawal{"n": 2500, "seed": 3}'],
                  models=["gaussian-nb", "hoeffding-tree"], delay="100", repredict="none",
                  curve_every=1000, quiet=True, runner="direct")
    summary = run(RunConfig(**common, out=str(tmp_path / "with"), resources=True))
    costs = summary[summary["category"] == "resources"]
    assert sorted(set(costs["metric"])) == ["learn_cpu_seconds", "model_bytes",
                                            "predict_cpu_seconds", "ram_hours"]
    assert (costs["n"] == 2500).all() and len(costs) == 8
    curves = pd.read_parquet(tmp_path / "with" / "curves.parquet")
    points = curves[curves["category"] == "resources"]
    assert sorted(set(points["labels"])) == [1000, 2000, 2500]
    last = points[points["labels"] == 2500].set_index(["model", "metric"])["value"]
    assert costs.set_index(["model", "metric"])["value"].to_dict() == last.to_dict()
    tree = costs[costs["model"] == "hoeffding-tree"].set_index("metric")["value"]
    nb = costs[costs["model"] == "gaussian-nb"].set_index("metric")["value"]
    assert tree["model_bytes"] > nb["model_bytes"] > 0
    without = run(RunConfig(**common, out=str(tmp_path / "without")))
    assert not (without["category"] == "resources").any()


def test_the_terminal_and_the_report_show_each_models_costs(tmp_path, capsys):
    """What MOA's evaluators print at the end is shown, not only written: a row per model with
    the summary's four numbers (CPU seconds to 3 decimals, the size in KiB, RAM-hours)."""
    import html
    import re

    from pipelines.cli import main

    out = tmp_path / "out"
    assert main(["run", "--stream", 'synth:Agrawal{"n": 1500, "seed": 3}', "--model",
                 "gaussian-nb", "--model", "hoeffding-tree", "--delay", "100", "--resources",
                 "--out", str(out), "--runner", "direct", "--report"]) == 0
    printed = capsys.readouterr().out
    summary = pd.read_csv(out / "summary.csv")
    costs = summary[summary["category"] == "resources"]
    expected = []
    for model in ("gaussian-nb", "hoeffding-tree"):
        value = costs[costs["model"] == model].set_index("metric")["value"]
        expected.append(["agrawal", model, f"{value['learn_cpu_seconds']:.3f}",
                         f"{value['predict_cpu_seconds']:.3f}",
                         f"{value['model_bytes'] / 1024:.1f}", f"{value['ram_hours']:.2g}"])
    shown = printed[printed.index("Resources (--resources)"):].splitlines()
    assert shown[1].split() == ["stream", "model", "learn", "CPU", "s", "predict", "CPU", "s",
                                "size", "(KiB)", "RAM-hours"]
    assert [line.split() for line in shown[2:4]] == expected
    page = (out / "report.html").read_text(encoding="utf-8")
    section = page[page.index("<h2>Resources</h2>"):]
    cells = [html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", section)][:12]
    assert cells == expected[0] + expected[1]
