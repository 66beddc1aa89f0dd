/* The compiled rules core of Casino: the shared header (types, capacities, the tables, declarations).
 *
 * mulle_env/casino/ (rules.py, state.py, observation_layout.py) is the readable reference; the C files
 * beside this header are its compiled twin, checked against the reference's golden playthroughs
 * (tests/playthroughs/casino/), the conformance positions and a Hypothesis comparison of both backends
 * (tests/test_casino_backends.py). What the C code knows of the game's tables (card values, points,
 * spades, ranks, the move table, the deal sizes, the scoring constants, the observation layout) it is
 * given by cstate.py when the module loads (configure()); the constants below are capacities, and
 * configure() refuses tables that do not fit them, saying to rebuild.
 *
 * Files, by concern:
 *   rules.c     legal moves (as plans: what each move takes and makes), moves applied, deals, round ends,
 *               the observation and mask writers, the per-thread scratch space (no Python objects)
 *   module.c    the Python type Core (cstate.GameState's base), configure(), the module, its GameOps
 *               capsule (mulle_env/engine/csrc/game_ops.h) for the env layer's stepper
 *
 * Positions are bitmasks over the 52 faces (one deck: every face exists once), so a pile is one word and
 * "the earlier card wins" (CASINO.md 4.1.2's last tie-break) is the lowest bit of a difference, as in
 * rules.py. Builds are a short array sorted as the reference sorts its tuples (value, owner, cards): builds
 * are disjoint, so their lowest cards order them.
 *
 * Threads: everything runs with the GIL held, except what game_ops.h marks nogil; those may run on a worker
 * thread that has entered its own CasinoThread (the scratch space, and the place its errors wait for the
 * GIL). The allocation-failure hook (the Mulle core's counter, reached through its capsule) fires only in
 * the main context, where the GIL is held.
 */
#ifndef CASINO_CORE_H
#define CASINO_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Raised whenever this header, the Python type's private API or configure() changes: cstate.py refuses a
 * core of another ABI ("rebuild: pip install -e ."). */
#define CASINO_CORE_ABI 1

#if defined(_MSC_VER)
#define CASINO_TLS __declspec(thread)
#else
#define CASINO_TLS __thread
#endif

/* ----- capacities */
#define CNF 52          /* faces */
#define CMAXV 10        /* largest card and build value */
#define CMAXB 26        /* builds on a table (each holds two of the 40 numeral cards at least: 20) */
#define CMAX_IDS 1024   /* move ids */
#define CMAX_ROUNDS 64  /* rounds a game may have (Ruleset's MAX_ROUNDS) */
#define CN_SHEET 7      /* a round's sheet: cards, spades, big_casino, little_casino, aces, sweeps, total */
#define CMAX_SUMS 4096  /* subsets of loose numeral cards summing to at most 10: 4050 with all 40 loose */
#define COBS_MAX 1024
#define CN_FACE_BLOCKS 7
#define CN_BUILD_FEATURES 6
#define CN_RACE 6
#define CN_SCALARS 12
#define CN_RULES 8

enum { CK_CAPTURE, CK_BUILD, CK_INCREASE, CK_TRAIL };

typedef struct {
    uint64_t cards; /* faces */
    int8_t value, owner;
} CBuild;

typedef struct {
    /* the ruleset's flags (Ruleset's fields) */
    int32_t gather, court_all, sweeps_on, sum_build_max, increase_max /* -1: none */, trail_with_build;
    int32_t target, rounds /* -1: play to target */, max_rounds;
} CRules;

typedef struct {
    uint64_t hand[2], loose, captured[2];
    CBuild b[CMAXB];
    int32_t nb;
    uint8_t stock[CNF]; /* dealing order, next card first */
    int32_t nstock;
    int32_t sweeps[2], last_capturer /* -1: none */, round, to_move;
    int64_t scores[2];
    int32_t last_player, last_id; /* last_player -1: no move yet (or one the Python side names) */
    CRules rs;
    uint64_t seed;
    int32_t has_seed;
    /* finished rounds: must stay last, a copy stops after the used entries (CG_USED) */
    int32_t nsheets;
    int32_t sheets[CMAX_ROUNDS][2][CN_SHEET];
} CG;

