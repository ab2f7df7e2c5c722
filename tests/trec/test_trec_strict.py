"""The readers read exactly what trec_eval reads, or refuse in one line: numbers as C's strtod
reads the whole token, grades in frames and dicts as in files, qids printed as they were read,
paths, folders and line ends that are not what they seem (tests/data/bad/README.md, third table).

Oracles: NIST's trec_eval (the fixture ``trec_eval``), C's strtod (through ctypes),
hand calculations written beside the numbers.
"""
from __future__ import annotations

import contextlib
import ctypes
import io
import os
import subprocess
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from maxent import evaluate, read_qrels, read_run
from maxent.cli.evaluate import main
from maxent.errors import InputError, ParameterError
from maxent.inputs import as_qrels, as_run, as_runs
from maxent.ranked import check_depth, rank_runs
from maxent.trec import MAX_GRADE, read_runs, strtod_whole

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"


def _cli(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def _values(frame) -> dict[str, float]:
    return dict(zip(frame["measure"], frame["value"]))


def _run_with_score(tmp_path, token: str) -> Path:
    path = tmp_path / "run.txt"
    path.write_text(f"1 Q0 d1 1 {token} r\n1 Q0 d2 2 0.25 r\n")
    return path


# ---------------------------------------------------------------- numbers as strtod reads them
def _c_strtod(token: bytes) -> float | None:
    """C's strtod on the token (the "C" locale's decimal point), None unless it reads it all."""
    libc = ctypes.CDLL(None)
    libc.strtod.restype = ctypes.c_double
    libc.strtod.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]
    buf = ctypes.create_string_buffer(token)
    end = ctypes.c_char_p()
    v = libc.strtod(buf, ctypes.byref(end))
    read = ctypes.cast(end, ctypes.c_void_p).value - ctypes.addressof(buf)
    return v if read == len(token) and token else None


TOKENS = [b"1_5", b"1_000.5", b"_1", b"1e1_0", b"0x1p3", b"0X1P-2", b"0x.8", b"0x1.8", b"-0x10", b"0x",
          b"0x1p", b"1p3", b"0x1g", b"infinity", b"-Infinity", b"INF", b"nan", b"+NaN", b"nan(123)",
          b"nan()", b"1e999", b"-1e999", b"1e-400", b"0x1p99999", b"1.5", b"+.5", b"5.", b".", b"+",
          b"1e", b"1e+", b"\xd9\xa1", b"1\xa0", b"1" * 200, b"0." + b"0" * 300 + b"1"]


@pytest.mark.parametrize("token", TOKENS, ids=lambda t: t.decode("latin-1")[:20])
def test_a_number_is_what_strtod_reads_from_the_whole_token(token):
    want, got = _c_strtod(token), strtod_whole(token)
    if want is None or np.isnan(want):
        assert got is None or (want is not None and np.isnan(got))
    else:
        assert got == want and np.signbit(got) == np.signbit(want)


def test_underscored_score_is_refused_not_read_as_15():
    # float('1_5') is 15; trec_eval's atof reads 1 (it stops at '_'): neither is the token
    with pytest.raises(InputError) as e:
        read_run(BAD / "run_score_underscore.txt")
    assert (e.value.line, e.value.reason) == (2, "score '1_5' is not a number")
    code, out, err = _cli([BAD / "qrels_ok.txt", BAD / "run_score_underscore.txt"])
    assert code == 1 and err.count("\n") == 1 and "run_score_underscore.txt:2: score '1_5' is not a number" in err


@pytest.mark.parametrize("token, reason", [
    ("1_000", "is not a number"), ("0x1p", "is not a number"), ("1p3", "is not a number"),
    ("infinity", "is not finite"), ("-INFINITY", "is not finite"), ("nan(7)", "is not finite"),
    ("0x1p5000", "is not finite"),
])
def test_score_forms_strtod_does_not_read_whole_or_not_finite(tmp_path, token, reason):
    with pytest.raises(InputError) as e:
        read_run(_run_with_score(tmp_path, token))
    assert e.value.line == 1 and e.value.reason == f"score {token!r} {reason}"


def test_hexadecimal_scores_are_read_as_strtod(tmp_path):
    # scores 1.5 (d2), 0x1p3 = 8 (d1), 0x.8 = 0.5 (d3): d1 first; d1 the only relevant: AP 1
    r = read_run(BAD / "run_score_hex.txt")
    assert r.score.tolist() == [1.5, 8.0, 0.5]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n")
    assert _values(evaluate(qrels, BAD / "run_score_hex.txt", ["map", "P_1"])) == {"AP": 1.0, "P@1": 1.0}


