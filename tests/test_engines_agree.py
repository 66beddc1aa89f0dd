"""The compiled core and the Python reference agree, and the C boundary never crashes.

Random seeded games under random rulesets are played on both engines side by side,
comparing every legal list, every position (``to_dict``), the last move and what it
took, and every score. The forced-capture search is compared on random tables up to 22
cards. Hypothesis feeds both engines hand-written and random positions, valid and not:
they must raise the same error or reach the same state. The long-run memory test runs
with ``-m slow``; a short version runs by default.
"""

from __future__ import annotations

import gc
import os
import random
import subprocess
import sys
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import mulle_env as me
from mulle_env.engine import backends
from mulle_env.engine.capture import forced_groups
from mulle_env.engine.cards import CARD_NAMES, MULLE_VALUE, MULLE_VALUE_HAND, NUM_FACES
from mulle_env.engine.moves import MOVES
from mulle_env.engine.rng import derive_seed

HAVE_C = "c" in backends()
needs_c = pytest.mark.skipif(not HAVE_C, reason="the compiled core is not built")


def test_ci_builds_and_tests_the_compiled_core():
    """CI must really test C: with ``CI`` set, a missing extension is a failure, not a skip."""
    if os.environ.get("CI"):
        assert HAVE_C, f"CI is set but the C backend did not build: {me.engine.C_IMPORT_ERROR}"
        assert me.BACKEND == "c" or os.environ.get("MULLE_ENGINE", "").lower() == "python"


def test_backend_names_the_engine_in_use():
    assert me.BACKEND in ("c", "python")
    assert me.GameState is backends()[me.BACKEND].GameState
    assert me.new_game(3).__class__ is me.GameState


@pytest.mark.parametrize("value,expect", [("python", "python"), ("PYTHON", "python"),
                                          ("auto", "c" if HAVE_C else "python"),
                                          ("", "c" if HAVE_C else "python")])
def test_mulle_engine_variable_chooses_the_backend(value, expect):
    code = "import mulle_env as me; print(me.BACKEND, type(me.new_game(1)).__module__)"
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "MULLE_ENGINE": value},
                         capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == expect and out[1].endswith("cstate" if expect == "c" else ".state")


def test_mulle_engine_variable_rejects_unknown_values():
    run = subprocess.run([sys.executable, "-c", "import mulle_env"], env={**os.environ, "MULLE_ENGINE": "rust"},
                         capture_output=True, text=True)
    assert run.returncode != 0 and "MULLE_ENGINE must be 'c', 'python' or unset" in run.stderr


@needs_c
def test_move_table_is_the_python_one():
    from mulle_env.engine import _core

    kinds = {"capture": 0, "build": 1, "trotta": 2, "discard": 3}
    table = _core.move_table()
    assert len(table) == len(MOVES) == _core.NUM_MOVE_IDS
    for i, m in enumerate(MOVES):
        none = -1
        assert table[i] == (
            kinds[m.kind], int(m.card), none if m.on is None else int(m.on),
            none if m.on_build is None else m.on_build, none if m.to is None else m.to,
        )


@needs_c
@pytest.mark.parametrize("seed", [0, 1, 7, -1, 2**63, 2**64 + 5, -(2**70)])
def test_same_seed_same_deal(seed):
    from mulle_env.engine import _core

    for s in (1, 2, 3, 99):
        assert _core.derive_seed(seed & (2**64 - 1), s) == derive_seed(seed, s)
    py, c = backends()["python"].new_game(seed), backends()["c"].new_game(seed)
    assert py.to_dict() == c.to_dict() and py.key() == c.key()
    assert py == c and c == py and not (py != c)  # equality works both ways across the engines


