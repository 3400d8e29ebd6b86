/* treelab._speedups, part 2: TreeNode slots and the UCT tree walk of treelab.mcts.uct.search.
 *
 * ``descend``, ``select`` and ``backup`` do exactly what the Python loop of
 * treelab/mcts/uct.py does with the nodes' ``nb_visit``/``nb_win``/``nb_draw``/``nb_select``/``proven`` slots.
 */
#include "_speedups.h"

#include <math.h>
#include <structmember.h>

/* -- the UCT descent over treelab.tree.TreeNode objects --------------------------------------
 *
 * Nodes keep their statistics in __slots__. For the exact class of the nodes
 * met (normally TreeNode) the slot offsets are read once from the class's
 * member descriptors, then each value is a pointer read; an object of another
 * class, or a class whose attribute is not a plain slot (a property, say),
 * goes through the ordinary getattr/setattr, so the results are those of the
 * Python code in every case. Scores are computed with the very operations, in
 * the very order, of treelab/search.py (IEEE doubles, libm log and sqrt), so
 * both pick the same child.
 */

static const char *FIELD_NAMES[N_FIELDS] = {
    "_LightNodeMixin__children", "nb_visit", "nb_win", "nb_draw", "proven",
    "_LightNodeMixin__parent", "node_id", "name", "depth", "created_game", "nb_select", "_value_sum", "_prior",
};
static PyObject *one;                       /* the int 1 */
static PyObject *zero;                      /* the int 0 */
static PyObject *zero_counts;               /* (0, 0, 0, 0): the baseline of every unvisited node */
static PyObject *field_names[N_FIELDS];     /* interned */
static PyTypeObject *layout_type = NULL;    /* the class the offsets belong to (a strong reference) */
static Py_ssize_t layout_offset[N_FIELDS];  /* slot offsets for layout_type, -1: use getattr */
enum { K_OBJECT, K_INT64, K_DOUBLE };
static int layout_kind[N_FIELDS];           /* what the slot at layout_offset holds: an object, or a native number */

static void learn_layout(PyTypeObject *type) {
    Py_INCREF(type);
    Py_XSETREF(layout_type, type);
    for (int f = 0; f < N_FIELDS; f++) {
        layout_offset[f] = -1;
        layout_kind[f] = K_OBJECT;
        PyObject *descr = PyObject_GetAttr((PyObject *)type, field_names[f]);
        if (descr == NULL) {
            PyErr_Clear();
            continue;
        }
        if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
            PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
            if (!(member->flags & READONLY)) {
                int kind = member->type == T_OBJECT_EX ? K_OBJECT : member->type == T_LONGLONG ? K_INT64
                           : member->type == T_DOUBLE ? K_DOUBLE : -1;
                if (kind >= 0) {
                    layout_offset[f] = member->offset;
                    layout_kind[f] = kind;
                }
            }
        }
        Py_DECREF(descr);
    }
}

/* The offset of obj's plain object slot <field>, -1 when it is none (a property, or a native number). */
static inline Py_ssize_t offset_of(PyObject *obj, int field) {
    if (Py_TYPE(obj) != layout_type) learn_layout(Py_TYPE(obj));
    return layout_kind[field] == K_OBJECT ? layout_offset[field] : -1;
}

/* The offset of obj's slot <field> and what it holds in *kind; -1: use getattr. */
static inline Py_ssize_t native_offset(PyObject *obj, int field, int *kind) {
    if (Py_TYPE(obj) != layout_type) learn_layout(Py_TYPE(obj));
    *kind = layout_kind[field];
    return layout_offset[field];
}

Py_ssize_t slot_offset(PyObject *obj, int field) {
    return offset_of(obj, field);
}

/* A new reference to obj.<field>, or NULL with an exception (AttributeError when unset). */
PyObject *get_field(PyObject *obj, int field) {
    int kind;
    Py_ssize_t off = native_offset(obj, field, &kind);
    if (off >= 0) {
        char *at = (char *)obj + off;
        if (kind == K_INT64) return PyLong_FromLongLong(*(long long *)at);
        if (kind == K_DOUBLE) return PyFloat_FromDouble(*(double *)at);
        PyObject *value = *(PyObject **)at;
        if (value != NULL) {
            Py_INCREF(value);
            return value;
        }
    }
    return PyObject_GetAttr(obj, field_names[field]);
}

