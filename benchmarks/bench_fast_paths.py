"""Each model's fast re-prediction path against one `predict_one` per due instance, in the
replay alone.

    python -m benchmarks.bench_fast_paths [--delay 500] [--cases NAME ...]

For each case (a stream spec, a model spec and K of `every_k_labels:K`): the replay engine
drains the stream's events twice in one process — with the model's batch predictor
(`transforms.models.batch.batch_predictor`), and with the generic one, which asks the model's
`predict_one` for each due instance (still reusing an answer when the model has not changed).
It prints both times and how many outcomes differ in their initial, final or any re-prediction
(time or value): 0, or the fast path is wrong.
"""

from __future__ import annotations

import argparse
import time

from transforms.models import batch
from transforms.models.specs import ModelSpec
from transforms.replay import repredict
from transforms.replay.engine import ReplayEngine
from transforms.replay.repredict import RepredictPolicy
from transforms.streams.delays import DelaySpec
from transforms.streams.sources import StreamSpec

LED = 'synth:LED{"n": 3000, "seed": 2}'
DRIFTING = 'synth:Agrawal{"n": 4000, "seed": 3, "drift": [{"at": 1500, ' \
    '"classification_function": 4, "width": 100}]}'
SEA, FRIEDMAN = 'synth:SEA{"n": 3000, "seed": 7}', 'synth:Friedman{"n": 3000, "seed": 5}'
CASES = {
    "knn-sea": (SEA, "knn", 10),
    "knn-led": (LED, "knn", 10),
    "knn-regressor-friedman": (FRIEDMAN, "knn-regressor", 10),
    "scaler-knn-sea": (SEA, "standard-scaler | knn", 10),
    "scaler-linear-regression-friedman": (FRIEDMAN, "standard-scaler | linear-regression", 10),
    "logistic-regression-sea": (SEA, "logistic-regression", 10),
    "scaler-logistic-regression-sea": (SEA, "standard-scaler | logistic-regression", 10),
    "scaler-gaussian-nb-sea": (SEA, "standard-scaler | gaussian-nb", 10),
    "arf-led": (LED, 'adaptive-random-forest{"n_models": 5}', 3),
    "hat-led": (LED, 'hoeffding-adaptive-tree{"grace_period": 50}', 3),
    "hat-drift": (DRIFTING, 'hoeffding-adaptive-tree{"grace_period": 50}', 2),
    "bagging-led": (LED, 'river.ensemble.BaggingClassifier{"model": {"hoeffding-tree": '
                         '{"grace_period": 50}}, "n_models": 4}', 2),
    "adwin-bagging-hat-drift": (DRIFTING, 'river.ensemble.ADWINBaggingClassifier{"model": '
                                          '{"hoeffding-adaptive-tree": {"grace_period": 50}}, '
                                          '"n_models": 3}', 3),
    "srp-led": (LED, 'river.ensemble.SRPClassifier{"n_models": 5}', 3),
    "tree-regressor-friedman": (FRIEDMAN, 'hoeffding-tree-regressor{"grace_period": 50}', 2),
    "tc-of-nb-drift": (DRIFTING, 'temporal-correction{"model": "gaussian-nb"}', 2),
    "ta-of-tree-led": (LED, 'temporally-augmented{"model": {"hoeffding-tree": '
                            '{"grace_period": 50}}, "lags": 2}', 2),
    "adaptive-tree-regressor-friedman": (FRIEDMAN,
                                         'river.tree.HoeffdingAdaptiveTreeRegressor'
                                         '{"grace_period": 50}', 2),
    "amrules-friedman": (FRIEDMAN, 'river.rules.AMRules', 2),
    "amrules-12-rules-friedman": (FRIEDMAN,
                                  'river.rules.AMRules{"n_min": 30, "delta": 0.05, "tau": 0.1}',
                                  2),
    "arf-regressor-friedman": (FRIEDMAN, 'river.forest.ARFRegressor{"n_models": 5}', 3),
    "srp-regressor-friedman": (FRIEDMAN, 'river.ensemble.SRPRegressor{"n_models": 5}', 3),
}


def drain(events: list, spec: ModelSpec, k: int, generic: bool) -> tuple[float, str, list]:
    """(seconds, predictor class, [(id, initial, final, re-predictions)]) of one drain."""
    chosen = repredict.batch_predictor
    if generic:
        repredict.batch_predictor = lambda model: batch.BatchPredictor()
    try:
        engine = ReplayEngine(spec, "s", None, repredict=RepredictPolicy("every_k_labels", k))
        start = time.perf_counter()
        outcomes = engine.drain(events).outcomes
        seconds = time.perf_counter() - start
    finally:
        repredict.batch_predictor = chosen
    return seconds, type(engine.rows.predictor).__name__, [
        (o.id, o.initial, o.final, None if o.rep_times is None else
         (o.rep_times.tolist(), o.rep_values.tolist())) for o in outcomes]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--delay", default="500", help="label delay (events)")
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    args = parser.parse_args()
    print(f"delay {args.delay} events; the replay alone (no Beam, no scoring)")
    print(f"{'case':34s} {'K':>2s} {'fast path':36s} {'fast s':>7s} {'generic s':>9s} "
          f"{'speed-up':>8s} {'outcomes':>8s} {'differ':>6s}")
    for name in args.cases:
        stream, model, k = CASES[name]
        events = sorted(e for e in StreamSpec.parse(stream).events(DelaySpec.parse(args.delay))
                        if not isinstance(e, dict))
        spec = ModelSpec.parse(model)
        fast_s, predictor, fast = drain(events, spec, k, generic=False)
        generic_s, _, generic = drain(events, spec, k, generic=True)
        differ = sum(a != b for a, b in zip(fast, generic)) + abs(len(fast) - len(generic))
        print(f"{name:34s} {k:2d} {predictor:36s} {fast_s:7.1f} {generic_s:9.1f} "
              f"{generic_s / fast_s:7.1f}x {len(fast):8d} {differ:6d}", flush=True)


if __name__ == "__main__":
    main()
