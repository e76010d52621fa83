"""The browser tier's fixtures: one demo (the bundled two-team fortnight with its budgets)
and one Chromium for the whole session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.support import ARGS, CHROMIUM, needs_a_browser, running_demo


@pytest.fixture(scope="session")
def demo() -> Iterator[str]:
    needs_a_browser()  # no demo to start when there is no browser to look at it
    with running_demo() as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    sync_api = needs_a_browser()
    with sync_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()
