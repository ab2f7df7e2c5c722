"""The one-pass run reader (``_ctrec.read_run``) and the per-topic ranking against oracles.

Oracles: the numpy tokeniser and columns of ``tests/_trec_numpy.py`` with a Python duplicate
check (the reader), and Python's sort by trec_eval's key with a dict of the qrels (ranking):
on random files whose topics come sorted, unsorted, split in several blocks or interleaved,
with ties, CRLF line ends, comments, long tokens and bad lines.
"""
from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

import maxent.trec as trec
from maxent.errors import InputError
from maxent.ranked import rank_runs
from tests._trec_numpy import _table as numpy_table

WHAT = "qid Q0 docno rank score tag"


def _oracle_run(path):
    """The run as the numpy tokeniser and columns read it, duplicates found line by line."""
    data = trec._read_bytes(path)
    trec._check_text(data, path, WHAT)
    table = numpy_table(data, path, 6, exact=False, what=WHAT, keep=(0, 2, 4))
    long_qids: dict[bytes, bytes] = {}
    qid = table.strings(0, long_qids)
    docno = table.strings(2)
    score = table.floats(4, "score")
    lines = table.lines.astype(np.int64)
    first: dict[tuple[bytes, bytes], int] = {}
    for q, d, ln in zip(qid.tolist(), docno.tolist(), lines.tolist()):
        if (q, d) in first:
            raise InputError(path, ln, f"duplicate docno {trec.shown(d)!r} in topic {trec.shown(q)} "
                             f"(first at line {first[q, d]})")
        first[q, d] = ln
    return qid, docno, score, lines, table.last_line_token(5).decode("utf-8", "replace"), long_qids


def _random_run(rng, layout: str, bad: str | None = None) -> bytes:
    topics = [f"q{t}" if rng.random() < 0.8 else "Q" * 130 + str(t) for t in rng.permutation(12)]
    rows = []
    for t in topics[: int(rng.integers(1, 12))]:
        k = int(rng.integers(1, 40))
        scores = rng.integers(0, 6, k) / 4                     # ties
        if layout != "unsorted":
            scores = np.sort(scores)[::-1]
        docs = rng.choice(10**int(rng.integers(1, 4)), size=min(k, 10), replace=False)
        for d, s in zip(docs.tolist(), scores.tolist()):
            docno = f"d{d}" if rng.random() < 0.95 else "D" * 140 + str(d)
            rows.append([t, docno, f"{s:g}" if rng.random() < 0.9 else float(s).hex()])
    if layout == "split" and len(rows) > 3:
        cut = int(rng.integers(1, len(rows)))
        rows = rows[cut:] + rows[:cut]
    elif layout == "interleaved":
        rows = [rows[i] for i in rng.permutation(len(rows))]
    lines = []
    for i, (t, d, s) in enumerate(rows):
        sep = " " if rng.random() < 0.7 else "\t "
        lines.append(sep.join([t, "Q0", d, str(i + 1), s, "tag" + str(i % 3)]) + ("\r\n" if i % 5 == 0 else "\n"))
        if rng.random() < 0.05:
            lines.append("# a comment\n" if rng.random() < 0.5 else "\n")
    if bad and len(lines) > 2:
        i = int(rng.integers(0, len(lines)))
        fields = lines[i].split()
        if len(fields) >= 6:
            if bad == "columns":
                lines[i] = " ".join(fields[:4]) + "\n"
            elif bad == "score":
                lines[i] = " ".join(fields[:4] + ["1_5"] + fields[5:]) + "\n"
            elif bad == "inf":
                lines[i] = " ".join(fields[:4] + ["-inf"] + fields[5:]) + "\n"
            elif bad == "nul":
                lines[i] = " ".join(fields[:2] + ["d\0"] + fields[3:]) + "\n"
            elif bad == "duplicate":
                j = int(rng.integers(0, len(lines)))
                other = lines[j].split()
                if len(other) >= 6:
                    lines[i] = " ".join([other[0], "Q0", other[2]] + fields[3:]) + "\n"
    return "".join(lines).encode()


