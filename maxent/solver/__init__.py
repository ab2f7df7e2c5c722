r"""Maximum-entropy inference of relevance from a metric value (docs/method.md).

Binary metrics (threshold t):

.. math:: \max_p -\sum_n [p_n\ln p_n + (1-p_n)\ln(1-p_n)] \;\text{s.t.}\;
          E_M(p) = v,\; \sum_n p_n = K,\; 0 \le p_n \le 1

Graded metrics:

.. math:: \max_p -\sum_{n,z} p_n(z)\ln p_n(z) \;\text{s.t.}\; E_M(p) = v,\;
          \sum_n p_n(z) = K_z\ (z\ge1),\; \sum_z p_n(z) = 1,\; p \ge 0

over the ranks n = 1..length of each list (p is 0 beyond it). Aslam, Yilmaz & Pavlu (2005),
as used by Yilmaz & Robertson (2010); graded extension: Robertson, Kanoulas & Yilmaz (2010).

Methods (``method=``): ``newton-dual`` (exact convex dual, metrics linear in p: P@k,
R-prec, recall, DCG, nDCG; :mod:`maxent.solver.dual`), ``linearize`` (successive
linearisation with an exact-penalty line search, any metric with an expectation; AP, GAP,
RR, ERR; :mod:`maxent.solver.linearize`), ``cvxpy`` (exponential-cone reference, linear
metrics only, one problem at a time; :mod:`maxent.solver.reference`), ``newton-kkt``
(Newton on the full optimality system with an O(N) banded solve of the prefix-structured
Hessian, AP and GAP; :mod:`maxent.solver.newton_kkt`; problems it does not certify are
handed to linearisation with 10 x ``max_iter`` steps), ``auto`` (the dual when
``metric.LINEAR_IN_P``; Newton-KKT for the binary AP family; else linearisation, where
the problems not certified within ``max_iter`` steps get a second run of 10 x ``max_iter``).

Count constraint (``count=``, docs/method.md, a choice): ``retrieved`` (default) uses
the number of retrieved documents of each grade (binary: with grade >= t), so the real list
is always feasible; ``total`` uses the qrels totals R (R_z) capped at the list length (the
graded cap fills from the highest grade down, see
:func:`maxent.solver._problem.count_constraints`).

Before iterating, every problem is classified: ``undefined`` when the qrels have no
relevant document; the attainable range [lo, hi] of E_M is computed from the two
deterministic extreme lists (:func:`value_range`); a target on an end is ``boundary`` (the
maximum-entropy distribution on the optimal face, entropy 0 when it is one list), beyond
an end ``infeasible``; the rest are solved and end ``optimal`` or ``not_converged``.
"""
from __future__ import annotations

import os
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from maxent.errors import ConvergenceWarning, ParameterError
from maxent.ranked import RankedLists
from maxent.solver._problem import (
    BOUNDARY_RTOL, COUNTS, Batch, cascade_lower_bound, certified_ends, count_constraints, entropy,
)
from maxent.solver.result import HAS_SOLUTION, NO_SOLUTION, MaxEntResult, Status

__all__ = ["solve", "value_range", "Status", "MaxEntResult", "HAS_SOLUTION", "NO_SOLUTION"]

METHODS = ("auto", "newton-dual", "newton-kkt", "linearize", "cvxpy")
ENGINES = ("auto", "compiled", "numpy")

_CHUNK_ELEMENTS = 1 << 18   # problems are solved in chunks of about this many B*N*L cells
# (2 MiB per array: measured as fast as or faster than 2^20 cells, at a fraction of the
# memory; graded metrics, whose solver keeps more arrays per chunk, use half of it, so a
# 5000 x 1000 batch of AP, nDCG or GAP peaks under 200 MiB, mostly the returned p)


def _check_metric(metric):
    """The metric object (a measure name is parsed); refuse what cannot be a constraint."""
    from maxent.metrics import Metric, parse_measure

    if isinstance(metric, str):
        metric = parse_measure(metric)
    if not isinstance(metric, Metric):
        raise ParameterError(f"expected a Metric object or a measure name, got "
                             f"{type(metric).__name__} {metric!r}")
    if not getattr(metric, "HAS_EXPECTATION", False):
        raise ParameterError(f"{metric}: has no expectation under a product distribution; "
                             "it cannot be a maximum-entropy constraint")
    return metric


