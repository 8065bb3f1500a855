"""The health job's alerts: a change of a group's status (``core.health.changes``) and every
failover plan, each sent once (``store.health`` claims it first) through the notifier the job
is given, and a notifier that posts to a webhook.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from ..core.clock import iso_z, utc_now
from ..core.errors import LagassignError
from ..core.health import Change, changes
from ..core.outcome import outcome_of
from .overview import Overview
from .ports import GroupsStore, HealthPort

Log = Callable[[str], None]
#: An alert as a notifier receives it (``Alert.payload``); raising means not delivered.
Send = Callable[["Alert"], None]

#: Failover plans older than this when the health job first sees them are not sent (a job
#: switched on today does not report last month's failovers).
FAILOVER_LOOKBACK = timedelta(hours=1)


@dataclass(frozen=True)
class Alert:
    """One notification: a status change of a group, or a failover."""

    kind: str  # "status" | "failover"
    cluster: str
    group: str
    subject: str
    title: str
    text: str
    status: str | None = None
    previous: str | None = None
    plan_id: int | None = None
    at: datetime = field(default_factory=utc_now)

    @property
    def payload(self) -> dict[str, Any]:
        """The JSON a webhook receives and notifiers' templates see as ``alert``."""
        return {
            "kind": self.kind,
            "cluster": self.cluster,
            "group": self.group,
            "title": self.title,
            "text": self.text,
            "status": self.status,
            "previous": self.previous,
            "plan_id": self.plan_id,
            "at": iso_z(self.at),
        }


def status_alerts(store: HealthPort, ov: Overview, partial: bool = False) -> list[Alert]:
    """The status changes due (``core.health.changes`` against the stored last statuses), and
    the new last statuses kept. ``partial``: the overview covers some groups only (a regex):
    groups it does not cover are not forgotten."""
    previous = store.last_states(ov.cluster)
    due, kept = changes(previous, ov.healths.values())
    store.save_states(ov.cluster, kept, ov.observed_at, forget_others=not partial)
    return [_status_alert(ov.cluster, c, ov.observed_at) for c in due]


def _status_alert(cluster: str, c: Change, at: datetime) -> Alert:
    h = c.health
    was = c.before[0] if c.before else None
    title = f"lagassign: group {c.group} is {h.status}" + (f" (was {was})" if was else "")
    return Alert(
        "status",
        cluster,
        c.group,
        f"{c.group}@{iso_z(at)}:{'/'.join(c.after)}",
        title,
        f"{c.describe()} (total lag {h.total_lag:,}, catch-up {h.catch_up_text})",
        status=h.status,
        previous=was,
        at=at,
    )


def failover_alerts(
    store: GroupsStore, cluster: str, now: datetime, lookback: timedelta = FAILOVER_LOOKBACK
) -> list[Alert]:
    """Every failover plan on ``cluster`` of the last ``lookback`` not sent yet, one per group."""
    plans = [
        p
        for p in store.list_plans(cluster=cluster, since=now - lookback, limit=500)
        if p["trigger"] == "failover"
    ]
    if not plans:
        return []
    details = store.plan_details(p["id"] for p in plans)
    out = []
    for p in sorted(plans, key=lambda x: x["id"]):
        for g in details.get(p["id"], {}).get("groups", []):
            o = outcome_of(details[p["id"]], g)
            why = (g.get("decision") or {}).get("reason") or ""
            text = f"{g['group']}: failover plan {p['id']}: {o.label}" + (f" ({why})" if why else "")
            out.append(
                Alert(
                    "failover",
                    cluster,
                    g["group"],
                    f"plan {p['id']} {g['group']}",
                    f"lagassign: failover of group {g['group']}: {o.label}",
                    text,
                    plan_id=int(p["id"]),
                    at=p["created_at"],
                )
            )
    return out


def webhook_sender(url: str, timeout: float = 10.0) -> Send:
    """A ``Send`` that POSTs each alert as JSON to ``url``: ``Alert.payload``, whose ``text`` is
    what Slack, Mattermost or Teams incoming webhooks show. An HTTP error or no answer raises."""
    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
        raise LagassignError(f"the alert webhook must be an http(s) URL, got {url!r}")

    def send(alert: Alert) -> None:
        body = json.dumps(alert.payload).encode()
        req = urllib.request.Request(
            url, data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as answer:
                answer.read()
        except urllib.error.HTTPError as exc:
            raise LagassignError(f"the webhook answered HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError) as exc:
            why = getattr(exc, "reason", exc)
            raise LagassignError(f"the webhook could not be reached: {why}") from None

    return send


def send_alerts(
    store: HealthPort, alerts: Iterable[Alert], send: Send | None, log: Log | None = None
) -> dict[str, int]:
    """Claim each alert (skipped when claimed before, by this run or another) and hand it to
    ``send``. An alert the notifier refused stays recorded with its error (the group's page shows
    it); it is not sent again. Counts of sent, failed and skipped."""
    counts = {"sent": 0, "failed": 0, "skipped": 0}
    say = log or (lambda _m: None)
    todo: list[tuple[int, Alert]] = []
    for a in alerts:
        claimed = store.claim_alert(
            a.cluster, a.group, a.kind, a.subject, a.text, a.at, [a.status] if a.status else None
        )
        if claimed is None:
            counts["skipped"] += 1
        else:
            todo.append((claimed, a))
    for alert_id, a in todo:
        outcome = _deliver(store, alert_id, a, send, say)
        counts[outcome] += 1
    return counts


def _deliver(store: HealthPort, alert_id: int, a: Alert, send: Send | None, say: Log) -> str:
    """Hand one claimed alert to ``send`` and record how it went: "sent" or "failed"."""
    if send is None:
        store.alert_sent(alert_id, utc_now(), error="no notifier configured")
        say(f"alert (no notifier configured): {a.text}")
        return "failed"
    try:
        send(a)
    except Exception as exc:
        store.alert_sent(alert_id, utc_now(), error=(str(exc) or type(exc).__name__)[:500])
        say(f"alert not delivered: {a.text}: {exc}")
        return "failed"
    store.alert_sent(alert_id, utc_now())
    say(f"alert sent: {a.text}")
    return "sent"
