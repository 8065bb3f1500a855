"""The plans topic: static assignments (``core.plans.Plan``) on a compacted topic, key = group id.

The version only grows per group and is decided before writing: by the audit ledger for the
pipeline, ``lagassign watch`` and ``lagassign publish`` (``publishing`` decides, ``applier``
writes, so two racing planners make one version), or by reading the group's newest plan first
(``PlanStore.publish``, for tools that seed a topic). "Newest" is the highest version seen when
reading the topic to its end; records that do not parse are skipped (a consumer must never act
on them). Records are gzip-compressed; one over the broker's limit even so is refused with its
size and the limit (``PlanTooLargeError``).
"""

from __future__ import annotations

import gzip
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from ..core.plans import Plan, newest_of, next_plan
from ..core.topics import PLAN_TOPIC
from .connection import first_metadata, with_collector
from .errors import BrokerUnavailableError, PlanError, reason
from .reader import read_to_end
from .topicadmin import create_compacted

log = logging.getLogger(__name__)


class PlanTooLargeError(PlanError):
    """A plan record over the broker's size limit even compressed: it never reached the topic."""


class PlanDeliveryError(PlanError):
    """The broker refused a plan record: it did not reach the topic (e.g. not authorised)."""


class PlanDeliveryUnknownError(PlanError):
    """No acknowledgement in time: the plan may or may not be on the topic (reconcile later)."""


#: Plans compress well (topic names repeat); gzip is understood by every broker since 0.8.
COMPRESSION = "gzip"
#: A group's whole plan is one record. The broker's default limit (1 MiB) holds a plan of about
#: 400,000 partitions compressed; the plans topic is created with 8 MiB, room for some 3 million
#: (a 50,000-partition plan is 1.9 MB, 137 KB compressed). Segments roll hourly so that the
#: cleaner can drop superseded plans within hours, not after the default week: every reader
#: (each PlanConsumer at start) reads the topic from its beginning.
PLANS_TOPIC_CONFIG = {"max.message.bytes": str(8 * 1024 * 1024), "segment.ms": str(60 * 60 * 1000)}
#: librdkafka checks a record's *uncompressed* size against its own message.max.bytes before
#: sending; the broker's limit (the topic's max.message.bytes, 1 MiB by default) applies to the
#: compressed batch. So the producer's own check is set far above, and the broker decides.
_PRODUCER_MAX_BYTES = 100_000_000
_DEFINITE = (
    "MSG_SIZE_TOO_LARGE",
    "RECORD_LIST_TOO_LARGE",
    "INVALID_RECORD",
    "TOPIC_AUTHORIZATION_FAILED",
    "CLUSTER_AUTHORIZATION_FAILED",
    "UNKNOWN_TOPIC_OR_PART",
    "INVALID_REQUIRED_ACKS",
    "_MSG_SIZE_TOO_LARGE",
    "POLICY_VIOLATION",
)


