"""Speed and memory of the maximum-entropy solver.

Prints, in one run:
0. start-up: the first solve per metric in a fresh process (the compiled engine is built at
   install: nothing is compiled at run time);
1. per-solve time of this solver (one problem per call, and per problem when the problems
   of a (metric, N) are solved in one call, the fastest of ``--batch-repeat`` calls) and of cvxpy
   (Clarabel, exponential cone) on the same nDCG and P@10 problems at N = 100 and N = 1000, with
   both entropies and the speed ratios (targets: single calls <= 0.5 ms; batched >= 1000x cvxpy);
2. batched throughput for AP, nDCG, GAP, RR and ERR (``--metrics``) at N = 1000 over 5000
   problems (trec_covid_r1 runs, truncated to N; topics resampled to reach 5000), per number of
   threads (``--workers 1,2``; each the fastest of ``--batch-repeat`` passes, the metrics in turn
   within a pass, each solve after the release of an array of the largest result's size:
   :func:`_settle`), with the peak memory
   (tracemalloc: numpy allocations; first thread count only) and the per-problem time of AP, GAP,
   RR and ERR as a multiple of nDCG's (target: <= 3): the fastest pass over nDCG's fastest, and
   the median over passes of each pass's time over nDCG's in the same pass (paired);
3. the same at N = 100 on the real depth-100 lists of trec_dl19_passage (``--skip-dl19``).

Lists are read from ``../shared/data`` and never copied. Timings depend on the load of the
machine: compare rows of the same run, or runs alternated on the same machine. ``--evidence``
appends the rows (tagged ``--label``) to ``results/benchmarks/solver/bench_solver/*.csv`` and writes its
``PROVENANCE.json``. ``MAXENT_ROOT=DIR`` times the ``maxent`` of another checkout (e.g. an
earlier commit's; its rows record the build that ran as ``engine``).

    python benchmarks/bench_solver.py [--problems 5000] [--workers 1,2] [--evidence --label final]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

# run as ``python benchmarks/X.py``: measure this checkout's maxent (or MAXENT_ROOT's), not an
# installed copy
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, os.environ.get("MAXENT_ROOT") or str(ROOT))

from maxent.metrics import parse_measure
from maxent.ranked import RankedLists, rank_runs
from maxent.solver import solve
from maxent.trec import read_qrels, read_runs

DATA = ROOT.parent / "shared" / "data"
ROWS: dict[str, list[dict]] = {"startup": [], "per_solve": [], "throughput": []}
"""The measured rows per table, written by ``--evidence``."""
LABEL = "final"


def load(collection: str = "trec_covid_r1") -> RankedLists:
    folder = DATA / collection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rank_runs(read_runs(folder / "runs"), read_qrels(sorted((folder / "qrels").iterdir())[0]))


def full_length(lists: RankedLists, N: int) -> RankedLists:
    """Lists retrieving at least N documents, cut at N."""
    return lists.take(np.flatnonzero(lists.lengths >= N)).truncate(N)


def sample_lists(lists: RankedLists, problems: int, N: int, rng) -> RankedLists:
    """The batched throughput's lists: ``problems`` drawn from those of length >= N, cut at N
    (with replacement when there are fewer)."""
    pool = full_length(lists, N)
    return pool.take(rng.choice(len(pool), size=problems, replace=len(pool) < problems))


REPEAT = 3
"""Timed passes of each batched solve; the fastest is reported (``--batch-repeat``)."""


def _best(run, repeat: int) -> float:
    """Wall time of the fastest of ``repeat`` calls of ``run()`` (the first pays cold caches
    after the cvxpy loop, and timings on a shared machine move by 10-20 % between calls)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    return best


