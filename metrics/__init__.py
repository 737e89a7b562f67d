"""Pure-Python accumulators and statistics (no Beam import). The math lives here, once."""

from metrics.classification import CLASSIFICATION_METRICS, ClassificationScore
from metrics.exact import ExactSum, ratio
from metrics.regression import REGRESSION_METRICS, RegressionScore

__all__ = ["CLASSIFICATION_METRICS", "REGRESSION_METRICS", "ClassificationScore", "ExactSum",
           "RegressionScore", "ratio"]
