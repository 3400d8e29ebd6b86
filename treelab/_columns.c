/* treelab._speedups, part 5: whole-number slots of many nodes as int64 columns (a worker's delta).
 *
 * After every game of a training run the tree hands on what the game added
 * (treelab/store/deltas.py, ``take``): for each new node its parent's id, depth
 * and counts, for each changed node its counts and those it had before the game.
 * Read attribute by attribute into numpy that costs about 0.5 microseconds a
 * value, ~5 ms a game on the critical path of a run that saves from its writer
 * process; these read the slots with pointer loads.
 *
 *   columns(nodes, fields[, none]) -> bytes: for each node, in order, the int64 of each field named in
 *                                  ``fields`` (a tuple of TreeNode slot names, or "parent.node_id"); a
 *                                  None value is ``none`` when given
 *   baselines(base, nodes)      -> bytes: for each node, the ints of the tuple base[node], as int64
 *   delta_rows(ids, parent_ids, depths, counts, moves, proven, created, keep, width[, sums, priors])
 *                               -> [(id, parent_id, move, depth, nb_visit, nb_win, nb_draw, proven, created_game,
 *                                    nb_select, id, ...), ...]: the rows of the new nodes kept (``keep``: a bool
 *                                  array, None for all), ``width`` per flat tuple for one multi-row INSERT
 *                                  (the writer's, ~0.5 microseconds a row less than zipping the columns in Python);
 *                                  with ``sums`` and ``priors`` (float64 arrays, a NaN prior for none) each row
 *                                  ends with its value_sum and prior too
 *   connect4_keys(nodes, root, move_of) -> [str]: each node's Connect Four position key (the smaller of the
 *                                  position's and its mirror image's Pons key, as ConnectFour.position_key), its
 *                                  moves from ``root`` replayed on bitboards, each position walked once
 *                                  (treelab.positions.node_keys: ~6 microseconds a node in Python)
 *
 * A value that is not an int (None, a float) is a TypeError naming the field.
 */
#include "_speedups.h"

#include <math.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)0)
#endif

#define PARENT_ID (-1)
#define MAX_FIELDS 16

static const struct {
    const char *name;
    int field;
} NAMES[] = {
    {"nb_visit", F_VISIT}, {"nb_win", F_WIN},     {"nb_draw", F_DRAW},   {"node_id", F_ID},
    {"depth", F_DEPTH},    {"nb_select", F_SELECT}, {"created_game", F_CREATED}, {"parent.node_id", PARENT_ID},
    {"proven", F_PROVEN},
};

static int field_code(PyObject *name) {
    const char *text = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (text != NULL)
        for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
            if (strcmp(text, NAMES[i].name) == 0) return NAMES[i].field;
    if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "columns: no int64 column %R", name);
    return -2;
}

/* obj.<field> as a C integer (``none`` for None, when none_given); -1 with an exception when it is not an int. */
static long long int_field(PyObject *obj, int field, int none_given, long long none) {
    PyObject *value = get_field(obj, field);
    if (value == NULL) return -1;
    long long x = -1;
    if (PyLong_Check(value))
        x = PyLong_AsLongLong(value);
    else if (value == Py_None && none_given)
        x = none;
    else
        PyErr_Format(PyExc_TypeError, "columns: a node's %s is %R, not an int", field == F_ID ? "node_id" : "count",
                     value);
    Py_DECREF(value);
    return x;
}

