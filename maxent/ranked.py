"""Columnar ranked lists, and the function that orders documents as trec_eval does.

:class:`RankedLists` is a batch of B ranked lists (one per (run, topic)) as a B x N array of
grades plus the qrels counts. Ranking follows trec_eval's ``form_res_rels.c``: score
descending, ties by docno descending (strcmp), cut at depth ``-M`` (default: no cut); scores
compared in single precision by default. Negative qrels grades are stored as ``UNJUDGED``;
``pooled_unjudged`` marks them (trec_eval's RELVALUE_UNJUDGED: in the pool, not judged).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from maxent.errors import ParameterError, TopicMismatchError, TopicWarning
from maxent.inputs import as_qrels, as_runs
from maxent import _ctrec
from maxent.trec import MAX_GRADE, Qrels, Run, topic_codes

__all__ = ["RankedLists", "rank_runs", "rank_setup", "check_depth", "rank_one", "assemble", "RankSetup",
           "UNJUDGED"]

UNJUDGED = -1
"""Grade stored for unjudged documents (and for padding beyond a list's length)."""
POOLED_UNJUDGED = -2
# rank_one's grade of a document with a negative qrels grade (assemble flags it, then stores
# UNJUDGED); the parts of rank_one are internal, a RankedLists never holds -2


@dataclass(frozen=True, eq=False)
class RankedLists:
    """A batch of B ranked lists with their qrels side information.

    Attributes
    ----------
    grades : int array (B, N)
        Grade at each rank (rank n is column n-1); ``UNJUDGED`` (-1) for unjudged documents,
        negative qrels grades and padding beyond ``lengths``.
    lengths : int array (B,)
        Documents retrieved per list (trec_eval's ``num_ret``).
    rel_counts : int array (B, L)
        R_z: judged documents of grade z = 0..L-1 of each list's topic.
    runs, topics : object arrays (B,)
    pooled_unjudged : bool array (B, N) or None
        Documents in the qrels with a negative grade (stored as ``UNJUDGED`` in ``grades``),
        which trec_eval counts as pooled but unjudged (infAP); None when there are none.
    """

    grades: np.ndarray
    lengths: np.ndarray
    rel_counts: np.ndarray
    runs: np.ndarray
    topics: np.ndarray
    pooled_unjudged: np.ndarray | None = None

    @classmethod
    def from_grades(cls, grades, rel_counts, lengths=None, runs=None, topics=None) -> "RankedLists":
        """Build from grades in ranked order (B x N, -1 = unjudged/padding); ``lengths``
        defaults to the position after each row's last entry >= 0."""
        grades = np.atleast_2d(np.asarray(grades))
        if grades.size and grades.max() > MAX_GRADE:  # int16 storage must never wrap
            raise ParameterError(f"grade {grades.max()} is above the largest supported, {MAX_GRADE}")
        grades = np.maximum(grades, UNJUDGED).astype(np.int16, copy=False)
        rel_counts = np.atleast_2d(np.asarray(rel_counts, dtype=np.int64))
        B, N = grades.shape
        if rel_counts.shape[0] != B:
            raise ParameterError(f"rel_counts has {rel_counts.shape[0]} rows, grades has {B}")
        if lengths is None:
            filled = grades >= 0
            last = N - np.argmax(filled[:, ::-1], axis=1)
            lengths = np.where(filled.any(axis=1), last, 0)
        lengths = np.asarray(lengths, dtype=np.int64)
        if lengths.shape != (B,) or (lengths < 0).any() or (lengths > N).any():
            raise ParameterError("lengths must be a (B,) array of values in 0..N")
        if grades.size and grades.max(initial=-1) >= rel_counts.shape[1]:
            need = int(grades.max()) + 1
            rel_counts = np.pad(rel_counts, ((0, 0), (0, need - rel_counts.shape[1])))
        pad = np.arange(N)[None, :] >= lengths[:, None]
        if pad.any():
            grades = np.where(pad, UNJUDGED, grades).astype(np.int16)
        runs = np.asarray([""] * B if runs is None else runs, dtype=object)
        topics = np.asarray([str(i) for i in range(B)] if topics is None else topics, dtype=object)
        return cls(grades, lengths, rel_counts, runs, topics)

    def __len__(self) -> int:
        return self.grades.shape[0]

    @property
    def depth(self) -> int:
        """N, the number of rank columns."""
        return self.grades.shape[1]

    @property
    def levels(self) -> int:
        """L, the number of grade levels 0..L-1 known to the qrels."""
        return self.rel_counts.shape[1]

    def n_rel(self, rel: int = 1) -> np.ndarray:
        """R = R_{>=rel}: judged documents with grade >= rel, per list (B,)."""
        return self.rel_counts[:, rel:].sum(axis=1)

    def relevant(self, rel: int = 1) -> np.ndarray:
        """Binary relevance rel_n = [grade_n >= rel] as float64 (B, N)."""
        return (self.grades >= rel).astype(np.float64)

    def retrieved_counts(self) -> np.ndarray:
        """K_z: retrieved documents of each grade z = 0..L-1 (B, L); unjudged count as 0."""
        # one pass per level is faster than a bincount for a few levels
        B, L = len(self), self.levels
        g = np.where(np.arange(self.depth)[None, :] < self.lengths[:, None], self.grades, -1)
        if L <= 16:
            out = np.empty((B, L), dtype=np.int64)
            for z in range(1, L):
                out[:, z] = np.count_nonzero(g == z, axis=1)
        else:
            cell = (np.arange(B)[:, None] * L + g)[g >= 1]
            out = np.bincount(cell, minlength=B * L).reshape(B, L).astype(np.int64, copy=False)
        out[:, 0] = self.lengths - out[:, 1:].sum(axis=1)
        return out

    def take(self, index) -> "RankedLists":
        """A sub-batch (boolean mask or integer index over B)."""
        pu = None if self.pooled_unjudged is None else self.pooled_unjudged[index]
        return RankedLists(self.grades[index], self.lengths[index], self.rel_counts[index],
                           self.runs[index], self.topics[index], pu)

    def truncate(self, depth: int) -> "RankedLists":
        """The same lists cut at ``depth`` (trec_eval -M; None: no cut)."""
        if depth is None or depth >= self.depth:
            return self
        pu = None if self.pooled_unjudged is None else self.pooled_unjudged[:, :depth]
        return RankedLists(self.grades[:, :depth], np.minimum(self.lengths, depth), self.rel_counts,
                           self.runs, self.topics, pu)


def _trec_order(score: np.ndarray, codes: np.ndarray, docno: np.ndarray) -> np.ndarray:
    """Permutation ordering documents as trec_eval: by topic code, score descending, ties
    by docno descending (strcmp), independent of the input order. Scores are compared in
    their own type (float32: as C floats)."""
    n = len(score)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    codes = np.asarray(codes)
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    items, bounds, _, first = _groups(starts, np.diff(np.append(starts, n)), codes[starts])
    items = _sort_groups(score, False, docno, items, bounds, first)
    return _block_items(first, bounds) if items is None else items


def _groups(starts: np.ndarray, sizes: np.ndarray, block_code: np.ndarray):
    """``(items, bounds, group_codes, first)``: the rows of blocks (``starts[k]``, ``sizes[k]``
    rows; in line order) grouped by code ascending, group g ``items[bounds[g]:bounds[g + 1]]``
    in line order. Blocks of distinct codes (each topic's lines together, the usual file) are
    groups as they are: items is None and group g the rows from ``first[g]`` on; a code in
    several blocks needs a stable sort of the rows by code (first is None)."""
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    sizes = np.ascontiguousarray(sizes, dtype=np.int64)
    by = np.argsort(block_code, kind="stable")
    sorted_codes = block_code[by]
    if (sorted_codes[1:] != sorted_codes[:-1]).all():
        return None, np.concatenate(([0], np.cumsum(sizes[by]))).astype(np.int64), sorted_codes, starts[by]
    rows = np.frombuffer(_ctrec.block_items(starts, sizes), dtype=np.int64)
    codes = np.repeat(block_code, sizes)
    small = codes.astype(np.int16) if codes.max() < 2**15 and codes.min() >= 0 else codes  # radix sort
    order = np.argsort(small, kind="stable")
    items, c = rows[order], codes[order]
    bounds = np.flatnonzero(np.concatenate(([True], c[1:] != c[:-1], [True]))).astype(np.int64)
    return items, bounds, c[bounds[:-1]], None


def _block_items(first: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """The rows of groups laid out as blocks (``_groups``' items None), as one array."""
    return np.frombuffer(_ctrec.block_items(first, np.diff(bounds)), dtype=np.int64)


def _sort_groups(score: np.ndarray, single: bool, docno: np.ndarray, items, bounds: np.ndarray,
                 first) -> np.ndarray | None:
    """Each group put in trec_eval's order: ``items`` sorted in place, or for groups laid out
    as blocks (items None) the rows as a new items array when a block is out of order (None
    when all are in order: search engines write each topic's lines by score)."""
    if score.dtype not in (np.float32, np.float64):
        score = score.astype(np.float64)
    score = np.ascontiguousarray(score)
    docno = np.ascontiguousarray(docno if docno.dtype.itemsize else docno.astype("S1"))
    W = docno.dtype.itemsize
    if items is None:
        if not _ctrec.trec_sort(score, single, docno, W, None, bounds, first):
            return None
        items = _block_items(first, bounds)
    _ctrec.trec_sort(score, single, docno, W, items, bounds)
    return items


def _pooled(grade: np.ndarray) -> np.ndarray:
    """Qrels grades of found documents, negative ones as ``POOLED_UNJUDGED``."""
    return np.where(grade < 0, POOLED_UNJUDGED, grade)


def _lookup_grades(qrels: Qrels, run: Run, items, bounds: np.ndarray, group_codes: np.ndarray,
                   first=None) -> np.ndarray:
    """Grade (int16) of the run's rows ``items`` (group g of topic ``group_codes[g]``; items
    None: group g the rows from ``first[g]`` on) in the qrels; ``UNJUDGED`` when not in the
    qrels, ``POOLED_UNJUDGED`` (-2) when its grade is negative. Hash candidates are confirmed
    on topic and docno; a collision falls back to exact search."""
    index, _, q_docno, q_grade = qrels.lookup
    docno = np.ascontiguousarray(run.docno if run.docno.dtype.itemsize else run.docno.astype("S1"))
    if index is not None and len(q_docno):
        qd = np.ascontiguousarray(q_docno)
        out, exact = _ctrec.grade_lookup(
            docno, docno.dtype.itemsize, items, None if items is not None else first, bounds,
            np.ascontiguousarray(group_codes, dtype=np.int64), index.keys, index._table, index._bits,
            np.ascontiguousarray(qrels.flat[1], dtype=np.int64), qd, max(qd.dtype.itemsize, 1),
            np.ascontiguousarray(q_grade, dtype=np.int64))
        if exact:
            return np.frombuffer(out, dtype=np.int16)
    if items is None:
        items = _block_items(first, bounds)
    out = np.full(len(items), UNJUDGED, dtype=np.int16)
    for g, ti in enumerate(group_codes):  # exact path: per-topic binary search
        sel = np.arange(bounds[g], bounds[g + 1])
        jd = qrels.docnos[qrels.topics[ti]]
        if len(jd) == 0:
            continue
        d = docno[items[sel]]
        pos = np.minimum(np.searchsorted(jd, d), len(jd) - 1)
        hit = jd[pos] == d
        out[sel[hit]] = _pooled(qrels.grades[qrels.topics[ti]][pos[hit]])
    return out


def rank_runs(runs: Sequence[Run], qrels: Qrels, *, depth: int | None = None, complete: bool = False,
              levels: int | None = None, precision: str = "single",
              score_precision: str | None = None) -> RankedLists:
    """Rank every topic of every run as trec_eval and look up grades in the qrels.

    Parameters
    ----------
    runs, qrels : anything :func:`maxent.inputs.as_runs` / :func:`maxent.inputs.as_qrels` reads
    depth : trec_eval's ``-M``: documents kept per topic (default None: all)
    complete : trec_eval's ``-c``: every qrels topic for every run, missing ones as empty
        lists; by default only shared topics, with a :class:`TopicWarning` for the others
    levels : number of grade levels L (default: max qrels grade + 1)
    precision : ``single`` (default: scores as C floats, as trec_eval 9.x and pytrec_eval)
        or ``double`` (as trec_eval 10.0); ``score_precision``, the command lines' name for
        it, wins when given.

    Returns
    -------
    RankedLists ordered by run (as given), then topic (qrels order).

    Raises
    ------
    TopicMismatchError
        when no run shares a topic with the qrels.
    """
    if not isinstance(qrels, Qrels) or not (isinstance(runs, (list, tuple))
                                            and all(isinstance(r, Run) for r in runs)):
        qrels, runs = as_qrels(qrels), as_runs(runs)
    setup = rank_setup(qrels, depth=depth, complete=complete, levels=levels,
                       precision=precision if score_precision is None else score_precision)
    parts = []
    for run in runs:
        part, messages = rank_one(run, qrels, setup)
        for message in messages:
            warnings.warn(message, TopicWarning, stacklevel=2)
        parts.append(part)
    return assemble(parts, [run.name for run in runs], qrels, setup)


@dataclass(frozen=True)
class RankSetup:
    """What ranking every run against one qrels shares (:func:`rank_setup`)."""

    depth: int | None
    complete: bool
    precision: str
    levels: int
    topic_index: object
    counts_by_topic: np.ndarray


def check_depth(depth, name: str = "depth") -> int | None:
    """``depth`` (trec_eval ``-M``) checked: None or an integer >= 1, else ParameterError.
    A depth beyond any list (2^62 or more, e.g. ``-M 99999999999999999999``) is no cut
    (None), as trec_eval reads it."""
    if depth is None:
        return None
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)):
        raise ParameterError(f"{name} must be an integer >= 1 or None (no cut), got {depth!r}")
    if depth < 1:
        raise ParameterError(f"{name} must be >= 1 (or None: no cut), got {depth}")
    return None if int(depth) >= 2**62 else int(depth)


