/* Shared declarations of treelab._speedups, built from three sources:
 *
 *   _speedups.c  the module, and the uniformly random playouts of Connect Four and tic-tac-toe;
 *   _nodes.c     reading and writing TreeNode slots, and the UCT tree walk (select, descend, backup);
 *   _rows.c      the first save's breadth-first numbering and its ``nodes`` rows; nodes from rows (loads).
 */
#ifndef TREELAB_SPEEDUPS_H
#define TREELAB_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The TreeNode attributes the compiled code reads or writes (_nodes.c maps them to slot offsets). */
enum {
    F_KIDS, F_VISIT, F_WIN, F_DRAW, F_PROVEN, F_PARENT, F_ID, F_NAME, F_DEPTH, F_CREATED, F_SELECT, N_FIELDS
};

/* The pair (a, b), taking over both references (either may be NULL: then NULL, the error kept). */
static inline PyObject *pair_of(PyObject *a, PyObject *b) {
    PyObject *pair = a != NULL && b != NULL ? PyTuple_Pack(2, a, b) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(b);
    return pair;
}

int nodes_init(void);                                         /* once, at import: 0 or -1 */
Py_ssize_t slot_offset(PyObject *obj, int field);             /* >= 0: a plain slot at that offset */
PyObject *get_field(PyObject *obj, int field);                /* a new reference, NULL on error */
int set_field(PyObject *obj, int field, PyObject *value);     /* 0, or -1 with an exception */
/* A node's children slot holds nothing (no children), the one child itself, or a list/tuple of two or more.
 * kid_items: the children as a borrowed item array, *n of them (a list's or tuple's items, or the slot's
 * own address for one child), without allocating; NULL with *n == 0 for none, NULL with *n == -1 and an
 * exception for a node without the plain slot. Valid until the children change: re-read it after any
 * call that may run Python code. add_kid: link child as parent's last child (both slots; a tuple
 * becomes a list); 0 or -1. seal_kids: a list of children becomes an exact-size tuple (a load's nodes
 * seldom grow: a tuple of k costs 40 + 8k bytes, an appended list 56 and its over-allocated items). */
PyObject **kid_items(PyObject *node, Py_ssize_t *n);
int add_kid(PyObject *parent, PyObject *child);
int seal_kids(PyObject *node);

PyObject *select_child(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *descend(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *backup(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *breadth_first(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *node_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *renumber(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *build_nodes(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *new_child(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
