"""KIP-848 groups as the broker describes them: ConsumerGroupDescribe (API key 69) over the wire.

confluent-kafka 2.16's ``describe_consumer_groups`` sends this request for a ``consumer``-type
group but keeps only part of the answer: members' ids, client ids, hosts, instance ids, current
and target assignments. The rest, which planning needs, it drops: each member's rack, its
subscription (topic names, or the regex Kafka 4 resolves on the broker), its epoch, whether it
speaks the new protocol or is a classic member of a group that is being migrated, and the
group's epochs. This module asks the group's coordinator itself and decodes all of it:
ApiVersions (v0) to learn which versions the broker serves, FindCoordinator (v4+, many groups a
request) to find each group's coordinator, then ConsumerGroupDescribe (v0, or v1 with the member
type) per coordinator. One answer describes a group as it was at one moment on its coordinator,
so members, assignments and the group's type and assignor agree with each other.

Connections: ``security.protocol`` ``PLAINTEXT`` or ``SSL`` (``ssl.ca.location``,
``ssl.certificate.location``, ``ssl.key.location``, ``ssl.key.password``,
``enable.ssl.certificate.verification``, ``ssl.endpoint.identification.algorithm``). SASL is not
spoken here (``UnsupportedDescribe``): the snapshot then keeps what confluent-kafka reports and
says in its manifest what it could not read.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import struct
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

API_VERSIONS, FIND_COORDINATOR, CONSUMER_GROUP_DESCRIBE = 18, 10, 69
#: error codes this module acts on (Kafka's numbering)
NONE, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR = 0, 14, 15, 16
GROUP_ID_NOT_FOUND = 69
_RETRY = (COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR)
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
BATCH = 100  # groups per ConsumerGroupDescribe request
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


# -- the wire ------------------------------------------------------------------------------------


class _Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def int8(self, v: int) -> _Writer:
        self.parts.append(struct.pack(">b", v))
        return self

    def int16(self, v: int) -> _Writer:
        self.parts.append(struct.pack(">h", v))
        return self

    def int32(self, v: int) -> _Writer:
        self.parts.append(struct.pack(">i", v))
        return self

    def uvarint(self, v: int) -> _Writer:
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

    def string(self, s: str | None) -> _Writer:  # non-flexible (int16 length), nullable
        if s is None:
            return self.int16(-1)
        data = s.encode()
        return self.int16(len(data)).raw(data)

    def compact_string(self, s: str) -> _Writer:
        data = s.encode()
        return self.uvarint(len(data) + 1).raw(data)

    def compact_strings(self, items: Sequence[str]) -> _Writer:
        self.uvarint(len(items) + 1)
        for s in items:
            self.compact_string(s)
        return self

    def raw(self, data: bytes) -> _Writer:
        self.parts.append(data)
        return self

    def bytes(self) -> bytes:
        return b"".join(self.parts)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def _take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise DescribeError("truncated answer from the broker")
        out = self.data[self.at : self.at + n]
        self.at += n
        return out

    def int8(self) -> int:
        return int(struct.unpack(">b", self._take(1))[0])

    def int16(self) -> int:
        return int(struct.unpack(">h", self._take(2))[0])

    def int32(self) -> int:
        return int(struct.unpack(">i", self._take(4))[0])

    def uvarint(self) -> int:
        value, shift = 0, 0
        while True:
            byte = self._take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
            if shift > 63:
                raise DescribeError("malformed varint in the broker's answer")

    def compact_nullable_string(self) -> str | None:
        n = self.uvarint()
        return None if n == 0 else self._take(n - 1).decode()

    def compact_string(self) -> str:
        return self.compact_nullable_string() or ""

    def compact_count(self) -> int:
        n = self.uvarint()
        return max(0, n - 1)

    def tagged_fields(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()  # tag
            self._take(self.uvarint())


def _request(api_key: int, version: int, correlation: int, body: bytes, flexible: bool) -> bytes:
    header = _Writer().int16(api_key).int16(version).int32(correlation).string(CLIENT_ID)
    if flexible:
        header.uvarint(0)  # no tagged fields
    payload = header.bytes() + body
    return struct.pack(">i", len(payload)) + payload


class Connection:
    """One blocking connection to one broker, request after request."""

    def __init__(self, host: str, port: int, config: Mapping[str, Any], timeout: float) -> None:
        self.where = f"{host}:{port}"
        self.timeout = timeout
        self._correlation = 0
        try:
            raw = socket.create_connection((host, port), timeout=timeout)
        except OSError as exc:
            raise DescribeError(f"cannot connect to {self.where}: {exc}") from None
        try:
            self.sock = _secure(raw, host, config)
        except (OSError, ssl.SSLError) as exc:
            raw.close()
            raise DescribeError(f"TLS to {self.where} failed: {exc}") from None
        self.sock.settimeout(timeout)

    def ask(self, api_key: int, version: int, body: bytes, flexible: bool, flexible_answer: bool) -> _Reader:
        self._correlation += 1
        try:
            self.sock.sendall(_request(api_key, version, self._correlation, body, flexible))
            size = struct.unpack(">i", self._read(4))[0]
            answer = _Reader(self._read(size))
        except (OSError, struct.error) as exc:
            raise DescribeError(f"{self.where} did not answer: {exc or 'connection closed'}") from None
        if answer.int32() != self._correlation:
            raise DescribeError(f"{self.where} answered another request")
        if flexible_answer:
            answer.tagged_fields()
        return answer

    def _read(self, n: int) -> bytes:
        chunks, left = [], n
        while left:
            chunk = self.sock.recv(min(left, 1 << 20))
            if not chunk:
                raise OSError("connection closed")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _secure(sock: socket.socket, host: str, config: Mapping[str, Any]) -> socket.socket:
    """The socket as ``security.protocol`` says (PLAINTEXT or SSL); SASL is not spoken here."""
    protocol = str(config.get("security.protocol", "plaintext")).lower()
    if protocol == "plaintext":
        return sock
    if protocol != "ssl":
        raise UnsupportedDescribe(f"security.protocol {protocol.upper()} is not spoken by this reader")
    verify = str(config.get("enable.ssl.certificate.verification", "true")).lower() != "false"
    context = ssl.create_default_context(cafile=config.get("ssl.ca.location") or None)
    context.check_hostname = verify and str(
        config.get("ssl.endpoint.identification.algorithm", "https")
    ).lower() not in ("none", "")
    if not verify:
        context.verify_mode = ssl.CERT_NONE
    if config.get("ssl.certificate.location"):
        context.load_cert_chain(
            config["ssl.certificate.location"],
            config.get("ssl.key.location") or None,
            config.get("ssl.key.password") or None,
        )
    return context.wrap_socket(sock, server_hostname=host)


# -- the three requests --------------------------------------------------------------------------


def api_versions(conn: Connection) -> dict[int, tuple[int, int]]:
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


def find_coordinators(conn: Connection, version: int, groups: Sequence[str]) -> dict[str, Any]:
    """group -> (host, port) of its coordinator, or the GroupDescribeError the broker gave."""
    body = _Writer().int8(0).compact_strings(groups).uvarint(0).bytes()
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


def _assignment(answer: _Reader) -> tuple[tuple[str, int], ...]:
    pairs = []
    for _ in range(answer.compact_count()):
        answer._take(16)  # topic id
        topic = answer.compact_string()
        pairs += [(topic, answer.int32()) for _ in range(answer.compact_count())]
        answer.tagged_fields()
    answer.tagged_fields()
    return tuple(sorted(pairs))


def describe_on(
    conn: Connection, version: int, groups: Sequence[str]
) -> dict[str, Group | GroupDescribeError]:
    """ConsumerGroupDescribe of ``groups`` on their coordinator ``conn``."""
    body = _Writer().compact_strings(groups).int8(0).uvarint(0).bytes()
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
        members = []
        for _ in range(answer.compact_count()):
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
            members.append(
                Member(
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
            )
        answer.int32()  # authorized operations
        answer.tagged_fields()
        out[gid] = (
            Group(gid, state, epoch, assignment_epoch, assignor, tuple(members))
            if error == NONE
            else GroupDescribeError(gid, error, message)
        )
    answer.tagged_fields()
    return out


# -- the whole read ------------------------------------------------------------------------------


def bootstrap_addresses(config: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(host, port) of each ``bootstrap.servers`` entry (a ``PROTOCOL://`` prefix dropped)."""
    out = []
    for entry in str(config.get("bootstrap.servers") or "").split(","):
        entry = entry.strip().split("://", 1)[-1]
        if not entry:
            continue
        host, _, port = entry.rpartition(":")
        if not host or not port.isdigit():
            raise DescribeError(f"bootstrap server {entry!r} is not HOST:PORT")
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise DescribeError("no bootstrap.servers")
    return out


