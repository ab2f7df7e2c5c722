"""The experiments of Sawade et al. (2013) section 5 on a :class:`~maxent.active.pool.Pool`:
estimation error vs budget (Fig. 2), model-selection error (Fig. 3), a simulated index update
(Fig. 4) and the sampling distribution (Fig. 6), each comparing the sampling
:data:`~maxent.active.sampling.METHODS` on the same budgets, as a DataFrame.
"""
from __future__ import annotations

import numpy as np

from maxent.active.moments import check_metric, delta_moments, metric_moments
from maxent.active.pool import Pool, compact, drop_fraction
from maxent.active.relevance import make_model, uniform_probs
from maxent.active.sampling import METHODS, estimate, instrumental, query_costs, simulate
from maxent.errors import ParameterError

__all__ = ["top", "crossfit_probabilities", "fitted_probabilities", "absolute_errors", "selection_errors",
           "update_errors", "sampling_table", "passive_budget", "effort_saved", "effort_saved_interval"]


def top(metric, docs: np.ndarray) -> np.ndarray:
    """The part of a list the metric reads (its cutoff): what must be labelled."""
    return docs if metric.cutoff is None else docs[:, :metric.cutoff]


def _q(method, cost, moments_fn, P_model, mix):
    """The sampling distribution of ``method`` (eq. 16 / 17 with its label model and costs)."""
    if method == "passive":
        return np.full(len(cost), 1.0 / len(cost))
    if method not in ("active", "active_uniD", "active_uniC"):
        raise ParameterError(f"unknown method {method!r}")
    P = uniform_probs(P_model.shape[:2], P_model.shape[2]) if method == "active_uniD" else P_model
    mean, second = moments_fn(P)
    return instrumental(second, mean, np.ones_like(cost) if method == "active_uniC" else cost, mix=mix)


def _summaries(est, truth, budgets, samples):
    """Per budget: rmse, its standard error (delta method), mean |error|, sample sizes."""
    rows = []
    for b, budget in enumerate(budgets):
        e = est[b] - truth
        ok = np.isfinite(e)
        sq = e[ok] ** 2
        n = max(int(ok.sum()), 1)
        rmse = float(np.sqrt(sq.mean())) if ok.any() else np.nan
        se_mse = float(sq.std(ddof=1) / np.sqrt(n)) if n > 1 else np.nan
        rows.append(dict(budget=budget, rmse=rmse, rmse_se=se_mse / (2 * rmse) if rmse > 0 else 0.0,
                         mean_abs=float(np.abs(e[ok]).mean()) if ok.any() else np.nan,
                         queries=float(samples.labelled[b].mean()), spent=float(samples.spent[b].mean()),
                         empty=int((~ok).sum())))
    return rows


def _check_budgets(budgets):
    budgets = sorted(float(b) for b in budgets)
    if not budgets or budgets[0] <= 0:
        raise ParameterError(f"budgets must be positive, got {budgets}")
    return budgets


def absolute_errors(metric, pool: Pool, P_model: np.ndarray, rankers, budgets, repetitions: int,
                    rng: np.random.Generator, *, mix: float = 0.0, progress=None):
    """Fig. 2: error of the estimated mean metric of each ranker (truth: its pool mean under the
    oracle grades) vs the budget; ``progress()`` is called as each ranker is done."""
    import pandas as pd

    check_metric(metric)
    budgets = _check_budgets(budgets)
    rows = []
    for name in rankers:
        docs = top(metric, pool.rankings[name])
        P_small, d = compact(P_model, docs)
        O_small, _ = compact(pool.oracle(), docs)
        truth_vals = metric_moments(metric, O_small, d)[0]
        cost = query_costs(pool.doc_cost, docs)
        for method in METHODS:
            q = _q(method, cost, lambda P: metric_moments(metric, P, d), P_small, mix)
            s = simulate(q, cost, budgets, repetitions, rng)
            est = estimate(s.counts, q, truth_vals)
            for r in _summaries(est, truth_vals.mean(), budgets, s):
                rows.append(dict(method=method, metric=str(metric), ranker=name, truth=truth_vals.mean(), **r))
        if progress is not None:
            progress()
    return _with_all(pd.DataFrame(rows), "ranker")


