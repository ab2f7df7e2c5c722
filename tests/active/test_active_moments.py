"""Theorem 3's moments of DCG@k / ERR@k against brute-force enumeration of every label
vector (small lists, the library's own metric ``value`` as the per-vector oracle) and
against Monte Carlo on long lists."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from maxent import RankedLists, parse_measure
from maxent.active import cross_moment, delta_moments, metric_moments
from maxent.errors import ParameterError

METRICS = ["DCG(gain=exp)@4", "DCG@3", "ERR@4", "ERR@2", "ERR(gain=linear)@5"]


def _random_problem(rng, B, U, G, k):
    """B queries with U candidates, two rankings of length k sharing documents, some padding."""
    P = rng.dirichlet(np.ones(G) * 0.7, size=(B, U))
    d1 = np.stack([rng.permutation(U)[:k] for _ in range(B)])
    d2 = np.stack([rng.permutation(U)[:k] for _ in range(B)])
    d1[0, -1] = -1          # a list shorter than k
    d2[1, -2:] = -1
    return P, d1, d2


def _values(metric, grades_u, docs, G):
    """L(r(x), y) for every label vector: the library's metric value (independent oracle)."""
    lab = np.where(docs[None, :] >= 0, grades_u[:, np.maximum(docs, 0)], -1)
    return metric.value(RankedLists.from_grades(lab, np.ones((len(lab), G), int), lengths=np.full(len(lab), lab.shape[1])))


def _brute(metric, P, d1, d2):
    """Exact E[L1], E[L1^2], E[L1 L2] by enumerating all G^U label vectors of each query."""
    B, U, G = P.shape
    out = np.zeros((B, 3))
    Y = np.array(list(itertools.product(range(G), repeat=U)))              # (G^U, U)
    for b in range(B):
        w = np.prod(P[b][np.arange(U)[None, :], Y], axis=1)
        L1, L2 = _values(metric, Y, d1[b], G), _values(metric, Y, d2[b], G)
        out[b] = [w @ L1, w @ L1 ** 2, w @ (L1 * L2)]
    return out


@pytest.mark.parametrize("name", METRICS)
def test_moments_equal_brute_force(name, rng):
    metric = parse_measure(name)
    P, d1, d2 = _random_problem(rng, B=4, U=6, G=3, k=4)
    exact = _brute(metric, P, d1, d2)
    mean, second = metric_moments(metric, P, d1)
    cross = cross_moment(metric, P, d1, d2)
    np.testing.assert_allclose(mean, exact[:, 0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(second, exact[:, 1], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(cross, exact[:, 2], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["DCG(gain=exp)@5", "ERR@5"])
def test_identical_lists_give_zero_difference(name, rng):
    metric = parse_measure(name)
    P, d1, _ = _random_problem(rng, B=3, U=6, G=4, k=5)
    _, _, dmean, dsecond = delta_moments(metric, P, d1, d1)
    np.testing.assert_allclose(dmean, 0.0, atol=1e-14)
    np.testing.assert_allclose(dsecond, 0.0, atol=1e-12)


@pytest.mark.parametrize("name", ["ERR@60", "ERR", "DCG(gain=exp)@60"])
def test_err_linear_second_moment_equals_pairwise_form(name, rng):
    """The O(N) recursion of metric_moments equals the O(N^2 U) pairwise form (cross of a
    list with itself) on long lists."""
    metric = parse_measure(name)
    P, d1, _ = _random_problem(rng, B=5, U=80, G=5, k=70)
    _, second = metric_moments(metric, P, d1)
    np.testing.assert_allclose(second, cross_moment(metric, P, d1, d1), rtol=1e-10)


@pytest.mark.parametrize("name", ["ERR@50", "DCG(gain=exp)@50"])
def test_moments_match_monte_carlo_on_long_lists(name):
    """Sampled label vectors (20,000 per query): mean of L1, L1^2, L1 L2 within 5 standard errors."""
    rng = np.random.default_rng(7)
    metric = parse_measure(name)
    B, U, G, S = 2, 70, 5, 20_000
    P, d1, d2 = _random_problem(rng, B=B, U=U, G=G, k=50)
    mean, second = metric_moments(metric, P, d1)
    cross = cross_moment(metric, P, d1, d2)
    for b in range(B):
        cdf = np.cumsum(P[b], axis=1)
        Y = (rng.random((S, U, 1)) > cdf[None, :, :-1]).sum(axis=2)      # (S, U) sampled grades
        L1, L2 = _values(metric, Y, d1[b], G), _values(metric, Y, d2[b], G)
        for est, samples in ((mean[b], L1), (second[b], L1 ** 2), (cross[b], L1 * L2)):
            se = samples.std() / np.sqrt(S)
            assert abs(est - samples.mean()) < 5 * se + 1e-12


def test_indicator_distribution_gives_metric_value(rng):
    """One-hot P of the real grades: E[L] is the metric and the variance is 0."""
    G = 4
    grades = rng.integers(0, G, size=(6, 10))
    P = np.eye(G)[grades]
    docs = np.tile(np.arange(10), (6, 1))
    for name in ("DCG(gain=exp)@10", "ERR@10", "DCG@5"):
        m = parse_measure(name)
        mean, second = metric_moments(m, P, docs)
        ref = m.value(RankedLists.from_grades(grades, np.ones((6, G), int)))
        np.testing.assert_allclose(mean, ref, rtol=1e-12)
        np.testing.assert_allclose(second, ref ** 2, rtol=1e-12)


@pytest.mark.parametrize("name", ["AP", "nDCG@10", "P@10", "RR"])
def test_unsupported_metrics_are_refused(name):
    P = np.full((1, 3, 2), 0.5)
    with pytest.raises(ParameterError, match="supports DCG and ERR"):
        metric_moments(parse_measure(name), P, np.array([[0, 1, 2]]))
