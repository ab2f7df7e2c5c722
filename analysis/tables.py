"""The papers' tables of the informativeness analysis, from the instance table of
:func:`maxent.informativeness`: :func:`summarize` (Yilmaz & Robertson 2010, Table 1 layout;
``summary.csv``), :func:`prediction_table` (``informativeness.csv``), and what the figures of
:mod:`analysis.plots` draw (:func:`rms_by_metric`, :func:`per_run_prediction`)."""
from __future__ import annotations

import pandas as pd

from maxent.informativeness import Settings, graded_summary
from maxent.stats import topic_bootstrap_mean

__all__ = ["summarize", "prediction_table", "rms_by_metric", "per_run_prediction"]


def _p10(settings: Settings) -> str:
    return "P@10" if "P@10" in settings.predict else settings.predict[0]


def summarize(inst: pd.DataFrame, settings: Settings) -> pd.DataFrame:
    """Yilmaz & Robertson (2010), Table 1 layout: per metric and threshold, mean RMS / MAE of
    the inferred PR curves, and P@10 prediction RMS per topic, RMS and Kendall tau of per-run
    means; solver statuses counted."""
    from maxent.inference import kendall_tau, rms
    from maxent.solver import HAS_SOLUTION, Status

    solved = {s.value for s in HAS_SOLUTION}
    rows = []
    p10 = _p10(settings)
    for (metric, t), g in inst.groupby(["metric", "threshold"], sort=False):
        e = g[g["eligible"]]
        runs = e.groupby("run")[[f"actual {p10}", f"pred {p10}"]].mean()
        rows.append({
            "metric": metric, "threshold": t, "instances": len(e),
            "rms": e["rms"].mean(), "mae": e["mae"].mean(),
            f"{p10} rms (topics)": rms(e[f"actual {p10}"], e[f"pred {p10}"]),
            f"{p10} rms (runs)": rms(runs.iloc[:, 0], runs.iloc[:, 1]),
            f"{p10} tau (runs)": kendall_tau(runs.iloc[:, 0], runs.iloc[:, 1]),
            "solved": int(g["status"].isin(solved).sum()),
            "undefined": int((g["status"] == Status.UNDEFINED.value).sum()),
            "not solved": int((~g["status"].isin(solved | {Status.UNDEFINED.value})).sum()),
            **(graded_summary(g, "graded PR ") if "graded rms" in g else {}),
        })
    return pd.DataFrame(rows)


def prediction_table(inst: pd.DataFrame, settings: Settings) -> pd.DataFrame:
    """RMS of predicting metric X (columns) from metric Y's value (rows), per threshold."""
    from maxent.inference import rms

    rows = []
    for (metric, t), g in inst.groupby(["metric", "threshold"], sort=False):
        e = g[g["eligible"]]
        rows.append({"from": metric, "threshold": t,
                     **{x: rms(e[f"actual {x}"], e[f"pred {x}"]) for x in settings.predict}})
    return pd.DataFrame(rows)


def rms_by_metric(inst: pd.DataFrame, *, column: str = "rms", level: float = 0.95, n_boot: int = 1000,
                  seed: int = 0) -> pd.DataFrame:
    """Mean PR-curve RMS (Yilmaz & Robertson 2010, Table 1) per metric and threshold over the
    eligible instances, with its bootstrap interval over topics (:func:`topic_bootstrap_mean`)."""
    return topic_bootstrap_mean(inst[inst["eligible"].astype(bool)], column, ["metric", "threshold"],
                                level=level, n_boot=n_boot, seed=seed)


def per_run_prediction(inst: pd.DataFrame, target: str = "P@10", *, level: float = 0.95, n_boot: int = 1000,
                       seed: int = 0) -> pd.DataFrame:
    """Per (metric, threshold, run): the actual and the predicted ``target`` averaged over the
    run's eligible topics, each with its bootstrap interval over topics (``actual``,
    ``actual lo``, ``actual hi``, ``pred``, ``pred lo``, ``pred hi``)."""
    e = inst[inst["eligible"].astype(bool)]
    keys = ["metric", "threshold", "run"]
    a = topic_bootstrap_mean(e, f"actual {target}", keys, level=level, n_boot=n_boot, seed=seed)
    p = topic_bootstrap_mean(e, f"pred {target}", keys, level=level, n_boot=n_boot, seed=seed)
    a = a.rename(columns={"mean": "actual", "lo": "actual lo", "hi": "actual hi"})
    p = p.rename(columns={"mean": "pred", "lo": "pred lo", "hi": "pred hi"})
    return a.drop(columns=["n"]).merge(p.drop(columns=["topics"]), on=keys)
