"""The two baselines of ``python -m analysis.metric_sets``.

**Gupta, Kutlu, Khetan & Lease (ECIR 2019)**: ordinary least squares on *system means*, one
target metric from the means of a given set's metrics (and an intercept), trained on the
systems of other collections (``--train``) and applied to this collection's systems. It is set
beside MaxEnt's predicted system means of the same targets on the same lists.

**Webber, Moffat, Zobel & Sakai (SIGIR 2008)**: does AP or nDCG predict P@10 as well as P@10
itself? Their form of the question is across topic sets: the systems ranked by a metric on
one random half of the topics against the systems ranked by P@10 on the other half.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from analysis.metric_sets.compute import actual_values, set_members
from analysis.metric_sets.tables import kendall, verdict

__all__ = ["ols_fit", "ols_predict", "system_means", "training_means", "gupta", "gupta_tests", "webber"]


def ols_fit(X, y) -> np.ndarray:
    """Least-squares coefficients (intercept first) of y on the columns of X
    (``numpy.linalg.lstsq`` on ``[1, X]``)."""
    X = np.asarray(X, float).reshape(len(y), -1)
    A = np.column_stack([np.ones(len(X)), X])
    return np.linalg.lstsq(A, np.asarray(y, float), rcond=None)[0]


def ols_predict(coef, X) -> np.ndarray:
    X = np.asarray(X, float).reshape(np.shape(X)[0], -1)
    return coef[0] + X @ coef[1:]


def system_means(actual: pd.DataFrame, pool) -> pd.DataFrame:
    """Per run, the mean of every pool metric over its lists with a relevant document."""
    a = actual[actual["R"] > 0]
    return a.groupby("run")[[f"actual {x}" for x in pool]].mean().rename(columns=lambda c: c[len("actual "):])


def training_means(specs, pool, t: int, depth: int, score_precision: str = "single") -> pd.DataFrame:
    """System means (:func:`system_means`) of every ``(name, qrels, runs)`` training collection,
    with a ``collection`` column."""
    from maxent.ranked import rank_runs
    from maxent.trec import read_qrels, read_runs

    frames = []
    for name, qrels, runs in specs:
        q = read_qrels(qrels)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lists = rank_runs(read_runs(runs), q, depth=depth, score_precision=score_precision)
        frames.append(system_means(actual_values(lists, pool, t), pool).reset_index().assign(collection=name))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["run", "collection", *pool])


def gupta(inst: pd.DataFrame, actual: pd.DataFrame, train: pd.DataFrame, pool) -> pd.DataFrame:
    """gupta.csv: per (set, target outside it that MaxEnt predicts): the regression's and
    MaxEnt's predicted system means against the actual ones on the set's eligible lists
    (Kendall tau, RMS), the systems and the training systems."""
    e = inst[inst["eligible"].astype(bool)].merge(actual, on=["run", "topic"], how="left")
    rows = []
    for name, g in e.groupby("set", sort=False):
        members = set_members(name)
        for x in pool:
            if x in members or g[f"pred {x}"].isna().all():
                continue
            gx = g[g[f"pred {x}"].notna()]
            runs = gx.groupby("run")[[f"actual {m}" for m in members] + [f"actual {x}", f"pred {x}"]].mean()
            tr = train.dropna(subset=[*members, x])
            if len(tr) < len(members) + 1:
                continue
            coef = ols_fit(tr[members].to_numpy(), tr[x].to_numpy())
            ols = ols_predict(coef, runs[[f"actual {m}" for m in members]].to_numpy())
            truth, me = runs[f"actual {x}"].to_numpy(), runs[f"pred {x}"].to_numpy()
            rows.append({"set": name, "size": len(members), "target": x, "runs": len(runs),
                         "train runs": len(tr), "train collections": ",".join(sorted(tr["collection"].unique())),
                         "tau maxent": kendall(me, truth), "tau ols": kendall(ols, truth),
                         "rms maxent": float(np.sqrt(np.mean((me - truth) ** 2))),
                         "rms ols": float(np.sqrt(np.mean((ols - truth) ** 2)))})
    return pd.DataFrame(rows, columns=["set", "size", "target", "runs", "train runs", "train collections",
                                       "tau maxent", "tau ols", "rms maxent", "rms ols"])


def gupta_tests(g: pd.DataFrame, *, alpha: float = 0.05, power: float = 0.8) -> pd.DataFrame:
    """gupta_tests.csv: per set with at least two targets, the paired t-test over its targets of
    1 - tau (MaxEnt against the regression; lower ranks systems better) and of the RMS, Holm
    over the sets of each quantity, the family's MDE and the verdict."""
    from maxent.stats import adjust, family_mde, paired_tests

    rows = []
    for quantity, a_col, b_col in (("1 - tau (runs)", "tau maxent", "tau ols"),
                                   ("rms (runs)", "rms maxent", "rms ols")):
        part = []
        for name, s in g.groupby("set", sort=False):
            s = s.dropna(subset=[a_col, b_col])
            if len(s) < 2:
                continue
            a, b = s[a_col].to_numpy(), s[b_col].to_numpy()
            if quantity.startswith("1 - tau"):
                a, b = 1 - a, 1 - b
            t = paired_tests(a, b, alpha=alpha)
            part.append({"quantity": quantity, "set": name, "targets": len(s), "maxent": t.mean_a, "ols": t.mean_b,
                         "diff": t.difference, "sd diff": float(np.std(a - b, ddof=1)), "p_t": t.p_t,
                         "p_wilcoxon": t.p_wilcoxon, "p_sign": t.p_sign})
        if part:
            df = pd.DataFrame(part)
            df["p_holm"] = adjust(df["p_t"].to_numpy(), "holm")
            df["mde"] = [family_mde(r["sd diff"], int(r["targets"]), n_claims=len(df), alpha=alpha, power=power)
                         for r in part]
            df["verdict"] = [verdict("MaxEnt", "regression", r.diff, r.p_holm, r.mde, alpha) for r in df.itertuples()]
            rows.append(df)
        # one more family of one test: per target, the mean over the sets that predict it
        per = g.dropna(subset=[a_col, b_col]).groupby("target")[[a_col, b_col]].mean()
        if len(per) >= 2:
            a, b = per[a_col].to_numpy(), per[b_col].to_numpy()
            if quantity.startswith("1 - tau"):
                a, b = 1 - a, 1 - b
            t = paired_tests(a, b, alpha=alpha)
            sd = float(np.std(a - b, ddof=1))
            mde = family_mde(sd, len(a), n_claims=1, alpha=alpha, power=power)
            rows.append(pd.DataFrame([{"quantity": quantity, "set": "all sets (mean per target)", "targets": len(a),
                                       "maxent": t.mean_a, "ols": t.mean_b, "diff": t.difference, "sd diff": sd,
                                       "p_t": t.p_t, "p_wilcoxon": t.p_wilcoxon, "p_sign": t.p_sign,
                                       "p_holm": t.p_t, "mde": mde,
                                       "verdict": verdict("MaxEnt", "regression", t.difference, t.p_t, mde,
                                                          alpha)}]))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(
        columns=["quantity", "set", "targets", "maxent", "ols", "diff", "sd diff", "p_t", "p_wilcoxon", "p_sign",
                 "p_holm", "mde", "verdict"])


