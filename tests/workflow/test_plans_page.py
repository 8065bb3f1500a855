"""The plans pages without a server: moves, SVG chart, HTML (escaped), filters, login gate.

Plans are built with a real AuditStore (SQLite in tmp_path) from real evaluations and gate
decisions, so the pages see exactly the dicts the store returns. ``workflow.ui`` (FastAPI and
Airflow, over a second to load) is imported by the tests that use it, so that ``make unit``,
which collects this module but runs none of it, does not load it.
"""

from __future__ import annotations

import itertools
import json
import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from lagassign.core.evaluate import evaluate
from lagassign.core.gate import decide_all
from lagassign.store import AuditStore
from lagassign.workflow import plans_page
from testpaths import REPO

pytestmark = pytest.mark.airflow

SKEWED = json.loads((REPO / "examples" / "skewed-group.json").read_text())
GROUP = SKEWED["group"]
EVIL = "<script>alert(1)</script>"
T0 = datetime(2026, 5, 1, 6, 0, tzinfo=UTC)


def _plan(tmp_path: Path, *cases: dict[str, Any], **start: Any) -> tuple[AuditStore, int]:
    store = AuditStore(f"sqlite:///{tmp_path / 'audit.db'}")
    plan_id = store.start_plan(
        "manual",
        triggered_by=start.pop("by", "alice"),
        created_at=T0,
        dag_id="lagassign_rebalance",
        run_id=f"manual__{len(cases)}",
        **start,
    )
    evaluations = [evaluate(c) for c in cases]
    store.record_evaluations(plan_id, evaluations)
    store.record_decisions(plan_id, decide_all(evaluations))
    store.finish_plan(plan_id, "succeeded")
    return store, plan_id


@pytest.fixture
def skewed(tmp_path: Path) -> dict[str, Any]:
    store, plan_id = _plan(tmp_path, SKEWED)
    with store:
        return store.get_plan(plan_id)


def _evil_case() -> dict[str, Any]:
    case = json.loads(json.dumps(SKEWED))
    case["group"] = EVIL
    rename = {m["id"]: f'{m["id"]}"><b>' for m in case["members"]}
    for m in case["members"]:
        m["id"] = rename[m["id"]]
    return case


# -- moves -----------------------------------------------------------------------------------


def test_moves_are_partitions_that_change_consumer() -> None:
    current = {"A": [["t", 0], ["t", 1]], "B": [["t", 2]]}
    target = {"A": [["t", 0]], "B": [["t", 1], ["t", 3]], "C": [["u", 0]]}
    assert plans_page.compute_moves(current, target) == [
        ("t", 1, "A", "B"),
        ("t", 2, "B", None),
        ("t", 3, None, "B"),
        ("u", 0, None, "C"),
    ]
    assert plans_page.compute_moves(current, current) == []
    assert plans_page.compute_moves(None, {}) == []


def test_moves_of_a_real_plan_match_its_moves_metric(skewed: dict[str, Any]) -> None:
    group = skewed["groups"][0]
    chosen = plans_page.target_strategy(group)
    assert chosen == group["decision"]["chosen"] == "lag-optimal"
    results = {r["strategy"]: r for r in group["results"]}
    for name, r in results.items():
        if "assignment" in r:
            moves = plans_page.compute_moves(results["current"]["assignment"], r["assignment"])
            assert len(moves) == r["metrics"]["moves"], name


# -- chart -----------------------------------------------------------------------------------


