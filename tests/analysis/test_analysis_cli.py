"""The analyses' shared plumbing (analysis/_cli.py, analysis/_instances.py) and every option
of ``python -m analysis.maxent``, each checked for its effect on the output.

Fast: a slice of two bundled runs on three topics, AP only unless an option needs more.
Oracles: brute force over the ranked lists (list lengths, relevant retrieved), the library's
metric values and expectations, ``maxent.inference.pr_errors`` with the other alignment, and
``summary.csv`` recomputed from ``instances.csv``.
"""
from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests._bundled import write_tiny_sample
from analysis import _cli, _instances
from analysis import _outputs
from analysis import maxent as cli
from maxent import parse_measure, rank_runs, read_qrels, read_runs
from maxent.errors import MaxEntError, ParameterError
from maxent.informativeness import Settings, analyse_run, at_threshold, counts_text, graded_summary

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "trec_runs"
RUNS = ["T5R1", "bm25_baseline"]
TOPICS = {"1", "2", "3"}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return write_tiny_sample(tmp_path_factory.mktemp("tiny"), RUNS, TOPICS)


def _main(tiny, out, *extra, depth="100", metrics="AP"):
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()) as so, contextlib.redirect_stderr(err):
        code = cli.main(["--runs", str(tiny / "runs"), "--qrels", str(tiny / "qrels.txt"), "--out", str(out),
                         "--no-progress", "--depth", depth, "--metrics", metrics, *extra])
    return code, so.getvalue(), err.getvalue()


def _inst(out) -> pd.DataFrame:
    return pd.read_csv(out / "instances.csv", dtype={"topic": str, "count": str})


@pytest.fixture(scope="module")
def base(tiny, tmp_path_factory):
    out = tmp_path_factory.mktemp("base")
    code, stdout, err = _main(tiny, out)
    assert code == 0, err
    return out, stdout, err


def _lists(tiny, depth=100, precision="single"):
    return rank_runs(sorted(read_runs(tiny / "runs"), key=lambda r: r.name), read_qrels(tiny / "qrels.txt"),
                     depth=depth, score_precision=precision)


# ------------------------------------------------------------------- analysis.maxent
def test_summary_csv_recomputed_from_instances(base):
    # oracle: summary.csv's headline numbers from instances.csv, written out here
    out, stdout, _ = base
    inst, summary = _inst(out), pd.read_csv(out / "summary.csv")
    assert len(summary) == 2 and list(summary["threshold"]) == [1, 2]
    for row in summary.itertuples(index=False):
        g = inst[(inst["metric"] == row.metric) & (inst["threshold"] == row.threshold)]
        e = g[g["eligible"]]
        assert row.instances == len(e) > 0
        assert row.rms == pytest.approx(e["rms"].mean(), abs=1e-9)
        assert row.mae == pytest.approx(e["mae"].mean(), abs=1e-9)
        d = np.asarray(e["actual P@10"] - e["pred P@10"])
        assert getattr(row, "_5") == pytest.approx(np.sqrt(np.mean(d ** 2)), abs=1e-9)      # P@10 rms (topics)
        per_run = e.groupby("run")[["actual P@10", "pred P@10"]].mean()
        dr = np.asarray(per_run["actual P@10"] - per_run["pred P@10"])
        assert getattr(row, "_6") == pytest.approx(np.sqrt(np.mean(dr ** 2)), abs=1e-9)     # P@10 rms (runs)
        assert row.solved == int(g["status"].isin(["optimal", "boundary", "extreme"]).sum())
    assert "P@10 rms (topics)" in summary.columns and f"{summary['rms'].iloc[0]:8.4f}".strip() in stdout


