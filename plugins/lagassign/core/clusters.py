"""Which Kafka cluster a plan belongs to: the key the audit store records plans and versions under.

Group ids are unique only within a cluster, so the audit ledger keeps one version line per
(cluster, group). The key is the cluster id the brokers announce (``DescribeCluster`` /
metadata), which Kafka draws at random when a cluster is formatted: staging and production, or
a cluster rebuilt from scratch, never share one. Two cases have no usable id:

* a broker that announces none (Kafka before 0.10);
* noida-db, the demo's embedded broker, which answers the same id on every instance
  (``NON_UNIQUE_IDS``): two local noida brokers would otherwise share one version line.

Those clusters are known by their bootstrap servers instead: ``bootstrap:HOST:PORT[,...]``
(sorted, so the order they are listed in does not matter). Plans recorded before lagassign knew
clusters, whose cluster could not be found again, have the empty key (``UNKNOWN_CLUSTER``): a
line of their own until an operator claims them (``lagassign plans claim``).

>>> cluster_key("lkc-3x8Pq0aYT6m5mBsJQ2a1yw", "b1:9092,b2:9092")
'lkc-3x8Pq0aYT6m5mBsJQ2a1yw'
>>> cluster_key(None, " b2:9092, b1:9092 ")
'bootstrap:b1:9092,b2:9092'
>>> cluster_key("MkU3OEVBNTctOEUyRi00", "127.0.0.1:19092")
'bootstrap:127.0.0.1:19092'
>>> cluster_label("")
'unknown'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The key of plans recorded before clusters were known and not traced back to one.
UNKNOWN_CLUSTER = ""
#: Prefix of keys made from bootstrap servers (no usable cluster id).
BOOTSTRAP_PREFIX = "bootstrap:"
#: Cluster ids that do not identify a cluster: noida-db 0.2 answers this one on every instance.
NON_UNIQUE_IDS = frozenset({"MkU3OEVBNTctOEUyRi00"})


def cluster_key(cluster_id: str | None, bootstrap_servers: str | None) -> str:
    """The audit store's key of a cluster: its id, else ``bootstrap:`` and its sorted bootstrap
    servers, else ``UNKNOWN_CLUSTER``."""
    if cluster_id and cluster_id.strip() and cluster_id.strip() not in NON_UNIQUE_IDS:
        return cluster_id.strip()
    servers = sorted({s.strip() for s in (bootstrap_servers or "").split(",") if s.strip()})
    return BOOTSTRAP_PREFIX + ",".join(servers) if servers else UNKNOWN_CLUSTER


def cluster_label(key: str | None) -> str:
    """The key for people: ``unknown`` for plans whose cluster is not known."""
    return key if key else "unknown"


def manifest_cluster(manifest: Mapping[str, Any]) -> str:
    """The cluster key of a snapshot, from its manifest (``cluster_id``, ``bootstrap_servers``)."""
    return cluster_key(manifest.get("cluster_id"), manifest.get("bootstrap_servers"))
