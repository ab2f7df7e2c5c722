"""Swap deltas and LambdaRank gradients against brute force with the metric library.

Oracle for every swap delta: swap the two documents and recompute the metric with
``maxent.metrics`` (``Metric.value`` on ``RankedLists``). Oracle for the lambdas: the
definition (Donmez et al. 2009 eqs. 4-7) evaluated pair by pair in plain Python from those deltas.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from maxent.errors import ParameterError
from maxent.ltr.lambdas import DeltaContext, lambda_gradients, rank_by_score, swap_deltas
from maxent.metrics import parse_measure

from tests._oracles import brute_force_swap_deltas

METRICS = ["AP", "AP(rel=2)", "P@3", "P@5(rel=2)", "nDCG", "nDCG@3", "nDCG@4(gain=exp)",
           "nDCG(gain=exp)", "nDCG@3(ideal=all)", "RR", "RR(rel=2)", "GAP", "GAP(g=0.5,0.5)",
           "GAP(g=0.2,0.3,0.5)", "ERR@4", "ERR", "ERR@5(gain=linear)"]


def _random_case(rng, L=4):
    """One ranked list with ties, unjudged (-1) documents and judged-but-unretrieved ones."""
    N = int(rng.integers(1, 10))
    grades = rng.integers(-1, L, N)
    counts = np.bincount(grades[grades >= 0], minlength=L)
    counts = counts + rng.integers(0, 2, L)           # qrels may hold unretrieved documents
    return grades, counts


@pytest.mark.parametrize("name", METRICS)
def test_swap_deltas_equalbrute_force_swap_deltas(name):
    m = parse_measure(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # stable across processes
    for _ in range(60):
        grades, counts = _random_case(rng)
        got = swap_deltas(m, grades, counts, lengths=[len(grades)])
        want = brute_force_swap_deltas(m, grades, counts)
        np.testing.assert_allclose(got, want, atol=1e-12, err_msg=f"{name} grades={grades} counts={counts}")


@pytest.mark.parametrize("name", ["AP", "nDCG@3", "GAP", "RR", "ERR@4"])
def test_swap_deltas_batched_equal_single(name):
    """A padded batch gives each row's own deltas and zeros on padding."""
    m = parse_measure(name)
    rng = np.random.default_rng(7)
    cases = [_random_case(rng) for _ in range(5)]
    N = max(len(g) for g, _ in cases)
    G = np.full((5, N), -1)
    for i, (g, _) in enumerate(cases):
        G[i, : len(g)] = g
    C = np.stack([c for _, c in cases])
    lengths = [len(g) for g, _ in cases]
    got = swap_deltas(m, G, C, lengths=lengths)
    for i, (g, c) in enumerate(cases):
        n = len(g)
        np.testing.assert_allclose(got[i, :n, :n], brute_force_swap_deltas(m, g, c), atol=1e-12)
        assert not got[i, n:].any() and not got[i, :, n:].any()


def test_all_grade_patterns_small_lists():
    """Every grade pattern of length 4 over grades 0..2 (3^4 lists), AP / nDCG / GAP / RR."""
    pats = np.array(np.meshgrid(*[np.arange(3)] * 4, indexing="ij")).reshape(4, -1).T
    for name in ["AP", "nDCG(gain=exp)", "GAP(g=0.5,0.5)", "RR", "P@2", "ERR@3"]:
        m = parse_measure(name)
        for g in pats:
            counts = np.bincount(g, minlength=3)
            np.testing.assert_allclose(swap_deltas(m, g, counts), brute_force_swap_deltas(m, g, counts), atol=1e-12)


def _naive_lambdas(m, s, y, counts, sigma):
    order = np.argsort(-s, kind="stable")
    ys = y[order]
    D = swap_deltas(m, ys, counts)
    lam = np.zeros(len(s))
    for a in range(len(s)):
        for b in range(len(s)):
            if ys[a] > ys[b]:
                i, j = order[a], order[b]
                w = sigma * abs(D[a, b]) / (1.0 + np.exp(sigma * (s[i] - s[j])))
                lam[i] += w
                lam[j] -= w
    return lam


