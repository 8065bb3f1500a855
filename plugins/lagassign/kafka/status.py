"""The status topic: where instances that follow plans announce themselves (``liveness`` is the
pure half: the record format and who is alive).

* Name: ``lagassign.status`` by default; compacted (``cleanup.policy=compact``, tombstones kept
  a day) with short segments so the heartbeats of the active segment are compacted within
  minutes.
* Key: the JSON array ``["group", "instance"]`` (UTF-8), so any group or instance id is
  unambiguous; value: ``InstanceStatus.to_json()``, or null (a tombstone) on clean close.
* Partition: ``crc32(group) % partitions``, chosen by the writer, so all instances of one group
  share a partition and a consumer reads only its own group's.

Kafka Connect's status topic is the model (``config.storage.topic``'s sibling
``status.storage.topic``): compacted, keyed by what it describes, written by the workers
themselves, read back by whoever needs the state.
"""

from __future__ import annotations

import json
import logging
import time
import zlib
from collections.abc import Iterable, Mapping
from typing import Any

from ..core.liveness import InstanceStatus, Liveness, StatusRecordError
from ..core.topics import STATUS_TOPIC
from .reader import read_to_end
from .topicadmin import create_compacted, topic_partitions

log = logging.getLogger(__name__)

STATUS_PARTITIONS = 5
#: With ``topicadmin.COMPACTED``: segments roll every 10 minutes, so that the cleaner can
#: collapse the heartbeats of an instance (one every 3 s) to its newest within minutes.
STATUS_TOPIC_CONFIG = {"segment.ms": str(10 * 60 * 1000)}


def status_key(group: str, instance: str) -> bytes:
    return json.dumps([group, instance], separators=(",", ":")).encode("utf-8")


def parse_key(key: bytes | None) -> tuple[str, str] | None:
    """(group, instance) of a status record key, or None for a key that is not ours."""
    if key is None:
        return None
    try:
        value = json.loads(key)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) and v for v in value):
        return value[0], value[1]
    return None


def partition_for(group: str, partitions: int) -> int:
    """The status partition of a group's instances."""
    return zlib.crc32(group.encode("utf-8")) % max(1, partitions)


def now_ms() -> int:
    return int(time.time() * 1000)


def apply_record(
    liveness: Liveness,
    key: bytes | None,
    value: bytes | None,
    groups: Iterable[str] | None = None,
    received_ms: int | None = None,
) -> str | None:
    """Feed one status record into ``liveness``; returns its group (None when skipped)."""
    parsed = parse_key(key)
    if parsed is None:
        return None
    group, instance = parsed
    if groups is not None and group not in groups:
        return None
    received = received_ms if received_ms is not None else now_ms()
    if value is None:
        liveness.apply(group, instance, None, received)
        return group
    try:
        status = InstanceStatus.from_value(value)
    except StatusRecordError as exc:
        log.warning("ignoring status record of %s/%s: %s", group, instance, exc)
        return None
    if (status.group, status.instance) != (group, instance):
        log.warning(
            "ignoring status record keyed %s/%s that names %s/%s",
            group,
            instance,
            status.group,
            status.instance,
        )
        return None
    liveness.apply(group, instance, status, received)
    return group


def ensure_status_topic(
    config: Mapping[str, Any],
    topic: str = STATUS_TOPIC,
    timeout: float = 30.0,
    partitions: int = STATUS_PARTITIONS,
) -> list[int]:
    """Create the status topic (compacted, short segments) if it does not exist; its partition ids."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(dict(config))
    found = topic_partitions(admin, topic, timeout)
    if found is not None:
        return found
    return create_compacted(
        admin,
        topic,
        partitions,
        STATUS_TOPIC_CONFIG,
        timeout,
        "status topic",
        lambda: topic_partitions(admin, topic, timeout),
    )


def read_status(
    config: Mapping[str, Any],
    topic: str = STATUS_TOPIC,
    timeout: float = 30.0,
    groups: Iterable[str] | None = None,
    session_timeout_ms: int | None = None,
) -> Liveness:
    """The status topic read to its end, as a ``Liveness`` table (empty when the topic is absent)."""
    from confluent_kafka.admin import AdminClient

    liveness = Liveness(session_timeout_ms)
    parts = topic_partitions(AdminClient(dict(config)), topic, timeout)
    if not parts:
        return liveness
    wanted = set(groups) if groups is not None else None
    for key, value in read_to_end(config, topic, parts, timeout, raw_keys=True):
        apply_record(liveness, key, value, wanted)
    return liveness
