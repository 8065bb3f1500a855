"""Alerts through Airflow's notifiers (workflow.notifiers), received by a real HTTP server on
localhost; once per change, through the audit store's claims; the health DAG's settings."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from dagbagkit import bare_airflow_env, dagbag_report
from lagassign.core.errors import LagassignError
from lagassign.pipeline.alerts import Alert, send_alerts
from lagassign.store import AuditStore
from webhook_receiver import Receiver

pytestmark = pytest.mark.airflow

AT = datetime(2026, 5, 1, 6, 0, tzinfo=UTC)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def _alert(group: str = "orders", status: str = "STOP", subject: str = "orders@1") -> Alert:
    return Alert(
        "status",
        "c-1",
        group,
        subject,
        f"lagassign: group {group} is {status} (was OK)",
        f"{group}: OK → {status}: events-0: no commit for 10 min with lag 1,050",
        status=status,
        previous="OK",
        at=AT,
    )


def test_the_webhook_notifier_posts_the_alert_rendered_by_airflow(receiver: Receiver) -> None:
    from lagassign.workflow.notifiers import WebhookNotifier, sender

    notifier = WebhookNotifier(receiver.url, text="{{ alert.title }}: {{ alert.text }} [{{ run_id }}]")
    send = sender([notifier], {"run_id": "scheduled__2026-05-01"})
    assert send is not None
    send(_alert())
    send(_alert("billing", "DEAD"))  # the notifier rendered in place once: each alert gets a fresh copy
    assert [b["group"] for b in receiver.bodies] == ["orders", "billing"]
    first = receiver.bodies[0]
    assert first["path"] == "/hooks/lagassign" and first["type"] == "application/json"
    assert first["text"] == (
        "lagassign: group orders is STOP (was OK): orders: OK → STOP: events-0: no commit for 10 min "
        "with lag 1,050 [scheduled__2026-05-01]"
    )
    assert (first["kind"], first["status"], first["previous"], first["cluster"]) == (
        "status",
        "STOP",
        "OK",
        "c-1",
    )
    assert notifier.text.startswith("{{ alert.title }}")  # the configured notifier is untouched
    assert sender([], {}) is None


def test_a_failing_notifier_is_named_after_the_others_were_tried(receiver: Receiver) -> None:
    from lagassign.workflow.notifiers import WebhookNotifier, sender

    dead = WebhookNotifier("http://127.0.0.1:1/nothing-listens", timeout=2)
    send = sender([dead, WebhookNotifier(receiver.url)], {})
    assert send is not None
    with pytest.raises(LagassignError, match="WebhookNotifier: the webhook could not be reached"):
        send(_alert())
    assert len(receiver.bodies) == 1  # the second one still got it


def test_alerts_are_sent_once_and_a_refusal_is_recorded(receiver: Receiver, tmp_path: Path) -> None:
    from lagassign.workflow.notifiers import WebhookNotifier, sender

    send = sender([WebhookNotifier(receiver.url)], {})
    with AuditStore(f"sqlite:///{tmp_path / 'audit.db'}") as store:
        assert send_alerts(store, [_alert()], send) == {"sent": 1, "failed": 0, "skipped": 0}
        # the same change again (a second look, another health run): claimed before, not sent
        assert send_alerts(store, [_alert()], send) == {"sent": 0, "failed": 0, "skipped": 1}
        receiver.status = 500
        later = _alert("billing", "DEAD", "billing@2")
        assert send_alerts(store, [later], send) == {"sent": 0, "failed": 1, "skipped": 0}
        recorded = {a["group"]: a for a in store.alerts("c-1")}
    assert len(receiver.bodies) == 2  # orders once; billing reached the receiver, which refused it
    assert recorded["orders"]["sent_at"] is not None and recorded["orders"]["error"] is None
    assert recorded["billing"]["sent_at"] is None
    assert (
        recorded["billing"]["error"] == "WebhookNotifier: the webhook answered HTTP 500 Internal Server Error"
    )


def test_notifiers_from_the_environment(receiver: Receiver) -> None:
    from lagassign.workflow.notifiers import WebhookNotifier, notifiers_from_env

    assert notifiers_from_env({}) == []
    [hook] = notifiers_from_env({"LAGASSIGN_ALERT_WEBHOOK": receiver.url})
    assert isinstance(hook, WebhookNotifier) and hook.url == receiver.url
    found = notifiers_from_env({"LAGASSIGN_ALERT_NOTIFIER": "test_health_alerts:_two_notifiers"})
    assert [n.url for n in found] == ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"]
    for bad, message in (
        ("nocolon", "expected module:attribute"),
        ("no.such.module:x", "No module named"),
        ("json:dumps", "calling it failed"),
        ("json:JSONDecoder", "is not an Airflow notifier"),
    ):
        with pytest.raises(LagassignError, match=message):
            notifiers_from_env({"LAGASSIGN_ALERT_NOTIFIER": bad})


def _two_notifiers() -> list[Any]:
    from lagassign.workflow.notifiers import WebhookNotifier

    return [WebhookNotifier("http://127.0.0.1:9/a"), WebhookNotifier("http://127.0.0.1:9/b")]


def test_the_health_job_settings_from_the_environment() -> None:
    from datetime import timedelta

    from lagassign.workflow.health import schedule_from_env, settings_from_env

    s = settings_from_env(
        {
            "LAGASSIGN_HEALTH_WINDOW": "120",
            "LAGASSIGN_HEALTH_GROUPS": "orders-.*",
            "LAGASSIGN_SESSION_TIMEOUT": "5",
            "LAGASSIGN_STATUS_TOPIC": "my.status",
        }
    )
    assert (s.window_s, s.groups, s.session_timeout_ms, s.status_topic, s.plan_topic) == (
        120.0,
        "orders-.*",
        5000,
        "my.status",
        "lagassign.plans",
    )
    assert settings_from_env({}).window_s == 600.0
    with pytest.raises(LagassignError, match="LAGASSIGN_HEALTH_WINDOW='-1' is not a positive number"):
        settings_from_env({"LAGASSIGN_HEALTH_WINDOW": "-1"})
    assert schedule_from_env({}) == timedelta(minutes=1)
    assert schedule_from_env({"LAGASSIGN_HEALTH_SCHEDULE": "30"}) == timedelta(seconds=30)
    assert schedule_from_env({"LAGASSIGN_HEALTH_SCHEDULE": "*/5 * * * *"}) == "*/5 * * * *"
    assert schedule_from_env({"LAGASSIGN_HEALTH_SCHEDULE": "off"}) is None


def test_the_health_dag_loads_on_and_once_a_minute(tmp_path: Path) -> None:
    report = (
        "dag = bag.dags['lagassign_health']\n"
        "print(json.dumps({'errors': {k: str(v) for k, v in bag.import_errors.items()},\n"
        "  'schedule': str(dag.schedule), 'paused': dag.is_paused_upon_creation,\n"
        "  'max_active_runs': dag.max_active_runs, 'tasks': sorted(dag.task_ids)}))\n"
    )
    info = dagbag_report(report, bare_airflow_env(tmp_path))
    assert info == {
        "errors": {},
        "schedule": "0:01:00",
        "paused": False,
        "max_active_runs": 1,
        "tasks": ["health"],
    }
