"""Groups of the new consumer protocol (KIP-848) on the real broker: real consumers join with
``group.protocol=consumer``; the snapshot reads them as the coordinator describes them, and a
group that migrates online from classic to consumer is snapshotted consistently all the way."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer
from kafkakit import Kit, config_flags, needs, run_cli, wait_until
from lagassign.cli.plans import plan_text, with_kafka_choice
from lagassign.evaluation import evaluate_snapshot
from lagassign.kafka.admin import AdminHook
from lagassign.kafka.groupdescribe import UnsupportedDescribe
from lagassign.kafka.snapshot import take_snapshot
from lagassign.store import AuditStore

pytestmark = pytest.mark.kafka


class Fleet:
    """Real consumers of one group, polled by one thread (rebalances and reconciliation happen
    on poll) while the test snapshots the group from outside; each consumer's client id says
    the protocol it joined with."""

    def __init__(self, kit: Kit, group: str, topics: list[str]) -> None:
        self.kit, self.group, self.topics = kit, group, topics
        self.members: dict[str, Any] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def join(self, name: str, protocol: str, topics: list[str] | None = None, **extra: Any) -> None:
        conf = {
            "group.id": self.group,
            "client.id": f"{protocol}-{name}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "group.protocol": protocol,
            **extra,
        }
        if protocol == "classic":
            conf |= {
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 500,
                "partition.assignment.strategy": "range",  # sticky userData blocks the upgrade
            }
        consumer = Consumer(self.kit.config(conf))
        consumer.subscribe(topics or self.topics)
        with self.lock:
            self.members[name] = consumer

    def leave(self, name: str) -> None:
        with self.lock:
            self.members.pop(name).close()

    def assignments(self) -> dict[str, set[tuple[str, int]]]:
        with self.lock:
            return {n: {(tp.topic, tp.partition) for tp in c.assignment()} for n, c in self.members.items()}

    def _poll(self) -> None:
        while not self.stop.is_set():
            with self.lock:
                for consumer in self.members.values():
                    consumer.poll(0.02)
            time.sleep(0.01)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        with self.lock:
            for consumer in self.members.values():
                consumer.close()
            self.members.clear()


@pytest.fixture
def fleet(kit: Kit) -> Iterator[Any]:
    made: list[Fleet] = []

    def make(group: str, topics: list[str]) -> Fleet:
        made.append(Fleet(kit, group, topics))
        return made[-1]

    yield make
    for f in made:
        f.close()


def _snapshot(kit: Kit, group: str) -> Any:
    return take_snapshot(AdminHook(kit.config(), timeout=15), groups_regex=re.escape(group))


def _pairs(rows: list[dict[str, Any]]) -> set[tuple[str, int]]:
    return {(a["topic"], a["partition"]) for a in rows}


def _settled(kit: Kit, group: str, members: int, partitions: int) -> Any:
    """A snapshot of the group once it has ``members`` members whose assignments are their
    targets and cover ``partitions`` partitions."""

    def check() -> Any:
        snap = _snapshot(kit, group)
        ms = snap.members
        done = (
            len(snap.groups) == 1  # listed once its first member joined
            and snap.groups[0]["state"] == "Stable"
            and len(ms) == members
            and all(_pairs(m["assignment"]) == _pairs(m.get("target") or m["assignment"]) for m in ms)
            and sum(len(m["assignment"]) for m in ms) == partitions
        )
        return snap if done else None

    return wait_until(check, timeout=60, every=0.5)


def test_consumer_protocol_members_are_read_with_racks_subscriptions_and_targets(
    kit: Kit, fleet: Any, tmp_path: Any
) -> None:
    """Two consumers join with group.protocol=consumer (different subscriptions, racks, one
    static): the snapshot has the broker's assignor, each member's subscription, rack, epoch,
    current and target assignment, and the evaluation marks uniform as the broker's choice."""
    needs(kit.broker, "consumer protocol")
    orders, audit = kit.topic("orders", 6), kit.topic("audit", 2)
    kit.produce(orders, {p: 10 * (p + 1) for p in range(6)})
    group = kit.name("kip848")
    f = fleet(group, [orders])
    f.join("a", "consumer", [orders, audit], **{"client.rack": "rack-a", "group.instance.id": "static-a"})
    f.join("b", "consumer", [orders], **{"client.rack": "rack-b"})
    snap = _settled(kit, group, members=2, partitions=8)

    [row] = snap.groups
    assert (row["kind"], row["group_type"], row["protocol"], row["state"]) == (
        "subscribe",
        "consumer",
        "uniform",
        "Stable",
    )
    assert row["error"] is None and row["group_epoch"] >= row["assignment_epoch"] > 0
    members = {m["client_id"]: m for m in snap.members}
    a, b = members["consumer-a"], members["consumer-b"]
    assert (a["rack"], a["instance_id"], a["topics"]) == ("rack-a", "static-a", sorted([orders, audit]))
    assert (b["rack"], b["instance_id"], b["topics"]) == ("rack-b", None, [orders])
    assert {a["member_type"], b["member_type"]} == {"consumer"}
    assert a["member_epoch"] > 0 and b["member_epoch"] > 0
    # the broker's assignment is what the consumers themselves hold
    held = f.assignments()
    assert _pairs(a["assignment"]) == held["a"] and _pairs(b["assignment"]) == held["b"]
    assert {t for t, _ in held["b"]} == {orders}  # b does not subscribe to audit
    assert not snap.manifest["warnings"]
    calls = snap.manifest["admin_calls"]
    assert (calls["api_versions"], calls["find_coordinator"], calls["consumer_group_describe"]) == (1, 1, 1)

    # evaluated like every group; uniform's row is the broker's choice on every surface

    folder = snap.write(tmp_path / "snapshot")
    [evaluation] = evaluate_snapshot(folder, ["range", "uniform", "lag-optimal", "current"])
    assert (evaluation.group_type, evaluation.assignor, evaluation.error) == ("consumer", "uniform", None)
    current = evaluation.result("current")
    assert current is not None and current.to_dict()["assignment"] == {
        "static-a": sorted([list(p) for p in held["a"]]),
        b["member_id"]: sorted([list(p) for p in held["b"]]),
    }
    with AuditStore(f"sqlite:///{tmp_path / 'audit.db'}") as store:
        plan_id = store.start_plan("manual")
        store.record_evaluations(plan_id, [evaluation])
        plan = store.get_plan(plan_id)
    shown = plan_text(plan)
    assert "group type consumer · assignor uniform" in shown
    [uniform_line] = [line for line in shown.splitlines() if line.strip().startswith("uniform ")]
    assert uniform_line.rstrip().endswith("<- broker's choice")
    flags = {r["strategy"]: r["kafka_choice"] for r in with_kafka_choice(plan)["groups"][0]["results"]}
    assert flags == {"range": False, "uniform": True, "lag-optimal": False, "current": False}


