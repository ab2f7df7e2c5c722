"""Reading and ranking run files in forked processes (``python -m maxent.evaluate --jobs``).

Runs are read and ranked independently of one another (:func:`maxent.trec.read_run`,
:func:`maxent.ranked.rank_one`), so after the imports and the qrels the command can fork
(POSIX ``os.fork``: copy-on-write, the imported modules and the qrels' hash index are
shared, nothing is imported or built twice) children that each read and rank a share of
the files and send their ranked parts back through a pipe (pickled numpy arrays, a few
hundred KB), while the parent reads and ranks its own share. The parent then assembles
every part in argument order (:func:`maxent.ranked.assemble`): the same arrays as the
sequential path, hence byte-identical output.

Errors are the sequential path's by construction: anything unusual (a bad file, any
exception or warning while reading or ranking, a child that fails or dies, no topic in
common with the qrels) makes the parent kill and reap its children, discard the parallel
work and run the sequential path from the start, which raises (or prints) exactly what it
always does; what can be seen before forking (a missing file, an empty directory, a run
name twice, a file that is not a regular file) sends the command there at once. Children
end with ``os._exit`` (no clean-up, no atexit, no stdio flush: they never write to stdout
or stderr), die at once on SIGINT (default action), and are reaped by
the parent (``waitpid``) on every path, an interrupt of the parent included.

Forking is only used where it can pay: ``os.fork`` and ``os.sched_getaffinity`` exist
(Linux), the process has a single thread (forking a multi-threaded process can deadlock),
and with ``jobs=None`` (automatic) as many processes as there are CPUs idle right now
(:func:`idle_cpus`; on a busy machine a child only takes time from its parent), at most one
per :data:`MIN_WORK_PER_JOB` bytes of run text and one per file. The saving is the child's
share of the reading and ranking, less a few milliseconds (the fork, the copy-on-write page
faults of both processes, the transfer): 20% of the command on the 20 bundled runs with no
other task running; with one or two running (on 2 CPUs), a fork made it 5-20% slower.
"""
from __future__ import annotations

import os
import pickle
import stat
import warnings
from pathlib import Path

import numpy as np

from maxent._rawread import GZIP_MAGIC
from maxent.ranked import RankedLists, RankSetup, assemble, rank_one, rank_setup
from maxent.trec import Qrels, _run_files, _run_name, inflate_engine, read_run

__all__ = ["RunHeader", "plan", "read_and_rank", "running_tasks", "text_size", "usable_cpus",
           "MIN_WORK_PER_JOB"]

MIN_WORK_PER_JOB = 4 << 20
"""Bytes of run text (:func:`text_size`) per process below which automatic mode does not
fork: a fork, its page copies and the transfer of the ranked lists cost a few
milliseconds, reading and ranking 4 MB of run text about 20."""
PARENT_EXTRA = 0.10
"""Share of the run text the parent takes beyond an even split: a child reads and ranks
more slowly than its parent (its first writes to inherited memory are page copies, and it
pickles its lists), so with an even split the parent waits for the child; 10% more for
the parent balances the two on the bundled runs (benchmarks/bench_cli_startup.py)."""
PIPE_SIZE = 1 << 20
"""Pipe buffer asked for (Linux's default maximum): a child's ranked lists (a byte per
document kept) usually fit, so it writes them at once and ends."""


class RunHeader:
    """What the output needs of a run read in another process: its name and tag."""

    __slots__ = ("name", "tag", "path")

    def __init__(self, name: str, tag: str, path: str):
        self.name, self.tag, self.path = name, tag, path


