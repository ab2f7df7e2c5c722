r"""Swap deltas and LambdaRank gradients for any supported metric (METHOD.md section 6).

For a query ranked by model score, the swap delta :math:`\Delta M_{ab}` is the change of the
metric when the documents at ranks a and b exchange places (all else fixed). The LambdaRank
gradient of a document is the sum, over the pairs it belongs to, of

.. math:: \lambda_{ij} = \sigma\,|\Delta M_{ij}|\,\rho_{ij}, \qquad
          \rho_{ij} = \frac{1}{1 + e^{\sigma (s_i - s_j)}}, \qquad l_i > l_j,

added to the better document i and subtracted from j: :math:`\lambda_i = \sum_j \lambda_{ij}
- \sum_j \lambda_{ji}` (paper 001 eqs. 4-7; paper 000 section 4.2). A positive
:math:`\lambda_i` pushes document i up, so the model moves by :math:`+\eta \sum_i \lambda_i
\partial s_i / \partial \theta`.

Two exact kernels, no Python loop over documents or pairs:

* ``dense`` (short lists): batched over B queries padded to N documents, all N x N pairs at
  once; the metric-specific part is only the swap delta (:func:`swap_deltas`), O(1) per pair
  from prefix sums (STYLE B4).
* ``blocks`` (long lists; :func:`_lambdas_blocks`): per query, only the pairs with
  l_i > l_j, grouped by grade level. Inside a block of levels (h, l) every delta is an outer
  sum :math:`p_a + q_c` of rank vectors on either side of the diagonal (prefix sums for AP,
  per-threshold AP sums for GAP, prefix products for ERR), the pair sigmoid is
  :math:`e_c / (e_a + e_c)`, and the lambdas are matrix-vector products; the delta matrix is
  never formed. Cut metrics (nDCG@k, P@k, ERR@k) only need the k x N strip of pairs with a
  rank <= k.

Supported metric families (read from the metric object of the library, ``maxent.metrics``):
``nDCG`` (any cutoff, ``gain`` linear / exp), ``P@k``, ``AP``, ``RR``, ``GAP(g)`` and
``ERR@k``; the binary ones use the metric's relevance threshold ``rel``.

Parameter names follow LightGBM / XGBoost: ``sigma`` (LightGBM ``sigmoid``, XGBoost
``lambdarank_pair_method`` has none; RankNet's sigma), ``truncation`` (LightGBM
``lambdarank_truncation_level``: only pairs with at least one document in the top
``truncation`` ranks) and ``norm`` (LightGBM ``lambdarank_norm``: scale a query's lambdas by
log2(1 + S) / S, S = sum of |lambda_ij|).
"""
from __future__ import annotations

import re

import numpy as np

from maxent.errors import ParameterError

__all__ = [
    "metric_family",
    "DeltaContext",
    "swap_deltas",
    "rank_by_score",
    "lambda_gradients",
]

_FAMILIES = {
    "ndcg": "ndcg", "p": "precision", "precision": "precision", "ap": "ap", "map": "ap",
    "rr": "rr", "mrr": "rr", "recip_rank": "rr", "gap": "gap", "err": "err",
}


def metric_family(metric) -> str:
    """The swap-delta family of a metric object: ndcg, precision, ap, rr, gap or err.

    Read from the metric's class attribute ``NAME`` when present, else from the leading word
    of its canonical name (``str(metric)``).
    """
    name = getattr(type(metric), "NAME", None) or getattr(metric, "NAME", None)
    if not isinstance(name, str):
        m = re.match(r"[A-Za-z_]+", str(metric))
        name = m.group(0) if m else ""
    fam = _FAMILIES.get(name.lower())
    if fam is None:
        raise ParameterError(f"no LambdaRank swap delta for metric {metric!s}; supported: "
                             "nDCG, P@k, AP, RR, GAP, ERR")
    return fam


def _cutoff(metric):
    k = getattr(metric, "cutoff", None)
    return None if k is None or k == 0 else int(k)


def _rel(metric) -> int:
    t = getattr(metric, "rel", None)
    return 1 if t is None else int(t)


def _gains(metric, grades: np.ndarray) -> np.ndarray:
    """Gain of every grade (unjudged / padding -1 -> 0), float64, same shape as ``grades``.

    Uses the metric's own ``gains(levels)`` table when it has one (the library's nDCG),
    else ``gain`` = linear (grade) or exp (2^grade - 1).
    """
    g = np.maximum(grades, 0)
    if hasattr(metric, "gains"):
        table = np.asarray(metric.gains(int(g.max(initial=0)) + 1), dtype=np.float64)
        return np.where(grades >= 0, table[g], 0.0)
    kind = getattr(metric, "gain", "linear") or "linear"
    if kind == "linear":
        return g.astype(np.float64)
    if kind == "exp":
        return np.exp2(g) - 1.0
    if isinstance(kind, dict) or hasattr(kind, "get"):
        table = np.array([float(dict(kind).get(z, z)) for z in range(int(g.max(initial=0)) + 1)])
        return np.where(grades >= 0, table[g], 0.0)
    raise ParameterError(f"unknown gain {kind!r}")


def _discount(N: int, k: int | None) -> np.ndarray:
    """D(r) = 1 / log2(r + 1) for r <= k, else 0; shape (N,), r = 1..N."""
    d = 1.0 / np.log2(np.arange(2, N + 2, dtype=np.float64))
    if k is not None:
        d[k:] = 0.0
    return d


