/* The format advisor's passes (sparsroof.advisor.partition), compiled ahead of time.
 *
 * dp is the same program as sparsroof/advisor/_dp.py (numba), operation for operation, so
 * that both give the same partition and the same seconds to the last bit; importing this
 * module costs about a millisecond where numba's start-up costs about a second. strips
 * counts what the program needs of each strip of rows in one sweep over the entries
 * grouped by row, where the numpy route sorts 64-bit keys of every entry twice. Arrays
 * come in through the buffer protocol (C-contiguous), the outputs allocated by the
 * caller. The GIL is released while they run.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* bumped whenever the program changes: the Python side refuses a stale build */
#define KERNEL_VERSION 2

enum { ROWS, NNZ, MAX_LEN, DIAG_PTR, DIAG_OFF, BLOCKS, KINDS, COEF, BEST, CUT, FMT, COST, NBUF };

/* Predicted seconds of one block in format `kind` under the cost row c (const, u, v, w, z):
 * see the docstring of _dp.py for the bytes and slots of each format. */
static double block_cost(int64_t kind, const double *c, double rows, double nnz, double kmax,
                         double ndiag, double nblocks, int64_t b, int64_t cols, int64_t s_v,
                         int64_t s_i) {
    double slots, a;
    if (kind == 0) {
        slots = nnz;
        a = nnz * (double)(s_v + s_i) + (rows + 1) * (double)s_i;
    } else if (kind == 1) {
        slots = nnz;
        a = nnz * (double)(s_v + s_i) + (double)((cols + 1) * s_i);
    } else if (kind == 2) {
        slots = nnz;
        a = nnz * (double)(s_v + 2 * s_i);
    } else if (kind == 3) {
        slots = rows * kmax;
        a = slots * (double)(s_v + s_i);
    } else if (kind == 4) {
        slots = ndiag * rows;
        a = slots * (double)s_v + ndiag * (double)s_i;
    } else {
        slots = nblocks * (double)b * (double)b;
        /* rows is a whole number: (rows + b - 1) // b is the integer quotient */
        double strips = (double)(((int64_t)rows + b - 1) / b);
        a = slots * (double)s_v + nblocks * (double)s_i + (strips + 1) * (double)s_i;
    }
    double mem = c[1] * (a + rows * (double)s_v) + c[2] * rows + c[3] * slots;
    double compute = c[4] * slots;
    return c[0] + (compute > mem ? compute : mem);
}

typedef struct {
    const int64_t *rows, *nnz, *max_len, *diag_ptr, *diag_off, *blocks, *kinds;
    const double *coef;
    double *best, *cost;
    int64_t *cut, *fmt, *stamp;
    int64_t n, nkinds, b, cols, s_v, s_i, max_block, shift;
} Program;

/* best[j]: least time of strips [0, j); cut[j], fmt[j], cost[j]: its last block */
static void run(const Program *p) {
    for (int64_t j = 0; j <= p->n; j++) {
        p->best[j] = j ? INFINITY : 0.0;
        p->cut[j] = p->fmt[j] = 0;
        p->cost[j] = 0.0;
    }
    for (int64_t j = 1; j <= p->n; j++) {
        double r = 0.0, z = 0.0, kmax = 0.0, nd = 0.0, nb = 0.0;
        int dia_alive = 1;
        int64_t stop = j - 1 - p->max_block;
        if (stop < -1) stop = -1;
        for (int64_t i = j - 1; i > stop; i--) {
            r += (double)p->rows[i];
            z += (double)p->nnz[i];
            if ((double)p->max_len[i] > kmax) kmax = (double)p->max_len[i];
            nb += (double)p->blocks[i];
            if (dia_alive) {
                for (int64_t q = p->diag_ptr[i]; q < p->diag_ptr[i + 1]; q++) {
                    int64_t o = p->diag_off[q] + p->shift;
                    if (p->stamp[o] != j) {
                        p->stamp[o] = j;
                        nd += 1;
                    }
                }
            }
            for (int64_t f = 0; f < p->nkinds; f++) {
                int64_t kind = p->kinds[f];
                if (kind == 4 && !dia_alive) continue;
                double t = block_cost(kind, p->coef + 5 * f, r, z, kmax, nd, nb, p->b, p->cols,
                                      p->s_v, p->s_i);
                if (kind == 4 && t >= p->best[j]) dia_alive = 0; /* DIA only grows: prune */
                if (p->best[i] + t < p->best[j]) {
                    p->best[j] = p->best[i] + t;
                    p->cut[j] = i;
                    p->fmt[j] = f;
                    p->cost[j] = t;
                }
            }
        }
    }
}

