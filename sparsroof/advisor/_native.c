/* The format advisor's passes (sparsroof.advisor.partition), compiled ahead of time.
 *
 * strips counts what the dynamic program needs of each strip of rows in one sweep over
 * the entries grouped by row (no copy when they come in row order), where the numpy route
 * sorts 64-bit keys of every entry. dp is the program of sparsroof/advisor/_dp.py (numba),
 * operation for operation, so that both give the same partition and the same seconds to
 * the last bit (built without floating-point contraction); importing this module costs
 * about a millisecond where numba's start-up costs about a second. Arrays come in through
 * the buffer protocol (C-contiguous); the GIL is released while they run.
 *
 * A strip's diagonals are given as a histogram of gaps: for each distinct diagonal of
 * strip s, s minus the last strip before s that holds it (s + 1 where none does). A block
 * of strips [i, j) then holds, of strip s's diagonals, those whose gap exceeds s - i as new
 * ones, which the program sums without lists of offsets.
 */

#include "native.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* bumped whenever the passes change: the Python side refuses a stale build */
#define KERNEL_VERSION 2

/* ---- growable lists ------------------------------------------------------------- */

typedef struct {
    int64_t *v;
    int64_t n, cap;
} List;

static int push(List *l, int64_t x) {
    if (l->n == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 1024;
        int64_t *v = realloc(l->v, (size_t)cap * sizeof(int64_t));
        if (!v) return -1;
        l->v = v, l->cap = cap;
    }
    l->v[l->n++] = x;
    return 0;
}

