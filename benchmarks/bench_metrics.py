"""Speed of the metric library against pytrec_eval: runs per second for AP + P@10 + nDCG.

Generates (seeded) R runs x T topics x D documents with graded qrels into a temporary
directory, then times, for this library and for pytrec_eval (the peer, imported lazily):

* **from files**: read the qrels and every run file, rank, look up grades, compute the
  three measures per topic. Ours: ``read_qrels`` + ``read_runs`` + ``rank_runs`` +
  ``Metric.value``; pytrec_eval: ``parse_qrel`` + ``RelevanceEvaluator`` + per run
  ``parse_run`` + ``evaluate``.
* **in memory**: from already-parsed runs. Ours: ``rank_runs`` (ranking and qrels lookup)
  + ``Metric.value`` on the list of :class:`~maxent.trec.Run` objects; pytrec_eval:
  ``evaluator.evaluate(run_dict)`` with the evaluator built beforehand.

Each timing is the best of ``--repeat`` repetitions. Before timing, the two libraries'
per-topic values are checked equal (1e-9) on the generated data, so the ratio compares
like with like. Speed is reported as ratios against the peer, never asserted.

Usage: ``python benchmarks/bench_metrics.py [--runs 100 --topics 50 --docs 1000 --seed 0]``
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from maxent.metrics import parse_measures
from maxent.ranked import rank_runs
from maxent.trec import read_qrels, read_runs

MEASURES = ("AP", "P@10", "nDCG")
PEER_MEASURES = {"map": "AP", "P_10": "P@10", "ndcg": "nDCG"}


def generate(directory: Path, runs: int, topics: int, docs: int, seed: int,
             pool: int = 3000, judged: int = 400, shuffle: bool = False) -> tuple[Path, Path]:
    """Write ``qrels.txt`` and ``runs/run_XXX`` (plain text) under ``directory``.

    Each topic has a pool of ``pool`` docnos; ``judged`` of them are judged with grades
    0..3 (probabilities .6 .2 .12 .08); each run retrieves ``docs`` distinct docnos of the
    pool with scores rounded to 4 decimals (so ties occur, as in real runs). Lines are
    written as systems write them (topic by topic, by decreasing score, rank 1..docs) or,
    with ``shuffle``, in random order (trec_eval and both libraries ignore the order).
    """
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


def ours_from_files(qrels_path: Path, run_dir: Path):
    metrics = parse_measures(list(MEASURES))
    qrels = read_qrels(qrels_path)
    runs = read_runs(run_dir)
    lists = rank_runs(runs, qrels)
    return lists, [m.value(lists) for m in metrics]


def ours_in_memory(qrels, runs):
    metrics = parse_measures(list(MEASURES))
    lists = rank_runs(runs, qrels)
    return lists, [m.value(lists) for m in metrics]


def peer_from_files(qrels_path: Path, run_files: list[Path]):
    import pytrec_eval

    with open(qrels_path) as f:
        qrel = pytrec_eval.parse_qrel(f)
    evaluator = pytrec_eval.RelevanceEvaluator(qrel, set(PEER_MEASURES))
    out = {}
    for p in run_files:
        with open(p) as f:
            out[p.name] = evaluator.evaluate(pytrec_eval.parse_run(f))
    return out


def peer_in_memory(evaluator, run_dicts: dict):
    return {name: evaluator.evaluate(run) for name, run in run_dicts.items()}


CPU: dict[str, tuple[float, float]] = {}


def best_times(ours, peer, repeat: int, label: str = "") -> tuple[float, float]:
    """Best wall time of each function over ``repeat`` rounds, the two alternating so that
    both see the same machine load (the numbers are ratios, never absolute claims). The
    best CPU times (process time, robust to other processes) are kept in ``CPU[label]``."""
    best = [float("inf"), float("inf")]
    cpu = [float("inf"), float("inf")]
    for _ in range(repeat):
        for i, fn in enumerate((ours, peer)):
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t0)
            cpu[i] = min(cpu[i], time.process_time() - c0)
    CPU[label] = (cpu[0], cpu[1])
    return best[0], best[1]


def check_equal(lists, values, peer: dict) -> float:
    """Largest |ours - pytrec_eval| over every (run, topic, measure)."""
    worst = 0.0
    for m, v in zip(MEASURES, values):
        peer_name = {b: a for a, b in PEER_MEASURES.items()}[m]
        for run, topic, x in zip(lists.runs, lists.topics, v):
            worst = max(worst, abs(x - peer[run][topic][peer_name]))
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
        import pytrec_eval
    except ImportError:
        print("pytrec_eval (package pytrec-eval-terrier) is required: pip install -e .[bench]",
              file=sys.stderr)
        return 1

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        qrels_path, run_dir = generate(Path(tmp), args.runs, args.topics, args.docs, args.seed,
                                       shuffle=args.shuffle)
        run_files = sorted(run_dir.iterdir())
        print(f"data: {args.runs} runs x {args.topics} topics x {args.docs} docs, graded qrels "
              f"(seed {args.seed}{', shuffled lines' if args.shuffle else ''}), generated in {time.perf_counter() - t0:.1f}s; "
              f"measures {', '.join(MEASURES)}; cpus {os.cpu_count()}")

        # equality first: the speed comparison is only meaningful if the values agree
        lists, values = ours_from_files(qrels_path, run_dir)
        peer = peer_from_files(qrels_path, run_files)
        worst = check_equal(lists, values, peer)
        print(f"max |ours - pytrec_eval| over {len(lists) * len(MEASURES)} values: {worst:.1e}")

        # from files
        t_ours_f, t_peer_f = best_times(lambda: ours_from_files(qrels_path, run_dir),
                                        lambda: peer_from_files(qrels_path, run_files), args.repeat,
                                        "from files")

        # in memory
        qrels = read_qrels(qrels_path)
        runs = read_runs(run_dir)
        with open(qrels_path) as f:
            qrel = pytrec_eval.parse_qrel(f)
        evaluator = pytrec_eval.RelevanceEvaluator(qrel, set(PEER_MEASURES))
        run_dicts = {}
        for p in run_files:
            with open(p) as f:
                run_dicts[p.name] = pytrec_eval.parse_run(f)
        t_ours_m, t_peer_m = best_times(lambda: ours_in_memory(qrels, runs),
                                        lambda: peer_in_memory(evaluator, run_dicts), args.repeat,
                                        "in memory")

    n = args.runs
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average at the end: {load:.2f} (other processes slow both libraries alike; "
          "compare ratios)")
    rows = [("from files", n / t_ours_f, n / t_peer_f, 3.0),
            ("in memory", n / t_ours_m, n / t_peer_m, 2.0)]
    print(f"{'':<12}{'maxent runs/s':>15}{'pytrec_eval runs/s':>20}{'ratio':>8}{'target':>8}")
    for label, ours, peer_rate, target in rows:
        print(f"{label:<12}{ours:>15.1f}{peer_rate:>20.1f}{ours / peer_rate:>7.2f}x{target:>7.1f}x")
    print("CPU time (process time, insensitive to other processes):")
    for label, (ours_cpu, peer_cpu) in CPU.items():
        print(f"{label:<12}{n / ours_cpu:>15.1f}{n / peer_cpu:>20.1f}{peer_cpu / ours_cpu:>7.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
