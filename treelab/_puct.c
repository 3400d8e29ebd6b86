/* treelab._speedups, part 7: whole batches of model-guided PUCT simulations on the persistent nodes.
 *
 * ``puct_batch`` runs up to n simulations of treelab.mcts.puct.PUCTPhases with a fitted model as the
 * evaluator (treelab.mcts.evaluators.ModelEvaluator; a random playout's result mixed into the value when
 * its ``mix`` is above 0, seeded from getrandbits(64) as Game.playout seeds it) on Connect Four. Each simulation
 * does what the Python phases do, in the same order and with the same arithmetic, so the same tree grows:
 *
 *   select    from ``start`` down, at each node the child or waiting move (tree.pending) maximising
 *             q + c * P * sqrt(N) / (1 + n) (treelab.mcts.puct._pick: N = 1 + the children's
 *             nb_select, an unvisited child's q the parent's value for the player to move, proven
 *             children skipped with the solver, root noise read by label at the start);
 *   expand    a waiting move chosen is made a node (make_child) and its prior moved to tree.priors; a node
 *             never evaluated is evaluated: the network's forward pass on the position's features
 *             (treelab.games.connect4's four planes), its priors floored and normalised over the legal
 *             moves (treelab.learn.model.Model.predict), normalised again and kept (puct._expand);
 *   evaluate  a new leaf (no visit yet) ends the simulation: a value v strictly between 0 and 1 (not 1/2)
 *             is a draw plus 2v - 1 on every node's value sum from the root (the mover's sign), else a
 *             win, a draw or a loss (PUCTPhases.simulate);
 *   backup    nb_visit, nb_select, nb_win / nb_draw along the path (back_up_path, _loop.c).
 *
 * With the solver on, a move that ends the game is made a child when its parent is evaluated and proven
 * at once, as puct._expand does; the proof then propagates up by the one rule of treelab.mcts.solver
 * (the ``prove`` callback, Python), and a leaf proven so ends its simulation with its proven result. A
 * simulation that reaches a finished game or finds every move proven is handed back before it changes
 * anything but the nodes made on the way, which the Python phases then make the same choices over (a
 * descent reads no randomness): the batch returns True and Python runs that simulation. ``mlp_forward`` is the network's forward pass
 * for any features: treelab.learn.model.Model.predict calls it too, so both paths read the same numbers.
 */
#include "_speedups.h"

#include <math.h>

#define MAX_PATH 64   /* nodes on one path below start: more than Connect Four has moves (42) */
#define MAX_LAYERS 16 /* layers of a network (treelab fit makes two or three) */
#define PRIOR_FLOOR 1e-3 /* treelab.learn.model.PRIOR_FLOOR */
#define N_FEATURES (4 * CELLS)

/* A network's layers as read-only float32 buffers: W[l] is (dims[l], dims[l + 1]) row-major. */
typedef struct {
    Py_buffer w[MAX_LAYERS], b[MAX_LAYERS];
    int layers, dims[MAX_LAYERS + 1], widest;
} Net;

static void net_release(Net *net) {
    for (int l = 0; l < net->layers; l++) {
        if (net->w[l].obj != NULL) PyBuffer_Release(&net->w[l]);
        if (net->b[l].obj != NULL) PyBuffer_Release(&net->b[l]);
    }
    net->layers = 0;
}

/* Take the buffers of two tuples of float32 C-contiguous arrays that chain (n_in -> ... -> out). 0 or -1. */
static int net_take(Net *net, PyObject *weights, PyObject *biases, int n_in) {
    memset(net, 0, sizeof(*net));
    if (!PyTuple_Check(weights) || !PyTuple_Check(biases) || PyTuple_GET_SIZE(weights) != PyTuple_GET_SIZE(biases) ||
        PyTuple_GET_SIZE(weights) < 1 || PyTuple_GET_SIZE(weights) > MAX_LAYERS) {
        PyErr_SetString(PyExc_TypeError, "weights and biases: tuples of 1 to 16 float32 arrays, one of each per layer");
        return -1;
    }
    int layers = (int)PyTuple_GET_SIZE(weights);
    net->dims[0] = n_in;
    net->widest = n_in;
    for (int l = 0; l < layers; l++) {
        Py_buffer *w = &net->w[l], *b = &net->b[l];
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(weights, l), w, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_ND) < 0)
            goto fail;
        net->layers = l + 1;
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(biases, l), b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_ND) < 0)
            goto fail;
        if (w->ndim != 2 || b->ndim != 1 || w->itemsize != 4 || b->itemsize != 4 || strcmp(w->format, "f") != 0 ||
            strcmp(b->format, "f") != 0 || w->shape[0] != net->dims[l] || b->shape[0] != w->shape[1]) {
            PyErr_SetString(PyExc_ValueError, "a layer's weights or bias are not float32 or do not chain");
            goto fail;
        }
        net->dims[l + 1] = (int)w->shape[1];
        if (net->dims[l + 1] > net->widest) net->widest = net->dims[l + 1];
    }
    return 0;