/* obj.<field> as a double (as Python converts it in arithmetic); -1.0 with an exception on error. */
double get_double(PyObject *obj, int field) {
    int kind;
    Py_ssize_t off = native_offset(obj, field, &kind);
    if (off >= 0 && kind == K_DOUBLE) return *(double *)((char *)obj + off);
    if (off >= 0 && kind == K_INT64) return (double)*(long long *)((char *)obj + off);
    PyObject *value = off >= 0 ? *(PyObject **)((char *)obj + off) : NULL;
    if (value != NULL && PyLong_CheckExact(value)) return PyLong_AsDouble(value);
    value = value != NULL ? (Py_INCREF(value), value) : PyObject_GetAttr(obj, field_names[field]);
    if (value == NULL) return -1.0;
    double x = PyLong_CheckExact(value) ? PyLong_AsDouble(value) : PyFloat_AsDouble(value);
    Py_DECREF(value);
    return x;
}

/* obj.<field> += 1; 0, or -1 with an exception. */
int increment(PyObject *obj, int field) {
    int kind;
    Py_ssize_t off = native_offset(obj, field, &kind);
    if (off >= 0 && kind == K_INT64) {
        *(long long *)((char *)obj + off) += 1;
        return 0;
    }
    PyObject *value = get_field(obj, field);
    if (value == NULL) return -1;
    PyObject *more = PyNumber_Add(value, one);
    Py_DECREF(value);
    if (more == NULL) return -1;
    int status = set_field(obj, field, more);
    Py_DECREF(more);
    return status;
}

/* obj.<field> = value (a plain slot store when it is one); 0, or -1 with an exception. */
int set_field(PyObject *obj, int field, PyObject *value) {
    int kind;
    Py_ssize_t off = native_offset(obj, field, &kind);
    if (off >= 0) {
        char *at = (char *)obj + off;
        if (kind == K_INT64) {
            long long x = PyLong_AsLongLong(value);
            if (x == -1 && PyErr_Occurred()) return -1;
            *(long long *)at = x;
            return 0;
        }
        if (kind == K_DOUBLE) {
            double x = PyFloat_AsDouble(value);
            if (x == -1.0 && PyErr_Occurred()) return -1;
            *(double *)at = x;
            return 0;
        }
        PyObject **slot = (PyObject **)at;
        PyObject *old = *slot;
        Py_INCREF(value);
        *slot = value;
        Py_XDECREF(old);
        return 0;
    }
    return PyObject_SetAttr(obj, field_names[field], value);
}

/* obj.<field> = x for a float field (a native store when the slot is one); 0, or -1 with an exception. */
int set_double(PyObject *obj, int field, double x) {
    int kind;
    Py_ssize_t off = native_offset(obj, field, &kind);
    if (off >= 0 && kind == K_DOUBLE) {
        *(double *)((char *)obj + off) = x;
        return 0;
    }
    PyObject *value = PyFloat_FromDouble(x);
    int status = value == NULL ? -1 : set_field(obj, field, value);
    Py_XDECREF(value);
    return status;
}

/* A node's prior (treelab.nodes.prior_of: its _prior slot holds -P, sign bit set, or +0.0/unset for none):
 * 1 and *prior, 0 for none, -1 with an exception. */
int get_prior(PyObject *node, double *prior) {
    int kind;
    Py_ssize_t off = native_offset(node, F_PRIOR, &kind);
    double raw;
    if (off >= 0 && kind == K_DOUBLE) {
        raw = *(double *)((char *)node + off);
    } else {
        PyObject *value = PyObject_GetAttr(node, field_names[F_PRIOR]);
        if (value == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
            PyErr_Clear();
            return 0;
        }
        raw = PyFloat_AsDouble(value);
        Py_DECREF(value);
        if (raw == -1.0 && PyErr_Occurred()) return -1;
    }
    if (!signbit(raw)) return 0;
    *prior = -raw;
    return 1;
}

/* Give node the prior p >= 0 (treelab.nodes.set_prior); 0, or -1 with an exception. */
int put_prior(PyObject *node, double p) {
    return set_double(node, F_PRIOR, -p);
}

/* prior_get(node, default=None) -> node's prior, or default when it has none (treelab.tree.Priors.get). */
PyObject *prior_get(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "get(node, default=None)");
        return NULL;
    }
    double prior;
    int has = get_prior(args[0], &prior);
    if (has < 0) return NULL;
    if (has) return PyFloat_FromDouble(prior);
    return Py_NewRef(nargs == 2 ? args[1] : Py_None);
}

