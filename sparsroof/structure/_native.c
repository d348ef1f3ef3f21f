/* Compiled O(nnz) passes behind sparsroof.structure.counts, ahead of time.
 *
 * The same passes as sparsroof/structure/_jit.py (read its docstring for the method),
 * built with the package so that a process pays no compiler start-up: importing this
 * module costs about a millisecond, where numba costs about a second and 150 MiB.
 * Arrays come in through the buffer protocol (numpy arrays, C-contiguous); index arrays
 * may hold int32 or int64, every output array is int64 (uint64 for the diagonal bitmap)
 * and allocated by the caller. The sweeps release the GIL.
 *
 * The panel sweep keeps, per column, the last row that touched it and the column's
 * length side by side (one cache line serves both), finds bit lengths with one
 * count-leading-zeros instruction and sets the diagonal bitmap without a branch: a
 * random pattern's entries make every branch on their data unpredictable. Its panel
 * counts cost O(1) per entry and O(rows) in all (see Panels), not O(levels) per row.
 *
 * hash64 is XXH64 (Yann Collet's xxHash, 64-bit), the content fingerprint of the
 * structure cache (sparsroof.structure.cache): a file is hashed at memory speed, a small
 * fraction of the time its parse takes.
 */

#include "native.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define INLINE static inline __attribute__((always_inline))
static inline int bit_length(uint64_t x) { return x ? 64 - __builtin_clzll(x) : 0; }
#else
#define INLINE static __forceinline
static inline int bit_length(uint64_t x) { int n = 0; while (x) { x >>= 1; n++; } return n; }
#endif

/* bumped whenever a pass changes: the Python side refuses a stale build */
#define KERNEL_VERSION 7


INLINE int64_t at(const void *a, int wide, Py_ssize_t i) {
    return wide ? ((const int64_t *)a)[i] : (int64_t)((const int32_t *)a)[i];
}

/* ---- grouping the entries by row ------------------------------------------------ */

INLINE int count_rows_impl(const void *row, const void *col, int wide, Py_ssize_t n,
                           int64_t *indptr, Py_ssize_t rows, int64_t cols, int *in_order,
                           int *sorted) {
    int64_t prev = -1, prev_col = -1;
    int ordered = 1, srt = 1;
    for (Py_ssize_t e = 0; e < n; e++) {
        int64_t r = at(row, wide, e), c = at(col, wide, e);
        if ((uint64_t)r >= (uint64_t)rows || (uint64_t)c >= (uint64_t)cols) return -1;
        indptr[r + 1]++;
        ordered &= r >= prev;
        srt &= !(r == prev && c < prev_col);
        prev = r;
        prev_col = c;
    }
    for (Py_ssize_t i = 0; i < rows; i++) indptr[i + 1] += indptr[i];
    *in_order = ordered;
    *sorted = ordered && srt;
    return 0;
}

/* count_rows(row, col, cols, indptr) -> (in row order, every row's columns sorted);
 * indptr (rows + 1 zeros) becomes the row pointers */
static PyObject *count_rows(PyObject *self, PyObject *args) {
    PyObject *o[3];
    Py_ssize_t cols;
    Buf b[3] = {{{0}}};
    if (!PyArg_ParseTuple(args, "OOnO", &o[0], &o[1], &cols, &o[2])) return NULL;
    if (get(o[0], &b[0], 0, 0, "row") || get(o[1], &b[1], 0, b[0].view.itemsize, "col") ||
        get(o[2], &b[2], 1, 8, "indptr")) {
        release(b, 3);
        return NULL;
    }
    int in_order = 1, sorted = 1, bad;
    Py_ssize_t n = N(b[0]), rows = N(b[2]) - 1;
    if (N(b[1]) != n) {
        release(b, 3);
        PyErr_SetString(PyExc_ValueError, "count_rows: row and col differ in length");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    if (WIDE(b[0]))
        bad = count_rows_impl(b[0].view.buf, b[1].view.buf, 1, n, b[2].view.buf, rows, cols,
                              &in_order, &sorted);
    else
        bad = count_rows_impl(b[0].view.buf, b[1].view.buf, 0, n, b[2].view.buf, rows, cols,
                              &in_order, &sorted);
    Py_END_ALLOW_THREADS
    release(b, 3);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "count_rows: an index lies outside the matrix");
        return NULL;
    }
    return Py_BuildValue("(OO)", in_order ? Py_True : Py_False, sorted ? Py_True : Py_False);
}

INLINE void scatter_impl(const void *row, const void *col, int wide, Py_ssize_t n,
                         const int64_t *indptr, int64_t *pos, void *out) {
    for (Py_ssize_t e = 0; e < n; e++) {
        int64_t r = at(row, wide, e);
        if (wide)
            ((int64_t *)out)[pos[r]++] = ((const int64_t *)col)[e];
        else
            ((int32_t *)out)[pos[r]++] = ((const int32_t *)col)[e];
    }
}

/* scatter_rows(row, col, indptr, out): the stable counting sort of col by row */
static PyObject *scatter_rows(PyObject *self, PyObject *args) {
    PyObject *o[4];
    Buf b[4] = {{{0}}};
    if (!PyArg_ParseTuple(args, "OOOO", &o[0], &o[1], &o[2], &o[3])) return NULL;
    if (get(o[0], &b[0], 0, 0, "row") || get(o[1], &b[1], 0, b[0].view.itemsize, "col") ||
        get(o[2], &b[2], 0, 8, "indptr") || get(o[3], &b[3], 1, b[0].view.itemsize, "out")) {
        release(b, 4);
        return NULL;
    }
    Py_ssize_t rows = N(b[2]) - 1;
    int64_t *pos = malloc(sizeof(int64_t) * (rows > 0 ? rows : 1));
    if (!pos) {
        release(b, 4);
        return PyErr_NoMemory();
    }
    memcpy(pos, b[2].view.buf, sizeof(int64_t) * rows);
    Py_BEGIN_ALLOW_THREADS
    if (WIDE(b[0]))
        scatter_impl(b[0].view.buf, b[1].view.buf, 1, N(b[0]), b[2].view.buf, pos,
                     b[3].view.buf);
    else
        scatter_impl(b[0].view.buf, b[1].view.buf, 0, N(b[0]), b[2].view.buf, pos,
                     b[3].view.buf);
    Py_END_ALLOW_THREADS
    free(pos);
    release(b, 4);
    Py_RETURN_NONE;
}

/* The same stable grouping in two passes, for arrays larger than the caches: a direct
 * scatter writes each entry to a random place in the whole output (a cache miss per
 * entry), while bucket_rows writes to one of a few hundred buckets of 2^shift rows each
 * (their write positions stay in cache), and settle_rows then groups each bucket's entries
 * by row within the bucket, which fits in cache. */

#define TO_BUCKETS(T)                                                                       \
    do {                                                                                    \
        const T *r = b[0].view.buf, *c = b[1].view.buf;                                     \
        T *out = b[3].view.buf;                                                             \
        for (Py_ssize_t e = 0; e < n; e++) {                                                \
            uint64_t k = (uint64_t)r[e] >> shift;                                           \
            if (k >= (uint64_t)buckets || (uint64_t)pos[k] >= (uint64_t)size) {             \
                bad = 1; /* a row outside the buckets, or a bucket overfull: never */       \
                break;   /* written past the arrays */                                      \
            }                                                                               \
            int64_t q = pos[k]++;                                                           \
            out[q] = c[e];                                                                  \
            low[q] = (uint16_t)r[e] & mask;                                                 \
        }                                                                                   \
    } while (0)

