"""Speed and memory of the maximum-entropy solver, against cvxpy (Clarabel, exponential cone).

Prints, in one run: 0. the first solve per metric in a fresh process (nothing compiles at run
time); 1. per-solve time, one problem per call and batched per (metric, N), of this solver and of
cvxpy on the same nDCG and P@10 problems at N = 100 and 1000, with both entropies (targets: single
<= 0.5 ms, batched >= 1000x cvxpy); 2. batched throughput of ``--metrics`` over ``--problems`` lists
of trec_covid_r1 at N = 1000, per thread count, with the peak memory (tracemalloc, first thread
count) and each metric's time over nDCG's (target <= 3); 3. the same on the depth-100 lists of
trec_dl19_passage; 4. metric sets (``--sets``) against their metrics' single solves, at N = 100
and 1000 (target: a set costs at most 3x its slowest metric alone; ``--sets-only``: only this). ``--evidence`` appends the rows (tagged ``--label``) to
results/benchmarks/solver/bench_solver/; ``MAXENT_ROOT=DIR`` times another checkout's ``maxent``.

    python benchmarks/bench_solver.py [--problems 5000] [--workers 1,2] [--evidence --label final]
"""
from __future__ import annotations

import os
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

from _common import MAXENT, RESULTS, full_length, load, parser, run, sample_lists, timing, write_evidence

from maxent.metrics import parse_measure
from maxent.solver import solve

ROWS: dict[str, list[dict]] = {"startup": [], "per_solve": [], "throughput": [], "pairs": []}
LABEL = "final"
REPEAT = 3
"""Timed passes of each batched solve, the fastest reported (``--batch-repeat``): the first pays
cold caches after the cvxpy loop, and a shared machine moves timings by 10-20 % between calls."""


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
                t_ours.append(timing(lambda: solve(m, v, one), 5, warm=True))
                r = solve(m, v, one)
                dH.append(abs(r.entropy[0] - c.entropy[0]))
                dp.append(np.abs(r.p - c.p).max())
            a = 1e3 * np.median(t_ours)
            cb = 1e3 * timing(lambda: solve(m, m.value(pool), pool), REPEAT) / len(pool)
            print(f"{name:8} {N:5d} {engine:6} {a:9.3f} {b:9.1f} {b / a:7.0f} {cb:10.4f} {b / cb:7.0f} "
                  f"{max(dH):9.1e} {max(dp):9.1e}", flush=True)
            ROWS["per_solve"].append(dict(label=LABEL, metric=name, N=N, engine=engine, single_ms=a,
                                          cvxpy_ms=b, single_ratio=b / a, batched_ms=cb,
                                          batched_ratio=b / cb, max_dH=max(dH), max_dp=max(dp)))


def _settle(size: int) -> None:
    """Allocate, fill and free ``size`` doubles, so that every timed solve meets the same memory
    state: the OS zeroes a result's fresh memory, and what a solve pays for it depends on what the
    process freed just before (else the metric after AP, whose result is small, would pay more)."""
    a = np.ones(size)
    del a


def throughput(lists, names, problems, N, rng, engine, workers, collection="trec_covid_r1"):
    print(f"== batched throughput: {problems} problems of {collection}, N = {N} ==")
    batch = sample_lists(lists, problems, N, rng)
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
            # without tracemalloc (it slows numpy's allocations by half); the metrics in turn
            # within a pass, so that a slow spell of the machine falls on all of them
            for _ in range(REPEAT):
                for name, m in metrics.items():
                    _settle(size)
                    t0 = time.perf_counter()
                    r = solve(m, targets[name], batch, workers=w)
                    passes[name].append(time.perf_counter() - t0)
                    # only what the rows report: a result of N = 1000 holds 120 MB
                    last[name] = (float(r.nit.mean()), r.method, r.counts(),
                                  int((r.status == "not_converged").sum()))
                    del r
        per = {name: min(t) for name, t in passes.items()}     # the fastest pass
        for name, m in metrics.items():
            dt, (nit, method, counts, n_nc) = per[name], last[name]
            mem = ""
            if w == workers[0]:     # the memory pass: the same solve under tracemalloc
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
                # paired: a slow spell of the machine falls on both terms of a pass's ratio
                row["paired_ratio_to_nDCG"] = float(np.median(np.divide(passes[name], passes["nDCG"])))
            ROWS["throughput"].append(row)
        line = f"{engine}, {w} thread(s): AP + nDCG + GAP {total:.2f} s"
        if "nDCG" in per:
            line += "; per-problem time / nDCG's: " + ", ".join(
                f"{k} {per[k] / per['nDCG']:.1f}x" for k in per if k != "nDCG")
        print(line, flush=True)


