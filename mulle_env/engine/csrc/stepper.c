/* The batched stepper: K games stepped in one call, for the environments' core.
 *
 * mulle_env/stepper.py documents the contract and holds its Python twin (PyStepper); the
 * environments pick one by the engine's backend. The games are cstate.GameState objects,
 * so `state(i)` hands out the live game (to read; moves go through play(i, action), which
 * keeps `over` and `to_move` current). The internal random opponent plays
 * legal[randrange(len(legal))] with random.Random(opp_seed) (rng.c's MT19937), exactly as
 * the `random` agent does in the Python stepper and in Mulle-v0: the same seed gives the
 * same games on both backends.
 */
#include "engine.h"

typedef struct {
    PyObject_HEAD
    int k, internal;
    PyObject *ruleset, *games, *over_obj, *to_move_obj, *new_game;
    Py_buffer over_buf, to_move_buf;
    int have_over, have_to_move;
    MT *rng;
    int8_t *seat;
    /* Per game, the legal ids of the seat to move as a bitset (LEGAL_WORDS words), valid while
     * legal_ok[i]: the stepper's own copy, which nothing handed out can reach. Every action is
     * checked against it, so a mask written by a caller cannot make an illegal move legal. */
    uint64_t *legal_bits;
    uint8_t *legal_ok;
} Stepper;

#define LEGAL_WORDS (MAX_IDS / 64)

static int read_index(Py_buffer *b, Py_ssize_t i, long long *out) {
    const char *f = b->format ? b->format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@') f++;
    const char *p = (const char *)b->buf + i * b->itemsize;
    switch (f[0]) {
    case '?':
    case 'B': *out = *(const uint8_t *)p; return 0;
    case 'b': *out = *(const int8_t *)p; return 0;
    case 'h': *out = *(const int16_t *)p; return 0;
    case 'H': *out = *(const uint16_t *)p; return 0;
    case 'i': *out = *(const int32_t *)p; return 0;
    case 'I': *out = *(const uint32_t *)p; return 0;
    case 'l':
    case 'q':
        if (b->itemsize == 8)
            *out = *(const int64_t *)p;
        else
            *out = *(const int32_t *)p;
        return 0;
    case 'L':
    case 'Q':
        if (b->itemsize == 8)
            *out = (long long)*(const uint64_t *)p;
        else
            *out = *(const uint32_t *)p;
        return 0;
    }
    PyErr_Format(PyExc_ValueError, "an integer array is needed, not format '%s'", b->format);
    return -1;
}

/* An integer vector as a C-contiguous buffer (numpy arrays) or any sequence (lists). */
typedef struct {
    Py_buffer b;
    PyObject *fast;
    Py_ssize_t n;
} IntVec;

static int intvec_open(PyObject *o, IntVec *v, const char *what) {
    v->fast = NULL;
    if (PyObject_CheckBuffer(o) && PyObject_GetBuffer(o, &v->b, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) == 0) {
        if (v->b.ndim != 1) {
            PyBuffer_Release(&v->b);
            PyErr_Format(PyExc_ValueError, "%s must be one-dimensional", what);
            return -1;
        }
        v->n = v->b.shape ? v->b.shape[0] : v->b.len / v->b.itemsize;
        return 0;
    }
    PyErr_Clear();
    v->fast = PySequence_Fast(o, what);
    if (!v->fast) return -1;
    v->n = PySequence_Fast_GET_SIZE(v->fast);
    return 0;
}

static int intvec_get(IntVec *v, Py_ssize_t i, long long *out) {
    if (v->fast) {
        PyObject *x = PySequence_Fast_GET_ITEM(v->fast, i);
        if (PyBool_Check(x)) {
            *out = x == Py_True;
            return 0;
        }
        *out = PyLong_AsLongLong(x);
        return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
    }
    return read_index(&v->b, i, out);
}

static void intvec_close(IntVec *v) {
    if (v->fast)
        Py_DECREF(v->fast);
    else
        PyBuffer_Release(&v->b);
}

static inline Core *game(Stepper *s, Py_ssize_t i) { return (Core *)PyList_GET_ITEM(s->games, i); }

/* Game i's legal ids into its bitset (ids: its legal ids, n of them). */
static void keep_legal(Stepper *s, int i, const int *ids, int n) {
    uint64_t *w = s->legal_bits + (size_t)i * LEGAL_WORDS;
    memset(w, 0, LEGAL_WORDS * sizeof(uint64_t));
    for (int j = 0; j < n; j++) w[ids[j] >> 6] |= 1ULL << (ids[j] & 63);
    s->legal_ok[i] = 1;
}

