"""Real fault scenarios of issue 8, shared by ``tests/kafka/test_faults.py`` and ``bench/faults.py``.

Each scenario injects one real fault (an unreachable or stopped broker, a killed Spark job, an
unreachable audit database, a crash between the plans topic and the audit store, a broker
restart under running consumers) and returns an ``Outcome``: what the system did and the
figures the bench prints. The tests assert on the outcome's ``details``.

``SpareBroker`` is a second broker of our own (free ports, own state; noida, or the tests' kind):
the faults that stop a broker stop this one, never the shared session broker.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

import brokerctl  # noqa: E402
import kafkakit  # noqa: E402
from kafkakit import config_flags, declared_plan_flags, only_declared, run_cli, wait_until  # noqa: E402

BIN = Path(sys.executable).parent


@dataclass
class Outcome:
    """One row of the fault table, plus what the tests check."""

    fault: str
    did: str = ""
    produced: int | None = None
    processed: int | None = None
    lost: int | None = None
    published: int = 0
    audit_records: int = 0
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SpareBroker:
    """A second broker of our own (noida, or ``kind``): free ports, state in ``folder`` (its
    data in ``folder/data``); ``stop()``/``start()`` keep its data and ports."""

    def __init__(self, folder: Path, kind: str = "noida") -> None:
        self.folder = Path(folder)
        self.data = self.folder / "data"
        self.kind = kind
        self.port = brokerctl.free_port_pair()
        self.broker = brokerctl.Broker(self.kind, f"127.0.0.1:{self.port}")
        self.started = False

    def start(self) -> brokerctl.Broker:
        self.broker = brokerctl.start_private(self.kind, self.folder, port=self.port, fresh=not self.started)
        self.started = True
        return self.broker

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop it with ``sig`` and wait until its process is gone (SIGKILL after 30 s)."""
        pid = brokerctl.private_pid(self.folder)
        if pid is None:
            return
        os.kill(pid, sig)
        deadline = time.monotonic() + 30
        while brokerctl.private_pid(self.folder) is not None:
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)

    def __enter__(self) -> SpareBroker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# -- helpers ---------------------------------------------------------------------------------


def demo(broker: brokerctl.Broker, out: Path, tag: str = "f") -> tuple[str, Path]:
    """The demo groups under a fresh prefix; returns (prefix, groups file)."""
    from demo_groups import build

    prefix = f"{tag}{uuid.uuid4().hex[:6]}-"
    with contextlib.redirect_stdout(sys.stderr):  # its progress lines are not the bench's table
        return prefix, build(broker.config(), broker.create_topic, out / prefix, prefix=prefix)


def newest(broker: brokerctl.Broker, groups: list[str], topic: str = "lagassign.plans") -> dict[str, Any]:
    """The newest plan per group on the plans topic: {group: (version, plan_id)}."""
    from lagassign.kafka.plans import PlanStore

    with PlanStore(broker.config(), topic, 15) as store:
        found = store.read(groups)
    return {g: (p.version, p.plan_id) for g, p in found.items()}


def plans_of(db_url: str) -> list[dict[str, Any]]:
    """Every plan in the audit store, newest first, with groups and publications."""
    from lagassign.store import AuditStore

    with AuditStore(db_url) as store:
        return [store.get_plan(p["id"]) for p in store.list_plans()]


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "error" in line.lower()]


def _short(line: str) -> str:
    return line.removeprefix("lagassign: error: ")


