"""Expectations and gradients of every metric under a product distribution (docs/method.md).

Oracles:
- the metric library's own ``value`` (trec_eval-conformant, tested elsewhere): E[M] at the
  0/1 indicator of the real list must equal it, on every run of the shared collections;
- brute-force enumeration of all outcomes of a small product distribution (2^8 binary,
  3^6 graded lists), each scored with ``value`` and weighted by its probability;
- central finite differences for the gradients;
- the identity GAP = AP for one relevance grade (docs/method.md).
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from maxent.metrics import parse_measure
from maxent.ranked import RankedLists
from tests._realdata import BINARY_THRESHOLD, COLLECTIONS, ranked

BINARY = ["AP", "AP@10", "P@10", "P@5", "R-prec", "RR", "RR@10", "AP(rel=2)", "P@10(rel=2)",
          "R@100", "Success@10"]
GRADED = ["DCG", "DCG@10", "nDCG", "nDCG@10", "nDCG(gain=exp)", "nDCG@10(ideal=all)",
          "nDCG@20(gain=exp,ideal=cut)", "ERR", "ERR@20", "ERR(gain=linear)", "GAP",
          "GAP(g=0.5,0.5)", "GAP(g=0.2,0.8)", "GAP@10"]
ALL = BINARY + GRADED


def _lists(rng, B, N, L=3, unjudged=True):
    lo = -1 if unjudged else 0
    grades = rng.integers(lo, L, size=(B, N))
    lengths = rng.integers(1, N + 1, size=B)
    lengths[0] = N
    rel_counts = rng.integers(1, 6, size=(B, L)) + np.bincount(
        np.repeat(np.arange(B), N), weights=np.zeros(B * N), minlength=B)[:, None].astype(int)
    lists = RankedLists.from_grades(grades, rel_counts, lengths=lengths)
    # qrels must hold at least the retrieved judged documents of each grade
    need = lists.retrieved_counts()
    rc = np.maximum(lists.rel_counts, need + rng.integers(0, 3, size=need.shape))
    return RankedLists.from_grades(lists.grades, rc, lengths=lengths)


def _random_p(rng, metric, lists):
    """A product distribution strictly inside (0, 1), 0 beyond each length."""
    B, N, L = len(lists), lists.depth, lists.levels
    inside = (np.arange(N)[None, :] < lists.lengths[:, None])
    if metric.GRADED:
        x = rng.gamma(1.0, size=(B, N, L))
        return x / x.sum(axis=2, keepdims=True) * inside[:, :, None]
    return rng.uniform(0.02, 0.98, size=(B, N)) * inside


# ----------------------------------------------------------------- indicator == value
@pytest.mark.parametrize("name", ALL)
def test_indicator_expectation_equals_value_random(name):
    rng = np.random.default_rng(1)
    m = parse_measure(name)
    lists = _lists(rng, 40, 60)
    np.testing.assert_allclose(m.expectation(m.indicator(lists), lists), m.value(lists),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("collection", COLLECTIONS)
def test_indicator_expectation_equals_value_on_every_real_run(collection):
    """Every (run, topic) list of the shared collection, every metric with an expectation."""
    lists = ranked(collection)
    t = BINARY_THRESHOLD[collection]
    names = [n if t == 1 or parse_measure(n).GRADED or "rel=" in n else f"{n}(rel={t})"
             for n in ALL]
    for name in names:
        m = parse_measure(name)
        for s in range(0, len(lists), 800):   # chunks keep the graded arrays small
            sub = lists.take(np.arange(s, min(len(lists), s + 800)))
            got = m.expectation(m.indicator(sub), sub)
            np.testing.assert_allclose(got, m.value(sub), rtol=0, atol=1e-11, err_msg=name)


# ----------------------------------------------------------------- brute-force enumeration
@pytest.mark.parametrize("name", ALL)
def test_expectation_equals_enumeration(name):
    """E[M](p) = sum over all outcomes x of P(x) M(x) for a small product distribution."""
    rng = np.random.default_rng(2)
    m = parse_measure(name)
    N, L = (6, 3) if m.GRADED else (8, 3)
    rel_counts = np.array([[20, 4, 3]])
    base = RankedLists.from_grades(np.zeros((1, N), dtype=int), rel_counts)
    p = _random_p(rng, m, base)                                # (1, N[, L])
    cats = L if m.GRADED else 2
    outcomes = np.array(list(itertools.product(range(cats), repeat=N)))   # (X, N)
    if m.GRADED:
        prob = np.prod(p[0][np.arange(N)[None, :], outcomes], axis=1)
        grades = outcomes
    else:
        q = p[0]
        prob = np.prod(np.where(outcomes == 1, q, 1 - q), axis=1)
        grades = outcomes * m.binary_threshold
    lists = RankedLists.from_grades(grades, np.repeat(rel_counts, len(outcomes), axis=0))
    brute = float((prob * m.value(lists)).sum())
    assert abs(prob.sum() - 1) < 1e-12
    np.testing.assert_allclose(m.expectation(p, base), [brute], rtol=1e-12, atol=1e-13)


# ----------------------------------------------------------------- gradients
@pytest.mark.parametrize("name", ALL)
def test_gradient_matches_central_differences(name):
    rng = np.random.default_rng(3)
    m = parse_measure(name)
    lists = _lists(rng, 3, 25)
    p = _random_p(rng, m, lists)
    g = m.gradient(p, lists)
    assert g.shape == p.shape
    h = 1e-6
    fd = np.zeros_like(p)
    flat = p.reshape(len(p), -1)
    for j in range(flat.shape[1]):          # one coordinate at a time, all lists at once
        e = np.zeros_like(flat)
        e[:, j] = h
        up = m.expectation((flat + e).reshape(p.shape), lists)
        dn = m.expectation((flat - e).reshape(p.shape), lists)
        fd.reshape(len(p), -1)[:, j] = (up - dn) / (2 * h)
    inside = (np.arange(lists.depth)[None, :] < lists.lengths[:, None])
    mask = inside[:, :, None] if p.ndim == 3 else inside
    np.testing.assert_allclose(np.where(mask, g, 0), np.where(mask, fd, 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", BINARY)
def test_binary_metric_gradient_through_graded_p(name):
    """A binary metric given graded p uses Q(rel) = sum_{z>=rel} p(z); chain rule."""
    rng = np.random.default_rng(4)
    m = parse_measure(name)
    lists = _lists(rng, 4, 20)
    x = rng.gamma(1.0, size=(4, 20, 3))
    p = x / x.sum(axis=2, keepdims=True) * (np.arange(20)[None, :] < lists.lengths[:, None])[:, :, None]
    q = p[:, :, m.binary_threshold:].sum(axis=2)
    np.testing.assert_allclose(m.expectation(p, lists), m.expectation(q, lists), atol=1e-14)
    gq = m.gradient(q, lists)
    gp = m.gradient(p, lists)
    z = np.arange(3) >= m.binary_threshold
    np.testing.assert_allclose(gp, gq[:, :, None] * z[None, None, :], atol=1e-14)


# ----------------------------------------------------------------- GAP -> AP
def test_gap_expectation_reduces_to_ap_for_one_grade():
    """With grades {0, 1}, GAP(g=1) = AP (docs/method.md), also in expectation."""
    rng = np.random.default_rng(5)
    lists = _lists(rng, 30, 50, L=2)
    gap, ap = parse_measure("GAP"), parse_measure("AP")
    x = rng.uniform(0.01, 0.99, size=(30, 50)) * (np.arange(50)[None, :] < lists.lengths[:, None])
    p = np.stack([1 - x, x], axis=2) * (x > 0)[:, :, None]
    np.testing.assert_allclose(gap.expectation(p, lists), ap.expectation(x, lists), atol=1e-14)
    np.testing.assert_allclose(gap.gradient(p, lists)[:, :, 1] - gap.gradient(p, lists)[:, :, 0],
                               ap.gradient(x, lists), atol=1e-14)
    np.testing.assert_allclose(gap.value(lists), ap.value(lists), atol=1e-14)


def test_linear_metrics_are_linear():
    """LINEAR_IN_P metrics: E[M](p) = <dE/dp, p> exactly (no constant term)."""
    rng = np.random.default_rng(6)
    lists = _lists(rng, 10, 40)
    for name in ["P@10", "R-prec", "R@100", "DCG@10", "nDCG", "nDCG(gain=exp)@20"]:
        m = parse_measure(name)
        assert m.LINEAR_IN_P
        p = _random_p(rng, m, lists)
        g = m.gradient(p, lists)
        axes = tuple(range(1, p.ndim))
        np.testing.assert_allclose((g * p).sum(axis=axes), m.expectation(p, lists), atol=1e-13)
