"""``lagassign.core.synthetic.generate_snapshot``: a seeded, realistic fleet of groups as snapshot tables."""

from __future__ import annotations

import pyarrow.parquet as pq
from lagassign.core.synthetic import HUGE_PARTITIONS, generate_cases
from lagassign.evaluation import evaluate_snapshot
from lagassign.tables.snapshot import arrow_schemas
from lagassign.tables.synthetic import generate_snapshot


def test_same_seed_same_snapshot_and_a_realistic_mix(tmp_path):
    a = generate_snapshot(tmp_path / "a", 400, seed=3)
    b = generate_snapshot(tmp_path / "b", 400, seed=3)
    for name, schema in arrow_schemas().items():
        assert pq.read_schema(a / name).remove_metadata() == schema
        assert pq.read_table(a / name).equals(pq.read_table(b / name))
    parts = pq.read_table(a / "partitions.parquet").to_pandas().groupby("group").size()
    members = pq.read_table(a / "members.parquet").to_pandas().groupby("group").size()
    assert len(parts) == 400 and (parts == HUGE_PARTITIONS).sum() == 1
    typical = parts[parts < HUGE_PARTITIONS]
    assert 60 <= typical.mean() <= 150 and 5 <= members.mean() <= 15
    lags = pq.read_table(a / "partitions.parquet").column("lag").to_pylist()
    assert lags.count(0) > 0 and max(lags) > 100 * sorted(lags)[len(lags) // 2]  # idle groups and hot spots


def test_generated_groups_are_valid_cases(tmp_path):
    cases, failed = generate_cases(60, seed=11, huge=0, failed_share=0.1)
    assert failed and not any(len(c["partitions"]) == HUGE_PARTITIONS for c in cases)
    folder = generate_snapshot(tmp_path / "s", 60, seed=11, huge=0)
    evaluations = [e.to_dict() for e in evaluate_snapshot(folder, ["range", "lag"])]
    assert len(evaluations) == 60
    assert all("error" not in e or e["error"].startswith("snapshot failed") for e in evaluations)


def test_group_type_names_kip848s_protocols_only():
    """The snapshot's group_type: classic or consumer (KIP-848), else null."""
    from enum import Enum

    from lagassign.kafka.snapshot_rows import group_type

    class Kind(Enum):
        CLASSIC = 1
        CONSUMER = 2
        UNKNOWN = 3

    assert [group_type(k) for k in Kind] == ["classic", "consumer", None]
    assert group_type(None) is None