def test_chart_has_a_bar_per_consumer_and_strategy_and_a_legend(skewed: dict[str, Any]) -> None:
    group = skewed["groups"][0]
    svg = plans_page.lag_chart_svg(group)
    root = ElementTree.fromstring(svg)  # well-formed XML
    ns = "{http://www.w3.org/2000/svg}"
    series = plans_page.chart_series(group)
    assert [name for name, _ in series] == ["current", "lag-optimal"]  # by default: current vs chosen
    every = plans_page.chart_series(group, every=True)
    assert [name for name, _ in every[:2]] == ["current", "lag-optimal"] and len(every) > 2
    assert "constrained-sticky" not in [name for name, _ in every]  # refused: no lag to draw
    bars = [r for r in root.iter(f"{ns}rect") if r.find(f"{ns}title") is not None]
    assert len(bars) == len(series) * len(SKEWED["members"])
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert "lag-optimal (chosen)" in texts and "current" in texts
    # a bar's height is proportional to its lag
    lag = dict(series)["current"]["consumer-0"]
    title = f"consumer-0 under current: {lag:,} messages"
    bar = next(r for r in bars if r.find(f"{ns}title").text == title)
    assert float(bar.get("height")) > 0
    assert not re.search(r"(href|src)=", svg)  # nothing loaded from anywhere


def test_chart_of_a_group_without_results() -> None:
    assert "no measured assignment" in plans_page.lag_chart_svg({"group": "g", "results": []})


# -- HTML ------------------------------------------------------------------------------------


def test_plan_page_has_header_decision_chart_metrics_and_moves(skewed: dict[str, Any]) -> None:
    html = plans_page.plan_html(skewed)
    assert "<h1>Plan 1</h1>" in html
    assert "manual by alice" in html and "lagassign_rebalance / manual__1" in html
    assert '<span class="go">go</span>' in html and "lag-optimal lowers max lag" in html
    # current, chosen and lower bound by default; every strategy folded under a toggle
    assert html.count("<svg") == 2 and '<details class="every">' in html and '<table class="metrics">' in html
    assert '<span class="tag chosen">chosen</span>' in html and '<span class="tag best">best</span>' in html
    assert "refused: constrained-sticky" in html
    (group,) = skewed["groups"]
    chosen = next(r for r in group["results"] if r["strategy"] == "lag-optimal")
    assert f"Moves: current → lag-optimal ({chosen['metrics']['moves']} change consumer)" in html
    assert '<span class="badge off" data-outcome="off"' in html and ">apply off</span>" in html
    # parameters as a key/value table, defaults marked; no JSON
    table = plans_page.params_table({"threshold": 1.1, "apply": False, "max_moves": None, "groups": "o.*"})
    assert table.startswith('<table class="params">') and "{" not in table
    assert '<td>imbalance threshold</td><td>1.1 <span class="tag default">default</span>' in table
    assert "<td>max moves</td><td>no limit" in table and "<td>apply</td><td>off" in table
    assert "<td>groups (regular expression)</td><td>o.*</td>" in table  # not the default: unmarked
    # nothing loaded from anywhere: one inline script (colour mode, timezone, links), no link,
    # image or frame
    assert html.count("<script") == 1 and "localStorage.getItem('timezone')" in html
    assert not re.search(r"<(link|img|iframe)\b|src=|href=\"https?:|url\(|@import", html)


def test_a_group_says_what_the_cluster_runs_and_marks_kafkas_row(tmp_path: Path) -> None:
    """A group whose snapshot gave its type and assignor says them under its name and tags the
    strategy that does what Kafka does; a group from a case file shows nothing of the kind."""
    store = AuditStore(f"sqlite:///{tmp_path / 'audit.db'}")
    with store:
        plan_id = store.start_plan("scheduled", created_at=T0)
        other = {**json.loads(json.dumps(SKEWED)), "group": "plain"}
        evaluations = [{**evaluate(SKEWED), "group_type": "classic", "assignor": "cooperative-sticky"}]
        store.record_evaluations(plan_id, [*evaluations, evaluate(other)])
        plan = store.get_plan(plan_id)
    html = plans_page.plan_html(plan)
    line = "group type classic · assignor cooperative-sticky · Kafka&#39;s row: cooperative-sticky"
    assert re.search(
        rf'<h2>group {GROUP} <span class="badge[^<]*</span></h2>\s*<p class="cluster muted">{line}</p>', html
    )
    assert html.count('class="cluster') == 1
    assert re.search(r"<h2>group plain <span[^<]*</span></h2>\s*<p", html)
    kafka_tag = '<span class="tag kafka"'
    assert html.count(kafka_tag) == 1
    row = next(r for r in html.split("<tr") if kafka_tag in r)
    assert "cooperative-sticky" in row and row.count("swatch") == 1
    assert "Kafka&#39;s choice</span>" in row  # a classic group: its members' assignor


