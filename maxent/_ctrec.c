/* maxent._ctrec: the TREC readers' per-byte work in C, the one reader maxent/trec.py uses
 * (built at install; tests/_trec_numpy.py holds the same steps in numpy as its test oracle).
 *
 * Loops, each one pass over its input, holding no Python object per token:
 *   tokenize     the bounds of the wanted columns' tokens on every kept line
 *   parse_floats a column's tokens as doubles, the same as float(token)
 *   gather       a column's tokens as an (n, width) zero-padded byte matrix (a numpy "S" array)
 *   hash_strings a 64-bit hash of each string of a numpy "S" array
 *   topic_keys   those hashes combined with topic codes, one key per (topic, docno)
 *   key_table, key_probe  a hash table of 64-bit keys (the qrels' judgements) and its lookups
 *   read_run     a run's columns in one pass over its bytes (two threads for large runs)
 *   has_repeat   a docno twice in one topic's rows
 *   trec_sort    each topic's rows in trec_eval's order, sorted only when they are not already
 *   block_items, grade_lookup  the rows of topics in order, and their qrels grades
 * Inputs and outputs are plain buffers (bytes, bytearray, numpy arrays through the buffer
 * protocol), so only Python.h is needed: no numpy headers at build time.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>  /* x86-64 baseline: 16 bytes compared at once */
#endif

/* C isspace() in the "C" locale: tab, newline, vertical tab, form feed, carriage return, space */
static inline int is_space(unsigned char c) { return c == 32 || (unsigned char)(c - 9) < 5; }

/* A C-contiguous buffer of int32 or int64 items (token offsets), as numpy arrays export */
static int index_buffer(PyObject *obj, Py_buffer *view, const char *what)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@')
        f++;
    if ((view->itemsize != 4 && view->itemsize != 8) || !*f || !strchr("ilq", *f) || f[1]) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_ValueError, "%s: expected int32 or int64 items", what);
        return -1;
    }
    return 0;
}

/* Bit j of *ws: byte p[j] is whitespace (C isspace); of *nl: p[j] is '\n'; of *zero (when
 * given): p[j] is a NUL byte. Bytes past avail (a short last block) count as spaces: the file's
 * last token then ends at its length. */
static inline void block_masks(const unsigned char *p, Py_ssize_t avail, uint64_t *ws, uint64_t *nl,
                               uint64_t *zero)
{
    unsigned char tail[64];
    if (avail < 64) {
        memcpy(tail, p, avail);
        memset(tail + avail, ' ', 64 - avail);
        p = tail;
    }
#if defined(__SSE2__)
    uint64_t w = 0, n = 0, z = 0;
    const __m128i nine = _mm_set1_epi8(9), four = _mm_set1_epi8(4);
    const __m128i space = _mm_set1_epi8(' '), newline = _mm_set1_epi8('\n'), nul = _mm_setzero_si128();
    for (int k = 0; k < 4; k++) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * k));
        const __m128i d = _mm_sub_epi8(v, nine);                         /* 9..13 -> 0..4 */
        const __m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(d, four), d);    /* unsigned d <= 4 */
        const __m128i sp = _mm_or_si128(ctl, _mm_cmpeq_epi8(v, space));
        w |= (uint64_t)(uint16_t)_mm_movemask_epi8(sp) << (16 * k);
        n |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, newline)) << (16 * k);
        if (zero)
            z |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nul)) << (16 * k);
    }
#else
    uint64_t w = 0, n = 0, z = 0;
    for (int j = 0; j < 64; j++) {
        w |= (uint64_t)is_space(p[j]) << j;
        n |= (uint64_t)(p[j] == '\n') << j;
        z |= (uint64_t)(p[j] == 0) << j;
    }
#endif
    *ws = w;
    *nl = n;
    if (zero)
        *zero = z;
}

/* One event of a block's masks (bit j): a token's start or end is recorded among the line's
 * first ncols tokens (s, e, at byte offset at) and counted; returns 1 when the event ends a
 * line. Both readers' scans go through it, so they split tokens alike. */
static inline int scan_event(uint64_t start, uint64_t end, uint64_t nl, int j, int64_t at, int ncols,
                             int64_t *s, int64_t *e, int64_t *count)
{
    const uint64_t bit = (uint64_t)1 << j;
    if (start & bit) {
        if (*count < ncols)
            s[*count] = at;
        return 0;
    }
    if (end & bit) {
        if (*count < ncols)
            e[*count] = at;
        (*count)++;
    }
    return (nl & bit) != 0;
}

/* After the last block: a scan that ends inside a token (prev_ws 0: whole blocks, the last
 * byte not a space) ends that token at offset at. */
static inline void scan_end(uint64_t prev_ws, int64_t at, int ncols, int64_t *e, int64_t *count)
{
    if (prev_ws)
        return;
    if (*count < ncols)
        e[*count] = at;
    (*count)++;
}

/* The kept lines of tokenize: their kept tokens' bounds and their line numbers, in bytearrays of
 * int32 (files under 2 GiB: half the memory to write) or int64 items, grown by doubling. */
typedef struct {
    PyObject *starts, *ends, *lines;
    Py_ssize_t n, cap, nkeep;
    int wide;
} Lines;

static int lines_reserve(Lines *o, Py_ssize_t cap)
{
    const Py_ssize_t isz = o->wide ? 8 : 4;
    if (PyByteArray_Resize(o->starts, cap * o->nkeep * isz) < 0
        || PyByteArray_Resize(o->ends, cap * o->nkeep * isz) < 0 || PyByteArray_Resize(o->lines, cap * isz) < 0)
        return -1;
    o->cap = cap;
    return 0;
}

static inline void put(PyObject *array, Py_ssize_t i, int64_t v, int wide)
{
    if (wide)
        ((int64_t *)PyByteArray_AS_STRING(array))[i] = v;
    else
        ((int32_t *)PyByteArray_AS_STRING(array))[i] = (int32_t)v;
}

static int lines_append(Lines *o, const int64_t *s, const int64_t *e, const int *keep, int64_t lineno)
{
    if (o->n == o->cap && lines_reserve(o, 2 * o->cap) < 0)
        return -1;
    for (Py_ssize_t k = 0; k < o->nkeep; k++) {
        put(o->starts, o->n * o->nkeep + k, s[keep[k]], o->wide);
        put(o->ends, o->n * o->nkeep + k, e[keep[k]], o->wide);
    }
    put(o->lines, o->n++, lineno, o->wide);
    return 0;
}

PyDoc_STRVAR(tokenize_doc,
"tokenize(data, ncols, exact, keep, wide=len(data) >= 2**31) -> (starts, ends, lines) or (None, line, count)\n\n"
"Lines end at b'\\n'; tokens are separated by C isspace bytes. Blank lines and lines whose\n"
"first token starts with '#' are skipped. For every other line: the start and end offsets of\n"
"its tokens in the columns keep[0], keep[1], ... (0-based, < ncols), len(keep) per line, and\n"
"its 1-based line number, as bytearrays of int64 items when wide, else int32.\n"
"A line with fewer than ncols tokens (or, when exact, another number) stops the scan:\n"
"(None, its line number, its number of tokens).");

static PyObject *tokenize(PyObject *self, PyObject *args)
{
    Py_buffer data;
    Py_ssize_t ncols;
    int exact;
    PyObject *keep_o;
    int keep[64], wide = -1;
    if (!PyArg_ParseTuple(args, "y*npO!|p:tokenize", &data, &ncols, &exact, &PyTuple_Type, &keep_o, &wide))
        return NULL;
    const Py_ssize_t nkeep = PyTuple_GET_SIZE(keep_o);
    if (ncols < 1 || ncols > 64 || nkeep < 1 || nkeep > ncols) {
        PyBuffer_Release(&data);
        PyErr_SetString(PyExc_ValueError, "ncols must be in 1..64, keep a tuple of 1 to ncols columns");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < nkeep; k++) {
        const long c = PyLong_AsLong(PyTuple_GET_ITEM(keep_o, k));
        if (c < 0 || c >= ncols) {
            PyBuffer_Release(&data);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "keep: a column outside 0..ncols-1");
            return NULL;
        }
        keep[k] = (int)c;
    }
    const unsigned char *p = data.buf;
    const Py_ssize_t len = data.len;
    Lines o = {PyByteArray_FromStringAndSize(NULL, 0), PyByteArray_FromStringAndSize(NULL, 0),
               PyByteArray_FromStringAndSize(NULL, 0), 0, 0, nkeep, wide == -1 ? len > INT32_MAX : wide};
    if (!o.wide && len > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "data of 2 GiB or more needs int64 offsets (wide=True)");
        goto fail;
    }
    if (!o.starts || !o.ends || !o.lines || lines_reserve(&o, len / 32 + 16) < 0)
        goto fail;
    int64_t s[64], e[64];  /* the current line's first ncols tokens */
    Py_ssize_t lineno = 1, bad_line = 0, bad_count = 0;
    int64_t count = 0;
    uint64_t prev_ws = 1;  /* the file starts after whitespace */
    /* Each 64-byte block gives bit masks of token starts (a non-space after a space), token
     * ends (a space after a non-space) and newlines; the loop visits only those bytes, in order.
     * A last line without a newline ends at the file's end (its last token ends there: the
     * bytes past the end count as spaces, or, when the file is whole blocks, after the loop),
     * handled after the loop. */
    for (Py_ssize_t base = 0; base < len && !bad_line; base += 64) {
        uint64_t ws, nl;
        block_masks(p + base, len - base, &ws, &nl, NULL);
        const uint64_t after_ws = (ws << 1) | prev_ws;
        prev_ws = ws >> 63;
        const uint64_t start = ~ws & after_ws, end = ws & ~after_ws;
        for (uint64_t ev = start | end | nl; ev; ev &= ev - 1) {
            const int j = __builtin_ctzll(ev);
            if (!scan_event(start, end, nl, j, base + j, ncols, s, e, &count))
                continue;
            if (count > 0 && p[s[0]] != '#') {  /* the end of a line to keep */
                if (exact ? count != ncols : count < ncols) {
                    bad_line = lineno;
                    bad_count = count;
                    break;
                }
                if (lines_append(&o, s, e, keep, lineno) < 0)
                    goto fail;
            }
            lineno++;
            count = 0;
        }
    }
    if (!bad_line)  /* a file of whole blocks ending in a token: it ends there */
        scan_end(prev_ws, len, ncols, e, &count);
    if (!bad_line && count > 0 && p[s[0]] != '#') {  /* a last line without a newline */
        if (exact ? count != ncols : count < ncols) {
            bad_line = lineno;
            bad_count = count;
        }
        else if (lines_append(&o, s, e, keep, lineno) < 0)
            goto fail;
    }
    PyBuffer_Release(&data);
    if (bad_line) {
        Py_DECREF(o.starts);
        Py_DECREF(o.ends);
        Py_DECREF(o.lines);
        return Py_BuildValue("(Onn)", Py_None, bad_line, bad_count);
    }
    if (lines_reserve(&o, o.n) < 0)
        goto fail_released;
    return Py_BuildValue("(NNN)", o.starts, o.ends, o.lines);
