"""Plumbing of the benchmarks: paths, the shared data, timing, alternating with another checkout,
and the evidence under results/benchmarks/."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "results" / "benchmarks"
MAXENT = os.environ.get("MAXENT_ROOT") or str(ROOT)
# measure this checkout's maxent (or MAXENT_ROOT's), not an installed copy. numpy is imported only
# where needed: bench_scale's children would inherit its memory's high-water mark through fork
sys.path.insert(0, MAXENT)


def parser(doc: str, against: bool | None = None, evidence: bool = True) -> argparse.ArgumentParser:
    """A parser described by the docstring's first line, with ``--evidence`` and ``--against DIR``
    (required if ``against``, absent if None)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    if against is not None:
        ap.add_argument("--against", required=against, help="another checkout, run alternately")
    if evidence:
        ap.add_argument("--evidence", action="store_true", help="write the rows under results/benchmarks/")
    return ap


def alternating(runs: int, against: str | None):
    """(run, label, checkout) for ``runs`` rounds of this checkout, then ``against``'s if given:
    a slow spell of the shared machine falls on both."""
    checkouts = [("this", ROOT)] + ([("against", Path(against).resolve())] if against else [])
    for k in range(runs):
        for label, where in checkouts:
            yield k + 1, label, where


def run(cmd: list[str], where: Path = ROOT, bytecode: bool = False):
    """(wall seconds, stdout, resource usage) of one fresh process running checkout ``where``'s
    code from there (``bytecode``: writing it, as an installed package); exits if it fails."""
    env = dict(os.environ, PYTHONPATH=str(where))
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=where, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)     # wait4: the child's own CPU time and peak RSS
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode:
            raise SystemExit(f"{where}: {' '.join(cmd)[:200]} failed:\n{err.read().decode()[-2000:]}")
        return wall, out.read().decode(), usage


def timing(fn, repeat: int, stat=min, warm: bool = False) -> float:
    """``stat`` (the fastest by default) of the wall seconds of ``repeat`` calls of ``fn()``; ``warm``:
    after one untimed call."""
    if warm:
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return stat(times)


def fastest(fns: dict, repeat: int) -> dict[str, tuple[float, float]]:
    """Per name of ``fns``, the fastest (wall, CPU) seconds of ``repeat`` rounds that call each in
    turn: a slow spell of the shared machine falls on all."""
    best = {name: (float("inf"), float("inf")) for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    return best


def read_lists(runs: Path, qrels: Path):
    from maxent.ranked import rank_runs
    from maxent.trec import read_qrels, read_runs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rank_runs(read_runs(runs), read_qrels(qrels))


def shared(collection: str) -> tuple[Path, Path]:
    """The runs folder and qrels file (None if absent) of a collection of ../shared/data."""
    return DATA / collection / "runs", min((DATA / collection / "qrels").glob("*"), default=None)


def load(collection: str = "trec_covid_r1"):
    return read_lists(*shared(collection))


def full_length(lists, N: int):
    """Lists retrieving at least N documents, cut at N."""
    import numpy as np

    return lists.take(np.flatnonzero(lists.lengths >= N)).truncate(N)


def sample_lists(lists, problems: int, N: int, rng):
    """``problems`` lists drawn from those of length >= N, cut at N (with replacement when there
    are fewer)."""
    pool = full_length(lists, N)
    return pool.take(rng.choice(len(pool), size=problems, replace=len(pool) < problems))


def command(argv: list[str] | None, script: str) -> str:
    """The command as typed from the project root (``argv``: the arguments, default sys.argv's)."""
    sys.path.insert(0, str(ROOT))
    from analysis._provenance import command_line

    return command_line(None if argv is None else ["", *argv], script=script)


def write_evidence(folder: Path, name: str, rows: list[dict], argv, script: str, started: float, **kw):
    """``rows`` as ``folder/name`` with its PROVENANCE.json (``analysis._provenance.write_rows``)."""
    cmd = command(argv, script)
    from analysis._provenance import write_rows

    return write_rows(folder, name, rows, cmd, started, **kw)


def write_provenance(folder: Path, argv, script: str, started: float, extra: dict):
    cmd = command(argv, script)
    from analysis._provenance import write_provenance

    return write_provenance(folder, cmd, started, extra=extra)
