/* What the package's C passes share: borrowing numpy arrays' buffers, and the module's
 * creation with its KERNEL_VERSION (which the Python side compares with its own, so that a
 * stale build is never used). Included by sparsroof/{matrix,structure,advisor}/_native.c. */
#ifndef SPARSROOF_NATIVE_H
#define SPARSROOF_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    Py_buffer view;
    int held;
} Buf;

static inline void release(Buf *b, int n) {
    for (int k = 0; k < n; k++)
        if (b[k].held) PyBuffer_Release(&b[k].view);
}

/* A C-contiguous buffer of items of `size` bytes (4 or 8 when size == 0). */
static inline int get(PyObject *obj, Buf *b, int writable, Py_ssize_t size, const char *what) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &b->view, flags) < 0) return -1;
    b->held = 1;
    if ((size && b->view.itemsize != size) ||
        (!size && b->view.itemsize != 4 && b->view.itemsize != 8)) {
        PyErr_Format(PyExc_TypeError, "%s: unexpected item size %zd", what, b->view.itemsize);
        return -1;
    }
    return 0;
}

/* The end of a pass: the buffers released, then None, or a ValueError saying `message`
 * where the pass found its arguments `bad`. */
static inline PyObject *finish(Buf *b, int n, int bad, const char *message) {
    release(b, n);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, message);
        return NULL;
    }
    Py_RETURN_NONE;
}

#define N(b) ((b).view.len / (b).view.itemsize)
#define WIDE(b) ((b).view.itemsize == 8)

/* The module of `def`, with its KERNEL_VERSION constant. */
static inline PyObject *native_module(struct PyModuleDef *def, long version) {
    PyObject *m = PyModule_Create(def);
    if (m && PyModule_AddIntConstant(m, "KERNEL_VERSION", version) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

#endif
