"""Casino's two backends, the compiled core and the Python reference, give the same game in every respect.

Hypothesis plays random games under random rulesets on both side by side and compares, after
every move: the legal moves (and their plans), the canonical JSON and ``key()``, both seats'
views, a determinization read back with ``from_view``, the refusal of an illegal move (type and
message), and at the end the result. Also here: the compiled deal streams against ``rng.py``,
the C observation and mask writers against the env layer's encoder (bit for bit), the game
table capsule, the refusal of a stale build, the core's own checks of what Python hands it, and
the backend switch (``MULLE_ENGINE``).

``casino_backend`` (a fixture the other Casino engine test modules import) runs a test once per
backend with ``casino.GameState``, ``new_game`` and ``replay`` taken from it.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from mulle_env import casino
from mulle_env.casino.moves import MOVES
from mulle_env.engine.errors import MulleError
from mulle_env.engine.rng import derive_seed, shuffled

BACKENDS = sorted(casino.backends())
needs_c = pytest.mark.skipif("c" not in casino.backends(), reason="the compiled Casino core is not built")


@pytest.fixture(params=BACKENDS)
def casino_backend(request, monkeypatch):
    """Run the test with ``casino.GameState``, ``casino.new_game`` and ``casino.replay`` from one backend."""
    mod = casino.backends()[request.param]
    monkeypatch.setattr(casino, "GameState", mod.GameState)
    monkeypatch.setattr(casino, "new_game", mod.new_game)
    monkeypatch.setattr(casino, "replay", mod.replay)
    return request.param


rulesets = hs.builds(
    casino.Ruleset,
    gather_all=hs.booleans(),
    court_capture=hs.sampled_from(["one", "all"]),
    sweeps=hs.booleans(),
    sum_build_max_card=hs.integers(1, 10),
    increase_max_cards=hs.one_of(hs.none(), hs.integers(2, 8)),
    trail_with_build=hs.booleans(),
    target_score=hs.integers(1, 30),
    rounds=hs.one_of(hs.none(), hs.integers(1, 2)),
)


def _refusal(st, text):
    try:
        st.copy().play(text)
    except MulleError as exc:
        return type(exc).__name__, str(exc)
    return None


def _same(py, c, rng: random.Random, where: str) -> None:
    assert c.to_json() == py.to_json() and c.key() == py.key(), where
    assert c == py and py == c, where
    assert c.legal_moves() == py.legal_moves(), where
    assert [str(m) for m in c.legal_moves()] == [str(m) for m in py.legal_moves()], where
    assert dict(c.move_plans()) == dict(py.move_plans()), where
    assert (c.to_move, c.over, c.round, c.dealer, c.seed) == (py.to_move, py.over, py.round, py.dealer, py.seed), where
    assert (c.hands, c.loose, c.captured, c.sweeps, c.stock) == (py.hands, py.loose, py.captured, py.sweeps, py.stock)
    assert (c.builds, c.last_capturer, c.sheets, c.scores(), c.last_move) == (
        py.builds, py.last_capturer, py.sheets, py.scores(), py.last_move), where
    if py.ruleset.gather_all:
        assert c.legal_ids() == py.legal_ids(), where
    else:
        with pytest.raises(ValueError) as a:
            py.legal_ids()
        with pytest.raises(ValueError) as b:
            c.legal_ids()
        assert str(a.value) == str(b.value)
    for seat in (0, 1):
        assert c.view(seat) == py.view(seat), where
    if not py.over:
        seat = py.to_move
        view = py.view(seat)
        unseen = view.unseen()
        rng.shuffle(unseen)
        hidden, stock = unseen[: view.opponent_hand_size], unseen[view.opponent_hand_size:]
        seed = rng.getrandbits(64)
        a = type(py).from_view(view, hidden, stock, seed=seed)
        b = type(c).from_view(c.view(seat), hidden, stock, seed=seed)
        assert a.to_json() == b.to_json() and a.legal_moves() == b.legal_moves() and a.last_move == b.last_move, where
        # an illegal move: the same refusal, word for word
        legal = {str(m) for m in py.legal_moves()}
        bad = [str(m) for m in rng.sample(MOVES, 12) if str(m) not in legal]
        for text in bad[:3]:
            assert _refusal(c, text) == _refusal(py, text), (where, text)


@needs_c
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rs=rulesets, seed=hs.integers(0, 2**64 - 1), pick=hs.integers(0, 2**32 - 1))
def test_both_backends_play_the_same_random_game(rs, seed, pick):
    py = casino.backends()["python"].new_game(seed, rs)
    c = casino.backends()["c"].new_game(seed, rs)
    rng = random.Random(pick)
    n = 0
    while True:
        where = f"{rs.changes()} seed {seed}, move {n}"
        _same(py, c, rng, where)
        if py.over:
            break
        moves = py.legal_moves()
        m = rng.choice(moves)
        py.play(m)
        if rng.random() < 0.5:
            c.play(str(m))
        elif m.id is not None and rng.random() < 0.5:
            c.play_id(m.id)
        else:
            c.play(m)
        n += 1
    assert c.result() == py.result()
    assert c.result().to_dict() == py.result().to_dict()


@needs_c
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rs=rulesets, seed=hs.integers(0, 2**64 - 1), pick=hs.integers(0, 2**32 - 1))
def test_both_backends_agree_on_crowded_tables(rs, seed, pick):
    """Players who trail and build whenever they can: crowded tables, several builds, the big searches."""
    py = casino.backends()["python"].new_game(seed, rs)
    c = casino.backends()["c"].new_game(seed, rs)
    rng = random.Random(pick)
    for n in range(60):
        _same(py, c, rng, f"{rs.changes()} seed {seed}, move {n}")
        if py.over:
            break
        moves = py.legal_moves()
        quiet = [m for m in moves if m.kind != "capture"]
        m = rng.choice(quiet if quiet and rng.random() < 0.9 else moves)
        py.play(m)
        c.play(m)


@needs_c
def test_the_compiled_deal_streams_are_rng_pys():
    from mulle_env.casino import _core
    from mulle_env.casino.state import _DEAL_STREAM

    r = random.Random(5)
    for seed in [0, 1, 2**64 - 1, *(r.getrandbits(64) for _ in range(50))]:
        for rnd in (1, 2, 50):
            assert _core.derive_seed(seed, _DEAL_STREAM, rnd) == derive_seed(seed, _DEAL_STREAM, rnd)
        assert _core.shuffled(seed) == shuffled(range(52), seed)


@needs_c
def test_the_c_observation_and_mask_writers_are_the_env_layers_bit_for_bit():
    from mulle_env.games import casino as cenv

    r = random.Random(11)
    positions = 0
    for _ in range(12):
        rs = casino.Ruleset(court_capture=r.choice(["one", "all"]), sweeps=r.random() < 0.7,
                            sum_build_max_card=r.randint(1, 10), increase_max_cards=r.choice([None, 2, 4]),
                            trail_with_build=r.random() < 0.5, rounds=r.choice([None, 1, 2]))
        st = casino.backends()["c"].new_game(r.getrandbits(64), rs)
        while True:
            for seat in (0, 1):
                got = np.empty(cenv.OBS_SIZE, np.float32)
                st._write_obs(seat, got)
                # The definition, the view's Python encoder (encode_state itself calls _write_obs on this core).
                assert got.tobytes() == cenv.encode_view(st.view(seat)).tobytes()
                assert cenv.encode_state(st, seat).tobytes() == got.tobytes()
            mask = np.empty(cenv.MOVE_ACTIONS, np.uint8)
            assert st._write_mask(mask) == len(st.legal_ids())
            assert np.flatnonzero(mask).tolist() == list(st.legal_ids())
            positions += 1
            if st.over:
                break
            st.play_id(r.choice(st.legal_ids()))
    assert positions > 500


@needs_c
def test_the_writers_refuse_what_they_cannot_write():
    from mulle_env.games import casino as cenv

    st = casino.backends()["c"].new_game(3, {"gather_all": False})
    with pytest.raises(ValueError, match="no ids"):
        st._write_mask(np.empty(cenv.MOVE_ACTIONS, np.uint8))
    st = casino.backends()["c"].new_game(3)
    with pytest.raises(ValueError, match="seat"):
        st._write_obs(2, np.empty(cenv.OBS_SIZE, np.float32))
    with pytest.raises(ValueError, match="buffer"):
        st._write_obs(0, np.empty(cenv.OBS_SIZE - 1, np.float32))
    with pytest.raises(ValueError, match="buffer"):
        st._write_obs(0, np.empty(cenv.OBS_SIZE, np.float64))
    with pytest.raises(ValueError, match="buffer"):
        st._write_mask(np.empty(cenv.MOVE_ACTIONS, np.int32))


@needs_c
def test_the_game_table_is_a_capsule_of_its_name():
    from mulle_env.casino import cstate

    assert type(cstate.GAME_OPS).__name__ == "PyCapsule"
    assert "mulle_env.casino._core.GAME_OPS" in repr(cstate.GAME_OPS)


@needs_c
def test_a_stale_build_is_refused_saying_to_rebuild():
    from mulle_env.casino import _core, cstate

    with pytest.raises(ImportError, match="stale build"):
        _core.configure(cstate.ABI + 1, (), (), (), (), (), ())
    with pytest.raises(ImportError, match="rebuild"):
        _core.configure(cstate.ABI, ((0,) * 52,), (), (), (), (), ())
    assert casino.backends()["c"].new_game(1).legal_moves()  # a refused configure changed nothing


@needs_c
def test_the_core_checks_what_python_hands_it():
    st = casino.backends()["c"].new_game(1)
    before = st.to_json()
    good = ([[0], [1]], [2], [], [[], []], [0, 0], None, [], 1, [0, 0], [], 0)
    bad = [
        ([[0], [0]], *good[1:]),                        # a card twice
        ([[52], [1]], *good[1:]),                       # no such face
        ([[-1], [1]], *good[1:]),
        (*good[:2], [(5, 0, (3,))], *good[3:]),         # a build of one card
        (*good[:2], [(11, 0, (3, 4))], *good[3:]),      # a build's value above 10
        (*good[:2], [(5, 2, (3, 4))], *good[3:]),       # no such owner
        (*good[:2], [(5, 0, (10, 3))], *good[3:]),      # a court card in a build
        (*good[:2], [(5, 0, (0, 3))], *good[3:]),       # a card in a hand and a build
        (*good[:6], list(range(3, 60)), *good[7:]),     # a stock of more than 52
        (*good[:7], 0, *good[8:]),                      # round 0
        (*good[:10], 2),                                # to_move 2
        ([[0, 1]], *good[1:]),                          # hands not a pair
        (*good[:9], [((0,) * 7,)], *good[10:]),         # sheets not pairs
    ]
    for args in bad:
        with pytest.raises((ValueError, TypeError)):
            st._load_raw(*args)
        assert st.to_json() == before
    st._load_raw(*good)
    assert st.hands == [[0], [1]]


@needs_c
@pytest.mark.parametrize("engine,want", [("python", "python"), ("c", "c"), ("", "c")])
def test_the_backend_follows_mulle_engine(engine, want):
    env = {**os.environ, "MULLE_ENGINE": engine}
    out = subprocess.run([sys.executable, "-c", "import mulle_env.casino as c, mulle_env.engine as e; "
                          "print(c.BACKEND, e.BACKEND, type(c.new_game(1)).__module__)"],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == want and out[1] == want
    assert out[2] == ("mulle_env.casino.cstate" if want == "c" else "mulle_env.casino.state")


def test_backends_lists_the_reference_always():
    assert casino.backends()["python"].GameState is casino.state.GameState
    assert casino.BACKEND in casino.backends()


@needs_c
def test_pickles_and_copies_keep_their_backend_and_position():
    import pickle

    for name, mod in casino.backends().items():
        st = mod.new_game(9, {"gather_all": False})
        for _ in range(7):
            st.play(st.legal_moves()[-1])
        again = pickle.loads(pickle.dumps(st))
        assert type(again) is type(st) and again == st and again.last_move == st.last_move, name
        cp = st.copy()
        cp.play(cp.legal_moves()[0])
        assert cp != st and st.to_json() == again.to_json(), name
