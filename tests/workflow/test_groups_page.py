"""The groups pages (workflow.groups_page, workflow.groups_ui): HTML from overview rows, filters
and order, the lag chart on a time axis with plans and failovers, escaping; the routes behind
the login, falling back to what the health job recorded when the cluster cannot be read, and
the metrics endpoint's token."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from healthcases import ok_and_dead
from lagassign.core.health import group_health
from lagassign.core.outcome import Outcome
from lagassign.pipeline.health import status_figures
from lagassign.pipeline.overview import Overview, group_row

pytestmark = pytest.mark.airflow

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def _rows() -> list[dict[str, Any]]:
    ok, dead = ok_and_dead("billing<script>", ok_state="Stable")
    shown_dead = {
        "members": [],
        "instances": [
            {
                "instance": "w0",
                "alive": False,
                "state": "dead",
                "why": "silent for 40 s",
                "version": 4,
                "in_plan": True,
                "partitions": [],
                "pending": [],
                "host": "pod-1",
                "last_seen": "2026-05-01T11:59:00Z",
            }
        ],
    }
    last = {
        "plan_id": 9,
        "created_at": "2026-05-01T11:00:00Z",
        "trigger": "failover",
        "outcome": "published v4",
        "outcome_kind": "published",
        "reason": "w1 silent for 35 s",
    }
    return [
        group_row(
            ok,
            group_health(ok),
            {
                "members": [{"id": "m1", "client_id": "app", "host": "/10.0.0.1", "partitions": [["t", 0]]}],
                "instances": [],
            },
            None,
            NOW,
        ),
        group_row(dead, group_health(dead), shown_dead, last, NOW),
    ]


def test_the_list_shows_status_lag_consumers_and_plans_and_escapes_names() -> None:
    from lagassign.pipeline.overview import sort_rows
    from lagassign.workflow.groups_page import ListQuery, filter_rows, groups_list_html

    ov = Overview("c-1", NOW, True, "cluster", _rows())
    query = ListQuery.parse(None, [], None, None)
    html = groups_list_html(ov, sort_rows(filter_rows(ov.groups, query), query.sort), query, NOW)
    assert "<script>" not in html.split("</script>", 1)[1]  # the group name is escaped
    assert "billing&lt;script&gt;" in html
    order = re.findall(r'<tr data-group="([^"]+)" data-status="([A-Z]+)"', html)
    assert order == [("billing&lt;script&gt;", "DEAD"), ("orders", "OK")]  # worst first
    assert "1 dead: w0" in html and "never" in html and "published v4" in html and 'href="plans/9"' in html
    assert "2 of 2 groups" in html
    only_ok = ListQuery.parse("ORD", ["ok", "bogus"], "lag", "desc")
    assert only_ok.statuses == frozenset({"OK"}) and only_ok.desc
    assert [r["group"] for r in filter_rows(ov.groups, only_ok)] == ["orders"]
    assert only_ok.href(sort="name") == "groups?q=ORD&sort=name&order=desc&status=OK"


def test_the_group_page_charts_lag_over_time_with_plans_and_failovers() -> None:
    from lagassign.workflow.groups_page import GroupPage, Mark, group_html

    rows = _rows()
    ov = Overview("c-1", NOW, True, "cluster", rows)
    dead = rows[1]
    series = [
        {
            **status_figures(dead),
            "observed_at": NOW - timedelta(minutes=60 - m),
            "status": "OK" if m < 40 else "DEAD",
            "total_lag": 10 * m,
        }
        for m in range(60)
    ]
    marks = [
        Mark(
            NOW - timedelta(minutes=50),
            "plan",
            "plan 8: published v3",
            Outcome("published", "published v3"),
            "../plans/8",
        ),
        Mark(
            NOW - timedelta(minutes=15),
            "failover",
            "failover: published v4",
            Outcome("published", "published v4"),
            "../plans/9",
            "w1 silent for 35 s",
        ),
    ]
    info = GroupPage(series, marks, [], plan_in_force=9, hours=2)
    html = group_html(dead, ov, info, NOW)
    assert 'data-series="total_lag"' in html and 'data-kind="failover"' in html and 'data-kind="plan"' in html
    assert html.count('class="band dead"') == 20 and html.count('class="band ok"') == 40
    assert 'action="actions/failover"' in html and 'action="actions/plan"' in html
    assert 'href="../plans/9">open the plan in force (v4)' in html
    assert 'data-instance="w0" data-state="dead"' in html and "silent for 40 s" in html
    # the time axis: tick labels on round times, never the plan index
    ticks = re.findall(r'class="tick"[^>]*data-t="([^"]+)"', html)
    stamps = [datetime.fromisoformat(t) for t in ticks]
    assert len(stamps) >= 3 and all(t.minute % 5 == 0 and t.second == 0 for t in stamps), ticks
    # a history younger than the period is drawn across the chart: the axis starts at its start
    assert stamps[0] - (NOW - timedelta(minutes=60)) < timedelta(minutes=6)


# -- the routes, in process (the browser test drives a real API server) -------------------------


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    from fastapi.testclient import TestClient
    from lagassign.store import AuditStore
    from lagassign.workflow import group_overviews, groups_ui
    from lagassign.workflow.plugin import app  # the plugin adds the groups routes to the app
    from lagassign.workflow.web import require_login

    url = f"sqlite:///{tmp_path / 'audit.db'}"
    with AuditStore(url) as store:
        now = datetime.now(UTC)  # the page charts the last 24 hours
        for m in range(3):
            store.record_statuses("c-1", now - timedelta(minutes=3 - m), [status_figures(r) for r in _rows()])
    monkeypatch.setenv("LAGASSIGN_DB_URL", url)
    monkeypatch.setenv(
        "AIRFLOW_CONN_LAGASSIGN_KAFKA",
        '{"conn_type": "generic", "extra": {"bootstrap.servers": "127.0.0.1:1"}}',
    )
    monkeypatch.setenv("LAGASSIGN_GROUPS_READ_TIMEOUT", "1")
    monkeypatch.setattr(group_overviews, "overviews", group_overviews.Overviews())
    monkeypatch.setattr(group_overviews, "_stores", {})
    app.dependency_overrides[require_login] = lambda: "admin"
    try:
        yield TestClient(app, follow_redirects=False), TestClient(groups_ui.metrics_app)
    finally:
        app.dependency_overrides.clear()


@pytest.mark.filterwarnings("ignore:Using `httpx`")
def test_an_unreachable_cluster_shows_the_health_jobs_record_with_its_age(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages, metrics = client
    r = pages.get("/groups", headers={"Accept": "text/html"})
    assert r.status_code == 200, r.text
    assert "Not read now" in r.text and "recorded at" in r.text
    assert re.findall(r'<tr data-group="([^"]+)"', r.text) == ["billing&lt;script&gt;", "orders"]
    one = pages.get("/groups/show", params={"group": "orders"}, headers={"Accept": "text/html"})
    assert one.status_code == 200 and "Lag over time" in one.text and 'data-series="total_lag"' in one.text
    missing = pages.get("/groups/show", params={"group": "nope"}, headers={"Accept": "text/html"})
    assert missing.status_code == 404 and "no group 'nope'" in unescape(missing.text)
    data = pages.get("/groups.json").json()
    assert data["fresh"] is False and data["source"] == "health job" and len(data["groups"]) == 2
    # the metrics: refused without a login or the scrape token, then Prometheus's text format
    assert metrics.get("/metrics").status_code == 401
    monkeypatch.setenv("LAGASSIGN_METRICS_TOKEN", "s3cret-scrape")
    assert metrics.get("/metrics", headers={"Authorization": "Bearer s3cret-scrapeX"}).status_code == 401
    r = metrics.get("/metrics", headers={"Authorization": "Bearer s3cret-scrape"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain; version=")
    from prometheus_client.parser import text_string_to_metric_families

    names = {f.name for f in text_string_to_metric_families(r.text)}
    assert {"lagassign_group_status", "lagassign_group_lag_messages", "lagassign_observation_fresh"} <= names


@pytest.mark.filterwarnings("ignore:Using `httpx`")
def test_actions_come_only_from_this_servers_pages(client: Any) -> None:
    pages, _ = client
    r = pages.post(
        "/groups/actions/plan",
        data={"group": "orders"},
        headers={"Origin": "https://evil.example", "Accept": "text/html"},
    )
    assert r.status_code == 403
    r = pages.post(
        "/groups/actions/failover", data={}, headers={"Origin": "http://testserver", "Accept": "text/html"}
    )
    assert r.status_code == 400 and "group is required" in r.text
