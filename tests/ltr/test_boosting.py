"""LambdaMART objectives and metrics for LightGBM / XGBoost (maxent.ltr.boosting).

Oracles:

* brute force: swap deltas by swapping two documents and recomputing ``metric.value``, the
  pairwise logistic objective with those deltas frozen, and its central finite differences
  (first and second derivatives) for every metric with a swap delta;
* LightGBM's and XGBoost's own built-in gradients, read out of a one-iteration tree whose
  leaves each hold (nearly) one document: a leaf stores -G/H (learning rate 1, no L2) and its
  Hessian sum H (LightGBM ``leaf_weight``, XGBoost ``cover``), so every leaf gives the exact
  sums G, H of the built-in objective over its documents;
* a line-by-line NumPy transcription of LightGBM's ``LambdarankNDCG::GetGradientsForOneQuery``
  (rank_objective.hpp @bae0b7b), with its 2^20-bin sigmoid table, to explain the only
  difference at unequal scores;
* LightGBM's / XGBoost's built-in evaluation (``ndcg@10``, ``map-``) for the custom metrics.
"""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from maxent.errors import ParameterError
from maxent.ltr.boosting import (LambdaMARTObjective, QueryGroups, lightgbm_metric, lightgbm_objective,
                                 metric_values, xgboost_metric, xgboost_objective)
from maxent.ltr.lambdas import DeltaContext, lambda_gradients
from maxent.metrics import parse_measure
from maxent.ranked import RankedLists

YAHOO = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "ltr" / "yahoo_lightgbm_sample"
needs_yahoo = pytest.mark.skipif(not YAHOO.is_dir(), reason=f"shared Yahoo LTR sample not found at {YAHOO}")



def _registry_metrics() -> list[str]:
    """One name per registered metric class with a swap delta (a cutoff of 3 when it needs one)."""
    from maxent.metrics import METRICS as REGISTRY

    names = []
    for cls in REGISTRY:
        if not getattr(cls, "HAS_SWAP_DELTA", False):
            continue
        for name in (cls.NAME, f"{cls.NAME}@3"):
            if parse_measure(name).delta_unsupported() is None:
                names.append(name)
                break
    return names


# every metric of the registry with a swap delta, plus variants (gains, cutoffs, thresholds)
METRICS = list(dict.fromkeys(_registry_metrics() + ["nDCG(gain=exp)", "nDCG@5", "P@3", "AP(rel=2)", "ERR@5"]))


# ---------------------------------------------------------------------------------------
# brute force oracle
# ---------------------------------------------------------------------------------------
def _value(metric, ranked_grades, rel_counts):
    return float(metric.value(RankedLists.from_grades(ranked_grades[None], rel_counts[None]))[0])


def _brute(metric, s, y, *, sigma=1.0, truncation=None):
    """Frozen-delta pairwise logistic loss C(s'), and the pairs, for one query.

    Ranking by s (ties by input order); Delta M by swapping and recomputing metric.value.
    C(s') = sum_{l_i > l_j, pair in truncation} |dM_ij| log(1 + exp(-sigma (s'_i - s'_j))).
    """
    L = int(y.max()) + 1
    rc = np.bincount(y, minlength=L)
    order = np.argsort(-s, kind="stable")
    rank = np.empty(len(s), int)
    rank[order] = np.arange(len(s))
    base = _value(metric, y[order], rc)
    pairs = []
    for i, j in itertools.permutations(range(len(s)), 2):
        if y[i] <= y[j]:
            continue
        if truncation is not None and min(rank[i], rank[j]) >= truncation:
            continue
        sw = y[order].copy()
        sw[rank[i]], sw[rank[j]] = sw[rank[j]], sw[rank[i]]
        pairs.append((i, j, abs(_value(metric, sw, rc) - base)))

    def loss(sp):
        return sum(d * np.logaddexp(0.0, -sigma * (sp[i] - sp[j])) for i, j, d in pairs)

    return loss


