"""Set-based and linear binary metrics: P@k, R-precision, recall@k, success@k, interpolated
precision, set precision and set recall (docs/method.md, Metrics)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from maxent.metrics._deltas import PositionalDeltas
from maxent.metrics._kernels import cutoff_mask, exclusive_product, safe_divide
from maxent.metrics.base import Metric, Param

__all__ = ["Precision", "RPrec", "Recall", "Success", "IPrec", "SetP", "SetR"]

REL = Param(int, 1, "binary relevance threshold: grade >= rel is relevant (trec_eval -l)")


class _RankWeighted:
    """Mix-in for metrics linear in p: E[M] = sum_n w_n q_n with weights ``_weights`` (B, N)."""

    LINEAR_IN_P: ClassVar[bool] = True
    SOLVER_FORM: ClassVar[str | None] = "linear"
    CERTIFIED_ENDS: ClassVar[tuple] = (True, True)

    def _expectation(self, q, lists):
        return (q * self._weights(lists)).sum(axis=1)

    def _gradient(self, q, lists):
        return np.broadcast_to(self._weights(lists), q.shape).copy()


class _CutCount(PositionalDeltas):
    """Swap deltas of P@k and recall@k: u = [grade >= rel] (/ R for recall), D(n) = [n <= k]
    (/ k for precision)."""

    LAMBDA_BLOCK_MIN_N: ClassVar[int] = 64

    def utility_table(self, levels: int) -> np.ndarray:
        return (np.arange(levels) >= self.rel).astype(np.float64)

    def smooth_discount(self, x):
        x = np.asarray(x, dtype=np.float64)
        return np.full(x.shape, self._per_rank()), np.zeros(x.shape)

    def rank_discount(self, N: int) -> np.ndarray:
        return cutoff_mask(N, self.cutoff) * self._per_rank()

    def _per_rank(self) -> float:
        return 1.0


@dataclass(frozen=True, eq=False, repr=False)
class Precision(_CutCount, _RankWeighted, Metric):
    r"""Precision at cutoff k: :math:`P@k = \frac1k \sum_{n\le k} rel_n`.

    Divides by k even when fewer were retrieved (trec_eval ``P_k``). Linear in p.
    """

    cutoff: int = 10
    rel: int = 1
    NAME: ClassVar[str] = "P"
    TREC_NAME: ClassVar[str] = "P"
    TREC_SUFFIX: ClassVar[str] = "cutoff"
    TREC_ORDER: ClassVar[tuple] = (9,)
    CUTOFF_REQUIRED: ClassVar[bool] = True
    PARAMS: ClassVar = {"cutoff": Param(int, None, "rank cutoff k"), "rel": REL}

    def value(self, lists):
        rel = lists.grades[:, : self.cutoff] >= self.rel
        return rel.sum(axis=1) / self.cutoff

    def _per_rank(self) -> float:
        return 1.0 / self.cutoff

    def _weights(self, lists):
        return cutoff_mask(lists.depth, self.cutoff)[None, :] / self.cutoff


@dataclass(frozen=True, eq=False, repr=False)
class RPrec(_RankWeighted, Metric):
    r"""R-precision: :math:`\frac1R \sum_{n\le R} rel_n`, R = judged relevant documents.

    0 when R = 0 (trec_eval ``Rprec``). Linear in p.
    """

    rel: int = 1
    NAME: ClassVar[str] = "R-prec"
    TREC_NAME: ClassVar[str] = "Rprec"
    ALIASES: ClassVar[tuple] = ("RPrec", "R-Prec")
    TREC_ORDER: ClassVar[tuple] = (5,)
    AT_PARAM: ClassVar = None
    PARAMS: ClassVar = {"rel": REL}

    def _top_r(self, lists):
        R = lists.n_rel(self.rel)
        return R, np.arange(lists.depth)[None, :] < R[:, None]

    def _weights(self, lists):
        R, inside = self._top_r(lists)
        return safe_divide(inside, R[:, None])

    def value(self, lists):
        R, inside = self._top_r(lists)
        return safe_divide(((lists.grades >= self.rel) & inside).sum(axis=1), R)


@dataclass(frozen=True, eq=False, repr=False)
class Recall(_CutCount, _RankWeighted, Metric):
    r"""Recall at cutoff k: :math:`\frac1R \sum_{n\le k} rel_n` (trec_eval ``recall_k``); 0 if R = 0."""

    cutoff: int = 1000
    rel: int = 1
    NAME: ClassVar[str] = "R"
    TREC_NAME: ClassVar[str] = "recall"
    ALIASES: ClassVar[tuple] = ("Recall",)
    TREC_SUFFIX: ClassVar[str] = "cutoff"
    TREC_ORDER: ClassVar[tuple] = (11,)
    CUTOFF_REQUIRED: ClassVar[bool] = True
    PARAMS: ClassVar = {"cutoff": Param(int, None, "rank cutoff k"), "rel": REL}

    def value(self, lists):
        rel = lists.grades[:, : self.cutoff] >= self.rel
        return safe_divide(rel.sum(axis=1), lists.n_rel(self.rel))

    def _weights(self, lists):
        return safe_divide(cutoff_mask(lists.depth, self.cutoff)[None, :], lists.n_rel(self.rel)[:, None])

    def _utility_scale(self, rel_counts):
        return safe_divide(1.0, rel_counts[:, self.rel:].sum(axis=1))


@dataclass(frozen=True, eq=False, repr=False)
class Success(Metric):
    r"""Success at k: 1 if a relevant document is in the top k (trec_eval ``success_k``).

    :math:`E[Success@k] = 1 - \prod_{n\le k}(1-p_n)`.
    """
    SOLVER_FORM: ClassVar[str | None] = "cascade"
    CERTIFIED_ENDS: ClassVar[tuple] = (False, True)

    cutoff: int = 10
    rel: int = 1
    NAME: ClassVar[str] = "Success"
    TREC_NAME: ClassVar[str] = "success"
    TREC_SUFFIX: ClassVar[str] = "cutoff"
    TREC_ORDER: ClassVar[tuple] = (15,)
    CUTOFF_REQUIRED: ClassVar[bool] = True
    PARAMS: ClassVar = {"cutoff": Param(int, None, "rank cutoff k"), "rel": REL}

    def value(self, lists):
        return (lists.grades[:, : self.cutoff] >= self.rel).any(axis=1).astype(np.float64)

    def _expectation(self, q, lists):
        return 1.0 - np.prod(1.0 - q[:, : self.cutoff], axis=1)

    def _gradient(self, q, lists):
        k = min(self.cutoff, q.shape[1])
        one_minus = 1.0 - q[:, :k]
        # prod_{m<=k, m != n} (1 - p_m) without division: prefix x suffix products
        suf = exclusive_product(one_minus[:, ::-1], axis=1)[:, ::-1]
        out = np.zeros_like(q)
        out[:, :k] = exclusive_product(one_minus, axis=1) * suf
        return out

    def cascade_form(self, lists):
        r"""(s, c) for the compiled solver: :math:`E = \sum_n c_n r_n \prod_{m<n}(1 - r_m)` with
        s = [0, 1] (r_n = q_n) and c_n = [n <= k]."""
        return np.array([0.0, 1.0]), cutoff_mask(lists.depth, self.cutoff).astype(np.float64)


@dataclass(frozen=True, eq=False, repr=False)
class IPrec(Metric):
    r"""Interpolated precision at recall level x (trec_eval ``iprec_at_recall_x``).

    With c the number of relevant documents recall x stands for and r_c the rank of the c-th
    relevant retrieved document (r_0 = 1): :math:`\max_{r_c \le n \le N} P(n)`; 0 when fewer
    than c were retrieved. ``rule`` is how c comes from x R: ``9`` (default) as trec_eval
    9.0.7, :math:`c = \lfloor x R + 0.9 \rfloor` (so recall 0.1 of R = 1 to 9 needs one
    relevant document); ``10`` as trec_eval 10.0, ``lround(x R)`` (half away from zero).
    ``score_precision="double"`` (the command's ``--score-precision double``) selects ``10``.
    No expectation.
    """

    cutoff: float = 0.0
    rel: int = 1
    rule: str = "9"
    NAME: ClassVar[str] = "IPrec"
    TREC_NAME: ClassVar[str] = "iprec_at_recall"
    TREC_SUFFIX: ClassVar[str] = "cutoff"
    TREC_ORDER: ClassVar[tuple] = (8,)
    PARAMS: ClassVar = {"cutoff": Param(float, None, "recall level x in [0, 1]"), "rel": REL,
                        "rule": Param(str, "9", "recall level to relevant count: 9 = trec_eval 9.0.7's "
                                      "(long)(x R + 0.9), 10 = trec_eval 10.0's lround(x R)",
                                      choices=("9", "10"))}
    HAS_EXPECTATION: ClassVar[bool] = False

    def __post_init__(self):
        object.__setattr__(self, "cutoff", float(self.cutoff))
        object.__setattr__(self, "rule", str(self.rule))
        super().__post_init__()

    def validate(self):
        self._check(0.0 <= self.cutoff <= 1.0, f"recall level must be in [0, 1], got {self.cutoff}")
        super().validate()

    def trec_name(self):
        return f"iprec_at_recall_{self.cutoff:.2f}"

    def _trec_expresses(self, key, value, rel, version):
        if key == "rule":   # each trec_eval has its own rule
            return value == ("10" if version.startswith("10") else "9")
        return super()._trec_expresses(key, value, rel, version)

    def needed(self, n_rel: np.ndarray) -> np.ndarray:
        """c, the relevant documents recall level x stands for, per list (``rule``)."""
        t = self.cutoff * n_rel.astype(np.float64)
        if self.rule == "10":                       # lround: half away from zero (t >= 0)
            f = np.floor(t)
            return (f + (t - f >= 0.5)).astype(np.int64)
        return np.floor(t + 0.9).astype(np.int64)    # (long) (x * R + 0.9)

    def undefined_if_empty(self, lists) -> np.ndarray:
        """Lists on which trec_eval divides 0 by 0 when it evaluates them with nothing
        retrieved (``-J``): those whose level stands for 0 relevant documents."""
        return self.needed(lists.n_rel(self.rel)) == 0

    def value(self, lists):
        if lists.depth == 0:
            return np.zeros(len(lists))
        rel = lists.grades >= self.rel
        cum = np.cumsum(rel, axis=1)
        n = np.arange(1, lists.depth + 1)
        inside = n[None, :] <= lists.lengths[:, None]
        prec = np.where(inside, cum / n, 0.0)
        best_after = np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1]  # max_{m >= n} P(m)
        c = self.needed(lists.n_rel(self.rel))
        num_rel_ret = cum[:, -1]
        # rank index of the c-th relevant document (c = 0: rank 1)
        start = np.where(c > 0, (cum < c[:, None]).sum(axis=1), 0)
        start = np.minimum(start, lists.depth - 1)
        v = np.take_along_axis(best_after, start[:, None], axis=1)[:, 0]
        return np.where((c <= num_rel_ret) & (num_rel_ret > 0), v, 0.0)


@dataclass(frozen=True, eq=False, repr=False)
class SetP(Metric):
    r"""Set precision: num_rel_ret / num_ret over the whole retrieved list (trec_eval ``set_P``).

    Divides by the documents retrieved, not k; 0 when none. No expectation.
    """

    rel: int = 1
    NAME: ClassVar[str] = "SetP"
    TREC_NAME: ClassVar[str] = "set_P"
    TREC_ORDER: ClassVar[tuple] = (16,)
    AT_PARAM: ClassVar = None
    PARAMS: ClassVar = {"rel": REL}
    HAS_EXPECTATION: ClassVar[bool] = False

    def value(self, lists):
        return safe_divide((lists.grades >= self.rel).sum(axis=1), lists.lengths)


@dataclass(frozen=True, eq=False, repr=False)
class SetR(Metric):
    r"""Set recall: num_rel_ret / R over the whole retrieved list (trec_eval ``set_recall``).

    Equals recall@k with k the depth (-M). 0 when R = 0. No expectation.
    """

    rel: int = 1
    NAME: ClassVar[str] = "SetR"
    TREC_NAME: ClassVar[str] = "set_recall"
    TREC_ORDER: ClassVar[tuple] = (17,)
    AT_PARAM: ClassVar = None
    PARAMS: ClassVar = {"rel": REL}
    HAS_EXPECTATION: ClassVar[bool] = False

    def value(self, lists):
        return safe_divide((lists.grades >= self.rel).sum(axis=1), lists.n_rel(self.rel))