@pytest.mark.parametrize("name", sorted(backends()))
def test_new_game_and_replay_check_their_input_alike_on_every_backend(name):
    mod = backends()[name]
    st = mod.new_game(5, {"sets": 1})  # a dict ruleset is read with Ruleset.from_dict
    assert type(st) is mod.GameState and st.ruleset == me.Ruleset(sets=1)
    moves = [st.legal_moves()[0]]
    again = mod.replay(5, [str(m) for m in moves], {"sets": 1})
    assert type(again) is mod.GameState and again.key() == me.replay(5, moves, me.Ruleset(sets=1)).key()
    for bad in (True, 1.0, "5"):
        with pytest.raises(ValueError, match="seed must be an int"):
            mod.new_game(bad)
        with pytest.raises(ValueError, match="seed must be an int"):
            mod.replay(bad, [])
    with pytest.raises(me.InvalidMoveError, match=r"write replay\(seed"):
        mod.replay(5, str(moves[0]))
    with pytest.raises(me.IllegalMoveError, match="move 2 of the replay"):
        mod.replay(5, [moves[0], moves[0]])


def random_ruleset(rng: random.Random) -> me.Ruleset:
    return me.Ruleset(
        sets=rng.choice([1, 1, 2]),
        forced_capture=rng.random() < 0.7,
        lock_every_build=rng.random() < 0.3,
        discard_only_if_no_capture=rng.random() < 0.7,
        mulle_hand_values=rng.random() < 0.3,
    )


def assert_same(a, b, where) -> None:
    assert a.to_dict() == b.to_dict(), where
    assert list(a.builds.items()) == list(b.builds.items()), where  # same dict order too
    assert a.last_move == b.last_move and a.last_taken == b.last_taken, where
    assert (a.mpts, a.ipts, a.tabbe) == (b.mpts, b.ipts, b.tabbe), where
    assert a.scores() == b.scores() and a.score(0) == b.score(0) and a.score(1) == b.score(1), where


def play_both(seed: int, rules: me.Ruleset, check_views: bool = False) -> int:
    py, c = backends()["python"].new_game(seed, rules), backends()["c"].new_game(seed, rules)
    rng = random.Random(seed)
    plies = 0
    while True:
        where = (seed, rules, plies)
        assert_same(py, c, where)
        moves = py.legal_moves()
        assert [str(m) for m in c.legal_moves()] == [str(m) for m in moves], where
        assert c.legal_move_ids() == py.legal_move_ids(), where
        if check_views:
            assert c.view(0) == py.view(0) and c.view(1) == py.view(1), where
        if py.over:
            assert c.over and py.result() == c.result(), where
            return plies
        m = moves[rng.randrange(len(moves))]
        if rng.random() < 0.5:
            py.play(m)
            c.play(m)
        else:
            py.play_unchecked(m)
            c.play_unchecked(m)
        plies += 1
        if plies % 37 == 0:  # copies and round trips stay on the same game
            if plies % 2:
                c = c.copy()
            else:  # both through the canonical form (which orders builds by value)
                last = py.last_move, py.last_taken
                py = backends()["python"].GameState.from_dict(py.to_dict())
                c = backends()["c"].GameState.from_dict(c.to_dict())
                py.last_move, py.last_taken = c.last_move, c.last_taken = last


@needs_c
@pytest.mark.parametrize("chunk", range(4))
def test_random_games_agree(chunk):
    rng = random.Random(chunk)
    for g in range(40):
        play_both(chunk * 10_000 + g, random_ruleset(rng), check_views=g % 10 == 0)


@needs_c
@pytest.mark.slow
def test_thousands_of_random_games_agree():
    rng = random.Random(2024)
    for g in range(2000):
        play_both(10**6 + g, random_ruleset(rng), check_views=g % 50 == 0)