@pytest.fixture(params=["one thread", "two chunks", "eight chunks"])
def threads(request, monkeypatch):
    """The scan in one pass, or in chunks on two threads (forced on these small files)."""
    if request.param != "one thread":
        monkeypatch.setattr(trec, "SPLIT_BYTES", 0)
        monkeypatch.setattr(trec.os, "cpu_count", lambda: 2)
        monkeypatch.setattr(trec, "SCAN_CHUNKS", 2 if request.param == "two chunks" else 8)
    return request.param


def _both(path):
    """(oracle's result, its error), (the scan's run, its error) on one file; an error is
    (message, line)."""
    try:
        want, want_err = _oracle_run(path), None
    except InputError as e:
        want, want_err = None, (str(e), e.line)
    try:
        run, err = trec.read_run(path), None
    except InputError as e:
        run, err = None, (str(e), e.line)
    return want, want_err, run, err


@pytest.mark.parametrize("layout", ["sorted", "unsorted", "split", "interleaved"])
@pytest.mark.parametrize("bad", [None, "columns", "score", "inf", "duplicate", "nul"])
def test_the_scan_reads_as_the_numpy_oracle(tmp_path, layout, bad, threads):
    rng = np.random.default_rng([["sorted", "unsorted", "split", "interleaved"].index(layout), len(bad or "")])
    for trial in range(25):
        path = tmp_path / f"run{trial}.txt"
        path.write_bytes(_random_run(rng, layout, bad))
        want, want_err, run, err = _both(path)
        assert err == want_err
        if run is None:
            continue
        qid, docno, score, lines, tag, long_qids = want
        for got, exp in ((run.qid, qid), (run.docno, docno), (run.line, lines)):
            np.testing.assert_array_equal(got, exp)
            assert got.dtype == exp.dtype
        assert run.score.tobytes() == score.tobytes()
        assert run.tag == tag and (run.long_qids or {}) == long_qids
        np.testing.assert_array_equal(run.docno_hash, trec.hash_strings(run.docno))
        np.testing.assert_array_equal(run.blocks, trec.qid_blocks(run.qid))


