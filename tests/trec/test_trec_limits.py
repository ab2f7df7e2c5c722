"""Nothing silently wrong in the readers (maxent.trec, maxent.ranked): grades out of range,
the largest grades, a byte-order mark, long docnos and the vectorised score parser, each case
of tests/data/bad/README.md's second table with its outcome asserted (an error naming file
and line, or the value trec_eval gives).

Oracles: pytrec_eval (an independent build of trec_eval 9) on the same files, Python's
float(), or a hand calculation written beside the number.
"""
from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from maxent.errors import InputWarning

from maxent import InputError, ParameterError, evaluate, read_qrels, read_run
from maxent.cli.evaluate import main as evaluate_main
from maxent.trec import LONG_TOKEN, MAX_GRADE

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"


def _pytrec(qrels: Path, run: Path, measures: set[str]) -> dict:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    with open(qrels) as fq, open(run) as fr:
        q, r = pytrec_eval.parse_qrel(fq), pytrec_eval.parse_run(fr)
    return pytrec_eval.RelevanceEvaluator(q, measures).evaluate(r)


def _values(frame) -> dict[str, float]:
    return dict(zip(frame["measure"], frame["value"]))


# ------------------------------------------------------------------- 1. silent wrong numbers
@pytest.mark.parametrize("name, line, token", [
    ("qrels_grade_40000.txt", 1, "40000"),                   # int16 storage would wrap it to -25536
    ("qrels_grade_overflow.txt", 1, "99999999999999999999"),  # not an OverflowError
    ("qrels_grade_3e9.txt", 2, "3000000000"),                 # counts per grade would need 24 GB
])
def test_grades_out_of_range_are_refused(name, line, token, capsys):
    with pytest.raises(InputError) as exc:
        read_qrels(BAD / name)
    assert (exc.value.path, exc.value.line) == (str(BAD / name), line)
    assert f"grade '{token}' is out of range" in exc.value.reason and str(MAX_GRADE) in exc.value.reason
    assert evaluate_main([str(BAD / name), str(BAD / "run_d1_first.txt"), "-m", "map"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {BAD / name}:{line}: grade") and "Traceback" not in err


def test_largest_grade_and_huge_negative_grade_are_exact():
    # d1 graded 255 (the largest accepted), d2 0, d3 -1e20 (non-relevant, as any negative
    # grade in trec_eval); d1 is ranked first: map 1, ndcg 1
    # (hand: the only relevant document is first, so AP = 1 and DCG = IDCG; pytrec_eval
    # cannot read the -1e20 grade: its parser overflows)
    got = _values(evaluate(BAD / "qrels_grade_255.txt", BAD / "run_d1_first.txt", ["map", "ndcg", "num_rel"]))
    assert got == {"AP": 1.0, "nDCG": 1.0, "NumRel": 1.0}
    assert read_qrels(BAD / "qrels_grade_255.txt").max_grade == 255


def test_grades_beyond_int16_never_wrap_in_ranked_lists():
    with pytest.raises(ParameterError, match="above the largest supported"):
        from maxent import RankedLists
        RankedLists.from_grades([[40000, 0]], [[1, 0]])


def test_byte_order_mark_is_read_through(capsys):
    # qrels: d1, d2 relevant; run ranks d1, d2: AP = (1/1 + 2/2) / 2 = 1 (hand). A BOM read
    # as part of topic "1" on the first line would drop one judgement (map 0.5) and, in a
    # run, the first line, silently.
    # trec_eval 9 keeps the mark in the first qid and drops that line: a warning says so
    with pytest.warns(InputWarning, match="qrels_bom.txt: starts with a UTF-8 byte-order mark.*"
                                          "trec_eval 9 drops this line"):
        q = read_qrels(BAD / "qrels_bom.txt")
    assert q.topics == ["1"] and q.docnos["1"].tolist() == [b"d1", b"d2"]
    with pytest.warns(InputWarning, match="run_bom.txt"):
        r = read_run(BAD / "run_bom.txt")
    assert r.qid.tolist() == [b"1", b"1"] and r.line.tolist() == [1, 2]
    with pytest.warns(InputWarning):
        assert _values(evaluate(BAD / "qrels_bom.txt", BAD / "run_bom.txt", ["map"])) == {"AP": 1.0}
        assert _values(evaluate(BAD / "qrels_bom.txt", BAD / "run_d1_first.txt", ["map"])) == {"AP": 1.0}
    assert evaluate_main([str(BAD / "qrels_bom.txt"), str(BAD / "run_bom.txt"), "-m", "map"]) == 0
    out = capsys.readouterr()
    assert "map                   \tall\t1.0000" in out.out
    err = out.err.splitlines()
    assert len(err) == 2 and all(e.startswith("warning: ") and "trec_eval 9 drops this line" in e for e in err)
    assert "qrels_bom.txt" in err[0] and "run_bom.txt" in err[1]


# ------------------------------------------------------------------ 2. crashes and memory
def test_long_docnos_keep_memory_bounded_and_values_exact():
    # two 1001-byte docnos tie on score 97 at ranks 4-5; trec_eval puts 'b...' (relevant)
    # first (docno descending): AP = (1/1 + 2/4) / 3 = 0.5 (hand; pytrec_eval agrees)
    run, qrels = BAD / "run_long_docno.txt", BAD / "qrels_long_docno.txt"
    r = read_run(run)
    assert r.docno.dtype.itemsize <= LONG_TOKEN + 9
    got = _values(evaluate(qrels, run, ["map", "ndcg", "P_5"]))
    ref = _pytrec(qrels, run, {"map", "ndcg", "P_5"})["1"]
    assert got["AP"] == 0.5 == ref["map"]
    assert abs(got["nDCG"] - ref["ndcg"]) < 1e-12 and got["P@5"] == ref["P_5"] == 0.4


def test_one_huge_docno_does_not_multiply_memory(tmp_path):
    # 30,000 lines and one 100 KB docno: plain fixed-width storage would need 3 GB (30,000 x 100 KB)
    lines = [f"1 Q0 d{i} {i + 1} {30000 - i} r" for i in range(30000)]
    lines[5] = f"1 Q0 {'x' * 100_000} 6 29995 r"
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        r = read_run(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(r) == 30000 and r.docno.dtype.itemsize == LONG_TOKEN + 9
    assert peak < 40 * size  # about 16 MB for this 1 MB file, not the 3 GB of plain fixed width


def test_long_duplicate_docno_is_reported_readably(tmp_path):
    path = tmp_path / "run.txt"
    long = "u" * 300
    path.write_text(f"1 Q0 {long} 1 2.0 r\n1 Q0 d2 2 1.0 r\n1 Q0 {long} 3 0.5 r\n")
    with pytest.raises(InputError) as exc:
        read_run(path)
    assert exc.value.line == 3
    assert exc.value.reason == f"duplicate docno '{'u' * LONG_TOKEN}...' in topic 1 (first at line 1)"


# ------------------------------------------------------------------------------ scores
def test_score_parsing_fast_path_equals_float():
    # the vectorised parser (also for 16-19 digit scores, which most of the bundled runs'
    # scores have) must give exactly float(text); oracle: Python's correctly rounded float()
    from tests._trec_numpy import _decimal_fast_path

    rng = np.random.default_rng(13)
    texts = []
    for _ in range(20000):
        nd = int(rng.integers(1, 20))
        digits = "".join(map(str, rng.integers(0, 10, nd)))
        k = int(rng.integers(0, nd + 1))
        t = digits[:k] + "." + digits[k:] if rng.random() < 0.9 else digits
        texts.append(("-" if rng.random() < 0.3 else "") + t)
    # exact half-way cases between two doubles must not be rounded twice
    texts += ["9007199254740993", "0.9007199254740993", "4503599627370497.5", "1.000000000000000111",
              "0.16666666666666666", "-0.48203300482513390", "9999999999999999999"]
    W = max(map(len, texts))
    mat = np.zeros((len(texts), W), dtype=np.uint8)
    for i, t in enumerate(texts):
        b = t.encode()
        mat[i, W - len(b):] = np.frombuffer(b, dtype=np.uint8)
    value, ok = _decimal_fast_path(mat)
    expected = np.array([float(t) if t.strip("-.") else np.nan for t in texts])
    assert ok.mean() > 0.95
    assert np.array_equal(value[ok], expected[ok])
    assert not ok[texts.index("9007199254740993")]  # a half-way case goes to the exact path