@needs_c
def test_forced_capture_search_agrees_up_to_22_cards():
    from mulle_env.engine import _core

    rng = random.Random(5)
    deck = [f for f in range(NUM_FACES) for _ in range(2)]
    for i in range(3000):
        rng.shuffle(deck)
        n = rng.choice([2, 5, 8, 12, 16, 22]) if i % 3 else 22
        loose = sorted(deck[:n])
        fixed = sorted(deck[n : n + rng.randrange(4)])
        v = rng.randrange(2, 14)
        hand_values = rng.random() < 0.3
        want = forced_groups(loose, v, fixed, MULLE_VALUE_HAND if hand_values else MULLE_VALUE)
        assert _core.forced_groups(loose, v, fixed, hand_values) == want, (loose, v, fixed)


@needs_c
def test_forced_capture_search_on_crowded_low_tables():
    """Many small cards make the most groupings: the case the memo exists for."""
    from mulle_env.engine import _core

    rng = random.Random(9)
    low = [f for f in range(NUM_FACES) if f % 13 < 6 for _ in range(2)]
    for _ in range(40):
        loose = sorted(rng.sample(low, 22))
        for v in range(2, 14):
            assert _core.forced_groups(loose, v, [], False) == forced_groups(loose, v, [], MULLE_VALUE)


# ----------------------------------------------------------------- the C boundary under fuzzing

cards = hs.sampled_from(CARD_NAMES)
piles = hs.lists(cards, max_size=10)
junk = hs.one_of(hs.none(), hs.integers(-3, 200), hs.text(max_size=4), hs.booleans(), hs.lists(hs.integers(-2, 60)))
build_dicts = hs.fixed_dictionaries(
    {"build": hs.lists(cards, min_size=1, max_size=5), "value": hs.one_of(hs.integers(0, 18), junk)},
    optional={"owner": hs.one_of(hs.sampled_from([0, 1, None]), junk), "locked": hs.one_of(hs.booleans(), junk)},
)
positions = hs.fixed_dictionaries(
    {
        "to_move": hs.one_of(hs.sampled_from([0, 1]), junk),
        "hands": hs.one_of(hs.tuples(piles, piles).map(list), junk),
        "table": hs.one_of(hs.lists(hs.one_of(cards, build_dicts), max_size=12), junk),
    },
    optional={
        "deck": hs.one_of(hs.lists(cards, max_size=32), junk),
        "mulle": hs.tuples(piles, piles).map(list),
        "tabbe": hs.one_of(hs.tuples(hs.integers(0, 5), hs.integers(0, 5)).map(list), junk),
        "last_capturer": hs.one_of(hs.sampled_from([0, 1, None]), junk),
        "seed": hs.one_of(hs.integers(-(2**70), 2**70), junk),
        "ruleset": hs.one_of(
            hs.fixed_dictionaries({}, optional={"forced_capture": hs.booleans(), "sets": hs.integers(0, 3)}), junk
        ),
    },
)


def outcome(mod, data):
    try:
        st = mod.GameState.from_dict(data)
    except me.MulleError as exc:
        return ("error", type(exc).__name__, str(exc))
    out = [st.to_dict(), [str(m) for m in st.legal_moves()]]
    for m in st.legal_moves():
        nxt = st.copy().play(m)
        out.append((nxt.to_dict(), nxt.last_taken))
    return ("ok", out)


@needs_c
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions)
def test_fuzzed_positions_same_outcome_on_both_engines(data):
    a, b = outcome(backends()["python"], data), outcome(backends()["c"], data)
    assert a == b


@needs_c
@pytest.mark.slow
@settings(max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions)
def test_fuzzed_positions_long_run(data):
    assert outcome(backends()["python"], data) == outcome(backends()["c"], data)


