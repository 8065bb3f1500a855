"""Kafka's rules for consumers outside the group protocol (assign() mode), on the real broker:

* offset commits from outside the protocol are accepted only while the group has no members
  (Kafka 4 answers UNKNOWN_MEMBER_ID for classic and consumer groups alike; noida too): a plan
  for such a group is refused, in one line and in the audit trail, and a PlanConsumer on it
  fails at once instead of losing its commits;
* their committed offsets expire ``offsets.retention.minutes`` after the last commit: a
  PlanConsumer keeps the place of a partition that receives nothing for longer (a broker of the
  test's own with a retention of one minute).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import brokerctl
import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition
from kafkakit import Kit, config_flags, needs, run_cli, wait_until
from lagassign.client import GroupMembersError, PlanConsumer
from lagassign.core.handover import Marker
from lagassign.core.outcome import outcome_of
from lagassign.kafka.admin import AdminHook
from lagassign.kafka.groupsfile import load_groups_file
from lagassign.kafka.plans import PlanStore
from lagassign.kafka.snapshot import take_snapshot

pytestmark = pytest.mark.kafka


PROTOCOLS = ["classic", "consumer"]


@pytest.fixture
def member(kit: Kit) -> Iterator[Any]:
    """A live subscribe() member of a group, of either protocol, named by its client id."""
    made: list[Any] = []

    def join(group: str, topic: str, protocol: str, client_id: str = "intruder") -> Any:
        if protocol == "consumer":
            needs(kit.broker, "consumer protocol")
        conf = {"group.id": group, "client.id": client_id, "group.protocol": protocol}
        if protocol == "classic":
            conf |= {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}
        consumer = Consumer(kit.config(conf))
        made.append(consumer)
        consumer.subscribe([topic])
        wait_until(lambda: consumer.poll(0.1) is None and consumer.assignment(), timeout=30)
        return consumer

    yield join
    for consumer in made:
        consumer.close()


def _assign_mode_commit(kit: Kit, group: str, topic: str, offset: int) -> None:
    consumer = Consumer(kit.config({"group.id": group, "enable.auto.commit": False}))
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
    finally:
        consumer.close()


def _read_offsets(consumer: Any, count: int, timeout: float = 30) -> list[int]:
    """The offsets of the first ``count`` messages ``consumer`` polls (fewer after ``timeout``)."""
    got: list[int] = []
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None:
            got.append(msg.offset())
    return got


def _committed(config: dict[str, Any], group: str, topic: str, partition: int = 0) -> Any:
    """(offset, metadata) the group has committed for the partition; (None, None) if none."""
    consumer = Consumer({**config, "group.id": group, "enable.auto.commit": False})
    try:
        [tp] = consumer.committed([TopicPartition(topic, partition)], timeout=15)
    finally:
        consumer.close()
    return (tp.offset, tp.metadata) if tp.offset >= 0 else (None, None)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_kafka_refuses_commits_from_outside_the_protocol_while_the_group_has_members(
    kit: Kit, member: Any, protocol: str
) -> None:
    """What the broker answers (measured: UNKNOWN_MEMBER_ID on Kafka 4.4 for both protocols,
    and on noida), and that the same commit is accepted once the group is empty again."""
    topic = kit.topic("t", 1)
    group = kit.name(f"members-{protocol}")
    intruder = member(group, topic, protocol)
    with pytest.raises(KafkaException) as refused:
        _assign_mode_commit(kit, group, topic, 3)
    assert refused.value.args[0].name() == "UNKNOWN_MEMBER_ID"
    intruder.close()
    _assign_mode_commit(kit, group, topic, 3)
    assert _committed(kit.config(), group, topic)[0] == 3


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_plan_consumer_on_a_group_with_members_fails_at_once(kit: Kit, member: Any, protocol: str) -> None:
    topic = kit.topic("t", 1)
    group = kit.name(f"pc-{protocol}")
    member(group, topic, protocol, client_id="billing-app")
    consumer = PlanConsumer(kit.config(), group=group, instance_id="w0", plan_topic=kit.name("plans"))
    try:
        with pytest.raises(GroupMembersError) as failed:
            consumer.poll(5.0)
    finally:
        consumer.close()
    message = str(failed.value)
    assert "\n" not in message and message.startswith(f"{group}/w0: group {group} has 1 live member(s)")
    assert f"billing-app ({protocol} member " in message
    assert "only while a group has no members" in message


def test_a_plan_consumer_fails_when_a_member_joins_and_kafka_refuses_its_commit(
    kit: Kit, member: Any
) -> None:
    """Started on an empty group, it consumes and commits; a subscribe() consumer joins the
    group id: the next commit is refused by Kafka, and poll() raises instead of going on with
    commits that are lost."""
    topic = kit.topic("t", 1)
    plans = kit.topic("plans", 1, {"cleanup.policy": "compact"})
    group = kit.name("joined")
    kit.produce(topic, {0: 5})
    with PlanStore(kit.config(), plans) as store:
        store.publish(group, "lag", {"w0": [[topic, 0]]})
    conf = kit.config({"auto.offset.reset": "earliest", "auto.commit.interval.ms": 500})
    consumer = PlanConsumer(conf, group=group, instance_id="w0", plan_topic=plans)
    try:
        assert _read_offsets(consumer, 5) == [0, 1, 2, 3, 4]
        wait_until(lambda: consumer.poll(0.2) is None and _committed(kit.config(), group, topic)[0] == 5)
        intruder = member(group, topic, "classic", client_id="late-joiner")
        kit.produce(topic, {0: 3})
        with pytest.raises(GroupMembersError) as failed:
            for _ in range(100):
                consumer.poll(0.2)
        message = str(failed.value)
        assert "commit refused (UNKNOWN_MEMBER_ID)" in message and "late-joiner (classic member" in message
        intruder.close()
    finally:
        consumer.close()  # the group is empty again: its last commit goes through
    assert _committed(kit.config(), group, topic)[0] == 8


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_publishing_for_a_group_with_live_members_is_refused_and_recorded(
    kit: Kit, member: Any, protocol: str, tmp_path: Path
) -> None:
    """``lagassign plan --apply`` and ``lagassign publish`` refuse in one line naming the
    member, the audit trail records the refusal, and the plans topic holds no plan."""
    topic = kit.topic("t", 4)
    plans = kit.topic("plans", 1, {"cleanup.policy": "compact"})
    kit.produce(topic, {0: 400, 1: 10, 2: 10, 3: 10})
    group = kit.name(f"pub-{protocol}")
    groups_file = tmp_path / "groups.yaml"
    groups_file.write_text(f"groups:\n  - group: {group}\n    topics: [{topic}]\n    instances: [w0, w1]\n")
    member(group, topic, protocol, client_id="rogue")

    snap = take_snapshot(
        AdminHook(kit.config(), timeout=15),
        groups_regex=re.escape(group),
        assign_groups=load_groups_file(groups_file),
        plan_topic=plans,
    )
    assert snap.groups[0]["kind"] == "assign" and snap.groups[0]["group_type"] is None
    [warning] = [w for w in snap.manifest["warnings"] if group in w]
    assert "runs in assign() mode but has 1 live member(s) of the group protocol" in warning
    assert "(rogue)" in warning
    db = f"sqlite:///{tmp_path / 'audit.db'}"
    planned = run_cli(
        "plan",
        *config_flags(kit.broker),
        "--groups",
        re.escape(group),
        "--groups-file",
        str(groups_file),
        "--apply",
        "--plan-topic",
        plans,
        "--strategies",
        "lag,current",
        "--base-dir",
        str(tmp_path / "base"),
        "--db",
        db,
    )
    lines = [line for line in (planned.stdout + planned.stderr).splitlines() if "live member(s)" in line]
    assert lines, planned.stdout + planned.stderr
    assert (
        f"refused: group {group} has 1 live member(s) of the group protocol (rogue ({protocol} member"
        in (lines[0])
    )
    shown = json.loads(run_cli("plans", "show", "latest", "--json", "--db", db).stdout)
    [g] = shown["groups"]
    assert g["decision"]["go"] and g["decision"]["outcome"].startswith(f"refused: group {group} has 1 live")
    assert g["publications"] == []

    assert outcome_of(shown, g).label == "refused: group has members"

    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps({"group": group, "strategy": "lag", "assignment": {"w0": [[topic, 0]]}}))
    by_hand = run_cli("publish", *config_flags(kit.broker), str(plan_file), "--topic", plans, "--db", db)
    assert by_hand.returncode == 2
    [line] = by_hand.stderr.strip().splitlines()
    assert f"group {group} has 1 live member(s)" in line and "rogue" in line
    with PlanStore(kit.config(), plans) as store:
        assert store.newest(group) is None


@pytest.mark.one_broker  # over a minute idle; offset expiry is KIP-211's in 3.9 and 4 alike
def test_a_plan_consumer_keeps_its_place_beyond_the_offset_retention(broker: Any, tmp_path: Path) -> None:
    """A broker of this test's own keeps offsets of groups without members one minute after
    their last commit (``offsets.retention.minutes=1``, checked every 5 s). A plain assign()
    commit is gone after that; a PlanConsumer whose partition receives nothing for longer
    keeps its place (offset and handover marker), and its successor resumes there."""
    if broker.kind == "noida":
        pytest.skip("noida takes no broker settings (offsets.retention.minutes)")
    own = brokerctl.start_private(
        broker.kind,
        tmp_path / "broker",
        {"offsets.retention.minutes": "1", "offsets.retention.check.interval.ms": "5000"},
    )
    try:
        kit = Kit(own, "keep")
        topic = kit.topic("quiet", 1)
        plans = kit.topic("plans", 1, {"cleanup.policy": "compact"})
        kit.produce(topic, {0: 5})
        group, control = kit.name("plan-group"), kit.name("control")
        with PlanStore(kit.config(), plans) as store:
            store.publish(group, "lag", {"w0": [[topic, 0]]})
        conf = kit.config({"auto.offset.reset": "earliest"})
        consumer = PlanConsumer(conf, group=group, instance_id="w0", plan_topic=plans)
        with consumer:
            assert _read_offsets(consumer, 5) == [0, 1, 2, 3, 4]
            assert consumer.offsets_refresh == 15.0  # a quarter of the broker's one minute
            wait_until(lambda: consumer.poll(0.2) is None and _committed(kit.config(), group, topic)[0] == 5)
            _assign_mode_commit(kit, control, topic, 5)  # the same commit, not refreshed
            since = time.monotonic()
            gone: Any = (5, None)
            while gone[0] is not None or time.monotonic() - since < 80:  # over a minute idle
                assert consumer.poll(1.0) is None  # nothing arrives: only refreshes commit
                if gone[0] is not None and int(time.monotonic() - since) % 5 == 0:
                    gone = _committed(kit.config(), control, topic)
                assert time.monotonic() - since < 150, "the control group's offset never expired"
            kept = _committed(kit.config(), group, topic)
        # Kafka's rule: the control's offset expired about a minute after its commit; the
        # PlanConsumer's is there, with its handover marker
        assert gone == (None, None)

        marker = Marker.decode(kept[1])
        assert kept[0] == 5 and marker is not None and (marker.instance, marker.released) == ("w0", False)
        kit.produce(topic, {0: 3})
        # the next holder starts where the first stopped, not at auto.offset.reset (earliest)
        with PlanConsumer(conf, group=group, instance_id="w0", plan_topic=plans) as successor:
            assert _read_offsets(successor, 3) == [5, 6, 7]
    finally:
        brokerctl.stop_private(tmp_path / "broker")
