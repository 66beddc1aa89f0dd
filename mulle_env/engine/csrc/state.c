/* The Python type Core: a position in a C struct, the base of cstate.GameState.
 *
 * Every public attribute is read-only and every read builds a fresh value (lists, a dict,
 * tuples), exactly as the Python reference's attributes behave: the only ways in are
 * `_load` (which GameState.from_dict, from_view and unpickling call after the Python side
 * has validated the position) and `_set_hand`, and both refuse anything that could make
 * the rules read or write outside their arrays (a face outside 0..51, more cards than a
 * state holds, a deal or set number outside the game, a count beyond the documented
 * limit). So no public call can crash the core: bad values are ValueErrors.
 */
#include "engine.h"

/* Counted Python object creation for the allocation-failure test (module.c). */
#define FAILING(expr) (core_failpoint() ? NULL : (expr))

/* Attribute and key names, interned once (core_type_init): a string made per read costs more than the read. */
static PyObject *S_ID, *S_CARD, *S_TAKING, *S_KIND, *S_ON, *S_ON_BUILD, *S_TO, *S_FLAGS[5], *S_SHEET[5];

static PyObject *pile_list(const Pile *p) {
    PyObject *l = FAILING(PyList_New(p->n));
    if (!l) return NULL;
    for (int i = 0; i < p->n; i++) {
        PyObject *x = ID_OBJS[p->c[i]]; /* the small ints 0..51 */
        Py_INCREF(x);
        PyList_SET_ITEM(l, i, x);
    }
    return l;
}

static PyObject *pile_cards(const Pile *p) {
    PyObject *t = FAILING(PyTuple_New(p->n));
    if (!t) return NULL;
    for (int i = 0; i < p->n; i++) {
        PyObject *c = PyTuple_GET_ITEM(CARDS, p->c[i]);
        Py_INCREF(c);
        PyTuple_SET_ITEM(t, i, c);
    }
    return t;
}

static PyObject *pair_list(const Pile *a, const Pile *b) {
    PyObject *x = pile_list(a), *y = x ? pile_list(b) : NULL;
    PyObject *l = y ? FAILING(PyList_New(2)) : NULL;
    if (!l) {
        Py_XDECREF(x);
        Py_XDECREF(y);
        return NULL;
    }
    PyList_SET_ITEM(l, 0, x);
    PyList_SET_ITEM(l, 1, y);
    return l;
}

static PyObject *int_pair(const int32_t *v) { return FAILING(Py_BuildValue("[ii]", (int)v[0], (int)v[1])); }

void core_changed(Core *self) {
    Py_CLEAR(self->legal);
    Py_CLEAR(self->public_);
}

/* The flags of a Ruleset into g. Rulesets are frozen, so the last one read is remembered by identity:
 * searches make thousands of states a decision, all under the same ruleset object. */
int read_ruleset(G *g, PyObject *rs) {
    static PyObject *last = NULL;
    static int32_t last_flags[5];
    if (rs != last) {
        int32_t flags[5];
        for (int i = 0; i < 5; i++) {
            PyObject *v = PyObject_GetAttr(rs, S_FLAGS[i]);
            if (!v) return -1;
            if (i < 4) {
                flags[i] = PyObject_IsTrue(v);
            } else {
                long n = PyLong_AsLong(v);
                flags[i] = n == -1 && PyErr_Occurred() ? -1 : (n < 1 || n > MAX_SETS ? -2 : (int32_t)n);
            }
            Py_DECREF(v);
            if (flags[i] == -1) return -1;
            if (flags[i] == -2) {
                PyErr_Format(PyExc_ValueError, "Ruleset.sets must be 1..%d", MAX_SETS);
                return -1;
            }
        }
        Py_INCREF(rs);
        Py_XSETREF(last, rs);
        memcpy(last_flags, flags, sizeof flags);
    }
    g->forced = last_flags[0], g->lock_every = last_flags[1], g->discard_only = last_flags[2];
    g->mulle_hand = last_flags[3], g->sets = last_flags[4];
    return 0;
}

static void g_reset(G *g) {
    memset(g, 0, offsetof(G, sheets));
    g->set_no = g->deal_no = 1;
    g->last_capturer = g->last_player = g->last_id = -1;
    g->sets = 2;
    g->forced = g->discard_only = 1;
    for (int v = 0; v <= MAXV; v++) g->bowner[v] = -1;
}

/* An empty position (no cards, no score sheet) under the Ruleset rs: what Core_init and core_redeal start from. */
static int g_fresh(G *g, PyObject *rs) {
    g_reset(g);
    g->nsheets = 0;
    return read_ruleset(g, rs);
}

static int need_configured(void) {
    if (T.configured) return 0;
    PyErr_SetString(PyExc_RuntimeError, "mulle_env.engine._core is not configured: import mulle_env.engine first");
    return -1;
}

static PyObject *Core_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    if (need_configured() < 0) return NULL;
    Core *self = (Core *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    g_reset(&self->g);
    return (PyObject *)self;
}