class DeltaContext:
    """Per-query constants of one metric (ideal DCG, R, GAP weights...), computed once.

    Parameters
    ----------
    metric : metric object
        A metric of the library (``parse_measure(...)``).
    rel_counts : ndarray, shape (B, L)
        Number of judged documents of each grade 0..L-1 per query.

    Notes
    -----
    Build one per (metric, data set) and pass it to :func:`swap_deltas` /
    :func:`lambda_gradients` with ``rows`` to select the queries of a batch (STYLE B4:
    per-query constants are cached per data set).
    """

    def __init__(self, metric, rel_counts):
        rc = np.atleast_2d(np.asarray(rel_counts, dtype=np.int64))
        self.metric = metric
        self.family = metric_family(metric)
        self.rel_counts = rc
        B, L = rc.shape
        fam = self.family
        self.k = _cutoff(metric)
        if fam in ("ap", "rr", "gap") and self.k is not None:
            raise ParameterError(f"LambdaRank supports {metric!s} only without a cutoff")
        if getattr(metric, "discount", "log2") not in (None, "log2"):
            raise ParameterError(f"LambdaRank supports only the log2 discount, not {metric!s}")
        if fam == "ndcg":
            # ideal DCG: all judged documents sorted by non-increasing grade, cut at k unless
            # the metric asks for the full ideal list (trec_eval ndcg_cut vs ndcg; METHOD 2).
            ideal_cut = getattr(metric, "ideal_cut", True)
            levels = np.arange(L)
            gains = _gains(metric, levels)
            n_max = int(rc.sum(axis=1).max(initial=1))
            depth = n_max if (self.k is None or not ideal_cut) else min(self.k, n_max)
            geq = np.cumsum(rc[:, ::-1], axis=1)[:, ::-1]          # (B, L) R_{>=z}
            r = np.arange(1, depth + 1)
            # grade at ideal rank r = largest z with R_{>=z} >= r (0 when beyond judged docs)
            ideal_grade = (geq[:, None, 1:] >= r[None, :, None]).sum(axis=2)  # (B, depth)
            in_list = r[None, :] <= geq[:, :1]
            ideal_gain = np.where(in_list, gains[ideal_grade], 0.0)
            self.idcg = ideal_gain @ _discount(depth, None)
            self.inv_norm = np.divide(1.0, self.idcg, out=np.zeros(B), where=self.idcg > 0)
            self.monotone = bool(np.all(np.diff(gains) > 0))
        elif fam in ("precision", "ap", "rr"):
            t = _rel(metric)
            self.t = t
            self.R = rc[:, t:].sum(axis=1) if t < L else np.zeros(B, np.int64)
            if fam == "precision" and self.k is None:
                raise ParameterError("P needs a cutoff (P@k) for LambdaRank")
        elif fam == "gap":
            if hasattr(metric, "weights"):      # the library's g_0..g_{L-1} (g_0 = 0)
                g = np.asarray(metric.weights(L), dtype=np.float64)[1:]
            else:
                g = getattr(metric, "g", None)
                if g is None or len(g) == 0:
                    c = max(L - 1, 1)
                    g = (1.0 / c,) * c
            self.g = np.asarray(g, dtype=np.float64)
            c = len(self.g)
            # R_{>=j} for j = 1..c (grades above c count as c)
            geq = np.stack([rc[:, j:].sum(axis=1) if j < L else np.zeros(B, np.int64)
                            for j in range(1, c + 1)], axis=1)
            self.R_geq = geq
            self.Z = geq @ self.g
            self.inv_Z = np.divide(1.0, self.Z, out=np.zeros(B), where=self.Z > 0)
        elif fam == "err":
            if hasattr(metric, "satisfaction"):  # the library's stopping probabilities r(z)
                self.r_of_grade = np.asarray(metric.satisfaction(L), dtype=np.float64)
            else:                                # Chapelle: (2^z - 1) / 2^c
                cmax = getattr(metric, "max_grade", None)
                c = int(L - 1 if cmax is None else cmax)
                z = np.minimum(np.arange(L), c)
                self.r_of_grade = (np.exp2(z) - 1.0) / 2.0 ** c
        else:  # pragma: no cover - metric_family already checked
            raise AssertionError(fam)

    def take(self, rows) -> "DeltaContext":
        """The context restricted to some queries (rows of ``rel_counts``)."""
        if rows is None:
            return self
        out = object.__new__(DeltaContext)
        out.__dict__.update(self.__dict__)
        for name in ("rel_counts", "idcg", "inv_norm", "R", "R_geq", "Z", "inv_Z"):
            if name in self.__dict__:
                out.__dict__[name] = self.__dict__[name][rows]
        return out


def _symmetric_from_upper(T: np.ndarray) -> np.ndarray:
    """Keep T[:, a, b] for a < b and mirror it to b < a; zero diagonal. (B, N, N)."""
    T = np.triu(T, 1)
    return T + T.transpose(0, 2, 1)


