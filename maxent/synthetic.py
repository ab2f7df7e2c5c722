r"""Synthetic learning-to-rank data with tunable difficulty.

:func:`make_synthetic` draws a :class:`~maxent.letor.RankingData` like a web learning-to-rank set
(MSLR-WEB10K, Yahoo LTR) in the respects the comparisons of training metrics depend on (Yilmaz &
Robertson 2010; Donmez, Svore & Burges 2009; Qin, Liu & Li 2010), at any size:

* graded labels 0-4, most documents non-relevant (default fractions close to MSLR-WEB10K's),
  with a per-query shift of the latent relevance so that queries differ in relevant documents;
* documents per query log-uniform on ``[min_docs, max_docs]``;
* a relevance function of ``n_informative`` latent features :math:`z \sim U[0,1]`: the random
  cubic polynomial of Donmez et al. (2009, section 6, after Burges et al. 2005) or a random
  linear form;
* features :math:`x = z + \sigma\,\epsilon` (``feature_noise``, the difficulty knob, in units of
  the sd of z), ``n_redundant`` noisy random mixtures of z and ``n_noise`` useless features.

``task_seed`` fixes the ranking problem (relevance function, mixtures, thresholds) and ``seed``
the sample; the same arguments give bit-identical data. :func:`artificial` gives the arguments
of the artificial data of Donmez et al. (2009): fixed-length queries whose features are the
latent features, drawn from the ``streams="artificial"`` random streams, which keep the draws
(and every result computed on them) of the library's first generator of that set.
"""
from __future__ import annotations

import numpy as np

from maxent.errors import ParameterError
from maxent.letor import RankingData

__all__ = ["make_synthetic", "artificial", "RELEVANCE_FUNCTIONS", "DEFAULT_GRADE_FRACTIONS",
           "ARTIFICIAL_GRADE_FRACTIONS", "STREAMS"]

RELEVANCE_FUNCTIONS = ("cubic", "linear")
DEFAULT_GRADE_FRACTIONS = (0.52, 0.32, 0.13, 0.02, 0.01)
ARTIFICIAL_GRADE_FRACTIONS = (0.45, 0.30, 0.15, 0.07, 0.03)
STREAMS = ("synthetic", "artificial")
_Z_SD = 1.0 / np.sqrt(12.0)            # standard deviation of U[0, 1]
_REFERENCE_DOCS = 200_000              # documents drawn to place the grade thresholds
_ARTIFICIAL_REFERENCE_DOCS = 100_000   # under streams="artificial"


class _Task:
    """The ranking problem of one ``task_seed``: relevance function, mixtures, thresholds."""

    def __init__(self, rng, relevance, n_informative, n_redundant, n_terms, query_shift, grade_fractions,
                 streams="synthetic"):
        k = n_informative
        T = k if n_terms is None else int(n_terms)
        self.relevance = relevance
        if streams == "synthetic":
            self.lin = rng.standard_normal(k)
        if relevance == "cubic":
            self.idx1 = rng.integers(k, size=T)
            self.idx2 = rng.integers(k, size=(T, 2))
            self.idx3 = rng.integers(k, size=(T, 3))
            self.a, self.b, self.c = rng.standard_normal(T), rng.standard_normal(T), rng.standard_normal(T)
        if streams == "artificial":
            # thresholds on the raw polynomial (mean 0 and sd 1 leave it exactly as it is)
            ref = self.raw(rng.random((_ARTIFICIAL_REFERENCE_DOCS, k)))
            self.mean, self.sd, self.spread = 0.0, 1.0, ref.std()
            self.thresholds = np.quantile(ref, np.cumsum(grade_fractions)[:-1])
            return
        self.mix = rng.standard_normal((k, n_redundant)) / np.sqrt(k)
        ref = self.raw(rng.random((_REFERENCE_DOCS, k)))
        self.mean, self.sd = float(ref.mean()), float(ref.std())
        self.spread = 1.0                   # relevance_of is in units of its spread already
        shifted = (ref - self.mean) / self.sd + query_shift * rng.standard_normal(_REFERENCE_DOCS)
        self.thresholds = np.quantile(shifted, np.cumsum(grade_fractions)[:-1])

    def raw(self, Z: np.ndarray) -> np.ndarray:
        if self.relevance == "linear":
            return Z @ self.lin
        return (Z[:, self.idx1] @ self.a + (Z[:, self.idx2[:, 0]] * Z[:, self.idx2[:, 1]]) @ self.b
                + (Z[:, self.idx3[:, 0]] * Z[:, self.idx3[:, 1]] * Z[:, self.idx3[:, 2]]) @ self.c)

    def relevance_of(self, Z: np.ndarray) -> np.ndarray:
        """Latent relevance, standardised over the task's document distribution."""
        return (self.raw(Z) - self.mean) / self.sd