def test_without_the_coordinators_answer_confluent_kafkas_description_is_kept_and_said(
    kit: Kit, fleet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where ConsumerGroupDescribe cannot be sent (SASL: no SASL listener here, so the reader's
    refusal is stood in for), the group is read as confluent-kafka describes it, and the
    manifest says what is missing and why."""
    needs(kit.broker, "consumer protocol")
    topic = kit.topic("t", 3)
    group = kit.name("nosasl")
    f = fleet(group, [topic])
    f.join("a", "consumer", **{"client.rack": "rack-a"})
    _settled(kit, group, members=1, partitions=3)

    def refuse(self: AdminHook, group_ids: Any) -> Any:
        raise UnsupportedDescribe("security.protocol SASL_SSL is not spoken by this reader")

    monkeypatch.setattr(AdminHook, "describe_consumer_protocol", refuse)
    snap = _snapshot(kit, group)
    [row], [m] = snap.groups, snap.members
    assert (row["group_type"], row["protocol"], row["error"]) == ("consumer", "uniform", None)
    assert m["client_id"] == "consumer-a" and m.get("rack") is None and "member_epoch" not in m
    assert _pairs(m["assignment"]) == _pairs(m["target"]) == {(topic, p) for p in range(3)}
    assert snap.manifest["warnings"] == [
        "members' racks, subscriptions and epochs of 1 consumer-type group(s) not read: "
        "security.protocol SASL_SSL is not spoken by this reader"
    ]


def test_plan_record_says_the_group_type_from_the_command_line(kit: Kit, fleet: Any, tmp_path: Any) -> None:
    """``lagassign plan`` on a live KIP-848 group, then ``plans show latest --json``: the group
    says group_type consumer and its uniform row is flagged as Kafka's choice (the contract)."""
    needs(kit.broker, "consumer protocol")
    topic = kit.topic("events", 4)
    kit.produce(topic, {0: 100, 1: 5, 2: 5, 3: 5})
    group = kit.name("cli848")
    f = fleet(group, [topic])
    f.join("a", "consumer")
    f.join("b", "consumer")
    _settled(kit, group, members=2, partitions=4)
    db = f"sqlite:///{tmp_path / 'audit.db'}"
    planned = run_cli(
        "plan",
        *config_flags(kit.broker),
        "--groups",
        re.escape(group),
        "--strategies",
        "uniform,range,lag,current",
        "--base-dir",
        str(tmp_path / "base"),
        "--db",
        db,
    )
    assert planned.returncode == 0, planned.stderr
    shown = run_cli("plans", "show", "latest", "--json", "--db", db)
    assert shown.returncode == 0, shown.stderr
    [g] = json.loads(shown.stdout)["groups"]
    assert (g["group"], g["group_type"], g["assignor"]) == (group, "consumer", "uniform")
    assert [r["strategy"] for r in g["results"] if r["kafka_choice"]] == ["uniform"]
    text = run_cli("plans", "show", "latest", "--db", db)
    assert "<- broker's choice" in text.stdout


def test_a_group_migrating_from_classic_to_consumer_is_snapshotted_consistently(kit: Kit, fleet: Any) -> None:
    """Three classic members are replaced one by one by consumer-protocol members (Kafka 4's
    online upgrade) while the group is snapshotted over and over: every snapshot says the
    group's type, and its members, their protocols and assignments agree with it."""
    needs(kit.broker, "consumer protocol")
    topic = kit.topic("moving", 6)
    kit.produce(topic, dict.fromkeys(range(6), 20))
    group = kit.name("migrating")
    f = fleet(group, [topic])
    for i in range(3):
        f.join(f"c{i}", "classic")
    first = _settled(kit, group, members=3, partitions=6)
    assert (first.groups[0]["group_type"], first.groups[0]["protocol"]) == ("classic", "range")

    seen: list[tuple[str, int, int]] = []  # (type, classic members, consumer members)

    def consistent(snap: Any) -> None:
        [row] = snap.groups
        assert row["error"] is None, row["error"]
        kind = row["group_type"]
        assert kind in ("classic", "consumer")
        owners: dict[tuple[str, int], str] = {}
        for m in snap.members:
            joined_with = m["client_id"].split("-")[0]
            if kind == "classic":
                assert joined_with == "classic" and m.get("member_type") is None
            else:  # the coordinator says which protocol each member speaks
                assert m["member_type"] == joined_with
                assert m["member_epoch"] is not None and m["topics"] == [topic]
                targets = [p for other in snap.members for p in _pairs(other["target"])]
                assert len(targets) == len(set(targets))  # no partition targeted twice
            for p in _pairs(m["assignment"]):
                assert p not in owners, f"{p} owned by {owners[p]} and {m['client_id']}"
                owners[p] = m["client_id"]
        if kind == "consumer":
            assert row["protocol"] == "uniform" and row["group_epoch"] is not None
        classic = sum(m["client_id"].startswith("classic") for m in snap.members)
        seen.append((kind, classic, len(snap.members) - classic))

    consistent(first)
    for i in range(3):
        f.leave(f"c{i}")
        consistent(_snapshot(kit, group))  # one member fewer, rebalancing
        f.join(f"n{i}", "consumer")
        deadline = time.monotonic() + 60
        taken = 0
        while True:  # snapshot as fast as it goes until the group settles on the new members
            snap = _snapshot(kit, group)
            consistent(snap)
            taken += 1
            names = sorted(m["client_id"] for m in snap.members)
            want = sorted(
                [*(f"consumer-n{j}" for j in range(i + 1)), *(f"classic-c{j}" for j in range(i + 1, 3))]
            )
            settled = names == want and all(
                _pairs(m["assignment"]) == _pairs(m.get("target") or m["assignment"]) for m in snap.members
            )
            stable = snap.groups[0]["state"] == "Stable"
            if taken >= 3 and settled and stable and sum(len(m["assignment"]) for m in snap.members) == 6:
                break
            assert time.monotonic() < deadline, f"group did not settle: {names}"
    assert seen[0] == ("classic", 3, 0) and seen[-1] == ("consumer", 0, 3)
    assert any(kind == "consumer" and classic > 0 for kind, classic, _ in seen), seen  # mixed members seen
    assert len(seen) >= 13
