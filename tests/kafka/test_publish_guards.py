"""Publishing refuses what would be wrong to publish: a group that changed since its snapshot,
and a plan older than the one in force (unless forced). Real broker, real audit store."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from kafkakit import only_declared


def _plan_until_gate(store, config, params, folder: Path) -> int:
    """A plan taken through snapshot, evaluation, record and gate (nothing published)."""
    from lagassign.pipeline import evaluate_step, gate_step, record_step, snapshot_step

    plan_id = store.start_plan("manual", "test", parameters=params.record())
    snapshot_step(store, plan_id, config, params, folder / "snapshot", log=lambda _m: None)
    evaluate_step(folder / "snapshot", folder / "evaluations", params, log=lambda _m: None)
    evaluated = record_step(store, plan_id, folder / "evaluations", log=lambda _m: None)
    gate_step(store, plan_id, evaluated, params, log=lambda _m: None)
    return plan_id


@pytest.fixture
def setup(broker, tmp_path):
    from demo_groups import build
    from lagassign.pipeline import PlanParams
    from lagassign.store import AuditStore

    prefix = f"guard{uuid.uuid4().hex[:6]}-"
    groups_file = build(broker.config(), broker.create_topic, tmp_path / "demo", prefix=prefix)
    params = PlanParams.from_mapping(
        {"groups": only_declared(groups_file), "groups_file": str(groups_file), "apply": True}
    )
    store = AuditStore(f"sqlite:///{tmp_path / 'audit.db'}")
    yield broker.config(), params, store, prefix, groups_file, tmp_path
    store.close()


def _newest(config, group):
    from lagassign.kafka.plans import PlanStore

    with PlanStore(config) as topic:
        return topic.newest(group)


def test_a_group_that_changed_since_its_snapshot_is_skipped_with_the_reason(setup):
    from lagassign.pipeline import publish_step

    config, params, store, prefix, groups_file, tmp = setup
    group = f"{prefix}orders-enricher"
    plan_id = _plan_until_gate(store, config, params, tmp / "p1")
    decisions = store.get_plan(plan_id)["groups"]
    assert {g["group"]: g["decision"]["go"] for g in decisions}[group] is True
    # A fourth instance is declared after the snapshot: the plan would leave it idle.
    groups_file.write_text(
        groups_file.read_text().replace("instances: [w0, w1, w2]", "instances: [w0, w1, w2, w3]")
    )
    go = [g["decision"] for g in decisions]
    outcomes = publish_step(store, plan_id, go, config, params, log=lambda _m: None)
    (mine,) = [o for o in outcomes if o["group"] == group]
    assert mine["published"] is False and "changed since the snapshot (joined: w3)" in mine["reason"]
    assert _newest(config, group).version == 1  # the topic did not move
    recorded = {g["group"]: g for g in store.get_plan(plan_id)["groups"]}[group]
    assert recorded["decision"]["outcome"] == mine["reason"]
    assert recorded["publications"] == []


def test_a_plan_older_than_the_one_in_force_is_refused_unless_forced(setup):
    from dataclasses import replace

    from lagassign.pipeline import publish_step

    config, params, store, prefix, _groups_file, tmp = setup
    group = f"{prefix}orders-enricher"
    older = _plan_until_gate(store, config, params, tmp / "older")
    time.sleep(1.1)  # snapshot times are compared; make the second one strictly newer
    newer = _plan_until_gate(store, config, params, tmp / "newer")

    def go(plan_id):
        return [g["decision"] for g in store.get_plan(plan_id)["groups"]]

    (first,) = [
        o
        for o in publish_step(store, newer, go(newer), config, params, log=lambda _m: None)
        if o["group"] == group
    ]
    assert first["published"] is True and first["version"] == 2

    # The older plan computes another assignment from the same offsets only by chance; make it
    # differ so "unchanged" cannot hide the staleness check.
    store.record_evaluations(older, _with_assignment_reversed(store.get_plan(older), group))
    (stale,) = [
        o
        for o in publish_step(store, older, go(older), config, params, log=lambda _m: None)
        if o["group"] == group
    ]
    assert stale["published"] is False and "published after this run's snapshot" in stale["reason"]
    assert _newest(config, group).version == 2

    forced = replace(params, force=True)
    (again,) = [
        o
        for o in publish_step(store, older, go(older), config, forced, log=lambda _m: None)
        if o["group"] == group
    ]
    assert again["published"] is True and again["version"] == 3
    assert _newest(config, group).version == 3


def _with_assignment_reversed(plan, group):
    """The plan's evaluations with the chosen assignment of ``group`` given to members in reverse."""
    out = []
    for g in plan["groups"]:
        results = []
        for r in g["results"]:
            if g["group"] == group and r["strategy"] == g["decision"]["chosen"]:
                ids = sorted(r["assignment"])
                r = {
                    **r,
                    "assignment": dict(zip(ids, [r["assignment"][i] for i in reversed(ids)], strict=True)),
                }
            results.append(r)
        out.append(
            {k: g[k] for k in ("group", "members", "partitions", "best", "lower_bound_max_lag")}
            | {"results": results}
        )
    return out


def test_the_first_run_to_reserve_a_version_wins_and_the_other_says_why(setup):
    """Two runs publish the same group: the one that reserved its version first publishes it;
    the other one, which saw the same plan in force, makes no version and records why."""
    from lagassign.pipeline import publish_step

    config, params, store, prefix, _groups_file, tmp = setup
    group = f"{prefix}orders-enricher"
    first = _plan_until_gate(store, config, params, tmp / "first")
    time.sleep(1.1)
    second = _plan_until_gate(store, config, params, tmp / "second")
    # The first run reserved version 2 and then paused before writing the topic...
    reserved = store.mark_publication_pending(first, group, min_version=2)
    assert reserved["version"] == 2
    # ...while the second run, with another assignment, tries to publish too: it must not.
    store.record_evaluations(second, _with_assignment_reversed(store.get_plan(second), group))

    def go(plan_id):
        return [g["decision"] for g in store.get_plan(plan_id)["groups"]]

    (lost,) = [
        o
        for o in publish_step(store, second, go(second), config, params, log=lambda _m: None)
        if o["group"] == group
    ]
    assert lost["published"] is False
    assert f"version 2 is being published by plan {first}" in lost["reason"]
    assert _newest(config, group).version == 1
    (done,) = [
        o
        for o in publish_step(store, first, go(first), config, params, log=lambda _m: None)
        if o["group"] == group
    ]
    assert done["published"] is True and done["version"] == 2
    assert _newest(config, group).version == 2
    ledger = {
        (g["group"], p["version"], p["state"])
        for plan_id in (first, second)
        for g in store.get_plan(plan_id)["groups"]
        if g["group"] == group
        for p in g["publications"]
    }
    assert ledger == {(group, 2, "published")}
