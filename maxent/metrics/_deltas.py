r"""Swap-delta machinery shared by the metric families (docs/method.md, Learning to rank).

A metric with ``HAS_SWAP_DELTA`` gives LambdaRank :math:`\Delta M_{ab}`, the change of its
value when ranks a and b swap, as ``swap_delta`` (signed (B, N, N)), ``delta_blocks`` (outer
sums per pair of grade levels) or ``delta_strip`` (the K x n strip, when deltas vanish below
``delta_depth``). Here: the per-query :class:`DeltaSide` and the position-additive form
:math:`M = \sum_n u(i_n) D(n)` of DCG, nDCG, P@k and RBP (:class:`PositionalDeltas`).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from maxent.errors import ParameterError

__all__ = ["DeltaSide", "PositionalDeltas", "level_groups", "symmetric_from_upper", "valid_ranks"]


class DeltaSide:
    """Per-query constants of a metric's swap deltas (R, ideal DCG, GAP weights, ...), from
    ``metric.delta_side(rel_counts)``: ``per_query`` arrays have one row per query (``take``
    selects some), ``constants`` are shared; both read as attributes."""

    def __init__(self, rel_counts: np.ndarray, per_query: dict | None = None, **constants):
        self.rel_counts = np.atleast_2d(np.asarray(rel_counts, dtype=np.int64))
        self.levels = self.rel_counts.shape[1]
        self.per_query = dict(per_query or {})
        self.constants = constants

    def __getattr__(self, name):
        d = self.__dict__
        if name in d.get("per_query", {}):
            return d["per_query"][name]
        if name in d.get("constants", {}):
            return d["constants"][name]
        raise AttributeError(name)

    def __len__(self) -> int:
        return self.rel_counts.shape[0]

    def take(self, rows) -> "DeltaSide":
        """The side information of some queries (rows of ``rel_counts``); None = all."""
        if rows is None:
            return self
        rows = np.asarray(rows)
        return DeltaSide(self.rel_counts[rows], {k: v[rows] for k, v in self.per_query.items()},
                         **self.constants)


def symmetric_from_upper(T: np.ndarray) -> np.ndarray:
    """Keep T[:, a, b] for a < b and mirror it to b < a; zero diagonal. (B, N, N)."""
    T = np.triu(T, 1)
    return T + T.transpose(0, 2, 1)


def valid_ranks(y: np.ndarray, lengths=None) -> np.ndarray:
    """(B, N) mask of real positions: before ``lengths``, or up to the last grade >= 0."""
    if lengths is None:
        return np.cumsum((y >= 0)[:, ::-1], axis=1)[:, ::-1] > 0
    return np.arange(y.shape[1])[None, :] < np.asarray(lengths).reshape(-1, 1)


def level_groups(level: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """[(level v, ranks with that level in increasing order)] for the levels present."""
    lo = int(level.min())
    counts = np.bincount(level - lo)
    order = np.argsort(level, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(counts)))
    return [(v + lo, order[bounds[v]:bounds[v + 1]]) for v in np.flatnonzero(counts)]


_DGAP_CACHE: dict[tuple, np.ndarray] = {}


class PositionalDeltas:
    r"""Mix-in: swap deltas of a position-additive metric :math:`M = \sum_n u(i_n) D(n)`.

    The metric provides ``utility_table(levels)`` (u per grade), ``_utility_scale(rel_counts)``
    (per-query factor, 1 / IDCG for nDCG), ``rank_discount(N)`` (D, 0 beyond the cutoff) and
    ``smooth_discount(x)`` (D and D' at real x >= 1). For a < b:
    :math:`\Delta M_{ab} = (u_a - u_b)(D(b) - D(a))` (Donmez, Svore & Burges 2009 eq. 7).
    """

    HAS_SWAP_DELTA: ClassVar[bool] = True
    DELTA_STRIP: ClassVar[bool] = True
    SMOOTH_FORM: ClassVar[str | None] = "positional"
    LAMBDA_BLOCK_MIN_N: ClassVar[int] = 256

    def _utility_scale(self, rel_counts: np.ndarray) -> np.ndarray:
        return np.ones(len(rel_counts))

    def delta_side(self, rel_counts) -> DeltaSide:
        self._require_delta()
        rc = np.atleast_2d(np.asarray(rel_counts, dtype=np.int64))
        table = np.asarray(self.utility_table(rc.shape[1]), dtype=np.float64)
        # u non-decreasing over grades -1..L-1: LambdaRank's fast dense path relies on it
        monotone = bool(np.all(np.diff(np.concatenate(([0.0], table))) >= 0))
        scale = np.asarray(self._utility_scale(rc), dtype=np.float64)
        return DeltaSide(rc, {"scale": scale}, table=table, table_ext=np.concatenate(([0.0], table)),
                         monotone=monotone and bool((scale >= 0).all()))

    def delta_depth(self) -> int | None:
        k = getattr(self, "cutoff", None)
        return None if k is None else int(k)

    def utilities(self, y: np.ndarray, side: DeltaSide) -> np.ndarray:
        """u(i_n) times the query's scale, (B, N) (unjudged and padding: 0)."""
        return self._table_ext(side, y)[y + 1] * side.scale[:, None]

    def _table_ext(self, side: DeltaSide, y: np.ndarray) -> np.ndarray:
        """[0, u(0), u(1), ...]: indexed by grade + 1, so unjudged (-1) and padding get 0."""
        if int(y.max(initial=0)) < len(side.table):
            return side.table_ext
        return np.concatenate(([0.0], self._table(side, y)))

    def _table(self, side: DeltaSide, y: np.ndarray) -> np.ndarray:
        """u(z) for z = 0..max(L, max grade + 1) - 1 (lists may hold grades the qrels lack)."""
        top = int(y.max(initial=0)) + 1
        if top <= len(side.table):
            return side.table
        return np.asarray(self.utility_table(top), dtype=np.float64)

    def _query_utilities(self, y: np.ndarray, side: DeltaSide, b: int) -> np.ndarray:
        """u(i_n) times the scale of query b, (n,), for one ranked list y (n,)."""
        return self._table_ext(side, y)[y + 1] * side.scale[b]

    def positional_form(self, y: np.ndarray, side: DeltaSide, b: int):
        """(u (n,), D (n,)) of one query: M = sum_n u_n D(n) (SoftRank's rank weights)."""
        return self._query_utilities(y, side, b), self.rank_discount(len(y))

    def swap_delta(self, grades, side, lengths=None) -> np.ndarray:
        y, single, side = self._delta_args(grades, side)
        u = self.utilities(y, side)
        D = self.rank_discount(y.shape[1])
        out = (u[:, :, None] - u[:, None, :]) * (D[None, None, :] - D[None, :, None])
        valid = valid_ranks(y, lengths)
        out *= valid[:, :, None] & valid[:, None, :]
        return out[0] if single else out

    def _abs_discount_gap(self, N: int) -> np.ndarray:
        key = (type(self).__name__, str(self), N)
        M = _DGAP_CACHE.get(key)
        if M is None:
            D = self.rank_discount(N)
            M = np.abs(D[:, None] - D[None, :])
            if len(_DGAP_CACHE) > 32:
                _DGAP_CACHE.clear()
            _DGAP_CACHE[key] = M
        return M

    def abs_delta_better(self, ys, side, valid) -> np.ndarray:
        """|Delta| on pairs l_a > l_b: max(u_a - u_b, 0) |D(a) - D(b)| when u is monotone."""
        if not side.monotone:
            return super().abs_delta_better(ys, side, valid)
        y = np.where(valid, ys, -1)
        u = self.utilities(y, side)
        # padding: below every real document as the better one, above it as the worse one
        Urow = np.where(valid, u, -1e30)
        Ucol = np.where(valid, u, 1e30)
        W = np.subtract(Urow[:, :, None], Ucol[:, None, :])
        np.maximum(W, 0.0, out=W)
        W *= self._abs_discount_gap(ys.shape[1])[None]
        return W

    def delta_strip(self, y, side, b, K):
        u = self._query_utilities(y, side, b)
        D = self.rank_discount(len(y))
        return np.subtract.outer(u[:K], u) * np.subtract.outer(D, D[:K]).T

    def delta_blocks(self, y, side, b):
        groups = level_groups(y)
        t = self._table(side, y)
        levels = np.array([v for v, _ in groups])
        uz = np.where(levels >= 0, t[np.clip(levels, 0, len(t) - 1)], 0.0) * side.scale[b]
        D = self.rank_discount(len(y))
        blocks = []
        for hi in range(len(groups)):
            for lo in range(hi):
                c = abs(uz[hi] - uz[lo])
                if c == 0:
                    continue
                cD = c * D        # |Delta| = |u_h - u_l| (D_a - D_c) with a the upper rank
                blocks.append((groups[hi][1], groups[lo][1], cD, -cD, -cD, cD))
        return blocks


def check_delta_args(metric, grades, side):
    """(y (B, N) int64, single, DeltaSide) from a list or batch and side info or rel_counts."""
    y = np.asarray(grades)
    single = y.ndim == 1
    y = np.atleast_2d(y).astype(np.int64)
    if not isinstance(side, DeltaSide):
        if side is None:
            raise ParameterError(f"{metric}: swap_delta needs the queries' rel_counts or a DeltaSide")
        side = metric.delta_side(np.atleast_2d(side))
    if len(side) != y.shape[0]:
        raise ParameterError(f"{metric}: {len(side)} queries of side information for {y.shape[0]} lists")
    return y, single, side
