"""Registry-driven properties of every metric in maxent.metrics.METRICS (as sklearn's
test_common): invariance to the rank column and to line order, trec_eval's tie rule,
bounds, expectation at the indicator, gradients; and GAP's special cases."""
from __future__ import annotations

import dataclasses

import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxent import rank_runs, read_run
from maxent.metrics import (AP, DCG, ERR, GAP, METRICS, NDCG, RBP, IPrec, NumRel, NumRelRet, NumRet,
                            Precision, Recall, RR, Success, gap_pivot)
from maxent.metrics.trec_extra import NumNonRelJudgedRet, Utility
from maxent.ranked import UNJUDGED, RankedLists
from maxent.trec import Qrels

# every registered class, with defaults and with parameters
INSTANCES = [cls() for cls in METRICS] + [
    AP(cutoff=5), AP(rel=2), Precision(cutoff=3, rel=2), Recall(cutoff=7), RR(cutoff=4),
    Success(cutoff=2), IPrec(cutoff=0.5), NDCG(cutoff=5), NDCG(gain="exp"), NDCG(cutoff=5, ideal="all"),
    NDCG(discount="jk", gain=((1, 1.0), (2, 4.0), (3, 9.0))), DCG(cutoff=5, gain="exp"),
    DCG(gain=((2, 0.0),)),   # a zero gain between non-zero ones
    ERR(cutoff=5), ERR(gain="linear", max_grade=3), GAP(g=(0.2, 0.3, 0.5)), GAP(g=(0.5, 0.5), cutoff=6),
    RBP(p=0.5, cutoff=5, rel=2), RBP(gain="exp"), RBP(p=0.9, gain=((1, 3.0), (2, 1.0))),
]
UNBOUNDED = (NumRet, NumRel, NumRelRet, NumNonRelJudgedRet, DCG, Utility)  # counts, unnormalised DCG, utility
SIGNED = (Utility,)   # a retrieved non-relevant document costs 1


def test_every_registered_metric_is_exercised():
    assert {type(m) for m in INSTANCES} == set(METRICS)


# ------------------------------------------------------------------ a random topic
@st.composite
def topics(draw, max_docs=25):
    """One topic: retrieved docs with scores (with ties), and qrels grades -1..3 for a pool
    that includes unretrieved judged documents."""
    n = draw(st.integers(1, max_docs))
    pool = [f"d{i}" for i in range(n + draw(st.integers(0, 8)))]
    retrieved = draw(st.permutations(pool))[:n]
    scores = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))  # few values: ties
    grades = draw(st.lists(st.integers(-1, 3), min_size=len(pool), max_size=len(pool)))
    judged = {d: g for d, g in zip(pool, grades) if draw(st.booleans()) or g > 0}
    return list(zip(retrieved, [s / 2 for s in scores])), judged


def _qrels(judged: dict[str, int]) -> Qrels:
    items = sorted(judged.items(), key=lambda kv: kv[0].encode()) or [("zz-none", 0)]
    docnos = np.array([d.encode() for d, _ in items])
    grades = np.array([g for _, g in items], dtype=np.int64)
    return Qrels(None, ["1"], {"1": docnos}, {"1": grades}, 3)


def _write(path: Path, docs, ranks) -> None:
    path.write_text("".join(f"1 Q0 {d} {r} {s} t\n" for (d, s), r in zip(docs, ranks)))


def _lists_from_file(path, qrels) -> RankedLists:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rank_runs([read_run(path)], qrels, levels=4)


