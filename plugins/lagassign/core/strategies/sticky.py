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
   first. With racks, passes 1-3 follow Kafka's own rules with racks, which the chains
   improve: on one shared subscription its constrained builder's
   (``kafka_replay.racks.kafka_rack_seed``), on mixed ones its general builder's (only
   rack-local owned partitions kept, a rack-local member preferred, rack-foreign partitions
   given away first).
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

from collections.abc import Callable, Iterable

from ..dealing.fewer_moves import fewer_moves
from ..dealing.holdings import Layout
from ..dealing.loadbook import LoadBook, balance_counts
from ..kafka_replay.constrained import kafka_constrained_cooperative
from ..kafka_replay.dominance import dominating
from ..kafka_replay.general import kafka_general, kafka_general_cooperative
from ..kafka_replay.racks import kafka_rack_seed, sticky_uses_racks
from ..model import Assignment, GroupSnapshot, TopicPartition
from ..shared import Shared
from .base import Strategy, build, build_indexed, fresh_apart, kept_owned, shared_layout

#: mixed subscriptions with racks: above this many members sticky does not replay Kafka's
#: general builder (its balance check costs members times partitions per hand-over, so at
#: Kafka's benchmark size it would take minutes; the figures are in ``bench/README.md``)
KAFKA_REPLAY_MEMBERS = 1000

# the layouts computed once per group (see the functions that return them)
_PASSES: Shared[Layout] = Shared("sticky's passes 1-3")
_OURS: Shared[Layout] = Shared("sticky's own layout, before Kafka's is weighed")
_WEIGHED: Shared[Layout] = Shared("sticky's layout held against Kafka's (per Kafka builder)")


def sticky_assignment(group: GroupSnapshot, cooperative: bool = False) -> Layout:
    """sticky's layout, or with ``cooperative`` cooperative-sticky's target: our own, held
    against Kafka's result where pass 5 applies (computed once per Kafka result)."""
    kafka = _kafka_yardstick(group, cooperative)
    if kafka is None:
        return _sticky_ours(group)
    return shared_layout(_WEIGHED, group, lambda: dominating(group, _sticky_ours(group), kafka(group)), kafka)


def _kafka_yardstick(group: GroupSnapshot, cooperative: bool) -> Callable[[GroupSnapshot], Layout] | None:
    """The Kafka result pass 5 holds our layout against, if any: only with racks; on mixed
    subscriptions (small enough to replay) Kafka's general builder, or its cooperative rounds;
    on one shared subscription only cooperative-sticky's, the constrained builder's rounds."""
    if not sticky_uses_racks(group):
        return None
    if group.identical_subscriptions:
        return kafka_constrained_cooperative if cooperative else None
    if len(group.members) > KAFKA_REPLAY_MEMBERS:
        return None
    return kafka_general_cooperative if cooperative else kafka_general


def sticky_passes(group: GroupSnapshot) -> Layout:
    """Passes 1-3 only (computed once): lag-optimal's sticky seed, which its own search then
    improves, so its results do not depend on pass 4."""
    return shared_layout(_PASSES, group, lambda: _passes(group, racks=False))


def _sticky_ours(group: GroupSnapshot) -> Layout:
    """lagassign's own sticky layout, before it is held against Kafka's (computed once: sticky
    and cooperative-sticky differ only in which Kafka result they hold it against)."""

    def plan() -> Layout:
        racks = sticky_uses_racks(group)
        if not racks:
            layout = sticky_passes(group)
        elif group.identical_subscriptions:
            layout = kafka_rack_seed(group)
        else:
            layout = _passes(group, racks=True)
        if not (racks or (group.owner and not group.identical_subscriptions)):
            return layout
        return fewer_moves(group, layout, racks)  # pass 4

    return shared_layout(_OURS, group, plan)


def _passes(group: GroupSnapshot, racks: bool) -> Layout:
    """Passes 1-3: owned partitions kept, the rest to the least loaded (most constrained
    first), then counts balanced giving away newly given partitions first. With ``racks``,
    Kafka's general builder's rules (KIP-881): only rack-local owned partitions are kept, a
    partition goes to the emptiest rack-local subscriber when there is one, and a member gives
    away rack-foreign partitions before rack-local ones."""
    rack = {m.id: m.rack for m in group.members}

    def local(mid: str, tp: TopicPartition) -> bool:
        return rack[mid] in group.partitions[tp].racks

    kept = kept_owned(group)
    if racks:
        kept = {mid: [tp for tp in tps if local(mid, tp)] for mid, tps in kept.items()}
    book = LoadBook(group, layout=kept)
    subscribers = group.subscribers
    free = [tp for tp in group.assignable if tp not in book.owner]
    free.sort(key=lambda tp: (len(subscribers[tp.topic]), tp))
    for tp in free:
        near = [mid for mid in subscribers[tp.topic] if local(mid, tp)] if racks else None
        book.add(min(near, key=book.key) if near else book.least_loaded(tp.topic), tp)
    before = group.owner

    def give_away(mid: str, held: Iterable[TopicPartition]) -> list[TopicPartition]:
        """A member's partitions, first to be given away first: newly given ones, then owned
        ones, last first (with racks: rack-foreign ones first, then by partition)."""
        if racks:
            return sorted(held, key=lambda tp: (before.get(tp) == mid, local(mid, tp), tp))
        fresh = sorted(tp for tp in held if before.get(tp) != mid)
        return fresh + sorted((tp for tp in held if before.get(tp) == mid), reverse=True)

    balance_counts(book, give_away)
    return book.assignment()


class StickyStrategy(Strategy):
    name = "sticky"
    summary = "Kafka StickyAssignor: balanced counts, then keep as many owned partitions as possible"

    def assign(self, group: GroupSnapshot) -> Assignment:
        apart = fresh_apart(group)  # a fresh group, one subscription per topic: worked directly
        if apart is not None:
            return build_indexed(self.name, group, apart)
        return build(self.name, group, sticky_assignment(group))