/* Whether id is legal for the seat to move in game i, by the engine's own rules (never by a mask). */
static int is_legal(Stepper *s, int i, long long id) {
    Core *c = game(s, i);
    if (id < 0 || id >= T.num_ids || c->g.over) return 0;
    if (!s->legal_ok[i]) {
        int ids[MAX_IDS];
        keep_legal(s, i, ids, legal_ids(&c->g, ids));
    }
    return (int)((s->legal_bits[(size_t)i * LEGAL_WORDS + (id >> 6)] >> (id & 63)) & 1);
}

static void stepper_sync(Stepper *s, int i) {
    Core *c = game(s, i);
    s->legal_ok[i] = 0; /* called after every change of game i */
    ((uint8_t *)s->over_buf.buf)[i] = (uint8_t)c->g.over;
    ((int8_t *)s->to_move_buf.buf)[i] = (int8_t)c->g.to_move;
}

static int random_moves(Stepper *s, int i) {
    Core *c = game(s, i);
    int ids[MAX_IDS];
    while (!c->g.over && c->g.to_move != s->seat[i]) {
        int n = legal_ids(&c->g, ids);
        if (n == 0) {
            PyErr_Format(PyExc_ValueError, "game %d: no legal move for the opponent", i);
            return -1;
        }
        if (core_play(c, ids[mt_randbelow(&s->rng[i], n)], NULL, -1) < 0) return -1;
        Py_CLEAR(c->last_move_obj);
    }
    return 0;
}

static int own_buffer(PyObject *o, Py_buffer *b, int k, const char *what) {
    if (PyObject_GetBuffer(o, b, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (b->len < k || b->itemsize != 1) {
        PyBuffer_Release(b);
        PyErr_Format(PyExc_ValueError, "%s must be a writable 1-byte-per-item buffer of %d items", what, k);
        return -1;
    }
    return 0;
}

static int Stepper_init(Stepper *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"num_envs", "ruleset", "internal_random", "over", "to_move", NULL};
    int k, internal;
    PyObject *rs, *over = Py_None, *to_move = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iOp|OO", kwlist, &k, &rs, &internal, &over, &to_move)) return -1;
    if (k < 1 || k > 1 << 20) {
        PyErr_Format(PyExc_ValueError, "num_envs must be 1..%d, not %d", 1 << 20, k);
        return -1;
    }
    if (self->games) {
        PyErr_SetString(PyExc_RuntimeError, "a Stepper is initialized once");
        return -1;
    }
    PyObject *mod = PyImport_ImportModule("mulle_env.engine.cstate");
    if (!mod) return -1;
    self->new_game = PyObject_GetAttrString(mod, "new_game");
    Py_DECREF(mod);
    if (!self->new_game) return -1;
    self->k = k;
    self->internal = internal;
    Py_INCREF(rs);
    self->ruleset = rs;
    over = over == Py_None ? PyByteArray_FromStringAndSize(NULL, k) : (Py_INCREF(over), over);
    if (!over) return -1;
    self->over_obj = over;
    to_move = to_move == Py_None ? PyByteArray_FromStringAndSize(NULL, k) : (Py_INCREF(to_move), to_move);
    if (!to_move) return -1;
    self->to_move_obj = to_move;
    if (own_buffer(over, &self->over_buf, k, "over") < 0) return -1;
    self->have_over = 1;
    if (own_buffer(to_move, &self->to_move_buf, k, "to_move") < 0) return -1;
    self->have_to_move = 1;
    self->rng = core_failpoint() ? NULL : PyMem_Calloc(k, sizeof(MT));
    self->seat = core_failpoint() ? NULL : PyMem_Calloc(k, 1);
    self->legal_bits = core_failpoint() ? NULL : PyMem_Calloc((size_t)k * LEGAL_WORDS, sizeof(uint64_t));
    self->legal_ok = core_failpoint() ? NULL : PyMem_Calloc(k, 1);
    if (!self->rng || !self->seat || !self->legal_bits || !self->legal_ok) {
        PyErr_NoMemory();
        return -1;
    }
    self->games = core_failpoint() ? NULL : PyList_New(k);
    if (!self->games) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < k; i++) {
        PyObject *g = PyObject_CallFunction(self->new_game, "iO", 0, rs);
        if (!g) return -1;
        if (!PyObject_TypeCheck(g, &CoreType)) {
            Py_DECREF(g);
            PyErr_SetString(PyExc_TypeError, "cstate.new_game did not return a core state");
            return -1;
        }
        PyList_SET_ITEM(self->games, i, g);
        ((Core *)g)->g.over = 1; /* not started */
        stepper_sync(self, i);
    }
    return 0;
}

