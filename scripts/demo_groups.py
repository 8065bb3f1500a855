#!/usr/bin/env python3
"""Build the demo's consumer groups on a running broker: real records, real commits.

Two groups whose consumers run in manual assign() mode (declared in a groups file, as
lagassign expects for them), each with a current plan published as version 1:

* ``orders-enricher`` (instances w0, w1, w2 on topics ``orders`` and ``payments``): a static
  split by partition number, while a slow downstream left a few partitions far behind: w0
  drowns in lag while w1 and w2 idle. lagassign should plan a rebalance.
* ``audit-sink`` (instances a0, a1 on ``audit``): evenly behind; the gate should stop it.

Usage: scripts/demo_groups.py BOOTSTRAP OUT_DIR   (writes OUT_DIR/groups.yaml)
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "plugins"))

from brokerctl import describe, kind_from_env  # noqa: E402

# topic -> records produced per partition
TOPICS = {
    "orders": [1200, 1100, 900, 1000, 1050, 950],
    "payments": [800, 700, 750, 820],
    "audit": [500, 500, 500, 500],
}
# group -> (instances -> partitions in the current plan, records still unprocessed per partition)
GROUPS = {
    "orders-enricher": (
        {
            "w0": [("orders", 0), ("orders", 1), ("payments", 0), ("payments", 1)],
            "w1": [("orders", 2), ("orders", 3), ("payments", 2)],
            "w2": [("orders", 4), ("orders", 5), ("payments", 3)],
        },
        {
            ("orders", 0): 1100,
            ("orders", 1): 950,
            ("payments", 0): 700,
            ("payments", 1): 420,
            ("orders", 2): 40,
            ("orders", 3): 25,
            ("payments", 2): 30,
            ("orders", 4): 35,
            ("orders", 5): 20,
            ("payments", 3): 15,
        },
    ),
    "audit-sink": (
        {"a0": [("audit", 0), ("audit", 1)], "a1": [("audit", 2), ("audit", 3)]},
        {("audit", 0): 100, ("audit", 1): 95, ("audit", 2): 105, ("audit", 3): 98},
    ),
}
TOPICS_OF = {"orders-enricher": ["orders", "payments"], "audit-sink": ["audit"]}


def build(config: dict, create_topic, out: Path, prefix: str = "") -> Path:
    """Create the topics, records, commits and v1 plans; write OUT/groups.yaml and return it.

    ``prefix`` namespaces topics and groups (tests use a fresh one each run);
    ``create_topic(name, partitions)`` is the broker's own way to make a topic.
    """
    from confluent_kafka import Consumer, Producer, TopicPartition
    from lagassign.kafka.plans import PlanStore

    def t(name: str) -> str:
        return prefix + name

    for topic, counts in TOPICS.items():
        create_topic(t(topic), len(counts))
    producer = Producer({**config, "linger.ms": 5})
    for topic, counts in TOPICS.items():
        for p, n in enumerate(counts):
            for i in range(n):
                producer.produce(t(topic), value=f"{topic}/{p}/{i}".encode(), partition=p)
            producer.poll(0)
    if producer.flush(30):
        raise SystemExit("demo: records were not delivered")

    with PlanStore(config) as plans:
        for group, (members, behind) in GROUPS.items():
            consumer = Consumer({**config, "group.id": t(group), "enable.auto.commit": False})
            offsets = [TopicPartition(t(tp), p, TOPICS[tp][p] - behind[(tp, p)]) for (tp, p) in behind]
            consumer.commit(offsets=offsets, asynchronous=False)
            consumer.close()
            split = {i: [[t(tp), p] for tp, p in tps] for i, tps in members.items()}
            plan, _ = plans.publish(t(group), "static", split)
            print(
                f"demo: group {t(group)}: {sum(behind.values())} records behind, "
                f"plan v{plan.version} in force"
            )

    out.mkdir(parents=True, exist_ok=True)
    lines = ["groups:"]
    for group, (members, _) in GROUPS.items():
        lines += [
            f"  - group: {t(group)}",
            f"    topics: [{', '.join(t(x) for x in TOPICS_OF[group])}]",
            f"    instances: [{', '.join(members)}]",
            "    auto_offset_reset: earliest",
        ]
    path = out / "groups.yaml"
    path.write_text("\n".join(lines) + "\n")
    print(f"demo: groups file {path}")
    return path


def main(bootstrap: str, out: Path) -> None:
    broker = describe(kind_from_env())
    build(broker.config({"bootstrap.servers": bootstrap}), broker.create_topic, out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    main(sys.argv[1], Path(sys.argv[2]))
