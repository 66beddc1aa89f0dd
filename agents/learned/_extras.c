/* Compiled extra-input blocks for afterstate nets (agents/learned/extras.py).
 *
 * The numpy code in extras.py is the definition and the readable reference; this file
 * computes the same floats row by row, because a decision's ~7 afterstates made the
 * numpy version pay some fifty small array calls (about half of a `learned` decision
 * with capture-v3). tests/test_extras.py checks the two agree, and that the shipped net
 * picks the same moves with either.
 *
 * Generations 5 and 6 were measured on the numpy values, so this file stays as close to
 * them as it can: a sum numpy does by a matrix product is made as fused multiply-adds in
 * the order of the product's terms, and a row sum as numpy's pairwise summation. A BLAS
 * kernel's own order is not specified, but an afterstate's sums have few nonzero terms,
 * and on this project's machine the values are numpy's bit for bit on every afterstate
 * tried. The mulle sums, where they were not, are left to extras.py (compute leaves
 * them; exp_mulle finishes the one that depends on them).
 *
 * Everything about the encoding's layout and the cards comes from Python once
 * (configure), so nothing here repeats mulle_env's tables.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#define NF 52   /* faces */
#define NV 15   /* hand values 2..16 */
#define NT 13   /* table values 1..13 */
#define MAXU 104
#define MAXK 8
#define MAXH 8

static int configured = 0;
static int hand_value[NF], table_value[NF];
static float mulle[NF], mulle13[NF], intake[NF]; /* mulle value / 14, 0 above hand value 13; intake points / 10 */
static Py_ssize_t obs_size, off_hand, off_loose, off_unseen, off_builds, build_stride, build_cards, build_mine, off_opp;
static int hand_size;
static float p_none[(MAXU + 1) * (MAXK + 1) * (MAXH + 1)];

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *hv, *tv, *mv, *m13, *iv;
    Py_buffer none;
    if (!PyArg_ParseTuple(args, "OOOOOnnnnnnnnniy*", &hv, &tv, &mv, &m13, &iv, &obs_size, &off_hand, &off_loose,
                          &off_unseen, &off_builds, &build_stride, &build_cards, &build_mine, &off_opp, &hand_size,
                          &none))
        return NULL;
    if (none.len != (Py_ssize_t)sizeof(p_none) || hand_size > MAXH) {
        PyBuffer_Release(&none);
        PyErr_SetString(PyExc_ValueError, "configure: the P(none) table must be float32 [105, 9, 9], hand size <= 8");
        return NULL;
    }
    memcpy(p_none, none.buf, sizeof(p_none));
    PyBuffer_Release(&none);
    PyObject *lists[5] = {hv, tv, mv, m13, iv};
    for (int l = 0; l < 5; l++) {
        if (!PyList_Check(lists[l]) || PyList_GET_SIZE(lists[l]) != NF) {
            PyErr_SetString(PyExc_ValueError, "configure: five lists of 52 per-face values");
            return NULL;
        }
    }
    for (int f = 0; f < NF; f++) {
        hand_value[f] = (int)PyLong_AsLong(PyList_GET_ITEM(hv, f));
        table_value[f] = (int)PyLong_AsLong(PyList_GET_ITEM(tv, f));
        mulle[f] = (float)PyFloat_AsDouble(PyList_GET_ITEM(mv, f));
        mulle13[f] = (float)PyFloat_AsDouble(PyList_GET_ITEM(m13, f));
        intake[f] = (float)PyFloat_AsDouble(PyList_GET_ITEM(iv, f));
        if (hand_value[f] < 2 || hand_value[f] > 16 || table_value[f] < 1 || table_value[f] > NT) {
            PyErr_SetString(PyExc_ValueError, "configure: a face's hand value is 2..16, its table value 1..13");
            return NULL;
        }
    }
    if (PyErr_Occurred()) return NULL;
    configured = 1;
    Py_RETURN_NONE;
}

/* numpy's pairwise float32 sum of 8 <= n < 16 values (loops_utils.h): eight lanes, a tree, then the rest. */
static float pairwise(const float *a, Py_ssize_t stride, int n) {
    float r[8];
    for (int j = 0; j < 8; j++) r[j] = a[j * stride];
    float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (int i = 8; i < n; i++) res += a[i * stride];
    return res;
}

