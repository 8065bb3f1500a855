"""The tests' broker is their own: not the one ``make demo`` or a developer started."""

from __future__ import annotations

import os

import brokerctl
import pytest


def test_the_tests_broker_is_the_test_instance(broker: brokerctl.Broker) -> None:
    if os.environ.get("LAGASSIGN_BROKER_BOOTSTRAP"):
        pytest.skip("LAGASSIGN_BROKER_BOOTSTRAP names the broker to use")
    developers = {brokerctl.NOIDA_PORT, *(r.port for r in brokerctl.RELEASES.values())}
    port = int(broker.bootstrap.rsplit(":", 1)[1])
    assert port not in developers and port - brokerctl.INSTANCES["test"] in developers
    assert brokerctl.state_dir(broker.kind) == brokerctl.VAR / "broker" / "test" / broker.kind
    assert brokerctl.answers(broker)
