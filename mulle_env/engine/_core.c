/* The compiled rules core of the Mulle engine (RULES.md), on the plain CPython C API.
 *
 * mulle_env/engine/ (rules.py, capture.py, rng.py, state.py) is the readable reference;
 * this file is a port of it that must agree with it on every legal list, every position
 * and every score (tests/test_engines_agree.py). The Python class in cstate.py adds the
 * public API around the `Core` type defined here; all validation of outside input is done
 * there, before anything reaches this file. The setters below still refuse anything that
 * could overrun a buffer, so a bad call is a ValueError, never a crash.
 *
 * Piles are sorted arrays of faces (0..51, suit * 13 + rank) with a count, like the
 * Python engine's sorted lists; the deck keeps its order (next card first).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define NF 52
#define MAXP 128           /* cards a pile (and a whole state) may hold: 104 in any real game */
#define MINB 2
#define MAXB 16
#define HAND_SIZE 8
#define TABLE_DEAL 8
#define DEALS_PER_SET 6
#define OBS_SIZE 524

static int TV[NF], HV[NF], IPTS[NF], MV0[NF], MV1[NF];
static int CAPTURE_ID[NF], TROTTA_ID[NF], DISCARD_ID[NF];
static int LOOSE_ID[NF][NF], UP_ID[NF][MAXB + 1], DOWN_ID[NF][MAXB + 1];
#define MAX_IDS 4096
static int NUM_IDS;
enum { K_CAPTURE, K_BUILD, K_TROTTA, K_DISCARD };
static int8_t M_KIND[MAX_IDS], M_CARD[MAX_IDS], M_ON[MAX_IDS], M_ONB[MAX_IDS], M_TO[MAX_IDS];

/* Python objects the core hands out: interned Moves and Cards, small ints, sheet keys. */
static PyObject *MOVES = NULL, *CARDS = NULL, *INVALID_POSITION = NULL, *BUILD_CLS = NULL;
static PyObject *K_MULLE, *K_TABBE, *K_INTAKE, *K_BONUS, *K_TOTAL;
static PyObject *S_ID, *S_CARD, *S_TAKING;
static PyObject *ID_OBJS[MAX_IDS]; /* the int object of every move id, made once */

typedef struct {
    uint8_t n;
    uint8_t c[MAXP];
} Pile;

typedef struct {
    Pile hand[2], loose, deck, mulle[2], intake[2], taken;
    Pile bc[MAXB + 1];        /* build cards by value; bc[v].n == 0: no build of value v */
    int8_t bowner[MAXB + 1];  /* -1: nobody */
    uint8_t blocked[MAXB + 1];
    uint32_t bstamp[MAXB + 1]; /* insertion order, so `builds` iterates as the Python dict does */
    uint32_t stamp;
    long long tabbe[2], mpts[2], ipts[2];
    int to_move, set_no, deal_no, last_capturer, over;
    int last_player, last_id; /* last_id -1: the move object is in last_move_obj */
    /* rules */
    int sets, forced, lock_every, discard_only, mulle_hand;
    uint64_t seed64;
} G;

typedef struct {
    PyObject_HEAD
    G g;
    PyObject *seed, *ruleset, *sheets, *legal, *public_, *last_move_obj;
} Core;

/* ------------------------------------------------------------------ piles */

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

static int cmp_u8(const void *a, const void *b) { return (int)*(const uint8_t *)a - (int)*(const uint8_t *)b; }

static inline void pile_sort(Pile *p) {
    /* insertion sort: piles are short */
    for (int i = 1; i < p->n; i++) {
        uint8_t x = p->c[i];
        int j = i - 1;
        while (j >= 0 && p->c[j] > x) {
            p->c[j + 1] = p->c[j];
            j--;
        }
        p->c[j + 1] = x;
    }
}

/* ------------------------------------------------------------------ rng (rng.py) */

