"""Scale: ``maxent.evaluate`` and ``analysis.maxent`` on MS MARCO-shaped synthetic collections,
against a pytrec_eval script, from process start.

Per topic, 1 to 3 judged passages (grade 1) and a run of 10 in which a judged passage appears at a
random rank for 70 % of the topics (``--issue-case`` adds 300,000 topics x 5 judgements x 8 run
lines; ``--bundled``, the 20 bundled TREC-COVID runs with map, P_10 and ndcg; ``--all-trec``, the
bundled runs with ``-m all_trec``, pytrec_eval computing its ``all_trec`` too, and map, P_10,
ndcg, bpref and recip_rank compared). Fresh processes are
timed, alternating: wall, CPU and peak RSS of ``python -m maxent.evaluate QRELS RUN... -m map -m
recip_rank -m ndcg_cut.10``, of the pytrec_eval script doing the same (up to ``--peer-max`` topics;
the means checked equal first), of another checkout's ``maxent.evaluate`` (``--against``), and of
``python -m analysis.maxent --metrics AP`` on the ``--analysis`` sizes. ``--out DIR`` writes
``scale.csv`` (results/benchmarks/scale/ for the evidence).

``--deep`` adds deep runs (``--deep-sizes``: topics, or topics x depth, default 100 lines per
topic): 1 to 9 judged passages per topic graded 1-3, each topic's lines together by score
descending, as engines write them; ``-m map -m ndcg -m recip_rank``. Beside the commands above
it times ``cat RUN > /dev/null`` and ``wc -l RUN`` (the speed of merely reading the file), a
child that reports our time split in process (import, qrels, reading the run, on both cores
and again on one, ranking, evaluating), ours on the first size's run gzipped (``gzip -1``)
and, with ``--ranx PYTHON`` (an interpreter with ranx installed, never one of ours),
ranx's ``Run.from_file`` + ``evaluate`` twice (the first compiles numba's kernels, the
second is timed warm, in memory), once, on the first deep size, and on every deep size of
more than ``--ranx-shard`` topics in shards of that many topics (ranx holds 10^5 topics x 100
in about 4 GB): one process loads and evaluates the shards one after the other, and their
load and warm times are summed. Runs of 10^8 lines or more are timed once whatever
``--repeat``.

    python benchmarks/bench_scale.py [--sizes 10000,100000,1000000] [--repeat 3] [--out DIR]
    python benchmarks/bench_scale.py --sizes "" --analysis "" --bundled --against /tmp/start
    python benchmarks/bench_scale.py --sizes "" --analysis "" --deep --deep-sizes 100000,10000x1000
"""
from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, run, write_evidence