fail:
    PyBuffer_Release(&data);
fail_released:
    Py_XDECREF(o.starts);
    Py_XDECREF(o.ends);
    Py_XDECREF(o.lines);
    return NULL;
}

/* The i-th item of a buffer of int32 or int64 items (index_buffer) */
static inline int64_t item(const Py_buffer *v, Py_ssize_t i)
{
    return v->itemsize == 4 ? ((const int32_t *)v->buf)[i] : ((const int64_t *)v->buf)[i];
}

/* What parse_floats and gather take: the data and a column's token bounds in it */
typedef struct {
    Py_buffer data, starts, ends;
    Py_ssize_t n;
} Column;

static int column_get(Column *c, PyObject *data, PyObject *starts, PyObject *ends)
{
    if (PyObject_GetBuffer(data, &c->data, PyBUF_SIMPLE) < 0)
        return -1;
    if (index_buffer(starts, &c->starts, "starts") < 0) {
        PyBuffer_Release(&c->data);
        return -1;
    }
    if (index_buffer(ends, &c->ends, "ends") < 0) {
        PyBuffer_Release(&c->data);
        PyBuffer_Release(&c->starts);
        return -1;
    }
    if (c->ends.len != c->starts.len || c->ends.itemsize != c->starts.itemsize) {
        PyErr_SetString(PyExc_ValueError, "starts and ends differ in length or type");
        PyBuffer_Release(&c->data);
        PyBuffer_Release(&c->starts);
        PyBuffer_Release(&c->ends);
        return -1;
    }
    c->n = c->starts.len / c->starts.itemsize;
    return 0;
}

static void column_release(Column *c)
{
    PyBuffer_Release(&c->data);
    PyBuffer_Release(&c->starts);
    PyBuffer_Release(&c->ends);
}

/* Token i's bounds; -1 with IndexError when they are not inside the data */
static inline int column_token(const Column *c, Py_ssize_t i, int64_t *a, int64_t *b)
{
    *a = item(&c->starts, i);
    *b = item(&c->ends, i);
    if (*a < 0 || *b < *a || *b > c->data.len) {
        PyErr_SetString(PyExc_IndexError, "token bounds outside the data");
        return -1;
    }
    return 0;
}

/* 10^k, exact as doubles for k <= 22 */
static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

#if LDBL_MANT_DIG == 64 && defined(__linux__)  /* Linux sets the x87 unit to 64-bit precision */
/* 10^k, exact in x87 extended precision (64-bit mantissa) for k <= 27 */
static long double POW10L[28];
static void init_pow10l(void)
{
    POW10L[0] = 1.0L;
    for (int k = 1; k < 28; k++)
        POW10L[k] = POW10L[k - 1] * 10.0L;  /* 10^k = 5^k 2^k, 5^27 < 2^64: every product exact */
}
#else
static void init_pow10l(void) {}
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ZEROS 0x3030303030303030ULL     /* eight '0' bytes */

/* the 8 bytes ending at end, with all but the last k (0..8) of them replaced by '0' */
static inline uint64_t last_bytes(const unsigned char *end, int k)
{
    static const uint64_t keep_last[9] = {     /* the last k bytes of a word (a table: no branch) */
        0, 0xFFULL << 56, 0xFFFFULL << 48, 0xFFFFFFULL << 40, 0xFFFFFFFFULL << 32,
        0xFFFFFFFFFFULL << 24, 0xFFFFFFFFFFFFULL << 16, 0xFFFFFFFFFFFFFFULL << 8, ~0ULL};
    uint64_t w;
    memcpy(&w, end - 8, 8);
    const uint64_t keep = keep_last[k < 0 ? 0 : k > 8 ? 8 : k];
    return (w & keep) | (ZEROS & ~keep);
}

/* whether all 8 bytes of w are decimal digits */
static inline int eight_digits(uint64_t w)
{
    const uint64_t hi = 0xF0F0F0F0F0F0F0F0ULL;
    return ((w & hi) | (((w + 0x0606060606060606ULL) & hi) >> 4)) == 0x3333333333333333ULL;
}

/* the value of 8 digit bytes, the first in memory the most significant */
static inline uint64_t eight_digits_value(uint64_t w)
{
    w = ((w & 0x0F0F0F0F0F0F0F0FULL) * 2561) >> 8;
    w = ((w & 0x00FF00FF00FF00FFULL) * 6553601) >> 16;
    return ((w & 0x0000FFFF0000FFFFULL) * 42949672960001ULL) >> 32;
}

/* The m and f of fast_decimal for an unsigned decimal of at most 8 digits before its dot and
 * 7 after, read a word at a time (the scores most runs print); 0 for anything else. Reads the
 * 16 bytes that end with the token: the caller says they are there (before >= 16). */
static inline int short_decimal(const unsigned char *s, Py_ssize_t n, uint64_t *m, int *f)
{
    if (n < 1 || n > 16)
        return 0;
    const unsigned char *end = s + n;
    const uint64_t tail = last_bytes(end, (int)n);          /* the token's last 8 bytes */
    const uint64_t x = tail ^ 0x2E2E2E2E2E2E2E2EULL;          /* '.' bytes become 0 */
    const uint64_t dots = (x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL;
    int fl = 0;                      /* digits after the dot */
    Py_ssize_t il = n;               /* bytes before it */
    if (dots) {
        fl = 7 - __builtin_ctzll(dots) / 8;
        il = n - fl - 1;
    }
    else if (n > 8)
        return 0;
    if (il > 8 || il + fl == 0)
        return 0;
    const uint64_t a = last_bytes(s + il, (int)il), b = last_bytes(end, fl);
    if (!eight_digits(a) || !eight_digits(b))
        return 0;
    static const uint64_t scale[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
    *m = eight_digits_value(a) * scale[fl] + eight_digits_value(b);
    *f = fl;
    return 1;
}
#endif

/* [+-]digits[.digits] (at least one digit), read as an integer m and a count f of digits after
 * the dot. When m < 2^53 and f <= 22, m and 10^f are exact doubles and m / 10^f is the correctly
 * rounded value of the decimal (Clinger's fast path): the double float() returns; up to 19 digits
 * where long double has a 64-bit mantissa (below). Returns 0 for anything else (exponents, nan,
 * inf, underscores, more digits), left to Python's own parser. before: the bytes readable
 * before s (short_decimal's word reads need 16). */
static int fast_decimal(const unsigned char *s, Py_ssize_t n, Py_ssize_t before, double *out)
{
#if FLT_EVAL_METHOD == 0
    Py_ssize_t i = 0;
    int neg = 0, digits = 0, f = 0, dot = 0;
    uint64_t m = 0;
    if (n > 0 && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (before + i >= 16 && short_decimal(s + i, n - i, &m, &f)) {
        *out = neg ? -((double)m / POW10[f]) : (double)m / POW10[f];
        return 1;
    }
#else
    (void)before;
#endif
    for (; i < n; i++) {
        const unsigned d = (unsigned)s[i] - '0';
        if (d < 10) {
            if (++digits > 19)
                return 0;
            m = m * 10 + d;
            f += dot;
        }
        else if (s[i] == '.' && !dot)
            dot = 1;
        else
            return 0;
    }
    if (digits == 0)
        return 0;
    double v;
    if (m < ((uint64_t)1 << 53) && f <= 22)
        v = (double)m / POW10[f];
    else {
#if LDBL_MANT_DIG == 64 && defined(__linux__)  /* Linux sets the x87 unit to 64-bit precision */
        /* 16-19 digits (doubles printed in full): m < 2^64 and 10^f (f <= 27) are exact in x87
         * extended precision, so m / 10^f is correctly rounded there; rounding it to double is
         * then the correctly rounded double unless the extended result lies exactly half-way
         * between two doubles (its low 11 mantissa bits 10000000000), left to Python's parser. */
        if (f > 27)
            return 0;
        const long double x = (long double)m / POW10L[f];
        int ex;
        const long double frac = frexpl(x, &ex);  /* x = frac 2^ex, 0.5 <= frac < 1 (m > 0) */
        if (m == 0 || ((uint64_t)ldexpl(frac, 64) & 0x7FF) == 0x400)
            return 0;
        v = (double)x;
#else
        return 0;
#endif
    }
    *out = neg ? -v : v;
    return 1;
#else
    (void)s; (void)n; (void)out;
    return 0;  /* excess precision (x87): the division could round twice */
#endif
}

PyDoc_STRVAR(parse_floats_doc,
"parse_floats(data, starts, ends) -> (values, ok)\n\n"
"Every token data[starts[i]:ends[i]] as a double (bytearray of float64), the same double as\n"
"float(token) (plain decimals by Clinger's fast path, others by Python's own correctly\n"
"rounded parser, PyOS_string_to_double); ok (bytearray of uint8) is 0 where the token is\n"
"not wholly a number that parser reads, and the value then undefined.");

static PyObject *parse_floats(PyObject *self, PyObject *args)
{
    PyObject *data_o, *starts_o, *ends_o;
    Column c;
    if (!PyArg_ParseTuple(args, "OOO:parse_floats", &data_o, &starts_o, &ends_o)
        || column_get(&c, data_o, starts_o, ends_o) < 0)
        return NULL;
    const unsigned char *p = c.data.buf;
    PyObject *values_b = PyByteArray_FromStringAndSize(NULL, c.n * 8);
    PyObject *ok_b = PyByteArray_FromStringAndSize(NULL, c.n);
    if (!values_b || !ok_b)
        goto fail;
    double *values = (double *)PyByteArray_AS_STRING(values_b);
    char *ok = PyByteArray_AS_STRING(ok_b);
    char text[128];
    for (Py_ssize_t i = 0; i < c.n; i++) {
        int64_t a, b;
        if (column_token(&c, i, &a, &b) < 0)
            goto fail;
        ok[i] = (char)fast_decimal(p + a, b - a, a, values + i);
        if (ok[i] || b - a == 0 || b - a >= (int64_t)sizeof text)
            continue;
        memcpy(text, p + a, b - a);
        text[b - a] = 0;
        char *end = NULL;
        const double v = PyOS_string_to_double(text, &end, NULL);  /* inf on overflow, as float() */
        if (v == -1.0 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_ValueError))
                goto fail;
            PyErr_Clear();
            continue;
        }
        values[i] = v;
        ok[i] = end == text + (b - a);
    }
    column_release(&c);
    return Py_BuildValue("(NN)", values_b, ok_b);
fail:
    column_release(&c);
    Py_XDECREF(values_b);
    Py_XDECREF(ok_b);
    return NULL;
}

PyDoc_STRVAR(gather_doc,
"gather(data, starts, ends, width) -> bytearray\n\n"
"Row i of an (n, width) matrix holds the token data[starts[i]:ends[i]], cut to width bytes,\n"
"and zeros after it: viewed as numpy dtype 'S<width>', the tokens as a bytes array.");

static PyObject *gather(PyObject *self, PyObject *args)
{
    PyObject *data_o, *starts_o, *ends_o;
    Py_ssize_t width;
    Column c;
    if (!PyArg_ParseTuple(args, "OOOn:gather", &data_o, &starts_o, &ends_o, &width)
        || column_get(&c, data_o, starts_o, ends_o) < 0)
        return NULL;
    PyObject *out_b = NULL;
    if (width < 1) {
        PyErr_SetString(PyExc_ValueError, "width < 1");
        goto done;
    }
    if (c.n > PY_SSIZE_T_MAX / width) {
        PyErr_NoMemory();
        goto done;
    }
    out_b = PyByteArray_FromStringAndSize(NULL, c.n * width);
    if (!out_b)
        goto done;
    char *out = PyByteArray_AS_STRING(out_b);
    const unsigned char *p = c.data.buf;
    for (Py_ssize_t i = 0; i < c.n; i++, out += width) {
        int64_t a, b;
        if (column_token(&c, i, &a, &b) < 0) {
            Py_CLEAR(out_b);
            goto done;
        }
        const Py_ssize_t k = b - a < width ? (Py_ssize_t)(b - a) : width;
        memcpy(out, p + a, k);
        memset(out + k, 0, width - k);
    }
done:
    column_release(&c);
    return out_b;
}

/* ---- 64-bit hashes of fixed-width strings, and a hash table of 64-bit keys ---- */

/* C-contiguous buffers of the n objects into views: all of them, or none (-1, the error set) */
static int get_buffers(PyObject *const *objs, Py_buffer *views, int n)
{
    for (int i = 0; i < n; i++)
        if (PyObject_GetBuffer(objs[i], &views[i], PyBUF_C_CONTIGUOUS) < 0) {
            while (i--)
                PyBuffer_Release(&views[i]);
            return -1;
        }
    return 0;
}

static void release_buffers(Py_buffer *views, int n)
{
    for (int i = 0; i < n; i++)
        PyBuffer_Release(&views[i]);
}

static inline uint64_t fmix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 33;
    return h;
}

