"""Evaluate TREC runs against qrels as trec_eval does: one value per (run, topic, measure).

:func:`evaluate` returns a pandas frame, :func:`aggregate` its per-run ``all`` rows; the
command line is :mod:`maxent.cli.evaluate`.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from maxent.errors import InputError, MeasureNameError, ParameterError
from maxent.inputs import as_qrels, as_runs
from maxent.metrics import Metric, parse_measure, parse_measures
from maxent.metrics.registry import measure_sets
from maxent.metrics.ap import MIN_GEO_MEAN
from maxent.metrics.names import as_measure
from maxent.ranked import RankedLists, check_depth, rank_runs
from maxent.trec import Qrels, Run

if TYPE_CHECKING:  # pandas is imported where a frame is built, not at start-up
    import pandas as pd

__all__ = ["evaluate", "evaluate_lists", "aggregate", "run_summary", "resolve_measures", "judged_only"]


def resolve_measures(measures: str | Metric | Iterable[str | Metric],
                     rel: int | None = None, score_precision: str = "single") -> list[Metric]:
    """Names (or the sets ``official``/``all_trec``), metric objects or ir_measures measures ->
    unique metric objects; ``rel`` (trec_eval ``-l``) sets every binary measure's threshold;
    ``score_precision="double"`` (trec_eval 10.0) gives every measure with a ``rule`` (IPrec,
    11pt_avg) 10.0's rounding rule."""
    if isinstance(measures, (str, Metric)) or hasattr(measures, "params"):  # one name, metric or ir_measures measure
        measures = [measures]
    elif measures is None or isinstance(measures, (bytes, dict)) or not hasattr(measures, "__iter__"):
        raise MeasureNameError("measures: expected a measure name, a metric object or a list of them, "
                               f"got {type(measures).__name__}")
    if rel is not None and (isinstance(rel, bool) or not isinstance(rel, (int, np.integer)) or rel < 0):
        raise ParameterError(f"rel must be an integer >= 0 (trec_eval -l), got {rel!r}")
    out: list[Metric] = []
    for m in measures:
        if isinstance(m, str) and not m.strip():
            raise MeasureNameError("empty measure name")
        if isinstance(m, str):
            names = measure_sets(score_precision).get(m, [m])
        elif isinstance(m, Metric) or hasattr(m, "params"):    # a metric, or an ir_measures measure
            names = [as_measure(m)]
        else:
            raise MeasureNameError(f"measures: expected measure names (str), metric objects or ir_measures "
                                   f"measures, got {type(m).__name__} {m!r}")
        out.extend(parse_measures(names))
    if not out:
        raise MeasureNameError("no measure given")
    if rel is not None:
        out = [dataclasses.replace(m, rel=int(rel)) if "rel" in m.PARAMS else m for m in out]
    if score_precision not in ("single", "double"):
        raise ParameterError(f"score_precision must be 'single' or 'double', got {score_precision!r}")
    if score_precision == "double":   # trec_eval 10.0: lround(x R) for iprec_at_recall
        out = [dataclasses.replace(m, rule="10") if "10" in (getattr(m.PARAMS.get("rule"), "choices", None) or ())
               else m for m in out]
    return list(dict.fromkeys(out))


def judged_only(lists: RankedLists) -> RankedLists:
    """The lists without their unjudged documents (trec_eval ``-J``): each list keeps its judged
    documents in rank order, after the depth cut, so ``num_ret`` counts judged documents only.
    Documents judged with a negative grade are removed too, as trec_eval does."""
    inside = np.arange(lists.depth)[None, :] < lists.lengths[:, None]
    keep = inside & (lists.grades >= 0)
    order = np.argsort(~keep, axis=1, kind="stable")   # judged first, in rank order
    grades = np.take_along_axis(lists.grades, order, axis=1)
    lengths = keep.sum(axis=1).astype(np.int64)
    return RankedLists.from_grades(grades, lists.rel_counts, lengths, lists.runs, lists.topics)


