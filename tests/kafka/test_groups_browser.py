"""The groups overview as an operator sees it: ``airflow standalone`` (API server, scheduler,
triggerer, DAG processor) with the repository's plugin and DAGs, the real broker, live consumers
of both group protocols and of an assign()-mode group, and a real headless Chromium.

* a group of each protocol and an assign()-mode group with no group member are listed alive;
* ``curl`` of the metrics endpoint parses with prometheus_client's own parser;
* a consumer stopped: its group turns STOP on the page, and one alert reaches a real HTTP
  receiver (the health job, ``lagassign_health``, every 20 s with a 20 s window);
* an instance ``kill -9``'d: the page shows it dead within seconds of its session timeout; the
  failover DAG (fired by the triggerer) publishes a plan without it, which appears on the
  group's lag chart, and is sent once.

Screenshots of the groups page and a group's page are kept in ``artifacts/`` (ignored by git, as
the other browser tests' are; ``docs/screenshots/`` holds curated copies). Needs
/usr/bin/chromium and Playwright for Python (skipped without them, failed under CI).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import followkit as fk
import pytest
from browserkit import PASSWORD, chromium_page, log_in, login_env, need_browser
from groupkit import Inflow, Subscriber
from kafkakit import Kit, airflow_env, needs, wait_until
from proctrack import end_group
from testpaths import REPO
from webhook_receiver import Receiver

pytestmark = [pytest.mark.kafka, pytest.mark.browser, pytest.mark.slow]

SHOTS = REPO / "artifacts"
SCRAPE_TOKEN = "scrape-token-for-tests"
SESSION_TIMEOUT = 5.0
HEALTH_EVERY = 20


def _api(base: str, path: str, token: str) -> Any:
    req = urllib.request.Request(f"{base}{path}", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=20) as r:
        return json.loads(r.read() or b"{}")


@pytest.fixture(scope="module")
def scene(broker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Live consumers (classic, consumer protocol, three assign()-mode instances), inflow, a
    webhook receiver, and Airflow with the health job every 20 s."""
    need_browser()
    needs(broker, "consumer protocol")
    from faultkit import free_port

    tmp = tmp_path_factory.mktemp("groups")
    kit = Kit(broker, f"g{os.urandom(3).hex()}")
    topic = kit.topic("orders", 3)
    billing, search = kit.name("billing"), kit.name("search")
    s = fk.Setup(broker, tmp, 6)
    s.publish(s.spread(["w0", "w1", "w2"]))
    receiver = Receiver()
    home = tmp / "airflow"
    home.mkdir()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **airflow_env(home, broker),
        **login_env(home, port),
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
        "LAGASSIGN_HEALTH_SCHEDULE": str(HEALTH_EVERY),
        "LAGASSIGN_HEALTH_WINDOW": str(HEALTH_EVERY),
        "LAGASSIGN_HEALTH_GROUPS": f"({kit.prefix}|s{s.tag})-.*",
        "LAGASSIGN_FAILOVER_GROUPS": f"s{s.tag}-.*",
        "LAGASSIGN_SESSION_TIMEOUT": f"{SESSION_TIMEOUT:g}",
        "LAGASSIGN_PLAN_TOPIC": s.plans,
        "LAGASSIGN_STATUS_TOPIC": s.status,
        "LAGASSIGN_ALERT_WEBHOOK": receiver.url,
        "LAGASSIGN_METRICS_TOKEN": SCRAPE_TOKEN,
        "LAGASSIGN_GROUPS_READ_TIMEOUT": "15",
    }
    env.pop("AIRFLOW_CONFIG", None)
    airflow_bin = str(Path(sys.executable).parent / "airflow")
    subprocess.run([airflow_bin, "db", "migrate"], env=env, check=True, capture_output=True, timeout=300)
    log_path = home / "standalone.log"
    consumers = [Subscriber(kit, billing, topic), Subscriber(kit, search, topic, "consumer")]
    workers = {i: s.worker(i, session_timeout_ms=int(SESSION_TIMEOUT * 1000)) for i in ("w0", "w1", "w2")}
    with open(log_path, "w") as log:
        airflow = subprocess.Popen(
            [airflow_bin, "standalone"], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        with Inflow(kit, topic, 3), fk.Load(s, rate=60):
            token = wait_until(lambda: _token(base), timeout=300, every=2)
            on = {"lagassign_health", "lagassign_failover"}

            def unpaused() -> bool:
                dags = {
                    d["dag_id"]: d for d in _api(base, "/api/v2/dags?dag_id_pattern=lagassign", token)["dags"]
                }
                return on <= set(dags) and not any(dags[d]["is_paused"] for d in on)

            wait_until(unpaused, timeout=240, every=3)
            wait_until(
                lambda: "watching 1 groups" in log_path.read_text(errors="replace"), timeout=240, every=2
            )
            yield {
                "base": base,
                "token": token,
                "kit": kit,
                "setup": s,
                "billing": billing,
                "search": search,
                "consumers": consumers,
                "workers": workers,
                "receiver": receiver,
                "log": log_path,
                "db": env["LAGASSIGN_DB_URL"],
            }
    finally:
        for c in consumers:
            c.stop()
        fk.stop_all(list(workers.values()))
        end_group(airflow)
        receiver.close()


def _token(base: str) -> str | None:
    req = urllib.request.Request(
        f"{base}/auth/token",
        data=json.dumps({"username": "admin", "password": PASSWORD}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return str(json.loads(r.read())["access_token"])
    except OSError:
        return None


def _rows(page: Any, base: str) -> dict[str, dict[str, str]]:
    """The groups page's rows: group -> status, consumers cell, type tag."""
    page.goto(f"{base}/lagassign/groups")
    out = {}
    rows = page.locator("table.groups tbody tr")
    for i in range(rows.count()):
        row = rows.nth(i)
        cells = row.locator("td")
        out[str(row.get_attribute("data-group"))] = {
            "status": str(row.get_attribute("data-status")),
            "consumers": cells.nth(6).inner_text(),
            "type": cells.nth(0).locator(".tag").inner_text() if cells.nth(0).locator(".tag").count() else "",
        }
    return out


def _group_page(page: Any, base: str, group: str) -> None:
    page.goto(f"{base}/lagassign/groups/show?group={group}&hours=1")


def test_the_groups_overview_as_an_operator_sees_it(scene: dict[str, Any]) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    base, s, receiver = scene["base"], scene["setup"], scene["receiver"]
    billing, search, workers = scene["billing"], scene["search"], s.group
    SHOTS.mkdir(parents=True, exist_ok=True)
    with chromium_page(60_000) as page:
        log_in(page, base, "/lagassign/groups")

        # 1. Both protocols and the assign()-mode group (no group member) are listed alive.
        def all_alive() -> Any:
            rows = _rows(page, base)
            ok = all(rows.get(g, {}).get("status") == "OK" for g in (billing, search, workers))
            return ok and "3 alive" in rows[workers]["consumers"] and rows

        rows = wait_until(all_alive, timeout=180, every=3)
        assert rows[search]["type"] == "consumer" and "1 alive" in rows[search]["consumers"]
        assert rows[billing]["type"] == "classic" and "1 alive" in rows[billing]["consumers"]
        assert rows[workers]["type"] == "assign()"

        # 2. curl of the metrics endpoint parses with Prometheus's own parser.
        scrape = subprocess.run(
            [
                "curl",
                "-sS",
                "--fail",
                "-H",
                f"Authorization: Bearer {SCRAPE_TOKEN}",
                f"{base}/lagassign-metrics/metrics",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert scrape.returncode == 0, scrape.stderr
        samples = {
            (x.name, tuple(sorted(x.labels.items()))): x.value
            for f in text_string_to_metric_families(scrape.stdout)
            for x in f.samples
        }
        cluster = next(dict(k[1])["cluster"] for k in samples if k[0] == "lagassign_observation_fresh")

        def sample(name: str, **labels: str) -> float:
            return samples[(name, tuple(sorted({"cluster": cluster, **labels}.items())))]

        assert sample("lagassign_group_status", group=search, status="OK") == 1
        assert sample("lagassign_group_consumers", group=workers, state="alive") == 3
        assert sample("lagassign_group_plan_version", group=workers) == 1
        refused = subprocess.run(
            ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", f"{base}/lagassign-metrics/metrics"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert refused.stdout == "401"

        # 3. A consumer stopped: its group turns STOP, and one alert arrives.
        scene["consumers"][0].stop()
        stopped = time.monotonic()

        def status_of(group: str) -> str:
            _group_page(page, base, group)
            return str(page.locator("h1 .status").get_attribute("data-status"))

        wait_until(lambda: status_of(billing) == "STOP", timeout=240, every=5)
        took_stop = time.monotonic() - stopped
        wait_until(lambda: any(b["group"] == billing for b in receiver.received()), timeout=120, every=2)
        time.sleep(2 * HEALTH_EVERY + 10)  # two more health runs: nothing more is sent
        about_billing = [b for b in receiver.received() if b["group"] == billing]
        assert [(b["kind"], b["status"], b["previous"]) for b in about_billing] == [("status", "STOP", "OK")]
        assert "nobody consumes the group" in about_billing[0]["text"]
        _group_page(page, base, billing)  # its page lists the alert, delivered
        assert "sent" in page.locator("h2:has-text('Alerts') + table").inner_text()

        # 4. An instance kill -9'd: shown dead within its session timeout (and a look).
        scene["workers"]["w1"].send_signal(signal.SIGKILL)
        killed = time.monotonic()

        def w1_dead() -> bool:
            _group_page(page, base, workers)
            return page.locator('tr[data-instance="w1"]').get_attribute("data-state") == "dead"

        wait_until(w1_dead, timeout=60, every=1)
        took_dead = time.monotonic() - killed
        assert took_dead < SESSION_TIMEOUT + 25, took_dead  # the timeout, the page's read and its cache

        # 5. Its failover (the triggerer fires lagassign_failover) appears on the group's chart.
        wait_until(lambda: (p := s.newest()) is not None and p.version == 2, timeout=180, every=2)

        def failover_charted() -> bool:
            _group_page(page, base, workers)
            return page.locator('svg.lagchart line[data-kind="failover"]').count() >= 1

        wait_until(failover_charted, timeout=120, every=3)
        assert set(s.newest().members) == {"w0", "w2"}
        wait_until(lambda: any(b["kind"] == "failover" for b in receiver.received()), timeout=120, every=2)
        wait_until(lambda: status_of(workers) == "OK", timeout=120, every=5)
        instances = {
            page.locator("tr[data-instance]").nth(i).get_attribute("data-instance"): page.locator(
                "tr[data-instance]"
            )
            .nth(i)
            .get_attribute("data-state")
            for i in range(page.locator("tr[data-instance]").count())
        }
        assert instances == {"w0": "alive", "w1": "dead", "w2": "alive"}
        page.screenshot(path=str(SHOTS / "groups-group.png"), full_page=True)
        time.sleep(HEALTH_EVERY + 5)
        failovers = [b for b in receiver.received() if b["kind"] == "failover"]
        assert len(failovers) == 1 and failovers[0]["group"] == workers
        assert failovers[0]["title"] == f"lagassign: failover of group {workers}: published v2"

        rows = _rows(page, base)
        assert rows[billing]["status"] == "STOP" and rows[search]["status"] == "OK"
        assert "2 alive" in rows[workers]["consumers"] and "1 dead: w1" in rows[workers]["consumers"]
        page.screenshot(path=str(SHOTS / "groups-list.png"), full_page=True)
        print(
            f"\nSTOP shown {took_stop:.0f} s after the consumer stopped; "
            f"w1 dead on the page {took_dead:.1f} s after kill -9"
        )
