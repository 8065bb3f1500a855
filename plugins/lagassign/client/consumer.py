"""``PlanConsumer``: a consumer in manual ``assign()`` mode that follows its group's plans safely
(the package docstring, ``lagassign.client``, says what it guarantees and how)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..core.errors import LagassignError
from ..core.handover import Marker, may_start
from ..core.liveness import (
    DEFAULT_HEARTBEAT_INTERVAL_MS,
    DEFAULT_SESSION_TIMEOUT_MS,
    Liveness,
)
from ..core.model import TopicPartition as TP
from ..core.plans import Plan, newest_of
from ..core.publishing import members_text
from ..core.topics import PLAN_TOPIC, STATUS_TOPIC
from ..kafka.admin import live_members
from ..kafka.connection import AuthCollector
from ..kafka.errors import BrokerUnavailableError
from ..kafka.reader import catch_up
from ..kafka.status import apply_record, ensure_status_topic, partition_for
from .announcer import Announcer

log = logging.getLogger(__name__)

_EARLIEST = ("earliest", "smallest", "beginning")
_LATEST = ("latest", "largest", "end")
_PENDING_CHECK_S = 0.25
DEFAULT_COMMIT_INTERVAL_MS = 5_000
DEFAULT_MAX_POLL_INTERVAL_MS = 300_000
DEFAULT_HANDOVER_TIMEOUT_S = 120.0
#: the longest a held partition's committed offset goes without being committed again
MAX_OFFSETS_REFRESH_S = 3600.0
#: librdkafka's names of the answers Kafka gives a commit from outside the group protocol while
#: the group has members (Kafka 4: UNKNOWN_MEMBER_ID, for classic and consumer groups alike)
_MEMBERS_REFUSE = ("UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "STALE_MEMBER_EPOCH", "FENCED_MEMBER_EPOCH")


class GroupMembersError(LagassignError):
    """The group has live members of the group protocol, so Kafka refuses this consumer's
    commits (Kafka accepts commits from outside the protocol only while a group has none)."""


def _ms(conf: Mapping[str, Any], key: str, default: int) -> int:
    value = conf.get(key, default)
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise LagassignError(f"{key} must be a whole number of milliseconds, got {value!r}") from None
    if number <= 0:
        raise LagassignError(f"{key} must be positive, got {number}")
    return number


def _flag(conf: Mapping[str, Any], key: str, default: bool) -> bool:
    value = conf.get(key, default)
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("true", "1", "yes")


def _now_ms() -> int:
    return int(time.time() * 1000)


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
        from confluent_kafka import Consumer

        if not group or not instance_id:
            raise LagassignError("PlanConsumer needs a group and an instance id")
        if capacity is not None and (
            isinstance(capacity, bool)
            or not isinstance(capacity, int | float)
            or not 0 < capacity < float("inf")
        ):
            raise LagassignError(f"capacity must be messages per second > 0, got {capacity!r}")
        if offsets_refresh is not None and not 0 < offsets_refresh < float("inf"):
            raise LagassignError(f"offsets_refresh must be seconds > 0, got {offsets_refresh!r}")
        self.group = group
        self.instance_id = instance_id
        self.topics = tuple(sorted(set(topics or ())))
        self.plan_topic = plan_topic
        self.status_topic = status_topic
        self.plan_check_interval = plan_check_interval
        self.timeout = timeout
        self.on_switch = on_switch
        self.handover_timeout = handover_timeout
        conf = dict(config)
        conf.setdefault("client.id", f"{group}.{instance_id}")
        self.auto_commit = _flag(conf, "enable.auto.commit", True)
        self.commit_interval = _ms(conf, "auto.commit.interval.ms", DEFAULT_COMMIT_INTERVAL_MS) / 1000
        session_timeout_ms = _ms(conf, "session.timeout.ms", DEFAULT_SESSION_TIMEOUT_MS)
        heartbeat_interval = _ms(conf, "heartbeat.interval.ms", DEFAULT_HEARTBEAT_INTERVAL_MS) / 1000
        max_poll_interval = _ms(conf, "max.poll.interval.ms", DEFAULT_MAX_POLL_INTERVAL_MS) / 1000
        rack = conf.get("client.rack") or None
        self.reset = str(conf.get("auto.offset.reset", "latest")).lower()
        # Fail on a wrong password or a TLS problem at once, not after endless retries.
        self._auth = AuthCollector()
        conf["error_cb"] = self._auth.wrap(conf.get("error_cb"))
        conf.update({"group.id": group, "enable.auto.commit": False, "enable.partition.eof": False})
        # librdkafka requires max.poll.interval.ms >= session.timeout.ms; neither is used in
        # assign() mode by librdkafka itself, so keep its own defaults where ours would clash.
        for key in ("session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms"):
            conf.pop(key, None)
        self._conf = conf
        self._consumer = Consumer(conf)
        # The follower of plans and statuses: its group id is never used (no subscribe, no commit).
        follower = {
            "group.id": f"{group}.lagassign-plans",
            "auto.offset.reset": "earliest",
            "client.id": f"{conf['client.id']}.plans",
            "enable.partition.eof": True,
        }
        self._follower = Consumer({**conf, **follower})
        self._admin_conf = {k: v for k, v in conf.items() if k not in _CONSUMER_ONLY}
        announcer_conf = {**self._admin_conf, "client.id": f"{conf['client.id']}.status"}
        self._announcer = Announcer(
            announcer_conf,
            status_topic,
            group,
            instance_id,
            self.topics,
            session_timeout_ms,
            heartbeat_interval,
            max_poll_interval,
            rack,
            timeout,
            capacity,
        )
        self.plan: Plan | None = None
        self.liveness = Liveness()
        self._assigned: set[TP] = set()  # started: fetched and returned by poll()
        self._pending: dict[TP, float] = {}  # in the plan, waiting for handover (since when)
        self._positions: dict[TP, int] = {}  # next offset to process, per started partition
        self._committed: dict[TP, int] = {}  # last position committed, per started partition
        self._committed_at: dict[TP, float] = {}  # when (monotonic), per started partition
        self.offsets_refresh = offsets_refresh  # None until read from the broker
        self._members_checked = False
        self._following = False  # True once the plans topic was read to its end
        self._next_check = 0.0
        self._next_commit = time.monotonic() + self.commit_interval
        self._next_pending_check = 0.0
        self._lag: int | None = None
        self._closed = False

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
            self._positions[tp] = (msg.offset() or 0) + 1
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
            self._refuse_if_members()
            self._members_checked = True
        if self.offsets_refresh is None:
            self.offsets_refresh = self._refresh_interval(md)
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
            self._refresh_commits()
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
        for tp in give:
            self._positions.pop(tp, None)
            self._committed.pop(tp, None)
            self._committed_at.pop(tp, None)
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
        now = _now_ms()
        others = {i: s for i, s in self.liveness.alive(self.group, now).items() if i != self.instance_id}
        start: dict[TP, int | None] = {}
        for c in committed:
            tp = TP(c.topic, c.partition)
            offset = c.offset if c.error is None and c.offset >= 0 else None
            marker = Marker.decode(c.metadata) if offset is not None else None
            verdict = may_start(
                tp,
                marker,
                self.instance_id,
                self.plan.version,
                lambda i: self.liveness.is_alive(self.group, i, now),
                others,
            )
            waited = time.monotonic() - self._pending[tp]
            if not verdict.go and waited < self.handover_timeout:
                continue
            why = verdict.why if verdict.go else f"no release within {self.handover_timeout:.0f}s"
            log.info(
                "%s/%s: starting %s at %s: %s",
                self.group,
                self.instance_id,
                tp,
                offset if offset is not None else self.reset,
                why,
            )
            start[tp] = offset
        if not start:
            return
        offsets = self._resolve(start)
        # Claim first (a held marker at the start offset), then fetch: a later taker sees us.
        self._positions.update(offsets)
        self._commit(offsets, released=False)
        self._consumer.incremental_assign([TopicPartition(t, p, o) for (t, p), o in sorted(offsets.items())])
        for tp in offsets:
            self._pending.pop(tp, None)
        self._assigned |= set(offsets)
        self._show(flush=False)

    def _resolve(self, start: Mapping[TP, int | None]) -> dict[TP, int]:
        """Offsets to start from: committed ones, else ``auto.offset.reset`` resolved to a number."""
        from confluent_kafka import TopicPartition

        out: dict[TP, int] = {}
        for tp, offset in start.items():
            if offset is not None:
                out[tp] = offset
                continue
            if self.reset not in _EARLIEST + _LATEST:
                raise LagassignError(
                    f"{self.group}/{self.instance_id}: {tp} has no committed offset and "
                    f"auto.offset.reset is {self.reset!r}"
                )
            low, high = self._consumer.get_watermark_offsets(TopicPartition(*tp), timeout=self.timeout)
            out[tp] = low if self.reset in _EARLIEST else high
        return out

    # -- commits and announcements -------------------------------------------------------
    def _commit(self, tps: Any, released: bool, only_changed: bool = False) -> None:
        """Commit the positions of ``tps`` (a set, or a mapping of offsets) with our marker;
        ``only_changed`` skips partitions whose position was committed already."""
        from confluent_kafka import KafkaException, TopicPartition

        positions = dict(tps) if isinstance(tps, Mapping) else {tp: self._positions.get(tp) for tp in tps}
        if only_changed:
            positions = {tp: o for tp, o in positions.items() if self._committed.get(tp) != o}
        marker = Marker(self.instance_id, self.version, released).encode()
        offsets = [
            TopicPartition(t, p, o, metadata=marker)
            for (t, p), o in sorted(positions.items())
            if o is not None and o >= 0
        ]
        if not offsets:
            return
        try:
            self._consumer.commit(offsets=offsets, asynchronous=False)
        except KafkaException as exc:
            err: Any = exc.args[0] if exc.args else None
            name = str(err.name()) if hasattr(err, "name") else ""
            if name in _MEMBERS_REFUSE:  # a member joined: raises, naming it
                self._refuse_if_members(f"commit refused ({name})")
            # Not fatal: whoever takes these partitions over starts from the last commit and
            # processes some messages again (at-least-once).
            log.warning("%s/%s: commit failed: %s", self.group, self.instance_id, exc)
            return
        now = time.monotonic()
        for o in offsets:
            self._committed[TP(o.topic, o.partition)] = o.offset
            self._committed_at[TP(o.topic, o.partition)] = now

    def _refresh_commits(self) -> None:
        """Commit again the committed offset of every held partition last committed
        ``offsets_refresh`` seconds ago or more, so Kafka's offset retention never expires it."""
        if not self.offsets_refresh:
            return
        due = time.monotonic() - self.offsets_refresh
        stale = {
            tp: self._committed[tp]
            for tp in self._assigned
            if tp in self._committed and self._committed_at.get(tp, 0.0) <= due
        }
        if stale:
            log.info("%s/%s: refreshing %d committed offsets", self.group, self.instance_id, len(stale))
            self._commit(stale, released=False)

    def _refresh_interval(self, md: Any) -> float:
        """A quarter of the broker's ``offsets.retention.minutes`` in seconds, at most
        ``MAX_OFFSETS_REFRESH_S``; that maximum when the broker does not say."""
        from confluent_kafka.admin import AdminClient, ConfigResource

        try:
            broker = min(md.brokers)
            resource = ConfigResource("BROKER", str(broker))
            admin = AdminClient(self._admin_conf)
            [future] = admin.describe_configs([resource], request_timeout=self.timeout).values()
            minutes = float(future.result(timeout=self.timeout + 5)["offsets.retention.minutes"].value)
        except Exception as exc:  # no DescribeConfigs permission, an old broker, no answer
            log.info("%s/%s: offsets.retention.minutes unknown (%s)", self.group, self.instance_id, exc)
            return MAX_OFFSETS_REFRESH_S
        return max(1.0, min(MAX_OFFSETS_REFRESH_S, minutes * 60 / 4))

    def _refuse_if_members(self, what: str | None = None) -> None:
        """Raise ``GroupMembersError`` when the group has live members of the group protocol;
        after a refused commit (``what``) also when the cluster cannot say who they are."""
        try:
            members = live_members(self._admin_conf, [self.group], self.timeout).get(self.group, [])
        except BrokerUnavailableError as exc:
            log.warning("%s/%s: cannot check the group's members: %s", self.group, self.instance_id, exc)
            members = None
        if members == [] or (members is None and what is None):
            return  # none (a refused commit's member left since: the next commit tries again)
        where = f"{self.group}/{self.instance_id}: " + (f"{what}: " if what else "")
        if members:
            text = members_text(self.group, members)
            raise GroupMembersError(f"{where}{text}; give this consumer a group id of its own")
        raise GroupMembersError(
            f"{where}Kafka accepts commits from assign() consumers only while the group has no "
            "members of the group protocol"
        )

    def _lag_now(self) -> int | None:
        """Messages between our positions and the partitions' ends, from librdkafka's cache."""
        from confluent_kafka import TopicPartition

        total, known = 0, False
        for tp in self._assigned:
            try:
                _low, high = self._consumer.get_watermark_offsets(TopicPartition(*tp), cached=True)
            except Exception:  # not fetched yet
                continue
            pos = self._positions.get(tp)
            if high is not None and high >= 0 and pos is not None:
                total += max(0, high - pos)
                known = True
        return total if known else None

    def _show(self, flush: bool) -> None:
        """Announce what changed (version, partitions, pending ones)."""
        self._announcer.show(self.version, self._assigned, self._pending, self._lag_now(), flush)


# Consumer-only settings a producer (or admin client) would warn about or refuse.
_CONSUMER_ONLY = frozenset(
    {
        "group.id",
        "enable.auto.commit",
        "enable.partition.eof",
        "auto.offset.reset",
        "auto.commit.interval.ms",
        "fetch.wait.max.ms",
        "fetch.min.bytes",
        "fetch.max.bytes",
        "max.partition.fetch.bytes",
        "queued.min.messages",
        "queued.max.messages.kbytes",
        "session.timeout.ms",
        "heartbeat.interval.ms",
        "max.poll.interval.ms",
        "partition.assignment.strategy",
        "group.instance.id",
        "client.rack",
        "isolation.level",
        "check.crcs",
        "enable.auto.offset.store",
        "group.protocol",
        "group.remote.assignor",
        "fetch.error.backoff.ms",
        "fetch.queue.backoff.ms",
        "coordinator.query.interval.ms",
        "error_cb",
    }
)
