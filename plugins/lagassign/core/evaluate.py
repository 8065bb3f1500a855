"""The Python face of the case contract: ``assign`` and ``evaluate`` on case objects."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from operator import itemgetter
from typing import Any

from .case import parse_case
from .errors import StrategyRefusedError
from .model import GroupSnapshot, gc_paused
from .results import GroupEvaluation, PairTexts, StrategyResult, best_of
from .scoring import balanced_lower_bound_max_lag, lower_bound_max_lag, reads_subscribed_topics, score_layout
from .shared import Shared
from .strategies import applicable_options, get_strategy, strategy_names


@gc_paused
def run_strategy(
    group: GroupSnapshot,
    strategy: str,
    lower_bound: int | None = None,
    balanced_bound: int | None = None,
    **options: Any,
) -> StrategyResult:
    """Run one strategy on a parsed group: its assignment, scored."""
    assignment = get_strategy(strategy, **options).assign(group)
    positions = assignment.positions(group)  # once: made anew each time for a non-indexed one
    metrics, missing = score_layout(group, assignment, lower_bound, balanced_bound, positions)
    texts = _pair_texts(group)
    withheld = assignment.withheld  # (topic, partition) tuples, as [topic, partition] lists below
    return StrategyResult(  # its assignment pairs are made from the layout if read
        strategy,
        None,
        metrics,
        list(map(list, withheld)) if withheld is not None else None,
        [list(texts.pairs[i]) for i in missing] if missing else None,
    ).with_layout(texts, positions)


def _pair_texts(group: GroupSnapshot) -> PairTexts:
    """The group's ``PairTexts``, one for all its results: each index's (topic, partition) as a
    plain tuple, the cheapest source of a result's ``[topic, partition]`` lists."""
    columns = group.columns
    return _PAIR_TEXTS.get(group, lambda: PairTexts(list(zip(columns.topics, columns.numbers, strict=True))))


_PAIR_TEXTS: Shared[PairTexts] = Shared("[topic, partition] texts of the group's partitions")


@gc_paused
def assign(case: Mapping[str, Any], strategy: str, **options: Any) -> dict[str, Any]:
    """Assign the case's partitions with one strategy: the output object of docs/ARCHITECTURE.md."""
    return run_strategy(parse_case(case), strategy, **options).to_dict()


def respects_subscriptions(group: GroupSnapshot, result: StrategyResult) -> bool:
    """Every partition with a member subscribed to its topic. Only ``current`` can break this:
    it keeps partitions as they are, also those of a topic their member no longer subscribes
    to, which the next rebalance takes away anyway."""
    topics = group.topics_of
    texts = _PAIR_TEXTS.peek(group)
    positions = result.positions_on(texts) if texts is not None else None
    if positions is None:
        assignment = result.assignment or {}
        return all(topics[mid].issuperset(map(itemgetter(0), tps)) for mid, tps in assignment.items())
    # a result made here (run_strategy): read its partitions' topics off the group's columns,
    # without making its [topic, partition] pairs
    return reads_subscribed_topics(group, positions)


@gc_paused
def evaluate_group(
    group: GroupSnapshot, strategies: Iterable[str] | None = None, **options: Any
) -> GroupEvaluation:
    """Every strategy on one group; refusals are reported, not raised; the best is named
    (``results.best_of``, among complete results that respect subscriptions). ``options``
    (e.g. max_moves) go to the strategies that take them.
    """
    names = list(strategies) if strategies is not None else strategy_names()
    bound = lower_bound_max_lag(group)
    balanced = balanced_lower_bound_max_lag(group)
    results = []
    for name in names:
        try:
            results.append(run_strategy(group, name, bound, balanced, **applicable_options(name, options)))
        except StrategyRefusedError as exc:
            results.append(StrategyResult(name, refused=str(exc)))
    best = best_of(results, lambda r: r.complete and respects_subscriptions(group, r))
    return GroupEvaluation(
        group.group,
        tuple(results),
        len(group.members),
        len(group.assignable_index),  # a count: no TopicPartition made for it
        best.strategy if best else None,
        bound,
    )


@gc_paused
def evaluate(
    case: Mapping[str, Any], strategies: Iterable[str] | None = None, **options: Any
) -> dict[str, Any]:
    """Every strategy (or the given ones) on a case object: ``evaluate --json``'s object."""
    return evaluate_group(parse_case(case), strategies, **options).to_dict()
