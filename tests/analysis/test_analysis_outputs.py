"""Output folders of the analyses (analysis._outputs, used by analysis.maxent, analysis.learning and
analysis.active_eval): a folder in use is refused, stale outputs are removed, --resume says
what it skipped, files follow the umask; and analysis.maxent's titles, warnings and errors.

Fast: two bundled runs cut to three topics, AP only.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """Two bundled runs cut to three topics, with their qrels (a fast analysis)."""
    import gzip

    d = tmp_path_factory.mktemp("small")
    (d / "runs").mkdir()
    topics = {"1", "2", "3"}
    for name in ("BITEM_df", "T5R1"):
        lines = gzip.open(ROOT / "trec_runs" / "runs" / f"{name}.gz", "rt").read().splitlines()
        (d / "runs" / name).write_text("\n".join(l for l in lines if l.split()[0] in topics) + "\n")
    qrels = (ROOT / "trec_runs" / "qrels-rnd1.txt").read_text().splitlines()
    (d / "qrels.txt").write_text("\n".join(l for l in qrels if l.split()[0] in topics) + "\n")
    return d


def _analysis(small, out, *extra):
    from analysis import maxent as mx

    return mx.main(["--runs", str(small / "runs"), "--qrels", str(small / "qrels.txt"), "--out", str(out),
                    "--no-progress", "--depth", "100", "--metrics", "AP", "--threshold", "1", *extra])


# ------------------------------------------------- 1 and 5: output folders of the analyses
def test_second_analysis_on_a_folder_in_use_is_refused(small, tmp_path, capsys):
    from analysis import _outputs

    with _outputs.own_output(tmp_path, ()):                 # as a first analysis running there
        assert _analysis(small, tmp_path) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"error: {tmp_path}: output folder in use by another analysis (pid {os.getpid()})")
        assert not (tmp_path / "summary.csv").exists() and not (tmp_path / "chunks").exists()
    assert _analysis(small, tmp_path) == 0              # free again once the first one ends
    assert (tmp_path / "summary.csv").exists()


def test_lock_is_held_by_a_running_process(small, tmp_path):
    # a real concurrent run: the second process is refused while the first holds the folder
    # (the lock dies with its process, so a SIGKILLed run never leaves the folder locked)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from analysis import _outputs\n"
         f"with _outputs.own_output(__import__('pathlib').Path({str(tmp_path)!r}), ()):\n"
         "    print('held', flush=True); time.sleep(60)"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        proc = subprocess.run([sys.executable, "-m", "analysis.maxent", "--runs", str(small / "runs"),
                               "--qrels", str(small / "qrels.txt"), "--out", str(tmp_path), "--metrics", "AP"],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1 and f"output folder in use by another analysis (pid {holder.pid})" in proc.stderr
    finally:
        holder.kill()
        holder.wait()
    assert _analysis(small, tmp_path) == 0


def test_stale_outputs_are_removed(small, tmp_path, monkeypatch, capsys):
    from analysis import _instances as mx  # the per-run job of the analyses' shared plumbing

    # an informativeness.csv of an earlier --predict all run must not survive a later run
    (tmp_path / "informativeness.csv").write_text("from,threshold\nold,1\n")
    (tmp_path / "fig_old.png").write_bytes(b"old")
    assert _analysis(small, tmp_path) == 0
    assert not (tmp_path / "informativeness.csv").exists() and not (tmp_path / "fig_old.png").exists()
    # a re-run with other settings killed before its tables: no old table beside its config
    real = mx._job
    monkeypatch.setattr(mx, "_job", lambda job: (_ for _ in ()).throw(KeyboardInterrupt))
    assert _analysis(small, tmp_path, "--alignment", "rank") == 130
    assert '"alignment": "rank"' in (tmp_path / "config.json").read_text()
    assert not any((tmp_path / f).exists() for f in ("instances.csv", "summary.csv", "fig_p10_inferred.png"))
    # --resume with settings other than the folder's is refused before anything is deleted
    monkeypatch.setattr(mx, "_job", real)
    assert _analysis(small, tmp_path, "--alignment", "rank") == 0
    assert _analysis(small, tmp_path, "--resume") == 1
    assert "other settings" in capsys.readouterr().err and (tmp_path / "summary.csv").exists()


def test_resume_says_what_it_skipped(small, tmp_path, monkeypatch, capsys):
    from analysis import _instances as mx  # the per-run job of the analyses' shared plumbing

    real, calls = mx._job, {"n": 0}

    def second_fails(job):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(job)

    monkeypatch.setattr(mx, "_job", second_fails)
    assert _analysis(small, tmp_path) == 130
    monkeypatch.setattr(mx, "_job", real)
    capsys.readouterr()
    assert _analysis(small, tmp_path, "--resume") == 0
    assert "resume: 1 of 2 runs already done, skipped: BITEM_df" in capsys.readouterr().err


def test_outputs_follow_the_umask(small, tmp_path):
    from analysis import _cli

    old = os.umask(0o022)
    try:
        mode = _cli._umask_mode()
    finally:
        os.umask(old)
    assert mode == 0o644
    saved = _cli._FILE_MODE
    _cli._FILE_MODE = mode
    try:
        assert _analysis(small, tmp_path) == 0
    finally:
        _cli._FILE_MODE = saved
    for f in ("summary.csv", "instances.csv", "config.json", "fig_p10_vs_metric.png"):
        assert (tmp_path / f).stat().st_mode & 0o777 == 0o644, f  # the umask's mode, not mkstemp's 0600


def test_learning_clears_stale_outputs_and_keeps_records(tmp_path, capsys):
    from analysis.learning import main as learning_main

    out = tmp_path / "res"
    out.mkdir()
    (out / "claims.csv").write_text("old\n")                 # from an earlier run's other parts
    (out / "pairs.png").write_bytes(b"old")
    args = ["--dataset", "artificial", "--n-queries", "30", "--docs-per-query", "6", "--n-features", "3",
            "--epochs", "1", "--learning-rates", "0.1", "--train-metrics", "AP", "--test-metrics", "AP",
            "--workers", "1", "--no-progress", "--parts", "table", "--out", str(out)]
    assert learning_main(args) == 0
    assert not (out / "claims.csv").exists() or (out / "claims.csv").read_text() != "old\n"
    assert not (out / "pairs.png").exists() and (out / "table.csv").exists()
    records = sorted(p.name for p in (out / "runs").glob("*.json"))
    capsys.readouterr()
    assert learning_main(args + ["--resume"]) == 0            # records survive, and are reported
    assert sorted(p.name for p in (out / "runs").glob("*.json")) == records
    assert f"resume: {len(records)} of {len(records)} training runs already done" in capsys.readouterr().err


def test_active_eval_output_folder_is_locked_too(tmp_path, capsys):
    from analysis import _outputs
    from analysis.active_eval import main as active_main

    with _outputs.own_output(tmp_path, ()):
        assert active_main(["--out", str(tmp_path), "--no-progress"]) == 1
    assert "output folder in use by another analysis" in capsys.readouterr().err


# ----------------------------------------------------------------- titles, warnings, errors
def test_metric_vs_p10_titles_state_a_correlation(small, tmp_path, monkeypatch):
    # fig_p10_vs_metric plots P@10 against another metric: an "RMS" between two different
    # metrics means nothing; the titles give Kendall's tau with P@10
    from analysis import _cli

    titles = {}
    real = _cli.save_figure

    def keep_titles(fig, path, **kw):
        titles[path.name] = [ax.get_title() for ax in fig.axes]
        real(fig, path, **kw)

    monkeypatch.setattr(_cli, "save_figure", keep_titles)
    assert _analysis(small, tmp_path) == 0
    assert titles["fig_p10_vs_metric.png"] and all(
        t.startswith("AP: Kendall tau with P@10 ") and "RMS" not in t for t in titles["fig_p10_vs_metric.png"])


def test_empty_metric_list_is_a_clear_error(small, tmp_path, capsys):
    assert _analysis(small, tmp_path, "--metrics", "") == 1
    assert capsys.readouterr().err == "error: --metrics and --predict need at least one measure name\n"


def test_analysis_with_a_huge_grade_is_a_clear_error(tmp_path, capsys):
    # qrels `1 0 d1 40000` must stop analysis.maxent with the line, not a MemoryError of many GiB
    from analysis import maxent as mx

    assert mx.main(["--runs", str(BAD / "run_d1_first.txt"), "--qrels", str(BAD / "qrels_grade_40000.txt"),
                    "--out", str(tmp_path), "--no-progress"]) == 1
    assert capsys.readouterr().err.startswith(f"error: {BAD / 'qrels_grade_40000.txt'}:1: grade '40000' is out of range")


def test_analysis_reports_run_topics_it_ignores(tmp_path, capsys):
    from analysis import maxent as mx

    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n7 Q0 d1 1 2.0 r\n")
    assert mx.main(["--runs", str(run), "--qrels", str(BAD / "qrels_bom.txt"), "--out", str(tmp_path / "out"),
                    "--no-progress", "--metrics", "AP"]) == 0
    assert "warning: run run.txt: 1 topic(s) not in the qrels, ignored: 7" in capsys.readouterr().err
