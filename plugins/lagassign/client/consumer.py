"""``PlanConsumer``: a consumer in manual ``assign()`` mode that follows its group's plans safely
(the package docstring, ``lagassign.client``, says what it guarantees and how)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..core.errors import LagassignError
from ..core.liveness import Liveness
from ..core.model import TopicPartition as TP
from ..core.plans import Plan, newest_of
from ..core.topics import PLAN_TOPIC, STATUS_TOPIC
from ..kafka.connection import AuthCollector
from ..kafka.errors import BrokerUnavailableError
from ..kafka.reader import catch_up
from ..kafka.status import apply_record, ensure_status_topic, partition_for
from .announcer import Announcer
from .commits import Commits
from .kafka_rules import offsets_refresh_interval, refuse_if_members
from .settings import DEFAULT_HANDOVER_TIMEOUT_S, ConsumerSettings, check_arguments, read_settings
from .takeover import start_offsets, startable

log = logging.getLogger(__name__)

_PENDING_CHECK_S = 0.25


class PlanConsumer:
    """A Kafka consumer in manual assign() mode that follows its group's published plans.

    ``topics``: the topics this instance consumes, announced on the status topic so that a
    watcher can give a newcomer its share (default: none announced; the watcher then uses the
    groups file or the topics of the group's plan). ``handover_timeout``: the longest a taker
    waits for a giver that neither releases a partition nor dies (a safety valve for a status
    topic that cannot be read; default 120 s). ``capacity``: messages per second this instance
    can process, announced so that the planner can plan in time (drain-optimal gives faster
    instances more); without it the planner takes the rate of an instance that is behind.

    Kafka's rules for consumers outside the group protocol, and what this class does about them:

    * Kafka accepts their offset commits only while the group has no members (of the classic
      or the consumer protocol; Kafka 4 answers others with UNKNOWN_MEMBER_ID). The first
      ``poll()`` raises ``GroupMembersError`` naming the members when the group has any, and so
      does the first commit Kafka refuses later (a member joined meanwhile): commits are never
      lost in silence. Use a group id no ``subscribe()`` consumer uses.
    * Their committed offsets expire ``offsets.retention.minutes`` (7 days by default) after
      their last commit, even while the consumer runs. A partition that receives nothing
      for that long would lose its place (and its handover marker), and its next holder would
      start from ``auto.offset.reset``. So every held partition's committed offset is committed
      again (unchanged, same marker) once it is ``offsets_refresh`` seconds old: by default a
      quarter of the broker's ``offsets.retention.minutes`` (read once, when the consumer
      starts following its plans), at most an hour, and an hour when the broker does not say
      (DescribeConfigs refused). This runs from ``poll()``, with ``enable.auto.commit=false`` too.
    """

    def __init__(
        self,
        config: Mapping[str, Any],
        group: str,
        instance_id: str,
        topics: list[str] | None = None,
        plan_topic: str = PLAN_TOPIC,
        status_topic: str = STATUS_TOPIC,
        plan_check_interval: float = 2.0,
        timeout: float = 30.0,
        on_switch: Callable[[Plan | None, Plan], None] | None = None,
        handover_timeout: float = DEFAULT_HANDOVER_TIMEOUT_S,
        capacity: float | None = None,
        offsets_refresh: float | None = None,
    ) -> None:
        check_arguments(group, instance_id, capacity, offsets_refresh)
        self.group = group
        self.instance_id = instance_id
        self.topics = tuple(sorted(set(topics or ())))
        self.plan_topic = plan_topic
        self.status_topic = status_topic
        self.plan_check_interval = plan_check_interval
        self.timeout = timeout
        self.on_switch = on_switch
        self.handover_timeout = handover_timeout
        # Fail on a wrong password or a TLS problem at once, not after endless retries.
        self._auth = AuthCollector()
        settings = read_settings(config, group, instance_id, self._auth)
        self.auto_commit = settings.auto_commit
        self.commit_interval = settings.commit_interval
        self.reset = settings.reset
        self._conf = settings.consumer
        self._admin_conf = settings.admin
        self._start_clients(settings, capacity)
        self.plan: Plan | None = None
        self.liveness = Liveness()
        self._assigned: set[TP] = set()  # started: fetched and returned by poll()
        self._pending: dict[TP, float] = {}  # in the plan, waiting for handover (since when)
        self.offsets_refresh = offsets_refresh  # None until read from the broker
        self._members_checked = False
        self._following = False  # True once the plans topic was read to its end
        self._next_check = 0.0
        self._next_commit = time.monotonic() + self.commit_interval
        self._next_pending_check = 0.0
        self._closed = False

    def _start_clients(self, settings: ConsumerSettings, capacity: float | None) -> None:
        """The data consumer, the follower of plans and statuses, the status announcer (silent
        until ``_start_following``) and the book of commits."""
        from confluent_kafka import Consumer

        self._consumer = Consumer(settings.consumer)
        self._follower = Consumer(settings.follower)
        self._announcer = Announcer(
            settings.announcer,
            self.status_topic,
            self.group,
            self.instance_id,
            self.topics,
            settings.session_timeout_ms,
            settings.heartbeat_interval,
            settings.max_poll_interval,
            settings.rack,
            self.timeout,
            capacity,
        )
        self._commits = Commits(self._consumer, self.group, self.instance_id, self._admin_conf, self.timeout)

    # -- what callers look at ------------------------------------------------------------
    @property
    def version(self) -> int | None:
        """Version of the plan in force (None before the first plan)."""
        return self.plan.version if self.plan else None

    @property
    def assignment(self) -> list[tuple[str, int]]:
        """The (topic, partition) pairs this instance consumes now under the current plan."""
        return [(t, p) for t, p in sorted(self._assigned)]

    @property
    def pending(self) -> list[tuple[str, int]]:
        """Partitions the plan gives this instance that wait for their previous holder to let go."""
        return [(t, p) for t, p in sorted(self._pending)]

    @property
    def consumer(self) -> Any:
        """The wrapped confluent-kafka Consumer (do not assign() or commit() it yourself)."""
        return self._consumer

    # -- the loop ------------------------------------------------------------------------
    def poll(self, timeout: float = 1.0) -> Any:
        """The next data message of this instance's partitions, or None within ``timeout``."""
        from confluent_kafka import KafkaException

        if self._closed:
            raise LagassignError(f"{self.group}/{self.instance_id}: poll() after close()")
        deadline = time.monotonic() + timeout
        self._announcer.polled()
        while True:
            self._auth.raise_if_failed(self._conf)
            if not self._following:
                if time.monotonic() >= self._next_check:
                    self._start_following()
                if not self._following:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return None
                    time.sleep(min(remaining, 0.1))  # no plans topic yet: nothing to fetch
                    continue
            idle = min(0.2, max(0.0, deadline - time.monotonic()))
            self._housekeeping(wait=0.0 if self._assigned else idle)
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
            tp = TP(msg.topic() or "", msg.partition() or 0)
            if tp not in self._assigned:
                continue  # fetched before a switch took the partition away
            self._commits.positions[tp] = (msg.offset() or 0) + 1
            self._announcer.polled(1)
            return msg

    def commit(self) -> None:
        """Commit the processed offsets of the current partitions (synchronously)."""
        self._commit(self._assigned, released=False, only_changed=True)

    def close(self) -> None:
        """Commit what was processed (released), say goodbye on the status topic, close."""
        if self._closed:
            return
        self._closed = True
        try:
            self._commit(self._assigned, released=True)
        finally:
            try:
                self._announcer.close()
            finally:
                self._consumer.close()
                self._follower.close()

    def __enter__(self) -> PlanConsumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- following plans and statuses -------------------------------------------------------
    def _start_following(self) -> None:
        """Find both topics; announce ourselves; read both to their end; take the newest plan."""
        from confluent_kafka import KafkaException

        self._next_check = time.monotonic() + self.plan_check_interval
        try:
            md = self._follower.list_topics(timeout=self.timeout)  # all topics: see kafka.plans
        except KafkaException as exc:
            log.warning("consumer %s/%s: no metadata yet: %s", self.group, self.instance_id, exc)
            return
        if not self._members_checked:
            refuse_if_members(self._admin_conf, self.group, self.instance_id, self.timeout)
            self._members_checked = True
        if self.offsets_refresh is None:
            who = f"{self.group}/{self.instance_id}"
            self.offsets_refresh = offsets_refresh_interval(self._admin_conf, md, self.timeout, who)
        topic = md.topics.get(self.plan_topic)
        if topic is None or topic.error is not None or not topic.partitions:
            log.info("plans topic %s does not exist yet; waiting", self.plan_topic)
            return
        status = md.topics.get(self.status_topic)
        if status is None or status.error is not None or not status.partitions:
            try:
                status_parts = ensure_status_topic(self._admin_conf, self.status_topic, self.timeout)
            except LagassignError as exc:
                log.warning("%s/%s: no status topic, so no liveness: %s", self.group, self.instance_id, exc)
                status_parts = []
        else:
            status_parts = sorted(status.partitions)
        wanted = [(self.plan_topic, p) for p in sorted(topic.partitions)]
        if status_parts:
            partition = partition_for(self.group, len(status_parts))
            wanted.append((self.status_topic, partition))
            self._announcer.start(partition)  # before any claim: takers must know we exist
        plans: list[tuple[str | None, bytes | None]] = []
        try:
            catch_up(self._follower, wanted, self.timeout, lambda msg: self._take(msg, plans))
        except BrokerUnavailableError as exc:
            log.warning("%s/%s: %s; retrying", self.group, self.instance_id, exc)
            self._follower.unassign()
            return
        self._following = True
        plan = newest_of(plans, {self.group}).get(self.group)
        if plan is not None:
            self._switch(plan)
        else:
            log.info("no plan for group %s yet; waiting", self.group)

    def _take(self, msg: Any, plans: list[tuple[str | None, bytes | None]] | None = None) -> Plan | None:
        """One record of the follower: a status goes into ``liveness``; a plan of our group is
        collected (catching up) or returned (following)."""
        if msg.topic() == self.status_topic:
            apply_record(self.liveness, msg.key(), msg.value(), (self.group,))
            return None
        key = msg.key()
        if key is None or key.decode("utf-8", "replace") != self.group:
            return None
        if plans is not None:
            plans.append((self.group, msg.value()))
            return None
        return newest_of([(self.group, msg.value())], {self.group}).get(self.group)

    def _housekeeping(self, wait: float) -> None:
        """Take in new plans and statuses, start partitions whose handover is done, auto-commit."""
        newest: Plan | None = None
        for msg in self._follower.consume(500, wait):
            if msg.error() is not None:
                continue
            found = self._take(msg)
            if found is None:
                continue
            held = newest or self.plan
            if held is not None and found.version <= held.version:
                log.info("ignoring plan v%s of %s: v%s is in force", found.version, self.group, held.version)
                continue
            newest = found
        if newest is not None:
            self._switch(newest)
        if self._pending and time.monotonic() >= self._next_pending_check:
            self._start_pending()
        if time.monotonic() >= self._next_commit:
            self._next_commit = time.monotonic() + self.commit_interval
            if self.auto_commit:
                self._commit(self._assigned, released=False, only_changed=True)
            self._commits.refresh(self._assigned, self.version, self.offsets_refresh)
            self._announcer.set_lag(self._lag_now())

    def _switch(self, plan: Plan) -> None:
        """Release what the new plan takes away, then start what it gives once handed over."""
        from confluent_kafka import TopicPartition

        previous = self.plan
        wanted = {TP(t, p) for t, p in plan.partitions_of(self.instance_id)}
        give = self._assigned - wanted
        self.plan = plan
        # 1. Stop returning what we give up, commit it as released under the new version, drop it.
        self._assigned -= give
        self._commit(give, released=True)
        if give:
            self._consumer.incremental_unassign([TopicPartition(t, p) for t, p in sorted(give)])
        self._commits.forget(give)
        # 2. What we keep is now held under the new version.
        self._commit(self._assigned, released=False)
        # 3. What is new waits for its previous holder (or starts at once: see _start_pending).
        self._pending = {tp: self._pending.get(tp, time.monotonic()) for tp in wanted - self._assigned}
        # 4. Tell the group before anything else: takers wait for this announcement.
        self._show(flush=True)
        log.info(
            "%s/%s: plan v%s: %d partitions kept, %d released, %d to take over",
            self.group,
            self.instance_id,
            plan.version,
            len(self._assigned),
            len(give),
            len(self._pending),
        )
        self._start_pending()
        if self.on_switch is not None:
            self.on_switch(previous, plan)

    def _start_pending(self) -> None:
        """Start every pending partition whose handover is done (``handover.may_start``)."""
        from confluent_kafka import TopicPartition

        self._next_pending_check = time.monotonic() + _PENDING_CHECK_S
        if not self._pending or self.plan is None:
            return
        asked = [TopicPartition(t, p) for t, p in sorted(self._pending)]
        try:
            committed = self._consumer.committed(asked, timeout=self.timeout)
        except Exception as exc:  # the broker is away: try again on the next check
            log.warning("%s/%s: reading committed offsets failed: %s", self.group, self.instance_id, exc)
            return
        start = startable(
            committed,
            self._pending,
            self.group,
            self.instance_id,
            self.plan.version,
            self.liveness,
            self.handover_timeout,
            self.reset,
        )
        if not start:
            return
        who = f"{self.group}/{self.instance_id}"
        offsets = start_offsets(self._consumer, start, self.reset, self.timeout, who)
        # Claim first (a held marker at the start offset), then fetch: a later taker sees us.
        self._commits.positions.update(offsets)
        self._commit(offsets, released=False)
        self._consumer.incremental_assign([TopicPartition(t, p, o) for (t, p), o in sorted(offsets.items())])
        for tp in offsets:
            self._pending.pop(tp, None)
        self._assigned |= set(offsets)
        self._show(flush=False)

    # -- commits and announcements -------------------------------------------------------
    def _commit(self, tps: Any, released: bool, only_changed: bool = False) -> None:
        """Commit the positions of ``tps`` (a set, or a mapping of offsets) with our marker
        under the plan in force; ``only_changed`` skips partitions committed at their position."""
        self._commits.commit(tps, self.version, released, only_changed)

    def _lag_now(self) -> int | None:
        """Messages between our positions and the partitions' ends, from librdkafka's cache."""
        return self._commits.lag(self._assigned)

    def _show(self, flush: bool) -> None:
        """Announce what changed (version, partitions, pending ones)."""
        self._announcer.show(self.version, self._assigned, self._pending, self._lag_now(), flush)
