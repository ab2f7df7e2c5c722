"""``python -m analysis.metric_sets``: the command end to end on a slice of the bundled sample,
the regression baseline against numpy's least squares, greedy selection, Kendall tau against
scipy, the marginal tests on a synthetic table and, on the bundled sample, what inferring from
{AP, P@10} adds to AP."""
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.metric_sets import baselines, cli, compute, tables
from tests._bundled import BUNDLED, write_tiny_sample


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    runs = ["BITEM_df", "T5R1", "bm25_baseline", "jlbase", "run1"]
    test = write_tiny_sample(tmp_path_factory.mktemp("test"), runs, {str(t) for t in range(1, 7)})
    train = write_tiny_sample(tmp_path_factory.mktemp("train"), runs, {str(t) for t in range(11, 17)})
    return test, train


def _run(sample, out, *extra):
    return cli.main(["--runs", str(sample / "runs"), "--qrels", str(sample / "qrels.txt"), "--out", str(out),
                     "--depth", "200", "--bootstrap", "50", "--splits", "20", "--no-progress",
                     "-m", "P@10,nDCG,RR", *extra])


@pytest.fixture(scope="module")
def result(samples, tmp_path_factory):
    test, train = samples
    out = tmp_path_factory.mktemp("out")
    code = _run(test, out, "--max-size", "2", "--train", f"other={train / 'qrels.txt'},{train / 'runs'}")
    assert code == 0
    return out


def test_command_writes_tables_and_figures(result):
    for name in ("instances.csv", "predictions.csv", "sets.csv", "greedy.csv", "marginal.csv", "webber.csv",
                 "webber_tests.csv", "gupta.csv", "gupta_tests.csv", "fig_heatmap.png", "fig_heatmap.csv",
                 "fig_greedy.png", "fig_greedy.csv"):
        assert (result / name).stat().st_size > 0, name
    sets = pd.read_csv(result / "sets.csv")
    assert {"P@10", "nDCG", "RR", "P@10 + nDCG"} <= set(sets["set"])
    # every list is counted under exactly one status
    assert (sets[list(tables.STATUSES)].sum(axis=1) == sets["lists"]).all()
    pred = pd.read_csv(result / "predictions.csv")
    assert not ((pred["set"] == "RR") & (pred["target"] == "RR")).any()      # never a set's own metric
    assert not ((pred["set"] == "RR") & (pred["target"] == "nDCG")).any()    # a binary solve has no grades
    assert ((pred["set"] == "P@10 + RR") & (pred["target"] == "nDCG")).sum() == 0
    assert ((pred["set"] == "P@10 + nDCG") & (pred["target"] == "RR")).sum() == 1
    gupta = pd.read_csv(result / "gupta.csv")
    assert (gupta["train collections"] == "other").all() and len(gupta)


def test_resume_gives_the_same_tables(samples, result, tmp_path):
    test, train = samples
    args = ("--max-size", "2", "--train", f"other={train / 'qrels.txt'},{train / 'runs'}")
    assert _run(test, tmp_path, *args) == 0
    first = (tmp_path / "sets.csv").read_bytes()
    assert _run(test, tmp_path, *args, "--resume") == 0
    assert (tmp_path / "sets.csv").read_bytes() == first
    assert (tmp_path / "sets.csv").read_bytes() == (result / "sets.csv").read_bytes()


def test_bad_options_are_one_error_line(samples, tmp_path, capsys):
    test, _ = samples
    assert _run(test, tmp_path, "--max-size", "9") == 1
    assert "--max-size" in capsys.readouterr().err
    assert _run(test, tmp_path, "--train", "nothing") == 1
    assert "--train" in capsys.readouterr().err


def test_regression_is_numpy_least_squares():
    rng = np.random.default_rng(3)
    X = rng.random((12, 2))
    y = 0.3 + X @ np.array([0.5, -0.2]) + 0.01 * rng.standard_normal(12)
    coef = baselines.ols_fit(X, y)
    want = np.linalg.lstsq(np.column_stack([np.ones(12), X]), y, rcond=None)[0]
    np.testing.assert_allclose(coef, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(baselines.ols_predict(coef, X), np.column_stack([np.ones(12), X]) @ want)


def test_gupta_fits_on_training_means_only():
    """A target that is exactly 2 * AP + 0.1 in training is predicted so on the test systems."""
    train = pd.DataFrame({"run": list("abcd"), "collection": "c", "AP": [0.1, 0.2, 0.3, 0.5]})
    train["P@10"] = 2 * train["AP"] + 0.1
    inst = pd.DataFrame({"set": "AP", "size": 1, "run": ["x", "x", "y", "y"], "topic": ["1", "2", "1", "2"],
                         "eligible": True, "pred P@10": [0.2, 0.4, 0.5, 0.7]})
    actual = pd.DataFrame({"run": ["x", "x", "y", "y"], "topic": ["1", "2", "1", "2"],
                           "actual AP": [0.1, 0.2, 0.3, 0.2], "actual P@10": [0.3, 0.5, 0.6, 0.6]})
    g = baselines.gupta(inst, actual, train, ["AP", "P@10"])
    r = g.iloc[0]
    # system means: x AP 0.15 -> 0.4 (actual 0.4), y AP 0.25 -> 0.6 (actual 0.6)
    assert r["rms ols"] == pytest.approx(0.0, abs=1e-12)
    assert r["rms maxent"] == pytest.approx(np.sqrt(((0.3 - 0.4) ** 2 + (0.6 - 0.6) ** 2) / 2))


def test_greedy_picks_the_argmin_at_each_step():
    pool = ["A", "B", "C", "D"]
    values = {"A": 0.5, "B": 0.3, "C": 0.4, "D": 0.9,
              "A + B": 0.25, "B + C": 0.2, "B + D": 0.1, "A + C": 0.05,     # A + C is best, but not via B
              "A + B + D": 0.09, "B + C + D": 0.08}
    steps = tables.greedy(values, pool, 3)
    assert [(s, name, added) for s, name, added, _ in steps] == [
        (1, "B", "B"), (2, "B + D", "D"), (3, "B + C + D", "C")]
    assert [v for *_, v in steps] == [0.3, 0.1, 0.08]
    assert tables.greedy({"A": 1.0, "B": 1.0}, ["A", "B"], 1)[0][2] == "A"      # ties: pool order


def test_kendall_tau_is_scipys():
    rng = np.random.default_rng(0)
    a, b = rng.random(15), rng.random(15)
    b[3] = b[4]                                                          # a tie: tau-b
    assert tables.kendall(a, b) == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-14)
    a[2] = np.nan
    ok = np.isfinite(a)
    assert tables.kendall(a, b) == pytest.approx(stats.kendalltau(a[ok], b[ok]).statistic, abs=1e-14)


