"""The operators' side (issue 14): run types, trigger forms, causes of failures, the gate's log,
the plan page's colours and moves, review-then-publish, history and paging.

Everything runs for real in this process: Airflow's own DagRunType, Param and DagBag, the task
callables with a real SQLite audit store (through an Airflow connection given as an
environment variable), real evaluations and gate decisions. No broker is needed: the steps
tested here fail or finish before any Kafka request (a missing groups file is read first;
review publishing is a dry run).
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from dagbagkit import REPO_DAGS, bare_airflow_env, dagbag_report
from lagassign.core.evaluate import evaluate
from lagassign.core.gate import decide_all
from lagassign.core.strategies import strategy_names
from lagassign.store import AuditStore
from testpaths import REPO

pytestmark = pytest.mark.airflow

SKEWED = json.loads((REPO / "examples" / "skewed-group.json").read_text())
GROUP = SKEWED["group"]


@pytest.fixture
def store_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The audit store the tasks open: Airflow connection lagassign_db from the environment."""
    url = f"sqlite:///{tmp_path / 'audit.db'}"
    conn = {"conn_type": "generic", "extra": {"url": url}}
    monkeypatch.setenv("AIRFLOW_CONN_LAGASSIGN_DB", json.dumps(conn))
    monkeypatch.setenv(
        "AIRFLOW_CONN_LAGASSIGN_KAFKA", json.dumps({"conn_type": "generic", "host": "127.0.0.1", "port": 1})
    )
    monkeypatch.setenv("LAGASSIGN_BASE_DIR", str(tmp_path / "runs"))
    return url


def _plan_of(url: str, *cases: dict[str, Any], threshold: float = 1.1, **start: Any) -> int:
    with AuditStore(url) as store:
        plan_id = store.start_plan(
            start.pop("trigger", "manual"),
            triggered_by=start.pop("by", "alice"),
            dag_id="lagassign_rebalance",
            run_id=start.pop("run_id", f"manual__{len(store.list_plans())}"),
            parameters={"threshold": threshold, "apply": False},
        )
        evaluations = [evaluate(c) for c in cases]
        store.record_evaluations(plan_id, evaluations)
        store.record_decisions(plan_id, decide_all(evaluations, threshold))
        store.finish_plan(plan_id, "succeeded")
    return plan_id


# -- defect 1: scheduled runs recorded as manual ---------------------------------------------


def test_run_types_become_the_audit_trigger() -> None:
    # What a task's context holds: the Task SDK's DagRunType (a str Enum whose str() is
    # 'DagRunType.SCHEDULED'), not airflow.utils.types.DagRunType.
    from airflow.sdk.api.datamodels._generated import DagRunType
    from lagassign.workflow.tasks import trigger_of

    assert str(DagRunType.SCHEDULED) == "DagRunType.SCHEDULED"  # what the bug compared with "scheduled"
    assert trigger_of(DagRunType.SCHEDULED) == "scheduled"
    assert trigger_of(str(DagRunType.SCHEDULED)) == "scheduled"
    assert trigger_of("scheduled") == "scheduled"
    assert trigger_of(DagRunType.MANUAL) == "manual"
    assert trigger_of(DagRunType.ASSET_TRIGGERED) == "manual"


def test_a_scheduled_start_is_recorded_as_scheduled(store_url: str, caplog: pytest.LogCaptureFixture) -> None:
    from airflow.sdk.api.datamodels._generated import DagRunType
    from lagassign.workflow import tasks

    caplog.set_level(logging.INFO, logger="lagassign")
    run = tasks.start({}, "lagassign_daily", "scheduled__2026-11-23", DagRunType.SCHEDULED, None)
    with AuditStore(store_url) as store:
        plan = store.get_plan(run["plan_id"])
    assert plan["trigger"] == "scheduled" and plan["triggered_by"] is None
    assert "scheduled run by the scheduler" in caplog.text
    # the run's log links to the plan's page (Airflow -> plan; the page links back to the run)
    assert f"/lagassign/plans/{run['plan_id']}" in caplog.text


# -- defects 2, 3, 4: trigger forms submittable with their defaults, rules said, daily settings


