"""What the plan page shows of one group, as plain values for ``templates/plans/group.html``:
its outcome and the gate's decision, the actions the guard allows, what changed since its
previous plan, publications, charts, metrics per strategy, members and moves.

Values are text (the template escapes them) except times and charts, which are HTML made by
``formats.when`` and ``charts`` and marked as such.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from ..core.catchup import duration_text
from ..core.explain import hint
from ..core.inflow import lag_time_text
from ..core.outcome import outcome_of
from ..core.strategies import cluster_text, kafka_choice
from .charts import colour_of, lag_chart_svg
from .formats import fmt_int, lag_text, ratio_text, when
from .guard import OVERRIDE, PRIMARY, Guard, publish_guard
from .plan_facts import (
    BASELINE,
    Move,
    chart_series,
    compute_moves,
    dead_instances,
    owners,
    result_of,
    target_strategy,
    timed,
)
from .plan_texts import catch_up_line, changes_since, lag_change_line


def dash(value: Any) -> Any:
    """A value as the pages show it: '-' when unknown."""
    return "-" if value is None else value


def cause_view(error: str, log_href: str | None = None) -> dict[str, Any]:
    """A failure's recorded line, what to do about it (``core.explain.hint``), and its log."""
    return {"error": error, "why": hint(error), "log_href": log_href}


def group_view(
    group: Mapping[str, Any],
    plan: Mapping[str, Any],
    previous: tuple[int, Mapping[str, Any]] | None,
    lags: Mapping[tuple[str, int], int] | None,
    kind: str | None,
    times: Mapping[tuple[str, int], float] | None,
    guard: Guard | None,
) -> dict[str, Any]:
    """One group of a plan for ``group.html``'s ``section`` (see ``plans_page.group_html``)."""
    d = group.get("decision")
    out = outcome_of(plan, group)
    params = plan.get("parameters") or {}
    view: dict[str, Any] = {
        "name": group.get("group"),
        "outcome": out,
        "cluster": cluster_text(group.get("group_type"), group.get("assignor")),
        "decision": d,
        "request": bool(params.get("action")),  # a review or roll back: what was asked
        "go": bool((d or {}).get("go")),
        "reason": dash((d or {}).get("reason")),
        "outcome_detail": out.detail if out.detail not in (out.label, (d or {}).get("reason")) else "",
        "actions": None,
        "changes": None,
        "publications": publications_view(group),
        "error": cause_view(str(group["error"])) if group.get("error") else None,
    }
    if plan.get("id") is not None:
        view["actions"] = actions_view(plan, group, guard or publish_guard(plan, group, kind))
    if previous is not None:
        view["changes"] = {"plan": previous[0], "text": "; ".join(changes_since(group, previous[1]))}
    if view["error"]:
        return view
    gone = dead_instances(params.get("change")) if plan.get("trigger") == "failover" else []
    label = "plan in force" if params.get("action") == "rollback" else "current"
    view |= {
        "facts": facts(group),
        "catch_up": "; ".join(x for x in (catch_up_line(group), lag_time_text(times)) if x),
        "charts": charts(group),
        "metrics": metrics_view(group),
        "members": members_view(group),
        "moves": moves_view(group, lags, times, gone, label),
    }
    return view


def charts(group: Mapping[str, Any]) -> dict[str, Markup] | None:
    """The lag chart of current, chosen and lower bound, and of every strategy (None when no
    strategy was measured)."""
    if not chart_series(group):
        return None
    return {"main": Markup(lag_chart_svg(group)), "every": Markup(lag_chart_svg(group, every=True))}


def facts(group: Mapping[str, Any]) -> list[str]:
    """Members, partitions, the lower bound on max lag and the best strategy, as recorded."""
    if group.get("members") is None and group.get("partitions") is None:
        return []
    out = [f"{dash(group.get('members'))} members", f"{dash(group.get('partitions'))} partitions"]
    if group.get("lower_bound_max_lag") is not None:
        out.append(f"lower bound on max lag {lag_text(group.get('lower_bound_max_lag'))}")
    if group.get("best"):
        out.append(f"best {group.get('best')}")
    return out


