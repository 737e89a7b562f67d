"""Table II of Grzenda, Gomes & Bifet 2020, on river's synthetic streams with drift.

    python -m examples.table2 [--out out/table2] [--runner direct]

Streams (as in the paper's Table I):
- LED: 20 000 instances, 24 features (17 irrelevant), 10 % noise, three abrupt drifts centred at
  3 750, 7 500 and 15 000 that swap 3, 5 and 7 features; label delay 1 000 instances.
- Agrawal: 10 000 instances, four gradual drifts (window of change 400) every 2 000 instances
  through classification functions 1..5 (river's 0..4); delay 1 000.
- Hyperplane: 250 instances, 2 features, a slowly rotating hyperplane; delay 100.

Models: river's GaussianNB (NB), No-Change (NC), Majority Class (MC), kNN (exact, window 1 000),
Hoeffding tree (HT), Hoeffding adaptive tree (HAT) and adaptive random forest (ARF), all with their
default parameters (seed 42 where they take one).

Each latency period is split into B = 100 bins and every pending instance is re-predicted every
delay/10 labels (ten re-predictions per latency period); the table shows, per stream and model,
initial Λ(T,0), binned Λ(T,50), final Λ(T,101) and intermediate Ψ2 accuracy (%), and is also
written as CSV (`table2.csv`) with each run's full results in a folder per stream.
"""

from __future__ import annotations

import argparse
import json
import logging
import os

import pandas as pd

logging.basicConfig(level=logging.ERROR)  # Beam's import-time notices about cloud clients

from pipelines.config import RunConfig  # noqa: E402
from pipelines.job import run  # noqa: E402

MODELS = {"NB": "gaussian-nb", "NC": "no-change", "MC": "majority", "kNN": "knn",
          "HT": "hoeffding-tree", "HAT": "hoeffding-adaptive-tree",
          "ARF": "adaptive-random-forest"}

STREAMS = {
    "Hyperplane": ({"n": 250, "n_features": 2, "n_drift_features": 2, "mag_change": 0.01,
                    "seed": 1}, 100),
    "Agrawal": ({"n": 10_000, "classification_function": 0, "seed": 1,
                 "drift": [{"at": 2000 * k, "width": 400, "classification_function": k}
                           for k in range(1, 5)]}, 1000),
    "LED": ({"n": 20_000, "noise_percentage": 0.1, "irrelevant_features": True, "seed": 1,
             "drift": [{"at": 3750, "n_drift_features": 3}, {"at": 7500, "n_drift_features": 5},
                       {"at": 15000, "n_drift_features": 7}]}, 1000),
}
GENERATORS = {"Hyperplane": "Hyperplane", "Agrawal": "Agrawal", "LED": "LEDDrift"}

BINS, ALPHA = 100, 2.0
MEASURES = [("Initial", "initial", None, "Λ(T,0)"),
            ("Binned", "binned", BINS // 2, f"Λ(T,{BINS // 2})"),
            ("Final", "final", None, f"Λ(T,{BINS + 1})"),
            ("Intermediate", "intermediate", None, f"Ψ{ALPHA:g}")]


def table_rows(stream: str, summary: pd.DataFrame) -> list[dict]:
    """The four accuracy rows of one stream, in percent, one column per model."""
    acc = summary[(summary["metric"] == "accuracy") & (summary["window"] == "cumulative")]
    rows = []
    for category_name, category, b, measure in MEASURES:
        sel = acc[acc["category"] == category]
        if b is not None:
            sel = sel[sel["bin"] == b]
        if category == "intermediate":
            sel = sel[sel["alpha"] == ALPHA]
        values = dict(zip(sel["model"], sel["value"] * 100))
        rows.append({"Data": stream, "Measure category": category_name, "Measure": measure,
                     **{m: round(values[m], 2) for m in MODELS}})
    return rows


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out/table2")
    parser.add_argument("--runner", default="direct")
    parser.add_argument("--streams", nargs="*", default=list(STREAMS),
                        help="a subset of " + ", ".join(STREAMS))
    args = parser.parse_args(argv)
    rows = []
    for name in args.streams:
        options, delay = STREAMS[name]
        config = RunConfig(
            streams=[f"{name}=synth:{GENERATORS[name]}{json.dumps(options)}"],
            models=[f"{label}={spec}" for label, spec in MODELS.items()],
            delay=str(delay), out=os.path.join(args.out, name), runner=args.runner,
            bins=BINS, alphas=[ALPHA], repredict=f"every_k_labels:{delay // 10}",
            log_predictions="none", quiet=True)
        rows += table_rows(name, run(config))
    table = pd.DataFrame(rows)
    os.makedirs(args.out, exist_ok=True)
    table.to_csv(os.path.join(args.out, "table2.csv"), index=False)
    print(table.to_string(index=False))
    return table


if __name__ == "__main__":
    main()
