"""Snapshot against the real broker: skewed lag made of real produced and committed offsets."""

from __future__ import annotations

import json
import re
from typing import ClassVar

import lagassign
import pyarrow.parquet as pq
import pytest
from confluent_kafka import Consumer, Producer
from kafkakit import Kit, config_flags, run_cli, wait_until
from lagassign.cli.plans import plan_text
from lagassign.core.case import parse_case
from lagassign.core.liveness import InstanceStatus
from lagassign.evaluation import evaluate_snapshot
from lagassign.kafka.admin import AdminHook
from lagassign.kafka.groupsfile import AssignGroup
from lagassign.kafka.plans import PlanStore
from lagassign.kafka.snapshot import take_snapshot
from lagassign.kafka.snapshot_rows import racks_by_partition, replica_racks
from lagassign.kafka.status import ensure_status_topic, now_ms, partition_for, status_key
from lagassign.store import AuditStore
from lagassign.tables.snapshot import read_snapshot

pytestmark = pytest.mark.kafka

COUNTS = {0: 400, 1: 40, 2: 30, 3: 20, 4: 10, 5: 0}
SKEWED_COMMITS = {0: 50, 1: 40, 2: 10}  # 3, 4, 5 never committed
OFFSETS_ONLY_COMMITS = {0: 400, 3: 5}


@pytest.fixture(scope="module")
def cluster(module_kit: Kit) -> dict:
    """One topic with skewed records, two groups with real commits, a plan for one of them."""
    kit = module_kit
    orders = kit.topic("orders", 6)
    plans = kit.topic("plans", 1, {"cleanup.policy": "compact"})
    kit.produce(orders, COUNTS)
    skewed, offsets_only = kit.name("skewed"), kit.name("offsets-only")
    kit.commit(skewed, {(orders, p): o for p, o in SKEWED_COMMITS.items()})
    kit.commit(offsets_only, {(orders, p): o for p, o in OFFSETS_ONLY_COMMITS.items()})
    plan = {"w0": [[orders, 0]], "w1": [[orders, p] for p in range(1, 6)]}
    with PlanStore(kit.config(), plans) as store:
        store.publish(skewed, "lag", plan)
    declared = AssignGroup(skewed, {"w0": (orders,), "w1": (orders,)}, "earliest")
    return {
        "orders": orders,
        "plans": plans,
        "skewed": skewed,
        "offsets_only": offsets_only,
        "declared": declared,
        "plan": plan,
    }


def _snapshot(kit: Kit, cluster: dict, regex: str, declared=(), **kw):
    hook = AdminHook(kit.config(), timeout=15)
    return take_snapshot(hook, groups_regex=regex, assign_groups=declared, plan_topic=cluster["plans"], **kw)


def _exactly(*groups: str) -> str:
    """A groups regex for these groups only (it narrows declared groups too)."""
    return "|".join(re.escape(g) for g in groups)


def _rows(snap, group):
    return {r["partition"]: r for r in snap.partitions if r["group"] == group}


def test_snapshot_matches_what_was_produced_and_committed(module_kit: Kit, cluster: dict, tmp_path) -> None:
    snap = _snapshot(module_kit, cluster, f"{module_kit.prefix}-.*", [cluster["declared"]])
    rows = _rows(snap, cluster["skewed"])
    assert sorted(rows) == list(range(6))
    for p, n in COUNTS.items():
        assert (rows[p]["topic"], rows[p]["begin"], rows[p]["end"]) == (cluster["orders"], 0, n)
        assert rows[p]["committed"] == SKEWED_COMMITS.get(p)
    # earliest: an uncommitted partition's whole log is lag
    assert {p: r["lag"] for p, r in rows.items()} == {0: 350, 1: 0, 2: 20, 3: 20, 4: 10, 5: 0}

    group = next(g for g in snap.groups if g["group"] == cluster["skewed"])
    assert (group["kind"], group["auto_offset_reset"], group["error"]) == ("assign", "earliest", None)
    members = {m["instance_id"]: m for m in snap.members if m["group"] == cluster["skewed"]}
    assert sorted(members) == ["w0", "w1"]
    for iid, pairs in cluster["plan"].items():  # current assignment = the newest published plan
        assert [[a["topic"], a["partition"]] for a in members[iid]["assignment"]] == pairs
        assert members[iid]["topics"] == [cluster["orders"]]

    # Written exactly as lagassign.tables.snapshot reads it, and every group becomes a valid case.
    snap.write(tmp_path)
    cases = {row["group"]: case for row, case in read_snapshot(tmp_path)}
    parsed = parse_case(cases[cluster["skewed"]])
    assert sum(st.lag for st in parsed.partitions.values()) == 400
    assert {m.id for m in parsed.members} == {"w0", "w1"}
    assert pq.read_table(tmp_path / "partitions.parquet").schema.field("partition").type == "int32"
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["counts"]["failed"] == 0
    # one OffsetFetch a group, or (naming the cluster's partitions) one per committed_batch of them
    per_group = manifest["admin_calls"]["list_consumer_group_offsets"] / len(snap.groups)
    if manifest["committed_scope"] == "group":
        assert per_group == 1
    else:
        assert per_group == int(per_group) >= 1


