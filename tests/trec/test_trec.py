"""TREC readers: runs and qrels, plain and gzip, files and directories, trec_eval's parsing."""
from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from maxent import InputError, Qrels, Run, read_qrels, read_run, read_runs, run_from_frame
from maxent import trec
from maxent.trec import _KeyIndex, hash_strings, inflate_engine

RUNS = sorted((Path(__file__).resolve().parents[2] / "trec_runs" / "runs").iterdir())


def _python_parse(text: str):
    """Reference parser: str.split per line (what trec_eval's reader does, in Python)."""
    rows = [ln.split() for ln in text.splitlines() if ln.split() and not ln.split()[0].startswith("#")]
    return ([r[0].encode() for r in rows], [r[2].encode() for r in rows], [float(r[4]) for r in rows])


def test_results_test_shape(shared_data):
    # oracle: trec_eval_test/PROVENANCE.txt: run STANDARD, topics 301-303, 500 docs each
    run = read_run(shared_data / "trec_eval_test" / "results.test")
    assert len(run) == 1500 and run.tag == "STANDARD" and run.name == "results.test"
    assert run.topics == ["301", "302", "303"]
    assert [int((run.qid == q).sum()) for q in (b"301", b"302", b"303")] == [500, 500, 500]
    qid, docno, score = _python_parse((shared_data / "trec_eval_test" / "results.test").read_text())
    assert run.qid.tolist() == qid and run.docno.tolist() == docno and run.score.tolist() == score
    assert run.line.tolist() == list(range(1, 1501))


def test_extra_trailing_columns_are_ignored(shared_data):
    # results.trunc has lines with trailing junk columns (PROVENANCE.txt); trec_eval ignores them
    path = shared_data / "trec_eval_test" / "results.trunc"
    text = path.read_text()
    assert any(len(ln.split()) > 6 for ln in text.splitlines())
    run = read_run(path)
    qid, docno, score = _python_parse(text)
    assert run.qid.tolist() == qid and run.docno.tolist() == docno and run.score.tolist() == score


def test_gzip_and_plain_read_the_same(shared_data, tmp_path):
    src = shared_data / "trec_eval_test" / "results.test"
    gz = tmp_path / "results.test.gz"
    gz.write_bytes(gzip.compress(src.read_bytes()))
    a, b = read_run(src), read_run(gz)
    assert b.name == "results.test"  # .gz is dropped from the name
    for f in ("qid", "docno", "score", "line"):
        assert np.array_equal(getattr(a, f), getattr(b, f))


def test_qrels_with_comments_equal_plain(shared_data):
    d = shared_data / "trec_eval_test"
    a, b = read_qrels(d / "qrels.test"), read_qrels(d / "qrels.test.with-comments")
    assert a.topics == b.topics == ["301", "302", "303"]
    # lines starting with # are comments; a # inside a token is data (the with-comments
    # file's line 8 judges docno CR#93E-1860 where qrels.test has CR93E-1860)
    for t in a.topics:
        da = a.docnos[t].tolist()
        db = [d.replace(b"CR#93E-1860", b"CR93E-1860") for d in b.docnos[t].tolist()]
        assert sorted(da) == sorted(db)
        assert sorted(a.grades[t].tolist()) == sorted(b.grades[t].tolist())
    assert b"CR#93E-1860" in b.docnos["301"].tolist()
    # oracle: PROVENANCE.txt, qrels.test has 3681 lines, grades 0:3120 1:561
    assert sum(a.level_counts(t, 2)[0] for t in a.topics) == 3120
    assert sum(a.level_counts(t, 2)[1] for t in a.topics) == 561


def test_qrels_rel_level_counts(shared_data):
    # oracle: PROVENANCE.txt, qrels.rel_level levels -1:304 0:2818 1:462 2:14 3:77 4:6;
    # negative grades count at no level
    q = read_qrels(shared_data / "trec_eval_test" / "qrels.rel_level")
    counts = sum(q.level_counts(t, 5) for t in q.topics)
    assert counts.tolist() == [2818, 462, 14, 77, 6] and q.max_grade == 4
    assert sum(int((q.grades[t] == -1).sum()) for t in q.topics) == 304


def test_float_grades_read_as_atol(test_data):
    # oracle: C atol(): the leading [+-]digits, 0 when there are none
    q = read_qrels(test_data / "qrels_float_grades.txt")
    got = dict(zip(q.docnos["501"].tolist(), q.grades["501"].tolist()))
    assert got == {b"A": 1, b"B": 0, b"C": 2, b"D": 0, b"E": -1, b"F": 1, b"G": 2, b"H": 0}
    assert q.level_counts("501", 3).tolist() == [3, 2, 2]  # B D H | A F | C G


def test_whitespace_variants_and_comments(tmp_path):
    # tabs, runs of spaces, CR LF, vertical tab and form feed (C isspace), blank and # lines,
    # no final newline
    text = ("# a comment line\n401\tQ0\tD1\t1\t3.5\tt\r\n\n401  Q0 D2 2 2.5   t extra junk\n"
            "   \n401\x0bQ0\x0cD3 3 -1e-3 t")
    p = tmp_path / "ws.txt"
    p.write_bytes(text.encode())
    run = read_run(p)
    assert run.docno.tolist() == [b"D1", b"D2", b"D3"]
    assert run.score.tolist() == [3.5, 2.5, -0.001]
    assert run.line.tolist() == [2, 4, 6] and run.tag == "t"