PyDoc_STRVAR(hash_strings_doc,
"hash_strings(data, width) -> bytearray\n\n"
"The 64-bit hash (native uint64) of each of the len(data) // width strings of data (a numpy\n"
"'S<width>' array's buffer): FNV-1a over the string's 8-byte native words, zero-padded on the\n"
"right, skipping all-zero words (padding), then MurmurHash3's finaliser; the values of\n"
"maxent.trec.hash_strings' numpy steps (tests/_trec_numpy.py), whatever the width.");

static PyObject *hash_strings(PyObject *self, PyObject *args)
{
    PyObject *data_o;
    Py_ssize_t width;
    Py_buffer data;
    if (!PyArg_ParseTuple(args, "On:hash_strings", &data_o, &width))
        return NULL;
    if (width < 0) {
        PyErr_SetString(PyExc_ValueError, "width < 0");
        return NULL;
    }
    if (get_buffers(&data_o, &data, 1) < 0)
        return NULL;
    const Py_ssize_t n = width ? data.len / width : 0;
    PyObject *out_b = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(uint64_t));
    if (out_b) {
        uint64_t *out = (uint64_t *)PyByteArray_AS_STRING(out_b);
        const unsigned char *p = data.buf;
        for (Py_ssize_t i = 0; i < n; i++, p += width) {
            uint64_t h = 0xCBF29CE484222325ULL;
            for (Py_ssize_t j = 0; j < width; j += 8) {
                uint64_t w = 0;
                memcpy(&w, p + j, width - j < 8 ? (size_t)(width - j) : 8);
                if (w)
                    h = (h ^ w) * 0x100000001B3ULL;
            }
            out[i] = fmix64(h);
        }
    }
    PyBuffer_Release(&data);
    return out_b;
}

PyDoc_STRVAR(topic_keys_doc,
"topic_keys(hashes, codes) -> bytearray\n\n"
"One 64-bit key (native uint64) per document: fmix64(hash ^ ((code + 1) * golden ratio)), of\n"
"hashes (native uint64) and codes (native int64), computed modulo 2^64.");

static PyObject *topic_keys(PyObject *self, PyObject *args)
{
    PyObject *objs[2];
    Py_buffer v[2];                                               /* hashes, codes */
    if (!PyArg_ParseTuple(args, "OO:topic_keys", &objs[0], &objs[1]) || get_buffers(objs, v, 2) < 0)
        return NULL;
    const Py_ssize_t n = v[0].len / (Py_ssize_t)sizeof(uint64_t);
    PyObject *out_b = NULL;
    if (v[1].len != v[0].len)
        PyErr_SetString(PyExc_ValueError, "hashes and codes differ in length");
    else if ((out_b = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(uint64_t)))) {
        uint64_t *out = (uint64_t *)PyByteArray_AS_STRING(out_b);
        const uint64_t *h = v[0].buf, *c = v[1].buf;
        for (Py_ssize_t i = 0; i < n; i++)
            out[i] = fmix64(h[i] ^ ((c[i] + 1) * 0x9E3779B97F4A7C15ULL));
    }
    release_buffers(v, 2);
    return out_b;
}

/* slot of a key in a table of 2^bits slots: the top bits of the key times a golden-ratio
 * constant, so keys that are not hashes (small integers) spread over the table too */
static inline uint64_t key_slot(uint64_t key, int shift)
{
    return (key * 0x9E3779B97F4A7C15ULL) >> shift;
}

PyDoc_STRVAR(key_table_doc,
"key_table(keys, bits) -> (bytearray, unique)\n\n"
"An open-addressing (linear probing) table of 2^bits int64 slots over keys (native uint64,\n"
"fewer than 2^bits): each slot holds the position of a key in keys, or -1. A key given twice\n"
"is stored at its first position; unique is False then.");

static PyObject *key_table(PyObject *self, PyObject *args)
{
    PyObject *keys_o;
    int bits;
    Py_buffer kb;
    if (!PyArg_ParseTuple(args, "Oi:key_table", &keys_o, &bits))
        return NULL;
    if (bits < 1 || bits > 62) {
        PyErr_SetString(PyExc_ValueError, "bits out of range");
        return NULL;
    }
    if (get_buffers(&keys_o, &kb, 1) < 0)
        return NULL;
    const Py_ssize_t n = kb.len / (Py_ssize_t)sizeof(uint64_t);
    const uint64_t size = (uint64_t)1 << bits, mask = size - 1;
    PyObject *table_b = NULL;
    int unique = 1;
    if ((uint64_t)n >= size) {
        PyErr_SetString(PyExc_ValueError, "more keys than slots");
        goto done;
    }
    table_b = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(size * sizeof(int64_t)));
    if (!table_b)
        goto done;
    int64_t *table = (int64_t *)PyByteArray_AS_STRING(table_b);
    memset(table, 0xFF, size * sizeof(int64_t));                  /* every slot -1 */
    const uint64_t *keys = kb.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        const uint64_t k = keys[i];
        uint64_t s = key_slot(k, 64 - bits);
        for (;;) {
            const int64_t at = table[s];
            if (at < 0) {
                table[s] = i;
                break;
            }
            if (keys[at] == k) {                                   /* a repeat: keep the first */
                unique = 0;
                break;
            }
            s = (s + 1) & mask;
        }
    }
done:
    PyBuffer_Release(&kb);
    if (!table_b)
        return NULL;
    return Py_BuildValue("(NO)", table_b, unique ? Py_True : Py_False);
}

PyDoc_STRVAR(key_probe_doc,
"key_probe(keys, table, bits, query) -> bytearray\n\n"
"The position in keys (int64, -1 where absent) of each query key, through the table that\n"
"key_table(keys, bits) made.");

static PyObject *key_probe(PyObject *self, PyObject *args)
{
    PyObject *objs[3];
    int bits;
    Py_buffer v[3];                                               /* keys, table, query */
    if (!PyArg_ParseTuple(args, "OOiO:key_probe", &objs[0], &objs[1], &bits, &objs[2]))
        return NULL;
    if (bits < 1 || bits > 62) {
        PyErr_SetString(PyExc_ValueError, "bits out of range");
        return NULL;
    }
    if (get_buffers(objs, v, 3) < 0)
        return NULL;
    const uint64_t size = (uint64_t)1 << bits, mask = size - 1;
    const Py_ssize_t m = v[2].len / (Py_ssize_t)sizeof(uint64_t);
    PyObject *out_b = NULL;
    if ((uint64_t)v[1].len != size * sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "the table does not have 2^bits slots");
        goto done;
    }
    out_b = PyByteArray_FromStringAndSize(NULL, m * (Py_ssize_t)sizeof(int64_t));
    if (!out_b)
        goto done;
    int64_t *out = (int64_t *)PyByteArray_AS_STRING(out_b);
    const uint64_t *keys = v[0].buf, *query = v[2].buf;
    const int64_t *table = v[1].buf;
    for (Py_ssize_t i = 0; i < m; i++) {
        const uint64_t k = query[i];
        uint64_t s = key_slot(k, 64 - bits);
        int64_t at;
        while ((at = table[s]) >= 0 && keys[at] != k)
            s = (s + 1) & mask;
        out[i] = at;
    }
done:
    release_buffers(v, 3);
    return out_b;
}

/* ---- a run file in one pass: its columns, as the arrays maxent.trec.Run holds ---- */

#define LONG_TOKEN 128  /* maxent.trec.LONG_TOKEN: longer tokens become surrogates in Python */

/* A bytearray of cap items of size bytes */
static PyObject *new_items(Py_ssize_t cap, Py_ssize_t size)
{
    if (cap > PY_SSIZE_T_MAX / size)
        return PyErr_NoMemory();
    return PyByteArray_FromStringAndSize(NULL, cap * size);
}

/* C memory exported through the buffer protocol (numpy.frombuffer reads it): the string
 * columns, written by the scan's threads without the interpreter, handed over without a copy */
typedef struct {
    PyObject_HEAD
    char *data;
    Py_ssize_t size;
} Buffer;

