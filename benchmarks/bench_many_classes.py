"""A stream of many classes: delayed-eval against river on the same CSV file, whole processes.

    python -m benchmarks.bench_many_classes [--n 20000] [--classes 300] [--features 5]
        [--delay 100] [--model gaussian-nb] [--repeats 1]

river's RandomRBF generator (`n_classes` classes, `n_features` features, two centroids a
class, seeds 7) is written once as a CSV file (`time`, the features, `label` as text). Then each
run is its own process:

- river's `evaluate.progressive_val_score` (initial predictions only) on the file, read with
  `river.stream.iter_csv`;
- `delayed-eval run` on the file with re-evaluation off (`--repredict none`: initial and final
  predictions, every default output), and with the run's defaults (re-evaluation every 10
  labels, B = 100).

Prints each run's median wall time, its ratio to river's, its peak resident memory, and the
size of what the run wrote (summary rows, MB on disk): with k classes the summary holds k per-class
rows per measure and k² confusion cells.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

from benchmarks.bench_files import timed

RIVER = """
import json, sys
from river import evaluate, metrics, stream
from benchmarks.bench_memory import own_peak_mib
from transforms.models.specs import ModelSpec
path, delay, model, features = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
data = stream.iter_csv(path, target="label", drop=["time"],
                       converters={f"x{i}": float for i in range(features)})
accuracy = metrics.Accuracy()
evaluate.progressive_val_score(data, ModelSpec.parse(model).build(), accuracy, delay=delay)
print(json.dumps({"peak_mib": own_peak_mib(), "accuracy": accuracy.get()}))
"""

OURS = """
import json, sys
from benchmarks.bench_memory import own_peak_mib
from pipelines.cli import main
code = main(sys.argv[1:])
print(json.dumps({"peak_mib": own_peak_mib(), "code": code}))
"""


def write_stream(path: str, n: int, classes: int, features: int) -> None:
    """RandomRBF rows as a CSV file: `time` (1, 2, ...), `x0`..., `label` (`c<class>`)."""
    import itertools

    import pandas as pd
    from river.datasets import synth

    rows = itertools.islice(synth.RandomRBF(seed_model=7, seed_sample=7, n_classes=classes,
                                            n_features=features, n_centroids=2 * classes), n)
    xs, ys = [], []
    for x, y in rows:
        xs.append([x[i] for i in range(features)])
        ys.append(f"c{y}")
    table = pd.DataFrame(xs, columns=[f"x{i}" for i in range(features)])
    table.insert(0, "time", range(1, n + 1))
    table["label"] = ys
    table.to_csv(path, index=False)


def child(script: str, *args: str) -> dict:
    """The script's process, timed whole (start-up and imports included, as a user waits)."""
    seconds, out = timed([sys.executable, "-c", script, *args], cwd=os.getcwd())
    return json.loads(out.strip().splitlines()[-1]) | {"seconds": seconds}


def written(out: str) -> tuple[int, float]:
    """(summary rows, MB the run wrote)."""
    with open(os.path.join(out, "summary.csv")) as summary:
        rows = sum(1 for _ in summary) - 1
    size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out)
               if os.path.isfile(os.path.join(out, f)))
    return rows, size / 1e6


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--classes", type=int, default=300)
    parser.add_argument("--features", type=int, default=5)
    parser.add_argument("--delay", type=int, default=100)
    parser.add_argument("--model", default="gaussian-nb")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args(argv)
    runs = {"river progressive_val_score (initial only)": None,
            "delayed-eval, --repredict none": ["--repredict", "none"],
            "delayed-eval, defaults (every 10 labels, B = 100)": []}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "classes.csv")
        write_stream(path, args.n, args.classes, args.features)
        results: dict = {name: [] for name in runs}
        sizes: dict = {}
        for _ in range(args.repeats):  # interleaved, so that load drift hits all alike
            for name, extra in runs.items():
                if extra is None:
                    results[name].append(child(RIVER, path, str(args.delay), args.model,
                                               str(args.features)))
                    continue
                out = tempfile.mkdtemp(dir=folder)
                results[name].append(child(
                    OURS, "run", "--stream", f"classes={path}", "--model", args.model,
                    "--delay", str(args.delay), *extra, "--runner", "direct", "--quiet",
                    "--out", out))
                sizes[name] = written(out)
    print(f"RandomRBF, {args.classes} classes, {args.features} features, {args.n} rows, "
          f"{args.model}, delay {args.delay} events; medians of {args.repeats}")
    print("| run | wall time | ratio to river | peak memory | summary rows | written |")
    print("|---|---|---|---|---|---|")
    river = statistics.median(r["seconds"] for r in results[next(iter(runs))])
    for name, rs in results.items():
        seconds = statistics.median(r["seconds"] for r in rs)
        peak = max(r["peak_mib"] for r in rs)
        rows, mb = sizes.get(name, (None, None))
        print(f"| {name} | {seconds:.1f} s | {seconds / river:.2f} | {peak:.0f} MiB | "
              + (f"{rows} | {mb:.0f} MB |" if rows is not None else "| |"))


if __name__ == "__main__":
    main()
