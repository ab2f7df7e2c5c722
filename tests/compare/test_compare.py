"""maxent.compare: tests against scipy, exact enumeration and the textbook corrections."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from maxent.cli.compare import main
from maxent.compare import compare, compare_values
from maxent.stats import adjust, effect_sizes, randomisation_test
from maxent.errors import ParameterError

from analysis._cli import BUNDLED_QRELS, BUNDLED_RUNS


def _enumerate_p(d):
    """Oracle: the exact randomisation p-value by listing all 2^n sign vectors in Python."""
    obs = abs(sum(d))
    hits = 0
    for s in itertools.product((1, -1), repeat=len(d)):
        hits += abs(sum(si * di for si, di in zip(s, d))) >= obs - 1e-12
    return hits / 2 ** len(d)


def test_t_and_wilcoxon_equal_scipy():
    rng = np.random.default_rng(3)
    v = rng.random((4, 25))
    out = compare_values(v, list("abcd"), n_permutations=200, n_bootstrap=200)
    for row in out.itertuples(index=False):
        a, b = v["abcd".index(row.run_a)], v["abcd".index(row.run_b)]
        assert row.p_t == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-12)
        assert row.p_wilcoxon == pytest.approx(stats.wilcoxon(a, b).pvalue, rel=1e-12)
        assert row.p_sign == pytest.approx(stats.binomtest(int((a > b).sum()), 25).pvalue, rel=1e-12)
    assert len(out) == 6                                          # 4 runs: 4*3/2 pairs


def test_randomisation_exact_equals_enumeration():
    # ties in |d| and a zero difference make the >= comparisons matter
    cases = [np.array([0.3, -0.1, 0.2, 0.1, 0.0, -0.3, 0.25, 0.05]),
             np.array([0.1, 0.1, -0.1, 0.1, -0.1, 0.2, 0.1]),
             np.array([0.5, 0.4, 0.3, 0.2, 0.1, 0.05])]
    for d in cases:
        p = randomisation_test(d[None, :], n_permutations=2 ** len(d))   # 2^n <= P: exact
        assert p[0] == pytest.approx(_enumerate_p(d.tolist()), abs=1e-15)
    # all positive: only s = +1 and s = -1 reach the observed sum -> 2 / 2^6
    assert randomisation_test(cases[2][None, :], 64)[0] == pytest.approx(2 / 64)
    assert randomisation_test(np.zeros((1, 5)), 100)[0] == 1.0


def test_randomisation_monte_carlo_near_exact():
    rng = np.random.default_rng(7)
    d = rng.normal(0.05, 0.2, size=(3, 12))
    exact = np.array([_enumerate_p(row.tolist()) for row in d])
    P = 4000                                                     # < 2^12 = 4096: Monte Carlo
    p = randomisation_test(d, n_permutations=P, seed=1)
    sd = np.sqrt(exact * (1 - exact) / P)
    assert np.all(np.abs(p - exact) <= 5 * sd + 1e-12)
    assert np.array_equal(p, randomisation_test(d, n_permutations=P, seed=1))   # seeded


def test_adjust_holm_and_bh():
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.5, 0.04])
    m = len(p)
    # Holm by its definition: step down over the sorted p, running maximum
    order = np.argsort(p, kind="stable")
    ref, run = np.empty(m), 0.0
    for k, i in enumerate(order):
        run = max(run, min(1.0, (m - k) * p[i]))
        ref[i] = run
    assert np.allclose(adjust(p, "holm"), ref, rtol=0, atol=1e-15)
    assert np.allclose(adjust(p, "bh"), stats.false_discovery_control(p, method="bh"), rtol=1e-12)
    assert np.array_equal(adjust(p, "none"), p)
    with pytest.raises(ParameterError):
        adjust(p, "bonferonni")


def test_effect_sizes_against_resampling_loop():
    rng = np.random.default_rng(2)
    d = rng.normal(0.1, 0.3, size=(2, 15))
    out = effect_sizes(d, n_boot=500, seed=4)
    assert np.allclose(out["diff"], d.mean(axis=1))
    assert np.allclose(out["d"], d.mean(axis=1) / d.std(axis=1, ddof=1))
    idx = np.random.default_rng(4).integers(0, 15, size=(500, 15))   # the documented resampling
    for k in range(2):
        means = [d[k][i].mean() for i in idx]
        dz = [d[k][i].mean() / d[k][i].std(ddof=1) for i in idx]
        assert out["diff_lo"][k] == pytest.approx(np.quantile(means, 0.025))
        assert out["diff_hi"][k] == pytest.approx(np.quantile(means, 0.975))
        assert out["d_lo"][k] == pytest.approx(np.quantile(dz, 0.025))
        assert out["d_lo"][k] < out["d"][k] < out["d_hi"][k]


def test_compare_bundled_runs_marks_and_means():
    from maxent.evaluate import aggregate, evaluate

    res = compare(BUNDLED_QRELS, BUNDLED_RUNS, ["AP", "nDCG@10"], n_permutations=500, n_bootstrap=300)
    R = len(res.runs)
    assert len(res.pairs) == 2 * R * (R - 1) // 2
    agg = aggregate(evaluate(BUNDLED_QRELS, BUNDLED_RUNS, ["AP", "nDCG@10"], complete=True))
    means = res.means()
    for r, m, v in agg[["run", "measure", "value"]].itertuples(index=False):
        assert means.loc[r, m] == pytest.approx(v, abs=1e-12)        # oracle: evaluate's means
    marks, sig = res.marks(), res.significant()
    letters = {r: chr(97 + i) for i, r in enumerate(res.runs)}
    n_marks = sum(len(v) for v in marks.values())
    assert n_marks == int(sig.sum()) > 0
    for row, s in zip(res.pairs.itertuples(index=False), sig):
        win, lose = (row.run_a, row.run_b) if row.mean_a > row.mean_b else (row.run_b, row.run_a)
        assert (letters[lose] in marks[(win, row.measure)]) == bool(s and row.mean_a != row.mean_b)
        assert row.p_t_adj >= row.p_t and (row.p_t_adj < 0.05) == s
    base = compare(BUNDLED_QRELS, BUNDLED_RUNS, ["AP"], baseline="bm25_baseline", n_permutations=100,
                   n_bootstrap=100)
    assert len(base.pairs) == R - 1 and set(base.pairs["run_b"]) == {"bm25_baseline"}


def test_cli_formats_and_errors(capsys):
    args = [str(BUNDLED_QRELS), str(BUNDLED_RUNS / "T5R1.gz"), str(BUNDLED_RUNS / "bm25_baseline.gz"),
            str(BUNDLED_RUNS / "run1.gz"), "-m", "AP", "-m", "GAP", "-m", "RBP", "--permutations", "200", "--bootstrap", "200"]
    for fmt in ("terminal", "markdown", "latex", "csv", "json"):
        assert main(args + ["--format", fmt]) == 0
        out = capsys.readouterr().out
        if fmt == "json":
            doc = json.loads(out)
            assert len(doc["pairs"]) == 9 and [r["letter"] for r in doc["runs"]] == ["a", "b", "c"]
        elif fmt == "csv":
            assert out.splitlines()[0].startswith("measure,run_a,run_b") and len(out.splitlines()) == 10
        else:
            assert ("bm25\\_baseline" if fmt == "latex" else "bm25_baseline") in out and "superscripts" in out
    assert main(args + ["--details", "--baseline", "bm25_baseline"]) == 0
    out = capsys.readouterr().out
    assert "d_z [95% CI]" in out and len([l for l in out.splitlines() if "bm25_baseline  " in l]) >= 4
    assert main(args + ["--baseline", "nope"]) == 1
    assert "error: baseline 'nope'" in capsys.readouterr().err
    assert main(args + ["-m", "NoSuchMeasure"]) == 1
    assert capsys.readouterr().err.startswith("error:")


def test_topics_compared_complete_or_common():
    """-c semantics: a run missing topics scores 0 there; --common-topics keeps the shared ones."""
    import dataclasses

    from maxent.trec import read_run

    full = read_run(BUNDLED_RUNS / "T5R1.gz")
    other = read_run(BUNDLED_RUNS / "run1.gz")
    keep = np.isin(full.qid, np.unique(full.qid)[:10])
    part = dataclasses.replace(full.subset(keep), name="T5R1_10")
    res = compare(BUNDLED_QRELS, [part, other], ["AP"], n_permutations=100, n_bootstrap=100)
    assert int(res.pairs["topics"].iloc[0]) == 30
    missing = res.values[(res.values.run == "T5R1_10")].sort_values("value")
    assert (missing["value"].iloc[:20] == 0).all()
    common = compare(BUNDLED_QRELS, [part, other], ["AP"], n_permutations=100, n_bootstrap=100, complete=False)
    assert int(common.pairs["topics"].iloc[0]) == 10 and common.runs == ("T5R1_10", "run1")
    assert common.means().loc["run1", "AP"] == pytest.approx(
        common.values[common.values.run == "run1"]["value"].mean())


def test_compare_values_pairs_seeds_and_minimum_topics():
    from maxent.compare import compare_values
    from maxent.errors import ParameterError

    rng = np.random.default_rng(5)
    v = rng.random((3, 12))
    v[1] = v[0] + rng.normal(0, 0.05, 12)            # a close pair: a p-value well inside (0, 1)
    a = compare_values(v, ["x", "y", "z"], n_permutations=300, n_bootstrap=300, seed=4)
    b = compare_values(v, ["x", "y", "z"], n_permutations=300, n_bootstrap=300, seed=4)
    c = compare_values(v, ["x", "y", "z"], n_permutations=300, n_bootstrap=300, seed=5)
    pd.testing.assert_frame_equal(a, b)               # the seed makes every resampled number reproducible
    close = a[(a.run_a == "x") & (a.run_b == "y")].iloc[0]
    assert 0 < close.p_bootstrap < 1 and close.p_bootstrap != c[(c.run_a == "x") & (c.run_b == "y")].iloc[0].p_bootstrap
    means = dict(zip("xyz", v.mean(axis=1)))
    for r in a.itertuples(index=False):               # each pair's means are its two runs' means
        assert r.mean_a == pytest.approx(means[r.run_a]) and r.mean_b == pytest.approx(means[r.run_b])
        assert r.topics == 12
    assert len(compare_values(v[:, :2], ["x", "y", "z"], n_permutations=10, n_bootstrap=10)) == 3
    with pytest.raises(ParameterError, match="at least 2 common topics, got 1"):
        compare_values(v[:, :1], ["x", "y", "z"])
