"""Continuous re-evaluation: re-predictions while labels are pending, and their bins."""

from metrics.binning import binned_predictions, prioritised
from transforms.engine import ReplayEngine, RepredictPolicy
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


def test_worked_example_repredictions_and_bins():
    a = worked_example()
    # The label at 10 is the first since A arrived: no re-prediction there.
    assert a.repredictions == ((20, 1), (30, 0), (40, 0), (45, 1), (80, 1))
    assert (a.initial, a.final, a.y) == (0, 0, 1)
    bins = binned_predictions(a.t_arrival, a.t_label, a.initial, a.repredictions, a.final, 4)
    assert bins == [0, 1, 0, 1, 1, 0]
    assert [int(p == a.y) for p in bins] == [0, 1, 0, 1, 1, 0]


def test_every_k_labels_with_k_2():
    # Due at the 3rd and 5th labels after arrival: 20 -> (K+1)th = 3rd label is at 30.
    assert [t for t, _ in worked_example(k=2).repredictions] == [30, 45]


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