static inline uint64_t splitmix(uint64_t *x) {
    uint64_t z;
    *x += 0x9E3779B97F4A7C15ULL;
    z = *x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t derive_seed(uint64_t seed, const uint64_t *stream, int n) {
    uint64_t x = seed;
    for (int i = -1; i < n; i++) {
        uint64_t s = i < 0 ? (uint64_t)n : stream[i];
        x ^= s * 0xD1B54A32D192ED03ULL;
        x = splitmix(&x);
    }
    return x;
}

static void shuffle(uint8_t *a, int n, uint64_t seed) {
    uint64_t x = seed;
    for (int i = n - 1; i > 0; i--) {
        uint64_t r = splitmix(&x);
        int j = (int)(r % (uint64_t)(i + 1));
        uint8_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* ------------------------------------------------------------------ capture search (capture.py) */

#define MAXV 13
typedef struct {
    int8_t idx[MAXV];
    int8_t cnt[MAXV];
    int8_t len; /* entries */
    int8_t size; /* cards */
    int8_t top;
} Pat;

static Pat PATS[MAXV + 1][128];
static int NPATS[MAXV + 1];

static void gen_parts(int v, int total, int largest, int *parts, int np) {
    if (total == 0) {
        int counts[MAXV] = {0};
        for (int i = 0; i < np; i++) counts[parts[i] - 1]++;
        Pat *p = &PATS[v][NPATS[v]++];
        p->len = 0;
        p->size = (int8_t)np;
        for (int i = 0; i < MAXV; i++)
            if (counts[i]) {
                p->idx[p->len] = (int8_t)i;
                p->cnt[p->len] = (int8_t)counts[i];
                p->len++;
            }
        p->top = p->idx[p->len - 1];
        return;
    }
    for (int part = total < largest ? total : largest; part > 0; part--) {
        parts[np] = part;
        gen_parts(v, total - part, part, parts, np + 1);
    }
}

/* A counts vector r[0..v-2] (cards of table value i + 1) packed 4 bits per entry. */
static inline uint64_t pack(const int8_t *r, int n) {
    uint64_t k = 0;
    for (int i = 0; i < n; i++) k |= (uint64_t)r[i] << (4 * i);
    return k;
}

/* The memo of `_best`, shared by all games: (v, counts) -> most cards coverable. */
#define MEMO_BITS 18
#define MEMO_SIZE (1u << MEMO_BITS)
#define MEMO_LIMIT (MEMO_SIZE / 2)
static uint64_t *memo_key = NULL;
static int8_t *memo_val = NULL;
static unsigned memo_used = 0;

static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int memo_get(uint64_t key) {
    unsigned h = (unsigned)mix64(key) & (MEMO_SIZE - 1);
    while (memo_key[h]) {
        if (memo_key[h] == key) return memo_val[h];
        h = (h + 1) & (MEMO_SIZE - 1);
    }
    return -1;
}

static void memo_put(uint64_t key, int val) {
    if (memo_used >= MEMO_LIMIT) {
        memset(memo_key, 0, sizeof(uint64_t) * MEMO_SIZE);
        memo_used = 0;
    }
    unsigned h = (unsigned)mix64(key) & (MEMO_SIZE - 1);
    while (memo_key[h]) {
        if (memo_key[h] == key) {
            memo_val[h] = (int8_t)val;
            return;
        }
        h = (h + 1) & (MEMO_SIZE - 1);
    }
    memo_key[h] = key;
    memo_val[h] = (int8_t)val;
    memo_used++;
}

typedef struct {
    int v, n;           /* value, entries (v - 1) */
    const Pat *by_top[MAXV][128];
    int nby_top[MAXV];
} Search;

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
    int got = memo_get(key);
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
    memo_put(key, best);
    return best;
}

/* A growable open-addressing set of 128-bit keys (the DFS's `seen` and the optimal covers). */
typedef struct {
    uint64_t *a, *b;
    uint8_t *used;
    size_t cap, n;
} Set2;

static int set2_init(Set2 *s, size_t cap) {
    s->cap = cap;
    s->n = 0;
    s->a = calloc(cap, sizeof(uint64_t));
    s->b = calloc(cap, sizeof(uint64_t));
    s->used = calloc(cap, 1);
    return s->a && s->b && s->used;
}

static void set2_free(Set2 *s) {
    free(s->a);
    free(s->b);
    free(s->used);
    s->a = s->b = NULL;
    s->used = NULL;
}

/* Returns 1 if added, 0 if present, -1 on memory failure. */
static int set2_add(Set2 *s, uint64_t a, uint64_t b) {
    if ((s->n + 1) * 2 > s->cap) {
        Set2 t;
        if (!set2_init(&t, s->cap * 2)) {
            set2_free(&t);
            return -1;
        }
        for (size_t i = 0; i < s->cap; i++)
            if (s->used[i]) set2_add(&t, s->a[i], s->b[i]);
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
    int idx[16], best_pts = -1;
    uint8_t cur[16];
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
            int cs = 0, cf = 0;
            for (int j = 0; j < nf; j++)
                if (fixed[j] == f) cf++;
            cs = cf;
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
static int forced_groups(const Pile *loose, int v, const Pile *fixed, const int *mv, uint8_t *out) {
    int n = v - 1;
    int8_t cnt[MAXV] = {0};
    uint8_t avail[MAXV][MAXP];
    int navail[MAXV] = {0};
    uint8_t fx[MAXV][MAXP];
    int nfx[MAXV] = {0};
    for (int i = 0; i < loose->n; i++) {
        int f = loose->c[i], t = TV[f];
        if (t < v) {
            cnt[t - 1]++;
            avail[t - 1][navail[t - 1]++] = (uint8_t)f;
        }
    }
    for (int i = 0; i < fixed->n; i++) {
        int f = fixed->c[i], t = TV[f];
        if (t < v) fx[t - 1][nfx[t - 1]++] = (uint8_t)f;
    }
    for (int i = 0; i < n; i++) {
        if (cnt[i] > 15) { /* never in a real game (8 cards per value); keeps the 4-bit packing sound */
            PyErr_SetString(PyExc_ValueError, "more than 15 loose cards of one value");
            return -1;
        }
    }
    static Search search; /* one at a time: the GIL is held and nothing here calls back into Python */
    Search *s = &search;
    s->v = v;
    s->n = n;
    int any = 0;
    for (int i = 0; i < n; i++) s->nby_top[i] = 0;
    for (int k = 0; k < NPATS[v]; k++) {
        const Pat *p = &PATS[v][k];
        if (fits(cnt, p)) {
            s->by_top[p->top][s->nby_top[p->top]++] = p;
            any = 1;
        }
    }
    if (!any) {
        return 0;
    }
    int8_t r[MAXV], taken[MAXV] = {0};
    memcpy(r, cnt, sizeof r);
    int best = best_cover(s, r);
    if (best == 0) return 0;
    /* Zeroed so that set2_free on a set whose set2_init never ran (the first one failed) frees NULLs. */
    CoverDfs d = {0};
    d.s = s;
    d.best = best;
    d.oom = 0;
    if (!set2_init(&d.seen, 64) || !set2_init(&d.found, 16)) {
        set2_free(&d.seen);
        set2_free(&d.found);
        PyErr_NoMemory();
        return -1;
    }
    cover_dfs(&d, r, taken, 0);
    if (d.oom) {
        set2_free(&d.seen);
        set2_free(&d.found);
        PyErr_NoMemory();
        return -1;
    }
    int best_pts = -1, nbest = 0;
    uint8_t cards[MAXP], chosen[16];
    for (size_t h = 0; h < d.found.cap; h++) {
        if (!d.found.used[h]) continue;
        uint64_t key = d.found.a[h];
        int pts = 0, nc = 0;
        for (int i = 0; i < n; i++) {
            int k = (int)((key >> (4 * i)) & 15);
            if (!k) continue;
            pts += pick(avail[i], navail[i], k, fx[i], nfx[i], mv, chosen);
            for (int j = 0; j < k; j++) cards[nc++] = chosen[j];
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
    uint8_t by[14][MAXP];
    int nb[14] = {0};
    int n = 0;
    for (int i = 0; i < loose->n; i++) {
        int f = loose->c[i];
        by[TV[f]][nb[TV[f]]++] = (uint8_t)f;
    }
    int lo = value - 13 > 1 ? value - 13 : 1;
    for (int x = lo; x < (value + 1) / 2; x++) {
        int y = value - x;
        int k = nb[x] < nb[y] ? nb[x] : nb[y];
        for (int j = 0; j < k; j++) out[n++] = by[x][j];
        for (int j = 0; j < k; j++) out[n++] = by[y][j];
    }
    if (value % 2 == 0 && value / 2 <= 13) {
        int h = value / 2;
        int k = nb[h] / 2 * 2;
        for (int j = 0; j < k; j++) out[n++] = by[h][j];
    }
    qsort(out, n, 1, cmp_u8);
    return n;
}

/* ------------------------------------------------------------------ legal moves (rules.py legal_ids) */

static inline int pair_exists(const int *lc, int value) {
    int lo = value - 13 > 1 ? value - 13 : 1;
    for (int x = lo; x < (value + 1) / 2; x++)
        if (lc[x] && lc[value - x]) return 1;
    if (value % 2 == 0 && value / 2 <= 13) return lc[value / 2] >= 2;
    return 0;
}

static inline int has_build(const G *g, int v) { return v >= MINB && v <= MAXB && g->bc[v].n > 0; }

/* Legal ids in canonical (ascending) order; returns the count. */
static int legal_ids(const G *g, int *out) {
    int p = g->to_move;
    const Pile *hand = &g->hand[p];
    if (g->over || hand->n == 0) return 0;
    int opp = 1 - p;
    int lc[14] = {0};
    uint32_t reach = 1;
    int tf[MAXP], tt[MAXP], nt = 0, prev = -1;
    for (int i = 0; i < g->loose.n; i++) {
        int f = g->loose.c[i], t = TV[f];
        lc[t]++;
        reach = (reach | (reach << t)) & 0x3FFF;
        if (f != prev) {
            prev = f;
            tf[nt] = f;
            tt[nt] = t;
            nt++;
        }
    }
    uint32_t hold = 0, hold2 = 0;
    for (int i = 0; i < hand->n; i++) {
        uint32_t bit = 1u << HV[hand->c[i]];
        if (hold & bit) hold2 |= bit;
        hold |= bit;
    }
    uint32_t opp_locked = 0, critical = 0, builds = 0;
    int owns = 0, ot_v[MAXB + 1], ot_opp[MAXB + 1], not_ = 0;
    for (int v = MINB; v <= MAXB; v++) {
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
    prev = -1;
    for (int i = 0; i < hand->n; i++) {
        int c = hand->c[i];
        if (c == prev) continue;
        prev = c;
        int hv = HV[c];
        int can;
        if (hv <= 13)
            can = lc[hv] || ((builds >> hv) & 1) || ((reach >> hv) & 1);
        else
            can = (builds >> hv) & 1;
        if (can) out[caps++] = CAPTURE_ID[c];
        if ((critical >> hv) & 1) continue;
        uint32_t bit = 1u << hv;
        uint32_t after = ((hold & ~bit) | (hold2 & bit)) & free_;
        int tv = TV[c];
        for (int k = 0; k < nt; k++)
            if ((after >> (tt[k] + tv)) & 1) blds[nb++] = LOOSE_ID[c][tf[k]];
        for (int k = 0; k < not_; k++) {
            int v0 = ot_v[k];
            if ((after >> (v0 + tv)) & 1) blds[nb++] = UP_ID[c][v0];
            if (ot_opp[k] && v0 - tv >= MINB && ((after >> (v0 - tv)) & 1)) blds[nb++] = DOWN_ID[c][v0];
        }
        if ((after >> hv) & 1) {
            if (((builds >> hv) & 1) || (hv <= 13 && lc[hv]) || pair_exists(lc, hv)) trots[ntr++] = TROTTA_ID[c];
        }
        if (!owns && !(can && g->discard_only)) discs[nd++] = DISCARD_ID[c];
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

static inline int leader(int set_no, int deal_no) { return ((set_no - 1) * DEALS_PER_SET + deal_no - 1) % 2; }

static void deal_set(G *g) {
    uint8_t deck[2 * NF];
    for (int f = 0; f < NF; f++) deck[2 * f] = deck[2 * f + 1] = (uint8_t)f;
    uint64_t stream = (uint64_t)g->set_no;
    shuffle(deck, 2 * NF, derive_seed(g->seed64, &stream, 1));
    for (int p = 0; p < 2; p++) {
        memcpy(g->hand[p].c, deck + p * HAND_SIZE, HAND_SIZE);
        g->hand[p].n = HAND_SIZE;
        pile_sort(&g->hand[p]);
    }
    memcpy(g->loose.c, deck + 2 * HAND_SIZE, TABLE_DEAL);
    g->loose.n = TABLE_DEAL;
    pile_sort(&g->loose);
    int rest = 2 * NF - 2 * HAND_SIZE - TABLE_DEAL;
    memcpy(g->deck.c, deck + 2 * HAND_SIZE + TABLE_DEAL, rest);
    g->deck.n = (uint8_t)rest;
    for (int v = 0; v <= MAXB; v++) g->bc[v].n = 0;
    for (int p = 0; p < 2; p++) {
        g->mulle[p].n = g->intake[p].n = 0;
        g->tabbe[p] = g->mpts[p] = g->ipts[p] = 0;
    }
    g->last_capturer = -1;
    g->deal_no = 1;
    g->to_move = leader(g->set_no, g->deal_no);
}

/* Take value `value` off the table for a build or trotta (RULES.md 3); appends to out. */
static int gather(G *g, int value, uint8_t *out) {
    int n = 0;
    if (g->bc[value].n) {
        memcpy(out, g->bc[value].c, g->bc[value].n);
        n = g->bc[value].n;
        g->bc[value].n = 0;
    }
    if (g->loose.n) {
        uint8_t pairs[MAXP];
        int np = gather_pairs(&g->loose, value, pairs);
        int ns = 0;
        if (value <= 13) {
            for (int i = 0; i < g->loose.n;) {
                if (TV[g->loose.c[i]] == value) {
                    out[n++] = g->loose.c[i];
                    pile_remove_at(&g->loose, i);
                    ns++;
                } else
                    i++;
            }
        }
        for (int i = 0; i < np; i++) {
            pile_remove(&g->loose, pairs[i]);
            out[n++] = pairs[i];
        }
        (void)ns;
    }
    return n;
}

static inline void set_build(G *g, int v, const uint8_t *cards, int n, int owner, int locked) {
    memcpy(g->bc[v].c, cards, n);
    g->bc[v].n = (uint8_t)n;
    pile_sort(&g->bc[v]);
    g->bowner[v] = (int8_t)owner;
    g->blocked[v] = (uint8_t)locked;
    g->bstamp[v] = ++g->stamp;
}

static inline int n_builds(const G *g) {
    for (int v = MINB; v <= MAXB; v++)
        if (g->bc[v].n) return 1;
    return 0;
}

/* A capture; `taking` (n_taking >= 0) lists the loose cards it takes under forced_capture=False.
 * Returns 1 if the captured piles changed (always), -1 on error. */
static int do_capture(G *g, int p, int c, const uint8_t *taking, int n_taking) {
    int hv = HV[c];
    const int *mv = g->mulle_hand ? MV1 : MV0;
    Pile taken;
    taken.n = 0;
    int own = has_build(g, hv) && g->bowner[hv] == p;
    if (hv <= 13 && pile_index(&g->loose, c) >= 0 && !own) {
        pile_remove(&g->loose, c);
        taken.c[taken.n++] = (uint8_t)c;
    } else if (hv > 13) {
        memcpy(taken.c, g->bc[hv].c, g->bc[hv].n);
        taken.n = g->bc[hv].n;
        g->bc[hv].n = 0;
    } else {
        if (g->bc[hv].n) {
            memcpy(taken.c, g->bc[hv].c, g->bc[hv].n);
            taken.n = g->bc[hv].n;
            g->bc[hv].n = 0;
        }
        uint8_t chosen[MAXP];
        int nc = 0;
        if (n_taking >= 0) {
            memcpy(chosen, taking, n_taking);
            nc = n_taking;
        } else {
            for (int i = 0; i < g->loose.n; i++)
                if (TV[g->loose.c[i]] == hv) chosen[nc++] = g->loose.c[i];
            Pile fixed = taken;
            int ng = forced_groups(&g->loose, hv, &fixed, mv, chosen + nc);
            if (ng < 0) return -1;
            nc += ng;
        }
        for (int i = 0; i < nc; i++) pile_remove(&g->loose, chosen[i]);
        memcpy(taken.c + taken.n, chosen, nc);
        taken.n += nc;
    }
    pile_sort(&taken);
    g->taken = taken;
    Pile cap = taken;
    pile_insert(&cap, c);
    int prev = -1;
    long long pts = 0, ip = 0;
    for (int i = 0; i < cap.n; i++) {
        int f = cap.c[i];
        ip += IPTS[f];
        if (f == prev) {
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
    if (!g->loose.n && !n_builds(g)) g->tabbe[p]++;
    g->last_capturer = p;
    return 1;
}

/* Leftovers to the last capturer and the set's scores; returns 1 if the game goes on. */
static int end_set_cards(G *g) {
    int lc = g->last_capturer;
    long long ip = 0;
    int any = g->loose.n > 0;
    for (int v = MINB; v <= MAXB; v++)
        if (g->bc[v].n) any = 1;
    if (any && lc >= 0) {
        for (int i = 0; i < g->loose.n; i++) {
            pile_insert(&g->intake[lc], g->loose.c[i]);
            ip += IPTS[g->loose.c[i]];
        }
        for (int v = MINB; v <= MAXB; v++)
            for (int i = 0; i < g->bc[v].n; i++) {
                pile_insert(&g->intake[lc], g->bc[v].c[i]);
                ip += IPTS[g->bc[v].c[i]];
            }
        g->ipts[lc] += ip;
    }
    g->loose.n = 0;
    for (int v = 0; v <= MAXB; v++) g->bc[v].n = 0;
    return 0;
}

static PyObject *make_sheet(long long mulle, long long tabbe, long long intake) {
    long long bonus = intake > 20 ? 2 * (intake - 20) : 0;
    return Py_BuildValue("{OLOLOLOLOL}", K_MULLE, mulle, K_TABBE, tabbe, K_INTAKE, intake, K_BONUS, bonus, K_TOTAL,
                         mulle + tabbe + bonus);
}

/* Both hands empty: deal on, or end the set (rules.py end_deal / end_set). */
static int end_deal(Core *self) {
    G *g = &self->g;
    if (g->deck.n) {
        for (int p = 0; p < 2; p++) {
            int k = g->deck.n - p * HAND_SIZE;
            if (k > HAND_SIZE) k = HAND_SIZE;
            if (k < 0) k = 0;
            memcpy(g->hand[p].c, g->deck.c + p * HAND_SIZE, k);
            g->hand[p].n = (uint8_t)k;
            pile_sort(&g->hand[p]);
        }
        int used = g->deck.n < 2 * HAND_SIZE ? g->deck.n : 2 * HAND_SIZE;
        memmove(g->deck.c, g->deck.c + used, g->deck.n - used);
        g->deck.n -= used;
        g->deal_no++;
        g->to_move = leader(g->set_no, g->deal_no);
        return 0;
    }
    end_set_cards(g);
    PyObject *a = make_sheet(g->mpts[0], g->tabbe[0], g->ipts[0]);
    PyObject *b = make_sheet(g->mpts[1], g->tabbe[1], g->ipts[1]);
    PyObject *pair = (a && b) ? PyTuple_Pack(2, a, b) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(b);
    if (!pair) return -1;
    int rc = PyList_Append(self->sheets, pair);
    Py_DECREF(pair);
    if (rc < 0) return -1;
    Py_CLEAR(self->public_);
    if (PyList_GET_SIZE(self->sheets) >= g->sets) {
        g->over = 1;
        return 0;
    }
    g->set_no++;
    deal_set(g);
    return 0;
}

/* Apply a legal move by id (trusted); kind/card/target come from the id tables. */
static int apply_id(Core *self, int id, const uint8_t *taking, int n_taking) {
    G *g = &self->g;
    int p = g->to_move;
    int c = M_CARD[id], kind = M_KIND[id];
    /* Moves are trusted to be legal, but whatever they name must exist, so that even an
     * illegal one can only move cards between piles, never make new ones (no pile overruns). */
    if (pile_index(&g->hand[p], c) < 0) {
        PyErr_SetString(PyExc_ValueError, "the card played is not in the hand");
        return -1;
    }
    if (kind == K_BUILD && ((M_ON[id] >= 0 && pile_index(&g->loose, M_ON[id]) < 0) ||
                            (M_ON[id] < 0 && !g->bc[M_ONB[id]].n))) {
        PyErr_SetString(PyExc_ValueError, "the build's target is not on the table");
        return -1;
    }
    if (taking) {
        Pile rest = g->loose;
        for (int i = 0; i < n_taking; i++)
            if (!pile_remove(&rest, taking[i])) {
                PyErr_SetString(PyExc_ValueError, "the capture takes a card that is not loose on the table");
                return -1;
            }
    }
    pile_remove(&g->hand[p], c);
    if (kind == K_CAPTURE) {
        if (do_capture(g, p, c, taking, n_taking) < 0) return -1;
        Py_CLEAR(self->public_);
    } else {
        g->taken.n = 0;
        if (kind == K_BUILD) {
            uint8_t cards[MAXP];
            int n = 0;
            int to = M_TO[id];
            if (M_ON[id] >= 0) {
                pile_remove(&g->loose, M_ON[id]);
                cards[n++] = (uint8_t)M_ON[id];
            } else {
                int ob = M_ONB[id];
                memcpy(cards, g->bc[ob].c, g->bc[ob].n);
                n = g->bc[ob].n;
                g->bc[ob].n = 0;
            }
            cards[n++] = (uint8_t)c;
            int ng = gather(g, to, cards + n);
            n += ng;
            set_build(g, to, cards, n, p, ng > 0 || g->lock_every);
        } else if (kind == K_TROTTA) {
            uint8_t cards[MAXP];
            int n = gather(g, HV[c], cards);
            cards[n++] = (uint8_t)c;
            set_build(g, HV[c], cards, n, p, 1);
        } else {
            pile_insert(&g->loose, c);
        }
    }
    g->to_move = 1 - p;
    g->last_player = p;
    g->last_id = id;
    Py_CLEAR(self->legal);
    if (!g->hand[0].n && !g->hand[1].n) return end_deal(self);
    return 0;
}

/* ------------------------------------------------------------------ Python conversions */

static PyObject *pile_list(const Pile *p) {
    PyObject *l = PyList_New(p->n);
    if (!l) return NULL;
    for (int i = 0; i < p->n; i++) PyList_SET_ITEM(l, i, PyLong_FromLong(p->c[i]));
    return l;
}

static int need_setup(void) {
    if (CARDS && MOVES && BUILD_CLS) return 0;
    PyErr_SetString(PyExc_RuntimeError, "mulle_env.engine._core: import mulle_env.engine (cstate calls setup) first");
    return -1;
}

static PyObject *pile_cards(const Pile *p) {
    if (need_setup() < 0) return NULL;
    PyObject *t = PyTuple_New(p->n);
    if (!t) return NULL;
    for (int i = 0; i < p->n; i++) {
        PyObject *c = PyTuple_GET_ITEM(CARDS, p->c[i]);
        Py_INCREF(c);
        PyTuple_SET_ITEM(t, i, c);
    }
    return t;
}

static int total_cards(const G *g) {
    int n = g->hand[0].n + g->hand[1].n + g->loose.n + g->deck.n + g->mulle[0].n + g->mulle[1].n + g->intake[0].n +
            g->intake[1].n;
    for (int v = 0; v <= MAXB; v++) n += g->bc[v].n;
    return n;
}

/* Read a sequence of faces into a pile; `sort` keeps sorted piles sorted. The whole state may
 * hold at most MAXP cards, so no later move can overrun a pile. */
static int read_pile_ex(Core *self, PyObject *seq, Pile *dst, int sort, int check_total, const char *what) {
    PyObject *fast = PySequence_Fast(seq, "a pile must be a sequence of faces");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    Pile tmp;
    if (n > MAXP) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s holds %zd cards; at most %d fit a state", what, n, MAXP);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long f = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (f == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        if (f < 0 || f >= NF) {
            Py_DECREF(fast);
            PyErr_Format(PyExc_ValueError, "%s: cards must be faces 0..51, not %ld", what, f);
            return -1;
        }
        tmp.c[i] = (uint8_t)f;
    }
    Py_DECREF(fast);
    tmp.n = (uint8_t)n;
    if (sort) pile_sort(&tmp);
    int before = total_cards(&self->g) - dst->n;
    if (check_total && before + tmp.n > MAXP) {
        PyErr_Format(PyExc_ValueError, "a state holds at most %d cards; %s would make it %d", MAXP, what,
                     before + tmp.n);
        return -1;
    }
    *dst = tmp;
    return 0;
}

static int read_pile(Core *self, PyObject *seq, Pile *dst, int sort, const char *what) {
    return read_pile_ex(self, seq, dst, sort, 1, what);
}

static inline void invalidate(Core *self) { Py_CLEAR(self->legal); }

/* ------------------------------------------------------------------ the Core type */

static int read_ruleset(Core *self, PyObject *rs) {
    G *g = &self->g;
    PyObject *v;
#define FLAG(name, field)                                  \
    v = PyObject_GetAttrString(rs, name);                  \
    if (!v) return -1;                                     \
    g->field = PyObject_IsTrue(v);                         \
    Py_DECREF(v);                                          \
    if (g->field < 0) return -1;
    FLAG("forced_capture", forced)
    FLAG("lock_every_build", lock_every)
    FLAG("discard_only_if_no_capture", discard_only)
    FLAG("mulle_hand_values", mulle_hand)
#undef FLAG
    v = PyObject_GetAttrString(rs, "sets");
    if (!v) return -1;
    long s = PyLong_AsLong(v);
    Py_DECREF(v);
    if (s == -1 && PyErr_Occurred()) return -1;
    g->sets = (int)s;
    Py_INCREF(rs);
    Py_XSETREF(self->ruleset, rs);
    invalidate(self);
    return 0;
}

static int read_seed(Core *self, PyObject *seed) {
    if (seed == Py_None) {
        self->g.seed64 = 0;
    } else {
        if (!PyLong_Check(seed)) {
            PyErr_SetString(PyExc_TypeError, "seed must be an int or None");
            return -1;
        }
        self->g.seed64 = PyLong_AsUnsignedLongLongMask(seed);
        if (self->g.seed64 == (uint64_t)-1 && PyErr_Occurred()) return -1;
    }
    Py_INCREF(seed);
    Py_XSETREF(self->seed, seed);
    return 0;
}

static int Core_init(Core *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"ruleset", "seed", NULL};
    PyObject *rs = Py_None, *seed = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO", kwlist, &rs, &seed)) return -1;
    memset(&self->g, 0, sizeof(G));
    G *g = &self->g;
    g->set_no = g->deal_no = 1;
    g->last_capturer = -1;
    g->last_player = -1;
    g->last_id = -1;
    Py_CLEAR(self->last_move_obj);
    Py_CLEAR(self->public_);
    Py_CLEAR(self->legal);
    PyObject *sh = PyList_New(0);
    if (!sh) return -1;
    Py_XSETREF(self->sheets, sh);
    if (rs == Py_None) {
        PyObject *mod = PyImport_ImportModule("mulle_env.engine.ruleset");
        if (!mod) return -1;
        PyObject *cls = PyObject_GetAttrString(mod, "Ruleset");
        Py_DECREF(mod);
        if (!cls) return -1;
        rs = PyObject_CallNoArgs(cls);
        Py_DECREF(cls);
        if (!rs) return -1;
        int rc = read_ruleset(self, rs);
        Py_DECREF(rs);
        if (rc < 0) return -1;
    } else if (read_ruleset(self, rs) < 0) {
        return -1;
    }
    return read_seed(self, seed);
}

static int Core_traverse(Core *self, visitproc visit, void *arg) {
    Py_VISIT(self->seed);
    Py_VISIT(self->ruleset);
    Py_VISIT(self->sheets);
    Py_VISIT(self->legal);
    Py_VISIT(self->public_);
    Py_VISIT(self->last_move_obj);
    return 0;
}

static int Core_clear(Core *self) {
    Py_CLEAR(self->seed);
    Py_CLEAR(self->ruleset);
    Py_CLEAR(self->sheets);
    Py_CLEAR(self->legal);
    Py_CLEAR(self->public_);
    Py_CLEAR(self->last_move_obj);
    return 0;
}

static void Core_dealloc(Core *self) {
    PyObject_GC_UnTrack(self);
    Core_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Core_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    Core *self = (Core *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    memset(&self->g, 0, sizeof(G));
    self->g.set_no = self->g.deal_no = 1;
    self->g.last_capturer = self->g.last_player = self->g.last_id = -1;
    self->g.sets = 2;
    self->g.forced = self->g.discard_only = 1;
    self->sheets = PyList_New(0);
    if (!self->sheets) {
        Py_DECREF(self);
        return NULL;
    }
    Py_INCREF(Py_None);
    self->seed = Py_None;
    return (PyObject *)self;
}

static PyObject *ids_list(Core *self) {
    if (self->legal) return self->legal;
    int ids[MAX_IDS];
    int n = legal_ids(&self->g, ids);
    PyObject *l = PyList_New(n);
    if (!l) return NULL;
    for (int i = 0; i < n; i++) {
        Py_INCREF(ID_OBJS[ids[i]]);
        PyList_SET_ITEM(l, i, ID_OBJS[ids[i]]);
    }
    self->legal = l;
    return l;
}

static PyObject *Core_ids(Core *self, PyObject *unused) {
    PyObject *l = ids_list(self);
    Py_XINCREF(l);
    return l;
}

static PyObject *Core_legal_move_ids(Core *self, PyObject *unused) {
    PyObject *l = ids_list(self);
    if (!l) return NULL;
    return PyList_GetSlice(l, 0, PyList_GET_SIZE(l));
}

static PyObject *Core_n_legal(Core *self, PyObject *unused) {
    int ids[MAX_IDS];
    return PyLong_FromLong(legal_ids(&self->g, ids));
}

static int check_playable(Core *self) {
    if (self->g.over) {
        PyErr_SetString(PyExc_ValueError, "the game is over");
        return -1;
    }
    return 0;
}

/* The id of a Move made by hand (its `id` left None): from kind, card and target. -1: none. */
static long move_id_from_fields(PyObject *move, long c) {
    PyObject *kind = PyObject_GetAttrString(move, "kind");
    if (!kind) return -2;
    const char *k = PyUnicode_Check(kind) ? PyUnicode_AsUTF8(kind) : NULL;
    long id = -1;
    if (k && !strcmp(k, "capture")) id = CAPTURE_ID[c];
    else if (k && !strcmp(k, "trotta")) id = TROTTA_ID[c];
    else if (k && !strcmp(k, "discard")) id = DISCARD_ID[c];
    else if (k && !strcmp(k, "build")) {
        PyObject *on = PyObject_GetAttrString(move, "on");
        PyObject *onb = on ? PyObject_GetAttrString(move, "on_build") : NULL;
        PyObject *to = onb ? PyObject_GetAttrString(move, "to") : NULL;
        if (to) {
            long f = on == Py_None ? -1 : PyLong_AsLong(on);
            long v = onb == Py_None ? -1 : PyLong_AsLong(onb);
            long t = to == Py_None ? -1 : PyLong_AsLong(to);
            if (!PyErr_Occurred()) {
                if (f >= 0 && f < NF)
                    id = LOOSE_ID[c][f];
                else if (v >= MINB && v <= MAXB && t == v + TV[c])
                    id = UP_ID[c][v];
                else if (v >= MINB && v <= MAXB && t == v - TV[c])
                    id = DOWN_ID[c][v];
            }
        }
        Py_XDECREF(on);
        Py_XDECREF(onb);
        Py_XDECREF(to);
        if (PyErr_Occurred()) id = -2;
    }
    Py_DECREF(kind);
    return id;
}

/* Apply a Move object (trusted legal): by id, or a `taking` capture. */
static PyObject *Core_play_unchecked(Core *self, PyObject *move) {
    if (check_playable(self) < 0) return NULL;
    PyObject *idobj = PyObject_GetAttr(move, S_ID);
    if (!idobj) return NULL;
    int rc;
    if (idobj != Py_None) {
        long id = PyLong_AsLong(idobj);
        Py_DECREF(idobj);
        if (id == -1 && PyErr_Occurred()) return NULL;
        if (id < 0 || id >= NUM_IDS) {
            PyErr_Format(PyExc_ValueError, "move id %ld out of range", id);
            return NULL;
        }
        rc = apply_id(self, (int)id, NULL, -1);
    } else {
        Py_DECREF(idobj);
        PyObject *card = PyObject_GetAttr(move, S_CARD);
        if (!card) return NULL;
        long c = PyLong_AsLong(card);
        Py_DECREF(card);
        if (c == -1 && PyErr_Occurred()) return NULL;
        if (c < 0 || c >= NF) {
            PyErr_SetString(PyExc_ValueError, "move card out of range");
            return NULL;
        }
        PyObject *taking = PyObject_GetAttr(move, S_TAKING);
        if (!taking) return NULL;
        if (taking == Py_None) { /* a Move made by hand: find its id */
            Py_DECREF(taking);
            long id = move_id_from_fields(move, c);
            if (id == -2) return NULL;
            if (id < 0) {
                PyErr_Format(PyExc_ValueError, "%R names no move of the move table", move);
                return NULL;
            }
            if (apply_id(self, (int)id, NULL, -1) < 0) return NULL;
            Py_INCREF(move);
            Py_XSETREF(self->last_move_obj, move);
            Py_INCREF(self);
            return (PyObject *)self;
        }
        Pile t;
        t.n = 0;
        Pile *dst = &t;
        /* read without the whole-state total check: these cards already lie on the table */
        PyObject *fast = PySequence_Fast(taking, "taking must be a sequence of cards");
        Py_DECREF(taking);
        if (!fast) return NULL;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
        if (n > MAXP) {
            Py_DECREF(fast);
            PyErr_SetString(PyExc_ValueError, "taking lists too many cards");
            return NULL;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            long f = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
            if ((f == -1 && PyErr_Occurred()) || f < 0 || f >= NF) {
                Py_DECREF(fast);
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "taking: cards must be faces 0..51");
                return NULL;
            }
            dst->c[dst->n++] = (uint8_t)f;
        }
        Py_DECREF(fast);
        rc = apply_id(self, CAPTURE_ID[c], t.c, t.n);
    }
    if (rc < 0) return NULL;
    Py_INCREF(move);
    Py_XSETREF(self->last_move_obj, move);
    Py_INCREF(self);
    return (PyObject *)self;
}

/* Apply a legal move id (trusted): the fast path for envs and rollouts. */
static PyObject *Core_play_id(Core *self, PyObject *arg) {
    long id = PyLong_AsLong(arg);
    if (id == -1 && PyErr_Occurred()) return NULL;
    if (check_playable(self) < 0) return NULL;
    if (id < 0 || id >= NUM_IDS) {
        PyErr_Format(PyExc_ValueError, "move id %ld out of range", id);
        return NULL;
    }
    if (apply_id(self, (int)id, NULL, -1) < 0) return NULL;
    Py_CLEAR(self->last_move_obj);
    Py_RETURN_NONE;
}

/* Play `n` uniformly random legal moves (or to the end of the game) with a SplitMix64 stream:
 * the raw-speed benchmark and the long-run memory test. Returns the moves played. */
static PyObject *Core_random_playout(Core *self, PyObject *args) {
    unsigned long long seed;
    long long n;
    if (!PyArg_ParseTuple(args, "KL", &seed, &n)) return NULL;
    uint64_t x = seed;
    long long done = 0;
    int ids[MAX_IDS];
    while (done < n && !self->g.over) {
        int k = legal_ids(&self->g, ids);
        if (k == 0) {
            PyErr_SetString(PyExc_ValueError, "no legal move");
            return NULL;
        }
        int id = ids[splitmix(&x) % (uint64_t)k];
        Py_CLEAR(self->legal);
        if (apply_id(self, id, NULL, -1) < 0) return NULL;
        done++;
    }
    Py_CLEAR(self->last_move_obj);
    return PyLong_FromLongLong(done);
}

static PyObject *Core_deal_set(Core *self, PyObject *unused) {
    deal_set(&self->g);
    invalidate(self);
    Py_CLEAR(self->public_);
    Py_RETURN_NONE;
}

static PyObject *Core_copy(Core *self, PyObject *unused) {
    PyTypeObject *tp = Py_TYPE(self);
    Core *o = (Core *)tp->tp_alloc(tp, 0);
    if (!o) return NULL;
    o->g = self->g;
    o->sheets = PyList_GetSlice(self->sheets, 0, PyList_GET_SIZE(self->sheets));
    if (!o->sheets) {
        Py_DECREF(o);
        return NULL;
    }
#define SHARE(f)           \
    Py_XINCREF(self->f); \
    o->f = self->f;
    SHARE(seed)
    SHARE(ruleset)
    SHARE(legal)
    SHARE(public_)
    SHARE(last_move_obj)
#undef SHARE
    return (PyObject *)o;
}

static PyObject *Core_capture_cards(PyObject *mod, PyObject *args);

/* ----- attributes */

static PyObject *get_hands(Core *self, void *c) {
    PyObject *a = pile_list(&self->g.hand[0]), *b = pile_list(&self->g.hand[1]);
    if (!a || !b) {
        Py_XDECREF(a);
        Py_XDECREF(b);
        return NULL;
    }
    PyObject *l = PyList_New(2);
    if (!l) return NULL;
    PyList_SET_ITEM(l, 0, a);
    PyList_SET_ITEM(l, 1, b);
    return l;
}

static int set_pair(Core *self, PyObject *v, Pile *dst, const char *what) {
    if (!v) {
        PyErr_Format(PyExc_AttributeError, "%s cannot be deleted", what);
        return -1;
    }
    if (!PySequence_Check(v) || PySequence_Size(v) != 2) {
        PyErr_Format(PyExc_ValueError, "%s must be two piles", what);
        return -1;
    }
    Pile save[2] = {dst[0], dst[1]};
    for (int p = 0; p < 2; p++) {
        PyObject *x = PySequence_GetItem(v, p);
        if (!x) return -1;
        int rc = read_pile(self, x, &dst[p], 1, what);
        Py_DECREF(x);
        if (rc < 0) {
            dst[0] = save[0];
            dst[1] = save[1];
            return -1;
        }
    }
    invalidate(self);
    Py_CLEAR(self->public_);
    return 0;
}

static int set_hands(Core *self, PyObject *v, void *c) { return set_pair(self, v, self->g.hand, "hands"); }
static PyObject *get_mulle(Core *self, void *c) {
    return Py_BuildValue("[NN]", pile_list(&self->g.mulle[0]), pile_list(&self->g.mulle[1]));
}
static int set_mulle(Core *self, PyObject *v, void *c) { return set_pair(self, v, self->g.mulle, "mulle"); }
static PyObject *get_intake(Core *self, void *c) {
    return Py_BuildValue("[NN]", pile_list(&self->g.intake[0]), pile_list(&self->g.intake[1]));
}
static int set_intake(Core *self, PyObject *v, void *c) { return set_pair(self, v, self->g.intake, "intake"); }

static PyObject *get_loose(Core *self, void *c) { return pile_list(&self->g.loose); }
static int set_loose(Core *self, PyObject *v, void *c) {
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "loose cannot be deleted");
        return -1;
    }
    if (read_pile(self, v, &self->g.loose, 1, "loose") < 0) return -1;
    invalidate(self);
    return 0;
}
static PyObject *get_deck(Core *self, void *c) { return pile_list(&self->g.deck); }
static int set_deck(Core *self, PyObject *v, void *c) {
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "deck cannot be deleted");
        return -1;
    }
    return read_pile(self, v, &self->g.deck, 0, "deck");
}
static PyObject *get_taken(Core *self, void *c) { return pile_cards(&self->g.taken); }
static int set_taken(Core *self, PyObject *v, void *c) {
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "last_taken cannot be deleted");
        return -1;
    }
    /* the cards it names lie in the captured piles already: no whole-state count */
    return read_pile_ex(self, v, &self->g.taken, 1, 0, "last_taken");
}

static PyObject *get_builds(Core *self, void *c) {
    G *g = &self->g;
    int order[MAXB + 1], n = 0;
    for (int v = MINB; v <= MAXB; v++)
        if (g->bc[v].n) order[n++] = v;
    for (int i = 1; i < n; i++) { /* by insertion stamp, as the Python dict iterates */
        int x = order[i], j = i - 1;
        while (j >= 0 && g->bstamp[order[j]] > g->bstamp[x]) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = x;
    }
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    for (int i = 0; i < n; i++) {
        int v = order[i];
        PyObject *cards = PyTuple_New(g->bc[v].n);
        if (!cards) goto fail;
        for (int k = 0; k < g->bc[v].n; k++) PyTuple_SET_ITEM(cards, k, PyLong_FromLong(g->bc[v].c[k]));
        PyObject *owner = g->bowner[v] < 0 ? Py_None : PyLong_FromLong(g->bowner[v]);
        if (g->bowner[v] < 0) Py_INCREF(Py_None);
        PyObject *t = Py_BuildValue("(NNO)", cards, owner, g->blocked[v] ? Py_True : Py_False);
        if (!t) goto fail;
        PyObject *key = PyLong_FromLong(v);
        int rc = key ? PyDict_SetItem(d, key, t) : -1;
        Py_XDECREF(key);
        Py_DECREF(t);
        if (rc < 0) goto fail;
    }
    return d;
fail:
    Py_DECREF(d);
    return NULL;
}

static int set_builds(Core *self, PyObject *v, void *c) {
    if (!v || !PyDict_Check(v)) {
        PyErr_SetString(PyExc_ValueError, "builds must be a dict {value: (cards, owner, locked)}");
        return -1;
    }
    G save = self->g;
    G *g = &self->g;
    for (int b = 0; b <= MAXB; b++) g->bc[b].n = 0;
    PyObject *key, *val;
    Py_ssize_t pos = 0;
    while (PyDict_Next(v, &pos, &key, &val)) {
        long value = PyLong_AsLong(key);
        if (value == -1 && PyErr_Occurred()) goto fail;
        if (value < MINB || value > MAXB) {
            PyErr_Format(PyExc_ValueError, "build value %ld outside %d..%d", value, MINB, MAXB);
            goto fail;
        }
        if (!PyTuple_Check(val) || PyTuple_GET_SIZE(val) != 3) {
            PyErr_SetString(PyExc_ValueError, "a build is (cards, owner, locked)");
            goto fail;
        }
        if (read_pile(self, PyTuple_GET_ITEM(val, 0), &g->bc[value], 1, "build") < 0) goto fail;
        if (g->bc[value].n < 1) {
            PyErr_SetString(PyExc_ValueError, "a build holds cards");
            goto fail;
        }
        PyObject *owner = PyTuple_GET_ITEM(val, 1);
        long o = -1;
        if (owner != Py_None) {
            o = PyLong_AsLong(owner);
            if (o == -1 && PyErr_Occurred()) goto fail;
            if (o != 0 && o != 1) {
                PyErr_SetString(PyExc_ValueError, "a build's owner is 0, 1 or None");
                goto fail;
            }
        }
        int locked = PyObject_IsTrue(PyTuple_GET_ITEM(val, 2));
        if (locked < 0) goto fail;
        g->bowner[value] = (int8_t)o;
        g->blocked[value] = (uint8_t)locked;
        g->bstamp[value] = ++g->stamp;
    }
    invalidate(self);
    return 0;
fail:
    self->g = save;
    return -1;
}

static PyObject *get_ll_pair(long long *a) { return Py_BuildValue("[LL]", a[0], a[1]); }
static int set_ll_pair(Core *self, PyObject *v, long long *dst, const char *what) {
    if (!v || !PySequence_Check(v) || PySequence_Size(v) != 2) {
        PyErr_Format(PyExc_ValueError, "%s must be two ints", what);
        return -1;
    }
    long long t[2];
    for (int p = 0; p < 2; p++) {
        PyObject *x = PySequence_GetItem(v, p);
        if (!x) return -1;
        t[p] = PyLong_AsLongLong(x);
        Py_DECREF(x);
        if (t[p] == -1 && PyErr_Occurred()) return -1;
    }
    dst[0] = t[0];
    dst[1] = t[1];
    Py_CLEAR(self->public_);
    return 0;
}
static PyObject *get_tabbe(Core *self, void *c) { return get_ll_pair(self->g.tabbe); }
static int set_tabbe(Core *self, PyObject *v, void *c) { return set_ll_pair(self, v, self->g.tabbe, "tabbe"); }
static PyObject *get_mpts(Core *self, void *c) { return get_ll_pair(self->g.mpts); }
static int set_mpts(Core *self, PyObject *v, void *c) { return set_ll_pair(self, v, self->g.mpts, "mpts"); }
static PyObject *get_ipts(Core *self, void *c) { return get_ll_pair(self->g.ipts); }
static int set_ipts(Core *self, PyObject *v, void *c) { return set_ll_pair(self, v, self->g.ipts, "ipts"); }

static int read_int(PyObject *v, int lo, int hi, int *dst, const char *what) {
    if (!v) {
        PyErr_Format(PyExc_AttributeError, "%s cannot be deleted", what);
        return -1;
    }
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (x < lo || x > hi) {
        PyErr_Format(PyExc_ValueError, "%s must be %d..%d, not %ld", what, lo, hi, x);
        return -1;
    }
    *dst = (int)x;
    return 0;
}

static PyObject *get_to_move(Core *self, void *c) { return PyLong_FromLong(self->g.to_move); }
static int set_to_move(Core *self, PyObject *v, void *c) {
    int rc = read_int(v, 0, 1, &self->g.to_move, "to_move");
    invalidate(self);
    return rc;
}
static PyObject *get_set_no(Core *self, void *c) { return PyLong_FromLong(self->g.set_no); }
static int set_set_no(Core *self, PyObject *v, void *c) { return read_int(v, 1, 1000000, &self->g.set_no, "set_no"); }
static PyObject *get_deal_no(Core *self, void *c) { return PyLong_FromLong(self->g.deal_no); }
static int set_deal_no(Core *self, PyObject *v, void *c) {
    return read_int(v, -1000000, 1000000, &self->g.deal_no, "deal_no");
}
static PyObject *get_last_capturer(Core *self, void *c) {
    if (self->g.last_capturer < 0) Py_RETURN_NONE;
    return PyLong_FromLong(self->g.last_capturer);
}
static int set_last_capturer(Core *self, PyObject *v, void *c) {
    if (v == Py_None) {
        self->g.last_capturer = -1;
        return 0;
    }
    return read_int(v, 0, 1, &self->g.last_capturer, "last_capturer");
}
static PyObject *get_over(Core *self, void *c) { return PyBool_FromLong(self->g.over); }
static int set_over(Core *self, PyObject *v, void *c) {
    int t = v ? PyObject_IsTrue(v) : -1;
    if (t < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_AttributeError, "over cannot be deleted");
        return -1;
    }
    self->g.over = t;
    invalidate(self);
    return 0;
}
static PyObject *get_sheets(Core *self, void *c) {
    if (!self->sheets) return PyList_New(0);
    return PyList_GetSlice(self->sheets, 0, PyList_GET_SIZE(self->sheets));
}
static int set_sheets(Core *self, PyObject *v, void *c) {
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "sheets cannot be deleted");
        return -1;
    }
    PyObject *l = PySequence_List(v);
    if (!l) return -1;
    Py_XSETREF(self->sheets, l);
    Py_CLEAR(self->public_);
    return 0;
}
static PyObject *get_last_move(Core *self, void *c) {
    if (self->g.last_player < 0) Py_RETURN_NONE;
    if (need_setup() < 0) return NULL;
    if (self->last_move_obj) return Py_BuildValue("(iO)", self->g.last_player, self->last_move_obj);
    if (self->g.last_id < 0) Py_RETURN_NONE;
    return Py_BuildValue("(iO)", self->g.last_player, PyTuple_GET_ITEM(MOVES, self->g.last_id));
}
static int set_last_move(Core *self, PyObject *v, void *c) {
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "last_move cannot be deleted");
        return -1;
    }
    if (v == Py_None) {
        self->g.last_player = -1;
        self->g.last_id = -1;
        Py_CLEAR(self->last_move_obj);
        return 0;
    }
    if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) != 2) {
        PyErr_SetString(PyExc_ValueError, "last_move is None or (player, Move)");
        return -1;
    }
    int p;
    if (read_int(PyTuple_GET_ITEM(v, 0), 0, 1, &p, "last_move player") < 0) return -1;
    PyObject *m = PyTuple_GET_ITEM(v, 1);
    self->g.last_player = p;
    self->g.last_id = -1;
    Py_INCREF(m);
    Py_XSETREF(self->last_move_obj, m);
    return 0;
}
static PyObject *get_seed(Core *self, void *c) {
    if (!self->seed) Py_RETURN_NONE;
    Py_INCREF(self->seed);
    return self->seed;
}
static int set_seed(Core *self, PyObject *v, void *c) {
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "seed cannot be deleted");
        return -1;
    }
    return read_seed(self, v);
}
static PyObject *get_ruleset(Core *self, void *c) {
    if (!self->ruleset) Py_RETURN_NONE; /* made with __new__ and never initialized */
    Py_INCREF(self->ruleset);
    return self->ruleset;
}
static int set_ruleset(Core *self, PyObject *v, void *c) {
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "ruleset cannot be deleted");
        return -1;
    }
    return read_ruleset(self, v);
}
static PyObject *get_public(Core *self, void *c) {
    if (!self->public_) Py_RETURN_NONE;
    Py_INCREF(self->public_);
    return self->public_;
}
static int set_public(Core *self, PyObject *v, void *c) {
    if (v == Py_None || !v) {
        Py_CLEAR(self->public_);
    } else {
        Py_INCREF(v);
        Py_XSETREF(self->public_, v);
    }
    return 0;
}
static PyObject *get_legal(Core *self, void *c) {
    if (!self->legal) Py_RETURN_NONE;
    Py_INCREF(self->legal);
    return self->legal;
}
static int set_legal(Core *self, PyObject *v, void *c) {
    if (v != Py_None && v) {
        PyErr_SetString(PyExc_ValueError, "_legal can only be cleared");
        return -1;
    }
    Py_CLEAR(self->legal);
    return 0;
}

