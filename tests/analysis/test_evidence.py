"""``python -m analysis.evidence`` (fixed commands, copies, provenance) and the arithmetic of
``python -m analysis.significance``."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from analysis import evidence, significance
from maxent.errors import MaxEntError, ParameterError


def test_every_job_states_its_depth_and_data():
    for job in evidence.JOBS:
        args = list(job.args)
        assert "--depth" in args, job.key
        assert "--runs" in args and "--qrels" in args, job.key
        assert job.command.startswith(f"python -m analysis.{job.module or job.analysis} ")
        assert f"--out out/evidence/{job.analysis}/{job.dataset}" in job.command
    keys = [j.key for j in evidence.JOBS]
    assert len(keys) == len(set(keys))


def test_select_and_list(capsys):
    assert {j.dataset for j in evidence.select("maxent")} == set(evidence.COLLECTIONS)
    assert [j.key for j in evidence.select("gap_thresholds/robust03")] == ["gap_thresholds/robust03"]
    with pytest.raises(ParameterError, match="--only: unknown job"):
        evidence.select("maxent/nowhere")
    assert evidence.main(["--list", "--only", "active_eval"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(evidence.select("active_eval")) and all("--repetitions 1000" in l for l in out)
    assert evidence.main(["--only", "bogus"]) == 1
    assert "error: --only: unknown job" in capsys.readouterr().err


def test_run_job_copies_the_files_and_writes_provenance(tmp_path, monkeypatch):
    monkeypatch.setattr(evidence, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(evidence, "SCRATCH", tmp_path / "out")
    job = evidence.Job("active_eval", "tiny", ("--runs", "trec_runs/runs",
                                                 "--qrels", "trec_runs/qrels-rnd1.txt", "--depth", "20",
                                                 "--rankers", "BITEM_df,BRPHJ_NLP1", "--budgets", "3,6",
                                                 "--repetitions", "10", "--folds", "3",
                                                 "--experiments", "errors"),
                       ("errors.csv", "summary.csv"))
    dest = evidence.run_job(job, resume=False)
    assert dest == tmp_path / "results" / "active_eval" / "tiny"
    assert (dest / "errors.csv").read_bytes() == (tmp_path / "out" / "active_eval" / "tiny" / "errors.csv").read_bytes()
    prov = json.loads((dest / "PROVENANCE.json").read_text())
    assert prov["command"] == job.command and prov["files"] == ["errors.csv", "summary.csv"]
    assert prov["wall_time_s"] > 0 and prov["machine"]["cores"] >= 1
    bad = evidence.Job("active_eval", "bad", ("--runs", "trec_runs/runs", "--qrels", "trec_runs/qrels-rnd1.txt",
                                               "--depth", "20", "--repetitions", "0"), ("errors.csv",))
    with pytest.raises(MaxEntError, match="failed \\(exit 1\\)"):
        evidence.run_job(bad, resume=False)


def test_write_rows_writes_the_table_and_its_provenance(tmp_path):
    """A benchmark's evidence in one call: the rows as CSV, nothing left half-written, and the
    provenance with the command and the extra fields."""
    import time

    from analysis._provenance import write_rows

    rows = [dict(checkout="this", run=1, seconds=1.23456), dict(checkout="against", run=1, seconds=2.5)]
    path = write_rows(tmp_path / "bench", "t.csv", rows, "python benchmarks/x.py --runs 1", time.time() - 1,
                      extra={"against": "/tmp/start"})
    assert path == tmp_path / "bench" / "t.csv" and sorted(p.name for p in path.parent.iterdir()) == [
        "PROVENANCE.json", "t.csv"]
    back = pd.read_csv(path)
    assert back["checkout"].tolist() == ["this", "against"] and back["seconds"].tolist() == [1.235, 2.5]
    prov = json.loads((path.parent / "PROVENANCE.json").read_text())
    assert prov["command"] == "python benchmarks/x.py --runs 1" and prov["against"] == "/tmp/start"
    assert prov["wall_time_s"] >= 1


def test_provenance_ignores_the_evidence_it_describes(tmp_path, monkeypatch):
    """The evidence folder's own files, rewritten by the run, are not uncommitted changes to
    what made them; a change anywhere else in the work tree is."""
    import subprocess
    import time

    from analysis import _provenance

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    (tmp_path / "results" / "x").mkdir(parents=True)
    (tmp_path / "results" / "x" / "a.csv").write_text("a\n1\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
    monkeypatch.setattr(_provenance, "ROOT", tmp_path)

    def uncommitted():
        path = _provenance.write_rows(tmp_path / "results" / "x", "a.csv", [dict(a=2)], "python b.py", time.time())
        return json.loads((path.parent / "PROVENANCE.json").read_text())["uncommitted_changes"]

    assert uncommitted() is False
    (tmp_path / "code.py").write_text("x = 2\n")
    assert uncommitted() is True


def test_write_rows_appends_after_the_rows_already_written(tmp_path):
    import time

    from analysis._provenance import write_rows

    started = time.time()
    write_rows(tmp_path, "t.csv", [dict(run=1, seconds=1.0)], "python b.py", started, append=True)
    path = write_rows(tmp_path, "t.csv", [dict(run=2, seconds=2.0)], "python b.py", started, append=True)
    assert pd.read_csv(path)["run"].tolist() == [1, 2]
    path = write_rows(tmp_path, "t.csv", [dict(run=3, seconds=3.0)], "python b.py", started)
    assert pd.read_csv(path)["run"].tolist() == [3]


def test_command_line_of_a_script_and_of_a_module():
    """Commands as a user types them from the project root: a benchmark script by its path
    relative to the root (whatever the working directory), a module with -m; arguments quoted."""
    from analysis._provenance import ROOT, command_line

    script = ROOT / "benchmarks" / "bench_build.py"
    assert command_line(["", "--runs", "2", "--against", "/tmp/a b"], script=str(script)) == (
        "python benchmarks/bench_build.py --runs 2 --against '/tmp/a b'")
    assert command_line(["prog", "--seed", "0"], module="analysis.maxent") == "python -m analysis.maxent --seed 0"
    assert command_line(["x.py", "--n", "1"]) == "python x.py --n 1"


def _benchmark(name):
    """A script of benchmarks/ (not a package) imported as a module."""
    import importlib.util

    from analysis._provenance import ROOT

    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pip_phases_skip_the_build_environments_lines():
    """bench_build's split of README's install: pip's build environments print "Installing
    collected packages" indented, before the top-level lines that end each phase."""
    bench_build = _benchmark("bench_build")
    log = [(0.7, "  Installing build dependencies: started\n"),
           (3.2, "  Installing collected packages: setuptools, Cython\n"),
           (30.0, "Building wheels for collected packages: cwl-eval, maxent-ir\n"),
           (96.0, "  Created wheel for maxent-ir\n"),
           (97.5, "Installing collected packages: numpy, scipy\n"),
           (149.0, "Successfully installed numpy scipy\n")]
    assert bench_build.pip_phases(log, 150.0) == dict(download_s=30.0, build_s=67.5, install_s=52.5)
    # nothing to build: the build phase is empty
    no_build = [(3.2, log[1][1]), (20.0, log[4][1])]
    assert bench_build.pip_phases(no_build, 60.0) == dict(download_s=20.0, build_s=0.0, install_s=40.0)
    with pytest.raises(ValueError, match="Installing collected packages"):
        bench_build.pip_phases(log[:4], 150.0)