/* One row: obs (obs_size floats) -> o (capture-v1 182, v2 225 or v3 289 floats). */
static void row_extras(const float *x, float *o, int level) {
    const float *hand = x + off_hand, *loose = x + off_loose, *unseen = x + off_unseen;
    int by_value[NT + 1] = {0}, loose_total = 0;
    float take[NV], table;
    float unseen_v[NV] = {0}, held_v[NV] = {0};
    for (int f = 0; f < NF; f++) {
        o[f] = loose[f] * unseen[f];
        o[NF + f] = loose[f] * hand[f];
        int c = (int)(loose[f] + 0.5f);
        by_value[table_value[f]] += c;
        loose_total += c;
        unseen_v[hand_value[f] - 2] += unseen[f];
        held_v[hand_value[f] - 2] += hand[f];
    }
    (void)loose_total;
    /* extras.py's `take` is one product over [by_value, pairs, halves] with weights 0.1 and
     * 0.2: per column, the same value first, then the pairs a + b = v by a, then the half. */
    const float tenth = 1.0f / 10.0f, fifth = 2.0f / 10.0f;
    for (int v = 2; v <= 16; v++) {
        float acc = 0.0f;
        if (v <= NT) {
            acc = fmaf((float)by_value[v], tenth, acc);
            for (int a = 1; a < (v + 1) / 2; a++) {
                int b = v - a;
                acc = fmaf((float)(by_value[a] < by_value[b] ? by_value[a] : by_value[b]), fifth, acc);
            }
            if (v % 2 == 0) acc = fmaf((float)(by_value[v / 2] / 2), fifth, acc);
        }
        take[v - 2] = acc + x[off_builds + (v - 2) * build_stride + build_cards];
    }
    float loose_tenths = 0.0f;
    for (int t = 1; t <= NT; t++) loose_tenths = fmaf((float)by_value[t], tenth, loose_tenths);
    table = loose_tenths + pairwise(x + off_builds + build_cards, build_stride, NV);
    float *o_take = o + 2 * NF, *o_unseen = o_take + NV, *o_held = o_unseen + NV, *o_threat = o_held + NV,
          *o_clears = o_threat + NV;
    for (int i = 0; i < NV; i++) {
        o_take[i] = take[i];
        o_unseen[i] = unseen_v[i] / 8.0f;
        o_held[i] = held_v[i] / 8.0f;
        o_threat[i] = take[i] * o_unseen[i];
        o_clears[i] = (fabsf(take[i] - table) < 0.05f && table > 0.0f) ? 1.0f : 0.0f;
    }
    float *tail = o_clears + NV;
    tail[0] = tail[1] = 0.0f; /* mulle_exposed, mulle_mine: extras.py */
    tail[2] = table;
    if (level < 2) return;
    float *o_intake = tail + 3, *o_own = o_intake + NV, *o_mloose = o_own + NV;
    for (int i = 0; i < NV; i++) o_intake[i] = 0.0f;
    for (int t = 0; t < NT; t++) o_mloose[t] = 0.0f;
    for (int f = 0; f < NF; f++) {
        if (table_value[f] >= 2) o_intake[table_value[f] - 2] = fmaf(loose[f], intake[f], o_intake[table_value[f] - 2]);
        if (loose[f] > 1.5f) o_mloose[table_value[f] - 1] += mulle[f];
    }
    for (int i = 0; i < NV; i++) o_own[i] = take[i] * o_held[i];
    if (level < 3) return;
    /* capture-v3: the opponent's h cards are a uniform draw from the U unseen ones. */
    float *o_p = o_mloose + NT, *o_etake = o_p + NV, *o_eintake = o_etake + NV, *o_risk = o_eintake + NV,
          *o_tail = o_risk + NV;
    int total = 0, k[NV] = {0};
    for (int f = 0; f < NF; f++) {
        int u = (int)(unseen[f] + 0.5f);
        total += u;
        k[hand_value[f] - 2] += u;
    }
    int h = (int)lrintf(x[off_opp] * (float)hand_size);
    if (h < 0) h = 0;
    if (h > MAXH) h = MAXH;
    if (total > MAXU) total = MAXU;
    float eloose[NT - 1], tabbe = 0.0f;
    for (int i = 0; i < NV; i++) {
        int ki = k[i] > MAXK ? MAXK : k[i];
        float p = 1.0f - p_none[(total * (MAXK + 1) + ki) * (MAXH + 1) + h];
        o_p[i] = p;
        o_etake[i] = take[i] * p;
        o_eintake[i] = o_intake[i] * p;
        o_risk[i] = x[off_builds + i * build_stride + build_mine] * p;
        float c = o_clears[i] * p;
        if (i == 0 || c > tabbe) tabbe = c;
    }
    for (int t = 2; t <= NT; t++) eloose[t - 2] = o_mloose[t - 1] * o_p[t - 2];
    o_tail[0] = o_tail[1] = 0.0f; /* twin_exposed, exp_mulle: extras.py, then exp_mulle() */
    o_tail[2] = pairwise(eloose, 1, NT - 1);
    o_tail[3] = tabbe;
}

