"""Softmax over categories of the exponential family p_n(z) = softmax_z(a_z + b W_n(z)),
category-major (B, L, N), as the numpy oracle iterates it."""
from __future__ import annotations

import numpy as np


def softmax_theta(theta: np.ndarray, WT: np.ndarray, active: np.ndarray, grade_ok: np.ndarray):
    """PT = softmax_z(a_z + b W_nz) over allowed categories, 0 beyond lengths; log-partition.

    theta (B, L+1), WT (B, L, N) -> PT (B, L, N), lse (B, N) (0 at inactive ranks).
    """
    B, L, N = WT.shape
    S = theta[:, L, None, None] * WT
    S += theta[:, :L, None]
    if not grade_ok.all():
        S[~grade_ok] = -np.inf
    m = S[:, 0].copy()
    for z in range(1, L):
        np.maximum(m, S[:, z], out=m)
    m[~np.isfinite(m)] = 0.0
    S -= m[:, None, :]
    S[S < -700.0] = -np.inf   # exp would be subnormal (slow arithmetic); 0 is as exact
    np.exp(S, out=S)
    Z = S[:, 0].copy()
    for z in range(1, L):
        Z += S[:, z]
    S *= (active / Z)[:, None, :]
    lse = (m + np.log(Z)) * active
    return S, lse
