"""``copy.deepcopy`` and pickle of the environments (issue 31, item 5).

``Mulle-v0`` and the AEC env copy honestly: the copy plays on independently (different
moves on each leave the other untouched) and a pickle round trip gives equal observations,
on both engine backends and with every kind of opponent (in the stepper, through the game
loop). The vector env refuses, naming itself.
"""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import mulle_env  # noqa: F401  (registers Mulle-v0)
from mulle_env.vector_env import MulleVectorEnv


def _first_and_last(info):
    legal = np.flatnonzero(info["action_mask"])
    return int(legal[0]), int(legal[-1])


def _mid_game(opponent: str, seed: int = 5, moves: int = 8):
    env = gym.make("Mulle-v0", opponent=opponent)
    obs, info = env.reset(seed=seed)
    for _ in range(moves):
        obs, _, _, _, info = env.step(_first_and_last(info)[0])
    return env, obs, info


def _state(env):
    return env.unwrapped._core.stepper.state(0).to_dict()


def check_gym_copies(opponent: str) -> None:
    env, obs, info = _mid_game(opponent)
    before = _state(env)
    twin = copy.deepcopy(env)
    thawed = pickle.loads(pickle.dumps(env))
    for other in (twin, thawed):
        assert _state(other) == before
        assert np.array_equal(other.unwrapped._core.observation(0, int(other.unwrapped._core.seats[0]))[0], obs)
    a, b = _first_and_last(info)
    assert a != b
    # Different moves on each copy: the original is unaffected, and the two copies play the same game.
    obs_twin, r1, t1, _, _ = twin.step(a)
    assert _state(env) == before
    obs_env, *_ = env.step(b)
    obs_thawed, r2, t2, _, _ = thawed.step(a)
    assert np.array_equal(obs_twin, obs_thawed) and (r1, t1) == (r2, t2)
    assert not np.array_equal(obs_twin, obs_env)
    assert _state(twin) == _state(thawed) != _state(env)
    # Each plays to the end on its own.
    for e in (env, twin, thawed):
        info = {"action_mask": e.unwrapped._core.observation(0, int(e.unwrapped._core.seats[0]))[1]}
        done = False
        while not done:
            _, _, done, _, info = e.step(_first_and_last(info)[0])
    # A copy of a fresh, never reset env resets like the original.
    fresh = gym.make("Mulle-v0", opponent=opponent)
    clone = copy.deepcopy(fresh)
    assert np.array_equal(fresh.reset(seed=2)[0], clone.reset(seed=2)[0])


@pytest.mark.parametrize("opponent", ["random", "heuristic", "greedy"])
def test_mulle_v0_copies_and_pickles_and_the_copy_plays_on_independently(opponent):
    check_gym_copies(opponent)


def check_aec_copies() -> None:
    pytest.importorskip("pettingzoo")
    from mulle_env.pettingzoo import env as aec_env

    env = aec_env()
    env.reset(seed=4)
    for _ in range(9):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(np.flatnonzero(mask)[0]))
    while len(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])) < 2:  # a real choice to differ on
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    before = env.unwrapped._core.stepper.state(0).to_dict()
    twin, thawed = copy.deepcopy(env), pickle.loads(pickle.dumps(env))
    agent = env.agent_selection
    assert twin.agent_selection == thawed.agent_selection == agent
    legal = np.flatnonzero(env.observe(agent)["action_mask"])
    for other in (twin, thawed):
        assert np.array_equal(other.observe(agent)["observation"], env.observe(agent)["observation"])
    twin.step(int(legal[0]))
    thawed.step(int(legal[0]))
    assert env.unwrapped._core.stepper.state(0).to_dict() == before
    env.step(int(legal[-1]))
    nxt = twin.agent_selection
    assert np.array_equal(twin.observe(nxt)["observation"], thawed.observe(nxt)["observation"])
    assert twin.unwrapped._core.stepper.state(0).to_dict() != env.unwrapped._core.stepper.state(0).to_dict()


def test_the_aec_env_copies_and_pickles():
    check_aec_copies()


def test_the_vector_env_refuses_to_copy_naming_itself():
    envs = MulleVectorEnv(num_envs=2, opponent="random")
    envs.reset(seed=1)
    for how in (copy.deepcopy, pickle.dumps, copy.copy):
        with pytest.raises(TypeError, match=r"MulleVectorEnv\(num_envs=2, .*cannot be copied or pickled") as exc:
            how(envs)
        assert "Stepper" not in str(exc.value).split("cannot")[0]


def test_copies_on_the_python_engine_too():
    # The backend is fixed at import: the other one runs in a child process.
    other = "python" if mulle_env.BACKEND == "c" else "c"
    tests = Path(__file__).parent
    code = ("import test_env_copies as t\n"
            "for opp in ('random', 'heuristic'): t.check_gym_copies(opp)\n"
            "t.check_aec_copies()\nprint('ok')")
    env = {**os.environ, "MULLE_ENGINE": other, "PYTHONPATH": os.pathsep.join([str(tests), str(tests.parent)])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-2000:]


def test_a_replayable_steppers_fused_step_is_logged_and_replayed():
    """``step_write`` (the vector env's one-pass step) is remembered like ``step``: a copy replays it."""
    from mulle_env.engine import Ruleset
    from mulle_env.envcore import ReplayableStepper
    from mulle_env.stepper import make_stepper

    k, rs = 3, Ruleset(sets=1)
    s = ReplayableStepper(make_stepper(k, rs, True, 2), rs, True)
    for i in range(k):
        s.start(i, 60 + i, i % 2, 70 + i)
    seats = [i % 2 for i in range(k)]
    obs, mask = np.zeros((k, 524), np.float32), np.zeros((k, 2812), np.int8)
    s.write(np.arange(k), seats, obs, mask)
    for _ in range(6):
        active = mask.any(axis=1)
        s.step_write(mask.argmax(axis=1), active, seats, obs, mask)
    twin = copy.deepcopy(s)
    assert [twin.state(i).to_dict() for i in range(k)] == [s.state(i).to_dict() for i in range(k)]
    assert all(len(m) >= 1 for m in s.moves)
