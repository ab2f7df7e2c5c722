"""trec_eval's remaining ``all_trec`` measures, each computed as its ``m_*.c`` does: infAP,
gm_bpref, Rprec_mult, utility, 11pt_avg, binG, G, ndcg_rel, Rndcg, relative_P,
set_relative_P, set_map, set_F and num_nonrel_judged_ret.

Every value is a per-topic evaluation measure without an expectation; sums run in rank order
(``np.cumsum``, not numpy's pairwise sum), so that the printed digits are trec_eval's. A topic
the run did not retrieve for (``-c``) scores 0, as trec_eval, which does not evaluate it.
Negative qrels grades (trec_eval's "in pool but unjudged") are read as unjudged; infAP also
counts them as pooled (:attr:`~maxent.ranked.RankedLists.pooled_unjudged`), as trec_eval.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from maxent.metrics._kernels import safe_divide
from maxent.metrics.base import Metric, Param
from maxent.metrics.bpref import Bpref
from maxent.metrics.precision import REL

__all__ = ["InfAP", "GMBpref", "RPrecMult", "Utility", "ElevenPtAvg", "BinG", "G", "NDCGRel", "RNDCG",
           "RelP", "SetRelP", "SetAP", "SetF", "NumNonRelJudgedRet"]

INFAP_EPSILON = 1e-5
"""trec_eval's ``INFAP_EPSILON`` (trec_eval.h)."""


def _seq_sum(x: np.ndarray) -> np.ndarray:
    """Row sums of (B, N) added left to right, as a C loop does."""
    if x.shape[1] == 0:
        return np.zeros(x.shape[0])
    return np.cumsum(x, axis=1)[:, -1]


def _evaluated(lists, v: np.ndarray) -> np.ndarray:
    """0 for the lists without documents (topics a run lacks, ``-c``), which trec_eval skips."""
    return np.where(lists.lengths > 0, v, 0.0)


def _counts(lists, rel: int):
    """(relevant (B, N) bool, num_rel_ret (B,), num_rel R (B,), num_ret (B,))."""
    relevant = lists.grades >= rel
    return relevant, relevant.sum(axis=1), lists.n_rel(rel), lists.lengths


def _rel_in_top(lists, rel: int, c: np.ndarray) -> np.ndarray:
    """Relevant documents in the top c (B,) ranks (c may exceed the depth)."""
    cum = np.concatenate([np.zeros((len(lists), 1), np.int64),
                          np.cumsum(lists.grades >= rel, axis=1)], axis=1)
    return np.take_along_axis(cum, np.clip(c, 0, lists.depth)[:, None], axis=1)[:, 0]


def _ideal_gains(rel_counts: np.ndarray, width: int) -> np.ndarray:
    """(B, width) gain of the ideal list at each rank (gain = grade, trec_eval's default):
    the judged documents of grade >= 1 by decreasing grade, then 0."""
    B, L = rel_counts.shape
    out = np.zeros((B, width))
    j = np.arange(width)[None, :]
    start = np.zeros(B, dtype=np.int64)
    for z in range(L - 1, 0, -1):
        end = start + rel_counts[:, z]
        out[(j >= start[:, None]) & (j < end[:, None])] = float(z)
        start = end
    return out


def _gains(lists) -> np.ndarray:
    """(B, N) gain of each ranked document: its grade, 0 when unjudged (trec_eval's get_gain)."""
    return np.maximum(lists.grades, 0).astype(np.float64)


def _dcg_prefix(g: np.ndarray) -> np.ndarray:
    """Inclusive prefix DCG, gain / log2(rank + 1) summed in rank order (B, N)."""
    if g.shape[1] == 0:
        return g.copy()
    terms = np.where(g != 0, g / np.log2(np.arange(g.shape[1]) + 2.0)[None, :], 0.0)
    return np.cumsum(terms, axis=1)


@dataclass(frozen=True, eq=False, repr=False)
class _Extra(Metric):
    """Shared defaults: no cutoff, no expectation."""

    AT_PARAM: ClassVar = None
    HAS_EXPECTATION: ClassVar[bool] = False


