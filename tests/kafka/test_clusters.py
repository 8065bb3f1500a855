"""One audit store, two real Kafka clusters: the same group id on each has its own version line.

The clusters are the tests' broker and a second noida broker of this module's own (its own port
and data folder under tmp, stopped at the end). noida answers one cluster id on every instance,
so lagassign keys its clusters by bootstrap address (``core.clusters``); against a Kafka 4 test
broker the first cluster has its own id. Either way the two keys differ, which is what counts.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import brokerctl
import pytest
from faultkit import SpareBroker, newest
from kafkakit import config_flags, declared_plan_flags, run_cli
from testpaths import EXAMPLES

GROUP = "orders-enricher"  # one of the demo's assign()-mode groups; the gate lets it through


@pytest.fixture(scope="module")
def second(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SpareBroker]:
    spare = SpareBroker(tmp_path_factory.mktemp("second-cluster") / "data")
    spare.start()
    try:
        yield spare
    finally:
        spare.stop()


def _demo(broker: brokerctl.Broker, out: Path, prefix: str) -> Path:
    """The demo's groups, topics and v1 plans on ``broker`` under ``prefix``; its groups file."""
    import contextlib
    import sys

    from demo_groups import build

    with contextlib.redirect_stdout(sys.stderr):
        return build(broker.config(), broker.create_topic, out, prefix=prefix)


def _plan(broker: brokerctl.Broker, groups_file: Path, db: str, base_dir: Path) -> dict[str, Any]:
    """``lagassign plan --json`` on ``broker``'s groups: each group's publication outcome."""
    run = run_cli(
        "plan", *declared_plan_flags(broker, groups_file), "--db", db, "--base-dir", str(base_dir), "--json"
    )
    assert run.returncode == 0, run.stderr
    return {o["group"]: o for o in json.loads(run.stdout)["publications"]}


def _cluster(broker: brokerctl.Broker) -> str:
    from lagassign.kafka.cluster import cluster_of

    return cluster_of(broker.config(), 15)


def test_the_same_groups_on_two_clusters_publish_independent_versions(
    broker: brokerctl.Broker, second: SpareBroker, tmp_path: Path
) -> None:
    """The issue's scenario, planned end to end by ``lagassign plan --apply`` on each cluster with
    one audit store: both publish their next version (the second used to be refused forever)."""
    from lagassign.store import AuditStore

    db = f"sqlite:///{tmp_path / 'audit.db'}"
    prefix = f"c{uuid.uuid4().hex[:8]}-"
    on_a, on_b = _cluster(broker), _cluster(second.broker)
    assert on_a != on_b
    outcomes = {}
    for which, b in (("a", broker), ("b", second.broker)):
        groups_file = _demo(b, tmp_path / which, prefix)
        outcomes[which] = _plan(b, groups_file, db, tmp_path / f"runs-{which}")
    group = prefix + GROUP
    for which, b in (("a", broker), ("b", second.broker)):
        done = outcomes[which][group]
        assert (done["published"], done["version"]) == (True, 2), done  # the demo put v1 there
        assert newest(b, [group])[group][0] == 2
    with AuditStore(db) as store:
        plans = store.list_plans()
        assert sorted(p["cluster"] for p in plans) == sorted([on_a, on_b])
        for cluster in (on_a, on_b):
            pub = store.last_published(group, cluster)
            assert pub is not None and (pub["version"], pub["cluster"]) == (2, cluster)
    listed = run_cli("plans", "list", "--db", db)
    assert listed.returncode == 0 and on_a in listed.stdout and on_b in listed.stdout
    one = run_cli("plans", "history", group, "--cluster", on_b, "--db", db, "--json")
    assert [r["cluster"] for r in json.loads(one.stdout)] == [on_b]


def _plan_file(tmp_path: Path, group: str, topic: str, spread: int) -> str:
    members = {f"i{m}": [[topic, p] for p in range(4) if p % spread == m] for m in range(spread)}
    path = tmp_path / f"{group}-{spread}.json"
    path.write_text(json.dumps({"group": group, "strategy": "lag-optimal", "assignment": members}))
    return str(path)


