"""Progress of the commands on stderr (maxent.cli.progress): plain lines from a thread when
stderr is not a terminal, nothing for quick steps."""
from __future__ import annotations

import io
import sys
import threading
import time

import pytest

from maxent.cli import progress


def test_long_phases_are_announced_without_a_terminal(monkeypatch):
    # a phase over `after` seconds prints one line while running and one when it ends
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with progress.phase("quick step", after=5.0):
        pass
    assert err.getvalue() == ""
    with progress.phase("reading qrels big.txt", after=0.05):
        time.sleep(0.3)
    lines = err.getvalue().splitlines()
    assert lines[0] == "reading qrels big.txt ..."
    assert lines[1].startswith("reading qrels big.txt: done in ") and lines[1].endswith(" s")
    assert len(lines) == 2


def test_counted_steps_say_how_far_they_are_and_nest_in_phases(monkeypatch):
    # a line after `after` s and every `every` s with the count reached; an outer phase is
    # announced at its own time; no thread outlives its step
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    threads = threading.active_count()
    with progress.Lines("quick items", 3) as c:
        c.update(3)
    assert err.getvalue() == ""
    with progress.phase("solving", after=0.05):
        with progress.Lines("runs", 4, after=0.1, every=0.2) as c:
            for _ in range(4):
                time.sleep(0.15)
                c.update(1)
    lines = err.getvalue().splitlines()
    assert lines[0] == "solving ..."
    counts = [l for l in lines if l.startswith("runs: ") and " after " in l]
    assert len(counts) >= 2 and counts[0].startswith(("runs: 0/4 (0 %) after", "runs: 1/4 (25 %) after"))
    reached = [int(l.split()[1].split("/")[0]) for l in counts]
    assert reached == sorted(reached) and reached[-1] >= 2
    assert lines[-2].startswith("runs: 4/4 done in ") and lines[-1].startswith("solving: done in ")
    assert threading.active_count() == threads
    # an error inside the step: no "done" line, and the thread ends all the same
    err.truncate(0)
    err.seek(0)
    with pytest.raises(KeyError), progress.Lines("failing", 2, after=0.0):
        raise KeyError("x")
    with pytest.raises(KeyError), progress.phase("failing phase", after=0.0):
        raise KeyError("x")
    assert err.getvalue() == "failing: 0/2 (0 %) after 0 s\nfailing phase ...\n"
    assert threading.active_count() == threads


def test_progress_without_a_terminal_is_counted_lines(monkeypatch):
    # a pipe cannot redraw a bar: counted lines; --no-progress (no_bar) gives them too
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    for no_bar in (False, True):
        with progress.progress(3, "runs", no_bar=no_bar) as bar:
            assert isinstance(bar, progress.Lines)
            for _ in range(3):
                bar.update(1)
        assert bar.n == 3 and not bar._thread.is_alive()


def test_a_terminal_gets_a_tqdm_bar(monkeypatch):
    from tqdm import tqdm

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    with progress.progress(2, "runs") as bar:
        bar.update(2)
    assert isinstance(bar, tqdm) and "runs" in sys.stderr.getvalue()