static int ascending(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Append the touched keys of `count` to (val, cnt) in ascending order, zeroing them. */
static int flush(int64_t *count, List *touched, List *val, List *cnt) {
    qsort(touched->v, (size_t)touched->n, sizeof(int64_t), ascending);
    for (int64_t q = 0; q < touched->n; q++) {
        int64_t key = touched->v[q];
        if (push(val, key) || push(cnt, count[key])) return -1;
        count[key] = 0;
    }
    touched->n = 0;
    return 0;
}

static int tally(int64_t *count, List *touched, int64_t key) {
    if (!count[key]++) return push(touched, key);
    return 0;
}

/* ---- per-strip counts ------------------------------------------------------------ */

static inline int64_t at(const void *a, int wide, int64_t i) {
    return wide ? ((const int64_t *)a)[i] : (int64_t)((const int32_t *)a)[i];
}

typedef struct {
    const void *row, *col;
    int wide;
    int64_t n_entries, rows, cols, size, block, n;
    int64_t *nnz, *max_len, *blocks, *diag_ptr, *len_ptr;
    List gap, gap_cnt, len, len_cnt;
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

/* how many entries ahead the sweep asks for the stamps it will need */
#define AHEAD 32
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH_W(a) __builtin_prefetch((a), 1)
#else
#define PREFETCH_W(a) ((void)(a))
#endif

/* One sweep over the rows in order: a diagonal is new to strip s when its stamp is not s
 * (its gap is s minus the stamp it had), a b x b block new to block row br when its block
 * column's stamp is not br. 0, or -2 when out of memory. */
static int sweep_strips(Strips *p, const int64_t *indptr, const void *colidx, int32_t *last,
                        int64_t *bstamp, int64_t *gap_count, int64_t *len_count) {
    List gaps_seen = {0}, lens_seen = {0};
    int status = 0;
    p->diag_ptr[0] = p->len_ptr[0] = 0;
    for (int64_t s = 0; s < p->n && !status; s++) {
        int64_t lo = s * p->size, hi = lo + p->size < p->rows ? lo + p->size : p->rows;
        int64_t longest = 0;
        p->nnz[s] = hi > lo ? indptr[hi] - indptr[lo] : 0;
        for (int64_t r = lo; r < hi && !status; r++) {
            int64_t br = r / p->block;
            int64_t strip = br * p->block / p->size;
            int64_t length = indptr[r + 1] - indptr[r];
            if (length > longest) longest = length;
            status |= tally(len_count, &lens_seen, length);
            for (int64_t k = indptr[r]; k < indptr[r + 1] && !status; k++) {
                int64_t c = at(colidx, p->wide, k), d = c - r + p->rows;
                if (k + AHEAD < p->n_entries) {
                    /* a random pattern misses the caches on every stamp: ask for the
                     * stamps of the entry AHEAD places on (its row is about r) */
                    int64_t ahead = at(colidx, p->wide, k + AHEAD);
                    int64_t da = ahead - r + p->rows;
                    if (da >= 0 && da <= p->rows + p->cols) PREFETCH_W(last + da);
                    PREFETCH_W(bstamp + ahead / p->block);
                }
                if (last[d] != (int32_t)s) {
                    status |= tally(gap_count, &gaps_seen, last[d] < 0 ? s + 1 : s - last[d]);
                    last[d] = (int32_t)s;
                }
                if (bstamp[c / p->block] != br) {
                    bstamp[c / p->block] = br;
                    p->blocks[strip]++;
                }
            }
        }
        p->max_len[s] = longest;
        status |= flush(gap_count, &gaps_seen, &p->gap, &p->gap_cnt);
        status |= flush(len_count, &lens_seen, &p->len, &p->len_cnt);
        p->diag_ptr[s + 1] = p->gap.n;
        p->len_ptr[s + 1] = p->len.n;
    }
    free(gaps_seen.v);
    free(lens_seen.v);
    return status ? -2 : 0;
}

static PyObject *as_bytes(const List *l) {
    return PyBytes_FromStringAndSize((const char *)l->v, (Py_ssize_t)(l->n * 8));
}

enum { S_ROW, S_COL, S_NNZ, S_MAX_LEN, S_BLOCKS, S_DIAG_PTR, S_LEN_PTR, S_NBUF };

/* strips(row, col, rows, cols, size, block, nnz, max_len, blocks, diag_ptr, len_ptr)
 * -> (gap, gap_count, length, length_count) as bytes of int64: per strip of `size` rows its
 * entries, longest row and non-empty block x block blocks (a block counted in the strip of
 * its first row), and, listed from diag_ptr[s] and len_ptr[s] in ascending order, the
 * histogram of its diagonals' gaps and of its row lengths. The outputs are int64 (n, or
 * n + 1 for the pointers) and zeroed. */
static PyObject *strips(PyObject *self, PyObject *args) {
    PyObject *o[S_NBUF];
    Py_buffer v[S_NBUF];
    int held = 0;
    long long rows, cols, size, block;
    if (!PyArg_ParseTuple(args, "OOLLLLOOOOO", &o[S_ROW], &o[S_COL], &rows, &cols, &size,
                          &block, &o[S_NNZ], &o[S_MAX_LEN], &o[S_BLOCKS], &o[S_DIAG_PTR],
                          &o[S_LEN_PTR]))
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
    Strips p = {v[S_ROW].buf, v[S_COL].buf, v[S_ROW].itemsize == 8,
                v[S_ROW].len / v[S_ROW].itemsize, rows, cols, size, block,
                v[S_NNZ].len / 8, v[S_NNZ].buf, v[S_MAX_LEN].buf, v[S_BLOCKS].buf,
                v[S_DIAG_PTR].buf, v[S_LEN_PTR].buf, {0}, {0}, {0}, {0}};
    if (v[S_COL].itemsize != v[S_ROW].itemsize || v[S_COL].len != v[S_ROW].len || size < 1
        || block < 1 || rows < 0 || cols < 0 || v[S_MAX_LEN].len / 8 != p.n
        || v[S_BLOCKS].len / 8 != p.n || v[S_DIAG_PTR].len / 8 != p.n + 1
        || v[S_LEN_PTR].len / 8 != p.n + 1 || p.n < 1 || p.n < (rows + size - 1) / size
        || p.n >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "strips: arrays of inconsistent sizes");
        goto fail;
    }
    int64_t *indptr = calloc((size_t)rows + 1, sizeof(int64_t));
    int32_t *last = malloc((size_t)(rows + cols + 1) * sizeof(int32_t));
    int64_t *bstamp = malloc((size_t)(cols / block + 1) * sizeof(int64_t));
    int64_t *gap_count = calloc((size_t)p.n + 2, sizeof(int64_t));
    int64_t *len_count = NULL;
    void *owned = NULL;
    const void *colidx = NULL;
    int status = indptr && last && bstamp && gap_count ? 0 : -2;
    Py_BEGIN_ALLOW_THREADS
    if (!status) status = group_rows(&p, indptr, &colidx, &owned);
    if (!status) {
        int64_t longest = 0;
        for (int64_t r = 0; r < rows; r++)
            if (indptr[r + 1] - indptr[r] > longest) longest = indptr[r + 1] - indptr[r];
        len_count = calloc((size_t)longest + 1, sizeof(int64_t));
        status = len_count ? 0 : -2;
    }
    if (!status) {
        for (int64_t k = 0; k <= rows + cols; k++) last[k] = -1;
        for (int64_t k = 0; k <= cols / block; k++) bstamp[k] = -1;
        status = sweep_strips(&p, indptr, colidx, last, bstamp, gap_count, len_count);
    }
    Py_END_ALLOW_THREADS
    free(indptr);
    free(last);
    free(bstamp);
    free(gap_count);
    free(len_count);
    free(owned);
    PyObject *out = NULL;
    if (status == -2) PyErr_NoMemory();
    else if (status == -1) PyErr_SetString(PyExc_ValueError, "strips: an index lies outside the matrix");
    else
        out = Py_BuildValue("(NNNN)", as_bytes(&p.gap), as_bytes(&p.gap_cnt), as_bytes(&p.len),
                            as_bytes(&p.len_cnt));
    free(p.gap.v);
    free(p.gap_cnt.v);
    free(p.len.v);
    free(p.len_cnt.v);
    for (int k = 0; k < S_NBUF; k++) PyBuffer_Release(&v[k]);
    return out;
fail:
    for (int k = 0; k < held; k++) PyBuffer_Release(&v[k]);
    return NULL;
}

/* ---- the dynamic program ----------------------------------------------------------- */

/* HYB's ELL width and the entries beyond it, as hyb_split in _dp.py */
static void hyb_split(const double *hist, double rows, double nnz, double kmax, double *k_out,
                      double *over_out) {
    double need = rows / 3 > 4096.0 ? rows / 3 : 4096.0;
    int64_t k = 0;
    double at_most = hist[0], entries = 0.0;
    while ((double)(k + 1) <= kmax && rows - at_most >= need) {
        k += 1;
        at_most += hist[k];
        entries += (double)k * hist[k];
    }
    *k_out = (double)k;
    *over_out = (nnz - entries) - (double)k * (rows - at_most);
}

/* Predicted seconds of one block in format `kind` under the cost row c (const, u, v, w,
 * z, floor): see the docstring of _cost.py for the bytes and slots of each format. */
static double block_cost(int64_t kind, const double *c, double rows, double nnz, double kmax,
                         double ndiag, double nblocks, int64_t b, int64_t cols, int64_t s_v,
                         int64_t s_i, double hyb_k, double overflow, double x_per_row) {
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
    } else if (kind == 6) {
        slots = rows * hyb_k + overflow;
        a = rows * hyb_k * (double)(s_v + s_i) + overflow * (double)(s_v + 2 * s_i);
    } else {
        slots = nblocks * (double)b * (double)b;
        /* rows is a whole number: (rows + b - 1) // b is the integer quotient */
        double brows = (double)(((int64_t)rows + b - 1) / b);
        a = slots * (double)s_v + nblocks * (double)s_i + (brows + 1) * (double)s_i;
    }
    double mem = c[1] * (a + rows * ((double)s_v + x_per_row)) + c[2] * rows + c[3] * slots;
    double compute = c[4] * slots;
    double top = mem > compute ? mem : compute;
    return c[0] + (c[5] > top ? c[5] : top);
}

