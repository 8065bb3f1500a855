"""An instance's voice on the status topic: its record every heartbeat, and a tombstone at close.

A background thread writes the record every ``heartbeat.interval.ms``, so an application busy
with one message still looks alive; one that has not called ``poll()`` for
``max.poll.interval.ms`` stops being announced (and so counts as dead, as in Kafka). What the
record says (version, partitions, pending partitions, lag) is set by the consumer's own thread
through ``show``; the rate is counted here.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Mapping
from typing import Any

from ..core.liveness import InstanceStatus
from ..core.model import TopicPartition as TP
from ..kafka.status import status_key

log = logging.getLogger(__name__)

_HOST = socket.gethostname()


class Announcer:
    """Writes one instance's status records (thread-safe: the consumer's thread and its own)."""

    def __init__(
        self,
        producer_conf: Mapping[str, Any],
        topic: str,
        group: str,
        instance: str,
        topics: tuple[str, ...],
        session_timeout_ms: int,
        heartbeat_interval: float,
        max_poll_interval: float,
        rack: str | None,
        timeout: float,
        capacity: float | None = None,
    ) -> None:
        from confluent_kafka import Producer

        self.topic, self.group, self.instance, self.topics = topic, group, instance, topics
        self.session_timeout_ms, self.rack, self.timeout = session_timeout_ms, rack, timeout
        self.capacity = capacity
        self.heartbeat_interval, self.max_poll_interval = heartbeat_interval, max_poll_interval
        self.partition: int | None = None  # set by ``start``; None: no status topic, stay silent
        self._producer: Any = Producer({**producer_conf, "linger.ms": 0, "acks": "all"})
        self._lock = threading.Lock()
        self._started_ms = int(time.time() * 1000)
        self._last_poll = time.monotonic()
        self._processed = 0  # messages handed out since the last heartbeat
        self._rate: float | None = None
        self._lag: int | None = None
        self._shown: tuple[int | None, tuple[TP, ...], tuple[TP, ...]] = (None, (), ())
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name=f"lagassign-status-{instance}")

    def start(self, partition: int) -> None:
        """Announce now (and wait until the broker has it), then every heartbeat interval."""
        self.partition = partition
        self.write(flush=True)
        if not self._thread.is_alive():
            self._thread.start()

    def show(
        self,
        version: int | None,
        partitions: set[TP],
        pending: Mapping[TP, Any],
        lag: int | None,
        flush: bool = False,
    ) -> None:
        """What the record says from now on; written at once (``flush``: and acknowledged)."""
        with self._lock:
            self._shown = (version, tuple(sorted(partitions)), tuple(sorted(pending)))
            if lag is not None:
                self._lag = lag
        self.write(flush)

    def polled(self, handed_out: int = 0) -> None:
        """The application called poll() (and got ``handed_out`` messages)."""
        with self._lock:
            self._last_poll = time.monotonic()
            self._processed += handed_out

    def set_lag(self, lag: int | None) -> None:
        with self._lock:
            self._lag = lag

    def write(self, flush: bool = False) -> None:
        """Write the record now (a full queue or a broker away: the next heartbeat tries again)."""
        if self.partition is None:
            return
        with self._lock:
            version, partitions, pending = self._shown
            status = InstanceStatus(
                group=self.group,
                instance=self.instance,
                time_ms=int(time.time() * 1000),
                version=version,
                partitions=partitions,
                pending=pending,
                topics=self.topics,
                rate=self._rate,
                lag=self._lag,
                started_ms=self._started_ms,
                session_timeout_ms=self.session_timeout_ms,
                rack=self.rack,
                host=_HOST,
                capacity=self.capacity,
            )
        try:
            self._producer.produce(
                self.topic,
                key=status_key(self.group, self.instance),
                value=status.to_json().encode(),
                partition=self.partition,
            )
            if flush:
                self._producer.flush(min(self.timeout, 10))
            else:
                self._producer.poll(0)
        except Exception as exc:
            log.warning("%s/%s: status record not written: %s", self.group, self.instance, exc)

    def close(self) -> None:
        """Stop heartbeating and write the tombstone: this instance left."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(self.heartbeat_interval + 5)
        if self.partition is not None:
            self._producer.produce(
                self.topic, key=status_key(self.group, self.instance), value=None, partition=self.partition
            )
            self._producer.flush(min(self.timeout, 10))
        self._producer = None  # librdkafka's producer ends with its last reference, not at exit

    def _loop(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(self.heartbeat_interval):
            now = time.monotonic()
            with self._lock:
                stalled = now - self._last_poll > self.max_poll_interval
                processed, self._processed = self._processed, 0
                self._rate = round(processed / max(now - last, 1e-3), 1)
            last = now
            if stalled:
                log.warning(
                    "%s/%s: poll() not called for over %.0fs; no longer announcing",
                    self.group,
                    self.instance,
                    self.max_poll_interval,
                )
                continue
            self.write()
