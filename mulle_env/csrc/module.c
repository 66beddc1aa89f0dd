/* The module mulle_env._native (see native.h): the capsule import, the ABI check, the functions. */
#include "native.h"

const MulleCoreAPI *CORE = NULL;

/* Play up to n uniformly random legal moves (or to the end) with a SplitMix64 stream, without leaving C:
 * the raw-speed benchmark and the long-run memory test. Returns the moves played. */
static PyObject *mod_random_playout(PyObject *mod, PyObject *args) {
    PyObject *state;
    unsigned long long seed;
    long long n;
    if (!PyArg_ParseTuple(args, "OKL", &state, &seed, &n)) return NULL;
    G *g = CORE->state(state);
    if (!g) return NULL;
    uint64_t x = seed;
    long long done = 0;
    int ids[MAX_IDS], rc = 0;
    while (done < n && !g->over) {
        int k = CORE->legal_ids(g, ids);
        if (k == 0) {
            PyErr_SetString(PyExc_ValueError, "no legal move (a position the rules never reach)");
            rc = -1;
            break;
        }
        if (CORE->apply_move(g, ids[splitmix(&x) % (uint64_t)k], NULL, -1) < 0) {
            rc = -1;
            break;
        }
        done++;
    }
    CORE->changed(state); /* the state's caches, once for all the moves */
    if (rc < 0) return NULL;
    return PyLong_FromLongLong(done);
}

static PyMethodDef methods[] = {
    {"configure_extras", mod_configure_extras, METH_VARARGS,
     "The encoding's layout, the blocks' field offsets and the per-face tables for the extra-input blocks "
     "(mulle_env/extras.py calls it)."},
    {"write_extras", mod_write_extras, METH_VARARGS,
     "write_extras(obs, out, level, stride, offset): the extra-input block of level 1..3 of each float32 encoding, "
     "written at `offset` of each `stride`-float row of `out`."},
    {"extras_exp_mulle", mod_extras_exp_mulle, METH_VARARGS,
     "extras_exp_mulle(obs, out, stride, offset): capture-v3's exp_mulle from its twin_exposed."},
    {"random_playout", mod_random_playout, METH_VARARGS,
     "random_playout(state, seed, n): play up to n uniformly random legal moves in C; returns how many."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native",
                                    "What the environments run in C (mulle_env/csrc/native.h; mulle_env/stepper.py "
                                    "and mulle_env/extras.py are the reference).",
                                    -1, methods};

PyMODINIT_FUNC PyInit__native(void) {
    const MulleCoreAPI *api = mulle_core_import("mulle_env._native");
    if (!api) return NULL;
    CORE = api;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyType_Ready(&StepperType) < 0 || PyModule_AddIntConstant(m, "ABI", MULLE_CORE_ABI) < 0) goto fail;
    Py_INCREF(&StepperType);
    if (PyModule_AddObject(m, "Stepper", (PyObject *)&StepperType) < 0) {
        Py_DECREF(&StepperType);
        goto fail;
    }
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
