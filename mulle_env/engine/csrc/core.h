/* The compiled rules core of the Mulle engine: the shared header (types, capacities, the C API).
 *
 * engine.h adds the declarations the core's own files share; the agents' compiled module
 * (agents/csrc) includes only this file and reaches the core through the C API.
 *
 * mulle_env/engine/ (rules.py, capture.py, rng.py, state.py, observation_layout.py) is the
 * readable reference; the C files beside this header are its compiled twin, checked against
 * the reference's golden playthroughs (tests/playthroughs/). What the C code knows of the
 * game's tables (card values, intake and mulle points, the move table, hand and deal sizes,
 * the observation layout) it is given by cstate.py when the module loads (configure()), so
 * the Python definitions are the one source of truth; the constants below are capacities
 * (array sizes), and configure() refuses tables that do not fit them, saying to rebuild.
 *
 * Files, by concern:
 *   tables.c    the configured tables and configure()
 *   rng.c       SplitMix64 (deals), MT19937 (Python's random.Random, for the stepper's random opponent)
 *   rules.c     piles, the capture search, legal moves, applying moves, deals, set ends (no Python objects)
 *   observe.c   observation and legal mask into caller buffers
 *   state.c     the Python type Core (cstate.GameState's base): read-only attributes, checked loading
 *   module.c    the module, its capsule (the C API the compiled modules build on), its game table
 *               (GAME_OPS, game_ops.h: what the env layer's stepper steps Mulle through), test hooks
 *
 * The env layer's compiled module (mulle_env/csrc: the batched stepper, the extra inputs, the
 * random playout) and the agents' (agents/csrc) build on the capsule.
 *
 * Threads. Everything here runs with the GIL held, except what the C API marks "nogil": the
 * rules on a G (legal ids, applying a move, the observation writer) may run on a worker thread
 * without the GIL once that thread has entered its own RulesThread (the capture search's memo
 * and scratch space, and the place its errors wait for the GIL), and as long as no other thread
 * touches the same G.
 */
#ifndef MULLE_CORE_H
#define MULLE_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Raised whenever this header, the capsule or configure() changes: cstate.py and the agents'
 * module refuse a core of another ABI ("rebuild: pip install -e ."). */
#define MULLE_CORE_ABI 6 /* 6: the module also exports its game table, GAME_OPS (game_ops.h) */

/* Thread-local storage, for the capture search's per-thread scratch space. */
#if defined(_MSC_VER)
#define MULLE_TLS __declspec(thread)
#else
#define MULLE_TLS __thread
#endif

/* ----- capacities (array sizes); configure() checks the Python tables fit them */
#define NF 52            /* card faces */
#define MAXP 128         /* cards a pile, and a whole state, may hold (104 in a real game) */
#define MAXV 16          /* largest hand (and build) value */
#define MAXT 13          /* largest table value */
#define MAX_IDS 4096     /* move ids */
#define MAX_SETS 100     /* sets a game may have (Ruleset.sets) */
#define MAX_HAND 16      /* hand size */
#define MAX_DEALS 16     /* deals per set */
#define OBS_MAX 1024     /* floats in an observation */
#define N_FACE_BLOCKS 8
#define N_BUILD_FEATURES 5
#define N_SHEETS 4       /* score slices of the observation: my game, opponent's game, my set, opponent's set */
#define N_SHEET_KEYS 5   /* mulle, tabbe, intake, bonus, total */
#define N_SCALARS 13

enum { K_CAPTURE, K_BUILD, K_TROTTA, K_DISCARD };

/* ----- the position */
typedef struct {
    uint8_t n;
    uint8_t c[MAXP]; /* faces; sorted, except the deck (next card first) */
} Pile;

typedef struct {
    int32_t mulle, tabbe, intake; /* a finished set's sheet; bonus and total follow (RULES.md 6) */
} SetScore;

