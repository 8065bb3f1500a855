"""Start, stop and check the local Kafka broker used for development, tests and CI.

One module behind both ``scripts/broker`` and the ``broker`` pytest fixture, so the broker a
developer starts by hand is the one the tests start. Three kinds (``LAGASSIGN_BROKER``):

* ``noida`` (default): the noida-db wheel's native broker on 127.0.0.1:19092, the demo's
  broker (no JVM, no Maven). We run the binary inside the wheel directly: its console script
  wraps it in a second process that a SIGTERM does not reach. It never evicts a dead member.
* ``kafka4``: Apache Kafka 4.4.0 (``org.apache.kafka:kafka_2.13`` and its dependencies, fetched
  once by Maven into ``var/kafka/4.4.0/``), one KRaft node that is broker and controller, on
  127.0.0.1:19292 (controller 19293); both rebalance protocols, classic and consumer (KIP-848).
  The test suite's broker.
* ``kafka3``: Apache Kafka 3.9.2, the last 3.x line, the same way on 127.0.0.1:19492 (classic
  protocol only: KIP-848 was a preview in 3.x).

State (pid files, data, logs) lives under ``var/broker/<kind>/`` in the repository; a JVM
broker's log is ``var/broker/<kind>/kafka.log``.

``LAGASSIGN_BROKER_INSTANCE=test`` names a second broker of each kind, with its own state
(``var/broker/test/<kind>/``) and ports (each 100 higher: kafka4 on 19392): the tests' broker,
so that a test run neither reads nor leaves groups on the broker a developer or ``make demo``
started. ``start_private`` starts one more on free ports in a folder of the caller's (a test's
second cluster, or a broker with its own settings).
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pidfiles import alive, spawn

REPO = Path(__file__).resolve().parent.parent
VAR = REPO / "var"
KINDS = ("noida", "kafka4", "kafka3")
NOIDA_PORT = 19092
JAVA_HOME_17 = Path("/usr/lib/jvm/java-17-openjdk-amd64")


@dataclass(frozen=True)
class Release:
    """An Apache Kafka release run from Maven Central's jars: version, ports, logging binding."""

    version: str
    port: int  # the client listener; the controller listens one higher. Below 32768: ports in
    # Linux's ephemeral range (32768-60999) can be held by any client's outgoing connection,
    # and a broker then fails to bind (a CI run lost its Kafka 3.9 pass to that on 49192)
    logging: tuple[str, ...]  # Maven coordinates of the SLF4J binding the broker lacks at run time
    protocols: tuple[str, ...]  # group rebalance protocols the broker serves


RELEASES = {
    "kafka4": Release(
        "4.4.0", 19292, ("org.apache.logging.log4j:log4j-slf4j-impl:2.25.5",), ("classic", "consumer")
    ),
    "kafka3": Release("3.9.2", 19492, ("org.slf4j:slf4j-reload4j:1.7.36",), ("classic",)),
}
#: Kafka 4's version: the Java harness takes Kafka's own assignors at the same version
KAFKA4_VERSION = RELEASES["kafka4"].version


class BrokerError(RuntimeError):
    """The broker could not be started, reached or stopped."""


