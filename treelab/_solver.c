/* treelab._speedups, part 5 (_solver.c): an exact Connect Four solver (the oracle of treelab.oracle).
 *
 * Written for treelab after the method Pascal Pons describes in his tutorial
 * "Solving Connect 4: how to build a perfect AI" (gamesolver.org, 2019):
 *
 *   - the position is two bitboards (column c uses bits 7c..7c+5, as in
 *     treelab.games.connect4): ``mask`` holds every disc, ``cur`` those of the
 *     player to move; ``cur + mask`` is a unique key;
 *   - negamax with alpha-beta on Pons' score: a position won by the player to
 *     move with their k-th disc (counting from the empty board, ``moves`` the
 *     discs on it) scores 22 - k, lost the negation, a draw 0;
 *   - only moves that do not lose at once are searched (a single opponent
 *     threat must be blocked, two lose; never play under an opponent threat);
 *   - moves are tried by the number of winning cells they create, ties centre
 *     first;
 *   - a transposition table of upper and lower bounds (a prime number of
 *     slots, always replaced; the low 32 bits of the key stored, which with
 *     the slot number identify the 49-bit key: the prime is odd and above
 *     2^17), a position and
 *     its mirror image sharing one entry (the smaller of the two keys);
 *   - the root is solved by null-window searches that halve the score range
 *     (weak solving keeps the range [-1, 1]: only win, draw or loss).
 *
 * The table is kept between calls (its bounds hold for any window), so the
 * children of one position share work. The search holds the GIL (the table is
 * one static array) and checks for Ctrl-C every 2^20 positions, for its
 * budget (max_nodes) every 4,096.
 *
 *   connect4_solve(cur, mask, ply, weak=False, max_nodes=0) -> score for the
 *       player to move (weak: -1, 0 or 1); raises ValueError for a malformed
 *       or finished position, RuntimeError "gave up" after max_nodes positions
 *       (0: no limit).
 *   connect4_exceeds(cur, mask, ply, value, max_nodes=0) -> whether the position's weak value (1, 0,
 *       -1) for the player to move is above ``value`` (-1 or 0): one null-window search, which stops
 *       at the first move that does better (the cheap half of judging one move, treelab.oracle);
 *       the same errors as connect4_solve.
 *   connect4_solve_nodes() -> positions searched by the last solve.
 *   connect4_solve_reset() -> None: empties the transposition table.
 *   connect4_solve_slots() -> the number of table slots.
 */
#include "_speedups.h"
#include <stdlib.h>
#include <string.h>

#define W WIDTH
#define H HEIGHT
#define SIZE CELLS
#define BOTTOM BOTTOM_ROW
#define BOARD BOARD_BITS
#define MIN_SCORE (-(SIZE / 2) + 3)
#define MAX_SCORE ((SIZE + 1) / 2 - 3)
#define RANGE (MAX_SCORE - MIN_SCORE + 1) /* stored values 1..RANGE: upper bounds, RANGE+1..2*RANGE: lower */
#define TABLE_SLOTS 33554393u /* a prime below 2^25: at most 168 MB, touched as used */

static uint32_t *tt_keys = NULL;
static uint8_t *tt_values = NULL;
static uint64_t searched = 0;
static uint64_t limit = 0;
static int aborted = 0; /* 1: Ctrl-C (a Python error is set), 2: max_nodes reached */

static const int ORDER[W] = {3, 2, 4, 1, 5, 0, 6};

static inline uint64_t column_mask(int c) { return ((1ULL << H) - 1) << (H1 * c); }

static inline int popcount_fast(uint64_t v) { return __builtin_popcountll(v); }

/* The empty cells where one more disc of ``pos`` makes four in a row (_speedups.h). */
#define winning_cells c4_winning_cells

static inline uint64_t playable(uint64_t mask) { return (mask + BOTTOM) & BOARD; }

static inline int can_win_next(uint64_t cur, uint64_t mask) {
    return (winning_cells(cur, mask) & playable(mask)) != 0;
}

/* The moves (one bit each) that do not hand the opponent a win at once; 0: every move loses. */
static inline uint64_t non_losing(uint64_t cur, uint64_t mask) {
    uint64_t possible = playable(mask);
    uint64_t threats = winning_cells(cur ^ mask, mask);
    uint64_t forced = possible & threats;
    if (forced) {
        if (forced & (forced - 1)) return 0; /* two threats: one cannot block both */
        possible = forced;
    }
    return possible & ~(threats >> 1); /* never fill the cell under an opponent threat */
}

