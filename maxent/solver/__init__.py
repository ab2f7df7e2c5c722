r"""Maximum-entropy inference of relevance from a metric value (docs/method.md).

Binary metrics (threshold t):

.. math:: \max_p -\sum_n [p_n\ln p_n + (1-p_n)\ln(1-p_n)] \;\text{s.t.}\;
          E_M(p) = v,\; \sum_n p_n = K,\; 0 \le p_n \le 1

Graded metrics:

.. math:: \max_p -\sum_{n,z} p_n(z)\ln p_n(z) \;\text{s.t.}\; E_M(p) = v,\;
          \sum_n p_n(z) = K_z\ (z\ge1),\; \sum_z p_n(z) = 1,\; p \ge 0

over the ranks n = 1..length of each list (p is 0 beyond it). Aslam, Yilmaz & Pavlu (2005),
as used by Yilmaz & Robertson (2010); graded extension: Robertson, Kanoulas & Yilmaz (2010).

A batch takes one path: **classify** every target against its attainable range
(:mod:`maxent.solver.classify`: undefined, on an end, beyond it, or interior), solve the
interior ones in the **compiled kernels** (:mod:`maxent.solver._engine`, built at install,
chosen by the metric's ``SOLVER_FORM``), **certify** (the kernels' certificates; a problem
not certified is classified by its distance to the ends) and write the **result**.

Methods (``method=``), by the metric's form:

- ``newton-dual`` (metrics linear in p: P@k, R-prec, recall, DCG, nDCG, RBP): damped Newton on
  the exact convex dual;
- ``newton-kkt`` (AP, GAP: a prefix-structured Hessian): two steps of successive
  linearisation, then Newton on the full optimality system with an O(N) block-tridiagonal
  solve; the problems it does not certify get a second run of successive linearisation
  (10 x ``max_iter`` steps), which their ``message`` names;
- ``linearize+newton-kkt`` (RR, ERR: cascade metrics): successive linearisation until the
  stationarity is small, then Newton-KKT on the cascade's banded system; a second run of
  10 x ``max_iter`` linearisation steps for what is left;
- ``linearize``: successive linearisation alone (AP, GAP, RR, ERR; for a linear metric one
  linearised subproblem is the dual itself: ``newton-dual``);
- ``cvxpy``: the exponential-cone reference (:mod:`maxent.solver.reference`; linear metrics,
  one problem at a time);
- ``auto`` (default): the first three by form.

Count constraint (``count=``, docs/method.md, a choice): ``retrieved`` (default) uses
the number of retrieved documents of each grade (binary: with grade >= t), so the real list
is always feasible; ``total`` uses the qrels totals R (R_z) capped at the list length (the
graded cap fills from the highest grade down, see
:func:`maxent.solver._problem.count_constraints`).
"""
from __future__ import annotations

import dataclasses
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import numpy as np

from maxent.errors import ConvergenceWarning, ParameterError
from maxent.ranked import RankedLists
from maxent.solver import _engine
from maxent.solver._problem import BOUNDARY_RTOL, COUNTS, Batch, count_constraints, entropy
from maxent.solver.classify import Target, classify, on_end, one_point
from maxent.solver.forms import Form, form_class, form_of
from maxent.solver.result import HAS_SOLUTION, NO_SOLUTION, MaxEntResult, Status

__all__ = ["solve", "value_range", "Status", "MaxEntResult", "HAS_SOLUTION", "NO_SOLUTION"]

# the kernels' status codes as plain ints (as classify.Target): numpy compares an array with an
# enum member through the enum class's attribute lookups
_CODE = SimpleNamespace(**{c.name: int(c) for c in _engine.kernel_code})
_HAS_SOLUTION = frozenset(s.value for s in HAS_SOLUTION)

METHODS = ("auto", "newton-dual", "newton-kkt", "linearize", "cvxpy")

