"""Bad input gives our own exception naming file, line and reason; the CLI prints one line.

Corpus: tests/data/bad/ (README.md there lists each file, its failure and its line).
"""
from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from maxent import (InputError, MaxEntError, MeasureNameError, ParameterError, TopicMismatchError,
                    parse_measure, rank_runs, read_qrels, read_run, read_runs, run_from_frame)
from maxent.cli.evaluate import main

BAD = Path(__file__).resolve().parent / "data" / "bad"

RUN_CASES = [
    # file, expected line (None: the whole file), words the reason must contain
    ("run_too_few_columns.txt", 2, "expected 6 columns"),
    ("run_score_not_number.txt", 3, "'high' is not a number"),
    ("run_score_nan.txt", 2, "'NaN' is not finite"),
    ("run_score_inf.txt", 3, "'-inf' is not finite"),
    ("run_duplicate_docno.txt", 4, "duplicate docno 'D1' in topic 401 (first at line 1)"),
    ("run_empty.txt", None, "empty file"),
    ("run_corrupt.gz", None, "corrupt gzip"),
    ("run_binary.txt", 2, "binary data"),
    ("missing_run.txt", None, "no such file"),
]

QRELS_CASES = [
    ("qrels_bad_grade.txt", 2, "grade 'high' is not a number"),
    ("qrels_five_columns.txt", 3, "expected 4 columns"),
    ("run_empty.txt", None, "empty file"),
    ("missing_qrels.txt", None, "no such file"),
]


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


def test_measure_and_parameter_errors():
    with pytest.raises(MeasureNameError, match="did you mean"):
        parse_measure("nDGC@10")
    with pytest.raises(MeasureNameError):
        parse_measure("P@0")  # a ParameterError inside a name is reported as a name error
    from maxent.metrics import Precision
    with pytest.raises(ParameterError):
        Precision(cutoff=0)


# ------------------------------------------------------------------ command line
@pytest.mark.parametrize("name, line, reason", RUN_CASES)
def test_cli_prints_one_line_and_exits_1(name, line, reason, capsys):
    path = BAD / name
    rc = main([str(BAD / "qrels_ok.txt"), str(path), "-m", "map"])
    out, err = capsys.readouterr()
    assert rc == 1 and out == ""
    where = f"{path}:{line}" if line is not None else str(path)
    assert err.startswith(f"error: {where}: ") and reason in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("name, line, reason", QRELS_CASES)
def test_cli_bad_qrels(name, line, reason, capsys):
    rc = main([str(BAD / name), str(BAD / "run_ok.txt")])
    err = capsys.readouterr().err
    where = f"{BAD / name}:{line}" if line is not None else str(BAD / name)
    assert rc == 1 and err.startswith(f"error: {where}: ") and err.count("\n") == 1


def test_cli_topic_mismatch(capsys):
    rc = main([str(BAD / "qrels_other_topics.txt"), str(BAD / "run_ok.txt")])
    err = capsys.readouterr().err
    assert rc == 1 and err.startswith("error: ") and "no topic in common" in err
    assert err.count("\n") == 1


def test_cli_unknown_measure(capsys):
    rc = main([str(BAD / "qrels_ok.txt"), str(BAD / "run_ok.txt"), "-m", "nDGC@10"])
    err = capsys.readouterr().err
    assert rc == 1 and err.startswith("error: unknown measure 'nDGC@10'") and err.count("\n") == 1


def test_cli_debug_reraises():
    with pytest.raises(InputError):
        main([str(BAD / "qrels_ok.txt"), str(BAD / "run_score_nan.txt"), "--debug"])
