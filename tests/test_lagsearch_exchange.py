"""lag-optimal's search decides most exchanges between large members in plain Python
(``Search._decide_python``): the same choice numpy's scoring makes, or no decision where that
choice rests on numpy's order of equally near candidates (issue 16: speed, same results)."""

from __future__ import annotations

import random

import pytest
from lagassign.core.strategies import lagsearch
from lagassign.core.strategies.examples import example
from lagassign.core.strategies.lagsearch import Search


def _group(rng: random.Random, members: int, partitions: int, spread: int, owned: bool):
    ids = [f"C{i}" for i in range(members)]
    lags = [rng.randrange(spread) for _ in range(partitions)]
    assigned: dict[str, list[str]] = {m: [] for m in ids}
    for p in range(partitions):
        if owned and rng.random() < 0.8:
            assigned[rng.choice(ids)].append(f"t0-{p}")
    return example({m: ["t0"] for m in ids}, {"t0": lags}, assigned)


def _layout(rng: random.Random, group) -> dict[str, list[int]]:
    ids = group.member_ids
    idx = list(group.assignable_index)
    rng.shuffle(idx)
    return {m: idx[k :: len(ids)] for k, m in enumerate(ids)}


@pytest.mark.parametrize("seed", range(40))
def test_python_decides_as_numpy_does(seed, monkeypatch):
    rng = random.Random(seed)
    group = _group(rng, rng.randint(2, 4), rng.randint(50, 120), rng.choice([5, 12, 40, 1000]), seed % 3 > 0)
    layout = _layout(rng, group)
    max_moves = None if seed % 4 else rng.randint(0, 30)
    search = Search(group, layout, None, {m: m.encode() for m in group.member_ids})
    search.max_moves = max_moves
    decided = undecided = 0
    assert max(len(idx) for idx in layout.values()) ** 2 > lagsearch._SMALL
    for heavy in group.member_ids:
        for light in group.member_ids:
            gap = search.load[heavy] - search.load[light]
            if heavy == light or gap <= 1 or not _numpy_scores(search, heavy, light):
                continue
            ok, choice = search._decide_python(heavy, light, gap, gap / 2)
            monkeypatch.setattr(lagsearch, "_PYTHON_DECIDES", -1)
            numpy_choice = search._best_exchange(heavy, light)
            monkeypatch.undo()
            if ok:
                decided += 1
                assert choice == numpy_choice
            else:
                undecided += 1
    assert decided + undecided


def _numpy_scores(search: Search, heavy: str, light: str) -> bool:
    return len(search.held[heavy]) * (len(search.held[light]) + 1) > lagsearch._SMALL


def _ends_as_with_numpy_alone(group, layout, monkeypatch) -> None:
    """A whole search from ``layout`` ends the same (layout, moves, attempts) whether plain
    Python decides first or numpy alone does."""
    ties = {m: m.encode() for m in group.member_ids}
    ends = []
    for decides in (lagsearch._PYTHON_DECIDES, -1):
        monkeypatch.setattr(lagsearch, "_PYTHON_DECIDES", decides)
        search = Search(group, {m: list(idx) for m, idx in layout.items()}, None, ties)
        search.run(0)
        ends.append((search.layout_index(), search.moves, search.attempts))
    assert ends[0] == ends[1]


@pytest.mark.parametrize("seed", range(12))
def test_a_whole_search_ends_as_with_numpy_alone(seed, monkeypatch):
    rng = random.Random(100 + seed)
    group = _group(rng, rng.randint(2, 5), rng.randint(50, 120), rng.choice([7, 40, 1000]), seed % 2 == 0)
    _ends_as_with_numpy_alone(group, _layout(rng, group), monkeypatch)


@pytest.mark.parametrize("seed", range(6))
def test_large_members_search_ends_as_with_numpy_alone(seed, monkeypatch):
    """Members of up to 200 partitions each: decided in plain Python first, as numpy ends."""
    rng = random.Random(700 + seed)
    members = rng.randint(2, 3)
    group = _group(
        rng, members, members * rng.randint(100, 200), rng.choice([40, 1000, 10**6]), seed % 2 == 0
    )
    _ends_as_with_numpy_alone(group, _layout(rng, group), monkeypatch)


def test_python_decides_most_exchanges_of_a_search():
    """Ties are left to numpy, but they are rare: the plain Python path is the common one."""
    rng = random.Random(5)
    counts = {True: 0, False: 0}
    for _ in range(10):
        group = _group(rng, 3, 60, 1000, True)
        search = Search(group, _layout(rng, group), None, {m: m.encode() for m in group.member_ids})
        for heavy in group.member_ids:
            for light in group.member_ids:
                gap = search.load[heavy] - search.load[light]
                if gap > 1 and _numpy_scores(search, heavy, light):
                    counts[search._decide_python(heavy, light, gap, gap / 2)[0]] += 1
    assert counts[True] > 3 * counts[False]