/* Core(ruleset=None, seed=None): an empty position (no cards) under `ruleset` (a Ruleset; None: the defaults). */
static int Core_init(Core *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"ruleset", "seed", NULL};
    PyObject *rs = Py_None, *seed = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO", kwlist, &rs, &seed)) return -1;
    if (seed != Py_None && (!PyLong_Check(seed) || PyBool_Check(seed))) {
        PyErr_Format(PyExc_ValueError, "seed must be an int or None, not %R", seed);
        return -1;
    }
    PyObject *made = NULL;
    if (rs == Py_None) {
        rs = made = PyObject_CallNoArgs(RULESET_CLS);
        if (!rs) return -1;
    } else if (!PyObject_TypeCheck(rs, (PyTypeObject *)RULESET_CLS)) {
        PyErr_Format(PyExc_ValueError, "ruleset must be a Ruleset, not %R", rs);
        return -1;
    }
    G g;
    if (g_fresh(&g, rs) < 0) {
        Py_XDECREF(made);
        return -1;
    }
    if (seed != Py_None) {
        g.seed64 = PyLong_AsUnsignedLongLongMask(seed); /* rng.py masks the seed to 64 bits the same way */
        if (g.seed64 == (uint64_t)-1 && PyErr_Occurred()) {
            Py_XDECREF(made);
            return -1;
        }
    }
    memcpy(&self->g, &g, G_USED(&g));
    Py_INCREF(rs);
    Py_XSETREF(self->ruleset, rs);
    Py_XDECREF(made);
    Py_INCREF(seed);
    Py_XSETREF(self->seed, seed);
    Py_CLEAR(self->last_move_obj);
    core_changed(self);
    return 0;
}

static int Core_traverse(Core *self, visitproc visit, void *arg) {
    Py_VISIT(self->ruleset);
    Py_VISIT(self->seed);
    Py_VISIT(self->legal);
    Py_VISIT(self->public_);
    Py_VISIT(self->last_move_obj);
    return 0;
}

static int Core_clear(Core *self) {
    Py_CLEAR(self->ruleset);
    Py_CLEAR(self->seed);
    Py_CLEAR(self->legal);
    Py_CLEAR(self->public_);
    Py_CLEAR(self->last_move_obj);
    return 0;
}

static void Core_dealloc(Core *self) {
    PyObject_GC_UnTrack(self);
    Core_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int need_init(Core *self) {
    if (self->ruleset) return 0;
    PyErr_SetString(PyExc_RuntimeError, "the state was never initialized (GameState(ruleset, seed) does that)");
    return -1;
}

/* The position new_game(seed, ruleset) makes, dealt into self (its ruleset kept): the vector env's restart of a
 * finished game without a new Python object. The seed is in the one seed domain (0..2**64 - 1) by its type. */
int core_redeal(Core *self, uint64_t seed) {
    if (need_init(self) < 0) return -1;
    PyObject *seed_obj = FAILING(PyLong_FromUnsignedLongLong(seed));
    if (!seed_obj) return -1;
    G g;
    if (g_fresh(&g, self->ruleset) < 0) {
        Py_DECREF(seed_obj);
        return -1;
    }
    g.seed64 = seed;
    deal_set(&g);
    memcpy(&self->g, &g, G_USED(&g));
    Py_XSETREF(self->seed, seed_obj);
    Py_CLEAR(self->last_move_obj);
    core_changed(self);
    return 0;
}

/* A new state of proto's type with its ruleset and seed. Not zero-filled: the position is
 * copied in by the caller, and a state is mostly its unused score-sheet rows (a copy writes only
 * the rows in use, G_USED); the object's own fields are set here, then it joins the GC. */
Core *core_new_like(Core *proto) {
    PyTypeObject *tp = Py_TYPE(proto);
    if (tp->tp_basicsize != (Py_ssize_t)sizeof(Core) || core_failpoint()) { /* a subclass with slots: the slow way */
        Core *o = PyErr_Occurred() ? NULL : (Core *)tp->tp_alloc(tp, 0);
        if (!o) return NULL;
        Py_XINCREF(proto->ruleset);
        o->ruleset = proto->ruleset;
        Py_XINCREF(proto->seed);
        o->seed = proto->seed;
        return o;
    }
    Core *o = PyObject_GC_New(Core, tp);
    if (!o) return NULL;
    o->legal = o->public_ = o->last_move_obj = NULL;
    o->g.nsheets = 0;
    Py_XINCREF(proto->ruleset);
    o->ruleset = proto->ruleset;
    Py_XINCREF(proto->seed);
    o->seed = proto->seed;
    PyObject_GC_Track(o);
    return o;
}

/* ------------------------------------------------------------------ legal moves */

static PyObject *ids_list(Core *self) {
    if (self->legal) return self->legal;
    int ids[MAX_IDS];
    int n = legal_ids(&self->g, ids);
    /* A tuple: what legal_ids() hands out cannot be written back (an id appended to the
     * cache would be played by play_id's callers as if the rules allowed it). */
    PyObject *l = FAILING(PyTuple_New(n));
    if (!l) return NULL;
    for (int i = 0; i < n; i++) {
        Py_INCREF(ID_OBJS[ids[i]]);
        PyTuple_SET_ITEM(l, i, ID_OBJS[ids[i]]);
    }
    self->legal = l;
    return l;
}

static PyObject *Core_ids(Core *self, PyObject *unused) {
    if (need_init(self) < 0) return NULL;
    PyObject *l = ids_list(self);
    Py_XINCREF(l);
    return l;
}

static PyObject *Core_legal_move_ids(Core *self, PyObject *unused) {
    if (need_init(self) < 0) return NULL;
    PyObject *l = ids_list(self);
    if (!l) return NULL;
    return FAILING(PySequence_List(l));
}

static PyObject *Core_n_legal(Core *self, PyObject *unused) {
    int ids[MAX_IDS];
    return PyLong_FromLong(legal_ids(&self->g, ids));
}

/* ------------------------------------------------------------------ playing */

/* A move id given from Python: an int (numpy ints too), never a bool, within the move table. */
static inline int read_move_id(PyObject *arg, int *id) {
    if (PyLong_CheckExact(arg)) { /* the common case, fast */
        long v = PyLong_AsLong(arg);
        if (v >= 0 && v < T.num_ids) {
            *id = (int)v;
            return 0;
        }
        PyErr_Clear();
    }
    if (PyBool_Check(arg) || !PyIndex_Check(arg)) {
        PyErr_Format(PyExc_ValueError, "a move id is an int from 0 to %d, not %R", T.num_ids - 1, arg);
        return -1;
    }
    Py_ssize_t v = PyNumber_AsSsize_t(arg, NULL); /* saturates: the message names the value sent, not the clamp */
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 0 || v >= T.num_ids) {
        PyErr_Format(PyExc_ValueError, "a move id is an int from 0 to %d, not %R", T.num_ids - 1, arg);
        return -1;
    }
    *id = (int)v;
    return 0;
}

