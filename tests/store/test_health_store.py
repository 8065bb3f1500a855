"""Groups' health in the audit store (store.health): observations pruned to the window, status
series thinned for the chart, last statuses, alerts claimed once; on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from lagassign.store import LATEST_VERSION, AuditStore, migrate

T0 = datetime(2026, 5, 1, 6, 0, tzinfo=UTC)


def _at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def _figures(group: str, status: str = "OK", lag: int = 0) -> dict:
    return {
        "group": group,
        "status": status,
        "reason": "every partition keeps up",
        "total_lag": lag,
        "max_lag": lag,
    }


def test_observations_are_kept_for_the_window_and_per_cluster(store: AuditStore) -> None:
    for m in range(30):
        rows = [("g", "t", 0, 100 + m, 90 + m, 10, "m1"), ("h", "t", 0, 100 + m, None, 0, None)]
        store.record_observation("c1", _at(m), rows, keep=timedelta(minutes=15))
    store.record_observation("c2", _at(29), [("g", "t", 0, 5, 5, 0, None)], keep=timedelta(minutes=15))
    got = store.observations("c1", _at(0))
    assert set(got) == {"g", "h"}
    points = got["g"][("t", 0)]
    assert [p[0] for p in points] == [_at(m) for m in range(14, 30)]  # 15 minutes back, both ends in
    assert points[-1][1:] == (129, 119, 10, "m1")
    assert got["h"][("t", 0)][-1][2] is None  # no commit stays None
    assert store.observations("c1", _at(25), groups=["h"]) == {
        "h": {("t", 0): [(_at(m), 100 + m, None, 0, None) for m in range(25, 30)]}
    }
    assert store.observations("c1", _at(0), groups=[]) == {}
    assert list(store.observations("c2", _at(0))) == ["g"]  # clusters do not mix
    # the same time again (a retried run) replaces that observation
    store.record_observation("c1", _at(29), [("g", "t", 0, 1, 1, 0, None)], keep=timedelta(minutes=15))
    again = store.observations("c1", _at(29))
    assert again == {"g": {("t", 0): [(_at(29), 1, 1, 0, None)]}}


def test_the_status_series_keeps_two_hours_fine_and_three_days_coarse(store: AuditStore) -> None:
    coarse = [store.record_statuses("c", _at(m), [_figures("g", lag=m)]) for m in range(3 * 60)]
    assert coarse[:12] == [True] + [False] * 9 + [True, False]
    series = store.status_series("c", "g")
    times = [r["observed_at"] for r in series]
    # the last two hours minute by minute, before that one point per ten minutes
    assert times[-121:] == [_at(m) for m in range(59, 180)]
    assert times[:-121] == [_at(m) for m in range(0, 59, 10)]
    assert series[-1]["total_lag"] == 179 and series[-1]["status"] == "OK"
    # three days later only the last three days remain
    store.record_statuses("c", _at(3 * 24 * 60 + 100), [_figures("g")])
    assert store.status_series("c", "g")[0]["observed_at"] == _at(100)
    assert store.status_series("c", "g", since=_at(3 * 24 * 60 + 100)) == [store.status_series("c", "g")[-1]]


def test_latest_statuses_and_clusters(store: AuditStore) -> None:
    store.record_statuses("c", _at(0), [_figures("g", "OK"), _figures("h", "STALL", 7)])
    store.record_statuses("c", _at(1), [_figures("g", "STOP", 9)])
    latest = store.latest_statuses("c")
    assert (latest["g"]["status"], latest["g"]["observed_at"]) == ("STOP", _at(1))
    assert (latest["h"]["status"], latest["h"]["total_lag"]) == ("STALL", 7)
    assert store.latest_statuses("other") == {}
    assert store.health_clusters() == [{"cluster": "c", "observed_at": _at(1)}]


def test_last_states_move_only_on_change_and_forget_deleted_groups(store: AuditStore) -> None:
    store.save_states("c", {"g": ("OK",), "h": ("DEAD", "w1")}, _at(0))
    store.save_states("c", {"g": ("OK",), "h": ("DEAD", "w1")}, _at(1))
    store.save_states("c", {"g": ("STOP",), "h": ("DEAD", "w1")}, _at(2))
    assert store.last_states("c") == {"g": ("STOP",), "h": ("DEAD", "w1")}
    assert store.state_since("c") == {"g": _at(2), "h": _at(0)}
    store.save_states("c", {"g": ("STOP",)}, _at(3))  # h was deleted
    assert store.last_states("c") == {"g": ("STOP",)}
    store.save_states("c", {"x": ("OK",)}, _at(4), forget_others=False)
    assert set(store.last_states("c")) == {"g", "x"}


def test_an_alert_is_claimed_once(store: AuditStore) -> None:
    first = store.claim_alert("c", "g", "status", "g@2026-05-01T06:00", "g: OK → STOP", _at(0), ["STOP"])
    assert first is not None
    assert store.claim_alert("c", "g", "status", "g@2026-05-01T06:00", "again", _at(1)) is None
    assert (
        store.claim_alert("other", "g", "status", "g@2026-05-01T06:00", "other cluster", _at(1)) is not None
    )
    failover = store.claim_alert("c", "g", "failover", "plan 7", "g: failover published v2", _at(2))
    assert failover is not None
    store.alert_sent(first, _at(0))
    store.alert_sent(failover, _at(2), error="HTTP 500 from the receiver")
    alerts = store.alerts("c", "g")
    assert [(a["kind"], a["sent_at"], a["error"]) for a in alerts] == [
        ("failover", None, "HTTP 500 from the receiver"),
        ("status", _at(0), None),
    ]
    assert alerts[1]["state"] == ["STOP"] and alerts[1]["group"] == "g"


def test_a_version_8_store_gains_the_health_tables(db_url: str) -> None:
    engine = sa.create_engine(db_url)
    assert migrate(engine, target=8) == 8
    with engine.connect() as conn:
        assert not sa.inspect(conn).has_table("health_groups")
    assert migrate(engine) == LATEST_VERSION >= 9
    with engine.connect() as conn:
        tables = set(sa.inspect(conn).get_table_names())
    assert {"health_partitions", "health_groups", "health_states", "health_alerts"} <= tables
    engine.dispose()
