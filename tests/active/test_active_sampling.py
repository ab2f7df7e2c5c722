"""Costs, eqs. 16-17, Algorithm 1's sampling and the estimator of eq. 6 (Sawade et al. 2013),
and the labelling effort saved read off the error curves."""
from __future__ import annotations

import numpy as np
import pytest

from maxent import parse_measure
from maxent.active import (effort_saved, effort_saved_interval, estimate, instrumental, metric_moments,
                           passive_budget, query_costs, simulate)
from maxent.errors import ParameterError


def test_query_costs_pay_the_union_once_and_scale_to_mean_one():
    doc_cost = np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 1.0, 1.0, 1.0]])
    r1 = np.array([[0, 1, -1], [0, 1, 2]])
    r2 = np.array([[1, 3, -1], [2, 3, 1]])
    raw = query_costs(doc_cost, r1, r2, normalize=False)
    assert raw.tolist() == [1 + 2 + 4, 4]                     # hand sums over the unions
    np.testing.assert_allclose(query_costs(doc_cost, r1, r2), np.array([7, 4]) / 5.5)


def test_query_without_documents_is_an_error():
    with pytest.raises(ParameterError, match="no retrieved document"):
        query_costs(np.ones((2, 3)), np.array([[0, 1], [-1, -1]]))


def test_instrumental_is_eq16():
    mean = np.array([1.0, 2.0, 4.0])
    second = mean ** 2 + np.array([0.5, 0.0, 2.0])        # variances 0.5, 0, 2
    cost = np.array([1.0, 2.0, 0.5])
    R = mean.mean()
    expect = np.sqrt((np.array([0.5, 0.0, 2.0]) + (mean - R) ** 2) / cost)
    np.testing.assert_allclose(instrumental(second, mean, cost), expect / expect.sum())
    q = instrumental(second, mean, cost, mix=0.2)
    np.testing.assert_allclose(q, 0.8 * expect / expect.sum() + 0.2 / 3)
    # no expected loss anywhere: uniform
    np.testing.assert_allclose(instrumental(np.ones(4), np.ones(4), np.ones(4)), 0.25)


def test_estimator_hand_example():
    # w = 1/(m q) = (2/3, 4/3, 4/3); (2 * 2/3 * 1 + 1 * 4/3 * 2) / (2 * 2/3 + 4/3) = 4 / (8/3) = 1.5
    assert estimate(np.array([2.0, 1.0, 0.0]), np.array([0.5, 0.25, 0.25]), np.array([1.0, 2.0, 3.0])) == pytest.approx(1.5)
    # q = p: the plain mean of the draws (eq. 5)
    assert estimate(np.array([3.0, 1.0]), np.array([0.5, 0.5]), np.array([1.0, 5.0])) == pytest.approx(2.0)


def test_simulation_respects_budget_and_reuses_labels():
    rng = np.random.default_rng(1)
    m = 30
    cost = rng.uniform(0.3, 2.0, m)
    cost /= cost.mean()
    q = rng.dirichlet(np.ones(m))
    budgets = [2.0, 5.0, 12.0]
    s = simulate(q, cost, budgets, 500, rng)
    assert s.counts.shape == (3, 500, m)
    labelled = s.counts > 0
    paid = (labelled * cost).sum(axis=2)
    np.testing.assert_allclose(paid, s.spent)
    assert (s.spent <= np.array(budgets)[:, None] + 1e-12).all()
    np.testing.assert_array_equal(labelled.sum(axis=2), s.labelled)
    np.testing.assert_array_equal(s.counts.sum(axis=2), s.draws)
    # common random numbers: a larger budget keeps every draw of a smaller one
    assert (np.diff(s.counts, axis=0) >= 0).all()
    # draws follow q: pooled frequencies within 5 standard errors
    freq = s.counts[2].sum(axis=0) / s.counts[2].sum()
    n = s.counts[2].sum()
    assert (np.abs(freq - q) < 5 * np.sqrt(q * (1 - q) / n) + 1e-3).all()