/* bucket_rows(row, col, shift, at, out, low): each entry's column to out[at[b]++] and
 * its row's place in bucket b = row >> shift to low[...]; at holds each bucket's first
 * free place for these entries, and is advanced */
static PyObject *bucket_rows(PyObject *self, PyObject *args) {
    PyObject *o[5];
    int shift;
    Buf b[5] = {{{0}}};
    if (!PyArg_ParseTuple(args, "OOiOOO", &o[0], &o[1], &shift, &o[2], &o[3], &o[4]))
        return NULL;
    if (get(o[0], &b[0], 0, 0, "row") || get(o[1], &b[1], 0, b[0].view.itemsize, "col") ||
        get(o[2], &b[2], 1, 8, "at") || get(o[3], &b[3], 1, b[0].view.itemsize, "out") ||
        get(o[4], &b[4], 1, 2, "low")) {
        release(b, 5);
        return NULL;
    }
    if (shift < 0 || shift > 16 || N(b[3]) != N(b[4]) || N(b[1]) != N(b[0])) {
        release(b, 5);
        PyErr_SetString(PyExc_ValueError, "bucket_rows: a bad shift or output size");
        return NULL;
    }
    Py_ssize_t n = N(b[0]), buckets = N(b[2]), size = N(b[3]);
    int64_t *pos = b[2].view.buf;
    uint16_t *low = b[4].view.buf;
    const uint16_t mask = (uint16_t)((1u << shift) - 1u);
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    if (WIDE(b[0]))
        TO_BUCKETS(int64_t);
    else
        TO_BUCKETS(int32_t);
    Py_END_ALLOW_THREADS
    return finish(b, 5, bad, "bucket_rows: an entry outside its buckets");
}

static void sort_row(char *c, int wide, int64_t s, int64_t n);

/* settle_rows(indptr, out, low, shift, first, last, sort): the entries of buckets
 * first..last-1, which bucket_rows left in file order, grouped by row in place (stably),
 * each row then put in column order where sort is true */
static PyObject *settle_rows(PyObject *self, PyObject *args) {
    PyObject *o[3];
    int shift, sort;
    Py_ssize_t first, last;
    Buf b[3] = {{{0}}};
    if (!PyArg_ParseTuple(args, "OOOinnp", &o[0], &o[1], &o[2], &shift, &first, &last, &sort))
        return NULL;
    if (get(o[0], &b[0], 0, 8, "indptr") || get(o[1], &b[1], 1, 0, "out") ||
        get(o[2], &b[2], 0, 2, "low")) {
        release(b, 3);
        return NULL;
    }
    const int64_t *indptr = b[0].view.buf;
    Py_ssize_t rows = N(b[0]) - 1, step = (Py_ssize_t)1 << (shift & 31);
    if (rows < 0 || shift < 0 || shift > 16 || first < 0 || last < first ||
        (last > 0 && (last - 1) * step >= (rows > 0 ? rows : 1)) || N(b[1]) != N(b[2]) ||
        indptr[rows] != N(b[1])) {
        release(b, 3);
        PyErr_SetString(PyExc_ValueError, "settle_rows: buckets outside the matrix");
        return NULL;
    }
    int64_t most = 0;  /* the largest bucket, its row pointers checked in order */
    Py_ssize_t end = last * step < rows ? last * step : rows;
    int bad = first * step <= end && (indptr[first * step < end ? first * step : end] < 0 ||
                                      indptr[end] > N(b[1]));
    for (Py_ssize_t i = first * step; i < end && !bad; i++)
        bad = indptr[i + 1] < indptr[i];
    for (Py_ssize_t k = first; k < last; k++) {
        int64_t lo = k * step, hi = lo + step < rows ? lo + step : rows;
        if (indptr[hi] - indptr[lo] > most) most = indptr[hi] - indptr[lo];
    }
    if (bad) {
        release(b, 3);
        PyErr_SetString(PyExc_ValueError, "settle_rows: row pointers out of order");
        return NULL;
    }
    int wide = WIDE(b[1]);
    size_t size = (size_t)b[1].view.itemsize;
    char *buf = malloc(size * (size_t)(most > 0 ? most : 1));
    int64_t *pos = malloc(sizeof(int64_t) * (size_t)step);
    if (!buf || !pos) {
        free(buf);
        free(pos);
        release(b, 3);
        return PyErr_NoMemory();
    }
    char *out = b[1].view.buf;
    const uint16_t *low = b[2].view.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = first; k < last; k++) {
        int64_t lo = k * step, hi = lo + step < rows ? lo + step : rows;
        int64_t s = indptr[lo], n = indptr[hi] - s;
        if (hi - lo > 1) {
            memcpy(buf, out + s * (int64_t)size, (size_t)n * size);
            memcpy(pos, indptr + lo, sizeof(int64_t) * (size_t)(hi - lo));
            for (int64_t e = 0; e < n && !bad; e++) {
                int64_t at_row = low[s + e];  /* its row's place in the bucket */
                if (at_row >= hi - lo || pos[at_row] >= indptr[lo + at_row + 1]) {
                    bad = 1;  /* a place outside the bucket, or a row overfull */
                    break;
                }
                int64_t q = pos[at_row]++;
                if (wide)
                    ((int64_t *)out)[q] = ((const int64_t *)buf)[e];
                else
                    ((int32_t *)out)[q] = ((const int32_t *)buf)[e];
            }
        }
        if (sort)
            for (int64_t i = lo; i < hi; i++)
                sort_row(out, wide, indptr[i], indptr[i + 1] - indptr[i]);
    }
    Py_END_ALLOW_THREADS
    free(buf);
    free(pos);
    return finish(b, 3, bad, "settle_rows: an entry outside its bucket's rows");
}

