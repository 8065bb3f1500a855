"""The real broker for the Kafka edge's tests, and small helpers to put real offsets on it.

``broker`` (session): the tests' own broker of the kind chosen by ``LAGASSIGN_BROKER`` (kafka4,
Apache Kafka 4 in KRaft mode, the default; noida, the demo's; or kafka3), started fresh through
``scripts/brokerctl.py`` (the code behind ``scripts/broker``) as its ``test`` instance (own state
under ``var/broker/test/``, ports 100 higher: kafka4 on 39192) and stopped at the end. The
broker ``make demo`` or a developer started is never touched: a test run leaves no group on it.
A test broker already started with ``LAGASSIGN_BROKER_INSTANCE=test scripts/broker start`` is
reused and left running;
``LAGASSIGN_BROKER_BOOTSTRAP=HOST:PORT`` uses that running broker instead.

Tests use fresh group and topic names (the ``names`` fixture) and close their consumers: noida
never evicts a member that dies without leaving, and Kafka only after its session timeout.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

import brokerctl  # noqa: E402
from kafkakit import Kit  # noqa: E402


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


@pytest.fixture
def kit(broker: brokerctl.Broker) -> Kit:
    return Kit(broker, f"t{uuid.uuid4().hex[:8]}")


@pytest.fixture(scope="module")
def module_kit(broker: brokerctl.Broker) -> Kit:
    return Kit(broker, f"m{uuid.uuid4().hex[:8]}")