_CHUNK_ELEMENTS = 1 << 18   # problems are solved in chunks of about this many B*N*L cells
# (2 MiB per array, at a fraction of the memory of larger chunks; graded metrics use half of
# it, so a 5000 x 1000 batch of AP, nDCG or GAP peaks under 200 MiB, mostly the returned p)

_AT_MAXIMUM = "target at the maximum attainable value"
_SECOND_RUN_MESSAGE = "KKT point (second run: successive linearisation)"


def _check_metric(metric):
    """The metric object (a measure name is parsed); refuse what cannot be a constraint."""
    from maxent.metrics import Metric, parse_measure

    if isinstance(metric, str):
        metric = parse_measure(metric)
    if not isinstance(metric, Metric):
        raise ParameterError(f"expected a Metric object or a measure name, got "
                             f"{type(metric).__name__} {metric!r}")
    if not metric.HAS_EXPECTATION:
        raise ParameterError(f"{metric}: has no expectation under a product distribution; "
                             "it cannot be a maximum-entropy constraint")
    form_class(metric)
    return metric


def value_range(metric, lists: RankedLists, count: str = "retrieved") -> np.ndarray:
    """Attainable range [lo, hi] of E_M under the count constraints, (B, 2).

    The ends are the metric's values on the two deterministic lists that sort the grades
    by the metric's preference (best first / worst first). This is the exact range over
    all feasible distributions for metrics linear in p, AP and GAP; for RR and ERR the
    maximum is exact and a fractional list can go below the minimum (see
    ``certified_ends`` and ``cascade_lower_bound`` in :mod:`maxent.solver._problem`).
    Problems with no relevant document in the qrels get the range of their (degenerate)
    constraints, typically [0, 0].
    """
    metric = _check_metric(metric)
    counts = count_constraints(metric, lists, count)
    out = np.zeros((len(lists), 2))
    N, L = lists.grades.shape[1], counts.shape[1]
    chunk = max(1, _CHUNK_ELEMENTS // max(1, N * L))
    for s in range(0, len(lists), chunk):
        idx = np.arange(s, min(len(lists), s + chunk))
        batch = Batch(metric, np.zeros(len(idx)), lists.take(idx), counts[idx])
        top, bot = form_of(batch).ends(batch.counts)
        out[idx, 0], out[idx, 1] = np.minimum(top, bot), np.maximum(top, bot)
    return out


def _method(metric, method: str) -> str:
    """The method that runs for ``method`` (ParameterError where it does not apply)."""
    return form_class(metric).method(method, metric)


def solve(metric, target, lists: RankedLists, *, count: str = "retrieved", method: str = "auto",
          tol: float = 1e-10, max_iter: int = 200, kkt_tol: float = 1e-9,
          workers: int | None = None) -> MaxEntResult:
    """Maximum-entropy distributions of relevance consistent with metric values.

    Parameters
    ----------
    metric : a metric of :mod:`maxent.metrics` with an expectation (``HAS_EXPECTATION``),
        or its name (``"AP"``, ``"nDCG@10"``)
    target : (B,) metric values v (typically ``metric.value(lists)``)
    lists : RankedLists (B lists); only their lengths, qrels counts and, for
        ``count="retrieved"``, the number retrieved per grade are used — never the order
    count : ``retrieved`` (default) or ``total``: right-hand side of the count constraints
    method : ``auto`` | ``newton-dual`` | ``newton-kkt`` | ``linearize`` | ``cvxpy`` (see the
        module's documentation)
    tol : constraint residual required for ``optimal`` (counts and |E[M](p) - v|; at most 1e-9)
    max_iter : Newton steps (dual) or linearisation steps; the second run of the non-linear
        metrics gets 10 x ``max_iter``
    kkt_tol : stationarity residual required for ``optimal`` (metrics non-linear in p)
    workers : threads solving chunks of about 2^18 (graded: 2^17) B*N*L cells in parallel
        (default: the number of CPUs, at most 4; 1 = sequential). Results do not depend on it.

    Returns
    -------
    MaxEntResult with p of shape (B, N) for binary metrics and (B, N, L) for graded ones.

    Raises
    ------
    ParameterError
        unknown ``method`` or ``count``, a metric without expectation, a method that does
        not apply to the metric, or a target of the wrong shape or not finite.

    Warns
    -----
    ConvergenceWarning
        once per call when some problems end ``not_converged``.
    """
    if method not in METHODS:
        raise ParameterError(f"method must be one of {METHODS}, got {method!r}")
    if count not in COUNTS:
        raise ParameterError(f"count must be one of {COUNTS}, got {count!r}")
    if isinstance(metric, (list, tuple)):
        return _solve_set(metric, target, lists, count=count, method=method, tol=tol,
                          max_iter=max_iter, kkt_tol=kkt_tol)
    metric = _check_metric(metric)
    method = _method(metric, method)
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

    counts = count_constraints(metric, lists, count)
    L = counts.shape[1]
    out = _empty(B, N, L, metric.GRADED)
    cells = _CHUNK_ELEMENTS if L <= 2 else _CHUNK_ELEMENTS // 2
    chunk = max(1, cells // max(1, N * L))
    starts = range(0, B, chunk)

    def run(s):
        idx = np.arange(s, min(B, s + chunk))
        _solve_batch(Batch(metric, target[idx], lists.take(idx), counts[idx]), method, tol, kkt_tol,
                     max_iter, out, s)

    if workers is None and len(starts) > 1:
        workers = min(os.cpu_count() or 1, 4)
    if len(starts) > 1 and workers > 1 and method != "cvxpy":
        # chunks are independent and write disjoint rows of ``out``; the compiled kernels run
        # without the GIL (nogil), so threads use the cores without copying the data
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(run, starts))
    else:
        for s in starts:
            run(s)

    return _result(out, str(metric), max_iter, target, counts, method, stacklevel=3)


def _result(out, name, max_iter, target, K, method, stacklevel) -> MaxEntResult:
    """The result from the output arrays; one ConvergenceWarning when some did not converge."""
    status = out["status"]
    B = len(status)
    n_nc = int((status == Status.NOT_CONVERGED.value).sum())
    if n_nc:
        warnings.warn(f"{name}: {n_nc} of {B} maximum-entropy problems did not converge "
                      f"(max_iter={max_iter})", ConvergenceWarning, stacklevel=stacklevel)
    return MaxEntResult(
        # one set lookup per status: the statuses are Python strings, which np.isin also visits
        # one by one, after building and sorting arrays that a single-list solve would pay for
        p=out["P"], status=status, success=np.fromiter((x in _HAS_SOLUTION for x in status), bool, B),
        message=out["message"],
        nit=out["nit"], residual=out["residual"], stationarity=out["stationarity"],
        entropy=out["entropy"], multipliers=out["mult"], target=target,
        attained=out["attained"], K=K, method=method,
    )


def _solve_set(metrics, targets, lists, *, count, method, tol, max_iter, kkt_tol) -> MaxEntResult:
    """``solve`` with a list of metrics: each target row holds one value per metric."""
    from maxent.solver.joint import SetForm, solve_set

    metrics = [_check_metric(m) for m in metrics]
    if not metrics:
        raise ParameterError("metrics: expected at least one metric")
    names = [str(m) for m in metrics]
    if len(set(names)) < len(names):
        raise ParameterError(f"metrics: each metric once, got {names}")
    if not isinstance(lists, RankedLists):
        raise ParameterError(f"lists: expected RankedLists (maxent.rank_runs), got {type(lists).__name__}")
    B, N = lists.grades.shape
    k = len(metrics)
    targets = np.asarray(targets, dtype=np.float64)
    if targets.ndim == 1 and k == 1:
        targets = targets[:, None]
    if targets.shape != (B, k):
        raise ParameterError(f"targets must have shape ({B}, {k}): one column per metric, got {np.shape(targets)}")
    if not np.isfinite(targets).all():
        raise ParameterError("targets must be finite")
    if k == 1:
        res = solve(metrics[0], targets[:, 0], lists, count=count, method=method, tol=tol,
                    max_iter=max_iter, kkt_tol=kkt_tol)
        return dataclasses.replace(res, target=targets, attained=res.attained[:, None])
    if method not in ("auto", "linearize"):
        raise ParameterError(f"method={method!r}: several metrics are solved by successive linearisation "
                             "('auto' or 'linearize')")
    if not (tol > 0 and max_iter >= 1 and kkt_tol > 0):
        raise ParameterError("tol and kkt_tol must be > 0 and max_iter >= 1")
    tol = min(float(tol), 1e-9)
    form = SetForm(metrics, lists, count)
    L = form.L
    out = _empty(B, N, L, form.graded)
    out["attained"] = np.zeros((B, k))
    out["mult"] = np.zeros((B, L - 1 + k))
    cells = _CHUNK_ELEMENTS // (2 * k)
    chunk = max(1, cells // max(1, N * L))
    for s in range(0, B, chunk):
        idx = np.arange(s, min(B, s + chunk))
        solve_set(metrics, targets[idx], lists.take(idx), count=count, tol=tol, kkt_tol=kkt_tol,
                  max_iter=max_iter, out=out, s=s, solve_one=solve)
    return _result(out, ", ".join(names), max_iter, targets, form.counts,
                   "newton-dual" if form.linear else "linearize", stacklevel=4)


def _empty(B, N, L, graded):
    return {
        # the returned p itself, (B, N, L) graded or (B, N) binary; chunks write their rows
        # here once (no second full-size copy)
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


def _solve_batch(batch: Batch, method, tol, kkt_tol, max_iter, out, s):
    """classify -> kernel -> certify -> result, for the problems of ``batch`` (rows s.. of
    ``out``)."""
    form = form_of(batch)
    top, bot = form.ends(batch.counts)
    lo, hi, top_is_hi = np.minimum(top, bot), np.maximum(top, bot), top >= bot
    cls = classify(batch, lo, hi)
    _write_classified(batch, cls, lo, hi, top_is_hi, tol, out, s)
    interior = np.flatnonzero(cls == Target.INTERIOR)
    if not len(interior):
        return
    if method == "cvxpy":
        _solve_reference(batch, interior, out, s)
        return
    code, nit = _kernel(form, batch, cls == Target.INTERIOR, lo, hi, method, tol, kkt_tol, max_iter, out, s)
    left = np.flatnonzero(code == _CODE.CODE_NOT_CERTIFIED)
    second = form.second_run(max_iter)
    if len(left) and second:
        again = np.zeros(len(batch), dtype=bool)
        again[left] = True
        code2, nit2 = _kernel(form, batch, again, lo, hi, second[0], tol, kkt_tol, second[1], out, s)
        code[left] = np.where(code2[left] == _CODE.CODE_OPTIMAL, _CODE.CODE_SECOND_RUN, code2[left])
        out["nit"][s + left] += nit[left]
        left = np.flatnonzero(code == _CODE.CODE_NOT_CERTIFIED)
    ok = np.flatnonzero((code == _CODE.CODE_OPTIMAL) | (code == _CODE.CODE_SECOND_RUN))
    out["status"][s + ok] = Status.OPTIMAL.value
    out["message"][s + ok] = "optimal (convex dual)" if method == "newton-dual" else "KKT point"
    if method != "linearize":
        out["message"][s + np.flatnonzero(code == _CODE.CODE_SECOND_RUN)] = _SECOND_RUN_MESSAGE
    if len(left):
        _uncertified(batch, left, lo, hi, top_is_hi, tol, out, s)


def _kernel(form: Form, batch: Batch, solve_me, lo, hi, method, tol, kkt_tol, max_iter, out, s):
    """Run the kernel of the metric's form on the problems ``solve_me`` and write their p,
    multipliers, residual, stationarity, entropy and attained value (their last iterate when
    not certified); return the kernels' codes and step counts, (B,) each."""
    metric = batch.metric
    B, L = len(batch), batch.L
    rows = slice(s, s + B)
    P_out = out["P"][rows] if metric.GRADED else out["P"][rows, :, None]
    col0 = 0 if metric.GRADED else 1
    theta = np.zeros((B, L + 1))
    code = np.ones(B, dtype=np.int64)
    nit = np.zeros(B, dtype=np.int64)
    resid, ent, att, stat = np.zeros(B), np.zeros(B), np.zeros(B), np.zeros(B)
    mask = np.ascontiguousarray(solve_me, dtype=np.uint8)
    form.solve(batch, mask, lo, hi, method, tol, kkt_tol, max_iter,
               dict(P=P_out, col0=col0, theta=theta, code=code, nit=nit, resid=resid, ent=ent, att=att,
                    stat=stat))
    i = np.flatnonzero(mask)
    g = s + i
    out["nit"][g] = nit[i]
    out["residual"][g] = resid[i]
    out["stationarity"][g] = np.where(code[i] == _CODE.CODE_NOT_CERTIFIED, 0.0, stat[i])
    out["entropy"][g] = ent[i]
    out["attained"][g] = att[i]
    out["mult"][g] = _multipliers(theta[i], batch.grade_ok[i], batch.ref[i])
    return code, nit


def _multipliers(theta, grade_ok, ref):
    """[a_1..a_c, b] relative to the reference category; -inf for empty grades."""
    L = grade_ok.shape[1]
    a = theta[:, :L] - np.take_along_axis(theta[:, :L], ref[:, None], axis=1)
    a = np.where(grade_ok, a, -np.inf)
    return np.concatenate((a[:, 1:], theta[:, L:]), axis=1)


def _write_rows(batch: Batch, i, PT, out, s, status, message, mult=None, attained=None):
    """Write problems i of ``batch`` whose p (category-major PT, len(i) rows) was not computed
    by a kernel: status, message, p, residual, entropy, attained value (E[M](PT), computed
    when not given); multipliers ``mult`` (len(i), L) or 0; stationarity 0."""
    sub = batch.take(i)
    g = s + i
    if attained is None:
        attained = sub.expectation(PT)
    out["P"][g] = PT.transpose(0, 2, 1) if batch.metric.GRADED else PT[:, 1]
    out["status"][g] = status
    out["message"][g] = message
    out["residual"][g] = sub.residuals(PT, attained)
    out["stationarity"][g] = 0.0
    out["entropy"][g] = entropy(PT)
    out["attained"][g] = attained
    out["mult"][g] = 0.0 if mult is None else mult


def _extremes(sub: Batch, top_is_hi):
    """The extreme lists attaining the maximum and the minimum of the range, (B, L, N) each
    (``top_is_hi``: whether the top list attains the maximum, from :meth:`Form.ends <maxent.solver.forms.Form.ends>`)."""
    P_top, P_bot = sub.extreme(True), sub.extreme(False)
    top_is_hi = np.asarray(top_is_hi)[:, None, None]
    return np.where(top_is_hi, P_top, P_bot), np.where(top_is_hi, P_bot, P_top)


def _boundary(batch: Batch, i, P_end, sign, message, lo, hi, tol, out, s):
    """Problems i on an end of their range [lo, hi] (len(i) each): the maximum-entropy
    distribution on the face of the extreme list P_end where it attains the target, else the
    extreme list itself; the metric multiplier is sign x inf (0 for a single-point range)."""
    sub = batch.take(i)
    v = sub.target
    F = sub.face(P_end)
    attained = sub.expectation(F)
    ok = np.abs(attained - v) <= np.maximum(BOUNDARY_RTOL * np.maximum(1.0, np.abs(v)), 0.1 * tol)
    PT = np.where(ok[:, None, None], F, P_end)
    if not ok.all():
        attained[~ok] = sub.take(np.flatnonzero(~ok)).expectation(P_end[~ok])
    mult = np.zeros((len(i), batch.L))
    mult[:, -1] = np.where(one_point(lo, hi), 0.0, sign * np.inf)
    _write_rows(batch, i, PT, out, s, Status.BOUNDARY.value, message, mult, attained)


def _write_classified(batch: Batch, cls, lo, hi, top_is_hi, tol, out, s):
    """The problems classified before any iteration: undefined, on an end, beyond it."""
    i = np.flatnonzero(cls == Target.UNDEFINED)
    if len(i):
        # p = 0, whose residual records how far it is from the counts
        _write_rows(batch, i, np.zeros((len(i), batch.L, batch.active.shape[1])), out, s,
                    Status.UNDEFINED.value, "no relevant document in the qrels: the metric is undefined")
    i = np.flatnonzero((cls != Target.INTERIOR) & (cls != Target.UNDEFINED))
    if not len(i):
        return
    P_hi, P_lo = _extremes(batch.take(i), top_is_hi[i])
    c = cls[i]
    for target, P_end, sign, message in (
            (Target.AT_MAX, P_hi, 1.0, _AT_MAXIMUM),
            (Target.AT_MIN, P_lo, -1.0, "target at the minimum attainable value")):
        k = c == target
        if k.any():
            _boundary(batch, i[k], P_end[k], sign, message, lo[i[k]], hi[i[k]], tol, out, s)
    for target, P_end, why in ((Target.ABOVE, P_hi, "above"), (Target.BELOW, P_lo, "below")):
        k = c == target
        if k.any():
            _write_rows(batch, i[k], P_end[k], out, s, Status.INFEASIBLE.value,
                        f"target {why} the attainable range; p is the nearest deterministic extreme list")


def _uncertified(batch: Batch, i, lo, hi, top_is_hi, tol, out, s):
    """Problems i that no run certified: a target on or within ``tol`` of an end of the
    deterministic range ends ``boundary`` (the extreme list, or its face, meets every
    constraint to tol: e.g. ERR 7e-11 below its maximum, where |b| ~ 5e9); beyond an end
    ``infeasible`` (no feasible distribution found); else ``not_converged`` (the last iterate)."""
    v = batch.target[i]
    lo, hi = lo[i], hi[i]
    P_hi, P_lo = _extremes(batch.take(i), top_is_hi[i])
    at_hi, at_lo = on_end(v, hi), on_end(v, lo)
    done = np.zeros(len(i), dtype=bool)
    near = f"target within {tol:g} (the residual tolerance) of the {{}} attainable value"
    for k, P_end, sign, message in (
            (at_hi, P_hi, 1.0, "target at the maximum deterministic value"),
            (at_lo, P_lo, -1.0, "target at the minimum deterministic value"),
            (np.abs(v - hi) <= tol, P_hi, 1.0, near.format("maximum")),
            (np.abs(v - lo) <= tol, P_lo, -1.0, near.format("minimum"))):
        k = k & ~done
        if k.any():
            _boundary(batch, i[k], P_end[k], sign, message + " (no interior solution found)",
                      lo[k], hi[k], tol, out, s)
            done |= k
    for k, P_end, why in ((v > hi, P_hi, "above"), (v < lo, P_lo, "below")):
        k = k & ~done
        if k.any():
            _write_rows(batch, i[k], P_end[k], out, s, Status.INFEASIBLE.value,
                        f"target {why} the deterministic range and no feasible distribution found; "
                        "p is the nearest extreme list")
            done |= k
    g = s + i[~done]
    out["status"][g] = Status.NOT_CONVERGED.value
    out["message"][g] = "iteration limit reached or line search stalled"


def _solve_reference(batch: Batch, i, out, s):
    """``method="cvxpy"``: the exponential-cone reference, one problem at a time (problems i)."""
    from maxent.solver.reference import solve_cvxpy

    th, PT, nit, conv = solve_cvxpy(batch.take(i))
    _write_rows(batch, i, PT, out, s, np.where(conv, Status.OPTIMAL.value, Status.NOT_CONVERGED.value),
                np.where(conv, "optimal (convex dual)", "the reference solver did not converge"),
                _multipliers(th, batch.grade_ok[i], batch.ref[i]))
    out["nit"][s + i] = nit