def _reference_lists(docs, judged) -> RankedLists:
    """Brute force: Python sort by (score, docno) descending (trec_eval's comp_sim_docno)."""
    ranked = sorted(docs, key=lambda x: (x[1], x[0].encode()), reverse=True)
    grades = [judged.get(d, UNJUDGED) for d, _ in ranked]
    grades = [UNJUDGED if g < 0 else g for g in grades]
    counts = np.bincount([g for g in judged.values() if g >= 0] or [0], minlength=4)[:4]
    if not judged:
        counts = np.array([1, 0, 0, 0])  # the placeholder judgement of _qrels
    lists = RankedLists.from_grades([grades], [counts], lengths=[len(grades)])
    negative = np.array([[judged.get(d, 0) < 0 for d, _ in ranked]], dtype=bool).reshape(1, -1)
    if negative.any():   # judged with a negative grade: pooled but unjudged (infAP)
        lists = dataclasses.replace(lists, pooled_unjudged=negative)
    return lists


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(topic=topics(), data=st.data())
def test_rank_column_line_order_and_ties(topic, data):
    docs, judged = topic
    qrels = _qrels(judged)
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "a", Path(tmp) / "b"
        _write(a, docs, range(1, len(docs) + 1))
        perm = data.draw(st.permutations(range(len(docs))))
        junk = data.draw(st.lists(st.integers(-5, 10**6), min_size=len(docs), max_size=len(docs)))
        _write(b, [docs[i] for i in perm], junk)  # other line order, garbage rank column
        la, lb = _lists_from_file(a, qrels), _lists_from_file(b, qrels)
    ref = _reference_lists(docs, judged)
    for m in INSTANCES:
        if hasattr(m, "text"):             # a per-topic text (relstring), no number
            assert m.text(la) == m.text(lb) == m.text(ref), m
            continue
        va, vb, vr = m.value(la), m.value(lb), m.value(ref)
        assert np.array_equal(va, vb), m   # invariant to the rank column and line order
        assert np.allclose(va, vr, rtol=0, atol=1e-12), m  # ties broken by docno descending


@SETTINGS
@given(topic=topics())
def test_bounds(topic):
    docs, judged = topic
    lists = _reference_lists(docs, judged)
    for m in INSTANCES:
        if hasattr(m, "text"):
            continue
        v = m.value(lists)
        assert np.isfinite(v).all() and (isinstance(m, SIGNED) or (v >= 0).all()), m
        if not isinstance(m, UNBOUNDED):
            assert (v <= 1 + 1e-12).all(), m


@SETTINGS
@given(topic=topics())
def test_expectation_at_the_indicator_is_the_value(topic):
    docs, judged = topic
    lists = _reference_lists(docs, judged)
    for m in INSTANCES:
        if m.HAS_EXPECTATION:
            assert np.allclose(m.expectation(m.indicator(lists), lists), m.value(lists),
                               rtol=0, atol=1e-12), m


@pytest.mark.parametrize("metric", [m for m in INSTANCES if m.HAS_EXPECTATION], ids=str)
def test_gradient_matches_central_differences(metric, rng):
    grades = rng.integers(-1, 4, size=(3, 12))
    lists = RankedLists.from_grades(grades, [[4, 5, 3, 2]] * 3, lengths=[12, 12, 12])
    shape = (3, 12, 4) if metric.GRADED else (3, 12)
    p = rng.uniform(0.05, 0.95, size=shape)
    if metric.GRADED:
        p /= p.sum(axis=2, keepdims=True)
    grad = metric.gradient(p, lists)
    h = 1e-6
    num = np.zeros_like(p)
    for idx in np.ndindex(*p.shape[1:]):
        e = np.zeros_like(p)
        e[(slice(None),) + idx] = h
        num[(slice(None),) + idx] = (metric.expectation(p + e, lists) - metric.expectation(p - e, lists)) / (2 * h)
    assert np.allclose(grad, num, rtol=1e-5, atol=1e-7), metric


# ------------------------------------------------------------------------------- GAP
@st.composite
def graded_lists(draw, c=3):
    n = draw(st.integers(1, 30))
    grades = draw(st.lists(st.integers(-1, c), min_size=n, max_size=n))
    extra = draw(st.lists(st.integers(0, 3), min_size=c + 1, max_size=c + 1))  # unretrieved
    counts = np.bincount([g for g in grades if g >= 0], minlength=c + 1) + np.array(extra)
    return RankedLists.from_grades([grades], [counts], lengths=[n])


