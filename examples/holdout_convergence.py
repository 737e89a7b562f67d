"""The prequential error against the holdout error (Gama et al. 2009, Fig. 3) on a stationary
stream.

    python -m examples.holdout_convergence [--out out/holdout] [--n 50000]

A Hoeffding tree (river's defaults) on RandomRBF (seed 2, stationary), label delay 100. A
periodic holdout every 5 000 labels (`--holdout 5000:1000`: a copy of the tree frozen there
predicts the next 1 000 instances, never learned) against the prequential error of the initial
predictions: cumulative, over sliding windows of 1 000 and 5 000 labels and with fading factors
0.999 and 0.9999. Prints the errors at each holdout point, writes them to `convergence.csv`, and
draws the report's figure (`figures/forgetting.png`).
"""

from __future__ import annotations

import argparse
import logging
import os

logging.basicConfig(level=logging.ERROR)  # Beam's import-time notices about cloud clients

import pandas as pd  # noqa: E402

from pipelines.config import RunConfig  # noqa: E402
from pipelines.job import run  # noqa: E402
from pipelines.report import write_report  # noqa: E402

WINDOWS, FADINGS = [1000, 5000], [0.999, 0.9999]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out/holdout")
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--runner", default="direct")
    args = parser.parse_args(argv)
    run(RunConfig(streams=[f'rbf=synth:RandomRBF{{"n": {args.n}, "seed": 2}}'],
                  models=["ht=hoeffding-tree"], delay="100", out=args.out, runner=args.runner,
                  repredict="none", log_predictions="none", drift_on="none",
                  holdout="5000:1000", windows=WINDOWS, fadings=FADINGS, curve_every=5000,
                  quiet=True))
    write_report(args.out)
    curves = pd.read_parquet(os.path.join(args.out, "curves.parquet"))
    accuracy = curves[(curves["metric"] == "accuracy") & curves["class"].isna()]
    holdout = accuracy[accuracy["category"] == "holdout"].set_index("labels")["value"]
    prequential = accuracy[accuracy["category"] == "initial"].pivot_table(
        index="labels", columns="window", values="value")
    table = (1 - prequential.loc[prequential.index.isin(holdout.index)]).assign(
        holdout=1 - holdout).round(4)
    table.to_csv(os.path.join(args.out, "convergence.csv"))
    print("error rate (1 − accuracy) at each holdout point (labels)")
    print(table.to_string())


if __name__ == "__main__":
    main()
