/* The rules (RULES.md 3-6) on a plain C position: the twin of rules.py and capture.py.
 *
 * No Python objects are made here; a function that can fail (only the capture search's
 * allocations can) returns -1 with a Python MemoryError set. Moves are trusted to be legal
 * (legality is checked where input arrives), but whatever a move names must exist, so that
 * even an illegal move only moves cards between piles: no pile can overrun.
 */
#include "engine.h"

/* ------------------------------------------------------------------ piles */

static int cmp_u8(const void *a, const void *b) { return (int)*(const uint8_t *)a - (int)*(const uint8_t *)b; }

int total_cards(const G *g) {
    int n = g->hand[0].n + g->hand[1].n + g->loose.n + g->deck.n + g->mulle[0].n + g->mulle[1].n + g->intake[0].n +
            g->intake[1].n;
    for (int v = 0; v <= MAXV; v++) n += g->bc[v].n;
    return n;
}

/* ------------------------------------------------------------------ capture search (capture.py) */

typedef struct {
    int8_t idx[MAXT];
    int8_t cnt[MAXT];
    int8_t len;  /* entries */
    int8_t size; /* cards */
    int8_t top;
    int8_t multi;  /* some value is needed twice or more */
    uint16_t need; /* the values it needs, bit i for table value i + 1 */
} Pat;

#define MAX_PATS 128 /* partitions of 13 into parts below 13: 100 */
static Pat PATS[MAXT + 1][MAX_PATS];
static int NPATS[MAXT + 1];

static int gen_parts(int v, int total, int largest, int *parts, int np) {
    if (total == 0) {
        if (NPATS[v] >= MAX_PATS) return -1;
        int counts[MAXT] = {0};
        for (int i = 0; i < np; i++) counts[parts[i] - 1]++;
        Pat *p = &PATS[v][NPATS[v]++];
        p->len = 0;
        p->size = (int8_t)np;
        p->multi = 0;
        p->need = 0;
        for (int i = 0; i < MAXT; i++)
            if (counts[i]) {
                p->idx[p->len] = (int8_t)i;
                p->cnt[p->len] = (int8_t)counts[i];
                p->len++;
                p->need |= (uint16_t)(1u << i);
                if (counts[i] > 1) p->multi = 1;
            }
        p->top = p->idx[p->len - 1];
        return 0;
    }
    for (int part = total < largest ? total : largest; part > 0; part--) {
        parts[np] = part;
        if (gen_parts(v, total - part, part, parts, np + 1) < 0) return -1;
    }
    return 0;
}

/* A counts vector r[0..v-2] (cards of table value i + 1) packed 4 bits per entry. */
static inline uint64_t pack(const int8_t *r, int n) {
    uint64_t k = 0;
    for (int i = 0; i < n; i++) k |= (uint64_t)r[i] << (4 * i);
    return k;
}

/* The memo of `_best`: (v, counts) -> most cards coverable. A pure cache (it changes how fast
 * a search runs, never what it finds): the main one serves every caller holding the GIL, and
 * each worker thread of the env layer's stepper has its own (RulesThread), so that searches
 * run at once on several threads without sharing anything they write. */
#define MEMO_BITS 18
#define MEMO_SIZE (1u << MEMO_BITS)
#define MEMO_LIMIT (MEMO_SIZE / 2)
typedef struct {
    uint64_t *key;
    int8_t *val;
    unsigned used;
} Memo;

static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int memo_get(const Memo *m, uint64_t key) {
    unsigned h = (unsigned)mix64(key) & (MEMO_SIZE - 1);
    while (m->key[h]) {
        if (m->key[h] == key) return m->val[h];
        h = (h + 1) & (MEMO_SIZE - 1);
    }
    return -1;
}

static void memo_put(Memo *m, uint64_t key, int val) {
    if (m->used >= MEMO_LIMIT) {
        memset(m->key, 0, sizeof(uint64_t) * MEMO_SIZE);
        m->used = 0;
    }
    unsigned h = (unsigned)mix64(key) & (MEMO_SIZE - 1);
    while (m->key[h]) {
        if (m->key[h] == key) {
            m->val[h] = (int8_t)val;
            return;
        }
        h = (h + 1) & (MEMO_SIZE - 1);
    }
    m->key[h] = key;
    m->val[h] = (int8_t)val;
    m->used++;
}

static void memo_clear(Memo *m) {
    if (m->key) memset(m->key, 0, sizeof(uint64_t) * MEMO_SIZE);
    m->used = 0;
}

typedef struct {
    int v, n; /* value, entries (v - 1) */
    const Pat *by_top[MAXT][MAX_PATS];
    int nby_top[MAXT];
    Memo *memo;
} Search;

