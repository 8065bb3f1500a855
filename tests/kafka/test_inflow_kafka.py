"""Inflow and lag in seconds from successive snapshots of a real broker: the snapshot step
records end offsets in the audit store and the next one gives partitions ``rate`` and
``lag_s`` (a real broker, a real SQLite audit store, the snapshot's Parquet)."""

from __future__ import annotations

import time

import pyarrow.parquet as pq
from kafkakit import only_declared
from lagassign.core.inflow import MIN_SPAN_S


def test_the_second_snapshot_knows_inflow_and_lag_in_seconds(kit, tmp_path) -> None:
    from lagassign.pipeline import PlanParams, snapshot_step
    from lagassign.store import AuditStore

    topic = kit.topic("inflow", 2)
    group = kit.name("declared")
    kit.produce(topic, {0: 300, 1: 100})
    kit.commit(group, {(topic, 0): 300, (topic, 1): 100})
    groups_file = tmp_path / "groups.yaml"
    groups_file.write_text(
        f"groups:\n  - group: {group}\n    topics: [{topic}]\n    instances: [w0]\n    capacity: 400\n"
    )
    params = PlanParams.from_mapping({"groups": only_declared(groups_file), "groups_file": str(groups_file)})
    lines: list[str] = []
    with AuditStore(f"sqlite:///{tmp_path / 'audit.db'}") as store:
        first = store.start_plan("manual", "test")
        snapshot_step(store, first, kit.config(), params, tmp_path / "s1", log=lines.append)
        assert any("no offset history yet" in line for line in lines)
        # w0 states no capacity (no status record): the groups file's figure, in the tables
        assert "capacity: 1 members from the groups file" in lines
        [member] = pq.read_table(tmp_path / "s1" / "members.parquet").to_pylist()
        assert (member["member_id"], member["capacity"]) == ("w0", 400.0)
        rows = pq.read_table(tmp_path / "s1" / "partitions.parquet").to_pylist()
        assert [(r["rate"], r["lag_s"]) for r in rows] == [(None, None), (None, None)]

        started = time.monotonic()
        kit.produce(topic, {0: 600})  # the consumer stays at 300 on p0; p1 takes nothing
        time.sleep(max(0.0, MIN_SPAN_S + 0.5 - (time.monotonic() - started)))
        second = store.start_plan("manual", "test")
        lines.clear()
        snapshot_step(store, second, kit.config(), params, tmp_path / "s2", log=lines.append)
        assert any("inflow: rates for 2 of 2 partitions" in line for line in lines), lines
        rows = {r["partition"]: r for r in pq.read_table(tmp_path / "s2" / "partitions.parquet").to_pylist()}
        span = (600 / rows[0]["rate"]) if rows[0]["rate"] else None
        assert span is not None and MIN_SPAN_S <= span < 120  # 600 messages over the time between
        assert rows[1]["rate"] == 0.0 and rows[1]["lag_s"] == 0.0
        # p0's position 300 was the end at the first snapshot
        assert abs(rows[0]["lag_s"] - span) < 1e-6
