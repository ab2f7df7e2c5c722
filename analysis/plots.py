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
           "ASLDisplay", "binary_threshold", "short_g"]


def _axes(ax, size=(4.5, 4)):
    import matplotlib.pyplot as plt

    if ax is None:
        # constrained: the legend drawn beside the axes stays on the canvas
        fig, ax = plt.subplots(figsize=size, layout="constrained")
    return ax


def binary_threshold(max_grade: int, thresholds=None) -> int:
    """The relevance level where a collection's binary measures are read: grade >=
    ceil(top grade / 2), so 1 on the 0-2 scales of Robust 2003 and TREC-COVID and 2 on TREC DL's
    0-3 scale (grade 1 is "related"), the levels of the committed tables (analysis.evidence).
    Given the ``thresholds`` scored, that level if scored, else the lowest, as analysis.report reads."""
    level = max(1, -(-int(max_grade) // 2))
    if thresholds is None:
        return level
    scored = sorted(int(t) for t in thresholds)
    return level if level in scored else scored[0]


def short_g(g) -> str:
    """A tick label of threshold probabilities: ``(0.33, 0.67)`` for 0.333333333333,0.666666666667."""
    values = [float(x) for x in g.split(",")] if isinstance(g, str) else [float(x) for x in g]
    return "(" + ", ".join("%.2g" % x for x in values) + ")"


def outside_legend(ax, of=None, **kw):
    """The legend of the artists of ``of`` (default ``ax``) beside ``ax``, on the right, where it
    can cover no data."""
    return ax.legend(*(of or ax).get_legend_handles_labels(), loc="upper left", bbox_to_anchor=(1.02, 1.0),
                     borderaxespad=0.0, **{"fontsize": 7, **kw})


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
                 ax=None, legend: bool = True) -> "PRCurveDisplay":
        """Rank ``run`` on ``topic``, infer from each metric's value and draw the curves.

        ``qrels``, ``run``: anything :mod:`maxent.inputs` reads (paths, objects, frames,
        dicts). ``graded`` = g or ``"uniform"``: graded PR curves, from graded metrics.
        """
        from maxent.informativeness import pr_curves, topic_lists

        lists = topic_lists(qrels, run, topic, depth=depth, score_precision=score_precision)
        data = pr_curves(lists, metrics, threshold=threshold, count=count, graded=graded)
        return cls(data, graded=graded is not None).plot(ax, legend=legend)

    def plot(self, ax=None, *, legend: bool = True) -> "PRCurveDisplay":
        """``legend``: beside the axes (False: none, for a figure legend shared by panels)."""
        ax = _axes(ax)
        for name, c in self.data.groupby("curve", sort=False):
            style = dict(marker="o", ms=3, lw=0, color="k") if name == "actual" else dict(lw=1.2)
            ax.plot(c["recall"], c["precision"], label=name, **style)
        run, topic = self.data["run"].iloc[0], self.data["topic"].iloc[0]
        kind = "graded " if self.graded else ""
        ax.set(xlabel=f"{kind}recall", ylabel=f"{kind}precision", ylim=(0, 1.02), title=f"{run}, topic {topic}")
        if legend:
            outside_legend(ax)
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
    ``pred lo``, ``pred hi`` (:func:`analysis.tables.per_run_prediction`). ``stats``: the
    RMS and Kendall tau of the per-run means as ``summary.csv`` gives them (``rms``, ``tau``).
    """

    def __init__(self, data: "pd.DataFrame", metric: str, target: str = "P@10", threshold: int = 1,
                 stats: dict | None = None):
        _check_columns(data, ["run", "actual", "pred"], "PredictionDisplay data")
        self.data, self.metric, self.target, self.threshold = data, metric, target, threshold
        self.stats = stats

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
        return cls(data, str(metric), target, t, _table_stats(inst, target)).plot(ax)

    def rms(self) -> float:
        from maxent.inference import rms

        return self.stats["rms"] if self.stats else rms(self.data["actual"], self.data["pred"])

    def tau(self) -> float:
        from maxent.inference import kendall_tau

        return self.stats["tau"] if self.stats else kendall_tau(self.data["actual"], self.data["pred"])

    def limit(self) -> float:
        """The upper end of both axes: every point and interval, with a margin."""
        d = self.data
        top = float(np.nanmax(d[[c for c in ("actual hi", "pred hi", "actual", "pred") if c in d]].to_numpy(),
                              initial=1e-3))
        return max(1e-3, top) * 1.05

    def plot(self, ax=None, *, limit: float | None = None) -> "PredictionDisplay":
        """``limit``: the upper end of both axes (default :meth:`limit`; one for panels sharing axes)."""
        ax = _axes(ax)
        d = self.data
        _errorbar(ax, *(d[c].to_numpy() for c in ("actual", "pred", "actual lo", "actual hi", "pred lo",
                                                  "pred hi")))
        lim = [0, self.limit() if limit is None else limit]
        ax.axline((0, 0), slope=1, color="k", ls=":", lw=0.8)
        ax.set(xlim=lim, ylim=lim, xlabel=f"actual {self.target} (mean over topics)",
               ylabel=f"{self.target} inferred from {self.metric}",
               title=f"{self.metric}: RMS {self.rms():.3f}, tau {self.tau():.3f}")
        return self._done(ax)


def _table_stats(inst: "pd.DataFrame", target: str) -> dict | None:
    """RMS and Kendall tau of the per-run means of one metric and threshold, by the function that
    writes ``summary.csv``: a tie between two runs' means must count in the title as in the table."""
    from types import SimpleNamespace

    from analysis.tables import summarize

    if "status" not in inst:            # not an instance table of maxent.informativeness
        return None
    row = summarize(inst, SimpleNamespace(predict=(target,))).iloc[0]
    return {"rms": float(row[f"{target} rms (runs)"]), "tau": float(row[f"{target} tau (runs)"])}


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
                       n_boot: int = 1000, seed: int = 0, ax=None, legend: bool = True) -> "RMSDisplay":
        from analysis.tables import rms_by_metric

        return cls(rms_by_metric(instances, column=column, level=level, n_boot=n_boot, seed=seed), column).plot(
            ax, legend=legend)

    def plot(self, ax=None, *, legend: bool = True) -> "RMSDisplay":
        """``legend``: beside the axes (False: none, for a figure legend)."""
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
        if legend:
            outside_legend(ax)
        return self._done(ax)