@pytest.mark.parametrize("name", METRICS)
def test_gradient_and_hessian_against_finite_differences(name, rng):
    """g = dC/ds and h = d2C/ds2 (diagonal) of the frozen-delta logistic loss, brute force."""
    metric = parse_measure(name)
    sizes = [7, 5, 8]
    y = rng.integers(0, 4, sum(sizes))
    s = rng.normal(size=len(y))
    groups = QueryGroups.from_sizes(y, sizes)
    for sigma, trunc in ((1.0, None), (2.0, 3)):
        obj = LambdaMARTObjective(metric, sigma=sigma, truncation=trunc)
        g, h = obj.gradients(s, groups)
        e = 1e-4
        for q in range(len(sizes)):
            lo, hi = groups.offsets[q], groups.offsets[q + 1]
            loss = _brute(metric, s[lo:hi], y[lo:hi], sigma=sigma, truncation=trunc)
            for i in range(hi - lo):
                d = np.zeros(hi - lo)
                d[i] = e
                c0, cp, cm = loss(s[lo:hi]), loss(s[lo:hi] + d), loss(s[lo:hi] - d)
                assert g[lo + i] == pytest.approx((cp - cm) / (2 * e), abs=1e-7)
                assert h[lo + i] == pytest.approx((cp - 2 * c0 + cm) / e ** 2, abs=1e-4)


@pytest.mark.parametrize("norm", [False, True])
@pytest.mark.parametrize("name", METRICS)
def test_objective_is_minus_our_lambdarank_lambdas(name, norm, rng):
    """Flat (D,) objective = -lambdas of the kernel run query by query, any metric."""
    metric = parse_measure(name)
    sizes = rng.integers(1, 30, 12)
    y = rng.integers(0, 5, sizes.sum())
    s = np.round(rng.normal(size=len(y)), 1)          # ties included
    groups = QueryGroups.from_sizes(y, sizes, n_levels=5)
    g, h = LambdaMARTObjective(metric, sigma=1.5, truncation=10, norm=norm).gradients(s, groups)
    for q in range(len(sizes)):
        lo, hi = groups.offsets[q], groups.offsets[q + 1]
        rc = np.bincount(y[lo:hi], minlength=5)[None]
        lam, hq = lambda_gradients(s[None, lo:hi], y[None, lo:hi], DeltaContext(metric, rc), sigma=1.5,
                                   truncation=10, norm=norm, return_hessian=True, method="dense")
        np.testing.assert_allclose(g[lo:hi], -lam[0], atol=1e-12)
        np.testing.assert_allclose(h[lo:hi], hq[0], atol=1e-12)


def test_groups_and_parameters_are_validated():
    with pytest.raises(ParameterError, match="document 2 has 1.5"):
        QueryGroups.from_sizes([0, 1, 1.5], [3])
    with pytest.raises(ParameterError, match="sizes summing"):
        QueryGroups.from_sizes([0, 1, 1], [2, 2])
    with pytest.raises(ParameterError, match="non-negative"):
        QueryGroups.from_sizes([0, -1], [2])
    with pytest.raises(ParameterError, match="scores"):
        LambdaMARTObjective(parse_measure("AP")).gradients(np.zeros(2), QueryGroups.from_sizes([0, 1, 1], [3]))
    with pytest.raises(ParameterError, match="nDCG only"):
        LambdaMARTObjective(parse_measure("AP"), ideal_cutoff=10)
    with pytest.raises(ParameterError, match="sigma"):
        LambdaMARTObjective(parse_measure("AP"), sigma=0)
    with pytest.raises(ParameterError, match="no LambdaRank swap delta"):
        LambdaMARTObjective(parse_measure("num_rel_ret"))


def test_metric_values_rank_ties_by_input_order():
    """Two queries; AP by hand: q0 scores tie, so input order [0, 1, 1] -> (1/2 + 2/3)/2."""
    groups = QueryGroups.from_sizes([0, 1, 1, 1, 0], [3, 2])
    v = metric_values(parse_measure("AP"), [0.0, 0.0, 0.0, 0.1, 0.9], groups)
    np.testing.assert_allclose(v, [(1 / 2 + 2 / 3) / 2, 1 / 2])


# ---------------------------------------------------------------------------------------
# LightGBM
# ---------------------------------------------------------------------------------------
def _yahoo():
    from maxent.letor import read_letor

    tr = read_letor(YAHOO / "rank.train")
    te = read_letor(YAHOO / "rank.test", n_features=tr.n_features)
    return tr, te


