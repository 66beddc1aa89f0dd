/* Casino's rules in C: the twin of rules.py (plans), state.py (moves applied, deals, round ends) and the
 * observation writer of mulle_env.games.casino (encode_view), on the bitmask position of casino.h. */
#include "casino.h"

CTables CT;

/* ------------------------------------------------------------------ the per-thread scratch space */

#define MEMO_N 4096 /* best-packing memo slots (a pure cache: it changes how fast a search runs, never what it finds) */

typedef struct {
    uint64_t *g;   /* groups (masks), sorted by their lowest card */
    int n;
    int start[64], end[64]; /* groups with lowest bit i: g[start[i] .. end[i]) (set for the loose numeral faces) */
    uint64_t usable;
} Groups;

typedef struct {
    uint64_t loose;
    uint32_t builds;
} Option;

#define KEY_MAX (64 + 10 * CMAXB) /* plan_key's bytes at most */
#define PCACHE_N 64               /* positions whose plans a thread keeps */
#define PCACHE_PLANS 48           /* plans an entry holds (a position with more is not kept) */
typedef struct {
    size_t len; /* 0: empty */
    int n;
    unsigned char key[KEY_MAX];
    CPlan plans[PCACHE_PLANS];
} PlanEntry;

struct CasinoThread {
    /* every subset of the loose numeral cards summing to at most 10, by sum (rules._Loose._sums) */
    uint64_t sum_mask[CMAX_SUMS];
    uint8_t sum_size[CMAX_SUMS], sum_total[CMAX_SUMS];
    int nsums;
    uint64_t gbuf[CMAX_SUMS]; /* the groups (size >= 2) of every value: each subset has one sum, so they fit */
    Groups groups[CMAXV + 1];
    /* the memo of best_packing */
    uint64_t memo_key[MEMO_N], memo_val[MEMO_N];
    uint32_t memo_gen[MEMO_N], gen;
    /* growable arrays */
    CPlan *plans;
    size_t plans_cap;
    uint64_t *packs;
    size_t packs_cap, npacks;
    Option *opts;
    size_t opts_cap;
    /* the plans of recent positions (a pure cache, direct-mapped by a hash of the position's plan key): legal ids
     * then a move by id, and the env layer's stepper coming back to a game after the other games of its batch,
     * generate once */
    PlanEntry cache[PCACHE_N];
    /* an error kept for the GIL (workers) */
    PyObject *err_type;
    const char *err_msg;
};

static CasinoThread main_thread;
static CASINO_TLS CasinoThread *current_thread = NULL;

static inline CasinoThread *cthread(void) { return current_thread ? current_thread : &main_thread; }

int casino_in_worker(void) { return current_thread != NULL; }

void casino_fail(PyObject *type, const char *msg) {
    CasinoThread *t = current_thread;
    if (!t) {
        PyErr_SetString(type, msg);
    } else if (!t->err_type) {
        t->err_type = type;
        t->err_msg = msg;
    }
}

CasinoThread *casino_thread_new(void) { return PyMem_RawCalloc(1, sizeof(CasinoThread)); }

void casino_thread_free(CasinoThread *t) {
    if (!t || t == &main_thread) return;
    PyMem_RawFree(t->plans);
    PyMem_RawFree(t->packs);
    PyMem_RawFree(t->opts);
    PyMem_RawFree(t);
}

void casino_thread_enter(CasinoThread *t) { current_thread = t; }

int casino_thread_error(CasinoThread *t) {
    if (!t || !t->err_type) return 0;
    PyErr_SetString(t->err_type, t->err_msg);
    t->err_type = NULL;
    t->err_msg = NULL;
    return -1;
}

/* Room for `need` items in *p (capacity *cap, items of `size` bytes); -1 with the error set. */
static int reserve(void **p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need) {
        if (n > ((size_t)1 << 40) / size) {
            casino_fail(PyExc_MemoryError, "the legal moves of this position do not fit in memory");
            return -1;
        }
        n *= 2;
    }
    void *q = PyMem_RawRealloc(*p, n * size);
    if (!q) {
        casino_fail(PyExc_MemoryError, "out of memory generating Casino's legal moves");
        return -1;
    }
    *p = q;
    *cap = n;
    return 0;
}

/* ------------------------------------------------------------------ sums and the 4.1.2 order */

static int mask_points(uint64_t m) {
    int p = 0;
    while (m) {
        p += CT.points[ctz64(m)];
        m &= m - 1;
    }
    return p;
}

