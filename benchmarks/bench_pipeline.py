"""Re-evaluation of a river pipeline (`one-hot-text | gaussian-nb`, as a table with categorical
columns needs, or `one-hot-text | standard-scaler | logistic-regression`): its fast path against
one `predict_one` per row, each side its own process, on the same file.

    python -m benchmarks.bench_pipeline [--model SPEC] [--n 5000] [--extra 100] [--delay 500]
        [--k 10] [--repeats 3]

The stream: Agrawal (seed 1) with its `elevel` and `car` codes as text (as numbers when the
model has no `one-hot-text`) and `--extra` standard normal features besides (a wide table),
written once to a CSV file. Each side runs
`evaluate_locally` (the replay engine and the scoring a run uses, no Beam) with re-evaluation
every `--k` labels and the label delay given, B = 100:

- fast path: as a run does it (`transforms.models.batch.PipelineBatch` for re-predictions, the
  last step's single-row path for initial and final predictions);
- one by one: the same engine with the pipeline's own `predict_one` / `predict_proba_one` for
  every prediction (the fast paths switched off in that process).

It checks that both give the same classes (every accuracy, κ and per-bin measure equal) and
prints the medians of the interleaved runs and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = """
import json, sys, time
path, model, delay, k, fast = sys.argv[1:]
if fast == "0":  # every prediction by the pipeline's own methods
    import functools
    from transforms.models import batch, naive_bayes_batch
    from transforms.replay import engine, repredict
    repredict.batch_predictor = lambda model: batch.BatchPredictor()
    engine.fast_predict_one = lambda model: model.predict_one
    engine.predict_with_proba = lambda model: functools.partial(
        naive_bayes_batch._class_and_proba, model)
from pipelines import evaluate_locally
start = time.perf_counter()
result = evaluate_locally(path + '{"label": "y"}', model, delay,
                          repredict=f"every_k_labels:{k}")
seconds = time.perf_counter() - start
rows = result.summary.query("metric in ('accuracy', 'kappa', 'kappa_t')")
print(json.dumps({"seconds": seconds,
                  "scores": sorted(map(str, rows[["category", "bin", "alpha", "metric",
                                                  "value"]].itertuples(index=False)))}))
"""


def write_stream(path: str, n: int, extra: int, text: bool) -> None:
    import itertools

    import numpy as np
    import pandas as pd
    from river.datasets import synth

    rng = np.random.default_rng(1)
    rows = []
    for x, y in itertools.islice(synth.Agrawal(seed=1), n):
        codes = {"elevel": f"level{x['elevel']}", "car": f"make{x['car']}"} if text else {}
        rows.append({**x, **codes, "y": y})
    table = pd.DataFrame(rows)
    noise = pd.DataFrame(rng.normal(size=(n, extra)), columns=[f"noise{j}" for j in range(extra)])
    pd.concat([table.drop(columns="y"), noise, table["y"]], axis=1).to_csv(path, index=False)


def measure(path: str, model: str, delay: int, k: int, fast: bool) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, path, model, str(delay), str(k),
                           "1" if fast else "0"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="one-hot-text | gaussian-nb")
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--extra", type=int, default=100,
                        help="standard normal features besides Agrawal's nine")
    parser.add_argument("--delay", type=int, default=500)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "agrawal.csv")
        write_stream(path, args.n, args.extra, "one-hot-text" in args.model)
        times: dict = {True: [], False: []}
        scores = {}
        for _ in range(args.repeats):
            for fast in (True, False):
                r = measure(path, args.model, args.delay, args.k, fast)
                times[fast].append(r["seconds"])
                scores[fast] = r["scores"]
    if scores[True] != scores[False]:
        raise SystemExit("the fast path and predict_one gave different scores")
    fast, slow = statistics.median(times[True]), statistics.median(times[False])
    codes = "text" if "one-hot-text" in args.model else "numeric"
    print(f"{args.model}, Agrawal with {codes} codes + {args.extra} features, "
          f"{args.n:,} events, delay {args.delay}, re-evaluation every {args.k} labels, B = 100; "
          f"medians of {args.repeats} interleaved runs (same scores)")
    print("| predictions | time | ratio |")
    print("|---|---|---|")
    print(f"| one `predict_one` per row | {slow:.1f} s | 1 |")
    print(f"| fast path | {fast:.1f} s | **{slow / fast:.1f}×** faster |")


if __name__ == "__main__":
    main()
