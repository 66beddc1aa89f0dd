"""The two engine backends: one switch chooses, both refuse the same inputs, the C boundary never crashes.

Whether the compiled core plays the reference's games is the golden playthroughs' job
(tests/test_playthroughs.py). Here: ``MULLE_ENGINE`` and ``BACKEND``; the same deals and
the same input checks on both backends; the compiled capture search against its
reference on crowded tables no game reaches; Hypothesis feeding both backends hand-written
and random positions, valid and not (they must raise the same error or reach the same
state); read-only attributes, junk through every way in (``from_dict``, ``set_hand``,
``from_view``, ``_load``), then play on, never a crash; memory that stays flat.
"""

from __future__ import annotations

import gc
import os
import random
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import mulle_env as me
from mulle_env.engine import backends
from mulle_env.engine.capture import forced_groups
from mulle_env.engine.cards import CARD_NAMES, MULLE_VALUE, MULLE_VALUE_HAND, NUM_FACES
from mulle_env.engine.moves import MOVES
from mulle_env.engine.rng import derive_seed
from mulle_env.stepper import random_playout

HAVE_C = "c" in backends()
needs_c = pytest.mark.skipif(not HAVE_C, reason="the compiled core is not built")
BACKENDS = sorted(backends())
#: Every public attribute of a state: read-only on both backends.
FIELDS = ("hands", "loose", "builds", "deck", "mulle", "intake", "tabbe", "mpts", "ipts", "to_move", "set_no",
          "deal_no", "last_capturer", "sheets", "over", "last_move", "last_taken", "seed", "ruleset")


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
@pytest.mark.parametrize("seed", [0, 1, 7, -1, 2**63, 2**64 - 1, 2**64 + 5, -(2**70)])
def test_same_seed_same_deal(seed):
    from mulle_env.engine import _core  # its test helpers: the compiled twins of rng.py

    for s in (1, 2, 3, 99):
        assert _core.derive_seed(seed & (2**64 - 1), s) == derive_seed(seed, s)
    if not 0 <= seed < 2**64:  # outside the one seed domain (docs/engine.md, "Seeds"): refused alike
        for name in ("python", "c"):
            with pytest.raises(ValueError, match=r"seed must be a whole number from 0 to 2\*\*64 - 1"):
                backends()[name].new_game(seed)
        return
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
        with pytest.raises(ValueError, match="seed must be a whole number from 0 to"):
            mod.new_game(bad)
        with pytest.raises(ValueError, match="seed must be a whole number from 0 to"):
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
        done += random_playout(st, g, 200)
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


@needs_c
def test_writers_refuse_wrong_buffers():
    st = backends()["c"].new_game(1)
    # 1000 floats: exactly one observation is written, so a longer buffer is refused too (issue 53, item 10).
    for bad in (np.empty(10, np.float32), np.empty(524, np.float64), bytearray(4 * 524), b"x" * 2096,
                np.empty(1000, np.float32)):
        with pytest.raises((ValueError, TypeError, BufferError)):
            st.write_observation(0, bad)
    with pytest.raises(ValueError):
        st.write_observation(2, np.empty(524, np.float32))
    for bad_mask in (np.empty(100, bool), np.empty(me.NUM_MOVE_IDS + 1, np.int8)):
        with pytest.raises((ValueError, TypeError, BufferError)):
            st.write_mask(bad_mask)


@needs_c
def test_uninitialized_core_objects_raise_instead_of_crashing():

    raw = backends()["c"].GameState.__new__(backends()["c"].GameState)
    assert raw.ruleset is None and raw.sheets == []
    for call in (raw.legal_move_ids, lambda: raw.view(0), lambda: raw.play_id(0), raw.copy):
        with pytest.raises((RuntimeError, ValueError, TypeError, AttributeError)):
            call()
    from mulle_env import _native

    stepper = _native.Stepper.__new__(_native.Stepper)
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




