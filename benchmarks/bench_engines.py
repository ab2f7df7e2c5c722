"""This checkout's compiled engine against an earlier checkout's numba kernels, in one process.

Both engines solve the same batches through this checkout's ``maxent.solver.solve``: the earlier
kernels (``--against DIR``: ``DIR/maxent/solver/_compiled.py``, numba with its on-disk cache in
``NUMBA_CACHE_DIR``; warm it first) are swapped in for ``maxent.solver._engine``. The passes
alternate (earlier, this, earlier, ...), each timed by wall clock and by the CPU time of the
process; the fastest of ``--repeat`` is kept. On a shared machine the CPU time is the steadier
measure for one thread; for two threads the wall time is what counts.

Batches: ``--problems`` lists of trec_covid_r1 at N = 1000 and of trec_dl19_passage at N = 100
(their real depth-100 lists). ``--evidence`` writes ``results/benchmarks/solver/engines/engines.csv``.

Every build of the engine this CPU runs is timed (``_engine.BUILDS``: the baseline, AVX2,
AVX-512); the widest of them is the one the import chose (``_engine.ISA``).

    NUMBA_CACHE_DIR=... python benchmarks/bench_engines.py --against /tmp/start [--evidence]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
import types
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import maxent.solver as S  # noqa: E402
from bench_solver import full_length, load  # noqa: E402
from maxent.metrics import parse_measure  # noqa: E402
from maxent.solver import _engine, classify  # noqa: E402


def numba_engine(folder: Path):
    """The earlier kernels behind this checkout's call signatures. They classified each problem
    themselves: a problem this checkout does not ask them to solve is passed as ``undefined``
    (skipped), and the others are interior, which they solve. The attainable ranges (the
    classification's input) come from this checkout's engine for both."""
    name = "maxent.solver._compiled"         # its name there (numba's cache records it)
    spec = importlib.util.spec_from_file_location(name, folder / "maxent" / "solver" / "_compiled.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)

    def skip(solve_me):
        return ~np.asarray(solve_me).astype(bool)

    def prefix_batch(js, kap, f, v, K, n, solve_me, lo, hi, *a):
        return mod.prefix_batch(js, kap, f, v, K, n, skip(solve_me), *a)

    def cascade_batch(s, c, v, K, n, solve_me, tol, kkt_tol, newton, steps, switch, *a):
        return mod.cascade_batch(s, c, v, K, n, skip(solve_me), tol, kkt_tol, newton, steps, switch, True, *a)

    return types.SimpleNamespace(
        linear_batch=lambda W, v, K, n, solve_me, *a: mod.linear_batch(W, v, K, n, skip(solve_me), *a),
        prefix_batch=prefix_batch, cascade_batch=cascade_batch,
        linear_range=_engine.linear_range, prefix_range=_engine.prefix_range,
        cascade_range=_engine.cascade_range, kernel_code=_engine.kernel_code)


def timed(engine, m, v, lists, workers):
    S._engine = classify._engine = engine
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w0, c0 = time.perf_counter(), time.process_time()
            r = S.solve(m, v, lists, workers=workers)
            return time.perf_counter() - w0, time.process_time() - c0, r
    finally:
        S._engine = classify._engine = _engine


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", required=True, help="checkout with maxent/solver/_compiled.py (numba)")
    ap.add_argument("--problems", type=int, default=5000)
    ap.add_argument("--metrics", default="nDCG,AP,GAP,ERR")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--evidence", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    started = time.time()
    earlier = numba_engine(Path(args.against))
    rng = np.random.default_rng(args.seed)
    rows = []
    builds = {isa: _engine.build(isa) for isa in reversed(_engine.BUILDS)}
    engines = [("numba", earlier)] + [(isa, types.SimpleNamespace(kernel_code=_engine.kernel_code, **funcs))
                                      for isa, funcs in builds.items() if funcs is not None]
    for coll, N in (("trec_covid_r1", 1000), ("trec_dl19_passage", 100)):
        pool = full_length(load(coll), N)
        lists = pool.take(rng.choice(len(pool), size=args.problems, replace=len(pool) < args.problems))
        for w in [int(x) for x in args.workers.split(",")]:
            for name in args.metrics.split(","):
                m = parse_measure(name)
                v = m.value(lists)
                for _, eng in engines:                   # warm: numba loads its cache
                    timed(eng, m, v[:8], lists.take(np.arange(8)), 1)
                best = {label: [np.inf, np.inf] for label, _ in engines}
                res = {}
                for _ in range(args.repeat):
                    for label, eng in engines:
                        wall, cpu, r = timed(eng, m, v, lists, w)
                        best[label] = [min(best[label][0], wall), min(best[label][1], cpu)]
                        # statuses and iterations only: a result of N = 1000 holds 120 MB, and
                        # results kept alive slow the next solves unevenly
                        res[label] = (r.status, float(r.nit.mean()))
                        del r
                same = all(bool((res["numba"][0] == res[label][0]).all()) for label in res)
                for label in best:
                    rows.append(dict(collection=coll, N=N, metric=name, threads=w, engine=label,
                                     chosen=label == _engine.ISA,
                                     problems=len(lists), wall_s=best[label][0], cpu_s=best[label][1],
                                     wall_ms_per_problem=1e3 * best[label][0] / len(lists),
                                     cpu_ms_per_problem=1e3 * best[label][1] / len(lists),
                                     mean_nit=res[label][1], same_statuses=same))
                print(f"{coll:18} N={N:4d} {name:5} {w} thr  numba cpu {best['numba'][1]:6.3f} s wall "
                      f"{best['numba'][0]:6.3f} s" + "".join(
                          f" | {k} cpu {best[k][1]:6.3f} s x{best[k][1] / best['numba'][1]:4.2f} wall "
                          f"x{best[k][0] / best['numba'][0]:4.2f}" for k in best if k != "numba")
                      + f"  same statuses {same}  (load {os.getloadavg()[0]:.1f})", flush=True)
    if args.evidence:
        from analysis._provenance import command_line, write_rows

        write_rows(ROOT / "results" / "benchmarks" / "solver" / "engines", "engines.csv", rows,
                   command_line(None if argv is None else ["", *argv], script=__file__), started,
                   extra={"against": args.against}, float_format="%.5g")
    return 0


if __name__ == "__main__":
    sys.exit(main())
