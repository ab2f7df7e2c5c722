"""``python -m maxent.evaluate --jobs``: run files read and ranked in a forked child
(maxent._fork) give exactly what one process gives.

Oracle: the same command with ``--jobs 1`` (the sequential path): stdout, stderr and exit
code byte-identical, good inputs and bad ones (the first bad file in argument order wins,
whichever process read it). A ``sitecustomize`` module in the real command records every
fork (so a test of the parallel path cannot pass on the sequential one) and, at the
command's exit, whether each child was reaped; it can also hold the child before it sends
its results, for the interrupt tests.
"""
from __future__ import annotations

import gzip
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from maxent import _fork

ROOT = Path(__file__).resolve().parents[1]
RUNS = sorted((ROOT / "trec_runs" / "runs").iterdir())
QRELS = ROOT / "trec_runs" / "qrels-rnd1.txt"
BAD = ROOT / "tests" / "data" / "bad"

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or not hasattr(os, "sched_getaffinity"),
                                reason="--jobs forks only on Linux (os.fork, os.sched_getaffinity)")

_HOOKS = '''import os, sys, time
_fork, _exit = os.fork, os._exit
_forks = os.environ["MAXENT_TEST_FORKS"]
_child = []
def fork():
    pid = _fork()
    if pid == 0:
        _child.append(True)
    else:
        with open(_forks, "a") as f:
            f.write(f"fork {pid}\\n")
    return pid
def exit_(code):
    if not _child:  # the parent's exit: was every child reaped?
        with open(_forks, "a") as f:
            for line in open(_forks).read().split("\\n"):
                if line.startswith("fork "):
                    pid = int(line.split()[1])
                    try:
                        os.waitpid(pid, os.WNOHANG)
                        f.write(f"left {pid}\\n")
                    except ChildProcessError:
                        f.write(f"reaped {pid}\\n")
    _exit(code)
os.fork, os._exit = fork, exit_
if os.environ.get("MAXENT_TEST_HOLD_CHILD"):  # the child waits before sending its results
    import pickle
    _dumps = pickle.dumps
    def dumps(*a, **k):
        if _child:
            open(os.environ["MAXENT_TEST_HOLD_CHILD"], "w").write(str(os.getpid()))
            time.sleep(60)
        return _dumps(*a, **k)
    pickle.dumps = dumps
'''


def _command(tmp_path: Path, args, jobs: str, hold: bool = False, **popen):
    (tmp_path / "hooks").mkdir(exist_ok=True)
    (tmp_path / "hooks" / "sitecustomize.py").write_text(_HOOKS)
    log = tmp_path / f"forks-{jobs}.txt"
    log.write_text("")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env.update(PYTHONPATH=str(tmp_path / "hooks"), MAXENT_TEST_FORKS=str(log))
    if hold:
        env["MAXENT_TEST_HOLD_CHILD"] = str(tmp_path / "held")
    cmd = [sys.executable, "-m", "maxent.evaluate", *map(str, args), "--jobs", jobs]
    return cmd, env, log


def _run(tmp_path: Path, args, jobs: str):
    cmd, env, log = _command(tmp_path, args, jobs)
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True)
    return done.returncode, done.stdout, done.stderr, log.read_text().split("\n")[:-1]


def _same_as_one_process(tmp_path: Path, args, forks: int = 1):
    """Run ``args`` with --jobs 1 and --jobs 2: the same (rc, stdout, stderr); return it."""
    rc1, out1, err1, log1 = _run(tmp_path, args, "1")
    rc2, out2, err2, log2 = _run(tmp_path, args, "2")
    assert log1 == []                                           # one process
    assert len([x for x in log2 if x.startswith("fork")]) == forks
    assert [x.split()[0] for x in log2] == ["fork"] * forks + ["reaped"] * forks
    assert (rc2, out2.decode(), err2.decode()) == (rc1, out1.decode(), err1.decode())
    return rc1, out1.decode(), err1.decode()


@pytest.mark.parametrize("options", [
    ["-m", "map", "-m", "P_10", "-m", "ndcg", "-q"],
    ["-m", "official", "-c", "-M", "50", "--score-precision", "double"],
    ["-m", "P_5", "-m", "ndcg_cut_10", "-m", "gm_map", "--format", "csv"],
])
def test_bundled_runs_give_the_same_bytes(tmp_path, options):
    rc, out, err = _same_as_one_process(tmp_path, [QRELS, *RUNS, *options])
    assert rc == 0 and err == "" and len(out) > 1000


def _with_unknown_topics(src: Path, dst: Path) -> Path:
    data = gzip.decompress(src.read_bytes()) + b"999 Q0 extra 1 0.5 x\n"
    dst.write_bytes(data)
    return dst