def test_short_lines_grow_the_columns_as_the_oracle_reads(tmp_path, threads):
    # the scan guesses lines of 40 bytes and doubles its columns as they fill: lines of about 16
    # bytes make it grow several times in each chunk, and the chunks' rows still join in order
    rng = np.random.default_rng(7)
    lines = [f"{t} Q0 d{d} 1 {rng.integers(0, 9)} r\n" for t in range(40) for d in range(400)]
    lines[1234] = "# a comment between the rows\n"
    path = tmp_path / "short.txt"
    path.write_text("".join(lines))
    want, want_err, run, err = _both(path)
    assert err is None and want_err is None
    qid, docno, score, line, tag, _ = want
    assert len(run.qid) == len(lines) - 1 > 2 * (path.stat().st_size // 40 + 64)   # two doublings
    for got, exp in ((run.qid, qid), (run.docno, docno), (run.line, line)):
        np.testing.assert_array_equal(got, exp)
    assert run.score.tobytes() == score.tobytes() and run.tag == tag
    np.testing.assert_array_equal(run.blocks, trec.qid_blocks(run.qid))


SHAPES = ["plain", "crlf", "separators", "columns", "short", "indented", "nul", "no newline at the end"]


@pytest.mark.parametrize("shape", SHAPES)
def test_lines_at_the_edges_of_one_load_read_as_the_oracle(tmp_path, shape, threads):
    # the scan reads a line of six tokens split by single whitespace bytes, ending within 64
    # bytes, from one load, and any other line by its tokens' events: lines of 55-70 bytes put
    # the newline before, at and after the load's last byte, beside lines the load refuses
    rng = np.random.default_rng(SHAPES.index(shape))
    lines = []
    for i in range(600):
        docno = "d" * int(rng.integers(1, 30)) + str(i)
        fields = [f"q{i // 50}", "Q0", docno, str(i), f"{rng.integers(0, 999) / 8:g}", "t" * int(rng.integers(1, 20))]
        sep = [" "] * 5
        if shape == "separators" and rng.random() < 0.5:
            sep[int(rng.integers(0, 5))] = str(rng.choice(["\t", "\v", "\f", "  ", " \t"]))
        if shape == "columns" and (rng.random() < 0.3 or i == 599):     # the last line's tag is the run's
            fields.append("extra")
            sep.append(" ")
        line = fields[0] + "".join(a + b for a, b in zip(sep, fields[1:]))
        if shape == "separators" and rng.random() < 0.1:
            line = " " + line
        if shape == "nul" and i == 400:
            line = line.replace("Q0", "Q\0")
        lines.append(line + ("\r\n" if shape == "crlf" and rng.random() < 0.7 else "\n"))
    if shape == "no newline at the end":
        lines[-1] = lines[-1].rstrip("\n")
    if shape == "short":                 # five tokens, one double space: six whitespace bytes
        lines[300] = lines[300].rsplit(" ", 1)[0].replace(" ", "  ", 1) + "\n"
        lines[200] = lines[200].rsplit(" ", 1)[0] + "\n"       # five tokens, single spaces
    if shape == "indented":              # five tokens after a space: six whitespace bytes
        lines[300] = " " + lines[300].rsplit(" ", 1)[0] + "\n"
    if shape == "columns":               # comments of six tokens, as a line of the run
        lines[100:100] = ["#q1 Q0 d1 1 1.5 t\n", "# Q0 d1 1 1.5 t\n"]
    data = "".join(lines).encode()
    newline_at = [len(x) - 1 for x in lines]
    assert {62, 63, 64, 65} <= set(newline_at)     # newlines before, at and past a load's end
    path = tmp_path / "run.txt"
    path.write_bytes(data)
    want, want_err, run, err = _both(path)
    assert err == want_err and (err is None) == (shape not in ("nul", "short", "indented"))
    if run is not None:
        qid, docno, score, line, tag, _ = want
        for got, exp in ((run.qid, qid), (run.docno, docno), (run.line, line)):
            np.testing.assert_array_equal(got, exp)
        assert run.score.tobytes() == score.tobytes() and run.tag == tag
        np.testing.assert_array_equal(run.blocks, trec.qid_blocks(run.qid))


def _oracle_lists(run, qrels, precision: str, depth):
    """Per qrels topic the run has: its grades in trec_eval's order (Python's sort)."""
    judged = {(t, d): g for t in qrels.topics for d, g in zip(qrels.docnos[t].tolist(), qrels.grades[t].tolist())}
    names = run.qid_names(run.qid)
    score = run.score.astype(np.float32) if precision == "single" else run.score
    out = {}
    for t in qrels.topics:
        rows = [i for i, q in enumerate(names) if q == t]
        if not rows:
            continue
        rows.sort(key=lambda i: (-float(score[i]), tuple(-b for b in run.docno[i]) + (1,)))
        out[t] = [max(judged.get((t, run.docno[i]), -1), -1) for i in rows[:depth]]
    return out


@pytest.mark.parametrize("layout", ["sorted", "unsorted", "split", "interleaved"])
@pytest.mark.parametrize("precision,depth", [("single", None), ("double", None), ("single", 3)])
def test_ranking_equals_a_python_sort(tmp_path, layout, precision, depth, threads):
    rng = np.random.default_rng(["sorted", "unsorted", "split", "interleaved"].index(layout))
    for trial in range(15):
        run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
        run_path.write_bytes(_random_run(rng, layout))
        run = trec.read_run(run_path)
        docs = sorted({(t, d) for t, d in zip(run.qid_names(run.qid), run.docno.tolist()) if len(d) <= 128})
        picked = [docs[i] for i in rng.choice(len(docs), size=max(1, len(docs) // 3), replace=False)]
        picked += [("q99", b"d1")]                              # a topic the run lacks
        qrels_path.write_text("".join(f"{t} 0 {d.decode()} {int(rng.integers(-1, 4))}\n" for t, d in picked))
        qrels = trec.read_qrels(qrels_path)
        with pytest.warns(Warning):
            lists = rank_runs([run], qrels, precision=precision, depth=depth)
        want = _oracle_lists(run, qrels, precision, depth)
        got = {t: lists.grades[b, :lists.lengths[b]].tolist() for b, t in enumerate(lists.topics)}
        assert got == want


@pytest.mark.parametrize("case", ["repeat across the cut", "comments before the cut", "bad line after the cut",
                                  "no newline at the end"])
def test_the_two_halves_join_as_one_scan(tmp_path, case, threads):
    # the second half's rows follow the first's: a topic cut in two is one block (a docno in
    # both halves is a repeat), line numbers go on, the first half's skipped lines leave no gap
    lines = [f"q1 Q0 d{i} {i} {20 - i} t\n" for i in range(12)] + [f"q2 Q0 d{i} {i} 1 t\n" for i in range(3)]
    if case == "repeat across the cut":
        lines[11] = "q1 Q0 d1 11 9 t\n"
    elif case == "comments before the cut":
        lines[1:1] = ["# a comment\n", "\n", "   \n"]
    elif case == "bad line after the cut":
        lines[13] = "q2 Q0 d1\n"
    else:
        lines[-1] = lines[-1].rstrip("\n")
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    want, want_err, run, err = _both(path)
    assert err == want_err
    assert (err is None) == (case in ("comments before the cut", "no newline at the end"))
    if run is not None:
        np.testing.assert_array_equal(run.line, want[3])
        np.testing.assert_array_equal(run.docno, want[1])
        np.testing.assert_array_equal(run.blocks, [0, 12])


def _run_files():
    root = Path(__file__).resolve().parents[2]
    bad = sorted(p for p in (root / "tests" / "data" / "bad").iterdir() if p.name.startswith("run"))
    return sorted((root / "trec_runs" / "runs").iterdir())[:4] + bad


@pytest.mark.parametrize("path", _run_files(), ids=lambda p: p.name)
def test_real_and_bad_files_read_as_the_numpy_oracle(path, threads):
    # the bundled runs and every bad run of tests/data/bad: the same columns, or the same error
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, want_err, run, err = _both(path)
    assert err == want_err
    if run is not None:
        for got, exp in zip((run.qid, run.docno, run.line), (want[0], want[1], want[3])):
            np.testing.assert_array_equal(got, exp)
        assert run.score.tobytes() == want[2].tobytes() and run.tag == want[4]


def _resident_kib(address: int) -> int | None:
    """Rss of the mapping holding ``address`` (Linux's /proc/self/smaps), None elsewhere."""
    try:
        text = Path("/proc/self/smaps").read_text()
    except OSError:
        return None
    inside = False
    for line in text.splitlines():
        head = line.split()[0]
        if "-" in head and ":" not in head:
            lo, hi = (int(x, 16) for x in head.split("-"))
            inside = lo <= address < hi
        elif inside and head == "Rss:":
            return int(line.split()[1])
    return None


@pytest.mark.parametrize("chunks", [1, 2])
def test_a_mapped_run_is_given_back_as_it_is_read(tmp_path, chunks):
    # the scan lets a file mapping's pages go behind it: the same columns as from bytes, and
    # the mapping no longer resident (at most the last few MiB of each chunk)
    import mmap

    lines = [f"q{t} Q0 doc{t}-{i} {i} {100 - i / 7:.4f} a-run\n" for t in range(1600) for i in range(400)]
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    with open(path, "rb") as f:
        view = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    data = view.read()
    want = trec._ctrec.read_run(data, chunks)
    address = np.frombuffer(view, np.uint8).ctypes.data
    before = _resident_kib(address)
    got = trec._ctrec.read_run(view, chunks, True)
    after = _resident_kib(address)
    for key in ("qid", "docno", "score", "line_runs", "blocks"):
        assert bytes(got[key]) == bytes(want[key])
    assert {k: v for k, v in got.items() if k not in ("qid", "docno", "score", "line_runs", "blocks")} == \
           {k: v for k, v in want.items() if k not in ("qid", "docno", "score", "line_runs", "blocks")}
    if before is None:
        pytest.skip("no /proc/self/smaps: the pages given back are not visible here")
    size_kib = len(view) / 1024
    assert before > 0.9 * size_kib                    # read once already: all resident
    assert after < chunks * 4 * 1024 + 64 < size_kib / 2


def _read_or_error(path):
    try:
        return trec.read_run(path), None
    except InputError as e:
        return None, (str(e).replace(str(path), "RUN"), e.line)


@pytest.mark.parametrize("block", [7, 100, 1 << 12])
@pytest.mark.parametrize("bad", [None, "columns", "score", "inf", "duplicate", "nul"])
def test_a_gzipped_run_read_in_blocks_reads_as_the_plain_file(tmp_path, monkeypatch, bad, block):
    # inflated and read block by block (blocks cut after a newline, topics and lines going on
    # across the cuts): the plain file's columns, or its error at the same line
    import gzip

    monkeypatch.setattr(trec, "STREAM_BLOCK", block)
    rng = np.random.default_rng([block, len(bad or "")])
    for trial in range(12):
        text = _random_run(rng, ["sorted", "unsorted", "split", "interleaved"][trial % 4], bad)
        if trial % 3 == 0:
            text = b"# a comment\n\n" + text.replace(b"\n", b"\r\n", 5)
        plain, packed = tmp_path / "run", tmp_path / "run.gz"
        plain.write_bytes(text)
        packed.write_bytes(gzip.compress(text))
        want, want_err = _read_or_error(plain)
        got, err = _read_or_error(packed)
        assert err == want_err
        if want is None:
            continue
        for a, b in ((got.qid, want.qid), (got.docno, want.docno), (got.line, want.line), (got.blocks, want.blocks)):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype
        assert got.score.tobytes() == want.score.tobytes()
        assert got.tag == want.tag and got.long_qids == want.long_qids


@pytest.mark.parametrize("path", _run_files(), ids=lambda p: p.name)
def test_real_and_bad_files_gzipped_read_as_the_plain_files(tmp_path, monkeypatch, path):
    import gzip
    import warnings

    monkeypatch.setattr(trec, "STREAM_BLOCK", 1000)
    raw = path.read_bytes()
    if raw[:2] == trec.GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error):
            with pytest.raises(InputError, match="corrupt gzip data"):
                trec.read_run(path)
            return
    plain, packed = tmp_path / "run", tmp_path / "run.gz"
    plain.write_bytes(raw)
    packed.write_bytes(gzip.compress(raw))
    with warnings.catch_warnings(record=True) as seen_plain:
        warnings.simplefilter("always")
        want, want_err = _read_or_error(plain)
    with warnings.catch_warnings(record=True) as seen_packed:
        warnings.simplefilter("always")
        got, err = _read_or_error(packed)
    assert err == want_err
    assert [str(w.message).replace(str(packed), "RUN") for w in seen_packed] == \
           [str(w.message).replace(str(plain), "RUN") for w in seen_plain]
    if want is not None:
        for a, b in ((got.qid, want.qid), (got.docno, want.docno), (got.line, want.line)):
            np.testing.assert_array_equal(a, b)
        assert got.score.tobytes() == want.score.tobytes() and got.tag == want.tag


def test_a_gzipped_run_reports_corrupt_data_before_errors_in_its_text(tmp_path, monkeypatch):
    # inflated whole, a corrupt stream is refused before its text is read; read in blocks, an
    # error in the first blocks (a NUL byte, a short line) waits for the stream's end
    import gzip

    monkeypatch.setattr(trec, "STREAM_BLOCK", 64)
    lines = [f"q1 Q0 d{i} {i} {100 - i} r\n".encode() for i in range(400)]
    for bad in (b"q1 Q0 d\x00 1 2 r\n", b"q1 Q0 short\n"):
        text = bad + b"".join(lines)
        path = tmp_path / "run.gz"
        path.write_bytes(gzip.compress(text)[:-30])       # cut: the trailer and some data
        with pytest.raises(InputError, match="corrupt gzip data"):
            trec.read_run(path)
        path.write_bytes(gzip.compress(text))             # whole: the text's own error, line 1
        with pytest.raises(InputError) as e:
            trec.read_run(path)
        assert e.value.line == 1 and "corrupt" not in str(e.value)


def test_a_gzipped_run_through_a_pipe_reads_as_the_file(tmp_path):
    import gzip
    import os
    import threading

    text = b"".join(f"q{t} Q0 d{i} {i} {9 - i} r\n".encode() for t in range(3) for i in range(5))
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(gzip.compress(text)))
    writer.start()
    run = trec.read_run(fifo)
    writer.join()
    plain = tmp_path / "run"
    plain.write_bytes(text)
    want = trec.read_run(plain)
    np.testing.assert_array_equal(run.docno, want.docno)
    np.testing.assert_array_equal(run.line, want.line)