def test_compare_solutions_writes_the_changed_problems_by_their_key(tmp_path):
    """benchmarks/compare_solutions.py: a status change and a lower entropy are counted (exit 1),
    --changed lists the changed problem under its key, with both sides' columns, and --note
    is kept in the provenance."""
    cs = _benchmark("compare_solutions")
    old = pd.DataFrame(dict(collection="c", count="retrieved", metric="AP", i=[0, 1, 2],
                            status=["optimal", "optimal", "optimal"], entropy=[10.0, 20.0, 30.0],
                            nit=[5, 5, 5], residual=0.0, attained=0.1, b=1.0))
    new = old.assign(status=["optimal", "not_converged", "optimal"], entropy=[10.0, 20.0, 29.0])
    old.to_csv(tmp_path / "old.csv", index=False)
    new.to_csv(tmp_path / "new.csv", index=False)
    rc = cs.main([str(tmp_path / "old.csv"), str(tmp_path / "new.csv"), "--out", str(tmp_path / "s" / "sum.csv"),
                  "--changed", str(tmp_path / "s" / "changed.csv"), "--note", "new.csv made elsewhere"])
    assert rc == 1
    assert json.loads((tmp_path / "s" / "PROVENANCE.json").read_text())["note"] == "new.csv made elsewhere"
    summary = pd.read_csv(tmp_path / "s" / "sum.csv")
    assert summary[["status_changed", "not_converged_new", "lower_entropy"]].values.tolist() == [[1, 1, 1]]
    changed = pd.read_csv(tmp_path / "s" / "changed.csv")
    assert list(changed.columns[:6]) == [*cs.PROBLEM_KEY, "status_old", "status_new"]
    assert changed["i"].tolist() == [1] and changed["status_new"].tolist() == ["not_converged"]


def test_topic_scaled_values_average_to_the_list_mean():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"topic": rng.choice(list("abcde"), 40), "v": rng.random(40)})
    x = significance._topic_scaled(frame, "v")
    assert len(x) == frame["topic"].nunique()
    assert x.mean() == pytest.approx(frame["v"].mean(), rel=1e-12)


def test_holm_is_per_comparison_across_collections():
    rows = [dict(dataset=d, quantity="PR RMS", unit="topic", threshold=1, a="AP", b="nDCG", diff=-0.01,
                 p_t=p, p_wilcoxon=p, p_sign=p) for d, p in (("x", 0.01), ("y", 0.04), ("z", 0.03))]
    rows.append(dict(dataset="x", quantity="PR RMS", unit="topic", threshold=2, a="AP", b="nDCG", diff=0.02,
                     p_t=0.04, p_wilcoxon=0.04, p_sign=0.04))
    df = significance.holm(rows)
    # Holm over the three collections at threshold 1: 0.03, 0.06, 0.06; threshold 2 alone: 0.04
    assert df["p_t_holm"].round(12).tolist() == [0.03, 0.06, 0.06, 0.04]
    assert df["verdict"].tolist() == ["AP lower", "undecided", "undecided", "nDCG lower"]