/* Apply the legal move with this id, unchecked but memory-safe: the fast path of envs and rollouts. */
static PyObject *Core_play_id(Core *self, PyObject *arg) {
    int id;
    if (need_init(self) < 0 || read_move_id(arg, &id) < 0) return NULL;
    if (self->g.over) { /* the engine's GameOverError, as the Python backend raises (not a plain ValueError) */
        PyErr_SetString(GAME_OVER, "the game is over");
        return NULL;
    }
    if (core_play(self, id, NULL, -1) < 0) return NULL;
    Py_CLEAR(self->last_move_obj);
    Py_RETURN_NONE;
}

/* The id of a Move made by hand (its `id` left None): from kind, card and target. -1: none; -2: error. */
static int move_id_from_fields(PyObject *move, int c) {
    PyObject *kind = PyObject_GetAttr(move, S_KIND);
    if (!kind) return -2;
    const char *k = PyUnicode_Check(kind) ? PyUnicode_AsUTF8(kind) : NULL;
    int id = -1;
    if (k && !strcmp(k, "capture"))
        id = T.capture_id[c];
    else if (k && !strcmp(k, "trotta"))
        id = T.trotta_id[c];
    else if (k && !strcmp(k, "discard"))
        id = T.discard_id[c];
    else if (k && !strcmp(k, "build")) {
        PyObject *on = PyObject_GetAttr(move, S_ON);
        PyObject *onb = on ? PyObject_GetAttr(move, S_ON_BUILD) : NULL;
        PyObject *to = onb ? PyObject_GetAttr(move, S_TO) : NULL;
        if (to) {
            long f = on == Py_None ? -1 : PyLong_AsLong(on);
            long v = onb == Py_None ? -1 : PyLong_AsLong(onb);
            long t = to == Py_None ? -1 : PyLong_AsLong(to);
            if (!PyErr_Occurred()) {
                if (f >= 0 && f < NF)
                    id = T.loose_id[c][f];
                else if (v >= T.min_build && v <= T.max_build && t == v + T.tv[c])
                    id = T.up_id[c][v];
                else if (v >= T.min_build && v <= T.max_build && t == v - T.tv[c])
                    id = T.down_id[c][v];
            }
        }
        Py_XDECREF(on);
        Py_XDECREF(onb);
        Py_XDECREF(to);
        if (PyErr_Occurred()) id = -2;
    }
    Py_DECREF(kind);
    return id;
}

static int read_face(PyObject *x, const char *what) {
    if (PyLong_Check(x) && !PyBool_Check(x)) { /* ints and Cards: the common case, fast */
        long f = PyLong_AsLong(x);
        if (f >= 0 && f < NF) return (int)f;
        PyErr_Clear();
    }
    if (PyBool_Check(x) || !PyIndex_Check(x)) {
        PyErr_Format(PyExc_ValueError, "%s: cards are faces 0..%d, not %R", what, NF - 1, x);
        return -1;
    }
    Py_ssize_t f = PyNumber_AsSsize_t(x, NULL);
    if (f == -1 && PyErr_Occurred()) return -1;
    if (f < 0 || f >= NF) {
        PyErr_Format(PyExc_ValueError, "%s: cards are faces 0..%d, not %zd", what, NF - 1, f);
        return -1;
    }
    return (int)f;
}

/* Read a sequence of faces into a pile (sorted when `sort`), at most MAXP of them. */
static int read_pile(PyObject *seq, Pile *dst, int sort, const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > MAXP) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s holds %zd cards; a state holds at most %d", what, n, MAXP);
        return -1;
    }
    Pile tmp;
    tmp.n = (uint8_t)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        int f = read_face(PySequence_Fast_GET_ITEM(fast, i), what);
        if (f < 0) {
            Py_DECREF(fast);
            return -1;
        }
        tmp.c[i] = (uint8_t)f;
    }
    Py_DECREF(fast);
    if (sort) pile_sort(&tmp);
    *dst = tmp;
    return 0;
}