def test_instances_against_the_library(base, tiny):
    out, _, _ = base
    inst = _inst(out)
    lists = _lists(tiny)
    for t in (1, 2):
        rows = inst[(inst["metric"] == "AP") & (inst["threshold"] == t)].set_index(["run", "topic"])
        ap = parse_measure(f"AP(rel={t})").value(lists)
        p10 = parse_measure(f"P@10(rel={t})").value(lists)
        for b in range(len(lists)):
            r = rows.loc[(lists.runs[b], lists.topics[b])]
            assert r["value"] == pytest.approx(ap[b], abs=1e-9)
            assert r["actual P@10"] == pytest.approx(p10[b], abs=1e-9)
            assert r["depth"] == lists.lengths[b] <= 100
            assert r["count"] == str(int((lists.grades[b] >= t).sum()))   # retrieved relevant: K


def test_depth_cuts_and_says_how_many(tiny, tmp_path):
    code, _, err = _main(tiny, tmp_path, depth="20")
    assert code == 0
    runs = read_runs(tiny / "runs")
    want = sum(int((np.unique(r.qid, return_counts=True)[1] > 20).sum()) for r in runs)
    assert want > 0 and f"note: {want} of 6 ranked lists are longer than --depth 20 and are cut" in err
    assert (_inst(tmp_path)["depth"] <= 20).all() and (_inst(tmp_path)["depth"] == 20).sum() >= want


def test_alignment_rank_scores_other_errors(tiny, tmp_path, base):
    from maxent.inference import pr_errors, threshold_probabilities
    from maxent.solver import solve

    assert _main(tiny, tmp_path, "--alignment", "rank")[0] == 0
    rank, recall = _inst(tmp_path), _inst(base[0])
    assert not np.allclose(rank["rms"], recall["rms"], equal_nan=True)
    lists = _lists(tiny)
    m = parse_measure("AP")
    res = solve(m, m.value(lists), lists)
    want = pr_errors(threshold_probabilities(res.p, 1), lists, 1, "rank")
    got = rank[rank["threshold"] == 1].set_index(["run", "topic"]).loc[list(zip(lists.runs, lists.topics))]
    np.testing.assert_allclose(got["rms"], want.rms, atol=1e-7)


def test_count_constraint_total(tiny, tmp_path):
    assert _main(tiny, tmp_path, "--count-constraint", "total")[0] == 0
    inst = _inst(tmp_path)
    lists = _lists(tiny)
    for t in (1, 2):
        rows = inst[inst["threshold"] == t].set_index(["run", "topic"])
        for b in range(len(lists)):
            # qrels totals at the threshold, capped at the list's depth
            want = min(int(lists.n_rel(t)[b]), int(lists.lengths[b]))
            assert rows.loc[(lists.runs[b], lists.topics[b]), "count"] == str(want)


def test_min_relevant_selects_by_brute_force(tiny, tmp_path):
    assert _main(tiny, tmp_path, "--min-relevant", "4")[0] == 0
    inst = _inst(tmp_path)
    lists = _lists(tiny)
    keep = {(lists.runs[b], lists.topics[b]): all((lists.grades[b] >= t).sum() >= 4 for t in (1, 2))
            for b in range(len(lists))}
    assert 0 < sum(keep.values()) < len(keep)
    for r in inst.itertuples(index=False):
        if not keep[(r.run, r.topic)]:
            assert not r.eligible
    assert inst["eligible"].sum() < _inst_count_eligible_default(tiny, tmp_path.parent / "mr0")


def _inst_count_eligible_default(tiny, out):
    assert _main(tiny, out)[0] == 0
    return int(_inst(out)["eligible"].sum())


