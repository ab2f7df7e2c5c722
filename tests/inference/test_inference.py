"""Inferred PR curves and their errors (maxent.inference; docs/method.md)."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from maxent.errors import ParameterError
from maxent.inference import (
    _batched_searchsorted, inferred_pr_at, kendall_tau, pr_errors, real_pr_points, rms,
    threshold_probabilities,
)
from maxent.ranked import RankedLists


def _lists(grades, rel_counts):
    return RankedLists.from_grades(np.array(grades), np.array(rel_counts))


def test_real_points_hand_example():
    # relevant at ranks 2 and 4 of 5; R = 3 -> points (1/3, 1/2) and (2/3, 2/4)
    lists = _lists([[0, 1, 0, 2, -1]], [[5, 2, 1]])
    ranks, valid, R = real_pr_points(lists, 1)
    assert ranks[0, valid[0]].tolist() == [2, 4] and R.tolist() == [3]
    ranks2, valid2, R2 = real_pr_points(lists, 2)
    assert ranks2[0, valid2[0]].tolist() == [4] and R2.tolist() == [1]


@pytest.mark.parametrize("alignment", ["recall", "rank"])
def test_indicator_distribution_has_zero_error(alignment):
    rng = np.random.default_rng(0)
    g = rng.integers(-1, 3, size=(20, 50))
    lists = _lists(g, np.tile([40, 10, 10], (20, 1)))
    for t in (1, 2):
        q = (lists.grades >= t).astype(float)
        e = pr_errors(q, lists, t, alignment)
        has = e.n_points > 0
        np.testing.assert_allclose(e.rms[has], 0.0, atol=1e-12)
        np.testing.assert_allclose(e.mae[has], 0.0, atol=1e-12)
        assert np.isnan(e.rms[~has]).all()


def test_recall_aligned_hand_example():
    # q = 0.5 everywhere: C(x) = x/2 reaches i at x = 2i, so inferred precision is always 1/2.
    # Real points: relevant at ranks 1 and 4 -> precisions 1 and 1/2 -> errors 0.5 and 0.
    lists = _lists([[1, 0, 0, 1]], [[2, 2]])
    q = np.full((1, 4), 0.5)
    ranks, valid, _ = real_pr_points(lists, 1)
    np.testing.assert_allclose(inferred_pr_at(q, ranks, valid, "recall")[0], [0.5, 0.5])
    e = pr_errors(q, lists, 1, "recall")
    np.testing.assert_allclose(e.rms, [np.sqrt((0.25 + 0) / 2)])
    np.testing.assert_allclose(e.mae, [0.25])
    # rank-aligned: Pe(1) = 0.5, Pe(4) = 0.5 -> the same errors here
    np.testing.assert_allclose(inferred_pr_at(q, ranks, valid, "rank")[0], [0.5, 0.5])


def test_unreached_recall_scores_zero_precision():
    # inferred mass 1.5 < 2 relevant: the second point is never reached -> inferred precision 0
    lists = _lists([[1, 1, 0]], [[1, 2]])
    q = np.array([[0.5, 0.5, 0.5]])
    ranks, valid, _ = real_pr_points(lists, 1)
    got = inferred_pr_at(q, ranks, valid, "recall")[0]
    assert got[1] == 0.0 and got[0] == pytest.approx(1 / 2)  # C(x) = 1 at x = 2


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 30), st.integers(0, 2**31 - 1))
def test_batched_searchsorted_matches_numpy(B, N, seed):
    rng = np.random.default_rng(seed)
    C = np.cumsum(rng.random((B, N)), axis=1)
    targets = rng.random((B, 7)) * (C[:, -1:] + 1)
    got = _batched_searchsorted(C, targets)
    want = np.stack([np.searchsorted(C[b], targets[b]) for b in range(B)])
    np.testing.assert_array_equal(got, want)


def test_threshold_probabilities_sums_grades():
    p = np.array([[[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]]])
    np.testing.assert_allclose(threshold_probabilities(p, 1), [[0.8, 0.0]])
    np.testing.assert_allclose(threshold_probabilities(p, 2), [[0.5, 0.0]])
    q = np.array([[0.1, 0.2]])
    # binary p is P(relevant at the solve's threshold) already: returned unchanged at any t
    assert np.array_equal(threshold_probabilities(q, 2), q) and np.array_equal(threshold_probabilities(q, 1), q)


def test_rms_and_tau():
    assert rms([1, 2, 3], [1, 2, 5]) == pytest.approx(np.sqrt(4 / 3))
    assert kendall_tau([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)


def test_pr_curves_hand_values():
    """Real curve: relevant at ranks 1 and 3 of a topic with R = 4 -> (1/4, 1), (2/4, 2/3).
    Expected curve (docs/method.md): q = (0.5, 0.5, 1): C = (0.5, 1, 2), Re = C/4,
    Pe = C/n = (0.5, 0.5, 2/3)."""
    from maxent.inference import expected_pr_curve, real_pr_curve
    from maxent.ranked import RankedLists

    lists = RankedLists.from_grades([[1, 0, 1]], [[1, 4]])
    rec, prec, valid = real_pr_curve(lists, 1)
    np.testing.assert_allclose(rec[valid], [0.25, 0.5])
    np.testing.assert_allclose(prec[valid], [1.0, 2 / 3])
    erec, eprec = expected_pr_curve(np.array([[0.5, 0.5, 1.0]]), [4])
    np.testing.assert_allclose(erec, [[0.125, 0.25, 0.5]])
    np.testing.assert_allclose(eprec, [[0.5, 0.5, 2 / 3]])


@pytest.mark.parametrize("seed", range(6))
def test_kendall_tau_against_scipy(seed):
    """tau-b with ties in either ranking and NaN pairs dropped, as scipy.stats.kendalltau;
    the blocks of rows (long inputs) give the same value as one block."""
    from scipy import stats

    rng = np.random.default_rng(seed)
    n = [2, 5, 30, 200, 1500, 3001][seed]
    a = rng.integers(0, max(2, n // 4), n).astype(float)       # many ties
    b = a + rng.normal(0, 2, n).round(1) * (seed % 2)            # ties in b too when seed is even
    a[rng.random(n) < 0.05] = np.nan
    ok = np.isfinite(a) & np.isfinite(b)
    with warnings.catch_warnings():             # scipy warns where it returns NaN (too few pairs)
        warnings.simplefilter("ignore")
        expected = stats.kendalltau(a[ok], b[ok]).statistic
    got = kendall_tau(a, b)
    if np.isnan(expected):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert kendall_tau(a[ok], -b[ok]) == pytest.approx(-got, rel=1e-12, abs=1e-15) or np.isnan(got)


def test_kendall_tau_degenerate_inputs():
    assert np.isnan(kendall_tau([1.0], [2.0]))                 # one pair-less point
    assert np.isnan(kendall_tau([1, 1, 1], [1, 2, 3]))         # every pair tied in a
    assert np.isnan(kendall_tau([np.nan, 1], [1, 2]))
    with pytest.raises(ParameterError):
        kendall_tau([1, 2, 3], [1, 2])
