"""The numpy twin of the TREC readers' C loops (maxent/_ctrec.c): the oracle that
tests/trec/test_ctrec.py checks the C reader against.

The same steps as the C scan, vectorised in numpy: one pass over the bytes for the token
boundaries, columns gathered through a strided window view, scores by an exact vectorised
decimal fast path (Clinger's) and numpy's correctly rounded bytes -> float64 cast for the
rest. :func:`numpy_reader` swaps it in for ``maxent.trec``'s tokeniser, so ``read_run`` and
``read_qrels`` read a file with it; their results (and errors) must equal the C reader's.
"""
from __future__ import annotations

import contextlib

import numpy as np

import maxent.trec as trec
from maxent.errors import InputError

_U = np.uint64


class _Table(trec._Table):
    """The library's tokenised file (its lines, tokens, ``bounds`` and ``strings``) with the
    column extraction in numpy: ``matrix`` and ``floats``; ``strings`` (long tokens to their
    surrogates) runs over this class's ``matrix``."""

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

    def floats(self, c: int, what: str) -> np.ndarray:
        """Column c parsed as finite float64, the same doubles as ``float(text)``.

        Raises InputError (with the line) for a token that is not a number or not finite.
        """
        mat = self.matrix(c, right=True)
        value, ok = _decimal_fast_path(mat)
        if not ok.all():
            slow = np.flatnonzero(~ok)
            sub = mat[slow]                      # right-aligned: move each token to the left
            W = sub.shape[1]
            lead = W - np.count_nonzero(sub, axis=1)
            cols = np.arange(W)[None, :] + lead[:, None]
            left = np.where(cols < W, np.take_along_axis(sub, np.minimum(cols, W - 1), axis=1), 0)
            # numpy's bytes -> float64 cast parses as float() does (correctly rounded), which
            # is strtod on the whole token except for '_' (float: 1_5 is 15), hexadecimal
            # floats and nan(chars): tokens holding '_', 'x', 'X' or '(' go one by one
            odd = np.isin(left, np.frombuffer(b"_xX(", np.uint8)).any()
            try:
                if not odd:
                    value[slow] = np.ascontiguousarray(left).view(f"S{W}").ravel().astype(np.float64)
                    slow = slow[:0]
            except ValueError:
                pass                             # find the culprit one by one, for its line
            texts = [mat[i].tobytes().lstrip(b"\0") for i in slow]
            for i, t in zip(slow, texts):
                v = trec.strtod_whole(t)
                if v is None:
                    raise InputError(self.path, int(self.lines[i]), f"{what} {trec.shown(t)!r} is not a number")
                value[i] = v
        bad = ~np.isfinite(value)
        if bad.any():
            i = int(np.argmax(bad))
            t = trec.shown(mat[i].tobytes().lstrip(b"\0"))
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


def _fmix(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser (in place on a fresh array)."""
    h ^= h >> _U(33)
    h *= _U(0xFF51AFD7ED558CCD)
    h ^= h >> _U(33)
    h *= _U(0xC4CEB9FE1A85EC53)
    h ^= h >> _U(33)
    return h


def hash_strings(a: np.ndarray) -> np.ndarray:
    """The numpy twin of ``maxent.trec.hash_strings`` (``_ctrec.hash_strings``): FNV-1a over
    the strings' 8-byte words, all-zero (padding) words skipped, then MurmurHash3's finaliser."""
    a = np.ascontiguousarray(a)
    n, W = len(a), a.dtype.itemsize
    W8 = max(8, -(-W // 8) * 8)
    mat = np.zeros((n, W8), dtype=np.uint8)
    mat[:, :W] = a.view(np.uint8).reshape(n, W)
    words = mat.view(np.uint64)
    h = np.full(n, _U(0xCBF29CE484222325), dtype=np.uint64)
    for j in range(words.shape[1]):
        w = words[:, j]
        h = np.where(w != 0, (h ^ w) * _U(0x100000001B3), h)
    return _fmix(h)


def topic_keys(docno_hash: np.ndarray, topic: np.ndarray) -> np.ndarray:
    """The numpy twin of ``maxent.trec.topic_keys`` (``_ctrec.topic_keys``)."""
    with np.errstate(over="ignore"):
        return _fmix(docno_hash ^ ((topic.astype(np.uint64) + _U(1)) * _U(0x9E3779B97F4A7C15)))


def _table(data: bytes, path, ncols: int, exact: bool, what: str,
           keep: tuple[int, ...] | None = None) -> _Table:
    """Tokenise ``data`` (no Python object per token).

    Tokens are separated by C ``isspace`` bytes (tab, newline, vertical tab, form feed,
    carriage return, space); lines end at newlines. Lines that are blank or whose first
    token starts with ``#`` are skipped. A line with fewer than ``ncols`` tokens (or, when
    ``exact``, another number) raises InputError. ``keep``: the columns the caller reads
    (default all); the C scan stores only those, and they must include column 0.
    """
    buf = np.frombuffer(data, dtype=np.uint8)
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
        raise trec._columns_error(path, ln + 1, ncols, int(counts[ln]), exact, what)
    lines = np.flatnonzero(used)
    if len(lines) == 0:
        raise InputError(path, None, f"no {what} lines (only comments or blank lines)")
    return _Table(buf, starts, ends, first[lines], lines + 1, path)



@contextlib.contextmanager
def numpy_reader():
    """``maxent.trec`` reading through this module's numpy tokeniser instead of the C one."""
    saved = trec._table
    trec._table = _table
    try:
        yield
    finally:
        trec._table = saved
