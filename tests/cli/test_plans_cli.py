"""`lagassign plans list|show` over a real SQLite audit store (test_store covers both back ends)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from groups import skewed_orders
from lagassign.cli import main
from lagassign.core.evaluate import evaluate
from lagassign.core.gate import decide_all
from lagassign.store import AuditStore
from testpaths import EXAMPLES

T0 = datetime(2026, 5, 1, 6, 0, tzinfo=UTC)
ORDERS = skewed_orders([900_000, 85_738, 100, 392_358])
CALM = {
    "group": "calm",
    "auto_offset_reset": "earliest",
    "members": [
        {"id": "C0", "topics": ["t"], "owned": [["t", 0]]},
        {"id": "C1", "topics": ["t"], "owned": [["t", 1]]},
    ],
    "partitions": [{"topic": "t", "partition": 0, "lag": 100}, {"topic": "t", "partition": 1, "lag": 101}],
}


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """An audit store with a scheduled plan that failed and a manual one that published."""
    url = f"sqlite:///{tmp_path / 'audit.db'}"
    monkeypatch.setenv("LAGASSIGN_DB_URL", url)
    with AuditStore(url) as store:
        failed = store.start_plan("scheduled", dag_id="lagassign_daily", run_id="scheduled__1", created_at=T0)
        store.finish_plan(failed, "failed", error="snapshot: coordinator not available")
        manual = store.start_plan(
            "manual",
            "alice",
            dag_id="lagassign_rebalance",
            run_id="manual__2",
            parameters={"threshold": 1.1, "apply": True},
            snapshot_uri="/snapshots/2",
            snapshot_at=T0 + timedelta(days=1),
            created_at=T0 + timedelta(days=1, hours=1),
        )
        # orders as a snapshot of a KIP-848 group records it; calm as a case file, without
        evaluations = [{**evaluate(ORDERS), "group_type": "consumer", "assignor": "uniform"}, evaluate(CALM)]
        store.record_evaluations(manual, [*evaluations, {"group": "broken", "error": "offsets unreadable"}])
        decisions = decide_all(evaluations)
        store.record_decisions(manual, decisions)
        pub = store.mark_publication_pending(manual, "orders")
        store.mark_published("orders", pub["version"], published_at=T0 + timedelta(days=1, hours=2))
        store.finish_plan(manual, "succeeded")
        plan = store.get_plan(manual)
    return {"url": url, "failed": failed, "manual": manual, "decisions": decisions, "plan": plan}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_list_is_a_table_newest_first(db: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, "plans", "list")
    assert rc == 0 and err == ""
    header, *rows = out.splitlines()
    columns = "id created (UTC) cluster status trigger groups go published dag run outcome"
    assert " ".join(header.split()) == columns
    assert [r.split()[0] for r in rows] == [str(db["manual"]), str(db["failed"])]
    # recorded with no cluster known: listed as such
    assert "2026-05-02 07:00:00  unknown  succeeded  manual by alice" in rows[0]
    assert rows[0].split("manual__2")[0].split()[-5:] == ["3", "1", "1", "lagassign_rebalance", "/"]
    # the same outcome badges as the pages, one line per plan
    assert (
        "failed: not evaluated: offsets unreadable: broken; gate stop: calm; published v1: orders" in rows[0]
    )
    assert "failed     scheduled" in rows[1]


def test_list_json_for_machines(db: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "plans", "list", "--json")
    plans = json.loads(out)
    assert rc == 0 and [p["id"] for p in plans] == [db["manual"], db["failed"]]
    assert datetime.fromisoformat(plans[0]["created_at"]) == T0 + timedelta(days=1, hours=1)
    assert (plans[0]["groups"], plans[0]["go"], plans[0]["published"]) == (3, 1, 1)
    assert plans[1]["error"] == "snapshot: coordinator not available"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--group", "orders"], ["manual"]),
        (["--group", "nobody"], []),
        (["--since", "2026-05-02"], ["manual"]),
        (["--until", "2026-05-01"], ["failed"]),
        (["--since", "2026-05-01T05:00", "--until", "2026-05-02T07:00+00:00"], ["manual", "failed"]),
        (["--limit", "1"], ["manual"]),
    ],
)
def test_list_filters(
    db: dict[str, Any], capsys: pytest.CaptureFixture[str], args: list[str], expected: list[str]
) -> None:
    rc, out, _ = run(capsys, "plans", "list", "--json", *args)
    assert rc == 0 and [p["id"] for p in json.loads(out)] == [db[k] for k in expected]


def test_list_for_one_group_says_what_the_cluster_ran(
    db: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, _ = run(capsys, "plans", "list", "--group", "orders")
    header, row = out.splitlines()
    assert rc == 0 and header.endswith("type / assignor") and row.endswith("consumer / uniform")
    rc, out, _ = run(capsys, "plans", "list", "--group", "calm", "--json")
    (plan,) = json.loads(out)
    assert (plan["group_type"], plan["assignor"]) == (None, None)  # recorded from a case file
    rc, out, _ = run(capsys, "plans", "list", "--group", "calm")
    assert out.splitlines()[1].endswith("- / -")
    rc, out, _ = run(capsys, "plans", "list", "--json")
    assert all("assignor" not in p for p in json.loads(out))  # only for one group


def test_list_of_an_empty_store_says_so(db: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "plans", "list", "--group", "nobody")
    assert (rc, out) == (0, f"no plans match in the audit store {db['url']}\n")
    empty = db["url"].replace("audit.db", "empty.db")
    AuditStore(empty).close()
    rc, out, _ = run(capsys, "plans", "list", "--db", empty)
    assert (rc, out) == (0, f"no plans in the audit store {empty}\n")  # which store was read


def test_show_tells_the_story(db: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, "plans", "show", str(db["manual"]))
    assert rc == 0 and err == ""
    orders, calm = (d for d in db["decisions"])
    assert out.startswith(f"plan {db['manual']}: succeeded, manual by alice\n  cluster   unknown\n")
    assert "  dag run   lagassign_rebalance / manual__2" in out
    assert "  snapshot  /snapshots/2 (taken 2026-05-02 06:00:00 UTC)" in out
    assert '  parameters {"apply": true, "threshold": 1.1}' in out
    assert f"group orders: go: {orders.reason}" in out
    assert f"group calm: stop: {calm.reason}" in out and "≤ threshold 1.10" in calm.reason
    assert f"plan version 1 ({orders.chosen}): published at 2026-05-02 08:00:00 UTC" in out
    assert (
        "group broken: no gate decision recorded\n  outcome   failed: not evaluated: offsets unreadable"
        in out
    )
    assert "group orders: go:" in out and "  outcome   published v1" in out
    assert "  current " in out and "<- best" in out  # the evaluation table, indented
    # what the cluster runs, for the group whose snapshot said; nothing for the others
    assert (
        f"group orders: go: {orders.reason}\n"
        "  group type consumer · assignor uniform · Kafka's row: uniform\n" in out
    )
    assert out.count("group type") == 1 and "assignor" not in out.split("group calm")[1]


def test_show_gives_catch_up_times_and_lag_in_seconds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lagassign.tables.snapshot import Snapshot

    url = f"sqlite:///{tmp_path / 'audit.db'}"
    monkeypatch.setenv("LAGASSIGN_DB_URL", url)
    case = json.loads((EXAMPLES / "unequal-consumers.json").read_text())
    name = case["group"]
    folder = Snapshot(
        groups=[{"group": name, "kind": "assign"}],
        partitions=[{"group": name, "topic": "t", "partition": 0, "end": 9, "lag": 9, "lag_s": 4_000.0}],
    ).write(tmp_path / "snapshot")
    with AuditStore(url) as store:
        plan_id = store.start_plan("manual", snapshot_uri=str(folder), snapshot_at=T0)
        evaluations = [evaluate(case), evaluate(CALM)]
        store.record_evaluations(plan_id, evaluations)
        store.record_decisions(plan_id, decide_all(evaluations))
    rc, out, _ = run(capsys, "plans", "show", str(plan_id))
    assert rc == 0
    calm, timed = out.split("\ngroup calm:", 1)[1].split(f"\ngroup {name}:", 1)
    assert (
        "  max catch-up now 2 h 30 min → 1 h 15 min under drain-optimal (no plan below 1 h 13 min)\n"
        "  catch-up per member now → drain-optimal: fast 48 min → 1 h 12 min, "
        "slow 2 h 30 min → 1 h 15 min\n"
        "  lag in time up to 1 h 7 min (t-0)\n"
    ) in timed
    assert "catch-up" not in calm and "lag in time" not in calm  # no capacities: as before


def test_history_of_a_group_with_catch_up_where_planned_in_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``plans history GROUP``: the group across plans, max lag now and under the plan, and max
    catch-up now and under the plan where the group has capacities (no such columns where not)."""
    url = f"sqlite:///{tmp_path / 'audit.db'}"
    monkeypatch.setenv("LAGASSIGN_DB_URL", url)
    case = json.loads((EXAMPLES / "unequal-consumers.json").read_text())
    with AuditStore(url) as store:
        for hours in (0, 1):
            plan_id = store.start_plan(
                "manual", "bob", created_at=T0 + timedelta(hours=hours), cluster="lkc-prod"
            )
            evaluations = [evaluate(case), evaluate(CALM)]
            store.record_evaluations(plan_id, evaluations)
            store.record_decisions(plan_id, decide_all(evaluations))
    rc, out, _ = run(capsys, "plans", "history", case["group"])
    assert rc == 0
    head, newest, oldest = out.splitlines()
    assert head.split("  ")[0] == "plan" and "catch-up now" in head and "catch-up under plan" in head
    assert newest.strip().startswith("2  2026-05-01 07:00:00  lkc-prod  manual by bob  stop")
    # max lag 72,000 now; drain-optimal gives the fast member more lag but halves the catch-up time
    assert "72,000  drain-optimal" in newest and newest.endswith("2 h 30 min           1 h 15 min  -")
    assert oldest.strip().startswith("1  2026-05-01 06:00:00")
    rc, out, _ = run(capsys, "plans", "history", "calm")
    assert rc == 0 and "catch-up" not in out and len(out.splitlines()) == 3
    rc, out, _ = run(capsys, "plans", "history", case["group"], "--json")
    rows = json.loads(out)
    assert rows[0]["current_max_catch_up_s"] == 9_000.0 and rows[0]["plan_max_catch_up_s"] == 4_500.0
    rc, out, _ = run(capsys, "plans", "history", "nobody")
    assert rc == 0 and out.strip() == "no plan has looked at group nobody"


