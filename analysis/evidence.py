"""``python -m analysis.evidence``: re-run the analyses behind the documentation with fixed
commands and commit-ready output.

Every job is one analysis on one collection, run as the command a user would type. Its output
goes to the git-ignored ``out/evidence/<analysis>/<dataset>/``; the small tables the documentation
reads are copied to ``results/<analysis>/<dataset>/`` beside a ``PROVENANCE.json``.
``--resume`` is passed to the analyses and skips jobs whose evidence the same command made.
"""
from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from analysis import _cli
from analysis._provenance import RESULTS, write_provenance
from maxent.errors import MaxEntError, ParameterError

DATA = "../shared/data"  # relative to the project root, where every job runs
SCRATCH = Path("out") / "evidence"
MAX_BYTES = 1_000_000  # evidence files stay small

_COLLECTIONS = {
    "trec_runs": ("trec_runs/runs", "trec_runs/qrels-rnd1.txt"),
    "trec_covid_r1": (f"{DATA}/trec_covid_r1/runs", f"{DATA}/trec_covid_r1/qrels/qrels-rnd1.txt"),
    "robust03": (f"{DATA}/robust03/runs", f"{DATA}/robust03/qrels/robust03_qrels.txt"),
    "trec_dl19_passage": (f"{DATA}/trec_dl19_passage/runs", f"{DATA}/trec_dl19_passage/qrels/qrels.dl19-passage.txt"),
}
COLLECTIONS = tuple(_COLLECTIONS)


@dataclass(frozen=True)
class Job:
    analysis: str          # the results/ folder (and, unless ``module`` says otherwise, the module)
    dataset: str           # results/<analysis>/<dataset>/
    args: tuple[str, ...]  # the analysis's options, without --out
    files: tuple[str, ...]  # files copied from the output folder to the evidence folder
    module: str | None = None

    @property
    def key(self) -> str:
        return f"{self.analysis}/{self.dataset}"

    @property
    def out(self) -> Path:
        return SCRATCH / self.analysis / self.dataset

    @property
    def argv(self) -> list[str]:
        return ["-m", f"analysis.{self.module or self.analysis}", *self.args, "--out", str(self.out),
                "--no-progress"]

    @property
    def command(self) -> str:
        return shlex.join(["python", *self.argv])


def _data(dataset: str) -> tuple[str, ...]:
    runs, qrels = _COLLECTIONS[dataset]
    return ("--runs", runs, "--qrels", qrels, "--dataset", dataset)


def _maxent_jobs() -> list[Job]:
    files = ("summary.csv", "fig_p10_inferred.csv")
    jobs = []
    for d in COLLECTIONS:
        # DL 2019's binary measures use threshold 2 (its README); the others score every grade.
        thr = ("--threshold", "2") if d == "trec_dl19_passage" else ("--threshold", "1,2")
        jobs.append(Job("maxent", d, (*_data(d), *thr, "--depth", "1000"), files))
    # Yilmaz & Robertson (2010) section 3: the count constraint is the collection's R, nDCG has
    # exponential gains.
    for d in COLLECTIONS:
        thr = "2" if d == "trec_dl19_passage" else "1"
        jobs.append(Job("maxent/protocol", d, (*_data(d), "--threshold", thr, "--depth", "1000",
                                               "--metrics", "AP,nDCG,nDCG(gain=exp)",
                                               "--count-constraint", "total"), files, module="maxent"))
    # one factor at a time on the same lists: exponential gains, rank-aligned PR errors
    for d in COLLECTIONS:
        thr = "2" if d == "trec_dl19_passage" else "1"
        jobs.append(Job("maxent/exp_gain", d, (*_data(d), "--threshold", thr, "--depth", "1000",
                                               "--metrics", "nDCG(gain=exp)"), files, module="maxent"))
        jobs.append(Job("maxent/rank_aligned", d, (*_data(d), "--threshold", thr, "--depth", "1000",
                                                   "--alignment", "rank"), files, module="maxent"))
    return jobs


def _gap_jobs() -> list[Job]:
    files = ("sweep.csv", "discriminative.csv")
    extra = {"trec_runs": (), "robust03": ("--topics", "601-650"), "trec_dl19_passage": ("--step", "0.25"),
             "trec_covid_r1": ()}
    return [Job("gap_thresholds", d, (*_data(d), *extra[d], "--depth", "1000", "--bootstrap", "1000",
                                      "--seed", "0"),
                files + (("asl.csv",) if d == "trec_runs" else ()))
            for d in ("trec_runs", "robust03", "trec_dl19_passage", "trec_covid_r1")]