def test_line_runs_give_back_every_line_number_and_a_subset_keeps_its_own():
    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 50):
        lines = np.cumsum(rng.integers(1, 4, size=n)) + 1      # gaps of 0-2 lines (comments, blanks)
        run = Run(name="r", path=None, qid=np.array([b"q"] * n, dtype="S1"), docno=np.arange(n).astype("S8"),
                  score=np.zeros(n), line_runs=trec.line_runs(lines))
        assert run.line.tolist() == lines.tolist()
        assert len(run.line_runs) == (0 if n == 0 else 1 + int(np.count_nonzero(np.diff(lines) != 1)))
        keep = rng.random(n) < 0.5
        part = run.subset(keep)
        assert part.line.tolist() == lines[keep].tolist() and part.docno.tolist() == run.docno[keep].tolist()


def test_scores_parse_exactly_as_float(rng, tmp_path):
    # oracle: Python float() (correctly rounded, as C strtod) on every token
    tokens = []
    for _ in range(3000):
        digits = "".join(rng.choice(list("0123456789"), size=rng.integers(1, 19)))
        cut = rng.integers(0, len(digits) + 1)
        tok = digits[:cut] + "." + digits[cut:] if rng.random() < 0.8 else digits
        tok = rng.choice(["", "-", "+"]) + tok
        if rng.random() < 0.1:
            tok += "e" + str(rng.integers(-30, 30))
        tokens.append(tok)
    tokens += ["-0", "0.1", "5.", ".5", "1E5", "123456789012345", "-0.30000000000000004"]
    p = tmp_path / "scores.txt"
    p.write_text("".join(f"1 Q0 d{i} 1 {t} x\n" for i, t in enumerate(tokens)))
    got = read_run(p).score
    want = np.array([float(t) for t in tokens])
    assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))


def test_directory_of_runs(shared_data, tmp_path):
    src = shared_data / "trec_eval_test"
    for name in ("results.test", "results-302.test"):
        (tmp_path / name).write_bytes(src.joinpath(name).read_bytes())
    (tmp_path / ".hidden").write_text("not a run")
    runs = read_runs(tmp_path)
    assert [r.name for r in runs] == ["results-302.test", "results.test"]
    assert [len(r) for r in runs] == [500, 1500]
    assert [r.name for r in read_runs([tmp_path / "results.test"])] == ["results.test"]


def test_run_from_frame_matches_the_file(shared_data):
    run = read_run(shared_data / "trec_eval_test" / "results-302.test")
    frame = pd.DataFrame({"qid": run.qid.astype(str), "docno": run.docno.astype(str), "score": run.score})
    a = run_from_frame(frame, name="x")
    nested = {}
    for q, d, s in zip(frame["qid"], frame["docno"], frame["score"]):
        nested.setdefault(q, {})[d] = s
    b = run_from_frame(nested, name="x")
    for other in (a, b):
        assert np.array_equal(other.qid, run.qid) and np.array_equal(other.docno, run.docno)
        assert np.array_equal(other.score, run.score)
        assert np.array_equal(other.docno_hash, run.docno_hash)


def test_hash_does_not_depend_on_array_width():
    a = np.array([b"D1", b"abcdefghij", b"x" * 8])
    b = np.array([b"D1", b"abcdefghij", b"x" * 8, b"a much longer docno than the others"])
    assert np.array_equal(hash_strings(a), hash_strings(b)[:3])
    assert len(set(hash_strings(b).tolist())) == 4


def test_qrels_object_and_membership(shared_data):
    q = read_qrels(shared_data / "trec_eval_test" / "qrels-302.test")
    assert isinstance(q, Qrels) and "302" in q and "301" not in q
    assert q.level_counts("999", 3).tolist() == [0, 0, 0]
    assert isinstance(read_run(shared_data / "trec_eval_test" / "results-302.test"), Run)


# ------------------------------------------------------------------ gzip engines
# oracle: zlib (the standard library) for the optional ISA-L engine and for the standard gzip
def _gzip_engines():
    engines = [pytest.param(gzip, id="gzip")]
    try:
        from isal import igzip
        engines.append(pytest.param(igzip, id="isal"))
    except ImportError:
        engines.append(pytest.param(None, id="isal", marks=pytest.mark.skip(
            reason="isal not installed (pip install -e '.[fast]')")))
    return engines


@pytest.mark.parametrize("engine", _gzip_engines())
def test_gzip_engines_give_zlibs_bytes(engine, tmp_path, monkeypatch):
    # every bundled run, a multi-member file with zero padding, a truncated and a corrupt file
    for path in RUNS[:4]:
        raw = path.read_bytes()
        assert engine.decompress(raw) == zlib.decompressobj(wbits=31).decompress(raw)
    two = gzip.compress(b"1 Q0 d1 1 2.0 r\n") + gzip.compress(b"1 Q0 d2 2 1.0 r\n") + b"\0\0\0"
    assert engine.decompress(two) == b"1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n"
    inflate_engine()                                   # the errors of the installed engines
    monkeypatch.setattr(trec, "_GZIP", (engine, trec._GZIP[1]))   # read_run through this engine
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
        from isal import igzip
    except ImportError:
        pytest.skip("isal not installed (pip install -e '.[fast]')")
    assert inflate_engine() is igzip


# ------------------------------------------------------------------ the hash index (oracle: a dict)
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