class PlanStore:
    """The plans topic of one cluster: makes sure it exists, reads it back, publishes to it.

    Owns its librdkafka clients (created on first use); ``close()`` releases them. The first
    request fails at once on bad credentials or TLS (``connection.first_metadata``).
    """

    def __init__(self, config: Mapping[str, Any], topic: str = PLAN_TOPIC, timeout: float = 30.0) -> None:
        self.config = dict(config)
        self.topic = topic
        self.timeout = timeout
        self._admin: Any = None
        self._producer: Any = None
        self._auth: Any = None
        self._reached = False

    # -- clients -------------------------------------------------------------------------
    def _admin_client(self) -> Any:
        if self._admin is None:
            from confluent_kafka.admin import AdminClient

            conf, self._auth = with_collector(self.config)
            self._admin = AdminClient(conf)
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

        admin = self._admin_client()
        # All topics, not list_topics(topic=...): the latter auto-creates the topic on brokers
        # with auto.create.topics.enable (Kafka 0.9's default), uncompacted.
        if not self._reached:
            md = first_metadata(admin, self.config, self._auth, self.timeout)
            self._reached = True
        else:
            try:
                md = admin.list_topics(timeout=self.timeout)
            except KafkaException as exc:
                raise BrokerUnavailableError(f"cannot read metadata: {reason(exc)}") from None
        t = md.topics.get(self.topic)
        if t is None or t.error is not None:
            return None
        return sorted(t.partitions)

    def ensure_topic(self, partitions: int = 1) -> None:
        """Create the plans topic if it does not exist (compacted, ``PLANS_TOPIC_CONFIG``)."""
        if self.partitions() is None:
            create_compacted(
                self._admin_client(),
                self.topic,
                partitions,
                PLANS_TOPIC_CONFIG,
                self.timeout,
                "plans topic",
                self.partitions,
            )

    def max_message_bytes(self) -> int | None:
        """The topic's ``max.message.bytes`` (the broker's limit for a record batch), if readable."""
        from confluent_kafka.admin import ConfigResource

        try:
            futures = self._admin_client().describe_configs(
                [ConfigResource("topic", self.topic)], request_timeout=min(self.timeout, 10)
            )
            for future in futures.values():
                entry = future.result(timeout=min(self.timeout, 10)).get("max.message.bytes")
                return int(entry.value) if entry is not None and entry.value else None
        except Exception:  # old brokers (0.9) cannot describe configs: the limit stays unknown
            return None
        return None

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

    # -- write ---------------------------------------------------------------------------
    def write(self, plan: Plan) -> None:
        """Write one plan record (gzip-compressed) and wait for the broker's acknowledgement.

        PlanTooLargeError / PlanDeliveryError: it definitely did not reach the topic;
        PlanDeliveryUnknownError: no answer in time (it may have).
        """
        from confluent_kafka import KafkaException, Producer

        value = plan.to_json().encode()
        if self._producer is None:
            conf = {k: v for k, v in self.config.items() if k != "error_cb"}
            conf.update(
                {
                    "enable.idempotence": False,
                    "acks": "all",
                    "compression.type": COMPRESSION,
                    "message.max.bytes": _PRODUCER_MAX_BYTES,
                }
            )
            self._producer = Producer(conf)
        errors: list[Any] = []

        def delivered(err: Any, _msg: Any) -> None:
            if err is not None:
                errors.append(err)

        where = f"plan v{plan.version} of {plan.group}"
        try:
            self._producer.produce(self.topic, key=plan.group.encode(), value=value, on_delivery=delivered)
        except (KafkaException, BufferError) as exc:
            err = exc.args[0] if exc.args else None
            if getattr(err, "name", lambda: "")() in ("MSG_SIZE_TOO_LARGE", "_MSG_SIZE_TOO_LARGE"):
                raise PlanTooLargeError(self._too_large(where, value)) from None
            raise PlanDeliveryError(f"{where} was not sent to {self.topic}: {reason(exc)}") from None
        remaining = self._producer.flush(self.timeout)
        if errors:
            err = errors[0]
            if err.name() in ("MSG_SIZE_TOO_LARGE", "RECORD_LIST_TOO_LARGE", "_MSG_SIZE_TOO_LARGE"):
                raise PlanTooLargeError(self._too_large(where, value))
            if err.name() in _DEFINITE:
                raise PlanDeliveryError(f"{where} was refused by {self.topic}: {err.str()}")
            raise PlanDeliveryUnknownError(f"publishing {where} to {self.topic}: {err.str()}")
        if remaining:
            raise PlanDeliveryUnknownError(
                f"publishing {where} to {self.topic}: not acknowledged within {self.timeout:g}s"
            )

    def _too_large(self, where: str, value: bytes) -> str:
        packed = len(gzip.compress(value, 6))
        limit = self.max_message_bytes()
        shown = f"max.message.bytes {limit:,}" if limit else "its max.message.bytes"
        return (
            f"{where} is too large for topic {self.topic}: {_size(len(value))} "
            f"({_size(packed)} compressed with {COMPRESSION}), over {shown}; raise the topic's "
            f"max.message.bytes or split the group"
        )

    def publish(
        self, group: str, strategy: str, members: Mapping[str, Any], snapshot_at: str | None = None
    ) -> tuple[Plan, bool]:
        """Write the group's plan as the next version unless unchanged, outside the audit ledger
        (tests and tools that seed a topic; a planning run reserves its version in the ledger
        and writes through ``kafka.applier``). Returns (plan in force, whether it was written)."""
        self.ensure_topic()
        previous = self.newest(group)
        plan = next_plan(previous, group, strategy, members, snapshot_at)
        if plan is None:
            assert previous is not None
            return previous, False
        self.write(plan)
        return plan, True


def _size(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.2f} MB"
    if n >= 1_000:
        return f"{n / 1_000:.0f} KB"
    return f"{n} bytes"