def swap_deltas(metric, grades, rel_counts=None, *, context: DeltaContext | None = None,
                rows=None, lengths=None) -> np.ndarray:
    r"""Change of the metric when the documents at ranks a and b swap, for all pairs.

    Parameters
    ----------
    metric : metric object
        nDCG, P@k, AP, RR, GAP or ERR from ``maxent.metrics``.
    grades : array_like, shape (B, N) or (N,)
        Grades in ranked order (rank 1 first); -1 marks unjudged documents and padding.
    rel_counts : array_like, shape (B, L) or (L,)
        Judged documents of each grade per query (the query's qrels). Not needed when
        ``context`` is given.
    context : DeltaContext, optional
        Precomputed per-query constants; ``rows`` selects the queries of this batch.
    lengths : array_like, shape (B,), optional
        Ranked documents per query; positions at or beyond are padding and get delta 0.
        Default: positions up to the last non-padding grade.

    Returns
    -------
    ndarray, shape (B, N, N) or (N, N)
        :math:`\Delta M_{ab} = M(\text{list with a, b swapped}) - M(\text{list})`; symmetric,
        zero on the diagonal, zero for equal (binary) relevance.

    Notes
    -----
    With 1-based ranks a < b, :math:`C(r)` the number of relevant documents in the top r and
    :math:`S(r) = \sum_{m \le r} rel_m / m`:

    * nDCG@k: :math:`(G(l_a) - G(l_b)) (D(b) - D(a)) / IDCG@k`,
      :math:`D(r) = 1/\log_2(r+1)` for r <= k (paper 001 eq. 7).
    * P@k: :math:`(rel_a - rel_b)(D(b) - D(a))`, :math:`D(r) = 1/k` for r <= k (paper 000
      section 4.2.1).
    * AP: :math:`\frac{rel_b - rel_a}{R}\left[\frac{C(a-1)+1}{a} + S(b-1) - S(a) -
      \frac{C(b)}{b}\right]` (paper 001 eq. 9, paper 000 section 4.2.2, in both directions).
    * RR: with f the rank of the first relevant document and f_2 of the second:
      :math:`1/a - 1/f` when the relevant one moves from b >= f to a < f (paper 001 eq. 11),
      :math:`1/\min(b, f_2) - 1/f` when the first relevant one (a = f) moves down to b, else 0.
    * GAP(g): :math:`\sum_j g_j R_{\ge j} \Delta AP_{\ge j} / \sum_j g_j R_{\ge j}` (METHOD
      section 2 identity).
    * ERR@k: with :math:`P(n) = \prod_{m<n}(1 - r_m)` and :math:`E(n)` the prefix sum of the
      ERR terms, :math:`(r_b - r_a)P(a)/a + (E(b-1) - E(a))(\frac{1-r_b}{1-r_a} - 1) +
      P(b)(r_a\frac{1-r_b}{1-r_a} - r_b)/b`, terms beyond k dropped.
    """
    y = np.asarray(grades)
    single = y.ndim == 1
    y = np.atleast_2d(y).astype(np.int64)
    B, N = y.shape
    if context is None:
        if rel_counts is None:
            raise ParameterError("swap_deltas needs rel_counts or a context")
        context = DeltaContext(metric, np.atleast_2d(rel_counts))
    ctx = context.take(rows)
    if lengths is None:
        valid = np.cumsum((y >= 0)[:, ::-1], axis=1)[:, ::-1] > 0
    else:
        valid = np.arange(N)[None, :] < np.asarray(lengths).reshape(-1, 1)
    fam = ctx.family
    r = np.arange(1, N + 1, dtype=np.float64)
    if fam == "ndcg":
        G = _gains(ctx.metric, y) * ctx.inv_norm[:, None]
        D = _discount(N, ctx.k)
        out = (G[:, :, None] - G[:, None, :]) * (D[None, None, :] - D[None, :, None])
    elif fam == "precision":
        rel = (y >= ctx.t).astype(np.float64) / ctx.k
        D = (r <= ctx.k).astype(np.float64)
        out = (rel[:, :, None] - rel[:, None, :]) * (D[None, None, :] - D[None, :, None])
    elif fam == "ap":
        out = _ap_terms(y >= ctx.t, r) * np.divide(1.0, ctx.R, out=np.zeros(B), where=ctx.R > 0)[:, None, None]
    elif fam == "gap":
        out = np.zeros((B, N, N))
        for j, gj in enumerate(ctx.g, start=1):   # loop over grade levels c (small), not documents
            if gj != 0:
                out += (gj * ctx.inv_Z)[:, None, None] * _ap_terms(y >= j, r)
    elif fam == "rr":
        out = _rr_deltas(y >= ctx.t, r)
    elif fam == "err":
        out = _err_deltas(y, ctx.r_of_grade, ctx.k, r)
    else:  # pragma: no cover
        raise AssertionError(fam)
    out = out * (valid[:, :, None] & valid[:, None, :])
    return out[0] if single else out


def _ap_terms(relb: np.ndarray, r: np.ndarray) -> np.ndarray:
    """R * Delta AP for all pairs (B, N, N), binary relevance ``relb`` (B, N) in rank order."""
    rel = relb.astype(np.float64)
    C = np.cumsum(rel, axis=1)                     # C(a)
    S = np.cumsum(rel / r, axis=1)                 # S(a)
    C_prev = C - rel                               # C(a-1)
    S_prev = S - rel / r                           # S(b-1)
    U = (C_prev + 1.0) / r - S                     # depends on the upper rank a
    V = S_prev - C / r                             # depends on the lower rank b
    T = (U[:, :, None] + V[:, None, :]) * (rel[:, None, :] - rel[:, :, None])
    return _symmetric_from_upper(T)


def _rr_deltas(relb: np.ndarray, r: np.ndarray) -> np.ndarray:
    B, N = relb.shape
    inf = np.inf
    pos = np.where(relb, r[None, :], inf)
    srt = np.sort(pos, axis=1)
    f = srt[:, 0]
    f2 = srt[:, 1] if N > 1 else np.full(B, inf)
    inv_f = np.where(np.isfinite(f), 1.0 / f, 0.0)
    rel = relb
    a = r[None, :, None]
    b = r[None, None, :]
    # case 1: non-relevant at a above the first relevant f, relevant at b: RR becomes 1/a
    c1 = (~rel)[:, :, None] & rel[:, None, :] & (a < f[:, None, None])
    # case 2: the first relevant at a = f moves down to b; the new first is min(b, f2)
    c2 = rel[:, :, None] & (~rel)[:, None, :] & (a == f[:, None, None])
    newf = np.minimum(b, f2[:, None, None])
    T = np.where(c1, 1.0 / a - inv_f[:, None, None], 0.0) + np.where(c2, 1.0 / newf - inv_f[:, None, None], 0.0)
    return _symmetric_from_upper(T)


def _err_deltas(y: np.ndarray, r_of_grade: np.ndarray, k, r: np.ndarray) -> np.ndarray:
    B, N = y.shape
    g = np.clip(y, 0, len(r_of_grade) - 1)
    R = np.where(y >= 0, r_of_grade[g], 0.0)        # stop probability r_n (unjudged: 0)
    one_m = 1.0 - R
    P = np.cumprod(np.concatenate([np.ones((B, 1)), one_m[:, :-1]], axis=1), axis=1)  # P(n)
    inc = (r <= (k if k is not None else N)).astype(np.float64)
    term = R * P / r * inc
    E = np.cumsum(term, axis=1)
    Ra, Rb = R[:, :, None], R[:, None, :]
    ratio = (1.0 - Rb) / (1.0 - Ra)
    Ea, Eb_prev = E[:, :, None], (E - term)[:, None, :]
    Pa, Pb = P[:, :, None], P[:, None, :]
    ia, ib = inc[None, :, None], inc[None, None, :]
    T = ((Rb - Ra) * Pa / r[None, :, None] * ia
         + (Eb_prev - Ea) * (ratio - 1.0)
         + Pb * (Ra * ratio - Rb) / r[None, None, :] * ib)
    return _symmetric_from_upper(T)