def usable_cpus() -> int:
    """CPUs this process may run on (``os.sched_getaffinity``); 1 where unknown."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return 1


def idle_cpus(loadavg="/proc/loadavg") -> int:
    """Usable CPUs minus the tasks other than this one running right now (``nr_running`` of
    ``/proc/loadavg``), at least 0: the CPUs this command would have to itself, its own
    included. A CPU shared with another task gives a child nothing where the scheduler
    shares CPU time between groups of processes (Linux's autogroups, one per terminal or service): there, two processes of one command
    get the time one would have had, and the fork's overhead makes the command slower
    (measured on 2 CPUs with one or two other tasks running: 5-14%)."""
    running = running_tasks(loadavg)
    return 0 if running is None else max(0, usable_cpus() - (running - 1))


def running_tasks(loadavg="/proc/loadavg") -> int | None:
    """Tasks running right now, this one included (``nr_running`` of ``/proc/loadavg``);
    None where unknown."""
    try:
        with open(loadavg, "rb") as f:
            return int(f.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None


def _single_threaded() -> bool:
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def text_size(path, size: int) -> int:
    """Bytes of text in the file of ``size`` bytes at ``path``: a gzip file's uncompressed
    size as its trailer states it (ISIZE, modulo 2^32; at least the file's size), else
    ``size``."""
    with open(path, "rb") as f:
        if size < 18 or f.read(2) != GZIP_MAGIC:
            return size
        f.seek(-4, os.SEEK_END)
        return max(size, int.from_bytes(f.read(4), "little"))


def plan(paths, jobs: int | None) -> tuple[list[Path], list[list[int]]] | None:
    """The run files and each process's share of them (indices; the parent's first), or
    None for the sequential path (see the module docstring for when)."""
    if jobs == 1 or not hasattr(os, "fork") or not hasattr(os, "sched_getaffinity"):
        return None
    try:
        files = [f for p in paths for f in _run_files(Path(p))]
        names = [_run_name(f) for f in files]
        sizes = []
        for f in files:
            st = os.stat(f)
            if not stat.S_ISREG(st.st_mode):
                return None
            sizes.append(text_size(f, st.st_size))
    except Exception:  # the sequential path reports whatever is wrong, where it should
        return None
    if len(set(names)) < len(names):
        return None
    n = jobs if jobs is not None else min(idle_cpus(), sum(sizes) // MIN_WORK_PER_JOB)
    n = min(n, len(files))
    if n < 2 or not _single_threaded():
        return None
    # longest first to the least loaded, the parent counted as PARENT_EXTRA ahead
    loads = [-sum(sizes) * PARENT_EXTRA / n] + [0.0] * (n - 1)
    shares: list[list[int]] = [[] for _ in range(n)]
    for i in sorted(range(len(files)), key=lambda i: -sizes[i]):
        j = min(range(n), key=loads.__getitem__)
        shares[j].append(i)
        loads[j] += sizes[i]
    return files, [sorted(s) for s in shares]


class _Unusual(Exception):
    """A share met something the sequential path must handle."""


def _read_rank_share(files, share, qrels: Qrels, setup: RankSetup) -> list[tuple]:
    """Read and rank the files of one share: ``(index, header, part, messages)`` each.
    Raises _Unusual on any warning (the sequential path shows it in its place)."""
    out = []
    small = np.int8 if setup.levels <= 127 else np.int16  # grades (-1 unjudged) to send
    with warnings.catch_warnings(record=True) as caught:
        for i in share:
            run = read_run(files[i])
            part, messages = rank_one(run, qrels, setup)
            name, present, lengths, grades, overlap = part
            part = (name, present, lengths, grades.astype(small), overlap)
            out.append((i, (run.name, run.tag, run.path), part, messages))
    if caught:
        raise _Unusual(str(caught[0].message))
    return out


def _child(wfd: int, inherited: list[int], files, share, qrels, setup, mask) -> None:
    """A child's whole life (born with SIGINT blocked): never returns, never touches
    stdout/stderr."""
    import signal

    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends the child at once,
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # even one sent during the fork
        for fd in inherited:  # other pipes' read ends: only the parent reads them
            os.close(fd)
        data = pickle.dumps(_read_rank_share(files, share, qrels, setup), pickle.HIGHEST_PROTOCOL)
        view = memoryview(data)
        while view:
            view = view[os.write(wfd, view):]
        code = 0
    except BaseException:  # the parent sees the failure (exit status) and goes sequential
        pass
    finally:
        os._exit(code)


def _receive(rfd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(rfd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def read_and_rank(paths, qrels: Qrels, *, depth: int, complete: bool, precision: str,
                  jobs: int | None = None) -> tuple[list[RunHeader], RankedLists, list[str]] | None:
    """Read and rank the run files of ``paths`` in ``jobs`` processes (None: automatic).

    Returns ``(runs, lists, messages)``, as the sequential ``read_runs`` + ``rank_runs``
    would (``messages``: their TopicWarnings, in order), or None when the sequential path
    must run instead (not worth forking, or anything unusual: see the module docstring).
    """
    planned = plan(paths, jobs)
    if planned is None:
        return None
    files, shares = planned
    import fcntl   # here, not at start-up: the sequential path does not need them
    import signal

    children = []           # (pid, read end)
    try:
        setup = rank_setup(qrels, depth=depth, complete=complete, precision=precision)
        qrels.lookup        # built once, before forking, shared by every process
        inflate_engine()    # imported once too
        for share in shares[1:]:
            rfd, wfd = os.pipe()
            try:            # room for the whole answer: the child never waits to write
                fcntl.fcntl(wfd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
            except (AttributeError, OSError):
                pass
            # SIGINT blocked across the fork: no KeyboardInterrupt can reach the child
            # before it is inside _child (it would run the parent's code)
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                pid = os.fork()
                if pid == 0:    # the child: whatever happens, it ends here
                    try:
                        _child(wfd, [rfd] + [fd for _, fd in children], files, share, qrels,
                               setup, mask)
                    finally:
                        os._exit(1)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            os.close(wfd)
            children.append((pid, rfd))
        results = _read_rank_share(files, shares[0], qrels, setup)
        for k, (pid, rfd) in enumerate(children):
            data = _receive(rfd)
            os.close(rfd)
            _, status = os.waitpid(pid, 0)
            children[k] = (None, None)
            if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
                return None
            results.extend(pickle.loads(data))
        results.sort(key=lambda r: r[0])
        if [r[0] for r in results] != list(range(len(files))):
            return None
        runs = [RunHeader(*r[1]) for r in results]
        lists = assemble([r[2] for r in results], [r.name for r in runs], qrels, setup)
        return runs, lists, [m for r in results for m in r[3]]
    except Exception:       # the sequential path runs instead, and reports what it reports
        return None
    finally:                # an error or an interrupt: no child outlives this call
        for pid, rfd in children:
            if pid is not None:
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
                os.waitpid(pid, 0)
                os.close(rfd)
