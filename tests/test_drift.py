"""Page-Hinkley (Gama et al. 2009, section 3.4.1): the same alarms as river's detector, and drift
rows from a run on a stream with known drift points."""

import random

import numpy as np
import pytest
from river import drift

from metrics.drift import PageHinkley, alarms
from pipelines.config import RunConfig
from pipelines.job import run
from transforms.scoring.drift import DriftPlan, PageHinkleyFold
from transforms.scoring.label_order import InLabelOrder
from transforms.streams.delays import DelaySpec
from transforms.streams.sources import StreamSpec


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


def test_drift_rows_of_a_run_match_a_plain_loop_and_rivers_detector(tmp_path):
    """The oracle: GaussianNB replayed by a plain river loop (instance j is predicted once the
    labels of instances 0..j−d have been learned), its 0-1 losses in label order through river's
    PageHinkley, and the alarms matched to the drift by hand. An alarm is raised when the label
    of the loss that triggers it arrives: d instances after that instance."""
    from river import naive_bayes

    n, d, drift_at = 6000, 100, 2999  # the drift's `at` is 1-based
    stream = f'sea=synth:SEA{{"n": {n}, "seed": 1, "drift": [{{"at": 3000, "variant": 3}}]}}'
    params = dict(delta=0.001, threshold=10.0, min_instances=30)
    summary = run(RunConfig(streams=[stream], models=["nb=gaussian-nb"], delay=str(d),
                            out=str(tmp_path), runner="direct", repredict="none",
                            ph_delta=params["delta"], ph_threshold=params["threshold"],
                            ph_alphas=[1.0, 0.999], quiet=True))
    rows = [e for e in StreamSpec.parse(stream).events(DelaySpec.parse(str(d)))]
    xs = [e[5] for e in rows if e[3] == "instance"]
    ys = {e[4]: e[6] for e in rows if e[3] == "label"}
    model, scored = naive_bayes.GaussianNB(), []  # (instance, loss) in label order
    for j, x in enumerate(xs):
        if j >= d:
            model.learn_one(xs[j - d], ys[j - d])
        p = model.predict_one(x)
        if p is not None:
            scored.append((j, float(p != ys[j])))
    drift_rows = summary[summary["category"] == "drift"]
    for alpha, view in [(1.0, "cumulative"), (0.999, "fading=0.999")]:
        got = drift_rows[drift_rows["window"] == view]
        fired = [scored[i][0] for i in river_alarms([loss for _, loss in scored],
                                                   alpha=alpha, **params)]
        assert fired and max(fired) + d < n  # no alarm among the labels after the stream's end
        alarm_rows = got[got["metric"] == "alarm"]
        assert alarm_rows["value"].tolist() == [j + 1 for j in fired]  # label number n
        assert alarm_rows["t"].tolist() == [float(j + d) for j in fired]  # label time
        by = dict(zip(got["metric"], got["value"]))
        detecting = [j for j in fired if j >= drift_at][0]  # the first alarm after the drift
        assert by["alarms"] == len(fired)
        assert by["drift_1_arrival_delay"] == detecting - drift_at
        assert by["drift_1_delay"] == detecting + d - drift_at
        assert by["missed_drifts"] == 0
        assert by["false_alarms"] == len(fired) - 1
    plain = drift_rows[(drift_rows["window"] == "cumulative")]
    assert d <= plain.query("metric == 'drift_1_delay'")["value"].item() < 1000 + d


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
