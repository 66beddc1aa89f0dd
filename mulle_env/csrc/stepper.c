/* The batched stepper: K games stepped in one call, for the environments' core.
 *
 * mulle_env/stepper.py documents the contract and holds its Python twin (PyStepper); the
 * environments pick one by the engine's backend. The stepper knows no game: it is handed a
 * game's table (game_ops.h, the capsule GAME_OPS of that game's compiled core: Mulle's by
 * default, Casino's from mulle_env.casino.cstate) and that game's new_game, and reaches the
 * rules and the positions only through the table. The games are that core's state objects,
 * so `state(i)` hands out the live game (to read; moves go through play(i, action), which
 * keeps `over` and `to_move` current). The internal random opponent plays
 * legal[randrange(len(legal))] with random.Random(opp_seed) (Mulle's core's MT19937, which
 * is no game's rules), exactly as the `random` agent does in the Python stepper and in the
 * single envs: the same seed gives the same games on both backends.
 *
 * Threads. step, play_batch and write run their games on the stepper's pool (pool.c) with
 * the GIL released: num_threads threads, each game on one of them, each thread with its own
 * context of the game's core (the table's thread_new: Mulle's capture-search scratch). A
 * game's moves depend only on its own position and random stream, so every thread count
 * gives the same games and outputs. Only the table's nogil functions run there: anything
 * touching Python objects (the games' caches, errors) runs before or after, with the GIL.
 * While an allocation-failure hook is armed (Mulle's core's, or the game's) everything runs
 * on the calling thread with the GIL held, so a test can walk every allocation in order.
 * Nothing else may touch the games while a call runs (the stepper refuses a second call from
 * another thread: "busy").
 */
#include "native.h"

#include "game_ops.h"

/* The most move ids a game's table may have: the stepper's ids buffers are on the stack. */
#define STEPPER_MAX_IDS 4096

typedef struct {
    PyObject_HEAD
    int k, internal;
    PyObject *ruleset, *games, *over_obj, *to_move_obj, *new_game, *ops_obj;
    const GameOps *ops; /* the game's table (inside ops_obj, the capsule) */
    int num_ids, obs_size, words; /* the table's, and the bitset words of num_ids */
    Py_buffer over_buf, to_move_buf;
    int have_over, have_to_move;
    void **g;        /* game i's position (inside the games list's object i; opaque, the table reads it) */
    MT *rng;
    int8_t *seat;
    size_t slot_size; /* a Slot and its bitset, rounded up to whole cache lines */
    char *slots;      /* game i's Slot at slots + i * slot_size (64-byte aligned, inside slot_mem) */
    void *slot_mem;
    Pool *pool;
    int busy;         /* a call runs without the GIL */
    struct Pending *pending; /* a step_write_send in flight (until step_write_recv), else NULL */
} Stepper;
typedef struct Pending Pending;

#define LIST_CAP 64 /* ids kept as a list per game; random play reaches 42, more falls back to the bitset */

/* Per game, what the stepper writes of it besides the position, in one cache-line-aligned block: the threads
 * write only their own games' blocks (as per-field arrays, adjacent games' flags shared cache lines, which two
 * threads then passed back and forth every step). */
typedef struct {
    /* With legal_ok and n_legal <= LIST_CAP: the legal ids as a list, ascending, so legal_csr copies them
     * instead of scanning the bitset (44 words a game at Mulle: most of its time before). */
    int16_t list[LIST_CAP];
    int16_t n_legal;
    uint8_t legal_ok;
    uint8_t failed; /* its job failed (the thread's context keeps why) */
    uint8_t dealt;  /* started (start, restart_write): until then the game counts as over */
    /* The game's over (1 until dealt) and seat to move, noted by note() after every change: the stepper's own
     * copy, read by its checks and writers and copied into the shared arrays without a call into the game's
     * table (the caller's arrays are theirs to write; nothing they write makes a move legal). */
    int8_t over, to_move;
    /* The legal ids of the seat to move as a bitset of s->words words, valid while legal_ok: the stepper's
     * own copy, which nothing handed out can reach. Every action is checked against it, so a mask written
     * by a caller cannot make an illegal move legal. */
    uint64_t bits[];
} Slot;

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

static inline PyObject *game_obj(Stepper *s, Py_ssize_t i) { return PyList_GET_ITEM(s->games, i); }
static inline Slot *slot(const Stepper *s, Py_ssize_t i) { return (Slot *)(s->slots + (size_t)i * s->slot_size); }

/* Game i's over and seat to move into its slot, after it changed (any thread: the slot is the game's). */
static inline void note(const Stepper *s, int i) {
    Slot *sl = slot(s, i);
    sl->over = (int8_t)(!sl->dealt || s->ops->over(s->g[i]));
    sl->to_move = (int8_t)s->ops->to_move(s->g[i]);
}

/* Whether game i is over as last noted; a game not dealt yet counts as over (nothing may be played in it). */
static inline int g_over(const Stepper *s, int i) { return slot(s, i)->over; }

/* A failed rules call on the calling thread (main context, GIL held): the game raised its error there; a -1
 * without one is reported, never passed on as success. Returns -1. */
static int main_failure(int i, const char *what) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_RuntimeError, "game %d: %s failed", i, what);
    return -1;
}

/* Game i's legal ids (ascending, as the core lists them; n of them) into its bitset and list. */
static void keep_legal(Stepper *s, int i, const int *ids, int n) {
    Slot *sl = slot(s, i);
    uint64_t *w = sl->bits;
    int16_t *list = sl->list;
    memset(w, 0, (size_t)s->words * sizeof(uint64_t));
    for (int j = 0; j < n; j++) w[ids[j] >> 6] |= 1ULL << (ids[j] & 63);
    if (n <= LIST_CAP) {
        for (int j = 0; j < n; j++) list[j] = (int16_t)ids[j];
        for (int j = 1; j < n; j++)
            if (ids[j] <= ids[j - 1]) { /* out of order (not what the core makes): unusable, -1 first */
                list[0] = -1;
                break;
            }
    }
    sl->n_legal = (int16_t)n;
    sl->legal_ok = 1;
}

/* Game i's legal ids kept (with the GIL, on the calling thread's main context); 0, or -1 + an exception. */
static int ensure_legal(Stepper *s, int i) {
    if (!slot(s, i)->legal_ok) {
        int ids[STEPPER_MAX_IDS];
        int n = g_over(s, i) ? 0 : s->ops->legal_ids(s->g[i], ids);
        if (n < 0) return main_failure(i, "listing the legal moves");
        keep_legal(s, i, ids, n);
    }
    return 0;
}

/* Whether id is legal for the seat to move in game i, by the game's own rules (never by a mask): 1 or 0, or -1
 * + an exception when the rules failed. */
static int is_legal(Stepper *s, int i, long long id) {
    if (id < 0 || id >= s->num_ids || g_over(s, i)) return 0;
    if (ensure_legal(s, i) < 0) return -1;
    return (int)((slot(s, i)->bits[id >> 6] >> (id & 63)) & 1);
}

/* Game i's over and to_move into the shared arrays: after its job, on the calling thread (K bytes each, so
 * a job writing them would share cache lines with the other threads' games). */
