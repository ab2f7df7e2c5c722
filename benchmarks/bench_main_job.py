"""Wall time of the main job, ``python -m analysis.maxent`` on the bundled sample, in fresh
processes (targets: first run after an install <= 10 s, later runs <= 5 s), alternating with
another checkout's job (its numba cache ``NUMBA_CACHE_DIR`` warm).
``--evidence``: results/benchmarks/solver/main_job/.

    python benchmarks/bench_main_job.py [--runs 3] [--against /tmp/start] [--evidence]
"""
from __future__ import annotations

import os
import sys
import tempfile
import time

from _common import RESULTS, alternating, parser, run, write_evidence


def main(argv=None) -> int:
    ap = parser(__doc__, against=False)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    started = time.time()
    rows = []
    for k, label, where in alternating(args.runs, args.against):
        with tempfile.TemporaryDirectory() as out:
            wall = run([sys.executable, "-m", "analysis.maxent", "--out", out, "--no-progress"], where)[0]
        load = os.getloadavg()[0]
        print(f"{label} ({where}) run {k}: {wall:.1f} s (load average {load:.1f})", flush=True)
        rows.append(dict(checkout=label, path=str(where), run=k, seconds=wall, load_average=load))
    if args.evidence:
        write_evidence(RESULTS / "solver" / "main_job", "main_job.csv", rows, argv, __file__, started,
                       extra={"against": args.against})
    return 0


if __name__ == "__main__":
    sys.exit(main())
