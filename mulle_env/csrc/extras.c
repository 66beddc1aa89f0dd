/* Compiled extra-input blocks (mulle_env/extras.py): optional observation blocks for afterstate nets.
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
#include <math.h>

#include "native.h"

#define NV 15   /* hand values 2..16 */
#define NT 13   /* table values 1..13 */
#define MAXU 104
#define MAXK 8
#define MAXH 8

static int configured = 0;
static int hand_value[NF], table_value[NF];
static float mulle[NF], mulle13[NF], intake[NF]; /* mulle value / 14, 0 above hand value 13; intake points / 10 */
static Py_ssize_t obs_size, off_hand, off_loose, off_unseen, off_builds, build_stride, build_cards, build_mine, build_opp, off_opp;
static int hand_size;
/* P(none of k cards among h drawn from U) by [U, k, h], every k up to 104 (extras.py's _MISS): capture-v3 looks
 * up a hand value's copies (k <= 8), capture-v4 the copies of several faces together. */
static float p_miss[(MAXU + 1) * (MAXU + 1) * (MAXH + 1)];
/* capture-v4: each face's intake points, its mulle value in points, and the mean intake of a card the encoding
 * does not show. */
static float face_ip[NF], mulle_pts[NF], card_intake;
/* The fields this file computes, and the block (level) each first appears in. Where each field
 * sits and how long each block is, extras.py says (its _FIELDS table, the one place the layout
 * is written), through configure_extras; each field's length is what it means (per face, per
 * hand value 2..16, per table value 1..13, or one number), which configure checks. */
enum {
    F_TWIN_THREAT, F_TWIN_MINE, F_TAKE, F_UNSEEN_VALUE, F_HELD_VALUE, F_THREAT, F_CLEARS, F_MULLE_EXPOSED,
    F_MULLE_MINE, F_TABLE_CARDS, F_INTAKE_TAKE, F_OWN_TAKE, F_MULLE_LOOSE, F_P_HOLDS, F_EXP_TAKE, F_EXP_INTAKE,
    F_BUILD_AT_RISK, F_TWIN_EXPOSED, F_EXP_MULLE, F_EXP_MULLE_LOOSE, F_P_TABBE, F_REPLY_BEST, F_REPLY_MULLE,
    F_REPLY_NONE, F_MY_BEST, F_MY_WORTH, N_FIELDS
};
static const struct {
    const char *name;
    int size, level;
} FIELDS[N_FIELDS] = {
    {"twin_threat", NF, 1},   {"twin_mine", NF, 1},      {"take", NV, 1},           {"unseen_value", NV, 1},
    {"held_value", NV, 1},    {"threat", NV, 1},         {"clears", NV, 1},         {"mulle_exposed", 1, 1},
    {"mulle_mine", 1, 1},     {"table_cards", 1, 1},     {"intake_take", NV, 2},    {"own_take", NV, 2},
    {"mulle_loose", NT, 2},   {"p_holds", NV, 3},        {"exp_take", NV, 3},       {"exp_intake", NV, 3},
    {"build_at_risk", NV, 3}, {"twin_exposed", 1, 3},    {"exp_mulle", 1, 3},       {"exp_mulle_loose", 1, 3},
    {"p_tabbe", 1, 3},        {"reply_best", 1, 4},      {"reply_mulle", 1, 4},     {"reply_none", 1, 4},
    {"my_best", 1, 4},        {"my_worth", NV, 4},
};
static Py_ssize_t at[N_FIELDS];      /* each field's offset in the block */
static Py_ssize_t block_size[5];     /* by level 1..4 */

static int read_faces(PyObject *list, int *ints, float *floats) {
    if (!PyList_Check(list) || PyList_GET_SIZE(list) != NF) {
        PyErr_SetString(PyExc_ValueError, "configure: five lists of 52 per-face values");
        return -1;
    }
    for (int f = 0; f < NF; f++) {
        PyObject *item = PyList_GET_ITEM(list, f);
        if (ints) {
            long v = PyLong_AsLong(item);
            if (v == -1 && PyErr_Occurred()) return -1;
            ints[f] = (int)v;
        } else {
            double v = PyFloat_AsDouble(item);
            if (v == -1.0 && PyErr_Occurred()) return -1;
            floats[f] = (float)v;
        }
    }
    return 0;
}