static PyGetSetDef Core_getset[] = {
    {"hands", (getter)get_hands, (setter)set_hands, "Both hands (faces, sorted); a new list on every read.", NULL},
    {"loose", (getter)get_loose, (setter)set_loose, "Loose table cards (faces, sorted).", NULL},
    {"builds", (getter)get_builds, (setter)set_builds, "Builds: {value: (cards, owner, locked)}.", NULL},
    {"deck", (getter)get_deck, (setter)set_deck, "The undealt cards, next card first.", NULL},
    {"mulle", (getter)get_mulle, (setter)set_mulle, "Both mulle piles.", NULL},
    {"intake", (getter)get_intake, (setter)set_intake, "Both intake piles.", NULL},
    {"tabbe", (getter)get_tabbe, (setter)set_tabbe, "Tabbes of the set in play.", NULL},
    {"mpts", (getter)get_mpts, (setter)set_mpts, "Mulle points of the set in play.", NULL},
    {"ipts", (getter)get_ipts, (setter)set_ipts, "Intake points of the set in play.", NULL},
    {"to_move", (getter)get_to_move, (setter)set_to_move, "Seat to move.", NULL},
    {"set_no", (getter)get_set_no, (setter)set_set_no, "Set in play (1-based).", NULL},
    {"deal_no", (getter)get_deal_no, (setter)set_deal_no, "Deal in play (1-based).", NULL},
    {"last_capturer", (getter)get_last_capturer, (setter)set_last_capturer, "Last seat to capture, or None.", NULL},
    {"over", (getter)get_over, (setter)set_over, "True once the last set is scored.", NULL},
    {"sheets", (getter)get_sheets, (setter)set_sheets, "Score sheets of the finished sets.", NULL},
    {"last_move", (getter)get_last_move, (setter)set_last_move, "(player, Move) of the last move, or None.", NULL},
    {"last_taken", (getter)get_taken, (setter)set_taken, "Table cards the last move captured.", NULL},
    {"seed", (getter)get_seed, (setter)set_seed, "The game's seed (None: 0).", NULL},
    {"ruleset", (getter)get_ruleset, (setter)set_ruleset, "The Ruleset.", NULL},
    {"_public", (getter)get_public, (setter)set_public, "Cache of the public part of views.", NULL},
    {"_legal", (getter)get_legal, (setter)set_legal, "Cache of the legal ids.", NULL},
    {NULL}};

