"""Plot helpers of the informativeness and GAP-threshold analyses, after scikit-learn's
``PrecisionRecallDisplay``: a ``from_...`` class method computes what is drawn (the frame
``data``, the table behind the figure) and draws it on ``ax`` (a new figure when None);
``plot(ax)`` draws it again; ``ax_`` and ``figure_`` are then the matplotlib objects.

Figures of Yilmaz & Robertson (2010): :class:`PRCurveDisplay` (Fig. 2), :class:`PredictionDisplay`
(Fig. 3), :class:`MetricScatterDisplay` (Fig. 1), :class:`RMSDisplay` (Table 1); of Robertson,
Kanoulas & Yilmaz (2010): :class:`GSweepDisplay` (Fig. 2), :class:`ASLDisplay` (Fig. 3). Means
carry 95% percentile bootstrap intervals over topics, drawn as error bars or bands.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from maxent.errors import ParameterError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PRCurveDisplay", "PredictionDisplay", "MetricScatterDisplay", "RMSDisplay", "GSweepDisplay",
           "ASLDisplay"]


def _axes(ax, size=(4.5, 4)):
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=size)
    return ax


def _threshold(inst: "pd.DataFrame", threshold):
    if threshold is None:
        return int(inst["threshold"].min())
    if threshold not in set(inst["threshold"]):
        raise ParameterError(f"threshold: {threshold!r} is not among the instances' thresholds "
                             f"{sorted(set(inst['threshold']))}")
    return threshold


def _check_columns(frame, columns, what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ParameterError(f"{what}: missing column(s) {', '.join(missing)}; columns found: "
                             + ", ".join(map(str, frame.columns)))


class _Display:
    data: "pd.DataFrame"
    ax_ = None
    figure_ = None

    def _done(self, ax):
        self.ax_, self.figure_ = ax, ax.figure
        return self


# ---------------------------------------------------------------------------- PR curves
class PRCurveDisplay(_Display):
    """Actual and inferred precision-recall curves of one (run, topic).

    ``data``: long frame ``run, topic, curve, recall, precision``; ``curve`` is ``actual``
    (drawn as points) or ``inferred from M`` (drawn as lines).
    """

    def __init__(self, data: "pd.DataFrame", *, graded: bool = False):
        _check_columns(data, ["run", "topic", "curve", "recall", "precision"], "PRCurveDisplay data")
        self.data, self.graded = data, graded

    @classmethod
    def from_run(cls, qrels, run, topic, metrics=("AP", "nDCG", "GAP"), *, threshold: int = 1,
                 graded=None, count: str = "retrieved", depth: int = 1000, score_precision: str = "single",
                 ax=None) -> "PRCurveDisplay":
        """Rank ``run`` on ``topic``, infer from each metric's value and draw the curves.

        ``qrels``, ``run``: anything :mod:`maxent.inputs` reads (paths, objects, frames,
        dicts). ``graded`` = g or ``"uniform"``: graded PR curves, from graded metrics.
        """
        from maxent.informativeness import pr_curves, topic_lists

        lists = topic_lists(qrels, run, topic, depth=depth, score_precision=score_precision)
        data = pr_curves(lists, metrics, threshold=threshold, count=count, graded=graded)
        return cls(data, graded=graded is not None).plot(ax)

    def plot(self, ax=None, *, legend: bool = True) -> "PRCurveDisplay":
        ax = _axes(ax)
        for name, c in self.data.groupby("curve", sort=False):
            style = dict(marker="o", ms=3, lw=0, color="k") if name == "actual" else dict(lw=1.2)
            ax.plot(c["recall"], c["precision"], label=name, **style)
        run, topic = self.data["run"].iloc[0], self.data["topic"].iloc[0]
        kind = "graded " if self.graded else ""
        ax.set(xlabel=f"{kind}recall", ylabel=f"{kind}precision", ylim=(0, 1.02), title=f"{run}, topic {topic}")
        if legend:
            ax.legend(fontsize=7)
        return self._done(ax)


# ---------------------------------------------------------------------------- per-run scatters
def _errorbar(ax, x, y, xlo=None, xhi=None, ylo=None, yhi=None, **kw):
    # a percentile interval of constant values can miss its mean by a rounding error
    xerr = None if xlo is None else np.maximum(np.vstack([x - xlo, xhi - x]), 0.0)
    yerr = None if ylo is None else np.maximum(np.vstack([y - ylo, yhi - y]), 0.0)
    return ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="o", ms=3.5, elinewidth=0.7, capsize=0, alpha=0.85, **kw)


class PredictionDisplay(_Display):
    """A measure inferred from a metric against its actual value, per run (means over the
    run's eligible topics, 95% bootstrap intervals over topics on both axes).

    ``data``: one row per run: ``actual``, ``actual lo``, ``actual hi``, ``pred``,
    ``pred lo``, ``pred hi`` (:func:`analysis.tables.per_run_prediction`).
    """

    def __init__(self, data: "pd.DataFrame", metric: str, target: str = "P@10", threshold: int = 1):
        _check_columns(data, ["run", "actual", "pred"], "PredictionDisplay data")
        self.data, self.metric, self.target, self.threshold = data, metric, target, threshold

    @classmethod
    def from_instances(cls, instances: "pd.DataFrame", metric: str, *, target: str = "P@10", threshold=None,
                       level: float = 0.95, n_boot: int = 1000, seed: int = 0, ax=None) -> "PredictionDisplay":
        """From the instances of :func:`maxent.informativeness` (``predict`` must include ``target``)."""
        from analysis.tables import per_run_prediction

        _check_columns(instances, ["metric", "threshold", "run", "topic", "eligible", f"actual {target}",
                                   f"pred {target}"], "instances")
        t = _threshold(instances, threshold)
        inst = instances[(instances["metric"] == str(metric)) & (instances["threshold"] == t)]
        if inst.empty:
            raise ParameterError(f"metric: no instances of {metric!r} at threshold {t}; metrics: "
                                 + ", ".join(dict.fromkeys(instances["metric"])))
        data = per_run_prediction(inst, target, level=level, n_boot=n_boot, seed=seed)
        return cls(data, str(metric), target, t).plot(ax)

    def rms(self) -> float:
        from maxent.inference import rms

        return rms(self.data["actual"], self.data["pred"])

    def tau(self) -> float:
        from maxent.inference import kendall_tau

        return kendall_tau(self.data["actual"], self.data["pred"])

    def plot(self, ax=None) -> "PredictionDisplay":
        ax = _axes(ax)
        d = self.data
        _errorbar(ax, *(d[c].to_numpy() for c in ("actual", "pred", "actual lo", "actual hi", "pred lo",
                                                  "pred hi")))
        top = float(np.nanmax(d[["actual hi", "pred hi", "actual", "pred"]].to_numpy(), initial=1e-3))
        lim = [0, max(1e-3, top) * 1.05]
        ax.plot(lim, lim, "k:", lw=0.8)
        ax.set(xlim=lim, ylim=lim, xlabel=f"actual {self.target} (mean over topics)",
               ylabel=f"{self.target} inferred from {self.metric}",
               title=f"{self.metric}: RMS {self.rms():.3f}, tau {self.tau():.3f}")
        return self._done(ax)


class MetricScatterDisplay(_Display):
    """A measure (P@10) against a metric's value, per run (means over topics with 95%
    bootstrap intervals over topics).

    ``data``: one row per run: ``metric``, ``metric lo``, ``metric hi``, ``target``,
    ``target lo``, ``target hi``.
    """

    def __init__(self, data: "pd.DataFrame", metric: str, target: str = "P@10"):
        _check_columns(data, ["run", "metric", "target"], "MetricScatterDisplay data")
        self.data, self.metric, self.target = data, metric, target

    @classmethod
    def from_instances(cls, instances: "pd.DataFrame", metric: str, *, target: str = "P@10", threshold=None,
                       level: float = 0.95, n_boot: int = 1000, seed: int = 0, ax=None) -> "MetricScatterDisplay":
        """From the instances of :func:`maxent.informativeness`: the eligible lists at ``threshold``."""
        from maxent.stats import topic_bootstrap_mean

        t = _threshold(instances, threshold)
        e = instances[instances["eligible"].astype(bool) & (instances["threshold"] == t)]
        m = e[e["metric"] == str(metric)].drop_duplicates(["run", "topic"])
        if m.empty:
            raise ParameterError(f"metric: no eligible instances of {metric!r} at threshold {t}")
        kw = dict(level=level, n_boot=n_boot, seed=seed)
        a = topic_bootstrap_mean(m, "value", ["run"], **kw)
        b = topic_bootstrap_mean(e.drop_duplicates(["run", "topic"]), f"actual {target}", ["run"], **kw)
        data = a.rename(columns={"mean": "metric", "lo": "metric lo", "hi": "metric hi"})[
            ["run", "metric", "metric lo", "metric hi"]].merge(
            b.rename(columns={"mean": "target", "lo": "target lo", "hi": "target hi"})[
                ["run", "target", "target lo", "target hi"]], on="run")
        return cls(data, str(metric), target).plot(ax)

    def tau(self) -> float:
        from maxent.inference import kendall_tau

        return kendall_tau(self.data["metric"], self.data["target"])

    def plot(self, ax=None) -> "MetricScatterDisplay":
        ax = _axes(ax)
        d = self.data
        _errorbar(ax, *(d[c].to_numpy() for c in ("metric", "target", "metric lo", "metric hi", "target lo",
                                                  "target hi")))
        ax.set(xlabel=f"{self.metric} (mean over topics)", ylabel=f"{self.target} (mean over topics)",
               title=f"{self.metric}: Kendall tau with {self.target} {self.tau():.3f}")
        return self._done(ax)


# ---------------------------------------------------------------------------- means per metric
class RMSDisplay(_Display):
    """Mean RMS of the inferred PR curves per metric (one series per threshold), with 95%
    bootstrap intervals over topics (:func:`analysis.tables.rms_by_metric`)."""

    def __init__(self, data: "pd.DataFrame", column: str = "rms"):
        _check_columns(data, ["metric", "threshold", "mean", "lo", "hi"], "RMSDisplay data")
        self.data, self.column = data, column

    @classmethod
    def from_instances(cls, instances: "pd.DataFrame", *, column: str = "rms", level: float = 0.95,
                       n_boot: int = 1000, seed: int = 0, ax=None) -> "RMSDisplay":
        from analysis.tables import rms_by_metric

        return cls(rms_by_metric(instances, column=column, level=level, n_boot=n_boot, seed=seed), column).plot(ax)

    def plot(self, ax=None) -> "RMSDisplay":
        ax = _axes(ax)
        metrics = list(dict.fromkeys(self.data["metric"]))
        thresholds = list(dict.fromkeys(self.data["threshold"]))
        width = 0.7 / max(len(thresholds), 1)
        for k, t in enumerate(thresholds):
            d = self.data[self.data["threshold"] == t].set_index("metric").reindex(metrics)
            x = np.arange(len(metrics)) + (k - (len(thresholds) - 1) / 2) * width
            _errorbar(ax, x, d["mean"].to_numpy(), ylo=d["lo"].to_numpy(), yhi=d["hi"].to_numpy(),
                      label=f"relevance >= {t}", color=f"C{k}")
        ax.set_xticks(np.arange(len(metrics)), metrics)
        ax.set(ylabel=f"mean {'graded ' if 'graded' in self.column else ''}PR-curve RMS (95% CI over topics)",
               xlabel="metric inferred from")
        ax.legend(fontsize=7)
        return self._done(ax)


class GSweepDisplay(_Display):
    """Mean RMS of the PR curves inferred from GAP(g) across the g grid at one threshold,
    with the reference metrics as horizontal lines and 95% bootstrap intervals over topics
    as a band (GAP) and dashed bounds (references).

    ``data``: the sweep table of :func:`analysis.gap_thresholds.gap_thresholds` at one
    threshold (``metric``, ``g``, ``reduces_to``, ``<column>``, ``<column> lo``, ``<column> hi``).
    """

    def __init__(self, data: "pd.DataFrame", threshold: int, column: str = "rms"):
        _check_columns(data, ["metric", "g", "reduces_to", column], "GSweepDisplay data")
        self.data, self.threshold, self.column = data, threshold, column

    @classmethod
    def from_sweep(cls, sweep: "pd.DataFrame", threshold=None, *, column: str = "rms", ax=None) -> "GSweepDisplay":
        """From the ``sweep`` frame of :func:`analysis.gap_thresholds.gap_thresholds`; ``column``:
        ``rms``, ``mae`` or ``graded rms`` (the graded PR curve, the same at every threshold)."""
        _check_columns(sweep, ["threshold", column], "sweep")
        t = _threshold(sweep, threshold)
        return cls(sweep[sweep["threshold"] == t].reset_index(drop=True), t, column).plot(ax)

    def plot(self, ax=None) -> "GSweepDisplay":
        ax = _axes(ax)
        col, lo, hi = self.column, f"{self.column} lo", f"{self.column} hi"
        band = lo in self.data and hi in self.data
        gap = self.data[self.data["metric"] == "GAP"].reset_index(drop=True)
        x = np.arange(len(gap))
        ax.plot(x, gap[col], "o-", ms=3.5, color="C0", label="GAP(g)")
        if band:
            ax.fill_between(x, gap[lo], gap[hi], color="C0", alpha=0.2, lw=0, label="95% CI over topics")
        for k, (_, r) in enumerate(self.data[self.data["metric"] != "GAP"].iterrows()):
            if not np.isfinite(r[col]):
                continue
            ax.axhline(r[col], ls="--", color=f"C{k + 1}", label=r["metric"])
            if band:
                for v in (r[lo], r[hi]):
                    ax.axhline(v, ls=":", lw=0.7, color=f"C{k + 1}")
        marks = gap[gap["reduces_to"].fillna("") != ""]
        ax.plot(marks.index, marks[col], "s", mfc="none", ms=10, color="k", label="= AP at one threshold")
        step = max(1, len(gap) // 6)
        labels = ["(" + str(g).replace(",", ", ") + ")" for g in gap["g"]]
        ax.set_xticks(x[::step], labels[::step], rotation=45, ha="right", fontsize=7)
        graded = "graded" in col
        stat = col.replace("graded ", "").upper()
        ax.set(xlabel="g = (g1, g2, ...)", ylabel=f"mean {stat} of inferred " + ("graded PR curve" if graded else "PR curve"),
               title="graded PR curve" if graded else f"PR curve at relevance >= {self.threshold}")
        ax.legend(fontsize=7)
        return self._done(ax)


class ASLDisplay(_Display):
    """Achieved significance level of Sakai's paired bootstrap test for every pair of runs,
    sorted, one curve per metric; an inset for the pairs among the top-k runs.

    ``data``: the ``asl`` frame of :func:`analysis.gap_thresholds.gap_thresholds` (``metric``,
    ``rank``, ``asl``, ``top<k>``).
    """

    def __init__(self, data: "pd.DataFrame", top_k: int = 10, alpha: float = 0.05):
        _check_columns(data, ["metric", "rank", "asl", f"top{top_k}"], "ASLDisplay data")
        self.data, self.top_k, self.alpha = data, top_k, alpha

    @classmethod
    def from_asl(cls, asl: "pd.DataFrame", *, top_k: int = 10, alpha: float = 0.05, ax=None) -> "ASLDisplay":
        return cls(asl, top_k, alpha).plot(ax)

    def plot(self, ax=None) -> "ASLDisplay":
        ax = _axes(ax, (6, 4.5))
        inner = ax.inset_axes([0.12, 0.45, 0.4, 0.4])
        for metric, d in self.data.groupby("metric", sort=False):
            ax.plot(d["rank"], d["asl"], lw=1.2, label=metric)
            t = d[d[f"top{self.top_k}"].astype(bool)]
            inner.plot(np.arange(1, len(t) + 1), np.sort(t["asl"].to_numpy()), lw=1)
        ax.axhline(self.alpha, color="k", lw=0.6, ls=":")
        inner.axhline(self.alpha, color="k", lw=0.6, ls=":")
        inner.set_title(f"top {self.top_k} runs", fontsize=7)
        inner.tick_params(labelsize=6)
        ax.set(xlabel="run pairs sorted by ASL", ylabel="achieved significance level")
        ax.legend(fontsize=7, loc="lower right")
        self.inset_ = inner
        return self._done(ax)
