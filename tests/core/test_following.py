"""The pure rules behind following plans safely: status records and liveness, the handover rule,
membership changes and failover planning, and the publish decision."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from lagassign.core.case import parse_case
from lagassign.core.failover import membership_change, plan_failover
from lagassign.core.handover import Marker, may_start
from lagassign.core.liveness import InstanceStatus, Liveness, StatusRecordError
from lagassign.core.model import TopicPartition as TP
from lagassign.core.publishing import (
    DRY_RUN,
    OFF,
    PUBLISH,
    REFUSE,
    SKIP,
    UNCHANGED,
    LedgerEntry,
    PublishFacts,
    decide_publication,
)

NOW = 1_800_000_000_000


def status(
    instance: str,
    ago_ms: int = 0,
    version: int | None = 1,
    partitions=(),
    group: str = "g",
    timeout_ms: int = 30_000,
    topics=("t",),
) -> InstanceStatus:
    return InstanceStatus(
        group,
        instance,
        NOW - ago_ms,
        version,
        tuple(TP(*p) for p in partitions),
        topics=tuple(topics),
        session_timeout_ms=timeout_ms,
    )


def liveness(*statuses: InstanceStatus, override_ms: int | None = None) -> Liveness:
    table = Liveness(override_ms)
    for s in statuses:
        table.apply(s.group, s.instance, s, NOW)
    return table


# -- status records and liveness ----------------------------------------------------------------


def test_status_record_round_trips_and_rejects_foreign_values():
    s = InstanceStatus(
        "g", "w0", NOW, 3, (TP("t", 1),), (TP("t", 2),), ("t",), 812.5, 140, NOW - 5, 30_000, "eu-1a", "pod-7"
    )
    assert InstanceStatus.from_value(s.to_json()) == s
    for bad in (
        b"not json",
        b'{"format": 2}',
        b'{"format": 1, "group": "g"}',
        b'{"format": 1, "group": "g", "instance": "w", "time_ms": "now"}',
        b'{"format": 1, "group": "g", "instance": "w", "time_ms": 1, "partitions": [["t", -1]]}',
    ):
        with pytest.raises(StatusRecordError):
            InstanceStatus.from_value(bad)


def test_alive_until_silent_for_the_session_timeout_then_dead_with_a_reason():
    table = liveness(status("w0", ago_ms=29_000), status("w1", ago_ms=31_000), status("w2", timeout_ms=5_000))
    assert set(table.alive("g", NOW)) == {"w0", "w2"}
    assert table.departure("g", "w1", NOW).why == "silent for 31 s"
    assert table.departure("g", "w0", NOW) is None
    assert table.departure("g", "w9", NOW).why == "never announced"
    # The watcher's own session timeout overrides what instances announce.
    assert set(liveness(status("w0", ago_ms=29_000), override_ms=10_000).alive("g", NOW)) == set()


def test_a_tombstone_means_closed_and_a_newer_record_brings_the_instance_back():
    table = liveness(status("w0"))
    table.apply("g", "w0", None, NOW + 10)
    assert table.alive("g", NOW) == {} and table.departure("g", "w0", NOW).why == "closed"
    table.apply("g", "w0", status("w0"), NOW + 20)
    assert set(table.alive("g", NOW)) == {"w0"}
    # An older record arriving late does not replace a newer one.
    table.apply("g", "w0", status("w0", ago_ms=60_000), NOW + 30)
    assert set(table.alive("g", NOW)) == {"w0"}
    # The log cleaner drops the records before a tombstone: a tombstone alone means closed too.
    cleaned = liveness()
    cleaned.apply("g", "w1", None, NOW)
    assert cleaned.known("g") == {"w1"} and cleaned.departure("g", "w1", NOW).why == "closed"


# -- the handover rule ----------------------------------------------------------------------------


def _verdict(marker, taker="w1", version=3, alive=("w0", "w1"), others=None):
    others = others if others is not None else {"w0": status("w0", version=2, partitions=[("t", 0)])}
    return may_start(TP("t", 0), marker, taker, version, lambda i: i in alive, others)


def test_marker_round_trip_and_other_tools_metadata_is_no_marker():
    m = Marker("w0", 3, True)
    assert Marker.decode(m.encode()) == m
    assert Marker.decode(None) is None and Marker.decode("") is None
    assert Marker.decode("checkpoint 17") is None and Marker.decode('{"other": 1}') is None


def test_taker_waits_while_the_live_giver_holds_the_partition_under_an_older_version():
    verdict = _verdict(Marker("w0", 2, released=False))
    assert not verdict.go and "w0" in verdict.why


def test_taker_starts_once_the_giver_released_it_under_this_version_or_newer():
    assert _verdict(Marker("w0", 3, released=True)).go
    assert _verdict(Marker("w0", 4, released=True)).go
    # Released under an older version: someone under that version may still claim it.
    assert not _verdict(Marker("w0", 2, released=True)).go


def test_taker_starts_when_the_holder_is_dead():
    verdict = _verdict(Marker("w0", 2, released=False), alive=("w1",), others={})
    assert verdict.go and "dead" in verdict.why


def test_taker_starts_after_a_restart_from_its_own_claim_and_fresh_partitions_at_once():
    assert _verdict(Marker("w1", 2, released=False)).go
    assert _verdict(None).go


def test_when_every_live_instance_runs_the_new_version_and_none_holds_it_nobody_can():
    others = {"w0": status("w0", version=3, partitions=[("t", 5)])}
    assert _verdict(Marker("w0", 2, released=False), others=others).go
    holding = {"w0": status("w0", version=3, partitions=[("t", 0)])}
    assert not _verdict(Marker("w2", 2, released=True), alive=("w0", "w1", "w2"), others=holding).go


# -- membership changes and failover ----------------------------------------------------------------

PLAN = {"w0": [["t", 0], ["t", 3]], "w1": [["t", 1], ["t", 4]], "w2": [["t", 2], ["t", 5]]}


def test_no_change_while_the_live_instances_are_the_plans_and_none_for_groups_without_statuses():
    table = liveness(status("w0"), status("w1"), status("w2"))
    assert membership_change("g", PLAN, 4, table, NOW) is None
    assert membership_change("other", PLAN, 4, table, NOW) is None


def test_a_silent_instance_died_and_a_new_one_joined():
    table = liveness(status("w0"), status("w1", ago_ms=31_000), status("w2"), status("w3"))
    change = membership_change("g", PLAN, 4, table, NOW)
    assert change.died == {"w1": "silent for 31 s"} and change.joined == ("w3",)
    assert change.describe() == "w1 silent for 31 s; w3 joined"


def test_an_instance_that_never_announced_counts_as_dead_only_after_a_session_timeout_of_watching():
    table = liveness(status("w0"), status("w2"))
    assert membership_change("g", PLAN, 4, table, NOW, announced_since_ms=NOW - 5_000) is None
    change = membership_change("g", PLAN, 4, table, NOW, announced_since_ms=NOW - 31_000)
    assert change.died == {"w1": "never announced"}


def test_pinned_instances_limit_who_may_join():
    table = liveness(status("w0"), status("w1"), status("w2"), status("intruder"))
    assert membership_change("g", PLAN, 4, table, NOW, pinned=["w0", "w1", "w2"]) is None


def _group_now(members, lags):
    return parse_case(
        {
            "group": "g",
            "members": members,
            "partitions": [{"topic": "t", "partition": p, "lag": lag} for p, lag in enumerate(lags)],
        }
    )


def test_failover_places_the_orphans_and_moves_nothing_else_when_that_balances():
    group = _group_now(
        [
            {"id": "w0", "topics": ["t"], "owned": [["t", 0], ["t", 3]]},
            {"id": "w2", "topics": ["t"], "owned": [["t", 2], ["t", 5]]},
        ],
        [100, 500, 100, 100, 100, 100],
    )
    change = membership_change(
        "g", PLAN, 4, liveness(status("w0"), status("w1", ago_ms=40_000), status("w2")), NOW
    )
    planned = plan_failover(group, change)
    result = planned.evaluation.result(planned.chosen).to_dict()
    owner = {tuple(tp): m for m, tps in result["assignment"].items() for tp in tps}
    assert {owner[("t", 1)], owner[("t", 4)]} == {"w0", "w2"}  # the orphans, one each
    assert result["metrics"]["moves"] == 0 and "unassigned" not in result
    assert planned.reason.startswith("w1 silent for 40 s: 2 orphaned partitions placed, 0 other moves")


def test_failover_gives_a_newcomer_its_fair_share():
    group = _group_now(
        [
            {"id": "w0", "topics": ["t"], "owned": [["t", 0], ["t", 1], ["t", 2]]},
            {"id": "w1", "topics": ["t"], "owned": [["t", 3], ["t", 4], ["t", 5]]},
            {"id": "w2", "topics": ["t"]},
        ],
        [10] * 6,
    )
    table = liveness(status("w0"), status("w1"), status("w2"))
    change = membership_change("g", {"w0": PLAN["w0"], "w1": PLAN["w1"]}, 7, table, NOW)
    assert change.joined == ("w2",)
    planned = plan_failover(group, change)
    result = planned.evaluation.result(planned.chosen).to_dict()
    assert result["metrics"]["count"] == {"w0": 2, "w1": 2, "w2": 2} and result["metrics"]["moves"] == 2


# -- the publish decision -------------------------------------------------------------------------

T0 = datetime(2026, 11, 1, tzinfo=UTC)
MEMBERS = {"w0": [["t", 0]], "w1": [["t", 1]]}


def facts(**changes) -> PublishFacts:
    base = {
        "group": "g",
        "strategy": "lag-optimal",
        "members": MEMBERS,
        "plan_id": 7,
        "snapshot_at": T0,
        "snapshot_version": 3,
        "in_force_version": 3,
        "in_force_members": {"w0": [["t", 0], ["t", 1]]},
        "ledger_top_version": 3,
    }
    return PublishFacts(**{**base, **changes})


def test_publish_one_above_every_version_the_topic_and_the_ledger_know():
    d = decide_publication(facts())
    assert (d.action, d.version) == (PUBLISH, 4) and d.writes
    assert decide_publication(facts(ledger_top_version=9)).version == 10  # failed v4..v9 are not reused


def test_off_skip_unchanged_and_dry_run():
    assert decide_publication(facts(), apply=False).action == OFF
    sub = decide_publication(facts(kind="subscribe"))
    assert sub.action == SKIP and "subscribe() group" in sub.reason
    changed = decide_publication(facts(changed="left: w1"))
    assert changed.action == SKIP and "left: w1" in changed.reason
    assert decide_publication(facts(changed="left: w1"), force=True).action == PUBLISH
    same = decide_publication(facts(in_force_members=MEMBERS))
    assert (same.action, same.version) == (UNCHANGED, 3)
    dry = decide_publication(facts(), dry_run=True)
    assert (dry.action, dry.version, dry.writes) == (DRY_RUN, 4, False)


def test_refuse_a_plan_when_the_plan_in_force_moved_on_or_another_run_is_publishing():
    moved = decide_publication(facts(in_force_version=4))
    assert moved.action == REFUSE and "version 4 was published after this run's snapshot" in moved.reason
    racing = decide_publication(facts(ledger_newest=LedgerEntry(4, "pending", 8, T0), ledger_top_version=4))
    assert racing.action == REFUSE and "version 4 is being published by plan 8" in racing.reason
    newer = decide_publication(facts(ledger_newest=LedgerEntry(3, "published", 6, T0 + timedelta(hours=1))))
    assert newer.action == REFUSE and "newer snapshot" in newer.reason
    # The run's own reservation (a retried task) is no rival; force overrides staleness.
    assert decide_publication(facts(ledger_newest=LedgerEntry(4, "pending", 7, T0))).action == PUBLISH
    assert decide_publication(facts(in_force_version=4), force=True).action == PUBLISH
