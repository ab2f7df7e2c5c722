"""cvxpy reference formulation (exponential cone) for metrics linear in p.

One problem at a time (a loop over problems is the point: this is the independent oracle
and the benchmark peer, not the production path). cvxpy is imported lazily.

Binary:  maximise sum_n entr(q_n) + entr(1 - q_n)  s.t.  sum q = K,  <w, q> = v.
Graded:  maximise sum_{n,z} entr(P_nz)  s.t.  rows sum to 1, columns sum to K_z,
         <W, P> = v   (only the populated grades are variables).
``entr(x) = -x log x`` is represented with exponential cones; the default solver is
Clarabel (interior point).
"""
from __future__ import annotations

import warnings

import numpy as np

from maxent.solver._problem import Batch

__all__ = ["solve_cvxpy", "cvxpy_problem"]


def cvxpy_problem(W: np.ndarray, v: float, counts: np.ndarray, binary: bool):
    """The cvxpy Problem for one list: W (n, L) weights over its n ranks, counts (L,).

    Returns (problem, variable, active_grades).
    """
    import cvxpy as cp

    n, L = W.shape
    scale = np.abs(W).max(initial=0.0)
    if scale > 0:  # the metric constraint in units of its largest weight: better conditioned
        W, v = W / scale, v / scale
    if binary:
        q = cp.Variable(n)
        obj = cp.Maximize(cp.sum(cp.entr(q)) + cp.sum(cp.entr(1 - q)))
        cons = [cp.sum(q) == counts[1], W[:, 1] @ q == v]
        return cp.Problem(obj, cons), q, np.array([0, 1])
    zs = np.flatnonzero(counts > 0)
    P = cp.Variable((n, len(zs)))
    obj = cp.Maximize(cp.sum(cp.entr(P)))
    cons = [cp.sum(P, axis=1) == 1, cp.sum(P, axis=0) == counts[zs],
            cp.sum(cp.multiply(W[:, zs], P)) == v]
    return cp.Problem(obj, cons), P, zs


def _fit_theta(P: np.ndarray, W: np.ndarray, zs: np.ndarray, L: int) -> np.ndarray:
    """Multipliers [a_0..a_{L-1}, b] fitted to log P_nz - log P_n,ref = a_z + b (W_nz - W_n,ref)."""
    th = np.zeros(L + 1)
    ref = zs[0]
    Pc = np.clip(P, 1e-300, None)
    rows, y, X = [], [], []
    for k, z in enumerate(zs[1:], start=1):
        y.append(np.log(Pc[:, z]) - np.log(Pc[:, ref]))
        col = np.zeros((P.shape[0], len(zs)))
        col[:, k - 1] = 1.0
        col[:, -1] = W[:, z] - W[:, ref]
        X.append(col)
    if not X:
        return th
    X, y = np.concatenate(X), np.concatenate(y)
    coef = np.linalg.lstsq(X, y, rcond=None)[0]
    th[zs[1:]] = coef[:-1]
    th[L] = coef[-1]
    return th


TIGHT = {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11, "tol_ktratio": 1e-9}
"""Clarabel settings used by default: tight enough that p is accurate to ~1e-7."""


def solve_cvxpy(batch: Batch, solver: str = "CLARABEL", **options):
    """Solve each problem of ``batch`` with cvxpy (``options`` go to the solver; default
    :data:`TIGHT` for Clarabel).

    Returns theta (B, L+1), PT (B, L, N) (category-major), nit (B,), converged (B,)
    (cvxpy status ``optimal`` or ``optimal_inaccurate``; the caller reads the residuals).
    """
    import cvxpy as cp

    B, N = batch.active.shape
    L = batch.L
    W = batch.features(batch.uniform()).transpose(0, 2, 1)                   # (B, N, L)
    P = np.zeros((B, N, L))
    theta = np.zeros((B, L + 1))
    nit = np.zeros(B, dtype=np.int64)
    conv = np.zeros(B, dtype=bool)
    for i in range(B):  # one problem at a time: the reference, not the production path
        n = int(batch.active[i].sum())
        prob, var, zs = cvxpy_problem(W[i, :n], float(batch.target[i]), batch.counts[i],
                                      batch.binary)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "may be inaccurate": judged below
                prob.solve(solver=solver, **(options or (TIGHT if solver == "CLARABEL" else {})))
        except cp.error.SolverError:
            continue
        if var.value is None:
            continue
        x = np.clip(np.asarray(var.value, dtype=np.float64), 0.0, 1.0)
        if batch.binary:
            P[i, :n, 1] = x
            P[i, :n, 0] = 1.0 - x
        else:
            P[i, :n, zs] = x.T
        theta[i] = _fit_theta(P[i, :n], W[i, :n], zs, L)
        stats = prob.solver_stats
        nit[i] = getattr(stats, "num_iters", 0) or 0
        conv[i] = prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)
    return theta, np.ascontiguousarray(P.transpose(0, 2, 1)), nit, conv
