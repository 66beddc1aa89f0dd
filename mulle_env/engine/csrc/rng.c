/* Random streams: the deal's SplitMix64 (rng.py) and Python's own random.Random.
 *
 * SplitMix64 with Fisher-Yates shuffles the deck of every set, exactly as rng.py does, so a
 * seed deals the same game on both backends. MT19937 is CPython's random.Random, seeded from
 * an int as CPython seeds it: the vector environment's in-stepper `random` opponent draws
 * `legal[randrange(len(legal))]` from random.Random(opp_seed), as the `random` agent does in
 * Mulle-v0, so the batched env plays the same games on both backends and as Mulle-v0. The
 * agents' compiled module draws its rollouts from the same stream through the capsule.
 */
#include "engine.h"

/* rng.derive_seed(seed, stream) for one stream number. */
uint64_t derive_seed1(uint64_t seed, uint64_t stream) {
    uint64_t x = seed, parts[2] = {1, stream};
    for (int i = 0; i < 2; i++) {
        x ^= parts[i] * 0xD1B54A32D192ED03ULL;
        x = splitmix(&x);
    }
    return x;
}

void shuffle(uint8_t *a, int n, uint64_t seed) {
    uint64_t x = seed;
    for (int i = n - 1; i > 0; i--) {
        uint64_t r = splitmix(&x);
        int j = (int)(r % (uint64_t)(i + 1));
        uint8_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* ----- MT19937 as CPython's Modules/_randommodule.c */

static void mt_init(MT *m, uint32_t s) {
    m->mt[0] = s;
    for (int i = 1; i < 624; i++) m->mt[i] = 1812433253u * (m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) + (uint32_t)i;
    m->i = 624;
}

/* init_by_array starts every seeding from init_genrand(19650218): that state is the same for every seed,
 * so it is made once (mt_prepare, at module set-up, before any thread) and copied: a third of a seeding,
 * which the vector env pays at every game's start. */
static MT mt_base;
static int mt_base_ready;

void mt_prepare(void) {
    mt_init(&mt_base, 19650218u);
    mt_base_ready = 1;
}

static void mt_init_by_array(MT *m, const uint32_t *key, size_t len) {
    if (mt_base_ready)
        *m = mt_base;
    else
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

/* random.Random(seed) for a seed 0 <= seed < 2**64 (CPython keys it by the seed's 32-bit words). */
void mt_seed(MT *m, uint64_t seed) {
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    mt_init_by_array(m, key, key[1] ? 2 : 1);
}

uint32_t mt_next(MT *m) {
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

/* random.random(): 53 bits from two draws. */
double mt_random(MT *m) {
    uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

/* random.randrange(n) for 1 <= n <= 2**30: _randbelow's getrandbits(n.bit_length()) until below n. */
int mt_randbelow(MT *m, int n) {
    int k = 0;
    while ((1 << k) <= n) k++;
    uint32_t r;
    do r = mt_next(m) >> (32 - k);
    while ((int)r >= n);
    return (int)r;
}