#define NCOEF 6 /* const, u, v, w, z, floor */

enum { ROWS, NNZ, MAX_LEN, DIAG_PTR, DIAG_GAP, DIAG_CNT, BLOCKS, LEN_PTR, LEN_VAL, LEN_CNT,
       KINDS, COEF, MULT, BEST, CUT, FMT, COST, NBUF };

typedef struct {
    const int64_t *rows, *nnz, *max_len, *diag_ptr, *diag_gap, *diag_cnt, *blocks, *len_ptr,
        *len_val, *len_cnt, *kinds, *mult;
    const double *coef;
    double *best, *cost;
    int64_t *cut, *fmt;
    int64_t n, nkinds, b, cols, s_v, s_i, max_block;
    double x_per_row;
    double *hist, *nd_from;
} Program;

static void add_lengths(const Program *p, int64_t first, int64_t last, int64_t sign) {
    for (int64_t q = p->len_ptr[first]; q < p->len_ptr[last]; q++)
        p->hist[p->len_val[q]] += (double)(sign * p->len_cnt[q]);
}

/* best[j]: least time of strips [0, j); cut[j], fmt[j], cost[j]: its last block */
static void run(const Program *p) {
    int with_hyb = 0;
    for (int64_t f = 0; f < p->nkinds; f++) with_hyb |= p->kinds[f] == 6;
    for (int64_t j = 0; j <= p->n; j++) {
        p->best[j] = j ? INFINITY : 0.0;
        p->cut[j] = p->fmt[j] = 0;
        p->cost[j] = 0.0;
        p->nd_from[j] = 0.0;
    }
    for (int64_t j = 1; j <= p->n; j++) {
        int64_t s = j - 1, lo = j - p->max_block > 0 ? j - p->max_block : 0;
        /* strip s's diagonals new to the blocks [i, j): those of gap > s - i */
        double total = 0.0, seen = 0.0;
        for (int64_t q = p->diag_ptr[s]; q < p->diag_ptr[s + 1]; q++) total += (double)p->diag_cnt[q];
        int64_t q = p->diag_ptr[s];
        for (int64_t i = s; i >= lo; i--) {
            while (q < p->diag_ptr[s + 1] && p->diag_gap[q] <= s - i) seen += (double)p->diag_cnt[q++];
            p->nd_from[i] += total - seen;
        }
        double r = 0.0, z = 0.0, kmax = 0.0, nb = 0.0;
        int dia_alive = 1;
        for (int64_t i = j - 1; i >= lo; i--) {
            r += (double)p->rows[i];
            z += (double)p->nnz[i];
            if ((double)p->max_len[i] > kmax) kmax = (double)p->max_len[i];
            nb += (double)p->blocks[i];
            double hk = 0.0, over = 0.0;
            if (with_hyb) {
                add_lengths(p, i, i + 1, 1);
                hyb_split(p->hist, r, z, kmax, &hk, &over);
            }
            double nd = p->nd_from[i];
            for (int64_t f = 0; f < p->nkinds; f++) {
                int64_t kind = p->kinds[f];
                if (kind == 4 && !dia_alive) continue;
                if (j < p->n && (j - i) % p->mult[f] != 0) continue;
                double t = block_cost(kind, p->coef + NCOEF * f, r, z, kmax, nd, nb, p->b,
                                      p->cols,
                                      p->s_v, p->s_i, hk, over, p->x_per_row);
                if (kind == 4 && t >= p->best[j]) dia_alive = 0; /* DIA only grows: prune */
                if (p->best[i] + t < p->best[j]) {
                    p->best[j] = p->best[i] + t;
                    p->cut[j] = i;
                    p->fmt[j] = f;
                    p->cost[j] = t;
                }
            }
        }
        if (with_hyb) add_lengths(p, lo, j, -1); /* empty the histogram for the next j */
    }
}

