"""Benchmark of the machine, not of lagassign: how much two busy processes get done against one.

The Spark goal of issue 16 (``bench/spark_ratio.py``: ``local[2]`` at most 0.6 x one core
in-process) assumes the two cores do twice one core's work. This measures what they do here,
with no library code: the same pure-Python loop (``--steps`` iterations) in one process, then
in two processes at once (spawned), in the same run, ``--repeat`` times. It prints each run's
speed-up (2 x one process's wall / the pair's wall; 2.0 means two full cores) and the pair's
CPU seconds against the single run's (above 1 means each process ran slower beside the other).

    .venv/bin/python bench/two_cores.py [--steps 30000000] [--repeat 5]

A speed-up of ``s`` bounds any two-process run from below at ``1 / s`` of one core's time,
before Spark or the library add anything: at 1.67 that is the goal's 0.6.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time


def loop(steps: int) -> float:
    """CPU seconds of ``steps`` iterations of integer arithmetic (interpreter-bound, tiny memory)."""
    started = time.process_time()
    total = 0
    for i in range(steps):
        total += i * i % 7
    return time.process_time() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    speedups = []
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(loop, [1, 1])  # both processes started before anything is timed
        for run in range(args.repeat):
            t = time.monotonic()
            one_cpu = loop(args.steps)
            one = time.monotonic() - t
            t = time.monotonic()
            pair_cpu = pool.map(loop, [args.steps, args.steps])
            pair = time.monotonic() - t
            speedups.append(2 * one / pair)
            print(
                f"run {run + 1}: one process {one:.2f} s; two at once {pair:.2f} s wall, CPU "
                f"{pair_cpu[0]:.2f} + {pair_cpu[1]:.2f} s ({sum(pair_cpu) / (2 * one_cpu):.2f} x one's); "
                f"speed-up {speedups[-1]:.2f} (2.00 = two full cores)",
                flush=True,
            )
    median = statistics.median(speedups)
    print(
        f"speed-up {min(speedups):.2f} to {max(speedups):.2f}, median {median:.2f}: a two-process run "
        f"takes at least {1 / median:.2f} x one core's time at the median (one process alone varies "
        "from run to run too: a speed-up above 2 is a slow single run)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
