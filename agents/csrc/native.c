/* The module agents._native (see native.h): the capsule import and the functions. */
#include "native.h"

const MulleCoreAPI *CORE = NULL;

static PyMethodDef methods[] = {
    {"rollout_values", native_rollout_values, METH_VARARGS,
     "rollout_values(root, candidates, player, policy, plies, stop, root_set, root_deal, seed): per candidate "
     "(a move id, (id, taking faces), or None for no move), the root with it played, rolled out by the playout policy (0 heuristic, "
     "1 random) up to the horizon (stop 0 plies, 1 deal, 2 set), scored by set_value for player."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native",
                                    "What agents decide, compiled (agents/csrc/native.h; agents/rollout.py is "
                                    "the reference).",
                                    -1, methods};

PyMODINIT_FUNC PyInit__native(void) {
    const MulleCoreAPI *api = mulle_core_import("agents._native");
    if (!api) return NULL;
    CORE = api;
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddIntConstant(m, "ABI", MULLE_CORE_ABI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
