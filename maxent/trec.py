"""Readers for TREC run and qrels files (plain or gzip), following trec_eval's parsing rules.

Runs: ``qid Q0 docno rank score tag``, any whitespace; extra trailing columns, blank lines and
``#`` lines are skipped; the rank column is never used. Qrels: ``qid iter docno grade``,
exactly four columns; grades are read as trec_eval's ``atol`` (``1.5`` is 1); negative grades
count at no level (like unjudged documents); grades above :data:`MAX_GRADE` are refused, as
memory grows with the number of levels. Scores are what C's ``strtod`` reads from the whole
token (:func:`strtod_whole`: ``0x1p3`` is 8, ``1_5`` is refused). A UTF-8 byte-order mark is
read through, with an :class:`~maxent.errors.InputWarning` (trec_eval 9 drops that line);
UTF-16, CR-only line ends and devices (``/dev/zero``) are refused. Qids print as read
(:func:`names`: bytes that are not UTF-8 escaped, long qids whole); a qrels with two distinct
qids that print alike is refused.

The per-byte loops are in C (:mod:`maxent._ctrec`; ``tests/_trec_numpy.py`` is their numpy
oracle). Every problem raises :class:`~maxent.errors.InputError` naming file, line and reason.
Frames and dicts are adapted in :mod:`maxent.inputs`.
"""
from __future__ import annotations

import io
import mmap
import os
import re
import stat
import warnings
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

from maxent.errors import InputError, InputWarning

from maxent import _ctrec  # the per-byte loops in C (maxent/_ctrec.c), built at install

__all__ = ["Run", "Qrels", "read_run", "read_runs", "read_qrels", "build_run", "build_qrels",
           "hash_strings", "topic_keys", "topic_codes", "inflate_engine", "read_raw", "MAX_GRADE",
           "GZIP_MAGIC"]

MAX_GRADE = 255
"""Largest qrels grade accepted (also keeps the gain 2^g - 1 finite)."""
_BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"
"""The first two bytes of every gzip file."""
_GZIP = None     # (module, the exceptions its decompress raises on bad data), once chosen

LONG_TOKEN = 128
"""Tokens longer than this are stored as their first LONG_TOKEN bytes, 0xFF and an 8-byte
BLAKE2 digest, so one huge docno does not widen the whole array; equality is kept, order too
except between two long tokens sharing their first 128 bytes."""
_SURROGATE_WIDTH = LONG_TOKEN + 9
SPLIT_BYTES = 1 << 24
"""Runs of this many bytes or more are scanned by two threads, in :data:`SCAN_CHUNKS` chunks
(halves: more chunks balance a busy machine better but copy more of the columns)."""
SCAN_CHUNKS = 2
STREAM_BLOCK = 1 << 24
"""Bytes of a gzipped run inflated at a time (a block is read while the next inflates)."""


def _surrogate(token: bytes) -> bytes:
    import hashlib

    return token[:LONG_TOKEN] + b"\xff" + hashlib.blake2b(token, digest_size=8).digest()


def _is_surrogate(token: bytes) -> bool:
    """A long token's surrogate (numpy may have dropped its digest's trailing NUL bytes)."""
    return len(token) > LONG_TOKEN and token[LONG_TOKEN] == 0xFF


def shown(token: bytes) -> str:
    """A docno or qid as text for messages; a surrogate shows its prefix and ``...``; bytes
    that are not UTF-8 are shown escaped (``\\xff``), so two distinct tokens show distinctly."""
    token = bytes(token)
    if _is_surrogate(token):
        token = token[:LONG_TOKEN] + b"..."
    return token.decode("utf-8", "backslashreplace")


def compact_long(tokens: list[bytes], originals: dict | None = None) -> np.ndarray:
    """A bytes (``S``) array of ``tokens``, those longer than :data:`LONG_TOKEN` as surrogates
    (``originals``, when given, receives surrogate -> token for each)."""
    if not tokens:
        return np.zeros(0, dtype="S1")
    out = [t if len(t) <= LONG_TOKEN else _surrogate(t) for t in tokens]
    if originals is not None:
        originals.update((s.rstrip(b"\0"), t) for s, t in zip(out, tokens) if s is not t)
    return np.array(out, dtype=bytes)


def names(tokens: np.ndarray, originals: Mapping | None = None) -> list[str]:
    """Qids (a bytes array) as the text printed for them, as they were read: UTF-8, bytes
    that are not UTF-8 escaped (``\\xff``, so distinct qids print distinctly), a long qid's
    surrogate as the whole qid when ``originals`` (surrogate -> qid) has it."""
    try:
        out = tokens.astype(str).tolist()       # ASCII (the common case): a cast
    except UnicodeDecodeError:
        out = np.char.decode(tokens, "utf-8", "backslashreplace").tolist()
    if len(tokens) and tokens.dtype.itemsize > LONG_TOKEN:
        for i in np.flatnonzero(np.char.str_len(tokens) > LONG_TOKEN):
            t = bytes(tokens[i])
            if _is_surrogate(t):
                full = (originals or {}).get(t)
                out[i] = shown(t) if full is None else full.decode("utf-8", "backslashreplace")
    return out


_LEADING_INT = re.compile(rb"^[+-]?\d*")
_HEX_FLOAT = re.compile(rb"[+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)([pP][+-]?[0-9]+)?")
_NAN_CHARS = re.compile(rb"[+-]?[nN][aA][nN]\([0-9A-Za-z_]*\)")


def strtod_whole(token: bytes) -> float | None:
    """What C's ``strtod`` reads from the whole ``token``, None when it stops before its end
    (trec_eval's ``atof`` would read a prefix: ``1_5`` is 1). Python's ``float()`` reads the
    same numbers except ``_`` between digits (it reads ``1_5`` as 15), hexadecimal floats
    (``0x1p3`` is 8) and ``nan(chars)``; overflow gives +-inf, as strtod's HUGE_VAL."""
    if _HEX_FLOAT.fullmatch(token):
        try:
            return float.fromhex(token.decode("ascii"))
        except OverflowError:
            return float("-inf") if token.startswith(b"-") else float("inf")
    if _NAN_CHARS.fullmatch(token):
        return float("nan")
    if b"_" in token or not token.isascii():
        return None
    try:
        return float(token)
    except ValueError:
        return None
