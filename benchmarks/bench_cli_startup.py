"""End-to-end speed of the command line, from process start, against a pytrec_eval script.

Times ``python -m maxent.evaluate QRELS RUN... -m map -m P_10 -m ndcg`` on the 20 bundled
TREC-COVID runs (``trec_runs/``) against a Python script doing the same with pytrec_eval
(read the qrels and every run, evaluate map, P_10 and ndcg, print the per-run means), each
started as a fresh process, so interpreter start, imports, reading and printing all count.
Before timing, the two outputs' per-run means are checked equal at 4 decimals.

Both are run as an installed package runs: with Python's bytecode cache on (a
``PYTHONDONTWRITEBYTECODE`` in the environment is removed for the children, so our modules
are not recompiled from source at every start; the peer's are compiled C++ and installed
bytecode anyway). ``--no-bytecode-cache`` keeps the environment as it is.

``--format csv`` is timed too: it is written without pandas, so it starts as fast as
the trec format. Reported: median wall time of ``--repeat`` alternating runs of each, and the ratio
(pytrec_eval script time / ours); the target is >= 3x. The interpreter alone (``python -c
pass``) and ``import numpy`` (as a plain script starts it, and with one OpenBLAS thread, as
the command starts it: see ``maxent/_startup.py``) are timed too, as the floor any Python
tool pays. Ours is also timed with the standard library's zlib instead of the ``fast``
extra's ISA-L gzip engine (the real command, with an `isal` package that refuses to import
first on PYTHONPATH), when isal is installed,
and with ``--jobs 1`` (one process) and ``--jobs 2`` (a forked child reads and ranks about
half of the runs, whatever the load; see ``maxent/_fork.py``) beside the default
``--jobs auto`` (which forks only into CPUs no other task is running on:
``maxent._fork.idle_cpus``). As whether a fork pays depends on how many other tasks are
running, each ``--jobs 2`` run is also paired with the ``--jobs 1`` run just before it and
the pairs' median ratio is reported by the number of other running tasks (``/proc/loadavg``)
sampled just before the pair.
Timings on a shared machine vary with load; the ratio of the two measured in the same run
is what to compare. Speed is reported, never asserted.

Usage: ``python benchmarks/bench_cli_startup.py [--repeat 15]``
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# run as ``python benchmarks/X.py``: this checkout's maxent (what the timed commands run too)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from maxent._fork import running_tasks  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RUNS = sorted((ROOT / "trec_runs" / "runs").iterdir())
QRELS = ROOT / "trec_runs" / "qrels-rnd1.txt"

PEER_SCRIPT = r"""
import gzip, sys
import pytrec_eval
qrels_path, runs = sys.argv[1], sys.argv[2:]
with open(qrels_path) as f:
    qrels = pytrec_eval.parse_qrel(f)
ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P_10", "ndcg"})
for path in runs:
    with gzip.open(path, "rt") as f:
        res = ev.evaluate(pytrec_eval.parse_run(f))
    for m in ("map", "P_10", "ndcg"):
        vals = [t[m] for t in res.values()]
        print(f"{m:<22}\t{path}\t{sum(vals) / len(vals):6.4f}")
