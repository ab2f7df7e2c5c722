"""``python -m analysis.figures``: regenerate the committed figures in ``figures/``.

Runs the analyses on their default data (``learning``: the shared Yahoo sample) and copies
every figure with the CSV behind it (and :data:`TABLES`) to ``figures/<tool>/`` beside a
``PROVENANCE.json``, then the figures the docs show (:data:`DOCS_IMAGES`) to ``docs/img/``;
``--resume`` passes through. ``--check`` regenerates into a temporary folder instead and fails
when a committed CSV differs from the regenerated one.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from analysis import _cli
from analysis._provenance import command_line, write_provenance

TOOLS = ("maxent", "gap_thresholds", "learning", "active_eval")
TABLES = {"gap_thresholds": ("discriminative.csv",)}  # copied although no figure draws them
DOCS = _cli.ROOT / "docs" / "img"
# (tool, figure) -> docs/img/<name>: the figures the docs pages embed
DOCS_IMAGES = {("maxent", "fig_rms_by_metric.png"): "maxent_rms_by_metric.png",
               ("maxent", "fig_p10_inferred.png"): "maxent_p10_inferred.png",
               ("maxent", "fig_pr_examples.png"): "maxent_pr_examples.png",
               ("gap_thresholds", "sweep.png"): "gap_thresholds_sweep.png",
               ("gap_thresholds", "asl.png"): "gap_thresholds_asl.png"}
# BLAS and OpenMP thread counts can change the last bits of the learning part's numbers
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


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
    p.add_argument("--check", action="store_true",
                   help="regenerate into a temporary folder and compare: exit 1 naming every CSV of --figures "
                        "that differs from what the analyses write now (and every docs image unlike its figure)")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    _cli.add_scheduler(p)
    return p


def _threads() -> dict:
    """The thread settings of this run, for PROVENANCE.json: the environment variables set and
    the thread pools of the BLAS libraries loaded (when threadpoolctl is installed)."""
    record = {"thread_env": {k: os.environ[k] for k in THREAD_VARIABLES if k in os.environ}}
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return record
    record["thread_pools"] = sorted({(p.get("internal_api"), p.get("num_threads")) for p in threadpool_info()},
                                    key=str)
    return record


def _regenerate(args, tools, figures: Path, scratch: Path) -> int:
    """Run each tool on its default data into ``scratch/<tool>`` and copy its figures to
    ``figures/<tool>``; 0, or the first failing tool's exit code."""
    from analysis import gap_thresholds, learning, maxent

    common = (["--workers", str(args.workers), "--score-precision", args.score_precision]
              + (["--resume"] if args.resume else []))
    dask = ["--scheduler", args.scheduler] if args.scheduler else []
    command = command_line(module="analysis.figures")
    for tool in tools:
        started = time.time()
        out = scratch / tool
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
        copied = _copy_figures(out, figures / tool, TABLES.get(tool, ()))
        write_provenance(figures / tool, command, started,
                         extra={"tool": tool, **_threads()})
        print(f"{tool}: {len(copied)} files -> {figures / tool} ({time.time() - started:.0f} s)")
    return 0


def _docs_images(figures: Path, tools, docs: Path = DOCS) -> list[Path]:
    """Copy the figures of :data:`DOCS_IMAGES` of the tools regenerated to ``docs``."""
    docs.mkdir(parents=True, exist_ok=True)
    copied = []
    for (tool, name), target in DOCS_IMAGES.items():
        if tool in tools and (figures / tool / name).exists():
            shutil.copyfile(figures / tool / name, docs / target)
            copied.append(docs / target)
    return copied


def _csv_difference(old: Path, new: Path) -> str:
    """One line on how two CSVs differ: row counts, rows changed, the first changed row."""
    a, b = old.read_text().splitlines(), new.read_text().splitlines()
    changed = sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    text = f"{len(a)} committed rows, {len(b)} regenerated, {changed} differ"
    if first < max(len(a), len(b)):
        text += (f"; first at line {first + 1}: {a[first] if first < len(a) else '(none)'!r} -> "
                 f"{b[first] if first < len(b) else '(none)'!r}")
    return text


def compare(committed: Path, fresh: Path, tools, docs: Path | None = DOCS) -> list[str]:
    """The differences between the committed figures and fresh ones, one line each: every CSV
    that differs, is missing or is no longer written, and every docs image unlike its figure."""
    problems = []
    for tool in tools:
        old = {p.name for p in (committed / tool).glob("*.csv")}
        new = {p.name for p in (fresh / tool).glob("*.csv")}
        for name in sorted(old | new):
            if name not in new:
                problems.append(f"{tool}/{name}: committed but no longer written")
            elif name not in old:
                problems.append(f"{tool}/{name}: written but not committed")
            elif (committed / tool / name).read_bytes() != (fresh / tool / name).read_bytes():
                problems.append(f"{tool}/{name}: {_csv_difference(committed / tool / name, fresh / tool / name)}")
    if docs is not None:
        for (tool, name), target in DOCS_IMAGES.items():
            figure, image = committed / tool / name, docs / target
            if tool in tools and figure.exists() and (not image.exists() or image.read_bytes() != figure.read_bytes()):
                problems.append(f"docs/img/{target}: not a copy of {tool}/{name}")
    return problems


def _body(args) -> int:
    tools = args.only.split(",")
    for tool in tools:
        if tool not in TOOLS:
            raise SystemExit(f"error: unknown tool {tool!r}; choose from {', '.join(TOOLS)}")
    if not args.check:
        rc = _regenerate(args, tools, args.figures, _cli.SCRATCH / "figures")
        if rc == 0 and args.figures.resolve() == (_cli.ROOT / "figures").resolve():
            for p in _docs_images(args.figures, tools):   # only from the committed figures
                print(f"docs image -> {p}")
        return rc
    with tempfile.TemporaryDirectory(prefix="figures-check-") as tmp:
        fresh = Path(tmp) / "figures"
        rc = _regenerate(args, tools, fresh, Path(tmp) / "scratch")
        if rc != 0:
            return rc
        docs = DOCS if args.figures.resolve() == (_cli.ROOT / "figures").resolve() else None
        problems = compare(args.figures, fresh, tools, docs)
    if problems:
        print(f"{args.figures} differs from what analysis.figures writes ({len(problems)}):", file=sys.stderr)
        for line in problems:
            print(f"  {line}", file=sys.stderr)
        print("regenerate with: python -m analysis.figures --only " + ",".join(tools), file=sys.stderr)
        return 1
    print(f"{args.figures}: the CSVs of {', '.join(tools)} are what analysis.figures writes")
    return 0


def main(argv: list[str] | None = None) -> int:
    return _cli.run_main(_body, _parser(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
