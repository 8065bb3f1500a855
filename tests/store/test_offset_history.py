"""The offset history of the audit store (end offsets per snapshot, pruned to a window), on a
SQLite file and on PostgreSQL (``pg_url``; marked ``db``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from lagassign.store import LATEST_VERSION, AuditStore, migrate

T0 = datetime(2026, 5, 1, 6, 0, tzinfo=UTC)


def _minutes(n: float) -> datetime:
    return T0 + timedelta(minutes=n)


def test_observations_come_back_oldest_first_per_partition(store: AuditStore) -> None:
    store.record_offsets("c1", _minutes(0), {("t", 0): 100, ("t", 1): 5})
    store.record_offsets("c1", _minutes(10), {("t", 0): 700, ("t", 1): 5, ("u", 0): 1})
    got = store.offset_history("c1", [("t", 0), ("t", 1), ("t", 2)])
    assert got == {
        ("t", 0): [(_minutes(0), 100), (_minutes(10), 700)],
        ("t", 1): [(_minutes(0), 5), (_minutes(10), 5)],
    }
    assert store.offset_history("c1", [("t", 0)], before=_minutes(10)) == {("t", 0): [(_minutes(0), 100)]}
    assert store.offset_history("other", [("t", 0)]) == {}  # clusters do not mix
    assert store.offset_history("c1", []) == {}


def test_a_retried_snapshot_of_the_same_plan_replaces_its_rows(store: AuditStore) -> None:
    store.record_offsets(None, _minutes(0), {("t", 0): 1}, plan_id=1)
    store.record_offsets(None, _minutes(5), {("t", 0): 50}, plan_id=2)
    store.record_offsets(None, _minutes(6), {("t", 0): 60}, plan_id=2)
    assert store.offset_history(None, [("t", 0)]) == {("t", 0): [(_minutes(0), 1), (_minutes(6), 60)]}
    # the same time twice (a re-recorded snapshot without plan): one row
    store.record_offsets(None, _minutes(6), {("t", 0): 61})
    assert store.offset_history(None, [("t", 0)])[("t", 0)][-1] == (_minutes(6), 61)


def test_history_is_pruned_to_a_window(store: AuditStore) -> None:
    for i in range(6):
        store.record_offsets("c", _minutes(i), {("t", 0): 10 * i}, keep=4)
    assert [e for _, e in store.offset_history("c", [("t", 0)])[("t", 0)]] == [20, 30, 40, 50]
    # a day later: older observations go, except each partition's newest (the next reference)
    store.record_offsets("c", _minutes(60 * 25), {("t", 0): 999, ("t", 9): 1})
    assert [e for _, e in store.offset_history("c", [("t", 0)])[("t", 0)]] == [999]
    store.record_offsets("c", _minutes(60 * 26), {("t", 0): 1_000})
    assert store.offset_history("c", [("t", 9)]) == {("t", 9): [(_minutes(60 * 25), 1)]}
    # a partition no longer observed at all goes after a week
    store.record_offsets("c", _minutes(60 * 24 * 9), {("t", 0): 2_000})
    assert store.offset_history("c", [("t", 9)]) == {}


def test_a_version_4_store_gains_the_offset_history(db_url: str) -> None:
    engine = sa.create_engine(db_url)
    assert migrate(engine, target=4) == 4
    with engine.connect() as conn:
        assert not sa.inspect(conn).has_table("offset_history")
    engine.dispose()
    with AuditStore(db_url) as store:
        assert store.schema_version == LATEST_VERSION
        store.record_offsets("c", T0, {("t", 0): 3})
        assert store.offset_history("c", [("t", 0)]) == {("t", 0): [(T0, 3)]}


def test_group_positions_come_back_from_the_newest_earlier_snapshot(store: AuditStore) -> None:
    store.record_positions(
        "c", _minutes(0), [("g", "t", 0, 10, 5, "a"), ("h", "t", 0, 1, 0, None)], plan_id=1
    )
    store.record_positions("c", _minutes(1), [("g", "t", 0, 40, 7, "a"), ("g", "t", 1, None, None, "b")], 2)
    got = store.previous_positions("c", ["g", "h", "nobody"], before=_minutes(1))
    assert got == {"g": (_minutes(0), {("t", 0): (10, 5, "a")}), "h": (_minutes(0), {("t", 0): (1, 0, None)})}
    later = store.previous_positions("c", ["g"], before=_minutes(2))
    assert later == {"g": (_minutes(1), {("t", 0): (40, 7, "a"), ("t", 1): (None, None, "b")})}
    assert store.previous_positions("other", ["g"], before=_minutes(2)) == {}
    # a retried snapshot of plan 2 replaces its rows; old ones are pruned to the window
    store.record_positions("c", _minutes(1.5), [("g", "t", 0, 45, 7, "a")], 2)
    assert store.previous_positions("c", ["g"], before=_minutes(2))["g"][1] == {("t", 0): (45, 7, "a")}
    for i in range(12):
        store.record_positions("c", _minutes(10 + i), [("g", "t", 0, i, 1, "a")], keep=3)
    with store._engine.connect() as conn:
        count = conn.execute(sa.text("SELECT count(*) FROM group_offset_history WHERE group_name = 'g'"))
        assert count.scalar() == 3