/* ----- fast paths for the environments: observation and mask into caller buffers */

static int get_buffer(PyObject *obj, Py_buffer *view, Py_ssize_t need, const char *fmt_char, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return -1;
    const char *f = view->format ? view->format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@') f++;
    if (strcmp(f, fmt_char) != 0 || view->len < need || view->readonly) {
        PyErr_Format(PyExc_ValueError, "%s must be a writable contiguous buffer of %zd items of format '%s'", what,
                     need / view->itemsize, fmt_char);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* Write the legal mask (one byte per move id: 1 legal, 0 not) for the player to move. */
static int write_mask(const G *g, uint8_t *mask) {
    int ids[MAX_IDS];
    memset(mask, 0, NUM_IDS);
    int n = legal_ids(g, ids);
    for (int i = 0; i < n; i++) mask[ids[i]] = 1;
    return n;
}

static PyObject *Core_write_mask(Core *self, PyObject *arg) {
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (b.itemsize != 1 || b.len < NUM_IDS) {
        PyBuffer_Release(&b);
        PyErr_Format(PyExc_ValueError, "mask must be a writable bool/int8/uint8 buffer of %d items", NUM_IDS);
        return NULL;
    }
    int n = write_mask(&self->g, (uint8_t *)b.buf);
    PyBuffer_Release(&b);
    return PyLong_FromLong(n);
}

/* observation.py's encode_state, float32[524]; see that module and docs/environments.md for the
 * layout: 8 face blocks (hand, loose, build cards, my mulle, my intake, opponent's mulle,
 * opponent's intake, unseen = 2 minus the rest), 15 builds x 5 features, 4 score sheets / 100,
 * 13 scalars. Divisions are done in double and rounded once to float32, as numpy does. */
#define OBS_BUILDS 416
#define OBS_SCORES (OBS_BUILDS + 15 * 5)
#define OBS_SCALARS (OBS_SCORES + 20)
static PyObject **SHEET_KEYS[5] = {&K_MULLE, &K_TABBE, &K_INTAKE, &K_BONUS, &K_TOTAL};

static inline void set_values(long long m, long long t, long long i, long long *out) {
    long long bonus = i > 20 ? 2 * (i - 20) : 0;
    out[0] = m;
    out[1] = t;
    out[2] = i;
    out[3] = bonus;
    out[4] = m + t + bonus;
}

static int write_obs(const G *g, PyObject *sheets, int player, float *o) {
    int opp = 1 - player;
    memset(o, 0, OBS_SIZE * sizeof(float));
    const Pile *piles[7] = {&g->hand[player], &g->loose, NULL, &g->mulle[player], &g->intake[player], &g->mulle[opp],
                            &g->intake[opp]};
    int seen[NF] = {0};
    for (int b = 0; b < 7; b++) {
        if (b == 2) {
            for (int v = MINB; v <= MAXB; v++)
                for (int i = 0; i < g->bc[v].n; i++) {
                    o[2 * NF + g->bc[v].c[i]] += 1.0f;
                    seen[g->bc[v].c[i]]++;
                }
            continue;
        }
        const Pile *p = piles[b];
        for (int i = 0; i < p->n; i++) {
            o[b * NF + p->c[i]] += 1.0f;
            seen[p->c[i]]++;
        }
    }
    for (int f = 0; f < NF; f++) o[7 * NF + f] = (float)(2 - seen[f]);
    for (int v = MINB; v <= MAXB; v++) {
        if (!g->bc[v].n) continue;
        float *b = o + OBS_BUILDS + (v - MINB) * 5;
        b[0] = 1.0f;
        if (g->bowner[v] == player)
            b[1] = 1.0f;
        else if (g->bowner[v] == opp)
            b[2] = 1.0f;
        if (g->blocked[v]) b[3] = 1.0f;
        b[4] = (float)(g->bc[v].n / 10.0);
    }
    long long cur[2][5] = {{0}}, game[2][5];
    if (!g->over) {
        set_values(g->mpts[player], g->tabbe[player], g->ipts[player], cur[0]);
        set_values(g->mpts[opp], g->tabbe[opp], g->ipts[opp], cur[1]);
    }
    memcpy(game, cur, sizeof game);
    Py_ssize_t ns = PyList_GET_SIZE(sheets);
    for (Py_ssize_t k = 0; k < ns; k++) {
        PyObject *pair = PyList_GET_ITEM(sheets, k);
        for (int i = 0; i < 2; i++) {
            PyObject *sh = PySequence_GetItem(pair, i == 0 ? player : opp);
            if (!sh) return -1;
            for (int j = 0; j < 5; j++) {
                PyObject *x = PyObject_GetItem(sh, *SHEET_KEYS[j]); /* interned keys: no string made per read */
                long long val = x ? PyLong_AsLongLong(x) : -1;
                Py_XDECREF(x);
                if (val == -1 && PyErr_Occurred()) {
                    Py_DECREF(sh);
                    return -1;
                }
                game[i][j] += val;
            }
            Py_DECREF(sh);
        }
    }
    float *sc = o + OBS_SCORES;
    for (int j = 0; j < 5; j++) {
        sc[j] = (float)(game[0][j] / 100.0);
        sc[5 + j] = (float)(game[1][j] / 100.0);
        sc[10 + j] = (float)(cur[0][j] / 100.0);
        sc[15 + j] = (float)(cur[1][j] / 100.0);
    }
    float *x = o + OBS_SCALARS;
    x[0] = (float)(g->hand[opp].n / 8.0);
    x[1] = (float)(g->deck.n / 80.0);
    x[2] = (float)((double)g->set_no / g->sets);
    x[3] = (float)(g->deal_no / 6.0);
    x[4] = g->to_move == player;
    x[5] = leader(g->set_no, g->deal_no) == player;
    x[6] = (float)player;
    x[7] = g->last_capturer == player;
    x[8] = g->last_capturer == opp;
    x[9] = (float)g->over;
    x[10] = (float)g->lock_every;
    x[11] = (float)g->discard_only;
    x[12] = (float)g->mulle_hand;
    return 0;
}

static PyObject *Core_write_observation(Core *self, PyObject *args) {
    int player;
    PyObject *out;
    if (!PyArg_ParseTuple(args, "iO", &player, &out)) return NULL;
    if (player != 0 && player != 1) {
        PyErr_Format(PyExc_ValueError, "player must be 0 or 1, not %d", player);
        return NULL;
    }
    Py_buffer b;
    if (get_buffer(out, &b, OBS_SIZE * sizeof(float), "f", "the observation buffer") < 0) return NULL;
    PyObject *sheets = self->sheets; /* held: a sheet's __getitem__ could replace the list */
    Py_INCREF(sheets);
    int rc = write_obs(&self->g, sheets, player, (float *)b.buf);
    Py_DECREF(sheets);
    PyBuffer_Release(&b);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

static int set_value(Core *self, int player, double *out);

/* write_afterstates(player, ids, obs, banked): per legal move id, the position it leaves as the
 * mover `player` sees it, for afterstate nets. This state with the opponent's hand and the deck
 * turned into placeholders (card 0; the opponent keeps at least one card, so the move never ends
 * the deal and deals from a deck the mover cannot know), the move played on a copy, encoded from
 * the mover's seat into row i of obs (float32, OBS_SIZE a row) and the mover's set_value into
 * banked[i] (float64). agents/learned/afterstate.py encode_afterstates is the reference: it
 * builds the same placeholder state from the mover's view and plays the moves in Python. */
static PyObject *Core_write_afterstates(Core *self, PyObject *args) {
    int player;
    PyObject *ids_obj, *obs, *banked;
    if (!PyArg_ParseTuple(args, "iOOO", &player, &ids_obj, &obs, &banked)) return NULL;
    if (player != 0 && player != 1) {
        PyErr_Format(PyExc_ValueError, "player must be 0 or 1, not %d", player);
        return NULL;
    }
    if (self->g.over || self->g.to_move != player) {
        PyErr_Format(PyExc_ValueError, "write_afterstates: player %d is not to move", player);
        return NULL;
    }
    /* A tuple: the ids cannot change under us while Python code runs (an id's __index__). */
    PyObject *fast = PySequence_Tuple(ids_obj);
    if (!fast) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(fast);
    G base = self->g;
    int o = 1 - player;
    int keep = base.hand[o].n > 0 ? base.hand[o].n : 1;
    base.hand[o].n = (uint8_t)keep;
    memset(base.hand[o].c, 0, (size_t)keep);
    memset(base.deck.c, 0, base.deck.n);
    /* Only legal moves: apply_id trusts its id, and an afterstate of an illegal move means nothing. */
    int legal[MAX_IDS];
    uint8_t ok[MAX_IDS] = {0};
    int k = legal_ids(&base, legal);
    for (int i = 0; i < k; i++) ok[legal[i]] = 1;
    Py_buffer bo, bb;
    if (get_buffer(obs, &bo, n * OBS_SIZE * (Py_ssize_t)sizeof(float), "f", "the afterstate buffer") < 0) {
        Py_DECREF(fast);
        return NULL;
    }
    if (get_buffer(banked, &bb, n * (Py_ssize_t)sizeof(double), "d", "the banked buffer") < 0) {
        PyBuffer_Release(&bo);
        Py_DECREF(fast);
        return NULL;
    }
    Core *tmp = (Core *)Core_copy(self, NULL);
    PyObject *result = NULL;
    if (!tmp) goto done;
    Py_ssize_t n_sheets = PyList_GET_SIZE(tmp->sheets);
    for (Py_ssize_t i = 0; i < n; i++) {
        long id = PyLong_AsLong(PyTuple_GET_ITEM(fast, i));
        if (id == -1 && PyErr_Occurred()) goto done;
        if (id < 0 || id >= NUM_IDS || !ok[id]) {
            PyErr_Format(PyExc_ValueError, "write_afterstates: move id %ld is not legal here", id);
            goto done;
        }
        tmp->g = base;
        Py_CLEAR(tmp->legal);
        if (apply_id(tmp, (int)id, NULL, -1) < 0) goto done;
        /* The opponent keeps a card, so no move ends the deal (or the set): the copy's
         * sheets, shared by every row, never change. Checked, not assumed. */
        if (PyList_GET_SIZE(tmp->sheets) != n_sheets || tmp->g.deal_no != base.deal_no) {
            PyErr_SetString(PyExc_RuntimeError, "write_afterstates: a move ended the deal");
            goto done;
        }
        if (write_obs(&tmp->g, tmp->sheets, player, (float *)bo.buf + i * OBS_SIZE) < 0) goto done;
        if (set_value(tmp, player, (double *)bb.buf + i) < 0) goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    Py_XDECREF(tmp);
    PyBuffer_Release(&bo);
    PyBuffer_Release(&bb);
    Py_DECREF(fast);
    return result;
}

static PyObject *Core_capture_cards(PyObject *mod, PyObject *args) {
    /* forced_groups on a list of loose faces: the C side of capture.forced_groups, for tests */
    PyObject *loose, *fixed;
    int v, hand_values;
    if (!PyArg_ParseTuple(args, "OiOp", &loose, &v, &fixed, &hand_values)) return NULL;
    if (v < 2 || v > 13) {
        PyErr_SetString(PyExc_ValueError, "v must be 2..13");
        return NULL;
    }
    Pile l, f;
    PyObject *fl = PySequence_Fast(loose, "loose must be a sequence");
    if (!fl) return NULL;
    PyObject *ff = PySequence_Fast(fixed, "fixed must be a sequence");
    if (!ff) {
        Py_DECREF(fl);
        return NULL;
    }
    if (PySequence_Fast_GET_SIZE(fl) > MAXP || PySequence_Fast_GET_SIZE(ff) > MAXP) {
        Py_DECREF(fl);
        Py_DECREF(ff);
        PyErr_SetString(PyExc_ValueError, "too many cards");
        return NULL;
    }
    l.n = f.n = 0;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fl); i++) {
        long x = PyLong_AsLong(PySequence_Fast_GET_ITEM(fl, i));
        if (x < 0 || x >= NF) goto bad;
        l.c[l.n++] = (uint8_t)x;
    }
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(ff); i++) {
        long x = PyLong_AsLong(PySequence_Fast_GET_ITEM(ff, i));
        if (x < 0 || x >= NF) goto bad;
        f.c[f.n++] = (uint8_t)x;
    }
    Py_DECREF(fl);
    Py_DECREF(ff);
    pile_sort(&l);
    pile_sort(&f);
    uint8_t out[MAXP];
    int n = forced_groups(&l, v, &f, hand_values ? MV1 : MV0, out);
    if (n < 0) return NULL;
    Pile o;
    o.n = (uint8_t)n;
    memcpy(o.c, out, n);
    return pile_list(&o);
bad:
    Py_DECREF(fl);
    Py_DECREF(ff);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "cards must be faces 0..51");
    return NULL;
}

