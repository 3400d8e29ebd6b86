/* treelab's compiled hot paths: random playouts and the UCT descent.
 *
 * Optional: treelab/speedups.py loads this module when it was built and falls
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
 *      connect4_decisive(cur, mask, ply, seed) -> winner or None: take a win, else block a loss, else random
 *      tictactoe(x, o, ply, seed)            -> winner (1 or 2) or None (draw)
 *      tictactoe_trace(x, o, ply, seed)      -> (winner or None, bytes of the cells 1-9 played)
 *      connect4_replay(cur, mask, ply, columns: bytes) / tictactoe_replay(x, o, ply, cells: bytes)
 *                                            -> the position after those moves, each checked
 *
 *    Connect Four boards are Pascal Pons' bitboards (treelab.games.connect4):
 *    column c uses bits 7c..7c+5, ``mask`` holds every disc, ``cur`` those of
 *    the player to move, ``ply`` the number of discs. The position must not
 *    already be won (the Python caller checks); it is validated, and a
 *    malformed one raises ValueError instead of looping or reading out of bounds.
 *
 * 2. The tree walk of treelab.search (_nodes.c): ``descend``, ``select`` and
 *    ``backup`` do exactly what the Python loop does with the nodes' slots.
 *
 * 3. The first save's rows (_rows.c): ``breadth_first``, ``rows`` and
 *    ``renumber``, what treelab.store does in Python without this module.
 *
 * 4. ``batch`` (_loop.c): whole default UCT simulations -- walk, expand, playout,
 *    backup -- of treelab.mcts.uct.search, the Python phases' results exactly.
 *
 * 5. ``connect4_solve`` (_solver.c): the exact Connect Four solver of treelab.oracle.
 */
#include "_speedups.h"


static inline uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline int pick(uint64_t *state, int k) {
    return (int)(((splitmix64(state) >> 32) * (uint64_t)k) >> 32);
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

/* Parse and validate the Connect Four position args[0..2] = (cur, mask, ply); 0 on success. */
static int c4_position(PyObject *const *args, uint64_t *cur, uint64_t *mask, int *ply) {
    if (read_u64(args[0], "cur", cur) < 0 || read_u64(args[1], "mask", mask) < 0 ||
        read_small(args[2], "ply", 0, CELLS, ply) < 0)
        return -1;
    uint64_t m = *mask;
    if ((m & ~BOARD_BITS) || (*cur & ~m) || popcount64(m) != *ply ||
        ((m + BOTTOM_ROW) & m & BOARD_BITS)) { /* a column with a hole: the carry meets a disc */
        PyErr_SetString(PyExc_ValueError, "not a Connect Four position (cur, mask, ply)");
        return -1;
    }
    return 0;
}

/* Parse and validate (cur, mask, ply, seed); 0 on success. */
static int c4_args(PyObject *const *args, Py_ssize_t nargs, uint64_t *cur, uint64_t *mask, int *ply,
                   uint64_t *seed) {
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "expected 4 arguments (cur, mask, ply, seed), got %zd", nargs);
        return -1;
    }
    if (c4_position(args, cur, mask, ply) < 0 || read_u64(args[3], "seed", seed) < 0) return -1;
    return 0;
}

/* Play a random game; writes the columns (1-7) played into trace if not NULL; returns 0, 1 or 2. */
int c4_play(uint64_t me, uint64_t mask, int ply, uint64_t seed, unsigned char *trace, int *length) {
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
    return pair_of(winner_object(winner), PyBytes_FromStringAndSize((const char *)trace, length));
}

/* Pick uniformly one set bit of ``bits`` (not 0) with the stream in ``seed``. */
static inline uint64_t pick_bit(uint64_t *seed, uint64_t bits) {
    int i = pick(seed, popcount64(bits));
    while (i--) bits &= bits - 1;
    return bits & (~bits + 1);
}

/* A decisive playout (Teytaud & Teytaud 2010): take a win, else block a loss, else a random move.
 * As treelab.decisive_playout: among several blocks, one at random; returns 0, 1 or 2. */
int c4_decisive(uint64_t me, uint64_t mask, int ply, uint64_t seed) {
    uint64_t other = me ^ mask;
    int player = 1 + (ply & 1);
    while (ply < CELLS) {
        uint64_t playable = (mask + BOTTOM_ROW) & BOARD_BITS;
        if (c4_winning_cells(me, mask) & playable) return player;
        uint64_t blocks = c4_winning_cells(other, mask) & playable;
        uint64_t cell = pick_bit(&seed, blocks ? blocks : playable);
        me |= cell;
        mask |= cell;
        if (c4_four(me)) return player; /* not reached: a win would have been taken above */
        ply++;
        uint64_t t = me;
        me = other;
        other = t;
        player = 3 - player;
    }
    return 0;
}

