"""Agreement with Kafka's own assignors (Apache Kafka 4.4.0) on seeded random groups.

Prints, over identical and mixed subscriptions with and without owned partitions, static
members and racks: how often range and roundrobin are identical to Kafka's; sticky's and
cooperative-sticky's moves against Kafka's (groups without racks, where fewer moves is the
goal); Kafka's general builder as replayed by ``kafka_general`` (mixed subscriptions, which
sticky holds its result against) and its constrained one by ``kafka_constrained`` (one
subscription, which cooperative-sticky holds its result against with racks); and the
rack-local partitions of range and the sticky pair against Kafka's (groups with racks, where
Kafka trades moves for locality). Then, against the server-side assignors of KIP-848
(kafka-group-coordinator: ``UniformAssignor``, ``RangeAssignor``), the table of
docs/fidelity.md: per comparison the groups, how many are identical, how many differ and why
(``tests/support/server_fidelity.py`` gives every difference its reason). Needs the harness:
``make harness`` first. Figures for people, not a test.

    .venv/bin/python bench/fidelity.py [--groups 1000] [--seed 2026] [--big 20] [--server-only]

``--big N`` adds N groups of 101-400 members with racks and owned partitions, one
subscription and mixed ones (where sticky's chain search runs in blocks): per group, moves
and rack-local partitions against Kafka's, and sticky's slowest group (CPU seconds).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from groups import kafka_balance_violation, moved
from kafka_java import KAFKA_SKIP, KAFKA_VERSION, kafka_assign, random_case, server_assign
from lagassign.core.case import parse_case
from lagassign.core.kafka_replay.constrained import kafka_constrained, kafka_constrained_cooperative
from lagassign.core.kafka_replay.general import kafka_general, kafka_general_cooperative
from lagassign.core.scoring import score
from lagassign.core.strategies import get_strategy
from server_fidelity import IDENTICAL, range_reason, server_cases, uniform_reason

PAIRS = [("sticky", "sticky"), ("cooperative-sticky", "cooperative-sticky-final")]
RACK_OPTIONS = [
    ("lag-aware", "off"),
    ("lag-aware", "prefer"),
    ("lag-aware", "require"),
    ("lag-optimal", "off"),
    ("lag-optimal", "prefer"),
]


def rack_local(group, members) -> int:
    rack = {m.id: m.rack for m in group.members}
    return sum(1 for mid, tps in members.items() for tp in tps if rack[mid] in group.partitions[tp].racks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--big", type=int, default=0, help="also this many groups of 101-400 members")
    parser.add_argument("--server-only", action="store_true", help="only the server-side assignors' table")
    args = parser.parse_args()
    if KAFKA_SKIP:
        raise SystemExit(f"Kafka harness not ready: {KAFKA_SKIP}")
    if not args.server_only:
        clients(args)
    server(args.groups, args.seed)


def clients(args: argparse.Namespace) -> None:
    """The client-side assignors (kafka-clients) against lagassign's strategies."""
    rnd = random.Random(args.seed)
    cases = [random_case(rnd) for _ in range(args.groups)]
    start = time.perf_counter()
    kafka = kafka_assign(cases)
    java_s = time.perf_counter() - start
    c: Counter = Counter()
    for case, k in zip(cases, kafka, strict=True):
        g = parse_case(case)
        static = any(m.instance_id for m in g.members)
        racks = g.rack_aware
        kinds = ["all"] + (["static"] if static else []) + (["racks"] if racks else [])
        for kind in kinds:
            c[("groups", kind)] += 1
        if g.identical_subscriptions:
            c[("constrained", "groups")] += 1
            c[("constrained", "sticky")] += kafka_constrained(g) == k["sticky"]
            c[("constrained", "coop")] += kafka_constrained_cooperative(g) == k["cooperative-sticky-final"]
        else:
            c[("replay", "groups")] += 1
            c[("replay", "sticky")] += kafka_general(g) == k["sticky"]
            c[("replay", "coop")] += kafka_general_cooperative(g) == k["cooperative-sticky-final"]
        for name in ("range", "roundrobin"):
            same = get_strategy(name).assign(g).members == k[name]
            for kind in kinds:
                c[(name, kind)] += same
        if racks:
            c[("range", "local ours")] += rack_local(g, get_strategy("range").assign(g).members)
            c[("range", "local kafka")] += rack_local(g, k["range"])
        for ours, theirs in PAIRS:
            got = get_strategy(ours).assign(g).members
            c[(ours, "unbalanced")] += kafka_balance_violation(g, got) is not None
            a, b = len(moved(g.owner, got)), len(moved(g.owner, k[theirs]))
            if racks:
                la, lb = rack_local(g, got), rack_local(g, k[theirs])
                subs = "identical" if g.identical_subscriptions else "mixed"
                c[("racks", subs)] += ours == "sticky"
                c[(ours, "local ours")] += la
                c[(ours, "local kafka")] += lb
                c[(ours, "local short", subs)] += la < lb
                c[(ours, "rack moves ours")] += a
                c[(ours, "rack moves kafka")] += b
                c[(ours, "rack more", subs)] += a > b
                c[(ours, "dominated", subs)] += la >= lb and a <= b
            else:
                c[(ours, "moves ours")] += a
                c[(ours, "moves kafka")] += b
                c[(ours, "more")] += a > b
                c[(ours, "fewer")] += a < b
        c["partitions racks"] += len(g.assignable) if racks else 0
        if racks:
            for name, rack in RACK_OPTIONS:
                m = score(g, get_strategy(name, rack=rack).assign(g))
                c[(name, rack, "cross")] += m.get("cross_rack_partitions", 0)
                c[(name, rack, "cross lag")] += m.get("cross_rack_lag", 0)
                c[(name, rack, "max lag")] += m["max_lag"]
    n = args.groups
    print(f"{n} groups (seed {args.seed}); kafka-clients {KAFKA_VERSION} took {java_s:.1f} s for all of them")
    print(
        f"  {c[('groups', 'static')]} with static members, {c[('groups', 'racks')]} with racks "
        f"({c['partitions racks']} partitions)"
    )
    print("identical to Kafka's assignment (all / static members / racks):")
    for name in ("range", "roundrobin"):
        print(
            f"  {name:<11} {c[(name, 'all')]}/{n}  {c[(name, 'static')]}/{c[('groups', 'static')]}"
            f"  {c[(name, 'racks')]}/{c[('groups', 'racks')]}"
        )
    print(
        f"  kafka_general (Kafka's general builder replayed, mixed subscriptions): StickyAssignor"
        f" {c[('replay', 'sticky')]}/{c[('replay', 'groups')]}, CooperativeStickyAssignor after its"
        f" reruns {c[('replay', 'coop')]}/{c[('replay', 'groups')]}"
    )
    print(
        f"  kafka_constrained (Kafka's constrained builder replayed, one subscription): StickyAssignor"
        f" {c[('constrained', 'sticky')]}/{c[('constrained', 'groups')]}, CooperativeStickyAssignor"
        f" after its reruns {c[('constrained', 'coop')]}/{c[('constrained', 'groups')]}"
    )
    no_racks = n - c[("groups", "racks")]
    print(f"moves without racks ({no_racks} groups): lagassign vs Kafka, groups with more / fewer")
    for ours, _ in PAIRS:
        print(
            f"  {ours:<19} {c[(ours, 'moves ours')]} vs {c[(ours, 'moves kafka')]}"
            f"  more in {c[(ours, 'more')]}, fewer in {c[(ours, 'fewer')]};"
            f" Kafka's balance broken in {c[(ours, 'unbalanced')]}"
        )
    print(f"rack-local partitions with racks ({c[('groups', 'racks')]} groups): lagassign vs Kafka")
    print(f"  {'range':<19} {c[('range', 'local ours')]} vs {c[('range', 'local kafka')]}")
    for ours, _ in PAIRS:
        print(
            f"  {ours:<19} {c[(ours, 'local ours')]} vs {c[(ours, 'local kafka')]};"
            f" moves {c[(ours, 'rack moves ours')]} vs {c[(ours, 'rack moves kafka')]}"
        )
    print("per group with racks: at least Kafka's rack-local and at most its moves (both) / short of")
    print("its rack-local / more moves than Kafka's")
    for ours, _ in PAIRS:
        for subs in ("identical", "mixed"):
            print(
                f"  {ours:<19} {subs + ' subscriptions':<23}"
                f" {c[(ours, 'dominated', subs)]}/{c[('racks', subs)]}"
                f" / {c[(ours, 'local short', subs)]} / {c[(ours, 'rack more', subs)]}"
            )
    print("rack option, groups with racks: cross-rack partitions, their lag, sum of max lag")
    for name, rack in RACK_OPTIONS:
        print(
            f"  {name + ' rack=' + rack:<22} {c[(name, rack, 'cross')]:>6}"
            f"  {c[(name, rack, 'cross lag')]:>12,}  {c[(name, rack, 'max lag')]:>12,}"
        )
    if args.big:
        big(args.big, args.seed)