UNEQUAL = json.loads((REPO / "examples" / "unequal-consumers.json").read_text())


def test_a_group_planned_in_time_shows_catch_up_next_to_lag(tmp_path: Path) -> None:
    store, plan_id = _plan(tmp_path, UNEQUAL, SKEWED)
    with store:
        plan = store.get_plan(plan_id)
    times = {UNEQUAL["group"]: {("t", 0): 4_000.0, ("t", 1): 90.0}}
    html = plans_page.plan_html(plan, times=times, lags={UNEQUAL["group"]: {("t", 1): 36_000}})
    timed, untimed = (
        html.split(f'id="group-{g}"')[1].split("</section>")[0] for g in (UNEQUAL["group"], GROUP)
    )
    # per group: max catch-up now → under the plan, the bound, and the lag in seconds
    assert (
        "max catch-up now 2 h 30 min → 1 h 15 min under drain-optimal (no plan below 1 h 13 min); "
        "lag in time up to 1 h 7 min (t-0)"
    ) in timed
    # per strategy and per member
    assert (
        '<th class="num">max catch-up</th>' in timed and '<th class="num">catch-up now → plan</th>' in timed
    )
    assert "<td class=num>36,000 (2 min)</td><td>slow</td><td>fast</td>" in timed  # t-1 moves
    group = next(g for g in plan["groups"] if g["group"] == UNEQUAL["group"])
    assert plans_page.catch_up_line(group) is not None
    # without capacities (and lag in seconds) the group's page is as before
    assert "catch-up" not in untimed and "lag in time" not in untimed


def test_list_and_history_show_max_catch_up_for_groups_planned_in_time(tmp_path: Path) -> None:
    """The plans list and a group's history carry max catch-up now → under the plan where the
    group has capacities; a group without them shows '-' (list) or no such columns (history)."""
    store, plan_id = _plan(tmp_path, UNEQUAL, SKEWED)
    with store:
        plans = store.list_plans()
        times = store.max_catch_up([plan_id])
        html = plans_page.plans_list_html(plans, store.plan_details([plan_id]), catch_up=times)
        timed_rows = store.group_history(UNEQUAL["group"])
        untimed_rows = store.group_history(GROUP)
    assert times[(plan_id, UNEQUAL["group"], "current")] == 9_000.0
    assert (plan_id, GROUP, "current") not in times
    assert '<th class="num">max catch-up now → plan</th>' in html
    cells = re.findall(r'<td class="num catch-up">(.*?)</td>', html)
    # one row per group, in name order; the gate stopped the unequal group (candidate not applied)
    assert cells == ["-", "2 h 30 min → 1 h 15 min (not applied)"]
    # without any timed group on the page, the column is not there
    assert "catch-up" not in plans_page.plans_list_html(plans, {}, catch_up={})
    assert timed_rows[0]["current_max_catch_up_s"] == 9_000.0
    assert timed_rows[0]["plan_max_catch_up_s"] == 4_500.0
    history = plans_page.history_html(UNEQUAL["group"], timed_rows, [])
    assert '<th class="num">max catch-up now → plan</th>' in history
    assert re.findall(r'<td class="num catch-up">(.*?)</td>', history) == ["2 h 30 min → 1 h 15 min"]
    assert "catch-up" not in plans_page.history_html(GROUP, untimed_rows, [])


def test_never_when_inflow_reaches_capacity() -> None:
    group = {
        "group": "g",
        "decision": {"go": False, "candidate": "drain-optimal"},
        "results": [
            {"strategy": "current", "metrics": {"max_catch_up_s": None, "lower_bound_catch_up_s": 60.0}},
            {"strategy": "drain-optimal", "metrics": {"max_catch_up_s": 60.0}},
        ],
    }
    assert plans_page.catch_up_line(group) == (
        "max catch-up now never → 1 min under drain-optimal (no plan below 1 min)"
    )