def _forms() -> dict[str, dict[str, Any]]:
    from lagassign.workflow.dags import make_dag, make_review_dag

    dags = [make_dag("lagassign_rebalance"), make_dag("lagassign_daily"), make_review_dag()]
    return {d.dag_id: {k: d.params.get_param(k) for k in d.params} for d in dags}


def test_every_form_field_can_be_submitted_with_its_default() -> None:
    """Airflow's form treats "" as missing, and a required (non-null) field without a value
    disables Trigger; every field must have a usable default or allow null."""
    from airflow.sdk.definitions.param import ParamsDict

    forms = _forms()
    assert set(forms["lagassign_daily"]) == set(
        forms["lagassign_rebalance"]
    )  # the daily form shows what applies
    for dag_id, params in forms.items():
        for name, param in params.items():
            types = param.schema.get("type")
            allows_null = isinstance(types, list) and "null" in types
            assert param.value not in ("", None) or allows_null, (dag_id, name)
            assert param.description, (dag_id, name)
        ParamsDict(dict(params)).validate()  # the defaults pass the schema


def test_number_fields_are_not_clamped_by_the_form_and_say_their_range() -> None:
    """The form clamps a number to the schema's ``minimum``/``maximum`` on blur, silently
    (threshold "0.5" became 1); the ranges are in the descriptions and checked at start."""
    for name, param in _forms()["lagassign_rebalance"].items():
        if "number" in str(param.schema.get("type")) or "integer" in str(param.schema.get("type")):
            assert "minimum" not in param.schema and "maximum" not in param.schema, name
            assert re.search(r"≥|>|\[0, 1\)", param.description or ""), name
        assert "format" not in param.schema, name  # a format error comes back as a raw dump


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"threshold": 0.5}, "threshold must be a number ≥ 1.0 (max/mean member lag), got 0.5"),
        ({"threshold": -1}, "threshold must be a number ≥ 1.0"),
        ({"min_improvement": 1.5}, "min_improvement must be a fraction in [0, 1)"),
        ({"groups": "("}, "groups is not a valid regular expression"),
    ],
)
def test_bad_values_fail_at_start_with_one_line_recorded(
    store_url: str, params: dict[str, Any], message: str
) -> None:
    from lagassign.workflow import tasks

    with pytest.raises(tasks.StepFailed) as raised:
        tasks.start(params, "lagassign_rebalance", f"manual__{len(str(params))}", "manual", "alice")
    assert message in str(raised.value) and "\n" not in str(raised.value)
    with AuditStore(store_url) as store:
        (plan,) = store.list_plans()
    assert plan["status"] == "failed" and plan["error"].startswith("step start failed: ")
    assert message in plan["error"]


def test_daily_settings_come_from_defaults_variables_then_the_trigger() -> None:
    from lagassign.workflow.forms import daily_settings

    defaults = {"threshold": 1.1, "apply": False, "groups": ".*"}
    settings, sources = daily_settings(defaults, {"threshold": 1.3}, "true", None)
    assert settings == {"threshold": 1.3, "apply": True, "groups": ".*"}
    assert sources == {
        "threshold": "Variable lagassign_daily_params",
        "apply": "Variable lagassign_apply",
        "groups": "default",
    }
    settings, sources = daily_settings(defaults, {}, None, {"apply": False, "groups": "a.*"})
    assert settings["apply"] is False and sources["groups"] == "trigger"


