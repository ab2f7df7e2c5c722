"""This checkout's compiled engine, every build this CPU runs (``_engine.BUILDS``), against an
earlier checkout's numba kernels (``--against DIR``: ``DIR/maxent/solver/_compiled.py``, its cache
``NUMBA_CACHE_DIR`` warm), swapped in for the engine ``maxent.solver.forms`` calls under this
checkout's ``solve``.
Batches of ``--problems`` lists of trec_covid_r1 at N = 1000 and trec_dl19_passage at N = 100;
passes alternate, the fastest of ``--repeat`` by wall and by CPU time is kept (for one thread the
CPU time is the steadier on a shared machine). ``--evidence``: results/benchmarks/solver/engines/.

    NUMBA_CACHE_DIR=... python benchmarks/bench_engines.py --against /tmp/start [--evidence]
"""
from __future__ import annotations

import importlib.util
import os
import sys
import time
import types
import warnings
from pathlib import Path

import numpy as np

from _common import RESULTS, load, parser, sample_lists, write_evidence

import maxent.solver as S
from maxent.metrics import parse_measure
from maxent.solver import _engine, forms


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

    def outputs(o, stat=True):
        return (o.P, o.col0, o.theta, o.code, o.nit, o.resid, o.ent, o.att) + ((o.stat,) if stat else ())

    def linear_batch(W, p, o):
        return mod.linear_batch(W, p.v, p.K, p.lengths, skip(p.solve_me), p.tol, p.steps, *outputs(o, False))

    def prefix_batch(js, kap, f, p, o):
        return mod.prefix_batch(js, kap, f, p.v, p.K, p.lengths, skip(p.solve_me), p.tol, p.kkt_tol, p.newton,
                                p.steps, *outputs(o))

    def cascade_batch(s, c, p, o):
        return mod.cascade_batch(s, c, p.v, p.K, p.lengths, skip(p.solve_me), p.tol, p.kkt_tol, p.newton,
                                 p.steps, p.switch, True, *outputs(o))

    return types.SimpleNamespace(
        linear_batch=linear_batch, prefix_batch=prefix_batch, cascade_batch=cascade_batch,
        Problems=_engine.Problems, Results=_engine.Results,
        linear_range=_engine.linear_range, prefix_range=_engine.prefix_range,
        cascade_range=_engine.cascade_range, kernel_code=_engine.kernel_code)


def timed(engine, m, v, lists, workers):
    """(wall, CPU) seconds and result of ``solve`` with ``engine`` swapped in."""
    forms._engine = engine          # forms.py makes every kernel call
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w0, c0 = time.perf_counter(), time.process_time()
            r = S.solve(m, v, lists, workers=workers)
            return time.perf_counter() - w0, time.process_time() - c0, r
    finally:
        forms._engine = _engine


def main(argv=None) -> int:
    ap = parser(__doc__, against=True)
    ap.add_argument("--problems", type=int, default=5000)
    ap.add_argument("--metrics", default="nDCG,AP,GAP,ERR")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    started = time.time()
    rng = np.random.default_rng(args.seed)
    rows = []
    builds = {isa: _engine.build(isa) for isa in reversed(_engine.BUILDS)}
    engines = {"numba": numba_engine(Path(args.against))}
    engines |= {isa: types.SimpleNamespace(kernel_code=_engine.kernel_code, **funcs)
                for isa, funcs in builds.items() if funcs is not None}
    for coll, N in (("trec_covid_r1", 1000), ("trec_dl19_passage", 100)):
        lists = sample_lists(load(coll), args.problems, N, rng)
        for w in [int(x) for x in args.workers.split(",")]:
            for name in args.metrics.split(","):
                m = parse_measure(name)
                v = m.value(lists)
                for eng in engines.values():     # warm: numba loads its cache
                    timed(eng, m, v[:8], lists.take(np.arange(8)), 1)
                best = {label: (np.inf, np.inf) for label in engines}
                res = {}
                for _ in range(args.repeat):
                    for label, eng in engines.items():
                        wall, cpu, r = timed(eng, m, v, lists, w)
                        best[label] = (min(best[label][0], wall), min(best[label][1], cpu))
                        # statuses and iterations only: results kept alive (120 MB at N = 1000)
                        # slow the next solves unevenly
                        res[label] = (r.status, float(r.nit.mean()))
                        del r
                same = all(bool((res["numba"][0] == res[label][0]).all()) for label in res)
                for label, (wall, cpu) in best.items():
                    rows.append(dict(collection=coll, N=N, metric=name, threads=w, engine=label,
                                     chosen=label == _engine.ISA, problems=len(lists), wall_s=wall, cpu_s=cpu,
                                     wall_ms_per_problem=1e3 * wall / len(lists),
                                     cpu_ms_per_problem=1e3 * cpu / len(lists),
                                     mean_nit=res[label][1], same_statuses=same))
                print(f"{coll:18} N={N:4d} {name:5} {w} thr  numba cpu {best['numba'][1]:6.3f} s wall "
                      f"{best['numba'][0]:6.3f} s" + "".join(
                          f" | {k} cpu {best[k][1]:6.3f} s x{best[k][1] / best['numba'][1]:4.2f} wall "
                          f"x{best[k][0] / best['numba'][0]:4.2f}" for k in best if k != "numba")
                      + f"  same statuses {same}  (load {os.getloadavg()[0]:.1f})", flush=True)
    if args.evidence:
        write_evidence(RESULTS / "solver" / "engines", "engines.csv", rows, argv, __file__, started,
                       extra={"against": args.against}, float_format="%.5g")
    return 0


if __name__ == "__main__":
    sys.exit(main())
