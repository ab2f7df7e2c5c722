"""``python -m analysis.figures``: regenerate the committed figures in ``figures/``.

Runs the analyses on their default data (``learning``: the shared Yahoo sample) and copies
every figure with the CSV behind it (and :data:`TABLES`) to ``figures/<tool>/`` beside a
``PROVENANCE.json``; ``--resume`` passes through.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from analysis import _cli
from analysis._provenance import command_line, write_provenance

TOOLS = ("maxent", "gap_thresholds", "learning", "active_eval")
TABLES = {"gap_thresholds": ("discriminative.csv",)}  # copied although no figure draws them


def _copy_figures(src: Path, dst: Path, tables: tuple[str, ...] = ()) -> list[Path]:
    dst.mkdir(parents=True, exist_ok=True)
    copied = []
    for png in sorted(src.glob("*.png")):
        for f in (png, png.with_suffix(".csv")):
            if f.exists():
                shutil.copyfile(f, dst / f.name)
                copied.append(dst / f.name)
    for name in tables:
        if (src / name).exists():
            shutil.copyfile(src / name, dst / name)
            copied.append(dst / name)
    return copied


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m analysis.figures", description=_cli.describe(__doc__.splitlines()[0]),
                                formatter_class=_cli.HelpFormatter)
    p.add_argument("--only", default=",".join(TOOLS), help="comma-separated tools to regenerate")
    p.add_argument("--figures", type=Path, default=_cli.ROOT / "figures", help="destination folder")
    p.add_argument("--resume", action="store_true", help="pass --resume to each analysis")
    p.add_argument("--workers", type=int, default=1, help="worker processes for each analysis")
    p.add_argument("--score-precision", choices=("single", "double"), default="single",
                   help="passed to maxent and gap_thresholds: single = trec_eval 9.x ranking, "
                        "double = trec_eval 10.0")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    _cli.add_scheduler(p)
    return p


def _body(args) -> int:
    from analysis import gap_thresholds, learning, maxent

    common = (["--workers", str(args.workers), "--score-precision", args.score_precision]
              + (["--resume"] if args.resume else []))
    dask = ["--scheduler", args.scheduler] if args.scheduler else []
    command = command_line(module="analysis.figures")
    for tool in args.only.split(","):
        started = time.time()
        if tool not in TOOLS:
            raise SystemExit(f"error: unknown tool {tool!r}; choose from {', '.join(TOOLS)}")
        out = _cli.SCRATCH / "figures" / tool
        if tool == "maxent":
            rc = maxent.main(["--out", str(out), "--no-progress", "--graded-pr", "uniform", *common, *dask])
        elif tool == "gap_thresholds":
            rc = gap_thresholds.main(["--out", str(out), "--no-progress", "--graded-pr", "uniform", *common, *dask])
        elif tool == "active_eval":
            from analysis import active_eval

            # the budgets and repetitions of the committed evidence (analysis.evidence), so the
            # figures show the runs results/active_eval/trec_runs/ summarises
            rc = active_eval.main(["--out", str(out), "--no-progress", "--depth", "100", "--budgets",
                                   "2,3,5,7,10,14,20,28,40", "--repetitions", "1000", "--seed", "0",
                                   *(["--resume"] if args.resume else [])])
        else:
            rc = learning.main(["--out", str(out), *(["--resume"] if args.resume else []), *dask])
        if rc != 0:
            print(f"error: {tool} failed (exit {rc})", file=sys.stderr)
            return rc
        copied = _copy_figures(out, args.figures / tool, TABLES.get(tool, ()))
        write_provenance(args.figures / tool, command, started, extra={"tool": tool})
        print(f"{tool}: {len(copied)} files -> {args.figures / tool}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return _cli.run_main(_body, _parser(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