def _lightgbm_leaf_sums(lgb, y, sizes, init, params, weight=None):
    """LightGBM's built-in (G, H) per leaf of a one-document-per-leaf tree, and leaf of each doc."""
    n = len(y)
    X = np.arange(n, dtype=np.float64)[:, None]     # a feature that tells every document apart
    ds = lgb.Dataset(X, y.astype(np.float64), group=sizes, init_score=init, weight=weight,
                     params={"max_bin": n + 1, "min_data_in_bin": 1, "verbose": -1})
    p = dict(params, num_leaves=n, min_data_in_leaf=1, min_sum_hessian_in_leaf=1e-12, lambda_l2=0.0,
             learning_rate=1.0, num_threads=1, verbose=-1, deterministic=True, force_row_wise=True)
    b = lgb.train(p, ds, num_boost_round=1)
    out = {}

    def walk(nd):
        if "leaf_index" in nd:
            out[nd["leaf_index"]] = (nd["leaf_value"], nd["leaf_weight"])
        else:
            walk(nd["left_child"])
            walk(nd["right_child"])

    walk(b.dump_model()["tree_info"][0]["tree_structure"])
    value, H = np.array([out[i] for i in range(len(out))]).T
    return -value * H, H, b.predict(X, pred_leaf=True).ravel().astype(int)


def _lightgbm_transcription(y, sizes, s, T, sigma, gains, table=True):
    """rank_objective.hpp LambdarankNDCG (lambdarank_norm=False), vectorised per query."""
    g_out, h_out = np.zeros(len(y)), np.zeros(len(y))
    lo_in, bins = -50.0 / sigma / 2, 1024 * 1024
    factor = bins / (-2 * lo_in)
    for lo, hi in zip(np.cumsum(sizes) - sizes, np.cumsum(sizes)):
        yl, sl = y[lo:hi], s[lo:hi]
        srt = np.argsort(-sl, kind="stable")
        ideal = np.sort(gains[yl])[::-1][:T]
        maxdcg = (ideal / np.log2(np.arange(len(ideal)) + 2)).sum()
        inv = 1.0 / maxdcg if maxdcg > 0 else 0.0
        n = len(yl)
        disc = 1.0 / np.log2(np.arange(n) + 2)
        a, c = np.triu_indices(n, 1)
        keep = (a < T) & (yl[srt[a]] != yl[srt[c]])
        a, c = a[keep], c[keep]
        hr = np.where(yl[srt[a]] > yl[srt[c]], a, c)
        lr = np.where(yl[srt[a]] > yl[srt[c]], c, a)
        high, low = srt[hr], srt[lr]
        dscore = sl[high] - sl[low]
        delta = (gains[yl[high]] - gains[yl[low]]) * np.abs(disc[hr] - disc[lr]) * inv
        if table:
            idx = np.clip(((dscore - lo_in) * factor).astype(np.int64), 0, bins - 1)
            x = idx / factor + lo_in
            rho = 1.0 / (1.0 + np.exp(x * sigma))
        else:
            rho = 1.0 / (1.0 + np.exp(sigma * dscore))
        pl = -sigma * delta * rho
        ph = sigma * sigma * delta * rho * (1 - rho)
        g = np.zeros(n)
        h = np.zeros(n)
        np.add.at(g, low, -pl)
        np.add.at(g, high, pl)
        np.add.at(h, low, ph)
        np.add.at(h, high, ph)
        g_out[lo:hi], h_out[lo:hi] = g, h
    return g_out, h_out