/* Everything is read into locals and checked before any of it is kept: a refused call leaves the module as it was. */
PyObject *mod_configure_extras(PyObject *self, PyObject *args) {
    PyObject *hv, *tv, *mv, *m13, *iv;
    Py_buffer miss;
    PyObject *fields;
    Py_ssize_t o_size, o_hand, o_loose, o_unseen, o_builds, b_stride, b_cards, b_mine, b_opp, o_opp, sizes[5] = {0};
    int h_size;
    if (!PyArg_ParseTuple(args, "OOOOOnnnnnnnnnniy*O!(nnnn)", &hv, &tv, &mv, &m13, &iv, &o_size, &o_hand, &o_loose,
                          &o_unseen, &o_builds, &b_stride, &b_cards, &b_mine, &b_opp, &o_opp, &h_size, &miss,
                          &PyDict_Type, &fields, &sizes[1], &sizes[2], &sizes[3], &sizes[4]))
        return NULL;
    Py_ssize_t offs[N_FIELDS];
    int hvals[NF], tvals[NF];
    float mvals[NF], m13vals[NF], ivals[NF];
    int ok = miss.len == (Py_ssize_t)sizeof(p_miss) && h_size >= 1 && h_size <= MAXH && sizes[1] > 0 &&
             sizes[1] <= sizes[2] && sizes[2] <= sizes[3] && sizes[3] <= sizes[4];
    if (!ok) PyErr_SetString(PyExc_ValueError, "configure: the P(none) table must be float32 [105, 105, 9], "
                                          "hand size 1..8, block sizes growing");
    /* Every field this file writes, by name: (offset, size) inside its block, its size the one it means. */
    for (int f = 0; ok && f < N_FIELDS; f++) {
        PyObject *entry = PyDict_GetItemString(fields, FIELDS[f].name);
        Py_ssize_t off = -1, size = -1;
        if (!entry || !PyArg_ParseTuple(entry, "nn", &off, &size)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "configure: extras.py's layout has no field %s as (offset, size) "
                         "(rebuild: pip install -e .)", FIELDS[f].name);
            ok = 0;
        } else if (size != FIELDS[f].size || off < 0 || off + size > sizes[FIELDS[f].level]) {
            PyErr_Format(PyExc_ValueError, "configure: field %s at %zd, %zd long, does not fit block %d of %zd floats "
                         "as this module computes it (%d long; rebuild: pip install -e .)", FIELDS[f].name, off, size,
                         FIELDS[f].level, sizes[FIELDS[f].level], FIELDS[f].size);
            ok = 0;
        } else {
            offs[f] = off;
        }
    }
    Py_ssize_t b_last = b_cards > b_mine ? b_cards : b_mine;
    if (b_opp > b_last) b_last = b_opp;
    Py_ssize_t last_build = o_builds + (NV - 1) * b_stride + b_last;
    if (ok && (o_size <= 0 || o_hand < 0 || o_loose < 0 || o_unseen < 0 || o_builds < 0 || b_stride <= 0 ||
               b_cards < 0 || b_mine < 0 || b_opp < 0 || o_opp < 0 || o_hand + NF > o_size || o_loose + NF > o_size ||
               o_unseen + NF > o_size || last_build >= o_size || o_opp >= o_size)) {
        PyErr_SetString(PyExc_ValueError, "configure: a block of the encoding's layout lies outside its size");
        ok = 0;
    }
    if (ok) ok = read_faces(hv, hvals, NULL) == 0 && read_faces(tv, tvals, NULL) == 0 &&
                 read_faces(mv, NULL, mvals) == 0 && read_faces(m13, NULL, m13vals) == 0 &&
                 read_faces(iv, NULL, ivals) == 0;
    for (int f = 0; ok && f < NF; f++) {
        if (hvals[f] < 2 || hvals[f] > 16 || tvals[f] < 1 || tvals[f] > NT) {
            PyErr_SetString(PyExc_ValueError, "configure: a face's hand value is 2..16, its table value 1..13");
            ok = 0;
        }
    }
    if (!ok) {
        PyBuffer_Release(&miss);
        return NULL;
    }
    memcpy(p_miss, miss.buf, sizeof(p_miss));
    PyBuffer_Release(&miss);
    double intake_sum = 0.0;
    for (int f = 0; f < NF; f++) {
        face_ip[f] = (float)lrintf(ivals[f] * 10.0f); /* intake points are whole: 0, 1 or 2 */
        mulle_pts[f] = (float)lrintf(mvals[f] * 14.0f);
        intake_sum += face_ip[f];
    }
    card_intake = (float)(intake_sum / NF);
    memcpy(hand_value, hvals, sizeof hvals);
    memcpy(table_value, tvals, sizeof tvals);
    memcpy(mulle, mvals, sizeof mvals);
    memcpy(mulle13, m13vals, sizeof m13vals);
    memcpy(intake, ivals, sizeof ivals);
    memcpy(at, offs, sizeof offs);
    memcpy(block_size, sizes, sizeof sizes);
    obs_size = o_size, off_hand = o_hand, off_loose = o_loose, off_unseen = o_unseen, off_builds = o_builds;
    build_stride = b_stride, build_cards = b_cards, build_mine = b_mine, build_opp = b_opp, off_opp = o_opp, hand_size = h_size;
    configured = 1;
    Py_RETURN_NONE;
}

