/* Token-set similarity (jaccard, cosine) for assay.graders.similarity, without Python objects
 * per token.
 *
 * The tokenizer is the one documented in similarity.py, whose pure-Python version is the
 * reference; tests/graders/test_tokens.py checks that the two agree. Each text is lower-cased
 * and classified into a buffer of code points, cut into token spans, and each token becomes a
 * 64-bit hash. Two texts are then compared through one open-addressing table that counts each
 * hash on both sides, which gives set sizes, intersection, dot product and norms in one pass.
 * With at most a few thousand tokens per text, a 64-bit collision is astronomically unlikely.
 *
 * All buffers live in a Work struct owned by one call (no global state), reused across the
 * pairs of a batch.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Scripts written without spaces. MIRRORS _UNSPACED_RANGES in similarity.py: change both. */
static const Py_UCS4 UNSPACED[][2] = {
    {0x0E00, 0x0EFF}, {0x1000, 0x109F}, {0x1780, 0x17FF}, {0x3040, 0x30FF},
    {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xF900, 0xFAFF}, {0x20000, 0x2FA1F},
};
/* Punctuation outside ASCII. MIRRORS _PUNCT_RANGES in similarity.py: change both. */
static const Py_UCS4 PUNCT[][2] = {
    {0x00A0, 0x00BF}, {0x00D7, 0x00D7}, {0x00F7, 0x00F7}, {0x2000, 0x206F}, {0x3000, 0x303F},
    {0xFF00, 0xFF0F}, {0xFF1A, 0xFF20}, {0xFF3B, 0xFF40}, {0xFF5B, 0xFF65},
};
#define N_RANGES(r) (sizeof(r) / sizeof((r)[0]))

enum { SEP, WORD, UNSP };  /* character classes */

static int in_ranges(Py_UCS4 c, const Py_UCS4 (*r)[2], size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (c >= r[i][0] && c <= r[i][1])
            return 1;
    return 0;
}

/* Lower-case one code point the way similarity._lower does for a whole string. */
static Py_UCS4 lower(Py_UCS4 c)
{
    if (c < 128)
        return (c >= 'A' && c <= 'Z') ? c + 32 : c;
    if (c == 0x130)  /* İ: str.lower() gives "i" + combining dot; we keep the plain i */
        return 'i';
    c = Py_UNICODE_TOLOWER(c);
    return c == 0x3C2 ? 0x3C3 : c;  /* final sigma ς is the same letter as σ */
}

static unsigned char classify(Py_UCS4 c)  /* c is already lower-cased */
{
    if (c < 128)
        return ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_') ? WORD : SEP;
    if (c >= 0x0E00 && in_ranges(c, UNSPACED, N_RANGES(UNSPACED)))
        return UNSP;
    if (Py_UNICODE_ISSPACE(c) || in_ranges(c, PUNCT, N_RANGES(PUNCT)))
        return SEP;
    return WORD;
}

typedef struct {
    uint64_t key;     /* token hash, 0 = empty slot */
    uint32_t n[2];    /* occurrences in text a and text b */
} Slot;

typedef struct {
    Py_UCS4 *text;          /* lower-cased code points of the current text */
    unsigned char *cls;     /* their classes */
    Py_ssize_t *span;       /* token i is text[span[2i] .. span[2i] + span[2i+1]) */
    uint64_t *hash[2];      /* token hashes of text a and text b */
    Slot *table;
    Py_ssize_t cap, table_cap;  /* code points the buffers hold; slots in the table */
} Work;

static void work_free(Work *w)
{
    PyMem_Free(w->text); PyMem_Free(w->cls); PyMem_Free(w->span);
    PyMem_Free(w->hash[0]); PyMem_Free(w->hash[1]); PyMem_Free(w->table);
    memset(w, 0, sizeof *w);
}

