"""Status vocabulary and the result object of the maximum-entropy solver.

Statuses are strings (they print readably and survive CSV), grouped as in cvxpy's
``settings.py``: callers test ``status in HAS_SOLUTION`` rather than each string.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from enum import Enum

import numpy as np

__all__ = ["Status", "MaxEntResult", "HAS_SOLUTION", "NO_SOLUTION"]


class Status(str, Enum):
    """Outcome of one maximum-entropy problem.

    optimal
        A KKT point was found: every constraint residual (counts and metric) is at most
        ``tol`` (and below 1e-9), and, for metrics non-linear in p, the stationarity residual
        (see ``MaxEntResult.stationarity``) is at most ``kkt_tol``. For metrics linear in p
        the problem is convex and the point is the unique global optimum.
    boundary
        The target equals (to 1e-11, relative) an end of the attainable range, so every
        feasible distribution lies on a face of the polytope: the solution is the
        maximum-entropy distribution on that face (entropy 0 when only one deterministic
        list attains the value, e.g. K = 0, K = N, a perfectly ordered list). The metric
        multiplier b is +-inf. Also, when no interior solution was certified (the last run
        included), a target within ``tol`` of an end: p is then the extreme list (or its
        face), which meets every constraint to ``tol`` (the message says so; e.g. ERR of
        lists whose top documents all have the highest grade, 7e-11 below the maximum,
        where |b| would be ~5e9).
    infeasible
        The target lies outside the attainable range ``value_range`` (certified for metrics
        linear in p, AP and GAP, and above the maximum of RR and ERR; below their
        deterministic minimum: certified under a lower bound of E over every distribution,
        ``cascade_lower_bound``, else when no feasible distribution was found, as the
        message says). ``p`` is the finite fallback: the deterministic
        extreme list nearest the target; ``residual`` records its violation.
    undefined
        The metric is undefined: the qrels have no relevant document at the threshold
        (binary metrics: R = R_{>=rel} = 0; graded metrics: R_{>=1} = 0). ``p`` is all 0.
    not_converged
        The iteration limit was reached (or the line search stalled) before the tolerances
        were met. ``p`` is the last iterate, which satisfies the count constraints; read
        ``residual`` before using it.
    """

    OPTIMAL = "optimal"
    BOUNDARY = "boundary"
    INFEASIBLE = "infeasible"
    UNDEFINED = "undefined"
    NOT_CONVERGED = "not_converged"

    def __str__(self) -> str:  # print as the bare string, also in f-strings
        return self.value


HAS_SOLUTION = frozenset({Status.OPTIMAL, Status.BOUNDARY})
"""Statuses whose ``p`` is a maximum-entropy distribution attaining the target."""

NO_SOLUTION = frozenset({Status.INFEASIBLE, Status.UNDEFINED})
"""Statuses where no distribution attains the target (``p`` is a documented fallback)."""

_HAS = np.array(sorted(s.value for s in HAS_SOLUTION), dtype=object)


@dataclass(frozen=True, eq=False, repr=False)
class MaxEntResult:
    """Maximum-entropy distributions of a batch of B problems.

    Attributes
    ----------
    p : float array (B, N) for binary metrics, (B, N, L) for graded metrics
        Inferred P(rel_n = 1) (binary) or P(grade_n = z) (graded); exactly 0 beyond each
        list's length.
    status : object array (B,) of str
        One of the :class:`Status` values per problem.
    success : bool array (B,)
        ``status in HAS_SOLUTION``.
    message : object array (B,) of str
        Reason for the status, per problem.
    nit : int array (B,)
        Iterations used (Newton steps for the dual; outer linearisation steps otherwise;
        0 for problems classified without iterating).
    residual : float array (B,)
        Max absolute constraint violation: count constraints and |E[M](p) - target|.
    stationarity : float array (B,)
        KKT stationarity residual in log-odds against the reference grade,
        ``max |ln p_n(z)/p_n(ref) - (a_z + b (W_n(z) - W_n(ref)))|`` with W = dE/dp(p), less
        the rounding of W (|b| times 16 ulps of max |W|: it matters only where |b| > ~1e6; the
        compiled kernels report theirs without that allowance);
        0 for linear metrics (p is exactly of that form) and for boundary, infeasible and
        undefined problems, where it does not apply.
    entropy : float array (B,)
        Entropy of p in nats (sum over ranks of the Bernoulli / categorical entropies).
    multipliers : float array (B, 1 + c)
        ``[a_1, ..., a_c, b]``: grade multipliers (a_0 = 0 is the reference; binary: c = 1,
        the single a) and the metric multiplier b, so that
        ``p_n(z) = softmax_z(a_z + b dE/dp_n(z))``. A grade with no document has
        a_z = -inf; if grade 0 has no document the a_z are relative to the lowest populated
        grade. At ``boundary`` b = +inf (maximum) or -inf (minimum) and the a_z are set to 0
        (b = 0 when the range is a single point); for ``infeasible``/``undefined`` all are 0.
        ``not_converged`` keeps the last iterate's multipliers. Never NaN.
    target, attained : float arrays (B,)
        The requested metric value and E[M](p) of the returned p.
    method : str
        The method that solved the interior problems (``newton-dual``, ``newton-kkt``,
        ``linearize``, ``linearize+newton-kkt`` (RR and ERR: successive linearisation, then
        Newton-KKT) or ``cvxpy``); the few problems of a second (linearisation) run say so in
        ``message``.
    K : float array (B, 2) for binary metrics, (B, L) for graded metrics
        The right-hand sides of the count constraints the solver used (docs/method.md,
        ``count=``): binary ``[N - K, K]`` with K the relevant documents, graded K_z per
        grade z (K_0 the rest). None only for results built by hand without it.
    """

    p: np.ndarray
    status: np.ndarray
    success: np.ndarray
    message: np.ndarray
    nit: np.ndarray
    residual: np.ndarray
    stationarity: np.ndarray
    entropy: np.ndarray
    multipliers: np.ndarray
    target: np.ndarray
    attained: np.ndarray
    method: str
    K: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.status)

    def __getitem__(self, index) -> "MaxEntResult":
        """One problem (an integer keeps a batch of one) or a sub-batch (slice, mask, indices)."""
        if isinstance(index, (int, np.integer)):
            index = [int(index)]
        kw = {f.name: getattr(self, f.name)[index] for f in fields(self)
              if f.name != "method" and getattr(self, f.name) is not None}
        return MaxEntResult(method=self.method, **kw)

    def relevant_counts(self, t: int = 1) -> np.ndarray:
        """Count constraints the solver used, as documents of grade >= t per problem:
        (B,) K for a binary solve (whose threshold is the metric's), sum_{z>=t} K_z for a
        graded one; (B, L) K_z per grade with ``t=None`` (graded only)."""
        if self.K is None:
            raise ValueError("this result does not record its count constraints")
        if np.ndim(self.p) == 2:
            return self.K[:, 1]
        return self.K if t is None else self.K[:, t:].sum(axis=1)

    def counts(self) -> dict[str, int]:
        """Number of problems per status, in :class:`Status` order."""
        return {s.value: int((self.status == s.value).sum()) for s in Status}

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={v}" for k, v in self.counts().items() if v)
        worst = float(self.residual[self.success].max(initial=0.0))
        return (f"MaxEntResult(B={len(self)}, method={self.method!r}, {counts or 'empty'}, "
                f"max residual among solved={worst:.3g})")

    def to_frame(self):
        """One row per problem: status, success, message, nit, residual, stationarity,
        entropy, target, attained, multipliers a_1..a_c and b."""
        import pandas as pd

        data = {
            "status": self.status.astype(str),
            "success": self.success,
            "message": self.message.astype(str),
            "nit": self.nit,
            "residual": self.residual,
            "stationarity": self.stationarity,
            "entropy": self.entropy,
            "target": self.target,
            "attained": self.attained,
        }
        c = self.multipliers.shape[1] - 1
        for z in range(c):
            data[f"a_{z + 1}"] = self.multipliers[:, z]
        data["b"] = self.multipliers[:, -1]
        return pd.DataFrame(data)
