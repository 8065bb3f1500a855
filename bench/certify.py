"""lag-optimal and its bounds against an exact solver (issue 17: certified plans).

Seeded groups from 4 members x 12 partitions to 20 x 200 (identical subscriptions unless
--mixed; lognormal, Zipf-like, hot-partition and zero-heavy lags). Per group it runs
``lag-optimal`` (no exact polish), the all-assignments bound ``lower_bound_max_lag``, the
count-rules bound ``balanced_lower_bound_max_lag`` and the exact model of
``lagassign.core.exact.lag_milp`` (HiGHS, --time-limit seconds per group), and prints per size:
how often the plan is proven optimal, the worst ratio of its max lag to the optimum, each
bound / optimum (median and minimum, over the groups the solver proved), and times.

The optimum is that of the count rules lag-optimal keeps: counts within one for identical
subscriptions, Kafka's balance condition for mixed ones. Needs the ``certify`` extra (highspy).
Columns: proven = groups the solver proved; plan=opt = plans equal to that optimum;
certified = plans whose max lag reaches ``balanced_lower_bound_max_lag`` (reported ``optimal``
without any solver); bal / old = the new and the old (all-assignments) bound over the optimum.

    .venv/bin/python bench/certify.py [--groups 150] [--seed 17] [--time-limit 30] [--mixed]
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
from lagassign.core.exact.lag_milp import solve, solver_available
from lagassign.core.scoring import balanced_lower_bound_max_lag, lower_bound_max_lag, score
from lagassign.core.strategies import get_strategy
from lagassign.core.synthetic import generate_case

# (members, partitions range): 4 x 12 up to 20 x 200
SIZES = ((4, (12, 20)), (6, (20, 40)), (8, (40, 70)), (10, (60, 100)), (15, (100, 150)), (20, (150, 200)))
SHAPES = ("lognormal", "zipf", "hot1", "hot2", "zero-heavy")


def make_case(rng: random.Random, members: int, partitions: int, shape: str, mixed: bool, name: str) -> dict:
    """One group: ``generate_case``'s shapes, plus zero-heavy (70-95% of partitions caught up)."""
    base = "lognormal" if shape == "zero-heavy" else shape
    owned = ("range", "random", None)[rng.randrange(3)]
    case = generate_case(rng, members, partitions, base, mixed=mixed, owned=owned, group=name)
    if shape == "zero-heavy":
        share = rng.uniform(0.7, 0.95)
        for p in case["partitions"]:
            if rng.random() < share:
                p["lag"] = 0
    return case


