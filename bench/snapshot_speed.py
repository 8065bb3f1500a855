"""Benchmark: snapshot of 1,000 groups x 50 partitions against the local broker.

Builds real state (20 topics of 50 partitions with records; for each size of the series
250, 500 and 1,000 its own groups with a committed offset on every partition of their topic),
then times ``take_snapshot`` + writing the tables for each size and prints seconds and
AdminClient calls. Each size reads groups no earlier run has touched (the broker answers
faster for groups it has just served, which would flatter the bigger sizes). Goal: 1,000
groups under 30 s, cost growing linearly with groups.

    .venv/bin/python bench/snapshot_speed.py [--groups 1000] [--partitions 50]

    .venv/bin/python bench/snapshot_speed.py --sizes 1000,5000,10000 --brokers kafka4,noida

Uses the tests' broker of each kind of ``--brokers`` in turn (default LAGASSIGN_BROKER, else
kafka4, Apache Kafka 4; instance ``test``, never the demo's), started fresh and stopped
afterwards unless it was running, or a running one given by LAGASSIGN_BROKER_BOOTSTRAP; with
``--private``, a fresh broker of the bench's own (so that no test run shares it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import uuid
from concurrent.futures import Future, wait
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

import brokerctl  # noqa: E402
from lagassign.kafka.admin import AdminHook  # noqa: E402
from lagassign.kafka.snapshot import take_snapshot  # noqa: E402

TOPICS = 20


def build(broker: brokerctl.Broker, prefix: str, sizes: list[int], partitions: int) -> None:
    """Topics with records and groups with committed offsets, made through the real APIs."""
    from confluent_kafka import ConsumerGroupTopicPartitions, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient

    topics = [f"{prefix}-topic{t:02d}" for t in range(TOPICS)]
    for name in topics:
        broker.create_topic(name, partitions)
    producer = Producer(broker.config({"linger.ms": 20}))
    for t, name in enumerate(topics):
        for p in range(partitions):
            for i in range(1 + (t * 7 + p * 3) % 10):  # 1..10 records: uneven end offsets
                producer.produce(name, value=b"%d" % i, partition=p)
        producer.poll(0)
    assert producer.flush(60) == 0
    admin = AdminClient(broker.config())
    pending: list[Future] = []
    t0 = time.perf_counter()
    for size, g in ((n, g) for n in sizes for g in range(n)):
        if g == 0:
            print(f"  {time.perf_counter() - t0:7.2f}s  committing offsets of {size} groups", flush=True)
        group = f"{prefix}-s{size}-{g:06d}"
        topic = topics[g % TOPICS]
        offsets = [TopicPartition(topic, p, (g + p) % 2) for p in range(partitions)]
        pending += admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, offsets)]).values()
        if len(pending) >= 100:
            wait(pending)
            for f in pending:
                f.result()
            pending = []
    wait(pending)
    for f in pending:
        f.result()


def measure(
    broker: brokerctl.Broker, prefix: str, size: int, concurrency: int, verbose: bool = False
) -> tuple[int, int, float, dict]:
    """(groups, partition rows, seconds, admin calls) of one snapshot written to a temp folder;
    ``verbose`` prints the snapshot's log lines with the seconds since it started."""
    regex = f"{prefix}-s{size}-.*"
    started = time.perf_counter()

    def log(line: str) -> None:
        print(f"  {time.perf_counter() - started:7.2f}s  {line}", flush=True)

    hook = AdminHook(broker.config(), timeout=30, concurrency=concurrency)
    snap = take_snapshot(hook, groups_regex=regex, log=log if verbose else None)
    with tempfile.TemporaryDirectory() as out:
        snap.write(out)
    seconds = time.perf_counter() - started
    assert snap.manifest["counts"]["failed"] == 0, snap.manifest["failed"][:3]
    return len(snap.groups), len(snap.partitions), seconds, dict(hook.calls)