def test_list_shows_groups_decisions_chosen_and_published(tmp_path: Path) -> None:
    store, plan_id = _plan(tmp_path, SKEWED)
    with store:
        assignment = {"consumer-0": [["orders", 0]]}
        store.mark_publication_pending(plan_id, SKEWED["group"], "lag-optimal", assignment, snapshot_at=T0)
        store.mark_published(SKEWED["group"], 1)
        plans = store.list_plans()
        html = plans_page.plans_list_html(
            plans, {plan_id: store.get_plan(plan_id)}, group="orders-enricher", since="2026-05-01"
        )
    row = re.search(r"<tbody>(.*)</tbody>", html, re.S).group(1)
    assert f'<a href="plans/{plan_id}">plan {plan_id}</a>' in row
    assert '<time datetime="2026-05-01T06:00:00+00:00" data-f="full">2026-05-01 06:00:00 UTC</time>' in row
    assert "manual by alice" in row
    assert "orders-enricher" in row and ">published v1</span>" in row
    assert "lag-optimal" in row and "lag-optimal lowers max lag" in row
    assert 'name="group" value="orders-enricher"' in html and 'value="2026-05-01"' in html


def test_every_value_is_escaped(tmp_path: Path) -> None:
    store, plan_id = _plan(tmp_path, _evil_case(), by=EVIL, parameters={"note": EVIL})
    with store:
        plan = store.get_plan(plan_id)
        pages = [
            plans_page.plan_html(plan),
            plans_page.lag_chart_svg(plan["groups"][0]),
            plans_page.plans_list_html(store.list_plans(), {plan_id: plan}, group=EVIL, since=EVIL),
        ]
    for html in pages:
        assert "<script>alert" not in html and '"><b>' not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages[0]
    assert "&quot;&gt;&lt;b&gt;" in pages[0]
    ElementTree.fromstring(pages[1])  # still well-formed


def test_error_page_escapes_its_message() -> None:
    from lagassign.workflow.web import error_html

    html = error_html(400, f"since: {EVIL!r} is bad")
    assert "<h1>Cannot show that</h1>" in html and "<script>alert" not in html


# -- filters ---------------------------------------------------------------------------------


def test_filters_accept_dates_and_times() -> None:
    from lagassign.workflow.ui import parse_filters  # loads Airflow's FastAPI: not at collection

    f = parse_filters(" orders ", "2026-05-01", "2026-05-02T06:30", 20)
    assert f == {
        "group": "orders",
        "since": date(2026, 5, 1),
        "until": datetime(2026, 5, 2, 6, 30),
        "limit": 20,
    }
    assert parse_filters("", "", None, 50)["group"] is None


@pytest.mark.parametrize(
    ("since", "until", "limit", "message"),
    [
        ("yesterday", None, 50, "since: 'yesterday' is not an ISO date"),
        (None, "2026-13-01", 50, "until: '2026-13-01' is not an ISO date"),
        ("2026-05-02", "2026-05-01", 50, "since (2026-05-02) is after until (2026-05-01)"),
        (None, None, 0, "limit must be between 1 and 500"),
    ],
)
def test_bad_filters_say_what_is_wrong(
    since: str | None, until: str | None, limit: int, message: str
) -> None:
    from lagassign.workflow.ui import BadRequest, parse_filters

    with pytest.raises(BadRequest, match=re.escape(message)):
        parse_filters(None, since, until, limit)


