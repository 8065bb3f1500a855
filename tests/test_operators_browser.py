"""The operators' pages in a real ``airflow standalone``, driven by a real headless Chromium.

Starts Airflow (API server, scheduler, DAG processor, triggerer; AIRFLOW_HOME in tmp, port
chosen free, simple auth manager with a known admin password) with the repository's plugin and
two of its DAGs, on an audit store holding real plans: one the gate stopped, one that went on,
one that failed at its snapshot. Then, logged in through Airflow's own form: the list (DAG,
reason, lag before -> after), a stopped plan (nothing moves; every strategy behind a toggle),
"publish this plan" as a dry run (a real ``lagassign_review`` run that Airflow authorises,
runs, and that records a new plan by admin), "re-plan this group" (a ``lagassign_rebalance``
run with the group alone; the DAG stays paused, so it only queues), the failed plan's cause
and its link to the task log, a group's history, and dark mode. Screenshots go to
``artifacts/operators-*.png``.

Needs /usr/bin/chromium and Playwright for Python; skipped when either is missing, failed
under CI. No broker: the review run is a dry run, and nothing here reads Kafka.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from lagassign.core.evaluate import evaluate
from lagassign.core.gate import decide_all
from lagassign.store import AuditStore
from proctrack import end_group

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("LAGASSIGN_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = REPO / "artifacts"
PASSWORD = "secret-for-tests"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]
SKEWED = json.loads((REPO / "examples" / "skewed-group.json").read_text())
GROUP = SKEWED["group"]


def _missing(message: str) -> None:
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(message)
    pytest.skip(message)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _api(base: str, path: str, token: str, body: dict[str, Any] | None = None) -> Any:
    req = urllib.request.Request(
        f"{base}{path}",
        data=None if body is None else json.dumps(body).encode(),
        method="GET" if body is None else "POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=20) as r:
        return json.loads(r.read() or b"{}")


def _seed(url: str, snapshots: Path) -> dict[str, int]:
    """Real plans of the skewed group: went on (published v1, then v2 by a later plan), stopped
    by the gate (with its snapshot, for per-partition lag), failed at its snapshot."""
    from lagassign.tables.synthetic import snapshot_tables

    ids = {}
    with AuditStore(url) as store:
        for name, threshold in (("went", 1.1), ("stopped", 50.0)):
            pid = store.start_plan(
                "scheduled" if name == "went" else "manual",
                triggered_by=None if name == "went" else "alice",
                dag_id="lagassign_daily" if name == "went" else "lagassign_rebalance",
                run_id=f"{name}__1",
                parameters={"threshold": threshold, "apply": False},
            )
            ev = evaluate(SKEWED)
            store.record_evaluations(pid, [ev])
            store.record_decisions(pid, decide_all([ev], threshold))
            store.finish_plan(pid, "succeeded")
            ids[name] = pid
        snap = snapshot_tables([SKEWED])
        for row in snap.groups:  # as a group of assign() consumers would be read (publishable)
            row["kind"] = "assign"
        folder = snap.write(snapshots / "stopped")
        store.set_snapshot(ids["stopped"], str(folder), datetime.now(UTC))
        # "went" published as version 1, then a later plan as version 2 (in force).
        for v, pid in ((1, ids["went"]), (2, None)):
            if pid is None:
                pid = store.start_plan("scheduled", None, "lagassign_daily", "went__2", {"apply": True})
                ev = evaluate(SKEWED)
                store.record_evaluations(pid, [ev])
                store.record_decisions(pid, decide_all([ev]))
                store.finish_plan(pid, "succeeded")
                ids["went2"] = pid
            at = datetime(2026, 5, 1, tzinfo=UTC) + timedelta(hours=v)
            store.set_snapshot(pid, None, at)
            store.mark_publication_pending(pid, GROUP, snapshot_at=at)
            store.mark_published(GROUP, v)
        pid = store.start_plan("manual", "alice", "lagassign_rebalance", "manual__failed", {"apply": False})
        store.finish_plan(
            pid,
            "failed",
            error="step snapshot failed: cannot read groups file /etc/groups.yaml: No such file or directory",
        )
        ids["failed"] = pid
    return ids


@pytest.fixture(scope="module")
def airflow(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("airflow")
    dags = home / "dags"
    dags.mkdir()
    for name in ("lagassign_review.py", "lagassign_rebalance.py", "lagassign_daily.py"):
        shutil.copy(REPO / "dags" / name, dags / name)
    db_url = f"sqlite:///{home / 'lagassign.db'}"
    ids = _seed(db_url, home)
    passwords = home / "passwords.json"
    passwords.write_text(json.dumps({"admin": PASSWORD, "viewer": PASSWORD}))
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__PARALLELISM": "2",
        "AIRFLOW__CORE__AUTH_MANAGER": (
            "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager"
        ),
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin,viewer:viewer",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords),
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__API__BASE_URL": base,
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{base}/execution/",
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
        "LAGASSIGN_DB_URL": db_url,
        "LAGASSIGN_BASE_DIR": str(home / "runs"),
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    }
    env.pop("AIRFLOW_CONFIG", None)
    airflow_bin = str(Path(sys.executable).parent / "airflow")
    subprocess.run([airflow_bin, "db", "migrate"], env=env, check=True, capture_output=True, timeout=180)
    log = (home / "standalone.log").open("w")
    proc = subprocess.Popen(
        [airflow_bin, "standalone"], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 240
        token = None
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(
                    "airflow standalone did not come up:\n" + (home / "standalone.log").read_text()[-4000:]
                )
            try:
                if token is None:
                    req = urllib.request.Request(
                        f"{base}/auth/token",
                        data=json.dumps({"username": "admin", "password": PASSWORD}).encode(),
                        headers={"Content-Type": "application/json"},
                    )
                    with urllib.request.urlopen(req, timeout=10) as r:
                        token = json.loads(r.read())["access_token"]
                dags_seen = {d["dag_id"] for d in _api(base, "/api/v2/dags", token)["dags"]}
                if {"lagassign_review", "lagassign_rebalance", "lagassign_daily"} <= dags_seen:
                    break
            except OSError:
                pass
            time.sleep(2)
        # The review DAG runs what the page triggers; the rebalance DAG stays paused (runs queue).
        subprocess.run(
            [airflow_bin, "dags", "unpause", "lagassign_review"],
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        log_path = home / "standalone.log"
        yield {"base": base, "token": token, "ids": ids, "db": db_url, "log": log_path, "env": env}
    finally:
        end_group(proc)  # standalone, its scheduler's LocalExecutor workers, triggerer, ...
        log.close()


def _shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"operators-{name}.png"), full_page=True)


def test_operators_pages_in_airflow(airflow: dict[str, Any]) -> None:
    if not Path(CHROMIUM).exists():
        _missing(f"no Chromium at {CHROMIUM}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright for Python is not installed")
    base, ids, token = airflow["base"], airflow["ids"], airflow["token"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1360, "height": 900})
            page.set_default_timeout(30_000)
            page.goto(f"{base}/lagassign/plans")
            page.wait_for_url("**/auth/login**")
            page.locator("input[name='username']").fill("admin")
            page.locator("input[name='password']").fill(PASSWORD)
            page.locator("button[type='submit']").click()
            page.wait_for_url(f"{base}/lagassign/plans")

            # The list: DAG and trigger, the gate's reason, max lag before -> after, the failure.
            table = page.locator("table.plans").inner_text()
            assert "lagassign_daily" in table and "scheduled" in table
            assert "imbalance" in table and "→" in table and "(not applied)" in table
            assert "cannot read groups file" in table
            _shot(page, "list")

            # A plan the gate stopped: nothing moves; every strategy behind a toggle.
            page.goto(f"{base}/lagassign/plans/{ids['stopped']}")
            body = page.locator("main").inner_text()
            assert "Nothing moves: the gate stopped this plan." in body and "Moves:" not in body
            assert page.locator("details.every svg.chart").is_hidden()
            page.locator("details.every summary").click()
            assert page.locator("details.every svg.chart").is_visible()
            bars = page.locator("svg.chart").first.locator("rect[data-strategy]")
            assert {bars.nth(i).get_attribute("data-strategy") for i in range(bars.count())} == {
                "current",
                "lag-optimal",
            }
            _shot(page, "stopped-plan")
            # per-partition lag in the (folded) moves, from the plan's snapshot
            page.locator("details", has_text="would move if published").locator("summary").click()
            lags = page.locator("table.moves tbody tr td:nth-child(3)")
            assert lags.count() > 0 and all(lags.nth(i).inner_text() != "-" for i in range(lags.count()))

            # A viewer may read the plan but not publish it: Airflow refuses the run.
            viewer = browser.new_page()
            viewer.goto(f"{base}/lagassign/plans/{ids['stopped']}")
            viewer.wait_for_url("**/auth/login**")
            viewer.locator("input[name='username']").fill("viewer")
            viewer.locator("input[name='password']").fill(PASSWORD)
            viewer.locator("button[type='submit']").click()
            viewer.wait_for_url(f"**/lagassign/plans/{ids['stopped']}")
            with viewer.expect_response("**/lagassign/actions/publish") as answer:
                viewer.locator("form[action='../actions/publish'] button").click()
            assert answer.value.status == 403
            assert "Airflow refused to trigger lagassign_review" in viewer.locator("p.err").inner_text()
            assert _api(base, "/api/v2/dags/lagassign_review/dagRuns", token)["dag_runs"] == []
            viewer.close()

            # Publish it (dry run): a lagassign_review run, triggered as admin, that runs.
            page.locator("form[action='../actions/publish'] input[name='dry_run']").check()
            page.locator("form[action='../actions/publish'] button").click()
            page.wait_for_url(f"**/lagassign/plans/{ids['stopped']}?notice=*")
            assert "triggered lagassign_review run" in page.locator("p.notice").inner_text()
            runs = _api(base, "/api/v2/dags/lagassign_review/dagRuns", token)["dag_runs"]
            (run,) = runs
            assert run["conf"] == {
                "action": "publish",
                "plan_id": ids["stopped"],
                "group": GROUP,
                "dry_run": True,
            }
            assert run["triggering_user_name"] == "admin"
            deadline = time.monotonic() + 240
            while run["state"] not in ("success", "failed") and time.monotonic() < deadline:
                time.sleep(3)
                run = _api(base, f"/api/v2/dags/lagassign_review/dagRuns/{run['dag_run_id']}", token)
            assert run["state"] == "success", airflow["log"].read_text()[-3000:]
            with AuditStore(airflow["db"]) as store:
                newest = store.list_plans(limit=1)[0]
                plan = store.get_plan(newest["id"])
            assert plan["dag_id"] == "lagassign_review" and plan["triggered_by"] == "admin"
            decision = plan["groups"][0]["decision"]
            assert (
                decision["go"]
                and f"published on review of plan {ids['stopped']} by admin" in decision["reason"]
            )
            assert "dry run" in decision["outcome"]
            page.goto(f"{base}/lagassign/plans/{plan['id']}")
            assert "published on review" in page.locator("main").inner_text()
            run_link = page.locator("dl.meta a").first.get_attribute("href")
            assert run_link == f"/dags/lagassign_review/runs/{run['dag_run_id']}".replace(":", "%3A").replace(
                "+", "%2B"
            )
            _shot(page, "reviewed-plan")
            # Both ways: the task's log names the plan's page, the plan's page opens the run.
            logs = _api(
                base,
                f"/api/v2/dags/lagassign_review/dagRuns/{run['dag_run_id']}/taskInstances/publish/logs/1",
                token,
            )
            assert f"/lagassign/plans/{plan['id']}" in json.dumps(logs)
            page.locator("dl.meta a").first.click()
            page.wait_for_url("**/dags/lagassign_review/runs/**")
            page.get_by_text("publish", exact=True).first.wait_for()

            # The plans page inside Airflow's UI (its navigation entry).
            page.goto(base)
            page.get_by_role("link", name="Rebalance plans").first.click()
            frame = page.frame_locator("iframe").first
            assert frame.locator("h1").inner_text() == "Rebalance plans"
            _shot(page, "in-airflow")

            # Re-plan the group: a lagassign_rebalance run with the group alone (paused: queued).
            page.goto(f"{base}/lagassign/plans/{ids['stopped']}")
            page.locator("form[action='../actions/replan'] button").click()
            page.wait_for_url("**?notice=*")
            (replan,) = _api(base, "/api/v2/dags/lagassign_rebalance/dagRuns", token)["dag_runs"]
            assert replan["conf"]["groups"] == GROUP.replace("-", "\\-") and replan["conf"]["apply"] is False
            assert replan["triggering_user_name"] == "admin"

            # A failed plan: the cause, what to do, and the failed step's log in Airflow.
            page.goto(f"{base}/lagassign/plans/{ids['failed']}")
            cause = page.locator("div.cause").first
            assert "cannot read groups file" in cause.inner_text()
            assert "what to do: set the groups_file parameter" in cause.inner_text()
            log_link = cause.locator("a").get_attribute("href")
            assert log_link == "/dags/lagassign_rebalance/runs/manual__failed/tasks/snapshot"
            _shot(page, "failed-plan")

            # A group's history across plans.
            page.goto(f"{base}/lagassign/plans/{ids['stopped']}")
            page.locator("a", has_text="history of this group").first.click()
            page.wait_for_url("**/lagassign/history?group=*")
            assert page.locator("svg.history polyline").count() == 2
            assert page.locator("table.history tbody tr").count() >= 3
            _shot(page, "history")

            # Roll back to version 1 (dry run): another lagassign_review run, as admin.
            form = page.locator("form[action='actions/rollback']")
            assert form.count() == 1  # version 2 is in force; only version 1 can be gone back to
            form.locator("input[name='dry_run']").check()
            form.locator("button").click()
            page.wait_for_url("**?notice=*")
            runs = _api(base, "/api/v2/dags/lagassign_review/dagRuns", token)["dag_runs"]
            (back,) = [r for r in runs if r["conf"].get("action") == "rollback"]
            assert back["conf"] == {"action": "rollback", "group": GROUP, "version": 1, "dry_run": True}
            deadline = time.monotonic() + 240
            while back["state"] not in ("success", "failed") and time.monotonic() < deadline:
                time.sleep(3)
                back = _api(base, f"/api/v2/dags/lagassign_review/dagRuns/{back['dag_run_id']}", token)
            assert back["state"] == "success", airflow["log"].read_text()[-3000:]
            with AuditStore(airflow["db"]) as store:
                rolled = store.get_plan(store.list_plans(limit=1)[0]["id"])
            assert rolled["triggered_by"] == "admin"
            assert rolled["groups"][0]["decision"]["reason"].startswith("roll back to version 1 (lag-optimal")

            # Dark mode, as chosen in Airflow's UI (next-themes keeps it in localStorage).
            page.evaluate("localStorage.setItem('theme', 'dark')")
            page.goto(f"{base}/lagassign/plans/{ids['went']}")
            bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
            assert bg == "rgb(13, 17, 23)", bg
            _shot(page, "dark-plan")
            page.evaluate("localStorage.setItem('theme', 'light')")

            # Airflow's trigger forms: submittable with their defaults, showing what applies;
            # a number is kept as typed (not clamped), and the start task refuses it in one line.
            for dag in ("lagassign_daily", "lagassign_rebalance"):
                page.goto(f"{base}/dags/{dag}")
                page.get_by_role("button", name="Trigger").first.click()
                dialog = page.locator("[role=dialog][data-scope=dialog]")
                dialog.get_by_text("Run Parameters").wait_for()
                assert dialog.get_by_role("button", name="Trigger").is_enabled(), dag
                text = dialog.inner_text()
                assert "Imbalance threshold" in text and "A number ≥ 1.0" in text and "Groups file" in text
                if dag == "lagassign_daily":
                    assert "Scheduled runs take it from the Airflow Variable lagassign_apply" in text
                    _shot(page, "daily-form")
                    page.keyboard.press("Escape")
            threshold = dialog.locator("input[inputmode=decimal]").first
            assert threshold.input_value() == "1.1"
            threshold.fill("0.5")
            threshold.blur()
            assert threshold.input_value() == "0.5"  # not clamped to 1 behind the user's back
            dialog.get_by_role("button", name="Trigger").click()
            page.wait_for_url("**/dags/lagassign_rebalance/runs/**")
            deadline = time.monotonic() + 240
            refused = None
            while refused is None and time.monotonic() < deadline:
                time.sleep(3)
                with AuditStore(airflow["db"]) as store:
                    refused = next((p for p in store.list_plans() if "got 0.5" in (p["error"] or "")), None)
            assert refused is not None, airflow["log"].read_text()[-3000:]
            assert refused["error"] == (
                "step start failed: threshold must be a number ≥ 1.0 (max/mean member lag), got 0.5"
            )
            assert refused["triggered_by"] == "admin" and refused["status"] == "failed"

            # A scheduled run of lagassign_daily is recorded as scheduled (it then fails at its
            # snapshot: there is no Kafka here, and the plan says so).
            subprocess.run(
                [str(Path(sys.executable).parent / "airflow"), "dags", "unpause", "lagassign_daily"],
                env=airflow["env"],
                check=True,
                capture_output=True,
                timeout=120,
            )
            deadline = time.monotonic() + 240
            daily = None
            while time.monotonic() < deadline:
                time.sleep(3)
                with AuditStore(airflow["db"]) as store:
                    daily = next(
                        (p for p in store.list_plans() if str(p["run_id"]).startswith("scheduled__")), None
                    )
                if daily is not None and daily["status"] != "running":
                    break
            assert daily is not None, airflow["log"].read_text()[-3000:]
            assert daily["trigger"] == "scheduled" and daily["triggered_by"] is None
            assert daily["status"] == "failed" and daily["error"].startswith("step snapshot failed: "), daily
        finally:
            browser.close()
