"""Ranking as trec_eval (score desc, ties by docno desc, rank column ignored, -M depth),
grade lookup, topic handling and the RankedLists container."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from maxent import RankedLists, TopicWarning, rank_runs, read_qrels, read_run, run_from_frame
from maxent.ranked import UNJUDGED
from maxent.trec import Qrels


def _qrels(judgements: dict[str, dict[str, int]]) -> Qrels:
    topics = sorted(judgements, key=str.encode)
    docnos, grades = {}, {}
    for t in topics:
        items = sorted(judgements[t].items(), key=lambda kv: kv[0].encode())
        docnos[t] = np.array([d.encode() for d, _ in items])
        grades[t] = np.array([g for _, g in items], dtype=np.int64)
    top = max((max(v.values()) for v in judgements.values() if v), default=0)
    return Qrels(None, topics, docnos, grades, max(0, top))


def _reference(run, qrels, depth=1000):
    """Brute force with Python's sort: key (-score, docno) with docno compared descending."""
    out = {}
    for t in qrels.topics:
        docs = [(s, d) for q, d, s in zip(run.qid, run.docno, run.score) if q.decode() == t]
        if not docs:
            continue
        # descending score, then descending docno (bytes compare as strcmp)
        docs.sort(key=lambda x: (x[0], x[1]), reverse=True)
        judged = dict(zip(qrels.docnos[t].tolist(), qrels.grades[t].tolist()))
        g = [judged.get(d, UNJUDGED) for _, d in docs[:depth]]
        out[t] = [UNJUDGED if x < 0 else x for x in g]
    return out


def test_ties_broken_by_docno_descending():
    # hand example: X scores highest, the other four tie; trec_eval's comp_sim_docno puts
    # them in strcmp-descending order D3 > D20 > D10 > D1 ('3' > '2'; "D10" > "D1" as longer)
    run = run_from_frame({"1": {"D1": 1.0, "D10": 1.0, "D20": 1.0, "D3": 1.0, "X": 2.0}})
    qrels = _qrels({"1": {"X": 0, "D3": 3, "D20": 2, "D1": 1, "D10": 0}})
    lists = rank_runs([run], qrels)
    assert lists.grades[0].tolist() == [0, 3, 2, 0, 1]


def test_rank_column_and_line_order_are_ignored(shared_data, tmp_path):
    src = shared_data / "trec_eval_test" / "results.test"
    qrels = read_qrels(shared_data / "trec_eval_test" / "qrels.test")
    lines = src.read_text().splitlines()
    rng = np.random.default_rng(7)
    shuffled = [lines[i].split() for i in rng.permutation(len(lines))]
    for row in shuffled:
        row[3] = str(rng.integers(1, 10**6))  # garbage ranks
    p = tmp_path / "shuffled.txt"
    p.write_text("\n".join(" ".join(r) for r in shuffled) + "\n")
    a = rank_runs([read_run(src)], qrels)
    b = rank_runs([read_run(p)], qrels)
    assert np.array_equal(a.grades, b.grades) and np.array_equal(a.lengths, b.lengths)


def test_matches_brute_force_on_runs_with_many_ties(rng):
    for trial in range(20):
        n_topics = int(rng.integers(1, 5))
        run_dict, judg = {}, {}
        for t in range(n_topics):
            docs = [f"d{rng.integers(0, 300)}" for _ in range(int(rng.integers(1, 120)))]
            run_dict[str(t)] = {d: float(rng.integers(0, 6)) / 2 for d in docs}  # few values: ties
            judg[str(t)] = {f"d{i}": int(rng.integers(-1, 4)) for i in rng.choice(300, 80, replace=False)}
        run = run_from_frame(run_dict)
        qrels = _qrels(judg)
        depth = int(rng.integers(1, 100))
        lists = rank_runs([run], qrels, depth=depth)
        ref = _reference(run, qrels, depth)
        assert list(lists.topics) == list(ref)
        for row, t in enumerate(lists.topics):
            n = lists.lengths[row]
            assert lists.grades[row, :n].tolist() == ref[t]
            assert (lists.grades[row, n:] == UNJUDGED).all()


def test_exact_lookup_path_equals_hashed_path(shared_data):
    # the per-topic binary search used when two judgements share a 64-bit hash
    d = shared_data / "trec_eval_test"
    run, qrels = read_run(d / "results.test"), read_qrels(d / "qrels.rel_level")
    fast = rank_runs([run], qrels)
    slow_qrels = Qrels(qrels.path, qrels.topics, qrels.docnos, qrels.grades, qrels.max_grade)
    index, *rest = slow_qrels.lookup
    object.__setattr__(slow_qrels, "lookup", (None, *rest))
    slow = rank_runs([run], slow_qrels)
    assert np.array_equal(fast.grades, slow.grades)
    assert (fast.grades >= 0).sum() > 0


def test_depth_cut():
    run = run_from_frame({"1": {f"d{i}": float(-i) for i in range(10)}})
    qrels = _qrels({"1": {"d0": 1, "d5": 1}})
    lists = rank_runs([run], qrels, depth=5)
    assert lists.lengths.tolist() == [5] and lists.depth == 5
    assert lists.grades[0].tolist() == [1, UNJUDGED, UNJUDGED, UNJUDGED, UNJUDGED]
    assert lists.n_rel().tolist() == [2]  # R still counts d5, cut off by the depth
    with pytest.raises(Exception):
        rank_runs([run], qrels, depth=0)


