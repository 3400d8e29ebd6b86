/* treelab._speedups, part 4: whole batches of default UCT simulations on the persistent nodes.
 *
 * ``batch`` runs up to n simulations of treelab.mcts.uct.search with its default options (UCB1
 * selection, random or -- Connect Four -- decisive playouts, the MCTS-Solver optional) for the games
 * with compiled bitboards, Connect Four and tic-tac-toe. Each simulation does what the Python phases
 * of uct.py do, in the same order, with the same random draws from the search's ``random.Random``:
 *
 *   walk     down from ``start`` by best_child (_nodes.c, UCB1 as treelab.nodes.ucb1_score) while a
 *            node has every move tried, the position followed on two bitboards;
 *   expand   at the first node with an untried move: the untried moves in legal order (legal minus
 *            the children's moves), one picked as int(rand() * k), a real TreeNode child made by
 *            new_child (_rows.c), appended to the tree's new nodes and per-depth counts;
 *   playout  from a live position, seeded with bits(64) (c4_play, c4_decisive, ttt_play);
 *   backup   nb_visit, nb_select, nb_win / nb_draw along the path, each node's counts before its first
 *            change recorded in the tree's baselines (as _nodes.c's backup).
 *
 * A terminal node is a fact: its winner is backed up. With the solver on, a terminal node not proven
 * yet stops the batch before its backup and is handed back (the path as a list): Python proves it
 * and propagates the proof (treelab.mcts.solver, written once), then backs the simulation up. The
 * batch also stops once ``max_new`` nodes were made, once ``start`` is proven (solver), and on a
 * signal (PyErr_CheckSignals between simulations, so Ctrl-C works). What was done is always written
 * to ``stats`` (also when an exception is raised), so the caller's accounting stays exact.
 */
#include "_speedups.h"

#define MAX_PATH 64 /* nodes on one path below start: more than any game here has moves (42) */

int board_over(const Board *s) {
    return s->winner != 0 || s->ply == (s->game == GAME_C4 ? CELLS : 9);
}

/* The legal moves as bits (bit m - 1 for move m), in legal order from the lowest. */
unsigned legal_bits(const Board *s) {
    if (board_over(s)) return 0;
    if (s->game == GAME_TTT) return ~(unsigned)(s->a | s->b) & 0x1FF;
    unsigned legal = 0;
    for (int c = 0; c < WIDTH; c++)
        if (!(s->b & (1ULL << (H1 * c + HEIGHT - 1)))) legal |= 1u << c;
    return legal;
}

/* Play move (1-based, legal) on s, noting a win (as connect4_replay / tictactoe_replay). */
void board_play(Board *s, int move) {
    if (s->game == GAME_C4) {
        uint64_t grown = s->b | (s->b + (1ULL << (H1 * (move - 1))));
        uint64_t other = s->a ^ s->b;
        if (c4_four(other ^ grown)) s->winner = 1 + (s->ply & 1);
        s->a = other;
        s->b = grown;
    } else {
        uint64_t bit = 1ULL << (move - 1);
        if (s->ply & 1) {
            s->b |= bit;
            if (ttt_won((unsigned)s->b)) s->winner = 2;
        } else {
            s->a |= bit;
            if (ttt_won((unsigned)s->a)) s->winner = 1;
        }
    }
    s->ply++;
}

/* The move a node stands for (its name, one of labels or a key of move_of); 0 with an exception if none. */
int move_of_node(PyObject *node, PyObject *labels, PyObject *move_of, int num_moves) {
    PyObject *name = get_field(node, F_NAME);
    if (name == NULL) return 0;
    int move = 0;
    for (int m = 1; m <= num_moves && !move; m++)
        if (PyTuple_GET_ITEM(labels, m) == name) move = m; /* a node this search made: its very label */
    if (!move) {
        PyObject *found = PyDict_GetItemWithError(move_of, name);
        long m = found != NULL ? PyLong_AsLong(found) : 0;
        if (found == NULL && !PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "node name %R is not a move of this game", name);
        move = m >= 1 && m <= num_moves ? (int)m : 0;
        if (!move && !PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "node name %R is not a move", name);
    }
    Py_DECREF(name);
    return move;
}

/* A float from rand() (rng.random), -1.0 with an exception on error. */
static double draw_float(PyObject *rand) {
    PyObject *r = PyObject_CallNoArgs(rand);
    if (r == NULL) return -1.0;
    double x = PyFloat_AsDouble(r);
    Py_DECREF(r);
    return x;
}

/* A 64-bit seed from bits(64) (rng.getrandbits); 0 with an exception on error (check PyErr_Occurred). */
static uint64_t draw_seed(PyObject *bits, PyObject *sixty_four) {
    PyObject *r = PyObject_CallOneArg(bits, sixty_four);
    if (r == NULL) return 0;
    uint64_t x = (uint64_t)PyLong_AsUnsignedLongLong(r);
    Py_DECREF(r);
    return x;
}

