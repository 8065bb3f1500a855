"""Bad input: the command exits non-zero with one clear line naming the problem, never a traceback.

The tables of bad cases, malformed texts and usage errors run the command's ``main`` in this
process (``cli_main``); the single cases run the installed command (``cli``)."""

from __future__ import annotations

import copy

import lagassign
import pytest
from lagassign.core.errors import LagassignError

GOOD = {
    "group": "g1",
    "auto_offset_reset": "earliest",
    "members": [
        {"id": "C0", "topics": ["t0"], "owned": [["t0", 0]]},
        {"id": "C1", "topics": ["t0", "t1"]},
    ],
    "partitions": [
        {"topic": "t0", "partition": 0, "lag": 100},
        {"topic": "t0", "partition": 1, "begin": 0, "end": 900, "committed": 300},
        {"topic": "t1", "partition": 0, "lag": 5},
    ],
}


def _with(change) -> dict:
    case = copy.deepcopy(GOOD)
    change(case)
    return case


def _set(path: tuple, value):
    def change(case):
        target = case
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


# (id, case, the words the one line must contain)
BAD_CASES = [
    ("negative-end", _with(_set(("partitions", 1, "end"), -5)), "'end' offset is negative"),
    ("negative-committed", _with(_set(("partitions", 1, "committed"), -1)), "'committed' offset is negative"),
    ("negative-begin", _with(_set(("partitions", 1, "begin"), -2)), "'begin' offset is negative"),
    ("negative-lag", _with(_set(("partitions", 0, "lag"), -100)), "'lag' must be a non-negative"),
    (
        "boolean-lag-equal-to-the-offsets",
        _with(
            _set(
                ("partitions", 1), {"topic": "t0", "partition": 1, "end": 900, "committed": 900, "lag": False}
            )
        ),
        "'lag' must be a non-negative integer, got False",
    ),
    ("begin-beyond-end", _with(_set(("partitions", 1, "begin"), 1_000)), "begin offset 1000 is beyond end"),
    ("lag-disagrees", _with(_set(("partitions", 1, "lag"), 1)), "disagrees with its offsets"),
    ("offset-not-integer", _with(_set(("partitions", 1, "end"), "900")), "must be an integer offset"),
    ("no-lag-no-end", _with(_set(("partitions", 0), {"topic": "t0", "partition": 0})), "needs 'lag' or"),
    (
        "duplicate-partition",
        _with(lambda c: c["partitions"].append({"topic": "t0", "partition": 1, "lag": 1})),
        "partition t0-1 is listed twice",
    ),
    (
        "topic-without-partitions",
        _with(_set(("members", 1, "topics"), ["t0", "t9"])),
        "subscribes to topic t9, which has no partitions",
    ),
    ("member-without-id", _with(lambda c: c["members"][1].pop("id")), "member #1: has no id"),
    ("member-empty-id", _with(_set(("members", 0, "id"), "")), "member #0: has no id"),
    ("empty-group", _with(_set(("members",), [])), "empty group"),
    ("no-members-key", _with(lambda c: c.pop("members")), "'members' must be a list"),
    ("member-no-topics", _with(_set(("members", 0, "topics"), [])), "member C0: subscribes to no topic"),
    ("duplicate-member", _with(_set(("members", 1, "id"), "C0")), "member C0 is listed twice"),
    ("owned-unknown", _with(_set(("members", 0, "owned"), [["t0", 7]])), "owns t0-7, which is not among"),
    (
        "owned-twice",
        _with(_set(("members", 1, "owned"), [["t0", 0]])),
        "partition t0-0 is owned by both C0 and C1",
    ),
    ("bad-reset", _with(_set(("auto_offset_reset",), "smallest")), "'auto_offset_reset' must be one of"),
    ("negative-partition", _with(_set(("partitions", 2, "partition"), -1)), "non-negative integer"),
]


def _assert_one_clear_line(done, *words: str) -> None:
    assert done.returncode != 0
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize(("case", "words"), [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES])
def test_bad_case_exits_with_one_line(cli_main, case_file, case, words):
    done = cli_main("assign", "--strategy", "range", case_file(case))
    _assert_one_clear_line(done, "lagassign: error:", words)


@pytest.mark.parametrize(("case", "words"), [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES])
def test_bad_case_raises_one_line_error_in_python(case, words):
    with pytest.raises(LagassignError) as info:
        lagassign.assign(case, "range")
    assert words in str(info.value) and "\n" not in str(info.value)


def test_the_good_case_is_accepted(cli, case_file):
    """The base of every bad case above is valid, so each failure is due to its one change."""
    assert cli("assign", "--strategy", "range", case_file(GOOD)).returncode == 0


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"group": "g1", "members": [', "malformed JSON at line 1 column"),
        ("{'group': 'g1'}", "malformed JSON"),
        ("", "malformed JSON"),
        ("[1, 2]", "a case must be a JSON object, got list"),
    ],
)
def test_malformed_json(cli_main, case_file, text, words):
    path = case_file(text)
    _assert_one_clear_line(cli_main("assign", "--strategy", "lag", path), path, words)
    _assert_one_clear_line(cli_main("evaluate", path), words)


def test_malformed_json_on_stdin(cli):
    _assert_one_clear_line(cli("evaluate", "-", stdin="{nope"), "stdin: malformed JSON")


def test_unknown_strategy(cli, case_file):
    done = cli("assign", "--strategy", "lagg", case_file(GOOD))
    _assert_one_clear_line(done, "unknown strategy 'lagg'", "lag-aware")


def test_unknown_strategy_in_evaluate_subset(cli, case_file):
    _assert_one_clear_line(cli("evaluate", "--strategies", "range,nope", case_file(GOOD)), "'nope'")


def test_constrained_sticky_refuses_mixed_subscriptions_in_one_line(cli, case_file):
    done = cli("assign", "--strategy", "constrained-sticky", case_file(GOOD))
    _assert_one_clear_line(done, "constrained-sticky needs every member of group g1")


def test_missing_case_file(cli, tmp_path):
    missing = str(tmp_path / "nope.json")
    _assert_one_clear_line(cli("assign", "--strategy", "range", missing), "cannot read case file", missing)


def test_case_file_not_utf8(cli, tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes('{"group": "caf\xe9"}'.encode("latin-1"))
    _assert_one_clear_line(cli("evaluate", str(path)), "is not UTF-8 text")


@pytest.mark.parametrize(
    "argv",
    [("assign", "case.json"), ("assign",), ("frobnicate",), ("evaluate", "--nope", "x.json")],
)
def test_usage_errors_are_one_line_too(cli_main, argv):
    """(A bare ``lagassign`` prints its usage instead: test_cli.test_a_bare_command_prints_its_usage.)"""
    done = cli_main(*argv)
    _assert_one_clear_line(done, "lagassign: error:")