def test_marginal_decides_a_uniform_improvement():
    """Synthetic lists: adding B lowers every list's RMS by 0.05 (with noise); adding A to B
    changes nothing systematic."""
    rng = np.random.default_rng(1)
    topics = [str(t) for t in range(30)]
    base = rng.uniform(0.2, 0.3, 30)
    rows = []
    for name, size, rms in (("A", 1, base), ("B", 1, base + rng.normal(0, 0.01, 30)),
                            ("A + B", 2, base - 0.05 + rng.normal(0, 0.01, 30))):
        rows.append(pd.DataFrame({"set": name, "size": size, "run": "r", "topic": topics, "eligible": True,
                                  "rms": rms}))
    m = tables.marginal(pd.concat(rows), ["A", "B"], n_boot=200).set_index(["set", "added"])
    assert m.loc[("A", "B"), "verdict"] == "A + B lower"
    assert m.loc[("A", "B"), "diff"] == pytest.approx(-0.05, abs=0.01)
    assert m.loc[("B", "A"), "verdict"] == "A + B lower"
    assert len(m) == 2 and (m["p_holm"] >= m["p_t"]).all()


def test_webber_splits_are_halves_and_p10_ranks_itself_perfectly():
    rng = np.random.default_rng(2)
    runs, topics = [f"r{i}" for i in range(6)], [str(t) for t in range(10)]
    frame = pd.DataFrame([(r, t) for r in runs for t in topics], columns=["run", "topic"])
    skill = {r: i / 10 for i, r in enumerate(runs)}
    frame["R"] = 5
    frame["actual P@10"] = frame["run"].map(skill)                       # topics do not matter
    frame["actual AP"] = frame["actual P@10"] + rng.normal(0, 0.2, len(frame))
    summary, tests = baselines.webber(frame, ("AP", "P@10"), "P@10", splits=30)
    s = summary.set_index("metric")
    assert s.loc["P@10", "tau"] == pytest.approx(1.0) and s.loc["P@10", "topics per half"] == 5
    assert s.loc["AP", "tau"] < 1.0
    assert tests.iloc[0]["verdict"] in ("P@10 higher", "undecided")


def test_sets_of_several_metrics_on_the_bundled_sample():
    """Inferring from {AP, P@10} at once against AP alone, on every third list of the bundled
    sample (the whole sample takes the solver about 30 s), on the lists both solved."""
    from maxent.ranked import rank_runs
    from maxent.trec import read_qrels, read_runs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lists = rank_runs(read_runs(BUNDLED / "runs"), read_qrels(BUNDLED / "qrels-rnd1.txt"), depth=1000)
    lists = lists.take(np.arange(0, len(lists), 3))
    pool = ["AP", "P@10"]
    one = compute.solve_set(("AP",), lists, pool, 1, "retrieved")
    two = compute.solve_set(("AP", "P@10"), lists, pool, 1, "retrieved")
    both = one["eligible"] & two["eligible"]
    assert both.sum() > 0.9 * len(lists)
    assert two.loc[both, "rms"].mean() < one.loc[both, "rms"].mean()


def test_report_tables_render_from_the_command_output(result, tmp_path):
    import shutil

    from analysis import report

    folder = tmp_path / "metric_sets" / "trec_runs"
    folder.mkdir(parents=True)
    for name in ("predictions.csv", "sets.csv", "greedy.csv", "marginal.csv", "webber.csv", "webber_tests.csv",
                 "gupta.csv", "gupta_tests.csv"):
        shutil.copy(result / name, folder / name)
    for name in ("metric_sets_best", "metric_sets_status", "metric_sets_singles", "metric_sets_greedy",
                 "metric_sets_marginal", "metric_sets_gupta", "metric_sets_webber"):
        text = report.TABLES[name](tmp_path)
        assert text.count("\n") >= 2 and "|---" in text, name
