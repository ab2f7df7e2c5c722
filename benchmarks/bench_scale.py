"""Scale: ``maxent.evaluate`` and ``analysis.maxent`` on MS MARCO-shaped synthetic collections.

MS MARCO-style qrels judge many topics shallowly (10^4 to 10^6 topics, about one relevant
passage each) and its runs are shallow too. The synthetic collections here have, per topic,
1 to 3 judged passages (grade 1, mean 1.5) and a run of 10 passages in which a judged
passage appears at a random rank for 70 % of the topics; qids and docnos are numbers, as in
MS MARCO. ``--issue-case`` adds the shape of the first scale report (300,000 topics, 5
judgements and 8 run lines per topic).

For each size, fresh processes are timed from start to exit: wall time, CPU time (user +
system, which a loaded machine disturbs less) and peak resident memory (``ru_maxrss`` of the
child; the data are generated in a child process and this script imports no numpy, so no
child inherits a large high-water mark from it through ``fork``):

* ``python -m maxent.evaluate QRELS RUN -m map -m recip_rank -m ndcg_cut.10``;
* the same with pytrec_eval as a Python script would do it (``pytrec_eval.parse_qrel`` and
  ``parse_run``, evaluate, print the means), up to ``--peer-max`` topics; both outputs are
  checked equal at 4 decimals first;
* ``python -m analysis.maxent --metrics AP`` on the first ``--analysis`` sizes (one run,
  depth 10): its time per topic shows whether the analysis scales linearly.

Speed is reported, never asserted: the machine is shared and timings vary with its load;
ratios measured in the same run are what to compare. ``--out DIR`` writes ``scale.csv`` and
its ``PROVENANCE.json`` there (``results/benchmarks/scale/`` for committed evidence).

Usage: ``python benchmarks/bench_scale.py [--sizes 10000,100000,1000000] [--repeat 3]``
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MEASURES = ("map", "recip_rank", "ndcg_cut_10")

PEER_SCRIPT = r"""
import sys
import pytrec_eval
qrels_path, run_path = sys.argv[1], sys.argv[2]
with open(qrels_path) as f:
    qrels = pytrec_eval.parse_qrel(f)
ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "recip_rank", "ndcg_cut_10"})
with open(run_path) as f:
    res = ev.evaluate(pytrec_eval.parse_run(f))
for m in ("map", "recip_rank", "ndcg_cut_10"):
    vals = [t[m] for t in res.values()]
    print(f"{m}\t{sum(vals) / len(vals):6.4f}")
"""


def make(folder: Path, topics: int, judged=(1, 3), depth: int = 10, found: float = 0.7,
         seed: int = 0) -> tuple[Path, Path]:
    """Write an MS MARCO-shaped qrels and run for ``topics`` topics (see the module docstring);
    ``judged``: the range of judged passages per topic, ``depth``: run lines per topic."""
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    qrels_path, run_path = folder / "qrels.txt", folder / "run.txt"
    if qrels_path.exists() and run_path.exists():
        return qrels_path, run_path
    rng = np.random.default_rng(seed)
    n_judged = rng.integers(judged[0], judged[1] + 1, topics)
    q_topic = np.repeat(np.arange(topics), n_judged)
    q_doc = rng.integers(0, 8_800_000, len(q_topic))              # MS MARCO: 8.8M passages
    # a passage judged twice for a topic is not allowed: keep the first
    key = q_topic * 10_000_000 + q_doc
    _, first = np.unique(key, return_index=True)
    first.sort()
    q_topic, q_doc = q_topic[first], q_doc[first]
    with open(qrels_path, "w") as f:
        f.writelines(f"{t} 0 {d} 1\n" for t, d in zip(q_topic.tolist(), q_doc.tolist()))
    r_topic = np.repeat(np.arange(topics), depth)
    r_doc = rng.integers(0, 8_800_000, topics * depth)
    hit = rng.random(topics) < found                              # a judged passage retrieved
    starts = np.concatenate(([0], np.cumsum(np.bincount(q_topic, minlength=topics))[:-1]))
    at = np.flatnonzero(hit) * depth + rng.integers(0, depth, int(hit.sum()))
    r_doc[at] = q_doc[starts[hit]]
    # distinct docnos within a topic: a repeat gets an offset outside the passage range
    key = r_topic * 10_000_000 + r_doc
    order = np.argsort(key, kind="stable")
    dup = np.zeros(len(key), dtype=bool)
    dup[order[1:]] = key[order[1:]] == key[order[:-1]]
    r_doc[dup] = 9_000_000 + np.flatnonzero(dup)
    score = (depth - np.tile(np.arange(depth), topics)) + rng.random(topics * depth) * 0.5
    with open(run_path, "w") as f:
        f.writelines(f"{t} Q0 {d} {r} {s:.4f} synth\n" for t, d, r, s in zip(
            r_topic.tolist(), r_doc.tolist(), (np.tile(np.arange(1, depth + 1), topics)).tolist(),
            score.tolist()))
    return qrels_path, run_path


def make_in_child(folder: Path, topics: int, judged=(1, 3), depth: int = 10) -> tuple[Path, Path]:
    """:func:`make` in a child process (this one stays small: see the module docstring)."""
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); from bench_scale import make; "
            f"from pathlib import Path; make(Path({str(folder)!r}), {topics}, {tuple(judged)!r}, {depth})")
    subprocess.run([sys.executable, "-c", code], check=True)
    return folder / "qrels.txt", folder / "run.txt"


def timed(cmd: list[str], cwd=ROOT) -> tuple[float, float, str, float]:
    """(wall seconds, peak RSS in MiB, stdout, CPU seconds) of one fresh process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    with tempfile.TemporaryFile() as out:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}")
    return wall, usage.ru_maxrss / 1024, text, usage.ru_utime + usage.ru_stime


