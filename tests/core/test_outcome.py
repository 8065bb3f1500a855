"""One outcome per group per plan (core.outcome): every recorded publish line, and the states a
plan passes through, read as one badge; nothing that published nothing reads "published"."""

from __future__ import annotations

from typing import Any

import pytest
from lagassign.core.outcome import classify, outcome_of, run_succeeded, summary
from lagassign.core.plans import Plan
from lagassign.core.publishing import PublishFacts, decide_publication


def _group(
    outcome: str | None = None, go: bool = True, pubs: list[dict[str, Any]] | None = None, **kw: Any
) -> dict[str, Any]:
    decision = {
        "go": go,
        "reason": "imbalance 1.8 > 1.1",
        "chosen": "lag" if go else None,
        "candidate": "lag",
    }
    return {"group": "g", "decision": {**decision, "outcome": outcome}, "publications": pubs or [], **kw}


PLAN = {"status": "succeeded", "parameters": {"apply": True}}


@pytest.mark.parametrize(
    ("line", "kind", "label"),
    [
        ("published lag as version 3 on lagassign.plans", "published", "published v3"),
        ("dry run: would publish lag as version 2", "dry-run", "dry run: would publish v2"),
        ("unchanged: the plan is already in force as version 2", "unchanged", "unchanged"),
        ("not published: apply is off (lag recorded)", "off", "apply off"),
        (
            "skipped: version 3 was published after this run's snapshot (which saw version 2); "
            "not publishing without force",
            "stale",
            "refused: stale",
        ),
        (
            "skipped: version 2 (plan 4) was computed from a newer snapshot (2026-05-01T02:00:00)",
            "stale",
            "refused: stale",
        ),
        (
            "skipped: version 4 is being published by plan 9; not publishing without force",
            "held",
            "refused: version held",
        ),
        (
            "skipped: version 1 of group g was published by plan 1 since this run saw version 0 in force",
            "held",
            "refused: version held",
        ),
        ("skipped: group changed since the snapshot (members C0 gone)", "skipped", "skipped: group changed"),
        (
            "not published: a subscribe() group's consumers are assigned by the group coordinator",
            "skipped",
            "skipped: subscribe() group",
        ),
        (
            "failed: plan record too large even compressed",
            "failed",
            "failed: plan record too large even compressed",
        ),
    ],
)
def test_every_recorded_publish_line_has_one_badge(line: str, kind: str, label: str) -> None:
    out = classify(line)
    assert (out.kind, out.label) == (kind, label)
    assert line.endswith(out.detail)  # the whole recorded line (a failure: its cause)


def test_what_decide_publication_says_reads_back_as_its_own_outcome() -> None:
    """The reasons the pure publish decision writes are classified as what it decided."""
    members = {"a": [["t", 0]]}
    in_force = Plan("1", "g", 2, "2026-05-01T00:00:00Z", "lag", None, {"a": [["t", 1]]})
    facts = PublishFacts.now("g", "lag", members, in_force, (None, 2), snapshot_version=2)
    expected = {(True, False): "published", (True, True): "dry-run", (False, False): "off"}
    for (apply, dry), kind in expected.items():
        decided = decide_publication(facts, apply, dry)
        if decided.action == "publish":
            continue  # "publish lag as version 3" is what the applier replaces with "published ..."
        assert classify(decided.reason).kind == kind
    stale = PublishFacts.now("g", "lag", members, in_force, (None, 2), snapshot_version=1)
    assert classify(decide_publication(stale).reason).kind == "stale"
    same = PublishFacts.now("g", "lag", {"a": [["t", 1]]}, in_force, (None, 2), snapshot_version=2)
    assert classify(decide_publication(same).reason).label == "unchanged"
    dry = decide_publication(facts, True, True)
    assert classify(dry.reason).label == "dry run: would publish v3"


def test_a_group_with_live_protocol_members_is_refused_even_forced_and_reads_back_so() -> None:
    """Kafka refuses assign()-mode commits while a group has members: no force or dry run
    gets past it, and the line reads back as its own badge, one of the refusals."""
    members = {"a": [["t", 0]]}
    live = ("app (consumer member m1 at /10.0.0.7)",)
    facts = PublishFacts.now("g", "lag", members, None, (None, 0), group_members=live)
    for decided in (decide_publication(facts, force=True), decide_publication(facts, dry_run=True)):
        assert decided.action == "refuse" and not decided.writes
        assert decided.reason == (
            "refused: group g has 1 live member(s) of the group protocol (app (consumer member m1 at "
            "/10.0.0.7)); Kafka accepts commits from assign() consumers only while a group has no members"
        )
        assert classify(decided.reason).label == "refused: group has members"
        assert not run_succeeded([classify(decided.reason)])
    assert decide_publication(PublishFacts.now("g", "lag", members, None, (None, 0), group_members=())).writes


def test_a_publication_on_record_wins_and_pending_is_not_published() -> None:
    pubs = [{"version": 3, "state": "published"}]
    assert outcome_of(PLAN, _group("published lag as version 3", pubs=pubs)).label == "published v3"
    pending = outcome_of(PLAN, _group(None, pubs=[{"version": 4, "state": "pending"}]))
    assert pending.kind == "publishing" and "published" not in pending.label
    failed = outcome_of(
        PLAN, _group(None, pubs=[{"version": 4, "state": "failed", "error": "not authorised"}])
    )
    assert failed.label == "failed: not authorised"


def test_gate_stop_apply_off_not_evaluated_running_and_failed_runs() -> None:
    assert outcome_of(PLAN, _group(None, go=False)).label == "gate stop"
    assert (
        outcome_of({"status": "succeeded", "parameters": {"apply": False}}, _group(None)).label == "apply off"
    )
    assert outcome_of(PLAN, {"group": "g", "error": "empty group (no members)"}).label == (
        "failed: not evaluated: empty group (no members)"
    )
    assert outcome_of({"status": "running"}, {"group": "g"}).kind == "running"
    failed = outcome_of({"status": "failed", "error": "step publish failed: broker down"}, _group(None))
    assert failed.kind == "failed" and "broker down" in failed.label


def test_a_long_failure_is_shortened_in_the_badge_and_kept_whole_in_the_detail() -> None:
    reason = "x" * 200
    out = outcome_of(PLAN, {"group": "g", "error": reason})
    assert len(out.label) < 100 and out.label.endswith("…") and reason in out.detail
    assert out.line().startswith(out.label)


def test_summary_and_run_state() -> None:
    outs = [
        ("a", classify("published lag as version 3 on t")),
        ("b", outcome_of(PLAN, _group(None, go=False))),
        ("c", outcome_of(PLAN, _group(None, go=False))),
    ]
    assert summary(outs) == "published v3: a; gate stop: b, c"
    assert run_succeeded(o for _, o in outs)
    refused = classify("skipped: version 4 is being published by plan 9")
    assert not run_succeeded([refused])
    assert summary([]) == "no group planned"
    many = [(f"g{i}", refused) for i in range(5)]
    assert summary(many) == "refused: version held: g0, g1, g2 and 2 more"
