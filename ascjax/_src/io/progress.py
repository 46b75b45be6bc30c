"""The one progress bar of the command line's long jobs."""

from __future__ import annotations

import sys
import time
from typing import Any


def rate_text(rate: float) -> str:
    """Items per second as a person reads it: slow jobs (the study's cells take seconds each)
    as seconds per item, never "0/s"."""
    if rate <= 0:
        return "starting"
    if rate < 1:
        return f"{1 / rate:.1f} s each"
    return f"{rate:,.0f}/s" if rate >= 10 else f"{rate:.1f}/s"


class Progress:
    """A one-line progress bar on stderr (items done, rate), redrawn at most 5 times/s.

    Shared by the bulk runs and the precision study; no dependency needed for one line.
    """

    def __init__(self, total: int, label: str, *, enabled: bool, unit: str = "registers",
                 stream: Any = None):
        self.total, self.label, self.enabled, self.unit = total, label, enabled, unit
        self.stream = stream if stream is not None else sys.stderr
        self.done, self.start, self.shown = 0, time.perf_counter(), 0.0

    def update(self, count: int = 1, note: str = "") -> None:
        """``count`` more done; ``note`` says what (shown after the rate)."""
        self.done += count
        now = time.perf_counter()
        if self.enabled and (now - self.shown > 0.2 or self.done >= self.total):
            self.shown = now
            frac = self.done / self.total if self.total else 1.0
            rate = self.done / max(now - self.start, 1e-9)
            bar = "#" * int(30 * frac)
            self.stream.write(f"\r{self.label} [{bar:<30}] {100 * frac:5.1f}% "
                              f"{self.done}/{self.total} {self.unit}, {rate_text(rate)} "
                              f"{note:<24}")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()