/* native_slots(cls, int64_names, double_names) -> None: the named slots of cls (made by its __slots__, no
 * instance made yet) hold native int64 or double values from now on instead of objects: 8 bytes in the node
 * instead of a pointer to a 32-byte int or float (treelab.nodes, where TreeNode calls it once). Their member
 * descriptors read and write Python ints and floats as before; the garbage collector and deallocation, which
 * visit only object slots (T_OBJECT_EX), skip them. */
PyObject *native_slots(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyType_Check(args[0]) || !PyTuple_Check(args[1]) || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "native_slots(cls: type, int64_names: tuple, double_names: tuple)");
        return NULL;
    }
    PyTypeObject *cls = (PyTypeObject *)args[0];
    for (int which = 1; which <= 2; which++) {
        PyObject *names = args[which];
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); i++) {
            PyObject *name = PyTuple_GET_ITEM(names, i);
            PyObject *descr = PyDict_GetItemWithError(cls->tp_dict, name); /* borrowed: its own slot only */
            if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type) ||
                ((PyMemberDescrObject *)descr)->d_common.d_type != cls) {
                if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "native_slots: %R is no slot of %R", name, cls);
                return NULL;
            }
            PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
            int want = which == 1 ? T_LONGLONG : T_DOUBLE;
            if (member->type == want) continue;
            if (member->type != T_OBJECT_EX || (member->flags & READONLY)) {
                PyErr_Format(PyExc_TypeError, "native_slots: %R is not a plain object slot", name);
                return NULL;
            }
            member->type = want;
        }
    }
    Py_CLEAR(layout_type); /* learn the offsets again */
    Py_RETURN_NONE;
}

int nodes_init(void) {
    for (int f = 0; f < N_FIELDS; f++) {
        field_names[f] = PyUnicode_InternFromString(FIELD_NAMES[f]);
        if (field_names[f] == NULL) return -1;
    }
    one = PyLong_FromLong(1);
    zero = PyLong_FromLong(0);
    zero_counts = zero != NULL ? PyTuple_Pack(4, zero, zero, zero, zero) : NULL;
    return one == NULL || zero_counts == NULL ? -1 : 0;
}

static const char KIDS_ERROR[] = "nodes must keep their children in anytree's plain slot (TreeNode)";

PyObject **child_items(PyObject *node, Py_ssize_t *n) {
    Py_ssize_t off = offset_of(node, F_KIDS);
    if (off < 0) {
        *n = -1;
        PyErr_SetString(PyExc_TypeError, KIDS_ERROR);
        return NULL;
    }
    PyObject **slot = (PyObject **)((char *)node + off);
    PyObject *kids = *slot;
    if (kids == NULL || kids == Py_None) {
        *n = 0;
        return NULL;
    }
    if (PyList_CheckExact(kids)) {
        *n = PyList_GET_SIZE(kids);
        return ((PyListObject *)kids)->ob_item;
    }
    if (PyTuple_CheckExact(kids)) {
        *n = PyTuple_GET_SIZE(kids);
        return ((PyTupleObject *)kids)->ob_item;
    }
    *n = 1; /* the one child, kept in the slot itself */
    return slot;
}

int append_child(PyObject *parent, PyObject *child) {
    Py_ssize_t off = offset_of(parent, F_KIDS);
    if (off < 0) {
        PyErr_SetString(PyExc_TypeError, KIDS_ERROR);
        return -1;
    }
    PyObject **slot = (PyObject **)((char *)parent + off);
    PyObject *kids = *slot, *grown = NULL;
    if (kids == NULL || kids == Py_None) {
        grown = (Py_INCREF(child), child);
    } else if (PyList_CheckExact(kids)) {
        if (PyList_Append(kids, child) < 0) return -1;
    } else { /* one child, or a load's exact-size tuple: a list from now on */
        Py_ssize_t n = PyTuple_CheckExact(kids) ? PyTuple_GET_SIZE(kids) : 1;
        PyObject **items = PyTuple_CheckExact(kids) ? ((PyTupleObject *)kids)->ob_item : slot;
        if ((grown = PyList_New(n + 1)) == NULL) return -1;
        for (Py_ssize_t k = 0; k < n; k++) PyList_SET_ITEM(grown, k, (Py_INCREF(items[k]), items[k]));
        PyList_SET_ITEM(grown, n, (Py_INCREF(child), child));
    }
    if (grown != NULL) Py_XSETREF(*slot, grown);
    return set_field(child, F_PARENT, parent);
}

