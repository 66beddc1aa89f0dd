"""The env layer serves any game through its game object (mulle_env.games): Mulle's, and a toy written in tests.

The toy (tests/env_toy_game.py, take-away) knows nothing of Mulle and is played by the very classes
``Mulle-v0``, the vector env and the AEC env are, on the generic Python stepper, with every opponent
mode, both ``illegal_action`` policies and copies.
"""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
from env_toy_game import TOY, TakeOne

import mulle_env
from mulle_env import codec
from mulle_env.envcore import EnvCore
from mulle_env.games import GAMES, EnvGame, IllegalActionError, get_game
from mulle_env.games.mulle import MULLE
from mulle_env.gym_env import MulleEnv
from mulle_env.opponents import AgentOpponents, BothLearners, SelfPlayPolicy, StepperRandom
from mulle_env.stepper import PyStepper
from mulle_env.vector_env import MulleVectorEnv


def test_mulle_is_the_default_game_and_games_are_found_by_name():
    assert get_game() is MULLE and get_game("mulle") is MULLE and get_game(MULLE) is MULLE
    assert copy.deepcopy(MULLE) is MULLE and pickle.loads(pickle.dumps(MULLE)) is MULLE
    assert GAMES["mulle"] == "mulle_env.games.mulle:MULLE"
    with pytest.raises(ValueError, match="unknown game 'chess'; games: .*mulle"):
        get_game("chess")
    with pytest.raises(ValueError, match="game must be a game object .* not 42"):
        get_game(42)  # type: ignore[arg-type]
    assert gym.make("Mulle-v0").unwrapped.env_game is MULLE
    assert (MULLE.num_actions, MULLE.obs_size, MULLE.env_id) == (codec.NUM_ACTIONS, 524, "Mulle-v0")


def test_codec_errors_are_the_generic_ones():
    # mulle_env.codec re-exports the game-neutral codec pieces: one class to catch for every game.
    assert codec.IllegalActionError is IllegalActionError
    st = mulle_env.new_game(3)
    with pytest.raises(IllegalActionError, match=r"action 5000 is out of range: actions are ints from 0 to 2811"):
        codec.decode(st, 5000)
    with pytest.raises(IllegalActionError, match="not 7.0"):
        codec.decode(st, 7.0)


def test_each_opponent_is_one_mode_object_chosen_once():
    kinds = {None: BothLearners, "random": StepperRandom, "self": SelfPlayPolicy, "heuristic": AgentOpponents}
    for opponent, kind in kinds.items():
        core = EnvCore(2, opponent)
        assert type(core.opponents) is kind
        assert (core.agents is not None) == (kind is AgentOpponents)


def _play_single(env, seed):
    obs, info = env.reset(seed=seed)
    trace = [obs.copy()]
    while True:
        action = int(np.flatnonzero(info["action_mask"])[-1])
        obs, reward, term, trunc, info = env.step(action)
        trace.append(obs.copy())
        if term:
            return trace, reward, info


@pytest.mark.parametrize("opponent", ["random", TakeOne()])
def test_a_second_game_plays_on_the_single_env(opponent):
    env = MulleEnv(opponent=opponent, game=TOY, render_mode="ansi")
    assert env.env_game is TOY and env.action_space.n == 3 and env.observation_space.shape == (3,)
    assert env.max_steps == 15
    trace, reward, info = _play_single(env, 5)
    assert reward in (1.0, -1.0) and info["final_scores"] in ((1, 0), (0, 1))
    assert env.render().startswith("Toy-v0: you are player")
    again, _, _ = _play_single(MulleEnv(opponent=opponent, game=TOY), 5)
    assert all(np.array_equal(a, b) for a, b in zip(trace, again, strict=True))
    with pytest.raises(ValueError, match="Toy-v0 plays against an opponent"):
        MulleEnv(opponent=None, game=TOY)
    with pytest.raises(ValueError, match=r"extras must be None or one of \[\]"):
        MulleEnv(opponent="random", game=TOY, extras="capture-v1")


