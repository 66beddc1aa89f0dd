/* pimc's rollouts and their playout policies (agents/rollout.py is the reference).
 *
 * rollout_values(root, candidates, player, policy, plies, stop, root_set, root_deal, seed):
 * for each candidate, the root position with the candidate played, finished by the playout
 * policy up to the horizon, scored by set_value for `player`. Every candidate draws from
 * random.Random(seed) afresh (common random numbers), exactly as the Python loop does.
 */
#include "native.h"

enum { POLICY_HEURISTIC = 0, POLICY_RANDOM = 1 };
enum { STOP_PLIES = 0, STOP_DEAL = 1, STOP_SET = 2 };

/* agents/rollout.py set_value: the engine's score difference (core.h's score_difference). */
double set_value(const G *g, int player) { return score_difference(CORE, g, player); }

/* agents/rollout.py quick_capture_gain: a cheap estimate of a capture's worth. */
static double quick_capture_gain(const G *g, int card) {
    const Tables *T = CORE->tables;
    const int *mv = T->mv[g->mulle_hand ? 1 : 0];
    int p = g->to_move, hv = T->hv[card];
    int has_b = hv >= T->min_build && hv <= T->max_build && g->bc[hv].n > 0;
    if (hv <= T->max_mulle_hv && pile_index(&g->loose, card) >= 0 && !(has_b && g->bowner[hv] == p))
        return 2.0 * mv[card] + 2 * T->ipts[card] + 1.0;
    long gain = T->ipts[card];
    int n = 0;
    if (has_b) {
        for (int i = 0; i < g->bc[hv].n; i++) {
            int f = g->bc[hv].c[i];
            gain += T->ipts[f];
            if (f == card) gain += mv[f];
        }
        n += g->bc[hv].n;
    }
    if (hv <= MAXT)
        for (int i = 0; i < g->loose.n; i++)
            if (T->tv[g->loose.c[i]] == hv) {
                gain += T->ipts[g->loose.c[i]];
                n++;
            }
    return gain + 0.5 * n;
}

/* agents/rollout.py fast_policy_id (the "heuristic" playout): best quick capture, else the
 * cheapest discard (now and then any move), else a random move. */
static int fast_policy(const G *g, const int *ids, int n, MT *rng) {
    const Tables *T = CORE->tables;
    int first_discard = T->discard_id[0], end_capture = T->capture_id[NF - 1] + 1;
    if (ids[0] < end_capture) {
        int best = ids[0];
        double best_gain = -1.0;
        for (int k = 0; k < n && ids[k] < end_capture; k++) {
            double gn = quick_capture_gain(g, T->m_card[ids[k]]);
            if (gn > best_gain) {
                best = ids[k];
                best_gain = gn;
            }
        }
        return best;
    }
    if (ids[n - 1] >= first_discard) {
        int best = ids[n - 1];
        double best_cost = 99.0;
        for (int k = n - 1; k >= 0 && ids[k] >= first_discard; k--) {
            int c = T->m_card[ids[k]];
            double cost = 2 * T->ipts[c] + 0.01 * T->tv[c];
            if (cost < best_cost) {
                best = ids[k];
                best_cost = cost;
            }
        }
        if (n > 1 && ids[0] < first_discard && CORE->mt_random(rng) < 0.25) return ids[CORE->mt_randbelow(rng, n)];
        return best;
    }
    return ids[CORE->mt_randbelow(rng, n)];
}

/* Finish g (a copy, mutated) with `policy` up to the horizon; the first ply (the candidate) is played. */
static int rollout(G *g, int policy, long long plies, int stop, int root_set, int root_deal, uint64_t seed) {
    MT rng;
    CORE->mt_seed(&rng, seed);
    int ids[MAX_IDS];
    long long n = 1;
    while (!g->over && n < plies) {
        if (stop == STOP_DEAL && (g->deal_no != root_deal || g->set_no != root_set)) break;
        if (stop == STOP_SET && g->set_no != root_set) break;
        int k = CORE->legal_ids(g, ids);
        if (k == 0) {
            PyErr_SetString(PyExc_ValueError, "rollout: no legal move (a position the rules never reach)");
            return -1;
        }
        int id = policy == POLICY_HEURISTIC ? fast_policy(g, ids, k, &rng) : ids[CORE->mt_randbelow(&rng, k)];
        if (CORE->apply_move(g, id, NULL, -1) < 0) return -1;
        n++;
    }
    return 0;
}

