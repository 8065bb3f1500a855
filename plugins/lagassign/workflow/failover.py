"""Event-driven failover in Airflow: a trigger that watches the status topic, and the DAG it fires.

``MembershipTrigger`` is a ``BaseEventTrigger`` (it runs in the triggerer, behind an
``AssetWatcher``): it reads the status and plans topics like ``lagassign watch`` does
(``kafka.follower.TopicFollower``) and yields one event per membership change of a watched group:
an instance of the plan in force went silent or closed, or a new instance appeared. It fires
once per change, not once per status record (a heartbeat is not an event), and again only if
the same change is still there ``refire_after`` seconds later (the run it started failed).

The event schedules ``lagassign_failover``, whose one task runs ``failover_step`` in-process (no
Spark) for each group named by the triggering events; triggered by hand it takes ``groups`` from
its parameters.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Mapping
from datetime import datetime
from typing import Any

from airflow.triggers.base import BaseEventTrigger, TriggerEvent

from ..kafka.status import now_ms
from ..pipeline.failover import FailoverSettings
from ..pipeline.watch import Watcher
from . import dag_ids, tasks
from .hooks import DEFAULT_CONN_ID, LagassignKafkaHook, groups_file_or_workers

ASSET_NAME = "lagassign_membership"


class MembershipTrigger(BaseEventTrigger):
    """Fires when an instance of a watched assign()-mode group dies or a new one appears."""

    def __init__(
        self,
        kafka_conn_id: str = DEFAULT_CONN_ID,
        groups: str | None = None,
        session_timeout_ms: int = 30_000,
        plan_topic: str | None = None,
        status_topic: str | None = None,
        groups_file: str | None = None,
        check_interval: float = 1.0,
        refire_after: float = 300.0,
    ) -> None:
        super().__init__()
        defaults = FailoverSettings()
        self.kafka_conn_id = kafka_conn_id
        self.groups = groups or None
        self.session_timeout_ms = session_timeout_ms
        self.plan_topic = plan_topic or defaults.plan_topic
        self.status_topic = status_topic or defaults.status_topic
        self.groups_file = groups_file or None
        self.check_interval = check_interval
        self.refire_after = refire_after

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "kafka_conn_id": self.kafka_conn_id,
                "groups": self.groups,
                "session_timeout_ms": self.session_timeout_ms,
                "plan_topic": self.plan_topic,
                "status_topic": self.status_topic,
                "groups_file": self.groups_file,
                "check_interval": self.check_interval,
                "refire_after": self.refire_after,
            },
        )

    def settings(self) -> FailoverSettings:
        return FailoverSettings(self.plan_topic, self.status_topic, self.session_timeout_ms, self.groups_file)

    async def run(self) -> AsyncIterator[TriggerEvent]:
        config = await asyncio.to_thread(lambda: LagassignKafkaHook(self.kafka_conn_id).get_config())
        watcher = Watcher(config, None, self.settings(), ".", self.groups, log=self.log.info)
        while not await asyncio.to_thread(watcher.follower.start):
            self.log.info("waiting for the plans topic %s to exist", self.plan_topic)
            await asyncio.sleep(5)
        fired: dict[tuple[Any, ...], float] = {}
        try:
            since = now_ms()
            self.log.info("watching %d groups on %s", len(watcher.watched()), self.status_topic)
            while True:
                await asyncio.to_thread(watcher.follower.poll, self.check_interval)
                for change in watcher.changes(since):
                    if time.monotonic() - fired.get(change.key, -self.refire_after) < self.refire_after:
                        continue
                    fired[change.key] = time.monotonic()
                    self.log.info("group %s: %s (plan v%s)", change.group, change.describe(), change.version)
                    yield TriggerEvent(
                        {
                            "group": change.group,
                            "version": change.version,
                            "died": change.died,
                            "joined": list(change.joined),
                            "change": change.describe(),
                            "detected_ms": now_ms(),
                        }
                    )
        finally:
            watcher.follower.close()


def groups_of_events(events: Any) -> list[dict[str, Any]]:
    """The trigger payloads in an Airflow ``triggering_asset_events`` mapping, in order."""
    payloads = []
    for asset_events in (events or {}).values():
        for event in asset_events:
            extra = getattr(event, "extra", None) or {}
            payload = extra.get("payload") if isinstance(extra, dict) else None
            if isinstance(payload, dict) and isinstance(payload.get("group"), str):
                payloads.append(payload)
    return payloads


def make_failover_dag(
    dag_id: str = dag_ids.FAILOVER,
    kafka_conn_id: str = DEFAULT_CONN_ID,
    groups: str | None = None,
    session_timeout: float | None = None,
    groups_file: str | None = None,
) -> Any:
    """``lagassign_failover``: scheduled by the membership asset, one failover per changed group.

    Settings default to the environment of the Airflow components: ``LAGASSIGN_FAILOVER_GROUPS``
    (a regex on group ids), ``LAGASSIGN_SESSION_TIMEOUT`` (seconds, default 30),
    ``LAGASSIGN_GROUPS_FILE``, ``LAGASSIGN_PLAN_TOPIC`` and ``LAGASSIGN_STATUS_TOPIC``.
    """
    from airflow.sdk import DAG, Asset, AssetWatcher, task

    trigger = membership_trigger(kafka_conn_id, groups, session_timeout, groups_file)
    asset = Asset(ASSET_NAME, watchers=[AssetWatcher(name=f"{ASSET_NAME}_watcher", trigger=trigger)])
    with DAG(
        dag_id=dag_id,
        description="Failover of assign()-mode groups: a new plan when an instance dies or joins",
        schedule=[asset],
        start_date=datetime(2026, 1, 1),
        catchup=False,
        max_active_runs=1,
        # On from the start: a dead instance's partitions are the promise of this DAG, and the
        # plans pages say so when someone pauses it.
        is_paused_upon_creation=False,
        params=_failover_params(),
        tags=["lagassign", "kafka", "failover"],
        doc_md=__doc__,
    ) as dag:

        @task(task_id="failover")
        def failover(**context: Any) -> list[dict]:
            return fail_over_named_groups(context, trigger.settings(), kafka_conn_id)

        failover()
    return dag


def membership_trigger(
    kafka_conn_id: str, groups: str | None, session_timeout: float | None, groups_file: str | None
) -> MembershipTrigger:
    """The DAG's trigger, its settings given or else from the environment (``make_failover_dag``)."""
    timeout_s = session_timeout or float(os.environ.get("LAGASSIGN_SESSION_TIMEOUT") or 30)
    return MembershipTrigger(
        kafka_conn_id,
        groups or os.environ.get("LAGASSIGN_FAILOVER_GROUPS") or None,
        int(timeout_s * 1000),
        os.environ.get("LAGASSIGN_PLAN_TOPIC"),
        os.environ.get("LAGASSIGN_STATUS_TOPIC"),
        groups_file_or_workers(groups_file),
    )


def _failover_params() -> dict[str, Any]:
    from airflow.sdk import Param

    return {
        "groups": Param(
            [],
            type="array",
            items={"type": "string"},
            title="Groups",
            description="Groups to check when triggered by hand (events name their own).",
        )
    }


def fail_over_named_groups(
    context: Mapping[str, Any], settings: FailoverSettings, kafka_conn_id: str
) -> list[dict[str, Any]]:
    """The failover task: every group the triggering events name, then those given by hand,
    each once, failed over by ``tasks.failover``."""
    payloads = groups_of_events(context.get("triggering_asset_events"))
    names = list(dict.fromkeys([p["group"] for p in payloads] + list(context["params"]["groups"])))
    run = context["dag_run"]
    return tasks.failover(
        names,
        settings,
        kafka_conn_id,
        run.dag_id,
        run.run_id,
        run.triggering_user_name,
        payloads,
    )
