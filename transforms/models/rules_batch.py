"""river's `rules.AMRules` (Adaptive Model Rules), many rows at once (`AMRulesBatch`).

AMRules answers with the rules that cover a row — all of a rule's literals hold (`x[f] ≤ t`,
`> t`, `= v`, `≠ v`) —: the first of them (an ordered rule set, the default), or the mean of
their predictions in rule order; with none, its default rule's. A rule predicts with the mean of
its targets, its linear model, or whichever of the two has the smaller faded error (adaptive).
Here each rule's literals are tested on all rows at once, and its prediction is its mean or its
linear model's w·x + b (`LinearRegressionBatch`, bit for bit), summed in rule order as river
sums them; a rule with another model answers its rows with its own `predict_one`.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from transforms.models.batch import DenseBatch, loaded


def fits_batch(model) -> bool:
    """Whether `AMRulesBatch` predicts as the model does: river's `AMRules` with its own
    `predict_one`.

    >>> from river import rules, tree
    >>> fits_batch(rules.AMRules()), fits_batch(tree.HoeffdingTreeRegressor())
    (True, False)
    """
    return type(model) is loaded("river.rules.AMRules")


class AMRulesBatch(DenseBatch):
    """river `AMRules`: the rules' literals tested on all rows at once, their predictions made
    for the rows each covers.

    Example
    -------

    >>> import itertools
    >>> from river import datasets, rules
    >>> model = rules.AMRules(n_min=50)
    >>> data = list(itertools.islice(datasets.synth.Friedman(seed=1), 1500))
    >>> for x, y in data[:1400]:
    ...     model.learn_one(x, y)
    >>> xs = [x for x, _ in data[1400:]]
    >>> batch = AMRulesBatch()
    >>> codes, values = batch.predict(model, np.array([batch.encode(x) for x in xs]), xs)
    >>> [values[c] for c in codes] == [model.predict_one(x) for x in xs]
    True
    """

    absent_features = key_order = True  # as river's literals and linear models

    def predict(self, model, rows, xs):
        if rows is None:
            return super(DenseBatch, self).predict(model, rows, xs)
        n = len(rows)
        total, hits = np.zeros(n), np.zeros(n, dtype=np.int64)
        open_rows = np.ones(n, dtype=bool)  # (an ordered rule set: not yet covered)
        column = {name: f for f, name in enumerate(self.names)}
        for rule in model._rules.values():
            covered = _covers(rule, rows, column) & open_rows
            if covered.any():
                total[covered] += self._rule_values(rule, rows[covered],
                                                    [xs[i] for i in covered.nonzero()[0]])
                hits[covered] += 1
                if model.ordered_rule_set:
                    open_rows &= ~covered
        values = np.empty(n)
        hit = hits > 0
        values[hit] = total[hit] / hits[hit]
        if not hit.all():
            rest = (~hit).nonzero()[0]
            values[rest] = self._rule_values(model._default_rule, rows[rest],
                                             [xs[i] for i in rest])
        return np.arange(n), values.tolist()

    def _rule_values(self, rule, rows: np.ndarray, xs: list) -> np.ndarray:
        """The rule's predictions for the rows: its mean, or its linear model's w·x + b."""
        from river.rules.amrules import AdaptiveRegressor, MeanRegressor

        from transforms.models.linear_batch import (fits_regression_batch, key_order_sums,
                                                    weights_over)

        model = rule.pred_model
        if type(model) is AdaptiveRegressor:
            model = model.mean_predictor if model._mae_mean <= model._mae_model \
                else model.model_predictor
        if type(model) is MeanRegressor:
            return np.full(len(rows), model.mean.get())
        if fits_regression_batch(model):
            return key_order_sums(rows, weights_over(model, self.names), self.key_columns)
        return np.array([rule.predict_one(x) for x in xs], dtype=np.float64)


def _covers(rule, rows: np.ndarray, column: dict) -> np.ndarray:
    """Which rows (their features at `column[name]`, NaN where a row lacks one) all the rule's
    literals hold for; a literal on a feature a row lacks holds for none, as river's.

    >>> from river.rules.base import NominalLiteral, NumericLiteral
    >>> class Rule:
    ...     literals = [NumericLiteral("a", 2.0, neg=False), NominalLiteral("b", 1.0, neg=True)]
    >>> rows = np.array([[1.0, 0.0], [3.0, 0.0], [1.0, 1.0], [np.nan, 0.0], [1.0, np.nan]])
    >>> _covers(Rule, rows, {"a": 0, "b": 1}).tolist()
    [True, False, False, False, False]
    """
    from river.rules.base import NumericLiteral

    covered = np.ones(len(rows), dtype=bool)
    for literal in rule.literals:
        f = column.get(literal.on)
        if f is None:
            return np.zeros(len(rows), dtype=bool)
        x, at = rows[:, f], literal.at
        if isinstance(literal, NumericLiteral):
            holds = x > at if literal.neg else x <= at
        elif isinstance(at, Real) and not isinstance(at, bool):
            holds = (x != at) & ~np.isnan(x) if literal.neg else x == at
        else:  # (a number is never equal to a category)
            holds = np.full(len(rows), literal.neg) & ~np.isnan(x)
        covered &= holds
    return covered
