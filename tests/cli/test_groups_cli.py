"""``lagassign groups``: bad input is one line and exit 2; the table and the text of one group say
the status, lag in messages and time, catch-up, consumers and plans (rows as
``pipeline.overview.group_row`` makes them, from a health judged here). The real broker's runs
are in tests/kafka/test_groups_overview.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lagassign.cli.groups import group_text, groups_table
from lagassign.core.health import GroupInput, InstanceInput, PartitionInput, Point, group_health
from lagassign.pipeline.overview import Overview, group_row, sort_rows

NOW = datetime(2026, 5, 1, 6, 0, tzinfo=UTC)


def _row(group: str, lag: int, alive: bool = True) -> dict:
    points = (Point(0.0, 10_000, 10_000 - lag, lag), Point(60.0, 10_600, 10_600 - lag, lag))
    plan = {"w0": [("t", 0)]}
    g = GroupInput(
        group,
        kind="assign",
        partitions=(PartitionInput("t", 0, points, "w0" if alive else None),),
        members=("w0",) if alive else (),
        plan_version=3,
        plan=plan,
        instances=(
            InstanceInput(
                "w0", alive, 3, True, (("t", 0),) if alive else (), why=None if alive else "silent for 40 s"
            ),
        ),
    )
    shown = {
        "members": [],
        "instances": [
            {
                "instance": "w0",
                "alive": alive,
                "state": "alive" if alive else "dead",
                "why": None if alive else "silent for 40 s",
                "version": 3,
                "in_plan": True,
                "partitions": [["t", 0]] if alive else [],
                "pending": [],
                "host": "pod-1",
                "last_seen": None,
            }
        ],
    }
    last = {
        "plan_id": 7,
        "created_at": "2026-05-01T05:00:00Z",
        "trigger": "failover",
        "outcome": "published v3",
        "outcome_kind": "published",
        "reason": "w1 silent for 35 s",
    }
    return group_row(g, group_health(g), shown, last, NOW)


def test_the_table_says_status_lag_catch_up_consumers_and_plans() -> None:
    rows = sort_rows([_row("orders", 600), _row("billing", 6000, alive=False)], "status")
    ov = Overview("c-1", NOW - timedelta(seconds=5), True, "cluster", rows)
    text = groups_table(rows, ov)
    lines = text.splitlines()
    assert lines[0].startswith("cluster c-1, 2026-05-01T05:59:55Z (read now)")
    assert lines[1].split() == [
        "GROUP",
        "TYPE",
        "STATUS",
        "LAG",
        "MAX",
        "LAG",
        "LAG",
        "TIME",
        "CATCH-UP",
        "CONSUMERS",
        "PLAN",
        "LAST",
        "PLAN",
    ]
    assert lines[2].split()[:5] == ["billing", "assign()", "DEAD", "6,000", "6,000"]  # worst first
    assert "never" in lines[2] and "0 alive, 1 dead (w0)" in lines[2] and "#7 published v3" in lines[2]
    assert lines[3].split()[:3] == ["orders", "assign()", "OK"] and "1 alive" in lines[3] and "v3" in lines[3]
    assert [r["group"] for r in sort_rows(rows, "name")] == ["billing", "orders"]
    assert [r["group"] for r in sort_rows(rows, "lag")] == ["billing", "orders"]


def test_one_group_in_full() -> None:
    row = _row("billing", 6000, alive=False)
    ov = Overview("c-1", NOW - timedelta(minutes=3), False, "health job", [row])
    text = group_text(row, ov)
    assert text.splitlines()[0] == "group billing (assign() mode, state -): DEAD"
    assert "(recorded by the health job" in text
    assert "  DEAD: instance w0 silent for 40 s (plan v3 gives it 1 partition)" in text
    assert "lag 6,000 messages (max 6,000), lag time" in text and "catch-up never" in text
    assert "last plan: #7 2026-05-01T05:00:00Z (failover) published v3: w1 silent for 35 s" in text
    assert "  w0: dead (silent for 40 s), runs v3, partitions -" in text
    assert text.splitlines()[-1].split() == ["t-0", "10,600", "4,600", "6,000", "10", "min", "-", "OK"]


def test_bad_input_is_one_line_and_exit_2(cli_main) -> None:
    """A table of inputs: the command's ``main`` in this process (``cli_main``)."""
    for args, message in (
        (["groups", "show"], "expected `lagassign groups` or `lagassign groups show GROUP`"),
        (["groups", "list", "x"], "expected `lagassign groups` or `lagassign groups show GROUP`"),
        (["groups", "--status", "FINE"], "--status: expected some of OK"),
        (["groups", "--notify-url", "http://x"], "--notify-url needs --record"),
        (["groups", "--record", "--no-db"], "--record needs the audit store"),
        (["groups", "--groups", "orders-["], "--groups 'orders-[' is not a valid regex"),
        (["groups", "--window", "0"], "expected a positive number of seconds"),
    ):
        r = cli_main(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)


def test_an_unreachable_cluster_is_one_line(cli) -> None:
    r = cli("groups", "--bootstrap-server", "127.0.0.1:1", "--timeout", "1", "--no-db")
    assert r.returncode == 2
    assert r.stderr.startswith("lagassign: error: cannot reach Kafka at 127.0.0.1:1")
    assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""


def test_a_declared_group_whose_instances_never_started_lists_them() -> None:
    """An assign()-mode group of the groups file, before any instance announced itself: its
    pinned instances are listed, not running (the broker knows nothing of them)."""
    from lagassign.core.liveness import Liveness
    from lagassign.kafka.overview import ClusterView
    from lagassign.pipeline.overview import HealthSettings, build_overview
    from lagassign.tables.snapshot import Snapshot

    snap = Snapshot(
        [{"group": "ledger", "kind": "assign", "state": None, "error": None, "plan_version": None}],
        [{"group": "ledger", "topic": "t", "partition": 0, "end": 500, "committed": None, "lag": 500}],
        [],
        {"cluster_id": "c-1"},
    )
    view = ClusterView("c-1", NOW, snap, Liveness(), {}, [], {"ledger": ("i0", "i1")})
    [row] = build_overview(view, None, HealthSettings()).groups
    assert [(i["instance"], i["state"], i["why"]) for i in row["instances"]] == [
        ("i0", "dead", "never announced"),
        ("i1", "dead", "never announced"),
    ]
    assert (row["status"], row["alive"], row["dead"]) == ("OK", 0, 2)  # no window yet: not STOP
    assert row["never_catches_up"] is True  # lag that nobody consumes
