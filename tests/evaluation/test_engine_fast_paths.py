"""The in-process engine's fast paths give what the plain ways give: results' JSON joined from
per-partition texts, evaluation columns made without row dicts, and the result texts' Arrow
column made from one buffer."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest
from lagassign.core.case import offset_columns, parse_case, partition_columns
from lagassign.core.errors import StrategyRefusedError
from lagassign.core.evaluate import evaluate_group, respects_subscriptions, run_strategy
from lagassign.core.results import GroupEvaluation, PairTexts, StrategyResult
from lagassign.core.strategies import strategy_names
from lagassign.core.synthetic import generate_cases
from lagassign.evaluation import evaluate_group_columns, evaluate_group_rows
from lagassign.tables.evaluations import (
    FIELDS,
    _column_array,
    _text_array,
    evaluation_columns,
    evaluation_rows,
    row_columns,
)
from lagassign.tables.snapshot import column_rows, snapshot_group_columns, snapshot_groups
from lagassign.tables.synthetic import snapshot_tables


def _evaluations(groups: int, seed: int) -> list[GroupEvaluation]:
    cases, _ = generate_cases(groups, seed, huge=0)
    return [evaluate_group(parse_case(case)) for case in cases]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_result_json_is_the_encoders_text(seed: int) -> None:
    for evaluation in _evaluations(6, seed):
        for result in evaluation.results:
            plain = json.dumps(result.to_dict(), separators=(",", ":"))
            assert result.to_json() == plain
            assert StrategyResult.from_json(result.to_json()) == result


def test_assignment_pairs_made_on_first_read_are_the_pairs() -> None:
    """A result from ``run_strategy`` makes its [topic, partition] pairs from its layout only
    when read; they are the pairs of its partition indices, and the result equals (and copies
    as) the one made with them."""
    cases, _ = generate_cases(6, 4, huge=0)
    for case in cases:
        group = parse_case(case)
        for name in strategy_names():
            try:
                result = run_strategy(group, name)
            except StrategyRefusedError:
                continue
            assert "assignment" not in result.__dict__  # not made yet
            texts, positions = result._layout  # type: ignore[misc]
            pairs = {mid: [list(texts.pairs[i]) for i in idx] for mid, idx in positions.items()}
            eager = StrategyResult(result.strategy, pairs, result.metrics, result.withheld, result.unassigned)
            assert result == eager and result.assignment == pairs and result.assignment is result.assignment
            assert replace(result).assignment == pairs and result.to_dict() == eager.to_dict()
    assert StrategyResult("x", refused="no").assignment is None
    assert StrategyResult("y", None, {"max_lag": 0}).assignment is None  # no layout: none


def test_result_json_with_odd_names() -> None:
    case = {
        "group": "g",
        "members": [
            {"id": 'm"ü\\1', "topics": ["t€", "a\nb"], "owned": [["t€", 1]]},
            {"id": "m2", "topics": ["t€"]},
        ],
        "partitions": [{"topic": "t€", "partition": p, "lag": 10 * p} for p in range(4)]
        + [{"topic": "a\nb", "partition": 0, "lag": 5}],
    }
    for result in evaluate_group(parse_case(case)).results:
        assert result.to_json() == json.dumps(result.to_dict(), separators=(",", ":"))


def test_evaluation_columns_are_the_rows_columns() -> None:
    evaluations = _evaluations(8, 4)
    evaluations.append(GroupEvaluation("broken", error="snapshot failed: x").on_cluster("classic", "range"))
    evaluations.append(GroupEvaluation("empty", (), 0, 0))
    rows = [row for ev in evaluations for row in evaluation_rows(ev)]
    assert evaluation_columns(evaluations) == row_columns(rows)


def test_text_array_is_pa_array() -> None:
    rng = random.Random(5)
    for _ in range(20):
        values = [
            None if rng.random() < 0.2 else "".join(rng.choice('ab{}[]",\\') for _ in range(rng.randrange(9)))
            for _ in range(rng.randrange(40))
        ]
        assert _text_array(values).equals(pa.array(values, type=pa.string()))
    for odd in (["ü", None, "x"], ["grüppe-😀", "", None, "x"], [None, None], []):  # UTF-8, empty
        assert _text_array(odd).equals(pa.array(odd, type=pa.string()))
    with pytest.raises(UnicodeEncodeError):  # a lone surrogate is refused, as pyarrow refuses it
        _text_array(["\udc80"])


def test_column_arrays_are_pa_arrays() -> None:
    """Every column type of the schema, with and without nulls, equals ``pa.array``'s array."""
    rng = random.Random(8)
    makers = {
        "int32": lambda: rng.randrange(-(2**31), 2**31),
        "int64": lambda: rng.randrange(-(2**63), 2**63),
        "float64": lambda: rng.choice([rng.random() * 1e6, 1.0, 0.0, -2.5, 3]),
        "bool": lambda: rng.random() < 0.5,
        "string": lambda: rng.choice(["a", "grüppe", "", "x" * 40]),
    }
    for kind in sorted({k for _, k in FIELDS}):
        arrow_type = {"int32": pa.int32(), "int64": pa.int64(), "float64": pa.float64()}.get(
            kind, pa.bool_() if kind == "bool" else pa.string()
        )
        for nulls in (0.0, 0.3, 1.0):
            for size in (0, 1, 7, 8, 9, 100):
                values = [None if rng.random() < nulls else makers[kind]() for _ in range(size)]
                made = _column_array(values, kind)
                assert made.type == arrow_type
                assert made.equals(pa.array(values, type=arrow_type)), (kind, values)
    with pytest.raises(OverflowError):  # out of range is refused, as pyarrow refuses it
        _column_array([2**31], "int32")