static int cmp32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* rows up to this long are put in order by insertion (a row's entries share a cache
 * line or two; qsort's call per comparison costs more than the moves) */
#define SHORT_ROW 32

#define INSERTION(NAME, T)                                                                  \
    static void NAME(T *a, int64_t n) {                                                     \
        for (int64_t k = 1; k < n; k++) {                                                   \
            T v = a[k];                                                                     \
            int64_t m = k;                                                                  \
            for (; m > 0 && a[m - 1] > v; m--) a[m] = a[m - 1];                             \
            a[m] = v;                                                                       \
        }                                                                                   \
    }
INSERTION(insertion32, int32_t)
INSERTION(insertion64, int64_t)

/* the n columns from c[s] in increasing order, in place (unless they already are) */
static void sort_row(char *c, int wide, int64_t s, int64_t n) {
    size_t size = wide ? 8 : 4;
    for (int64_t e = s + 1; e < s + n; e++) {
        if (at(c, wide, e) < at(c, wide, e - 1)) {
            if (n > SHORT_ROW)
                qsort(c + s * (int64_t)size, (size_t)n, size, wide ? cmp64 : cmp32);
            else if (wide)
                insertion64((int64_t *)c + s, n);
            else
                insertion32((int32_t *)c + s, n);
            return;
        }
    }
}

/* sort_rows(indptr, colidx): the columns of every row in increasing order, in place */
static PyObject *sort_rows(PyObject *self, PyObject *args) {
    PyObject *o[2];
    Buf b[2] = {{{0}}};
    if (!PyArg_ParseTuple(args, "OO", &o[0], &o[1])) return NULL;
    if (get(o[0], &b[0], 0, 8, "indptr") || get(o[1], &b[1], 1, 0, "colidx")) {
        release(b, 2);
        return NULL;
    }
    const int64_t *indptr = b[0].view.buf;
    char *c = b[1].view.buf;
    int wide = WIDE(b[1]);
    Py_ssize_t rows = N(b[0]) - 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < rows; i++) sort_row(c, wide, indptr[i], indptr[i + 1] - indptr[i]);
    Py_END_ALLOW_THREADS
    release(b, 2);
    Py_RETURN_NONE;
}

/* ---- the panel sweep -------------------------------------------------------------- */

typedef struct {
    int64_t bw, near, ndiag, lower, upper, ondiag, cells;
} Scalars;

/* Distinct columns per panel, from the bit lengths b = bit_length(p XOR i) of the entries
 * (p: the previous row of the entry's column): an entry is new to its panel at the levels
 * k < b. So the count of a panel P at level k >= 1 is the sum of its two halves' counts at
 * level k - 1, less the entries with b = k in P (new below k, not at k); at level 0 it is
 * the row's length less its repeated entries (b = 0). acc[off[k] + P] collects, for
 * k >= 1, the level-(k - 1) counts of P's rows (row by row for k = 1) less those entries;
 * finish() adds the halves level by level, so every level costs O(rows) in all rather
 * than O(rows) per row. */
typedef struct {
    int nlev;
    int64_t off[66];  /* start of level k's panels in acc (k >= 1) */
    int64_t *acc;
} Panels;

static int panels_init(Panels *p, int64_t rows, int nlev) {
    int64_t total = 0;
    p->nlev = nlev;
    for (int k = 1; k < nlev; k++) {
        p->off[k] = total;
        total += ((rows - 1) >> k) + 1;
    }
    p->acc = calloc((size_t)(total > 0 ? total : 1), sizeof(int64_t));
    return p->acc ? 0 : -1;
}

static void panels_finish(Panels *p, int64_t rows, int64_t *tot, int64_t *mx) {
    for (int k = 1; k < p->nlev; k++) {
        int64_t n = ((rows - 1) >> k) + 1, *a = p->acc + p->off[k];
        if (k > 1) {  /* add the halves' counts of level k - 1 */
            int64_t m = ((rows - 1) >> (k - 1)) + 1, *c = p->acc + p->off[k - 1];
            for (int64_t q = 0; q < m; q++) a[q >> 1] += c[q];
        }
        int64_t t = 0, x = 0;
        for (int64_t q = 0; q < n; q++) {
            t += a[q];
            x = a[q] > x ? a[q] : x;
        }
        tot[k] = t;
        mx[k] = x;
    }
}

/* entries ahead whose column record is fetched early: a random pattern's records miss
 * every cache, and the sweep's own dependencies would otherwise wait for each in turn */
#ifndef PREFETCH
#define PREFETCH 32
#endif
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH_W(a) __builtin_prefetch((a), 1, 0)
#define PREFETCH_R(a) __builtin_prefetch((a), 0, 0)
#else
#define PREFETCH_W(a) ((void)(a))
#define PREFETCH_R(a) ((void)(a))
#endif
/* rows ahead whose pointer (twice as far) and columns are fetched early */
#define PREFETCH_ROWS 8

/* state: 2 int32 (or int64) per column: the last row that touched it (-1: none) and its
 * entries so far */
INLINE void panels_impl(const int64_t *indptr, const void *colidx, int wide, int64_t rows,
                        int64_t cols, int64_t halfwidth, void *state, int swide,
                        uint64_t *diag, Panels *pan, int64_t *tot, int64_t *mx, Scalars *s) {
    int32_t *st32 = state;
    int64_t *st64 = state;
    int nlev = pan->nlev;
    int64_t *acc = pan->acc;
    int64_t bw = 0, near = 0, ndiag = 0, lower = 0, upper = 0, ondiag = 0, t0 = 0, m0 = 0;
    int64_t cells = 0;
    int64_t last = indptr[rows] - PREFETCH;
    for (int64_t i = 0; i < rows; i++) {
        int64_t beg = indptr[i], end = indptr[i + 1], repeated = 0;
        for (int64_t idx = beg; idx < end; idx++) {
            if (idx < last) {  /* the column record of an entry a few ahead: hide its miss */
                int64_t ahead = at(colidx, wide, idx + PREFETCH);
                PREFETCH_W(swide ? (void *)(st64 + 2 * ahead) : (void *)(st32 + 2 * ahead));
            }
            int64_t j = at(colidx, wide, idx);
            int64_t d = j - i, ad = d < 0 ? -d : d;
            bw = ad > bw ? ad : bw;
            near += ad <= halfwidth;
            ondiag += d == 0;
            uint64_t bit = (uint64_t)(d + rows - 1);
            uint64_t word = diag[bit >> 6], mask = UINT64_C(1) << (bit & 63);
            int64_t fresh = (word & mask) == 0;
            /* the cells of diagonal d: min(rows, cols - d) above, min(rows + d, cols) below */
            int64_t span = d >= 0 ? cols - d : rows + d, side = d >= 0 ? rows : cols;
            ndiag += fresh;
            cells += fresh * (span < side ? span : side);
            diag[bit >> 6] = word | mask;
            int64_t p;
            if (swide) {
                p = st64[2 * j];
                st64[2 * j] = i;
                st64[2 * j + 1]++;
            } else {
                p = st32[2 * j];
                st32[2 * j] = (int32_t)i;
                st32[2 * j + 1]++;
            }
            if (p < 0) {
                upper += d > 0 ? d : 0;
            } else {  /* p < i < 2^(nlev - 1), so 0 <= b < nlev */
                int b = bit_length((uint64_t)(p ^ i));
                if (b == 0)
                    repeated++;
                else
                    acc[pan->off[b] + (i >> b)]--;
            }
        }
        if (end > beg) {
            int64_t first = i - at(colidx, wide, beg);
            lower += first > 0 ? first : 0;
        }
        int64_t c0 = end - beg - repeated;  /* row i's distinct columns: level 0 */
        t0 += c0;
        m0 = c0 > m0 ? c0 : m0;
        if (nlev > 1) acc[pan->off[1] + (i >> 1)] += c0;
    }
    tot[0] = t0;
    mx[0] = m0;
    s->bw = bw, s->near = near, s->ndiag = ndiag;
    s->lower = lower, s->upper = upper, s->ondiag = ondiag, s->cells = cells;
}

