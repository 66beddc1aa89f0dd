/* The tables the core computes with, configured once from the Python definitions.
 *
 * cstate.py calls configure() when it is imported, with cards.py's per-face values, the
 * move table of moves.py, the rule sizes of rules.py and state.py, and the observation
 * layout of observation_layout.py (the offsets of the blocks this writer knows, looked up
 * by name, see observe.c). Everything is read into a scratch copy and checked against the
 * capacities of core.h before any of it is kept, so a refused call leaves the core as it
 * was, and a core compiled for other tables says to rebuild instead of computing wrong
 * results.
 */
#include "engine.h"

Tables T;
PyObject *MOVES = NULL, *CARDS = NULL, *BUILD_CLS = NULL, *INVALID_POSITION = NULL, *RULESET_CLS = NULL, *GAME_OVER = NULL;
PyObject *ID_OBJS[MAX_IDS];

static Tables scratch; /* too large for the stack; the GIL is held */

static int fail(const char *what) {
    PyErr_Format(PyExc_ValueError,
                 "mulle_env.engine._core.configure: %s; the compiled core does not fit the Python tables "
                 "(a stale build?): rebuild it with pip install -e .",
                 what);
    return -1;
}

/* `n` ints from a sequence into out[], each in lo..hi. */
static int read_ints(PyObject *seq, int n, int *out, int lo, int hi, const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        Py_DECREF(fast);
        char msg[160];
        snprintf(msg, sizeof msg, "%s must hold %d entries", what, n);
        return fail(msg);
    }
    for (int i = 0; i < n; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        if (v < lo || v > hi) {
            Py_DECREF(fast);
            char msg[160];
            snprintf(msg, sizeof msg, "%s[%d] = %ld lies outside %d..%d", what, i, v, lo, hi);
            return fail(msg);
        }
        out[i] = (int)v;
    }
    Py_DECREF(fast);
    return 0;
}

static int read_doubles(PyObject *seq, int n, double *out, const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        Py_DECREF(fast);
        return fail(what);
    }
    for (int i = 0; i < n; i++) {
        double v = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1.0 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        if (!(v > 0.0)) {
            Py_DECREF(fast);
            return fail("observation scales must be positive");
        }
        out[i] = v;
    }
    Py_DECREF(fast);
    return 0;
}

static int read_cards(Tables *t, PyObject *cards) {
    if (!PyTuple_Check(cards) || PyTuple_GET_SIZE(cards) != 5)
        return fail("cards: (table values, hand values, intake points, mulle values, hand-value mulle values)");
    if (read_ints(PyTuple_GET_ITEM(cards, 0), NF, t->tv, 1, MAXT, "table values") < 0) return -1;
    if (read_ints(PyTuple_GET_ITEM(cards, 1), NF, t->hv, 2, MAXV, "hand values") < 0) return -1;
    if (read_ints(PyTuple_GET_ITEM(cards, 2), NF, t->ipts, 0, 100, "intake points") < 0) return -1;
    if (read_ints(PyTuple_GET_ITEM(cards, 3), NF, t->mv[0], 0, 100, "mulle values") < 0) return -1;
    return read_ints(PyTuple_GET_ITEM(cards, 4), NF, t->mv[1], 0, 100, "hand-value mulle values");
}

static int read_rules(Tables *t, PyObject *rules) {
    int r[8];
    if (read_ints(rules, 8, r, 0, 1 << 30, "rules") < 0) return -1;
    t->hand_size = r[0], t->table_deal = r[1], t->deals_per_set = r[2], t->min_build = r[3], t->max_build = r[4];
    t->max_mulle_hv = r[5], t->bonus_from = r[6], t->count_limit = r[7];
    if (t->hand_size < 1 || t->hand_size > MAX_HAND || 2 * t->hand_size + t->table_deal > 2 * NF)
        return fail("the hand size does not fit");
    if (t->deals_per_set < 1 || t->deals_per_set > MAX_DEALS) return fail("deals per set do not fit");
    if (t->min_build < 2 || t->max_build > MAXV || t->min_build > t->max_build) return fail("build values do not fit");
    if (t->max_mulle_hv > MAXT) return fail("the largest mulle-capture value does not fit");
    if (t->count_limit < 1 || t->count_limit > (1 << 30)) return fail("the count limit does not fit");
    return 0;
}

