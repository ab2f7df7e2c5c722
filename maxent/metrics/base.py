"""The metric base class: a frozen dataclass of its parameters that knows its value,
expectation and gradient.

``str(m)`` is the canonical name without default parameters (``nDCG(gain=exp)@10``); equality
and hashing use it, and ``parse_measure(str(m)) == m``. Shapes: B lists, N ranks, L grade
levels. Binary metrics take q_n = P(grade_n >= rel) (B, N), or a graded p (B, N, L) summed to
it; graded metrics need p (B, N, L), 0 beyond a list's length.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from maxent.errors import ParameterError
from maxent.metrics._deltas import DeltaSide, check_delta_args

if TYPE_CHECKING:
    from maxent.ranked import RankedLists

__all__ = ["Metric", "Param", "format_value"]


@dataclass(frozen=True)
class Param:
    """Specification of one metric parameter (as ir_measures' ParamInfo)."""

    dtype: Any
    default: Any
    desc: str
    choices: tuple | None = None


def format_value(v) -> str:
    """Canonical text of a parameter value (as used in names)."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return "%.12g" % v
    if isinstance(v, tuple) and v and isinstance(v[0], tuple):  # a gain map ((level, gain), ...)
        return ",".join(f"{k}:{format_value(g)}" for k, g in v)
    if isinstance(v, tuple):
        return ",".join(format_value(x) for x in v)
    return str(v)


@dataclass(frozen=True, eq=False, repr=False)
class Metric:
    """Base class of every metric; subclasses are frozen dataclasses of their parameters."""

    # names, parsing and output order (maxent.metrics.registry) derive from these
    NAME: ClassVar[str] = ""               # canonical (ir_measures-style) name
    ALIASES: ClassVar[tuple] = ()           # other accepted ir_measures-style names
    TREC_NAME: ClassVar[str | None] = None
    TREC_CUT_NAME: ClassVar[str | None] = None  # trec_eval's name with a cutoff, if not TREC_NAME
    TREC_SUFFIX: ClassVar[str | None] = None    # parameter set by TREC_NAME's suffix (P_10: cutoff)
    TREC_ORDER: ClassVar[tuple] = ()        # place of TREC_NAME (, TREC_CUT_NAME) in trec_eval's
                                            # output order (measures.c); () = after them, by METRICS
    CUTOFF_REQUIRED: ClassVar[bool] = False
    AT_PARAM: ClassVar[str | None] = "cutoff"
    PARAMS: ClassVar[dict[str, Param]] = {}
    GRADED: ClassVar[bool] = False
    LINEAR_IN_P: ClassVar[bool] = False
    AGGREGATE: ClassVar[str] = "mean"   # "mean" over topics, "sum" (counts) or "gmean" (gm_map)
    PER_TOPIC: ClassVar[bool] = True     # printed per topic by -q (trec_eval omits gm_map)
    SUMMARY: ClassVar[bool] = True       # printed in the all block (relstring is per topic only)
    INTEGER: ClassVar[bool] = False      # printed as an integer by --format trec
    HAS_EXPECTATION: ClassVar[bool] = True
    # whether min / max of E[M] over the relaxed polytope are those of deterministic lists
    CERTIFIED_ENDS: ClassVar[tuple] = (False, False)
    # the compiled solver's form: "linear" (E = <W, p>), "prefix" (prefix_hessian) or
    # "cascade" (cascade_form); every metric with an expectation sets one
    SOLVER_FORM: ClassVar[str | None] = None
    # LambdaRank capabilities (maxent.metrics._deltas)
    HAS_SWAP_DELTA: ClassVar[bool] = False   # swap_delta, delta_side, delta_blocks
    DELTA_NO_CUTOFF: ClassVar[bool] = False  # swap deltas only without a cutoff
    DELTA_STRIP: ClassVar[bool] = False      # delta_strip (deltas vanish below delta_depth)
    SMOOTH_FORM: ClassVar[str | None] = None  # SoftRank / ApproxRank form: "positional" or "pairwise"
    LAMBDA_BLOCK_MIN_N: ClassVar[int] = 64   # list length from which the block kernel is faster

    def _non_default(self) -> list[tuple[str, Any]]:
        out = []
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name == self.AT_PARAM:
                continue
            if v != self.PARAMS[f.name].default:
                out.append((f.name, v))
        return out

    def __str__(self) -> str:
        name = self.NAME
        params = self._non_default()
        if params:
            name += "(" + ",".join(f"{k}={format_value(v)}" for k, v in params) + ")"
        if self.AT_PARAM is not None:
            at = getattr(self, self.AT_PARAM)
            if at is not None:
                name += "@" + format_value(at)
        return name

    __repr__ = __str__

    def __eq__(self, other) -> bool:
        return isinstance(other, Metric) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def trec_name(self) -> str:
        """The name trec_eval prints (``P_10``, ``map_cut_10``), else the canonical name; see
        :meth:`trec_label` for the name of a line that must not mean something else."""
        if self.TREC_NAME is None:
            return str(self)
        at = getattr(self, "cutoff", None) if self.AT_PARAM == "cutoff" else None
        if at is None:
            return self.TREC_NAME
        if self.TREC_CUT_NAME is None and self.TREC_SUFFIX != "cutoff":
            return self.TREC_NAME   # no trec_eval family with a cutoff (recip_rank)
        return f"{self.TREC_CUT_NAME or self.TREC_NAME}_{at}"

    def _trec_expresses(self, key: str, value, rel: int, version: str) -> bool:
        """Whether trec_eval ``version`` run with ``-l rel`` computes this measure with parameter
        ``key`` at ``value`` under :meth:`trec_name` (subclasses add their own parameters)."""
        if key == "rel":
            return value == rel
        if key == self.AT_PARAM:
            return value is None or self.TREC_CUT_NAME is not None or self.TREC_SUFFIX == key
        if value == self.PARAMS[key].default:
            return True
        # a suffix parameter of the uncut name (ndcg.1=3,2=9)
        at = getattr(self, self.AT_PARAM) if self.AT_PARAM else None
        return key == self.TREC_SUFFIX and at is None and isinstance(value, tuple)

    def trec_label(self, rel: int = 1, version: str = "9.0.7") -> str:
        """The name of this measure's lines in trec_eval's format: :meth:`trec_name` when trec_eval
        ``version`` with ``-l rel`` computes exactly this measure, else that name followed by the
        parameters it cannot express (``ndcg_cut_10(gain=exp)``, ``map(rel=2)``); a measure
        trec_eval lacks keeps its canonical name (``GAP``)."""
        if self.TREC_NAME is None:
            return str(self)
        extra = [(k, getattr(self, k)) for k in self.PARAMS
                 if not self._trec_expresses(k, getattr(self, k), rel, version)]
        if not extra:
            return self.trec_name()
        return self.trec_name() + "(" + ",".join(f"{k}={format_value(v)}" for k, v in extra) + ")"

    def _check(self, cond: bool, msg: str) -> None:
        if not cond:
            raise ParameterError(f"{self.NAME}: {msg}")

    def __post_init__(self):
        for name, spec in self.PARAMS.items():
            v = getattr(self, name)
            if spec.choices is not None and v not in spec.choices and not isinstance(v, tuple):
                raise ParameterError(f"{self.NAME}: {name}={v!r} not allowed; expected one of {spec.choices}")
        self.validate()

    def validate(self) -> None:
        """Raise ParameterError for a bad ``rel`` (integer >= 0) or ``cutoff`` (integer >= 1,
        required when ``CUTOFF_REQUIRED``); subclasses check more."""
        if "rel" in self.PARAMS:
            rel = getattr(self, "rel")
            self._check(isinstance(rel, int) and not isinstance(rel, bool) and rel >= 0,
                        f"rel must be an integer >= 0, got {rel!r}")
        if "cutoff" in self.PARAMS and self.PARAMS["cutoff"].dtype is int:
            k = getattr(self, "cutoff")
            if k is not None or self.CUTOFF_REQUIRED:
                self._check(isinstance(k, int) and k >= 1, f"cutoff must be an integer >= 1, got {k!r}")

    def value(self, lists: RankedLists) -> np.ndarray:
        """Metric value of each list, (B,)."""
        raise NotImplementedError

    def expectation(self, p: np.ndarray, lists: RankedLists) -> np.ndarray:
        """E[M] under the product distribution p: (B, N) binary or (B, N, L) graded -> (B,)."""
        if self.GRADED:
            return self._expectation(self._graded(p, lists), lists)
        return self._expectation(self._binary(p), lists)

    def gradient(self, p: np.ndarray, lists: RankedLists) -> np.ndarray:
        """dE[M]/dp, the same shape as p."""
        if self.GRADED:
            return self._gradient(self._graded(p, lists), lists)
        if np.ndim(p) == 3:
            dq = self._gradient(self._binary(p), lists)
            z = np.arange(p.shape[2])
            return dq[:, :, None] * (z >= self.binary_threshold)[None, None, :]
        return self._gradient(np.asarray(p, dtype=np.float64), lists)

    # Binary metrics define these on q (B, N); graded metrics on p (B, N, L).
    def _expectation(self, p, lists):  # pragma: no cover - abstract
        raise NotImplementedError

    def _gradient(self, p, lists):  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def binary_threshold(self) -> int:
        """The relevance threshold of a binary metric."""
        return getattr(self, "rel", 1)

    def _binary(self, p) -> np.ndarray:
        p = np.asarray(p, dtype=np.float64)
        if p.ndim == 3:
            return p[:, :, self.binary_threshold:].sum(axis=2)
        return p

    def _graded(self, p, lists) -> np.ndarray:
        p = np.asarray(p, dtype=np.float64)
        if p.ndim != 3:
            raise ParameterError(f"{self}: graded metric needs p of shape (B, N, L), got {p.shape}")
        return p

    def indicator(self, lists: RankedLists) -> np.ndarray:
        """The 0/1 distribution of the real lists, (B, N) or (B, N, L); unjudged as grade 0,
        padding all-zero."""
        g = lists.grades.astype(np.int64)
        inside = np.arange(lists.depth)[None, :] < lists.lengths[:, None]
        if not self.GRADED:
            return ((g >= self.binary_threshold) & inside).astype(np.float64)
        onehot = np.zeros(g.shape + (lists.levels,))
        np.put_along_axis(onehot, np.maximum(g, 0)[..., None], 1.0, axis=2)
        return onehot * inside[..., None]

    def delta_unsupported(self) -> str | None:
        """Why this metric (with these parameters) has no swap delta, or None when it has one."""
        if not self.HAS_SWAP_DELTA:
            return f"{self} has no LambdaRank swap delta"
        if self.DELTA_NO_CUTOFF and self.cutoff is not None:
            return f"no LambdaRank swap delta for {self} ({self.NAME} only without a cutoff)"
        return None

    def _require_delta(self) -> None:
        reason = self.delta_unsupported()
        if reason is not None:
            raise ParameterError(reason)

    def _delta_args(self, grades, side):
        return check_delta_args(self, grades, side)

    def delta_side(self, rel_counts) -> DeltaSide:
        """Per-query constants of the swap deltas from the qrels counts (B, L)."""
        self._require_delta()
        return DeltaSide(rel_counts)

    def swap_delta(self, grades, side, lengths=None) -> np.ndarray:
        r"""Change of the metric when the documents at ranks a and b swap, for all pairs.

        Parameters
        ----------
        grades : array_like, shape (B, N) or (N,)
            Grades in ranked order; -1 marks unjudged documents and padding.
        side : DeltaSide or array_like, shape (B, L) or (L,)
            ``self.delta_side(rel_counts)``, or the qrels counts themselves.
        lengths : array_like, shape (B,), optional
            Ranked documents per list (default: up to the last grade >= 0).

        Returns
        -------
        ndarray, shape (B, N, N) or (N, N)
            :math:`\Delta M_{ab} = M(\text{a, b swapped}) - M`; symmetric, zero diagonal.
        """
        self._require_delta()
        raise NotImplementedError  # pragma: no cover - every HAS_SWAP_DELTA class overrides it

    def delta_depth(self) -> int | None:
        """K such that pairs with both ranks >= K have delta 0 (the cutoff), or None."""
        return None

    def abs_delta_better(self, ys: np.ndarray, side: DeltaSide, valid: np.ndarray) -> np.ndarray:
        """|Delta M_ab| on pairs with l_a > l_b, 0 elsewhere; (B, N, N)."""
        W = np.abs(self.swap_delta(ys, side, lengths=valid.sum(axis=1)))
        y = np.where(valid, ys, -1)
        W *= y[:, :, None] > y[:, None, :]
        return W

    def delta_strip(self, y: np.ndarray, side: DeltaSide, b: int, K: int):
        """Signed deltas T[a, c] for upper ranks a < K and all c (K, n) of query ``b``
        (entries with c > a are used); None when the closed form does not apply."""
        return None

    def delta_blocks(self, y: np.ndarray, side: DeltaSide, b: int):
        r"""Grade blocks of one ranked query (y: (n,)): ``(I, J, p1, q1, p2, q2)`` with I the
        ranks of the better documents, J of the worse, and :math:`|\Delta M_{ac}| = p1_a + q1_c`
        (a < c) or :math:`p2_a + q2_c` (a > c); None when the closed form does not apply."""
        self._require_delta()
        raise NotImplementedError  # pragma: no cover
