"""The operators' pages in a real ``airflow standalone``, driven by a real headless Chromium.

Extended for operators' truth (issue 28): one row per group with its outcome badge, the guarded
publish (an override behind a confirmation for a plan the gate stopped), a notice that follows
the run it started to its outcome, the run's note linking its plan, Airflow links that open in
the top window from Airflow's own sandboxed frame, paused DAGs named, HTML error pages without
database paths, times in the user's timezone, and layouts at 1,024 and 1,360 px. The review
runs read the plans topic even as dry runs, so a real broker (the tests' ``test`` instance,
reused when running) is the Kafka connection.

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
under CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from browserkit import PASSWORD, chromium_page, log_in, login_env
from faultkit import free_port
from lagassign.core.evaluate import evaluate
from lagassign.core.gate import decide_all
from lagassign.core.outcome import outcome_of
from lagassign.store import AuditStore
from proctrack import end_group
from testpaths import REPO

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ARTIFACTS = REPO / "artifacts"
SKEWED = json.loads((REPO / "examples" / "skewed-group.json").read_text())
GROUP = SKEWED["group"]


def _api(base: str, path: str, token: str, body: dict[str, Any] | None = None) -> Any:
    req = urllib.request.Request(
        f"{base}{path}",
        data=None if body is None else json.dumps(body).encode(),
        method="GET" if body is None else "POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=20) as r:
        return json.loads(r.read() or b"{}")


def _seed(url: str, snapshots: Path, cluster: str | None = None) -> dict[str, int]:
    """Real plans of the skewed group on ``cluster``: went on (published v1, then v2 of another
    strategy by a later plan), stopped by the gate (with its snapshot, for per-partition lag),
    failed at its snapshot."""
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
                cluster=cluster,
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
                pid = store.start_plan(
                    "scheduled", None, "lagassign_daily", "went__2", {"apply": True}, cluster=cluster
                )
                ev = evaluate(SKEWED)
                store.record_evaluations(pid, [ev])
                store.record_decisions(pid, decide_all([ev]))
                store.finish_plan(pid, "succeeded")
                ids["went2"] = pid
            at = datetime(2026, 5, 1, tzinfo=UTC) + timedelta(hours=v)
            store.set_snapshot(pid, None, at)
            # v1 lag-optimal, v2 lag: the stopped plan's candidate (lag-optimal) is not in force
            store.mark_publication_pending(pid, GROUP, "lag-optimal" if v == 1 else "lag", snapshot_at=at)
            store.mark_published(GROUP, v, cluster=cluster)
        pid = store.start_plan("manual", "alice", "lagassign_rebalance", "manual__failed", {"apply": False})
        store.finish_plan(
            pid,
            "failed",
            error="step snapshot failed: cannot read groups file /etc/groups.yaml: No such file or directory",
            failed_step="snapshot",  # as the tasks record it: the page links this step's log
        )
        ids["failed"] = pid
    return ids


@pytest.fixture(scope="module")
def kafka() -> Iterator[str]:
    """The tests' broker (``LAGASSIGN_BROKER``, noida by default here: the lightest), reused when
    a ``test`` instance runs already, else started and stopped at the end."""
    import brokerctl

    kind = brokerctl.kind_from_env(default="noida")
    os.environ["LAGASSIGN_BROKER_INSTANCE"] = "test"
    already = brokerctl.running(kind)
    started = brokerctl.start(kind, fresh=not already)
    try:
        yield started.bootstrap
    finally:
        if not already:
            brokerctl.stop(kind)


@pytest.fixture(scope="module")
def airflow(tmp_path_factory: pytest.TempPathFactory, kafka: str) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("airflow")
    dags = home / "dags"
    dags.mkdir()
    for name in ("lagassign_review.py", "lagassign_rebalance.py", "lagassign_daily.py"):
        shutil.copy(REPO / "dags" / name, dags / name)
    db_url = f"sqlite:///{home / 'lagassign.db'}"
    from lagassign.kafka.cluster import cluster_of

    ids = _seed(db_url, home, cluster_of({"bootstrap.servers": kafka}))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__PARALLELISM": "2",
        **login_env(home, port, {"admin": "admin", "viewer": "viewer"}),
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
        "LAGASSIGN_DB_URL": db_url,
        "LAGASSIGN_BASE_DIR": str(home / "runs"),
        "AIRFLOW_CONN_LAGASSIGN_KAFKA": json.dumps(
            {"conn_type": "generic", "extra": {"bootstrap.servers": kafka}}
        ),
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
        # lagassign_review is on from its creation (the pages' publish and roll back run it);
        # the planning DAGs keep Airflow's default (paused), which the pages say.
        review = _api(base, "/api/v2/dags/lagassign_review", token)
        assert review["is_paused"] is False, review
        log_path = home / "standalone.log"
        yield {"base": base, "token": token, "ids": ids, "db": db_url, "log": log_path, "env": env}
    finally:
        end_group(proc)  # standalone, its scheduler's LocalExecutor workers, triggerer, ...
        log.close()


def _shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"operators-{name}.png"), full_page=True)


def _fits(page: Any) -> None:
    """Nothing wider than the window: no column cut off, no sideways scrolling."""
    over = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert over <= 0, f"{over}px wider than the window at {page.viewport_size}"


def _both_widths(page: Any, wide: str, narrow: str, fits: bool = True) -> None:
    """Screenshots at 1360 and at 1024 pixels wide (the page checked to fit each with ``fits``);
    the window is 1360 wide again after."""
    for width, name in ((1360, wide), (1024, narrow)):
        page.set_viewport_size({"width": width, "height": 900})
        if fits:
            _fits(page)
        _shot(page, name)
    page.set_viewport_size({"width": 1360, "height": 900})


def _wait_run(
    base: str, token: str, dag: str, run: dict[str, Any], airflow: dict[str, Any]
) -> dict[str, Any]:
    deadline = time.monotonic() + 240
    while run["state"] not in ("success", "failed") and time.monotonic() < deadline:
        time.sleep(3)
        run = _api(base, f"/api/v2/dags/{dag}/dagRuns/{quote(run['dag_run_id'], safe='')}", token)
    if run["state"] not in ("success", "failed"):
        tis = _api(
            base, f"/api/v2/dags/{dag}/dagRuns/{quote(run['dag_run_id'], safe='')}/taskInstances", token
        )
        states = [(t["task_id"], t["state"]) for t in tis.get("task_instances", ())]
        said = [
            line
            for line in airflow["log"].read_text().splitlines()
            if "scheduler" in line and ("rror" in line or "xception" in line or "listener" in line)
        ]
        raise AssertionError(
            f"run {run['dag_run_id']} still {run['state']}: tasks {states}\n" + "\n".join(said[-40:])
        )
    return run


def _note_of(base: str, token: str, dag: str, run_id: str) -> str:
    """The run's note, once the scheduler's listener has written it."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        note = _api(base, f"/api/v2/dags/{dag}/dagRuns/{quote(run_id, safe='')}", token).get("note")
        if note:
            return str(note)
        time.sleep(2)
    return ""


