"""Discriminative power: Sakai's paired bootstrap hypothesis test over topics (Sakai 2006).

For runs X, Y with per-topic differences z_1..z_n, the studentised statistic is
:math:`t(z) = \\bar z / (s_z / \\sqrt n)`. The null hypothesis is enforced by shifting,
w = z - mean(z); B bootstrap samples w*_b (n topics drawn with replacement) give the
achieved significance level

.. math:: ASL = \\#\\{b : |t(w^*_b)| \\ge |t(z)|\\} / B.

The same B resamplings of topics are used for every pair of runs (as Sakai), drawn from a
seeded generator, so results are reproducible. Conventions for degenerate pairs: all z = 0
(identical effectiveness on every topic) gives ASL = 1; a constant non-zero difference
(s_z = 0) gives ASL = 0; a resample with s = 0 has t = 0 when its mean is 0.
"""
from __future__ import annotations

import numpy as np

from maxent.errors import ParameterError

__all__ = ["paired_bootstrap_asl", "discriminative_power"]


def _t_stat(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    mean = x.mean(axis=-1)
    sd = x.std(axis=-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(n))
    t = np.where(sd > 0, t, np.where(np.abs(mean) > 1e-15, np.inf, 0.0))
    return t


def paired_bootstrap_asl(diffs: np.ndarray, n_boot: int = 1000, seed: int = 0,
                         chunk: int = 256) -> np.ndarray:
    """ASL of Sakai's paired bootstrap test for each row of per-topic differences.

    Parameters
    ----------
    diffs : (P, n) per-topic metric differences of P run pairs over the same n topics
    n_boot : B, the number of bootstrap samples
    seed : seed of the topic resampling (shared by all pairs)
    chunk : pairs processed at once (bounds memory at chunk x B x n floats)

    Returns
    -------
    (P,) achieved significance levels in [0, 1].
    """
    diffs = np.atleast_2d(np.asarray(diffs, dtype=np.float64))
    P, n = diffs.shape
    if n < 2:
        raise ParameterError(f"the bootstrap test needs at least 2 topics, got {n}")
    if n_boot < 1:
        raise ParameterError(f"n_boot must be >= 1, got {n_boot}")
    idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    observed = np.abs(_t_stat(diffs))
    shifted = diffs - diffs.mean(axis=1, keepdims=True)
    asl = np.empty(P)
    for a in range(0, P, chunk):
        w = shifted[a:a + chunk]
        boot = np.abs(_t_stat(w[:, idx]))                 # (chunk, B)
        asl[a:a + chunk] = (boot >= observed[a:a + chunk, None] - 1e-12).mean(axis=1)
    same = np.all(np.abs(diffs) < 1e-15, axis=1)
    asl[same] = 1.0
    return asl


def discriminative_power(values: np.ndarray, n_boot: int = 1000, seed: int = 0, alpha: float = 0.05):
    """ASL of every pair of runs and the fraction significant at ``alpha``.

    values : (R, n) per-topic metric values of R runs on the same n topics.
    Returns (pairs (P, 2) run indices i < j, asl (P,), fraction of asl < alpha).
    """
    values = np.asarray(values, dtype=np.float64)
    i, j = np.triu_indices(values.shape[0], k=1)
    if len(i) == 0:
        return np.zeros((0, 2), dtype=int), np.zeros(0), float("nan")
    asl = paired_bootstrap_asl(values[i] - values[j], n_boot=n_boot, seed=seed)
    return np.stack([i, j], axis=1), asl, float((asl < alpha).mean())