static void buffer_dealloc(Buffer *b)
{
    free(b->data);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

static int buffer_get(Buffer *b, Py_buffer *view, int flags)
{
    return PyBuffer_FillInfo(view, (PyObject *)b, b->data, b->size, 0, flags);
}

static PyBufferProcs buffer_procs = {(getbufferproc)buffer_get, NULL};

static PyTypeObject BufferType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "maxent._ctrec.Buffer",
    .tp_basicsize = sizeof(Buffer),
    .tp_dealloc = (destructor)buffer_dealloc,
    .tp_as_buffer = &buffer_procs,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Bytes of C memory (a column read_run wrote), readable through the buffer protocol.",
};

/* A Buffer owning data (freed with it, or here on failure) */
static PyObject *buffer_new(char *data, Py_ssize_t size)
{
    Buffer *b = PyObject_New(Buffer, &BufferType);
    if (!b) {
        free(data);
        return NULL;
    }
    b->data = data;
    b->size = size;
    return (PyObject *)b;
}

/* A column of strings as rows of `width` bytes, zero-padded, and 16 bytes of slack (C memory:
 * no interpreter needed): widened (rows moved, last first) when a longer token comes. */
typedef struct {
    char *rows;
    Py_ssize_t width, cap, longest;
} StrColumn;

/* rows 0..n-1 re-laid at width w in a buffer of cap rows; -1 when out of memory */
static int strcol_relayout(StrColumn *c, Py_ssize_t n, Py_ssize_t w, Py_ssize_t cap)
{
    const Py_ssize_t old = c->width;
    if (w && cap > (PY_SSIZE_T_MAX - 16) / w)
        return -1;
    const Py_ssize_t size = (cap * w > n * old ? cap * w : n * old) + 16;
    char *b = realloc(c->rows, size);
    if (!b)
        return -1;
    if (w > old)
        for (Py_ssize_t i = n - 1; i >= 0; i--) {
            memmove(b + i * w, b + i * old, old);
            memset(b + i * w + old, 0, w - old);
        }
    else if (w < old)
        for (Py_ssize_t i = 1; i < n; i++)
            memmove(b + i * w, b + i * old, w);
    c->rows = b;
    c->width = w;
    c->cap = cap;
    return 0;
}

static int strcol_widen(StrColumn *c, Py_ssize_t n, Py_ssize_t need)
{
    Py_ssize_t w = c->width + c->width / 4;
    w = w < need ? need : w > LONG_TOKEN ? LONG_TOKEN : w;
    return strcol_relayout(c, n, w, c->cap);
}

/* hash_strings' hash of one token (its 8-byte words zero-padded, all-zero words skipped) */
static inline uint64_t token_hash(const unsigned char *p, Py_ssize_t len)
{
    uint64_t h = 0xCBF29CE484222325ULL;
    for (Py_ssize_t j = 0; j < len; j += 8) {
        uint64_t w = 0;
        memcpy(&w, p + j, len - j < 8 ? (size_t)(len - j) : 8);
        if (w)
            h = (h ^ w) * 0x100000001B3ULL;
    }
    return fmix64(h);
}

/* the low k bytes of w (little-endian: the first k bytes in memory), the others zero */
static inline uint64_t low_bytes(uint64_t w, Py_ssize_t k)
{
    return k >= 8 ? w : k <= 0 ? 0 : w & (~(uint64_t)0 >> (64 - 8 * k));
}

/* Row i := the token p[0:len] (avail bytes readable from p); *hash, when given, its
 * token_hash. Tokens of up to 16 bytes go as two 8-byte words, written past a narrower row
 * into the next one (written later) or the 16 bytes of slack after the last. */
static inline int strcol_put(StrColumn *c, Py_ssize_t i, const unsigned char *p, Py_ssize_t len,
                             Py_ssize_t avail, uint64_t *hash)
{
    if (len > c->width && strcol_widen(c, i, len) < 0)
        return -1;
    if (len > c->longest)
        c->longest = len;
    char *row = c->rows + i * c->width;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (c->width <= 16 && avail >= 16) {
        uint64_t lo, hi;
        memcpy(&lo, p, 8);
        memcpy(&hi, p + 8, 8);
        lo = low_bytes(lo, len);
        hi = low_bytes(hi, len - 8);
        memcpy(row, &lo, 8);
        memcpy(row + 8, &hi, 8);
        if (hash) {
            uint64_t h = 0xCBF29CE484222325ULL;
            if (lo)
                h = (h ^ lo) * 0x100000001B3ULL;
            if (hi)
                h = (h ^ hi) * 0x100000001B3ULL;
            *hash = fmix64(h);
        }
        return 0;
    }
#endif
    (void)avail;
    memcpy(row, p, len);
    memset(row + len, 0, c->width - len);
    if (hash)
        *hash = token_hash(p, len);
    return 0;
}

/* a double of a score token, as parse_floats: 1 when the whole token is that number, 0 when
 * not, -1 with an exception set (needs the interpreter: the scan leaves these to the end) */
