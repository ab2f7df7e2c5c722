"""Wall time of the main job, ``python -m analysis.maxent`` on the bundled sample, run several
times in fresh processes (the first run after an install pays the byte-compilation and cold file
caches; the targets: first run <= 10 s, later runs <= 5 s).

``MAXENT_ROOT=DIR`` times another checkout's job (run from that directory). ``--evidence``
appends the rows to ``results/benchmarks/solver/main_job.csv`` with its ``PROVENANCE.json``.

    python benchmarks/bench_main_job.py [--runs 3] [--evidence --label final]
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
    ap.add_argument("--label", default="final")
    args = ap.parse_args(argv)
    started = time.time()
    where = Path(os.environ.get("MAXENT_ROOT") or ROOT)
    env = dict(os.environ, PYTHONPATH=str(where))
    rows = []
    for k in range(args.runs):
        with tempfile.TemporaryDirectory() as out:
            t0 = time.perf_counter()
            res = subprocess.run([sys.executable, "-m", "analysis.maxent", "--out", out, "--no-progress"],
                                 cwd=where, env=env, capture_output=True, text=True)
            wall = time.perf_counter() - t0
        if res.returncode:
            print(res.stderr[-2000:], file=sys.stderr)
            return 1
        print(f"run {k + 1}: {wall:.1f} s (load average {os.getloadavg()[0]:.1f})", flush=True)
        rows.append(dict(label=args.label, run=k + 1, seconds=wall, load_average=os.getloadavg()[0]))
    if args.evidence:
        import pandas as pd

        sys.path.insert(0, str(ROOT))
        from analysis._provenance import write_provenance

        folder = ROOT / "results" / "benchmarks" / "solver"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "main_job.csv"
        df = pd.DataFrame(rows)
        if path.exists():
            df = pd.concat([pd.read_csv(path), df], ignore_index=True)
        df.to_csv(path.with_suffix(".tmp"), index=False, float_format="%.4g")
        path.with_suffix(".tmp").replace(path)
        write_provenance(folder, "python benchmarks/bench_main_job.py " + " ".join(sys.argv[1:] if argv is None else argv),
                         started, extra={"maxent_root": str(where), "label": args.label})
    return 0


if __name__ == "__main__":
    sys.exit(main())
