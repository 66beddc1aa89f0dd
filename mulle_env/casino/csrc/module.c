/* The module mulle_env.casino._core: the Python type Core (cstate.GameState's base), configure(), and the
 * GameOps capsule the env layer's stepper steps Casino through (mulle_env/engine/csrc/game_ops.h).
 *
 * Every input from Python is checked here before it reaches rules.c: faces 0..51, no card twice, builds
 * of value 1..10 with two cards at least, counts within the capacities. The Python side (position.py)
 * refuses bad positions with the reference's messages first; these checks only keep the C side safe. */
#include "casino.h"

#include "../../engine/csrc/core.h"
#include "../../engine/csrc/game_ops.h"

long *casino_fail_after = NULL;
int (*casino_failpoint_hit)(void) = NULL;

static PyObject *MOVES_T = NULL, *SHEET_KEYS = NULL;

typedef struct {
    PyObject_HEAD
    PyObject *ruleset;       /* the Ruleset, or NULL before _init */
    PyObject *legal;         /* cached tuple of the legal ids, or NULL */
    PyObject *plans;         /* cstate.py's cached plan table (dict), or NULL */
    PyObject *last_move_obj; /* (seat, Move) of a move without an id, set by cstate.py; or NULL */
    CG g;                    /* last: copies stop after the used sheet rows */
} Core;

static PyTypeObject CoreType;

static void core_changed(Core *self) {
    Py_CLEAR(self->legal);
    Py_CLEAR(self->plans);
}

static int Core_traverse(Core *self, visitproc visit, void *arg) {
    Py_VISIT(self->ruleset);
    Py_VISIT(self->legal);
    Py_VISIT(self->plans);
    Py_VISIT(self->last_move_obj);
    return 0;
}

static int Core_clear(Core *self) {
    Py_CLEAR(self->ruleset);
    Py_CLEAR(self->legal);
    Py_CLEAR(self->plans);
    Py_CLEAR(self->last_move_obj);
    return 0;
}

static void Core_dealloc(Core *self) {
    PyObject_GC_UnTrack(self);
    Core_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Core_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    if (!CT.configured) {
        PyErr_SetString(PyExc_RuntimeError, "the Casino core is not configured (import mulle_env.casino.cstate)");
        return NULL;
    }
    if (casino_failpoint()) return NULL;
    Core *self = (Core *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->g.last_capturer = -1;
    self->g.last_player = self->g.last_id = -1;
    self->g.round = 1;
    return (PyObject *)self;
}

static int need_init(Core *self) {
    if (self->ruleset) return 0;
    PyErr_SetString(PyExc_RuntimeError, "the state was never initialized (GameState(ruleset, seed) does that)");
    return -1;
}

/* ------------------------------------------------------------------ checked readers of Python values */

static int read_int(PyObject *o, long low, long high, const char *what, long *out) {
    long x = PyLong_AsLong(o);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (x < low || x > high) {
        PyErr_Format(PyExc_ValueError, "%s must be %ld..%ld, not %ld", what, low, high, x);
        return -1;
    }
    *out = x;
    return 0;
}

/* A sequence of faces as a mask (no face twice); with `order` the faces in order too. */
static int read_faces(PyObject *seq, const char *what, uint64_t *mask, uint8_t *order, int *n) {
    PyObject *fast = PySequence_Fast(seq, "a list of faces is needed");
    if (!fast) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    if (len > CNF) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s holds more than %d cards", what, CNF);
        return -1;
    }
    uint64_t m = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        long f;
        if (read_int(PySequence_Fast_GET_ITEM(fast, i), 0, CNF - 1, what, &f) < 0) {
            Py_DECREF(fast);
            return -1;
        }
        if (m & bit((int)f)) {
            Py_DECREF(fast);
            PyErr_Format(PyExc_ValueError, "%s names a card twice", what);
            return -1;
        }
        m |= bit((int)f);
        if (order) order[i] = (uint8_t)f;
    }
    Py_DECREF(fast);
    *mask = m;
    if (n) *n = (int)len;
    return 0;
}

static int read_rules(CRules *rs, PyObject *flags) {
    long v[9];
    static const long low[9] = {0, 0, 0, 1, -1, 0, 1, -1, 1};
    static const long high[9] = {1, 1, 1, CMAXV, CNF, 1, 1000000, CMAX_ROUNDS, CMAX_ROUNDS};
    if (!PyTuple_Check(flags) || PyTuple_GET_SIZE(flags) != 9) {
        PyErr_SetString(PyExc_TypeError, "the ruleset's flags are a tuple of 9 ints (cstate._flags)");
        return -1;
    }
    for (int i = 0; i < 9; i++)
        if (read_int(PyTuple_GET_ITEM(flags, i), low[i], high[i], "a ruleset flag", &v[i]) < 0) return -1;
    rs->gather = (int32_t)v[0];
    rs->court_all = (int32_t)v[1];
    rs->sweeps_on = (int32_t)v[2];
    rs->sum_build_max = (int32_t)v[3];
    rs->increase_max = (int32_t)v[4];
    rs->trail_with_build = (int32_t)v[5];
    rs->target = (int32_t)v[6];
    rs->rounds = (int32_t)v[7];
    rs->max_rounds = (int32_t)v[8];
    return 0;
}

/* _init(ruleset, flags, seed): the rules of this state (flags: cstate._flags(ruleset)) and its seed or None. */
static PyObject *Core_init_(Core *self, PyObject *args) {
    PyObject *ruleset, *flags, *seed;
    if (!PyArg_ParseTuple(args, "OO!O", &ruleset, &PyTuple_Type, &flags, &seed)) return NULL;
    CRules rs;
    if (read_rules(&rs, flags) < 0) return NULL;
    uint64_t s = 0;
    if (seed != Py_None) {
        s = PyLong_AsUnsignedLongLong(seed);
        if (s == (uint64_t)-1 && PyErr_Occurred()) return NULL;
    }
    self->g.rs = rs;
    self->g.seed = s;
    self->g.has_seed = seed != Py_None;
    Py_INCREF(ruleset);
    Py_XSETREF(self->ruleset, ruleset);
    core_changed(self);
    Py_RETURN_NONE;
}

