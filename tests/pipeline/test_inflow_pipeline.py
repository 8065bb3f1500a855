"""Successive snapshots give partitions their inflow and lag in seconds (``pipeline.inflow``),
through the real audit store (SQLite here; ``tests/store/test_offset_history.py`` runs the store on
PostgreSQL too), the snapshot tables and the evaluation, without a broker."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from lagassign.core.case import parse_case
from lagassign.evaluation import evaluate_snapshot
from lagassign.pipeline.inflow import add_inflow
from lagassign.store import AuditStore
from lagassign.tables.snapshot import Snapshot, partition_lag_seconds, read_snapshot
from snapshotkit import one_group_snapshot


def _snapshot(at: str, ends: tuple[int, int], committed: tuple[int, int], capacity: bool = True) -> Snapshot:
    """Group g: members a (owns t-0, t-1) and b (owns nothing), both announcing 100 msg/s."""
    member: dict[str, Any] = {"group": "g", "client_id": "c", "host": "h", "topics": ["t"]}
    cap = {"capacity": 100.0} if capacity else {}
    members = [
        {
            **member,
            "member_id": "a",
            "instance_id": "a",
            "assignment": [{"topic": "t", "partition": 0}, {"topic": "t", "partition": 1}],
        }
        | cap,
        {**member, "member_id": "b", "instance_id": "b", "assignment": []} | cap,
    ]
    return one_group_snapshot("g", "assign", list(zip(ends, committed, strict=True)), members, at)


def _added(store: AuditStore, plan_id: int, snap: Snapshot) -> tuple[dict[str, Any], list[str]]:
    """``add_inflow``'s summary, and the lines it logged."""
    lines: list[str] = []
    return add_inflow(store, plan_id, snap, lines.append), lines


@pytest.fixture
def store(tmp_path: Path):
    with AuditStore(f"sqlite:///{tmp_path / 'audit.db'}") as s:
        yield s


def test_without_history_nothing_changes(store: AuditStore, tmp_path: Path) -> None:
    snap = _snapshot("2026-05-01T06:00:00Z", (1_000, 50), (1_000, 50))
    before = copy.deepcopy(snap.cases())
    summary, lines = _added(store, 1, snap)
    assert summary == {"partitions": 2, "rates": 0, "lag_s": 0, "capacities": 0}
    assert snap.cases() == before  # no rate: the case is exactly today's
    assert "no offset history yet" in lines[0]
    assert store.offset_history("k1", [("t", 0)]) == {("t", 0): [(snap_time("06:00:00"), 1_000)]}


def snap_time(hms: str) -> Any:
    from lagassign.core.clock import parse_utc

    return parse_utc(f"2026-05-01T{hms}Z")


def test_the_next_snapshot_gets_rates_and_lag_in_seconds(store: AuditStore, tmp_path: Path) -> None:
    add_inflow(store, 1, _snapshot("2026-05-01T06:00:00Z", (1_000, 50), (1_000, 50)))
    # a minute later t-0 took 6,000 messages (100/s) and its consumer is at 4,000, where the
    # end was 30 s ago;
    # t-1 took none
    snap = _snapshot("2026-05-01T06:01:00Z", (7_000, 50), (4_000, 50))
    summary, lines = _added(store, 2, snap)
    assert summary == {"partitions": 2, "rates": 2, "lag_s": 2, "capacities": 0}
    assert "previous snapshot 60 s earlier" in lines[0]
    rows = {r["partition"]: r for r in snap.partitions}
    assert (rows[0]["rate"], rows[0]["lag_s"]) == (100.0, 30.0)
    assert (rows[1]["rate"], rows[1]["lag_s"]) == (0.0, 0.0)

    folder = snap.write(tmp_path / "snap")
    assert set(pq.read_table(folder / "partitions.parquet").column_names) >= {"rate", "lag_s"}
    assert partition_lag_seconds(folder) == {"g": {("t", 0): 30.0, ("t", 1): 0.0}}
    ((_, case),) = read_snapshot(folder)
    assert case is not None
    group = parse_case(case)
    assert [st.rate for st in group.partitions.values()] == [100.0, 0.0]
    # a holds 3,000 lag against 100 msg/s of inflow at 100 msg/s capacity: never catches up
    (evaluation,) = evaluate_snapshot(folder, ["current", "drain-optimal"])
    current = evaluation.results[0].metrics
    assert current is not None and current["max_catch_up_s"] is None


def test_a_snapshot_without_the_new_columns_still_reads(tmp_path: Path) -> None:
    folder = _snapshot("2026-05-01T06:00:00Z", (10, 5), (5, 5)).write(tmp_path / "old")
    table = pq.read_table(folder / "partitions.parquet")
    pq.write_table(table.drop_columns(["rate", "lag_s"]), folder / "partitions.parquet")
    ((_, case),) = read_snapshot(folder)
    assert case is not None and all("rate" not in p for p in case["partitions"])
    assert partition_lag_seconds(folder) == {}


def test_members_without_capacity_get_their_commit_rate_while_behind(store: AuditStore) -> None:
    add_inflow(store, 1, _snapshot("2026-05-01T06:00:00Z", (9_000, 500), (1_000, 100), capacity=False))
    # a minute later a (t-0 and t-1, both still behind) committed 3,000 + 300 more: 55 msg/s
    snap = _snapshot("2026-05-01T06:01:00Z", (12_000, 900), (4_000, 400), capacity=False)
    summary, lines = _added(store, 2, snap)
    assert summary["capacities"] == 1
    assert {m["member_id"]: m.get("capacity") for m in snap.members} == {"a": 55.0, "b": None}
    assert "capacity: 1 members that state none, from their commit rate while behind" in lines
    # a member that caught up on a partition gets no figure: it may have idled
    third = _snapshot("2026-05-01T06:02:00Z", (13_000, 900), (5_000, 900), capacity=False)
    assert add_inflow(store, 3, third)["capacities"] == 0
    # stated capacities are never replaced
    fourth = _snapshot("2026-05-01T06:03:00Z", (14_000, 1_000), (6_000, 950))
    add_inflow(store, 4, fourth)
    assert {m.get("capacity") for m in fourth.members} == {100.0}