def value_range(metric, lists: RankedLists, count: str = "retrieved") -> np.ndarray:
    """Attainable range [lo, hi] of E_M under the count constraints, (B, 2).

    The ends are the metric's values on the two deterministic lists that sort the grades
    by the metric's preference (best first / worst first). This is the exact range over
    all feasible distributions for metrics linear in p, AP and GAP; for RR and ERR the
    maximum is exact and a fractional list can go below the minimum (see
    ``certified_ends`` and ``cascade_lower_bound``). Problems with no relevant document in the
    qrels get the range of their (degenerate) constraints, typically [0, 0].
    """
    metric = _check_metric(metric)
    counts = count_constraints(metric, lists, count)
    b = Batch(metric, np.zeros(len(lists)), lists, counts)
    e1 = b.expectation(b.extreme(True))
    e0 = b.expectation(b.extreme(False))
    return np.stack([np.minimum(e0, e1), np.maximum(e0, e1)], axis=1)


def solve(metric, target, lists: RankedLists, *, count: str = "retrieved", method: str = "auto",
          tol: float = 1e-10, max_iter: int = 200, kkt_tol: float = 1e-9,
          workers: int | None = None, engine: str = "auto") -> MaxEntResult:
    """Maximum-entropy distributions of relevance consistent with metric values.

    Parameters
    ----------
    metric : a metric of :mod:`maxent.metrics` with an expectation (``HAS_EXPECTATION``),
        or its name (``"AP"``, ``"nDCG@10"``)
    target : (B,) metric values v (typically ``metric.value(lists)``)
    lists : RankedLists (B lists); only their lengths, qrels counts and, for
        ``count="retrieved"``, the number retrieved per grade are used — never the order
    count : ``retrieved`` (default) or ``total``: right-hand side of the count constraints
    method : ``auto`` | ``newton-dual`` | ``linearize`` | ``cvxpy``
    tol : constraint residual required for ``optimal`` (counts and |E[M](p) - v|; at most 1e-9)
    max_iter : Newton steps (dual) or outer linearisation steps (linearize); see ``method``
        for the second chance of ``auto`` and ``newton-kkt``
    kkt_tol : stationarity residual required for ``optimal`` with ``linearize``/``newton-kkt``
    workers : threads solving chunks of about 2^18 (graded: 2^17) B*N*L cells in parallel
        (default: the number of CPUs, at most 4; 1 = sequential). Results do not depend on it.
    engine : ``auto`` (default) or ``compiled``: ``newton-dual`` and ``newton-kkt`` (and
        ``auto``, which then also picks ``newton-kkt`` for GAP) solve each interior problem
        entirely in compiled code (:mod:`maxent.solver._engine`, built at install); the
        problems it does not certify, and every boundary, infeasible or undefined one, take
        the numpy path. ``numpy``: the numpy iterations only (the tests' oracle).
        ``linearize`` runs compiled for the cascade metrics (RR, ERR: ``auto`` and
        ``linearize``); for AP and GAP it is numpy only, as is ``cvxpy``.

    Returns
    -------
    MaxEntResult with p of shape (B, N) for binary metrics and (B, N, L) for graded ones.

    Raises
    ------
    ParameterError
        unknown ``method`` or ``count``, a metric without expectation, ``newton-dual`` or
        ``cvxpy`` with a metric non-linear in p, or a target of the wrong shape or not finite.

    Warns
    -----
    ConvergenceWarning
        once per call when some problems end ``not_converged``.
    """
    if method not in METHODS:
        raise ParameterError(f"method must be one of {METHODS}, got {method!r}")
    if engine not in ENGINES:
        raise ParameterError(f"engine must be one of {ENGINES}, got {engine!r}")
    if count not in COUNTS:
        raise ParameterError(f"count must be one of {COUNTS}, got {count!r}")
    metric = _check_metric(metric)
    if method in ("newton-dual", "cvxpy") and not metric.LINEAR_IN_P:
        raise ParameterError(f"method={method!r} needs a metric linear in p; {metric} is not "
                             "(use 'linearize' or 'auto')")
    if not (tol > 0 and max_iter >= 1 and kkt_tol > 0):
        raise ParameterError("tol and kkt_tol must be > 0 and max_iter >= 1")
    tol = min(float(tol), 1e-9)
    if not isinstance(lists, RankedLists):
        raise ParameterError(f"lists: expected RankedLists (maxent.rank_runs), got {type(lists).__name__}")
    B, N = lists.grades.shape
    target = np.asarray(target, dtype=np.float64).reshape(-1)
    if target.shape != (B,):
        raise ParameterError(f"target must have shape ({B},), got {np.shape(target)}")
    if not np.isfinite(target).all():
        raise ParameterError("target must be finite")
    if method == "newton-kkt" and not _kkt_supports(metric):
        raise ParameterError(f"method='newton-kkt' needs a metric with a prefix-structured "
                             f"Hessian (AP, GAP); {metric} has none (use 'linearize' or 'auto')")
    retry = method in ("auto", "newton-kkt") and not metric.LINEAR_IN_P
    # the compiled kernels: newton-dual / newton-kkt, auto for a metric they solve, auto /
    # linearize for a cascade metric (RR, ERR)
    cascade = _cascade_supports(metric, lists)
    compiled = ((method in ("newton-dual", "newton-kkt")
                 or (method == "auto" and (metric.LINEAR_IN_P or _kkt_supports(metric)))
                 or (method in ("auto", "linearize") and cascade))
                and engine != "numpy")
    if method == "auto":
        # Newton-KKT for the AP family and, with the compiled engine, GAP (its block
        # recurrence is O(N L^3)); the numpy engine's banded solves for GAP cost more than
        # the steps they save, so it linearises GAP
        method = ("newton-dual" if metric.LINEAR_IN_P
                  else "newton-kkt" if _kkt_supports(metric) and (compiled or not metric.GRADED)
                  else "linearize")
    compiled = compiled and (method in ("newton-dual", "newton-kkt") or (method == "linearize" and cascade))

    counts = count_constraints(metric, lists, count)
    L = counts.shape[1]
    out = _empty(B, N, L, target, metric.GRADED)
    cells = _CHUNK_ELEMENTS if L <= 2 else _CHUNK_ELEMENTS // 2
    chunk = max(1, cells // max(1, N * L))
    starts = range(0, B, chunk)

    def run(s):
        idx = np.arange(s, min(B, s + chunk))
        batch = Batch(metric, target[idx], lists.take(idx), counts[idx])
        if compiled:
            left = _solve_chunk_compiled(batch, method, tol, kkt_tol, max_iter, out, s)
            if not len(left):
                return
            idx, batch = idx[left], batch.take(left)
        _solve_chunk(batch, method, tol, kkt_tol, max_iter, out, idx, near_tol=0.0 if retry else tol)

    if workers is None and len(starts) > 1:
        workers = min(os.cpu_count() or 1, 4)
    if len(starts) > 1 and workers > 1 and method != "cvxpy":
        # chunks are independent and write disjoint rows of ``out``; numpy releases the GIL
        # in its array loops and the compiled kernels run without it (nogil), so threads
        # use the cores without copying the data
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(run, starts))
    else:
        for s in starts:
            run(s)

    if retry:
        # second chance, all chunks at once: the few problems not certified (Newton-KKT far
        # from its start, or linearisation needing more than max_iter steps when |b| ~ 1e5)
        nc = np.flatnonzero(out["status"] == Status.NOT_CONVERGED.value)
        if len(nc):
            first = out["nit"][nc].copy()
            batch = Batch(metric, target[nc], lists.take(nc), counts[nc])
            _solve_chunk(batch, "linearize", tol, kkt_tol, _FALLBACK_FACTOR * max_iter, out, nc,
                         near_tol=tol)
            out["nit"][nc] += first
            solved = nc[out["status"][nc] == Status.OPTIMAL.value]
            out["message"][solved] = "KKT point (second run: successive linearisation)"

    p = out["P"]
    status = out["status"]
    n_nc = int((status == Status.NOT_CONVERGED.value).sum())
    if n_nc:
        warnings.warn(f"{metric}: {n_nc} of {B} maximum-entropy problems did not converge "
                      f"(max_iter={max_iter})", ConvergenceWarning, stacklevel=2)
    has = np.array([s.value for s in HAS_SOLUTION], dtype=object)
    return MaxEntResult(
        p=p, status=status, success=np.isin(status, has), message=out["message"],
        nit=out["nit"], residual=out["residual"], stationarity=out["stationarity"],
        entropy=out["entropy"], multipliers=out["mult"], target=target,
        attained=out["attained"], K=counts,
        # what ran: the compiled cascade kernel linearises, then switches to Newton-KKT
        method="linearize+newton-kkt" if compiled and method == "linearize" else method,
        engine="compiled" if compiled else "numpy",
    )