typedef struct {
    Pile hand[2], loose, deck, mulle[2], intake[2], taken;
    Pile bc[MAXV + 1];         /* build cards by value; bc[v].n == 0: no build of value v */
    int8_t bowner[MAXV + 1];   /* -1: nobody */
    uint8_t blocked[MAXV + 1];
    uint32_t bstamp[MAXV + 1]; /* insertion order, so `builds` iterates as the Python dict does */
    uint32_t stamp;
    int32_t tabbe[2], mpts[2], ipts[2];
    int32_t to_move, set_no, deal_no, last_capturer, over;
    int32_t last_player, last_id; /* last_player -1: no move yet; last_id -1: a `taking` capture */
    /* the ruleset's flags */
    int32_t sets, forced, lock_every, discard_only, mulle_hand;
    uint64_t seed64;
    /* finished sets: must stay last, a copy stops after the used entries (G_USED) */
    int32_t nsheets;
    SetScore sheets[MAX_SETS][2];
} G;

/* Bytes of a G that hold data: a copy of a state copies these, not the unused sheet rows. */
#define G_USED(g) (offsetof(G, sheets) + (size_t)(g)->nsheets * sizeof((g)->sheets[0]))

/* ----- the tables (tables.c), configured from the Python definitions */
typedef struct {
    int configured;
    /* cards.py */
    int tv[NF], hv[NF], ipts[NF], mv[2][NF]; /* mv[0]: default mulle values, mv[1]: mulle_hand_values */
    /* rules.py and state.py */
    int hand_size, table_deal, deals_per_set, min_build, max_build, max_mulle_hv, bonus_from, count_limit;
    /* moves.py: per id, and the ids by card and target */
    int num_ids;
    int8_t m_kind[MAX_IDS], m_card[MAX_IDS], m_on[MAX_IDS], m_onb[MAX_IDS], m_to[MAX_IDS];
    int capture_id[NF], trotta_id[NF], discard_id[NF];
    int loose_id[NF][NF], up_id[NF][MAXV + 1], down_id[NF][MAXV + 1];
    /* observation_layout.py: offsets by the names the writer knows (observe.c lists them) */
    int obs_size;
    int face_at[N_FACE_BLOCKS];
    int builds_at, build_stride, feature_at[N_BUILD_FEATURES];
    int sheet_at[N_SHEETS];
    int scalar_at[N_SCALARS];
    double score_scale, build_cards_scale, deck_scale, hand_scale, deals_scale;
} Tables;

/* ----- piles: sorted arrays of faces with a count (inline: they are the rules' inner loops) */
static inline void pile_insert(Pile *p, int f) {
    int i = p->n;
    while (i > 0 && p->c[i - 1] > f) {
        p->c[i] = p->c[i - 1];
        i--;
    }
    p->c[i] = (uint8_t)f;
    p->n++;
}

static inline int pile_index(const Pile *p, int f) {
    for (int i = 0; i < p->n; i++)
        if (p->c[i] == f) return i;
    return -1;
}

static inline void pile_remove_at(Pile *p, int i) {
    memmove(p->c + i, p->c + i + 1, p->n - i - 1);
    p->n--;
}

static inline int pile_remove(Pile *p, int f) {
    int i = pile_index(p, f);
    if (i < 0) return 0;
    pile_remove_at(p, i);
    return 1;
}

static inline void pile_sort(Pile *p) {
    for (int i = 1; i < p->n; i++) { /* insertion sort: piles are short */
        uint8_t x = p->c[i];
        int j = i - 1;
        while (j >= 0 && p->c[j] > x) {
            p->c[j + 1] = p->c[j];
            j--;
        }
        p->c[j + 1] = x;
    }
}

