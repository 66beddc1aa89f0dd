"""Mulle-v0: Gymnasium API, determinism, masks, illegal actions, vector envs, MaskablePPO."""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from engine_helpers import FirstMove
from gymnasium.utils.env_checker import check_env

import mulle_env as me
from mulle_env import codec
from mulle_env.gym_env import MulleEnv
from mulle_env.observation import OBS_SIZE
from mulle_env.vector_env import MulleVectorEnv


def play_episode(env, seed, policy_seed=0):
    """Random masked play; returns the list of (action, reward, terminated) and the last info."""
    rng = np.random.default_rng(policy_seed)
    obs, info = env.reset(seed=seed)
    trace, done = [], False
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        a = int(legal[rng.integers(len(legal))])
        obs, r, done, truncated, info = env.step(a)
        assert not truncated
        trace.append((a, r, done, obs.tobytes()))
    return trace, info



def test_check_env_passes_without_warnings():
    # check_env steps action_space.sample(), which is almost never legal: under the
    # default illegal_action="raise" that is an error by design, so check with "lose".
    env = gym.make("Mulle-v0", opponent="random", illegal_action="lose")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


def test_registered_and_import_is_lazy():
    assert "Mulle-v0" in gym.registry
    code = "import sys, mulle_env; print('mulle_env.gym_env' in sys.modules, 'pettingzoo' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
    assert me.MulleEnv is MulleEnv


def test_spaces_and_episode():
    env = gym.make("Mulle-v0", opponent="random")
    assert env.action_space == gym.spaces.Discrete(codec.NUM_ACTIONS)
    assert env.observation_space.shape == (OBS_SIZE,) and env.observation_space.dtype == np.float32
    trace, info = play_episode(env, seed=1)
    assert len(trace) == env.unwrapped.max_steps == codec.MAX_DECISIONS_PER_PLAYER
    assert all(r == 0 for _, r, _, _ in trace[:-1]) and trace[-1][1] in (-1.0, 0.0, 1.0)
    mine, theirs = info["final_scores"]
    assert trace[-1][1] == np.sign(mine - theirs)
    assert info["action_mask"].sum() == 0 and env.unwrapped.action_masks().sum() == 0


def test_reset_seed_fixes_the_episode():
    a = play_episode(gym.make("Mulle-v0", opponent="random"), seed=5)
    b = play_episode(gym.make("Mulle-v0", opponent="random"), seed=5)
    c = play_episode(gym.make("Mulle-v0", opponent="random"), seed=6)
    assert a[0] == b[0] and a[0] != c[0]


def test_mask_matches_engine_and_action_masks():
    env = MulleEnv(opponent="random")
    obs, info = env.reset(seed=3)
    for _ in range(30):
        ids = env.state.legal_move_ids()
        assert info["action_mask"].dtype == np.int8
        assert np.flatnonzero(info["action_mask"]).tolist() == ids
        assert np.array_equal(env.action_masks(), info["action_mask"].astype(bool))
        assert env.state.to_move == env.seat
        obs, r, done, _, info = env.step(ids[-1])


def test_score_reward():
    env = MulleEnv(opponent="random", reward="score", score_scale=50)
    trace, info = play_episode(env, seed=2)
    mine, theirs = info["final_scores"]
    assert trace[-1][1] == pytest.approx((mine - theirs) / 50)


def test_seats():
    env = MulleEnv(opponent=FirstMove(), seat=1)
    env.reset(seed=0)
    assert env.seat == 1 and env.state.to_move == 1 and len(env.opponent.events) == 1
    assert env.opponent.resets == 1
    alt = MulleEnv(opponent="random", seat="alternate")
    assert [alt.reset(seed=0) and alt.seat for _ in range(4)] == [0, 1, 0, 1]
    rnd = MulleEnv(opponent="random", seat="random")
    seats = {rnd.reset(seed=s) and rnd.seat for s in range(20)}
    assert seats == {0, 1}
    rnd.reset(seed=4, options={"seat": 1})
    assert rnd.seat == 1
    with pytest.raises(ValueError, match="seat must be one of"):
        MulleEnv(opponent="random", seat=2)


def test_agent_object_sees_every_move():
    agent = FirstMove()
    env = MulleEnv(opponent=agent, seat=0)
    trace, _ = play_episode(env, seed=4)
    assert len(agent.events) == codec.MAX_GAME_LENGTH
    assert sum(1 for p, _ in agent.events if p == 0) == len(trace)


def test_illegal_action_raises_by_default():
    env = MulleEnv(opponent="random")
    _, info = env.reset(seed=0)
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(codec.IllegalActionError, match=rf"action {bad} \(.*legal actions:"):
        env.step(bad)
    with pytest.raises(codec.IllegalActionError, match="out of range"):
        env.step(codec.NUM_ACTIONS)
    env.step(int(np.flatnonzero(info["action_mask"])[0]))  # the env is still usable


def test_illegal_action_lose():
    env = MulleEnv(opponent="random", illegal_action="lose")
    _, info = env.reset(seed=0)
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    obs, r, term, trunc, info = env.step(bad)
    assert (r, term, trunc, info["illegal_action"]) == (-1.0, True, False, True)
    with pytest.raises(me.GameOverError, match="call reset"):
        env.step(0)