@pytest.mark.parametrize("seed", range(30))
def test_resplits_scored_with_numpy_as_in_python(seed):
    """A re-split's subset sums scored at once with numpy: the split the pairwise scan picks."""
    rng = random.Random(300 + seed)
    members = rng.randint(2, 3)
    group = _group(rng, members, members * rng.randint(5, 10), rng.choice([3, 10, 100, 10**6]), seed % 2 == 0)
    search = Search(group, _layout(rng, group), None, {m: m.encode() for m in group.member_ids})
    if seed % 3 == 0:
        search.max_moves = search.moves + rng.randint(0, 4)
    for heavy in group.member_ids:
        for light in group.member_ids:
            if heavy == light:
                continue
            pool = search.held[heavy] + search.held[light]
            total = search.load[heavy] + search.load[light]
            sizes = [len(search.held[heavy]), len(search.held[heavy]) - 1, len(search.held[heavy]) + 1]
            for k in (1, 2, 3):
                assert search._resplit_numpy(heavy, light, pool, sizes[:k], total) == search._resplit_python(
                    heavy, light, pool, sizes[:k], total
                )


class _Forgetful(dict):
    """A memo that keeps nothing: every re-split is worked out afresh."""

    def __setitem__(self, key, value) -> None:
        pass


class _Counting(dict):
    hits = 0

    def __contains__(self, key) -> bool:
        found = super().__contains__(key)
        _Counting.hits += found
        return found


@pytest.mark.parametrize("seed", range(24))
def test_resplits_remembered_end_as_worked_out_afresh(seed):
    """A re-split's answer is kept for the same two members, partitions, counts and moves:
    a whole search ends as one that works each out again (same layout, moves, work)."""
    rng = random.Random(700 + seed)
    members = rng.randint(2, 6)
    group = _group(rng, members, members * rng.randint(3, 9), rng.choice([5, 30, 1000]), seed % 2 == 0)
    layout = _layout(rng, group)
    ties = {m: m.encode() for m in group.member_ids}
    spare = rng.randint(0, 6) if seed % 3 == 0 else None
    ends = []
    for memo in (_Counting, _Forgetful):
        search = Search(group, {m: list(idx) for m, idx in layout.items()}, None, ties)
        if spare is not None:
            search.max_moves = search.moves + spare
        search._resplits = memo()
        search.run(0)
        ends.append((search.layout_index(), search.moves, search.attempts))
    assert ends[0] == ends[1]


def test_resplits_are_remembered():
    _Counting.hits = 0
    for seed in range(24):
        test_resplits_remembered_end_as_worked_out_afresh(seed)
    assert _Counting.hits > 0


@pytest.mark.parametrize("seed", range(30))
def test_resplit_floor_bounds_every_split(seed):
    """``_resplit_floor`` never exceeds the heavier side of a split of the sizes it is given."""
    rng = random.Random(900 + seed)
    n = rng.randint(1, 9)
    lags = sorted(rng.randrange(rng.choice([3, 50, 10**6])) for _ in range(n))
    total = sum(lags)
    sizes = rng.sample(range(-1, n + 2), rng.randint(1, 3))
    floor = lagsearch._resplit_floor(lags, sizes, total)
    worst = [
        max(s, total - s)
        for mask in range(1 << n)
        if bin(mask).count("1") in sizes
        for s in [sum(lg for i, lg in enumerate(lags) if mask >> i & 1)]
    ]
    if not worst:
        assert floor is None
    else:
        assert floor is not None and floor <= min(worst)


@pytest.mark.parametrize("seed", range(16))
def test_resplits_skipped_by_the_floor_end_as_worked_out(seed, monkeypatch):
    """Re-splits the floor rules out are the ones the subset sums find nothing for: a whole
    search ends the same without the floor."""
    rng = random.Random(1100 + seed)
    members = rng.randint(2, 5)
    group = _group(rng, members, members * rng.randint(3, 9), rng.choice([5, 30, 1000]), seed % 2 == 0)
    layout = _layout(rng, group)
    ties = {m: m.encode() for m in group.member_ids}
    ends = []
    for floor in (lagsearch._resplit_floor, lambda lags, sizes, total: None if not lags else -1):
        monkeypatch.setattr(lagsearch, "_resplit_floor", floor)
        search = Search(group, {m: list(idx) for m, idx in layout.items()}, None, ties)
        search.run(0)
        ends.append((search.layout_index(), search.moves, search.attempts))
    assert ends[0] == ends[1]