static int parse_score(const unsigned char *p, Py_ssize_t len, double *out)
{
    if (fast_decimal(p, len, 0, out))
        return 1;
    char text[128];
    if (len == 0 || len >= (Py_ssize_t)sizeof text)
        return 0;
    memcpy(text, p, len);
    text[len] = 0;
    char *end = NULL;
    const double v = PyOS_string_to_double(text, &end, NULL);
    if (v == -1.0 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_ValueError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    *out = v;
    return end == text + len;
}

/* (row, start, end) of tokens the scan leaves for later */
typedef struct {
    int64_t row, a, b;
} Span;

typedef struct {
    Span *v;
    Py_ssize_t n, cap;
} Spans;

static int spans_add(Spans *s, int64_t row, int64_t a, int64_t b)
{
    if (s->n == s->cap) {
        const Py_ssize_t cap = s->cap ? 2 * s->cap : 16;
        Span *v = realloc(s->v, cap * sizeof(Span));
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (Span){row, a, b};
    return 0;
}

/* The docnos of the current block (a run of lines of one qid): (hash, row) slots, valid
 * while their block number is the current one, so a new block starts with no clearing. */
typedef struct {
    uint64_t hash;
    int64_t row, block;
} Seen;

/* One chunk of the file, whole lines, scanned without the interpreter (one per thread): its
 * rows go to its own columns. Line numbers are kept as runs: row r of a run that starts at
 * row a on line l is on line l + r - a (a new run after a comment or blank line). */
typedef struct {
    const unsigned char *p;
    Py_ssize_t begin, end, len;     /* the chunk, and the whole data's length */
    double *score;                  /* its rows' scores: cap rows, n written */
    Py_ssize_t cap, n;
    Spans line_runs;                /* (row, line, 0) where a run of consecutive lines starts */
    int64_t line_shift;             /* line - row in the current run */
    Py_ssize_t first_row;           /* where its rows are once the chunks are joined */
    StrColumn qid, docno;
    int64_t *blocks;                /* rows (of the chunk) where the qid changes */
    Py_ssize_t nblocks, cap_blocks;
    Spans slow, long_qids, long_docnos;   /* scores past the fast path; tokens over 128 bytes */
    Seen *seen;
    Py_ssize_t seen_size, seen_count;
    int64_t prev_qid, prev_qid_len, first_qid, first_qid_len, tag_start, tag_end;
    int64_t nonfinite, nonfinite_start, nonfinite_end;   /* the first row read as inf or nan */
    int64_t nul, lines, bad_line, bad_count;
    int repeat, nomem;
    Py_ssize_t kept;                /* release: the chunk's pages before this offset are let go */
    int release;
} Chunk;

/* A memory-mapped file's pages stay resident once read; with release set, the scan gives back
 * the pages it has passed, so the process holds the columns and a window of the file, not both
 * whole. Every RELEASE_STEP bytes it lets go of what lies more than a step behind: a page fault
 * maps the cached pages around it, behind it too, so pages let go just behind the scan would
 * come back at once. Only for a file mapping: on other memory MADV_DONTNEED would zero it, so
 * read_run's caller says which it passes. A page read again (joining the chunks, an error
 * message) comes back from the page cache. */
#define RELEASE_STEP ((Py_ssize_t)1 << 22)

static void release_to(Chunk *o, Py_ssize_t to)
{
#if defined(MADV_DONTNEED)
    if (!o->release || to <= o->kept)
        return;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t a = ((uintptr_t)(o->p + o->kept) + page - 1) & ~(page - 1);
    const uintptr_t b = (uintptr_t)(o->p + to) & ~(page - 1);
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
    o->kept = to;
#else
    (void)o;
    (void)to;
#endif
}

/* Record row i's docno (hash h) in its block's table; sets repeat when it is there already */
static int seen_add(Chunk *o, uint64_t h, Py_ssize_t i)
{
    const int64_t block = o->nblocks;
    if (2 * (o->seen_count + 1) > o->seen_size) {     /* grow: the current block's slots move */
        const Py_ssize_t size = o->seen_size ? 2 * o->seen_size : 256;
        Seen *t = malloc(size * sizeof(Seen));
        if (!t)
            return -1;
        for (Py_ssize_t k = 0; k < size; k++)
            t[k].block = -1;
        for (Py_ssize_t k = 0; k < o->seen_size; k++)
            if (o->seen[k].block == block) {
                uint64_t slot = (o->seen[k].hash * 0x9E3779B97F4A7C15ULL) & (size - 1);
                while (t[slot].block == block)
                    slot = (slot + 1) & (size - 1);
                t[slot] = o->seen[k];
            }
        free(o->seen);
        o->seen = t;
        o->seen_size = size;
    }
    const Py_ssize_t w = o->docno.width;
    uint64_t slot = (h * 0x9E3779B97F4A7C15ULL) & (o->seen_size - 1);
    for (;; slot = (slot + 1) & (o->seen_size - 1)) {
        Seen *at = &o->seen[slot];
        if (at->block != block) {
            *at = (Seen){h, i, block};
            o->seen_count++;
            return 0;
        }
        if (at->hash == h && memcmp(o->docno.rows + at->row * w, o->docno.rows + i * w, w) == 0) {
            o->repeat = 1;
            return 0;
        }
    }
}

/* Room for cap rows of the scores */
static int rows_reserve(Chunk *o, Py_ssize_t cap)
{
    double *score = realloc(o->score, cap * sizeof(double));
    if (score)
        o->score = score;
    return score ? 0 : -1;
}

/* Room for twice the chunk's rows: the scan does not count the lines first (a pass of its own
 * over the text), it grows the columns as they fill. Large blocks are moved by realloc without
 * copying their pages (mremap). */
static int chunk_grow(Chunk *o)
{
    const Py_ssize_t cap = 2 * o->cap;
    if (rows_reserve(o, cap) < 0 || strcol_relayout(&o->qid, o->n, o->qid.width, cap) < 0
        || strcol_relayout(&o->docno, o->n, o->docno.width, cap) < 0)
        return -1;
    o->cap = cap;
    return 0;
}

/* Whether the len bytes at a and b are the same (avail bytes readable from a, more from b,
 * which comes earlier in the data): two 8-byte words for up to 16 bytes, as the qid of every
 * line is compared with the line's before */
static inline int same_token(const unsigned char *a, const unsigned char *b, Py_ssize_t len, Py_ssize_t avail)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (len <= 16 && avail >= 16) {
        uint64_t a0, a1, b0, b1;
        memcpy(&a0, a, 8);
        memcpy(&a1, a + 8, 8);
        memcpy(&b0, b, 8);
        memcpy(&b1, b + 8, 8);
        return ((low_bytes(a0 ^ b0, len)) | low_bytes(a1 ^ b1, len - 8)) == 0;
    }
#endif
    (void)avail;
    return memcmp(a, b, len) == 0;
}

static int chunk_row(Chunk *o, const int64_t *s, const int64_t *e, int64_t lineno)
{
    const unsigned char *p = o->p;
    const Py_ssize_t i = o->n;
    if (i >= o->cap && chunk_grow(o) < 0)
        return -1;
    const int64_t ql = e[0] - s[0], dl = e[2] - s[2];
    if (i == 0 || ql != o->prev_qid_len || !same_token(p + s[0], p + o->prev_qid, ql, o->len - s[0])) {
        if (o->nblocks == o->cap_blocks) {
            int64_t *b = realloc(o->blocks, 2 * o->cap_blocks * sizeof(int64_t));
            if (!b)
                return -1;
            o->blocks = b;
            o->cap_blocks *= 2;
        }
        o->blocks[o->nblocks++] = i;
        o->prev_qid = s[0];
        o->prev_qid_len = ql;
        o->seen_count = 0;
        if (i == 0) {
            o->first_qid = s[0];
            o->first_qid_len = ql;
        }
    }
    if (ql > LONG_TOKEN) {
        if (spans_add(&o->long_qids, i, s[0], e[0]) < 0 || strcol_put(&o->qid, i, p, 0, 0, NULL) < 0)
            return -1;
    }
    else if (strcol_put(&o->qid, i, p + s[0], ql, o->len - s[0], NULL) < 0)
        return -1;
    if (dl > LONG_TOKEN) {            /* looked for in Python, as its surrogate */
        if (spans_add(&o->long_docnos, i, s[2], e[2]) < 0 || strcol_put(&o->docno, i, p, 0, 0, NULL) < 0)
            return -1;
    }
    else {
        uint64_t h;
        if (strcol_put(&o->docno, i, p + s[2], dl, o->len - s[2], &h) < 0 || seen_add(o, h, i) < 0)
            return -1;
    }
    double *score = o->score + i;
    if (!fast_decimal(p + s[4], e[4] - s[4], s[4], score)) {
        if (spans_add(&o->slow, i, s[4], e[4]) < 0)
            return -1;
    }
    else if (!isfinite(*score) && o->nonfinite < 0) {
        o->nonfinite = i;
        o->nonfinite_start = s[4];
        o->nonfinite_end = e[4];
    }
    if (i == 0 || lineno - i != o->line_shift) {
        if (spans_add(&o->line_runs, i, lineno, 0) < 0)
            return -1;
        o->line_shift = lineno - i;
    }
    o->tag_start = s[5];
    o->tag_end = e[5];
    o->n++;
    return 0;
}

/* The common line, from one 64-byte load at offset at (64 bytes readable there): six tokens
 * split by single whitespace bytes, no leading whitespace, no NUL, not a comment, ending in
 * '\n' or "\r\n" within the load. Its tokens' bounds go to s, e; returns the line's length with
 * its newline, or 0 for any other line (scan_line reads those). One load and a few bit
 * operations per line, where the event scan takes a branch per token start and end. */
static inline Py_ssize_t fast_line(const unsigned char *p, Py_ssize_t at, int64_t *s, int64_t *e)
{
    uint64_t ws, nl, zero;
    block_masks(p + at, 64, &ws, &nl, &zero);
    if (!nl)
        return 0;
    const int k = __builtin_ctzll(nl);
    const uint64_t line = ((uint64_t)2 << k) - 1;          /* bits 0..k: the line's bytes */
    const int cr = k > 0 && p[at + k - 1] == '\r';
    const int t = k - cr;                                   /* the byte that ends the last token */
    uint64_t w = ws & line & ~((uint64_t)cr << k);          /* separators, then t */
    if ((zero & line) || (w & 1) || (w & (w >> 1)) || p[at] == '#')
        return 0;
    int b[5];
    for (int i = 0; i < 5; i++) {
        b[i] = __builtin_ctzll(w | (uint64_t)1 << 63);
        w &= w - 1;
    }
    if (w != (uint64_t)1 << t)                              /* not exactly five separators */
        return 0;
    s[0] = at;
    for (int i = 0; i < 5; i++) {
        e[i] = at + b[i];
        s[i + 1] = at + b[i] + 1;
    }
    e[5] = at + t;
    return k + 1;
}

/* Any line from offset at, by the events of the masks of the 64-byte blocks from there: its
 * first six tokens' bounds in s, e and its token count. Returns the offset after its newline,
 * or the chunk's end (*ended 0) when the chunk ends first. Records the chunk's first NUL byte:
 * the blocks of the lines before covered every earlier byte. */
static Py_ssize_t scan_line(Chunk *o, Py_ssize_t at, int64_t *s, int64_t *e, int64_t *count, int *ended)
{
    const unsigned char *p = o->p;
    const Py_ssize_t end_of = o->end;
    uint64_t prev_ws = 1;           /* a line starts after a newline (or the chunk's start) */
    *count = 0;
    *ended = 1;
    for (Py_ssize_t base = at; base < end_of; base += 64) {
        uint64_t ws, nl, zero;
        block_masks(p + base, end_of - base, &ws, &nl, &zero);
        if (zero && o->nul < 0)
            o->nul = base + __builtin_ctzll(zero);
        const uint64_t after_ws = (ws << 1) | prev_ws;
        prev_ws = ws >> 63;
        const uint64_t start = ~ws & after_ws, end = ws & ~after_ws;
        for (uint64_t ev = start | end | nl; ev; ev &= ev - 1) {
            const int j = __builtin_ctzll(ev);
            if (scan_event(start, end, nl, j, base + j, 6, s, e, count))
                return base + j + 1;
        }
    }
    scan_end(prev_ws, end_of, 6, e, count);     /* the chunk (the file) ends in a token */
    *ended = 0;
    return end_of;
}

/* The scan of tokenize over the chunk, line by line, each kept line stored as it ends; stops at
 * the first line with fewer than 6 tokens (bad_line, bad_count) or when out of memory (nomem) */
static void scan_chunk(Chunk *o)
{
    const unsigned char *p = o->p;
    const Py_ssize_t end_of = o->end, last_load = o->len - 64;
    int64_t s[6] = {0}, e[6] = {0};
    int64_t lineno = 1;
    Py_ssize_t at = o->begin, release_at = o->begin + 2 * RELEASE_STEP;
    while (at < end_of) {
        if (at >= release_at) {
            release_to(o, at - RELEASE_STEP);
            release_at = at + RELEASE_STEP;
        }
        const Py_ssize_t n = at <= last_load ? fast_line(p, at, s, e) : 0;
        if (n && at + n <= end_of) {
            if (chunk_row(o, s, e, lineno) < 0) {
                o->nomem = 1;
                return;
            }
            at += n;
            lineno++;
            continue;
        }
        int64_t count;
        int ended;
        const Py_ssize_t next = scan_line(o, at, s, e, &count, &ended);
        if (count > 0 && p[s[0]] != '#') {
            if (count < 6) {
                o->bad_line = lineno;
                o->bad_count = count;
                break;
            }
            if (chunk_row(o, s, e, lineno) < 0) {
                o->nomem = 1;
                return;
            }
        }
        at = next;
        lineno += ended;
    }
    o->lines = lineno - 1;          /* lines ended by a newline */
    release_to(o, end_of);
}

/* The chunks as a queue: this thread (the interpreter released) and, given threads > 1, one
 * more take the next chunk until none is left, so a thread that gets no core takes few. */
typedef struct {
    void (*job)(Chunk *);
    Chunk *chunks;
    int n, next;
    PyThread_type_lock done;
} Queue;

static void take_all(Queue *q)
{
    int k;
#if defined(__GNUC__)
    while ((k = __atomic_fetch_add(&q->next, 1, __ATOMIC_RELAXED)) < q->n)
#else
    while ((k = q->next++) < q->n)     /* one thread only (no atomics): see in_parallel */
#endif
        q->job(q->chunks + k);
}

static void run_queue(void *arg)
{
    Queue *q = arg;
    take_all(q);
    PyThread_release_lock(q->done);
}

static void in_parallel(void (*job)(Chunk *), Chunk *chunks, int n, int threads)
{
    Queue q = {job, chunks, n, 0, NULL};
#if defined(__GNUC__)
    if (threads > 1 && n > 1 && (q.done = PyThread_allocate_lock())) {
        PyThread_acquire_lock(q.done, WAIT_LOCK);
        if (PyThread_start_new_thread(run_queue, &q) == PYTHREAD_INVALID_THREAD_ID) {
            PyThread_release_lock(q.done);
            PyThread_free_lock(q.done);
            q.done = NULL;                            /* no second thread: all chunks here */
        }
    }
#else
    (void)threads;
#endif
    Py_BEGIN_ALLOW_THREADS
    take_all(&q);
    if (q.done)
        PyThread_acquire_lock(q.done, WAIT_LOCK);
    Py_END_ALLOW_THREADS
    if (q.done) {
        PyThread_release_lock(q.done);
        PyThread_free_lock(q.done);
    }
}

static void chunk_free(Chunk *o)
{
    free(o->score);
    free(o->line_runs.v);
    free(o->qid.rows);
    free(o->docno.rows);
    free(o->blocks);
    free(o->slow.v);
    free(o->long_qids.v);
    free(o->long_docnos.v);
    free(o->seen);
}

/* Column a := its rows then b's, at the longest token's width; -1 when out of memory */
static int strcol_append(StrColumn *a, Py_ssize_t na, const StrColumn *b, Py_ssize_t nb)
{
    const Py_ssize_t w0 = a->longest > b->longest ? a->longest : b->longest, w = w0 > 0 ? w0 : 1;
    if (strcol_relayout(a, na, w, na + nb) < 0)
        return -1;
    for (Py_ssize_t j = 0; j < nb; j++) {
        const Py_ssize_t k = b->width < w ? b->width : w;    /* bytes past the longest are zeros */
        memcpy(a->rows + (na + j) * w, b->rows + j * b->width, k);
        memset(a->rows + (na + j) * w + k, 0, w - k);
    }
    a->longest = a->longest > b->longest ? a->longest : b->longest;
    return 0;
}

/* Whether rows a..b-1 of the column hold a string twice (a block the chunks' border cut) */
static int rows_repeat(const StrColumn *c, Py_ssize_t a, Py_ssize_t b, int *found)
{
    Py_ssize_t size = 16;
    while (size < 2 * (b - a))
        size *= 2;
    int64_t *t = malloc(size * sizeof(int64_t));
    if (!t)
        return -1;
    memset(t, 0xFF, size * sizeof(int64_t));
    const Py_ssize_t w = c->width;
    *found = 0;
    for (Py_ssize_t r = a; r < b && !*found; r++) {
        const uint64_t h = token_hash((const unsigned char *)c->rows + r * w, w);
        for (uint64_t slot = (h * 0x9E3779B97F4A7C15ULL) & (size - 1);; slot = (slot + 1) & (size - 1)) {
            if (t[slot] < 0) {
                t[slot] = r;
                break;
            }
            if (memcmp(c->rows + t[slot] * w, c->rows + r * w, w) == 0) {
                *found = 1;
                break;
            }
        }
    }
    free(t);
    return 0;
}

/* spans as a list of (row + offset, start, end) */
static int spans_to(PyObject *list, const Spans *s, Py_ssize_t offset)
{
    for (Py_ssize_t k = 0; k < s->n; k++) {
        PyObject *t = Py_BuildValue("(nLL)", (Py_ssize_t)(s->v[k].row + offset), (long long)s->v[k].a,
                                    (long long)s->v[k].b);
        if (!t || PyList_Append(list, t) < 0) {
            Py_XDECREF(t);
            return -1;
        }
        Py_DECREF(t);
    }
    return 0;
}

PyDoc_STRVAR(read_run_doc,
"read_run(data, chunks=1, release=False) -> columns or (None, line, count, nul)\n\n"
"The lines of a run (qid Q0 docno rank score tag ..., split as tokenize with ncols 6) in one\n"
"pass; in that many chunks (cut after newlines) taken by two threads when chunks > 1 (the\n"
"interpreter released), joined as one scan's: a dict of\n"
"qid and docno (buffers of rows zero-padded to qid_width / docno_width bytes: numpy 'S'\n"
"arrays; tokens longer than 128 bytes stored empty and listed in long_qids / long_docnos as\n"
"(row, start, end)), score (float64, as parse_floats; bad_scores lists the rows it cannot read,\n"
"nonfinite (row, start, end) the first it read as inf or nan, row -1 if none), line_runs (int64\n"
"pairs (row, line): the rows from that row to the next pair's are on consecutive lines from that\n"
"1-based line), blocks (int64: the rows where the qid differs from the row before), repeat (a docno\n"
"of 128 bytes or fewer twice in one block), nul (the offset of the first NUL byte, -1 if none)\n"
"tag (the bounds of the last line's sixth token) and lines (the newlines in data). A line with\n"
"fewer than 6 tokens stops the scan: (None, its line number, its number of tokens, the first\n"
"NUL byte before it or -1).\n"
"release: data is a file's memory map, whose pages are given back as they are read.");

static PyObject *read_run(PyObject *self, PyObject *args)
{
    Py_buffer data;
    int n = 1, release = 0;
    if (!PyArg_ParseTuple(args, "y*|ip:read_run", &data, &n, &release))
        return NULL;
    const unsigned char *p = data.buf;
    const Py_ssize_t len = data.len;
    n = n < 1 ? 1 : n > 64 ? 64 : n;
    const int threads = n > 1 ? 2 : 1;
    Chunk *c = calloc(n, sizeof(Chunk));
    PyObject *score_b = NULL, *runs_b = NULL, *result = NULL;
    PyObject *blocks_b = NULL, *bad = NULL, *long_q = NULL, *long_d = NULL, *qid_b = NULL, *docno_b = NULL;
    if (!c) {
        PyBuffer_Release(&data);
        return PyErr_NoMemory();
    }
    Py_ssize_t from = 0;
    int used = 0;
    for (int k = 0; k < n && from < len; k++) {
        Py_ssize_t to = len;
        if (k < n - 1) {
            const Py_ssize_t at = len / n * (k + 1);
            const unsigned char *q = at > from ? memchr(p + at, '\n', len - at) : NULL;
            to = q ? q + 1 - p : len;
        }
        c[used] = (Chunk){.p = p, .begin = from, .end = to, .len = len, .kept = from, .release = release};
        c[used].nonfinite = c[used].nul = -1;
        used++;
        from = to;
    }
    if (used == 0) {                   /* empty data: one empty chunk */
        c[0] = (Chunk){.p = p, .begin = 0, .end = 0, .len = len};
        c[0].nonfinite = c[0].nul = -1;
        used = 1;
    }
    n = used;
    for (int k = 0; k < n; k++) {    /* a first guess of the rows: lines of 40 bytes */
        c[k].cap = (c[k].end - c[k].begin) / 40 + 64;
        c[k].score = malloc(c[k].cap * sizeof(double));
        c[k].cap_blocks = 1024;
        c[k].blocks = malloc(c[k].cap_blocks * sizeof(int64_t));
        c[k].qid = (StrColumn){malloc(16), 0, c[k].cap, 0};
        c[k].docno = (StrColumn){malloc(16), 0, c[k].cap, 0};
        if (!c[k].score || !c[k].blocks || !c[k].qid.rows || !c[k].docno.rows) {
            PyErr_NoMemory();
            goto done;
        }
    }
    in_parallel(scan_chunk, c, n, threads);
    int64_t nul = -1, lines_before = 0;
    for (int k = 0; k < n; k++) {
        if (c[k].nomem) {
            PyErr_NoMemory();
            goto done;
        }
        if (nul < 0)
            nul = c[k].nul;
    }
    for (int k = 0; k < n; k++) {
        if (c[k].bad_line) {
            result = Py_BuildValue("(OLLL)", Py_None, (long long)(c[k].bad_line + lines_before),
                                   (long long)c[k].bad_count, (long long)nul);
            goto done;
        }
        lines_before += c[k].lines;
    }
    /* the chunks after the first appended to it: rows, strings and blocks; and the line runs */
    Chunk *a = &c[0];
    Py_ssize_t total = 0;
    for (int k = 0; k < n; k++)
        total += c[k].n;
    if (total > a->cap) {
        if (rows_reserve(a, total) < 0) {
            PyErr_NoMemory();
            goto done;
        }
        a->cap = total;
    }
    double *score = a->score;
    int repeat = a->repeat;
    int64_t tag_start = a->tag_start, tag_end = a->tag_end;
    int64_t last_qid = a->prev_qid, last_qid_len = a->n ? a->prev_qid_len : -1;
    Py_ssize_t nblocks_all = 0;
    for (int k = 0; k < n; k++)
        nblocks_all += c[k].nblocks;
    Py_ssize_t nruns = 0;
    for (int k = 0; k < n; k++)
        nruns += c[k].line_runs.n;
    if (!(blocks_b = new_items(nblocks_all, 8)) || !(runs_b = new_items(2 * nruns, 8)))
        goto done;
    int64_t *blocks = (int64_t *)PyByteArray_AS_STRING(blocks_b);
    int64_t *runs = (int64_t *)PyByteArray_AS_STRING(runs_b);
    Py_ssize_t rows_before = 0;
    lines_before = 0;
    for (int k = 0; k < n; k++) {        /* chunk k's rows and lines follow those before it */
        for (Py_ssize_t j = 0; j < c[k].line_runs.n; j++) {
            *runs++ = c[k].line_runs.v[j].row + rows_before;
            *runs++ = c[k].line_runs.v[j].a + lines_before;
        }
        rows_before += c[k].n;
        lines_before += c[k].lines;
    }
    memcpy(blocks, a->blocks, a->nblocks * sizeof(int64_t));
    Py_ssize_t nblocks = a->nblocks, rows = a->n;
    const StrColumn none = {NULL, 0, 0, 0};
    if (strcol_append(&a->qid, a->n, &none, 0) < 0 || strcol_append(&a->docno, a->n, &none, 0) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    lines_before = a->lines;
    for (int k = 1; k < n; k++) {
        Chunk *b = &c[k];
        b->first_row = rows;
        memcpy(score + rows, b->score, b->n * sizeof(double));
        lines_before += b->lines;
        if (!b->n)
            continue;
        /* its first block may go on with the last qid before it */
        const int joined = last_qid_len == b->first_qid_len
                           && memcmp(p + last_qid, p + b->first_qid, b->first_qid_len) == 0;
        const int64_t joined_start = nblocks ? blocks[nblocks - 1] : 0;
        for (Py_ssize_t j = joined; j < b->nblocks; j++)
            blocks[nblocks++] = b->blocks[j] + rows;
        if (strcol_append(&a->qid, rows, &b->qid, b->n) < 0 || strcol_append(&a->docno, rows, &b->docno, b->n) < 0) {
            PyErr_NoMemory();
            goto done;
        }
        repeat |= b->repeat;
        if (joined && !repeat) {
            int found;
            const Py_ssize_t stop = rows + (b->nblocks > 1 ? b->blocks[1] : b->n);
            if (rows_repeat(&a->docno, joined_start, stop, &found) < 0) {
                PyErr_NoMemory();
                goto done;
            }
            repeat |= found;
        }
        rows += b->n;
        last_qid = b->prev_qid;
        last_qid_len = b->prev_qid_len;
        tag_start = b->tag_start;
        tag_end = b->tag_end;
    }
    /* scores past the fast path, read here with Python's parser (it needs the interpreter) */
    int64_t nf = -1, nf_start = 0, nf_end = 0;
    if (!(bad = PyList_New(0)) || !(long_q = PyList_New(0)) || !(long_d = PyList_New(0)))
        goto done;
    for (int k = 0; k < n; k++) {
        const Py_ssize_t offset = c[k].first_row;
        if (c[k].nonfinite >= 0 && (nf < 0 || c[k].nonfinite + offset < nf)) {
            nf = c[k].nonfinite + offset;
            nf_start = c[k].nonfinite_start;
            nf_end = c[k].nonfinite_end;
        }
        for (Py_ssize_t j = 0; j < c[k].slow.n; j++) {
            const Span sp = c[k].slow.v[j];
            const int64_t row = sp.row + offset;
            const int ok = parse_score(p + sp.a, sp.b - sp.a, score + row);
            if (ok < 0)
                goto done;
            if (!ok) {
                PyObject *t = Py_BuildValue("(LLL)", (long long)row, (long long)sp.a, (long long)sp.b);
                if (!t || PyList_Append(bad, t) < 0) {
                    Py_XDECREF(t);
                    goto done;
                }
                Py_DECREF(t);
            }
            else if (!isfinite(score[row]) && (nf < 0 || row < nf)) {
                nf = row;
                nf_start = sp.a;
                nf_end = sp.b;
            }
        }
        if (spans_to(long_q, &c[k].long_qids, offset) < 0 || spans_to(long_d, &c[k].long_docnos, offset) < 0)
            goto done;
    }
    if (PyByteArray_Resize(blocks_b, nblocks * 8) < 0)
        goto done;
    score_b = buffer_new((char *)a->score, rows * 8);
    a->score = NULL;
    if (!score_b)
        goto done;
    const Py_ssize_t qw = a->qid.width, dw = a->docno.width;
    qid_b = buffer_new(a->qid.rows, rows * qw);
    a->qid.rows = NULL;
    docno_b = buffer_new(a->docno.rows, rows * dw);
    a->docno.rows = NULL;
    if (!qid_b || !docno_b)
        goto done;
    result = Py_BuildValue(
        "{sOsnsOsnsOsOsOsOs(LLL)sOsOsOsLs(LL)sL}", "qid", qid_b, "qid_width", qw, "docno", docno_b, "docno_width", dw,
        "score", score_b, "line_runs", runs_b, "blocks", blocks_b, "bad_scores", bad,
        "nonfinite", (long long)nf, (long long)nf_start, (long long)nf_end, "long_qids", long_q,
        "long_docnos", long_d, "repeat", repeat ? Py_True : Py_False, "nul", (long long)nul,
        "tag", (long long)tag_start, (long long)tag_end, "lines", (long long)lines_before);
done:
    PyBuffer_Release(&data);
    for (int k = 0; k < n; k++)
        chunk_free(&c[k]);
    free(c);
    Py_XDECREF(score_b);
    Py_XDECREF(runs_b);
    Py_XDECREF(blocks_b);
    Py_XDECREF(bad);
    Py_XDECREF(long_q);
    Py_XDECREF(long_d);
    Py_XDECREF(qid_b);
    Py_XDECREF(docno_b);
    return result;
}

/* ---- per topic: a repeated docno, and trec_eval's order ---- */

/* Groups of rows: group g is items[bounds[g]:bounds[g + 1]] (items NULL: the rows themselves) */
typedef struct {
    Py_buffer items, bounds;
    int has_items;
} Groups;

static int groups_get(Groups *g, PyObject *items, PyObject *bounds, int writable)
{
    g->has_items = items != Py_None;
    if (g->has_items && PyObject_GetBuffer(items, &g->items, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    if (PyObject_GetBuffer(bounds, &g->bounds, PyBUF_C_CONTIGUOUS) < 0) {
        if (g->has_items)
            PyBuffer_Release(&g->items);
        return -1;
    }
    return 0;
}

static void groups_release(Groups *g)
{
    if (g->has_items)
        PyBuffer_Release(&g->items);
    PyBuffer_Release(&g->bounds);
}

PyDoc_STRVAR(has_repeat_doc,
"has_repeat(docno, width, hashes, items, bounds) -> bool\n\n"
"Whether a string of docno (rows of width bytes) occurs twice in one group of rows: group g is\n"
"items[bounds[g]:bounds[g + 1]] (int64 rows; items None: rows bounds[g] to bounds[g + 1] - 1).\n"
"hashes (uint64, one per row) find candidates, confirmed on the bytes.");

static PyObject *has_repeat(PyObject *self, PyObject *args)
{
    PyObject *objs[2], *items_o, *bounds_o;
    Py_ssize_t width;
    Py_buffer v[2];                                               /* docno, hashes */
    Groups g;
    if (!PyArg_ParseTuple(args, "OnOOO:has_repeat", &objs[0], &width, &objs[1], &items_o, &bounds_o))
        return NULL;
    if (width < 1) {
        PyErr_SetString(PyExc_ValueError, "width < 1");
        return NULL;
    }
    if (get_buffers(objs, v, 2) < 0)
        return NULL;
    if (groups_get(&g, items_o, bounds_o, 0) < 0) {
        release_buffers(v, 2);
        return NULL;
    }
    const char *docno = v[0].buf;
    const uint64_t *hash = v[1].buf;
    const int64_t *items = g.has_items ? g.items.buf : NULL, *bounds = g.bounds.buf;
    const Py_ssize_t ngroups = g.bounds.len / 8 - 1, nrows = v[1].len / 8;
    int64_t *table = NULL;
    Py_ssize_t table_size = 0;
    int found = 0, failed = 0;
    for (Py_ssize_t k = 0; k < ngroups && !found; k++) {
        const int64_t a = bounds[k], b = bounds[k + 1];
        Py_ssize_t size = 16;
        while (size < 2 * (b - a))
            size *= 2;
        if (size > table_size) {
            int64_t *t = realloc(table, size * sizeof(int64_t));
            if (!t) {
                failed = 1;
                break;
            }
            table = t;
            table_size = size;
        }
        memset(table, 0xFF, size * sizeof(int64_t));
        for (int64_t m = a; m < b && !found; m++) {
            const int64_t r = items ? items[m] : m;
            if (r < 0 || r >= nrows) {
                failed = 2;
                break;
            }
            uint64_t slot = (hash[r] * 0x9E3779B97F4A7C15ULL) & (size - 1);
            for (;; slot = (slot + 1) & (size - 1)) {
                const int64_t at = table[slot];
                if (at < 0) {
                    table[slot] = r;
                    break;
                }
                if (hash[at] == hash[r] && memcmp(docno + at * width, docno + r * width, width) == 0) {
                    found = 1;
                    break;
                }
            }
        }
        if (failed)
            break;
    }
    free(table);
    groups_release(&g);
    release_buffers(v, 2);
    if (failed == 1)
        return PyErr_NoMemory();
    if (failed == 2) {
        PyErr_SetString(PyExc_IndexError, "a row outside the hashes");
        return NULL;
    }
    return PyBool_FromLong(found);
}

/* trec_eval's order of two rows: score descending (as C floats when ord_single), then docno
 * descending (strcmp) */
static const void *ord_score;
static const char *ord_docno;
static Py_ssize_t ord_width;
static int ord_double, ord_single;

static inline double score_of(int64_t x)
{
    if (!ord_double)
        return ((const float *)ord_score)[x];
    const double v = ((const double *)ord_score)[x];
    return ord_single ? (double)(float)v : v;      /* beyond float's range: +-inf, as C's float */
}

static inline int trec_before(int64_t x, int64_t y)
{
    if (!ord_score)
        return memcmp(ord_docno + x * ord_width, ord_docno + y * ord_width, ord_width) < 0;
    const double a = score_of(x), b = score_of(y);
    if (a != b)
        return a > b;
    return memcmp(ord_docno + x * ord_width, ord_docno + y * ord_width, ord_width) > 0;
}

static int trec_cmp(const void *pa, const void *pb)
{
    const int64_t x = *(const int64_t *)pa, y = *(const int64_t *)pb;
    return trec_before(x, y) ? -1 : trec_before(y, x) ? 1 : (x > y) - (x < y);
}

PyDoc_STRVAR(trec_sort_doc,
"trec_sort(score, single, docno, width, items, bounds, starts=None) -> groups out of order\n\n"
"Each group items[bounds[g]:bounds[g + 1]] (int64 rows, sorted in place) in trec_eval's order:\n"
"score descending (score: float32 or float64; compared as C floats when single), then docno\n"
"descending (rows of width bytes, zero-padded: compared as strcmp); with score None, docno\n"
"ascending (a qrels' order). Ties keep row order. A group found already in that order (one\n"
"pass) is left as it is. With items None, group g is the rows starts[g] to\n"
"starts[g] + bounds[g + 1] - bounds[g] - 1, only checked: nothing is sorted.");

/* row m of group k: items[m], or with no items starts[k] + m - bounds[k] */
static inline int64_t group_row(const int64_t *items, const int64_t *starts, const int64_t *bounds,
                                Py_ssize_t k, int64_t m)
{
    return items ? items[m] : starts[k] + (m - bounds[k]);
}

static PyObject *trec_sort(PyObject *self, PyObject *args)
{
    PyObject *objs[2], *items_o, *bounds_o, *starts_o = Py_None;
    Py_ssize_t width;
    int single;
    Py_buffer v[2], sb;                                           /* score, docno; starts */
    Groups g;
    if (!PyArg_ParseTuple(args, "OpOnOO|O:trec_sort", &objs[0], &single, &objs[1], &width, &items_o, &bounds_o,
                          &starts_o))
        return NULL;
    if (width < 1 || (items_o == Py_None) == (starts_o == Py_None)) {
        PyErr_SetString(PyExc_ValueError, "width < 1, or not one of items and starts");
        return NULL;
    }
    const int by_docno = objs[0] == Py_None;
    if (PyObject_GetBuffer(by_docno ? objs[1] : objs[0], &v[0], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    if (PyObject_GetBuffer(objs[1], &v[1], PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&v[0]);
        return NULL;
    }
    if (groups_get(&g, items_o, bounds_o, 1) < 0) {
        release_buffers(v, 2);
        return NULL;
    }
    const int has_starts = starts_o != Py_None;
    if (has_starts && PyObject_GetBuffer(starts_o, &sb, PyBUF_C_CONTIGUOUS) < 0) {
        groups_release(&g);
        release_buffers(v, 2);
        return NULL;
    }
    const char *f = v[0].format ? v[0].format : "B";
    if (*f == '<' || *f == '=' || *f == '@')
        f++;
    Py_ssize_t unsorted = 0;
    const Py_ssize_t nrows = by_docno ? v[1].len / width : v[0].len / (v[0].itemsize ? v[0].itemsize : 1);
    const Py_ssize_t ngroups = g.bounds.len / 8 - 1;
    const int64_t *bounds = g.bounds.buf, *starts = has_starts ? sb.buf : NULL;
    int64_t *items = g.has_items ? g.items.buf : NULL;
    const Py_ssize_t nitems = items ? g.items.len / 8 : (ngroups >= 0 ? bounds[ngroups] : 0);
    if (!(by_docno || (*f == 'd' && v[0].itemsize == 8) || (*f == 'f' && v[0].itemsize == 4)) || v[1].len < nrows * width
        || (has_starts && sb.len / 8 < ngroups)) {
        PyErr_SetString(PyExc_ValueError, "score must be float32 or float64, docno and starts fit");
        unsorted = -1;
    }
    else {
        ord_score = by_docno ? NULL : v[0].buf;
        ord_docno = v[1].buf;
        ord_width = width;
        ord_double = *f == 'd';
        ord_single = single;
        for (Py_ssize_t k = 0; k < ngroups && unsorted >= 0; k++) {
            const int64_t a = bounds[k], b = bounds[k + 1];
            if (a < 0 || b > nitems || a > b) {
                PyErr_SetString(PyExc_IndexError, "bounds outside the items");
                unsorted = -1;
                break;
            }
            for (int64_t m = a; m < b; m++) {
                const int64_t r = group_row(items, starts, bounds, k, m);
                if (r < 0 || r >= nrows) {
                    PyErr_SetString(PyExc_IndexError, "a row outside the scores");
                    unsorted = -1;
                    break;
                }
            }
            if (unsorted < 0)
                break;
            int64_t m = a + 1;
            while (m < b && trec_before(group_row(items, starts, bounds, k, m - 1), group_row(items, starts, bounds, k, m)))
                m++;
            if (m < b) {
                if (items)
                    qsort(items + a, b - a, sizeof(int64_t), trec_cmp);
                unsorted++;
            }
        }
    }
    if (has_starts)
        PyBuffer_Release(&sb);
    groups_release(&g);
    release_buffers(v, 2);
    return unsorted < 0 ? NULL : PyLong_FromSsize_t(unsorted);
}

PyDoc_STRVAR(block_items_doc,
"block_items(starts, sizes) -> bytearray\n\n"
"The int64 rows starts[0] .. starts[0] + sizes[0] - 1, then those of block 1, and so on.");

static PyObject *block_items(PyObject *self, PyObject *args)
{
    PyObject *objs[2];
    Py_buffer v[2];
    if (!PyArg_ParseTuple(args, "OO:block_items", &objs[0], &objs[1]) || get_buffers(objs, v, 2) < 0)
        return NULL;
    const int64_t *starts = v[0].buf, *sizes = v[1].buf;
    const Py_ssize_t nb = v[0].len / 8;
    Py_ssize_t n = 0;
    PyObject *out = NULL;
    for (Py_ssize_t k = 0; k < nb; k++)
        n += sizes[k] > 0 ? sizes[k] : 0;
    if (v[1].len != v[0].len)
        PyErr_SetString(PyExc_ValueError, "starts and sizes differ in length");
    else if ((out = new_items(n, 8))) {
        int64_t *items = (int64_t *)PyByteArray_AS_STRING(out);
        for (Py_ssize_t k = 0; k < nb; k++)
            for (int64_t j = 0; j < sizes[k]; j++)
                *items++ = starts[k] + j;
    }
    release_buffers(v, 2);
    return out;
}

/* strings a (width wa) and b (width wb), zero-padded, equal */
static inline int same_string(const char *a, Py_ssize_t wa, const char *b, Py_ssize_t wb)
{
    const Py_ssize_t w = wa < wb ? wa : wb;
    if (memcmp(a, b, w) != 0)
        return 0;
    for (Py_ssize_t j = w; j < wa; j++)
        if (a[j])
            return 0;
    for (Py_ssize_t j = w; j < wb; j++)
        if (b[j])
            return 0;
    return 1;
}

PyDoc_STRVAR(grade_lookup_doc,
"grade_lookup(docno, width, items, starts, bounds, codes, keys, table, bits, q_bounds, q_docno,\n"
"             q_width, q_grade) -> (grades, exact)\n\n"
"The qrels grade of each row of the groups (group g, of topic codes[g]: items[bounds[g]:\n"
"bounds[g + 1]], int64 rows, or with items None the rows from starts[g] on), as int16 in that\n"
"order: -1 when not judged, -2 when judged negative. Topic c's judgements are q_bounds[c] to\n"
"q_bounds[c + 1] - 1 of keys (topic_keys of their docnos' hashes), q_docno (rows of q_width\n"
"bytes) and q_grade (int64). A row's key, topic_keys(hash_strings(docno), code), is looked for\n"
"among its topic's keys (a few: one by one; else in the key_table(keys, bits) table) and\n"
"confirmed on the docno; exact is False when a key matched another document (a hash\n"
"collision: the grades are then not all found).");

static PyObject *grade_lookup(PyObject *self, PyObject *args)
{
    PyObject *objs[10], *items_o, *starts_o;
    Py_ssize_t width, q_width;
    int bits;
    Py_buffer v[10];   /* docno, items or starts, bounds, codes, keys, table, q_bounds, q_docno, q_grade */
    if (!PyArg_ParseTuple(args, "OnOOOOOOiOOnO:grade_lookup", &objs[0], &width, &items_o, &starts_o, &objs[2],
                          &objs[3], &objs[4], &objs[5], &bits, &objs[6], &objs[7], &q_width, &objs[8]))
        return NULL;
    if (bits < 1 || bits > 62 || width < 1 || q_width < 1 || (items_o == Py_None) == (starts_o == Py_None)) {
        PyErr_SetString(PyExc_ValueError, "bits or a width out of range, or not one of items and starts");
        return NULL;
    }
    const int has_items = items_o != Py_None;
    objs[1] = has_items ? items_o : starts_o;
    if (get_buffers(objs, v, 9) < 0)
        return NULL;
    const uint64_t *keys = v[4].buf;
    const char *docno = v[0].buf, *q_docno = v[7].buf;
    const int64_t *items = has_items ? v[1].buf : NULL, *starts = has_items ? NULL : v[1].buf;
    const int64_t *bounds = v[2].buf, *codes = v[3].buf, *table = v[5].buf;
    const int64_t *q_bounds = v[6].buf, *q_grade = v[8].buf;
    const Py_ssize_t ngroups = v[2].len / 8 - 1, nrows = v[0].len / width;
    const Py_ssize_t nitems = has_items ? v[1].len / 8 : (ngroups >= 0 ? bounds[ngroups] : 0);
    const Py_ssize_t ntopics = v[6].len / 8 - 1, nkeys = v[4].len / 8;
    const uint64_t size = (uint64_t)1 << bits, mask = size - 1;
    const int shift = 64 - bits;
    PyObject *out_b = NULL;
    int exact = 1;
    if ((uint64_t)v[5].len != size * sizeof(int64_t) || v[3].len / 8 < ngroups || (!has_items && v[1].len / 8 < ngroups)
        || ntopics < 0 || q_bounds[ntopics] > nkeys || v[8].len / 8 < nkeys || v[7].len < nkeys * q_width) {
        PyErr_SetString(PyExc_ValueError, "the table, codes, starts or judgements do not fit");
        goto done;
    }
    if (!(out_b = new_items(nitems, 2)))
        goto done;
    int16_t *out = (int16_t *)PyByteArray_AS_STRING(out_b);
    for (Py_ssize_t k = 0; k < ngroups; k++) {
        const int64_t a = bounds[k], b = bounds[k + 1], c = codes[k];
        if (a < 0 || b > nitems || a > b || c < 0 || c >= ntopics) {
            PyErr_SetString(PyExc_IndexError, "bounds or a topic code out of range");
            Py_CLEAR(out_b);
            goto done;
        }
        const uint64_t salt = (uint64_t)(c + 1) * 0x9E3779B97F4A7C15ULL;
        const int64_t qa = q_bounds[c], qb = q_bounds[c + 1];
        /* a topic's few judgements: their docnos' first 8 bytes, which most rows match none of */
        uint64_t head[16];
        const int few = qb - qa <= 16;
        for (int64_t j = qa; few && j < qb; j++) {
            head[j - qa] = 0;
            memcpy(&head[j - qa], q_docno + j * q_width, q_width < 8 ? (size_t)q_width : 8);
        }
        for (int64_t m = a; m < b; m++) {
            const int64_t r = group_row(items, starts, bounds, k, m);
            if (r < 0 || r >= nrows) {
                PyErr_SetString(PyExc_IndexError, "a row outside the docnos");
                Py_CLEAR(out_b);
                goto done;
            }
            const char *row = docno + r * width;
            if (few) {
                uint64_t first = 0;
                memcpy(&first, row, width < 8 ? (size_t)width : 8);
                int64_t j = qa;
                while (j < qb && head[j - qa] != first)
                    j++;
                if (j == qb) {
                    out[m] = -1;
                    continue;
                }
            }
            uint64_t h;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            if (width <= 16 && r + 16 / width + 1 < nrows) {   /* 16 bytes inside the rows: two words */
                uint64_t lo, hi;
                memcpy(&lo, row, 8);
                memcpy(&hi, row + 8, 8);
                lo = low_bytes(lo, width);
                hi = low_bytes(hi, width - 8);
                h = 0xCBF29CE484222325ULL;
                if (lo)
                    h = (h ^ lo) * 0x100000001B3ULL;
                if (hi)
                    h = (h ^ hi) * 0x100000001B3ULL;
                h = fmix64(h);
            }
            else
#endif
                h = token_hash((const unsigned char *)row, width);
            const uint64_t key = fmix64(h ^ salt);
            int64_t at = -1;
            if (few) {                        /* compared one by one, in cache */
                for (int64_t j = qa; j < qb; j++)
                    if (keys[j] == key) {
                        at = j;
                        break;
                    }
            }
            else {
                uint64_t slot = key_slot(key, shift);
                while ((at = table[slot]) >= 0 && keys[at] != key)
                    slot = (slot + 1) & mask;
            }
            int16_t grade = -1;
            if (at >= 0) {
                if (at >= qa && at < qb && same_string(row, width, q_docno + at * q_width, q_width))
                    grade = q_grade[at] < 0 ? -2 : (int16_t)q_grade[at];
                else
                    exact = 0;
            }
            out[m] = grade;
        }
    }
done:
    release_buffers(v, 9);
    if (!out_b)
        return NULL;
    return Py_BuildValue("(NO)", out_b, exact ? Py_True : Py_False);
}

static PyMethodDef methods[] = {
    {"tokenize", tokenize, METH_VARARGS, tokenize_doc},
    {"parse_floats", parse_floats, METH_VARARGS, parse_floats_doc},
    {"gather", gather, METH_VARARGS, gather_doc},
    {"hash_strings", hash_strings, METH_VARARGS, hash_strings_doc},
    {"topic_keys", topic_keys, METH_VARARGS, topic_keys_doc},
    {"key_table", key_table, METH_VARARGS, key_table_doc},
    {"key_probe", key_probe, METH_VARARGS, key_probe_doc},
    {"read_run", read_run, METH_VARARGS, read_run_doc},
    {"has_repeat", has_repeat, METH_VARARGS, has_repeat_doc},
    {"trec_sort", trec_sort, METH_VARARGS, trec_sort_doc},
    {"block_items", block_items, METH_VARARGS, block_items_doc},
    {"grade_lookup", grade_lookup, METH_VARARGS, grade_lookup_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "maxent._ctrec",
    "The TREC readers' per-byte loops in C (see maxent/_ctrec.c), used by maxent.trec.",
    -1, methods,
};

PyMODINIT_FUNC PyInit__ctrec(void)
{
    init_pow10l();
    if (PyType_Ready(&BufferType) < 0)
        return NULL;
    return PyModule_Create(&module);
}
