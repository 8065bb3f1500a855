"""Reading lagassign's compacted topics from their beginning to their current end.

One loop for every reader: ``read_to_end`` (the planner reads the plans or status topic once),
and ``catch_up`` on a consumer that goes on following afterwards (``PlanConsumer``, the
watcher). assign() only, never subscribe() or commit(): a reader joins no group and leaves
nothing on the broker (librdkafka wants a group id, which is never used).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .errors import BrokerUnavailableError, reason


def catch_up(
    consumer: Any, partitions: Iterable[tuple[str, int]], timeout: float, on_record: Callable[[Any], object]
) -> None:
    """Assign ``partitions`` from their beginning and hand every record to ``on_record`` until
    each reached the end it had when we started (or reports end of partition, with
    ``enable.partition.eof``); the consumer stays assigned (to follow on). BrokerUnavailableError
    when that takes longer than ``timeout``."""
    from confluent_kafka import OFFSET_BEGINNING, KafkaError, KafkaException, TopicPartition

    # A partition whose leader is moving (a topic just created, a broker restarting) answers
    # NOT_LEADER or LEADER_NOT_AVAILABLE for a moment: ask again until the deadline.
    passing = (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE)
    deadline = time.monotonic() + timeout
    ends: dict[tuple[str, int], int] = {}
    for topic, p in partitions:
        while True:
            try:
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)
                break
            except KafkaException as exc:
                if exc.args[0].code() not in passing or time.monotonic() > deadline:
                    raise BrokerUnavailableError(
                        f"cannot read offsets of {topic}-{p}: {reason(exc)}"
                    ) from None
                time.sleep(0.2)
        ends[(topic, p)] = high if high > low else 0
    consumer.assign([TopicPartition(t, p, OFFSET_BEGINNING) for t, p in ends])
    pending = {tp for tp, end in ends.items() if end > 0}
    while pending:
        if time.monotonic() > deadline:
            topics = ", ".join(sorted({t for t, _ in pending}))
            raise BrokerUnavailableError(f"reading {topics} to its end took over {timeout:.0f}s")
        for msg in consumer.consume(500, 0.5):
            tp = (msg.topic(), msg.partition())
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:  # the end (a control record may be last)
                    pending.discard(tp)
                continue
            on_record(msg)
            if msg.offset() + 1 >= ends.get(tp, 0):
                pending.discard(tp)


def read_to_end(
    config: Mapping[str, Any],
    topic: str,
    partitions: Iterable[int],
    timeout: float = 30.0,
    raw_keys: bool = False,
) -> list[tuple[Any, bytes | None]]:
    """Every (key, value) of the given partitions from the beginning to the current end; keys
    decoded as UTF-8 text unless ``raw_keys``."""
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            **config,
            "group.id": "lagassign.plan-reader",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
        }
    )
    records: list[tuple[Any, bytes | None]] = []

    def keep(msg: Any) -> None:
        key = msg.key()
        records.append(
            (key.decode("utf-8", "replace") if key is not None and not raw_keys else key, msg.value())
        )

    try:
        catch_up(consumer, [(topic, p) for p in partitions], timeout, keep)
    finally:
        consumer.close()
    return records
