/* Row-wise work over Arrow large_string arrays that Arrow has no kernel for, without a Python
 * object per row. Each function takes arrays as their buffers (int64 offsets and UTF-8 data,
 * through the buffer protocol) plus the array's offset, and answers in bytes objects that
 * numpy and Arrow read without copying.
 *
 * - contains_rows: `needle in hay` per row (the columnar `contains`), by memmem. A byte search
 *   is a character search here: in valid UTF-8 a needle's bytes can only match at character
 *   boundaries.
 * - first_difference and slice_chars: the pieces of exact_match's and contains's failure
 *   reasons (where two texts first differ, in characters; up to N characters from a byte
 *   position, and whether Python's repr() would print them unescaped between single quotes,
 *   decided with Python's own Py_UNICODE_ISPRINTABLE).
 */
#define _GNU_SOURCE
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* contains_rows(hay_offsets, hay_data, needle_offsets, needle_data, n, hay_start, needle_start)
 * -> bytes of n 0/1 values: row i is 1 when needle i occurs in hay i. *_start are the arrays'
 * Arrow offsets (a slice starts part-way into its offsets buffer). */
static PyObject *contains_rows(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer ho, hd, no, nd;
    Py_ssize_t n, hs, ns;
    if (!PyArg_ParseTuple(args, "y*y*y*y*nnn", &ho, &hd, &no, &nd, &n, &hs, &ns))
        return NULL;
    PyObject *out = NULL;
    if (n < 0 || hs < 0 || ns < 0 || (size_t)ho.len < (size_t)(hs + n + 1) * sizeof(int64_t) ||
        (size_t)no.len < (size_t)(ns + n + 1) * sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "offsets buffers are shorter than the rows given");
        goto done;
    }
    const int64_t *hoff = (const int64_t *)ho.buf + hs, *noff = (const int64_t *)no.buf + ns;
    if (n > 0 && (hoff[0] < 0 || noff[0] < 0 || hoff[n] > hd.len || noff[n] > nd.len)) {
        PyErr_SetString(PyExc_ValueError, "offsets point outside the data buffers");
        goto done;
    }
    out = PyBytes_FromStringAndSize(NULL, n);
    if (out == NULL)
        goto done;
    char *res = PyBytes_AS_STRING(out);
    const char *hay = hd.buf, *needle = nd.buf;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t h0 = hoff[i], h1 = hoff[i + 1], n0 = noff[i], n1 = noff[i + 1];
        if (h1 < h0 || n1 < n0) {
            bad = 1;
            break;
        }
        size_t nlen = (size_t)(n1 - n0), hlen = (size_t)(h1 - h0);
        res[i] = nlen == 0 || (nlen <= hlen && memmem(hay + h0, hlen, needle + n0, nlen) != NULL);
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        Py_CLEAR(out);
        PyErr_SetString(PyExc_ValueError, "offsets are not monotonic");
    }
done:
    PyBuffer_Release(&ho);
    PyBuffer_Release(&hd);
    PyBuffer_Release(&no);
    PyBuffer_Release(&nd);
    return out;
}

typedef struct {
    Py_buffer off, data;
    const int64_t *o;
    Py_ssize_t n;
} Column;

/* Borrow an array's buffers; o points at its first offset. Sets an error and returns -1 when
 * the offsets do not cover n rows. */
static int column_open(Column *c, PyObject *off, PyObject *data, Py_ssize_t start, Py_ssize_t n)
{
    if (PyObject_GetBuffer(off, &c->off, PyBUF_SIMPLE) < 0)
        return -1;
    if (PyObject_GetBuffer(data, &c->data, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&c->off);
        return -1;
    }
    c->n = n;
    c->o = (const int64_t *)c->off.buf + start;
    if (start < 0 || n < 0 || (size_t)c->off.len < (size_t)(start + n + 1) * sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "offsets buffer is shorter than the rows given");
        PyBuffer_Release(&c->off);
        PyBuffer_Release(&c->data);
        return -1;
    }
    return 0;
}

static void column_close(Column *c)
{
    PyBuffer_Release(&c->off);
    PyBuffer_Release(&c->data);
}

