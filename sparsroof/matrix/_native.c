/* The structure-only read of a plain Matrix Market coordinate body, ahead of time.
 *
 * An analysis needs the coordinates of every entry, how many stored values are zero and
 * a strided sample of the values (sparsroof.structure.features): not every value as a
 * double. This pass reads a byte range of the file through one small buffer, checks each
 * line against a strict grammar and writes the 0-based coordinates into the caller's
 * arrays at the line's place in the file; a value is converted (strtod or strtoll) only
 * where it is sampled or where its digits alone cannot tell whether it is zero.
 *
 * The grammar is narrower than the format: a line is `row col[ value]` (pattern files
 * have no value), numbers separated by spaces or tabs, optional spaces or tabs around
 * them; blank lines are skipped, as the full parser skips them; indices are 1 to 18
 * decimal digits within the size line; a real value is
 * [-][digits][.digits][(e|E)[+|-]digits] with a digit before the exponent, an integer
 * value [-]digits. Anything else (a comment, CR, a NUL byte, inf or nan, a leading '+',
 * a value out of double range, a count that differs from the size line) makes the pass
 * give up and the caller read the file with the full parser, which reads or refuses it
 * with its message: this pass decides nothing a file may be refused for.
 *
 * The pass releases the GIL: two threads read two halves of a file side by side, the
 * second starting at the entry the count of the first half's lines (count_lines) gives.
 */

#include "native.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* bumped whenever the pass changes: the Python side refuses a stale build */
#define SCAN_VERSION 4

#define BLOCK (1 << 18)
/* longest value token converted by strtod/strtoll */
#define TOKEN 128

#ifdef _WIN32
#define SEEK(f, o) _fseeki64((f), (o), SEEK_SET)
#else
#define SEEK(f, o) fseeko((f), (off_t)(o), SEEK_SET)
#endif

enum { PATTERN = 0, REAL = 1, INTEGER = 2 };

/* outcomes besides a line count */
#define GIVE_UP (-1)
#define IO_ERROR (-2)

#define DIGIT(c) ((unsigned char)((c) - '0') < 10)
#define BLANK(c) ((c) == ' ' || (c) == '\t')

typedef struct {
    int kind;
    int64_t rows, cols;
    void *row, *col; /* int32 or int64 each, `wide` says which */
    int wide;
    Py_ssize_t capacity; /* entries the arrays hold */
    Py_ssize_t next;     /* where the next entry goes */
    Py_ssize_t step;     /* every step-th entry (by place in the file) is sampled */
    void *sample;        /* double or int64 (integer files) */
    Py_ssize_t samples;
    Py_ssize_t zeros;
    Py_ssize_t diagonal_zeros; /* zeros on the main diagonal */
    int64_t *counts;           /* entries per row, or NULL */
    int64_t last_row, last_col;
    int ordered, sorted;       /* rows never fall; nor columns within a row */
} Scan;