_AT_MAXIMUM = "target at the maximum attainable value"
"""The message of a boundary at the maximum, from either engine (:func:`_solve_chunk`, and the
cascade kernel's CODE_AT_MAXIMUM* codes in :func:`_solve_chunk_compiled`)."""


def _solve_chunk_compiled(batch: Batch, method, tol, kkt_tol, max_iter, out, s):
    """Solve the interior problems of a chunk (rows s.. of ``out``) in compiled code and
    write their results; return the chunk positions left to the numpy path (not strictly
    inside the attainable range, or not certified)."""
    from maxent.solver import _engine as nb
    C = nb.kernel_code

    metric, lists = batch.metric, batch.lists
    B = len(batch)
    L = batch.L
    t = metric.binary_threshold if not metric.GRADED else 1
    undefined = (lists.n_rel(t) == 0).astype(np.uint8)
    lengths = lists.lengths.astype(np.int64)
    rows = slice(s, s + B)
    P_out = out["P"][rows] if metric.GRADED else out["P"][rows, :, None]
    col0 = 0 if metric.GRADED else 1
    theta = np.zeros((B, L + 1))
    code = np.ones(B, dtype=np.int64)
    nit = np.zeros(B, dtype=np.int64)
    resid, ent, att, stat = np.zeros(B), np.zeros(B), np.zeros(B), np.zeros(B)
    if method == "newton-dual":
        W = batch.features(batch.uniform())
        nb.linear_batch(W, batch.target, batch.counts, lengths, undefined, tol, max_iter,
                        P_out, col0, theta, code, nit, resid, ent, att)
        msg = "optimal (convex dual)"
    elif method == "linearize":
        s_all, c = metric.cascade_form(lists)
        nb.cascade_batch(np.ascontiguousarray(s_all, dtype=np.float64),
                         np.ascontiguousarray(np.asarray(c, dtype=np.float64)[: lists.grades.shape[1]]),
                         batch.target, batch.counts, lengths, undefined, tol, kkt_tol, _KKT_STEPS_COMPILED,
                         max_iter, _CASCADE_SWITCH, certified_ends(metric)[1], P_out, col0, theta, code, nit,
                         resid, ent, att, stat)
        msg = "KKT point"
    else:
        js, kappa, f = metric.prefix_hessian(lists)
        kappa = np.ascontiguousarray(np.asarray(kappa, dtype=np.float64).reshape(B, -1))
        f = np.ascontiguousarray(np.asarray(f, dtype=np.float64)[: lists.grades.shape[1]])
        nb.prefix_batch(np.asarray(js, dtype=np.int64), kappa, f, batch.target, batch.counts,
                        lengths, undefined, tol, kkt_tol, _KKT_STEPS_COMPILED,
                        _FALLBACK_FACTOR * max_iter, P_out, col0, theta, code, nit, resid, ent,
                        att, stat)
        msg = "KKT point"
    done = np.flatnonzero((code == C.CODE_OPTIMAL) | (code == C.CODE_SECOND_RUN))
    if len(done):
        g = s + done
        out["status"][g] = Status.OPTIMAL.value
        out["message"][g] = msg
        out["nit"][g] = nit[done]
        out["residual"][g] = resid[done]
        out["stationarity"][g] = stat[done]
        out["entropy"][g] = ent[done]
        out["attained"][g] = att[done]
        out["mult"][g] = _multipliers(theta[done], batch.grade_ok[done], batch.ref[done])
        second = s + np.flatnonzero(code == C.CODE_SECOND_RUN)
        out["message"][second] = "KKT point (second run: successive linearisation)"
    at_max = np.flatnonzero((code == C.CODE_AT_MAXIMUM) | (code == C.CODE_AT_MAXIMUM_DEGENERATE))
    if len(at_max):
        # cascade metrics at their maximum: p on the face of the extreme list (as _solve_chunk)
        g = s + at_max
        out["status"][g] = Status.BOUNDARY.value
        out["message"][g] = _AT_MAXIMUM
        for key, val in (("residual", resid), ("entropy", ent), ("attained", att)):
            out[key][g] = val[at_max]
        out["mult"][g] = 0.0
        out["mult"][g, -1] = np.where(code[at_max] == C.CODE_AT_MAXIMUM, np.inf, 0.0)
    return np.flatnonzero(~np.isin(code, (C.CODE_OPTIMAL, C.CODE_SECOND_RUN, C.CODE_AT_MAXIMUM,
                                         C.CODE_AT_MAXIMUM_DEGENERATE)))