_GRADE = re.compile(rb"^[+-]?\d+(\.\d*)?([eE][+-]?\d+)?$|^[+-]?\.\d+([eE][+-]?\d+)?$")


@dataclass(frozen=True, eq=False)
class Run:
    """One run: parallel arrays, one entry per kept line.

    Attributes
    ----------
    name : run name (the file name without ``.gz``); tag : the last line's run_id
    path : source path, or None for a run built in memory
    qid, docno : bytes arrays, compared byte-wise as strcmp; score : float64 array
    line_runs : the entries' 1-based line numbers (for error messages) as runs of consecutive
        lines, (k, 2) int64 rows (first entry, its line): :attr:`line` is the whole column
    """

    name: str
    path: str | None
    qid: np.ndarray
    docno: np.ndarray
    score: np.ndarray
    line_runs: np.ndarray
    tag: str = ""
    long_qids: Mapping[bytes, bytes] | None = None
    """surrogate -> qid of the qids longer than :data:`LONG_TOKEN` (None: none kept)"""

    def __len__(self) -> int:
        return len(self.score)

    @cached_property
    def line(self) -> np.ndarray:
        """The 1-based line number of each entry (int64)."""
        return run_lines(self.line_runs, len(self))

    def subset(self, keep: np.ndarray) -> "Run":
        """The run's entries where ``keep`` (a boolean mask or rows), with their line numbers."""
        return replace(self, qid=self.qid[keep], docno=self.docno[keep], score=self.score[keep],
                       line_runs=line_runs(self.line[keep]))

    @property
    def topics(self) -> list[str]:
        return names(np.unique(self.qid), self.long_qids)

    def qid_names(self, qid: np.ndarray) -> list[str]:
        """Some of this run's qids (bytes) as printed (:func:`names`)."""
        return names(qid, self.long_qids)

    @cached_property
    def docno_hash(self) -> np.ndarray:
        """:func:`hash_strings` of the docnos, computed once."""
        return hash_strings(self.docno)

    @cached_property
    def blocks(self) -> np.ndarray:
        """:func:`qid_blocks`: the rows where the qid changes, computed once."""
        return qid_blocks(self.qid)


def line_runs(lines: np.ndarray) -> np.ndarray:
    """Line numbers as :attr:`Run.line_runs`: (row, line) where a run of consecutive lines starts."""
    lines = np.asarray(lines, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], np.diff(lines) != 1)))[:len(lines)]
    return np.stack([starts, lines[starts]], axis=1)


def run_lines(runs: np.ndarray, n: int) -> np.ndarray:
    """The line numbers of n rows from their :func:`line_runs`."""
    rows, first = runs[:, 0], runs[:, 1]
    return np.arange(n, dtype=np.int64) + np.repeat(first - rows, np.diff(np.append(rows, n)))


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgements: mappings topic -> judged docnos (sorted, bytes) and grades.

    Negative grades are non-relevant and excluded from :meth:`level_counts`. Read qrels keep
    every judgement in flat arrays (:attr:`flat`) that the mappings slice on access.
    """

    path: str | None
    topics: list[str]
    docnos: Mapping[str, np.ndarray]
    grades: Mapping[str, np.ndarray]
    max_grade: int = field(default=0)

    @cached_property
    def flat(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(topic_bytes, bounds, docno, grade)``: topic i's judgements in
        ``bounds[i]:bounds[i + 1]`` of the flat arrays."""
        sizes = [len(self.docnos[t]) for t in self.topics]      # qrels built in memory only
        bounds = np.concatenate(([0], np.cumsum(sizes, dtype=np.int64)))
        docno = np.concatenate([self.docnos[t] for t in self.topics]) if sizes else np.zeros(0, "S1")
        grade = (np.concatenate([np.asarray(self.grades[t], dtype=np.int64) for t in self.topics])
                 if sizes else np.zeros(0, np.int64))
        topic_bytes = compact_long([t.encode() for t in self.topics])
        return topic_bytes, bounds, docno, grade

    def level_counts(self, topic: str, levels: int) -> np.ndarray:
        """Counts of judged documents of grade 0..levels-1 for ``topic`` (zeros if absent)."""
        g = self.grades.get(topic)
        if g is None:
            return np.zeros(levels, dtype=np.int64)
        g = g[g >= 0]
        return np.bincount(g, minlength=levels)[:levels]

    def counts(self, levels: int) -> np.ndarray:
        """(T, levels) array: :meth:`level_counts` of every topic, in one pass."""
        _, bounds, _, grade = self.flat
        T = len(self.topics)
        topic = np.repeat(np.arange(T, dtype=np.int64), np.diff(bounds))
        keep = (grade >= 0) & (grade < levels)
        flat = np.bincount(topic[keep] * levels + grade[keep], minlength=T * levels)
        return flat.reshape(T, levels)

    def __contains__(self, topic: str) -> bool:
        return topic in self.docnos

    @cached_property
    def topic_index(self) -> "TopicIndex":
        """Position in :attr:`topics` of qids, vectorised (:func:`topic_codes`)."""
        return TopicIndex(self.flat[0])

    @cached_property
    def lookup(self):
        """``(index, topic, docno, grade)`` over every judgement, for vectorised grade lookup;
        ``index`` is a :class:`_KeyIndex` of their :func:`topic_keys`, None if two share a key."""
        _, bounds, docno, grade = self.flat
        topic = np.repeat(np.arange(len(self.topics)), np.diff(bounds))
        index = _KeyIndex(topic_keys(hash_strings(docno), topic))
        return (index if index.is_unique else None), topic, docno, grade