/* Apply a Move object (trusted legal): by id, or a `taking` capture. */
static PyObject *Core_play_unchecked(Core *self, PyObject *move) {
    if (need_init(self) < 0) return NULL;
    PyObject *idobj = PyObject_GetAttr(move, S_ID);
    if (!idobj) return NULL;
    int rc;
    if (idobj != Py_None) {
        int id;
        rc = read_move_id(idobj, &id);
        Py_DECREF(idobj);
        if (rc < 0 || core_play(self, id, NULL, -1) < 0) return NULL;
        Py_CLEAR(self->last_move_obj);
        Py_INCREF(self);
        return (PyObject *)self;
    }
    Py_DECREF(idobj);
    PyObject *card = PyObject_GetAttr(move, S_CARD);
    if (!card) return NULL;
    int c = read_face(card, "the move's card");
    Py_DECREF(card);
    if (c < 0) return NULL;
    PyObject *taking = PyObject_GetAttr(move, S_TAKING);
    if (!taking) return NULL;
    if (taking == Py_None) { /* a Move made by hand: find its id */
        Py_DECREF(taking);
        int id = move_id_from_fields(move, c);
        if (id == -2) return NULL;
        if (id < 0) {
            PyErr_Format(PyExc_ValueError, "%R names no move of the move table", move);
            return NULL;
        }
        if (core_play(self, id, NULL, -1) < 0) return NULL;
    } else {
        Pile t;
        rc = read_pile(taking, &t, 0, "taking");
        Py_DECREF(taking);
        if (rc < 0 || core_play(self, T.capture_id[c], t.c, t.n) < 0) return NULL;
    }
    Py_INCREF(move);
    Py_XSETREF(self->last_move_obj, move);
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *Core_deal_set(Core *self, PyObject *unused) {
    if (need_init(self) < 0) return NULL;
    deal_set(&self->g);
    core_changed(self);
    Py_RETURN_NONE;
}

static PyObject *Core_copy(Core *self, PyObject *unused) {
    if (need_init(self) < 0) return NULL;
    Core *o = core_new_like(self);
    if (!o) return NULL;
    memcpy(&o->g, &self->g, G_USED(&self->g));
    Py_XINCREF(self->legal); /* never mutated: shared */
    o->legal = self->legal;
    Py_XINCREF(self->public_);
    o->public_ = self->public_;
    Py_XINCREF(self->last_move_obj);
    o->last_move_obj = self->last_move_obj;
    return (PyObject *)o;
}

/* ------------------------------------------------------------------ loading (checked) */

static int read_pair(PyObject *v, Pile *dst, int sort, const char *what) {
    if (!PySequence_Check(v) || PySequence_Size(v) != 2) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s must be two piles", what);
        return -1;
    }
    for (int p = 0; p < 2; p++) {
        PyObject *x = PySequence_GetItem(v, p);
        if (!x) return -1;
        int rc = read_pile(x, &dst[p], sort, what);
        Py_DECREF(x);
        if (rc < 0) return -1;
    }
    return 0;
}

static int read_count(PyObject *x, int32_t *dst, const char *what) {
    if (PyBool_Check(x) || !PyIndex_Check(x)) {
        PyErr_Format(PyExc_ValueError, "%s must be a whole number 0..%d, not %R", what, T.count_limit, x);
        return -1;
    }
    Py_ssize_t v = PyNumber_AsSsize_t(x, NULL);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        v = -1;
    }
    if (v < 0 || v > T.count_limit) {
        PyErr_Format(PyExc_ValueError, "%s must be a whole number 0..%d, not %R", what, T.count_limit, x);
        return -1;
    }
    *dst = (int32_t)v;
    return 0;
}

static int read_seat(PyObject *x, int allow_none, int32_t *dst, const char *what) {
    if (x == Py_None && allow_none) {
        *dst = -1;
        return 0;
    }
    if (PyBool_Check(x) || !PyLong_Check(x) || (PyLong_AsLong(x) != 0 && PyLong_AsLong(x) != 1)) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s must be 0, 1%s, not %R", what, allow_none ? " or None" : "", x);
        return -1;
    }
    *dst = (int32_t)PyLong_AsLong(x);
    return 0;
}

static int read_builds(PyObject *v, G *g) {
    if (!PyDict_Check(v)) {
        PyErr_SetString(PyExc_ValueError, "builds must be a dict {value: (cards, owner, locked)}");
        return -1;
    }
    for (int b = 0; b <= MAXV; b++) g->bc[b].n = 0, g->bowner[b] = -1, g->blocked[b] = 0;
    PyObject *key, *val;
    Py_ssize_t pos = 0;
    while (PyDict_Next(v, &pos, &key, &val)) {
        long value = PyLong_Check(key) && !PyBool_Check(key) ? PyLong_AsLong(key) : -1;
        if (value < T.min_build || value > T.max_build) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "a build's value is %d..%d, not %R", T.min_build, T.max_build, key);
            return -1;
        }
        if (!PyTuple_Check(val) || PyTuple_GET_SIZE(val) != 3) {
            PyErr_SetString(PyExc_ValueError, "a build is (cards, owner, locked)");
            return -1;
        }
        if (read_pile(PyTuple_GET_ITEM(val, 0), &g->bc[value], 1, "a build") < 0) return -1;
        if (g->bc[value].n < 1) {
            PyErr_SetString(PyExc_ValueError, "a build holds cards");
            return -1;
        }
        int32_t owner;
        if (read_seat(PyTuple_GET_ITEM(val, 1), 1, &owner, "a build's owner") < 0) return -1;
        int locked = PyObject_IsTrue(PyTuple_GET_ITEM(val, 2));
        if (locked < 0) return -1;
        g->bowner[value] = (int8_t)owner;
        g->blocked[value] = (uint8_t)locked;
        g->bstamp[value] = ++g->stamp;
    }
    return 0;
}

static int read_sheets(PyObject *v, G *g) {
    PyObject *fast = PySequence_Fast(v, "sheets must be a list of (sheet, sheet) pairs");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    int rc = 0;
    if (n >= g->sets && !(n == g->sets && g->over)) {
        PyErr_Format(PyExc_ValueError, "%zd finished sets do not fit a game of %d sets", n, (int)g->sets);
        rc = -1;
    }
    static const char *keys[3] = {"mulle", "tabbe", "intake"};
    for (Py_ssize_t k = 0; k < n && rc == 0; k++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(fast, k);
        if (!PySequence_Check(pair) || PySequence_Size(pair) != 2) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "a finished set is a pair of score sheets");
            rc = -1;
            break;
        }
        for (int p = 0; p < 2 && rc == 0; p++) {
            PyObject *sheet = PySequence_GetItem(pair, p);
            if (!sheet) {
                rc = -1;
                break;
            }
            int32_t vals[3];
            for (int j = 0; j < 3 && rc == 0; j++) {
                PyObject *x = PyMapping_GetItemString(sheet, keys[j]);
                if (!x) {
                    PyErr_Clear();
                    PyErr_Format(PyExc_ValueError, "a score sheet has the key %s", keys[j]);
                    rc = -1;
                } else {
                    rc = read_count(x, &vals[j], "a score sheet entry");
                    Py_DECREF(x);
                }
            }
            Py_DECREF(sheet);
            if (rc == 0) {
                g->sheets[k][p].mulle = vals[0], g->sheets[k][p].tabbe = vals[1], g->sheets[k][p].intake = vals[2];
            }
        }
    }
    if (rc == 0) g->nsheets = (int32_t)n;
    Py_DECREF(fast);
    return rc;
}