static int Stepper_traverse(Stepper *self, visitproc visit, void *arg) {
    Py_VISIT(self->ruleset);
    Py_VISIT(self->games);
    Py_VISIT(self->over_obj);
    Py_VISIT(self->to_move_obj);
    Py_VISIT(self->new_game);
    return 0;
}

static int Stepper_clear(Stepper *self) {
    if (self->have_over) PyBuffer_Release(&self->over_buf);
    if (self->have_to_move) PyBuffer_Release(&self->to_move_buf);
    self->have_over = self->have_to_move = 0;
    Py_CLEAR(self->ruleset);
    Py_CLEAR(self->games);
    Py_CLEAR(self->over_obj);
    Py_CLEAR(self->to_move_obj);
    Py_CLEAR(self->new_game);
    return 0;
}

static void Stepper_dealloc(Stepper *self) {
    PyObject_GC_UnTrack(self);
    Stepper_clear(self);
    PyMem_Free(self->rng);
    PyMem_Free(self->seat);
    PyMem_Free(self->legal_bits);
    PyMem_Free(self->legal_ok);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int check_index(Stepper *s, long long i) {
    if (!s->games) {
        PyErr_SetString(PyExc_RuntimeError, "Stepper not initialized");
        return -1;
    }
    if (i < 0 || i >= s->k) {
        PyErr_Format(PyExc_IndexError, "game index %lld outside 0..%d", i, s->k - 1);
        return -1;
    }
    return 0;
}

static PyObject *Stepper_start(Stepper *self, PyObject *args) {
    long long i;
    int seat;
    PyObject *game_seed;
    unsigned long long opp_seed;
    if (!PyArg_ParseTuple(args, "LOiK", &i, &game_seed, &seat, &opp_seed)) return NULL;
    if (check_index(self, i) < 0) return NULL;
    if (seat != 0 && seat != 1) {
        PyErr_Format(PyExc_ValueError, "seat must be 0 or 1, not %d", seat);
        return NULL;
    }
    PyObject *g = PyObject_CallFunction(self->new_game, "OO", game_seed, self->ruleset);
    if (!g) return NULL;
    PyList_SetItem(self->games, (Py_ssize_t)i, g); /* steals g */
    self->seat[i] = (int8_t)seat;
    mt_seed(&self->rng[i], opp_seed);
    int rc = self->internal ? random_moves(self, (int)i) : 0;
    stepper_sync(self, (int)i);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Stepper_step(Stepper *self, PyObject *args) {
    PyObject *acts, *active;
    if (!PyArg_ParseTuple(args, "OO", &acts, &active)) return NULL;
    if (check_index(self, 0) < 0) return NULL;
    IntVec a, m;
    if (intvec_open(acts, &a, "actions") < 0) return NULL;
    if (intvec_open(active, &m, "active") < 0) {
        intvec_close(&a);
        return NULL;
    }
    PyObject *ret = NULL;
    if (a.n < self->k || m.n < self->k) {
        PyErr_Format(PyExc_ValueError, "actions and active need %d entries", self->k);
        goto done;
    }
    /* Every action is checked before any is played: a refused step changes no game. */
    for (int i = 0; i < self->k; i++) {
        long long on, id;
        if (intvec_get(&m, i, &on) < 0) goto done;
        if (!on) continue;
        if (intvec_get(&a, i, &id) < 0) goto done;
        if (!is_legal(self, i, id)) {
            PyErr_Format(PyExc_ValueError, "game %d: action %lld is not legal there (the game's own legal ids "
                         "decide, not a mask)", i, id);
            goto done;
        }
    }
    for (int i = 0; i < self->k; i++) {
        long long on, id;
        if (intvec_get(&m, i, &on) < 0) goto done;
        if (!on) continue;
        if (intvec_get(&a, i, &id) < 0) goto done;
        Core *c = game(self, i);
        int rc = core_play(c, (int)id, NULL, -1);
        Py_CLEAR(c->last_move_obj);
        if (rc == 0 && self->internal) rc = random_moves(self, i);
        stepper_sync(self, i);
        if (rc < 0) goto done;
    }
    Py_INCREF(Py_None);
    ret = Py_None;
done:
    intvec_close(&a);
    intvec_close(&m);
    return ret;
}

static PyObject *Stepper_play(Stepper *self, PyObject *args) {
    long long i, id;
    if (!PyArg_ParseTuple(args, "LL", &i, &id)) return NULL;
    if (check_index(self, i) < 0) return NULL;
    Core *c = game(self, (Py_ssize_t)i);
    if (!is_legal(self, (int)i, id)) {
        PyErr_Format(PyExc_ValueError, "game %lld: action %lld is not legal there", i, id);
        return NULL;
    }
    int rc = core_play(c, (int)id, NULL, -1);
    Py_CLEAR(c->last_move_obj);
    stepper_sync(self, (int)i);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Stepper_write(Stepper *self, PyObject *args) {
    PyObject *idx, *seats, *obs, *mask;
    if (!PyArg_ParseTuple(args, "OOOO", &idx, &seats, &obs, &mask)) return NULL;
    if (check_index(self, 0) < 0) return NULL;
    IntVec iv, sv;
    if (intvec_open(idx, &iv, "idx") < 0) return NULL;
    if (intvec_open(seats, &sv, "seats") < 0) {
        intvec_close(&iv);
        return NULL;
    }
    PyObject *ret = NULL;
    Py_buffer ob, mb;
    int have_ob = 0, have_mb = 0;
    Py_ssize_t n = iv.n;
    if (sv.n != n) {
        PyErr_SetString(PyExc_ValueError, "idx and seats differ in length");
        goto done;
    }
    if (get_buffer(obs, &ob, n * T.obs_size * (Py_ssize_t)sizeof(float), "f", "obs") < 0) goto done;
    have_ob = 1;
    if (PyObject_GetBuffer(mask, &mb, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) goto done;
    have_mb = 1;
    if (mb.itemsize != 1 || mb.len < n * T.num_ids) {
        PyErr_Format(PyExc_ValueError, "mask must be a writable int8/uint8/bool buffer of %zd x %d", n, T.num_ids);
        goto done;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        long long i, seat;
        if (intvec_get(&iv, j, &i) < 0 || intvec_get(&sv, j, &seat) < 0) goto done;
        if (check_index(self, i) < 0) goto done;
        if (seat != 0 && seat != 1) {
            PyErr_Format(PyExc_ValueError, "seats[%zd] must be 0 or 1, not %lld", j, seat);
            goto done;
        }
        Core *c = game(self, (Py_ssize_t)i);
        if (write_obs(&c->g, (int)seat, (float *)ob.buf + j * T.obs_size) < 0) goto done;
        uint8_t *row = (uint8_t *)mb.buf + j * T.num_ids;
        memset(row, 0, T.num_ids);
        if (c->g.to_move == seat && !c->g.over) {
            int ids[MAX_IDS], nl = legal_ids(&c->g, ids);
            for (int q = 0; q < nl; q++) row[ids[q]] = 1;
            keep_legal(self, (int)i, ids, nl);
        }
    }
    Py_INCREF(Py_None);
    ret = Py_None;
done:
    if (have_ob) PyBuffer_Release(&ob);
    if (have_mb) PyBuffer_Release(&mb);
    intvec_close(&iv);
    intvec_close(&sv);
    return ret;
}

/* ok[i] = 1 where game i is inactive or actions[i] is legal there, else 0; returns how many are not. */
static PyObject *Stepper_check(Stepper *self, PyObject *args) {
    PyObject *acts, *active, *ok;
    if (!PyArg_ParseTuple(args, "OOO", &acts, &active, &ok)) return NULL;
    if (check_index(self, 0) < 0) return NULL;
    IntVec a, m;
    Py_buffer ob;
    if (own_buffer(ok, &ob, self->k, "ok") < 0) return NULL;
    if (intvec_open(acts, &a, "actions") < 0) {
        PyBuffer_Release(&ob);
        return NULL;
    }
    if (intvec_open(active, &m, "active") < 0) {
        intvec_close(&a);
        PyBuffer_Release(&ob);
        return NULL;
    }
    PyObject *ret = NULL;
    long bad = 0;
    if (a.n < self->k || m.n < self->k) {
        PyErr_Format(PyExc_ValueError, "actions and active need %d entries", self->k);
        goto done;
    }
    for (int i = 0; i < self->k; i++) {
        long long on, id;
        if (intvec_get(&m, i, &on) < 0 || intvec_get(&a, i, &id) < 0) goto done;
        int legal = !on || is_legal(self, i, id);
        ((uint8_t *)ob.buf)[i] = (uint8_t)legal;
        bad += !legal;
    }
    ret = PyLong_FromLong(bad);
done:
    intvec_close(&a);
    intvec_close(&m);
    PyBuffer_Release(&ob);
    return ret;
}

static PyObject *Stepper_scores(Stepper *self, PyObject *arg) {
    long long i = PyLong_AsLongLong(arg);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (check_index(self, i) < 0) return NULL;
    G *g = &game(self, (Py_ssize_t)i)->g;
    int64_t t[2] = {0, 0};
    for (int p = 0; p < 2; p++) {
        for (int k = 0; k < g->nsheets; k++) t[p] += sheet_total(&g->sheets[k][p]);
        if (!g->over) {
            SetScore cur = {g->mpts[p], g->tabbe[p], g->ipts[p]};
            t[p] += sheet_total(&cur);
        }
    }
    return Py_BuildValue("(LL)", (long long)t[0], (long long)t[1]);
}

static PyObject *Stepper_state(Stepper *self, PyObject *arg) {
    long long i = PyLong_AsLongLong(arg);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (check_index(self, i) < 0) return NULL;
    PyObject *g = (PyObject *)game(self, (Py_ssize_t)i);
    Py_INCREF(g);
    return g;
}

static PyObject *Stepper_get_over(Stepper *self, void *c) {
    PyObject *o = self->over_obj ? self->over_obj : Py_None;
    Py_INCREF(o);
    return o;
}
static PyObject *Stepper_get_to_move(Stepper *self, void *c) {
    PyObject *o = self->to_move_obj ? self->to_move_obj : Py_None;
    Py_INCREF(o);
    return o;
}
static PyObject *Stepper_get_num_envs(Stepper *self, void *c) { return PyLong_FromLong(self->k); }

static PyGetSetDef Stepper_getset[] = {
    {"over", (getter)Stepper_get_over, NULL, "Per game: over (the buffer given, or a bytearray).", NULL},
    {"to_move", (getter)Stepper_get_to_move, NULL, "Per game: the seat to move (int8).", NULL},
    {"num_envs", (getter)Stepper_get_num_envs, NULL, "K, the number of games.", NULL},
    {NULL}};

static PyMethodDef Stepper_methods[] = {
    {"start", (PyCFunction)Stepper_start, METH_VARARGS,
     "start(i, game_seed, seat, opp_seed): deal game i; the internal random opponent moves until the learner's turn."},
    {"step", (PyCFunction)Stepper_step, METH_VARARGS,
     "step(actions, active): play actions[i] for the learner in every active game, then the internal opponent."},
    {"play", (PyCFunction)Stepper_play, METH_VARARGS, "play(i, action): one legal action for the seat to move."},
    {"write", (PyCFunction)Stepper_write, METH_VARARGS,
     "write(idx, seats, obs, mask): row j = observation and legal mask of seat seats[j] in game idx[j]."},
    {"check", (PyCFunction)Stepper_check, METH_VARARGS,
     "check(actions, active, ok): ok[i] = game i inactive or actions[i] legal there (by the game's own legal "
     "ids); returns how many are not."},
    {"scores", (PyCFunction)Stepper_scores, METH_O, "scores(i): game i's two game totals by seat."},
    {"state", (PyCFunction)Stepper_state, METH_O, "state(i): game i itself (a cstate.GameState; read it only)."},
    {NULL}};

PyTypeObject StepperType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mulle_env.engine._core.Stepper",
    .tp_basicsize = sizeof(Stepper),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Stepper(num_envs, ruleset, internal_random, over=None, to_move=None): K games stepped in C.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Stepper_init,
    .tp_dealloc = (destructor)Stepper_dealloc,
    .tp_traverse = (traverseproc)Stepper_traverse,
    .tp_clear = (inquiry)Stepper_clear,
    .tp_methods = Stepper_methods,
    .tp_getset = Stepper_getset,
};
