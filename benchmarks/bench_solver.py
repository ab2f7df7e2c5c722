"""Speed and memory of the maximum-entropy solver (issues 3 and 12).

Prints, in one run, for each engine (``--engines numba,numpy``: the compiled kernels of
:mod:`maxent.solver._compiled` and the numpy path; issue 12):
0. the compiled engine's start-up: the first solve in a fresh process with an empty numba
   cache (cold: JIT compilation, as after a fresh checkout) and with the cache filled
   (warm: every later run), for a linear and an AP-like metric;
1. per-solve time of this solver (one problem per call, and per problem when the problems
   of a (metric, N) are solved in one call, the fastest of ``--batch-repeat`` calls) and of cvxpy (Clarabel, exponential cone) on the
   same nDCG and P@10 problems at N = 100 and N = 1000, with both entropies and the speed
   ratios (issue 12 targets: single calls <= 0.5 ms; batched >= 1000x cvxpy);
2. batched throughput for AP, nDCG, GAP, RR and ERR (``--metrics``) at N = 1000 over 100
   runs x 50 topics (5000 problems), per engine and number of threads (``--workers 1,2``; each the fastest of
   ``--batch-repeat`` passes, default 3; 1 gives the single pass of earlier sessions), with the peak memory
   (tracemalloc: numpy allocations; default engine and threads only), the per-problem time
   of AP, GAP, RR and ERR as a multiple of nDCG's in the same configuration (issue 12
   target: <= 3; AP + nDCG + GAP < 4 s) and, with ``--compare``, the original successive linearisation
   (``method="linearize"``, numpy) on the same problems.

Real lists are used (trec_covid_r1 runs, truncated to N; topics resampled to reach 5000
problems); they are read from ``../shared/data`` and never copied. Timings depend on the
load of the machine: compare rows of the same run.

    python benchmarks/bench_solver.py [--problems 5000] [--engines numba,numpy] [--workers 1,2]
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

# run as ``python benchmarks/X.py``: measure this checkout's maxent, not an installed copy
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from maxent.metrics import parse_measure
from maxent.ranked import RankedLists, rank_runs
from maxent.solver import solve
from maxent.trec import read_qrels, read_runs

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


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
    after the cvxpy loop, and this VM's timings move by 10-20 % between calls)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    return best


def per_solve(lists, names, Ns, repeat, rng, engines):
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
            for engine in engines:
                t_ours, dH, dp = [], [], []
                for i, c in zip(pick, cvx):
                    one = pool.take([i])
                    v = m.value(one)
                    solve(m, v, one, engine=engine)   # warm (numba: loads the compiled kernels once)
                    ts = []
                    for _ in range(5):
                        t0 = time.perf_counter()
                        r = solve(m, v, one, engine=engine)
                        ts.append(time.perf_counter() - t0)
                    t_ours.append(min(ts))
                    dH.append(abs(r.entropy[0] - c.entropy[0]))
                    dp.append(np.abs(r.p - c.p).max())
                a = 1e3 * np.median(t_ours)
                cb = 1e3 * _best(lambda: solve(m, m.value(pool), pool, engine=engine), REPEAT) / len(pool)
                print(f"{name:8} {N:5d} {engine:6} {a:9.3f} {b:9.1f} {b / a:7.0f} {cb:10.4f} {b / cb:7.0f} "
                      f"{max(dH):9.1e} {max(dp):9.1e}", flush=True)


def throughput(lists, names, problems, N, rng, engines, workers, compare=False):
    print(f"== batched throughput: {problems} problems (100 runs x 50 topics), N = {N} ==")
    batch = sample_lists(lists, problems, N, rng)
    first = True
    for engine in engines:
        for w in workers:
            total = 0.0          # the "all three": AP, nDCG and GAP
            per = {}
            for name in names:
                m = parse_measure(name)
                v = m.value(batch)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    solve(m, v[:4], batch.take(np.arange(4)), engine=engine)   # numba: load kernels
                    # timed passes without tracemalloc (it slows numpy's allocations by about half)
                    out = []
                    dt = _best(lambda: out.append(solve(m, v, batch, engine=engine, workers=w)), REPEAT)
                    r = out[-1]
                    mem = ""
                    if first:
                        # memory pass (default engine and threads): the same solve under tracemalloc
                        tracemalloc.start()
                        solve(m, v, batch, engine=engine, workers=w)
                        mem = f"peak {tracemalloc.get_traced_memory()[1] / 2**20:5.0f} MiB  "
                        tracemalloc.stop()
                if name in ("AP", "nDCG", "GAP"):
                    total += dt
                per[name] = dt
                counts = ", ".join(f"{k}={c}" for k, c in r.counts().items() if c)
                print(f"{name:6} {r.engine:6} {w} thr {dt:7.2f} s  {1e3 * dt / problems:7.3f} ms/problem  "
                      f"{mem}mean nit {r.nit.mean():5.1f}  method {r.method}  [{counts}]", flush=True)
                if compare and r.method == "newton-kkt":
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        t0 = time.perf_counter()
                        o = solve(m, v, batch, method="linearize", engine="numpy", workers=w)
                        dto = time.perf_counter() - t0
                    both = (o.status == "optimal") & (r.status == "optimal")
                    dH = r.entropy[both] - o.entropy[both]
                    print(f"{'':6} original linearize {dto:7.1f} s (mean nit {o.nit.mean():5.1f}): "
                          f"{dto / dt:4.1f}x slower; entropy new - old in "
                          f"[{dH.min(initial=0):.1e}, {dH.max(initial=0):.1e}]", flush=True)
            first = False
            line = f"{engine}, {w} thread(s): AP + nDCG + GAP {total:.2f} s"
            if "nDCG" in per:
                line += "; per-problem time / nDCG's: " + ", ".join(
                    f"{k} {per[k] / per['nDCG']:.1f}x" for k in per if k != "nDCG")
            print(line, flush=True)


_STARTUP = """
import sys, time, warnings
sys.path.insert(0, {root!r})
import numpy as np
from maxent.metrics import parse_measure
from maxent.ranked import RankedLists
from maxent.solver import solve
g = np.array([[2, 0, 1, 0, 0, 1, 0, 0]])
lists = RankedLists.from_grades(g, np.array([[10, 3, 2]]))
out = []
for name in ("nDCG", "P@10", "AP", "GAP"):
    m = parse_measure(name)
    t0 = time.perf_counter()
    solve(m, m.value(lists) * 0.9, lists, engine="numba")
    out.append(f"{{name}} {{time.perf_counter() - t0:.2f}} s")