def test_whole_pool_within_budget_gives_the_pool_mean():
    rng = np.random.default_rng(2)
    q = np.array([0.7, 0.2, 0.1])
    s = simulate(q, np.ones(3), [100.0], 20, rng)
    vals = np.array([1.0, 2.0, 6.0])
    np.testing.assert_allclose(estimate(s.counts, q, vals), 3.0)     # (1 + 2 + 6) / 3
    assert (s.labelled == 3).all()


@pytest.mark.parametrize("kwargs, match", [
    (dict(q=np.array([0.5, 0.5]), cost=np.array([1.5, 0.5]), budgets=[0.4]), "below the cheapest"),
    (dict(q=np.array([1.0]), cost=np.array([1.0]), budgets=[3]), "pool has 1 query"),
    (dict(q=np.array([0.6, 0.6]), cost=np.ones(2), budgets=[3]), "probability distribution"),
])
def test_simulation_errors(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        simulate(repetitions=3, rng=np.random.default_rng(0), **kwargs)


def test_active_beats_passive_as_theorem_1_predicts():
    """Theorem 1 with the true label distribution: budget x MSE is sigma_q^2 E_q[lambda], so the
    RMSE ratio active/passive tends to sqrt((sum sqrt(a lambda))^2 / (sum a sum lambda)),
    a(x) = E[(L - R)^2 | x]. Pool of 400 synthetic queries whose labels are drawn from the
    model, half nearly certain, costs 0.1 or 3 (before scaling)."""
    rng = np.random.default_rng(3)
    m, k, G = 400, 10, 5
    metric = parse_measure("ERR@10")
    sharp = rng.integers(0, 2, m) == 0
    alpha = np.where(sharp[:, None, None], np.array([50.0, 0.1, 0.1, 0.1, 0.1]), np.ones(G))
    P = np.stack([rng.dirichlet(a) for a in np.broadcast_to(alpha, (m, k, G)).reshape(-1, G)]).reshape(m, k, G)
    docs = np.tile(np.arange(k), (m, 1))
    cost = query_costs(np.where(rng.random(m) < 0.5, 0.1, 3.0)[:, None] * np.ones((m, k)), docs)
    mean, second = metric_moments(metric, P, docs)
    cdf = np.cumsum(P, axis=2)
    y = (rng.random((m, k, 1)) > cdf[:, :, :-1]).sum(axis=2)
    truth_vals = metric_moments(metric, np.eye(G)[y], docs)[0]
    truth = truth_vals.mean()
    a = second - 2 * mean.mean() * mean + mean.mean() ** 2
    theory = np.sqrt(np.sum(np.sqrt(a * cost)) ** 2 / (a.sum() * cost.sum()))   # 0.786 here
    err = {}
    for name, q in (("active", instrumental(second, mean, cost)), ("passive", np.full(m, 1 / m))):
        s = simulate(q, cost, [40.0], 1500, rng)
        err[name] = np.sqrt(np.mean((estimate(s.counts[0], q, truth_vals) - truth) ** 2))
    ratio = err["active"] / err["passive"]
    assert ratio < 0.9
    assert abs(ratio - theory) < 0.1


def test_passive_budget_inverts_a_power_law_curve_exactly():
    # passive RMSE = c / sqrt(b) is linear in log-log, so interpolation recovers it exactly
    budgets = np.array([2.0, 4.0, 8.0, 16.0])
    rmse = 3.0 / np.sqrt(budgets)
    for b in (2.0, 3.0, 5.5, 16.0):
        got, side = passive_budget(budgets, rmse, 3.0 / np.sqrt(b))
        assert side == "" and got == pytest.approx(b, rel=1e-12)
    # with MSE ~ 1/budget the old closed form 1 - (ratio)^2 is what effort_saved gives
    saved, bp, side = effort_saved(budgets, 0.8 * rmse, rmse)
    np.testing.assert_allclose(saved[:3], 1 - 0.8 ** 2)
    np.testing.assert_allclose(bp[:3], budgets[:3] / 0.8 ** 2)
    assert side == ["", "", "", ">"]          # 16 / 0.64 = 25 lies beyond the largest budget


def test_passive_budget_bounds_and_curve_that_does_not_follow_a_power_law():
    budgets = [1.0, 2.0, 4.0]
    rmse = [1.0, 0.5, 0.4]            # flattens: a finite pool with label reuse
    assert passive_budget(budgets, rmse, 0.3) == (4.0, ">")   # never reached: a lower bound
    assert passive_budget(budgets, rmse, 1.5) == (1.0, "<")   # reached before the first budget
    got, side = passive_budget(budgets, rmse, 0.45)
    # by hand: log-linear between (2, 0.5) and (4, 0.4)
    w = np.log(0.45 / 0.5) / np.log(0.4 / 0.5)
    assert side == "" and got == pytest.approx(2.0 * 2.0 ** w)
    # a noisy rise is flattened to the running minimum before reading the curve
    assert passive_budget(budgets, [1.0, 0.5, 0.6], 0.5) == (2.0, "")
    # a budget that labels the whole pool has error 0 (up to rounding): read linearly
    got, side = passive_budget([1.0, 2.0, 4.0], [1.0, 0.5, 1e-16], 0.125)
    assert side == "" and got == pytest.approx(2.0 + 0.75 * 2.0)
    saved, _, sides = effort_saved(budgets, [0.9, 0.45, 0.3], rmse)
    assert sides == ["", "", ">"]
    assert saved[2] == pytest.approx(0.0)      # bound: 1 - 4/4, active saves at least that
    with pytest.raises(ParameterError, match="ascending"):
        passive_budget([2.0, 1.0], [1.0, 0.5], 0.7)


def test_effort_saved_interval_covers_the_point_and_shrinks_with_the_noise():
    budgets = np.array([2.0, 4.0, 8.0, 16.0, 32.0])
    passive = 1.0 / np.sqrt(budgets)
    active = 0.9 * passive
    saved = effort_saved(budgets, active, passive)[0]
    lo, hi = effort_saved_interval(budgets, active, 0.01 * active, passive, 0.01 * passive)
    inner = slice(1, 4)                # not at the grid's ends, where the saved share is a bound
    assert np.all(lo[inner] < saved[inner]) and np.all(saved[inner] < hi[inner])
    lo2, hi2 = effort_saved_interval(budgets, active, 0.001 * active, passive, 0.001 * passive)
    assert np.all(hi2[inner] - lo2[inner] < 0.5 * (hi[inner] - lo[inner]))


def test_the_whole_pool_is_a_point_of_passives_curve():
    # pool of 10 queries (costs of mean 1): at budget 10 every query is labelled, error 0
    budgets = np.array([2.0, 4.0, 8.0, 16.0])
    passive = np.array([1.0, 0.6, 0.2, 0.0])
    active = np.array([0.9, 0.5, 0.1, 0.0])
    saved, bp, side = effort_saved(budgets, active, passive, whole=10.0)
    # budget 8: active's 0.1 is reached on the step (8, 0.2) -> (10, 0), linearly: 9
    assert bp[2] == pytest.approx(9.0) and saved[2] == pytest.approx(1 - 8 / 9)
    assert np.isnan(saved[3])                  # beyond the whole pool: nothing to save
    # without it, the step to the run budget 16 would be read instead (a larger passive budget)
    assert effort_saved(budgets, active, passive)[1][2] == pytest.approx(12.0)
    lo, hi = effort_saved_interval(budgets, active, 0.01 * active, passive, 0.01 * passive, whole=10.0)
    assert np.isnan(lo[3]) and np.isnan(hi[3]) and lo[2] <= saved[2] <= hi[2]