def per_solve(lists, names, Ns, repeat, rng, engine):
    print("== per-solve time: this solver vs cvxpy/Clarabel, same problems ==")
    print(f"{'metric':8} {'N':>5} {'engine':6} {'single ms':>9} {'cvxpy ms':>9} {'ratio':>7} "
          f"{'batched ms':>10} {'ratio':>7} {'max |dH|':>9} {'max |dp|':>9}")
    print("  (single ms: one problem per call, median of problems of their best of 5; batched ms: per")
    print("   problem when all problems of the same metric and N are solved in one call, as the")
    print(f"   analyses do, best of {REPEAT} calls)")
    for name in names:
        m = parse_measure(name)
        for N in Ns:
            pool = full_length(lists, N)
            res_all = solve(m, m.value(pool), pool)
            ok = np.flatnonzero(res_all.status == "optimal")
            pick = rng.choice(ok, size=min(repeat, len(ok)), replace=False)
            t_cvx, cvx = [], []
            for i in pick:
                one = pool.take([i])
                v = m.value(one)
                t0 = time.perf_counter()
                cvx.append(solve(m, v, one, method="cvxpy"))
                t_cvx.append(time.perf_counter() - t0)
            b = 1e3 * np.median(t_cvx)
            t_ours, dH, dp = [], [], []
            for i, c in zip(pick, cvx):
                one = pool.take([i])
                v = m.value(one)
                solve(m, v, one)   # warm
                ts = []
                for _ in range(5):
                    t0 = time.perf_counter()
                    r = solve(m, v, one)
                    ts.append(time.perf_counter() - t0)
                t_ours.append(min(ts))
                dH.append(abs(r.entropy[0] - c.entropy[0]))
                dp.append(np.abs(r.p - c.p).max())
            a = 1e3 * np.median(t_ours)
            cb = 1e3 * _best(lambda: solve(m, m.value(pool), pool), REPEAT) / len(pool)
            print(f"{name:8} {N:5d} {engine:6} {a:9.3f} {b:9.1f} {b / a:7.0f} {cb:10.4f} {b / cb:7.0f} "
                  f"{max(dH):9.1e} {max(dp):9.1e}", flush=True)
            ROWS["per_solve"].append(dict(label=LABEL, metric=name, N=N, engine=engine, single_ms=a,
                                          cvxpy_ms=b, single_ratio=b / a, batched_ms=cb,
                                          batched_ratio=b / cb, max_dH=max(dH), max_dp=max(dp)))


def _settle(size: int) -> None:
    """Allocate, fill and free ``size`` doubles, so that every timed solve meets the same memory
    state: a process that has just released a result of the largest size. A solve's result is
    fresh memory that the operating system zeroes (with transparent huge pages, compacting
    memory when none are free), and how much of that a solve pays depends on what the process
    freed just before it: else the metric after AP (whose binary result is a third of a graded
    one's) would pay more of it than the others."""
    a = np.ones(size)
    del a


def throughput(lists, names, problems, N, rng, engine, workers, collection="trec_covid_r1"):
    print(f"== batched throughput: {problems} problems of {collection}, N = {N} ==")
    batch = sample_lists(lists, problems, N, rng)
    first = True
    metrics = {name: parse_measure(name) for name in names}
    targets = {name: m.value(batch) for name, m in metrics.items()}
    for w in workers:
        total = 0.0          # AP + nDCG + GAP: the throughput target is their sum
        passes = {name: [] for name in names}     # every pass's time
        last = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # warm, on a few lists; the largest result per list sets the size of _settle's array
            few = np.arange(4)
            size = max(solve(m, targets[name][few], batch.take(few)).p.size
                       for name, m in metrics.items()) // len(few) * problems
            # timed passes without tracemalloc (it slows numpy's allocations by about half),
            # the metrics in turn within each pass, so that a slower spell of a shared
            # machine falls on all of them and not on one metric's passes
            for _ in range(REPEAT):
                for name, m in metrics.items():
                    _settle(size)
                    t0 = time.perf_counter()
                    r = solve(m, targets[name], batch, workers=w)
                    passes[name].append(time.perf_counter() - t0)
                    # what the rows report (the arrays themselves are freed: a result of
                    # N = 1000 holds 120 MB)
                    last[name] = (float(r.nit.mean()), r.method, r.counts(),
                                  int((r.status == "not_converged").sum()))
                    del r
        per = {name: min(t) for name, t in passes.items()}     # the fastest pass
        for name, m in metrics.items():
            dt, (nit, method, counts, n_nc) = per[name], last[name]
            mem = ""
            if first:
                # memory pass (first thread count): the same solve under tracemalloc
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tracemalloc.start()
                    solve(m, targets[name], batch, workers=w)
                    mem = f"peak {tracemalloc.get_traced_memory()[1] / 2**20:5.0f} MiB  "
                    tracemalloc.stop()
            if name in ("AP", "nDCG", "GAP"):
                total += dt
            counts = ", ".join(f"{k}={c}" for k, c in counts.items() if c)
            print(f"{name:6} {engine:8} {w} thr {dt:7.2f} s  {1e3 * dt / problems:7.3f} ms/problem  "
                  f"{mem}mean nit {nit:5.1f}  method {method}  [{counts}]", flush=True)
            row = dict(label=LABEL, collection=collection, N=N, metric=name, engine=engine, threads=w,
                       problems=problems, seconds=dt, ms_per_problem=1e3 * dt / problems, mean_nit=nit,
                       method=method, not_converged=n_nc)
            if "nDCG" in per:
                row["ratio_to_nDCG"] = dt / per["nDCG"]
                # each pass's time over nDCG's in the same pass, the median over passes: a slow
                # spell of a shared machine falls on both terms of a ratio
                row["paired_ratio_to_nDCG"] = float(np.median(np.divide(passes[name], passes["nDCG"])))
            ROWS["throughput"].append(row)
        first = False
        line = f"{engine}, {w} thread(s): AP + nDCG + GAP {total:.2f} s"
        if "nDCG" in per:
            line += "; per-problem time / nDCG's: " + ", ".join(
                f"{k} {per[k] / per['nDCG']:.1f}x" for k in per if k != "nDCG")
        print(line, flush=True)


