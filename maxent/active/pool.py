"""Pools of unlabelled queries for active evaluation (Sawade et al. (2013) section 4): per query,
its candidate documents with label-free features, the oracle grades, a labelling cost per
document and each ranker's list as indices into the candidates; from TREC runs and qrels
(:func:`trec_pool`) or LETOR data (:func:`letor_pool`).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from maxent.errors import InputError, ParameterError, TopicWarning
from maxent.ranked import _trec_order
from maxent.trec import Qrels, Run, topic_codes

__all__ = ["Pool", "trec_pool", "letor_pool", "compact", "TREC_FEATURES", "drop_fraction"]

TREC_FEATURES = ("frac_runs", "mean_rr", "max_rr", "mean_norm_score", "max_norm_score",
                 "mean_discount", "log_best_rank")
"""Label-free features of a (topic, document) from the runs' top ``depth`` lists."""


@dataclass(frozen=True, eq=False)
class Pool:
    """Q pool queries with up to U candidate documents each (padded).

    Attributes
    ----------
    queries : (Q,) query ids
    grades : (Q, U) int oracle grade of each candidate (0 = not relevant / unjudged), -1 padding
    features : (Q, U, F) label-free features for the relevance model
    doc_cost : (Q, U) labelling cost of each candidate (0 for padding)
    rankings : dict ranker name -> (Q, N) candidate index at each rank (-1: none)
    levels : G, number of grade levels
    """

    queries: np.ndarray
    grades: np.ndarray
    features: np.ndarray
    doc_cost: np.ndarray
    rankings: dict = field(default_factory=dict)
    levels: int = 2

    @property
    def n_queries(self) -> int:
        return len(self.queries)

    @property
    def valid(self) -> np.ndarray:
        """(Q, U) mask of real candidates."""
        return self.grades >= 0

    def oracle(self) -> np.ndarray:
        """(Q, U, G) one-hot distribution of the true grades (padding: grade 0)."""
        return np.eye(self.levels)[np.maximum(self.grades, 0)]


def _ranks_within(codes_sorted: np.ndarray) -> np.ndarray:
    """0-based position of each entry within its run of equal consecutive codes."""
    n = len(codes_sorted)
    start = np.concatenate(([True], codes_sorted[1:] != codes_sorted[:-1])) if n else np.zeros(0, bool)
    idx = np.arange(n)
    return idx - np.maximum.accumulate(np.where(start, idx, 0))


def trec_pool(runs: list[Run], qrels: Qrels, *, depth: int = 100) -> Pool:
    """Build the pool of topics from TREC runs (the rankers) and qrels (the labelling oracle).

    Runs are ranked as trec_eval and cut at ``depth``; a topic's candidates are the union of
    their lists, with the label-free :data:`TREC_FEATURES`. Unjudged documents and negative
    grades have grade 0; every document costs 1. Topics not retrieved by every run are left out
    (TopicWarning).

    Raises
    ------
    InputError
        when a run retrieves no document for any qrels topic.
    """
    import pandas as pd

    if depth < 1:
        raise ParameterError(f"depth must be >= 1, got {depth}")
    topic_index = {t.encode(): i for i, t in enumerate(qrels.topics)}
    frames = []
    for j, run in enumerate(runs):
        codes = topic_codes(run.qid, topic_index)
        keep = np.flatnonzero(codes >= 0)
        if len(keep) == 0:
            raise InputError(run.path, None, f"run {run.name} retrieved no document for any topic of the qrels")
        c, docno = codes[keep], run.docno[keep]
        with np.errstate(over="ignore"):
            score = run.score[keep].astype(np.float32)
        order = _trec_order(score, c, docno)
        c, docno, score = c[order], docno[order], score[order].astype(np.float64)
        rank = _ranks_within(c) + 1
        cut = rank <= depth
        frames.append(pd.DataFrame({"topic": c[cut], "docno": docno[cut], "rank": rank[cut],
                                    "score": score[cut], "run": j}))
    df = pd.concat(frames, ignore_index=True)
    per_topic = df.groupby("topic")["run"].nunique()
    topics = np.sort(per_topic.index[per_topic == len(runs)].to_numpy())
    left_out = sorted(set(range(len(qrels.topics))) - set(topics.tolist()))
    if left_out:
        warnings.warn(f"{len(left_out)} qrels topic(s) not retrieved by every run are left out of the pool: "
                      + ", ".join(qrels.topics[i] for i in left_out[:10]) + (" ..." if len(left_out) > 10 else ""),
                      TopicWarning, stacklevel=2)
    df = df[df["topic"].isin(topics)].copy()
    g = df.groupby(["run", "topic"])["score"]
    lo, hi = g.transform("min"), g.transform("max")
    df["norm"] = np.where(hi > lo, (df["score"] - lo) / (hi - lo).where(hi > lo, 1.0), 1.0)
    df["rr"] = 1.0 / df["rank"]
    df["disc"] = 1.0 / np.log2(df["rank"] + 1.0)
    J = len(runs)
    agg = df.groupby(["topic", "docno"], sort=True).agg(
        n=("run", "size"), rr_sum=("rr", "sum"), rr_max=("rr", "max"), norm_sum=("norm", "sum"),
        norm_max=("norm", "max"), disc_sum=("disc", "sum"), best=("rank", "min")).reset_index()
    feats = np.column_stack([agg["n"] / J, agg["rr_sum"] / J, agg["rr_max"], agg["norm_sum"] / J,
                             agg["norm_max"], agg["disc_sum"] / J, np.log(agg["best"].to_numpy(float))])
    tpos = np.searchsorted(topics, agg["topic"].to_numpy())
    cand = _ranks_within(tpos)                       # candidate index within its topic
    Q, U = len(topics), int(cand.max()) + 1 if len(cand) else 1
    # oracle grades from the qrels (unjudged and negative grades: 0)
    grade = np.zeros(len(agg), dtype=np.int64)
    adocno = agg["docno"].to_numpy()
    for qi, t in enumerate(topics):                  # one binary search per topic, vectorised inside
        sel = slice(*np.searchsorted(tpos, [qi, qi + 1]))
        name = qrels.topics[t]
        jd, jg = qrels.docnos.get(name), qrels.grades.get(name)
        if jd is None or len(jd) == 0:
            continue
        pos = np.minimum(np.searchsorted(jd, adocno[sel]), len(jd) - 1)
        hit = jd[pos] == adocno[sel]
        grade[sel] = np.where(hit, np.maximum(jg[pos], 0), 0)
    grades = np.full((Q, U), -1, dtype=np.int64)
    grades[tpos, cand] = grade
    features = np.zeros((Q, U, feats.shape[1]))
    features[tpos, cand] = feats
    doc_cost = (grades >= 0).astype(np.float64)
    # each run's list as candidate indices
    key = pd.Series(cand, index=pd.MultiIndex.from_arrays([tpos, adocno]))
    rankings = {}
    for j, run in enumerate(runs):
        d = df[df["run"] == j]
        tp = np.searchsorted(topics, d["topic"].to_numpy())
        idx = key.reindex(pd.MultiIndex.from_arrays([tp, d["docno"].to_numpy()])).to_numpy()
        r = np.full((Q, depth), -1, dtype=np.int64)
        r[tp, d["rank"].to_numpy() - 1] = idx
        rankings[run.name] = r
    levels = max(qrels.max_grade, int(grades.max(initial=0))) + 1
    _check_size(Q)
    return Pool(np.asarray([qrels.topics[t] for t in topics], dtype=object), grades, features,
                doc_cost, rankings, max(levels, 2))


