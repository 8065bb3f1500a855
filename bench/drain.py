"""Benchmark: planning in time. drain-optimal against its bound, lag-optimal and lag-aware.

Seeded groups with inflow on some partitions and unequal consumers (capacities of 1x, 2x and
4x a base rate, total capacity 1.3 to 3 times the total inflow), identical subscriptions
(``--mixed``: each member a random subset of the topics). Printed per size: drain-optimal's
largest catch-up time over the lower bound (median, p95, max; goal median <= 1.01, p95 <=
1.05; groups where no plan under the count rules catches up are counted as "never", not
ratioed; where drain-optimal's exact search proved its plan, "proved", the plan's own time is
the bound; with the exact polish its certified bound counts too), how many times longer
lag-optimal's and lag-aware's plans take to catch up (median, and how many of them never do),
and ms per group. Then the identity check: on the same groups with
equal capacities and no inflow, drain-optimal's plan equals lag-optimal's in every group.
Printed twice: drain-optimal as it is by default, then with ``exact_budget`` (the HiGHS
polish of ``drain_milp``, when highspy is installed; the identity check only in the first:
with a budget drain-optimal hands those groups to lag-optimal with the same budget, whose own
polish keeps what it found when time runs out, so two runs of lag-optimal itself can differ).

    .venv/bin/python bench/drain.py [--seed 15] [--groups 40] [--exact-budget 2]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time

from lagassign.core.case import parse_case
from lagassign.core.catchup import member_times
from lagassign.core.exact.drain_bounds import drain_lower_bound
from lagassign.core.exact.lag_milp import solver_available
from lagassign.core.strategies import get_strategy

SIZES = [(4, 12), (8, 40), (12, 100), (20, 200)]


def make_case(rnd: random.Random, members: int, partitions: int, mixed: bool, timed: bool) -> dict:
    """A seeded group. Timed: 40% of partitions take inflow; capacities 1x, 2x or 4x a base so
    that all of them together process 1.5 to 3 times the inflow, and no partition's inflow is
    above half the slowest member's capacity (one consumer can always read any partition)."""
    topics = [f"t{i}" for i in range(max(1, partitions // 10))]
    weights = [rnd.choice([1, 2, 4]) if timed else 1 for _ in range(members)]
    raw = [rnd.lognormvariate(2, 1) if timed and rnd.random() < 0.4 else 0.0 for _ in range(partitions)]
    headroom = rnd.uniform(1.5, 3.0)
    base = max(1.0, sum(raw) * headroom / sum(weights))
    parts = []
    for i, rate in enumerate(raw):
        lag = int(rnd.lognormvariate(8, 1.5))
        topic, number = topics[i % len(topics)], i // len(topics)
        parts.append({"topic": topic, "partition": number, "lag": lag, "rate": round(min(rate, base / 2), 3)})
    ms = []
    for m in range(members):
        subs = sorted(rnd.sample(topics, rnd.randint(1, len(topics)))) if mixed else topics
        ms.append({"id": f"c{m:02d}", "topics": subs, "capacity": round(base * weights[m], 3)})
    if mixed:  # every topic needs a reader
        for t in topics:
            if not any(t in m["topics"] for m in ms):
                rnd.choice(ms)["topics"].append(t)
    return {"group": "bench", "members": ms, "partitions": parts}


def worst(group, name: str) -> float:
    return max(member_times(group, get_strategy(name).assign(group).members).values())


def q(values: list[float], frac: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(frac * len(ordered)) - 1)]


def table(suite: list[tuple[str, list[tuple[dict, dict]]]], mixed: bool, budget: float) -> tuple[int, int]:
    """One table over the seeded groups, drain-optimal with ``exact_budget`` = ``budget``;
    returns (identical, compared) of the equal-capacity check."""
    head = (
        "size",
        "never",
        "proved",
        "drain/bound p50",
        "p95",
        "max",
        "lag-opt/drain p50",
        "never",
        "lag-aware/drain p50",
        "never",
        "ms p50",
        "max",
    )
    print("  ".join(f"{h:>{max(len(h), 8)}}" for h in head))
    identical, compared = 0, 0
    for size, cases in suite:
        ratios, vs_opt, vs_aware, ms = [], [], [], []
        never_opt = never_aware = hopeless = proved = 0
        for case, plain in cases:
            group = parse_case(case)
            t0 = time.perf_counter()
            plan = get_strategy("drain-optimal", exact_budget=budget).assign(group)
            ms.append((time.perf_counter() - t0) * 1000)
            drain = max(member_times(group, plan.members).values())
            bound = drain_lower_bound(group, drain)
            certified = getattr(plan, "catch_up_bound", None)  # the exact polish's bound
            if certified is not None:
                bound = max(bound, certified)
            if getattr(plan, "proven_catch_up", False):  # the exact search proved no plan sooner:
                bound, proved = max(bound, drain), proved + 1  # the plan's own time is the bound
            if drain == math.inf:  # no plan under the count rules catches up: not a ratio
                hopeless += 1
                continue
            ratios.append(drain / bound if bound > 0 else 1.0)
            for name, out in (("lag-optimal", vs_opt), ("lag-aware", vs_aware)):
                other = worst(parse_case(case), name)
                if other == math.inf:
                    never_opt += name == "lag-optimal"
                    never_aware += name == "lag-aware"
                else:
                    out.append(other / drain if drain > 0 else 1.0)
            if not budget:  # with a budget lag-optimal's own polish depends on timing (see main)
                a = get_strategy("drain-optimal").assign(parse_case(plain)).members
                b = get_strategy("lag-optimal").assign(parse_case(plain)).members
                identical += a == b
                compared += 1
        row = (
            size,
            str(hopeless),
            str(proved),
            f"{statistics.median(ratios):.4f}",
            f"{q(ratios, 0.95):.4f}",
            f"{max(ratios):.4f}",
            f"{statistics.median(vs_opt):.3f}" if vs_opt else "-",
            str(never_opt),
            f"{statistics.median(vs_aware):.3f}" if vs_aware else "-",
            str(never_aware),
            f"{statistics.median(ms):.1f}",
            f"{max(ms):.1f}",
        )
        print("  ".join(f"{v:>{max(len(h), 8)}}" for v, h in zip(row, head, strict=True)), flush=True)
    return identical, compared


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--groups", type=int, default=40, help="groups per size")
    ap.add_argument("--mixed", action="store_true", help="mixed subscriptions")
    ap.add_argument(
        "--exact-budget",
        type=float,
        default=2.0,
        help="seconds of drain-optimal's exact polish per group in the second table (0: skip it)",
    )
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    suite = []
    for members, partitions in SIZES:
        cases = []
        for _ in range(args.groups):
            case = make_case(rnd, members, partitions, args.mixed, timed=True)
            plain = make_case(random.Random(rnd.random()), members, partitions, args.mixed, timed=False)
            cases.append((case, plain))
        suite.append((f"{members}x{partitions}", cases))
    print(
        f"{args.groups} groups per size, seed {args.seed}, "
        f"{'mixed' if args.mixed else 'identical'} subscriptions; times are largest catch-up seconds"
    )
    budgets = [0.0]
    if args.exact_budget > 0:
        if solver_available():
            budgets.append(args.exact_budget)
        else:
            print("(no highspy: the table with drain-optimal's exact polish is skipped)")
    for budget in budgets:
        started = time.monotonic()
        print(
            f"\ndrain-optimal {'without exact polish' if not budget else f'with exact_budget={budget:g} s'}:"
        )
        identical, compared = table(suite, args.mixed, budget)
        if compared:
            print(
                "equal capacities, no inflow: drain-optimal == lag-optimal in "
                f"{identical} of {compared} groups"
            )
        else:  # drain-optimal hands such groups to lag-optimal with the same exact_budget, whose
            # polish keeps what it found when the budget runs out: two runs of it may differ
            print("equal capacities, no inflow: drain-optimal is lag-optimal with the same exact_budget")
        print(f"total {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