def test_step_after_end_and_before_reset():
    env = MulleEnv(opponent="random")
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)
    play_episode(env, seed=0)
    with pytest.raises(me.GameOverError, match="episode is over"):
        env.step(0)


def test_opponents_by_name_and_errors():
    assert MulleEnv(opponent="random").opponent.name == "random"
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        MulleEnv(opponent="nobody")
    with pytest.raises(ValueError, match="opponent must be"):
        MulleEnv(opponent=42)
    with pytest.raises(ValueError, match="reward must be"):
        MulleEnv(opponent="random", reward="points")
    with pytest.raises(codec.UnsupportedRulesetError, match="forced_capture=True"):
        MulleEnv(opponent="random", ruleset={"forced_capture": False})


def test_heuristic_opponent_when_registered():
    agents = pytest.importorskip("agents")
    try:
        agents.make("heuristic")
    except agents.AgentSpecError:
        pytest.skip("the heuristic agent is not registered yet")
    env = gym.make("Mulle-v0")  # the default opponent
    assert env.unwrapped.opponent.name == "heuristic"
    trace, info = play_episode(env, seed=8)
    assert len(trace) == codec.MAX_DECISIONS_PER_PLAYER


def test_render_ansi():
    env = gym.make("Mulle-v0", opponent="random", render_mode="ansi")
    env.reset(seed=1)
    text = env.render()
    assert "Your hand:" in text and "loose" in text and "total" in text and "you are player" in text


def _masked_random_actions(masks, rng):
    # An all-zero mask marks a sub-env that just ended: under Gymnasium's next-step
    # autoreset its next action is ignored (it resets), so any index will do.
    return np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])


@pytest.mark.parametrize("vector_cls", [gym.vector.SyncVectorEnv, gym.vector.AsyncVectorEnv])
def test_vector_envs(vector_cls):
    envs = vector_cls([lambda: gym.make("Mulle-v0", opponent="random") for _ in range(2)])
    try:
        obs, info = envs.reset(seed=[1, 2])
        assert obs.shape == (2, OBS_SIZE) and info["action_mask"].shape == (2, codec.NUM_ACTIONS)
        rng = np.random.default_rng(0)
        for _ in range(20):
            masks = np.stack(envs.call("action_masks"))
            assert np.array_equal(masks, info["action_mask"].astype(bool))
            obs, r, term, trunc, info = envs.step(_masked_random_actions(info["action_mask"], rng))
    finally:
        envs.close()


def test_vector_env_crosses_episode_ends():
    rules = {"sets": 1}
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("Mulle-v0", opponent="random", ruleset=rules) for _ in range(2)])
    try:
        obs, info = envs.reset(seed=[3, 4])
        rng = np.random.default_rng(1)
        ended = np.zeros(2, dtype=int)
        restarted = np.zeros(2, dtype=bool)
        for _ in range(3 * codec.MOVES_PER_SET):
            just_ended = ~info["action_mask"].any(axis=1)
            obs, r, term, trunc, info = envs.step(_masked_random_actions(info["action_mask"], rng))
            # the step after an episode's end is the reset: a fresh game with legal actions
            restarted |= just_ended & info["action_mask"].any(axis=1)
            assert np.array_equal(np.stack(envs.call("action_masks")), info["action_mask"].astype(bool))
            assert not info["action_mask"][term].any()  # a finished episode offers no action
            ended += term
        assert (ended >= 1).all() and restarted.all()
    finally:
        envs.close()


@pytest.mark.slow
def test_maskable_ppo_trains_a_few_thousand_steps():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    env = gym.make("Mulle-v0", opponent="random")
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, seed=0, verbose=0)
    model.learn(total_timesteps=3000)
    obs, info = env.reset(seed=0)
    action, _ = model.predict(obs, action_masks=env.unwrapped.action_masks(), deterministic=True)
    assert info["action_mask"][int(action)] == 1


def test_illegal_action_never_pays_under_score_reward():
    env = gym.make("Mulle-v0", opponent="random", reward="score", illegal_action="lose", score_scale=10.0)
    obs, info = env.reset(seed=5)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, reward, terminated, _, info = env.step(illegal)
    assert terminated and info["illegal_action"]
    assert reward == -2 * 600 / 10.0  # below any defeat: a set total stays under 600


def test_reset_refuses_unknown_options_and_float_actions():
    env = gym.make("Mulle-v0", opponent="random").unwrapped
    with pytest.raises(ValueError, match="unknown reset option.*'foo'.*'seat'"):
        env.reset(seed=1, options={"foo": 1})
    env.reset(seed=1)
    legal = int(np.flatnonzero(env.action_masks())[0])
    for bad in (float(legal), True, np.float64(legal)):
        with pytest.raises(codec.IllegalActionError, match="must be an int"):
            env.step(bad)
    env.step(np.int64(legal))  # numpy integers are actions