class TopicIndex:
    """The position of each qid among a list of topic names (bytes), by binary search."""

    def __init__(self, topic_bytes: np.ndarray):
        self.order = np.argsort(topic_bytes, kind="stable")
        self.sorted = topic_bytes[self.order]

    def codes(self, qid: np.ndarray) -> np.ndarray:
        """Position of every qid (bytes array), -1 where absent."""
        if len(self.sorted) == 0:
            return np.full(len(qid), -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.sorted, qid), len(self.sorted) - 1)
        return np.where(self.sorted[pos] == qid, self.order[pos], -1).astype(np.int64)


class _Slices(Mapping):
    """topic -> its slice of a flat array (:attr:`Qrels.docnos` / ``grades`` of read qrels)."""

    def __init__(self, topics: list[str], index: TopicIndex, bounds: np.ndarray, values: np.ndarray):
        self._topics, self._index, self._bounds, self._values = topics, index, bounds, values

    @cached_property
    def _names(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self._topics)}

    def _position(self, topic) -> int:
        if not isinstance(topic, str):
            return -1
        i = self._names.get(topic)
        if i is not None:
            return i
        try:
            key = compact_long([topic.encode("utf-8", "surrogateescape")])
        except UnicodeEncodeError:
            return -1
        return int(self._index.codes(key)[0])

    def __getitem__(self, topic):
        i = self._position(topic)
        if i < 0:
            raise KeyError(topic)
        return self._values[self._bounds[i]: self._bounds[i + 1]]

    def __iter__(self):
        return iter(self._topics)

    def __len__(self) -> int:
        return len(self._topics)


class _KeyIndex:
    """Positions of 64-bit keys: an open-addressing table built and probed in C (no pandas).
    A key given twice is found at its first position, and :attr:`is_unique` is False."""

    def __init__(self, keys: np.ndarray):
        self.keys = np.ascontiguousarray(keys, dtype=np.uint64)
        self._bits = max(4, int(len(self.keys) * 2).bit_length())    # 2n to 4n slots
        table, self.is_unique = _ctrec.key_table(self.keys, self._bits)
        self._table = np.frombuffer(table, dtype=np.int64)

    def get_indexer(self, query: np.ndarray) -> np.ndarray:
        """Position of each query key in the original keys, -1 where absent."""
        query = np.ascontiguousarray(query, dtype=np.uint64)
        return np.frombuffer(_ctrec.key_probe(self.keys, self._table, self._bits, query), dtype=np.int64)


def inflate_engine():
    """The module whose ``decompress`` reads gzip files: ISA-L's ``isal.igzip`` with the
    optional ``fast`` extra (the same bytes), else the standard library's ``gzip``."""
    global _GZIP
    if _GZIP is None:
        try:
            from isal import igzip as engine, isal_zlib
            errors = (EOFError, OSError, zlib.error, isal_zlib.error)
        except ImportError:
            import gzip as engine
            errors = (EOFError, OSError, zlib.error)
        _GZIP = engine, errors
    return _GZIP[0]


