"""The audit store on real databases: a SQLite file and PostgreSQL (the tests' own server, scripts/postgres).

PostgreSQL: one fresh database per test session (dropped afterwards), one schema per test
(the ``pg_url`` fixture of ``tests/conftest.py``). Unreachable server: skipped locally, a
failure under CI.
"""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from groups import skewed_orders
from lagassign.core.evaluate import evaluate
from lagassign.core.gate import decide, decide_all
from lagassign.store import (
    LATEST_VERSION,
    MIGRATIONS,
    AuditStore,
    PlanNotFoundError,
    StalePlanError,
    StoreError,
    StoreNotFoundError,
    metadata,
    migrate,
    resolve_url,
)
from lagassign.store.migrations.runner import schema_version_t

T0 = datetime(2026, 5, 1, 6, 0, tzinfo=UTC)

CASE = skewed_orders([3_000_000_000, 2_500_000_000, 100, 392_358])
# Mixed subscriptions (constrained-sticky refuses) and a partition nobody owns (current leaves it).
MIXED_CASE = {
    "group": "mixed",
    "auto_offset_reset": "earliest",
    "members": [
        {"id": "A", "topics": ["a", "b"], "owned": [["a", 0]]},
        {"id": "B", "topics": ["a"], "owned": [["a", 1]]},
    ],
    "partitions": [
        {"topic": "a", "partition": 0, "lag": 10},
        {"topic": "a", "partition": 1, "lag": 20},
        {"topic": "b", "partition": 0, "begin": 0, "end": 900, "committed": None},
    ],
}


def _planned(
    store: AuditStore, case: dict[str, Any] = CASE, snapshot_at: datetime = T0, **gate: Any
) -> tuple[int, dict[str, Any]]:
    """A plan with the case evaluated by the real strategies and the gate's decision recorded."""
    plan_id = store.start_plan("scheduled", snapshot_at=snapshot_at)
    evaluation = evaluate(case)
    store.record_evaluations(plan_id, [evaluation])
    store.record_decision(plan_id, decide(evaluation, **gate))
    return plan_id, evaluation


def _chosen(evaluation: dict[str, Any], strategy: str) -> dict[str, Any]:
    return next(r for r in evaluation["results"] if r["strategy"] == strategy)


# ---------------------------------------------------------------------------------- schema


def test_fresh_store_has_the_latest_schema_matching_the_runtime_tables(
    store: AuditStore, db_url: str
) -> None:
    assert store.schema_version == LATEST_VERSION == MIGRATIONS[-1][0]
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            versions = conn.execute(sa.text("SELECT version FROM schema_version ORDER BY version")).scalars()
            assert list(versions) == [m[0] for m in MIGRATIONS]
            inspector = sa.inspect(conn)
            tables = inspector.get_table_names()
            reflected = {t: {c["name"] for c in inspector.get_columns(t)} for t in tables}
    finally:
        engine.dispose()
    declared = [*metadata.sorted_tables, schema_version_t]
    expected = {t.name: {c.name for c in t.columns} for t in declared}
    assert reflected == expected


def test_reopening_is_idempotent_and_keeps_data(store: AuditStore, db_url: str) -> None:
    plan_id = store.start_plan("manual", "alice")
    with AuditStore(db_url) as again:
        assert again.schema_version == LATEST_VERSION
        assert again.get_plan(plan_id)["triggered_by"] == "alice"
    engine = sa.create_engine(db_url)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM schema_version")).scalar() == len(MIGRATIONS)
    engine.dispose()


def _older_database(db_url: str, version: int, *rows: tuple[str, dict[str, Any]]) -> list[str]:
    """A database migrated only up to ``version``, as an older release left it, holding ``rows``
    ((table, column values), inserted by name: the runtime tables have columns it lacks);
    returns its tables."""
    engine = sa.create_engine(db_url)
    try:
        assert migrate(engine, target=version) == version
        with engine.begin() as conn:
            for table, values in rows:
                conn.execute(sa.insert(sa.table(table, *map(sa.column, values))).values(values))
            return sa.inspect(conn).get_table_names()
    finally:
        engine.dispose()


