"""Targets very near an end of the attainable range: huge metric multipliers b.

Three failure modes of successive linearisation found on real lists, each with its fix:
- GAP 8e-4 of the range below its maximum (|b| ~ 6e4): full steps overshoot and the
  iterates oscillate for thousands of steps -> damped first steps (tests.numpy_solver.linearize);
- ERR 5e-10 to 6e-8 below its maximum (|b| ~ 4e7-3.5e9): the iterates are fixed to the last
  digit but |b| times the rounding of dE/dp exceeds kkt_tol -> the stationarity certificate
  allows for that rounding (linearize.stationarity);
- ERR 7e-11 below its maximum (|b| ~ 5e9): no interior solution is found; the extreme list
  meets every constraint to tol -> ``boundary`` with a message saying so.
Oracles: the returned p is checked by the result's own residuals (recomputed here from p)
and, for the damping, against the undamped iteration's failure on the same list.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from maxent.metrics import parse_measure
from maxent.ranked import rank_runs
from maxent.solver import solve, value_range
from maxent.solver._problem import Batch, count_constraints
from tests.numpy_solver import solve_numpy
from tests.numpy_solver.linearize import _W_ULPS, stationarity
from maxent.trec import read_qrels, read_runs

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bundled_lists():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rank_runs(read_runs(ROOT / "trec_runs" / "runs"),
                         read_qrels(ROOT / "trec_runs" / "qrels-rnd1.txt"))


def _recomputed_residual(m, lists, res, i):
    """|E[M](p) - v| and count residual of problem i, recomputed from the returned p."""
    one = lists.take(np.array([i]))
    batch = Batch(m, res.target[[i]], one, count_constraints(m, one, "retrieved"))
    p = res.p[[i]]
    PT = p.transpose(0, 2, 1) if m.GRADED else np.stack([1 - p, p], axis=1)
    return float(batch.residuals(PT)[0])


@pytest.mark.parametrize("solver", ["numpy", "kernels"])
def test_damped_linearisation_certifies_the_oscillating_gap_list(shared_data, solver):
    d = shared_data / "trec_dl19_passage"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = [r for r in read_runs(d / "runs") if r.name.endswith("ICT-BERT2")]
        lists = rank_runs(runs, read_qrels(d / "qrels" / "qrels.dl19-passage.txt"))
    i = list(lists.topics).index("1114819")
    one = lists.take(np.array([i]))
    m = parse_measure("GAP(g=0.1,0.8,0.1)")
    v = m.value(one)
    lo, hi = value_range(m, one)[0]
    assert 0 < (hi - v[0]) / (hi - lo) < 1e-3                  # the case: near the maximum
    res = (solve_numpy if solver == "numpy" else solve)(m, v, one)
    assert res.status[0] == "optimal", res.message[0]
    assert res.residual[0] <= 1e-10 and res.stationarity[0] <= 1e-9
    assert _recomputed_residual(m, one, res, 0) <= 1e-10
    assert abs(res.multipliers[0, -1]) > 1e4                    # the regime it is about


def test_stationarity_allows_only_the_rounding_of_the_gradient():
    # |b| * (max |dW| - 16 ulp of max |W|), never negative; the reference grade's column and
    # grades without documents do not count
    theta = np.array([[0.0, 1e9]])
    W_old = np.array([[[0.5, 0.25, 1.0]], [[0.0, 0.0, 0.0]]]).transpose(1, 0, 2)  # (1, L=2, N=3)
    grade_ok, ref = np.array([[True, True]]), np.array([0])
    ulp = np.finfo(float).eps * 1.0
    within = W_old.copy()
    within[0, 1, 2] += 8 * ulp                                  # 8 ulps of max |W| = 1.0
    assert stationarity(theta, within, W_old, grade_ok, ref)[0] == 0.0
    beyond = W_old.copy()
    beyond[0, 1, 2] += 1e-12
    got = stationarity(theta, beyond, W_old, grade_ok, ref)[0]
    want = 1e9 * (1e-12 - _W_ULPS * ulp * 1.0)                  # max |W| = 1.0
    assert got == pytest.approx(want, rel=1e-9) and got > 1e-4
    assert stationarity(theta, beyond, W_old, np.array([[True, False]]), ref)[0] == 0.0


def test_err_lists_at_the_top_of_their_range_all_end_certified(bundled_lists):
    # ERR of lists whose first dozen documents all have the highest grade: targets 7e-11 to
    # 6e-8 below the maximum (huge metric multipliers): every one ends certified.
    m = parse_measure("ERR")
    v = m.value(bundled_lists)
    rng = value_range(m, bundled_lists)
    gap = rng[:, 1] - v
    near = np.flatnonzero((gap > 0) & (gap < 1e-7))
    assert len(near) >= 7
    # the shortest lists of each kind (within tol of the maximum: one, as it runs every
    # linearisation step before ending boundary; beyond it: two)
    within = near[(gap[near] > 1e-11) & (gap[near] <= 1e-10)]
    beyond = near[gap[near] > 1e-10]
    assert len(within) >= 3 and len(beyond) >= 4
    short = lambda ix, k: ix[np.argsort(bundled_lists.lengths[ix], kind="stable")[:k]]
    near = np.concatenate((short(within, 1), short(beyond, 2)))
    lists = bundled_lists.take(near)
    res = solve_numpy(m, v[near], lists)
    assert not (res.status == "not_converged").any(), res.counts()
    opt = res.status == "optimal"
    assert opt.sum() == 2 and (np.abs(res.multipliers[opt, -1]) > 1e7).any()
    assert (res.status == "boundary").sum() == 1
    assert (res.residual[opt] <= 1e-10).all() and (res.stationarity[opt] <= 1e-9).all()
    bnd = np.flatnonzero(res.status == "boundary")
    for j in bnd:                      # only where the target is within tol of the maximum
        gap = rng[near[j], 1] - v[near[j]]
        assert gap <= 1e-10 and res.residual[j] <= 1e-10
        if gap > 1e-11:                # beyond the boundary test (1e-11): the new rule
            assert "within 1e-10 (the residual tolerance) of the maximum" in res.message[j]
        assert _recomputed_residual(m, lists, res, j) <= 1e-10
    for j in np.flatnonzero(opt):
        assert _recomputed_residual(m, lists, res, j) <= 1e-10
