"""The OpenSpiel game ``python_mulle`` (mulle_env.openspiel): OpenSpiel's own checks, and the engine's games."""

import importlib
import pickle
import random
import sys

import numpy as np
import pytest

import mulle_env as me
from mulle_env import codec
from mulle_env.observation import OBS_SIZE, encode_state

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is an optional extra: pip install -e '.[openspiel]'")
mo = importlib.import_module("mulle_env.openspiel")

SEEDS = [0, 7, 123456789, 2**64 - 1]


def test_without_open_spiel_the_import_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # makes "import pyspiel" raise ImportError
    monkeypatch.delitem(sys.modules, "mulle_env.openspiel")
    with pytest.raises(ImportError, match=r"pip install -e '\.\[openspiel\]'"):
        importlib.import_module("mulle_env.openspiel")


@pytest.mark.parametrize("params", [
    "",
    "(sets=1,lock_every_build=True)",
    "(sets=1,discard_only_if_no_capture=False,mulle_hand_values=True,seeds=1000)",
])
def test_open_spiel_random_simulation(params):
    # OpenSpiel's own API checks over random games, with its serialization round trip.
    game = pyspiel.load_game(f"python_mulle{params}")
    pyspiel.random_sim_test(game, num_sims=8 if not params else 5, serialize=True, verbose=False)


@pytest.mark.slow
def test_open_spiel_random_simulation_over_many_games():
    pyspiel.random_sim_test(pyspiel.load_game("python_mulle"), num_sims=200, serialize=True, verbose=False)


def test_game_parameters_are_the_ruleset_flags():
    game = pyspiel.load_game("python_mulle(sets=1,mulle_hand_values=True,lock_every_build=True)")
    assert game.ruleset == me.Ruleset(sets=1, mulle_hand_values=True, lock_every_build=True)
    assert game.max_game_length() == codec.max_game_length(game.ruleset) == 96
    assert game.num_distinct_actions() == codec.NUM_ACTIONS
    assert game.max_chance_outcomes() == 256
    assert game.get_parameters()["seeds"] == 0
    assert pyspiel.load_game("python_mulle(seeds=50)").max_chance_outcomes() == 50


def test_forced_capture_false_and_bad_parameters_are_refused():
    with pytest.raises(codec.UnsupportedRulesetError, match="forced_capture=True"):
        mo.MulleGame({"forced_capture": False})
    with pytest.raises(me.InvalidRulesetError, match="sets must be an int from 1 to 100"):
        mo.MulleGame({"sets": 0})
    with pytest.raises(ValueError, match="seeds must be 0"):
        mo.MulleGame({"seeds": -3})


def test_chance_actions_of_a_seed():
    assert mo.chance_actions(7) == [7, 0, 0, 0, 0, 0, 0, 0]
    assert mo.chance_actions(0x0102) == [2, 1, 0, 0, 0, 0, 0, 0]
    assert mo.chance_actions(2**64 - 1) == [255] * 8
    assert mo.chance_actions(42, seeds=100) == [42]
    for bad, seeds in ((-1, 0), (2**64, 0), (100, 100), (1.0, 0), (True, 0)):
        with pytest.raises(ValueError, match="seed"):
            mo.chance_actions(bad, seeds)
    state = pyspiel.load_game("python_mulle").new_initial_state()
    outcomes = state.chance_outcomes()
    assert [a for a, _ in outcomes] == list(range(256)) and sum(p for _, p in outcomes) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="not a seed byte"):
        state.apply_action(256)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_same_seed_is_the_engines_game_move_for_move(seed):
    game = pyspiel.load_game("python_mulle")
    state = mo.state_for_seed(game, seed)
    engine = me.new_game(seed)
    rng = random.Random(seed)
    moves = []
    while not engine.is_over():
        assert state.current_player() == engine.to_move
        assert state.legal_actions() == engine.legal_move_ids()
        assert state.engine.key() == engine.key()
        action = rng.choice(state.legal_actions())
        moves.append(me.MOVES[action])
        state.apply_action(action)
        engine.play(moves[-1])
    assert state.is_terminal() and state.engine.key() == engine.key()
    a, b = engine.scores()
    assert state.returns() == [a - b, b - a]
    assert me.replay(seed, moves) == state.engine  # the engine replays the OpenSpiel game
    assert state.history() == mo.chance_actions(seed) + [m.id for m in moves]
    assert state.seed == seed


def test_a_small_seed_range_deals_those_seeds():
    game = pyspiel.load_game("python_mulle(seeds=10)")
    for seed in range(10):
        assert mo.state_for_seed(game, seed).engine == me.new_game(seed)


def test_an_illegal_action_is_refused_and_changes_nothing():
    state = mo.state_for_seed(pyspiel.load_game("python_mulle"), 7)
    before = state.engine.key()
    illegal = next(a for a in range(codec.NUM_ACTIONS) if a not in state.legal_actions())
    with pytest.raises(me.IllegalMoveError, match=f"action {illegal} .* is not legal; legal actions"):
        state.apply_action(illegal)
    assert state.engine.key() == before and state.history() == mo.chance_actions(7)