class _FloatParams(_Extra):
    """A trec_eval measure with a list of float parameters (``-m utility.2,-1,0,0``,
    ``-m 11pt_avg..25,.5,.75``: trec_eval's ``te_init_meas_s_float_p_float``), printed as
    its name, ``_`` and the parameter text as given (``trec_text``, which names the lines
    only: it is not part of the measure's identity)."""

    TREC_FLOAT_PARAMS: ClassVar[tuple[str, ...]] = ()   # fields the list sets, in order

    def _non_default(self):
        return [(k, v) for k, v in super()._non_default() if k != "trec_text"]

    def _trec_expresses(self, key, value, rel, version):
        if key == "trec_text" or (self.trec_text is not None and key in self.TREC_FLOAT_PARAMS):
            return True   # the printed parameter text states them
        return super()._trec_expresses(key, value, rel, version)

    def trec_name(self):
        if self.trec_text is not None:
            return f"{self.TREC_NAME}_{self.trec_text}"
        return self._default_trec_name()


@dataclass(frozen=True, eq=False, repr=False)
class InfAP(_Extra):
    r"""Inferred AP (Yilmaz & Aslam, CIKM 2006; trec_eval ``infAP``).

    At the j-th rank (0-based) holding a relevant document, with k relevant, f judged
    non-relevant and u pooled but unjudged documents (a negative qrels grade) in ranks 0..j
    (documents not in the qrels skipped, ε = 1e-5):
    :math:`\frac1{j+1} + \frac{j}{j+1}\cdot\frac{k-1+f+u}{j}\cdot\frac{k-1+ε}{k-1+f+2ε}`
    (1 at j = 0); summed and divided by R. No expectation.
    """

    rel: int = 1
    NAME: ClassVar[str] = "InfAP"
    TREC_NAME: ClassVar[str] = "infAP"
    TREC_ORDER: ClassVar[tuple] = (11.01,)
    PARAMS: ClassVar = {"rel": REL}

    def value(self, lists):
        g = lists.grades
        relevant = g >= self.rel
        nonrel = (g >= 0) & ~relevant
        k = np.cumsum(relevant, axis=1)
        f = np.cumsum(nonrel, axis=1)
        u = 0 if lists.pooled_unjudged is None else np.cumsum(lists.pooled_unjudged, axis=1)
        fj = np.arange(lists.depth, dtype=np.float64)[None, :]
        km1 = (k - 1).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            later = (1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((k - 1 + f + u) / fj)
                     * ((km1 + INFAP_EPSILON) / ((k - 1 + f) + 2 * INFAP_EPSILON)))
        term = np.where(fj == 0, 1.0, later)
        total = _seq_sum(np.where(relevant, term, 0.0))
        return _evaluated(lists, safe_divide(total, lists.n_rel(self.rel)))


@dataclass(frozen=True, eq=False, repr=False)
class GMBpref(_Extra):
    r"""bpref over topics by geometric mean (trec_eval ``gm_bpref``):
    :math:`\exp(\frac1T\sum_t \ln\max(bpref_t, 10^{-5}))`; printed in the summary only."""

    rel: int = 1
    NAME: ClassVar[str] = "GMBpref"
    TREC_NAME: ClassVar[str] = "gm_bpref"
    TREC_ORDER: ClassVar[tuple] = (11.02,)
    PARAMS: ClassVar = {"rel": REL}
    AGGREGATE: ClassVar[str] = "gmean"
    PER_TOPIC: ClassVar[bool] = False

    def value(self, lists):
        """Per-topic bpref, (B,); the geometric mean is taken by the aggregation."""
        return _evaluated(lists, Bpref(rel=self.rel).value(lists))


@dataclass(frozen=True, eq=False, repr=False)
class RPrecMult(Metric):
    r"""Precision at a multiple x of R (trec_eval ``Rprec_mult_x``): with
    c = floor(x R + 0.9), the relevant documents in the top c divided by c (also when fewer
    were retrieved); 0 when c = 0. No expectation."""

    cutoff: float = 1.0
    rel: int = 1
    NAME: ClassVar[str] = "RPrecMult"
    TREC_NAME: ClassVar[str] = "Rprec_mult"
    TREC_SUFFIX: ClassVar[str] = "cutoff"
    TREC_ORDER: ClassVar[tuple] = (11.03,)
    PARAMS: ClassVar = {"cutoff": Param(float, None, "multiple x of R (num_rel)"), "rel": REL}
    HAS_EXPECTATION: ClassVar[bool] = False

    def __post_init__(self):
        object.__setattr__(self, "cutoff", float(self.cutoff))
        super().__post_init__()

    def validate(self):
        self._check(self.cutoff >= 0.0, f"multiple of R must be >= 0, got {self.cutoff}")
        super().validate()

    def trec_name(self):
        return f"Rprec_mult_{self.cutoff:.2f}"

    def value(self, lists):
        c = np.floor(self.cutoff * lists.n_rel(self.rel) + 0.9).astype(np.int64)
        hits = _rel_in_top(lists, self.rel, c)
        return _evaluated(lists, safe_divide(hits.astype(np.float64), c.astype(np.float64)))


