"""The tables of ``python -m analysis.metric_sets`` from its instances (one row per set and
list, :func:`analysis.metric_sets.compute.solve_set`) and the actual values
(:func:`analysis.metric_sets.compute.actual_values`). Statistics are :mod:`maxent.stats`' and
the one verdict rule of the project (:func:`verdict`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.metric_sets.compute import JOIN, set_members
from maxent.solver import Status

__all__ = ["STATUSES", "kendall", "predictions", "sets_table", "common_targets", "greedy", "greedy_table",
           "topic_means", "verdict", "marginal"]

STATUSES = tuple(s.value for s in Status)


def kendall(a, b) -> float:
    """Kendall's tau-b of two score vectors (``scipy.stats.kendalltau``); NaN with fewer than
    two finite pairs."""
    from scipy.stats import kendalltau

    a, b = np.asarray(a, float), np.asarray(b, float)
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 2:
        return float("nan")
    return float(kendalltau(a[ok], b[ok]).statistic)


def _rms(a, b) -> float:
    from maxent.inference import rms

    return rms(a, b)


def predictions(inst: pd.DataFrame, actual: pd.DataFrame, pool) -> pd.DataFrame:
    """predictions.csv: per (set, predicted metric outside it): the lists averaged over (the
    set's eligible ones), RMS of the prediction over those lists (``rms (topics)``), and of the
    systems' means over their lists (``rms (runs)``), Kendall tau between the systems ranked by
    the predicted and by the actual mean (``tau (runs)``). Metrics the set cannot predict
    (graded ones from binary sets) have no row."""
    m = inst[inst["eligible"].astype(bool)].merge(actual, on=["run", "topic"], how="left")
    rows = []
    for name, g in m.groupby("set", sort=False):
        for x in pool:
            if x in set_members(name) or g[f"pred {x}"].isna().all():
                continue
            e = g[g[f"pred {x}"].notna()]
            runs = e.groupby("run")[[f"actual {x}", f"pred {x}"]].mean()
            rows.append({"set": name, "size": int(g["size"].iloc[0]), "target": x, "lists": len(e),
                         "rms (topics)": _rms(e[f"actual {x}"], e[f"pred {x}"]),
                         "rms (runs)": _rms(runs.iloc[:, 0], runs.iloc[:, 1]),
                         "tau (runs)": kendall(runs.iloc[:, 1], runs.iloc[:, 0]), "runs": len(runs)})
    return pd.DataFrame(rows, columns=["set", "size", "target", "lists", "rms (topics)", "rms (runs)",
                                       "tau (runs)", "runs"])


def common_targets(pred: pd.DataFrame, pool) -> list[str]:
    """The pool metrics every set that leaves them out predicts: the targets over which sets of
    binary and graded metrics are compared alike."""
    sets = pred["set"].unique() if len(pred) else []
    have = set(zip(pred["set"], pred["target"]))
    return [x for x in pool if all((s, x) in have for s in sets if x not in set_members(s))]


def sets_table(inst: pd.DataFrame, pred: pd.DataFrame, pool, *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """sets.csv: per set: its size, ``instances`` (eligible lists), mean PR-curve RMS with a
    percentile bootstrap interval over topics (``pr rms``, ``pr rms lo``, ``pr rms hi``), mean
    MAE, ``pool rms``: the mean over :func:`common_targets` outside the set of their
    ``rms (topics)``, and the lists of each solver status."""
    from maxent.stats import topic_bootstrap_mean

    e = inst[inst["eligible"].astype(bool)]
    boot = topic_bootstrap_mean(e, "rms", ["set"], n_boot=n_boot, seed=seed).set_index("set")
    common = common_targets(pred, pool)
    rows = []
    for name, g in inst.groupby("set", sort=False):
        members = set_members(name)
        p = pred[(pred["set"] == name) & pred["target"].isin([x for x in common if x not in members])]
        status = g["status"].astype(str)
        b = boot.loc[name] if name in boot.index else None
        rows.append({"set": name, "size": int(g["size"].iloc[0]), "lists": len(g),
                     "instances": int(g["eligible"].astype(bool).sum()),
                     "pr rms": np.nan if b is None else b["mean"], "pr rms lo": np.nan if b is None else b["lo"],
                     "pr rms hi": np.nan if b is None else b["hi"],
                     "pr mae": g.loc[g["eligible"].astype(bool), "mae"].mean(),
                     "pool rms": p["rms (topics)"].mean() if len(p) else np.nan, "pool targets": len(p),
                     **{s: int((status == s).sum()) for s in STATUSES},
                     "not solved": int((~status.isin({"optimal", "boundary", "undefined"})).sum())})
    return pd.DataFrame(rows)


def greedy(values: dict, pool, max_size: int) -> list[tuple[int, str, str, float]]:
    """Forward selection: from the empty set, add at each step the pool metric whose set has the
    lowest ``values[set name]`` (ties: the first in pool order; sets without a finite value are
    skipped). Returns (size, set name, metric added, value) per step, at most ``max_size``."""
    chosen: list[str] = []
    steps = []
    for size in range(1, max_size + 1):
        best = None
        for x in pool:
            if x in chosen:
                continue
            name = JOIN.join(m for m in pool if m in chosen or m == x)
            v = values.get(name, np.nan)
            if np.isfinite(v) and (best is None or v < best[1]):
                best = (x, v, name)
        if best is None:
            break
        chosen.append(best[0])
        steps.append((size, best[2], best[0], float(best[1])))
    return steps


def greedy_table(sets: pd.DataFrame, pool, max_size: int) -> pd.DataFrame:
    """greedy.csv: :func:`greedy` by PR-curve RMS and by the pool RMS of :func:`sets_table`."""
    rows = []
    for criterion, column in (("pr rms", "pr rms"), ("pool rms", "pool rms")):
        values = dict(zip(sets["set"], sets[column]))
        for size, name, added, v in greedy(values, pool, max_size):
            r = sets[sets["set"] == name].iloc[0]
            rows.append({"criterion": criterion, "size": size, "set": name, "added": added, "value": v,
                         "pr rms": r["pr rms"], "pr rms lo": r["pr rms lo"], "pr rms hi": r["pr rms hi"],
                         "pool rms": r["pool rms"]})
    return pd.DataFrame(rows, columns=["criterion", "size", "set", "added", "value", "pr rms", "pr rms lo",
                                       "pr rms hi", "pool rms"])


def topic_means(frame: pd.DataFrame, column: str) -> pd.Series:
    """Per topic, ``T * sum_t / N`` of ``column`` over its lists: the mean over topics is the
    mean over lists (as :mod:`analysis.significance`)."""
    s = frame.groupby("topic")[column].sum()
    return s * len(s) / len(frame)


def verdict(a: str, b: str, diff: float, p_holm: float, mde: float, alpha: float) -> str:
    """The project's rule: decided when the Holm-adjusted paired t-test p is below alpha (the
    verdict names the lower of a and b, diff = a - b), else undecided with the family's minimum detectable
    effect."""
    if p_holm < alpha:
        return f"{a if diff < 0 else b} lower"
    return f"undecided (MDE {mde:.4f})"


def marginal(inst: pd.DataFrame, pool, *, alpha: float = 0.05, power: float = 0.8, n_boot: int = 1000,
             seed: int = 0) -> pd.DataFrame:
    """marginal.csv: for every set S and pool metric m outside it whose set S + m was solved,
    the paired t-test over topics of the PR-curve RMS of S + m against S, on the lists eligible
    for both; Holm over every row, the family's MDE and :func:`verdict`."""
    from maxent.stats import adjust, bootstrap_ci, family_mde, paired_tests

    e = inst[inst["eligible"].astype(bool)]
    by_set = {name: g.set_index(["run", "topic"])["rms"] for name, g in e.groupby("set", sort=False)}
    rows = []
    for name in by_set:
        members = set_members(name)
        for m in pool:
            bigger = JOIN.join(x for x in pool if x in members or x == m)
            if m in members or bigger not in by_set:
                continue
            both = pd.concat([by_set[name].rename("a"), by_set[bigger].rename("b")], axis=1, join="inner")
            both = both.reset_index()
            if both["topic"].nunique() < 2:
                continue
            a, b = topic_means(both, "b").to_numpy(), topic_means(both, "a").to_numpy()   # S + m, S
            d = a - b
            t = paired_tests(a, b, alpha=alpha)
            lo, hi = bootstrap_ci(d, n_resamples=n_boot, seed=seed)
            rows.append({"set": name, "added": m, "with": bigger, "lists": len(both), "topics": len(d),
                         "pr rms set": t.mean_b, "pr rms with": t.mean_a, "diff": t.difference,
                         "diff lo": lo, "diff hi": hi, "sd diff": float(np.std(d, ddof=1)),
                         "p_t": t.p_t, "p_wilcoxon": t.p_wilcoxon, "p_sign": t.p_sign})
    df = pd.DataFrame(rows)
    if not len(df):
        return pd.DataFrame(columns=["set", "added", "with", "lists", "topics", "pr rms set", "pr rms with", "diff",
                                     "diff lo", "diff hi", "sd diff", "p_t", "p_wilcoxon", "p_sign", "p_holm",
                                     "mde", "verdict"])
    k = len(df)
    df["p_holm"] = adjust(df["p_t"].to_numpy(), "holm")
    df["mde"] = [family_mde(r["sd diff"], int(r["topics"]), n_claims=k, alpha=alpha, power=power)
                 for r in df.to_dict("records")]
    df["verdict"] = [verdict(r["with"], r["set"], r["diff"], r["p_holm"], r["mde"], alpha)
                     for r in df.to_dict("records")]
    return df
