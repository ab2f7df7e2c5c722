"""The mutation score of a mutmut 3 run, as committed evidence.

Reads each mutant's verdict (the test run's exit code) from ``mutants/<file>.meta`` of the files
below, keeps the mutants named in ``--sample`` (one a line), and writes ``score.csv`` (per file:
sampled, killed, survived, untested, timed out, score = killed / (killed + survived)) and
``survivors.csv`` (each survivor with the line it changes, from ``mutmut show``).

    python benchmarks/mutation_score.py --mutants mutants --sample sample.txt --out results/mutation
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from _common import write_provenance

FILES = ("maxent/compare/__init__.py", "maxent/cli/compare.py", "maxent/evaluate/__init__.py",
         "maxent/cli/evaluate.py", "analysis/_instances.py", "analysis/_cli.py")
KILLED, SURVIVED, UNTESTED = {1, 3}, {0}, {5, 33}     # as mutmut.stats.status_by_exit_code
TIMEOUT = {-24, 24, 36, 152, 255}


def _diff(mutants: Path, name: str) -> str:
    """The changed lines of one mutant (``mutmut show``), condensed to one line."""
    done = subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=mutants.parent,
                          capture_output=True, text=True)
    changed = [ln[1:].strip() for ln in done.stdout.splitlines()
               if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    return " => ".join(changed)[:300]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mutants", type=Path, required=True, help="mutmut's mutants/ folder")
    p.add_argument("--sample", type=Path, default=None, help="the mutant names run (default: all)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--command", default="", help="the mutmut command that made the verdicts")
    args = p.parse_args(argv)
    started = time.time()
    sample = set(args.sample.read_text().split()) if args.sample else None
    rows, survivors = [], []
    for f in FILES:
        codes = json.loads((args.mutants / (f + ".meta")).read_text())["exit_code_by_key"]
        picked = {k: v for k, v in codes.items() if sample is None or k in sample}
        n = {"killed": 0, "survived": 0, "untested": 0, "timeout": 0, "other": 0, "not run": 0}
        for name, code in sorted(picked.items()):
            kind = ("not run" if code is None else "killed" if code in KILLED
                    else "survived" if code in SURVIVED else "untested" if code in UNTESTED
                    else "timeout" if code in TIMEOUT else "other")
            n[kind] += 1
            if kind == "survived":
                survivors.append({"file": f, "mutant": name, "change": _diff(args.mutants, name)})
        decided = n["killed"] + n["survived"]
        rows.append({"file": f, "mutants": len(codes), "sampled": len(picked), **n,
                     "score": round(n["killed"] / decided, 4) if decided else None})
    import pandas as pd

    args.out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(args.out / "score.csv", index=False)
    survivors = pd.DataFrame(survivors, columns=["file", "mutant", "change"])
    survivors.to_csv(args.out / "survivors.csv", index=False)
    write_provenance(args.out, argv, __file__, started,
                     {"mutmut_command": args.command, "sample": str(args.sample) if args.sample else None})
    print(pd.DataFrame(rows).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
