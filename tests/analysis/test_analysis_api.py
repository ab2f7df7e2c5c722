"""The analyses as functions (maxent.informativeness, analysis.gap_thresholds), the papers'
tables (analysis.tables) and the plots (analysis.plots).

Oracles: the command lines' files (``python -m analysis.maxent`` / ``analysis.gap_thresholds``,
written from per-run chunks), explicit resampling for the topic bootstrap, the library's PR
curve functions for the plotted curves.
"""
from __future__ import annotations

import gzip
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import maxent  # noqa: E402
from analysis import gap_thresholds as gt  # noqa: E402
from analysis import maxent as mx_cli  # noqa: E402
from analysis import plots  # noqa: E402
from analysis.tables import prediction_table, summarize  # noqa: E402
from maxent import ParameterError  # noqa: E402
from maxent.informativeness import topic_lists  # noqa: E402
from maxent.stats import resample_counts, topic_bootstrap_mean  # noqa: E402
from maxent.inputs import qrels_frame, run_frame  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "trec_runs"
RUNS = ["BITEM_df", "T5R1", "jlbase"]
TOPICS = {"1", "2", "3", "5", "8", "13"}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    d = tmp_path_factory.mktemp("api")
    (d / "runs").mkdir()
    for name in RUNS:
        lines = gzip.open(BUNDLED / "runs" / f"{name}.gz", "rt").read().splitlines()
        (d / "runs" / name).write_text("\n".join(l for l in lines if l.split()[0] in TOPICS) + "\n")
    q = [l for l in (BUNDLED / "qrels-rnd1.txt").read_text().splitlines() if l.split()[0] in TOPICS]
    (d / "qrels.txt").write_text("\n".join(q) + "\n")
    return d


def _read(path):
    return pd.read_csv(path, dtype={"topic": str, "count": str})


def _equal(cli: pd.DataFrame, api: pd.DataFrame):
    """The CLI's CSV (values written with 10 significant digits) and the function's frame."""
    assert list(cli.columns) == list(api.columns)
    assert len(cli) == len(api)
    for c in cli.columns:
        a, b = cli[c], api[c]
        if pd.api.types.is_numeric_dtype(b) and not pd.api.types.is_bool_dtype(b):
            np.testing.assert_allclose(a.to_numpy(dtype=float), b.to_numpy(dtype=float), rtol=1e-9, atol=1e-12,
                                       err_msg=c)
        else:
            assert a.astype(str).tolist() == b.astype(str).tolist(), c


@pytest.fixture(scope="module")
def informative(small):
    return maxent.informativeness(small / "qrels.txt", small / "runs", depth=200, graded_pr="uniform",
                                  predict=["P@10", "nDCG@10"])


def test_informativeness_is_what_the_command_writes(small, informative, tmp_path):
    out = tmp_path / "cli"
    assert mx_cli.main(["--runs", str(small / "runs"), "--qrels", str(small / "qrels.txt"), "--out", str(out),
                        "--no-progress", "--depth", "200", "--graded-pr", "uniform",
                        "--predict", "P@10,nDCG@10"]) == 0
    inst, _ = informative
    _equal(_read(out / "instances.csv"), inst)
    summary = summarize(inst, informative.settings)      # the paper's layout, from the same instances
    _equal(pd.read_csv(out / "summary.csv"), summary)
    table = prediction_table(inst, informative.settings)
    assert list(table.columns) == ["from", "threshold", "P@10", "nDCG@10"] and len(table) == len(summary)
    np.testing.assert_allclose(table["P@10"], summary["P@10 rms (topics)"])
    assert set(inst["metric"]) == {"AP", "nDCG", "GAP"} and set(inst["threshold"]) == {1, 2}


