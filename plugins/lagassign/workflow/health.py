"""``lagassign_health``: the health job in Airflow, a light periodic DAG (one task, once a minute).

Each run reads the cluster through the ``lagassign_kafka`` connection, judges every group
against the observations of the rules' window (``core.health``), records the observation and
each group's status and lag figures in the audit store (the groups page's chart between daily
runs, and the window of the next run), and sends through the configured notifiers
(``workflow.notifiers``) each status change and each failover, once.

It is on when created (monitoring that must be switched on is monitoring nobody has), and
never runs twice at once. Settings come from the environment of the Airflow components:
``LAGASSIGN_HEALTH_SCHEDULE`` (cron, or seconds; default every minute; ``off``: only when
triggered),
``LAGASSIGN_HEALTH_WINDOW`` (seconds, default 600), ``LAGASSIGN_HEALTH_GROUPS`` (a regex on
group ids; default every group), ``LAGASSIGN_GROUPS_FILE``, ``LAGASSIGN_PLAN_TOPIC``,
``LAGASSIGN_STATUS_TOPIC`` and ``LAGASSIGN_SESSION_TIMEOUT`` (as the failover DAG reads them).

Cost: see ``pipeline.health`` (one snapshot's Kafka reads per run, and a few thousand rows
written and pruned per thousand group partitions).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from ..core.errors import LagassignError
from ..pipeline.health import health_run
from ..pipeline.overview import DEFAULT_WINDOW_S, HealthSettings
from . import dag_ids
from .hooks import DEFAULT_CONN_ID, LagassignKafkaHook, open_store
from .notifiers import notifiers_from_env, sender


def _seconds(env: Mapping[str, str], name: str) -> float | None:
    text = (env.get(name) or "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise LagassignError(f"{name}={text!r} is not a number of seconds") from None
    if not value > 0:
        raise LagassignError(f"{name}={text!r} is not a positive number of seconds")
    return value


def settings_from_env(env: Mapping[str, str] | None = None) -> HealthSettings:
    """The health job's settings from the environment (module doc)."""
    env = os.environ if env is None else env
    timeout = _seconds(env, "LAGASSIGN_SESSION_TIMEOUT")
    return HealthSettings(
        window_s=_seconds(env, "LAGASSIGN_HEALTH_WINDOW") or DEFAULT_WINDOW_S,
        groups=(env.get("LAGASSIGN_HEALTH_GROUPS") or "").strip() or None,
        groups_file=(env.get("LAGASSIGN_GROUPS_FILE") or "").strip() or None,
        plan_topic=env.get("LAGASSIGN_PLAN_TOPIC") or HealthSettings.plan_topic,
        status_topic=env.get("LAGASSIGN_STATUS_TOPIC") or HealthSettings.status_topic,
        session_timeout_ms=int(timeout * 1000) if timeout else None,
    )


def schedule_from_env(env: Mapping[str, str] | None = None) -> Any:
    """``LAGASSIGN_HEALTH_SCHEDULE``: a cron expression, or seconds between runs (default 60),
    or ``off`` (runs only when triggered)."""
    env = os.environ if env is None else env
    text = (env.get("LAGASSIGN_HEALTH_SCHEDULE") or "").strip()
    if not text:
        return timedelta(minutes=1)
    if text.lower() == "off":
        return None
    try:
        return timedelta(seconds=float(text))
    except ValueError:
        return text


def run_health(
    kafka_conn_id: str = DEFAULT_CONN_ID,
    notifiers: Sequence[Any] = (),
    context: Mapping[str, Any] | None = None,
    log: Any = print,
) -> dict[str, Any]:
    """One run: the task's body (also callable outside a DAG, e.g. from a test)."""
    settings = settings_from_env()
    chosen = [*notifiers, *notifiers_from_env()]
    if not chosen:
        log(
            "no notifier configured (the DAG's notifiers, LAGASSIGN_ALERT_WEBHOOK or "
            "LAGASSIGN_ALERT_NOTIFIER): alerts are recorded only"
        )
    config = LagassignKafkaHook(kafka_conn_id).get_config()
    with open_store() as store:
        return health_run(store, config, settings, sender(chosen, context), log=log)[1]


def make_health_dag(
    dag_id: str = dag_ids.HEALTH,
    kafka_conn_id: str = DEFAULT_CONN_ID,
    notifiers: Sequence[Any] = (),
    schedule: Any = "env",
) -> Any:
    """``lagassign_health``: the health job every minute (``schedule``, else
    ``LAGASSIGN_HEALTH_SCHEDULE``), alerts through ``notifiers`` and those the environment names."""
    from datetime import datetime

    from airflow.sdk import DAG, task

    with DAG(
        dag_id=dag_id,
        description="Every group's health: status, lag in messages and seconds, alerts once per change",
        schedule=schedule_from_env() if schedule == "env" else schedule,
        start_date=datetime(2026, 1, 1),
        catchup=False,
        max_active_runs=1,
        is_paused_upon_creation=False,
        dagrun_timeout=timedelta(minutes=10),
        tags=["lagassign", "kafka", "health"],
        doc_md=__doc__,
    ) as dag:

        @task(task_id="health", retries=0)
        def health(**context: Any) -> dict[str, Any]:
            import logging

            logger = logging.getLogger("lagassign.health")
            return run_health(kafka_conn_id, notifiers, context, log=logger.info)

        health()
    return dag