static void sync_flags(Stepper *s, int i) {
    const Slot *sl = slot(s, i);
    ((uint8_t *)s->over_buf.buf)[i] = (uint8_t)sl->over;
    ((int8_t *)s->to_move_buf.buf)[i] = sl->to_move;
}

/* After a change of game i on the calling thread: its kept ids stale, its flags noted and synced. */
static void stepper_sync(Stepper *s, int i) {
    slot(s, i)->legal_ok = 0;
    note(s, i);
    sync_flags(s, i);
}

/* The internal random opponent's moves in game i (no Python objects: runs on any thread). */
static int random_moves(Stepper *s, int i) {
    const GameOps *ops = s->ops;
    void *g = s->g[i];
    int ids[STEPPER_MAX_IDS];
    while (!ops->over(g) && ops->to_move(g) != s->seat[i]) {
        int n = ops->legal_ids(g, ids);
        if (n == 0) return -2; /* a position the rules never reach */
        if (n < 0 || ops->apply_id(g, ids[CORE->mt_randbelow(&s->rng[i], n)]) < 0) return -1;
    }
    return 0;
}

static int raise_no_move(int i) {
    PyErr_Format(PyExc_ValueError, "game %d: no legal move for the opponent", i);
    return -1;
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

/* Whether this call may release the GIL and use the pool (not while the failpoint hook walks allocations). */
static inline int threaded(Stepper *s) {
    return *CORE->fail_after <= 0 && (!s->ops->fail_after || *s->ops->fail_after <= 0);
}

static int enter(Stepper *s) {
    if (!s->games) {
        PyErr_SetString(PyExc_RuntimeError, "Stepper not initialized");
        return -1;
    }
    if (s->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the stepper is running a call in another thread; one call at a time");
        return -1;
    }
    if (s->pending) {
        PyErr_SetString(PyExc_RuntimeError, "a step is in flight (step_write_send): step_write_recv() comes first");
        return -1;
    }
    return 0;
}

/* The game table in `capsule` (a game core's GAME_OPS), checked: NULL + an exception if it is none. */
static const GameOps *table_of(PyObject *capsule) {
    const char *name = PyCapsule_CheckExact(capsule) ? PyCapsule_GetName(capsule) : NULL;
    size_t len = name ? strlen(name) : 0;
    if (!name || len < 9 || strcmp(name + len - 9, ".GAME_OPS") != 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "game_ops must be a game core's table (the capsule GAME_OPS of its cstate module, e.g. "
                     "mulle_env.engine.cstate.GAME_OPS), not %.100s",
                     Py_TYPE(capsule)->tp_name);
        return NULL;
    }
    const GameOps *ops = game_ops_from(capsule, name);
    if (!ops) return NULL;
    if (ops->num_ids < 1 || ops->num_ids > STEPPER_MAX_IDS || ops->max_legal < 1 ||
        ops->max_legal > ops->num_ids || ops->obs_size < 1) {
        PyErr_Format(PyExc_ValueError,
                     "the game table %s has %d move ids, at most %d legal and %d floats an observation: the stepper "
                     "takes 1..%d ids (is the game's core configured? import its cstate module first)",
                     name, ops->num_ids, ops->max_legal, ops->obs_size, STEPPER_MAX_IDS);
        return NULL;
    }
    return ops;
}

static int Stepper_init(Stepper *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"num_envs", "ruleset", "internal_random", "over", "to_move", "num_threads",
                             "game_ops", "new_game", NULL};
    int k, internal, n_threads = 1;
    PyObject *rs, *over = Py_None, *to_move = Py_None, *ops_obj = Py_None, *new_game = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iOp|OOiOO", kwlist, &k, &rs, &internal, &over, &to_move, &n_threads,
                                     &ops_obj, &new_game))
        return -1;
    if (k < 1 || k > 1 << 20) {
        PyErr_Format(PyExc_ValueError, "num_envs must be 1..%d, not %d", 1 << 20, k);
        return -1;
    }
    if (n_threads < 1 || n_threads > 1024) {
        PyErr_Format(PyExc_ValueError, "num_threads must be 1..1024, not %d", n_threads);
        return -1;
    }
    if (self->games || self->g || self->new_game) { /* a second __init__, even after a failed first one */
        PyErr_SetString(PyExc_RuntimeError, "a Stepper is initialized once");
        return -1;
    }
    if ((ops_obj == Py_None) != (new_game == Py_None)) {
        PyErr_SetString(PyExc_ValueError, "game_ops and new_game go together: give both (a game core's cstate "
                        "module's GAME_OPS and new_game) or neither (Mulle's)");
        return -1;
    }
    if (ops_obj == Py_None) { /* Mulle's, as before the table */
        PyObject *mod = PyImport_ImportModule("mulle_env.engine.cstate");
        if (!mod) return -1;
        self->new_game = PyObject_GetAttrString(mod, "new_game");
        self->ops_obj = self->new_game ? PyObject_GetAttrString(mod, "GAME_OPS") : NULL;
        Py_DECREF(mod);
    } else {
        Py_INCREF(new_game);
        self->new_game = new_game;
        Py_INCREF(ops_obj);
        self->ops_obj = ops_obj;
    }
    if (!self->new_game || !self->ops_obj) return -1;
    const GameOps *ops = table_of(self->ops_obj);
    if (!ops) return -1;
    self->ops = ops;
    self->num_ids = ops->num_ids;
    self->obs_size = ops->obs_size;
    self->words = (ops->num_ids + 63) / 64;
    self->slot_size = (sizeof(Slot) + (size_t)self->words * sizeof(uint64_t) + 63) / 64 * 64;
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
    self->g = native_failpoint() ? NULL : PyMem_Calloc(k, sizeof(void *));
    self->rng = native_failpoint() ? NULL : PyMem_Calloc(k, sizeof(MT));
    self->seat = native_failpoint() ? NULL : PyMem_Calloc(k, 1);
    self->slot_mem = native_failpoint() ? NULL : PyMem_Calloc((size_t)k * self->slot_size + 64, 1);
    if (self->slot_mem) self->slots = (char *)(((uintptr_t)self->slot_mem + 63) & ~(uintptr_t)63);
    if (!self->g || !self->rng || !self->seat || !self->slot_mem) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    self->pool = pool_new(ops, n_threads);
    if (!self->pool) return -1;
    PyObject *games = native_failpoint() ? NULL : PyList_New(k);
    if (!games) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < k; i++) { /* placeholders, not dealt (slot's dealt 0: over) until start or restart */
        PyObject *g = PyObject_CallFunction(self->new_game, "iO", 0, rs);
        void *pos = g ? ops->state(g) : NULL;
        int ok = pos && i > 0 ? 1 : pos ? ops->ids_ok(g) : -1;
        if (ok == 0)
            PyErr_Format(PyExc_ValueError,
                         "%s under this ruleset gives its moves no ids, and the compiled stepper steps move ids only: "
                         "step it with mulle_env.stepper.PyStepper (the game's make_stepper picks it)",
                         ops->game);
        if (ok < 1) {
            Py_XDECREF(g);
            Py_DECREF(games);
            return -1;
        }
        PyList_SET_ITEM(games, i, g);
        self->g[i] = pos;
    }
    self->games = games;
    for (int i = 0; i < k; i++) stepper_sync(self, i);
    return 0;
}