def letor_pool(data, scores: dict, *, length_feature: int | None = None, levels: int | None = None) -> Pool:
    """Pool of LETOR queries: candidates are each query's documents, rankers sort them by score.

    Parameters
    ----------
    data : RankingData (the pool queries with their labels, the oracle)
    scores : ranker name -> (D,) scores of ``data``'s documents (ties: document order)
    length_feature : 0-based column of the document length; a document then costs
        ln(2 + length) (Sawade et al. (2013) section 5), else 1 (MSLR-WEB: column 14)
    """
    Xp, yp, lengths = data.padded()
    Q, N = yp.shape
    valid = yp >= 0
    if length_feature is None:
        cost = valid.astype(np.float64)
    else:
        if not 0 <= length_feature < data.n_features:
            raise ParameterError(f"length feature {length_feature} is not a column of the data "
                                 f"({data.n_features} features)")
        cost = np.where(valid, np.log(2.0 + np.maximum(Xp[:, :, length_feature], 0.0)), 0.0)
    rankings = {}
    pos = np.arange(data.n_docs) - np.repeat(data.offsets[:-1], data.sizes)
    for name, s in scores.items():
        s = np.asarray(s, dtype=np.float64)
        if s.shape != (data.n_docs,) or not np.isfinite(s).all():
            raise ParameterError(f"ranker {name}: need one finite score per document")
        S = np.full((Q, N), -np.inf)
        S[data.query_index, pos] = s
        order = np.argsort(-S, axis=1, kind="stable")
        rankings[name] = np.where(np.arange(N)[None, :] < lengths[:, None], order, -1)
    G = int(data.y.max()) + 1 if levels is None else int(levels)
    _check_size(Q)
    return Pool(np.asarray(data.qids, dtype=object), np.where(valid, yp, -1), Xp, cost, rankings, max(G, 2))


def _check_size(Q: int) -> None:
    if Q < 2:
        raise ParameterError(f"the pool has {Q} quer{'y' if Q == 1 else 'ies'}; active evaluation "
                             "samples from a pool of at least 2 queries")


def compact(P: np.ndarray, *docs: np.ndarray):
    """Restrict (B, U, G) candidate distributions to the documents the lists use: ``(P_small,
    docs_small...)``, documents renumbered 0..W-1 per query, W the largest union."""
    B, U, G = P.shape
    rows = np.arange(B)[:, None]
    used = np.zeros((B, U + 1), dtype=bool)
    for d in docs:
        used[np.broadcast_to(rows, d.shape), np.where(d >= 0, d, U)] = True
    used = used[:, :U]
    new = np.cumsum(used, axis=1) - 1
    W = max(1, int(used.sum(axis=1).max()))
    small = np.zeros((B, W, G))
    small[:, :, 0] = 1.0
    r, c = np.nonzero(used)
    small[r, new[r, c]] = P[r, c]
    out = [np.where(d >= 0, new[np.broadcast_to(rows, d.shape), np.maximum(d, 0)], -1) for d in docs]
    return (small, *out)


def drop_fraction(docs: np.ndarray, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """A simulated outdated index (Sawade et al. (2013) section 5.2): round(fraction * length) random
    documents removed from each list, the others moving up."""
    if not 0.0 <= fraction < 1.0:
        raise ParameterError(f"fraction must be in [0, 1), got {fraction}")
    valid = docs >= 0
    n = valid.sum(axis=1)
    drop_n = np.rint(fraction * n).astype(np.int64)
    key = np.where(valid, rng.random(docs.shape), np.inf)
    rank_of = np.argsort(np.argsort(key, axis=1), axis=1)       # random order among real docs
    keep = valid & (rank_of >= drop_n[:, None])
    order = np.argsort(~keep, axis=1, kind="stable")            # kept docs first, in list order
    return np.take_along_axis(np.where(keep, docs, -1), order, axis=1)