@needs_yahoo
@pytest.mark.parametrize("T", [30, 5])
@pytest.mark.parametrize("init", ["equal", "random"])
def test_reproduces_lightgbm_lambdarank_gradients_on_yahoo(init, T):
    """nDCG(gain=exp) = LightGBM's default label_gain; truncation = ideal_cutoff = T (30 is
    LightGBM's default; Yahoo queries have at most 27 documents, so T = 5 is what tests the
    ideal DCG at the truncation level).

    Equal scores (the first iteration): exact sigmoid = LightGBM's table, so the gradients
    agree to 1e-6 (LightGBM's float32). Unequal scores: LightGBM = its own transcription with
    the table to 1e-6, ours = the transcription with the exact sigmoid to 1e-10, and the two
    differ by the table's resolution only.
    """
    lgb = pytest.importorskip("lightgbm", reason='LightGBM is an optional extra: pip install -e ".[lightgbm]"')
    tr, _ = _yahoo()
    sizes = np.diff(tr.offsets)
    sigma = 1.0
    s = np.zeros(tr.n_docs) if init == "equal" else np.random.default_rng(1).normal(size=tr.n_docs)
    G, H, leaf = _lightgbm_leaf_sums(lgb, tr.y, sizes, s, dict(objective="lambdarank", sigmoid=sigma,
                                                                  lambdarank_truncation_level=T,
                                                                  lambdarank_norm=False))
    assert len(G) > tr.n_docs / 3                   # fine leaves (documents with equal g/h share one)
    fobj = lightgbm_objective(parse_measure("nDCG(gain=exp)"), sigma=sigma, truncation=T, ideal_cutoff=T)
    ds = lgb.Dataset(tr.X, tr.y.astype(float), group=sizes)
    g, h = fobj(s, ds)

    def leaf_sums(v):
        return np.bincount(leaf, v, minlength=len(G))

    assert np.abs(g).max() > 0.5                    # not a vacuous comparison
    if init == "equal":
        np.testing.assert_allclose(leaf_sums(g), G, atol=1e-6)
        np.testing.assert_allclose(leaf_sums(h), H, atol=1e-6)
        if T < 27:                                  # the metric's own ideal DCG would not do
            g_own, _ = lightgbm_objective(parse_measure("nDCG(gain=exp)"), truncation=T)(s, ds)
            assert np.abs(leaf_sums(g_own) - G).max() > 1e-3
        return
    gains = np.exp2(np.arange(5)) - 1
    gt, ht = _lightgbm_transcription(tr.y, sizes, s, T, sigma, gains, table=True)
    np.testing.assert_allclose(leaf_sums(gt), G, atol=1e-6)
    np.testing.assert_allclose(leaf_sums(ht), H, atol=1e-6)
    ge, he = _lightgbm_transcription(tr.y, sizes, s, T, sigma, gains, table=False)
    np.testing.assert_allclose(g, ge, atol=1e-10)
    np.testing.assert_allclose(h, he, atol=1e-10)
    # table resolution: |rho error| <= sigma/4 * bin width per pair, bin width 50/(sigma 2^20)
    assert np.abs(g - gt).max() < 1e-4
    assert np.abs(g - gt).max() > 0                # the table is the only difference


@needs_yahoo
def test_weights_as_lightgbm_and_xgboost_apply_them():
    """Per-document Dataset weights (LightGBM) and per-query DMatrix weights (XGBoost, scaled
    by queries / sum of weights): the built-in gradients and Hessians to 1e-6 at equal scores."""
    lgb = pytest.importorskip("lightgbm", reason='LightGBM is an optional extra: pip install -e ".[lightgbm]"')
    tr, _ = _yahoo()
    sizes = np.diff(tr.offsets)
    rng = np.random.default_rng(5)
    s = np.zeros(tr.n_docs)
    w = rng.uniform(0.2, 3.0, tr.n_docs)
    G, H, leaf = _lightgbm_leaf_sums(lgb, tr.y, sizes, s, dict(objective="lambdarank", lambdarank_norm=False,
                                                                  lambdarank_truncation_level=30), weight=w)
    ds = lgb.Dataset(tr.X, tr.y.astype(float), group=sizes, weight=w)
    g, h = lightgbm_objective(parse_measure("nDCG(gain=exp)"), truncation=30, ideal_cutoff=30)(s, ds)
    np.testing.assert_allclose(np.bincount(leaf, g, minlength=len(G)), G, atol=1e-6)
    np.testing.assert_allclose(np.bincount(leaf, h, minlength=len(G)), H, atol=1e-6)
    xgb = pytest.importorskip("xgboost", minversion="3.0", reason='XGBoost is an optional extra: pip install -e ".[xgboost]"')
    wq = rng.uniform(0.2, 3.0, len(sizes))
    ybin = (tr.y >= 2).astype(np.int64)
    G, H, leaf = _xgboost_leaf_sums(xgb, ybin, tr.offsets, s, dict(
        objective="rank:map", lambdarank_pair_method="topk", lambdarank_num_pair_per_sample=int(sizes.max()),
        lambdarank_normalization=False, lambdarank_score_normalization=False), weight=wq)
    d = xgb.DMatrix(tr.X, label=ybin.astype(float), weight=wq)
    d.set_group(sizes)
    g, h = xgboost_objective(parse_measure("AP"))(s, d)
    np.testing.assert_allclose(np.bincount(leaf, g, minlength=len(G)), G, atol=1e-6)
    np.testing.assert_allclose(np.bincount(leaf, h, minlength=len(G)), H, atol=1e-6)