def artificial(docs_per_query: int = 50, n_features: int = 20) -> dict:
    """The :func:`make_synthetic` arguments of the artificial data of Donmez et al. (2009, section 6):
    ``n_features`` uniform features that are the cubic polynomial's inputs, grades at the quantiles
    :data:`ARTIFICIAL_GRADE_FRACTIONS`. Use as ``make_synthetic(Q, **artificial(50, 20), seed=s)``."""
    return dict(docs_per_query=docs_per_query, n_informative=n_features, n_redundant=0, n_noise=0,
                feature_noise=0.0, relevance="cubic", query_shift=0.0, grade_fractions=ARTIFICIAL_GRADE_FRACTIONS,
                min_relevant=0, streams="artificial")


def make_synthetic(n_queries: int = 10_000, *, min_docs: int = 10, max_docs: int = 200,
                   docs_per_query: int | None = None, n_informative: int = 8, n_redundant: int = 8,
                   n_noise: int = 16, feature_noise: float = 2.0, relevance: str = "cubic",
                   n_terms: int | None = None, query_shift: float = 0.5, label_noise: float = 0.0,
                   grade_fractions=DEFAULT_GRADE_FRACTIONS, min_relevant: int = 1, seed: int = 0,
                   task_seed: int | None = None, streams: str = "synthetic") -> RankingData:
    r"""Draw a synthetic learning-to-rank sample (the model: module docstring).

    Parameters
    ----------
    n_queries : int
        Queries Q (split them with :func:`maxent.letor.split_queries`).
    min_docs, max_docs : int
        Documents per query, log-uniform integers on ``[min_docs, max_docs]``.
    docs_per_query : int, optional
        Every query this long instead (no lengths drawn; ``min_docs``, ``max_docs`` unused).
    n_informative, n_redundant, n_noise : int
        Noisy copies of the latent features, noisy random mixtures of them, and features
        independent of relevance; F = the sum, in that column order.
    feature_noise : float
        :math:`\sigma \ge 0`, Gaussian noise on the informative and redundant features in units
        of the latent features' standard deviation.
    relevance : {"cubic", "linear"}
    n_terms : int, optional
        Terms of each order of the cubic polynomial; default ``n_informative``.
    query_shift : float
        Standard deviation of a per-query shift of the latent relevance (in units of its spread).
    label_noise : float
        Gaussian noise on the latent relevance before grading (in units of its spread).
    grade_fractions : sequence of float
        Expected share of each grade 0..G-1 (before ``min_relevant``).
    min_relevant : int
        In a query with fewer documents of grade >= 1, the most relevant are raised to grade 1.
    seed, task_seed : int
        Seed of the sample and of the ranking problem (default ``seed``).
    streams : {"synthetic", "artificial"}
        How the seeds become draws; ``"artificial"`` takes only the arguments of
        :func:`artificial` (any ``n_queries``, ``docs_per_query``, ``n_informative``,
        ``n_terms``, ``grade_fractions``, ``label_noise`` and seeds).

    Returns
    -------
    RankingData
        Features (D, F), grades 0..G-1, query ids ``"0"``..``"Q-1"``; ``source`` names the
        generator and its arguments.
    """
    if relevance not in RELEVANCE_FUNCTIONS:
        raise ParameterError(f"relevance must be one of {RELEVANCE_FUNCTIONS}, got {relevance!r}")
    if streams not in STREAMS:
        raise ParameterError(f"streams must be one of {STREAMS}, got {streams!r}")
    if n_queries < 1:
        raise ParameterError(f"n_queries must be >= 1, got {n_queries}")
    if docs_per_query is not None:
        if docs_per_query < 1:
            raise ParameterError(f"docs_per_query must be >= 1, got {docs_per_query}")
        min_docs = max_docs = int(docs_per_query)
    if not 1 <= min_docs <= max_docs:
        raise ParameterError(f"1 <= min_docs <= max_docs is required, got min_docs={min_docs}, max_docs={max_docs}")
    if n_informative < 1 or n_redundant < 0 or n_noise < 0:
        raise ParameterError("n_informative must be >= 1 and n_redundant, n_noise >= 0, got "
                             f"{n_informative}, {n_redundant}, {n_noise}")
    for name, v in (("feature_noise", feature_noise), ("query_shift", query_shift), ("label_noise", label_noise)):
        if not (np.isfinite(v) and v >= 0):
            raise ParameterError(f"{name} must be a finite number >= 0, got {v}")
    if streams == "artificial" and (docs_per_query is None or relevance != "cubic" or n_redundant or n_noise
                                    or feature_noise or query_shift or min_relevant):
        raise ParameterError("streams='artificial' draws the set of artificial(): fixed docs_per_query, cubic "
                             "relevance, no redundant or noise features, feature_noise, query_shift and "
                             "min_relevant 0")
    gf = np.asarray(grade_fractions, dtype=float)
    if gf.ndim != 1 or len(gf) < 2 or np.any(gf < 0) or abs(gf.sum() - 1) > 1e-9:
        raise ParameterError(f"grade_fractions must be >= 2 non-negative shares summing to 1, got {list(grade_fractions)}")
    if not 0 <= min_relevant <= min_docs:
        raise ParameterError(f"min_relevant must be in 0..min_docs ({min_docs}), got {min_relevant}")
    tseed = seed if task_seed is None else int(task_seed)
    if streams == "artificial":
        trng, rng = np.random.default_rng(tseed), np.random.default_rng([seed, 1])
    else:
        trng, rng = np.random.default_rng([tseed, 7]), np.random.default_rng([seed, 11])
    task = _Task(trng, relevance, n_informative, n_redundant, n_terms, query_shift, gf, streams)

    if docs_per_query is None:
        lo, hi = np.log(min_docs), np.log(max_docs + 1)
        sizes = np.minimum(np.exp(rng.uniform(lo, hi, n_queries)).astype(np.int64), max_docs)
    else:
        sizes = np.full(n_queries, docs_per_query, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    D = int(offsets[-1])
    qi = np.repeat(np.arange(n_queries), sizes)

    Z = rng.random((D, n_informative))
    f = task.relevance_of(Z)
    if streams == "artificial":
        X = Z                                       # the features are the polynomial's inputs
    else:
        f = f + query_shift * rng.standard_normal(n_queries)[qi]
        noise_sd = feature_noise * _Z_SD
        X = np.empty((D, n_informative + n_redundant + n_noise))
        X[:, :n_informative] = Z + noise_sd * rng.standard_normal((D, n_informative))
        X[:, n_informative:n_informative + n_redundant] = (Z @ task.mix
                                                           + noise_sd * rng.standard_normal((D, n_redundant)))
        X[:, n_informative + n_redundant:] = rng.random((D, n_noise))
    if label_noise > 0:                             # drawn last: the other draws stay as without it
        f = f + label_noise * task.spread * rng.standard_normal(D)
    y = np.searchsorted(task.thresholds, f, side="right").astype(np.int64)
    if min_relevant > 0:
        y = _raise_top(y, f, offsets, sizes, min_relevant)
    qids = np.arange(n_queries).astype(str).astype(object)
    if streams == "artificial":
        src = (f"artificial(cubic, F={n_informative}, Q={n_queries}, N={docs_per_query}, seed={seed}, "
               f"task_seed={tseed})")
    else:
        docs = f"{min_docs}-{max_docs}" if docs_per_query is None else f"{docs_per_query}"
        src = (f"synthetic({relevance}, Q={n_queries}, docs={docs}, F={n_informative}+{n_redundant}"
               f"+{n_noise}, feature_noise={feature_noise:g}, query_shift={query_shift:g}, "
               + (f"label_noise={label_noise:g}, " if label_noise else "") + f"seed={seed}, task_seed={tseed})")
    return RankingData(X, y, offsets, qids, src)


def _raise_top(y, f, offsets, sizes, k):
    """Grades with the k documents of largest latent relevance of each query with fewer than k
    relevant ones raised to grade 1."""
    qi = np.repeat(np.arange(len(sizes)), sizes)
    order = np.lexsort((-f, qi))                       # by query, then relevance descending
    rank = np.empty(len(y), dtype=np.int64)
    rank[order] = np.arange(len(y)) - np.repeat(offsets[:-1], sizes)
    short = np.bincount(qi, weights=(y >= 1), minlength=len(sizes)) < k
    return np.where(short[qi] & (rank < k), np.maximum(y, 1), y)
