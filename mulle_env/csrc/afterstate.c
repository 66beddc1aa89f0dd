/* The afterstates of a decision (mulle_env/afterstates.py is the reference).
 *
 * write_afterstates(state, player, ids, obs, banked): per legal move id, the position it
 * leaves as the mover `player` sees it, for afterstate nets (the envs' afterstates and the
 * agents' afterstate nets). The state's hidden cards (the
 * opponent's hand and the deck) become placeholders (card 0; the opponent keeps at least
 * one, so no move ends the deal and deals from a deck the mover cannot know), the move is
 * played on a copy, the copy is encoded from the mover's seat into row i of obs (float32,
 * the observation's size a row) and the mover's score difference goes to banked[i] (float64).
 */
#include "native.h"

PyObject *mod_write_afterstates(PyObject *mod, PyObject *args) {
    PyObject *state, *ids_obj, *obs, *banked;
    int player;
    if (!PyArg_ParseTuple(args, "OiOOO", &state, &player, &ids_obj, &obs, &banked)) return NULL;
    const G *g0 = CORE->state(state);
    if (!g0) return NULL;
    if (player != 0 && player != 1) {
        PyErr_Format(PyExc_ValueError, "player must be 0 or 1, not %d", player);
        return NULL;
    }
    if (g0->over || g0->to_move != player) {
        PyErr_Format(PyExc_ValueError, "write_afterstates: player %d is not to move", player);
        return NULL;
    }
    const Tables *T = CORE->tables;
    /* A tuple: the ids cannot change under us while Python code runs (an id's __index__). */
    PyObject *ids = PySequence_Tuple(ids_obj);
    if (!ids) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(ids);
    G *base = native_failpoint() ? NULL : PyMem_Malloc(sizeof(G));
    G *g = base && !native_failpoint() ? PyMem_Malloc(sizeof(G)) : NULL;
    Py_buffer bo, bb;
    int have_bo = 0, have_bb = 0;
    PyObject *result = NULL;
    if (!g) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    memcpy(base, g0, G_USED(g0));
    int o = 1 - player;
    int keep = base->hand[o].n > 0 ? base->hand[o].n : 1;
    base->hand[o].n = (uint8_t)keep;
    memset(base->hand[o].c, 0, (size_t)keep);
    memset(base->deck.c, 0, base->deck.n);
    int total = base->hand[0].n + base->hand[1].n + base->loose.n + base->deck.n + base->mulle[0].n +
                base->mulle[1].n + base->intake[0].n + base->intake[1].n;
    for (int v = 0; v <= MAXV; v++) total += base->bc[v].n;
    if (total > MAXP) { /* the placeholder card of an empty hand must fit */
        PyErr_SetString(PyExc_ValueError, "write_afterstates: the position holds too many cards");
        goto done;
    }
    /* Only legal moves: an afterstate of an illegal move means nothing. */
    int legal[MAX_IDS];
    uint8_t ok[MAX_IDS] = {0};
    int k = CORE->legal_ids(base, legal);
    for (int i = 0; i < k; i++) ok[legal[i]] = 1;
    if (get_buffer(obs, &bo, n * T->obs_size * (Py_ssize_t)sizeof(float), "f", "the afterstate buffer") < 0) goto done;
    have_bo = 1;
    if (get_buffer(banked, &bb, n * (Py_ssize_t)sizeof(double), "d", "the banked buffer") < 0) goto done;
    have_bb = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(ids, i);
        /* Any integer (numpy's from legal_ids() too), never a bool: True is not move id 1. The ids are the
         * tuple's, so an __index__ that runs Python code cannot change them under us. */
        long id = -1;
        if (!PyBool_Check(x) && PyIndex_Check(x)) {
            PyObject *ix = PyNumber_Index(x);
            if (!ix) goto done;
            id = PyLong_AsLong(ix);
            Py_DECREF(ix);
            if (id == -1 && PyErr_Occurred()) {
                if (!PyErr_ExceptionMatches(PyExc_OverflowError)) goto done;
                PyErr_Clear(); /* out of range: refused below as not legal */
            }
        }
        if (id < 0 || id >= T->num_ids || !ok[id]) {
            PyErr_Format(PyExc_ValueError, "write_afterstates: move id %R is not legal here", x);
            goto done;
        }
        memcpy(g, base, G_USED(base));
        if (CORE->apply_move(g, (int)id, NULL, -1) < 0) goto done;
        /* The opponent keeps a card, so no move ends the deal (or the set): checked, not assumed. */
        if (g->nsheets != base->nsheets || g->deal_no != base->deal_no) {
            PyErr_SetString(PyExc_RuntimeError, "write_afterstates: a move ended the deal");
            goto done;
        }
        if (CORE->write_obs(g, player, (float *)bo.buf + i * T->obs_size) < 0) goto done;
        ((double *)bb.buf)[i] = score_difference(CORE, g, player);
    }
    result = Py_None;
    Py_INCREF(result);
done:
    if (have_bo) PyBuffer_Release(&bo);
    if (have_bb) PyBuffer_Release(&bb);
    PyMem_Free(g);
    PyMem_Free(base);
    Py_DECREF(ids);
    return result;
}
