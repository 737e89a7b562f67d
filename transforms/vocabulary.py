"""The output vocabulary: every name a user reads in the results, and the tags of the pipeline's
outputs, in one place.

Summary and curve rows (`summary.csv`, `curves.parquet`) carry a `category`, a `window` and a
`metric`; `predictions.parquet` a prediction `kind`. The metric names belong to the scores that
compute them (`metrics.CLASSIFICATION_METRICS`, `metrics.REGRESSION_METRICS`) and are listed here
too.

>>> CATEGORIES  # doctest: +NORMALIZE_WHITESPACE
('initial', 'final', 'binned', 'intermediate', 'comparison', 'drift', 'resources',
 'holdout')
>>> window_of_fading(0.999), window_of_sliding(500)
('fading=0.999', 'w=500')
"""

from __future__ import annotations

import pyarrow as pa

from metrics import CLASSIFICATION_METRICS, REGRESSION_METRICS

# Prediction kinds (`predictions.parquet`'s `kind`), and the categories of the rows scoring them.
INITIAL = "initial"  # made when the instance arrived
REPREDICTION = "re-prediction"  # made again while the label was pending
FINAL = "final"  # made just before the label arrived (test-then-train)
PREDICTION_KINDS = (INITIAL, REPREDICTION, FINAL)  # the log's kind codes 0, 1, 2

# The summary's `category` column.
BINNED = "binned"  # Λ(T, b), one row per bin b = 0..B+1
INTERMEDIATE = "intermediate"  # Ψα, one row per α
COMPARISON = "comparison"  # a pair of models, `A vs B`
DRIFT = "drift"  # Page-Hinkley alarms and detection delays
RESOURCES = "resources"  # a model's CPU seconds, size and RAM-hours (--resources)
HOLDOUT = "holdout"  # the periodic holdout's sets, each scored on its own (--holdout)
CATEGORIES = (INITIAL, FINAL, BINNED, INTERMEDIATE, COMPARISON, DRIFT, RESOURCES, HOLDOUT)
RESOURCE_METRICS = ("learn_cpu_seconds", "predict_cpu_seconds", "model_bytes", "ram_hours")

# The `window` column: cumulative, or a view that forgets.
CUMULATIVE = "cumulative"


def window_of_sliding(size: int) -> str:
    """The window column of a sliding window over the last `size` labels.

    Example
    -------

    >>> window_of_sliding(1000)
    'w=1000'

    """
    return f"w={size}"


def window_of_fading(alpha: float) -> str:
    """The window column of a fading factor: every digit kept, so 1 − 1e-7 and 1 − 1e-8 differ.

    >>> window_of_fading(1 - 1e-8)
    'fading=0.99999999'
    """
    return f"fading={float(alpha)!r}"


METRICS = {"classification": CLASSIFICATION_METRICS, "regression": REGRESSION_METRICS}

# The files' columns.
# `class`: a per-class measure's class, a confusion cell's true class (`predicted`: its
# predicted class); empty for the other rows. `segment`: a --segment slice (`country=DE`);
# empty for the whole stream.
SUMMARY_COLUMNS = ["run_id", "stream", "segment", "model", "protocol", "category", "bin", "alpha",
                   "window", "metric", "class", "predicted", "value", "n", "t"]
# The summary's columns of names and words: text, whatever they look like (a stream named after
# `inf.csv`, a model `1.0`, a class `NA`, a run id of digits) or however few rows have one.
SUMMARY_TEXT_COLUMNS = ("run_id", "stream", "segment", "model", "protocol", "category", "window",
                        "metric", "class", "predicted")
CURVE_SCHEMA = pa.schema([(name, pa.large_string())
                          for name in ("stream", "segment", "model", "category")]
                         + [("bin", pa.float64()), ("alpha", pa.float64()),
                            ("window", pa.large_string()), ("metric", pa.large_string()),
                            ("class", pa.large_string()), ("predicted", pa.large_string()),
                            ("value", pa.float64()), ("n", pa.int64()), ("t", pa.float64()),
                            ("labels", pa.int64())])  # curves: the row's label count `labels`
PREDICTION_SCHEMA = pa.schema([("stream", pa.string()), ("model", pa.string()),
                               ("id", pa.string()), ("kind", pa.string()),
                               ("t", pa.float64()), ("y_pred", pa.string()),
                               ("proba", pa.map_(pa.string(), pa.float64()))])

# Tags of the pipeline's outputs besides the main one.
PREDICTIONS = "predictions"  # the replay's prediction log, per key
DEAD_LETTERS = "dead_letters"  # records that could not be used, with file, row, field, reason
COUNTS = "counts"  # per key: instances, labels, labelled, pending, ...
CLASSES = "classes"  # per key: the class list in index order
ERRORS = "errors"  # a worker's errors, as records, raised by the job after the run
READ_COUNTS = "read_counts"  # per stream: rows read, events, dead letters
NOT_SCORED = "log_rows_not_scored"  # a backfill's log rows per (stream, model) not configured
SUMMARY = "summary"  # summary rows scored where the replay ran
CURVES = "curves"  # curve rows
RESOURCE_POINTS = "resources"  # per key: the replay's resource measurements
HOLDOUT_POINTS = "holdout"  # per key: the held-out instances' labels and predictions
PENDING = "pending"  # per key: the ids and arrival times of the instances waiting at the end
REPLAY_OUTPUTS = (PREDICTIONS, DEAD_LETTERS, COUNTS, CLASSES, ERRORS, RESOURCE_POINTS,
                  HOLDOUT_POINTS, PENDING)


def pair_name(a: str, b: str) -> str:
    """The model column of a comparison row: A first, as configured.

    >>> pair_name("nb", "ht")
    'nb vs ht'
    """
    return f"{a} vs {b}"