def test_topics_missing_from_run_and_qrels():
    run = run_from_frame({"1": {"a": 1.0}, "3": {"b": 1.0}})   # 3 is not judged
    qrels = _qrels({"1": {"a": 1}, "2": {"c": 1}})               # 2 is not in the run
    with pytest.warns(TopicWarning) as rec:
        lists = rank_runs([run], qrels)
    text = " ".join(str(w.message) for w in rec)
    assert "not in the qrels, ignored: 3" in text and "have no results" in text and ": 2" in text
    assert list(lists.topics) == ["1"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = rank_runs([run], qrels, complete=True)
    assert list(full.topics) == ["1", "2"] and full.lengths.tolist() == [1, 0]
    assert full.grades[1].tolist() == [UNJUDGED]


def test_negative_grades_look_unjudged():
    run = run_from_frame({"1": {"a": 3.0, "b": 2.0, "c": 1.0}})
    qrels = _qrels({"1": {"a": -1, "b": 2, "c": 0}})
    lists = rank_runs([run], qrels)
    assert lists.grades[0].tolist() == [UNJUDGED, 2, 0]
    assert lists.rel_counts[0].tolist() == [1, 0, 1]


def test_lists_ordered_by_run_then_topic(shared_data):
    d = shared_data / "trec_eval_test"
    runs = [read_run(d / "results-302.test"), read_run(d / "results.test")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lists = rank_runs(runs, read_qrels(d / "qrels.test"))
    assert list(zip(lists.runs, lists.topics)) == [
        ("results-302.test", "302"), ("results.test", "301"), ("results.test", "302"),
        ("results.test", "303")]
    # the same topic of the same ranking gives the same list
    assert np.array_equal(lists.grades[0], lists.grades[2])


def test_ranked_lists_container():
    lists = RankedLists.from_grades([[2, 0, -1, 1], [1, -1, -1, -1]], [[5, 2, 1], [3, 1, 0]],
                                    runs=["r", "r"], topics=["a", "b"])
    assert lists.lengths.tolist() == [4, 1] and lists.levels == 3 and len(lists) == 2
    assert lists.n_rel(1).tolist() == [3, 1] and lists.n_rel(2).tolist() == [1, 0]
    assert lists.relevant(2)[0].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert lists.retrieved_counts().tolist() == [[2, 1, 1], [0, 1, 0]]  # unjudged count as 0
    assert lists.take([1]).topics.tolist() == ["b"]
    cut = lists.truncate(2)
    assert cut.depth == 2 and cut.lengths.tolist() == [2, 1]


def test_retrieved_counts_against_counting_by_hand(rng):
    # oracle: a Python count per list (unjudged as grade 0, padding beyond the length
    # ignored), for few levels (a comparison pass per grade) and many (one bincount)
    for L in (2, 3, 16, 17, 40):
        B, N = 7, 30
        grades = rng.integers(-1, L, size=(B, N))
        lengths = rng.integers(0, N + 1, size=B)
        lists = RankedLists.from_grades(grades, np.full((B, L), N), lengths=lengths)
        want = [[sum(1 for g in grades[b, :lengths[b]] if max(int(g), 0) == z) for z in range(L)]
                for b in range(B)]
        assert lists.retrieved_counts().tolist() == want, L


# ------------------------------------------------------------------ ranking's O(n) path
# oracle: Python's sort by trec_eval's key
@pytest.mark.parametrize("layout", ["sorted_blocks", "unsorted_block", "split_topic"])
def test_trec_order_equals_a_python_sort(layout):
    # oracle: Python's sort by (topic code, score descending, docno descending), trec_eval's
    # order; blocks of topics in shuffled order (the O(n) path: a run in 1, 2, ..., 10 order
    # against qrels in 1, 10, 2, ... order), one block unsorted or one topic in two blocks
    # (the sorting path)
    from maxent.ranked import _trec_order

    rng = np.random.default_rng(["sorted_blocks", "unsorted_block", "split_topic"].index(layout))
    for trial in range(30):
        topics = rng.permutation(int(rng.integers(1, 8)))
        code, score, docno = [], [], []
        for t in topics:
            k = int(rng.integers(1, 60))
            s = np.sort(rng.integers(0, 8, k).astype(np.float32) / 4)[::-1]  # ties
            code += [t] * k
            score += s.tolist()
            docno += [f"d{rng.integers(0, 10**int(rng.integers(1, 4)))}".encode() for _ in range(k)]
        code, score = np.array(code, dtype=np.int64), np.array(score, dtype=np.float32)
        docno = np.array(docno, dtype=bytes)
        _, keep = np.unique(np.stack([code.astype(str), docno.astype(str)]), axis=1, return_index=True)
        keep = np.sort(keep)                               # a docno once per topic
        code, score, docno = code[keep], score[keep], docno[keep]
        if layout == "unsorted_block" and len(score) > 2:
            score[-1], score[0] = score[0], score[-1] - 1
        if layout == "split_topic" and len(score) > 2 and code[-1] != code[0]:
            code[-1], docno[-1] = code[0], b"e"            # a docno no other line has
        expected = sorted(range(len(score)), key=lambda i: (code[i], -score[i], _desc(docno[i])))
        assert _trec_order(score, code, docno).tolist() == expected


def _desc(b: bytes):
    # sort key for bytes descending (strcmp order, reversed), as a tuple of negated bytes
    return tuple(-x for x in b) + (1,)
