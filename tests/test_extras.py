"""The extra inputs of afterstate nets (mulle_env/extras.py): their values, their policy files, their fit."""

from __future__ import annotations

import importlib.util
import itertools
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_afterstate import positions

import agents
import mulle_env
from agents.learned import MLPPolicy, PolicyFileError, load_policy, save_policy
from mulle_env import extras as extras_module
from mulle_env.engine import new_game
from mulle_env.engine.cards import CARD_NAMES, HAND_VALUE, INTAKE_POINTS, MULLE_VALUE, TABLE_VALUE
from mulle_env.extras import (
    EXTRA_SIZE,
    EXTRA_SIZES,
    EXTRAS,
    afterstate_extras,
    afterstate_extras_numpy,
    extends,
    extras_size,
    with_extras,
)
from mulle_env.observation import OBS_SIZE, OBS_SLICES, encode_state
from training import teacher
from training.bc import suit_swap_permutations

torch_tests = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
compiled_tests = pytest.mark.skipif(extras_module.BACKEND != "c",
                                    reason="the compiled blocks run on the compiled core (MULLE_ENGINE=c)")
TAKE = slice(104, 119)  # the ``take`` block: hand values 2..16


def test_take_counts_loose_cards_pairs_and_builds():
    st = new_game(seed=3)
    view = st.view(0)
    # Seed 3's first table holds table values 1, 2, 5, 5, 7, 10, 11, 13 (checked here, so the
    # expected counts below stay tied to it).
    assert sorted(TABLE_VALUE[f] for f in view.loose) == [1, 2, 5, 5, 7, 10, 11, 13]
    ex = afterstate_extras(encode_state(st, 0)[None])[0]
    # v=3: 1+2; v=7: the 7 and 2+5; v=10: the 10 and 5+5; v=12: 1+11, 2+10, 5+7 (disjoint pairs);
    # 14..16 (A, SP 2, RU 10 in hand) take only a build, and there is none.
    assert (ex[TAKE] * 10).round().tolist() == [1, 2, 0, 2, 2, 3, 2, 2, 3, 3, 6, 3, 0, 0, 0]
    assert ex[-1] == pytest.approx(0.8)  # eight cards on the table
    assert not ex[164:179].any()  # no capture clears all eight


def test_twin_blocks_and_value_counts_follow_the_card_bits():
    for st in positions(30, seed=7):
        p = st.to_move
        x = encode_state(st, p)
        ex = afterstate_extras(x[None])[0]
        view = st.view(p)
        loose = set(view.loose)
        unseen = x[364:416]
        threat = [f for f in range(52) if f in loose and unseen[f] > 0]
        mine = [f for f in range(52) if f in loose and f in set(view.hand)]
        assert np.flatnonzero(ex[:52]).tolist() == threat, [CARD_NAMES[f] for f in threat]
        assert np.flatnonzero(ex[52:104]).tolist() == mine
        assert ex[179] == pytest.approx(sum(MULLE_VALUE[f] for f in threat) / 14, rel=1e-6)
        held = np.bincount([HAND_VALUE[f] - 2 for f in view.hand], minlength=15) / 8
        assert np.allclose(ex[134:149], held)
        assert np.allclose(ex[149:164], ex[TAKE] * ex[119:134])


def afterstate_rows(count: int, seed: int) -> np.ndarray:
    """The encoded afterstates of every legal move in ``count`` random positions."""
    from agents.learned.afterstate import encode_afterstates

    return np.concatenate([encode_afterstates(st.view(st.to_move), st.legal_moves())[0]
                           for st in positions(count, seed=seed)])


