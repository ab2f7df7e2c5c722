"""How informative is a metric? The analysis of Yilmaz & Robertson (2010, s3) and Robertson,
Kanoulas & Yilmaz (2010, s5) as a function that returns frames.

For every (run, topic) and metric: infer the maximum-entropy distribution of relevance from
the metric's value, reconstruct the precision-recall curve and predict other metrics from it,
and score both against the truth. ``python -m analysis.maxent`` runs the same
:func:`analyse_run` per run.
"""
from __future__ import annotations

import dataclasses
import warnings
from typing import TYPE_CHECKING

import numpy as np

from maxent.errors import ConvergenceWarning, ParameterError
from maxent.metrics import Metric, parse_measure
from maxent.stats import topic_bootstrap_mean

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["informativeness", "Informativeness", "Settings", "analyse_run", "error_summary", "status_counts",
           "at_threshold", "infer", "counts_text", "topic_lists", "pr_curves", "resolve_graded_pr", "graded_summary",
           "DEFAULT_METRICS", "ALL_PREDICT"]

DEFAULT_METRICS = ("AP", "nDCG", "GAP")
ALL_PREDICT = ("P@10", "P@5", "P@20", "R-prec", "RR", "AP", "nDCG", "nDCG@10", "GAP")
"""The measures ``predict="all"`` predicts from every inferred distribution."""


@dataclasses.dataclass(frozen=True)
class Settings:
    """What one informativeness analysis computes (plain values, stamped beside results)."""

    metrics: tuple[str, ...]
    thresholds: tuple[int, ...]
    count: str
    alignment: str
    min_relevant: int
    depth: int
    predict: tuple[str, ...]
    graded_pr: tuple[float, ...] | None = None   # g of the graded PR curve scored
    score_precision: str = "single"             # trec_eval 9.x (single) or 10.0 (double) ranking
    given: tuple[str, ...] = ()                 # metrics whose values are held beside each one

    def metric_objects(self) -> list[Metric]:
        return [parse_measure(m) for m in self.metrics]


def at_threshold(m: Metric, t: int) -> Metric:
    """The binary metric at relevance threshold t (graded metrics unchanged)."""
    return dataclasses.replace(m, rel=t) if "rel" in m.PARAMS else m


def infer(metric: Metric, lists, settings: Settings):
    """Solve the MaxEnt problems of one metric (with the ``given`` metrics' values held
    beside it); yield (threshold, metric at it, result)."""
    from maxent.solver import solve

    if settings.given:
        for t in settings.thresholds:
            held = [at_threshold(m, t) for m in (metric, *(parse_measure(g) for g in settings.given))]
            yield t, held[0], solve(held, np.stack([m.value(lists) for m in held], axis=1), lists,
                                    count=settings.count)
        return
    if metric.GRADED:
        res = solve(metric, metric.value(lists), lists, count=settings.count)
        for t in settings.thresholds:
            yield t, metric, res
    else:
        for t in settings.thresholds:
            mt = at_threshold(metric, t)
            yield t, mt, solve(mt, mt.value(lists), lists, count=settings.count)


def counts_text(res, t: int) -> np.ndarray:
    """The count constraints ``res.K`` as text: K at the binary threshold, or ``K_1;...;K_c``."""
    if np.ndim(res.p) == 2:
        return res.K[:, 1].astype(np.int64).astype(str).astype(object)
    return np.array([";".join(str(int(k)) for k in row[1:]) for row in res.K], dtype=object)


