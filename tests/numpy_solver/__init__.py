"""The numpy solver: the test oracle of the compiled engine (:mod:`maxent.solver._engine`).

The same maximum-entropy problems solved by independent numpy iterations, with their own
classification of targets: damped Newton on the convex dual (:mod:`.dual`), successive
linearisation (:mod:`.linearize`) and Newton-KKT with scipy's banded solves
(:mod:`.newton_kkt`). Each is itself checked against cvxpy, SLSQP, brute force and finite
differences in the tests. Slower than the kernels, and never used by the library.

    from tests.numpy_solver import solve_numpy
    ref = solve_numpy(metric, target, lists, count="retrieved")
"""
from __future__ import annotations

import numpy as np

from maxent.ranked import RankedLists
from maxent.solver import _check_metric, _empty, _multipliers, _AT_MAXIMUM
from maxent.solver._problem import (
    BOUNDARY_RTOL, Batch, cascade_lower_bound, certified_ends, count_constraints, entropy,
)
from maxent.solver.result import HAS_SOLUTION, MaxEntResult, Status

__all__ = ["solve_numpy"]


def solve_numpy(metric, target, lists: RankedLists, *, count: str = "retrieved", method: str = "auto",
                tol: float = 1e-10, max_iter: int = 200, kkt_tol: float = 1e-9) -> MaxEntResult:
    """:func:`maxent.solver.solve` by the numpy iterations, one chunk: ``auto`` is the dual
    for metrics linear in p, Newton-KKT for the binary AP family (its uncertified problems
    get a second run of 10 x ``max_iter`` linearisation steps) and successive linearisation
    otherwise (with the same second run; an explicit ``method`` has none)."""
    metric = _check_metric(metric)
    tol = min(float(tol), 1e-9)
    B, N = lists.grades.shape
    target = np.asarray(target, dtype=np.float64).reshape(-1)
    retry = method in ("auto", "newton-kkt") and not metric.LINEAR_IN_P
    if method == "auto":
        method = ("newton-dual" if metric.LINEAR_IN_P
                  else "newton-kkt" if metric.SOLVER_FORM == "prefix" and not metric.GRADED
                  else "linearize")
    counts = count_constraints(metric, lists, count)
    out = _empty(B, N, counts.shape[1], metric.GRADED)
    idx = np.arange(B)
    _solve_chunk(Batch(metric, target, lists, counts), method, tol, kkt_tol, max_iter, out, idx,
                 near_tol=0.0 if retry else tol)
    if retry:
        nc = np.flatnonzero(out["status"] == Status.NOT_CONVERGED.value)
        if len(nc):
            first = out["nit"][nc].copy()
            batch = Batch(metric, target[nc], lists.take(nc), counts[nc])
            _solve_chunk(batch, "linearize", tol, kkt_tol, _FALLBACK_FACTOR * max_iter, out, nc,
                         near_tol=tol)
            out["nit"][nc] += first
            solved = nc[out["status"][nc] == Status.OPTIMAL.value]
            out["message"][solved] = "KKT point (second run: successive linearisation)"
    status = out["status"]
    has = np.array([s.value for s in HAS_SOLUTION], dtype=object)
    return MaxEntResult(
        p=out["P"], status=status, success=np.isin(status, has), message=out["message"],
        nit=out["nit"], residual=out["residual"], stationarity=out["stationarity"],
        entropy=out["entropy"], multipliers=out["mult"], target=target,
        attained=out["attained"], K=counts, method=method)


