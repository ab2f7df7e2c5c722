"""Columnar ranked lists, and THE function that orders documents as trec_eval does.

Every metric, expectation and solver works on :class:`RankedLists`: a batch of B ranked
lists (one per (run, topic) pair) stored as a B x N array of grades plus side information
from the qrels. Ranking follows trec_eval's ``form_res_rels.c``: the rank column is
ignored, documents are sorted by score descending, ties broken by docno descending
(byte-wise, as ``strcmp``), then cut at depth ``-M`` (default 1000).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from maxent.errors import InputError, ParameterError, TopicMismatchError, TopicWarning
from maxent.trec import Qrels, Run

__all__ = ["RankedLists", "rank_runs", "UNJUDGED"]

UNJUDGED = -1
"""Grade stored for unjudged documents (and for padding beyond a list's length)."""


@dataclass(frozen=True, eq=False)
class RankedLists:
    """A batch of B ranked lists with their qrels side information.

    Attributes
    ----------
    grades : int array (B, N)
        Grade of the document at each rank (rank n is column n-1); ``UNJUDGED`` (-1) for
        unjudged documents, for qrels grades below 0, and for padding beyond ``lengths``.
    lengths : int array (B,)
        Number of retrieved documents of each list (trec_eval's ``num_ret``).
    rel_counts : int array (B, L)
        R_z: number of judged documents of grade z = 0..L-1 in the qrels of each topic.
    runs, topics : object arrays (B,)
        Run name and topic id of each list.
    """

    grades: np.ndarray
    lengths: np.ndarray
    rel_counts: np.ndarray
    runs: np.ndarray
    topics: np.ndarray

    @classmethod
    def from_grades(cls, grades, rel_counts, lengths=None, runs=None, topics=None) -> "RankedLists":
        """Build from arrays already in ranked order (B x N grades, -1 = unjudged/padding).

        ``lengths`` defaults to the position after the last non-padding entry of each row.
        """
        grades = np.atleast_2d(np.asarray(grades)).astype(np.int16, copy=False)
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

    # --- shape and side information -------------------------------------------------
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
        """K_z: number of retrieved documents of each grade z = 0..L-1 (B, L); unjudged count as 0."""
        g = np.where(self.grades >= 0, self.grades, 0)
        mask = np.arange(self.depth)[None, :] < self.lengths[:, None]
        out = np.zeros((len(self), self.levels), dtype=np.int64)
        rows = np.broadcast_to(np.arange(len(self))[:, None], g.shape)
        np.add.at(out, (rows[mask], g[mask]), 1)
        return out

    def take(self, index) -> "RankedLists":
        """A sub-batch (boolean mask or integer index over B)."""
        return RankedLists(
            self.grades[index], self.lengths[index], self.rel_counts[index],
            self.runs[index], self.topics[index],
        )

    def truncate(self, depth: int) -> "RankedLists":
        """The same lists cut at ``depth`` (trec_eval -M)."""
        if depth >= self.depth:
            return self
        return RankedLists(
            self.grades[:, :depth], np.minimum(self.lengths, depth), self.rel_counts,
            self.runs, self.topics,
        )


def _topic_blocks(qid_sorted: np.ndarray) -> np.ndarray:
    """Start offsets of equal-qid blocks of a sorted array, plus the end offset."""
    change = np.flatnonzero(qid_sorted[1:] != qid_sorted[:-1]) + 1
    return np.concatenate(([0], change, [len(qid_sorted)]))


def _order_as_trec_eval(run: Run) -> tuple[np.ndarray, np.ndarray]:
    """Permutation ranking ``run`` as trec_eval: by qid, score desc, docno desc.

    Sort ascending on (qid, score, docno) and reverse each qid block: reversing an
    ascending (score, docno) order gives score descending with ties by docno descending.
    """
    order = np.lexsort((run.docno, run.score, run.qid))
    bounds = _topic_blocks(run.qid[order])
    sizes = np.diff(bounds)
    start = np.repeat(bounds[:-1], sizes)
    end = np.repeat(bounds[1:], sizes)
    pos = np.arange(len(order))
    return order[start + end - 1 - pos], bounds


def rank_runs(
    runs: Sequence[Run],
    qrels: Qrels,
    *,
    depth: int = 1000,
    complete: bool = False,
    levels: int | None = None,
) -> RankedLists:
    """Rank every topic of every run as trec_eval and look up grades in the qrels.

    Parameters
    ----------
    runs : runs to rank (each contributes one list per evaluated topic)
    qrels : the judgements
    depth : trec_eval's ``-M``: keep at most this many documents per topic
    complete : trec_eval's ``-c``: every qrels topic is evaluated for every run; topics a run
        did not retrieve for become empty lists (all metrics 0). Default: only topics in both
        run and qrels, with a :class:`TopicWarning` naming qrels topics the run lacks.
    levels : number of grade levels L (default: max qrels grade + 1)

    Returns
    -------
    RankedLists with lists ordered by run (as given), then topic (qrels order).
    Run topics absent from the qrels are ignored with a TopicWarning.
    """
    if depth < 1:
        raise ParameterError(f"depth must be >= 1, got {depth}")
    L = qrels.max_grade + 1 if levels is None else int(levels)
    topic_index = {t.encode(): i for i, t in enumerate(qrels.topics)}
    counts_by_topic = np.stack([qrels.level_counts(t, L) for t in qrels.topics])
    grades_blocks, len_blocks, tid_blocks, run_ids = [], [], [], []
    overlap = False
    for r, run in enumerate(runs):
        perm, bounds = _order_as_trec_eval(run)
        qid_sorted = run.qid[perm]
        docno_sorted = run.docno[perm]
        block_qids = qid_sorted[bounds[:-1]]
        present = []
        unknown = []
        for b, q in enumerate(block_qids):
            ti = topic_index.get(bytes(q))
            if ti is None:
                unknown.append(q.decode("utf-8", "replace"))
            else:
                present.append((ti, b))
        if unknown:
            warnings.warn(
                f"run {run.name}: {len(unknown)} topic(s) not in the qrels, ignored: "
                + ", ".join(unknown[:10]) + (" ..." if len(unknown) > 10 else ""),
                TopicWarning, stacklevel=2,
            )
        overlap |= bool(present)
        in_run = {ti for ti, _ in present}
        missing = [qrels.topics[i] for i in range(len(qrels.topics)) if i not in in_run]
        if missing and not complete:
            warnings.warn(
                f"run {run.name}: {len(missing)} qrels topic(s) have no results and are not "
                "averaged (use complete=True / -c to score them 0): "
                + ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else ""),
                TopicWarning, stacklevel=2,
            )
        rows = []
        for ti, b in present:
            a, e = bounds[b], min(bounds[b + 1], bounds[b] + depth)
            topic = qrels.topics[ti]
            jd = qrels.docnos[topic]
            docs = docno_sorted[a:e]
            pos = np.searchsorted(jd, docs)
            pos_c = np.minimum(pos, len(jd) - 1)
            hit = jd[pos_c] == docs
            g = np.where(hit, qrels.grades[topic][pos_c], UNJUDGED)
            rows.append((ti, np.where(g < 0, UNJUDGED, g)))
        if complete:
            have = {ti for ti, _ in rows}
            rows += [(ti, np.empty(0, dtype=np.int64)) for ti in range(len(qrels.topics)) if ti not in have]
        rows.sort(key=lambda x: x[0])
        for ti, g in rows:
            grades_blocks.append(g)
            len_blocks.append(len(g))
            tid_blocks.append(ti)
            run_ids.append(r)
    if not overlap:
        names = ", ".join(run.name for run in runs[:3])
        raise TopicMismatchError(
            qrels.path, None, f"no topic in common with run(s) {names}"
            + (" ..." if len(runs) > 3 else "")
        )
    lengths = np.asarray(len_blocks, dtype=np.int64)
    B, N = len(lengths), max(1, int(lengths.max(initial=0)))
    grades = np.full((B, N), UNJUDGED, dtype=np.int16)
    if lengths.sum():
        flat = np.concatenate(grades_blocks)
        rows = np.repeat(np.arange(B), lengths)
        cols = np.arange(len(flat)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        grades[rows, cols] = flat
    tids = np.asarray(tid_blocks)
    return RankedLists(
        grades=grades,
        lengths=lengths,
        rel_counts=counts_by_topic[tids],
        runs=np.asarray([runs[i].name for i in run_ids], dtype=object),
        topics=np.asarray([qrels.topics[i] for i in tids], dtype=object),
    )
