/* treelab's compiled hot paths: random playouts and the UCT descent.
 *
 * Optional: treelab/fastpath.py loads this module when it was built and falls
 * back to the pure-Python code otherwise, which stays the reference. Two parts:
 *
 * 1. Uniformly random playouts for Connect Four and tic-tac-toe. The Python
 *    ``Game.python_playout`` methods are the reference; these play the same
 *    games (a uniformly random legal move until a win or a full board) about
 *    50x faster. Randomness is injected: every call takes a 64-bit seed (the
 *    search draws it from its ``random.Random`` with ``getrandbits(64)``) and
 *    expands it with splitmix64 (Steele, Lea & Flood 2014, the seeding
 *    generator of xoshiro), so the same seed always plays the same game. A move
 *    is picked among the k open columns (free cells) with the top 32 bits of
 *    the next output: index = (r >> 32) * k >> 32 (Lemire's multiply-shift; its
 *    bias, below k / 2^32, is far under anything measurable). The open moves
 *    live in a small array with swap-remove, as in the Python reference.
 *
 *      connect4(cur, mask, ply, seed)        -> winner (1 or 2) or None (draw)
 *      connect4_trace(cur, mask, ply, seed)  -> (winner or None, bytes of the columns 1-7 played)
 *      tictactoe(x, o, ply, seed)            -> winner (1 or 2) or None (draw)
 *      tictactoe_trace(x, o, ply, seed)      -> (winner or None, bytes of the cells 1-9 played)
 *
 *    Connect Four boards are Pascal Pons' bitboards (treelab.games.connect4):
 *    column c uses bits 7c..7c+5, ``mask`` holds every disc, ``cur`` those of
 *    the player to move, ``ply`` the number of discs. The position must not
 *    already be won (the Python caller checks); it is validated, and a
 *    malformed one raises ValueError instead of looping or reading out of bounds.
 *
 * 2. The tree walk of treelab.search (see the second half of this file):
 *    ``descend``, ``select`` and ``backup`` do exactly what the Python loop
 *    does with the nodes' ``nb_visit``/``nb_win``/``nb_draw``/``proven`` slots.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <structmember.h>

static PyObject *one; /* the int 1 */

#define WIDTH 7
#define HEIGHT 6
#define H1 7
#define CELLS 42
#define BOTTOM_ROW 0x40810204081ULL /* bit 7c for every column c */
#define BOARD_BITS 0xFDFBF7EFDFBFULL  /* the 6 playable bits of every column */

static inline uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline int pick(uint64_t *state, int k) {
    return (int)(((splitmix64(state) >> 32) * (uint64_t)k) >> 32);
}

static inline int c4_four(uint64_t p) {
    uint64_t m = p & (p >> 1); /* vertical */
    if (m & (m >> 2)) return 1;
    m = p & (p >> H1); /* horizontal */
    if (m & (m >> (2 * H1))) return 1;
    m = p & (p >> (H1 - 1)); /* diagonal / */
    if (m & (m >> (2 * (H1 - 1)))) return 1;
    m = p & (p >> (H1 + 1)); /* diagonal \ */
    return (m & (m >> (2 * (H1 + 1)))) != 0;
}

