"""Benchmark: planning a failover, the reaction to a dead or new instance (issue goal: one group
of 100 members x 1,000 partitions in under 50 ms).

A seeded group (lognormal lags, identical subscriptions) with a plan in force; one instance dies
(its partitions are owned by nobody) or one joins (it owns nothing). Printed: milliseconds of
``core.failover.plan_failover`` per case, best and median of ``--runs``, and the plan chosen.

    .venv/bin/python bench/failover_speed.py [--members 100] [--partitions 1000] [--runs 7]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from lagassign.core.case import parse_case
from lagassign.core.failover import MembershipChange, plan_failover


def group_case(members: int, partitions: int, seed: int, died: str | None, joined: str | None) -> dict:
    rnd = random.Random(seed)
    ids = [f"w{i:03d}" for i in range(members)]
    owned: dict[str, list] = {m: [] for m in ids}
    parts = []
    for p in range(partitions):
        parts.append({"topic": "orders", "partition": p, "lag": int(rnd.lognormvariate(7, 1.5))})
        owned[ids[p % members]].append(["orders", p])
    live = [m for m in ids if m != died] + ([joined] if joined else [])
    return {
        "group": "bench",
        "members": [{"id": m, "topics": ["orders"], "owned": owned.get(m, [])} for m in live],
        "partitions": parts,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, default=100)
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    print(f"{args.members} members x {args.partitions} partitions, {args.runs} runs each (goal < 50 ms)")
    for label, died, joined in (("an instance died", "w007", None), ("an instance joined", None, "w999")):
        case = group_case(args.members, args.partitions, 7, died, joined)
        change = MembershipChange(
            "bench", 3, died={died: "silent for 31 s"} if died else {}, joined=(joined,) if joined else ()
        )
        times, chosen = [], None
        for _ in range(args.runs):
            group = parse_case(case)  # a fresh group: no results shared between runs
            started = time.perf_counter()
            planned = plan_failover(group, change)
            times.append((time.perf_counter() - started) * 1000)
            chosen = planned.chosen
        print(f"{label:20} best {min(times):6.1f} ms  median {statistics.median(times):6.1f} ms  -> {chosen}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
