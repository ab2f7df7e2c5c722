"""Where the compiled solver spends its time: ``perf`` samples named by numba function.

numba's machine code is anonymous memory to ``perf`` (samples show as ``[JIT] tid``). This
script compiles the kernels afresh into a throw-away cache (so that their LLVM modules, and
the names of every function in them, are at hand: ~1 min), writes ``/tmp/perf-<pid>.map``
(each function's address and the distance to the next one's), and solves the benchmark's
batch (``bench_solver.py``'s 5000 trec_covid_r1 lists at N = 1000) again and again while
``perf record`` samples the process. Functions LLVM inlined are counted in their caller.

    python benchmarks/profile_solver.py GAP [--seconds 12] [--top 30]

Needs Linux ``perf`` and the shared data. It found, in the ninth session: the reassociated
sums over ``range(n0, n1)`` left scalar (numba's negative-index wraparound), the scans'
offset indices, and the first-touch page faults of the output arrays (``clear_page_erms``).
In-process A/B timing of two kernel versions is the way to confirm a change (this VM's
runs move by 10-20 %).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_perf_map(dispatchers) -> int:
    """/tmp/perf-<pid>.map for every function defined in the dispatchers' LLVM modules."""
    names = {}
    for d in dispatchers:
        for cres in d.overloads.values():
            lib = cres.library
            module = getattr(lib, "_final_module", None)
            if module is None:                       # loaded from a cache: no module
                continue
            for fn in module.functions:
                if fn.is_declaration:
                    continue
                addr = lib.get_pointer_to_function(fn.name)
                if not addr:
                    continue
                m = re.search(r"_compiled\d+([A-Za-z_][A-Za-z_0-9]*)", fn.name)
                names[addr] = re.split(r"B\d+", m.group(1))[0] if m else fn.name
    addrs = sorted(names)
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as out:
        for i, a in enumerate(addrs):
            size = min(addrs[i + 1] - a if i + 1 < len(addrs) else 1 << 16, 1 << 20)
            out.write(f"{a:x} {size:x} {names[a]}\n")
    return len(addrs)


def worker(metric: str, ready: str) -> None:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import numpy as np
    from bench_solver import load, sample_lists

    from maxent.metrics import parse_measure
    from maxent.solver import _compiled as nb
    from maxent.solver import solve

    batch = sample_lists(load(), 5000, 1000, np.random.default_rng(0))   # bench_solver's, --skip-cvxpy
    m = parse_measure(metric)
    v = m.value(batch)
    warnings.simplefilter("ignore")
    solve(m, v[:4], batch.take(np.arange(4)), engine="numba")
    n = write_perf_map([nb.prefix_batch, nb.cascade_batch, nb.linear_batch])
    print(f"{n} functions mapped", flush=True)
    Path(ready).write_text(str(os.getpid()))
    while True:
        t0 = time.perf_counter()
        solve(m, v, batch, engine="numba", workers=1)
        print(f"{metric} {time.perf_counter() - t0:.2f} s", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("metric", help="AP, nDCG, GAP, RR or ERR")
    ap.add_argument("--seconds", type=float, default=12.0, help="sampling time")
    ap.add_argument("--top", type=int, default=30, help="functions listed")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.metric, args.worker)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        ready = os.path.join(tmp, "ready")
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, "cache"))
        proc = subprocess.Popen([sys.executable, __file__, args.metric, "--worker", ready], env=env)
        try:
            while not os.path.exists(ready):
                if proc.poll() is not None:
                    return 1
                time.sleep(0.5)
            data = os.path.join(tmp, "perf.data")
            subprocess.run(["perf", "record", "-q", "-p", str(proc.pid), "-o", data, "--",
                            "sleep", str(args.seconds)], check=True)
        finally:
            proc.kill()
            proc.wait()
        report = subprocess.run(["perf", "report", "-i", data, "--stdio", "--sort", "sym"],
                                capture_output=True, text=True, check=True).stdout
        rows = [r for r in report.splitlines() if r.strip() and not r.startswith("#")]
        print("\n".join(rows[: args.top]))
        Path(f"/tmp/perf-{proc.pid}.map").unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