PyObject *int_columns(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 2 || nargs > 3 || !PyList_Check(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "columns(nodes: list, fields: tuple of names[, none: int])");
        return NULL;
    }
    int none_given = nargs == 3;
    long long none = none_given ? PyLong_AsLongLong(args[2]) : 0;
    if (none == -1 && PyErr_Occurred()) return NULL;
    PyObject *nodes = args[0];
    Py_ssize_t k = PyTuple_GET_SIZE(args[1]), n = PyList_GET_SIZE(nodes);
    int codes[MAX_FIELDS];
    if (k > MAX_FIELDS) {
        PyErr_SetString(PyExc_ValueError, "columns: at most 16 fields");
        return NULL;
    }
    for (Py_ssize_t j = 0; j < k; j++)
        if ((codes[j] = field_code(PyTuple_GET_ITEM(args[1], j))) == -2) return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(int64_t) * n * k);
    if (out == NULL) return NULL;
    int64_t *cell = (int64_t *)PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *node = PyList_GET_ITEM(nodes, i);
        if (i + 8 < n) { /* the nodes lie all over the heap: ask for the one 8 ahead (and its slots) now */
            char *ahead = (char *)PyList_GET_ITEM(nodes, i + 8);
            PREFETCH(ahead);
            PREFETCH(ahead + 64);
        }
        for (Py_ssize_t j = 0; j < k; j++) {
            long long x;
            if (codes[j] == PARENT_ID) {
                PyObject *parent = get_field(node, F_PARENT);
                if (parent == NULL) {
                    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) goto fail;
                    PyErr_Clear(); /* a root's parent slot may be unset */
                    parent = Py_NewRef(Py_None);
                }
                x = parent == Py_None ? -1 : int_field(parent, F_ID, 0, 0);
                Py_DECREF(parent);
            } else {
                x = int_field(node, codes[j], none_given, none);
            }
            if (x == -1 && PyErr_Occurred()) goto fail;
            *cell++ = (int64_t)x;
        }
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

PyObject *baseline_columns(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyDict_Check(args[0]) || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "baselines(base: dict, nodes: list)");
        return NULL;
    }
    PyObject *base = args[0], *nodes = args[1];
    Py_ssize_t n = PyList_GET_SIZE(nodes), k = -1;
    PyObject *out = NULL;
    int64_t *cell = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *counts = PyDict_GetItemWithError(base, PyList_GET_ITEM(nodes, i)); /* borrowed */
        if (counts == NULL) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "baselines: a node has no baseline");
            goto fail;
        }
        if (!PyTuple_Check(counts) || (k >= 0 && PyTuple_GET_SIZE(counts) != k)) {
            PyErr_Format(PyExc_TypeError, "baselines: %R is not a tuple of the same length as the others", counts);
            goto fail;
        }
        if (out == NULL) {
            k = PyTuple_GET_SIZE(counts);
            if ((out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(int64_t) * n * k)) == NULL) return NULL;
            cell = (int64_t *)PyBytes_AS_STRING(out);
        }
        for (Py_ssize_t j = 0; j < k; j++) {
            long long x = PyLong_AsLongLong(PyTuple_GET_ITEM(counts, j));
            if (x == -1 && PyErr_Occurred()) goto fail;
            *cell++ = (int64_t)x;
        }
    }
    return out != NULL ? out : PyBytes_FromStringAndSize(NULL, 0);
fail:
    Py_XDECREF(out);
    return NULL;
}

/* -- the other way: a delta's arrays as nodes rows (the writer's inserts) ------------------------------------ */

#define ROW_VALUES 10 /* id, parent_id, move, depth, nb_visit, nb_win, nb_draw, proven, created_game, nb_select */

/* A new reference to items[i] of a list, or None when the list is None. */
static PyObject *item_or_none(PyObject *items, Py_ssize_t i) {
    PyObject *value = items == Py_None ? Py_None : PyList_GET_ITEM(items, i);
    Py_INCREF(value);
    return value;
}