/* The key of the mirror image (columns reversed): ``cur + mask`` never carries across columns. */
static inline uint64_t mirror(uint64_t key) {
    uint64_t r = 0;
    for (int c = 0; c < W; c++) r |= ((key >> (H1 * c)) & 0x7F) << (H1 * (W - 1 - c));
    return r;
}

static inline uint8_t tt_get(uint64_t key) {
    uint32_t slot = (uint32_t)(key % TABLE_SLOTS);
    return tt_keys[slot] == (uint32_t)key ? tt_values[slot] : 0;
}

static inline void tt_put(uint64_t key, uint8_t value) {
    uint32_t slot = (uint32_t)(key % TABLE_SLOTS);
    tt_keys[slot] = (uint32_t)key;
    tt_values[slot] = value;
}

/* The score of a position whose player to move cannot win at once, within [alpha, beta]:
 * fail-hard bounds (a result <= alpha is an upper bound, >= beta a lower bound). */
static int negamax(uint64_t cur, uint64_t mask, int moves, int alpha, int beta) {
    if (aborted) return 0;
    searched++;
    if ((searched & 0xFFF) == 0) { /* the budget every 4,096 positions, Ctrl-C every 2^20 */
        if (limit && searched > limit) { aborted = 2; return 0; }
        if ((searched & 0xFFFFF) == 0 && PyErr_CheckSignals() < 0) { aborted = 1; return 0; }
    }
    uint64_t next = non_losing(cur, mask);
    if (!next) return -(SIZE - moves) / 2; /* the opponent wins with their next disc */
    if (moves >= SIZE - 2) return 0;      /* two cells left and neither can win: a draw */
    int low = -(SIZE - 2 - moves) / 2;     /* the opponent cannot win sooner than that */
    if (alpha < low) {
        alpha = low;
        if (alpha >= beta) return alpha;
    }
    int high = (SIZE - 1 - moves) / 2; /* we cannot win with the next disc */
    if (beta > high) {
        beta = high;
        if (alpha >= beta) return beta;
    }
    uint64_t key = cur + mask, image = mirror(key);
    if (image < key) key = image; /* a position and its mirror image share one entry */
    uint8_t stored = tt_get(key);
    if (stored) {
        if (stored > RANGE) {
            int lower = stored - RANGE + MIN_SCORE - 1;
            if (alpha < lower) {
                alpha = lower;
                if (alpha >= beta) return alpha;
            }
        } else {
            int upper = stored + MIN_SCORE - 1;
            if (beta > upper) {
                beta = upper;
                if (alpha >= beta) return beta;
            }
        }
    }
    /* order: most winning cells created first, ties centre first (insertion sort, stable) */
    uint64_t move[W];
    int score[W], n = 0;
    for (int i = 0; i < W; i++) {
        uint64_t m = next & column_mask(ORDER[i]);
        if (!m) continue;
        int s = popcount_fast(winning_cells(cur | m, mask));
        int j = n++;
        while (j > 0 && score[j - 1] < s) {
            move[j] = move[j - 1];
            score[j] = score[j - 1];
            j--;
        }
        move[j] = m;
        score[j] = s;
    }
    for (int i = 0; i < n; i++) {
        uint64_t m = move[i];
        int value = -negamax(cur ^ mask, mask | m, moves + 1, -beta, -alpha);
        if (aborted) return 0;
        if (value >= beta) {
            tt_put(key, (uint8_t)(value - MIN_SCORE + 1 + RANGE));
            return value;
        }
        if (value > alpha) alpha = value;
    }
    tt_put(key, (uint8_t)(alpha - MIN_SCORE + 1));
    return alpha;
}

/* The score for the player to move (weak: its sign), by null-window searches. */
static int solve_position(uint64_t cur, uint64_t mask, int moves, int weak) {
    if (can_win_next(cur, mask)) return weak ? 1 : (SIZE + 1 - moves) / 2;
    int low = -(SIZE - moves) / 2, high = (SIZE + 1 - moves) / 2;
    if (weak) {
        low = -1;
        high = 1;
    }
    while (low < high) {
        int med = low + (high - low) / 2;
        if (med <= 0 && low / 2 < med)
            med = low / 2;
        else if (med >= 0 && high / 2 > med)
            med = high / 2;
        int r = negamax(cur, mask, moves, med, med + 1);
        if (aborted) return 0;
        if (r <= med)
            high = r;
        else
            low = r;
    }
    if (weak) return low > 0 ? 1 : low < 0 ? -1 : 0;
    return low;
}

