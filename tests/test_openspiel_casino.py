"""The OpenSpiel game ``python_casino``: OpenSpiel's own checks, and Casino's engine games through it.

The classes are the ones ``python_mulle`` uses (``mulle_env.openspiel.SpielGame`` and friends);
what differs is Casino's spec: its engine, its env observation and its history rows.
"""

import importlib
import pickle
import random

import numpy as np
import pytest

from mulle_env import casino
from mulle_env.engine.errors import InvalidRulesetError
from mulle_env.games import casino as casino_env

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is an optional extra: pip install -e '.[openspiel]'")
mo = importlib.import_module("mulle_env.openspiel")


@pytest.mark.parametrize("params", [
    "(rounds=1)",
    "(rounds=1,court_capture=all,sweeps=False,trail_with_build=True,seeds=1000)",
    "(rounds=2,sum_build_max_card=5,increase_max_cards=4)",
    "(target_score=11)",
])
def test_open_spiel_random_simulation(params):
    game = pyspiel.load_game(f"python_casino{params}")
    pyspiel.random_sim_test(game, num_sims=4, serialize=True, verbose=False)


@pytest.mark.slow
def test_open_spiel_random_simulation_over_many_games():
    pyspiel.random_sim_test(pyspiel.load_game("python_casino"), num_sims=100, serialize=True, verbose=False)


def test_parameters_are_the_flags_with_zero_for_none():
    game = pyspiel.load_game("python_casino(rounds=2,increase_max_cards=4,court_capture=all)")
    assert game.ruleset == casino.Ruleset(rounds=2, increase_max_cards=4, court_capture="all")
    assert pyspiel.load_game("python_casino").ruleset == casino.Ruleset()
    assert game.num_distinct_actions() == casino.NUM_MOVE_IDS
    assert game.max_game_length() == 2 * 2 * 24
    assert game.max_utility() == casino_env.score_bound(game.ruleset)
    assert "gather_all" not in game.get_parameters()  # the action space is the move ids: gather_all=True
    with pytest.raises(InvalidRulesetError, match="court_capture"):
        mo.CasinoGame({"court_capture": "two"})


@pytest.mark.parametrize("seed", [0, 7, 2**64 - 1])
def test_the_same_seed_is_the_engines_game_move_for_move(seed):
    game = pyspiel.load_game("python_casino(rounds=2)")
    state = mo.state_for_seed(game, seed)
    engine = casino.new_game(seed, {"rounds": 2})
    rng = random.Random(seed)
    moves = []
    while not engine.is_over():
        assert state.current_player() == engine.to_move
        assert state.legal_actions() == list(engine.legal_ids())
        assert state.engine.key() == engine.key()
        action = rng.choice(state.legal_actions())
        moves.append(casino.MOVES[action])
        state.apply_action(action)
        engine.play(moves[-1])
    assert state.is_terminal() and state.engine.key() == engine.key()
    a, b = engine.scores()
    assert state.returns() == [a - b, b - a]
    assert casino.replay(seed, moves, {"rounds": 2}) == state.engine
    assert state.history() == mo.chance_actions(seed) + [m.id for m in moves]


def test_observation_is_the_environments_and_hides_the_opponent():
    game = pyspiel.load_game("python_casino(rounds=1)")
    state = mo.state_for_seed(game, 3)
    for _ in range(9):
        state.apply_action(state.legal_actions()[-1])
    for player in (0, 1):
        np.testing.assert_array_equal(state.observation_tensor(player), casino_env.encode_state(state.engine, player))
        view = state.engine.view(player)
        hidden = list(view.unseen())
        random.Random(player).shuffle(hidden)
        other = game.state_from_engine(casino.GameState.from_view(view, hidden[:view.opponent_hand_size],
                                                                  hidden[view.opponent_hand_size:], seed=1))
        assert other.engine.hands[1 - player] != state.engine.hands[1 - player]
        assert other.observation_string(player) == state.observation_string(player)
        np.testing.assert_array_equal(other.observation_tensor(player), state.observation_tensor(player))


def test_information_state_is_perfect_recall():
    game = pyspiel.load_game("python_casino(rounds=1)")
    state = mo.state_for_seed(game, 5)
    seen = set()
    rng = random.Random(1)
    played = []
    while not state.is_terminal():
        key = state.information_state_string(state.current_player())
        assert key not in seen, "an information state came back: it forgot something"
        seen.add(key)
        action = rng.choice(state.legal_actions())
        played.append((state.current_player(), action))
        state.apply_action(action)
    text = state.information_state_string(0)
    assert text.count("\nP0 ") + text.count("\nP1 ") == 48 and text.count(": hand ") == 6
    tensor = np.asarray(state.information_state_tensor(1))
    size = casino_env.OBS_SIZE
    assert len(tensor) == game.information_state_tensor_size() == size + 48 * mo.CASINO_PLY_SIZE
    rows = tensor[size:].reshape(48, mo.CASINO_PLY_SIZE)
    for row, (actor, action) in zip(rows, played):
        assert row[0] == (actor == 1) and row[1] == (actor == 0) and row[2 + casino.MOVES[action].card] == 1
    # Every move id has its own row.
    slots = {tuple(sorted(mo._casino_ply_slots(i))) for i in range(casino.NUM_MOVE_IDS)}
    assert len(slots) == casino.NUM_MOVE_IDS


def test_serialization_and_pickle_round_trip():
    game = pyspiel.load_game("python_casino(rounds=1)")
    state = mo.state_for_seed(game, 9)
    for _ in range(15):
        state.apply_action(state.legal_actions()[0])
    for st in (state, state.clone()):
        game2, back = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, st))
        assert str(game2) == str(game) and back.engine == st.engine and back.history() == st.history()
        again = pickle.loads(pickle.dumps(st))
        assert again.engine == st.engine and again.legal_actions() == st.legal_actions()
    assert isinstance(state, mo.CasinoState) and isinstance(state.clone(), mo.CasinoState)


@pytest.mark.parametrize("name", ["python_casino", "python_mulle"])
def test_a_state_cloned_at_a_chance_node_plays_on(name):
    # OpenSpiel clones a Python state by deepcopy; the game it points to must be the game itself, not a
    # copy rebuilt without its attributes (chance actions on such a clone raised AttributeError: 'seeds').
    game = pyspiel.load_game(name)
    state = game.new_initial_state()
    clone = state.clone()
    for _ in range(game.chance_nodes):
        clone.apply_action(7)
    assert clone.current_player() == 0 and state.is_chance_node() and not state.history()
    with pytest.raises(ValueError, match="seed byte"):
        state.clone().apply_action(300)
