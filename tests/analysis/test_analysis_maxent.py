"""End-to-end tests of ``python -m analysis.maxent`` on a small slice of the bundled data."""
import gzip
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import _instances
from analysis import maxent as cli
from maxent.errors import TopicWarning
from maxent.informativeness import counts_text

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "trec_runs"
RUNS = ["BITEM_df", "T5R1", "bm25_baseline", "jlbase"]
TOPICS = {"1", "2", "3", "4", "5", "6"}


@pytest.fixture(scope="module")
def slice_dir(tmp_path_factory):
    """Four bundled runs cut to six topics (one run also lacks topic 6 and has a topic the
    qrels do not know), with the matching qrels."""
    d = tmp_path_factory.mktemp("slice")
    runs = d / "runs"
    runs.mkdir()
    for name in RUNS:
        lines = gzip.open(BUNDLED / "runs" / f"{name}.gz", "rt").read().splitlines()
        keep = [l for l in lines if l.split()[0] in TOPICS]
        if name == "jlbase":
            keep = [l for l in keep if l.split()[0] != "6"] + ["999 Q0 doc1 1 5.0 jlbase"]
        (runs / name).write_text("\n".join(keep) + "\n")
    qrels = [l for l in (BUNDLED / "qrels-rnd1.txt").read_text().splitlines() if l.split()[0] in TOPICS]
    (d / "qrels.txt").write_text("\n".join(qrels) + "\n")
    return d


def _run(slice_dir, out, *extra):
    return cli.main(["--runs", str(slice_dir / "runs"), "--qrels", str(slice_dir / "qrels.txt"),
                     "--out", str(out), "--no-progress", "--depth", "200", *extra])


@pytest.fixture(scope="module")
def full(slice_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("full")
    assert _run(slice_dir, out) == 0
    return out


def test_outputs_and_schema(full):
    inst = pd.read_csv(full / "instances.csv", dtype={"topic": str})
    for col in ["run", "topic", "metric", "threshold", "value", "depth", "count", "status", "nit",
                "entropy", "residual", "n_points", "rms", "mae", "eligible", "actual P@10", "pred P@10"]:
        assert col in inst.columns, col
    # 4 runs x 6 topics, but jlbase lacks topic 6: 23 lists; AP at t=1,2; nDCG and GAP at t=1,2
    assert len(inst) == 23 * 3 * 2
    assert set(inst["metric"]) == {"AP", "nDCG", "GAP"} and set(inst["threshold"]) == {1, 2}
    assert not inst.duplicated(["run", "topic", "metric", "threshold"]).any()
    assert "999" not in set(inst["topic"])  # run topic unknown to the qrels is ignored
    # every eligible instance was solved and its AP value is the library's AP
    ok = inst[inst["eligible"]]
    assert ok["status"].isin(["optimal", "boundary"]).all()
    assert (ok["residual"] < 1e-6).all()
    assert ok["rms"].between(0, 1).all()
    summary = pd.read_csv(full / "summary.csv")
    assert list(summary["metric"]) == ["AP", "AP", "nDCG", "nDCG", "GAP", "GAP"]
    for f in ["fig_p10_inferred", "fig_p10_vs_metric", "fig_pr_examples"]:
        assert (full / f"{f}.png").stat().st_size > 1000
        assert (full / f"{f}.csv").exists()


def test_figures_keep_every_text_on_the_canvas_and_apart(slice_dir, tmp_path, monkeypatch):
    # the figures are laid out by hand (analysis.maxent.MARGINS, no layout engine, no cropping
    # to the drawn extent): every text drawn must lie on the canvas and overlap no other
    import matplotlib.text

    from analysis import _cli

    drawn, checked = [], []
    draw_text, save_figure = matplotlib.text.Text.draw, _cli.save_figure

    def record(self, renderer):
        drawn.append(self)
        return draw_text(self, renderer)

    def check(fig, path, **kw):
        drawn.clear()
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in drawn
                 if t.get_visible() and t.get_text().strip()]
        assert len(boxes) > 10, path.name
        for text, b in boxes:
            assert (b.x0 >= -0.5 and b.y0 >= -0.5 and b.x1 <= fig.bbox.x1 + 0.5
                    and b.y1 <= fig.bbox.y1 + 0.5), (path.name, text, b.bounds)
        for i, (ta, a) in enumerate(boxes):
            for tb, b in boxes[i + 1:]:
                assert not a.overlaps(b), (path.name, ta, tb, a.bounds, b.bounds)
        checked.append(path.name)
        save_figure(fig, path, **kw)

    monkeypatch.setattr(matplotlib.text.Text, "draw", record)
    monkeypatch.setattr(_cli, "save_figure", check)
    assert _run(slice_dir, tmp_path, "--graded-pr", "uniform") == 0
    assert sorted(checked) == ["fig_graded_pr_examples.png", "fig_p10_inferred.png", "fig_p10_vs_metric.png",
                               "fig_pr_examples.png", "fig_rms_by_metric.png"]