static PyObject *connect4_decisive(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t cur, mask, seed;
    int ply;
    if (c4_args(args, nargs, &cur, &mask, &ply, &seed) < 0) return NULL;
    return winner_object(c4_decisive(cur, mask, ply, seed));
}

/* -- tic-tac-toe: cells are bits 0-8, row by row from the top left ---------------------------- */


/* Parse and validate the tic-tac-toe position args[0..2] = (x, o, ply); 0 on success. */
static int ttt_position(PyObject *const *args, unsigned *x, unsigned *o, int *ply) {
    int xi, oi;
    if (read_small(args[0], "x", 0, 511, &xi) < 0 || read_small(args[1], "o", 0, 511, &oi) < 0 ||
        read_small(args[2], "ply", 0, 9, ply) < 0)
        return -1;
    *x = (unsigned)xi;
    *o = (unsigned)oi;
    if ((*x & *o) || popcount64(*x | *o) != *ply) {
        PyErr_SetString(PyExc_ValueError, "not a tic-tac-toe position (x, o, ply)");
        return -1;
    }
    return 0;
}

static int ttt_args(PyObject *const *args, Py_ssize_t nargs, unsigned *x, unsigned *o, int *ply, uint64_t *seed) {
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "expected 4 arguments (x, o, ply, seed), got %zd", nargs);
        return -1;
    }
    if (ttt_position(args, x, o, ply) < 0 || read_u64(args[3], "seed", seed) < 0) return -1;
    return 0;
}

int ttt_play(unsigned x, unsigned o, int ply, uint64_t seed, unsigned char *trace, int *length) {
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
    return pair_of(winner_object(winner), PyBytes_FromStringAndSize((const char *)trace, length));
}

/* -- replays: a known sequence of moves from a position, checked, without a Python object per move -- */

static PyObject *replay_error(Py_ssize_t i, int move, const char *why) {
    PyErr_Format(PyExc_ValueError, "move %zd (%d) cannot be played: %s", i + 1, move, why);
    return NULL;
}

/* The 4-tuple (a, b, ply, winner or None) of a replayed position. */
static PyObject *board_tuple(uint64_t a, uint64_t b, int ply, int winner) {
    return Py_BuildValue("(KKiN)", (unsigned long long)a, (unsigned long long)b, ply, winner_object(winner));
}

/* connect4_replay(cur, mask, ply, columns: bytes) -> (cur, mask, ply, winner or None). */
static PyObject *connect4_replay(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t cur, mask;
    int ply, winner = 0;
    if (nargs != 4 || !PyBytes_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "connect4_replay(cur, mask, ply, columns: bytes)");
        return NULL;
    }
    if (c4_position(args, &cur, &mask, &ply) < 0) return NULL;
    if (c4_four(cur ^ mask)) winner = 1 + ((ply + 1) & 1); /* the last mover already has four */
    const unsigned char *columns = (const unsigned char *)PyBytes_AS_STRING(args[3]);
    for (Py_ssize_t i = 0; i < PyBytes_GET_SIZE(args[3]); i++) {
        int c = columns[i];
        if (winner || ply == CELLS) return replay_error(i, c, "the game is over");
        if (c < 1 || c > WIDTH) return replay_error(i, c, "not a column");
        if (mask & (1ULL << (H1 * (c - 1) + HEIGHT - 1))) return replay_error(i, c, "the column is full");
        uint64_t grown = mask | (mask + (1ULL << (H1 * (c - 1))));
        uint64_t other = cur ^ mask;
        if (c4_four(other ^ grown)) winner = 1 + (ply & 1);
        cur = other;
        mask = grown;
        ply++;
    }
    return board_tuple(cur, mask, ply, winner);
}

