"""One factory for both planning DAGs; the files in ``dags/`` only call ``make_dag``.

``lagassign_rebalance``: manual, typed parameters in the trigger form.
``lagassign_daily``: scheduled daily, no catch-up, one run at a time, with the same form (so
anyone can see what applies, and trigger it by hand); a scheduled run takes the form's defaults,
then the optional JSON Variable ``lagassign_daily_params``, then ``apply`` from the Variable
``lagassign_apply`` (default off: plan and record only), and logs each setting with its source.
Tasks: start -> snapshot -> evaluate (Spark) -> record -> gate -> publish -> finish.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, Param, TriggerRule, Variable, task

from ..core.gate import DEFAULT_MIN_IMPROVEMENT, DEFAULT_THRESHOLD
from ..core.lag import RESET_POLICIES
from ..core.strategies import strategy_names
from ..spark.submit import spark_submit_settings
from . import tasks
from .hooks import DEFAULT_CONN_ID

KINDS = {"lagassign_rebalance", "lagassign_daily"}


def rebalance_params(daily: bool = False) -> dict[str, Param]:
    """The trigger form of both planning DAGs; every field can be submitted with its default.

    Rules the form cannot show without changing what was typed live in the descriptions and are
    checked by the start task, which records a failed plan with a one-line reason: Airflow's form
    silently clamps a number to a schema ``minimum`` (threshold "0.5" became 1), and a schema
    ``format: regex`` error comes back after Trigger as a raw JSON-schema dump. Optional text
    fields allow null: the form treats an empty string as a missing required value.
    """
    return {
        **_selection_params(strategy_names()),
        **_gate_params(),
        **_publishing_params(daily),
        **_input_params(),
    }


def _selection_params(names: list[str]) -> dict[str, Param]:
    """Which groups and which strategies a run evaluates."""
    return {
        "groups": Param(
            ".*",
            type="string",
            title="Groups",
            description="Regular expression a group id must match in full (.* = every group). "
            "Checked when the run starts.",
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
    }


def _gate_params() -> dict[str, Param]:
    """The gate's thresholds and the limits on a plan."""
    return {
        "threshold": Param(
            DEFAULT_THRESHOLD,
            type="number",
            title="Imbalance threshold",
            description=f"A number ≥ 1.0 (default {DEFAULT_THRESHOLD}): go on only when the current "
            "assignment's max/mean member lag exceeds it. 1.10 = the busiest consumer may be 10% above "
            "the mean.",
        ),
        "min_improvement": Param(
            DEFAULT_MIN_IMPROVEMENT,
            type="number",
            title="Minimum improvement",
            description=f"A fraction in [0, 1) (default {DEFAULT_MIN_IMPROVEMENT}): how much the best "
            "plan must lower the max member lag, 0.05 = 5%.",
        ),
        "max_moves": Param(
            None,
            type=["null", "integer"],
            title="Max moves",
            description="A whole number ≥ 0: most partitions a plan may move (empty: no limit).",
        ),
        "max_catch_up_s": Param(
            None,
            type=["null", "number"],
            title="Max catch-up (s)",
            description="Seconds > 0: groups whose members state capacities also go on when their "
            "slowest member needs longer than this many seconds to catch up (empty: off).",
        ),
        "exact_budget": Param(
            None,
            type=["null", "number"],
            title="Exact budget (s)",
            description="Seconds ≥ 0, lag-optimal and drain-optimal: exact solving per group to "
            "prove the plan optimal or improve it (empty: off; needs the certify extra, highspy).",
        ),
    }


def _publishing_params(daily: bool) -> dict[str, Param]:
    """Whether plans that pass the gate are published, and how."""
    apply_note = (
        " Scheduled runs take it from the Airflow Variable lagassign_apply (default off)." if daily else ""
    )
    return {
        "apply": Param(
            False,
            type="boolean",
            title="Apply",
            description="Publish plans that pass the gate (off: plan and record only)." + apply_note,
        ),
        "dry_run": Param(
            False,
            type="boolean",
            title="Dry run",
            description="Go through publishing without writing to Kafka.",
        ),
    }


def _input_params() -> dict[str, Param]:
    """What the snapshot reads beside the cluster: declared groups and the reset policy."""
    return {
        "groups_file": Param(
            None,
            type=["null", "string"],
            title="Groups file",
            description="Optional YAML file declaring groups in manual assign() mode that do not "
            "announce themselves on the status topic (empty: the workers' LAGASSIGN_GROUPS_FILE, if "
            "set; else none).",
        ),
        "auto_offset_reset": Param(
            "latest",
            type="string",
            enum=list(RESET_POLICIES),
            title="auto.offset.reset",
            description="Reset policy assumed for groups that declare none.",
        ),
    }