def _pair_sigmoid(ss: np.ndarray, sigma: float, valid: np.ndarray) -> np.ndarray:
    """rho[b, a, c] = 1 / (1 + exp(sigma (s_a - s_c))), (B, N, N), without an N x N exp.

    exp(sigma (s_a - s_c)) = exp(sigma (s_a - m)) * exp(-sigma (s_c - m)) is an outer product
    of two length-N vectors (m = mid-range of the query's scores), which is exact in float64
    while sigma * (score range) stays below 1400; wider ranges take the direct N x N exp.
    """
    x = sigma * np.where(valid, ss, 0.0)
    hi = np.where(valid, x, -np.inf).max(axis=1)
    lo = np.where(valid, x, np.inf).min(axis=1)
    if np.all(hi - lo < 1400.0):
        m = 0.5 * (hi + lo)
        xm = np.where(valid, x - m[:, None], 0.0)
        rho = np.exp(xm)[:, :, None] * np.exp(-xm)[:, None, :]
    else:
        rho = np.subtract(x[:, :, None], x[:, None, :])
        with np.errstate(over="ignore"):          # exp overflow -> inf -> rho = 0, exact
            np.exp(rho, out=rho)
    rho += 1.0
    np.divide(1.0, rho, out=rho)
    return rho


_TRI_CACHE: dict[int, np.ndarray] = {}
_DGAP_CACHE: dict[tuple, np.ndarray] = {}


def _abs_discount_gap(fam: str, N: int, k) -> np.ndarray:
    """|D(a) - D(b)| for all rank pairs, (N, N), cached per (family, N, k)."""
    key = (fam, N, k)
    M = _DGAP_CACHE.get(key)
    if M is None:
        if fam == "ndcg":
            D = _discount(N, k)
        else:
            D = (np.arange(1, N + 1) <= k).astype(np.float64)
        M = np.abs(D[:, None] - D[None, :])
        if len(_DGAP_CACHE) > 32:
            _DGAP_CACHE.clear()
        _DGAP_CACHE[key] = M
    return M


def _lower(N: int) -> np.ndarray:
    """Boolean (N, N) mask of a > b (row below column in the ranking), cached per N."""
    t = _TRI_CACHE.get(N)
    if t is None:
        t = np.tri(N, N, -1, dtype=bool)
        if len(_TRI_CACHE) > 64:
            _TRI_CACHE.clear()
        _TRI_CACHE[N] = t
    return t


