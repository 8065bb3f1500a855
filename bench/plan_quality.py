"""lag-optimal's and drain-optimal's plans group by group, now against an earlier revision.

The guard of a change to the searches (issue 30): they may choose other plans, but on the
groups of ``per_group.py`` (the synthetic mix), ``certify.py`` and ``drain.py`` (the groups
each runs by default: identical subscriptions) no group may get a higher max lag
(lag-optimal) or a longer largest catch-up time (drain-optimal, on groups with capacities; max
lag on the others), and the moves of all groups together may not grow. The two benchmarks'
``--mixed`` groups are compared too and reported apart (``mixed: worse N``), outside the
guard unless ``--strict`` puts them in it. Each side runs in its own Python on its own tree
(the revision's ``plugins`` and ``bench``, from ``git archive``), in the same run.

Printed per suite and strategy: groups better / equal / worse than the baseline, the worst
ratio, total moves on each side, and seconds. The exit status is 1 when a guarded group got
worse or the moves grew, so the script can gate a commit.

    .venv/bin/python bench/plan_quality.py [--baseline HEAD] [--groups 2000] \
        [--suites mix,certify,drain] [--strict]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STRATEGIES = ("lag-optimal", "drain-optimal")
SUITES = ("mix", "certify", "drain")


def _mix(groups: int) -> Iterator[tuple[str, dict]]:
    from lagassign.core.synthetic import generate_cases

    cases, _ = generate_cases(groups, 7, None)
    for case in cases:
        yield case["group"], case


def _certify(groups: int) -> Iterator[tuple[str, dict]]:
    import certify

    for mixed in (False, True):
        for _, case in certify.suite(150, 17, mixed):
            yield f"{'mixed' if mixed else 'identical'}/{case['group']}", case


def _drain(groups: int) -> Iterator[tuple[str, dict]]:
    import drain

    for mixed in (False, True):
        rnd = random.Random(15)
        for members, partitions in drain.SIZES:
            for i in range(40):
                case = drain.make_case(rnd, members, partitions, mixed, timed=True)
                plain = drain.make_case(random.Random(rnd.random()), members, partitions, mixed, timed=False)
                key = f"{'mixed' if mixed else 'identical'}/{members}x{partitions}/{i}"
                yield key, case
                yield key + "/plain", plain


def measure(suite: str, groups: int) -> dict[str, Any]:
    """Per strategy: group -> [max lag or catch-up seconds, moves], and seconds spent."""
    from lagassign.core.case import parse_case
    from lagassign.core.catchup import member_times, timed
    from lagassign.core.errors import StrategyRefusedError
    from lagassign.core.scoring import score
    from lagassign.core.strategies import get_strategy

    made = {"mix": _mix, "certify": _certify, "drain": _drain}[suite](groups)
    out: dict[str, Any] = {name: {} for name in STRATEGIES}
    spent = dict.fromkeys(STRATEGIES, 0.0)
    for key, case in made:
        for name in STRATEGIES:
            group = parse_case(case)
            start = time.process_time()
            try:
                plan = get_strategy(name).assign(group)
            except StrategyRefusedError:
                out[name][key] = None
                continue
            finally:
                spent[name] += time.process_time() - start
            metrics = score(group, plan)
            if name == "drain-optimal" and timed(group):
                worst = max(member_times(group, plan.members).values())
                value = "never" if worst == math.inf else worst
            else:
                value = metrics["max_lag"]
            out[name][key] = [value, metrics["moves"]]
    return {"plans": out, "seconds": spent}


def _side(tree: Path, suite: str, groups: int) -> dict[str, Any]:
    """``measure`` in a fresh Python on ``tree``'s library and benchmarks."""
    env = {**os.environ, "PYTHONPATH": str(tree / "plugins")}
    code = (
        "import json, sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]; import plan_quality; "
        "print(json.dumps(plan_quality.measure(sys.argv[3], int(sys.argv[4]))))"
    )
    paths = (str(tree / "bench"), str(ROOT / "bench"))  # its own certify and drain first
    done = subprocess.run(
        [sys.executable, "-c", code, *paths, suite, str(groups)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _worse(now: Any, then: Any) -> bool:
    """Whether ``now`` (a time, max lag, "never" or None for refused) is worse than ``then``."""
    if now == then:
        return False
    if then is None or now is None:
        return now is None
    if now == "never" or then == "never":
        return now == "never"
    return now > then * (1 + 1e-9) + 1e-9


def compare(now: dict[str, Any], then: dict[str, Any], suite: str, strict: bool = False) -> bool:
    """Print the comparison of one suite; True when it keeps the guard (``strict``: the mixed
    groups too)."""
    ok = True
    for name in STRATEGIES:
        a, b = now["plans"][name], then["plans"][name]
        better = equal = 0
        worse: list[str] = []
        ratio = 1.0
        for key, got in a.items():
            was = b.get(key)
            value, base = (got or [None])[0], (was or [None])[0]
            if _worse(value, base):
                worse.append(key)
            elif _worse(base, value):
                better += 1
            else:
                equal += 1
            if isinstance(value, int | float) and isinstance(base, int | float) and base > 0:
                ratio = max(ratio, value / base)
        moves_now = sum(v[1] for v in a.values() if v)
        moves_then = sum(v[1] for v in b.values() if v)
        mixed = [key for key in worse if key.startswith("mixed/")]
        guarded = [key for key in worse if key not in mixed]
        ok &= not guarded and not (strict and mixed) and moves_now <= moves_then
        print(
            f"{suite:8} {name:14} groups {len(a):5}  better {better:4}  equal {equal:5}"
            f"  worse {len(guarded):3} (mixed: worse {len(mixed)})  worst ratio {ratio:.4f}"
            f"  moves {moves_then} -> {moves_now}"
            f"  s {then['seconds'][name]:.2f} -> {now['seconds'][name]:.2f}"
        )
        for key in guarded[:5] + mixed[:5]:
            print(f"    worse: {key}: {b.get(key)} -> {a.get(key)}")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="HEAD", help="git revision to compare with")
    parser.add_argument("--groups", type=int, default=2000, help="groups of the synthetic mix")
    parser.add_argument("--suites", default=",".join(SUITES))
    parser.add_argument("--strict", action="store_true", help="the mixed groups in the guard too")
    args = parser.parse_args(argv)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        tree = ["git", "-C", str(ROOT), "archive", args.baseline, "plugins", "bench"]
        archive = subprocess.run(tree, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        for suite in args.suites.split(","):
            now, then = _side(ROOT, suite, args.groups), _side(Path(tmp), suite, args.groups)
            ok &= compare(now, then, suite, args.strict)
    print("guard kept: no group worse, moves not grown" if ok else "guard BROKEN")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