static PyObject *Core_rollout(Core *self, PyObject *args);

/* The fields of PlayerView in order, for state.py's view(); `public` is the cached
 * (mulle, intake, tabbe, scores) part that only changes with captures and set ends. */
static PyObject *Core_view_tuple(Core *self, PyObject *args) {
    int player;
    PyObject *public_;
    if (!PyArg_ParseTuple(args, "iO!", &player, &PyTuple_Type, &public_)) return NULL;
    if ((player != 0 && player != 1) || PyTuple_GET_SIZE(public_) != 4) {
        PyErr_SetString(PyExc_ValueError, "_view_tuple(player 0/1, public of 4)");
        return NULL;
    }
    G *g = &self->g;
    PyObject *builds;
    int nb = 0;
    if (need_setup() < 0) return NULL;
    if (!self->ruleset || !self->sheets) {
        PyErr_SetString(PyExc_RuntimeError, "the state was never initialized");
        return NULL;
    }
    for (int v = MINB; v <= MAXB; v++) nb += g->bc[v].n > 0;
    builds = PyTuple_New(nb);
    if (!builds) return NULL;
    for (int v = MINB, k = 0; v <= MAXB; v++) {
        if (!g->bc[v].n) continue;
        PyObject *owner = g->bowner[v] < 0 ? Py_None : PyLong_FromLong(g->bowner[v]);
        if (g->bowner[v] < 0) Py_INCREF(Py_None);
        PyObject *b = PyObject_CallFunction(BUILD_CLS, "iNNO", v, pile_cards(&g->bc[v]), owner,
                                            g->blocked[v] ? Py_True : Py_False);
        if (!b) {
            Py_DECREF(builds);
            return NULL;
        }
        PyTuple_SET_ITEM(builds, k++, b);
    }
    PyObject *sheets = PyList_AsTuple(self->sheets);
    PyObject *last_move = get_last_move(self, NULL);
    if (!sheets || !last_move) {
        Py_XDECREF(sheets);
        Py_XDECREF(last_move);
        Py_DECREF(builds);
        return NULL;
    }
    PyObject *lc = g->last_capturer < 0 ? Py_None : PyLong_FromLong(g->last_capturer);
    if (g->last_capturer < 0) Py_INCREF(Py_None);
    return Py_BuildValue("(iiNiiNNOOOONiiNNONN)", player, g->to_move, pile_cards(&g->hand[player]),
                         (int)g->hand[1 - player].n, (int)g->deck.n, pile_cards(&g->loose), builds,
                         PyTuple_GET_ITEM(public_, 0), PyTuple_GET_ITEM(public_, 1), PyTuple_GET_ITEM(public_, 2),
                         PyTuple_GET_ITEM(public_, 3), sheets, g->set_no, g->deal_no, lc, last_move, self->ruleset,
                         PyBool_FromLong(g->over), pile_cards(&g->taken));
}