@needs_c
@settings(max_examples=200, deadline=None)
@given(hs.integers(0, 2**32), hs.integers(0, 60), hs.data())
def test_fuzzed_mid_game_positions_replay_alike(seed, plies, data):
    """Real positions a few edits away from a game (hands swapped in, deck cut) on both engines."""
    py = backends()["python"].new_game(seed)
    rng = random.Random(seed)
    for _ in range(plies):
        if py.over:
            break
        ms = py.legal_moves()
        py.play(ms[rng.randrange(len(ms))])
    d = py.to_dict()
    if data.draw(hs.booleans()):
        d["hands"] = [d["hands"][1], d["hands"][0]]
    if data.draw(hs.booleans()) and d["deck"]:
        d["deck"] = d["deck"][: len(d["deck"]) // 16 * 16 - 16] if len(d["deck"]) >= 16 else []
        d.pop("deal", None)
    assert outcome(backends()["python"], d) == outcome(backends()["c"], d)


@needs_c
@settings(max_examples=300, deadline=None)
@given(hs.sampled_from(["hands", "loose", "deck", "mulle", "intake", "builds", "tabbe", "to_move", "set_no",
                        "deal_no", "last_capturer", "sheets", "over", "mpts", "ipts", "last_move", "last_taken",
                        "seed"]),
       hs.one_of(junk, hs.lists(hs.lists(hs.integers(-5, 60), max_size=140), max_size=3),
                 hs.dictionaries(hs.integers(-2, 20), hs.tuples(hs.lists(hs.integers(-1, 53), max_size=140),
                                                                 hs.integers(-1, 2), hs.booleans()), max_size=4)))
def test_setting_attributes_to_junk_never_crashes(name, value):
    """Direct attribute writes bypass validation; the core still refuses what it cannot hold."""
    st = backends()["c"].new_game(1)
    try:
        setattr(st, name, value)
    except (ValueError, TypeError, OverflowError, AttributeError):
        pass
    # Whatever was accepted, the core keeps working (or fails with a clear error).
    try:
        for _ in range(30):
            ids = st.legal_move_ids()
            if not ids:
                break
            st.play_unchecked(MOVES[ids[0]])
            st.to_dict()
    except (ValueError, TypeError, IndexError, KeyError):
        pass


@needs_c
def test_too_many_cards_are_refused_not_overrun():
    st = backends()["c"].new_game(1)
    with pytest.raises(ValueError, match="at most"):
        st.set_hand(0, [0] * 200)
    with pytest.raises(ValueError, match="faces"):
        st.set_hand(0, [52])
    st.set_hand(0, [1, 2, 3])
    assert st.hands[0] == [1, 2, 3]


# ----------------------------------------------------------------- memory stays flat


def churn(n_moves: int, seed: int = 0) -> int:
    """Random games through every public path that allocates: ids, moves, views, copies, dicts."""
    mod = backends()["c"]
    rng = random.Random(seed)
    done = 0
    g = 0
    while done < n_moves:
        st = mod.new_game(seed * 100_000 + g)
        g += 1
        while not st.over and done < n_moves:
            ids = st.legal_move_ids()
            st.play_unchecked(MOVES[ids[rng.randrange(len(ids))]])
            done += 1
            if done % 5 == 0:
                st.view(st.to_move)
                st.copy()
                _ = (st.hands, st.builds, st.last_move, st.last_taken, st.sheets)
            if done % 50 == 0:
                mod.GameState.from_dict(st.to_dict())
        done += st.random_playout(g, 200)
    return done


def flat_memory(total_moves: int, rounds: int = 5) -> list[int]:
    churn(total_moves // rounds)  # warm caches (move table, memo, interned objects)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        sizes = []
        for r in range(rounds):
            churn(total_moves // rounds, seed=r + 1)
            gc.collect()
            sizes.append(tracemalloc.get_traced_memory()[0] - base)
    finally:
        tracemalloc.stop()
    return sizes


def rss_kb() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


@needs_c
def test_memory_flat_short():
    sizes = flat_memory(20_000)
    assert max(sizes) < 256 * 1024, sizes


@needs_c
@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc for RSS")
def test_memory_flat_over_a_million_moves():
    before = rss_kb()
    sizes = flat_memory(1_000_000, rounds=10)
    assert max(sizes) < 256 * 1024, sizes
    assert rss_kb() - before < 20 * 1024  # KiB: no leak in C allocations either


# ----------------------------------------------------------------- env fast paths


@needs_c
@pytest.mark.parametrize("seed", range(3))
def test_observation_and_mask_writers_equal_the_python_encoders(seed):
    np = pytest.importorskip("numpy")
    from mulle_env.observation import OBS_SIZE, encode_state

    rng = random.Random(seed)
    obs = np.empty(OBS_SIZE, dtype=np.float32)
    mask = np.empty(me.NUM_MOVE_IDS, dtype=bool)
    for g in range(12):
        st = backends()["c"].new_game(seed * 100 + g, random_ruleset(rng))
        while True:
            for p in (0, 1):
                st.write_observation(p, obs)
                assert np.array_equal(obs, encode_state(st, p)), (seed, g, p)
            n = st.write_mask(mask)
            assert np.flatnonzero(mask).tolist() == st.legal_move_ids() and n == len(st.legal_move_ids())
            if st.over:
                break
            ids = st.legal_move_ids()
            st.play_id(ids[rng.randrange(len(ids))])


@needs_c
def test_writers_refuse_wrong_buffers():
    np = pytest.importorskip("numpy")
    st = backends()["c"].new_game(1)
    for bad in (np.empty(10, np.float32), np.empty(524, np.float64), bytearray(4 * 524), b"x" * 2096):
        with pytest.raises((ValueError, TypeError, BufferError)):
            st.write_observation(0, bad)
    with pytest.raises(ValueError):
        st.write_observation(2, np.empty(524, np.float32))
    with pytest.raises((ValueError, TypeError, BufferError)):
        st.write_mask(np.empty(100, bool))


@needs_c
def test_uninitialized_core_objects_raise_instead_of_crashing():
    from mulle_env.engine import _core

    raw = backends()["c"].GameState.__new__(backends()["c"].GameState)
    assert raw.ruleset is None and raw.sheets == [] and raw.legal_move_ids() == []
    with pytest.raises((RuntimeError, ValueError, TypeError, AttributeError)):
        raw.view(0)
    stepper = _core.Stepper.__new__(_core.Stepper)
    assert stepper.over is None
    with pytest.raises(RuntimeError):
        stepper.step([0], [True])
    with pytest.raises(RuntimeError):
        stepper.state(0)


@needs_c
@pytest.mark.parametrize("forced", [True, False])
def test_moves_made_by_hand_without_an_id_play_alike(forced):
    """A Move built field by field (its id left None) is played by its fields on both engines."""
    rules = me.Ruleset(forced_capture=forced)
    games = [backends()[name].new_game(4, rules) for name in ("python", "c")]
    rng = random.Random(1)
    while not games[0].over:
        m = rng.choice(games[0].legal_moves())
        hand_made = me.Move(m.kind, m.card, m.on, m.on_build, m.to, m.taking)
        for st in games:
            st.play(hand_made)
        assert games[0].to_dict() == games[1].to_dict()
    with pytest.raises(ValueError):
        backends()["c"].new_game(1).play_unchecked(me.Move("build", me.CARDS[0], on_build=5, to=9))


@needs_c
def test_absurd_states_set_directly_stay_memory_safe():
    """No game reaches these, but attribute writes can: 52 distinct cards in hand and on the
    table (thousands of legal builds), 15 loose aces; the core answers or raises, never overruns."""
    mod = backends()["c"]
    for hand, loose in ((list(range(52)), list(range(52))), ([0, 13, 26, 39], [0] * 15 + [13] * 15),
                        ([5] * 60, [5] * 60)):
        st = mod.GameState()
        try:
            st.hands = [hand, [1]]
            st.loose = loose
        except ValueError:
            continue  # more cards than a state holds: refused up front
        ids = st.legal_move_ids()
        assert len(ids) == len(set(ids)) <= me.NUM_MOVE_IDS
        for i in ids[:: max(1, len(ids) // 40)]:
            try:
                st.copy().play_id(i)
            except ValueError:
                pass
