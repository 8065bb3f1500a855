"""The ConsumerGroupDescribe reader's own parts that need no broker (tests/kafka/
test_kip848_groups.py runs it against Kafka 4): addresses, settings it will not speak, and an
answer decoded field by field, in both versions the broker serves."""

from __future__ import annotations

import pytest
from lagassign.kafka import groupdescribe as gd
from lagassign.kafka import groupdescribe_wire as wire


def test_bootstrap_servers_are_read_as_host_and_port() -> None:
    config = {"bootstrap.servers": "a:9092, SSL://b.example:9093,[::1]:9094"}
    assert gd.bootstrap_addresses(config) == [("a", 9092), ("b.example", 9093), ("::1", 9094)]
    with pytest.raises(gd.DescribeError, match="not HOST:PORT"):
        gd.bootstrap_addresses({"bootstrap.servers": "nohost"})


@pytest.mark.parametrize("protocol", ["SASL_SSL", "sasl_plaintext"])
def test_sasl_is_refused_before_any_connection(protocol: str) -> None:
    config = {"bootstrap.servers": "127.0.0.1:1", "security.protocol": protocol}
    with pytest.raises(gd.UnsupportedDescribe, match=f"{protocol.upper()} is not spoken"):
        gd.describe_consumer_groups(config, ["g"])


def _answer(version: int) -> bytes:
    w = wire.Writer()

    def assignment(pairs: list[tuple[str, list[int]]]) -> None:
        w.uvarint(len(pairs) + 1)
        for topic, parts in pairs:
            w.raw(bytes(16)).compact_string(topic).uvarint(len(parts) + 1)
            for p in parts:
                w.int32(p)
            w.uvarint(0)
        w.uvarint(0)

    w.int32(0).uvarint(3)  # throttle; two groups
    w.int16(0).uvarint(0).compact_string("g").compact_string("Reconciling").int32(7).int32(6)
    w.compact_string("uniform").uvarint(2)  # one member
    w.compact_string("m1").compact_string("static-1").compact_string("rack-a").int32(6)
    w.compact_string("app").compact_string("/10.0.0.7").compact_strings(["b", "a"]).uvarint(0)
    assignment([("a", [0, 2]), ("b", [1])])
    assignment([("a", [0])])
    if version >= 1:
        w.int8(0)  # a classic member of a group being migrated
    w.uvarint(1).uvarint(9).uvarint(2).raw(b"xy")  # one unknown tagged field, skipped
    w.int32(-(2**31)).uvarint(0)
    w.int16(69).compact_string("Group h is not a consumer group.").compact_string("h")
    w.compact_string("").int32(0).int32(0).compact_string("").uvarint(1).int32(0).uvarint(0)
    w.uvarint(0)
    return w.bytes()


class _Answered:
    where = "test"

    def __init__(self, data: bytes) -> None:
        self.data = data

    def ask(self, *_args: object, **_kw: object) -> wire.Reader:
        return wire.Reader(self.data)


@pytest.mark.parametrize("version", [0, 1])
def test_an_answer_is_decoded_field_by_field(version: int) -> None:
    found = wire.describe_on(_Answered(_answer(version)), version, ["g", "h"])  # type: ignore[arg-type]
    g = found["g"]
    assert isinstance(g, gd.Group)
    assert (g.state, g.epoch, g.assignment_epoch, g.assignor) == ("Reconciling", 7, 6, "uniform")
    [m] = g.members
    assert (m.member_id, m.instance_id, m.rack, m.epoch, m.client_id) == (
        "m1",
        "static-1",
        "rack-a",
        6,
        "app",
    )
    assert (m.subscribed_topics, m.subscribed_regex) == (("a", "b"), None)
    assert m.assignment == (("a", 0), ("a", 2), ("b", 1)) and m.target == (("a", 0),)
    assert m.member_type == ("classic" if version else None)
    h = found["h"]
    assert isinstance(h, gd.GroupDescribeError) and h.code == wire.GROUP_ID_NOT_FOUND
    assert str(h) == "group h: GROUP_ID_NOT_FOUND: Group h is not a consumer group."


def test_a_truncated_answer_is_an_error_not_a_crash() -> None:
    with pytest.raises(gd.DescribeError, match="truncated"):
        wire.describe_on(_Answered(_answer(1)[:40]), 1, ["g"])  # type: ignore[arg-type]
