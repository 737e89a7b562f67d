"""Continuous re-evaluation: re-predictions while labels are pending, and their bins."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import binning
from metrics.binning import bin_of, prioritised
from tests.helpers import repredictions
from transforms.engine import ReplayEngine
from transforms.repredict import RepredictPolicy
from transforms.models import ModelSpec
from transforms.records import INSTANCE, LABEL, RANK_INSTANCE, RANK_LABEL, event


def worked_example(k=1):
    """DESIGN's worked example: No-Change, a warm-up labelled `a`, A arrives at 0, other
    labels b@10, a@20, a@30, b@40, b@45, a@80, A's own label (b) at 100."""
    events = [event(-10, RANK_INSTANCE, 0, INSTANCE, "W", {}),
              event(-5, RANK_LABEL, 1, LABEL, "W", None, "a"),
              event(0, RANK_INSTANCE, 2, INSTANCE, "A", {})]
    for i in range(6):
        events.append(event(1 + i, RANK_INSTANCE, 3 + i, INSTANCE, f"I{i}", {}))
    for i, (t, y) in enumerate([(10, "b"), (20, "a"), (30, "a"), (40, "b"), (45, "b"),
                                (80, "a")]):
        events.append(event(t, RANK_LABEL, 10 + i, LABEL, f"I{i}", None, y))
    events.append(event(100, RANK_LABEL, 20, LABEL, "A", None, "b"))
    engine = ReplayEngine(ModelSpec.parse("no-change"), "s", ["a", "b"],
                          repredict=RepredictPolicy("every_k_labels", k))
    return [o for o in engine.drain(events).outcomes if o.id == "A"][0]


def binned_predictions(t0, t_label, initial, pairs, final, bins, classification=True):
    """The vectorised mapping, called with (t, prediction) pairs and None for "no prediction"."""
    missing = -1 if classification else math.nan
    times = [t for t, _ in pairs]
    values = [missing if y is None else y for _, y in pairs]
    out = binning.binned_predictions(t0, t_label, initial, times, values, final, bins,
                                     classification).tolist()
    return [None if (v == -1 if classification else math.isnan(v)) else v for v in out]


def reference_bins(t0, t_label, initial, pairs, final, bins, classification=True):
    """The mapping of DESIGN item by item, as the paper's reference implementation states it:
    the oracle the vectorised one must equal bit for bit."""
    def vote(items):
        items = [(w, y) for w, y in items if y is not None]
        if not items:
            return None
        if classification:
            weights = {}
            for w, y in items:
                weights[y] = weights.get(y, 0.0) + w
            best = max(weights.values())
            return min(y for y, w in weights.items() if w == best)
        total = sum(w for w, _ in items)
        if total == 0:
            return items[-1][1]
        return sum(w * y for w, y in items) / total

    delta = t_label - t0
    out, current, i, n = [initial], initial, 0, len(pairs)
    for b in range(1, bins + 1):
        start, end = t0 + delta * (b - 1) / bins, t0 + delta * b / bins
        in_bin = []
        while i < n and bin_of(pairs[i][0], t0, delta, bins) == b:
            in_bin.append(pairs[i])
            i += 1
        if not in_bin:
            out.append(current)
        elif len(in_bin) == 1:
            current = in_bin[0][1]
            out.append(current)
        else:
            times = [start] + [t for t, _ in in_bin] + [end]
            preds = [current] + [y for _, y in in_bin]
            out.append(vote([(times[k + 1] - times[k], preds[k]) for k in range(len(preds))]))
            current = in_bin[-1][1]
    return out + [final]


@st.composite
def latency_periods(draw, classification):
    t0 = draw(st.floats(-1e3, 1e3, allow_nan=False))
    delta = draw(st.sampled_from([0.0, 1.0, 7.0, 100.0, 0.3, 12345.678]))
    bins = draw(st.integers(1, 12))
    value = st.integers(0, 3) if classification else st.floats(-50, 50, allow_nan=False)
    maybe = st.one_of(st.none(), value)
    fracs = sorted(draw(st.lists(st.floats(0, 1), max_size=25)))
    # Times on a coarse grid, so several re-predictions often share a time or a bin edge.
    grid = draw(st.sampled_from([None, 4, 10]))
    if grid:
        fracs = [round(f * grid) / grid for f in fracs]
    pairs = [(t0 + f * delta, draw(maybe)) for f in fracs]
    return t0, t0 + delta, draw(maybe), pairs, draw(maybe), bins