# ----------------------------------------------------------------- read-only attributes, checked ways in


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("field", FIELDS)
def test_every_public_attribute_is_read_only_and_fresh(backend, field):
    st = backends()[backend].new_game(3)
    with pytest.raises(AttributeError):
        setattr(st, field, getattr(st, field))
    value = getattr(st, field)
    if isinstance(value, (list, dict)):  # a fresh value: changing it changes nothing
        before = st.key()
        if isinstance(value, dict):
            value[99] = ((), None, False)
        else:
            value.append(0)
        assert st.key() == before and getattr(st, field) != value


@pytest.mark.parametrize("backend", BACKENDS)
def test_attributes_have_the_same_types_on_both_backends(backend):
    reference = backends()["python"].replay(5, [])
    st = backends()[backend].new_game(5)
    for _ in range(40):
        st.play(st.legal_moves()[0])
        reference.play(reference.legal_moves()[0])
    for field in FIELDS:
        a, b = getattr(st, field), getattr(reference, field)
        assert type(a) is type(b) and a == b, field


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_old_crash_a_negative_deal_number_is_refused(backend):
    """Issue 23.1: ``st.deal_no = -3`` then playing read and wrote hand[-1] in the core."""
    st = backends()[backend].new_game(seed=7)
    with pytest.raises(AttributeError):
        st.deal_no = -3
    d = st.to_dict()
    d["deal"] = -3
    with pytest.raises(me.InvalidPositionError, match="deal"):
        type(st).from_dict(d)
    with pytest.raises(ValueError, match="deal_no must be 1..6"):
        st._load(st.hands, st.loose, st.builds, st.deck, st.mulle, st.intake, st.tabbe, st.to_move, 1, -3, None, [],
                 False)
    if backend == "c":
        assert random_playout(st, 1, 100000) > 0 and st.over


@pytest.mark.parametrize("taken", [[52], [-1], [0, 104]])
def test_both_backends_refuse_a_last_taken_face_out_of_range(taken):
    """Found by the junk test below: the Python engine's ``_load`` indexed CARDS with a last-taken face of 52
    (an IndexError, half a position loaded) and took -1 as the last card; both refuse them before loading."""
    for backend in BACKENDS:
        st = backends()[backend].new_game(seed=7)
        before = st.to_dict()
        with pytest.raises(ValueError, match="cards are faces 0..51"):
            st._load(st.hands, st.loose, st.builds, st.deck, st.mulle, st.intake, st.tabbe, st.to_move, st.set_no,
                     st.deal_no, st.last_capturer, st.sheets, st.over, None, taken)
        assert st.to_dict() == before and st.last_taken == ()


@pytest.mark.parametrize("value", [2**70, -1, 10**6 + 1, 1.0, True])
def test_both_backends_refuse_the_same_counts_with_the_same_message(value):
    """Issue 23.5: a tabbe count of 2**70 was taken by the Python engine and refused by the core."""
    d = backends()["python"].new_game(1).to_dict()
    d["tabbe"] = [value, 0]
    messages = set()
    for backend in BACKENDS:
        with pytest.raises(me.InvalidPositionError, match="0 to 1000000") as info:
            backends()[backend].GameState.from_dict(d)
        messages.add(str(info.value))
    assert len(messages) == 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bad", [True, False, -1, me.NUM_MOVE_IDS, 1.0, "3", None])
def test_play_id_takes_only_a_move_id(backend, bad):
    """Issue 23.5: ``play_id(True)`` was taken as id 1: a bool is not an action id."""
    st = backends()[backend].new_game(1)
    with pytest.raises(ValueError, match="move id is an int from 0 to 2811"):
        st.play_id(bad)
    assert st.key() == backends()[backend].new_game(1).key()
    st.play_id(np.int64(st.legal_move_ids()[0]))  # numpy ints are ids


