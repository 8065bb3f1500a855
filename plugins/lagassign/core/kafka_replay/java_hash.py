"""Java's hash codes as Kafka's collections use them: the order its HashMaps and HashSets iterate.

Kafka's builders walk members and moved partitions in ``HashMap``/``HashSet`` order (bucket,
then insertion), so replaying them step for step needs the same order.
"""

from __future__ import annotations

from ..model import TopicPartition

_MASK = 0xFFFFFFFF


def string_hash(s: str) -> int:
    """Java's ``String.hashCode`` as an unsigned 32-bit number."""
    h = 0
    for ch in s:
        h = (31 * h + ord(ch)) & _MASK
    return h


def partition_hash(tp: TopicPartition) -> int:
    """Java's ``TopicPartition.hashCode`` as an unsigned 32-bit number."""
    return (31 * (31 + tp.partition) + string_hash(tp.topic)) & _MASK


def spread(h: int) -> int:
    """``HashMap``'s spread of a hash code (its bucket is this masked by the capacity - 1)."""
    return h ^ (h >> 16)


def hashmap_order(ids: list[str]) -> list[str]:
    """Strings in the order a Java ``HashMap`` of them iterates (bucket, then insertion)."""
    cap = 16
    while len(ids) > cap * 3 // 4:
        cap *= 2
    return sorted(ids, key=lambda s: spread(string_hash(s)) & (cap - 1))
