"""What a long command is doing, on stderr, also when stderr is not a terminal.

:func:`phase` wraps one step of a command (reading, ranking, solving, writing). When the step
is still running after ``after`` seconds (default 2), one line says what it is doing; when it
then ends, a second line says how long it took. Steps that end sooner print nothing, so short
commands stay quiet and their output is unchanged. The library itself never prints: only the
command lines use this.
"""
from __future__ import annotations

import sys
import time
from contextlib import contextmanager

__all__ = ["phase", "say"]

AFTER = 2.0
"""Seconds a step runs before it is announced."""


def say(text: str) -> None:
    """One line on stderr, flushed at once (a pipe or a log file sees it immediately)."""
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):   # stderr closed: nothing can be shown
        pass


@contextmanager
def phase(what: str, after: float | None = None, enabled: bool = True):
    """Announce ``what`` on stderr if the ``with`` block runs longer than ``after`` seconds
    (default :data:`AFTER`).

    The announcement comes from a ``SIGALRM`` interval timer rather than a thread: a live
    thread would stop :mod:`maxent._fork` from forking (it forks only single-threaded
    processes), and a forked child does not inherit the timer. Off the main thread (or
    without ``setitimer``) only the closing line is printed, for a step that took longer.
    """
    if not enabled:
        yield
        return
    import signal

    after = AFTER if after is None else after
    start = time.perf_counter()
    said = []

    def announce(signum, frame):
        said.append(True)
        say(f"{what} ...")

    timed = hasattr(signal, "setitimer")
    if timed:
        try:
            previous = signal.signal(signal.SIGALRM, announce)
        except ValueError:              # not the main thread: signals cannot be handled here
            timed = False
    if timed:
        signal.setitimer(signal.ITIMER_REAL, max(after, 1e-6))   # 0 would disarm the timer
    try:
        yield
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        elapsed = time.perf_counter() - start
        if said or elapsed > after:
            say(f"{what}: done in {elapsed:.1f} s")
