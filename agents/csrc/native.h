/* The agents' compiled module (agents._native): what agents decide, in C.
 *
 * It holds no rules: it reaches the engine's compiled core only through the core's C API
 * (mulle_env/engine/csrc/core.h, the capsule "mulle_env.engine._core.API"): legal moves,
 * applying a move, writing an observation, the tables the core was configured with, and
 * Python's random.Random stream. The Python code beside the agents is the reference each
 * function here is checked against by the golden playthroughs (tests/playthroughs):
 *
 *   rollout.c     agents/rollout.py: the playout policies, set_value, pimc's rollouts
 *   native.c      the module, the capsule import, the ABI check
 *
 * The afterstate encodings the afterstate nets read are the env layer's (mulle_env/csrc/afterstate.c).
 */
#ifndef MULLE_NATIVE_H
#define MULLE_NATIVE_H

#include "core.h"

/* The engine's C API, imported when the module loads. */
extern const MulleCoreAPI *CORE;

/* The core's allocation-failure hook, for the test that walks every allocation. */
static inline int native_failpoint(void) { return *CORE->fail_after > 0 && CORE->failpoint(); }

double set_value(const G *g, int player);
PyObject *native_rollout_values(PyObject *mod, PyObject *args);

#endif