/* What a capture search writes, per thread: the main one (callers holding the GIL) or a
 * worker's (rules_thread_new; rules_thread_enter makes it the calling thread's). A worker runs
 * without the GIL, so an error is kept here (err_type, err_msg) for rules_thread_error to raise
 * once the GIL is back. */
struct RulesThread {
    Memo memo;
    Search search;
    PyObject *err_type;
    const char *err_msg;
};

static RulesThread main_thread;
static MULLE_TLS RulesThread *current_thread = NULL;

static inline RulesThread *rules_thread(void) { return current_thread ? current_thread : &main_thread; }

/* An error of the rules: a Python exception with the GIL, kept for later in a worker. */
void rules_fail(PyObject *type, const char *msg) {
    RulesThread *t = current_thread;
    if (!t) {
        PyErr_SetString(type, msg);
    } else if (!t->err_type) {
        t->err_type = type;
        t->err_msg = msg;
    }
}

void capture_memo_clear(void) { memo_clear(&main_thread.memo); }

unsigned capture_memo_size(void) { return main_thread.memo.used; }

RulesThread *rules_thread_new(void) {
    RulesThread *t = PyMem_RawCalloc(1, sizeof(RulesThread));
    if (!t) return NULL;
    t->memo.key = PyMem_RawCalloc(MEMO_SIZE, sizeof(uint64_t));
    t->memo.val = PyMem_RawCalloc(MEMO_SIZE, 1);
    if (!t->memo.key || !t->memo.val) {
        rules_thread_free(t);
        return NULL;
    }
    memo_clear(&t->memo); /* touched now, not page by page inside a search (see rules_init) */
    return t;
}

void rules_thread_free(RulesThread *t) {
    if (!t) return;
    PyMem_RawFree(t->memo.key);
    PyMem_RawFree(t->memo.val);
    PyMem_RawFree(t);
}

void rules_thread_enter(RulesThread *t) { current_thread = t; }

int rules_thread_error(RulesThread *t) {
    if (!t || !t->err_type) return 0;
    PyErr_SetString(t->err_type, t->err_msg);
    t->err_type = NULL;
    t->err_msg = NULL;
    return -1;
}

static inline int top_of(const int8_t *r, int n) {
    for (int i = n - 1; i >= 0; i--)
        if (r[i]) return i;
    return -1;
}

static inline int fits(const int8_t *r, const Pat *p) {
    for (int i = 0; i < p->len; i++)
        if (r[p->idx[i]] < p->cnt[i]) return 0;
    return 1;
}

/* Most cards coverable by disjoint groups summing to v (capture.py `_best`). */
static int best_cover(const Search *s, int8_t *r) {
    int top = top_of(r, s->n);
    if (top < 0) return 0;
    uint64_t key = ((uint64_t)s->v) | (pack(r, s->n) << 4);
    int got = memo_get(s->memo, key);
    if (got >= 0) return got;
    int total = 0;
    for (int i = 0; i < s->n; i++) total += r[i];
    r[top]--;
    int best = best_cover(s, r);
    r[top]++;
    for (int k = 0; k < s->nby_top[top]; k++) {
        const Pat *p = s->by_top[top][k];
        if (!fits(r, p)) continue;
        for (int i = 0; i < p->len; i++) r[p->idx[i]] -= p->cnt[i];
        int cand = p->size + best_cover(s, r);
        for (int i = 0; i < p->len; i++) r[p->idx[i]] += p->cnt[i];
        if (cand > best) {
            best = cand;
            if (best == total) break;
        }
    }
    memo_put(s->memo, key, best);
    return best;
}

/* A growable open-addressing set of 128-bit keys (the DFS's `seen` and the optimal covers). */
typedef struct {
    uint64_t *a, *b;
    uint8_t *used;
    size_t cap, n;
    int heap; /* a, b and used were allocated here (else they are the caller's buffers) */
} Set2;

static int set2_init(Set2 *s, size_t cap) {
    s->cap = cap;
    s->n = 0;
    s->a = s->b = NULL;
    s->used = NULL;
    s->heap = 1;
    if (core_failpoint()) return 0;
    /* The raw allocator: a worker thread of the stepper searches without the GIL. */
    s->a = PyMem_RawCalloc(cap, sizeof(uint64_t));
    s->b = PyMem_RawCalloc(cap, sizeof(uint64_t));
    s->used = PyMem_RawCalloc(cap, 1);
    return s->a && s->b && s->used;
}

/* An empty set in the caller's buffers of cap entries (a power of two): a search's usual sets fit on its
 * stack, so most captures allocate nothing (six allocations and frees a capture were about a sixth of the
 * search's time, perf). */