PyObject *delta_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if ((nargs != 9 && nargs != 11) || !PyList_Check(args[4]) || !(args[5] == Py_None || PyList_Check(args[5])) ||
        !(args[6] == Py_None || PyList_Check(args[6]))) {
        PyErr_SetString(PyExc_TypeError, "delta_rows(ids, parent_ids, depths, counts, moves: list, proven: list | None, "
                                         "created: list | None, keep | None, width[, sums, priors])");
        return NULL;
    }
    PyObject *moves = args[4], *proven = args[5], *created = args[6];
    Py_ssize_t n = PyList_GET_SIZE(moves), width = PyLong_AsSsize_t(args[8]);
    if (width == -1 && PyErr_Occurred()) return NULL;
    Py_buffer view[7] = {{0}};
    Py_buffer *held_views[7];
    int held = 0, valued = nargs == 11, row_values = valued ? ROW_VALUES + 2 : ROW_VALUES;
    PyObject *out = NULL;
    const char *keep = NULL;
    const double *sums = NULL, *priors = NULL;
    for (int a = 0; a < 4; a++) { /* ids, parent ids, depths, counts */
        if (PyObject_GetBuffer(args[a], &view[a], PyBUF_C_CONTIGUOUS) < 0) goto done;
        held_views[held++] = &view[a];
    }
    if (args[7] != Py_None) {
        if (PyObject_GetBuffer(args[7], &view[4], PyBUF_C_CONTIGUOUS) < 0) goto done;
        held_views[held++] = &view[4];
        keep = view[4].buf;
    }
    for (int a = 0; valued && a < 2; a++) { /* value sums, priors */
        if (PyObject_GetBuffer(args[9 + a], &view[5 + a], PyBUF_C_CONTIGUOUS) < 0) goto done;
        held_views[held++] = &view[5 + a];
    }
    Py_ssize_t sized = (Py_ssize_t)sizeof(int64_t) * n;
    if (width < 1 || view[0].len != sized || view[1].len != sized || view[2].len != sized || view[3].len != 4 * sized ||
        (keep != NULL && view[4].len != n) || (proven != Py_None && PyList_GET_SIZE(proven) != n) ||
        (created != Py_None && PyList_GET_SIZE(created) != n) ||
        (valued && (view[5].len != (Py_ssize_t)sizeof(double) * n || view[6].len != (Py_ssize_t)sizeof(double) * n))) {
        PyErr_SetString(PyExc_ValueError, "delta_rows: columns of different lengths (int64 arrays, keep bool, float64 "
                                          "sums and priors), or width < 1");
        goto done;
    }
    const int64_t *ids = view[0].buf, *pids = view[1].buf, *depths = view[2].buf, *counts = view[3].buf;
    if (valued) {
        sums = view[5].buf;
        priors = view[6].buf;
    }
    Py_ssize_t rows = 0;
    for (Py_ssize_t i = 0; i < n; i++) rows += keep == NULL || keep[i];
    if ((out = PyList_New((rows + width - 1) / width)) == NULL) goto done;
    Py_ssize_t g = 0, at = 0;
    PyObject *flat = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (keep != NULL && !keep[i]) continue;
        if (flat == NULL) {
            Py_ssize_t left = rows - g * width;
            if ((flat = PyTuple_New(row_values * (left < width ? left : width))) == NULL) goto fail;
            PyList_SET_ITEM(out, g, flat);
            at = 0;
        }
        const int64_t *c = counts + 4 * i;
        PyObject *values[ROW_VALUES + 2] = {
            PyLong_FromLongLong(ids[i]), PyLong_FromLongLong(pids[i]), item_or_none(moves, i),
            PyLong_FromLongLong(depths[i]), PyLong_FromLongLong(c[0]), PyLong_FromLongLong(c[1]),
            PyLong_FromLongLong(c[2]), item_or_none(proven, i), item_or_none(created, i), PyLong_FromLongLong(c[3]),
            valued ? PyFloat_FromDouble(sums[i]) : NULL,
            valued ? (isnan(priors[i]) ? Py_NewRef(Py_None) : PyFloat_FromDouble(priors[i])) : NULL,
        };
        for (int v = 0; v < row_values; v++) {
            if (values[v] == NULL) {
                for (int w = 0; w < row_values; w++) Py_XDECREF(values[w]);
                goto fail;
            }
        }
        for (int v = 0; v < row_values; v++) PyTuple_SET_ITEM(flat, at++, values[v]);
        if (at == PyTuple_GET_SIZE(flat)) {
            flat = NULL;
            g++;
        }
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    for (int h = 0; h < held; h++) PyBuffer_Release(held_views[h]);
    return out;
}

/* -- Connect Four position keys of many nodes (a delta's rows of the positions table) ----------------------- */

#define KEY_CHAIN 64 /* nodes walked up from one node before a known position: more than a game has moves (42) */

/* A bitboard seen in a mirror: column c (7 bits) goes to column 6 - c (as connect4.py's _mirrored). */
static uint64_t c4_mirrored(uint64_t bits) {
    uint64_t out = 0;
    for (int c = 0; c < WIDTH; c++) out |= ((bits >> (H1 * c)) & 0x7F) << (H1 * (WIDTH - 1 - c));
    return out;
}

typedef struct {
    uint64_t *cur, *mask;
    Py_ssize_t size, cap;
} Boards;