@dataclass
class Broker:
    """A running broker: where to connect and what extra librdkafka settings clients need."""

    kind: str
    bootstrap: str
    client_config: dict[str, str] = field(default_factory=dict)

    def config(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """librdkafka settings for a client of this broker, plus ``extra``."""
        return {"bootstrap.servers": self.bootstrap, **self.client_config, **(extra or {})}

    @property
    def protocols(self) -> tuple[str, ...]:
        """The group rebalance protocols this broker serves (``consumer`` is KIP-848's)."""
        return RELEASES[self.kind].protocols if self.kind in RELEASES else ("classic",)

    def create_topic(self, name: str, partitions: int = 1, config: dict[str, str] | None = None) -> None:
        """Create a topic with one replica and wait until every partition has a leader."""
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient(self.config({"log_level": 0}))
        futures = admin.create_topics(
            [NewTopic(name, partitions, 1, config=config or {})], operation_timeout=10, request_timeout=10
        )
        futures[name].result()
        _wait_for_topic(self, name, partitions)


#: the brokers of one kind that can run side by side: instance name -> offset of its ports
INSTANCES = {"": 0, "test": 100}


def instance_from_env() -> str:
    """The instance chosen by ``LAGASSIGN_BROKER_INSTANCE`` ("" for the developer's broker)."""
    name = os.environ.get("LAGASSIGN_BROKER_INSTANCE", "").strip()
    if name not in INSTANCES:
        raise BrokerError(f"LAGASSIGN_BROKER_INSTANCE={name!r}: expected test, or nothing")
    return name


def port(base: int) -> int:
    """A port of this instance (``NOIDA_PORT`` or a release's port, moved)."""
    return base + INSTANCES[instance_from_env()]


def kind_from_env(default: str = "noida") -> str:
    """The broker kind chosen by ``LAGASSIGN_BROKER`` (``default`` when unset: noida for the
    demo and ``scripts/broker``, kafka4 for the tests and benchmarks)."""
    kind = os.environ.get("LAGASSIGN_BROKER", "").strip() or default
    if kind not in KINDS:
        raise BrokerError(f"LAGASSIGN_BROKER={kind!r}: expected one of {', '.join(KINDS)}")
    return kind


def state_dir(kind: str) -> Path:
    instance = instance_from_env()
    return VAR / "broker" / instance / kind if instance else VAR / "broker" / kind


def describe(kind: str) -> Broker:
    """The connection facts of a broker kind (whether or not it is running). A JVM broker that
    runs keeps the port it was started with (its ``server.properties``), even if ours moved."""
    if kind == "noida":
        return Broker("noida", f"127.0.0.1:{port(NOIDA_PORT)}")
    folder = state_dir(kind)
    started = _started_port(folder) if _read_pid(folder, "kafka") is not None else None
    return Broker(kind, f"127.0.0.1:{started or port(RELEASES[kind].port)}")


def _started_port(folder: Path) -> int | None:
    """The client port in a JVM broker's ``server.properties``, if it can be read."""
    try:
        lines = (folder / "server.properties").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("advertised.listeners="):
            return int(line.rsplit(":", 1)[1])
    return None


# --- process bookkeeping -------------------------------------------------------------------


def _read_pid(folder: Path, name: str) -> int | None:
    try:
        pid = int((folder / f"{name}.pid").read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    return pid if alive(pid) else None


def _terminate(folder: Path, name: str, timeout: float = 20.0) -> bool:
    """SIGTERM the process of a pid file (SIGKILL after ``timeout``); True if one was running."""
    pid = _read_pid(folder, name)
    (folder / f"{name}.pid").unlink(missing_ok=True)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)
            break
        time.sleep(0.1)
    return True


# --- readiness -----------------------------------------------------------------------------


def answers(broker: Broker, timeout: float = 2.0) -> bool:
    """True when the broker answers a metadata request and lists at least one broker."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(broker.config({"log_level": 0}))
    try:
        md = admin.list_topics(timeout=timeout)
    except Exception:
        return False
    return bool(md.brokers)


def wait_ready(broker: Broker, timeout: float = 60.0, folder: Path | None = None, proc: str = "") -> None:
    """Wait until the broker answers metadata; fail early if its process (``proc``) exited."""
    deadline = time.monotonic() + timeout
    while not answers(broker):
        if folder is not None and proc and _read_pid(folder, proc) is None:
            raise BrokerError(f"{proc} exited during start-up; see {folder / (proc + '.log')}")
        if time.monotonic() > deadline:
            raise BrokerError(f"{broker.kind} broker at {broker.bootstrap} silent for {timeout:.0f}s")
        time.sleep(0.2)
    if broker.kind in RELEASES:
        _warm_up_offsets(broker, deadline)


def _warm_up_offsets(broker: Broker, deadline: float) -> None:
    # Kafka creates __consumer_offsets on the first coordinator lookup and answers
    # COORDINATOR_NOT_AVAILABLE until its partitions have leaders: commit once so the first
    # test does not pay (or time out on) that.
    from confluent_kafka import Consumer, KafkaException
    from confluent_kafka import TopicPartition as TP

    name = "lagassign.warmup"
    if not _topic_exists(broker, name):
        broker.create_topic(name, 1)
    while True:
        consumer = Consumer(
            broker.config({"group.id": "lagassign-warmup", "enable.auto.commit": False, "log_level": 0})
        )
        try:
            consumer.commit(offsets=[TP(name, 0, 0)], asynchronous=False)
            return
        except KafkaException:
            if time.monotonic() > deadline:
                raise BrokerError(f"{broker.kind} did not serve offset commits in time") from None
            time.sleep(0.5)
        finally:
            consumer.close()


def _topic_exists(broker: Broker, name: str) -> bool:
    from confluent_kafka.admin import AdminClient

    md = AdminClient(broker.config({"log_level": 0})).list_topics(timeout=10)
    return name in md.topics and md.topics[name].error is None


def _wait_for_topic(broker: Broker, name: str, partitions: int, timeout: float = 30.0) -> None:
    """Wait until metadata shows every partition of a new topic with a leader."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(broker.config({"log_level": 0}))
    deadline = time.monotonic() + timeout
    while True:
        md = admin.list_topics(timeout=10)
        t = md.topics.get(name)
        if (
            t is not None
            and t.error is None
            and len(t.partitions) == partitions
            and all(p.leader >= 0 for p in t.partitions.values())
        ):
            return
        if time.monotonic() > deadline:
            raise BrokerError(f"topic {name} has no leaders after {timeout:.0f}s")
        time.sleep(0.1)


# --- noida-db ------------------------------------------------------------------------------


def noida_binary() -> Path:
    """The broker binary inside the noida-db wheel (made executable: wheels lose the bit)."""
    try:
        import noida_db
    except ImportError:
        raise BrokerError("noida-db is not installed (pip install noida-db==0.2.3)") from None
    binary = Path(noida_db.__file__).parent / "noida-db"
    if not os.access(binary, os.X_OK):
        binary.chmod(binary.stat().st_mode | 0o755)
    return binary


def _start_noida(fresh: bool) -> Broker:
    folder = state_dir("noida")
    if fresh:
        shutil.rmtree(folder / "data", ignore_errors=True)
    return _start_noida_in(folder, port(NOIDA_PORT))


def _start_noida_in(folder: Path, kafka_port: int) -> Broker:
    data = folder / "data"
    spawn(
        folder,
        "noida",
        [
            str(noida_binary()),
            "start",
            "--only",
            "kafka",
            "--host",
            "127.0.0.1",
            "--kafka-port",
            str(kafka_port),
            "--data-dir",
            str(data),
        ],
    )
    broker = Broker("noida", f"127.0.0.1:{kafka_port}")
    wait_ready(broker, timeout=30, folder=folder, proc="noida")
    return broker


# --- Apache Kafka from Maven Central (kafka4, kafka3) ------------------------------------


def kafka_libs(kind: str) -> Path:
    """The jars of a release's broker, fetched by Maven into ``var/kafka/<version>/libs`` once
    (strict checksums against Maven Central) and checked against ``scripts/kafka-jars/``."""
    release = RELEASES[kind]
    home = VAR / "kafka" / release.version
    libs = home / "libs"
    done = home / ".checked"
    if done.exists():
        return libs
    mvn = shutil.which("mvn")
    if not mvn:
        raise BrokerError(
            f"Maven is needed once to fetch Apache Kafka {release.version} (apt-get install maven)"
        )
    home.mkdir(parents=True, exist_ok=True)
    (home / "pom.xml").write_text(_pom(kind))
    print(f"fetching Apache Kafka {release.version} with Maven into {home} ...", file=sys.stderr)
    shutil.rmtree(libs, ignore_errors=True)
    out = subprocess.run(
        [
            mvn,
            "-q",
            "-B",
            "-C",
            "dependency:copy-dependencies",
            f"-DoutputDirectory={libs}",
            "-DincludeScope=runtime",
        ],
        cwd=home,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        tail = (out.stdout + out.stderr).strip().splitlines()[-3:]
        raise BrokerError(f"Maven could not fetch Apache Kafka {release.version}: {' / '.join(tail)}")
    _check_jars(kind, libs)
    done.write_text(release.version + "\n")
    return libs


def _pom(kind: str) -> str:
    release = RELEASES[kind]
    deps = [f"org.apache.kafka:kafka_2.13:{release.version}", *release.logging]
    xml = "".join(
        f"<dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version></dependency>\n"
        for g, a, v in (d.split(":") for d in deps)
    )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>\n'
        f"<groupId>lagassign.local</groupId><artifactId>{kind}-broker</artifactId><version>1</version>\n"
        f"<dependencies>\n{xml}</dependencies></project>\n"
    )


def jar_checksums(kind: str) -> Path:
    """The recorded sha256 of every jar of a release's broker (``sha256sum`` format)."""
    return Path(__file__).resolve().parent / "kafka-jars" / f"kafka-{RELEASES[kind].version}.sha256"


def _check_jars(kind: str, libs: Path) -> None:
    recorded = {}
    for line in jar_checksums(kind).read_text().splitlines():
        if line.strip():
            digest, name = line.split()
            recorded[name] = digest
    present = {p.name for p in libs.glob("*.jar")}
    if present != set(recorded):
        extra, missing = sorted(present - set(recorded)), sorted(set(recorded) - present)
        raise BrokerError(
            f"Kafka {RELEASES[kind].version} jars differ from the record: extra {extra}, missing {missing}"
        )
    for name, digest in recorded.items():
        got = hashlib.sha256((libs / name).read_bytes()).hexdigest()
        if got != digest:
            raise BrokerError(f"{libs / name}: sha256 {got} is not the recorded {digest}")


def _java() -> str:
    java = JAVA_HOME_17 / "bin" / "java"
    if java.exists():
        return str(java)
    found = shutil.which("java")
    if not found:
        raise BrokerError("Java 17 is needed for Apache Kafka (apt-get install openjdk-17-jre-headless)")
    return found


def _java_argv(kind: str, folder: Path, main: str, *args: str, heap: str = "768m") -> list[str]:
    logging = (
        [f"-Dlog4j2.configurationFile={folder / 'log4j2.properties'}"]
        if kind == "kafka4"
        else [f"-Dlog4j.configuration=file:{folder / 'log4j.properties'}"]
    )
    return [
        _java(),
        f"-Xmx{heap}",
        "-Xms128m",
        "-XX:+UseSerialGC",
        "-Djava.awt.headless=true",
        *logging,
        "-cp",
        f"{kafka_libs(kind)}/*",
        main,
        *args,
    ]


#: what a JVM broker logs: warnings, its start, and what the log cleaner did (tests look for it)
_LOG4J2 = """status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.out.ref = out
logger.server.name = kafka.server.KafkaRaftServer
logger.server.level = info
logger.cleaner.name = org.apache.kafka.storage.internals.log.LogCleaner
logger.cleaner.level = info
"""
_LOG4J = """log4j.rootLogger=WARN, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.server.KafkaRaftServer=INFO
log4j.logger.kafka.log.LogCleaner=INFO
"""


def server_settings(kind: str, folder: Path, client_port: int) -> dict[str, str]:
    """The broker's settings: one KRaft node fit for tests (one replica everywhere, short
    minimum session timeouts, no initial rebalance delay, a cleaner that looks every second)."""
    controller = client_port + 1
    settings = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller}",
        "listeners": f"PLAINTEXT://127.0.0.1:{client_port},CONTROLLER://127.0.0.1:{controller}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{client_port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(folder / "data"),
        "num.partitions": "1",
        "default.replication.factor": "1",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "4",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "4",
        "group.initial.rebalance.delay.ms": "0",
        "group.min.session.timeout.ms": "1000",
        "log.cleaner.backoff.ms": "1000",
    }
    if "consumer" in RELEASES[kind].protocols:
        settings |= {
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.consumer.min.session.timeout.ms": "1000",
            "group.consumer.session.timeout.ms": "10000",
            "group.consumer.min.heartbeat.interval.ms": "500",
            "group.consumer.heartbeat.interval.ms": "1000",
        }
    return settings