/* The move table: per id (kind, card, on, on_build, to), -1 for absent fields; every
 * (kind, card, target) once, and captures, trottas and discards of every card. */
static int read_moves(Tables *t, PyObject *moves) {
    PyObject *fast = PySequence_Fast(moves, "moves");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n < 3 * NF || n > MAX_IDS) {
        Py_DECREF(fast);
        return fail("the move table's size does not fit");
    }
    t->num_ids = (int)n;
    for (int c = 0; c < NF; c++) {
        t->capture_id[c] = t->trotta_id[c] = t->discard_id[c] = -1;
        for (int f = 0; f < NF; f++) t->loose_id[c][f] = -1;
        for (int v = 0; v <= MAXV; v++) t->up_id[c][v] = t->down_id[c][v] = -1;
    }
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        int m[5];
        if (read_ints(PySequence_Fast_GET_ITEM(fast, i), 5, m, -1, 127, "a move") < 0) {
            rc = -1;
            break;
        }
        int kind = m[0], c = m[1], on = m[2], onb = m[3], to = m[4];
        if (kind < K_CAPTURE || kind > K_DISCARD || c < 0 || c >= NF) {
            rc = fail("a move's kind or card is out of range");
            break;
        }
        int *slot = NULL;
        if (kind != K_BUILD) {
            if (on != -1 || onb != -1 || to != -1) rc = fail("only builds have targets");
            slot = kind == K_CAPTURE ? &t->capture_id[c] : kind == K_TROTTA ? &t->trotta_id[c] : &t->discard_id[c];
        } else if (on >= 0 && on < NF && onb == -1 && to == t->tv[c] + t->tv[on] && to <= t->max_build) {
            slot = &t->loose_id[c][on];
        } else if (on == -1 && onb >= t->min_build && onb <= t->max_build && to >= t->min_build &&
                   to <= t->max_build && (to == onb + t->tv[c] || to == onb - t->tv[c])) {
            slot = to > onb ? &t->up_id[c][onb] : &t->down_id[c][onb];
        } else {
            rc = fail("a build's target and value do not agree with the card values");
        }
        if (rc == 0 && *slot != -1) rc = fail("two ids name one move");
        if (rc == 0) {
            *slot = i;
            t->m_kind[i] = (int8_t)kind, t->m_card[i] = (int8_t)c, t->m_on[i] = (int8_t)on;
            t->m_onb[i] = (int8_t)onb, t->m_to[i] = (int8_t)to;
        }
    }
    Py_DECREF(fast);
    if (rc < 0) return -1;
    for (int c = 0; c < NF; c++)
        if (t->capture_id[c] < 0 || t->trotta_id[c] < 0 || t->discard_id[c] < 0)
            return fail("a card lacks its capture, trotta or discard id");
    return 0;
}

/* The layout: (size, 8 face-block offsets, builds offset, build stride, 5 feature offsets within
 * a build, 4 sheet offsets, 13 scalar offsets, 5 scales), in the name orders observe.c exports. */
