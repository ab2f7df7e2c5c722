r"""A learning-to-rank set built from TREC runs and qrels, the way LETOR 4.0 built MQ2007-agg
(Qin & Liu 2013).

:func:`learning_set_from_runs` gives one row per judged (topic, document) of the qrels (topics
without a relevant document dropped, negative grades 0), labelled with its grade; for every
run two features, the score min-max normalised over the run's documents for the topic (1 when
all are equal) and the reciprocal rank in trec_eval's order, both 0 when not retrieved.
"""
from __future__ import annotations

import numpy as np

from maxent.errors import InputError
from maxent.letor import RankingData
from maxent.trec import Qrels, Run, hash_strings, topic_codes, topic_keys

__all__ = ["learning_set_from_runs", "feature_names", "run_lists"]


def feature_names(runs: list[Run]) -> list[str]:
    """Names of the 2R features of :func:`learning_set_from_runs`: ``<run>:score``, ``<run>:rr``."""
    return [f"{r.name}:{kind}" for r in runs for kind in ("score", "rr")]


def _run_features(run: Run):
    """Per entry of ``run``: (qid, docno, normalised score, reciprocal rank)."""
    _, qcode = np.unique(run.qid, return_inverse=True)
    _, dcode = np.unique(run.docno, return_inverse=True)
    # trec_eval order: by topic, score descending, docno descending
    order = np.lexsort((-dcode, -run.score, qcode))
    q = qcode[order]
    start = np.r_[0, np.flatnonzero(np.diff(q)) + 1]
    sizes = np.diff(np.r_[start, len(q)])
    rank = np.arange(len(q)) - np.repeat(start, sizes) + 1
    s = run.score[order]
    lo = np.minimum.reduceat(s, start)
    hi = np.maximum.reduceat(s, start)
    span = np.repeat(hi - lo, sizes)
    norm = np.divide(s - np.repeat(lo, sizes), span, out=np.ones_like(s), where=span > 0)
    return run.qid[order], run.docno[order], norm, 1.0 / rank


def learning_set_from_runs(runs: list[Run], qrels: Qrels, *, topics=None) -> RankingData:
    """Rows = judged (topic, document) pairs; features = every run's normalised score and
    reciprocal rank, ordered ``[score(run_1), rr(run_1), ...]`` (:func:`feature_names`).

    Parameters
    ----------
    runs : list of Run
    qrels : Qrels
    topics : iterable of str, optional
        Restrict to these topics (default: every qrels topic with a relevant document).

    Returns
    -------
    RankingData
        Queries in qrels topic order, documents in qrels (docno) order within a topic.
    """
    if not runs:
        raise InputError(None, None, "learning_set_from_runs needs at least one run")
    keep = [t for t in qrels.topics if (topics is None or t in set(topics))
            and np.any(qrels.grades[t] > 0)]
    if not keep:
        raise InputError(qrels.path, None, "no qrels topic with a relevant document"
                         + (" among the topics asked" if topics else ""))
    _, topic, _, grade = qrels.lookup                    # every judgement, qrels topic order
    code = _topic_code(qrels)
    X = np.zeros((len(grade), 2 * len(runs)))
    for j, run in enumerate(runs):
        rq, rd, norm, rr = _run_features(run)
        tc = topic_codes(rq, code)
        ok = tc >= 0
        rd, norm, rr, tc = rd[ok], norm[ok], rr[ok], tc[ok]
        pos, hit = _join(qrels, tc, rd)
        X[pos[hit], 2 * j] = norm[hit]
        X[pos[hit], 2 * j + 1] = rr[hit]
    keep_codes = np.array([code[t.encode()] for t in keep])
    rows = np.flatnonzero(np.isin(topic, keep_codes))    # lookup rows are grouped by topic, in order
    sizes = np.array([len(qrels.docnos[t]) for t in keep], dtype=np.int64)
    offsets = np.r_[0, np.cumsum(sizes)]
    y = np.maximum(grade[rows], 0).astype(np.int64)
    return RankingData(X[rows], y, offsets, np.array(keep, dtype=object),
                       source=f"{len(runs)} runs x {qrels.path}")


def _topic_code(qrels) -> dict:
    return {t.encode(): i for i, t in enumerate(qrels.topics)}


def _join(qrels, tc, rd):
    """Positions in ``qrels.lookup`` of (topic code, docno) pairs, and which were found."""
    index, topic, docno, _ = qrels.lookup
    if index is None:                                    # colliding qrels hashes: exact join
        return _exact_join(topic, docno, tc, rd)
    pos = index.get_indexer(topic_keys(hash_strings(rd), tc))
    hit = pos >= 0
    hit[hit] = docno[pos[hit]] == rd[hit]                # confirm: a hash collision never matches
    return pos, hit


def _exact_join(topic, docno, tc, rd):
    """Positions in the judgements of (topic code, docno) pairs by sorted search on both keys."""
    order = np.lexsort((docno, topic))
    st, sd = topic[order], docno[order]
    lo = np.searchsorted(st, tc, side="left")
    hi = np.searchsorted(st, tc, side="right")
    pos = np.full(len(tc), -1)
    for t in np.unique(tc):                              # per topic, not per document
        m = tc == t
        a, b = lo[m][0], hi[m][0]
        k = a + np.searchsorted(sd[a:b], rd[m])
        k = np.minimum(k, max(b - 1, a))
        good = (k < b) & (sd[np.minimum(k, len(sd) - 1)] == rd[m])
        pos[np.flatnonzero(m)[good]] = order[k[good]]
    return pos, pos >= 0


def run_lists(run: Run, qrels: Qrels, *, depth: int = 100, levels: int | None = None):
    """The run's ranked lists on the judged topics, top ``depth``, padded (trec_eval order).

    Returns ``(topics, scores, grades, lengths, rel_counts)``: normalised scores as in
    :func:`learning_set_from_runs`, qrels grades (unjudged and negative: 0), padding with score
    -inf and grade -1, and the qrels' grade counts (B, L).
    """
    grade = qrels.lookup[3]
    rq, rd, norm, rr = _run_features(run)
    tc = topic_codes(rq, _topic_code(qrels))
    rank = np.rint(1.0 / rr).astype(np.int64)
    ok = (tc >= 0) & (rank <= depth)
    rd, norm, tc, rank = rd[ok], norm[ok], tc[ok], rank[ok]
    pos, hit = _join(qrels, tc, rd)
    g = np.zeros(len(rd), dtype=np.int64)
    g[hit] = np.maximum(grade[pos[hit]], 0)
    topics, row = np.unique(tc, return_inverse=True)
    B = len(topics)
    scores = np.full((B, depth), -np.inf)
    grades = np.full((B, depth), -1, dtype=np.int64)
    scores[row, rank - 1] = norm
    grades[row, rank - 1] = g
    lengths = np.bincount(row, minlength=B)
    L = levels or int(max(1, grade.max()) + 1)
    rel_counts = np.stack([qrels.level_counts(qrels.topics[t], L) for t in topics])
    return [qrels.topics[t] for t in topics], scores, grades, lengths, rel_counts