@SETTINGS
@given(lists=graded_lists())
def test_gap_reduces_to_ap(lists):
    # g = (1, 0, 0): every user's threshold is 1 -> AP at threshold 1 (docs/method.md)
    assert np.allclose(GAP(g=(1.0, 0.0, 0.0)).value(lists), AP(rel=1).value(lists), atol=1e-12)
    # all mass on the top grade c = 3 -> AP at threshold 3
    assert np.allclose(GAP(g=(0.0, 0.0, 1.0)).value(lists), AP(rel=3).value(lists), atol=1e-12)
    assert np.allclose(GAP(g=(0.0, 1.0)).value(lists), AP(rel=2).value(lists), atol=1e-12)


@SETTINGS
@given(lists=graded_lists(), g=st.lists(st.integers(0, 10), min_size=3, max_size=3))
def test_gap_identity_equals_pivot_definition(lists, g):
    if sum(g) == 0:
        return
    probs = tuple(x / sum(g) for x in g)
    ours = GAP(g=probs).value(lists)
    pivot = gap_pivot(lists.grades, lists.rel_counts, probs)
    assert np.allclose(ours, pivot, rtol=0, atol=1e-12)


@SETTINGS
@given(counts=st.lists(st.integers(0, 6), min_size=4, max_size=4),
       g=st.lists(st.integers(0, 10), min_size=3, max_size=3), data=st.data())
def test_gap_is_one_for_every_ordering_by_non_increasing_grade(counts, g, data):
    if sum(g) == 0 or sum(counts[1:]) == 0:
        return
    probs = tuple(x / sum(g) for x in g)
    # every judged document, by non-increasing grade; unjudged ones may follow
    grades = [z for z in (3, 2, 1, 0) for _ in range(counts[z])]
    grades += [UNJUDGED] * data.draw(st.integers(0, 3))
    lists = RankedLists.from_grades([grades], [counts], lengths=[len(grades)])
    R_at_least = [sum(counts[j:]) for j in (1, 2, 3)]
    if sum(p * r for p, r in zip(probs, R_at_least)) == 0:
        # no user finds any judged document relevant: GAP is undefined, 0 by convention
        assert GAP(g=probs).value(lists)[0] == 0.0
        return
    assert GAP(g=probs).value(lists)[0] == pytest.approx(1.0, abs=1e-12)
    assert gap_pivot(lists.grades, lists.rel_counts, probs)[0] == pytest.approx(1.0, abs=1e-12)
    # and below 1 as soon as a more relevant document follows a less relevant one
    if counts[3] and counts[1] and probs[1] + probs[2] > 0:  # some users need grade >= 2
        swapped = [1] + [x for x in grades if x != 1] + [1] * (counts[1] - 1)
        worse = RankedLists.from_grades([swapped], [counts], lengths=[len(swapped)])
        assert GAP(g=probs).value(worse)[0] < 1.0


def test_gap_hand_example():
    # hand calculation (Robertson, Kanoulas & Yilmaz (2010)'s pivot definition), g = (0.5, 0.5), list grades 1, 2,
    # R_1 = R_2 = 1: E[PC_1] = g1 = 0.5; E[PC_2] = (delta(1,2) + delta(2,2)) / 2 = (0.5 + 1) / 2
    # = 0.75; denominator R_1 g1 + R_2 (g1 + g2) = 0.5 + 1 = 1.5; GAP = 1.25 / 1.5 = 5/6
    lists = RankedLists.from_grades([[1, 2]], [[0, 1, 1]])
    assert GAP(g=(0.5, 0.5)).value(lists)[0] == pytest.approx(5 / 6, abs=1e-15)
