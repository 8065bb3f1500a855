"""Plans on the compacted topic: publish, read back, version rules, JSON export."""

from __future__ import annotations

import json

import pytest
from kafkakit import Kit, config_flags, run_cli
from lagassign.cli.planfiles import export_json, read_export
from lagassign.core.plans import Plan
from lagassign.kafka.errors import PlanError
from lagassign.kafka.plans import PlanStore

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def plans_topic(module_kit: Kit) -> str:
    return module_kit.topic("plans", 2, {"cleanup.policy": "compact"})


def test_publish_read_back_and_versions(module_kit: Kit, plans_topic: str) -> None:
    group = module_kit.name("g-versions")
    first = {"i1": [["orders", 2], ["orders", 0]], "i0": [["orders", 1]]}
    with PlanStore(module_kit.config(), plans_topic, timeout=15) as store:
        assert store.newest(group) is None
        plan, written = store.publish(group, "lag", first, snapshot_at="2026-01-01T00:00:00Z")
        assert (plan.version, written) == (1, True)

        back = store.newest(group)
        assert back == plan
        assert back.members == {"i0": [["orders", 1]], "i1": [["orders", 0], ["orders", 2]]}
        assert (back.group, back.strategy, back.snapshot_at) == (group, "lag", "2026-01-01T00:00:00Z")

        reordered = {"i0": [["orders", 1]], "i1": [["orders", 0], ["orders", 2]]}
        same, written = store.publish(group, "fair", reordered)
        assert (same.version, same.plan_id, written) == (1, plan.plan_id, False)

        changed = {"i0": [["orders", 1], ["orders", 2]], "i1": [["orders", 0]]}
        moved, written = store.publish(group, "lag", changed)
        assert (moved.version, written) == (2, True)
        assert store.newest(group).version == 2


def test_unreadable_and_older_records_are_ignored(module_kit: Kit, plans_topic: str) -> None:
    from confluent_kafka import Producer

    group = module_kit.name("g-noise")
    with PlanStore(module_kit.config(), plans_topic, timeout=15) as store:
        store.publish(group, "lag", {"i0": [["t", 0]]})
        v2, _ = store.publish(group, "lag", {"i0": [["t", 1]]})
        stale = Plan("old", group, 1, "2020-01-01T00:00:00Z", "range", None, {"i0": [["t", 9]]})
        producer = Producer(module_kit.config())
        noise = [
            b"{not json",
            json.dumps({"group": group, "version": "x"}).encode(),
            stale.to_json().encode(),
            json.dumps({**json.loads(v2.to_json()), "group": "someone-else"}).encode(),
        ]
        for value in noise:
            producer.produce(plans_topic, key=group.encode(), value=value)
        assert producer.flush(15) == 0
        assert store.newest(group) == v2
        v3, written = store.publish(group, "lag", {"i0": [["t", 2]]})
        assert (v3.version, written) == (3, True)


def test_a_plan_giving_one_partition_to_two_instances_is_refused(module_kit: Kit, plans_topic: str) -> None:
    with (
        PlanStore(module_kit.config(), plans_topic, timeout=15) as store,
        pytest.raises(PlanError, match="given to both"),
    ):
        store.publish(module_kit.name("g-dup"), "lag", {"a": [["t", 0]], "b": [["t", 0]]})


def test_missing_plans_topic_is_created_compacted(kit: Kit) -> None:
    from confluent_kafka.admin import AdminClient, ConfigResource

    topic = kit.name("new-plans")
    with PlanStore(kit.config(), topic, timeout=15) as store:
        assert store.partitions() is None
        _plan, written = store.publish(kit.name("g"), "lag", {"i0": [["t", 0]]})
        assert written and store.partitions() == [0]
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    admin = AdminClient(kit.config())  # held: a collected client fails its futures (_DESTROY)
    configs = admin.describe_configs([resource])[resource].result(timeout=15)
    assert configs["cleanup.policy"].value == "compact"


def test_cli_publish_export_and_read_back(module_kit: Kit, plans_topic: str, tmp_path) -> None:
    group = module_kit.name("g-cli")
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(
        json.dumps(
            {
                "group": group,
                "strategy": "lag-aware",
                "assignment": {"C0": [["orders", 0]], "C1": [["orders", 1], ["orders", 2]]},
                "metrics": {"max_lag": 10},
            }
        )
    )
    export = tmp_path / "export.json"
    flags = [*config_flags(module_kit.broker), "--topic", plans_topic]

    first = run_cli("publish", str(plan_file), *flags, "--export", str(export))
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    assert (out["group"], out["version"], out["published"]) == (group, 1, True)
    assert read_export(export).members == {"C0": [["orders", 0]], "C1": [["orders", 1], ["orders", 2]]}

    again = json.loads(run_cli("publish", str(plan_file), *flags).stdout)
    assert (again["version"], again["published"]) == (1, False)

    shown = run_cli("read-plans", *flags, "--group", group)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)[group]["version"] == 1


def test_export_only_versions_against_the_file(tmp_path) -> None:
    plan_file = tmp_path / "plan.json"
    export = tmp_path / "export.json"
    plan_file.write_text(json.dumps({"group": "g", "strategy": "lag", "assignment": {"a": [["t", 0]]}}))
    for expected in (1, 1):
        result = run_cli("publish", str(plan_file), "--export-only", "--export", str(export))
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["version"] == expected
    plan_file.write_text(json.dumps({"group": "g", "strategy": "lag", "assignment": {"a": [["t", 1]]}}))
    assert (
        json.loads(run_cli("publish", str(plan_file), "--export-only", "--export", str(export)).stdout)[
            "version"
        ]
        == 2
    )
    export_json(read_export(export), tmp_path / "copy.json")
    assert read_export(tmp_path / "copy.json").version == 2