static PyObject *load_checked(Core *self, PyObject *hands, PyObject *loose, PyObject *builds, PyObject *deck,
                              PyObject *mulle, PyObject *intake, PyObject *tabbe, PyObject *to_move,
                              PyObject *set_no, PyObject *deal_no, PyObject *lc, PyObject *sheets, PyObject *over,
                              PyObject *last_move, PyObject *last_taken);

/* _load(hands, loose, builds, deck, mulle, intake, tabbe, to_move, set_no, deal_no, last_capturer,
 * sheets, over, last_move, last_taken): the whole position at once, checked, then mulle and intake
 * points recounted. On an error the state is left as it was. */
static PyObject *Core_load(Core *self, PyObject *args) {
    PyObject *hands, *loose, *builds, *deck, *mulle, *intake, *tabbe, *to_move, *set_no, *deal_no, *lc, *sheets,
        *over, *last_move = Py_None, *last_taken = NULL;
    if (need_init(self) < 0 ||
        !PyArg_ParseTuple(args, "OOOOOOOOOOOOO|OO", &hands, &loose, &builds, &deck, &mulle, &intake, &tabbe,
                          &to_move, &set_no, &deal_no, &lc, &sheets, &over, &last_move, &last_taken))
        return NULL;
    PyObject *no_cards = NULL;
    if (!last_taken) {
        last_taken = no_cards = PyTuple_New(0);
        if (!last_taken) return NULL;
    }
    PyObject *result = load_checked(self, hands, loose, builds, deck, mulle, intake, tabbe, to_move, set_no,
                                    deal_no, lc, sheets, over, last_move, last_taken);
    Py_XDECREF(no_cards);
    return result;
}

static PyObject *load_checked(Core *self, PyObject *hands, PyObject *loose, PyObject *builds, PyObject *deck,
                              PyObject *mulle, PyObject *intake, PyObject *tabbe, PyObject *to_move,
                              PyObject *set_no, PyObject *deal_no, PyObject *lc, PyObject *sheets, PyObject *over,
                              PyObject *last_move, PyObject *last_taken) {
    G *g = PyMem_Malloc(sizeof(G));
    if (!g || core_failpoint()) {
        PyMem_Free(g);
        return PyErr_NoMemory();
    }
    memcpy(g, &self->g, offsetof(G, sheets)); /* the ruleset's flags and the seed */
    int32_t ts[2], tm, sn, dn, lcp;
    int ov = PyObject_IsTrue(over);
    int rc = ov < 0 ? -1 : 0;
    g->over = ov;
    if (rc == 0) rc = read_pair(hands, g->hand, 1, "hands");
    if (rc == 0) rc = read_pile(loose, &g->loose, 1, "loose");
    if (rc == 0) rc = read_builds(builds, g);
    if (rc == 0) rc = read_pile(deck, &g->deck, 0, "deck");
    if (rc == 0) rc = read_pair(mulle, g->mulle, 1, "mulle");
    if (rc == 0) rc = read_pair(intake, g->intake, 1, "intake");
    if (rc == 0 && (!PySequence_Check(tabbe) || PySequence_Size(tabbe) != 2)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "tabbe must be two counts");
        rc = -1;
    }
    for (int p = 0; p < 2 && rc == 0; p++) {
        PyObject *x = PySequence_GetItem(tabbe, p);
        rc = x ? read_count(x, &ts[p], "a tabbe count") : -1;
        Py_XDECREF(x);
    }
    if (rc == 0) rc = read_seat(to_move, 0, &tm, "to_move");
    if (rc == 0 && (read_count(set_no, &sn, "set_no") < 0 || sn < 1 || sn > g->sets)) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "set_no must be 1..%d (the ruleset's sets), not %R", (int)g->sets, set_no);
        rc = -1;
    }
    if (rc == 0 && (read_count(deal_no, &dn, "deal_no") < 0 || dn < 1 || dn > T.deals_per_set)) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "deal_no must be 1..%d, not %R", T.deals_per_set, deal_no);
        rc = -1;
    }
    if (rc == 0) rc = read_seat(lc, 1, &lcp, "last_capturer");
    if (rc == 0) rc = read_sheets(sheets, g);
    if (rc == 0) rc = read_pile(last_taken, &g->taken, 1, "last_taken");
    int32_t last_player = -1, last_id = -1;
    PyObject *last_obj = NULL;
    if (rc == 0 && last_move != Py_None) {
        if (!PyTuple_Check(last_move) || PyTuple_GET_SIZE(last_move) != 2) {
            PyErr_SetString(PyExc_ValueError, "last_move is None or (player, Move)");
            rc = -1;
        } else {
            rc = read_seat(PyTuple_GET_ITEM(last_move, 0), 0, &last_player, "last_move's player");
            last_obj = PyTuple_GET_ITEM(last_move, 1);
        }
    }
    if (rc == 0 && total_cards(g) > MAXP) {
        PyErr_Format(PyExc_ValueError, "the position holds %d cards; a state holds at most %d", total_cards(g), MAXP);
        rc = -1;
    }
    if (rc < 0) {
        PyMem_Free(g);
        return NULL;
    }
    g->tabbe[0] = ts[0], g->tabbe[1] = ts[1];
    g->to_move = tm, g->set_no = sn, g->deal_no = dn, g->last_capturer = lcp;
    g->last_player = last_player, g->last_id = last_id;
    recount(g);
    memcpy(&self->g, g, G_USED(g));
    PyMem_Free(g);
    Py_XINCREF(last_obj);
    Py_XSETREF(self->last_move_obj, last_obj);
    core_changed(self);
    Py_RETURN_NONE;
}