@pytest.mark.parametrize("method", ["dense", "blocks"])
@pytest.mark.parametrize("name", ["AP", "AP(rel=2)", "P@3", "nDCG", "nDCG@3(gain=exp)", "RR", "RR(rel=2)",
                                  "GAP", "GAP(g=0.2,0.3,0.5)", "ERR@4", "ERR@2", "nDCG@2(gain=1:5,2:1,3:2)"])
def test_lambdas_equal_pairwise_definition(name, method):
    """Both kernels (all N x N pairs; grade blocks / top-k strip) against the definition.
    Lists of up to 16 documents, so the top-k strip (4 k < n) is exercised too."""
    m = parse_measure(name)
    rng = np.random.default_rng(3)
    for _ in range(30):
        B, N = 3, int(rng.integers(1, 17))
        y = rng.integers(0, 4, (B, N))
        s = np.round(rng.standard_normal((B, N)), 1)     # rounded: score ties
        lengths = rng.integers(1, N + 1, B)
        for b in range(B):
            y[b, lengths[b]:] = -1
        counts = np.stack([np.bincount(y[b][y[b] >= 0], minlength=4) for b in range(B)])
        lam = lambda_gradients(s, y, DeltaContext(m, counts), sigma=0.7, method=method)
        for b in range(B):
            n = lengths[b]
            np.testing.assert_allclose(lam[b, :n], _naive_lambdas(m, s[b, :n], y[b, :n], counts[b], 0.7),
                                       atol=1e-12)
            assert not lam[b, n:].any()


GRID = ["AP", "P@3", "nDCG", "nDCG@3(gain=exp)", "RR", "GAP", "GAP(g=0.2,0.3,0.5)", "ERR@4", "ERR",
        "nDCG@2(gain=1:5,2:1,3:2)"]


@pytest.mark.parametrize("name", GRID)
def test_block_kernel_equals_dense_kernel(name):
    """Oracle: the dense kernel (itself checked against the definition above). Unjudged (-1)
    documents inside the lists, truncation (strip and block splitting), norm, hessian, sigma."""
    m = parse_measure(name)
    rng = np.random.default_rng(11)
    for _ in range(25):
        B, N = 2, int(rng.integers(1, 40))
        y = rng.integers(-1, 4, (B, N))
        s = np.round(rng.standard_normal((B, N)), 1)
        lengths = rng.integers(1, N + 1, B)
        counts = np.stack([np.bincount(np.maximum(y[b], 0), minlength=4) for b in range(B)])
        ctx = DeltaContext(m, counts)
        for kw in ({}, {"truncation": 2}, {"truncation": 7}, {"norm": True},
                   {"return_hessian": True, "sigma": 0.7}):
            d = lambda_gradients(s, y, ctx, lengths=lengths, method="dense", **kw)
            bl = lambda_gradients(s, y, ctx, lengths=lengths, method="blocks", **kw)
            np.testing.assert_allclose(np.asarray(bl), np.asarray(d), rtol=0, atol=1e-12, err_msg=str(kw))


def test_block_kernel_long_list_and_wide_scores():
    """200 documents (auto picks blocks) against the dense kernel; a score range beyond 700 / sigma
    takes the direct sigmoid and stays exact."""
    rng = np.random.default_rng(5)
    y = rng.integers(0, 5, (1, 200))
    counts = np.bincount(y[0], minlength=5)[None]
    for scale in (1.0, 400.0):
        s = scale * rng.standard_normal((1, 200))
        for name in ("nDCG(gain=exp)", "GAP", "AP", "ERR"):
            ctx = DeltaContext(parse_measure(name), counts)
            d, hd = lambda_gradients(s, y, ctx, method="dense", return_hessian=True)
            b, hb = lambda_gradients(s, y, ctx, return_hessian=True)
            np.testing.assert_allclose(b, d, rtol=1e-10, atol=1e-13)
            np.testing.assert_allclose(hb, hd, rtol=1e-10, atol=1e-13)