static void set2_init_in(Set2 *s, uint64_t *a, uint64_t *b, uint8_t *used, size_t cap) {
    memset(used, 0, cap);
    s->a = a;
    s->b = b;
    s->used = used;
    s->cap = cap;
    s->n = 0;
    s->heap = 0;
}

static void set2_free(Set2 *s) {
    if (!s->heap) return;
    PyMem_RawFree(s->a);
    PyMem_RawFree(s->b);
    PyMem_RawFree(s->used);
    s->a = s->b = NULL;
    s->used = NULL;
}

/* Returns 1 if added, 0 if present, -1 on memory failure (the set is left as it was). */
static int set2_add(Set2 *s, uint64_t a, uint64_t b) {
    if ((s->n + 1) * 2 > s->cap) {
        Set2 t;
        if (!set2_init(&t, s->cap * 2)) {
            set2_free(&t);
            return -1;
        }
        for (size_t i = 0; i < s->cap; i++)
            if (s->used[i]) set2_add(&t, s->a[i], s->b[i]); /* cannot grow: t is twice as large */
        set2_free(s);
        *s = t;
    }
    size_t h = (size_t)(mix64(a * 31 + mix64(b))) & (s->cap - 1);
    while (s->used[h]) {
        if (s->a[h] == a && s->b[h] == b) return 0;
        h = (h + 1) & (s->cap - 1);
    }
    s->used[h] = 1;
    s->a[h] = a;
    s->b[h] = b;
    s->n++;
    return 1;
}

typedef struct {
    const Search *s;
    int best;
    Set2 seen, found;
    int oom;
} CoverDfs;

static void cover_dfs(CoverDfs *d, int8_t *r, int8_t *taken, int used) {
    const Search *s = d->s;
    if (d->oom) return;
    int top = top_of(r, s->n);
    if (top < 0) {
        if (used == d->best && set2_add(&d->found, pack(taken, s->n), 0) < 0) d->oom = 1;
        return;
    }
    int added = set2_add(&d->seen, pack(r, s->n), pack(taken, s->n));
    if (added <= 0) {
        if (added < 0) d->oom = 1;
        return;
    }
    r[top]--;
    if (used + best_cover(s, r) == d->best) cover_dfs(d, r, taken, used);
    r[top]++;
    for (int k = 0; k < s->nby_top[top]; k++) {
        const Pat *p = s->by_top[top][k];
        if (!fits(r, p)) continue;
        for (int i = 0; i < p->len; i++) r[p->idx[i]] -= p->cnt[i];
        if (used + p->size + best_cover(s, r) == d->best) {
            for (int i = 0; i < p->len; i++) taken[p->idx[i]] += p->cnt[i];
            cover_dfs(d, r, taken, used + p->size);
            for (int i = 0; i < p->len; i++) taken[p->idx[i]] -= p->cnt[i];
        }
        for (int i = 0; i < p->len; i++) r[p->idx[i]] += p->cnt[i];
    }
}

/* Best k of the same-value cards avail (sorted): most mulle points, then the earliest list. */
static int pick(const uint8_t *avail, int na, int k, const uint8_t *fixed, int nf, const int *mv, uint8_t *out) {
    int idx[MAXP], best_pts = -1;
    uint8_t cur[MAXP];
    if (k > na) k = na;
    for (int i = 0; i < k; i++) idx[i] = i;
    for (;;) {
        int pts = 0;
        for (int i = 0; i < k; i++) cur[i] = avail[idx[i]];
        for (int i = 0; i < k; i++) {
            int f = cur[i], dup = 0;
            for (int j = 0; j < i; j++)
                if (cur[j] == f) dup = 1;
            if (dup) continue; /* set(chosen) */
            int cf = 0;
            for (int j = 0; j < nf; j++)
                if (fixed[j] == f) cf++;
            int cs = cf;
            for (int j = 0; j < k; j++)
                if (cur[j] == f) cs++;
            if (cs == 2 && cf < 2) pts += mv[f];
        }
        int better = pts > best_pts;
        if (!better && pts == best_pts) better = memcmp(cur, out, k) < 0;
        if (better) {
            best_pts = pts;
            memcpy(out, cur, k);
        }
        int i = k - 1;
        while (i >= 0 && idx[i] == na - k + i) i--;
        if (i < 0) break;
        idx[i]++;
        for (int j = i + 1; j < k; j++) idx[j] = idx[j - 1] + 1;
    }
    return best_pts < 0 ? 0 : best_pts;
}

/* The cards of the largest disjoint grouping of loose cards summing to v (RULES.md 4.1.3),
 * `fixed` the other cards the capture takes (for mulle pairs). Writes them sorted to out,
 * returns how many, or -1 on memory failure (a Python MemoryError is set). */