junk_values = hs.one_of(hs.none(), hs.integers(-(2**70), 2**70), hs.floats(allow_nan=True), hs.text(max_size=4),
                        hs.booleans(), hs.lists(hs.integers(-2, 60), max_size=140),
                        hs.lists(hs.lists(hs.integers(-5, 60), max_size=140), max_size=3),
                        hs.dictionaries(hs.integers(-2, 20), hs.tuples(hs.lists(hs.integers(-1, 53), max_size=140),
                                                                        hs.integers(-1, 2), hs.booleans()),
                                        max_size=4))
LOAD_ARGS = ("hands", "loose", "builds", "deck", "mulle", "intake", "tabbe", "to_move", "set_no", "deal_no",
             "last_capturer", "sheets", "over", "last_move", "last_taken")


def play_on(st, moves: int = 40) -> None:
    """Play on after a load: every legal move applies, or a clear error comes (never a crash)."""
    try:
        for _ in range(moves):
            ids = st.legal_move_ids()
            if not ids:
                break
            st.play_unchecked(MOVES[ids[0]])
            st.to_dict()
            st.view(st.to_move)
    except (ValueError, TypeError, IndexError, KeyError):
        pass


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=hs.sampled_from(LOAD_ARGS), value=junk_values, plies=hs.integers(0, 150))
def test_junk_through_every_way_in_never_crashes(backend, field, value, plies):
    """Each field of a real position replaced by junk, loaded (``_load``, the door from_dict and from_view
    use) or set as a hand; refused with a ValueError or loaded, then played on: never a crash."""
    st = backends()[backend].new_game(plies)
    for _ in range(plies):
        if st.over:
            break
        st.play_id(st.legal_move_ids()[0])
    fields = dict(zip(LOAD_ARGS, (st.hands, st.loose, st.builds, st.deck, st.mulle, st.intake, st.tabbe, st.to_move,
                                  st.set_no, st.deal_no, st.last_capturer, st.sheets, st.over, st.last_move,
                                  st.last_taken)))
    fields[field] = value
    fresh = type(st)(st.ruleset, plies)
    try:
        fresh._load(*fields.values())
    except (ValueError, TypeError, OverflowError, KeyError, AttributeError):
        fresh = None
    if fresh is not None:
        play_on(fresh)
    try:
        st.set_hand(plies % 2, value if isinstance(value, list) else [value])
    except (ValueError, TypeError):
        return
    play_on(st)


