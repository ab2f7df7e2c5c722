"""Rank-biased precision (Moffat & Zobel 2008), added as one file plus one registry row.

Oracles: the paper's user model summed in plain Python (a reader stops after rank m with
probability (1 - p) p^(m-1); RBP = expected utility gathered / expected documents read); a
hand calculation; the registry-driven tests (test_swap_deltas.py: brute-force swap deltas;
test_metric_properties.py: expectation at the indicator, finite-difference gradients;
test_names.py: name round trip) pick RBP up from the registry.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from maxent import rank_runs, read_qrels, read_run

from maxent.errors import MeasureNameError
from maxent.cli.evaluate import main as evaluate_main
from maxent.ltr.approx import approx_metric
from maxent.ltr.lambdas import DeltaContext, lambda_gradients, rank_by_score
from maxent.ltr.softrank import soft_metric
from maxent.metrics import METRICS, RBP, parse_measure
from maxent.ranked import RankedLists
from maxent.solver import solve

REPO = Path(__file__).resolve().parents[2]


def _user_model(grades, u, p, cutoff=None, depth=2000):
    """E[utility read] / E[documents read] with a geometric stopping depth M, P(M = m) =
    (1 - p) p^(m-1); documents past the list (or the cutoff) have utility 0."""
    util = [u[g] if g >= 0 else 0.0 for g in grades]
    if cutoff is not None:
        util = [x if n < cutoff else 0.0 for n, x in enumerate(util)]
    gathered = read = 0.0
    for m in range(1, depth + 1):
        pm = (1 - p) * p ** (m - 1)
        gathered += pm * sum(util[:m])
        read += pm * m
    return gathered / read


@pytest.mark.parametrize("name,u", [
    ("RBP", {0: 0.0, 1: 1.0, 2: 1.0, 3: 1.0}),
    ("RBP(p=0.5,rel=2)@4", {0: 0.0, 1: 0.0, 2: 1.0, 3: 1.0}),
    ("RBP(p=0.95,gain=linear)", {0: 0.0, 1: 1 / 3, 2: 2 / 3, 3: 1.0}),
    ("RBP(gain=exp,max_grade=2)@6", {0: 0.0, 1: 1 / 3, 2: 1.0, 3: 1.0}),    # 7/3 clipped to 1
    ("RBP(gain=1:3,2:1)", {0: 0.0, 1: 1.0, 2: 1 / 3, 3: 1.0}),                # gain(3) = 3 (linear)
])
def test_value_equals_the_user_model(name, u, rng):
    m = parse_measure(name)
    for _ in range(20):
        N = int(rng.integers(1, 15))
        g = rng.integers(-1, 4, N)
        counts = np.bincount(np.maximum(g, 0), minlength=4)
        got = m.value(RankedLists.from_grades([g], [counts], lengths=[N]))[0]
        assert got == pytest.approx(_user_model(g, u, m.p, m.cutoff), abs=1e-12)


def test_hand_value():
    # relevant at ranks 1, 3, 5; p = 0.8: 0.2 * (1 + 0.8^2 + 0.8^4) = 0.2 * 2.0496 = 0.40992
    lists = RankedLists.from_grades([[1, 0, 1, -1, 2]], [[3, 2, 1]])
    assert parse_measure("RBP(p=0.8)").value(lists)[0] == pytest.approx(0.40992, abs=1e-15)


def test_names_and_capabilities():
    assert RBP in METRICS
    assert parse_measure("RBP(p=0.8)") == RBP() and str(RBP(p=0.5, cutoff=10)) == "RBP(p=0.5)@10"
    assert parse_measure("RBP(p=0.95,gain=exp)@20") == RBP(p=0.95, gain="exp", cutoff=20)
    assert not RBP().GRADED and RBP(gain="linear").GRADED
    assert RBP.HAS_SWAP_DELTA and RBP.LINEAR_IN_P and RBP.SMOOTH_FORM == "positional"
    with pytest.raises(MeasureNameError):
        parse_measure("RBP(p=1.5)")


def test_evaluate_cli(capsys):
    """``python -m maxent.evaluate -m 'RBP(p=0.8)'`` on the bundled TREC-COVID sample prints the
    mean over topics of the value computed here from the ranked lists."""
    qrels = REPO / "trec_runs" / "qrels-rnd1.txt"
    run = REPO / "trec_runs" / "runs" / "BITEM_df.gz"
    assert evaluate_main([str(qrels), str(run), "-m", "RBP(p=0.8)", "-m", "RBP(p=0.9,gain=linear)@10"]) == 0
    got = {r.split("\t")[0].strip(): float(r.split("\t")[2]) for r in capsys.readouterr().out.splitlines()
           if r.startswith("RBP")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lists = rank_runs([read_run(run)], read_qrels(qrels))
    for name in ("RBP(p=0.8)", "RBP(p=0.9,gain=linear)@10"):
        m = parse_measure(name)
        assert got[str(m)] == pytest.approx(m.value(lists).mean(), abs=5e-5)


@pytest.mark.parametrize("name", ["RBP(p=0.8)", "RBP(p=0.9,gain=exp)"])
def test_generic_solver(name, rng):
    """RBP is linear in p: the exact dual solver hits the target, and the real list is feasible."""
    m = parse_measure(name)
    g = rng.integers(0, 3, (6, 12))
    lists = RankedLists.from_grades(g, np.stack([np.bincount(r, minlength=3) for r in g]))
    res = solve(m, m.value(lists), lists)
    assert res.success.all()
    np.testing.assert_allclose(m.expectation(res.p, lists), m.value(lists), atol=1e-9)


def test_lambdas_and_smooth_objectives(rng):
    """LambdaRank through the generic kernels (dense = blocks), SoftRank and ApproxRank tend to
    the metric for small noise / large alpha and beta."""
    for name in ("RBP(p=0.8)", "RBP(p=0.7,gain=exp)@5"):
        m = parse_measure(name)
        y = rng.integers(0, 4, (2, 40))
        s = rng.standard_normal((2, 40))
        counts = np.stack([np.bincount(r, minlength=4) for r in y])
        ctx = DeltaContext(m, counts)
        np.testing.assert_allclose(lambda_gradients(s, y, ctx, method="blocks"),
                                   lambda_gradients(s, y, ctx, method="dense"), atol=1e-13)
        n = 8
        order = rank_by_score(s[:1, :n])[0]
        want = m.value(RankedLists.from_grades(y[:1, :n][:, order], counts[:1]))[0]
        ctx8 = DeltaContext(m, counts[:1])
        assert soft_metric(ctx8, s[0, :n], y[0, :n], sigma_s=1e-4, gradient=False) == pytest.approx(want, abs=1e-9)
        assert approx_metric(ctx8, s[0, :n], y[0, :n], alpha=1e5, beta=1e4, gradient=False) == \
            pytest.approx(want, abs=1e-6)


@pytest.mark.parametrize("solver", ["numpy", "kernels"])
def test_solver_with_relevant_documents_only_very_deep(solver):
    """Relevant documents only from rank 60, 80 or 100 on give RBP values of 3e-7 to 4e-11, where
    the weights p^(n-1) span ~100 orders of magnitude. A Newton ridge scaled to the counts'
    curvature froze the metric multiplier's steps (these lists: not_converged after 200 steps;
    TREC-COVID: 71 of 4,290 lists). Oracle: the constraints checked here on the returned p."""
    m = parse_measure("RBP")
    N = 1000
    g = np.zeros((3, N), dtype=np.int64)
    for b, first in enumerate((60, 80, 100)):
        g[b, first::37] = 1 + (np.arange(len(g[b, first::37])) % 2)
    lists = RankedLists.from_grades(g, np.stack([np.bincount(r, minlength=3) for r in g]))
    v = m.value(lists)
    assert (v > 1e-11).all() and (v < 1e-6).all()
    if solver == "numpy":
        from tests.numpy_solver import solve_numpy as run
    else:
        run = solve
    res = run(m, v, lists)
    assert (np.asarray(res.status) == "optimal").all(), res.to_frame()[["status", "nit", "residual"]]
    # relative: the values are 3e-7 to 4e-11, so an absolute 1e-10 would accept p with E = 0
    np.testing.assert_allclose(m.expectation(res.p, lists), v, rtol=1e-8, atol=0)
    relevant = res.p if res.p.ndim == 2 else 1.0 - res.p[:, :, 0]      # binary or graded p
    np.testing.assert_allclose(relevant.sum(axis=1), lists.rel_counts[:, 1:].sum(axis=1), atol=1e-9)
