"""One problem per call: ``maxent.solver.solve`` of a single list, this checkout's whole solver
(its Python path and kernels) against another checkout's, each in a fresh process, runs
alternating (batched throughput is ``bench_solver.py``'s). Per list of trec_covid_r1 (the first
``--problems`` of length >= N, cut at N): the fastest of ``--repeat`` calls after a warm-up, the
calls spread over ``--repeat`` passes; a run reports the median over the lists.
``--evidence``: results/benchmarks/solver/single_call/.

    python benchmarks/bench_single_call.py --against /tmp/start [--runs 3] [--evidence]
"""
from __future__ import annotations

import json
import sys
import time

from _common import DATA, RESULTS, alternating, parser, run, write_evidence

# run in the checkout timed, on its own maxent: only the public API both checkouts share
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
    for _ in range(repeat):
        for i, (one, v) in enumerate(zip(ones, values)):
            t0 = time.perf_counter()
            solve(m, v, one)
            best[i] = min(best[i], time.perf_counter() - t0)
    out[name] = float(np.median([1e3 * t for t in best]))
print(json.dumps(out))
"""


def main(argv=None) -> int:
    ap = parser(__doc__, against=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--problems", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--N", type=int, default=1000)
    ap.add_argument("--metrics", default="nDCG,P@10")
    args = ap.parse_args(argv)
    if not (DATA / "trec_covid_r1").is_dir():
        raise SystemExit(f"no data at {DATA / 'trec_covid_r1'}")
    started = time.time()
    code = _SNIPPET.format(data=str(DATA / "trec_covid_r1"), N=args.N, problems=args.problems,
                           repeat=args.repeat, metrics=args.metrics.split(","))
    rows = []
    for k, label, where in alternating(args.runs, args.against):
        stdout = run([sys.executable, "-c", code], where)[1]
        for metric, ms in json.loads(stdout.strip().splitlines()[-1]).items():
            rows.append(dict(checkout=label, path=str(where), run=k, metric=metric, N=args.N,
                             problems=args.problems, median_ms=ms))
            print(f"{label} ({where}) run {k}: {metric} N = {args.N}: {ms:.3f} ms per call "
                  f"(median of {args.problems} lists)", file=sys.stderr, flush=True)
    if args.evidence:
        write_evidence(RESULTS / "solver" / "single_call", "single_call.csv", rows, argv, __file__, started,
                       extra={"against": args.against})
    return 0


if __name__ == "__main__":
    sys.exit(main())