def _solve_chunk(batch: Batch, method, tol, kkt_tol, max_iter, out, idx, near_tol=0.0):
    """Solve a chunk by the numpy engine and write rows ``idx`` of ``out``. ``near_tol``:
    a problem left uncertified whose target is within this distance of an end of the
    attainable range ends ``boundary`` (the extreme list meets every constraint to that
    distance); 0 where another run will still try it."""
    metric, lists, v = batch.metric, batch.lists, batch.target
    B = len(batch)
    t = metric.binary_threshold if not metric.GRADED else 1
    R = lists.n_rel(t)
    undefined = R == 0

    P_top, P_bot = batch.extreme(True), batch.extreme(False)
    e_top, e_bot = batch.expectation(P_top), batch.expectation(P_bot)
    hi, lo = np.maximum(e_top, e_bot), np.minimum(e_top, e_bot)
    top_is_hi = (e_top >= e_bot)[:, None, None]
    P_hi = np.where(top_is_hi, P_top, P_bot)
    P_lo = np.where(top_is_hi, P_bot, P_top)
    cert_lo, cert_hi = certified_ends(metric)
    at_hi = np.abs(v - hi) <= BOUNDARY_RTOL * np.maximum(1.0, np.abs(hi))
    at_lo = np.abs(v - lo) <= BOUNDARY_RTOL * np.maximum(1.0, np.abs(lo))
    above = (v > hi) & ~at_hi
    below = (v < lo) & ~at_lo
    degenerate = (hi - lo) <= BOUNDARY_RTOL * np.maximum(1.0, np.abs(hi))
    if not cert_lo:
        # RR, ERR: below a lower bound of E over every distribution is certainly infeasible
        bound = cascade_lower_bound(metric, lists, P_bot)
        if bound is not None:
            cert_lo = below & (v < bound - BOUNDARY_RTOL * np.maximum(1.0, np.abs(bound)))

    status = np.full(B, "", dtype=object)
    message = np.full(B, "", dtype=object)
    P = np.zeros(P_top.shape)
    mult = np.zeros((B, batch.L))
    nit = np.zeros(B, dtype=np.int64)
    stat = np.zeros(B)

    status[undefined] = Status.UNDEFINED.value
    message[undefined] = "no relevant document in the qrels: the metric is undefined"

    free = ~undefined
    bnd_hi = free & at_hi & (cert_hi | degenerate)
    bnd_lo = free & at_lo & ~bnd_hi & (cert_lo | degenerate)
    inf_hi = free & above & (cert_hi | degenerate)
    inf_lo = free & below & (cert_lo | degenerate)
    solve_me = free & ~(bnd_hi | bnd_lo | inf_hi | inf_lo)

    def set_boundary(mask, P_end, sign, why):
        if not mask.any():
            return
        i = np.flatnonzero(mask)
        sub = batch.take(i)
        F = sub.face(P_end[i])
        ok = np.abs(sub.expectation(F) - v[i]) <= np.maximum(
            BOUNDARY_RTOL * np.maximum(1.0, np.abs(v[i])), 0.1 * tol)
        P[i] = np.where(ok[:, None, None], F, P_end[i])
        status[i] = Status.BOUNDARY.value
        message[i] = why
        mult[i, :-1] = 0.0
        mult[i, -1] = sign * np.inf
        mult[i[degenerate[i]], -1] = 0.0

    set_boundary(bnd_hi, P_hi, 1.0, _AT_MAXIMUM)
    set_boundary(bnd_lo, P_lo, -1.0, "target at the minimum attainable value")
    for mask, P_end, why in ((inf_hi, P_hi, "above"), (inf_lo, P_lo, "below")):
        if mask.any():
            P[mask] = P_end[mask]
            status[mask] = Status.INFEASIBLE.value
            message[mask] = (f"target {why} the attainable range; p is the nearest "
                             "deterministic extreme list")

    if solve_me.any():
        i = np.flatnonzero(solve_me)
        sub = batch.take(i)
        if method == "newton-dual":
            W = sub.features(sub.uniform())
            th, Ps, it, _, _ = _newton(sub, W, tol, max_iter)
            res = sub.residuals(Ps)
            conv = res <= tol
            st = np.zeros(len(i))
        elif method == "linearize":
            th, Ps, it, conv, st = _linearize(sub, tol, kkt_tol, max_iter)
        elif method == "newton-kkt":
            th, Ps, it, conv, st = _newton_kkt(sub, tol, kkt_tol, max_iter)
        else:
            from maxent.solver.reference import solve_cvxpy

            th, Ps, it, conv = solve_cvxpy(sub)
            st = np.zeros(len(i))
        P[i] = Ps
        nit[i] = it
        stat[i] = st
        mult[i] = _multipliers(th, sub.grade_ok, sub.ref)
        status[i[conv]] = Status.OPTIMAL.value
        message[i[conv]] = "optimal (convex dual)" if method in ("newton-dual", "cvxpy") else "KKT point"
        nc = i[~conv]
        if len(nc):
            # uncertified ends: the solver could not reach a target outside/at the
            # deterministic range -> classify by that range
            near = f"target within {near_tol:g} (the residual tolerance) of the {{}} attainable value"
            for mask, st_, msg, P_end, sign in (
                (at_hi, Status.BOUNDARY, "target at the maximum deterministic value", P_hi, 1.0),
                (at_lo, Status.BOUNDARY, "target at the minimum deterministic value", P_lo, -1.0),
                # the last run: an extreme list within tol of the target meets every
                # constraint to tol (ERR at |b| ~ 5e9, 7e-11 below its maximum)
                (np.abs(v - hi) <= near_tol, Status.BOUNDARY, near.format("maximum"), P_hi, 1.0),
                (np.abs(v - lo) <= near_tol, Status.BOUNDARY, near.format("minimum"), P_lo, -1.0),
            ):
                j = nc[mask[nc] & (status[nc] == "")]
                if len(j):
                    m = np.zeros(B, dtype=bool)
                    m[j] = True
                    set_boundary(m, P_end, sign, msg + " (no interior solution found)")
                    nit[j] = it[np.searchsorted(i, j)]
            for mask, P_end, why in ((above, P_hi, "above"), (below, P_lo, "below")):
                j = nc[mask[nc]]
                if len(j):
                    P[j] = P_end[j]
                    status[j] = Status.INFEASIBLE.value
                    mult[j] = 0.0
                    message[j] = (f"target {why} the deterministic range and no feasible "
                                  "distribution found; p is the nearest extreme list")
            j = nc[status[nc] == ""]
            status[j] = Status.NOT_CONVERGED.value
            message[j] = "iteration limit reached or line search stalled"

    attained = batch.expectation(P)
    out["P"][idx] = P.transpose(0, 2, 1) if metric.GRADED else P[:, 1]
    out["status"][idx] = status
    out["message"][idx] = message
    out["nit"][idx] = nit
    out["residual"][idx] = batch.residuals(P, attained)
    out["stationarity"][idx] = np.where(status == Status.OPTIMAL.value, stat, 0.0)
    out["entropy"][idx] = entropy(P)
    out["mult"][idx] = mult
    out["attained"][idx] = attained


