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
from maxent.trec import MAX_GRADE, Qrels, Run, topic_codes, topic_keys

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
    by docno descending (strcmp), independent of the input order."""
    n = len(score)
    same = codes[1:] == codes[:-1]
    first = np.flatnonzero(np.concatenate(([n > 0], ~same)))     # first line of each block
    block_code = codes[first]
    by_topic = np.argsort(block_code, kind="stable")
    sorted_codes = block_code[by_topic]
    # not np.unique: numpy >= 2.3's imports numpy.ma, which the command's start-up avoids
    if ((sorted_codes[1:] != sorted_codes[:-1]).all()
            and not (same & (score[1:] > score[:-1])).any()):
        # the usual file, one block per topic sorted by score: reorder the blocks, O(n)
        sizes = np.diff(np.append(first, n))
        size_b = sizes[by_topic]
        order = np.arange(n) + np.repeat(first[by_topic] - (np.cumsum(size_b) - size_b), size_b)
    else:
        order = np.argsort(-score)
        small = codes.astype(np.int16) if n and codes.max() < 2**15 else codes  # radix sort
        order = order[np.argsort(small[order], kind="stable")]
    s, c = score[order], codes[order]
    tie = (s[1:] == s[:-1]) & (c[1:] == c[:-1])
    if tie.any():
        member = np.zeros(len(order), dtype=bool)
        member[1:] |= tie
        member[:-1] |= tie
        pos = np.flatnonzero(member)                        # positions inside tie groups
        new_group = np.ones(len(pos), dtype=bool)
        new_group[1:] = ~tie[pos[1:] - 1]
        gid = np.cumsum(new_group)
        items = order[pos]
        sub = np.lexsort((docno[items], gid))               # docno ascending within group
        g_start = np.flatnonzero(new_group)
        g_end = np.append(g_start[1:], len(pos))
        k = np.arange(len(pos))
        target = g_start[gid - 1] + g_end[gid - 1] - 1 - k  # reverse: docno descending
        order[pos[target]] = items[sub]
    return order


def _pooled(grade: np.ndarray) -> np.ndarray:
    """Qrels grades of found documents, negative ones as ``POOLED_UNJUDGED``."""
    return np.where(grade < 0, POOLED_UNJUDGED, grade)


def _lookup_grades(qrels: Qrels, codes: np.ndarray, docno: np.ndarray, docno_hash: np.ndarray) -> np.ndarray:
    """Grade of each (topic code, docno) in the qrels; ``UNJUDGED`` when not in the qrels,
    ``POOLED_UNJUDGED`` (-2) when its grade is negative.
    Hash candidates are confirmed on topic and docno; a collision falls back to exact search."""
    index, q_topic, q_docno, q_grade = qrels.lookup
    out = np.full(len(codes), UNJUDGED, dtype=np.int64)
    if index is not None:
        pos = index.get_indexer(topic_keys(docno_hash, codes))
        hit = np.flatnonzero(pos >= 0)
        p = pos[hit]
        if (q_docno[p] == docno[hit]).all() and (q_topic[p] == codes[hit]).all():
            out[hit] = _pooled(q_grade[p])
            return out
    for ti in np.unique(codes):  # exact path: per-topic binary search
        sel = np.flatnonzero(codes == ti)
        jd = qrels.docnos[qrels.topics[ti]]
        if len(jd) == 0:
            continue
        pos = np.minimum(np.searchsorted(jd, docno[sel]), len(jd) - 1)
        hit = jd[pos] == docno[sel]
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
    codes = topic_codes(run.qid, setup.topic_index)
    known = codes >= 0
    if not known.all():
        unknown = run.qid_names(np.unique(run.qid[~known]))
        messages.append(
            f"run {run.name}: {len(unknown)} topic(s) not in the qrels, ignored: "
            + ", ".join(unknown[:10]) + (" ..." if len(unknown) > 10 else ""))
        keep = np.flatnonzero(known)
        codes, score, docno, dh = codes[keep], run.score[keep], run.docno[keep], run.docno_hash[keep]
    else:
        score, docno, dh = run.score, run.docno, run.docno_hash
    if setup.precision == "single":
        with np.errstate(over="ignore"):  # beyond float32 range: +-inf, as C's float
            score = score.astype(np.float32)
    order = _trec_order(score, codes, docno)
    c_sorted = codes[order]
    bounds = (np.flatnonzero(np.concatenate(([True], c_sorted[1:] != c_sorted[:-1], [True])))
              if len(order) else np.zeros(1, dtype=np.int64))
    present = c_sorted[bounds[:-1]]
    sizes = np.diff(bounds)
    rank = np.arange(len(order)) - np.repeat(bounds[:-1], sizes) if depth is not None else None
    kept = order if depth is None else order[rank < depth]
    lengths = sizes if depth is None else np.minimum(sizes, depth)
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
    grades = _lookup_grades(qrels, codes[kept], docno[kept], dh[kept])
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
    flat = np.concatenate([p[3] for p in parts])
    B, N = len(lengths), max(1, int(lengths.max(initial=0)))
    grades = np.full((B, N), UNJUDGED, dtype=np.int16)
    pooled = None
    if len(flat):  # row-major order of the mask's True entries is the order of ``flat``
        grades[np.arange(N)[None, :] < lengths[:, None]] = flat
        if flat.min() < UNJUDGED:   # negative qrels grades: flagged, then stored as UNJUDGED
            pooled = grades == POOLED_UNJUDGED
            grades[pooled] = UNJUDGED
    run_names = np.repeat(np.asarray([p[0] for p in parts], dtype=object), [len(p[1]) for p in parts])
    topic_names = np.asarray(qrels.topics, dtype=object)
    return RankedLists(grades, lengths, setup.counts_by_topic[tids], run_names,
                       topic_names[tids] if B else np.zeros(0, dtype=object), pooled)
