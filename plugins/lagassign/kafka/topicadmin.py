"""The two topics lagassign owns: find their partitions, create them compacted when missing."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from .errors import PlanError


def topic_partitions(client: Any, topic: str, timeout: float) -> list[int] | None:
    """Partition ids of ``topic``, or None when it does not exist. Asks for all topics: asking
    for one auto-creates it, uncompacted, on brokers that allow that (Kafka 0.9's default)."""
    md = client.list_topics(timeout=timeout)
    t = md.topics.get(topic)
    if t is None or t.error is not None or not t.partitions:
        return None
    return sorted(t.partitions)


def create_compacted(
    admin: Any,
    topic: str,
    partitions: int,
    config: Mapping[str, str],
    timeout: float,
    what: str,
    lookup: Callable[[], list[int] | None],
) -> list[int]:
    """Create ``topic`` compacted (TOPIC_ALREADY_EXISTS is fine) and wait until ``lookup`` sees
    it; PlanError in one line when the cluster refuses (then users create it themselves)."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import NewTopic

    future = admin.create_topics(
        [NewTopic(topic, partitions, -1, config={"cleanup.policy": "compact", **config})],
        operation_timeout=timeout,
        request_timeout=timeout,
    )[topic]
    try:
        future.result()
    except KafkaException as exc:
        err = exc.args[0]
        if err.code() != KafkaError.TOPIC_ALREADY_EXISTS:
            raise PlanError(
                f"cannot create {what} {topic} ({err.str()}); create it compacted "
                f"(cleanup.policy=compact) with your cluster's tools"
            ) from None
    deadline = time.monotonic() + timeout
    while (found := lookup()) is None:
        if time.monotonic() > deadline:
            raise PlanError(f"{what} {topic} was created but does not show in metadata")
        time.sleep(0.1)
    return found
