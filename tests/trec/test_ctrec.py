"""The TREC reader's C loops (maxent/_ctrec.c) against an independent numpy reader and
against Python itself: the same tokens, lines, scores (bit for bit), strings and errors.

Oracles: ``float(token)`` for scores, ``bytes.split`` per line for tokens, and the vectorised
numpy reader of ``tests/_trec_numpy.py`` (the same steps in numpy).
"""
from __future__ import annotations

import contextlib
import os
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import maxent.trec as trec
from maxent import _ctrec as ctrec
from maxent.errors import InputError

from tests._trec_numpy import numpy_reader

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"


def test_the_reader_is_the_c_one():
    # one reader at run time: maxent.trec tokenises with the C scan, never a numpy fallback
    assert trec._ctrec is ctrec
    assert not hasattr(trec, "_decimal_fast_path")


@contextlib.contextmanager
def _engine(engine):
    """maxent.trec with its C loops (engine = the module) or the numpy oracle's (None)."""
    if engine is None:
        with numpy_reader():
            yield
    else:
        yield


def test_extension_is_not_older_than_its_source():
    # an edited (or pulled) maxent/_ctrec.c is not what runs until it is rebuilt
    built, source = Path(ctrec.__file__), ROOT / "maxent" / "_ctrec.c"
    assert built.stat().st_mtime >= source.stat().st_mtime, (
        f"{built.name} is older than maxent/_ctrec.c: rebuild it with pip install -e .")


def _read_both(reader, path):
    """reader(path) with the C loops and with the numpy code: (result, error) for each."""
    out = []
    for engine in (ctrec, None):
        with _engine(engine):
            try:
                out.append((reader(path), None))
            except InputError as e:
                out.append((None, (str(e), e.line)))
    return out