/* A row is read only if it is an encoding: card counts 0..2 and, for capture-v3 (which looks its chances up by
 * them), an opponent hand of 0..8 cards. NaN fails both. */
static int valid_row(const float *x, int level) {
    for (int f = 0; f < NF; f++) {
        float a = x[off_hand + f], b = x[off_loose + f], c = x[off_unseen + f];
        if (!(a >= 0.0f && a <= 2.0f && b >= 0.0f && b <= 2.0f && c >= 0.0f && c <= 2.0f)) return 0;
    }
    if (level < 3) return 1;
    float h = x[off_opp] * (float)hand_size;
    return h >= 0.0f && h <= (float)MAXH;
}

/* What capture-v3's chances are drawn from: U, the unseen cards (hand and deck), and h, the opponent's hand. */
static void opponent_draw(const float *x, int *total, int *h) {
    int u = 0;
    for (int f = 0; f < NF; f++) u += (int)(x[off_unseen + f] + 0.5f);
    *total = u;
    *h = (int)lrintf(x[off_opp] * (float)hand_size);
}

/* numpy's pairwise float32 sum of 8 <= n < 16 values (loops_utils.h): eight lanes, a tree, then the rest. */
static float pairwise(const float *a, Py_ssize_t stride, int n) {
    float r[8];
    for (int j = 0; j < 8; j++) r[j] = a[j * stride];
    float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (int i = 8; i < n; i++) res += a[i * stride];
    return res;
}

static void row_replies(const float *x, float *o);