/* A candidate: an id, (id, taking faces) for a `taking` capture, or None for no move (the root itself). */
static int read_candidate(PyObject *item, int *id, uint8_t *taking, int *n_taking) {
    PyObject *idobj = item, *tk = NULL;
    if (item == Py_None) {
        *id = -1;
        *n_taking = -1;
        return 0;
    }
    if (PyTuple_Check(item)) {
        if (PyTuple_GET_SIZE(item) != 2) goto bad;
        idobj = PyTuple_GET_ITEM(item, 0);
        tk = PyTuple_GET_ITEM(item, 1);
    }
    long v = PyLong_Check(idobj) && !PyBool_Check(idobj) ? PyLong_AsLong(idobj) : -1;
    if (v < 0 || v >= CORE->tables->num_ids) goto bad;
    *id = (int)v;
    *n_taking = -1;
    if (tk && tk != Py_None) {
        PyObject *fast = PySequence_Fast(tk, "taking must be a sequence of faces");
        if (!fast) return -1;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
        if (n > MAXP) {
            Py_DECREF(fast);
            goto bad;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            long f = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
            if (f < 0 || f >= NF) {
                Py_DECREF(fast);
                PyErr_Clear();
                goto bad;
            }
            taking[i] = (uint8_t)f;
        }
        *n_taking = (int)n;
        Py_DECREF(fast);
    }
    return 0;
bad:
    PyErr_SetString(PyExc_ValueError, "a candidate is a move id, (id, taking faces) for a taking capture, or None");
    return -1;
}

PyObject *native_rollout_values(PyObject *mod, PyObject *args) {
    PyObject *root, *cands;
    int player, policy, stop, root_set, root_deal;
    long long plies;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "OOiiLiiiK", &root, &cands, &player, &policy, &plies, &stop, &root_set, &root_deal,
                          &seed))
        return NULL;
    const G *base = CORE->state(root);
    if (!base) return NULL;
    if ((player != 0 && player != 1) || policy < 0 || policy > 1 || stop < 0 || stop > 2) {
        PyErr_SetString(PyExc_ValueError, "rollout_values: player 0/1, policy 0 (heuristic) or 1 (random), stop 0..2");
        return NULL;
    }
    PyObject *fast = PySequence_Fast(cands, "candidates must be a sequence");
    if (!fast) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject *out = native_failpoint() ? NULL : PyList_New(n);
    G *g = out && !native_failpoint() ? PyMem_Malloc(sizeof(G)) : NULL;
    if (!g) {
        Py_XDECREF(out);
        Py_DECREF(fast);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    uint8_t taking[MAXP];
    for (Py_ssize_t i = 0; i < n; i++) {
        int id, n_taking;
        if (read_candidate(PySequence_Fast_GET_ITEM(fast, i), &id, taking, &n_taking) < 0) goto fail;
        memcpy(g, base, G_USED(base));
        if (id >= 0 && CORE->apply_move(g, id, n_taking >= 0 ? taking : NULL, n_taking) < 0) goto fail;
        if (rollout(g, policy, plies, stop, root_set, root_deal, seed) < 0) goto fail;
        PyObject *v = native_failpoint() ? NULL : PyFloat_FromDouble(set_value(g, player));
        if (!v) goto fail;
        PyList_SET_ITEM(out, i, v);
    }
    PyMem_Free(g);
    Py_DECREF(fast);
    return out;
fail:
    PyMem_Free(g);
    Py_DECREF(fast);
    Py_DECREF(out);
    return NULL;
}
