#!/usr/bin/env python3
"""Write a realistic synthetic snapshot (the three snapshot Parquet tables and manifest.json).

    .venv/bin/python scripts/make_snapshot.py --groups 10000 --seed 7 --out var/snapshots/s10k

Sizes, subscriptions and lag shapes: ``lagassign.core.synthetic.generate_cases`` (about 10 members
and 100 partitions per group, one group of 10,000 partitions per 2,500 groups).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from lagassign.tables.synthetic import generate_snapshot


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--huge", type=int, default=None, help="groups of 10,000 partitions (default by size)"
    )
    args = parser.parse_args(argv)
    if args.groups < 1:
        parser.error("--groups must be at least 1")
    started = time.monotonic()
    folder = generate_snapshot(args.out, args.groups, args.seed, args.huge)
    counts = json.loads((Path(folder) / "manifest.json").read_text())["counts"]
    print(
        f"{folder}: {counts['groups']} groups, {counts['partitions']} partitions, "
        f"{counts['members']} members ({counts['failed']} failed) in {time.monotonic() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
