"""The snapshot both Spark evaluation tests use (``tests/evaluation/test_evaluation.py`` in
``local[2]``, ``tests/spark/test_spark_cluster.py`` on a standalone cluster): 20 groups of mixed
sizes, lag shapes and subscriptions, among them one whose case is invalid (a partition without
an end offset), one the snapshot failed for, one in ``earliest`` mode with missing commits, and
one with offsets above 2**53 (exact only if no float sneaks in on the way to the executors)."""

from __future__ import annotations

import random

from lagassign.core.synthetic import SHAPES, generate_case

INVALID, FAILED, EARLIEST, HUGE = "g-invalid", "g-failed", "g-earliest", "g-huge-offsets"
SNAPSHOT_ERROR = "committed offsets: KafkaError{code=_TIMED_OUT}"


def evaluation_cases() -> list[dict]:
    """The 20 groups' cases, the same every call."""
    rng = random.Random(20261122)
    sizes = [
        (1, 1),
        (1, 6),
        (2, 3),
        (3, 10),
        (4, 4),
        (5, 64),
        (8, 30),
        (13, 120),
        (30, 300),
        (6, 7),
        (2, 50),
        (10, 10),
        (7, 90),
        (3, 3),
        (9, 200),
        (4, 17),
    ]
    cases = []
    for i, (members, partitions) in enumerate(sizes):
        cases.append(
            generate_case(
                rng,
                members,
                partitions,
                SHAPES[i % len(SHAPES)],
                mixed=i % 3 == 0,
                owned=("range", "random", None)[i % 3],
                group=f"g{i:02d}",
            )
        )
    invalid = generate_case(rng, 3, 9, "lognormal", group=INVALID)
    invalid["partitions"][4] = {
        "topic": invalid["partitions"][4]["topic"],
        "partition": invalid["partitions"][4]["partition"],
        "begin": 0,
        "end": None,
        "committed": None,
    }
    failed = generate_case(rng, 2, 4, "zipf", group=FAILED)
    earliest = generate_case(rng, 3, 8, "lognormal", topics=2, group=EARLIEST)
    earliest["auto_offset_reset"] = "earliest"
    for j, p in enumerate(earliest["partitions"]):
        if j % 2:
            lag = p.pop("lag")
            p.update(begin=500, end=500 + lag, committed=None)
    huge = generate_case(rng, 2, 5, "lognormal", group=HUGE)
    for j, p in enumerate(huge["partitions"]):
        p.pop("lag")
        base = 2**60 + 1_000_003 * j
        p.update(begin=base, end=base + 777 + j, committed=base + 3 + j)
    return [*cases, invalid, failed, earliest, huge]


#: The options both Spark runs evaluate with (a limit on moves reaches the executors).
SPARK_OPTIONS = {"max_moves": 4}
