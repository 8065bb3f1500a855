"""Many admin requests at once: at most so many in flight, retriable failures sent again.

confluent-kafka's admin calls return futures completed by librdkafka's background thread, so
keeping requests in flight costs no threads: a semaphore bounds them, and each request frees
its slot from the callback of its last future. A round submits every item, waits for all of its
requests, and the items whose requests failed with a retriable error make the next round.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from .errors import BrokerUnavailableError

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Bounds:
    """How many requests may be in flight, how many more rounds a retriable failure gets, the
    request timeout in seconds (a round that stalls for twice it fails), and which failures
    are retriable."""

    concurrency: int
    retries: int
    timeout: float
    retriable: Callable[[BaseException], bool]


def fan_out(
    items: Sequence[Any],
    submit: Callable[[Any], Mapping[Any, Future]],
    bounds: Bounds,
    progress: Progress | None = None,
    keys: Callable[[Any], Iterable[Any]] = lambda item: item,
) -> dict[Any, Any]:
    """Submit every item with at most ``bounds.concurrency`` requests in flight; retry retriable
    failures.

    ``submit(item)`` sends one request and returns {key: future}; ``keys(item)`` names the
    keys it covers. The answer maps every key to its future's result or to the exception it
    ended with (after ``bounds.retries`` more rounds for the retriable ones). ``progress(done,
    total)`` is called as first-round requests complete.
    """
    results: dict[Any, Any] = {}
    todo = list(items)
    first_round = _Counted(progress, len(todo)) if progress is not None else None
    for attempt in range(bounds.retries + 1):
        in_flight = _InFlight(bounds.concurrency, first_round if attempt == 0 else None)
        outstanding = _submit_round(todo, submit, keys, in_flight, bounds.timeout, results)
        if not in_flight.wait(bounds.timeout * 2 + 10):
            raise _stalled(bounds.timeout)
        may_retry = attempt < bounds.retries
        retry = _settle_round(outstanding, may_retry, bounds.retriable, results)
        if not retry:
            break
        todo = retry
        time.sleep(0.5 * (attempt + 1))
    return results


def _submit_round(
    todo: Sequence[Any],
    submit: Callable[[Any], Mapping[Any, Future]],
    keys: Callable[[Any], Iterable[Any]],
    in_flight: _InFlight,
    timeout: float,
    results: dict[Any, Any],
) -> list[tuple[Any, Any, Future]]:
    """Submit each item of ``todo`` as a slot frees up; (item, key, future) of every request
    sent. An item the client refuses at once gets its exception in ``results``."""
    outstanding: list[tuple[Any, Any, Future]] = []
    for item in todo:
        if not in_flight.acquire(timeout * 2 + 10):
            raise _stalled(timeout)
        in_flight.started()
        try:
            futures = dict(submit(item))
        except Exception as exc:  # the client refused the request itself
            for key in keys(item):
                results[key] = exc
            in_flight.finished()
            continue
        outstanding.extend((item, key, fut) for key, fut in futures.items())
        when_all(list(futures.values()), in_flight.finished)
    in_flight.all_submitted()
    return outstanding


def _stalled(timeout: float) -> BrokerUnavailableError:
    """No slot freed up, or a round did not complete, within twice the request timeout."""
    return BrokerUnavailableError(f"Kafka requests stalled for over {timeout * 2:.0f}s")


def _settle_round(
    outstanding: Sequence[tuple[Any, Any, Future]],
    may_retry: bool,
    retriable: Callable[[BaseException], bool],
    results: dict[Any, Any],
) -> list[Any]:
    """Each request's result (or its final exception) into ``results``; the items to send
    again (a retriable failure while ``may_retry``), each once, in order."""
    retry: list[Any] = []
    for item, key, fut in outstanding:
        failure = fut.exception()
        if failure is None:
            results[key] = fut.result()
        elif may_retry and retriable(failure):
            if not retry or retry[-1] is not item:
                retry.append(item)
        else:
            results[key] = failure
    return retry


class _Counted:
    """``progress(done, total)`` as requests complete, ``done`` counted here."""

    def __init__(self, progress: Progress, total: int) -> None:
        self.progress, self.total, self.done = progress, total, 0

    def __call__(self) -> None:
        self.done += 1
        self.progress(self.done, self.total)


class _InFlight:
    """One round of requests: at most ``limit`` in flight, and an event set once the round has
    submitted everything and every request has completed. ``on_done`` is called (under the
    round's lock) as each request completes."""

    def __init__(self, limit: int, on_done: Callable[[], None] | None) -> None:
        self._gate = threading.Semaphore(limit)
        self._lock = threading.Lock()
        self._pending = 1  # the submitting loop itself, until ``all_submitted``
        self._done = threading.Event()
        self._on_done = on_done

    def acquire(self, timeout: float) -> bool:
        """Wait for a free slot (False after ``timeout`` seconds)."""
        return self._gate.acquire(timeout=timeout)

    def started(self) -> None:
        with self._lock:
            self._pending += 1

    def finished(self) -> None:
        """One request completed (or was refused): its slot is free again."""
        self._gate.release()
        with self._lock:
            self._pending -= 1
            if self._on_done is not None:
                self._on_done()
            if self._pending == 0:
                self._done.set()

    def all_submitted(self) -> None:
        with self._lock:
            self._pending -= 1
            if self._pending == 0:
                self._done.set()

    def wait(self, timeout: float) -> bool:
        """True once every request of the round completed; False after ``timeout`` seconds."""
        return self._done.wait(timeout=timeout)


def when_all(futures: list[Future], callback: Callable[[], None]) -> None:
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