def analyse_run(run, qrels, settings: Settings) -> "pd.DataFrame":
    """All instances of one run: one row per (topic, metric, threshold)."""
    import pandas as pd

    from maxent.inference import pr_errors, threshold_probabilities
    from maxent.ranked import rank_runs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lists = rank_runs([run], qrels, depth=settings.depth, score_precision=settings.score_precision)
    relret = {t: (lists.grades >= t).sum(axis=1) for t in settings.thresholds}
    selected = np.logical_and.reduce([relret[t] >= settings.min_relevant for t in settings.thresholds])
    targets = [parse_measure(x) for x in settings.predict]
    frames = []
    for metric in settings.metric_objects():
        with warnings.catch_warnings():
            # statuses are recorded per instance (and counted in the summary), not warned about
            warnings.simplefilter("ignore", ConvergenceWarning)
            solved = list(infer(metric, lists, settings))
        graded = _graded_pr_columns(_graded_solve(solved), lists, settings, selected)
        for t, mt, res in solved:
            q = threshold_probabilities(res.p, t)
            err = pr_errors(q, lists, t, settings.alignment)
            row = {
                "run": lists.runs, "topic": lists.topics, "metric": label(metric, settings), "threshold": t,
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


def label(metric, settings: Settings) -> str:
    """The name of what a row was inferred from: the metric, with the given ones after ``+``."""
    return " + ".join((str(metric), *settings.given))


def _graded_solve(solved):
    """The graded solve among one metric's results (None for binary solves)."""
    res = solved[0][2] if solved else None
    return res if res is not None and np.ndim(res.p) == 3 else None


def _graded_pr_columns(res, lists, settings: Settings, selected: np.ndarray) -> dict:
    """Graded PR curve errors of one metric's graded solve (the same on every threshold row);
    NaN and not eligible for a binary solve."""
    from maxent.inference import graded_pr_errors

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


def resolve_graded_pr(g, max_grade: int, name: str = "graded_pr") -> tuple[float, ...] | None:
    """The g of the graded PR curve from None, ``'uniform'``, ``'g1,g2,..'`` or numbers
    (checked as GAP's g)."""
    if g is None:
        return None
    if isinstance(g, str) and g == "uniform":
        c = max(max_grade, 1)
        return tuple([1.0 / c] * c)
    try:
        values = tuple(float(x) for x in (g.split(",") if isinstance(g, str) else g))
    except (TypeError, ValueError):
        raise ParameterError(f"{name}: expected 'uniform' or numbers g1,g2,..., got {g!r}") from None
    parse_measure("GAP(g=" + ",".join("%.12g" % x for x in values) + ")")      # same checks as GAP's g
    return values


def graded_summary(g: "pd.DataFrame", prefix: str) -> dict:
    """Mean graded PR RMS / MAE over the graded-eligible rows of one (metric, threshold) group."""
    e = g[g["graded eligible"].astype(bool)]
    return {f"{prefix}RMS": e["graded rms"].mean(), f"{prefix}MAE": e["graded mae"].mean(),
            "graded instances": len(e)}


def topic_lists(qrels, run, topic, *, depth: int = 1000, score_precision: str = "single"):
    """The one-list :class:`~maxent.RankedLists` of ``run`` on ``topic``."""
    from maxent.errors import InputError
    from maxent.inputs import as_qrels, as_run
    from maxent.ranked import rank_runs

    qrels, run = as_qrels(qrels), as_run(run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lists = rank_runs([run], qrels, depth=depth, score_precision=score_precision)
    rows = np.flatnonzero(lists.topics == str(topic))
    if len(rows) == 0:
        raise InputError(run.path, None, f"run {run.name!r} has no ranked list for topic {topic!r} in the qrels")
    return lists.take(rows)


def pr_curves(lists, metrics=DEFAULT_METRICS, *, threshold: int = 1, count: str = "retrieved",
              graded=None) -> "pd.DataFrame":
    """The actual PR curve of one ranked list (:func:`topic_lists`) and those inferred from
    each metric's value: a frame ``run, topic, curve, recall, precision``.

    With ``graded`` = g (or ``"uniform"``), the graded PR curves of Robertson, Kanoulas &
    Yilmaz (2010, s3.2) instead, inferred from the graded metrics only.
    """
    import pandas as pd

    from maxent.inference import (expected_pr_curve, graded_pr_points, inferred_graded_pr_curve,
                                  real_pr_curve, threshold_probabilities)
    from maxent.solver import solve

    if len(lists) != 1:
        raise ParameterError(f"lists: pr_curves draws one ranked list, got {len(lists)}")
    run, topic, n = lists.runs[0], lists.topics[0], int(lists.lengths[0])
    settings = Settings(_names(metrics, "metrics"), (int(threshold),), count, "recall", 0, lists.depth, ())
    out = []

    def curve(name, recall, precision):
        out.append(pd.DataFrame({"run": run, "topic": topic, "curve": name, "recall": recall,
                                 "precision": precision}))

    if graded is None:
        rec, prec, valid = real_pr_curve(lists, threshold)
        curve("actual", rec[0][valid[0]], prec[0][valid[0]])
        for metric in settings.metric_objects():
            for t, _, res in infer(metric, lists, settings):
                erec, eprec = expected_pr_curve(threshold_probabilities(res.p, t)[:, :n], lists.n_rel(t))
                curve(f"inferred from {metric}", erec[0], eprec[0])
        return pd.concat(out, ignore_index=True)
    g = resolve_graded_pr(graded, lists.levels - 1, "graded")
    pts = graded_pr_points(lists, g)
    curve("actual", pts.recall[0, pts.valid[0]], pts.precision[0, pts.valid[0]])
    for metric in settings.metric_objects():
        if metric.GRADED:
            res = solve(metric, metric.value(lists), lists, count=count)
            rec, prec = inferred_graded_pr_curve(res.p, pts.Z, g)
            curve(f"inferred from {metric}", rec[0, :n], prec[0, :n])
    return pd.concat(out, ignore_index=True)


def error_summary(instances: "pd.DataFrame", *, level: float = 0.95, n_boot: int = 1000,
                  seed: int = 0) -> "pd.DataFrame":
    """Mean error per metric and threshold with percentile bootstrap intervals over topics.

    Columns: ``metric``, ``threshold``, ``instances`` (eligible rows: solved, with a relevant
    document retrieved and ``min_relevant`` met; the rows averaged), ``rms``, ``rms lo``,
    ``rms hi``, ``mae``, ``mae lo``, ``mae hi``; the same prefixed ``graded`` over the
    graded-eligible rows when present. How ``instances`` relates to the solver's statuses
    (``instances + excluded = solved``, ``solved + undefined + not solved`` = all lists):
    :func:`status_counts`.
    """
    keys = ["metric", "threshold"]
    out = instances[keys].drop_duplicates().reset_index(drop=True)
    parts = [("", "eligible", ("rms", "mae"))]
    if "graded rms" in instances:
        parts.append(("graded ", "graded eligible", ("graded rms", "graded mae")))
    for prefix, flag, columns in parts:
        e = instances[instances[flag].astype(bool)]
        n = e.groupby(keys, sort=False).size().rename(f"{prefix}instances").reset_index()
        out = out.merge(n, on=keys, how="left")
        out[f"{prefix}instances"] = out[f"{prefix}instances"].fillna(0).astype(np.int64)
        for c in columns:
            b = topic_bootstrap_mean(e, c, keys, level=level, n_boot=n_boot, seed=seed)
            out = out.merge(b[[*keys, "mean", "lo", "hi"]].rename(
                columns={"mean": c, "lo": f"{c} lo", "hi": f"{c} hi"}), on=keys, how="left")
    return out


def status_counts(instances: "pd.DataFrame") -> "pd.DataFrame":
    """How the lists of every metric and threshold are counted: a partition of its rows.

    Columns: ``metric``, ``threshold``, then

    - ``lists``: every (run, topic) row of the group, ``= solved + undefined + not solved``;
    - ``solved``: status ``optimal`` or ``boundary`` (a maximum-entropy distribution attains
      the value), ``= instances + excluded``;
    - ``undefined``: no relevant document in the qrels at the threshold (the metric is undefined);
    - ``not solved``: ``infeasible`` or ``not_converged`` (left out of the means);
    - ``instances``: the solved rows that are ``eligible``, those the errors are averaged over
      (the ``instances`` of :func:`error_summary` and of ``summary.csv``);
    - ``excluded``: solved but not eligible: no relevant document retrieved at the threshold
      (no PR point to score) or fewer than ``min_relevant`` retrieved at some threshold.

    ``solved``, ``undefined`` and ``not solved`` are those of ``summary.csv``, whose
    ``instances`` is smaller than ``solved`` by ``excluded``.
    """
    import pandas as pd

    from maxent.solver import HAS_SOLUTION, Status

    keys = ["metric", "threshold"]
    status = instances["status"].astype(str)
    solved = status.isin({s.value for s in HAS_SOLUTION})
    undefined = status == Status.UNDEFINED.value
    eligible = instances["eligible"].astype(bool)
    flags = pd.DataFrame({"lists": 1, "solved": solved, "undefined": undefined,
                          "not solved": ~solved & ~undefined, "instances": eligible,   # eligible: solved
                          "excluded": solved & ~eligible}, index=instances.index).astype(np.int64)
    return pd.concat([instances[keys], flags], axis=1).groupby(keys, sort=False).sum().reset_index()


@dataclasses.dataclass(frozen=True)
class Informativeness:
    """What :func:`informativeness` returns: a pair ``(instances, summary)`` that also names
    them: it unpacks as ``instances, summary = ...``, ``res[0]`` is ``res.instances``,
    ``res[1]`` is ``res.summary`` and ``len(res) == 2``. ``settings`` is what was computed and
    :attr:`counts` (:func:`status_counts`) how the lists of each metric and threshold split
    into solved, undefined and not solved ones."""

    instances: "pd.DataFrame"
    summary: "pd.DataFrame"
    settings: Settings

    def __iter__(self):       # ``inst, summary = maxent.informativeness(...)``
        return iter((self.instances, self.summary))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index):   # as the tuple (instances, summary): ints, negatives, slices
        return (self.instances, self.summary)[index]

    @property
    def counts(self) -> "pd.DataFrame":
        """:func:`status_counts` of :attr:`instances`."""
        return status_counts(self.instances)


def _names(value, argument: str) -> tuple[str, ...]:
    from maxent.metrics.names import as_measure

    items = [value] if isinstance(value, (str, Metric)) or hasattr(value, "params") else list(value)
    if not items:
        raise ParameterError(f"{argument}: give at least one measure")
    out = []
    for m in items:
        metric = parse_measure(as_measure(m)) if not isinstance(m, Metric) else m
        if not metric.HAS_EXPECTATION:
            raise ParameterError(f"{argument}: {metric} has no expectation under a relevance distribution")
        out.append(str(metric))
    return tuple(out)


def informativeness(qrels, runs, metrics=DEFAULT_METRICS, *, threshold=None, count: str = "retrieved",
                    alignment: str = "recall", min_relevant: int = 0, depth: int = 1000, predict="P@10",
                    graded_pr=None, score_precision: str = "single", given=()) -> Informativeness:
    """MaxEnt-infer relevance from each metric's value alone (or with the ``given`` metrics'
    values held beside it), per (run, topic), and score the inferred PR curve and predicted
    metrics against the truth.

    Parameters
    ----------
    qrels, runs : anything :func:`maxent.inputs.as_qrels` / :func:`maxent.inputs.as_runs` reads
    metrics : the metrics inferred from (names, metric objects or ir_measures measures)
    threshold : relevance threshold(s) >= 1 of the PR curves (default: every qrels grade >= 1)
    count : ``retrieved`` (K per grade retrieved) or ``total`` (qrels totals capped at depth)
    alignment : ``recall`` or ``rank``: how inferred and actual PR curves are compared
    min_relevant : keep lists with at least this many relevant retrieved at every threshold
    depth : documents per topic kept (trec_eval ``-M``)
    predict : measures predicted from every inferred distribution, or ``"all"``
    graded_pr : also score the graded PR curve with these g: ``"uniform"`` or g_1..g_c
    score_precision : ``single`` (trec_eval 9.x ranking) or ``double`` (trec_eval 10.0)
    given : metrics whose values are held at once with each metric's
        (:func:`maxent.solver.solve` with several metrics); rows are named ``"AP + P@10"``

    Returns
    -------
    Informativeness
        ``instances`` (one row per run, topic, metric and threshold, runs by name) and
        ``summary`` (:func:`error_summary`); unpacks as ``instances, summary`` and indexes as
        that pair (``[0]``, ``[1]``, ``len() == 2``); ``counts``: :func:`status_counts`.
    """
    import pandas as pd

    from maxent.inputs import as_qrels, as_runs

    qrels = as_qrels(qrels)
    runs = sorted(as_runs(runs), key=lambda r: r.name)
    if threshold is None:
        thresholds = tuple(range(1, max(qrels.max_grade, 1) + 1))
    else:
        items = [threshold] if np.isscalar(threshold) else list(threshold)
        if not items or not all(isinstance(t, (int, np.integer)) and not isinstance(t, bool) and t >= 1
                                for t in items):
            raise ParameterError(f"threshold: expected integers >= 1, got {threshold!r}")
        thresholds = tuple(int(t) for t in items)
    if count not in ("retrieved", "total"):
        raise ParameterError(f"count: expected 'retrieved' or 'total', got {count!r}")
    if alignment not in ("recall", "rank"):
        raise ParameterError(f"alignment: expected 'recall' or 'rank', got {alignment!r}")
    if not isinstance(min_relevant, (int, np.integer)) or min_relevant < 0:
        raise ParameterError(f"min_relevant: expected an integer >= 0, got {min_relevant!r}")
    if not isinstance(depth, (int, np.integer)) or depth < 1:
        raise ParameterError(f"depth: expected an integer >= 1, got {depth!r}")
    if score_precision not in ("single", "double"):
        raise ParameterError(f"score_precision: expected 'single' or 'double', got {score_precision!r}")
    settings = Settings(_names(metrics, "metrics"), thresholds, count, alignment, int(min_relevant), int(depth),
                        _names(ALL_PREDICT if predict == "all" else predict, "predict"),
                        resolve_graded_pr(graded_pr, qrels.max_grade), score_precision=score_precision,
                        given=_names(given, "given") if given else ())
    overlap = set(settings.metrics) & set(settings.given)
    if overlap:
        raise ParameterError(f"given: {sorted(overlap)} also in metrics; a metric is held once")
    inst = pd.concat([analyse_run(r, qrels, settings) for r in runs], ignore_index=True)
    return Informativeness(inst, error_summary(inst), settings)