def read_raw(path, mapped: bool = False, stream: bool = False):
    """The bytes of a file, decompressed if they start with :data:`GZIP_MAGIC`; ``mapped``: a
    plain regular file as a read-only memory map (no copy: the page cache's own pages);
    ``stream``: a gzipped file as an open binary file object that inflates it as it is read.

    Raises OSError (reading) or InputError (a truncated or corrupt gzip file)."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        mode = st.st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):   # a pipe (<(zcat run.gz)) is read
            kind = ("a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode)
                    else "a socket" if stat.S_ISSOCK(mode) else "a special file")
            raise InputError(path, None, f"not a regular file ({kind}): expected a run or qrels file")
        if (mapped or stream) and stat.S_ISREG(mode) and st.st_size > 0:
            if f.read(2) == GZIP_MAGIC:
                if stream:
                    return inflate_engine().open(path, "rb")
            elif mapped:
                return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            f.seek(0)
        data = f.read()
    if data[:2] != GZIP_MAGIC:
        return data
    engine = inflate_engine()
    if stream:                                   # a pipe: its compressed bytes, inflated as read
        return engine.open(io.BytesIO(data), "rb")
    try:
        return engine.decompress(data)
    except _GZIP[1] as e:      # EOFError: truncated; the rest: a bad header, data or checksum
        raise InputError(path, None, f"corrupt gzip data ({e})") from None


def _read_bytes(path: Path, mapped: bool = False, stream: bool = False):
    """:func:`read_raw` without a UTF-8 byte-order mark (a stream keeps it); InputError when
    unreadable."""
    try:
        data = read_raw(path, mapped, stream)
    except FileNotFoundError:
        raise InputError(path, None, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, None, "is a directory, expected a file") from None
    except OSError as e:
        raise InputError(path, None, f"cannot read: {e.strerror or e}") from None
    return data if isinstance(data, io.IOBase) else _without_bom(data, path, stacklevel=4)


def _without_bom(data, path, stacklevel: int):
    """``data`` read through a leading UTF-8 byte-order mark, with a warning."""
    if data[:len(_BOM)] == _BOM:  # never part of a token
        data = data[len(_BOM):]                  # (a copy of a memory map: rare)
        warnings.warn(f"{path}: starts with a UTF-8 byte-order mark, read through it; trec_eval 9 "
                      "drops this line (the mark becomes part of its qid), so its numbers may differ",
                      InputWarning, stacklevel=stacklevel)
    return data


def _inflated(stream, path):
    """A gzipped run's text in blocks of whole lines (the last may lack its newline); each block
    of :data:`STREAM_BLOCK` bytes is inflated on a second thread while the one before is read.
    InputError for corrupt data."""
    def inflate() -> bytes:
        try:
            return stream.read(STREAM_BLOCK)
        except _GZIP[1] as e:
            if isinstance(e, OSError) and e.errno is not None:      # the disk, not the data
                raise InputError(path, None, f"cannot read: {e.strerror or e}") from None
            raise InputError(path, None, f"corrupt gzip data ({e})") from None

    with ThreadPoolExecutor(1) as pool:
        pending, carry = pool.submit(inflate), b""
        while chunk := pending.result():
            pending = pool.submit(inflate)
            start = 0
            if carry:                   # the line cut at the end of the block before, whole
                start = chunk.find(b"\n") + 1
                if not start:
                    carry += chunk
                    continue
                yield carry + chunk[:start]
            cut = chunk.rfind(b"\n", start) + 1
            if cut > start:
                yield memoryview(chunk)[start:cut]      # no copy of the block
            carry = chunk[max(cut, start):]
        if carry:
            yield carry


class _Table:
    """A tokenised file: column c of kept line i (1-based line ``lines[i]``) is token
    ``first[i] + c``, or ``first[i] + columns[c]`` when only some columns were kept."""

    def __init__(self, buf, starts, ends, first, lines, path, columns=None):
        self.buf, self.starts, self.ends = buf, starts, ends
        self.first, self.lines, self.path = first, lines, path
        self.columns = columns

    def _tokens(self, c: int) -> np.ndarray:
        return self.first + (c if self.columns is None else self.columns[c])

    def last_line_token(self, c: int) -> bytes:
        """Column c of the last kept line."""
        if self.columns is None or c in self.columns:
            t = self._tokens(c)[-1]
            return self.buf[self.starts[t]: self.ends[t]].tobytes()
        a = int(self.starts[self._tokens(0)[-1]])      # the line's first token
        line = self.buf[a:].tobytes().split(b"\n", 1)[0]
        return line.split()[c]                          # bytes.split(): C isspace, as the scan

    def bounds(self, c: int) -> tuple[np.ndarray, np.ndarray]:
        """Start and end offsets of column c's tokens."""
        tok = self._tokens(c)
        return self.starts[tok], self.ends[tok]

    def matrix(self, c: int, bounds=None) -> np.ndarray:
        """Column c as an (n, W) uint8 matrix, zero-padded on the right."""
        a, e = self.bounds(c) if bounds is None else bounds
        W = max(1, int((e - a).max(initial=1)))
        return np.frombuffer(_ctrec.gather(self.buf, a, e, W), np.uint8).reshape(len(a), W)

    def strings(self, c: int, originals: dict | None = None) -> np.ndarray:
        """Column c as a bytes (``S``) array, long tokens as surrogates (:data:`LONG_TOKEN`);
        ``originals``, when given, receives surrogate -> token for each."""
        a, e = self.bounds(c)
        length = e - a
        long = np.flatnonzero(length > LONG_TOKEN)
        if len(long) == 0:
            mat = self.matrix(c, bounds=(a, e))
            return mat.view(f"S{mat.shape[1]}").ravel()
        short_e = e.copy()
        short_e[long] = a[long]                       # empty tokens while building the matrix
        mat = self.matrix(c, bounds=(a, short_e))
        out = mat.view(f"S{mat.shape[1]}").ravel().astype(f"S{_SURROGATE_WIDTH}")
        if originals is None:             # one long token at a time (docnos may be huge)
            out[long] = [_surrogate(self.buf[s: t].tobytes()) for s, t in zip(a[long], e[long])]
            return out
        full = [self.buf[s: t].tobytes() for s, t in zip(a[long], e[long])]
        out[long] = [_surrogate(t) for t in full]
        originals.update(zip((bytes(x) for x in out[long]), full))
        return out

    def floats(self, c: int, what: str) -> np.ndarray:
        """Column c as finite float64, what C's strtod reads from each whole token
        (:func:`strtod_whole`); InputError naming the line."""
        a, e = self.bounds(c)
        value, ok = _ctrec.parse_floats(self.buf, a, e)
        value = np.frombuffer(value, np.float64).copy()
        ok = np.frombuffer(ok, np.bool_)
        # the C parser leaves the rare long, hexadecimal or underscored tokens to strtod_whole
        for i in np.flatnonzero(~ok):
            t = self.buf[a[i]: e[i]].tobytes()
            v = strtod_whole(t)
            if v is None:
                raise InputError(self.path, int(self.lines[i]), f"{what} {shown(t)!r} is not a number")
            value[i] = v
        bad = ~np.isfinite(value)
        if bad.any():
            i = int(np.argmax(bad))
            t = shown(self.buf[a[i]: e[i]].tobytes())
            raise InputError(self.path, int(self.lines[i]), f"{what} {t!r} is not finite")
        return value


def _columns_error(path, line: int, ncols: int, found: int, exact: bool, what: str) -> InputError:
    """Wrong number of columns, with a hint when the line looks like the other kind of file."""
    reason = f"expected {ncols} columns ({what}), found {found}"
    if ncols == 4 and exact and found >= 6:
        reason += ("; this looks like a run file (qid Q0 docno rank score tag): "
                   "are the qrels and run arguments swapped? (qrels come first)")
    elif ncols == 6 and found == 4:
        reason += ("; this looks like a qrels file (qid iter docno grade): "
                   "are the qrels and run arguments swapped? (qrels come first)")
    return InputError(path, line, reason)


_CR_BREAK = re.compile(rb"\r[ \t\v\f\r]*[^\s]")   # a CR with text after it (no LF in the head)


def _check_text(data, path, what: str, nul: bool = True) -> None:
    """InputError for empty, UTF-16, CR-only or (``nul``: left to the caller's scan when False)
    binary data; ``data``: bytes or a memory map."""
    if not len(data) or _all_space(data):
        raise InputError(path, None, f"empty file: no {what} lines")
    _check_head(data, path)
    at = data.find(b"\x00") if nul else -1
    if at >= 0:
        raise InputError(path, data[:at].count(b"\n") + 1, "binary data (NUL byte): not a text file")


def _check_head(data, path) -> None:
    """InputError for UTF-16 or CR-only text, seen in the first 64 KiB."""
    head = bytes(data[:65536])
    if head[:2] in (b"\xff\xfe", b"\xfe\xff") or (len(head) > 1 and (
            head[1:64:2].count(0) > 8 or head[0:64:2].count(0) > 8)):
        raise InputError(path, None, "UTF-16 text (trec_eval reads UTF-8 or ASCII only): convert it, "
                                     "e.g. iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8")
    if b"\n" not in head and _CR_BREAK.search(head):
        raise InputError(path, None, "lines end in a carriage return only (CR, old Mac line ends); "
                                     "trec_eval reads lines ending in LF: convert it, e.g. "
                                     "tr '\\r' '\\n' < FILE > FILE.unix")