def test_a_second_game_s_illegal_actions():
    env = MulleEnv(opponent="random", game=TOY, seat=0, ruleset={"take_max": 1})
    env.reset(seed=1)
    # The generic decode names the action, its move and the legal actions with theirs.
    with pytest.raises(IllegalActionError, match=r"^action 2 \(take 3\) is not legal for player 0; "
                                                 r"legal actions: 0 \(take 1\)$"):
        env.step(2)
    with pytest.raises(IllegalActionError, match="action 5 is out of range: actions are ints from 0 to 2"):
        env.step(5)
    with pytest.raises(ValueError, match="take_max in 1..3"):
        MulleEnv(opponent="random", game=TOY, ruleset={"take_max": 4})
    lose = MulleEnv(opponent="random", game=TOY, seat=0, illegal_action="lose", reward="score", score_scale=4.0)
    lose.reset(seed=1)
    _, reward, term, _, info = lose.step(7)
    assert term and info["illegal_action"] and reward == -1.0 / 4.0


def test_a_second_game_copies():
    env = MulleEnv(opponent=TakeOne(), game=TOY)
    env.reset(seed=2)
    env.step(0)
    twin = copy.deepcopy(env)
    # A game object outside the registry is copied with the env (Mulle's is looked up by name again).
    assert type(twin.env_game) is type(TOY) and twin.unwrapped._core.game is twin.env_game
    for e in (env, twin):
        e.step(0)
    assert env.state.pile == twin.state.pile and env.state is not twin.state


@pytest.mark.parametrize("opponent", ["random", "self", TakeOne()])
def test_a_second_game_plays_on_the_vector_env_as_on_single_envs(opponent):
    k = 3
    policy = (lambda obs, mask: mask.argmax(axis=1).astype(np.int64)) if opponent == "self" else None
    envs = MulleVectorEnv(k, opponent=opponent, game=TOY, seat=0, opponent_policy=policy)
    assert isinstance(envs._core.stepper, PyStepper) and envs.single_action_space.n == 3
    obs, info = envs.reset(seed=40)
    single_opponent = TakeOne() if opponent == "self" else opponent  # the policy above takes one as TakeOne does
    singles = [MulleEnv(opponent=single_opponent, game=TOY, seat=0) for _ in range(k)]
    firsts = [s.reset(seed=40 + i) for i, s in enumerate(singles)]
    assert np.array_equal(obs, np.stack([o for o, _ in firsts]))
    for _ in range(6):
        actions = info["action_mask"].argmax(axis=1)
        obs, rewards, term, _, info = envs.step(actions)
        for i, s in enumerate(singles):
            o, r, t, _, _ = s.step(int(actions[i]))
            if t:
                assert term[i] and rewards[i] == r
                o, _ = s.reset()
            assert np.array_equal(obs[i], o)
    ids, offsets = envs.legal_ids()
    assert len(offsets) == k + 1


def test_a_second_game_plays_on_the_aec_env():
    pettingzoo = pytest.importorskip("mulle_env.pettingzoo")
    env = pettingzoo.env(game=TOY)
    env.reset(seed=9)
    assert env.unwrapped.metadata["name"] == "toy_v0" and repr(env.unwrapped) == "toy_v0"
    ends = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term:
            ends[agent] = reward
            env.step(None)
            continue
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert sorted(ends.values()) == [-1.0, 1.0]


def test_the_generic_stepper_plays_mulle_as_the_default_one_does():
    # PyStepper over Mulle's game object is the readable twin of the compiled stepper (playthroughs check more).
    a = PyStepper(2, mulle_env.Ruleset(sets=1), True)
    b = PyStepper(2, mulle_env.Ruleset(sets=1), True, game=MULLE)
    for s in (a, b):
        s.start(0, 7, 1, 9)
    assert a.state(0).to_dict() == b.state(0).to_dict() and a.game is MULLE


def test_the_protocol_lists_what_a_game_writes():
    # The members each game writes (no body in the protocol) and the generic ones it may inherit.
    own = {"new_game", "move_of", "encode", "observation_bounds", "score_bound", "max_decisions"}
    generic = {"check_ruleset", "action_of", "decode", "make_stepper", "render", "extra_blocks", "extras_bounds",
               "add_extras"}
    assert own | generic <= set(dir(EnvGame))
    for name in own:
        assert getattr(type(TOY), name) is not getattr(EnvGame, name)