def _cluster_id() -> str:
    # Kafka's Uuid as text: URL-safe base64 of 16 random bytes, no padding, never starting with "-".
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def _start_jvm(kind: str, folder: Path, client_port: int, fresh: bool, overrides: dict[str, str]) -> Broker:
    if fresh:
        shutil.rmtree(folder / "data", ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "log4j2.properties").write_text(_LOG4J2)
    (folder / "log4j.properties").write_text(_LOG4J)
    settings = server_settings(kind, folder, client_port) | overrides
    server = folder / "server.properties"
    server.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
    if not (folder / "data" / "meta.properties").exists():
        out = subprocess.run(
            _java_argv(
                kind,
                folder,
                "kafka.tools.StorageTool",
                "format",
                "-t",
                _cluster_id(),
                "-c",
                str(server),
                heap="256m",
            ),
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        if out.returncode != 0:
            raise BrokerError(f"formatting {kind} storage failed: {(out.stdout + out.stderr).strip()[-300:]}")
    spawn(folder, "kafka", _java_argv(kind, folder, "kafka.Kafka", str(server)))
    broker = Broker(kind, f"127.0.0.1:{client_port}")
    wait_ready(broker, timeout=90, folder=folder, proc="kafka")
    return broker


def free_port_pair() -> int:
    """A free port whose successor is free too (a JVM broker's client and controller ports),
    drawn from 20000-32700: below the ephemeral range, so that no client's outgoing connection
    takes it between now and the broker's bind."""
    import random
    import socket

    for _ in range(200):
        first = random.randrange(20000, 32700)
        with socket.socket() as a:
            try:
                a.bind(("127.0.0.1", first))
            except OSError:
                continue
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", first + 1))
                except OSError:
                    continue
                return first
    raise BrokerError("no two adjacent free ports on 127.0.0.1")


def start_private(
    kind: str,
    folder: Path,
    overrides: dict[str, str] | None = None,
    port: int | None = None,
    fresh: bool = True,
) -> Broker:
    """Start a broker of ``kind`` of the caller's own: free ports (or ``port``, to start it
    again where it was), state in ``folder`` (kept when not ``fresh``), settings changed by
    ``overrides`` (e.g. ``offsets.retention.minutes``). Stop it with ``stop_private``. noida
    takes no overrides."""
    client_port = port if port is not None else free_port_pair()
    if kind == "noida":
        if overrides:
            raise BrokerError("noida takes no broker settings")
        if fresh:
            shutil.rmtree(folder / "data", ignore_errors=True)
        return _start_noida_in(folder, client_port)
    try:
        return _start_jvm(kind, folder, client_port, fresh=fresh, overrides=dict(overrides or {}))
    except BaseException:
        stop_private(folder)
        raise


def private_pid(folder: Path) -> int | None:
    """The process of a broker started by ``start_private`` in ``folder``, if it runs."""
    return _read_pid(folder, "kafka") or _read_pid(folder, "noida")


def stop_private(folder: Path) -> bool:
    """Stop a broker started by ``start_private`` in ``folder``."""
    return _terminate(folder, "kafka", timeout=30) | _terminate(folder, "noida")


# --- the three verbs -----------------------------------------------------------------------


def running(kind: str) -> bool:
    """True when this module's process for ``kind`` is alive."""
    return _read_pid(state_dir(kind), "noida" if kind == "noida" else "kafka") is not None


def _port_open(bootstrap: str) -> bool:
    import socket

    host, port_text = bootstrap.rsplit(":", 1)
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex((host, int(port_text))) == 0


def start(kind: str, fresh: bool = False) -> Broker:
    """Start the broker (unless it already runs) and wait until it answers. A broker of another
    checkout that already answers on this kind's ports is used as it is (said on stderr); any
    other listener there is an error in one line."""
    broker = describe(kind)
    if running(kind):
        wait_ready(broker, timeout=30)
        return broker
    if _port_open(broker.bootstrap):
        if not answers(broker, timeout=5):
            raise BrokerError(f"{broker.bootstrap} is taken by something that is not a Kafka broker")
        print(
            f"broker: a {kind} broker this checkout did not start answers at {broker.bootstrap}; using it",
            file=sys.stderr,
        )
        wait_ready(broker, timeout=30)
        return broker
    stop(kind)  # half-started leftovers
    try:
        if kind == "noida":
            return _start_noida(fresh)
        return _start_jvm(kind, state_dir(kind), port(RELEASES[kind].port), fresh, {})
    except BaseException:
        stop(kind)
        raise


def stop(kind: str) -> bool:
    """Stop the broker; True if it was running."""
    return _terminate(state_dir(kind), "noida" if kind == "noida" else "kafka", timeout=30)


def status(kind: str) -> str:
    """One line: running and answering, running but silent, or stopped."""
    broker = describe(kind)
    if not running(kind):
        return f"{kind}: stopped"
    if answers(broker):
        return f"{kind}: running at {broker.bootstrap}"
    return f"{kind}: process up but not answering at {broker.bootstrap}"


def fetch(kind: str) -> str:
    """Fetch (once) and check what a kind runs on, without starting it; one line saying what."""
    if kind == "noida":
        return f"noida: {noida_binary()}"
    return f"{kind}: Apache Kafka {RELEASES[kind].version} in {kafka_libs(kind)}"


def main(argv: list[str]) -> int:
    usage = (
        "usage: scripts/broker start [--fresh] | stop | status | fetch"
        "   (LAGASSIGN_BROKER=noida|kafka4|kafka3, LAGASSIGN_BROKER_INSTANCE=test for the tests' one)"
    )
    if not argv or argv[0] not in ("start", "stop", "status", "fetch"):
        print(usage, file=sys.stderr)
        return 2
    try:
        kind = kind_from_env()
        instance_from_env()  # a wrong name fails here, in one line
        if argv[0] == "fetch":
            print(fetch(kind))
        elif argv[0] == "start":
            broker = start(kind, fresh="--fresh" in argv[1:])
            print(broker.bootstrap)
            for key, value in broker.client_config.items():
                print(f"# client setting: {key}={value}", file=sys.stderr)
        elif argv[0] == "stop":
            print(f"{kind}: stopped" if stop(kind) else f"{kind}: was not running")
        else:
            line = status(kind)
            print(line)
            return 0 if "running at" in line else 1
    except BrokerError as exc:
        print(f"broker: error: {exc}", file=sys.stderr)
        return 1
    return 0
