/* The declarations the engine core's own files share (the agents' module never includes this). */
#ifndef MULLE_ENGINE_H
#define MULLE_ENGINE_H

#include "core.h"

extern Tables T;

/* The Python objects the core hands out (configure()): interned Moves and Cards, the Build
 * class, the error type of bad positions, the Ruleset class, and small ints by move id. */
extern PyObject *MOVES, *CARDS, *BUILD_CLS, *INVALID_POSITION, *RULESET_CLS, *GAME_OVER;
extern PyObject *ID_OBJS[MAX_IDS];

/* ----- test hook (module.c): the n-th counted allocation fails. The check is inline and costs
 * one compare while the hook is off. */
extern long core_fail_after;
int core_failpoint_hit(void);
static inline int core_failpoint(void) { return core_fail_after > 0 && core_failpoint_hit(); }

/* ----- rng.c */
uint64_t derive_seed1(uint64_t seed, uint64_t stream);
void shuffle(uint8_t *a, int n, uint64_t seed);

void mt_prepare(void);
void mt_seed(MT *m, uint64_t seed);
uint32_t mt_next(MT *m);
double mt_random(MT *m);
int mt_randbelow(MT *m, int n);

/* ----- rules.c (no Python objects; -1 returns have a Python exception set) */
int total_cards(const G *g);
int leader(int set_no, int deal_no);
int legal_ids(const G *g, int *out);
int apply_move(G *g, int id, const uint8_t *taking, int n_taking);
void deal_set(G *g);
void recount(G *g);
int32_t bonus_of(int32_t intake);
int64_t sheet_total(const SetScore *s);
int forced_groups(const Pile *loose, int v, const Pile *fixed, const int *mv, uint8_t *out);
void capture_memo_clear(void);
RulesThread *rules_thread_new(void);
void rules_thread_free(RulesThread *t);
void rules_thread_enter(RulesThread *t);
int rules_thread_error(RulesThread *t);
void rules_fail(PyObject *type, const char *msg); /* a Python exception, or kept for the GIL in a worker */
unsigned capture_memo_size(void);
int rules_init(void);

/* ----- observe.c */
int write_obs(const G *g, int player, float *o);
int write_mask(const G *g, uint8_t *mask);
extern const char *const FACE_BLOCK_NAMES[N_FACE_BLOCKS];
extern const char *const BUILD_FEATURE_NAMES[N_BUILD_FEATURES];
extern const char *const SHEET_NAMES[N_SHEETS];
extern const char *const SCALAR_NAMES[N_SCALARS];

/* ----- state.c: the Python type */
typedef struct {
    PyObject_HEAD
    PyObject *ruleset, *seed;  /* the Ruleset and the seed given (an int or None) */
    PyObject *legal;           /* cached tuple of the legal ids (immutable: handed out), or NULL */
    PyObject *public_;         /* cstate.py's cache of the public part of views, or NULL */
    PyObject *last_move_obj;   /* the Move of a `taking` capture (it has no id), or NULL */
    G g;                       /* last: the type's size is sizeof(Core) */
} Core;

extern PyTypeObject CoreType;
int core_type_init(PyObject *module);
Core *core_new_like(Core *proto); /* a fresh, uninitialised state of proto's type with its ruleset and seed */
void core_changed(Core *self);    /* drop the caches after the position changed */
int core_redeal(Core *self, uint64_t seed); /* new_game(seed, self's ruleset) into self (with the GIL) */
/* Apply id (or a `taking` capture) and keep the caches right: views' public part changes only
 * with a capture or a set's end. */
static inline int core_play(Core *self, int id, const uint8_t *taking, int n_taking) {
    int kind = T.m_kind[id >= 0 && id < T.num_ids ? id : 0], sheets = self->g.nsheets;
    if (apply_move(&self->g, id, taking, n_taking) < 0) return -1;
    Py_CLEAR(self->legal);
    if (kind == K_CAPTURE || self->g.nsheets != sheets) Py_CLEAR(self->public_);
    return 0;
}

int read_ruleset(G *g, PyObject *rs);

#endif
