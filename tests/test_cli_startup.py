"""The fast path of ``python -m maxent.evaluate`` at start-up: what the command
loads, its BLAS start-up and quick exit, the gzip engines, the hash index of the grade
look-up and the O(n) ranking of presorted runs.

Oracles: zlib (the standard library) for the optional ISA-L gzip engine; a Python dict for
the hash index (maxent/_ctrec.c); Python's sort by trec_eval's key for the ranking; the same
evaluation in this process for the command's output; ``sys.modules`` and the environment of
the real command, recorded at its exit by a ``sitecustomize`` module.
(The score parser's oracle test, against ``float()``, is in tests/test_nothing_silent.py.)
"""
from __future__ import annotations

import gzip
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from maxent import InputError, read_run
from maxent import _rawread
from maxent._rawread import gunzip as _gunzip
from maxent.trec import _KeyIndex, inflate_engine

ROOT = Path(__file__).resolve().parents[1]
RUNS = sorted((ROOT / "trec_runs" / "runs").iterdir())
QRELS = ROOT / "trec_runs" / "qrels-rnd1.txt"


def _engines():
    engines = [pytest.param(zlib, id="zlib")]
    try:
        from isal import isal_zlib
        engines.append(pytest.param(isal_zlib, id="isal"))
    except ImportError:
        engines.append(pytest.param(None, id="isal", marks=pytest.mark.skip(
            reason="isal not installed (pip install -e '.[fast]')")))
    return engines


@pytest.mark.parametrize("engine", _engines())
def test_gzip_engines_give_zlibs_bytes(engine, tmp_path, monkeypatch):
    # every bundled run, a multi-member file with zero padding, a truncated and a corrupt file
    for path in RUNS[:4]:
        raw = path.read_bytes()
        assert _gunzip(raw, engine) == zlib.decompressobj(wbits=31).decompress(raw)
    two = gzip.compress(b"1 Q0 d1 1 2.0 r\n") + gzip.compress(b"1 Q0 d2 2 1.0 r\n") + b"\0\0\0"
    assert _gunzip(two, engine) == b"1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n"
    monkeypatch.setattr(_rawread, "_INFLATE", engine)  # read_run through this engine
    path = tmp_path / "run.gz"
    path.write_bytes(two)
    assert read_run(path).docno.tolist() == [b"d1", b"d2"]
    path.write_bytes(gzip.compress(b"1 Q0 d1 1 2.0 r\n" * 1000)[:-20])
    with pytest.raises(InputError, match="corrupt gzip data"):
        read_run(path)
    data = bytearray(gzip.compress(b"1 Q0 d1 1 2.0 r\n" * 1000))
    data[12:20] = b"\xff" * 8
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="corrupt gzip data"):
        read_run(path)


def test_inflate_engine_is_isal_when_installed():
    try:
        from isal import isal_zlib
    except ImportError:
        pytest.skip("isal not installed (pip install -e '.[fast]')")
    assert inflate_engine() is isal_zlib


@pytest.mark.parametrize("n", [0, 1, 5, 1000, 20000])
def test_key_index_equals_a_dict(n):
    rng = np.random.default_rng(n)
    keys = rng.integers(0, 2**64, n, dtype=np.uint64, endpoint=False)
    query = np.concatenate([keys, rng.integers(0, 2**64, 500, dtype=np.uint64)])
    rng.shuffle(query)
    where = {int(k): i for i, k in enumerate(keys)}
    expected = [where.get(int(k), -1) for k in query]
    assert _KeyIndex(keys).get_indexer(query).tolist() == expected


def test_key_index_with_keys_that_are_not_hashes():
    # keys sharing their top bits (small integers, not hashes) are found all the same
    keys = np.arange(50, dtype=np.uint64)[::-1].copy()
    query = np.arange(100, dtype=np.uint64)
    expected = [49 - int(q) if q < 50 else -1 for q in query]
    assert _KeyIndex(keys).get_indexer(query).tolist() == expected


# ------------------------------------------------------------------ what the command loads
_REPORTER = '''import atexit, gc, os, sys
def _report():
    with open(os.environ["MAXENT_TEST_MODULES"], "w") as f:
        f.write(repr((os.environ.get("OPENBLAS_NUM_THREADS"), sorted(sys.modules))))
    with open(os.environ["MAXENT_TEST_MODULES"] + ".gc", "w") as f:
        f.write(repr((gc.isenabled(), gc.get_freeze_count())))
atexit.register(_report)
_exit = os._exit
def _exit_reporting(code):   # the command ends with os._exit, which skips atexit
    _report()
    _exit(code)
os._exit = _exit_reporting
'''
NEVER_ON_THE_EVALUATE_PATH = ("pandas", "scipy", "numba", "matplotlib", "tqdm", "cvxpy",
                              "maxent.solver", "maxent.inference", "maxent.ltr", "maxent.active")


def _modules_of(args: list[str], tmp_path: Path, env_extra: dict | None = None):
    """(OPENBLAS_NUM_THREADS, sys.modules) at the exit of ``python -m maxent.evaluate ARGS``,
    recorded by a sitecustomize module (the real command, its real start-up)."""
    import os

    (tmp_path / "sitecustomize.py").write_text(_REPORTER)
    out = tmp_path / "modules.txt"
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env.update(PYTHONPATH=str(tmp_path), MAXENT_TEST_MODULES=str(out), **(env_extra or {}))
    done = subprocess.run([sys.executable, "-m", "maxent.evaluate", *args], cwd=ROOT, env=env,
                          capture_output=True, check=True)
    return eval(out.read_text()), done


