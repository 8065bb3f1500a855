"""Quality of every strategy on a fixed, seeded suite of generated groups (issue 3's goals).

Prints, per strategy, the median and 95th percentile of max_lag / lower_bound_max_lag and of
moves, then checks lag-optimal's goals and prints the time for 100 members x 10,000
partitions. Not a test: figures for people and for the closing note.

    .venv/bin/python bench/quality.py [--groups 1000] [--seed 2026]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))

from lagassign.core.case import parse_case
from lagassign.core.errors import StrategyRefusedError
from lagassign.core.scoring import lower_bound_max_lag, meets_count_guarantee, score
from lagassign.core.strategies import get_strategy, strategy_names
from lagassign.core.synthetic import SHAPES, generate_case

SIZES = [  # (weight, members range, partitions-per-member range)
    (60, (2, 12), (1.5, 30)),
    (30, (10, 60), (2, 60)),
    (8, (50, 120), (20, 100)),
    (2, (150, 200), (60, 100)),
]


def suite(n: int, seed: int):
    rng = random.Random(seed)
    for i in range(n):
        _, member_range, per_member = rng.choices(SIZES, weights=[w for w, _, _ in SIZES])[0]
        members = rng.randint(*member_range)
        partitions = max(3, int(members * rng.uniform(*per_member)))
        partitions = min(partitions, 20_000)
        if i == 0:
            members, partitions = 2, 3
        if i == 1:
            members, partitions = 200, 20_000
        shape = SHAPES[i % len(SHAPES)]
        mixed = i % 7 == 3
        owned = ("range", "random", None)[i % 3]
        yield generate_case(rng, members, partitions, shape, mixed=mixed, owned=owned, group=f"g{i}")


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()

    names = strategy_names()
    ratios = {s: [] for s in names}
    moves = {s: [] for s in names}
    seconds = {s: 0.0 for s in names}
    refused = {s: 0 for s in names}
    worse_than_lag_aware = worse_than_lag = over_budget = budget_runs = budget_refused = 0
    opt_ratios = []
    started = time.perf_counter()
    for i, case in enumerate(suite(args.groups, args.seed)):
        group = parse_case(case)
        bound = lower_bound_max_lag(group)
        got = {}
        for name in names:
            t0 = time.perf_counter()
            try:
                assignment = get_strategy(name).assign(group)
            except StrategyRefusedError:
                refused[name] += 1
                continue
            seconds[name] += time.perf_counter() - t0
            m = score(group, assignment, bound)
            got[name] = (m, assignment)
            if name == "current" and group.owner == {}:
                continue
            ratios[name].append(m["max_lag"] / bound if bound else 1.0)
            moves[name].append(m["moves"])
        opt = got["lag-optimal"][0]["max_lag"]
        opt_ratios.append(opt / bound if bound else 1.0)
        if opt > got["lag-aware"][0]["max_lag"]:
            worse_than_lag_aware += 1
        lag_m, lag_a = got["lag"]
        if meets_count_guarantee(group, lag_a.members) and opt > lag_m["max_lag"]:
            worse_than_lag += 1
        if group.owner:
            budget = random.Random(i).randint(0, max(1, len(group.owner) // 10))
            budget_runs += 1
            try:
                a = get_strategy("lag-optimal", max_moves=budget).assign(group)
                if score(group, a, bound)["moves"] > budget:
                    over_budget += 1
            except StrategyRefusedError:
                budget_refused += 1
        if (i + 1) % 100 == 0:
            elapsed = time.perf_counter() - started
            print(f"  ... {i + 1}/{args.groups} groups, {elapsed:.0f} s", file=sys.stderr)

    print(f"suite: {args.groups} groups, seed {args.seed}; ratio = max_lag / lower_bound_max_lag")
    cols = ("ratio p50", "ratio p95", "moves p50", "moves p95")
    print(f"{'strategy':<20}" + "".join(f"{c:>11}" for c in cols) + f"{'total s':>10}{'refused':>9}")
    for name in names:
        if not ratios[name]:
            print(f"{name:<20}{'-':>11}{'-':>11}{'-':>11}{'-':>11}{seconds[name]:>10.2f}{refused[name]:>9}")
            continue
        print(
            f"{name:<20}{statistics.median(ratios[name]):>11.4f}{pct(ratios[name], 0.95):>11.4f}"
            f"{statistics.median(moves[name]):>11.0f}{pct(moves[name], 0.95):>11.0f}"
            f"{seconds[name]:>10.2f}{refused[name]:>9}"
        )
    gap50 = statistics.median(opt_ratios) - 1
    gap95 = pct(opt_ratios, 0.95) - 1
    print()
    print("lag-optimal goals:")
    print(f"  worse than lag-aware on a group:                          {worse_than_lag_aware}  (goal 0)")
    print(f"  worse than lag where lag meets the count guarantee:       {worse_than_lag}  (goal 0)")
    print(f"  median gap to the lower bound:                            {gap50:.4%}  (goal <= 1%)")
    print(f"  95th percentile gap:                                      {gap95:.4%}  (goal <= 5%)")
    runs = f"of {budget_runs} budgeted runs, {budget_refused} refused"
    print(f"  max_moves exceeded ({runs}): {over_budget}  (goal 0)")

    rng = random.Random(args.seed)
    for owned in (None, "range", "random"):
        case = generate_case(rng, 100, 10_000, "lognormal", topics=10, owned=owned, group="timing")
        group = parse_case(case)
        t0 = time.perf_counter()
        get_strategy("lag-optimal").assign(group)
        took = time.perf_counter() - t0
        print(f"  time, 100 members x 10,000 partitions (owned: {owned}): {took:.3f} s (goal <= 1 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