def test_offset_only_groups_are_discovered(module_kit: Kit, cluster: dict) -> None:
    snap = _snapshot(module_kit, cluster, f"{module_kit.prefix}-offsets-.*")
    assert [(g["group"], g["kind"]) for g in snap.groups] == [(cluster["offsets_only"], "subscribe")]
    rows = _rows(snap, cluster["offsets_only"])
    assert {p: r["committed"] for p, r in rows.items()} == {p: OFFSETS_ONLY_COMMITS.get(p) for p in range(6)}
    # latest (the default): an uncommitted partition has no lag
    assert {p: r["lag"] for p, r in rows.items()} == {0: 0, 1: 0, 2: 0, 3: 15, 4: 0, 5: 0}


def test_subscribed_members_are_described(module_kit: Kit, cluster: dict, tmp_path) -> None:
    group = module_kit.name("live")
    consumer = Consumer(
        module_kit.config(
            {
                "group.id": group,
                "client.id": "live-client",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "partition.assignment.strategy": "range",
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 500,
            }
        )
    )
    try:
        consumer.subscribe([cluster["orders"]])
        wait_until(lambda: consumer.poll(0.2) is not None and consumer.assignment(), timeout=30)
        consumer.commit(asynchronous=False)
        snap = _snapshot(module_kit, cluster, group)
    finally:
        consumer.close()
    [grow] = snap.groups
    assert (grow["kind"], grow["state"], grow["protocol"]) == ("subscribe", "Stable", "range")
    assert grow["error"] is None
    [member] = snap.members
    assert member["client_id"] == "live-client" and member["member_id"] and member["host"]
    assert member["topics"] == [cluster["orders"]]
    assert sorted(a["partition"] for a in member["assignment"]) == list(range(6))
    assert len(_rows(snap, group)) == 6
    # what the group runs reaches its evaluation, the audit trail and `plans show`
    [evaluation] = evaluate_snapshot(snap.write(tmp_path / "snapshot"), ["range", "lag", "current"])
    assert (evaluation.group_type, evaluation.assignor) == (grow["group_type"], "range")
    with AuditStore(f"sqlite:///{tmp_path / 'audit.db'}") as store:
        plan_id = store.start_plan("manual")
        store.record_evaluations(plan_id, [evaluation])
        shown = plan_text(store.get_plan(plan_id))
    assert "assignor range · Kafka's row: range" in shown


def test_a_failed_group_is_marked_and_the_run_goes_on(module_kit: Kit, cluster: dict) -> None:
    ghost = AssignGroup(module_kit.name("ghost"), {"g0": (module_kit.name("no-such-topic"),)})
    snap = _snapshot(
        module_kit, cluster, _exactly(cluster["skewed"], ghost.group), [cluster["declared"], ghost]
    )
    errors = {g["group"]: g["error"] for g in snap.groups}
    assert "do not exist" in errors[ghost.group]
    assert errors[cluster["skewed"]] is None
    assert snap.manifest["failed"] == [{"group": ghost.group, "error": errors[ghost.group]}]