@needs_yahoo
@pytest.mark.filterwarnings("ignore:The argument 'eval_set' is deprecated")   # eval_X/eval_y need lightgbm 4.7
def test_lgbmranker_sklearn_api_matches_lightgbm_train():
    """LGBMRanker(objective=lightgbm_ranker_objective(m)) = lgb.train with lightgbm_objective(m)
    (same trees: identical predictions), and its eval_metric = lightgbm_ranker_metric."""
    lgb = pytest.importorskip("lightgbm", reason='LightGBM is an optional extra: pip install -e ".[lightgbm]"')
    from maxent.ltr.boosting import lightgbm_ranker_metric, lightgbm_ranker_objective

    tr, te = _yahoo()
    m = parse_measure("GAP")
    kw = dict(learning_rate=0.1, num_leaves=15, min_child_samples=20, n_estimators=10, random_state=0,
              deterministic=True, n_jobs=1, verbose=-1, force_row_wise=True)
    ranker = lgb.LGBMRanker(objective=lightgbm_ranker_objective(m), **kw)
    ranker.fit(tr.X, tr.y, group=np.diff(tr.offsets), eval_set=[(te.X, te.y)], eval_group=[np.diff(te.offsets)],
               eval_metric=lightgbm_ranker_metric(m))
    params = dict(objective=lightgbm_objective(m), learning_rate=0.1, num_leaves=15, min_data_in_leaf=20, seed=0,
                  deterministic=True, num_threads=1, verbose=-1, force_row_wise=True, metric="None")
    b = lgb.train(params, lgb.Dataset(tr.X, tr.y.astype(float), group=np.diff(tr.offsets)), num_boost_round=10)
    np.testing.assert_allclose(ranker.predict(te.X), b.predict(te.X), atol=1e-12)
    tg = QueryGroups.from_offsets(te.y, te.offsets)
    assert ranker.evals_result_["valid_0"][str(m)][-1] == pytest.approx(metric_values(m, b.predict(te.X), tg).mean())


@needs_yahoo
def test_trains_like_lightgbm_lambdarank():
    """Custom objective vs built-in lambdarank (lambdarank_norm=False), 100 trees of the
    example's train.conf settings: the same test nDCG@10 within 0.01, and our custom metric
    equals LightGBM's ndcg@10 evaluation at every iteration."""
    lgb = pytest.importorskip("lightgbm", reason='LightGBM is an optional extra: pip install -e ".[lightgbm]"')
    tr, te = _yahoo()
    T = 30
    base = dict(learning_rate=0.1, num_leaves=31, min_data_in_leaf=50, lambdarank_truncation_level=T,
                lambdarank_norm=False, seed=0, deterministic=True, num_threads=1, verbose=-1, force_row_wise=True,
                metric="ndcg", ndcg_eval_at=[10])
    target = parse_measure("nDCG(gain=exp)@10")
    results = {}
    for kind in ("builtin", "ours"):
        dtr = lgb.Dataset(tr.X, tr.y.astype(float), group=np.diff(tr.offsets))
        dte = lgb.Dataset(te.X, te.y.astype(float), group=np.diff(te.offsets), reference=dtr)
        obj = "lambdarank" if kind == "builtin" else lightgbm_objective(parse_measure("nDCG(gain=exp)"),
                                                                          truncation=T, ideal_cutoff=T)
        rec = {}
        b = lgb.train(dict(base, objective=obj), dtr, num_boost_round=100, valid_sets=[dte], valid_names=["test"],
                      feval=lightgbm_metric(target), callbacks=[lgb.record_evaluation(rec)])
        np.testing.assert_allclose(rec["test"][str(target)], rec["test"]["ndcg@10"], atol=1e-12)
        results[kind] = metric_values(target, b.predict(te.X), QueryGroups.from_offsets(te.y, te.offsets)).mean()
    print("test nDCG@10", results)
    assert results["ours"] == pytest.approx(results["builtin"], abs=0.01), results