_STARTUP = """
import sys, time, warnings
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
import numpy as np
from maxent.metrics import parse_measure
from maxent.ranked import RankedLists
from maxent.solver import solve
g = np.array([[2, 0, 1, 0, 0, 1, 0, 0]])
lists = RankedLists.from_grades(g, np.array([[10, 3, 2]]))
out = [f"import {{time.perf_counter() - t0:.2f}}"]
for name in ("nDCG", "P@10", "AP", "GAP", "ERR"):
    m = parse_measure(name)
    t0 = time.perf_counter()
    solve(m, m.value(lists) * 0.9, lists)
    out.append(f"{{name}} {{time.perf_counter() - t0:.2f}}")
print(" ".join(out))
"""


def startup():
    """The first solve per metric in a fresh process."""
    print("== start-up: first solve per metric in a fresh process (seconds) ==")
    code = _STARTUP.format(root=sys.path[0])
    for rep in range(2):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        wall = time.perf_counter() - t0
        print(f"run {rep + 1}: {out.stdout.strip() or out.stderr.strip()[-300:]}  (process wall {wall:.1f} s)",
              flush=True)
        vals = out.stdout.split()
        row = dict(label=LABEL, run=rep + 1, process_wall=wall)
        row.update({vals[k]: float(vals[k + 1]) for k in range(0, len(vals) - 1, 2)})
        ROWS["startup"].append(row)


def write_evidence(argv, started):
    """Append the rows to results/benchmarks/solver/bench_solver/<table>.csv and its PROVENANCE.json."""
    sys.path.insert(0, str(ROOT))
    from analysis._provenance import command_line, write_rows

    for table, rows in ROWS.items():
        if rows:
            write_rows(ROOT / "results" / "benchmarks" / "solver" / "bench_solver", f"{table}.csv", rows,
                       command_line(["", *argv], script=__file__), started, float_format="%.6g", append=True,
                       extra={"maxent_root": os.environ.get("MAXENT_ROOT") or str(ROOT), "label": LABEL})


def _isa() -> str:
    """The engine build the import chose (``avx2`` or ``baseline``; ``compiled`` for a
    checkout that does not say)."""
    from maxent.solver import _engine

    return getattr(_engine, "ISA", "compiled")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--problems", type=int, default=5000)
    ap.add_argument("--cvxpy-repeat", type=int, default=5, help="problems timed per (metric, N)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", default="1,2", help="threads for the batched throughput")
    ap.add_argument("--skip-cvxpy", action="store_true", help="skip the per-solve comparison with cvxpy")
    ap.add_argument("--skip-startup", action="store_true", help="skip the start-up in fresh processes")
    ap.add_argument("--skip-dl19", action="store_true", help="skip the N = 100 block of trec_dl19_passage")
    ap.add_argument("--evidence", action="store_true",
                    help="append the rows to results/benchmarks/solver/bench_solver/*.csv (with PROVENANCE.json)")
    ap.add_argument("--label", default="final", help="the rows' label in the evidence (e.g. start, final)")
    ap.add_argument("--metrics", default="AP,nDCG,GAP,RR,ERR",
                    help="metrics of the batched throughput (AP, nDCG and GAP make the total that is compared)")
    ap.add_argument("--batch-repeat", type=int, default=REPEAT,
                    help="timed passes of each batched solve, the fastest reported (1: a single pass)")
    args = ap.parse_args(argv)
    started = time.time()
    globals()["REPEAT"] = max(1, args.batch_repeat)
    globals()["LABEL"] = args.label
    rng = np.random.default_rng(args.seed)
    engine = _isa()
    workers = [int(w) for w in args.workers.split(",")]
    print(f"load average at start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")
    if not args.skip_startup:
        startup()
    lists = load()
    if not args.skip_cvxpy:
        per_solve(lists, ["nDCG", "P@10"], [100, 1000], args.cvxpy_repeat, rng, engine)
    throughput(lists, args.metrics.split(","), args.problems, 1000, rng, engine, workers)
    if not args.skip_dl19:
        throughput(load("trec_dl19_passage"), args.metrics.split(","), args.problems, 100, rng, engine,
                   workers, collection="trec_dl19_passage")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    if args.evidence:
        write_evidence(sys.argv[1:] if argv is None else argv, started)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