# -- the app without a login -----------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:Using `httpx`")
def test_app_refuses_every_route_without_a_login(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process check of the login gate without credentials (the browser test also sends bad
    tokens to a real API server, whose auth manager validates them)."""
    from fastapi.testclient import TestClient
    from lagassign.workflow.ui import app

    store, plan_id = _plan(tmp_path, SKEWED)
    store.close()
    monkeypatch.setenv("LAGASSIGN_DB_URL", store.url)
    client = TestClient(app, follow_redirects=False)
    for path in ("/plans", f"/plans/{plan_id}", f"/plans/{plan_id}.json", "/plans.json", "/plans/x"):
        r = client.get(path, headers={"Accept": "application/json"})
        assert r.status_code == 401, path
        assert r.headers["www-authenticate"] == "Bearer"
        assert "orders-enricher" not in r.text


def test_a_current_assignment_leaving_partitions_unconsumed_never_catches_up() -> None:
    group = {
        "group": "g",
        "decision": {"go": True, "chosen": "drain-optimal"},
        "results": [
            {"strategy": "current", "metrics": {"max_catch_up_s": 0.0}, "unassigned": [["t", 0], ["t", 1]]},
            {"strategy": "drain-optimal", "metrics": {"max_catch_up_s": 48.0}},
        ],
    }
    assert plans_page.catch_up_line(group) == (
        "max catch-up now never (2 partitions unconsumed) → 48 s under drain-optimal"
    )


# -- guarded publish, outcomes on the list, time axis, notes -----------------------------------


def _group(go: bool, **extra: Any) -> dict[str, Any]:
    ev = evaluate(SKEWED)
    decision = decide_all([ev], 1.1 if go else 50.0)[0].to_dict()
    return {**ev, "decision": decision, "publications": [], **extra}


def test_publish_guard_primary_override_or_nothing_and_why() -> None:
    from lagassign.workflow.guard import publish_guard

    plan = {"id": 5, "status": "succeeded", "parameters": {}, "snapshot_at": T0}
    assert publish_guard(plan, _group(True)).mode == "primary"
    stopped = publish_guard(plan, _group(False))
    assert stopped.mode == "override" and stopped.why.startswith("the gate said stop:")
    # stale: a newer snapshot's plan is in force, or a version published after this snapshot
    newer = {"plan_id": 7, "version": 3, "state": "published", "snapshot_at": T0.replace(hour=7)}
    stale = publish_guard(plan, _group(True), "assign", newer)
    assert stale.mode == "none" and stale.stale and "refused as stale" in stale.why
    after = {"plan_id": 4, "version": 3, "state": "published", "snapshot_at": T0.replace(hour=5)}
    assert publish_guard(plan, _group(True), "assign", after, snapshot_version=2).stale
    assert publish_guard(plan, _group(True), "assign", after, snapshot_version=3).mode == "primary"
    held = publish_guard(plan, _group(True), "assign", {"plan_id": 9, "version": 4, "state": "pending"})
    assert held.mode == "none" and "being published by plan 9" in held.why
    # nothing to publish: candidate equal to the current assignment, or already in force
    g = _group(True)
    cur = next(r for r in g["results"] if r["strategy"] == "current")
    same = {**g, "decision": {**g["decision"], "chosen": "current"}}
    assert publish_guard(plan, same).mode == "none"
    chosen = next(r for r in g["results"] if r["strategy"] == "lag-optimal")
    twin = {**g, "results": [cur, {**chosen, "assignment": cur["assignment"]}]}
    assert "changes nothing" in publish_guard(plan, twin).why
    in_force = {"plan_id": 3, "version": 2, "state": "published", "assignment": chosen["assignment"]}
    assert "already in force as version 2" in publish_guard(plan, g, "assign", in_force).why
    assert publish_guard(plan, g, "subscribe").mode == "none"
    assert publish_guard({**plan, "parameters": {"action": "publish"}}, g).mode == "none"
    assert publish_guard({**plan, "status": "failed"}, g).mode == "none"


def test_a_stale_plan_offers_replan_not_publish() -> None:
    from lagassign.workflow.guard import Guard

    plan = {"id": 5, "status": "succeeded", "parameters": {}}
    g = _group(True)
    html = plans_page.actions_html(
        plan, g, Guard("none", "publishing would be refused as stale: x", stale=True)
    )
    assert "actions/publish" not in html and "refused as stale" in html
    assert '<button class="primary" type="submit">re-plan this group</button>' in html


def test_the_list_has_one_row_per_group_with_its_outcome(tmp_path: Path) -> None:
    other = {**json.loads(json.dumps(SKEWED)), "group": "billing"}
    store, plan_id = _plan(tmp_path, SKEWED, other, parameters={"apply": True})
    with store:
        store.record_outcome(plan_id, GROUP, "skipped: version 4 is being published by plan 9")
        store.record_outcome(plan_id, "billing", "dry run: would publish lag-optimal as version 2")
        html = plans_page.plans_list_html(store.list_plans(), store.plan_details([plan_id]))
    rows = re.findall(r"<tr class=\"(?:plan-start|more)\".*?</tr>", html)
    assert len(rows) == 2 and 'rowspan="2"' in rows[0] and "rowspan" not in rows[1]
    by_group = {re.search(r'data-group="([^"]+)"', r).group(1): r for r in rows}
    assert ">refused: version held</span>" in by_group[GROUP]
    assert ">dry run: would publish v2</span>" in by_group["billing"]
    assert "published v" not in html and "<br>" not in html.split("<tbody>")[1]


def test_history_chart_is_time_scaled_and_its_labels_never_collide() -> None:
    from datetime import timedelta

    spans = ((3, timedelta(minutes=7)), (40, timedelta(hours=5)), (200, timedelta(minutes=3)))
    for n, gap in (*spans, (3, timedelta(seconds=20)), (2, timedelta(days=40))):
        rows = [
            {
                "plan_id": i,
                "created_at": T0 + gap * i * (1 + (i % 3)),
                "current_max_lag": 1000 + i,
                "plan_max_lag": 900,
            }
            for i in range(n)
        ]
        svg = plans_page.history_chart_svg(rows)
        root = ElementTree.fromstring(svg)
        ns = "{http://www.w3.org/2000/svg}"
        ticks = [t for t in root.iter(f"{ns}text") if t.get("class") == "tick"]
        xs = sorted(float(t.get("x")) for t in ticks)
        assert len(xs) >= 2
        widths = {"hm": 44, "mdhm": 84, "md": 48, "ymd": 80}
        assert min(b - a for a, b in itertools.pairwise(xs)) >= widths[ticks[0].get("data-f")]
        # points sit at their times: x grows with time, in proportion
        circles = [c for c in root.iter(f"{ns}circle") if "now (current)" in c.find(f"{ns}title").text]
        cx = [float(c.get("cx")) for c in circles]
        times = sorted(r["created_at"] for r in rows)
        span = (times[-1] - times[0]).total_seconds()
        mid = len(rows) // 2
        frac = (times[mid] - times[0]).total_seconds() / span
        assert abs((cx[mid] - cx[0]) / (cx[-1] - cx[0]) - frac) < 0.01


def test_error_pages_and_filters_say_one_sentence() -> None:
    from lagassign.workflow.ui import BadRequest, parse_page
    from lagassign.workflow.web import list_href

    assert parse_page(None, None) == (50, 0) and parse_page("10", "20") == (10, 20)
    for bad in (("abc", None), (None, "-1"), ("1.5", None)):
        with pytest.raises(BadRequest, match="must be a whole number"):
            parse_page(*bad)
    assert list_href("/lagassign/plans/99") == "../plans" and list_href("/lagassign/history") == "plans"


def test_a_notice_comes_only_from_checked_values() -> None:
    from lagassign.workflow.ui import run_notice

    ok = run_notice("lagassign_review", "manual__2026-05-01T06:00:00+00:00", "../")
    assert ok and ok["href"].startswith("/dags/lagassign_review/runs/manual__2026")
    html = plans_page.notice_html(ok)
    assert 'data-status="../runs/lagassign_review/manual__2026' in html and 'target="_top"' in html
    assert run_notice("lagassign_review", "<b>hi</b>") is None
    assert run_notice("some_other_dag", "manual__1") is None
    assert run_notice("lagassign_review", "free text with spaces") is None


def test_run_note_links_the_plan_and_says_its_outcomes() -> None:
    from lagassign.workflow.listener import run_note
    from lagassign.workflow.web import run_state_text

    plan = {
        "id": 12,
        "status": "succeeded",
        "parameters": {"apply": True},
        "groups": [
            {
                "group": "orders",
                "decision": {"go": True, "outcome": "published lag as version 3 on t"},
                "publications": [{"version": 3, "state": "published"}],
            },
            {"group": "billing", "decision": {"go": False, "reason": "balanced"}, "publications": []},
        ],
    }
    assert run_note([plan]) == "[plan 12](/lagassign/plans/12): published v3: orders; gate stop: billing"
    assert run_note([]) is None
    state = run_state_text("success", [plan])
    assert state["done"] and state["ok"] and state["plan_href"] == "../plans/12"
    refused = {
        **plan,
        "groups": [
            {
                "group": "orders",
                "decision": {"go": True, "outcome": "skipped: version 4 is being published by plan 9"},
            }
        ],
    }
    assert not run_state_text("success", [refused])["ok"]
    assert run_state_text("running", [])["text"] == "running"


def test_pages_name_paused_dags_with_an_unpause_button() -> None:
    html = plans_page.paused_html(
        {"lagassign_review": True, "lagassign_failover": True, "lagassign_daily": False}
    )
    assert "lagassign_review</code></a> is paused: publish and roll back" in html
    assert "failover is off" in html and "lagassign_daily" not in html
    assert html.count('name="dag_id"') == 2
    assert plans_page.paused_html({"lagassign_review": False}) == "" and plans_page.paused_html(None) == ""


def test_a_failover_plan_names_the_dead_instance_and_counts_taken_partitions() -> None:
    assert plans_page.dead_instances("w1 silent for 31 s; w3 joined; w2 closed") == ["w1", "w2"]
    g = _group(True)
    cur = next(r for r in g["results"] if r["strategy"] == "current")
    dead = next(iter(cur["assignment"]))
    left = {m: tps for m, tps in cur["assignment"].items() if m != dead}
    orphaned = [tuple(tp) for tp in cur["assignment"][dead]]
    target = {**cur["assignment"]}
    target.pop(dead)
    first = next(iter(target))
    target[first] = [*target[first], *[list(tp) for tp in orphaned]]
    results = [
        {**cur, "assignment": left, "unassigned": [list(tp) for tp in orphaned]},
        {"strategy": "sticky", "assignment": target, "metrics": {"moves": 0, "max_lag": 1, "lag": {}}},
    ]
    group = {**g, "results": results, "decision": {**g["decision"], "go": True, "chosen": "sticky"}}
    html = plans_page.moves_table_html(group, gone=[dead])
    assert f"0 change consumer, {len(orphaned)} unconsumed taken over from {dead} (dead)" in html
    assert html.count(f"{dead} (dead)</span>") == len(orphaned)
    assert f"0 + {len(orphaned)} taken over" in plans_page.metrics_table_html(group)


def test_the_note_listener_never_loads_from_the_run_it_is_handed() -> None:
    """The scheduler may hand a detached run, on which loading an attribute raises: the listener
    reads only what the object holds, and never raises into the scheduler."""
    from lagassign.workflow import listener

    class Detached:
        def __getattr__(self, name: str) -> Any:
            raise RuntimeError(f"not bound to a session: {name}")

    assert listener._identity(Detached()) is None
    listener.on_dag_run_success(Detached(), "success")  # no exception, nothing started
    held = type("Run", (), {})()
    held.__dict__.update(dag_id="lagassign_review", run_id="manual__1")
    assert listener._identity(held) == ("lagassign_review", "manual__1")


def test_a_failed_plan_links_the_log_of_the_step_the_store_recorded() -> None:
    """The step a plan failed at is the store's field (plans.failed_step), never read back from
    the error's text."""
    plan = {
        "id": 7,
        "status": "failed",
        "trigger": "manual",
        "dag_id": "lagassign_rebalance",
        "run_id": "manual__1",
        "error": "the broker went away",
        "failed_step": "snapshot",
        "groups": [],
    }
    html = plans_page.plan_html(plan)
    assert 'href="/dags/lagassign_rebalance/runs/manual__1/tasks/snapshot"' in html
    worded = {**plan, "error": "step evaluate failed: the driver died", "failed_step": None}
    html = plans_page.plan_html(worded)  # the text names a step, the record none: the run's link
    assert "/tasks/" not in html and 'href="/dags/lagassign_rebalance/runs/manual__1"' in html
