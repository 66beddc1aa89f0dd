/* The module mulle_env.engine._core: its functions, its C API capsule, its game table, its test hooks. */
#include "engine.h"
#include "game_ops.h"

/* ------------------------------------------------------------------ allocation-failure hook */

/* Every allocation and Python object creation of the compiled code goes through
 * core_failpoint(): with fail_after = n > 0 the n-th such point fails (a MemoryError), so a
 * test can walk n over every allocation of a game, a stepper step or an afterstate batch and
 * check each ends in a Python exception, never a crash or a leak. 0: off. */
long core_fail_after = 0;
static long fail_seen = 0;

int core_failpoint_hit(void) {
    if (core_fail_after <= 0) return 0;
    if (++fail_seen == core_fail_after) {
        core_fail_after = 0;
        PyErr_NoMemory();
        return 1;
    }
    return 0;
}

static PyObject *mod_fail_after(PyObject *mod, PyObject *arg) {
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    long seen = fail_seen;
    core_fail_after = n > 0 ? n : 0;
    fail_seen = 0;
    return PyLong_FromLong(seen);
}

static PyObject *mod_failpoints_seen(PyObject *mod, PyObject *unused) { return PyLong_FromLong(fail_seen); }

/* ------------------------------------------------------------------ test and benchmark helpers */

static PyObject *mod_derive_seed(PyObject *mod, PyObject *args) {
    unsigned long long seed, s;
    if (!PyArg_ParseTuple(args, "KK", &seed, &s)) return NULL;
    return PyLong_FromUnsignedLongLong(derive_seed1(seed, s));
}

/* n draws of (random(), randrange(m)) of random.Random(seed), to test the MT against Python's. */
static PyObject *mod_mt_draws(PyObject *mod, PyObject *args) {
    unsigned long long seed;
    int n, m;
    if (!PyArg_ParseTuple(args, "Kii", &seed, &n, &m)) return NULL;
    if (m < 1 || m > (1 << 30) || n < 0) {
        PyErr_SetString(PyExc_ValueError, "n >= 0 and m 1..2**30");
        return NULL;
    }
    MT rng;
    mt_seed(&rng, seed);
    PyObject *l = PyList_New(n);
    if (!l) return NULL;
    for (int i = 0; i < n; i++) {
        double x = mt_random(&rng);
        int r = mt_randbelow(&rng, m);
        PyObject *t = Py_BuildValue("(di)", x, r);
        if (!t) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, i, t);
    }
    return l;
}

/* forced_groups on a list of loose faces: the C side of capture.forced_groups, for tests. */
static PyObject *mod_forced_groups(PyObject *mod, PyObject *args) {
    PyObject *loose, *fixed;
    int v, hand_values;
    if (!PyArg_ParseTuple(args, "OiOp", &loose, &v, &fixed, &hand_values)) return NULL;
    if (v < 2 || v > MAXT) {
        PyErr_Format(PyExc_ValueError, "v must be 2..%d", MAXT);
        return NULL;
    }
    Pile piles[2];
    PyObject *seqs[2] = {loose, fixed};
    for (int k = 0; k < 2; k++) {
        PyObject *fast = PySequence_Fast(seqs[k], "loose and fixed are sequences of faces");
        if (!fast) return NULL;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
        if (n > MAXP) {
            Py_DECREF(fast);
            PyErr_SetString(PyExc_ValueError, "too many cards");
            return NULL;
        }
        piles[k].n = (uint8_t)n;
        for (Py_ssize_t i = 0; i < n; i++) {
            long x = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
            if (x < 0 || x >= NF) {
                Py_DECREF(fast);
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "cards must be faces 0..51");
                return NULL;
            }
            piles[k].c[i] = (uint8_t)x;
        }
        Py_DECREF(fast);
        pile_sort(&piles[k]);
    }
    uint8_t out[MAXP];
    int n = forced_groups(&piles[0], v, &piles[1], T.mv[hand_values ? 1 : 0], out);
    if (n < 0) return NULL;
    PyObject *l = PyList_New(n);
    if (!l) return NULL;
    for (int i = 0; i < n; i++) PyList_SET_ITEM(l, i, PyLong_FromLong(out[i]));
    return l;
}

