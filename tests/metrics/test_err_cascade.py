"""ERR against a brute-force cascade model, at full precision (a second ERR oracle, beside
NTCIREVAL's fixture at 4 decimals in test_conformance.py).

The cascade model (Chapelle et al. 2009): a user reads the list from the top and, at rank n,
is satisfied with probability R(grade_n) = (2^grade - 1) / 2^c and stops there, getting
1/n; unjudged documents never satisfy. The oracle enumerates every one of the 2^N
satisfied / not-satisfied outcomes of a list, with its probability, and sums 1/(first
satisfied rank): the expectation exactly, with no algebra shared with the library's product
formula.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from maxent.metrics import ERR, parse_measure
from maxent.ranked import RankedLists


def _cascade(grades, c: int, cutoff: int | None) -> Fraction:
    """Expected 1/(stopping rank) over all 2^N satisfaction outcomes, in exact fractions."""
    stop = [Fraction(2**g - 1, 2**c) if g >= 0 else Fraction(0) for g in grades]
    total = Fraction(0)
    for outcome in itertools.product((False, True), repeat=len(grades)):
        p = Fraction(1)
        for s, r in zip(outcome, stop):
            p *= r if s else 1 - r
        if p == 0:
            continue
        first = next((n for n, s in enumerate(outcome, 1) if s), None)
        if first is not None and (cutoff is None or first <= cutoff):
            total += p / first
    return total


@pytest.mark.parametrize("seed", range(6))
def test_err_is_the_cascade_models_expectation(seed):
    rng = np.random.default_rng(seed)
    L = int(rng.integers(2, 5))                       # grade levels 0..L-1; c = L - 1
    B, N = 8, int(rng.integers(3, 11))
    grades = rng.integers(-1, L, (B, N))
    lengths = rng.integers(1, N + 1, B)
    grades[np.arange(N)[None, :] >= lengths[:, None]] = -1
    rel_counts = np.ones((B, L), dtype=np.int64)
    lists = RankedLists.from_grades(grades, rel_counts, lengths)
    for cutoff in (None, 1, 3, N):
        m = ERR(cutoff=cutoff)
        got = m.value(lists)
        for b in range(B):
            want = _cascade(grades[b, : lengths[b]].tolist(), L - 1, cutoff)
            assert got[b] == pytest.approx(float(want), rel=1e-14, abs=1e-16), (b, cutoff)
    assert parse_measure("ERR@3") == ERR(cutoff=3)


def test_err_cascade_hand_case():
    # grades 2, 0, 1 with c = 2: R = 3/4, 0, 1/4; ERR = 3/4 + (1/4)(1)(1/4)/3 = 3/4 + 1/48
    lists = RankedLists.from_grades([[2, 0, 1]], [[1, 1, 1]])
    assert ERR().value(lists)[0] == pytest.approx(3 / 4 + 1 / 48, rel=1e-15)
    assert float(_cascade([2, 0, 1], 2, None)) == pytest.approx(3 / 4 + 1 / 48, rel=1e-15)