int forced_groups(const Pile *loose, int v, const Pile *fixed, const int *mv, uint8_t *out) {
    if (v < 2 || v > MAXT) return 0;
    int n = v - 1;
    int8_t cnt[MAXT] = {0};
    uint8_t avail[MAXT][MAXP];
    int navail[MAXT] = {0};
    uint8_t fx[MAXT][MAXP];
    int nfx[MAXT] = {0};
    uint32_t have = 0; /* the values lying loose: a pattern needing another is out at one test */
    for (int i = 0; i < loose->n; i++) {
        int f = loose->c[i], t = T.tv[f];
        if (t < v) {
            cnt[t - 1]++;
            have |= 1u << (t - 1);
            avail[t - 1][navail[t - 1]++] = (uint8_t)f;
        }
    }
    for (int i = 0; i < fixed->n; i++) {
        int f = fixed->c[i], t = T.tv[f];
        if (t < v) fx[t - 1][nfx[t - 1]++] = (uint8_t)f;
    }
    for (int i = 0; i < n; i++) {
        if (cnt[i] > 15) { /* never in a real game (8 cards per value); keeps the 4-bit packing sound */
            rules_fail(PyExc_ValueError, "more than 15 loose cards of one value");
            return -1;
        }
    }
    RulesThread *rt = rules_thread(); /* one search at a time per thread: nothing here calls back into Python */
    Search *s = &rt->search;
    s->memo = &rt->memo;
    s->v = v;
    s->n = n;
    int any = 0;
    for (int i = 0; i < n; i++) s->nby_top[i] = 0;
    for (int k = 0; k < NPATS[v]; k++) {
        const Pat *p = &PATS[v][k];
        if (p->need & ~have) continue;
        if (!p->multi || fits(cnt, p)) {
            s->by_top[p->top][s->nby_top[p->top]++] = p;
            any = 1;
        }
    }
    if (!any) return 0;
    int8_t r[MAXT], taken[MAXT] = {0};
    memcpy(r, cnt, sizeof r);
    int best = best_cover(s, r);
    if (best == 0) return 0;
    CoverDfs d = {0};
    d.s = s;
    d.best = best;
    uint64_t seen_a[64], seen_b[64], found_a[16], found_b[16];
    uint8_t seen_u[64], found_u[16];
    set2_init_in(&d.seen, seen_a, seen_b, seen_u, 64);
    set2_init_in(&d.found, found_a, found_b, found_u, 16);
    cover_dfs(&d, r, taken, 0);
    if (d.oom) {
        set2_free(&d.seen);
        set2_free(&d.found);
        rules_fail(PyExc_MemoryError, "out of memory in the capture search");
        return -1;
    }
    int best_pts = -1, nbest = 0;
    uint8_t cards[MAXP], chosen[MAXP];
    for (size_t h = 0; h < d.found.cap; h++) {
        if (!d.found.used[h]) continue;
        uint64_t key = d.found.a[h];
        int pts = 0, nc = 0;
        for (int i = 0; i < n; i++) {
            int k = (int)((key >> (4 * i)) & 15);
            if (!k) continue;
            pts += pick(avail[i], navail[i], k, fx[i], nfx[i], mv, chosen);
            for (int j = 0; j < k && j < navail[i]; j++) cards[nc++] = chosen[j];
        }
        qsort(cards, nc, 1, cmp_u8);
        int better = pts > best_pts;
        if (!better && pts == best_pts) better = memcmp(cards, out, nc) < 0;
        if (better) {
            best_pts = pts;
            nbest = nc;
            memcpy(out, cards, nc);
        }
    }
    set2_free(&d.seen);
    set2_free(&d.found);
    return nbest;
}

/* Cards of the largest set of disjoint loose pairs summing to value (capture.py gather_pairs). */
static int gather_pairs(const Pile *loose, int value, uint8_t *out) {
    uint8_t by[MAXT + 1][MAXP];
    int nb[MAXT + 1] = {0};
    int n = 0;
    for (int i = 0; i < loose->n; i++) {
        int f = loose->c[i];
        by[T.tv[f]][nb[T.tv[f]]++] = (uint8_t)f;
    }
    int lo = value - MAXT > 1 ? value - MAXT : 1;
    for (int x = lo; x < (value + 1) / 2; x++) {
        int y = value - x;
        int k = nb[x] < nb[y] ? nb[x] : nb[y];
        for (int j = 0; j < k; j++) out[n++] = by[x][j];
        for (int j = 0; j < k; j++) out[n++] = by[y][j];
    }
    if (value % 2 == 0 && value / 2 <= MAXT) {
        int h = value / 2;
        int k = nb[h] / 2 * 2;
        for (int j = 0; j < k; j++) out[n++] = by[h][j];
    }
    qsort(out, n, 1, cmp_u8);
    return n;
}

