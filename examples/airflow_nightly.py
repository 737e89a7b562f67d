"""A nightly Airflow DAG: score yesterday's predictions of a deployed fraud model from its logs,
alert when a measure crosses a threshold, re-score the day a week back once its labels have
come, and draw the trend across nights.

Each task is one `delayed-eval` command in a `BashOperator`. A crossed `--fail-if` threshold
makes the command exit with status 3 after the results are written, so the task fails and
Airflow's usual alerting (`email_on_failure`, `on_failure_callback`) fires; status 2 is a
mistake in the input or the options, 1 an internal error, 143 a task Airflow stopped (SIGTERM:
its day's previous results are left as they were). Every run publishes its folder atomically,
so a retried or cleared task re-scores its day in place.

The commands are built by `commands(root, runner)` so that the test suite runs them as they
are written here (tests/test_examples.py); the DAG itself needs Airflow 2.4 or later.
"""

from __future__ import annotations

import datetime as dt

SCORE = ("delayed-eval backfill --quiet "
         "--stream 'fraud={root}/logs/instances{{\"labels\": \"{root}/logs/labels\", "
         "\"features\": [\"amount\", \"hour\"], \"positive\": \"fraud\"}}' "
         "--predictions '{root}/logs/predictions{{\"time\": \"scored_at\", "
         "\"prediction\": \"decision\", \"model\": \"model_version\", \"score\": \"p_fraud\", "
         "\"positive\": \"fraud\"}}' "
         "--segment country --from {day} --to {day} "
         "--out {root}/results/fraud/date={day} --runner {runner} "
         "--fail-if 'initial recall (fraud) < 0.5' "
         "--fail-if 'initial precision (fraud) [country] < 0.3'")
TREND = ("delayed-eval trend {root}/results/fraud --metric 'recall (fraud)' "
         "--metric 'precision (fraud)' --metric log_loss")


def commands(root: str, runner: str = "direct-mp") -> dict[str, str]:
    """The DAG's commands, with Airflow's templates for the days: `score` (yesterday's run,
    `{{ ds }}`), `rescore` (the same for the day a week back, whose labels have mostly come
    since) and `trend`.

    >>> sorted(commands("/srv/eval"))
    ['rescore', 'score', 'trend']
    """
    return {"score": SCORE.format(root=root, runner=runner, day="{{ ds }}"),
            "rescore": SCORE.format(root=root, runner=runner,
                                    day="{{ macros.ds_add(ds, -7) }}"),
            "trend": TREND.format(root=root)}


try:  # the DAG, where Airflow is installed
    from airflow import DAG
    from airflow.operators.bash import BashOperator
except ImportError:  # pragma: no cover - Airflow is not a dependency of delayed-eval
    DAG = None

if DAG is not None:  # pragma: no cover
    with DAG("fraud_model_evaluation", schedule="30 2 * * *",
             start_date=dt.datetime(2026, 11, 1), catchup=False,
             default_args={"retries": 0, "email_on_failure": True,
                           "email": ["ml-oncall@example.com"]}):
        steps = commands("/srv/eval")
        score = BashOperator(task_id="score_fraud_model", bash_command=steps["score"])
        rescore = BashOperator(task_id="rescore_week_ago", bash_command=steps["rescore"])
        # The trend is drawn whatever the thresholds said (all_done, not all_success).
        trend = BashOperator(task_id="trend", bash_command=steps["trend"],
                             trigger_rule="all_done")
        [score, rescore] >> trend
