"""Following a plan is as safe as Kafka's own consumer groups: real broker, consumers as separate
processes written as the README shows, ``kill -9``, the real ``lagassign`` commands. No mocks.

The scenarios live in ``followkit`` (``bench/faults.py`` prints the same ones as a table, with
Kafka's default intervals); here intervals are shorter so that the suite stays fast.
"""

from __future__ import annotations

import time
import uuid

import followkit as fk
import pytest
from confluent_kafka import Consumer
from faultkit import free_port
from kafkakit import config_flags, run_cli
from lagassign.kafka.plans import PlanStore
from lagassign.store import AuditStore

pytestmark = pytest.mark.kafka


def test_the_readme_consumer_commits_every_interval_and_at_close(broker, tmp_path):
    o = fk.commits_follow_processing(broker, tmp_path, interval_ms=1000, seconds=6)
    # While running, the committed offsets trail processing by about one interval of traffic
    # (400 msg/s here; sampled between commits, so allow two intervals), never by everything.
    assert max(o.details["trail"]) <= 2 * 400
    assert o.details["after_close"] == 0 and o.lost == 0


def test_kill_9_replays_at_most_one_commit_interval(broker, tmp_path):
    o = fk.replay_after_kill9(broker, tmp_path, interval_ms=1000, run_for=4)
    d = o.details
    assert d["before"] > 1000, "the consumer processed too little before the kill to prove anything"
    # What was processed again is bounded by the last commit interval's work (plus the commit
    # round trip), not by everything since the start.
    assert 0 < d["twice"] <= d["last_interval"] + 100
    assert o.lost == 0


def test_switches_between_live_instances_process_no_message_twice(broker, tmp_path):
    o = fk.switches_under_load(broker, tmp_path, switches=12, partitions=12, every=0.8)
    assert o.produced > 2000
    assert o.details["twice"] == 0, f"{o.details['twice']} messages processed twice"
    assert o.lost == 0


def test_kill_9_of_an_instance_fails_over_within_the_session_timeout(broker, tmp_path):
    # 8 s: short for the suite, long enough that a busy 2-core machine does not starve a live
    # consumer's heartbeats into a false death.
    o = fk.failover_after_kill9(broker, tmp_path, session_timeout=8)
    plan = o.details["plan"]
    assert set(plan.members) == {"w0", "w2"}
    assert sorted(p for pairs in plan.members.values() for _t, p in pairs) == list(range(6))
    assert o.seconds <= 8 + 60, o.details["watch_log"]  # it happened; how fast: bench/faults.py
    assert o.lost == 0
    # The audit trail says what happened and why.
    [failover] = [
        p
        for p in o.details["audit"]
        if p["trigger"] == "failover" and p["groups"][0]["decision"]["reason"].startswith("w1 ")
    ]
    [group] = failover["groups"]
    assert failover["status"] == "succeeded" and group["decision"]["go"] is True
    assert group["decision"]["reason"].startswith("w1 silent for")
    assert [(p["version"], p["state"]) for p in group["publications"]] == [(plan.version, "published")]


def test_a_new_instance_is_given_its_share(broker, tmp_path):
    o = fk.newcomer_gets_a_share(broker, tmp_path, session_timeout=5)
    assert len(o.details["plan"].members["w2"]) == 2
    assert o.seconds < 60 and o.lost == 0  # it happened; how fast: bench/faults.py


def test_racing_planners_make_one_version_and_the_ledger_matches_the_topic(broker, tmp_path, pg_url):
    o = fk.racing_planners(broker, tmp_path, pg_url, planners=6)
    d = o.details
    assert all(code == 0 for code, _out, _err in d["results"]), [err[-500:] for *_x, err in d["results"]]
    why = (d["outcomes"], [(p["version"], p["state"], p["plan_id"]) for p in d["pubs"]])
    assert d["after"] == d["before"] + 1, ("exactly one new version", why)
    assert d["published"] == [d["after"]], ("the ledger marks published exactly what the topic holds", why)
    assert all(p["state"] != "pending" for p in d["pubs"]), why
    losers = [out for out in d["outcomes"] if not (out or "").startswith("published")]
    assert len(losers) == 5 and all(out for out in losers), d["outcomes"]


def test_a_plan_is_compressed_and_one_too_large_fails_with_one_line(broker, tmp_path):
    o = fk.plan_too_large(broker, tmp_path, f"sqlite:///{tmp_path / 'audit.db'}")
    d = o.details
    assert d["size"] > 1_300_000 and d["fits"].returncode == 0, d["fits"].stderr
    refused = d["refused"]
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    [line] = refused.stderr.strip().splitlines()
    assert "too large for topic" in line and "MB" in line and "compressed" in line
    assert sorted(d["states"]) == [(1, "published"), (2, "failed")]


def test_bad_credentials_and_tls_fail_at_once_with_what_is_wrong(broker, tmp_path):
    found = fk.auth_failures(broker, tmp_path).details["found"]
    code, err, seconds = found["SCRAM"]  # before the fix: 94 s of retries; figures: bench/faults.py
    assert code == 2 and "authentication failed" in err and "not-the-password" not in err and seconds < 45
    code, err, seconds = found["TLS"]
    assert code == 2 and "TLS handshake failed" in err and seconds < 45


def test_an_unreachable_broker_fails_within_the_timeout(tmp_path):
    started = time.monotonic()
    run = run_cli(
        "snapshot",
        "--bootstrap-server",
        f"127.0.0.1:{free_port()}",
        "--timeout",
        "3",
        "--out",
        str(tmp_path / "x"),
    )
    assert run.returncode == 2 and "cannot reach Kafka" in run.stderr and "within 3s" in run.stderr
    assert time.monotonic() - started < 3 + 8


def test_subscribe_groups_are_evaluated_and_recorded_but_never_published(kit, tmp_path):
    """A real subscribe() group with a skew the gate would act on: recorded, not published."""
    topic = kit.topic("orders", 4)
    kit.produce(topic, {0: 500, 1: 500, 2: 10, 3: 10})  # range: 1,000 vs 20
    group = kit.name(f"sub{uuid.uuid4().hex[:4]}")
    consumers = [
        Consumer(
            kit.config(
                {
                    "group.id": group,
                    "enable.auto.commit": False,
                    "auto.offset.reset": "earliest",
                    "partition.assignment.strategy": "range",
                }
            )
        )
        for _ in range(2)
    ]
    try:
        for c in consumers:
            c.subscribe([topic])
        for _ in range(40):
            for c in consumers:
                c.poll(0.1)
            if all(c.assignment() for c in consumers):
                break
        db = f"sqlite:///{tmp_path / 'audit.db'}"
        plans = kit.name("plans")
        run = run_cli(
            "plan",
            *config_flags(kit.broker),
            "--groups",
            group,
            "--apply",
            "--plan-topic",
            plans,
            "--auto-offset-reset",
            "earliest",
            "--db",
            db,
            "--base-dir",
            str(tmp_path / "runs"),
            "--json",
        )
    finally:
        for c in consumers:
            c.close()
    assert run.returncode == 0, run.stderr[-2000:]
    with AuditStore(db) as store:
        plan = store.get_plan(store.list_plans()[0]["id"])
    [g] = [g for g in plan["groups"] if g["group"] == group]
    assert g["results"] and g["decision"]["go"] is True  # evaluated, and worth it...
    assert "subscribe() group" in g["decision"]["outcome"]  # ...but never published
    with PlanStore(kit.config(), plans) as topic:
        assert topic.read([group]) == {}