static int read_layout(Tables *t, PyObject *layout) {
    if (!PyTuple_Check(layout) || PyTuple_GET_SIZE(layout) != 9) return fail("the layout tuple has 9 entries");
    int size, builds[2];
    if (read_ints(PyTuple_GET_ITEM(layout, 0), 1, &size, 1, OBS_MAX, "observation size") < 0) return -1;
    t->obs_size = size;
    if (read_ints(PyTuple_GET_ITEM(layout, 1), N_FACE_BLOCKS, t->face_at, 0, size - NF, "face blocks") < 0) return -1;
    if (read_ints(PyTuple_GET_ITEM(layout, 2), 1, &builds[0], 0, size - 1, "builds offset") < 0) return -1;
    if (read_ints(PyTuple_GET_ITEM(layout, 3), 1, &builds[1], N_BUILD_FEATURES, size, "build stride") < 0) return -1;
    t->builds_at = builds[0], t->build_stride = builds[1];
    if (read_ints(PyTuple_GET_ITEM(layout, 4), N_BUILD_FEATURES, t->feature_at, 0, t->build_stride - 1,
                  "build features") < 0)
        return -1;
    int nvalues = t->max_build - t->min_build + 1;
    if (t->builds_at + nvalues * t->build_stride > size) return fail("the builds block does not fit the size");
    if (read_ints(PyTuple_GET_ITEM(layout, 5), N_SHEETS, t->sheet_at, 0, size - N_SHEET_KEYS, "sheets") < 0) return -1;
    if (read_ints(PyTuple_GET_ITEM(layout, 6), N_SCALARS, t->scalar_at, 0, size - 1, "scalars") < 0) return -1;
    double scales[5];
    if (read_doubles(PyTuple_GET_ITEM(layout, 7), 5, scales, "scales") < 0) return -1;
    t->score_scale = scales[0], t->build_cards_scale = scales[1], t->deck_scale = scales[2];
    t->hand_scale = scales[3], t->deals_scale = scales[4];
    int version;
    return read_ints(PyTuple_GET_ITEM(layout, 8), 1, &version, 1, 1 << 20, "layout version");
}

PyObject *mod_configure(PyObject *mod, PyObject *args) {
    int abi;
    PyObject *cards, *moves, *rules, *layout, *objects;
    if (!PyArg_ParseTuple(args, "iOOOOO!", &abi, &cards, &moves, &rules, &layout, &PyTuple_Type, &objects))
        return NULL;
    if (abi != MULLE_CORE_ABI) {
        PyErr_Format(PyExc_ImportError,
                     "the compiled core speaks ABI %d, cstate.py ABI %d: it is a stale build; rebuild it with "
                     "pip install -e .",
                     MULLE_CORE_ABI, abi);
        return NULL;
    }
    memset(&scratch, 0, sizeof scratch);
    if (read_cards(&scratch, cards) < 0 || read_rules(&scratch, rules) < 0 || read_moves(&scratch, moves) < 0 ||
        read_layout(&scratch, layout) < 0)
        return NULL;
    PyObject *mv, *cd, *build, *invalid, *rscls, *over;
    if (!PyArg_ParseTuple(objects, "O!O!OOOO", &PyTuple_Type, &mv, &PyTuple_Type, &cd, &build, &invalid, &rscls,
                          &over))
        return NULL;
    if (PyTuple_GET_SIZE(mv) != scratch.num_ids || PyTuple_GET_SIZE(cd) != NF) {
        fail("MOVES and CARDS do not match the tables");
        return NULL;
    }
    if (!T.configured) {
        for (int i = 0; i < MAX_IDS; i++)
            if (!(ID_OBJS[i] = PyLong_FromLong(i))) return NULL;
    }
    scratch.configured = 1;
    T = scratch;
    Py_INCREF(mv);
    Py_XSETREF(MOVES, mv);
    Py_INCREF(cd);
    Py_XSETREF(CARDS, cd);
    Py_INCREF(build);
    Py_XSETREF(BUILD_CLS, build);
    Py_INCREF(invalid);
    Py_XSETREF(INVALID_POSITION, invalid);
    Py_INCREF(rscls);
    Py_XSETREF(RULESET_CLS, rscls);
    Py_INCREF(over);
    Py_XSETREF(GAME_OVER, over);
    if (rules_init() < 0) return NULL;
    Py_RETURN_NONE;
}
