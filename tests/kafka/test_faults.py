"""Real faults (issue 8): a broker unreachable or stopped mid-snapshot, a killed Spark job, an
unreachable audit database, a crash between the plans topic and the audit store, and a broker
restart under running PlanConsumers. No mocks: the scenarios live in ``faultkit`` (shared with
``bench/faults.py``); here we assert on what they observed.

The faults that stop a broker stop a broker of this module's own of the tests' kind (``spare``:
Kafka 4 by default), never the shared session broker. Covered elsewhere, not repeated: plans
topic missing, unreadable and older plan records: tests/kafka/test_kafka_client.py,
``test_waits_for_a_plan_then_ignores_older_and_unreadable_records``.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import faultkit as fk
import pytest

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def spare(tmp_path_factory, broker) -> Iterator[fk.SpareBroker]:
    with fk.SpareBroker(tmp_path_factory.mktemp("spare"), broker.kind) as spare:
        yield spare


def _one_clear_line(errors: list[str], *words: str) -> None:
    assert len(errors) == 1, errors
    assert errors[0].startswith("lagassign: error: "), errors
    assert "Traceback" not in errors[0]
    for w in words:
        assert w in errors[0], errors


def test_unreachable_broker_fails_in_bounded_time_and_is_recorded(tmp_path):
    o = fk.broker_unreachable(tmp_path)
    d = o.details
    assert d["returncode"] != 0
    _one_clear_line(d["errors"], "cannot reach Kafka", "within 2s")
    assert "Traceback" not in d["stderr"]
    # the 2 s timeout + start-up, not the default 30 s or retries without end (figures: bench/faults.py)
    assert o.seconds < 28
    [plan] = d["plans"]
    assert plan["status"] == "failed" and "cannot reach Kafka" in plan["error"]
    assert not any(g.get("publications") for g in plan["groups"])


def test_broker_stopped_mid_snapshot_fails_the_run_and_publishes_nothing(spare, tmp_path):
    o = fk.broker_stopped_mid_snapshot(spare, tmp_path)
    d = o.details
    assert d["stopped_at"], "the snapshot ended before the broker could be stopped"
    assert o.seconds < 120  # bounded, not hanging (figures: bench/faults.py)
    assert d["after"] == d["before"], "the plans topic changed"
    [plan] = d["plans"]
    assert not any(g.get("publications") for g in plan["groups"])
    if d["returncode"] == -signal.SIGSEGV:
        # Kafka 4 resigns its group coordinators as it stops and answers the committed-offsets
        # requests in flight NOT_COORDINATOR; librdkafka 2.16's admin client then dereferences
        # the consumer-group handle it does not have (confluentinc/librdkafka#5040): the
        # process dies, the run stays "running". Anything else fails the test.
        pytest.xfail(f"lagassign plan died of SIGSEGV in librdkafka (#5040); plan {plan['status']}")
    # A snapshot in which no group could be read is a failed run, not an empty one.
    assert d["returncode"] != 0, d["stderr"][-1500:]
    _one_clear_line(d["errors"])
    assert plan["status"] == "failed" and plan["error"]


@pytest.fixture(scope="module")
def airflow(tmp_path_factory, broker):
    home = tmp_path_factory.mktemp("airflow-faults")
    return fk.airflow_home(home, broker)


@pytest.mark.one_broker
def test_killed_spark_job_fails_the_dag_records_the_step_and_publishes_nothing(airflow, broker, tmp_path):
    o = fk.spark_job_killed(broker, airflow, tmp_path)
    d = o.details
    assert d["killed"], "spark-submit never started: " + d["log"][-2000:]
    assert d["returncode"] != 0, d["log"][-3000:]
    assert d["spark_error"], "the evaluate task did not fail on spark-submit: " + d["log"][-3000:]
    assert d["after"] == d["before"], "a plan reached the topic"
    [plan] = d["plans"]
    assert plan["status"] == "failed"
    assert "evaluate" in plan["error"], plan["error"]
    assert all(not g.get("publications") for g in plan["groups"])


def test_unreachable_audit_db_publishes_nothing(broker, tmp_path):
    o = fk.audit_db_unreachable(broker, tmp_path)
    d = o.details
    assert d["returncode"] != 0
    _one_clear_line(d["errors"], "audit store")
    assert "postgres@" in d["errors"][0] and "Traceback" not in d["stderr"]
    assert d["after"] == d["before"], "a plan was published without its audit record"
    assert o.seconds < 90  # bounded, not hanging (figures: bench/faults.py)


def test_publication_left_pending_by_a_crash_is_reconciled_by_the_next_run(broker, tmp_path):
    o = fk.crash_between_topic_and_store(broker, tmp_path)
    d = o.details
    a, b = d["a"], d["b"]
    assert sorted(d["pending_before"]) == sorted([(a, 2), (b, 2)])
    assert d["next"].returncode == 0, d["next"].stderr[-2000:]
    assert d["states"] == {a: [(2, "published")], b: [(2, "failed")]}
    assert d["pending_after"] == []
    assert d["on_topic"][a] == (2, str(d["plan_id"]))
    assert d["on_topic"][b][0] == 1  # B never reached the topic; v1 stays in force
    assert f"group {a}: reconciled pending version 2 as published" in d["next"].stderr
    assert f"group {b}: reconciled pending version 2 as failed" in d["next"].stderr


def test_consumers_keep_their_assignment_and_lose_nothing_across_a_broker_restart(spare):
    o = fk.consumers_across_broker_restart(spare)
    d = o.details
    assert not d["failures"], d["failures"]
    assert o.produced == 3 * 6 * 300
    assert o.lost == 0 and o.processed == o.produced, sorted(d["lost"])[:10]
    assert d["versions"] == {1}
    shared = {k: v for k, v in d["owners"].items() if len(v) > 1}
    assert not shared, f"partitions consumed by two instances under one version: {shared}"
    owner_of = {p: iid for iid, pairs in d["members"].items() for _t, p in pairs}
    assert {p: next(iter(ids)) for (_v, p), ids in d["owners"].items()} == owner_of
