"""lag-optimal's search picks an exchange between two small members in one pass
(``Search._best_small``): the choice of listing every candidate, sorting by (distance, kind) and
taking the first allowed one with the smallest (distance, moves) (issue 16: speed, same results).
The undo of needless moves skips ``_allowed`` where it could not refuse, and members are ranked
on one sorted list instead of heaps up to ``_RANKED``: the same end states."""

from __future__ import annotations

import random

import pytest
from lagassign.core.strategies import lagsearch
from lagassign.core.strategies.examples import example
from lagassign.core.strategies.lagsearch import Held, Search


def _group(rng: random.Random, members: int, partitions: int, spread: int, mixed: bool, owned: bool):
    ids = [f"C{i}" for i in range(members)]
    topics = ["t0", "t1"] if mixed else ["t0"]
    subscriptions = {m: (rng.sample(topics, rng.randint(1, 2)) if mixed else topics) for m in ids}
    lags = {t: [rng.randrange(spread) for _ in range(partitions)] for t in topics}
    assigned: dict[str, list[str]] = {m: [] for m in ids}
    for t in topics:
        for p in range(partitions):
            if owned and rng.random() < 0.8:
                assigned[rng.choice(ids)].append(f"{t}-{p}")
    return example(subscriptions, lags, assigned)


def _layout(rng: random.Random, group) -> dict[str, list[int]]:
    """Each partition to a random subscriber (counts need not be balanced)."""
    layout: dict[str, list[int]] = {m: [] for m in group.member_ids}
    topic = group.columns.topics
    for i in group.assignable_index:
        layout[rng.choice(group.subscribers[topic[i]])].append(i)
    return layout


def _reference(search: Search, heavy: str, light: str) -> tuple[Held, Held | None] | None:
    """Every hand-over and swap leaving both below the heavier, sorted, the first of the smallest
    (distance, moves) that ``_allowed`` allows: the choice as it was made before the one pass."""
    gap = search.load[heavy] - search.load[light]
    half = gap / 2
    options = []
    if search._may_hand_over(heavy, light):
        options += [(abs(p[0] - half), 0, p, None) for p in search.held[heavy] if 0 < p[0] < gap]
    for p in search.held[heavy]:
        for q in search.held[light]:
            if 0 < p[0] - q[0] < gap:
                options.append((abs(p[0] - q[0] - half), 1, p, q))
    options.sort(key=lambda o: (o[0], o[1]))
    best, best_key = None, None
    for dist, _, p, q in options:
        cost = search._allowed(heavy, light, p, q)
        if cost is not None and (best_key is None or (dist, cost) < best_key):
            best_key, best = (dist, cost), (p, q)
    return best


@pytest.mark.parametrize("seed", range(60))
def test_one_pass_picks_as_sorting_all_candidates(seed):
    rng = random.Random(seed)
    members = rng.randint(2, 5)
    group = _group(
        rng, members, rng.randint(2, 12), rng.choice([3, 8, 50, 10**6]), seed % 3 == 0, seed % 4 > 0
    )
    search = Search(group, _layout(rng, group), None, {m: m.encode() for m in group.member_ids})
    if seed % 2:
        search.max_moves = search.moves + rng.randint(0, 2)
    compared = 0
    for heavy in group.member_ids:
        for light in group.member_ids:
            gap = search.load[heavy] - search.load[light]
            if heavy == light or gap <= 1:
                continue
            assert search._best_small(heavy, light, gap, gap / 2) == _reference(search, heavy, light)
            compared += 1
    assert compared or max(search.load.values()) - min(search.load.values()) <= 1


@pytest.mark.parametrize("seed", range(20))
def test_undo_without_allowed_ends_as_with_it(seed, monkeypatch):
    """Sending partitions home where ``_allowed`` is not asked ends where asking it ends."""
    rng = random.Random(500 + seed)
    group = _group(rng, rng.randint(2, 6), rng.randint(5, 40), rng.choice([5, 100, 10**6]), False, True)
    layout = _layout(rng, group)
    ends = []
    for free in (True, False):
        search = Search(
            group,
            {m: list(idx) for m, idx in layout.items()},
            None,
            {m: m.encode() for m in group.member_ids},
        )
        if not free:
            monkeypatch.setattr(search, "_receives_all", False)
        search.run(0)
        ends.append((search.layout_index(), search.moves, search.attempts))
        monkeypatch.undo()
    assert ends[0] == ends[1]


@pytest.mark.parametrize("seed", range(6))
def test_ranked_list_ends_as_the_heaps(seed, monkeypatch):
    """One sorted list of members by load, or the lazy heaps: the same search."""
    rng = random.Random(900 + seed)
    group = _group(
        rng, rng.randint(70, 200), rng.randint(300, 900), rng.choice([5, 1000, 10**6]), seed % 3 == 0, True
    )
    layout = _layout(rng, group)
    ties = {m: m.encode() for m in group.member_ids}
    ends = []
    for ranked in (lagsearch._RANKED, 0):
        monkeypatch.setattr(lagsearch, "_RANKED", ranked)
        search = Search(group, {m: list(idx) for m, idx in layout.items()}, None, ties)
        assert (search._ranked is None) == (ranked == 0)
        search.run(0)
        ends.append((search.layout_index(), search.moves, search.attempts))
    assert ends[0] == ends[1]