def test_threshold_predict_metrics_graded_pr(tiny, tmp_path):
    code, _, err = _main(tiny, tmp_path, "--threshold", "2", "--predict", "P@5,RR", metrics="AP,nDCG",
                         )
    assert code == 0, err
    inst = _inst(tmp_path)
    assert set(inst["threshold"]) == {2} and set(inst["metric"]) == {"AP", "nDCG"}
    assert {"actual P@5", "pred P@5", "actual RR", "pred RR"} <= set(inst.columns) and "pred P@10" not in inst
    lists = _lists(tiny)
    rr = parse_measure("RR(rel=2)").value(lists)
    got = inst[inst["metric"] == "AP"].set_index(["run", "topic"]).loc[list(zip(lists.runs, lists.topics))]
    np.testing.assert_allclose(got["actual RR"], rr, atol=1e-9)
    out2 = tmp_path / "g"
    code, stdout, err = _main(tiny, out2, "--graded-pr", "uniform", metrics="nDCG")
    assert code == 0, err
    inst = _inst(out2)
    assert {"graded rms", "graded mae", "graded eligible"} <= set(inst.columns)
    assert "graded PR curve" in stdout and (out2 / "fig_graded_pr_examples.png").exists()
    code, _, _ = _main(tiny, tmp_path / "all", "--predict", "all")
    assert code == 0 and set(pd.read_csv(tmp_path / "all" / "informativeness.csv").columns) >= {"P@10", "GAP"}


def test_workers_score_precision_resume(tiny, tmp_path, base):
    assert _main(tiny, tmp_path / "w2", "--workers", "2")[0] == 0
    assert (tmp_path / "w2" / "instances.csv").read_bytes() == (base[0] / "instances.csv").read_bytes()
    assert _main(tiny, tmp_path / "d", "--score-precision", "double")[0] == 0
    config = json.loads((tmp_path / "d" / "config.json").read_text())
    assert config["score_precision"] == "double"
    assert "score_precision" not in json.loads((base[0] / "config.json").read_text())
    code, _, err = _main(tiny, tmp_path / "d", "--resume", "--score-precision", "double")
    assert code == 0 and "resume: 2 of 2 runs already done" in err
    code, _, err = _main(tiny, tmp_path / "d", "--resume")
    assert code == 1 and "other settings" in err


