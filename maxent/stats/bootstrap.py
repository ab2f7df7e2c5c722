"""Bootstrap over topics: the one resampler, and Sakai's paired bootstrap test (Sakai 2006).

Resamples draw topic indices (``rng.integers``) or, with ``weights=True``, draw counts
(``rng.multinomial``) from ``numpy.random.default_rng(seed)``; every bootstrap of the
library draws through :func:`topic_bootstrap`, so a seed means the same resamples everywhere.

Sakai's test: with per-topic differences z and :math:`t(z) = \\bar z / (s_z / \\sqrt n)`, the
null is enforced by shifting, w = z - mean(z), and

.. math:: ASL = \\#\\{b : |t(w^*_b)| \\ge |t(z)|\\} / B

over the same B resamples for every pair. All z = 0 gives ASL = 1; a constant non-zero
difference gives 0.
"""
from __future__ import annotations

from typing import Callable, Iterator

import numpy as np

from maxent.errors import ParameterError

__all__ = ["resample_topics", "resample_indices", "resample_counts", "topic_bootstrap",
           "paired_bootstrap_asl", "discriminative_power"]


def _draw(rng: np.random.Generator, n_topics: int, rows: int, weights: bool) -> np.ndarray:
    if not weights:
        return rng.integers(0, n_topics, size=(rows, n_topics))
    if n_topics == 0:
        return np.zeros((rows, 0))
    return rng.multinomial(n_topics, np.full(n_topics, 1.0 / n_topics), size=rows).astype(np.float64)


def resample_topics(n_topics: int, n_boot: int, seed: int = 0, *, weights: bool = False,
                    block: int | None = None) -> Iterator[np.ndarray]:
    """The ``n_boot`` bootstrap resamples of ``n_topics`` topics, in blocks of ``block`` rows:
    (rows, n_topics) topic indices, or with ``weights=True`` draw counts (float).

    Counts do not depend on ``block``; indices do (the generator buffers its draws), so a
    caller reproducing earlier numbers keeps its block size.
    """
    if n_topics < 1 and not weights:
        raise ParameterError(f"the bootstrap needs at least 1 topic, got {n_topics}")
    if n_boot < 1:
        raise ParameterError(f"the bootstrap needs n_boot >= 1 resamples, got {n_boot}")
    block = n_boot if block is None else max(1, int(block))
    rng = np.random.default_rng(seed)
    for r0 in range(0, n_boot, block):
        yield _draw(rng, n_topics, min(block, n_boot - r0), weights)


def resample_indices(n_topics: int, n_boot: int, seed: int = 0) -> np.ndarray:
    """(n_boot, n_topics) topic indices of ``n_boot`` bootstrap resamples, drawn in one block."""
    return next(resample_topics(n_topics, n_boot, seed))


def resample_counts(n_topics: int, n_boot: int, seed: int = 0) -> np.ndarray:
    """(n_boot, n_topics) float counts of each topic in each bootstrap resample."""
    return _draw(np.random.default_rng(seed), n_topics, n_boot, True)


def topic_bootstrap(statistic: Callable[[np.ndarray], np.ndarray], n_topics: int, n_boot: int, seed: int = 0, *,
                    weights: bool = False, block: int | None = None) -> np.ndarray:
    """``statistic`` of every bootstrap resample, stacked: it maps one block of
    :func:`resample_topics` (rows, n_topics) to an array with the block's rows first."""
    out = None
    r0 = 0
    for draw in resample_topics(n_topics, n_boot, seed, weights=weights, block=block):
        s = np.asarray(statistic(draw))
        if out is None:
            out = np.empty((n_boot, *s.shape[1:]), dtype=s.dtype)
        out[r0:r0 + len(s)] = s
        r0 += len(s)
    return out


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
    diffs : (P, n) per-topic differences of P run pairs over the same n topics
    n_boot : B, the number of bootstrap samples; seed : of the resampling (shared by all pairs)
    chunk : pairs processed at once (bounds memory)

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
    idx = resample_indices(n, n_boot, seed)
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