def test_warnings_of_both_processes_in_argument_order(tmp_path):
    # runs with topics absent from the qrels: one stderr warning each, in argument order
    runs = [_with_unknown_topics(p, tmp_path / f"u{i}.txt") for i, p in enumerate(RUNS[:6])]
    rc, out, err = _same_as_one_process(tmp_path, [QRELS, *runs, "-m", "map"])
    assert rc == 0
    assert err.splitlines() == [f"warning: run u{i}.txt: 1 topic(s) not in the qrels, ignored: 999"
                                for i in range(6)]


def _share_of(files, index) -> int:
    """Which process (0 = the parent) --jobs 2 gives files[index] (maxent._fork.plan)."""
    _, shares = _fork.plan(files, 2)
    return next(k for k, s in enumerate(shares) if index in s)


@pytest.fixture
def single_threaded(monkeypatch):
    # plan() refuses to fork a multi-threaded process (this one has BLAS threads)
    monkeypatch.setattr(_fork, "_single_threaded", lambda: True)


def _bad_copy(src: Path, dst: Path, kind: str) -> Path:
    """A bundled run with one bad line appended (its last line): a duplicate docno or a NaN
    score, gzipped. About as large as the run, so the planner may give it to either process."""
    data = gzip.decompress(src.read_bytes())
    first = data.split(b"\n", 1)[0].split()
    extra = first if kind == "dup" else [first[0], b"Q0", b"new-doc", b"1", b"NaN", b"x"]
    dst.write_bytes(gzip.compress(data + b" ".join(extra) + b"\n", compresslevel=1))
    return dst


@pytest.mark.parametrize("first_bad_in", [0, 1])       # the parent's share, the child's
@pytest.mark.parametrize("second", [False, True])      # a later bad file in the other share
def test_first_bad_file_in_argument_order_wins(tmp_path, single_threaded, first_bad_in, second):
    import itertools

    good = [Path(shutil.copy(p, tmp_path / p.name)) for p in RUNS[:8]]
    def bad_files(runs, name, kind):
        for i, r in enumerate(runs):
            (tmp_path / f"{name}-{i}").mkdir()
            yield _bad_copy(r, tmp_path / f"{name}-{i}" / f"{name}.gz", kind)

    firsts = list(bad_files([RUNS[7], RUNS[9], RUNS[0]], "bad1", "dup"))
    seconds = list(bad_files(RUNS[10:16], "bad2", "nan"))
    for bad, bad2, n, k in itertools.product(firsts, seconds, range(2, 9), range(9)):  # a layout that
        files = good[:k] + [bad] + good[k:n]                      # puts them there
        if k > n or _share_of(files, k) != first_bad_in:
            continue
        if not second:
            break
        cands = [files[:j] + [bad2] + files[j:] for j in range(k + 1, len(files) + 1)]
        cands = [(c, j) for c, j in zip(cands, range(k + 1, len(files) + 1))
                 if _share_of(c, k) == first_bad_in and _share_of(c, j) != first_bad_in]
        if cands:
            files = cands[0][0]
            break
    else:
        pytest.fail("no layout puts the bad files in those shares")
    rc, out, err = _same_as_one_process(tmp_path, [QRELS, *files, "-m", "map"])
    assert (rc, out) == (1, "")
    assert err.startswith(f"error: {bad}:") and "duplicate docno" in err  # not bad2's NaN


@pytest.mark.parametrize("case", ["missing", "empty_dir", "duplicate_name", "no_common_topic",
                                  "corrupt_gzip"])
def test_other_errors_are_the_sequential_ones(tmp_path, case):
    runs = [RUNS[3], RUNS[17], RUNS[14]]
    forks = 1
    if case == "missing":
        runs.insert(1, tmp_path / "nothere.gz")
    elif case == "empty_dir":
        (tmp_path / "empty").mkdir()
        runs.insert(1, tmp_path / "empty")
        forks = 0                          # found before forking: one process
    elif case == "duplicate_name":
        (tmp_path / "a").mkdir()
        runs.append(shutil.copy(RUNS[3], tmp_path / "a" / RUNS[3].name))
        forks = 0
    elif case == "corrupt_gzip":
        runs.insert(2, BAD / "run_corrupt.gz")
    qrels = BAD / "qrels_other_topics.txt" if case == "no_common_topic" else QRELS
    if case == "missing":
        forks = 0                          # not a regular file: one process
    rc, out, err = _same_as_one_process(tmp_path, [qrels, *runs, "-m", "map"], forks=forks)
    assert rc == 1 and out == "" and err.startswith("error: ")


def test_broken_pipe_exits_141_quietly(tmp_path):
    args = [QRELS, *RUNS, "-m", "map", "-m", "ndcg", "-q"]
    results = {}
    for jobs in ("1", "2"):
        cmd, env, log = _command(tmp_path, args, jobs)
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        first = proc.stdout.readline()
        proc.stdout.close()                   # as `| head -1`
        err = proc.stderr.read()
        results[jobs] = (proc.wait(timeout=60), first, err)
        entries = log.read_text().split()
        assert entries.count("fork") == (jobs == "2") and entries.count("left") == 0
    assert results["1"] == results["2"]
    assert results["2"][0] == 141 and results["2"][1].startswith(b"map") and results["2"][2] == b""


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def _own_group_default_sigint():
    """In the command's process: its own process group, and SIGINT's default action. A shell
    starts a background job with SIGINT ignored, and an ignored SIGINT is inherited: Python
    then never raises KeyboardInterrupt, whatever the command does."""
    os.setpgrp()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("target", ["group", "parent"])
