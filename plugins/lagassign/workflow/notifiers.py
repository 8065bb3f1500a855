"""Alerts of the health job through Airflow's notifiers (``BaseNotifier``).

Any notifier works: a provider's (``SlackNotifier``, ``SmtpNotifier``, ``SlackWebhookNotifier``
…), or ``WebhookNotifier`` below (a JSON POST, what Slack, Mattermost and Teams incoming
webhooks and most on-call tools accept). The health job calls each notifier once per alert
with the task's context plus ``alert`` (``pipeline.alerts.Alert.payload``: kind, cluster,
group, title, text, status, previous, plan_id, at), so templated fields can say, e.g.,
``text="{{ alert.title }}: {{ alert.text }}"``.

Configure them in ``dags/lagassign_health.py`` (``make_health_dag(notifiers=[...])``), or
without editing it: ``LAGASSIGN_ALERT_WEBHOOK`` (a URL: a ``WebhookNotifier``) and
``LAGASSIGN_ALERT_NOTIFIER`` (``module:attribute``: a notifier, a list of them, or a function
returning either), set for the Airflow workers.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from airflow.sdk import BaseNotifier

from ..core.errors import LagassignError
from ..pipeline.alerts import Alert


class WebhookNotifier(BaseNotifier):
    """POST the alert as JSON to ``url``: the alert's fields, ``text`` rendered from the template
    (default: the alert's own text). Raises on an HTTP error or no answer within ``timeout``."""

    template_fields = ("url", "text")

    def __init__(self, url: str, text: str = "{{ alert.text }}", timeout: float = 10.0) -> None:
        super().__init__()
        self.url = url
        self.text = text
        self.timeout = timeout

    def notify(self, context: Any) -> None:
        import urllib.error
        import urllib.request

        payload = {**dict(context.get("alert") or {}), "text": self.text}
        req = urllib.request.Request(
            self.url,
            data=json.dumps(payload).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as answer:
                answer.read()
        except urllib.error.HTTPError as exc:
            raise LagassignError(f"the webhook answered HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise LagassignError(f"the webhook could not be reached: {getattr(exc, 'reason', exc)}") from None


def notifiers_from_env(env: Mapping[str, str] | None = None) -> list[Any]:
    """The notifiers ``LAGASSIGN_ALERT_WEBHOOK`` and ``LAGASSIGN_ALERT_NOTIFIER`` configure."""
    env = os.environ if env is None else env
    found: list[Any] = []
    url = (env.get("LAGASSIGN_ALERT_WEBHOOK") or "").strip()
    if url:
        found.append(WebhookNotifier(url))
    spec = (env.get("LAGASSIGN_ALERT_NOTIFIER") or "").strip()
    if spec:
        module, _, name = spec.partition(":")
        if not module or not name:
            raise LagassignError(f"LAGASSIGN_ALERT_NOTIFIER={spec!r}: expected module:attribute")
        try:
            value = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as exc:
            raise LagassignError(f"LAGASSIGN_ALERT_NOTIFIER={spec!r}: {exc}") from None
        if callable(value) and not isinstance(value, BaseNotifier):
            try:
                value = value()
            except Exception as exc:
                raise LagassignError(f"LAGASSIGN_ALERT_NOTIFIER={spec!r}: calling it failed: {exc}") from None
        found += list(value) if isinstance(value, list | tuple) else [value]
    for n in found:
        if not isinstance(n, BaseNotifier):
            raise LagassignError(f"{n!r} is not an Airflow notifier (BaseNotifier)")
    return found


def sender(
    notifiers: Sequence[Any], context: Mapping[str, Any] | None = None
) -> Callable[[Alert], None] | None:
    """A ``pipeline.alerts.Send`` that hands each alert to every notifier (a fresh copy each
    time: a notifier renders its templates in place); None without notifiers. When some fail,
    it raises after trying all of them, naming them."""
    if not notifiers:
        return None

    def send(alert: Alert) -> None:
        failed = []
        for n in notifiers:
            ctx = {**dict(context or {}), "alert": alert.payload}
            try:
                copy.deepcopy(n)(ctx)
            except Exception as exc:
                failed.append(f"{type(n).__name__}: {exc}")
        if failed:
            raise LagassignError("; ".join(failed))

    return send
