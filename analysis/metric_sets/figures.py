"""The figures of ``python -m analysis.metric_sets`` (matplotlib on Agg), each with the CSV of
what it draws: the RMS of predicting each metric from each set (a heat map) and the greedy
selection's curves."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis import _cli

__all__ = ["heatmap", "greedy_curve"]


def heatmap(pred: pd.DataFrame, pool, path: Path) -> Path:
    """fig_heatmap.png: given set (rows) x predicted metric (columns), RMS over lists; blank
    where the metric is in the set or cannot be predicted from it."""
    plt = _cli.pyplot()
    sets = list(dict.fromkeys(pred["set"]))
    grid = pred.pivot_table(index="set", columns="target", values="rms (topics)", aggfunc="first")
    grid = grid.reindex(index=sets, columns=[x for x in pool if x in grid.columns])
    _cli.atomic_write_csv(path.with_suffix(".csv"), grid.reset_index())
    h = 1.2 + 0.22 * max(len(sets), 1)
    w = 2.6 + 0.75 * max(grid.shape[1], 1)
    fig, ax = plt.subplots(figsize=(w, h))
    values = grid.to_numpy(dtype=float)
    im = ax.imshow(np.ma.masked_invalid(values), aspect="auto", cmap="viridis_r")
    ax.set_xticks(range(grid.shape[1]), grid.columns, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(sets)), sets, fontsize=7)
    ax.set_xlabel("predicted metric")
    ax.set_ylabel("given set")
    ax.set_title("RMS of the predicted metric over lists, from each set's values", fontsize=9)
    fig.colorbar(im, ax=ax, label="RMS")
    _cli.save_figure(fig, path)
    return path


def greedy_curve(greedy: pd.DataFrame, path: Path) -> Path:
    """fig_greedy.png: the criterion's value at each size of the greedy selection, one panel
    per criterion, each point labelled with the metric added."""
    plt = _cli.pyplot()
    _cli.atomic_write_csv(path.with_suffix(".csv"), greedy)
    criteria = list(dict.fromkeys(greedy["criterion"])) or ["pr rms"]
    fig, axes = plt.subplots(1, len(criteria), figsize=(4.2 * len(criteria), 3.4), squeeze=False)
    for ax, c in zip(axes[0], criteria):
        g = greedy[greedy["criterion"] == c]
        ax.plot(g["size"], g["value"], marker="o")
        if c == "pr rms" and len(g):
            ax.fill_between(g["size"], g["pr rms lo"], g["pr rms hi"], alpha=0.2, label="95% interval over topics")
            ax.legend(fontsize=7)
        for r in g.itertuples():
            ax.annotate(f"+ {r.added}", (r.size, r.value), textcoords="offset points", xytext=(4, 4), fontsize=7)
        ax.set_xticks(list(g["size"]))
        ax.margins(x=0.25, y=0.15)
        ax.set_xlabel("metrics in the set")
        ax.set_ylabel({"pr rms": "mean PR-curve RMS", "pool rms": "mean RMS of the other metrics"}.get(c, c))
        ax.set_title(f"greedy selection by {c}", fontsize=9)
    fig.subplots_adjust(wspace=0.4)
    _cli.save_figure(fig, path)
    return path
