"""AdminClient calls of a snapshot: batched, concurrent, bounded by timeouts and retries, counted.

confluent-kafka's admin calls return futures completed by librdkafka's background thread, so
concurrency costs no threads here: we keep up to ``concurrency`` requests in flight. What each
call can batch decides the cost of a snapshot of G groups over P distinct partitions:

* metadata and list groups: 1 call each;
* describe groups: ceil(G / describe_batch) calls (many groups per request); for the
  ``consumer``-type groups (KIP-848) one more ConsumerGroupDescribe per coordinator and 100
  groups, sent by ``groupdescribe`` (confluent-kafka drops racks, subscriptions and epochs);
* committed offsets: G calls (the API takes one group per call), run concurrently; or, when
  the partitions are named (``committed(..., partitions=...)``), G * ceil(P_named /
  committed_batch) calls;
* begin and end offsets: 2 * ceil(P / offsets_batch) calls, shared by every group reading a
  partition (offsets are per partition, not per group).

So calls grow linearly with groups, and time with groups / concurrency.

noida-db answers a whole-group OffsetFetch (no partitions named) in time that grows with
everything it stores, and more requests in flight do not help; naming the partitions costs it
far less up to a few hundred partitions a request, so the snapshot names them (every partition
of a small cluster, in requests of ``committed_batch`` partitions; see
``snapshot.committed_scope``). The figures are in docs/performance.md (bench/snapshot_speed.py).
confluent-kafka's ``list_consumer_group_offsets`` takes one group per call, so OffsetFetch v8's
many-groups requests (KIP-709) are out of reach from Python.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from .connection import first_metadata, with_collector
from .errors import BrokerUnavailableError, reason
from .fanout import Bounds, Progress, fan_out
from .groupdescribe import describe_consumer_groups


def _retriable(exc: BaseException) -> bool:
    from confluent_kafka import KafkaError

    err = exc.args[0] if exc.args else None
    if not isinstance(err, KafkaError):
        return False
    return err.retriable() or err.code() in (
        KafkaError._TIMED_OUT,
        KafkaError._TRANSPORT,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError.NOT_COORDINATOR,
        KafkaError.REQUEST_TIMED_OUT,
    )


class AdminHook:
    """One AdminClient for one snapshot, with the bounds and the call counter the benchmark reads."""

    def __init__(
        self,
        config: Mapping[str, Any],
        timeout: float = 30.0,
        retries: int = 2,
        concurrency: int = 64,
        describe_batch: int = 100,
        offsets_batch: int = 10_000,
        committed_batch: int = 300,
    ) -> None:
        from confluent_kafka.admin import AdminClient

        self.config = dict(config)
        self.timeout = timeout
        self.retries = retries
        self.concurrency = max(1, concurrency)
        self.describe_batch = describe_batch
        self.offsets_batch = offsets_batch
        self.committed_batch = max(1, committed_batch)
        self.calls: Counter[str] = Counter()
        conf, self.auth = with_collector(self.config)
        self.admin = AdminClient(conf)

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    # -- cluster -------------------------------------------------------------------------
    def metadata(self) -> Any:
        """Cluster metadata: KafkaAuthError at once on bad credentials or TLS, else
        BrokerUnavailableError when the cluster does not answer within ``timeout``."""

        def counted() -> None:
            self.calls["list_topics"] += 1

        return first_metadata(self.admin, self.config, self.auth, self.timeout, counted)

    def list_groups(self) -> tuple[list[Any], list[str]]:
        """(group listings, errors) of every group the cluster lists."""

        def call() -> Any:
            self.calls["list_consumer_groups"] += 1
            return self.admin.list_consumer_groups(request_timeout=self.timeout)

        result = self._with_retries(call)
        return list(result.valid or []), [reason(e) for e in (result.errors or [])]

    @property
    def old_broker(self) -> bool:
        """Configured for a broker before 0.10 (no ApiVersions, e.g. Kafka 0.9)."""
        return str(self.config.get("api.version.request", "true")).lower() == "false"

    def broker_racks(self) -> dict[int, str | None]:
        """Broker id -> its rack (``broker.rack``; None when it has none), from one DescribeCluster
        (librdkafka answers it from a Metadata request). Empty when the cluster cannot say (old
        brokers): partitions then carry no racks."""

        if self.old_broker:
            return {}  # brokers before 0.10 have no DescribeCluster (asking waits for a timeout)

        def call() -> Any:
            self.calls["describe_cluster"] += 1
            return self.admin.describe_cluster(request_timeout=self.timeout)

        try:
            result = self._with_retries(call)
        except Exception:
            return {}
        return {int(n.id): (n.rack or None) for n in (result.nodes or [])}

    # -- groups --------------------------------------------------------------------------
    def describe(self, group_ids: Sequence[str]) -> dict[str, Any]:
        """group id -> ConsumerGroupDescription, or the exception that describing it raised."""
        batches = [
            list(group_ids[i : i + self.describe_batch])
            for i in range(0, len(group_ids), self.describe_batch)
        ]

        def submit(batch: list[str]) -> dict[str, Future]:
            self.calls["describe_consumer_groups"] += 1
            return self.admin.describe_consumer_groups(batch, request_timeout=self.timeout)

        return self._fan_out(batches, submit)

    def describe_consumer_protocol(self, group_ids: Sequence[str]) -> dict[str, Any]:
        """group id -> ``groupdescribe.Group`` (a ``consumer``-type group as its coordinator
        describes it: members' racks, subscriptions, epochs and types besides what
        ``describe`` gives), or the exception reading it ended with. Raises
        ``groupdescribe.UnsupportedDescribe`` when these settings or this cluster rule the
        request out (SASL, no ConsumerGroupDescribe), ``groupdescribe.DescribeError`` when no
        broker answers."""
        if not group_ids:
            return {}
        return dict(
            describe_consumer_groups(self.config, group_ids, self.timeout, self.retries + 1, self.calls)
        )

    def committed(
        self,
        group_ids: Sequence[str],
        progress: Progress | None = None,
        partitions: Mapping[str, Sequence[int]] | None = None,
    ) -> dict[str, Any]:
        """group id -> list of committed TopicPartitions, or the exception that fetching raised.

        Without ``partitions`` each group is asked for everything it committed (one request a
        group). With ``partitions`` (topic -> partition numbers) each group is asked for those,
        ``committed_batch`` at a time, and the answer keeps what the group committed (offset
        >= 0) and partitions that failed, as the whole-group answer has them; a partition
        without a commit, or of a topic gone since, is left out. A group whose requests do not
        all succeed gets the first failure."""
        from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, TopicPartition

        if partitions is None:
            chunks: list[list[Any] | None] = [None]
        else:
            named = [TopicPartition(t, p) for t in sorted(partitions) for p in sorted(partitions[t])]
            size = self.committed_batch
            if not named:  # nothing to name: no group has a commit on an existing topic
                return {gid: [] for gid in group_ids}
            chunks = [named[i : i + size] for i in range(0, len(named), size)]
        gone = (KafkaError.UNKNOWN_TOPIC_OR_PART,)

        def submit(item: tuple[str, int]) -> dict[tuple[str, int], Future]:
            gid, i = item
            self.calls["list_consumer_group_offsets"] += 1
            futures = self.admin.list_consumer_group_offsets(
                [ConsumerGroupTopicPartitions(gid, chunks[i])], request_timeout=self.timeout
            )
            [future] = futures.values()  # one group per request
            return {item: future}

        def counted(done: int, _total: int) -> None:
            if progress is not None and done % len(chunks) == 0:
                progress(done // len(chunks), len(group_ids))

        items = [(gid, i) for gid in group_ids for i in range(len(chunks))]
        found = self._fan_out(items, submit, counted if progress else None, keys=lambda item: [item])
        out: dict[str, Any] = {}
        for gid in group_ids:
            answers: list[Any] = [found.get((gid, i)) for i in range(len(chunks))]
            failure = next((a for a in answers if isinstance(a, BaseException) or a is None), False)
            if failure is not False:
                out[gid] = failure
            elif partitions is None:
                out[gid] = answers[0].topic_partitions
            else:
                out[gid] = [
                    tp
                    for a in answers
                    for tp in a.topic_partitions or []
                    if (tp.error is None and tp.offset >= 0)
                    or (tp.error is not None and tp.error.code() not in gone)
                ]
        return out

    def offsets(self, partitions: Iterable[tuple[str, int]], which: str) -> dict[tuple[str, int], Any]:
        """(topic, partition) -> offset (``which`` = earliest | latest), or the exception."""
        from confluent_kafka import TopicPartition
        from confluent_kafka.admin import OffsetSpec

        spec = OffsetSpec.earliest() if which == "earliest" else OffsetSpec.latest()
        tps = sorted(set(partitions))
        batches = [tps[i : i + self.offsets_batch] for i in range(0, len(tps), self.offsets_batch)]

        def submit(batch: list[tuple[str, int]]) -> dict[tuple[str, int], Future]:
            self.calls["list_offsets"] += 1
            futures = self.admin.list_offsets(
                {TopicPartition(t, p): spec for t, p in batch}, request_timeout=self.timeout
            )
            return {(tp.topic, tp.partition): f for tp, f in futures.items()}

        found = self._fan_out(batches, submit)
        return {tp: (r.offset if not isinstance(r, BaseException) else r) for tp, r in found.items()}

    # -- machinery -----------------------------------------------------------------------
    def _with_retries(self, call: Callable[[], Future]) -> Any:
        from confluent_kafka import KafkaException

        for attempt in range(self.retries + 1):
            try:
                return call().result(timeout=self.timeout + 5)
            except KafkaException as exc:
                if attempt == self.retries or not _retriable(exc):
                    raise BrokerUnavailableError(f"Kafka did not answer: {reason(exc)}") from None
            except TimeoutError:
                if attempt == self.retries:
                    raise BrokerUnavailableError(f"Kafka did not answer within {self.timeout:g}s") from None
            time.sleep(0.5 * (attempt + 1))
        raise AssertionError("unreachable")

    def _fan_out(
        self,
        items: Sequence[Any],
        submit: Callable[[Any], Mapping[Any, Future]],
        progress: Progress | None = None,
        keys: Callable[[Any], Iterable[Any]] = lambda item: item,
    ) -> dict[Any, Any]:
        """``fanout.fan_out`` within this hook's bounds (concurrency, retries, timeout)."""
        bounds = Bounds(self.concurrency, self.retries, self.timeout, _retriable)
        return fan_out(items, submit, bounds, progress, keys)


