"""What a plan did for one group, in one badge that reads the same on every surface.

The plans list, the plan page, a group's history, ``lagassign plans list/show``, the run's
final log line and its Airflow note all call ``outcome_of``: one definition, so no surface can
say "published" where nothing was. It is derived from what the audit store records for the
plan and group: the plan's status and error, the group's evaluation error, the gate's decision
and the publish step's outcome line (``publishing.decide_publication`` reasons, or the
ledger's refusal), and the group's publications. Pure: plain dicts in, an ``Outcome`` out.

Kinds, best first: ``published`` (published vN), ``dry-run`` (dry run: would publish vN),
``unchanged``, ``stale`` (refused: stale), ``held`` (refused: version held), ``members``
(refused: group has members: Kafka would refuse its consumers' commits), ``skipped``
(a subscribe() group, or one that changed since its snapshot), ``off`` (apply off), ``stop``
(gate stop), ``failed`` (failed: reason), and while a run is under way ``running`` and
``publishing`` (a version reserved, not yet confirmed on the topic).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

PUBLISHED, DRY_RUN, UNCHANGED, STALE, HELD = "published", "dry-run", "unchanged", "stale", "held"
SKIPPED, OFF, STOP, FAILED, RUNNING, PUBLISHING = "skipped", "off", "stop", "failed", "running", "publishing"
MEMBERS = "members"  # refused: the group has live members of the group protocol

#: Kinds after which nothing was published although someone asked for it: a run whose only
#: outcomes are of these kinds did not do what it was asked.
REFUSED = frozenset({STALE, HELD, MEMBERS, FAILED})

#: Kinds that need nobody's attention (the run did what it was asked, even if that was nothing).
QUIET = frozenset({PUBLISHED, DRY_RUN, UNCHANGED, OFF, STOP, SKIPPED})

_VERSION = re.compile(r"\bv(?:ersion)?\s*(\d+)\b")
_SHORT_REASON = 80


@dataclass(frozen=True)
class Outcome:
    """One group's outcome: ``kind`` (for styling and tests), ``label`` (the badge text, the
    same everywhere), the version concerned (if any) and ``detail`` (the full recorded line)."""

    kind: str
    label: str
    version: int | None = None
    detail: str = ""

    def line(self) -> str:
        """The badge and, where it adds something, the recorded detail: for logs and the CLI."""
        if not self.detail or self.detail == self.label:
            return self.label
        return f"{self.label} ({self.detail})"


def outcome_of(plan: Mapping[str, Any], group: Mapping[str, Any]) -> Outcome:
    """The outcome of ``group`` (a ``get_plan`` group dict) in ``plan`` (its plan dict)."""
    pubs = list(group.get("publications") or ())
    done = [p for p in pubs if p.get("state") == "published"]
    if done:
        version = int(done[-1]["version"])
        return Outcome(PUBLISHED, f"published v{version}", version, _text(_decision(group).get("outcome")))
    pending = [p for p in pubs if p.get("state") == "pending"]
    if pending:
        version = int(pending[-1]["version"])
        return Outcome(
            PUBLISHING, f"publishing v{version}", version, "reserved; not yet confirmed on the topic"
        )
    if group.get("error"):
        return _failed(f"not evaluated: {group['error']}")
    decision = _decision(group)
    recorded = _text(decision.get("outcome"))
    if recorded:
        return classify(recorded, pubs)
    failed_pubs = [p for p in pubs if p.get("state") == "failed"]
    if failed_pubs:
        return _failed(str(failed_pubs[-1].get("error") or "the plans topic refused it"))
    status = plan.get("status")
    if status == "running":
        return Outcome(RUNNING, "running", None, "the run is under way")
    if not decision:
        if status == "failed":
            return _failed(str(plan.get("error") or "the run failed"))
        return Outcome(
            RUNNING if status is None else FAILED, "no decision", None, "no gate decision recorded"
        )
    if not decision.get("go"):
        return Outcome(STOP, "gate stop", None, _text(decision.get("reason")))
    if status == "failed":
        return _failed(str(plan.get("error") or "the run failed before publishing"))
    params = plan.get("parameters") or {}
    if not params.get("apply", False) and "action" not in params:
        return Outcome(OFF, "apply off", None, "the gate said go; apply was off, so it was recorded only")
    return Outcome(FAILED, "failed: no outcome recorded", None, "the publish step recorded nothing")


def classify(text: str, publications: Iterable[Mapping[str, Any]] = ()) -> Outcome:
    """The outcome a recorded publish line stands for (the lines ``decide_publication`` and the
    ledger write, in this and earlier versions)."""
    low = text.lower()
    version = _version(text)
    if low.startswith("published"):
        return Outcome(PUBLISHED, f"published v{version}" if version else "published", version, text)
    if low.startswith("dry run"):
        label = f"dry run: would publish v{version}" if version else "dry run"
        return Outcome(DRY_RUN, label, version, text)
    if low.startswith("unchanged"):
        return Outcome(UNCHANGED, "unchanged", version, text)
    if "apply is off" in low:
        return Outcome(OFF, "apply off", None, text)
    if "subscribe() group" in low:
        return Outcome(SKIPPED, "skipped: subscribe() group", None, text)
    if "live member(s) of the group protocol" in low:
        return Outcome(MEMBERS, "refused: group has members", None, text)
    if "changed since the snapshot" in low:
        return Outcome(SKIPPED, "skipped: group changed", None, text)
    if "is being published" in low or "since this run saw version" in low or "recorded concurrently" in low:
        return Outcome(HELD, "refused: version held", None, text)
    if "published after this run's snapshot" in low or "newer snapshot" in low or "is older than" in low:
        return Outcome(STALE, "refused: stale", None, text)
    if low.startswith("failed"):
        return _failed(text.split(":", 1)[1].strip() if ":" in text else text)
    failed = [p for p in publications if p.get("state") == "failed"]
    if failed:
        return _failed(str(failed[-1].get("error") or text))
    return Outcome(FAILED, "failed: unknown outcome", None, text)


def summary(outcomes: Iterable[tuple[str, Outcome]]) -> str:
    """One line for a run's note and final log line: each distinct badge with its groups,
    e.g. ``published v3: orders; gate stop: billing, audit`` (at most a few names per badge)."""
    by_label: dict[str, list[str]] = {}
    for group, outcome in outcomes:
        by_label.setdefault(outcome.label, []).append(group)
    if not by_label:
        return "no group planned"
    parts = []
    for label, groups in by_label.items():
        names = ", ".join(groups[:3]) + (f" and {len(groups) - 3} more" if len(groups) > 3 else "")
        parts.append(f"{label}: {names}")
    return "; ".join(parts)


def run_succeeded(outcomes: Iterable[Outcome]) -> bool:
    """Whether a run did what it was asked: no group failed or was refused."""
    return not any(o.kind in REFUSED for o in outcomes)


def _decision(group: Mapping[str, Any]) -> Mapping[str, Any]:
    return group.get("decision") or {}


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if value else ""


def _version(text: str) -> int | None:
    found = _VERSION.search(text)
    return int(found.group(1)) if found else None


def _failed(reason: str) -> Outcome:
    reason = " ".join(reason.split())
    short = reason if len(reason) <= _SHORT_REASON else reason[: _SHORT_REASON - 1].rstrip() + "…"
    return Outcome(FAILED, f"failed: {short}", None, reason)
