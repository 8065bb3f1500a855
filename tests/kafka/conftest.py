"""The real broker for the Kafka edge's tests, and small helpers to put real offsets on it.

``broker`` (session): the tests' own broker of the kind chosen by ``LAGASSIGN_BROKER`` (kafka4,
Apache Kafka 4 in KRaft mode, the default; noida, the demo's; or kafka3), started fresh through
``scripts/brokerctl.py`` (the code behind ``scripts/broker``) as its ``test`` instance (own state
under ``var/broker/test/``, ports 100 higher: kafka4 on 19392) and stopped at the end. The
broker ``make demo`` or a developer started is never touched: a test run leaves no group on it.
A test broker already started with ``LAGASSIGN_BROKER_INSTANCE=test scripts/broker start`` is
reused and left running;
``LAGASSIGN_BROKER_BOOTSTRAP=HOST:PORT`` uses that running broker instead. A failed test shows
what the broker logged while it ran (``var/broker/test/<kind>/kafka.log``, ``noida.log``).

Tests use fresh group and topic names (the ``names`` fixture) and close their consumers: noida
never evicts a member that dies without leaving, and Kafka only after its session timeout.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import brokerctl
import pytest
from kafkakit import Kit
from testpaths import REPO


@pytest.fixture(scope="session")
def broker() -> Iterator[brokerctl.Broker]:
    kind = brokerctl.kind_from_env(default="kafka4")
    os.environ["LAGASSIGN_BROKER"] = kind  # what the tests start (scripts, workers) uses it too
    given = os.environ.get("LAGASSIGN_BROKER_BOOTSTRAP")
    if given:
        yield brokerctl.Broker(kind, given, brokerctl.describe(kind).client_config)
        return
    os.environ["LAGASSIGN_BROKER_INSTANCE"] = "test"  # and for what the tests start, alike
    already = brokerctl.running(kind)
    started = brokerctl.start(kind, fresh=not already)
    try:
        yield started
    finally:
        if not already:
            brokerctl.stop(kind)


#: where the tests' broker writes its log, and how far it was when the running test started
_LOG_MARK = pytest.StashKey[tuple[Path, int]]()
LOG_LINES = 80


def _broker_log() -> Path | None:
    """The log of the tests' broker (scripts/brokerctl.py writes it under var/broker/test/)."""
    if os.environ.get("LAGASSIGN_BROKER_BOOTSTRAP") or os.environ.get("LAGASSIGN_BROKER_INSTANCE") != "test":
        return None
    kind = os.environ.get("LAGASSIGN_BROKER", "")
    if kind not in brokerctl.KINDS:
        return None
    log = brokerctl.state_dir(kind) / ("noida.log" if kind == "noida" else "kafka.log")
    return log if log.exists() else None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    log = _broker_log()
    if log is not None:
        item.stash[_LOG_MARK] = (log, log.stat().st_size)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """A failed test shows what the broker logged while it ran (its last LOG_LINES lines)."""
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    log, start = item.stash.get(_LOG_MARK, (_broker_log(), 0))
    if log is None or not log.exists():
        return
    with log.open("rb") as f:
        f.seek(start if start <= log.stat().st_size else 0)
        lines = f.read().decode("utf-8", "replace").splitlines()
    shown = "\n".join(lines[-LOG_LINES:]) if lines else "(nothing logged during the test)"
    report.sections.append((f"broker log ({log.relative_to(REPO)}, during this test)", shown))


@pytest.fixture
def kit(broker: brokerctl.Broker) -> Kit:
    return Kit(broker, f"t{uuid.uuid4().hex[:8]}")


@pytest.fixture(scope="module")
def module_kit(broker: brokerctl.Broker) -> Kit:
    return Kit(broker, f"m{uuid.uuid4().hex[:8]}")