static PyObject *compute(PyObject *self, PyObject *args) {
    Py_buffer ob, out;
    int level;
    Py_ssize_t stride, offset;
    if (!configured) {
        PyErr_SetString(PyExc_RuntimeError, "agents.learned._extras: configure() first");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*w*inn", &ob, &out, &level, &stride, &offset)) return NULL;
    PyObject *result = NULL;
    static const Py_ssize_t sizes[4] = {0, 182, 225, 289};
    if (level < 1 || level > 3 || ob.len % (obs_size * 4) != 0 || offset < 0 || stride < offset + sizes[level]) {
        PyErr_SetString(PyExc_ValueError, "compute: float32 encodings of the configured size, a level 1..3, "
                                          "and rows of out at least offset + the block's size long");
        goto done;
    }
    Py_ssize_t n = ob.len / (obs_size * 4);
    if (out.len != n * stride * 4) {
        PyErr_SetString(PyExc_ValueError, "compute: out must have one row of `stride` floats per encoding");
        goto done;
    }
    for (Py_ssize_t r = 0; r < n; r++)
        row_extras((const float *)ob.buf + r * obs_size, (float *)out.buf + r * stride + offset, level);
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&ob);
    PyBuffer_Release(&out);
    return result;
}

/* exp_mulle = twin_exposed x h / max(U, 1), in double as numpy does it, once extras.py has put twin_exposed in. */
static PyObject *exp_mulle(PyObject *self, PyObject *args) {
    Py_buffer ob, out;
    Py_ssize_t stride, offset;
    if (!configured) {
        PyErr_SetString(PyExc_RuntimeError, "agents.learned._extras: configure() first");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*w*nn", &ob, &out, &stride, &offset)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = ob.len / (obs_size * 4), at = offset + 285;
    if (ob.len % (obs_size * 4) != 0 || offset < 0 || stride < offset + 289 || out.len != n * stride * 4) {
        PyErr_SetString(PyExc_ValueError, "exp_mulle: as compute at level 3");
        goto done;
    }
    for (Py_ssize_t r = 0; r < n; r++) {
        const float *x = (const float *)ob.buf + r * obs_size;
        float *o = (float *)out.buf + r * stride + at;
        int total = 0;
        for (int f = 0; f < NF; f++) total += (int)(x[off_unseen + f] + 0.5f);
        long h = lrintf(x[off_opp] * (float)hand_size);
        o[1] = (float)((double)o[0] * (double)h / (double)(total > 1 ? total : 1));
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&ob);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef methods[] = {
    {"exp_mulle", exp_mulle, METH_VARARGS, "exp_mulle(obs, out, stride, offset): capture-v3's exp_mulle from its twin_exposed."},
    {"configure", configure, METH_VARARGS, "Set the encoding's layout and the per-face tables (extras.py calls it)."},
    {"compute", compute, METH_VARARGS, "compute(obs, out, level, stride, offset): the block of level 1..3 of each C-contiguous float32 "
     "encoding, written at `offset` of each `stride`-float row of the C-contiguous float32 `out`."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_extras",
                                    "Compiled extra-input blocks (agents/learned/extras.py is the reference).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__extras(void) { return PyModule_Create(&module); }
