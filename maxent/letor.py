"""Learning-to-rank data: LETOR / SVMlight readers, splits, normalisation (generated sets:
:mod:`maxent.synthetic`).

A :class:`RankingData` holds dense features ``X`` (D x F), integer grades ``y`` (D,) and query
boundaries ``offsets`` (Q + 1,). :func:`read_letor` reads LETOR / SVMlight lines
(``grade qid:Q i:v ... # comment``; LETOR 3.0/4.0, MSLR-WEB, Yahoo LTR) or LibSVM lines with a
LightGBM ``.query`` file of group sizes; malformed input raises :class:`maxent.errors.InputError`
naming the file and line.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from maxent.errors import InputError, ParameterError

__all__ = ["RankingData", "read_letor", "split_queries", "kfold", "standardize", "default_data_root"]


@dataclass(frozen=True, eq=False)
class RankingData:
    """Documents grouped by query, with dense features and integer grades.

    Attributes
    ----------
    X : ndarray, shape (D, F), float64
        Feature vectors, one row per document.
    y : ndarray, shape (D,), int64
        Relevance grade of each document (0 = non-relevant).
    offsets : ndarray, shape (Q + 1,), int64
        Query boundaries: query ``q`` owns rows ``offsets[q]:offsets[q + 1]``.
    qids : ndarray, shape (Q,), object
        Query identifiers (strings), in file order.
    source : str or None
        Where the data came from (a path or a generator description).
    """

    X: np.ndarray
    y: np.ndarray
    offsets: np.ndarray
    qids: np.ndarray
    source: str | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        if self.X.ndim != 2 or self.X.shape[0] != self.y.shape[0]:
            raise ParameterError(f"X must be (D, F) with D = len(y); got {self.X.shape} and {self.y.shape}")
        if self.offsets[0] != 0 or self.offsets[-1] != len(self.y) or np.any(np.diff(self.offsets) <= 0):
            raise ParameterError("offsets must start at 0, end at D and be strictly increasing")

    @property
    def n_queries(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_docs(self) -> int:
        return len(self.y)

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def sizes(self) -> np.ndarray:
        """Documents per query, shape (Q,)."""
        return np.diff(self.offsets)

    @property
    def query_index(self) -> np.ndarray:
        """Query number (0..Q-1) of every document, shape (D,)."""
        return np.repeat(np.arange(self.n_queries), self.sizes)

    def __repr__(self) -> str:
        return (f"RankingData({self.n_queries} queries, {self.n_docs} docs, {self.n_features} features, "
                f"grades {np.bincount(self.y).tolist()}, source={self.source!r})")

    def rel_counts(self, n_levels: int | None = None) -> np.ndarray:
        """Number of documents of each grade per query, shape (Q, L) (every document is judged)."""
        L = int(self.y.max()) + 1 if n_levels is None else int(n_levels)
        flat = self.query_index * L + self.y
        return np.bincount(flat, minlength=self.n_queries * L).reshape(self.n_queries, L)

    def padded(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Queries as padded arrays ``(Xp (Q, N, F), yp (Q, N), lengths (Q,))``: zero features and
        grade -1 after each query's documents (N = largest query)."""
        key = "padded"
        if key not in self._cache:
            sizes = self.sizes
            N = int(sizes.max())
            pos = np.arange(self.n_docs) - np.repeat(self.offsets[:-1], sizes)
            qi = self.query_index
            Xp = np.zeros((self.n_queries, N, self.n_features))
            yp = np.full((self.n_queries, N), -1, dtype=np.int64)
            Xp[qi, pos] = self.X
            yp[qi, pos] = self.y
            self._cache[key] = (Xp, yp, sizes.copy())
        return self._cache[key]

    def subset(self, queries) -> "RankingData":
        """The data set restricted to the given query numbers (in the given order)."""
        queries = np.asarray(queries, dtype=np.int64)
        if queries.size == 0:
            raise ParameterError("subset needs at least one query")
        sizes = self.sizes[queries]
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        rows = np.arange(offsets[-1]) + np.repeat(self.offsets[queries] - offsets[:-1], sizes)
        return RankingData(self.X[rows], self.y[rows], offsets, self.qids[queries], self.source)

    def select_features(self, columns) -> "RankingData":
        """The data set with only the given feature columns (0-based)."""
        columns = np.asarray(columns, dtype=np.int64)
        return RankingData(self.X[:, columns], self.y, self.offsets, self.qids, self.source)

    def with_features(self, X: np.ndarray) -> "RankingData":
        """The same queries and grades with a new feature matrix (D x F')."""
        return RankingData(np.ascontiguousarray(X, dtype=np.float64), self.y, self.offsets, self.qids, self.source)

    def normalize_per_query(self, method: str = "minmax") -> "RankingData":
        """Normalise every feature within each query (LETOR's ``QueryLevelNorm``): ``minmax`` to
        [0, 1] or ``zscore``; a feature constant in a query becomes 0."""
        if method not in ("minmax", "zscore"):
            raise ParameterError(f"per-query normalisation must be 'minmax' or 'zscore', got {method!r}")
        qi = self.query_index
        X = self.X
        if method == "minmax":
            lo = np.minimum.reduceat(X, self.offsets[:-1], axis=0)
            hi = np.maximum.reduceat(X, self.offsets[:-1], axis=0)
            span = hi - lo
            scale = np.divide(1.0, span, out=np.zeros_like(span), where=span > 0)
            Xn = (X - lo[qi]) * scale[qi]
        else:
            sizes = self.sizes[:, None]
            mean = np.add.reduceat(X, self.offsets[:-1], axis=0) / sizes
            var = np.add.reduceat(X * X, self.offsets[:-1], axis=0) / sizes - mean ** 2
            sd = np.sqrt(np.maximum(var, 0.0))
            scale = np.divide(1.0, sd, out=np.zeros_like(sd), where=sd > 1e-12)
            Xn = (X - mean[qi]) * scale[qi]
        return self.with_features(Xn)