def _same_run(a, b):
    assert a.tag == b.tag and a.name == b.name
    for f in ("qid", "docno", "line"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
        assert getattr(a, f).dtype == getattr(b, f).dtype
    assert a.score.tobytes() == b.score.tobytes()          # bit for bit (-0.0 included)


def _same_qrels(a, b):
    assert a.topics == b.topics and a.max_grade == b.max_grade
    for t in a.topics:
        np.testing.assert_array_equal(a.docnos[t], b.docnos[t])
        np.testing.assert_array_equal(a.grades[t], b.grades[t])


def _real_files():
    runs = sorted((ROOT / "trec_runs" / "runs").iterdir())[:6]
    files = [("run", p) for p in runs] + [("qrels", ROOT / "trec_runs" / "qrels-rnd1.txt")]
    files += [("run" if p.name.startswith("run") else "qrels", p) for p in sorted(BAD.iterdir())
              if p.name != "README.md"]
    shared = ROOT.parent / "shared" / "data" / "trec_eval_test"
    if shared.is_dir():
        files += [("run", shared / n) for n in ("results.test", "results.trunc")]
        files += [("qrels", shared / n) for n in ("qrels.test", "qrels.rel_level")]
    return files


@pytest.mark.parametrize("kind,path", _real_files(), ids=lambda x: getattr(x, "name", x))
def test_real_and_bad_files_read_the_same(kind, path):
    # the bundled runs, every case of tests/data/bad and trec_eval's own test files: the same
    # Run / Qrels, or the same error (message and line), from both engines
    if not path.exists():
        pytest.skip(f"{path} absent")
    reader = trec.read_run if kind == "run" else trec.read_qrels
    (c, c_err), (n, n_err) = _read_both(reader, path)
    assert c_err == n_err
    if c is not None:
        (_same_run if kind == "run" else _same_qrels)(c, n)


# --- the tokenizer on arbitrary text -------------------------------------------------------

_piece = st.sampled_from([b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c", b"\r\n", b"#", b"a", b"Q0",
                          b"1", b"-2.5", b"3.", b".5", b"1e3", b"x#y", b"\xc3\xa9", b"docA"])


@settings(max_examples=400, deadline=None)
@given(pieces=st.lists(_piece, max_size=60), ncols=st.integers(1, 6), exact=st.booleans())
def test_tokenizer_matches_numpy_and_python(pieces, ncols, exact):
    data = b"".join(pieces)
    if not data or data.isspace():
        return                                    # refused before either scan
    got = []
    for engine in (ctrec, None):
        with _engine(engine):
            try:
                t = trec._table(data, "f", ncols, exact, "w")
                got.append([(t.lines[i], [bytes(data[s:e]) for s, e in zip(
                    t.starts[t.first[i]: t.first[i] + ncols], t.ends[t.first[i]: t.first[i] + ncols])])
                    for i in range(len(t.lines))])
            except InputError as e:
                got.append(str(e))
    assert got[0] == got[1]
    if isinstance(got[0], list):                  # and as Python splits the lines
        want = [(n + 1, ln.split()[:ncols]) for n, ln in enumerate(data.split(b"\n"))
                if ln.split() and not ln.split()[0].startswith(b"#")]
        assert [(int(a), b) for a, b in got[0]] == want


@pytest.mark.parametrize("size", [63, 64, 65, 127, 128, 129])
def test_last_token_at_a_block_boundary(size):
    # the scan reads 64-byte blocks: a file ending in a token exactly at a block's end
    # (found by the test above: 64 bytes ending "...docA", no newline, once lost its line)
    data = b"x " * ((size - 4) // 2) + b"y" * (size - 2 * ((size - 4) // 2))
    assert len(data) == size and not data[-1:].isspace()
    s, e, lines = ctrec.tokenize(data, 1, False, (0,))
    tokens = data.split()
    assert np.frombuffer(lines, np.int32).tolist() == [1]
    assert data[np.frombuffer(s, np.int32)[0]: np.frombuffer(e, np.int32)[0]] == tokens[0]
    got = trec._table(data, "f", len(tokens), True, "w")
    assert bytes(data[got.starts[-1]: got.ends[-1]]) == tokens[-1]


def test_tokenizer_reports_the_first_bad_line():
    # oracle: the file as written: line 3 has 2 tokens (a comment and a blank line before it)
    assert ctrec.tokenize(b"a b c\n# x\n\nd e\nf\n", 3, False, (0, 1, 2)) == (None, 4, 2)
    assert ctrec.tokenize(b"a b c d\n", 3, True, (0,)) == (None, 1, 4)
    s, e, lines = ctrec.tokenize(b"a b c d\n\n x y z", 3, False, (0, 1, 2))
    assert np.frombuffer(lines, np.int32).tolist() == [1, 3]        # int32 under 2 GiB
    assert np.frombuffer(s, np.int32).tolist() == [0, 2, 4, 10, 12, 14]
    assert np.frombuffer(e, np.int32).tolist() == [1, 3, 5, 11, 13, 15]
    s, e, lines = ctrec.tokenize(b"a b c d\n\n x y z", 3, False, (2, 0))   # kept columns only
    assert np.frombuffer(s, np.int32).tolist() == [4, 0, 14, 10]
    assert np.frombuffer(e, np.int32).tolist() == [5, 1, 15, 11]


def test_wide_offsets_are_the_same_numbers():
    # files of 2 GiB or more get int64 offsets: forced here on the bundled runs, the same
    # values as the int32 ones, and parse_floats / gather read either
    from maxent.trec import read_raw
    data = read_raw(sorted((ROOT / "trec_runs" / "runs").iterdir())[0])
    narrow = ctrec.tokenize(data, 6, False, (0, 2, 4))
    wide = ctrec.tokenize(data, 6, False, (0, 2, 4), True)
    for a, b in zip(narrow, wide):
        assert len(b) == 2 * len(a)
        np.testing.assert_array_equal(np.frombuffer(a, np.int32), np.frombuffer(b, np.int64))
    s32, e32 = (np.frombuffer(x, np.int32).reshape(-1, 3)[:, 2].copy() for x in narrow[:2])
    s64, e64 = (np.frombuffer(x, np.int64).reshape(-1, 3)[:, 2].copy() for x in wide[:2])
    assert ctrec.parse_floats(data, s32, e32) == ctrec.parse_floats(data, s64, e64)
    assert ctrec.gather(data, s32, e32, 20) == ctrec.gather(data, s64, e64, 20)


# --- scores --------------------------------------------------------------------------------

def _parse(tokens: list[bytes]):
    # the first token alone at the start, the others after 16 bytes of digits and dots: the
    # word-at-a-time path reads the 16 bytes that end with a token and must mask what is not
    # its own
    tokens_in = [t if i == 0 else (b"9.", b".9")[i % 2] * 8 + t for i, t in enumerate(tokens)]
    data = b" ".join(tokens_in)
    ends = np.cumsum([len(t) + 1 for t in tokens_in]) - 1
    starts = ends - np.array([len(t) for t in tokens])
    v, ok = ctrec.parse_floats(data, starts.astype(np.int64), ends.astype(np.int64))
    return np.frombuffer(v, np.float64), np.frombuffer(ok, np.bool_)


def _python_float(t: bytes):
    try:
        return float(t), True
    except ValueError:
        return None, False


_decimal = st.builds(
    lambda sign, a, b, dot: sign + a + (b"." + b if dot else b""),
    st.sampled_from([b"", b"-", b"+"]),
    st.text("0123456789", min_size=0, max_size=22).map(str.encode),
    st.text("0123456789", min_size=0, max_size=22).map(str.encode),
    st.booleans(),
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.one_of(_decimal,
                          st.floats(allow_nan=True).map(lambda x: repr(x).encode()),
                          st.floats(allow_nan=False).map(lambda x: f"{x:.6g}".encode()),
                          st.sampled_from([b"1_0", b"1e", b"e5", b"--1", b"1.2.3", b"0x10",
                                           b"infinity", b"-nan", b"1E400", b"1e-400", b"+.5"]),
                          ), min_size=1, max_size=20))
def test_scores_are_float_of_the_token(tokens):
    # oracle: Python's float() (correctly rounded): bit for bit wherever it accepts the token;
    # a token float() accepts only thanks to underscores is left to the numpy path (ok False)
    tokens = [t for t in tokens if t]
    if not tokens:
        return
    value, ok = _parse(tokens)
    for t, v, k in zip(tokens, value, ok):
        want, accepted = _python_float(t)
        if b"_" in t:
            assert not k
            continue
        assert k == accepted, t
        if accepted:
            assert struct.pack("<d", v) == struct.pack("<d", want) or (np.isnan(v) and np.isnan(want)), t


def test_word_at_a_time_decimals_against_float():
    # every split of up to 16 digits around a dot, signed and not, beside the lengths the
    # word-at-a-time path declines (9 digits before the dot, 8 after, 17 bytes)
    rng = np.random.default_rng(0)
    tokens = []
    for n in range(1, 18):
        digits = b"".join(b"%d" % d for d in rng.integers(0, 10, n))
        tokens += [digits] + [digits[:k] + b"." + digits[k:] for k in range(n + 1)]
    tokens += [b"-" + t for t in tokens[::3]] + [b"+" + t for t in tokens[1::3]]
    tokens += [b".", b"-.", b"1.2.3", b"12.3.", b"..5", b"1-2", b"1.-2", b"1 2", b"1\x002", b"9/", b"9:"]
    value, ok = _parse(tokens)
    for t, v, k in zip(tokens, value, ok):
        want, accepted = _python_float(t)
        assert k == accepted, t
        if accepted:
            assert struct.pack("<d", v) == struct.pack("<d", want), t


def test_fast_path_edges_against_float():
    # 2^53 - 1 and 2^53 digits, 19 and 20 digits, 22 and 23 decimals, long tokens
    tokens = [b"9007199254740991", b"9007199254740993", b"0.1", b"-0", b"-0.0", b"1234567890123456789",
              b"12345678901234567890", b"0." + b"1" * 22, b"1." + b"0" * 22, b"0." + b"0" * 30 + b"1",
              b"1" * 130, b"5e-324", b"1.7976931348623157e308"]
    value, ok = _parse(tokens)
    assert ok[:-3].all() and not ok[-3] and ok[-2:].all()   # 130 bytes: beyond the C buffer
    for t, v in zip(tokens, value):
        if len(t) < 128:
            assert struct.pack("<d", v) == struct.pack("<d", float(t)), t


def test_bad_buffers_are_refused_not_read():
    data = b"abc def"
    s, e = np.array([0, 4], np.int64), np.array([3, 99], np.int64)
    with pytest.raises(IndexError):
        ctrec.parse_floats(data, s, e)
    with pytest.raises(IndexError):
        ctrec.gather(data, s, e, 3)
    with pytest.raises(ValueError):
        ctrec.gather(data, s, np.array([3], np.int64), 3)
    with pytest.raises(ValueError):
        ctrec.parse_floats(data, s, np.array([3], np.int64))
    with pytest.raises(ValueError):
        ctrec.gather(data, np.array([0, 4], np.int32), np.array([3, 7], np.int64), 3)
    with pytest.raises(ValueError):
        ctrec.gather(data, np.array([0, 4], np.float64), np.array([3, 7], np.float64), 3)
    with pytest.raises(ValueError):
        ctrec.gather(data, b"\0" * 16, b"\0" * 16, 3)              # bytes: not int items
    for itype in (np.int32, np.int64):                              # both offset types
        out = ctrec.gather(data, np.array([0, 4], itype), np.array([3, 7], itype), 3)
        assert bytes(out) == b"abcdef"
    with pytest.raises(ValueError):
        ctrec.tokenize(data, 0, False, (0,))
    with pytest.raises(ValueError):
        ctrec.tokenize(data, 2, False, (2,))
    with pytest.raises(ValueError):
        ctrec.tokenize(data, 2, False, ())


def test_gather_is_the_zero_padded_tokens():
    data = b"ab cdefg h"
    s, e = np.array([0, 3, 9], np.int64), np.array([2, 8, 10], np.int64)
    out = np.frombuffer(ctrec.gather(data, s, e, 4), "S4")
    assert out.tolist() == [b"ab", b"cdef", b"h"]           # cut to the width


# ------------------------------------------------------------------ hashes and the key table
@pytest.mark.parametrize("width", [1, 3, 7, 8, 9, 16, 17, 40])
def test_hash_strings_is_the_numpy_twin(width):
    from tests._trec_numpy import hash_strings as numpy_hash

    rng = np.random.default_rng(width)
    tokens = [bytes(rng.integers(1, 256, rng.integers(1, width + 1), dtype=np.uint8)) for _ in range(2000)]
    a = np.array(tokens, dtype=f"S{width}")
    assert np.array_equal(trec.hash_strings(a), numpy_hash(a))
    assert np.array_equal(trec.hash_strings(a[::3]), numpy_hash(a[::3]))      # not contiguous
    assert trec.hash_strings(np.zeros(0, dtype="S5")).shape == (0,)


def test_topic_keys_are_the_numpy_twin():
    from tests._trec_numpy import topic_keys as numpy_keys

    rng = np.random.default_rng(7)
    h = rng.integers(0, 2**64, 5000, dtype=np.uint64, endpoint=False)
    codes = rng.integers(-1, 2**40, 5000)
    assert np.array_equal(trec.topic_keys(h, codes), numpy_keys(h, codes))
    small = codes % 1000
    assert np.array_equal(trec.topic_keys(h, small.astype(np.int32)), numpy_keys(h, small))


def test_key_index_finds_the_first_of_repeated_keys():
    keys = np.array([5, 3, 5, 7, 3], dtype=np.uint64)
    index = trec._KeyIndex(keys)
    assert not index.is_unique
    assert index.get_indexer(np.array([5, 3, 7, 1], dtype=np.uint64)).tolist() == [0, 1, 3, -1]
    assert trec._KeyIndex(keys[:4:3]).is_unique
    assert trec._KeyIndex(np.zeros(0, np.uint64)).get_indexer(np.array([1], np.uint64)).tolist() == [-1]


def test_key_table_refuses_bad_arguments():
    keys = np.arange(10, dtype=np.uint64)
    with pytest.raises(ValueError):
        ctrec.key_table(keys, 3)                       # more keys than slots
    table, _ = ctrec.key_table(keys, 5)
    with pytest.raises(ValueError):
        ctrec.key_probe(keys, table, 6, keys)          # not the table of these bits
    with pytest.raises(ValueError):
        ctrec.topic_keys(keys, keys[:5])
