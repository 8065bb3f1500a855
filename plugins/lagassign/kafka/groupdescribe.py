"""KIP-848 groups as the broker describes them: ConsumerGroupDescribe (API key 69) over the wire.

confluent-kafka 2.16's ``describe_consumer_groups`` sends this request for a ``consumer``-type
group but keeps only part of the answer: members' ids, client ids, hosts, instance ids, current
and target assignments. The rest, which planning needs, it drops: each member's rack, its
subscription (topic names, or the regex Kafka 4 resolves on the broker), its epoch, whether it
speaks the new protocol or is a classic member of a group that is being migrated, and the
group's epochs. This module asks the group's coordinator itself and decodes all of it
(``groupdescribe_wire`` has the bytes): ApiVersions (v0) to learn which versions the broker
serves, FindCoordinator (v4+, many groups a request) to find each group's coordinator, then
ConsumerGroupDescribe (v0, or v1 with the member type) per coordinator. One answer describes a
group as it was at one moment on its coordinator, so members, assignments and the group's type
and assignor agree with each other.

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
from typing import Any

from .groupdescribe_wire import (
    CONSUMER_GROUP_DESCRIBE,
    FIND_COORDINATOR,
    RETRIABLE,
    DescribeError,
    Group,
    GroupDescribeError,
    Member,
    Reader,
    UnsupportedDescribe,
    api_versions,
    describe_on,
    find_coordinators,
    frame_request,
)

__all__ = [
    "Connection",
    "DescribeError",
    "Group",
    "GroupDescribeError",
    "Member",
    "UnsupportedDescribe",
    "bootstrap_addresses",
    "describe_consumer_groups",
]

BATCH = 100  # groups per ConsumerGroupDescribe request


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

    def ask(self, api_key: int, version: int, body: bytes, flexible: bool, flexible_answer: bool) -> Reader:
        """Send one request and read its answer (positioned after the answer's header)."""
        self._correlation += 1
        try:
            self.sock.sendall(frame_request(api_key, version, self._correlation, body, flexible))
            size = struct.unpack(">i", self._read(4))[0]
            answer = Reader(self._read(size))
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
    """A connection to the first bootstrap server that answers."""
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
        find_version, describe_version = _versions(boot)
        for attempt in range(attempts):
            counted["find_coordinator"] += 1
            by_node, retry = _coordinators(find_coordinators(boot, find_version, todo), todo, out)
            for node, gids in sorted(by_node.items()):
                retry += _describe_at(node, gids, config, timeout, describe_version, counted, out)
            if not retry or attempt == attempts - 1:
                break
            todo = sorted(set(retry))
            time.sleep(0.2 * (attempt + 1))
    return out


def _versions(boot: Connection) -> tuple[int, int]:
    """The FindCoordinator and ConsumerGroupDescribe versions to send, from the broker's
    ApiVersions; ``UnsupportedDescribe`` when it serves no usable ones."""
    versions = api_versions(boot)
    if CONSUMER_GROUP_DESCRIBE not in versions:
        raise UnsupportedDescribe(f"the broker at {boot.where} does not serve ConsumerGroupDescribe")
    describe_version = min(versions[CONSUMER_GROUP_DESCRIBE][1], 1)
    find = versions.get(FIND_COORDINATOR, (0, 0))
    if find[1] < 4:
        raise UnsupportedDescribe(f"the broker at {boot.where} serves FindCoordinator only up to v{find[1]}")
    return min(find[1], 6), describe_version  # FindCoordinator v4-v6 share one layout


def _coordinators(
    where: Mapping[str, Any], todo: Sequence[str], out: dict[str, Group | DescribeError]
) -> tuple[dict[tuple[str, int], list[str]], list[str]]:
    """The groups of ``todo`` by coordinator (host, port), and those to ask again; a group
    without a coordinator gets its error in ``out`` (kept there if it is not asked again)."""
    by_node: dict[tuple[str, int], list[str]] = {}
    retry: list[str] = []
    for gid in todo:
        found = where.get(gid)
        if isinstance(found, tuple):
            by_node.setdefault(found, []).append(gid)
        elif isinstance(found, GroupDescribeError) and found.code in RETRIABLE:
            retry.append(gid)
            out[gid] = found
        else:
            out[gid] = found or DescribeError(f"group {gid}: no coordinator in the answer")
    return by_node, retry


def _describe_at(
    node: tuple[str, int],
    gids: Sequence[str],
    config: Mapping[str, Any],
    timeout: float,
    version: int,
    counted: Counter[str],
    out: dict[str, Group | DescribeError],
) -> list[str]:
    """Describe ``gids`` on their coordinator ``node``, ``BATCH`` groups a request, into
    ``out``; the groups to ask again (the coordinator unreachable, moved or loading)."""
    host, port = node
    try:
        conn = Connection(host, port, config, timeout)
    except DescribeError as exc:
        out.update(dict.fromkeys(gids, exc))
        return list(gids)
    retry: list[str] = []
    with conn:
        for i in range(0, len(gids), BATCH):
            counted["consumer_group_describe"] += 1
            answers = describe_on(conn, version, gids[i : i + BATCH])
            for gid in gids[i : i + BATCH]:
                got = answers.get(gid) or DescribeError(f"group {gid}: not in the answer")
                out[gid] = got
                if isinstance(got, GroupDescribeError) and got.code in RETRIABLE:
                    retry.append(gid)
    return retry
