"""The overview of the consumer groups that the groups pages and the metrics show.

Fresh figures: the cluster is read through the ``lagassign_kafka`` connection when a page or
a scrape asks, at most every ``MAX_AGE_S`` seconds (one read at a time; others wait for it),
and judged with the audit store's window. A read that takes longer than ``READ_TIMEOUT_S``
(``LAGASSIGN_GROUPS_READ_TIMEOUT``) is not waited for: the caller gets what the health job
recorded last (or the last read, whichever is newer), and the read's result serves the next
request.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from typing import Any

from ..kafka.errors import reason
from ..pipeline.overview import build_overview, observe, stored_overview
from ..store import AuditStore, StoreError, resolve_url
from .health import settings_from_env
from .hooks import LagassignKafkaHook, LagassignStoreHook

log = logging.getLogger("lagassign.workflow.groups_ui")

MAX_AGE_S = 5.0
READ_TIMEOUT_S = 8.0


def read_timeout() -> float:
    text = os.environ.get("LAGASSIGN_GROUPS_READ_TIMEOUT", "").strip()
    try:
        value = float(text) if text else READ_TIMEOUT_S
    except ValueError:
        return READ_TIMEOUT_S
    return value if value > 0 else READ_TIMEOUT_S


# -- the audit store and the Kafka connection -------------------------------------------------

_stores: dict[str, AuditStore] = {}
_lock = threading.Lock()


def store() -> AuditStore | None:
    """The audit store (read-only: never created), opened once per URL; None when there is none
    or it cannot be opened (the pages then judge what they see now, and say so)."""
    try:
        url = resolve_url(LagassignStoreHook().url())
    except Exception:
        return None
    with _lock:
        if url not in _stores:
            try:
                _stores[url] = AuditStore(url, create=False)
            except StoreError as exc:
                log.warning("groups page: no audit store: %s", exc)
                return None
        return _stores[url]


def kafka_config() -> dict[str, Any] | None:
    try:
        config = LagassignKafkaHook().get_config()
    except Exception as exc:
        log.warning("groups page: no Kafka connection: %s", exc)
        return None
    # librdkafka's own lines (a line per retry while a broker is down) go nowhere: a failed read
    # is logged once, with its reason, by ``Overviews``
    quiet = logging.getLogger("lagassign.groups.librdkafka")
    if not quiet.handlers:
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
    config["logger"] = quiet
    return config


# -- the overview, fresh when the cluster answers in time ----------------------------------------


class Overviews:
    """The newest overview read from the cluster, one read at a time, and what to show meanwhile."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latest: Any = None
        self.read_at = 0.0
        self.reading: threading.Thread | None = None
        self.error: str | None = None

    def _read(self) -> None:
        try:
            config = kafka_config()
            if config is None:
                raise RuntimeError("no lagassign_kafka connection in the API server")
            settings = settings_from_env()
            view = observe(config, settings, min(read_timeout(), 10.0))
            ov = build_overview(view, store(), settings)
            with self.lock:
                self.latest, self.read_at, self.error = ov, time.monotonic(), None
        except Exception as exc:
            log.warning("groups page: reading the cluster failed: %s", exc)
            with self.lock:
                self.error = reason(exc)

    def get(self, wait: float | None = None) -> tuple[Any, str | None]:
        """(overview or None, why it is not fresh or None)."""
        with self.lock:
            if self.latest is not None and time.monotonic() - self.read_at < MAX_AGE_S:
                return self.latest, None
            if self.reading is None or not self.reading.is_alive():
                self.reading = threading.Thread(target=self._read, name="lagassign-groups-read", daemon=True)
                self.reading.start()
            reading = self.reading
        reading.join(read_timeout() if wait is None else wait)
        with self.lock:
            if self.latest is not None and time.monotonic() - self.read_at < MAX_AGE_S + read_timeout():
                return self.latest, None
            why = self.error or f"the cluster did not answer within {read_timeout():g} s"
        return self._stored(), why

    def _stored(self) -> Any:
        s = store()
        recorded = stored_overview(s) if s is not None else None
        with self.lock:
            cached = self.latest
        if cached is not None and (recorded is None or cached.observed_at >= recorded.observed_at):
            return dataclasses.replace(cached, fresh=False, source="last read")
        return recorded


overviews = Overviews()
