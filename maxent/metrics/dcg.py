"""Discounted cumulative gain and its normalised form (docs/method.md, Metrics and
Expectations; Järvelin & Kekäläinen 2002; trec_eval ``ndcg`` / ``ndcg_cut``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from maxent.metrics._deltas import PositionalDeltas
from maxent.metrics._kernels import cutoff_mask, discount, gain_vector, ideal_dcg, safe_divide
from maxent.metrics.base import Metric, Param

__all__ = ["DCG", "NDCG"]

GAIN = Param(str, "linear", "gain per grade: linear (= grade, trec_eval), exp (2^grade - 1), "
             "or a map level:gain,... (other levels keep gain = grade)")
DISCOUNT = Param(str, "log2", "rank discount: log2 = 1/log2(n+1); jk = 1/max(1, log2 n)",
                 choices=("log2", "jk"))


def _check_gain(m):
    g = m.gain
    ok = g in ("linear", "exp") or (isinstance(g, tuple) and all(
        isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], int) for p in g))
    m._check(ok, f"gain must be 'linear', 'exp' or level:gain pairs, got {g!r}")


class _Gains(PositionalDeltas):
    """Mix-in: gains, rank weights D(n) [n <= k] and swap deltas with u = gain (/ IDCG)."""

    CERTIFIED_ENDS: ClassVar[tuple] = (True, True)
    GRADED: ClassVar[bool] = True
    LINEAR_IN_P: ClassVar[bool] = True
    SOLVER_FORM: ClassVar[str | None] = "linear"

    def validate(self):
        _check_gain(self)
        super().validate()

    def gains(self, levels: int) -> np.ndarray:
        return gain_vector(levels, self.gain)

    def utility_table(self, levels: int) -> np.ndarray:
        return self.gains(levels)

    def rank_discount(self, N: int) -> np.ndarray:
        return discount(N, self.discount) * cutoff_mask(N, self.cutoff)

    def smooth_discount(self, x: np.ndarray):
        """D(x) and dD/dx at real positions x >= 1 (no cutoff; ApproxRank)."""
        x = np.asarray(x, dtype=np.float64)
        if self.discount == "log2":
            L = np.log2(1.0 + x)
            return 1.0 / L, -1.0 / (L * L * np.log(2.0) * (1.0 + x))
        L = np.log2(np.maximum(x, 2.0))
        return 1.0 / L, np.where(x > 2.0, -1.0 / (L * L * np.log(2.0) * x), 0.0)

    def _dcg(self, lists) -> np.ndarray:
        gz = self.gains(lists.levels)
        w = self.rank_discount(lists.depth)
        # sparse: the ranks of grades from the lowest of non-zero gain (those in between add 0.0,
        # a comparison costs several times less per rank than a gather of the gains)
        lowest = np.flatnonzero(gz)[:1]
        rows, cols = np.nonzero(lists.grades >= (lowest[0] if len(lowest) else len(gz)))
        contrib = gz[lists.grades[rows, cols]] * w[cols]
        return np.bincount(rows, weights=contrib, minlength=len(lists))

    def _norm(self, lists) -> np.ndarray:
        return np.ones(len(lists))

    def _expectation(self, p, lists):
        gz = self.gains(p.shape[2])
        w = self.rank_discount(lists.depth)
        return safe_divide(np.einsum("bnz,z,n->b", p, gz, w), self._norm(lists))

    def _gradient(self, p, lists):
        gz = self.gains(p.shape[2])
        w = self.rank_discount(lists.depth)
        grad = w[None, :, None] * gz[None, None, :] * safe_divide(1.0, self._norm(lists))[:, None, None]
        return np.broadcast_to(grad, p.shape).copy()


@dataclass(frozen=True, eq=False, repr=False)
class DCG(_Gains, Metric):
    r""":math:`DCG@k = \sum_{n\le k} gain(i_n) D(n)`, D(n) = 1/log2(n+1). Linear in p."""

    cutoff: int | None = None
    gain: object = "linear"
    discount: str = "log2"
    NAME: ClassVar[str] = "DCG"
    TREC_NAME: ClassVar[str] = "dcg"
    TREC_CUT_NAME: ClassVar[str] = "dcg_cut"
    TREC_ORDER: ClassVar[tuple] = (18, 19)   # dcg, dcg_cut (after trec_eval's own)
    PARAMS: ClassVar = {"cutoff": Param(int, None, "rank cutoff k"), "gain": GAIN, "discount": DISCOUNT}

    def value(self, lists):
        return self._dcg(lists)


@dataclass(frozen=True, eq=False, repr=False)
class NDCG(_Gains, Metric):
    r"""Normalised DCG: :math:`nDCG@k = DCG@k / IDCG`.

    The ideal list orders the topic's judged documents by decreasing gain, whole (``all``,
    trec_eval ``ndcg``, the default without a cutoff) or truncated at k (``cut``,
    ``ndcg_cut_k``, the default with one). 0 when the ideal DCG is 0. Linear in p. Gain levels
    are sorted exactly (trec_eval's comparator truncates gains to integers).
    """

    cutoff: int | None = None
    gain: object = "linear"
    ideal: str | None = None
    discount: str = "log2"
    NAME: ClassVar[str] = "nDCG"
    TREC_NAME: ClassVar[str] = "ndcg"
    TREC_CUT_NAME: ClassVar[str] = "ndcg_cut"
    ALIASES: ClassVar[tuple] = ("NDCG",)
    TREC_SUFFIX: ClassVar[str] = "gain"   # ndcg.1=3,2=9
    TREC_ORDER: ClassVar[tuple] = (12, 13)   # ndcg, ndcg_cut
    PARAMS: ClassVar = {
        "cutoff": Param(int, None, "rank cutoff k"),
        "gain": GAIN,
        "ideal": Param(str, None, "ideal DCG over all judged documents (all) or truncated at k (cut); "
                       "default: cut with a cutoff, all without", choices=(None, "all", "cut")),
        "discount": DISCOUNT,
    }

    def __post_init__(self):
        default = "all" if self.cutoff is None else "cut"
        if self.ideal == default:
            object.__setattr__(self, "ideal", None)  # canonical: the default is left out
        super().__post_init__()

    @property
    def ideal_cut(self) -> bool:
        return (self.ideal or ("all" if self.cutoff is None else "cut")) == "cut"

    def trec_name(self):
        if self.cutoff is not None:
            return f"ndcg_cut_{self.cutoff}"
        if isinstance(self.gain, tuple):
            return "ndcg_" + ",".join(f"{k}={v:g}" for k, v in self.gain)
        return "ndcg"

    def _idcg(self, rel_counts: np.ndarray) -> np.ndarray:
        """Ideal DCG per topic from the qrels counts (B, L)."""
        return ideal_dcg(rel_counts, self.gains(rel_counts.shape[1]),
                         self.cutoff if self.ideal_cut else None, self.discount)

    def _norm(self, lists):
        return self._idcg(lists.rel_counts)

    def _utility_scale(self, rel_counts):
        return safe_divide(1.0, self._idcg(rel_counts))

    def value(self, lists):
        return safe_divide(self._dcg(lists), self._norm(lists))
