"""Readers for TREC run and qrels files (plain or gzip), following trec_eval's parsing rules.

Runs: ``qid Q0 docno rank score tag`` separated by any whitespace; trailing extra columns
are ignored (as trec_eval's ``get_trec_results.c``); blank lines and lines whose first
character is ``#`` are skipped; the rank column is never used.

Qrels: ``qid iter docno grade``, exactly four columns; ``#`` lines are comments; grades
are read as trec_eval's ``atol`` does (the leading integer part, so ``1.5`` is 1 and
``0.9`` is 0); negative grades are non-relevant and, as in trec_eval (its "in the pool
but unjudged"), count at no grade level: in ranked lists they look like unjudged documents.
Grades above :data:`MAX_GRADE` (255) are refused with an InputError: every grade level gets
a column of counts per ranked list (and a probability per document in graded inference),
so memory would grow with the largest grade rather than with the input; 255 also keeps the
exponential gain 2^g - 1 finite.

A UTF-8 byte-order mark at the start of a file (as some editors write) is read through:
it is not part of the first line's first token.

gzip files are decompressed by :func:`maxent._rawread.inflate_engine` (ISA-L with the
optional ``fast`` extra, else zlib: the same bytes). No Python object is made per line:
token boundaries, the columns gathered into fixed-width byte arrays and the scores come from
the C loops of :mod:`maxent._ctrec`, built at install when a C compiler is there, else from
the same steps vectorised in numpy (one pass over the bytes for the boundaries, an exact
vectorised decimal fast path for the scores), with the same results. Every problem raises
:class:`~maxent.errors.InputError` naming the file, the line and the reason.
"""
from __future__ import annotations

import os
import re
import zlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Iterable

import numpy as np

from maxent._rawread import GZIP_MAGIC, inflate_engine, read_raw
from maxent.errors import InputError

try:
    from maxent import _ctrec  # the per-byte loops in C (maxent/_ctrec.c), when built
except ImportError:            # no C compiler at install: the numpy code below does it all
    _ctrec = None

__all__ = ["Run", "Qrels", "read_run", "read_runs", "read_qrels", "run_from_frame", "build_run", "build_qrels",
           "hash_strings", "topic_keys", "topic_codes", "inflate_engine", "MAX_GRADE"]

MAX_GRADE = 255
"""Largest qrels grade accepted (see the module docstring)."""
_BOM = b"\xef\xbb\xbf"

LONG_TOKEN = 128
"""Docnos (and qids) longer than this many bytes are stored as a fixed-width surrogate:
their first LONG_TOKEN bytes, a 0xFF byte and an 8-byte BLAKE2 digest of the whole token.
Without it, one 100 KB docno would make every docno of the file take 100 KB (numpy bytes
arrays have one width). Equality is kept (up to a 2^-64 digest collision), so is the order
against every other token except between two long tokens whose first 128 bytes are equal
(trec_eval's docno tie-break between two such documents of equal score may then differ).
"""
_SURROGATE_WIDTH = LONG_TOKEN + 9


def _surrogate(token: bytes) -> bytes:
    import hashlib

    return token[:LONG_TOKEN] + b"\xff" + hashlib.blake2b(token, digest_size=8).digest()


def shown(token: bytes) -> str:
    """A docno or qid as text for messages; a surrogate shows its prefix and ``...``."""
    token = bytes(token)
    if len(token) == _SURROGATE_WIDTH and token[LONG_TOKEN] == 0xFF:
        token = token[:LONG_TOKEN] + b"..."
    return token.decode("utf-8", "replace")


def compact_long(tokens: list[bytes]) -> np.ndarray:
    """A bytes (``S``) array of ``tokens`` with every token longer than :data:`LONG_TOKEN`
    replaced by its surrogate (see there), so the width is at most LONG_TOKEN + 9."""
    return np.array([t if len(t) <= LONG_TOKEN else _surrogate(t) for t in tokens], dtype=bytes) \
        if tokens else np.zeros(0, dtype="S1")

_LEADING_INT = re.compile(rb"^[+-]?\d*")
_GRADE = re.compile(rb"^[+-]?\d+(\.\d*)?([eE][+-]?\d+)?$|^[+-]?\.\d+([eE][+-]?\d+)?$")


