"""Reaching the cluster: fail at once on bad credentials or TLS, within the timeout otherwise.

librdkafka retries a refused SASL login or a failed TLS handshake forever and reports it only
through the ``error_cb`` callback, while requests just time out as "transport failure". So every
client lagassign creates gets an ``AuthCollector`` as its error callback, and ``first_metadata``
asks for metadata in short attempts, serving callbacks in between: an authentication or TLS
error ends the wait at once with its own message; an unreachable broker ends it after
``timeout`` seconds (30 by default) with the last transport error.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..core.secrets import mask_text
from .errors import BrokerUnavailableError, KafkaAuthError, reason

_ATTEMPT_S = 2.0
_TLS_HINTS = ("SSL handshake failed", "certificate verify failed", "ssl.ca.location", "SSL routines")


def auth_failure(err: Any) -> str | None:
    """'authentication' or 'TLS' when a librdkafka error means retrying cannot help, else None."""
    from confluent_kafka import KafkaError

    code = err.code()
    text = err.str()
    if code in (KafkaError._AUTHENTICATION, getattr(KafkaError, "SASL_AUTHENTICATION_FAILED", 58)):
        return "authentication"
    if code == getattr(KafkaError, "_SSL", -181) or any(h in text for h in _TLS_HINTS):
        return "TLS"
    return None


class AuthCollector:
    """An ``error_cb`` that remembers the first authentication or TLS failure it is told of."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.kind: str | None = None
        self.message: str | None = None

    def __call__(self, err: Any) -> None:
        kind = auth_failure(err)
        if kind is not None:
            with self._lock:
                if self.kind is None:
                    self.kind, self.message = kind, err.str()

    def wrap(self, user_cb: Callable[[Any], None] | None) -> Callable[[Any], None]:
        """This collector, followed by a callback the user configured."""
        if user_cb is None:
            return self

        def both(err: Any) -> None:
            self(err)
            user_cb(err)

        return both

    def raise_if_failed(self, config: Mapping[str, Any]) -> None:
        with self._lock:
            kind, message = self.kind, self.message
        if kind is None:
            return
        servers = config.get("bootstrap.servers")
        what = "authentication failed" if kind == "authentication" else "TLS handshake failed"
        raise KafkaAuthError(f"Kafka at {servers}: {what}: {mask_text(message or '', config)}")


def with_collector(config: Mapping[str, Any]) -> tuple[dict[str, Any], AuthCollector]:
    """``config`` with an AuthCollector as its error callback (chained to any given one)."""
    collector = AuthCollector()
    conf = dict(config)
    conf["error_cb"] = collector.wrap(conf.get("error_cb"))
    return conf, collector


def first_metadata(
    client: Any,
    config: Mapping[str, Any],
    collector: AuthCollector,
    timeout: float,
    calls: Callable[[], None] | None = None,
) -> Any:
    """Cluster metadata from ``client`` (an AdminClient, Consumer or Producer made with
    ``collector``): KafkaAuthError as soon as credentials or TLS fail, BrokerUnavailableError
    after ``timeout`` seconds without an answer."""
    from confluent_kafka import KafkaException

    deadline = time.monotonic() + timeout
    last = "no answer"
    while True:
        remaining = deadline - time.monotonic()
        if calls is not None:
            calls()
        try:
            md = client.list_topics(timeout=max(0.1, min(_ATTEMPT_S, remaining)))
            if md.brokers:
                return md
            last = "no brokers in metadata"
        except KafkaException as exc:
            last = reason(exc)
        client.poll(0)  # serve the error callback
        collector.raise_if_failed(config)
        if time.monotonic() >= deadline:
            servers = config.get("bootstrap.servers")
            raise BrokerUnavailableError(
                f"cannot reach Kafka at {servers} within {timeout:g}s: {mask_text(last, config)}"
            )
        time.sleep(0.2)