def _all_space(data) -> bool:
    """Whether every byte is C whitespace, looking no further than the first other byte."""
    step = 1 << 20
    return all(bytes(data[i:i + step]).isspace() for i in range(0, len(data), step))


def _table(data: bytes, path, ncols: int, exact: bool, what: str,
           keep: tuple[int, ...] | None = None) -> _Table:
    """Tokenise ``data`` in C: tokens split at ``isspace`` bytes, blank and ``#`` lines
    skipped; InputError for fewer than ``ncols`` tokens (another number when ``exact``).
    ``keep``: the columns stored (default all; must include 0)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    keep = tuple(range(ncols)) if keep is None else tuple(keep)
    wide = len(data) > 2**31 - 1                     # int64 offsets, else int32
    got = _ctrec.tokenize(data, ncols, exact, keep, wide)
    if got[0] is None:
        raise _columns_error(path, got[1], ncols, got[2], exact, what)
    starts, ends, lines = (np.frombuffer(b, dtype=np.int64 if wide else np.int32) for b in got)
    if len(lines) == 0:
        raise InputError(path, None, f"no {what} lines (only comments or blank lines)")
    return _Table(buf, starts, ends, np.arange(0, len(starts), len(keep)), lines, path,
                  columns={c: i for i, c in enumerate(keep)})


def hash_strings(a: np.ndarray) -> np.ndarray:
    """64-bit hash of every string of a bytes (``S``) array, independent of its width.

    Only finds candidate matches: every match is confirmed on the strings, so a collision
    never changes a result.
    """
    a = np.ascontiguousarray(a)
    return np.frombuffer(_ctrec.hash_strings(a, a.dtype.itemsize), dtype=np.uint64)


def topic_keys(docno_hash: np.ndarray, topic: np.ndarray) -> np.ndarray:
    """One 64-bit key per document from its docno hash and integer topic code."""
    h = np.ascontiguousarray(docno_hash, dtype=np.uint64)
    c = np.ascontiguousarray(topic, dtype=np.int64)      # (code + 1) * golden, modulo 2^64
    return np.frombuffer(_ctrec.topic_keys(h, c), dtype=np.uint64)


def word_keys(a: np.ndarray) -> list[np.ndarray]:
    """A bytes (``S``) array as columns of big-endian 64-bit words:
    ``np.lexsort(word_keys(a)[::-1])`` orders it as strcmp, by integer sorts."""
    a = np.ascontiguousarray(a)
    n, W = len(a), max(a.dtype.itemsize, 1)
    W8 = -(-W // 8) * 8
    if W == W8 and a.dtype.itemsize:
        mat = a.view(np.uint8).reshape(n, W)
    else:
        mat = np.zeros((n, W8), dtype=np.uint8)
        mat[:, :a.dtype.itemsize] = a.view(np.uint8).reshape(n, a.dtype.itemsize)
    words = mat.view(">u8")
    return [words[:, j].astype(np.uint64) for j in range(W8 // 8)]


def topic_codes(qid: np.ndarray, index: "dict[bytes, int] | TopicIndex | None" = None,
                starts: np.ndarray | None = None, per_block: bool = False) -> np.ndarray:
    """Integer code of each qid: ``index[qid]`` (-1 when absent), or with ``index=None`` its
    rank among the distinct qids (found among the first qids of blocks of equal qids).
    ``starts``: the blocks' first rows (:func:`qid_blocks`) when known; ``per_block``: one
    code per block instead of one per row."""
    n = len(qid)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if starts is None:
        starts = qid_blocks(qid)
    firsts = qid[starts]                       # every distinct qid is the first of some block
    order = np.lexsort(word_keys(firsts)[::-1])
    s = firsts[order]
    new = np.concatenate(([True], s[1:] != s[:-1]))
    uniq = s[new]
    inverse = np.empty(len(firsts), dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    if index is None:
        codes = np.arange(len(uniq), dtype=np.int64)
    elif isinstance(index, TopicIndex):
        codes = index.codes(uniq)
    else:
        codes = np.array([index.get(bytes(q), -1) for q in uniq], dtype=np.int64)
    if per_block:
        return codes[inverse]
    return np.repeat(codes[inverse], np.diff(np.append(starts, n)))


def as_path(path) -> Path:
    """A path given as str, bytes (:func:`os.fsdecode`) or os.PathLike; InputError for ''."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise InputError(None, None, f"expected a path (str, bytes or os.PathLike), got {type(path).__name__}")
    text = os.fsdecode(path)
    if not text:
        raise InputError(None, None, "empty path: expected a run or qrels file")
    return Path(text)


def _run_name(path: Path) -> str:
    return path.name[:-3] if path.name.endswith(".gz") else path.name


def _check_duplicates(run_path, qid: np.ndarray, docno: np.ndarray, runs: np.ndarray,
                      blocks: np.ndarray | None = None, docno_hash: np.ndarray | None = None,
                      blocks_clean: bool = False) -> None:
    """Raise InputError at the first line repeating a (qid, docno) pair. ``runs``: the rows'
    :func:`line_runs` (expanded only for the error); ``blocks``: the rows
    where the qid changes (:func:`qid_blocks`), when known; ``blocks_clean``: no block holds a
    docno twice (the scan looked), so only a topic in several blocks needs a look."""
    if len(qid) == 0:
        return
    if blocks is None:
        blocks = qid_blocks(qid)
    items, bounds = _topic_groups(qid, blocks)
    if items is None and blocks_clean:
        return
    if docno_hash is None:
        docno_hash = hash_strings(docno)
    d = np.ascontiguousarray(docno)
    if not _ctrec.has_repeat(d, max(d.dtype.itemsize, 1), np.ascontiguousarray(docno_hash, dtype=np.uint64),
                             items, bounds):
        return
    lines = run_lines(runs, len(qid))
    codes = topic_codes(qid, starts=blocks)
    order = np.lexsort((lines, docno, codes))
    d, c = docno[order], codes[order]
    dup = np.concatenate(([False], (c[1:] == c[:-1]) & (d[1:] == d[:-1])))
    group_first = np.maximum.accumulate(np.where(dup, 0, np.arange(len(dup))))
    cand = np.flatnonzero(dup)
    i = cand[np.argmin(lines[order[cand]])]
    raise InputError(run_path, int(lines[order[i]]), f"duplicate docno {shown(d[i])!r} in topic "
                     f"{shown(qid[order[i]])} "
                     f"(first at line {int(lines[order[group_first[i]]])})")