static const char *NAMES[NBUF] = {"rows", "nnz", "max_len", "diag_ptr", "diag_gap",
                                  "diag_cnt", "blocks", "len_ptr", "len_val", "len_cnt",
                                  "kinds", "coef", "mult", "best", "cut", "fmt", "cost"};

static int pointers_ok(const int64_t *ptr, int64_t n, int64_t len) {
    for (int64_t i = 0; i <= n; i++)
        if (ptr[i] < 0 || ptr[i] > len || (i && ptr[i] < ptr[i - 1])) return 0;
    return 1;
}

/* dp(rows, nnz, max_len, diag_ptr, diag_gap, diag_cnt, blocks, len_ptr, len_val, len_cnt,
 *    kinds, coef, mult, b, cols, s_v, s_i, max_block, x_per_row, best, cut, fmt, cost):
 * fills best, cut, fmt and cost (n + 1 each) */
static PyObject *dp(PyObject *self, PyObject *args) {
    PyObject *o[NBUF];
    Py_buffer v[NBUF];
    int held = 0;
    long long b, cols, s_v, s_i, max_block;
    double x_per_row;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOLLLLLdOOOO", &o[ROWS], &o[NNZ], &o[MAX_LEN],
                          &o[DIAG_PTR], &o[DIAG_GAP], &o[DIAG_CNT], &o[BLOCKS], &o[LEN_PTR],
                          &o[LEN_VAL], &o[LEN_CNT], &o[KINDS], &o[COEF], &o[MULT], &b, &cols,
                          &s_v, &s_i, &max_block, &x_per_row, &o[BEST], &o[CUT], &o[FMT],
                          &o[COST]))
        return NULL;
    for (; held < NBUF; held++) {
        int flags = PyBUF_C_CONTIGUOUS | (held >= BEST ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(o[held], &v[held], flags) < 0) goto fail;
        if (v[held].itemsize != 8) {
            PyBuffer_Release(&v[held]);
            PyErr_Format(PyExc_TypeError, "%s: expected 8-byte items", NAMES[held]);
            goto fail;
        }
    }
    Program p = {v[ROWS].buf, v[NNZ].buf, v[MAX_LEN].buf, v[DIAG_PTR].buf, v[DIAG_GAP].buf,
                 v[DIAG_CNT].buf, v[BLOCKS].buf, v[LEN_PTR].buf, v[LEN_VAL].buf,
                 v[LEN_CNT].buf, v[KINDS].buf, v[MULT].buf, v[COEF].buf, v[BEST].buf,
                 v[COST].buf, v[CUT].buf, v[FMT].buf};
    p.n = v[ROWS].len / 8;
    p.nkinds = v[KINDS].len / 8;
    p.b = b, p.cols = cols, p.s_v = s_v, p.s_i = s_i, p.max_block = max_block;
    p.x_per_row = x_per_row;
    int64_t ngap = v[DIAG_GAP].len / 8, nlen = v[LEN_VAL].len / 8, longest = 0;
    int ok = v[NNZ].len / 8 == p.n && v[MAX_LEN].len / 8 == p.n && v[BLOCKS].len / 8 == p.n
             && v[DIAG_PTR].len / 8 == p.n + 1 && v[LEN_PTR].len / 8 == p.n + 1
             && v[DIAG_CNT].len / 8 == ngap && v[LEN_CNT].len / 8 == nlen
             && v[COEF].len / 8 == NCOEF * p.nkinds && v[MULT].len / 8 == p.nkinds
             && v[BEST].len / 8 == p.n + 1 && v[CUT].len / 8 == p.n + 1
             && v[FMT].len / 8 == p.n + 1 && v[COST].len / 8 == p.n + 1 && b >= 1
             && max_block >= 1 && pointers_ok(p.diag_ptr, p.n, ngap)
             && pointers_ok(p.len_ptr, p.n, nlen);
    for (int64_t i = 0; ok && i < p.n; i++) {
        ok = p.max_len[i] >= 0;
        if (p.max_len[i] > longest) longest = p.max_len[i];
    }
    for (int64_t q = 0; ok && q < nlen; q++) ok = p.len_val[q] >= 0 && p.len_val[q] <= longest;
    for (int64_t f = 0; ok && f < p.nkinds; f++)
        ok = p.kinds[f] >= 0 && p.kinds[f] <= 6 && p.mult[f] >= 1;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "dp: arrays of inconsistent sizes or values");
        goto fail;
    }
    p.hist = calloc((size_t)longest + 1, sizeof(double));
    p.nd_from = malloc((size_t)(p.n + 1) * sizeof(double));
    if (!p.hist || !p.nd_from) {
        free(p.hist);
        free(p.nd_from);
        PyErr_NoMemory();
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    run(&p);
    Py_END_ALLOW_THREADS
    free(p.hist);
    free(p.nd_from);
    for (int k = 0; k < NBUF; k++) PyBuffer_Release(&v[k]);
    Py_RETURN_NONE;
fail:
    for (int k = 0; k < held; k++) PyBuffer_Release(&v[k]);
    return NULL;
}

static PyMethodDef methods[] = {
    {"strips", strips, METH_VARARGS,
     "strips(row, col, rows, cols, size, block, nnz, max_len, blocks, diag_ptr, len_ptr) -> "
     "(gap, gap_count, length, length_count): per-strip counts"},
    {"dp", dp, METH_VARARGS,
     "dp(rows, nnz, max_len, diag_ptr, diag_gap, diag_cnt, blocks, len_ptr, len_val, "
     "len_cnt, kinds, coef, mult, b, cols, s_v, s_i, max_block, x_per_row, best, cut, fmt, "
     "cost): the partition's dynamic program, in place"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native", "The format advisor's passes (ahead of time).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__native(void) { return native_module(&module, KERNEL_VERSION); }