def test_evaluate_command_loads_no_heavy_module(tmp_path):
    # pandas, scipy, numba, matplotlib, the solver: none is imported by
    # `python -m maxent.evaluate` in trec format, so its start-up cannot regress silently
    (blas, modules), _ = _modules_of([str(QRELS), *map(str, RUNS[:3]), "-m", "map", "-m", "P_10",
                                      "-m", "ndcg", "-q"], tmp_path)
    loaded = sorted(m for m in modules if m.split(".")[0] in NEVER_ON_THE_EVALUATE_PATH
                    or m.startswith(NEVER_ON_THE_EVALUATE_PATH))
    assert loaded == []
    assert "maxent.evaluate" in modules and "numpy" in modules  # the reporter did run


def test_evaluate_command_starts_without_the_blas_thread_pool(tmp_path):
    (blas, _), _ = _modules_of(["--describe", "map"], tmp_path)
    assert blas == "1"
    (blas, _), _ = _modules_of(["--describe", "map"], tmp_path, {"OPENBLAS_NUM_THREADS": "2"})
    assert blas == "2"                               # a user's setting wins


def test_evaluate_command_output_survives_its_quick_exit(tmp_path):
    # the command ends with os._exit after flushing: everything printed must arrive, on a
    # pipe (block-buffered) as on a file; oracle: the same evaluation in this process
    import contextlib
    import io

    from maxent.evaluate import main

    args = [str(QRELS), *map(str, RUNS), "-m", "map", "-m", "P_10", "-m", "ndcg", "-q"]
    _, done = _modules_of(args, tmp_path)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(args) == 0
    assert done.stdout.decode() == buf.getvalue() and len(buf.getvalue()) > 50_000
    out = tmp_path / "out.txt"
    with open(out, "w") as f:
        assert subprocess.run([sys.executable, "-m", "maxent.evaluate", *args], cwd=ROOT,
                              stdout=f).returncode == 0
    assert out.read_text() == buf.getvalue()
    bad = subprocess.run([sys.executable, "-m", "maxent.evaluate", str(QRELS), "nothere.gz"],
                         cwd=ROOT, capture_output=True, text=True)
    assert (bad.returncode, bad.stderr) == (1, "error: nothere.gz: no such file\n")


def test_evaluate_command_resumes_garbage_collection_after_its_imports(tmp_path):
    # _startup pauses the collector during the command's imports only: at the exit it is
    # on again, the imported objects frozen (a pause that never ended would show False, 0)
    args = [str(QRELS), *map(str, RUNS[:2]), "-m", "map"]
    _modules_of(args, tmp_path)
    enabled, frozen = eval((tmp_path / "modules.txt.gc").read_text())
    assert enabled and frozen > 1000
    _modules_of(args + ["--jobs", "2"], tmp_path)                # the forked path too
    assert eval((tmp_path / "modules.txt.gc").read_text())[0]


def test_library_import_leaves_garbage_collection_alone():
    code = "import gc, maxent, maxent.evaluate; print(gc.isenabled(), gc.get_freeze_count())"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    assert out.stdout.split() == ["True", "0"]


def test_library_import_keeps_the_blas_thread_pool():
    import os

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    code = "import os, maxent, maxent.evaluate; print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "None"


# ------------------------------------------------------------------ ranking's O(n) path
@pytest.mark.parametrize("layout", ["sorted_blocks", "unsorted_block", "split_topic"])
def test_trec_order_equals_a_python_sort(layout):
    # oracle: Python's sort by (topic code, score descending, docno descending), trec_eval's
    # order; blocks of topics in shuffled order (the O(n) path: a run in 1, 2, ..., 10 order
    # against qrels in 1, 10, 2, ... order), one block unsorted or one topic in two blocks
    # (the sorting path)
    from maxent.ranked import _trec_order

    rng = np.random.default_rng(["sorted_blocks", "unsorted_block", "split_topic"].index(layout))
    for trial in range(30):
        topics = rng.permutation(int(rng.integers(1, 8)))
        code, score, docno = [], [], []
        for t in topics:
            k = int(rng.integers(1, 60))
            s = np.sort(rng.integers(0, 8, k).astype(np.float32) / 4)[::-1]  # ties
            code += [t] * k
            score += s.tolist()
            docno += [f"d{rng.integers(0, 10**int(rng.integers(1, 4)))}".encode() for _ in range(k)]
        code, score = np.array(code, dtype=np.int64), np.array(score, dtype=np.float32)
        docno = np.array(docno, dtype=bytes)
        _, keep = np.unique(np.stack([code.astype(str), docno.astype(str)]), axis=1, return_index=True)
        keep = np.sort(keep)                               # a docno once per topic
        code, score, docno = code[keep], score[keep], docno[keep]
        if layout == "unsorted_block" and len(score) > 2:
            score[-1], score[0] = score[0], score[-1] - 1
        if layout == "split_topic" and len(score) > 2 and code[-1] != code[0]:
            code[-1], docno[-1] = code[0], b"e"            # a docno no other line has
        expected = sorted(range(len(score)), key=lambda i: (code[i], -score[i], _desc(docno[i])))
        assert _trec_order(score, code, docno).tolist() == expected


def _desc(b: bytes):
    # sort key for bytes descending (strcmp order, reversed), as a tuple of negated bytes
    return tuple(-x for x in b) + (1,)
