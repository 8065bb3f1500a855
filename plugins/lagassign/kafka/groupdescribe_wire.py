"""ConsumerGroupDescribe's wire codec: the bytes of the three requests ``groupdescribe`` sends, and
what their answers say.

Kafka's binary protocol as far as this reader needs it: big-endian integers, unsigned varints,
strings (int16-length, or compact: varint length + 1) and tagged fields; a request is its size,
a header (api key, version, correlation id, client id, and tagged fields when the version is
flexible) and a body. The requests: ApiVersions (v0) to learn which versions the broker serves,
FindCoordinator (v4-v6, many groups a request) to find each group's coordinator, and
ConsumerGroupDescribe (v0, or v1 with the member type, KIP-1099). Each request function takes a
``Channel`` (``groupdescribe.Connection`` on a socket, or any object that answers with a
``Reader``), so decoding needs no broker.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

API_VERSIONS, FIND_COORDINATOR, CONSUMER_GROUP_DESCRIBE = 18, 10, 69
#: error codes the reader acts on (Kafka's numbering)
NONE, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR = 0, 14, 15, 16
GROUP_ID_NOT_FOUND = 69
#: errors after which a group is asked again (its coordinator moved or was loading)
RETRIABLE = (COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR)
_ERROR_NAMES = {
    14: "COORDINATOR_LOAD_IN_PROGRESS",
    15: "COORDINATOR_NOT_AVAILABLE",
    16: "NOT_COORDINATOR",
    24: "INVALID_GROUP_ID",
    30: "GROUP_AUTHORIZATION_FAILED",
    42: "INVALID_REQUEST",
    29: "TOPIC_AUTHORIZATION_FAILED",
    69: "GROUP_ID_NOT_FOUND",
}
#: member types of ConsumerGroupDescribe v1 (KIP-1099)
MEMBER_TYPES = {0: "classic", 1: "consumer"}
CLIENT_ID = "lagassign"


class DescribeError(Exception):
    """The request could not be made or answered (network, protocol, broker error)."""


class UnsupportedDescribe(DescribeError):
    """This cluster or these settings cannot be asked here (old broker, SASL)."""


class GroupDescribeError(DescribeError):
    """The broker answered with an error for one group."""

    def __init__(self, group: str, code: int, message: str | None) -> None:
        name = _ERROR_NAMES.get(code, f"error {code}")
        super().__init__(f"group {group}: {name}" + (f": {message}" if message else ""))
        self.code = code


@dataclass(frozen=True)
class Member:
    """One member of a consumer-type group, as its coordinator describes it."""

    member_id: str
    instance_id: str | None
    rack: str | None
    epoch: int
    client_id: str
    host: str
    subscribed_topics: tuple[str, ...]
    subscribed_regex: str | None
    assignment: tuple[tuple[str, int], ...]
    target: tuple[tuple[str, int], ...]
    member_type: str | None = None  # classic | consumer (v1); None when the broker does not say


@dataclass(frozen=True)
class Group:
    """A consumer-type group (KIP-848) at one moment on its coordinator."""

    group: str
    state: str
    epoch: int
    assignment_epoch: int
    assignor: str
    members: tuple[Member, ...] = field(default_factory=tuple)


# -- the protocol's primitive types --------------------------------------------------------------


class Writer:
    """A request body (or header) built field by field."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def int8(self, v: int) -> Writer:
        self.parts.append(struct.pack(">b", v))
        return self

    def int16(self, v: int) -> Writer:
        self.parts.append(struct.pack(">h", v))
        return self

    def int32(self, v: int) -> Writer:
        self.parts.append(struct.pack(">i", v))
        return self

    def uvarint(self, v: int) -> Writer:
        out = bytearray()
        while True:
            byte = v & 0x7F
            v >>= 7
            if v:
                out.append(byte | 0x80)
            else:
                out.append(byte)
                break
        self.parts.append(bytes(out))
        return self

    def string(self, s: str | None) -> Writer:  # non-flexible (int16 length), nullable
        if s is None:
            return self.int16(-1)
        data = s.encode()
        return self.int16(len(data)).raw(data)

    def compact_string(self, s: str) -> Writer:
        data = s.encode()
        return self.uvarint(len(data) + 1).raw(data)

    def compact_strings(self, items: Sequence[str]) -> Writer:
        self.uvarint(len(items) + 1)
        for s in items:
            self.compact_string(s)
        return self

    def raw(self, data: bytes) -> Writer:
        self.parts.append(data)
        return self

    def bytes(self) -> bytes:
        return b"".join(self.parts)


