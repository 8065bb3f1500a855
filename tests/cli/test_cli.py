"""The ``assign`` and ``evaluate`` commands: output shapes of the contract in docs/ARCHITECTURE.md.

The tables (every strategy's output shape, refused values) run the command's ``main`` in this
process (``cli_main``); the other tests run the installed command (``cli``)."""

from __future__ import annotations

import json

import lagassign
import pytest
from lagassign.core.strategies import strategy_names
from testpaths import EXAMPLES

METRIC_KEYS = {
    "lag", "count", "max_lag", "mean_lag", "imbalance", "lag_spread",
    "count_spread", "moves", "lower_bound_max_lag", "balanced_lower_bound_max_lag", "optimal",
}  # fmt: skip

# Mixed subscriptions, an unowned partition, offsets and lags: every optional part of a case.
CASE = {
    "group": "g1",
    "auto_offset_reset": "earliest",
    "members": [
        {"id": "C1", "topics": ["t0", "t1"], "owned": [["t0", 1], ["t0", 0]], "rack": "r1"},
        {"id": "C0", "topics": ["t0"], "owned": [["t0", 2]], "rack": None},
        {"id": "C2", "topics": ["t1", "t0"]},
    ],
    "partitions": [
        {"topic": "t1", "partition": 0, "lag": 7},
        {"topic": "t0", "partition": 2, "lag": 60_000},
        {"topic": "t0", "partition": 0, "lag": 100_000},
        {"topic": "t0", "partition": 1, "begin": 0, "end": 900, "committed": None},
    ],
}


def _check_result_shape(out: dict, strategy: str) -> None:
    assert out["strategy"] == strategy
    assert set(out) <= {"strategy", "assignment", "metrics", "withheld", "unassigned"}
    assert list(out["assignment"]) == ["C0", "C1", "C2"]
    for pairs in out["assignment"].values():
        assert all(isinstance(t, str) and isinstance(p, int) for t, p in pairs)
        assert pairs == sorted(pairs)
    metrics = out["metrics"]
    assert set(metrics) == METRIC_KEYS
    assert set(metrics["lag"]) == set(metrics["count"]) == set(out["assignment"])
    assert metrics["count"] == {m: len(p) for m, p in out["assignment"].items()}
    assert metrics["max_lag"] == max(metrics["lag"].values())
    assert ("withheld" in out) == (strategy == "cooperative-sticky")


@pytest.mark.parametrize("strategy", [s for s in strategy_names() if s != "constrained-sticky"])
def test_assign_output_shape(cli_main, case_file, strategy):
    done = cli_main("assign", "--strategy", strategy, case_file(CASE))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.count("\n") == 1, "one JSON object on one line"
    out = json.loads(done.stdout)
    _check_result_shape(out, strategy)
    assert out == lagassign.assign(CASE, strategy), "the CLI and the Python API agree"


def test_assign_lag_example_output(cli, case_file):
    out = json.loads(cli("assign", "--strategy", "lag", case_file(CASE)).stdout)
    # t0 heaviest first: p0 -> C0, p2 -> C1, p1 -> C2; t1's counters start afresh: t1-0 -> C1.
    assert out["assignment"] == {"C0": [["t0", 0]], "C1": [["t0", 2], ["t1", 0]], "C2": [["t0", 1]]}
    assert out["metrics"]["lag"] == {"C0": 100_000, "C1": 60_007, "C2": 900}
    assert out["metrics"]["moves"] == 3


def test_current_reports_unassigned_partitions(cli, case_file):
    out = json.loads(cli("assign", "--strategy", "current", case_file(CASE)).stdout)
    assert out["assignment"] == {"C0": [["t0", 2]], "C1": [["t0", 0], ["t0", 1]], "C2": []}
    assert out["unassigned"] == [["t1", 0]]


def test_cooperative_sticky_lists_withheld_partitions(cli, case_file):
    out = json.loads(cli("assign", "--strategy", "cooperative-sticky", case_file(CASE)).stdout)
    owner_before = {("t0", 0): "C1", ("t0", 1): "C1", ("t0", 2): "C0"}
    expected = sorted(
        [t, p] for m, pairs in out["assignment"].items() for t, p in pairs if owner_before.get((t, p), m) != m
    )
    assert out["withheld"] == expected


def test_assign_reads_stdin_and_indents(cli):
    done = cli("assign", "--strategy", "range", "--indent", "2", "-", stdin=json.dumps(CASE))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('{\n  "strategy": "range"')
    assert json.loads(done.stdout) == lagassign.assign(CASE, "range")


def test_evaluate_json_shape(cli, case_file):
    done = cli("evaluate", "--json", case_file(CASE))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert set(out) == {"group", "members", "partitions", "best", "lower_bound_max_lag", "results"}
    assert (out["group"], out["members"], out["partitions"]) == ("g1", 3, 4)
    assert [r["strategy"] for r in out["results"]] == strategy_names()
    for r in out["results"]:
        if r["strategy"] == "constrained-sticky":
            assert set(r) == {"strategy", "refused"} and "same topics" in r["refused"]
        else:
            _check_result_shape(r, r["strategy"])
    assert out["best"] in strategy_names() and out["best"] != "current"  # current leaves t1-0 unconsumed
    assert out == lagassign.evaluate(CASE)