def reference_extras(row: np.ndarray, name: str = "capture-v1") -> list[float]:
    """Block ``name`` of one encoding, card by card: the readable definition the numpy code is checked against."""
    hand, loose, unseen = row[0:52], row[52:104], row[364:416]
    build = {v: round(row[416 + (v - 2) * 5 + 4] * 10) for v in range(2, 17)}
    count = {t: sum(int(loose[f]) for f in range(52) if TABLE_VALUE[f] == t) for t in range(1, 14)}
    threat = [float(loose[f] * unseen[f]) for f in range(52)]
    mine = [float(loose[f] * hand[f]) for f in range(52)]
    table = sum(count.values()) + sum(build.values())
    take, unseen_v, held_v = [], [], []
    for v in range(2, 17):
        n = build[v]
        if v <= 13:  # A, SP 2 and RU 10 in hand (14..16) take only a build
            n += count[v] + sum(2 * min(count[a], count[v - a]) for a in range(1, (v + 1) // 2))
            if v % 2 == 0:
                n += 2 * (count[v // 2] // 2)
        take.append(n)
        unseen_v.append(sum(unseen[f] for f in range(52) if HAND_VALUE[f] == v) / 8)
        held_v.append(sum(hand[f] for f in range(52) if HAND_VALUE[f] == v) / 8)
    v1 = [*threat, *mine, *(n / 10 for n in take), *unseen_v, *held_v,
          *(n / 10 * u for n, u in zip(take, unseen_v)), *(float(n == table and table > 0) for n in take),
          sum(t * MULLE_VALUE[f] for f, t in enumerate(threat)) / 14,
          sum(m * MULLE_VALUE[f] for f, m in enumerate(mine)) / 14, table / 10]
    if name == "capture-v1":
        return v1
    intake = [sum(INTAKE_POINTS[f] * loose[f] for f in range(52) if TABLE_VALUE[f] == v) / 10 for v in range(2, 17)]
    mulle_loose = [sum(MULLE_VALUE[f] for f in range(52) if TABLE_VALUE[f] == t and loose[f] == 2) / 14
                   for t in range(1, 14)]
    v2 = [*v1, *intake, *(n / 10 * h for n, h in zip(take, held_v)), *mulle_loose]
    if name == "capture-v2":
        return v2
    # capture-v3: the opponent's h cards are h draws from the U unseen ones.
    total, h = int(unseen.sum()), round(row[OBS_SLICES["scalars"].start] * 8)
    p = []
    for v in range(2, 17):
        k = sum(int(unseen[f]) for f in range(52) if HAND_VALUE[f] == v)
        p.append(1 - math.comb(total - k, h) / math.comb(total, h))
    mine = [row[416 + (v - 2) * 5 + 1] for v in range(2, 17)]
    twin = sum(t * MULLE_VALUE[f] for f, t in enumerate(threat) if HAND_VALUE[f] <= 13) / 14
    clears = v1[164:179]
    v3 = [*v2, *p, *(n / 10 * q for n, q in zip(take, p)), *(i * q for i, q in zip(intake, p)),
          *(m * q for m, q in zip(mine, p)), twin, twin * h / total,
          sum(mulle_loose[t - 1] * p[t - 2] for t in range(2, 14)), max(c * q for c, q in zip(clears, p))]
    if name == "capture-v3":
        return v3
    return [*v3, *reference_replies(row, take, count, intake, mulle_loose, clears, table)]


def reference_replies(row, take, count, intake, mulle_loose, clears, table) -> list[float]:
    """capture-v4's fields of one encoding: each card's capture's worth, and the best one by tail sums."""
    hand, loose, unseen = row[0:52], row[52:104], row[364:416]
    mean_intake = sum(INTAKE_POINTS) / 52

    def by_value(v):  # mulle points, intake points (loose cards exact, the rest at the mean), a tabbe
        if take[v - 2] == 0:
            return 0.0, 0.0
        mulle = mulle_loose[v - 1] * 14 if v <= 13 else 0.0
        same = count[v] if v <= 13 else 0
        return mulle + intake[v - 2] * 10 + mean_intake * max(take[v - 2] - same, 0) + clears[v - 2], mulle

    def card(f, owns):  # (worth, mulle points) of playing face f
        v = HAND_VALUE[f]
        if v <= 13 and loose[f] >= 1 and v not in owns:  # the twin alone (RULES.md 4.1.1)
            return MULLE_VALUE[f] + 2 * INTAKE_POINTS[f] + float(table == 1), float(MULLE_VALUE[f])
        if take[v - 2] == 0:  # nothing to take: no capture
            return 0.0, 0.0
        worth, mulle = by_value(v)
        twin = MULLE_VALUE[f] if loose[f] >= 1 else 0
        return worth + INTAKE_POINTS[f] + twin, mulle + twin

    opp_builds = {v for v in range(2, 17) if row[416 + (v - 2) * 5 + 2] > 0.5}
    my_builds = {v for v in range(2, 17) if row[416 + (v - 2) * 5 + 1] > 0.5}
    total, h = int(unseen.sum()), round(row[OBS_SLICES["scalars"].start] * 8)
    floor = max([by_value(v)[0] for v in opp_builds], default=0.0)

    def expected_max(worth, floor):
        # E[max(floor, X)] = floor + sum over levels above it of (step) x P(some card worth at least the level).
        levels = sorted({w for w in worth.values() if w > floor})
        e, below = floor, floor
        for level in levels:
            k = sum(int(unseen[f]) for f, w in worth.items() if w >= level)
            e += (level - below) * (1 - math.comb(total - k, h) / math.comb(total, h))
            below = level
        return e

    theirs = {f: card(f, opp_builds) for f in range(52) if unseen[f] > 0}
    best = expected_max({f: w for f, (w, _) in theirs.items()}, floor)
    mulle = expected_max({f: m for f, (_, m) in theirs.items()}, 0.0)
    k = sum(int(unseen[f]) for f, (w, _) in theirs.items() if w > 0)
    none = 0.0 if floor > 0 else math.comb(total - k, h) / math.comb(total, h)
    mine = [max([card(f, my_builds)[0] for f in range(52) if hand[f] > 0 and HAND_VALUE[f] == v], default=0.0) / 14
            for v in range(2, 17)]
    return [best / 14, mulle / 14, none, max(mine), *mine]


@pytest.mark.parametrize("afterstate_extras", [afterstate_extras, afterstate_extras_numpy], ids=["default", "numpy"])
def test_extras_equal_their_card_by_card_definition_on_afterstates(afterstate_extras):
    rows = afterstate_rows(40, seed=11)
    assert (rows[:, 416:491].reshape(-1, 15, 5)[:, :, 0] > 0).any()  # builds are among them
    got = afterstate_extras(rows)
    want = np.array([reference_extras(r) for r in rows], np.float32)
    assert np.allclose(got, want, atol=1e-5)
    # capture-v2 begins with capture-v1, so a v1 net grows into it.
    got2 = afterstate_extras(rows, name="capture-v2")
    assert got2.shape == (len(rows), EXTRA_SIZES["capture-v2"]) and np.array_equal(got2[:, :EXTRA_SIZE], got)
    want2 = np.array([reference_extras(r, "capture-v2") for r in rows], np.float32)
    assert np.allclose(got2, want2, atol=1e-5)
    assert (got2[:, EXTRA_SIZE : EXTRA_SIZE + 15] > 0).any()
    # Both copies of a face loose (none of the positions above has one): mulle_loose by table value.
    both = rows[:1].copy()
    both[0, 52:104] = 0
    both[0, 52 + 12] = 2  # KL K, both copies
    both[0, 52 + 13 + 4] = 2  # SP 5, both copies
    v2 = afterstate_extras(both, name="capture-v2")[0]
    assert np.allclose(v2, reference_extras(both[0], "capture-v2"), atol=1e-6)
    v3 = afterstate_extras(both, name="capture-v3")[0]
    assert np.allclose(v3, reference_extras(both[0], "capture-v3"), atol=1e-6)
    assert v3[287] > 0  # exp_mulle_loose: the loose pairs weighted by the chance of their value
    assert np.allclose(v2[212:], [13 / 14 if t == 13 else 5 / 14 if t == 5 else 0 for t in range(1, 14)])
    # capture-v3 begins with capture-v2, and its tail is the card-by-card probabilities.
    got3 = afterstate_extras(rows, name="capture-v3")
    assert got3.shape == (len(rows), EXTRA_SIZES["capture-v3"]) and np.array_equal(got3[:, :225], got2)
    want3 = np.array([reference_extras(r, "capture-v3") for r in rows], np.float32)
    assert np.allclose(got3, want3, atol=1e-5)
    assert (got3[:, 270:285] > 0).any() and (got3[:, 225:240] > 0).all(axis=1).any()
    # capture-v4 begins with capture-v3; its tail is each player's best next capture.
    got4 = afterstate_extras(rows, name="capture-v4")
    assert got4.shape == (len(rows), EXTRA_SIZES["capture-v4"]) and np.array_equal(got4[:, :289], got3)
    want4 = np.array([reference_extras(r, "capture-v4") for r in rows], np.float32)
    assert np.allclose(got4, want4, atol=1e-5)
    assert (got4[:, 289] > 0).any() and (got4[:, 290] > 0).any() and (got4[:, 292] > 0).any()
    assert ((got4[:, 291] > 0) & (got4[:, 291] < 1)).any()
    assert extends("capture-v4", "capture-v3") and not extends("capture-v3", "capture-v4")
    assert extends("capture-v3", "capture-v2") and extends("capture-v2", "capture-v1")
    assert extends("capture-v1", None) and extends("capture-v3", None)
    assert not extends("capture-v1", "capture-v2") and not extends(None, "capture-v1")
    # Some afterstate's capture clears the table, and the flag says so only then.
    assert got[:, 164:179].any()


def test_p_holds_is_the_hypergeometric_chance():
    # Ten unseen cards (both copies of five faces, two of them kings); the opponent holds three.
    row = np.zeros((1, OBS_SIZE), np.float32)
    faces = [12, 13 + 4, 26 + 7, 39 + 9, 39 + 12]  # KL K, SP 5, HJ 8, RU 10, RU K
    row[0, 364 + np.array(faces)] = 2
    row[0, OBS_SLICES["scalars"].start] = 3 / 8
    ex = afterstate_extras(row, name="capture-v3")[0]
    p = dict(zip(range(2, 17), ex[225:240]))
    assert p[13] == pytest.approx(1 - math.comb(6, 3) / math.comb(10, 3))  # 4 kings: 1 - 20/120
    assert p[5] == pytest.approx(1 - math.comb(8, 3) / math.comb(10, 3))  # 2 fives: 1 - 56/120
    assert p[16] == p[5] and p[10] == 0 and p[7] == 0  # RU 10 is hand value 16; no 10 or 7 unseen
    # Nothing loose, no build: nothing to take, so every expectation is zero.
    assert not ex[240:285].any() and not ex[285:].any()
    # A loose KL K with its twin unseen (nine unseen cards now): a mulle exposed, the opponent's card with
    # probability 3 / 9.
    row[0, 52 + 12], row[0, 364 + 12] = 1, 1
    ex = afterstate_extras(row, name="capture-v3")[0]
    assert ex[285] == pytest.approx(13 / 14) and ex[286] == pytest.approx(13 / 14 * 3 / 9)


def test_replies_on_a_table_of_one_king():
    # One loose KL K; unseen: its twin and both copies of SP 5, HJ 8, RU 10 and RU K (nine cards);
    # the opponent holds three. The twin takes the king alone, a mulle of 13 and a tabbe; RU K
    # takes it by value, a tabbe; the rest take nothing.
    row = np.zeros((1, OBS_SIZE), np.float32)
    row[0, 364 + np.array([13 + 4, 26 + 7, 39 + 9, 39 + 12])] = 2
    row[0, 52 + 12], row[0, 364 + 12] = 1, 1
    row[0, OBS_SLICES["scalars"].start] = 3 / 8
    ex = afterstate_extras(row, name="capture-v4")[0]
    none_twin = math.comb(8, 3) / math.comb(9, 3)  # P(not the KL K twin)
    none_both = math.comb(6, 3) / math.comb(9, 3)  # P(neither it nor an RU K)
    assert ex[289] == pytest.approx((14 * (1 - none_twin) + 1 * (none_twin - none_both)) / 14)
    assert ex[290] == pytest.approx(13 * (1 - none_twin) / 14)
    assert ex[291] == pytest.approx(none_both)
    assert ex[292] == 0 and not ex[293:].any()  # the mover holds nothing
    # The mover holds HJ K: it takes the king by value, a tabbe (1 point); its twin loose instead: a mulle.
    row[0, 26 + 12] = 1
    ex = afterstate_extras(row, name="capture-v4")[0]
    assert ex[292] == pytest.approx(1 / 14) and ex[293 + 11] == pytest.approx(1 / 14)
    row[0, 26 + 12], row[0, 12] = 0, 1  # KL K in hand instead
    ex = afterstate_extras(row, name="capture-v4")[0]
    assert ex[292] == pytest.approx(14 / 14)
    # A build of 8 the opponent owns (three cards) proves they hold an 8: at least that capture, never none.
    row[0, 12] = 0
    b8 = 416 + (8 - 2) * 5
    row[0, b8], row[0, b8 + 2], row[0, b8 + 4] = 1, 1, 0.3
    ex = afterstate_extras(row, name="capture-v4")[0]
    assert ex[291] == 0
    assert np.allclose(ex[289:], reference_extras(row[0], "capture-v4")[289:], atol=1e-6)
    floor = 3 * sum(INTAKE_POINTS) / 52  # the build's three cards at the mean intake
    # The king's twin is no longer the table's last card: a mulle of 13, no tabbe.
    assert ex[289] * 14 == pytest.approx(13 * (1 - none_twin) + floor * none_twin)


def test_the_miss_table_is_the_engine_probability():
    from mulle_env.engine.knowledge import miss_probability

    table = extras_module._MISS
    want = np.array([[[miss_probability(k, h, u) for h in range(9)] for k in range(105)] for u in range(105)])
    assert np.array_equal(table, want.astype(np.float32))


@compiled_tests
def test_compiled_extras_equal_the_numpy_reference():
    rows = afterstate_rows(120, seed=31)
    # The module sums in the order of numpy's products' terms; a BLAS kernel's own order is
    # not specified, so what is asked is agreement to a few float32 ulps (on this project's
    # machine it is bit for bit on every afterstate tried) and the same moves (below).
    for name in EXTRAS:
        want = afterstate_extras_numpy(rows, name=name)
        got = afterstate_extras(rows, name=name)
        assert np.allclose(got, want, rtol=0, atol=2e-6)
        full = with_extras(rows, name)  # written straight into the rows' tails
        assert np.array_equal(full[:, :OBS_SIZE], rows) and np.array_equal(full[:, OBS_SIZE:], got)
        # A strided `out` (the tail of a wider array) takes the same values.
        wide = np.zeros((len(rows), OBS_SIZE + EXTRA_SIZES[name]), np.float32)
        afterstate_extras(rows, wide[:, OBS_SIZE:], name)
        assert np.array_equal(wide[:, OBS_SIZE:], got)
    one = with_extras(rows[0], "capture-v3")
    want = afterstate_extras_numpy(rows[:1], name="capture-v3")
    assert one.shape == (OBS_SIZE + EXTRA_SIZES["capture-v3"],) and np.allclose(one[OBS_SIZE:], want[0], atol=2e-6)
    with pytest.raises(ValueError, match=r"level must be 1..4"):
        extras_module._C.write_extras(rows, np.zeros((len(rows), 320), np.float32), 5, 320, 0)
    with pytest.raises(ValueError, match="one row of `stride` floats"):
        extras_module._C.write_extras(rows, np.zeros((len(rows) + 1, 300), np.float32), 3, 300, 0)
    with pytest.raises(ValueError, match="obs must be a float32 array"):
        extras_module._C.write_extras(rows.astype(np.float64), np.zeros((2 * len(rows), 289), np.float32), 3, 289, 0)
    frozen = np.zeros((len(rows), 289), np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="out must be a C-contiguous writable float32 array"):
        extras_module._C.write_extras(rows, frozen, 3, 289, 0)
    assert afterstate_extras(rows[:0], name="capture-v3").shape == (0, 289)


@pytest.mark.parametrize("backend", ["c", "numpy"])
@pytest.mark.parametrize("bad", [np.nan, -1.0, 3.0, -1e9])
@pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")
def test_rows_that_are_not_encodings_are_refused(backend, bad):
    if backend == "c" and extras_module.BACKEND != "c":
        pytest.skip("the compiled blocks run on the compiled core (MULLE_ENGINE=c)")
    compute = afterstate_extras if backend == "c" else afterstate_extras_numpy
    x = np.zeros((3, OBS_SIZE), np.float32)
    x[2, 364:416] = bad  # unseen counts: capture-v3 would look its chances up by them
    with pytest.raises(ValueError, match="not (one|encodings)"):
        compute(x, name="capture-v3")
    if backend == "c":  # the compiled blocks refuse such a row in every block
        with pytest.raises(ValueError, match="encoding 2 is not one: its hand, loose and unseen card counts"):
            compute(x, name="capture-v1")
    y = np.zeros((1, OBS_SIZE), np.float32)
    y[0, OBS_SLICES["scalars"].start] = bad  # the opponent's hand size (a fraction of 8 cards)
    with pytest.raises(ValueError, match="not (one|encodings)"):
        compute(y, name="capture-v3")


@compiled_tests
@pytest.mark.parametrize("generation, block", [(None, "capture-v4"), ("gen6.npz", "capture-v3")])
def test_shipped_net_plays_the_same_moves_on_either_backend(monkeypatch, generation, block):
    from agents.learned import DEFAULT_POLICY_PATH
    from agents.learned.afterstate import afterstate_scores

    # The shipped net (generation 7), and generation 6 for the older block.
    path = Path(DEFAULT_POLICY_PATH).parent / "generations" / generation if generation else None
    bot = agents.make(f"learned:path={path}" if path else "learned")
    assert bot.policy.extras == block
    decisions = [st for st in positions(150, seed=41) if len(st.legal_moves()) > 1]
    compiled = [afterstate_scores(bot.policy, st.view(st.to_move), st.legal_moves()) for st in decisions]
    monkeypatch.setattr(extras_module, "_C", None)
    reference = [afterstate_scores(bot.policy, st.view(st.to_move), st.legal_moves()) for st in decisions]
    assert len(decisions) > 100
    assert all(np.argmax(a) == np.argmax(b) for a, b in zip(compiled, reference))
    assert max(np.abs(a - b).max() for a, b in zip(compiled, reference)) < 1e-4


def test_the_blocks_follow_the_engine_backend_switch():
    code = "import mulle_env.extras as e; print(e.BACKEND)"
    run = subprocess.run([sys.executable, "-c", code], env={**os.environ, "MULLE_ENGINE": "python"},
                         capture_output=True, text=True)
    assert run.stdout.strip() == "numpy"
    if mulle_env.BACKEND == "c":
        assert extras_module.BACKEND == "c"


def test_extras_are_suit_swap_equivariant():
    perm = suit_swap_permutations()[0]
    x = np.stack([encode_state(st, st.to_move) for st in positions(20, seed=8)])
    a, b = afterstate_extras(x), afterstate_extras(x[:, perm])
    # Face blocks follow the swap; everything by value is unchanged.
    face = perm[52:104] - 52
    assert np.array_equal(b[:, :52], a[:, face]) and np.array_equal(b[:, 52:104], a[:, 52:104][:, face])
    assert np.allclose(b[:, 104:], a[:, 104:], atol=1e-6)
    # capture-v4's best captures count intake points, which clubs and hearts share rank by rank.
    a4, b4 = afterstate_extras(x, name="capture-v4"), afterstate_extras(x[:, perm], name="capture-v4")
    assert np.allclose(b4[:, 104:], a4[:, 104:], atol=1e-6)


def test_bad_shapes_and_names_are_refused():
    with pytest.raises(ValueError, match=r"shape \(n, 524\)"):
        afterstate_extras(np.zeros((2, 10)))
    with pytest.raises(ValueError, match="unknown extra-input block 'v9'; known: capture-v1, capture-v2"):
        extras_size("v9")
    assert extras_size(None) == 0 and extras_size("capture-v1") == EXTRA_SIZE
    with pytest.raises(ValueError, match=r"out must be a float32 array of shape \(2, 182\), not float64"):
        afterstate_extras(np.zeros((2, OBS_SIZE)), out=np.zeros((2, EXTRA_SIZE)))
    x = np.ones(OBS_SIZE, np.float32)
    assert with_extras(x, "capture-v1").shape == (OBS_SIZE + EXTRA_SIZE,)
    assert with_extras(x, None).shape == (OBS_SIZE,) and with_extras(x, None).dtype == np.float32


def extras_net(seed=0, hidden=(16,)) -> MLPPolicy:
    rng = np.random.default_rng(seed)
    sizes = [OBS_SIZE + EXTRA_SIZE, *hidden, 1]
    ws = [rng.normal(0, 1 / np.sqrt(a), (a, b)).astype(np.float32) for a, b in itertools.pairwise(sizes)]
    bs = [rng.normal(0, 0.1, b).astype(np.float32) for b in sizes[1:]]
    return MLPPolicy(ws, bs, "relu", {"note": "test"}, head="afterstate", extras="capture-v1")


def test_policy_file_with_extras_round_trips_and_plays(tmp_path):
    net = extras_net()
    assert net.obs_size == OBS_SIZE
    path = save_policy(net, tmp_path / "x.npz")
    back = load_policy(path)
    assert back.extras == "capture-v1" and back.fingerprint() == net.fingerprint()
    x = np.random.default_rng(0).integers(0, 3, (6, OBS_SIZE)).astype(np.float32)
    # The net reads the encoding with the block appended, computed by the policy itself.
    full = np.concatenate([x, afterstate_extras(x)], axis=1)
    want = np.maximum(full @ net.weights[0] + net.biases[0], 0) @ net.weights[1] + net.biases[1]
    assert np.allclose(back.afterstate_values(x), want[:, 0], atol=1e-5)
    # A decision's few rows skip the zero inputs; a large batch takes the dense product: the same values.
    many = np.random.default_rng(1).integers(0, 3, (100, OBS_SIZE)).astype(np.float32)
    many[:, 100:300] = 0
    few = np.concatenate([back.afterstate_values(many[i : i + 10]) for i in range(0, 100, 10)])
    assert np.allclose(back.afterstate_values(many), few, atol=1e-5)
    # The same layers without the block name would be another net: another fingerprint, and refused.
    plain = MLPPolicy([net.weights[0][:OBS_SIZE], net.weights[1]], net.biases, "relu",
                      {"note": "test"}, head="afterstate")
    assert plain.fingerprint() != net.fingerprint()
    bot = agents.make(f"learned:path={path}")
    st = positions(1, seed=9)[0]
    assert bot.act(st.view(st.to_move), st.legal_moves(), random.Random(0)) in st.legal_moves()
    with np.load(path) as z:
        arrays = dict(z)
    np.savez(tmp_path / "unknown.npz", **dict(arrays, extras=np.array("capture-v9")))
    with pytest.raises(PolicyFileError, match="'capture-v9' are not supported; this code computes capture-v1, capt"):
        load_policy(tmp_path / "unknown.npz")
    np.savez(tmp_path / "missing.npz", **{k: v for k, v in arrays.items() if k != "extras"})
    with pytest.raises(PolicyFileError, match=r"reads observations of 706 floats, but this mulle_env encodes 524 \("):
        load_policy(tmp_path / "missing.npz")
    with pytest.raises(PolicyFileError, match="extra inputs are for afterstate nets, not logits nets"):
        MLPPolicy(net.weights, net.biases, head="logits", extras="capture-v1")


def test_netsearch_plays_a_net_with_extras(tmp_path):
    path = save_policy(extras_net(seed=2, hidden=(8,)), tmp_path / "x.npz")
    one = agents.make(f"netsearch:policy={path},depth=1")
    learned = agents.make(f"learned:path={path}")
    deep = agents.make(f"netsearch:policy={path},depth=3,samples=2,width=2")
    for st in positions(6, seed=12):
        view, legal = st.view(st.to_move), st.legal_moves()
        assert one.act(view, legal, random.Random(0)) == learned.act(view, legal, random.Random(0))
        assert deep.act(view, legal, random.Random(1)) in legal


@pytest.fixture(scope="module")
def after_data(tmp_path_factory):
    out = tmp_path_factory.mktemp("extras") / "data"
    teacher.generate(out, teacher="pimc:samples=3,horizon=2", games=2, shard_games=2, seed=5, afterstates=True,
                     progress=False)
    return out


@torch_tests
def test_fit_with_extras_starts_from_a_net_without_them(after_data, tmp_path):
    from test_afterstate import afterstate_net

    from training.afterfit import AfterstateConfig, _build, _load_numpy, fit_afterstate, to_policy

    start = afterstate_net(seed=4)
    cfg = AfterstateConfig(hidden=[16], epochs=1, batch_size=64, seed=1, extras="capture-v1")
    grown = _build(cfg)
    assert _load_numpy(grown, start, "capture-v1")
    # Zero weights on the new inputs: the grown net starts as the same function.
    x = np.stack([encode_state(st, st.to_move) for st in positions(10, seed=10)])
    assert np.allclose(to_policy(grown, "relu", extras="capture-v1").afterstate_values(x),
                       start.afterstate_values(x), atol=1e-5)
    init = save_policy(start, tmp_path / "start.npz")
    fit_afterstate(teacher.load(after_data), tmp_path / "fit.npz", cfg, init_from=str(init), progress=False)
    fitted = load_policy(tmp_path / "fit.npz")
    assert fitted.extras == "capture-v1" and fitted.metadata["initialised"]
    assert fitted.weights[0].shape == (OBS_SIZE + EXTRA_SIZE, 16)
    # ...and a capture-v1 net grows into capture-v2 the same way; not back, nor into a plain net.
    v2 = _build(AfterstateConfig(hidden=[16], extras="capture-v2"))
    assert _load_numpy(v2, fitted, "capture-v2")
    assert np.allclose(to_policy(v2, "relu", extras="capture-v2").afterstate_values(x), fitted.afterstate_values(x),
                       atol=1e-5)
    # ...and on into capture-v3.
    v2_policy = to_policy(v2, "relu", extras="capture-v2")
    v3 = _build(AfterstateConfig(hidden=[16], extras="capture-v3"))
    assert _load_numpy(v3, v2_policy, "capture-v3")
    assert np.allclose(to_policy(v3, "relu", extras="capture-v3").afterstate_values(x), fitted.afterstate_values(x),
                       atol=1e-5)
    # ...and on into capture-v4.
    v4 = _build(AfterstateConfig(hidden=[16], extras="capture-v4"))
    assert _load_numpy(v4, to_policy(v3, "relu", extras="capture-v3"), "capture-v4")
    assert np.allclose(to_policy(v4, "relu", extras="capture-v4").afterstate_values(x), fitted.afterstate_values(x),
                       atol=1e-5)
    assert not _load_numpy(_build(AfterstateConfig(hidden=[16])), fitted, None)
    assert not _load_numpy(grown, to_policy(v2, "relu", extras="capture-v2"), "capture-v1")
    # A start that does not fit is refused, not silently replaced by random weights.
    with pytest.raises(ValueError, match="--extras capture-v1 or a later block"):
        fit_afterstate(teacher.load(after_data), tmp_path / "plain.npz", AfterstateConfig(hidden=[16], epochs=1),
                       init_from=str(tmp_path / "fit.npz"), progress=False)
    with pytest.raises(ValueError, match="give the same shapes"):
        fit_afterstate(teacher.load(after_data), tmp_path / "wide.npz", AfterstateConfig(hidden=[32], epochs=1),
                       init_from=str(init), progress=False)
    with pytest.raises(ValueError, match="unknown extra-input block"):
        AfterstateConfig(extras="nope")


@torch_tests
def test_cli_fit_extras_only_for_afterstate_nets(after_data, tmp_path, capsys):
    from training.cli import expert_main as main

    pol = tmp_path / "p.npz"
    assert main(["fit", str(after_data), "--out", str(pol), "--hidden", "8", "--epochs", "1", "--batch-size", "64",
                 "--extras", "capture-v1", "--no-progress"]) == 0
    assert load_policy(pol).extras == "capture-v1"
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(after_data), "--out", str(pol), "--net", "logits", "--extras", "capture-v1"])
    assert exc.value.code == 2
    assert "--extras is for afterstate nets" in capsys.readouterr().err