static const char *NAMES[NBUF] = {"rows", "nnz", "max_len", "diag_ptr", "diag_off", "blocks",
                                  "kinds", "coef", "best", "cut", "fmt", "cost"};

/* dp(rows, nnz, max_len, diag_ptr, diag_off, blocks, b, cols, kinds, coef, s_v, s_i,
 *    max_block, best, cut, fmt, cost): fills best, cut, fmt and cost (n + 1 each) */
static PyObject *dp(PyObject *self, PyObject *args) {
    PyObject *o[NBUF];
    Py_buffer v[NBUF];
    int held = 0;
    long long b, cols, s_v, s_i, max_block;
    if (!PyArg_ParseTuple(args, "OOOOOOLLOOLLLOOOO", &o[ROWS], &o[NNZ], &o[MAX_LEN],
                          &o[DIAG_PTR], &o[DIAG_OFF], &o[BLOCKS], &b, &cols, &o[KINDS],
                          &o[COEF], &s_v, &s_i, &max_block, &o[BEST], &o[CUT], &o[FMT],
                          &o[COST]))
        return NULL;
    for (; held < NBUF; held++) {
        int writable = held >= BEST;
        int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(o[held], &v[held], flags) < 0) goto fail;
        if (v[held].itemsize != 8) {
            PyBuffer_Release(&v[held]);
            PyErr_Format(PyExc_TypeError, "%s: expected 8-byte items", NAMES[held]);
            goto fail;
        }
    }
    Program p = {
        v[ROWS].buf, v[NNZ].buf, v[MAX_LEN].buf, v[DIAG_PTR].buf, v[DIAG_OFF].buf,
        v[BLOCKS].buf, v[KINDS].buf, v[COEF].buf, v[BEST].buf, v[COST].buf, v[CUT].buf,
        v[FMT].buf, NULL,
    };
    p.n = v[ROWS].len / 8;
    p.nkinds = v[KINDS].len / 8;
    p.b = b, p.cols = cols, p.s_v = s_v, p.s_i = s_i, p.max_block = max_block;
    int64_t total_rows = 0;
    for (int64_t i = 0; i < p.n; i++) total_rows += p.rows[i];
    p.shift = total_rows + 1;
    int64_t span = total_rows + cols + 2;
    int64_t ndiag = v[DIAG_OFF].len / 8;
    int ok = v[NNZ].len / 8 == p.n && v[MAX_LEN].len / 8 == p.n && v[BLOCKS].len / 8 == p.n
             && v[DIAG_PTR].len / 8 == p.n + 1 && v[COEF].len / 8 == 5 * p.nkinds
             && v[BEST].len / 8 == p.n + 1 && v[CUT].len / 8 == p.n + 1
             && v[FMT].len / 8 == p.n + 1 && v[COST].len / 8 == p.n + 1 && b >= 1;
    for (int64_t i = 0; ok && i <= p.n; i++)
        ok = p.diag_ptr[i] >= 0 && p.diag_ptr[i] <= ndiag
             && (!i || p.diag_ptr[i] >= p.diag_ptr[i - 1]);
    for (int64_t q = 0; ok && q < ndiag; q++)
        ok = p.diag_off[q] + p.shift >= 0 && p.diag_off[q] + p.shift < span;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "dp: arrays of inconsistent sizes or offsets");
        goto fail;
    }
    p.stamp = malloc((size_t)span * sizeof(int64_t));
    if (!p.stamp) {
        PyErr_NoMemory();
        goto fail;
    }
    for (int64_t k = 0; k < span; k++) p.stamp[k] = -1;
    Py_BEGIN_ALLOW_THREADS
    run(&p);
    Py_END_ALLOW_THREADS
    free(p.stamp);
    for (int k = 0; k < NBUF; k++) PyBuffer_Release(&v[k]);
    Py_RETURN_NONE;