class GSweepDisplay(_Display):
    """Mean RMS of the PR curves inferred from GAP(g) across the g grid at one threshold,
    against the reference metrics.

    With two thresholds g is (1 - g2, g2), one line over g2 with its 95% bootstrap band over
    topics, the references as horizontal lines with dashed bounds. With three, the grid is a
    triangle (a ternary plot: corner j is all mass on threshold j), each g a point coloured by
    its mean, the colour scale centred on the reference's. With more, the g settings are points
    sorted by their mean, with intervals: no order of a simplex grid makes a line meaningful.

    ``data``: the sweep table of :func:`analysis.gap_thresholds.gap_thresholds` at one
    threshold (``metric``, ``g``, ``reduces_to``, ``<column>``, ``<column> lo``, ``<column> hi``).
    """

    def __init__(self, data: "pd.DataFrame", threshold: int, column: str = "rms", *, binary: bool = False):
        _check_columns(data, ["metric", "g", "reduces_to", column], "GSweepDisplay data")
        self.data, self.threshold, self.column, self.binary = data, threshold, column, binary

    @classmethod
    def from_sweep(cls, sweep: "pd.DataFrame", threshold=None, *, column: str = "rms", binary: bool = False,
                   ax=None, legend: bool = True) -> "GSweepDisplay":
        """From the ``sweep`` frame of :func:`analysis.gap_thresholds.gap_thresholds`; ``column``:
        ``rms``, ``mae`` or ``graded rms`` (the graded PR curve, the same at every threshold);
        ``binary``: the title says ``threshold`` is the collection's binary level."""
        _check_columns(sweep, ["threshold", column], "sweep")
        t = _threshold(sweep, threshold)
        return cls(sweep[sweep["threshold"] == t].reset_index(drop=True), t, column,
                   binary=binary).plot(ax, legend=legend)

    def g_values(self) -> np.ndarray:
        """(settings, c) array: the g of every GAP row."""
        gap = self.data[self.data["metric"] == "GAP"]
        return np.array([[float(x) for x in str(g).split(",")] for g in gap["g"]]).reshape(len(gap), -1)

    def plot(self, ax=None, *, legend: bool = True) -> "GSweepDisplay":
        """``legend``: beside the axes (False: none, for a figure legend shared by panels)."""
        ax = _axes(ax, (5.2, 4))
        c = self.g_values().shape[1]
        if c == 3:
            self._ternary(ax)
        elif c > 3:
            self._sorted(ax)
        else:
            self._line(ax)
        graded = "graded" in self.column
        at = f"PR curve at relevance >= {self.threshold}" + (" (binary level)" if self.binary else "")
        ax.set_title("graded PR curve" if graded else at, fontsize=10)
        if legend:
            outside_legend(ax)
        return self._done(ax)

    def _stat(self) -> str:
        graded = "graded" in self.column
        return (f"mean {self.column.replace('graded ', '').upper()} of inferred "
                + ("graded PR curve" if graded else "PR curve"))

    def _references(self):
        col = self.column
        refs = self.data[self.data["metric"] != "GAP"]
        return [(r["metric"], r[col], r.get(f"{col} lo"), r.get(f"{col} hi")) for _, r in refs.iterrows()
                if np.isfinite(r[col])]

    def _line(self, ax) -> None:
        col, lo, hi = self.column, f"{self.column} lo", f"{self.column} hi"
        band = lo in self.data and hi in self.data
        gap = self.data[self.data["metric"] == "GAP"].reset_index(drop=True)
        g = self.g_values()
        # two thresholds: the grid is one path, g2 from 0 to 1, so a line joins neighbours
        x = g[:, -1] if g.shape[1] == 2 else np.arange(len(gap), dtype=float)
        ax.plot(x, gap[col], "o-", ms=3.5, color="C0", label="GAP(g)")
        if band:
            ax.fill_between(x, gap[lo], gap[hi], color="C0", alpha=0.2, lw=0, label="95% CI over topics")
        for k, (name, v, vlo, vhi) in enumerate(self._references()):
            ax.axhline(v, ls="--", color=f"C{k + 1}", label=name)
            if band:
                for b in (vlo, vhi):
                    ax.axhline(b, ls=":", lw=0.7, color=f"C{k + 1}")
        marks = (gap["reduces_to"].fillna("") != "").to_numpy()
        ax.plot(x[marks], gap[col][marks], "s", mfc="none", ms=10, color="k", label="= AP at one threshold")
        ax.set(xlabel="g2, the weight of relevance >= 2 (g1 = 1 - g2)" if g.shape[1] == 2 else "g setting",
               ylabel=self._stat())

    def _ternary(self, ax) -> None:
        from matplotlib.colors import Normalize, TwoSlopeNorm

        col = self.column
        gap = self.data[self.data["metric"] == "GAP"].reset_index(drop=True)
        g = self.g_values()
        h = np.sqrt(3) / 2
        x, y = g[:, 1] + g[:, 2] / 2, g[:, 2] * h      # corners: g1 = 1 (0, 0), g2 = 1 (1, 0), g3 = 1 (.5, h)
        ax.plot([0, 1, 0.5, 0], [0, 0, h, 0], color="0.6", lw=0.8, zorder=1)
        v = gap[col].to_numpy(float)
        refs = self._references()
        lo, hi = float(np.nanmin(v, initial=np.inf)), float(np.nanmax(v, initial=-np.inf))
        ref = refs[0] if refs else None
        if ref is not None and lo < ref[1] < hi:
            norm = TwoSlopeNorm(vcenter=ref[1], vmin=lo, vmax=hi)  # blue: below the reference's mean
        else:
            norm = Normalize(vmin=lo if np.isfinite(lo) else 0, vmax=hi if np.isfinite(hi) else 1)
        ok = np.isfinite(v)
        points = ax.scatter(x[ok], y[ok], c=v[ok], cmap="coolwarm", norm=norm, s=90, edgecolors="k",
                            linewidths=0.4, zorder=3, label="GAP(g)")
        marks = (gap["reduces_to"].fillna("") != "").to_numpy()
        ax.scatter(x[marks], y[marks], marker="s", s=260, facecolors="none", edgecolors="k", linewidths=0.8,
                   zorder=2, label="= AP at one threshold")
        if len(gap) <= 28:          # room for a value under every point
            for xi, yi, vi, m in zip(x[ok], y[ok], v[ok], marks[ok]):
                ax.annotate(f"{vi:.3f}", (xi, yi), xytext=(0, -11 if m else -8), textcoords="offset points",
                            ha="center", va="top", fontsize=6)
        for (cx, cy, va), j in zip(((0, 0, "top"), (1, 0, "top"), (0.5, h, "bottom")), (1, 2, 3)):
            ax.annotate(f"g{j} = 1", (cx, cy), xytext=(0, -20 if va == "top" else 12), textcoords="offset points",
                        ha="center", va=va, fontsize=7)
        ax.set(xlim=(-0.12, 1.12), ylim=(-0.16, h + 0.1), aspect="equal")
        ax.set_axis_off()
        bar = ax.figure.colorbar(points, ax=ax, shrink=0.75, pad=0.02)
        label = self._stat()
        if ref is not None:
            bar.ax.axhline(ref[1], color="k", lw=1)
            label += f"\n(line: {ref[0]}, {ref[1]:.3f})"
        bar.set_label(label, fontsize=7)
        bar.ax.tick_params(labelsize=6)
        self.colorbar_ = bar

    def _sorted(self, ax) -> None:
        col, lo, hi = self.column, f"{self.column} lo", f"{self.column} hi"
        gap = self.data[self.data["metric"] == "GAP"].reset_index(drop=True)
        gap = gap[np.isfinite(gap[col])].sort_values(col, kind="stable").reset_index(drop=True)
        x = np.arange(len(gap), dtype=float)
        y = gap[col].to_numpy(float)
        if lo in gap and hi in gap:
            _errorbar(ax, x, y, ylo=gap[lo].to_numpy(float), yhi=gap[hi].to_numpy(float), color="C0",
                      label="GAP(g), 95% CI over topics")
        else:
            ax.plot(x, y, "o", ms=3.5, color="C0", label="GAP(g)")
        for k, (name, v, _, _) in enumerate(self._references()):
            ax.axhline(v, ls="--", color=f"C{k + 1}", label=name)
        marks = (gap["reduces_to"].fillna("") != "").to_numpy()
        ax.plot(x[marks], y[marks], "s", mfc="none", ms=10, color="k", label="= AP at one threshold")
        ax.set_xticks(x, [short_g(g) for g in gap["g"]], rotation=90, fontsize=6)
        ax.set(xlabel="g, sorted by the mean", ylabel=self._stat())


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
    def from_asl(cls, asl: "pd.DataFrame", *, top_k: int = 10, alpha: float = 0.05, ax=None, top_ax=None,
                 legend: bool = True) -> "ASLDisplay":
        return cls(asl, top_k, alpha).plot(ax, top_ax=top_ax, legend=legend)

    def plot(self, ax=None, *, top_ax=None, legend: bool = True) -> "ASLDisplay":
        """All pairs on ``ax``, the pairs among the top-k runs on ``top_ax`` (``inset_``): with no
        ``ax``, a new figure of both side by side; with ``ax`` alone, an inset of it."""
        import matplotlib.pyplot as plt

        if ax is None:
            fig, (ax, top_ax) = plt.subplots(1, 2, figsize=(9, 4), sharey=True, layout="constrained")
        inner = ax.inset_axes([0.12, 0.45, 0.4, 0.4]) if top_ax is None else top_ax
        for metric, d in self.data.groupby("metric", sort=False):
            ax.plot(d["rank"], d["asl"], lw=1.2, label=metric)
            t = d[d[f"top{self.top_k}"].astype(bool)]
            inner.plot(np.arange(1, len(t) + 1), np.sort(t["asl"].to_numpy()), lw=1)
        ax.axhline(self.alpha, color="k", lw=0.6, ls=":")
        inner.axhline(self.alpha, color="k", lw=0.6, ls=":")
        ax.set(xlabel="run pairs sorted by ASL", ylabel="achieved significance level")
        if top_ax is None:
            inner.set_title(f"top {self.top_k} runs", fontsize=7)
            inner.tick_params(labelsize=6)
        else:
            inner.set(xlabel=f"pairs of the top {self.top_k} runs sorted by ASL",
                      title=f"among the top {self.top_k} runs (by mean)")
        if legend:
            outside_legend(inner if top_ax is not None else ax, of=ax)
        self.inset_ = inner
        return self._done(ax)