PEER_SCRIPT = r"""
import gzip, sys
import pytrec_eval
measures, shown, qrels_path, runs = sys.argv[1].split(","), sys.argv[2].split(","), sys.argv[3], sys.argv[4:]
with open(qrels_path) as f:
    ev = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(f), set(measures))
for path in runs:
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        res = ev.evaluate(pytrec_eval.parse_run(f))
    for m in shown:
        vals = [t[m] for t in res.values()]
        print(f"{m}\t{sum(vals) / len(vals):6.4f}")
"""
BUNDLED = ROOT / "trec_runs"
DEEP_MEASURES = ["map", "ndcg", "recip_rank"]
SPLIT_SCRIPT = r"""
import json, sys, time
t0 = time.perf_counter()
from maxent.evaluate import resolve_measures
from maxent.ranked import rank_runs
from maxent.trec import read_qrels, read_run
t1 = time.perf_counter()
qrels = read_qrels(sys.argv[1])
t2 = time.perf_counter()
run = read_run(sys.argv[2])
t3 = time.perf_counter()
import maxent.trec
maxent.trec.SPLIT_BYTES = 1 << 62                 # again, on one thread
read_run(sys.argv[2])
one = time.perf_counter() - t3
t3 = time.perf_counter()
lists = rank_runs([run], qrels)
t4 = time.perf_counter()
means = [float(m.value(lists).mean()) for m in resolve_measures(sys.argv[3].split(","))]
t5 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "qrels_s": t2 - t1, "read_s": t3 - t2 - one, "read_1_s": one,
                  "rank_s": t4 - t3,
                  "evaluate_s": t5 - t4, "means": means}))
"""
# ranx on a run in shards of whole topics (one shard: the whole run), one after the other in
# one process: the load and warm evaluate times summed, the means weighted by the shards' topics
RANX_SCRIPT = r"""
import gc, json, sys, time
from ranx import Qrels, Run, evaluate
measures = ["map", "ndcg", "mrr"]
load = first = warm = 0.0
sums, topics = dict.fromkeys(measures, 0.0), 0
for i, shard in enumerate(sys.argv[1:]):
    qrels_path, run_path, n = shard.split(":")
    t0 = time.perf_counter()
    qrels, run = Qrels.from_file(qrels_path, kind="trec"), Run.from_file(run_path, kind="trec")
    t1 = time.perf_counter()
    if i == 0:
        evaluate(qrels, run, measures)                  # numba compiles its kernels here
    t2 = time.perf_counter()
    scores = evaluate(qrels, run, measures)            # warm, in memory
    t3 = time.perf_counter()
    load, first, warm = load + t1 - t0, first + t2 - t1, warm + t3 - t2
    for m in measures:
        sums[m] += scores[m] * int(n)
    topics += int(n)
    del qrels, run
    gc.collect()
print(json.dumps({"load_s": load, "first_s": first, "warm_s": warm, "shards": len(sys.argv) - 1,
                  "scores": {m: v / topics for m, v in sums.items()}}))
"""


def make(folder: Path, topics: int, judged=(1, 3), depth: int = 10, found: float = 0.7,
         seed: int = 0, grades: int = 1) -> tuple[Path, Path]:
    """Write an MS MARCO-shaped qrels and run for ``topics`` topics (see the module docstring);
    ``judged``: the range of judged passages per topic, ``depth``: run lines per topic,
    ``grades``: judged passages get grades 1..grades. Each topic's lines are written together,
    by score descending, as search engines write them; written in chunks of 10^7 run lines."""
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    qrels_path, run_path = folder / "qrels.txt", folder / "run.txt"
    if qrels_path.exists() and run_path.exists():
        return qrels_path, run_path
    rng = np.random.default_rng(seed)
    chunk = max(1, 10_000_000 // depth)
    with open(folder / "qrels.part", "w") as fq, \
            open(folder / "run.part", "w") as fr:
        for first_topic in range(0, topics, chunk):
            n = min(chunk, topics - first_topic)
            _make_chunk(fq, fr, rng, first_topic, n, judged, depth, found, grades)
    (folder / "qrels.part").rename(qrels_path)
    (folder / "run.part").rename(run_path)
    return qrels_path, run_path


def _make_chunk(fq, fr, rng, first_topic: int, topics: int, judged, depth: int, found: float,
                grades: int) -> None:
    """Topics first_topic.. first_topic + topics - 1 of :func:`make`."""
    import numpy as np

    n_judged = rng.integers(judged[0], judged[1] + 1, topics)
    q_topic = np.repeat(np.arange(topics), n_judged)
    q_doc = rng.integers(0, 8_800_000, len(q_topic))              # MS MARCO: 8.8M passages
    # a passage judged twice for a topic is not allowed: keep the first
    key = q_topic * 10_000_000 + q_doc
    _, first = np.unique(key, return_index=True)
    first.sort()
    q_topic, q_doc = q_topic[first], q_doc[first]
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
    r_doc[dup] = 9_000_000 + first_topic * depth + np.flatnonzero(dup)
    score = (depth - np.tile(np.arange(depth), topics)) + rng.random(topics * depth) * 0.5
    q_grade = rng.integers(1, grades + 1, len(q_topic)) if grades > 1 else np.ones(len(q_topic), int)
    q_topic += first_topic
    r_topic += first_topic
    fq.writelines(f"{t} 0 {d} {g}\n" for t, d, g in zip(q_topic.tolist(), q_doc.tolist(), q_grade.tolist()))
    fr.writelines(f"{t} Q0 {d} {r} {s:.4f} synth\n" for t, d, r, s in zip(
        r_topic.tolist(), r_doc.tolist(), (np.tile(np.arange(1, depth + 1), topics)).tolist(),
        score.tolist()))


def make_in_child(folder: Path, topics: int, judged=(1, 3), depth: int = 10, grades: int = 1) -> tuple[Path, Path]:
    """:func:`make` in a child process: this one imports no numpy, so that no child inherits a
    large high-water mark of memory from it through fork."""
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); from bench_scale import make; "
            f"from pathlib import Path; make(Path({str(folder)!r}), {topics}, {tuple(judged)!r}, {depth}, grades={grades})")
    subprocess.run([sys.executable, "-c", code], check=True)
    return folder / "qrels.txt", folder / "run.txt"


