"""The batched vector env: Gymnasium registration, equality with K single Mulle-v0 envs, autoreset, errors."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from engine_helpers import FirstMove
from gymnasium.vector import AutoresetMode

import mulle_env  # noqa: F401  (registers Mulle-v0)
from mulle_env import codec
from mulle_env.gym_env import MulleEnv
from mulle_env.observation import OBS_SIZE, encode_state
from mulle_env.stepper import PyStepper, make_stepper
from mulle_env.vector_env import MulleVectorEnv

# The stepper follows the engine's backend (MULLE_ENGINE); "auto" is the only choice left.
STEPPERS = ["auto"]

ONE_SET = {"sets": 1}  # 48 learner decisions a game: episode ends come quickly


def make_vec(num_envs, **kwargs):
    return gym.make_vec("Mulle-v0", num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)


def pick(masks, rng):
    """One uniformly random legal action per row."""
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])



def test_make_vec_builds_the_batched_env_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        envs = make_vec(3, opponent="random")
    assert isinstance(envs.unwrapped, MulleVectorEnv) and isinstance(envs, gym.vector.VectorEnv)
    assert envs.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert envs.spec.id == "Mulle-v0" and envs.spec.kwargs["num_envs"] == 3
    obs, info = envs.reset(seed=0)
    assert obs.shape == (3, OBS_SIZE) and obs.dtype == np.float32
    assert info["action_mask"].shape == (3, codec.NUM_ACTIONS) and info["action_mask"].dtype == np.int8
    assert envs.observation_space.contains(obs) and envs.single_observation_space.shape == (OBS_SIZE,)
    assert envs.action_space.shape == (3,) and envs.single_action_space.n == codec.NUM_ACTIONS
    rng = np.random.default_rng(0)
    obs2, r, term, trunc, info2 = envs.step(pick(info["action_mask"], rng))
    # preallocated: the same arrays come back, rewritten in place
    assert obs2 is obs and info2["action_mask"] is info["action_mask"]
    assert r.shape == term.shape == trunc.shape == (3,) and r.dtype == np.float64 and term.dtype == bool
    assert np.array_equal(envs.unwrapped.action_masks(), info2["action_mask"].astype(bool))
    assert envs.observation_space.contains(obs2)
    envs.close()


@pytest.mark.parametrize("stepper", STEPPERS)
@pytest.mark.parametrize(
    "kwargs",
    [
        {"opponent": "heuristic", "seat": "random"},
        {"opponent": "heuristic", "seat": "alternate", "reward": "score"},
        {"opponent": "random", "seat": 1},
        {"opponent": "greedy", "seat": 0},
    ],
)
def test_equal_to_single_envs_across_episode_ends(kwargs, stepper):
    k, seed = 3, 11
    envs = make_vec(k, ruleset=ONE_SET, stepper=stepper, **kwargs)
    singles = [MulleEnv(ruleset=ONE_SET, **kwargs) for _ in range(k)]
    obs, info = envs.reset(seed=seed)
    single = [e.reset(seed=seed + i) for i, e in enumerate(singles)]
    rng = np.random.default_rng(3)
    ended = np.zeros(k, dtype=int)
    for _ in range(2 * 48 + 10):
        for i, (o, inf) in enumerate(single):
            assert np.array_equal(obs[i], o) and np.array_equal(info["action_mask"][i], inf["action_mask"])
            assert info["seat"][i] == singles[i].seat
        actions = pick(info["action_mask"], rng)
        obs, rewards, term, trunc, info = envs.step(actions)
        for i, e in enumerate(singles):
            o, r, t, tr, inf = e.step(int(actions[i]))
            assert rewards[i] == r and term[i] == t and not trunc[i]
            if t:
                assert np.array_equal(info["final_obs"][i], o)
                assert tuple(info["final_info"]["final_scores"][i]) == inf["final_scores"]
                o, inf = e.reset()
                ended[i] += 1
            else:
                assert info.get("final_obs") is None or info["final_obs"][i] is None
            single[i] = (o, inf)
    assert (ended >= 2).all()


def test_agent_objects_are_copied_per_game_and_hear_every_move():
    agent = FirstMove()
    envs = MulleVectorEnv(2, opponent=agent, ruleset=ONE_SET, seat=0)
    envs.reset(seed=0)
    a, b = envs.agents
    assert a is not agent and b is not a and agent.resets == 0 and a.resets == b.resets == 1
    rng = np.random.default_rng(0)
    obs, info = envs.reset(seed=0)
    for _ in range(5):
        envs.step(pick(info["action_mask"], rng))
    assert [p for p, _ in a.events[:4]] == [0, 1, 0, 1]
    with pytest.raises(ValueError, match="num_envs=2 agents"):
        MulleVectorEnv(2, opponent=[FirstMove()])


@pytest.mark.parametrize("stepper", STEPPERS)
def test_seed_fixes_every_game_and_games_differ(stepper):
    def run():
        envs = make_vec(4, opponent="random", ruleset=ONE_SET, stepper=stepper)
        obs, info = envs.reset(seed=5)
        rng = np.random.default_rng(0)
        out = [obs.copy()]
        for _ in range(60):
            obs, r, term, trunc, info = envs.step(pick(info["action_mask"], rng))
            out.append(obs.copy())
        return np.stack(out)

    a, b = run(), run()
    assert np.array_equal(a, b)
    assert not np.array_equal(a[:, 0], a[:, 1])


def test_next_step_autoreset():
    envs = make_vec(2, opponent="random", ruleset=ONE_SET, autoreset_mode="NextStep", seat=0)
    assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    single = MulleEnv(opponent="random", ruleset=ONE_SET, seat=0)
    obs, info = envs.reset(seed=7)
    so, sinfo = single.reset(seed=7)
    rng = np.random.default_rng(1)
    for step in range(48):
        actions = pick(info["action_mask"], rng)
        obs, r, term, trunc, info = envs.step(actions)
        so, sr, st, _, sinfo = single.step(int(actions[0]))
        assert np.array_equal(obs[0], so) and r[0] == sr and term[0] == st
    assert term.all() and not info["action_mask"].any() and info["_final_scores"].all()
    assert tuple(info["final_scores"][0]) == sinfo["final_scores"]
    obs, r, term, trunc, info = envs.step(np.array([123456 % 2812, 0]))  # ignored: the games restart
    so, sinfo = single.reset()
    assert np.array_equal(obs[0], so) and np.array_equal(info["action_mask"][0], sinfo["action_mask"])
    assert not term.any() and (r == 0).all() and info["action_mask"].any(axis=1).all()


@pytest.mark.parametrize("stepper", STEPPERS)
def test_self_play_policy_moves_the_other_seat(stepper):
    calls = []

    def first_legal(obs, mask):
        calls.append(len(obs))
        assert obs.shape[1] == OBS_SIZE and mask.any(axis=1).all()
        return mask.argmax(axis=1)

    envs = MulleVectorEnv(4, opponent="self", ruleset=ONE_SET, seat="alternate", opponent_policy=first_legal,
                          stepper=stepper)
    obs, info = envs.reset(seed=0)
    rng = np.random.default_rng(2)
    episodes = 0
    for _ in range(60):
        obs, r, term, trunc, info = envs.step(pick(info["action_mask"], rng))
        episodes += term.sum()
    assert episodes == 4 and sum(calls) >= 4 * 48 and max(calls) <= 4
    with pytest.raises(ValueError, match="needs a batched policy"):
        MulleVectorEnv(2, opponent="self", seat=1).reset(seed=0)
    bad = MulleVectorEnv(1, opponent="self", seat=1, opponent_policy=lambda o, m: np.array([codec.NUM_ACTIONS - 1]))
    with pytest.raises(ValueError, match=rf"opponent_policy chose action {codec.NUM_ACTIONS - 1} in env 0"):
        bad.reset(seed=1)
    floats = MulleVectorEnv(1, opponent="self", seat=1, opponent_policy=lambda o, m: m.argmax(axis=1) * 1.0)
    with pytest.raises(ValueError, match="opponent_policy returned float64 values; actions are ints"):
        floats.reset(seed=1)  # said as a type error of the policy, not as "action 0.0 is not legal there"


@pytest.mark.parametrize("stepper", STEPPERS)
def test_bad_actions_give_the_envs_errors(stepper):
    envs = make_vec(2, opponent="random", stepper=stepper)
    with pytest.raises(gym.error.ResetNeeded):
        envs.step([0, 0])
    obs, info = envs.reset(seed=3)
    legal = [int(np.flatnonzero(m)[0]) for m in info["action_mask"]]
    illegal = int(np.flatnonzero(info["action_mask"][1] == 0)[0])
    with pytest.raises(codec.IllegalActionError, match=r"env 1: action \d+ .* is not legal"):
        envs.step([legal[0], illegal])
    with pytest.raises(codec.IllegalActionError, match="out of range"):
        envs.step([legal[0], codec.NUM_ACTIONS])
    # The message names the value sent: np.uint64(2**64 - 1) was reported as "action np.int64(-1)" (issue 31), and
    # as the plain number, not numpy's repr of it (a newcomer read "action np.int64(5000)").
    for sent, shown in ((np.array([legal[0], 2**64 - 1], dtype=np.uint64), "18446744073709551615"),
                        (np.array([legal[0], 2**70], dtype=object), str(2**70)),
                        (np.array([legal[0], 3000], dtype=np.uint16), "3000"),
                        (np.array([legal[0], 5000], dtype=np.int64), "5000")):
        with pytest.raises(codec.IllegalActionError, match=rf"env 1: action {shown} is out of range"):
            envs.step(sent)
    with pytest.raises(codec.IllegalActionError, match=r"shape \(2,\)"):
        envs.step([legal[0]])
    for bad in ([legal[0] + 0.5, legal[1]], np.array(legal, dtype=float), [True, False], ["a", "b"]):
        with pytest.raises(codec.IllegalActionError, match="not floats or bools"):  # as Mulle-v0 refuses them
            envs.step(bad)
    with pytest.raises(ValueError, match="unknown reset option"):
        envs.reset(options={"sea": 0})
    envs.reset(seed=3)
    obs, r, term, trunc, info = envs.step(np.array(legal, dtype=object))  # Python ints in an object array
    assert not term.any()


def test_illegal_action_lose_ends_only_that_game():
    envs = make_vec(2, opponent="random", illegal_action="lose", reward="score", score_scale=10.0)
    obs, info = envs.reset(seed=3)
    legal = int(np.flatnonzero(info["action_mask"][0])[0])
    illegal = int(np.flatnonzero(info["action_mask"][1] == 0)[0])
    obs, r, term, trunc, info = envs.step([legal, illegal])
    assert list(term) == [False, True] and r[1] == -2 * 600 / 10.0 and r[0] == 0
    assert info["final_info"]["illegal_action"][1] and not info["final_info"]["illegal_action"][0]
    assert info["action_mask"][1].any()  # already the next game (same-step autoreset)


def test_option_errors():
    for kwargs, match in [
        ({"num_envs": 0}, "num_envs"),
        ({"seat": 2}, "seat"),
        ({"reward": "points"}, "reward"),
        ({"autoreset_mode": "Disabled"}, "autoreset_mode"),
        ({"stepper": "gpu"}, "stepper"),
        ({"stepper": "python" if mulle_env.BACKEND == "c" else "c"}, "MULLE_ENGINE"),
        ({"opponent": "nosuchagent"}, "nosuchagent"),
        ({"ruleset": {"forced_capture": False}}, "forced_capture"),
    ]:
        with pytest.raises(ValueError, match=match):
            MulleVectorEnv(**{"num_envs": 2, "opponent": "random", **kwargs})


def test_stepper_contract():
    ruleset = mulle_env.Ruleset(sets=1)
    s = make_stepper(2, ruleset, internal_random=True)
    s.start(0, 42, 0, 7)
    s.start(1, 43, 1, 8)
    assert s.to_move.tolist() == [0, 1] and not s.over.any()
    obs = np.zeros((2, OBS_SIZE), np.float32)
    mask = np.ones((2, codec.NUM_ACTIONS), np.int8)
    s.write([1, 0], [0, 0], obs, mask)
    # seat 0 of game 1 is not to move there: its mask is empty, its observation still exact
    assert not mask[0].any() and np.array_equal(obs[0], encode_state(s.state(1), 0))
    assert np.array_equal(np.flatnonzero(mask[1]), s.state(0).legal_move_ids())


def test_the_stepper_follows_the_engine_backend():

    s = make_stepper(2, mulle_env.Ruleset(), True)
    if mulle_env.BACKEND == "c":
        from mulle_env import _native

        assert isinstance(s, _native.Stepper) and "Stepper(num_envs" in type(s).__doc__
    else:
        assert isinstance(s, PyStepper)


class ViewSpy:
    """Records the views it is handed; ``needs_view`` is set per instance."""

    def __init__(self, needs_view):
        self.needs_view = needs_view
        self.views = []

    def act(self, view, legal_moves, rng):
        self.views.append(view)
        return legal_moves[0]


@pytest.mark.parametrize("needs_view", [True, False])
def test_agents_that_need_no_view_get_none(needs_view):
    import agents
    from agents.random_agent import RandomAgent

    single = MulleEnv(opponent=ViewSpy(needs_view), seat=1)
    single.reset(seed=0)
    envs = MulleVectorEnv(2, opponent=ViewSpy(needs_view), seat=1)
    envs.reset(seed=0)
    for spy in (single.opponent, *envs.agents):
        assert spy.views and all((v is None) != needs_view for v in spy.views)
    assert agents.make("random").needs_view is False

    class Peeker(RandomAgent):
        def act(self, view, legal_moves, rng):
            assert view is not None  # a subclass that overrides act reads views again
            return super().act(view, legal_moves, rng)

    assert Peeker().needs_view is True
    MulleEnv(opponent=Peeker(), seat=1).reset(seed=0)


def test_num_envs_that_cannot_fit_in_memory_is_refused_up_front_with_the_estimate(monkeypatch):
    import time

    import mulle_env.vector_env as vec

    # make_vec(num_envs=10**6) was accepted and its reset took 200 s and 19 GB (issue 31).
    t0 = time.monotonic()
    estimate = r"num_envs=1,000,000,000 needs at least [\d,.]+ GiB \([\d,]+ bytes per game\), more than the"
    with pytest.raises(MemoryError, match=estimate + r" [\d,.]+ GiB this machine has available"):
        make_vec(10**9, opponent="random")
    assert time.monotonic() - t0 < 5  # refused before anything was allocated
    # The estimate is a floor: what a reset env really holds per game is at least that much.
    assert 19_000 < vec.memory_estimate(1, OBS_SIZE) < 21_000
    monkeypatch.setattr(vec, "available_memory", lambda: 100 * vec.memory_estimate(1, OBS_SIZE))
    with pytest.raises(MemoryError, match="at most about 100 here"):
        make_vec(101, opponent="random")
    with pytest.warns(ResourceWarning, match="more than half"):
        make_vec(60, opponent="random")
    make_vec(40, opponent="random").close()
    monkeypatch.setattr(vec, "available_memory", lambda: None)  # unknown: no check
    make_vec(2, opponent="random").close()
