"""Kafka's StickyAssignor guarantee, reached in three short passes instead of its 1,000 lines.

1. Every member keeps the owned partitions it still subscribes to.
2. Partitions nobody keeps go, most constrained first (fewest eligible members), to the
   least-loaded eligible member.
3. While a member has two or more partitions more than an eligible member, it gives one
   away: the partitions it did not own before go first, so owned ones stay where they are.
4. Mixed subscriptions, or racks that Kafka would use (``kafka_replay.racks.sticky_uses_racks``):
   chains of hand-overs that give more owned partitions back than they take, or make more
   partitions rack-local, while the condition holds (``dealing.fewer_moves``). Without racks
   sticky moves no more than Kafka's; with racks, rack locality comes before stickiness, as in
   Kafka's, except that on one shared subscription an owned rack-local partition is kept
   first. With racks, passes 1-3 are replaced by Kafka's own rules with racks
   (``kafka_replay.racks.kafka_rack_seed`` for one shared subscription,
   ``kafka_general_rack_seed`` for mixed ones), which the chains improve.
5. Mixed subscriptions with racks (up to ``KAFKA_REPLAY_MEMBERS``): Kafka's own result is
   replayed (``kafka_replay.general``) and ours kept only where it moves no more and reads no
   fewer rack-local partitions; else Kafka's, improved where neither count worsens
   (``kafka_replay.dominance``). cooperative-sticky holds its target against Kafka's
   cooperative one, on one shared subscription with racks too (``kafka_replay.constrained``,
   Kafka's constrained builder rerun as its CooperativeStickyAssignor reruns it; no size
   limit, it is linear).
6. A fresh group without racks whose topics each have one subscription (Kafka's JMH groups):
   passes 1-3 give ``base.fresh_apart``'s layout, which is worked directly instead (same result).
The result meets Kafka's balance condition (counts within one, or no member with 2+ fewer
could take a partition of the fuller one) and moves only what that condition demands.

Spec: KIP-54, KIP-881 and Apache Kafka's ``StickyAssignor`` (its ``AbstractStickyAssignor``).

Example: C2 joins a group where C0 and C1 own three partitions each; each gives one away
and nothing else moves::

    >>> from lagassign.core.strategies.examples import example, show
    >>> owned = {"C0": ["t0-0", "t0-1", "t0-2"], "C1": ["t0-3", "t0-4", "t0-5"]}
    >>> g = example({"C0": ["t0"], "C1": ["t0"], "C2": ["t0"]}, {"t0": [1] * 6}, owned)
    >>> show(StickyStrategy().assign(g))
    C0: t0-0 t0-1
    C1: t0-3 t0-4
    C2: t0-2 t0-5
"""

from __future__ import annotations

from collections.abc import Iterable

from ..dealing.fewer_moves import fewer_moves
from ..dealing.loadbook import LoadBook, balance_counts
from ..kafka_replay.constrained import kafka_constrained_cooperative
from ..kafka_replay.dominance import dominating
from ..kafka_replay.general import kafka_general, kafka_general_cooperative
from ..kafka_replay.racks import kafka_general_rack_seed, kafka_rack_seed, sticky_uses_racks
from ..model import Assignment, GroupSnapshot, TopicPartition
from ..shared import Shared
from .base import Strategy, build, build_indexed, fresh_apart, kept_owned, shared_layout

#: mixed subscriptions with racks: above this many members sticky does not replay Kafka's
#: general builder (its balance check costs members times partitions per hand-over, so at
#: Kafka's benchmark size it would take minutes; the figures are in ``bench/README.md``)
KAFKA_REPLAY_MEMBERS = 1000

# the layouts computed once per group (see the functions that return them)
_STICKY: Shared[dict[str, list[TopicPartition]]] = Shared("sticky's layout")
_COOPERATIVE: Shared[dict[str, list[TopicPartition]]] = Shared("cooperative-sticky's target layout")
_PASSES: Shared[dict[str, list[TopicPartition]]] = Shared("sticky's passes 1-3")
_OURS: Shared[dict[str, list[TopicPartition]]] = Shared("sticky's own layout, before Kafka's is weighed")


def sticky_assignment(group: GroupSnapshot) -> dict[str, list[TopicPartition]]:
    """The sticky target assignment shared by sticky and cooperative-sticky (computed once)."""
    return shared_layout(_STICKY, group, lambda: _sticky_assignment(group))


