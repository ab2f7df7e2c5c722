"""Shared experiment plumbing of the MaxEnt analyses (``analysis.maxent``,
``analysis.gap_thresholds``): settings, the per-run instance table and its resumable chunks.

Orchestration only: the maths (solving, counts, PR errors) is the library's
(:func:`maxent.solve`, :attr:`maxent.MaxEntResult.K`, :mod:`maxent.inference`).
"""
from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import _cli
from analysis._cli import split_names  # noqa: F401  (re-exported)
from maxent.errors import ConvergenceWarning, ParameterError
from maxent.inference import graded_pr_errors, pr_errors, threshold_probabilities
from maxent.metrics import Metric, parse_measure
from maxent.ranked import rank_runs
from maxent.solver import solve

__all__ = ["split_names", "Settings", "at_threshold", "infer", "counts_text", "analyse_run",
           "parse_graded_pr", "graded_summary", "run_instances"]


@dataclasses.dataclass(frozen=True)
class Settings:
    metrics: tuple[str, ...]
    thresholds: tuple[int, ...]
    count: str
    alignment: str
    min_relevant: int
    depth: int
    predict: tuple[str, ...]
    graded_pr: tuple[float, ...] | None = None   # g of the graded PR curve scored (paper 004 s3.2)
    score_precision: str = "single"             # trec_eval 9.x (single) or 10.0 (double) ranking

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
        lists = rank_runs([run], qrels, depth=settings.depth, score_precision=settings.score_precision)
    relret = {t: (lists.grades >= t).sum(axis=1) for t in settings.thresholds}
    selected = np.logical_and.reduce([relret[t] >= settings.min_relevant for t in settings.thresholds])
    targets = [parse_measure(x) for x in settings.predict]
    frames = []
    for metric in settings.metric_objects():
        with warnings.catch_warnings():
            # statuses are recorded per instance (and counted in summary.csv), not warned about
            warnings.simplefilter("ignore", ConvergenceWarning)
            solved = list(infer(metric, lists, settings))
        graded = _graded_pr_columns(_graded_solve(solved), lists, settings, selected)
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
            row.update(graded)
            frames.append(pd.DataFrame(row))
    return pd.concat(frames, ignore_index=True)


def _graded_solve(solved):
    """The graded solve among one metric's results (None for binary solves)."""
    res = solved[0][2] if solved else None
    return res if res is not None and np.ndim(res.p) == 3 else None


def _graded_pr_columns(res, lists, settings: Settings, selected: np.ndarray) -> dict:
    """Graded PR curve errors (paper 004 s3.2) of one metric's graded solve, when asked for.

    The graded curve does not depend on the binary threshold: the same values go on every
    threshold row of the metric. ``graded eligible``: selected by --min-relevant, solved, and
    with a graded PR point. Binary solves carry no grade distribution: NaN, not eligible.
    """
    if settings.graded_pr is None:
        return {}
    if res is None:
        nan = np.full(len(lists), np.nan)
        return {"graded n_points": np.zeros(len(lists), dtype=np.int64), "graded rms": nan, "graded mae": nan,
                "graded eligible": np.zeros(len(lists), dtype=bool)}
    err = graded_pr_errors(res.p, lists, settings.graded_pr, settings.alignment)
    ok = res.success
    return {"graded n_points": err.n_points, "graded rms": np.where(ok, err.rms, np.nan),
            "graded mae": np.where(ok, err.mae, np.nan), "graded eligible": selected & ok & (err.n_points > 0)}


def parse_graded_pr(text: str | None, max_grade: int) -> tuple[float, ...] | None:
    """--graded-pr: 'uniform' or comma-separated g_1..g_c (validated as GAP's g)."""
    if text is None:
        return None
    if text == "uniform":
        c = max(max_grade, 1)
        return tuple([1.0 / c] * c)
    try:
        g = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise ParameterError(f"--graded-pr: expected 'uniform' or numbers g1,g2,..., got {text!r}") from None
    parse_measure("GAP(g=" + ",".join("%.12g" % x for x in g) + ")")      # same checks as GAP's g
    return g


def _job(args):
    run, qrels, settings = args
    return run.name, analyse_run(run, qrels, settings)


def run_instances(runs, qrels, settings: Settings, out: Path, config: dict, args) -> pd.DataFrame:
    """Analyse every run (one resumable chunk per run, written atomically); all instances."""
    chunks = _cli.prepare_chunks(out, config, args.resume)
    todo = [r for r in runs if not (chunks / f"{r.name}.csv").exists()]
    _cli.report_resumed([r.name for r in runs if r not in todo], len(runs), "runs")
    jobs = [(r, qrels, settings) for r in todo]
    bar = _cli.progress(None, len(runs), "runs", args.no_progress)
    bar.update(len(runs) - len(todo))
    for run_name, frame in _cli.parallel_map(_job, jobs, args):  # local, process pool or Dask
        _cli.atomic_write_csv(chunks / f"{run_name}.csv", frame)
        bar.update(1)
    bar.close()
    return pd.concat([pd.read_csv(chunks / f"{r.name}.csv", dtype={"topic": str, "count": str})
                      for r in runs], ignore_index=True)


def graded_summary(g: pd.DataFrame, prefix: str) -> dict:
    """Mean graded PR RMS / MAE over the graded-eligible rows of one (metric, threshold) group."""
    e = g[g["graded eligible"].astype(bool)]
    return {f"{prefix}RMS": e["graded rms"].mean(), f"{prefix}MAE": e["graded mae"].mean(),
            "graded instances": len(e)}
