"""Bad input gives our own exception naming file, line and reason (the readers of maxent.trec
and maxent.inputs, and rank_runs).

Corpus: tests/data/bad/ (README.md there lists each file, its failure and its line); the
cases are in tests/_bad_cases.py.
"""
from __future__ import annotations

import gzip

import pytest

from maxent import (InputError, MaxEntError, TopicMismatchError, rank_runs, read_qrels, read_run, read_runs,
                    run_from_frame)
from tests._bad_cases import BAD, QRELS_CASES, RUN_CASES


@pytest.mark.parametrize("name, line, reason", RUN_CASES)
def test_bad_run_raises_input_error(name, line, reason):
    path = BAD / name
    with pytest.raises(InputError) as exc:
        read_run(path)
    e = exc.value
    assert type(e) is InputError and isinstance(e, MaxEntError) and isinstance(e, ValueError)
    assert e.path == str(path)
    assert e.line == line
    assert reason in e.reason
    where = f"{path}:{line}" if line is not None else str(path)
    assert str(e) == f"{where}: {e.reason}"


@pytest.mark.parametrize("name, line, reason", QRELS_CASES)
def test_bad_qrels_raises_input_error(name, line, reason):
    path = BAD / name
    with pytest.raises(InputError) as exc:
        read_qrels(path)
    assert (exc.value.path, exc.value.line) == (str(path), line)
    assert reason in exc.value.reason


def test_no_topic_overlap_is_a_topic_mismatch():
    qrels = read_qrels(BAD / "qrels_other_topics.txt")
    run = read_run(BAD / "run_ok.txt")
    with pytest.raises(TopicMismatchError) as exc, pytest.warns(Warning):
        rank_runs([run], qrels)
    assert exc.value.path == str(BAD / "qrels_other_topics.txt") and exc.value.line is None
    assert "no topic in common with run(s) run_ok" in exc.value.reason


def test_controls_are_well_formed():
    # the corpus' control files must read cleanly, so the failures above are the bad lines
    run = read_run(BAD / "run_ok.txt")
    assert run.docno.tolist() == [b"D1", b"D2"] and run.score.tolist() == [3.5, 2.5]
    assert read_qrels(BAD / "qrels_ok.txt").topics == ["401"]


def test_duplicate_in_a_gzipped_run_names_the_gz_file(tmp_path):
    path = tmp_path / "dup.gz"
    path.write_bytes(gzip.compress((BAD / "run_duplicate_docno.txt").read_bytes()))
    with pytest.raises(InputError) as exc:
        read_run(path)
    assert (exc.value.path, exc.value.line) == (str(path), 4)


def test_qrels_docno_judged_twice(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("401 0 D1 1\n401 0 D2 0\n401 0 D1 2\n")
    with pytest.raises(InputError) as exc:
        read_qrels(path)
    assert exc.value.line == 3 and "judged twice" in exc.value.reason


def test_a_directory_without_runs(tmp_path):
    with pytest.raises(InputError) as exc:
        read_runs(tmp_path)
    assert exc.value.path == str(tmp_path) and "no run files" in exc.value.reason


def test_comment_only_file(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("# nothing\n\n# here\n")
    with pytest.raises(InputError) as exc:
        read_run(path)
    assert "only comments" in exc.value.reason


def test_in_memory_run_errors():
    with pytest.raises(InputError) as exc:
        run_from_frame({"1": {"a": 1.0, "b": float("nan")}})
    assert exc.value.line == 2 and "not finite" in exc.value.reason
    with pytest.raises(InputError):
        run_from_frame({})
