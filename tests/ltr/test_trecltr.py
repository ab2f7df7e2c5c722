"""MQ2007-agg-style learning set from TREC runs and qrels (maxent.trecltr)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from maxent.errors import InputError
from maxent.inputs import run_from_frame
from maxent.trec import read_qrels, read_runs
from maxent.trecltr import feature_names, learning_set_from_runs

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def _brute_force(runs, qrels_rows):
    """Oracle: per document, with Python dicts: trec_eval order = sort by (-score, docno desc)."""
    feats = {}
    for j, run in enumerate(runs):
        by_topic = {}
        for q, d, s in zip(run.qid, run.docno, run.score):
            by_topic.setdefault(q.decode(), []).append((d.decode(), float(s)))
        for q, docs in by_topic.items():
            ranked = sorted(sorted(docs, key=lambda x: x[0], reverse=True), key=lambda x: -x[1])  # stable
            lo, hi = min(s for _, s in docs), max(s for _, s in docs)
            for r, (d, s) in enumerate(ranked, 1):
                feats[(q, d, j)] = ((s - lo) / (hi - lo) if hi > lo else 1.0, 1.0 / r)
    out = {}
    for q, d, g in qrels_rows:
        out[(q, d)] = [v for j in range(len(runs)) for v in feats.get((q, d, j), (0.0, 0.0))], max(g, 0)
    return out


def test_matches_brute_force(tmp_path):
    rng = np.random.default_rng(0)
    docs = [f"d{i}" for i in range(12)]
    runs = []
    for r in range(3):
        rows = []
        for q in ("1", "2", "3"):
            for d in rng.choice(docs, 8, replace=False):
                rows.append((q, d, float(rng.integers(0, 4))))       # integer scores: many ties
        runs.append(run_from_frame(pd.DataFrame(rows, columns=["qid", "docno", "score"]), name=f"r{r}"))
    qrows = [(q, d, int(rng.integers(-1, 3))) for q in ("1", "2") for d in rng.choice(docs, 7, replace=False)]
    qrows += [("3", "d0", 0), ("3", "d1", 0)]                         # topic 3: nothing relevant -> dropped
    qrows += [("1", "zz", 2)]                                         # judged, never retrieved
    (tmp_path / "q.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrows))
    qrels = read_qrels(tmp_path / "q.txt")
    data = learning_set_from_runs(runs, qrels)
    assert list(data.qids) == [t for t in qrels.topics if t != "3"]
    ref = _brute_force(runs, [r for r in qrows if r[0] != "3"])
    assert data.n_docs == len(ref)
    for k, q in enumerate(data.qids):
        a, b = data.offsets[k], data.offsets[k + 1]
        for i, d in zip(range(a, b), qrels.docnos[q]):
            x, g = ref[(q, d.decode())]
            np.testing.assert_allclose(data.X[i], x, atol=1e-12)
            assert data.y[i] == g
    assert feature_names(runs)[:2] == ["r0:score", "r0:rr"] and data.n_features == 6
    with pytest.raises(InputError):
        learning_set_from_runs([], qrels)
    with pytest.raises(InputError):
        learning_set_from_runs(runs, qrels, topics=["3"])


@pytest.mark.skipif(not (DATA / "trec_dl19_passage").exists(), reason=f"shared TREC data not found at {DATA}")
def test_dl19_learning_set():
    """Real data: 43 judged DL19 topics, 9260 judgements (the qrels file's line count), 3 runs x 2
    features (3 of the 25 runs, to stay fast)."""
    runs = read_runs(sorted((DATA / "trec_dl19_passage" / "runs").iterdir())[:3])
    qrels = read_qrels(DATA / "trec_dl19_passage" / "qrels" / "qrels.dl19-passage.txt")
    data = learning_set_from_runs(runs, qrels)
    n_lines = sum(1 for line in open(DATA / "trec_dl19_passage" / "qrels" / "qrels.dl19-passage.txt") if line.strip())
    assert data.n_queries == 43 and data.n_docs == n_lines and data.n_features == 6
    assert ((data.X >= 0) & (data.X <= 1)).all()
    assert set(np.unique(data.y)) == {0, 1, 2, 3}


def test_run_lists_matches_brute_force(tmp_path):
    """run_lists: top-depth lists in trec_eval order with normalised scores and qrels grades
    (oracle: the dict-based brute force above, which ranks and normalises per topic)."""
    from maxent.trecltr import run_lists

    rng = np.random.default_rng(1)
    docs = [f"d{i}" for i in range(15)]
    rows = [(q, d, float(rng.integers(0, 5))) for q in ("1", "2", "9") for d in rng.choice(docs, 9, replace=False)]
    run = run_from_frame(pd.DataFrame(rows, columns=["qid", "docno", "score"]), name="r")
    qrows = [(q, d, int(rng.integers(0, 3))) for q in ("1", "2") for d in rng.choice(docs, 10, replace=False)]
    (tmp_path / "q.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrows))
    qrels = read_qrels(tmp_path / "q.txt")
    grade = {(q, d): g for q, d, g in qrows}
    topics, S, G, L, rc = run_lists(run, qrels, depth=6, levels=3)
    assert topics == ["1", "2"] and (L == 6).all()                # topic 9 is not judged
    for b, q in enumerate(topics):
        docs_q = [(d, s) for qq, d, s in rows if qq == q]
        ranked = sorted(sorted(docs_q, key=lambda x: x[0], reverse=True), key=lambda x: -x[1])[:6]
        lo, hi = min(s for _, s in docs_q), max(s for _, s in docs_q)
        np.testing.assert_allclose(S[b], [(s - lo) / (hi - lo) for _, s in ranked])
        assert list(G[b]) == [grade.get((q, d), 0) for d, _ in ranked]
        assert list(rc[b]) == [sum(1 for qq, _, g in qrows if qq == q and g == k) for k in range(3)]