def test_informativeness_summary_is_the_mean_error_with_its_interval(informative):
    inst, summary = informative
    assert list(summary.columns) == ["metric", "threshold", "instances", "rms", "rms lo", "rms hi", "mae",
                                     "mae lo", "mae hi", "graded instances", "graded rms", "graded rms lo",
                                     "graded rms hi", "graded mae", "graded mae lo", "graded mae hi"]
    paper = summarize(inst, informative.settings)
    np.testing.assert_array_equal(summary["instances"], paper["instances"])
    np.testing.assert_allclose(summary[["rms", "mae", "graded rms", "graded mae"]].to_numpy(),
                               paper[["rms", "mae", "graded PR RMS", "graded PR MAE"]].to_numpy(), rtol=1e-12)
    e = inst[inst["eligible"]]
    want = topic_bootstrap_mean(e, "mae", ["metric", "threshold"])
    np.testing.assert_array_equal(summary[["mae lo", "mae hi"]].to_numpy(), want[["lo", "hi"]].to_numpy())
    assert ((summary["rms lo"] <= summary["rms"]) & (summary["rms"] <= summary["rms hi"])).all()


def test_informativeness_takes_frames_and_dicts(small, informative):
    from maxent.inputs import qrels_dict, run_dict

    qf, rf = qrels_frame(small / "qrels.txt", "ir_datasets"), run_frame(small / "runs")
    got = maxent.informativeness(qf, rf, depth=200, graded_pr="uniform", predict=["P@10", "nDCG@10"])
    pd.testing.assert_frame_equal(got.instances, informative.instances)
    runs = {n: run_dict(small / "runs" / n) for n in RUNS[:1]}
    one = maxent.informativeness(qrels_dict(qf), runs, ["AP"], threshold=1, depth=200)
    want = informative.instances
    want = want[(want["run"] == RUNS[0]) & (want["metric"] == "AP") & (want["threshold"] == 1)]
    np.testing.assert_array_equal(one.instances["rms"].to_numpy(), want["rms"].to_numpy())


@pytest.mark.parametrize("kwargs, match", [
    ({"threshold": 0}, "threshold"), ({"threshold": [1, "2"]}, "threshold"), ({"count": "all"}, "count"),
    ({"alignment": "x"}, "alignment"), ({"min_relevant": -1}, "min_relevant"), ({"depth": 0}, "depth"),
    ({"metrics": []}, "metrics"), ({"metrics": ["RR", "IPrec@0.5"]}, "metrics: IPrec@0.5 has no expectation"),
    ({"predict": ["num_ret"]}, "predict"), ({"graded_pr": "0.5"}, "GAP"), ({"graded_pr": "x,y"}, "graded_pr"),
    ({"score_precision": "half"}, "score_precision"),
])
def test_informativeness_argument_errors(small, kwargs, match):
    with pytest.raises(maxent.MaxEntError, match=match):
        maxent.informativeness(small / "qrels.txt", small / "runs", **kwargs)


def test_gap_thresholds_is_what_the_command_writes(small, tmp_path):
    out = tmp_path / "cli"
    assert gt.main(["--runs", str(small / "runs"), "--qrels", str(small / "qrels.txt"), "--out", str(out),
                        "--step", "0.25", "--bootstrap", "200", "--top-k", "2", "--no-progress", "--depth", "200",
                        "--min-relevant", "3", "--graded-pr", "uniform"]) == 0
    res = gt.gap_thresholds(qrels_frame(small / "qrels.txt"), run_frame(small / "runs"), step=0.25,
                                bootstrap=200, top_k=2, depth=200, min_relevant=3, graded_pr="uniform")
    _equal(_read(out / "instances.csv"), res.instances)
    _equal(pd.read_csv(out / "sweep.csv", keep_default_na=False, na_values=[""]).fillna({"g": "", "reduces_to": ""}),
           res.sweep)
    _equal(pd.read_csv(out / "asl.csv"), res.asl)
    _equal(pd.read_csv(out / "discriminative.csv"), res.discriminative)
    assert len(res.grid) == 5 and res.thresholds == (1, 2) and set(res.best) == {1, 2}
    sweep = res.sweep
    assert ((sweep["rms lo"] <= sweep["rms"]) & (sweep["rms"] <= sweep["rms hi"])).all()
    skipped = gt.gap_thresholds(small / "qrels.txt", small / "runs", step=0.5, bootstrap=0, depth=200,
                                    topics="1-3")
    assert skipped.asl is None and set(skipped.instances["topic"]) <= {"1", "2", "3"}


