"""Speed and memory of the maximum-entropy solver (issue 3, item 5).

Prints, in one run:
1. per-solve time of this solver and of cvxpy (Clarabel, exponential cone) on the same
   nDCG and P@10 problems at N = 100 and N = 1000, with both entropies and the speed ratio;
2. batched throughput for AP, nDCG and GAP at N = 1000 over 100 runs x 50 topics (5000
   problems), with the peak memory (tracemalloc: numpy allocations), the per-problem time
   of AP and GAP as a multiple of nDCG's (issue 12 target: <= 3) and, for AP and GAP, the
   original successive linearisation (``method="linearize"``) on the same problems as the
   peer of the default Newton-KKT method (speed-up and max entropy difference).

Real lists are used (trec_covid_r1 runs, truncated to N; topics resampled to reach 5000
problems); they are read from ``../shared/data`` and never copied.

    python benchmarks/bench_solver.py [--problems 5000] [--cvxpy-repeat 5]
"""
from __future__ import annotations

import argparse
import sys
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


def per_solve(lists, names, Ns, repeat, rng):
    print("== per-solve time: this solver (batch of 1) vs cvxpy/Clarabel, same problems ==")
    print(f"{'metric':8} {'N':>5} {'ours ms':>9} {'cvxpy ms':>9} {'ratio':>7} "
          f"{'batched ms':>10} {'ratio':>7} {'max |dH|':>9} {'max |dp|':>9}")
    print("  (ours ms: one problem per call; batched ms: per problem when all problems of the")
    print("   same metric and N are solved in one call, as the analyses do)")
    for name in names:
        m = parse_measure(name)
        for N in Ns:
            pool = full_length(lists, N)
            res_all = solve(m, m.value(pool), pool)
            ok = np.flatnonzero(res_all.status == "optimal")
            pick = rng.choice(ok, size=min(repeat, len(ok)), replace=False)
            t_ours, t_cvx, dH, dp = [], [], [], []
            for i in pick:
                one = pool.take([i])
                v = m.value(one)
                t0 = time.perf_counter()
                r = solve(m, v, one)
                t_ours.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                c = solve(m, v, one, method="cvxpy")
                t_cvx.append(time.perf_counter() - t0)
                dH.append(abs(r.entropy[0] - c.entropy[0]))
                dp.append(np.abs(r.p - c.p).max())
            a, b = 1e3 * np.median(t_ours), 1e3 * np.median(t_cvx)
            t0 = time.perf_counter()
            solve(m, m.value(pool), pool)
            c = 1e3 * (time.perf_counter() - t0) / len(pool)
            print(f"{name:8} {N:5d} {a:9.2f} {b:9.1f} {b / a:7.0f} {c:10.3f} {b / c:7.0f} "
                  f"{max(dH):9.1e} {max(dp):9.1e}", flush=True)


def throughput(lists, names, problems, N, rng, compare=True):
    print(f"== batched throughput: {problems} problems (100 runs x 50 topics), N = {N} ==")
    pool = full_length(lists, N)
    idx = rng.choice(len(pool), size=problems, replace=len(pool) < problems)
    batch = pool.take(idx)
    total = 0.0
    per = {}
    for name in names:
        m = parse_measure(name)
        v = m.value(batch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # timed pass without tracemalloc (it slows numpy's allocations by about half)
            t0 = time.perf_counter()
            r = solve(m, v, batch)
            dt = time.perf_counter() - t0
            # memory pass: the same solve again under tracemalloc
            tracemalloc.start()
            solve(m, v, batch)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        total += dt
        per[name] = dt
        counts = ", ".join(f"{k}={c}" for k, c in r.counts().items() if c)
        print(f"{name:6} {dt:7.1f} s  {problems / dt:7.0f} problems/s  peak {peak / 2**20:6.0f} MiB  "
              f"mean nit {r.nit.mean():5.1f}  method {r.method}  [{counts}]", flush=True)
        if compare and r.method == "newton-kkt":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                o = solve(m, v, batch, method="linearize")
                dto = time.perf_counter() - t0
            both = (o.status == "optimal") & (r.status == "optimal")
            dH = r.entropy[both] - o.entropy[both]
            print(f"{'':6} original linearize {dto:7.1f} s (mean nit {o.nit.mean():5.1f}): "
                  f"Newton-KKT is {dto / dt:4.1f}x faster; entropy new - old in "
                  f"[{dH.min(initial=0):.1e}, {dH.max(initial=0):.1e}]", flush=True)
    print(f"all three: {total:.1f} s")
    if "nDCG" in per:
        print("per-problem time / nDCG's: " + ", ".join(
            f"{k} {per[k] / per['nDCG']:.1f}x" for k in per if k != "nDCG"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--problems", type=int, default=5000)
    ap.add_argument("--cvxpy-repeat", type=int, default=5, help="problems timed per (metric, N)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-compare", action="store_true", help="skip the original linearisation peer")
    ap.add_argument("--skip-cvxpy", action="store_true", help="only the batched throughput")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    lists = load()
    if not args.skip_cvxpy:
        per_solve(lists, ["nDCG", "P@10"], [100, 1000], args.cvxpy_repeat, rng)
    throughput(lists, ["AP", "nDCG", "GAP"], args.problems, 1000, rng, compare=not args.no_compare)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