static int Stepper_traverse(Stepper *self, visitproc visit, void *arg) {
    Py_VISIT(self->ops_obj);
    Py_VISIT(self->ruleset);
    Py_VISIT(self->games);
    Py_VISIT(self->over_obj);
    Py_VISIT(self->to_move_obj);
    Py_VISIT(self->new_game);
    return 0;
}

static void drop_pending(Stepper *self);

/* Finalizers run before the collector clears anything in a cycle: a step in flight ends while its games live. */
static void Stepper_finalize(Stepper *self) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    drop_pending(self);
    PyErr_Restore(t, v, tb);
}

static int Stepper_clear(Stepper *self) {
    drop_pending(self); /* the workers must be done with the games before they go */
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
    pool_free(self->pool); /* through the table: its capsule (no references of its own, so no cycle) goes last */
    Py_CLEAR(self->ops_obj);
    PyMem_Free(self->g);
    PyMem_Free(self->rng);
    PyMem_Free(self->seat);
    PyMem_Free(self->slot_mem);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int check_index(Stepper *s, long long i) {
    if (enter(s) < 0) return -1;
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
    void *pos = g ? self->ops->state(g) : NULL;
    if (!pos) {
        Py_XDECREF(g);
        return NULL;
    }
    PyList_SetItem(self->games, (Py_ssize_t)i, g); /* steals g */
    self->g[i] = pos;
    self->seat[i] = (int8_t)seat;
    slot(self, (int)i)->dealt = 1;
    CORE->mt_seed(&self->rng[i], opp_seed);
    int rc = self->internal ? random_moves(self, (int)i) : 0;
    if (self->internal) self->ops->changed(g);
    stepper_sync(self, (int)i);
    if (rc == -2) raise_no_move((int)i);
    if (rc == -1) main_failure((int)i, "a move");
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

/* ----- the threaded jobs: one item is one game (step, play_batch, restart_write) or one row (write) */

typedef struct {
    Stepper *s;
    const int *idx;     /* play, restart: the games; write: the games of the rows */
    const int *act;     /* play: the actions (by item) */
    const int8_t *seats; /* write, restart: the seats (by item) */
    int internal;       /* play: the internal opponent answers */
    float *obs;         /* write: row by item; restart: K rows, row idx[item] */
    uint8_t *mask;      /* as obs, or NULL */
    int obs_size, num_ids;
    const uint64_t *seeds; /* restart: deal and opponent seeds (2 by item) */
} Job;

static void play_job(void *ctx, int item) {
    Job *j = ctx;
    Stepper *s = j->s;
    int i = j->idx[item];
    int rc = s->ops->apply_id(s->g[i], j->act[item]);
    if (rc == 0 && j->internal) rc = random_moves(s, i);
    slot(s, i)->failed = (uint8_t)(rc < 0 ? -rc : 0);
    note(s, i);
}

/* job(ctx, item) for items 0..n-1: on the pool without the GIL, or (one item, or while the allocation-failure
 * hook walks allocations) on this thread with the GIL, where errors are raised as they happen and the run
 * stops at the first item whose game failed (item q's game: games[q], or q when games is NULL). Returns how
 * many items ran; *pooled says where. */
static int run_items(Stepper *s, PoolJob job, void *ctx, int n, const int *games, int *pooled) {
    *pooled = threaded(s) && n > 1;
    if (*pooled) {
        s->busy = 1;
        Py_BEGIN_ALLOW_THREADS
        pool_run(s->pool, job, ctx, n);
        Py_END_ALLOW_THREADS
        s->busy = 0;
        return n;
    }
    for (int q = 0; q < n; q++) {
        job(ctx, q);
        if (slot(s, games ? games[q] : q)->failed) return q + 1;
    }
    return n;
}

/* Raise what made game `first` fail (the error a thread kept, no legal move, or `what` failed); returns -1. */
static int raise_failure(Stepper *s, int first, int pooled, const char *what) {
    int kept = pooled ? pool_error(s->pool) : (PyErr_Occurred() ? -1 : 0);
    if (slot(s, first)->failed == 2) {
        if (kept < 0) PyErr_Clear();
        return raise_no_move(first);
    }
    if (kept == 0) PyErr_Format(PyExc_RuntimeError, "game %d: %s failed", first, what);
    return -1;
}

/* The games idx[0..n-1] play act[...] (checked legal already), then the internal opponent. */
static int run_plays(Stepper *s, const int *idx, const int *act, int n, int internal) {
    Job job = {s, idx, act, NULL, internal, NULL, NULL, 0, 0, NULL};
    int pooled;
    for (int q = 0; q < n; q++) slot(s, idx[q])->failed = 0;
    n = run_items(s, play_job, &job, n, idx, &pooled);
    int first = -1;
    for (int q = 0; q < n; q++) {
        int i = idx[q];
        s->ops->changed(game_obj(s, i));
        slot(s, i)->legal_ok = 0; /* its flags were noted in its job */
        sync_flags(s, i);
        if (slot(s, i)->failed && first < 0) first = i;
    }
    return first < 0 ? 0 : raise_failure(s, first, pooled, "a move");
}

/* The (game, action) pairs of `acts` for every `active` game, each checked legal first: a refused call plays
 * nothing. idx and act must hold k entries; returns how many, or -1. */
static int gather_plays(Stepper *s, PyObject *acts, PyObject *active, int *idx, int *act) {
    IntVec a, m;
    if (intvec_open(acts, &a, "actions") < 0) return -1;
    if (intvec_open(active, &m, "active") < 0) {
        intvec_close(&a);
        return -1;
    }
    int n = -1;
    if (a.n < s->k || m.n < s->k) {
        PyErr_Format(PyExc_ValueError, "actions and active need %d entries", s->k);
        goto done;
    }
    int count = 0;
    for (int i = 0; i < s->k; i++) {
        long long on, id;
        if (intvec_get(&m, i, &on) < 0) goto done;
        if (!on) continue;
        if (intvec_get(&a, i, &id) < 0) goto done;
        int legal = is_legal(s, i, id);
        if (legal < 0) goto done;
        if (!legal) {
            PyErr_Format(PyExc_ValueError, "game %d: action %lld is not legal there (the game's own legal ids "
                         "decide, not a mask)", i, id);
            goto done;
        }
        idx[count] = i;
        act[count++] = (int)id;
    }
    n = count;
done:
    intvec_close(&a);
    intvec_close(&m);
    return n;
}

static PyObject *Stepper_step(Stepper *self, PyObject *args) {
    PyObject *acts, *active;
    if (!PyArg_ParseTuple(args, "OO", &acts, &active)) return NULL;
    if (enter(self) < 0) return NULL;
    int *buf = native_failpoint() ? NULL : PyMem_Malloc(2 * (size_t)self->k * sizeof(int));
    if (!buf) return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    int n = gather_plays(self, acts, active, buf, buf + self->k);
    int rc = n < 0 ? -1 : run_plays(self, buf, buf + self->k, n, self->internal);
    PyMem_Free(buf);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

/* play_batch(idx, actions): game idx[j] plays actions[j] for the seat to move (self-play's batched
 * policy): every action checked first, then all played on the pool. */
static PyObject *Stepper_play_batch(Stepper *self, PyObject *args) {
    PyObject *idx_obj, *acts;
    if (!PyArg_ParseTuple(args, "OO", &idx_obj, &acts)) return NULL;
    if (enter(self) < 0) return NULL;
    IntVec iv, av;
    if (intvec_open(idx_obj, &iv, "idx") < 0) return NULL;
    if (intvec_open(acts, &av, "actions") < 0) {
        intvec_close(&iv);
        return NULL;
    }
    PyObject *ret = NULL;
    int *buf = NULL;
    Py_ssize_t n = iv.n;
    if (av.n != n) {
        PyErr_SetString(PyExc_ValueError, "idx and actions differ in length");
        goto done;
    }
    if (n > self->k) {
        PyErr_Format(PyExc_ValueError, "play_batch takes each game at most once (%d games, %zd given)", self->k, n);
        goto done;
    }
    buf = native_failpoint() ? NULL : PyMem_Malloc(2 * (size_t)(n ? n : 1) * sizeof(int));
    if (!buf) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t q = 0; q < n; q++) {
        long long i, id;
        if (intvec_get(&iv, q, &i) < 0 || intvec_get(&av, q, &id) < 0) goto done;
        if (i < 0 || i >= self->k) {
            PyErr_Format(PyExc_IndexError, "game index %lld outside 0..%d", i, self->k - 1);
            goto done;
        }
        for (Py_ssize_t r = 0; r < q; r++)
            if (buf[r] == (int)i) {
                PyErr_Format(PyExc_ValueError, "play_batch takes each game at most once: game %lld twice", i);
                goto done;
            }
        int legal = is_legal(self, (int)i, id);
        if (legal < 0) goto done;
        if (!legal) {
            PyErr_Format(PyExc_ValueError, "game %lld: action %lld is not legal there", i, id);
            goto done;
        }
        buf[q] = (int)i;
        buf[n + q] = (int)id;
    }
    if (run_plays(self, buf, buf + n, (int)n, 0) < 0) goto done;
    Py_INCREF(Py_None);
    ret = Py_None;
done:
    PyMem_Free(buf);
    intvec_close(&iv);
    intvec_close(&av);
    return ret;
}

static PyObject *Stepper_play(Stepper *self, PyObject *args) {
    long long i, id;
    if (!PyArg_ParseTuple(args, "LL", &i, &id)) return NULL;
    if (check_index(self, i) < 0) return NULL;
    int legal = is_legal(self, (int)i, id);
    if (legal < 0) return NULL;
    if (!legal) {
        PyErr_Format(PyExc_ValueError, "game %lld: action %lld is not legal there", i, id);
        return NULL;
    }
    int rc = self->ops->apply_id(self->g[i], (int)id);
    self->ops->changed(game_obj(self, (Py_ssize_t)i));
    stepper_sync(self, (int)i);
    if (rc < 0) return main_failure((int)i, "a move"), NULL;
    Py_RETURN_NONE;
}

/* Seat `seat`'s observation of game i into obs (and its legal mask into mask, unless NULL); the seat to
 * move's legal ids are kept for check() and legal_csr(). Returns -1 (the thread's context keeps why). */
static int write_row(Stepper *s, int i, int seat, float *obs, uint8_t *mask, int num_ids) {
    const GameOps *ops = s->ops;
    void *g = s->g[i];
    const Slot *sl = slot(s, i);
    if (ops->write_obs(g, seat, obs) < 0) return -1;
    if (!sl->over && sl->to_move == seat) {
        int ids[STEPPER_MAX_IDS], n = ops->legal_ids(g, ids);
        if (n < 0) return -1;
        keep_legal(s, i, ids, n);
        if (mask) {
            memset(mask, 0, num_ids);
            for (int q = 0; q < n; q++) mask[ids[q]] = 1;
        }
    } else if (mask) {
        memset(mask, 0, num_ids);
    }
    return 0;
}

/* write_row into row `row` of obs and mask (mask NULL: none), marking game i failed if it fails (in a job). */
static void write_or_fail(Stepper *s, int i, int seat, float *obs, uint8_t *mask, size_t row, int obs_size,
                          int num_ids) {
    if (write_row(s, i, seat, obs + row * obs_size, mask ? mask + row * num_ids : NULL, num_ids) < 0)
        slot(s, i)->failed = 1;
}

/* After game i's moves in a job (rc: how they went): its kept legal ids are stale, its flags noted, and a
 * failure is marked. Returns whether the moves went through. over and to_move are synced into the shared
 * arrays after the job, on the calling thread. */
static int moved(Stepper *s, int i, int rc) {
    slot(s, i)->legal_ok = 0;
    note(s, i);
    if (rc < 0) slot(s, i)->failed = (uint8_t)-rc;
    return rc >= 0;
}

static void write_job(void *ctx, int j) {
    Job *job = ctx;
    write_or_fail(job->s, job->idx[j], job->seats[j], job->obs, job->mask, (size_t)j, job->obs_size, job->num_ids);
}

/* Reads idx and seats into C arrays (checked); returns n, or -1. *out is PyMem-allocated (2n ints' room). */
static Py_ssize_t read_rows(Stepper *s, PyObject *idx, PyObject *seats, int **out) {
    IntVec iv, sv;
    *out = NULL;
    if (intvec_open(idx, &iv, "idx") < 0) return -1;
    if (intvec_open(seats, &sv, "seats") < 0) {
        intvec_close(&iv);
        return -1;
    }
    Py_ssize_t n = iv.n, ret = -1;
    if (sv.n != n) {
        PyErr_SetString(PyExc_ValueError, "idx and seats differ in length");
        goto done;
    }
    int *buf = native_failpoint() ? NULL : PyMem_Malloc((size_t)(n ? n : 1) * (sizeof(int) + 1));
    if (!buf) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    *out = buf;
    int8_t *st = (int8_t *)(buf + n);
    for (Py_ssize_t j = 0; j < n; j++) {
        long long i, seat;
        if (intvec_get(&iv, j, &i) < 0 || intvec_get(&sv, j, &seat) < 0) goto done;
        if (check_index(s, i) < 0) goto done;
        if (seat != 0 && seat != 1) {
            PyErr_Format(PyExc_ValueError, "seats[%zd] must be 0 or 1, not %lld", j, seat);
            goto done;
        }
        buf[j] = (int)i;
        st[j] = (int8_t)seat;
    }
    ret = n;
done:
    intvec_close(&iv);
    intvec_close(&sv);
    if (ret < 0) {
        PyMem_Free(*out);
        *out = NULL;
    }
    return ret;
}

/* obs (rows x obs_size float32) and, unless mask is None, mask (rows x num_ids 1-byte items), writable and
 * C-contiguous: the row buffers write, step_write and restart_write fill. -1: none taken (an exception set). */
static int open_rows(Stepper *s, PyObject *obs, PyObject *mask, Py_ssize_t rows, Py_buffer *ob, Py_buffer *mb,
                     int *have_mb) {
    *have_mb = 0;
    if (get_buffer(obs, ob, rows * s->obs_size * (Py_ssize_t)sizeof(float), "f", "obs") < 0) return -1;
    if (mask == Py_None) return 0;
    if (PyObject_GetBuffer(mask, mb, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(ob);
        return -1;
    }
    if (mb->itemsize != 1 || mb->len < rows * s->num_ids) {
        PyErr_Format(PyExc_ValueError, "mask must be a writable int8/uint8/bool buffer of %zd x %d", rows, s->num_ids);
        PyBuffer_Release(mb);
        PyBuffer_Release(ob);
        return -1;
    }
    *have_mb = 1;
    return 0;
}

/* write(idx, seats, obs, mask): row j = observation of seat seats[j] in game idx[j], and its legal mask
 * (mask None: no dense mask; the legal ids are still kept for check() and legal_csr()). */
static PyObject *Stepper_write(Stepper *self, PyObject *args) {
    PyObject *idx, *seats, *obs, *mask;
    if (!PyArg_ParseTuple(args, "OOOO", &idx, &seats, &obs, &mask)) return NULL;
    if (enter(self) < 0) return NULL;
    int *rows;
    Py_ssize_t n = read_rows(self, idx, seats, &rows);
    if (n < 0) return NULL;
    PyObject *ret = NULL;
    Py_buffer ob, mb;
    int have_ob = 0, have_mb = 0;
    if (open_rows(self, obs, mask, n, &ob, &mb, &have_mb) < 0) goto done;
    have_ob = 1;
    Job job = {self, rows, NULL, (const int8_t *)(rows + n), 0, (float *)ob.buf,
               have_mb ? (uint8_t *)mb.buf : NULL, self->obs_size, self->num_ids, NULL};
    for (Py_ssize_t j = 0; j < n; j++) slot(self, rows[j])->failed = 0;
    int pooled;
    run_items(self, write_job, &job, (int)n, rows, &pooled);
    if (pooled ? pool_error(self->pool) < 0 : PyErr_Occurred() != NULL) goto done;
    Py_INCREF(Py_None);
    ret = Py_None;
done:
    if (have_ob) PyBuffer_Release(&ob);
    if (have_mb) PyBuffer_Release(&mb);
    PyMem_Free(rows);
    return ret;
}

/* The CSR arrays from Python: offsets (int32, n + 1 entries) and ids (int32, any length). -1: none taken. */
static int open_csr(PyObject *ids_obj, PyObject *off_obj, Py_ssize_t n, Py_buffer *ib, Py_buffer *ofb) {
    if (get_buffer(off_obj, ofb, (n + 1) * (Py_ssize_t)sizeof(int32_t), "i", "offsets") < 0) return -1;
    if (PyObject_GetBuffer(ids_obj, ib, PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(ofb);
        return -1;
    }
    if (ib->itemsize != 4 || !ib->format || strchr("iIl", ib->format[strlen(ib->format) - 1]) == NULL) {
        PyErr_SetString(PyExc_ValueError, "ids must be a writable contiguous int32 buffer");
        PyBuffer_Release(ib);
        PyBuffer_Release(ofb);
        return -1;
    }
    return 0;
}

/* Row j's legal ids (game rows[j], or game j when rows is NULL, for seat seats[j]; none unless it is to move)
 * into out[off[j]:off[j + 1]], ascending; off always, out only if the total fits in cap. Returns the total, or
 * -1 + an exception when the rules failed. */
static Py_ssize_t csr_fill(Stepper *s, const int *rows, const int8_t *seats, Py_ssize_t n, int32_t *off, int32_t *out,
                           Py_ssize_t cap) {
    Py_ssize_t total = 0;
    off[0] = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        int i = rows ? rows[j] : (int)j;
        const Slot *sl = slot(s, i);
        if (!sl->over && sl->to_move == seats[j]) {
            if (ensure_legal(s, i) < 0) return -1;
            total += slot(s, i)->n_legal;
        }
        off[j + 1] = (int32_t)total;
    }
    if (total > cap) return total;
    for (Py_ssize_t j = 0; j < n; j++) {
        int count = off[j + 1] - off[j], i = rows ? rows[j] : (int)j;
        if (count == 0) continue;
        int32_t *o = out + off[j];
        const Slot *sl = slot(s, i);
        if (count <= LIST_CAP && sl->list[0] >= 0) {
            for (int q = 0; q < count; q++) o[q] = sl->list[q];
            continue;
        }
        const uint64_t *w = sl->bits;
        for (int q = 0; q < s->words; q++)
            for (uint64_t x = w[q]; x; x &= x - 1) *o++ = q * 64 + __builtin_ctzll(x);
    }
    return total;
}

/* ----- step_write: step and write in one pass over the pool */

typedef struct {
    Stepper *s;
    const int *act;      /* by game: the learner's action, or -1 for an inactive game */
    const int8_t *seats; /* by game: the seat whose row is written */
    int internal;
    float *obs;
    uint8_t *mask;       /* or NULL */
    int obs_size, num_ids;
    int only_active;     /* write only the rows of the games that move (step_write_send) */
} StepWriteJob;

/* Game i plays its action (the internal opponent answering), then row i is written: one hand-off to the
 * pool for the whole env step instead of two, and each game's data touched once while it is in cache. */
static void step_write_job(void *ctx, int i) {
    StepWriteJob *j = ctx;
    Stepper *s = j->s;
    if (j->act[i] >= 0) {
        int rc = s->ops->apply_id(s->g[i], j->act[i]);
        if (rc == 0 && j->internal) rc = random_moves(s, i);
        if (!moved(s, i, rc)) return;
    } else if (j->only_active) {
        return; /* another batch's game: its row may be read meanwhile */
    }
    write_or_fail(s, i, j->seats[i], j->obs, j->mask, (size_t)i, j->obs_size, j->num_ids);
}

/* What a step_write holds from its checks to its end: its buffers and the job (in the stepper between
 * step_write_send and step_write_recv). */
struct Pending {
    int *buf; /* idx, act, by_game (k ints each), then the k seats */
    int n;    /* plays: idx[0..n-1], act[...] */
    Py_buffer ob, mb, ib, ofb;
    int have_ob, have_mb, have_csr;
    StepWriteJob job;
    int pooled; /* the job was published to the pool (pool_start): pool_finish ends it */
};

static void pending_release(Pending *pd) {
    if (pd->have_ob) PyBuffer_Release(&pd->ob);
    if (pd->have_mb) PyBuffer_Release(&pd->mb);
    if (pd->have_csr) {
        PyBuffer_Release(&pd->ib);
        PyBuffer_Release(&pd->ofb);
    }
    PyMem_Free(pd->buf);
    memset(pd, 0, sizeof(*pd));
}

/* step_write's checks and set-up, nothing moved: the arguments, every action judged legal, the buffers held,
 * the job made. 0, or -1 with an exception and nothing held. */
static int sw_prepare(Stepper *self, PyObject *args, Pending *pd, int only_active) {
    PyObject *acts, *active, *seats_obj, *obs, *mask, *ids_obj = Py_None, *off_obj = Py_None;
    memset(pd, 0, sizeof(*pd));
    if (!PyArg_ParseTuple(args, "OOOOO|OO", &acts, &active, &seats_obj, &obs, &mask, &ids_obj, &off_obj)) return -1;
    if (enter(self) < 0) return -1;
    int k = self->k;
    pd->buf = native_failpoint() ? NULL : PyMem_Malloc(3 * (size_t)k * sizeof(int) + (size_t)k);
    if (!pd->buf) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    int *idx = pd->buf, *act = pd->buf + k, *by_game = pd->buf + 2 * k;
    int8_t *seats = (int8_t *)(pd->buf + 3 * k);
    IntVec sv;
    if (intvec_open(seats_obj, &sv, "seats") < 0) goto fail;
    if (sv.n != k) {
        PyErr_Format(PyExc_ValueError, "seats needs %d entries, not %zd", k, sv.n);
        intvec_close(&sv);
        goto fail;
    }
    for (int i = 0; i < k; i++) {
        long long seat;
        if (intvec_get(&sv, i, &seat) < 0 || (seat != 0 && seat != 1)) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "seats[%d] must be 0 or 1, not %lld", i, seat);
            intvec_close(&sv);
            goto fail;
        }
        seats[i] = (int8_t)seat;
    }
    intvec_close(&sv);
    if (open_rows(self, obs, mask, k, &pd->ob, &pd->mb, &pd->have_mb) < 0) goto fail;
    pd->have_ob = 1;
    if ((ids_obj == Py_None) != (off_obj == Py_None)) {
        PyErr_SetString(PyExc_ValueError, "ids and offsets go together: give both or neither");
        goto fail;
    }
    if (ids_obj != Py_None) {
        if (open_csr(ids_obj, off_obj, k, &pd->ib, &pd->ofb) < 0) goto fail;
        pd->have_csr = 1;
    }
    pd->n = gather_plays(self, acts, active, idx, act);
    if (pd->n < 0) goto fail;
    for (int i = 0; i < k; i++) {
        by_game[i] = -1;
        slot(self, i)->failed = 0;
    }
    for (int q = 0; q < pd->n; q++) by_game[idx[q]] = act[q];
    StepWriteJob job = {self, by_game, seats, self->internal, (float *)pd->ob.buf,
                        pd->have_mb ? (uint8_t *)pd->mb.buf : NULL, self->obs_size, self->num_ids, only_active};
    pd->job = job;
    return 0;
fail:
    pending_release(pd);
    return -1;
}

/* After the job (done_items of the k ran): the games' caches and flags, a failure raised, the CSR. (ended, total). */
static PyObject *sw_conclude(Stepper *self, Pending *pd, int done_items, int pooled) {
    const int *idx = pd->buf;
    int n = pd->n, first = -1;
    for (int q = 0; q < n; q++)
        if (idx[q] < done_items) {
            self->ops->changed(game_obj(self, idx[q]));
            sync_flags(self, idx[q]);
        }
    for (int i = 0; i < done_items && first < 0; i++)
        if (slot(self, i)->failed) first = i;
    if (first >= 0) {
        raise_failure(self, first, pooled, "a move or its observation");
        return NULL;
    }
    Py_ssize_t ended = 0, total = -1;
    for (int q = 0; q < n; q++) ended += g_over(self, idx[q]);
    if (pd->have_csr) {
        total = csr_fill(self, NULL, (const int8_t *)(pd->buf + 3 * self->k), self->k, pd->ofb.buf, pd->ib.buf,
                         pd->ib.len / 4);
        if (total < 0) return NULL;
    }
    return Py_BuildValue("(nn)", ended, total);
}

/* step_write(actions, active, seats, obs, mask, ids=None, offsets=None): step(actions, active), then
 * write(range(K), seats, obs, mask) and, given ids and offsets, legal_csr(range(K), seats, ids, offsets), in one
 * pass. Every argument is checked, and every action judged legal, before any game moves. Returns (ended, total):
 * how many active games are over after the step, and legal_csr's total (-1 without ids). */
static PyObject *Stepper_step_write(Stepper *self, PyObject *args) {
    Pending pd;
    if (sw_prepare(self, args, &pd, 0) < 0) return NULL;
    int pooled, done_items = run_items(self, step_write_job, &pd.job, self->k, NULL, &pooled);
    PyObject *ret = sw_conclude(self, &pd, done_items, pooled);
    pending_release(&pd);
    return ret;
}

/* step_write_send(...): step_write's arguments, checks and refusals; then the step starts on the pool's workers
 * and the call returns at once, the games in flight until step_write_recv() (which takes part in the work and
 * returns step_write's result). Unlike step_write it writes only the rows of the active games, so the other
 * games' rows of obs and mask may be read meanwhile (ids and offsets are written by step_write_recv). The stepper
 * refuses every other call until then. On one thread (or while the allocation-failure hook is armed) the step
 * runs in step_write_recv. */
static PyObject *Stepper_step_write_send(Stepper *self, PyObject *args) {
    Pending *pd = native_failpoint() ? NULL : PyMem_Malloc(sizeof(Pending));
    if (!pd) return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    if (sw_prepare(self, args, pd, 1) < 0) {
        PyMem_Free(pd);
        return NULL;
    }
    pd->pooled = threaded(self) && self->k > 1;
    if (pd->pooled) pool_start(self->pool, step_write_job, &pd->job, self->k);
    self->pending = pd;
    Py_RETURN_NONE;
}

/* The games of a step in flight, finished (GIL released for the pool's part); the pending step taken out, or
 * NULL and a RuntimeError when the step went to the workers of the process this one was forked from. *pooled:
 * whether the pool ran it (its threads keep any error). */
static Pending *sw_settle(Stepper *self, int *done_items, int *pooled) {
    Pending *pd = self->pending;
    self->pending = NULL;
    if (pd->pooled && pool_inherited(self->pool)) {
        pending_release(pd);
        PyMem_Free(pd);
        PyErr_SetString(PyExc_RuntimeError, "this process was forked while a step was in flight (step_write_send): "
                        "its games' state here is unknown; start them again");
        return NULL;
    }
    *pooled = pd->pooled;
    if (pd->pooled) {
        self->busy = 1;
        Py_BEGIN_ALLOW_THREADS
        pool_finish(self->pool);
        Py_END_ALLOW_THREADS
        self->busy = 0;
        *done_items = self->k;
    } else {
        *done_items = run_items(self, step_write_job, &pd->job, self->k, NULL, pooled);
    }
    return pd;
}

/* A step in flight finished and forgotten (the stepper is going away): nothing raised, no game's flags synced. */
static void drop_pending(Stepper *self) {
    Pending *pd = self->pending;
    if (!pd) return;
    self->pending = NULL;
    /* The workers need no GIL; the games must outlive their job (in a forked child the workers are not there). */
    if (pd->pooled && !pool_inherited(self->pool)) pool_finish(self->pool);
    pending_release(pd);
    PyMem_Free(pd);
}

/* step_write_recv(): the step step_write_send started, finished: step_write's result (ended, total). */
static PyObject *Stepper_step_write_recv(Stepper *self, PyObject *Py_UNUSED(ignored)) {
    if (!self->pending) {
        PyErr_SetString(PyExc_RuntimeError, "no step in flight: step_write_recv() answers a step_write_send()");
        return NULL;
    }
    int done_items, pooled;
    Pending *pd = sw_settle(self, &done_items, &pooled);
    if (!pd) return NULL;
    PyObject *ret = sw_conclude(self, pd, done_items, pooled);
    pending_release(pd);
    PyMem_Free(pd);
    return ret;
}

/* ----- restart_write: finished games dealt anew in their own objects, then written */

/* Job over the restarted games idx[j] (seats: by item; obs and mask: K rows, row idx[j] written). */
static void restart_job(void *ctx, int j) {
    Job *job = ctx;
    Stepper *s = job->s;
    int i = job->idx[j];
    /* Seeding the opponent's Mersenne Twister as random.Random(seed) does is most of a restart's work (about
     * 26,000 instructions, callgrind): here on the threads, not with the GIL before the job. */
    CORE->mt_seed(&s->rng[i], job->seeds[2 * j + 1]);
    if (moved(s, i, s->internal ? random_moves(s, i) : 0))
        write_or_fail(s, i, job->seats[j], job->obs, job->mask, (size_t)i, job->obs_size, job->num_ids);
}

/* One whole number of the seed domain (0..2**64 - 1) from a Python int, or -1 + a ValueError naming it. */
static int read_seed(PyObject *o, const char *what, Py_ssize_t j, uint64_t *out) {
    if (!PyLong_Check(o) || PyBool_Check(o)) {
        PyErr_Format(PyExc_ValueError, "%s[%zd] must be an int, not %R", what, j, o);
        return -1;
    }
    *out = PyLong_AsUnsignedLongLong(o);
    if (*out == (uint64_t)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s[%zd] must be a whole number from 0 to 2**64 - 1, not %R", what, j, o);
        return -1;
    }
    return 0;
}

/* restart_write(idx, game_seeds, seats, opp_seeds, obs, mask): start(idx[j], game_seeds[j], seats[j], opp_seeds[j])
 * for each j, dealing into the game's own object (a state handed out before is dealt anew), then seat seats[j]'s
 * observation and mask of game idx[j] into row idx[j] of obs and mask (K rows each; mask None: none). Every
 * argument is checked before any game changes; a failure after that (out of memory, a position the rules never
 * reach) leaves the games dealt so far dealt, as a failed start would. The vector env's restart of finished
 * games: no Python object per game. */
static PyObject *Stepper_restart_write(Stepper *self, PyObject *args) {
    PyObject *idx_obj, *gs_obj, *seats_obj, *os_obj, *obs, *mask;
    if (!PyArg_ParseTuple(args, "OOOOOO", &idx_obj, &gs_obj, &seats_obj, &os_obj, &obs, &mask)) return NULL;
    if (enter(self) < 0) return NULL;
    int k = self->k;
    PyObject *ret = NULL, *fi = NULL, *fg = NULL, *fs = NULL, *fo = NULL;
    Py_buffer ob, mb;
    int have_ob = 0, have_mb = 0;
    int *idx = NULL;
    uint64_t *seeds = NULL;
    fi = PySequence_Fast(idx_obj, "idx must be a sequence of game indices");
    fg = fi ? PySequence_Fast(gs_obj, "game_seeds must be a sequence of seeds") : NULL;
    fs = fg ? PySequence_Fast(seats_obj, "seats must be a sequence of seats") : NULL;
    fo = fs ? PySequence_Fast(os_obj, "opp_seeds must be a sequence of seeds") : NULL;
    if (!fo) goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fi);
    if (PySequence_Fast_GET_SIZE(fg) != n || PySequence_Fast_GET_SIZE(fs) != n || PySequence_Fast_GET_SIZE(fo) != n) {
        PyErr_SetString(PyExc_ValueError, "idx, game_seeds, seats and opp_seeds differ in length");
        goto done;
    }
    if (n > k) {
        PyErr_Format(PyExc_ValueError, "restart_write takes each game at most once (%d games, %zd given)", k, n);
        goto done;
    }
    idx = native_failpoint() ? NULL : PyMem_Malloc((size_t)(n ? n : 1) * (sizeof(int) + 1));
    seeds = native_failpoint() ? NULL : PyMem_Malloc((size_t)(n ? n : 1) * 2 * sizeof(uint64_t));
    if (!idx || !seeds) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    int8_t *seats = (int8_t *)(idx + n);
    for (Py_ssize_t j = 0; j < n; j++) {
        long long i = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fi, j));
        if (i == -1 && PyErr_Occurred()) goto done;
        if (check_index(self, i) < 0) goto done;
        for (Py_ssize_t r = 0; r < j; r++)
            if (idx[r] == (int)i) {
                PyErr_Format(PyExc_ValueError, "restart_write takes each game at most once: game %lld twice", i);
                goto done;
            }
        long seat = PyLong_AsLong(PySequence_Fast_GET_ITEM(fs, j));
        if (seat == -1 && PyErr_Occurred()) goto done;
        if (seat != 0 && seat != 1) {
            PyErr_Format(PyExc_ValueError, "seats[%zd] must be 0 or 1, not %ld", j, seat);
            goto done;
        }
        if (read_seed(PySequence_Fast_GET_ITEM(fg, j), "game_seeds", j, &seeds[2 * j]) < 0 ||
            read_seed(PySequence_Fast_GET_ITEM(fo, j), "opp_seeds", j, &seeds[2 * j + 1]) < 0)
            goto done;
        idx[j] = (int)i;
        seats[j] = (int8_t)seat;
    }
    if (open_rows(self, obs, mask, k, &ob, &mb, &have_mb) < 0) goto done;
    have_ob = 1;
    for (Py_ssize_t j = 0; j < n; j++) { /* the deals, with the GIL (each state's seed is a Python int) */
        int i = idx[j];
        if (self->ops->redeal(game_obj(self, i), seeds[2 * j]) < 0) { /* out of memory: the deals made stand */
            for (Py_ssize_t r = 0; r <= j; r++) {
                if (r < j) CORE->mt_seed(&self->rng[idx[r]], seeds[2 * r + 1]); /* as start() leaves them */
                stepper_sync(self, idx[r]);
            }
            goto done;
        }
        self->seat[i] = seats[j];
        slot(self, i)->failed = 0;
        slot(self, i)->dealt = 1;
    }
    Job job = {self, idx, NULL, seats, self->internal, (float *)ob.buf, have_mb ? (uint8_t *)mb.buf : NULL,
               self->obs_size, self->num_ids, seeds};
    int pooled, ran = run_items(self, restart_job, &job, (int)n, idx, &pooled);
    int first = -1;
    for (int j = 0; j < ran; j++) {
        self->ops->changed(game_obj(self, idx[j]));
        sync_flags(self, idx[j]);
        if (slot(self, idx[j])->failed && first < 0) first = idx[j];
    }
    for (Py_ssize_t j = ran; j < n; j++) { /* dealt, not written: their opponents seeded, over/to_move current */
        CORE->mt_seed(&self->rng[idx[j]], seeds[2 * j + 1]);
        stepper_sync(self, idx[j]);
    }
    if (first >= 0) {
        raise_failure(self, first, pooled, "a restart");
        goto done;
    }
    Py_INCREF(Py_None);
    ret = Py_None;
