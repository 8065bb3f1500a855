"""Scenarios of "following a plan safely", shared by ``test_following_safely.py`` and ``bench/faults.py``.

Consumers are real processes written as the README shows (``plan_worker.py``), killed with
``kill -9`` where the scenario says so; records come from a real producer at a steady rate; plans
from the real ``lagassign`` commands. Each scenario returns a ``faultkit.Outcome``: the row of the
fault table and the details the tests assert on.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

import brokerctl  # noqa: E402
from faultkit import Outcome, plans_of  # noqa: E402
from kafkakit import config_flags, declared_plan_flags, run_cli, wait_until  # noqa: E402
from proctrack import end_group  # noqa: E402

BIN = Path(sys.executable).parent
WORKER = HERE / "plan_worker.py"


@dataclass
class Setup:
    """Fresh topics and group of one scenario."""

    broker: brokerctl.Broker
    tmp: Path
    partitions: int
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:6])

    def __post_init__(self) -> None:
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.topic = f"s{self.tag}-events"
        self.plans = f"s{self.tag}-plans"
        self.status = f"s{self.tag}-status"
        self.group = f"s{self.tag}-workers"
        self.out = self.tmp / f"{self.tag}-processed.log"
        self.broker.create_topic(self.topic, self.partitions)
        self.broker.create_topic(self.plans, 1, {"cleanup.policy": "compact"})
        # Consumers create it themselves where the broker allows.
        self.broker.create_topic(self.status, 5, {"cleanup.policy": "compact"})

    def publish(self, members: dict[str, list[list[Any]]], strategy: str = "test") -> int:
        from lagassign.kafka.plans import PlanStore

        with PlanStore(self.broker.config(), self.plans, 15) as store:
            plan, _ = store.publish(self.group, strategy, members)
        return plan.version

    def newest(self) -> Any:
        from lagassign.kafka.plans import PlanStore

        with PlanStore(self.broker.config(), self.plans, 15) as store:
            return store.newest(self.group)

    def spread(self, instances: list[str], shift: int = 0) -> dict[str, list[list[Any]]]:
        """Partitions dealt round-robin over ``instances``, rotated by ``shift``."""
        return {
            iid: [[self.topic, p] for p in range(self.partitions) if (p + shift) % len(instances) == i]
            for i, iid in enumerate(instances)
        }

    def worker(
        self,
        instance: str,
        session_timeout_ms: int | None = None,
        commit_interval_ms: int | None = None,
        work_ms: float = 0.0,
        nice: int = 0,
    ) -> subprocess.Popen:
        """One consumer process, written as in the README, following this scenario's plans
        (run at ``nice`` where it must leave the CPU to another process under test)."""
        argv = [
            *(["nice", "-n", str(nice)] if nice else []),
            sys.executable,
            str(WORKER),
            "--bootstrap",
            self.broker.bootstrap,
            "--group",
            self.group,
            "--instance",
            instance,
            "--out",
            str(self.out),
            "--plan-topic",
            self.plans,
            "--status-topic",
            self.status,
            "--topics",
            self.topic,
            "--work-ms",
            str(work_ms),
        ]
        for key, value in self.broker.client_config.items():
            argv += ["--config", f"{key}={value}"]
        if session_timeout_ms:
            argv += ["--session-timeout-ms", str(session_timeout_ms)]
        if commit_interval_ms:
            argv += ["--config", f"auto.commit.interval.ms={commit_interval_ms}"]
        return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def processed(self) -> list[tuple[str, int, int, float]]:
        """(instance, partition, offset, time) of every message handled, in the order written."""
        if not self.out.exists():
            return []
        rows = []
        for line in self.out.read_text().splitlines():
            parts = line.split()
            if len(parts) == 5:
                rows.append((parts[0], int(parts[2]), int(parts[3]), float(parts[4])))
        return rows

    def committed(self) -> dict[int, int]:
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer(self.broker.config({"group.id": self.group}))
        try:
            tps = consumer.committed(
                [TopicPartition(self.topic, p) for p in range(self.partitions)], timeout=15
            )
            return {tp.partition: tp.offset for tp in tps if tp.offset >= 0}
        finally:
            consumer.close()


class Load:
    """A producer thread writing ``rate`` records per second over all partitions until stopped."""

    def __init__(self, setup: Setup, rate: float = 600.0) -> None:
        from confluent_kafka import Producer

        self.setup = setup
        self.rate = rate
        self.delivered: set[tuple[int, int]] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._producer = Producer(setup.broker.config({"linger.ms": 5}))
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _delivered(self, err: Any, msg: Any) -> None:
        if err is None:
            with self._lock:
                self.delivered.add((msg.partition(), msg.offset()))

    def _run(self) -> None:
        per_tick = max(1, int(self.rate / 20))
        p = 0
        while not self._stop.is_set():
            for _ in range(per_tick):
                self._producer.produce(self.setup.topic, value=b"x", partition=p, on_delivery=self._delivered)
                p = (p + 1) % self.setup.partitions
            self._producer.poll(0)
            time.sleep(0.05)

    def __enter__(self) -> Load:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if not self._stop.is_set():
            self._stop.set()
            self._thread.join(10)
            assert self._producer.flush(30) == 0, "records not delivered"


def stop_all(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def drained(setup: Setup, load: Load, timeout: float = 90.0) -> None:
    """Wait until every delivered record has been processed by someone."""

    def done() -> bool:
        return {(p, o) for _, p, o, _ in setup.processed()} >= load.delivered

    wait_until(done, timeout=timeout, every=0.5)


def tally(setup: Setup, load: Load) -> dict[str, Any]:
    rows = setup.processed()
    seen = collections.Counter((p, o) for _, p, o, _ in rows)
    return {
        "produced": len(load.delivered),
        "processed": len(seen),
        "lost": len(load.delivered - set(seen)),
        "twice": sum(n - 1 for n in seen.values() if n > 1),
        "rows": rows,
        "seen": seen,
    }


def counts(t: dict[str, Any]) -> dict[str, int]:
    """A tally's message counts, as an Outcome's fields."""
    return {"produced": t["produced"], "processed": t["processed"], "lost": t["lost"]}


# -- 1. commits ---------------------------------------------------------------------------------


def commits_follow_processing(
    broker: brokerctl.Broker, tmp: Path, interval_ms: int = 1000, seconds: float = 8.0
) -> Outcome:
    """One README consumer for ``seconds`` under load: how far the committed offsets trail what
    it processed, sampled while it runs, and after it closes."""
    s = Setup(broker, tmp, 4)
    s.publish(s.spread(["w0"]))
    started = time.monotonic()
    proc = s.worker("w0", commit_interval_ms=interval_ms)
    trail: list[int] = []
    try:
        with Load(s, rate=400) as load:
            wait_until(lambda: len(s.processed()) > 200, timeout=60)
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                done = {}
                for _, p, o, _ in s.processed():
                    done[p] = max(done.get(p, -1), o + 1)
                committed = s.committed()
                trail.append(sum(max(0, done.get(p, 0) - committed.get(p, 0)) for p in range(s.partitions)))
                time.sleep(0.5)
        drained(s, load)
    finally:
        stop_all([proc])
    final = s.committed()
    done = {}
    for _, p, o, _ in s.processed():
        done[p] = max(done.get(p, -1), o + 1)
    after_close = sum(done.get(p, 0) - final.get(p, 0) for p in range(s.partitions))
    rate = 400.0
    return Outcome(
        f"README consumer runs {seconds:.0f}s (commit interval {interval_ms / 1000:g}s)",
        f"committed offsets trail processing by at most {max(trail)} messages "
        f"(≤ {rate * interval_ms / 1000:.0f} per interval at {rate:.0f}/s); {after_close} after close",
        produced=len(load.delivered),
        processed=len({(p, o) for _, p, o, _ in s.processed()}),
        lost=len(load.delivered - {(p, o) for _, p, o, _ in s.processed()}),
        seconds=time.monotonic() - started,
        details={"trail": trail, "after_close": after_close, "rate": rate, "interval_ms": interval_ms},
    )


def replay_after_kill9(
    broker: brokerctl.Broker, tmp: Path, interval_ms: int = 5000, run_for: float = 12.0
) -> Outcome:
    """``kill -9`` a README consumer under load, restart it: what it processes twice, against
    what it processed in the last commit interval before the kill."""
    s = Setup(broker, tmp, 4)
    s.publish(s.spread(["w0"]))
    started = time.monotonic()
    procs: list[subprocess.Popen] = []
    try:
        with Load(s, rate=400) as load:
            procs.append(s.worker("w0", commit_interval_ms=interval_ms, work_ms=1))
            wait_until(lambda: len(s.processed()) > 100, timeout=60)
            time.sleep(run_for)
            procs[0].send_signal(signal.SIGKILL)
            procs[0].wait(10)
            killed_at = time.time()
            before = s.processed()
            last_interval = sum(1 for *_, t in before if t > killed_at - interval_ms / 1000)
            procs.append(s.worker("w0", commit_interval_ms=interval_ms, work_ms=1))
            time.sleep(3)
        drained(s, load)
    finally:
        stop_all(procs)
    t = tally(s, load)
    return Outcome(
        f"kill -9 a consumer after {len(before):,} messages, restart it",
        f"{t['twice']:,} processed again (commit interval {interval_ms / 1000:g}s: "
        f"{last_interval:,} processed in the interval before the kill)",
        **counts(t),
        seconds=time.monotonic() - started,
        details={"twice": t["twice"], "last_interval": last_interval, "before": len(before), **t},
    )


# -- 2. handover -------------------------------------------------------------------------------


def switches_under_load(
    broker: brokerctl.Broker, tmp: Path, switches: int = 20, partitions: int = 12, every: float = 1.0
) -> Outcome:
    """Three README consumers under load while ``switches`` plan versions move every partition."""
    s = Setup(broker, tmp, partitions)
    ids = ["w0", "w1", "w2"]
    s.publish(s.spread(ids))
    started = time.monotonic()
    procs = [s.worker(i, work_ms=1) for i in ids]
    try:
        with Load(s, rate=600) as load:
            wait_until(lambda: len(s.processed()) > 300, timeout=60)
            for k in range(1, switches + 1):
                s.publish(s.spread(ids, shift=k))
                time.sleep(every)
        drained(s, load)
    finally:
        stop_all(procs)
    t = tally(s, load)
    by_two = sum(
        1
        for key, n in t["seen"].items()
        if n > 1 and len({i for i, p, o, _ in t["rows"] if (p, o) == key}) > 1
    )
    return Outcome(
        f"{switches} plan switches under load, {partitions} partitions, 3 live consumers",
        f"{t['twice']:,} processed twice ({by_two:,} by two instances), {t['lost']:,} lost",
        **counts(t),
        published=switches,
        seconds=time.monotonic() - started,
        details={**t, "by_two": by_two},
    )


# -- 3. liveness and failover ------------------------------------------------------------------


def _watch(s: Setup, db: str, session_timeout: float) -> subprocess.Popen:
    argv = [
        str(BIN / "lagassign"),
        "watch",
        *config_flags(s.broker),
        "--groups",
        f"s{s.tag}-.*",
        "--session-timeout",
        f"{session_timeout:g}",
        "--plan-topic",
        s.plans,
        "--status-topic",
        s.status,
        "--db",
        db,
        "--base-dir",
        str(s.tmp / "runs"),
    ]
    with open(s.tmp / "watch.log", "w") as log:
        return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log)


def failover_after_kill9(
    broker: brokerctl.Broker, tmp: Path, session_timeout: float = 30.0, db: str | None = None
) -> Outcome:
    """Three README consumers and ``lagassign watch``; ``kill -9`` one: seconds until a plan
    without it is on the topic, and whether its partitions are consumed again."""
    s = Setup(broker, tmp, 6)
    ids = ["w0", "w1", "w2"]
    s.publish(s.spread(ids))
    db = db or f"sqlite:///{s.tmp / 'audit.db'}"
    timeout_ms = int(session_timeout * 1000)
    procs = {i: s.worker(i, session_timeout_ms=timeout_ms) for i in ids}
    watch = _watch(s, db, session_timeout)
    try:
        with Load(s, rate=300) as load:
            wait_until(lambda: {i for i, *_ in s.processed()} == set(ids), timeout=60)
            wait_until(lambda: "watching" in (s.tmp / "watch.log").read_text(), timeout=60)
            procs["w1"].send_signal(signal.SIGKILL)
            killed = time.monotonic()
            plan = wait_until(
                lambda: (p := s.newest()) is not None and p.version > 1 and p, timeout=session_timeout * 3
            )
            seconds = time.monotonic() - killed
            time.sleep(2)
        drained(s, load)
    finally:
        stop_all([watch])  # first: workers closing would look like a membership change
        stop_all(list(procs.values()))
    t = tally(s, load)
    audit = plans_of(db)
    return Outcome(
        f"kill -9 one of 3 consumers, lagassign watch (session timeout {session_timeout:g}s)",
        f"plan v{plan.version} without w1 after {seconds:.1f}s; its partitions consumed again",
        **counts(t),
        published=plan.version - 1,
        audit_records=len(audit),
        seconds=seconds,
        details={
            "plan": plan,
            "seconds": seconds,
            "audit": audit,
            "watch_log": (s.tmp / "watch.log").read_text(),
            **t,
        },
    )


def newcomer_gets_a_share(broker: brokerctl.Broker, tmp: Path, session_timeout: float = 5.0) -> Outcome:
    """Two README consumers and ``lagassign watch``; a third one starts: how soon it consumes."""
    s = Setup(broker, tmp, 6)
    s.publish(s.spread(["w0", "w1"]))
    db = f"sqlite:///{s.tmp / 'audit.db'}"
    procs = [s.worker(i, session_timeout_ms=int(session_timeout * 1000)) for i in ("w0", "w1")]
    watch = _watch(s, db, session_timeout)
    try:
        with Load(s, rate=300) as load:
            wait_until(lambda: "watching" in (s.tmp / "watch.log").read_text(), timeout=60)
            wait_until(lambda: {i for i, *_ in s.processed()} == {"w0", "w1"}, timeout=60)
            started = time.monotonic()
            procs.append(s.worker("w2", session_timeout_ms=int(session_timeout * 1000)))
            wait_until(lambda: "w2" in {i for i, *_ in s.processed()}, timeout=60)
            seconds = time.monotonic() - started
        drained(s, load)
    finally:
        stop_all([watch])  # first: workers closing would look like a membership change
        stop_all(procs)
    t = tally(s, load)
    plan = s.newest()
    return Outcome(
        "a third consumer starts next to two, lagassign watch",
        f"plan v{plan.version} gives it {len(plan.members.get('w2', []))} partitions; "
        f"consuming after {seconds:.1f}s",
        **counts(t),
        published=plan.version - 1,
        seconds=seconds,
        details={"plan": plan, **t},
    )


# -- 4. the audit trail --------------------------------------------------------------------------


def racing_planners(broker: brokerctl.Broker, tmp: Path, db: str, planners: int = 10) -> Outcome:
    """``planners`` × ``lagassign plan --apply`` at the same moment on the same skewed group, one
    audit store: the ledger against the topic, and how many new versions."""
    from faultkit import demo, newest
    from lagassign.store import AuditStore

    prefix, groups_file = demo(broker, tmp, "race")
    group = f"{prefix}orders-enricher"
    before = newest(broker, [group])[group][0]
    argv = [
        str(BIN / "lagassign"),
        "plan",
        *declared_plan_flags(broker, groups_file),
        "--db",
        db,
        "--base-dir",
        str(tmp / "runs"),
        "--json",
    ]
    started = time.monotonic()
    procs = [
        subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(planners)
    ]
    results = [(p.wait(300), p.stdout.read(), p.stderr.read()) for p in procs]
    seconds = time.monotonic() - started
    after = newest(broker, [group])[group][0]
    with AuditStore(db) as store:
        ids = [json.loads(out)["plan_id"] for code, out, _ in results if code == 0]
        pubs = [
            p
            for i in ids
            for g in store.get_plan(i)["groups"]
            if g["group"] == group
            for p in g["publications"]
        ]
        outcomes = [
            g["decision"]["outcome"] for i in ids for g in store.get_plan(i)["groups"] if g["group"] == group
        ]
    published = sorted(p["version"] for p in pubs if p["state"] == "published")
    kinds = collections.Counter((o or "none").split(":")[0].split(" ")[0] for o in outcomes)
    return Outcome(
        f"{planners} lagassign plan --apply at the same moment",
        f"topic v{before} → v{after}; ledger published {published}; the others recorded why not: "
        + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()) if k != "published"),
        published=len(published),
        audit_records=len(ids),
        seconds=seconds,
        details={
            "before": before,
            "after": after,
            "published": published,
            "pubs": pubs,
            "outcomes": outcomes,
            "results": results,
        },
    )


def plan_too_large(broker: brokerctl.Broker, tmp: Path, db: str) -> Outcome:
    """``lagassign publish`` of a 50,000-partition plan (compressed, it fits), then of a plan that
    does not fit even compressed."""
    from lagassign.store import AuditStore

    tmp.mkdir(parents=True, exist_ok=True)
    group = f"big{uuid.uuid4().hex[:6]}"
    topic = f"big{uuid.uuid4().hex[:6]}-plans"
    broker.create_topic(topic, 1, {"cleanup.policy": "compact"})
    members = {
        f"instance-{i:03d}": [[f"orders.events.v2.region-{j % 40:02d}", i * 500 + j] for j in range(500)]
        for i in range(100)
    }
    big = tmp / "big.json"
    big.write_text(json.dumps({"group": group, "strategy": "lag-optimal", "assignment": members}))
    flags = [*config_flags(broker), "--topic", topic, "--db", db]
    started = time.monotonic()
    fits = run_cli("publish", str(big), *flags)
    noise = {f"i{i}": [[uuid.uuid4().hex * 3, j] for j in range(2000)] for i in range(40)}
    huge = tmp / "huge.json"
    huge.write_text(json.dumps({"group": group, "strategy": "lag-optimal", "assignment": noise}))
    refused = run_cli("publish", str(huge), *flags)
    seconds = time.monotonic() - started
    with AuditStore(db) as store:
        states = [
            (p["version"], p["state"])
            for p in store.list_plans(group=group, limit=None)
            for g in store.get_plan(p["id"])["groups"]
            for p in g["publications"]
        ]
    return Outcome(
        "publish a 50,000-partition plan, then one too large even compressed",
        f"{big.stat().st_size / 1e6:.2f} MB plan published (exit {fits.returncode}); "
        f"{huge.stat().st_size / 1e6:.1f} MB: exit {refused.returncode}: {refused.stderr.strip()[:150]}",
        published=1 if fits.returncode == 0 else 0,
        seconds=seconds,
        details={
            "fits": fits,
            "refused": refused,
            "states": states,
            "size": big.stat().st_size,
            "huge": huge.stat().st_size,
        },
    )


def auth_failures(broker: brokerctl.Broker, tmp: Path) -> Outcome:
    """``lagassign snapshot`` with a wrong SCRAM password and with TLS against a plaintext port."""
    tmp.mkdir(parents=True, exist_ok=True)
    cases = {
        "SCRAM": [
            "--config",
            "security.protocol=SASL_PLAINTEXT",
            "--config",
            "sasl.mechanism=SCRAM-SHA-256",
            "--config",
            "sasl.username=planner",
            "--config",
            "sasl.password=not-the-password",
        ],
        "TLS": ["--config", "security.protocol=SSL"],
    }
    found = {}
    for name, flags in cases.items():
        started = time.monotonic()
        run = run_cli("snapshot", "--bootstrap-server", broker.bootstrap, *flags, "--out", str(tmp / name))
        found[name] = (run.returncode, run.stderr.strip(), time.monotonic() - started)
    return Outcome(
        "wrong SCRAM password; TLS against a plaintext listener",
        "; ".join(
            f"{n}: exit {c} after {t:.1f}s: {e.removeprefix('lagassign: error: ')[:90]}"
            for n, (c, e, t) in found.items()
        ),
        seconds=max(t for *_, t in found.values()),
        details={"found": found},
    )


def env_without(*names: str) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in names}


# -- 5. Airflow: the triggerer fires the failover DAG -------------------------------------------


def airflow_failover_after_kill9(
    broker: brokerctl.Broker, tmp: Path, session_timeout: float = 30.0
) -> Outcome:
    """``airflow standalone`` (scheduler, triggerer, dag-processor, api-server) with the failover DAG
    unpaused; three README consumers; ``kill -9`` one: seconds until the DAG run published a plan
    without it."""
    import urllib.request

    from faultkit import free_port
    from kafkakit import airflow_env

    s = Setup(broker, tmp, 6)
    ids = ["w0", "w1", "w2"]
    s.publish(s.spread(ids))
    home = s.tmp / "airflow"
    home.mkdir()
    port = free_port()
    env = {
        **airflow_env(home, broker),
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
        "LAGASSIGN_FAILOVER_GROUPS": f"s{s.tag}-.*",
        "LAGASSIGN_SESSION_TIMEOUT": f"{session_timeout:g}",
        "LAGASSIGN_PLAN_TOPIC": s.plans,
        "LAGASSIGN_STATUS_TOPIC": s.status,
    }
    subprocess.run(
        [str(BIN / "airflow"), "db", "migrate"], env=env, check=True, capture_output=True, timeout=300
    )
    log_path = home / "standalone.log"
    with open(log_path, "w") as log:
        airflow = subprocess.Popen(
            [str(BIN / "airflow"), "standalone"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    procs: dict[str, subprocess.Popen] = {}
    try:

        def healthy() -> bool:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/monitor/health", timeout=2)
                return True
            except OSError:
                return False

        wait_until(healthy, timeout=180, every=1)
        unpause = [str(BIN / "airflow"), "dags", "unpause", "lagassign_failover"]
        wait_until(
            lambda: subprocess.run(unpause, env=env, capture_output=True).returncode == 0,
            timeout=120,
            every=2,
        )
        # The trigger runs once the triggerer has picked up the asset watcher.
        wait_until(lambda: "watching 1 groups" in log_path.read_text(errors="replace"), timeout=180, every=1)
        # The consumers start only now, and at a lower priority: on a broker that answers an
        # empty fetch at once (noida) each idle consumer polls in a loop that takes a third of
        # a core, and on two cores three of them starved Airflow's start and its DAG run.
        # Until they announce, the group has no status record and so no membership change;
        # they announce as the plan's members, which is no change either.
        procs.update({i: s.worker(i, session_timeout_ms=int(session_timeout * 1000), nice=10) for i in ids})
        with Load(s, rate=300) as load:
            wait_until(lambda: {i for i, *_ in s.processed()} == set(ids), timeout=120)
            procs["w1"].send_signal(signal.SIGKILL)
            killed = time.monotonic()
            plan = wait_until(
                lambda: (p := s.newest()) is not None and p.version > 1 and p, timeout=session_timeout + 120
            )
            seconds = time.monotonic() - killed
            time.sleep(2)
        drained(s, load)
    finally:
        stop_all(list(procs.values()))
        end_group(airflow)  # standalone, its scheduler's LocalExecutor workers, triggerer, ...
    t = tally(s, load)
    audit = plans_of(env["LAGASSIGN_DB_URL"])
    return Outcome(
        f"kill -9 one of 3 consumers, Airflow triggerer + lagassign_failover "
        f"(session timeout {session_timeout:g}s)",
        f"plan v{plan.version} without w1 after {seconds:.1f}s, published by the DAG run",
        **counts(t),
        published=plan.version - 1,
        audit_records=len(audit),
        seconds=seconds,
        details={"plan": plan, "audit": audit, "log": log_path.read_text(errors="replace")[-5000:], **t},
    )
