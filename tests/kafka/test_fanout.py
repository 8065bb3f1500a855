"""The admin calls' fan-out (``kafka.fanout``) on real futures completed from other threads, as
librdkafka's background thread completes confluent-kafka's. The admin client itself is stood in
for by ``submit`` (what it would send is not the point here: the bound, the retries and the
progress are); tests/kafka/test_kafka_snapshot.py runs the fan-out against the real broker."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from typing import Any

from lagassign.kafka.fanout import Bounds, fan_out


class Retriable(Exception):
    """A failure the bounds call retriable (a coordinator that moved, say)."""


class Requests:
    """Answers each request on a thread of its own after a short wait, as ``outcome(item,
    attempt)`` says; counts the requests in flight at once."""

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome
        self.attempts: dict[Any, int] = {}
        self.in_flight = self.most_in_flight = 0
        self.lock = threading.Lock()

    def submit(self, item: Any) -> dict[Any, Future]:
        attempt = self.attempts[item] = self.attempts.get(item, 0) + 1
        answer = self.outcome(item, attempt)
        if isinstance(answer, ValueError):
            raise answer  # the client refused the request itself
        future: Future = Future()
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)

        def complete() -> None:
            time.sleep(0.002)
            with self.lock:
                self.in_flight -= 1
            if isinstance(answer, BaseException):
                future.set_exception(answer)
            else:
                future.set_result(answer)

        threading.Thread(target=complete).start()
        return {item: future}


def _bounds(concurrency: int = 3, retries: int = 2) -> Bounds:
    return Bounds(concurrency, retries, timeout=5.0, retriable=lambda exc: isinstance(exc, Retriable))


def test_every_item_is_answered_with_at_most_concurrency_requests_in_flight() -> None:
    requests = Requests(lambda item, _attempt: f"answer {item}")
    progress: list[tuple[int, int]] = []
    found = fan_out(
        list(range(20)),
        requests.submit,
        _bounds(concurrency=3),
        lambda d, t: progress.append((d, t)),
        lambda i: [i],
    )
    assert found == {i: f"answer {i}" for i in range(20)}
    assert 1 <= requests.most_in_flight <= 3
    assert progress[-1] == (20, 20) and len(progress) == 20


def test_retriable_failures_are_sent_again_and_the_last_failure_is_kept() -> None:
    def outcome(item: int, attempt: int) -> Any:
        if item == 0:
            return Retriable(f"moved, attempt {attempt}")  # never succeeds
        if item == 1 and attempt == 1:
            return Retriable("loading")  # succeeds the second time
        if item == 2:
            return RuntimeError("denied")  # not retriable: kept at once
        if item == 3:
            return ValueError("refused by the client")
        return "ok"

    requests = Requests(outcome)
    found = fan_out([0, 1, 2, 3, 4], requests.submit, _bounds(retries=2), keys=lambda item: [item])
    assert str(found[0]) == "moved, attempt 3" and requests.attempts[0] == 3
    assert found[1] == "ok" and requests.attempts[1] == 2
    assert str(found[2]) == "denied" and requests.attempts[2] == 1
    assert str(found[3]) == "refused by the client" and found[4] == "ok"