def _line_at(runs: np.ndarray, row: int) -> int:
    """The line of a row, from (row, line) runs of consecutive lines (:attr:`Run.line_runs`)."""
    k = int(np.searchsorted(runs[:, 0], row, "right")) - 1
    return int(runs[k, 1] + row - runs[k, 0])


def _topic_groups(qid: np.ndarray, blocks: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """``(items, bounds)``: the rows of each topic, ``items[bounds[g]:bounds[g + 1]]`` in line
    order; items None when each topic's lines are together (the groups are the blocks)."""
    firsts = np.sort(qid[blocks])
    if (firsts[1:] != firsts[:-1]).all():
        return None, np.append(blocks, len(qid)).astype(np.int64)
    codes = topic_codes(qid, starts=blocks)
    items = np.argsort(codes, kind="stable")
    c = codes[items]
    return items, np.flatnonzero(np.concatenate(([True], c[1:] != c[:-1], [True]))).astype(np.int64)


def qid_blocks(qid: np.ndarray) -> np.ndarray:
    """The rows where the qid differs from the row before (row 0 first), int64."""
    if len(qid) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate(([0], np.flatnonzero(qid[1:] != qid[:-1]) + 1)).astype(np.int64)


class _RunBlocks:
    """A run's columns gathered from blocks of whole lines, each read by one pass of the C scan
    (:func:`maxent._ctrec.read_run`), checked as one scan of the whole file: the first NUL byte
    anywhere, then the first short line, then the first unreadable score, then the first
    non-finite one, then duplicates. A plain file is one block; a gzipped one is inflated and
    read block by block."""

    what = "qid Q0 docno rank score tag"

    def __init__(self, path):
        self.path, self.lines, self.repeat = path, 0, False
        self.short = self.bad_score = self.nonfinite = None     # (line, ...) of the first
        self.blank, self.long_qids, self.tag = True, {}, ""
        self.columns = {k: _Column() for k in ("qid", "docno", "score", "blocks")}
        self.line_runs: list[np.ndarray] = []
        self.last_qid, self.topic_start = None, 0    # the last row's qid; where its topic began

    def add(self, data, chunks: int = 1, release: bool = False) -> None:
        """Read one block (ending after a newline unless it is the last); InputError for a NUL
        byte. After a short line the blocks are only searched for NUL bytes."""
        path, before = self.path, self.lines
        got = _ctrec.read_run(data, chunks, release) if self.short is None else None
        nul = got["nul"] if isinstance(got, dict) else _bytes(data).find(b"\x00")   # a NUL anywhere first
        if nul >= 0:
            raise InputError(path, before + _bytes(data[:nul]).count(b"\n") + 1,
                             "binary data (NUL byte): not a text file")
        if not isinstance(got, dict):
            if got is not None:
                self.short = (before + got[1], got[2])
            self.lines += int(np.count_nonzero(np.frombuffer(data, np.uint8) == 10))
            return
        self.lines += got["lines"]
        runs = np.frombuffer(got["line_runs"], np.int64).reshape(-1, 2) + [0, before]
        if len(runs) == 0:
            self.blank = self.blank and _all_space(data)
            return
        qid = _with_surrogates(np.frombuffer(got["qid"], f"S{got['qid_width']}"), got["long_qids"], data,
                               self.long_qids)
        docno = _with_surrogates(np.frombuffer(got["docno"], f"S{got['docno_width']}"), got["long_docnos"], data)
        score = np.frombuffer(got["score"], np.float64)
        # the C parser leaves the rare long, hexadecimal or underscored tokens to strtod_whole
        nonfinite = [got["nonfinite"]] if got["nonfinite"][0] >= 0 else []
        for i, a, e in got["bad_scores"]:
            t = bytes(data[a:e])
            v = strtod_whole(t)
            if v is None:
                if self.bad_score is None:
                    self.bad_score = (_line_at(runs, i), f"score {shown(t)!r} is not a number")
                break
            score[i] = v
            if not np.isfinite(v):
                nonfinite.append((i, a, e))
        if nonfinite and self.nonfinite is None:
            i, a, e = min(nonfinite)
            self.nonfinite = (_line_at(runs, i), f"score {shown(bytes(data[a:e]))!r} is not finite")
        blocks = np.frombuffer(got["blocks"], np.int64)
        repeat = got["repeat"] or bool(got["long_docnos"])
        rows = self.columns["score"].n
        if rows:
            if self.last_qid == qid[0]:              # its first topic goes on from the block before
                blocks = blocks[1:]
                if not repeat:
                    stop = blocks[0] if len(blocks) else len(qid)
                    both = np.concatenate([self.columns["docno"].array()[self.topic_start:], docno[:stop]])
                    repeat = len(np.unique(both)) < len(both)
            blocks = blocks + rows
        for key, column in zip(self.columns, (qid, docno, score, blocks)):
            self.columns[key].add(column)
        self.line_runs.append(runs + [rows, 0])
        self.repeat |= repeat
        self.last_qid = qid[-1]
        if len(blocks):
            self.topic_start = int(blocks[-1])
        a, e = got["tag"]
        self.tag = bytes(data[a:e]).decode("utf-8", "replace")

    def run(self) -> Run:
        """The run read, or the first InputError of the whole file."""
        path = self.path
        if self.short is not None:
            raise _columns_error(path, self.short[0], 6, self.short[1], False, self.what)
        if not self.columns["score"].n:
            raise InputError(path, None, f"empty file: no {self.what} lines" if self.blank
                             else f"no {self.what} lines (only comments or blank lines)")
        for error in (self.bad_score, self.nonfinite):
            if error is not None:
                raise InputError(path, *error)
        qid, docno, score, blocks = (c.array() for c in self.columns.values())
        runs = np.concatenate(self.line_runs)
        _check_duplicates(path, qid, docno, runs, blocks, blocks_clean=not self.repeat)
        run = Run(name=_run_name(path), path=str(path), qid=qid, docno=docno, score=score, line_runs=runs,
                  tag=self.tag, long_qids=self.long_qids or None)
        object.__setattr__(run, "blocks", blocks)  # fill the cached property
        return run


def _bytes(data):
    """bytes (or a memory map) as they are; a memoryview's bytes."""
    return data.tobytes() if isinstance(data, memoryview) else data


class _Column:
    """One column gathered block by block: the first block's array as it is, the later ones
    appended to one buffer that grows in place (no copy of the whole per block); strings are
    padded to the widest block's width."""

    def __init__(self):
        self.first, self.buffer, self.dtype, self.n = None, None, None, 0

    def add(self, a: np.ndarray) -> None:
        if self.dtype is None:
            self.first, self.dtype, self.n = a, a.dtype, len(a)
            return
        if self.buffer is None:
            self.buffer, self.first = bytearray(self.first.view(np.uint8)), None
        if a.dtype.itemsize > self.dtype.itemsize:        # a wider string: re-pad the rows so far
            self.buffer = bytearray(np.frombuffer(self.buffer, self.dtype).astype(a.dtype).view(np.uint8))
            self.dtype = a.dtype
        elif a.dtype != self.dtype:
            a = a.astype(self.dtype)
        self.buffer += a.view(np.uint8).data
        self.n += len(a)

    def array(self) -> np.ndarray:
        return self.first if self.buffer is None else np.frombuffer(self.buffer, self.dtype)


def _with_surrogates(a: np.ndarray, long: list, buf, originals: dict | None = None) -> np.ndarray:
    """``a`` with the rows of ``long`` ((row, start, end) of tokens longer than LONG_TOKEN,
    stored empty) as their surrogates; ``originals`` receives surrogate -> token."""
    if not long:
        return a
    out = a.astype(f"S{_SURROGATE_WIDTH}")
    full = [bytes(buf[s:t]) for _, s, t in long]
    rows = [r for r, _, _ in long]
    out[rows] = [_surrogate(t) for t in full]
    if originals is not None:
        originals.update(zip((bytes(x) for x in out[rows]), full))
    return out


def read_run(path: str | os.PathLike, name: str | None = None) -> Run:
    """Read one TREC run file (plain or gzip).

    Parameters
    ----------
    path : file in ``qid Q0 docno rank score tag`` format
    name : run name; default the file name without ``.gz``

    Raises
    ------
    InputError
        unreadable file, fewer than 6 columns, a bad score, a docno twice in one topic.
    """
    path = as_path(path)
    source = _read_bytes(path, mapped=True, stream=True)
    blocks = _RunBlocks(path)
    if isinstance(source, io.IOBase):
        with source:
            texts = _inflated(source, path)
            try:
                for k, text in enumerate(texts):
                    if k == 0:
                        text = _without_bom(text, path, stacklevel=3)
                        if not _all_space(text):
                            _check_head(text, path)
                    blocks.add(text)
            except InputError:
                for _ in texts:     # corrupt data is reported first, as when inflated whole
                    pass
                raise
    else:
        _check_text(source, path, _RunBlocks.what, nul=False)   # the scan finds NUL bytes
        chunks = SCAN_CHUNKS if len(source) >= SPLIT_BYTES and (os.cpu_count() or 1) > 1 else 1
        # a memory map's pages are given back as the scan passes them: the text is not held twice
        blocks.add(source, chunks, isinstance(source, mmap.mmap))
    run = blocks.run()
    if name is not None:
        object.__setattr__(run, "name", name)
    return run


def build_run(name: str, qid: np.ndarray, docno: np.ndarray, score: np.ndarray,
              long_qids: Mapping[bytes, bytes] | None = None) -> Run:
    """A :class:`Run` from parallel arrays (qid, docno: bytes; score: float); InputError
    (line = 1-based row) for a non-finite score or a duplicate (qid, docno). ``long_qids``:
    surrogate -> qid of the long qids (:func:`compact_long`), for printing them."""
    score = np.asarray(score, dtype=np.float64)
    runs = np.array([[0, 1]] if len(score) else [], dtype=np.int64).reshape(-1, 2)   # row i on line i + 1
    bad = ~np.isfinite(score)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"<run {name}>", i + 1, f"score {float(score[i])!r} of run {name!r} is not finite")
    h = hash_strings(docno)
    _check_duplicates(f"<run {name}>", qid, docno, runs, docno_hash=h)
    run = Run(name=name, path=None, qid=qid, docno=docno, score=score, line_runs=runs, tag=name,
              long_qids=long_qids or None)
    object.__setattr__(run, "docno_hash", h)
    return run