def _with_all(df, key):
    """Append rows ``key = all``: rmse pooled over the groups (root of the mean squared error)."""
    import pandas as pd

    g = df.groupby(["method", "metric", "budget"], sort=False)
    agg = g.apply(lambda x: pd.Series(dict(
        rmse=np.sqrt((x["rmse"] ** 2).mean()),
        rmse_se=np.sqrt(((x["rmse"] * x["rmse_se"]) ** 2).sum()) / len(x) / np.sqrt((x["rmse"] ** 2).mean())
        if (x["rmse"] > 0).any() else 0.0,
        mean_abs=x["mean_abs"].mean(), queries=x["queries"].mean(), spent=x["spent"].mean(),
        empty=x["empty"].sum())), include_groups=False).reset_index()
    agg[key] = "all"
    return pd.concat([df, agg], ignore_index=True)


def _pair_rows(metric, pool, P_model, docs1, docs2, budgets, repetitions, rng, mix, extra):
    O = pool.oracle()
    P_small, d1, d2 = compact(P_model, docs1, docs2)
    O_small, _, _ = compact(O, docs1, docs2)
    _, _, delta_vals, _ = delta_moments(metric, O_small, d1, d2)
    truth = delta_vals.mean()
    cost = query_costs(pool.doc_cost, docs1, docs2)
    rows = []
    for method in METHODS:
        q = _q(method, cost, lambda P: delta_moments(metric, P, d1, d2)[2:], P_small, mix)
        s = simulate(q, cost, budgets, repetitions, rng)
        est = estimate(s.counts, q, delta_vals)
        summ = _summaries(est, truth, budgets, s)
        for b, r in enumerate(summ):
            wrong = np.where(np.sign(est[b]) == 0, 0.5, (np.sign(est[b]) != np.sign(truth)).astype(float))
            rows.append(dict(method=method, metric=str(metric), **extra, true_delta=truth,
                             wrong_rate=float(np.nanmean(wrong)),
                             wrong_se=float(np.nanstd(wrong, ddof=1) / np.sqrt(len(wrong))) if len(wrong) > 1 else np.nan,
                             **r))
    return rows


def selection_errors(metric, pool: Pool, P_model, pairs, budgets, repetitions, rng, *, mix: float = 0.0,
                     progress=None):
    """Fig. 3: how often the estimated difference picks the wrong ranker of each pair (a zero
    estimate is half wrong; pairs of equal truth are skipped); ``progress()`` after each pair."""
    import pandas as pd

    check_metric(metric)
    budgets = _check_budgets(budgets)
    rows = []
    for a, b in pairs:
        d1, d2 = top(metric, pool.rankings[a]), top(metric, pool.rankings[b])
        rows += [r for r in _pair_rows(metric, pool, P_model, d1, d2, budgets, repetitions, rng, mix,
                                       dict(pair=f"{a}|{b}")) if r["true_delta"] != 0]
        if progress is not None:
            progress()
    df = pd.DataFrame(rows)
    if df.empty:
        raise ParameterError("every pair of rankers has the same true mean metric: nothing to select")
    keys = ["method", "metric", "budget"]
    g = df.groupby(keys, sort=False)
    wrong = g["wrong_rate"].mean().to_frame()
    wrong["wrong_se"] = g["wrong_se"].apply(lambda x: np.sqrt((x ** 2).sum()) / len(x))
    out = _with_all(df.drop(columns=["wrong_rate", "wrong_se", "true_delta"]), "pair")
    out = out.merge(df[keys + ["pair", "wrong_rate", "wrong_se", "true_delta"]], on=keys + ["pair"], how="left")
    alls = out["pair"] == "all"
    idx = pd.MultiIndex.from_frame(out.loc[alls, keys])
    out.loc[alls, "wrong_rate"] = wrong["wrong_rate"].reindex(idx).to_numpy()
    out.loc[alls, "wrong_se"] = wrong["wrong_se"].reindex(idx).to_numpy()
    return out