/* _set_hand(player, faces): checked (faces, the state's card total). */
static PyObject *Core_set_hand(Core *self, PyObject *args) {
    int player;
    PyObject *cards;
    if (need_init(self) < 0 || !PyArg_ParseTuple(args, "iO", &player, &cards)) return NULL;
    if (player != 0 && player != 1) {
        PyErr_Format(PyExc_ValueError, "player must be 0 or 1, not %d", player);
        return NULL;
    }
    Pile hand;
    if (read_pile(cards, &hand, 1, "a hand") < 0) return NULL;
    int total = total_cards(&self->g) - self->g.hand[player].n + hand.n;
    if (total > MAXP) {
        PyErr_Format(PyExc_ValueError, "the hand would make the state hold %d cards; at most %d", total, MAXP);
        return NULL;
    }
    self->g.hand[player] = hand;
    core_changed(self);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ attributes (read-only) */

static PyObject *get_hands(Core *self, void *c) { return pair_list(&self->g.hand[0], &self->g.hand[1]); }
static PyObject *get_mulle(Core *self, void *c) { return pair_list(&self->g.mulle[0], &self->g.mulle[1]); }
static PyObject *get_intake(Core *self, void *c) { return pair_list(&self->g.intake[0], &self->g.intake[1]); }
static PyObject *get_loose(Core *self, void *c) { return pile_list(&self->g.loose); }
static PyObject *get_deck(Core *self, void *c) { return pile_list(&self->g.deck); }
static PyObject *get_taken(Core *self, void *c) { return pile_cards(&self->g.taken); }
static PyObject *get_tabbe(Core *self, void *c) { return int_pair(self->g.tabbe); }
static PyObject *get_mpts(Core *self, void *c) { return int_pair(self->g.mpts); }
static PyObject *get_ipts(Core *self, void *c) { return int_pair(self->g.ipts); }
static PyObject *get_to_move(Core *self, void *c) { return PyLong_FromLong(self->g.to_move); }
static PyObject *get_set_no(Core *self, void *c) { return PyLong_FromLong(self->g.set_no); }
static PyObject *get_deal_no(Core *self, void *c) { return PyLong_FromLong(self->g.deal_no); }
static PyObject *get_over(Core *self, void *c) { return PyBool_FromLong(self->g.over); }

static PyObject *get_last_capturer(Core *self, void *c) {
    if (self->g.last_capturer < 0) Py_RETURN_NONE;
    return PyLong_FromLong(self->g.last_capturer);
}

static PyObject *get_builds(Core *self, void *c) {
    G *g = &self->g;
    int order[MAXV + 1], n = 0;
    for (int v = 0; v <= MAXV; v++)
        if (g->bc[v].n) order[n++] = v;
    for (int i = 1; i < n; i++) { /* by insertion stamp, as the Python dict iterates */
        int x = order[i], j = i - 1;
        while (j >= 0 && g->bstamp[order[j]] > g->bstamp[x]) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = x;
    }
    PyObject *d = FAILING(PyDict_New());
    if (!d) return NULL;
    for (int i = 0; i < n; i++) {
        int v = order[i];
        PyObject *cards = FAILING(PyTuple_New(g->bc[v].n));
        if (!cards) goto fail;
        for (int k = 0; k < g->bc[v].n; k++) {
            Py_INCREF(ID_OBJS[g->bc[v].c[k]]);
            PyTuple_SET_ITEM(cards, k, ID_OBJS[g->bc[v].c[k]]);
        }
        PyObject *owner = g->bowner[v] < 0 ? Py_None : ID_OBJS[g->bowner[v]];
        PyObject *t = FAILING(PyTuple_Pack(3, cards, owner, g->blocked[v] ? Py_True : Py_False));
        Py_DECREF(cards);
        if (!t) goto fail;
        int rc = PyDict_SetItem(d, ID_OBJS[v], t);
        Py_DECREF(t);
        if (rc < 0) goto fail;
    }
    return d;
fail:
    Py_DECREF(d);
    return NULL;
}

static PyObject *sheet_dict(const SetScore *s) {
    long long values[5] = {s->mulle, s->tabbe, s->intake, bonus_of(s->intake), (long long)sheet_total(s)};
    PyObject *d = FAILING(PyDict_New());
    for (int i = 0; d && i < 5; i++) {
        PyObject *v = FAILING(PyLong_FromLongLong(values[i]));
        if (!v || PyDict_SetItem(d, S_SHEET[i], v) < 0) {
            Py_XDECREF(v);
            Py_CLEAR(d);
            break;
        }
        Py_DECREF(v);
    }
    return d;
}

static PyObject *get_sheets(Core *self, void *c) {
    G *g = &self->g;
    PyObject *l = FAILING(PyList_New(g->nsheets));
    if (!l) return NULL;
    for (int k = 0; k < g->nsheets; k++) {
        PyObject *a = sheet_dict(&g->sheets[k][0]), *b = a ? sheet_dict(&g->sheets[k][1]) : NULL;
        PyObject *pair = b ? FAILING(PyTuple_Pack(2, a, b)) : NULL;
        Py_XDECREF(a);
        Py_XDECREF(b);
        if (!pair) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, k, pair);
    }
    return l;
}

static PyObject *get_last_move(Core *self, void *c) {
    if (self->g.last_player < 0) Py_RETURN_NONE;
    PyObject *m = self->last_move_obj;
    if (!m) {
        if (self->g.last_id < 0) Py_RETURN_NONE;
        m = PyTuple_GET_ITEM(MOVES, self->g.last_id);
    }
    return FAILING(Py_BuildValue("(iO)", (int)self->g.last_player, m));
}

