"""A one-line progress bar on a terminal; silent when not a TTY or asked to be."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(
        self, total: int, label: str, enabled: bool = True, stream: TextIO | None = None
    ) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled and self.stream.isatty() and total > 0
        self.total, self.label, self.done = total, label, 0
        self._last = 0.0

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.enabled and (now - self._last > 0.1 or self.done >= self.total):
            self._last = now
            width = 30
            filled = width * self.done // self.total
            self.stream.write(
                f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}"
            )
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