int seal_children(PyObject *node) {
    Py_ssize_t off = offset_of(node, F_KIDS);
    PyObject **slot = off >= 0 ? (PyObject **)((char *)node + off) : NULL;
    if (slot == NULL || *slot == NULL || !PyList_CheckExact(*slot)) return 0;
    PyObject *sealed = PyList_AsTuple(*slot);
    if (sealed == NULL) return -1;
    Py_XSETREF(*slot, sealed);
    return 0;
}

/* The child UCT descends to (a new reference), or NULL with an exception. As in search.py:
 * unvisited first, proven children skipped by the solver, then the best UCB1 score, ties to the
 * first; if the solver skipped them all, the first most visited. */
PyObject *best_child(PyObject *node, double c, int solver) {
    double big_n = get_double(node, F_VISIT);
    if (big_n == -1.0 && PyErr_Occurred()) return NULL;
    double explore = big_n > 1 ? c * sqrt(log(big_n)) : 0.0;
    PyObject *best = NULL;
    double best_score = -Py_HUGE_VAL;
    Py_ssize_t n_kids;
    PyObject **items; /* re-read at every step: converting an exotic count could run Python code */
    for (Py_ssize_t i = 0; (items = child_items(node, &n_kids)), i < n_kids; i++) {
        PyObject *kid = items[i];
        Py_INCREF(kid);
        double n = get_double(kid, F_VISIT), win = 0, draw = 0;
        int skip = 0;
        if (n == -1.0 && PyErr_Occurred()) goto fail;
        if (solver) {
            PyObject *proven = get_field(kid, F_PROVEN);
            if (proven == NULL) goto fail;
            skip = proven != Py_None; /* never waste simulations below a proven move */
            Py_DECREF(proven);
        }
        if (!skip && n == 0) {
            Py_XDECREF(best);
            return kid;
        }
        if (!skip) {
            win = get_double(kid, F_WIN);
            if (win == -1.0 && PyErr_Occurred()) goto fail;
            draw = get_double(kid, F_DRAW);
            if (draw == -1.0 && PyErr_Occurred()) goto fail;
            double score = (win + 0.5 * draw) / n + explore / sqrt(n);
            if (score > best_score) {
                best_score = score;
                Py_XSETREF(best, kid);
                continue;
            }
        }
        Py_DECREF(kid);
        continue;
    fail:
        Py_DECREF(kid);
        Py_XDECREF(best);
        return NULL;
    }
    if (n_kids < 0) {
        Py_XDECREF(best);
        return NULL;
    }
    if (best == NULL) { /* every move proven but the node not: the first most visited */
        double most = 0;
        for (Py_ssize_t i = 0; (items = child_items(node, &n_kids)), i < n_kids; i++) {
            PyObject *kid = items[i];
            Py_INCREF(kid);
            double n = get_double(kid, F_VISIT);
            if (n == -1.0 && PyErr_Occurred()) {
                Py_DECREF(kid);
                Py_XDECREF(best);
                return NULL;
            }
            if (best == NULL || n > most) {
                most = n;
                Py_XSETREF(best, kid);
            } else {
                Py_DECREF(kid);
            }
        }
        if (n_kids < 0) {
            Py_XDECREF(best);
            return NULL;
        }
    }
    if (best == NULL) PyErr_SetString(PyExc_ValueError, "select needs a node with children");
    return best;
}

static int parse_walk(PyObject *const *args, int at, double *c, int *solver) {
    *c = PyFloat_AsDouble(args[at]);
    if (*c == -1.0 && PyErr_Occurred()) return -1;
    *solver = PyObject_IsTrue(args[at + 1]);
    return *solver < 0 ? -1 : 0;
}

/* select(node, c, solver) -> the child UCT descends to (node has children). */
PyObject *select_child(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    double c;
    int solver;
    Py_ssize_t n_kids;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "select(node, c, solver) takes 3 arguments, got %zd", nargs);
        return NULL;
    }
    if (parse_walk(args, 1, &c, &solver) < 0) return NULL;
    child_items(args[0], &n_kids);
    if (n_kids < 0) return NULL;
    if (n_kids == 0) {
        PyErr_SetString(PyExc_ValueError, "select needs a node with children");
        return NULL;
    }
    return best_child(args[0], c, solver);
}