static int any_four(uint64_t p) {
    static const int shifts[4] = {1, H1, H1 - 1, H1 + 1};
    for (int i = 0; i < 4; i++) {
        uint64_t m = p & (p >> shifts[i]);
        if (m & (m >> (2 * shifts[i]))) return 1;
    }
    return 0;
}

static int ensure_table(void) {
    if (tt_keys) return 0;
    tt_keys = calloc(TABLE_SLOTS, sizeof(uint32_t));
    tt_values = calloc(TABLE_SLOTS, sizeof(uint8_t));
    if (!tt_keys || !tt_values) {
        free(tt_keys);
        free(tt_values);
        tt_keys = NULL;
        tt_values = NULL;
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* Check (cur, mask, ply) and make the table; 0 on success, -1 with a Python error set. */
static int check_position(uint64_t cur, uint64_t mask, int ply) {
    if ((mask & ~BOARD) || (cur & ~mask) || ply < 0 || ply > SIZE || popcount_fast(mask) != ply ||
        ((mask + BOTTOM) & mask & BOARD)) {
        PyErr_SetString(PyExc_ValueError, "not a Connect Four position (cur, mask, ply)");
        return -1;
    }
    if (ply == SIZE || any_four(cur) || any_four(cur ^ mask)) {
        PyErr_SetString(PyExc_ValueError, "the game is over in this position: nothing to solve");
        return -1;
    }
    if (ensure_table() < 0) return -1;
    return 0;
}

/* After a search: NULL with the error of an interrupted one (Ctrl-C, or the budget), else value as an int. */
static PyObject *finish(int value, unsigned long long max_nodes, int as_bool) {
    if (aborted == 1) return NULL; /* Ctrl-C: KeyboardInterrupt is set */
    if (aborted == 2) {
        PyErr_Format(PyExc_RuntimeError, "the solver gave up after %llu positions", max_nodes);
        return NULL;
    }
    return as_bool ? PyBool_FromLong(value) : PyLong_FromLong(value);
}

PyObject *c4solve_solve(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"cur", "mask", "ply", "weak", "max_nodes", NULL};
    unsigned long long cur, mask, max_nodes = 0;
    int ply, weak = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "KKi|pK", names, &cur, &mask, &ply, &weak, &max_nodes))
        return NULL;
    if (check_position(cur, mask, ply) < 0) return NULL;
    searched = 0;
    limit = max_nodes;
    aborted = 0;
    return finish(solve_position(cur, mask, ply, weak), max_nodes, 0);
}

PyObject *c4solve_exceeds(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"cur", "mask", "ply", "value", "max_nodes", NULL};
    unsigned long long cur, mask, max_nodes = 0;
    int ply, value;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "KKii|K", names, &cur, &mask, &ply, &value, &max_nodes))
        return NULL;
    if (value != -1 && value != 0) {
        PyErr_Format(PyExc_ValueError, "value %d must be -1 (is it better than a loss?) or 0 (a win?)", value);
        return NULL;
    }
    if (check_position(cur, mask, ply) < 0) return NULL;
    searched = 0;
    limit = max_nodes;
    aborted = 0;
    /* Pons' score s > value (value -1 or 0) exactly when the weak value is above it. */
    int above = can_win_next(cur, mask) || negamax(cur, mask, ply, value, value + 1) > value;
    return finish(above, max_nodes, 1);
}

PyObject *c4solve_nodes(PyObject *self, PyObject *unused) { return PyLong_FromUnsignedLongLong(searched); }

PyObject *c4solve_reset(PyObject *self, PyObject *unused) {
    if (tt_keys) {
        memset(tt_keys, 0, TABLE_SLOTS * sizeof(uint32_t));
        memset(tt_values, 0, TABLE_SLOTS * sizeof(uint8_t));
    }
    Py_RETURN_NONE;
}

PyObject *c4solve_slots(PyObject *self, PyObject *unused) { return PyLong_FromUnsignedLong(TABLE_SLOTS); }