static int read_u64(PyObject *arg, const char *what, uint64_t *out) {
    if (!PyLong_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int", what);
        return -1;
    }
    unsigned long long v = PyLong_AsUnsignedLongLong(arg);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s must be an int from 0 to 2**64 - 1", what);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

static int read_small(PyObject *arg, const char *what, int low, int high, int *out) {
    long v = PyLong_Check(arg) ? PyLong_AsLong(arg) : -1;
    if (v == -1 && PyErr_Occurred()) return -1;
    if (!PyLong_Check(arg) || v < low || v > high) {
        PyErr_Format(PyExc_ValueError, "%s must be an int from %d to %d", what, low, high);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int popcount64(uint64_t v) {
    int n = 0;
    while (v) {
        v &= v - 1;
        n++;
    }
    return n;
}

/* Parse and validate (cur, mask, ply, seed); 0 on success. */
static int c4_args(PyObject *const *args, Py_ssize_t nargs, uint64_t *cur, uint64_t *mask, int *ply,
                   uint64_t *seed) {
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "expected 4 arguments (cur, mask, ply, seed), got %zd", nargs);
        return -1;
    }
    if (read_u64(args[0], "cur", cur) < 0 || read_u64(args[1], "mask", mask) < 0 ||
        read_small(args[2], "ply", 0, CELLS, ply) < 0 || read_u64(args[3], "seed", seed) < 0)
        return -1;
    uint64_t m = *mask;
    if ((m & ~BOARD_BITS) || (*cur & ~m) || popcount64(m) != *ply ||
        ((m + BOTTOM_ROW) & m & BOARD_BITS)) { /* a column with a hole: the carry meets a disc */
        PyErr_SetString(PyExc_ValueError, "not a Connect Four position (cur, mask, ply)");
        return -1;
    }
    return 0;
}

/* Play a random game; writes the columns (1-7) played into trace if not NULL; returns 0, 1 or 2. */
static int c4_play(uint64_t me, uint64_t mask, int ply, uint64_t seed, unsigned char *trace, int *length) {
    uint64_t other = me ^ mask;
    int next_bit[WIDTH], cols[WIDTH], n = 0, played = 0;
    for (int c = 0; c < WIDTH; c++) {
        uint64_t column = (mask >> (H1 * c)) & 0x3F;
        int h = popcount64(column);
        next_bit[c] = H1 * c + h;
        if (h < HEIGHT) cols[n++] = c;
    }
    int player = 1 + (ply & 1);
    int winner = 0;
    while (ply < CELLS) {
        int i = pick(&seed, n);
        int c = cols[i];
        int bit = next_bit[c]++;
        if (next_bit[c] == H1 * c + HEIGHT) cols[i] = cols[--n];
        me |= 1ULL << bit;
        if (trace) trace[played++] = (unsigned char)(c + 1);
        if (c4_four(me)) {
            winner = player;
            break;
        }
        ply++;
        uint64_t t = me;
        me = other;
        other = t;
        player = 3 - player;
    }
    if (length) *length = played;
    return winner;
}

static PyObject *winner_object(int winner) {
    if (winner == 0) Py_RETURN_NONE;
    return PyLong_FromLong(winner);
}

static PyObject *connect4(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t cur, mask, seed;
    int ply;
    if (c4_args(args, nargs, &cur, &mask, &ply, &seed) < 0) return NULL;
    return winner_object(c4_play(cur, mask, ply, seed, NULL, NULL));
}

static PyObject *connect4_trace(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t cur, mask, seed;
    int ply, length = 0;
    unsigned char trace[CELLS];
    if (c4_args(args, nargs, &cur, &mask, &ply, &seed) < 0) return NULL;
    int winner = c4_play(cur, mask, ply, seed, trace, &length);
    PyObject *moves = PyBytes_FromStringAndSize((const char *)trace, length);
    if (moves == NULL) return NULL;
    PyObject *who = winner_object(winner);
    if (who == NULL) {
        Py_DECREF(moves);
        return NULL;
    }
    PyObject *result = PyTuple_Pack(2, who, moves);
    Py_DECREF(who);
    Py_DECREF(moves);
    return result;
}

/* -- tic-tac-toe: cells are bits 0-8, row by row from the top left ---------------------------- */

static const unsigned short TTT_LINES[8] = {0007, 0070, 0700, 0111, 0222, 0444, 0421, 0124};

static inline int ttt_won(unsigned bits) {
    for (int i = 0; i < 8; i++)
        if ((bits & TTT_LINES[i]) == TTT_LINES[i]) return 1;
    return 0;
}

static int ttt_args(PyObject *const *args, Py_ssize_t nargs, unsigned *x, unsigned *o, int *ply, uint64_t *seed) {
    int xi, oi;
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "expected 4 arguments (x, o, ply, seed), got %zd", nargs);
        return -1;
    }
    if (read_small(args[0], "x", 0, 511, &xi) < 0 || read_small(args[1], "o", 0, 511, &oi) < 0 ||
        read_small(args[2], "ply", 0, 9, ply) < 0 || read_u64(args[3], "seed", seed) < 0)
        return -1;
    *x = (unsigned)xi;
    *o = (unsigned)oi;
    if ((*x & *o) || popcount64(*x | *o) != *ply) {
        PyErr_SetString(PyExc_ValueError, "not a tic-tac-toe position (x, o, ply)");
        return -1;
    }
    return 0;
}

static int ttt_play(unsigned x, unsigned o, int ply, uint64_t seed, unsigned char *trace, int *length) {
    int free_cells[9], n = 0, played = 0, winner = 0;
    for (int i = 0; i < 9; i++)
        if (!(((x | o) >> i) & 1)) free_cells[n++] = i;
    while (n > 0) {
        int i = pick(&seed, n);
        int cell = free_cells[i];
        free_cells[i] = free_cells[--n];
        if (trace) trace[played++] = (unsigned char)(cell + 1);
        if (ply & 1) {
            o |= 1u << cell;
            if (ttt_won(o)) {
                winner = 2;
                break;
            }
        } else {
            x |= 1u << cell;
            if (ttt_won(x)) {
                winner = 1;
                break;
            }
        }
        ply++;
    }
    if (length) *length = played;
    return winner;
}

