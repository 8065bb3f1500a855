"""Static assignments (plans) on a compacted topic, and their JSON export.

Record format (DESIGN.md): key = group id (UTF-8), value = JSON::

    {"plan_id": "...", "group": "g", "version": 3, "created_at": "2026-...Z",
     "strategy": "lag-optimal", "snapshot_at": "2026-...Z" | null,
     "members": {"instance-0": [["orders", 0], ["orders", 3]], "instance-1": [...]}}

The version only grows per group: a publish reads the group's newest plan first and writes
``version + 1`` only when the members mapping differs, so publishing the same plan twice is a
no-op. "Newest" is the highest version seen when reading the topic to its end; records that do
not parse are skipped (a consumer must never act on them). One publisher per group at a time
is assumed (the Airflow DAG runs one publish task per group); two racing publishers could both
write the same version, and readers would keep the later record.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .errors import BrokerUnavailableError, PlanError

PLAN_TOPIC = "lagassign.plans"
log = logging.getLogger(__name__)


def utc_now() -> str:
    """Current time as ISO-8601 UTC with a Z, the format of every timestamp we write."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def normalize_members(members: Any, where: str = "plan") -> dict[str, list[list[Any]]]:
    """Validate ``{instance_id: [[topic, partition], ...]}`` and sort it (ids, then partitions).

    A partition given to two instances is refused: it would be consumed twice under one version.
    """
    if not isinstance(members, Mapping):
        raise PlanError(f"{where}: members must be a mapping of instance id to partitions")
    owner: dict[tuple[str, int], str] = {}
    out: dict[str, list[list[Any]]] = {}
    for iid in sorted(members):
        if not isinstance(iid, str) or not iid:
            raise PlanError(f"{where}: instance ids must be non-empty strings, got {iid!r}")
        pairs = members[iid]
        if not isinstance(pairs, list):
            raise PlanError(f"{where}: instance {iid} must map to a list of [topic, partition] pairs")
        tps: set[tuple[str, int]] = set()
        for pair in pairs:
            ok = isinstance(pair, list | tuple) and len(pair) == 2 and isinstance(pair[0], str) and pair[0] \
                and isinstance(pair[1], int) and not isinstance(pair[1], bool) and pair[1] >= 0
            if not ok:
                raise PlanError(f"{where}: instance {iid} has a bad [topic, partition] pair {pair!r}")
            tp = (pair[0], pair[1])
            if tp in owner and owner[tp] != iid:
                raise PlanError(f"{where}: partition {tp[0]}-{tp[1]} is given to both {owner[tp]} and {iid}")
            owner[tp] = iid
            tps.add(tp)
        out[iid] = [[t, p] for t, p in sorted(tps)]
    return out


@dataclass(frozen=True)
class Plan:
    """One published static assignment of a group."""

    plan_id: str
    group: str
    version: int
    created_at: str
    strategy: str
    snapshot_at: str | None
    members: dict[str, list[list[Any]]]

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    def partitions_of(self, instance_id: str) -> list[tuple[str, int]]:
        """The partitions this plan gives to one instance (none if it is not in the plan)."""
        return [(t, p) for t, p in self.members.get(instance_id, [])]

    @classmethod
    def from_value(cls, value: bytes | str | Mapping[str, Any], key: str | None = None) -> Plan:
        """Parse a record value (or a loaded JSON object); PlanError if it is not a valid plan."""
        try:
            data = value if isinstance(value, Mapping) else json.loads(value)
        except (ValueError, UnicodeDecodeError):
            raise PlanError(f"plan record for {key or '?'} is not JSON") from None
        if not isinstance(data, Mapping):
            raise PlanError(f"plan record for {key or '?'} is not a JSON object")
        group = data.get("group")
        version = data.get("version")
        if not isinstance(group, str) or not group or (key is not None and group != key):
            raise PlanError(f"plan record for {key or '?'} names group {group!r}")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise PlanError(f"plan record for {group}: bad version {version!r}")
        strategy = data.get("strategy")
        if not isinstance(strategy, str):
            raise PlanError(f"plan record for {group}: bad strategy {strategy!r}")
        return cls(
            plan_id=str(data.get("plan_id") or ""),
            group=group,
            version=version,
            created_at=str(data.get("created_at") or ""),
            strategy=strategy,
            snapshot_at=data.get("snapshot_at"),
            members=normalize_members(data.get("members"), f"plan record for {group}"),
        )


