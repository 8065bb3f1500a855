"""The tests' broker is their own: not the one ``make demo`` or a developer started."""

from __future__ import annotations

import os

import brokerctl
import pytest


def test_the_tests_broker_is_the_test_instance(broker: brokerctl.Broker) -> None:
    if os.environ.get("LAGASSIGN_BROKER_BOOTSTRAP"):
        pytest.skip("LAGASSIGN_BROKER_BOOTSTRAP names the broker to use")
    assert brokerctl.state_dir(broker.kind) == brokerctl.VAR / "broker" / "test" / broker.kind
    assert broker.bootstrap == brokerctl.describe(broker.kind).bootstrap
    os.environ["LAGASSIGN_BROKER_INSTANCE"] = ""
    try:  # the developer's broker of this kind is elsewhere, in state and port
        developers = brokerctl.describe(broker.kind)
        assert brokerctl.state_dir(broker.kind) == brokerctl.VAR / "broker" / broker.kind
    finally:
        os.environ["LAGASSIGN_BROKER_INSTANCE"] = "test"
    assert developers.bootstrap != broker.bootstrap
    for release in brokerctl.RELEASES.values():  # outside Linux's ephemeral port range
        assert release.port + 1 + max(brokerctl.INSTANCES.values()) < 32768
    assert brokerctl.answers(broker)