static Py_ssize_t boards_add(Boards *b, uint64_t cur, uint64_t mask) {
    if (b->size == b->cap) {
        Py_ssize_t cap = b->cap ? 2 * b->cap : 256;
        uint64_t *c = PyMem_Realloc(b->cur, (size_t)cap * sizeof(uint64_t));
        if (c == NULL) return -1;
        b->cur = c;
        uint64_t *m = PyMem_Realloc(b->mask, (size_t)cap * sizeof(uint64_t));
        if (m == NULL) return -1;
        b->mask = m;
        b->cap = cap;
    }
    b->cur[b->size] = cur;
    b->mask[b->size] = mask;
    return b->size++;
}

/* The position (two bitboards) of every node walked: seen maps a node to its index in boards. */
static Py_ssize_t position_of(PyObject *node, PyObject *seen, Boards *boards, PyObject *move_of) {
    PyObject *chain[KEY_CHAIN];
    int len = 0;
    PyObject *at = node, *index;
    while ((index = PyDict_GetItemWithError(seen, at)) == NULL) {
        if (PyErr_Occurred()) return -1;
        PyObject *parent = get_field(at, F_PARENT);
        if (parent == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) { /* a root never given a parent */
            PyErr_Clear();
            parent = Py_NewRef(Py_None);
        }
        if (parent == NULL) return -1;
        Py_DECREF(parent); /* its child holds it */
        if (parent == Py_None || len == KEY_CHAIN) {
            PyErr_SetString(PyExc_ValueError, "connect4_keys: a node that is not below the root given");
            return -1;
        }
        chain[len++] = at;
        at = parent;
    }
    Py_ssize_t i = PyLong_AsSsize_t(index);
    uint64_t cur = boards->cur[i], mask = boards->mask[i];
    while (len--) {
        PyObject *name = get_field(chain[len], F_NAME);
        if (name == NULL) return -1;
        PyObject *found = PyDict_GetItemWithError(move_of, name);
        long move = found != NULL ? PyLong_AsLong(found) : 0;
        if (found == NULL && !PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "connect4_keys: no move %R", name);
        Py_DECREF(name);
        if (PyErr_Occurred()) return -1;
        if (move < 1 || move > WIDTH || (mask & (1ULL << (H1 * (move - 1) + HEIGHT - 1)))) {
            PyErr_Format(PyExc_ValueError, "connect4_keys: move %ld is not legal here", move);
            return -1;
        }
        uint64_t grown = mask | (mask + (1ULL << (H1 * (move - 1))));
        cur ^= mask; /* the player to move next: the other's discs */
        mask = grown;
        if ((i = boards_add(boards, cur, mask)) < 0) {
            PyErr_NoMemory();
            return -1;
        }
        PyObject *where = PyLong_FromSsize_t(i);
        int status = where == NULL ? -1 : PyDict_SetItem(seen, chain[len], where);
        Py_XDECREF(where);
        if (status < 0) return -1;
    }
    return i;
}

PyObject *connect4_keys(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyList_Check(args[0]) || !PyDict_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "connect4_keys(nodes: list, root, move_of: dict)");
        return NULL;
    }
    PyObject *nodes = args[0], *move_of = args[2], *out = NULL, *seen = PyDict_New(), *zero = PyLong_FromLong(0);
    Boards boards = {0};
    if (seen == NULL || zero == NULL || boards_add(&boards, 0, 0) < 0 || PyDict_SetItem(seen, args[1], zero) < 0)
        goto done;
    Py_ssize_t n = PyList_GET_SIZE(nodes);
    if ((out = PyList_New(n)) == NULL) goto done;
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t i = position_of(PyList_GET_ITEM(nodes, k), seen, &boards, move_of);
        if (i < 0) {
            Py_CLEAR(out);
            goto done;
        }
        uint64_t key = boards.cur[i] + boards.mask[i], image = c4_mirrored(key);
        PyObject *text = PyUnicode_FromFormat("%llu", (unsigned long long)(image < key ? image : key));
        if (text == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, k, text);
    }
done:
    if (out == NULL && !PyErr_Occurred()) PyErr_NoMemory();
    Py_XDECREF(seen);
    Py_XDECREF(zero);
    PyMem_Free(boards.cur);
    PyMem_Free(boards.mask);
    return out;
}