def test_actual_p10_matches_library(full, slice_dir):
    from maxent import evaluate

    inst = pd.read_csv(full / "instances.csv", dtype={"topic": str})
    with pytest.warns(TopicWarning, match="jlbase"):  # topic 999 unknown, topic 6 missing
        frame = evaluate(str(slice_dir / "qrels.txt"), [str(slice_dir / "runs")], ["P@10"])
    want = frame.set_index(["run", "topic"])["value"]
    got = inst[(inst["metric"] == "AP") & (inst["threshold"] == 1)].set_index(["run", "topic"])["actual P@10"]
    np.testing.assert_allclose(got.sort_index().to_numpy(), want.loc[got.sort_index().index].to_numpy(), atol=1e-9)


def test_deterministic(slice_dir, full, tmp_path):
    assert _run(slice_dir, tmp_path) == 0
    for f in ["instances.csv", "summary.csv", "fig_p10_inferred.csv", "fig_pr_examples.csv"]:
        assert (tmp_path / f).read_bytes() == (full / f).read_bytes(), f


def test_interrupted_then_resumed_is_identical(slice_dir, full, tmp_path, monkeypatch):
    calls = {"n": 0}
    real = _instances._job      # the per-run job of the shared plumbing (analysis/_instances.py)

    def flaky(job):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(job)

    monkeypatch.setattr(_instances, "_job", flaky)
    assert _run(slice_dir, tmp_path) == 130
    assert len(list((tmp_path / "chunks").glob("*.csv"))) == 2
    assert not (tmp_path / "instances.csv").exists()
    monkeypatch.setattr(_instances, "_job", real)
    assert _run(slice_dir, tmp_path, "--resume") == 0
    for f in ["instances.csv", "summary.csv"]:
        assert (tmp_path / f).read_bytes() == (full / f).read_bytes(), f