# ---------------------------------------------------------------------------------------
# XGBoost
# ---------------------------------------------------------------------------------------
def _xgboost_leaf_sums(xgb, y, offsets, margin, params, weight=None):
    """XGBoost's built-in (G, H) per leaf of a one-document-per-leaf tree, and leaf of each doc."""
    n = len(y)
    X = np.arange(n, dtype=np.float64)[:, None]
    d = xgb.DMatrix(X, label=y.astype(np.float64), base_margin=margin, weight=weight)
    d.set_group(np.diff(offsets))
    p = dict(params, tree_method="hist", max_bin=n + 1, max_depth=0, grow_policy="lossguide", max_leaves=0, min_child_weight=0,
             reg_lambda=0.0, eta=1.0, gamma=0.0, nthread=1, base_score=0.0)
    b = xgb.train(p, d, num_boost_round=1)
    df = b.trees_to_dataframe()
    leaves = df[df.Feature == "Leaf"]
    node = leaves.Node.to_numpy()
    value, H = leaves.Gain.to_numpy(), leaves.Cover.to_numpy()
    leaf_of = b.predict(xgb.DMatrix(X), pred_leaf=True).ravel().astype(int)
    idx = np.searchsorted(node, leaf_of)
    return -value * H, H, idx


@needs_yahoo
@pytest.mark.parametrize("init", ["equal", "random"])
def test_reproduces_xgboost_rank_map_gradients_on_yahoo(init):
    """AP at threshold 2 = rank:map on labels (grade >= 2): all pairs, no normalisation."""
    xgb = pytest.importorskip("xgboost", minversion="3.0", reason='XGBoost is an optional extra: pip install -e ".[xgboost]"')
    tr, _ = _yahoo()
    ybin = (tr.y >= 2).astype(np.int64)
    margin = np.zeros(tr.n_docs) if init == "equal" else np.random.default_rng(2).normal(size=tr.n_docs)
    margin = margin.astype(np.float32).astype(np.float64)
    N = int(np.diff(tr.offsets).max())
    G, H, leaf = _xgboost_leaf_sums(xgb, ybin, tr.offsets, margin, dict(
        objective="rank:map", lambdarank_pair_method="topk", lambdarank_num_pair_per_sample=N,
        lambdarank_normalization=False, lambdarank_score_normalization=False))
    assert len(G) > tr.n_docs / 3                   # fine leaves (documents with equal g/h share one)
    fobj = xgboost_objective(parse_measure("AP(rel=2)"))
    d = xgb.DMatrix(tr.X, label=tr.y.astype(np.float64))
    d.set_group(np.diff(tr.offsets))
    g, h = fobj(margin, d)
    assert np.abs(g).max() > 0.2
    np.testing.assert_allclose(np.bincount(leaf, g, minlength=len(G)), G, atol=1e-6)
    np.testing.assert_allclose(np.bincount(leaf, h, minlength=len(G)), H, atol=1e-6)


@needs_yahoo
@pytest.mark.parametrize("init", ["equal", "random"])
def test_reproduces_xgboost_rank_ndcg_gradients_on_yahoo(init):
    """nDCG(gain=exp) with truncation = ideal_cutoff = 5 vs rank:ndcg (topk, 5 pairs per
    sample, ndcg_exp_gain, no normalisation)."""
    xgb = pytest.importorskip("xgboost", minversion="3.0", reason='XGBoost is an optional extra: pip install -e ".[xgboost]"')
    tr, _ = _yahoo()
    margin = np.zeros(tr.n_docs) if init == "equal" else np.random.default_rng(3).normal(size=tr.n_docs)
    margin = margin.astype(np.float32).astype(np.float64)
    G, H, leaf = _xgboost_leaf_sums(xgb, tr.y, tr.offsets, margin, dict(
        objective="rank:ndcg", lambdarank_pair_method="topk", lambdarank_num_pair_per_sample=5,
        ndcg_exp_gain=True, lambdarank_normalization=False, lambdarank_score_normalization=False))
    assert len(G) > tr.n_docs / 3
    d = xgb.DMatrix(tr.X, label=tr.y.astype(np.float64))
    d.set_group(np.diff(tr.offsets))
    g, h = xgboost_objective(parse_measure("nDCG(gain=exp)"), truncation=5, ideal_cutoff=5)(margin, d)
    assert np.abs(g).max() > 0.2
    np.testing.assert_allclose(np.bincount(leaf, g, minlength=len(G)), G, atol=1e-6)
    np.testing.assert_allclose(np.bincount(leaf, h, minlength=len(G)), H, atol=1e-6)


