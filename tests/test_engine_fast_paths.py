"""The in-process engine's fast paths give what the plain ways give: results' JSON joined from
per-partition texts, evaluation columns made without row dicts, and the result texts' Arrow
column made from one buffer."""

from __future__ import annotations

import json
import random

import pyarrow as pa
import pytest
from lagassign.core.case import parse_case
from lagassign.core.evaluate import evaluate_group
from lagassign.core.results import GroupEvaluation, StrategyResult
from lagassign.core.synthetic import generate_cases
from lagassign.tables.evaluations import _ascii_array, evaluation_columns, evaluation_rows, row_columns


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


def test_ascii_array_is_pa_array() -> None:
    rng = random.Random(5)
    for _ in range(20):
        values = [
            None if rng.random() < 0.2 else "".join(rng.choice('ab{}[]",\\') for _ in range(rng.randrange(9)))
            for _ in range(rng.randrange(40))
        ]
        assert _ascii_array(values).equals(pa.array(values, type=pa.string()))
    odd = ["ü", None, "x"]  # not ASCII: pyarrow's own way
    assert _ascii_array(odd).equals(pa.array(odd, type=pa.string()))
