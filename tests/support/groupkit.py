"""Live consumers and inflow for the groups overview's tests: a subscribe() consumer of either
protocol polling in a thread, and a producer writing a few records a second."""

from __future__ import annotations

import threading
from typing import Any

from kafkakit import Kit


class Subscriber:
    """A subscribe() consumer polling in a thread until stopped (then it leaves the group)."""

    def __init__(self, kit: Kit, group: str, topic: str, protocol: str = "classic") -> None:
        from confluent_kafka import Consumer

        extra: dict[str, Any] = {
            "group.id": group,
            "auto.offset.reset": "earliest",
            "auto.commit.interval.ms": 500,
            "group.protocol": protocol,
        }
        if protocol == "classic":
            extra["session.timeout.ms"] = 6000
        self.consumer = Consumer(kit.config(extra))
        self.consumer.subscribe([topic])
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopped.is_set():
            self.consumer.poll(0.2)
        self.consumer.close()

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(30)


class Inflow:
    """A producer thread writing a few records a second into every partition of a topic."""

    def __init__(self, kit: Kit, topic: str, partitions: int, per_second: float = 20.0) -> None:
        from confluent_kafka import Producer

        self.producer = Producer(kit.config({"linger.ms": 5}))
        self.topic, self.partitions, self.every = topic, partitions, 1.0 / per_second
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        i = 0
        while not self.stopped.wait(self.every):
            self.producer.produce(self.topic, value=b"x", partition=i % self.partitions)
            self.producer.poll(0)
            i += 1

    def __enter__(self) -> Inflow:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.thread.join(10)
        self.producer.flush(10)
