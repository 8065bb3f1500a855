"""The groups overview and the health job on the real broker: every group of both protocols and
the assign()-mode groups with their instances; a stopped consumer's group turns STOP and one
alert is sent; a ``kill -9``'d instance is DEAD, and its failover is sent once."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from typing import Any

import followkit as fk
import pytest
from groupkit import Inflow, Subscriber
from kafkakit import config_flags, needs, run_cli, wait_until
from lagassign.pipeline.alerts import Alert
from lagassign.pipeline.health import health_run
from lagassign.pipeline.overview import HealthSettings, build_overview, observe
from lagassign.store import AuditStore

pytestmark = pytest.mark.kafka


@pytest.fixture
def subscribers() -> Iterator[list[Subscriber]]:
    started: list[Subscriber] = []
    yield started
    for s in started:
        s.stop()


def _row(ov: Any, group: str) -> dict[str, Any]:
    found = [r for r in ov.groups if r["group"] == group]
    assert found, [r["group"] for r in ov.groups]
    return found[0]


def test_every_group_of_both_protocols_and_the_assign_mode_groups_are_listed_alive(
    broker, kit, tmp_path, subscribers
):
    needs(broker, "consumer protocol")
    topic = kit.topic("events", 4)
    kit.produce(topic, {p: 50 for p in range(4)})
    classic, new = kit.name("classic"), kit.name("new")
    subscribers += [Subscriber(kit, classic, topic), Subscriber(kit, new, topic, "consumer")]
    s = fk.Setup(broker, tmp_path, 4)
    s.publish(s.spread(["w0", "w1"]))
    procs = [s.worker(i, session_timeout_ms=6000) for i in ("w0", "w1")]
    try:
        wait_until(lambda: len(s.committed()) == 4, timeout=60)
        settings = HealthSettings(
            groups=f"({kit.prefix}|s{s.tag})-.*", plan_topic=s.plans, status_topic=s.status
        )

        def settled() -> Any:
            ov = build_overview(observe(broker.config(), settings, 15), None, settings)
            rows = {r["group"]: r for r in ov.groups}
            done = all(rows.get(g, {}).get("total_lag") == 0 for g in (classic, new, s.group))
            return done and ov

        ov = wait_until(settled, timeout=60, every=1)
        flags = [*config_flags(broker), "--groups", settings.groups, "--plan-topic", s.plans]
        flags += ["--status-topic", s.status, "--no-db"]
        listed = run_cli("groups", *flags, "--json")
        shown = run_cli("groups", "show", s.group, *flags, "--json")
        table = run_cli("groups", *flags)
    finally:
        fk.stop_all(procs)
    c, n, a = _row(ov, classic), _row(ov, new), _row(ov, s.group)
    assert (c["kind"], c["group_type"], c["status"], c["alive"]) == ("subscribe", "classic", "OK", 1)
    assert (n["kind"], n["group_type"], n["status"], n["alive"]) == ("subscribe", "consumer", "OK", 1)
    assert sorted(tp for m in n["members"] for tp in m["partitions"]) == [[topic, p] for p in range(4)]
    # the assign()-mode group has no group member: its instances announce themselves
    assert (a["kind"], a["group_type"], a["status"], a["alive"], a["dead"]) == ("assign", None, "OK", 2, 0)
    assert [(i["instance"], i["alive"], i["version"]) for i in a["instances"]] == [
        ("w0", True, 1),
        ("w1", True, 1),
    ]
    assert a["plan_version"] == 1 and a["versions"] == {"w0": 1, "w1": 1}
    assert {p["owner"] for p in a["partitions"]} == {"w0", "w1"}
    # the CLI says the same (DESIGN: `lagassign groups --json`)
    assert listed.returncode == 0, listed.stderr
    by_name = {g["group"]: g for g in json.loads(listed.stdout)["groups"]}
    assert {classic, new, s.group} <= set(by_name)
    for name in (classic, new, s.group):
        assert by_name[name]["status"] == "OK" and by_name[name]["total_lag"] == 0
        assert {"max_lag", "max_lag_s", "catch_up_s"} <= set(by_name[name])
    assert by_name[new]["group_type"] == "consumer"
    assert [(i["instance"], i["alive"]) for i in by_name[s.group]["instances"]] == [
        ("w0", True),
        ("w1", True),
    ]
    assert shown.returncode == 0, shown.stderr
    one = json.loads(shown.stdout)
    assert one["group"] == s.group and len(one["partitions"]) == 4
    assert table.returncode == 0, table.stderr
    [line] = [x for x in table.stdout.splitlines() if x.startswith(s.group)]
    assert line.split()[:3] == [s.group, "assign()", "OK"] and "2 alive" in line and " v1 " in line


def test_a_stopped_consumer_turns_its_group_stop_and_one_alert_is_sent(broker, kit, tmp_path, subscribers):
    topic = kit.topic("orders", 2)
    group = kit.name("billing")
    consumer = Subscriber(kit, group, topic)
    subscribers.append(consumer)
    sent: list[Alert] = []
    settings = HealthSettings(window_s=6, groups=f"{kit.prefix}-.*")
    with AuditStore(f"sqlite:///{tmp_path / 'audit.db'}") as store, Inflow(kit, topic, 2):

        def status() -> str:
            health_run(store, broker.config(), settings, sent.append, timeout=15)
            return store.latest_statuses(store.health_clusters()[0]["cluster"])[group]["status"]

        wait_until(
            lambda: status() == "OK" and store.latest_statuses(_cluster(store))[group]["alive"] == 1, 60, 1
        )
        consumer.stop()
        stopped = time.monotonic()
        wait_until(lambda: status() == "STOP", timeout=90, every=1)
        assert time.monotonic() - stopped >= 6  # a whole window without a commit, not sooner
        for _ in range(3):  # looked at again and again: still STOP, nothing more is sent
            assert status() == "STOP"
        alerts = store.alerts(_cluster(store), group)
    mine = [a for a in sent if a.group == group]
    assert [(a.kind, a.previous, a.status) for a in mine] == [("status", "OK", "STOP")]
    assert "nobody consumes the group" in mine[0].text
    assert [(a["kind"], a["state"], a["error"]) for a in alerts] == [("status", ["STOP"], None)]


def test_a_killed_instance_is_dead_and_its_failover_is_sent_once(broker, tmp_path):
    from lagassign.pipeline.failover import FailoverSettings, failover_step

    s = fk.Setup(broker, tmp_path, 4)
    s.publish(s.spread(["w0", "w1"]))
    procs = {i: s.worker(i, session_timeout_ms=3000) for i in ("w0", "w1")}
    sent: list[Alert] = []
    settings = HealthSettings(groups=f"s{s.tag}-.*", plan_topic=s.plans, status_topic=s.status)
    try:
        wait_until(lambda: len(s.committed()) == 4, timeout=60)
        with AuditStore(f"sqlite:///{tmp_path / 'audit.db'}") as store:
            health_run(store, broker.config(), settings, sent.append, timeout=15)
            procs["w1"].send_signal(signal.SIGKILL)
            killed = time.monotonic()

            def status() -> str:
                health_run(store, broker.config(), settings, sent.append, timeout=15)
                return store.latest_statuses(_cluster(store))[s.group]["status"]

            wait_until(lambda: status() == "DEAD", timeout=30, every=0.5)
            assert time.monotonic() - killed < 3 + 10  # the session timeout, and a look
            failover_step(
                store,
                broker.config(),
                s.group,
                FailoverSettings(s.plans, s.status, 3000),
                tmp_path / "runs",
                "test",
                timeout=15,
            )
            wait_until(lambda: status() == "OK", timeout=30, every=1)
            status()
            ov = build_overview(observe(broker.config(), settings, 15), store, settings)
    finally:
        fk.stop_all(list(procs.values()))
    dead = [a for a in sent if a.status == "DEAD"]
    assert len(dead) == 1 and dead[0].text.startswith(f"{s.group}: OK → DEAD: instance w1 silent for")
    [failover] = [a for a in sent if a.kind == "failover"]
    assert failover.title == f"lagassign: failover of group {s.group}: published v2"
    [back] = [a for a in sent if a.previous == "DEAD"]
    assert back.status in ("OK", "SWITCHING")  # w0 may still be switching to v2 when looked at
    row = _row(ov, s.group)
    assert row["plan_version"] == 2 and row["last_plan"]["trigger"] == "failover"
    assert [(i["instance"], i["state"], i["in_plan"]) for i in row["instances"]] == [
        ("w0", "alive", True),
        ("w1", "dead", False),
    ]


def _cluster(store: AuditStore) -> str:
    return store.health_clusters()[0]["cluster"]


def test_lagassign_groups_record_from_cron_records_and_alerts_once(broker, kit, tmp_path):
    """Without Airflow: `lagassign groups --record --notify-url` run again and again (as cron
    would) keeps the window in the audit store and POSTs one alert when a group stops."""
    from webhook_receiver import Receiver

    topic = kit.topic("ledger", 2)
    kit.produce(topic, {0: 40, 1: 40})
    group = kit.name("nightly")
    kit.commit(group, {(topic, 0): 10, (topic, 1): 10})  # committed once, nobody consumes since
    db = f"sqlite:///{tmp_path / 'audit.db'}"
    receiver = Receiver()
    try:
        flags = [*config_flags(broker), "--groups", f"{kit.prefix}-.*", "--db", db, "--window", "3"]
        runs = []
        for _ in range(4):
            runs.append(run_cli("groups", "--record", "--notify-url", receiver.url, *flags, "--json"))
            time.sleep(1.5)
        received = receiver.received()
    finally:
        receiver.close()
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    statuses = [
        next(g["status"] for g in json.loads(r.stdout)["groups"] if g["group"] == group) for r in runs
    ]
    assert statuses[0] == "OK" and statuses[-1] == "STOP", statuses  # a window of 3 s had to pass
    assert [(b["group"], b["status"], b["kind"]) for b in received] == [(group, "STOP", "status")]
    assert received[0]["type"] == "application/json" and "nobody consumes the group" in received[0]["text"]
    with AuditStore(db) as store:
        cluster = _cluster(store)
        assert len(store.status_series(cluster, group)) == 4
        assert [a["sent_at"] is not None for a in store.alerts(cluster, group)] == [True]