/* sweep_panels(indptr, colidx, halfwidth, state, diag, scalars, tot, mx) */
static PyObject *sweep_panels(PyObject *self, PyObject *args) {
    PyObject *o[7];
    Py_ssize_t halfwidth;
    Buf b[7] = {{{0}}};
    if (!PyArg_ParseTuple(args, "OOnOOOOO", &o[0], &o[1], &halfwidth, &o[2], &o[3], &o[4],
                          &o[5], &o[6]))
        return NULL;
    if (get(o[0], &b[0], 0, 8, "indptr") || get(o[1], &b[1], 0, 0, "colidx") ||
        get(o[2], &b[2], 1, 0, "state") || get(o[3], &b[3], 1, 8, "diag") ||
        get(o[4], &b[4], 1, 8, "scalars") || get(o[5], &b[5], 1, 8, "tot") ||
        get(o[6], &b[6], 1, 8, "mx")) {
        release(b, 7);
        return NULL;
    }
    int64_t rows = N(b[0]) - 1;
    int nlev = (int)N(b[5]);
    if (N(b[6]) != nlev || N(b[4]) != 7 || nlev < 1 || nlev > 64 || rows < 1 ||
        (rows - 1) >> (nlev - 1) != 0) {
        release(b, 7);
        PyErr_SetString(PyExc_ValueError, "sweep_panels: output sizes do not match");
        return NULL;
    }
    Panels pan;
    if (panels_init(&pan, rows, nlev)) {
        release(b, 7);
        return PyErr_NoMemory();
    }
    Scalars s = {0};
    int wide = WIDE(b[1]), swide = WIDE(b[2]);
    int64_t cols = N(b[2]) / 2;
    int64_t *tot = b[5].view.buf, *mx = b[6].view.buf;
    Py_BEGIN_ALLOW_THREADS
    if (wide && swide)
        panels_impl(b[0].view.buf, b[1].view.buf, 1, rows, cols, halfwidth, b[2].view.buf, 1,
                    b[3].view.buf, &pan, tot, mx, &s);
    else if (wide)
        panels_impl(b[0].view.buf, b[1].view.buf, 1, rows, cols, halfwidth, b[2].view.buf, 0,
                    b[3].view.buf, &pan, tot, mx, &s);
    else if (swide)
        panels_impl(b[0].view.buf, b[1].view.buf, 0, rows, cols, halfwidth, b[2].view.buf, 1,
                    b[3].view.buf, &pan, tot, mx, &s);
    else
        panels_impl(b[0].view.buf, b[1].view.buf, 0, rows, cols, halfwidth, b[2].view.buf, 0,
                    b[3].view.buf, &pan, tot, mx, &s);
    panels_finish(&pan, rows, tot, mx);
    Py_END_ALLOW_THREADS
    free(pan.acc);
    int64_t *out = b[4].view.buf;
    out[0] = s.bw, out[1] = s.near, out[2] = s.ndiag;
    out[3] = s.lower, out[4] = s.upper, out[5] = s.ondiag, out[6] = s.cells;
    release(b, 7);
    Py_RETURN_NONE;
}

/* ---- blocks and N:M groups ---------------------------------------------------------- */

#define LEVELS 5

INLINE void groups_impl(const int64_t *indptr, const void *colidx, int wide, int64_t rows,
                        int64_t words, uint64_t *bits, int64_t max_count, int64_t *blocks,
                        int64_t *hist) {
    int64_t prev[LEVELS], run[LEVELS] = {0};
    int64_t width = max_count + 1;
    for (int64_t i = 0; i < rows; i++) {
        int64_t beg = indptr[i], end = indptr[i + 1];
        for (int t = 0; t < LEVELS; t++) prev[t] = -1;
        for (int64_t idx = beg; idx < end; idx++) {
            int64_t j = at(colidx, wide, idx);
            for (int t = 0; t < LEVELS; t++) {
                int64_t g = j >> (t + 1);
                if (g == prev[t]) break;  /* same group here, so at every coarser level */
                if (run[t]) {
                    hist[t * width + (run[t] < max_count ? run[t] : max_count)]++;
                    run[t] = 0;
                }
                prev[t] = g;
                uint64_t *w = bits + t * words + (g >> 6);
                uint64_t mask = UINT64_C(1) << (g & 63);
                blocks[t] += (*w & mask) == 0;
                *w |= mask;
            }
            for (int t = 0; t < LEVELS; t++) run[t]++;
        }
        for (int t = 0; t < LEVELS; t++) {
            if (run[t]) {
                hist[t * width + (run[t] < max_count ? run[t] : max_count)]++;
                run[t] = 0;
            }
            int k = t + 1;
            if (((i + 1) & ((INT64_C(1) << k) - 1)) == 0 || i == rows - 1) {
                int64_t first = indptr[i & ~((INT64_C(1) << k) - 1)];
                if (end - first > (words >> t)) {
                    memset(bits + t * words, 0, sizeof(uint64_t) * words);
                } else {  /* every bit set was set by these entries */
                    for (int64_t idx = first; idx < end; idx++)
                        bits[t * words + ((at(colidx, wide, idx) >> k) >> 6)] = 0;
                }
            }
        }
    }
}

/* sweep_groups(indptr, colidx, cols, max_count, blocks, hist) */
static PyObject *sweep_groups(PyObject *self, PyObject *args) {
    PyObject *o[4];
    Py_ssize_t cols, max_count;
    Buf b[4] = {{{0}}};
    if (!PyArg_ParseTuple(args, "OOnnOO", &o[0], &o[1], &cols, &max_count, &o[2], &o[3]))
        return NULL;
    if (get(o[0], &b[0], 0, 8, "indptr") || get(o[1], &b[1], 0, 0, "colidx") ||
        get(o[2], &b[2], 1, 8, "blocks") || get(o[3], &b[3], 1, 8, "hist")) {
        release(b, 4);
        return NULL;
    }
    if (N(b[2]) != LEVELS || N(b[3]) != LEVELS * (max_count + 1)) {
        release(b, 4);
        PyErr_SetString(PyExc_ValueError, "sweep_groups: output sizes do not match");
        return NULL;
    }
    int64_t words = ((cols >> 1) >> 6) + 2;
    uint64_t *bits = calloc((size_t)(LEVELS * words), sizeof(uint64_t));
    if (!bits) {
        release(b, 4);
        return PyErr_NoMemory();
    }
    int64_t rows = N(b[0]) - 1;
    Py_BEGIN_ALLOW_THREADS
    if (WIDE(b[1]))
        groups_impl(b[0].view.buf, b[1].view.buf, 1, rows, words, bits, max_count,
                    b[2].view.buf, b[3].view.buf);
    else
        groups_impl(b[0].view.buf, b[1].view.buf, 0, rows, words, bits, max_count,
                    b[2].view.buf, b[3].view.buf);
    Py_END_ALLOW_THREADS
    free(bits);
    release(b, 4);
    Py_RETURN_NONE;
}

/* ---- pattern symmetry ----------------------------------------------------------------- */