/* One row: obs (obs_size floats) -> o (the block of the level: its fields at `at`). */
static void row_extras(const float *x, float *o, int level) {
    const float *hand = x + off_hand, *loose = x + off_loose, *unseen = x + off_unseen;
    int by_value[NT + 1] = {0};
    float take[NV], table;
    float unseen_v[NV] = {0}, held_v[NV] = {0};
    float *o_threat_f = o + at[F_TWIN_THREAT], *o_mine_f = o + at[F_TWIN_MINE];
    for (int f = 0; f < NF; f++) {
        o_threat_f[f] = loose[f] * unseen[f];
        o_mine_f[f] = loose[f] * hand[f];
        int c = (int)(loose[f] + 0.5f);
        by_value[table_value[f]] += c;
        unseen_v[hand_value[f] - 2] += unseen[f];
        held_v[hand_value[f] - 2] += hand[f];
    }
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
    float *o_take = o + at[F_TAKE], *o_unseen = o + at[F_UNSEEN_VALUE], *o_held = o + at[F_HELD_VALUE],
          *o_threat = o + at[F_THREAT], *o_clears = o + at[F_CLEARS];
    for (int i = 0; i < NV; i++) {
        o_take[i] = take[i];
        o_unseen[i] = unseen_v[i] / 8.0f;
        o_held[i] = held_v[i] / 8.0f;
        o_threat[i] = take[i] * o_unseen[i];
        o_clears[i] = (fabsf(take[i] - table) < 0.05f && table > 0.0f) ? 1.0f : 0.0f;
    }
    o[at[F_MULLE_EXPOSED]] = o[at[F_MULLE_MINE]] = 0.0f; /* extras.py */
    o[at[F_TABLE_CARDS]] = table;
    if (level < 2) return;
    float *o_intake = o + at[F_INTAKE_TAKE], *o_own = o + at[F_OWN_TAKE], *o_mloose = o + at[F_MULLE_LOOSE];
    for (int i = 0; i < NV; i++) o_intake[i] = 0.0f;
    for (int t = 0; t < NT; t++) o_mloose[t] = 0.0f;
    for (int f = 0; f < NF; f++) {
        if (table_value[f] >= 2) o_intake[table_value[f] - 2] = fmaf(loose[f], intake[f], o_intake[table_value[f] - 2]);
        if (loose[f] > 1.5f) o_mloose[table_value[f] - 1] += mulle[f];
    }
    for (int i = 0; i < NV; i++) o_own[i] = take[i] * o_held[i];
    if (level < 3) return;
    /* capture-v3: the opponent's h cards are a uniform draw from the U unseen ones. */
    float *o_p = o + at[F_P_HOLDS], *o_etake = o + at[F_EXP_TAKE], *o_eintake = o + at[F_EXP_INTAKE],
          *o_risk = o + at[F_BUILD_AT_RISK];
    /* valid_row has kept U <= 104 and h <= 8, so only k is clamped (to the table's 8). */
    int total, h, k[NV] = {0};
    opponent_draw(x, &total, &h);
    for (int f = 0; f < NF; f++) k[hand_value[f] - 2] += (int)(unseen[f] + 0.5f);
    float eloose[NT - 1], tabbe = 0.0f;
    for (int i = 0; i < NV; i++) {
        int ki = k[i] > MAXK ? MAXK : k[i];
        float p = 1.0f - p_miss[(total * (MAXU + 1) + ki) * (MAXH + 1) + h];
        o_p[i] = p;
        o_etake[i] = take[i] * p;
        o_eintake[i] = o_intake[i] * p;
        o_risk[i] = x[off_builds + i * build_stride + build_mine] * p;
        float c = o_clears[i] * p;
        if (i == 0 || c > tabbe) tabbe = c;
    }
    for (int t = 2; t <= NT; t++) eloose[t - 2] = o_mloose[t - 1] * o_p[t - 2];
    o[at[F_TWIN_EXPOSED]] = o[at[F_EXP_MULLE]] = 0.0f; /* extras.py, then exp_mulle() */
    o[at[F_EXP_MULLE_LOOSE]] = pairwise(eloose, 1, NT - 1);
    o[at[F_P_TABBE]] = tabbe;
    if (level >= 4) row_replies(x, o);
}

/* E[max(floor, the best worth among the faces an h-card draw from the total unseen holds)]: extras.py's
 * _expected_best, the same float32 operations in the same order (a stable sort by worth, descending; the
 * products summed one after another, as numpy's cumsum does). */