/* rules._Loose.better: taking x beats taking y (most cards, most points, most spades, then the earlier card). */
static int better(uint64_t x, uint64_t y) {
    int nx = popcount64(x), ny = popcount64(y);
    if (nx != ny) return nx > ny;
    int px = mask_points(x), py = mask_points(y);
    if (px != py) return px > py;
    int sx = popcount64(x & CT.spade_mask), sy = popcount64(y & CT.spade_mask);
    if (sx != sy) return sx > sy;
    uint64_t d = x ^ y;
    return (x & d & (~d + 1)) != 0;
}

typedef struct {
    int n;
    int face[CNF], val[CNF];
    CasinoThread *t;
} Walk;

static void walk_sums(Walk *w, int start, int total, uint64_t mask, int size) {
    CasinoThread *t = w->t;
    for (int i = start; i < w->n; i++) {
        int v = total + w->val[i];
        if (v > CMAXV) continue;
        uint64_t m = mask | bit(w->face[i]);
        if (t->nsums < CMAX_SUMS) { /* 4050 at most: every numeral card loose */
            t->sum_mask[t->nsums] = m;
            t->sum_size[t->nsums] = (uint8_t)(size + 1);
            t->sum_total[t->nsums] = (uint8_t)v;
            t->nsums++;
        }
        walk_sums(w, i + 1, v, m, size + 1);
    }
}

/* The sums of `loose`'s numeral cards, and the groups (two cards at least) of each value by lowest card. */
static void prepare_sums(CasinoThread *t, uint64_t loose) {
    Walk w;
    w.n = 0;
    w.t = t;
    for (uint64_t m = loose & CT.numeral_mask; m; m &= m - 1) {
        int f = ctz64(m);
        w.face[w.n] = f;
        w.val[w.n] = CT.value[f];
        w.n++;
    }
    t->nsums = 0;
    walk_sums(&w, 0, 0, 0, 0);
    /* The groups of each value by lowest card in one pass: walk_sums lists the subsets by their lowest card
     * (depth first from the lowest), so each (value, lowest card)'s groups come together. */
    int cnt[CMAXV + 1] = {0}, pos[CMAXV + 1], last[CMAXV + 1];
    for (int k = 0; k < t->nsums; k++)
        if (t->sum_size[k] >= 2) cnt[t->sum_total[k]]++;
    int used = 0;
    for (int v = 1; v <= CMAXV; v++) {
        Groups *G = &t->groups[v];
        G->g = t->gbuf + used;
        G->n = cnt[v];
        G->usable = 0;
        for (int j = 0; j < w.n; j++) G->start[w.face[j]] = G->end[w.face[j]] = 0;
        used += cnt[v];
        pos[v] = 0;
        last[v] = -1;
    }
    for (int k = 0; k < t->nsums; k++) {
        if (t->sum_size[k] < 2) continue;
        int v = t->sum_total[k];
        Groups *G = &t->groups[v];
        uint64_t g = t->sum_mask[k];
        int f = ctz64(g);
        if (last[v] != f) {
            G->start[f] = pos[v];
            last[v] = f;
        }
        G->g[pos[v]++] = g;
        G->end[f] = pos[v];
        G->usable |= g;
    }
}

static uint64_t best_rec(CasinoThread *t, const Groups *G, uint64_t av) {
    if (!av) return 0;
    unsigned h = (unsigned)((av * 0x9E3779B97F4A7C15ULL) >> 52) & (MEMO_N - 1);
    for (int probe = 0; probe < 8; probe++) {
        unsigned s = (h + probe) & (MEMO_N - 1);
        if (t->memo_gen[s] != t->gen) break;
        if (t->memo_key[s] == av) return t->memo_val[s];
    }
    int i = ctz64(av);
    uint64_t low = bit(i);
    uint64_t result = best_rec(t, G, av & ~low); /* the lowest card stays on the table */
    for (int k = G->start[i]; k < G->end[i]; k++) {
        uint64_t g = G->g[k];
        if ((g & av) == g) {
            uint64_t cand = g | best_rec(t, G, av & ~g);
            if (better(cand, result)) result = cand;
        }
    }
    for (int probe = 0; probe < 8; probe++) {
        unsigned s = (h + probe) & (MEMO_N - 1);
        if (t->memo_gen[s] != t->gen) {
            t->memo_gen[s] = t->gen;
            t->memo_key[s] = av;
            t->memo_val[s] = result;
            break;
        }
    }
    return result;
}

/* rules._best_packing: the best collection (4.1.2's order) of disjoint groups of value v inside avail. */
static uint64_t best_packing(CasinoThread *t, int v, uint64_t avail) {
    const Groups *G = &t->groups[v];
    if (!G->n) return 0;
    if (++t->gen == 0) { /* the generation wrapped: forget every slot */
        memset(t->memo_gen, 0, sizeof t->memo_gen);
        t->gen = 1;
    }
    return best_rec(t, G, avail & G->usable);
}