@needs_yahoo
def test_trains_like_xgboost_rank_map():
    """Custom AP objective vs built-in rank:map (same settings, 50 trees): same test MAP
    within 0.01; our custom metric equals XGBoost's map- evaluation at every iteration."""
    xgb = pytest.importorskip("xgboost", minversion="3.0", reason='XGBoost is an optional extra: pip install -e ".[xgboost]"')
    tr, te = _yahoo()
    N = int(max(np.diff(tr.offsets).max(), np.diff(te.offsets).max()))
    dtr = xgb.DMatrix(tr.X, label=(tr.y >= 2).astype(float))
    dtr.set_group(np.diff(tr.offsets))
    dte = xgb.DMatrix(te.X, label=(te.y >= 2).astype(float))
    dte.set_group(np.diff(te.offsets))
    target = parse_measure("AP")
    params = dict(eta=0.1, max_depth=6, tree_method="hist", nthread=1, seed=0, eval_metric="map-",
                  lambdarank_pair_method="topk", lambdarank_num_pair_per_sample=N,
                  lambdarank_normalization=False, lambdarank_score_normalization=False)
    results = {}
    for kind in ("builtin", "ours"):
        rec = {}
        if kind == "builtin":
            b = xgb.train(dict(params, objective="rank:map"), dtr, 50, evals=[(dte, "test")], evals_result=rec,
                          custom_metric=xgboost_metric(target), verbose_eval=False)
        else:
            b = xgb.train(dict(params, base_score=0.0), dtr, 50, evals=[(dte, "test")], evals_result=rec,
                          obj=xgboost_objective(target), custom_metric=xgboost_metric(target), verbose_eval=False)
        np.testing.assert_allclose(rec["test"][str(target)], rec["test"]["map-"], atol=1e-6)
        results[kind] = rec["test"][str(target)][-1]
    print("test MAP", results)
    assert results["ours"] == pytest.approx(results["builtin"], abs=0.01), results


# ---------------------------------------------------------------------------------------
# python -m analysis.learning --model lambdamart
# ---------------------------------------------------------------------------------------
LM = ["--dataset", "artificial", "--n-queries", "60", "--docs-per-query", "8", "--n-features", "5",
      "--model", "lambdamart", "--trees", "6", "--min-data-in-leaf", "5",
      "--train-metrics", "AP,P@10,nDCG,nDCG@10,GAP,ERR@5", "--test-metrics", "AP,P@10,nDCG@10", "--workers", "1",
      "--no-progress"]


def test_learning_cli_lambdamart_table_and_selection(tmp_path, capsys):
    """The table exists for boosted models; its (nDCG, nDCG@10) cell = 100 x the mean test
    nDCG@10 of train_lambdamart re-run on the same split with the selected rate and trees."""
    pytest.importorskip("lightgbm", reason='LightGBM is an optional extra: pip install -e ".[lightgbm]"')
    from analysis.learning import build_parser, load_splits, main
    from maxent.ltr.boosting import train_lambdamart

    out = tmp_path / "res"
    assert main(LM + ["--out", str(out), "--parts", "table,curves,sweep,optimality", "--fractions", "0.5,1",
                      "--features", "2,all"]) == 0
    captured = capsys.readouterr()
    assert "Tables 2-4" in captured.out and "optimality skipped" in captured.err
    import pandas as pd

    table = pd.read_csv(out / "table.csv")
    assert len(table) == 6 * 3 and set(table.lr) <= {0.05, 0.1} and table.value.between(0, 100).all()
    assert set(pd.read_csv(out / "curves.csv").epoch) == set(range(1, 7))
    sweep = pd.read_csv(out / "sweep.csv")
    assert set(sweep.features) == {2, 5} and set(sweep.fraction) == {0.5, 1.0} and sweep.value.between(0, 100).all()
    cell = table[(table.train == "nDCG") & (table.test == "nDCG@10")].iloc[0]
    args = build_parser().parse_args(LM)
    # the options the recomputation below relies on, as the command read them
    assert (args.model, args.trees, args.min_data_in_leaf, args.n_queries) == ("lambdamart", 6, 5, 60)
    tr, va, te = load_splits(args)
    L = int(max(d.y.max() for d in (tr, va, te))) + 1
    target = parse_measure("nDCG(gain=exp)@10")
    r = train_lambdamart(tr, parse_measure("nDCG(gain=exp)"), valid=va, track=[target], num_trees=6,
                         learning_rate=cell.lr, min_data_in_leaf=5, n_levels=L)
    v = metric_values(target, r.predict(te.X, target), QueryGroups.from_offsets(te.y, te.offsets, L))
    assert cell.value == pytest.approx(100 * v.mean(), abs=1e-6)       # CSV keeps ~10 digits
    assert cell.epoch == r.best[str(target)]["epoch"]