/* state.py _recount: mulle and intake points from the captured piles. */
static PyObject *Core_recount(Core *self, PyObject *unused) {
    G *g = &self->g;
    const int *mv = g->mulle_hand ? MV1 : MV0;
    for (int p = 0; p < 2; p++) {
        long long m = 0, ip = 0;
        for (int i = 0; i < g->mulle[p].n; i++) {
            m += mv[g->mulle[p].c[i]];
            ip += IPTS[g->mulle[p].c[i]];
        }
        for (int i = 0; i < g->intake[p].n; i++) ip += IPTS[g->intake[p].c[i]];
        g->mpts[p] = m;
        g->ipts[p] = ip;
    }
    Py_CLEAR(self->public_);
    Py_RETURN_NONE;
}

static PyMethodDef Core_methods[] = {
    {"_ids", (PyCFunction)Core_ids, METH_NOARGS, "The cached legal id list itself (never mutate it)."},
    {"legal_move_ids", (PyCFunction)Core_legal_move_ids, METH_NOARGS,
     "Ids of the legal moves (Move.id), canonical order; the list is the caller's own."},
    {"n_legal", (PyCFunction)Core_n_legal, METH_NOARGS, "How many legal ids there are."},
    {"play_unchecked", (PyCFunction)Core_play_unchecked, METH_O,
     "Apply a move known to be legal (from legal_moves), skipping the check; returns self."},
    {"play_id", (PyCFunction)Core_play_id, METH_O, "Apply the legal move with this id, unchecked (fast path)."},
    {"random_playout", (PyCFunction)Core_random_playout, METH_VARARGS,
     "random_playout(seed, n): play up to n uniformly random legal moves inside the core."},
    {"deal_set", (PyCFunction)Core_deal_set, METH_NOARGS,
     "Shuffle a fresh 104-card deck for the current set and make its first deal."},
    {"_core_copy", (PyCFunction)Core_copy, METH_NOARGS, "An independent copy."},
    {"_view_tuple", (PyCFunction)Core_view_tuple, METH_VARARGS, "PlayerView's fields in order (for view())."},
    {"_recount", (PyCFunction)Core_recount, METH_NOARGS, "Mulle and intake points from the captured piles."},
    {"rollout", (PyCFunction)Core_rollout, METH_VARARGS,
     "rollout(player, policy, plies, stop, root_set, root_deal, seed): pimc's rollout in C; returns set_value."},
    {"write_observation", (PyCFunction)Core_write_observation, METH_VARARGS,
     "write_observation(player, out): observation.encode_state into a writable float32 buffer of 524."},
    {"write_afterstates", (PyCFunction)Core_write_afterstates, METH_VARARGS,
     "write_afterstates(player, ids, obs, banked): each legal move's afterstate encoding and banked points "
     "(agents.learned.afterstate.encode_afterstates in C)."},
    {"write_mask", (PyCFunction)Core_write_mask, METH_O,
     "Write the legal-move mask into a writable bool/uint8 buffer of NUM_MOVE_IDS; returns the count."},
    {NULL}};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mulle_env.engine._core.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The compiled game state: cstate.GameState adds the public API on top.",
    .tp_new = Core_new,
    .tp_init = (initproc)Core_init,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_traverse = (traverseproc)Core_traverse,
    .tp_clear = (inquiry)Core_clear,
    .tp_methods = Core_methods,
    .tp_getset = Core_getset,
};

/* ------------------------------------------------------------------ rollouts for search agents */

/* Python's random.Random (MT19937 seeded from an int, getrandbits, random, randrange), so a
 * rollout run here draws exactly what agents/pimc.py's Python loop draws from the same seed. */
typedef struct {
    uint32_t mt[624];
    int i;
} MT;

static void mt_init(MT *m, uint32_t s) {
    m->mt[0] = s;
    for (int i = 1; i < 624; i++) m->mt[i] = 1812433253u * (m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) + (uint32_t)i;
    m->i = 624;
}