fail:
    for (int k = 0; k < held; k++) PyBuffer_Release(&v[k]);
    return NULL;
}

/* ---- per-strip counts ------------------------------------------------------------ */

static inline int64_t at(const void *a, int wide, int64_t i) {
    return wide ? ((const int64_t *)a)[i] : (int64_t)((const int32_t *)a)[i];
}

typedef struct {
    const void *row, *col;
    int wide;
    int64_t n_entries, rows, cols, size, block, n;
    int64_t *nnz, *max_len, *diag_ptr, *diag_off, *blocks;
} Strips;

/* Row pointers of the entries, and their columns grouped by row (col itself when the
 * entries come in row order, else a copy in *owned); -1 for an index outside the matrix,
 * -2 when out of memory. */
static int group_rows(const Strips *p, int64_t *indptr, const void **grouped, void **owned) {
    int ordered = 1;
    int64_t prev = 0;
    for (int64_t e = 0; e < p->n_entries; e++) {
        int64_t r = at(p->row, p->wide, e), c = at(p->col, p->wide, e);
        if ((uint64_t)r >= (uint64_t)p->rows || (uint64_t)c >= (uint64_t)p->cols) return -1;
        indptr[r + 1]++;
        ordered &= r >= prev;
        prev = r;
    }
    for (int64_t i = 0; i < p->rows; i++) indptr[i + 1] += indptr[i];
    *grouped = p->col;
    if (ordered) return 0;
    size_t item = p->wide ? 8 : 4;
    int64_t *next = malloc((size_t)(p->rows + 1) * sizeof(int64_t));
    char *out = malloc((size_t)(p->n_entries ? p->n_entries : 1) * item);
    if (!next || !out) {
        free(next);
        free(out);
        return -2;
    }
    memcpy(next, indptr, (size_t)(p->rows + 1) * sizeof(int64_t));
    for (int64_t e = 0; e < p->n_entries; e++) {
        int64_t r = at(p->row, p->wide, e);
        memcpy(out + (size_t)next[r]++ * item, (const char *)p->col + (size_t)e * item, item);
    }
    free(next);
    *grouped = *owned = out;
    return 0;
}

/* One sweep over the rows in order: a diagonal is new to strip s when its stamp is not s,
 * a b x b block new to block row br when its column's stamp is not br. */
static void sweep_strips(const Strips *p, const int64_t *indptr, const void *colidx,
                         int64_t *dstamp, int64_t *bstamp) {
    int64_t found = 0;
    for (int64_t s = 0; s < p->n; s++) {
        int64_t lo = s * p->size, hi = lo + p->size < p->rows ? lo + p->size : p->rows;
        int64_t longest = 0;
        p->diag_ptr[s] = found;
        p->nnz[s] = hi > lo ? indptr[hi] - indptr[lo] : 0;
        for (int64_t r = lo; r < hi; r++) {
            int64_t br = r / p->block;
            int64_t strip = br * p->block / p->size;
            if (indptr[r + 1] - indptr[r] > longest) longest = indptr[r + 1] - indptr[r];
            for (int64_t k = indptr[r]; k < indptr[r + 1]; k++) {
                int64_t c = at(colidx, p->wide, k), d = c - r + p->rows;
                if (dstamp[d] != s) {
                    dstamp[d] = s;
                    p->diag_off[found++] = c - r;
                }
                if (bstamp[c / p->block] != br) {
                    bstamp[c / p->block] = br;
                    p->blocks[strip]++;
                }
            }
        }
        p->max_len[s] = longest;
    }
    p->diag_ptr[p->n] = found;
}

enum { S_ROW, S_COL, S_NNZ, S_MAX_LEN, S_DIAG_PTR, S_DIAG_OFF, S_BLOCKS, S_NBUF };

/* strips(row, col, rows, cols, size, block, nnz, max_len, diag_ptr, diag_off, blocks):
 * per strip of `size` rows its entries, longest row, distinct diagonals (their offsets
 * j - i listed in diag_off, strip s at diag_ptr[s]:diag_ptr[s + 1], in no set order;
 * diag_off holds at least one item per entry) and non-empty block x block blocks (a
 * block counted in the strip of its first row). Outputs are int64 and zeroed. */