def _run_files(path: Path) -> list[Path]:
    if path.is_dir():
        entries = sorted(p for p in path.iterdir() if not p.name.startswith("."))
        for p in entries:
            if p.is_symlink() and not p.exists():
                raise InputError(path, None, f"run folder entry {p.name!r} is a broken link "
                                 f"(to {os.readlink(p)!r})")
        files = [p for p in entries if p.is_file()]
        if not files:
            raise InputError(path, None, "directory holds no run files")
        return files
    return [path]


def read_runs(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Run]:
    """Read runs from files and/or directories (their non-hidden files); names must be unique."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    runs: list[Run] = []
    seen: dict[str, str] = {}
    for p in paths:
        for f in _run_files(as_path(p)):
            run = read_run(f)
            if run.name in seen:
                raise InputError(f, None, f"run name {run.name!r} also read from {seen[run.name]}")
            seen[run.name] = str(f)
            runs.append(run)
    if not runs:
        raise InputError(None, None, "no run files given")
    return runs


def _parse_grades(tokens: np.ndarray, lines: np.ndarray, path) -> np.ndarray:
    """Grades as trec_eval's ``atol``: the leading integer part (``2e3`` -> 2). InputError for
    a non-number (trec_eval reads 0) or a grade above :data:`MAX_GRADE`; lower grades than
    -MAX_GRADE are stored as -MAX_GRADE (the same meaning)."""
    digit = tokens.view(np.uint8) - np.uint8(48) if tokens.dtype.itemsize == 1 else None
    if digit is not None and (digit <= 9).all():
        return digit.astype(np.int64)  # the usual file: every grade one digit (0-9)
    try:
        if (np.ascontiguousarray(tokens).view(np.uint8) == ord("_")).any():
            raise ValueError("'_' in a grade")  # int() reads 1_5 as 15, atol as 1: refused below
        out = tokens.astype(np.int64)  # the common case: plain integers
    except (ValueError, OverflowError):
        out = np.empty(len(tokens), dtype=np.int64)
        for i, t in enumerate(tokens):
            if not _GRADE.match(t):
                raise InputError(path, int(lines[i]),
                                 f"grade {shown(t)!r} is not a number")
            digits = _LEADING_INT.match(t).group()
            v = int(digits) if digits.strip(b"+-") else 0
            out[i] = min(max(v, -MAX_GRADE), MAX_GRADE + 1)  # Python int: no overflow
    _check_range(out, lines, path, lambda i: repr(shown(tokens[i])))
    return np.maximum(out, -MAX_GRADE)


def _check_range(grades: np.ndarray, lines: np.ndarray, path, text) -> None:
    high = grades > MAX_GRADE
    if high.any():
        i = int(np.argmax(high))
        raise InputError(path, int(lines[i]), f"grade {text(i)} is out of range: grades above "
                         f"{MAX_GRADE} are not supported (memory grows with the number of grade levels)")


def read_qrels(path: str | os.PathLike) -> Qrels:
    """Read a qrels file ``qid iter docno grade`` (plain or gzip).

    Raises
    ------
    InputError
        unreadable file, not 4 columns, a non-numeric grade, a docno judged twice in a topic.
    """
    path = as_path(path)
    data = _read_bytes(path)
    _check_text(data, path, "qid iter docno grade")
    table = _table(data, path, 4, exact=True, what="qid iter docno grade", keep=(0, 2, 3))
    lines = table.lines
    grades = _parse_grades(table.strings(3), lines, path)
    long_qids: dict[bytes, bytes] = {}
    qid = table.strings(0, long_qids)
    return build_qrels(path, qid, table.strings(2), grades, lines, long_qids)


def _refuse_alike(topics: list[str], topic_bytes: np.ndarray, lines: np.ndarray, path) -> None:
    """InputError for two distinct qids that print as the same text: one is not UTF-8 (the
    bytes FE 31 print as ``\\xfe1``) and the other is that escape's text. Every table and
    frame is keyed by the printed qid, so they would merge. lines: each topic's first line."""
    first: dict[str, int] = {}
    for i, t in enumerate(topics):
        if t in first:
            (a, qa), (b, qb) = sorted((int(lines[k]), bytes(topic_bytes[k])) for k in (first[t], i))
            raise InputError(path, b, f"qid {qb!r} prints as {t!r}, as the distinct qid {qa!r} at "
                             f"line {a} does (bytes that are not UTF-8 print escaped); rename one of them")
        first[t] = i