@settings(max_examples=400, deadline=None)
@given(latency_periods(classification=True))
def test_vectorised_bins_equal_the_item_by_item_rule(case):
    assert binned_predictions(*case) == reference_bins(*case)


@settings(max_examples=400, deadline=None)
@given(latency_periods(classification=False))
def test_vectorised_regression_bins_equal_the_item_by_item_rule(case):
    got, want = binned_predictions(*case, False), reference_bins(*case, False)
    assert [None if v is None else float(v) for v in got] == \
        [None if v is None else float(v) for v in want]


def test_worked_example_repredictions_and_bins():
    a = worked_example()
    # The label at 10 is the first since A arrived: no re-prediction there.
    assert repredictions(a) == [(20, 1), (30, 0), (40, 0), (45, 1), (80, 1)]
    assert (a.initial, a.final, a.y) == (0, 0, 1)
    bins = binned_predictions(a.t_arrival, a.t_label, a.initial, repredictions(a), a.final, 4)
    assert bins == [0, 1, 0, 1, 1, 0]
    assert [int(p == a.y) for p in bins] == [0, 1, 0, 1, 1, 0]


def test_every_k_labels_with_k_2():
    # Due at the 3rd and 5th labels after arrival: 20 -> (K+1)th = 3rd label is at 30.
    assert [t for t, _ in repredictions(worked_example(k=2))] == [30, 45]


def test_label_before_any_reprediction_copies_the_initial_prediction():
    assert binned_predictions(0, 10, 1, (), 0, bins=5) == [1, 1, 1, 1, 1, 1, 0]


def test_several_repredictions_in_one_bin_vote_ties_to_lowest_index():
    # Bin 1 of [0, 10) with B=1: [initial 2 over 0-4, 1 over 4-7, 0 over 7-10]: 4 vs 3 vs 3.
    assert binned_predictions(0, 10, 2, ((4, 1), (7, 0)), 2, bins=1) == [2, 2, 2]
    # 2 over 0-3, 1 over 3-6, 0 over 6-10 -> 0 has 4: wins.
    assert binned_predictions(0, 10, 2, ((3, 1), (6, 0)), 2, bins=1) == [2, 0, 2]
    # 1 over 0-3 and 5-7, 0 over 3-5 and 7-10: 5 each, a tie, to the lowest index 0.
    assert binned_predictions(0, 10, 1, ((3, 0), (5, 1), (7, 0)), 1, bins=1) == [1, 0, 1]


def test_regression_time_weighted_mean():
    # [1.0 over 0-2, 3.0 over 2-5, 5.0 over 5-10] -> (2 + 9 + 25) / 10
    assert binned_predictions(0, 10, 1.0, ((2, 3.0), (5, 5.0)), 6.0, bins=1,
                              classification=False) == [1.0, 3.6, 6.0]


def test_delay_zero_latency_period():
    # The label arrives at the instance's own time: every bin carries the initial prediction.
    assert binned_predictions(5, 5, 1, (), 1, bins=3) == [1, 1, 1, 1, 1]


def test_prioritised_by_hand():
    values = [0.5, 1.0, 0.0]  # Λ(0), Λ(1), Λ(2) with B=2
    assert prioritised(values, 1) == 0.5
    w = [1, 0.5 ** 0.5, 0.5]  # α=2: (1/2)^(b/2)
    assert prioritised(values, 2) == (0.5 * w[0] + 1.0 * w[1]) / sum(w)


def test_missing_predictions_take_no_part_in_the_vote():
    # An untrained model's None over 0-6, then 1 over 6-8 and 0 over 8-10: a 2-2 tie -> 0.
    assert binned_predictions(0, 10, None, ((6, 1), (8, 0)), 1, bins=1) == [None, 0, 1]
    assert binned_predictions(0, 10, None, ((6, None), (8, None)), 1, bins=1) == [None, None, 1]