static float expected_best(const float *worth, const int *copies, int total, int h, float floor) {
    float w[NF];
    int order[NF];
    for (int f = 0; f < NF; f++) {
        w[f] = worth[f] > floor ? worth[f] : floor;
        int k = f;
        while (k > 0 && w[order[k - 1]] < w[f]) { /* strictly less: equal worths keep their face order */
            order[k] = order[k - 1];
            k--;
        }
        order[k] = f;
    }
    float acc = 0.0f, before = 1.0f, miss = 1.0f;
    int held = 0;
    for (int i = 0; i < NF; i++) {
        held += copies[order[i]];
        miss = p_miss[(total * (MAXU + 1) + (held > MAXU ? MAXU : held)) * (MAXH + 1) + h];
        float step = i == 0 ? 1.0f - miss : before - miss;
        acc += w[order[i]] * step;
        before = miss;
    }
    return acc + floor * miss;
}

/* capture-v4's tail (extras.py's _replies) from the row's capture-v3 block in o. */
static void row_replies(const float *x, float *o) {
    const float *hand = x + off_hand, *loose = x + off_loose, *unseen = x + off_unseen;
    float take[NV], same[NV] = {0}, mulle_v[NV] = {0}, worth_v[NV];
    for (int f = 0; f < NF; f++)
        if (table_value[f] >= 2) same[table_value[f] - 2] += loose[f];
    for (int t = 2; t <= NT; t++) mulle_v[t - 2] = o[at[F_MULLE_LOOSE] + t - 1] * 14.0f;
    float floor = 0.0f;
    for (int i = 0; i < NV; i++) {
        take[i] = o[at[F_TAKE] + i] * 10.0f;
        float rest = take[i] - same[i];
        float w = (mulle_v[i] + o[at[F_INTAKE_TAKE] + i] * 10.0f) + card_intake * (rest > 0.0f ? rest : 0.0f);
        w = w + o[at[F_CLEARS] + i];
        worth_v[i] = take[i] > 0.0f ? w : 0.0f;
        /* Each build the opponent owns proves a card of its value in their hand (RULES.md 4.5). */
        if (x[off_builds + i * build_stride + build_opp] > 0.5f && worth_v[i] > floor) floor = worth_v[i];
    }
    int alone = fabsf(o[at[F_TABLE_CARDS]] * 10.0f - 1.0f) < 0.05f;
    float opp[NF], opp_mulle[NF], best_v[NV] = {0};
    int copies[NF], total, h, capturing = 0;
    opponent_draw(x, &total, &h);
    for (int f = 0; f < NF; f++) {
        int v = hand_value[f] - 2, takes = take[v] > 0.0f, twin = loose[f] > 0.5f;
        float tw = twin ? mulle_pts[f] : 0.0f;
        float forced = takes ? (worth_v[v] + face_ip[f]) + tw : 0.0f;
        float forced_mulle = takes ? mulle_v[v] + tw : 0.0f;
        float twin_worth = (mulle_pts[f] + 2.0f * face_ip[f]) + (float)alone;
        /* A twin lying loose is taken alone, unless the player owns the build of the card's value (4.1.1). */
        int mulle_move = twin && hand_value[f] <= NT;
        int opp_alone = mulle_move && !(x[off_builds + v * build_stride + build_opp] > 0.5f);
        int my_alone = mulle_move && !(x[off_builds + v * build_stride + build_mine] > 0.5f);
        int possible = unseen[f] > 0.5f;
        opp[f] = possible ? (opp_alone ? twin_worth : forced) : 0.0f;
        opp_mulle[f] = possible ? (opp_alone ? mulle_pts[f] : forced_mulle) : 0.0f;
        copies[f] = (int)lrintf(unseen[f]);
        if (possible && opp[f] > 0.0f) capturing += copies[f];
        float mine = hand[f] > 0.5f ? (my_alone ? twin_worth : forced) : 0.0f;
        if (mine > best_v[v]) best_v[v] = mine;
    }
    o[at[F_REPLY_BEST]] = expected_best(opp, copies, total, h, floor) / 14.0f;
    o[at[F_REPLY_MULLE]] = expected_best(opp_mulle, copies, total, h, 0.0f) / 14.0f;
    o[at[F_REPLY_NONE]] =
        floor > 0.0f ? 0.0f : p_miss[(total * (MAXU + 1) + (capturing > MAXU ? MAXU : capturing)) * (MAXH + 1) + h];
    float my_best = 0.0f;
    for (int i = 0; i < NV; i++) {
        o[at[F_MY_WORTH] + i] = best_v[i] / 14.0f;
        if (o[at[F_MY_WORTH] + i] > my_best) my_best = o[at[F_MY_WORTH] + i];
    }
    o[at[F_MY_BEST]] = my_best;
}

