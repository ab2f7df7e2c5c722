"""Every maximum-entropy problem of the shared collections ends certified.

For every (run, topic) list of robust03, trec_covid_r1, trec_dl19_passage, the trec_eval test
collection and the bundled ``trec_runs/``: AP at every relevance threshold, nDCG, GAP and RBP
(p = 0.8), under both count constraints, solved with the default method. Exit status 1 if any
problem ends ``not_converged`` or an ``optimal`` one is not certified (residual <= 1e-9 and, for
AP/GAP, stationarity <= 1e-9). CPU heavy: run by hand, not in the tests. ``MAXENT_ROOT=DIR``
checks another checkout's ``maxent`` (compare two ``--save`` files with compare_solutions.py).

    python benchmarks/check_convergence.py [--collections robust03,trec_covid_r1] [--workers 2]
    python benchmarks/check_convergence.py --gap-step 0.1     # + GAP at analysis.gap_thresholds' g grid
    python benchmarks/check_convergence.py --more RR,ERR      # + the cascade metrics
    python benchmarks/check_convergence.py --save out/conv.csv   # every problem's status, entropy, nit
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

from _common import DATA, ROOT, read_lists, shared

from analysis.gap_thresholds import g_name, simplex_grid
from maxent.errors import ConvergenceWarning
from maxent.metrics import parse_measure
from maxent.solver import solve

SOURCES = {**{name: shared(name) for name in ("robust03", "trec_covid_r1", "trec_dl19_passage")},
           "trec_eval_test": (DATA / "trec_eval_test" / "results.test",
                              DATA / "trec_eval_test" / "qrels.test"),
           "bundled": (ROOT / "trec_runs" / "runs", ROOT / "trec_runs" / "qrels-rnd1.txt")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collections", default=",".join(SOURCES))
    ap.add_argument("--counts", default="retrieved,total")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--more", default="",
                    help="more metrics, comma-separated (e.g. RR,ERR: successive linearisation "
                         "and Newton-KKT, minutes on the larger collections)")
    ap.add_argument("--gap-step", type=float, default=0.0,
                    help="also GAP(g) over analysis.gap_thresholds' simplex grid of this step, on the "
                         "graded collections (0.1: 365,704 problems, ~3 min on 2 workers)")
    ap.add_argument("--save", default=None, help="CSV of every problem's status, entropy and nit")
    args = ap.parse_args(argv)
    rows = []
    bad = total = 0
    t_all = time.perf_counter()
    for name in args.collections.split(","):
        if not SOURCES[name][0].exists():
            print(f"{name}: not found at {SOURCES[name][0]}, skipped")
            continue
        lists = read_lists(*SOURCES[name])
        metrics = [parse_measure(f"AP(rel={t})") for t in range(1, lists.levels)]
        metrics += [parse_measure("nDCG"), parse_measure("GAP"), parse_measure("RBP")]
        metrics += [parse_measure(x) for x in args.more.split(",") if x]
        if args.gap_step > 0 and lists.levels > 2:  # the g settings analysis.gap_thresholds sweeps
            grid = [parse_measure(g_name(g)) for g in simplex_grid(lists.levels - 1, args.gap_step)]
            metrics += [m for m in grid if str(m) not in {str(x) for x in metrics}]
        for count in args.counts.split(","):
            for m in metrics:
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    res = solve(m, m.value(lists), lists, count=count, workers=args.workers)
                dt = time.perf_counter() - t0
                opt = res.status == "optimal"
                uncert = int(((res.residual > 1e-9) | (res.stationarity > 1e-9))[opt].sum())
                nc = int((res.status == "not_converged").sum())
                bad += nc + uncert
                total += len(res)
                counts = ", ".join(f"{k}={c}" for k, c in res.counts().items() if c)
                print(f"{name:18} {count:9} {str(m):20} {len(res):6d} problems {dt:7.1f} s  "
                      f"max nit {res.nit.max():5d}  [{counts}]  uncertified optimal={uncert}", flush=True)
                if args.save:
                    rows.append(dict(collection=name, count=count, metric=str(m), i=np.arange(len(res)),
                                     status=res.status, entropy=res.entropy, nit=res.nit,
                                     residual=res.residual, attained=res.attained,
                                     b=res.multipliers[:, -1]))
                for i in np.flatnonzero(res.status == "not_converged"):
                    print(f"    not_converged: list {i} (run {lists.runs[i]}, topic {lists.topics[i]}): "
                          f"residual {res.residual[i]:.1e}, stationarity {res.stationarity[i]:.1e}, "
                          f"|b| {abs(res.multipliers[i, -1]):.2e}", flush=True)
    print(f"{total} problems in {time.perf_counter() - t_all:.1f} s")
    if args.save:
        import pandas as pd

        pd.concat([pd.DataFrame(r) for r in rows], ignore_index=True).to_csv(args.save, index=False,
                                                                             float_format="%.17g")
    print("OK: no not_converged, every optimal certified" if not bad else f"FAILED: {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
