"""Synthetic snapshots: seeded case objects (``core.synthetic``) written as snapshot tables, so
tests and scale runs need no cluster."""

from __future__ import annotations

from typing import Any

from ..core.lag import partition_lag
from ..core.synthetic import generate_cases
from .snapshot import Snapshot


def snapshot_tables(
    cases: list[dict[str, Any]],
    failed: dict[str, str] | None = None,
    base_offset: int = 1_000,
) -> Any:
    """Snapshot rows of case objects, as the Kafka edge
    would have read them: kind "subscribe", members identified by member id.

    A partition given by ``lag`` gets offsets begin=0, committed=base_offset, end=committed+lag;
    one that names any of ``begin``/``end``/``committed`` keeps exactly those (None included, which
    makes an invalid case on purpose). ``failed`` maps group -> the error the snapshot reports.
    """
    failed = dict(failed or {})
    snap = Snapshot()
    for case in cases:
        gid = case["group"]
        reset = case.get("auto_offset_reset", "latest")
        snap.groups.append(_group_row(gid, reset, failed.get(gid)))
        snap.partitions.extend(_partition_row(gid, p, reset, base_offset) for p in case["partitions"])
        snap.members.extend(_member_row(gid, i, m) for i, m in enumerate(case["members"]))
    snap.manifest = _manifest(snap, failed)
    return snap


def _group_row(gid: str, reset: str, error: str | None) -> dict[str, Any]:
    return {
        "group": gid,
        "kind": "subscribe",
        "state": "Stable",
        "protocol": None,  # a case does not say what the cluster runs
        "auto_offset_reset": reset,
        "error": error,
    }


def _partition_row(gid: str, p: dict[str, Any], reset: str, base_offset: int) -> dict[str, Any]:
    """A partition's offsets as given, or made from its ``lag`` (``snapshot_tables``)."""
    if any(k in p for k in ("begin", "end", "committed")):
        begin, end, committed = p.get("begin"), p.get("end"), p.get("committed")
    else:
        begin, committed = 0, base_offset
        end = committed + p["lag"]
    lag = partition_lag(end, committed, begin, reset) if end is not None else None
    return {
        "group": gid,
        "topic": p["topic"],
        "partition": p["partition"],
        "begin": begin,
        "end": end,
        "committed": committed,
        "lag": lag,
    }


def _member_row(gid: str, i: int, m: dict[str, Any]) -> dict[str, Any]:
    return {
        "group": gid,
        "member_id": m["id"],
        "instance_id": None,
        "client_id": f"{gid}-client-{i}",
        "host": f"/10.0.0.{i % 250 + 1}",
        "topics": list(m["topics"]),
        "assignment": [{"topic": t, "partition": p} for t, p in m.get("owned") or []],
    }


def _manifest(snap: Snapshot, failed: dict[str, str]) -> dict[str, Any]:
    return {
        "cluster_id": "synthetic",
        "bootstrap_servers": None,
        "counts": {
            "groups": len(snap.groups),
            "subscribe": len(snap.groups),
            "assign": 0,
            "failed": len(failed),
            "partitions": len(snap.partitions),
            "members": len(snap.members),
            "topics": len({(p["group"], p["topic"]) for p in snap.partitions}),
        },
        "failed": [{"group": g, "error": e} for g, e in sorted(failed.items())],
        "warnings": [],
    }


def write_snapshot(cases: list[dict[str, Any]], folder: Any, failed: dict[str, str] | None = None) -> Any:
    """Write case objects as a snapshot folder (groups/partitions/members Parquet and manifest.json)
    with the snapshot's own writer, so tests and scale runs need no cluster. Returns the folder."""
    return snapshot_tables(cases, failed).write(folder)


def generate_snapshot(
    folder: Any, groups: int, seed: int, huge: int | None = None, failed_share: float = 0.005
) -> Any:
    """Write a realistic synthetic snapshot of ``groups`` groups (``generate_cases``) to ``folder``
    as the snapshot Parquet tables; the same seed gives the same snapshot. Returns the folder."""
    cases, failed = generate_cases(groups, seed, huge, failed_share)
    return write_snapshot(cases, folder, failed)
