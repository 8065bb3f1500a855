"""The snapshot on disk: Parquet tables of a cluster's groups, and their conversion to cases.

A snapshot folder holds (the contract between the Kafka edge, the Spark job and the CLI):

* ``groups.parquet``: group, kind ("subscribe" | "assign"), state, protocol,
  auto_offset_reset, error (null when the group was read completely), plan_version (the plan in
  force of an assign()-mode group; absent in snapshots taken before it was recorded),
  group_type ("classic" | "consumer", KIP-848's protocol, whose ``protocol`` is then the
  server-side assignor; null when the broker does not say, absent in older snapshots),
  group_epoch and assignment_epoch (of a ``consumer``-type group; null otherwise)
* ``partitions.parquet``: one row per group x partition: group, topic, partition, begin,
  end, committed, lag (null where an offset could not be read); rate (messages produced per
  second, from the offset history) and lag_s (seconds since the end offset was the consumer's
  position): null when unknown, absent in snapshots taken before them; racks (the racks of
  the partition's replicas; null when the cluster has no racks, absent in older snapshots)
* ``members.parquet``: one row per member: group, member_id, instance_id, client_id, host,
  topics (list of names), assignment (list of {topic, partition}); rack and capacity (null
  when unknown); of a ``consumer``-type group's members also target (the assignment the broker
  is moving the member to), member_epoch and member_type ("classic" for a classic member of a
  group being migrated, "consumer"; null when the broker does not say): null for other groups,
  absent in older snapshots. ``topics`` of a consumer-type group's member is its subscription.
* ``manifest.json``: cluster id, time, counts and what failed

Rows become case objects (the contract in docs/ARCHITECTURE.md), so everything downstream, in-process or on
Spark executors, goes through the same validation as a case file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import compress, islice
from operator import ne
from pathlib import Path
from typing import Any

from ..core.errors import CaseError, LagassignError

GROUPS = "groups.parquet"
PARTITIONS = "partitions.parquet"
MEMBERS = "members.parquet"
MANIFEST = "manifest.json"
#: Rows per Parquet row group written. A Spark task reads only the row groups holding its
#: groups: with pyarrow's default (one row group up to a million rows) each of the 33 tasks of a
#: 10,000-group snapshot decoded the whole partitions table to use a thirtieth of it.
ROW_GROUP_ROWS = 1 << 15

GROUP_COLUMNS = ("group", "kind", "state", "protocol", "auto_offset_reset", "error")
OPTIONAL_GROUP_COLUMNS = ("plan_version", "group_type", "group_epoch", "assignment_epoch")
PARTITION_COLUMNS = ("group", "topic", "partition", "begin", "end", "committed", "lag")
#: planning in time and with racks; snapshots written before them lack these columns
OPTIONAL_PARTITION_COLUMNS = ("rate", "lag_s", "racks")
MEMBER_COLUMNS = ("group", "member_id", "instance_id", "client_id", "host", "topics", "assignment")
#: planning with racks and in time; snapshots written before them lack these columns
OPTIONAL_MEMBER_COLUMNS = ("rack", "capacity")


def arrow_schemas() -> dict[str, Any]:
    import pyarrow as pa

    tp = pa.struct([("topic", pa.string()), ("partition", pa.int32())])
    return {
        GROUPS: pa.schema(
            [
                ("group", pa.string()),
                ("kind", pa.string()),
                ("state", pa.string()),
                ("protocol", pa.string()),
                ("auto_offset_reset", pa.string()),
                ("error", pa.string()),
                ("plan_version", pa.int64()),
                ("group_type", pa.string()),
                ("group_epoch", pa.int32()),
                ("assignment_epoch", pa.int32()),
            ]
        ),
        PARTITIONS: pa.schema(
            [
                ("group", pa.string()),
                ("topic", pa.string()),
                ("partition", pa.int32()),
                ("begin", pa.int64()),
                ("end", pa.int64()),
                ("committed", pa.int64()),
                ("lag", pa.int64()),
                ("rate", pa.float64()),
                ("lag_s", pa.float64()),
                ("racks", pa.list_(pa.string())),
            ]
        ),
        MEMBERS: pa.schema(
            [
                ("group", pa.string()),
                ("member_id", pa.string()),
                ("instance_id", pa.string()),
                ("client_id", pa.string()),
                ("host", pa.string()),
                ("topics", pa.list_(pa.string())),
                ("assignment", pa.list_(tp)),
                ("rack", pa.string()),
                ("capacity", pa.float64()),
                ("target", pa.list_(tp)),
                ("member_epoch", pa.int32()),
                ("member_type", pa.string()),
            ]
        ),
    }


@dataclass
class Snapshot:
    """The rows of the three tables and the manifest, before they are written."""

    groups: list[dict[str, Any]] = field(default_factory=list)
    partitions: list[dict[str, Any]] = field(default_factory=list)
    members: list[dict[str, Any]] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)

    def cases(self) -> dict[str, dict[str, Any] | None]:
        """Each group's case (None for a group that failed), as the snapshot readers build it."""
        out: dict[str, dict[str, Any] | None] = {}
        for grow in self.groups:
            name = grow["group"]
            out[name] = (
                None
                if grow.get("error")
                else case_from_rows(
                    name,
                    [r for r in self.partitions if r["group"] == name],
                    [r for r in self.members if r["group"] == name],
                    grow.get("auto_offset_reset"),
                )
            )
        return out

    def write(self, out: str | Path) -> Path:
        """Write groups/partitions/members Parquet and manifest.json into ``out`` (created)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        schemas = arrow_schemas()
        for name, rows in ((GROUPS, self.groups), (PARTITIONS, self.partitions), (MEMBERS, self.members)):
            table = pa.Table.from_pylist(rows, schema=schemas[name])
            pq.write_table(table, folder / name, row_group_size=ROW_GROUP_ROWS)
        (folder / MANIFEST).write_text(json.dumps(self.manifest, indent=2, sort_keys=True) + "\n")
        return folder


def case_from_rows(
    group: str,
    partitions: Iterable[Mapping[str, Any]],
    members: Iterable[Mapping[str, Any]],
    auto_offset_reset: str | None = "latest",
) -> dict[str, Any]:
    """A case object for one group from its snapshot rows.

    Members are identified by instance id when they have one (static membership and the
    assign()-mode groups), else by member id: that is the id plans are published under.
    """
    parts = []
    for row in partitions:
        if row.get("end") is None:
            tp = f"{row['topic']}-{row['partition']}"
            raise CaseError(f"group {group}: partition {tp} has no end offset")
        part = {
            "topic": row["topic"],
            "partition": int(row["partition"]),
            "begin": _opt_int(row.get("begin")),
            "end": int(row["end"]),
            "committed": _opt_int(row.get("committed")),
        }
        rate = row.get("rate")
        if rate is not None and rate == rate:  # absent when unknown (NaN from pandas too)
            part["rate"] = float(rate)
        racks = row.get("racks")
        if racks is not None and not isinstance(racks, float):  # absent when unknown; NaN from pandas
            part["racks"] = [str(r) for r in racks]
        parts.append(part)
    case_members = []
    for row in members:
        assignment = row.get("assignment")
        member = {
            "id": row.get("instance_id") or row["member_id"],
            "instance_id": row.get("instance_id") or None,
            "topics": sorted(_as_list(row.get("topics"))),
            "owned": [[a["topic"], int(a["partition"])] for a in _as_list(assignment)],
        }
        for key in OPTIONAL_MEMBER_COLUMNS:  # absent, not null, when unknown (as in a case file)
            value = row.get(key)
            if value is not None and value == value:  # NaN from pandas is unknown too
                member[key] = value
        case_members.append(member)
    return {
        "group": group,
        "auto_offset_reset": auto_offset_reset or "latest",
        "members": case_members,
        "partitions": parts,
    }


def _opt_int(value: Any) -> int | None:
    if value is None:
        return None
    try:
        if value != value:  # NaN from pandas
            return None
    except TypeError:
        pass
    return int(value)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value)


def _read_parquet(path: Path) -> Any:
    """A Parquet table: a file read as one (``pq.read_table`` goes through pyarrow's dataset
    layer, whose first use imports a quarter second of CPU), a folder of part files as a
    dataset."""
    import pyarrow.parquet as pq  # only the snapshot readers need pyarrow

    return pq.ParquetFile(path).read() if path.is_file() else pq.read_table(path)


def _checked_table(folder: Path, name: str, columns: tuple[str, ...]) -> Any:
    """A snapshot table, after checking it is there with the required ``columns``."""
    path = folder / name
    if not path.exists():
        raise LagassignError(f"snapshot {folder}: {name} is missing")
    table = _read_parquet(path)
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise LagassignError(f"snapshot {folder}: {name} lacks column(s) {', '.join(missing)}")
    return table


def _read_table(
    folder: Path, name: str, columns: tuple[str, ...], optional: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    table = _checked_table(folder, name, columns)
    present = [c for c in optional if c in table.column_names]
    return table.select([*columns, *present]).to_pylist()


def snapshot_groups(
    folder: str | Path,
) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]]:
    """(group row, its partition rows, its member rows) for every group, sorted by group name.

    No case is built here, so a caller can turn an invalid group into an error row and go on.
    """
    folder = Path(folder)
    groups = _read_table(folder, GROUPS, GROUP_COLUMNS, OPTIONAL_GROUP_COLUMNS)
    parts: dict[str, list[dict[str, Any]]] = {}
    for row in _read_table(folder, PARTITIONS, PARTITION_COLUMNS, OPTIONAL_PARTITION_COLUMNS):
        parts.setdefault(row["group"], []).append(row)
    members: dict[str, list[dict[str, Any]]] = {}
    for row in _read_table(folder, MEMBERS, MEMBER_COLUMNS, OPTIONAL_MEMBER_COLUMNS):
        members.setdefault(row["group"], []).append(row)
    seen: set[str] = set()
    for grow in sorted((g for g in groups if g["group"] is not None), key=lambda g: g["group"]):
        if grow["group"] in seen:
            continue
        seen.add(grow["group"])
        yield grow, parts.get(grow["group"], []), members.get(grow["group"], [])


def snapshot_group_columns(
    folder: str | Path,
) -> Iterator[tuple[dict[str, Any], dict[str, list[Any]], list[dict[str, Any]]]]:
    """``snapshot_groups`` with each group's partitions as columns (column name -> the group's
    values, in the file's order) instead of rows: the partitions table is most of a snapshot,
    and a dict per row cost more than the rest of reading it."""
    folder = Path(folder)
    groups = _read_table(folder, GROUPS, GROUP_COLUMNS, OPTIONAL_GROUP_COLUMNS)
    table = _checked_table(folder, PARTITIONS, PARTITION_COLUMNS)
    names = [*PARTITION_COLUMNS, *(c for c in OPTIONAL_PARTITION_COLUMNS if c in table.column_names)]
    rows = table.num_rows
    columns: dict[str, list[Any]] = {  # a column without values (no rates, racks) as nulls, unconverted
        name: [None] * rows if table.column(name).null_count == rows else table.column(name).to_pylist()
        for name in names
    }
    members: dict[str, list[dict[str, Any]]] = {}
    for row in _read_table(folder, MEMBERS, MEMBER_COLUMNS, OPTIONAL_MEMBER_COLUMNS):
        members.setdefault(row["group"], []).append(row)
    # each group's runs of rows (a writer puts a group's rows together: one run each)
    of_group = columns["group"]
    n = len(of_group)
    starts = [0, *compress(range(1, n), map(ne, of_group, islice(of_group, 1, None)))] if n else []
    stops = [*starts[1:], n] if n else []  # no partition rows (no group matched): no runs
    runs: dict[str, list[tuple[int, int]]] = {}
    for start, stop in zip(starts, stops, strict=True):
        runs.setdefault(of_group[start], []).append((start, stop))
    seen: set[str] = set()
    for grow in sorted((g for g in groups if g["group"] is not None), key=lambda g: g["group"]):
        name = grow["group"]
        if name in seen:
            continue
        seen.add(name)
        spans = runs.get(name, [])
        if len(spans) == 1:
            ((start, stop),) = spans
            parts = {c: values[start:stop] for c, values in columns.items()}
        else:
            parts = {c: [v for a, b in spans for v in values[a:b]] for c, values in columns.items()}
        yield grow, parts, members.get(name, [])


def column_rows(columns: Mapping[str, list[Any]]) -> list[dict[str, Any]]:
    """Columns (``snapshot_group_columns``) as rows (``snapshot_groups``)."""
    names = list(columns)
    return [dict(zip(names, values, strict=True)) for values in zip(*columns.values(), strict=True)]


def read_snapshot(folder: str | Path) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Yield (group row, case) for every group of a snapshot; case is None when the group failed."""
    for grow, parts, members in snapshot_groups(folder):
        if grow.get("error"):
            yield grow, None
            continue
        yield grow, case_from_rows(grow["group"], parts, members, grow.get("auto_offset_reset"))


