"""Bad input to ``maxent evaluate`` (maxent.cli.evaluate): one line on stderr naming file, line
and reason, exit status 1, and the traceback only with --debug.

Corpus: tests/data/bad/ (README.md there lists each file, its failure and its line); the
cases are in tests/_bad_cases.py.
"""
from __future__ import annotations

import pytest

from maxent import InputError
from maxent.cli.evaluate import main
from tests._bad_cases import BAD, QRELS_CASES, RUN_CASES


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
