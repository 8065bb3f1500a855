#!/usr/bin/env python3
"""Record a group's offset history from a real broker, as the health job observes it, into a
JSON file that ``tests/core/test_health.py`` replays through the rules.

Scenario (``consumer-pauses-then-stops``): a classic consumer group keeps up with a steady
inflow, then pauses (stays a member, stops consuming) for longer than the window, resumes and
catches up, then closes and stays away for longer than the window. Each observation is the
health job's (``pipeline.health``: observe, judge against the stored window, record); the
status it gave is recorded with it.

Usage: record.py --bootstrap 127.0.0.1:19392 [--window 10] [--every 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "plugins"))


def main() -> int:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    from lagassign.pipeline.health import record
    from lagassign.pipeline.overview import HealthSettings, build_overview, observe
    from lagassign.store import AuditStore

    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--window", type=float, default=10.0)
    ap.add_argument("--every", type=float, default=2.0)
    ap.add_argument("--out", default=str(Path(__file__).with_name("consumer-pauses-then-stops.json")))
    args = ap.parse_args()
    tag = f"rec{uuid.uuid4().hex[:6]}"
    topic, group = f"{tag}-events", f"{tag}-billing"
    conf = {"bootstrap.servers": args.bootstrap}
    admin = AdminClient(conf)
    for f in admin.create_topics([NewTopic(topic, 2, 1)]).values():
        f.result(30)
    stop = threading.Event()

    def produce() -> None:
        p = Producer({**conf, "linger.ms": 5})
        i = 0
        while not stop.wait(0.05):
            p.produce(topic, value=b"x", partition=i % 2)
            p.poll(0)
            i += 1
        p.flush(10)

    consumer = Consumer(
        {**conf, "group.id": group, "auto.offset.reset": "earliest", "auto.commit.interval.ms": 500}
    )
    consumer.subscribe([topic])
    phase = {"name": "keeps up", "consume": True}

    def consume() -> None:
        while not stop.is_set() and phase["name"] != "closed":
            if phase["consume"]:
                consumer.poll(0.1)
            else:
                time.sleep(0.1)  # a member that stopped consuming (librdkafka still heartbeats)
        consumer.close()

    threads = [threading.Thread(target=produce), threading.Thread(target=consume)]
    for t in threads:
        t.start()
    settings = HealthSettings(window_s=args.window, groups=f"{tag}-.*")
    observations: list[dict[str, Any]] = []
    plan = [
        ("keeps up", True, 3 * args.window),
        ("paused", False, 2.5 * args.window),
        ("resumed", True, 2 * args.window),
        ("closed", False, 2.5 * args.window),
    ]
    try:
        with tempfile.TemporaryDirectory() as tmp, AuditStore(f"sqlite:///{tmp}/audit.db") as store:
            t0 = time.monotonic()
            for name, consuming, seconds in plan:
                phase.update(name=name, consume=consuming)
                until = time.monotonic() + seconds
                while time.monotonic() < until:
                    started = time.monotonic()
                    view = observe(conf, settings, 15)
                    ov = build_overview(view, store, settings, last_plans=False)
                    record(store, view, ov, settings)
                    row = next(r for r in ov.groups if r["group"] == group)
                    observations.append(
                        {
                            "t": round(view.observed_at.timestamp() - 1.8e9, 3),
                            "phase": name,
                            "state": row["state"],
                            "members": [m["id"] for m in row["members"]],
                            "owners": {
                                f"{p['topic']}-{p['partition']}": p["owner"]
                                for p in row["partitions"]
                                if p["owner"]
                            },
                            "partitions": [
                                {k: r[k] for k in ("topic", "partition", "end", "committed", "lag")}
                                for r in view.snapshot.partitions
                                if r["group"] == group
                            ],
                            "status": row["status"],
                            "reason": row["reason"],
                        }
                    )
                    print(
                        f"{time.monotonic() - t0:6.1f}s {name:9} {row['status']:5} {row['reason']}",
                        flush=True,
                    )
                    time.sleep(max(0.0, args.every - (time.monotonic() - started)))
    finally:
        phase["name"] = "closed"
        stop.set()
        for t in threads:
            t.join(30)
    data = {
        "scenario": "consumer-pauses-then-stops",
        "recorded_with": "tests/data/health/record.py against Apache Kafka 4 (scripts/broker, kafka4)",
        "group": "billing",
        "window_s": args.window,
        "observations": [
            {
                **o,
                "partitions": [{**p, "topic": "events"} for p in o["partitions"]],
                "owners": {k.replace(topic, "events"): "member-1" for k in o["owners"]},
                "members": ["member-1"] if o["members"] else [],
                "reason": _anonymous(o["reason"], topic, o["members"]),
            }
            for o in observations
        ],
        "expected": [o["status"] for o in observations],
    }
    Path(args.out).write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {len(observations)} observations to {args.out}")
    return 0


def _anonymous(text: str, topic: str, members: list[str]) -> str:
    """The reason with the scenario's generated names replaced by the file's."""
    text = text.replace(topic, "events")
    for m in members:
        text = text.replace(m, "member-1")
    return text


if __name__ == "__main__":
    sys.exit(main())