/* ------------------------------------------------------------------ legal moves (rules.py legal_ids) */

static inline int pair_exists(const int *lc, int value) {
    int lo = value - MAXT > 1 ? value - MAXT : 1;
    for (int x = lo; x < (value + 1) / 2; x++)
        if (lc[x] && lc[value - x]) return 1;
    if (value % 2 == 0 && value / 2 <= MAXT) return lc[value / 2] >= 2;
    return 0;
}

static inline int has_build(const G *g, int v) { return v >= T.min_build && v <= T.max_build && g->bc[v].n > 0; }

/* Legal ids in canonical (ascending) order; returns the count (at most T.num_ids: each id once). */
int legal_ids(const G *g, int *out) {
    int p = g->to_move;
    const Pile *hand = &g->hand[p];
    if (g->over || hand->n == 0) return 0;
    int opp = 1 - p;
    int lc[MAXT + 1] = {0};
    uint32_t reach = 1, reach_mask = (1u << (MAXT + 1)) - 1, tvals = 0;
    uint64_t faces_of[MAXT + 1] = {0}; /* the loose faces of each table value, one bit a face */
    for (int i = 0; i < g->loose.n; i++) {
        int f = g->loose.c[i], t = T.tv[f];
        lc[t]++;
        reach = (reach | (reach << t)) & reach_mask;
        faces_of[t] |= 1ULL << f;
        tvals |= 1u << t;
    }
    uint32_t hold = 0, hold2 = 0;
    for (int i = 0; i < hand->n; i++) {
        uint32_t bit = 1u << T.hv[hand->c[i]];
        if (hold & bit) hold2 |= bit;
        hold |= bit;
    }
    uint32_t opp_locked = 0, critical = 0, builds = 0;
    int owns = 0, ot_v[MAXV + 1], ot_opp[MAXV + 1], not_ = 0;
    for (int v = T.min_build; v <= T.max_build; v++) {
        if (!g->bc[v].n) continue;
        builds |= 1u << v;
        int owner = g->bowner[v];
        if (owner == p) {
            owns = 1;
            if (!((hold2 >> v) & 1)) critical |= 1u << v;
        } else if (g->blocked[v]) {
            if (owner == opp) opp_locked |= 1u << v;
        } else {
            ot_v[not_] = v;
            ot_opp[not_] = owner == opp;
            not_++;
        }
    }
    uint32_t free_ = ~opp_locked;
    int caps = 0, nb = 0, ntr = 0, nd = 0;
    int blds[MAX_IDS], trots[NF], discs[NF];
    int prev = -1;
    for (int i = 0; i < hand->n; i++) {
        int c = hand->c[i];
        if (c == prev) continue;
        prev = c;
        int hv = T.hv[c];
        int can;
        if (hv <= MAXT)
            can = lc[hv] || ((builds >> hv) & 1) || ((reach >> hv) & 1);
        else
            can = (builds >> hv) & 1;
        if (can) out[caps++] = T.capture_id[c];
        if ((critical >> hv) & 1) continue; /* the last card reserved for an own build may only capture it */
        uint32_t bit = 1u << hv;
        uint32_t after = ((hold & ~bit) | (hold2 & bit)) & free_;
        int tv = T.tv[c];
        /* `after` has bits only for hand values 2..16, so a set bit means the move has an id; the
         * id is still checked, because a position made by hand must never index outside a table. */
        /* Loose builds: the table values t with bit t + tv in `after`, then their faces in ascending
         * order (a face's ids ascend with it), one bit test a value instead of a branch a table card. */
        uint64_t faces = 0;
        for (uint32_t ok = (after >> tv) & tvals; ok; ok &= ok - 1) faces |= faces_of[__builtin_ctz(ok)];
        for (; faces; faces &= faces - 1) {
            int id = T.loose_id[c][__builtin_ctzll(faces)];
            if (id >= 0) blds[nb++] = id;
        }
        for (int k = 0; k < not_; k++) {
            int v0 = ot_v[k];
            if ((after >> (v0 + tv)) & 1) {
                int up = T.up_id[c][v0];
                if (up >= 0) blds[nb++] = up;
            }
            if (ot_opp[k] && v0 - tv >= T.min_build && ((after >> (v0 - tv)) & 1)) {
                int down = T.down_id[c][v0];
                if (down >= 0) blds[nb++] = down;
            }
        }
        if ((after >> hv) & 1) {
            if (((builds >> hv) & 1) || (hv <= MAXT && lc[hv]) || pair_exists(lc, hv)) trots[ntr++] = T.trotta_id[c];
        }
        if (!owns && !(can && g->discard_only)) discs[nd++] = T.discard_id[c];
    }
    if (not_ > 1) { /* up/down targets of one card can interleave across builds: keep ids ascending */
        for (int i = 1; i < nb; i++) {
            int x = blds[i], j = i - 1;
            while (j >= 0 && blds[j] > x) {
                blds[j + 1] = blds[j];
                j--;
            }
            blds[j + 1] = x;
        }
    }
    int n = caps;
    memcpy(out + n, blds, nb * sizeof(int));
    n += nb;
    memcpy(out + n, trots, ntr * sizeof(int));
    n += ntr;
    memcpy(out + n, discs, nd * sizeof(int));
    n += nd;
    return n;
}

