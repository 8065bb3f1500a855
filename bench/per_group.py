"""Per-group cost of evaluating the synthetic mix in-process, now against an earlier revision.

The groups are ``scripts/make_snapshot.py``'s mix (``lagassign.core.synthetic.generate_cases``,
seed 7: about 10 members and 100 partitions per group, one group of 10,000 partitions per 2,500
groups). Each group is evaluated as the pipeline does (case -> parse -> every strategy, scored);
the time is split into parsing, bounds and each strategy. ``--baseline REV`` runs the same
measurement on that git revision's library, in the same run, so the speed-up is a ratio taken
on the same machine at the same moment (issue 16, goal 2: at least 3x against 3588d90).

Times are the measuring process's CPU time (``--clock wall`` for wall time): on a shared
machine wall time also counts the turns of other processes. Each side runs ``--repeat`` times,
alternately, and each phase keeps its best.

``--pipeline`` (on by default) also writes the same mix as a snapshot and times the in-process
engine end to end on it (``run_local``: read, evaluate, write), as the issue measured it.

    .venv/bin/python bench/per_group.py [--groups 2000] [--seed 7] [--baseline 3588d90] [--repeat 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def measure(groups: int, seed: int, huge: int | None = None, clock_name: str = "cpu") -> dict[str, Any]:
    """Seconds per phase over all groups, and a digest of every result (every strategy's
    assignment and metrics) to show that results are unchanged."""
    from lagassign.core.case import parse_case
    from lagassign.core.errors import StrategyRefusedError
    from lagassign.core.evaluate import run_strategy
    from lagassign.core.scoring import balanced_lower_bound_max_lag, lower_bound_max_lag
    from lagassign.core.strategies import strategy_names
    from lagassign.core.synthetic import generate_cases

    cases, _ = generate_cases(groups, seed, huge)
    names = strategy_names()
    spent = dict.fromkeys(["parse", "bounds", *names], 0.0)
    digests = {name: hashlib.sha256() for name in names}
    clock = CLOCKS[clock_name]
    for case in cases:
        t0 = clock()
        group = parse_case(case)
        t1 = clock()
        bound, balanced = lower_bound_max_lag(group), balanced_lower_bound_max_lag(group)
        spent["parse"] += t1 - t0
        spent["bounds"] += clock() - t1
        for name in names:
            t = clock()
            try:
                result = run_strategy(group, name, bound, balanced)
            except StrategyRefusedError as exc:
                result = str(exc)
            spent[name] += clock() - t
            digests[name].update(repr(result).encode())
    return {**spent, "digest": {name: d.hexdigest() for name, d in digests.items()}}


def measure_pipeline(snapshot: str, out: str, clock_name: str = "cpu") -> dict[str, Any]:
    """Seconds of the in-process engine end to end on a written snapshot (``run_local``: read the
    parquet files, evaluate every group with every strategy, write the evaluations), and a
    digest of what it wrote (each group's assignment and score columns, in group order)."""
    import pyarrow.parquet as pq

    try:
        from lagassign.evaluation import EvaluationParams, run_local
    except ImportError:  # a baseline from before the evaluation layer moved below Spark
        from lagassign.pipeline.evaluation import EvaluationParams, run_local  # type: ignore[no-redef]

    clock = CLOCKS[clock_name]
    t = clock()
    run_local(EvaluationParams(snapshot=snapshot, out=out))
    seconds = clock() - t
    table = pq.read_table(Path(out, "evaluations.parquet")).to_pylist()
    keep = ("group", "strategy", "assignment", "max_lag", "moves", "error")
    digests: dict[str, Any] = {}
    for row in sorted(table, key=lambda r: (str(r.get("strategy")), str(r.get("group")))):
        line = json.dumps([row.get(k) for k in keep], default=str).encode()
        digests.setdefault(str(row.get("strategy")), hashlib.sha256()).update(line)
    return {"end to end": seconds, "digest": {k: d.hexdigest() for k, d in digests.items()}}


def _in_subprocess(plugins: Path, call: str, *args: str) -> dict[str, Any]:
    """``per_group.<call>`` evaluated in a fresh Python whose ``lagassign`` is ``plugins``'s
    (``sys.argv[2:]`` are ``args``); its JSON answer."""
    env = {**os.environ, "PYTHONPATH": str(plugins)}
    code = f"import json, sys; sys.path.insert(0, sys.argv[1]); import per_group; print(json.dumps({call}))"
    done = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "bench"), *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _run_pipeline(plugins: Path, snapshot: Path, clock: str) -> dict[str, Any]:
    call = "per_group.measure_pipeline(sys.argv[2], __import__('tempfile').mkdtemp(), sys.argv[3])"
    return _in_subprocess(plugins, call, str(snapshot), clock)


