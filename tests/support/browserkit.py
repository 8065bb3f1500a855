"""What the browser tests share: the headless Chromium they drive (Debian's, nothing is
downloaded), the admin password of the Airflow they start, and logging in through Airflow's own
login form.

A test without Chromium or Playwright for Python is skipped, and fails under CI.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import pytest

CHROMIUM = os.environ.get("LAGASSIGN_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PASSWORD = "secret-for-tests"  # every user's password in the tests' Airflow


def login_env(home: Path, port: int, roles: Mapping[str, str] | None = None) -> dict[str, str]:
    """Airflow settings for an API server on 127.0.0.1:``port`` whose simple auth manager knows
    ``roles`` (user: role, by default one admin), every one with ``PASSWORD`` (its file in
    ``home``)."""
    roles = roles or {"admin": "admin"}
    passwords = home / "passwords.json"
    passwords.write_text(json.dumps(dict.fromkeys(roles, PASSWORD)))
    base = f"http://127.0.0.1:{port}"
    return {
        "AIRFLOW__CORE__AUTH_MANAGER": (
            "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager"
        ),
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": ",".join(f"{u}:{r}" for u, r in roles.items()),
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords),
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__API__BASE_URL": base,
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{base}/execution/",
    }


def missing(message: str) -> NoReturn:
    """Skip for a part this machine lacks; fail under CI, where every part must be there."""
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(message)
    pytest.skip(message)


def need_browser() -> None:
    """Skip (fail under CI) unless Chromium and Playwright for Python are both here."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing("Playwright for Python is not installed (pip install playwright)")
    if not Path(CHROMIUM).exists():
        missing(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")


@contextmanager
def chromium_page(timeout_ms: int, width: int = 1360) -> Iterator[Any]:
    """A page of a fresh headless Chromium (``width`` x 900, UTC), the browser closed after; skips
    (fails under CI) where Chromium or Playwright is missing."""
    need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": width, "height": 900}, timezone_id="UTC")
            page = context.new_page()
            page.set_default_timeout(timeout_ms)
            yield page
        finally:
            browser.close()


def log_in(page: Any, base: str, path: str, user: str = "admin") -> None:
    """Open ``path`` without a session, log in as ``user`` on the Airflow login page it leads
    to, and wait until Airflow has sent the browser back to ``path``."""
    page.goto(f"{base}{path}")
    page.wait_for_url("**/auth/login**")
    page.locator("input[name='username']").fill(user)
    page.locator("input[name='password']").fill(PASSWORD)
    page.locator("button[type='submit']").click()
    page.wait_for_url(f"{base}{path}")