/* rules._all_packings: every union of a collection of disjoint groups (the empty one too), appended to
 * t->packs (duplicates removed by the caller). */
static int all_rec(CasinoThread *t, const Groups *G, uint64_t av, uint64_t acc) {
    if (!av) {
        if (reserve((void **)&t->packs, &t->packs_cap, t->npacks + 1, sizeof(uint64_t)) < 0) return -1;
        t->packs[t->npacks++] = acc;
        return 0;
    }
    int i = ctz64(av);
    if (all_rec(t, G, av & ~bit(i), acc) < 0) return -1;
    for (int k = G->start[i]; k < G->end[i]; k++) {
        uint64_t g = G->g[k];
        if ((g & av) == g && all_rec(t, G, av & ~g, acc | g) < 0) return -1;
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_opt(const void *a, const void *b) {
    const Option *x = a, *y = b;
    if (x->loose != y->loose) return (x->loose > y->loose) - (x->loose < y->loose);
    return (x->builds > y->builds) - (x->builds < y->builds);
}

static int all_packings(CasinoThread *t, int v, uint64_t avail) {
    const Groups *G = &t->groups[v];
    t->npacks = 0;
    if (all_rec(t, G, avail & G->usable, 0) < 0) return -1;
    qsort(t->packs, t->npacks, sizeof(uint64_t), cmp_u64);
    size_t n = 0;
    for (size_t k = 0; k < t->npacks; k++)
        if (!n || t->packs[n - 1] != t->packs[k]) t->packs[n++] = t->packs[k];
    t->npacks = n;
    return 0;
}

/* ------------------------------------------------------------------ legal moves */

typedef struct {
    const CG *g;
    CasinoThread *t;
    int p, n;
    int in_hand[CMAXV + 1];
    uint32_t owned;                 /* builds the mover owns */
    uint32_t fb[CMAXV + 1];         /* builds of each value */
    uint64_t fl[CMAXV + 1];         /* loose cards of each value */
    uint64_t everything;            /* the loose numeral cards */
} Gen;

static int emit(Gen *s, int id, int kind, int card, uint64_t loose, uint32_t builds, int base, int value) {
    CasinoThread *t = s->t;
    if (reserve((void **)&t->plans, &t->plans_cap, (size_t)s->n + 1, sizeof(CPlan)) < 0) return -1;
    CPlan *pl = &t->plans[s->n++];
    pl->id = (int16_t)id;
    pl->kind = (uint8_t)kind;
    pl->card = (uint8_t)card;
    pl->loose = loose;
    pl->builds = builds;
    pl->base = (int8_t)base;
    pl->value = (int8_t)value;
    return 0;
}

/* rules.plans' keeps_reserve: after playing `card`, taking the builds `gone` and making a build of `made`
 * (-1: none), every build the mover owns has a card of its value left in the hand (CASINO.md 4.4). */
static int keeps(const Gen *s, int card, uint32_t gone, int made) {
    int a = CT.value[card];
    for (uint32_t m = s->owned & ~gone; m; m &= m - 1) {
        int v = s->g->b[ctz64(m)].value;
        if (s->in_hand[v] - (v == a) <= 0) return 0;
    }
    return made < 0 || s->in_hand[made] - (made == a) > 0;
}

/* Every option (loose cards, builds) of rules._choices for one (must, groups) part, appended to t->opts
 * from index *n. */
static int choices(Gen *s, size_t *n, int v, uint64_t must, uint64_t avail) {
    CasinoThread *t = s->t;
    if (all_packings(t, v, avail) < 0) return -1;
    uint32_t fb = s->fb[v];
    uint64_t fl = s->fl[v];
    for (size_t k = 0; k < t->npacks; k++) {
        uint64_t mask = must | t->packs[k];
        uint32_t B = fb;
        for (;;) {
            uint64_t S = fl;
            for (;;) {
                if (reserve((void **)&t->opts, &t->opts_cap, *n + 1, sizeof(Option)) < 0) return -1;
                t->opts[*n].loose = mask | S;
                t->opts[*n].builds = B;
                (*n)++;
                if (!S) break;
                S = (S - 1) & fl;
            }
            if (!B) break;
            B = (B - 1) & fb;
        }
    }
    return 0;
}

static size_t unique_opts(CasinoThread *t, size_t n) {
    qsort(t->opts, n, sizeof(Option), cmp_opt);
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (!m || cmp_opt(&t->opts[m - 1], &t->opts[k]) != 0) t->opts[m++] = t->opts[k];
    return m;
}

static int numeral_moves(Gen *s, int card) {
    const CG *g = s->g;
    CasinoThread *t = s->t;
    const CRules *rs = &g->rs;
    int a = CT.value[card];
    /* -- captures (4.1) -- */
    if (rs->gather) {
        uint64_t mask = best_packing(t, a, s->everything);
        if ((s->fb[a] || s->fl[a] || mask) && keeps(s, card, s->fb[a], -1))
            if (emit(s, CT.capture_id[card], CK_CAPTURE, card, s->fl[a] | mask, s->fb[a], -1, -1) < 0) return -1;
    } else {
        size_t n = 0;
        if (choices(s, &n, a, 0, s->everything) < 0) return -1;
        for (size_t k = 0; k < n; k++) {
            Option o = t->opts[k];
            if ((o.loose || o.builds) && keeps(s, card, o.builds, -1))
                if (emit(s, -1, CK_CAPTURE, card, o.loose, o.builds, -1, -1) < 0) return -1;
        }
    }
    /* -- new builds (4.2.1) -- */
    for (int value = a; value <= CMAXV; value++) {
        if (value > a && a > rs->sum_build_max) break; /* the app's rule: a card above the limit builds its own value */
        if (s->in_hand[value] - (value == a) <= 0) continue; /* no card left to capture the build with (4.2.3) */
        uint32_t fb = s->fb[value];
        uint64_t fl = s->fl[value];
        if (!keeps(s, card, fb, value)) continue;
        /* partners: every subset of the loose numeral cards summing to value - a (none needed when value == a) */
        int need = value - a;
        if (rs->gather) {
            int found = 0;
            uint64_t best = 0;
            if (!need) {
                best = best_packing(t, value, s->everything);
                found = 1;
            } else {
                for (int k = 0; k < t->nsums; k++) {
                    if (t->sum_total[k] != need) continue;
                    uint64_t sm = t->sum_mask[k];
                    uint64_t cand = sm | best_packing(t, value, s->everything & ~sm);
                    if (!found || better(cand, best)) best = cand;
                    found = 1;
                }
            }
            if (!found || !(best || fb || fl)) continue;
            if (emit(s, CT.build_id[card][value], CK_BUILD, card, fl | best, fb, -1, value) < 0) return -1;
        } else {
            size_t n = 0;
            if (!need) {
                if (choices(s, &n, value, 0, s->everything) < 0) return -1;
            } else {
                for (int k = 0; k < t->nsums; k++) {
                    if (t->sum_total[k] != need) continue;
                    uint64_t sm = t->sum_mask[k];
                    if (choices(s, &n, value, sm, s->everything & ~sm) < 0) return -1;
                }
            }
            n = unique_opts(t, n);
            for (size_t k = 0; k < n; k++) {
                Option o = t->opts[k];
                if (!(o.loose || o.builds)) continue;
                if (emit(s, -1, CK_BUILD, card, o.loose, o.builds, -1, value) < 0) return -1;
            }
        }
    }
    /* -- increases (4.2.2) -- */
    for (int i = 0; i < g->nb; i++) {
        const CBuild *base = &g->b[i];
        int value = base->value + a;
        if (value > CMAXV || !casino_build_single(base)) continue;
        if (rs->increase_max >= 0 && base->owner != s->p && popcount64(base->cards) > rs->increase_max) continue;
        if (s->in_hand[value] - (value == a) <= 0) continue;
        uint32_t fb = s->fb[value] & ~((uint32_t)1 << i);
        uint64_t fl = s->fl[value];
        if (!keeps(s, card, fb | ((uint32_t)1 << i), value)) continue;
        if (rs->gather) {
            uint64_t mask = best_packing(t, value, s->everything);
            int id = CT.increase_id[card][base->value];
            if (id < 0) {
                casino_fail(PyExc_RuntimeError, "an increase without a move id: a stale build of the core");
                return -1;
            }
            if (emit(s, id, CK_INCREASE, card, fl | mask, fb, i, value) < 0) return -1;
        } else {
            size_t n = 0;
            if (choices(s, &n, value, 0, s->everything) < 0) return -1;
            for (size_t k = 0; k < n; k++) {
                /* the options of this base exclude it: fb was taken without it */
                Option o = t->opts[k];
                if (emit(s, -1, CK_INCREASE, card, o.loose, o.builds & fb, i, value) < 0) return -1;
            }
        }
    }
    return 0;
}

/* What the legal moves depend on, as bytes: the rules, the mover, the mover's hand, whether the game is over,
 * the loose cards and the builds (64 + 10 bytes a build). */
static size_t plan_key(const CG *g, unsigned char *k) {
    size_t n = 0;
    uint64_t hand = g->hand[g->to_move & 1];
    int32_t head[3] = {g->to_move, !g->hand[0] && !g->hand[1], g->nb};
    memcpy(k + n, &g->rs, sizeof g->rs);
    n += sizeof g->rs;
    memcpy(k + n, head, sizeof head);
    n += sizeof head;
    memcpy(k + n, &hand, sizeof hand);
    n += sizeof hand;
    memcpy(k + n, &g->loose, sizeof g->loose);
    n += sizeof g->loose;
    for (int i = 0; i < g->nb && i < CMAXB; i++) {
        memcpy(k + n, &g->b[i].cards, sizeof g->b[i].cards);
        n += sizeof g->b[i].cards;
        k[n++] = (unsigned char)g->b[i].value;
        k[n++] = (unsigned char)g->b[i].owner;
    }
    return n;
}

static int generate(const CG *g, CasinoThread *t);

/* The legal moves' plans of g into *out (the thread's scratch or its cache: valid until this thread's next
 * call; callers copy what they keep before running any Python code). */
int casino_plans(const CG *g, const CPlan **out) {
    if (casino_failpoint()) return -1;
    CasinoThread *t = cthread();
    unsigned char key[KEY_MAX];
    size_t len = plan_key(g, key);
    uint64_t h = g->hand[g->to_move & 1] * 0x9E3779B97F4A7C15ULL ^ (g->loose + (uint64_t)g->to_move) * 0xBF58476D1CE4E5B9ULL;
    for (int i = 0; i < g->nb; i++) h ^= g->b[i].cards * 0x94D049BB133111EBULL + (uint64_t)g->b[i].value;
    PlanEntry *e = &t->cache[(h ^ (h >> 29) ^ (h >> 47)) & (PCACHE_N - 1)];
    if (e->len == len && memcmp(e->key, key, len) == 0) {
        *out = e->plans;
        return e->n;
    }
    int n = generate(g, t);
    *out = t->plans;
    if (n >= 0 && n <= PCACHE_PLANS) {
        memcpy(e->key, key, len);
        e->len = len;
        memcpy(e->plans, t->plans, sizeof(CPlan) * (size_t)n);
        e->n = n;
    }
    return n;
}

static int generate(const CG *g, CasinoThread *t) {
    Gen s;
    memset(&s, 0, sizeof s);
    s.g = g;
    s.t = t;
    if (!g->hand[0] && !g->hand[1]) return 0;
    int p = s.p = g->to_move;
    for (uint64_t m = g->hand[p]; m; m &= m - 1) s.in_hand[CT.value[ctz64(m)]]++;
    for (int i = 0; i < g->nb; i++) {
        int v = g->b[i].value;
        if (v < 1 || v > CMAXV) continue; /* loading refuses these */
        s.fb[v] |= (uint32_t)1 << i;
        if (g->b[i].owner == p) s.owned |= (uint32_t)1 << i;
    }
    for (uint64_t m = g->loose & CT.numeral_mask; m; m &= m - 1) {
        int f = ctz64(m);
        s.fl[CT.value[f]] |= bit(f);
    }
    s.everything = g->loose & CT.numeral_mask;
    prepare_sums(t, g->loose);
    for (uint64_t m = g->hand[p]; m; m &= m - 1) {
        int card = ctz64(m);
        if (bit(card) & CT.court_mask) {
            uint64_t same = 0;
            for (uint64_t l = g->loose; l; l &= l - 1) {
                int f = ctz64(l);
                if (CT.rank[f] == CT.rank[card]) same |= bit(f);
            }
            if (same && keeps(&s, card, 0, -1)) {
                if (g->rs.court_all) {
                    if (emit(&s, CT.capture_id[card], CK_CAPTURE, card, same, 0, -1, -1) < 0) return -1;
                } else {
                    for (uint64_t l = same; l; l &= l - 1) {
                        int f = ctz64(l), id = CT.capture_take_id[card][f];
                        if (id < 0) {
                            casino_fail(PyExc_RuntimeError, "a court capture without a move id: a stale build of the core");
                            return -1;
                        }
                        if (emit(&s, id, CK_CAPTURE, card, bit(f), 0, -1, -1) < 0) return -1;
                    }
                }
            }
        } else if (numeral_moves(&s, card) < 0) {
            return -1;
        }
        /* -- trail (4.3) -- */
        if ((!s.owned || g->rs.trail_with_build) && keeps(&s, card, 0, -1))
            if (emit(&s, CT.trail_id[card], CK_TRAIL, card, 0, 0, -1, -1) < 0) return -1;
    }
    if (g->rs.gather) { /* ids are the canonical order: an insertion sort (a few dozen plans, nearly in order) */
        CPlan *pl = t->plans;
        for (int i = 1; i < s.n; i++) {
            if (pl[i].id >= pl[i - 1].id) continue;
            CPlan x = pl[i];
            int j = i - 1;
            while (j >= 0 && pl[j].id > x.id) {
                pl[j + 1] = pl[j];
                j--;
            }
            pl[j + 1] = x;
        }
    }
    return s.n;
}

int casino_legal_ids(const CG *g, int *out) {
    if (!g->rs.gather) {
        casino_fail(PyExc_ValueError, "under gather_all=False moves name what they take and have no ids");
        return -1;
    }
    const CPlan *pl;
    int n = casino_plans(g, &pl);
    for (int i = 0; i < n; i++) out[i] = pl[i].id;
    return n;
}

/* ------------------------------------------------------------------ moves applied, deals, round ends */

int casino_build_single(const CBuild *b) {
    int sum = 0;
    for (uint64_t m = b->cards; m; m &= m - 1) sum += CT.value[ctz64(m)];
    return sum == b->value;
}

static int build_before(const CBuild *x, const CBuild *y) {
    if (x->value != y->value) return x->value < y->value;
    if (x->owner != y->owner) return x->owner < y->owner;
    /* builds are disjoint, so the sorted card tuples differ at their first cards */
    int lx = x->cards ? ctz64(x->cards) : 64, ly = y->cards ? ctz64(y->cards) : 64;
    return lx < ly;
}

static void deal(CG *g) {
    int dealer = g->round % 2, h = CT.hand_deal;
    uint64_t hands[2] = {0, 0};
    int k = 0;
    for (int s = 0; s < 2; s++) /* first the player who plays first (the dealer's opponent), then the dealer */
        for (int i = 0; i < h && k < g->nstock; i++) hands[s] |= bit(g->stock[k++]);
    g->hand[1 - dealer] = hands[0];
    g->hand[dealer] = hands[1];
    memmove(g->stock, g->stock + k, (size_t)(g->nstock - k));
    g->nstock -= k;
    g->to_move = 1 - dealer;
}

uint64_t casino_derive_seed(uint64_t seed, uint64_t a, uint64_t b) {
    uint64_t x = seed, parts[3] = {2, a, b};
    for (int i = 0; i < 3; i++) {
        x ^= parts[i] * 0xD1B54A32D192ED03ULL;
        x += 0x9E3779B97F4A7C15ULL; /* SplitMix64, as rng.splitmix64 */
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        x = z ^ (z >> 31);
    }
    return x;
}

void casino_shuffle(uint8_t *a, int n, uint64_t seed) {
    uint64_t x = seed;
    for (int i = n - 1; i > 0; i--) {
        x += 0x9E3779B97F4A7C15ULL;
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        int j = (int)(z % (uint64_t)(i + 1));
        uint8_t tmp = a[i];
        a[i] = a[j];
        a[j] = tmp;
    }
}

void casino_start_round(CG *g) {
    uint8_t deck[CNF];
    for (int i = 0; i < CNF; i++) deck[i] = (uint8_t)i;
    casino_shuffle(deck, CNF, casino_derive_seed(g->has_seed ? g->seed : 0, CT.deal_stream, (uint64_t)g->round));
    int first = 2 * CT.hand_deal, table = CT.table_deal;
    g->captured[0] = g->captured[1] = 0;
    g->sweeps[0] = g->sweeps[1] = 0;
    g->last_capturer = -1;
    g->loose = 0;
    for (int i = first; i < first + table; i++) g->loose |= bit(deck[i]);
    g->nstock = 0;
    for (int i = 0; i < CNF; i++)
        if (i < first || i >= first + table) g->stock[g->nstock++] = deck[i];
    g->nb = 0;
    deal(g);
}

void casino_new_game(CG *g, uint64_t seed) {
    CRules rs = g->rs;
    memset(g, 0, offsetof(CG, sheets));
    g->rs = rs;
    g->seed = seed;
    g->has_seed = 1;
    g->round = 1;
    g->last_capturer = -1;
    g->last_player = g->last_id = -1;
    g->nsheets = 0;
    casino_start_round(g);
}

/* state.round_sheets: one sheet per seat, SHEET_KEYS' order. */
static void round_sheet(const CG *g, int s, int32_t *out) {
    uint64_t pile = g->captured[s];
    out[0] = popcount64(pile) >= CT.cards_to_win ? CT.cards_points : 0;
    out[1] = popcount64(pile & CT.spade_mask) >= CT.spades_to_win ? CT.spades_points : 0;
    out[2] = (pile & bit(CT.big)) ? CT.points[CT.big] : 0;
    out[3] = (pile & bit(CT.little)) ? CT.points[CT.little] : 0;
    out[4] = popcount64(pile & CT.ace_mask);
    out[5] = g->rs.sweeps_on ? g->sweeps[s] : 0;
    out[6] = out[0] + out[1] + out[2] + out[3] + out[4] + out[5];
}

static void end_round(CG *g) {
    uint64_t rest = g->loose;
    for (int i = 0; i < g->nb; i++) rest |= g->b[i].cards;
    if (rest && g->last_capturer >= 0) g->captured[g->last_capturer] |= rest; /* not a sweep (5.2) */
    g->loose = 0;
    g->nb = 0;
    int32_t sheet[2][CN_SHEET];
    round_sheet(g, 0, sheet[0]);
    round_sheet(g, 1, sheet[1]);
    if (g->nsheets < CMAX_ROUNDS) { /* rounds never exceed Ruleset's MAX_ROUNDS, which configure() checks */
        memcpy(g->sheets[g->nsheets], sheet, sizeof sheet);
        g->nsheets++;
    }
    g->scores[0] += sheet[0][6];
    g->scores[1] += sheet[1][6];
    int64_t a = g->scores[0], b = g->scores[1];
    int done;
    if (g->rs.rounds >= 0)
        done = g->round >= g->rs.rounds;
    else
        done = ((a > b ? a : b) >= g->rs.target && a != b) || g->round >= g->rs.max_rounds;
    if (done) {
        g->to_move = 1 - g->round % 2; /* the hands stay empty: that is what over means */
        return;
    }
    g->round++; /* and the other seat deals */
    casino_start_round(g);
}

int casino_apply(CG *g, const CPlan *pl) {
    int p = g->to_move, card = pl->card;
    if (card >= CNF || !(g->hand[p] & bit(card))) {
        casino_fail(PyExc_ValueError, "the card played is not in the hand");
        return -1;
    }
    if ((pl->kind == CK_BUILD || pl->kind == CK_INCREASE) && g->nb >= CMAXB && !pl->builds && pl->base < 0) {
        casino_fail(PyExc_RuntimeError, "more builds than the core holds"); /* never: 40 numeral cards, 2 a build */
        return -1;
    }
    g->hand[p] &= ~bit(card);
    if (pl->kind == CK_TRAIL) {
        g->loose |= bit(card);
    } else {
        uint64_t taken = pl->loose;
        uint32_t gone = pl->builds;
        if (pl->base >= 0) gone |= (uint32_t)1 << pl->base;
        g->loose &= ~pl->loose;
        int k = 0;
        for (int i = 0; i < g->nb; i++) {
            if (gone & ((uint32_t)1 << i))
                taken |= g->b[i].cards;
            else
                g->b[k++] = g->b[i];
        }
        g->nb = k;
        if (pl->kind == CK_CAPTURE) {
            g->captured[p] |= bit(card) | taken;
            g->last_capturer = p;
            int last_play = !g->hand[0] && !g->hand[1] && !g->nstock;
            if (!g->loose && !g->nb && g->rs.sweeps_on && !last_play) g->sweeps[p]++;
        } else {
            CBuild nb;
            nb.cards = bit(card) | taken;
            nb.value = pl->value;
            nb.owner = (int8_t)p;
            int at = g->nb;
            while (at > 0 && build_before(&nb, &g->b[at - 1])) {
                g->b[at] = g->b[at - 1];
                at--;
            }
            g->b[at] = nb;
            g->nb++;
        }
    }
    g->last_player = p;
    g->last_id = pl->id;
    g->to_move = 1 - p;
    if (!g->hand[0] && !g->hand[1]) {
        if (g->nstock)
            deal(g);
        else
            end_round(g);
    } else if (!g->hand[g->to_move]) {
        g->to_move = p; /* a hand-made position with unequal hands: a player without cards passes */
    }
    return 0;
}

int casino_apply_id(CG *g, int id) {
    if (!g->hand[0] && !g->hand[1]) {
        casino_fail(PyExc_ValueError, "the game is over");
        return -1;
    }
    if (id < 0 || id >= CT.num_ids) {
        casino_fail(PyExc_ValueError, "move id out of range");
        return -1;
    }
    const CPlan *pl;
    int n = casino_plans(g, &pl);
    if (n < 0) return -1;
    for (int i = 0; i < n; i++)
        if (pl[i].id == id) {
            CPlan copy = pl[i];
            return casino_apply(g, &copy);
        }
    casino_fail(PyExc_ValueError, "the move id is not legal here");
    return -1;
}

/* ------------------------------------------------------------------ the observation (encode_view) */

static void faces_into(float *o, uint64_t m) {
    for (; m; m &= m - 1) o[ctz64(m)] = 1.0f;
}

static void race_into(float *o, uint64_t pile, int sweeps) {
    o[0] = (float)((double)popcount64(pile) / CT.s_cards);
    o[1] = (float)((double)popcount64(pile & CT.spade_mask) / CT.s_spades);
    o[2] = (float)((double)popcount64(pile & CT.ace_mask) / CT.s_aces);
    o[3] = (pile & bit(CT.big)) ? 1.0f : 0.0f;
    o[4] = (pile & bit(CT.little)) ? 1.0f : 0.0f;
    o[5] = (float)((double)sweeps / CT.s_sweeps);
}

int casino_write_obs(const CG *g, int seat, float *out) {
    if (seat != 0 && seat != 1) {
        casino_fail(PyExc_ValueError, "seat must be 0 or 1");
        return -1;
    }
    int p = seat, o = 1 - seat, over = !g->hand[0] && !g->hand[1];
    memset(out, 0, sizeof(float) * (size_t)CT.obs_size);
    uint64_t seen = g->hand[p] | g->loose | g->captured[0] | g->captured[1];
    faces_into(out + CT.face_at[0], g->hand[p]);
    faces_into(out + CT.face_at[1], g->loose);
    int count[CMAXV + 1][2];
    memset(count, 0, sizeof count);
    for (int i = 0; i < g->nb; i++) {
        const CBuild *b = &g->b[i];
        int col = b->owner == p ? 0 : 1;
        if (b->value < 1 || b->value > CMAXV) continue;
        faces_into(out + CT.face_at[2 + col], b->cards);
        seen |= b->cards;
        float *at = out + CT.builds_at + (b->value - 1) * CT.build_stride;
        count[b->value][col]++;
        at[2 + col] += (float)((double)popcount64(b->cards) / CT.s_build_cards); /* float32 sums, as numpy's += */
        if (casino_build_single(b)) at[4 + col] = 1.0f;
    }
    for (int v = 1; v <= CMAXV; v++) {
        float *at = out + CT.builds_at + (v - 1) * CT.build_stride;
        at[0] = (float)count[v][0];
        at[1] = (float)count[v][1];
    }
    faces_into(out + CT.face_at[4], g->captured[p]);
    faces_into(out + CT.face_at[5], g->captured[o]);
    faces_into(out + CT.face_at[6], ~seen & ((bit(CNF - 1) << 1) - 1));
    race_into(out + CT.my_race_at, g->captured[p], g->sweeps[p]);
    race_into(out + CT.opp_race_at, g->captured[o], g->sweeps[o]);
    float *sc = out + CT.scalars_at;
    const CRules *rs = &g->rs;
    sc[0] = (float)((double)g->scores[p] / CT.score_scale);
    sc[1] = (float)((double)g->scores[o] / CT.score_scale);
    sc[2] = (float)((double)g->round / (double)rs->max_rounds);
    sc[3] = (float)((double)popcount64(g->hand[p]) / CT.s_hand);
    sc[4] = (float)((double)popcount64(g->hand[o]) / CT.s_hand);
    sc[5] = (float)((double)g->nstock / CT.s_stock);
    sc[6] = (g->to_move == p && !over) ? 1.0f : 0.0f;
    sc[7] = (float)p;
    sc[8] = (g->round % 2 == p) ? 1.0f : 0.0f;
    sc[9] = g->last_capturer == p ? 1.0f : 0.0f;
    sc[10] = g->last_capturer == o ? 1.0f : 0.0f;
    sc[11] = over ? 1.0f : 0.0f;
    float *ru = out + CT.rules_at;
    ru[0] = rs->gather ? 1.0f : 0.0f;
    ru[1] = rs->court_all ? 1.0f : 0.0f;
    ru[2] = rs->sweeps_on ? 1.0f : 0.0f;
    ru[3] = (float)((double)rs->sum_build_max / CT.s_sum_build);
    ru[4] = (float)((double)(rs->increase_max >= 0 ? rs->increase_max : 52) / CT.s_increase);
    ru[5] = rs->trail_with_build ? 1.0f : 0.0f;
    ru[6] = (float)((double)rs->target / CT.s_target);
    ru[7] = (float)((double)(rs->rounds >= 0 ? rs->rounds : 0) / CT.s_rounds);
    return 0;
}

int casino_write_mask(const CG *g, uint8_t *mask) {
    memset(mask, 0, (size_t)CT.num_ids);
    if (!g->hand[0] && !g->hand[1]) return 0;
    if (!g->rs.gather) {
        casino_fail(PyExc_ValueError, "under gather_all=False moves name what they take and have no ids");
        return -1;
    }
    const CPlan *pl;
    int n = casino_plans(g, &pl);
    if (n < 0) return -1;
    for (int i = 0; i < n; i++)
        if (pl[i].id >= 0 && pl[i].id < CT.num_ids) mask[pl[i].id] = 1;
    return n;
}