/* What batch was given: the search's fixed parts. */
typedef struct {
    PyObject *start, *rand, *bits, *baselines, *move_of;
    Maker make;
    double c;
    int solver, decisive, num_moves;
    Py_ssize_t start_depth, max_new;
    Board board;
} Batch;

/* A new child of parent by move, numbered b->next_id, noted in new_nodes and depth_counts; borrowed, NULL on error. */
PyObject *make_child(Maker *b, PyObject *parent, int move, Py_ssize_t depth) {
    PyObject *id = PyLong_FromLongLong(b->next_id);
    if (id == NULL) return NULL;
    PyObject *args[5] = {b->cls, parent, PyTuple_GET_ITEM(b->labels, move), id, b->created_game};
    PyObject *child = new_child(NULL, args, 5);
    Py_DECREF(id);
    if (child == NULL) return NULL;
    Py_DECREF(child); /* parent holds it now */
    if (PyList_Append(b->new_nodes, child) < 0) return NULL;
    b->next_id++;
    PyObject *counts = b->depth_counts;
    if (depth >= PyList_GET_SIZE(counts)) {
        PyObject *first = PyLong_FromLong(1);
        int status = first == NULL ? -1 : PyList_Append(counts, first);
        Py_XDECREF(first);
        return status < 0 ? NULL : child;
    }
    PyObject *unit = PyLong_FromLong(1), *more = unit != NULL ? PyNumber_Add(PyList_GET_ITEM(counts, depth), unit) : NULL;
    Py_XDECREF(unit);
    return more == NULL || PyList_SetItem(counts, depth, more) < 0 ? NULL : child;
}

/* One simulation's result (winner 0 for a draw, 1 or 2) on path[0..len), path[0] at start_depth: as _nodes.c's
 * backup with first_win from the winner, each node's counts noted in baselines (may be NULL) first. 0 or -1. */
int back_up_path(PyObject *baselines, Py_ssize_t start_depth, PyObject **path, int len, int winner) {
    for (int i = 0; i < len; i++) {
        PyObject *node = path[i];
        Py_ssize_t depth = start_depth + i; /* a node at odd depth was reached by player 1's move */
        if (baselines != NULL && note_baseline(baselines, node) < 0) return -1;
        if (increment(node, F_VISIT) < 0 || (i > 0 && increment(node, F_SELECT) < 0)) return -1;
        if (winner == 0 ? increment(node, F_DRAW) < 0
                        : (winner == 1) == (depth & 1) && increment(node, F_WIN) < 0)
            return -1;
    }
    return 0;
}

/* Walk, expand and play out one simulation; the winner (0, 1, 2), -1 on error, -2: a terminal node the
 * solver has not proven (path[0..*len) is then the path, not backed up). */
static int simulate(Batch *b, PyObject **path, int *len) {
    Board s = b->board;
    PyObject *node = b->start, *kid;
    int n = 1;
    path[0] = node;
    for (;;) {
        Py_ssize_t n_kids;
        PyObject **items = child_items(node, &n_kids);
        if (n_kids < 0) return -1;
        unsigned untried = 0;
        if (n_kids < b->num_moves) {
            if (board_over(&s)) break;
            untried = legal_bits(&s);
            for (Py_ssize_t k = 0; k < n_kids; k++) { /* no Python code runs here: items stays valid */
                int m = move_of_node(items[k], b->make.labels, b->move_of, b->num_moves);
                if (!m) return -1;
                untried &= ~(1u << (m - 1));
            }
        }
        if (n >= MAX_PATH) {
            PyErr_SetString(PyExc_ValueError, "a path deeper than the game allows");
            return -1;
        }
        if (untried) {
            double r = draw_float(b->rand);
            if (r == -1.0 && PyErr_Occurred()) return -1;
            int k = (int)(r * (double)__builtin_popcount(untried)); /* int(rand() * len(untried)) */
            while (k--) untried &= untried - 1;
            int move = __builtin_ctz(untried) + 1;
            if ((node = make_child(&b->make, node, move, b->start_depth + n)) == NULL) return -1;
            path[n++] = node;
            board_play(&s, move);
            if (board_over(&s)) break;
            *len = n;
            PyObject *sixty_four = PyLong_FromLong(64);
            uint64_t seed = sixty_four != NULL ? draw_seed(b->bits, sixty_four) : 0;
            Py_XDECREF(sixty_four);
            if (PyErr_Occurred()) return -1;
            if (s.game == GAME_TTT) return ttt_play((unsigned)s.a, (unsigned)s.b, s.ply, seed, NULL, NULL);
            return b->decisive ? c4_decisive(s.a, s.b, s.ply, seed) : c4_play(s.a, s.b, s.ply, seed, NULL, NULL);
        }
        if (n_kids == 0) break; /* no move at all: only an ended game */
        if ((kid = best_child(node, b->c, b->solver)) == NULL) return -1;
        Py_DECREF(kid); /* its parent holds it */
        int move = move_of_node(kid, b->make.labels, b->move_of, b->num_moves);
        if (!move) return -1;
        path[n++] = node = kid;
        board_play(&s, move);
    }
    *len = n;
    if (b->solver) {
        PyObject *proven = get_field(node, F_PROVEN);
        if (proven == NULL) return -1;
        Py_DECREF(proven);
        if (proven == Py_None) return -2;
    }
    return s.winner;
}