def _odd_snapshot(folder: Path) -> Path:
    """A snapshot whose groups' rows are shuffled and interleaved, with the odd cases a reader
    meets: rates and racks, a missing end offset, a partition listed twice, an unknown reset
    policy, earliest mode without commits, a failed group, a group without partitions."""
    rng = random.Random(11)
    cases, failed = generate_cases(24, 3, huge=0, failed_share=0.1)
    snap = snapshot_tables(cases, failed)
    by_group: dict[str, list[dict]] = {}
    for row in snap.partitions:
        by_group.setdefault(row["group"], []).append(row)
    names = sorted(by_group)
    by_group[names[0]][0]["rate"] = 12.5
    by_group[names[1]][1]["racks"] = ["r1", "r2"]
    by_group[names[2]][0]["end"] = None
    by_group[names[3]].append(dict(by_group[names[3]][0]))
    by_group[names[4]][0]["rate"] = float("nan")
    for row in by_group[names[5]]:
        row["committed"] = None
    for grow in snap.groups:
        if grow["group"] == names[5]:
            grow["auto_offset_reset"] = "earliest"
        if grow["group"] == names[6]:
            grow["auto_offset_reset"] = "sometimes"
        if grow["group"] == names[7]:
            grow["auto_offset_reset"] = None
    del by_group[names[8]]
    rows = [row for group in by_group.values() for row in group]
    rng.shuffle(rows)
    snap.partitions = rows
    return snap.write(folder)


def test_group_columns_evaluate_as_rows(tmp_path: Path) -> None:
    folder = _odd_snapshot(tmp_path / "snap")
    by_rows = list(snapshot_groups(folder))
    by_columns = list(snapshot_group_columns(folder))
    assert [g for g, _, _ in by_rows] == [g for g, _, _ in by_columns]
    names, options = strategy_names(), {"max_moves": None, "count_slack": None, "exact_budget": None}
    errors = 0
    for (grow, rows, members), (_, columns, _) in zip(by_rows, by_columns, strict=True):
        assert repr(column_rows(columns)) == repr(rows)  # NaN rates: compared as text
        expected = evaluate_group_rows(grow, rows, members, names, options)
        got = evaluate_group_columns(grow, columns, members, names, options)
        assert got == expected
        assert [r.to_json() for r in got.results] == [r.to_json() for r in expected.results]
        errors += expected.error is not None
    assert errors >= 4