INLINE void mirrored_impl(const int64_t *indptr, const void *colidx, int wide, int64_t rows,
                          int64_t n, int64_t stride, int64_t *checked, int64_t *hits) {
    int64_t i = 0;
    for (int64_t e = 0; e < n; e += stride) {
        while (indptr[i + 1] <= e) i++;
        int64_t j = at(colidx, wide, e);
        if (j == i || j >= rows) continue;
        (*checked)++;
        int64_t lo = indptr[j], hi = indptr[j + 1];
        while (lo < hi) {
            int64_t mid = (lo + hi) >> 1;
            if (at(colidx, wide, mid) < i) lo = mid + 1;
            else hi = mid;
        }
        if (lo < indptr[j + 1] && at(colidx, wide, lo) == i) (*hits)++;
    }
}

/* mirrored(indptr, colidx, stride) -> (off-diagonal entries checked, of which mirrored) */
static PyObject *mirrored(PyObject *self, PyObject *args) {
    PyObject *o[2];
    Py_ssize_t stride;
    Buf b[2] = {{{0}}};
    if (!PyArg_ParseTuple(args, "OOn", &o[0], &o[1], &stride)) return NULL;
    if (get(o[0], &b[0], 0, 8, "indptr") || get(o[1], &b[1], 0, 0, "colidx")) {
        release(b, 2);
        return NULL;
    }
    int64_t checked = 0, hits = 0;
    int64_t rows = N(b[0]) - 1, n = N(b[1]);
    if (stride < 1) stride = 1;
    Py_BEGIN_ALLOW_THREADS
    if (WIDE(b[1]))
        mirrored_impl(b[0].view.buf, b[1].view.buf, 1, rows, n, stride, &checked, &hits);
    else
        mirrored_impl(b[0].view.buf, b[1].view.buf, 0, rows, n, stride, &checked, &hits);
    Py_END_ALLOW_THREADS
    release(b, 2);
    return Py_BuildValue("(LL)", (long long)checked, (long long)hits);
}

/* ---- XXH64: the file fingerprint of the structure cache --------------------------- */

#define XP1 0x9E3779B185EBCA87ULL
#define XP2 0xC2B2AE3D27D4EB4FULL
#define XP3 0x165667B19E3779F9ULL
#define XP4 0x85EBCA77C2B2AE63ULL
#define XP5 0x27D4EB2F165667C5ULL

INLINE uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/* little-endian loads, whatever the host's byte order */
INLINE uint64_t load64(const uint8_t *p) {
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--) v = (v << 8) | p[k];
    return v;
}

INLINE uint32_t load32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

INLINE uint64_t xx_round(uint64_t acc, uint64_t input) {
    acc += input * XP2;
    return rotl64(acc, 31) * XP1;
}

INLINE uint64_t xx_merge(uint64_t acc, uint64_t v) {
    acc ^= xx_round(0, v);
    return acc * XP1 + XP4;
}

static uint64_t xxh64(const uint8_t *p, size_t len, uint64_t seed) {
    const uint8_t *end = p + len;
    uint64_t h;
    if (len >= 32) {
        const uint8_t *limit = end - 32;
        uint64_t v1 = seed + XP1 + XP2, v2 = seed + XP2, v3 = seed, v4 = seed - XP1;
        do {
            v1 = xx_round(v1, load64(p));
            v2 = xx_round(v2, load64(p + 8));
            v3 = xx_round(v3, load64(p + 16));
            v4 = xx_round(v4, load64(p + 24));
            p += 32;
        } while (p <= limit);
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        h = xx_merge(xx_merge(xx_merge(xx_merge(h, v1), v2), v3), v4);
    } else {
        h = seed + XP5;
    }
    h += (uint64_t)len;
    for (; p + 8 <= end; p += 8) h = rotl64(h ^ xx_round(0, load64(p)), 27) * XP1 + XP4;
    if (p + 4 <= end) {
        h = rotl64(h ^ (uint64_t)load32(p) * XP1, 23) * XP2 + XP3;
        p += 4;
    }
    for (; p < end; p++) h = rotl64(h ^ (uint64_t)*p * XP5, 11) * XP1;
    h ^= h >> 33;
    h *= XP2;
    h ^= h >> 29;
    h *= XP3;
    return h ^ (h >> 32);
}

/* hash64(buffer, seed=0) -> XXH64 of the buffer's bytes */
static PyObject *hash64(PyObject *self, PyObject *args) {
    Py_buffer view;
    unsigned long long seed = 0;
    if (!PyArg_ParseTuple(args, "y*|K", &view, &seed)) return NULL;
    uint64_t h;
    Py_BEGIN_ALLOW_THREADS
    h = xxh64((const uint8_t *)view.buf, (size_t)view.len, (uint64_t)seed);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLongLong((unsigned long long)h);
}

/* ---- the spy image's cells ------------------------------------------------------- */

/* floor(i * n / len) for 0 <= i < len, n <= len: the double quotient is off by at most
 * one, and the products (below 2^63) settle it exactly */
INLINE int64_t cell_of(int64_t i, int64_t n, int64_t len, double scale) {
    int64_t q = (int64_t)((double)i * scale), p = i * n;
    if (q * len > p) q--;
    else if ((q + 1) * len <= p) q++;
    return q;
}

INLINE int bin_cells_impl(const void *row, const void *col, int wide, Py_ssize_t n,
                          int64_t rows, int64_t cols, int64_t nr, int64_t nc,
                          int64_t *counts) {
    double sr = (double)nr / (double)rows, sc = (double)nc / (double)cols;
    for (Py_ssize_t e = 0; e < n; e++) {
        int64_t r = at(row, wide, e), c = at(col, wide, e);
        if ((uint64_t)r >= (uint64_t)rows || (uint64_t)c >= (uint64_t)cols) return -1;
        counts[cell_of(r, nr, rows, sr) * nc + cell_of(c, nc, cols, sc)]++;
    }
    return 0;
}

/* bin_cells(row, col, rows, cols, counts): counts (nr x nc int64 zeros, nr <= rows,
 * nc <= cols) gets the entries of each cell (floor(i nr / rows), floor(j nc / cols)) */
static PyObject *bin_cells(PyObject *self, PyObject *args) {
    PyObject *o[3];
    Py_ssize_t rows, cols, nr, nc;
    Buf b[3] = {{{0}}};
    if (!PyArg_ParseTuple(args, "OOnnnnO", &o[0], &o[1], &rows, &cols, &nr, &nc, &o[2]))
        return NULL;
    if (get(o[0], &b[0], 0, 0, "row") || get(o[1], &b[1], 0, b[0].view.itemsize, "col") ||
        get(o[2], &b[2], 1, 8, "counts")) {
        release(b, 3);
        return NULL;
    }
    Py_ssize_t n = N(b[0]);
    if (N(b[1]) != n || nr < 1 || nc < 1 || nr > rows || nc > cols || N(b[2]) != nr * nc ||
        rows > ((int64_t)1 << 62) / nr || cols > ((int64_t)1 << 62) / nc) {
        release(b, 3);
        PyErr_SetString(PyExc_ValueError, "bin_cells: inconsistent sizes");
        return NULL;
    }
    int bad;
    Py_BEGIN_ALLOW_THREADS
    if (WIDE(b[0]))
        bad = bin_cells_impl(b[0].view.buf, b[1].view.buf, 1, n, rows, cols, nr, nc,
                             b[2].view.buf);
    else
        bad = bin_cells_impl(b[0].view.buf, b[1].view.buf, 0, n, rows, cols, nr, nc,
                             b[2].view.buf);
    Py_END_ALLOW_THREADS
    release(b, 3);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "bin_cells: an index lies outside the matrix");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ---- reverse Cuthill-McKee ------------------------------------------------------------
 * The same numbering as scipy.sparse.csgraph.reverse_cuthill_mckee, step for step, so
 * that a reordering names the same permutation by either route: the graph A + A^T as
 * scipy's sum builds it (the union of each row's columns: sorted where A's rows are
 * sorted and free of repeats, else in the reverse of the order they were first met, A's
 * row before A^T's; repeats summed as 8-bit counts and dropped where the sum wraps to 0),
 * then breadth-first from the lowest-degree unnumbered vertex in the caller's order of
 * degrees, each level's new vertices put in order of degree by a stable insertion sort. */