/* Row r's bytes, or 0 when r is out of range or its offsets point outside the data. */
static int value(const Column *c, int64_t r, const unsigned char **p, int64_t *len)
{
    if (r < 0 || r >= c->n)
        return 0;
    int64_t a = c->o[r], b = c->o[r + 1];
    if (a < 0 || b < a || b > c->data.len)
        return 0;
    *p = (const unsigned char *)c->data.buf + a;
    *len = b - a;
    return 1;
}

/* Decode one UTF-8 character at s[i] (i < n); returns its length (1 for a stray byte). */
static int utf8_char(const unsigned char *s, int64_t i, int64_t n, Py_UCS4 *ch)
{
    unsigned char c = s[i];
    int len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (i + len > n)
        len = 1;
    Py_UCS4 v = len == 1 ? c : c & (0x7F >> len);
    for (int k = 1; k < len; k++)
        v = (v << 6) | (s[i + k] & 0x3F);
    *ch = v;
    return len;
}

/* Py_UNICODE_ISPRINTABLE for the Basic Multilingual Plane, one bit a character, filled from
 * Python's own tables when the module loads: a bit test instead of a two-level table lookup
 * for every quoted CJK character. */
static unsigned char printable_bmp[0x10000 / 8];

static int is_printable(Py_UCS4 ch)
{
    if (ch < 0x10000)
        return (printable_bmp[ch >> 3] >> (ch & 7)) & 1;
    return Py_UNICODE_ISPRINTABLE(ch) != 0;
}

static int fill_printable(PyObject *module)
{
    (void)module;
    for (Py_UCS4 ch = 0; ch < 0x10000; ch++)
        if (Py_UNICODE_ISPRINTABLE(ch))
            printable_bmp[ch >> 3] |= (unsigned char)(1 << (ch & 7));
    return 0;
}

/* first_difference(a_off, a_data, a_start, a_n, b_off, b_data, b_start, b_n, rows)
 * -> (chars, a_pos, b_pos): for each row index in rows (int64), the index in characters of the
 * first character where a and b differ (the shorter length when one is a prefix of the other),
 * and its byte position in each. Rows that cannot be read get -1. */
static PyObject *first_difference(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *ao, *ad, *bo, *bd;
    Py_ssize_t as, an, bs, bn;
    Py_buffer rows;
    if (!PyArg_ParseTuple(args, "OOnnOOnny*", &ao, &ad, &as, &an, &bo, &bd, &bs, &bn, &rows))
        return NULL;
    Column a, b;
    PyObject *result = NULL;
    if (column_open(&a, ao, ad, as, an) < 0)
        goto release_rows;
    if (column_open(&b, bo, bd, bs, bn) < 0)
        goto close_a;
    Py_ssize_t m = rows.len / (Py_ssize_t)sizeof(int64_t);
    PyObject *chars = PyBytes_FromStringAndSize(NULL, m * 8), *apos = PyBytes_FromStringAndSize(NULL, m * 8),
             *bpos = PyBytes_FromStringAndSize(NULL, m * 8);
    if (chars && apos && bpos) {
        const int64_t *r = rows.buf;
        int64_t *ci = (int64_t *)PyBytes_AS_STRING(chars), *ap = (int64_t *)PyBytes_AS_STRING(apos),
                *bp = (int64_t *)PyBytes_AS_STRING(bpos);
        for (Py_ssize_t k = 0; k < m; k++) {
            const unsigned char *x, *y;
            int64_t xn, yn;
            if (!value(&a, r[k], &x, &xn) || !value(&b, r[k], &y, &yn)) {
                ci[k] = ap[k] = bp[k] = -1;
                continue;
            }
            int64_t n = xn < yn ? xn : yn, p = 0, count = 0;
            while (p < n && x[p] == y[p])
                count += (x[p++] & 0xC0) != 0x80;
            while (p > 0 && p < xn && (x[p] & 0xC0) == 0x80) {  /* back to the start of the character */
                p--;
                count -= (x[p] & 0xC0) != 0x80;
            }
            ci[k] = count;
            ap[k] = bp[k] = p;
        }
        result = PyTuple_Pack(3, chars, apos, bpos);
    }
    Py_XDECREF(chars);
    Py_XDECREF(apos);
    Py_XDECREF(bpos);
    column_close(&b);
close_a:
    column_close(&a);
release_rows:
    PyBuffer_Release(&rows);
    return result;
}