/* tictactoe_replay(x, o, ply, cells: bytes) -> (x, o, ply, winner or None). */
static PyObject *tictactoe_replay(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    unsigned x, o;
    int ply, winner = 0;
    if (nargs != 4 || !PyBytes_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "tictactoe_replay(x, o, ply, cells: bytes)");
        return NULL;
    }
    if (ttt_position(args, &x, &o, &ply) < 0) return NULL;
    winner = ttt_won(x) ? 1 : ttt_won(o) ? 2 : 0;
    const unsigned char *cells = (const unsigned char *)PyBytes_AS_STRING(args[3]);
    for (Py_ssize_t i = 0; i < PyBytes_GET_SIZE(args[3]); i++) {
        int c = cells[i];
        if (winner || ply == 9) return replay_error(i, c, "the game is over");
        if (c < 1 || c > 9) return replay_error(i, c, "not a cell");
        unsigned bit = 1u << (c - 1);
        if ((x | o) & bit) return replay_error(i, c, "the cell is taken");
        if (ply & 1) {
            o |= bit;
            if (ttt_won(o)) winner = 2;
        } else {
            x |= bit;
            if (ttt_won(x)) winner = 1;
        }
        ply++;
    }
    return board_tuple(x, o, ply, winner);
}

static PyMethodDef methods[] = {
    {"connect4", (PyCFunction)(void (*)(void))connect4, METH_FASTCALL,
     "connect4(cur, mask, ply, seed) -> winner (1, 2) or None: a uniformly random Connect Four game."},
    {"connect4_trace", (PyCFunction)(void (*)(void))connect4_trace, METH_FASTCALL,
     "connect4_trace(cur, mask, ply, seed) -> (winner or None, bytes of the columns 1-7 played)."},
    {"connect4_decisive", (PyCFunction)(void (*)(void))connect4_decisive, METH_FASTCALL,
     "connect4_decisive(cur, mask, ply, seed) -> winner (1, 2) or None: a decisive playout (take a win, else "
     "block a loss, else a random move), as treelab.decisive_playout."},
    {"tictactoe", (PyCFunction)(void (*)(void))tictactoe, METH_FASTCALL,
     "tictactoe(x, o, ply, seed) -> winner (1, 2) or None: a uniformly random tic-tac-toe game."},
    {"tictactoe_trace", (PyCFunction)(void (*)(void))tictactoe_trace, METH_FASTCALL,
     "tictactoe_trace(x, o, ply, seed) -> (winner or None, bytes of the cells 1-9 played)."},
    {"connect4_replay", (PyCFunction)(void (*)(void))connect4_replay, METH_FASTCALL,
     "connect4_replay(cur, mask, ply, columns: bytes) -> (cur, mask, ply, winner or None): the columns played "
     "in turn, each checked (ValueError names the first that cannot be played)."},
    {"tictactoe_replay", (PyCFunction)(void (*)(void))tictactoe_replay, METH_FASTCALL,
     "tictactoe_replay(x, o, ply, cells: bytes) -> (x, o, ply, winner or None): the cells played in turn, "
     "each checked (ValueError names the first that cannot be played)."},
    {"select", (PyCFunction)(void (*)(void))select_child, METH_FASTCALL,
     "select(node, c, solver) -> the child UCT descends to: treelab.search's rule, in C."},
    {"descend", (PyCFunction)(void (*)(void))descend, METH_FASTCALL,
     "descend(node, path, c, solver, max_moves) -> the first node with fewer than max_moves children."},
    {"backup", (PyCFunction)(void (*)(void))backup, METH_FASTCALL,
     "backup(path, first_win, baselines=None) -> None: nb_visit += 1, nb_select += 1 on path[1:], and "
     "nb_draw += 1 (first_win None) or nb_win += 1 on path[first_win::2]; each node's counts before its first "
     "change recorded in baselines."},
    {"breadth_first", (PyCFunction)(void (*)(void))breadth_first, METH_FASTCALL,
     "breadth_first(root) -> (nodes, parents): the subtree breadth-first, children in list order, and each "
     "node's parent position as int64 bytes (-1: root)."},
    {"rows", (PyCFunction)(void (*)(void))node_rows, METH_FASTCALL,
     "rows(nodes, parents, start, stop, first_id, width) -> the nodes rows of nodes[start:stop] (the node at "
     "position i numbered first_id + i), width rows per flat tuple."},
    {"build", (PyCFunction)(void (*)(void))build_nodes, METH_FASTCALL,
     "build(cls, rows, nodes, counts, shared, cut[, check]) -> None: a checked TreeNode per row (id, parent_id, move, "
     "nb_visit, nb_win, nb_draw, proven, created_game, nb_select, cut), linked under nodes[parent_id], as treelab.store.bulk.build."},
    {"child", (PyCFunction)(void (*)(void))new_child, METH_FASTCALL,
     "child(cls, parent, name, node_id, created_game) -> a new unvisited node of cls linked as parent's last "
     "child, as TreeNode(name, parent, node_id=..., created_game=...)."},
    {"batch", (PyCFunction)(void (*)(void))run_batch, METH_FASTCALL,
     "batch(start, n, c, solver, game, a, b, ply, decisive, rand, bits, baselines, new_nodes, depth_counts, cls, "
     "next_id, created_game, max_new, labels, move_of, start_depth, stats) -> None, or the path of a terminal node "
     "the solver must prove: up to n whole UCT simulations of treelab.mcts.uct.search's default options (see _loop.c)."},
    {"puct_batch", (PyCFunction)(void (*)(void))puct_batch, METH_FASTCALL,
     "puct_batch(start, n, c, solver, cur, mask, ply, baselines, value_base, new_nodes, depth_counts, cls, next_id, "
     "max_new, labels, move_of, start_depth, priors, pending, noisy, above, weights, biases, first_move, stats) -> "
     "True when the next simulation is Python's: up to n model-guided PUCT simulations on Connect Four (see _puct.c)."},
    {"mlp_forward", (PyCFunction)(void (*)(void))mlp_forward, METH_FASTCALL,
     "mlp_forward(features, weights, biases) -> the raw outputs of a ReLU network on float32 features (a list)."},
    {"c4_features", (PyCFunction)(void (*)(void))c4_features, METH_FASTCALL,
     "c4_features(cur, mask) -> 168 float32 as bytes: Connect Four's four feature planes as puct_batch builds them."},
    {"prior_get", (PyCFunction)(void (*)(void))prior_get, METH_FASTCALL,
     "prior_get(node, default=None) -> the node's prior, or default when it has none (treelab.tree.Priors.get)."},
    {"native_slots", (PyCFunction)(void (*)(void))native_slots, METH_FASTCALL,
     "native_slots(cls, int64_names, double_names) -> None: those slots of cls hold native numbers from now on "
     "(called once by treelab.nodes, before any node is made)."},
    {"renumber", (PyCFunction)(void (*)(void))renumber, METH_FASTCALL,
     "renumber(nodes, first_id) -> None: node_id = first_id + position."},
    {"columns", (PyCFunction)(void (*)(void))int_columns, METH_FASTCALL,
     "columns(nodes, fields[, none]) -> bytes: each node's int fields (slot names, or 'parent.node_id') as native "
     "int64 (None as none, when given)."},
    {"baselines", (PyCFunction)(void (*)(void))baseline_columns, METH_FASTCALL,
     "baselines(base, nodes) -> bytes: the int tuple base[node] of each node as native int64."},
    {"delta_rows", (PyCFunction)(void (*)(void))delta_rows, METH_FASTCALL,
     "delta_rows(ids, parent_ids, depths, counts, moves, proven, created, keep, width[, sums, priors]) -> the nodes "
     "rows of a delta's kept new nodes, width rows per flat tuple (the last maybe fewer); with sums and priors "
     "(float64, NaN: no prior) each row ends with its value_sum and prior."},
    {"connect4_keys", (PyCFunction)(void (*)(void))connect4_keys, METH_FASTCALL,
     "connect4_keys(nodes, root, move_of) -> the Connect Four position key (ConnectFour.position_key) of each node "
     "below root, its moves replayed on bitboards (move_of: label -> column)."},
    {"connect4_solve", (PyCFunction)(void (*)(void))c4solve_solve, METH_VARARGS | METH_KEYWORDS,
     "connect4_solve(cur, mask, ply, weak=False, max_nodes=0) -> Pons' score for the player to move (weak: -1, 0, "
     "1): the exact solver of treelab.oracle (_solver.c)."},
    {"connect4_exceeds", (PyCFunction)(void (*)(void))c4solve_exceeds, METH_VARARGS | METH_KEYWORDS,
     "connect4_exceeds(cur, mask, ply, value, max_nodes=0) -> whether the weak value for the player to move is "
     "above value (-1 or 0): one null-window search (_solver.c)."},
    {"connect4_solve_nodes", c4solve_nodes, METH_NOARGS, "connect4_solve_nodes() -> positions searched by the last "
     "connect4_solve."},
    {"connect4_solve_reset", c4solve_reset, METH_NOARGS, "connect4_solve_reset() -> None: empty the solver's "
     "transposition table."},
    {"connect4_solve_slots", c4solve_slots, METH_NOARGS, "connect4_solve_slots() -> slots of the solver's "
     "transposition table."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "treelab._speedups",
    "Compiled random playouts (splitmix64 from a 64-bit seed) and UCT tree walk, first-save rows; see treelab.speedups.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__speedups(void) {
    if (nodes_init() < 0) return NULL;
    return PyModule_Create(&module);
}