def _run(plugins: Path, groups: int, seed: int, huge: int | None, clock: str) -> dict[str, Any]:
    call = (
        "per_group.measure(int(sys.argv[2]), int(sys.argv[3]), "
        "None if sys.argv[4] == 'None' else int(sys.argv[4]), sys.argv[5])"
    )
    return _in_subprocess(plugins, call, str(groups), str(seed), str(huge), clock)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--huge", type=int, default=None, help="groups of 10,000 partitions (default: mix)")
    parser.add_argument("--baseline", default="3588d90", help="git revision to compare with ('' for none)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per side, alternately; best per phase")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    parser.add_argument(
        "--pipeline",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also time run_local end to end on the mix written as a snapshot (default: on)",
    )
    args = parser.parse_args(argv)
    sides = {"now": ROOT / "plugins"}
    with tempfile.TemporaryDirectory() as tmp:
        if args.baseline:
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", args.baseline, "plugins"], capture_output=True, check=True
            )
            subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
            sides[args.baseline] = Path(tmp, "plugins")
        runs: dict[str, dict[str, Any]] = {}
        ends: dict[str, dict[str, Any]] = {}
        snapshot = Path(tmp, "snapshot")
        if args.pipeline:
            from lagassign.tables.synthetic import generate_snapshot

            generate_snapshot(snapshot, args.groups, args.seed)
        for _ in range(max(1, args.repeat)):
            for side, plugins in sides.items():
                run = _run(plugins, args.groups, args.seed, args.huge, args.clock)
                best = runs.setdefault(side, run)
                for phase, seconds in run.items():
                    if phase != "digest":
                        best[phase] = min(best[phase], seconds)
                if args.pipeline:
                    end = _run_pipeline(plugins, snapshot, args.clock)
                    kept = ends.setdefault(side, end)
                    kept["end to end"] = min(kept["end to end"], end["end to end"])
    digests = {name: run.pop("digest") for name, run in runs.items()}
    cols = list(runs)
    print(f"{args.groups} groups, seed {args.seed}: ms per group ({args.clock} time, best of {args.repeat})")
    print(f"{'phase':22}" + "".join(f"{c:>12}" for c in cols) + ("     speed-up" if len(cols) > 1 else ""))
    phases = sorted(set().union(*runs.values()), key=lambda p: -runs["now"].get(p, 0))
    for phase in [*phases, "total"]:
        vals = [sum(r.values()) if phase == "total" else r.get(phase, 0.0) for r in runs.values()]
        line = f"{phase:22}" + "".join(f"{1000 * v / args.groups:12.3f}" for v in vals)
        if len(vals) > 1 and vals[0] > 0:
            line += f"{vals[1] / vals[0]:12.2f}x"
        print(line)
    if len(digests) > 1:
        now, then = digests["now"], digests[args.baseline]
        differ = [name for name in now if now[name] != then.get(name)]
        print(
            f"\nresults identical to {args.baseline} (digest of every result, per strategy): "
            + ("all" if not differ else f"all but {', '.join(differ)}")
        )
    if ends:
        vals = [e["end to end"] for e in ends.values()]
        line = f"{'end to end (run_local)':22}" + "".join(f"{1000 * v / args.groups:12.3f}" for v in vals)
        if len(vals) > 1 and vals[0] > 0:
            line += f"{vals[1] / vals[0]:12.2f}x"
        print("\nthe in-process engine on the same mix written as a snapshot (read, evaluate, write):")
        print(line)
        if len(ends) > 1:
            now, then = ends["now"]["digest"], ends[args.baseline]["digest"]
            differ = sorted(k for k in set(now) | set(then) if now.get(k) != then.get(k))
            print(
                f"written evaluations identical to {args.baseline}, per strategy: "
                + ("all" if not differ else f"all but {', '.join(differ)}")
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