def test_observation_is_the_environments_observation():
    game = pyspiel.load_game("python_mulle")
    state = mo.state_for_seed(game, 3)
    for action in state.legal_actions()[:1] * 1:
        state.apply_action(action)
    for player in (0, 1):
        np.testing.assert_array_equal(state.observation_tensor(player), encode_state(state.engine, player))
    assert game.observation_tensor_shape() == [OBS_SIZE]
    before = game.new_initial_state()
    assert not any(before.observation_tensor(0)) and before.observation_string(1) == "P1 before the deal"


def _other_world(game, state, player, rng):
    """The same position for ``player`` with the hidden cards dealt again (a determinization)."""
    view = state.engine.view(player)
    hidden = [int(c) for c in view.unseen()]
    rng.shuffle(hidden)
    hand, deck = hidden[:view.opponent_hand_size], hidden[view.opponent_hand_size:]
    return game.state_from_engine(me.GameState.from_view(view, hand, deck))


def test_observations_hide_the_opponents_cards():
    game = pyspiel.load_game("python_mulle")
    state = mo.state_for_seed(game, 11)
    for _ in range(20):
        state.apply_action(state.legal_actions()[-1])
    rng = random.Random(0)
    for player in (0, 1):
        other = _other_world(game, state, player, rng)
        assert other.engine.hands[1 - player] != state.engine.hands[1 - player]
        assert other.observation_string(player) == state.observation_string(player)
        np.testing.assert_array_equal(other.observation_tensor(player), state.observation_tensor(player))
    assert state.observation_string(0) != state.observation_string(1)


def test_information_state_is_perfect_recall():
    game = pyspiel.load_game("python_mulle(sets=1)")
    state = mo.state_for_seed(game, 5)
    seen = {}
    rng = random.Random(1)
    played = []
    while not state.is_terminal():
        key = state.information_state_string(state.current_player())
        assert key not in seen, "an information state came back: it forgot something"
        seen[key] = True
        action = rng.choice(state.legal_actions())
        played.append((state.current_player(), action))
        state.apply_action(action)
    text = state.information_state_string(0)
    assert text.count("\nP0 ") + text.count("\nP1 ") == 96 and text.count(": hand ") == 6
    # The tensor: the observation, then one row per move: who (me / the opponent), the card, what it was played as.
    tensor = np.asarray(state.information_state_tensor(1))
    assert len(tensor) == game.information_state_tensor_size() == OBS_SIZE + 96 * mo.PLY_SIZE
    rows = tensor[OBS_SIZE:].reshape(96, mo.PLY_SIZE)
    assert (rows.sum(axis=1) == 3).all()
    for row, (actor, action) in zip(rows, played):
        move = me.MOVES[action]
        assert row[0] == (actor == 1) and row[1] == (actor == 0)
        assert row[2 + move.card] == 1
    assert len({tuple(r) for r in rows}) > 1
    # Two different moves of the same card, kind and player never share a row.
    ids = [m.id for m in me.MOVES]
    encoded = {tuple(np.flatnonzero(_row(i))) for i in ids}
    assert len(encoded) == len(ids)


def _row(move_id):
    observer = mo.MulleObserver(pyspiel.IIGObservationType(perfect_recall=True), None, 1)
    fake = type("S", (), {"engine": me.new_game(0), "_moves": [(0, move_id)]})()
    observer.set_from(fake, 0)
    return observer.dict["history"][0]


def test_only_one_seats_observations_are_offered():
    game = pyspiel.load_game("python_mulle")
    public = pyspiel.IIGObservationType(perfect_recall=False, private_info=pyspiel.PrivateInfoType.NONE)
    with pytest.raises(ValueError, match="one seat"):
        game.make_py_observer(public)


def test_serialization_and_pickle_round_trip():
    game = pyspiel.load_game("python_mulle(sets=1)")
    state = mo.state_for_seed(game, 9)
    for _ in range(30):
        state.apply_action(state.legal_actions()[0])
    wrapped = _other_world(game, state, 0, random.Random(2))
    for st in (state, wrapped, state.clone()):
        text = pyspiel.serialize_game_and_state(game, st)
        game2, back = pyspiel.deserialize_game_and_state(text)
        assert str(game2) == str(game)
        assert back.engine == st.engine and back.history() == st.history()
        assert back.information_state_string(1) == st.information_state_string(1)
        again = pickle.loads(pickle.dumps(st))
        assert again.engine == st.engine and again.legal_actions() == st.legal_actions()


def test_clone_is_independent():
    state = mo.state_for_seed(pyspiel.load_game("python_mulle"), 4)
    clone = state.clone()
    clone.apply_action(clone.legal_actions()[0])
    assert state.engine == me.new_game(4) and clone.engine != state.engine
    assert len(clone.history()) == len(state.history()) + 1


def test_state_from_engine_refuses_another_ruleset():
    game = pyspiel.load_game("python_mulle")
    with pytest.raises(ValueError, match="is not this game's"):
        game.state_from_engine(me.new_game(1, me.Ruleset(sets=1)))
