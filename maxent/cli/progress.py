"""What a long command is doing, on stderr, also when stderr is not a terminal.

:func:`phase` announces a step that runs longer than :data:`AFTER` seconds and says how long it
took; :func:`progress` counts items (a tqdm bar on a terminal, else a line every :data:`EVERY`
seconds, as a pipe cannot redraw a bar). The library itself never prints.
"""
from __future__ import annotations

import sys
import threading
import time
from contextlib import nullcontext

__all__ = ["AFTER", "EVERY", "phase", "progress", "say"]

AFTER = 2.0
"""Seconds a step runs before it is announced."""

EVERY = 30.0
"""Seconds between the lines of a counted step that is still running."""


def say(text: str) -> None:
    """One line on stderr, flushed at once; dropped if stderr is closed."""
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


class Lines:
    """A step said in plain lines by a daemon thread: after ``after`` seconds, then every
    ``every`` (0: once), and at its end if it took longer (not when it raises). With
    ``total``, the lines count the items :meth:`update` reports."""

    def __init__(self, what: str, total: int | None = None, after: float | None = None,
                 every: float | None = None):
        self.what, self.total, self.n = what, total, 0
        self.after = AFTER if after is None else after
        self.every = (EVERY if total is not None else 0.0) if every is None else every
        self.said = False
        self._stop = threading.Event()

    def update(self, n: int = 1) -> None:
        self.n += n

    def running(self) -> str:
        if self.total is None:
            return f"{self.what} ..."
        pct = f" ({100 * self.n / self.total:.0f} %)" if self.total else ""
        return f"{self.what}: {self.n}/{self.total}{pct} after {time.perf_counter() - self.start:.0f} s"

    def ended(self, elapsed: float) -> str:
        if self.total is None:
            return f"{self.what}: done in {elapsed:.1f} s"
        return f"{self.what}: {self.n}/{self.total} done in {elapsed:.1f} s"

    def _announce(self) -> None:
        self.said = True
        say(self.running())

    def _watch(self, wait: float) -> None:
        while wait > 0 and not self._stop.wait(wait):
            self._announce()
            wait = self.every

    def __enter__(self):
        self.start = time.perf_counter()
        wait = self.after
        if wait <= 0:               # announced at once, not by a thread that might start late
            self._announce()
            wait = self.every
        self._thread = threading.Thread(target=self._watch, args=(wait,), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._stop.set()
        self._thread.join()
        elapsed = time.perf_counter() - self.start
        if exc_type is None and (self.said or elapsed > self.after):
            say(self.ended(elapsed))


def phase(what: str, after: float | None = None, enabled: bool = True):
    """Announce ``what`` if the ``with`` block runs longer than ``after`` seconds, and say how
    long it took when it ends."""
    return Lines(what, after=after) if enabled else nullcontext()


def progress(total: int, desc: str, no_bar: bool = False):
    """Progress over ``total`` items (``update(1)`` per item): a tqdm bar on a terminal,
    otherwise (or with ``no_bar``) counted lines."""
    if no_bar or not sys.stderr.isatty():
        return Lines(desc, total)
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, file=sys.stderr, leave=False)
