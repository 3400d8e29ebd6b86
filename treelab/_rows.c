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
 *       -> [(id, parent_id, move, depth, nb_visit, nb_win, nb_draw, proven, created_game, nb_select,  <- row 1
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

#include <limits.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)0)
#endif

/* What node's children slot holds (a list, a tuple, the one child) when it is a plain slot, else NULL
 * (no exception): only a memory hint for look_ahead; the children are read with child_items. */
static inline PyObject *kids_slot(PyObject *node) {
    Py_ssize_t off = slot_offset(node, F_KIDS);
    return off >= 0 ? *(PyObject **)((char *)node + off) : NULL;
}

/* Ask for the memory that breadth_first reads a few steps ahead: walking a tree
 * of a million nodes is a chain of cache misses (node, its children list, the
 * list's items, each child's reference count); prefetched, they overlap. */
static inline void look_ahead(PyObject *order, Py_ssize_t i) {
    Py_ssize_t n = PyList_GET_SIZE(order), k;
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
        PyObject **items = child_items(PyList_GET_ITEM(order, i + 2), &k);
        if (k < 0) PyErr_Clear(); /* breadth_first reports it when it gets there */
        for (Py_ssize_t j = 0; j < k; j++) PREFETCH(items[j]);
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
        Py_ssize_t n;
        child_items(PyList_GET_ITEM(order, i), &n);
        if (n < 0) goto fail;
        if (used + n > cap) {
            while (used + n > cap) cap *= 2;
            int64_t *more = PyMem_Realloc(parents, cap * sizeof(int64_t));
            if (more == NULL) {
                PyErr_NoMemory();
                goto fail;
            }
            parents = more;
        }
        for (Py_ssize_t k = 0; k < n; k++) { /* re-read: an append may run the garbage collector */
            if (PyList_Append(order, child_items(PyList_GET_ITEM(order, i), &n)[k]) < 0) goto fail;
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

/* Put the ROW_SIZE values of node's row, numbered id (its parent numbered parent, -1: NULL), into
 * out[at..at+ROW_SIZE-1]; 0, or -1 with an exception. */
#define ROW_SIZE 10
static int put_row(PyObject *out, Py_ssize_t at, PyObject *node, long long id, long long parent) {
    static const int fields[] = {F_NAME, F_DEPTH, F_VISIT, F_WIN, F_DRAW, F_PROVEN, F_CREATED, F_SELECT};
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
    for (int f = 0; f < ROW_SIZE - 2; f++) {
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
        PyObject *flat = PyTuple_New(ROW_SIZE * (to - from));
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
            if (put_row(flat, ROW_SIZE * (i - from), PyList_GET_ITEM(args[0], i), first + i, p < 0 ? -1 : first + p) < 0) {
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

/* -- the other way: rows to nodes (treelab.store's loads) ----------------------------------------------- */

/* nodes[key] for a list (index) or a dict; a new reference, NULL with an exception. */
static PyObject *lookup(PyObject *nodes, PyObject *key) {
    if (PyList_CheckExact(nodes)) {
        Py_ssize_t i = PyLong_AsSsize_t(key);
        if (i == -1 && PyErr_Occurred()) return NULL;
        if (i < 0 || i >= PyList_GET_SIZE(nodes) || PyList_GET_ITEM(nodes, i) == Py_None) {
            PyErr_SetObject(PyExc_KeyError, key); /* a row whose parent comes later, or is missing */
            return NULL;
        }
        PyObject *found = PyList_GET_ITEM(nodes, i);
        Py_INCREF(found);
        return found;
    }
    return PyObject_GetItem(nodes, key);
}

static int store(PyObject *nodes, PyObject *key, PyObject *node) {
    if (PyList_CheckExact(nodes)) {
        Py_ssize_t i = PyLong_AsSsize_t(key);
        if (i == -1 && PyErr_Occurred()) return -1;
        if (i < 0 || i >= PyList_GET_SIZE(nodes)) {
            PyErr_Format(PyExc_ValueError, "id %zd of a node is outside the ids counted (0 to %zd)", i,
                         PyList_GET_SIZE(nodes) - 1);
            return -1;
        }
        return PyList_SetItem(nodes, i, (Py_INCREF(node), node));
    }
    return PyObject_SetItem(nodes, key, node);
}

/* A new node of cls with the slots id, name, nb_visit, nb_win, nb_draw, proven, created_game, nb_select
 * set from values[0..7], linked as the last child of parent (NULL: a root), its depth one more than
 * the parent's (written to *depth too). With last (a load), the previous node's parent, kept in
 * *last, gets its children sealed into an exact-size tuple as soon as a node of another parent comes:
 * rows numbered breadth-first bring each node's children together, so a load holds one list at a
 * time and the lists' memory is reused (sealing them all at the end would leave it behind, unused).
 * A new reference, NULL with an exception. */
static PyObject *make_node(PyTypeObject *cls, PyObject *parent, PyObject *const *values, long *depth,
                           PyObject **last) {
    static const int fields[] = {F_ID, F_NAME, F_VISIT, F_WIN, F_DRAW, F_PROVEN, F_CREATED, F_SELECT};
    PyObject *value = NULL, *node = cls->tp_alloc(cls, 0);
    if (node == NULL) return NULL;
    for (int f = 0; f < 8; f++)
        if (set_field(node, fields[f], values[f]) < 0) goto fail;
    *depth = 0;
    if (parent != NULL) {
        PyObject *above = get_field(parent, F_DEPTH);
        if (above == NULL) goto fail;
        *depth = PyLong_AsLong(above) + 1;
        Py_DECREF(above);
        if (*depth == 0 && PyErr_Occurred()) goto fail;
        if (last != NULL && *last != parent) {
            if (*last != NULL && seal_children(*last) < 0) goto fail;
            Py_INCREF(parent);
            Py_XSETREF(*last, parent);
        }
        if (append_child(parent, node) < 0) goto fail;
    }
    if ((value = PyLong_FromLong(*depth)) == NULL || set_field(node, F_DEPTH, value) < 0) goto fail;
    Py_DECREF(value);
    return node;
fail:
    Py_XDECREF(value);
    Py_DECREF(node);
    return NULL;
}

/* ValueError naming the bad value of one row: "nb_visit -5 of node 3 is not a count >= 0". */
static int bad_value(const char *column, PyObject *value, PyObject *id, const char *want) {
    PyErr_Format(PyExc_ValueError, "%s %R of node %R %s", column, value, id, want);
    return -1;
}

/* Whether value is an exact int in [low, high]; -1 with an exception for none of the two. */
static int int_within(PyObject *value, long long low, long long high) {
    if (!PyLong_CheckExact(value)) return 0;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    return !overflow && v >= low && v <= high;
}

/* Check the values of a row before a node is made of it: ids and counts are whole numbers (counts
 * >= 0), proven is None, -1, 0 or 1, the move a text that labels (known, or check(move) accepts it
 * and it is remembered in labels). 0, or -1 with an exception (ValueError for a bad value). */
static int check_row(PyObject *row, PyObject *labels, PyObject *check) {
    static const char *counts[] = {"nb_visit", "nb_win", "nb_draw"};
    PyObject *selected = PyTuple_GET_ITEM(row, 8);
    PyObject *id = PyTuple_GET_ITEM(row, 0), *pid = PyTuple_GET_ITEM(row, 1), *move = PyTuple_GET_ITEM(row, 2);
    PyObject *proven = PyTuple_GET_ITEM(row, 6), *created = PyTuple_GET_ITEM(row, 7);
    int ok;
    if ((ok = int_within(id, LLONG_MIN, LLONG_MAX)) <= 0) return ok < 0 ? -1 : bad_value("id", id, id, "is not a whole number");
    if (pid != Py_None && (ok = int_within(pid, LLONG_MIN, LLONG_MAX)) <= 0)
        return ok < 0 ? -1 : bad_value("parent_id", pid, id, "is not a node id");
    for (int k = 0; k < 3; k++) {
        PyObject *value = PyTuple_GET_ITEM(row, 3 + k);
        if ((ok = int_within(value, 0, LLONG_MAX)) <= 0)
            return ok < 0 ? -1 : bad_value(counts[k], value, id, "is not a count >= 0");
    }
    if (selected != Py_None && (ok = int_within(selected, 0, LLONG_MAX)) <= 0)
        return ok < 0 ? -1 : bad_value("nb_select", selected, id, "is not a count >= 0");
    if (proven != Py_None && (ok = int_within(proven, -1, 1)) <= 0)
        return ok < 0 ? -1 : bad_value("proven", proven, id, "is not -1, 0, 1 or NULL");
    if (created != Py_None && (ok = int_within(created, LLONG_MIN, LLONG_MAX)) <= 0)
        return ok < 0 ? -1 : bad_value("created_game", created, id, "is not a game id");
    if (!PyUnicode_CheckExact(move)) return bad_value("move", move, id, "is not a text");
    if (check == NULL || pid == Py_None) return 0;
    if ((ok = PySet_Contains(labels, move)) != 0) return ok < 0 ? -1 : 0;
    PyObject *verdict = PyObject_CallOneArg(check, move);
    if (verdict == NULL) return -1;
    Py_DECREF(verdict);
    return PySet_Add(labels, move);
}

/* One node from a row (id, parent_id, move, nb_visit, nb_win, nb_draw, proven, created_game, nb_select,
 * cut), linked under nodes[parent_id]; *depth gets its depth. A new reference, NULL with an exception. */
static PyObject *node_of(PyTypeObject *cls, PyObject *row, PyObject *nodes, PyObject *shared, long *depth,
                        PyObject **last) {
    PyObject *parent = NULL, *pid = PyTuple_GET_ITEM(row, 1);
    if (pid != Py_None && (parent = lookup(nodes, pid)) == NULL) return NULL;
    PyObject *created = PyTuple_GET_ITEM(row, 7); /* one int object per game id, shared by its nodes */
    PyObject *one_copy = PyDict_SetDefault(shared, created, created);
    if (one_copy == NULL) {
        Py_XDECREF(parent);
        return NULL;
    }
    PyObject *values[8] = {PyTuple_GET_ITEM(row, 0), PyTuple_GET_ITEM(row, 2), PyTuple_GET_ITEM(row, 3),
                           PyTuple_GET_ITEM(row, 4), PyTuple_GET_ITEM(row, 5), PyTuple_GET_ITEM(row, 6), one_copy,
                           PyTuple_GET_ITEM(row, 8)};
    PyObject *node = make_node(cls, parent, values, depth, last);
    Py_XDECREF(parent);
    return node;
}

/* child(cls, parent, name, node_id, created_game) -> a new unvisited node linked under parent. */
PyObject *new_child(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !PyType_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "child(cls: type, parent, name, node_id, created_game)");
        return NULL;
    }
    PyObject *zero = PyLong_FromLong(0);
    if (zero == NULL) return NULL;
    PyObject *values[8] = {args[3], args[2], zero, zero, zero, Py_None, args[4], zero};
    long depth;
    PyObject *node = make_node((PyTypeObject *)args[0], args[1], values, &depth, NULL);
    Py_DECREF(zero);
    return node;
}

/* counts[d] += per_depth[d] for every depth (the list grows with zeros as needed); 0 or -1. */
static int add_counts(PyObject *counts, const Py_ssize_t *per_depth, Py_ssize_t depths) {
    for (Py_ssize_t d = 0; d < depths; d++) {
        if (PyList_GET_SIZE(counts) <= d) {
            PyObject *zero = PyLong_FromLong(0);
            int status = zero == NULL ? -1 : PyList_Append(counts, zero);
            Py_XDECREF(zero);
            if (status < 0) return -1;
        }
        PyObject *more = PyLong_FromSsize_t(per_depth[d]);
        PyObject *sum = more == NULL ? NULL : PyNumber_Add(PyList_GET_ITEM(counts, d), more);
        Py_XDECREF(more);
        if (sum == NULL || PyList_SetItem(counts, d, sum) < 0) return -1;
    }
    return 0;
}

/* build(cls, rows, nodes, counts, shared, cut[, check]) -> None: what treelab.store.bulk.build does in Python.
 * With check, every row's values are checked first and a second root (a row without parent after the
 * first) is refused; check is a callable that raises ValueError for a move label that is not one, or
 * None to leave the labels unchecked. */
PyObject *build_nodes(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if ((nargs != 6 && nargs != 7) || !PyType_Check(args[0]) || !PyList_Check(args[3]) || !PyDict_Check(args[4]) ||
        !PyAnySet_Check(args[5])) {
        PyErr_SetString(PyExc_TypeError,
                        "build(cls: type, rows, nodes: list | dict, counts: list, shared: dict, cut: set[, check])");
        return NULL;
    }
    PyTypeObject *cls = (PyTypeObject *)args[0];
    PyObject *last = NULL; /* the parent of the node built last: sealed when another parent comes */
    int checking = nargs == 7; /* check=None: the values only, not the move labels */
    PyObject *check = checking && args[6] != Py_None ? args[6] : NULL;
    PyObject *labels = check != NULL ? PySet_New(NULL) : NULL;
    PyObject *rows = check == NULL || labels != NULL ? PyObject_GetIter(args[1]) : NULL, *row;
    if (rows == NULL) {
        Py_XDECREF(labels);
        return NULL;
    }
    Py_ssize_t *per_depth = NULL, depths = 0, room = 0;
    int status = 0, rooted = PyList_GET_SIZE(args[3]) > 0;
    while (status == 0 && (row = PyIter_Next(rows)) != NULL) {
        long depth = 0;
        PyObject *node = NULL;
        if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) != 10) {
            PyErr_SetString(PyExc_TypeError, "build: every row must be a 10-tuple");
            status = -1;
        } else if (checking && check_row(row, labels, check) < 0) {
            status = -1;
        } else if (checking && PyTuple_GET_ITEM(row, 1) == Py_None && rooted++) {
            PyErr_Format(PyExc_ValueError, "node %R has no parent but is not the root", PyTuple_GET_ITEM(row, 0));
            status = -1;
        } else {
            node = node_of(cls, row, args[2], args[4], &depth, &last);
            status = node == NULL ? -1 : store(args[2], PyTuple_GET_ITEM(row, 0), node);
        }
        if (status == 0 && PyObject_IsTrue(PyTuple_GET_ITEM(row, 9)) == 1) status = PySet_Add(args[5], node);
        if (status == 0 && depth < 0) {
            PyErr_Format(PyExc_ValueError, "build: a negative depth (%ld)", depth);
            status = -1;
        }
        if (status == 0 && depth >= room) { /* room for the counts of one more level, and more */
            Py_ssize_t want = 2 * (depth + 1);
            Py_ssize_t *grown = PyMem_Realloc(per_depth, want * sizeof(Py_ssize_t));
            if (grown == NULL) {
                PyErr_NoMemory();
                status = -1;
            } else {
                for (Py_ssize_t d = room; d < want; d++) grown[d] = 0;
                per_depth = grown;
                room = want;
            }
        }
        if (status == 0) {
            per_depth[depth]++;
            if (depth + 1 > depths) depths = depth + 1;
        }
        Py_XDECREF(node);
        Py_DECREF(row);
    }
    Py_DECREF(rows);
    Py_XDECREF(labels);
    if (status == 0 && !PyErr_Occurred()) status = add_counts(args[3], per_depth, depths);
    if (status == 0 && !PyErr_Occurred() && last != NULL) status = seal_children(last);
    Py_XDECREF(last);
    PyMem_Free(per_depth);
    if (status < 0 || PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}
