"""The lagassign Airflow plugin: the rebalance plans pages in the Airflow 3 UI.

Airflow's plugin loader imports this module in every Airflow process, so it stays cheap: it
imports only the FastAPI app (``ui.py``; the audit store and SQLAlchemy load per request).
The app is mounted by the API server at ``/lagassign``; the nav entries show
``/lagassign/plans`` and ``/lagassign/groups`` (``groups_ui.py``) inside the Airflow UI. Every
route requires Airflow's login (see ``web.py``); the metrics (``/lagassign-metrics/metrics``)
also take a scrape token. The pages are rendered from ``templates/`` (``templating.py``).
The listener (``listener.py``, run by the scheduler) notes on each lagassign DAG run its plan
and outcome.
"""

from __future__ import annotations

from typing import Any

from airflow.plugins_manager import AirflowPlugin

from lagassign.workflow import listener
from lagassign.workflow.groups_ui import metrics_app
from lagassign.workflow.groups_ui import router as groups_router
from lagassign.workflow.ui import app

URL_PREFIX = "/lagassign"
METRICS_PREFIX = "/lagassign-metrics"
app.include_router(groups_router)  # the groups pages, behind the same login as the plans pages


class LagassignPlugin(AirflowPlugin):
    """Mounts the plans app and adds "Rebalance plans" to the Airflow UI's navigation."""

    name = "lagassign"
    listeners: list[Any] = [listener]  # noqa: RUF012
    fastapi_apps: list[dict[str, Any]] = [  # noqa: RUF012 (Airflow reads the class attributes)
        {"app": app, "url_prefix": URL_PREFIX, "name": "lagassign plans"},
        {"app": metrics_app, "url_prefix": METRICS_PREFIX, "name": "lagassign metrics"},
    ]
    external_views: list[dict[str, Any]] = [  # noqa: RUF012
        {
            "name": "Rebalance plans",
            "href": f"{URL_PREFIX}/plans",
            "url_route": "lagassign-plans",
            "destination": "nav",
        },
        {
            "name": "Consumer groups",
            "href": f"{URL_PREFIX}/groups",
            "url_route": "lagassign-groups",
            "destination": "nav",
        },
    ]
