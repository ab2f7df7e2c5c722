"""The bad-input corpus tests/data/bad/ (README.md there lists each file, its failure and its
line): the cases that the readers' tests (tests/trec/test_trec_errors.py) and the command's
(tests/cli/test_evaluate_errors.py) both run."""
from __future__ import annotations

from pathlib import Path

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
