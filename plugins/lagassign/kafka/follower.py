"""The status and plans topics followed from their beginning: who is alive and each group's
plan in force (what ``lagassign watch`` and the Airflow trigger compare, ``pipeline.watch``).

One consumer (assign() only, no group, no commits) reads both topics from their beginning, so
the follower knows every instance's newest status and every group's plan in force, then follows
them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.liveness import Liveness
from ..core.plans import Plan, newest_of
from .reader import catch_up
from .status import apply_record, ensure_status_topic
from .topicadmin import topic_partitions


class TopicFollower:
    """The status and plans topics, read from their beginning and followed: liveness and plans."""

    def __init__(
        self,
        config: Mapping[str, Any],
        plan_topic: str,
        status_topic: str,
        session_timeout_ms: int | None,
        timeout: float = 30.0,
        client_id: str = "lagassign.watch",
    ) -> None:
        self.config = dict(config)
        self.plan_topic = plan_topic
        self.status_topic = status_topic
        self.timeout = timeout
        self.client_id = client_id
        self.liveness = Liveness(session_timeout_ms)
        self.plans: dict[str, Plan] = {}
        self._consumer: Any = None

    def start(self) -> bool:
        """Read both topics from their beginning to their end as it is now (a busy status topic
        never goes quiet, so "until nothing arrives" would never end), then stay assigned to
        follow them; False while the plans topic does not exist."""
        from confluent_kafka import Consumer

        status = ensure_status_topic(self.config, self.status_topic, self.timeout)
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
        plans = topic_partitions(consumer, self.plan_topic, self.timeout)
        if plans is None:
            consumer.close()
            return False
        wanted = [(self.status_topic, p) for p in status] + [(self.plan_topic, p) for p in plans]
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
        if msg.topic() == self.status_topic:
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