static PyObject *tictactoe(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    unsigned x, o;
    int ply;
    uint64_t seed;
    if (ttt_args(args, nargs, &x, &o, &ply, &seed) < 0) return NULL;
    return winner_object(ttt_play(x, o, ply, seed, NULL, NULL));
}

static PyObject *tictactoe_trace(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    unsigned x, o;
    int ply, length = 0;
    uint64_t seed;
    unsigned char trace[9];
    if (ttt_args(args, nargs, &x, &o, &ply, &seed) < 0) return NULL;
    int winner = ttt_play(x, o, ply, seed, trace, &length);
    PyObject *moves = PyBytes_FromStringAndSize((const char *)trace, length);
    if (moves == NULL) return NULL;
    PyObject *who = winner_object(winner);
    if (who == NULL) {
        Py_DECREF(moves);
        return NULL;
    }
    PyObject *result = PyTuple_Pack(2, who, moves);
    Py_DECREF(who);
    Py_DECREF(moves);
    return result;
}

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

enum { F_KIDS, F_VISIT, F_WIN, F_DRAW, F_PROVEN, N_FIELDS };
static const char *FIELD_NAMES[N_FIELDS] = {"_LightNodeMixin__children", "nb_visit", "nb_win", "nb_draw",
                                            "proven"};
static PyObject *field_names[N_FIELDS];     /* interned */
static PyTypeObject *layout_type = NULL;    /* the class the offsets belong to (a strong reference) */
static Py_ssize_t layout_offset[N_FIELDS];  /* slot offsets for layout_type, -1: use getattr */

static void learn_layout(PyTypeObject *type) {
    Py_INCREF(type);
    Py_XSETREF(layout_type, type);
    for (int f = 0; f < N_FIELDS; f++) {
        layout_offset[f] = -1;
        PyObject *descr = PyObject_GetAttr((PyObject *)type, field_names[f]);
        if (descr == NULL) {
            PyErr_Clear();
            continue;
        }
        if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
            PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
            if (member->type == T_OBJECT_EX && !(member->flags & READONLY)) layout_offset[f] = member->offset;
        }
        Py_DECREF(descr);
    }
}

static inline Py_ssize_t offset_of(PyObject *obj, int field) {
    if (Py_TYPE(obj) != layout_type) learn_layout(Py_TYPE(obj));
    return layout_offset[field];
}

/* A new reference to obj.<field>, or NULL with an exception (AttributeError when unset). */
static PyObject *get_field(PyObject *obj, int field) {
    Py_ssize_t off = offset_of(obj, field);
    if (off >= 0) {
        PyObject *value = *(PyObject **)((char *)obj + off);
        if (value != NULL) {
            Py_INCREF(value);
            return value;
        }
    }
    return PyObject_GetAttr(obj, field_names[field]);
}

/* obj.<field> as a double (as Python converts it in arithmetic); -1.0 with an exception on error. */
static double get_double(PyObject *obj, int field) {
    Py_ssize_t off = offset_of(obj, field);
    PyObject *value = off >= 0 ? *(PyObject **)((char *)obj + off) : NULL;
    if (value != NULL && PyLong_CheckExact(value)) return PyLong_AsDouble(value);
    value = value != NULL ? (Py_INCREF(value), value) : PyObject_GetAttr(obj, field_names[field]);
    if (value == NULL) return -1.0;
    double x = PyFloat_AsDouble(value);
    Py_DECREF(value);
    return x;
}

/* obj.<field> += 1; 0, or -1 with an exception. */
static int increment(PyObject *obj, int field) {
    PyObject *value = get_field(obj, field);
    if (value == NULL) return -1;
    PyObject *more = PyNumber_Add(value, one);
    Py_DECREF(value);
    if (more == NULL) return -1;
    Py_ssize_t off = offset_of(obj, field);
    if (off >= 0) {
        PyObject **slot = (PyObject **)((char *)obj + off);
        PyObject *old = *slot;
        *slot = more;
        Py_XDECREF(old);
        return 0;
    }
    int status = PyObject_SetAttr(obj, field_names[field], more);
    Py_DECREF(more);
    return status;
}

/* The children of node as a borrowed list/tuple, NULL without children; *error set on failure. */
static PyObject *children_of(PyObject *node, int *error) {
    Py_ssize_t off = offset_of(node, F_KIDS);
    *error = 0;
    if (off >= 0) {
        PyObject *kids = *(PyObject **)((char *)node + off);
        if (kids == NULL || PyList_CheckExact(kids) || PyTuple_CheckExact(kids)) return kids;
    }
    *error = 1;
    PyErr_SetString(PyExc_TypeError, "descend/select need nodes whose children are a list slot (TreeNode)");
    return NULL;
}

