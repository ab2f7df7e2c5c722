"""Bootstrap over topics: the one resampler, and Sakai's paired bootstrap test (Sakai 2006).

Resamples draw topic indices (``rng.integers``) or, with ``weights=True``, draw counts
(``rng.multinomial``) from ``numpy.random.default_rng(seed)``; every bootstrap of the
library draws through :func:`topic_bootstrap`, so a seed means the same resamples everywhere.

Resamples are drawn in blocks of rows (:func:`block_rows`: about :data:`BLOCK_ELEMENTS`
numbers at once), so memory is bounded at any number of topics and resamples. Blocks do not
change the draws: ``Generator.integers`` with its default ``int64`` dtype (any range) draws the
same stream in several calls as in one (numpy keeps the half-used 32-bit word in the bit
generator's state; the small dtypes ``uint8``/``uint16``/``bool`` buffer locally and would
not), and ``multinomial`` draws each row on its own.

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

__all__ = ["BLOCK_ELEMENTS", "block_rows", "resample_topics", "resample_indices", "resample_counts",
           "topic_bootstrap", "paired_bootstrap_asl", "discriminative_power"]

#: numbers (indices, signs, resampled values) drawn or gathered at once: 2**22, 32 MiB of float64
BLOCK_ELEMENTS = 2 ** 22


def block_rows(n_columns: int, n_rows: int, elements: int | None = None) -> int:
    """Rows of ``n_columns`` numbers per block: at most ``elements`` (default
    :data:`BLOCK_ELEMENTS`) numbers, at least 1 row, at most ``n_rows`` (one block when
    everything fits)."""
    elements = BLOCK_ELEMENTS if elements is None else elements
    return max(1, min(int(n_rows), int(elements) // max(1, int(n_columns))))


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

    Neither counts nor indices depend on ``block`` (see the module's notes): the blocks
    stacked are the one-block draws.
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
                         chunk: int = 256, block: int | None = None) -> np.ndarray:
    """ASL of Sakai's paired bootstrap test for each row of per-topic differences.

    Parameters
    ----------
    diffs : (P, n) per-topic differences of P run pairs over the same n topics
    n_boot : B, the number of bootstrap samples; seed : of the resampling (shared by all pairs)
    chunk : at most this many pairs processed at once
    block : resamples drawn at once (default :func:`block_rows`); the result does not depend
        on it, memory is O(block x n x pairs at once), at most about :data:`BLOCK_ELEMENTS`

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
    rows = block_rows(n, n_boot) if block is None else max(1, min(int(block), n_boot))
    pairs = max(1, min(int(chunk), BLOCK_ELEMENTS // (rows * n)))
    observed = np.abs(_t_stat(diffs))
    shifted = diffs - diffs.mean(axis=1, keepdims=True)
    hits = np.zeros(P, dtype=np.int64)
    for idx in resample_topics(n, n_boot, seed, block=rows):
        for a in range(0, P, pairs):
            boot = np.abs(_t_stat(shifted[a:a + pairs][:, idx]))      # (pairs, rows)
            hits[a:a + pairs] += (boot >= observed[a:a + pairs, None] - 1e-12).sum(axis=1)
    asl = hits / n_boot
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