def rank_setup(qrels: Qrels, *, depth: int | None = None, complete: bool = False,
               levels: int | None = None, precision: str = "single") -> RankSetup:
    """Check :func:`rank_runs`' options and compute what every run's ranking shares."""
    depth = check_depth(depth)
    if precision not in ("single", "double"):
        raise ParameterError(f"precision must be 'single' or 'double', got {precision!r}")
    if not isinstance(qrels, Qrels):
        raise ParameterError(f"qrels must be a Qrels (maxent.trec.read_qrels), got {type(qrels).__name__}")
    L = qrels.max_grade + 1 if levels is None else int(levels)
    return RankSetup(depth, complete, precision, L, qrels.topic_index, qrels.counts(L))


def rank_one(run: Run, qrels: Qrels, setup: RankSetup) -> tuple[tuple, list[str]]:
    """One run of :func:`rank_runs`: ``((name, topic codes of its lists, lengths, kept
    grades in list order (-2 for negative qrels grades), whether it shares a topic with the
    qrels), [warning messages])``."""
    depth, complete, T = setup.depth, setup.complete, len(qrels.topics)
    messages = []
    n, blocks = len(run.score), run.blocks
    block_code = topic_codes(run.qid, setup.topic_index, starts=blocks, per_block=True)
    known = block_code >= 0
    if not known.all():
        unknown = run.qid_names(np.unique(run.qid[blocks[~known]]))
        messages.append(
            f"run {run.name}: {len(unknown)} topic(s) not in the qrels, ignored: "
            + ", ".join(unknown[:10]) + (" ..." if len(unknown) > 10 else ""))
    if n and known.any():
        sizes = np.diff(np.append(blocks, n))
        items, bounds, present, first = _groups(blocks[known], sizes[known], block_code[known])
        items = _sort_groups(run.score, setup.precision == "single", run.docno, items, bounds, first)
    else:
        items, bounds, present, first = np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int64), None
    sizes = np.diff(bounds)
    if depth is not None and (sizes > depth).any():
        if items is None:
            items = _block_items(first, bounds)
        rank = np.arange(len(items)) - np.repeat(bounds[:-1], sizes)
        items = items[rank < depth]
        sizes = np.minimum(sizes, depth)
        bounds = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    lengths = sizes
    overlap = len(present) > 0
    missing = T - len(present)
    if missing and not complete:
        absent = np.ones(T, dtype=bool)
        absent[present] = False
        names = [qrels.topics[i] for i in np.flatnonzero(absent)[:10]]
        messages.append(
            f"run {run.name}: {missing} qrels topic(s) have no results and are not "
            "averaged (use complete=True / -c to score them 0): "
            + ", ".join(names) + (" ..." if missing > 10 else ""))
    grades = _lookup_grades(qrels, run, items, bounds, present, first)
    if complete:
        full = np.zeros(T, dtype=np.int64)
        full[present] = lengths
        present, lengths = np.arange(T), full
    return (run.name, present, lengths, grades, overlap), messages