fail:
    net_release(net);
    return -1;
}

/* The forward pass: ReLU hidden layers, a linear output; out gets dims[layers] floats. scratch holds
 * 2 * widest floats. Zero inputs are skipped (the board features are mostly zeros). Built twice where the
 * compiler can, for AVX2 (eight floats at a time) and plain x86-64, picked at load time; both add the same
 * products in the same order (no fused multiply-add), so every machine reads the same numbers. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
static void net_forward(const Net *net, const float *x, float *out, float *scratch) {
    const float *in = x;
    for (int l = 0; l < net->layers; l++) {
        int n_in = net->dims[l], n_out = net->dims[l + 1];
        float *restrict acc = l == net->layers - 1 ? out : scratch + (l & 1) * net->widest;
        const float *restrict w = (const float *)net->w[l].buf, *restrict bias = (const float *)net->b[l].buf;
        for (int j = 0; j < n_out; j++) acc[j] = bias[j];
        for (int i = 0; i < n_in; i++) {
            float xi = in[i];
            if (xi == 0.0f) continue;
            const float *restrict row = w + (Py_ssize_t)i * n_out;
            for (int j = 0; j < n_out; j++) acc[j] += xi * row[j];
        }
        if (l < net->layers - 1)
            for (int j = 0; j < n_out; j++) acc[j] = acc[j] > 0.0f ? acc[j] : 0.0f;
        in = acc;
    }
}

/* Connect Four's features (ConnectFourState.features): four planes of 6 x 7, top row first, seen by the
 * player to move: its discs, the other's, its threats, the other's. */
static void c4_encode(uint64_t mine, uint64_t mask, float *x) {
    uint64_t planes[4] = {mine, mine ^ mask, c4_winning_cells(mine, mask), c4_winning_cells(mine ^ mask, mask)};
    for (int p = 0; p < 4; p++)
        for (int r = 0; r < HEIGHT; r++)
            for (int c = 0; c < WIDTH; c++)
                x[p * CELLS + r * WIDTH + c] = (float)((planes[p] >> (H1 * c + HEIGHT - 1 - r)) & 1);
}

/* mlp_forward(features, weights, biases) -> the raw outputs as a list of floats (Model.predict's numbers). */
PyObject *mlp_forward(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "mlp_forward(features, weights, biases)");
        return NULL;
    }
    Py_buffer x;
    if (PyObject_GetBuffer(args[0], &x, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    if (x.itemsize != 4 || strcmp(x.format, "f") != 0) {
        PyBuffer_Release(&x);
        PyErr_SetString(PyExc_ValueError, "features must be float32");
        return NULL;
    }
    Net net;
    if (net_take(&net, args[1], args[2], (int)(x.len / 4)) < 0) {
        PyBuffer_Release(&x);
        return NULL;
    }
    int n_out = net.dims[net.layers];
    float *scratch = PyMem_Malloc(sizeof(float) * (2 * (size_t)net.widest + (size_t)n_out));
    PyObject *result = NULL;
    if (scratch == NULL) {
        PyErr_NoMemory();
    } else {
        net_forward(&net, (const float *)x.buf, scratch + 2 * net.widest, scratch);
        result = PyList_New(n_out);
        for (int j = 0; result != NULL && j < n_out; j++) {
            PyObject *v = PyFloat_FromDouble((double)scratch[2 * net.widest + j]);
            if (v == NULL) Py_CLEAR(result);
            else PyList_SET_ITEM(result, j, v);
        }
    }
    PyMem_Free(scratch);
    net_release(&net);
    PyBuffer_Release(&x);
    return result;
}

/* c4_features(cur, mask) -> bytes of 168 float32: what the batch feeds the network (tests compare it). */
PyObject *c4_features(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "c4_features(cur, mask)");
        return NULL;
    }
    uint64_t mine = PyLong_AsUnsignedLongLong(args[0]), mask = PyLong_AsUnsignedLongLong(args[1]);
    if (PyErr_Occurred()) return NULL;
    float x[N_FEATURES];
    c4_encode(mine, mask, x);
    return PyBytes_FromStringAndSize((const char *)x, sizeof(x));
}

