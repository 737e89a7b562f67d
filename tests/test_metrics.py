"""Metric accumulators: hand-computed values from the papers' formulas, and merge properties."""

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from metrics import ClassificationScore, ExactSum, RegressionScore
from metrics.classification import kappa_plus_of


def score(rows):
    s = ClassificationScore()
    for r in rows:
        s.update(*r)
    return s


def test_kappa_family_by_hand():
    # (y, pred, previous label, majority incl. current), 3 classes.
    rows = [(0, 0, 0, 0), (1, 1, 0, 0), (1, 1, 1, 1), (2, 1, 1, 1), (2, 2, 2, 1),
            (2, 2, 2, 2), (0, 2, 2, 2), (0, 0, 0, 0)]
    s = score(rows).get()
    p = 6 / 8
    # true counts [3, 2, 3], predicted counts [2, 3, 3]: p_ran = Σ_i (t_i/n)(p_i/n)
    p_ran = (3 / 8) * (2 / 8) + (2 / 8) * (3 / 8) + (3 / 8) * (3 / 8)
    assert p_ran == 21 / 64
    p_per = 5 / 8  # y == previous at rows 1, 3, 5, 6, 8
    p_maj = 4 / 8  # y == majority at rows 1, 3, 6, 8
    kappa = (p - p_ran) / (1 - p_ran)
    kappa_t = (p - p_per) / (1 - p_per)
    assert s["accuracy"] == p
    assert s["kappa"] == kappa
    assert s["kappa_t"] == kappa_t
    assert abs(kappa_t - 1 / 3) < 1e-15
    assert s["kappa_m"] == (p - p_maj) / (1 - p_maj)
    assert s["kappa_plus"] == math.sqrt(kappa * kappa_t)


def test_kappa_plus_clips_negative_components_to_zero():
    # A classifier worse than Persistent: κ_per < 0, so κ+ = 0 even though κ > 0.
    rows = [(0, 0, 0, 0), (0, 0, 0, 0), (1, 1, 1, 0), (1, 0, 1, 1)]
    s = score(rows)
    assert s.kappa > 0 and s.kappa_t < 0
    assert s.kappa_plus == 0.0


@pytest.mark.parametrize("kappa, kappa_t, expected", [
    (-0.2, math.nan, 0.0), (math.nan, -0.1, 0.0), (0.0, math.nan, 0.0), (-math.inf, 0.3, 0.0),
    (0.5, math.nan, math.nan), (math.nan, math.nan, math.nan), (0.25, 0.64, 0.4)])
def test_kappa_plus_is_zero_whenever_a_factor_is_not_positive(kappa, kappa_t, expected):
    """κ+ = sqrt(max(0, κ)·max(0, κ_per)): a factor ≤ 0 decides it, even if the other is NaN."""
    value = kappa_plus_of(kappa, kappa_t)
    assert value == pytest.approx(expected) or (math.isnan(value) and math.isnan(expected))


def test_baseline_classifiers_get_zero_kappa():
    # Žliobaitė et al. §4.3–4.4: the Majority classifier has κ = 0; Persistent has κ_per = 0.
    labels = [0, 0, 1, 0, 1, 1, 1, 0]
    majority = score([(y, 0, 0, 0) for y in labels])
    assert majority.kappa == 0.0
    prev = [0] + labels[:-1]
    persistent = score([(y, p, p, 0) for y, p in zip(labels, prev)])
    assert persistent.kappa_t == 0.0


def test_empty_and_degenerate_are_nan_not_zero():
    assert all(math.isnan(v) for v in ClassificationScore().get().values())
    assert all(math.isnan(v) for v in RegressionScore().get().values())
    # Every truth and prediction in one class: p = p_ran = 1 -> κ = 0/0.
    s = score([(0, 0, 0, 0)] * 3)
    assert s.accuracy == 1.0 and math.isnan(s.kappa) and math.isnan(s.kappa_plus)


def test_regression_by_hand():
    s = RegressionScore()
    for y, p in [(3.0, 2.5), (-0.5, 0.0), (2.0, 2.0), (7.0, 8.0)]:
        s.update(y, p)
    assert s.mae == (0.5 + 0.5 + 0 + 1) / 4
    assert s.rmse == math.sqrt((0.25 + 0.25 + 0 + 1) / 4)