@dataclass(frozen=True, eq=False, repr=False)
class Utility(_FloatParams):
    r"""Set utility (trec_eval ``utility``): :math:`a\,A + b\,B + c\,C + d\,D` with A relevant
    retrieved, B non-relevant (or unjudged) retrieved, C relevant not retrieved and
    D = n_docs + A - num_ret - R (trec_eval ``-N``). Defaults 1, -1, 0, 0."""

    a: float = 1.0
    b: float = -1.0
    c: float = 0.0
    d: float = 0.0
    n_docs: int = 0
    rel: int = 1
    trec_text: str | None = None
    NAME: ClassVar[str] = "Utility"
    TREC_NAME: ClassVar[str] = "utility"
    TREC_ORDER: ClassVar[tuple] = (11.04,)
    TREC_FLOAT_PARAMS: ClassVar[tuple[str, ...]] = ("a", "b", "c", "d")
    PARAMS: ClassVar = {
        "a": Param(float, 1.0, "worth of a relevant retrieved document"),
        "b": Param(float, -1.0, "worth of a non-relevant retrieved document"),
        "c": Param(float, 0.0, "worth of a relevant document not retrieved"),
        "d": Param(float, 0.0, "worth of a non-relevant document not retrieved"),
        "n_docs": Param(int, 0, "documents in the collection (trec_eval -N)"),
        "rel": REL,
        "trec_text": Param(str, None, "trec_eval's parameter text, printed after the name (the -m argument)"),
    }

    def _trec_expresses(self, key, value, rel, version):
        if key == "n_docs":   # trec_eval -N
            return True
        return super()._trec_expresses(key, value, rel, version)

    def _default_trec_name(self):
        coef = (self.a, self.b, self.c, self.d)
        if coef == (1.0, -1.0, 0.0, 0.0):
            return "utility"
        return "utility_" + ",".join("%g" % x for x in coef)

    def value(self, lists):
        _, A, R, n = _counts(lists, self.rel)
        v = (self.a * A + self.b * (n - A) + self.c * (R - A)
             + self.d * (self.n_docs + A - n - R))
        return _evaluated(lists, v.astype(np.float64))


ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True, eq=False, repr=False)
class ElevenPtAvg(_FloatParams):
    r"""Interpolated precision averaged over recall levels (trec_eval ``11pt_avg``).

    For each level x, c = floor(x R + 0.9): the interpolated precision
    :math:`\max_{n \ge r_c} P(n)` at the rank r_c of the c-th relevant retrieved document
    (every rank when c = 0), 0 when fewer than c were retrieved; the mean over the levels.
    ``rule`` as :class:`~maxent.metrics.precision.IPrec`'s: ``9`` (trec_eval 9.0.7)
    c = floor(x R + 0.9), ``10`` (trec_eval 10.0) c = lround(x R).
    """

    levels: tuple = ELEVEN_POINTS
    rel: int = 1
    rule: str = "9"
    trec_text: str | None = None
    NAME: ClassVar[str] = "ElevenPtAvg"
    TREC_NAME: ClassVar[str] = "11pt_avg"
    TREC_ORDER: ClassVar[tuple] = (11.05,)
    TREC_FLOAT_PARAMS: ClassVar[tuple[str, ...]] = ("levels",)
    PARAMS: ClassVar = {"levels": Param(tuple, ELEVEN_POINTS, "recall levels, increasing"), "rel": REL,
                        "rule": Param(str, "9", "recall level to relevant count: 9 = trec_eval 9.0.7's "
                                      "(long)(x R + 0.9), 10 = trec_eval 10.0's lround(x R)",
                                      choices=("9", "10")),
                        "trec_text": Param(str, None, "trec_eval's parameter text, printed after the name "
                                           "(the -m argument)")}

    def __post_init__(self):
        object.__setattr__(self, "levels", tuple(float(x) for x in np.atleast_1d(self.levels)))
        object.__setattr__(self, "rule", str(self.rule))
        super().__post_init__()

    def _trec_expresses(self, key, value, rel, version):
        if key == "rule":   # each trec_eval has its own rule
            return value == ("10" if version.startswith("10") else "9")
        return super()._trec_expresses(key, value, rel, version)

    def undefined_if_empty(self, lists) -> np.ndarray:
        """As :meth:`IPrec.undefined_if_empty <maxent.metrics.precision.IPrec.undefined_if_empty>`,
        at any of the levels."""
        R = lists.n_rel(self.rel)
        return np.any([self._needed(x, R) == 0 for x in self.levels], axis=0)

    def _needed(self, x: float, R: np.ndarray) -> np.ndarray:
        t = x * R.astype(np.float64)
        if self.rule == "10":                       # lround: half away from zero (t >= 0)
            f = np.floor(t)
            return (f + (t - f >= 0.5)).astype(np.int64)
        return np.floor(t + 0.9).astype(np.int64)    # (long) (x * R + 0.9)

    def validate(self):
        x = self.levels
        self._check(len(x) > 0 and all(a <= b for a, b in zip(x, x[1:])) and x[0] >= 0,
                    f"levels must be non-empty, increasing and >= 0, got {x}")
        super().validate()

    def _default_trec_name(self):
        if self.levels == ELEVEN_POINTS:
            return "11pt_avg"
        return "11pt_avg_" + ",".join("%g" % x for x in self.levels)

    def value(self, lists):
        relevant, nrr, R, lengths = _counts(lists, self.rel)
        B, N = relevant.shape
        if N == 0:
            return np.zeros(B)
        cum = np.cumsum(relevant, axis=1)
        n = np.arange(1, N + 1)
        prec = np.where(n[None, :] <= lengths[:, None], cum / n, 0.0)
        best_after = np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1]
        total = np.zeros(B)
        for x in reversed(self.levels):   # trec_eval adds the levels from the last
            c = self._needed(x, R)
            start = np.minimum(np.where(c > 0, (cum < c[:, None]).sum(axis=1), 0), N - 1)
            v = np.take_along_axis(best_after, start[:, None], axis=1)[:, 0]
            total = total + np.where(c <= nrr, v, 0.0)
        return _evaluated(lists, total / float(len(self.levels)))