def _commit_filler_groups(broker: brokerctl.Broker, topic: str, groups: list[str], partitions: int) -> None:
    """Groups with a committed offset on every partition of ``topic`` (no members)."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(broker.config())
    futures = []
    for g in groups:
        offsets = [TopicPartition(topic, p, 1) for p in range(partitions)]
        futures += admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(g, offsets)]).values()
    for f in futures:
        f.result(30)


# -- 1. the broker ---------------------------------------------------------------------------


def broker_unreachable(tmp: Path) -> Outcome:
    """``lagassign plan --apply`` against a port nothing listens on."""
    db = f"sqlite:///{tmp / 'unreachable.db'}"
    port = free_port()
    started = time.monotonic()
    run = run_cli(
        "plan",
        "--bootstrap-server",
        f"127.0.0.1:{port}",
        "--timeout",
        "2",
        "--apply",
        "--base-dir",
        str(tmp / "runs"),
        "--db",
        db,
        timeout=90,
    )
    seconds = time.monotonic() - started
    plans = plans_of(db)
    errors = error_lines(run.stderr)
    return Outcome(
        "broker unreachable (closed port)",
        f"exit {run.returncode} after {seconds:.1f}s: "
        f"{_short(errors[0]) if errors else run.stderr.strip()[-200:]}",
        published=0,
        audit_records=len(plans),
        seconds=seconds,
        details={"returncode": run.returncode, "stderr": run.stderr, "errors": errors, "plans": plans},
    )


def _run_on_a_terminal(argv: list[str], on_line: Any, timeout: float) -> tuple[int, str, str]:
    """Run ``argv`` with stderr on a pseudo-terminal (so progress bars show); call
    ``on_line(text_so_far)`` as stderr arrives. Returns (exit code, stdout, stderr)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)
    reader.start()
    seen = b""
    deadline = time.monotonic() + timeout
    try:
        while True:
            if time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"{argv[:2]} did not end within {timeout}s")
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed its terminal
                    chunk = b""
                if not chunk:
                    break
                seen += chunk
                on_line(seen.decode("utf-8", "replace"))
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        os.close(master)
    reader.join(10)
    return code, (out[0] if out else b"").decode(), seen.decode("utf-8", "replace").replace("\r\n", "\n")


def broker_stopped_mid_snapshot(spare: SpareBroker, tmp: Path, fillers: int = 300) -> Outcome:
    """Stop the spare broker while ``lagassign plan --apply`` is fetching committed offsets."""
    broker = spare.broker
    prefix, groups_file = demo(broker, tmp, "mid")
    filler_topic = f"{prefix}filler"
    broker.create_topic(filler_topic, 4)
    _commit_filler_groups(broker, filler_topic, [f"{prefix}fill-{i:04d}" for i in range(fillers)], 4)
    watched = [f"{prefix}orders-enricher", f"{prefix}audit-sink"]
    before = newest(broker, watched)
    db = f"sqlite:///{tmp / 'midsnap.db'}"
    argv = [
        str(BIN / "lagassign"),
        "plan",
        *config_flags(broker),
        "--timeout",
        "2",
        "--groups",
        f"{only_declared(groups_file)}|{re.escape(prefix)}fill-.*",
        "--groups-file",
        str(groups_file),
        "--apply",
        "--base-dir",
        str(tmp / "midruns"),
        "--db",
        db,
    ]
    stopped_at: list[str] = []

    def stop_when_offsets_flow(text: str) -> None:
        bars = re.findall(r"snapshot \[[#-]+\] (\d+)/(\d+)", text)
        if not stopped_at and bars and int(bars[-1][0]) < int(bars[-1][1]):
            stopped_at.append("/".join(bars[-1]))
            spare.stop()

    started = time.monotonic()
    code, _out, err = _run_on_a_terminal(argv, stop_when_offsets_flow, timeout=120)
    seconds = time.monotonic() - started
    spare.start()  # same data: look at what the topic holds now
    after = newest(broker, watched)
    plans = plans_of(db)
    errors = error_lines(err)
    return Outcome(
        f"broker stopped mid-snapshot (at {stopped_at[0] if stopped_at else '?'} groups' offsets)",
        f"exit {code} after {seconds:.1f}s, plan {plans[0]['status'] if plans else '?'}: "
        f"{_short(errors[-1]) if errors else err.strip().splitlines()[-1]}",
        published=sum(after.get(g) != before.get(g) for g in watched),
        audit_records=len(plans),
        seconds=seconds,
        details={
            "returncode": code,
            "stderr": err,
            "errors": errors,
            "plans": plans,
            "before": before,
            "after": after,
            "stopped_at": stopped_at,
        },
    )