static PyObject *mod_clear_memo(PyObject *mod, PyObject *unused) {
    capture_memo_clear();
    Py_RETURN_NONE;
}

static PyObject *mod_memo_size(PyObject *mod, PyObject *unused) {
    return PyLong_FromUnsignedLong(capture_memo_size());
}

PyObject *mod_configure(PyObject *mod, PyObject *args);
static PyObject *ops_configure(PyObject *mod, PyObject *args);

static PyMethodDef mod_methods[] = {
    {"configure", ops_configure, METH_VARARGS,
     "configure(abi, cards, moves, rules, layout, objects): the tables and objects of the Python definitions "
     "(cstate.py calls it once)."},
    {"derive_seed", mod_derive_seed, METH_VARARGS, "derive_seed(seed, stream): rng.derive_seed with one stream."},
    {"mt_draws", mod_mt_draws, METH_VARARGS,
     "mt_draws(seed, n, m): n x (random(), randrange(m)) of random.Random(seed), drawn in C."},
    {"forced_groups", mod_forced_groups, METH_VARARGS,
     "forced_groups(loose, v, fixed, mulle_hand_values): capture.forced_groups in C."},
    {"clear_memo", mod_clear_memo, METH_NOARGS, "Empty the capture-search memo (for cold-memo timings)."},
    {"memo_size", mod_memo_size, METH_NOARGS, "Entries in the shared capture-search memo."},
    {"_fail_after", mod_fail_after, METH_O,
     "Test hook: make the n-th counted allocation of the compiled code fail (0: off); returns the count so far."},
    {"_failpoints_seen", mod_failpoints_seen, METH_NOARGS, "Test hook: counted allocations since _fail_after."},
    {NULL}};

/* ------------------------------------------------------------------ the C API */