def test_the_gate_logs_every_group_also_those_not_evaluated(
    store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    from lagassign.workflow import tasks

    caplog.set_level(logging.INFO, logger="lagassign")
    with AuditStore(store_url) as store:
        plan_id = store.start_plan("scheduled", None, "lagassign_daily", "scheduled__1", {})
        idle = {
            "group": "idle",
            "members": 0,
            "partitions": 0,
            "best": None,
            "lower_bound_max_lag": None,
            "results": [],
            "error": "group idle: empty group (no members)",
        }
        store.record_evaluations(plan_id, [evaluate(SKEWED), idle])
    tasks.gate({"plan_id": plan_id, "params": {}})
    lines = [r.getMessage() for r in caplog.records]
    assert any(
        line.startswith("group idle: stop: not evaluated:") and "no consumer" in line for line in lines
    )
    assert any(line.startswith(f"group {SKEWED['group']}: GO:") for line in lines)


# -- defect 5: the cause of a failure, on the plan and linked to the task's log ---------------


def test_a_failed_step_records_its_cause_and_the_page_links_its_log(store_url: str, tmp_path: Path) -> None:
    from lagassign.workflow import plans_page, tasks

    missing = tmp_path / "no-such-groups.yaml"
    run = tasks.start({"groups_file": str(missing)}, "lagassign_rebalance", "manual__x", "manual", "alice")
    with pytest.raises(tasks.StepFailed, match="step snapshot failed: cannot read groups file"):
        tasks.snapshot(run, "lagassign_kafka")
    with pytest.raises(tasks.StepFailed):
        tasks.finish(run, {"start": True})
    with AuditStore(store_url) as store:
        plan = store.get_plan(run["plan_id"])
    assert plan["status"] == "failed"
    assert (
        plan["error"] == f"step snapshot failed: cannot read groups file {missing}: No such file or directory"
    )
    html = plans_page.plan_html(plan)
    assert "Why it failed" in html and "what to do: set the groups_file parameter" in html
    assert 'href="/dags/lagassign_rebalance/runs/manual__x/tasks/snapshot"' in html
    assert 'href="/dags/lagassign_rebalance/runs/manual__x"' in html


def test_a_failed_spark_step_says_where_its_cause_is(store_url: str) -> None:
    from lagassign.workflow import tasks

    run = tasks.start({}, "lagassign_rebalance", "manual__spark", "manual", "alice")
    with pytest.raises(tasks.StepFailed, match="step evaluate failed: the Spark job"):
        tasks.finish(run, {"start": True, "snapshot": True})


# -- defects 6, 7: colours per strategy, a stopped group moves nothing ------------------------


def test_each_strategy_keeps_one_colour_whatever_is_chosen() -> None:
    from lagassign.workflow import plans_page

    colours = plans_page.STRATEGY_COLOURS
    assert set(strategy_names()) <= set(colours) and len(set(colours.values())) == len(colours)

    def rgb(c: str) -> tuple[int, ...]:
        return tuple(int(c[i : i + 2], 16) for i in (1, 3, 5))

    for a in colours:  # no two strategies look alike
        for b in colours:
            if a < b:
                assert sum(abs(x - y) for x, y in zip(rgb(colours[a]), rgb(colours[b]), strict=True)) > 60, (
                    a,
                    b,
                )
    ev = evaluate(SKEWED)
    group = {**ev, "decision": decide_all([ev])[0].to_dict()}
    other = {**group, "decision": {**group["decision"], "chosen": "lag"}}
    for g in (group, other):
        svg = plans_page.lag_chart_svg(g, every=True)
        for name in ("current", "lag", "lag-optimal"):
            bars = re.findall(rf'data-strategy="{name}"[^>]*fill="(#[0-9a-f]+)"', svg)
            assert bars and set(bars) == {colours[name]}, name


def test_a_group_the_gate_stopped_shows_no_moves(tmp_path: Path) -> None:
    from lagassign.workflow import plans_page

    url = f"sqlite:///{tmp_path / 'a.db'}"
    plan_id = _plan_of(url, SKEWED, threshold=50.0)
    with AuditStore(url) as store:
        plan = store.get_plan(plan_id)
    (group,) = plan["groups"]
    assert group["decision"]["go"] is False and group["decision"]["candidate"]
    html = plans_page.group_html(group, plan)
    assert "Moves:" not in html and "Nothing moves: the gate stopped this plan." in html
    assert "candidate, not applied" in html
    # the gate said stop: no primary button, an override behind a confirmation with the numbers
    assert "publish this plan" not in html and "publish anyway (lag-optimal)" in html
    assert 'name="confirm" value="yes" required' in html and "the gate said stop:" in html
    assert re.search(r"max lag [\d,]+ → [\d,]+ messages \(\d+% better\)", html)
    assert "re-plan this group" in html


# -- review, then publish --------------------------------------------------------------------


def test_publishing_a_reviewed_stopped_plan_is_its_own_audited_plan(tmp_path: Path) -> None:
    from lagassign.pipeline import ParamsError
    from lagassign.pipeline.review import ReviewRequest, publish_reviewed

    url = f"sqlite:///{tmp_path / 'a.db'}"
    reviewed = _plan_of(url, SKEWED, threshold=50.0)
    lines: list[str] = []
    with AuditStore(url) as store:  # as its snapshot recorded the group: the new plan keeps it
        store.record_evaluations(
            reviewed, [{**evaluate(SKEWED), "group_type": "classic", "assignor": "range"}]
        )
        asked = ReviewRequest("bob", "lagassign_review", "manual__r1", dry_run=True)
        done = publish_reviewed(store, None, reviewed, SKEWED["group"], asked, lines.append)
        new = store.get_plan(done["plan_id"])
        old = store.get_plan(reviewed)
        with pytest.raises(ParamsError, match="has no group 'nope'"):
            publish_reviewed(
                store, None, reviewed, "nope", ReviewRequest("bob", "lagassign_review", "manual__r2", True)
            )
    assert done["plan_id"] != reviewed and new["status"] == "succeeded"
    assert new["trigger"] == "manual" and new["triggered_by"] == "bob" and new["dag_id"] == "lagassign_review"
    assert new["parameters"]["reviewed_plan"] == reviewed
    (g,) = new["groups"]
    assert g["decision"]["go"] is True and g["decision"]["chosen"] == "lag-optimal"
    assert g["decision"]["reason"].startswith(
        f"publish requested by bob on review of plan {reviewed} (the gate had said stop:"
    )
    assert "dry run" in (g["decision"]["outcome"] or "")
    assert (g["group_type"], g["assignor"]) == ("classic", "range")
    assert old["groups"][0]["decision"]["go"] is False  # the reviewed plan is left as it was


def test_a_plan_without_a_candidate_cannot_be_published() -> None:
    from lagassign.pipeline import ParamsError
    from lagassign.pipeline.review import reviewed_decision

    with pytest.raises(ParamsError, match="not evaluated"):
        reviewed_decision({"group": "g", "error": "empty group (no members)"}, 1, "bob")
    with pytest.raises(ParamsError, match="already published"):
        reviewed_decision(
            {
                "group": "g",
                "decision": {"group": "g", "go": True, "reason": "r", "chosen": "lag"},
                "publications": [{"state": "published"}],
            },
            1,
            "bob",
        )


def test_replan_keeps_the_plans_settings_for_one_group_with_apply_off() -> None:
    from lagassign.workflow.plan_actions import replan_conf

    conf = replan_conf("orders.v2", {"threshold": 1.3, "apply": True, "groups": ".*", "groups_file": None})
    assert conf == {"threshold": 1.3, "groups": r"orders\.v2", "apply": False}


def test_actions_accept_only_same_origin_posts() -> None:
    from lagassign.workflow.web import same_origin
    from starlette.requests import Request

    def request(**headers: str) -> Request:
        raw = [(k.encode(), v.encode()) for k, v in {"host": "127.0.0.1:18080", **headers}.items()]
        return Request(
            {
                "type": "http",
                "method": "POST",
                "path": "/",
                "headers": raw,
                "scheme": "http",
                "server": ("127.0.0.1", 18080),
                "query_string": b"",
            }
        )

    assert same_origin(request(origin="http://127.0.0.1:18080"))
    assert not same_origin(request(origin="http://evil.example"))
    assert not same_origin(request())


# -- history, what changed, the list ----------------------------------------------------------


def test_history_of_a_group_across_plans(tmp_path: Path) -> None:
    from lagassign.workflow import plans_page

    url = f"sqlite:///{tmp_path / 'a.db'}"
    first = _plan_of(url, SKEWED, threshold=50.0)
    second = _plan_of(url, SKEWED)
    with AuditStore(url) as store:
        rows = store.group_history(SKEWED["group"])
        previous = store.previous_groups(second, [SKEWED["group"]])
        plan = store.get_plan(second)
    assert [r["plan_id"] for r in rows] == [second, first]
    assert rows[0]["go"] is True and rows[1]["go"] is False
    assert rows[0]["current_max_lag"] == plan["groups"][0]["decision"]["current_max_lag"]
    assert rows[0]["plan_max_lag"] < rows[0]["current_max_lag"]
    html = plans_page.history_html(SKEWED["group"], rows, [])
    assert html.count("<polyline") == 2 and f'href="plans/{first}#group-' in html
    assert "no instance announces itself" in html
    (prev_id, prev) = previous[SKEWED["group"]]
    assert prev_id == first
    assert plans_page.changes_since(plan["groups"][0], prev) == ["gate stop → go"]
    page = plans_page.plan_html(plan, previous=previous)
    assert f'since <a href="{first}">plan {first}</a>: gate stop → go' in page


def test_the_list_says_dag_reason_lag_change_and_pages(tmp_path: Path) -> None:
    from lagassign.workflow import plans_page

    url = f"sqlite:///{tmp_path / 'a.db'}"
    ids = [_plan_of(url, SKEWED) for _ in range(3)]
    with AuditStore(url) as store:
        page2 = store.list_plans(limit=2, offset=2)
        plans = store.list_plans(limit=2)
        html = plans_page.plans_list_html(
            plans, store.plan_details(p["id"] for p in plans), limit=2, more=True
        )
    assert [p["id"] for p in page2] == [ids[0]]
    assert "lagassign_rebalance" in html and "lag-optimal lowers max lag" in html
    assert re.search(r"[\d,]+ → [\d,]+", html)
    assert 'href="plans?limit=2&amp;offset=2">older →' in html


def test_dagbag_has_the_five_dags_and_no_errors(tmp_path: Path) -> None:
    report = (
        "errors = {k: str(v) for k, v in bag.import_errors.items()}\n"
        "print(json.dumps({'dags': sorted(bag.dags), 'errors': errors}))\n"
    )
    info = dagbag_report(report, bare_airflow_env(tmp_path))
    assert info["errors"] == {}
    assert info["dags"] == REPO_DAGS


def test_moves_show_each_partitions_lag_from_the_plans_snapshot(tmp_path: Path) -> None:
    from lagassign.tables.synthetic import write_snapshot
    from lagassign.workflow import plans_page
    from lagassign.workflow.plan_sources import partition_lags

    folder = write_snapshot([SKEWED], tmp_path / "snapshot")
    lags = partition_lags(str(folder), {GROUP})
    given = {(p["topic"], p["partition"]): p.get("lag") for p in SKEWED["partitions"]}
    assert {k: v for k, v in lags[GROUP].items() if given.get(k) is not None} == {
        k: v for k, v in given.items() if v is not None
    }
    ev = evaluate(SKEWED)
    group = {**ev, "decision": decide_all([ev])[0].to_dict()}
    html = plans_page.moves_table_html(group, lags[GROUP])
    (topic, part, *_), *_ = plans_page.compute_moves(
        next(r for r in ev["results"] if r["strategy"] == "current")["assignment"],
        next(r for r in ev["results"] if r["strategy"] == "lag-optimal")["assignment"],
    )
    assert (
        f"<td>{topic}</td><td class=num>{part}</td><td class=num>{lags[GROUP][(topic, part)]:,}</td>" in html
    )
    assert partition_lags(str(tmp_path / "gone"), {GROUP}) == {}


def _published_twice(url: str) -> list[int]:
    """Two plans of the skewed group that went on, published as versions 1 and 2."""
    from datetime import UTC, datetime, timedelta

    ids = []
    for v in (1, 2):
        pid = _plan_of(url, SKEWED)
        with AuditStore(url) as store:
            at = datetime(2026, 5, 1, tzinfo=UTC) + timedelta(hours=v)
            store.set_snapshot(pid, None, at)
            store.mark_publication_pending(pid, GROUP, snapshot_at=at)
            store.mark_published(GROUP, v)
        ids.append(pid)
    return ids


def test_rolling_back_publishes_an_old_versions_members_as_a_new_audited_plan(tmp_path: Path) -> None:
    from lagassign.pipeline import ParamsError
    from lagassign.pipeline.review import ReviewRequest, roll_back
    from lagassign.workflow import plans_page

    url = f"sqlite:///{tmp_path / 'a.db'}"
    first, _second = _published_twice(url)
    with AuditStore(url) as store:
        done = roll_back(
            store, None, GROUP, 1, ReviewRequest("carol", "lagassign_review", "manual__rb", True)
        )
        plan = store.get_plan(done["plan_id"])
        with pytest.raises(ParamsError, match="version 7 was not published"):
            roll_back(store, None, GROUP, 7, ReviewRequest("carol", "lagassign_review", "manual__rb2", True))
        rows = store.group_history(GROUP)
    assert plan["triggered_by"] == "carol" and plan["status"] == "succeeded"
    assert plan["parameters"] == {"action": "rollback", "group": GROUP, "version": 1, "dry_run": True}
    (g,) = plan["groups"]
    assert (
        g["decision"]["reason"] == f"roll back to version 1 (lag-optimal, published by plan {first}) by carol"
    )
    assert "dry run" in g["decision"]["outcome"]
    html = plans_page.history_html(GROUP, rows, None)
    # every published version but the newest (in force) can be rolled back to
    assert "roll back to version 1" in html and "roll back to version 2" not in html
    assert 'action="actions/rollback"' in html and "cannot be read" in html


def test_live_instances_alive_or_dead_with_version_lag_rate_and_last_seen() -> None:
    from lagassign.core.liveness import InstanceStatus, Liveness
    from lagassign.workflow import plans_page
    from lagassign.workflow.plan_sources import instance_rows

    now = 1_800_000_000_000
    table = Liveness()
    table.apply(
        "g", "w0", InstanceStatus("g", "w0", now - 2_000, version=3, rate=120.5, lag=40, host="h0"), now
    )
    table.apply("g", "w1", InstanceStatus("g", "w1", now - 90_000, version=2, lag=9_000), now)
    table.apply("other", "x", InstanceStatus("other", "x", now), now)
    rows = instance_rows(table, "g", now)
    assert [(r["instance"], r["alive"], r["version"], r["lag"]) for r in rows] == [
        ("w0", True, 3, 40),
        ("w1", False, 2, 9_000),
    ]
    assert rows[0]["last_seen"] == datetime(2027, 1, 15, 7, 59, 58, tzinfo=UTC)  # 2 s before now
    html = plans_page.live_instances_html(rows)
    assert "<span class=go>alive</span>" in html and "<span class=err>dead</span>" in html
    assert "120.5" in html and "9,000" in html


def test_history_marks_failovers_and_says_who(tmp_path: Path) -> None:
    from lagassign.workflow import plans_page

    url = f"sqlite:///{tmp_path / 'a.db'}"
    _plan_of(url, SKEWED, trigger="failover", by="asset event")
    _plan_of(url, SKEWED, by="dora")
    with AuditStore(url) as store:
        html = plans_page.history_html(GROUP, store.group_history(GROUP), [])
    assert '<tr class="failover">' in html and '<span class="stop">failover by asset event</span>' in html
    assert "<td>manual by dora</td>" in html


@pytest.mark.db
def test_history_previous_paging_and_rollback_on_postgresql(pg_url: str) -> None:
    """The new store queries (history, previous plan, offset, publication by version) on the
    real PostgreSQL too."""
    from lagassign.pipeline.review import ReviewRequest, roll_back

    stopped = _plan_of(pg_url, SKEWED, threshold=50.0)
    first, second = _published_twice(pg_url)
    with AuditStore(pg_url) as store:
        rows = store.group_history(GROUP)
        assert [r["plan_id"] for r in rows] == [second, first, stopped]
        assert [r["published"] for r in rows] == [True, True, False]
        assert store.previous_groups(second, [GROUP])[GROUP][0] == first
        assert [p["id"] for p in store.list_plans(limit=1, offset=2)] == [stopped]
        assert store.publication(GROUP, 2)["plan_id"] == second
        done = roll_back(store, None, GROUP, 1, ReviewRequest("erin", "lagassign_review", "manual__pg", True))
        assert store.get_plan(done["plan_id"])["status"] == "succeeded"


def test_a_subscribe_group_offers_no_publish_button(tmp_path: Path) -> None:
    """A discovered subscribe() group's consumers cannot follow a static plan: the page says so
    instead of offering a publication the publish step would refuse."""
    from lagassign.tables.synthetic import write_snapshot
    from lagassign.workflow import plans_page
    from lagassign.workflow.plan_sources import group_rows_of, kinds_of

    folder = write_snapshot([SKEWED], tmp_path / "snapshot")  # read as a subscribe() group
    kinds = kinds_of(group_rows_of(str(folder), {GROUP}))
    assert kinds == {GROUP: "subscribe"}
    url = f"sqlite:///{tmp_path / 'a.db'}"
    with AuditStore(url) as store:
        plan = store.get_plan(_plan_of(url, SKEWED, threshold=50.0))
    html = plans_page.plan_html(plan, kinds=kinds)
    assert "publish this plan" not in html and "not publishable: a subscribe() group" in html
    assert "re-plan this group" in html
    assert "publish anyway" in plans_page.plan_html(plan, kinds={GROUP: "assign"})
    assert group_rows_of(str(tmp_path / "gone"), {GROUP}) == {}


def test_review_without_kafka_settings_fails_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lagassign.workflow import tasks

    monkeypatch.setenv(
        "AIRFLOW_CONN_LAGASSIGN_DB",
        json.dumps({"conn_type": "generic", "extra": {"url": f"sqlite:///{tmp_path / 'a.db'}"}}),
    )
    monkeypatch.delenv("AIRFLOW_CONN_LAGASSIGN_KAFKA", raising=False)
    with pytest.raises(tasks.StepFailed, match=r"^no Kafka settings to publish with: "):
        tasks.review(
            {"plan_id": 1, "group": GROUP}, "lagassign_kafka", "lagassign_review", "manual__k", "bob"
        )
    with pytest.raises(tasks.StepFailed, match="action must be publish or rollback"):
        tasks.review({"action": "nope", "group": GROUP}, "lagassign_kafka", "lagassign_review", "m", "bob")


def test_a_run_without_groups_file_takes_the_workers_one(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The form's empty groups file falls back to LAGASSIGN_GROUPS_FILE (as the failover DAG
    does), and the plan records the file it used; a file named by the run still wins."""
    from lagassign.workflow import tasks

    workers = tmp_path / "workers.yaml"
    monkeypatch.setenv("LAGASSIGN_GROUPS_FILE", str(workers))
    run = tasks.start({"groups_file": ""}, "lagassign_rebalance", "manual__gf", "manual", "alice")
    assert run["params"]["groups_file"] == str(workers)
    with AuditStore(store_url) as store:
        assert store.get_plan(run["plan_id"])["parameters"]["groups_file"] == str(workers)
    named = tasks.start({"groups_file": "/x.yaml"}, "lagassign_rebalance", "manual__gf2", "manual", "alice")
    assert named["params"]["groups_file"] == "/x.yaml"
    monkeypatch.delenv("LAGASSIGN_GROUPS_FILE")
    none = tasks.start({}, "lagassign_rebalance", "manual__gf3", "manual", "alice")
    assert none["params"]["groups_file"] is None


def test_a_run_ends_with_its_outcomes_and_fails_when_a_publish_was_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The final line of a run says each group's badge; a refused or failed publication fails
    the task (a SystemExit: Airflow logs one line, no traceback), a dry run or gate stop does not."""
    from lagassign.workflow import tasks

    ok = {
        "id": 7,
        "status": "succeeded",
        "parameters": {"apply": True, "dry_run": True},
        "groups": [
            {"group": "g", "decision": {"go": True, "outcome": "dry run: would publish lag as version 2"}}
        ],
    }
    lagassign_log = logging.getLogger("lagassign")
    lagassign_log.addHandler(caplog.handler)  # Airflow's logging setup, run at import, drops it from root
    try:
        with caplog.at_level(logging.INFO, logger="lagassign"):
            tasks.conclude(ok)
    finally:
        lagassign_log.removeHandler(caplog.handler)
    assert "plan 7: dry run: would publish v2: g; page " in caplog.text
    held = {
        **ok,
        "groups": [
            {
                "group": "g",
                "decision": {"go": True, "outcome": "skipped: version 3 is being published by plan 6"},
            }
        ],
    }
    with pytest.raises(tasks.StepFailed, match="plan 7: refused: version held: g") as raised:
        tasks.conclude(held)
    assert isinstance(raised.value, SystemExit) and not isinstance(raised.value, Exception)