def test_migrates_a_version_1_database(db_url: str) -> None:
    plan = {"created_at": datetime(2026, 1, 2, 3, 4, 5), "status": "succeeded", "trigger": "manual"}
    tables = _older_database(db_url, 1, ("plans", {**plan, "triggered_by": "bob"}))
    assert "publications" not in tables
    with AuditStore(db_url) as store:
        assert store.schema_version == LATEST_VERSION
        old = store.list_plans()
        when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
        assert [(p["triggered_by"], p["created_at"]) for p in old] == [("bob", when)]
        plan_id, _ = _planned(store)
        pub = store.mark_publication_pending(plan_id, "orders")
        assert pub["version"] == 1 and pub["plan_id"] == plan_id != old[0]["id"]


def test_refuses_a_database_newer_than_the_code(store: AuditStore, db_url: str) -> None:
    engine = sa.create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO schema_version (version, description, applied_at) "
                "VALUES (:v, 'from the future', :t)"
            ),
            {"v": LATEST_VERSION + 1, "t": T0},
        )
    engine.dispose()
    with pytest.raises(StoreError, match=f"schema is version {LATEST_VERSION + 1}, newer"):
        AuditStore(db_url)


def test_readers_do_not_create_a_store(db_url: str) -> None:
    with pytest.raises(StoreNotFoundError, match="no lagassign audit store"):
        AuditStore(db_url, create=False)
    engine = sa.create_engine(db_url)
    try:
        if engine.dialect.name == "sqlite":
            assert not Path(engine.url.database).exists()
        else:
            with engine.connect() as conn:
                assert sa.inspect(conn).get_table_names() == []
    finally:
        engine.dispose()


# ----------------------------------------------------------------------------------- plans