def _bootstrap(config: Mapping[str, Any], timeout: float) -> Connection:
    protocol = str(config.get("security.protocol", "plaintext")).lower()
    if protocol not in ("plaintext", "ssl"):
        raise UnsupportedDescribe(f"security.protocol {protocol.upper()} is not spoken by this reader")
    last: DescribeError | None = None
    for host, port in bootstrap_addresses(config):
        try:
            return Connection(host, port, config, timeout)
        except DescribeError as exc:
            last = exc
    raise last or DescribeError("no bootstrap server answered")


def describe_consumer_groups(
    config: Mapping[str, Any],
    groups: Iterable[str],
    timeout: float = 30.0,
    attempts: int = 3,
    calls: Counter[str] | None = None,
) -> dict[str, Group | DescribeError]:
    """group -> its description (``Group``), or why it could not be read (``DescribeError``).

    Raises ``UnsupportedDescribe`` when the cluster or the settings rule the request out (SASL,
    a broker without ConsumerGroupDescribe) and ``DescribeError`` when no broker answers.
    Groups whose coordinator moved or was loading are asked again, up to ``attempts`` rounds.
    ``calls`` counts the requests sent, by name."""
    counted: Counter[str] = calls if calls is not None else Counter()
    todo = sorted(set(groups))
    if not todo:
        return {}
    out: dict[str, Group | DescribeError] = {}
    with _bootstrap(config, timeout) as boot:
        counted["api_versions"] += 1
        versions = api_versions(boot)
        if CONSUMER_GROUP_DESCRIBE not in versions:
            raise UnsupportedDescribe(f"the broker at {boot.where} does not serve ConsumerGroupDescribe")
        describe_version = min(versions[CONSUMER_GROUP_DESCRIBE][1], 1)
        find = versions.get(FIND_COORDINATOR, (0, 0))
        if find[1] < 4:
            raise UnsupportedDescribe(
                f"the broker at {boot.where} serves FindCoordinator only up to v{find[1]}"
            )
        find_version = min(find[1], 6)  # v4-v6 share one layout
        for attempt in range(attempts):
            counted["find_coordinator"] += 1
            where = find_coordinators(boot, find_version, todo)
            by_node: dict[tuple[str, int], list[str]] = {}
            retry: list[str] = []
            for gid in todo:
                found = where.get(gid)
                if isinstance(found, tuple):
                    by_node.setdefault(found, []).append(gid)
                elif isinstance(found, GroupDescribeError) and found.code in _RETRY:
                    retry.append(gid)
                    out[gid] = found
                else:
                    out[gid] = found or DescribeError(f"group {gid}: no coordinator in the answer")
            for (host, port), gids in sorted(by_node.items()):
                try:
                    conn = Connection(host, port, config, timeout)
                except DescribeError as exc:
                    out.update(dict.fromkeys(gids, exc))
                    retry += gids
                    continue
                with conn:
                    for i in range(0, len(gids), BATCH):
                        counted["consumer_group_describe"] += 1
                        answers = describe_on(conn, describe_version, gids[i : i + BATCH])
                        for gid in gids[i : i + BATCH]:
                            got = answers.get(gid) or DescribeError(f"group {gid}: not in the answer")
                            out[gid] = got
                            if isinstance(got, GroupDescribeError) and got.code in _RETRY:
                                retry.append(gid)
            if not retry or attempt == attempts - 1:
                break
            todo = sorted(set(retry))
            time.sleep(0.2 * (attempt + 1))
    return out
