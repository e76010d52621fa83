"""What the browser tests share: ``costtracker demo`` on a free port as a user runs it,
Debian's Chromium driven by Playwright, and a view of one page that fails on a console
error. Without Chromium the browser tests skip."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from costtracker.render.text import per_unit

# The demo replays its scenario first (about a minute on an idle machine).
DEMO_READY_WITHIN_S = 600.0
CHROMIUM = os.environ.get("COSTTRACKER_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def needs_a_browser() -> Any:
    """Playwright's sync API, or a skip saying what is missing (the ``browser`` fixture
    calls it, so every browser test skips without Chromium or Playwright)."""
    if not Path(CHROMIUM).exists():
        pytest.skip("browser tests: no Chromium (apt-get install chromium; .ci/run does)")
    return pytest.importorskip("playwright.sync_api", reason="browser tests: no Playwright")


ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "costtracker" / "examples" / "two-teams-fortnight.json"
BUDGETS = ROOT / "costtracker" / "examples" / "two-teams-fortnight.budgets.json"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def cents(value: str | Decimal) -> str:
    amount = Decimal(value).quantize(Decimal("0.01"))
    return f"-${-amount:,}" if amount < 0 else f"${amount:,}"


def signed(value: str) -> str:
    return f"+{cents(value)}" if Decimal(value) > 0 else cents(value)


def unit(value: str | Decimal) -> str:
    """A rate ($/h, $/1M tokens, $/1,000 steps) as the CLI shows it: 4 significant digits,
    at least cents (costtracker.render.text.per_unit)."""
    return per_unit(str(value))


def signed_unit(value: str) -> str:
    return f"+{unit(value)}" if Decimal(value) > 0 else unit(value)


@contextmanager
def running_demo(*extra: str) -> Iterator[str]:
    """``costtracker demo`` on a free port, as a user runs it; yields its base URL."""
    env = {**os.environ, "POWERTOOLS_METRICS_DISABLED": "true"}
    command = [sys.executable, "-m", "costtracker.cli", "demo", "--port", "0"]
    command += ["--scenario", str(SCENARIO), "--budgets", str(BUDGETS), *extra]
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    url = None
    lines: list[str] = []
    assert process.stdout is not None
    arrived: queue.Queue[str | None] = queue.Queue()

    def read(stream: Any = process.stdout) -> None:
        for line in stream:
            arrived.put(line)
        arrived.put(None)  # the demo ended

    threading.Thread(target=read, daemon=True).start()
    # The replay takes about a minute on an idle machine: wait on the dashboard's line
    # with a generous bound, not for ever.
    deadline = time.monotonic() + DEMO_READY_WITHIN_S
    while url is None and (left := deadline - time.monotonic()) > 0:
        try:
            line = arrived.get(timeout=left)
        except queue.Empty:
            break
        if line is None:
            break
        lines.append(line)
        found = re.match(r"Dashboard on (http://\S+)/", line)
        if found:
            url = found.group(1)
    try:
        if url is None:
            pytest.fail(
                f"waited {DEMO_READY_WITHIN_S:.0f} s for the demo's 'Dashboard on' line; its"
                " last output:\n" + "".join(lines[-20:])
            )
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def api(base: str, path: str) -> Any:
    with urllib.request.urlopen(base + path, timeout=60) as response:
        return json.loads(response.read())


class View:
    def __init__(self, browser: Any, base: str, width: int = 1280, height: int = 800) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.base = base
        self.errors: list[str] = []
        self.page.on(
            "console",
            lambda m: (
                self.errors.append(f"{m.type}: {m.text}")
                if m.type in ("error", "warning")
                else None
            ),
        )
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.on("requestfailed", lambda r: self.errors.append(f"failed: {r.url}"))

    def open(self, fragment: str) -> View:
        self.page.goto(f"{self.base}/{fragment}")
        self.page.wait_for_selector("main[aria-busy=false]", timeout=60_000)
        assert self.page.locator(".error").count() == 0, self.page.locator(
            ".error"
        ).all_inner_texts()
        return self

    def fig(self, name: str) -> str:
        return str(self.page.locator(f'[data-fig="{name}"]').first.inner_text()).strip()

    def shot(self, name: str) -> None:
        folder = os.environ.get("COSTTRACKER_SCREENSHOTS")
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)

    def close(self) -> None:
        assert self.errors == []
        self.page.close()