/* _load(hands, loose, builds, captured, sweeps, last_capturer, stock, round, scores, sheets, to_move): a
 * position read and checked by position.py (or a view's), as plain ints and tuples. */
static PyObject *Core_load(Core *self, PyObject *args) {
    PyObject *hands, *loose, *builds, *captured, *sweeps, *lc, *stock, *round_, *scores, *sheets, *to_move;
    if (need_init(self) < 0) return NULL;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOO", &hands, &loose, &builds, &captured, &sweeps, &lc, &stock, &round_,
                          &scores, &sheets, &to_move))
        return NULL;
    CG g = self->g; /* filled, then copied in whole: a refusal leaves the state as it was */
    uint64_t all = 0, m;
    long x;
    for (int s = 0; s < 2; s++) {
        PyObject *seqs[2] = {hands, captured};
        for (int k = 0; k < 2; k++) {
            if (!PySequence_Check(seqs[k]) || PySequence_Size(seqs[k]) != 2) {
                PyErr_SetString(PyExc_ValueError, "hands and captured are pairs");
                return NULL;
            }
            PyObject *item = PySequence_GetItem(seqs[k], s);
            if (!item) return NULL;
            int r = read_faces(item, k ? "captured" : "a hand", &m, NULL, NULL);
            Py_DECREF(item);
            if (r < 0) return NULL;
            if (m & all) goto twice;
            all |= m;
            if (k)
                g.captured[s] = m;
            else
                g.hand[s] = m;
        }
    }
    if (read_faces(loose, "loose", &m, NULL, NULL) < 0) return NULL;
    if (m & all) goto twice;
    all |= m;
    g.loose = m;
    int n;
    uint8_t order[CNF];
    if (read_faces(stock, "stock", &m, order, &n) < 0) return NULL;
    if (m & all) goto twice;
    all |= m;
    memcpy(g.stock, order, (size_t)n);
    g.nstock = n;
    PyObject *fast = PySequence_Fast(builds, "builds are a list of (value, owner, faces)");
    if (!fast) return NULL;
    Py_ssize_t nb = PySequence_Fast_GET_SIZE(fast);
    if (nb > CMAXB) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "more than %d builds", CMAXB);
        return NULL;
    }
    g.nb = 0;
    for (Py_ssize_t i = 0; i < nb; i++) {
        PyObject *b = PySequence_Fast_GET_ITEM(fast, i);
        long value, owner;
        if (!PyTuple_Check(b) || PyTuple_GET_SIZE(b) != 3 ||
            read_int(PyTuple_GET_ITEM(b, 0), 1, CMAXV, "a build's value", &value) < 0 ||
            read_int(PyTuple_GET_ITEM(b, 1), 0, 1, "a build's owner", &owner) < 0 ||
            read_faces(PyTuple_GET_ITEM(b, 2), "a build", &m, NULL, NULL) < 0) {
            Py_DECREF(fast);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a build is (value, owner, faces)");
            return NULL;
        }
        if (popcount64(m) < 2 || (m & CT.court_mask) || (m & all)) {
            Py_DECREF(fast);
            if (m & all) goto twice;
            PyErr_SetString(PyExc_ValueError, "a build holds two numeral cards at least");
            return NULL;
        }
        all |= m;
        CBuild cb = {m, (int8_t)value, (int8_t)owner};
        int at = g.nb; /* sorted as the reference sorts its tuples: value, owner, then the (disjoint) cards */
        while (at > 0 && (g.b[at - 1].value > cb.value ||
                          (g.b[at - 1].value == cb.value &&
                           (g.b[at - 1].owner > cb.owner ||
                            (g.b[at - 1].owner == cb.owner && ctz64(g.b[at - 1].cards) > ctz64(cb.cards)))))) {
            g.b[at] = g.b[at - 1];
            at--;
        }
        g.b[at] = cb;
        g.nb++;
    }
    Py_DECREF(fast);
    for (int s = 0; s < 2; s++) {
        PyObject *pairs[2] = {sweeps, scores};
        for (int k = 0; k < 2; k++) {
            if (!PySequence_Check(pairs[k]) || PySequence_Size(pairs[k]) != 2) {
                PyErr_SetString(PyExc_ValueError, "sweeps and scores are pairs");
                return NULL;
            }
            PyObject *item = PySequence_GetItem(pairs[k], s);
            if (!item) return NULL;
            int r = read_int(item, 0, k ? 100000000L : CT.max_sweeps, k ? "a score" : "a sweep count", &x);
            Py_DECREF(item);
            if (r < 0) return NULL;
            if (k)
                g.scores[s] = x;
            else
                g.sweeps[s] = (int32_t)x;
        }
    }
    if (lc == Py_None)
        g.last_capturer = -1;
    else if (read_int(lc, 0, 1, "last_capturer", &x) < 0)
        return NULL;
    else
        g.last_capturer = (int32_t)x;
    if (read_int(round_, 1, g.rs.max_rounds, "round", &x) < 0) return NULL;
    g.round = (int32_t)x;
    if (read_int(to_move, 0, 1, "to_move", &x) < 0) return NULL;
    g.to_move = (int32_t)x;
    fast = PySequence_Fast(sheets, "sheets are a list of pairs of 7 ints");
    if (!fast) return NULL;
    Py_ssize_t ns = PySequence_Fast_GET_SIZE(fast);
    if (ns > g.round) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "more sheets than rounds");
        return NULL;
    }
    for (Py_ssize_t r = 0; r < ns; r++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(fast, r);
        for (int s = 0; s < 2; s++) {
            PyObject *sheet = PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2 ? PyTuple_GET_ITEM(pair, s) : NULL;
            if (!sheet || !PyTuple_Check(sheet) || PyTuple_GET_SIZE(sheet) != CN_SHEET) {
                Py_DECREF(fast);
                PyErr_SetString(PyExc_ValueError, "a round's sheets are a pair of 7-tuples");
                return NULL;
            }
            for (int k = 0; k < CN_SHEET; k++) {
                if (read_int(PyTuple_GET_ITEM(sheet, k), 0, 1000, "a sheet item", &x) < 0) {
                    Py_DECREF(fast);
                    return NULL;
                }
                g.sheets[r][s][k] = (int32_t)x;
            }
        }
    }
    Py_DECREF(fast);
    g.nsheets = (int32_t)ns;
    g.last_player = g.last_id = -1;
    memcpy(&self->g, &g, CG_USED(&g));
    core_changed(self);
    Py_CLEAR(self->last_move_obj);
    Py_RETURN_NONE;
