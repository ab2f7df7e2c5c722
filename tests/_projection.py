"""Entropy comparison at equal constraints (oracle for rounding-limited solves).

Near the maximum of ERR the metric multiplier is huge (|b| ~ 1e8-1e10), so a point that
misses the target by 1e-12 (inside the solver tolerance 1e-10) gains |b| 1e-12 ~ 1e-2 nats
of entropy by the slack alone. Two solvers are compared fairly after moving the point
onto the constraints exactly: within the exponential family through it,
p'_n(z) ~ p_n(z) exp(a_z + delta b dE/dp_n(z)), Newton on (a, delta) until the counts
hold to 1e-10 (the solver's own tolerance) and E to the rounding of E itself or to
|b| |E - v| <= 1e-9 (its worth in entropy).
"""
from __future__ import annotations

import numpy as np


def project_onto_constraints(metric, one, p, K, v, b, iters=40):
    """p (N, L) graded or (N,) binary of the single list ``one`` (RankedLists of length 1),
    counts K (L,), target v, multiplier b: the projected distribution (same shape) and
    its entropy. Raises AssertionError if Newton does not meet the constraints."""
    graded = p.ndim == 2
    n = int(one.lengths[0])
    P = (p if graded else np.stack([1.0 - p, p], axis=1))[:n]
    G = metric.gradient(p[None], one)[0][:n]
    if not graded:
        G = np.stack([np.zeros(n), G], axis=1)
    G = b * G
    L = P.shape[1]
    with np.errstate(divide="ignore"):
        lp = np.where(P > 0, np.log(P), -np.inf)

    def dist(x):
        lg = lp + x[:L] + x[L] * G
        lg = lg - lg.max(axis=1, keepdims=True)
        e = np.exp(lg)
        return e / e.sum(axis=1, keepdims=True)

    def full(q):
        out = np.zeros(p.shape)
        if graded:
            out[:n] = q
        else:
            out[:n] = q[:, 1]
        return out

    def residual(q):
        E = metric.expectation(full(q)[None], one)[0]
        return np.r_[q.sum(axis=0) - K, b * (E - v)], E

    x = np.zeros(L + 1)
    for _ in range(iters):
        q = dist(x)
        F, E = residual(q)
        if np.abs(F[:L]).max() <= 1e-10 and (abs(F[L]) <= 1e-9 or abs(E - v) <= 2 * np.spacing(abs(v))):
            break
        Jm = np.zeros((L + 1, L + 1))
        for k in range(L + 1):
            dq = q * (G - (q * G).sum(axis=1, keepdims=True)) if k == L else q * ((np.arange(L) == k) - q[:, k:k + 1])
            Jm[:L, k] = dq.sum(axis=0)
            Jm[L, k] = (G * dq).sum()
        x = x - np.linalg.lstsq(Jm, F, rcond=None)[0]
    else:
        raise AssertionError(f"projection did not converge: residual {np.abs(F).max():.1e}")
    q = dist(x)
    h = -(q[q > 0] * np.log(q[q > 0])).sum()
    return full(q), h