def suite(groups: int, seed: int, mixed: bool):
    rng = random.Random(seed)
    for i in range(groups):
        members, (lo, hi) = SIZES[(i // len(SHAPES)) % len(SIZES)]
        shape = SHAPES[i % len(SHAPES)]
        partitions = rng.randint(lo, hi)
        yield f"{members}x{lo}-{hi}", make_case(rng, members, partitions, shape, mixed, f"g{i}-{shape}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", type=int, default=150)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--time-limit", type=float, default=30.0, help="solver seconds per group")
    ap.add_argument("--mixed", action="store_true", help="mixed subscriptions (half the members a subset)")
    ap.add_argument("--verbose", action="store_true", help="one line per group")
    args = ap.parse_args()
    if not solver_available():
        print("bench/certify.py needs highspy: pip install -e '.[certify]'", file=sys.stderr)
        return 2

    rows: dict[str, list[dict]] = {}
    started = time.perf_counter()
    for i, (size, case) in enumerate(suite(args.groups, args.seed, args.mixed)):
        group = parse_case(case)
        t0 = time.perf_counter()
        plan = get_strategy("lag-optimal").assign(group)
        t_plan = time.perf_counter() - t0
        t0 = time.perf_counter()
        balanced = balanced_lower_bound_max_lag(group)
        t_bound = time.perf_counter() - t0
        metrics = score(group, plan)
        exact = solve(group, args.time_limit, start=plan.members)
        opt = exact.max_lag if exact.optimal else None
        row = {
            "group": case["group"],
            "members": len(group.members),
            "partitions": len(group.assignable),
            "plan": metrics["max_lag"],
            "classic": lower_bound_max_lag(group),
            "balanced": balanced,
            "opt": opt,
            "solver_best": exact.max_lag,
            "solver_bound": exact.bound,
            "t_plan": t_plan,
            "t_bound": t_bound,
            "t_exact": exact.seconds,
            "certified": metrics["max_lag"] <= balanced,
        }
        rows.setdefault(size, []).append(row)
        if args.verbose:
            shown = "-" if opt is None else f"{opt:,}"
            print(
                f"{row['group']:>18} {row['members']:>3}x{row['partitions']:<4} plan {row['plan']:>12,} "
                f"opt {shown:>12} balanced {balanced:>12,} classic {row['classic']:>12,} "
                f"{t_plan * 1e3:6.1f} ms  exact {exact.seconds:6.2f} s {exact.status}",
                file=sys.stderr,
            )
        elif (i + 1) % 25 == 0:
            done = time.perf_counter() - started
            print(f"  ... {i + 1}/{args.groups} groups, {done:.0f} s", file=sys.stderr)

    kind = "mixed" if args.mixed else "identical"
    print(
        f"{args.groups} groups ({kind} subscriptions), seed {args.seed}, solver limit {args.time_limit:g} s; "
        f"opt = the exact optimum under lag-optimal's count rules, where the solver proved it"
    )
    head = (
        "size",
        "groups",
        "proven",
        "plan=opt",
        "certified",
        "plan/opt max",
        "bal/opt p50",
        "min",
        "old/opt p50",
        "min",
        "plan ms p50",
        "max",
        "bound ms max",
        "exact s p50",
        "max",
    )
    widths = [max(6, len(h)) for h in head]
    widths[0] = 10
    print("  ".join(f"{h:>{w}}" for h, w in zip(head, widths, strict=True)))
    everything: list[dict] = []
    for size, rs in [*rows.items(), ("all", None)]:
        rs = rs if rs is not None else everything
        if size != "all":
            everything += rs
        proven = [r for r in rs if r["opt"] is not None]

        def ratios(key: str, proven: list[dict] = proven) -> list[float]:
            return [r[key] / r["opt"] if r["opt"] else 1.0 for r in proven]

        plan, bal, old = ratios("plan"), ratios("balanced"), ratios("classic")
        t_plan = [r["t_plan"] * 1e3 for r in rs]
        t_exact = [r["t_exact"] for r in rs]
        cells = (
            size,
            len(rs),
            len(proven),
            sum(r["plan"] == r["opt"] for r in proven),
            sum(r["certified"] for r in rs),
            f"{max(plan):.5f}" if plan else "-",
            f"{statistics.median(bal):.5f}" if bal else "-",
            f"{min(bal):.4f}" if bal else "-",
            f"{statistics.median(old):.5f}" if old else "-",
            f"{min(old):.4f}" if old else "-",
            f"{statistics.median(t_plan):.1f}",
            f"{max(t_plan):.1f}",
            f"{max(r['t_bound'] for r in rs) * 1e3:.2f}",
            f"{statistics.median(t_exact):.2f}",
            f"{max(t_exact):.1f}",
        )
        print("  ".join(f"{c!s:>{w}}" for c, w in zip(cells, widths, strict=True)))
    unproven = [r for r in everything if r["opt"] is None]
    for r in unproven[:10]:
        best = r["solver_best"]
        print(
            f"not proven: {r['group']} ({r['members']}x{r['partitions']}): plan {r['plan']:,}, solver's best "
            f"{best if best is None else f'{best:,}'}, solver's bound {r['solver_bound']:,}"
        )
    if len(unproven) > 10:
        same = sum(r["solver_best"] is not None and r["plan"] <= r["solver_best"] for r in unproven)
        print(f"... {len(unproven)} not proven; in {same} the solver found nothing better than the plan")
    print(f"total {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
