"""AdminClient calls of a snapshot: batched, concurrent, bounded by timeouts and retries, counted.

confluent-kafka's admin calls return futures completed by librdkafka's background thread, so
concurrency costs no threads here: we keep up to ``concurrency`` requests in flight. What each
call can batch decides the cost of a snapshot of G groups over P distinct partitions:

* metadata and list groups: 1 call each;
* describe groups: ceil(G / describe_batch) calls (many groups per request);
* committed offsets: G calls (the API takes one group per call), run concurrently;
* begin and end offsets: 2 * ceil(P / offsets_batch) calls, shared by every group reading a
  partition (offsets are per partition, not per group).

So calls grow linearly with groups, and time with groups / concurrency.

noida-db quirk (measured with bench/snapshot_speed.py): it answers OffsetFetch one request
at a time, at ~5 ms of broker CPU per group on a fresh broker, growing with the number of
groups it stores (~15 ms at 4,500 groups). Beyond ~8 requests in flight nothing is gained
there; the broker, not this client, bounds a noida snapshot (1,000 groups: ~6 s fresh).
confluent-kafka's ``list_consumer_group_offsets`` takes one group per call, so OffsetFetch v8's
many-groups requests (KIP-709) are out of reach from Python.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from .connection import first_metadata, with_collector
from .errors import BrokerUnavailableError, reason

Progress = Callable[[int, int], None]


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
    ) -> None:
        from confluent_kafka.admin import AdminClient

        self.config = dict(config)
        self.timeout = timeout
        self.retries = retries
        self.concurrency = max(1, concurrency)
        self.describe_batch = describe_batch
        self.offsets_batch = offsets_batch
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

    def committed(self, group_ids: Sequence[str], progress: Progress | None = None) -> dict[str, Any]:
        """group id -> list of committed TopicPartitions, or the exception that fetching raised."""
        from confluent_kafka import ConsumerGroupTopicPartitions

        def submit(gid: str) -> dict[str, Future]:
            self.calls["list_consumer_group_offsets"] += 1
            return self.admin.list_consumer_group_offsets(
                [ConsumerGroupTopicPartitions(gid)], request_timeout=self.timeout
            )

        found = self._fan_out(list(group_ids), submit, progress, keys=lambda gid: [gid])
        return {gid: (r if isinstance(r, BaseException) else r.topic_partitions) for gid, r in found.items()}

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
                    raise BrokerUnavailableError(f"Kafka did not answer within {self.timeout:.0f}s") from None
            time.sleep(0.5 * (attempt + 1))
        raise AssertionError("unreachable")

    def _fan_out(
        self,
        items: Sequence[Any],
        submit: Callable[[Any], Mapping[Any, Future]],
        progress: Progress | None = None,
        keys: Callable[[Any], Iterable[Any]] = lambda item: item,
    ) -> dict[Any, Any]:
        """Submit every item with at most ``concurrency`` requests in flight; retry retriable failures.

        ``submit(item)`` sends one request and returns {key: future}; ``keys(item)`` names the
        keys it covers. The answer maps every key to its future's result or to the exception it
        ended with (after ``retries`` more rounds for the retriable ones). ``progress(done,
        total)`` is called as first-round requests complete.
        """
        results: dict[Any, Any] = {}
        todo = list(items)
        total = len(todo)
        lock = threading.Lock()
        done_count = [0]
        for attempt in range(self.retries + 1):
            gate = threading.Semaphore(self.concurrency)
            outstanding: list[tuple[Any, Any, Future]] = []
            all_done = threading.Event()
            pending = [1]  # 1 = the submitting loop itself, released after it

            def finished(
                first_round: bool = attempt == 0,
                gate: threading.Semaphore = gate,
                pending: list[int] = pending,
                all_done: threading.Event = all_done,
            ) -> None:
                gate.release()
                with lock:
                    pending[0] -= 1
                    if first_round and progress is not None:
                        done_count[0] += 1
                        progress(done_count[0], total)
                    if pending[0] == 0:
                        all_done.set()

            for item in todo:
                if not gate.acquire(timeout=self.timeout * 2 + 10):
                    raise BrokerUnavailableError(f"Kafka requests stalled for over {self.timeout * 2:.0f}s")
                try:
                    futures = dict(submit(item))
                except Exception as exc:  # the client refused the request itself
                    for key in keys(item):
                        results[key] = exc
                    with lock:
                        pending[0] += 1
                    finished()
                    continue
                outstanding.extend((item, key, fut) for key, fut in futures.items())
                with lock:
                    pending[0] += 1
                _when_all(list(futures.values()), finished)
            with lock:
                pending[0] -= 1
                if pending[0] == 0:
                    all_done.set()
            if not all_done.wait(timeout=self.timeout * 2 + 10):
                raise BrokerUnavailableError(f"Kafka requests stalled for over {self.timeout * 2:.0f}s")
            retry: list[Any] = []
            for item, key, fut in outstanding:
                failure = fut.exception()
                if failure is None:
                    results[key] = fut.result()
                elif attempt < self.retries and _retriable(failure):
                    if not retry or retry[-1] is not item:
                        retry.append(item)
                else:
                    results[key] = failure
            if not retry:
                break
            todo = retry
            time.sleep(0.5 * (attempt + 1))
        return results


def _when_all(futures: list[Future], callback: Callable[[], None]) -> None:
    """Call ``callback()`` once, when the last of ``futures`` is done (at once if there are none)."""
    if not futures:
        callback()
        return
    remaining = [len(futures)]
    lock = threading.Lock()

    def one_done(_f: Future) -> None:
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            callback()

    for f in futures:
        f.add_done_callback(one_done)
