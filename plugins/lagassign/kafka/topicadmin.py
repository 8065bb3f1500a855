"""The two topics lagassign owns: find their partitions, create them compacted when missing.

Both are read from their beginning by every new reader, which keeps the newest record per key
(the plans topic: per group; the status topic: per instance). Kafka's log cleaner does the same
on disk, so each topic is created with the settings it honours (``COMPACTED`` and the topic's
own), set on the topic rather than left to the cluster's defaults.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from .errors import PlanError

DAY_MS = 24 * 60 * 60 * 1000

#: Compaction (the cleaner keeps the newest record per key), and how long a tombstone stays
#: after the cleaner first passed over it (``delete.retention.ms``): a reader that is part-way
#: through the topic, or follows it, must still see a delete. Kafka's default is also a day;
#: set here so that a cluster with a shorter default does not apply it to lagassign's topics.
COMPACTED = {"cleanup.policy": "compact", "delete.retention.ms": str(DAY_MS)}


def topic_partitions(client: Any, topic: str, timeout: float) -> list[int] | None:
    """Partition ids of ``topic``, or None when it does not exist. Asks for all topics: asking
    for one auto-creates it, uncompacted, on brokers that allow that (Kafka's default)."""
    md = client.list_topics(timeout=timeout)
    t = md.topics.get(topic)
    if t is None or t.error is not None or not t.partitions:
        return None
    return sorted(t.partitions)


def topic_settings(config: Mapping[str, str]) -> dict[str, str]:
    """The settings a compacted topic of lagassign is created with: ``COMPACTED`` plus its own."""
    return {**COMPACTED, **config}


def create_compacted(
    admin: Any,
    topic: str,
    partitions: int,
    config: Mapping[str, str],
    timeout: float,
    what: str,
    lookup: Callable[[], list[int] | None],
) -> list[int]:
    """Create ``topic`` with ``topic_settings(config)`` (TOPIC_ALREADY_EXISTS is fine) and wait
    until ``lookup`` sees it and every partition has a leader (a read just after creation is
    otherwise answered NOT_LEADER); PlanError in one line when the cluster refuses (then users
    create it themselves)."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import NewTopic

    settings = topic_settings(config)
    future = admin.create_topics(
        [NewTopic(topic, partitions, -1, config=settings)],
        operation_timeout=timeout,
        request_timeout=timeout,
    )[topic]
    try:
        future.result()
    except KafkaException as exc:
        err = exc.args[0]
        if err.code() != KafkaError.TOPIC_ALREADY_EXISTS:
            shown = ", ".join(f"{k}={v}" for k, v in settings.items())
            raise PlanError(
                f"cannot create {what} {topic} ({err.str()}); create it with {shown} "
                f"using your cluster's tools"
            ) from None
    deadline = time.monotonic() + timeout
    while (found := lookup()) is None or not _led(admin, topic, timeout):
        if time.monotonic() > deadline:
            raise PlanError(f"{what} {topic} was created but has no leader after {timeout:.0f}s")
        time.sleep(0.1)
    return found


def _led(admin: Any, topic: str, timeout: float) -> bool:
    """Whether metadata shows a leader for every partition of ``topic``."""
    t = admin.list_topics(timeout=timeout).topics.get(topic)
    return t is not None and t.error is None and all(p.leader >= 0 for p in t.partitions.values())