def test_plan_roundtrip(store: AuditStore) -> None:
    snap = datetime(2026, 5, 1, 8, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    plan_id = store.start_plan(
        "manual",
        triggered_by="alice",
        dag_id="lagassign_rebalance",
        run_id="manual__1",
        parameters={"groups": ["orders"], "threshold": 1.2, "apply": False},
        snapshot_uri="s3://bucket/snapshots/1",
        snapshot_at=snap,
    )
    plan = store.get_plan(plan_id)
    assert plan["id"] == plan_id and plan["status"] == "running" and plan["finished_at"] is None
    assert (plan["trigger"], plan["triggered_by"]) == ("manual", "alice")
    assert (plan["dag_id"], plan["run_id"]) == ("lagassign_rebalance", "manual__1")
    assert plan["parameters"] == {"groups": ["orders"], "threshold": 1.2, "apply": False}
    assert plan["snapshot_uri"] == "s3://bucket/snapshots/1"
    assert plan["snapshot_at"] == snap and plan["snapshot_at"].tzinfo == UTC
    assert plan["created_at"].tzinfo == UTC
    assert abs(plan["created_at"] - datetime.now(UTC)) < timedelta(minutes=1)
    assert plan["groups"] == []


def test_naive_datetimes_are_taken_as_utc(store: AuditStore) -> None:
    plan_id = store.start_plan("scheduled", snapshot_at=datetime(2026, 5, 1, 6, 0))
    assert store.get_plan(plan_id)["snapshot_at"] == T0


def test_start_plan_is_idempotent_per_dag_run(store: AuditStore) -> None:
    a = store.start_plan("scheduled", dag_id="lagassign_daily", run_id="scheduled__2026-05-01")
    assert store.start_plan("scheduled", dag_id="lagassign_daily", run_id="scheduled__2026-05-01") == a
    b = store.start_plan("scheduled", dag_id="lagassign_daily", run_id="scheduled__2026-05-02")
    c, d = store.start_plan("manual"), store.start_plan("manual")
    assert len({a, b, c, d}) == 4


def test_unknown_trigger_is_refused(store: AuditStore) -> None:
    with pytest.raises(StoreError, match="trigger must be one of scheduled, manual"):
        store.start_plan("cron")
    assert store.list_plans() == []


def test_secret_looking_parameters_are_redacted(store: AuditStore) -> None:
    params = {
        "threshold": 1.1,
        "kafka": {
            "sasl.password": "hunter2",
            "bootstrap": "k:9092",
            "sasl.jaas.config": "x required password=y",
        },
        "api_key": "abc",
        "accounts": [{"token": "t"}],
        "passes": None,
        "when": date(2026, 5, 1),
    }
    plan = store.get_plan(store.start_plan("manual", parameters=params))
    assert plan["parameters"] == {
        "threshold": 1.1,
        "kafka": {"sasl.password": "***", "bootstrap": "k:9092", "sasl.jaas.config": "***"},
        "api_key": "***",
        "accounts": [{"token": "***"}],
        "passes": None,
        "when": "2026-05-01",
    }


def test_finish_plan(store: AuditStore) -> None:
    ok, bad = store.start_plan("scheduled"), store.start_plan("scheduled")
    store.finish_plan(ok, "succeeded")
    store.finish_plan(bad, "failed", error="snapshot: coordinator not available")
    assert store.get_plan(ok)["status"] == "succeeded" and store.get_plan(ok)["finished_at"] is not None
    failed = store.get_plan(bad)
    assert (failed["status"], failed["error"]) == ("failed", "snapshot: coordinator not available")
    with pytest.raises(StoreError, match="status must be one of succeeded, failed"):
        store.finish_plan(ok, "done")
    with pytest.raises(PlanNotFoundError, match="no plan 999"):
        store.finish_plan(999, "succeeded")


def test_unknown_plan_is_a_clear_error(store: AuditStore) -> None:
    with pytest.raises(PlanNotFoundError, match="no plan 4242 in the audit store"):
        store.get_plan(4242)
    with pytest.raises(PlanNotFoundError):
        store.record_evaluations(4242, [evaluate(CASE)])
    with pytest.raises(PlanNotFoundError):
        store.record_decision(4242, decide(evaluate(CASE)))


def test_list_plans_newest_first_with_filters_and_counts(store: AuditStore) -> None:
    days = [store.start_plan("scheduled", created_at=T0 + timedelta(days=i)) for i in range(3)]
    evaluation = evaluate(CASE)
    store.record_evaluations(days[1], [evaluation, evaluate(MIXED_CASE)])
    store.record_decisions(days[1], decide_all([evaluation, evaluate(MIXED_CASE)]))
    store.record_evaluations(days[2], [{"group": "mixed", "error": "offsets unreadable"}])
    assert [p["id"] for p in store.list_plans()] == days[::-1]
    assert [p["id"] for p in store.list_plans(limit=2)] == days[:0:-1]
    assert [p["id"] for p in store.list_plans(group="orders")] == [days[1]]
    assert [p["id"] for p in store.list_plans(group="mixed")] == [days[2], days[1]]
    assert store.list_plans(group="nobody") == []
    assert [p["id"] for p in store.list_plans(since=date(2026, 5, 2))] == [days[2], days[1]]
    assert [p["id"] for p in store.list_plans(until=date(2026, 5, 2))] == [days[1], days[0]]
    assert [p["id"] for p in store.list_plans(until=T0 + timedelta(days=1))] == [days[1], days[0]]
    assert [p["id"] for p in store.list_plans(until=T0 + timedelta(days=1, seconds=-1))] == [days[0]]
    between = store.list_plans(since=T0 + timedelta(hours=1), until=date(2026, 5, 2))
    assert [p["id"] for p in between] == [days[1]]
    counts = {p["id"]: (p["groups"], p["go"], p["published"]) for p in store.list_plans()}
    assert counts == {days[0]: (0, 0, 0), days[1]: (2, 2, 0), days[2]: (1, 0, 0)}


# ------------------------------------------------------------------ evaluations, decisions


def test_evaluations_come_back_in_evaluate_group_shape(store: AuditStore) -> None:
    plan_id = store.start_plan("scheduled")
    evaluations = [evaluate(CASE), evaluate(MIXED_CASE)]
    refused = _chosen(evaluations[1], "constrained-sticky")
    assert "refused" in refused and "unassigned" in _chosen(evaluations[1], "current")
    assert _chosen(evaluations[0], "current")["metrics"]["max_lag"] > 2**32  # BIGINT, not INTEGER
    assert store.record_evaluations(plan_id, evaluations) == 2
    groups = store.get_plan(plan_id)["groups"]
    assert [g["group"] for g in groups] == ["mixed", "orders"]
    for g, original in zip(groups, evaluations[::-1], strict=True):
        assert {k: g[k] for k in original} == original
        assert g["decision"] is None and g["publications"] == [] and g["error"] is None


def test_re_recording_a_group_replaces_it(store: AuditStore) -> None:
    plan_id = store.start_plan("scheduled")
    first = evaluate(CASE)
    store.record_evaluations(plan_id, [first])
    second = evaluate(CASE, ["lag", "current"])
    store.record_evaluations(plan_id, [second])
    (group,) = store.get_plan(plan_id)["groups"]
    assert [r["strategy"] for r in group["results"]] == ["lag", "current"]


def test_a_group_that_could_not_be_evaluated_is_recorded(store: AuditStore) -> None:
    plan_id = store.start_plan("scheduled")
    store.record_evaluations(plan_id, [{"group": "broken", "error": "coordinator not available"}])
    (group,) = store.get_plan(plan_id)["groups"]
    assert (group["group"], group["error"], group["results"]) == ("broken", "coordinator not available", [])


def test_decisions_are_recorded_also_when_nothing_goes_on(store: AuditStore) -> None:
    plan_id = store.start_plan("scheduled")
    evaluations = [evaluate(CASE), evaluate(MIXED_CASE)]
    decisions = decide_all(evaluations, threshold=3.0, max_moves=5)
    store.record_evaluations(plan_id, evaluations)
    assert store.record_decisions(plan_id, decisions) == 2
    recorded = {g["group"]: g["decision"] for g in store.get_plan(plan_id)["groups"]}
    for d in decisions:
        got = recorded[d.group]
        assert got["decided_at"].tzinfo == UTC
        assert got["outcome"] is None  # set by the publish step, not by the gate
        assert {k: v for k, v in got.items() if k not in ("decided_at", "outcome")} == d.to_dict()
    assert recorded["orders"]["go"] is False and "≤ threshold 3.00" in recorded["orders"]["reason"]
    assert recorded["mixed"]["go"] is True and "unconsumed" in recorded["mixed"]["reason"]
    store.record_decision(plan_id, {**decisions[0].to_dict(), "reason": "overridden"})
    assert store.get_plan(plan_id)["groups"][1]["decision"]["reason"] == "overridden"


def test_a_plan_without_its_evaluations_keeps_decisions_and_publications(store: AuditStore) -> None:
    plan_id = store.start_plan("manual", snapshot_at=T0)
    evaluations = [evaluate(CASE), evaluate(MIXED_CASE)]
    store.record_evaluations(plan_id, evaluations)
    store.record_decisions(plan_id, decide_all(evaluations))
    pub = store.mark_publication_pending(plan_id, "orders")
    store.mark_published("orders", pub["version"])
    full, light = store.get_plan(plan_id), store.get_plan(plan_id, evaluations=False)
    assert all(g["results"] for g in full["groups"])
    assert all(g["results"] == [] for g in light["groups"])
    drop = ("results",)
    assert [{k: v for k, v in g.items() if k not in drop} for g in light["groups"]] == [
        {k: v for k, v in g.items() if k not in drop} for g in full["groups"]
    ]


def test_the_publish_outcome_is_recorded_per_group(store: AuditStore) -> None:
    plan_id = store.start_plan("manual")
    evaluations = [evaluate(CASE)]
    store.record_evaluations(plan_id, evaluations)
    store.record_decisions(plan_id, decide_all(evaluations))
    store.record_outcome(plan_id, "orders", "skipped: group changed since the snapshot (member c9 joined)")
    (group,) = store.get_plan(plan_id)["groups"]
    assert group["decision"]["outcome"].startswith("skipped: group changed")
    with pytest.raises(StoreError, match="no gate decision"):
        store.record_outcome(plan_id, "unknown-group", "published v1")


def test_hostile_group_names_are_plain_data(store: AuditStore) -> None:
    name = "g'; DROP TABLE plans; --\"x"
    plan_id, _ = _planned(store, {**CASE, "group": name})
    assert [p["id"] for p in store.list_plans(group=name)] == [plan_id]
    assert store.get_plan(plan_id)["groups"][0]["group"] == name
    assert store.mark_publication_pending(plan_id, name)["group"] == name


# ---------------------------------------------------------------------------- publications


def test_publication_flow(store: AuditStore) -> None:
    plan_id, evaluation = _planned(store)
    decision = store.get_plan(plan_id)["groups"][0]["decision"]
    assert decision["go"]
    pub = store.mark_publication_pending(plan_id, "orders")
    assert (pub["group"], pub["version"], pub["state"], pub["forced"]) == ("orders", 1, "pending", False)
    assert pub["strategy"] == decision["chosen"]
    assert pub["assignment"] == _chosen(evaluation, decision["chosen"])["assignment"]
    assert pub["snapshot_at"] == T0 and pub["published_at"] is None
    assert [p["id"] for p in store.pending_publications()] == [pub["id"]]
    assert store.pending_publications(group="other") == []
    assert store.last_published("orders") is None

    done = store.mark_published("orders", 1, published_at=T0 + timedelta(minutes=5))
    assert (done["state"], done["published_at"]) == ("published", T0 + timedelta(minutes=5))
    assert store.mark_published("orders", 1)["published_at"] == T0 + timedelta(minutes=5)  # idempotent
    assert store.pending_publications() == []
    assert store.last_published("orders")["id"] == pub["id"]

    later, _ = _planned(store, snapshot_at=T0 + timedelta(days=1))
    second = store.mark_publication_pending(later, "orders")
    assert second["version"] == 2
    store.mark_published("orders", 2)
    assert store.last_published("orders")["plan_id"] == later
    assert [p["published"] for p in store.list_plans()] == [1, 1]
    assert [p["version"] for p in store.get_plan(later)["groups"][0]["publications"]] == [2]


def test_pending_is_idempotent_per_plan_and_group(store: AuditStore) -> None:
    plan_id, _ = _planned(store)
    first = store.mark_publication_pending(plan_id, "orders")
    assert store.mark_publication_pending(plan_id, "orders") == first
    store.mark_published("orders", first["version"])
    again = store.mark_publication_pending(plan_id, "orders")
    assert (again["id"], again["state"]) == (first["id"], "published")


def test_nothing_is_published_without_a_go_decision_unless_forced(store: AuditStore) -> None:
    bare = store.start_plan("manual", snapshot_at=T0)
    store.record_evaluations(bare, [evaluate(CASE)])
    with pytest.raises(StoreError, match="no gate decision is recorded"):
        store.mark_publication_pending(bare, "orders")
    stopped, _ = _planned(store, threshold=5.0)
    with pytest.raises(StoreError, match="the gate said stop"):
        store.mark_publication_pending(stopped, "orders")
    assert store.pending_publications() == []
    forced = store.mark_publication_pending(stopped, "orders", strategy="lag", force=True)
    assert forced["forced"] is True and forced["strategy"] == "lag"
    with pytest.raises(StoreError, match="no evaluated assignment of nonesuch"):
        store.mark_publication_pending(bare, "orders", strategy="nonesuch", force=True)


def test_a_plan_from_an_older_snapshot_is_refused_unless_forced(store: AuditStore) -> None:
    new, _ = _planned(store, snapshot_at=T0 + timedelta(hours=1))
    old, _ = _planned(store, snapshot_at=T0)
    store.mark_publication_pending(new, "orders")  # pending counts: it may be on the topic already
    with pytest.raises(StalePlanError, match="older than that of version 1"):
        store.mark_publication_pending(old, "orders")
    store.mark_published("orders", 1)
    with pytest.raises(StalePlanError):
        store.mark_publication_pending(old, "orders")
    forced = store.mark_publication_pending(old, "orders", force=True)
    assert (forced["version"], forced["forced"]) == (2, True)
    same, _ = _planned(store, snapshot_at=T0 + timedelta(hours=1))
    assert store.mark_publication_pending(same, "orders")["version"] == 3  # same snapshot is not older


def test_a_planner_overtaken_between_deciding_and_reserving_records_why_and_does_not_fail(
    store: AuditStore,
) -> None:
    """Two racing planners both decided "publish" from version 0; the one with the newer snapshot
    reserved first. The other's reservation is refused as stale: recorded, no exception."""
    from lagassign.core.publishing import PUBLISH, Publication, PublishFacts
    from lagassign.kafka.applier import apply_publication

    new, _ = _planned(store, snapshot_at=T0 + timedelta(seconds=1))
    old, _ = _planned(store, snapshot_at=T0)
    store.mark_publication_pending(new, "orders")
    members = {"C0": [["t", 0]], "C1": [["t", 1], ["t", 2], ["t", 3]]}
    # group_members=(): the run read the group and found no protocol member (no need to ask Kafka)
    facts = PublishFacts("orders", "lag-optimal", members, plan_id=old, snapshot_at=T0, group_members=())
    # The topic is never reached: the reservation refuses first (a real PlanStore would need a broker).
    outcome = apply_publication(store, object(), old, facts, Publication(PUBLISH, "go", 1))
    assert (outcome.published, outcome.action) == (False, "refuse")
    assert "older than that of version 1" in outcome.reason
    assert [p["version"] for p in store.pending_publications()] == [1]


def test_a_failed_publication_does_not_block_and_versions_only_grow(store: AuditStore) -> None:
    new, _ = _planned(store, snapshot_at=T0 + timedelta(hours=1))
    old, _ = _planned(store, snapshot_at=T0)
    first = store.mark_publication_pending(new, "orders")
    failed = store.mark_publication_failed("orders", first["version"], "broker said no")
    assert (failed["state"], failed["error"]) == ("failed", "broker said no")
    assert store.pending_publications() == []
    # The failed one never reached the topic: the older snapshot is no longer stale, and the
    # retry of the same plan gets a new version; numbers are never reused.
    assert store.mark_publication_pending(old, "orders")["version"] == 2
    assert store.mark_publication_pending(new, "orders")["version"] == 3
    floor, _ = _planned(store, snapshot_at=T0 + timedelta(hours=2))
    assert store.mark_publication_pending(floor, "orders", min_version=40)["version"] == 40
    other, _ = _planned(store, {**CASE, "group": "payments"})
    assert store.mark_publication_pending(other, "payments")["version"] == 1
    pending = [(p["group"], p["version"]) for p in store.pending_publications()]
    assert pending == [("orders", 2), ("orders", 3), ("orders", 40), ("payments", 1)]


def test_state_transitions(store: AuditStore) -> None:
    plan_id, _ = _planned(store)
    pub = store.mark_publication_pending(plan_id, "orders")
    store.mark_publication_failed("orders", pub["version"], "timeout")
    # Reconciliation found it on the topic after all: the topic is the truth.
    assert store.mark_published("orders", pub["version"])["state"] == "published"
    with pytest.raises(StoreError, match="is published; it cannot become failed"):
        store.mark_publication_failed("orders", pub["version"], "late")
    with pytest.raises(StoreError, match="no publication of version 9 for group orders"):
        store.mark_published("orders", 9)


def test_snapshot_time_is_required_to_publish(store: AuditStore) -> None:
    plan_id = store.start_plan("scheduled")
    evaluation = evaluate(CASE)
    store.record_evaluations(plan_id, [evaluation])
    store.record_decision(plan_id, decide(evaluation))
    with pytest.raises(StoreError, match="snapshot time unknown"):
        store.mark_publication_pending(plan_id, "orders")
    store.set_snapshot(plan_id, "/snapshots/7", T0)
    assert store.mark_publication_pending(plan_id, "orders")["snapshot_at"] == T0


def test_concurrent_publications_of_one_group_get_distinct_versions(store: AuditStore, db_url: str) -> None:
    plans = [_planned(store, snapshot_at=T0)[0] for _ in range(4)]
    barrier = threading.Barrier(len(plans))
    versions: list[int] = []
    errors: list[BaseException] = []

    def publish(plan_id: int) -> None:
        with AuditStore(db_url) as mine:
            barrier.wait()
            try:
                versions.append(mine.mark_publication_pending(plan_id, "orders")["version"])
            except BaseException as exc:  # collected and asserted below
                errors.append(exc)

    threads = [threading.Thread(target=publish, args=(p,)) for p in plans]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == [] and sorted(versions) == [1, 2, 3, 4]


# ------------------------------------------------------------------------------ opening


def test_url_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LAGASSIGN_DB_URL", "postgresql://db.example/audit")
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "af"))
    assert resolve_url("sqlite:///x.db") == "sqlite:///x.db"
    assert resolve_url() == "postgresql://db.example/audit"
    monkeypatch.delenv("LAGASSIGN_DB_URL")
    assert resolve_url() == f"sqlite:///{tmp_path / 'af' / 'lagassign.db'}"
    monkeypatch.delenv("AIRFLOW_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert resolve_url() == f"sqlite:///{tmp_path / 'home' / 'airflow' / 'lagassign.db'}"


def test_default_store_is_a_sqlite_file_under_airflow_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("LAGASSIGN_DB_URL", raising=False)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))
    with AuditStore() as store:
        assert store.dialect == "sqlite"
        store.start_plan("manual")
    assert (tmp_path / "airflow-home" / "lagassign.db").is_file()