def _empty(B, N, L, target, graded):
    return {
        # the returned p itself, (B, N, L) graded or (B, N) binary; chunks are solved
        # category-major and written here once (no second full-size copy)
        "P": np.zeros((B, N, L) if graded else (B, N)),
        "status": np.full(B, Status.NOT_CONVERGED.value, dtype=object),
        "message": np.full(B, "", dtype=object),
        "nit": np.zeros(B, dtype=np.int64),
        "residual": np.zeros(B),
        "stationarity": np.zeros(B),
        "entropy": np.zeros(B),
        "mult": np.zeros((B, L)),
        "attained": np.zeros(B),
    }


def _multipliers(theta, grade_ok, ref):
    """[a_1..a_c, b] relative to the reference category; -inf for empty grades."""
    L = grade_ok.shape[1]
    a = theta[:, :L] - np.take_along_axis(theta[:, :L], ref[:, None], axis=1)
    a = np.where(grade_ok, a, -np.inf)
    return np.concatenate((a[:, 1:], theta[:, L:]), axis=1)


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
    from maxent.solver.dual import newton_dual

    th, P, it, _, _ = newton_dual(W, sub.target, sub.counts, sub.active, sub.grade_ok,
                                  sub.theta_uniform(), tol=0.01 * tol, max_iter=max_iter)
    return th, P, it, None, None