def update_errors(metric, pool: Pool, P_model, rankers, budgets, repetitions, rng, *, fraction: float = 0.1,
                  mix: float = 0.0, progress=None):
    """Fig. 4: error of the estimated difference between each ranker on an outdated index
    (``fraction`` of every list removed at random) and on the current one; ``progress()`` after each."""
    import pandas as pd

    check_metric(metric)
    budgets = _check_budgets(budgets)
    rows = []
    for name in rankers:
        full = pool.rankings[name]
        old = drop_fraction(full, fraction, rng)
        rows += _pair_rows(metric, pool, P_model, top(metric, old), top(metric, full), budgets,
                           repetitions, rng, mix, dict(ranker=name))
        if progress is not None:
            progress()
    return _with_all(pd.DataFrame(rows).drop(columns=["wrong_rate", "wrong_se"]), "ranker")


def sampling_table(metric, pool: Pool, P_model, ranker, other=None, *, mix: float = 0.0):
    """Fig. 6 / Fig. 1: per query its cost, documents to label, expected metric (or, with
    ``other``, expected difference ranker - other) under the model, the true value and each
    method's sampling probability (eq. 16, or eq. 17 with ``other``)."""
    import pandas as pd

    docs = top(metric, pool.rankings[ranker])
    if other is None:
        P_small, d = compact(P_model, docs)
        O_small, _ = compact(pool.oracle(), docs)
        moments = lambda P: metric_moments(metric, P, d)
        lists, label = (docs,), ranker
    else:
        docs2 = top(metric, pool.rankings[other])
        P_small, d, d2 = compact(P_model, docs, docs2)
        O_small, _, _ = compact(pool.oracle(), docs, docs2)
        moments = lambda P: delta_moments(metric, P, d, d2)[2:]
        lists, label = (docs, docs2), f"{ranker}|{other}"
    cost = query_costs(pool.doc_cost, *lists)
    raw = query_costs(pool.doc_cost, *lists, normalize=False)
    used = np.zeros((pool.n_queries, pool.grades.shape[1] + 1), dtype=bool)
    for l in lists:
        used[np.arange(pool.n_queries)[:, None], np.where(l >= 0, l, -1)] = True
    out = dict(query=pool.queries, metric=str(metric), ranker=label, n_docs=used[:, :-1].sum(axis=1),
               raw_cost=raw, cost=cost, expected=moments(P_small)[0], truth=moments(O_small)[0])
    for method in METHODS:
        out[f"q_{method}"] = _q(method, cost, moments, P_small, mix)
    return pd.DataFrame(out)


_EXACT = 1e-9
"""An RMSE below this share of the first budget's is rounding error: the pool was labelled whole."""


def passive_budget(budgets, passive_rmse, target: float) -> tuple[float, str]:
    """The budget passive sampling needs to reach the error ``target``, read off its error curve.

    ``passive_rmse`` (at ascending ``budgets``) is made non-increasing (running minimum) and log
    RMSE interpolated linearly in log budget (linearly in RMSE on a step ending at error 0).
    Returns ``(budget, side)``: ``side`` ``">"`` when passive does not reach ``target`` within the
    largest budget (returned: a lower bound), ``"<"`` when it is below at the smallest (an upper
    bound), else ``""``.
    """
    b = np.asarray(budgets, dtype=float)
    r = np.minimum.accumulate(np.asarray(passive_rmse, dtype=float))
    if len(b) == 0 or len(b) != len(r) or np.any(np.diff(b) <= 0):
        raise ParameterError("budgets must be ascending and match the passive errors one to one")
    if not np.isfinite(target) or not np.all(np.isfinite(r)):
        return np.nan, ""
    if target >= r[0]:
        return float(b[0]), "" if target == r[0] else "<"
    if target < r[-1]:
        return float(b[-1]), ">"
    i = int(np.argmax(r <= target))          # first budget at which passive is at or below target
    if r[i] == r[i - 1]:
        return float(b[i]), ""
    if r[i] <= _EXACT * r[0]:
        # error 0 up to rounding: the budget labels the whole pool. No power law reaches 0, so
        # the last step is read linearly.
        return float(b[i - 1] + (r[i - 1] - target) / (r[i - 1] - r[i]) * (b[i] - b[i - 1])), ""
    w = (np.log(target) - np.log(r[i - 1])) / (np.log(r[i]) - np.log(r[i - 1]))
    return float(np.exp(np.log(b[i - 1]) + w * (np.log(b[i]) - np.log(b[i - 1])))), ""


