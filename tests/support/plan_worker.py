#!/usr/bin/env python3
"""A consumer application written as the README shows (``PlanConsumer`` in a ``with`` block,
``poll()``, no ``commit()`` calls), run as its own process by the tests and the fault bench.

Each message it handles is appended to ``--out`` as one line ``instance version partition
offset time`` (flushed at once, so a ``kill -9`` loses nothing already handled), so that the
caller can count messages processed twice or never, and when. It stops cleanly on SIGTERM.

Usage: plan_worker.py --bootstrap H:P --group G --instance I --out FILE
       [--plan-topic T] [--status-topic T] [--session-timeout-ms N] [--work-ms N] [--config K=V ...]
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "plugins"))

from lagassign.client import PlanConsumer


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--group", required=True)
    ap.add_argument("--instance", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--topics", default="", help="comma-separated topics to announce")
    ap.add_argument("--plan-topic", default="lagassign.plans")
    ap.add_argument("--status-topic", default="lagassign.status")
    ap.add_argument("--session-timeout-ms", type=int, default=None)
    ap.add_argument("--work-ms", type=float, default=0.0, help="time spent handling each message")
    ap.add_argument("--config", action="append", default=[], help="librdkafka KEY=VALUE")
    ap.add_argument("--verbose", action="store_true", help="log lagassign's INFO lines to stderr")
    args = ap.parse_args()
    if args.verbose:
        import logging

        logging.basicConfig(level=logging.INFO, stream=sys.stderr, format=f"{args.instance} %(message)s")

    running = True

    def stop(*_: object) -> None:
        nonlocal running
        running = False

    signal.signal(signal.SIGTERM, stop)
    conf = {"bootstrap.servers": args.bootstrap, "auto.offset.reset": "earliest", "fetch.wait.max.ms": 100}
    conf.update(dict(pair.split("=", 1) for pair in args.config))
    if args.session_timeout_ms:
        conf["session.timeout.ms"] = args.session_timeout_ms
        conf["heartbeat.interval.ms"] = max(200, args.session_timeout_ms // 10)
    topics = [t for t in args.topics.split(",") if t] or None
    with (
        open(args.out, "a", buffering=1) as out,
        PlanConsumer(
            conf,
            group=args.group,
            instance_id=args.instance,
            topics=topics,
            plan_topic=args.plan_topic,
            status_topic=args.status_topic,
            plan_check_interval=0.3,
            timeout=15,
        ) as consumer,
    ):
        print("ready", flush=True)
        while running:
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            if args.work_ms:
                time.sleep(args.work_ms / 1000)
            out.write(
                f"{args.instance} {consumer.version} {msg.partition()} {msg.offset()} {time.time():.3f}\n"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