/* stats[:count] = values ([done, draws, wins of player 1, wins of player 2, nodes made, ...]); keeps a pending
 * exception (a batch's accounting is written also when it fails). 0 or -1. */
int write_stats(PyObject *stats, const Py_ssize_t *values, int count) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    int status = 0;
    for (int k = 0; k < count && status == 0; k++) {
        PyObject *v = PyLong_FromSsize_t(values[k]);
        status = v == NULL ? -1 : PyList_SetItem(stats, k, v);
    }
    if (type != NULL) PyErr_Restore(type, value, tb);
    return status;
}

/* batch(start, n, c, solver, game, a, b, ply, decisive, rand, bits, baselines, new_nodes, depth_counts, cls,
 *       next_id, created_game, max_new, labels, move_of, start_depth, stats) -> None or a pending path. */
PyObject *run_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 22 || !PyList_Check(args[12]) || !PyList_Check(args[13]) || !PyType_Check(args[14]) ||
        !PyTuple_Check(args[18]) || !PyDict_Check(args[19]) || !PyList_Check(args[21]) ||
        PyList_GET_SIZE(args[21]) != 5 || (args[11] != Py_None && !PyDict_Check(args[11]))) {
        PyErr_SetString(PyExc_TypeError, "batch(start, n, c, solver, game, a, b, ply, decisive, rand, bits, baselines, "
                                         "new_nodes: list, depth_counts: list, cls, next_id, created_game, max_new, "
                                         "labels: tuple, move_of: dict, start_depth, stats: list of 5)");
        return NULL;
    }
    Batch b = {.start = args[0], .rand = args[9], .bits = args[10], .baselines = args[11] == Py_None ? NULL : args[11],
               .make = {.new_nodes = args[12], .depth_counts = args[13], .cls = args[14], .created_game = args[16],
                        .labels = args[18]},
               .move_of = args[19]};
    Py_ssize_t n = PyLong_AsSsize_t(args[1]);
    b.c = PyFloat_AsDouble(args[2]);
    b.solver = PyObject_IsTrue(args[3]);
    b.board.game = (int)PyLong_AsLong(args[4]);
    b.board.a = PyLong_AsUnsignedLongLong(args[5]);
    b.board.b = PyLong_AsUnsignedLongLong(args[6]);
    b.board.ply = (int)PyLong_AsLong(args[7]);
    b.decisive = PyObject_IsTrue(args[8]);
    b.make.next_id = PyLong_AsLongLong(args[15]);
    b.max_new = PyLong_AsSsize_t(args[17]);
    b.start_depth = PyLong_AsSsize_t(args[20]);
    if (PyErr_Occurred()) return NULL;
    b.num_moves = b.board.game == GAME_C4 ? WIDTH : 9;
    if ((b.board.game != GAME_C4 && b.board.game != GAME_TTT) || PyTuple_GET_SIZE(b.make.labels) <= b.num_moves ||
        (b.decisive && b.board.game != GAME_C4)) {
        PyErr_SetString(PyExc_ValueError, "batch: game 0 (Connect Four, random or decisive) or 1 (tic-tac-toe)");
        return NULL;
    }
    /* the start position's winner, if the last mover already won (the caller only starts from live positions) */
    if (b.board.game == GAME_C4 ? c4_four(b.board.a ^ b.board.b) : ttt_won((unsigned)b.board.a) || ttt_won((unsigned)b.board.b))
        b.board.winner = 1 + ((b.board.ply + 1) & 1);
    Py_ssize_t stats[5] = {0, 0, 0, 0, 0}; /* done, draws, wins 1, wins 2, made */
    long long first_id = b.make.next_id;
    PyObject *path[MAX_PATH], *pending = NULL;
    int len = 0;
    while (stats[0] < n && b.make.next_id - first_id < b.max_new) {
        if (PyErr_CheckSignals() < 0) goto fail;
        if (b.solver) {
            PyObject *proven = get_field(b.start, F_PROVEN);
            if (proven == NULL) goto fail;
            Py_DECREF(proven);
            if (proven != Py_None) break;
        }
        int winner = simulate(&b, path, &len);
        stats[4] = (Py_ssize_t)(b.make.next_id - first_id);
        if (winner == -1) goto fail;
        if (winner == -2) {
            if ((pending = PyList_New(len)) == NULL) goto fail;
            for (int i = 0; i < len; i++) PyList_SET_ITEM(pending, i, (Py_INCREF(path[i]), path[i]));
            break;
        }
        if (back_up_path(b.baselines, b.start_depth, path, len, winner) < 0) goto fail;
        stats[0]++;
        stats[winner == 0 ? 1 : 1 + winner]++;
    }
    if (write_stats(args[21], stats, 5) < 0) {
        Py_XDECREF(pending);
        return NULL;
    }
    if (pending != NULL) return pending;
    Py_RETURN_NONE;
fail:
    write_stats(args[21], stats, 5);
    return NULL;
}