def _ours(qrels, run):
    return [sys.executable, "-m", "maxent.evaluate", str(qrels), str(run),
            "-m", "map", "-m", "recip_rank", "-m", "ndcg_cut.10"]


def _peer(qrels, run):
    return [sys.executable, "-c", PEER_SCRIPT, str(qrels), str(run)]


def _means(text: str, ours: bool) -> dict[str, str]:
    rows = [ln.split("\t") for ln in text.splitlines()]
    if ours:
        return {r[0].strip(): r[2] for r in rows if r[0].strip() in MEASURES}
    return {r[0]: r[1] for r in rows}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10000,100000,1000000", help="topics per collection, comma-separated")
    p.add_argument("--issue-case", action="store_true", help="also 300,000 topics x (5 qrels, 8 run lines)")
    p.add_argument("--peer-max", type=int, default=300_000, help="largest size the pytrec_eval script runs on")
    p.add_argument("--analysis", default="10000,100000", help="sizes analysis.maxent runs on ('' for none)")
    p.add_argument("--repeat", type=int, default=3, help="alternating timed runs of each command")
    p.add_argument("--data", type=Path, default=ROOT / "out" / "scale", help="where the synthetic files go")
    p.add_argument("--out", type=Path, default=None, help="write scale.csv and PROVENANCE.json here")
    args = p.parse_args(argv)
    started = time.time()
    cases = [(int(s), (1, 3), 10) for s in args.sizes.split(",") if s]
    if args.issue_case:
        cases.append((300_000, (5, 5), 8))
    rows = []
    for topics, judged, depth in cases:
        name = f"{topics}x{judged[0]}-{judged[1]}x{depth}"
        print(f"{name}: making the data ...", file=sys.stderr, flush=True)
        qrels, run = make_in_child(args.data / name, topics, judged, depth)
        ours, peer = _ours(qrels, run), _peer(qrels, run)
        with_peer = topics <= args.peer_max
        got = _means(timed(ours)[2], True)
        if with_peer:
            want = _means(timed(peer)[2], False)
            if got != want:
                raise SystemExit(f"{name}: means differ: ours {got}, pytrec_eval {want}")
        times = {"ours": [], "peer": []}
        cpu = {"ours": [], "peer": []}
        rss = {"ours": [], "peer": []}
        for _ in range(args.repeat):
            for who, cmd in (("ours", ours), ("peer", peer)):
                if who == "peer" and not with_peer:
                    continue
                w, m, _, c = timed(cmd)
                times[who].append(w)
                cpu[who].append(c)
                rss[who].append(m)
        row = {"case": name, "topics": topics, "qrels_lines": sum(1 for _ in open(qrels)),
               "run_lines": topics * depth, "command": "maxent.evaluate",
               "ours_s": statistics.median(times["ours"]), "ours_cpu_s": statistics.median(cpu["ours"]),
               "ours_mib": max(rss["ours"]),
               "pytrec_eval_s": statistics.median(times["peer"]) if with_peer else None,
               "pytrec_eval_cpu_s": statistics.median(cpu["peer"]) if with_peer else None,
               "pytrec_eval_mib": max(rss["peer"]) if with_peer else None}
        row["speedup"] = row["pytrec_eval_s"] / row["ours_s"] if with_peer else None
        row["speedup_cpu"] = row["pytrec_eval_cpu_s"] / row["ours_cpu_s"] if with_peer else None
        rows.append(row)
        print(row, file=sys.stderr, flush=True)
    for s in (int(x) for x in args.analysis.split(",") if x):
        name = f"{s}x1-3x10"
        qrels, run = make_in_child(args.data / name, s)
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "analysis.maxent", "--runs", str(run), "--qrels", str(qrels),
                   "--metrics", "AP", "--depth", "10", "--out", str(Path(tmp) / "a"), "--no-progress"]
            w, m, _, c = timed(cmd)
        rows.append({"case": name, "topics": s, "qrels_lines": sum(1 for _ in open(qrels)),
                     "run_lines": s * 10, "command": "analysis.maxent --metrics AP", "ours_s": w,
                     "ours_cpu_s": c, "ours_mib": m, "pytrec_eval_s": None, "pytrec_eval_cpu_s": None,
                     "pytrec_eval_mib": None, "speedup": None, "speedup_cpu": None})
        print(rows[-1], file=sys.stderr, flush=True)
    print(f"{'case':<22} {'command':<30} {'ours s':>7} {'cpu s':>6} {'MiB':>6} {'pytrec s':>8} {'cpu s':>6} "
          f"{'MiB':>6} {'ratio':>6} {'cpu':>5} {'cpu us/topic':>12}")
    for r in rows:
        peer = (f"{r['pytrec_eval_s']:8.2f} {r['pytrec_eval_cpu_s']:6.2f} {r['pytrec_eval_mib']:6.0f} "
                f"{r['speedup']:6.2f} {r['speedup_cpu']:5.2f}" if r["speedup"] else
                f"{'-':>8} {'-':>6} {'-':>6} {'-':>6} {'-':>5}")
        print(f"{r['case']:<22} {r['command']:<30} {r['ours_s']:7.2f} {r['ours_cpu_s']:6.2f} {r['ours_mib']:6.0f} "
              f"{peer} {1e6 * r['ours_cpu_s'] / r['topics']:12.1f}")
    if args.out is not None:
        import pandas as pd

        from analysis._provenance import command_line, write_provenance

        args.out.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_csv(args.out / "scale.csv", index=False, float_format="%.4g")
        write_provenance(args.out, command_line(), started,
                         extra={"repeat": args.repeat, "note": "medians of alternating fresh processes; "
                                "peak RSS is the largest of the repeats"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