/* A C-contiguous float32 buffer (numpy float32 arrays; anything else is refused by its format). */
static int get_f32(PyObject *obj, Py_buffer *view, int writable, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0) {
        PyErr_Format(PyExc_ValueError, "%s must be a C-contiguous%s float32 array", what, writable ? " writable" : "");
        return -1;
    }
    if (view->itemsize != 4 || view->format == NULL || strcmp(view->format, "f") != 0) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_ValueError, "%s must be a float32 array", what);
        return -1;
    }
    return 0;
}

/* Rows of obs -> the block at `offset` of each `stride`-float row of out; or, with exp_only, capture-v3's
 * exp_mulle from its twin_exposed (which extras.py has put in). */
static PyObject *run(PyObject *args, int exp_only) {
    PyObject *obs_obj, *out_obj;
    Py_buffer ob, out;
    int level = 3;
    Py_ssize_t stride, offset;
    if (!configured) {
        PyErr_SetString(PyExc_RuntimeError, "mulle_env._native: configure_extras() first");
        return NULL;
    }
    if (exp_only ? !PyArg_ParseTuple(args, "OOnn", &obs_obj, &out_obj, &stride, &offset)
                 : !PyArg_ParseTuple(args, "OOinn", &obs_obj, &out_obj, &level, &stride, &offset))
        return NULL;
    if (level < 1 || level > 4) {
        PyErr_SetString(PyExc_ValueError, "level must be 1..4 (capture-v1..v4)");
        return NULL;
    }
    if (get_f32(obs_obj, &ob, 0, "obs") < 0) return NULL;
    if (get_f32(out_obj, &out, 1, "out") < 0) {
        PyBuffer_Release(&ob);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t n = ob.len / (obs_size * 4), bad = -1;
    if (ob.len % (obs_size * 4) != 0 || offset < 0 || stride < offset + block_size[level]) {
        PyErr_SetString(PyExc_ValueError, "float32 encodings of the configured size, and rows of out at least "
                                          "offset + the block's size long");
        goto done;
    }
    if (out.len != n * stride * 4) {
        PyErr_SetString(PyExc_ValueError, "out must have one row of `stride` floats per encoding");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < n; r++) {
        const float *x = (const float *)ob.buf + r * obs_size;
        float *o = (float *)out.buf + r * stride + offset;
        if (!valid_row(x, level)) {
            bad = r;
            break;
        }
        if (exp_only) {
            int total, h;
            opponent_draw(x, &total, &h);
            o[at[F_EXP_MULLE]] = (float)((double)o[at[F_TWIN_EXPOSED]] * (double)h / (double)(total > 1 ? total : 1));
        } else {
            row_extras(x, o, level);
        }
    }
    Py_END_ALLOW_THREADS
    if (bad >= 0) {
        PyErr_Format(PyExc_ValueError, "encoding %zd is not one: its hand, loose and unseen card counts must be 0..2%s "
                     "(NaN is neither)", bad, level >= 3 ? " and its opponent hand size 0..8 cards" : "");
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&ob);
    PyBuffer_Release(&out);
    return result;
}

PyObject *mod_write_extras(PyObject *self, PyObject *args) { return run(args, 0); }

PyObject *mod_extras_exp_mulle(PyObject *self, PyObject *args) { return run(args, 1); }