/* A + A^T is built in three passes over a range of A's rows [first, last) each, so that
 * two threads may take a half of the rows apiece (sparsroof.structure.reorder joins
 * them): count each column's entries (the rows of A^T), write A^T (the second half's
 * entries of a column after the first half's: the transpose is stable either way), then
 * write the union of each row of A and of A^T. */

INLINE int range_ok(Py_ssize_t n, Py_ssize_t first, Py_ssize_t last) {
    return 0 <= first && first <= last && last <= n;
}

/* sym_count(indptr, indices, first, last, counts) -> canonical: counts (n + 1 int32,
 * zeros) gets at j + 1 the entries of rows [first, last) in column j; canonical is
 * whether each of those rows is sorted without repeats. */
static PyObject *sym_count(PyObject *self, PyObject *args) {
    PyObject *o[3];
    Py_ssize_t first, last;
    Buf b[3] = {{{0}}};
    if (!PyArg_ParseTuple(args, "OOnnO", &o[0], &o[1], &first, &last, &o[2])) return NULL;
    if (get(o[0], &b[0], 0, 4, "indptr") || get(o[1], &b[1], 0, 4, "indices") ||
        get(o[2], &b[2], 1, 4, "counts")) {
        release(b, 3);
        return NULL;
    }
    const int32_t *ap = b[0].view.buf, *aj = b[1].view.buf;
    int32_t *cnt = b[2].view.buf;
    Py_ssize_t n = N(b[0]) - 1, nnz = N(b[1]);
    if (N(b[2]) != n + 1 || ap[n] != nnz || !range_ok(n, first, last)) {
        release(b, 3);
        PyErr_SetString(PyExc_ValueError, "sym_count: inconsistent sizes");
        return NULL;
    }
    int bad = 0, canonical = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = first; i < last && !bad; i++) {
        if (ap[i] < 0 || ap[i] > ap[i + 1] || ap[i + 1] > nnz) { bad = 1; break; }
        for (int32_t e = ap[i]; e < ap[i + 1]; e++) {
            if (e + PREFETCH < ap[last] && (uint32_t)aj[e + PREFETCH] < (uint32_t)n)
                PREFETCH_W(&cnt[aj[e + PREFETCH] + 1]);
            if ((uint32_t)aj[e] >= (uint32_t)n) bad = 1;
            else cnt[aj[e] + 1]++;
            if (e > ap[i] && aj[e] <= aj[e - 1]) canonical = 0;
        }
    }
    Py_END_ALLOW_THREADS
    release(b, 3);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "sym_count: an index lies outside the matrix");
        return NULL;
    }
    return PyBool_FromLong(canonical);
}

/* sym_transpose(indptr, indices, first, last, pos, bj): each entry (i, j) of rows
 * [first, last) written as bj[pos[j]++] = i (pos: n int32, where each column's entries
 * of these rows start in A^T; bj: nnz int32). */