/* What puct_batch was given: the search's fixed parts. */
typedef struct {
    PyObject *start, *baselines, *value_base, *move_of, *priors, *pending, *noisy, *above, *prove, *proofs, *bits;
    Maker make;
    Net net;
    float *scratch;
    double c, mix;
    int solver, first_move, valued;
    Py_ssize_t start_depth, max_new;
    Board board;
} PBatch;

enum { HAND_BACK = -2 };

/* obj.<field> as a double (ints and floats); -1.0 with an exception on error. */
static double number_of(PyObject *node, int field) {
    PyObject *v = get_field(node, field);
    if (v == NULL) return -1.0;
    double x = PyLong_CheckExact(v) ? PyLong_AsDouble(v) : PyFloat_AsDouble(v);
    Py_DECREF(v);
    return x;
}

/* A node's value sum (TreeNode.value_sum: 0.0 while its slot is unset); NAN with an exception on error. */
static double value_sum_of(PyObject *node) {
    Py_ssize_t off = slot_offset(node, F_VALUE);
    if (off < 0) { /* the slot holds a native double (treelab.nodes), or the class has a property */
        double x = get_double(node, F_VALUE);
        if (x == -1.0 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return NAN;
            PyErr_Clear();
            PyObject *v = PyObject_GetAttrString(node, "value_sum");
            if (v == NULL) return NAN;
            x = PyFloat_AsDouble(v);
            Py_DECREF(v);
            return x == -1.0 && PyErr_Occurred() ? NAN : x;
        }
        return x;
    }
    PyObject *v = *(PyObject **)((char *)node + off);
    if (v == NULL) return 0.0;
    Py_INCREF(v);
    double x = PyLong_CheckExact(v) ? PyLong_AsDouble(v) : PyFloat_AsDouble(v);
    Py_DECREF(v);
    return x == -1.0 && PyErr_Occurred() ? NAN : x;
}

/* treelab.nodes.mean_reward of a node with visits > 0, as Python computes it. */
static int mean_of(PyObject *node, double visits, double *mean) {
    double wins = number_of(node, F_WIN), draws = number_of(node, F_DRAW), sum = value_sum_of(node);
    if (PyErr_Occurred()) return -1;
    *mean = (wins + 0.5 * draws + 0.5 * sum) / visits;
    return 0;
}