def test_exact_sum_is_order_free():
    values = [1e16, 1.0, -1e16, 0.1, 3.3, -2.2e-5] * 5
    forward, backward = ExactSum(), ExactSum()
    for v in values:
        forward.add(v)
    for v in reversed(values):
        backward.add(v)
    assert forward.value == backward.value == math.fsum(values)


classification_rows = st.lists(st.tuples(*[st.integers(0, 3)] * 4), max_size=60)
regression_rows = st.lists(st.tuples(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6)), max_size=60)


def _split_merge(cls, rows, cuts):
    cuts = sorted({min(c, len(rows)) for c in cuts} | {0, len(rows)})
    parts = []
    for a, b in zip(cuts, cuts[1:]):
        part = cls()
        for r in rows[a:b]:
            part.update(*r)
        parts.append(part)
    merged = cls()
    for part in reversed(parts):  # any merge order
        merged.merge(part)
    return merged


@pytest.mark.parametrize("cls, rows", [(ClassificationScore, classification_rows),
                                         (RegressionScore, regression_rows)])
def test_merge_of_any_split_equals_one_pass(cls, rows):
    @settings(max_examples=150, deadline=None)
    @given(rows, st.lists(st.integers(0, 60), max_size=5))
    def check(rows, cuts):
        one = cls()
        for r in rows:
            one.update(*r)
        merged = _split_merge(cls, rows, cuts)
        assert merged.n == one.n
        for a, b in zip(merged.get().values(), one.get().values()):
            assert (math.isnan(a) and math.isnan(b)) or a == b
        again = cls.from_dict(one.to_dict())
        assert again == one and again.to_dict() == one.to_dict()

    check()


# Examples that failed once: a sum that overflowed to inf (|e|/|y| for a tiny y) is inf,
# whatever its finite terms.
FOUND = {RegressionScore: [(1.0, 0.0), (4.326648494789557e-303, 1.0),
                           (4.326648494789557e-303, 777798.0)]}


@pytest.mark.parametrize("cls, rows", [(ClassificationScore, classification_rows),
                                         (RegressionScore, regression_rows)])
def test_update_many_equals_one_update_per_row(cls, rows):
    @settings(max_examples=100, deadline=None)
    @given(rows)
    @example(FOUND.get(cls, []))
    def check(rows):
        one, many = cls(), cls()
        for r in rows:
            one.update(*r)
        columns = 4 if cls is ClassificationScore else 2
        many.update_many(*[[r[i] for r in rows] for i in range(columns)])
        assert many == one

    check()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(-1e6, 1e6), st.lists(
    st.one_of(st.floats(-1e6, 1e6), st.just(math.nan)), min_size=3, max_size=3)), max_size=40),
    st.booleans())
@example([(0.0, [1.0, math.nan, 2.0]), (4.3e-303, [777798.0, 1.0, 1.0])], False)
def test_regression_columns_at_once_equal_each_columns_own_update(rows, all_made):
    """Every bin's sums made at once (`update_columns`) equal the bin's own `update_many` of
    the labels it has a prediction for."""
    import numpy as np

    y = np.array([r[0] for r in rows], dtype=np.float64)
    matrix = np.array([r[1] for r in rows], dtype=np.float64).reshape(len(rows), 3)
    if all_made:
        matrix = np.nan_to_num(matrix, nan=0.5)
    made = ~np.isnan(matrix)
    together = [RegressionScore() for _ in range(3)]
    RegressionScore.update_columns(together, y, matrix, made)
    for j, score in enumerate(together):
        alone = RegressionScore()
        alone.update_many(y[made[:, j]], matrix[made[:, j], j])
        assert score == alone


def _label_by_label(scores: list, y, matrix, y_prev, majority) -> None:
    """The oracle of `update_columns`: each column's score takes `update` of each label it
    has a prediction for (not -1), one at a time."""
    for j, score in enumerate(scores):
        for i in range(len(y)):
            if matrix[i][j] != -1:
                score.update(int(y[i]), int(matrix[i][j]), int(y_prev[i]),
                             tuple(int(m) for m in majority[i]))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(-1, 5), st.lists(
    st.integers(-1, 6), min_size=4, max_size=4), st.integers(0, 5), st.integers(0, 5)),
    max_size=30), st.integers(0, 3))