@dataclass(frozen=True, eq=False, repr=False)
class BinG(_Extra):
    r"""Binary G (trec_eval ``binG``): :math:`\frac1R\sum_{n:\,rel_n} 1/\log_2(2 + F_n)`,
    F_n the non-relevant (or unjudged) documents above rank n."""

    rel: int = 1
    NAME: ClassVar[str] = "BinG"
    TREC_NAME: ClassVar[str] = "binG"
    TREC_ORDER: ClassVar[tuple] = (11.06,)
    PARAMS: ClassVar = {"rel": REL}

    def value(self, lists):
        relevant = lists.grades >= self.rel
        k = np.cumsum(relevant, axis=1)
        i = np.arange(lists.depth)[None, :]
        with np.errstate(divide="ignore"):
            term = np.where(relevant, 1.0 / np.log2((3 + i - k).astype(np.float64)), 0.0)
        total = _seq_sum(term)
        v = np.where(relevant.any(axis=1), safe_divide(total, lists.n_rel(self.rel)), 0.0)
        return _evaluated(lists, v)


class _IdealGains:
    """Gain = grade (trec_eval's default gains of G, ndcg_rel and Rndcg)."""

    GRADED: ClassVar[bool] = True

    @staticmethod
    def _ideal(lists):
        """(gains (B, N), ideal gains (B, M), R+ (B,)) with M > max(N, R+)."""
        rpos = lists.rel_counts[:, 1:].sum(axis=1)
        width = max(lists.depth, int(rpos.max(initial=0))) + 1
        return _gains(lists), _ideal_gains(lists.rel_counts, width), rpos