static G *api_state(PyObject *obj) {
    if (!PyObject_TypeCheck(obj, &CoreType)) {
        PyErr_Format(PyExc_TypeError, "a state of the compiled core is needed, not %.100s (MULLE_ENGINE decides "
                                      "the backend of every compiled part)",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    if (!((Core *)obj)->ruleset) {
        PyErr_SetString(PyExc_RuntimeError, "the state was never initialized");
        return NULL;
    }
    return &((Core *)obj)->g;
}

static void api_changed(PyObject *obj) {
    core_changed((Core *)obj);
    Py_CLEAR(((Core *)obj)->last_move_obj);
}

static int api_redeal(PyObject *obj, uint64_t seed) { return api_state(obj) ? core_redeal((Core *)obj, seed) : -1; }

static MulleCoreAPI API = {
    MULLE_CORE_ABI, &T,        api_state, api_changed,  legal_ids,   apply_move,       write_obs,
    core_failpoint_hit, &core_fail_after, mt_seed, mt_random, mt_randbelow, sheet_total,
    write_mask, rules_thread_new, rules_thread_free, rules_thread_enter, rules_thread_error, api_redeal,
};

/* ------------------------------------------------------------------ the game table (game_ops.h) */

/* Mulle for the env layer's stepper, which knows no game's struct: the same rules the C API has, on opaque
 * positions. Its sizes are the configured tables' (ops_configure, after configure()). */
static void *ops_state(PyObject *obj) { return api_state(obj); }
/* Every Mulle ruleset gives its moves ids (forced_capture=False's choice of cards is refused by the envs' codec
 * before a stepper is made, as before the table). */
static int ops_ids_ok(PyObject *obj) { return api_state(obj) ? 1 : -1; }
static int ops_over(const void *g) { return ((const G *)g)->over; }
static int ops_to_move(const void *g) { return ((const G *)g)->to_move; }
static int ops_legal_ids(const void *g, int *out) { return legal_ids(g, out); }
static int ops_apply_id(void *g, int id) { return apply_move(g, id, NULL, -1); }
static int ops_write_obs(const void *g, int seat, float *out) { return write_obs(g, seat, out); }
static int ops_write_mask(const void *g, uint8_t *mask) { return write_mask(g, mask); }
/* Each seat's game total so far: the finished sets' sheets, and the set in play (GameState.scores()). */
static void ops_totals(const void *pos, int64_t out[2]) {
    const G *g = pos;
    for (int p = 0; p < 2; p++) {
        int64_t t = 0;
        for (int k = 0; k < g->nsheets; k++) t += sheet_total(&g->sheets[k][p]);
        if (!g->over) {
            SetScore cur = {g->mpts[p], g->tabbe[p], g->ipts[p]};
            t += sheet_total(&cur);
        }
        out[p] = t;
    }
}
static void *ops_thread_new(void) { return rules_thread_new(); }
static void ops_thread_free(void *t) { rules_thread_free(t); }
static void ops_thread_enter(void *t) { rules_thread_enter(t); }
static int ops_thread_error(void *t) { return rules_thread_error(t); }

static GameOps OPS = {
    .abi = GAME_OPS_ABI,
    .game = "mulle",
    .state = ops_state,
    .changed = api_changed,
    .ids_ok = ops_ids_ok,
    .redeal = api_redeal,
    .over = ops_over,
    .to_move = ops_to_move,
    .legal_ids = ops_legal_ids,
    .apply_id = ops_apply_id,
    .write_obs = ops_write_obs,
    .write_mask = ops_write_mask,
    .totals = ops_totals,
    .thread_new = ops_thread_new,
    .thread_free = ops_thread_free,
    .thread_enter = ops_thread_enter,
    .thread_error = ops_thread_error,
    .fail_after = &core_fail_after,
};

/* configure(), then the table's sizes from the configured tables (0 until then: a stepper refuses them). */
static PyObject *ops_configure(PyObject *mod, PyObject *args) {
    PyObject *r = mod_configure(mod, args);
    if (r) {
        OPS.num_ids = T.num_ids;
        OPS.max_legal = T.num_ids;
        OPS.obs_size = T.obs_size;
    }
    return r;
}

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
                                        "The compiled rules core of mulle_env.engine (see csrc/core.h and cstate.py).",
                                        -1, mod_methods};

PyMODINIT_FUNC PyInit__core(void) {
    PyObject *m = PyModule_Create(&coremodule);
    if (!m) return NULL;
    if (core_type_init(m) < 0) goto fail;
    PyObject *capsule = PyCapsule_New(&API, MULLE_CORE_CAPSULE, NULL);
    if (!capsule || PyModule_AddObject(m, "API", capsule) < 0) {
        Py_XDECREF(capsule);
        goto fail;
    }
    PyObject *ops = PyCapsule_New(&OPS, MULLE_GAME_OPS_CAPSULE, NULL);
    if (!ops || PyModule_AddObject(m, "GAME_OPS", ops) < 0) {
        Py_XDECREF(ops);
        goto fail;
    }
    struct {
        const char *name;
        PyObject *value;
    } names[] = {{"FACE_BLOCKS", name_tuple(FACE_BLOCK_NAMES, N_FACE_BLOCKS)},
                 {"BUILD_FEATURES", name_tuple(BUILD_FEATURE_NAMES, N_BUILD_FEATURES)},
                 {"SHEETS", name_tuple(SHEET_NAMES, N_SHEETS)},
                 {"SCALARS", name_tuple(SCALAR_NAMES, N_SCALARS)}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!names[i].value || PyModule_AddObject(m, names[i].name, names[i].value) < 0) {
            Py_XDECREF(names[i].value);
            goto fail;
        }
    }
    if (PyModule_AddIntConstant(m, "ABI", MULLE_CORE_ABI) < 0 || PyModule_AddIntConstant(m, "MAX_CARDS", MAXP) < 0 ||
        PyModule_AddIntConstant(m, "MAX_SETS", MAX_SETS) < 0 || PyModule_AddIntConstant(m, "MAX_IDS", MAX_IDS) < 0 ||
        PyModule_AddIntConstant(m, "OBS_MAX", OBS_MAX) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