def test_gap_thresholds_argument_errors(small):
    for kwargs, match in [({"step": 0.3}, "step must divide 1"), ({"threshold": 3}, "threshold"),
                          ({"topics": "900-901"}, "topics"), ({"alpha": 1.5}, "alpha"), ({"top_k": 0}, "top_k")]:
        with pytest.raises(ParameterError, match=match):
            gt.gap_thresholds(small / "qrels.txt", small / "runs", **kwargs)


# ------------------------------------------------------------------------- the bootstrap
def test_topic_bootstrap_mean_is_explicit_resampling():
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"topic": rng.integers(0, 7, 60).astype(str), "g": rng.integers(0, 2, 60),
                          "v": rng.random(60)})
    frame.loc[3, "v"] = np.nan                                   # ignored, as a missing value
    got = topic_bootstrap_mean(frame, "v", ["g"], n_boot=300, seed=9)
    topics = np.unique(frame["topic"])
    W = resample_counts(len(topics), 300, 9)
    for _, row in got.iterrows():
        d = frame[(frame["g"] == row["g"]) & frame["v"].notna()]
        stats = []
        for w in W:                                              # each resample built as rows
            drawn = pd.concat([d[d["topic"] == t] for t, k in zip(topics, w) for _ in range(int(k))])
            stats.append(drawn["v"].mean())
        lo, hi = np.quantile(stats, [0.025, 0.975])
        assert row["mean"] == pytest.approx(d["v"].mean())
        assert row["lo"] == pytest.approx(lo) and row["hi"] == pytest.approx(hi)
        assert row["n"] == len(d) and row["topics"] == d["topic"].nunique()
    assert (W.sum(axis=1) == len(topics)).all()


# ------------------------------------------------------------------------- plots
def test_pr_curve_display(small):
    from maxent.inference import real_pr_curve

    fig, ax = plt.subplots()
    d = plots.PRCurveDisplay.from_run(qrels_frame(small / "qrels.txt"), small / "runs" / "T5R1", "3",
                                       ["AP", "nDCG"], depth=200, ax=ax)
    assert d.ax_ is ax and d.figure_ is fig
    assert [l.get_label() for l in ax.get_lines()] == ["actual", "inferred from AP", "inferred from nDCG"]
    lists = topic_lists(small / "qrels.txt", small / "runs" / "T5R1", "3", depth=200)
    rec, prec, valid = real_pr_curve(lists, 1)
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), rec[0][valid[0]])
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), prec[0][valid[0]])
    inferred = d.data[d.data["curve"] == "inferred from AP"]
    assert len(inferred) == lists.lengths[0] and inferred["precision"].between(0, 1).all()
    graded = plots.PRCurveDisplay.from_run(small / "qrels.txt", small / "runs" / "T5R1", "3", depth=200,
                                            graded="uniform")
    assert set(graded.data["curve"]) == {"actual", "inferred from nDCG", "inferred from GAP"}  # graded only
    with pytest.raises(maxent.InputError, match="the frame holds 3 runs"):
        plots.PRCurveDisplay.from_run(small / "qrels.txt", run_frame(small / "runs"), "3")
    one = run_frame(small / "runs" / "T5R1")
    assert plots.PRCurveDisplay.from_run(small / "qrels.txt", one, "3", ["AP"], depth=200).data["run"][0] == "T5R1"
    with pytest.raises(maxent.InputError, match="no ranked list for topic '999'"):
        plots.PRCurveDisplay.from_run(small / "qrels.txt", small / "runs" / "T5R1", "999")
    plt.close("all")


