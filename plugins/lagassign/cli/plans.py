"""``lagassign plans list``, ``plans show ID`` and ``plans history GROUP``: the audit trail for
people without Airflow (its text: ``cli.plans_text``); ``plans claim``: plans recorded before
lagassign knew clusters, assigned to the cluster they were made on.

Cheap to import: the store (and SQLAlchemy with it) is imported inside the handlers. Readers
never create a database: a missing store is one clear error line.
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
from . import add_commands
from .kafka import _add_connection_args, _client_config
from .plans_text import history_table, plan_text, plans_table, with_kafka_choice, with_outcomes

if TYPE_CHECKING:  # the command line starts without the pipeline
    from ..pipeline.ports import AuditTrailPort

_DB_HELP = (
    "audit store URL (default: $LAGASSIGN_DB_URL, else sqlite:///$AIRFLOW_HOME/lagassign.db, "
    "AIRFLOW_HOME defaulting to ~/airflow)"
)
_CLUSTER_HELP = "only plans of this Kafka cluster (its key as `plans list` shows it; unknown: '')"


def register(subparsers: Any) -> None:
    """Add the ``plans`` command group to the ``lagassign`` parser."""
    plans = subparsers.add_parser("plans", help="read the audit trail of rebalance plans")
    sub = add_commands(plans, "commands")

    p = sub.add_parser("list", help="plans, newest first")
    p.add_argument("--group", help="only plans that evaluated or decided this consumer group")
    p.add_argument("--cluster", help=_CLUSTER_HELP)
    p.add_argument("--since", type=_when, help="from this date or time (ISO 8601, UTC unless given)")
    p.add_argument("--until", type=_when, help="up to this time, or through this whole date")
    p.add_argument("--limit", type=_positive, default=50, help="at most this many plans (default 50)")
    p.add_argument("--json", action="store_true", help="JSON for machines instead of a table")
    p.add_argument("--db", help=_DB_HELP)
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("show", help="one plan: parameters, evaluations, decisions, publications")
    p.add_argument("id", type=_plan_id, metavar="ID", help="plan id (see `lagassign plans list`), or latest")
    p.add_argument("--json", action="store_true", help="JSON for machines instead of text")
    p.add_argument("--db", help=_DB_HELP)
    p.set_defaults(func=_cmd_show)

    p = sub.add_parser(
        "history", help="one group across plans: gate, max lag and catch-up now and under the plan"
    )
    p.add_argument("group", metavar="GROUP", help="consumer group id")
    p.add_argument("--cluster", help=_CLUSTER_HELP)
    p.add_argument("--limit", type=_positive, default=50, help="at most this many plans (default 50)")
    p.add_argument("--json", action="store_true", help="JSON for machines instead of a table")
    p.add_argument("--db", help=_DB_HELP)
    p.set_defaults(func=_cmd_history)

    p = sub.add_parser(
        "claim",
        help="assign plans of unknown cluster (recorded before lagassign knew clusters) to a cluster",
        description="Plans recorded before lagassign keyed its audit store by Kafka cluster, whose "
        "cluster could not be traced, are listed as cluster 'unknown' and form a version line of "
        "their own. Claim them for the cluster they were made on (named, or asked of its brokers) "
        "so that their versions join its line.",
    )
    p.add_argument("--cluster", metavar="KEY", help="the cluster's key (its id, as `plans list` shows it)")
    _add_connection_args(p)
    p.add_argument(
        "--plan",
        type=_positive,
        action="append",
        metavar="ID",
        help="claim only this plan (repeatable; default: every plan of unknown cluster)",
    )
    p.add_argument("--json", action="store_true", help="JSON for machines")
    p.add_argument("--db", help=_DB_HELP)
    p.set_defaults(func=_cmd_claim)


def _when(text: str) -> date | datetime:
    try:
        return date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO date (2024-05-01) or time (2024-05-01T06:00)"
        ) from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number ≥ 1")
    return value


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


def _cmd_list(args: argparse.Namespace) -> int:
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


def _plan_id(text: str) -> int | None:
    """A plan id, or None for ``latest``."""
    if text == "latest":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a plan id or 'latest', got {text!r}") from None


def _cmd_show(args: argparse.Namespace) -> int:
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


def _cmd_history(args: argparse.Namespace) -> int:
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


def _cmd_claim(args: argparse.Namespace) -> int:
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
