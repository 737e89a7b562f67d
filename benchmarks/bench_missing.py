"""Rows that lack features: a table's missing cells kept as absent features (`{"missing":
"drop"}`), under re-evaluation, against the same table without missing cells. Whole processes,
as a user runs them.

    python -m benchmarks.bench_missing [--n 20000] [--features 40] [--text 0] [--missing 0.02]
        [--delay 1000] [--models gaussian-nb hoeffding-tree] [--repeats 3] [--regression]

A CSV table of `n` rows of `features` normal features, `text` text columns (8 categories each,
for `one-hot-text | MODEL`) and a binary label (a noisy linear concept in the numbers; with
`--regression`, that noisy linear function itself, for regressors) is
written three times: whole; with one feature's cell empty in a share `missing` of the rows, the
first row whole; and the same with the first row lacking a feature too, a number and a text if
any (a model's batch takes its features from the first row it meets). Each is run with
`delayed-eval run --repredict every_k_labels:10` (the default re-evaluation, B = 100, every
default output) and the median wall time printed with its ratio to the whole table's. A model
whose batch leaves out the features a row lacks, as its `predict_one` does (GaussianNB,
logistic and linear regression, the Hoeffding trees and their forests, AMRules, a pipeline
ending in one), re-predicts such rows with the others; any other answers them with
`predict_one`, one by one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd


def write_tables(folder: str, n: int, d: int, missing: float, text: int = 0,
                 regression: bool = False) -> dict[str, str]:
    """{table: path} of the whole table and its two tables with missing cells."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, d))
    y = x @ rng.normal(size=d) + rng.normal(scale=2.0, size=n)
    y = y if regression else (y > 0).astype(int)
    whole = pd.DataFrame(x, columns=[f"f{j}" for j in range(d)])
    for j in range(text):
        whole[f"t{j}"] = np.char.add("c", rng.integers(0, 8, size=n).astype(str))
    whole.insert(0, "time", np.arange(n, dtype=float))
    whole["label"] = y
    lacking = whole.copy()
    rows = np.flatnonzero(rng.random(n) < missing)
    rows = rows[rows > 0]
    for i, j in zip(rows, rng.integers(0, d + text, size=len(rows))):
        lacking.iat[i, 1 + j] = None if j >= d else np.nan
    first_lacking = lacking.copy()
    first_lacking.iat[0, 1 + d // 2] = np.nan
    if text:
        first_lacking.iat[0, 1 + d] = None
    paths = {}
    for name, table in [("whole", whole), ("missing cells", lacking),
                        ("missing cells, the first row's too", first_lacking)]:
        paths[name] = os.path.join(folder, f"{len(paths)}.csv")
        table.to_csv(paths[name], index=False)
    return paths


def run(path: str, model: str, delay: int, out: str) -> float:
    """Seconds of one `delayed-eval run` process."""
    command = [sys.executable, "-m", "pipelines.cli", "run",
               "--stream", path + '{"time": "time", "missing": "drop"}', "--model", model,
               "--delay", str(delay), "--out", out, "--runner", "direct", "--quiet"]
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--features", type=int, default=40)
    parser.add_argument("--text", type=int, default=0)
    parser.add_argument("--missing", type=float, default=0.02)
    parser.add_argument("--delay", type=int, default=1000)
    parser.add_argument("--models", nargs="+", default=["gaussian-nb", "hoeffding-tree"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--regression", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        paths = write_tables(folder, args.n, args.features, args.missing, args.text,
                             args.regression)
        print(f"{args.n} rows, {args.features} features and {args.text} text columns, "
              f"{args.missing:.0%} of the rows lack one; delay {args.delay}, re-evaluation "
              f"every 10 labels; medians of {args.repeats}")
        print("| model | table | time | ratio to the whole table |\n|---|---|---|---|")
        for model in args.models:
            times: dict = {name: [] for name in paths}
            for _ in range(args.repeats):  # interleaved: load drift hits every table alike
                for name, path in paths.items():
                    times[name].append(run(path, model, args.delay,
                                           os.path.join(folder, "out")))
            whole = statistics.median(times["whole"])
            for name in paths:
                median = statistics.median(times[name])
                shown = model.replace("|", "\\|")  # (a pipeline, in a Markdown table)
                print(f"| {shown} | {name} | {median:.1f} s | {median / whole:.2f} |")


if __name__ == "__main__":
    main()