def publications_view(group: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each publication of the group: version, strategy, state, when, forced, error."""
    return [
        {
            "version": dash(p.get("version")),
            "strategy": dash(p.get("strategy", "-")),
            "state": dash(p.get("state")),
            "at": Markup(when(p["published_at"])) if p.get("published_at") else None,
            "forced": bool(p.get("forced")),
            "error": p.get("error"),
        }
        for p in group.get("publications") or []
    ]


def move_texts(moves: Sequence[Move]) -> list[str]:
    """Moves as 'topic-3: w1 → w2' lines (for confirmations)."""
    return [f"{t}-{p}: {a or 'nobody'} → {b or 'nobody'}" for t, p, a, b in moves]


def actions_view(
    plan: Mapping[str, Any], group: Mapping[str, Any], guard: Guard, base: str = "../actions"
) -> dict[str, Any]:
    """The buttons that trigger Airflow runs: publish as ``guard`` allows (primary, an override
    behind a confirmation that shows the moves, or a line saying why not), re-plan, history."""
    name = str(group.get("group"))
    target = target_strategy(group)
    decision = group.get("decision") or {}
    cur, tgt = result_of(group, BASELINE), result_of(group, target)
    moves = compute_moves((cur or {}).get("assignment"), (tgt or {}).get("assignment")) if cur and tgt else []
    planning = not (plan.get("parameters") or {}).get("action")
    history = "../history" if base.startswith("..") else "history"
    return {
        "mode": {PRIMARY: "primary", OVERRIDE: "override"}.get(guard.mode, ""),
        "base": base,
        "plan_id": dash(plan.get("id")),
        "group": name,
        "target": dash(target),
        "why": guard.why or "",
        "change": lag_change_line(decision),
        "moves": move_texts(moves) if guard.mode == OVERRIDE else [],
        "replan": ("primary" if guard.stale else "") if planning else None,
        "history": f"{history}?group={quote(name)}",
    }


def _tags(group: Mapping[str, Any], r: Mapping[str, Any], go: bool) -> list[dict[str, str]]:
    """A strategy's tags in the metrics table: Kafka's own choice, chosen or candidate, best, optimal."""
    name = r.get("strategy")
    twin = kafka_choice(group.get("group_type"), group.get("assignor"))
    tags = []
    if twin is not None and name == twin[0]:  # broker's choice (consumer group), else Kafka's
        tags.append({"kind": "kafka", "title": "does what Kafka does for this group", "text": twin[1]})
    if name == target_strategy(group) and name != BASELINE:
        tags.append({"kind": "chosen", "title": "", "text": "chosen" if go else "candidate"})
    if name == group.get("best"):
        tags.append({"kind": "best", "title": "", "text": "best"})
    if (r.get("metrics") or {}).get("optimal"):
        tags.append(
            {"kind": "optimal", "title": "no plan under the rules it keeps does better", "text": "optimal"}
        )
    return tags


def metrics_view(group: Mapping[str, Any]) -> dict[str, Any] | None:
    """Per strategy: max lag, ratio to the lower bound, imbalance, spreads, moves; chosen and
    best marked; refusals and unconsumed partitions said in words. Results recorded without
    metrics (a roll back: assignments only) are left out; None when nothing is left."""
    go = bool((group.get("decision") or {}).get("go"))
    in_time = timed(group)
    unconsumed_now = {(str(t), int(p)) for t, p in (result_of(group, BASELINE) or {}).get("unassigned") or ()}
    rows = []
    for r in group.get("results") or ():
        if r.get("refused") is None and "max_lag" not in (r.get("metrics") or {}):
            continue  # recorded without lag (a roll back): its counts are in the members table
        name = r.get("strategy")
        row: dict[str, Any] = {
            "name": dash(name),
            "colour": colour_of(str(name)),
            "tags": _tags(group, r, go),
        }
        row["refused"] = r.get("refused")
        if row["refused"] is None:
            row |= _metric_cells(group, r, unconsumed_now, in_time)
        rows.append(row)
    return {"in_time": in_time, "rows": rows} if rows else None


def _metric_cells(
    group: Mapping[str, Any], r: Mapping[str, Any], unconsumed_now: set[tuple[str, int]], in_time: bool
) -> dict[str, Any]:
    """A measured strategy's figures in the metrics table."""
    m = r["metrics"]
    name = r.get("strategy")
    vs_bound = m.get("balanced_lower_bound_max_lag") or group.get("lower_bound_max_lag")
    moves = fmt_int(m.get("moves"))
    taken = len(unconsumed_now & set(owners(r.get("assignment") or {}))) if name != BASELINE else 0
    if taken:
        moves += f" + {taken} taken over"
    return {
        "chosen": name == target_strategy(group) and name != BASELINE,
        "unconsumed": len(r["unassigned"]) if r.get("unassigned") else 0,
        "withheld": len(r["withheld"]) if r.get("withheld") else 0,
        "max_lag": fmt_int(m.get("max_lag")),
        "vs_bound": f"{m['max_lag'] / vs_bound:.3f}×" if vs_bound and m.get("max_lag") is not None else "-",
        "catch_up": duration_text(m.get("max_catch_up_s")) if in_time and "max_catch_up_s" in m else "-",
        "imbalance": ratio_text(m.get("imbalance")),
        "lag_spread": fmt_int(m.get("lag_spread")),
        "count_spread": fmt_int(m.get("count_spread")),
        "moves": moves,
    }


def members_view(group: Mapping[str, Any]) -> dict[str, Any] | None:
    """Per member, under current and under the chosen (or candidate) plan: lag, catch-up time
    (when planned in time), partition count, and the partitions it ends with."""
    target = target_strategy(group)
    cur, tgt = result_of(group, BASELINE), result_of(group, target)
    if cur is None or tgt is None or target == BASELINE or "assignment" not in tgt:
        return None
    cm, tm = cur.get("metrics") or {}, tgt.get("metrics") or {}

    def catch_up(metrics: Mapping[str, Any], member: str) -> str:
        times = metrics.get("catch_up_s") or {}
        return duration_text(times[member]) if member in times else "-"

    def count(r: Mapping[str, Any], metrics: Mapping[str, Any], member: str) -> Any:
        known = (metrics.get("count") or {}).get(member)
        return dash(known if known is not None else len((r.get("assignment") or {}).get(member) or ()))

    rows = [
        {
            "member": m,
            "lag": f"{fmt_int((cm.get('lag') or {}).get(m))} → {fmt_int((tm.get('lag') or {}).get(m))}",
            "catch_up": f"{catch_up(cm, m)} → {catch_up(tm, m)}",
            "count": f"{count(cur, cm, m)} → {count(tgt, tm, m)}",
            "partitions": ", ".join(
                f"{t}-{p}" for t, p in sorted(tuple(tp) for tp in (tgt.get("assignment") or {}).get(m) or ())
            ),
        }
        for m in sorted(set(tgt.get("assignment") or {}) | set(cur.get("assignment") or {}))
    ]
    return {"target": target, "measured": "lag" in cm or "lag" in tm, "in_time": timed(group), "rows": rows}


def moves_view(
    group: Mapping[str, Any],
    lags: Mapping[tuple[str, int], int] | None = None,
    times: Mapping[tuple[str, int], float] | None = None,
    gone: Sequence[str] = (),
    current_label: str = "current",
) -> dict[str, Any]:
    """Moves from the current assignment to the chosen strategy (see ``plans_page.moves_table_html``):
    ``kind`` none (nothing to move to), stopped (the gate stopped it: what would move) or go."""
    target = target_strategy(group)
    cur, tgt = result_of(group, BASELINE), result_of(group, target)
    if target is None or target == BASELINE or cur is None or tgt is None or "assignment" not in tgt:
        return {"kind": "none"}
    moves = compute_moves(cur.get("assignment"), tgt.get("assignment"))

    def lag(t: str, p: int) -> str:
        text = fmt_int((lags or {}).get((t, p)))
        seconds = (times or {}).get((t, p))
        return text if seconds is None else f"{text} ({duration_text(seconds)})"

    rows = [
        {"topic": t, "partition": p, "lag": lag(t, p), "source": a, "gone": ", ".join(gone), "to": dash(b)}
        for t, p, a, b in moves
    ]
    if not (group.get("decision") or {}).get("go"):
        return {"kind": "stopped", "target": target, "rows": rows}
    taken = sum(1 for m in moves if m[2] is None)
    counts = f"{len(moves) - taken} change consumer" + (
        f", {taken} unconsumed taken over" + (f" from {', '.join(gone)} (dead)" if gone else "")
        if taken
        else ""
    )
    return {"kind": "go", "label": current_label, "target": target, "counts": counts, "rows": rows}