def cooperative_sticky_assignment(group: GroupSnapshot) -> dict[str, list[TopicPartition]]:
    """cooperative-sticky's target: sticky's, except with racks (one shared subscription, or
    mixed ones), where it is held against Kafka's CooperativeStickyAssignor after its
    follow-up rebalances."""
    if not (_kafka_comparable(group) or (group.identical_subscriptions and sticky_uses_racks(group))):
        return sticky_assignment(group)
    return shared_layout(_COOPERATIVE, group, lambda: _sticky_assignment(group, cooperative=True))


def _kafka_comparable(group: GroupSnapshot) -> bool:
    """Mixed subscriptions with racks, small enough to replay Kafka's general builder."""
    return (
        not group.identical_subscriptions
        and len(group.members) <= KAFKA_REPLAY_MEMBERS
        and sticky_uses_racks(group)
    )


def sticky_passes(group: GroupSnapshot) -> dict[str, list[TopicPartition]]:
    """Passes 1-3 only (computed once): lag-optimal's sticky seed, which its own search then
    improves, so its results do not depend on pass 4."""
    return shared_layout(_PASSES, group, lambda: _sticky_book(group).assignment())


def _sticky_assignment(group: GroupSnapshot, cooperative: bool = False) -> dict[str, list[TopicPartition]]:
    """Our layout, or with racks the one that matches or beats Kafka's (pass 5)."""
    ours = _sticky_ours(group)
    if not sticky_uses_racks(group):
        return ours
    if cooperative and group.identical_subscriptions:  # one subscription with racks
        return dominating(group, ours, kafka_constrained_cooperative(group))
    if not _kafka_comparable(group):
        return ours
    kafka = kafka_general_cooperative(group) if cooperative else kafka_general(group)
    return dominating(group, ours, kafka)


def _sticky_ours(group: GroupSnapshot) -> dict[str, list[TopicPartition]]:
    """lagassign's own sticky layout, before it is held against Kafka's (computed once: sticky
    and cooperative-sticky differ only in which Kafka result they hold it against)."""

    def plan() -> dict[str, list[TopicPartition]]:
        racks = sticky_uses_racks(group)
        # one subscription with racks: Kafka's own rules with racks as the start, then pass 4
        if not racks:
            layout = sticky_passes(group)
        elif group.identical_subscriptions:
            layout = kafka_rack_seed(group)
        else:
            layout = kafka_general_rack_seed(group)
        if not (racks or (group.owner and not group.identical_subscriptions)):
            return layout
        book = LoadBook(group, layout=layout)  # pass 4 starts from there
        fewer_moves(group, book, racks)
        return book.assignment()

    return shared_layout(_OURS, group, plan)


def _sticky_book(group: GroupSnapshot) -> LoadBook:
    """Passes 1-3: owned partitions kept, the rest to the least loaded (most constrained
    first), then counts balanced giving away newly given partitions first."""
    book = LoadBook(group, layout=kept_owned(group))
    free = [tp for tp in group.assignable if tp not in book.owner]
    free.sort(key=lambda tp: (len(group.subscribers[tp.topic]), tp))
    for tp in free:
        book.add(book.least_loaded(tp.topic), tp)

    owner_before = group.owner
    balance_counts(book, lambda mid, held: _give_away_order(mid, held, owner_before))
    return book


def _give_away_order(
    mid: str, held: Iterable[TopicPartition], owner_before: dict[TopicPartition, str]
) -> list[TopicPartition]:
    """Order a member's partitions for giving away: newly given ones first, then owned, last first."""
    fresh: list[TopicPartition] = []
    owned: list[TopicPartition] = []
    for tp in held:
        (owned if owner_before.get(tp) == mid else fresh).append(tp)
    fresh.sort()
    owned.sort(reverse=True)
    return fresh + owned


class StickyStrategy(Strategy):
    name = "sticky"
    summary = "Kafka StickyAssignor: balanced counts, then keep as many owned partitions as possible"

    def assign(self, group: GroupSnapshot) -> Assignment:
        apart = fresh_apart(group)  # a fresh group, one subscription per topic: worked directly
        if apart is not None:
            return build_indexed(self.name, group, apart)
        return build(self.name, group, sticky_assignment(group))