def test_importing_the_engine_loads_only_the_standard_library():
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import mulle_env.engine\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "print(sorted(new - set(sys.stdlib_module_names) - {'mulle_env'}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("code", [
    "import mulle_env, gymnasium as gym",  # mulle_env first: registered when Gymnasium loads
    "import gymnasium as gym, mulle_env",  # Gymnasium first: registered at once
])
def test_mulle_v0_is_registered_in_either_import_order(code):
    code += "\nprint(type(gym.make('Mulle-v0', opponent='random').unwrapped).__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "MulleEnv"


# ----- opponents through the one game loop, option checks, the extra-input observation option


class TextAnswers:
    """Answers with the move's text, as Match accepts it (issue 23.11)."""

    spec = "text-answers"

    def act(self, view, legal_moves, rng):
        return str(legal_moves[-1])


class NoAnswer:
    spec = "no-answer"

    def act(self, view, legal_moves, rng):
        return None


def test_an_opponent_may_answer_with_move_text():
    env = MulleEnv(opponent=TextAnswers(), seat=1, ruleset={"sets": 1})
    obs, info = env.reset(seed=3)
    done = False
    while not done:
        obs, r, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert env.state.over


@pytest.mark.parametrize("make", [lambda a: MulleEnv(opponent=a, seat=1),
                                  lambda a: MulleVectorEnv(2, opponent=[a, a], seat=1)])
def test_an_opponent_that_answers_nothing_is_named_in_an_illegal_move_error(make):
    """Issue 23.11: None got "AttributeError: 'str' object has no attribute 'id'"; now the loop's error."""
    with pytest.raises(me.IllegalMoveError, match=r"agent 'no-answer' \(seat 0\) chose an illegal move") as info:
        make(NoAnswer()).reset(seed=0)
    assert info.value.agent == "no-answer" and info.value.seat == 0


@pytest.mark.parametrize("bad", [1.0, True, "1", 2, None])
def test_seat_options_are_checked_clearly(bad):
    """Issue 23.12: seat=1.0 gave a bare TypeError."""
    with pytest.raises(ValueError, match="seat must be one of"):
        MulleEnv(opponent="random", seat=bad)
    env = MulleEnv(opponent="random")
    with pytest.raises(ValueError, match=r"options\['seat'\] must be one of"):
        env.reset(options={"seat": bad})
    assert MulleEnv(opponent="random", seat=np.int64(1)).reset(seed=1)[0].shape == (524,)


@pytest.mark.parametrize("bad", [1.5, -1, "7", True, [1.5, 2]])
def test_seeds_are_checked_clearly(bad):
    """Issue 23.12: the vector env's reset(seed=1.5) gave "'float' object is not iterable"."""
    envs = MulleVectorEnv(2, opponent="random")
    with pytest.raises(ValueError, match="seed"):
        envs.reset(seed=bad)
    if not isinstance(bad, list):
        with pytest.raises(ValueError, match="seed"):
            MulleEnv(opponent="random").reset(seed=bad)


@pytest.mark.parametrize("name", ["capture-v1", "capture-v3", "capture-v4"])
def test_the_extra_inputs_are_an_observation_option_of_every_env(name):
    """Issue 25.6: the learned agent's extra-input blocks, off by default, the same code in every env."""
    from mulle_env.extras import afterstate_extras, extras_size
    from mulle_env.pettingzoo import env as aec_env

    size = OBS_SIZE + extras_size(name)
    single = MulleEnv(opponent="random", extras=name, ruleset={"sets": 1})
    obs, info = single.reset(seed=4)
    assert obs.shape == (size,) and single.observation_space.contains(obs)
    assert np.array_equal(obs[OBS_SIZE:], afterstate_extras(obs[None, :OBS_SIZE], name=name)[0])
    assert np.array_equal(obs[:OBS_SIZE], MulleEnv(opponent="random", ruleset={"sets": 1}).reset(seed=4)[0])
    envs = MulleVectorEnv(3, opponent="random", extras=name, ruleset={"sets": 1})
    vobs, _ = envs.reset(seed=4)
    # The blocks' float sums may differ by an ulp between batch sizes (numpy's summation order).
    assert vobs.shape == (3, size) and np.array_equal(vobs[0, :OBS_SIZE], obs[:OBS_SIZE])
    assert np.allclose(vobs[0], obs, rtol=0, atol=2e-6)
    aec = aec_env(extras=name)
    aec.reset(seed=4)
    assert aec.observe("player_0")["observation"].shape == (size,)
    assert aec.observation_space("player_0")["observation"].shape == (size,)
    with pytest.raises(ValueError, match="extras must be None or one of"):
        MulleEnv(opponent="random", extras="capture-v9")


@pytest.mark.parametrize("scale, words", [(float("inf"), "positive finite number"), (1e-320, "too small")])
def test_a_score_scale_that_breaks_the_rewards_is_refused(scale, words):
    # Issue 53, item 8: inf made every reward 0 (an illegal move as good as a win), 1e-320 made rewards of -inf.
    for env_id in ("Mulle-v0", "Casino-v0"):
        with pytest.raises(ValueError, match=words):
            gym.make(env_id, opponent="random", reward="score", score_scale=scale)