def test_classification_columns_at_once_equal_each_label_taken_alone(rows, before):
    """Every bin's counts made at once (`update_columns`) equal those of `update` of each
    label the bin has a prediction for, onto scores that already hold `before` labels; two
    views' Majority baselines."""
    import numpy as np

    y = np.array([r[0] for r in rows], dtype=np.int64)
    y_prev = np.array([r[1] for r in rows], dtype=np.int64)
    matrix = np.array([r[2] for r in rows], dtype=np.int64).reshape(len(rows), 4)
    majority = np.array([r[3:] for r in rows], dtype=np.int64).reshape(len(rows), 2)

    def earlier():
        s = ClassificationScore()
        for y_true, y_pred in [(1, 2), (0, 0), (2, 0)][:before]:
            s.update(y_true, y_pred, 0, (0, 1))
        return s

    together, alone = [earlier() for _ in range(4)], [earlier() for _ in range(4)]
    ClassificationScore.update_columns(together, y, matrix, y_prev, majority, matrix != -1)
    _label_by_label(alone, y, matrix, y_prev, majority)
    assert together == alone


@pytest.mark.parametrize("top", [40, 1200, 700_000])
def test_classification_columns_at_once_count_classes_of_high_index(top):
    """Class indices up to `top`: `update_columns` (and so `update_many`) counts a table of
    (bin, code) counts when it is small, and the codes that occur when it would pass a
    million entries (3 bins × 1 201² cells; 700 001² cells would be terabytes); either way
    each bin gets the counts of `update` of each of its labels."""
    import numpy as np

    y = np.array([0, top, 3, top, 1, 0], dtype=np.int64)
    matrix = np.array([[0, top, -1], [top, 3, 3], [3, -1, top], [1, top, 0], [1, 1, 1],
                       [top, 0, 0]], dtype=np.int64)
    y_prev, majority = np.roll(y, 1), np.zeros((6, 1), dtype=np.int64)
    together, alone = [ClassificationScore() for _ in range(3)], \
        [ClassificationScore() for _ in range(3)]
    ClassificationScore.update_columns(together, y, matrix, y_prev, majority, matrix != -1)
    _label_by_label(alone, y, matrix, y_prev, majority)
    assert together == alone
    single, by_hand = ClassificationScore(), ClassificationScore()
    single.update_many(y, matrix[:, 0].clip(0), y_prev, majority)
    _label_by_label([by_hand], y, matrix[:, :1].clip(0), y_prev, majority)
    assert single == by_hand


def _weighed_score(y, predicted, previous, majority, weights, classes: int):
    """A faded score the plain way: each label adds its weight to every count it falls in."""
    hit = y == predicted

    def total(mask):
        return sum([w for w, m in zip(weights.tolist(), mask) if m], 0.0)

    return ClassificationScore.from_faded(
        [total(hit | True), total(hit), total(y == previous), total(y == majority),
         *[total(y == c) for c in range(classes)], *[total(predicted == c) for c in range(classes)],
         *[total(hit & (y == c)) for c in range(classes)]])


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(1, 12), st.booleans())
@example(0, 3, 11, False)  # more classes than numpy's pairwise sums take one by one (8)
@example(1, 3, 11, True)
def test_every_bins_prioritised_measures_at_once_equal_each_bins_own(seed, bins, k, faded):
    """Ψα's measures of all bins at once (`prioritised_measures`) are each bin's `get()`, bit
    for bit: counts of labels (some bins empty, classes only predicted, none labelled), and
    faded counts (fractions)."""
    import numpy as np

    from metrics.classification import CONFIDENCE_METRICS, prioritised_measures

    rng = np.random.default_rng(seed)
    scores = []
    for _ in range(bins):
        size = int(rng.integers(0, 40)) if rng.uniform() < 0.8 else 0
        y = rng.integers(0, k, size)
        predicted = rng.integers(0, k + 2, size)  # (classes k, k+1: never a label)
        previous, majority = rng.integers(0, k, size), rng.integers(0, k, size)
        score = ClassificationScore()
        score.update_many(y, predicted, previous, majority)
        if faded:  # each label weighs a fraction, as under a fading factor
            score = _weighed_score(y, predicted, previous, majority,
                                   rng.uniform(0.3, 1.0, size), k + 2)
        scores.append(score)
    measures = prioritised_measures(scores)
    expected = [s.get() for s in scores]
    assert list(measures) == [m for m in expected[0] if m not in CONFIDENCE_METRICS]
    for metric, values in measures.items():
        for b, (got, want) in enumerate(zip(values, (e[metric] for e in expected))):
            assert got == want or (math.isnan(got) and math.isnan(want)), (metric, b, got, want)