def evaluate_lists(lists: RankedLists, measures: Sequence[Metric]) -> "pd.DataFrame":
    """Per-list values of every measure: a long frame (run, topic, measure, value)."""
    import pandas as pd

    if not measures:
        raise MeasureNameError("no measure given")
    B = len(lists)
    return pd.concat([pd.DataFrame({"run": lists.runs, "topic": lists.topics,
                                    "measure": np.full(B, str(m), dtype=object), "value": m.value(lists)})
                      for m in measures], ignore_index=True)


def evaluate(qrels: Qrels | str, runs: Run | str | Sequence[Run | str], measures=("AP", "P@10", "nDCG"), *,
             depth: int | None = None, complete: bool = False, rel: int | None = None,
             score_precision: str = "single", judged_docs_only: bool = False) -> "pd.DataFrame":
    """Evaluate runs: one row per (run, topic, measure) with its value.

    Parameters
    ----------
    qrels : anything :func:`maxent.inputs.as_qrels` reads (path, Qrels, frame, dict)
    runs : one run or several, as :func:`maxent.inputs.as_runs` reads them
    measures : measure names (ir_measures or trec_eval style), metric objects or
        ir_measures measure objects
    depth : trec_eval ``-M`` (default None: all); complete : trec_eval ``-c``;
    rel : trec_eval ``-l``
    score_precision : ``single`` (trec_eval 9.x, pytrec_eval: C floats) or ``double``
        (trec_eval 10.0, also its iprec_at_recall rounding)
    judged_docs_only : trec_eval ``-J``: unjudged documents are removed before evaluating

    See Also
    --------
    aggregate : per-run means (sums for counts), as trec_eval's ``all`` rows.
    """
    depth = check_depth(depth)
    qrels = as_qrels(qrels)
    measures = resolve_measures(measures, rel, score_precision)
    loaded = as_runs(runs)
    lists = rank_runs(loaded, qrels, depth=depth, complete=complete, precision=score_precision)
    return evaluate_lists(judged_only(lists) if judged_docs_only else lists, measures)


def run_summary(m: Metric, v: np.ndarray, run_id: np.ndarray, n_runs: int) -> np.ndarray:
    """Per-run ``all`` value of one measure from its per-list values ``v`` (list i of run
    ``run_id[i]``): mean, sum for counts, or geometric mean of max(v, 1e-5) for ``gm_map``."""
    n = np.bincount(run_id, minlength=n_runs)
    if m.AGGREGATE == "gmean":
        logv = np.log(np.maximum(v, MIN_GEO_MEAN))
        return np.exp(np.bincount(run_id, weights=logv, minlength=n_runs) / np.maximum(n, 1))
    total = np.bincount(run_id, weights=v, minlength=n_runs)
    return total if m.AGGREGATE == "sum" else total / np.maximum(n, 1)


def aggregate(frame: "pd.DataFrame", measures: Sequence[Metric] | None = None) -> "pd.DataFrame":
    """Per-run summary (run, measure, value, num_q), as trec_eval's ``all`` rows
    (:func:`run_summary`), in the order the (run, measure) pairs first appear."""
    import pandas as pd

    missing = [c for c in ("run", "topic", "measure", "value") if c not in getattr(frame, "columns", ())]
    if not isinstance(frame, pd.DataFrame) or missing:
        raise ParameterError("aggregate: expected the frame evaluate() returns (columns run, topic, "
                             f"measure, value), got {type(frame).__name__}"
                             + (f" without column(s) {', '.join(missing)}" if missing else ""))
    given = {str(m): m for m in (measures or [])}
    parts = []
    for name, part in frame.groupby("measure", sort=False):
        m = given.get(name) or parse_measure(name)
        run_id, names = pd.factorize(part["run"])
        v = run_summary(m, part["value"].to_numpy(dtype=np.float64), run_id, len(names))
        parts.append(pd.DataFrame({"run": names, "measure": name, "value": v,
                                   "num_q": np.bincount(run_id, minlength=len(names))}))
    if not parts:
        return pd.DataFrame(columns=["run", "measure", "value", "num_q"])
    order = pd.MultiIndex.from_frame(frame[["run", "measure"]].drop_duplicates())
    return pd.concat(parts).set_index(["run", "measure"]).loc[order].reset_index()
