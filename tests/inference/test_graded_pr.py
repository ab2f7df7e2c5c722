"""Graded precision-recall curves (Robertson, Kanoulas & Yilmaz 2010, section 3.2): real and inferred from p_n(z)."""
from __future__ import annotations

import numpy as np
import pytest

from maxent.inference import (graded_pr_errors, graded_pr_points, inferred_graded_pr, inferred_graded_pr_curve,
                              real_pr_points)
from maxent.metrics import parse_measure
from maxent.metrics.gap import GAP
from maxent.ranked import RankedLists

G_SETTINGS = [(0.5, 0.5), (0.2, 0.8), (1.0, 0.0), (0.0, 1.0)]


def _lists(seed, B=6, N=12, L=3):
    rng = np.random.default_rng(seed)
    grades = rng.integers(-1, L, size=(B, N))
    lengths = rng.integers(N // 2, N + 1, size=B)
    rel_counts = np.stack([np.bincount(np.maximum(r, 0)[:n], minlength=L) for r, n in zip(grades, lengths)])
    rel_counts = rel_counts + rng.integers(0, 3, size=(B, L))            # some relevant never retrieved
    return RankedLists.from_grades(grades, rel_counts, lengths)


def _indicator(lists):
    L = lists.levels
    g = np.maximum(lists.grades, 0)
    return (g[:, :, None] == np.arange(L)).astype(float)


@pytest.mark.parametrize("g", G_SETTINGS)
def test_real_points_match_pivot_definition(g):
    """Oracle: Robertson, Kanoulas & Yilmaz (2010)'s definitions evaluated with explicit loops over pivots and ranks."""
    lists = _lists(1)
    pts = graded_pr_points(lists, g)
    w = np.concatenate(([0.0], np.cumsum(g)))
    for b in range(len(lists)):
        grades = np.maximum(lists.grades[b], 0)
        Z = sum(lists.rel_counts[b, z] * w[z] for z in range(3))
        k = 0
        for n in range(1, lists.depth + 1):
            i_n = grades[n - 1]
            if w[i_n] == 0:
                continue
            delta = sum(w[min(grades[m - 1], i_n)] for m in range(1, n + 1))
            assert pts.precision[b, k] == pytest.approx(delta / (n * w[i_n]), abs=1e-12)
            assert pts.recall[b, k] == pytest.approx(sum(w[x] for x in grades[:n]) / Z, abs=1e-12)
            assert pts.ranks[b, k] == n and pts.valid[b, k]
            k += 1
        assert pts.valid[b].sum() == k


@pytest.mark.parametrize("g", G_SETTINGS)
def test_area_under_graded_curve_is_gap(g):
    """Robertson, Kanoulas & Yilmaz (2010): GAP = sum of graded precision x recall step;
    oracle: the GAP metric."""
    lists = _lists(2)
    pts = graded_pr_points(lists, g)
    step = np.diff(np.concatenate([np.zeros((len(lists), 1)), pts.level], axis=1), axis=1)
    area = np.where(pts.valid, pts.precision * step, 0).sum(axis=1) / np.where(pts.Z > 0, pts.Z, 1)
    assert np.allclose(area, GAP(g=g).value(lists), atol=1e-12)


@pytest.mark.parametrize("g", G_SETTINGS)
def test_inferred_curve_area_is_expected_gap(g):
    """sum_n GP_e(n) dW(n) / Z = E[GAP] under the product distribution; oracle: GAP.expectation."""
    lists = _lists(3)
    rng = np.random.default_rng(4)
    p = rng.dirichlet(np.ones(3), size=(len(lists), lists.depth))
    W, GP = inferred_graded_pr(p, g)
    dW = np.diff(np.concatenate([np.zeros((len(lists), 1)), W], axis=1), axis=1)
    Z = graded_pr_points(lists, g).Z
    assert np.allclose((GP * dW).sum(axis=1) / Z, GAP(g=g).expectation(p, lists), atol=1e-12)


def test_inferred_precision_monte_carlo():
    """GP_e(n) = E[sum_m delta(m, n)] / (n E[w(i_n)]); oracle: sampling grades from p."""
    rng = np.random.default_rng(5)
    g = (0.3, 0.7)
    w = np.array([0.0, 0.3, 1.0])
    p = rng.dirichlet(np.ones(3), size=(1, 6))
    _, GP = inferred_graded_pr(p, g)
    S = 200_000
    u = rng.random((S, 6, 1))
    grades = (u > np.cumsum(p[0], axis=1)[None]).sum(axis=2)            # (S, 6) samples
    for n in range(1, 7):
        i_n = grades[:, n - 1]
        delta = w[np.minimum(grades[:, :n], i_n[:, None])].sum(axis=1)
        assert GP[0, n - 1] == pytest.approx(delta.mean() / (n * w[i_n].mean()), rel=0.02)


@pytest.mark.parametrize("alignment", ["recall", "rank"])
def test_indicator_distribution_reproduces_real_curve(alignment):
    lists = _lists(6)
    p = _indicator(lists)
    for g in G_SETTINGS:
        err = graded_pr_errors(p, lists, g, alignment)
        has = graded_pr_points(lists, g).valid.sum(axis=1) > 0
        assert np.allclose(err.rms[has], 0, atol=1e-12) and np.isnan(err.rms[~has]).all()


@pytest.mark.parametrize("g", G_SETTINGS)
def test_inferred_curve_of_indicator_is_the_real_curve(g):
    """At the 0/1 indicator of the real grades, (W / Z, GP_e) at each real point's rank is the real
    (recall, precision); oracle: graded_pr_points (itself checked against the pivot loops above)."""
    lists = _lists(9)
    pts = graded_pr_points(lists, g)
    rec, prec = inferred_graded_pr_curve(_indicator(lists), pts.Z, g)
    r = np.clip(pts.ranks - 1, 0, lists.depth - 1)
    v = pts.valid
    assert v.any()
    assert np.allclose(np.take_along_axis(rec, r, axis=1)[v], pts.recall[v], atol=1e-12)
    assert np.allclose(np.take_along_axis(prec, r, axis=1)[v], pts.precision[v], atol=1e-12)
    assert np.all(rec[pts.Z == 0] == 0)


def test_binary_qrels_give_the_binary_pr_curve():
    """One grade above 0 (c = 1): the graded curve is the binary one (recall i/R, precision i/n_i)."""
    lists = _lists(7, L=2)
    pts = graded_pr_points(lists, (1.0,))
    ranks, valid, R = real_pr_points(lists, 1)
    assert np.array_equal(pts.valid, valid) and np.array_equal(pts.ranks[valid], ranks[valid])
    i = np.cumsum(valid, axis=1)
    assert np.allclose(pts.precision[valid], (i / np.maximum(ranks, 1))[valid])
    assert np.allclose(pts.recall[valid], (i / np.maximum(R, 1)[:, None])[valid])


def test_worse_distribution_has_larger_error_and_binary_p_is_refused():
    lists = _lists(8)
    uniform = np.full((len(lists), lists.depth, 3), 1 / 3)
    err = graded_pr_errors(uniform, lists, (0.5, 0.5))
    assert np.nanmean(err.rms) > 0.01
    with pytest.raises(ValueError):
        inferred_graded_pr(np.full((2, 5), 0.5))
    assert parse_measure("GAP(g=0.5,0.5)") == GAP(g=(0.5, 0.5))


# ----------------------------------------------------------------------- analysis options
def test_analysis_maxent_graded_pr_option(tmp_path, capsys):
    import pandas as pd

    from analysis import maxent as mx
    from analysis._cli import BUNDLED_QRELS, BUNDLED_RUNS
    from maxent.solver import solve
    from maxent.trec import read_qrels, read_run
    from maxent.ranked import rank_runs

    run = BUNDLED_RUNS / "T5R1.gz"
    args = ["--runs", str(run), "--qrels", str(BUNDLED_QRELS), "--metrics", "AP,GAP(g=0.5,0.5),nDCG", "--no-progress"]
    assert mx.main(args + ["--out", str(tmp_path / "g"), "--graded-pr", "0.5,0.5"]) == 0
    assert "graded PR curve" in capsys.readouterr().out
    inst = pd.read_csv(tmp_path / "g" / "instances.csv", dtype={"topic": str})
    assert inst.loc[inst.metric == "AP", "graded rms"].isna().all()          # binary solve: no grades
    gap = inst[inst.metric == "GAP(g=0.5,0.5)"]
    assert gap["graded rms"].notna().sum() > 20
    for t in (1, 2):                                                       # same curve at every threshold
        assert np.allclose(gap[gap.threshold == t]["graded rms"], gap[gap.threshold == 1]["graded rms"],
                           equal_nan=True)
    # wiring: one row against a fresh solve scored directly (g and alignment passed through)
    lists = rank_runs([read_run(run)], read_qrels(BUNDLED_QRELS))
    metric = parse_measure("GAP(g=0.5,0.5)")
    res = solve(metric, metric.value(lists), lists)
    err = graded_pr_errors(res.p, lists, (0.5, 0.5), "recall")
    row = gap[gap.threshold == 1].set_index("topic")
    for b in np.flatnonzero(res.success)[:5]:
        assert row.loc[lists.topics[b], "graded rms"] == pytest.approx(err.rms[b], abs=1e-8)
    summary = pd.read_csv(tmp_path / "g" / "summary.csv")
    s = summary[(summary.metric == "GAP(g=0.5,0.5)") & (summary.threshold == 1)].iloc[0]
    e = gap[(gap.threshold == 1) & gap["graded eligible"]]
    s2 = summary[(summary.metric == "GAP(g=0.5,0.5)") & (summary.threshold == 2)].iloc[0]
    assert s2["graded PR RMS"] == s["graded PR RMS"] and s["graded instances"] == len(e) > 20
    assert s["graded PR RMS"] == pytest.approx(e["graded rms"].mean())
    assert (tmp_path / "g" / "fig_graded_pr_examples.png").stat().st_size > 0
    assert len(pd.read_csv(tmp_path / "g" / "fig_graded_pr_examples.csv"))
    # without the option: no graded columns, and the settings stamp is unchanged
    assert mx.main(args + ["--out", str(tmp_path / "plain")]) == 0
    assert "graded rms" not in pd.read_csv(tmp_path / "plain" / "instances.csv").columns
    assert "graded_pr" not in (tmp_path / "plain" / "config.json").read_text()
    assert mx.main(args + ["--out", str(tmp_path / "bad"), "--graded-pr", "0.5,0.6"]) == 1
    assert capsys.readouterr().err.splitlines()[-1].startswith("error:")   # after any phase lines


def test_gap_thresholds_graded_pr_option(tmp_path, capsys):
    import pandas as pd

    from analysis import gap_thresholds
    from analysis._cli import BUNDLED_QRELS, BUNDLED_RUNS

    args = ["--runs", str(BUNDLED_RUNS / "T5R1.gz"), str(BUNDLED_RUNS / "run1.gz"), "--qrels", str(BUNDLED_QRELS),
            "--step", "0.5",
            "--skip-bootstrap", "--min-relevant", "1", "--no-progress", "--graded-pr", "uniform",
            "--out", str(tmp_path)]
    assert gap_thresholds.main(args) == 0
    assert "graded PR curve (g = 0.5,0.5)" in capsys.readouterr().out
    sweep = pd.read_csv(tmp_path / "sweep.csv")
    assert {"graded rms", "graded mae", "graded instances"} <= set(sweep.columns)
    assert sweep.loc[sweep.metric == "GAP", "graded rms"].notna().all()
    assert (tmp_path / "sweep.png").stat().st_size > 0