def _newton(sub: Batch, W, tol, max_iter):
    from tests.numpy_solver.dual import newton_dual

    th, P, it, _, _ = newton_dual(W, sub.target, sub.counts, sub.active, sub.grade_ok,
                                  sub.theta_uniform(), tol=0.01 * tol, max_iter=max_iter)
    return th, P, it, None, None


_KKT_STEPS = 12   # Newton steps before the remaining problems go to successive linearisation
_FALLBACK_FACTOR = 10   # the (few) problems of the second run get 10 x max_iter steps


def _newton_kkt(sub: Batch, tol, kkt_tol, max_iter):
    """Newton on the KKT system (at most 12 steps). The problems it does not certify
    (targets within ~1e-4 of an end of the range, |b| ~ 1e4-1e5, where the start is far from
    the solution) end not_converged here and :func:`solve` hands them to linearisation."""
    from tests.numpy_solver.newton_kkt import newton_kkt

    return newton_kkt(sub, tol=tol, kkt_tol=kkt_tol, max_iter=min(max_iter, _KKT_STEPS))


def _linearize(sub: Batch, tol, kkt_tol, max_iter):
    from tests.numpy_solver.linearize import linearize

    return linearize(sub, tol=tol, kkt_tol=kkt_tol, max_iter=max_iter)