def build_qrels(path, qid_a: np.ndarray, docno_a: np.ndarray, grades: np.ndarray, lines: np.ndarray,
                long_qids: Mapping[bytes, bytes] | None = None) -> Qrels:
    """:class:`Qrels` from parallel arrays (qid, docno: bytes; grades: int; lines: for
    messages). InputError for a docno judged twice for a topic. ``long_qids``: surrogate ->
    qid of the long qids (:func:`compact_long`): the topics are named by the whole qid."""
    grades = np.maximum(np.asarray(grades, dtype=np.int64), -MAX_GRADE)
    _check_range(grades, lines, path, lambda i: int(grades[i]))
    codes = topic_codes(qid_a)                 # rank among the distinct qids, in strcmp order
    # by topic, then docno (strcmp order), then line: each topic's few rows sorted in C
    order = np.argsort(codes, kind="stable").astype(np.int64, copy=False)
    code_s = codes[order]
    bounds = np.flatnonzero(np.concatenate(([True], code_s[1:] != code_s[:-1], [True])))
    docno_a = np.ascontiguousarray(docno_a)
    _ctrec.trec_sort(None, False, docno_a, max(docno_a.dtype.itemsize, 1), order, bounds.astype(np.int64))
    qid_s, doc_s, grade_s, line_s = qid_a[order], docno_a[order], grades[order], lines[order]
    dup = (code_s[1:] == code_s[:-1]) & (doc_s[1:] == doc_s[:-1])
    if dup.any():
        i = int(np.argmax(dup)) + 1
        raise InputError(path, int(line_s[i]), f"docno {shown(doc_s[i])!r} judged twice for topic "
                         f"{shown(qid_s[i])} (first at line {int(line_s[i - 1])})")
    topic_bytes = qid_s[bounds[:-1]]
    topics = names(topic_bytes, long_qids)
    # two qids print alike only where one prints an escape (a backslash)
    if "\\" in "".join(topics) and len(set(topics)) < len(topics):
        _refuse_alike(topics, topic_bytes, np.minimum.reduceat(line_s, bounds[:-1]), path)
    index = TopicIndex(topic_bytes)
    qrels = Qrels(None if path is None else str(path), topics, _Slices(topics, index, bounds, doc_s),
                  _Slices(topics, index, bounds, grade_s), int(max(0, grades.max(initial=0))))
    object.__setattr__(qrels, "flat", (topic_bytes, bounds, doc_s, grade_s))   # cached properties
    object.__setattr__(qrels, "topic_index", index)
    return qrels