def test_cli_snapshot_writes_tables_and_keeps_secrets_out(module_kit: Kit, cluster: dict, tmp_path) -> None:
    groups_file = tmp_path / "groups.yaml"
    groups_file.write_text(
        f"groups:\n  - group: {cluster['skewed']}\n    topics: [{cluster['orders']}]\n"
        f"    instances: [w0, w1]\n    capacity: {{w0: 250}}\n"
    )
    props = tmp_path / "client.properties"
    props.write_text("# a properties file\nssl.key.password=pr0ps-secret\nclient.id=from-props\n")
    out = tmp_path / "snap"
    result = run_cli(
        "snapshot",
        *config_flags(module_kit.broker),
        "--config",
        "sasl.password=hunter2-secret",
        "--config-file",
        str(props),
        "--groups",
        f"{module_kit.prefix}-skewed",
        "--groups-file",
        str(groups_file),
        "--auto-offset-reset",
        "earliest",
        "--plan-topic",
        cluster["plans"],
        "--out",
        str(out),
        env={"LAGASSIGN_KAFKA_SASL_USERNAME": "alice", "LAGASSIGN_KAFKA_SSL_KEY_PEM": "env-secret"},
    )
    assert result.returncode == 0, result.stderr
    assert "1 groups (0 failed)" in result.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["sasl.password"] == "***"
    assert manifest["config"]["sasl.username"] == "alice"
    assert manifest["config"]["client.id"] == "from-props"
    written = "".join(p.read_bytes().decode("latin-1") for p in out.iterdir())
    everything = result.stdout + result.stderr + written
    for secret in ("hunter2-secret", "pr0ps-secret", "env-secret"):
        assert secret not in everything
    [row] = pq.read_table(out / "groups.parquet").to_pylist()
    assert (row["kind"], row["auto_offset_reset"]) == ("assign", "earliest")
    # the capacity the groups file configures reaches the member that states none
    members = {m["member_id"]: m["capacity"] for m in pq.read_table(out / "members.parquet").to_pylist()}
    assert members == {"w0": 250.0, "w1": None}


def test_instances_announce_their_rack_and_capacity(module_kit: Kit, cluster: dict, tmp_path) -> None:
    """Status records (as PlanConsumer's announcer writes them) give the planner each instance's
    rack and capacity: stated, or its rate while it is behind; both reach the case, through
    Parquet, and put the group into planning in time."""
    kit = module_kit
    status_topic = kit.name("status")
    parts = ensure_status_topic(kit.config(), status_topic, partitions=1)
    group = cluster["skewed"]
    producer = Producer(kit.config())
    statuses = [
        InstanceStatus(group, "w0", now_ms(), topics=(cluster["orders"],), rack="eu-1a", capacity=500.0),
        InstanceStatus(group, "w1", now_ms(), topics=(cluster["orders"],), rack="eu-1b", rate=120.0, lag=3),
    ]
    for s in statuses:
        key = status_key(s.group, s.instance)
        producer.produce(
            status_topic, s.to_json().encode(), key, partition=parts[partition_for(group, len(parts))]
        )
    producer.flush(15)
    snap = _snapshot(kit, cluster, _exactly(group), [cluster["declared"]], status_topic=status_topic)
    rows = {m["member_id"]: m for m in snap.members if m["group"] == group}
    assert (rows["w0"]["rack"], rows["w0"]["capacity"]) == ("eu-1a", 500.0)
    assert (rows["w1"]["rack"], rows["w1"]["capacity"]) == ("eu-1b", 120.0)
    snap.write(tmp_path / "snap")
    (_row, got) = next((g, c) for g, c in read_snapshot(tmp_path / "snap") if g["group"] == group)
    assert {m["id"]: (m["rack"], m["capacity"]) for m in got["members"]} == {
        "w0": ("eu-1a", 500.0),
        "w1": ("eu-1b", 120.0),
    }
    metrics = lagassign.assign(got, "drain-optimal")["metrics"]
    assert metrics["max_catch_up_s"] is not None and "catch_up_s" in metrics


def _comparable(snap) -> tuple:
    return (
        sorted(snap.groups, key=lambda r: r["group"]),
        sorted(snap.partitions, key=lambda r: (r["group"], r["topic"], r["partition"])),
        sorted(snap.members, key=lambda r: (r["group"], r["member_id"])),
    )


def test_naming_partitions_reads_the_same_commits_as_asking_the_whole_group(
    module_kit: Kit, cluster: dict
) -> None:
    """The two ways of reading committed offsets give the same rows; naming the partitions in
    small requests (committed_batch=4 over the cluster's partitions) is the fast one on noida."""
    regex = f"{module_kit.prefix}-.*"
    snaps = {}
    for scope, batch in (("group", 300), ("partitions", 4)):
        hook = AdminHook(module_kit.config(), timeout=15, committed_batch=batch)
        snaps[scope] = take_snapshot(
            hook,
            groups_regex=regex,
            assign_groups=[cluster["declared"]],
            plan_topic=cluster["plans"],
            committed_scope=scope,
        )
        assert snaps[scope].manifest["committed_scope"] == scope
        assert snaps[scope].manifest["counts"]["failed"] == 0
    assert _comparable(snaps["group"]) == _comparable(snaps["partitions"])
    groups = len(snaps["group"].groups)
    assert snaps["group"].manifest["admin_calls"]["list_consumer_group_offsets"] == groups
    assert snaps["partitions"].manifest["admin_calls"]["list_consumer_group_offsets"] > groups
    assert {r["committed"] for r in snaps["partitions"].partitions} >= {50, 40, 10, 400, 5, None}


