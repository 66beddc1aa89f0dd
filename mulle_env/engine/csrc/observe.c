/* The observation and the legal-move mask, written into caller buffers (observation.py's twin).
 *
 * The layout is observation_layout.py's: configure() gives the offset of every block, feature
 * and scalar this writer knows, by the names below, so an entry moved in Python moves here too,
 * and a name this writer does not know makes cstate.py refuse the build ("rebuild"). Divisions
 * are done in double and rounded once to float32, as numpy does in the reference.
 */
#include "engine.h"

const char *const FACE_BLOCK_NAMES[N_FACE_BLOCKS] = {"hand",      "loose",     "build_cards", "my_mulle",
                                                     "my_intake", "opp_mulle", "opp_intake",  "unseen"};
const char *const BUILD_FEATURE_NAMES[N_BUILD_FEATURES] = {"present", "mine", "opponents", "locked", "cards"};
const char *const SHEET_NAMES[N_SHEETS] = {"my_score", "opp_score", "my_set_score", "opp_set_score"};
const char *const SCALAR_NAMES[N_SCALARS] = {"opponent_hand_size",
                                             "deck_size",
                                             "set",
                                             "deal",
                                             "my_turn",
                                             "i_lead",
                                             "seat",
                                             "last_capturer_me",
                                             "last_capturer_opponent",
                                             "over",
                                             "lock_every_build",
                                             "discard_only_if_no_capture",
                                             "mulle_hand_values"};

/* A set's five sheet entries (mulle, tabbe, intake, bonus, total), added to out. */
static void add_sheet(int64_t mulle, int64_t tabbe, int64_t intake, int64_t *out) {
    int64_t bonus = bonus_of((int32_t)intake);
    out[0] += mulle;
    out[1] += tabbe;
    out[2] += intake;
    out[3] += bonus;
    out[4] += mulle + tabbe + bonus;
}

int write_obs(const G *g, int player, float *o) {
    if (!T.configured || (player != 0 && player != 1)) {
        rules_fail(PyExc_ValueError, "write_obs: the core is not configured, or the player is not 0 or 1");
        return -1;
    }
    int opp = 1 - player;
    memset(o, 0, (size_t)T.obs_size * sizeof(float));
    const Pile *piles[7] = {&g->hand[player], &g->loose,      NULL, &g->mulle[player], &g->intake[player],
                            &g->mulle[opp],    &g->intake[opp]};
    int seen[NF] = {0};
    for (int b = 0; b < 7; b++) {
        float *block = o + T.face_at[b];
        if (b == 2) { /* build_cards */
            for (int v = 0; v <= MAXV; v++)
                for (int i = 0; i < g->bc[v].n; i++) {
                    block[g->bc[v].c[i]] += 1.0f;
                    seen[g->bc[v].c[i]]++;
                }
            continue;
        }
        const Pile *p = piles[b];
        for (int i = 0; i < p->n; i++) {
            block[p->c[i]] += 1.0f;
            seen[p->c[i]]++;
        }
    }
    float *unseen = o + T.face_at[7];
    for (int f = 0; f < NF; f++) unseen[f] = (float)(2 - seen[f]); /* every face exists twice */
    for (int v = T.min_build; v <= T.max_build; v++) {
        if (!g->bc[v].n) continue;
        float *b = o + T.builds_at + (v - T.min_build) * T.build_stride;
        b[T.feature_at[0]] = 1.0f;
        if (g->bowner[v] == player)
            b[T.feature_at[1]] = 1.0f;
        else if (g->bowner[v] == opp)
            b[T.feature_at[2]] = 1.0f;
        if (g->blocked[v]) b[T.feature_at[3]] = 1.0f;
        b[T.feature_at[4]] = (float)(g->bc[v].n / T.build_cards_scale);
    }
    int64_t game[2][N_SHEET_KEYS] = {{0}}, cur[2][N_SHEET_KEYS] = {{0}};
    for (int i = 0; i < 2; i++) {
        int q = i == 0 ? player : opp;
        if (!g->over) add_sheet(g->mpts[q], g->tabbe[q], g->ipts[q], cur[i]);
        memcpy(game[i], cur[i], sizeof cur[i]);
        for (int k = 0; k < g->nsheets; k++) {
            const SetScore *s = &g->sheets[k][q];
            add_sheet(s->mulle, s->tabbe, s->intake, game[i]);
        }
    }
    const int64_t *rows[N_SHEETS] = {game[0], game[1], cur[0], cur[1]};
    for (int r = 0; r < N_SHEETS; r++)
        for (int j = 0; j < N_SHEET_KEYS; j++) o[T.sheet_at[r] + j] = (float)(rows[r][j] / T.score_scale);
    double x[N_SCALARS] = {
        g->hand[opp].n / T.hand_scale,
        g->deck.n / T.deck_scale,
        (double)g->set_no / g->sets,
        g->deal_no / T.deals_scale,
        g->to_move == player,
        leader(g->set_no, g->deal_no) == player,
        player,
        g->last_capturer == player,
        g->last_capturer == opp,
        g->over,
        g->lock_every,
        g->discard_only,
        g->mulle_hand,
    };
    for (int i = 0; i < N_SCALARS; i++) o[T.scalar_at[i]] = (float)x[i];
    return 0;
}

/* The legal mask (one byte per move id: 1 legal, 0 not) of the player to move; returns the count. */
int write_mask(const G *g, uint8_t *mask) {
    int ids[MAX_IDS];
    memset(mask, 0, T.num_ids);
    int n = legal_ids(g, ids);
    for (int i = 0; i < n; i++) mask[ids[i]] = 1;
    return n;
}
