"""Registry-driven swap deltas (the method page's swap deltas): every registered metric that
declares ``HAS_SWAP_DELTA`` gets the same tests, and a metric that lacks what its declared
capabilities require fails here.

Oracle for every delta: brute force. Swap the documents at ranks a and b, recompute the
metric with its own ``value`` (``Metric.value`` on ``RankedLists``), subtract. The block,
strip and dense forms that the LambdaRank kernels read are checked against the same oracle.
"""
from __future__ import annotations

import numpy as np
import pytest

from maxent.errors import ParameterError
from maxent.ltr.lambdas import DeltaContext
from maxent.metrics import METRICS, Metric, parse_measure
from maxent.metrics._deltas import DeltaSide
from maxent.ranked import RankedLists

from tests._oracles import brute_force_swap_deltas

# Examples per registered class with a swap delta: defaults, thresholds, cutoffs, and gain maps
# that reorder grades (gain(1) > gain(2)), which the ideal DCG must sort by gain, not grade.
EXAMPLES = {
    "AP": ["AP", "AP(rel=2)"],
    "P": ["P@1", "P@3", "P@5(rel=2)"],
    "R": ["R@3", "R@2(rel=2)"],
    "RR": ["RR", "RR(rel=2)"],
    "nDCG": ["nDCG", "nDCG@3", "nDCG@4(gain=exp)", "nDCG@3(ideal=all)", "nDCG(gain=1:3,2:1)",
             "nDCG@2(gain=1:5,2:1,3:2)", "nDCG@3(discount=jk)", "nDCG(gain=0:1,1:0,3:2)"],
    "DCG": ["DCG", "DCG@3(gain=exp)", "DCG(gain=1:3,2:1)"],
    "ERR": ["ERR", "ERR@3", "ERR@4(gain=linear)", "ERR(gain=1:3,2:1)", "ERR(max_grade=5)"],
    "GAP": ["GAP", "GAP(g=0.5,0.5)", "GAP(g=0.2,0.3,0.5)", "GAP(g=0,1)"],
    "RBP": ["RBP", "RBP(p=0.5,rel=2)@3", "RBP(gain=linear)", "RBP(p=0.9,gain=1:3,2:1)", "RBP(gain=exp,max_grade=2)@4"],
}
DELTA_CLASSES = [c for c in METRICS if c.HAS_SWAP_DELTA]
INSTANCES = [c() for c in DELTA_CLASSES if c.NAME not in EXAMPLES and c().delta_unsupported() is None] + [
    parse_measure(n) for c in DELTA_CLASSES for n in EXAMPLES.get(c.NAME, [])]
L = 4   # grade levels 0..3 in the random cases


def test_every_class_with_a_delta_is_exercised():
    """Every registered class with a delta: its listed examples, or its defaults."""
    assert {type(m) for m in INSTANCES} == set(DELTA_CLASSES)


def _overrides(cls, name) -> bool:
    return getattr(cls, name) is not getattr(Metric, name)


@pytest.mark.parametrize("cls", METRICS, ids=lambda c: c.NAME)
def test_declared_capabilities_are_implemented(cls):
    """HAS_SWAP_DELTA needs swap_delta, delta_side and delta_blocks; DELTA_STRIP needs
    delta_strip and a delta_depth; SMOOTH_FORM needs its form (SoftRank / ApproxRank)."""
    if cls.HAS_SWAP_DELTA:
        for name in ("swap_delta", "delta_side", "delta_blocks"):
            assert _overrides(cls, name), f"{cls.NAME} declares HAS_SWAP_DELTA but lacks {name}"
    else:
        m = cls()
        assert m.delta_unsupported(), f"{cls.NAME} must say why it has no delta"
        with pytest.raises(ParameterError, match="no LambdaRank swap delta"):
            DeltaContext(m, [[1, 1]])
    if cls.DELTA_STRIP:
        assert cls.HAS_SWAP_DELTA and _overrides(cls, "delta_strip") and _overrides(cls, "delta_depth")
    if cls.SMOOTH_FORM == "positional":
        for name in ("positional_form", "smooth_discount", "rank_discount"):
            assert callable(getattr(cls, name, None)), f"{cls.NAME}: positional form lacks {name}"
    elif cls.SMOOTH_FORM == "pairwise":
        for name in ("pair_form", "pair_factors"):
            assert callable(getattr(cls, name, None)), f"{cls.NAME}: pairwise form lacks {name}"
    else:
        assert cls.SMOOTH_FORM is None


def _random_cases(rng, n_cases=40):
    """Lists with ties (few grades, many documents), unjudged documents (-1) and relevant
    documents missing from the list (qrels counts above the retrieved ones)."""
    for _ in range(n_cases):
        N = int(rng.integers(1, 11))
        grades = rng.integers(-1, L, N)
        counts = np.bincount(grades[grades >= 0], minlength=L)
        counts = counts + rng.integers(0, 3, L)
        yield grades, counts


def _all_patterns():
    """Every grade pattern of length 4 over -1..2 (4^4 lists), qrels = retrieved + one of
    each grade 0..3 (the qrels know grade 3, so GAP(g=0.2,0.3,0.5) has a grade for each
    weight: a weight on a grade the qrels lack is refused)."""
    pats = np.array(np.meshgrid(*[np.arange(-1, 3)] * 4, indexing="ij")).reshape(4, -1).T
    for g in pats:
        yield g, np.bincount(g[g >= 0], minlength=4) + 1