twice:
    PyErr_SetString(PyExc_ValueError, "a card is in two places");
    return NULL;
}

static PyObject *Core_start_game(Core *self, PyObject *unused) {
    if (need_init(self) < 0) return NULL;
    int has = self->g.has_seed;
    casino_new_game(&self->g, self->g.seed);
    self->g.has_seed = has;
    core_changed(self);
    Py_CLEAR(self->last_move_obj);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ reading */

static PyObject *faces_list(uint64_t m) {
    PyObject *l = PyList_New(popcount64(m));
    if (!l) return NULL;
    for (int i = 0; m; m &= m - 1, i++) {
        PyObject *f = PyLong_FromLong(ctz64(m));
        if (!f) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, i, f);
    }
    return l;
}

static PyObject *faces_tuple(uint64_t m) {
    PyObject *l = faces_list(m);
    if (!l) return NULL;
    PyObject *t = PyList_AsTuple(l);
    Py_DECREF(l);
    return t;
}

static PyObject *pair_of(PyObject *a, PyObject *b) {
    if (!a || !b) {
        Py_XDECREF(a);
        Py_XDECREF(b);
        return NULL;
    }
    PyObject *l = PyList_New(2);
    if (!l) {
        Py_DECREF(a);
        Py_DECREF(b);
        return NULL;
    }
    PyList_SET_ITEM(l, 0, a);
    PyList_SET_ITEM(l, 1, b);
    return l;
}

static PyObject *get_to_move(Core *self, void *c) { return PyLong_FromLong(self->g.to_move); }
static PyObject *get_round(Core *self, void *c) { return PyLong_FromLong(self->g.round); }
static PyObject *get_over(Core *self, void *c) { return PyBool_FromLong(!self->g.hand[0] && !self->g.hand[1]); }
static PyObject *get_dealer(Core *self, void *c) { return PyLong_FromLong(self->g.round % 2); }
static PyObject *get_seed(Core *self, void *c) {
    if (!self->g.has_seed) Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(self->g.seed);
}
static PyObject *get_ruleset(Core *self, void *c) {
    if (need_init(self) < 0) return NULL;
    Py_INCREF(self->ruleset);
    return self->ruleset;
}
static PyObject *get_hands(Core *self, void *c) {
    return pair_of(faces_list(self->g.hand[0]), faces_list(self->g.hand[1]));
}
static PyObject *get_loose(Core *self, void *c) { return faces_list(self->g.loose); }
static PyObject *get_captured(Core *self, void *c) {
    return pair_of(faces_list(self->g.captured[0]), faces_list(self->g.captured[1]));
}
static PyObject *get_sweeps(Core *self, void *c) {
    return pair_of(PyLong_FromLong(self->g.sweeps[0]), PyLong_FromLong(self->g.sweeps[1]));
}
static PyObject *get_last_capturer(Core *self, void *c) {
    if (self->g.last_capturer < 0) Py_RETURN_NONE;
    return PyLong_FromLong(self->g.last_capturer);
}
static PyObject *get_stock(Core *self, void *c) {
    PyObject *l = PyList_New(self->g.nstock);
    if (!l) return NULL;
    for (int i = 0; i < self->g.nstock; i++) {
        PyObject *f = PyLong_FromLong(self->g.stock[i]);
        if (!f) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, i, f);
    }
    return l;
}

static PyObject *sheet_dict(const int32_t *sheet) {
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    for (int k = 0; k < CN_SHEET; k++) {
        PyObject *v = PyLong_FromLong(sheet[k]);
        if (!v || PyDict_SetItem(d, PyTuple_GET_ITEM(SHEET_KEYS, k), v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(v);
    }
    return d;
}

static PyObject *get_sheets(Core *self, void *c) {
    PyObject *l = PyList_New(self->g.nsheets);
    if (!l) return NULL;
    for (int r = 0; r < self->g.nsheets; r++) {
        PyObject *a = sheet_dict(self->g.sheets[r][0]), *b = a ? sheet_dict(self->g.sheets[r][1]) : NULL;
        PyObject *t = b ? PyTuple_Pack(2, a, b) : NULL;
        Py_XDECREF(a);
        Py_XDECREF(b);
        if (!t) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, r, t);
    }
    return l;
}

static PyObject *get_last_move(Core *self, void *c) {
    if (self->last_move_obj) {
        Py_INCREF(self->last_move_obj);
        return self->last_move_obj;
    }
    if (self->g.last_player < 0 || self->g.last_id < 0 || self->g.last_id >= CT.num_ids) Py_RETURN_NONE;
    return Py_BuildValue("(iO)", self->g.last_player, PyTuple_GET_ITEM(MOVES_T, self->g.last_id));
}

static PyObject *get_plans_cache(Core *self, void *c) {
    if (!self->plans) Py_RETURN_NONE;
    Py_INCREF(self->plans);
    return self->plans;
}

static int set_plans_cache(Core *self, PyObject *v, void *c) {
    if (v == Py_None) v = NULL;
    Py_XINCREF(v);
    Py_XSETREF(self->plans, v);
    return 0;
}

static PyObject *Core_scores(Core *self, PyObject *unused) {
    return Py_BuildValue("(LL)", (long long)self->g.scores[0], (long long)self->g.scores[1]);
}

static PyObject *Core_stored_builds(Core *self, PyObject *unused) {
    PyObject *l = PyList_New(self->g.nb);
    if (!l) return NULL;
    for (int i = 0; i < self->g.nb; i++) {
        PyObject *cards = faces_tuple(self->g.b[i].cards);
        PyObject *t = cards ? Py_BuildValue("(iiN)", self->g.b[i].value, self->g.b[i].owner, cards) : NULL;
        if (!t) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, i, t);
    }
    return l;
}

