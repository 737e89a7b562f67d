"""Page-Hinkley (paper 004, section 3.4.1): the same alarms as river's detector, and drift
rows from a run on a stream with known drift points."""

import random

import numpy as np
import pytest
from river import drift

from metrics.drift import PageHinkley, alarms, match_drifts
from pipelines.config import RunConfig
from pipelines.job import run
from transforms.delays import DelaySpec
from transforms.drift import DriftPlan, PageHinkleyFold, losses
from transforms.engine import ReplayEngine
from transforms.label_order import InLabelOrder
from transforms.models import ModelSpec
from transforms.sources import StreamSpec


def river_alarms(values, **params):
    ph = drift.PageHinkley(mode="up", **params)
    out = []
    for i, x in enumerate(values):
        ph.update(x)
        if ph.drift_detected:
            out.append(i)
    return out


def sequences():
    rng = random.Random(3)
    yield [float(rng.random() < (0.1 if i < 3000 else 0.4)) for i in range(8000)]
    yield [float(rng.random() < 0.2 + 0.3 * ((i // 2000) % 2)) for i in range(10000)]
    yield [rng.gauss(0, 1) + (2 if 1500 < i < 2500 else 0) for i in range(5000)]


@pytest.mark.parametrize("params", [
    dict(),  # river's defaults but α = 1
    dict(delta=0.001, threshold=2.5, min_instances=30),  # the paper's δ and λ
    dict(delta=0.001, threshold=5.0, alpha=1 - 1e-4),
    dict(delta=0.005, threshold=10.0, alpha=0.99, min_instances=1),
])
def test_alarms_equal_rivers_page_hinkley(params):
    params = {"alpha": 1.0, **params}
    total = 0
    for values in sequences():
        ours = alarms(values, **params)
        assert ours == river_alarms(values, **params)
        total += len(ours)
    assert total > 0  # the comparison is not vacuous


def test_plain_page_hinkley_by_hand():
    # δ = 0, λ = 0.4: x = 0, 0, 1 -> means 0, 0, 1/3; m = 0, 0, 2/3; M = 0; 2/3 > 0.4.
    ph = PageHinkley(delta=0.0, threshold=0.4, min_instances=1)
    assert [ph.update(x) for x in (0.0, 0.0, 1.0)] == [False, False, True]
    assert ph.statistic == pytest.approx(2 / 3)
    ph.update(1.0)  # restarted after the alarm: n = 1 again
    assert ph.n == 1


def test_drift_rows_of_a_run_match_the_detector_on_the_replayed_losses(tmp_path):
    stream = 'sea=synth:SEA{"n": 6000, "seed": 1, "drift": [{"at": 3000, "variant": 3}]}'
    params = dict(delta=0.001, threshold=10.0, min_instances=30)
    summary = run(RunConfig(streams=[stream], models=["nb=gaussian-nb"], delay="100",
                            out=str(tmp_path), runner="direct", repredict="none",
                            ph_delta=params["delta"], ph_threshold=params["threshold"],
                            ph_alphas=[1.0, 0.999], quiet=True))
    spec = StreamSpec.parse(stream)
    engine = ReplayEngine(ModelSpec.parse("gaussian-nb"), spec.name)
    outcomes = engine.drain(list(spec.events(DelaySpec.parse("100")))).outcomes
    table = losses(outcomes, "classification", "initial")
    drift_rows = summary[summary["category"] == "drift"]
    for alpha, view in [(1.0, "cumulative"), (0.999, "fading=0.999")]:
        rows = drift_rows[drift_rows["window"] == view]
        fired = alarms(table[:, 3].tolist(), alpha=alpha, **params)
        got = rows[rows["metric"] == "alarm"]
        assert got["value"].tolist() == [table[i, 0] for i in fired]
        assert got["t"].tolist() == [table[i, 2] for i in fired]
        by = dict(zip(rows["metric"], rows["value"]))
        assert by["alarms"] == len(fired)
        matched = match_drifts([table[i, 1] for i in fired], [2999])
        assert by["drift_1_delay"] == matched["delays"][0]
        assert by["missed_drifts"] == matched["missed"]
        assert by["false_alarms"] == matched["false_alarms"]
    # The drift is found: some alarm within 1000 instances after it.
    plain = drift_rows[(drift_rows["window"] == "cumulative")]
    assert 0 <= plain.query("metric == 'drift_1_delay'")["value"].item() < 1000


@pytest.mark.parametrize("seed", range(3))
def test_page_hinkley_folded_in_label_order_whatever_the_bundling(seed):
    # Batches in any order, some missing a loss (no prediction), combined in random bundles
    # and merges: the alarms are those of one pass over the losses in label order.
    rng = random.Random(seed)
    values = next(sequences())[:3000]
    n = np.arange(1, len(values) + 1)
    keep = np.array([rng.random() > 0.05 for _ in values])
    table = np.column_stack([n, n - 1.0, n + 0.5, values])[keep]
    plan = DriftPlan(delta=0.001, threshold=5.0, alphas=(1.0, 0.99))
    expected = {a: [int(table[i, 0]) for i in alarms(table[:, 3].tolist(), delta=0.001,
                                                    threshold=5.0, alpha=a)]
                for a in plan.alphas}
    assert all(expected.values())
    cuts = sorted(rng.sample(range(1, len(values)), 30))
    batches = [(n[a:b], table[(table[:, 0] > a) & (table[:, 0] <= b)])
               for a, b in zip([0, *cuts], [*cuts, len(values)])]
    rng.shuffle(batches)
    fold = InLabelOrder(PageHinkleyFold(plan))
    bundles = [batches[i::4] for i in range(4)]
    accs = []
    for bundle in bundles:
        acc = fold.create_accumulator()
        for batch in bundle:
            acc = fold.add_input(acc, batch)
        accs.append(acc)
    rng.shuffle(accs)
    found, monitored = fold.extract_output(fold.merge_accumulators(
        [fold.merge_accumulators(accs[:2]), fold.merge_accumulators(accs[2:])]))
    assert monitored == keep.sum()
    assert {a: [n for n, _, _ in fired] for a, fired in found.items()} == expected
