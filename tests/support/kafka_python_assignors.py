"""kafka-python's pure-Python assignors run on a lagassign group: an independent implementation.

Only the scaffolding is ours: a fake ClusterMetadata exposing the two methods the assignors
call (``topics``, ``partitions_for_topic``) and JoinGroup member records. The assignment
logic is kafka-python's own (3.0.12). Used by the tests and by bench/speed.py.
"""

from __future__ import annotations

import warnings
from collections import namedtuple
from typing import Any

with warnings.catch_warnings():  # kafka-python 3.0.12 uses deprecated importlib.resources calls
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    from kafka.structs import TopicPartition as KafkaTopicPartition
from lagassign.core.model import GroupSnapshot, TopicPartition

ASSIGNORS = {
    "range": RangePartitionAssignor,
    "roundrobin": RoundRobinPartitionAssignor,
    "sticky": StickyPartitionAssignor,
}

# What JoinGroupResponse hands the leader for each member (static membership unused).
JoinedMember = namedtuple("JoinedMember", ["member_id", "group_instance_id", "metadata"])


class FakeCluster:
    """The part of kafka.cluster.ClusterMetadata that the assignors read."""

    def __init__(self, partitions: dict[str, set[int]]) -> None:
        self._partitions = partitions

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        return set(self._partitions)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return self._partitions.get(topic)


def prepare(name: str, group: GroupSnapshot) -> tuple[Any, FakeCluster, list[JoinedMember]]:
    """The assignor, cluster and members for ``group``; owned partitions go in sticky's user data."""
    partitions: dict[str, set[int]] = {}
    for tp in group.assignable:
        partitions.setdefault(tp.topic, set()).add(tp.partition)
    subscriptions = [(m.id, sorted(m.topics), m.owned) for m in group.members]
    return prepare_raw(name, partitions, subscriptions)


def prepare_raw(
    name: str,
    partitions: dict[str, set[int]],
    subscriptions: list[tuple[str, list[str], Any]],
) -> tuple[Any, FakeCluster, list[JoinedMember]]:
    """Like ``prepare`` from plain data: topic -> partition numbers; (member, topics, owned pairs)."""
    cls = ASSIGNORS[name]
    members = []
    for mid, topics, owned in subscriptions:
        if name == "sticky":
            metadata = cls._metadata(topics, [KafkaTopicPartition(t, p) for t, p in owned], 1)
        else:
            metadata = cls.metadata(topics)
        members.append(JoinedMember(mid, None, metadata))
    assignor = cls() if name == "sticky" else cls
    return assignor, FakeCluster(partitions), members


def result(protocol_assignment: dict[str, Any]) -> dict[str, list[TopicPartition]]:
    """kafka-python's {member: ConsumerProtocolAssignment} as lagassign's member -> sorted partitions."""
    return {
        mid: sorted(TopicPartition(tp.topic, tp.partition) for tp in a.partitions())
        for mid, a in protocol_assignment.items()
    }


def kafka_python_assign(name: str, group: GroupSnapshot) -> dict[str, list[TopicPartition]]:
    """kafka-python's ``name`` assignor on ``group``."""
    assignor, cluster, members = prepare(name, group)
    return result(assignor.assign(cluster, members))