static PyObject *strips(PyObject *self, PyObject *args) {
    PyObject *o[S_NBUF];
    Py_buffer v[S_NBUF];
    int held = 0;
    long long rows, cols, size, block;
    if (!PyArg_ParseTuple(args, "OOLLLLOOOOO", &o[S_ROW], &o[S_COL], &rows, &cols, &size,
                          &block, &o[S_NNZ], &o[S_MAX_LEN], &o[S_DIAG_PTR], &o[S_DIAG_OFF],
                          &o[S_BLOCKS]))
        return NULL;
    for (; held < S_NBUF; held++) {
        int flags = PyBUF_C_CONTIGUOUS | (held >= S_NNZ ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(o[held], &v[held], flags) < 0) goto fail;
        int ok = held >= S_NNZ ? v[held].itemsize == 8
                               : v[held].itemsize == 4 || v[held].itemsize == 8;
        if (!ok) {
            PyBuffer_Release(&v[held]);
            PyErr_SetString(PyExc_TypeError, "strips: unexpected item size");
            goto fail;
        }
    }
    Strips p = {v[S_ROW].buf, v[S_COL].buf, v[S_ROW].itemsize == 8, v[S_ROW].len /
                v[S_ROW].itemsize, rows, cols, size, block, v[S_NNZ].len / 8,
                v[S_NNZ].buf, v[S_MAX_LEN].buf, v[S_DIAG_PTR].buf, v[S_DIAG_OFF].buf,
                v[S_BLOCKS].buf};
    if (v[S_COL].itemsize != v[S_ROW].itemsize || v[S_COL].len != v[S_ROW].len || size < 1
        || block < 1 || rows < 0 || cols < 0 || v[S_MAX_LEN].len / 8 != p.n
        || v[S_BLOCKS].len / 8 != p.n || v[S_DIAG_PTR].len / 8 != p.n + 1
        || v[S_DIAG_OFF].len / 8 < p.n_entries || p.n < (rows + size - 1) / size) {
        PyErr_SetString(PyExc_ValueError, "strips: arrays of inconsistent sizes");
        goto fail;
    }
    int64_t *indptr = calloc((size_t)rows + 1, sizeof(int64_t));
    int64_t *dstamp = malloc((size_t)(rows + cols + 1) * sizeof(int64_t));
    int64_t *bstamp = malloc((size_t)(cols / block + 1) * sizeof(int64_t));
    void *owned = NULL;
    const void *colidx = NULL;
    int status = indptr && dstamp && bstamp ? 0 : -2;
    Py_BEGIN_ALLOW_THREADS
    if (!status) status = group_rows(&p, indptr, &colidx, &owned);
    if (!status) {
        for (int64_t k = 0; k <= rows + cols; k++) dstamp[k] = -1;
        for (int64_t k = 0; k <= cols / block; k++) bstamp[k] = -1;
        sweep_strips(&p, indptr, colidx, dstamp, bstamp);
    }
    Py_END_ALLOW_THREADS
    free(indptr);
    free(dstamp);
    free(bstamp);
    free(owned);
    if (status == -2) {
        PyErr_NoMemory();
        goto fail;
    }
    if (status == -1) {
        PyErr_SetString(PyExc_ValueError, "strips: an index lies outside the matrix");
        goto fail;
    }
    for (int k = 0; k < S_NBUF; k++) PyBuffer_Release(&v[k]);
    Py_RETURN_NONE;
fail:
    for (int k = 0; k < held; k++) PyBuffer_Release(&v[k]);
    return NULL;
}

static PyMethodDef methods[] = {
    {"dp", dp, METH_VARARGS,
     "dp(rows, nnz, max_len, diag_ptr, diag_off, blocks, b, cols, kinds, coef, s_v, s_i, "
     "max_block, best, cut, fmt, cost): the partition's dynamic program, in place"},
    {"strips", strips, METH_VARARGS,
     "strips(row, col, rows, cols, size, block, nnz, max_len, diag_ptr, diag_off, blocks): "
     "per-strip counts, in place"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native", "The format advisor's passes (ahead of time).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddIntConstant(m, "KERNEL_VERSION", KERNEL_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
