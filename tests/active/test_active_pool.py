"""Pools for active evaluation: TREC runs + qrels and LETOR data."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from maxent import aggregate, evaluate, parse_measure, read_qrels, read_runs
from maxent.active import (compact, cross_moment, crossfit_probabilities, drop_fraction, letor_pool,
                           metric_moments, trec_pool)
from maxent.active.evaluation import top
from maxent.synthetic import artificial, make_synthetic

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bundled():
    runs = read_runs(ROOT / "trec_runs" / "runs")[:4]
    qrels = read_qrels(ROOT / "trec_runs" / "qrels-rnd1.txt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return runs, qrels, trec_pool(runs, qrels, depth=30)


@pytest.mark.parametrize("name", ["DCG(gain=exp)@10", "ERR@10", "DCG@5"])
def test_pool_truth_equals_trec_eval_conventions(bundled, name):
    """Oracle: maxent.evaluate (trec_eval-conformant ranking and metrics) on the same runs."""
    runs, qrels, pool = bundled
    m = parse_measure(name)
    ref = aggregate(evaluate(qrels, runs, [m])).set_index("run")["value"]
    for run in runs:
        d = top(m, pool.rankings[run.name])
        O, dd = compact(pool.oracle(), d)
        assert metric_moments(m, O, dd)[0].mean() == pytest.approx(ref[run.name], rel=1e-12)


def test_pool_features_are_label_free_and_grades_from_qrels(bundled):
    runs, qrels, pool = bundled
    assert pool.features.shape[:2] == pool.grades.shape
    assert np.isfinite(pool.features).all()
    # share of runs retrieving a candidate is in (0, 1] for real candidates
    f = pool.features[pool.valid][:, 0]
    assert (f > 0).all() and (f <= 1).all()
    assert pool.levels == qrels.max_grade + 1
    np.testing.assert_array_equal(pool.doc_cost, pool.valid.astype(float))


def test_crossfit_probabilities_are_distributions(bundled):
    _, _, pool = bundled
    P = crossfit_probabilities(pool, "logit", folds=3, seed=0)
    np.testing.assert_allclose(P.sum(axis=2), 1.0)
    # informative: relevant candidates get more mass on grades >= 1 than non-relevant ones
    rel = P[..., 1:].sum(axis=2)
    g = pool.grades
    assert rel[g >= 1].mean() > rel[g == 0].mean()


def test_compact_keeps_moments(rng):
    P = rng.dirichlet(np.ones(3), size=(4, 40))
    d1 = np.stack([rng.permutation(40)[:6] for _ in range(4)])
    d2 = np.stack([rng.permutation(40)[:6] for _ in range(4)])
    m = parse_measure("ERR@6")
    small, s1, s2 = compact(P, d1, d2)
    assert small.shape[1] <= 12
    np.testing.assert_allclose(cross_moment(m, small, s1, s2), cross_moment(m, P, d1, d2), rtol=1e-12)


def test_drop_fraction_removes_a_tenth_and_keeps_order(rng):
    docs = np.tile(np.arange(50), (3, 1))
    docs[2, 40:] = -1
    old = drop_fraction(docs, 0.1, rng)
    assert ((old >= 0).sum(axis=1) == [45, 45, 36]).all()
    for row in old:
        kept = row[row >= 0]
        assert (np.diff(kept) > 0).all()              # survivors keep their relative order


def test_letor_pool_sorts_by_score_and_costs_log_length():
    data = make_synthetic(5, **artificial(docs_per_query=8, n_features=4), seed=1)
    scores = {"f0": data.X[:, 0]}
    pool = letor_pool(data, scores, length_feature=1)
    Xp, yp, lengths = data.padded()
    for q in range(5):
        r = pool.rankings["f0"][q][: lengths[q]]
        assert (np.diff(Xp[q, r, 0]) <= 0).all()
    np.testing.assert_allclose(pool.doc_cost[yp >= 0], np.log(2 + np.maximum(Xp[yp >= 0][:, 1], 0)))


def test_sampling_table_single_and_pair(bundled):
    from maxent.active import sampling_table

    runs, qrels, pool = bundled
    P = crossfit_probabilities(pool, "logit", folds=3, seed=0)
    m = parse_measure("ERR@10")
    a, b = runs[0].name, runs[1].name
    one = sampling_table(m, pool, P, a)
    two = sampling_table(m, pool, P, a, b)
    other = sampling_table(m, pool, P, b)
    np.testing.assert_allclose(two["truth"], one["truth"] - other["truth"], atol=1e-12)
    for t in (one, two):
        for method in ("active", "active_uniD", "active_uniC", "passive"):
            assert t[f"q_{method}"].sum() == pytest.approx(1.0)
        assert t["cost"].mean() == pytest.approx(1.0)
    # the union of two top-10 lists holds 10..20 documents
    assert ((two["n_docs"] >= one["n_docs"]) & (two["n_docs"] <= one["n_docs"] + other["n_docs"])).all()