class Reader:
    """An answer read field by field; running past its end is a ``DescribeError``."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise DescribeError("truncated answer from the broker")
        out = self.data[self.at : self.at + n]
        self.at += n
        return out

    def int8(self) -> int:
        return int(struct.unpack(">b", self.take(1))[0])

    def int16(self) -> int:
        return int(struct.unpack(">h", self.take(2))[0])

    def int32(self) -> int:
        return int(struct.unpack(">i", self.take(4))[0])

    def uvarint(self) -> int:
        value, shift = 0, 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
            if shift > 63:
                raise DescribeError("malformed varint in the broker's answer")

    def compact_nullable_string(self) -> str | None:
        n = self.uvarint()
        return None if n == 0 else self.take(n - 1).decode()

    def compact_string(self) -> str:
        return self.compact_nullable_string() or ""

    def compact_count(self) -> int:
        n = self.uvarint()
        return max(0, n - 1)

    def tagged_fields(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()  # tag
            self.take(self.uvarint())


def frame_request(api_key: int, version: int, correlation: int, body: bytes, flexible: bool) -> bytes:
    """A whole request as sent: its size, its header, its body."""
    header = Writer().int16(api_key).int16(version).int32(correlation).string(CLIENT_ID)
    if flexible:
        header.uvarint(0)  # no tagged fields
    payload = header.bytes() + body
    return struct.pack(">i", len(payload)) + payload


class Channel(Protocol):
    """Where requests go: sends one and gives its answer, past the answer's header."""

    where: str

    def ask(self, api_key: int, version: int, body: bytes, flexible: bool, flexible_answer: bool) -> Reader:
        """The answer to one request."""
        ...


# -- the three requests --------------------------------------------------------------------------


def api_versions(conn: Channel) -> dict[int, tuple[int, int]]:
    """api key -> (min, max) version the broker serves (ApiVersions v0)."""
    answer = conn.ask(API_VERSIONS, 0, b"", flexible=False, flexible_answer=False)
    error = answer.int16()
    if error != NONE:
        raise DescribeError(f"{conn.where}: ApiVersions failed with error {error}")
    out = {}
    for _ in range(answer.int32()):
        key, low, high = answer.int16(), answer.int16(), answer.int16()
        out[key] = (low, high)
    return out


def find_coordinators(conn: Channel, version: int, groups: Sequence[str]) -> dict[str, Any]:
    """group -> (host, port) of its coordinator, or the GroupDescribeError the broker gave."""
    body = Writer().int8(0).compact_strings(groups).uvarint(0).bytes()
    answer = conn.ask(FIND_COORDINATOR, version, body, flexible=True, flexible_answer=True)
    answer.int32()  # throttle
    out: dict[str, Any] = {}
    for _ in range(answer.compact_count()):
        key = answer.compact_string()
        answer.int32()  # node id
        host = answer.compact_string()
        port = answer.int32()
        error = answer.int16()
        message = answer.compact_nullable_string()
        answer.tagged_fields()
        out[key] = (host, port) if error == NONE else GroupDescribeError(key, error, message)
    answer.tagged_fields()
    return out


def describe_on(conn: Channel, version: int, groups: Sequence[str]) -> dict[str, Group | GroupDescribeError]:
    """ConsumerGroupDescribe of ``groups`` on their coordinator ``conn``."""
    body = Writer().compact_strings(groups).int8(0).uvarint(0).bytes()
    answer = conn.ask(CONSUMER_GROUP_DESCRIBE, version, body, flexible=True, flexible_answer=True)
    answer.int32()  # throttle
    out: dict[str, Group | GroupDescribeError] = {}
    for _ in range(answer.compact_count()):
        error = answer.int16()
        message = answer.compact_nullable_string()
        gid = answer.compact_string()
        state = answer.compact_string()
        epoch, assignment_epoch = answer.int32(), answer.int32()
        assignor = answer.compact_string()
        members = tuple(_member(answer, version) for _ in range(answer.compact_count()))
        answer.int32()  # authorized operations
        answer.tagged_fields()
        out[gid] = (
            Group(gid, state, epoch, assignment_epoch, assignor, members)
            if error == NONE
            else GroupDescribeError(gid, error, message)
        )
    answer.tagged_fields()
    return out


def _member(answer: Reader, version: int) -> Member:
    """One member of a ConsumerGroupDescribe answer (its type from v1 on)."""
    member_id = answer.compact_string()
    instance_id = answer.compact_nullable_string()
    rack = answer.compact_nullable_string()
    member_epoch = answer.int32()
    client_id, host = answer.compact_string(), answer.compact_string()
    topics = tuple(answer.compact_string() for _ in range(answer.compact_count()))
    regex = answer.compact_nullable_string()
    current, target = _assignment(answer), _assignment(answer)
    kind = MEMBER_TYPES.get(answer.int8()) if version >= 1 else None
    answer.tagged_fields()
    return Member(
        member_id,
        instance_id,
        rack,
        member_epoch,
        client_id,
        host,
        tuple(sorted(topics)),
        regex,
        current,
        target,
        kind,
    )


def _assignment(answer: Reader) -> tuple[tuple[str, int], ...]:
    """A member's assignment: (topic, partition) pairs, sorted (topic ids are skipped)."""
    pairs = []
    for _ in range(answer.compact_count()):
        answer.take(16)  # topic id
        topic = answer.compact_string()
        pairs += [(topic, answer.int32()) for _ in range(answer.compact_count())]
        answer.tagged_fields()
    answer.tagged_fields()
    return tuple(sorted(pairs))