def read_plan_file(path: str | Path) -> dict[str, Any]:
    """A plan file to publish: ``lagassign assign`` output plus ``group`` (and ``snapshot_at``)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise PlanError(f"cannot read plan file {path}: {exc.strerror}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise PlanError(f"plan file {path} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PlanError(f"plan file {path}: expected a JSON object")
    group, strategy = data.get("group"), data.get("strategy")
    if not isinstance(group, str) or not group:
        raise PlanError(f"plan file {path}: needs 'group' (the consumer group id)")
    if not isinstance(strategy, str) or not strategy:
        raise PlanError(f"plan file {path}: needs 'strategy'")
    members = normalize_members(data.get("assignment"), f"plan file {path}")
    snapshot_at = data.get("snapshot_at")
    if snapshot_at is not None and not isinstance(snapshot_at, str):
        raise PlanError(f"plan file {path}: 'snapshot_at' must be a timestamp string")
    return {"group": group, "strategy": strategy, "members": members, "snapshot_at": snapshot_at}


def next_plan(previous: Plan | None, group: str, strategy: str, members: Mapping[str, Any],
              snapshot_at: str | None = None, version: int | None = None,
              plan_id: str | None = None) -> Plan | None:
    """The plan to write after ``previous``, or None when the members mapping is unchanged.

    ``version`` (e.g. reserved in the audit store before publishing) is used as it is, and
    refused when the topic already holds that version or a newer one: versions only grow.
    """
    members = normalize_members(members, f"plan for {group}")
    if previous is not None and previous.members == members:
        return None
    held = previous.version if previous is not None else 0
    if version is not None and version <= held:
        raise PlanError(f"group {group}: version {version} is not above the published version {held}")
    return Plan(plan_id=plan_id or uuid.uuid4().hex, group=group, version=version or held + 1,
                created_at=utc_now(), strategy=strategy, snapshot_at=snapshot_at, members=members)


def newest_of(records: Iterable[tuple[str | None, bytes | None]],
              groups: set[str] | None = None) -> dict[str, Plan]:
    """Newest valid plan per group from (key, value) records in offset order.

    A tombstone (null value) deletes the group's plan; a record that does not parse, or whose
    version is not above the one held, is ignored.
    """
    newest: dict[str, Plan] = {}
    for key, value in records:
        if key is None or (groups is not None and key not in groups):
            continue
        if value is None:
            newest.pop(key, None)
            continue
        try:
            plan = Plan.from_value(value, key)
        except PlanError as exc:
            log.warning("ignoring unreadable plan record: %s", exc)
            continue
        held = newest.get(key)
        if held is None or plan.version >= held.version:
            newest[key] = plan
    return newest


def export_json(plan: Plan, path: str | Path) -> None:
    """Write one plan as a JSON file (for people who ship assignments another way)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(asdict(plan), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def read_export(path: str | Path) -> Plan | None:
    """The plan of an earlier export, or None when the file does not exist."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        return Plan.from_value(path.read_text(encoding="utf-8"))
    except (PlanError, OSError) as exc:
        raise PlanError(f"existing export {path} is not a plan: {exc}") from None


class PlanStore:
    """The plans topic of one cluster: makes sure it exists, reads it back, publishes to it.

    Owns its librdkafka clients (created on first use); ``close()`` releases them.
    """

    def __init__(self, config: Mapping[str, Any], topic: str = PLAN_TOPIC, timeout: float = 30.0) -> None:
        self.config = dict(config)
        self.topic = topic
        self.timeout = timeout
        self._admin: Any = None
        self._producer: Any = None

    # -- clients -------------------------------------------------------------------------
    def _admin_client(self) -> Any:
        if self._admin is None:
            from confluent_kafka.admin import AdminClient

            self._admin = AdminClient(self.config)
        return self._admin

    def close(self) -> None:
        if self._producer is not None:
            self._producer.flush(self.timeout)
        self._producer = None
        self._admin = None

    def __enter__(self) -> PlanStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- topic ---------------------------------------------------------------------------
    def partitions(self) -> list[int] | None:
        """Partition ids of the plans topic, or None when it does not exist."""
        from confluent_kafka import KafkaException

        try:
            # All topics, not list_topics(topic=...): the latter auto-creates the topic on
            # brokers with auto.create.topics.enable (Kafka 0.9's default), uncompacted.
            md = self._admin_client().list_topics(timeout=self.timeout)
        except KafkaException as exc:
            raise BrokerUnavailableError(f"cannot read metadata: {_reason(exc)}") from None
        t = md.topics.get(self.topic)
        if t is None or t.error is not None:
            return None
        return sorted(t.partitions)

    def ensure_topic(self, partitions: int = 1) -> None:
        """Create the plans topic, compacted, if it does not exist."""
        if self.partitions() is not None:
            return
        from confluent_kafka import KafkaError, KafkaException
        from confluent_kafka.admin import NewTopic

        topic = NewTopic(self.topic, partitions, -1, config={"cleanup.policy": "compact"})
        future = self._admin_client().create_topics([topic], operation_timeout=self.timeout,
                                                    request_timeout=self.timeout)[self.topic]
        try:
            future.result()
        except KafkaException as exc:
            err = exc.args[0]
            if err.code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise PlanError(
                    f"cannot create plans topic {self.topic} ({_reason(exc)}); create it compacted "
                    f"(cleanup.policy=compact) with your cluster's tools"
                ) from None
        deadline = time.monotonic() + self.timeout
        while self.partitions() is None:
            if time.monotonic() > deadline:
                raise PlanError(f"plans topic {self.topic} was created but does not show in metadata")
            time.sleep(0.1)

    # -- read ----------------------------------------------------------------------------
    def read(self, groups: Iterable[str] | None = None) -> dict[str, Plan]:
        """Newest plan per group (optionally only these groups), reading the topic to its end."""
        parts = self.partitions()
        if not parts:
            return {}
        wanted = set(groups) if groups is not None else None
        return newest_of(read_to_end(self.config, self.topic, parts, self.timeout), wanted)

    def newest(self, group: str) -> Plan | None:
        return self.read([group]).get(group)

    # -- publish -------------------------------------------------------------------------
    def publish(self, group: str, strategy: str, members: Mapping[str, Any],
                snapshot_at: str | None = None, version: int | None = None,
                plan_id: str | None = None) -> tuple[Plan, bool]:
        """Write the group's plan unless unchanged. Returns (plan in force, whether it was written)."""
        from confluent_kafka import Producer

        self.ensure_topic()
        previous = self.newest(group)
        plan = next_plan(previous, group, strategy, members, snapshot_at, version, plan_id)
        if plan is None:
            assert previous is not None
            return previous, False
        if self._producer is None:
            self._producer = Producer({**self.config, "enable.idempotence": False, "acks": "all"})
        errors: list[str] = []

        def delivered(err: Any, _msg: Any) -> None:
            if err is not None:
                errors.append(err.str())

        self._producer.produce(self.topic, key=group.encode(), value=plan.to_json().encode(),
                               on_delivery=delivered)
        remaining = self._producer.flush(self.timeout)
        if remaining or errors:
            reason = errors[0] if errors else f"not acknowledged within {self.timeout:.0f}s"
            raise PlanError(f"publishing plan v{plan.version} of {group} to {self.topic} failed: {reason}")
        return plan, True


def read_to_end(config: Mapping[str, Any], topic: str, partitions: Iterable[int],
                timeout: float = 30.0) -> list[tuple[str | None, bytes | None]]:
    """Every (key, value) of the given partitions from the beginning to the current end.

    Uses assign(), never subscribe() or commit(): the reader joins no group and leaves nothing
    on the broker (the group id is required by the client but never used).
    """
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition

    consumer = Consumer({**config, "group.id": "lagassign.plan-reader", "enable.auto.commit": False,
                         "enable.partition.eof": True, "auto.offset.reset": "earliest"})
    try:
        ends: dict[int, int] = {}
        for p in partitions:
            try:
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)
            except KafkaException as exc:
                raise BrokerUnavailableError(f"cannot read offsets of {topic}-{p}: {_reason(exc)}") from None
            if high > low:
                ends[p] = high
        if not ends:
            return []
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in ends])
        records: list[tuple[str | None, bytes | None]] = []
        pending = set(ends)
        deadline = time.monotonic() + timeout
        while pending:
            if time.monotonic() > deadline:
                raise BrokerUnavailableError(f"reading {topic} to its end took over {timeout:.0f}s")
            for msg in consumer.consume(500, 0.5):
                p = msg.partition()
                if msg.error() is None:
                    key = msg.key()
                    records.append((key.decode("utf-8", "replace") if key is not None else None, msg.value()))
                    if msg.offset() + 1 >= ends[p]:
                        pending.discard(p)
                elif msg.error().code() == KafkaError._PARTITION_EOF:
                    pending.discard(p)
        return records
    finally:
        consumer.close()


def _reason(exc: Exception) -> str:
    err = exc.args[0] if exc.args else None
    return err.str() if hasattr(err, "str") else str(exc)
