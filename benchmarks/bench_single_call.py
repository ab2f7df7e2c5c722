"""One problem per call: ``maxent.solver.solve`` of a single list, this checkout against another
checkout's whole solver (its Python path and its kernels), each in its own process, runs
alternating. A single call pays the solver's Python path (classification, features,
certification, the result) as much as its kernel; batched throughput is ``bench_solver.py``'s.

Each run solves the same lists (trec_covid_r1, the first ``--problems`` of length >= N, cut at
N) in a fresh process per checkout: per list, the fastest of ``--repeat`` calls after one
warm-up call, taken in ``--repeat`` passes over the lists so that a slow spell of a shared
machine does not fall on one list's calls; the run reports the median over the lists.
``--evidence`` writes the rows to ``results/benchmarks/solver/single_call/single_call.csv``
with its ``PROVENANCE.json``.

    python benchmarks/bench_single_call.py --against /tmp/start [--runs 3] [--evidence]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_solver import DATA  # noqa: E402  (the shared data, as the other solver benchmarks)

# Run in the checkout timed, on its own maxent: the lists are built here with the public API
# both checkouts share (bench_solver.load and full_length would import this checkout's code).
_SNIPPET = """
import json, sys, time, warnings
import numpy as np
from maxent import rank_runs, read_qrels, read_runs
from maxent.metrics import parse_measure
from maxent.solver import solve
data, N, problems, repeat, metrics = {data!r}, {N}, {problems}, {repeat}, {metrics!r}
from pathlib import Path
folder = Path(data)
lists = rank_runs(read_runs(folder / "runs"), read_qrels(sorted((folder / "qrels").iterdir())[0]))
lists = lists.take(np.flatnonzero(lists.lengths >= N)[:problems]).truncate(N)
out = {{}}
warnings.simplefilter("ignore")
for name in metrics:
    m = parse_measure(name)
    ones = [lists.take([i]) for i in range(len(lists))]
    values = [m.value(one) for one in ones]
    for one, v in zip(ones, values):
        solve(m, v, one)
    best = [float("inf")] * len(ones)
    for _ in range(repeat):     # passes over the lists: each list's calls spread over the run
        for i, (one, v) in enumerate(zip(ones, values)):
            t0 = time.perf_counter()
            solve(m, v, one)
            best[i] = min(best[i], time.perf_counter() - t0)
    out[name] = float(np.median([1e3 * t for t in best]))
print(json.dumps(out))
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", required=True, help="another checkout, run alternately")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--problems", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--N", type=int, default=1000)
    ap.add_argument("--metrics", default="nDCG,P@10")
    ap.add_argument("--evidence", action="store_true")
    args = ap.parse_args(argv)
    if not (DATA / "trec_covid_r1").is_dir():
        raise SystemExit(f"no data at {DATA / 'trec_covid_r1'}")
    started = time.time()
    code = _SNIPPET.format(data=str(DATA / "trec_covid_r1"), N=args.N, problems=args.problems, repeat=args.repeat,
                           metrics=args.metrics.split(","))
    rows = []
    for k in range(args.runs):
        for label, where in (("this", ROOT), ("against", Path(args.against).resolve())):
            env = dict(os.environ, PYTHONPATH=str(where))
            res = subprocess.run([sys.executable, "-c", code], cwd=where, env=env, capture_output=True, text=True)
            if res.returncode:
                raise SystemExit(f"{where}: {res.stderr[-2000:]}")
            for metric, ms in json.loads(res.stdout.strip().splitlines()[-1]).items():
                rows.append(dict(checkout=label, path=str(where), run=k + 1, metric=metric, N=args.N,
                                 problems=args.problems, median_ms=ms))
                print(f"{label} ({where}) run {k + 1}: {metric} N = {args.N}: {ms:.3f} ms per call "
                      f"(median of {args.problems} lists)", file=sys.stderr, flush=True)
    if args.evidence:
        sys.path.insert(0, str(ROOT))
        from analysis._provenance import command_line, write_rows

        write_rows(ROOT / "results" / "benchmarks" / "solver" / "single_call", "single_call.csv", rows,
                   command_line(None if argv is None else ["", *argv], script=__file__),
                   started, extra={"against": args.against})
    return 0


if __name__ == "__main__":
    sys.exit(main())