done:
    if (have_ob) PyBuffer_Release(&ob);
    if (have_mb) PyBuffer_Release(&mb);
    PyMem_Free(idx);
    PyMem_Free(seeds);
    Py_XDECREF(fi);
    Py_XDECREF(fg);
    Py_XDECREF(fs);
    Py_XDECREF(fo);
    return ret;
}

/* legal_csr(idx, seats, ids, offsets): the legal ids of seat seats[j] in game idx[j] (none unless it is to
 * move) in CSR form: row j's are ids[offsets[j]:offsets[j + 1]], ascending. offsets (int32, n + 1) is always
 * written; ids (int32) only if it has room. Returns the total, so a caller with too small an ids grows it. */
static PyObject *Stepper_legal_csr(Stepper *self, PyObject *args) {
    PyObject *idx, *seats, *ids_obj, *off_obj;
    if (!PyArg_ParseTuple(args, "OOOO", &idx, &seats, &ids_obj, &off_obj)) return NULL;
    if (enter(self) < 0) return NULL;
    int *rows;
    Py_ssize_t n = read_rows(self, idx, seats, &rows);
    if (n < 0) return NULL;
    PyObject *ret = NULL;
    Py_buffer ib, ofb;
    if (open_csr(ids_obj, off_obj, n, &ib, &ofb) == 0) {
        Py_ssize_t total = csr_fill(self, rows, (const int8_t *)(rows + n), n, ofb.buf, ib.buf, ib.len / 4);
        ret = total < 0 ? NULL : PyLong_FromSsize_t(total);
        PyBuffer_Release(&ib);
        PyBuffer_Release(&ofb);
    }
    PyMem_Free(rows);
    return ret;
}

