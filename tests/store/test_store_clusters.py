"""The audit store keyed by Kafka cluster, on real SQLite and PostgreSQL: one version line per
(cluster, group), the migration of stores recorded before (rows traced to their cluster, the rest
unknown until claimed), and conflicts that say what to do."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from groups import skewed_orders
from lagassign.core.evaluate import evaluate
from lagassign.core.gate import decide
from lagassign.store import LATEST_VERSION, AuditStore, StoreError, VersionConflictError, migrate

T0 = datetime(2026, 5, 1, 6, 0, tzinfo=UTC)
CASE = skewed_orders([3_000_000_000, 2_500_000_000, 100, 392_358])
A, B = "lkc-A1b2C3d4E5f6G7h8I9j0", "lkc-Z9y8X7w6V5u4T3s2R1q0"


def _planned(store: AuditStore, cluster: str | None, snapshot_at: datetime = T0) -> int:
    """A plan of ``cluster`` whose gate let the orders group through."""
    plan_id = store.start_plan("scheduled", snapshot_at=snapshot_at, cluster=cluster)
    evaluation = evaluate(CASE)
    store.record_evaluations(plan_id, [evaluation])
    store.record_decision(plan_id, decide(evaluation))
    return plan_id


# ------------------------------------------------------------------------- version lines


def test_the_same_group_on_two_clusters_has_two_version_lines(store: AuditStore) -> None:
    on_a, on_b = _planned(store, A), _planned(store, B)
    first = store.mark_publication_pending(on_a, "orders", expected_version=0)
    store.mark_published("orders", 1, cluster=A)
    # What used to be refused forever ("version 1 ... was published by plan 1 since this run
    # saw version 0 in force"): the first plan for the group on the other cluster.
    other = store.mark_publication_pending(on_b, "orders", expected_version=0)
    assert (first["cluster"], first["version"]) == (A, 1)
    assert (other["cluster"], other["version"]) == (B, 1)
    assert store.ledger_state(["orders"], A)["orders"][1] == 1
    assert store.ledger_state(["orders"], B)["orders"][0]["state"] == "pending"
    assert [p["cluster"] for p in store.pending_publications(cluster=B)] == [B]
    assert store.pending_publications(cluster=A) == []
    assert store.last_published("orders", A)["plan_id"] == on_a
    assert store.last_published("orders", B) is None
    # naming a publication by group and version alone is refused where two clusters hold one
    with pytest.raises(StoreError, match=r"version 1 on several clusters \(lkc-A.*, lkc-Z.*\)"):
        store.publication("orders", 1)
    assert store.publication("orders", 1, B)["plan_id"] == on_b
    store.mark_published("orders", 1, cluster=B)
    assert store.publication("orders", 1, B)["state"] == "published"
    second = store.mark_publication_pending(_planned(store, A, T0 + timedelta(hours=1)), "orders", None)
    assert (second["cluster"], second["version"]) == (A, 2)


def test_plans_are_listed_and_narrowed_by_cluster(store: AuditStore) -> None:
    on_a, on_b, unknown = _planned(store, A), _planned(store, B), _planned(store, None)
    listed = {p["id"]: p["cluster"] for p in store.list_plans()}
    assert listed == {on_a: A, on_b: B, unknown: ""}
    assert [p["id"] for p in store.list_plans(cluster=B)] == [on_b]
    assert [p["id"] for p in store.list_plans(cluster="")] == [unknown]
    history = store.group_history("orders", cluster=A)
    assert [(r["plan_id"], r["cluster"]) for r in history] == [(on_a, A)]
    assert {c["cluster"]: c["plans"] for c in store.clusters()} == {"": 1, A: 1, B: 1}
    assert store.get_plan(on_b)["cluster"] == B


def test_what_changed_is_told_against_the_previous_plan_of_the_same_cluster(store: AuditStore) -> None:
    on_a = _planned(store, A)
    _planned(store, B)
    again_a = _planned(store, A, T0 + timedelta(hours=1))
    assert {g: pid for g, (pid, _) in store.previous_groups(again_a, ["orders"]).items()} == {"orders": on_a}


def test_a_plan_keeps_its_cluster_once_it_has_publications(store: AuditStore) -> None:
    plan_id = _planned(store, None)
    store.set_cluster(plan_id, A)
    store.mark_publication_pending(plan_id, "orders")
    store.set_cluster(plan_id, A)  # the same: nothing to do
    with pytest.raises(StoreError, match=f"plan {plan_id} has publications on cluster {A}"):
        store.set_cluster(plan_id, B)


# ----------------------------------------------------------------------------- conflicts


def test_a_real_conflict_says_what_to_do(store: AuditStore) -> None:
    winner, loser = _planned(store, A), _planned(store, A)
    store.mark_publication_pending(winner, "orders", expected_version=0)
    with pytest.raises(VersionConflictError) as pending:
        store.mark_publication_pending(loser, "orders", expected_version=0)
    assert (pending.value.version, pending.value.state, pending.value.plan_id) == (1, "pending", winner)
    assert f"version 1 of group orders on cluster {A} is being published by plan {winner}" in str(
        pending.value
    )
    assert "let that run finish, then plan the group again" in str(pending.value)
    store.mark_published("orders", 1, cluster=A)
    with pytest.raises(VersionConflictError) as published:
        store.mark_publication_pending(loser, "orders", expected_version=0)
    text = str(published.value)
    assert f"version 1 of group orders on cluster {A} was published by plan {winner} after this run " in text
    assert "saw no plan in force" in text and "plan the group again from a new snapshot" in text
    third = _planned(store, A, T0 + timedelta(hours=2))
    store.mark_publication_pending(third, "orders", expected_version=1)
    store.mark_published("orders", 2, cluster=A)
    with pytest.raises(VersionConflictError, match="or roll it back to version 1 if plan"):
        store.mark_publication_pending(loser, "orders", expected_version=1, force=True)  # even forced


def test_published_versions_the_topic_no_longer_holds_are_no_rivals(store: AuditStore) -> None:
    """A plans topic created again (or a cluster rebuilt behind the same key) holds nothing of the
    versions the ledger recorded as published: told so, the ledger lets the next version through.
    A pending reservation still blocks: it may be on its way to the topic."""
    old = _planned(store, A)
    store.mark_publication_pending(old, "orders", expected_version=0)
    store.mark_published("orders", 1, cluster=A)
    new = _planned(store, A, T0 + timedelta(hours=1))
    with pytest.raises(VersionConflictError):
        store.mark_publication_pending(new, "orders", expected_version=0)
    again = store.mark_publication_pending(new, "orders", expected_version=0, topic_version=0)
    assert again["version"] == 2
    late = _planned(store, A, T0 + timedelta(hours=2))
    with pytest.raises(VersionConflictError, match="is being published"):
        store.mark_publication_pending(late, "orders", expected_version=0, topic_version=0)


# ------------------------------------------------------------------------- claiming plans


def test_plans_of_unknown_cluster_are_claimed_for_one(store: AuditStore) -> None:
    known = _planned(store, A)
    store.mark_publication_pending(known, "orders")
    store.mark_published("orders", 1, cluster=A)
    old_1, old_2 = _planned(store, None), _planned(store, None)
    store.mark_publication_pending(old_1, "orders")
    store.mark_published("orders", 1, cluster="")
    # version 1 of orders is on cluster A already: claiming old_1 for A would make two of it
    with pytest.raises(StoreError, match=f"cannot claim plan {old_1}: version 1 of group orders"):
        store.claim_cluster(A)
    assert store.get_plan(old_2)["cluster"] == ""  # refused as a whole: nothing moved
    with pytest.raises(StoreError, match=f"plan {known} is recorded on cluster {A} already"):
        store.claim_cluster(B, [known])
    done = store.claim_cluster(B, [old_1])
    assert done == {"cluster": B, "plans": [old_1], "publications": 1}
    assert store.publication("orders", 1, B)["plan_id"] == old_1
    assert store.claim_cluster(A) == {"cluster": A, "plans": [old_2], "publications": 0}
    assert store.claim_cluster(A)["plans"] == []
    with pytest.raises(StoreError, match="name the cluster"):
        store.claim_cluster("  ")


# ------------------------------------------------------------------------------ migration


def _manifest(folder: Path, cluster_id: str | None, bootstrap: str) -> str:
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(
        json.dumps({"cluster_id": cluster_id, "bootstrap_servers": bootstrap})
    )
    return str(folder)


def test_migration_8_traces_recorded_plans_to_their_cluster_or_marks_them_unknown(
    db_url: str, tmp_path: Path
) -> None:
    engine = sa.create_engine(db_url)
    assert migrate(engine, target=7) == 7
    md = sa.MetaData()  # the tables as version 7 left them
    md.reflect(engine, only=["plans", "publications", "offset_history"])
    plans, pubs, history = (md.tables[t] for t in ("plans", "publications", "offset_history"))
    when = datetime(2026, 1, 2, 3, 4, 5)
    rows: list[tuple[int, Any, Any]] = [
        (1, _manifest(tmp_path / "s1", A, "a1:9092"), {"threshold": 1.1}),  # the snapshot says
        (2, _manifest(tmp_path / "s2", "MkU3OEVBNTctOEUyRi00", "127.0.0.1:19092"), None),  # noida
        (3, str(tmp_path / "gone"), None),  # snapshot cleaned up; its offset history says B
        (4, None, {"action": "publish", "reviewed_plan": 1, "group": "orders"}),  # review of 1
        (5, None, {"action": "rollback", "group": "orders", "version": 2}),  # back to plan 2's v2
        (6, None, {"publish": "plan.json", "group": "payments"}),  # by hand: nothing tells
    ]
    with engine.begin() as conn:
        for pid, uri, params in rows:
            conn.execute(
                sa.insert(plans).values(
                    id=pid,
                    created_at=when,
                    status="succeeded",
                    trigger="manual",
                    parameters=params,
                    snapshot_uri=uri,
                )
            )
        for pid, group, version in [(1, "orders", 1), (2, "orders", 2), (4, "orders", 3), (6, "payments", 1)]:
            conn.execute(
                sa.insert(pubs).values(
                    plan_id=pid,
                    group_name=group,
                    version=version,
                    strategy="lag-optimal",
                    state="published",
                    forced=False,
                    assignment={"C0": [["t", 0]]},
                    snapshot_at=when,
                    created_at=when,
                )
            )
        conn.execute(
            sa.insert(history).values(
                cluster=B, topic="t", partition=0, observed_at=when, end_offset=9, plan_id=3
            )
        )
        if conn.dialect.name == "postgresql":  # ids given above: move the sequence past them
            conn.execute(sa.text("SELECT setval(pg_get_serial_sequence('plans', 'id'), 6)"))
    engine.dispose()
    with AuditStore(db_url) as store:
        assert store.schema_version == LATEST_VERSION >= 8
        clusters = {p["id"]: p["cluster"] for p in store.list_plans()}
        assert clusters == {
            1: A,
            2: "bootstrap:127.0.0.1:19092",
            3: B,
            4: A,
            5: "bootstrap:127.0.0.1:19092",
            6: "",
        }
        assert store.publication("orders", 3)["cluster"] == A
        assert store.publication("payments", 1, "")["plan_id"] == 6
        # each cluster's line goes on from what it holds; B's starts at 1
        assert store.ledger_state(["orders"], A)["orders"][1] == 3
        assert store.ledger_state(["orders"], "bootstrap:127.0.0.1:19092")["orders"][1] == 2
        on_b = _planned(store, B)
        assert store.mark_publication_pending(on_b, "orders", expected_version=0)["version"] == 1
        assert store.claim_cluster(B)["plans"] == [6]
