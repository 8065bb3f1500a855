"""lagassign.client against the real broker: three instances across a plan switch."""

from __future__ import annotations

import threading
import time
from collections import defaultdict

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from kafkakit import Kit, wait_until
from lagassign.client import PlanConsumer
from lagassign.kafka.plans import Plan, PlanStore

pytestmark = pytest.mark.kafka

PARTITIONS = 6
PER_PARTITION = 400


def _consumer(kit: Kit, group: str, iid: str, plans: str) -> PlanConsumer:
    conf = kit.config({"auto.offset.reset": "earliest", "fetch.wait.max.ms": 100})
    return PlanConsumer(conf, group, iid, plan_topic=plans, plan_check_interval=0.3, timeout=15)


def test_three_instances_switch_plans_without_loss_or_overlap(kit: Kit) -> None:
    topic = kit.topic("events", PARTITIONS)
    plans = kit.topic("plans", 1, {"cleanup.policy": "compact"})
    group = kit.name("workers")
    ids = ["w0", "w1", "w2"]
    v1 = {iid: [[topic, p] for p in range(PARTITIONS) if p % 3 == i] for i, iid in enumerate(ids)}
    v2 = {"w0": [[topic, 0], [topic, 1], [topic, 2], [topic, 3]], "w1": [[topic, 4]], "w2": [[topic, 5]]}

    half = PER_PARTITION // 2
    kit.produce(topic, dict.fromkeys(range(PARTITIONS), half))
    with PlanStore(kit.config(), plans) as store:
        store.publish(group, "roundrobin", v1)

    seen: list[tuple[str, int | None, int, int]] = []  # (instance, version, partition, offset)
    lock = threading.Lock()
    stop = threading.Event()
    failures: list[BaseException] = []

    def run(iid: str) -> None:
        try:
            with _consumer(kit, group, iid, plans) as consumer:
                while not stop.is_set():
                    msg = consumer.poll(0.2)
                    if msg is None:
                        continue
                    # "Processing", slow under v1 (v1's backlog outlasts the switch), fast after.
                    time.sleep(0.02 if consumer.version == 1 else 0)
                    with lock:
                        seen.append((iid, consumer.version, msg.partition(), msg.offset()))
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(iid,), daemon=True) for iid in ids]
    for t in threads:
        t.start()
    try:
        wait_until(lambda: len(seen) >= 60, timeout=60)
        with PlanStore(kit.config(), plans) as store:
            plan, written = store.publish(group, "lag", v2)
        assert written and plan.version == 2
        kit.produce(topic, dict.fromkeys(range(PARTITIONS), PER_PARTITION - half))
        expected = {(p, o) for p in range(PARTITIONS) for o in range(PER_PARTITION)}

        def everything_processed() -> bool:
            with lock:
                return {(p, o) for _, _, p, o in seen} >= expected and not failures

        wait_until(lambda: everything_processed() or failures, timeout=90)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert not failures, failures

    owners: dict[tuple[int | None, int], set[str]] = defaultdict(set)
    for iid, version, p, _o in seen:
        owners[(version, p)].add(iid)
    shared = {k: v for k, v in owners.items() if len(v) > 1}
    assert not shared, f"partitions consumed by two instances under one version: {shared}"
    assert {(version, p): iid for (version, p), ids_ in owners.items() for iid in ids_} == {
        (version, p): iid
        for version, members in ((1, v1), (2, v2))
        for iid, pairs in members.items()
        for _t, p in pairs
        if (version, p) in owners
    }
    # The switch landed mid-stream: a partition that changed owner still had first-half records.
    moved = {p for p in range(PARTITIONS) if owners.get((1, p)) != owners.get((2, p))}
    taken_early = [o for _, v, p, o in seen if v == 2 and p in moved and o < half]
    assert taken_early, "every moved partition was drained before the switch: the test proves nothing"
    assert {(p, o) for _, _, p, o in seen} == expected


def test_waits_for_a_plan_then_ignores_older_and_unreadable_records(kit: Kit) -> None:
    topic = kit.topic("data", 2)
    group = kit.name("late")
    plans = kit.name("plans-later")
    kit.produce(topic, {0: 5, 1: 5})
    with _consumer(kit, group, "solo", plans) as consumer:
        # no plans topic at all: nothing assigned, poll keeps returning None
        assert consumer.poll(0.5) is None and consumer.version is None and consumer.assignment == []
        kit.broker.create_topic(plans, 1, {"cleanup.policy": "compact"})
        assert consumer.poll(1.0) is None and consumer.assignment == []  # topic, but no plan yet
        with PlanStore(kit.config(), plans) as store:
            v1, _ = store.publish(group, "lag", {"solo": [[topic, 0]], "other": [[topic, 1]]})
            _v2, _ = store.publish(group, "lag", {"solo": [[topic, 1]], "other": [[topic, 0]]})
        got = [wait_until(lambda: consumer.poll(0.2), timeout=30)]
        while (msg := consumer.poll(0.5)) is not None:
            got.append(msg)
        assert consumer.version == 2
        assert {(m.partition(), m.offset()) for m in got} == {(1, o) for o in range(5)}

        producer = Producer(kit.config())
        older = Plan("stale", group, 1, v1.created_at, "lag", None, {"solo": [[topic, 0]]})
        for value in (b"\x00garbage", older.to_json().encode()):
            producer.produce(plans, key=group.encode(), value=value)
        assert producer.flush(15) == 0
        kit.produce(topic, {0: 3, 1: 3})
        later = []
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is not None:
                later.append((msg.partition(), msg.offset()))
        assert consumer.version == 2 and consumer.assignment == [(topic, 1)]
        assert later == [(1, 5), (1, 6), (1, 7)]
    # closing committed what was processed
    check = Consumer(kit.config({"group.id": group}))
    try:
        [tp] = check.committed([TopicPartition(topic, 1)], timeout=15)
        assert tp.offset == 8
    finally:
        check.close()
