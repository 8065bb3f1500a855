"""The failover loop outside Airflow (``lagassign watch``): when an instance of a plan in force
dies or a new one appears, run the failover step.

``kafka.follower.TopicFollower`` follows the status and plans topics. Once a second the loop
compares each watched group's plan with its live instances (``failover.membership_change``); a
change not handled yet runs ``failover_step`` (snapshot of that group, plan, publish, audit
record). A change that failed is tried again after ``retry_after`` seconds. The Airflow
triggerer runs the same detection (``workflow.failover``).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..core.failover import MembershipChange, membership_change
from ..kafka.follower import TopicFollower
from ..kafka.status import now_ms
from ..store import AuditStore
from .failover import FailoverSettings, declared_group, failover_step

Log = Callable[[str], None]


class Watcher:
    """Detects membership changes of watched groups and runs the failover step for each."""

    def __init__(
        self,
        config: Mapping[str, Any],
        store_url: str | None,
        settings: FailoverSettings,
        base: str | Path,
        groups_regex: str | None = None,
        log: Log = print,
        timeout: float = 30.0,
        check_interval: float = 1.0,
        retry_after: float = 30.0,
    ) -> None:
        self.config = dict(config)
        self.store_url = store_url
        self.settings = settings
        self.base = base
        self.regex = re.compile(groups_regex) if groups_regex else None
        self.log = log
        self.timeout = timeout
        self.check_interval = check_interval
        self.retry_after = retry_after
        self.follower = TopicFollower(
            config, settings.plan_topic, settings.status_topic, settings.session_timeout_ms, timeout
        )
        self.handled: dict[tuple[Any, ...], float] = {}  # change -> when it was handled (monotonic)
        self.failed: dict[tuple[Any, ...], float] = {}  # change -> when to try again

    def watched(self) -> list[str]:
        groups = self.follower.liveness.groups() | set(self.follower.plans)
        return sorted(g for g in groups if self.regex is None or self.regex.fullmatch(g))

    def changes(self, since_ms: int) -> list[MembershipChange]:
        """The membership changes of the watched groups now."""
        now = now_ms()
        out = []
        for group in self.watched():
            plan = self.follower.plans.get(group)
            spec = declared_group(self.settings, group)
            change = membership_change(
                group,
                plan.members if plan else None,
                plan.version if plan else None,
                self.follower.liveness,
                now,
                pinned=list(spec.instances) if spec else None,
                announced_since_ms=since_ms,
            )
            if change is not None:
                out.append(change)
        return out

    def run(self, stop: threading.Event | None = None) -> None:
        """Watch until ``stop`` is set (or forever)."""
        stop = stop or threading.Event()
        while not self.follower.start():
            self.log(f"waiting for the plans topic {self.settings.plan_topic} to exist")
            if stop.wait(5):
                return
        try:
            since = now_ms()
            timeout_s = (self.settings.session_timeout_ms or 30_000) / 1000
            self.log(
                f"watching {len(self.watched())} groups on {self.settings.status_topic} "
                f"(session timeout {timeout_s:g}s)"
            )
            next_check = 0.0
            while not stop.is_set():
                self.follower.poll(0.2)
                if time.monotonic() < next_check:
                    continue
                next_check = time.monotonic() + self.check_interval
                for change in self.changes(since):
                    if change.key in self.handled:
                        continue
                    if time.monotonic() < self.failed.get(change.key, 0.0):
                        continue
                    self.log(f"group {change.group}: {change.describe()} (plan v{change.version})")
                    try:
                        with AuditStore(self.store_url) as store:
                            failover_step(
                                store,
                                self.config,
                                change.group,
                                self.settings,
                                self.base,
                                "lagassign watch",
                                seen=change,
                                log=self.log,
                                timeout=self.timeout,
                            )
                        self.handled[change.key] = time.monotonic()
                    except Exception as exc:  # reported, tried again later: the loop must go on
                        self.log(
                            f"group {change.group}: failover failed: {exc}; trying again in "
                            f"{self.retry_after:.0f}s"
                        )
                        self.failed[change.key] = time.monotonic() + self.retry_after
        finally:
            self.follower.close()
