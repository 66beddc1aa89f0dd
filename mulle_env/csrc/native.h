/* The env layer's compiled module (mulle_env._native): what the environments run in C.
 *
 * It holds no rules: it reaches the engine's compiled core only through the core's C API
 * (mulle_env/engine/csrc/core.h, the capsule "mulle_env.engine._core.API"): legal moves,
 * applying a move, the observation and mask writers, the tables the core was configured
 * with, Python's random.Random stream, and the per-thread scratch space that lets the rules
 * run on worker threads without the GIL. The Python code beside each file is its readable
 * reference, checked by the golden playthroughs (tests/playthroughs) and tests/test_extras.py:
 *
 *   stepper.c   mulle_env/stepper.py (PyStepper): K games stepped at once, on a thread pool, through a
 *               game's table (game_ops.h): Mulle's, or any game core's that exports one (Casino's)
 *   pool.c      the thread pool the stepper runs on (POSIX threads; one thread elsewhere)
 *   extras.c    mulle_env/extras.py: the extra-input blocks of the learned agents' nets
 *   draws.c     mulle_env/envcore.py (EnvCore._draw): the next deals' seeds from numpy Generators, numpy-exact
 *   afterstate.c mulle_env/afterstates.py: what each legal move leaves, encoded from the mover's seat
 *   module.c    the module, the capsule import, the ABI check, random_playout, sample_csr, sample_mask
 */
#ifndef MULLE_NATIVE_H
#define MULLE_NATIVE_H

#include "core.h"
#include "game_ops.h"

/* The engine's C API, imported when the module loads. */
extern const MulleCoreAPI *CORE;

/* The core's allocation-failure hook (every allocation here goes through it). */
static inline int native_failpoint(void) { return *CORE->fail_after > 0 && CORE->failpoint(); }

/* afterstate.c */
PyObject *mod_write_afterstates(PyObject *mod, PyObject *args);

/* ----- pool.c: n threads (the caller and n - 1 workers), each with its own context of a game's core (the
 * table's thread_new: Mulle's RulesThread, the capture search's scratch). */
typedef struct Pool Pool;
/* job(ctx, item) for every item 0..n_items-1, spread over the threads; the caller must have
 * released the GIL. Items run in any order on any thread: a job writes only its item's data. */
typedef void (*PoolJob)(void *ctx, int item);
Pool *pool_new(const GameOps *ops, int n_threads); /* ops: whose thread contexts; NULL + a Python exception */
int pool_threads(const Pool *p);
void pool_run(Pool *p, PoolJob job, void *ctx, int n_items);
/* pool_run in two halves: pool_start publishes the job to the workers (they start at once; without workers,
 * nothing runs yet) and returns; pool_finish (GIL released) takes part and returns once every item ran. One
 * job at a time: nothing else may use the pool between the two. */
void pool_start(Pool *p, PoolJob job, void *ctx, int n_items);
void pool_finish(Pool *p);
/* The job pool_start published went to workers of the process this one was forked from (they are not here:
 * pool_finish would wait for their claims forever). */
int pool_inherited(const Pool *p);
int pool_error(Pool *p); /* with the GIL: raise what a thread's context kept (-1), or 0 */
void pool_free(Pool *p);
void pool_stop_all(void); /* join every pool's workers (at exit); the pools stay usable, single-threaded */
int cpu_count(void);     /* the cores this process may run on (sched_getaffinity), at least 1 */

/* ----- stepper.c */
extern PyTypeObject StepperType;

/* ----- draws.c */
PyObject *mod_draw_deals(PyObject *mod, PyObject *args);

/* ----- extras.c */
PyObject *mod_configure_extras(PyObject *mod, PyObject *args);
PyObject *mod_write_extras(PyObject *mod, PyObject *args);
PyObject *mod_extras_exp_mulle(PyObject *mod, PyObject *args);

#endif