/* Eight bytes at p, as one word (the buffer holds 8 bytes of padding past its data). */
static inline uint64_t load8(const char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Whether all eight bytes of v are decimal digits (any byte order). */
static inline int eight_digits(uint64_t v) {
    return ((v & 0xF0F0F0F0F0F0F0F0ULL) |
            (((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) ==
           0x3333333333333333ULL;
}

/* One index of 1..limit: its 0-based value, or -1 (the pointer is left after it). */
static inline int64_t index_of(const char **at, int64_t limit) {
    const char *p = *at;
    uint64_t v = 0;
    int n = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
    (defined(__GNUC__) || defined(__clang__))
    /* the first non-digit byte of the next eight: x holds each byte's digit value, and
     * a byte above 9 sets its top bit in x + 0x76 (or in x); carries run only upward from
     * such a byte, so the lowest flagged byte is exact */
    uint64_t x = load8(p) ^ 0x3030303030303030ULL;
    uint64_t flags = ((x + 0x7676767676767676ULL) | x) & 0x8080808080808080ULL;
    n = flags ? __builtin_ctzll(flags) >> 3 : 8;
    if (n > 0 && n < 8) {
        /* the n digits, as the low bytes of an 8-digit number with leading zeros (the
         * first digit is the lowest byte) */
        uint64_t d = x << (8 * (8 - n));
        d = (d * 10) + (d >> 8);
        d = (((d & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
             (((d >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
        v = (uint32_t)d;
        p += n;
        *at = p;
        if (v < 1 || v > (uint64_t)limit) return -1;
        return (int64_t)v - 1;
    }
    n = 0;
#endif
    while (DIGIT(*p)) {
        v = v * 10 + (uint64_t)(*p - '0');
        p++;
        if (++n > 18) return -1;
    }
    *at = p;
    if (n == 0 || v < 1 || v > (uint64_t)limit) return -1;
    return (int64_t)v - 1;
}

/* The run of digits at *at, eight at a time while it lasts: its length; *nonzero is set
 * where one of them is not 0 (the pointer is left after the run). */
static inline int digit_run(const char **at, int *nonzero) {
    const char *p = *at;
    uint64_t w;
    int digits = 0;
    while (eight_digits(w = load8(p))) {
        *nonzero |= w != 0x3030303030303030ULL;
        digits += 8;
        p += 8;
    }
    while (DIGIT(*p)) {
        *nonzero |= *p != '0';
        digits++;
        p++;
    }
    *at = p;
    return digits;
}

/* The value token at *at: sets *zero; converts it into the sample when `keep`.
 * Returns 0, or -1 to give up. */
static inline int value_of(Scan *s, const char **at, int keep, int *zero) {
    const char *p = *at, *start = p;
    int nonzero = 0, digits = 0, big = 0;
    if (*p == '-') p++;
    digits += digit_run(&p, &nonzero);
    if (s->kind == REAL) {
        if (*p == '.') {
            p++;
            digits += digit_run(&p, &nonzero);
        }
        if (*p == 'e' || *p == 'E') {
            p++;
            if (*p == '-' || *p == '+') p++;
            int e = 0, n = 0;
            while (DIGIT(*p)) {
                e = e * 10 + (*p - '0');
                p++;
                if (++n > 4) return -1;
            }
            if (n == 0) return -1;
            big = e > 250;
        }
        big |= digits > 40;
    } else if (digits > 18) {
        return -1;
    }
    if (digits == 0) return -1;
    if (!BLANK(*p) && *p != '\n') return -1;
    *at = p;
    if (!(keep || (nonzero && big))) {
        *zero = !nonzero;
        return 0;
    }
    size_t len = (size_t)(p - start);
    if (len >= TOKEN) return -1;
    char token[TOKEN], *end;
    memcpy(token, start, len);
    token[len] = 0;
    errno = 0;
    if (s->kind == REAL) {
        double v = strtod(token, &end);
        if (errno == ERANGE || end != token + len) return -1;
        *zero = v == 0;
        if (keep) ((double *)s->sample)[s->samples++] = v;
    } else {
        long long v = strtoll(token, &end, 10);
        if (errno == ERANGE || end != token + len) return -1;
        *zero = v == 0;
        if (keep) ((int64_t *)s->sample)[s->samples++] = (int64_t)v;
    }
    return 0;
}

/* The whole lines of buf[0, n) (the last byte is a newline): 0, or -1 to give up.
 * The loop keeps its state in locals: extensions build with -fno-strict-aliasing, so a
 * store through an index array would otherwise reload every field of `s`. */
static int scan_lines(Scan *s, const char *buf, size_t n) {
    const char *p = buf, *stop = buf + n;
    const int kind = s->kind, wide = s->wide;
    const int64_t rows = s->rows, cols = s->cols;
    int32_t *row32 = s->row, *col32 = s->col;
    int64_t *row64 = s->row, *col64 = s->col;
    Py_ssize_t next = s->next, zeros = s->zeros, capacity = s->capacity;
    Py_ssize_t diagonal_zeros = s->diagonal_zeros;
    /* entries until the next sampled one */
    Py_ssize_t until = (s->step - next % s->step) % s->step;
    int status = 0;
    while (p < stop) {
        while (BLANK(*p)) p++;
        if (*p == '\n') { /* a blank line, skipped as the full parser skips it */
            p++;
            continue;
        }
        int64_t r = index_of(&p, rows);
        if (r < 0 || !BLANK(*p)) goto give_up;
        while (BLANK(*p)) p++;
        int64_t c = index_of(&p, cols);
        if (c < 0 || next >= capacity) goto give_up;
        if (kind != PATTERN) {
            if (!BLANK(*p)) goto give_up;
            while (BLANK(*p)) p++;
            int zero = 0;
            if (value_of(s, &p, until == 0, &zero)) goto give_up;
            until = until ? until - 1 : s->step - 1;
            zeros += zero;
            diagonal_zeros += zero & (r == c);
        }
        while (BLANK(*p)) p++;
        if (*p != '\n') goto give_up;
        p++;
        if (wide) {
            row64[next] = r;
            col64[next] = c;
        } else {
            row32[next] = (int32_t)r;
            col32[next] = (int32_t)c;
        }
        next++;
    }
    goto done;
give_up:
    status = -1;
done:
    s->next = next;
    s->zeros = zeros;
    s->diagonal_zeros = diagonal_zeros;
    return status;
}

/* The row counts and order flags of entries [from, to), just written (so still in the
 * caches): a tight loop of its own, whose increments the processor overlaps, where
 * inside the parsing loop each one waited for its cache miss. */
static void count_block(Scan *s, Py_ssize_t from, Py_ssize_t to) {
    int64_t *counts = s->counts, last_row = s->last_row, last_col = s->last_col;
    int ordered = s->ordered, sorted = s->sorted;
    for (Py_ssize_t e = from; e < to; e++) {
        int64_t r = s->wide ? ((int64_t *)s->row)[e] : ((int32_t *)s->row)[e];
        int64_t c = s->wide ? ((int64_t *)s->col)[e] : ((int32_t *)s->col)[e];
        counts[r]++;
        ordered &= r >= last_row;
        sorted &= !(r == last_row && c < last_col);
        last_row = r;
        last_col = c;
    }
    s->last_row = last_row;
    s->last_col = last_col;
    s->ordered = ordered;
    s->sorted = sorted;
}

/* Reads bytes [start, end) of the file in whole lines: the range's line count, GIVE_UP or
 * IO_ERROR. The range must end just after a newline. */
static Py_ssize_t scan_range(Scan *s, const char *path, int64_t start, int64_t end) {
    FILE *f = fopen(path, "rb");
    if (!f) return IO_ERROR;
    char *buf = calloc(BLOCK + 16, 1); /* a newline guard and padding for load8 */
    Py_ssize_t first = s->next, result = GIVE_UP;
    if (!buf || SEEK(f, start) != 0) {
        result = IO_ERROR;
        goto done;
    }
    size_t held = 0;
    int64_t left = end - start;
    while (left > 0) {
        size_t want = BLOCK - held;
        if ((int64_t)want > left) want = (size_t)left;
        size_t got = fread(buf + held, 1, want, f);
        if (got == 0) goto done; /* the file shrank */
        left -= (int64_t)got;
        held += got;
        size_t whole = held;
        while (whole > 0 && buf[whole - 1] != '\n') whole--;
        if (whole == 0) goto done; /* a line longer than the buffer, or no newline */
        buf[held] = '\n';          /* a guard: no token runs past the held bytes */
        Py_ssize_t from = s->next;
        if (scan_lines(s, buf, whole)) goto done;
        if (s->counts) count_block(s, from, s->next);
        memmove(buf, buf + whole, held - whole);
        held -= whole;
    }
    if (held == 0) result = s->next - first;
done:
    if (ferror(f)) result = IO_ERROR;
    fclose(f);
    free(buf);
    return result;
}


/* scan(path, start, end, kind, rows, cols, row, col, first, step, sample, counts)
 *   -> (lines, zeros, diagonal zeros, samples, in row order, and in column order within
 * each row); lines is -1 to give up, -2 on a read error. counts (int64, one per row,
 * zeros) gets the range's entries per row, and the order flags are measured, unless it
 * is empty. */
static PyObject *scan(PyObject *self, PyObject *args) {
    PyObject *path_obj, *o[4];
    long long start, end, rows, cols;
    Py_ssize_t first, step;
    int kind;
    Buf b[4] = {{{0}}};
    if (!PyArg_ParseTuple(args, "O&LLiLLOOnnOO", PyUnicode_FSConverter, &path_obj, &start,
                          &end, &kind, &rows, &cols, &o[0], &o[1], &first, &step, &o[2],
                          &o[3]))
        return NULL;
    if (get(o[0], &b[0], 1, 0, "row") || get(o[1], &b[1], 1, b[0].view.itemsize, "col") ||
        get(o[2], &b[2], 1, 8, "sample") || get(o[3], &b[3], 1, 8, "counts")) {
        release(b, 4);
        Py_DECREF(path_obj);
        return NULL;
    }
    Py_ssize_t n = b[0].view.len / b[0].view.itemsize;
    if (b[1].view.len != b[0].view.len || step < 1 || first < 0 || first > n ||
        kind < PATTERN || kind > INTEGER || start < 0 || end < start ||
        b[2].view.len / 8 < (n + step - 1) / step ||
        (b[3].view.len && b[3].view.len / 8 != rows)) {
        release(b, 4);
        Py_DECREF(path_obj);
        PyErr_SetString(PyExc_ValueError, "scan: inconsistent arguments");
        return NULL;
    }
    Scan s = {kind, rows, cols, b[0].view.buf, b[1].view.buf, b[0].view.itemsize == 8, n,
              first, step, b[2].view.buf, (first + step - 1) / step, 0, 0,
              b[3].view.len ? b[3].view.buf : NULL, -1, -1, 1, 1};
    Py_ssize_t lines;
    const char *path = PyBytes_AS_STRING(path_obj);
    Py_BEGIN_ALLOW_THREADS
    lines = scan_range(&s, path, start, end);
    Py_END_ALLOW_THREADS
    release(b, 4);
    Py_DECREF(path_obj);
    return Py_BuildValue("(nnnnOO)", lines, s.zeros, s.diagonal_zeros,
                         s.samples - (first + step - 1) / step,
                         s.ordered ? Py_True : Py_False, s.sorted ? Py_True : Py_False);
}

/* count_lines(path, start, end) -> lines in bytes [start, end) that hold more than spaces
 * and tabs (the entry lines), or -2 on a read error */
static PyObject *count_lines(PyObject *self, PyObject *args) {
    PyObject *path_obj;
    long long start, end;
    if (!PyArg_ParseTuple(args, "O&LL", PyUnicode_FSConverter, &path_obj, &start, &end))
        return NULL;
    Py_ssize_t lines = 0;
    int started = 0; /* the current line holds something besides spaces and tabs */
    const char *path = PyBytes_AS_STRING(path_obj);
    Py_BEGIN_ALLOW_THREADS
    FILE *f = fopen(path, "rb");
    char *buf = f ? malloc(BLOCK) : NULL;
    if (!buf || SEEK(f, start) != 0) {
        lines = IO_ERROR;
    } else {
        int64_t left = end - start;
        while (left > 0) {
            size_t want = left < BLOCK ? (size_t)left : BLOCK;
            size_t got = fread(buf, 1, want, f);
            if (got == 0) break;
            left -= (int64_t)got;
            const char *p = buf, *stop = buf + got;
            while (p < stop) {
                if (!started) { /* the line's first byte other than a space or tab */
                    while (p < stop && BLANK(*p)) p++;
                    if (p == stop) break;
                    if (*p == '\n') { /* a blank line holds no entry */
                        p++;
                        continue;
                    }
                    started = 1;
                }
                const char *nl = memchr(p, '\n', (size_t)(stop - p));
                if (!nl) break; /* the line goes on in the next block */
                lines++;
                started = 0;
                p = nl + 1;
            }
        }
        if (left > 0 || ferror(f)) lines = IO_ERROR;
    }
    free(buf);
    if (f) fclose(f);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    return PyLong_FromSsize_t(lines);
}

/* The value of every wanted line of bytes [start, end): wanted holds 0-based line
 * numbers, rising; out gets their values. Returns how many were read (fewer, or -1,
 * where the file no longer holds the lines the scan read: the caller gives up). */
static Py_ssize_t pick_range(Scan *s, const char *path, int64_t start, int64_t end,
                             const int64_t *wanted, Py_ssize_t count) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char *buf = calloc(BLOCK + 16, 1);
    Py_ssize_t done = 0;
    int64_t line = 0;
    if (!buf || SEEK(f, start) != 0) goto out;
    size_t held = 0;
    int64_t left = end - start;
    while (left > 0 && done < count) {
        size_t want = BLOCK - held;
        if ((int64_t)want > left) want = (size_t)left;
        size_t got = fread(buf + held, 1, want, f);
        if (got == 0) break;
        left -= (int64_t)got;
        held += got;
        size_t whole = held;
        while (whole > 0 && buf[whole - 1] != '\n') whole--;
        if (whole == 0) break;
        buf[held] = '\n';
        const char *p = buf, *stop = buf + whole;
        while (p < stop && done < count) {
            const char *q = p;
            while (BLANK(*q)) q++;
            if (*q == '\n') { /* a blank line holds no entry */
                p = q + 1;
                continue;
            }
            if (line == wanted[done]) {
                for (int k = 0; k < 2; k++) { /* the two indices */
                    while (DIGIT(*q)) q++;
                    while (BLANK(*q)) q++;
                }
                int zero;
                if (value_of(s, &q, 1, &zero)) goto out;
                done++;
            }
            const char *nl = memchr(p, '\n', (size_t)(stop - p));
            p = nl + 1;
            line++;
        }
        memmove(buf, buf + whole, held - whole);
        held -= whole;
    }
out:
    fclose(f);
    free(buf);
    return done;
}

static PyObject *pick(PyObject *self, PyObject *args) {
    PyObject *path_obj, *o[2];
    long long start, end;
    int kind;
    Buf b[2] = {{{0}}};
    if (!PyArg_ParseTuple(args, "O&LLiOO", PyUnicode_FSConverter, &path_obj, &start, &end,
                          &kind, &o[0], &o[1]))
        return NULL;
    if (get(o[0], &b[0], 1, 8, "wanted") || get(o[1], &b[1], 1, 8, "out")) {
        release(b, 2);
        Py_DECREF(path_obj);
        return NULL;
    }
    Py_ssize_t count = b[0].view.len / 8;
    if (b[1].view.len / 8 < count || (kind != REAL && kind != INTEGER)) {
        release(b, 2);
        Py_DECREF(path_obj);
        PyErr_SetString(PyExc_ValueError, "pick: inconsistent arguments");
        return NULL;
    }
    const int64_t *wanted = b[0].view.buf;
    for (Py_ssize_t i = 1; i < count; i++)
        if (wanted[i] <= wanted[i - 1]) {
            release(b, 2);
            Py_DECREF(path_obj);
            PyErr_SetString(PyExc_ValueError, "pick: the wanted lines must rise");
            return NULL;
        }
    Scan s = {kind, 0, 0, NULL, NULL, 0, 0, 0, 1, b[1].view.buf, 0, 0, 0, NULL, -1, -1, 1, 1};
    Py_ssize_t done;
    const char *path = PyBytes_AS_STRING(path_obj);
    Py_BEGIN_ALLOW_THREADS
    done = pick_range(&s, path, start, end, wanted, count);
    Py_END_ALLOW_THREADS
    release(b, 2);
    Py_DECREF(path_obj);
    return PyLong_FromSsize_t(done);
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS,
     "scan(path, start, end, kind, rows, cols, row, col, first, step, sample, counts) -> "
     "(lines, zeros, diagonal zeros, samples, in row order, sorted within rows)"},
    {"pick", pick, METH_VARARGS,
     "pick(path, start, end, kind, wanted, out) -> values read (the values of lines wanted)"},
    {"count_lines", count_lines, METH_VARARGS,
     "count_lines(path, start, end) -> newlines in the byte range"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native", "The structure-only read of a coordinate body.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__native(void) { return native_module(&module, SCAN_VERSION); }