static PyObject *get_seed(Core *self, void *c) {
    PyObject *s = self->seed ? self->seed : Py_None;
    Py_INCREF(s);
    return s;
}

static PyObject *get_ruleset(Core *self, void *c) {
    PyObject *r = self->ruleset ? self->ruleset : Py_None;
    Py_INCREF(r);
    return r;
}

static PyObject *get_public(Core *self, void *c) {
    PyObject *p = self->public_ ? self->public_ : Py_None;
    Py_INCREF(p);
    return p;
}

static int set_public(Core *self, PyObject *v, void *c) {
    if (!v || v == Py_None) {
        Py_CLEAR(self->public_);
        return 0;
    }
    if (!PyTuple_Check(v)) {
        PyErr_SetString(PyExc_ValueError, "_public is a tuple (the cached public part of views) or None");
        return -1;
    }
    Py_INCREF(v);
    Py_XSETREF(self->public_, v);
    return 0;
}

static PyGetSetDef Core_getset[] = {
    {"hands", (getter)get_hands, NULL, "Both hands (faces, sorted): a new list on every read.", NULL},
    {"loose", (getter)get_loose, NULL, "Loose table cards (faces, sorted).", NULL},
    {"builds", (getter)get_builds, NULL, "Builds: {value: (cards, owner, locked)}.", NULL},
    {"deck", (getter)get_deck, NULL, "The undealt cards, next card first.", NULL},
    {"mulle", (getter)get_mulle, NULL, "Both mulle piles.", NULL},
    {"intake", (getter)get_intake, NULL, "Both intake piles.", NULL},
    {"tabbe", (getter)get_tabbe, NULL, "Tabbes of the set in play.", NULL},
    {"mpts", (getter)get_mpts, NULL, "Mulle points of the set in play.", NULL},
    {"ipts", (getter)get_ipts, NULL, "Intake points of the set in play.", NULL},
    {"to_move", (getter)get_to_move, NULL, "Seat to move.", NULL},
    {"set_no", (getter)get_set_no, NULL, "Set in play (1-based).", NULL},
    {"deal_no", (getter)get_deal_no, NULL, "Deal in play (1-based).", NULL},
    {"last_capturer", (getter)get_last_capturer, NULL, "Last seat to capture, or None.", NULL},
    {"over", (getter)get_over, NULL, "True once the last set is scored.", NULL},
    {"sheets", (getter)get_sheets, NULL, "Score sheets of the finished sets: [(sheet0, sheet1), ...].", NULL},
    {"last_move", (getter)get_last_move, NULL, "(player, Move) of the last move, or None.", NULL},
    {"last_taken", (getter)get_taken, NULL, "Table cards the last move captured.", NULL},
    {"seed", (getter)get_seed, NULL, "The game's seed (None: 0).", NULL},
    {"ruleset", (getter)get_ruleset, NULL, "The Ruleset.", NULL},
    {"_public", (getter)get_public, (setter)set_public, "cstate.py's cache of the public part of views.", NULL},
    {NULL}};

/* ------------------------------------------------------------------ views and buffers */

/* The fields of PlayerView in order, for cstate.py's view(); `public` is the cached
 * (mulle, intake, tabbe, scores) part that only changes with captures and set ends. */
static PyObject *Core_view_tuple(Core *self, PyObject *args) {
    int player;
    PyObject *public_;
    if (need_init(self) < 0 || !PyArg_ParseTuple(args, "iO!", &player, &PyTuple_Type, &public_)) return NULL;
    if ((player != 0 && player != 1) || PyTuple_GET_SIZE(public_) != 5) {
        PyErr_SetString(PyExc_ValueError, "_view_tuple(player 0/1, public of 5)");
        return NULL;
    }
    G *g = &self->g;
    int nb = 0;
    for (int v = 0; v <= MAXV; v++) nb += g->bc[v].n > 0;
    PyObject *builds = FAILING(PyTuple_New(nb));
    if (!builds) return NULL;
    for (int v = 0, k = 0; v <= MAXV; v++) {
        if (!g->bc[v].n) continue;
        PyObject *owner = g->bowner[v] < 0 ? Py_None : ID_OBJS[g->bowner[v]];
        PyObject *cards = pile_cards(&g->bc[v]);
        PyObject *b = cards ? FAILING(PyObject_CallFunctionObjArgs(BUILD_CLS, ID_OBJS[v], cards, owner,
                                                                   g->blocked[v] ? Py_True : Py_False, NULL))
                            : NULL;
        Py_XDECREF(cards);
        if (!b) {
            Py_DECREF(builds);
            return NULL;
        }
        PyTuple_SET_ITEM(builds, k++, b);
    }
    PyObject *sheets = PyTuple_GET_ITEM(public_, 4); /* cached with the public part: it changes with it */
    Py_INCREF(sheets);
    PyObject *last_move = get_last_move(self, NULL);
    PyObject *hand = last_move ? pile_cards(&g->hand[player]) : NULL;
    PyObject *loose = hand ? pile_cards(&g->loose) : NULL;
    PyObject *taken = loose ? pile_cards(&g->taken) : NULL;
    if (!taken) {
        Py_XDECREF(sheets);
        Py_XDECREF(last_move);
        Py_XDECREF(hand);
        Py_XDECREF(loose);
        Py_DECREF(builds);
        return NULL;
    }
    PyObject *lc = g->last_capturer < 0 ? Py_None : ID_OBJS[g->last_capturer];
    PyObject *out = FAILING(Py_BuildValue("(iiOiiOOOOOOOiiOOOOO)", player, (int)g->to_move, hand,
                                          (int)g->hand[1 - player].n, (int)g->deck.n, loose, builds,
                                          PyTuple_GET_ITEM(public_, 0), PyTuple_GET_ITEM(public_, 1),
                                          PyTuple_GET_ITEM(public_, 2), PyTuple_GET_ITEM(public_, 3), sheets,
                                          (int)g->set_no, (int)g->deal_no, lc, last_move, self->ruleset,
                                          g->over ? Py_True : Py_False, taken));
    Py_DECREF(hand);
    Py_DECREF(loose);
    Py_DECREF(builds);
    Py_DECREF(sheets);
    Py_DECREF(last_move);
    Py_DECREF(taken);
    return out;
}