def test_train_lambdamart_selects_per_validation_metric():
    """best[m] is the first maximum of the recorded validation values, and that recorded value
    is the metric recomputed from booster.predict(valid, num_iteration=best)."""
    pytest.importorskip("lightgbm", reason='LightGBM is an optional extra: pip install -e ".[lightgbm]"')
    from maxent.letor import split_queries
    from maxent.synthetic import artificial, make_synthetic
    from maxent.ltr.boosting import train_lambdamart

    tr, va = split_queries(make_synthetic(80, **artificial(10, 6), seed=3), (0.7, 0.3), seed=0)
    L = int(max(tr.y.max(), va.y.max())) + 1
    track = [parse_measure("P@5"), parse_measure("nDCG@5")]
    r = train_lambdamart(tr, parse_measure("AP"), valid=va, track=track, num_trees=8, min_data_in_leaf=5,
                         n_levels=L)
    assert len(r.history) == 8 and {"train:AP", "valid:AP", "valid:P@5", "valid:nDCG@5"} <= set(r.history[0])
    vg = QueryGroups.from_offsets(va.y, va.offsets, L)
    for m in [parse_measure("AP"), *track]:
        vals = [h[f"valid:{m}"] for h in r.history]
        k = r.best[str(m)]["epoch"]
        assert k == int(np.argmax(vals)) + 1 and r.best[str(m)]["value"] == max(vals)
        recomputed = metric_values(m, r.booster.predict(va.X, num_iteration=k), vg).mean()
        assert recomputed == pytest.approx(max(vals), abs=1e-12)
        np.testing.assert_array_equal(r.predict(va.X, m), r.booster.predict(va.X, num_iteration=k))


def test_learning_cli_lambdamart_without_lightgbm(tmp_path, capsys, monkeypatch):
    """Without the extra: one line saying how to install it, exit 1."""
    import sys

    from analysis.learning import main

    monkeypatch.setitem(sys.modules, "lightgbm", None)       # import lightgbm -> ImportError
    assert main(LM + ["--out", str(tmp_path / "r")]) == 1
    assert 'error: LightGBM is an optional extra: pip install -e ".[lightgbm]"' in capsys.readouterr().err


@needs_yahoo
@pytest.mark.parametrize("name", _registry_metrics())
def test_boosting_on_our_objective_raises_the_training_metric(name):
    """End to end, every metric: 15 LightGBM trees on our objective close at least a quarter of
    the gap between the untrained ranking (all scores 0: input order) and the ideal one (by
    grade) on the training queries; a metric that no ranking changes gets zero gradients."""
    lgb = pytest.importorskip("lightgbm", reason='LightGBM is an optional extra: pip install -e ".[lightgbm]"')
    tr, _ = _yahoo()
    m = parse_measure(name)
    groups = QueryGroups.from_offsets(tr.y, tr.offsets)
    params = dict(objective=lightgbm_objective(m), learning_rate=0.3, num_leaves=15, min_data_in_leaf=20, seed=0,
                  deterministic=True, num_threads=1, verbose=-1, force_row_wise=True, metric="None")
    b = lgb.train(params, lgb.Dataset(tr.X, tr.y.astype(float), group=np.diff(tr.offsets)), num_boost_round=15)
    before = metric_values(m, np.zeros(tr.n_docs), groups).mean()
    ideal = metric_values(m, tr.y.astype(float), groups).mean()
    if ideal - before < 1e-12:                      # e.g. recall without a cutoff: always 1
        assert not np.any(params["objective"](np.zeros(tr.n_docs), lgb.Dataset(tr.X, tr.y.astype(float),
                                                                                 group=np.diff(tr.offsets)))[0])
        return
    after = metric_values(m, b.predict(tr.X), groups).mean()
    assert after > before + 0.25 * (ideal - before), (before, after, ideal)
