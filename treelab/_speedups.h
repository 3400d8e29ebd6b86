/* Shared declarations of treelab._speedups, built from four sources:
 *
 *   _speedups.c  the module, and the uniformly random playouts of Connect Four and tic-tac-toe;
 *   _nodes.c     reading and writing TreeNode slots, and the UCT tree walk (select, descend, backup);
 *   _rows.c      the first save's breadth-first numbering and its ``nodes`` rows; nodes from rows (loads);
 *   _loop.c      whole batches of default UCT simulations (walk, expand, playout, backup) on the bitboards,
 *                and the bitboard positions and node making both compiled loops share;
 *   _puct.c      whole batches of model-guided PUCT simulations (select, expand, evaluate, backup), and the
 *                small policy/value network's forward pass they and treelab.learn.model share;
 *   _columns.c   whole-number slots of many nodes as int64 columns (the arrays of a worker's delta), and
 *                a delta's arrays as the rows of the writer's inserts;
 *   _solver.c    an exact Connect Four solver (treelab.oracle), after Pascal Pons' method.
 */
#ifndef TREELAB_SPEEDUPS_H
#define TREELAB_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* Connect Four bitboards (Pascal Pons): column c uses bits 7c..7c+5; tic-tac-toe cells are bits 0-8. */
#define WIDTH 7
#define HEIGHT 6
#define H1 7
#define CELLS 42
#define BOTTOM_ROW 0x40810204081ULL /* bit 7c for every column c */
#define BOARD_BITS 0xFDFBF7EFDFBFULL  /* the 6 playable bits of every column */

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

/* The empty cells where one more disc of p makes four in a row (Pascal Pons' compute_winning_position):
 * treelab.games.connect4._winning_cells, used by the decisive playout, the solver and the model's features. */
static inline uint64_t c4_winning_cells(uint64_t p, uint64_t mask) {
    uint64_t r = (p << 1) & (p << 2) & (p << 3); /* vertical */
    static const int steps[3] = {H1, H1 - 1, H1 + 1}; /* horizontal, diagonals */
    for (int k = 0; k < 3; k++) {
        int d = steps[k];
        uint64_t t = (p << d) & (p << (2 * d));
        r |= t & (p << (3 * d));
        r |= t & (p >> d);
        t = (p >> d) & (p >> (2 * d));
        r |= t & (p << d);
        r |= t & (p >> (3 * d));
    }
    return r & (BOARD_BITS ^ mask);
}

static inline int ttt_won(unsigned bits) {
    static const unsigned short TTT_LINES[8] = {0007, 0070, 0700, 0111, 0222, 0444, 0421, 0124};
    for (int i = 0; i < 8; i++)
        if ((bits & TTT_LINES[i]) == TTT_LINES[i]) return 1;
    return 0;
}

/* A position of the compiled loops: Connect Four (a = discs of the player to move, b = every disc) or
 * tic-tac-toe (a = x, b = o); winner 0 (none yet), 1 or 2. */
enum { GAME_C4 = 0, GAME_TTT = 1 };
typedef struct {
    int game, ply, winner;
    uint64_t a, b;
} Board;
int board_over(const Board *s);                 /* the game has ended */
unsigned legal_bits(const Board *s);            /* bit m - 1 for each legal move m */
void board_play(Board *s, int move);            /* play a legal move (1-based), noting a win */
/* The move a node stands for (its name: one of labels, or a key of move_of); 0 with an exception if none. */
int move_of_node(PyObject *node, PyObject *labels, PyObject *move_of, int num_moves);

/* What making a node in C needs: the node class, each move's label (by move number), the tree's new nodes
 * and per-depth counts, the created_game to stamp, and the next node id (advanced per node made). */
typedef struct {
    PyObject *cls, *labels, *new_nodes, *depth_counts, *created_game;
    long long next_id;
} Maker;
/* A new child of parent by move at depth, as Tree.add_child; borrowed (its parent holds it), NULL on error. */
PyObject *make_child(Maker *m, PyObject *parent, int move, Py_ssize_t depth);

/* stats[:count] = values, the accounting of a compiled batch, kept also when an exception is pending. 0 or -1. */
int write_stats(PyObject *stats, const Py_ssize_t *values, int count);
/* One simulation's result (winner 0 for a draw, 1 or 2) backed up on path[0..len), path[0] at start_depth;
 * each node's counts noted in baselines (may be NULL) before its first change. 0 or -1. */
int back_up_path(PyObject *baselines, Py_ssize_t start_depth, PyObject **path, int len, int winner);

/* The TreeNode attributes the compiled code reads or writes (_nodes.c maps them to slot offsets). */
enum {
    F_KIDS, F_VISIT, F_WIN, F_DRAW, F_PROVEN, F_PARENT, F_ID, F_NAME, F_DEPTH, F_CREATED, F_SELECT, F_VALUE, F_PRIOR,
    N_FIELDS
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
double get_double(PyObject *obj, int field);                  /* as a double; -1.0 with an exception on error */
int set_double(PyObject *obj, int field, double x);           /* 0, or -1 with an exception */
int get_prior(PyObject *node, double *prior);                 /* 1 and *prior, 0 for none, -1 on error */
int put_prior(PyObject *node, double p);                      /* the node's prior p >= 0: 0, or -1 */
PyObject *native_slots(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *prior_get(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* A node's children slot holds nothing (no children), the one child itself, or a list/tuple of two or more.
 * child_items: the children as a borrowed item array, *n of them (a list's or tuple's items, or the slot's
 * own address for one child), without allocating; NULL with *n == 0 for none, NULL with *n == -1 and an
 * exception for a node without the plain slot. Valid until the children change: re-read it after any
 * call that may run Python code. append_child: link child as parent's last child (both slots; a tuple
 * becomes a list); 0 or -1. seal_children: a list of children becomes an exact-size tuple (a load's nodes
 * seldom grow: a tuple of k costs 40 + 8k bytes, an appended list 56 and its over-allocated items). */
PyObject **child_items(PyObject *node, Py_ssize_t *n);
int append_child(PyObject *parent, PyObject *child);
int seal_children(PyObject *node);

int increment(PyObject *obj, int field);                     /* obj.<field> += 1; 0 or -1 */
int note_baseline(PyObject *baselines, PyObject *node);       /* node's counts into baselines unless there; 0/-1 */
PyObject *best_child(PyObject *node, double c, int solver);   /* UCT's child (a new reference), NULL on error */
/* Random (trace may be NULL) and decisive playouts from a position, as the module's functions: 0, 1 or 2. */
int c4_play(uint64_t me, uint64_t mask, int ply, uint64_t seed, unsigned char *trace, int *length);
int c4_decisive(uint64_t me, uint64_t mask, int ply, uint64_t seed);
int ttt_play(unsigned x, unsigned o, int ply, uint64_t seed, unsigned char *trace, int *length);

PyObject *select_child(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *descend(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *backup(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *breadth_first(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *node_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *renumber(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *build_nodes(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *new_child(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *run_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *puct_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *mlp_forward(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *c4_features(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *int_columns(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *baseline_columns(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *delta_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *connect4_keys(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* _solver.c: the exact Connect Four solver of treelab.oracle (after Pascal Pons' method). */
PyObject *c4solve_solve(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *c4solve_exceeds(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *c4solve_nodes(PyObject *self, PyObject *unused);
PyObject *c4solve_reset(PyObject *self, PyObject *unused);
PyObject *c4solve_slots(PyObject *self, PyObject *unused);

#endif