def ranx_shards(qrels: Path, run_file: Path, topics: int, depth: int, shard: int) -> list[str]:
    """RANX_SCRIPT's arguments: the run and qrels of :func:`make` whole when they have at most
    ``shard`` topics, else split into shards of ``shard`` whole topics (its topics are 0..
    topics - 1, each one's lines together, in order), written once, beside the run."""
    if topics <= shard:
        return [f"{qrels}:{run_file}:{topics}"]
    folder = run_file.with_name(f"shards{shard}")
    count = -(-topics // shard)
    names = [(folder / f"qrels{i:03d}", folder / f"run{i:03d}") for i in range(count)]
    if not folder.exists():
        part = folder.with_name(folder.name + ".part")
        part.mkdir(exist_ok=True)
        subprocess.run(["split", "-l", str(shard * depth), "-d", "-a", "3", str(run_file), str(part / "run")],
                       check=True)
        subprocess.run(["awk", f'{{ f = sprintf("%s/qrels%03d", "{part}", int($1 / {shard})); print > f }}',
                        str(qrels)], check=True)
        part.rename(folder)
    return [f"{q}:{r}:{min(shard, topics - i * shard)}" for i, (q, r) in enumerate(names)]


def timed(cmd: list[str], where: Path = ROOT) -> tuple[float, float, str, float]:
    """(wall seconds, peak RSS in MiB, stdout, CPU seconds) of one fresh process."""
    wall, out, usage = run(cmd, where, bytecode=True)
    return wall, usage.ru_maxrss / 1024, out, usage.ru_utime + usage.ru_stime


def _means(text: str, measures: list[str]) -> list[tuple[str, str]]:
    """(measure, mean) per run in the order printed, by maxent.evaluate or the peer script."""
    rows = [line.split("\t") for line in text.splitlines()]
    return [(r[0].strip(), r[-1]) for r in rows if r[0].strip() in measures]


def _median(times: list[tuple]) -> tuple:
    """(median wall, median CPU, largest MiB) of :func:`timed`'s results (Nones if none)."""
    if not times:
        return None, None, None
    wall, mib, _, cpu = zip(*times)
    return statistics.median(wall), statistics.median(cpu), max(mib)


def _lines(path: Path) -> int:
    with (gzip.open if path.suffix == ".gz" else open)(path, "rt") as f:
        return sum(1 for _ in f)


def _row(case: str, topics: int, qrels: Path, runs: list[Path], command: str, ours, peer=(None,) * 3,
         against=None):
    row = {"case": case, "topics": topics, "qrels_lines": _lines(qrels), "run_lines": sum(map(_lines, runs)),
           "command": command, "ours_s": ours[0], "ours_cpu_s": ours[1], "ours_mib": ours[2],
           "pytrec_eval_s": peer[0], "pytrec_eval_cpu_s": peer[1], "pytrec_eval_mib": peer[2],
           "speedup": peer[0] and peer[0] / ours[0], "speedup_cpu": peer[1] and peer[1] / ours[1]}
    if against is not None:
        row.update(against_s=against[0], against_cpu_s=against[1], against_mib=against[2])
    return row


def _deep_sizes(text: str) -> list[tuple[int, int]]:
    out = []
    for item in (x for x in text.split(",") if x):
        topics, _, depth = item.partition("x")
        out.append((int(topics), int(depth or 100)))
    return out


def _deep(args) -> list[dict]:
    """The deep runs' rows: ours, the pytrec_eval script (up to --peer-max topics), cat, wc -l,
    the in-process split and ranx (--ranx), alternating, medians of --repeat rounds."""
    rows = []
    for k, (topics, depth) in enumerate(_deep_sizes(args.deep_sizes)):
        name = f"{topics}x1-9x{depth} graded"
        print(f"{name}: making the data ...", file=sys.stderr, flush=True)
        qrels, run_file = make_in_child(args.data / f"{topics}x1-9x{depth}g3", topics, (1, 9), depth, grades=3)
        paths = [str(qrels), str(run_file)]
        commands = {"ours": [sys.executable, "-m", "maxent.evaluate", *paths,
                             *[a for m in DEEP_MEASURES for a in ("-m", m)]],
                    "split": [sys.executable, "-c", SPLIT_SCRIPT, *paths, ",".join(DEEP_MEASURES)],
                    "cat": ["sh", "-c", f"cat '{run_file}' > /dev/null"], "wc": ["wc", "-l", str(run_file)]}
        if topics <= args.peer_max:
            commands["peer"] = [sys.executable, "-c", PEER_SCRIPT, ",".join(DEEP_MEASURES),
                                ",".join(DEEP_MEASURES), *paths]
        if k == 0:                      # the first size gzipped too (gzip -1), read in a stream
            packed = run_file.with_name(run_file.name + ".gz")
            if not packed.exists():
                subprocess.run(["sh", "-c", f"gzip -1 -c '{run_file}' > '{packed}.part' && mv '{packed}.part' "
                                f"'{packed}'"], check=True)
            commands["gzip"] = [*commands["ours"][:4], str(packed), *commands["ours"][5:]]
        ours = sorted(_means(timed(commands["ours"])[2], DEEP_MEASURES))
        if "peer" in commands and sorted(_means(timed(commands["peer"])[2], DEEP_MEASURES)) != ours:
            raise SystemExit(f"{name}: the means differ from pytrec_eval's")
        if "gzip" in commands and sorted(_means(timed(commands["gzip"])[2], DEEP_MEASURES)) != ours:
            raise SystemExit(f"{name}: the gzipped run's means differ")
        times = {who: [] for who in commands}
        for _ in range(args.repeat if topics * depth < 10**8 else 1):   # 10^8 lines: once
            for who, cmd in commands.items():
                times[who].append(timed(cmd))
        # once, on the first size (minutes), and in shards where a run is too large for its memory
        if args.ranx and (k == 0 and topics <= args.peer_max or topics > args.ranx_shard):
            shards = ranx_shards(qrels, run_file, topics, depth, args.ranx_shard)
            times["ranx"] = [timed([args.ranx, "-c", RANX_SCRIPT, *shards])]
        split = [json.loads(t[2]) for t in times["split"]]
        size_mb = run_file.stat().st_size / 1e6
        row = _row(name, topics, qrels, [run_file], "maxent.evaluate" + "".join(f" -m {m}" for m in DEEP_MEASURES),
                   _median(times["ours"]), _median(times.get("peer", [])))
        row.update({"run_mb": size_mb, "cat_s": _median(times["cat"])[0], "wc_s": _median(times["wc"])[0],
                    **{k: statistics.median(t[k] for t in split)
                       for k in ("import_s", "qrels_s", "read_s", "read_1_s", "rank_s", "evaluate_s")}})
        row["read_mb_s"] = size_mb / row["read_s"]
        row["read_1_mb_s"] = size_mb / row["read_1_s"]
        row["peer_mib_ratio"] = row["pytrec_eval_mib"] and row["ours_mib"] / row["pytrec_eval_mib"]
        row["file_ratio"] = row["ours_mib"] * 2**20 / (size_mb * 1e6)     # peak memory / run file
        if "ranx" in times:
            row["ranx_s"], row["ranx_cpu_s"], row["ranx_mib"] = _median(times["ranx"])
            ranx = json.loads(times["ranx"][0][2])
            row["ranx_load_s"], row["ranx_warm_s"] = ranx["load_s"], ranx["warm_s"]
            row["ranx_shards"] = ranx["shards"]
            ours_means = dict(_means(times["ours"][0][2], DEEP_MEASURES))
            theirs = {"map": ranx["scores"]["map"], "ndcg": ranx["scores"]["ndcg"],
                      "recip_rank": ranx["scores"]["mrr"]}
            if any(abs(float(ours_means[m]) - v) > 1e-4 for m, v in theirs.items()):
                raise SystemExit(f"{name}: ranx's means differ: {theirs} against {ours_means}")
        rows.append(row)
        print(row, file=sys.stderr, flush=True)
        if "gzip" in times:
            rows.append(_row(f"{name}, gzipped", topics, qrels, [run_file], row["command"], _median(times["gzip"])))
            rows[-1]["run_mb"] = packed.stat().st_size / 1e6
            print(rows[-1], file=sys.stderr, flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10000,100000,1000000", help="topics per collection, comma-separated")
    p.add_argument("--issue-case", action="store_true", help="also 300,000 topics x (5 qrels, 8 run lines)")
    p.add_argument("--bundled", action="store_true", help="also the bundled runs, map P_10 ndcg")
    p.add_argument("--all-trec", action="store_true", help="also the bundled runs, -m all_trec")
    p.add_argument("--against", default=None, help="another checkout whose maxent.evaluate is timed too")
    p.add_argument("--peer-max", type=int, default=300_000, help="most topics the pytrec_eval script runs on")
    p.add_argument("--analysis", default="10000,100000", help="sizes analysis.maxent runs on ('' for none)")
    p.add_argument("--deep", action="store_true", help="also deep runs (--deep-sizes), map ndcg recip_rank")
    p.add_argument("--deep-sizes", default="100000",
                   help="deep runs: topics or TOPICSxDEPTH (depth 100 by default), comma-separated")
    p.add_argument("--ranx", default=None, help="a Python with ranx installed: time ranx once on the first "
                   "deep size (up to --peer-max topics)")
    p.add_argument("--ranx-shard", type=int, default=100_000, help="a deep size of more topics than this "
                   "is timed in ranx (--ranx) in shards of this many topics, one after the other in one process")
    p.add_argument("--repeat", type=int, default=3, help="alternating timed runs of each command")
    p.add_argument("--data", type=Path, default=ROOT / "out" / "scale", help="where the synthetic files go")
    p.add_argument("--out", type=Path, default=None, help="write scale.csv and PROVENANCE.json here")
    args = p.parse_args(argv)
    started = time.time()
    measures = ["map", "recip_rank", "ndcg_cut.10"]
    cases = []
    for topics, judged, depth in [(int(s), (1, 3), 10) for s in args.sizes.split(",") if s] + (
            [(300_000, (5, 5), 8)] if args.issue_case else []):
        name = f"{topics}x{judged[0]}-{judged[1]}x{depth}"
        print(f"{name}: making the data ...", file=sys.stderr, flush=True)
        qrels, run_file = make_in_child(args.data / name, topics, judged, depth)
        cases.append((name, topics, qrels, [run_file], measures, measures))
    qrels = BUNDLED / "qrels-rnd1.txt"
    topics = len({line.split()[0] for line in open(qrels)})
    runs = sorted((BUNDLED / "runs").iterdir())
    if args.bundled:
        cases.append(("bundled", topics, qrels, runs, ["map", "P_10", "ndcg"], ["map", "P_10", "ndcg"]))
    if args.all_trec:
        cases.append(("bundled all_trec", topics, qrels, runs, ["all_trec"],
                      ["map", "P_10", "ndcg", "bpref", "recip_rank"]))
    rows = []
    for name, topics, qrels, runs, given, names in cases:   # names: the means compared
        paths = [str(qrels), *map(str, runs)]
        ours = [sys.executable, "-m", "maxent.evaluate", *paths, *[a for m in given for a in ("-m", m)]]
        commands = {"ours": (ours, ROOT)}
        names = [m.replace(".", "_") for m in names]
        if topics <= args.peer_max:
            computed = ",".join(m.replace(".", "_") for m in given)
            commands["peer"] = ([sys.executable, "-c", PEER_SCRIPT, computed, ",".join(names), *paths], ROOT)
        if args.against:
            commands["against"] = (ours, Path(args.against).resolve())
        means = {who: sorted(_means(timed(*cmd)[2], names)) for who, cmd in commands.items()}
        if any(m != means["ours"] for m in means.values()):
            raise SystemExit(f"{name}: the means differ: {means}")
        times = {"ours": [], "peer": [], "against": []}
        for _ in range(args.repeat):
            for who, cmd in commands.items():
                times[who].append(timed(*cmd))
        command = "maxent.evaluate" + "".join(f" -m {m}" for m in given)
        rows.append(_row(name, topics, qrels, runs, command, _median(times["ours"]),
                         _median(times["peer"]), _median(times["against"]) if args.against else None))
        print(rows[-1], file=sys.stderr, flush=True)
    for s in (int(x) for x in args.analysis.split(",") if x):
        name = f"{s}x1-3x10"
        qrels, run_file = make_in_child(args.data / name, s)
        with tempfile.TemporaryDirectory() as tmp:
            wall, mib, _, cpu = timed([sys.executable, "-m", "analysis.maxent", "--runs", str(run_file),
                                       "--qrels", str(qrels), "--metrics", "AP", "--depth", "10",
                                       "--out", str(Path(tmp) / "a"), "--no-progress"])
        rows.append(_row(name, s, qrels, [run_file], "analysis.maxent --metrics AP", (wall, cpu, mib)))
        print(rows[-1], file=sys.stderr, flush=True)
    if args.deep:
        rows += _deep(args)
    print(f"{'case':<22} {'command':<30} {'ours s':>7} {'cpu s':>6} {'MiB':>6} {'pytrec s':>8} {'cpu s':>6} "
          f"{'MiB':>6} {'ratio':>6} {'cpu':>5} {'cpu us/topic':>12}")
    for r in rows:
        peer = (f"{r['pytrec_eval_s']:8.2f} {r['pytrec_eval_cpu_s']:6.2f} {r['pytrec_eval_mib']:6.0f} "
                f"{r['speedup']:6.2f} {r['speedup_cpu']:5.2f}" if r["speedup"] else
                f"{'-':>8} {'-':>6} {'-':>6} {'-':>6} {'-':>5}")
        against = (f"  against {r['against_s']:.2f} s, cpu {r['against_cpu_s']:.2f} s"
                   if r.get("against_s") is not None else "")
        print(f"{r['case']:<22} {r['command']:<30} {r['ours_s']:7.2f} {r['ours_cpu_s']:6.2f} "
              f"{r['ours_mib']:6.0f} {peer} {1e6 * r['ours_cpu_s'] / r['topics']:12.1f}{against}")
    for r in rows:
        if "read_s" in r:
            print(f"{r['case']}: {r['run_mb']:.0f} MB; in process: import {r['import_s']:.2f} s, qrels "
                  f"{r['qrels_s']:.2f} s, read {r['read_s']:.2f} s ({r['read_mb_s']:.0f} MB/s), rank {r['rank_s']:.2f} s, "
                  f"evaluate {r['evaluate_s']:.2f} s; cat {r['cat_s']:.2f} s, wc -l {r['wc_s']:.2f} s"
                  + (f"; ranx {r['ranx_s']:.2f} s, {r['ranx_mib']:.0f} MiB" if r.get("ranx_s") else ""))
    if args.out is not None:
        write_evidence(args.out, "scale.csv", rows, argv, __file__, started,
                       extra={"repeat": args.repeat, "note": "medians of alternating fresh processes; "
                              "peak RSS is the largest of the repeats"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