/* descend(node, path, c, solver, max_moves) -> the first node met with fewer than max_moves
 * children, walking down by select() and appending every node entered to path. */
PyObject *descend(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    double c;
    int solver;
    if (nargs != 5 || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "descend(node, path: list, c, solver, max_moves)");
        return NULL;
    }
    if (parse_walk(args, 2, &c, &solver) < 0) return NULL;
    Py_ssize_t max_moves = PyLong_AsSsize_t(args[4]);
    if (max_moves == -1 && PyErr_Occurred()) return NULL;
    PyObject *node = args[0];
    Py_INCREF(node);
    for (;;) {
        Py_ssize_t n_kids;
        child_items(node, &n_kids);
        if (n_kids < 0) {
            Py_DECREF(node);
            return NULL;
        }
        if (n_kids < max_moves || max_moves < 1) return node;
        PyObject *best = best_child(node, c, solver);
        Py_DECREF(node);
        if (best == NULL) return NULL;
        if (PyList_Append(args[1], best) < 0) {
            Py_DECREF(best);
            return NULL;
        }
        node = best;
    }
}

/* The baseline of node: (nb_visit, nb_win, nb_draw, nb_select) as they are now, into baselines unless
 * the node is there already (its counts as of the last save). A new reference to the shared zero
 * tuple for an unvisited node, so the many new nodes of a search cost no tuple each. 0, or -1. */
int note_baseline(PyObject *baselines, PyObject *node) {
    PyObject *have = PyDict_GetItemWithError(baselines, node);
    if (have != NULL) return 0;
    if (PyErr_Occurred()) return -1;
    PyObject *v = get_field(node, F_VISIT), *w = v ? get_field(node, F_WIN) : NULL, *d = w ? get_field(node, F_DRAW) : NULL;
    PyObject *s = d ? get_field(node, F_SELECT) : NULL;
    PyObject *counts = NULL;
    if (s != NULL) {
        if (v == zero && w == zero && d == zero && s == zero) { /* the int 0 is one shared object */
            Py_INCREF(zero_counts);
            counts = zero_counts;
        } else {
            counts = PyTuple_Pack(4, v, w, d, s);
        }
    }
    Py_XDECREF(v);
    Py_XDECREF(w);
    Py_XDECREF(d);
    Py_XDECREF(s);
    if (counts == NULL) return -1;
    int status = PyDict_SetItem(baselines, node, counts);
    Py_DECREF(counts);
    return status;
}

/* backup(path, first_win[, baselines]) -> None: nb_visit += 1 on every node of path and nb_select += 1
 * on path[1:] (the nodes this search selected); then nb_draw += 1 on every node if first_win is None
 * (a draw), else nb_win += 1 on path[first_win::2]. With baselines (a dict, Tree.baselines), each
 * node's counts before its first change since the last save are recorded there first, as
 * treelab.tree.backup does. */
PyObject *backup(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 2 || nargs > 3 || !PyList_Check(args[0]) || (nargs == 3 && args[2] != Py_None && !PyDict_Check(args[2]))) {
        PyErr_SetString(PyExc_TypeError, "backup(path: list, first_win: int | None, baselines: dict | None = None)");
        return NULL;
    }
    PyObject *path = args[0];
    PyObject *baselines = nargs == 3 && args[2] != Py_None ? args[2] : NULL;
    Py_ssize_t first = -1;
    if (args[1] != Py_None) {
        first = PyLong_AsSsize_t(args[1]);
        if (first == -1 && PyErr_Occurred()) return NULL;
        if (first < 0) {
            PyErr_SetString(PyExc_ValueError, "first_win must be >= 0 or None");
            return NULL;
        }
    }
    Py_INCREF(path);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(path); i++) {
        PyObject *node = PyList_GET_ITEM(path, i);
        Py_INCREF(node);
        int status = baselines != NULL ? note_baseline(baselines, node) : 0;
        if (status == 0) status = increment(node, F_VISIT);
        if (status == 0 && i > 0) status = increment(node, F_SELECT);
        if (status == 0 && first < 0) status = increment(node, F_DRAW);
        if (status == 0 && first >= 0 && i >= first && (i - first) % 2 == 0) status = increment(node, F_WIN);
        Py_DECREF(node);
        if (status < 0) {
            Py_DECREF(path);
            return NULL;
        }
    }
    Py_DECREF(path);
    Py_RETURN_NONE;
}
