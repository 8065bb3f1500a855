"""The evaluate task's log says what the Spark job found (defect 8 of issue 14): one line per
group, capped, and a driver log config that keeps Spark's start-up lines out of it.

The Spark job itself was checked by hand with spark-submit (see the report); these tests pin the
pieces it uses, without starting a JVM.
"""

from __future__ import annotations

from pathlib import Path

from lagassign.spark.submit import log_config, spark_conf
from lagassign.tables.evaluations import group_lines


def test_one_line_per_group_then_how_many_more() -> None:
    rows = [
        {"group": "a", "current": 3170, "best": "lag-optimal", "best_lag": 1140, "error": None},
        {"group": "b", "current": None, "best": None, "best_lag": None, "error": "empty group (no members)"},
        {"group": "c", "current": None, "best": None, "best_lag": None, "error": None},
    ]
    assert group_lines(rows, 5, limit=3) == [
        "group a: best lag-optimal, max lag 3,170 now -> 1,140",
        "group b: not evaluated: empty group (no members)",
        "group c: no strategy could serve it",
        "... and 2 more groups (the plans page has them all)",
    ]
    assert group_lines(rows[:1], 1) == ["group a: best lag-optimal, max lag 3,170 now -> 1,140"]


def test_the_driver_logs_warnings_only_from_its_first_line() -> None:
    path = log_config()
    assert path is not None and path.name == "log4j2.properties"
    text = Path(path).read_text()
    assert "rootLogger.level = warn" in text
    assert (
        f"-Dlog4j2.configurationFile={path.as_uri()}" in spark_conf()["spark.driver.extraJavaOptions"].split()
    )