def test_operators_pages_in_airflow(airflow: dict[str, Any]) -> None:
    base, ids, token = airflow["base"], airflow["ids"], airflow["token"]
    with chromium_page(30_000) as page:
        log_in(page, base, "/lagassign/plans")

        # The list: one row per group per plan, each with its outcome badge and reason.
        rows = page.locator("table.plans tbody tr")
        assert rows.count() == 4  # went, went2, stopped: one group each; failed: no group
        badges = {
            rows.nth(i).get_attribute("data-plan"): rows.nth(i).locator(".badge").inner_text()
            for i in range(rows.count())
            if rows.nth(i).get_attribute("data-plan")
        }
        assert badges[str(ids["stopped"])] == "gate stop"
        assert badges[str(ids["went"])] == "published v1" and badges[str(ids["went2"])] == "published v2"
        table = page.locator("table.plans").inner_text()
        assert "lagassign_daily" in table and "scheduled" in table and "(not applied)" in table
        assert "failed: step snapshot failed: cannot read groups file" in table
        # the paused planning DAGs are named, with what that stops
        banner = page.locator(".banner.paused").inner_text()
        assert "lagassign_rebalance is paused" in banner and "lagassign_review" not in banner
        _both_widths(page, "list-1360", "list-1024")

        # Error pages: HTML, one sentence, no database path, no validator dump.
        for path, status, words in (
            ("/lagassign/plans/99999", 404, "there is no plan 99999"),
            ("/lagassign/history", 400, "name a group"),
            ("/lagassign/plans?limit=abc", 400, "limit must be a whole number"),
            ("/lagassign/plans?offset=-1", 400, "offset must be a whole number"),
            ("/lagassign/plans/abc", 404, "plan ids are whole numbers"),
        ):
            answer = page.goto(f"{base}{path}")
            text = page.locator("main").inner_text()
            assert answer.status == status and words in text, (path, text)
            assert ".db" not in text and "sqlite" not in text and "{" not in text, text
            assert answer.headers["content-type"].startswith("text/html")
        _shot(page, "error-page")

        # A plan the gate stopped: no primary button; an override behind a confirmation that
        # shows max lag before -> after and the moves; every strategy behind a toggle.
        page.goto(f"{base}/lagassign/plans/{ids['stopped']}")
        body = page.locator("main").inner_text()
        assert "Nothing moves: the gate stopped this plan." in body and "Moves:" not in body
        assert page.locator("button.primary", has_text="publish").count() == 0
        assert page.locator(".badge", has_text="gate stop").count() >= 1
        page.locator("details.every summary").click()
        assert page.locator("details.every svg.chart").is_visible()
        page.locator("details", has_text="would move if published").locator("summary").click()
        lags = page.locator("table.moves tbody tr td:nth-child(3)")
        assert lags.count() > 0 and all(lags.nth(i).inner_text() != "-" for i in range(lags.count()))
        override = page.locator("details.override")
        override.locator("summary").click()
        confirm = override.locator(".confirm").inner_text()
        assert "the gate said stop:" in confirm and "messages (" in confirm and "would move:" in confirm
        assert page.locator("table.params").count() == 1
        _both_widths(page, "stopped-plan", "stopped-plan-1024")
        # unticked, the browser does not send it
        override.locator("button.danger").click()
        assert page.url.endswith(f"/lagassign/plans/{ids['stopped']}")
        assert _api(base, "/api/v2/dags/lagassign_review/dagRuns", token)["dag_runs"] == []

        # A viewer may read the plan but not publish it: Airflow refuses the run.
        viewer = page.context.browser.new_page()
        log_in(viewer, base, f"/lagassign/plans/{ids['stopped']}", user="viewer")
        viewer.locator("details.override summary").click()
        viewer.locator("details.override input[name='confirm']").check()
        with viewer.expect_response("**/lagassign/actions/publish") as answer:
            viewer.locator("details.override button.danger").click()
        assert answer.value.status == 409
        assert "Airflow did not start lagassign_review" in viewer.locator("p.err").inner_text()
        assert _api(base, "/api/v2/dags/lagassign_review/dagRuns", token)["dag_runs"] == []
        viewer.close()

        # Publish it anyway, as a dry run: a lagassign_review run as admin; the notice links
        # the run and follows it to its outcome, which reads the plans topic like a publish.
        override.locator("input[name='confirm']").check()
        override.locator("input[name='dry_run']").check()
        override.locator("button.danger").click()
        page.wait_for_url(f"**/lagassign/plans/{ids['stopped']}?dag=lagassign_review&run=*")
        notice = page.locator(".notice")
        assert "Triggered lagassign_review run" in notice.inner_text()
        (run,) = _api(base, "/api/v2/dags/lagassign_review/dagRuns", token)["dag_runs"]
        assert run["conf"] == {
            "action": "publish",
            "plan_id": ids["stopped"],
            "group": GROUP,
            "dry_run": True,
        }
        assert run["triggering_user_name"] == "admin"
        run = _wait_run(base, token, "lagassign_review", run, airflow)
        assert run["state"] == "success", airflow["log"].read_text()[-3000:]
        page.locator(".notice.success .plan-link").wait_for(timeout=60_000)
        with AuditStore(airflow["db"]) as store:
            plan = store.get_plan(store.list_plans(limit=1)[0]["id"])
        assert plan["dag_id"] == "lagassign_review" and plan["triggered_by"] == "admin"
        decision = plan["groups"][0]["decision"]
        assert f"publish requested by admin on review of plan {ids['stopped']}" in decision["reason"]
        # The dry run read the cluster like a publish: the group is not on this broker, so
        # a publish would be skipped, and the dry run says so (not "published", not v1).
        label = outcome_of(plan, plan["groups"][0]).label
        assert label == "skipped: group changed", decision["outcome"]
        # one outcome everywhere: the notice, the run's note, the plan page
        assert f"success: {label}: {GROUP}" in notice.inner_text()
        _shot(page, "notice")
        note = _note_of(base, token, "lagassign_review", run["dag_run_id"])
        assert note == f"[plan {plan['id']}](/lagassign/plans/{plan['id']}): {label}: {GROUP}", note
        page.locator(".notice .plan-link").click()
        page.wait_for_url(f"**/lagassign/plans/{plan['id']}")
        assert page.locator("h2 .badge").first.inner_text() == label
        assert page.locator("button.primary", has_text="publish").count() == 0  # a review's record
        _shot(page, "reviewed-plan")
        logs = _api(
            base,
            f"/api/v2/dags/lagassign_review/dagRuns/{quote(run['dag_run_id'], safe='')}"
            "/taskInstances/publish/logs/1",
            token,
        )
        assert f"plan {plan['id']}: {label}: {GROUP}; page " in json.dumps(logs)

        # Times in the user's timezone, as Airflow's UI keeps it.
        page.evaluate("localStorage.setItem('timezone', JSON.stringify('Asia/Kolkata'))")
        page.goto(f"{base}/lagassign/plans/{ids['went']}")
        created = page.locator("dl.meta time").first
        assert created.get_attribute("datetime").endswith("+00:00")
        shown = created.inner_text()
        assert "UTC" not in shown and ("GMT+5:30" in shown or "IST" in shown), shown
        page.evaluate("localStorage.removeItem('timezone')")

        # Inside Airflow's UI, in its sandboxed frame: a link to Airflow opens in the top window.
        page.goto(f"{base}/plugin/lagassign-plans")
        frame = page.frame_locator("iframe").first
        assert frame.locator("h1").inner_text() == "Rebalance plans"
        _both_widths(page, "in-airflow", "in-airflow-1024", fits=False)  # Airflow's own frame
        frame.locator(f"tr[data-plan='{plan['id']}'] a[target=_top]").first.click()
        page.wait_for_url("**/dags/lagassign_review/runs/**")
        page.get_by_text("publish", exact=True).first.wait_for()

        # Re-plan the group: a lagassign_rebalance run with the group alone (paused: queued).
        page.goto(f"{base}/lagassign/plans/{ids['stopped']}")
        page.locator("form[action='../actions/replan'] button").click()
        page.wait_for_url("**?dag=lagassign_rebalance&run=*")
        (replan,) = _api(base, "/api/v2/dags/lagassign_rebalance/dagRuns", token)["dag_runs"]
        assert replan["conf"]["groups"] == GROUP.replace("-", "\\-") and replan["conf"]["apply"] is False
        assert "Triggered lagassign_rebalance run" in page.locator(".notice").inner_text()
        # the paused DAG is named on the page, with a button that unpauses it
        assert "lagassign_rebalance is paused" in page.locator(".banner.paused").inner_text()
        # a URL's own text never becomes a notice
        page.goto(f"{base}/lagassign/plans/{ids['stopped']}?dag=lagassign_review&run=%3Cb%3Ehi%3C/b%3E")
        assert page.locator(".notice").count() == 0

        # A failed plan: the cause, what to do, and the failed step's log in Airflow.
        page.goto(f"{base}/lagassign/plans/{ids['failed']}")
        cause = page.locator("div.cause").first
        assert "cannot read groups file" in cause.inner_text()
        assert "what to do: set the groups_file parameter" in cause.inner_text()
        log_link = cause.locator("a").get_attribute("href")
        assert log_link == "/dags/lagassign_rebalance/runs/manual__failed/tasks/snapshot"
        _shot(page, "failed-plan")

        # A group's history: a time axis, outcomes, roll back behind its diff.
        page.goto(f"{base}/lagassign/plans/{ids['stopped']}")
        page.locator("a", has_text="history of this group").first.click()
        page.wait_for_url("**/lagassign/history?group=*")
        assert page.locator("svg.history polyline").count() == 2
        assert page.locator("svg.history text.tick").count() >= 2
        assert page.locator("table.history tbody tr").count() >= 4
        assert page.locator("table.history .badge", has_text="published v2").count() == 1
        rollback = page.locator("details.rollback")
        assert rollback.count() == 1  # version 2 is in force; only version 1 can be gone back to
        rollback.locator("summary").click()
        assert "against version 2 in force:" in rollback.inner_text()
        _both_widths(page, "history", "history-1024")
        rollback.locator("input[name='confirm']").check()
        rollback.locator("input[name='dry_run']").check()
        rollback.locator("button.danger").click()
        page.wait_for_url("**?dag=lagassign_review&run=*")
        runs = _api(base, "/api/v2/dags/lagassign_review/dagRuns", token)["dag_runs"]
        (back,) = [r for r in runs if r["conf"].get("action") == "rollback"]
        assert back["conf"] == {"action": "rollback", "group": GROUP, "version": 1, "dry_run": True}
        back = _wait_run(base, token, "lagassign_review", back, airflow)
        with AuditStore(airflow["db"]) as store:
            rolled = store.get_plan(store.list_plans(limit=1)[0]["id"])
        assert back["state"] == "success", (rolled, airflow["log"].read_text()[-3000:])
        assert rolled["groups"][0]["decision"]["reason"].startswith("roll back to version 1 (lag-optimal")
        page.goto(f"{base}/lagassign/plans/{rolled['id']}")
        moves = page.locator("main h3", has_text="Moves: plan in force →")
        assert moves.count() == 1, page.locator("main").inner_text()
        assert "None" not in page.locator("main").inner_text()
        _shot(page, "rollback-plan")

        # Dark mode, as chosen in Airflow's UI (next-themes keeps it in localStorage).
        page.evaluate("localStorage.setItem('theme', 'dark')")
        page.goto(f"{base}/lagassign/plans/{ids['went']}")
        bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert bg == "rgb(13, 17, 23)", bg
        _shot(page, "dark-plan")
        page.evaluate("localStorage.setItem('theme', 'light')")

        # Airflow's trigger forms: submittable with their defaults, showing what applies;
        # a number is kept as typed (not clamped), and the start task refuses it in one
        # line, without a traceback.
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
        start_log = json.dumps(
            _api(
                base,
                f"/api/v2/dags/lagassign_rebalance/dagRuns/{quote(refused['run_id'], safe='')}"
                "/taskInstances/start/logs/1",
                token,
            )
        )
        assert "parameters refused: threshold must be a number" in start_log
        assert "Traceback" not in start_log, start_log[-3000:]

        # Letters in a number field: Airflow's number input refuses them in front of the user
        # (the field shows again the value the run will get), nothing is dropped unseen.
        page.goto(f"{base}/dags/lagassign_rebalance")
        page.get_by_role("button", name="Trigger").first.click()
        dialog = page.locator("[role=dialog][data-scope=dialog]")
        dialog.get_by_text("Run Parameters").wait_for()
        threshold = dialog.locator("input[inputmode=decimal]").first
        threshold.fill("abc")
        threshold.blur()
        assert threshold.input_value() == "1.1"
        _shot(page, "number-field-abc")
