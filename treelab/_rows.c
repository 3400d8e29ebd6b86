/* treelab._speedups, part 3: the rows of a first save, numbered breadth-first.
 *
 * A new database gets every node. Numbered breadth-first (children in their
 * list order), the rows arrive sorted by ``parent_id`` as well as by ``id``, so
 * SQLite builds the ``parent_id`` indexes from nearly sorted input, about 2.5x
 * faster than from creation order. treelab/bulk.py holds the Python version,
 * which is the reference; these do the same with pointer reads of the slots.
 *
 *   breadth_first(root)                          -> (nodes, parents)
 *   rows(nodes, parents, start, stop, first_id, width)
 *       -> [(id, parent_id, move, depth, nb_visit, nb_win, nb_draw, proven, created_game,   <- row 1
 *            id, parent_id, ...), ...]                     <- width rows per tuple, the last maybe fewer
 *   renumber(nodes, first_id)                    -> None
 *
 * Each tuple holds the values of ``width`` rows, for one multi-row ``INSERT ...
 * VALUES (...), (...)``: SQLite then runs one statement per ``width`` rows,
 * which halves the time of one ``executemany`` row at a time.
 * ``parents`` is bytes of native int64: the position in ``nodes`` of each
 * node's parent, -1 for the first node. Nothing is changed until ``renumber``,
 * which the caller runs once the rows are committed.
 */
#include "_speedups.h"

#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)0)
#endif

/* The children list of node when it is a plain slot, else NULL (no exception). */
static inline PyObject *kids_slot(PyObject *node) {
    Py_ssize_t off = slot_offset(node, F_KIDS);
    return off >= 0 ? *(PyObject **)((char *)node + off) : NULL;
}

/* Ask for the memory that breadth_first reads a few steps ahead: walking a tree
 * of a million nodes is a chain of cache misses (node, its children list, the
 * list's items, each child's reference count); prefetched, they overlap. */
static inline void look_ahead(PyObject *order, Py_ssize_t i) {
    Py_ssize_t n = PyList_GET_SIZE(order);
    if (i + 16 < n) PREFETCH(PyList_GET_ITEM(order, i + 16));
    if (i + 8 < n) {
        PyObject *kids = kids_slot(PyList_GET_ITEM(order, i + 8));
        if (kids != NULL) PREFETCH(kids);
    }
    if (i + 4 < n) {
        PyObject *kids = kids_slot(PyList_GET_ITEM(order, i + 4));
        if (kids != NULL && PyList_CheckExact(kids)) PREFETCH(((PyListObject *)kids)->ob_item);
    }
    if (i + 2 < n) {
        PyObject *kids = kids_slot(PyList_GET_ITEM(order, i + 2));
        if (kids != NULL && PyList_CheckExact(kids))
            for (Py_ssize_t k = 0; k < PyList_GET_SIZE(kids); k++) PREFETCH(PyList_GET_ITEM(kids, k));
    }
}

PyObject *breadth_first(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, "breadth_first(root) takes 1 argument");
        return NULL;
    }
    PyObject *order = PyList_New(0);
    Py_ssize_t cap = 1024, used = 0;
    int64_t *parents = PyMem_Malloc(cap * sizeof(int64_t));
    if (order == NULL || parents == NULL || PyList_Append(order, args[0]) < 0) goto fail;
    parents[used++] = -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(order); i++) {
        look_ahead(order, i);
        int error;
        PyObject *kids = children_of(PyList_GET_ITEM(order, i), &error);
        if (error) goto fail;
        if (kids == NULL) continue;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(kids);
        if (used + n > cap) {
            while (used + n > cap) cap *= 2;
            int64_t *more = PyMem_Realloc(parents, cap * sizeof(int64_t));
            if (more == NULL) {
                PyErr_NoMemory();
                goto fail;
            }
            parents = more;
        }
        for (Py_ssize_t k = 0; k < n; k++) {
            if (PyList_Append(order, PySequence_Fast_GET_ITEM(kids, k)) < 0) goto fail;
            parents[used++] = i;
        }
    }
    PyObject *packed = PyBytes_FromStringAndSize((const char *)parents, used * (Py_ssize_t)sizeof(int64_t));
    PyMem_Free(parents);
    return pair_of(order, packed);