"""


def _cmd_ours() -> list[str]:
    return [sys.executable, "-m", "maxent.evaluate", str(QRELS), *map(str, RUNS),
            "-m", "map", "-m", "P_10", "-m", "ndcg"]


def _cmd_ours_zlib(hide: Path) -> tuple[list[str], dict]:
    """The real command with isal hidden (as if the `fast` extra were not installed): a
    package named ``isal`` that refuses to import comes first on PYTHONPATH."""
    (hide / "isal").mkdir(exist_ok=True)
    (hide / "isal" / "__init__.py").write_text('raise ImportError("hidden by bench_cli_startup.py")\n')
    return _cmd_ours(), {"PYTHONPATH": str(hide)}


def _cmd_peer() -> list[str]:
    return [sys.executable, "-c", PEER_SCRIPT, str(QRELS), *map(str, RUNS)]


ENV = dict(os.environ)


def _others_running() -> int | None:
    """Tasks running right now besides this one (Linux ``/proc/loadavg``)."""
    running = running_tasks()
    return None if running is None else running - 1


def _time(cmd: list[str], **env) -> tuple[float, str]:
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True,
                         env={**ENV, **env}).stdout
    return time.perf_counter() - t, out


def _means(text: str, ours: bool) -> list[tuple[str, str]]:
    rows = [ln.split("\t") for ln in text.splitlines()]
    if ours:
        return sorted((r[0].strip(), r[2]) for r in rows if r[0].strip() in ("map", "P_10", "ndcg"))
    return sorted((r[0].strip(), r[2]) for r in rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--no-bytecode-cache", action="store_true",
                   help="keep PYTHONDONTWRITEBYTECODE if set (every start recompiles our modules)")
    args = p.parse_args(argv)
    if not args.no_bytecode_cache:
        ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        import pytrec_eval  # noqa: F401  (the peer: pip install pytrec-eval-terrier)
    except ImportError:
        print("pytrec_eval is needed: pip install -e '.[bench]'", file=sys.stderr)
        return 1
    try:
        import isal  # noqa: F401  (the `fast` extra)
        has_isal = True
    except ImportError:
        has_isal = False
    load0 = os.getloadavg()[0]
    out = _time(_cmd_ours())[1]
    env_check = _means(out, True), _means(_time(_cmd_peer())[1], False)
    if env_check[0] != env_check[1]:
        print("outputs differ:", env_check, file=sys.stderr)
        return 1
    zlib_cmd, zlib_env = _cmd_ours_zlib(Path(tempfile.mkdtemp(prefix="bench_cli_")))
    if has_isal and _time(zlib_cmd, **zlib_env)[1] != out:
        print("outputs differ between the gzip engines", file=sys.stderr)
        return 1
    for jobs in ("1", "2"):
        if _time(_cmd_ours() + ["--jobs", jobs])[1] != out:
            print(f"outputs differ with --jobs {jobs}", file=sys.stderr)
            return 1
    pairs: dict[str, list[float]] = {}
    t = {k: [] for k in ("ours", "ours_csv", "ours_j1", "ours_j2", "ours_zlib", "peer", "python", "numpy",
                         "numpy1")}
    for _ in range(args.repeat):  # alternate, so load changes hit all alike
        t["ours"].append(_time(_cmd_ours())[0])
        t["ours_csv"].append(_time(_cmd_ours() + ["--format", "csv"])[0])
        others = _others_running()
        t["ours_j1"].append(_time(_cmd_ours() + ["--jobs", "1"])[0])
        t["ours_j2"].append(_time(_cmd_ours() + ["--jobs", "2"])[0])
        key = "unknown" if others is None else str(min(others, 2)).replace("2", ">=2")
        pairs.setdefault(key, []).append(t["ours_j2"][-1] / t["ours_j1"][-1])
        t["peer"].append(_time(_cmd_peer())[0])
        if has_isal:
            t["ours_zlib"].append(_time(zlib_cmd, **zlib_env)[0])
        t["python"].append(_time([sys.executable, "-c", "pass"])[0])
        t["numpy"].append(_time([sys.executable, "-c", "import numpy"])[0])
        t["numpy1"].append(_time([sys.executable, "-c", "import numpy"], OPENBLAS_NUM_THREADS="1")[0])
    med = {k: statistics.median(v) for k, v in t.items() if v}
    cache = "off" if ENV.get("PYTHONDONTWRITEBYTECODE") else "on"
    print(f"{len(RUNS)} bundled runs, map + P_10 + ndcg, median of {args.repeat} "
          f"(load {load0:.2f} -> {os.getloadavg()[0]:.2f}, bytecode cache {cache})")
    print(f"  python -c pass                                {med['python']:.3f} s")
    print(f"  python -c 'import numpy'                      {med['numpy']:.3f} s")
    print(f"  python -c 'import numpy', one OpenBLAS thread {med['numpy1']:.3f} s")
    engine = "ISA-L gzip (fast)" if has_isal else "zlib (no isal)   "
    print(f"  python -m maxent.evaluate, {engine}  {med['ours']:.3f} s")
    print(f"  ... --format csv (no pandas either)           {med['ours_csv']:.3f} s")
    print(f"  ... --jobs 1 (one process)                    {med['ours_j1']:.3f} s")
    print(f"  ... --jobs 2 (fork whatever the load)         {med['ours_j2']:.3f} s")
    for key in sorted(pairs):
        print(f"    --jobs 2 / --jobs 1 with {key} other task(s) running: median "
              f"{statistics.median(pairs[key]):.3f} over {len(pairs[key])} pair(s)")
    if has_isal:
        print(f"  python -m maxent.evaluate, zlib               {med['ours_zlib']:.3f} s")
    else:
        print("  (pip install -e '.[fast]' for the ISA-L gzip engine)")
    print(f"  pytrec_eval script                            {med['peer']:.3f} s")
    print(f"  speed-up {med['peer'] / med['ours']:.2f}x (target >= 3x); "
          f"beyond the interpreter: {(med['peer'] - med['python']) / (med['ours'] - med['python']):.2f}x")
    print(f"  --format csv: {med['peer'] / med['ours_csv']:.2f}x")
    print(f"  --jobs 1: {med['peer'] / med['ours_j1']:.2f}x; --jobs 2: "
          f"{med['peer'] / med['ours_j2']:.2f}x")
    if has_isal:
        print(f"  with zlib: {med['peer'] / med['ours_zlib']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