/* A writable C-contiguous buffer of `need` bytes and item format `fmt`, or a ValueError naming `what`. */
static inline int get_buffer(PyObject *obj, Py_buffer *view, Py_ssize_t need, const char *fmt, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return -1;
    const char *f = view->format ? view->format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@') f++;
    if (strcmp(f, fmt) != 0 || view->len < need || view->readonly) {
        PyErr_Format(PyExc_ValueError, "%s must be a writable contiguous buffer of %zd items of format '%s'", what,
                     need / (view->itemsize ? view->itemsize : 1), fmt);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* SplitMix64 (rng.c's deals; the env layer's random playout). */
static inline uint64_t splitmix(uint64_t *x) {
    uint64_t z;
    *x += 0x9E3779B97F4A7C15ULL;
    z = *x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Python's random.Random state (rng.c). */
typedef struct {
    uint32_t mt[624];
    int i;
} MT;

/* A thread's capture-search memo and scratch space (rules.c); opaque outside the core. */
typedef struct RulesThread RulesThread;

/* ----- the C API (module.c), a PyCapsule named "mulle_env.engine._core.API" */
typedef struct {
    int abi;                              /* MULLE_CORE_ABI */
    const Tables *tables;
    G *(*state)(PyObject *obj);           /* the position of a cstate.GameState, NULL + TypeError otherwise */
    void (*changed)(PyObject *obj);       /* drop a state's caches after writing its G */
    int (*legal_ids)(const G *g, int *out);
    int (*apply_move)(G *g, int id, const uint8_t *taking, int n_taking);
    int (*write_obs)(const G *g, int player, float *out);
    int (*failpoint)(void);           /* core_failpoint_hit, to call when *fail_after > 0 */
    long *fail_after;
    void (*mt_seed)(MT *m, uint64_t seed);
    double (*mt_random)(MT *m);
    int (*mt_randbelow)(MT *m, int n);
    int64_t (*sheet_total)(const SetScore *s);
    /* ABI 3: the rules on worker threads (nogil: legal_ids, apply_move, write_obs, write_mask). */
    int (*write_mask)(const G *g, uint8_t *mask);         /* the mover's legal mask; returns the count */
    RulesThread *(*thread_new)(void);                     /* NULL when out of memory (no exception set) */
    void (*thread_free)(RulesThread *t);
    void (*thread_enter)(RulesThread *t);                 /* the calling thread's from now on; NULL: the main one */
    int (*thread_error)(RulesThread *t);                  /* with the GIL: raise what a worker kept (-1), or 0 */
    /* ABI 4: a new game dealt into an existing state (with the GIL): what new_game(seed, its ruleset) would be,
     * without making a Python object; -1 + an exception if obj is not a state. */
    int (*redeal)(PyObject *obj, uint64_t seed);
} MulleCoreAPI;

#define MULLE_CORE_CAPSULE "mulle_env.engine._core.API"

/* mulle_env.engine.knowledge.score_difference: `player`'s score difference so far, the finished sets' sheets
 * exactly and the set in play as mulle + tabbe + intake points (what a move banks: the env layer's afterstates,
 * the agents' rollouts). `api` is the module's imported core API. */
static inline double score_difference(const MulleCoreAPI *api, const G *g, int player) {
    int o = 1 - player;
    int64_t v = 0;
    for (int k = 0; k < g->nsheets; k++) v += api->sheet_total(&g->sheets[k][player]) - api->sheet_total(&g->sheets[k][o]);
    if (!g->over) {
        v += (int64_t)g->mpts[player] + g->tabbe[player] + g->ipts[player];
        v -= (int64_t)g->mpts[o] + g->tabbe[o] + g->ipts[o];
    }
    return (double)v;
}

/* The core's C API for a module built on it (mulle_env._native, agents._native; `module` names it in the
 * error): NULL with ImportError set when the core is missing or speaks another ABI (a stale build). */
static inline const MulleCoreAPI *mulle_core_import(const char *module) {
    const MulleCoreAPI *api = PyCapsule_Import(MULLE_CORE_CAPSULE, 0);
    if (api && api->abi != MULLE_CORE_ABI) {
        PyErr_Format(PyExc_ImportError,
                     "%s was built for the core's ABI %d, the core speaks %d: a stale build; rebuild with "
                     "pip install -e .",
                     module, MULLE_CORE_ABI, api->abi);
        return NULL;
    }
    return api;
}

#endif