fail:
    if (parents == NULL && !PyErr_Occurred()) PyErr_NoMemory();
    Py_XDECREF(order);
    PyMem_Free(parents);
    return NULL;
}

/* Put the 9 values of node's row, numbered id (its parent numbered parent, -1: NULL), into
 * out[at..at+8]; 0, or -1 with an exception. */
static int put_row(PyObject *out, Py_ssize_t at, PyObject *node, long long id, long long parent) {
    static const int fields[] = {F_NAME, F_DEPTH, F_VISIT, F_WIN, F_DRAW, F_PROVEN, F_CREATED};
    PyObject *value = PyLong_FromLongLong(id);
    if (value == NULL) return -1;
    PyTuple_SET_ITEM(out, at, value);
    if (parent < 0) {
        Py_INCREF(Py_None);
        value = Py_None;
    } else if ((value = PyLong_FromLongLong(parent)) == NULL) {
        return -1;
    }
    PyTuple_SET_ITEM(out, at + 1, value);
    for (int f = 0; f < 7; f++) {
        if ((value = get_field(node, fields[f])) == NULL) return -1;
        PyTuple_SET_ITEM(out, at + 2 + f, value);
    }
    return 0;
}

PyObject *node_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "rows(nodes: list, parents: bytes, start, stop, first_id, width)");
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[2]), stop = PyLong_AsSsize_t(args[3]);
    long long first = PyLong_AsLongLong(args[4]);
    Py_ssize_t width = PyLong_AsSsize_t(args[5]);
    if (PyErr_Occurred()) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[1], &view, PyBUF_SIMPLE) < 0) return NULL;
    const int64_t *parents = view.buf;
    Py_ssize_t known = view.len / (Py_ssize_t)sizeof(int64_t);
    if (stop > PyList_GET_SIZE(args[0])) stop = PyList_GET_SIZE(args[0]);
    if (start < 0 || stop > known || start > stop || width < 1) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_IndexError, "rows: start/stop outside the nodes and parents given, or width < 1");
        return NULL;
    }
    PyObject *out = PyList_New((stop - start + width - 1) / width);
    for (Py_ssize_t g = 0; out != NULL && g < PyList_GET_SIZE(out); g++) {
        Py_ssize_t from = start + g * width, to = from + width < stop ? from + width : stop;
        PyObject *flat = PyTuple_New(9 * (to - from));
        if (flat == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, g, flat);
        for (Py_ssize_t i = from; i < to; i++) {
            if (i + 8 < stop) {
                char *ahead = (char *)PyList_GET_ITEM(args[0], i + 8);
                PREFETCH(ahead);
                PREFETCH(ahead + 64);
            }
            int64_t p = parents[i];
            if (put_row(flat, 9 * (i - from), PyList_GET_ITEM(args[0], i), first + i, p < 0 ? -1 : first + p) < 0) {
                Py_CLEAR(out);
                break;
            }
        }
    }
    PyBuffer_Release(&view);
    return out;
}

PyObject *renumber(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "renumber(nodes: list, first_id)");
        return NULL;
    }
    long long first = PyLong_AsLongLong(args[1]);
    if (first == -1 && PyErr_Occurred()) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(args[0]); i++) {
        if (i + 8 < PyList_GET_SIZE(args[0])) {
            char *ahead = (char *)PyList_GET_ITEM(args[0], i + 8);
            PREFETCH(ahead);
            PREFETCH(ahead + 64);
        }
        PyObject *id = PyLong_FromLongLong(first + i);
        if (id == NULL) return NULL;
        int status = set_field(PyList_GET_ITEM(args[0], i), F_ID, id);
        Py_DECREF(id);
        if (status < 0) return NULL;
    }
    Py_RETURN_NONE;
}
