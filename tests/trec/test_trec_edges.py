"""The readers at the edges (maxent.trec): hints for a UTF-16 file and for swapped qrels and
run, and qrels at scale (vectorised counts, a file and the same qrels in memory rank alike).

Oracles: the tiny files of tests/data/bad, the per-topic definition of the level counts, and
the ranking of the qrels read from their file.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from maxent import read_qrels, read_run
from maxent.errors import InputError
from tests._bundled import run_evaluate
from maxent.ranked import rank_runs

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"
QRELS = ROOT / "trec_runs" / "qrels-rnd1.txt"
RUNS = sorted((ROOT / "trec_runs" / "runs").iterdir())


_cli = run_evaluate


# ---------------------------------------------------------------------------- the inputs
def test_utf16_file_gets_a_hint():
    with pytest.raises(InputError, match="UTF-16 text.*iconv -f UTF-16 -t UTF-8") as e:
        read_qrels(BAD / "qrels_utf16.txt")
    assert e.value.line is None
    code, out, err = _cli([BAD / "qrels_utf16.txt", BAD / "run_ok.txt"])
    assert code == 1 and err.count("\n") == 1 and "UTF-16" in err


def test_swapped_qrels_and_run_get_a_hint():
    code, out, err = _cli([BAD / "run_ok.txt", BAD / "qrels_ok.txt"])
    assert code == 1 and err.count("\n") == 1
    assert "run_ok.txt:1: expected 4 columns" in err and "looks like a run file" in err and "swapped" in err
    with pytest.raises(InputError, match="looks like a qrels file.*swapped"):
        read_run(BAD / "qrels_ok.txt")
    # a plain short line gets no such hint
    with pytest.raises(InputError) as e:
        read_run(BAD / "run_too_few_columns.txt")
    assert "swapped" not in str(e.value)


# ----------------------------------------------------------------------- qrels at scale
def test_qrels_counts_equal_level_counts_per_topic():
    # the vectorised counts of every topic against the per-topic definition
    q = read_qrels(ROOT.parent / "shared" / "data" / "trec_eval_test" / "qrels.rel_level") \
        if (ROOT.parent / "shared" / "data" / "trec_eval_test" / "qrels.rel_level").exists() else read_qrels(QRELS)
    for levels in (1, 2, q.max_grade + 1, q.max_grade + 3):
        want = np.stack([q.level_counts(t, levels) for t in q.topics])
        np.testing.assert_array_equal(q.counts(levels), want)


def test_qrels_from_a_file_and_in_memory_rank_the_same():
    from maxent.trec import Qrels

    q = read_qrels(QRELS)
    mem = Qrels(q.path, list(q.topics), {t: q.docnos[t] for t in q.topics},
                {t: q.grades[t] for t in q.topics}, q.max_grade)
    runs = [read_run(p) for p in RUNS[:3]]
    a, b = rank_runs(runs, q), rank_runs(runs, mem)
    np.testing.assert_array_equal(a.grades, b.grades)
    np.testing.assert_array_equal(a.rel_counts, b.rel_counts)
    assert q.docnos.get("no such topic") is None and "1" in q.docnos and len(q.docnos) == len(q.topics)


def test_qids_printing_alike_are_refused_where_read(tmp_path, capsys):
    """Bytes FE 31 print as ``\\xfe1``; beside a qid that is that text, every table keyed by
    the printed qid would merge them: reading the qrels refuses the pair, naming both lines,
    for frames and for the command's ``-q`` lines alike."""
    from maxent import evaluate
    from maxent.cli.evaluate import main
    from maxent.errors import InputError

    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_bytes(b"\\xfe1 0 d1 1\nx 0 d1 1\n\xfe1 0 d2 1\n")
    run.write_bytes(b"\\xfe1 Q0 d1 1 2.0 r\n\xfe1 Q0 d2 1 2.0 r\n")
    said = r"qrels:3: qid b'\xfe1' prints as '\\xfe1', as the distinct qid b'\\xfe1' at line 1 does"
    with pytest.raises(InputError, match=re.escape(said)):
        evaluate(qrels, run, ["AP"])
    assert main(["-q", "-m", "map", str(qrels), str(run)]) != 0
    out, err = capsys.readouterr()
    assert out == "" and "qrels:3: qid b'\\xfe1' prints as" in err and len(err.strip().splitlines()) == 1
    qrels.write_bytes(b"\xfe1 0 d2 1\nx 0 d1 1\n\\xfe1 0 d1 1\n\xfe1 0 d0 1\n")   # the other way round
    said = r"qrels:3: qid b'\\xfe1' prints as '\\xfe1', as the distinct qid b'\xfe1' at line 1 does"
    with pytest.raises(InputError, match=re.escape(said)):
        evaluate(qrels, run, ["AP"])
    qrels.write_bytes(b"\xff1 0 d1 1\n\xfe1 0 d2 1\n")
    run.write_bytes(b"\xff1 Q0 d1 1 2.0 r\n\xfe1 Q0 d2 1 2.0 r\n")
    assert sorted(evaluate(qrels, run, ["AP"]).topic) == ["\\xfe1", "\\xff1"]    # distinct, escaped