def effort_saved(budgets, active_rmse, passive_rmse, *, whole: float | None = None
                 ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Per budget b: the share of passive's labelling effort active saves at equal error,
    ``1 - b / b_passive``, b_passive the budget at which passive reaches active's error at b
    (:func:`passive_budget`).

    ``whole``: the cost of the whole pool, where both errors are 0; passive's curve ends there and
    budgets at or beyond it have nothing to save (nan). Returns ``(saved, b_passive, side)``,
    ``side[i]`` as :func:`passive_budget` (``">"``: saved is a lower bound).
    """
    b = np.asarray(budgets, dtype=float)
    pb, pr = b, np.asarray(passive_rmse, dtype=float)
    if whole is not None:
        keep = pb < whole
        pb, pr = np.append(pb[keep], whole), np.append(pr[keep], 0.0)
    found = [passive_budget(pb, pr, t) for t in np.asarray(active_rmse, dtype=float)]
    bp = np.array([f[0] for f in found])
    saved = 1.0 - b / bp
    if whole is not None:
        saved[b >= whole] = np.nan
    return saved, bp, [f[1] for f in found]


def effort_saved_interval(budgets, active_rmse, active_se, passive_rmse, passive_se, *, whole: float | None = None,
                          level: float = 0.95, draws: int = 2000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A ``level`` interval of :func:`effort_saved` per budget: both error curves redrawn ``draws``
    times from their Monte-Carlo standard errors (normal, independent) and percentiles taken."""
    rng = np.random.default_rng(seed)
    b = np.asarray(budgets, dtype=float)
    a = np.asarray(active_rmse, float) + rng.standard_normal((draws, len(b))) * np.asarray(active_se, float)
    p = np.asarray(passive_rmse, float) + rng.standard_normal((draws, len(b))) * np.asarray(passive_se, float)
    a, p = np.maximum(a, 1e-300), np.maximum(p, 1e-300)
    saved = np.array([effort_saved(b, a[k], p[k], whole=whole)[0] for k in range(draws)])
    if whole is not None:
        saved[:, b >= whole] = 0.0          # nan there (nothing to save); kept out of the warnings
    lo, hi = np.percentile(saved, [50 * (1 - level), 50 * (1 + level)], axis=0)
    if whole is not None:
        lo[b >= whole] = hi[b >= whole] = np.nan
    return lo, hi


def crossfit_probabilities(pool: Pool, model: str = "logit", *, folds: int = 5, seed: int = 0) -> np.ndarray:
    """(Q, U, G) relevance-model distributions cross-fitted over query folds, so that no query's
    own labels inform its sampling probability."""
    Q = pool.n_queries
    if folds < 2 or folds > Q:
        raise ParameterError(f"folds must be in 2..{Q} (the number of pool queries), got {folds}")
    rng = np.random.default_rng(seed)
    fold = np.empty(Q, dtype=np.int64)
    fold[rng.permutation(Q)] = np.arange(Q) % folds
    valid = pool.valid
    out = np.zeros((*pool.grades.shape, pool.levels))
    out[..., 0] = 1.0
    for f in range(folds):
        train = valid & (fold != f)[:, None]
        test = valid & (fold == f)[:, None]
        m = make_model(model, pool.levels, seed=seed + f)
        m.fit(pool.features[train], pool.grades[train])
        out[test] = m.predict_proba(pool.features[test])
    return out


def fitted_probabilities(pool: Pool, X_train: np.ndarray, y_train: np.ndarray, model: str = "logit", *,
                         seed: int = 0) -> np.ndarray:
    """(Q, U, G) distributions from a model trained on separate labelled data (Sawade et al.
    (2013) section 5)."""
    m = make_model(model, pool.levels, seed=seed).fit(X_train, y_train)
    out = np.zeros((*pool.grades.shape, pool.levels))
    out[..., 0] = 1.0
    out[pool.valid] = m.predict_proba(pool.features[pool.valid])
    return out
