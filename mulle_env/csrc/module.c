/* The module mulle_env._native (see native.h): the capsule import, the ABI check, the functions. */
#include "native.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

const MulleCoreAPI *CORE = NULL;

/* Play up to n uniformly random legal moves (or to the end) with a SplitMix64 stream, without leaving C:
 * the raw-speed benchmark and the long-run memory test. Returns the moves played. */
static PyObject *mod_random_playout(PyObject *mod, PyObject *args) {
    PyObject *state;
    unsigned long long seed;
    long long n;
    if (!PyArg_ParseTuple(args, "OKL", &state, &seed, &n)) return NULL;
    G *g = CORE->state(state);
    if (!g) return NULL;
    uint64_t x = seed;
    long long done = 0;
    int ids[MAX_IDS], rc = 0;
    while (done < n && !g->over) {
        int k = CORE->legal_ids(g, ids);
        if (k == 0) {
            PyErr_SetString(PyExc_ValueError, "no legal move (a position the rules never reach)");
            rc = -1;
            break;
        }
        if (CORE->apply_move(g, ids[splitmix(&x) % (uint64_t)k], NULL, -1) < 0) {
            rc = -1;
            break;
        }
        done++;
    }
    CORE->changed(state); /* the state's caches, once for all the moves */
    if (rc < 0) return NULL;
    return PyLong_FromLongLong(done);
}