def pairs(lists, sets, problems, Ns, rng):
    """Several metrics held at once against their single-metric solves: per set and N, the
    set's time over the slowest of its metrics' own (target <= 3)."""
    print(f"== metric sets: {problems} problems of trec_covid_r1 per N ==")
    for N in Ns:
        batch = sample_lists(lists, problems, N, rng)
        for names in sets:
            ms = [parse_measure(x) for x in names]
            T = np.stack([m.value(batch) for m in ms], axis=1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                single = [timing(lambda j=j, m=m: solve(m, T[:, j], batch), REPEAT) for j, m in enumerate(ms)]
                joint = timing(lambda: solve(ms, T, batch), REPEAT)
                res = solve(ms, T, batch)
            slow = max(single)
            counts = res.counts()
            print(f"{'+'.join(names):14} N={N:5d} set {joint:7.2f} s  slowest single {slow:6.3f} s  "
                  f"ratio {joint / slow:6.1f}  [{', '.join(f'{k}={c}' for k, c in counts.items() if c)}]",
                  flush=True)
            ROWS["pairs"].append(dict(label=LABEL, set="+".join(names), N=N, problems=problems,
                                      set_seconds=joint, slowest_single_seconds=slow, ratio=joint / slow,
                                      **{k: c for k, c in counts.items()}))


_STARTUP = """
import sys, time, warnings
t0 = time.perf_counter()
import numpy as np
from maxent.metrics import parse_measure
from maxent.ranked import RankedLists
from maxent.solver import solve
g = np.array([[2, 0, 1, 0, 0, 1, 0, 0]])
lists = RankedLists.from_grades(g, np.array([[10, 3, 2]]))
out = [f"import {time.perf_counter() - t0:.2f}"]
for name in ("nDCG", "P@10", "AP", "GAP", "ERR"):
    m = parse_measure(name)
    t0 = time.perf_counter()
    solve(m, m.value(lists) * 0.9, lists)
    out.append(f"{name} {time.perf_counter() - t0:.2f}")
print(" ".join(out))
"""


def startup():
    print("== start-up: first solve per metric in a fresh process (seconds) ==")
    for rep in range(2):
        wall, out, _ = run([sys.executable, "-c", _STARTUP], Path(MAXENT))
        print(f"run {rep + 1}: {out.strip()}  (process wall {wall:.1f} s)", flush=True)
        vals = out.split()
        row = dict(label=LABEL, run=rep + 1, process_wall=wall)
        row.update({vals[k]: float(vals[k + 1]) for k in range(0, len(vals) - 1, 2)})
        ROWS["startup"].append(row)


def main(argv=None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--problems", type=int, default=5000)
    ap.add_argument("--cvxpy-repeat", type=int, default=5, help="problems timed per (metric, N)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", default="1,2", help="threads for the batched throughput")
    ap.add_argument("--skip-cvxpy", action="store_true", help="skip the per-solve comparison with cvxpy")
    ap.add_argument("--skip-startup", action="store_true", help="skip the start-up in fresh processes")
    ap.add_argument("--skip-dl19", action="store_true", help="skip the N = 100 block of trec_dl19_passage")
    ap.add_argument("--label", default="final", help="the rows' label in the evidence (e.g. start, final)")
    ap.add_argument("--metrics", default="AP,nDCG,GAP,RR,ERR",
                    help="metrics of the batched throughput (the total compared: AP + nDCG + GAP)")
    ap.add_argument("--batch-repeat", type=int, default=REPEAT,
                    help="timed passes of each batched solve, the fastest reported (1: a single pass)")
    ap.add_argument("--sets", default="AP+P@10,AP+nDCG,RR+AP,ERR@20+nDCG,GAP+AP",
                    help="metric sets timed against their metrics' single solves (comma-separated, '+' within)")
    ap.add_argument("--set-problems", type=int, default=300, help="problems per set and N")
    ap.add_argument("--sets-only", action="store_true", help="time only the metric sets")
    args = ap.parse_args(argv)
    started = time.time()
    globals()["REPEAT"] = max(1, args.batch_repeat)
    globals()["LABEL"] = args.label
    rng = np.random.default_rng(args.seed)
    from maxent.solver import _engine

    engine = getattr(_engine, "ISA", "compiled")     # the build the import chose
    workers = [int(w) for w in args.workers.split(",")]
    print(f"load average at start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")
    if args.sets_only:
        pairs(load(), [x.split("+") for x in args.sets.split(",")], args.set_problems, [100, 1000], rng)
    else:
        _all(args, rng, engine, workers)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    for table, rows in ROWS.items():
        if args.evidence and rows:
            folder = "pairs" if table == "pairs" else "bench_solver"
            write_evidence(RESULTS / "solver" / folder, f"{table}.csv", rows, argv, __file__, started,
                           float_format="%.6g", append=table != "pairs",
                           extra={"maxent_root": MAXENT, "label": LABEL})
    return 0


def _all(args, rng, engine, workers):
    if not args.skip_startup:
        startup()
    lists = load()
    if not args.skip_cvxpy:
        per_solve(lists, ["nDCG", "P@10"], [100, 1000], args.cvxpy_repeat, rng, engine)
    throughput(lists, args.metrics.split(","), args.problems, 1000, rng, engine, workers)
    if not args.skip_dl19:
        throughput(load("trec_dl19_passage"), args.metrics.split(","), args.problems, 100, rng, engine,
                   workers, collection="trec_dl19_passage")
    pairs(lists, [x.split("+") for x in args.sets.split(",")], args.set_problems, [100, 1000], rng)


if __name__ == "__main__":
    raise SystemExit(main())