/* Grow every per-text buffer to hold n code points (a text of n code points has <= n tokens). */
static int work_reserve(Work *w, Py_ssize_t n)
{
    if (n <= w->cap)
        return 0;
    n = n < 256 ? 256 : n + n / 2;
    if ((size_t)n > PY_SSIZE_T_MAX / (2 * sizeof(Py_ssize_t))) {
        PyErr_NoMemory();
        return -1;
    }
    void *p;
#define GROW(field, size) \
    if (!(p = PyMem_Realloc(w->field, (size_t)n * (size)))) { PyErr_NoMemory(); return -1; } \
    w->field = p;
    GROW(text, sizeof(Py_UCS4)) GROW(cls, 1) GROW(span, 2 * sizeof(Py_ssize_t))
    GROW(hash[0], sizeof(uint64_t)) GROW(hash[1], sizeof(uint64_t))
#undef GROW
    w->cap = n;
    return 0;
}

/* Lower-case and classify s into w->text / w->cls, then cut it into token spans; returns the
 * number of tokens or -1 on error. */
static Py_ssize_t scan(Work *w, PyObject *s)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s), k = 0;
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    if (work_reserve(w, n) < 0)
        return -1;
    Py_UCS4 *t = w->text;
    unsigned char *cls = w->cls;
    for (Py_ssize_t i = 0; i < n; i++) {
        t[i] = lower(PyUnicode_READ(kind, data, i));
        cls[i] = classify(t[i]);
    }
    Py_ssize_t *span = w->span;
    for (Py_ssize_t i = 0; i < n;) {
        unsigned char c = cls[i];
        Py_ssize_t j = i + 1;
        if (c == SEP) { i = j; continue; }
        while (j < n && cls[j] == c)
            j++;
        if (c == WORD || j - i == 1) {  /* a word, or a lone unspaced character */
            span[2 * k] = i; span[2 * k + 1] = j - i; k++;
        }
        else {  /* a run of unspaced characters: its overlapping bigrams */
            for (Py_ssize_t p = i; p + 1 < j; p++) {
                span[2 * k] = p; span[2 * k + 1] = 2; k++;
            }
        }
        i = j;
    }
    return k;
}

/* murmur3's 64-bit finaliser: every input bit affects every output bit. */
static uint64_t fmix64(uint64_t h)
{
    h ^= h >> 33; h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

static uint64_t hash_token(const Py_UCS4 *t, Py_ssize_t len)
{
    /* Each step is a bijection of h for a given code point, so equal-length tokens that differ
     * in one place never collide before the finaliser. */
    uint64_t h = 0x243f6a8885a308d3ULL ^ (uint64_t)len;
    for (Py_ssize_t i = 0; i < len; i++) {
        h = (h ^ t[i]) * 0x9e3779b97f4a7c15ULL;
        h ^= h >> 32;
    }
    h = fmix64(h);
    return h ? h : 1;  /* 0 marks an empty slot */
}

/* Tokens of s as hashes into w->hash[side]; returns their number or -1. */
static Py_ssize_t hash_text(Work *w, PyObject *s, int side)
{
    Py_ssize_t k = scan(w, s);
    for (Py_ssize_t i = 0; i < k; i++)
        w->hash[side][i] = hash_token(w->text + w->span[2 * i], w->span[2 * i + 1]);
    return k;
}

typedef struct {
    int64_t distinct[2], common;  /* set sizes and intersection (jaccard) */
    int64_t dot, sq[2];           /* dot product and squared norms of the counts (cosine) */
} Stats;

/* Count both token lists in one table; every statistic is updated incrementally. */
static int compare(Work *w, const Py_ssize_t len[2], Stats *st)
{
    if (len[0] > (Py_ssize_t)UINT32_MAX || len[1] > (Py_ssize_t)UINT32_MAX) {  /* Slot.n is 32-bit */
        PyErr_SetString(PyExc_OverflowError, "text too long to compare");
        return -1;
    }
    Py_ssize_t cap = 16;
    while (cap < 2 * (len[0] + len[1]))  /* load factor <= 1/2 */
        cap *= 2;
    if (cap > w->table_cap) {
        PyMem_Free(w->table);
        w->table = PyMem_Malloc((size_t)cap * sizeof(Slot));
        w->table_cap = w->table ? cap : 0;
        if (!w->table) { PyErr_NoMemory(); return -1; }
    }
    Slot *tab = w->table;
    size_t mask = (size_t)cap - 1;
    memset(tab, 0, (size_t)cap * sizeof(Slot));
    memset(st, 0, sizeof *st);
    for (int side = 0; side < 2; side++) {
        for (Py_ssize_t i = 0; i < len[side]; i++) {
            uint64_t key = w->hash[side][i];
            size_t at = (size_t)key & mask;
            while (tab[at].key && tab[at].key != key)
                at = (at + 1) & mask;
            Slot *sl = &tab[at];
            sl->key = key;
            uint32_t before = sl->n[side]++;
            st->sq[side] += 2 * (int64_t)before + 1;   /* (c+1)^2 - c^2 */
            st->dot += sl->n[!side];                    /* the other side's count */
            if (before == 0) {
                st->distinct[side]++;
                if (sl->n[!side])
                    st->common++;
            }
        }
    }
    return 0;
}

static int equal(PyObject *a, PyObject *b)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(a);
    return a == b || (n == PyUnicode_GET_LENGTH(b) && PyUnicode_KIND(a) == PyUnicode_KIND(b)
                      && !memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), n * PyUnicode_KIND(a)));
}