def server(n: int, seed: int) -> None:
    """The server-side assignors (kafka-group-coordinator) against ``uniform`` and ``range``,
    as the Markdown table of docs/fidelity.md. ``uniform`` is compared in both of Kafka's input
    orders: lagassign's (members static first by instance id, then by id; topics by name) and
    the coordinator's own (hash order of member and topic ids)."""
    cases = server_cases(random.Random(seed), n)
    start = time.perf_counter()
    kafka = server_assign(cases)
    java_s = time.perf_counter() - start
    one, mixed = "`uniform`, one subscription", "`uniform`, mixed subscriptions"
    ours_order, coordinator = "`UniformAssignor`, lagassign's order", "`UniformAssignor`, coordinator's order"
    rows: dict[tuple[str, str], Counter] = {
        (one, ours_order): Counter(),
        (one, coordinator): Counter(),
        (mixed, ours_order): Counter(),
        (mixed, coordinator): Counter(),
        ("`range`, groups without racks", "`RangeAssignor`"): Counter(),
        ("`range`, groups with racks", "`RangeAssignor`"): Counter(),
    }
    moves: Counter = Counter()
    for case, k in zip(cases, kafka, strict=True):
        g = parse_case(case)
        ours = get_strategy("uniform").assign(g).members
        subs = one if g.identical_subscriptions else mixed
        for order, name in ((ours_order, "uniform-ordered"), (coordinator, "uniform")):
            rows[subs, order][uniform_reason(g, ours, k[name], k["uniform-ordered"])] += 1
        if not g.identical_subscriptions and g.owner:
            moves["groups"] += 1
            moves["ours"] += len(moved(g.owner, ours))
            moves["kafka"] += len(moved(g.owner, k["uniform"]))
        moves["kafka unbalanced"] += kafka_balance_violation(g, k["uniform"]) is not None
        racks = "with" if g.rack_aware else "without"
        reason = range_reason(case, get_strategy("range").assign(g).members, k["range"])
        rows[f"`range`, groups {racks} racks", "`RangeAssignor`"][reason] += 1
    print()
    print(f"Kafka {KAFKA_VERSION}'s server-side assignors (kafka-group-coordinator): {n} groups, seed {seed}")
    print(f"(Kafka's four runs of them all: {java_s:.1f} s)")
    print()
    print("| lagassign | Kafka | groups | identical | differing | why they differ (groups) |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    for (ours_label, kafka_label), reasons in rows.items():
        total = sum(reasons.values())
        same = reasons[IDENTICAL]
        why = ", ".join(f"{r} ({c})" for r, c in reasons.most_common() if r != IDENTICAL) or "-"
        print(f"| {ours_label} | {kafka_label} | {total} | {same} | {total - same} | {why} |")
    print()
    print(
        f"Mixed subscriptions with owned partitions ({moves['groups']} groups): partitions moved, lagassign"
        f" {moves['ours']}, Kafka {moves['kafka']} (coordinator's order). Kafka's uniform breaks the"
        f" balance condition lagassign keeps in {moves['kafka unbalanced']} of {n} groups."
    )


def big(n: int, seed: int) -> None:
    """Groups of 101-400 members with racks and owned partitions, per subscription kind."""
    rnd = random.Random(seed)
    print("big groups (101-400 members, racks, owned partitions), sticky per group against Kafka:")
    for subs in ("identical", "mixed"):
        cases = []
        while len(cases) < n:
            case = random_case(
                rnd,
                subs,
                owned=True,
                static=False,
                racks=True,
                max_members=400,
                max_topics=12,
                max_partitions=200,
            )
            if len(case["members"]) > 100:
                cases.append(case)
        c: Counter = Counter()
        slowest = 0.0
        for case, k in zip(cases, kafka_assign(cases), strict=True):
            g = parse_case(case)
            start = time.process_time()
            got = get_strategy("sticky").assign(g).members
            slowest = max(slowest, time.process_time() - start)
            c["unbalanced"] += kafka_balance_violation(g, got) is not None
            a, b = len(moved(g.owner, got)), len(moved(g.owner, k["sticky"]))
            la, lb = rack_local(g, got), rack_local(g, k["sticky"])
            c["moves"] += a
            c["kafka moves"] += b
            c["local"] += la
            c["kafka local"] += lb
            c["both"] += a <= b and la >= lb
            c["short"] += la < lb
            c["more"] += a > b
        print(
            f"  {subs:<9} {c['both']}/{n} both / short of rack-local in {c['short']} / more moves in"
            f" {c['more']}; rack-local {c['local']} vs {c['kafka local']}, moves {c['moves']} vs"
            f" {c['kafka moves']}; balance broken in {c['unbalanced']}; slowest {slowest:.2f} s"
        )


if __name__ == "__main__":
    main()
