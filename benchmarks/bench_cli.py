"""End-to-end speed of ``maxent evaluate`` from process start, against a pytrec_eval script.

Times ``python -m maxent.evaluate QRELS RUN... -m map -m P_10 -m ndcg`` on the 20 bundled
TREC-COVID runs against a Python script doing the same with pytrec_eval (read the qrels and
every run, evaluate, print the per-run means), each a fresh process, runs alternating; the
two outputs' means are checked equal first. ``--against DIR`` times another checkout's command
in the same alternation (e.g. an earlier commit, to show a change's cost). ``--evidence``
writes the rows to ``results/benchmarks/cli/cli.csv`` with its ``PROVENANCE.json``. Speed is
reported, never asserted; compare the ratios measured in one run.

    python benchmarks/bench_cli.py [--repeat 15] [--against /tmp/start] [--evidence]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = sorted((ROOT / "trec_runs" / "runs").iterdir())
QRELS = ROOT / "trec_runs" / "qrels-rnd1.txt"
MEASURES = ("map", "P_10", "ndcg")

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
        print(f"{m}\t{sum(vals) / len(vals):6.4f}")
"""


def _commands(against: str | None) -> dict[str, tuple[list[str], dict]]:
    ours = ["-m", "maxent.evaluate", str(QRELS), *map(str, RUNS), *[a for m in MEASURES for a in ("-m", m)]]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as installed
    cmds = {"ours": ([sys.executable, *ours], dict(env, PYTHONPATH=str(ROOT))),
            "pytrec_eval": ([sys.executable, "-c", PEER_SCRIPT, str(QRELS), *map(str, RUNS)], env)}
    if against:
        cmds["against"] = ([sys.executable, *ours], dict(env, PYTHONPATH=str(Path(against).resolve())))
    return cmds


def _run(cmd: list[str], env: dict, cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode:
        raise SystemExit(f"{cmd[:3]} failed: {done.stderr[-1000:]}")
    return wall, done.stdout


def _means(text: str) -> list[tuple[str, str]]:
    rows = [line.split("\t") for line in text.splitlines()]
    return [(r[0].strip(), r[-1]) for r in rows if r[0].strip() in MEASURES]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--against", default=None, help="another checkout, timed in the same alternation")
    ap.add_argument("--evidence", action="store_true")
    args = ap.parse_args(argv)
    started = time.time()
    cmds = _commands(args.against)
    cwd = {"against": Path(args.against).resolve() if args.against else ROOT}
    outputs = {k: _means(_run(c, e, cwd.get(k, ROOT))[1]) for k, (c, e) in cmds.items()}
    if len({tuple(v) for v in outputs.values()}) != 1:
        raise SystemExit("the commands' per-run means differ")
    rows = []
    for k in range(args.repeat):
        for label, (cmd, env) in cmds.items():
            wall, _ = _run(cmd, env, cwd.get(label, ROOT))
            rows.append(dict(command=label, repeat=k + 1, seconds=wall, load_average=os.getloadavg()[0]))
    med = {label: statistics.median(r["seconds"] for r in rows if r["command"] == label) for label in cmds}
    for label, t in med.items():
        print(f"{label:<12} median {t:.3f} s; pytrec_eval / {label} = {med['pytrec_eval'] / t:.2f}x")
    if args.evidence:
        sys.path.insert(0, str(ROOT))
        from analysis._provenance import command_line, write_rows

        write_rows(ROOT / "results" / "benchmarks" / "cli", "cli.csv", rows,
                   command_line(None if argv is None else ["", *argv], script=__file__),
                   started, extra={"against": args.against})
    return 0


if __name__ == "__main__":
    sys.exit(main())
