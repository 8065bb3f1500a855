"""Readable tables for people; machines get JSON instead."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .catchup import duration_text
from .strategies import kafka_choice


def _fmt_int(value: int) -> str:
    return f"{value:,}"


def _unassigned_note(result: dict[str, Any]) -> str:
    missing = len(result.get("unassigned", ()))
    return f"({missing} partitions unassigned)" if missing else ""


def _notes(result: dict[str, Any], best: str | None, kafka: tuple[str, str] | None) -> str:
    """The last column of a strategy's row: best (else unassigned partitions), Kafka's own."""
    notes = ["<- best" if result["strategy"] == best else _unassigned_note(result)]
    if kafka is not None and result["strategy"] == kafka[0]:
        notes.append(f"<- {kafka[1]}")
    return "  ".join(n for n in notes if n)


def evaluation_table(evaluation: dict[str, Any]) -> str:
    """One group's evaluation: a row per strategy, the best one marked, and the row that is what
    Kafka itself would do (``strategies.kafka_choice``) when the evaluation says what the
    cluster runs.

    "vs bound" is max lag over the bound for count-balanced plans (a plan that breaks the
    count guarantee can be below 1); "optimal" says no plan under the rules it keeps does better.
    """
    measured = [r["metrics"] for r in evaluation["results"] if "metrics" in r]
    timed = any("max_catch_up_s" in m for m in measured)
    head, bound = _heading(evaluation, measured, timed)
    columns = _COLUMNS if not timed else (*_COLUMNS[:4], "catch-up", *_COLUMNS[4:])
    kafka = kafka_choice(evaluation.get("group_type"), evaluation.get("assignor"))
    rows = [_row(r, bound, timed, evaluation["best"], kafka) for r in evaluation["results"]]
    return "\n".join([head, "", *_aligned([columns, *rows], {0, len(columns) - 1})])


_COLUMNS = (
    "strategy",
    "max lag",
    "vs bound",
    "optimal",
    "imbalance",
    "lag spread",
    "count spread",
    "moves",
    "",
)


def _heading(evaluation: dict[str, Any], measured: list[dict[str, Any]], timed: bool) -> tuple[str, int]:
    """The table's first line (the group, its bounds, its earliest catch-up when planned in
    time), and the bound "vs bound" divides by: the one for count-balanced plans."""
    bound = evaluation["lower_bound_max_lag"]
    balanced = max((m.get("balanced_lower_bound_max_lag", bound) for m in measured), default=bound)
    group, members, partitions = evaluation["group"], evaluation["members"], evaluation["partitions"]
    head = (
        f"group {group}: {members} members, {partitions} partitions, "
        f"lower bound on max member lag {_fmt_int(bound)}, {_fmt_int(balanced)} for count-balanced plans"
    )
    if timed:
        floor = max((m.get("lower_bound_catch_up_s") or 0 for m in measured), default=0)
        head += f"; catch-up no sooner than {duration_text(floor)}"
    return head, balanced


def _row(
    result: dict[str, Any], bound: int, timed: bool, best: str | None, kafka: tuple[str, str] | None
) -> tuple[str, ...]:
    """A strategy's cells (two for a refused one: its name and why)."""
    if "refused" in result:
        return (result["strategy"], "refused: " + result["refused"])
    m = result["metrics"]
    return (
        result["strategy"],
        _fmt_int(m["max_lag"]),
        f"{m['max_lag'] / bound:.3f}" if bound else "-",
        "yes" if m.get("optimal") else "",
        *((duration_text(m.get("max_catch_up_s")),) if timed else ()),
        f"{m['imbalance']:.4f}",
        _fmt_int(m["lag_spread"]),
        str(m["count_spread"]),
        str(m["moves"]),
        _notes(result, best, kafka),
    )


def _aligned(rows: Sequence[tuple[str, ...]], left: set[int]) -> list[str]:
    """The rows (the header first) as lines of cells two spaces apart, the columns in ``left``
    flush left and the others flush right; a row of two cells (a refused strategy) says why
    after its name."""
    widths = [max(len(row[i]) for row in rows if len(row) == len(rows[0])) for i in range(len(rows[0]))]

    def line(row: tuple[str, ...]) -> str:
        if len(row) != len(widths):
            return f"{row[0]:<{widths[0]}}  {row[1]}"
        cells = zip(row, widths, strict=True)
        return "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(cells))

    return [line(row).rstrip() for row in rows]


def plan_table(plan_id: int, decisions: list[Any], outcomes: list[dict[str, Any]]) -> str:
    """One line per group: current lag, the plan the gate chose, and what happened to it."""
    published = {o["group"]: o for o in outcomes}
    rows = [
        (
            "group",
            "current max lag",
            "imbalance",
            "decision",
            "strategy",
            "new max lag",
            "change",
            "moves",
            "published",
        )
    ]
    for d in decisions:
        o = published.get(d.group, {})
        pub = f"v{o['version']}" if o.get("published") else (o.get("reason", "-") if d.go else "-")
        rows.append(
            (
                d.group,
                _fmt_int(d.current_max_lag) if d.current_max_lag is not None else "-",
                f"{d.current_imbalance:.3f}" if d.current_imbalance is not None else "-",
                "GO" if d.go else "stop",
                d.chosen or d.candidate or "-",
                _fmt_int(d.chosen_max_lag) if d.chosen_max_lag is not None else "-",
                f"{-d.improvement:+.1%}" if d.improvement is not None else "-",
                str(d.moves) if d.moves is not None else "-",
                pub,
            )
        )
    lines = [f"plan {plan_id}: {sum(d.go for d in decisions)} of {len(decisions)} groups passed the gate", ""]
    lines += _aligned(rows, {0, 3, 4, 8})
    lines.append("")
    lines += [f"{d.group}: {d.reason}" for d in decisions]
    return "\n".join(lines)
