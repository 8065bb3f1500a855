"""Ask a cluster which one it is: the key the audit store records its plans under
(``core.clusters.cluster_key``: its cluster id, else its bootstrap servers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.clusters import cluster_key
from .connection import first_metadata, with_collector


def cluster_of(config: Mapping[str, Any], timeout: float = 30.0) -> str:
    """The cluster key of the cluster ``config`` reaches, from one metadata request
    (KafkaAuthError at once on bad credentials or TLS, BrokerUnavailableError after
    ``timeout`` seconds without an answer)."""
    from confluent_kafka.admin import AdminClient

    conf, collector = with_collector(config)
    md = first_metadata(AdminClient(conf), config, collector, timeout)
    return cluster_key(md.cluster_id, config.get("bootstrap.servers"))
