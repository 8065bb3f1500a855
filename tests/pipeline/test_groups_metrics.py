"""The groups' metrics (pipeline.metrics) as Prometheus reads them: written by prometheus_client,
parsed back with its own parser."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from healthcases import ok_and_dead
from lagassign.core.health import group_health
from lagassign.pipeline.metrics import exposition
from lagassign.pipeline.overview import Overview, group_row
from prometheus_client.parser import text_string_to_metric_families
from testpaths import REPO

NOW = datetime(2026, 5, 1, 6, 0, tzinfo=UTC)


def _rows() -> list[dict]:
    ok, dead = ok_and_dead()
    last = {
        "plan_id": 9,
        "created_at": "2026-05-01T05:00:00Z",
        "trigger": "failover",
        "outcome": "published v4",
    }
    shown_dead = {
        "members": [],
        "instances": [{"instance": "w0", "alive": False, "state": "dead", "version": 4}],
    }
    return [
        group_row(ok, group_health(ok), {"members": [{"id": "m1"}], "instances": []}, None, NOW),
        group_row(dead, group_health(dead), shown_dead, {**last, "outcome_kind": "published"}, NOW),
    ]


def _samples(body: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(body.decode()):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_the_metrics_parse_and_say_what_the_page_says() -> None:
    ov = Overview("c-1", NOW, True, "cluster", _rows())
    runs = [{"plan_id": 9, "group": "billing", "trigger": "failover", "outcome": "published"}]
    body, content_type = exposition(ov, runs)
    assert content_type.startswith("text/plain; version=")
    got = _samples(body)

    def value(name: str, **labels: str) -> float:
        return got[(name, tuple(sorted({"cluster": "c-1", **labels}.items())))]

    assert value("lagassign_group_status", group="billing", status="DEAD") == 1
    assert value("lagassign_group_status", group="billing", status="OK") == 0
    assert value("lagassign_group_status", group="orders", status="OK") == 1
    assert value("lagassign_group_severity", group="billing") == 3
    assert value("lagassign_groups", status="DEAD") == 1 and value("lagassign_groups", status="STOP") == 0
    assert value("lagassign_group_lag_messages", group="billing") == 600
    assert value("lagassign_group_max_lag_messages", group="orders") == 10
    assert math.isinf(value("lagassign_group_catch_up_seconds", group="billing"))  # never
    assert value("lagassign_group_catch_up_seconds", group="orders") == 1.0  # 10 at 10 msg/s
    assert value("lagassign_group_consumers", group="billing", state="dead") == 1
    assert value("lagassign_group_consumers", group="orders", state="alive") == 1
    assert value("lagassign_group_plan_version", group="billing") == 4
    assert ("lagassign_group_plan_version", (("cluster", "c-1"), ("group", "orders"))) not in got
    assert value("lagassign_partition_lag_messages", group="billing", topic="u", partition="0") == 600
    assert value("lagassign_group_last_plan_outcome", group="billing", outcome="published") == 1
    assert value("lagassign_group_last_plan_outcome", group="billing", outcome="failed") == 0
    assert (
        value("lagassign_group_last_plan_timestamp_seconds", group="billing")
        == datetime(2026, 5, 1, 5, tzinfo=UTC).timestamp()
    )
    assert (
        value("lagassign_plan_outcome", plan_id="9", group="billing", trigger="failover", outcome="published")
        == 1
    )
    assert value("lagassign_observation_timestamp_seconds", source="cluster") == NOW.timestamp()
    assert value("lagassign_observation_fresh") == 1


def test_an_empty_overview_still_parses() -> None:
    body, _ = exposition(Overview("", NOW, False, "health job", []))
    got = _samples(body)
    assert got[("lagassign_observation_fresh", (("cluster", ""),))] == 0
    assert got[("lagassign_groups", (("cluster", ""), ("status", "OK")))] == 0


def test_the_sample_grafana_dashboard_asks_only_for_metrics_that_exist() -> None:
    import json
    import re

    dashboard = json.loads((REPO / "docs" / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    exprs += [a["expr"] for a in dashboard["annotations"]["list"]]
    exprs += [
        v["query"]["query"] for v in dashboard["templating"]["list"] if isinstance(v.get("query"), dict)
    ]
    asked = {name for e in exprs for name in re.findall(r"\blagassign_[a-z_]+", e)}
    body, _ = exposition(
        Overview("c-1", NOW, True, "cluster", _rows()),
        [{"plan_id": 9, "group": "billing", "trigger": "failover", "outcome": "published"}],
    )
    exported = {f.name for f in text_string_to_metric_families(body.decode())}
    assert asked and asked <= exported, asked - exported
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])