static PyObject *Core_set_last_move(Core *self, PyObject *obj) {
    if (obj == Py_None) {
        Py_CLEAR(self->last_move_obj);
        self->g.last_player = self->g.last_id = -1;
    } else {
        Py_INCREF(obj);
        Py_XSETREF(self->last_move_obj, obj);
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ moves */

static int is_over(const Core *self) { return !self->g.hand[0] && !self->g.hand[1]; }

static PyObject *Core_legal_ids(Core *self, PyObject *unused) {
    if (need_init(self) < 0) return NULL;
    if (self->legal) {
        Py_INCREF(self->legal);
        return self->legal;
    }
    if (!self->g.rs.gather) {
        PyErr_SetString(PyExc_ValueError,
                        "under gather_all=False moves name what they take and have no ids; use legal_moves() (the "
                        "environments index the legal moves instead)");
        return NULL;
    }
    const CPlan *pl;
    int n = casino_plans(&self->g, &pl);
    if (n < 0) return NULL;
    if (n > CMAX_IDS) {
        PyErr_SetString(PyExc_RuntimeError, "more legal ids than move ids");
        return NULL;
    }
    /* copied before any Python object is made: a collection it may start can run Python code that generates
     * another position's plans into the same scratch */
    int ids[CMAX_IDS];
    for (int i = 0; i < n; i++) ids[i] = pl[i].id;
    if (casino_failpoint()) return NULL;
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *x = PyLong_FromLong(ids[i]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    Py_INCREF(t);
    self->legal = t;
    return t;
}

/* _raw_plans(): every legal move's plan in the core's order, as (id or -1, kind, card, loose faces, build
 * indices, base index or -1, value or -1); cstate.py names and orders them. */
static PyObject *Core_raw_plans(Core *self, PyObject *unused) {
    if (need_init(self) < 0) return NULL;
    const CPlan *scratch;
    int n = casino_plans(&self->g, &scratch);
    if (n < 0) return NULL;
    /* copied before any Python object is made (see legal_ids) */
    CPlan *pl = PyMem_Malloc(sizeof(CPlan) * (size_t)(n ? n : 1));
    if (!pl) return PyErr_NoMemory();
    memcpy(pl, scratch, sizeof(CPlan) * (size_t)n);
    PyObject *l = casino_failpoint() ? NULL : PyList_New(n);
    if (!l) {
        PyMem_Free(pl);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        PyObject *loose = faces_tuple(pl[i].loose);
        PyObject *bs = loose ? PyTuple_New(popcount64(pl[i].builds)) : NULL;
        if (!bs) {
            Py_XDECREF(loose);
            Py_DECREF(l);
            PyMem_Free(pl);
            return NULL;
        }
        int k = 0;
        for (uint32_t m = pl[i].builds; m; m &= m - 1, k++) {
            PyObject *x = PyLong_FromLong(ctz64(m));
            if (!x) {
                Py_DECREF(loose);
                Py_DECREF(bs);
                Py_DECREF(l);
                PyMem_Free(pl);
                return NULL;
            }
            PyTuple_SET_ITEM(bs, k, x);
        }
        PyObject *t = Py_BuildValue("(iiiNNii)", pl[i].id, pl[i].kind, pl[i].card, loose, bs, pl[i].base, pl[i].value);
        if (!t) {
            Py_DECREF(l);
            PyMem_Free(pl);
            return NULL;
        }
        PyList_SET_ITEM(l, i, t);
    }
    PyMem_Free(pl);
    return l;
}

static int play_plan(Core *self, const CPlan *pl) {
    CPlan copy = *pl; /* the plans live in the thread's scratch, which the move's deal may not touch, but be sure */
    if (casino_apply(&self->g, &copy) < 0) return -1;
    core_changed(self);
    Py_CLEAR(self->last_move_obj);
    return 0;
}

/* _play_plan(i, n): play the i-th of the n plans _raw_plans() gave (n is checked: the position has not changed). */
static PyObject *Core_play_plan(Core *self, PyObject *args) {
    int i, expect;
    if (need_init(self) < 0 || !PyArg_ParseTuple(args, "ii", &i, &expect)) return NULL;
    const CPlan *pl;
    int n = casino_plans(&self->g, &pl);
    if (n < 0) return NULL;
    if (n != expect || i < 0 || i >= n) {
        PyErr_SetString(PyExc_RuntimeError, "the plan table no longer fits the position");
        return NULL;
    }
    if (play_plan(self, &pl[i]) < 0) return NULL;
    Py_RETURN_NONE;
}

/* _play_id(id): play the legal move with that id; False (nothing played) when it is not legal here. */
static PyObject *Core_play_id(Core *self, PyObject *arg) {
    if (need_init(self) < 0) return NULL;
    long id = PyLong_AsLong(arg);
    if (id == -1 && PyErr_Occurred()) return NULL;
    if (is_over(self) || id < 0 || id >= CT.num_ids) Py_RETURN_FALSE;
    const CPlan *pl;
    int n = casino_plans(&self->g, &pl);
    if (n < 0) return NULL;
    for (int i = 0; i < n; i++)
        if (pl[i].id == id) {
            if (play_plan(self, &pl[i]) < 0) return NULL;
            Py_RETURN_TRUE;
        }
    Py_RETURN_FALSE;
}

static Core *core_copy(Core *self) {
    PyTypeObject *tp = Py_TYPE(self);
    if (casino_failpoint()) return NULL;
    Core *o = (Core *)tp->tp_alloc(tp, 0);
    if (!o) return NULL;
    memcpy(&o->g, &self->g, CG_USED(&self->g));
    Py_XINCREF(self->ruleset);
    o->ruleset = self->ruleset;
    Py_XINCREF(self->legal);
    o->legal = self->legal; /* immutable tuple */
    Py_XINCREF(self->plans);
    o->plans = self->plans; /* a dict nobody changes: rebuilt, not edited, after a move */
    Py_XINCREF(self->last_move_obj);
    o->last_move_obj = self->last_move_obj;
    return o;
}

static PyObject *Core_copy(Core *self, PyObject *unused) {
    if (need_init(self) < 0) return NULL;
    return (PyObject *)core_copy(self);
}

/* _write_obs(seat, out) and _write_mask(out): the GameOps writers into numpy arrays (tests compare them with
 * the Python encoder). */
static PyObject *Core_write_obs(Core *self, PyObject *args) {
    int seat;
    PyObject *out;
    if (need_init(self) < 0 || !PyArg_ParseTuple(args, "iO", &seat, &out)) return NULL;
    Py_buffer view;
    if (get_buffer(out, &view, (Py_ssize_t)CT.obs_size * 4, "f", "out") < 0) return NULL;
    int r = casino_write_obs(&self->g, seat, view.buf);
    PyBuffer_Release(&view);
    if (r < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Core_write_mask(Core *self, PyObject *out) {
    if (need_init(self) < 0) return NULL;
    Py_buffer view;
    if (get_buffer(out, &view, CT.num_ids, "B", "out") < 0) return NULL;
    int r = casino_write_mask(&self->g, view.buf);
    PyBuffer_Release(&view);
    if (r < 0) return NULL;
    return PyLong_FromLong(r);
}

static PyMethodDef Core_methods[] = {
    {"_init", (PyCFunction)Core_init_, METH_VARARGS, "_init(ruleset, flags, seed): the rules and the seed."},
    {"_load_raw", (PyCFunction)Core_load, METH_VARARGS,
     "_load_raw(...): a checked position (position.py reads it; sheets as 7-tuples in SHEET_KEYS order)."},
    {"_start_game", (PyCFunction)Core_start_game, METH_NOARGS, "Deal round 1 from the seed (new_game)."},
    {"scores", (PyCFunction)Core_scores, METH_NOARGS, "The game totals by seat: the points of the finished rounds."},
    {"_stored_builds", (PyCFunction)Core_stored_builds, METH_NOARGS, "The builds as (value, owner, faces)."},
    {"_set_last_move", (PyCFunction)Core_set_last_move, METH_O, "Name the last move ((seat, Move) or None)."},
    {"legal_ids", (PyCFunction)Core_legal_ids, METH_NOARGS,
     "The ids of the legal moves, ascending (the environments' actions); only under gather_all=True."},
    {"_raw_plans", (PyCFunction)Core_raw_plans, METH_NOARGS, "The legal moves' plans as plain tuples."},
    {"_play_plan", (PyCFunction)Core_play_plan, METH_VARARGS, "Play the i-th of the n raw plans."},
    {"_play_id", (PyCFunction)Core_play_id, METH_O, "Play a legal move id; False when it is not legal here."},
    {"copy", (PyCFunction)Core_copy, METH_NOARGS, "An independent copy (its moves do not touch this state)."},
    {"_write_obs", (PyCFunction)Core_write_obs, METH_VARARGS, "The C observation writer into a float32 array."},
    {"_write_mask", (PyCFunction)Core_write_mask, METH_O, "The C legal-mask writer into a uint8 array."},
    {NULL}};

static PyGetSetDef Core_getset[] = {
    {"to_move", (getter)get_to_move, NULL, "The seat to move (0 or 1).", NULL},
    {"round", (getter)get_round, NULL, "The round being played (1, 2, ...; the last one once over).", NULL},
    {"over", (getter)get_over, NULL, "True once the game has ended: both hands empty.", NULL},
    {"dealer", (getter)get_dealer, NULL, "The dealer of this round (seat 1 deals odd rounds).", NULL},
    {"seed", (getter)get_seed, NULL, "The seed every round's deck is shuffled from (None: dealt on from 0).", NULL},
    {"ruleset", (getter)get_ruleset, NULL, "The rules of this game.", NULL},
    {"hands", (getter)get_hands, NULL, "Both hands as sorted faces.", NULL},
    {"loose", (getter)get_loose, NULL, "The loose cards on the table, sorted faces.", NULL},
    {"captured", (getter)get_captured, NULL, "Each seat's captured cards this round, sorted faces.", NULL},
    {"sweeps", (getter)get_sweeps, NULL, "Each seat's sweeps this round.", NULL},
    {"last_capturer", (getter)get_last_capturer, NULL, "The seat that captured last this round, or None.", NULL},
    {"stock", (getter)get_stock, NULL, "The cards still to be dealt this round, in dealing order.", NULL},
    {"sheets", (getter)get_sheets, NULL, "The score sheets of the finished rounds.", NULL},
    {"last_move", (getter)get_last_move, NULL, "(seat, move) of the last move played, or None.", NULL},
    {"_plans_cache", (getter)get_plans_cache, (setter)set_plans_cache, "cstate.py's plan table of this position.",
     NULL},
    {NULL}};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mulle_env.casino._core.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A Casino position on the compiled core; cstate.GameState is the public class.",
    .tp_new = Core_new,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_traverse = (traverseproc)Core_traverse,
    .tp_clear = (inquiry)Core_clear,
    .tp_methods = Core_methods,
    .tp_getset = Core_getset,
};

/* ------------------------------------------------------------------ configure() */

static int tuple_ints(PyObject *t, int n, long low, long high, const char *what, int *out) {
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != n) {
        PyErr_Format(PyExc_ImportError, "configure: %s must be a tuple of %d ints: a stale build; rebuild it with "
                                        "pip install -e .", what, n);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        long x;
        if (read_int(PyTuple_GET_ITEM(t, i), low, high, what, &x) < 0) return -1;
        out[i] = (int)x;
    }
    return 0;
}

/* configure(abi, cards, moves, constants, layout, scales, objects): the Python definitions (cstate._configure). */
static PyObject *mod_configure(PyObject *mod, PyObject *args) {
    int abi;
    PyObject *cards, *moves, *consts, *layout, *scales, *objects;
    if (!PyArg_ParseTuple(args, "iO!O!O!O!O!O!", &abi, &PyTuple_Type, &cards, &PyTuple_Type, &moves, &PyTuple_Type,
                          &consts, &PyTuple_Type, &layout, &PyTuple_Type, &scales, &PyTuple_Type, &objects))
        return NULL;
    if (abi != CASINO_CORE_ABI) {
        PyErr_Format(PyExc_ImportError, "configure: ABI %d, the core speaks %d: a stale build; rebuild it with pip "
                                        "install -e .", abi, CASINO_CORE_ABI);
        return NULL;
    }
    static CTables t; /* filled, then copied in whole: a refusal leaves the core unconfigured */
    memset(&t, 0, sizeof t);
    int value[CNF], points[CNF], rank[CNF], spade[CNF], court[CNF], ace[CNF];
    int *tabs[6] = {value, points, rank, spade, court, ace};
    static const long thigh[6] = {CMAXV, 3, 12, 1, 1, 1};
    if (!PyTuple_Check(cards) || PyTuple_GET_SIZE(cards) != 6) {
        PyErr_SetString(PyExc_ImportError, "configure: cards are 6 tables: a stale build; rebuild it with pip "
                                           "install -e .");
        return NULL;
    }
    for (int k = 0; k < 6; k++)
        if (tuple_ints(PyTuple_GET_ITEM(cards, k), CNF, 0, thigh[k], "a card table", tabs[k]) < 0) return NULL;
    for (int f = 0; f < CNF; f++) {
        t.value[f] = value[f];
        t.points[f] = points[f];
        t.rank[f] = rank[f];
        if (spade[f]) t.spade_mask |= bit(f);
        if (court[f]) t.court_mask |= bit(f);
        if (ace[f]) t.ace_mask |= bit(f);
        if (!court[f]) t.numeral_mask |= bit(f);
        if (court[f] != (value[f] == 0)) {
            PyErr_SetString(PyExc_ImportError, "configure: a court card has no value and every other card one; the "
                                               "core assumes it: a stale build; rebuild it with pip install -e .");
            return NULL;
        }
    }
    Py_ssize_t nm = PyTuple_GET_SIZE(moves);
    if (nm > CMAX_IDS || nm > INT16_MAX) {
        PyErr_SetString(PyExc_ImportError, "configure: more move ids than the core holds: rebuild it");
        return NULL;
    }
    t.num_ids = (int)nm;
    for (int f = 0; f < CNF; f++) {
        t.capture_id[f] = t.trail_id[f] = -1;
        for (int x = 0; x < CNF; x++) t.capture_take_id[f][x] = -1;
        for (int v = 0; v <= CMAXV; v++) t.build_id[f][v] = t.increase_id[f][v] = -1;
    }
    for (int id = 0; id < t.num_ids; id++) {
        int m[4]; /* kind, card, value (-1), take (-1) */
        if (tuple_ints(PyTuple_GET_ITEM(moves, id), 4, -1, CNF - 1, "a move", m) < 0) return NULL;
        int kind = m[0], c = m[1], v = m[2], tk = m[3];
        if (kind < 0 || kind > CK_TRAIL || c < 0 || (kind == CK_BUILD || kind == CK_INCREASE ? v < 1 || v > CMAXV : 0)) {
            PyErr_SetString(PyExc_ImportError, "configure: a move the core cannot hold: a stale build; rebuild it");
            return NULL;
        }
        t.m_kind[id] = (int8_t)kind;
        t.m_card[id] = (int8_t)c;
        if (kind == CK_CAPTURE && tk < 0) t.capture_id[c] = id;
        if (kind == CK_CAPTURE && tk >= 0) t.capture_take_id[c][tk] = id;
        if (kind == CK_BUILD) t.build_id[c][v] = id;
        if (kind == CK_INCREASE) t.increase_id[c][v] = id;
        if (kind == CK_TRAIL) t.trail_id[c] = id;
    }
    for (int f = 0; f < CNF; f++)
        if (t.capture_id[f] < 0 || t.trail_id[f] < 0) {
            PyErr_SetString(PyExc_ImportError, "configure: a card without a capture or trail id: rebuild the core");
            return NULL;
        }
    int c[12];
    if (tuple_ints(consts, 12, 0, 1 << 30, "the constants", c) < 0) return NULL;
    t.hand_deal = c[0];
    t.table_deal = c[1];
    t.cards_to_win = c[2];
    t.spades_to_win = c[3];
    t.cards_points = c[4];
    t.spades_points = c[5];
    t.big = c[6];
    t.little = c[7];
    t.max_sweeps = c[8];
    t.max_rounds = c[9];
    t.deal_stream = ((uint64_t)(unsigned)c[10] << 30) | (uint64_t)(unsigned)c[11];
    if (t.big >= CNF || t.little >= CNF || 2 * t.hand_deal + t.table_deal > CNF || t.max_rounds > CMAX_ROUNDS ||
        t.hand_deal < 1) {
        PyErr_SetString(PyExc_ImportError, "configure: constants the core cannot hold: a stale build; rebuild it");
        return NULL;
    }
    /* layout: obs_size, the 7 face blocks' starts, builds start, build stride, my_race, opp_race, scalars, rules
     * (the names and their order are checked by cstate.py against the ones this module exports) */
    int lay[14];
    if (tuple_ints(layout, 14, 0, COBS_MAX, "the observation layout", lay) < 0) return NULL;
    t.obs_size = lay[0];
    for (int k = 0; k < CN_FACE_BLOCKS; k++) t.face_at[k] = lay[1 + k];
    t.builds_at = lay[8];
    t.build_stride = lay[9];
    t.my_race_at = lay[10];
    t.opp_race_at = lay[11];
    t.scalars_at = lay[12];
    t.rules_at = lay[13];
    if (t.build_stride != CN_BUILD_FEATURES || t.my_race_at + CN_RACE > t.obs_size || t.opp_race_at + CN_RACE > t.obs_size ||
        t.rules_at + CN_RULES > t.obs_size || t.scalars_at + CN_SCALARS > t.obs_size ||
        t.builds_at + CMAXV * CN_BUILD_FEATURES > t.obs_size) {
        PyErr_SetString(PyExc_ImportError, "configure: an observation layout the writer does not know: a stale "
                                           "build; rebuild it with pip install -e .");
        return NULL;
    }
    for (int k = 0; k < CN_FACE_BLOCKS; k++)
        if (t.face_at[k] + CNF > t.obs_size) {
            PyErr_SetString(PyExc_ImportError, "configure: a face block outside the observation: rebuild the core");
            return NULL;
        }
    double *sc[12] = {&t.score_scale, &t.s_build_cards, &t.s_cards, &t.s_spades, &t.s_aces, &t.s_sweeps,
                      &t.s_hand,      &t.s_stock,       &t.s_sum_build, &t.s_increase, &t.s_target, &t.s_rounds};
    if (PyTuple_GET_SIZE(scales) != 12) {
        PyErr_SetString(PyExc_ImportError, "configure: 12 scales: a stale build; rebuild it with pip install -e .");
        return NULL;
    }
    for (int k = 0; k < 12; k++) {
        double x = PyFloat_AsDouble(PyTuple_GET_ITEM(scales, k));
        if (x == -1.0 && PyErr_Occurred()) return NULL;
        if (!(x > 0)) {
            PyErr_SetString(PyExc_ImportError, "configure: scales are positive numbers");
            return NULL;
        }
        *sc[k] = x;
    }
    PyObject *moves_t, *sheet_keys;
    if (!PyArg_ParseTuple(objects, "O!O!", &PyTuple_Type, &moves_t, &PyTuple_Type, &sheet_keys)) return NULL;
    if (PyTuple_GET_SIZE(moves_t) != nm || PyTuple_GET_SIZE(sheet_keys) != CN_SHEET) {
        PyErr_SetString(PyExc_ImportError, "configure: MOVES and SHEET_KEYS do not fit the tables: rebuild the core");
        return NULL;
    }
    Py_INCREF(moves_t);
    Py_XSETREF(MOVES_T, moves_t);
    Py_INCREF(sheet_keys);
    Py_XSETREF(SHEET_KEYS, sheet_keys);
    t.configured = 1;
    CT = t;
    Py_RETURN_NONE;
}

/* derive_seed(seed, a, b) and shuffled(seed): the deal's streams in C, for tests against rng.py. */
static PyObject *mod_derive_seed(PyObject *mod, PyObject *args) {
    unsigned long long seed, a, b;
    if (!PyArg_ParseTuple(args, "KKK", &seed, &a, &b)) return NULL;
    return PyLong_FromUnsignedLongLong(casino_derive_seed(seed, a, b));
}

static PyObject *mod_shuffled(PyObject *mod, PyObject *arg) {
    unsigned long long seed = PyLong_AsUnsignedLongLong(arg);
    if (seed == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    uint8_t deck[CNF];
    for (int i = 0; i < CNF; i++) deck[i] = (uint8_t)i;
    casino_shuffle(deck, CNF, seed);
    PyObject *l = PyList_New(CNF);
    if (!l) return NULL;
    for (int i = 0; i < CNF; i++) PyList_SET_ITEM(l, i, PyLong_FromLong(deck[i]));
    return l;
}

static PyMethodDef mod_methods[] = {
    {"configure", mod_configure, METH_VARARGS,
     "configure(abi, cards, moves, constants, layout, scales, objects): the Python definitions (cstate.py calls it)."},
    {"derive_seed", mod_derive_seed, METH_VARARGS, "derive_seed(seed, a, b): rng.derive_seed(seed, a, b) in C."},
    {"shuffled", mod_shuffled, METH_O, "shuffled(seed): rng.shuffled(range(52), seed) in C."},
    {NULL}};

/* ------------------------------------------------------------------ GameOps (game_ops.h) */

static void *ops_state(PyObject *obj) {
    if (!PyObject_TypeCheck(obj, &CoreType)) {
        PyErr_Format(PyExc_TypeError, "a Casino state of the compiled core is needed, not %.100s (MULLE_ENGINE "
                                      "decides the backend of every compiled part)", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    if (need_init((Core *)obj) < 0) return NULL;
    return &((Core *)obj)->g;
}

static void ops_changed(PyObject *obj) {
    core_changed((Core *)obj);
    Py_CLEAR(((Core *)obj)->last_move_obj);
}

static int ops_ids_ok(PyObject *obj) {
    CG *g = ops_state(obj);
    return g ? g->rs.gather != 0 : -1;
}

static int ops_redeal(PyObject *obj, uint64_t seed) {
    CG *g = ops_state(obj);
    if (!g) return -1;
    casino_new_game(g, seed);
    ops_changed(obj);
    return 0;
}

static int ops_over(const void *g) { return !((const CG *)g)->hand[0] && !((const CG *)g)->hand[1]; }
static int ops_to_move(const void *g) { return ((const CG *)g)->to_move; }
static int ops_legal_ids(const void *g, int *out) { return casino_legal_ids(g, out); }
static int ops_apply_id(void *g, int id) { return casino_apply_id(g, id); }
static int ops_write_obs(const void *g, int seat, float *out) { return casino_write_obs(g, seat, out); }
static int ops_write_mask(const void *g, uint8_t *mask) { return casino_write_mask(g, mask); }
static void ops_totals(const void *g, int64_t out[2]) {
    out[0] = ((const CG *)g)->scores[0];
    out[1] = ((const CG *)g)->scores[1];
}
static void *ops_thread_new(void) { return casino_thread_new(); }
static void ops_thread_free(void *t) { casino_thread_free(t); }
static void ops_thread_enter(void *t) { casino_thread_enter(t); }
static int ops_thread_error(void *t) { return casino_thread_error(t); }

/* The most legal ids of one gather_all=True position: per card its capture (or its court captures, one per
 * card of its rank), its new builds, its increases (one per build value) and its trail; bounded by the id
 * count, which is what an ids buffer is sized by. */
static GameOps OPS = {
    GAME_OPS_ABI, "casino", 0, 0, 0, ops_state, ops_changed, ops_ids_ok, ops_redeal, ops_over, ops_to_move,
    ops_legal_ids, ops_apply_id, ops_write_obs, ops_write_mask, ops_totals, ops_thread_new, ops_thread_free,
    ops_thread_enter, ops_thread_error, NULL /* fail_after: bound at import */,
};

static PyObject *mod_game_ops(PyObject *mod, PyObject *unused) {
    if (!CT.configured) {
        PyErr_SetString(PyExc_RuntimeError, "the Casino core is not configured (import mulle_env.casino.cstate)");
        return NULL;
    }
    OPS.num_ids = CT.num_ids;
    OPS.max_legal = CT.num_ids;
    OPS.obs_size = CT.obs_size;
    return PyCapsule_New(&OPS, CASINO_GAME_OPS_CAPSULE, NULL);
}

/* The names of what the observation writer writes, in its order: cstate.py refuses a layout that differs. */
static const char *const FACE_BLOCK_NAMES[CN_FACE_BLOCKS] = {"hand", "loose", "my_builds", "opp_builds",
                                                             "my_captured", "opp_captured", "unseen"};
static const char *const BUILD_FEATURE_NAMES[CN_BUILD_FEATURES] = {"mine", "theirs", "my_cards", "their_cards",
                                                                   "my_single", "their_single"};
static const char *const RACE_NAMES[CN_RACE] = {"cards", "spades", "aces", "big_casino", "little_casino", "sweeps"};
static const char *const SCALAR_NAMES[CN_SCALARS] = {
    "my_score", "opp_score", "round", "hand_size", "opponent_hand_size", "stock_size", "my_turn", "seat",
    "i_deal", "last_capturer_me", "last_capturer_opponent", "over"};
static const char *const RULE_NAMES[CN_RULES] = {"gather_all", "court_capture_all", "sweeps", "sum_build_max_card",
                                                 "increase_max_cards", "trail_with_build", "target_score", "rounds"};

static const char *const SHEET_ITEM_NAMES[CN_SHEET] = {"cards", "spades", "big_casino", "little_casino", "aces",
                                                      "sweeps", "total"};

static PyObject *name_tuple(const char *const *names, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *s = PyUnicode_FromString(names[i]);
        if (!s) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, s);
    }
    return t;
}

static struct PyModuleDef coremodule = {PyModuleDef_HEAD_INIT, "_core",
                                        "The compiled rules core of mulle_env.casino (see csrc/casino.h and "
                                        "cstate.py).",
                                        -1, mod_methods};

PyMODINIT_FUNC PyInit__core(void) {
    /* the allocation-failure hook is the Mulle core's: one counter for every compiled part */
    const MulleCoreAPI *api = mulle_core_import("mulle_env.casino._core");
    if (!api) return NULL;
    casino_fail_after = api->fail_after;
    casino_failpoint_hit = api->failpoint;
    OPS.fail_after = api->fail_after;
    if (PyType_Ready(&CoreType) < 0) return NULL;
    PyObject *m = PyModule_Create(&coremodule);
    if (!m) return NULL;
    Py_INCREF(&CoreType);
    if (PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0) {
        Py_DECREF(&CoreType);
        goto fail;
    }
    static PyMethodDef game_ops_def = {"_game_ops", mod_game_ops, METH_NOARGS,
                                       "The GameOps capsule (after configure()): cstate.GAME_OPS."};
    PyObject *fn = PyCFunction_New(&game_ops_def, NULL);
    if (!fn || PyModule_AddObject(m, "_game_ops", fn) < 0) {
        Py_XDECREF(fn);
        goto fail;
    }
    struct {
        const char *name;
        PyObject *value;
    } names[] = {{"FACE_BLOCKS", name_tuple(FACE_BLOCK_NAMES, CN_FACE_BLOCKS)},
                 {"BUILD_FEATURES", name_tuple(BUILD_FEATURE_NAMES, CN_BUILD_FEATURES)},
                 {"RACE_FEATURES", name_tuple(RACE_NAMES, CN_RACE)},
                 {"SCALAR_FEATURES", name_tuple(SCALAR_NAMES, CN_SCALARS)},
                 {"RULE_FEATURES", name_tuple(RULE_NAMES, CN_RULES)},
                 {"SHEET_KEYS", name_tuple(SHEET_ITEM_NAMES, CN_SHEET)}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!names[i].value || PyModule_AddObject(m, names[i].name, names[i].value) < 0) {
            Py_XDECREF(names[i].value);
            goto fail;
        }
    }
    if (PyModule_AddIntConstant(m, "ABI", CASINO_CORE_ABI) < 0 || PyModule_AddIntConstant(m, "MAX_IDS", CMAX_IDS) < 0 ||
        PyModule_AddIntConstant(m, "MAX_ROUNDS", CMAX_ROUNDS) < 0 || PyModule_AddIntConstant(m, "OBS_MAX", COBS_MAX) < 0 ||
        PyModule_AddIntConstant(m, "GAME_OPS_ABI", GAME_OPS_ABI) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