/* One read-only 1-D buffer of `fmt` items (the codec's CSR arrays), or -1 and a ValueError naming `what`. */
static int read_vector(PyObject *obj, Py_buffer *view, const char *fmt, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return -1;
    const char *f = view->format ? view->format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@') f++;
    if (strcmp(f, fmt) != 0 || view->ndim != 1) {
        PyErr_Format(PyExc_ValueError, "%s must be a 1-D contiguous array of format '%s'", what, fmt);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* Whether a buffer taken with PyBUF_FORMAT holds int64 items. */
static int is_int64(const Py_buffer *b) {
    const char *f = b->format ? b->format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@') f++;
    return b->itemsize == 8 && (strcmp(f, "q") == 0 || strcmp(f, "l") == 0);
}

/* sample_csr(ids, offsets, u, out): out[i] = ids[offsets[i] + min(floor(u[i] * count_i), count_i - 1)], count_i =
 * offsets[i + 1] - offsets[i]: mulle_env.codec.sample_csr's uniform pick, in one pass (its numpy twin there does
 * the same arithmetic, so both give the same actions from the same draws). ids and offsets int32, u float64,
 * out int64, n = len(out) rows. */
static PyObject *mod_sample_csr(PyObject *mod, PyObject *args) {
    PyObject *ids_obj, *off_obj, *u_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OOOO", &ids_obj, &off_obj, &u_obj, &out_obj)) return NULL;
    Py_buffer ib, ob, ub, rb;
    if (read_vector(ids_obj, &ib, "i", "ids") < 0) return NULL;
    if (read_vector(off_obj, &ob, "i", "offsets") < 0) goto fail_ids;
    if (read_vector(u_obj, &ub, "d", "u") < 0) goto fail_off;
    if (PyObject_GetBuffer(out_obj, &rb, PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) goto fail_u;
    PyObject *ret = NULL;
    Py_ssize_t n = rb.len / 8, n_ids = ib.len / 4;
    const int32_t *ids = ib.buf, *off = ob.buf;
    const double *u = ub.buf;
    int64_t *out = rb.buf;
    if (!is_int64(&rb) || ob.len / 4 != n + 1 || ub.len / 8 != n) {
        PyErr_Format(PyExc_ValueError, "sample_csr: out (int64) needs n = %zd rows, offsets n + 1 and u n entries", n);
        goto done;
    }
    if (n >= 0 && (off[0] < 0 || off[n] > n_ids)) {
        PyErr_Format(PyExc_ValueError, "offsets run from %d to %d, outside ids' %zd entries", off[0], off[n], n_ids);
        goto done;
    }
    /* Every row is checked before any is read: the first and last offsets bound nothing in between (offsets
     * [0, 10**6, 3] would read ids[10**6]), and the caller's arrays are theirs to change between calls. */
    for (Py_ssize_t i = 0; i < n; i++) {
        if (off[i + 1] <= off[i]) {
            PyErr_Format(PyExc_ValueError, "row %zd has no legal action (offsets[%zd] = %d, offsets[%zd] = %d): nothing "
                         "to sample", i, i, off[i], i + 1, off[i + 1]);
            goto done;
        }
        if (off[i + 1] > n_ids) {
            PyErr_Format(PyExc_ValueError, "offsets[%zd] = %d lies outside ids' %zd entries", i + 1, off[i + 1], n_ids);
            goto done;
        }
        if (!(u[i] >= 0.0 && u[i] < 1.0)) { /* NaN included */
            PyErr_Format(PyExc_ValueError, "u[%zd] must be in [0, 1)", i);
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t count = (int64_t)off[i + 1] - off[i];
        int64_t d = (int64_t)(u[i] * (double)count);
        out[i] = ids[off[i] + (d < count ? d : count - 1)];
    }
    Py_INCREF(Py_None);
    ret = Py_None;
done:
    PyBuffer_Release(&rb);
    PyBuffer_Release(&ub);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&ib);
    return ret;
fail_u:
    PyBuffer_Release(&ub);
fail_off:
    PyBuffer_Release(&ob);
fail_ids:
    PyBuffer_Release(&ib);
    return NULL;
}

/* The nonzero bytes of the 8 bytes in w, as one bit at the bottom of each byte. */
static inline uint64_t nonzero_bytes(uint64_t w) {
    w |= w >> 4;
    w |= w >> 2;
    w |= w >> 1;
    return w & 0x0101010101010101ULL;
}

/* sample_mask(masks, u, out): out[i] = the index of row i's set entry number min(floor(u[i] * count_i), count_i - 1)
 * (count_i: row i's nonzero bytes): mulle_env.codec.sample_masks' uniform pick from dense masks, in one pass that
 * tests 32 bytes at a time (about 8 of 2812 entries are set). Its numpy twin there does the same arithmetic.
 * masks: (n, width) of 1-byte items, C-contiguous; u float64 (n,); out int64 (n,). */
static PyObject *mod_sample_mask(PyObject *mod, PyObject *args) {
    PyObject *m_obj, *u_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OOO", &m_obj, &u_obj, &out_obj)) return NULL;
    Py_buffer mb, ub, rb;
    if (PyObject_GetBuffer(m_obj, &mb, PyBUF_ND | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    PyObject *ret = NULL;
    if (mb.ndim != 2 || mb.itemsize != 1) {
        PyErr_SetString(PyExc_ValueError, "masks must be a 2-D C-contiguous array of 1-byte items");
        PyBuffer_Release(&mb);
        return NULL;
    }
    if (read_vector(u_obj, &ub, "d", "u") < 0) {
        PyBuffer_Release(&mb);
        return NULL;
    }
    if (PyObject_GetBuffer(out_obj, &rb, PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&ub);
        PyBuffer_Release(&mb);
        return NULL;
    }
    Py_ssize_t n = mb.shape[0], width = mb.shape[1];
    if (!is_int64(&rb) || rb.len / 8 != n || ub.len / 8 != n) {
        PyErr_Format(PyExc_ValueError, "sample_mask: u (float64) and out (int64) need n = %zd entries", n);
        goto done;
    }
    const double *u = ub.buf;
    int64_t *out = rb.buf;
    Py_ssize_t words = width / 8;
    Py_ssize_t *hit = native_failpoint() ? NULL : PyMem_Malloc((size_t)(width ? width : 1) * sizeof(Py_ssize_t));
    if (!hit) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        const uint8_t *row = (const uint8_t *)mb.buf + i * width;
        Py_ssize_t count = 0, q = 0; /* one pass: the set entries' columns into hit[] */
#if defined(__SSE2__)
        const __m128i zero = _mm_setzero_si128();
        for (; q + 4 <= words; q += 4) { /* 32 bytes a test, a bit per byte that is set */
            __m128i a = _mm_loadu_si128((const __m128i *)(row + 8 * q));
            __m128i b = _mm_loadu_si128((const __m128i *)(row + 8 * q + 16));
            uint32_t zeros = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a, zero)) |
                             (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(b, zero)) << 16;
            for (uint32_t bits = ~zeros; bits; bits &= bits - 1) hit[count++] = 8 * q + __builtin_ctz(bits);
        }
#endif
        for (; q + 4 <= words; q += 4) { /* 32 bytes a test: most blocks are all zeros */
            uint64_t w[4];
            memcpy(w, row + 8 * q, 32); /* rows are 2812 bytes: not 8-aligned */
            if (!(w[0] | w[1] | w[2] | w[3])) continue;
            for (int r = 0; r < 4; r++)
                for (uint64_t bits = w[r] ? nonzero_bytes(w[r]) : 0; bits; bits &= bits - 1)
                    hit[count++] = 8 * (q + r) + (__builtin_ctzll(bits) >> 3);
        }
        for (Py_ssize_t c = 8 * q; c < width; c++)
            if (row[c]) hit[count++] = c;
        if (count == 0) {
            PyErr_Format(PyExc_ValueError, "row %zd has no legal action (its mask is all zeros): nothing to sample", i);
            PyMem_Free(hit);
            goto done;
        }
        if (!(u[i] >= 0.0 && u[i] < 1.0)) { /* NaN included */
            PyErr_Format(PyExc_ValueError, "u[%zd] must be in [0, 1)", i);
            PyMem_Free(hit);
            goto done;
        }
        int64_t d = (int64_t)(u[i] * (double)count);
        out[i] = hit[d < count ? d : count - 1];
    }
    PyMem_Free(hit);
    Py_INCREF(Py_None);
    ret = Py_None;
done:
    PyBuffer_Release(&rb);
    PyBuffer_Release(&ub);
    PyBuffer_Release(&mb);
    return ret;
}

static PyObject *mod_stop_workers(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    pool_stop_all();
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure_extras", mod_configure_extras, METH_VARARGS,
     "The encoding's layout, the blocks' field offsets and the per-face tables for the extra-input blocks "
     "(mulle_env/extras.py calls it)."},
    {"write_extras", mod_write_extras, METH_VARARGS,
     "write_extras(obs, out, level, stride, offset): the extra-input block of level 1..4 of each float32 encoding, "
     "written at `offset` of each `stride`-float row of `out`."},
    {"extras_exp_mulle", mod_extras_exp_mulle, METH_VARARGS,
     "extras_exp_mulle(obs, out, stride, offset): capture-v3's exp_mulle from its twin_exposed."},
    {"sample_csr", mod_sample_csr, METH_VARARGS,
     "sample_csr(ids, offsets, u, out): one uniform legal id per CSR row (mulle_env.codec.sample_csr's pick)."},
    {"sample_mask", mod_sample_mask, METH_VARARGS,
     "sample_mask(masks, u, out): one uniform set entry per row of 2-D 1-byte masks (mulle_env.codec.sample_masks' "
     "pick)."},
    {"draw_deals", mod_draw_deals, METH_VARARGS,
     "draw_deals(generators, bound, random_seat) -> (deal_seeds, opp_seeds, seats | None): per numpy Generator, "
     "integers(bound) twice and, with random_seat, integers(2), drawn as numpy draws them (EnvCore._draw's draws)."},
    {"write_afterstates", mod_write_afterstates, METH_VARARGS,
     "write_afterstates(state, player, ids, obs, banked): per legal move id, the position it leaves encoded from the "
     "mover's seat (hidden cards as placeholders) and the mover's score difference after it (mulle_env.afterstates)."},
    {"random_playout", mod_random_playout, METH_VARARGS,
     "random_playout(state, seed, n): play up to n uniformly random legal moves in C; returns how many."},
    {"_stop_workers", mod_stop_workers, METH_NOARGS,
     "Join every stepper's worker threads (registered with atexit); the steppers go on single-threaded."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native",
                                    "What the environments run in C (mulle_env/csrc/native.h; mulle_env/stepper.py "
                                    "and mulle_env/extras.py are the reference).",
                                    -1, methods};

PyMODINIT_FUNC PyInit__native(void) {
    const MulleCoreAPI *api = mulle_core_import("mulle_env._native");
    if (!api) return NULL;
    CORE = api;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyType_Ready(&StepperType) < 0 || PyModule_AddIntConstant(m, "ABI", MULLE_CORE_ABI) < 0) goto fail;
    Py_INCREF(&StepperType);
    if (PyModule_AddObject(m, "Stepper", (PyObject *)&StepperType) < 0) {
        Py_DECREF(&StepperType);
        goto fail;
    }
    /* Worker threads must not outlive the interpreter (pool.c): joined at exit, owners freed or not. */
    PyObject *stop = PyObject_GetAttrString(m, "_stop_workers");
    PyObject *atexit = stop ? PyImport_ImportModule("atexit") : NULL;
    PyObject *done = atexit ? PyObject_CallMethod(atexit, "register", "O", stop) : NULL;
    Py_XDECREF(stop);
    Py_XDECREF(atexit);
    if (!done) goto fail;
    Py_DECREF(done);
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