def test_lambda_properties():
    """Lambdas sum to zero per query (equal and opposite pair forces, Donmez et al. 2009 section 4.1)
    and push the relevant document up when it is ranked below a non-relevant one."""
    m = parse_measure("AP")
    s = np.array([[2.0, 1.0, 0.0]])
    y = np.array([[0, 0, 1]])
    lam = lambda_gradients(s, y, DeltaContext(m, [[2, 1]]))
    assert lam[0, 2] > 0 > lam[0, 0]
    assert abs(lam.sum()) < 1e-15


def test_rows_select_context():
    m = parse_measure("nDCG@3")
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, (6, 5))
    counts = np.stack([np.bincount(r, minlength=3) for r in y])
    s = rng.standard_normal((6, 5))
    ctx = DeltaContext(m, counts)
    rows = np.array([4, 1])
    np.testing.assert_allclose(lambda_gradients(s[rows], y[rows], ctx, rows=rows),
                               lambda_gradients(s, y, ctx)[rows], atol=1e-15)


def test_norm_and_truncation():
    """norm scales by log2(1+S)/S (LightGBM lambdarank_norm); truncation=1 keeps only pairs
    with a document at rank 1."""
    m = parse_measure("nDCG")
    s = np.array([[3.0, 2.0, 1.0, 0.0]])
    y = np.array([[0, 2, 1, 0]])
    ctx = DeltaContext(m, [[2, 1, 1]])
    plain = lambda_gradients(s, y, ctx)
    # S = sum over pairs l_a > l_b of |Delta_ab| rho_ab (ranked order = input order here)
    D = np.abs(swap_deltas(m, y[0], [2, 1, 1]))
    better = y[0][:, None] > y[0][None, :]
    S = (D / (1 + np.exp(s[0][:, None] - s[0][None, :])))[better].sum()
    np.testing.assert_allclose(lambda_gradients(s, y, ctx, norm=True), plain * np.log2(1 + S) / S)
    trunc = lambda_gradients(s, y, ctx, truncation=1)
    assert trunc[0, 3] == 0 and trunc[0, 0] < 0     # doc 4 (grade 0) pairs with no doc at rank 1


def test_pair_sigmoid_survives_wide_scores():
    """Score gaps beyond exp's range take the direct path and stay finite."""
    m = parse_measure("AP")
    s = np.array([[1000.0, -1000.0, 0.0]])
    y = np.array([[0, 1, 1]])
    lam = lambda_gradients(s, y, DeltaContext(m, [[1, 2]]))
    assert np.isfinite(lam).all() and lam[0, 1] > 0


def test_rank_by_score_ties_and_padding():
    order = rank_by_score(np.array([[1.0, 3.0, 3.0, 9.0]]), lengths=[3])
    assert order.tolist() == [[1, 2, 0, 3]]          # ties by input order; padding last


def test_unsupported_metrics_raise():
    with pytest.raises(ParameterError):
        DeltaContext(parse_measure("AP@10"), [[1, 1]])
    with pytest.raises(ParameterError, match="no LambdaRank swap delta"):
        DeltaContext(parse_measure("Rprec"), [[1, 1]])
    with pytest.raises(ParameterError, match="metric object"):
        DeltaContext("AP", [[1, 1]])
    with pytest.raises(ParameterError):
        lambda_gradients([[1.0]], [[1]], DeltaContext(parse_measure("AP"), [[0, 1]]), sigma=0)
    with pytest.raises(ParameterError):
        lambda_gradients([[1.0]], [[1]], DeltaContext(parse_measure("AP"), [[0, 1]]), method="fast")
