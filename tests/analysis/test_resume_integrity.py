"""What ``--resume`` may reuse, what a failed write may touch, and the options both
``analysis.maxent`` and ``analysis.gap_thresholds`` refuse before reading any data.

Fast: three bundled runs on three topics, AP only, --depth 30. Oracles: a fresh run on the
same (changed) inputs, byte for byte; the files of a finished folder before the failed run.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests._bundled import write_tiny_sample
from analysis import gap_thresholds as gt
from analysis import maxent as cli

ROOT = Path(__file__).resolve().parents[2]
RUNS = ["T5R1", "bm25_baseline", "run1"]
TOPICS = {"1", "2", "3"}
ARGS = ["--no-progress", "--depth", "30", "--metrics", "AP"]


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return write_tiny_sample(tmp_path_factory.mktemp("tiny"), RUNS, TOPICS)


@pytest.fixture
def data(source, tmp_path):
    """A copy of the inputs this test may change."""
    shutil.copytree(source, tmp_path / "in")
    return tmp_path / "in"


GT_ARGS = ["--no-progress", "--depth", "30", "--step", "0.5", "--bootstrap", "50"]


def _main(data, out, *extra, fn=cli.main):
    so, se = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
        code = fn(["--runs", str(data / "runs"), "--qrels", str(data / "qrels.txt"), "--out", str(out),
                   *(ARGS if fn is cli.main else GT_ARGS), *extra])
    return code, se.getvalue()


def _files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _lines(err: str, start: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith(start)]


def _regenerate(run: Path) -> None:
    """The run file written anew under its name: scores of topic 1 reversed."""
    rows = [ln.split() for ln in run.read_text().splitlines()]
    for r in rows:
        if r[0] == "1":
            r[4] = str(-float(r[4]))
    run.write_text("\n".join(" ".join(r) for r in rows) + "\n")


# ------------------------------------------------------------------ what --resume reuses
@pytest.mark.parametrize("change, what, runs", [
    ("run", "the run file", ["T5R1"]),
    ("qrels", "the qrels", RUNS),
    ("options", "the options", RUNS),
])
def test_resume_recomputes_chunks_of_changed_inputs(data, tmp_path, change, what, runs):
    out = tmp_path / "out"
    assert _main(data, out)[0] == 0
    extra = []
    if change == "run":
        _regenerate(data / "runs" / "T5R1")
    elif change == "qrels":               # a grade corrected in place
        lines = (data / "qrels.txt").read_text().splitlines()
        parts = lines[0].split()
        parts[3] = "0" if parts[3] != "0" else "2"
        (data / "qrels.txt").write_text("\n".join([" ".join(parts)] + lines[1:]) + "\n")
    else:                                  # config.json lost, then other metrics
        (out / "config.json").unlink()
        extra = ["--metrics", "nDCG"]
    code, err = _main(data, out, "--resume", *extra)
    assert code == 0, err
    assert _lines(err, "resume: run ") == [
        f"resume: run {r}: {what} changed since its chunk was written; recomputed" for r in runs]
    fresh = tmp_path / "fresh"
    assert _main(data, fresh, *extra)[0] == 0
    assert _files(out) == _files(fresh)


def _cut_mid_line(b):
    return b[: b.index(b"\n", len(b) // 2) + 5]


def _half_rows(b):
    lines = b.splitlines(keepends=True)
    return b"".join(lines[: 1 + (len(lines) - 1) // 2])


def _other_columns(b):
    return b.replace(b"run,topic", b"runs,topic", 1)


@pytest.mark.parametrize("damage, why", [
    (lambda b: b.splitlines(keepends=True)[0], "its checksum does not match"),   # header only
    (_half_rows, "its checksum does not match"),
    (_cut_mid_line, "its checksum does not match"),
    (lambda b: b"", "its checksum does not match"),
    (lambda b: bytes(range(256)) * 4, "its checksum does not match"),
    (_other_columns, "its checksum does not match"),
])
def test_damaged_chunk_is_recomputed_with_one_warning(data, tmp_path, damage, why):
    out = tmp_path / "out"
    assert _main(data, out)[0] == 0
    before = _files(out)
    chunk = out / "chunks" / "T5R1.csv"
    chunk.write_bytes(damage(chunk.read_bytes()))
    code, err = _main(data, out, "--resume")
    assert code == 0 and "Traceback" not in err
    assert _lines(err, "warning:") == [f"warning: run T5R1: chunk {chunk} is damaged ({why}); recomputed"]
    assert "resume: 2 of 3 runs already done, skipped: bm25_baseline, run1" in err
    assert _files(out) == before


def test_chunk_whose_record_is_lost_or_forged_is_recomputed(data, tmp_path):
    import hashlib

    out = tmp_path / "out"
    assert _main(data, out)[0] == 0
    before = _files(out)
    (out / "chunks" / "run1.json").unlink()
    # other columns with a record that matches them: the recorded columns still tell
    chunk, record = out / "chunks" / "T5R1.csv", out / "chunks" / "T5R1.json"
    forged = _other_columns(chunk.read_bytes())
    meta = json.loads(record.read_text())
    meta["sha256"] = hashlib.sha256(forged).hexdigest()
    chunk.write_bytes(forged)
    record.write_text(json.dumps(meta))
    code, err = _main(data, out, "--resume")
    assert code == 0 and _lines(err, "warning:") == [
        f"warning: run T5R1: chunk {chunk} is damaged (other columns than recorded); recomputed",
        f"warning: run run1: chunk {out / 'chunks' / 'run1.csv'} is damaged (no readable record run1.json); "
        "recomputed"]
    assert _files(out) == before


# ------------------------------------------------------------------ failed writes
def _cmd(data, out, *extra, module="analysis.maxent"):
    return [sys.executable, "-m", module, "--runs", str(data / "runs"), "--qrels", str(data / "qrels.txt"),
            "--out", str(out), *ARGS, *extra]


def _sub(cmd, **kw):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(cmd, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True, **kw)


def test_failed_write_leaves_the_finished_result(source, tmp_path):
    out = tmp_path / "out"
    assert _main(source, out)[0] == 0
    assert not (out / ".lock").exists()                   # not left in a finished folder
    before = _files(out)
    done = _sub(["prlimit", "--fsize=3000", *_cmd(source, out, "--resume")], stdout=subprocess.DEVNULL)
    errors = _lines(done.stderr, "error:")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert len(errors) == 1 and errors[0].startswith(f"error: {out}/") and "(File too large)" in errors[0]
    assert _files(out) == before and sorted(p.name for p in out.iterdir()) == sorted(
        p.name for p in out.iterdir() if not p.name.startswith("."))


def test_stdout_full_closed_or_gone(source, tmp_path):
    out = tmp_path / "out"
    with open("/dev/full", "w") as full:
        done = _sub(_cmd(source, out), stdout=full)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert _lines(done.stderr, "error:") == ["error: stdout: cannot write (No space left on device)"]
    assert (out / "summary.csv").exists()                 # the results are written all the same
    before = _files(out)
    shell = subprocess.list2cmdline(_cmd(source, out, "--resume")) + " >&-"
    done = _sub(["sh", "-c", shell])                      # stdout closed
    assert done.returncode == 0 and "Traceback" not in done.stderr and not _lines(done.stderr, "error:")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(_cmd(source, out, "--resume"), cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdout.close()                                   # the reader went away: EPIPE
    err = proc.stderr.read()
    assert proc.wait() == 0 and "Traceback" not in err and not _lines(err, "error:")
    assert _files(out) == before


# ------------------------------------------------------------------ options
NOWHERE = ["--runs", "/nonexistent/runs", "--qrels", "/nonexistent/qrels"]     # never read


@pytest.mark.parametrize("fn", [cli.main, gt.main], ids=["maxent", "gap_thresholds"])
@pytest.mark.parametrize("option, message", [
    (["--threshold", "abc"], "error: --threshold: expected integers >= 1, comma-separated, got 'abc'"),
    (["--threshold", "0"], "error: --threshold: expected integers >= 1, comma-separated, got '0'"),
])
def test_options_refused_before_reading_data(fn, option, message, tmp_path):
    se = io.StringIO()
    with contextlib.redirect_stderr(se), contextlib.redirect_stdout(io.StringIO()):
        code = fn([*NOWHERE, "--out", str(tmp_path / "o"), *option])
    assert code == 1 and se.getvalue() == message + "\n"
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("option, message", [
    (["--bootstrap-g", "bad"], "error: --bootstrap-g: expected g settings g1,g2,... (numbers >= 0) separated "
                               "by ';', got 'bad'"),
    (["--step", "1e-9"], "error: --step: a step of 1e-09 makes 1000000001 g settings over the simplex of 2 "
                         "grades, more than the limit of 10000; choose a larger step (e.g. 0.1)"),
    (["--step", "0.3"], "error: --step: the step must divide 1 (e.g. 0.1, 0.25), got 0.3"),
])
def test_gap_options_refused_before_reading_data(option, message, tmp_path):
    se = io.StringIO()
    with contextlib.redirect_stderr(se), contextlib.redirect_stdout(io.StringIO()):
        code = gt.main([*NOWHERE, "--out", str(tmp_path / "o"), *option])
    assert code == 1 and se.getvalue() == message + "\n"


@pytest.mark.parametrize("fn", [cli.main, gt.main], ids=["maxent", "gap_thresholds"])
@pytest.mark.parametrize("option, message", [
    (["--threshold", "9"], "error: --threshold: 9 is above the highest grade in the qrels (2)"),
    (["--min-relevant", "99999"], "error: --min-relevant: no topic has 99999 relevant documents at threshold 2 "
                                  "(the most is 56), so no list could be kept"),
])
def test_options_refused_against_the_qrels(source, fn, option, message, tmp_path):
    code, err = _main(source, tmp_path / "o", *option, fn=fn)
    assert code == 1 and err.endswith(message + "\n") and len(_lines(err, "error:")) == 1
    assert not (tmp_path / "o").exists()


def test_bootstrap_g_of_other_grades(source, tmp_path):
    code, err = _main(source, tmp_path / "o", "--bootstrap-g", "1,0,0", fn=gt.main)
    assert code == 1 and err.endswith("error: --bootstrap-g: 1,0,0 has 3 values; the qrels have 2 grades\n")


# ------------------------------------------------------------------ SIGKILL, then --resume
def test_killed_at_random_points_then_resumed(data, tmp_path):
    """SIGKILL at 12 seeded random moments (up to a clean run's wall time) of runs that
    resume each other, then the run file of one run regenerated and a last --resume: the
    same bytes as a clean run on those inputs, the changed run's rows recomputed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first, killed_out, fresh = tmp_path / "first", tmp_path / "killed", tmp_path / "fresh"
    t0 = time.monotonic()
    assert _sub(_cmd(data, first), stdout=subprocess.DEVNULL).returncode == 0
    wall = time.monotonic() - t0
    rng = np.random.default_rng(55)
    kills = attempts = 0
    while kills < 12 and attempts < 40:
        attempts += 1
        proc = subprocess.Popen(_cmd(data, killed_out, "--resume"), cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, wall))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
    assert kills == 12
    _regenerate(data / "runs" / "T5R1")
    had_chunk = (killed_out / "chunks" / "T5R1.json").exists()
    done = _sub(_cmd(data, killed_out, "--resume"), stdout=subprocess.DEVNULL)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    if had_chunk:
        assert "resume: run T5R1: the run file changed since its chunk was written; recomputed" in done.stderr
    assert _sub(_cmd(data, fresh), stdout=subprocess.DEVNULL).returncode == 0
    assert _files(killed_out) == _files(fresh)            # config.json too: same input paths
    assert not [p for p in killed_out.rglob(".*")]        # no .lock, staging folder or temporary file
    old = pd.read_csv(first / "instances.csv", dtype={"topic": str})
    new = pd.read_csv(killed_out / "instances.csv", dtype={"topic": str})
    changed = lambda f, run: f[f["run"] == run].reset_index(drop=True)  # noqa: E731
    assert not changed(old, "T5R1").equals(changed(new, "T5R1"))
    for run in ("bm25_baseline", "run1"):
        pd.testing.assert_frame_equal(changed(old, run), changed(new, run))