def test_offset_columns_are_partition_columns() -> None:
    rng = random.Random(8)
    for _ in range(50):
        parts = [
            {
                "topic": f"t{rng.randrange(3)}",
                "partition": rng.randrange(6),
                "begin": b,
                "end": b + rng.randrange(50),
                "committed": rng.choice([None, b + rng.randrange(60)]),
            }
            for b in (rng.randrange(100) for _ in range(rng.randrange(12)))
        ]
        reset = rng.choice(["latest", "earliest"])
        got = offset_columns(
            *([p[k] for p in parts] for k in ("topic", "partition", "begin", "end", "committed")), reset
        )
        expected = partition_columns(parts, reset)
        assert (got is None) == (expected is None)
        if got is not None and expected is not None:
            for key in ("topics", "numbers", "lags", "begin", "end", "committed"):
                assert getattr(got, key) == getattr(expected, key)


def test_pair_texts_reuse_only_the_same_layout() -> None:
    texts = PairTexts([("t", 0), ("t", 1), ("u", 0)])
    first = texts.assignment_json({"a": [0], "b": [1, 2]})
    assert first == json.dumps({"a": [["t", 0]], "b": [["t", 1], ["u", 0]]}, separators=(",", ":"))
    assert texts.assignment_json({"a": [0], "b": [1, 2]}) == first
    swapped = texts.assignment_json({"b": [1, 2], "a": [0]})
    assert swapped == json.dumps({"b": [["t", 1], ["u", 0]], "a": [["t", 0]]}, separators=(",", ":"))
    assert texts.assignment_json({"a": [0, 1], "b": [2]}) != first


def test_snapshot_without_partition_rows(tmp_path: Path) -> None:
    """No partition rows at all (a run whose groups pattern matched nothing, groups declared in
    a file): every group is read, without partitions, as the row reader reads it."""
    cases, _ = generate_cases(3, 5, huge=0)
    snap = snapshot_tables(cases, {})
    snap.partitions = []
    folder = snap.write(tmp_path / "snap")
    by_rows = [(g, rows, members) for g, rows, members in snapshot_groups(folder)]
    by_columns = list(snapshot_group_columns(folder))
    assert [g for g, _, _ in by_columns] == [g for g, _, _ in by_rows] and len(by_rows) == 3
    assert all(column_rows(columns) == [] for _, columns, _ in by_columns)


def test_snapshot_tables_as_folders(tmp_path: Path) -> None:
    """A table written as a folder of part files (as Spark writes) reads as the single file."""
    folder = _odd_snapshot(tmp_path / "snap")
    before = repr(list(snapshot_group_columns(folder)))
    for name in ("groups.parquet", "partitions.parquet"):
        single = folder / name
        part = tmp_path / name
        single.rename(part)
        single.mkdir()
        part.rename(single / "part-00000.parquet")
    assert repr(list(snapshot_group_columns(folder))) == before


def test_respects_subscriptions_as_checked_pair_by_pair() -> None:
    cases, _ = generate_cases(40, 9, huge=0)
    seen = set()
    for case in cases:
        group = parse_case(case)
        results = list(evaluate_group(group).results)
        # the same assignments, not made by run_strategy (no layout): checked pair by pair
        results += [StrategyResult(r.strategy, r.assignment, r.metrics) for r in results]
        some = group.members[0].id
        results.append(StrategyResult("odd", {some: [["no-such-topic", 0]]}, {}))
        for result in results:
            topics = {m.id: m.topics for m in group.members}
            held = (result.assignment or {}).items()
            expected = all(topics[mid].issuperset(t for t, _ in tps) for mid, tps in held)
            assert respects_subscriptions(group, result) == expected
            seen.add(expected)
    assert seen == {True, False}
