/* What the env layer's compiled stepper needs of a game's compiled rules core: one table of functions.
 *
 * Every game with a compiled core (Mulle: mulle_env/engine/csrc, Casino: mulle_env/casino/csrc) exports one
 * GameOps in a PyCapsule named "<module>.GAME_OPS" (MULLE_GAME_OPS_CAPSULE for Mulle's,
 * CASINO_GAME_OPS_CAPSULE for Casino's). The stepper in mulle_env/csrc is written once against this table and
 * is handed the capsule of the game it steps, so it holds no game's rules and no game's struct layout: a
 * position is an opaque pointer to the game's own struct, reached through the state object that holds it.
 *
 * The functions marked nogil may run on a worker thread without the GIL once that thread has entered its own
 * thread context (thread_enter), as long as no other thread touches the same position; what goes wrong there
 * is kept in the thread context and raised by thread_error once the GIL is held again. A game that needs no
 * per-thread scratch space still provides the four thread functions (they may do nothing but keep the error).
 *
 * Errors. On a worker thread (its own context entered) a function that fails keeps the error in the thread's
 * context; on the main context (thread_enter(NULL), the calling thread holding the GIL) it raises it at once as
 * a Python exception, as Mulle's rules do. A -1 with no exception set there is reported as a RuntimeError.
 *
 * Only ids are stepped here: a game whose rules give its moves no fixed ids (Casino under gather_all=False)
 * is stepped by the Python stepper (mulle_env/stepper.py, PyStepper), and its core's `ids_ok` says so.
 */
#ifndef MULLE_GAME_OPS_H
#define MULLE_GAME_OPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* Raised whenever this struct changes: the stepper refuses a table of another ABI ("rebuild: pip install -e ."). */
#define GAME_OPS_ABI 2

typedef struct GameOps {
    int abi;                /* GAME_OPS_ABI */
    const char *game;       /* the game's short name: "mulle", "casino" */
    int num_ids;            /* move ids: the width of a legal mask, the bound of an action */
    int max_legal;          /* the most legal ids one position may have (<= num_ids): an ids buffer's size */
    int obs_size;           /* floats in one observation (write_obs) */

    /* ----- with the GIL */
    void *(*state)(PyObject *obj);               /* the position held by a state object of this game's compiled
                                                    backend; NULL + TypeError for any other object */
    void (*changed)(PyObject *obj);              /* drop the object's caches after its position was written */
    int (*ids_ok)(PyObject *obj);                /* 1 if the state's ruleset gives its moves ids (steppable
                                                    here), 0 if not; -1 + exception if obj is not a state */
    int (*redeal)(PyObject *obj, uint64_t seed); /* new_game(seed, the state's own ruleset) dealt into obj, no
                                                    Python object made; 0, or -1 + exception */

    /* ----- nogil (see above) */
    int (*over)(const void *g);                             /* 1 once the game is over */
    int (*to_move)(const void *g);                          /* the seat to move, 0 or 1 */
    int (*legal_ids)(const void *g, int *out);              /* ascending into out (max_legal ints); the count, or
                                                               -1 with the error kept */
    int (*apply_id)(void *g, int id);                       /* play a legal id for the seat to move; 0, or -1 */
    int (*write_obs)(const void *g, int seat, float *out);  /* seat's observation, obs_size floats; 0, or -1 */
    int (*write_mask)(const void *g, uint8_t *mask);        /* the mover's legal mask over num_ids (0/1);
                                                               returns the count, or -1 */
    void (*totals)(const void *g, int64_t out[2]);          /* each seat's game total so far (scores()) */

    /* ----- thread contexts (with or without the GIL, as noted in the game's core) */
    void *(*thread_new)(void);          /* NULL when out of memory (no exception set) */
    void (*thread_free)(void *t);
    void (*thread_enter)(void *t);      /* t is the calling thread's context from now on; NULL: the main one's */
    int (*thread_error)(void *t);       /* with the GIL: raise what t kept (-1), or 0 */

    /* ----- ABI 2: the game's allocation-failure hook (its core's _fail_after counter), or NULL if it has none.
     * While *fail_after > 0 the stepper runs every job on the calling thread with the GIL held, in order, so a
     * test can walk the game's allocations one by one (as it walks the stepper's own through Mulle's core). */
    long *fail_after;
} GameOps;

#define MULLE_GAME_OPS_CAPSULE "mulle_env.engine._core.GAME_OPS"
#define CASINO_GAME_OPS_CAPSULE "mulle_env.casino._core.GAME_OPS"

/* The table in a capsule object (as the Python side passes it), checked: NULL with an exception when it is
 * not a GameOps capsule or speaks another ABI. */
static inline const GameOps *game_ops_from(PyObject *capsule, const char *name) {
    const GameOps *ops = PyCapsule_GetPointer(capsule, name);
    if (ops && ops->abi != GAME_OPS_ABI) {
        PyErr_Format(PyExc_ImportError,
                     "the game table %s speaks ABI %d, the stepper %d: a stale build; rebuild with pip install -e .",
                     name, ops->abi, GAME_OPS_ABI);
        return NULL;
    }
    return ops;
}

#endif