/* ------------------------------------------------------------------ applying moves (rules.py apply) */

int leader(int set_no, int deal_no) {
    long k = ((long)set_no - 1) * T.deals_per_set + deal_no - 1;
    return (int)(((k % 2) + 2) % 2); /* 0 or 1 whatever the counters hold */
}

int32_t bonus_of(int32_t intake) { return intake > T.bonus_from ? 2 * (intake - T.bonus_from) : 0; }

int64_t sheet_total(const SetScore *s) { return (int64_t)s->mulle + s->tabbe + bonus_of(s->intake); }

void deal_set(G *g) {
    uint8_t deck[2 * NF];
    for (int f = 0; f < NF; f++) deck[2 * f] = deck[2 * f + 1] = (uint8_t)f;
    shuffle(deck, 2 * NF, derive_seed1(g->seed64, (uint64_t)g->set_no));
    int h = T.hand_size;
    for (int p = 0; p < 2; p++) {
        memcpy(g->hand[p].c, deck + p * h, h);
        g->hand[p].n = (uint8_t)h;
        pile_sort(&g->hand[p]);
    }
    memcpy(g->loose.c, deck + 2 * h, T.table_deal);
    g->loose.n = (uint8_t)T.table_deal;
    pile_sort(&g->loose);
    int rest = 2 * NF - 2 * h - T.table_deal;
    memcpy(g->deck.c, deck + 2 * h + T.table_deal, rest);
    g->deck.n = (uint8_t)rest;
    for (int v = 0; v <= MAXV; v++) g->bc[v].n = 0;
    for (int p = 0; p < 2; p++) {
        g->mulle[p].n = g->intake[p].n = 0;
        g->tabbe[p] = g->mpts[p] = g->ipts[p] = 0;
    }
    g->last_capturer = -1;
    g->deal_no = 1;
    g->to_move = leader(g->set_no, g->deal_no);
}

/* state.py _recount: mulle and intake points from the captured piles. */
void recount(G *g) {
    const int *mv = T.mv[g->mulle_hand ? 1 : 0];
    for (int p = 0; p < 2; p++) {
        int32_t m = 0, ip = 0;
        for (int i = 0; i < g->mulle[p].n; i++) {
            m += mv[g->mulle[p].c[i]];
            ip += T.ipts[g->mulle[p].c[i]];
        }
        for (int i = 0; i < g->intake[p].n; i++) ip += T.ipts[g->intake[p].c[i]];
        g->mpts[p] = m;
        g->ipts[p] = ip;
    }
}

/* Take value `value` off the table for a build or trotta (RULES.md 3); appends to out. */
static int gather(G *g, int value, uint8_t *out) {
    int n = 0;
    if (value >= 0 && value <= MAXV && g->bc[value].n) {
        memcpy(out, g->bc[value].c, g->bc[value].n);
        n = g->bc[value].n;
        g->bc[value].n = 0;
    }
    if (g->loose.n) {
        uint8_t pairs[MAXP];
        int np = gather_pairs(&g->loose, value, pairs);
        if (value <= MAXT) {
            for (int i = 0; i < g->loose.n;) {
                if (T.tv[g->loose.c[i]] == value) {
                    out[n++] = g->loose.c[i];
                    pile_remove_at(&g->loose, i);
                } else
                    i++;
            }
        }
        for (int i = 0; i < np; i++) {
            pile_remove(&g->loose, pairs[i]);
            out[n++] = pairs[i];
        }
    }
    return n;
}

static void set_build(G *g, int v, const uint8_t *cards, int n, int owner, int locked) {
    memcpy(g->bc[v].c, cards, n);
    g->bc[v].n = (uint8_t)n;
    pile_sort(&g->bc[v]);
    g->bowner[v] = (int8_t)owner;
    g->blocked[v] = (uint8_t)locked;
    g->bstamp[v] = ++g->stamp;
}