def standardize(train: RankingData, *others: RankingData) -> tuple[RankingData, ...]:
    """Global z-score of every feature, fitted on ``train`` and applied to ``(train, *others)``;
    features constant on ``train`` are centred and left unscaled."""
    mean = train.X.mean(axis=0)
    sd = train.X.std(axis=0)
    scale = np.divide(1.0, sd, out=np.ones_like(sd), where=sd > 1e-12)
    return tuple(d.with_features((d.X - mean) * scale) for d in (train, *others))


def _parse_grade(tok: str, path, lineno: int) -> int:
    try:
        v = float(tok)
    except ValueError:
        raise InputError(path, lineno, f"grade {tok!r} is not a number") from None
    if not math.isfinite(v) or v != int(v) or v < 0:
        raise InputError(path, lineno, f"grade {tok!r} is not a non-negative integer")
    return int(v)


def read_letor(path, *, query_file=None, n_features: int | None = None,
               zero_based: bool = False) -> RankingData:
    """Read a LETOR / SVMlight ranking file, or LibSVM rows with a LightGBM ``.query`` file.

    Parameters
    ----------
    path : str or Path
        The data file. Each non-empty line is ``grade [qid:Q] f:v f:v ... [# comment]``;
        a token without ``:`` after the grade is a dense value at the next column. Lines
        starting with ``#`` are comments.
    query_file : str or Path, optional
        Group sizes, one per line (LightGBM). Default: ``<path>.query`` when the lines carry
        no ``qid`` and that file exists.
    n_features : int, optional
        Number of feature columns; default the largest index seen. Must be at least that.
    zero_based : bool, default False
        Feature indices start at 0 (LibSVM variant) instead of 1 (SVMlight / LETOR).

    Returns
    -------
    RankingData

    Raises
    ------
    InputError
        Malformed lines, a ``qid`` that reappears after another query, mixed lines with and
        without ``qid``, an empty file, or group sizes that do not add up to the rows.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, "file not found")
    grades: list[int] = []
    linenos: list[int] = []
    qid_of_row: list[str | None] = []
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    base = 0 if zero_based else 1
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, raw in enumerate(fh, start=1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            toks = line.split()
            r = len(grades)
            grades.append(_parse_grade(toks[0], path, lineno))
            linenos.append(lineno)
            qid = None
            seen: set[int] = set()
            dense_col = 0
            for tok in toks[1:]:
                if tok.startswith("qid:"):
                    if qid is not None or seen:
                        raise InputError(path, lineno, "qid must come once, right after the grade")
                    qid = tok[4:]
                    if not qid:
                        raise InputError(path, lineno, "empty qid")
                    continue
                if ":" in tok:
                    k, _, v = tok.partition(":")
                    try:
                        c = int(k) - base
                        x = float(v)
                    except ValueError:
                        raise InputError(path, lineno, f"bad feature token {tok!r}, expected index:value") from None
                    if c < 0:
                        raise InputError(path, lineno, f"feature index {k} below {base}")
                else:
                    c = dense_col
                    try:
                        x = float(tok)
                    except ValueError:
                        raise InputError(path, lineno, f"bad feature value {tok!r}") from None
                if not math.isfinite(x):
                    raise InputError(path, lineno, f"feature {c + base} is {x}, expected a finite number")
                if c in seen:
                    raise InputError(path, lineno, f"feature {c + base} given twice")
                seen.add(c)
                dense_col = c + 1
                if x != 0.0:
                    rows.append(r)
                    cols.append(c)
                    vals.append(x)
            qid_of_row.append(qid)
    D = len(grades)
    if D == 0:
        raise InputError(path, None, "no data lines")
    has_qid = [q is not None for q in qid_of_row]
    if any(has_qid) and not all(has_qid):
        raise InputError(path, None, "some lines have qid: and some do not")
    F = (max(cols) + 1) if cols else 0
    if n_features is not None:
        if n_features < F:
            raise InputError(path, None, f"feature index {F - 1 + base} exceeds n_features={n_features}")
        F = n_features
    X = np.zeros((D, F))
    X[np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)] = vals
    y = np.asarray(grades, dtype=np.int64)

    if all(has_qid):
        q = np.asarray(qid_of_row, dtype=object)
        starts = np.concatenate([[0], np.flatnonzero(q[1:] != q[:-1]) + 1])
        qids = q[starts]
        first: set = set()
        for i, qq in enumerate(qids):
            if qq in first:
                raise InputError(path, linenos[starts[i]],
                                 f"qid {qq} reappears after another query; queries must be contiguous")
            first.add(qq)
        offsets = np.concatenate([starts, [D]]).astype(np.int64)
    else:
        qf = Path(query_file) if query_file is not None else Path(str(path) + ".query")
        if not qf.exists():
            raise InputError(path, None, f"lines have no qid: and there is no group file {qf}")
        sizes = []
        with open(qf, encoding="utf-8") as fh:
            for lineno, raw in enumerate(fh, start=1):
                s = raw.strip()
                if not s:
                    continue
                try:
                    n = int(s)
                except ValueError:
                    raise InputError(qf, lineno, f"group size {s!r} is not an integer") from None
                if n <= 0:
                    raise InputError(qf, lineno, f"group size {n} must be positive")
                sizes.append(n)
        if sum(sizes) != D:
            raise InputError(qf, None, f"group sizes add up to {sum(sizes)} but {path.name} has {D} rows")
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        qids = np.asarray([str(i) for i in range(len(sizes))], dtype=object)
    return RankingData(X, y, offsets, qids, str(path))


def split_queries(data: RankingData, fractions, *, seed: int = 0) -> tuple[RankingData, ...]:
    """Random split of the queries into parts of the given fractions.

    Parameters
    ----------
    fractions : sequence of float
        Positive, summing to at most 1, e.g. ``(0.6, 0.2, 0.2)``; when they sum to 1 the last
        part gets the rounding remainder.
    seed : int
        Seed of the query permutation.
    """
    fr = np.asarray(fractions, dtype=float)
    if np.any(fr <= 0) or fr.sum() > 1 + 1e-9:
        raise ParameterError(f"fractions must be positive and sum to at most 1, got {list(fractions)}")
    perm = np.random.default_rng(seed).permutation(data.n_queries)
    bounds = np.round(np.cumsum(fr) * data.n_queries).astype(int)
    if abs(fr.sum() - 1) < 1e-9:
        bounds[-1] = data.n_queries
    starts = np.concatenate([[0], bounds[:-1]])
    if np.any(bounds - starts <= 0):
        raise ParameterError(f"a split of {data.n_queries} queries by {list(fractions)} leaves a part empty")
    return tuple(data.subset(np.sort(perm[a:b])) for a, b in zip(starts, bounds))


def kfold(data: RankingData, k: int = 5, *, seed: int = 0) -> list[tuple[RankingData, RankingData]]:
    """``k`` (train, test) folds over queries; every query is in exactly one test fold."""
    if not 2 <= k <= data.n_queries:
        raise ParameterError(f"k must be in 2..{data.n_queries}, got {k}")
    perm = np.random.default_rng(seed).permutation(data.n_queries)
    parts = np.array_split(perm, k)
    return [(data.subset(np.sort(np.concatenate(parts[:i] + parts[i + 1:]))), data.subset(np.sort(parts[i])))
            for i in range(k)]


def default_data_root() -> Path:
    """``../shared/data/ltr`` relative to the repository root (overridable by ``MAXENT_DATA``)."""
    env = os.environ.get("MAXENT_DATA")
    if env:
        return Path(env) / "ltr"
    return Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ltr"
