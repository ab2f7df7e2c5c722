"""What a long command is doing, on stderr, also when stderr is not a terminal.

:func:`phase` wraps one step of a command (reading, ranking, solving, writing). When the step
is still running after ``after`` seconds (default 2), one line says what it is doing; when it
then ends, a second line says how long it took. Steps that end sooner print nothing, so short
commands stay quiet and their output is unchanged.

:class:`Counted` does the same for a step over a known number of items (runs, training jobs)
where a progress bar cannot redraw itself (a pipe, a log file): after ``after`` seconds, and
then every :data:`EVERY` seconds while it runs, a line says how many items are done.

The library itself never prints: only the command lines use this.

The lines come from a ``SIGALRM`` interval timer rather than a thread: a live thread would stop
:mod:`maxent._fork` from forking (it forks only single-threaded processes), and a forked child
does not inherit the timer. One timer serves every running step, so that steps nest: each is
announced at its own time, outermost first. Off the main thread (or without ``setitimer``) only
the closing line is printed, for a step that took longer.
"""
from __future__ import annotations

import os
import sys
import time
from contextlib import nullcontext

__all__ = ["phase", "say", "Counted"]

AFTER = 2.0
"""Seconds a step runs before it is announced."""

EVERY = 30.0
"""Seconds between the lines of a :class:`Counted` step that is still running."""


def say(text: str) -> None:
    """One line on stderr, flushed at once (a pipe or a log file sees it immediately)."""
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError, RuntimeError):
        # stderr closed, or (RuntimeError) the timer's line arrived while the program itself was
        # writing to stderr, which a buffered stream refuses: the line is dropped, the work goes on
        pass


_NEVER = float("inf")
"""The due time of a step announced once and not again."""


class _Timer:
    """The running steps' announcements on one ``SIGALRM`` timer. Each step is a list
    [due, every, announce]: ``announce()`` runs at ``due`` (perf_counter seconds), then every
    ``every`` seconds (0: once). The handler is installed with the first step and the previous
    one restored with the last."""

    def __init__(self):
        self.steps: list[list] = []
        self.previous = None
        self.pid = os.getpid()

    def start(self, after: float, every: float, announce) -> list | None:
        """The step's entry, or None when no timer can serve it (off the main thread, no
        ``setitimer``)."""
        import signal

        if not hasattr(signal, "setitimer"):
            return None
        if self.pid != os.getpid():         # a forked child: the parent's steps are not its own
            self.steps, self.previous, self.pid = [], None, os.getpid()
        try:
            previous = signal.signal(signal.SIGALRM, self._fire)
        except ValueError:                  # not the main thread, the only one that handles signals
            return None
        if not self.steps:
            self.previous = previous
        step = [time.perf_counter() + after, every, announce]
        self.steps.append(step)
        self._arm()
        return step

    def stop(self, step: list | None) -> None:
        import signal

        if step is None or not any(s is step for s in self.steps):
            return
        self.steps = [s for s in self.steps if s is not step]
        if self.steps:
            self._arm()
        else:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL if self.previous is None else self.previous)

    def _arm(self) -> None:
        import signal

        due = min(s[0] for s in self.steps)
        if due < _NEVER:
            # 0 would disarm the timer: a step already due fires at once
            signal.setitimer(signal.ITIMER_REAL, max(due - time.perf_counter(), 1e-6))
        else:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def _fire(self, signum, frame) -> None:
        now = time.perf_counter()
        for step in list(self.steps):       # outermost first
            if step[0] <= now:
                step[0] = now + step[1] if step[1] > 0 else _NEVER
                step[2]()
        if self.steps:
            self._arm()


_TIMER = _Timer()


class _Step:
    """A step of a command, used as a context manager: said on stderr (:meth:`running`) if it
    runs longer than ``after`` seconds (default :data:`AFTER`), again every ``every`` seconds
    (0: once), and (:meth:`ended`) when it ends after that long; not when it raises: the error
    is the next thing said."""

    every = 0.0

    def __init__(self, what: str, after: float | None = None):
        self.what = what
        self.after = AFTER if after is None else after
        self.start = 0.0
        self.said = False
        self.step = None

    def running(self) -> str:
        return f"{self.what} ..."

    def ended(self, elapsed: float) -> str:
        return f"{self.what}: done in {elapsed:.1f} s"

    def __enter__(self):
        self.start = time.perf_counter()
        self.step = _TIMER.start(self.after, self.every, self._announce)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        _TIMER.stop(self.step)
        elapsed = time.perf_counter() - self.start
        if exc_type is None and (self.said or elapsed > self.after):
            say(self.ended(elapsed))

    def _announce(self) -> None:
        self.said = True
        say(self.running())


def phase(what: str, after: float | None = None, enabled: bool = True):
    """Announce ``what`` on stderr if the ``with`` block runs longer than ``after`` seconds
    (default :data:`AFTER`), and say how long it took when it ends (not when it raises: the
    error is the next thing said)."""
    return _Step(what, after) if enabled else nullcontext()


class Counted(_Step):
    """A step over ``total`` items, counted with :meth:`update`, for a stderr that is not a
    terminal. Used as a context manager: after ``after`` seconds (default :data:`AFTER`) and
    then every ``every`` seconds (default :data:`EVERY`) while it runs, a line
    ``"{what}: k/total (p %) after t s"``; when it ends, if it took longer than ``after``,
    ``"{what}: k/total done in t s"`` (not when the block raises). The interface is the part of
    a tqdm bar the commands use (a ``with`` block and ``update``), so that either can stand in
    for the other."""

    def __init__(self, what: str, total: int, after: float | None = None, every: float | None = None):
        super().__init__(what, after)
        self.total = total
        self.n = 0
        self.every = EVERY if every is None else every

    def update(self, n: int = 1) -> None:
        self.n += n

    def running(self) -> str:
        pct = f" ({100 * self.n / self.total:.0f} %)" if self.total else ""
        return f"{self.what}: {self.n}/{self.total}{pct} after {time.perf_counter() - self.start:.0f} s"

    def ended(self, elapsed: float) -> str:
        return f"{self.what}: {self.n}/{self.total} done in {elapsed:.1f} s"