/* A float from a dict by key, fallback when missing; -1 on error. */
static int dict_double(PyObject *dict, PyObject *key, double fallback, double *out) {
    PyObject *v = PyDict_GetItemWithError(dict, key);
    if (v == NULL) {
        if (PyErr_Occurred()) return -1;
        *out = fallback;
        return 0;
    }
    *out = PyFloat_AsDouble(v);
    return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

/* Evaluate s (live), the position of path[n - 1], and keep its moves' priors: tree.pending[node] for the moves
 * not made, tree.priors for the children (puct._expand). With the solver, a move that ends the game is
 * made a child at once and proven (a win, or a draw on the last cell: solver.prove_terminal), and the proof
 * propagates up by Python's one rule (the prove callback: solver.propagate from node up).
 * *value: the network's value for the player to move. 0, -1 on error, HAND_BACK for a non-finite value. */
static int evaluate(PBatch *b, PyObject **path, const int *counts, int n, const Board *s, double *value) {
    PyObject *node = path[n - 1];
    float x[N_FEATURES];
    c4_encode(s->a, s->b, x);
    int n_out = b->net.dims[b->net.layers];
    float *out = b->scratch + 2 * b->net.widest;
    net_forward(&b->net, x, out, b->scratch);
    double v = ((double)out[n_out - 1] + 1.0) * 0.5;
    if (isnan(v)) return HAND_BACK; /* Python refuses it with one clear error */
    *value = v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
    if (b->mix > 0.0) { /* ModelEvaluator._mixed: a random playout's result blended in, seeded as Game.playout */
        PyObject *sixty_four = PyLong_FromLong(64);
        PyObject *drawn = sixty_four != NULL ? PyObject_CallOneArg(b->bits, sixty_four) : NULL;
        Py_XDECREF(sixty_four);
        uint64_t seed = drawn != NULL ? PyLong_AsUnsignedLongLong(drawn) : 0;
        Py_XDECREF(drawn);
        if (PyErr_Occurred()) return -1;
        int winner = c4_play(s->a, s->b, s->ply, seed, NULL, NULL);
        double result = winner == 0 ? 0.5 : winner == 1 + (s->ply & 1) ? 1.0 : 0.0;
        *value = (1.0 - b->mix) * *value + b->mix * result;
    }
    unsigned legal = legal_bits(s);
    double picked[WIDTH + 1], total = 0.0, again = 0.0;
    for (int m = 1; m <= WIDTH; m++) /* Model.predict: floored, normalised */
        if (legal & (1u << (m - 1))) {
            double raw = (double)out[m - b->first_move];
            picked[m] = PRIOR_FLOOR > raw ? PRIOR_FLOOR : raw;
            total += picked[m];
        }
    for (int m = 1; m <= WIDTH; m++)
        if (legal & (1u << (m - 1))) {
            picked[m] /= total;
            again += picked[m]; /* puct._expand normalises the evaluator's priors again */
        }
    Py_ssize_t n_kids;
    PyObject **items = child_items(node, &n_kids);
    if (n_kids < 0) return -1;
    PyObject *have[WIDTH + 1] = {NULL};
    for (Py_ssize_t k = 0; k < n_kids; k++) {
        int m = move_of_node(items[k], b->make.labels, b->move_of, WIDTH);
        if (!m) return -1;
        have[m] = items[k];
    }
    PyObject *waiting = PyDict_New();
    if (waiting == NULL) return -1;
    int proved = 0;
    Py_ssize_t depth = b->start_depth + n - 1;
    for (int m = 1; m <= WIDTH; m++) {
        if (!(legal & (1u << (m - 1)))) continue;
        Board after = *s;
        int ends = b->solver && (board_play(&after, m), board_over(&after));
        if (have[m] == NULL && ends && (have[m] = make_child(&b->make, node, m, depth + 1)) == NULL) goto fail;
        double p = again > 0 ? picked[m] / again : 1.0 / __builtin_popcount(legal);
        int status;
        if (have[m] == NULL) { /* a waiting move: tree.pending */
            PyObject *prior = PyFloat_FromDouble(p);
            status = prior == NULL ? -1 : PyDict_SetItem(waiting, PyTuple_GET_ITEM(b->make.labels, m), prior);
            Py_XDECREF(prior);
        } else { /* a child: its prior in the node (tree.priors) */
            status = put_prior(have[m], p);
        }
        if (status < 0) goto fail;
        if (have[m] != NULL && ends) {
            PyObject *proven = get_field(have[m], F_PROVEN);
            if (proven == NULL) goto fail;
            Py_DECREF(proven);
            if (proven == Py_None) { /* the mover won, or drew on the last cell */
                if (note_baseline(b->baselines, have[m]) < 0 ||
                    set_field(have[m], F_PROVEN, PyTuple_GET_ITEM(b->proofs, after.winner ? 2 : 1)) < 0)
                    goto fail;
            }
        }
        if (have[m] != NULL && b->solver) {
            PyObject *proven = get_field(have[m], F_PROVEN);
            if (proven == NULL) goto fail;
            Py_DECREF(proven);
            proved |= proven != Py_None;
        }
    }
    if (PyDict_SetItem(b->pending, node, waiting) < 0) goto fail;
    Py_DECREF(waiting);
    if (proved) { /* solver.propagate over above + path, from node up */
        PyObject *line = PyList_New(n), *legal_counts = PyList_New(n);
        for (int i = 0; line != NULL && legal_counts != NULL && i < n; i++) {
            PyObject *count = PyLong_FromLong(counts[i]);
            if (count == NULL) Py_CLEAR(line);
            else PyList_SET_ITEM(legal_counts, i, count);
            if (line != NULL) PyList_SET_ITEM(line, i, (Py_INCREF(path[i]), path[i]));
        }
        PyObject *done = line != NULL && legal_counts != NULL ? PyObject_CallFunctionObjArgs(b->prove, line, legal_counts, NULL) : NULL;
        Py_XDECREF(line);
        Py_XDECREF(legal_counts);
        if (done == NULL) return -1;
        Py_DECREF(done);
    }
    return 0;
fail:
    Py_DECREF(waiting);
    return -1;
}

/* PUCT's choice at node (puct._pick): *chosen a child (borrowed), or *label a waiting move's label
 * (borrowed) with its prior. 0, -1 on error, HAND_BACK when every move is proven. */
static int pick(PBatch *b, PyObject *node, PyObject *waiting, PyObject **chosen, PyObject **label, double *prior_of) {
    Py_ssize_t n_kids;
    PyObject **items = child_items(node, &n_kids);
    if (n_kids < 0) return -1;
    double selected = 0.0;
    for (Py_ssize_t k = 0; k < n_kids; k++) selected += number_of(items[k], F_SELECT);
    double visits = number_of(node, F_VISIT), mean = 0.0;
    if (PyErr_Occurred() || (visits != 0.0 && mean_of(node, visits, &mean) < 0)) return -1;
    double scale = b->c * sqrt(1.0 + selected);
    double fpu = visits != 0.0 ? 1.0 - mean : 0.5;
    PyObject *noisy = node == b->start && PyDict_GET_SIZE(b->noisy) ? b->noisy : NULL;
    double best_score = -INFINITY;
    *chosen = *label = NULL;
    for (Py_ssize_t k = 0; k < n_kids; k++) {
        PyObject *kid = items[k];
        if (b->solver) {
            PyObject *proven = get_field(kid, F_PROVEN);
            if (proven == NULL) return -1;
            Py_DECREF(proven);
            if (proven != Py_None) continue;
        }
        double n = number_of(kid, F_VISIT), sel = number_of(kid, F_SELECT), q = fpu, prior;
        if (PyErr_Occurred() || (n != 0.0 && mean_of(kid, n, &q) < 0)) return -1;
        if (noisy != NULL) {
            PyObject *name = get_field(kid, F_NAME);
            if (name == NULL) return -1;
            int status = dict_double(noisy, name, 0.0, &prior);
            Py_DECREF(name);
            if (status < 0) return -1;
        } else {
            int has = get_prior(kid, &prior);
            if (has < 0) return -1;
            if (!has) prior = 0.0;
        }
        double score = q + scale * prior / (1.0 + sel);
        if (score > best_score) {
            best_score = score;
            *chosen = kid;
        }
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(waiting, &pos, &key, &value)) {
        double prior = PyFloat_AsDouble(value);
        if (noisy != NULL && dict_double(noisy, key, 0.0, &prior) < 0) return -1;
        if (prior == -1.0 && PyErr_Occurred()) return -1;
        double score = fpu + scale * prior;
        if (score > best_score) {
            best_score = score;
            *chosen = NULL;
            *label = key;
            *prior_of = PyFloat_AsDouble(value);
        }
    }
    return *chosen == NULL && *label == NULL ? HAND_BACK : 0;
}

/* Add 2v - 1 (the mover's sign) to the value sums of the nodes above start and of path (Tree.add_value). */
static int add_values(PBatch *b, PyObject **path, int len, double value, int to_move) {
    double v = 2.0 * value - 1.0;
    Py_ssize_t above = PyList_GET_SIZE(b->above);
    for (Py_ssize_t i = 0; i < above + len; i++) {
        PyObject *node = i < above ? PyList_GET_ITEM(b->above, i) : path[i - above];
        Py_ssize_t depth = i < above ? i : b->start_depth + (i - above);
        int mover = (depth & 1) ? 1 : 2;
        double old = value_sum_of(node);
        if (isnan(old) && PyErr_Occurred()) return -1;
        PyObject *was = PyDict_GetItemWithError(b->value_base, node);
        if (was == NULL) {
            if (PyErr_Occurred()) return -1;
            PyObject *base = PyFloat_FromDouble(old);
            int status = base == NULL ? -1 : PyDict_SetItem(b->value_base, node, base);
            Py_XDECREF(base);
            if (status < 0) return -1;
        }
        if (note_baseline(b->baselines, node) < 0) return -1;
        PyObject *sum = PyFloat_FromDouble(old + (mover == to_move ? v : -v));
        int status = sum == NULL ? -1 : set_field(node, F_VALUE, sum);
        Py_XDECREF(sum);
        if (status < 0) return -1;
    }
    b->valued = 1;
    return 0;
}

/* The move a waiting move's label stands for (1-7); 0 with an exception if none. */
static int move_of_label(PBatch *b, PyObject *label) {
    PyObject *found = PyDict_GetItemWithError(b->move_of, label);
    long m = found != NULL ? PyLong_AsLong(found) : 0;
    if (found == NULL && !PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "waiting move %R is not a move", label);
    return m >= 1 && m <= WIDTH ? (int)m : 0;
}

/* One simulation: the winner backed up (0 draw, 1, 2), -1 on error, HAND_BACK for Python to run it. */
static int simulate_one(PBatch *b) {
    Board s = b->board;
    PyObject *node = b->start, *path[MAX_PATH];
    int n = 1, counts[MAX_PATH]; /* counts[i]: the legal moves at path[i] (for proofs) */
    path[0] = node;
    counts[0] = __builtin_popcount(legal_bits(&s));
    double value = -1.0;
    for (;;) {
        if (board_over(&s)) {
            if (b->solver) return HAND_BACK; /* a fact to prove: Python's rule */
            break;
        }
        PyObject *waiting = PyDict_GetItemWithError(b->pending, node);
        if (waiting == NULL) {
            if (PyErr_Occurred()) return -1;
            int status = evaluate(b, path, counts, n, &s, &value);
            if (status < 0) return status;
            double visits = number_of(node, F_VISIT);
            PyObject *proven = visits != -1.0 || !PyErr_Occurred() ? get_field(node, F_PROVEN) : NULL;
            if (proven == NULL) return -1;
            Py_DECREF(proven);
            if (visits == 0.0 || (b->solver && proven != Py_None)) break; /* a new leaf, or just proven */
            if ((waiting = PyDict_GetItemWithError(b->pending, node)) == NULL) return -1;
        }
        PyObject *kid, *label;
        double prior = 0.0;
        int status = pick(b, node, waiting, &kid, &label, &prior);
        if (status < 0) return status;
        int move;
        if (kid == NULL) {
            if (!(move = move_of_label(b, label))) return -1;
            Py_INCREF(label);
            int removed = PyDict_DelItem(waiting, label);
            Py_DECREF(label);
            if (removed < 0 || (kid = make_child(&b->make, node, move, b->start_depth + n)) == NULL ||
                put_prior(kid, prior) < 0)
                return -1;
        } else if (!(move = move_of_node(kid, b->make.labels, b->move_of, WIDTH))) {
            return -1;
        }
        if (n >= MAX_PATH) {
            PyErr_SetString(PyExc_ValueError, "a path deeper than the game allows");
            return -1;
        }
        path[n] = node = kid;
        board_play(&s, move);
        counts[n++] = __builtin_popcount(legal_bits(&s));
    }
    int winner, to_move = 1 + (s.ply & 1);
    PyObject *proof = board_over(&s) ? NULL : get_field(node, F_PROVEN);
    if (proof != NULL) Py_DECREF(proof);
    else if (!board_over(&s)) return -1;
    if (board_over(&s)) {
        winner = s.winner; /* without the solver a finished game's result is backed up unproven */
    } else if (proof != Py_None) { /* a fact (puct._leaf_result): the mover's proven result */
        long result = PyLong_AsLong(proof);
        if (result == -1 && PyErr_Occurred()) return -1;
        int mover = 3 - to_move;
        winner = result == 0 ? 0 : result > 0 ? mover : to_move;
    } else if (value > 0.0 && value < 1.0 && value != 0.5) {
        if (add_values(b, path, n, value, to_move) < 0) return -1;
        winner = 0;
    } else {
        winner = value >= 1.0 ? to_move : value <= 0.0 ? 3 - to_move : 0;
    }
    if (back_up_path(b->baselines, b->start_depth, path, n, winner) < 0) return -1;
    return winner;
}

/* puct_batch(start, n, c, solver, cur, mask, ply, baselines, value_base, new_nodes, depth_counts, cls, next_id,
 *            max_new, labels, move_of, start_depth, priors, pending, noisy, above, weights, biases, first_move,
 *            stats, prove, proofs, mix, getrandbits) -> False, or True: the next simulation is Python's to run (see the module comment). */
PyObject *puct_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 29 || !PyDict_Check(args[7]) || !PyDict_Check(args[8]) || !PyList_Check(args[9]) ||
        !PyList_Check(args[10]) || !PyType_Check(args[11]) || !PyTuple_Check(args[14]) || !PyDict_Check(args[15]) ||
        !PyDict_Check(args[18]) || !PyDict_Check(args[19]) || !PyList_Check(args[20]) ||
        !PyList_Check(args[24]) || PyList_GET_SIZE(args[24]) != 6 || PyTuple_GET_SIZE(args[14]) <= WIDTH ||
        !PyCallable_Check(args[25]) || !PyTuple_Check(args[26]) || PyTuple_GET_SIZE(args[26]) != 3 ||
        !PyCallable_Check(args[28])) {
        PyErr_SetString(PyExc_TypeError, "puct_batch(start, n, c, solver, cur, mask, ply, baselines: dict, value_base: "
                                         "dict, new_nodes: list, depth_counts: list, cls, next_id, max_new, labels: "
                                         "tuple, move_of: dict, start_depth, priors, pending: dict, noisy: dict, "
                                         "above: list, weights, biases, first_move, stats: list of 6, prove, proofs: (loss, draw, win), mix, "
                                         "getrandbits)");
        return NULL;
    }
    PBatch b = {.start = args[0], .baselines = args[7], .value_base = args[8], .move_of = args[15],
                .priors = args[17], .pending = args[18], .noisy = args[19], .above = args[20], .prove = args[25],
                .proofs = args[26], .bits = args[28],
                .make = {.new_nodes = args[9], .depth_counts = args[10], .cls = args[11], .created_game = Py_None,
                         .labels = args[14]}};
    Py_ssize_t n = PyLong_AsSsize_t(args[1]);
    b.c = PyFloat_AsDouble(args[2]);
    b.solver = PyObject_IsTrue(args[3]);
    b.board.game = GAME_C4;
    b.board.a = PyLong_AsUnsignedLongLong(args[4]);
    b.board.b = PyLong_AsUnsignedLongLong(args[5]);
    b.board.ply = (int)PyLong_AsLong(args[6]);
    b.make.next_id = PyLong_AsLongLong(args[12]);
    b.max_new = PyLong_AsSsize_t(args[13]);
    b.start_depth = PyLong_AsSsize_t(args[16]);
    b.first_move = (int)PyLong_AsLong(args[23]);
    b.mix = PyFloat_AsDouble(args[27]);
    if (PyErr_Occurred()) return NULL;
    if (c4_four(b.board.a ^ b.board.b)) b.board.winner = 1 + ((b.board.ply + 1) & 1);
    if (net_take(&b.net, args[21], args[22], N_FEATURES) < 0) return NULL;
    if (b.net.dims[b.net.layers] != WIDTH + 1 || b.first_move != 1) {
        net_release(&b.net);
        PyErr_SetString(PyExc_ValueError, "puct_batch: a Connect Four model (7 policy outputs and a value, moves 1-7)");
        return NULL;
    }
    b.scratch = PyMem_Malloc(sizeof(float) * (2 * (size_t)b.net.widest + WIDTH + 1));
    if (b.scratch == NULL) {
        net_release(&b.net);
        return PyErr_NoMemory();
    }
    Py_ssize_t stats[6] = {0, 0, 0, 0, 0, 0}; /* done, draws, wins 1, wins 2, made, valued */
    long long first_id = b.make.next_id;
    int handed = 0, failed = 0;
    while (stats[0] < n && b.make.next_id - first_id < b.max_new) {
        if (PyErr_CheckSignals() < 0) {
            failed = 1;
            break;
        }
        if (b.solver) {
            PyObject *proven = get_field(b.start, F_PROVEN);
            if (proven == NULL) {
                failed = 1;
                break;
            }
            Py_DECREF(proven);
            if (proven != Py_None) break;
        }
        int winner = simulate_one(&b);
        stats[4] = (Py_ssize_t)(b.make.next_id - first_id);
        stats[5] = b.valued;
        if (winner == -1) {
            failed = 1;
            break;
        }
        if (winner == HAND_BACK) {
            handed = 1;
            break;
        }
        stats[0]++;
        stats[winner == 0 ? 1 : 1 + winner]++;
    }
    PyMem_Free(b.scratch);
    net_release(&b.net);
    if (write_stats(args[24], stats, 6) < 0 || failed) return NULL; /* + valued */
    return PyBool_FromLong(handed);
}