def test_hexadecimal_scores_as_trec_eval(trec_eval, tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n")
    for binary in trec_eval.values():
        out = subprocess.run([str(binary), "-m", "map", str(qrels), str(BAD / "run_score_hex.txt")],
                             capture_output=True, text=True, check=True).stdout
        assert "map                   \tall\t1.0000" in out


def test_underscored_grade_is_refused():
    # int(b'1_5') (and numpy's cast) is 15, atol reads 1: refused as not a number
    with pytest.raises(InputError) as e:
        read_qrels(BAD / "qrels_grade_underscore.txt")
    assert (e.value.line, e.value.reason) == (2, "grade '1_5' is not a number")


# ------------------------------------------------------------ grades in frames and dicts
def test_frame_and_dict_grades_out_of_range_are_refused_never_wrapped():
    pd = pytest.importorskip("pandas")
    cases = [
        (pd.DataFrame({"qid": ["1"], "docno": ["d1"], "label": [1e30]}), "label 1e+30"),
        (pd.DataFrame({"qid": ["1"], "docno": ["d1"], "label": np.array([2**64 - 1], np.uint64)}),
         "label 18446744073709551615"),
        (pd.DataFrame({"qid": ["1"], "docno": ["d1"], "label": [256.0]}), "label 256.0"),
        ({"1": {"d1": 1e30}}, "grade 1e+30"),
        ({"1": {"d1": 10**30}}, f"grade {10**30}"),
        ({"1": {"d1": 2**63}}, f"grade {2**63}"),
        ({"1": {"d1": 300}}, "grade 300"),
    ]
    for qrels, text in cases:
        with pytest.raises(InputError) as e:
            as_qrels(qrels)
        assert e.value.line == 1 and e.value.reason.startswith(f"{text} is out of range") \
            and str(MAX_GRADE) in e.value.reason


def test_frame_grades_follow_the_file_reader():
    # the file reader reads '1.5' as 1 (atol), '255.9' as 255, '-1e20' as non-relevant
    pd = pytest.importorskip("pandas")
    q = as_qrels(pd.DataFrame({"qid": ["1"] * 4, "docno": ["a", "b", "c", "d"], "label": [1.5, 255.9, -1e20, 0.7]}))
    assert q.grades["1"].tolist() == [1, 255, -MAX_GRADE, 0] and q.max_grade == 255
    assert as_qrels({"1": {"a": 1.5}}).grades["1"].tolist() == [1]


def test_empty_qrels_frame_is_refused():
    pd = pytest.importorskip("pandas")
    with pytest.raises(InputError, match="qrels frame holds no judgement"):
        as_qrels(pd.DataFrame({"qid": [], "docno": [], "label": []}))


@pytest.mark.parametrize("value, kind", [("1.5", "str"), (Decimal("1.5"), "Decimal"), (True, "bool")])
def test_dict_scores_that_are_not_numbers_name_qid_docno_and_type(value, kind):
    run = {"q1": {"d0": 2.0, "d1": value}}
    for call in (as_runs, as_run):
        with pytest.raises(InputError) as e:
            call(run)
        assert e.value.reason == f"qid 'q1', docno 'd1': score {value!r} is a {kind}, not a number (int or float)"
    with pytest.raises(InputError, match=f"qid 'q1', docno 'd1': grade .* is a {kind}"):
        as_qrels({"q1": {"d1": value}})


def test_uint64_qids_above_2_63_stay_exact():
    pd = pytest.importorskip("pandas")
    big = np.array([2**63 + 5, 2**64 - 1], dtype=np.uint64)
    qrels = pd.DataFrame({"qid": big, "docno": ["d1", "d1"], "label": [1, 1]})
    run = pd.DataFrame({"qid": big, "docno": ["d1", "d1"], "score": [1.0, 1.0]})
    assert as_run(run).qid.tolist() == [b"9223372036854775813", b"18446744073709551615"]
    got = evaluate(qrels, run, ["map"])
    assert got["topic"].tolist() == ["18446744073709551615", "9223372036854775813"]
    assert got["value"].tolist() == [1.0, 1.0]
    assert as_qrels({2**64 - 1: {"d1": 1}}).topics == ["18446744073709551615"]


# ------------------------------------------------------------------ qids as they were read
def _q_rows(code_out_err) -> dict[str, str]:
    code, out, err = code_out_err
    assert code == 0 and err == ""
    return {line.split("\t")[1]: line.split("\t")[2] for line in out.splitlines() if line.startswith("map")}


def test_qids_print_as_read():
    # \xff, \xfe (not UTF-8), a 200-byte qid and a 201-byte one sharing its first 128 bytes,
    # 'é1' (UTF-8). Hand: \xff and the 200-byte qid have their relevant document first (AP 1),
    # \xfe and the 201-byte one second (AP 0.5)
    q = read_qrels(BAD / "qrels_qid_names.txt")
    long = "t" * 200
    assert sorted(q.topics) == sorted(["\\xff", "\\xfe", long, long + "x", "é1"])
    assert all(len(q.docnos[t]) == 1 for t in q.topics)
    assert sorted(read_run(BAD / "run_qid_names.txt").topics) == sorted(q.topics)
    rows = _q_rows(_cli([BAD / "qrels_qid_names.txt", BAD / "run_qid_names.txt", "-q", "-m", "map"]))
    assert rows == {"\\xff": "1.0000", "\\xfe": "0.5000", long: "1.0000", long + "x": "0.5000",
                    "é1": "1.0000", "all": "0.8000"}


def test_qids_print_as_trec_eval_prints_them(trec_eval):
    rows = _q_rows(_cli([BAD / "qrels_qid_names.txt", BAD / "run_qid_names.txt", "-q", "-m", "map"]))
    done = subprocess.run([str(trec_eval["9.0.7"]), "-q", "-m", "map", str(BAD / "qrels_qid_names.txt"),
                           str(BAD / "run_qid_names.txt")], capture_output=True, check=True).stdout
    want = {line.split(b"\t")[1].decode("utf-8", "backslashreplace"): line.split(b"\t")[2].decode()
            for line in done.splitlines() if line.startswith(b"map")}
    assert rows == want


def test_ascii_qids_print_unchanged():
    q = read_qrels(BAD / "qrels_ok.txt")
    assert all(t.isascii() and "\\" not in t for t in q.topics)
    assert q.topics == sorted(read_run(BAD / "run_ok.txt").topics)


# ---------------------------------------------------------------------- paths and files
def test_broken_link_in_a_run_folder_is_named(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "a.txt").write_bytes((BAD / "run_ok.txt").read_bytes())
    os.symlink(tmp_path / "gone.txt", folder / "b.txt")
    with pytest.raises(InputError) as e:
        read_runs(folder)
    assert e.value.path == str(folder) and e.value.reason.startswith("run folder entry 'b.txt' is a broken link")
    code, out, err = _cli([BAD / "qrels_ok.txt", folder])
    assert code == 1 and err.count("\n") == 1 and "broken link" in err


def test_bytes_paths_are_read():
    q, r = os.fsencode(BAD / "qrels_ok.txt"), os.fsencode(BAD / "run_ok.txt")
    assert [x.name for x in as_runs(r)] == ["run_ok.txt"] == [x.name for x in as_runs([r])]
    assert as_qrels(q).topics == read_qrels(BAD / "qrels_ok.txt").topics
    assert _values(evaluate(q, r, ["map"])) == _values(evaluate(BAD / "qrels_ok.txt", BAD / "run_ok.txt", ["map"]))


def test_cr_only_line_ends_are_named():
    with pytest.raises(InputError) as e:
        read_qrels(BAD / "qrels_cr_only.txt")
    assert e.value.line is None and "carriage return only" in e.value.reason and "swapped" not in e.value.reason
    code, out, err = _cli([BAD / "qrels_cr_only.txt", BAD / "run_ok.txt"])
    assert code == 1 and err.count("\n") == 1 and "carriage return only" in err


def test_cr_only_run_is_refused_not_read_as_one_line(tmp_path):
    # read as one line, only its first 6 tokens would count: one document instead of three
    path = tmp_path / "run.txt"
    path.write_bytes(b"1 Q0 d1 1 3 r\r1 Q0 d2 2 2 r\r1 Q0 d3 3 1 r\r")
    with pytest.raises(InputError, match="carriage return only"):
        read_run(path)
    crlf = tmp_path / "crlf.txt"                     # CR LF line ends are read (CR is a space)
    crlf.write_bytes(b"1 Q0 d1 1 3 r\r\n1 Q0 d2 2 2 r\r\n")
    assert len(read_run(crlf)) == 2


@pytest.mark.parametrize("call", [read_runs, read_run, read_qrels, as_qrels, as_runs])
def test_empty_path_is_refused(call):
    with pytest.raises(InputError, match="empty path"):
        call("")
    with pytest.raises(InputError, match="empty path"):
        call(b"")


def test_character_device_is_refused_not_read_to_exhaustion():
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    for call in (read_run, read_qrels):
        with pytest.raises(InputError) as e:
            call("/dev/zero")
        assert e.value.reason.startswith("not a regular file (a character device)")


def test_a_pipe_is_still_read(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    import threading

    data = (BAD / "run_ok.txt").read_bytes()
    writer = threading.Thread(target=lambda: fifo.write_bytes(data))
    writer.start()
    try:
        r = read_run(fifo)
    finally:
        writer.join()
    assert len(r) == len(read_run(BAD / "run_ok.txt"))


# --------------------------------------------------------------------------- huge depths
def test_huge_depth_is_no_cut():
    # trec_eval reads -M 99999999999999999999 as no cut: the relevant document at rank 1,200 of
    # 1,500 counts (map 1/1200, as without -M)
    assert check_depth(99999999999999999999) is None and check_depth(np.uint64(2**64 - 1)) is None
    assert check_depth(1000) == 1000
    code, out, err = _cli([BAD / "qrels_deep.txt", BAD / "run_deep_1500.txt", "-M", "99999999999999999999",
                           "-m", "map"])
    assert code == 0 and "map                   \tall\t0.0008" in out
    got = _values(evaluate(BAD / "qrels_deep.txt", BAD / "run_deep_1500.txt", ["map"], depth=10**30))
    assert got == {"AP": 1 / 1200}
    lists = rank_runs([BAD / "run_deep_1500.txt"], BAD / "qrels_deep.txt", depth=2**62 - 1)
    assert lists.depth == 1500 and lists.truncate(10**30) is lists
    with pytest.raises(ParameterError):
        check_depth(0)