static void mt_init_by_array(MT *m, const uint32_t *key, size_t len) {
    mt_init(m, 19650218u);
    size_t i = 1, j = 0, k = 624 > len ? 624 : len;
    for (; k; k--) {
        m->mt[i] = (m->mt[i] ^ ((m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) * 1664525u)) + key[j] + (uint32_t)j;
        i++;
        j++;
        if (i >= 624) {
            m->mt[0] = m->mt[623];
            i = 1;
        }
        if (j >= len) j = 0;
    }
    for (k = 623; k; k--) {
        m->mt[i] = (m->mt[i] ^ ((m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
        i++;
        if (i >= 624) {
            m->mt[0] = m->mt[623];
            i = 1;
        }
    }
    m->mt[0] = 0x80000000u;
}

static uint32_t mt_next(MT *m) {
    static const uint32_t mag01[2] = {0u, 0x9908b0dfu};
    uint32_t y;
    if (m->i >= 624) {
        int kk;
        for (kk = 0; kk < 624 - 397; kk++) {
            y = (m->mt[kk] & 0x80000000u) | (m->mt[kk + 1] & 0x7fffffffu);
            m->mt[kk] = m->mt[kk + 397] ^ (y >> 1) ^ mag01[y & 1u];
        }
        for (; kk < 623; kk++) {
            y = (m->mt[kk] & 0x80000000u) | (m->mt[kk + 1] & 0x7fffffffu);
            m->mt[kk] = m->mt[kk + (397 - 624)] ^ (y >> 1) ^ mag01[y & 1u];
        }
        y = (m->mt[623] & 0x80000000u) | (m->mt[0] & 0x7fffffffu);
        m->mt[623] = m->mt[396] ^ (y >> 1) ^ mag01[y & 1u];
        m->i = 0;
    }
    y = m->mt[m->i++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    return y;
}

/* random.Random(seed) for a non-negative seed below 2**64. */
static void mt_seed(MT *m, uint64_t seed) {
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    mt_init_by_array(m, key, key[1] ? 2 : 1);
}

static inline double mt_random(MT *m) {
    uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

static inline int mt_randbelow(MT *m, int n) {
    int k = 0;
    while ((1 << k) <= n) k++; /* n.bit_length() */
    uint32_t r;
    do r = mt_next(m) >> (32 - k); while ((int)r >= n);
    return (int)r;
}

#define END_CAPTURE 52

/* agents/evaluation.py quick_capture_gain: a cheap estimate of a capture's worth. */
static double quick_capture_gain(const G *g, int card) {
    int p = g->to_move, hv = HV[card];
    int has_b = has_build(g, hv);
    if (hv <= 13 && pile_index(&g->loose, card) >= 0 && !(has_b && g->bowner[hv] == p))
        return 2.0 * MV0[card] + 2 * IPTS[card] + 1.0;
    long gain = IPTS[card];
    int n = 0;
    if (has_b) {
        for (int i = 0; i < g->bc[hv].n; i++) {
            int f = g->bc[hv].c[i];
            gain += IPTS[f];
            if (f == card) gain += MV0[f];
        }
        n += g->bc[hv].n;
    }
    if (hv <= 13)
        for (int i = 0; i < g->loose.n; i++)
            if (TV[g->loose.c[i]] == hv) {
                gain += IPTS[g->loose.c[i]];
                n++;
            }
    return gain + 0.5 * n;
}

/* agents/evaluation.py fast_policy_id ("heuristic" rollouts). */
static int fast_policy(const G *g, const int *ids, int n, MT *rng) {
    int first_discard = NUM_IDS - NF;
    if (ids[0] < END_CAPTURE) {
        int best = ids[0];
        double best_gain = -1.0;
        for (int k = 0; k < n && ids[k] < END_CAPTURE; k++) {
            double gn = quick_capture_gain(g, ids[k]);
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
            int c = ids[k] - first_discard;
            double cost = 2 * IPTS[c] + 0.01 * TV[c];
            if (cost < best_cost) {
                best = ids[k];
                best_cost = cost;
            }
        }
        if (n > 1 && ids[0] < first_discard && mt_random(rng) < 0.25) return ids[mt_randbelow(rng, n)];
        return best;
    }
    return ids[mt_randbelow(rng, n)];
}

/* agents/evaluation.py set_value: the score difference for `player` so far. */
static int set_value(Core *self, int player, double *out) {
    G *g = &self->g;
    int o = 1 - player;
    long long v = 0;
    PyObject *sheets = self->sheets; /* held: a sheet's __getitem__ could replace the list */
    Py_INCREF(sheets);
    Py_ssize_t ns = PyList_GET_SIZE(sheets);
    for (Py_ssize_t k = 0; k < ns; k++) {
        PyObject *pair = PyList_GET_ITEM(sheets, k);
        for (int q = 0; q < 2; q++) {
            PyObject *sh = PySequence_GetItem(pair, q == 0 ? player : o);
            if (!sh) {
                Py_DECREF(sheets);
                return -1;
            }
            PyObject *x = PyObject_GetItem(sh, K_TOTAL);
            Py_DECREF(sh);
            long long t = x ? PyLong_AsLongLong(x) : -1;
            Py_XDECREF(x);
            if (t == -1 && PyErr_Occurred()) {
                Py_DECREF(sheets);
                return -1;
            }
            v += q == 0 ? t : -t;
        }
    }
    Py_DECREF(sheets);
    if (!g->over) {
        v += g->mpts[player] + g->tabbe[player] + g->ipts[player];
        v -= g->mpts[o] + g->tabbe[o] + g->ipts[o];
    }
    *out = (double)v;
    return 0;
}

/* rollout(player, policy, plies, stop, rng_seed): pimc's rollout loop on this state (mutated).
 * policy 0 = "heuristic" (fast_policy_id), 1 = "random"; stop 0 = plies only, 1 = end of the
 * deal, 2 = end of the set; the first ply (the candidate move) is already played, as in pimc.
 * Returns set_value(state, player). */
static PyObject *Core_rollout(Core *self, PyObject *args) {
    int player, policy, stop, root_set, root_deal;
    long long plies;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "iiLiiiK", &player, &policy, &plies, &stop, &root_set, &root_deal, &seed)) return NULL;
    if ((player != 0 && player != 1) || policy < 0 || policy > 1 || stop < 0 || stop > 2) {
        PyErr_SetString(PyExc_ValueError, "rollout: player 0/1, policy 0/1, stop 0..2");
        return NULL;
    }
    G *g = &self->g;
    MT rng;
    mt_seed(&rng, seed);
    int ids[MAX_IDS];
    long long n = 1;
    while (!g->over && n < plies) {
        if (stop == 1 && (g->deal_no != root_deal || g->set_no != root_set)) break;
        if (stop == 2 && g->set_no != root_set) break;
        int k = legal_ids(g, ids);
        if (k == 0) {
            PyErr_SetString(PyExc_ValueError, "rollout: no legal move");
            return NULL;
        }
        int id = policy == 0 ? fast_policy(g, ids, k, &rng) : ids[mt_randbelow(&rng, k)];
        Py_CLEAR(self->legal);
        if (apply_id(self, id, NULL, -1) < 0) return NULL;
        Py_CLEAR(self->last_move_obj);
        n++;
    }
    double v;
    if (set_value(self, player, &v) < 0) return NULL;
    return PyFloat_FromDouble(v);
}

/* The same MT stream, for tests: n draws of (random(), randrange(m)). */
static PyObject *mod_mt_draws(PyObject *mod, PyObject *args) {
    unsigned long long seed;
    int n, m;
    if (!PyArg_ParseTuple(args, "Kii", &seed, &n, &m)) return NULL;
    if (m < 1 || m > (1 << 30)) {
        PyErr_SetString(PyExc_ValueError, "m must be 1..2**30");
        return NULL;
    }
    MT rng;
    mt_seed(&rng, seed);
    PyObject *l = PyList_New(0);
    if (!l) return NULL;
    for (int i = 0; i < n; i++) {
        double x = mt_random(&rng);
        int r = mt_randbelow(&rng, m);
        PyObject *t = Py_BuildValue("(di)", x, r);
        if (!t || PyList_Append(l, t) < 0) {
            Py_XDECREF(t);
            Py_DECREF(l);
            return NULL;
        }
        Py_DECREF(t);
    }
    return l;
}

/* ------------------------------------------------------------------ the batched stepper */

/* K games stepped in one call, for mulle_env.vector_env (its stepper contract is in that
 * module's docstring). The games are cstate.GameState objects, so `state(i)` hands out the
 * live game; the internal random opponent draws ids[splitmix64(x) % len(ids)] from a
 * SplitMix64 stream seeded with opp_seed (rng.py's generator), not from random.Random. */
typedef struct {
    PyObject_HEAD
    int k, internal;
    PyObject *ruleset, *games, *over_obj, *to_move_obj, *new_game;
    Py_buffer over_buf, to_move_buf;
    uint64_t *rng;
    int8_t *seat;
} Stepper;

static int read_index(Py_buffer *b, Py_ssize_t i, long long *out) {
    const char *f = b->format ? b->format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@') f++;
    const char *p = (const char *)b->buf + i * b->itemsize;
    switch (f[0]) {
    case '?': case 'B': *out = *(const uint8_t *)p; return 0;
    case 'b': *out = *(const int8_t *)p; return 0;
    case 'h': *out = *(const int16_t *)p; return 0;
    case 'H': *out = *(const uint16_t *)p; return 0;
    case 'i': *out = *(const int32_t *)p; return 0;
    case 'I': *out = *(const uint32_t *)p; return 0;
    case 'l': case 'q':
        if (b->itemsize == 8) *out = *(const int64_t *)p; else *out = *(const int32_t *)p;
        return 0;
    case 'L': case 'Q':
        if (b->itemsize == 8) *out = (long long)*(const uint64_t *)p; else *out = *(const uint32_t *)p;
        return 0;
    }
    PyErr_Format(PyExc_ValueError, "an integer array is needed, not format '%s'", b->format);
    return -1;
}

/* An integer vector as a C-contiguous buffer (numpy arrays) or any sequence (lists). */
typedef struct {
    Py_buffer b;
    PyObject *fast;
    Py_ssize_t n;
} IntVec;

static int intvec_open(PyObject *o, IntVec *v, const char *what) {
    v->fast = NULL;
    if (PyObject_CheckBuffer(o) && PyObject_GetBuffer(o, &v->b, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) == 0) {
        if (v->b.ndim != 1) {
            PyBuffer_Release(&v->b);
            PyErr_Format(PyExc_ValueError, "%s must be one-dimensional", what);
            return -1;
        }
        v->n = v->b.shape ? v->b.shape[0] : v->b.len / v->b.itemsize;
        return 0;
    }
    PyErr_Clear();
    v->fast = PySequence_Fast(o, what);
    if (!v->fast) return -1;
    v->n = PySequence_Fast_GET_SIZE(v->fast);
    return 0;
}

static int intvec_get(IntVec *v, Py_ssize_t i, long long *out) {
    if (v->fast) {
        *out = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(v->fast, i));
        return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
    }
    return read_index(&v->b, i, out);
}

static void intvec_close(IntVec *v) {
    if (v->fast)
        Py_DECREF(v->fast);
    else
        PyBuffer_Release(&v->b);
}

static inline Core *stepper_game(Stepper *s, Py_ssize_t i) { return (Core *)PyList_GET_ITEM(s->games, i); }

static void stepper_sync(Stepper *s, int i) {
    Core *c = stepper_game(s, i);
    ((uint8_t *)s->over_buf.buf)[i] = (uint8_t)c->g.over;
    ((int8_t *)s->to_move_buf.buf)[i] = (int8_t)c->g.to_move;
}

static int stepper_random_moves(Stepper *s, int i) {
    Core *c = stepper_game(s, i);
    int ids[MAX_IDS];
    while (!c->g.over && c->g.to_move != s->seat[i]) {
        int n = legal_ids(&c->g, ids);
        if (n == 0) {
            PyErr_Format(PyExc_ValueError, "game %d: no legal move for the opponent", i);
            return -1;
        }
        if (apply_id(c, ids[splitmix(&s->rng[i]) % (uint64_t)n], NULL, -1) < 0) return -1;
        Py_CLEAR(c->last_move_obj);
    }
    return 0;
}

static int own_buffer(PyObject *o, Py_buffer *b, int k, const char *what) {
    if (PyObject_GetBuffer(o, b, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (b->len < k || b->itemsize != 1) {
        PyBuffer_Release(b);
        PyErr_Format(PyExc_ValueError, "%s must be a writable 1-byte-per-item buffer of %d items", what, k);
        return -1;
    }
    return 0;
}

static int Stepper_init(Stepper *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"num_envs", "ruleset", "internal_random", "over", "to_move", NULL};
    int k, internal;
    PyObject *rs, *over = Py_None, *to_move = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iOp|OO", kwlist, &k, &rs, &internal, &over, &to_move)) return -1;
    if (k < 1 || k > 1 << 20) {
        PyErr_Format(PyExc_ValueError, "num_envs must be 1..%d, not %d", 1 << 20, k);
        return -1;
    }
    if (self->games) {
        PyErr_SetString(PyExc_RuntimeError, "a Stepper is initialized once");
        return -1;
    }
    PyObject *mod = PyImport_ImportModule("mulle_env.engine.cstate");
    if (!mod) return -1;
    self->new_game = PyObject_GetAttrString(mod, "new_game");
    Py_DECREF(mod);
    if (!self->new_game) return -1;
    self->k = k;
    self->internal = internal;
    Py_INCREF(rs);
    self->ruleset = rs;
    if (over == Py_None) over = PyByteArray_FromStringAndSize(NULL, k); else Py_INCREF(over);
    if (!over) return -1;
    self->over_obj = over;
    if (to_move == Py_None) to_move = PyByteArray_FromStringAndSize(NULL, k); else Py_INCREF(to_move);
    if (!to_move) return -1;
    self->to_move_obj = to_move;
    if (own_buffer(over, &self->over_buf, k, "over") < 0) {
        Py_CLEAR(self->over_obj);
        return -1;
    }
    if (own_buffer(to_move, &self->to_move_buf, k, "to_move") < 0) {
        Py_CLEAR(self->to_move_obj);
        return -1;
    }
    self->rng = calloc(k, sizeof(uint64_t));
    self->seat = calloc(k, 1);
    if (!self->rng || !self->seat) {
        PyErr_NoMemory();
        return -1;
    }
    self->games = PyList_New(k);
    if (!self->games) return -1;
    for (int i = 0; i < k; i++) {
        PyObject *g = PyObject_CallFunction(self->new_game, "iO", 0, rs);
        if (!g) return -1;
        if (!PyObject_TypeCheck(g, &CoreType)) {
            Py_DECREF(g);
            PyErr_SetString(PyExc_TypeError, "cstate.new_game did not return a core state");
            return -1;
        }
        PyList_SET_ITEM(self->games, i, g);
        ((Core *)g)->g.over = 1; /* not started */
        stepper_sync(self, i);
    }
    return 0;
}

static int Stepper_traverse(Stepper *self, visitproc visit, void *arg) {
    Py_VISIT(self->ruleset);
    Py_VISIT(self->games);
    Py_VISIT(self->over_obj);
    Py_VISIT(self->to_move_obj);
    Py_VISIT(self->new_game);
    return 0;
}

static int Stepper_clear(Stepper *self) {
    if (self->over_obj && self->over_buf.obj) PyBuffer_Release(&self->over_buf);
    if (self->to_move_obj && self->to_move_buf.obj) PyBuffer_Release(&self->to_move_buf);
    Py_CLEAR(self->ruleset);
    Py_CLEAR(self->games);
    Py_CLEAR(self->over_obj);
    Py_CLEAR(self->to_move_obj);
    Py_CLEAR(self->new_game);
    return 0;
}

static void Stepper_dealloc(Stepper *self) {
    PyObject_GC_UnTrack(self);
    Stepper_clear(self);
    free(self->rng);
    free(self->seat);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int stepper_index(Stepper *s, long long i) {
    if (!s->games) {
        PyErr_SetString(PyExc_RuntimeError, "Stepper not initialized");
        return -1;
    }
    if (i < 0 || i >= s->k) {
        PyErr_Format(PyExc_IndexError, "game index %lld outside 0..%d", i, s->k - 1);
        return -1;
    }
    return 0;
}

static PyObject *Stepper_start(Stepper *self, PyObject *args) {
    long long i;
    int seat;
    PyObject *game_seed;
    unsigned long long opp_seed;
    if (!PyArg_ParseTuple(args, "LOiK", &i, &game_seed, &seat, &opp_seed)) return NULL;
    if (stepper_index(self, i) < 0) return NULL;
    if (seat != 0 && seat != 1) {
        PyErr_Format(PyExc_ValueError, "seat must be 0 or 1, not %d", seat);
        return NULL;
    }
    PyObject *g = PyObject_CallFunction(self->new_game, "OO", game_seed, self->ruleset);
    if (!g) return NULL;
    PyList_SetItem(self->games, (Py_ssize_t)i, g); /* steals g */
    self->seat[i] = (int8_t)seat;
    self->rng[i] = opp_seed;
    if (self->internal && stepper_random_moves(self, (int)i) < 0) return NULL;
    stepper_sync(self, (int)i);
    Py_RETURN_NONE;
}

static PyObject *Stepper_step(Stepper *self, PyObject *args) {
    PyObject *acts, *active;
    if (!PyArg_ParseTuple(args, "OO", &acts, &active)) return NULL;
    if (stepper_index(self, 0) < 0) return NULL;
    IntVec a, m;
    if (intvec_open(acts, &a, "actions") < 0) return NULL;
    if (intvec_open(active, &m, "active") < 0) {
        intvec_close(&a);
        return NULL;
    }
    PyObject *ret = NULL;
    if (a.n < self->k || m.n < self->k) {
        PyErr_Format(PyExc_ValueError, "actions and active need %d entries", self->k);
        goto done;
    }
    for (int i = 0; i < self->k; i++) {
        long long on, id;
        if (intvec_get(&m, i, &on) < 0) goto done;
        if (!on) continue;
        if (intvec_get(&a, i, &id) < 0) goto done;
        Core *c = stepper_game(self, i);
        if (id < 0 || id >= NUM_IDS || c->g.over) {
            PyErr_Format(PyExc_ValueError, "game %d: action %lld cannot be played (ids 0..%d, game on)", i, id,
                         NUM_IDS - 1);
            goto done;
        }
        if (apply_id(c, (int)id, NULL, -1) < 0) goto done;
        Py_CLEAR(c->last_move_obj);
        if (self->internal && stepper_random_moves(self, i) < 0) goto done;
        stepper_sync(self, i);
    }
    Py_INCREF(Py_None);
    ret = Py_None;
done:
    intvec_close(&a);
    intvec_close(&m);
    return ret;
}

static PyObject *Stepper_play(Stepper *self, PyObject *args) {
    long long i, id;
    if (!PyArg_ParseTuple(args, "LL", &i, &id)) return NULL;
    if (stepper_index(self, i) < 0) return NULL;
    Core *c = stepper_game(self, (Py_ssize_t)i);
    if (id < 0 || id >= NUM_IDS || c->g.over) {
        PyErr_Format(PyExc_ValueError, "game %lld: action %lld cannot be played", i, id);
        return NULL;
    }
    if (apply_id(c, (int)id, NULL, -1) < 0) return NULL;
    Py_CLEAR(c->last_move_obj);
    stepper_sync(self, (int)i);
    Py_RETURN_NONE;
}

static PyObject *Stepper_write(Stepper *self, PyObject *args) {
    PyObject *idx, *seats, *obs, *mask;
    if (!PyArg_ParseTuple(args, "OOOO", &idx, &seats, &obs, &mask)) return NULL;
    if (stepper_index(self, 0) < 0) return NULL;
    IntVec iv, sv;
    if (intvec_open(idx, &iv, "idx") < 0) return NULL;
    if (intvec_open(seats, &sv, "seats") < 0) {
        intvec_close(&iv);
        return NULL;
    }
    PyObject *ret = NULL;
    Py_buffer ob, mb;
    int have_ob = 0, have_mb = 0;
    Py_ssize_t n = iv.n;
    if (sv.n != n) {
        PyErr_SetString(PyExc_ValueError, "idx and seats differ in length");
        goto done;
    }
    if (get_buffer(obs, &ob, n * OBS_SIZE * (Py_ssize_t)sizeof(float), "f", "obs") < 0) goto done;
    have_ob = 1;
    if (PyObject_GetBuffer(mask, &mb, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) goto done;
    have_mb = 1;
    if (mb.itemsize != 1 || mb.len < n * NUM_IDS) {
        PyErr_Format(PyExc_ValueError, "mask must be a writable int8/uint8/bool buffer of %zd x %d", n, NUM_IDS);
        goto done;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        long long i, seat;
        if (intvec_get(&iv, j, &i) < 0 || intvec_get(&sv, j, &seat) < 0) goto done;
        if (stepper_index(self, i) < 0) goto done;
        if (seat != 0 && seat != 1) {
            PyErr_Format(PyExc_ValueError, "seats[%zd] must be 0 or 1, not %lld", j, seat);
            goto done;
        }
        Core *c = stepper_game(self, (Py_ssize_t)i);
        PyObject *sheets = c->sheets;
        Py_INCREF(sheets);
        int rc = write_obs(&c->g, sheets, (int)seat, (float *)ob.buf + j * OBS_SIZE);
        Py_DECREF(sheets);
        if (rc < 0) goto done;
        uint8_t *row = (uint8_t *)mb.buf + j * NUM_IDS;
        if (c->g.to_move == seat && !c->g.over)
            write_mask(&c->g, row);
        else
            memset(row, 0, NUM_IDS);
    }
    Py_INCREF(Py_None);
    ret = Py_None;
done:
    if (have_ob) PyBuffer_Release(&ob);
    if (have_mb) PyBuffer_Release(&mb);
    intvec_close(&iv);
    intvec_close(&sv);
    return ret;
}

static PyObject *Stepper_scores(Stepper *self, PyObject *arg) {
    long long i = PyLong_AsLongLong(arg);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (stepper_index(self, i) < 0) return NULL;
    return PyObject_CallMethod((PyObject *)stepper_game(self, (Py_ssize_t)i), "scores", NULL);
}

static PyObject *Stepper_state(Stepper *self, PyObject *arg) {
    long long i = PyLong_AsLongLong(arg);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (stepper_index(self, i) < 0) return NULL;
    PyObject *g = (PyObject *)stepper_game(self, (Py_ssize_t)i);
    Py_INCREF(g);
    return g;
}

static PyObject *Stepper_get_over(Stepper *self, void *c) {
    if (!self->over_obj) Py_RETURN_NONE;
    Py_INCREF(self->over_obj);
    return self->over_obj;
}
static PyObject *Stepper_get_to_move(Stepper *self, void *c) {
    if (!self->to_move_obj) Py_RETURN_NONE;
    Py_INCREF(self->to_move_obj);
    return self->to_move_obj;
}
static PyObject *Stepper_get_num_envs(Stepper *self, void *c) { return PyLong_FromLong(self->k); }

static PyGetSetDef Stepper_getset[] = {
    {"over", (getter)Stepper_get_over, NULL, "Per game: over (the buffer given, or a bytearray).", NULL},
    {"to_move", (getter)Stepper_get_to_move, NULL, "Per game: the seat to move (int8).", NULL},
    {"num_envs", (getter)Stepper_get_num_envs, NULL, "K, the number of games.", NULL},
    {NULL}};

static PyMethodDef Stepper_methods[] = {
    {"start", (PyCFunction)Stepper_start, METH_VARARGS,
     "start(i, game_seed, seat, opp_seed): deal game i; the internal random opponent moves until the learner's turn."},
    {"step", (PyCFunction)Stepper_step, METH_VARARGS,
     "step(actions, active): play actions[i] for the learner in every active game, then the internal opponent."},
    {"play", (PyCFunction)Stepper_play, METH_VARARGS, "play(i, action): one legal action for the seat to move."},
    {"write", (PyCFunction)Stepper_write, METH_VARARGS,
     "write(idx, seats, obs, mask): row j = observation and legal mask of seat seats[j] in game idx[j]."},
    {"scores", (PyCFunction)Stepper_scores, METH_O, "scores(i): game i's two game totals by seat."},
    {"state", (PyCFunction)Stepper_state, METH_O, "state(i): game i itself (a cstate.GameState)."},
    {NULL}};

static PyTypeObject StepperType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mulle_env.engine._core.Stepper",
    .tp_basicsize = sizeof(Stepper),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Stepper(num_envs, ruleset, internal_random, over=None, to_move=None): K games stepped in C.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Stepper_init,
    .tp_dealloc = (destructor)Stepper_dealloc,
    .tp_traverse = (traverseproc)Stepper_traverse,
    .tp_clear = (inquiry)Stepper_clear,
    .tp_methods = Stepper_methods,
    .tp_getset = Stepper_getset,
};

/* ------------------------------------------------------------------ module */

static PyObject *mod_setup(PyObject *mod, PyObject *args) {
    PyObject *moves, *cards, *invalid, *build;
    if (!PyArg_ParseTuple(args, "O!O!OO", &PyTuple_Type, &moves, &PyTuple_Type, &cards, &invalid, &build)) return NULL;
    if (PyTuple_GET_SIZE(moves) != NUM_IDS || PyTuple_GET_SIZE(cards) != NF) {
        PyErr_Format(PyExc_ValueError, "setup: %d moves and %d cards expected", NUM_IDS, NF);
        return NULL;
    }
    Py_INCREF(moves);
    Py_XSETREF(MOVES, moves);
    Py_INCREF(cards);
    Py_XSETREF(CARDS, cards);
    Py_INCREF(invalid);
    Py_XSETREF(INVALID_POSITION, invalid);
    Py_INCREF(build);
    Py_XSETREF(BUILD_CLS, build);
    Py_RETURN_NONE;
}

static PyObject *mod_move_table(PyObject *mod, PyObject *unused) {
    /* (kind, card, on, on_build, to) per id, to test the C table against moves.py */
    PyObject *l = PyList_New(NUM_IDS);
    if (!l) return NULL;
    for (int i = 0; i < NUM_IDS; i++)
        PyList_SET_ITEM(l, i, Py_BuildValue("(iiiii)", M_KIND[i], M_CARD[i], M_ON[i], M_ONB[i], M_TO[i]));
    return l;
}

static PyObject *mod_derive_seed(PyObject *mod, PyObject *args) {
    unsigned long long seed, s;
    if (!PyArg_ParseTuple(args, "KK", &seed, &s)) return NULL;
    uint64_t st = s;
    return PyLong_FromUnsignedLongLong(derive_seed(seed, &st, 1));
}

static PyObject *mod_memo_size(PyObject *mod, PyObject *unused) { return PyLong_FromUnsignedLong(memo_used); }

static PyObject *mod_clear_memo(PyObject *mod, PyObject *unused) {
    memset(memo_key, 0, sizeof(uint64_t) * MEMO_SIZE);
    memo_used = 0;
    Py_RETURN_NONE;
}

static PyMethodDef mod_methods[] = {
    {"setup", mod_setup, METH_VARARGS,
     "setup(MOVES, CARDS, InvalidPositionError, Build): the Python objects the core returns."},
    {"move_table", mod_move_table, METH_NOARGS, "The core's move id table: (kind, card, on, on_build, to) per id."},
    {"derive_seed", mod_derive_seed, METH_VARARGS, "derive_seed(seed, stream): rng.derive_seed with one stream."},
    {"forced_groups", Core_capture_cards, METH_VARARGS,
     "forced_groups(loose, v, fixed, mulle_hand_values): capture.forced_groups in C."},
    {"mt_draws", mod_mt_draws, METH_VARARGS, "mt_draws(seed, n, m): n x (random(), randrange(m)) of random.Random(seed)."},
    {"clear_memo", mod_clear_memo, METH_NOARGS, "Empty the capture-search memo (for cold-memo timings)."},
    {"memo_size", mod_memo_size, METH_NOARGS, "Entries in the shared capture-search memo."},
    {NULL}};

static struct PyModuleDef coremodule = {PyModuleDef_HEAD_INIT, "_core",
                                        "The compiled rules core of mulle_env.engine (see cstate.py).", -1,
                                        mod_methods};

static void init_tables(void) {
    for (int f = 0; f < NF; f++) {
        int r = f % 13;
        TV[f] = r + 1;
    }
    int SP_2 = 13 + 1, RU_10 = 39 + 9;
    for (int f = 0; f < NF; f++) {
        int r = f % 13, s = f / 13;
        HV[f] = f == RU_10 ? 16 : f == SP_2 ? 15 : r == 0 ? 14 : r + 1;
        MV0[f] = r == 0 ? 14 : r + 1;
        MV1[f] = f == RU_10 ? 16 : f == SP_2 ? 15 : MV0[f];
        if (f == SP_2 || (s == 1 && r == 0) || f == RU_10)
            IPTS[f] = 2;
        else if (s == 1 && r != 0 && r != 1)
            IPTS[f] = 1;
        else if (r == 0)
            IPTS[f] = 1;
        else
            IPTS[f] = 0;
    }
    int n = 0;
#define ADD(kind, card, on, onb, to) \
    (M_KIND[n] = kind, M_CARD[n] = card, M_ON[n] = on, M_ONB[n] = onb, M_TO[n] = to, n++)
    for (int c = 0; c < NF; c++) CAPTURE_ID[c] = ADD(K_CAPTURE, c, -1, -1, -1);
    for (int c = 0; c < NF; c++) {
        int tv = TV[c];
        for (int f = 0; f < NF; f++) {
            LOOSE_ID[c][f] = -1;
            if (tv + TV[f] <= MAXB) LOOSE_ID[c][f] = ADD(K_BUILD, c, f, -1, tv + TV[f]);
        }
        for (int v = 0; v <= MAXB; v++) UP_ID[c][v] = DOWN_ID[c][v] = -1;
        for (int v = MINB; v <= MAXB; v++) {
            if (v + tv <= MAXB) UP_ID[c][v] = ADD(K_BUILD, c, -1, v, v + tv);
            if (v - tv >= MINB) DOWN_ID[c][v] = ADD(K_BUILD, c, -1, v, v - tv);
        }
    }
    for (int c = 0; c < NF; c++) TROTTA_ID[c] = ADD(K_TROTTA, c, -1, -1, -1);
    for (int c = 0; c < NF; c++) DISCARD_ID[c] = ADD(K_DISCARD, c, -1, -1, -1);
#undef ADD
    NUM_IDS = n;
    for (int v = 2; v <= MAXV; v++) {
        int parts[32];
        NPATS[v] = 0;
        gen_parts(v, v, v - 1, parts, 0);
    }
}

PyMODINIT_FUNC PyInit__core(void) {
    init_tables();
    memo_key = calloc(MEMO_SIZE, sizeof(uint64_t));
    memo_val = calloc(MEMO_SIZE, 1);
    if (!memo_key || !memo_val) {
        free(memo_key); /* one of the two may have succeeded */
        free(memo_val);
        memo_key = NULL;
        memo_val = NULL;
        return PyErr_NoMemory();
    }
    /* Touch the memo now: first-touch page faults scattered over a capture search cost more
     * than the search itself (about 20 ms on a loaded machine). */
    memset(memo_key, 0, sizeof(uint64_t) * MEMO_SIZE);
    memset(memo_val, 0, MEMO_SIZE);
    if (PyType_Ready(&CoreType) < 0 || PyType_Ready(&StepperType) < 0) return NULL;
    PyObject *m = PyModule_Create(&coremodule);
    if (!m) return NULL;
    K_MULLE = PyUnicode_InternFromString("mulle");
    K_TABBE = PyUnicode_InternFromString("tabbe");
    K_INTAKE = PyUnicode_InternFromString("intake");
    K_BONUS = PyUnicode_InternFromString("bonus");
    K_TOTAL = PyUnicode_InternFromString("total");
    S_ID = PyUnicode_InternFromString("id");
    S_CARD = PyUnicode_InternFromString("card");
    S_TAKING = PyUnicode_InternFromString("taking");
    for (int i = 0; i < NUM_IDS; i++)
        if (!(ID_OBJS[i] = PyLong_FromLong(i))) return NULL;
    Py_INCREF(&CoreType);
    if (PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0) return NULL;
    Py_INCREF(&StepperType);
    if (PyModule_AddObject(m, "Stepper", (PyObject *)&StepperType) < 0) return NULL;
    PyModule_AddIntConstant(m, "NUM_MOVE_IDS", NUM_IDS);
    PyModule_AddIntConstant(m, "MAX_CARDS", MAXP);
    return m;
}