static PyObject *sym_transpose(PyObject *self, PyObject *args) {
    PyObject *o[4];
    Py_ssize_t first, last;
    Buf b[4] = {{{0}}};
    if (!PyArg_ParseTuple(args, "OOnnOO", &o[0], &o[1], &first, &last, &o[2], &o[3]))
        return NULL;
    if (get(o[0], &b[0], 0, 4, "indptr") || get(o[1], &b[1], 0, 4, "indices") ||
        get(o[2], &b[2], 1, 4, "pos") || get(o[3], &b[3], 1, 4, "bj")) {
        release(b, 4);
        return NULL;
    }
    const int32_t *ap = b[0].view.buf, *aj = b[1].view.buf;
    int32_t *pos = b[2].view.buf, *bj = b[3].view.buf;
    Py_ssize_t n = N(b[0]) - 1, nnz = N(b[1]);
    if (N(b[2]) != n || N(b[3]) != nnz || ap[n] != nnz || !range_ok(n, first, last)) {
        release(b, 4);
        PyErr_SetString(PyExc_ValueError, "sym_transpose: inconsistent sizes");
        return NULL;
    }
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = first; i < last && !bad; i++) {
        if (ap[i] < 0 || ap[i] > ap[i + 1] || ap[i + 1] > nnz) { bad = 1; break; }
        for (int32_t e = ap[i]; e < ap[i + 1]; e++) {
            int32_t j = aj[e];
            if (e + PREFETCH < ap[last] && (uint32_t)aj[e + PREFETCH] < (uint32_t)n)
                PREFETCH_W(&pos[aj[e + PREFETCH]]);
            if (e + PREFETCH / 2 < ap[last] && (uint32_t)aj[e + PREFETCH / 2] < (uint32_t)n &&
                (uint32_t)pos[aj[e + PREFETCH / 2]] < (uint32_t)nnz)
                PREFETCH_W(&bj[pos[aj[e + PREFETCH / 2]]]);
            if ((uint32_t)j >= (uint32_t)n || (uint32_t)pos[j] >= (uint32_t)nnz) { bad = 1; break; }
            bj[pos[j]++] = (int32_t)i;
        }
    }
    Py_END_ALLOW_THREADS
    release(b, 4);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "sym_transpose: an entry lies outside A^T");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* sym_union(indptr, indices, bp, bj, first, last, canonical, at, ptr, deg, ind) -> the
 * entries written: the union of each row i in [first, last) of A and of A^T (bp, bj:
 * its CSR) written from ind[at] on, ptr[i + 1] set to where the row ends and deg[i] to
 * its length, a diagonal entry counted twice. With canonical, both rows are sorted
 * without repeats and merged; otherwise the columns are listed newest first, repeats
 * summed in 8 bits and dropped where the sum wraps to 0 (as scipy's int8 sum). */
static PyObject *sym_union(PyObject *self, PyObject *args) {
    PyObject *o[7];
    Py_ssize_t first, last, at;
    int canonical;
    Buf b[7] = {{{0}}};
    if (!PyArg_ParseTuple(args, "OOOOnnpnOOO", &o[0], &o[1], &o[2], &o[3], &first, &last,
                          &canonical, &at, &o[4], &o[5], &o[6]))
        return NULL;
    if (get(o[0], &b[0], 0, 4, "indptr") || get(o[1], &b[1], 0, 4, "indices") ||
        get(o[2], &b[2], 0, 4, "bp") || get(o[3], &b[3], 0, 4, "bj") ||
        get(o[4], &b[4], 1, 4, "ptr") || get(o[5], &b[5], 1, 4, "deg") ||
        get(o[6], &b[6], 1, 4, "ind")) {
        release(b, 7);
        return NULL;
    }
    const int32_t *ap = b[0].view.buf, *aj = b[1].view.buf, *bp = b[2].view.buf;
    const int32_t *bj = b[3].view.buf;
    int32_t *cp = b[4].view.buf, *deg = b[5].view.buf, *cj = b[6].view.buf;
    Py_ssize_t n = N(b[0]) - 1, nnz = N(b[1]);
    int bad = N(b[2]) != n + 1 || N(b[3]) != nnz || N(b[4]) != n + 1 || N(b[5]) != n ||
              ap[n] != nnz || bp[n] != nnz || !range_ok(n, first, last) || at < 0;
    for (Py_ssize_t i = first; i < last && !bad; i++)
        bad = ap[i] < 0 || ap[i] > ap[i + 1] || bp[i] < 0 || bp[i] > bp[i + 1];
    if (!bad) bad = ap[last] > nnz || bp[last] > nnz ||
                    at + (Py_ssize_t)(ap[last] - ap[first]) + (bp[last] - bp[first]) > N(b[6]);
    if (bad) {
        release(b, 7);
        PyErr_SetString(PyExc_ValueError, "sym_union: inconsistent sizes");
        return NULL;
    }
    int32_t *next = canonical ? NULL : malloc(sizeof(int32_t) * (n > 0 ? n : 1));
    uint8_t *ca = canonical ? NULL : calloc((size_t)n + 1, 1);
    uint8_t *cb = canonical ? NULL : calloc((size_t)n + 1, 1);
    if (!canonical && (!next || !ca || !cb)) {
        free(next); free(ca); free(cb);
        release(b, 7);
        return PyErr_NoMemory();
    }
    Py_ssize_t total = at;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t e = ap[first]; e < ap[last]; e++)
        if ((uint32_t)aj[e] >= (uint32_t)n) bad = 1;
    for (Py_ssize_t e = bp[first]; e < bp[last]; e++)
        if ((uint32_t)bj[e] >= (uint32_t)n) bad = 1;
    if (!bad && canonical) {  /* both sorted without repeats: a merge */
        for (Py_ssize_t i = first; i < last; i++) {
            int32_t x = ap[i], xe = ap[i + 1], y = bp[i], ye = bp[i + 1];
            while (x < xe || y < ye) {
                if (y >= ye || (x < xe && aj[x] < bj[y])) cj[total++] = aj[x++];
                else if (x >= xe || bj[y] < aj[x]) cj[total++] = bj[y++];
                else { cj[total++] = aj[x++]; y++; }
            }
            cp[i + 1] = (int32_t)total;
        }
    } else if (!bad) {  /* a list of the columns met, newest first */
        for (Py_ssize_t i = 0; i < n; i++) next[i] = -1;
        for (Py_ssize_t i = first; i < last; i++) {
            int32_t head = -2, length = 0;
            for (int32_t e = ap[i]; e < ap[i + 1]; e++) {
                int32_t j = aj[e];
                ca[j]++;
                if (next[j] == -1) { next[j] = head; head = j; length++; }
            }
            for (int32_t e = bp[i]; e < bp[i + 1]; e++) {
                int32_t j = bj[e];
                cb[j]++;
                if (next[j] == -1) { next[j] = head; head = j; length++; }
            }
            for (int32_t k = 0; k < length; k++) {
                if ((uint8_t)(ca[head] + cb[head]) != 0) cj[total++] = head;
                int32_t t = head;
                head = next[head];
                next[t] = -1;
                ca[t] = cb[t] = 0;
            }
            cp[i + 1] = (int32_t)total;
        }
    }
    if (!bad)
        for (Py_ssize_t i = first; i < last; i++) {  /* the degree: a diagonal entry twice */
            int32_t start = i == first ? (int32_t)at : cp[i];
            deg[i] = cp[i + 1] - start;
            for (int32_t e = start; e < cp[i + 1]; e++)
                if (cj[e] == i) { deg[i]++; break; }
        }
    Py_END_ALLOW_THREADS
    free(next); free(ca); free(cb);
    release(b, 7);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "sym_union: an index lies outside the matrix");
        return NULL;
    }
    return PyLong_FromSsize_t(total - at);
}

/* cuthill_mckee(ptr, ind, deg, seeds, order): order (rows, int32) gets the Cuthill-McKee
 * numbering (not yet reversed); seeds are the vertices by increasing degree. */
static PyObject *cuthill_mckee(PyObject *self, PyObject *args) {
    PyObject *o[5];
    Buf b[5] = {{{0}}};
    if (!PyArg_ParseTuple(args, "OOOOO", &o[0], &o[1], &o[2], &o[3], &o[4])) return NULL;
    if (get(o[0], &b[0], 0, 4, "ptr") || get(o[1], &b[1], 0, 4, "ind") ||
        get(o[2], &b[2], 0, 4, "deg") || get(o[3], &b[3], 0, 8, "seeds") ||
        get(o[4], &b[4], 1, 4, "order")) {
        release(b, 5);
        return NULL;
    }
    const int32_t *ptr = b[0].view.buf, *ind = b[1].view.buf, *deg = b[2].view.buf;
    const int64_t *seeds = b[3].view.buf;
    int32_t *order = b[4].view.buf;
    Py_ssize_t n = N(b[0]) - 1;
    if (N(b[2]) != n || N(b[3]) != n || N(b[4]) != n || ptr[n] != N(b[1])) {
        release(b, 5);
        PyErr_SetString(PyExc_ValueError, "cuthill_mckee: inconsistent sizes");
        return NULL;
    }
    uint8_t *seen = calloc((size_t)n + 1, 1);
    if (!seen) {
        release(b, 5);
        return PyErr_NoMemory();
    }
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t e = 0; e < ptr[n]; e++)
        if ((uint32_t)ind[e] >= (uint32_t)n) bad = 1;
    for (Py_ssize_t z = 0; z < n; z++)
        if ((uint64_t)seeds[z] >= (uint64_t)n) bad = 1;
    Py_ssize_t count = 0;
    for (Py_ssize_t z = 0; z < n && count < n && !bad; z++) {
        int32_t seed = (int32_t)seeds[z];
        if (seen[seed]) continue;
        seen[seed] = 1;
        order[count++] = seed;
        Py_ssize_t start = count - 1, end = count;
        while (start < end) {
            for (Py_ssize_t v = start; v < end; v++) {
                /* the queue ahead is known: fetch its rows' pointers, columns and marks
                 * early (a random graph's vertices miss every cache) */
                if (v + 4 * PREFETCH_ROWS < count) PREFETCH_R(&ptr[order[v + 4 * PREFETCH_ROWS]]);
                if (v + 2 * PREFETCH_ROWS < count)
                    PREFETCH_R(&ind[ptr[order[v + 2 * PREFETCH_ROWS]]]);
                if (v + PREFETCH_ROWS < count) {
                    int32_t a = order[v + PREFETCH_ROWS];
                    for (int32_t e = ptr[a]; e < ptr[a + 1]; e++) {
                        PREFETCH_R(&seen[ind[e]]);
                        PREFETCH_R(&deg[ind[e]]);
                    }
                }
                int32_t i = order[v];
                Py_ssize_t first = count;
                for (int32_t e = ptr[i]; e < ptr[i + 1]; e++) {
                    int32_t j = ind[e];
                    if (!seen[j]) {
                        seen[j] = 1;
                        order[count++] = j;
                    }
                }
                for (Py_ssize_t k = first + 1; k < count; k++) {  /* stable, by degree */
                    int32_t x = order[k], dx = deg[x];
                    Py_ssize_t m = k;
                    for (; m > first && dx < deg[order[m - 1]]; m--) order[m] = order[m - 1];
                    order[m] = x;
                }
            }
            start = end;
            end = count;
        }
    }
    Py_END_ALLOW_THREADS
    free(seen);
    release(b, 5);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "cuthill_mckee: a vertex lies outside the graph");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* permuted_rows(indptr, indices, order, inverse, row, col): the pattern of A (int32 CSR)
 * with its rows and columns renumbered, grouped by row: row `new` of the result holds
 * row order[new] of A, each column j written as inverse[j], in A's order within the
 * row. row and col (nnz each, both int32 or both int64) are filled. */
