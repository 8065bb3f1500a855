"""One factory for both planning DAGs; the files in ``dags/`` only call ``make_dag``.

``lagassign_rebalance``: manual, typed parameters in the trigger form.
``lagassign_daily``: scheduled daily, no catch-up, one run at a time; ``apply`` comes from the
Airflow Variable ``lagassign_apply`` (default off: plan and record only), other settings from
the optional JSON Variable ``lagassign_daily_params``.
Tasks: start -> snapshot -> evaluate (Spark) -> record -> gate -> publish -> finish.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta
from typing import Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, Param, TriggerRule, Variable, task

from ..core.gate import DEFAULT_MIN_IMPROVEMENT, DEFAULT_THRESHOLD
from ..core.lag import RESET_POLICIES
from ..core.strategies import strategy_names
from . import tasks
from .hooks import DEFAULT_CONN_ID

KINDS = {"lagassign_rebalance", "lagassign_daily"}


def rebalance_params() -> dict[str, Param]:
    """The trigger form of ``lagassign_rebalance``; invalid values fail before any task runs."""
    names = strategy_names()
    return {
        "groups": Param(
            ".*",
            type="string",
            format="regex",
            title="Groups",
            description="Regular expression a group id must match in full.",
        ),
        "strategies": Param(
            names,
            type="array",
            title="Strategies",
            items={"type": "string", "enum": names},
            examples=names,
            minItems=1,
            uniqueItems=True,
            description="Strategies to evaluate (current is always evaluated).",
        ),
        "threshold": Param(
            DEFAULT_THRESHOLD,
            type="number",
            minimum=1.0,
            title="Imbalance threshold",
            description="Go on only when max/mean member lag of the current assignment exceeds this.",
        ),
        "min_improvement": Param(
            DEFAULT_MIN_IMPROVEMENT,
            type="number",
            minimum=0,
            exclusiveMaximum=1,
            title="Minimum improvement",
            description="Fraction the best plan must lower the max member lag by.",
        ),
        "max_moves": Param(
            None,
            type=["null", "integer"],
            minimum=0,
            title="Max moves",
            description="Most partitions a plan may move (empty: no limit).",
        ),
        "max_catch_up_s": Param(
            None,
            type=["null", "number"],
            exclusiveMinimum=0,
            title="Max catch-up (s)",
            description="Groups whose members state capacities also go on when their slowest "
            "member needs longer than this many seconds to catch up (empty: off).",
        ),
        "exact_budget": Param(
            None,
            type=["null", "number"],
            minimum=0,
            title="Exact budget (s)",
            description="lag-optimal: seconds of exact solving per group to prove its plan optimal "
            "or improve it (empty: off; needs the certify extra, highspy).",
        ),
        "apply": Param(
            False,
            type="boolean",
            title="Apply",
            description="Publish plans that pass the gate (off: plan and record only).",
        ),
        "dry_run": Param(
            False,
            type="boolean",
            title="Dry run",
            description="Go through publishing without writing to Kafka.",
        ),
        "groups_file": Param(
            "",
            type="string",
            title="Groups file",
            description="YAML file declaring groups in manual assign() mode.",
        ),
        "auto_offset_reset": Param(
            "latest",
            type="string",
            enum=list(RESET_POLICIES),
            title="auto.offset.reset",
            description="Reset policy assumed for groups that declare none.",
        ),
    }


def _daily_settings() -> dict[str, Any]:
    settings = json.loads(Variable.get("lagassign_daily_params", default="{}") or "{}")
    apply = str(Variable.get("lagassign_apply", default="false")).strip().lower()
    settings["apply"] = apply in ("1", "true", "yes", "on")
    return settings


def _spark_operator(kafka_conn_id: str) -> SparkSubmitOperator:
    from ..spark.submit import spark_submit_settings

    # The library zip is (re)built by the start task, not on every parse of the DAG file.
    settings = spark_submit_settings(build=False)
    return SparkSubmitOperator(
        task_id="evaluate",
        application=settings["application"],
        application_args=["{{ ti.xcom_pull(task_ids='start')['spark_params'] }}"],
        py_files=settings["py_files"],
        conf=settings["conf"],
        env_vars=settings["env"],
        spark_binary=settings["spark_binary"],
        conn_id=os.environ.get("LAGASSIGN_SPARK_CONN_ID", "spark_default"),
        name="lagassign-evaluate",
        verbose=False,
    )


def make_dag(dag_id: str, kafka_conn_id: str = DEFAULT_CONN_ID) -> DAG:
    """Build ``lagassign_rebalance`` or ``lagassign_daily``."""
    if dag_id not in KINDS:
        raise ValueError(f"unknown lagassign DAG {dag_id!r}; known: {', '.join(sorted(KINDS))}")
    manual = dag_id == "lagassign_rebalance"
    with DAG(
        dag_id=dag_id,
        description="Lag-aware rebalance plans for Kafka consumer groups",
        schedule=None if manual else "@daily",
        start_date=datetime(2026, 1, 1),
        catchup=False,
        max_active_runs=1,
        params=rebalance_params() if manual else {},
        tags=["lagassign", "kafka"],
        default_args={"retries": 0, "retry_delay": timedelta(minutes=1)},
        doc_md=__doc__,
    ) as dag:

        @task(task_id="start")
        def start(**context: Any) -> dict:
            run = context["dag_run"]
            params = dict(context["params"]) if manual else _daily_settings()
            return tasks.start(params, run.dag_id, run.run_id, str(run.run_type), run.triggering_user_name)

        @task(task_id="snapshot")
        def snapshot(run: Any) -> dict:
            return tasks.snapshot(run, kafka_conn_id)

        @task(task_id="record")
        def record(run: Any) -> int:
            return tasks.record(run)

        @task(task_id="gate")
        def gate(run: Any) -> list[dict]:
            return tasks.gate(run)

        @task(task_id="publish")
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
        evaluate = _spark_operator(kafka_conn_id)
        recorded = record(run)
        decisions = gate(run)
        published = publish(run, decisions)
        snap >> evaluate >> recorded >> decisions
        published >> finish()
    return dag