def live_members(
    config: Mapping[str, Any], groups: Sequence[str], timeout: float = 30.0
) -> dict[str, list[str]]:
    """group -> its live members of the group protocol, classic or consumer (KIP-848), each as
    ``client id (protocol member id at host)``; a group with none (or unknown) is absent. Kafka
    accepts offset commits from consumers outside the protocol (assign() mode) only while a
    group has no members, so these are the members that make it refuse a PlanConsumer's
    commits. Raises ``BrokerUnavailableError`` when the cluster does not answer in time."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient

    if not groups:
        return {}
    conf, _auth = with_collector(dict(config))
    admin = AdminClient(conf)  # kept referenced until the answers are in: they die with it
    futures = admin.describe_consumer_groups(list(groups), request_timeout=timeout)
    out: dict[str, list[str]] = {}
    for gid, future in futures.items():
        try:
            desc = future.result(timeout=timeout + 5)
        except KafkaException as exc:
            err = exc.args[0] if exc.args else None
            if isinstance(err, KafkaError) and err.code() == KafkaError.GROUP_ID_NOT_FOUND:
                continue
            raise BrokerUnavailableError(f"describing group {gid}: {reason(exc)}") from None
        except TimeoutError:
            raise BrokerUnavailableError(f"describing group {gid}: no answer within {timeout:g}s") from None
        kind = str(getattr(getattr(desc, "type", None), "name", "") or "classic").lower()
        kind = kind if kind in ("classic", "consumer") else "classic"
        found = [f"{m.client_id} ({kind} member {m.member_id} at {m.host})" for m in desc.members or ()]
        if found:
            out[gid] = sorted(found)
    return out
