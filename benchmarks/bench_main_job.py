"""Wall time of the main job, ``python -m analysis.maxent`` on the bundled sample, run several
times in fresh processes (the first run after an install pays the byte-compilation and cold file
caches; the targets: first run <= 10 s, later runs <= 5 s).

``--against DIR`` alternates each run with one of another checkout's job (run from that
directory; e.g. an earlier commit's, with its numba cache ``NUMBA_CACHE_DIR`` warm). ``--evidence``
writes the rows to ``results/benchmarks/solver/main_job/main_job.csv`` with its ``PROVENANCE.json``.

    python benchmarks/bench_main_job.py [--runs 3] [--against /tmp/start] [--evidence]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--evidence", action="store_true")
    ap.add_argument("--against", default=None, help="another checkout, run alternately")
    args = ap.parse_args(argv)
    started = time.time()
    checkouts = [("this", ROOT)] + ([("against", Path(args.against))] if args.against else [])
    rows = []
    for k in range(args.runs):
        for label, where in checkouts:
            env = dict(os.environ, PYTHONPATH=str(where))
            with tempfile.TemporaryDirectory() as out:
                t0 = time.perf_counter()
                res = subprocess.run([sys.executable, "-m", "analysis.maxent", "--out", out, "--no-progress"],
                                     cwd=where, env=env, capture_output=True, text=True)
                wall = time.perf_counter() - t0
            if res.returncode:
                print(res.stderr[-2000:], file=sys.stderr)
                return 1
            load = os.getloadavg()[0]
            print(f"{label} ({where}) run {k + 1}: {wall:.1f} s (load average {load:.1f})", flush=True)
            rows.append(dict(checkout=label, path=str(where), run=k + 1, seconds=wall, load_average=load))
    if args.evidence:
        sys.path.insert(0, str(ROOT))
        from analysis._provenance import command_line, write_rows

        write_rows(ROOT / "results" / "benchmarks" / "solver" / "main_job", "main_job.csv", rows,
                   command_line(None if argv is None else ["", *argv], script=__file__),
                   started, extra={"against": args.against})
    return 0


if __name__ == "__main__":
    sys.exit(main())