def _ap_abs_better(relb: np.ndarray, r: np.ndarray, scale: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """|Delta AP| * scale on pairs (a relevant, b not), zero elsewhere; (B, N, N).

    For a < b (relevant above): R |Delta| = U_a + V_b; for a > b: R |Delta| = U_b + V_a,
    with U, V as in :func:`_ap_terms`.
    """
    rel = relb.astype(np.float64)
    C = np.cumsum(rel, axis=1)
    S = np.cumsum(rel / r, axis=1)
    U = (C - rel + 1.0) / r - S
    V = S - rel / r - C / r
    W = np.add(U[:, :, None], V[:, None, :])               # a < b:  U_a + V_b
    M2 = V[:, :, None] + U[:, None, :]                    # a > b:  U_b + V_a
    np.copyto(W, M2, where=_lower(relb.shape[1])[None])
    W *= (rel * scale[:, None])[:, :, None]
    W *= (valid & ~relb)[:, None, :]
    return W


def _abs_delta_better(ctx: DeltaContext, ys: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """|Delta M_ab| for pairs with l_a > l_b (ranked order), 0 for all other pairs; (B, N, N).

    Same numbers as ``abs(swap_deltas(...)) * (l_a > l_b)`` (tested), computed with fewer
    N x N passes: for nDCG and P@k, |Delta| = max(G_a - G_b, 0) |D_a - D_b|; AP and GAP use
    the two triangular halves of the prefix-sum form; RR is a rank-one outer product plus
    one row; ERR uses the generic path.
    """
    B, N = ys.shape
    fam = ctx.family
    r = np.arange(1, N + 1, dtype=np.float64)
    y = np.where(valid, ys, -1)
    if fam == "precision" or (fam == "ndcg" and ctx.monotone):
        if fam == "ndcg":
            G = _gains(ctx.metric, y) * ctx.inv_norm[:, None]
        else:
            G = (y >= ctx.t) / ctx.k
        # padding: below every real document as the better one, above it as the worse one
        Grow = np.where(valid, G, -1e30)
        Gcol = np.where(valid, G, 1e30)
        W = np.subtract(Grow[:, :, None], Gcol[:, None, :])
        np.maximum(W, 0.0, out=W)
        W *= _abs_discount_gap(fam, N, ctx.k)[None]
        return W
    if fam == "ap":
        scale = np.divide(1.0, ctx.R, out=np.zeros(B), where=ctx.R > 0)
        return _ap_abs_better((y >= ctx.t) & valid, r, scale, valid)
    if fam == "gap":
        W = np.zeros((B, N, N))
        for j, gj in enumerate(ctx.g, start=1):   # loop over grade levels (c of them)
            if gj != 0:
                W += _ap_abs_better((y >= j) & valid, r, gj * ctx.inv_Z, valid)
        return W
    if fam == "rr":
        rel = (y >= ctx.t) & valid
        non = valid & ~rel
        pos = np.where(rel, r[None, :], np.inf)
        srt = np.sort(pos, axis=1)
        f = srt[:, 0]
        f2 = srt[:, 1] if N > 1 else np.full(B, np.inf)
        inv_f = np.where(np.isfinite(f), 1.0 / f, 0.0)
        c1 = np.where(non & (r[None, :] < f[:, None]), 1.0 / r[None, :] - inv_f[:, None], 0.0)
        c2 = np.where(non & (r[None, :] > f[:, None]),
                      inv_f[:, None] - 1.0 / np.minimum(r[None, :], f2[:, None]), 0.0)
        W = rel[:, :, None] * c1[:, None, :]
        first = (r[None, :] == f[:, None])
        W += first[:, :, None] * c2[:, None, :]
        return W
    W = np.abs(swap_deltas(ctx.metric, ys, context=ctx, lengths=valid.sum(axis=1)))
    W *= y[:, :, None] > y[:, None, :]
    return W


def rank_by_score(scores, lengths=None):
    """Order of documents by score, descending; ties keep input order (stable sort).

    Parameters
    ----------
    scores : ndarray, shape (B, N)
    lengths : ndarray, shape (B,), optional
        Real documents per row; positions beyond are padding and are ranked last.

    Returns
    -------
    order : ndarray, shape (B, N)
        ``order[b, i]`` = input position of the document at rank i + 1.

    Notes
    -----
    Tie rule (named, as STYLE B2 asks of any non-trec_eval ordering): equal scores are ranked
    by input position, first one first. This is LightGBM's stable sort.
    """
    s = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    if lengths is not None:
        pad = np.arange(s.shape[1])[None, :] >= np.asarray(lengths).reshape(-1, 1)
        s = np.where(pad, -np.inf, s)
    return np.argsort(-s, axis=1, kind="stable")


# ------------------------------------------------------------------------------------------
# grade-block kernel (one query, pairs grouped by grade level; exact, no N x N temporaries)
# ------------------------------------------------------------------------------------------
# "auto" switches to the block kernel from this many documents per list (measured crossover on
# 2 cores, benchmarks/bench_lambdarank.py: full nDCG and GAP have many grade blocks)
_BLOCK_MIN_N = {"ndcg": 256, "gap": 256}
_BLOCK_MIN_N_DEFAULT = 64


def _level_groups(level: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """[(level v, ranks with that level in increasing order)] for the levels present."""
    lo = int(level.min())
    counts = np.bincount(level - lo)
    order = np.argsort(level, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(counts)))
    return [(v + lo, order[bounds[v]:bounds[v + 1]]) for v in np.flatnonzero(counts)]


def _ap_uv(relb: np.ndarray, r: np.ndarray, scale) -> tuple[np.ndarray, np.ndarray]:
    r"""Rank vectors U, V with :math:`|\Delta AP_{ab}| = U_a + V_b` (relevant a above
    non-relevant b) and :math:`V_a + U_b` (relevant a below b), times ``scale`` = 1 / R.

    :math:`U_a = (C(a-1) + 1)/a - S(a)`, :math:`V_b = S(b-1) - C(b)/b` (paper 001 eq. 9).
    """
    rel = relb.astype(np.float64)
    C = np.cumsum(rel)
    S = np.cumsum(rel / r)
    U = ((C - rel + 1.0) / r - S) * scale
    V = (S - rel / r - C / r) * scale
    return U, V


def _query_blocks(ctx: DeltaContext, b: int, y: np.ndarray):
    r"""Grade blocks of one ranked query with :math:`|\Delta M|` in outer-sum form.

    Returns ``(blocks, K)``. Each block is ``(I, J, p1, q1, p2, q2)``: I are the ranks
    (0-based, increasing) of the better documents, J those of the worse ones (l_I > l_J, or
    rel_I > rel_J for binary metrics), and for a in I, c in J

    .. math:: |\Delta M_{ac}| = \begin{cases} p1_a + q1_c & a < c \\ p2_a + q2_c & a > c
              \end{cases}

    with p, q length-n rank vectors or scalars. Pairs with equal level, or whose delta is
    identically 0, are left out. ``K``: pairs with both ranks >= K have delta 0 (the metric's
    cutoff), or None.
    """
    fam = ctx.family
    n = len(y)
    r = np.arange(1, n + 1, dtype=np.float64)
    blocks = []
    if fam in ("precision", "ap", "rr"):
        relb = y >= ctx.t
        I = np.flatnonzero(relb)
        J = np.flatnonzero(~relb)
        if len(I) == 0 or len(J) == 0:
            return blocks, None
        if fam == "precision":
            # |Delta| = 1/k when exactly one of the two is in the top k, else 0
            c = 1.0 / ctx.k
            blocks.append((I[I < ctx.k], J[J >= ctx.k], c, 0.0, 0.0, 0.0))
            blocks.append((I[I >= ctx.k], J[J < ctx.k], 0.0, 0.0, c, 0.0))
            return blocks, ctx.k
        if fam == "ap":
            R = ctx.R[b]
            U, V = _ap_uv(relb, r, 1.0 / R if R > 0 else 0.0)
            blocks.append((I, J, U, V, V, U))
            return blocks, None
        # RR (paper 001 eq. 11): f = rank of the first relevant, f2 of the second
        f = I[0]
        f2 = I[1] if len(I) > 1 else n
        Jup = J[J < f]
        if len(Jup):      # a relevant document moves above the first one: RR 1/(f+1) -> 1/(c+1)
            blocks.append((I, Jup, 0.0, 0.0, 0.0, 1.0 / r - 1.0 / (f + 1)))
        Jdn = J[J > f]
        if len(Jdn):      # the first relevant one moves down to c: new first min(c, f2)
            blocks.append((I[:1], Jdn, 0.0, 1.0 / (f + 1) - 1.0 / np.minimum(r, f2 + 1), 0.0, 0.0))
        return blocks, None
    groups = _level_groups(y)
    if fam == "ndcg":
        gz = _gains(ctx.metric, np.array([v for v, _ in groups])) * ctx.inv_norm[b]
        D = _discount(n, ctx.k)
        for hi in range(len(groups)):
            for lo in range(hi):
                c = abs(gz[hi] - gz[lo])
                if c == 0:
                    continue
                cD = c * D        # |Delta| = |G_h - G_l| (D_a - D_c) with a the upper rank
                blocks.append((groups[hi][1], groups[lo][1], cD, -cD, -cD, cD))
        return blocks, ctx.k
    if fam == "gap":
        g = ctx.g
        c = len(g)
        w = g * ctx.inv_Z[b]
        Ucum = np.zeros((c + 1, n))
        Vcum = np.zeros((c + 1, n))
        for j in range(1, c + 1):     # loop over thresholds (c of them), not documents
            if w[j - 1] != 0:
                U, V = _ap_uv(y >= j, r, w[j - 1])
                Ucum[j] = Ucum[j - 1] + U
                Vcum[j] = Vcum[j - 1] + V
            else:
                Ucum[j], Vcum[j] = Ucum[j - 1], Vcum[j - 1]
        for hi in range(len(groups)):
            for lo in range(hi):
                th, tl = min(groups[hi][0], c), max(groups[lo][0], 0)
                if th <= tl:
                    continue
                # thresholds tl < j <= th separate the pair: |Delta GAP| = sum_j w_j |Delta AP_j|
                Us = Ucum[th] - Ucum[tl]
                Vs = Vcum[th] - Vcum[tl]
                if not (Us.any() or Vs.any()):
                    continue
                blocks.append((groups[hi][1], groups[lo][1], Us, Vs, Vs, Us))
        return blocks, None
    if fam == "err":
        rz = ctx.r_of_grade
        levels = np.array([v for v, _ in groups])
        rl_of = np.where(levels >= 0, rz[np.clip(levels, 0, len(rz) - 1)], 0.0)
        if rl_of.max() >= 1.0:
            return None, None        # a certain stop: the closed form divides by 1 - r
        R = np.zeros(n)
        for (v, idx), rv in zip(groups, rl_of):
            R[idx] = rv
        P = np.cumprod(np.concatenate(([1.0], 1.0 - R[:-1])))   # P(n) = prod_{m<n} (1 - r_m)
        inc = (r <= (ctx.k if ctx.k is not None else n)).astype(np.float64)
        Pr = P / r * inc
        term = R * Pr
        E = np.cumsum(term)                                     # E(n)
        Ep = E - term                                           # E(n - 1)
        for hi in range(len(groups)):
            for lo in range(hi):
                rh, rl = rl_of[hi], rl_of[lo]
                if rh == rl:
                    continue
                sg = -1.0 if rh > rl else 1.0     # ERR rises when the larger r moves up
                # better doc at the upper rank a, worse at c > a (Ra = rh, Rc = rl)
                k1 = (rh - rl) / (1.0 - rh)
                p1 = sg * ((rl - rh) * Pr - E * k1)
                q1 = sg * (Ep * k1 + Pr * (rh * (1.0 - rl) / (1.0 - rh) - rl))
                # worse doc at the upper rank c, better at a > c (Rc = rl, Ra = rh)
                k2 = (rl - rh) / (1.0 - rl)
                q2 = -sg * ((rh - rl) * Pr - E * k2)
                p2 = -sg * (Ep * k2 + Pr * (rl * (1.0 - rh) / (1.0 - rl) - rh))
                blocks.append((groups[hi][1], groups[lo][1], p1, q1, p2, q2))
        return blocks, ctx.k
    raise AssertionError(fam)  # pragma: no cover


def _weighted_sums(Mx: np.ndarray, wI, wJ, p, q, I: np.ndarray, J: np.ndarray):
    r"""Row and column sums of :math:`T_{ac} = wI_a\, wJ_c\, M_{ac} (p_a + q_c)`.

    p and q are rank vectors (indexed by I and J) or scalars; wI, wJ are vectors over the
    block's rows / columns or None (= 1). Matrix-vector products only (BLAS gemv, one read of
    M each): rows :math:`wI \odot (p \odot M wJ + M (wJ \odot q))`, columns
    :math:`wJ \odot (q \odot M^T wI + M^T (wI \odot p))`.
    """
    pv = isinstance(p, np.ndarray)
    qv = isinstance(q, np.ndarray)
    uJ = np.ones(len(J)) if wJ is None else wJ
    uI = np.ones(len(I)) if wI is None else wI
    if qv:
        qJ = q[J]
        rs = Mx @ uJ
        rs *= p[I] if pv else p
        rs += Mx @ (uJ * qJ)
    else:
        rs = Mx @ uJ
        rs *= (p[I] + q) if pv else (p + q)
    if pv:
        pI = p[I]
        cs = uI @ Mx
        cs *= qJ if qv else q
        cs += (uI * pI) @ Mx
    else:
        cs = uI @ Mx
        cs *= (qJ + p) if qv else (p + q)
    if wI is not None:
        rs *= wI
    if wJ is not None:
        cs *= wJ
    return rs, cs


def _diff(u, v):
    """u - v for rank vectors or scalars."""
    return u - v


def _strip_deltas(ctx: DeltaContext, b: int, y: np.ndarray, K: int):
    r"""Signed swap deltas :math:`T_{ac}` for upper ranks a < K and all c, (K, n).

    Only entries with c > a are meaningful (the pair {a, c} with a the upper rank); used for
    the cut metrics nDCG@k, P@k and ERR@k, whose deltas vanish when both ranks are >= k, so
    that the K x n strip holds every pair that matters (formulas as :func:`swap_deltas`).
    Returns None when the ERR closed form does not apply (a stop probability of 1).
    """
    fam = ctx.family
    n = len(y)
    r = np.arange(1, n + 1, dtype=np.float64)
    if fam in ("ndcg", "precision"):
        if fam == "ndcg":
            G = _gains(ctx.metric, y) * ctx.inv_norm[b]
            D = _discount(n, ctx.k)
        else:
            G = (y >= ctx.t) / ctx.k
            D = (r <= ctx.k).astype(np.float64)
        return np.subtract.outer(G[:K], G) * np.subtract.outer(D, D[:K]).T
    # ERR: T_ac = (R_c - R_a) P_a/a + (E(c-1) - E(a)) ((1-R_c)/(1-R_a) - 1)
    #             + P_c (R_a (1-R_c)/(1-R_a) - R_c)/c      (terms beyond k dropped)
    rz = ctx.r_of_grade
    R = np.where(y >= 0, rz[np.clip(y, 0, len(rz) - 1)], 0.0)
    if R.max(initial=0.0) >= 1.0:
        return None
    P = np.cumprod(np.concatenate(([1.0], 1.0 - R[:-1])))
    inc = (r <= (ctx.k if ctx.k is not None else n)).astype(np.float64)
    Pr = P / r * inc
    term = R * Pr
    E = np.cumsum(term)
    Ra = R[:K, None]
    ratio = (1.0 - R)[None, :] / (1.0 - Ra)
    return (np.subtract.outer(R, R[:K]).T * Pr[:K, None]
            + np.subtract.outer(E - term, E[:K]).T * (ratio - 1.0)
            + Pr[None, :] * (Ra * ratio - R[None, :]))


def _lambdas_strip(T: np.ndarray, y: np.ndarray, s: np.ndarray, sigma: float, want_h: bool):
    r"""Lambdas from the K x n strip of signed deltas (pairs {a, c}, a < K, c > a).

    The better document of a pair is the one of higher grade; with
    :math:`\epsilon = \mathrm{sign}(l_a - l_c)`, :math:`\rho = 1 / (1 + e^{\epsilon \sigma
    (s_a - s_c)})` and :math:`W = |T| \rho`, a gains :math:`\epsilon W` and c loses it.
    """
    K, n = T.shape
    from scipy.special import expit

    eps = np.sign(np.subtract.outer(y[:K], y)).astype(np.float64)
    eps *= np.less.outer(np.arange(K), np.arange(n))                 # pairs with c > a
    W = np.abs(T)
    x = np.subtract.outer(s[:K], s)
    x *= -sigma
    x *= eps
    rho = expit(x)
    H = W * rho * (1.0 - rho) * np.abs(eps) if want_h else None
    W *= rho
    total = float((W * np.abs(eps)).sum())
    W *= eps
    lam = -W.sum(axis=0)
    lam[:K] += W.sum(axis=1)
    h = None
    if want_h:
        h = H.sum(axis=0)
        h[:K] += H.sum(axis=1)
    return lam, h, total


def _lambdas_blocks(ctx: DeltaContext, b: int, y: np.ndarray, s: np.ndarray, sigma: float,
                    truncation, want_h: bool):
    r"""Unscaled :math:`\sum_j |\Delta M_{ij}| \rho_{ij}` per document of one ranked query.

    Parameters
    ----------
    ctx : DeltaContext
        Already restricted to the batch (``take``); ``b`` is the query's row in it.
    y, s : ndarray, shape (n,)
        Grades and scores in ranked order (no padding).
    sigma : float
    truncation : int or None
    want_h : bool
        Also the second-order terms :math:`\sum_j |\Delta M_{ij}| \rho_{ij}(1 - \rho_{ij})`.

    Returns
    -------
    lam, h : ndarray, shape (n,)
        :math:`\lambda / \sigma` and :math:`h / \sigma^2` (h None unless ``want_h``); lam is
        None when the closed form does not apply (ERR with a stop probability of 1).
    total : float
        :math:`\sum_{pairs} |\Delta M| \rho` (the ``norm`` sum S / sigma).

    Notes
    -----
    Only pairs with :math:`l_a > l_c` are visited, block by block of grade levels (G levels
    give G(G-1)/2 blocks, :math:`\frac12 (N^2 - \sum_z N_z^2)` pairs in all, 40 % of N^2 for
    five equally frequent grades). In a block the delta is an outer sum, :math:`p_a + q_c`
    above the diagonal a < c and :math:`p'_a + q'_c` below it (:func:`_query_blocks`).
    With :math:`e_a = e^{\sigma s_a - m}` (m the mid-range) the pair sigmoid is
    :math:`\rho_{ac} = e_c Y_{ac}`, :math:`Y_{ac} = 1 / (e_a + e_c)`, and
    :math:`\rho(1-\rho) = e_a e_c Y_{ac}^2`: the kernel forms Y (one add, one reciprocal; no
    per-pair exp) and :math:`A = Y \odot [a < c]`, and reduces

    .. math:: \sum_c \rho_{ac} |\Delta_{ac}| = \sum_c e_c \left(Y_{ac} (p'_a + q'_c)
              + A_{ac} ((p_a - p'_a) + (q_c - q'_c))\right)

    by matrix-vector products (:func:`_weighted_sums`); the delta matrix is never built.
    Exact in float64 while :math:`\sigma` (score range) < 700; wider ranges compute rho
    directly (``scipy.special.expit``). Pairs with both ranks >= K (the metric's cutoff or
    ``truncation``) have delta 0 or are excluded, and are skipped.
    """
    n = len(y)
    K = ctx.k if ctx.family in ("ndcg", "precision", "err") else None
    if truncation is not None:
        K = truncation if K is None else min(K, truncation)
    if K is not None and 4 * K < n and ctx.family in ("ndcg", "precision", "err"):
        T = _strip_deltas(ctx, b, y, K)          # every pair with a rank < K: a K x n strip
        if T is None:
            return None, None, 0.0
        return _lambdas_strip(T, y, s, sigma, want_h)
    blocks, K = _query_blocks(ctx, b, y)
    if blocks is None:
        return None, None, 0.0
    if truncation is not None:
        K = truncation if K is None else min(K, truncation)
    lam = np.zeros(n)
    h = np.zeros(n) if want_h else None
    total = 0.0
    if not blocks:
        return lam, h, total
    x = sigma * s
    direct = not (x.max() - x.min() < 700.0)
    if not direct:
        e = np.exp(x - 0.5 * (x.max() + x.min()))
    subs = []
    for I, J, p1, q1, p2, q2 in blocks:
        if K is not None and K < n:
            it, jt = np.searchsorted(I, K), np.searchsorted(J, K)
            subs.append((I[:it], J, p1, q1, p2, q2))
            subs.append((I[it:], J[:jt], p1, q1, p2, q2))
        else:
            subs.append((I, J, p1, q1, p2, q2))
    for I, J, p1, q1, p2, q2 in subs:
        if len(I) == 0 or len(J) == 0:
            continue
        if direct:
            from scipy.special import expit

            Y = np.subtract.outer(x[J], x[I]).T          # rho = expit(x_c - x_a)
            expit(Y, out=Y)
            mats = [(Y, None, None, lam, -1.0)]
            if want_h:
                mats.append((Y * (1.0 - Y), None, None, h, 1.0))
        else:
            eI, eJ = e[I], e[J]
            Y = np.add.outer(eI, eJ)
            np.reciprocal(Y, out=Y)
            mats = [(Y, None, eJ, lam, -1.0)]
            if want_h:
                mats.append((Y * Y, eI, eJ, h, 1.0))
        if I[-1] < J[0]:                          # every better document ranked above
            mixed = None
            base = (p1, q1)
        elif I[0] > J[-1]:                        # every better document ranked below
            mixed = None
            base = (p2, q2)
        else:
            mixed = np.less.outer(I, J)
            base = (p2, q2)
            dp, dq = _diff(p1, p2), _diff(q1, q2)
        for Mx, wI, wJ, acc, sign in mats:
            rs, cs = _weighted_sums(Mx, wI, wJ, base[0], base[1], I, J)
            if mixed is not None:
                Mx *= mixed
                r2, c2 = _weighted_sums(Mx, wI, wJ, dp, dq, I, J)
                rs += r2
                cs += c2
            acc[I] += rs
            acc[J] += sign * cs
            if sign < 0:
                total += rs.sum()
    return lam, h, total


def lambda_gradients(scores, grades, context: DeltaContext, *, rows=None, lengths=None,
                     sigma: float = 1.0, truncation: int | None = None, norm: bool = False,
                     return_hessian: bool = False, method: str = "auto"):
    r"""LambdaRank gradients of a batch of queries for the context's metric.

    Parameters
    ----------
    scores : ndarray, shape (B, N)
        Model scores, in input (document) order.
    grades : ndarray, shape (B, N)
        Grades in the same order; -1 for padding.
    context : DeltaContext
        Metric and per-query constants; ``rows`` (B,) selects this batch's queries from it.
    lengths : ndarray, shape (B,), optional
        Documents per query (default: count of grades >= 0, padding must be trailing).
    sigma : float
        RankNet sigma (LightGBM ``sigmoid``), > 0.
    truncation : int, optional
        Only pairs with at least one document ranked in the top ``truncation`` (LightGBM
        ``lambdarank_truncation_level``); default all pairs.
    norm : bool
        LightGBM ``lambdarank_norm``: multiply a query's lambdas by log2(1 + S) / S,
        S = sum over pairs of lambda_ij.
    return_hessian : bool
        Also return :math:`\sum \sigma^2 |\Delta M| \rho (1 - \rho)` per document.
    method : {"auto", "dense", "blocks"}
        ``dense``: all N x N pairs of the padded batch at once (fastest for short lists);
        ``blocks``: per query, grade block by grade block (:func:`_lambdas_blocks`; fastest
        for long lists); ``auto``: blocks when N >= 256 for nDCG and GAP, N >= 64 for the
        others (measured crossovers). Both are exact and give the same numbers (tested
        against each other and against the pairwise definition).

    Returns
    -------
    lambdas : ndarray, shape (B, N)
        :math:`\lambda_i` in input order; positive = push the document up (ascent on the metric).
    hessian : ndarray, shape (B, N)
        Only with ``return_hessian``.
    """
    if not sigma > 0:
        raise ParameterError(f"sigma must be > 0, got {sigma}")
    if method not in ("auto", "dense", "blocks"):
        raise ParameterError(f"method must be auto, dense or blocks, got {method!r}")
    s = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    y = np.atleast_2d(np.asarray(grades)).astype(np.int64)
    B, N = s.shape
    if lengths is None:
        lengths = (y >= 0).sum(axis=1)
    lengths = np.asarray(lengths)
    order = rank_by_score(s, lengths)
    ys = np.take_along_axis(y, order, axis=1)
    ss = np.take_along_axis(s, order, axis=1)
    ss = np.where(np.arange(N)[None, :] < lengths[:, None], ss, 0.0)
    valid = np.arange(N)[None, :] < lengths[:, None]
    ctx = context.take(rows)
    use_blocks = method == "blocks" or (
        method == "auto" and N >= _BLOCK_MIN_N.get(ctx.family, _BLOCK_MIN_N_DEFAULT))
    lam = h = None
    if use_blocks:
        lam = np.zeros((B, N))
        h = np.zeros((B, N)) if return_hessian else None
        S = np.zeros(B)                 # sum over pairs of lambda_ij (for norm)
        for b in range(B):          # loop over queries; each query is vectorised
            n = int(lengths[b])
            if n == 0:
                continue
            lb, hb, S[b] = _lambdas_blocks(ctx, b, ys[b, :n], ss[b, :n], sigma, truncation,
                                           return_hessian)
            S[b] *= sigma
            if lb is None:
                lam = None
                break
            lam[b, :n] = lb * sigma
            if return_hessian:
                h[b, :n] = hb * (sigma * sigma)
        if lam is not None and norm:
            f = np.where(S > 0, np.log2(1.0 + S) / np.where(S > 0, S, 1.0), 1.0)
            lam *= f[:, None]
            if return_hessian:
                h *= f[:, None]
    if lam is None:
        lam, h = _lambdas_dense(ctx, ys, ss, valid, sigma, truncation, norm, return_hessian)
    out = np.empty_like(lam)
    np.put_along_axis(out, order, lam, axis=1)
    if not return_hessian:
        return out
    hout = np.empty_like(h)
    np.put_along_axis(hout, order, h, axis=1)
    return out, hout


def _lambdas_dense(ctx, ys, ss, valid, sigma, truncation, norm, return_hessian):
    """All N x N pairs of the padded batch at once, in ranked order; (B, N) lambdas (and h)."""
    B, N = ys.shape
    W = _abs_delta_better(ctx, ys, valid)            # |Delta M_ab| on pairs l_a > l_b, else 0
    if truncation is not None:
        top = np.arange(N) < truncation
        W *= top[None, :, None] | top[None, None, :]
    rho = _pair_sigmoid(ss, sigma, valid)            # 1 / (1 + exp(sigma (s_a - s_b)))
    H = None
    if return_hessian:
        H = W * (sigma * sigma) * rho * (1.0 - rho)
    W *= rho
    if sigma != 1.0:
        W *= sigma
    lam = W.sum(axis=2) - W.sum(axis=1)
    f = None
    if norm:
        S = W.sum(axis=(1, 2))
        f = np.where(S > 0, np.log2(1.0 + S) / np.where(S > 0, S, 1.0), 1.0)
        lam *= f[:, None]
    if not return_hessian:
        return lam, None
    h = H.sum(axis=2) + H.sum(axis=1)
    if norm:
        h *= f[:, None]
    return lam, h


def per_query_gradients(metric_fn, scores, grades, context: "DeltaContext", rows=None, lengths=None,
                        **options) -> np.ndarray:
    """Score gradients of a padded batch (B, N) from a one-query function.

    ``metric_fn(context, s, y, row=b, **options)`` returns (value, gradient) for one query's
    first ``lengths[b]`` documents; SoftRank and ApproxRank share this driver. The loop is
    over queries (each query is vectorised); padding gets 0.
    """
    s = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    y = np.atleast_2d(np.asarray(grades)).astype(np.int64)
    B, N = s.shape
    if lengths is None:
        lengths = (y >= 0).sum(axis=1)
    rows = np.arange(B) if rows is None else np.asarray(rows)
    out = np.zeros((B, N))
    for b in range(B):
        n = int(lengths[b])
        if n:
            out[b, :n] = metric_fn(context, s[b, :n], y[b, :n], row=int(rows[b]), **options)[1]
    return out