@dataclass(frozen=True, eq=False, repr=False)
class G(_IdealGains, _Extra):
    r"""Normalised gain G (trec_eval ``G``, experimental): the document at rank i adds
    :math:`g_i / \log_2(2 + C_i - S_i)`, with S_i the gain of ranks <= i, C_i the ideal gain
    of ranks <= i (at least 1 a rank); divided by the total ideal gain."""

    NAME: ClassVar[str] = "G"
    TREC_NAME: ClassVar[str] = "G"
    TREC_ORDER: ClassVar[tuple] = (11.07,)
    PARAMS: ClassVar = {}

    def value(self, lists):
        g, ideal, _ = self._ideal(lists)
        N = lists.depth
        if N == 0:
            return np.zeros(len(lists))
        cost = np.cumsum(np.maximum(ideal[:, :N], 1.0), axis=1)
        got = np.cumsum(g, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            term = np.where(g != 0, g / np.log2(2 + cost - got), 0.0)
        return _evaluated(lists, safe_divide(_seq_sum(term), ideal.sum(axis=1)))


@dataclass(frozen=True, eq=False, repr=False)
class NDCGRel(_IdealGains, _Extra):
    r"""nDCG averaged over the relevant documents (trec_eval ``ndcg_rel``, experimental):
    nDCG at the rank of each retrieved document of positive gain (the ideal DCG at most that of
    all R+ documents of positive gain), the final DCG / IDCG for each one not retrieved;
    summed and divided by R+."""

    NAME: ClassVar[str] = "nDCGRel"
    TREC_NAME: ClassVar[str] = "ndcg_rel"
    TREC_ORDER: ClassVar[tuple] = (12.1,)
    PARAMS: ClassVar = {}

    def value(self, lists):
        g, ideal, rpos = self._ideal(lists)
        B, N = g.shape
        if N == 0:
            return np.zeros(B)
        dcg = _dcg_prefix(g)
        idcg = _dcg_prefix(ideal)
        j = np.minimum(np.arange(N)[None, :], np.maximum(rpos - 1, 0)[:, None])
        with np.errstate(divide="ignore", invalid="ignore"):
            term = np.where(g > 0, dcg / np.take_along_axis(idcg, j, axis=1), 0.0)
            total = _seq_sum(term)
            last = np.take_along_axis(idcg, np.maximum(rpos - 1, 0)[:, None], axis=1)[:, 0]
            missing = (rpos - (g > 0).sum(axis=1)).astype(np.float64)
            total = total + missing * dcg[:, -1] / last
            v = np.where(total > 0, total / np.maximum(rpos, 1), 0.0)
        return _evaluated(lists, v)


@dataclass(frozen=True, eq=False, repr=False)
class RNDCG(_IdealGains, _Extra):
    r"""nDCG averaged at the R levels (trec_eval ``Rndcg``, experimental): nDCG at each rank
    where the ideal gain drops (the ends of the grade levels of the ideal list), and at the end
    of the retrieved list when it extends more than one rank beyond R+; their mean. 0 when R = 0."""

    rel: int = 1
    NAME: ClassVar[str] = "RnDCG"
    TREC_NAME: ClassVar[str] = "Rndcg"
    TREC_ORDER: ClassVar[tuple] = (12.2,)
    PARAMS: ClassVar = {"rel": REL}

    def value(self, lists):
        g, ideal, rpos = self._ideal(lists)
        B, N = g.shape
        if N == 0:
            return np.zeros(B)
        zero = np.zeros((B, 1))
        dcg = np.concatenate([zero, _dcg_prefix(g)], axis=1)     # exclusive: ranks < i
        idcg = np.concatenate([zero, _dcg_prefix(ideal)], axis=1)
        total = np.zeros(B)
        count = np.zeros(B, dtype=np.int64)
        end = np.zeros(B, dtype=np.int64)
        rc = lists.rel_counts
        with np.errstate(divide="ignore", invalid="ignore"):
            for z in range(rc.shape[1] - 1, 0, -1):   # level ends, top level first
                end = end + rc[:, z]
                on = rc[:, z] > 0
                d = np.take_along_axis(dcg, np.minimum(end, lists.lengths)[:, None], axis=1)[:, 0]
                i = np.take_along_axis(idcg, end[:, None], axis=1)[:, 0]
                total = np.where(on, total + d / i, total)
                count += on
            extra = (rpos > 0) & (rpos + 1 < lists.lengths)
            full = np.take_along_axis(idcg, rpos[:, None], axis=1)[:, 0]
            total = np.where(extra, total + dcg[:, -1] / full, total)
            count += extra
            v = total / count
        return _evaluated(lists, np.where(lists.n_rel(self.rel) > 0, v, 0.0))


@dataclass(frozen=True, eq=False, repr=False)
class RelP(Metric):
    r"""Relative precision at k (trec_eval ``relative_P_k``): relevant documents in the top k
    divided by min(k, R); 0 when R = 0. No expectation."""

    cutoff: int = 10
    rel: int = 1
    NAME: ClassVar[str] = "RelP"
    TREC_NAME: ClassVar[str] = "relative_P"
    TREC_SUFFIX: ClassVar[str] = "cutoff"
    TREC_ORDER: ClassVar[tuple] = (14.1,)
    CUTOFF_REQUIRED: ClassVar[bool] = True
    PARAMS: ClassVar = {"cutoff": Param(int, None, "rank cutoff k"), "rel": REL}
    HAS_EXPECTATION: ClassVar[bool] = False

    def value(self, lists):
        R = lists.n_rel(self.rel)
        hits = (lists.grades[:, : self.cutoff] >= self.rel).sum(axis=1)
        return _evaluated(lists, safe_divide(hits.astype(np.float64), np.minimum(R, self.cutoff)))


@dataclass(frozen=True, eq=False, repr=False)
class SetRelP(_Extra):
    r"""Relative set precision (trec_eval ``set_relative_P``): num_rel_ret / min(num_ret, R)."""

    rel: int = 1
    NAME: ClassVar[str] = "SetRelP"
    TREC_NAME: ClassVar[str] = "set_relative_P"
    TREC_ORDER: ClassVar[tuple] = (16.1,)
    PARAMS: ClassVar = {"rel": REL}

    def value(self, lists):
        _, A, R, n = _counts(lists, self.rel)
        return _evaluated(lists, safe_divide(A.astype(np.float64), np.minimum(n, R)))


@dataclass(frozen=True, eq=False, repr=False)
class SetAP(_Extra):
    r"""Set AP (trec_eval ``set_map``): set precision times set recall,
    num_rel_ret² / (num_ret R)."""

    rel: int = 1
    NAME: ClassVar[str] = "SetAP"
    TREC_NAME: ClassVar[str] = "set_map"
    TREC_ORDER: ClassVar[tuple] = (17.1,)
    PARAMS: ClassVar = {"rel": REL}

    def value(self, lists):
        _, A, R, n = _counts(lists, self.rel)
        A = A.astype(np.float64)
        return _evaluated(lists, safe_divide(A * A, n.astype(np.float64) * R.astype(np.float64)))


@dataclass(frozen=True, eq=False, repr=False)
class SetF(_Extra):
    r"""Set F-measure (trec_eval ``set_F``): :math:`(β + 1) P R / (β P + R)` of set precision
    and set recall (β = 1: their harmonic mean); 0 when nothing relevant was retrieved."""

    beta: float = 1.0
    rel: int = 1
    NAME: ClassVar[str] = "SetF"
    TREC_NAME: ClassVar[str] = "set_F"
    TREC_SUFFIX: ClassVar[str] = "beta"
    TREC_ORDER: ClassVar[tuple] = (17.2,)
    PARAMS: ClassVar = {"beta": Param(float, 1.0, "weight β of recall (trec_eval's parameter)"), "rel": REL}

    def __post_init__(self):
        object.__setattr__(self, "beta", float(self.beta))
        super().__post_init__()

    def trec_name(self):
        return "set_F" if self.beta == 1.0 else "set_F_%g" % self.beta

    def value(self, lists):
        _, A, R, n = _counts(lists, self.rel)
        A = A.astype(np.float64)
        x = self.beta
        with np.errstate(divide="ignore", invalid="ignore"):
            P = A / n
            Rc = A / R
            v = (x + 1.0) * P * Rc / (x * P + Rc)
        return _evaluated(lists, np.where(A > 0, v, 0.0))


@dataclass(frozen=True, eq=False, repr=False)
class RelString(_FloatParams):
    """The grades of the first ``length`` retrieved documents as text (trec_eval
    ``relstring``), a character each: the grade 0-9, ``>`` above 9, ``-`` not in the qrels,
    ``.`` pooled but unjudged (a negative qrels grade). Per topic only: it has no number."""

    length: float = 10.0
    trec_text: str | None = None
    NAME: ClassVar[str] = "RelString"
    TREC_NAME: ClassVar[str] = "relstring"
    TREC_ORDER: ClassVar[tuple] = (10,)
    TREC_FLOAT_PARAMS: ClassVar[tuple[str, ...]] = ("length",)
    PARAMS: ClassVar = {
        "length": Param(float, 10.0, "retrieved documents shown"),
        "trec_text": Param(str, None, "trec_eval's parameter text, printed after the name (the -m argument)"),
    }
    SUMMARY: ClassVar[bool] = False

    def _shown(self) -> int:
        # a parameter list (-m relstring.20) gives a tuple: trec_eval reads its first value
        first = self.length[0] if isinstance(self.length, tuple) else self.length
        return max(0, int(first))

    def _default_trec_name(self):
        return "relstring" if self._shown() == 10 else f"relstring_{self._shown()}"

    def value(self, lists):
        return np.full(len(lists), np.nan)

    def text(self, lists) -> list[str]:
        """Each list's string, quoted as trec_eval prints it."""
        n = min(self._shown(), lists.grades.shape[1])
        g = lists.grades[:, :n]
        chars = np.where(g > 9, ord(">"), np.where(g >= 0, ord("0") + np.clip(g, 0, 9), ord("-")))
        if lists.pooled_unjudged is not None:
            chars = np.where(lists.pooled_unjudged[:, :n], ord("."), chars)
        shown = np.minimum(lists.lengths, n)
        rows = chars.astype(np.uint8)
        return ["'" + rows[b, :shown[b]].tobytes().decode() + "'" for b in range(len(lists))]


@dataclass(frozen=True, eq=False, repr=False)
class NumNonRelJudgedRet(_Extra):
    """Judged non-relevant documents retrieved (0 <= grade < rel; trec_eval
    ``num_nonrel_judged_ret``); summed over topics."""

    rel: int = 1
    NAME: ClassVar[str] = "NumNonRelJudgedRet"
    TREC_NAME: ClassVar[str] = "num_nonrel_judged_ret"
    TREC_ORDER: ClassVar[tuple] = (17.3,)
    PARAMS: ClassVar = {"rel": REL}
    AGGREGATE: ClassVar[str] = "sum"
    INTEGER: ClassVar[bool] = True

    def value(self, lists):
        g = lists.grades
        return ((g >= 0) & (g < self.rel)).sum(axis=1).astype(np.float64)


# ------------------------------------------------------------- trec_eval 10.0's additions
# rbp, rbp_resid and unj are in trec_eval 10.0's all_trec only (9.0.7 has none of them):
# the 9.0.7 mode's all_trec leaves them out (maxent.metrics.registry.measure_sets)

def _powers(p: float, n: int) -> np.ndarray:
    """p^0 .. p^n as trec_eval's ``cur_p = cur_p * p`` loop computes them."""
    return np.concatenate(([1.0], np.cumprod(np.full(n, float(p)))))


class _PairParams(_Extra):
    """A trec_eval 10.0 measure with ``name=value`` parameters (``-m rbp.p=0.8``), printed as
    its name, ``_`` and the text as given (``rbp_p=0.8``)."""

    TREC_PAIR_PARAMS: ClassVar[tuple[str, ...]] = ("p",)

    def _non_default(self):
        return [(k, v) for k, v in super()._non_default() if k != "trec_text"]

    def _trec_expresses(self, key, value, rel, version):
        if key == "trec_text" or (key == "p" and self.trec_text is not None):
            return True
        return super()._trec_expresses(key, value, rel, version)

    def trec_name(self):
        return self.TREC_NAME if self.trec_text is None else f"{self.TREC_NAME}_{self.trec_text}"

    def validate(self):
        self._check(isinstance(self.p, float) and 0.0 <= self.p <= 1.0, f"p must be in [0, 1], got {self.p!r}")
        super().validate()


_P_TEXT = Param(str, None, "trec_eval's parameter text, printed after the name (the -m argument)")


@dataclass(frozen=True, eq=False, repr=False)
class TrecRBP(_PairParams):
    r"""trec_eval 10.0's rank-biased precision (``rbp``, m_rbp.c): :math:`(1-p)\sum_n
    gain(g_n)\, p^{n-1}` over the retrieved documents, gain(g) = g / max(1, top) with top the
    topic's highest qrels grade (negative grades and unjudged documents gain 0); p = 0.9.

    m_rbp.c scales the gains by (g - min) / (max - min) when min < 0 or max > 1, with min and
    max never initialised; the built 10.0 binary behaves as if both started at 0 (so: g / top
    when top > 1), which is what this computes (checked against it on trec_eval's test files,
    TREC DL 2019 and TREC-COVID). Binary qrels: no scaling either way. Unlike :class:`RBP`
    (ours, p = 0.8, ``rel``/``gain``), ``-l`` does not change it."""

    p: float = 0.9
    trec_text: str | None = None
    NAME: ClassVar[str] = "TrecRBP"
    TREC_NAME: ClassVar[str] = "rbp"
    TREC_ORDER: ClassVar[tuple] = (30.0,)
    PARAMS: ClassVar = {"p": Param(float, 0.9, "persistence"), "trec_text": _P_TEXT}

    def value(self, lists):
        g = lists.grades
        levels = lists.rel_counts.shape[1]
        top = np.where(lists.rel_counts > 0, np.arange(levels)[None, :], 0).max(axis=1, initial=0)
        gain = np.where(g > 0, g, 0).astype(np.float64)
        scale = np.maximum(top, 1).astype(np.float64)
        gain = np.where(top[:, None] > 1, gain / scale[:, None], gain)
        w = _powers(self.p, lists.depth)[: lists.depth]
        return _evaluated(lists, (1.0 - self.p) * _seq_sum(gain * w[None, :]))


@dataclass(frozen=True, eq=False, repr=False)
class RBPResid(_PairParams):
    r"""trec_eval 10.0's RBP residual (``rbp_resid``, m_rbp_resid.c): with n retrieved and
    U the ranks of unjudged ones, :math:`p^n + (1-p)\sum_{n \in U} p^{n-1}`, the most RBP
    could rise; 0 when no retrieved document is unjudged (as trec_eval, which then leaves the
    value unset). p = 0.9."""

    p: float = 0.9
    trec_text: str | None = None
    NAME: ClassVar[str] = "RBPResid"
    TREC_NAME: ClassVar[str] = "rbp_resid"
    TREC_ORDER: ClassVar[tuple] = (30.1,)
    PARAMS: ClassVar = {"p": Param(float, 0.9, "persistence"), "trec_text": _P_TEXT}

    def value(self, lists):
        inside = np.arange(lists.depth)[None, :] < lists.lengths[:, None]
        unj = (lists.grades < 0) & inside
        w = _powers(self.p, lists.depth)
        v = w[lists.lengths] + (1.0 - self.p) * _seq_sum(np.where(unj, w[None, : lists.depth], 0.0))
        return _evaluated(lists, np.where(unj.any(axis=1), v, 0.0))


@dataclass(frozen=True, eq=False, repr=False)
class Unjudged(Metric):
    r"""Unjudged at k (trec_eval 10.0 ``unj_k``, m_unjudged.c): documents in the top k not
    judged (absent from the qrels, or with a negative grade) divided by k, ranks beyond the
    list counting as judged. Defaults of the family ``unj``: 5, 10, 20. No expectation."""

    cutoff: int = 10
    NAME: ClassVar[str] = "Unjudged"
    TREC_NAME: ClassVar[str] = "unj"
    TREC_SUFFIX: ClassVar[str] = "cutoff"
    TREC_DEFAULTS: ClassVar[tuple] = (5, 10, 20)
    TREC_ORDER: ClassVar[tuple] = (30.2,)
    CUTOFF_REQUIRED: ClassVar[bool] = True
    PARAMS: ClassVar = {"cutoff": Param(int, None, "rank cutoff k")}
    HAS_EXPECTATION: ClassVar[bool] = False

    def value(self, lists):
        k = self.cutoff
        inside = np.arange(min(k, lists.depth))[None, :] < lists.lengths[:, None]
        n = ((lists.grades[:, :k] < 0) & inside).sum(axis=1)
        return _evaluated(lists, n / float(k))
