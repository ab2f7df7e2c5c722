"""Speed of the metric library against pytrec_eval: runs per second for AP + P@10 + nDCG.

On seeded R runs x T topics x D documents with graded qrels, times (the fastest of ``--repeat``,
the two alternating, by wall and CPU time) the whole job **from files** (read the qrels and runs,
rank, compute the measures per topic; pytrec_eval: ``parse_qrel``, ``RelevanceEvaluator``,
``parse_run``, ``evaluate``) and **in memory** (from parsed runs). The per-topic values are
checked equal (1e-9) first. Ratios, never asserted.

    python benchmarks/bench_metrics.py [--runs 100 --topics 50 --docs 1000 --seed 0]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from _common import fastest

from maxent.metrics import parse_measures
from maxent.ranked import rank_runs
from maxent.trec import read_qrels, read_runs

MEASURES = ("AP", "P@10", "nDCG")
PEER_MEASURES = {"map": "AP", "P_10": "P@10", "ndcg": "nDCG"}


def generate(directory: Path, runs: int, topics: int, docs: int, seed: int,
             pool: int = 3000, judged: int = 400, shuffle: bool = False) -> tuple[Path, Path]:
    """Write ``qrels.txt`` and ``runs/run_XXX`` under ``directory``: per topic, ``judged`` of a
    pool of ``pool`` docnos judged 0..3 (probabilities .6 .2 .12 .08); each run retrieves ``docs``
    of the pool, scores rounded to 4 decimals (ties occur, as in real runs), lines by decreasing
    score or, with ``shuffle``, in random order."""
    rng = np.random.default_rng(seed)
    qrels = directory / "qrels.txt"
    run_dir = directory / "runs"
    run_dir.mkdir(parents=True, exist_ok=True)
    lines = []
    pools = []
    for t in range(topics):
        names = np.array([f"D{t:03d}-{i:05d}" for i in range(pool)])
        pools.append(names)
        idx = rng.choice(pool, size=judged, replace=False)
        grades = rng.choice(4, size=judged, p=[0.6, 0.2, 0.12, 0.08])
        lines.extend(f"{700 + t} 0 {names[i]} {g}\n" for i, g in zip(idx, grades))
    qrels.write_text("".join(lines))
    for r in range(runs):
        out = []
        for t in range(topics):
            idx = rng.choice(pool, size=docs, replace=False)
            scores = np.round(rng.normal(size=docs) + 0.002 * (pool - idx), 4)
            by_score = np.argsort(-scores, kind="stable")
            names, scores = pools[t][idx][by_score], scores[by_score]
            out.extend(f"{700 + t} Q0 {d} {k + 1} {s:.4f} run_{r:03d}\n"
                       for k, (d, s) in enumerate(zip(names, scores)))
        if shuffle:
            out = [out[i] for i in rng.permutation(len(out))]
        (run_dir / f"run_{r:03d}").write_text("".join(out))
    return qrels, run_dir


def ours(qrels, runs):
    lists = rank_runs(runs, qrels)
    return lists, [m.value(lists) for m in parse_measures(list(MEASURES))]


def peer_parse(qrels_path: Path, run_files: list[Path]):
    """pytrec_eval's evaluator of the qrels, and its parsed runs by name."""
    import pytrec_eval

    with open(qrels_path) as f:
        evaluator = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(f), set(PEER_MEASURES))
    runs = {}
    for p in run_files:
        with open(p) as f:
            runs[p.name] = pytrec_eval.parse_run(f)
    return evaluator, runs


def peer(evaluator, runs: dict):
    return {name: evaluator.evaluate(run) for name, run in runs.items()}


def check_equal(lists, values, by_run: dict) -> float:
    """Largest |ours - pytrec_eval| over every (run, topic, measure)."""
    worst = 0.0
    for m, v in zip(MEASURES, values):
        peer_name = {b: a for a, b in PEER_MEASURES.items()}[m]
        for run, topic, x in zip(lists.runs, lists.topics, v):
            worst = max(worst, abs(x - by_run[run][topic][peer_name]))
    return worst


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="timings: best of this many")
    ap.add_argument("--shuffle", action="store_true",
                    help="write run lines in random order (exercises the full sort)")
    args = ap.parse_args(argv)
    try:
        import pytrec_eval  # noqa: F401
    except ImportError:
        raise SystemExit("pytrec_eval (package pytrec-eval-terrier) is required: pip install -e .[bench]")

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        qrels_path, run_dir = generate(Path(tmp), args.runs, args.topics, args.docs, args.seed,
                                       shuffle=args.shuffle)
        run_files = sorted(run_dir.iterdir())
        print(f"data: {args.runs} runs x {args.topics} topics x {args.docs} docs, graded qrels "
              f"(seed {args.seed}{', shuffled lines' if args.shuffle else ''}), generated in "
              f"{time.perf_counter() - t0:.1f}s; measures {', '.join(MEASURES)}; cpus {os.cpu_count()}")
        lists, values = ours(read_qrels(qrels_path), read_runs(run_dir))
        worst = check_equal(lists, values, peer(*peer_parse(qrels_path, run_files)))
        print(f"max |ours - pytrec_eval| over {len(lists) * len(MEASURES)} values: {worst:.1e}")
        qrels, runs = read_qrels(qrels_path), read_runs(run_dir)
        parsed = peer_parse(qrels_path, run_files)
        from_files = {"ours": lambda: ours(read_qrels(qrels_path), read_runs(run_dir)),
                      "peer": lambda: peer(*peer_parse(qrels_path, run_files))}
        in_memory = {"ours": lambda: ours(qrels, runs), "peer": lambda: peer(*parsed)}
        best = {"from files": fastest(from_files, args.repeat), "in memory": fastest(in_memory, args.repeat)}
    n = args.runs
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (other processes slow both libraries alike; "
          "compare ratios)")
    print(f"{'':<12}{'maxent runs/s':>15}{'pytrec_eval runs/s':>20}{'ratio':>8}{'target':>8}")
    for (label, t), target in zip(best.items(), (3.0, 2.0)):
        ratio = t["peer"][0] / t["ours"][0]
        print(f"{label:<12}{n / t['ours'][0]:>15.1f}{n / t['peer'][0]:>20.1f}{ratio:>7.2f}x{target:>7.1f}x")
    print("CPU time (process time, insensitive to other processes):")
    for label, t in best.items():
        ratio = t["peer"][1] / t["ours"][1]
        print(f"{label:<12}{n / t['ours'][1]:>15.1f}{n / t['peer'][1]:>20.1f}{ratio:>7.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
