"""The worked examples of the seed and the specs, verbatim (see /work/shared/specs/)."""

from __future__ import annotations

import lagassign
import pytest


def _case(members: dict[str, list[str]], partitions: dict[tuple[str, int], int], owned=None) -> dict:
    owned = owned or {}
    return {
        "group": "example",
        "auto_offset_reset": "earliest",
        "members": [{"id": m, "topics": t, "owned": owned.get(m, [])} for m, t in members.items()],
        "partitions": [{"topic": t, "partition": p, "lag": lag} for (t, p), lag in partitions.items()],
    }


def _pairs(*names: str) -> list[list]:
    """ "t0p1" / "T1-0" -> ["t0", 1] / ["T1", 0]."""
    out = []
    for name in names:
        topic, _, part = name.rpartition("-") if "-" in name else name.rpartition("p")
        out.append([topic, int(part)])
    return out


# kafka-lag-based-assignor README (the seed): t0p0 100,000, t0p1 50,000, t0p2 60,000.
README = _case({"C0": ["t0"], "C1": ["t0"]}, {("t0", 0): 100_000, ("t0", 1): 50_000, ("t0", 2): 60_000})
# The Lag-Aware KIP's example: the same, with the lags of p1 and p2 swapped.
KIP = _case({"C0": ["t0"], "C1": ["t0"]}, {("t0", 0): 100_000, ("t0", 1): 60_000, ("t0", 2): 50_000})


def test_readme_lag_example():
    out = lagassign.assign(README, "lag")
    assert out["assignment"] == {"C0": _pairs("t0p0"), "C1": _pairs("t0p1", "t0p2")}
    assert out["metrics"]["lag"] == {"C0": 100_000, "C1": 110_000}


def test_readme_range_example_assignment():
    out = lagassign.assign(README, "range")
    assert out["assignment"] == {"C0": _pairs("t0p0", "t0p1"), "C1": _pairs("t0p2")}


def test_readme_range_totals_hold_with_the_kips_lags():
    """The README's 160,000 / 50,000 only add up with p1 = 60,000 and p2 = 50,000 (the KIP's lags)."""
    assert lagassign.assign(README, "range")["metrics"]["lag"] == {"C0": 150_000, "C1": 60_000}
    out = lagassign.assign(KIP, "range")
    assert out["assignment"] == {"C0": _pairs("t0p0", "t0p1"), "C1": _pairs("t0p2")}
    assert out["metrics"]["lag"] == {"C0": 160_000, "C1": 50_000}


@pytest.mark.parametrize("strategy", ["lag", "lag-aware"])
def test_kip_lag_aware_example(strategy):
    out = lagassign.assign(KIP, strategy)
    assert out["assignment"] == {"C0": _pairs("t0p0"), "C1": _pairs("t0p1", "t0p2")}
    assert out["metrics"]["lag"] == {"C0": 100_000, "C1": 110_000}


def test_readme_example_from_offsets():
    """The README's lags given as offsets, including an uncommitted partition under earliest."""
    case = _case({"C0": ["t0"], "C1": ["t0"]}, {})
    case["partitions"] = [
        {"topic": "t0", "partition": 0, "begin": 0, "end": 100_000, "committed": None},
        {"topic": "t0", "partition": 1, "begin": 0, "end": 150_000, "committed": 100_000},
        {"topic": "t0", "partition": 2, "begin": 40_000, "end": 100_000, "committed": 40_000},
    ]
    out = lagassign.assign(case, "lag")
    assert out["assignment"] == {"C0": _pairs("t0p0"), "C1": _pairs("t0p1", "t0p2")}
    assert out["metrics"]["lag"] == {"C0": 100_000, "C1": 110_000}


# KIP-49: T1(2), T2(1), T3(2), T4(1), T5(2); C1, C4 subscribe T1..T5; C2, C3 subscribe T1, T3, T5.
ALL5, ODD = ["T1", "T2", "T3", "T4", "T5"], ["T1", "T3", "T5"]
KIP49 = _case(
    {"C1": ALL5, "C2": ODD, "C3": ODD, "C4": ALL5},
    {(t, p): 0 for t, n in (("T1", 2), ("T2", 1), ("T3", 2), ("T4", 1), ("T5", 2)) for p in range(n)},
)


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        (
            "fair",
            {
                "C1": _pairs("T2-0", "T3-0"),
                "C2": _pairs("T1-0", "T3-1"),
                "C3": _pairs("T1-1", "T5-0"),
                "C4": _pairs("T4-0", "T5-1"),
            },
        ),
        (
            "range",
            {
                "C1": _pairs("T1-0", "T2-0", "T3-0", "T4-0", "T5-0"),
                "C2": _pairs("T1-1", "T3-1", "T5-1"),
                "C3": [],
                "C4": [],
            },
        ),
        (
            "roundrobin",
            {
                "C1": _pairs("T1-0", "T3-0", "T5-0"),
                "C2": _pairs("T1-1", "T3-1", "T5-1"),
                "C3": [],
                "C4": _pairs("T2-0", "T4-0"),
            },
        ),
    ],
)
def test_kip49_example(strategy, expected):
    assert lagassign.assign(KIP49, strategy)["assignment"] == expected


# Kafka's StickyAssignor documentation (KIP-54), as quoted in kafka-python's sticky assignor.
def test_sticky_example_1_keeps_everything_when_a_member_leaves():
    parts = {(f"t{t}", p): 1 for t in range(4) for p in range(2)}
    owned = {"C0": _pairs("t0p0", "t1p1", "t3p0"), "C2": _pairs("t1p0", "t2p1")}
    # C1 (t0p1, t2p0, t3p1) has left; C0 and C2 subscribe to all four topics.
    case = _case({"C0": ["t0", "t1", "t2", "t3"], "C2": ["t0", "t1", "t2", "t3"]}, parts, owned)
    out = lagassign.assign(case, "sticky")
    assert [len(v) for v in out["assignment"].values()] == [4, 4]
    for member, kept in owned.items():
        assert all(p in out["assignment"][member] for p in kept)
    assert out["metrics"]["moves"] == 0


def test_sticky_example_2_fresh_and_after_c0_leaves():
    parts = {("t0", 0): 1, ("t1", 0): 1, ("t1", 1): 1, ("t2", 0): 1, ("t2", 1): 1, ("t2", 2): 1}
    subs = {"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]}
    fresh = lagassign.assign(_case(subs, parts), "sticky")["assignment"]
    assert fresh == {
        "C0": _pairs("t0p0"),
        "C1": _pairs("t1p0", "t1p1"),
        "C2": _pairs("t2p0", "t2p1", "t2p2"),
    }
    del subs["C0"]
    after = lagassign.assign(_case(subs, parts, {m: fresh[m] for m in subs}), "sticky")
    assert after["assignment"] == {"C1": _pairs("t0p0", "t1p0", "t1p1"), "C2": _pairs("t2p0", "t2p1", "t2p2")}
    assert after["metrics"]["moves"] == 0
