"""Shared experiment plumbing of the MaxEnt analyses (``analysis.maxent``,
``analysis.gap_thresholds``): settings, the per-run instance table and its resumable chunks.

Orchestration only: the maths (solving, counts, PR errors) is the library's
(:func:`maxent.solve`, :attr:`maxent.MaxEntResult.K`, :mod:`maxent.inference`).
"""
from __future__ import annotations

import dataclasses
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import _cli
from analysis._cli import split_names  # noqa: F401  (re-exported)
from maxent.errors import ConvergenceWarning
from maxent.inference import pr_errors, threshold_probabilities
from maxent.metrics import Metric, parse_measure
from maxent.ranked import rank_runs
from maxent.solver import solve

__all__ = ["split_names", "Settings", "at_threshold", "infer", "counts_text", "analyse_run", "run_instances"]


@dataclasses.dataclass(frozen=True)
class Settings:
    metrics: tuple[str, ...]
    thresholds: tuple[int, ...]
    count: str
    alignment: str
    min_relevant: int
    depth: int
    predict: tuple[str, ...]

    def metric_objects(self) -> list[Metric]:
        return [parse_measure(m) for m in self.metrics]


def at_threshold(m: Metric, t: int) -> Metric:
    """The binary metric at relevance threshold t (graded metrics unchanged)."""
    return dataclasses.replace(m, rel=t) if "rel" in m.PARAMS else m


def infer(metric: Metric, lists, settings: Settings):
    """Solve the MaxEnt problems of one metric; yield (threshold, q, result) per threshold."""
    if metric.GRADED:
        res = solve(metric, metric.value(lists), lists, count=settings.count)
        for t in settings.thresholds:
            yield t, metric, res
    else:
        for t in settings.thresholds:
            mt = at_threshold(metric, t)
            yield t, mt, solve(mt, mt.value(lists), lists, count=settings.count)


def counts_text(res, t: int) -> np.ndarray:
    """The ``count`` column: the count constraints the solver used (``res.K``), as text: K at
    the binary solve's threshold, or ``K_1;...;K_c`` for a graded solve."""
    if np.ndim(res.p) == 2:
        return res.K[:, 1].astype(np.int64).astype(str).astype(object)
    return np.array([";".join(str(int(k)) for k in row[1:]) for row in res.K], dtype=object)


def analyse_run(run, qrels, settings: Settings) -> pd.DataFrame:
    """All instances of one run: one row per (topic, metric, threshold)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lists = rank_runs([run], qrels, depth=settings.depth)
    relret = {t: (lists.grades >= t).sum(axis=1) for t in settings.thresholds}
    selected = np.logical_and.reduce([relret[t] >= settings.min_relevant for t in settings.thresholds])
    targets = [parse_measure(x) for x in settings.predict]
    frames = []
    for metric in settings.metric_objects():
        with warnings.catch_warnings():
            # statuses are recorded per instance (and counted in summary.csv), not warned about
            warnings.simplefilter("ignore", ConvergenceWarning)
            solved = list(infer(metric, lists, settings))
        for t, mt, res in solved:
            q = threshold_probabilities(res.p, t)
            err = pr_errors(q, lists, t, settings.alignment)
            row = {
                "run": lists.runs, "topic": lists.topics, "metric": str(metric), "threshold": t,
                "value": mt.value(lists), "depth": lists.lengths,
                "count": counts_text(res, t),
                "status": res.status, "nit": res.nit, "entropy": res.entropy,
                "residual": res.residual, "n_points": err.n_points, "rms": err.rms, "mae": err.mae,
                "eligible": selected & (err.n_points > 0) & res.success,
            }
            for x in targets:
                xt = at_threshold(x, t)
                row[f"actual {x}"] = xt.value(lists)
                if xt.GRADED and np.ndim(res.p) != 3:
                    row[f"pred {x}"] = np.nan  # a binary solve says nothing about grades
                else:
                    row[f"pred {x}"] = xt.expectation(res.p if xt.GRADED else q, lists)
            frames.append(pd.DataFrame(row))
    return pd.concat(frames, ignore_index=True)


def _job(args):
    run, qrels, settings = args
    return run.name, analyse_run(run, qrels, settings)


# ------------------------------------------------------------------ summaries and figures


def run_instances(runs, qrels, settings: Settings, out: Path, config: dict, args) -> pd.DataFrame:
    """Analyse every run (one resumable chunk per run, written atomically); all instances."""
    chunks = _cli.prepare_chunks(out, config, args.resume)
    todo = [r for r in runs if not (chunks / f"{r.name}.csv").exists()]
    jobs = [(r, qrels, settings) for r in todo]
    bar = _cli.progress(None, len(runs), "runs", args.no_progress)
    bar.update(len(runs) - len(todo))
    if args.workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            for run_name, frame in pool.map(_job, jobs):
                _cli.atomic_write_csv(chunks / f"{run_name}.csv", frame)
                bar.update(1)
    else:
        for job in jobs:
            run_name, frame = _job(job)
            _cli.atomic_write_csv(chunks / f"{run_name}.csv", frame)
            bar.update(1)
    bar.close()
    return pd.concat([pd.read_csv(chunks / f"{r.name}.csv", dtype={"topic": str, "count": str})
                      for r in runs], ignore_index=True)
