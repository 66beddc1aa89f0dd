"""mulle_v0 (PettingZoo AEC): api_test, seed_test, masks, rewards, illegal actions."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
with warnings.catch_warnings():  # pettingzoo.test imports its own deprecated example envs
    warnings.simplefilter("ignore", DeprecationWarning)
    from pettingzoo.test import api_test, seed_test

import mulle_env as me  # noqa: E402
from mulle_env import codec  # noqa: E402
from mulle_env.pettingzoo import AGENTS, env, raw_env  # noqa: E402

# api_test warns for every Dict observation ({"observation", "action_mask"}), the layout
# PettingZoo's own classic games use; those two warnings are accepted, nothing else.
# It also calls reset(options={"options": 1}) to check that reset takes options; the env
# warns that it ignores that key (it takes no options), which is accepted too.
ACCEPTED = ("Observation is not a NumPy array", "Observation space for each agent probably should be",
            "unknown reset option(s) 'options'")


def _checked(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    unexpected = [str(w.message) for w in caught if not str(w.message).startswith(ACCEPTED)]
    assert not unexpected


def test_api_test():
    _checked(lambda: api_test(env(), num_cycles=400))


def test_seed_test():
    _checked(lambda: seed_test(env, num_cycles=400))


def play(e, seed, policy_seed=0):
    rng = np.random.default_rng(policy_seed)
    e.reset(seed=seed)
    moves, final = [], {}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        if term or trunc:
            final[agent] = (reward, info)
            e.step(None)
            continue
        other = AGENTS[1 - AGENTS.index(agent)]
        assert e.observe(other)["action_mask"].sum() == 0  # only the mover has legal actions
        legal = np.flatnonzero(obs["action_mask"])
        assert legal.tolist() == e.unwrapped.game.legal_move_ids()
        assert reward == 0
        a = int(legal[rng.integers(len(legal))])
        moves.append((agent, a))
        e.step(a)
    return moves, final


def test_full_game_and_rewards():
    e = env()
    moves, final = play(e, seed=3)
    assert len(moves) == codec.MAX_GAME_LENGTH
    assert set(final) == set(AGENTS)
    t0, t1 = final["player_0"][1]["final_scores"]
    assert final["player_0"][0] == np.sign(t0 - t1) == -final["player_1"][0]
    # Not strictly alternating: the deal leader changes, so someone moves twice in a row.
    assert any(a[0] == b[0] for a, b in zip(moves, moves[1:]))
    assert play(env(), seed=3) == (moves, final)


def test_score_reward():
    _, final = play(env(reward="score", score_scale=10), seed=4)
    t0, t1 = final["player_0"][1]["final_scores"]
    assert final["player_0"][0] == pytest.approx((t0 - t1) / 10) == pytest.approx(-final["player_1"][0])


def test_illegal_actions():
    e = env()
    e.reset(seed=0)
    obs, *_ = e.last()
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(codec.IllegalActionError, match=rf"action {bad} .*legal actions:"):
        e.step(bad)
    e = env(illegal_action="lose")
    e.reset(seed=0)
    mover = e.agent_selection
    e.step(bad)
    assert e.rewards[mover] == -1.0 and all(e.terminations.values())
    assert e.infos[mover]["illegal_action"] is True


def test_raw_env_errors_and_render():
    with pytest.raises(codec.UnsupportedRulesetError):
        raw_env(ruleset=me.Ruleset(forced_capture=False))
    r = raw_env(render_mode="ansi")
    r.reset(seed=1)
    assert "Your hand:" in r.render()
    assert raw_env().observation_space("player_0")["action_mask"].shape == (codec.NUM_ACTIONS,)


def test_core_imports_without_pettingzoo():
    code = (
        "import sys; sys.modules['pettingzoo'] = None\n"
        "import gymnasium as gym, mulle_env\n"
        "gym.make('Mulle-v0', opponent='random').reset(seed=0)\n"
        "try:\n    import mulle_env.pettingzoo\n"
        "except ImportError as e:\n    print('hint' if 'pip install' in str(e) else e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "hint"


def test_observe_after_the_game_ends_gives_an_empty_mask():
    e = raw_env(illegal_action="lose")
    e.reset(seed=1)
    e.step(0 if not e.observe(e.agent_selection)["action_mask"][0] else 1)  # an illegal action ends it
    while e.agents:
        e.step(None)
    for agent in ("player_0", "player_1"):
        assert not e.observe(agent)["action_mask"].any()


# ----- bad input before and around reset (issue 11) -------------------------------------
def test_last_and_observe_before_reset_say_to_reset():
    from mulle_env.gym_env import ResetNeededError

    env = raw_env()
    for call in (env.last, lambda: env.observe("player_0"), lambda: env.step(0)):
        with pytest.raises(ResetNeededError, match="reset()"):
            call()


def test_step_before_reset_is_still_a_game_over_error():
    # raw_env.step before reset raised GameOverError before ResetNeededError existed: still catchable as such.
    import gymnasium

    env = raw_env()
    with pytest.raises(me.GameOverError, match="reset()") as exc:
        env.step(0)
    assert isinstance(exc.value, gymnasium.error.ResetNeeded) and isinstance(exc.value, ValueError)


def test_unknown_reset_options_are_not_ignored_silently():
    env = raw_env()
    with pytest.warns(UserWarning, match="unknown reset option.*'foo'.*none.*ignored"):
        env.reset(seed=1, options={"foo": 1})


@pytest.mark.parametrize("bad", [7.0, True, "7", None])
def test_float_bool_and_text_actions_are_refused(bad):
    env = raw_env()
    env.reset(seed=2)
    legal = [i for i, m in enumerate(env.observe(env.agent_selection)["action_mask"]) if m]
    if isinstance(bad, float):
        bad = float(legal[0])
    with pytest.raises(codec.IllegalActionError, match="must be an int"):
        env.step(bad)


def test_the_wrapper_keeps_pettingzoos_order_checks_and_answers_from_the_env():
    """env()'s wrapper reads last(), step() and agent_iter() off the env itself (issue 32's AEC speed-up)
    and still enforces PettingZoo's order: nothing before reset, a step inside every agent_iter turn."""
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper

    e = env()
    assert isinstance(e, OrderEnforcingWrapper)
    plain = OrderEnforcingWrapper(e.env)
    for wrapped in (e, plain):
        with pytest.raises(AttributeError, match="cannot be accessed before reset"):
            wrapped.last()
    e.reset(seed=3)
    obs, reward, term, trunc, info = e.last()
    raw = e.unwrapped.last()
    np.testing.assert_array_equal(obs["action_mask"], raw[0]["action_mask"])
    assert (reward, term, trunc, info) == raw[1:]
    turns = 0
    for agent in e.agent_iter(max_iter=30):
        assert agent == e.unwrapped.agent_selection
        obs, *_ = e.last()
        e.step(int(np.flatnonzero(obs["action_mask"])[0]))
        turns += 1
    assert turns == 30
    with pytest.raises(AssertionError, match="need to call step"):
        for _agent in e.agent_iter():
            pass  # no step: the iterator refuses the next turn