print(", ".join(out))
"""


def startup():
    """First solves in fresh processes: empty numba cache (cold) and filled cache (warm)."""
    print("== compiled engine start-up: first solve per metric in a fresh process ==")
    code = _STARTUP.format(root=str(Path(__file__).resolve().parents[1]))
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("cold (empty cache: JIT compile)", "warm (cache filled: load)"):
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            print(f"{label:34} {out.stdout.strip() or out.stderr.strip()[-300:]}  (process wall {wall:.1f} s)",
                  flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--problems", type=int, default=5000)
    ap.add_argument("--cvxpy-repeat", type=int, default=5, help="problems timed per (metric, N)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--engines", default="numba,numpy", help="engines to time (solve(engine=...))")
    ap.add_argument("--workers", default="1,2", help="threads for the batched throughput")
    ap.add_argument("--compare", action="store_true",
                    help="also time the original linearisation (numpy) on the AP batch")
    ap.add_argument("--skip-cvxpy", action="store_true", help="skip the per-solve comparison with cvxpy")
    ap.add_argument("--skip-startup", action="store_true", help="skip the cold/warm start-up of numba")
    ap.add_argument("--metrics", default="AP,nDCG,GAP,RR,ERR",
                    help="metrics of the batched throughput (AP, nDCG and GAP make the issue's total)")
    ap.add_argument("--batch-repeat", type=int, default=REPEAT,
                    help="timed passes of each batched solve, the fastest reported (1: a single pass)")
    args = ap.parse_args(argv)
    globals()["REPEAT"] = max(1, args.batch_repeat)
    rng = np.random.default_rng(args.seed)
    engines = args.engines.split(",")
    workers = [int(w) for w in args.workers.split(",")]
    print(f"load average at start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")
    if "numba" in engines and not args.skip_startup:
        startup()
    lists = load()
    if not args.skip_cvxpy:
        per_solve(lists, ["nDCG", "P@10"], [100, 1000], args.cvxpy_repeat, rng, engines)
    throughput(lists, args.metrics.split(","), args.problems, 1000, rng, engines, workers,
               compare=args.compare)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