/* One score, or -1.0 with an exception set. */
static double score(Work *w, PyObject *a, PyObject *b, int is_cosine)
{
    if (!PyUnicode_Check(a) || !PyUnicode_Check(b)) {
        PyErr_Format(PyExc_TypeError, "expected str, got %.100s and %.100s",
                     Py_TYPE(a)->tp_name, Py_TYPE(b)->tp_name);
        return -1.0;
    }
    if (equal(a, b))
        return 1.0;
    Py_ssize_t len[2];
    Stats st;
    if ((len[0] = hash_text(w, a, 0)) < 0 || (len[1] = hash_text(w, b, 1)) < 0
        || compare(w, len, &st) < 0)
        return -1.0;
    /* Unequal texts without tokens have nothing in common (similarity.py's rule). */
    if (!is_cosine) {
        if (!st.distinct[0] && !st.distinct[1])
            return 0.0;
        return (double)st.common / (double)(st.distinct[0] + st.distinct[1] - st.common);
    }
    if (!len[0] || !len[1] || !st.dot)
        return 0.0;
    double x = (double)st.dot / (sqrt((double)st.sq[0]) * sqrt((double)st.sq[1]));
    /* Round with Python's own round(x, 12) so results match the pure-Python path bit for bit. */
    PyObject *f = PyFloat_FromDouble(x), *r = f ? PyObject_CallMethod(f, "__round__", "i", 12) : NULL;
    Py_XDECREF(f);
    if (!r)
        return -1.0;
    x = PyFloat_AsDouble(r);
    Py_DECREF(r);
    return x > 1.0 ? 1.0 : x;
}

static PyObject *pair(PyObject *const *args, Py_ssize_t nargs, const char *name, int is_cosine)
{
    if (nargs != 2)
        return PyErr_Format(PyExc_TypeError, "%s() takes 2 arguments (%zd given)", name, nargs);
    Work w = {0};
    double x = score(&w, args[0], args[1], is_cosine);
    work_free(&w);
    return x < 0 ? NULL : PyFloat_FromDouble(x);
}

