"""Run a consumer in manual ``assign()`` mode from the plans lagassign publishes.

``PlanConsumer`` wraps a confluent-kafka ``Consumer``. Given its group and instance id it reads
the group's newest plan from the compacted plans topic, assigns the plan's partitions for this
instance from the group's committed offsets (``auto.offset.reset`` where there are none), and
follows the topic: when a newer version arrives it commits what it has processed, then switches
to the new partitions. Example::

    from lagassign.client import PlanConsumer

    conf = {"bootstrap.servers": "kafka:9092", "auto.offset.reset": "earliest"}
    with PlanConsumer(conf, group="orders-workers", instance_id="w0") as consumer:
        while running:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            handle(msg)          # processed once poll() is called again
        # leaving the block commits what was processed

Processing contract (the same as Kafka's auto-commit): a message returned by ``poll()`` counts
as processed when ``poll()`` (or ``commit()``/``close()``) is called next. Commits are
explicit: at a switch, at ``commit()`` and at ``close()``; ``enable.auto.commit`` is forced off.

Guarantees:

* Under one plan version an instance only returns messages of the partitions that version gives
  it (messages of partitions it gave up are dropped, even if already fetched), and a plan never
  gives a partition to two instances (``plans.normalize_members`` refuses it at publish time).
* No message is lost across a switch: the instance that gives a partition up commits only what
  it processed, and the one that takes it starts from the committed offset. A message can be
  processed twice (at-least-once) when the taker starts before the giver has committed.

Edge cases: no plans topic yet, or no plan for the group: nothing is assigned and ``poll()``
returns None while it keeps watching for a plan. A plan record that does not parse, or whose
version is not newer than the one in force, is ignored (logged) and the assignment stays.

Two librdkafka consumers per instance: one for the data, one that follows the plans topic
(assign() only, it never commits or joins a group). Sharing one would put a new plan behind
all the data librdkafka has prefetched (up to ``queued.min.messages``), so the switch would
wait for a backlog that is no longer this instance's to process. ``poll()`` looks at the plan
follower first (without waiting), then at the data.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from .errors import LagassignError
from .kafka.plans import PLAN_TOPIC, Plan, newest_of

log = logging.getLogger(__name__)

TP = tuple[str, int]


class PlanConsumer:
    """A Kafka consumer in manual assign() mode that follows its group's published plans."""

    def __init__(
        self,
        config: Mapping[str, Any],
        group: str,
        instance_id: str,
        plan_topic: str = PLAN_TOPIC,
        plan_check_interval: float = 2.0,
        timeout: float = 30.0,
        on_switch: Callable[[Plan | None, Plan], None] | None = None,
    ) -> None:
        from confluent_kafka import Consumer

        if not group or not instance_id:
            raise LagassignError("PlanConsumer needs a group and an instance id")
        self.group = group
        self.instance_id = instance_id
        self.plan_topic = plan_topic
        self.plan_check_interval = plan_check_interval
        self.timeout = timeout
        self.on_switch = on_switch
        conf = dict(config)
        conf.setdefault("client.id", f"{group}.{instance_id}")
        conf.update({"group.id": group, "enable.auto.commit": False, "enable.partition.eof": False})
        self.reset = str(conf.get("auto.offset.reset", "latest")).lower()
        self._consumer = Consumer(conf)
        # The plan follower: its group id is never used (no subscribe, no commit).
        self._plans = Consumer({**conf, "group.id": f"{group}.lagassign-plans",
                                "client.id": f"{conf['client.id']}.plans", "auto.offset.reset": "earliest"})
        self.plan: Plan | None = None
        self._assigned: set[TP] = set()
        self._positions: dict[TP, int] = {}  # next offset to process, per assigned data partition
        self._following = False  # True once the plans topic was read to its end
        self._next_check = 0.0
        self._closed = False

    # -- what callers look at ------------------------------------------------------------
    @property
    def version(self) -> int | None:
        """Version of the plan in force (None before the first plan)."""
        return self.plan.version if self.plan else None

    @property
    def assignment(self) -> list[TP]:
        """The (topic, partition) pairs this instance consumes under the current plan."""
        return sorted(self._assigned)

    @property
    def consumer(self) -> Any:
        """The wrapped confluent-kafka Consumer (do not assign() or commit() it yourself)."""
        return self._consumer

    # -- the loop ------------------------------------------------------------------------
    def poll(self, timeout: float = 1.0) -> Any:
        """The next data message of this instance's partitions, or None within ``timeout``."""
        from confluent_kafka import KafkaException

        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if not self._following:
                if time.monotonic() >= self._next_check:
                    self._start_following()
                if not self._following:
                    if remaining <= 0:
                        return None
                    time.sleep(min(remaining, 0.1))  # no plans topic yet: nothing to fetch
                    continue
            # Plans first, without waiting unless there is no data to wait for.
            self._check_plans(0 if self._assigned else max(0.0, min(remaining, 0.5)))
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if not self._assigned:
                continue
            msg = self._consumer.poll(min(remaining, 0.2))
            if msg is None:
                continue
            err = msg.error()
            if err is not None:
                if err.fatal():
                    raise KafkaException(err)
                log.warning("consumer %s/%s: %s", self.group, self.instance_id, err.str())
                continue
            tp = (msg.topic(), msg.partition())
            if tp not in self._assigned:
                continue  # fetched before a switch took the partition away
            self._positions[tp] = msg.offset() + 1
            return msg

    def commit(self) -> None:
        """Commit the processed offsets of the current partitions (synchronously)."""
        self._commit(self._positions)

    def close(self) -> None:
        """Commit what was processed and close both consumers."""
        if self._closed:
            return
        self._closed = True
        try:
            self.commit()
        finally:
            self._consumer.close()
            self._plans.close()

    def __enter__(self) -> PlanConsumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plans ---------------------------------------------------------------------------
    def _start_following(self) -> None:
        """Find the plans topic; read it to its end; take the newest plan of our group."""
        from confluent_kafka import OFFSET_BEGINNING, KafkaException, TopicPartition

        self._next_check = time.monotonic() + self.plan_check_interval
        try:
            md = self._plans.list_topics(timeout=self.timeout)  # all topics: see kafka.plans
        except KafkaException as exc:
            log.warning("consumer %s/%s: no metadata yet: %s", self.group, self.instance_id, exc)
            return
        topic = md.topics.get(self.plan_topic)
        if topic is None or topic.error is not None or not topic.partitions:
            log.info("plans topic %s does not exist yet; waiting", self.plan_topic)
            return
        parts = sorted(topic.partitions)
        ends = {}
        for p in parts:
            _low, high = self._plans.get_watermark_offsets(TopicPartition(self.plan_topic, p),
                                                           timeout=self.timeout)
            ends[p] = high
        self._plans.assign([TopicPartition(self.plan_topic, p, OFFSET_BEGINNING) for p in parts])
        records: list[tuple[str | None, bytes | None]] = []
        pending = {p for p in parts if ends[p] > 0}
        deadline = time.monotonic() + self.timeout
        while pending:
            if time.monotonic() > deadline:
                log.warning("reading %s to its end timed out; retrying", self.plan_topic)
                self._plans.unassign()
                return
            msg = self._plans.poll(0.5)
            if msg is None or msg.error() is not None:
                continue
            key = msg.key()
            records.append((key.decode("utf-8", "replace") if key is not None else None, msg.value()))
            if msg.offset() + 1 >= ends[msg.partition()]:
                pending.discard(msg.partition())
        self._following = True
        plan = newest_of(records, {self.group}).get(self.group)
        if plan is not None:
            self._switch(plan)
        else:
            log.info("no plan for group %s yet; waiting", self.group)

    def _check_plans(self, wait: float) -> None:
        """Take in the plan records that arrived; switch to the newest valid, newer version."""
        for msg in self._plans.consume(100, wait):
            if msg.error() is not None:
                continue
            key = msg.key()
            if key is None or key.decode("utf-8", "replace") != self.group:
                continue
            found = newest_of([(self.group, msg.value())], {self.group}).get(self.group)
            if found is None:
                continue  # unreadable or a tombstone: keep the assignment in force
            if self.plan is not None and found.version <= self.plan.version:
                log.info("ignoring plan v%s of %s: v%s is in force", found.version, self.group,
                         self.plan.version)
                continue
            self._switch(found)

    def _switch(self, plan: Plan) -> None:
        """Commit what was processed, then assign the new plan's partitions from committed offsets."""
        from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, TopicPartition

        previous = self.plan
        self._commit(self._positions)
        wanted = set(plan.partitions_of(self.instance_id))
        offsets: dict[TP, int] = {}
        if wanted:
            asked = [TopicPartition(t, p) for t, p in sorted(wanted)]
            for tp in self._consumer.committed(asked, timeout=self.timeout):
                if tp.error is None and tp.offset >= 0:
                    offsets[(tp.topic, tp.partition)] = tp.offset
        for tp in wanted - set(offsets):
            if self.reset in ("earliest", "smallest", "beginning"):
                offsets[tp] = OFFSET_BEGINNING
            elif self.reset in ("latest", "largest", "end"):
                offsets[tp] = OFFSET_END
            else:
                raise LagassignError(
                    f"{self.group}/{self.instance_id}: {tp[0]}-{tp[1]} has no committed offset and "
                    f"auto.offset.reset is {self.reset!r}"
                )
        self.plan = plan
        self._consumer.assign([TopicPartition(t, p, offsets[(t, p)]) for t, p in sorted(wanted)])
        self._assigned = wanted
        self._positions = {tp: o for tp, o in offsets.items() if o >= 0}
        log.info("%s/%s: plan v%s, %d partitions", self.group, self.instance_id, plan.version, len(wanted))
        if self.on_switch is not None:
            self.on_switch(previous, plan)

    def _commit(self, positions: Mapping[TP, int]) -> None:
        from confluent_kafka import KafkaException, TopicPartition

        offsets = [TopicPartition(t, p, o) for (t, p), o in sorted(positions.items()) if o >= 0]
        if not offsets:
            return
        try:
            self._consumer.commit(offsets=offsets, asynchronous=False)
        except KafkaException as exc:
            # Not fatal for correctness: whoever takes these partitions over starts from the
            # last commit and processes some messages again (at-least-once).
            log.warning("%s/%s: commit failed: %s", self.group, self.instance_id, exc)