def test_evaluate_subset(cli, case_file):
    out = json.loads(cli("evaluate", "--json", "--strategies", "range,lag", case_file(CASE)).stdout)
    assert [r["strategy"] for r in out["results"]] == ["range", "lag"]
    # Both have max lag 100,000 (t0-0 alone); range moves 2 partitions, lag 3.
    assert [r["metrics"]["moves"] for r in out["results"]] == [2, 3]
    assert out["best"] == "range"


def test_evaluate_table_for_people(cli, case_file):
    done = cli("evaluate", case_file(CASE))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("group g1: 3 members, 4 partitions, lower bound on max member lag")
    assert lines[2].split()[:3] == ["strategy", "max", "lag"]
    rows = {line.split()[0]: line for line in lines[3:]}
    assert set(rows) == set(strategy_names())
    best = lagassign.evaluate(CASE)["best"]
    assert rows[best].endswith("<- best")
    assert "refused:" in rows["constrained-sticky"]
    assert "(1 partitions unassigned)" in rows["current"]


def test_example_case_in_the_repository_evaluates(cli):
    example = EXAMPLES / "skewed-group.json"
    done = cli("evaluate", "--json", str(example))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["best"] is not None


# -- the command itself: version, usage, bad values, operational errors ------------------------


def test_version(cli):
    done = cli("--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, f"lagassign {lagassign.__version__}\n", "")


@pytest.mark.parametrize(
    ("argv", "commands"),
    [
        ((), ("assign", "evaluate", "plan", "plans", "publish", "watch")),
        (("plans",), ("list", "show", "history", "claim")),
    ],
)
def test_a_bare_command_prints_its_usage(cli, argv, commands):
    done = cli(*argv)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"usage: lagassign {' '.join(argv)}".rstrip() + " ")
    assert all(f"\n    {c} " in done.stderr for c in commands), done.stderr
    assert "required" not in done.stderr and "_command" not in done.stderr  # no internal names


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (
            ["evaluate", "--strategies", "", "CASE"],
            "argument --strategies: expected comma-separated strategy",
        ),
        (["evaluate", "--strategies", "lag,", "CASE"], "argument --strategies: expected comma-separated"),
        (["evaluate", "--strategies", "lag,nope", "CASE"], "unknown strategy 'nope'"),
        (
            ["assign", "--strategy", "lag", "--indent", "-3", "CASE"],
            "argument --indent: expected a non-negative",
        ),
        (
            ["evaluate", "--indent", "-1", "CASE"],
            "argument --indent: expected a non-negative integer, got -1",
        ),
        (["snapshot", "--timeout", "0", "--out", "x"], "argument --timeout: expected a positive number"),
        (["plan", "--timeout", "-5"], "argument --timeout: expected a positive number of seconds"),
        (
            ["snapshot", "--concurrency", "0", "--out", "x"],
            "argument --concurrency: expected a whole number >= 1",
        ),
        (["plan", "--groups-file", "EMPTY"], "argument --groups-file: groups file EMPTY declares no groups"),
        (["watch", "--groups-file", "EMPTY"], "argument --groups-file: groups file EMPTY declares no groups"),
        (["plan", "--groups-file", "MISSING"], "argument --groups-file: cannot read groups file MISSING"),
    ],
)
def test_empty_and_out_of_range_values_are_refused_in_one_line(cli_main, case_file, tmp_path, argv, fragment):
    empty = tmp_path / "groups.yaml"
    empty.write_text("groups: []\n")
    paths = {"CASE": case_file(CASE), "EMPTY": str(empty), "MISSING": str(tmp_path / "nope.yaml")}
    argv = [paths.get(a, a) for a in argv]
    args = [*argv, "--bootstrap-server", "127.0.0.1:1"] if argv[0] in ("plan", "watch") else argv
    done = cli_main(*args)
    fragment = next((fragment.replace(k, v) for k, v in paths.items() if k in fragment), fragment)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and fragment in done.stderr, done.stderr


@pytest.mark.parametrize("timeout", ["1", "0.5"])  # a timeout under a second is said as given
def test_watch_against_an_unreachable_broker_is_one_line(cli, tmp_path, timeout):
    from socket import socket

    with socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = tmp_path / "audit.db"
    done = cli(
        "watch", "--bootstrap-server", f"127.0.0.1:{port}", "--timeout", timeout, "--db", f"sqlite:///{db}"
    )
    assert done.returncode == 2 and done.stdout == ""
    said = f"lagassign: error: cannot reach Kafka at 127.0.0.1:{port} within {timeout}s"
    assert done.stderr.startswith(said)
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert not db.exists()  # nothing was recorded or created


def test_a_failing_file_is_one_line_not_a_traceback(cli, tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"group": "g", "strategy": "lag", "assignment": {"a": [["t", 0]]}}))
    target = tmp_path / "no-such-folder" / "plan-in-force.json"
    done = cli("publish", "--export-only", "--export", str(target), str(plan))
    assert done.returncode == 2
    assert done.stderr == f"lagassign: error: {target}.tmp: No such file or directory\n"