def test_dataset_names_the_default_folder(tiny, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stdout(io.StringIO()) as so, contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(["--runs", str(tiny / "runs"), "--qrels", str(tiny / "qrels.txt"), "--no-progress",
                         "--depth", "30", "--metrics", "AP", "--dataset", "mine"])
    assert code == 0 and (tmp_path / "out" / "maxent" / "mine" / "instances.csv").exists()
    assert "results in out/maxent/mine" in so.getvalue()


@pytest.mark.parametrize("argv, message", [
    (["--runs", "x"], "error: --qrels: required when --runs is given"),
    (["--qrels", "x"], "error: --runs: required when --qrels is given"),
    (["--workers", "0"], "error: --workers: must be >= 1, got 0"),
    (["--depth", "0"], "error: --depth: must be >= 1, got 0"),
    (["--min-relevant", "-5"], "error: --min-relevant: must be >= 0, got -5"),
])
def test_bad_values_name_their_option(argv, message, tmp_path):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = cli.main(argv + ["--out", str(tmp_path)])
    assert code == 1 and err.getvalue().startswith(message) and err.getvalue().count("\n") == 1


def test_out_that_cannot_be_a_folder(tiny, tmp_path, monkeypatch):
    f = tmp_path / "file"
    f.write_text("x")
    for out, words in ((f, "a file of that name exists"), (f / "sub", "a part of the path is a file"),
                       (Path("/proc/no/such"), "cannot create the output folder")):
        code, _, err = _main(tiny, out)
        errors = [ln for ln in err.splitlines() if ln.startswith("error: ")]
        assert code == 1 and len(errors) == 1 and errors[0].startswith(f"error: --out {out}: {words}")
    # a read-only folder (root ignores permissions: the refusal is simulated)
    def refuse(self, *a, **k):
        raise PermissionError(13, "Permission denied", str(self))
    monkeypatch.setattr(Path, "mkdir", refuse)
    code, _, err = _main(tiny, tmp_path / "ro")
    assert code == 1 and err.splitlines()[-1].startswith(f"error: --out {tmp_path / 'ro'}: cannot create the output folder there "
                                        "(Permission denied)")


def test_debug_raises(tiny, tmp_path):
    with pytest.raises(ParameterError):
        _main(tiny, tmp_path, "--workers", "0", "--debug")


# ----------------------------------------------------------------------- analysis._cli
def test_split_names_and_dataset_name(tmp_path):
    assert _cli.split_names("AP, GAP(g=0.5,0.5),nDCG@10(gain=exp),") == ["AP", "GAP(g=0.5,0.5)", "nDCG@10(gain=exp)"]
    assert _cli.split_names("") == []
    (tmp_path / "coll" / "runs").mkdir(parents=True)
    (tmp_path / "coll" / "runs" / "a").write_text("x")
    assert _cli.dataset_name([str(tmp_path / "coll" / "runs")], None) == "coll"
    assert _cli.dataset_name([str(tmp_path / "coll" / "runs" / "a")], None) == "coll"
    assert _cli.dataset_name([str(tmp_path / "coll")], None) == "coll"
    assert _cli.dataset_name([str(tmp_path / "coll")], "given") == "given"


def test_atomic_writes(tmp_path, monkeypatch):
    p = tmp_path / "d" / "f.txt"
    _cli.atomic_write_text(p, "a\nb")
    assert p.read_bytes() == b"a\nb"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(p.stat().st_mode) == 0o666 & ~mask
    _cli.atomic_write_csv(tmp_path / "x.csv", pd.DataFrame({"a": [1.0 / 3, 2.0], "b": ["u", "v"]}))
    assert (tmp_path / "x.csv").read_text() == "a,b\n0.3333333333,u\n2,v\n"

    def broken(*a):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        _cli.atomic_write_text(p, "new")
    assert p.read_bytes() == b"a\nb" and [q.name for q in p.parent.iterdir()] == ["f.txt"]


def test_chunks_folder(tmp_path):
    chunks = _outputs.prepare_chunks(tmp_path, {"x": 1}, resume=False)
    (chunks / "r1.csv").write_text("1")
    (chunks / ".r2.csv.abc.tmp").write_text("partial")
    assert json.loads((tmp_path / "config.json").read_text()) == {"x": 1}
    _outputs.prepare_chunks(tmp_path, {"x": 1}, resume=True)
    assert [p.name for p in chunks.iterdir()] == ["r1.csv"]
    with pytest.raises(MaxEntError, match="other settings"):
        _outputs.prepare_chunks(tmp_path, {"x": 2}, resume=True)
    _outputs.prepare_chunks(tmp_path, {"x": 2}, resume=False)
    assert list(chunks.iterdir()) == []


def test_own_output_clears_and_locks(tmp_path):
    (tmp_path / "summary.csv").write_text("old")
    (tmp_path / "fig_a.png").write_text("old")
    (tmp_path / "keep.txt").write_text("mine")
    import subprocess
    import sys

    with _outputs.own_output(tmp_path, ("summary.csv", "fig_*.png")):
        assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", "keep.txt"]
        assert (tmp_path / ".lock").read_text() == str(os.getpid())
        code = ("import sys; from analysis import _outputs\n"
                "try:\n  _outputs.own_output(sys.argv[1], ()).__enter__()\n"
                "except Exception as e: print(e); sys.exit(3)\n")
        done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 3 and f"in use by another analysis (pid {os.getpid()})" in done.stdout
    with _outputs.own_output(tmp_path, ()):          # released on exit
        pass


def test_reports(capsys):
    _cli.report_resumed([f"r{i}" for i in range(12)], 20, "runs")
    assert capsys.readouterr().err == ("resume: 12 of 20 runs already done, skipped: "
                                       "r0, r1, r2, r3, r4, r5, r6, r7, r8, r9 ...\n")
    _cli.report_resumed([], 20, "runs")
    assert capsys.readouterr().err == ""
    qrels = read_qrels(BUNDLED / "qrels-rnd1.txt")
    run = read_runs([ROOT / "tests" / "data" / "bad" / "run_ok.txt"])
    _cli.report_unknown_topics(run, qrels)
    err = capsys.readouterr().err
    assert err.startswith("warning: run run_ok.txt: ") and "not in the qrels, ignored: 401" in err


def test_depth_cut_count_is_brute_force(tiny, capsys):
    runs, qrels = read_runs(tiny / "runs"), read_qrels(tiny / "qrels.txt")
    for depth in (1, 7, 50, 10**6, None):
        want = 0 if depth is None else sum(
            sum(1 for q in np.unique(r.qid) if (r.qid == q).sum() > depth) for r in runs)
        assert _cli.report_depth_cut(runs, qrels, depth) == want
        err = capsys.readouterr().err
        assert (f"note: {want} of 6 ranked lists" in err) == (want > 0) and (err == "") == (want == 0)


def test_parallel_map_keeps_job_order():
    import argparse

    for workers in (1, 2):
        args = argparse.Namespace(workers=workers, scheduler=None)
        assert list(_cli.parallel_map(abs, [-3, 2, -1, 0], args)) == [3, 2, 1, 0]


def test_run_main_turns_errors_into_one_line(capsys):
    import argparse
    import warnings

    from maxent.errors import TopicWarning

    p = argparse.ArgumentParser()
    p.add_argument("--debug", action="store_true")
    p.add_argument("--workers", type=int, default=1)

    def fails(args):
        raise ParameterError("--x: bad")

    def cannot_write(args):
        raise PermissionError(13, "Permission denied", "/ro/instances.csv")

    def warns(args):
        warnings.warn("run r: 2 topic(s) ...", TopicWarning)
        return 0

    def interrupted(args):
        raise KeyboardInterrupt

    assert _cli.run_main(fails, p, []) == 1 and capsys.readouterr().err == "error: --x: bad\n"
    assert _cli.run_main(cannot_write, p, []) == 1
    assert capsys.readouterr().err == ("error: /ro/instances.csv: cannot write (Permission denied); "
                                       "choose another --out\n")
    assert _cli.run_main(warns, p, []) == 0 and capsys.readouterr().err == "warning: run r: 2 topic(s) ...\n"
    assert _cli.run_main(interrupted, p, []) == 130 and "re-run with --resume" in capsys.readouterr().err
    assert _cli.run_main(fails, p, ["--workers", "0"]) == 1
    assert capsys.readouterr().err == "error: --workers: must be >= 1, got 0\n"
    with pytest.raises(ParameterError):
        _cli.run_main(fails, p, ["--debug"])


def test_instances_helpers():
    assert at_threshold(parse_measure("AP"), 2) == parse_measure("AP(rel=2)")
    assert at_threshold(parse_measure("nDCG"), 2) == parse_measure("nDCG")
    assert _instances.parse_graded_pr(None, 3) is None
    assert _instances.parse_graded_pr("uniform", 4) == (0.25, 0.25, 0.25, 0.25)
    assert _instances.parse_graded_pr("uniform", 0) == (1.0,)
    assert _instances.parse_graded_pr("0.5,0.5", 2) == (0.5, 0.5)
    with pytest.raises(ParameterError, match="--graded-pr"):
        _instances.parse_graded_pr("a,b", 2)
    with pytest.raises(MaxEntError, match="sum to 1"):
        _instances.parse_graded_pr("0.5,0.6", 2)          # not a distribution: GAP's own check

    class R:
        K = np.array([[9, 3, 1], [9, 0, 0]])
        p = np.zeros((2, 4, 3))
    assert counts_text(R, 1).tolist() == ["3;1", "0;0"]
    R.p = np.zeros((2, 4))
    assert counts_text(R, 1).tolist() == ["3", "0"]
    g = pd.DataFrame({"graded eligible": [True, False, True], "graded rms": [0.1, 9.0, 0.3],
                      "graded mae": [0.2, 9.0, 0.4]})
    s = graded_summary(g, "x ")
    assert s == {"x RMS": pytest.approx(0.2), "x MAE": pytest.approx(0.3), "graded instances": 2}


def test_analyse_run_rows_and_expectations(tiny):
    from maxent.solver import solve

    qrels = read_qrels(tiny / "qrels.txt")
    run = sorted(read_runs(tiny / "runs"), key=lambda r: r.name)[0]
    lists = rank_runs([run], qrels, depth=40)
    fewest = np.minimum.reduce([(lists.grades >= t).sum(axis=1) for t in (1, 2)])
    k = int(np.sort(fewest)[1])             # a list exactly at the bound, and one below it
    assert k > 0 and (fewest == k).any() and (fewest < k).any()
    settings = Settings(("AP", "nDCG"), (1, 2), "retrieved", "recall", k, 40, ("P@10",))
    frame = analyse_run(run, qrels, settings)
    assert len(frame) == 3 * 2 * 2 and list(frame.columns[:4]) == ["run", "topic", "metric", "threshold"]
    sel = fewest >= k
    assert frame[frame["topic"].isin(lists.topics[fewest == k])]["eligible"].any()
    nd = parse_measure("nDCG")
    res = solve(nd, nd.value(lists), lists)
    for t in (1, 2):
        rows = frame[(frame["metric"] == "nDCG") & (frame["threshold"] == t)]
        np.testing.assert_array_equal(rows["eligible"], sel & (rows["n_points"] > 0) & res.success)
        p10 = parse_measure(f"P@10(rel={t})")
        q = res.p[:, :, t:].sum(axis=2)
        np.testing.assert_allclose(rows["pred P@10"], p10.expectation(q, lists), atol=1e-9)
        np.testing.assert_allclose(rows["value"], nd.value(lists), atol=1e-12)
        assert (rows["depth"] <= 40).all()
    # with no --min-relevant rule, a list with no point on its PR curve (no relevant document
    # retrieved at the threshold) is still never eligible: it has no PR error to score
    loose = analyse_run(run, qrels, dataclasses.replace(settings, min_relevant=0, metrics=("AP",)))
    assert (loose["n_points"] == 0).any() and (loose["n_points"] > 0).any()
    assert not loose.loc[loose["n_points"] == 0, "eligible"].any()
    assert loose.loc[(loose["n_points"] > 0) & (loose["status"].isin(["optimal", "boundary"])), "eligible"].all()


def test_phases_are_named_on_stderr_without_a_terminal(tiny, tmp_path):
    # a subprocess with stderr a pipe, every phase made "long" (threshold 0): each is named
    import subprocess
    import sys

    code = ("import sys; from maxent.cli import progress; progress.AFTER = 0.0\n"
            "from analysis.maxent import main; sys.exit(main(sys.argv[1:]))\n")
    done = subprocess.run([sys.executable, "-c", code, "--runs", str(tiny / "runs"), "--qrels",
                           str(tiny / "qrels.txt"), "--out", str(tmp_path), "--metrics", "AP", "--depth", "30"],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    for what in ("reading the qrels and runs", "solving the maximum-entropy problems of 2 runs",
                 "writing the tables and figures"):
        assert f"{what} ...\n" in done.stderr and f"{what}: done in " in done.stderr, done.stderr
    assert "runs: 2/2 done in " in done.stderr, done.stderr     # the runs counted within the phase


def test_other_warnings_keep_pythons_format(capsys):
    import argparse
    import warnings

    p = argparse.ArgumentParser()
    p.add_argument("--debug", action="store_true")

    def body(args):
        warnings.warn("plain python warning", UserWarning)
        return 0

    assert _cli.run_main(body, p, []) == 0
    err = capsys.readouterr().err
    assert "UserWarning: plain python warning" in err and not err.startswith("warning: ")