def _check(m, grades, counts):
    got = m.swap_delta(grades, counts, lengths=[len(grades)])
    want = brute_force_swap_deltas(m, grades, counts)
    np.testing.assert_allclose(got, want, atol=1e-12, err_msg=f"{m} grades={grades} counts={counts}")


@pytest.mark.parametrize("m", INSTANCES, ids=str)
def test_swap_delta_equalsbrute_force_swap_deltas(m, rng):
    for grades, counts in _random_cases(rng):
        _check(m, grades, counts)


@pytest.mark.parametrize("m", INSTANCES, ids=str)
def test_swap_delta_every_grade_pattern(m):
    for grades, counts in _all_patterns():
        _check(m, grades, counts)


@pytest.mark.parametrize("m", INSTANCES, ids=str)
def test_swap_delta_batch_with_padding(m, rng):
    """A padded batch with a DeltaSide gives each row its own deltas and zeros on padding."""
    cases = list(_random_cases(rng, 6))
    N = max(len(g) for g, _ in cases)
    G = np.full((len(cases), N), -1)
    for i, (g, _) in enumerate(cases):
        G[i, : len(g)] = g
    side = m.delta_side(np.stack([c for _, c in cases]))
    assert isinstance(side, DeltaSide)
    got = m.swap_delta(G, side, lengths=[len(g) for g, _ in cases])
    for i, (g, c) in enumerate(cases):
        n = len(g)
        np.testing.assert_allclose(got[i, :n, :n], brute_force_swap_deltas(m, g, c), atol=1e-12)
        assert not got[i, n:].any() and not got[i, :, n:].any()
        np.testing.assert_allclose(got[i], got[i].T, atol=0)            # symmetric
        assert not np.diagonal(got[i]).any()


def _from_blocks(blocks, n):
    """|Delta| matrix (better row, worse column) assembled from outer-sum blocks."""
    W = np.zeros((n, n))
    for I, J, p1, q1, p2, q2 in blocks:
        P1, Q1, P2, Q2 = (np.broadcast_to(np.asarray(v, dtype=float), (n,)) for v in (p1, q1, p2, q2))
        above = np.less.outer(I, J)
        W[np.ix_(I, J)] += np.where(above, P1[I][:, None] + Q1[J][None, :], P2[I][:, None] + Q2[J][None, :])
    return W


@pytest.mark.parametrize("m", INSTANCES, ids=str)
def test_block_strip_and_dense_forms_equalbrute_force_swap_deltas(m, rng):
    """The three shapes the LambdaRank kernels read: outer-sum blocks (better x worse),
    the K x n strip of signed deltas, and |Delta| on pairs of higher x lower grade."""
    for grades, counts in _random_cases(rng, 30):
        n = len(grades)
        want = brute_force_swap_deltas(m, grades, counts)
        better = grades[:, None] > grades[None, :]
        side = m.delta_side(counts[None])
        blocks = m.delta_blocks(grades, side, 0)
        if blocks is not None:
            np.testing.assert_allclose(_from_blocks(blocks, n) * better, np.abs(want) * better, atol=1e-12,
                                       err_msg=f"{m} blocks grades={grades}")
        dense = m.abs_delta_better(grades[None], side, np.ones((1, n), bool))[0]
        np.testing.assert_allclose(dense, np.abs(want) * better, atol=1e-12, err_msg=f"{m} dense")
        K = m.delta_depth()
        if m.DELTA_STRIP and K is not None:
            T = m.delta_strip(grades, side, 0, K)
            if T is not None:
                k = min(K, n)
                upper = np.less.outer(np.arange(k), np.arange(n))
                np.testing.assert_allclose(T[:k] * upper, want[:k] * upper, atol=1e-12)
                # pairs with both ranks >= K have delta 0: the strip holds every pair that matters
                assert not want[K:, K:].any()


def test_ideal_dcg_sorts_by_gain_not_grade():
    """nDCG(gain=1:3,2:1) with qrels counts R_0..R_2 = [5, 2, 1]: the ideal list puts the two
    grade-1 documents (gain 3) first. Hand oracle: 3/log2(2) + 3/log2(3) + 1/log2(4) = 5.3928;
    sorted by grade it would be 1 + 3/log2(3) + 3/2 = 4.3928 (the old LambdaRank's value)."""
    m = parse_measure("nDCG(gain=1:3,2:1)")
    idcg = 3 + 3 / np.log2(3) + 0.5
    assert idcg == pytest.approx(5.392789, abs=1e-6)
    side = m.delta_side([[5, 2, 1]])
    np.testing.assert_allclose(side.scale, [1 / idcg], rtol=1e-15)
    ideal = RankedLists.from_grades([[1, 1, 2]], [[5, 2, 1]])
    assert m.value(ideal)[0] == pytest.approx(1.0, abs=1e-15)
    g = np.array([2, 0, 1, 1])
    np.testing.assert_allclose(m.swap_delta(g, [5, 2, 1]), brute_force_swap_deltas(m, g, np.array([5, 2, 1])), atol=1e-15)


@pytest.mark.parametrize("name", ["AP@10", "RR@5", "GAP@5", "R-prec", "Success@5", "Bpref", "SetP"])
def test_metrics_without_a_delta_say_so(name):
    m = parse_measure(name)
    assert m.delta_unsupported()
    with pytest.raises(ParameterError, match="no LambdaRank swap delta"):
        m.swap_delta([1, 0], [[1, 1]])