def test_postgres_by_environment_url(monkeypatch: pytest.MonkeyPatch, pg_database: sa.URL) -> None:
    bare = pg_database.set(drivername="postgresql")  # SQLAlchemy 2.1 would pick psycopg 3 for this
    monkeypatch.setenv("LAGASSIGN_DB_URL", bare.render_as_string(hide_password=False))
    with AuditStore() as store:
        assert store.dialect == "postgresql"
        plan_id = store.start_plan("manual", "carol")
        assert store.get_plan(plan_id)["triggered_by"] == "carol"


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("not a url", "not a valid database URL"),
        ("nosuchdb://x/y", "unsupported database URL scheme 'nosuchdb'"),
        (
            "postgresql+psycopg2://u:s3cr3t-pw@127.0.0.1:1/db",
            "cannot open audit store postgresql+psycopg2://u:***@",
        ),
    ],
)
def test_bad_urls_are_one_line_without_the_password(url: str, fragment: str) -> None:
    with pytest.raises(StoreError) as info:
        AuditStore(url)
    message = str(info.value)
    assert fragment in message and "s3cr3t" not in message and "\n" not in message


def test_group_type_and_assignor_round_trip_and_older_groups_have_none(store: AuditStore) -> None:
    """What the cluster runs per group (from the snapshot) is kept; groups without it (a case
    file) say nothing, and the evaluation comes back with it."""
    from lagassign.core.results import GroupEvaluation

    plan_id = store.start_plan("scheduled")
    on_cluster = {**evaluate(CASE), "group_type": "consumer", "assignor": "uniform"}
    store.record_evaluations(
        plan_id,
        [
            on_cluster,
            evaluate(MIXED_CASE),
            {"group": "broken", "error": "offsets unreadable", "group_type": "classic", "assignor": "range"},
        ],
    )
    groups = {g["group"]: g for g in store.get_plan(plan_id)["groups"]}
    assert (groups["orders"]["group_type"], groups["orders"]["assignor"]) == ("consumer", "uniform")
    assert (groups["mixed"]["group_type"], groups["mixed"]["assignor"]) == (None, None)
    assert (groups["broken"]["group_type"], groups["broken"]["assignor"]) == ("classic", "range")
    back = {ev.group: ev for ev in store.evaluations(plan_id)}
    assert back["orders"] == GroupEvaluation.from_dict(on_cluster)
    assert back["orders"].to_dict() == on_cluster
    assert "group_type" not in back["mixed"].to_dict()


def test_groups_recorded_before_migration_7_read_without_group_type(db_url: str) -> None:
    plan = {
        "id": 1,
        "created_at": datetime(2026, 1, 2, 3, 4, 5),
        "status": "succeeded",
        "trigger": "scheduled",
    }
    _older_database(
        db_url, 6, ("plans", plan), ("plan_groups", {"plan_id": 1, "group_name": "old", "members": 3})
    )
    with AuditStore(db_url) as store:
        assert store.schema_version == LATEST_VERSION >= 7
        (group,) = store.get_plan(1)["groups"]
        assert (group["group"], group["members"], group["group_type"], group["assignor"]) == (
            "old",
            3,
            None,
            None,
        )