static int any_build(const G *g) {
    for (int v = 0; v <= MAXV; v++)
        if (g->bc[v].n) return 1;
    return 0;
}

/* A capture; `taking` (n_taking >= 0) lists the loose cards it takes under forced_capture=False. */
static int do_capture(G *g, int p, int c, const uint8_t *taking, int n_taking) {
    int hv = T.hv[c];
    const int *mv = T.mv[g->mulle_hand ? 1 : 0];
    Pile taken;
    taken.n = 0;
    int own = has_build(g, hv) && g->bowner[hv] == p;
    if (hv <= T.max_mulle_hv && pile_index(&g->loose, c) >= 0 && !own) {
        pile_remove(&g->loose, c);
        taken.c[taken.n++] = (uint8_t)c;
    } else if (hv > MAXT) {
        memcpy(taken.c, g->bc[hv].c, g->bc[hv].n);
        taken.n = g->bc[hv].n;
        g->bc[hv].n = 0;
    } else {
        /* The build's cards first (they count for the mulle tie-break), but the search runs
         * before anything moves: a MemoryError in it must leave the position as it was. */
        memcpy(taken.c, g->bc[hv].c, g->bc[hv].n);
        taken.n = g->bc[hv].n;
        uint8_t chosen[MAXP];
        int nc = 0;
        if (n_taking >= 0) {
            memcpy(chosen, taking, n_taking);
            nc = n_taking;
        } else {
            for (int i = 0; i < g->loose.n; i++)
                if (T.tv[g->loose.c[i]] == hv) chosen[nc++] = g->loose.c[i];
            int ng = forced_groups(&g->loose, hv, &taken, mv, chosen + nc);
            if (ng < 0) return -1;
            nc += ng;
        }
        g->bc[hv].n = 0;
        for (int i = 0; i < nc; i++) pile_remove(&g->loose, chosen[i]);
        memcpy(taken.c + taken.n, chosen, nc);
        taken.n += nc;
    }
    pile_sort(&taken);
    g->taken = taken;
    Pile cap = taken;
    pile_insert(&cap, c);
    int prev = -1;
    int32_t pts = 0, ip = 0;
    for (int i = 0; i < cap.n; i++) {
        int f = cap.c[i];
        ip += T.ipts[f];
        if (f == prev) { /* both copies of one face: a mulle (RULES.md 4.1.5) */
            pile_insert(&g->mulle[p], f);
            pts += mv[f];
            prev = -1;
        } else {
            pile_insert(&g->intake[p], f);
            prev = f;
        }
    }
    g->mpts[p] += pts;
    g->ipts[p] += ip;
    if (!g->loose.n && !any_build(g)) g->tabbe[p]++;
    g->last_capturer = p;
    return 0;
}

/* Leftovers to the last capturer, then the set's sheet (rules.py end_set). */
static void end_set(G *g) {
    int lc = g->last_capturer;
    if (lc >= 0) {
        for (int i = 0; i < g->loose.n; i++) {
            pile_insert(&g->intake[lc], g->loose.c[i]);
            g->ipts[lc] += T.ipts[g->loose.c[i]];
        }
        for (int v = 0; v <= MAXV; v++)
            for (int i = 0; i < g->bc[v].n; i++) {
                pile_insert(&g->intake[lc], g->bc[v].c[i]);
                g->ipts[lc] += T.ipts[g->bc[v].c[i]];
            }
    }
    g->loose.n = 0;
    for (int v = 0; v <= MAXV; v++) g->bc[v].n = 0;
    if (g->nsheets < MAX_SETS) { /* loading keeps nsheets below sets <= MAX_SETS */
        for (int p = 0; p < 2; p++) {
            SetScore *s = &g->sheets[g->nsheets][p];
            s->mulle = g->mpts[p], s->tabbe = g->tabbe[p], s->intake = g->ipts[p];
        }
        g->nsheets++;
    }
    if (g->nsheets >= g->sets) {
        g->over = 1;
        return;
    }
    g->set_no++;
    deal_set(g);
}

/* Both hands empty: deal on, or end the set (rules.py end_deal). */
static void end_deal(G *g) {
    int h = T.hand_size;
    if (g->deck.n) {
        for (int p = 0; p < 2; p++) {
            int k = g->deck.n - p * h;
            if (k > h) k = h;
            if (k < 0) k = 0;
            memcpy(g->hand[p].c, g->deck.c + p * h, k);
            g->hand[p].n = (uint8_t)k;
            pile_sort(&g->hand[p]);
        }
        int used = g->deck.n < 2 * h ? g->deck.n : 2 * h;
        memmove(g->deck.c, g->deck.c + used, g->deck.n - used);
        g->deck.n -= used;
        g->deal_no++;
        g->to_move = leader(g->set_no, g->deal_no);
        return;
    }
    end_set(g);
}