#define CG_USED(g) (offsetof(CG, sheets) + (size_t)(g)->nsheets * sizeof((g)->sheets[0]))

/* A legal move and what it does (rules.Plan): the card played, the loose cards and builds (indices into
 * the position's b[]) it takes, the build it increases, the value it makes. */
typedef struct {
    int16_t id;           /* move id, -1 for a move that names what it takes (gather_all=False) */
    uint8_t kind, card;
    int8_t base, value;   /* -1: none */
    uint32_t builds;      /* bit i: b[i] is taken */
    uint64_t loose;
} CPlan;

/* ----- the tables, configured from the Python definitions (cstate._configure) */
typedef struct {
    int configured;
    int value[CNF], points[CNF], rank[CNF];
    uint64_t spade_mask, court_mask, numeral_mask, ace_mask;
    int num_ids;
    int8_t m_kind[CMAX_IDS], m_card[CMAX_IDS];
    int capture_id[CNF], trail_id[CNF];
    int capture_take_id[CNF][CNF];       /* -1: none */
    int build_id[CNF][CMAXV + 1];        /* -1: none */
    int increase_id[CNF][CMAXV + 1];     /* -1: none */
    int hand_deal, table_deal, cards_to_win, spades_to_win, cards_points, spades_points, big, little;
    int max_sweeps, max_rounds;
    uint64_t deal_stream;
    /* observation_layout.py */
    int obs_size, face_at[CN_FACE_BLOCKS], builds_at, build_stride, my_race_at, opp_race_at, scalars_at, rules_at;
    double score_scale, s_build_cards, s_cards, s_spades, s_aces, s_sweeps, s_hand, s_stock, s_sum_build, s_increase,
        s_target, s_rounds;
} CTables;

extern CTables CT;

/* ----- the per-thread scratch space and errors (rules.c) */
typedef struct CasinoThread CasinoThread;
CasinoThread *casino_thread_new(void);
void casino_thread_free(CasinoThread *t);
void casino_thread_enter(CasinoThread *t);
int casino_thread_error(CasinoThread *t);
void casino_fail(PyObject *type, const char *msg); /* a Python exception, or kept for the GIL in a worker */
int casino_in_worker(void);

/* The allocation-failure hook: the Mulle core's counter (module.c binds it through its capsule). */
extern long *casino_fail_after;
extern int (*casino_failpoint_hit)(void);
static inline int casino_failpoint(void) {
    return !casino_in_worker() && casino_fail_after && *casino_fail_after > 0 && casino_failpoint_hit();
}

/* ----- rules.c (-1 returns have an error set: a Python exception, or kept in a worker's context) */
int casino_plans(const CG *g, const CPlan **out);   /* the legal moves' plans in the thread's scratch */
int casino_apply(CG *g, const CPlan *plan);
int casino_legal_ids(const CG *g, int *out);         /* ascending; gather_all=True only */
int casino_apply_id(CG *g, int id);
void casino_start_round(CG *g);
void casino_new_game(CG *g, uint64_t seed);          /* keeps g->rs */
int casino_write_obs(const CG *g, int seat, float *out);
int casino_write_mask(const CG *g, uint8_t *mask);
uint64_t casino_derive_seed(uint64_t seed, uint64_t a, uint64_t b);
void casino_shuffle(uint8_t *a, int n, uint64_t seed);
int casino_build_single(const CBuild *b);

/* The lowest set bit of x (x != 0). */
#if defined(_MSC_VER)
#include <intrin.h>
static inline int ctz64(uint64_t x) {
    unsigned long i;
    _BitScanForward64(&i, x);
    return (int)i;
}
#else
static inline int ctz64(uint64_t x) { return __builtin_ctzll(x); }
#endif
/* Set bits, inline: without -mpopcnt (a portable build) GCC's builtin is a call into libgcc. */
static inline int popcount64(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}
static inline uint64_t bit(int f) { return (uint64_t)1 << f; }

#endif