def test_show_a_failed_plan(db: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "plans", "show", str(db["failed"]))
    assert rc == 0
    assert "error     snapshot: coordinator not available" in out and "no groups recorded" in out


def test_show_json_is_the_stored_plan(db: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "plans", "show", str(db["manual"]), "--json")
    shown = json.loads(out)
    # the stored plan, each result of a group whose type and assignor are known flagged
    # kafka_choice (true on the row that is what Kafka itself would do)
    from lagassign.cli.plans_text import with_kafka_choice

    expected = json.loads(json.dumps(with_kafka_choice(db["plan"]), default=lambda v: v.isoformat()))
    assert rc == 0 and shown == expected
    orders = shown["groups"][2]["results"]
    assert [r["strategy"] for r in orders if r["kafka_choice"]] == ["uniform"]
    assert all("kafka_choice" not in r for g in shown["groups"][:2] for r in g.get("results") or ())
    assert [g["group"] for g in shown["groups"]] == ["broken", "calm", "orders"]
    assert [(g["group_type"], g["assignor"]) for g in shown["groups"]] == [
        (None, None),
        (None, None),
        ("consumer", "uniform"),
    ]


def test_show_latest_is_the_newest_plan(db: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    newest = run(capsys, "plans", "show", str(db["manual"]))
    assert run(capsys, "plans", "show", "latest") == newest
    assert newest[1].startswith(f"plan {db['manual']}:")


def test_show_unknown_id_is_one_clear_line(db: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, "plans", "show", "999")
    assert (rc, out) == (2, "")
    assert err.startswith("lagassign: error: no plan 999 in the audit store sqlite:///")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["plans", "show", "seven"], "argument ID: expected a plan id or 'latest', got 'seven'"),
        (["plans", "list", "--since", "2026-13-01"], "argument --since: '2026-13-01' is not an ISO date"),
        (["plans", "list", "--limit", "0"], "argument --limit: '0' is not a whole number ≥ 1"),
        (["plans", "frobnicate"], "argument COMMAND: invalid choice: 'frobnicate'"),
    ],
)
def test_bad_arguments_are_one_line(
    db: dict[str, Any], capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and fragment in err and err.count("\n") == 1


def test_missing_store_is_an_error_and_is_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nope" / "audit.db"
    rc, _, err = run(capsys, "plans", "list", "--db", f"sqlite:///{path}")
    assert (
        rc == 2
        and err
        == f"lagassign: error: no lagassign audit store at {path} "
        "(set LAGASSIGN_DB_URL, or run a plan first)\n"
    )
    assert not path.exists() and not path.parent.exists()


def test_db_option_wins_over_the_environment(
    db: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = f"sqlite:///{tmp_path / 'other.db'}"
    with AuditStore(other) as store:
        only = store.start_plan("manual", "bob")
    rc, out, _ = run(capsys, "plans", "list", "--json", "--db", other)
    assert rc == 0 and [(p["id"], p["triggered_by"]) for p in json.loads(out)] == [(only, "bob")]


def test_installed_command_and_cheap_import(db: dict[str, Any]) -> None:
    """The console script has the subcommand, and building the parser does not import SQLAlchemy."""
    command = Path(sys.executable).parent / "lagassign"
    env = {**os.environ, "LAGASSIGN_DB_URL": db["url"]}
    done = subprocess.run(
        [str(command), "plans", "list", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert [p["id"] for p in json.loads(done.stdout)] == [db["manual"], db["failed"]]
    probe = "import sys, lagassign.cli as c; c.build_parser(); print('sqlalchemy' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "False"


def test_database_failures_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database, it is a text file of sufficient length" * 20)
    rc, _, err = run(capsys, "plans", "list", "--db", f"sqlite:///{garbage}")
    assert (
        rc == 2
        and err == f"lagassign: error: cannot open audit store sqlite:///{garbage}: file is not a database\n"
    )
    broken = tmp_path / "broken.db"
    AuditStore(f"sqlite:///{broken}").close()
    conn = sqlite3.connect(broken)
    conn.execute("DROP TABLE plans")
    conn.close()
    rc, _, err = run(capsys, "plans", "show", "1", "--db", f"sqlite:///{broken}")
    assert (rc, err) == (2, f"lagassign: error: audit store sqlite:///{broken}: no such table: plans\n")


def test_plans_recorded_by_publish_read_on_every_surface(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``lagassign publish`` records the plan file's assignment with no lag figures (metrics {}):
    ``plans show`` (text and JSON) and the plan page's chart read it."""
    from lagassign.core.gate import GateDecision
    from lagassign.workflow.plans_page import lag_chart_svg

    url = f"sqlite:///{tmp_path / 'audit.db'}"
    members = {"i0": [["t", 0], ["t", 1]], "i1": [["t", 2]]}
    with AuditStore(url) as store:  # what publish_by_hand records
        plan_id = store.start_plan("manual", "ops", parameters={"publish": "plan.json"}, cluster="lkc-1")
        store.set_snapshot(plan_id, None, T0)
        results = [{"strategy": "lag-optimal", "metrics": {}, "assignment": members}]
        store.record_evaluations(plan_id, [{"group": "orders", "members": 2, "results": results}])
        decision = GateDecision("orders", True, "published by hand from plan.json", chosen="lag-optimal")
        store.record_decisions(plan_id, [decision])
        store.mark_publication_pending(plan_id, "orders")
        store.mark_published("orders", 1, published_at=T0)
        store.finish_plan(plan_id, "succeeded")
        plan = store.get_plan(plan_id)
    rc, out, err = run(capsys, "plans", "show", str(plan_id), "--db", url)
    assert (rc, err) == (0, "")
    assert "  cluster   lkc-1\n" in out
    assert "group orders: go: published by hand from plan.json" in out
    assert "plan version 1 (lag-optimal): published at 2026-05-01 06:00:00 UTC" in out
    assert (
        "  lag-optimal: assignment recorded without lag figures: 2 members, 3 partitions (i0 2, i1 1)" in out
    )
    rc, out, _ = run(capsys, "plans", "show", "latest", "--db", url, "--json")
    assert rc == 0 and json.loads(out)["groups"][0]["results"][0]["metrics"] == {}
    assert "no measured assignment to chart" in lag_chart_svg(plan["groups"][0])


def test_claim_assigns_plans_of_unknown_cluster(
    db: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """The fixture's plans were recorded with no cluster known (as before the store knew them)."""
    rc, out, _ = run(capsys, "plans", "claim", "--cluster", "lkc-prod", "--plan", str(db["manual"]))
    assert (rc, out) == (0, f"claimed 1 plan ({db['manual']}) and 1 publication for cluster lkc-prod\n")
    rc, out, err = run(capsys, "plans", "claim", "--cluster", "lkc-other", "--plan", str(db["manual"]))
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert f"plan {db['manual']} is recorded on cluster lkc-prod already" in err
    rc, out, _ = run(capsys, "plans", "list", "--cluster", "lkc-prod", "--json")
    assert [p["id"] for p in json.loads(out)] == [db["manual"]]
    rc, out, _ = run(capsys, "plans", "claim", "--cluster", "lkc-prod", "--json")
    assert json.loads(out) == {"cluster": "lkc-prod", "plans": [db["failed"]], "publications": 0}
    rc, out, _ = run(capsys, "plans", "claim", "--cluster", "lkc-prod")
    assert (rc, out) == (0, "no plan of unknown cluster to claim\n")
    rc, _, err = run(capsys, "plans", "claim", "--cluster", "x", "--bootstrap-server", "h:1")
    assert (rc, err) == (2, "lagassign: error: give --cluster or --bootstrap-server, not both\n")
