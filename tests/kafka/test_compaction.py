"""lagassign's two compacted topics on a real log cleaner: created with the settings the cleaner
honours, a plan over the broker's default size limit fits, and every reader reads the same
before and after the cleaner compacted the topics (superseded plans and heartbeats gone,
tombstones kept)."""

from __future__ import annotations

import gzip
import time
import uuid

import pytest
from kafkakit import Kit, needs, wait_until
from lagassign.core.liveness import InstanceStatus
from lagassign.kafka.plans import PLANS_TOPIC_CONFIG, PlanStore
from lagassign.kafka.reader import read_to_end
from lagassign.kafka.status import STATUS_TOPIC_CONFIG, ensure_status_topic, read_status, status_key
from lagassign.kafka.topicadmin import COMPACTED

pytestmark = pytest.mark.kafka

#: Kafka's default limit of a record batch (message.max.bytes), which the tests' brokers keep
BROKER_DEFAULT_LIMIT = 1_048_588


def _topic_configs(kit: Kit, topic: str) -> dict[str, tuple[str, bool]]:
    """Each setting of a topic: (value, whether it is the topic's own rather than a default)."""
    from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource

    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    admin = AdminClient(kit.config())  # held: a collected client fails its futures (_DESTROY)
    entries = admin.describe_configs([resource])[resource].result(timeout=15)
    own = ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    return {name: (e.value, e.source == own) for name, e in entries.items()}


def _alter(kit: Kit, topic: str, settings: dict[str, str]) -> None:
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

    resource = ConfigResource(
        ConfigResource.Type.TOPIC,
        topic,
        incremental_configs=[
            ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in settings.items()
        ],
    )
    admin = AdminClient(kit.config())
    admin.incremental_alter_configs([resource])[resource].result(timeout=15)


def test_plans_and_status_topics_are_created_with_the_cleaners_settings(kit: Kit) -> None:
    plans = kit.name("plans")
    with PlanStore(kit.config(), plans, timeout=15) as store:
        store.ensure_topic()
    status = kit.name("status")
    ensure_status_topic(kit.config(), status, timeout=15, partitions=2)
    for topic, own in ((plans, PLANS_TOPIC_CONFIG), (status, STATUS_TOPIC_CONFIG)):
        got = _topic_configs(kit, topic)
        for name, value in {**COMPACTED, **own}.items():
            assert got[name] == (value, True), (topic, name, got[name])
    assert int(PLANS_TOPIC_CONFIG["max.message.bytes"]) > BROKER_DEFAULT_LIMIT


def test_a_plan_over_the_brokers_default_limit_fits_the_plans_topic(kit: Kit) -> None:
    """Compressed over 1 MiB (names that do not compress): refused by a topic of the broker's
    defaults (test_following_safely's too-large case), published to lagassign's own."""
    members = {f"i{i:02d}": [[uuid.uuid4().hex * 2, j] for j in range(2000)] for i in range(40)}
    with PlanStore(kit.config(), kit.name("plans"), timeout=30) as store:
        plan, written = store.publish(kit.name("g"), "lag-optimal", members)
        assert written
        assert len(gzip.compress(plan.to_json().encode(), 6)) > BROKER_DEFAULT_LIMIT
        assert store.newest(plan.group) == plan


def _raw_keys(kit: Kit, topic: str, partitions: list[int]) -> list[tuple[object, bool]]:
    """(key, is a tombstone) of every record still on the topic, in offset order."""
    return [(k, v is None) for k, v in read_to_end(kit.config(), topic, partitions, 15, raw_keys=True)]


def _heartbeat(group: str, instance: str, ago_ms: int = 0) -> bytes:
    now = int(time.time() * 1000) - ago_ms
    status = InstanceStatus(group, instance, now, topics=("orders",), session_timeout_ms=600_000)
    return status.to_json().encode()


def test_the_cleaner_keeps_what_readers_read(kit: Kit) -> None:
    """Superseded plans and heartbeats are dropped by the real cleaner, tombstones kept; the
    planner's and the watcher's readings are the same before and after. (The test only shortens
    the topics' segments, so that the cleaner acts within seconds, not minutes or an hour.)"""
    from confluent_kafka import Producer

    needs(kit.broker, "log cleaner")
    plans, status = kit.name("plans"), kit.name("status")
    group, gone, later = kit.name("g"), kit.name("deleted"), kit.name("later")
    store = PlanStore(kit.config(), plans, timeout=15)
    store.ensure_topic()
    ensure_status_topic(kit.config(), status, timeout=15, partitions=1)
    for topic in (plans, status):
        _alter(kit, topic, {"segment.ms": "1000"})
    producer = Producer(kit.config())
    with store:
        for n in range(3):
            store.publish(group, "lag", {"i0": [["orders", n]], "i1": [["orders", 9]]})
        store.publish(gone, "lag", {"i0": [["orders", 0]]})
        producer.produce(plans, key=gone.encode(), value=None)  # the group's plan deleted
        for ago in (9000, 6000, 3000, 0):
            producer.produce(status, key=status_key(group, "i0"), value=_heartbeat(group, "i0", ago))
        producer.produce(status, key=status_key(group, "i1"), value=_heartbeat(group, "i1"))
        producer.produce(status, key=status_key(group, "i1"), value=None)  # i1 closed
        assert producer.flush(15) == 0

        def readings() -> tuple[object, ...]:
            now = int(time.time() * 1000)
            table = read_status(kit.config(), status, timeout=15)
            why = {i: (d.why if (d := table.departure(group, i, now)) else "alive") for i in ("i0", "i1")}
            return store.read(), set(table.alive(group, now)), table.known(group), why

        before = readings()
        assert before[0].keys() == {group} and before[0][group].version == 3
        assert before[3] == {"i0": "alive", "i1": "closed"}
        raw_plans, raw_status = _raw_keys(kit, plans, [0]), _raw_keys(kit, status, [0])

        time.sleep(1.5)  # older than segment.ms: the next record rolls the segment
        store.publish(later, "lag", {"i0": [["orders", 1]]})
        producer.produce(status, key=status_key(later, "i0"), value=_heartbeat(later, "i0"))
        assert producer.flush(15) == 0

        def cleaned() -> bool:
            return (
                len(_raw_keys(kit, plans, [0])) < len(raw_plans) + 1
                and len(_raw_keys(kit, status, [0])) < len(raw_status) + 1
            )

        wait_until(cleaned, timeout=60, every=1)
        after_plans, after_status = _raw_keys(kit, plans, [0]), _raw_keys(kit, status, [0])
        # The newest record per key is left, and the tombstones are kept (delete.retention.ms).
        assert after_plans == [(group.encode(), False), (gone.encode(), True), (later.encode(), False)]
        assert after_status == [
            (status_key(group, "i0"), False),
            (status_key(group, "i1"), True),
            (status_key(later, "i0"), False),
        ]
        after = readings()
        assert after[0].keys() == {group, later} and after[0][group] == before[0][group]
        assert after[1:] == before[1:]