static PyObject *many(PyObject *const *args, Py_ssize_t nargs, const char *name, int is_cosine)
{
    if (nargs != 2)
        return PyErr_Format(PyExc_TypeError, "%s() takes 2 arguments (%zd given)", name, nargs);
    Work w = {0};
    PyObject *list = NULL;
    PyObject *a = PySequence_Fast(args[0], "outputs must be a sequence");
    PyObject *b = a ? PySequence_Fast(args[1], "expected must be a sequence") : NULL;
    Py_ssize_t n = b ? PySequence_Fast_GET_SIZE(a) : 0;
    if (b && n != PySequence_Fast_GET_SIZE(b))
        PyErr_Format(PyExc_ValueError, "%s(): %zd outputs but %zd expected texts", name, n,
                     PySequence_Fast_GET_SIZE(b));
    else if (b)
        list = PyList_New(n);
    for (Py_ssize_t i = 0; list && i < n; i++) {
        /* Own the items while scoring: the sequence could change under us (e.g. via a __del__). */
        PyObject *x = PySequence_Fast_GET_ITEM(a, i), *y = PySequence_Fast_GET_ITEM(b, i);
        Py_INCREF(x);
        Py_INCREF(y);
        double v = score(&w, x, y, is_cosine);
        Py_DECREF(x);
        Py_DECREF(y);
        PyObject *f = v < 0 ? NULL : PyFloat_FromDouble(v);
        if (!f)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, f);
    }
    work_free(&w);
    Py_XDECREF(a);
    Py_XDECREF(b);
    return list;
}

static PyObject *jaccard(PyObject *m, PyObject *const *a, Py_ssize_t n) { return pair(a, n, "jaccard", 0); }
static PyObject *cosine(PyObject *m, PyObject *const *a, Py_ssize_t n) { return pair(a, n, "cosine", 1); }
static PyObject *jaccard_many(PyObject *m, PyObject *const *a, Py_ssize_t n) { return many(a, n, "jaccard_many", 0); }
static PyObject *cosine_many(PyObject *m, PyObject *const *a, Py_ssize_t n) { return many(a, n, "cosine_many", 1); }

static PyObject *tokenize(PyObject *m, PyObject *s)
{
    if (!PyUnicode_Check(s))
        return PyErr_Format(PyExc_TypeError, "expected str, got %.100s", Py_TYPE(s)->tp_name);
    Work w = {0};
    PyObject *list = NULL;
    Py_ssize_t k = scan(&w, s);
    if (k >= 0 && (list = PyList_New(k))) {
        for (Py_ssize_t i = 0; i < k; i++) {
            PyObject *tok = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, w.text + w.span[2 * i],
                                                      w.span[2 * i + 1]);
            if (!tok) {
                Py_CLEAR(list);
                break;
            }
            PyList_SET_ITEM(list, i, tok);
        }
    }
    work_free(&w);
    return list;
}

static PyMethodDef methods[] = {
    {"jaccard", (PyCFunction)(void (*)(void))jaccard, METH_FASTCALL, "jaccard(a, b) -> float: |A & B| / |A | B| of token sets."},
    {"cosine", (PyCFunction)(void (*)(void))cosine, METH_FASTCALL, "cosine(a, b) -> float: cosine of token counts."},
    {"jaccard_many", (PyCFunction)(void (*)(void))jaccard_many, METH_FASTCALL, "jaccard_many(outputs, expected) -> list[float]"},
    {"cosine_many", (PyCFunction)(void (*)(void))cosine_many, METH_FASTCALL, "cosine_many(outputs, expected) -> list[float]"},
    {"tokenize", tokenize, METH_O, "tokenize(text) -> list[str]: the tokens, as similarity.tokenize gives them."},
    {NULL, NULL, 0, NULL},
};

/* The version of similarity.py's scoring rules this file implements (similarity.RULES): a build
 * from older source is recognised and left unused. */
#define RULES 2

static int exec_module(PyObject *m) { return PyModule_AddIntConstant(m, "RULES", RULES); }

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, exec_module},
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "assay.graders._tokens",
    .m_doc = "C tokenizer and token-set similarity for assay.graders.similarity.",
    .m_methods = methods,
    .m_slots = slots,
};

PyMODINIT_FUNC PyInit__tokens(void) { return PyModuleDef_Init(&module); }