def run(kind: str, args: argparse.Namespace, sizes: list[int]) -> list[tuple[int, float, int]]:
    """The series on one broker kind: (groups, seconds, calls) per size."""
    os.environ["LAGASSIGN_BROKER"] = kind
    given = os.environ.get("LAGASSIGN_BROKER_BOOTSTRAP")
    started_here = False
    private = Path(tempfile.mkdtemp(prefix=f"snapshot-speed-{kind}-")) if args.private else None
    if private is not None:
        broker = brokerctl.start_private(kind, private)
    elif given:
        broker = brokerctl.Broker(kind, given, brokerctl.describe(kind).client_config)
    else:
        started_here = not brokerctl.running(kind)
        broker = brokerctl.start(kind, fresh=started_here)
    try:
        prefix = f"bench{uuid.uuid4().hex[:6]}"
        t0 = time.perf_counter()
        build(broker, prefix, sizes, args.partitions)
        print(
            f"setup: {TOPICS} topics x {args.partitions} partitions, {sum(sizes)} groups with commits "
            f"in {time.perf_counter() - t0:.1f}s ({broker.kind} at {broker.bootstrap})",
            flush=True,
        )
        print(f"{'groups':>7} {'rows':>7} {'seconds':>8} {'calls':>6} {'s/1k groups':>12}  calls by API")
        results = []
        for size in sizes:
            groups, rows, seconds, calls = measure(broker, prefix, size, args.concurrency, args.verbose)
            results.append((groups, seconds, sum(calls.values())))
            by_api = ", ".join(f"{k}={v}" for k, v in sorted(calls.items()))
            print(
                f"{groups:>7} {rows:>7} {seconds:>8.2f} {sum(calls.values()):>6} "
                f"{1000 * seconds / groups:>12.2f}  {by_api}",
                flush=True,
            )
    finally:
        if private is not None:
            brokerctl.stop_private(private)
            shutil.rmtree(private, ignore_errors=True)
        if started_here:
            brokerctl.stop(kind)
    goal = args.goal if args.goal is not None else (60.0 if max(sizes) > 1000 else 30.0)
    (g_small, s_small, c_small), (g_big, s_big, c_big) = results[0], results[-1]
    print(
        f"{kind}: scaling {g_small}->{g_big} groups (x{g_big / g_small:.0f}): time x{s_big / s_small:.1f}, "
        f"calls x{c_big / c_small:.1f}; goal {g_big} groups < {goal:.0f} s: "
        f"{'met' if s_big < goal else 'MISSED'} ({s_big:.1f}s)",
        flush=True,
    )
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=1000, help="largest size of the series")
    parser.add_argument("--partitions", type=int, default=50)
    parser.add_argument("--concurrency", type=int, default=64, help="AdminClient requests in flight")
    parser.add_argument(
        "--sizes", default=None, help="sizes, comma-separated (default groups/4,groups/2,groups)"
    )
    parser.add_argument(
        "--brokers",
        default=None,
        help="broker kinds, comma-separated, one after the other (default LAGASSIGN_BROKER, else kafka4)",
    )
    parser.add_argument(
        "--private",
        action="store_true",
        help="a fresh broker of each kind of the bench's own (free ports, a temporary folder)",
    )
    parser.add_argument("--verbose", action="store_true", help="print each snapshot's phases as they pass")
    parser.add_argument("--goal", type=float, default=None, help="seconds the largest size must take at most")
    args = parser.parse_args()

    os.environ.setdefault("LAGASSIGN_BROKER_INSTANCE", "test")  # not the demo's broker
    kinds = args.brokers.split(",") if args.brokers else [brokerctl.kind_from_env(default="kafka4")]
    for kind in kinds:
        if kind not in brokerctl.KINDS:
            parser.error(f"--brokers: {kind!r} is not one of {', '.join(brokerctl.KINDS)}")
    sizes = (
        [int(n) for n in args.sizes.split(",")]
        if args.sizes
        else [args.groups // 4, args.groups // 2, args.groups]
    )
    table = {kind: run(kind, args, sizes) for kind in kinds}
    if len(kinds) > 1:
        print("\n" + f"{'groups':>7} " + " ".join(f"{k + ' s':>10} {k + ' calls':>12}" for k in kinds))
        for i, size in enumerate(sizes):
            cells = " ".join(f"{table[k][i][1]:>10.2f} {table[k][i][2]:>12}" for k in kinds)
            print(f"{size:>7} {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