def test_confidence_statistics_by_hand():
    import math

    from metrics import ClassificationScore, RegressionScore

    s = ClassificationScore()
    # p = 0.9 over N = 100, balanced truth and predictions: p_ran = 0.5, κ = 0.8.
    s.update_many([0, 1] * 50, [0, 1] * 45 + [1, 0] * 5, [0] * 100, [0] * 100)
    assert s.accuracy_ci_hoeffding == math.sqrt(math.log(2 / 0.05) / 200)
    assert s.accuracy_ci_chernoff == math.sqrt(3 * (1 - 0.9) / 100 * math.log(40))
    assert s.kappa_se == math.sqrt(0.9 * (1 - 0.9) / (100 * 0.5 ** 2))  # eq. 11: 0.06
    assert round(s.kappa_z, 12) == 8.0  # eq. 12: κ / sqrt(p_ran / (N (1 - p_ran)))
    # The bounds hold for losses in [0, 1]: none for absolute errors in the target's units,
    # whose width would change with the unit (metres -> millimetres: 1000x the MAE).
    r = RegressionScore()
    r.update_many([1.0, 2.0], [0.0, 2.0])
    assert set(r.get()) == {"mae", "rmse", "r2", "mape", "abs_error_p50", "abs_error_p90",
                            "abs_error_p99"}
    assert math.isnan(ClassificationScore().kappa_z)


def test_exact_sum_of_an_array_is_the_sum_of_its_terms_without_rounding():
    """`ExactSum.add_many` (integers per exponent) and `add` (Shewchuk's partials), against
    the sum in rational arithmetic, on floats of every magnitude, subnormals included."""
    from fractions import Fraction

    from metrics.exact import ExactSum

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300,
                              max_value=1e300), max_size=80))
    def check(values):
        many, one = ExactSum(), ExactSum()
        many.add_many(values)
        for v in values:
            one.add(v)
        exact = sum(map(Fraction, values), Fraction(0))
        assert many.exact == one.exact == exact
        assert many.value == one.value == float(exact)

    check()


def test_a_copy_of_a_score_is_its_own():
    """A deep copy (curves keep one per block) has the same counts and shares nothing that
    changes: updating either leaves the other as it was. Oracle: the counts rebuilt from the
    rows by hand."""
    import copy

    import numpy as np

    rows = [(0, 0, 0, 0), (1, 0, 0, 1), (2, 2, 1, 0)]
    original = ClassificationScore()
    original.update_many(*map(list, zip(*rows)), proba=np.eye(3)[[0, 0, 2]],
                         weights=np.ones((3, 2)))
    copied = copy.deepcopy(original)
    expected = {"n": 3, "correct": 2, "true_counts": [1, 1, 1], "pred_counts": [2, 0, 1],
                "confusion": {(0, 0): 1, (1, 0): 1, (2, 2): 1}, "majority_correct": [2]}
    for s in (original, copied):
        assert {k: getattr(s, k) for k in expected} == expected
    assert copied.proba is not original.proba and copied.boot is not original.boot
    copied.update_many([1, 2], [1, 2], [1, 1], [1, 1], proba=np.eye(3)[[1, 2]],
                       weights=np.ones((2, 2)))
    assert {k: getattr(original, k) for k in expected} == expected
    assert original.proba.n == 3 and copied.proba.n == 5