/* slice_chars(off, data, start, n, rows, from, max_chars) -> (offsets, data, plain, more):
 * for each row index in rows, up to max_chars characters from byte position from[k] (int64;
 * an empty buffer means 0), as a new large_string array's buffers; plain[k] is 1 when Python's
 * repr() of that text is the text between single quotes (every character printable, none of
 * ' " \), more[k] is 1 when characters remain after it. An unreadable row gives "" (not plain). */
static PyObject *slice_chars(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *off, *data;
    Py_ssize_t start, n, max_chars;
    Py_buffer rows, from;
    if (!PyArg_ParseTuple(args, "OOnny*y*n", &off, &data, &start, &n, &rows, &from, &max_chars))
        return NULL;
    Column c;
    PyObject *result = NULL, *offs = NULL, *out = NULL, *plain = NULL, *more = NULL;
    if (max_chars < 0)
        max_chars = 0;
    if (column_open(&c, off, data, start, n) < 0)
        goto release;
    Py_ssize_t m = rows.len / (Py_ssize_t)sizeof(int64_t);
    const int64_t *r = rows.buf, *f = from.len ? from.buf : NULL;
    if (f && from.len / (Py_ssize_t)sizeof(int64_t) < m) {
        PyErr_SetString(PyExc_ValueError, "fewer positions than rows");
        goto close;
    }
    /* at most 4 bytes a character: one pass into a buffer of that size, cut to length after */
    offs = PyBytes_FromStringAndSize(NULL, (m + 1) * 8);
    out = PyBytes_FromStringAndSize(NULL, m * max_chars * 4);
    plain = PyBytes_FromStringAndSize(NULL, m);
    more = PyBytes_FromStringAndSize(NULL, m);
    if (!offs || !out || !plain || !more)
        goto close;
    int64_t *o = (int64_t *)PyBytes_AS_STRING(offs), pos = 0;
    char *d = PyBytes_AS_STRING(out), *pl = PyBytes_AS_STRING(plain), *mo = PyBytes_AS_STRING(more);
    for (Py_ssize_t k = 0; k < m; k++) {
        const unsigned char *s;
        int64_t len, i = f ? f[k] : 0, chars = 0, j;
        o[k] = pos;
        pl[k] = mo[k] = 0;
        if (!value(&c, r[k], &s, &len) || i < 0 || i > len)
            continue;
        int ok = 1;
        for (j = i; j < len && chars < max_chars; chars++) {
            if (s[j] < 0x80) {  /* ASCII: printable and not ' " \ */
                unsigned char b = s[j++];
                ok &= b >= 0x20 && b < 0x7F && b != '\'' && b != '"' && b != '\\';
                continue;
            }
            Py_UCS4 ch;
            j += utf8_char(s, j, len, &ch);
            ok &= is_printable(ch);
        }
        memcpy(d + pos, s + i, (size_t)(j - i));
        pos += j - i;
        pl[k] = (char)ok;
        mo[k] = j < len;
    }
    o[m] = pos;
    if (_PyBytes_Resize(&out, pos) < 0)
        goto close;
    result = PyTuple_Pack(4, offs, out, plain, more);
close:
    Py_XDECREF(offs);
    Py_XDECREF(out);
    Py_XDECREF(plain);
    Py_XDECREF(more);
    column_close(&c);
release:
    PyBuffer_Release(&rows);
    PyBuffer_Release(&from);
    return result;
}

static PyMethodDef methods[] = {
    {"first_difference", first_difference, METH_VARARGS,
     "first_difference(a_off, a_data, a_start, a_n, b_off, b_data, b_start, b_n, rows) -> (chars, a_pos, b_pos)"},
    {"slice_chars", slice_chars, METH_VARARGS,
     "slice_chars(off, data, start, n, rows, from, max_chars) -> (offsets, data, plain, more)"},
    {"contains_rows", contains_rows, METH_VARARGS,
     "contains_rows(hay_offsets, hay_data, needle_offsets, needle_data, n, hay_start, needle_start) -> bytes\n"
     "One 0/1 byte per row: whether the row's needle occurs in its haystack (int64 Arrow offsets)."},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, fill_printable},
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernels", "Row-wise substring search over Arrow string buffers.", 0, methods, slots,
};

PyMODINIT_FUNC PyInit__kernels(void) { return PyModuleDef_Init(&module); }