/* The child UCT descends to (a new reference), or NULL with an exception. As in search.py:
 * unvisited first, proven children skipped by the solver, then the best UCB1 score, ties to the
 * first; if the solver skipped them all, the first most visited. The list is re-read at every
 * step: converting an exotic count could run Python code. */
static PyObject *best_child(PyObject *node, PyObject *kids, double c, int solver) {
    double big_n = get_double(node, F_VISIT);
    if (big_n == -1.0 && PyErr_Occurred()) return NULL;
    double explore = big_n > 1 ? c * sqrt(log(big_n)) : 0.0;
    PyObject *best = NULL;
    double best_score = -Py_HUGE_VAL;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(kids); i++) {
        PyObject *kid = PySequence_Fast_GET_ITEM(kids, i);
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
    if (best == NULL) { /* every move proven but the node not: the first most visited */
        double most = 0;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(kids); i++) {
            PyObject *kid = PySequence_Fast_GET_ITEM(kids, i);
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
static PyObject *select_child(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    double c;
    int solver, error;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "select(node, c, solver) takes 3 arguments, got %zd", nargs);
        return NULL;
    }
    if (parse_walk(args, 1, &c, &solver) < 0) return NULL;
    PyObject *kids = children_of(args[0], &error);
    if (error) return NULL;
    if (kids == NULL || PySequence_Fast_GET_SIZE(kids) == 0) {
        PyErr_SetString(PyExc_ValueError, "select needs a node with children");
        return NULL;
    }
    Py_INCREF(kids); /* a score's conversion could run Python code */
    PyObject *best = best_child(args[0], kids, c, solver);
    Py_DECREF(kids);
    return best;
}

/* descend(node, path, c, solver, max_moves) -> the first node met with fewer than max_moves
 * children, walking down by select() and appending every node entered to path. */
static PyObject *descend(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    double c;
    int solver, error;
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
        PyObject *kids = children_of(node, &error);
        if (error) {
            Py_DECREF(node);
            return NULL;
        }
        if (kids == NULL || PySequence_Fast_GET_SIZE(kids) < max_moves || max_moves < 1) return node;
        Py_INCREF(kids);
        PyObject *best = best_child(node, kids, c, solver);
        Py_DECREF(kids);
        Py_DECREF(node);
        if (best == NULL) return NULL;
        if (PyList_Append(args[1], best) < 0) {
            Py_DECREF(best);
            return NULL;
        }
        node = best;
    }
}

/* backup(path, first_win) -> None: nb_visit += 1 on every node of path; then nb_draw += 1 on
 * every node if first_win is None (a draw), else nb_win += 1 on path[first_win::2]. */
static PyObject *backup(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "backup(path: list, first_win: int | None)");
        return NULL;
    }
    PyObject *path = args[0];
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
        int status = increment(node, F_VISIT);
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

static PyMethodDef methods[] = {
    {"connect4", (PyCFunction)(void (*)(void))connect4, METH_FASTCALL,
     "connect4(cur, mask, ply, seed) -> winner (1, 2) or None: a uniformly random Connect Four game."},
    {"connect4_trace", (PyCFunction)(void (*)(void))connect4_trace, METH_FASTCALL,
     "connect4_trace(cur, mask, ply, seed) -> (winner or None, bytes of the columns 1-7 played)."},
    {"tictactoe", (PyCFunction)(void (*)(void))tictactoe, METH_FASTCALL,
     "tictactoe(x, o, ply, seed) -> winner (1, 2) or None: a uniformly random tic-tac-toe game."},
    {"tictactoe_trace", (PyCFunction)(void (*)(void))tictactoe_trace, METH_FASTCALL,
     "tictactoe_trace(x, o, ply, seed) -> (winner or None, bytes of the cells 1-9 played)."},
    {"select", (PyCFunction)(void (*)(void))select_child, METH_FASTCALL,
     "select(node, c, solver) -> the child UCT descends to: treelab.search's rule, in C."},
    {"descend", (PyCFunction)(void (*)(void))descend, METH_FASTCALL,
     "descend(node, path, c, solver, max_moves) -> the first node with fewer than max_moves children."},
    {"backup", (PyCFunction)(void (*)(void))backup, METH_FASTCALL,
     "backup(path, first_win) -> None: nb_visit += 1, and nb_draw += 1 (first_win None) or nb_win += 1 on "
     "path[first_win::2]."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "treelab._speedups",
    "Compiled random playouts (splitmix64 from a 64-bit seed) and UCT tree walk; see treelab.fastpath.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__speedups(void) {
    for (int f = 0; f < N_FIELDS; f++) {
        field_names[f] = PyUnicode_InternFromString(FIELD_NAMES[f]);
        if (field_names[f] == NULL) return NULL;
    }
    one = PyLong_FromLong(1);
    if (one == NULL) return NULL;
    return PyModule_Create(&module);
}
