"""``lagassign plans list``, ``plans show ID`` and ``plans history GROUP``: the audit trail for
people without Airflow (its text: ``cli.plans_text``); ``plans claim``: plans recorded before
lagassign knew clusters, assigned to the cluster they were made on.

Their arguments are in ``cli.plans_args``; this module is imported when one of them runs. The
store (and SQLAlchemy with it) is imported inside the handlers. Readers never create a
database: a missing store is one clear error line.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from ..core.errors import LagassignError
from ..kafka.cluster import cluster_of
from .kafka import _client_config
from .plans_text import history_table, plan_text, plans_table, with_kafka_choice, with_outcomes

if TYPE_CHECKING:  # the command line starts without the pipeline
    from ..pipeline.ports import AuditTrailPort


def _read(args: argparse.Namespace, query: Callable[[Any], Any]) -> Any:
    """Run one read against the store; a database failure becomes one line (no traceback)."""
    from sqlalchemy.exc import DBAPIError

    from ..store import AuditStore

    with AuditStore(args.db, create=False) as store:
        try:
            return query(store)
        except DBAPIError as exc:
            first = (str(exc.orig).strip().splitlines() or [type(exc.orig).__name__])[0]
            raise LagassignError(f"audit store {store.safe_url}: {first}") from None


def cmd_list(args: argparse.Namespace) -> int:
    """``lagassign plans list``: plans, newest first (a table, or JSON)."""

    def query(store: AuditTrailPort) -> list[dict[str, Any]]:
        found = store.list_plans(
            group=args.group, since=args.since, until=args.until, limit=args.limit, cluster=args.cluster
        )
        return with_outcomes(found, store.plan_details(p["id"] for p in found))

    plans = _read(args, query)
    if args.json:
        _dump(plans)
    elif not plans:
        narrowed = any(v is not None for v in (args.group, args.cluster, args.since, args.until))
        print(f"no plans {'match in' if narrowed else 'in'} the audit store {_store_url(args)}")
    else:
        print(plans_table(plans, with_cluster=args.group is not None))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """``lagassign plans show ID``: one plan in full (text, or JSON)."""

    def query(store: AuditTrailPort) -> dict[str, Any]:
        if args.id is not None:
            return store.get_plan(args.id)
        newest = store.list_plans(limit=1)
        if not newest:
            from ..store import PlanNotFoundError

            raise PlanNotFoundError("the audit store holds no plan yet")
        return store.get_plan(newest[0]["id"])

    plan = _read(args, query)
    if args.json:
        _dump(with_kafka_choice(plan))
    else:
        print(plan_text(plan))
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    """``lagassign plans history GROUP``: one group across plans (a table, or JSON)."""
    rows = _read(args, lambda store: store.group_history(args.group, limit=args.limit, cluster=args.cluster))
    if args.json:
        _dump(rows)
    elif not rows:
        print(f"no plan has looked at group {args.group}")
    else:
        print(history_table(rows))
    return 0


def _store_url(args: argparse.Namespace) -> str:
    """The store's URL as people may see it (no password)."""
    import sqlalchemy as sa

    from ..store import resolve_url

    return sa.make_url(resolve_url(args.db)).render_as_string(hide_password=True)


def cmd_claim(args: argparse.Namespace) -> int:
    """``lagassign plans claim``: plans of unknown cluster assigned to the one named or reached."""
    from ..store import AuditStore

    if args.cluster is not None and args.bootstrap_server:
        raise LagassignError("give --cluster or --bootstrap-server, not both")
    if args.cluster is not None:
        cluster = args.cluster.strip()
    elif args.bootstrap_server or args.config or args.config_file:
        cluster = cluster_of(_client_config(args), args.timeout)
    else:
        raise LagassignError("name the cluster: --cluster KEY, or --bootstrap-server HOST:PORT to ask it")
    with AuditStore(args.db, create=False) as store:
        done = store.claim_cluster(cluster, args.plan)
    if args.json:
        _dump(done)
    elif not done["plans"]:
        print("no plan of unknown cluster to claim")
    else:
        ids = ", ".join(str(i) for i in done["plans"])
        plans, pubs = len(done["plans"]), done["publications"]
        print(
            f"claimed {plans} plan{'s' * (plans != 1)} ({ids}) and {pubs} publication{'s' * (pubs != 1)} "
            f"for cluster {done['cluster']}"
        )
    return 0


def _dump(value: Any) -> None:
    json.dump(value, sys.stdout, default=_json_default, indent=2)
    sys.stdout.write("\n")


def _json_default(value: Any) -> str:
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")