def _cascade_supports(metric, lists) -> bool:
    """Whether the compiled successive linearisation of cascade metrics applies (RR, ERR:
    ``metric.cascade_form``, satisfaction non-decreasing in the grade, as the extreme lists
    of the attainable range assume)."""
    if metric.SOLVER_FORM != "cascade":
        return False
    return bool(np.all(np.diff(metric.cascade_form(lists)[0]) >= 0))


def _kkt_supports(metric) -> bool:
    """Whether Newton-KKT applies: a prefix-structured Hessian (``metric.prefix_hessian``)."""
    return metric.SOLVER_FORM == "prefix"


_KKT_STEPS_COMPILED = 40   # compiled Newton-KKT steps (from the linear relaxation) before polishing:
# some lists take ~20 small damped steps, then converge quadratically (robust03's THUIRr0301/615
# under GAP(g=0.1,0.9) in 25); stalled problems are found by the line search within ~3 steps
_CASCADE_SWITCH = 1.0   # compiled RR/ERR: linearisation until the stationarity is below this, then
# Newton-KKT (from there it certifies trec_covid_r1's ERR lists in about 3 steps)
_KKT_STEPS = 12   # Newton steps before the remaining problems go to successive linearisation
_FALLBACK_FACTOR = 10   # the (few) problems of the second run get 10 x max_iter steps


def _newton_kkt(sub: Batch, tol, kkt_tol, max_iter):
    """Newton on the KKT system (at most 12 steps). The problems it does not certify
    (targets within ~1e-4 of an end of the range, |b| ~ 1e4-1e5, where the start is far from
    the solution) end not_converged here and :func:`solve` hands them to linearisation."""
    from maxent.solver.newton_kkt import newton_kkt

    return newton_kkt(sub, tol=tol, kkt_tol=kkt_tol, max_iter=min(max_iter, _KKT_STEPS))


def _linearize(sub: Batch, tol, kkt_tol, max_iter):
    from maxent.solver.linearize import linearize

    return linearize(sub, tol=tol, kkt_tol=kkt_tol, max_iter=max_iter)