def test_killed_process_resumes(tmp_path):
    """SIGKILL mid-analysis, then --resume: the same bytes as an uninterrupted run. On the whole
    bundled sample (20 runs, one chunk each, about a tenth of a second per chunk), so that the
    kill lands between chunks: the six-topic slice's chunks take a few milliseconds each, and
    all of them could be written between two polls."""
    args = ["--runs", str(BUNDLED / "runs"), "--qrels", str(BUNDLED / "qrels-rnd1.txt"), "--no-progress"]
    n_runs = len(list((BUNDLED / "runs").iterdir()))
    out, ref = tmp_path / "killed", tmp_path / "whole"
    proc = subprocess.Popen([sys.executable, "-m", "analysis.maxent", *args, "--out", str(out)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    killed = False
    while time.time() < deadline and proc.poll() is None:
        if list((out / "chunks").glob("*.csv")):
            proc.send_signal(signal.SIGKILL)
            killed = True
            break
        time.sleep(0.002)
    proc.wait()
    # the kill happened mid-analysis: SIGKILL ended the process, with some chunks written and
    # the final tables not yet (else this test would test nothing)
    assert killed and proc.returncode == -signal.SIGKILL
    assert not (out / "instances.csv").exists()
    assert 1 <= len(list((out / "chunks").glob("*.csv"))) < n_runs
    # a kill during another chunk's write can leave its temporary file (SIGKILL runs no
    # clean-up; CI saw one): never a partial *.csv (nor *.json record), and --resume removes
    # the leftovers
    for f in (out / "chunks").iterdir():
        assert (f.suffix in (".csv", ".json") and not f.name.startswith(".")) or (
            f.name.startswith(".") and f.suffix == ".tmp")
    (out / "chunks" / ".T9R9.csv.abc123.tmp").write_text("run,topic\npartial")   # as a kill leaves it
    assert cli.main([*args, "--out", str(out), "--resume"]) == 0
    assert not list(out.glob("chunks/.*.tmp"))
    inst = pd.read_csv(out / "instances.csv")
    assert not inst.duplicated(["run", "topic", "metric", "threshold"]).any()
    assert cli.main([*args, "--out", str(ref)]) == 0
    assert (out / "instances.csv").read_bytes() == (ref / "instances.csv").read_bytes()


def test_resume_refuses_other_settings(slice_dir, full, tmp_path, capsys):
    assert _run(slice_dir, tmp_path) == 0
    assert _run(slice_dir, tmp_path, "--resume", "--alignment", "rank") == 1
    assert "other settings" in capsys.readouterr().err


def test_predict_all_and_options(slice_dir, tmp_path):
    rc = _run(slice_dir, tmp_path, "--metrics", "AP,GAP(g=0.5,0.5),P@10,RR", "--predict", "all",
              "--threshold", "1", "--count-constraint", "total", "--alignment", "rank", "--min-relevant", "2")
    assert rc == 0
    mat = pd.read_csv(tmp_path / "informativeness.csv")
    assert list(mat["from"]) == ["AP", "GAP(g=0.5,0.5)", "P@10", "RR"]
    # a binary solve cannot predict graded metrics; a graded one can
    assert mat.loc[mat["from"] == "AP", "nDCG"].isna().all()
    assert mat.loc[mat["from"] == "GAP(g=0.5,0.5)", "nDCG"].notna().all()
    inst = pd.read_csv(tmp_path / "instances.csv")
    assert (inst.loc[inst["eligible"], "n_points"] >= 2).all()


@pytest.mark.parametrize("args, message", [
    (["--metrics", "nDGC"], "unknown measure"),
    (["--threshold", "x"], "--threshold"),
    (["--threshold", "0"], "--threshold"),
    (["--metrics", "bpref"], "no expectation"),
])
def test_bad_arguments(slice_dir, tmp_path, capsys, args, message):
    assert _run(slice_dir, tmp_path, *args) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_missing_qrels_file(tmp_path, capsys):
    assert cli.main(["--runs", str(BUNDLED / "runs"), "--qrels", str(tmp_path / "nope.txt"),
                     "--out", str(tmp_path), "--no-progress"]) == 1
    assert "nope.txt: no such file" in capsys.readouterr().err


def test_split_names():
    assert cli.split_names("AP,GAP(g=0.5,0.5), nDCG@10(gain=exp)") == ["AP", "GAP(g=0.5,0.5)", "nDCG@10(gain=exp)"]


def test_count_column_reads_the_solver_counts():
    """The ``count`` column is the count constraint the solver used (MaxEntResult.K), also
    under ``--count-constraint total``. Hand oracle (docs/method.md, count_constraints): a
    list of 4 documents, qrels R_1 = R_2 = 3; the graded cap fills from the top grade down,
    K_2 = min(3, 4) = 3, K_1 = min(3, 4 - 3) = 1; binary K = min(R, N) = min(6, 4) = 4 (the
    old column said 3;3 and 6)."""
    from maxent.metrics import parse_measure
    from maxent.ranked import RankedLists
    from maxent.solver import solve

    lists = RankedLists.from_grades([[2, 1, 0, 2]], [[2, 3, 3]])
    for name, want in (("GAP", "1;3"), ("AP", "4"), ("nDCG", "1;3")):
        m = parse_measure(name)
        res = solve(m, m.value(lists), lists, count="total")
        assert counts_text(res, 1).tolist() == [want]
    res = solve(parse_measure("AP"), parse_measure("AP").value(lists), lists)           # retrieved
    assert counts_text(res, 1).tolist() == ["3"]
