"""The DAG factories: ``make_dag`` for both planning DAGs, ``make_review_dag``; the files in
``dags/`` only call them. Their forms are in ``workflow.forms``, the evaluate task's operator in
``workflow.evaluate_operator``, the tasks' work in ``workflow.tasks``.

``lagassign_rebalance``: manual, typed parameters in the trigger form.
``lagassign_daily``: scheduled daily, no catch-up, one run at a time, with the same form (so
anyone can see what applies, and trigger it by hand); a scheduled run takes the form's defaults,
then the optional JSON Variable ``lagassign_daily_params``, then ``apply`` from the Variable
``lagassign_apply`` (default off: plan and record only), and logs each setting with its source.
Tasks: start -> snapshot -> evaluate (Spark) -> record -> gate -> publish -> finish.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from airflow.sdk import DAG, TriggerRule, task

from . import dag_ids, tasks
from .evaluate_operator import evaluate_operator
from .forms import rebalance_params, review_params, scheduled_settings
from .hooks import DEFAULT_CONN_ID

KINDS = {dag_ids.REBALANCE, dag_ids.DAILY}


def make_dag(dag_id: str, kafka_conn_id: str = DEFAULT_CONN_ID) -> DAG:
    """Build ``lagassign_rebalance`` or ``lagassign_daily``."""
    if dag_id not in KINDS:
        raise ValueError(f"unknown lagassign DAG {dag_id!r}; known: {', '.join(sorted(KINDS))}")
    manual = dag_id == dag_ids.REBALANCE
    with DAG(
        dag_id=dag_id,
        description="Lag-aware rebalance plans for Kafka consumer groups",
        schedule=None if manual else "@daily",
        start_date=datetime(2026, 1, 1),
        catchup=False,
        max_active_runs=1,
        params=rebalance_params(daily=not manual),
        tags=["lagassign", "kafka"],
        default_args={"retries": 0, "retry_delay": timedelta(minutes=1)},
        doc_md=__doc__,
    ) as dag:

        @task(task_id="start", show_return_value_in_logs=False)
        def start(**context: Any) -> dict:
            run = context["dag_run"]
            params = dict(context["params"]) if manual else scheduled_settings(run.conf)
            return tasks.start(params, run.dag_id, run.run_id, run.run_type, run.triggering_user_name)

        @task(task_id="snapshot", show_return_value_in_logs=False)
        def snapshot(run: Any) -> dict:
            return tasks.snapshot(run, kafka_conn_id)

        @task(task_id="record", show_return_value_in_logs=False)
        def record(run: Any) -> int:
            return tasks.record(run)

        @task(task_id="gate", show_return_value_in_logs=False)
        def gate(run: Any) -> list[dict]:
            return tasks.gate(run)

        @task(task_id="publish", show_return_value_in_logs=False)
        def publish(run: Any, decisions: Any) -> list[dict]:
            return tasks.publish(run, decisions, kafka_conn_id)

        @task(task_id="finish", trigger_rule=TriggerRule.ALL_DONE)
        def finish(**context: Any) -> None:
            ti = context["ti"]
            run = ti.xcom_pull(task_ids="start")
            done = {s: ti.xcom_pull(task_ids=s) is not None for s in tasks.STEPS if s != "evaluate"}
            # The Spark task returns nothing; it ended well if the step after it ran.
            done["evaluate"] = done.get("record", False)
            tasks.finish(run, done)

        run = start()
        snap = snapshot(run)
        evaluate = evaluate_operator()
        recorded = record(run)
        decisions = gate(run)
        published = publish(run, decisions)
        snap >> evaluate >> recorded >> decisions
        published >> finish()
    return dag


def make_review_dag(kafka_conn_id: str = DEFAULT_CONN_ID) -> DAG:
    """``lagassign_review``: publish one group of a plan someone reviewed, or roll a group back
    to a version published before, each as its own audited plan.

    Triggered from the plans page ("publish this plan"), so Airflow's permission to trigger
    this DAG is what authorises a publication, and the run records who asked."""
    with DAG(
        dag_id=dag_ids.REVIEW,
        description="Publish a reviewed lagassign plan",
        schedule=None,
        start_date=datetime(2026, 1, 1),
        catchup=False,
        params=review_params(),
        tags=["lagassign", "kafka"],
        default_args={"retries": 0},
        doc_md=make_review_dag.__doc__,
        # On from the start: it runs only when the plans pages trigger it, and a paused review
        # DAG left every publish and roll back queued.
        is_paused_upon_creation=False,
    ) as dag:

        @task(task_id="publish", show_return_value_in_logs=False)
        def publish(**context: Any) -> dict:
            run = context["dag_run"]
            return tasks.review(
                dict(context["params"]), kafka_conn_id, run.dag_id, run.run_id, run.triggering_user_name
            )

        publish()
    return dag
