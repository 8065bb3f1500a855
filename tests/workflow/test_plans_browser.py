"""The plans pages in a real Airflow API server, driven by a real headless Chromium.

Starts ``airflow api-server`` (AIRFLOW_HOME in tmp, plugins folder = the repository's
``plugins/``, simple auth manager with a known admin password) on an audit store holding one
real plan (and an older one planned in time); checks that no plan data leaves the server
without a login; then logs in through Airflow's own login form, opens the list, clicks the
plan, checks chart and metrics table and keeps a screenshot at ``artifacts/plans-page.png``;
then the plan in time: catch-up times next to lag (``artifacts/plans-page-in-time.png``).

Needs Debian's ``chromium`` (/usr/bin/chromium) and Playwright for Python (its bundled
browsers are not used: nothing is downloaded). Skipped when either is missing, failed under CI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from browserkit import chromium_page, log_in, login_env
from faultkit import free_port
from lagassign.core.evaluate import evaluate
from lagassign.core.gate import decide_all
from lagassign.store import AuditStore
from lagassign.tables.snapshot import Snapshot
from proctrack import end_group
from testpaths import REPO

pytestmark = pytest.mark.browser

ARTIFACT = REPO / "artifacts" / "plans-page.png"
ARTIFACT_IN_TIME = REPO / "artifacts" / "plans-page-in-time.png"


def _get(url: str, accept: str, **headers: str) -> tuple[int, dict[str, str], str]:
    """GET without following redirects: status, headers, body."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers={"Accept": accept, **headers}), timeout=10) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """An Airflow API server with the lagassign plugin and one real plan in its audit store."""
    home = tmp_path_factory.mktemp("airflow")
    db_url = f"sqlite:///{home / 'lagassign.db'}"
    case = json.loads((REPO / "examples" / "skewed-group.json").read_text())
    with AuditStore(db_url) as store:
        plan_id = store.start_plan(
            "manual",
            triggered_by="alice",
            dag_id="lagassign_rebalance",
            run_id="manual__test",
            parameters={"threshold": 1.1, "apply": False},
        )
        # as a snapshot of a KIP-848 group records it: its type and the broker's assignor
        evaluation = {**evaluate(case), "group_type": "consumer", "assignor": "uniform"}
        store.record_evaluations(plan_id, [evaluation])
        store.record_decisions(plan_id, decide_all([evaluation]))
        store.finish_plan(plan_id, "succeeded")
        # planned in time: members with capacities, a snapshot that knows lag in seconds
        timed = json.loads((REPO / "examples" / "unequal-consumers.json").read_text())
        snapshot = Snapshot(
            groups=[{"group": timed["group"], "kind": "assign"}],
            partitions=[
                {"group": timed["group"], "topic": "t", "partition": p, "end": 36_000, "lag": 36_000}
                | {"lag_s": 4_000.0 - p}
                for p in (0, 1)
            ],
        ).write(home / "snapshot-timed")
        timed_id = store.start_plan(
            "manual",
            triggered_by="bob",
            snapshot_uri=str(snapshot),
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
        )
        evaluation = evaluate(timed)
        store.record_evaluations(timed_id, [evaluation])
        store.record_decisions(timed_id, decide_all([evaluation]))
        store.finish_plan(timed_id, "succeeded")
    port = free_port()
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        **login_env(home, port),
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "LAGASSIGN_DB_URL": db_url,
    }
    env.pop("AIRFLOW_CONFIG", None)
    airflow = str(Path(sys.executable).parent / "airflow")
    subprocess.run([airflow, "db", "migrate"], env=env, check=True, capture_output=True, timeout=120)
    log = (home / "api-server.log").open("w")
    proc = subprocess.Popen(
        [airflow, "api-server", "--port", str(port), "--host", "127.0.0.1"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if _get(f"{base}/api/v2/monitor/health", "application/json")[0] == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("api-server did not start:\n" + (home / "api-server.log").read_text()[-4000:])
            time.sleep(0.5)
        yield {
            "base": base,
            "plan_id": plan_id,
            "timed_id": timed_id,
            "group": case["group"],
            "log": home / "api-server.log",
        }
    finally:
        end_group(proc, grace=20)  # the api-server and every worker it started
        log.close()


def test_no_plan_data_without_login(server: dict[str, object]) -> None:
    base, plan_id, group = server["base"], server["plan_id"], str(server["group"])
    for path in (
        "/lagassign/plans",
        f"/lagassign/plans/{plan_id}",
        f"/lagassign/plans/{plan_id}.json",
        "/lagassign/plans.json",
    ):
        status, headers, body = _get(f"{base}{path}", "application/json")
        assert status == 401, (path, status, body)
        assert group not in body
        status, headers, body = _get(f"{base}{path}", "text/html,application/xhtml+xml")
        assert status == 303, (path, status, body)
        assert headers["location"].startswith("/auth/login"), headers["location"]
        assert "next=" in headers["location"]
        assert group not in body
    for bad in ({"Authorization": "Bearer not-a-jwt"}, {"Cookie": "_token=not-a-jwt"}):
        status, _, body = _get(f"{base}/lagassign/plans/{plan_id}.json", "application/json", **bad)
        assert status == 401, (bad, status, body)
        assert group not in body


def test_log_in_open_list_and_plan_screenshot(server: dict[str, object]) -> None:
    base, plan_id, group = server["base"], server["plan_id"], str(server["group"])
    ARTIFACT.parent.mkdir(exist_ok=True)
    with chromium_page(20_000, width=1280) as page:
        # Any request that leaves the test server fails the test: nothing loads from the internet.
        outside: list[str] = []
        page.on(
            "request",
            lambda r: None if r.url.startswith((base, "data:", "about:")) else outside.append(r.url),
        )

        log_in(page, base, "/lagassign/plans")  # through Airflow's login page and back

        assert page.locator("h1").inner_text() == "Rebalance plans"
        row = page.locator("table.plans tbody tr").first
        assert group in row.inner_text()
        assert "manual by alice" in row.inner_text()

        response = page.goto(f"{base}/lagassign/plans?since=yesterday")  # a bad filter: 400
        assert response is not None and response.status == 400
        assert "since: 'yesterday' is not an ISO date" in page.locator("p.err").inner_text()
        page.goto(f"{base}/lagassign/plans?group=nobody")
        assert page.locator("table.plans").count() == 0
        page.goto(f"{base}/lagassign/plans?group={group}&since=2000-01-01")
        assert page.locator("table.plans tbody tr").count() == 1

        page.locator(f"a[href='plans/{plan_id}']").click()
        page.wait_for_url(f"{base}/lagassign/plans/{plan_id}")
        assert page.locator("h1").inner_text() == f"Plan {plan_id}"
        chart = page.locator("svg.chart").first
        assert chart.is_visible()
        assert chart.locator("rect[data-strategy]").count() >= 2 * 4  # current and chosen, per consumer
        metrics = page.locator("table.metrics").first
        assert metrics.is_visible()
        assert "lag-optimal" in metrics.inner_text()
        assert page.locator("table.moves").count() == 1
        # what the cluster runs, and the row that does what Kafka does
        cluster = page.locator("p.cluster")
        assert cluster.is_visible()
        assert cluster.inner_text() == "group type consumer · assignor uniform · Kafka's row: uniform"
        kafka_row = metrics.locator("tbody tr", has=page.locator("span.tag.kafka"))
        assert kafka_row.count() == 1 and kafka_row.locator("td").first.inner_text().startswith("uniform")
        page.screenshot(path=str(ARTIFACT), full_page=True)

        # a group planned in time: catch-up next to lag, per group, strategy and member
        page.goto(f"{base}/lagassign/plans/{server['timed_id']}")
        assert page.locator("p.catch-up").inner_text() == (
            "max catch-up now 2 h 30 min → 1 h 15 min under drain-optimal "
            "(no plan below 1 h 13 min); lag in time up to 1 h 7 min (t-0)"
        )
        assert "max catch-up" in page.locator("table.metrics thead").inner_text()
        assert "48 min → 1 h 12 min" in page.locator("table.members").inner_text()
        assert page.locator("p.cluster").count() == 0  # its snapshot did not say
        page.screenshot(path=str(ARTIFACT_IN_TIME), full_page=True)

        # the plans list and the group's history: max catch-up now → under the plan
        page.goto(f"{base}/lagassign/plans")
        assert "max catch-up now → plan" in page.locator("table.plans thead").inner_text()
        timed_row = page.locator("table.plans tbody tr", has_text="manual by bob")
        cell = timed_row.locator("td.catch-up").inner_text()
        assert cell == "2 h 30 min → 1 h 15 min (not applied)"
        untimed_row = page.locator("table.plans tbody tr", has_text="manual by alice")
        assert untimed_row.locator("td.catch-up").inner_text() == "-"
        timed_group = json.loads((REPO / "examples" / "unequal-consumers.json").read_text())["group"]
        page.goto(f"{base}/lagassign/history?group={timed_group}")
        head = page.locator("table.history thead").inner_text()
        assert "max catch-up now → plan" in head
        cells = page.locator("table.history tbody td.catch-up").all_inner_texts()
        assert cells == ["2 h 30 min → 1 h 15 min"]
        # times in the timezone Airflow's UI keeps (its 'timezone' setting), UTC on hover
        page.evaluate("localStorage.setItem('timezone', JSON.stringify('America/New_York'))")
        page.goto(f"{base}/lagassign/plans/{server['timed_id']}")
        created = page.locator("dl.meta time").first
        assert created.get_attribute("datetime") == "2026-01-01T00:00:00+00:00"
        assert created.inner_text() == "2025-12-31 19:00:00 EST", created.inner_text()
        page.evaluate("localStorage.removeItem('timezone')")
        assert not outside, outside
    assert ARTIFACT.stat().st_size > 10_000
    print(f"screenshot kept at {ARTIFACT}")