def test_publish_by_hand_on_two_clusters_then_show_it(
    broker: brokerctl.Broker, second: SpareBroker, tmp_path: Path
) -> None:
    """``lagassign publish`` of one plan file to two clusters with one audit store: version 1 on
    each; and ``plans show`` reads the plans it recorded (they carry no lag figures)."""
    db = f"sqlite:///{tmp_path / 'audit.db'}"
    group, topic = f"h{uuid.uuid4().hex[:8]}", f"h{uuid.uuid4().hex[:8]}-plans"
    plan = _plan_file(tmp_path, group, "t", 2)
    for b in (broker, second.broker):
        run = run_cli("publish", *config_flags(b), "--topic", topic, "--db", db, plan)
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout)["version"] == 1 and json.loads(run.stdout)["published"]
    again = run_cli(
        "publish", *config_flags(broker), "--topic", topic, "--db", db, _plan_file(tmp_path, group, "t", 4)
    )
    assert again.returncode == 0 and json.loads(again.stdout)["version"] == 2, again.stderr
    shown = run_cli("plans", "show", "latest", "--db", db)
    assert shown.returncode == 0, shown.stderr
    assert f"  cluster   {_cluster(broker)}\n" in shown.stdout
    assert "lag-optimal: assignment recorded without lag figures: 4 members, 4 partitions" in shown.stdout
    for plan_id in ("1", "2"):
        assert run_cli("plans", "show", plan_id, "--db", db).returncode == 0


def test_a_cluster_rebuilt_behind_the_same_address_goes_on_publishing(tmp_path: Path) -> None:
    """What ``make demo`` does on each run: a fresh noida at the same address, its groups and v1
    plans built again, ``lagassign plan --apply`` with the audit store of the last run. The same
    cluster key, a plans topic without the versions the ledger recorded: the run publishes the
    next version, not "refused forever", and its outcome says what happened."""
    db = f"sqlite:///{tmp_path / 'audit.db'}"
    prefix = f"r{uuid.uuid4().hex[:8]}-"
    group = prefix + GROUP
    spare = SpareBroker(tmp_path / "data")
    try:
        versions = []
        for run_no in (1, 2):
            spare.start()
            groups_file = _demo(spare.broker, tmp_path / f"demo{run_no}", prefix)
            done = _plan(spare.broker, groups_file, db, tmp_path / f"runs{run_no}")[group]
            assert done["published"], done
            versions.append(done["version"])
            assert newest(spare.broker, [group])[group][0] == done["version"]
            spare.stop()
            shutil.rmtree(spare.data)  # the demo's broker starts --fresh
        assert versions == [2, 3]  # v1 is the demo's own; the ledger's v2 counts on
        assert "the topic no longer held version 2, published by plan 1" in done["reason"]
    finally:
        spare.stop()


def test_a_plan_is_published_only_on_the_cluster_it_was_made_on(
    broker: brokerctl.Broker, second: SpareBroker, tmp_path: Path
) -> None:
    from lagassign.core.evaluate import evaluate
    from lagassign.core.gate import GateDecision
    from lagassign.kafka.errors import PlanError
    from lagassign.pipeline import PlanParams, publish_step
    from lagassign.store import AuditStore

    case = json.loads((EXAMPLES / "skewed-group.json").read_text())
    with AuditStore(f"sqlite:///{tmp_path / 'audit.db'}") as store:
        plan_id = store.start_plan("manual", cluster=_cluster(broker))
        store.set_snapshot(plan_id, None, store.get_plan(plan_id)["created_at"] - timedelta(seconds=1))
        evaluation = evaluate(case)
        store.record_evaluations(plan_id, [evaluation])
        decision = GateDecision(case["group"], True, "go", chosen="lag-optimal", candidate="lag-optimal")
        store.record_decisions(plan_id, [decision])
        params = PlanParams.from_mapping({"apply": True, "plan_topic": f"x{uuid.uuid4().hex[:8]}"})
        with pytest.raises(PlanError, match=r"was made on cluster .*, but the Kafka connection reaches"):
            publish_step(store, plan_id, [decision], second.broker.config(), params, log=lambda _: None)
        assert store.pending_publications() == []


def test_reconcile_settles_only_the_connected_clusters_reservations(
    broker: brokerctl.Broker, second: SpareBroker, tmp_path: Path
) -> None:
    """A run that died mid-publish on cluster A left a reservation; a run on cluster B cannot
    tell whether it reached A's topic, so it leaves it for a run on A."""
    from lagassign.pipeline import reconcile_step
    from lagassign.store import AuditStore

    on_a, on_b = _cluster(broker), _cluster(second.broker)
    topic = f"y{uuid.uuid4().hex[:8]}"
    with AuditStore(f"sqlite:///{tmp_path / 'audit.db'}") as store:
        reservations: dict[str, Any] = {}
        for cluster in (on_a, on_b):
            plan_id = store.start_plan("manual", cluster=cluster)
            store.set_snapshot(plan_id, None, store.get_plan(plan_id)["created_at"])
            reservations[cluster] = store.mark_publication_pending(
                plan_id, "g", "lag-optimal", {"i0": [["t", 0]]}, force=True
            )
            store.finish_plan(plan_id, "failed", error="killed mid-publish")
        settled = reconcile_step(store, second.broker.config(), topic, log=lambda _: None, timeout=15)
        assert [(p["cluster"], p["state"]) for p in settled] == [(on_b, "failed")]
        assert [p["cluster"] for p in store.pending_publications()] == [on_a]