def assemble(parts: Sequence[tuple], names: Sequence[str], qrels: Qrels,
             setup: RankSetup) -> RankedLists:
    """The :class:`RankedLists` of :func:`rank_one`'s parts; TopicMismatchError when empty."""
    if not any(p[4] for p in parts):
        raise TopicMismatchError(qrels.path, None, f"no topic in common with run(s) {', '.join(names[:3])}"
                                 + (" ..." if len(names) > 3 else ""))
    tids = np.concatenate([p[1] for p in parts]).astype(np.int64)
    lengths = np.concatenate([p[2] for p in parts]).astype(np.int64)
    flat = parts[0][3] if len(parts) == 1 else np.concatenate([p[3] for p in parts])
    flat = np.asarray(flat).astype(np.int16, copy=False)
    B, N = len(lengths), max(1, int(lengths.max(initial=0)))
    pooled = None
    if len(flat) == B * N:      # every list of the same length (a deep run): the lists as they are
        grades = flat.reshape(B, N)
    else:
        grades = np.full((B, N), UNJUDGED, dtype=np.int16)
    if len(flat):  # row-major order of the mask's True entries is the order of ``flat``
        if len(flat) < B * N:
            grades[np.arange(N)[None, :] < lengths[:, None]] = flat
        if flat.min() < UNJUDGED:   # negative qrels grades: flagged, then stored as UNJUDGED
            pooled = grades == POOLED_UNJUDGED
            grades[pooled] = UNJUDGED
    run_names = np.repeat(np.asarray([p[0] for p in parts], dtype=object), [len(p[1]) for p in parts])
    topic_names = np.asarray(qrels.topics, dtype=object)
    return RankedLists(grades, lengths, setup.counts_by_topic[tids], run_names,
                       topic_names[tids] if B else np.zeros(0, dtype=object), pooled)