def daily_settings(
    defaults: Mapping[str, Any],
    variables: Mapping[str, Any],
    apply_variable: str | None,
    conf: Mapping[str, Any] | None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The settings of a ``lagassign_daily`` run and where each came from.

    Later wins: the form's defaults, the JSON Variable ``lagassign_daily_params``, the Variable
    ``lagassign_apply``, then what the run was triggered with (a manual trigger sends the form).
    Returns (settings, source per key) so the start task can log what applies.
    """
    settings, sources = dict(defaults), dict.fromkeys(defaults, "default")
    for key, value in variables.items():
        settings[key], sources[key] = value, "Variable lagassign_daily_params"
    if apply_variable is not None:
        settings["apply"] = str(apply_variable).strip().lower() in ("1", "true", "yes", "on")
        sources["apply"] = "Variable lagassign_apply"
    for key, value in (conf or {}).items():
        settings[key], sources[key] = value, "trigger"
    return settings, sources


def _daily_settings(conf: Mapping[str, Any] | None) -> dict[str, Any]:
    defaults = {k: v.value if isinstance(v, Param) else v for k, v in rebalance_params(daily=True).items()}
    variables = json.loads(Variable.get("lagassign_daily_params", default="{}") or "{}")
    apply = Variable.get("lagassign_apply", default=None)
    settings, sources = daily_settings(defaults, variables, apply, conf)
    for key in sorted(settings):
        tasks.log.info("setting %s = %s (%s)", key, json.dumps(settings[key], default=str), sources[key])
    return settings


class _QuietSubmitHook(SparkSubmitHook):
    """The provider's hook, building the same command without logging all of it."""

    def _build_spark_submit_command(self, application: str) -> list[str]:
        command = self._get_spark_binary_path()
        command.extend(self._build_spark_common_args())
        command.append(application)
        command.extend(self._application_args or ())
        tasks.log.info(
            "spark-submit %s with %d arguments (its parameters: %s)",
            os.path.basename(application),
            len(command),
            (self._application_args or ["-"])[0],
        )
        return command


class EvaluateOperator(SparkSubmitOperator):
    """spark-submit of the evaluation job, logging one line about it instead of the whole
    command line (dozens of --conf and --py-files entries before the job's own output)."""

    def _get_hook(self) -> SparkSubmitHook:
        hook = super()._get_hook()
        hook.__class__ = _QuietSubmitHook  # same state, one method quieter
        return hook


def _spark_operator(kafka_conn_id: str) -> SparkSubmitOperator:
    # The library zip is (re)built by the start task, not on every parse of the DAG file.
    settings = spark_submit_settings(build=False)
    return EvaluateOperator(
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
        params=rebalance_params(daily=not manual),
        tags=["lagassign", "kafka"],
        default_args={"retries": 0, "retry_delay": timedelta(minutes=1)},
        doc_md=__doc__,
    ) as dag:

        @task(task_id="start", show_return_value_in_logs=False)
        def start(**context: Any) -> dict:
            run = context["dag_run"]
            params = dict(context["params"]) if manual else _daily_settings(run.conf)
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
        evaluate = _spark_operator(kafka_conn_id)
        recorded = record(run)
        decisions = gate(run)
        published = publish(run, decisions)
        snap >> evaluate >> recorded >> decisions
        published >> finish()
    return dag


REVIEW_DAG_ID = "lagassign_review"


def review_params() -> dict[str, Param]:
    """The form of ``lagassign_review`` (the plans page fills it in)."""
    return {
        "action": Param(
            "publish",
            type="string",
            enum=["publish", "rollback"],
            title="Action",
            description="publish: the group's plan from the reviewed plan; rollback: publish again "
            "the members of a version published before, as a new version.",
        ),
        "plan_id": Param(
            None,
            type=["null", "integer"],
            title="Plan",
            description="publish: the reviewed plan's number (see Rebalance plans).",
        ),
        "version": Param(
            None,
            type=["null", "integer"],
            title="Version",
            description="rollback: the published version to go back to.",
        ),
        "group": Param(None, type=["null", "string"], title="Group", description="The group to publish."),
        "dry_run": Param(
            False,
            type="boolean",
            title="Dry run",
            description="Go through publishing without writing to Kafka.",
        ),
    }


def make_review_dag(kafka_conn_id: str = DEFAULT_CONN_ID) -> DAG:
    """``lagassign_review``: publish one group of a plan someone reviewed, or roll a group back
    to a version published before, each as its own audited plan.

    Triggered from the plans page ("publish this plan"), so Airflow's permission to trigger
    this DAG is what authorises a publication, and the run records who asked."""
    with DAG(
        dag_id=REVIEW_DAG_ID,
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