def group_rows(folder: str | Path) -> dict[str, dict[str, Any]]:
    """Group name -> its row in ``groups.parquet`` (kind, plan_version, error ...)."""
    rows = _read_table(Path(folder), GROUPS, GROUP_COLUMNS, OPTIONAL_GROUP_COLUMNS)
    return {r["group"]: r for r in rows if r["group"] is not None}


def describe_changes(before: Mapping[str, Any], after: Mapping[str, Any] | None) -> str | None:
    """What changed in a group between two snapshots' cases, as one line; None if nothing did.

    Compared: member ids and their topics, and the set of partitions. Offsets and lag move all
    the time and are not a change; members, subscriptions and partitions are, since a plan
    computed for the old ones would leave partitions unconsumed or name absent instances.
    """
    if after is None:
        return "the group is gone"
    subs_before = {m["id"]: set(m["topics"]) for m in before["members"]}
    subs_after = {m["id"]: set(m["topics"]) for m in after["members"]}
    parts_before = {(p["topic"], p["partition"]) for p in before["partitions"]}
    parts_after = {(p["topic"], p["partition"]) for p in after["partitions"]}
    notes = []
    joined = sorted(subs_after.keys() - subs_before.keys())
    left = sorted(subs_before.keys() - subs_after.keys())
    if joined:
        notes.append(f"joined: {', '.join(joined)}")
    if left:
        notes.append(f"left: {', '.join(left)}")
    stayed = subs_before.keys() & subs_after.keys()
    resubscribed = sorted(m for m in stayed if subs_before[m] != subs_after[m])
    if resubscribed:
        notes.append(f"subscriptions changed: {', '.join(resubscribed)}")
    topics_gone = sorted({t for t, _ in parts_before} - {t for t, _ in parts_after})
    if topics_gone:
        notes.append(f"topics deleted: {', '.join(topics_gone)}")
    added = len(parts_after - parts_before)
    if added:
        notes.append(f"{added} partitions added")
    return "; ".join(notes) or None


def partition_lag_seconds(folder: str | Path) -> dict[str, dict[tuple[str, int], float]]:
    """Per group, each partition's lag in seconds where the snapshot knows it (empty for a
    snapshot taken before lag in seconds was recorded, or without offset history)."""
    out: dict[str, dict[tuple[str, int], float]] = {}
    for row in _read_table(Path(folder), PARTITIONS, PARTITION_COLUMNS, OPTIONAL_PARTITION_COLUMNS):
        value = row.get("lag_s")
        if row["group"] is not None and value is not None and value == value:
            out.setdefault(row["group"], {})[(row["topic"], int(row["partition"]))] = float(value)
    return out