def test_prediction_and_scatter_displays(informative):
    inst = informative.instances
    p = plots.PredictionDisplay.from_instances(inst, "AP", threshold=1)
    e = inst[inst["eligible"] & (inst["metric"] == "AP") & (inst["threshold"] == 1)]
    means = e.groupby("run")[["actual P@10", "pred P@10"]].mean()
    data = p.data.set_index("run")
    np.testing.assert_allclose(data["actual"], means["actual P@10"].loc[data.index])
    np.testing.assert_allclose(data["pred"], means["pred P@10"].loc[data.index])
    assert ((data["pred lo"] <= data["pred"]) & (data["pred"] <= data["pred hi"])).all()
    assert p.ax_.get_title().startswith("AP: RMS")
    s = plots.MetricScatterDisplay.from_instances(inst, "nDCG")
    assert set(s.data["run"]) == set(RUNS)
    r = plots.RMSDisplay.from_instances(inst)
    assert len(r.data) == 6 and [t.get_text() for t in r.ax_.get_xticklabels()] == ["AP", "nDCG", "GAP"]
    with pytest.raises(ParameterError, match="no instances of 'RR'"):
        plots.PredictionDisplay.from_instances(inst, "RR")
    with pytest.raises(ParameterError, match="missing column"):
        plots.PredictionDisplay.from_instances(inst, "AP", target="P@5")
    plt.close("all")


def test_g_sweep_display(small):
    res = gt.gap_thresholds(small / "qrels.txt", small / "runs", step=0.25, bootstrap=0, depth=200,
                                min_relevant=3)
    fig, (a, b) = plt.subplots(1, 2)
    d = plots.GSweepDisplay.from_sweep(res.sweep, 2, ax=b)
    assert d.ax_ is b and not a.get_lines()
    gap_line = b.get_lines()[0]
    want = res.sweep[(res.sweep["metric"] == "GAP") & (res.sweep["threshold"] == 2)]["rms"].to_numpy()
    np.testing.assert_array_equal(gap_line.get_ydata(), want)
    assert len(b.collections) == 1                            # the interval band
    plt.close("all")
    res = gt.gap_thresholds(small / "qrels.txt", small / "runs", step=0.5, bootstrap=100, top_k=2, depth=200,
                                min_relevant=3)
    a = plots.ASLDisplay.from_asl(res.asl, top_k=2)
    assert [l.get_label() for l in a.ax_.get_lines()][:len(res.discriminative)] == list(res.discriminative["metric"])
    for line, (_, d) in zip(a.ax_.get_lines(), res.asl.groupby("metric", sort=False)):
        np.testing.assert_array_equal(line.get_ydata(), d["asl"].to_numpy())
    assert len(a.inset_.get_lines()) == len(res.discriminative) + 1   # one per metric, and alpha
    plt.close("all")


def test_figures_copy_the_discriminative_table(tmp_path):
    from analysis import figures

    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    for name in ("sweep.png", "sweep.csv", "asl.png", "asl.csv", "discriminative.csv", "instances.csv"):
        (src / name).write_text(name)
    copied = figures._copy_figures(src, dst, figures.TABLES["gap_thresholds"])
    assert sorted(p.name for p in copied) == ["asl.csv", "asl.png", "discriminative.csv", "sweep.csv", "sweep.png"]
    assert (dst / "discriminative.csv").read_text() == "discriminative.csv"


def test_analyses_take_ir_measures_objects(small, informative):
    irm = pytest.importorskip("ir_measures")
    got = maxent.informativeness(small / "qrels.txt", small / "runs", [irm.AP, irm.nDCG], threshold=1, depth=200,
                                 predict=[irm.P @ 10, irm.nDCG @ 10])
    want = informative.instances
    want = want[want["metric"].isin(["AP", "nDCG"]) & (want["threshold"] == 1)].reset_index(drop=True)
    pd.testing.assert_frame_equal(got.instances[want.columns.drop(["graded n_points", "graded rms", "graded mae",
                                                                   "graded eligible"])],
                                  want.drop(columns=["graded n_points", "graded rms", "graded mae",
                                                     "graded eligible"]))


def test_prediction_display_tolerates_intervals_off_by_rounding():
    # the percentile interval of constant values can sit a rounding error beside its mean
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    from analysis.plots import PredictionDisplay

    m = 0.1
    data = pd.DataFrame({"run": ["a", "b"], "actual": [m, 0.3], "actual lo": [m + 1e-17, 0.2],
                         "actual hi": [m, 0.4], "pred": [m, 0.25], "pred lo": [m, 0.2], "pred hi": [m - 1e-17, 0.3]})
    d = PredictionDisplay(data, "AP").plot()
    assert d.rms() == pytest.approx(((0.3 - 0.25) ** 2 / 2) ** 0.5)