static PyObject *Core_write_observation(Core *self, PyObject *args) {
    int player;
    PyObject *out;
    if (need_init(self) < 0 || !PyArg_ParseTuple(args, "iO", &player, &out)) return NULL;
    if (player != 0 && player != 1) {
        PyErr_Format(PyExc_ValueError, "player must be 0 or 1, not %d", player);
        return NULL;
    }
    Py_buffer b;
    Py_ssize_t need = T.obs_size * (Py_ssize_t)sizeof(float);
    if (get_buffer(out, &b, need, "f", "the observation buffer") < 0) return NULL;
    if (b.len != need) { /* exactly one observation: a longer buffer is a caller's mistake, not room to spare */
        PyErr_Format(PyExc_ValueError, "the observation buffer must hold exactly %d float32 items, not %zd",
                     T.obs_size, b.len / (Py_ssize_t)sizeof(float));
        PyBuffer_Release(&b);
        return NULL;
    }
    int rc = write_obs(&self->g, player, (float *)b.buf);
    PyBuffer_Release(&b);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Core_write_mask(Core *self, PyObject *arg) {
    Py_buffer b;
    if (need_init(self) < 0 || PyObject_GetBuffer(arg, &b, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (b.itemsize != 1 || b.len != T.num_ids) {
        PyBuffer_Release(&b);
        PyErr_Format(PyExc_ValueError, "mask must be a writable bool/int8/uint8 buffer of exactly %d items", T.num_ids);
        return NULL;
    }
    int n = write_mask(&self->g, (uint8_t *)b.buf);
    PyBuffer_Release(&b);
    return PyLong_FromLong(n);
}

static PyMethodDef Core_methods[] = {
    {"_ids", (PyCFunction)Core_ids, METH_NOARGS, "The cached legal ids themselves (a tuple)."},
    {"legal_ids", (PyCFunction)Core_ids, METH_NOARGS,
     "The legal move ids as the state's own cached tuple (immutable), without a copy, for hot paths."},
    {"legal_move_ids", (PyCFunction)Core_legal_move_ids, METH_NOARGS,
     "Ids of the legal moves (Move.id), canonical order; the list is the caller's own."},
    {"n_legal", (PyCFunction)Core_n_legal, METH_NOARGS, "How many legal ids there are."},
    {"play_unchecked", (PyCFunction)Core_play_unchecked, METH_O,
     "Apply a move known to be legal (from legal_moves), skipping the check; returns self."},
    {"play_id", (PyCFunction)Core_play_id, METH_O,
     "Apply the legal move with id move_id (an int 0..NUM_MOVE_IDS-1, not a bool), unchecked; returns None."},
    {"deal_set", (PyCFunction)Core_deal_set, METH_NOARGS,
     "Shuffle a fresh 104-card deck for the current set and make its first deal."},
    {"copy", (PyCFunction)Core_copy, METH_NOARGS, "An independent copy (one memcpy of the position)."},
    {"_load", (PyCFunction)Core_load, METH_VARARGS, "The whole position at once, checked (from_dict, from_view)."},
    {"_set_hand", (PyCFunction)Core_set_hand, METH_VARARGS, "_set_hand(player, faces), checked."},
    {"_view_tuple", (PyCFunction)Core_view_tuple, METH_VARARGS, "PlayerView's fields in order (for view())."},
    {"write_observation", (PyCFunction)Core_write_observation, METH_VARARGS,
     "write_observation(player, out): observation.encode_state into a writable float32 buffer."},
    {"write_mask", (PyCFunction)Core_write_mask, METH_O,
     "Write the legal-move mask into a writable bool/uint8 buffer of NUM_MOVE_IDS; returns the count."},
    {NULL}};

PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mulle_env.engine._core.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A position on the compiled core; cstate.GameState is the public class.",
    .tp_new = Core_new,
    .tp_init = (initproc)Core_init,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_traverse = (traverseproc)Core_traverse,
    .tp_clear = (inquiry)Core_clear,
    .tp_methods = Core_methods,
    .tp_getset = Core_getset,
};

int core_type_init(PyObject *module) {
    static const char *flags[5] = {"forced_capture", "lock_every_build", "discard_only_if_no_capture",
                                   "mulle_hand_values", "sets"};
    static const char *keys[5] = {"mulle", "tabbe", "intake", "bonus", "total"};
    PyObject **names[7] = {&S_ID, &S_CARD, &S_TAKING, &S_KIND, &S_ON, &S_ON_BUILD, &S_TO};
    const char *texts[7] = {"id", "card", "taking", "kind", "on", "on_build", "to"};
    for (int i = 0; i < 7; i++)
        if (!(*names[i] = PyUnicode_InternFromString(texts[i]))) return -1;
    for (int i = 0; i < 5; i++)
        if (!(S_FLAGS[i] = PyUnicode_InternFromString(flags[i])) || !(S_SHEET[i] = PyUnicode_InternFromString(keys[i])))
            return -1;
    if (PyType_Ready(&CoreType) < 0) return -1;
    Py_INCREF(&CoreType);
    if (PyModule_AddObject(module, "Core", (PyObject *)&CoreType) < 0) {
        Py_DECREF(&CoreType);
        return -1;
    }
    return 0;
}