def _active_jobs() -> list[Job]:
    files = ("errors.csv", "selection.csv", "update.csv", "summary.csv")
    # budgets reach past the largest one reported, so passive's curve can be read at active's error
    budgets = {"trec_runs": "2,3,5,7,10,14,20,28,40", "trec_covid_r1": "2,3,5,7,10,14,20,28,40",
               "robust03": "5,7,10,14,20,28,40,56,80", "trec_dl19_passage": "2,3,5,7,10,14,20,28,40"}
    jobs = []
    for d in ("trec_runs", "robust03", "trec_dl19_passage", "trec_covid_r1"):
        # TREC-COVID's 143 rankers make per-ranker tables too large to commit: summaries only
        keep = ("selection.csv", "summary.csv") if d == "trec_covid_r1" else files
        jobs.append(Job("active_eval", d, (*_data(d), "--depth", "100", "--budgets", budgets[d],
                                           "--repetitions", "1000", "--seed", "0"), keep))
    return jobs


def _metric_sets_jobs() -> list[Job]:
    files = ("predictions.csv", "sets.csv", "greedy.csv", "marginal.csv", "webber.csv", "webber_tests.csv",
             "gupta.csv", "gupta_tests.csv")
    # the regression baseline trains on collections that share no run or topic with the bundled
    # sample (TREC-COVID round 1 holds the sample's runs)
    train = [f"--train={d}={_COLLECTIONS[d][1]},{_COLLECTIONS[d][0]}" for d in ("robust03", "trec_dl19_passage")]
    args = (*_data("trec_runs"), "--depth", "1000", "--max-size", "2", "--workers", "2", *train)
    return [Job("metric_sets", "trec_runs", args, files)]


JOBS: tuple[Job, ...] = (*_maxent_jobs(), *_gap_jobs(), *_active_jobs(), *_metric_sets_jobs())


def select(only: str | None) -> list[Job]:
    if not only:
        return list(JOBS)
    wanted = [w.strip() for w in only.split(",") if w.strip()]
    known = {j.analysis for j in JOBS} | {j.key for j in JOBS}
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise ParameterError(f"--only: unknown job(s) {', '.join(unknown)}; choose from "
                             + ", ".join(sorted(known)))
    return [j for j in JOBS if j.analysis in wanted or j.key in wanted]


def _done(job: Job) -> bool:
    prov = RESULTS / job.analysis / job.dataset / "PROVENANCE.json"
    try:
        return json.loads(prov.read_text())["command"] == job.command
    except (OSError, ValueError, KeyError):
        return False


def run_job(job: Job, resume: bool) -> Path:
    """Run ``job`` in the project root, copy its evidence files and write their provenance."""
    root = _cli.ROOT
    started = time.time()
    argv = [sys.executable, *job.argv, *(["--resume"] if resume else [])]
    proc = subprocess.run(argv, cwd=root, stdout=subprocess.PIPE, text=True)
    log = root / job.out / "evidence.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(proc.stdout)
    if proc.returncode != 0:
        raise MaxEntError(f"{job.key}: `{job.command}` failed (exit {proc.returncode}); its output is in {log}")
    dest = RESULTS / job.analysis / job.dataset
    dest.mkdir(parents=True, exist_ok=True)
    for name in job.files:
        src = root / job.out / name
        if not src.exists():
            raise MaxEntError(f"{job.key}: {src} was not written by `{job.command}`")
        if src.stat().st_size > MAX_BYTES:
            raise MaxEntError(f"{job.key}: {src} has {src.stat().st_size} bytes, more than the "
                              f"{MAX_BYTES} an evidence file may have; keep it in out/")
        tmp = dest / f".{name}.tmp"
        shutil.copyfile(src, tmp)
        tmp.replace(dest / name)
    # with --resume the wall time covers this pass only, and the record says so
    write_provenance(dest, job.command, started, extra={"files": list(job.files), "resumed": resume})
    return dest


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m analysis.evidence", description=_cli.describe(__doc__.splitlines()[0]),
                                formatter_class=_cli.HelpFormatter)
    p.add_argument("--only", default=None, help="comma-separated ANALYSIS or ANALYSIS/DATASET jobs (default: all)")
    p.add_argument("--resume", action="store_true",
                   help="skip jobs whose evidence was made by the same command; pass --resume to the analyses")
    p.add_argument("--list", action="store_true", help="print the jobs' commands and exit")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return p


def _body(args) -> int:
    jobs = select(args.only)
    if args.list:
        for j in jobs:
            print(f"{j.key}: {j.command}")
        return 0
    for i, job in enumerate(jobs, 1):
        if args.resume and _done(job):
            print(f"[{i}/{len(jobs)}] {job.key}: done, skipped", file=sys.stderr)
            continue
        print(f"[{i}/{len(jobs)}] {job.key}: {job.command}", file=sys.stderr, flush=True)
        t0 = time.time()
        dest = run_job(job, args.resume)
        print(f"[{i}/{len(jobs)}] {job.key}: {time.time() - t0:.0f} s -> {dest.relative_to(_cli.ROOT)}",
              file=sys.stderr, flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    return _cli.run_main(_body, _parser(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