/* Apply move `id` for the player to move (trusted legal; `taking`, n_taking >= 0, names a
 * capture's loose cards under forced_capture=False). 0, or -1 with a Python error set. */
int apply_move(G *g, int id, const uint8_t *taking, int n_taking) {
    if (g->over || id < 0 || id >= T.num_ids) {
        if (current_thread)
            rules_fail(PyExc_ValueError, g->over ? "the game is over" : "move id out of range");
        else
            PyErr_Format(PyExc_ValueError, g->over ? "the game is over" : "move id %d out of range", id);
        return -1;
    }
    int p = g->to_move;
    int c = T.m_card[id], kind = T.m_kind[id];
    /* Whatever the move names must exist, so that even an illegal move only moves cards between piles. */
    if (pile_index(&g->hand[p], c) < 0) {
        rules_fail(PyExc_ValueError, "the card played is not in the hand");
        return -1;
    }
    if (kind == K_BUILD && ((T.m_on[id] >= 0 && pile_index(&g->loose, T.m_on[id]) < 0) ||
                            (T.m_on[id] < 0 && !g->bc[T.m_onb[id]].n))) {
        rules_fail(PyExc_ValueError, "the build's target is not on the table");
        return -1;
    }
    if (taking) {
        if (kind != K_CAPTURE || n_taking < 0 || n_taking > g->loose.n) {
            rules_fail(PyExc_ValueError, "only a capture names the cards it takes");
            return -1;
        }
        Pile rest = g->loose;
        for (int i = 0; i < n_taking; i++)
            if (!pile_remove(&rest, taking[i])) {
                rules_fail(PyExc_ValueError, "the capture takes a card that is not loose on the table");
                return -1;
            }
    } else {
        n_taking = -1;
    }
    pile_remove(&g->hand[p], c);
    if (kind == K_CAPTURE) {
        if (do_capture(g, p, c, taking, n_taking) < 0) {
            pile_insert(&g->hand[p], c); /* the search ran out of memory before anything moved */
            return -1;
        }
    } else {
        g->taken.n = 0;
        uint8_t cards[MAXP];
        if (kind == K_BUILD) {
            int n = 0, to = T.m_to[id];
            if (T.m_on[id] >= 0) {
                pile_remove(&g->loose, T.m_on[id]);
                cards[n++] = (uint8_t)T.m_on[id];
            } else {
                int ob = T.m_onb[id];
                memcpy(cards, g->bc[ob].c, g->bc[ob].n);
                n = g->bc[ob].n;
                g->bc[ob].n = 0;
            }
            cards[n++] = (uint8_t)c;
            int ng = gather(g, to, cards + n);
            n += ng;
            set_build(g, to, cards, n, p, ng > 0 || g->lock_every);
        } else if (kind == K_TROTTA) {
            int n = gather(g, T.hv[c], cards);
            cards[n++] = (uint8_t)c;
            set_build(g, T.hv[c], cards, n, p, 1);
        } else {
            pile_insert(&g->loose, c);
        }
    }
    /* The other player moves next; one without cards passes (only a position written by hand has that:
     * rules.py's apply, docs/engine.md). */
    g->to_move = (g->hand[1 - p].n || !g->hand[p].n) ? 1 - p : p;
    g->last_player = p;
    g->last_id = taking ? -1 : id;
    if (!g->hand[0].n && !g->hand[1].n) end_deal(g);
    return 0;
}

/* ------------------------------------------------------------------ set-up */

int rules_init(void) {
    mt_prepare();
    for (int v = 2; v <= MAXT; v++) {
        int parts[MAXT + 1];
        NPATS[v] = 0;
        if (gen_parts(v, v, v - 1, parts, 0) < 0) {
            PyErr_SetString(PyExc_RuntimeError, "capture patterns overflow MAX_PATS");
            return -1;
        }
    }
    Memo *m = &main_thread.memo;
    if (!m->key) {
        m->key = PyMem_RawCalloc(MEMO_SIZE, sizeof(uint64_t));
        m->val = PyMem_RawCalloc(MEMO_SIZE, 1);
        if (!m->key || !m->val) {
            PyMem_RawFree(m->key);
            PyMem_RawFree(m->val);
            m->key = NULL;
            m->val = NULL;
            PyErr_NoMemory();
            return -1;
        }
        /* Touch the memo now: first-touch page faults scattered over a capture search cost more
         * than the search itself (about 20 ms on a loaded machine). */
        memset(m->key, 0, sizeof(uint64_t) * MEMO_SIZE);
        memset(m->val, 0, MEMO_SIZE);
    }
    capture_memo_clear();
    return 0;
}