static PyObject *permuted_rows(PyObject *self, PyObject *args) {
    PyObject *o[6];
    Buf b[6] = {{{0}}};
    if (!PyArg_ParseTuple(args, "OOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5]))
        return NULL;
    if (get(o[0], &b[0], 0, 4, "indptr") || get(o[1], &b[1], 0, 4, "indices") ||
        get(o[2], &b[2], 0, 4, "order") || get(o[3], &b[3], 0, 4, "inverse") ||
        get(o[4], &b[4], 1, 0, "row") || get(o[5], &b[5], 1, b[4].view.itemsize, "col")) {
        release(b, 6);
        return NULL;
    }
    const int32_t *ap = b[0].view.buf, *aj = b[1].view.buf, *order = b[2].view.buf;
    const int32_t *inverse = b[3].view.buf;
    Py_ssize_t n = N(b[0]) - 1, nnz = N(b[1]);
    int wide = WIDE(b[4]), bad = N(b[2]) != n || N(b[3]) != n || N(b[4]) != nnz ||
                                N(b[5]) != nnz || ap[n] != nnz;
    if (bad) {
        release(b, 6);
        PyErr_SetString(PyExc_ValueError, "permuted_rows: inconsistent sizes");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    /* two passes, each fetching ahead what a random order makes miss the caches: the
     * rows of A in their new order (each row's pointer, then its columns), then the
     * new number of each column */
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i + 2 * PREFETCH_ROWS < n) PREFETCH_R(&ap[order[i + 2 * PREFETCH_ROWS]]);
        if (i + PREFETCH_ROWS < n) {
            int32_t ahead = order[i + PREFETCH_ROWS];
            if ((uint32_t)ahead < (uint32_t)n && ap[ahead] < nnz) PREFETCH_R(&aj[ap[ahead]]);
        }
        int32_t r = order[i];
        if ((uint32_t)r >= (uint32_t)n || ap[r] > ap[r + 1] || ap[r] < 0 ||
            k + (ap[r + 1] - ap[r]) > nnz) {
            bad = 1;
            break;
        }
        if (wide)
            for (int32_t e = ap[r]; e < ap[r + 1]; e++, k++) {
                ((int64_t *)b[4].view.buf)[k] = i;
                ((int64_t *)b[5].view.buf)[k] = aj[e];
            }
        else
            for (int32_t e = ap[r]; e < ap[r + 1]; e++, k++) {
                ((int32_t *)b[4].view.buf)[k] = (int32_t)i;
                ((int32_t *)b[5].view.buf)[k] = aj[e];
            }
    }
    for (Py_ssize_t e = 0; e < k && !bad; e++) {
        if (e + PREFETCH < k) {
            int64_t ahead = at(b[5].view.buf, wide, e + PREFETCH);
            if ((uint64_t)ahead < (uint64_t)n) PREFETCH_R(&inverse[ahead]);
        }
        int64_t j = at(b[5].view.buf, wide, e);
        if ((uint64_t)j >= (uint64_t)n) bad = 1;
        else if (wide) ((int64_t *)b[5].view.buf)[e] = inverse[j];
        else ((int32_t *)b[5].view.buf)[e] = inverse[j];
    }
    bad |= k != nnz;
    Py_END_ALLOW_THREADS
    release(b, 6);
    if (bad) {
        PyErr_SetString(PyExc_ValueError,
                        "permuted_rows: the order is no permutation of the matrix's rows");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"count_rows", count_rows, METH_VARARGS,
     "count_rows(row, col, cols, indptr) -> (in row order, every row's columns sorted)"},
    {"scatter_rows", scatter_rows, METH_VARARGS,
     "scatter_rows(row, col, indptr, out): col grouped by row, stably"},
    {"bucket_rows", bucket_rows, METH_VARARGS,
     "bucket_rows(row, col, shift, at, out, low): entries to buckets of 2^shift rows"},
    {"settle_rows", settle_rows, METH_VARARGS,
     "settle_rows(indptr, out, low, shift, first, last, sort): buckets grouped by row"},
    {"sort_rows", sort_rows, METH_VARARGS, "sort_rows(indptr, colidx): sort each row in place"},
    {"sweep_panels", sweep_panels, METH_VARARGS,
     "sweep_panels(indptr, colidx, halfwidth, state, diag, scalars, tot, mx)"},
    {"sweep_groups", sweep_groups, METH_VARARGS,
     "sweep_groups(indptr, colidx, cols, max_count, blocks, hist)"},
    {"mirrored", mirrored, METH_VARARGS, "mirrored(indptr, colidx, stride) -> (checked, hits)"},
    {"hash64", hash64, METH_VARARGS, "hash64(buffer, seed=0) -> XXH64 of the buffer's bytes"},
    {"sym_count", sym_count, METH_VARARGS,
     "sym_count(indptr, indices, first, last, counts) -> rows sorted without repeats"},
    {"sym_transpose", sym_transpose, METH_VARARGS,
     "sym_transpose(indptr, indices, first, last, pos, bj): rows of A written into A^T"},
    {"sym_union", sym_union, METH_VARARGS,
     "sym_union(indptr, indices, bp, bj, first, last, canonical, at, ptr, deg, ind) -> "
     "entries of A + A^T's rows"},
    {"cuthill_mckee", cuthill_mckee, METH_VARARGS,
     "cuthill_mckee(ptr, ind, deg, seeds, order): the Cuthill-McKee numbering"},
    {"permuted_rows", permuted_rows, METH_VARARGS,
     "permuted_rows(indptr, indices, order, inverse, row, col): A renumbered, by row"},
    {"bin_cells", bin_cells, METH_VARARGS,
     "bin_cells(row, col, rows, cols, nr, nc, counts): entries per cell of the spy image"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native", "Compiled O(nnz) structure passes (ahead of time).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__native(void) { return native_module(&module, KERNEL_VERSION); }
