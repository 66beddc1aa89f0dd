/* draw_deals: the seeds of the next deals, drawn from numpy Generators in C, exactly as numpy draws them.
 *
 * The vector env deals a finished game anew from that game's own numpy Generator: a deal seed and an
 * opponent seed, each `Generator.integers(bound)`, then (seat "random") the learner's seat,
 * `Generator.integers(2)` (mulle_env/envcore.py, EnvCore._draw, is the reference). Through Python that is
 * about 2 us a draw, serial, on the step that ends the games; here it is a few nanoseconds a draw on the
 * Generator's own bit generator (numpy's public C interface: the capsule "BitGenerator" holding a
 * bitgen_t), with numpy's own bounded-integer method, so every seed gives the same games as before.
 *
 * numpy's Generator.integers(high) for a scalar int64 draws on the closed range [0, high - 1]:
 *   - range above 2**32 - 1: Lemire's multiply-and-reject on next_uint64 (arXiv:1805.10941);
 *   - range 1..2**32 - 2: the same on next_uint32 (a bit generator's next_uint32 keeps its own spare half);
 *   - range 2**32 - 1: one next_uint32 as it is;
 * tests/test_draws.py checks this draw for draw against Generator.integers for every numpy bit generator.
 * Like Generator.integers, each Generator's draws hold its bit generator's lock. A failure part-way (a
 * non-Generator, out of memory) leaves the Generators before it advanced, as Python's loop of draws would. */
#include "native.h"

/* numpy/random/bitgen.h's struct: numpy's documented C interface to its bit generators. */
typedef struct {
    void *state;
    uint64_t (*next_uint64)(void *st);
    uint32_t (*next_uint32)(void *st);
    double (*next_double)(void *st);
    uint64_t (*next_raw)(void *st);
} bitgen_t;

/* Uniform on [0, rng] (rng below 2**64 - 1, above 2**32 - 1), numpy's 64-bit Lemire draw. */
static uint64_t lemire64(bitgen_t *g, uint64_t rng) {
    const uint64_t n = rng + 1;
    __uint128_t m = (__uint128_t)g->next_uint64(g->state) * n;
    uint64_t low = (uint64_t)m;
    if (low < n) {
        const uint64_t reject_below = (UINT64_MAX - rng) % n; /* 2**64 mod n: the values that would bias */
        while (low < reject_below) {
            m = (__uint128_t)g->next_uint64(g->state) * n;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/* Uniform on [0, rng] (1 <= rng < 2**32 - 1), numpy's 32-bit Lemire draw. */
static uint32_t lemire32(bitgen_t *g, uint32_t rng) {
    const uint32_t n = rng + 1;
    uint64_t m = (uint64_t)g->next_uint32(g->state) * n;
    uint32_t low = (uint32_t)m;
    if (low < n) {
        const uint32_t reject_below = (UINT32_MAX - rng) % n;
        while (low < reject_below) {
            m = (uint64_t)g->next_uint32(g->state) * n;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

/* Generator.integers(high) for 2 <= high <= 2**63 - 1, as numpy draws it. */
static uint64_t integers(bitgen_t *g, uint64_t high) {
    const uint64_t rng = high - 1;
    if (rng > UINT32_MAX) return lemire64(g, rng);
    if (rng == UINT32_MAX) return g->next_uint32(g->state); /* Lemire's n would wrap to 0: the raw word */
    return lemire32(g, (uint32_t)rng);
}

/* The bitgen_t and lock of numpy Generator `gen` (new references in *lock and *owner, the bit generator that
 * holds the bitgen_t: kept until the draws are done, since acquiring the lock may let other threads run), or
 * NULL and a TypeError. */
static bitgen_t *bit_generator_of(PyObject *gen, Py_ssize_t j, PyObject **lock, PyObject **owner) {
    bitgen_t *g = NULL;
    *lock = NULL;
    PyObject *bg = PyObject_GetAttrString(gen, "bit_generator");
    PyObject *cap = bg ? PyObject_GetAttrString(bg, "capsule") : NULL;
    if (cap && PyCapsule_IsValid(cap, "BitGenerator")) {
        g = PyCapsule_GetPointer(cap, "BitGenerator");
        *lock = PyObject_GetAttrString(bg, "lock");
    }
    if (!g || !*lock) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "draw_deals: generators[%zd] must be a numpy Generator, not %.80s", j,
                     Py_TYPE(gen)->tp_name);
        Py_CLEAR(*lock);
        Py_CLEAR(bg);
        g = NULL;
    }
    Py_XDECREF(cap); /* the pointer lives as long as the bit generator */
    *owner = bg;
    return g;
}

/* draw_deals(generators, bound, random_seat) -> (deal_seeds, opp_seeds, seats | None): for each Generator in
 * turn, integers(bound) twice and, with random_seat, integers(2): the draws EnvCore._draw makes. */
PyObject *mod_draw_deals(PyObject *mod, PyObject *args) {
    PyObject *gens_obj;
    unsigned long long bound;
    int random_seat;
    if (!PyArg_ParseTuple(args, "OKp", &gens_obj, &bound, &random_seat)) return NULL;
    if (bound < 2 || bound > (unsigned long long)INT64_MAX) {
        PyErr_Format(PyExc_ValueError, "draw_deals: bound must be from 2 to 2**63 - 1, not %llu", bound);
        return NULL;
    }
    PyObject *gens = PySequence_Fast(gens_obj, "draw_deals: generators must be a sequence of numpy Generators");
    if (!gens) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(gens);
    PyObject *deal = PyList_New(n), *opp = PyList_New(n), *seat = random_seat ? PyList_New(n) : Py_NewRef(Py_None);
    PyObject *ret = NULL;
    if (!deal || !opp || !seat) goto done;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *lock, *owner;
        bitgen_t *g = bit_generator_of(PySequence_Fast_GET_ITEM(gens, j), j, &lock, &owner);
        if (!g) goto done;
        /* numpy holds the lock while it draws (acquire() lets the GIL go while it waits). */
        PyObject *r = PyObject_CallMethod(lock, "acquire", NULL);
        if (!r) {
            Py_DECREF(lock);
            Py_DECREF(owner);
            goto done;
        }
        Py_DECREF(r);
        uint64_t d = integers(g, bound), o = integers(g, bound);
        long s = random_seat ? (long)integers(g, 2) : 0;
        r = PyObject_CallMethod(lock, "release", NULL);
        Py_DECREF(lock);
        Py_DECREF(owner);
        if (!r) goto done;
        Py_DECREF(r);
        PyObject *dv = PyLong_FromUnsignedLongLong(d), *ov = PyLong_FromUnsignedLongLong(o);
        PyObject *sv = random_seat ? PyLong_FromLong(s) : NULL;
        if (!dv || !ov || (random_seat && !sv) || native_failpoint()) {
            Py_XDECREF(dv);
            Py_XDECREF(ov);
            Py_XDECREF(sv);
            if (!PyErr_Occurred()) PyErr_NoMemory();
            goto done;
        }
        PyList_SET_ITEM(deal, j, dv);
        PyList_SET_ITEM(opp, j, ov);
        if (random_seat) PyList_SET_ITEM(seat, j, sv);
    }
    ret = PyTuple_Pack(3, deal, opp, seat);
done:
    Py_XDECREF(deal);
    Py_XDECREF(opp);
    Py_XDECREF(seat);
    Py_DECREF(gens);
    return ret;
}