def test_replica_racks_from_broker_racks() -> None:
    """The mapping from a partition's replicas (broker ids) to its racks: sorted, each once,
    brokers without a rack skipped, None when no replica has one."""
    racks = {1: "eu-1a", 2: "eu-1b", 3: None, 4: "eu-1a"}
    assert replica_racks([2, 1, 4], racks) == ["eu-1a", "eu-1b"]
    assert replica_racks([3, 2], racks) == ["eu-1b"]
    assert replica_racks([3], racks) is None
    assert replica_racks([9], racks) is None  # a replica on a broker the cluster did not describe
    assert replica_racks([], racks) is None


def test_the_broker_without_racks_leaves_the_snapshot_as_before(module_kit: Kit, cluster: dict) -> None:
    """Real: the broker's DescribeCluster and metadata. noida (and Kafka 0.9) report no rack, so
    no partition row gets ``racks`` and the cases carry none."""
    hook = AdminHook(module_kit.config(), timeout=15)
    broker_racks = hook.broker_racks()
    if module_kit.broker.kind == "noida":
        assert broker_racks and set(broker_racks.values()) == {None}
    assert not any(broker_racks.values())
    snap = _snapshot(module_kit, cluster, f"{module_kit.prefix}-.*", [cluster["declared"]])
    assert snap.partitions and not any("racks" in r for r in snap.partitions)
    for case in snap.cases().values():
        assert case is None or not any("racks" in p for p in case["partitions"])


class _RackedHook(AdminHook):
    """The real AdminHook, except that the brokers' racks are given: noida cannot be configured
    with ``broker.rack`` (its DescribeCluster reports none), so this is the one part that is
    not real. Replicas come from the broker's real metadata."""

    racks: ClassVar[dict[int, str | None]] = {}

    def broker_racks(self) -> dict[int, str | None]:
        real = super().broker_racks()  # still asked: the call is counted as in production
        return {b: self.racks.get(b) for b in real}


def test_replica_racks_reach_the_case_and_the_rack_aware_plan(
    module_kit: Kit, cluster: dict, tmp_path
) -> None:
    hook = AdminHook(module_kit.config(), timeout=15)
    md = hook.metadata()
    real_racks = {b: f"rack-{b}" for b in hook.broker_racks()}
    by_partition = racks_by_partition(md, real_racks)
    orders = md.topics[cluster["orders"]]
    for p, pm in orders.partitions.items():  # real replica lists of the real topic
        assert pm.replicas
        assert by_partition[(cluster["orders"], p)] == sorted({f"rack-{b}" for b in pm.replicas})
    assert racks_by_partition(md, {b: None for b in real_racks}) == {}

    racked = _RackedHook(module_kit.config(), timeout=15)
    racked.racks = real_racks
    snap = take_snapshot(
        racked,
        groups_regex=_exactly(cluster["skewed"]),
        assign_groups=[cluster["declared"]],
        plan_topic=cluster["plans"],
    )
    assert racked.calls["describe_cluster"] == 1
    rows = _rows(snap, cluster["skewed"])
    assert {p: r["racks"] for p, r in rows.items()} == {
        p: by_partition[(cluster["orders"], p)] for p in range(6)
    }
    snap.write(tmp_path / "snap")
    (_row, case) = next(
        (g, c) for g, c in read_snapshot(tmp_path / "snap") if g["group"] == cluster["skewed"]
    )
    assert {tuple(p["racks"]) for p in case["partitions"]} == {tuple(sorted(set(real_racks.values())))}
    parsed = parse_case(case)
    assert all(st.racks == frozenset(real_racks.values()) for st in parsed.partitions.values())
    # with member racks too, a rack-aware plan reads them: every partition is on the one rack here
    case["members"] = [dict(m, rack=next(iter(real_racks.values()))) for m in case["members"]]
    metrics = lagassign.assign(case, "lag-aware", rack="require")["metrics"]
    assert metrics["cross_rack_partitions"] == 0
