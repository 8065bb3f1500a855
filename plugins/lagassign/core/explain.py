"""What an operator can do about a recorded error: one hint per known cause.

Plans record errors as the one line the failing code raised ("empty group (no members)",
"groups file ... does not exist"); that line says what, not what to do. ``hint`` adds the
what-to-do, for the plans page and the task logs alike. Pure: text in, text out.
"""

from __future__ import annotations

import re

_HINTS: tuple[tuple[str, str], ...] = (
    (
        r"empty group \(no members\)",
        "no consumer of this group is connected: a subscribe() group whose consumers are stopped, "
        "or an assign() group whose consumers do not announce themselves on lagassign.status "
        "(run them with PlanConsumer, or declare the group in a groups file)",
    ),
    (
        r"groups file",
        "set the groups_file parameter to a YAML file the Airflow workers can read, or leave it "
        "empty to use only discovered and announcing groups",
    ),
    (
        r"not a valid regular expression",
        "the groups parameter is a Python regular expression matched against the whole group id, "
        "e.g. orders-.* or ^(billing|audit)$",
    ),
    (
        r"(threshold|min_improvement|max_moves|exact_budget|max_catch_up_s) must be",
        "fix the value in the trigger form; each field's description gives its range",
    ),
    (
        r"BrokerUnavailable|broker|timed out|Timed out|transport|resolve",
        "the Kafka cluster did not answer: check the lagassign_kafka connection (bootstrap.servers, "
        "security settings) and that the brokers are reachable from the Airflow workers",
    ),
    (
        r"Spark job",
        "open the evaluate task's log: spark-submit's own error is near its end",
    ),
    (
        r"changed since the snapshot",
        "the group changed after the plan was computed: re-plan the group, then publish the new plan",
    ),
    (
        r"published after this run's snapshot|newer snapshot|is older than that of version",
        "a newer plan is in force: re-plan the group (its page's re-plan button) and review that plan",
    ),
    (
        r"is being published by plan|since this run saw version",
        "another run holds the next version: wait for it to finish (its plan's page says how it "
        "ended), then re-plan if still needed",
    ),
    (
        r"there is no plan \d+|has no group",
        "publish from a plan's own page: the plan number or group in the request does not exist",
    ),
)


def hint(error: str | None) -> str | None:
    """What to do about ``error``, or None when the cause is not one we know."""
    if not error:
        return None
    for pattern, text in _HINTS:
        if re.search(pattern, error, flags=re.IGNORECASE):
            return text
    return None