# -- 2. Spark --------------------------------------------------------------------------------


def airflow_home(home: Path, broker: brokerctl.Broker) -> dict[str, str]:
    """A migrated Airflow home for the Spark fault (one core: the job is killed anyway)."""
    return kafkakit.airflow_home(home, broker, spark_host="local[1]")


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = defaultdict(list)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children[ppid].append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _spark_submit_of(pid: int) -> int | None:
    """The spark-submit JVM among the descendants of ``pid`` (our own airflow process)."""
    for child in _descendants(pid):
        try:
            cmd = (Path("/proc") / str(child) / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        # spark-class first runs launcher.Main (which names SparkSubmit too) to build the command.
        if (
            cmd
            and cmd[0].endswith(b"java")
            and b"org.apache.spark.deploy.SparkSubmit" in cmd
            and b"org.apache.spark.launcher.Main" not in cmd
        ):
            return child
    return None


def _job_running(jvm: int) -> bool:
    """Whether the job's own Python (``spark_jobs/evaluate_groups.py``) runs under the JVM."""
    for child in _descendants(jvm):
        try:
            if b"evaluate_groups.py" in (Path("/proc") / str(child) / "cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


def spark_job_killed(broker: brokerctl.Broker, env: dict[str, str], tmp: Path, after: float = 0.5) -> Outcome:
    """``airflow dags test lagassign_rebalance`` with apply on; SIGKILL the spark-submit JVM
    ``after`` seconds after the job's own Python started under it (the job under way: a fixed
    delay from the JVM's start is not, now that a small job takes about 4 s in all)."""
    prefix, groups_file = demo(broker, tmp, "spk")
    watched = [f"{prefix}orders-enricher", f"{prefix}audit-sink"]
    before = newest(broker, watched)
    conf = {"groups": only_declared(groups_file), "groups_file": str(groups_file), "apply": True}
    started = time.monotonic()
    argv = [str(BIN / "airflow"), "dags", "test", "lagassign_rebalance", "-c", json.dumps(conf)]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)
    reader.start()
    killed: list[int] = []
    try:
        jvm = wait_until(
            lambda: _spark_submit_of(proc.pid) or proc.poll() is not None, timeout=240, every=0.2
        )
        if jvm is not True:
            wait_until(lambda: _job_running(jvm) or proc.poll() is not None, timeout=120, every=0.05)
            time.sleep(after)  # the job under way: its context starting
            try:
                os.kill(jvm, signal.SIGKILL)
                killed.append(jvm)
            except ProcessLookupError:
                pass  # the job ended first: ``killed`` stays empty and the tests say so
        code = proc.wait(300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    reader.join(10)
    seconds = time.monotonic() - started
    log = out[0] if out else ""
    after_topic = newest(broker, watched)
    plans = [
        p
        for p in plans_of(env["LAGASSIGN_DB_URL"])
        if any(g["group"] in watched for g in p.get("groups", []))
        or (p.get("parameters") or {}).get("groups_file") == str(groups_file)
    ]
    return Outcome(
        "Spark job killed (SIGKILL spark-submit)",
        f"dags test exit {code} after {seconds:.0f}s; plan {plans[0]['status'] if plans else '?'}: "
        f"{plans[0].get('error') if plans else ''}",
        published=sum(after_topic.get(g) != before.get(g) for g in watched),
        audit_records=len(plans),
        seconds=seconds,
        details={
            "returncode": code,
            "log": log,
            "plans": plans,
            "before": before,
            "after": after_topic,
            "killed": killed,
            "spark_error": re.findall(r"Cannot execute: .*", log),
        },
    )


# -- 3. the audit database -------------------------------------------------------------------

DEAD_DB = "postgresql+psycopg2://postgres@127.0.0.1:{port}/nope"


def audit_db_unreachable(broker: brokerctl.Broker, tmp: Path) -> Outcome:
    """``lagassign plan --apply`` with a PostgreSQL URL nothing listens on."""
    prefix, groups_file = demo(broker, tmp, "adb")
    watched = [f"{prefix}orders-enricher", f"{prefix}audit-sink"]
    before = newest(broker, watched)
    started = time.monotonic()
    run = run_cli(
        "plan",
        *declared_plan_flags(broker, groups_file),
        "--base-dir",
        str(tmp / "adbruns"),
        "--db",
        DEAD_DB.format(port=free_port()),
        timeout=120,
    )
    seconds = time.monotonic() - started
    after = newest(broker, watched)
    errors = error_lines(run.stderr)
    return Outcome(
        "audit database unreachable",
        f"exit {run.returncode} after {seconds:.1f}s: "
        f"{_short(errors[0]) if errors else run.stderr.strip()[-200:]}",
        published=sum(after.get(g) != before.get(g) for g in watched),
        audit_records=0,
        seconds=seconds,
        details={
            "returncode": run.returncode,
            "stderr": run.stderr,
            "errors": errors,
            "before": before,
            "after": after,
        },
    )


def crash_between_topic_and_store(broker: brokerctl.Broker, tmp: Path) -> Outcome:
    """A run dies after writing a plan to the topic but before marking it published (group A),
    another before writing it at all (group B); the next ``lagassign plan`` reconciles both."""
    from lagassign.core.plans import next_plan
    from lagassign.kafka.plans import PlanStore
    from lagassign.store import AuditStore

    (pa, fa), (pb, fb) = demo(broker, tmp, "rca"), demo(broker, tmp, "rcb")
    merged = tmp / "merged-groups.yaml"
    merged.write_text("groups:\n" + "".join(f.read_text().split("groups:\n", 1)[1] for f in (fa, fb)))
    a, b = f"{pa}orders-enricher", f"{pb}orders-enricher"
    db = f"sqlite:///{tmp / 'reconcile.db'}"
    started = time.monotonic()
    first = run_cli(
        "plan",
        *config_flags(broker),
        "--groups",
        only_declared(merged),
        "--groups-file",
        str(merged),
        "--json",
        "--base-dir",
        str(tmp / "rcruns"),
        "--db",
        db,
        timeout=180,
    )
    assert first.returncode == 0, first.stderr[-2000:]
    plan_id = json.loads(first.stdout)["plan_id"]
    with AuditStore(db) as store, PlanStore(broker.config(), timeout=15) as topic:
        snapshot_at = store.get_plan(plan_id)["snapshot_at"]
        pubs = {}
        for group in (a, b):
            in_force = topic.newest(group)
            pubs[group] = store.mark_publication_pending(plan_id, group, min_version=in_force.version + 1)
        pa_ = pubs[a]
        # the applier's write of A's reserved version (kafka.applier: the plan record, then
        # topic.write) ...
        in_force, when, pid = topic.newest(a), str(snapshot_at), str(plan_id)
        written = next_plan(in_force, a, pa_["strategy"], pa_["assignment"], when, pa_["version"], pid)
        assert written is not None
        topic.write(written)
        # ... and here the run "crashes": neither mark_published(a) nor anything for b.
        pending_before = [
            (p["group"], p["version"]) for p in store.pending_publications() if p["group"] in (a, b)
        ]
    nxt = run_cli(
        "plan",
        *config_flags(broker),
        "--groups",
        "^$",
        "--base-dir",
        str(tmp / "rcruns"),
        "--db",
        db,
        timeout=120,
    )
    seconds = time.monotonic() - started
    with AuditStore(db) as store:
        plan = store.get_plan(plan_id)
        states = {
            g["group"]: [(p["version"], p["state"]) for p in g["publications"]]
            for g in plan["groups"]
            if g["group"] in (a, b)
        }
        pending_after = [p for p in store.pending_publications() if p["group"] in (a, b)]
        records = len(store.list_plans())
    on_topic = newest(broker, [a, b])
    return Outcome(
        "crash between topic write and audit mark",
        f"next run reconciled: A {states.get(a)}, B {states.get(b)}",
        published=1,
        audit_records=records,
        seconds=seconds,
        details={
            "first": first,
            "next": nxt,
            "plan_id": plan_id,
            "a": a,
            "b": b,
            "pubs": pubs,
            "pending_before": pending_before,
            "pending_after": pending_after,
            "states": states,
            "on_topic": on_topic,
        },
    )


# -- 4. the client ---------------------------------------------------------------------------


def consumers_across_broker_restart(
    spare: SpareBroker, partitions: int = 6, per_round: int = 300, down: float = 3.0
) -> Outcome:
    """Three PlanConsumers follow one plan; the broker stops and restarts under them; records
    are produced before, during (buffered by the producer) and after the outage."""
    from confluent_kafka import Producer
    from lagassign.client import PlanConsumer
    from lagassign.kafka.plans import PlanStore

    broker = spare.broker
    tag = uuid.uuid4().hex[:6]
    topic, plans, group = f"rs{tag}-events", f"rs{tag}-plans", f"rs{tag}-workers"
    broker.create_topic(topic, partitions)
    broker.create_topic(plans, 1, {"cleanup.policy": "compact"})
    ids = ["w0", "w1", "w2"]
    members = {iid: [[topic, p] for p in range(partitions) if p % 3 == i] for i, iid in enumerate(ids)}
    with PlanStore(broker.config(), plans, 15) as store:
        store.publish(group, "roundrobin", members)

    delivered: list[tuple[int, int]] = []

    def on_delivery(err: Any, msg: Any) -> None:
        if err is None:
            delivered.append((msg.partition(), msg.offset()))

    producer = Producer(broker.config({"linger.ms": 5, "message.timeout.ms": 120000, "log_level": 0}))

    def produce(n: int, flush: bool = True) -> None:
        for p in range(partitions):
            for i in range(n):
                producer.produce(topic, value=f"{p}/{i}".encode(), partition=p, on_delivery=on_delivery)
        producer.poll(0)
        if flush:
            assert producer.flush(60) == 0, "records not delivered"

    seen: list[tuple[str, int | None, int, int]] = []
    lock = threading.Lock()
    stop = threading.Event()
    failures: list[BaseException] = []

    def run(iid: str) -> None:
        conf = broker.config({"auto.offset.reset": "earliest", "fetch.wait.max.ms": 100, "log_level": 0})
        try:
            with PlanConsumer(conf, group, iid, plan_topic=plans, plan_check_interval=0.3, timeout=15) as c:
                while not stop.is_set():
                    msg = c.poll(0.2)
                    if msg is not None:
                        time.sleep(0.002)
                        with lock:
                            seen.append((iid, c.version, msg.partition(), msg.offset()))
        except BaseException as exc:  # reported below
            failures.append(exc)

    started = time.monotonic()
    threads = [threading.Thread(target=run, args=(iid,), daemon=True) for iid in ids]
    for t in threads:
        t.start()
    try:
        produce(per_round)
        wait_until(lambda: len(seen) >= partitions * per_round // 3 or failures, timeout=60)
        spare.stop()
        produce(per_round, flush=False)  # buffered while the broker is down
        time.sleep(down)
        spare.start()
        assert producer.flush(90) == 0, "records not delivered after the restart"
        produce(per_round)

        def all_processed() -> bool:
            with lock:
                return {(p, o) for _, _, p, o in seen} >= set(delivered)

        wait_until(lambda: all_processed() or failures, timeout=90, every=0.2)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    seconds = time.monotonic() - started
    processed = {(p, o) for _, _, p, o in seen}
    owners: dict[tuple[int | None, int], set[str]] = defaultdict(set)
    for iid, version, p, _o in seen:
        owners[(version, p)].add(iid)
    lost = set(delivered) - processed
    return Outcome(
        f"broker stopped {down:.0f}s and restarted under 3 consumers",
        f"consumers kept plan v{sorted({v for _, v, _, _ in seen})}, resumed after restart",
        produced=len(delivered),
        processed=len(processed),
        lost=len(lost),
        published=1,
        audit_records=0,
        seconds=seconds,
        details={
            "failures": failures,
            "owners": owners,
            "members": members,
            "topic": topic,
            "lost": lost,
            "seen": len(seen),
            "versions": {v for _, v, _, _ in seen},
        },
    )
