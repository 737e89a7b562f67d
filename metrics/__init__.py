"""Pure-Python accumulators and statistics (no Beam import). The math lives here, once."""

from metrics.baselines import BaselineViews, LabelBaselines
from metrics.bootstrap import BOOTSTRAP_METRICS
from metrics.classification import (CLASSIFICATION_METRICS, CONFIDENCE_METRICS, CONFUSION,
                                    PER_CLASS_METRICS, ClassificationScore)
from metrics.exact import ExactSum, ratio
from metrics.regression import REGRESSION_CONFIDENCE_METRICS, REGRESSION_METRICS, RegressionScore

# Reported next to each measure, never aggregated over bins into Ψα.
NOT_PRIORITISED = frozenset(CONFIDENCE_METRICS + REGRESSION_CONFIDENCE_METRICS
                            + BOOTSTRAP_METRICS)

__all__ = ["CLASSIFICATION_METRICS", "CONFUSION", "NOT_PRIORITISED", "PER_CLASS_METRICS",
           "REGRESSION_METRICS", "BaselineViews", "ClassificationScore", "ExactSum",
           "LabelBaselines", "RegressionScore", "ratio"]