def webber(actual: pd.DataFrame, metrics=("AP", "nDCG", "P@10"), target: str = "P@10", *, splits: int = 200,
           seed: int = 0, level: float = 0.95) -> tuple[pd.DataFrame, pd.DataFrame]:
    """webber.csv and webber_tests.csv. For each of ``splits`` random halvings of the topics
    (those with a relevant document), Kendall tau between the systems ranked by each metric's
    mean on one half and by ``target``'s mean on the other. Per metric: the mean tau over the
    splits and the central ``level`` range of the splits. Tests: per metric other than the
    target, the difference of tau from the target's own on the same splits; **decided** when
    the central ``level`` range of the differences over the splits excludes 0 (the splits
    share topics, so no test over them treats them as independent), else undecided."""
    a = actual[actual["R"] > 0]
    topics = np.array(sorted(a["topic"].unique()))
    runs = np.array(sorted(a["run"].unique()))
    grid = {m: a.pivot_table(index="run", columns="topic", values=f"actual {m}", aggfunc="first")
            .reindex(index=runs, columns=topics).to_numpy() for m in {*metrics, target}}
    rng = np.random.default_rng(seed)
    half = len(topics) // 2
    taus = {m: np.full(splits, np.nan) for m in metrics}
    for s in range(splits):
        perm = rng.permutation(len(topics))
        A, B = perm[:half], perm[half:2 * half]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)     # a run without a topic of a half
            truth = np.nanmean(grid[target][:, B], axis=1)
            for m in metrics:
                taus[m][s] = kendall(np.nanmean(grid[m][:, A], axis=1), truth)
    q = [(1 - level) / 2, (1 + level) / 2]
    summary = pd.DataFrame([{"metric": m, "target": target, "splits": splits, "topics per half": half,
                             "runs": len(runs), "tau": np.nanmean(taus[m]),
                             "tau lo": np.nanquantile(taus[m], q[0]), "tau hi": np.nanquantile(taus[m], q[1])}
                            for m in metrics])
    tests = []
    for m in metrics:
        if m == target:
            continue
        d = taus[m] - taus[target]
        lo, hi = np.nanquantile(d, q)
        decided = lo > 0 or hi < 0
        tests.append({"metric": m, "target": target, "splits": splits, "diff": np.nanmean(d), "diff lo": lo,
                      "diff hi": hi, "share higher": float(np.nanmean(d > 0)),
                      "verdict": (f"{m} higher" if lo > 0 else f"{target} higher") if decided else "undecided"})
    return summary, pd.DataFrame(tests)
