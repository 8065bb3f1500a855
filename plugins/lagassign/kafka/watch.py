"""The failover loop outside Airflow (``lagassign watch``): follow the status and plans topics,
and when an instance of a plan in force dies or a new one appears, run the failover step.

One consumer (assign() only, no group, no commits) reads both topics from their beginning, so
the loop knows every instance's newest status and every group's plan in force, then follows
them. Once a second it compares each watched group's plan with its live instances
(``failover.membership_change``); a change not handled yet runs ``failover_step`` (snapshot of
that group, plan, publish, audit record). A change that failed is tried again after
``retry_after`` seconds. The Airflow triggerer runs the same detection (``workflow.failover``).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..core.failover import MembershipChange, membership_change
from ..core.liveness import Liveness
from ..core.plans import Plan, newest_of
from ..pipeline.failover import FailoverSettings, declared_group, failover_step
from .reader import catch_up
from .status import apply_record, ensure_status_topic, now_ms
from .topicadmin import topic_partitions

Log = Callable[[str], None]


class TopicFollower:
    """The status and plans topics, read from their beginning and followed: liveness and plans."""

    def __init__(
        self,
        config: Mapping[str, Any],
        settings: FailoverSettings,
        timeout: float = 30.0,
        client_id: str = "lagassign.watch",
    ) -> None:
        self.config = dict(config)
        self.settings = settings
        self.timeout = timeout
        self.client_id = client_id
        self.liveness = Liveness(settings.session_timeout_ms)
        self.plans: dict[str, Plan] = {}
        self._consumer: Any = None

    def start(self) -> bool:
        """Read both topics from their beginning to their end as it is now (a busy status topic
        never goes quiet, so "until nothing arrives" would never end), then stay assigned to
        follow them; False while the plans topic does not exist."""
        from confluent_kafka import Consumer

        status = ensure_status_topic(self.config, self.settings.status_topic, self.timeout)
        consumer = Consumer(
            {
                **self.config,
                "group.id": self.client_id,
                "client.id": self.client_id,
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "earliest",
            }
        )
        plans = topic_partitions(consumer, self.settings.plan_topic, self.timeout)
        if plans is None:
            consumer.close()
            return False
        wanted = [(self.settings.status_topic, p) for p in status] + [
            (self.settings.plan_topic, p) for p in plans
        ]
        try:
            catch_up(consumer, wanted, self.timeout, self._take)
        except BaseException:
            consumer.close()
            raise
        self._consumer = consumer
        return True

    def poll(self, wait: float) -> int:
        """Take in what arrived within ``wait`` seconds; returns how many records."""
        records = [msg for msg in self._consumer.consume(1000, wait) if msg.error() is None]
        for msg in records:
            self._take(msg)
        return len(records)

    def _take(self, msg: Any) -> None:
        """One record: a status into ``liveness``, a plan kept when it is the group's newest."""
        if msg.topic() == self.settings.status_topic:
            apply_record(self.liveness, msg.key(), msg.value())
            return
        key = msg.key()
        if key is None:
            return
        group = key.decode("utf-8", "replace")
        if msg.value() is None:
            self.plans.pop(group, None)
            return
        found = newest_of([(group, msg.value())]).get(group)
        if found is not None and (group not in self.plans or found.version > self.plans[group].version):
            self.plans[group] = found

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None


class Watcher:
    """Detects membership changes of watched groups and runs the failover step for each."""

    def __init__(
        self,
        config: Mapping[str, Any],
        store_url: str | None,
        settings: FailoverSettings,
        base: str | Path,
        groups_regex: str | None = None,
        log: Log = print,
        timeout: float = 30.0,
        check_interval: float = 1.0,
        retry_after: float = 30.0,
    ) -> None:
        self.config = dict(config)
        self.store_url = store_url
        self.settings = settings
        self.base = base
        self.regex = re.compile(groups_regex) if groups_regex else None
        self.log = log
        self.timeout = timeout
        self.check_interval = check_interval
        self.retry_after = retry_after
        self.follower = TopicFollower(config, settings, timeout)
        self.handled: dict[tuple[Any, ...], float] = {}  # change -> when it was handled (monotonic)
        self.failed: dict[tuple[Any, ...], float] = {}  # change -> when to try again

    def watched(self) -> list[str]:
        groups = self.follower.liveness.groups() | set(self.follower.plans)
        return sorted(g for g in groups if self.regex is None or self.regex.fullmatch(g))

    def changes(self, since_ms: int) -> list[MembershipChange]:
        """The membership changes of the watched groups now."""
        now = now_ms()
        out = []
        for group in self.watched():
            plan = self.follower.plans.get(group)
            spec = declared_group(self.settings, group)
            change = membership_change(
                group,
                plan.members if plan else None,
                plan.version if plan else None,
                self.follower.liveness,
                now,
                pinned=list(spec.instances) if spec else None,
                announced_since_ms=since_ms,
            )
            if change is not None:
                out.append(change)
        return out

    def run(self, stop: threading.Event | None = None) -> None:
        """Watch until ``stop`` is set (or forever)."""
        from ..store import AuditStore

        stop = stop or threading.Event()
        while not self.follower.start():
            self.log(f"waiting for the plans topic {self.settings.plan_topic} to exist")
            if stop.wait(5):
                return
        try:
            since = now_ms()
            timeout_s = (self.settings.session_timeout_ms or 30_000) / 1000
            self.log(
                f"watching {len(self.watched())} groups on {self.settings.status_topic} "
                f"(session timeout {timeout_s:g}s)"
            )
            next_check = 0.0
            while not stop.is_set():
                self.follower.poll(0.2)
                if time.monotonic() < next_check:
                    continue
                next_check = time.monotonic() + self.check_interval
                for change in self.changes(since):
                    if change.key in self.handled:
                        continue
                    if time.monotonic() < self.failed.get(change.key, 0.0):
                        continue
                    self.log(f"group {change.group}: {change.describe()} (plan v{change.version})")
                    try:
                        with AuditStore(self.store_url) as store:
                            failover_step(
                                store,
                                self.config,
                                change.group,
                                self.settings,
                                self.base,
                                "lagassign watch",
                                seen=change,
                                log=self.log,
                                timeout=self.timeout,
                            )
                        self.handled[change.key] = time.monotonic()
                    except Exception as exc:  # reported, tried again later: the loop must go on
                        self.log(
                            f"group {change.group}: failover failed: {exc}; trying again in "
                            f"{self.retry_after:.0f}s"
                        )
                        self.failed[change.key] = time.monotonic() + self.retry_after
        finally:
            self.follower.close()