@dataclass(frozen=True, eq=False)
class Run:
    """One run as read from a file: parallel arrays, one entry per kept line.

    Attributes
    ----------
    name : run name (the file name without ``.gz``)
    tag : the run_id column of the last line (as trec_eval prints it)
    path : source path, or None for a run built in memory
    qid, docno : bytes arrays (numpy ``S`` dtype), compared byte-wise as trec_eval's strcmp
    score : float64 array
    line : 1-based line number of each entry in the source file (for error messages)
    """

    name: str
    path: str | None
    qid: np.ndarray
    docno: np.ndarray
    score: np.ndarray
    line: np.ndarray
    tag: str = ""

    def __len__(self) -> int:
        return len(self.score)

    @property
    def topics(self) -> list[str]:
        return [q.decode("utf-8", "replace") for q in np.unique(self.qid)]

    @cached_property
    def docno_hash(self) -> np.ndarray:
        """64-bit hash of every docno (uint64), computed once (see :func:`hash_strings`)."""
        return hash_strings(self.docno)


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgements: per topic, judged docnos (sorted, bytes) and their grades.

    ``grades`` keep trec_eval's integer levels; negative levels are judged non-relevant and
    are excluded from :attr:`level_counts`.
    """

    path: str | None
    topics: list[str]
    docnos: dict[str, np.ndarray]
    grades: dict[str, np.ndarray]
    max_grade: int = field(default=0)

    def level_counts(self, topic: str, levels: int) -> np.ndarray:
        """Counts of judged documents of grade 0..levels-1 for ``topic`` (zeros if absent)."""
        g = self.grades.get(topic)
        if g is None:
            return np.zeros(levels, dtype=np.int64)
        g = g[g >= 0]
        return np.bincount(g, minlength=levels)[:levels]

    def __contains__(self, topic: str) -> bool:
        return topic in self.docnos

    @cached_property
    def lookup(self):
        """Flat judged documents for vectorised grade lookup, built once.

        Returns ``(index, topic, docno, grade)``: ``topic`` (int, position in
        :attr:`topics`), ``docno`` (bytes) and ``grade`` are flat arrays over every
        judgement; ``index`` is a :class:`_KeyIndex` of their :func:`topic_keys` hashes
        (None if two judgements share a hash, which sends lookups to the exact per-topic
        path).
        """
        sizes = [len(self.docnos[t]) for t in self.topics]
        topic = np.repeat(np.arange(len(self.topics)), sizes)
        docno = np.concatenate([self.docnos[t] for t in self.topics]) if sizes else np.zeros(0, "S1")
        grade = np.concatenate([self.grades[t] for t in self.topics]) if sizes else np.zeros(0, np.int64)
        index = _KeyIndex(topic_keys(hash_strings(docno), topic))
        return (index if index.is_unique else None), topic, docno, grade


class _KeyIndex:
    """Positions of 64-bit keys: a bucketed hash index over the sorted keys (numpy only, so
    reading and ranking never import pandas).

    The keys are well-mixed hashes, so their top ``k`` bits (2n <= 2^k < 4n for n keys)
    spread them evenly over buckets; a key's bucket is the range of the sorted keys sharing
    those bits, found by two array reads, and scanned in a few vectorised passes (the
    largest bucket's size, typically 3 or 4) instead of a binary search per query.
    """

    def __init__(self, keys: np.ndarray):
        self.order = np.argsort(keys, kind="stable")
        self.sorted = keys[self.order]
        self.is_unique = not (self.sorted[1:] == self.sorted[:-1]).any()
        bits = max(4, int(len(keys) * 2).bit_length())       # 2n to 4n buckets
        self._shift = _U(64 - bits)
        self._bucket = np.searchsorted(self.sorted >> self._shift,
                                       np.arange(2 ** bits + 1, dtype=np.uint64))
        if len(keys) < 2**31:                                # 8 to 16 bytes per key
            self._bucket = self._bucket.astype(np.int32)
        self._widest = int(np.diff(self._bucket).max(initial=0))

    def get_indexer(self, query: np.ndarray) -> np.ndarray:
        """Position of each query key in the original keys, -1 where absent."""
        out = np.full(len(query), -1, dtype=np.int64)
        if len(self.sorted) == 0:
            return out
        b = (query >> self._shift).astype(np.intp)
        lo = self._bucket[b]
        size = self._bucket[b + 1] - lo
        pos = np.minimum(lo, len(self.sorted) - 1)
        hit = (self.sorted[pos] == query) & (size > 0)      # the first key of each bucket
        out[hit] = self.order[pos[hit]]
        for j in range(1, self._widest):                     # the j-th: few buckets hold 2+
            rows = np.flatnonzero(size > j)
            pos = lo[rows] + j
            hit = self.sorted[pos] == query[rows]
            out[rows[hit]] = self.order[pos[hit]]
        return out


def _read_bytes(path: Path) -> bytes:
    """The file's bytes (gunzipped; see :mod:`maxent._rawread`), a UTF-8 byte-order mark
    removed; InputError naming the file when it cannot be read."""
    try:
        data = read_raw(path)
    except FileNotFoundError:
        raise InputError(path, None, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, None, "is a directory, expected a file") from None
    except (EOFError, zlib.error, inflate_engine().error) as e:
        raise InputError(path, None, f"corrupt gzip data ({e})") from None
    except OSError as e:
        if _is_gzip(path):                 # an engine may report a bad header as OSError
            raise InputError(path, None, f"corrupt gzip data ({e})") from None
        raise InputError(path, None, f"cannot read: {e.strerror or e}") from None
    if data.startswith(_BOM):  # UTF-8 byte-order mark: read through it, never into a token
        data = data[len(_BOM):]
    return data


def _is_gzip(path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(2) == GZIP_MAGIC
    except OSError:
        return False


class _Table:
    """A tokenised file: token boundaries of every kept line, and column extraction.

    ``first[i]`` is the index of the first token of the i-th kept line, whose 1-based line
    number is ``lines[i]``; column c of that line is token ``first[i] + c``, or, when only
    some columns were kept (``columns``: column -> its place among them), token
    ``first[i] + columns[c]``.
    """

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

    def _windows(self, offsets: np.ndarray, W: int) -> np.ndarray:
        """The W bytes from each offset, (n, W) uint8 (zeros beyond the end of the file)."""
        buf = self.buf
        n_win = len(buf) - W + 1
        if n_win <= 0:
            buf = np.concatenate((buf, np.zeros(W, dtype=np.uint8)))
            n_win = len(buf) - W + 1
        # element i of this bytes view is buf[i:i+W] (strides smaller than the itemsize)
        windows = np.ndarray((n_win,), dtype=f"S{W}", buffer=buf, strides=(1,))
        late = offsets >= n_win
        mat = windows[np.minimum(offsets, n_win - 1)].view(np.uint8).reshape(len(offsets), W)
        for i in np.flatnonzero(late):  # at most W tokens at the very end of the file
            tail = buf[offsets[i]: offsets[i] + W]
            mat[i] = 0
            mat[i, : len(tail)] = tail
        return mat

    def bounds(self, c: int) -> tuple[np.ndarray, np.ndarray]:
        """Start and end offsets of column c's tokens."""
        tok = self._tokens(c)
        return self.starts[tok], self.ends[tok]

    def matrix(self, c: int, right: bool = False, bounds=None) -> np.ndarray:
        """Column c as an (n, W) uint8 matrix (W = its longest token), zero-padded on the
        right (or, with ``right``, on the left, so the tokens' last bytes line up).
        ``bounds``: the column's :meth:`bounds`, when the caller has them."""
        a, e = self.bounds(c) if bounds is None else bounds
        length = e - a
        W = max(1, int(length.max(initial=1)))
        if right:
            shift = np.maximum(e - W, 0)
            mat = self._windows(shift, W)
            lead = W - length  # bytes before the token to clear (and the file start)
            first_col = e - W
            if (first_col < 0).any():  # a token near the start of the file: realign
                for i in np.flatnonzero(first_col < 0):
                    mat[i] = 0
                    mat[i, W - length[i]:] = self.buf[a[i]: e[i]]
        elif _ctrec is not None:
            return np.frombuffer(_ctrec.gather(self.buf, a, e, W), np.uint8).reshape(len(a), W)
        else:
            mat = self._windows(a, W)
            lead = None
        is_short = length < W
        n_short = np.count_nonzero(is_short)
        if n_short:
            cols = np.arange(W)[None, :]
            keep = (cols >= lead[:, None]) if right else (cols < length[:, None])
            if n_short > len(a) // 8:
                mat *= keep
            else:
                short = np.flatnonzero(is_short)
                mat[short] *= keep[short]
        return mat

    def strings(self, c: int) -> np.ndarray:
        """Column c as a numpy bytes (``S``) array, compared byte-wise as C's strcmp.

        Tokens longer than :data:`LONG_TOKEN` bytes are stored as their surrogate
        (:func:`compact_long`), so the array's width, and memory, stay bounded whatever one
        line holds.
        """
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
        out[long] = [_surrogate(self.buf[s: t].tobytes()) for s, t in zip(a[long], e[long])]
        return out

    def floats(self, c: int, what: str) -> np.ndarray:
        """Column c parsed as finite float64, the same doubles as ``float(text)``.

        Raises InputError (with the line) for a token that is not a number or not finite.
        """
        if _ctrec is not None:
            value, ok = _ctrec.parse_floats(self.buf, *self.bounds(c))
            value = np.frombuffer(value, np.float64)
            if np.frombuffer(ok, np.bool_).all() and np.isfinite(value).all():
                return value
            # a token that is not wholly a number, or not finite: the numpy code below
            # finds the first such line and names it (and reads what float() reads)
        mat = self.matrix(c, right=True)
        value, ok = _decimal_fast_path(mat)
        if not ok.all():
            slow = np.flatnonzero(~ok)
            sub = mat[slow]                      # right-aligned: move each token to the left
            W = sub.shape[1]
            lead = W - np.count_nonzero(sub, axis=1)
            cols = np.arange(W)[None, :] + lead[:, None]
            left = np.where(cols < W, np.take_along_axis(sub, np.minimum(cols, W - 1), axis=1), 0)
            try:  # numpy's bytes -> float64 cast parses as float() does (correctly rounded)
                value[slow] = np.ascontiguousarray(left).view(f"S{W}").ravel().astype(np.float64)
                slow = slow[:0]
            except ValueError:
                pass                             # find the culprit one by one, for its line
            texts = [mat[i].tobytes().lstrip(b"\0") for i in slow]
            for i, t in zip(slow, texts):
                try:
                    value[i] = float(t)
                except ValueError:
                    raise InputError(
                        self.path, int(self.lines[i]),
                        f"{what} {t.decode('utf-8', 'replace')!r} is not a number",
                    ) from None
        bad = ~np.isfinite(value)
        if bad.any():
            i = int(np.argmax(bad))
            t = mat[i].tobytes().lstrip(b"\0").decode("utf-8", "replace")
            raise InputError(self.path, int(self.lines[i]), f"{what} {t!r} is not finite")
        return value


_EXTENDED = np.finfo(np.longdouble).nmant >= 63       # x87 80-bit long double (x86 Linux)
_POW10 = 10.0 ** np.arange(20)                        # exact doubles
_POW10_LD = np.array([np.longdouble(np.uint64(5 ** k)) * np.longdouble(2) ** k for k in range(28)],
                     dtype=np.longdouble)                # 10^k, exact for k <= 27


def _decimal_fast_path(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parse plain decimals ``[+-]digits[.digits]`` of at most 20 bytes and 19 digits,
    vectorised (digits read as one integer below 2^53 always; up to 10^19 where the
    platform's long double has a 64-bit mantissa).

    ``mat`` is an (n, W) byte matrix of whitespace-free tokens, right-aligned (zero bytes
    on the left). Removing the dot (the bytes before it move right by one) leaves the
    digits of the mantissa m at their place values; m is read by Horner's rule over the
    byte positions (in uint64) and the value is m / 10^f, f = digits after the dot. For
    m < 2^53, m and 10^f (f <= 19) are exact doubles, so the single division is the correctly rounded decimal:
    the same double as ``float(text)`` or C's strtod (Clinger's fast path). Works on the transpose (W, n) so that reductions run over
    contiguous rows. Returns the values and a mask of the rows parsed; the caller parses
    the others (exponents, nan, inf, long tokens, garbage) one by one.
    """
    n, W = mat.shape
    too_long = None
    if W > 20:  # only the last 20 bytes take the fast path
        too_long = (mat[:, : W - 20] != 0).any(axis=1)
        mat, W = mat[:, W - 20:], 20
    u8 = np.uint8
    m = np.ascontiguousarray(mat.T)                   # (W, n); row j is at distance W-1-j
    rows = np.arange(W, dtype=u8)[:, None]
    digits = m - u8(48)                               # digits -> 0..9; other bytes >= 10
    is_dig = digits < 10
    is_dot = m == 46
    # per-token counts as uint8 sums over the W <= 20 rows (no int64 temporaries)
    n_pad = (m == 0).view(u8).sum(axis=0, dtype=u8)   # = row of each token's first byte
    n_dig = is_dig.view(u8).sum(axis=0, dtype=u8)
    n_dot = is_dot.view(u8).sum(axis=0, dtype=u8)
    lead = m.ravel()[np.minimum(n_pad, W - 1).astype(np.intp) * n + np.arange(n)]
    neg = lead == 45
    signed = neg | (lead == 43)
    # digits, dot and padding are disjoint: one byte left over is allowed, a leading sign
    ok = (n_dig + n_dot + n_pad + signed == W) & (n_dot <= 1) & (n_dig >= 1)
    if too_long is not None:
        ok &= ~too_long
    has_dot = n_dot > 0
    dot_row = (is_dot.view(u8) * rows).sum(axis=0, dtype=u8)  # row of the dot (0 if none)
    f = np.where(has_dot, W - 1 - dot_row.astype(np.intp), 0)  # digits after the dot
    np.clip(f, 0, W - 1, out=f)                        # (several dots: token not ok)
    digits *= is_dig                                   # sign, dot, padding -> 0
    # drop the dot: the bytes above it move down one row, so every digit sits at its weight
    above = (rows <= dot_row) & has_dot                # (W, n)
    shifted = np.empty_like(digits)
    shifted[0] = 0
    shifted[1:] = digits[:-1]
    shifted -= digits                                  # uint8 arithmetic modulo 256:
    shifted *= above                                   # digits + (shifted - digits) * above
    digits += shifted
    ok &= n_dig <= 19                                  # m < 10^19 < 2^64: exact in uint64
    mant = np.zeros(n, dtype=np.uint64)
    for j in range(W):                                 # Horner over the W byte rows
        mant *= _U(10)
        mant += digits[j]
    small = mant < _U(2 ** 53)
    value = mant.astype(np.float64) / _POW10[f]        # exact operands: correctly rounded
    if _EXTENDED and not small.all():
        big = np.flatnonzero(ok & ~small)
        # 16-19 digits: m and 10^f are exact in x87 extended precision (64-bit mantissa),
        # so m / 10^f is correctly rounded there; rounding that to double is the correctly
        # rounded double unless the extended result lies exactly half-way between two
        # doubles (double rounding), which is detected and left to the exact slow path.
        x = mant[big].astype(np.longdouble) / _POW10_LD[f[big]]
        frac, _ = np.frexp(x)
        low = (frac * np.longdouble(2) ** 64).astype(np.uint64) & _U(0x7FF)
        value[big] = x.astype(np.float64)
        ok[big[low == _U(0x400)]] = False
    else:
        ok &= small
    return np.where(neg, -value, value), ok


def _table(data: bytes, path, ncols: int, exact: bool, what: str,
           keep: tuple[int, ...] | None = None) -> _Table:
    """Tokenise ``data`` (no Python object per token).

    Tokens are separated by C ``isspace`` bytes (tab, newline, vertical tab, form feed,
    carriage return, space); lines end at newlines. Lines that are blank or whose first
    token starts with ``#`` are skipped. A line with fewer than ``ncols`` tokens (or, when
    ``exact``, another number) raises InputError. ``keep``: the columns the caller reads
    (default all); the C scan stores only those, and they must include column 0.
    """
    if not data or data.isspace():
        raise InputError(path, None, f"empty file: no {what} lines")
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise InputError(path, line, "binary data (NUL byte): not a text file")
    buf = np.frombuffer(data, dtype=np.uint8)
    if _ctrec is not None:  # the same scan in C, storing the kept columns only
        keep = tuple(range(ncols)) if keep is None else tuple(keep)
        wide = len(data) > 2**31 - 1                     # int64 offsets, else int32
        got = _ctrec.tokenize(data, ncols, exact, keep, wide)
        if got[0] is None:
            raise InputError(path, got[1], f"expected {ncols} columns ({what}), found {got[2]}")
        starts, ends, lines = (np.frombuffer(b, dtype=np.int64 if wide else np.int32) for b in got)
        if len(lines) == 0:
            raise InputError(path, None, f"no {what} lines (only comments or blank lines)")
        return _Table(buf, starts, ends, np.arange(0, len(starts), len(keep)), lines, path,
                      columns={c: i for i, c in enumerate(keep)})
    outside = np.empty(len(buf) + 1, dtype=bool)      # outside a token, before each byte
    outside[0] = True
    np.less(buf - np.uint8(9), 5, out=outside[1:])      # \t \n \v \f \r (uint8 wrap-around)
    outside[1:] |= buf == 32                            # and space: C isspace()
    edges = np.flatnonzero(outside[1:] != outside[:-1])  # token start, end, start, end, ...
    starts = edges[0::2]
    ends = edges[1::2] if len(edges) % 2 == 0 else np.append(edges[1::2], len(buf))
    n_newlines = np.count_nonzero(buf == 10)           # (SIMD: faster than bytes.count)
    in_file = ends if ends[-1] < len(buf) else ends[:-1]  # the last token may end the file
    at_newline = np.flatnonzero(buf[in_file] == 10)
    if len(at_newline) == n_newlines:
        # every newline ends a token (no blank line, no blank before a newline): the lines
        # are the runs of tokens up to each of those ends
        cum = at_newline + 1
    else:
        newlines = np.flatnonzero(buf == 10)
        cum = np.searchsorted(starts, newlines)
    if not data.endswith(b"\n"):
        cum = np.append(cum, len(starts))
    counts = np.diff(cum, prepend=0)
    first = cum - counts
    used = counts > 0
    if b"#" in data:
        hash_first = np.zeros(len(counts), dtype=bool)
        hash_first[used] = buf[starts[first[used]]] == ord("#")
        used &= ~hash_first
    bad = used & ((counts != ncols) if exact else (counts < ncols))
    if bad.any():
        ln = int(np.argmax(bad))
        raise InputError(path, ln + 1, f"expected {ncols} columns ({what}), found {counts[ln]}")
    lines = np.flatnonzero(used)
    if len(lines) == 0:
        raise InputError(path, None, f"no {what} lines (only comments or blank lines)")
    return _Table(buf, starts, ends, first[lines], lines + 1, path)


_U = np.uint64
_FNV_OFFSET, _FNV_PRIME = _U(0xCBF29CE484222325), _U(0x100000001B3)
_GOLDEN = _U(0x9E3779B97F4A7C15)


def _fmix(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser (in place on a fresh array)."""
    h ^= h >> _U(33)
    h *= _U(0xFF51AFD7ED558CCD)
    h ^= h >> _U(33)
    h *= _U(0xC4CEB9FE1A85EC53)
    h ^= h >> _U(33)
    return h


def hash_strings(a: np.ndarray) -> np.ndarray:
    """64-bit hash of every string of a bytes (``S``) array, independent of the array's width.

    Used only to find candidate matches fast; every match is then confirmed by comparing
    the strings themselves, so a collision can never change a result.
    """
    a = np.ascontiguousarray(a)
    n, W = len(a), a.dtype.itemsize
    W8 = max(8, -(-W // 8) * 8)
    if W == W8 and n:
        words = a.view(np.uint64).reshape(n, W8 // 8)  # whole words already: no copy
    else:
        mat = np.zeros((n, W8), dtype=np.uint8)
        mat[:, :W] = a.view(np.uint8).reshape(n, W)
        words = mat.view(np.uint64)
    h = np.full(n, _FNV_OFFSET, dtype=np.uint64)
    for j in range(words.shape[1]):  # loop over 8-byte words of the strings, not over strings
        w = words[:, j]
        # all-zero words are padding (strings hold no NUL byte): skip them, so the hash
        # does not depend on the array's width
        h = np.where(w != 0, (h ^ w) * _FNV_PRIME, h)
    return _fmix(h)


def topic_keys(docno_hash: np.ndarray, topic: np.ndarray) -> np.ndarray:
    """Combine docno hashes with integer topic codes into one 64-bit key per document."""
    return _fmix(docno_hash ^ ((topic.astype(np.uint64) + _U(1)) * _GOLDEN))


def topic_codes(qid: np.ndarray, index: dict[bytes, int] | None = None) -> np.ndarray:
    """Integer code of each qid: ``index[qid]`` (-1 when absent), or with ``index=None`` the
    qid's rank among the distinct qids.

    Runs list a topic's documents together, so the distinct values are found among the
    first qids of blocks of equal consecutive qids; a heavily interleaved file goes
    through ``np.unique`` on every qid.
    """
    n = len(qid)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.concatenate(([0], np.flatnonzero(qid[1:] != qid[:-1]) + 1))
    few = len(starts) <= 4096
    uniq, inverse = np.unique(qid[starts] if few else qid, return_inverse=True)
    if index is None:
        codes = np.arange(len(uniq), dtype=np.int64)
    else:
        codes = np.array([index.get(bytes(q), -1) for q in uniq], dtype=np.int64)
    codes = codes[inverse.ravel()]
    return np.repeat(codes, np.diff(np.append(starts, n))) if few else codes


def _run_name(path: Path) -> str:
    name = path.name
    for suffix in (".gz",):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def _check_duplicates(run_path, qid: np.ndarray, docno: np.ndarray, lines: np.ndarray,
                      docno_hash: np.ndarray | None = None) -> np.ndarray:
    """Raise InputError at the first line repeating a (qid, docno) pair; return the hashes.

    Candidates are found by sorting 64-bit keys; any candidate is confirmed on the strings.
    """
    if docno_hash is None:
        docno_hash = hash_strings(docno)
    codes = topic_codes(qid)
    keys = np.sort(topic_keys(docno_hash, codes))
    if len(keys) > 1 and (keys[1:] == keys[:-1]).any():
        order = np.lexsort((lines, docno, codes))
        d, c = docno[order], codes[order]
        dup = np.concatenate(([False], (c[1:] == c[:-1]) & (d[1:] == d[:-1])))
        if dup.any():
            group_first = np.maximum.accumulate(np.where(dup, 0, np.arange(len(dup))))
            cand = np.flatnonzero(dup)
            i = cand[np.argmin(lines[order[cand]])]
            raise InputError(
                run_path,
                int(lines[order[i]]),
                f"duplicate docno {shown(d[i])!r} in topic "
                f"{qid[order[i]].decode('utf-8', 'replace')} "
                f"(first at line {int(lines[order[group_first[i]]])})",
            )
    return docno_hash


def read_run(path: str | os.PathLike, name: str | None = None) -> Run:
    """Read one TREC run file (plain or gzip).

    Parameters
    ----------
    path : file in ``qid Q0 docno rank score tag`` format; extra trailing columns ignored.
    name : run name; default the file name without ``.gz``.

    Raises
    ------
    InputError
        missing/empty/binary file, a line with fewer than 6 columns, a non-numeric, NaN or
        infinite score, a docno twice in one topic.
    """
    path = Path(path)
    data = _read_bytes(path)
    table = _table(data, path, 6, exact=False, what="qid Q0 docno rank score tag", keep=(0, 2, 4))
    qid = table.strings(0)
    docno = table.strings(2)
    score = table.floats(4, "score")
    lines = table.lines.astype(np.int64)
    h = _check_duplicates(path, qid, docno, lines)
    run = Run(
        name=name or _run_name(path),
        path=str(path),
        qid=qid,
        docno=docno,
        score=score,
        line=lines,
        tag=table.last_line_token(5).decode("utf-8", "replace"),  # trec_eval: the last line's run_id
    )
    object.__setattr__(run, "docno_hash", h)  # fill the cached property
    return run


def run_from_frame(frame, name: str = "run") -> Run:
    """Build a :class:`Run` from an in-memory table: a pandas frame with PyTerrier's
    (``qid, docno, score``) or ir_datasets' (``query_id, doc_id, score``) columns, or a
    mapping ``{qid: {docno: score}}`` (pytrec_eval's form); see :func:`maxent.inputs.as_run`.
    Raises InputError (line = 1-based row) for an empty run, a non-finite score or a
    duplicate (qid, docno).
    """
    from maxent.inputs import as_run

    return as_run(frame, name=name)


def build_run(name: str, qid: np.ndarray, docno: np.ndarray, score: np.ndarray) -> Run:
    """A :class:`Run` built in memory from parallel arrays (qid, docno: bytes; score: float).

    Raises InputError (line = 1-based row) for a non-finite score or a duplicate (qid, docno).
    """
    score = np.asarray(score, dtype=np.float64)
    lines = np.arange(1, len(score) + 1)
    bad = ~np.isfinite(score)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"<run {name}>", i + 1, f"score {float(score[i])!r} of run {name!r} is not finite")
    h = _check_duplicates(f"<run {name}>", qid, docno, lines)
    run = Run(name=name, path=None, qid=qid, docno=docno, score=score, line=lines, tag=name)
    object.__setattr__(run, "docno_hash", h)
    return run


def _run_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        if not files:
            raise InputError(path, None, "directory holds no run files")
        return files
    return [path]


def read_runs(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Run]:
    """Read runs from files and/or directories (every non-hidden file of a directory).

    Run names must be unique; a name seen twice raises InputError.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    runs: list[Run] = []
    seen: dict[str, str] = {}
    for p in paths:
        for f in _run_files(Path(p)):
            run = read_run(f)
            if run.name in seen:
                raise InputError(f, None, f"run name {run.name!r} also read from {seen[run.name]}")
            seen[run.name] = str(f)
            runs.append(run)
    if not runs:
        raise InputError(None, None, "no run files given")
    return runs


def _parse_grades(tokens: np.ndarray, lines: np.ndarray, path) -> np.ndarray:
    """Grades as trec_eval 10 reads them with ``atol``: the leading integer part
    (``1.5`` -> 1, ``0.9`` -> 0, ``-0.5`` -> 0, ``2e3`` -> 2). A token that is not a number
    at all raises InputError (trec_eval would silently read it as 0); so does a grade above
    :data:`MAX_GRADE`. Negative grades (non-relevant) are kept down to -MAX_GRADE; lower ones
    are stored as -MAX_GRADE, which means the same."""
    try:
        out = tokens.astype(np.int64)  # the common case: plain integers
    except (ValueError, OverflowError):
        out = np.empty(len(tokens), dtype=np.int64)
        for i, t in enumerate(tokens):
            if not _GRADE.match(t):
                raise InputError(
                    path, int(lines[i]), f"grade {t.decode('utf-8', 'replace')!r} is not a number"
                )
            digits = _LEADING_INT.match(t).group()
            v = int(digits) if digits.strip(b"+-") else 0
            out[i] = min(max(v, -MAX_GRADE), MAX_GRADE + 1)  # Python int: no overflow
    high = out > MAX_GRADE
    if high.any():
        i = int(np.argmax(high))
        raise InputError(
            path, int(lines[i]),
            f"grade {tokens[i].decode('utf-8', 'replace')!r} is out of range: grades above "
            f"{MAX_GRADE} are not supported (memory grows with the number of grade levels)",
        )
    return np.maximum(out, -MAX_GRADE)


def read_qrels(path: str | os.PathLike) -> Qrels:
    """Read a qrels file ``qid iter docno grade`` (plain or gzip).

    Raises
    ------
    InputError
        missing/empty/binary file, a line without exactly 4 columns, a non-numeric grade, or
        a docno judged twice for one topic.
    """
    path = Path(path)
    data = _read_bytes(path)
    table = _table(data, path, 4, exact=True, what="qid iter docno grade", keep=(0, 2, 3))
    lines = table.lines
    grades = _parse_grades(table.strings(3), lines, path)
    return build_qrels(path, table.strings(0), table.strings(2), grades, lines)


def build_qrels(path, qid_a: np.ndarray, docno_a: np.ndarray, grades: np.ndarray, lines: np.ndarray) -> Qrels:
    """:class:`Qrels` from parallel arrays (qid, docno: bytes; grades: int; lines: 1-based line
    or row of each judgement, for messages). InputError for a docno judged twice for a topic."""
    grades = np.maximum(np.asarray(grades, dtype=np.int64), -MAX_GRADE)
    high = grades > MAX_GRADE
    if high.any():
        i = int(np.argmax(high))
        raise InputError(path, int(lines[i]), f"grade {int(grades[i])} is out of range: grades above "
                         f"{MAX_GRADE} are not supported (memory grows with the number of grade levels)")
    order = np.lexsort((lines, docno_a, qid_a))
    qid_s, doc_s, grade_s, line_s = qid_a[order], docno_a[order], grades[order], lines[order]
    dup = (qid_s[1:] == qid_s[:-1]) & (doc_s[1:] == doc_s[:-1])
    if dup.any():
        i = int(np.argmax(dup)) + 1
        raise InputError(
            path,
            int(line_s[i]),
            f"docno {shown(doc_s[i])!r} judged twice for topic "
            f"{qid_s[i].decode('utf-8', 'replace')} (first at line {int(line_s[i - 1])})",
        )
    bounds = np.flatnonzero(np.concatenate(([True], qid_s[1:] != qid_s[:-1], [True])))
    topics, docnos, grade_map = [], {}, {}
    for a, b in zip(bounds[:-1], bounds[1:]):
        t = qid_s[a].decode("utf-8", "replace")
        topics.append(t)
        docnos[t] = doc_s[a:b]
        grade_map[t] = grade_s[a:b]
    return Qrels(
        path=None if path is None else str(path),
        topics=topics,
        docnos=docnos,
        grades=grade_map,
        max_grade=int(max(0, grades.max(initial=0))),
    )