def test_interrupt_ends_both_processes(tmp_path, target):
    # the child is held before sending its results; SIGINT to the process group (Ctrl-C) or
    # to the parent alone: the command ends as one process does (KeyboardInterrupt, -SIGINT)
    # and the child is gone at once (not after its 60 s hold)
    cmd, env, log = _command(tmp_path, [QRELS, *RUNS, "-m", "map"], "2", hold=True)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=_own_group_default_sigint)
    held = tmp_path / "held"
    deadline = time.monotonic() + 30
    while not (held.exists() and held.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)
    child = int(held.read_text())
    time.sleep(0.2)                           # the parent is waiting for the child now
    t = time.monotonic()
    if target == "group":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGINT and out == b"" and b"KeyboardInterrupt" in err
    assert time.monotonic() - t < 10
    deadline = time.monotonic() + 5
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child)


def test_auto_forks_only_into_an_idle_cpu(monkeypatch, single_threaded):
    # auto: as many processes as idle CPUs, enough bytes (4 MB of text each) and files allow
    monkeypatch.setattr(_fork, "idle_cpus", lambda: 2)
    files, shares = _fork.plan(RUNS, None)
    assert len(shares) == 2 and sorted(sum(shares, [])) == list(range(len(RUNS)))
    monkeypatch.setattr(_fork, "idle_cpus", lambda: 1)    # the other CPU is busy
    assert _fork.plan(RUNS, None) is None
    monkeypatch.setattr(_fork, "idle_cpus", lambda: 2)
    assert _fork.plan(RUNS[:1], None) is None              # one file
    assert _fork.plan([BAD / "run_ok.txt", BAD / "run_d1_first.txt"], None) is None  # bytes
    assert _fork.plan(RUNS, 1) is None                     # --jobs 1
    assert len(_fork.plan(RUNS, 3)[1]) == 3                # --jobs 3, whatever the CPUs


@pytest.mark.parametrize("running, idle", [(1, 2), (2, 1), (3, 0), (7, 0)])
def test_idle_cpus_from_the_running_task_count(tmp_path, monkeypatch, running, idle):
    # 2 usable CPUs, `running` tasks running (this one included): idle = 2 - (running - 1)
    loadavg = tmp_path / "loadavg"
    loadavg.write_text(f"4.27 4.23 3.90 {running}/102 28227\n")
    monkeypatch.setattr(_fork, "usable_cpus", lambda: 2)
    assert _fork.idle_cpus(loadavg) == idle
    assert _fork.idle_cpus(tmp_path / "absent") == 0
    assert 0 <= _fork.idle_cpus() <= os.cpu_count()        # the real /proc/loadavg


@pytest.mark.parametrize("value", ["0", "-1", "two", ""])
def test_jobs_must_be_a_positive_integer_or_auto(value, capsys):
    from maxent.evaluate import main

    with pytest.raises(SystemExit) as e:
        main([str(QRELS), str(RUNS[0]), "--jobs", value])
    assert e.value.code == 2                               # argparse's usage error
    assert "--jobs: expected a positive integer or auto" in capsys.readouterr().err
    assert main([str(QRELS), str(RUNS[0]), "-m", "map", "--jobs", "auto"]) == 0


def test_text_size_is_the_gunzipped_length(tmp_path):
    """plan() balances the processes by text bytes: a gzip file's trailer (ISIZE) gives
    its uncompressed length (oracle: gzip.decompress); a plain file's size is its own."""
    for run in RUNS[:3]:
        assert _fork.text_size(run, run.stat().st_size) == len(gzip.decompress(run.read_bytes()))
    plain = tmp_path / "plain.txt"
    plain.write_bytes(b"1 Q0 d1 1 2.5 t\n")
    assert _fork.text_size(plain, plain.stat().st_size) == plain.stat().st_size
    tiny = tmp_path / "tiny.gz"                   # shorter than a gzip header + trailer
    tiny.write_bytes(b"\x1f\x8b\x08")
    assert _fork.text_size(tiny, 3) == 3


def test_parent_takes_the_larger_share(single_threaded):
    """PARENT_EXTRA: the parent's share of the text is larger than each child's."""
    files, shares = _fork.plan(RUNS, 2)
    text = [_fork.text_size(f, f.stat().st_size) for f in files]
    parent, child = (sum(text[i] for i in s) for s in shares)
    assert parent > child
    assert sorted(i for s in shares for i in s) == list(range(len(files)))
