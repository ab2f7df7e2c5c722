"""Line for line against trec_eval on the shared collections: what a trec_eval user would run.

For each collection (qrels and the first ``--runs`` runs, gunzipped for trec_eval) and each
flag set below, trec_eval 9.0.7 and 10.0 (built from NIST's source by
``../shared/tools/trec_eval/build.sh``) are run beside ``python -m maxent.evaluate`` in the
matching mode (10.0: ``--score-precision double``), per topic (``-q``), and every line trec_eval
prints is looked up in ours. One row per (collection, version, flags): lines printed, lines
identical, runs whose whole output is identical (same lines, same order), and the first line
that differs. Exit status 1 if any line differs. Run by hand:

    python benchmarks/check_trec_eval.py [--collections robust03,trec_dl19_passage] [--runs 5]
    python benchmarks/check_trec_eval.py --out results/trec_eval
"""
from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _common import DATA, ROOT, write_evidence

BUILD = ROOT.parent / "shared" / "tools" / "trec_eval" / "build.sh"
FAMILIES = ["-m", "P", "-m", "recall", "-m", "ndcg_cut", "-m", "map_cut", "-m", "success", "-m", "iprec_at_recall",
            "-m", "Rprec_mult", "-m", "relative_P", "-m", "11pt_avg"]
FLAGS = {"all_trec": ["-m", "all_trec"], "all_trec -l 2": ["-m", "all_trec", "-l", "2"],
         "all_trec -c": ["-m", "all_trec", "-c"], "all_trec -J": ["-m", "all_trec", "-J"],
         "all_trec -M 100": ["-m", "all_trec", "-M", "100"],
         "all_trec -c -J -l 2 -M 100": ["-m", "all_trec", "-c", "-J", "-l", "2", "-M", "100"],
         "official -N 100000": ["-m", "official", "-N", "100000"], "families": FAMILIES}
VERSIONS = {"9.0.7": [], "10.0": ["--score-precision", "double"]}


def _collection(name: str, runs: int, tmp: Path) -> tuple[Path, list[Path]]:
    folder = DATA / name
    qrels = sorted((folder / "qrels").iterdir())[0]
    plain = []
    for path in sorted((folder / "runs").iterdir())[:runs]:
        out = tmp / f"{name}.{path.name.removesuffix('.gz')}"
        out.write_bytes(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes())
        plain.append(out)
    return qrels, plain


def _lines(cmd: list[str]) -> list[str]:
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, errors="surrogateescape")
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)[:300]} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout.splitlines()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--collections", default="robust03,trec_covid_r1,trec_dl19_passage")
    p.add_argument("--runs", type=int, default=5, help="the first N runs of each collection")
    p.add_argument("--trec-eval", type=Path, default=None, help="a folder build.sh filled (default: build one)")
    p.add_argument("--out", type=Path, default=None, help="write lines.csv and PROVENANCE.json here")
    args = p.parse_args(argv)
    started = time.time()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        te = args.trec_eval
        if te is None:
            te = tmp / "trec_eval"
            subprocess.run(["bash", str(BUILD), str(te)], check=True, capture_output=True)
        binaries = {v: te / f"trec_eval-{v}" / "trec_eval" for v in VERSIONS}
        for name in args.collections.split(","):
            qrels, runs = _collection(name, args.runs, tmp)
            for version, mode in VERSIONS.items():
                for label, flags in FLAGS.items():
                    total = same = whole = 0
                    first = ""
                    for run in runs:
                        want = _lines([str(binaries[version]), "-q", *flags, str(qrels), str(run)])
                        got = _lines([sys.executable, "-m", "maxent.evaluate", "-q", *flags, *mode, str(qrels), str(run)])
                        common = sum((Counter(want) & Counter(got)).values())
                        total, same, whole = total + len(want), same + common, whole + (want == got)
                        if common < len(want) and not first:
                            missing = Counter(want) - Counter(got)
                            first = f"{run.name}: {next(iter(missing))!r}"
                    rows.append({"collection": name, "runs": len(runs), "version": version, "flags": label,
                                 "trec_eval_lines": total, "identical": same, "outputs_identical": whole,
                                 "first_difference": first})
                    print(f"{name:<18} {version:<6} {label:<28} {same:>8} / {total:<8} {first}", file=sys.stderr,
                          flush=True)
    if args.out is not None:
        write_evidence(args.out, "lines.csv", rows, argv, __file__, started)
    return int(any(r["identical"] < r["trec_eval_lines"] or r["outputs_identical"] < r["runs"] for r in rows))


if __name__ == "__main__":
    raise SystemExit(main())