/* ok[i] = 1 where game i is inactive or actions[i] is legal there, else 0; returns how many are not. */
static PyObject *Stepper_check(Stepper *self, PyObject *args) {
    PyObject *acts, *active, *ok;
    if (!PyArg_ParseTuple(args, "OOO", &acts, &active, &ok)) return NULL;
    if (enter(self) < 0) return NULL;
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
        int legal = on ? is_legal(self, i, id) : 1;
        if (legal < 0) goto done;
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

/* is_legal(i, action): whether action is legal for the seat to move in game i, by the game's own legal ids (the
 * ones kept since its last change, so the env's check of the learner's action costs no rules call; False once
 * over, and for any int outside the ids). */
static PyObject *Stepper_is_legal(Stepper *self, PyObject *args) {
    long long i;
    PyObject *action;
    if (!PyArg_ParseTuple(args, "LO", &i, &action)) return NULL;
    if (check_index(self, i) < 0) return NULL;
    if (!PyLong_Check(action)) {
        PyErr_Format(PyExc_TypeError, "action must be an int, not %.100s", Py_TYPE(action)->tp_name);
        return NULL;
    }
    int overflow;
    long long id = PyLong_AsLongLongAndOverflow(action, &overflow);
    if (id == -1 && PyErr_Occurred()) return NULL;
    int legal = overflow ? 0 : is_legal(self, (int)i, id);
    if (legal < 0) return NULL;
    return PyBool_FromLong(legal);
}

static PyObject *Stepper_scores(Stepper *self, PyObject *arg) {
    long long i = PyLong_AsLongLong(arg);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (check_index(self, i) < 0) return NULL;
    int64_t t[2] = {0, 0};
    self->ops->totals(self->g[i], t);
    return Py_BuildValue("(LL)", (long long)t[0], (long long)t[1]);
}

static PyObject *Stepper_state(Stepper *self, PyObject *arg) {
    long long i = PyLong_AsLongLong(arg);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (check_index(self, i) < 0) return NULL;
    PyObject *g = game_obj(self, (Py_ssize_t)i);
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
static PyObject *Stepper_get_num_threads(Stepper *self, void *c) {
    return PyLong_FromLong(self->pool ? pool_threads(self->pool) : 0);
}

static PyGetSetDef Stepper_getset[] = {
    {"over", (getter)Stepper_get_over, NULL, "Per game: over (the buffer given, or a bytearray).", NULL},
    {"to_move", (getter)Stepper_get_to_move, NULL, "Per game: the seat to move (int8).", NULL},
    {"num_envs", (getter)Stepper_get_num_envs, NULL, "K, the number of games.", NULL},
    {"num_threads", (getter)Stepper_get_num_threads, NULL, "Threads the games are stepped on.", NULL},
    {NULL}};

static PyMethodDef Stepper_methods[] = {
    {"start", (PyCFunction)Stepper_start, METH_VARARGS,
     "start(i, game_seed, seat, opp_seed): deal game i; the internal random opponent moves until the learner's turn."},
    {"step", (PyCFunction)Stepper_step, METH_VARARGS,
     "step(actions, active): play actions[i] for the learner in every active game, then the internal opponent "
     "(on the pool, without the GIL); an illegal action raises before any game moves."},
    {"play", (PyCFunction)Stepper_play, METH_VARARGS, "play(i, action): one legal action for the seat to move."},
    {"play_batch", (PyCFunction)Stepper_play_batch, METH_VARARGS,
     "play_batch(idx, actions): game idx[j] plays actions[j] for the seat to move (on the pool); all checked first."},
    {"write", (PyCFunction)Stepper_write, METH_VARARGS,
     "write(idx, seats, obs, mask): row j = observation and legal mask (mask None: none) of seat seats[j] in "
     "game idx[j] (on the pool)."},
    {"step_write_send", (PyCFunction)Stepper_step_write_send, METH_VARARGS,
     "step_write_send(actions, active, seats, obs, mask, ids=None, offsets=None): step_write's checks, then the "
     "step starts on the pool's workers and the call returns; step_write_recv() ends it."},
    {"step_write_recv", (PyCFunction)Stepper_step_write_recv, METH_NOARGS,
     "step_write_recv() -> (ended, total): the step step_write_send started, finished (the caller's thread takes "
     "part)."},
    {"step_write", (PyCFunction)Stepper_step_write, METH_VARARGS,
     "step_write(actions, active, seats, obs, mask, ids=None, offsets=None): step(actions, active) then "
     "write(range(K), seats, obs, mask) (and legal_csr(range(K), seats, ids, offsets)) in one pass on the pool; "
     "everything is checked before any game moves. Returns (active games now over, the CSR total or -1)."},
    {"restart_write", (PyCFunction)Stepper_restart_write, METH_VARARGS,
     "restart_write(idx, game_seeds, seats, opp_seeds, obs, mask): start each game idx[j] anew in its own object, "
     "then write its row idx[j] of obs and mask (K rows; mask None: none); all checked first."},
    {"legal_csr", (PyCFunction)Stepper_legal_csr, METH_VARARGS,
     "legal_csr(idx, seats, ids, offsets): row j's legal ids in ids[offsets[j]:offsets[j+1]] (int32); returns the "
     "total (ids is written only when it has room)."},
    {"check", (PyCFunction)Stepper_check, METH_VARARGS,
     "check(actions, active, ok): ok[i] = game i inactive or actions[i] legal there (by the game's own legal "
     "ids); returns how many are not."},
    {"is_legal", (PyCFunction)Stepper_is_legal, METH_VARARGS,
     "is_legal(i, action): whether action (an int) is legal for the seat to move in game i (the game's own legal "
     "ids)."},
    {"scores", (PyCFunction)Stepper_scores, METH_O, "scores(i): game i's two game totals by seat."},
    {"state", (PyCFunction)Stepper_state, METH_O, "state(i): game i itself (a cstate.GameState; read it only)."},
    {NULL}};

PyTypeObject StepperType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mulle_env._native.Stepper",
    .tp_basicsize = sizeof(Stepper),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Stepper(num_envs, ruleset, internal_random, over=None, to_move=None, num_threads=1): K games "
              "stepped in C on num_threads threads.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Stepper_init,
    .tp_dealloc = (destructor)Stepper_dealloc,
    .tp_traverse = (traverseproc)Stepper_traverse,
    .tp_clear = (inquiry)Stepper_clear,
    .tp_finalize = (destructor)Stepper_finalize,
    .tp_methods = Stepper_methods,
    .tp_getset = Stepper_getset,
};