@pytest.mark.parametrize("backend", BACKENDS)
def test_absurd_positions_stay_memory_safe(backend):
    """No game reaches these, but hand-made positions can: 52 distinct cards in hand and on the table
    (thousands of legal builds), 15 loose aces; the core answers or raises, never overruns."""
    mod = backends()[backend]
    for hand, loose in ((list(range(52)), list(range(52))), ([0, 13, 26, 39], [0] * 15 + [13] * 15),
                        ([5] * 60, [5] * 60), ([0] * 129, [])):
        st = mod.GameState()
        try:
            st._load([hand, [1]], loose, {}, [], [[], []], [[], []], [0, 0], 0, 1, 6, None, [], False)
        except ValueError as exc:
            assert "at most 128" in str(exc)  # more cards than a state holds: refused up front
            continue
        ids = st.legal_move_ids()
        assert len(ids) == len(set(ids)) <= me.NUM_MOVE_IDS
        for i in ids[:: max(1, len(ids) // 40)]:
            try:
                st.copy().play_id(i)
            except ValueError:
                pass


@needs_c
def test_the_compiled_stepper_refuses_bad_calls_clearly():
    from mulle_env import _native

    c = _native.Stepper(2, me.Ruleset(), True, np.ones(2, bool), np.zeros(2, np.int8))
    c.start(0, 1, 0, 5)
    with pytest.raises(IndexError):
        c.start(2, 1, 0, 5)
    with pytest.raises(ValueError, match="seat"):
        c.start(0, 1, 2, 5)
    with pytest.raises(ValueError):
        c.step(np.array([5000, 0]), np.array([True, False]))
    with pytest.raises(ValueError):
        c.write([0], [0], np.zeros((1, 10), np.float32), np.zeros((1, me.NUM_MOVE_IDS), np.int8))
    with pytest.raises(ValueError):
        c.play(1, 0)  # game 1 never started: over
    ids = c.state(0).legal_move_ids()
    c.play(0, ids[0])


STALE = """
import sys, types
stale = types.ModuleType("mulle_env.engine._core")  # a core built from other sources
stale.ABI, stale.FACE_BLOCKS, stale.BUILD_FEATURES, stale.SHEETS, stale.SCALARS = {abi}, {faces}, (), (), ()
sys.modules["mulle_env.engine._core"] = stale
import mulle_env as me
print(me.BACKEND)
print(me.engine.C_IMPORT_ERROR)
"""


@pytest.mark.parametrize("abi,faces", [(1, ()), (2, ("hand", "table"))])
def test_a_stale_core_is_refused_saying_to_rebuild(abi, faces):
    """A core of another ABI or written for another observation layout is never run: the reference runs,
    saying why (MULLE_ENGINE=c refuses to start)."""
    code = STALE.format(abi=abi, faces=faces)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[0] == "python" and "stale build" in out and "pip install -e ." in out
    run = subprocess.run([sys.executable, "-c", code], env={**os.environ, "MULLE_ENGINE": "c"}, capture_output=True,
                         text=True)
    assert run.returncode != 0 and "stale build" in run.stderr


def test_a_hand_written_position_with_unequal_hands_plays_to_the_end_alike():
    # A newcomer gave a mid-deal position the wrong seat to move (7 cards against 8): the players alternated until
    # the one to move had no card and no move while the game was not over. A player without cards now passes
    # (only a hand-written position has one; a dealt game's hands empty together), the same on both backends.
    games = {}
    for name in BACKENDS:
        mod = backends()[name]
        st = mod.new_game(7)
        st.play("capture KL 2")
        d = st.to_dict()
        d["to_move"] = 1 - d["to_move"]
        st = mod.GameState.from_dict(d)
        rng, seen = random.Random(0), []
        while not st.over:
            ids = st.legal_move_ids()
            assert ids, f"{name}: player {st.to_move} has no move with hands {[len(h) for h in st.hands]}"
            before = [len(h) for h in st.hands]
            st.play_id(ids[rng.randrange(len(ids))])
            seen.append((tuple(before), st.to_move))
        games[name] = (seen, st.scores(), st.key())
    assert len({repr(g) for g in games.values()}) == 1
    seen = games[BACKENDS[0]][0]
    # The seat with the extra card plays its last two cards in a row once the other hand is empty.
    assert any(min(before) == 0 and max(before) > 1 for before, _ in seen)


@pytest.mark.parametrize("backend", sorted(me.backends()))
def test_play_id_after_the_end_is_game_over_and_a_huge_id_is_named_as_sent(backend):
    # Issue 53, item 10: the compiled core raised a plain ValueError after the end and named 2**63 - 1 for 10**30.
    st = me.backends()[backend].new_game(1, me.Ruleset(sets=1))
    rng = random.Random(0)
    while not st.over:
        ids = st.legal_move_ids()
        st.play_id(ids[rng.randrange(len(ids))])
    with pytest.raises(me.GameOverError, match="the game is over"):
        st.play_id(0)
    with pytest.raises(ValueError, match=str(10**30)):
        me.backends()[backend].new_game(2).play_id(10**30)


def test_random_playout_takes_seeds_of_the_one_domain_only():
    # Issue 53, item 10: -1 and 2**70 were accepted (masked to 64 bits: other seeds' games); a huge n overflowed.
    from mulle_env.stepper import random_playout

    for bad in (-1, 2**70, 1.5, True):
        with pytest.raises(ValueError, match="seed must be"):
            random_playout(me.new_game(1), bad, 10)
    with pytest.raises(ValueError, match="n must be"):
        random_playout(me.new_game(1), 3, -1)
    st = me.new_game(1, me.Ruleset(sets=1))
    assert random_playout(st, 3, 10**30) > 0 and st.over
